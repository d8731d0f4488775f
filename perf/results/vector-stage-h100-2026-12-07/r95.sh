#!/usr/bin/env bash
# round 95: the slab design with its stored entries staged (MFREE_PHYSICS_VCOL_QSTAGE=1) against the default,
# bp2/bp4/bp6 p = 2..4; memcheck of the staged kernel
set -uo pipefail
o=/tmp/r95o; mkdir -p $o /tmp/r95; b=/tmp/b
trap 'tar czf $OUT/r95.tgz -C /tmp r95o' EXIT
export MFREE_CACHE_DIR=/tmp/mfcache
{ nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv; date -u; git rev-parse HEAD; git status --short; } > $o/device.txt 2>&1
t0=$SECONDS
cmake -S . -B $b -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 > /tmp/configure.log 2>&1 &&
  cmake --build $b -j16 --target mfree-bench > /tmp/build.log 2>&1 || { tail -40 /tmp/configure.log /tmp/build.log; exit 1; }
echo "build $((SECONDS - t0)) s"
V="default= qs=MFREE_PHYSICS_VCOL_QSTAGE=1"
for v in $V; do s=${v#*=}; for pr in bp2 bp4 bp6; do
  env X=1 ${s//:/ } timeout 150 $b/perf/mfree-bench --backend cuda --problem $pr --dim 3 --degrees 2,3,4 --max-dofs 1e5 --sizes 1 --reps 1 > /tmp/r95/warm-$pr-$RANDOM.log 2>&1 &
done; done; wait
echo "warm $((SECONDS - t0)) s"
for pr in bp6 bp4; do
  MFREE_PHYSICS_VCOL_QSTAGE=1 compute-sanitizer --tool memcheck --error-exitcode 9 $b/perf/mfree-bench --backend cuda --problem $pr --dim 3 --degrees 2,3 --max-dofs 2e5 --sizes 1 --reps 1 > /tmp/r95/memcheck-$pr.log 2>&1
  echo "memcheck $pr exit $?" | tee -a $o/memcheck.txt; grep "ERROR SUMMARY" /tmp/r95/memcheck-$pr.log | tee -a $o/memcheck.txt
done
MFREE_VD_LOGS=/tmp/r95 MFREE_VD_ARGS="--max-dofs 3e7 --sizes 1 --reps 7" timeout 300 perf/vector-designs.sh $b $o 2,3,4 bp2,bp4,bp6 $V qs2=MFREE_PHYSICS_VCOL_QSTAGE=1 default2= > $o/table.txt 2>&1
tail -12 $o/table.txt
echo "done $((SECONDS - t0)) s"
