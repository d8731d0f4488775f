#!/usr/bin/env bash
# round 105 (next): the column design's new default at six points (t38 cuda thread six; bp4 p = 4, bp6 p = 5 without
# the environment), the lagged preconditioner at meshes 7, 8 and the step by the energy's slope on Q2 hexahedra (112
# cubes) and P1 mesh 8
set -uo pipefail
o=/tmp/r105o; mkdir -p $o; b=/tmp/b
trap 'tar czf $OUT/r105.tgz -C /tmp r105o' EXIT
export MFREE_CACHE_DIR=/tmp/mfcache
{ nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv; date -u; git log -1 --format=%h; } > $o/device.txt 2>&1
t0=$SECONDS
cmake -S . -B $b -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 > /tmp/configure.log 2>&1 &&
  cmake --build $b -j16 > /tmp/build.log 2>&1 || { tail -30 /tmp/build.log; exit 1; }
echo "build $((SECONDS - t0)) s"
# the host code that changed after 85769f3 on the device: Newton (critical steps, the lag), CG's check with a kept set-up
(cd $b && MFREE_TEST_REQUIRE_GPU=1 timeout 150 ctest -L cuda -R "hyperelastic|cuda_pc|gmres|cuda_mg$|cg" -j4 --output-on-failure) > $o/ctest-newton.log 2>&1
grep -E "tests passed|tests failed" $o/ctest-newton.log
MFREE_TEST_REQUIRE_GPU=1 timeout 150 $b/tests/t38_physics cuda thread six > $o/t38-six.log 2>&1; echo "t38 six rc $?"
for pp in bp4:4 bp6:5; do IFS=: read pr p <<< "$pp"
  timeout 60 $b/perf/mfree-bench --backend cuda --problem $pr --dim 3 --degrees $p --max-dofs 3e7 --sizes 1 --reps 7 --csv $o/$pr-p$p.csv > /dev/null 2>&1
  echo "$pr p$p $(tail -1 $o/$pr-p$p.csv | cut -d, -f9)"; done
H=$b/apps/mfree-hyperelastic
for v in "critical:0" "critical:1e-2"; do IFS=: read ls lag <<< "$v"; [ $((SECONDS - t0)) -gt 330 ] && break
  timeout 110 $H --mesh cube --degree 2 --cubes 112 --pc mg --mg-degree 2 --ew --line-search $ls --pc-lag $lag --backend cuda --verbose --json $o/q2-c112-$ls-lag$lag.json > $o/q2-c112-$ls-lag$lag.txt 2>&1
  echo "q2 c112 $ls lag $lag rc $?: $(grep -E '^Newton|^time' $o/q2-c112-$ls-lag$lag.txt | tr '\n' ' ')"
done
for v in "c200:0:backtrack" "c200:1e-2:backtrack" "c200:0:critical" "c180:1e-2:backtrack"; do
  IFS=: read c lag ls <<< "$v"; [ $((SECONDS - t0)) -gt 450 ] && break
  timeout 40 $H --cubes ${c#c} --pc mg --mg-degree 2 --ew --pc-lag $lag --line-search $ls --backend cuda --verbose --json $o/$c-lag$lag-$ls.json > $o/$c-lag$lag-$ls.txt 2>&1
  echo "$c lag $lag $ls rc $?: $(grep -E '^Newton|^time|lag' $o/$c-lag$lag-$ls.txt | tr '\n' ' ')"
done
echo "done $((SECONDS - t0)) s"
