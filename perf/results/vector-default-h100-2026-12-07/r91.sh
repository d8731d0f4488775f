#!/usr/bin/env bash
# round 91: the whole cuda suite at HEAD (collocated-gradient default launches, 6-node slab cases, narrower default rule)
# cuda_physics_slab and cuda_physics_thread included); at most a few files in $OUT
set -uo pipefail
o=$OUT/r91; mkdir -p $o; b=/tmp/b
export MFREE_TEST_REQUIRE_GPU=1 MFREE_CACHE_DIR=/tmp/mfcache
{ nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv; nvcc --version | tail -2; date -u; git rev-parse HEAD; git status --short; } > $o/device.txt 2>&1
t0=$SECONDS
cmake -S . -B $b -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 > /tmp/configure.log 2>&1 &&
  cmake --build $b -j16 > /tmp/build.log 2>&1 || { tail -40 /tmp/configure.log /tmp/build.log; exit 1; }
echo "build $((SECONDS - t0)) s"
(cd $b && timeout $((580 - (SECONDS - t0))) ctest -L cuda -j6 --timeout 420 --output-on-failure) > $o/ctest-cuda.log 2>&1
grep -E "tests passed|FAIL|Failed|Total Test|Timeout|\*\*\*" $o/ctest-cuda.log | tail -20
grep -E "cuda_physics_(slab|thread|hex3d)|cuda_physics " $o/ctest-cuda.log | grep Test | tail -6
echo "done $((SECONDS - t0)) s"
