#!/usr/bin/env bash
# round 97: the staged cases alone on the device (t38 cuda thread stage), racecheck and synccheck of the staged
# slab kernel, simplex_cuda_api (the P1 assembly's thread rule)
set -uo pipefail
o=$OUT/r97; mkdir -p $o; b=/tmp/b
export MFREE_TEST_REQUIRE_GPU=1 MFREE_CACHE_DIR=/tmp/mfcache
{ nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv; date -u; } > $o/device.txt 2>&1
t0=$SECONDS
cmake -S . -B $b -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 > /tmp/configure.log 2>&1 &&
  cmake --build $b -j16 --target t38_physics t28_simplex_cuda_api mfree-bench > /tmp/build.log 2>&1 || { tail -40 /tmp/configure.log /tmp/build.log; exit 1; }
echo "build $((SECONDS - t0)) s"
$b/tests/t38_physics cuda thread stage > $o/t38-stage.log 2>&1; echo "t38 stage rc $?" | tee -a $o/summary.txt; tail -4 $o/t38-stage.log
$b/tests/t28_simplex_cuda_api > $o/t28.log 2>&1; echo "t28 rc $?" | tee -a $o/summary.txt
for tool in racecheck synccheck; do
  compute-sanitizer --tool $tool --error-exitcode 9 $b/perf/mfree-bench --backend cuda --problem bp6 --dim 3 --degrees 3 --max-dofs 1e5 --sizes 1 --reps 1 > /tmp/$tool.log 2>&1
  echo "$tool bp6 p3 exit $?: $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' /tmp/$tool.log | tr '\n' ' ')" | tee -a $o/summary.txt
done
echo "done $((SECONDS - t0)) s"
