#!/usr/bin/env bash
# round 91: the new launch defaults of the slab design (the collocated gradient: a register cap at 3, 4
# nodes, 256 threads at 5): its cuda test
set -uo pipefail
o=$OUT/r91; mkdir -p $o /tmp/r91; b=/tmp/b
export MFREE_TEST_REQUIRE_GPU=1 MFREE_CACHE_DIR=/tmp/mfcache
{ nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv; date -u; git rev-parse HEAD; git status --short; } > $o/device.txt 2>&1
t0=$SECONDS
cmake -S . -B $b -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 > /tmp/configure.log 2>&1 &&
  cmake --build $b -j16 --target t38_physics > /tmp/build.log 2>&1 || { tail -40 /tmp/build.log; exit 1; }
echo "build $((SECONDS - t0)) s"
(cd $b && timeout 230 ctest -R "cuda_physics_slab" --output-on-failure) > $o/ctest.log 2>&1
grep -E "tests passed|Failed|Passed|Timeout" $o/ctest.log | tail -4
echo "tests $((SECONDS - t0)) s"
echo "done $((SECONDS - t0)) s"
