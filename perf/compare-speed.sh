#!/usr/bin/env bash
# The same benchmarks on two source trees built alike, run alternately on one device, and the
# comparison (perf/compare_speed.py): the check that a change that should not change speed did not.
#   perf/compare-speed.sh BEFORE_SRC AFTER_SRC OUT_DIR [PART ...]
# PART (default: all of them, in this order):
#   bp        mfree-bench --problem bp1, bp3, bp5, 3D, p = 1..8, one size (the largest that fits)
#   simplex   mfree-bench --problem simplex-all, 2D and 3D, P1..P4
#   poisson   mfree-poisson --pc mg --tol 1e-8, 3D deformed cube, Q4, refine 6 (1.7 x 10^7 DoFs):
#             set-up and solve times, COMPARE_POISSON_RUNS runs of each build (default 3)
#   assembly  mfree-bench --method assembled --assembly-variant all, bp3, 2D and 3D, p = 1, 2
# Environment: COMPARE_ROUNDS (rounds of bp, simplex and assembly, before then after in each; default
# 2), COMPARE_BUILD (where the builds go; default /tmp/compare), CUDA_ARCH (default 90), COMPARE_JOBS
# (build jobs; default nproc). A build already there is reused. OUT_DIR gets one file per run and
# summary.txt (python3 perf/compare_speed.py OUT_DIR).
set -uo pipefail
before=${1:?before source tree}
after=${2:?after source tree}
out=${3:?output folder}
shift 3
parts=${*:-bp simplex poisson assembly}
rounds=${COMPARE_ROUNDS:-2}
broot=${COMPARE_BUILD:-/tmp/compare}
arch=${CUDA_ARCH:-90}
jobs=${COMPARE_JOBS:-$(nproc)}
here="$(cd "$(dirname "$0")" && pwd)"
mkdir -p "$out"
for t in before after; do
  src=$before
  [ $t = after ] && src=$after
  if [ ! -x "$broot/$t/perf/mfree-bench" ] || [ ! -x "$broot/$t/apps/mfree-poisson" ]; then
    cmake -S "$src" -B "$broot/$t" -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES="$arch" \
      -DMFREE_WITH_TESTS=OFF > "$out/build-$t.log" 2>&1 &&
      cmake --build "$broot/$t" -j "$jobs" --target mfree-bench mfree-poisson >> "$out/build-$t.log" 2>&1 ||
      { echo "compare-speed: the $t build failed (see $out/build-$t.log)"; exit 1; }
  fi
done
command -v nvidia-smi > /dev/null && nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > "$out/device.txt"
date -u +%Y-%m-%dT%H:%MZ >> "$out/device.txt"
bench() { # build round name args...
  local t=$1 r=$2 name=$3
  shift 3
  timeout 300 "$broot/$t/perf/mfree-bench" --backend cuda "$@" --csv "$out/$name-$t-$r.csv" > "$out/$name-$t-$r.txt" 2>&1 ||
    echo "compare-speed: $name ($t, round $r) exited $?"
}
for part in $parts; do
  case $part in
  bp)
    for r in $(seq "$rounds"); do for t in before after; do for pb in bp1 bp3 bp5; do
      bench $t $r $pb --problem $pb --dim 3 --degrees 1,2,3,4,5,6,7,8 --sizes 1
    done; done; done ;;
  simplex)
    for r in $(seq "$rounds"); do for t in before after; do for d in 2 3; do
      bench $t $r simplex$d --problem simplex-all --dim $d
    done; done; done ;;
  assembly)
    for r in $(seq "$rounds"); do for t in before after; do for d in 2 3; do
      bench $t $r assembly$d --problem bp3 --dim $d --degrees 1,2 --sizes 1 --method assembled --assembly-variant all
    done; done; done ;;
  poisson)
    for r in $(seq "${COMPARE_POISSON_RUNS:-3}"); do for t in before after; do
      timeout 300 "$broot/$t/apps/mfree-poisson" --backend cuda --pc mg --tol 1e-8 --dim 3 --mesh deformed \
        --coefficient constant --degree 4 --refine 6 --json "$out/poisson-$t-$r.json" > "$out/poisson-$t-$r.txt" 2>&1 ||
        echo "compare-speed: poisson ($t, run $r) exited $?"
    done; done ;;
  *) echo "compare-speed: unknown part '$part'"; exit 2 ;;
  esac
done
python3 "$here/compare_speed.py" "$out" | tee "$out/summary.txt"
