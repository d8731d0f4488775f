#!/usr/bin/env bash
# round 101 (next): the whole cuda suite at HEAD with a long per-test timeout (slow hosts), then the column design's
# cells per block above the default where one block fills an SM by its registers (bp4 p = 4, 6, 8; bp6 p = 5..8)
set -uo pipefail
o=/tmp/r101o; mkdir -p $o /tmp/r101; b=/tmp/b
trap 'tar czf $OUT/r101.tgz -C /tmp r101o' EXIT
export MFREE_CACHE_DIR=/tmp/mfcache
{ nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv; date -u; nproc; } > $o/device.txt 2>&1
t0=$SECONDS
cmake -S . -B $b -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 > /tmp/configure.log 2>&1 &&
  cmake --build $b -j16 > /tmp/build.log 2>&1 || { tail -40 /tmp/configure.log /tmp/build.log; exit 1; }
echo "build $((SECONDS - t0)) s"
(cd $b && MFREE_TEST_REQUIRE_GPU=1 timeout $((590 - (SECONDS - t0))) ctest -L cuda -j6 --timeout 450 --output-on-failure) > $o/ctest-cuda.log 2>&1
grep -E "tests passed|tests failed|\*\*\*|FAIL" $o/ctest-cuda.log | tail -14
echo "done $((SECONDS - t0)) s"
