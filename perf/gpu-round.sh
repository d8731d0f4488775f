#!/usr/bin/env bash
# One round on a GPU machine: build, cuda-labelled tests, sanitizers on a small run, benchmarks.
#   perf/gpu-round.sh OUTDIR [BENCH_ARGS...]        (BENCH_ARGS: passed to mfree-bench; none: skip)
# Expects p4est/MPI on the paths (see README "GPU"). Logs go to OUTDIR. MFREE_CTEST_JOBS: ctest's jobs (1).
set -uo pipefail
# a GPU machine: a cuda test that finds no usable GPU (driver or device fault) fails, naming the CUDA
# error, instead of being skipped (docs/testing.md, "GPU runs")
export MFREE_TEST_REQUIRE_GPU=1
out=${1:?output folder}
shift
b=${MFREE_GPU_BUILD:-/tmp/mfree-gpu-build}
mkdir -p "$out"
{ nvidia-smi -L; nvcc --version | tail -2; date -u; } > "$out/device.txt" 2>&1
cmake -S . -B "$b" -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 > "$out/build.log" 2>&1 &&
  cmake --build "$b" -j"$(nproc)" >> "$out/build.log" 2>&1 || { tail -50 "$out/build.log"; exit 1; }
grep -i "spill" "$out/build.log" | sort -u | head -20
if [ -z "${MFREE_SKIP_TESTS:-}" ]; then
  # several at a time with MFREE_CTEST_JOBS (the longest, mostly NVRTC compiles, start first: COST in
  # tests/CMakeLists.txt; -j6 passed the whole suite on an H100, perf/results/vector-default-h100-2026-12-07)
  (cd "$b" && ctest -L cuda -j"${MFREE_CTEST_JOBS:-1}" --output-on-failure) > "$out/ctest-cuda.log" 2>&1
  tail -15 "$out/ctest-cuda.log"
fi
if [ -n "${MFREE_SANITIZE:-}" ]; then
  app="$b/apps/mfree-poisson --backend cuda --mesh ball --coefficient ljungkvist --tol 1e-8"
  {
    for args in "--dim 3 --degree 2 --refine 1" "--dim 2 --degree 5 --refine 2" "--dim 3 --degree 3 --refine 1 --adapt shells --levels 2"; do
      for tool in memcheck racecheck synccheck; do
        echo "== compute-sanitizer --tool $tool mfree-poisson $args"
        compute-sanitizer --tool $tool --error-exitcode 9 $app $args | grep -E "ERROR SUMMARY|RACECHECK SUMMARY|CG iter|L2"
        echo "exit ${PIPESTATUS[0]}"
      done
    done
  } > "$out/sanitizer.log" 2>&1
  cat "$out/sanitizer.log"
fi
if [ -n "${MFREE_SETUP:-}" ]; then
  # The set-up study (docs/performance.md): mfree-poisson at 1.7e7 DoFs (Q4 refine 6, Q2 refine 7) and
  # mfree-bench --setup-phases at 7.2e6 DoFs (p = 1) and 3.3e7 DoFs (p >= 2).
  app="$b/apps/mfree-poisson --dim 3 --mesh deformed --backend cuda --tol 1e-8"
  : > "$out/app-setup.jsonl"
  for args in "--degree 4 --refine 6" "--degree 2 --refine 7"; do
    $app $args --json "$out/app.json" >> "$out/app-setup.log" 2>&1 && cat "$out/app.json" >> "$out/app-setup.jsonl"
  done
  rm -f "$out/app.json"
  tail -40 "$out/app-setup.log"
  bench="$b/perf/mfree-bench --backend cuda --setup-phases --sizes 1 --reps 3 --scatter atomic --problem ${MFREE_SETUP_PROBLEM:-bp3}"
  $bench --degrees 1 --max-dofs 7.5e6 --csv "$out/setup-bench-p1.csv" 2>&1 | tail -2
  $bench --degrees "${MFREE_SETUP_DEGREES:-2,4,8}" --max-dofs 3.5e7 --csv "$out/setup-bench.csv" 2>&1 | tail -8
fi
if [ $# -gt 0 ]; then
  "$b/perf/mfree-bench" --backend cuda "$@" --csv "$out/bench.csv" 2>&1 | tee "$out/bench.log" | tail -60
fi
