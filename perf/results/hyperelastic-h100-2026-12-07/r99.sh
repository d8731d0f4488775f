#!/usr/bin/env bash
# round 99: the simplex assembly at a state with one search per node pair (MFREE_SIMPLEX_ASM_BLOCKS=0: per entry, the
# earlier kernel) and the new pattern/assembly phases: mfree-hyperelastic with the assembled Jacobian and Jacobi,
# mesh 1 whole and mesh 8 with CG capped, each both ways; then the cuda tests that timed out in r98 (slow host)
# and the ones the change touches
set -uo pipefail
o=/tmp/r99o; mkdir -p $o; b=/tmp/b
trap 'tar czf $OUT/r99.tgz -C /tmp r99o' EXIT
export MFREE_CACHE_DIR=/tmp/mfcache
{ nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv; date -u; nproc; } > $o/device.txt 2>&1
t0=$SECONDS
cmake -S . -B $b -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 > /tmp/configure.log 2>&1 &&
  cmake --build $b -j16 > /tmp/build.log 2>&1 || { tail -40 /tmp/configure.log /tmp/build.log; exit 1; }
echo "build $((SECONDS - t0)) s"
H=$b/apps/mfree-hyperelastic
for v in new old; do
  [ $v = old ] && export MFREE_SIMPLEX_ASM_BLOCKS=0 || unset MFREE_SIMPLEX_ASM_BLOCKS
  timeout 60 $H --cubes 60 --pc jacobi --method assembled --backend cuda --json $o/c60-asm-$v.json > $o/c60-asm-$v.txt 2>&1; echo "c60 $v rc $?: $(grep -E '^time|solve_phases|library' $o/c60-asm-$v.txt | tr '\n' ' ')"
  timeout 90 $H --cubes 200 --pc jacobi --method assembled --cg-max 500 --backend cuda --verbose --json $o/c200-asm500-$v.json > $o/c200-asm500-$v.txt 2>&1; echo "c200 $v rc $?: $(grep -E '^time|^CG|library' $o/c200-asm500-$v.txt | tr '\n' ' ')"
done
unset MFREE_SIMPLEX_ASM_BLOCKS
echo "hyper $((SECONDS - t0)) s"
export MFREE_TEST_REQUIRE_GPU=1
(cd $b && timeout $((590 - (SECONDS - t0))) ctest -j6 --timeout 420 --output-on-failure -R "^(cuda_physics|cuda_physics_hex3d|cuda_physics_slab|cuda_hyperelastic|cuda_hyperelastic_np2|cuda_physics_assembled_np2|cuda_app_simplex_assembled|simplex_cuda_api|cuda_assembly_values|cuda_csr)$") > $o/ctest.log 2>&1
grep -E "Test +#|tests passed|tests failed" $o/ctest.log | tail -14
echo "done $((SECONDS - t0)) s"
