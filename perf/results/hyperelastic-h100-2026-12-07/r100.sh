#!/usr/bin/env bash
# round 100: which change broke the device's simplex assembly in r99: the kernel's variants (0 block positions in
# the earlier flat loop, 1 the earlier kernel, 2/3 the nested loops of r99) and the pattern's OpenMP (one thread),
# side by side on t45 (assembled Jacobian at a state) and t38's assembled cases; then the assembly's time
set -uo pipefail
o=/tmp/r100o; mkdir -p $o; b=/tmp/b
trap 'tar czf $OUT/r100.tgz -C /tmp r100o' EXIT
export MFREE_TEST_REQUIRE_GPU=1
{ nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv; date -u; } > $o/device.txt 2>&1
t0=$SECONDS
cmake -S . -B $b -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 > /tmp/configure.log 2>&1 &&
  cmake --build $b -j16 --target t45_hyperelastic t38_physics mfree-hyperelastic > /tmp/build.log 2>&1 || { tail -40 /tmp/configure.log /tmp/build.log; exit 1; }
echo "build $((SECONDS - t0)) s"
for v in 0 1 2 3 0omp1; do
  (
    vv=${v%omp1}; [ "$v" != "$vv" ] && export OMP_NUM_THREADS=1
    [ "$vv" != 0 ] && export MFREE_SIMPLEX_ASM_VARIANT=$vv
    export MFREE_CACHE_DIR=/tmp/mfc-$v
    timeout 150 $b/tests/t45_hyperelastic cuda > $o/t45-v$v.log 2>&1; echo "t45 v$v rc $? fails $(grep -c FAIL $o/t45-v$v.log)"
  ) &
done
for v in 0 1; do
  ( [ "$v" != 0 ] && export MFREE_SIMPLEX_ASM_VARIANT=$v; export MFREE_CACHE_DIR=/tmp/mfd-$v
    timeout 150 $b/tests/t38_physics cuda assembled > $o/t38a-v$v.log 2>&1; echo "t38 assembled v$v rc $? fails $(grep -c FAIL $o/t38a-v$v.log)" ) &
done
wait
echo "tests $((SECONDS - t0)) s"
H=$b/apps/mfree-hyperelastic
export MFREE_CACHE_DIR=/tmp/mfcache
for v in 0 1; do
  [ "$v" != 0 ] && export MFREE_SIMPLEX_ASM_VARIANT=$v || unset MFREE_SIMPLEX_ASM_VARIANT
  timeout 60 $H --cubes 60 --pc jacobi --method assembled --backend cuda --json $o/c60-v$v.json > $o/c60-v$v.txt 2>&1; echo "c60 v$v rc $?: $(grep -E '^Newton|^CG|library' $o/c60-v$v.txt | tr '\n' ' ')"
  timeout 90 $H --cubes 200 --pc jacobi --method assembled --cg-max 500 --backend cuda --verbose --json $o/c200-v$v.json > $o/c200-v$v.txt 2>&1; echo "c200 v$v rc $?: $(grep -E '^time|^CG|library' $o/c200-v$v.txt | tr '\n' ' ')"
done
echo "done $((SECONDS - t0)) s"
