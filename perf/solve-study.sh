#!/usr/bin/env bash
# Time to solution with multigrid-preconditioned CG (docs/multigrid.md): mfree-poisson on the 3D
# deformed cube, p = 1..8, from about 10^5 to 3 x 10^7 DoFs, and on the shells-adaptive ball with the
# Ljungkvist coefficient; one CSV row per run. MFREE_SOLVE_DEGREES, MFREE_SOLVE_ADAPTIVE_DEGREES and
# MFREE_SOLVE_SMOOTHER ("2 3 4 5 6": the smoother degree at Q4, 1.7 x 10^7 DoFs) select runs;
# MFREE_SOLVE_RUNS ("p:trees:level ...") replaces the deformed-cube sizes; MFREE_MG_PRECISION ("double",
# "float" or "double float") the V-cycle's precision(s), each run once per precision.
#   perf/solve-study.sh BUILD_DIR OUT.csv [BACKEND] [PC] [TOL]
set -uo pipefail
b=${1:?build folder}
out=${2:?csv file}
be=${3:-cuda}
pc=${4:-mg}
tol=${5:-1e-8}
app="$b/apps/mfree-poisson --backend $be --pc $pc --tol $tol"
echo "backend,pc,mesh,coefficient,adapt,p,trees,refine,ndofs,iterations,setup_s,pc_setup_s,solve_s,solve_dofs_per_s,vcycle_s,levels,l2_error,device_mem_peak_bytes,mg_precision" > "$out"
row() {
  python3 - "$1" "$2" <<'PY' >> "$out"
import json, sys
d = json.load(open(sys.argv[1]))
print(",".join(str(x) for x in [d["backend"], d["pc"], d["mesh"], d["coefficient"], sys.argv[2], d["degree"], d["trees"], d["refine"],
      d["ndofs"], d["iterations"], d["setup_s"], d["pc_setup_s"], d["solve_s"], d["solve_dofs_per_s"],
      d.get("vcycle_s", 0), len(d.get("mg_levels", [])), d["l2_error"], d["device_mem_peak_bytes"],
      d.get("mg_precision", "double")]))
PY
}
# sizes per degree, "trees:level": (p trees 2^level + 1)^3 DoFs, from about 10^5 to 3 x 10^7
declare -A sizes=([1]="1:6 1:7 1:8 5:6" [2]="1:5 1:6 1:7 5:5" [3]="1:4 1:5 1:6 13:3" [4]="1:4 1:5 1:6 5:4"
                  [5]="1:3 1:4 1:5 31:1" [6]="1:3 1:4 1:5 13:2" [7]="1:3 1:4 1:5 11:2" [8]="1:3 1:4 1:5 5:3")
runs=""
for p in ${MFREE_SOLVE_DEGREES:-1 2 3 4 5 6 7 8}; do
  for tl in ${sizes[$p]}; do runs="$runs $p:$tl"; done
done
runs=${MFREE_SOLVE_RUNS:-$runs}
for prec in ${MFREE_MG_PRECISION:-double}; do
  app="$b/apps/mfree-poisson --backend $be --pc $pc --tol $tol"
  [ "$pc" = mg ] && app="$app --mg-precision $prec"
  for ptl in $runs; do
    p=${ptl%%:*} tl=${ptl#*:}
    T=${tl%%:*} L=${tl##*:}
    j=$(mktemp)
    if $app --dim 3 --mesh deformed --coefficient constant --degree $p --trees $T --refine $L --json "$j" > "$j.log" 2>&1; then
      row "$j" none; tail -1 "$out"
    else
      echo "FAILED $prec p $p trees $T refine $L: $(grep -i error "$j.log" | head -2)"
    fi
    rm -f "$j" "$j.log"
  done
  for k in ${MFREE_SOLVE_SMOOTHER:-}; do
    j=$(mktemp)
    if $app --dim 3 --mesh deformed --coefficient constant --degree 4 --refine 6 --pc-degree $k --json "$j" > "$j.log" 2>&1; then
      row "$j" "smoother$k"; tail -1 "$out"
    fi
    rm -f "$j" "$j.log"
  done
  for p in ${MFREE_SOLVE_ADAPTIVE_DEGREES:-2 4}; do
    for L in 2 3; do
      j=$(mktemp)
      if $app --dim 3 --mesh ball --coefficient ljungkvist --degree $p --refine $L --adapt shells --levels 2 --json "$j" > "$j.log" 2>&1; then
        row "$j" shells; tail -1 "$out"
      else
        echo "FAILED adaptive p $p refine $L: $(grep -i error "$j.log" | head -2)"
      fi
      rm -f "$j" "$j.log"
    done
  done
done
