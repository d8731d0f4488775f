#!/usr/bin/env bash
# round 108 (the same machine): Q2 hexahedra at 64 and 96 cubes, steps by the energy's slope against backtracking
o=/tmp/r108o; mkdir -p $o; trap 'tar czf $OUT/r108.tgz -C /tmp r108o' EXIT; export MFREE_CACHE_DIR=/tmp/mfcache
H=/tmp/b/apps/mfree-hyperelastic
for c in 64 96; do for ls in critical backtrack; do
  timeout 80 $H --mesh cube --degree 2 --cubes $c --pc mg --mg-degree 2 --ew --line-search $ls --backend cuda --verbose \
    --json $o/q2-c$c-$ls.json > $o/q2-c$c-$ls.txt 2>&1
  echo "c$c $ls rc $?: $(grep -E '^Newton|^time' $o/q2-c$c-$ls.txt | tr '\n' ' ')"
done; done
