#!/usr/bin/env bash
# A quick correctness round on a GPU machine: build, the cuda-labelled tests, compute-sanitizer
# (memcheck, racecheck, synccheck) on small adaptive solves. Logs go to OUTDIR.
#   perf/gpu-check.sh OUTDIR
set -uo pipefail
# a GPU machine: a cuda test that finds no usable GPU (driver or device fault) fails, naming the CUDA
# error, instead of being skipped (docs/testing.md, "GPU runs")
export MFREE_TEST_REQUIRE_GPU=1
out=${1:?output folder}
b=${MFREE_GPU_BUILD:-/tmp/mfree-gpu-build}
mkdir -p "$out"
{ nvidia-smi -L; nvcc --version | tail -2; date -u; } > "$out/device.txt" 2>&1
cmake -S . -B "$b" -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 > "$out/build.log" 2>&1 &&
  cmake --build "$b" -j"$(nproc)" >> "$out/build.log" 2>&1 || { tail -50 "$out/build.log"; exit 1; }
(cd "$b" && ctest -L cuda --output-on-failure) > "$out/ctest-cuda.log" 2>&1
grep -E "tests passed|FAIL|Failed|\(Failed\)|Test +#" "$out/ctest-cuda.log" | tail -30
# adaptive balls with hanging faces and edges (3D: 476 of 3213 cells with a mask; 2D: 34 of 290)
app="$b/apps/mfree-poisson --backend cuda --mesh ball --coefficient ljungkvist --tol 1e-3"
for tool in memcheck racecheck synccheck; do
  cases=("--dim 3 --degree 2 --refine 1 --adapt shells --levels 2" "--dim 2 --degree 3 --refine 2 --adapt shells --levels 1"
         "--dim 3 --degree 3 --refine 1 --adapt shells --levels 1 --pc mg"
         "--dim 3 --degree 3 --refine 1 --adapt shells --levels 1 --pc mg --mg-precision float")
  [ -n "${MFREE_SANITIZE_MG_ONLY:-}" ] && cases=("${cases[2]}" "${cases[3]}")
  for args in "${cases[@]}"; do
    echo "== compute-sanitizer --tool $tool mfree-poisson $args"
    timeout 200 compute-sanitizer --tool $tool --error-exitcode 9 $app $args 2>&1 | grep -E "ERROR SUMMARY|RACECHECK SUMMARY|CG iter|L2|rror" | head -8
    echo "exit ${PIPESTATUS[0]}"
  done
done > "$out/sanitizer.log" 2>&1
cat "$out/sanitizer.log"
