#!/bin/sh
# The fused simplex product at a state alone on the GPU (perf/sx-state-product.c): the library's kernel and its
# variants (perf/sx_state_variants.py) on the app's mesh 8 (25 cubes refined 3 times, 4.8e7 cells) and on the
# unrefined box of 200 cubes (the same cells numbered cube by cube).
#   perf/sx-state-product.sh BUILD_DIR OUT_FILE
set -e
B=${1:-build}
OUT=${2:-sx-state-product.txt}
V=$(mktemp -d)
trap 'rm -rf "$V"' EXIT
python3 "$(dirname "$0")/sx_state_variants.py" "$V"
P=$B/perf/sx-state-product
: > "$OUT"
for mesh in "--cubes 25 --refine 3" "--cubes 200 --refine 0"; do
  $P $mesh >> "$OUT"
  $P $mesh --threads 256 >> "$OUT"
  for v in rcp act perm plain noscat; do $P $mesh --variant "$V/$v" >> "$OUT"; done
  $P $mesh --variant "$V/act-rcp" --source "$V/source-rcp.c" >> "$OUT"
  $P $mesh --source "$V/source-rcp.c" --variant "$V/rcp" >> "$OUT"
done
for g in 6 8 16; do
  $P --cubes 25 --refine 3 --group $g >> "$OUT"
  $P --cubes 200 --refine 0 --group $g >> "$OUT"
done
cat "$OUT"
