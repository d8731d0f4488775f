#!/usr/bin/env bash
# round 93: the P1 assembly with the row's columns staged (k_sx_asm_rows_p1) against the shared kernel
# (MFREE_SIMPLEX_ASM_STAGE=0): the simplex cuda tests, memcheck, the benchmark, ncu
set -uo pipefail
o=/tmp/r93o; mkdir -p $o; b=/tmp/b
trap 'tar czf $OUT/r93.tgz -C /tmp r93o' EXIT
export MFREE_TEST_REQUIRE_GPU=1 MFREE_CACHE_DIR=/tmp/mfcache
{ nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv; nvcc --version | tail -2; date -u; git rev-parse HEAD; git status --short; } > $o/device.txt 2>&1
t0=$SECONDS
cmake -S . -B $b -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 > /tmp/configure.log 2>&1 &&
  cmake --build $b -j16 > $o/build.log 2>&1 || { tail -40 /tmp/configure.log $o/build.log; exit 1; }
grep -i "k_sx_asm_rows_p1" $o/build.log | head -3
echo "build $((SECONDS - t0)) s"
A=$b/perf/mfree-simplex-assembly
(cd $b && timeout 200 ctest -L cuda -R "simplex" -j6 --output-on-failure) > $o/ctest-simplex.log 2>&1 &
cp=$!
# memcheck while the tests run (small meshes)
for dm in "3 1 4" "2 1 7"; do set -- $dm
  compute-sanitizer --tool memcheck --error-exitcode 9 $A --dim $1 --degree $2 --refine $3 --reps 2 > $o/memcheck-d$1.log 2>&1; echo "memcheck d$1 exit $?" | tee -a $o/memcheck.txt
  grep "ERROR SUMMARY" $o/memcheck-d$1.log | tee -a $o/memcheck.txt
done
wait $cp; echo "ctest rc $?"; grep -E "tests passed|Failed|\*\*\*|Test +#" $o/ctest-simplex.log | tail -12
echo "tests $((SECONDS - t0)) s"
for round in 1 2; do
  for st in 0 1; do
    MFREE_SIMPLEX_ASM_STAGE=$st $A --dim 3 --degree 1 --refine 8 --reps 7 --csv $o/asm3-r8-s$st-$round.csv > $o/asm3-r8-s$st-$round.txt 2>&1
    MFREE_SIMPLEX_ASM_STAGE=$st $A --dim 2 --degree 1 --refine 11 --reps 7 --csv $o/asm2-r11-s$st-$round.csv > $o/asm2-r11-s$st-$round.txt 2>&1
  done
done
for st in 0 1; do
  MFREE_SIMPLEX_ASM_STAGE=$st $A --dim 3 --degree 1 --refine 7 --coefficient variable --reps 5 --csv $o/asm3-r7var-s$st.csv > $o/asm3-r7var-s$st.txt 2>&1
done
echo "bench $((SECONDS - t0)) s"
python3 - $o <<'PY'
import csv, glob, os, sys
for f in sorted(glob.glob(os.path.join(sys.argv[1], "asm*.csv"))):
    for r in csv.DictReader(open(f)):
        print("%-22s dofs %9s values_s %9s dofs_per_s %11s frac %s" % (os.path.basename(f), r["ndofs"], r["values_s"], r["dofs_per_s"], r["frac_of_triad"]))
PY
for st in 0 1; do
  MFREE_SIMPLEX_ASM_STAGE=$st timeout 120 ncu --kernel-name regex:k_sx_asm_rows --launch-skip 1 --launch-count 1 --section SpeedOfLight --section Occupancy --section LaunchStats $A --dim 3 --degree 1 --refine 7 --reps 2 > $o/ncu-s$st.txt 2>&1
  grep -E "k_sx_asm|Duration|L1/TEX Cache Throughput|DRAM Throughput|Achieved Occupancy|Registers Per|Dynamic Shared" $o/ncu-s$st.txt | head -12
done
echo "done $((SECONDS - t0)) s"
