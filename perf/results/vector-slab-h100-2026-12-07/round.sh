#!/usr/bin/env bash
# round 86: the slab design against the committed designs (bp2/4/6, p = 1..4), its cuda test; at most 8
# files in $OUT (the CSVs, the test's log, device.txt), the rest in /tmp/r86
set -uo pipefail
o=/tmp/r86; mkdir -p $o; b=/tmp/b
export MFREE_TEST_REQUIRE_GPU=1 MFREE_CACHE_DIR=/tmp/mfcache
{ nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv; nvcc --version | tail -2; date -u; git rev-parse HEAD; git status --short; } > $OUT/device.txt 2>&1
t0=$SECONDS
cmake -S . -B $b -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 > $o/configure.log 2>&1 &&
  cmake --build $b -j16 --target mfree-bench t38_physics > $o/build.log 2>&1 || { tail -40 $o/build.log; exit 1; }
echo "build $((SECONDS - t0)) s"
# the slab design's cuda test (mostly NVRTC compiles on the CPU; its kernels run on 64 cells) beside the rest
(cd $b && timeout 240 nice ctest -R "cuda_physics_thread" --output-on-failure > $OUT/ctest.log 2>&1) &
tpid=$!
# the JIT cache filled in parallel (small sizes), so that the timed runs below do not compile
for v in "X=1" "MFREE_PHYSICS_VCOL_SLAB=128"; do
  for pr in bp2 bp4 bp6; do
    env $v timeout 90 $b/perf/mfree-bench --backend cuda --problem $pr --dim 3 --degrees 1,2,3,4 --max-dofs 1e5 --sizes 1 --reps 1 > $o/warm-$pr-$RANDOM.log 2>&1 &
  done
done
for j in $(jobs -p); do [ "$j" != "$tpid" ] && wait $j; done
echo "warm $((SECONDS - t0)) s"
MFREE_VD_LOGS=$o MFREE_VD_ARGS="--max-dofs 3e7 --sizes 1 --reps 5" timeout 170 perf/vector-designs.sh $b $OUT 1,2,3,4 bp2,bp4,bp6 slab=MFREE_PHYSICS_VCOL_SLAB=128 base=
echo "bench $((SECONDS - t0)) s"
wait $tpid
grep -E "tests passed|FAIL|Failed|Passed" $OUT/ctest.log | tail -8
echo "done $((SECONDS - t0)) s"
