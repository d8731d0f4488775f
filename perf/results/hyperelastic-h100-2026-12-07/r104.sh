#!/usr/bin/env bash
# round 104: admissible steps against backtracking at meshes 5, 7, 8 (mg, Chebyshev(2), Eisenstat-Walker: the
# fastest settings of r85); Q2 hexahedra with both step rules; the assembled Jacobian's phases over 5 Newton steps
# (CG capped: the paper's 5 assemblies, Table 5)
set -uo pipefail
o=/tmp/r104o; mkdir -p $o; b=/tmp/b
trap 'tar czf $OUT/r104.tgz -C /tmp r104o' EXIT
export MFREE_CACHE_DIR=/tmp/mfcache
{ nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv; date -u; git log -1 --format=%h; } > $o/device.txt 2>&1
t0=$SECONDS
[ -x $b/apps/mfree-hyperelastic ] || { cmake -S . -B $b -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 > /tmp/configure.log 2>&1 &&
  cmake --build $b -j16 --target mfree-hyperelastic > /tmp/build.log 2>&1 || { tail -30 /tmp/build.log; exit 1; }; }
echo "build $((SECONDS - t0)) s"
H=$b/apps/mfree-hyperelastic
for c in 200 180; do for ls in admissible backtrack; do
  timeout 100 $H --cubes $c --pc mg --mg-degree 2 --ew --line-search $ls --backend cuda --verbose --json $o/c$c-$ls.json > $o/c$c-$ls.txt 2>&1
  echo "c$c $ls rc $?: $(grep -E '^Newton|^time' $o/c$c-$ls.txt | tr '\n' ' ')"
done; done
echo "tets done $((SECONDS - t0)) s"
for v in "adm1:admissible:1" "bt4:backtrack:4" "adm4:admissible:4"; do IFS=: read lab ls ld <<< "$v"
  [ $((SECONDS - t0)) -gt 400 ] && break
  timeout 120 $H --mesh cube --degree 2 --cubes 112 --pc mg --mg-degree 2 --ew --line-search $ls --load-steps $ld --backend cuda --verbose --json $o/q2-c112-$lab.json > $o/q2-c112-$lab.txt 2>&1
  echo "q2 c112 $lab rc $?: $(grep -E '^Newton|^time' $o/q2-c112-$lab.txt | tr '\n' ' ')"
done
echo "hex done $((SECONDS - t0)) s"
for ls in admissible backtrack; do [ $((SECONDS - t0)) -gt 480 ] && break
  timeout 60 $H --cubes 140 --pc mg --mg-degree 2 --ew --line-search $ls --backend cuda --verbose --json $o/c140-$ls.json > $o/c140-$ls.txt 2>&1
  echo "c140 $ls rc $?: $(grep -E '^Newton|^time' $o/c140-$ls.txt | tr '\n' ' ')"
done
for c in 60 120 200; do
  [ $((SECONDS - t0)) -gt 530 ] && break
  timeout 60 $H --cubes $c --pc jacobi --method assembled --cg-max 50 --newton-max 5 --backend cuda --json $o/asm-c$c.json > $o/asm-c$c.txt 2>&1
  echo "asm c$c rc $?: $(grep -E 'phases' $o/asm-c$c.txt | tr '\n' ' ')"
done
echo "done $((SECONDS - t0)) s"
