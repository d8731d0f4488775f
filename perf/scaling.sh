#!/usr/bin/env bash
# Scaling on the GPUs of one node, one MPI rank per GPU (docs/performance.md "Several GPUs"):
#   perf/scaling.sh BUILD OUTDIR "1 2 4" ["weak strong ball"]
# - weak: bp3 p = 4 (mfree-bench) at 5 x 10^7 DoFs per GPU, apply and 30 Jacobi-CG iterations, with the
#   exchange overlapped (default) and in the plain order (MFREE_OVERLAP=0);
# - strong: the same at 2 x 10^8 DoFs in all;
# - the shells-adaptive ball at p = 2 and 4 (mfree-poisson, fixed size): Jacobi CG and multigrid CG.
# Writes OUTDIR/scaling.csv (one row per run: kind, ranks, overlap, then mfree-bench's columns) and
# OUTDIR/scaling-ball.jsonl (mfree-poisson's JSON objects with "ranks").
set -uo pipefail
b=${1:?build folder}
out=${2:?output folder}
counts=${3:-"1 2"}
parts=${4:-"weak strong ball"}
mkdir -p "$out"
mpi="mpirun --bind-to none --oversubscribe"
csv="$out/scaling.csv"
for n in $counts; do
  for kind in weak strong; do
    case " $parts " in *" $kind "*) ;; *) continue ;; esac
    if [ "$kind" = weak ]; then dofs=$((50000000 * n)); else dofs=200000000; fi
    for ov in 1 0; do
      MFREE_OVERLAP=$ov $mpi -np "$n" "$b/perf/mfree-bench" --backend cuda --problem bp3 --degrees 4 --sizes 1 \
        --max-dofs "$dofs" --min-dofs "$dofs" --scatter atomic --reps 7 --cg 30 --csv "$out/run.csv" \
        > "$out/run.log" 2>&1 || { echo "bench $kind n=$n overlap=$ov failed"; tail -5 "$out/run.log"; continue; }
      grep -h "^# device" "$out/run.log" | head -1
      if [ ! -s "$csv" ]; then echo "kind,ranks,overlap,$(head -1 "$out/run.csv")" > "$csv"; fi
      tail -n +2 "$out/run.csv" | sed "s/^/$kind,$n,$ov,/" >> "$csv"
      tail -1 "$csv"
    done
  done
done
for p in 2 4; do
  case " $parts " in *" ball "*) ;; *) continue ;; esac
  ref=$([ "$p" = 2 ] && echo 6 || echo 5)
  for n in $counts; do
    for pc in jacobi mg; do
      $mpi -np "$n" "$b/apps/mfree-poisson" --backend cuda --dim 3 --mesh ball --adapt shells --levels 2 \
        --degree "$p" --refine "$ref" --pc "$pc" --tol 1e-8 --json "$out/run.json" > "$out/run.log" 2>&1 ||
        { echo "poisson p=$p n=$n pc=$pc failed"; tail -5 "$out/run.log"; continue; }
      python3 -c "import json,sys; d=json.load(open('$out/run.json')); d['pc']='$pc'; print(json.dumps(d))" \
        >> "$out/scaling-ball.jsonl"
      grep -E "DoFs|CG iter|solve" "$out/run.log" | head -4
    done
  done
done
rm -f "$out/run.csv" "$out/run.json"
