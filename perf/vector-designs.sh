#!/usr/bin/env bash
# The vector operators (bp2, bp4, bp6; 3D, deformed cube, about 3e7 DoFs) under several settings of the
# vector kernel, one after the other on one GPU, and a table of GDoF/s side by side.
#   perf/vector-designs.sh BUILD OUTDIR DEGREES PROBLEMS LABEL=SETTINGS...
# DEGREES: mfree-bench's list (1,2,3,4); PROBLEMS: bp2,bp4,bp6 or a part; each LABEL=SETTINGS a name and
# environment assignments separated by ':' ("default=" for the committed choice,
# "column=MFREE_PHYSICS_VCOL_SLAB=0:MFREE_PHYSICS_VCOL_THREAD=0"). Writes OUTDIR/PROBLEM-LABEL.csv and .log
# (the logs in MFREE_VD_LOGS if set) and prints the table (GDoF/s; nodes x 3 DoFs). Bench options:
# MFREE_VD_ARGS (default: --max-dofs 3e7 --sizes 1 --reps 7).
set -uo pipefail
b=${1:?build folder}
out=${2:?output folder}
degrees=${3:?degrees}
problems=${4:?problems}
shift 4
logs=${MFREE_VD_LOGS:-$out}
mkdir -p "$out" "$logs"
args=${MFREE_VD_ARGS:---max-dofs 3e7 --sizes 1 --reps 7}
labels=()
for v in "$@"; do
  label=${v%%=*}
  settings=${v#*=}
  labels+=("$label")
  for pr in ${problems//,/ }; do
    (
      IFS=: read -ra kv <<< "$settings"
      for e in "${kv[@]}"; do [ -n "$e" ] && export "$e"; done
      # shellcheck disable=SC2086
      "$b/perf/mfree-bench" --backend cuda --problem "$pr" --dim 3 --degrees "$degrees" $args \
        --csv "$out/$pr-$label.csv" > "$logs/$pr-$label.log" 2>&1
      echo "$pr $label: exit $?"
    )
  done
done
# the table: a row per problem and degree, a column per label
python3 - "$out" "$problems" "${labels[@]}" <<'PY'
import csv, os, sys
out, problems, labels = sys.argv[1], sys.argv[2].split(","), sys.argv[3:]
print("problem p " + " ".join("%10s" % l for l in labels))
for pr in problems:
    rows = {}
    for l in labels:
        f = os.path.join(out, "%s-%s.csv" % (pr, l))
        if not os.path.exists(f):
            continue
        for r in csv.DictReader(open(f)):
            rows.setdefault(int(r["p"]), {})[l] = float(r["gdofs_per_s"])
    for p in sorted(rows):
        print("%-7s %d " % (pr, p) + " ".join("%10s" % ("%.2f" % rows[p][l] if l in rows[p] else "-") for l in labels))
PY
