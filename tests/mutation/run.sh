#!/usr/bin/env bash
# tests/mutation/run.sh -- the mutation check: does the CPU test suite catch plausible bugs?
#
# Each file tests/mutation/patches/NN-name.patch is one small, plausible bug (a lost square root, a
# coefficient on the wrong term, ...), as a patch against the library; its first line, "# text",
# says what it breaks. For each patch the script builds a copy of the working tree with the patch
# applied (the cpu backend, as CI runs the suite), runs the CPU tests (ctest -L cpu, without the
# valgrind runs, which look for leaks, not wrong answers) and lists the tests that fail: they caught
# the bug. A patch that no test catches is a hole in the suite; the script then exits 1.
#
# Run it by hand before large reshapes (docs/testing.md, "Mutation check"); it takes a while: one
# incremental build and one CPU suite per patch.
#
#   tests/mutation/run.sh [-j JOBS] [-R REGEX] [-o REPORT.md] [PATCH ...]
#     -j JOBS     ctest's parallel jobs (default: the number of cores)
#     -R REGEX    run only the tests matching REGEX (default: every cpu-labelled test but valgrind_*)
#     -o REPORT   also write the report (markdown) to REPORT
#     PATCH       the patches to try (default: every tests/mutation/patches/*.patch)
#   Environment: MFREE_MUTATION_DIR (scratch folder, default ${TMPDIR:-/tmp}/mfree-mutation; the copy and
#   its build are kept there, so a second run builds only what the patches touch), CMAKE_ARGS (extra
#   configure arguments, e.g. -DMFREE_WITH_CUDA=ON to build as CI does; default -DMFREE_WITH_CUDA=OFF).
set -uo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
jobs="$(nproc 2>/dev/null || echo 2)"
regex=""
report=""
while getopts "j:R:o:h" opt; do
  case "$opt" in
    j) jobs="$OPTARG" ;;
    R) regex="$OPTARG" ;;
    o) report="$OPTARG" ;;
    *) sed -n '2,24p' "$0"; exit 2 ;;
  esac
done
shift $((OPTIND - 1))
patches=("$@")
if [ ${#patches[@]} -eq 0 ]; then patches=("$here"/patches/*.patch); fi
for i in "${!patches[@]}"; do
  p="${patches[$i]}"
  [ -f "$p" ] || { echo "mutation: no such patch: $p" >&2; exit 2; }
  patches[$i]="$(cd "$(dirname "$p")" && pwd)/$(basename "$p")"
done

work="${MFREE_MUTATION_DIR:-${TMPDIR:-/tmp}/mfree-mutation}"
src="$work/src"
build="$work/build"
mkdir -p "$src" "$build" || exit 2
log="$work/log"
mkdir -p "$log"

# The copy: the working tree's tracked and untracked (not ignored) files, the mutation folder left out.
# Files that did not change keep their time stamps, so the build stays incremental between runs.
# A file is copied only where its content differs from the copy's, and then with the time of now: a run
# that was stopped with a patch applied and built leaves no patched object behind that an older time
# stamp would hide from the build.
echo "mutation: copying $root to $src"
stage="$work/stage"
rm -rf "$stage" && mkdir -p "$stage" || exit 2
(cd "$root" && git ls-files -z --cached --others --exclude-standard -- . ':!tests/mutation' |
  tar --null -T - -cf -) | tar -xf - -C "$stage" || { echo "mutation: copy to $stage failed" >&2; exit 2; }
(cd "$stage" && find . -type f -print0) | while IFS= read -r -d '' f; do
  if ! cmp -s "$stage/$f" "$src/$f"; then
    mkdir -p "$(dirname "$src/$f")" && cp "$stage/$f" "$src/$f" || exit 2
  fi
done || { echo "mutation: copy to $src failed" >&2; exit 2; }
rm -rf "$stage"
# a clean copy to apply patches to: a git repository of its own
if [ ! -d "$src/.git" ]; then git -C "$src" init -q && git -C "$src" config user.email m@localhost && git -C "$src" config user.name mutation; fi
git -C "$src" add -A >/dev/null && git -C "$src" commit -q -m base --allow-empty >/dev/null

generator=""
command -v ninja >/dev/null 2>&1 && generator="-G Ninja"
if [ ! -f "$build/CMakeCache.txt" ]; then
  echo "mutation: configuring $build"
  # shellcheck disable=SC2086
  cmake -S "$src" -B "$build" $generator -DCMAKE_BUILD_TYPE=Release ${CMAKE_ARGS:--DMFREE_WITH_CUDA=OFF} \
    >"$log/configure.txt" 2>&1 || { echo "mutation: configure failed ($log/configure.txt)" >&2; exit 2; }
fi

run_suite() { # $1: name; writes the failing tests, one a line, to $log/$1.failed
  local name="$1"
  if ! cmake --build "$build" -j "$jobs" >"$log/$name.build.txt" 2>&1; then
    echo "BUILD-FAILED" >"$log/$name.failed"
    return
  fi
  local sel=(-L cpu -E '^valgrind_')
  [ -n "$regex" ] && sel=(-R "$regex")
  (cd "$build" && ctest "${sel[@]}" -j "$jobs" --timeout 600 >"$log/$name.ctest.txt" 2>&1)
  # the failed tests: ctest's closing list "The following tests FAILED:" (skipped tests are not in it)
  awk '/^The following tests FAILED:/ { f = 1; next }
       f && /^[[:space:]]+[0-9]+ - / { sub(/^[[:space:]]+[0-9]+ - /, ""); sub(/ \(.*$/, ""); print }' \
    "$log/$name.ctest.txt" | sort >"$log/$name.failed"
}

echo "mutation: baseline (no patch)"
run_suite baseline
if [ -s "$log/baseline.failed" ]; then
  echo "mutation: the suite fails without any patch, fix that first:" >&2
  cat "$log/baseline.failed" >&2
  exit 2
fi

date_s="$(date -u +%Y-%m-%d)"
commit="$(git -C "$root" rev-parse --short HEAD 2>/dev/null || echo unknown)"
out="$work/report.md"
{
  echo "Mutation check of $date_s (commit $commit; tests: ${regex:-ctest -L cpu, valgrind runs left out})."
  echo
  echo "| mutation | what it breaks | caught by |"
  echo "|---|---|---|"
} >"$out"
survivors=0
for p in "${patches[@]}"; do
  name="$(basename "$p" .patch)"
  what="$(sed -n '1s/^# *//p' "$p")"
  echo "mutation: $name: $what"
  if ! git -C "$src" apply --recount "$p" 2>"$log/$name.apply.txt"; then
    echo "| $name | $what | PATCH DOES NOT APPLY |" >>"$out"
    echo "  does not apply ($log/$name.apply.txt)"
    survivors=$((survivors + 1))
    continue
  fi
  run_suite "$name"
  git -C "$src" checkout -q -- . # the patch undone
  if grep -q BUILD-FAILED "$log/$name.failed"; then
    echo "| $name | $what | BUILD FAILED |" >>"$out"
    echo "  build failed ($log/$name.build.txt)"
    survivors=$((survivors + 1))
  elif [ ! -s "$log/$name.failed" ]; then
    echo "| $name | $what | **not caught** |" >>"$out"
    echo "  NOT CAUGHT"
    survivors=$((survivors + 1))
  else
    n="$(wc -l <"$log/$name.failed")"
    list="$(tr '\n' ' ' <"$log/$name.failed" | sed 's/ $//; s/ /, /g')"
    echo "| $name | $what | $n: $list |" >>"$out"
    echo "  caught by $n: $list"
  fi
done
# the build left as the tree is
cmake --build "$build" -j "$jobs" >/dev/null 2>&1
echo
cat "$out"
[ -n "$report" ] && cp "$out" "$report"
if [ "$survivors" -gt 0 ]; then
  echo "mutation: $survivors of ${#patches[@]} patches not caught (or not applied)" >&2
  exit 1
fi
echo "mutation: every patch caught (${#patches[@]})"
