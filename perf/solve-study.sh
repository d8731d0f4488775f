#!/usr/bin/env bash
# Time to solution with multigrid-preconditioned CG (docs/multigrid.md): mfree-poisson on the 3D
# deformed cube, p = 1..8, from about 10^5 to 3 x 10^7 DoFs, and on the shells-adaptive ball with the
# Ljungkvist coefficient; one CSV row per run.
#   perf/solve-study.sh BUILD_DIR OUT.csv [BACKEND] [PC] [TOL]
set -uo pipefail
b=${1:?build folder}
out=${2:?csv file}
be=${3:-cuda}
pc=${4:-mg}
tol=${5:-1e-8}
app="$b/apps/mfree-poisson --backend $be --pc $pc --tol $tol"
echo "backend,pc,mesh,coefficient,adapt,p,refine,ndofs,iterations,setup_s,pc_setup_s,solve_s,solve_dofs_per_s,vcycle_s,levels,l2_error,device_mem_peak_bytes" > "$out"
row() {
  python3 - "$1" "$2" <<'PY' >> "$out"
import json, sys
d = json.load(open(sys.argv[1]))
print(",".join(str(x) for x in [d["backend"], d["pc"], d["mesh"], d["coefficient"], sys.argv[2], d["degree"], d["refine"],
      d["ndofs"], d["iterations"], d["setup_s"], d["pc_setup_s"], d["solve_s"], d["solve_dofs_per_s"],
      d.get("vcycle_s", 0), len(d.get("mg_levels", [])), d["l2_error"], d["device_mem_peak_bytes"]]))
PY
}
# refinement levels per degree: (p 2^L + 1)^3 from about 10^5 to 3.5 x 10^7 DoFs
declare -A levels=([1]="6 7 8" [2]="5 6 7" [3]="4 5 6" [4]="4 5 6" [5]="3 4 5" [6]="3 4 5" [7]="3 4 5" [8]="3 4 5")
for p in ${MFREE_SOLVE_DEGREES:-1 2 3 4 5 6 7 8}; do
  for L in ${levels[$p]}; do
    j=$(mktemp)
    if $app --dim 3 --mesh deformed --coefficient constant --degree $p --refine $L --json "$j" > "$j.log" 2>&1; then
      row "$j" none; tail -n +1 "$out" | tail -1
    else
      echo "FAILED p $p refine $L: $(grep -i error "$j.log" | head -2)"
    fi
    rm -f "$j" "$j.log"
  done
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
