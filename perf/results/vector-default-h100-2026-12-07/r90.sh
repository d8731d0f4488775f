#!/usr/bin/env bash
# round 90: the slab design's block size and register cap at bp2/bp4/bp6 p = 2..4
set -uo pipefail
o=/tmp/r90o; mkdir -p $o /tmp/r90; b=/tmp/b
trap 'tar czf $OUT/r90.tgz -C /tmp r90o' EXIT
export MFREE_CACHE_DIR=/tmp/mfcache
{ nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv; date -u; git rev-parse HEAD; git status --short; } > $o/device.txt 2>&1
t0=$SECONDS
cmake --build $b -j16 --target mfree-bench > /tmp/build.log 2>&1 || exit 1
V="s128=MFREE_PHYSICS_VCOL_SLAB=128 s128m4=MFREE_PHYSICS_VCOL_SLAB=128:MFREE_PHYSICS_VCOL_MINB=4 s256=MFREE_PHYSICS_VCOL_SLAB=256 s256m2=MFREE_PHYSICS_VCOL_SLAB=256:MFREE_PHYSICS_VCOL_MINB=2 s512=MFREE_PHYSICS_VCOL_SLAB=512 base=MFREE_PHYSICS_VCOL_SLAB=0"
for v in $V; do s=${v#*=}; for pr in bp2 bp4 bp6; do
  env X=1 ${s//:/ } timeout 150 $b/perf/mfree-bench --backend cuda --problem $pr --dim 3 --degrees 2,3,4 --max-dofs 1e5 --sizes 1 --reps 1 > /tmp/r90/warm-$pr-$RANDOM.log 2>&1 &
done; done; wait
echo "warm $((SECONDS - t0)) s"
MFREE_VD_LOGS=/tmp/r90 timeout $((400 - (SECONDS - t0))) perf/vector-designs.sh $b $o 2,3,4 bp2,bp4,bp6 $V > $o/table.txt 2>&1
tail -10 $o/table.txt
echo "done $((SECONDS - t0)) s"
