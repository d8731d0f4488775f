#!/usr/bin/env bash
# round 110: cpu = cuda at Q2 states (t45 cuda's state case), Steihaug's CG on the device (t15 cuda), the trust
# region on Q2 hexahedra at 64, 96 and 112 cubes and P1 mesh 8, the cpu's and the device's Newton paths at Q2 16 cubes.
# Saves after every stage (a run cut short keeps what it had). LIMIT: seconds this script may use (default 540).
set -uo pipefail
o=/tmp/r110o; mkdir -p $o; b=/tmp/b; L=${LIMIT:-540}
save() { tar czf $OUT/r110.tgz -C /tmp r110o; }
trap save EXIT
export MFREE_CACHE_DIR=/tmp/mfcache
{ nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv; date -u; git log -1 --format=%h; } > $o/device.txt 2>&1
t0=$SECONDS
left() { echo $((L - (SECONDS - t0))); }
cmake -S . -B $b -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 > /tmp/configure.log 2>&1 &&
  cmake --build $b -j16 > /tmp/build.log 2>&1 || { tail -30 /tmp/build.log; exit 1; }
echo "build $((SECONDS - t0)) s"
(cd $b && MFREE_TEST_REQUIRE_GPU=1 timeout 120 ctest -L cuda -R "hyperelastic|cg_fused" -j4 --output-on-failure) > $o/ctest.log 2>&1
grep -E "tests passed|tests failed|differs|FAIL" $o/ctest.log | head -20; save
H=$b/apps/mfree-hyperelastic
q2() { # cubes, then the time it may take
  timeout $2 $H --mesh cube --degree 2 --cubes $1 --pc mg --mg-degree 2 --ew --line-search trust --backend cuda --verbose \
    --json $o/q2-c$1-trust.json > $o/q2-c$1-trust.txt 2>&1
  echo "q2 c$1 trust rc $?: $(grep -E '^Newton|^time|^trust' $o/q2-c$1-trust.txt | tr '\n' ' ')"; save
}
[ $(left) -gt 70 ] && q2 64 60
[ $(left) -gt 100 ] && q2 96 $(( $(left) > 160 ? 120 : $(left) - 40 ))
for be in cuda cpu; do [ $(left) -gt 100 ] || break # the cpu's and the device's Newton paths side by side at Q2 16 cubes
  OMP_NUM_THREADS=16 timeout 40 $H --mesh cube --degree 2 --cubes 16 --pc mg --mg-degree 2 --ew --backend $be --json $o/q2-c16-$be.json > $o/q2-c16-$be.txt 2>&1
  echo "q2 c16 $be rc $?"
done
python3 - $o <<'PY'
import json,sys
o=sys.argv[1]
for be in ("cpu","cuda"):
  try:
    a=json.load(open(f"{o}/q2-c16-{be}.json"))
    print("c16", be, a["newton_iterations"], a["cg_iterations"], ["%.3e" % h["residual"] for h in a["last_load_history"]])
  except Exception as e: print("c16", be, e)
PY
save
if [ $(left) -gt 70 ]; then
  timeout 45 $H --cubes 200 --pc mg --mg-degree 2 --ew --line-search trust --backend cuda --verbose --json $o/c200-trust.json > $o/c200-trust.txt 2>&1
  echo "c200 trust rc $?: $(grep -E '^Newton|^time|^trust' $o/c200-trust.txt | tr '\n' ' ')"; save
fi
[ $(left) -gt 60 ] && q2 112 $(( $(left) - 20 ))
echo "done $((SECONDS - t0)) s"
