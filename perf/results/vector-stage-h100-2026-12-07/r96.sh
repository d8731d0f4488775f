#!/usr/bin/env bash
# round 96: the whole cuda suite with the stage of stored entries by default at bp2 p = 2, 3 and bp6 p = 3
# (and the staged P1 assembly); then bp2/bp4/bp6 p = 2..4 with the new defaults, and the P1 assembly
set -uo pipefail
o=/tmp/r96o; mkdir -p $o /tmp/r96; b=/tmp/b
trap 'tar czf $OUT/r96.tgz -C /tmp r96o' EXIT
export MFREE_TEST_REQUIRE_GPU=1 MFREE_CACHE_DIR=/tmp/mfcache
{ nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv; nvcc --version | tail -2; date -u; git rev-parse HEAD; git status --short; } > $o/device.txt 2>&1
t0=$SECONDS
cmake -S . -B $b -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 > /tmp/configure.log 2>&1 &&
  cmake --build $b -j16 > /tmp/build.log 2>&1 || { tail -40 /tmp/configure.log /tmp/build.log; exit 1; }
echo "build $((SECONDS - t0)) s"
(cd $b && timeout 330 ctest -L cuda -j6 --timeout 320 --output-on-failure) > $o/ctest-cuda.log 2>&1
grep -E "tests passed|FAIL|Failed|Total Test|Timeout|\*\*\*" $o/ctest-cuda.log | tail -12
grep -E "cuda_physics_(slab|thread|hex3d)|cuda_physics |simplex_cuda_api" $o/ctest-cuda.log | grep Test | tail -6
echo "ctest $((SECONDS - t0)) s"
MFREE_VD_LOGS=/tmp/r96 MFREE_VD_ARGS="--max-dofs 3e7 --sizes 1 --reps 7" timeout 100 perf/vector-designs.sh $b $o 2,3,4 bp2,bp6 default= base=MFREE_PHYSICS_VCOL_QSTAGE=0 > $o/table.txt 2>&1
tail -8 $o/table.txt
timeout 40 $b/perf/mfree-simplex-assembly --dim 3 --degree 1 --refine 8 --reps 7 --csv $o/asm3-r8.csv 2>&1 | grep "^# cube"
echo "done $((SECONDS - t0)) s"
