#!/usr/bin/env bash
# round 94: the committed simplex assembly (3D P1 staged) through simplex_cuda_api; ncu of the vector kernel
# (bp6 p = 3 slab, bp6 p = 6 column, bp4 p = 4 column, bp2 p = 3 slab): where the warps wait
set -uo pipefail
o=/tmp/r94o; mkdir -p $o; b=/tmp/b
trap 'tar czf $OUT/r94.tgz -C /tmp r94o' EXIT
export MFREE_TEST_REQUIRE_GPU=1 MFREE_CACHE_DIR=/tmp/mfcache
{ nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv; date -u; git rev-parse HEAD; git status --short; } > $o/device.txt 2>&1
t0=$SECONDS
cmake -S . -B $b -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 > /tmp/configure.log 2>&1 &&
  cmake --build $b -j16 > /tmp/build.log 2>&1 || { tail -40 /tmp/configure.log /tmp/build.log; exit 1; }
echo "build $((SECONDS - t0)) s"
(cd $b && ctest -R "simplex_cuda_api|cuda_app_simplex_assembled" --output-on-failure) > $o/ctest.log 2>&1; echo "ctest rc $?"; grep -E "tests passed|Failed|Test +#" $o/ctest.log
B=$b/perf/mfree-bench
for c in "bp6 3" "bp6 6" "bp4 4" "bp2 3" "bp6 2"; do set -- $c
  $B --backend cuda --problem $1 --dim 3 --degrees $2 --max-dofs 1e5 --sizes 1 --reps 1 > /dev/null 2>&1  # the JIT cache
  timeout 150 ncu --kernel-name regex:mfree_apply_vcol --launch-skip 3 --launch-count 1 --section SpeedOfLight --section Occupancy --section LaunchStats --section WarpStateStats --section MemoryWorkloadAnalysis --section ComputeWorkloadAnalysis --section InstructionStats --metrics "regex:smsp__average_warps_issue_stalled_.*_per_issue_active\.ratio" \
    $B --backend cuda --problem $1 --dim 3 --degrees $2 --max-dofs 2e7 --sizes 1 --reps 3 > $o/ncu-$1-p$2.txt 2>&1
  echo "== $1 p$2"; grep -E "Duration|DRAM Throughput|L1/TEX Cache Throughput|L2 Cache Throughput|Achieved Occupancy|Registers Per|Stall|Warp Cycles Per Issued|Issue Slots Busy|Executed Ipc A|stalled_(long|short|barrier|math|wait|mio|lg|not_sel|no_inst|dispatch)" $o/ncu-$1-p$2.txt | head -30
done
echo "done $((SECONDS - t0)) s"
