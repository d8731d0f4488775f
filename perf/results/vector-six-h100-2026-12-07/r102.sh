#!/usr/bin/env bash
# round 102 (next, same warm machine as r101): the column design's launch at bp6 p = 5..8 and bp4 p = 4, 6: cells per
# block above the default (ptxas then caps at 168 registers) and one component at a time held to two blocks per SM
# (NJ=1, MINB=2: 128 registers). NVRTC pre-screen (sm_90, column_apply): CPB+: spills bp6 p5 cpb9 60 B, cpb8 160 B;
# bp6 p6 cpb6 84 B; bp6 p7 cpb5 448 B; bp4 p4 cpb8 376 B. NJ=1 MINB=2: bp6 p5 12 B, p6 0, p7 104 B, p8 180 B; bp4 p4
# 24 B, p6 112 B (default launch: 0-344 B)
set -uo pipefail
o=/tmp/r102o; mkdir -p $o /tmp/r102; b=/tmp/b
trap 'tar czf $OUT/r102.tgz -C /tmp r102o' EXIT
export MFREE_CACHE_DIR=/tmp/mfcache
t0=$SECONDS
[ -x $b/perf/mfree-bench ] || { cmake -S . -B $b -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 > /tmp/configure.log 2>&1 &&
  cmake --build $b -j16 --target mfree-bench > /tmp/build.log 2>&1 || exit 1; }
# problem:p:label=env,env
V="bp6:5:def= bp6:5:c8=MFREE_PHYSICS_VCOL_CPB=8 bp6:5:c9=MFREE_PHYSICS_VCOL_CPB=9 bp6:5:nj1m2=MFREE_PHYSICS_VCOL_NJ=1,MFREE_PHYSICS_VCOL_MINB=2
bp6:6:def= bp6:6:c6=MFREE_PHYSICS_VCOL_CPB=6 bp6:6:nj1m2=MFREE_PHYSICS_VCOL_NJ=1,MFREE_PHYSICS_VCOL_MINB=2
bp6:7:def= bp6:7:nj1m2=MFREE_PHYSICS_VCOL_NJ=1,MFREE_PHYSICS_VCOL_MINB=2 bp6:8:def= bp6:8:nj1m2=MFREE_PHYSICS_VCOL_NJ=1,MFREE_PHYSICS_VCOL_MINB=2
bp4:4:def= bp4:4:nj1m2=MFREE_PHYSICS_VCOL_NJ=1,MFREE_PHYSICS_VCOL_MINB=2 bp4:6:def= bp4:6:nj1m2=MFREE_PHYSICS_VCOL_NJ=1,MFREE_PHYSICS_VCOL_MINB=2"
run() { # problem p label envs size reps csv
  local pr=$1 p=$2 lab=$3 envs=$4
  ( IFS=, ; for e in $envs; do [ -n "$e" ] && export "$e"; done; IFS=$' \t\n'
    timeout 100 $b/perf/mfree-bench --backend cuda --problem $pr --dim 3 --degrees $p --max-dofs $5 --sizes 1 --reps $6 ${7:+--csv $7} )
}
for v in $V; do IFS=: read pr p rest <<< "$v"; lab=${rest%%=*}; envs=${rest#*=}; run $pr $p $lab "$envs" 1e5 1 > /tmp/r102/warm-$pr-$p-$lab.log 2>&1 & done; wait
for f in $(find /tmp/mfcache -name "cuda-*.cubin"); do cuobjdump -res-usage $f 2>&1 | grep -A1 apply_vcol; done > $o/resources.txt 2>&1
echo "problem p label gdofs" > $o/table.txt
for v in $V; do IFS=: read pr p rest <<< "$v"; lab=${rest%%=*}; envs=${rest#*=}
  run $pr $p $lab "$envs" 3e7 7 $o/$pr-p$p-$lab.csv > $o/$pr-p$p-$lab.log 2>&1
  echo "$pr $p $lab $(tail -1 $o/$pr-p$p-$lab.csv | cut -d, -f9)" >> $o/table.txt
done
cat $o/table.txt
echo "done $((SECONDS - t0)) s"
