#!/usr/bin/env bash
# round 106: the whole cuda suite at the new default (warm machine: /tmp/b from r105)
set -uo pipefail
o=/tmp/r106o; mkdir -p $o; b=/tmp/b
trap 'tar czf $OUT/r106.tgz -C /tmp r106o' EXIT
export MFREE_CACHE_DIR=/tmp/mfcache
{ nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv; date -u; git log -1 --format=%h; } > $o/device.txt 2>&1
t0=$SECONDS
[ -f $b/build.ninja ] || cmake -S . -B $b -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 > /tmp/configure.log 2>&1
cmake --build $b -j16 > /tmp/build.log 2>&1 || { tail -30 /tmp/build.log; exit 1; }
echo "build $((SECONDS - t0)) s"
(cd $b && MFREE_TEST_REQUIRE_GPU=1 timeout 560 ctest -L cuda -j6 --timeout 450 --output-on-failure) > $o/ctest-cuda.log 2>&1
grep -E "tests passed|tests failed|Failed|\*\*\*" $o/ctest-cuda.log | head -20
grep -E "Test +#" $o/ctest-cuda.log | sort -t' ' -k1 | awk '{print $(NF-1), $0}' | sort -rn | head -5 | cut -c1-100
echo "done $((SECONDS - t0)) s"
