#!/usr/bin/env bash
# round 98: the whole cuda suite at HEAD (the code after 7f7b8e0 had not run on a GPU); then the hyperelastic
# app with the assembled Jacobian and Jacobi (the paper's CG path): mesh 1 whole, mesh 8 with CG capped
set -uo pipefail
o=/tmp/r98o; mkdir -p $o; b=/tmp/b
trap 'tar czf $OUT/r98.tgz -C /tmp r98o' EXIT
export MFREE_TEST_REQUIRE_GPU=1 MFREE_CACHE_DIR=/tmp/mfcache
{ nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv; nvcc --version | tail -2; date -u; } > $o/device.txt 2>&1
t0=$SECONDS
cmake -S . -B $b -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 > /tmp/configure.log 2>&1 &&
  cmake --build $b -j16 > /tmp/build.log 2>&1 || { tail -40 /tmp/configure.log /tmp/build.log; exit 1; }
echo "build $((SECONDS - t0)) s"
(cd $b && timeout 330 ctest -L cuda -j6 --timeout 320 --output-on-failure) > $o/ctest-cuda.log 2>&1
grep -E "tests passed|FAIL|Failed|Total Test|Timeout|\*\*\*" $o/ctest-cuda.log | tail -12
echo "ctest $((SECONDS - t0)) s"
H=$b/apps/mfree-hyperelastic
timeout 60 $H --cubes 60 --pc jacobi --method assembled --backend cuda --verbose --json $o/c60-asm-jac.json > $o/c60-asm-jac.txt 2>&1; echo "c60 assembled rc $?"; tail -3 $o/c60-asm-jac.txt
timeout 60 $H --cubes 60 --pc jacobi --backend cuda --json $o/c60-mf-jac.json > $o/c60-mf-jac.txt 2>&1; echo "c60 mf rc $?"; tail -2 $o/c60-mf-jac.txt
timeout 120 $H --cubes 200 --pc jacobi --method assembled --cg-max 500 --backend cuda --verbose --json $o/c200-asm-jac500.json > $o/c200-asm-jac500.txt 2>&1; echo "c200 assembled rc $?"; tail -4 $o/c200-asm-jac500.txt
nvidia-smi --query-gpu=memory.used --format=csv >> $o/device.txt
echo "done $((SECONDS - t0)) s"
