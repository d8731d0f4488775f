#!/usr/bin/env bash
# Convergence table of mfree-poisson (L2 and H1 seminorm errors and their rates per refinement), p = 1..4,
# 2D and 3D.
#   perf/convergence-table.sh [BUILD_DIR] [MESH] [COEFFICIENT] > table.md
set -euo pipefail
build=${1:-build}
mesh=${2:-deformed}
coef=${3:-constant}
app="$build/apps/mfree-poisson"
echo "| dim | p | level | DoFs | CG its | L2 error | rate | H1 error | rate |"
echo "|---|---|---|---|---|---|---|---|---|"
for dim in 2 3; do
  for p in 1 2 3 4; do
    if [ $dim = 2 ]; then levels="2 3 4 5"; else levels="1 2 3"; fi
    [ $dim = 3 ] && [ $p = 1 ] && levels="2 3 4"
    prev=""
    prevh=""
    for l in $levels; do
      json=$(mktemp)
      "$app" --dim $dim --degree $p --refine $l --mesh $mesh --coefficient $coef --backend cpu --tol 1e-12 --json "$json" >/dev/null
      read -r ndofs its err herr < <(python3 -c "import json,sys; d=json.load(open('$json')); print(d['ndofs'], d['iterations'], d['l2_error'], d['h1_error'])")
      rm -f "$json"
      rate="-"
      hrate="-"
      [ -n "$prev" ] && rate=$(python3 -c "import math; print('%.2f' % math.log2($prev/$err))")
      [ -n "$prevh" ] && hrate=$(python3 -c "import math; print('%.2f' % math.log2($prevh/$herr))")
      printf "| %d | %d | %d | %d | %d | %.3e | %s | %.3e | %s |\n" $dim $p $l $ndofs $its $err "$rate" $herr "$hrate"
      prev=$err
      prevh=$herr
    done
  done
done
