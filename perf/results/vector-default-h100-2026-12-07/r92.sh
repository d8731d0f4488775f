#!/usr/bin/env bash
# round 92: bp2/bp6 p = 5 with the slab design (opt-in, 6 nodes) at 128 and 256 threads against the default
set -uo pipefail
o=/tmp/r92o; mkdir -p $o /tmp/r92; b=/tmp/b
trap 'tar czf $OUT/r92.tgz -C /tmp r92o' EXIT
export MFREE_CACHE_DIR=/tmp/mfcache
{ nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv; date -u; git rev-parse HEAD; git status --short; } > $o/device.txt 2>&1
t0=$SECONDS
cmake --build $b -j16 --target mfree-bench > /tmp/build.log 2>&1 || exit 1
V="default= s128=MFREE_PHYSICS_VCOL_SLAB=128 s256=MFREE_PHYSICS_VCOL_SLAB=256 s128m2=MFREE_PHYSICS_VCOL_SLAB=128:MFREE_PHYSICS_VCOL_MINB=2"
for v in $V; do s=${v#*=}; for pr in bp2 bp4 bp6; do
  env X=1 ${s//:/ } timeout 150 $b/perf/mfree-bench --backend cuda --problem $pr --dim 3 --degrees 5 --max-dofs 1e5 --sizes 1 --reps 1 > /tmp/r92/warm-$pr-$RANDOM.log 2>&1 &
done; done; wait
echo "warm $((SECONDS - t0)) s"
MFREE_VD_LOGS=/tmp/r92 timeout $((400 - (SECONDS - t0))) perf/vector-designs.sh $b $o 5 bp2,bp4,bp6 $V > $o/table.txt 2>&1
tail -10 $o/table.txt
grep -h "regist\|spill" /tmp/r92/*.log | sort | uniq -c | head
echo "done $((SECONDS - t0)) s"
