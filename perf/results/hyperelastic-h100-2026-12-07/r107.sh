#!/usr/bin/env bash
# round 107 (on the machine of r105/r106, /tmp/b built there): Q2 hexahedra at 112 cubes with the energy's slope and
# the lagged preconditioner in 4 and 2 load steps; P1 mesh 8 with and without the lag again on a warm machine
o=/tmp/r107o; mkdir -p $o; trap 'tar czf $OUT/r107.tgz -C /tmp r107o' EXIT; export MFREE_CACHE_DIR=/tmp/mfcache
H=/tmp/b/apps/mfree-hyperelastic; nvidia-smi --query-gpu=name --format=csv > $o/device.txt
for L in 4 2; do
  timeout 150 $H --mesh cube --degree 2 --cubes 112 --pc mg --mg-degree 2 --ew --line-search critical --pc-lag 1e-2 \
    --load-steps $L --backend cuda --verbose --json $o/q2-c112-crit-lag-L$L.json > $o/q2-c112-crit-lag-L$L.txt 2>&1
  echo "L$L rc $?: $(grep -E '^Newton|^time' $o/q2-c112-crit-lag-L$L.txt | tr '\n' ' ')"
done
for lag in 0 1e-2; do
  timeout 30 $H --cubes 200 --pc mg --mg-degree 2 --ew --pc-lag $lag --backend cuda --verbose --json $o/c200-lag$lag-rep.json > $o/c200-lag$lag-rep.txt 2>&1
  echo "c200 lag $lag: $(grep -E '^Newton|^time' $o/c200-lag$lag-rep.txt | tr '\n' ' ')"
done
