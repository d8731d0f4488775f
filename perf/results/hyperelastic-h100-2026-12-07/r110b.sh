#!/usr/bin/env bash
# round 110b (the machine of r110, right after; build of r110 in /tmp/b): Q2 at 16 cubes, multigrid, the fixed CG
# tolerance 1e-10 (no Eisenstat-Walker), on the device and on its CPU (16 threads): the same Newton path?
# (the --pc jacobi pair of this loop was refused by the app, rc 2: "option --mg-degree applies to --pc mg")
tar xzf .devdeps/deps.tgz -C .devdeps && source .devdeps/env.sh
H=/tmp/b/apps/mfree-hyperelastic; export MFREE_CACHE_DIR=/tmp/mfcache
for pc in jacobi mg; do for be in cuda cpu; do
  OMP_NUM_THREADS=16 timeout 40 $H --mesh cube --degree 2 --cubes 16 --pc $pc --mg-degree 2 --cg-tol 1e-10 --backend $be \
    --json /tmp/d-$pc-$be.json > /dev/null 2>&1
done; done
cp /tmp/d-*.json $OUT/   # saved here as r110/q2-c16-tight-{cpu,cuda}.json
