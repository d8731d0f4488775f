#!/usr/bin/env python3
"""tests/layers.py -- the library's layers: no circles, dependencies that point down.

Reads two kinds of dependency between the files of lib/:
  includes  the #include "..." lines of lib/ (resolved against the including file's folder, then lib/)
  calls     the symbols of the built objects (nm): file A depends on file B where A's object uses a
            symbol that B's object defines (functions and data; weak and inline symbols are left out)
and fails (exit 1) on
  - a circle of files (in either graph), naming the files and the symbols or includes that tie them;
  - a dependency that runs up the declared layer order (below), unless it is one of the registrations
    listed in ALLOWED_UP (at most MAX_UP of them), naming the file, the file it reaches and the symbols;
  - a source file of lib/ over MAX_LINES lines.

The layers, from the bottom up (a file may depend on its own layer and the ones below it):
  0 bottom    errors, allocation, threads, phases: lib/base/, lib/mfree_impl.h, lib/mfree.h (and its part
              lib/mfree_newton.h)
  1 core      the generic objects: lib/*.c and lib/*.h (context, mesh, space, vector, operator, output)
  2 families, physics, operator types, preconditioners and solvers:
              lib/hex/, lib/simplex/, lib/hanging/, lib/physics/, lib/assembled/, lib/mg/, lib/solvers/
  3 backends  lib/cuda/ (reached from below only through the backend table)
  4 tests     lib/mf_testing.h (the private header of tests/ and perf/; nothing in lib/ includes it)

  python3 tests/layers.py --lib lib --objects BUILD/lib [--objects DIR ...] [--verbose]
Without --objects only the includes and the line counts are checked.
"""
import argparse
import collections
import os
import re
import subprocess
import sys

LAYERS = [  # (path prefix relative to lib/, layer); the first match wins
    ("base/", 0), ("mfree_impl.h", 0), ("mfree.h", 0), ("mfree_newton.h", 0),
    ("hex/", 2), ("simplex/", 2), ("hanging/", 2), ("physics/", 2), ("assembled/", 2), ("mg/", 2),
    ("solvers/", 2),
    ("cuda/", 3),
    ("mf_testing.h", 4),
    ("", 1),
]
LAYER_NAMES = ["bottom", "core", "families/physics/operator types", "backends", "tests"]
# Dependencies up the order that are allowed: where a table is filled (registration). (from, to) files.
ALLOWED_UP = {
    ("backend.c", "cuda/backend.c"),  # lib/backend.c registers the cuda table
    ("family.c", "hex/family_hex.c"),  # the cell families that mesh creation searches (lib/family.c)
    ("family.c", "simplex/family_simplex.c"),
}
MAX_UP = 5
MAX_LINES = 900
SOURCE_EXT = (".c", ".h", ".cu", ".cuh", ".in")


def layer_of(rel):
    for prefix, layer in LAYERS:
        if rel.startswith(prefix):
            return layer
    return 1


def lib_files(lib):
    out = []
    for root, _, files in os.walk(lib):
        for f in files:
            if f.endswith(SOURCE_EXT):
                out.append(os.path.relpath(os.path.join(root, f), lib))
    return sorted(out)


def include_graph(lib, files):
    g = collections.defaultdict(dict)
    pat = re.compile(r'^\s*#\s*include\s+"([^"]+)"')
    known = set(files)
    for f in files:
        with open(os.path.join(lib, f), errors="replace") as fh:
            for n, line in enumerate(fh, 1):
                m = pat.match(line)
                if not m:
                    continue
                inc = m.group(1)
                cand = os.path.normpath(os.path.join(os.path.dirname(f), inc))
                if cand not in known:
                    cand = os.path.normpath(inc)
                if cand in known and cand != f:
                    g[f].setdefault(cand, []).append("line %d" % n)
    return g


def object_source(obj, lib, files):
    """The lib/ file an object was compiled from (generated instantiations: the template's folder)."""
    path = obj.replace(os.sep, "/")
    if ".dir/" in path:
        rel = path.split(".dir/", 1)[1]
    else:
        rel = os.path.basename(path)
    rel = re.sub(r"\.o(bj)?$", "", rel)
    if "/cuda/" in path and "cuda/" + rel in files:  # the CUDA library's own (cuda/backend.c, not backend.c)
        return "cuda/" + rel
    if rel in files:
        return rel
    if "/cuda/" in path and ("/" in rel or not rel.endswith(".cu")):
        return None  # a stale object of a source that moved or went (a build folder older than the tree)
    if "/cuda/" in path:  # a generated instantiation (apply_d3_p4_d.cu, ...): part of the backend
        return "cuda/(generated)/" + rel
    if ".dir/" in path:
        return None  # the same: its source is no longer there
    for f in files:  # an object compiled outside CMake's folders: by its name
        if f.endswith("/" + rel):
            return f
    return None


def call_graph(objdirs, lib, files):
    objs = []
    for d in objdirs:
        for root, _, fs in os.walk(d):
            objs += [os.path.join(root, f) for f in fs if f.endswith(".o")]
    defs, uses = {}, collections.defaultdict(set)
    for o in sorted(objs):
        src = object_source(o, lib, files)
        if src is None:
            continue
        out = subprocess.run(["nm", o], capture_output=True, text=True, check=True).stdout
        for line in out.splitlines():
            p = line.split()
            if len(p) == 3 and p[1] in "TDBRG" and not p[2].startswith("."):
                defs.setdefault(p[2], src)
            elif len(p) == 2 and p[0] == "U":
                uses[src].add(p[1])
    g = collections.defaultdict(dict)
    for f, us in uses.items():
        for s in us:
            t = defs.get(s)
            if t and t != f:
                g[f].setdefault(t, []).append(s)
    return g, len(objs)


def circles(g):
    index, low, stack, on, out = {}, {}, [], set(), []
    counter = [0]
    sys.setrecursionlimit(100000)

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in g.get(v, {}):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    nodes = set(g) | {t for e in g.values() for t in e}
    for v in sorted(nodes):
        if v not in index:
            visit(v)
    return out


def report(kind, g, problems, verbose):
    comps = circles(g)
    for comp in comps:
        problems.append("%s circle of %d files: %s" % (kind, len(comp), ", ".join(comp)))
        members = set(comp)
        for f in comp:
            for t, why in sorted(g[f].items()):
                if t in members:
                    problems.append("    %s -> %s: %s" % (f, t, " ".join(sorted(set(why))[:8])))
    up = []
    for f in sorted(g):
        for t, why in sorted(g[f].items()):
            lf = layer_of(f.replace("cuda/(generated)/", "cuda/"))
            lt = layer_of(t.replace("cuda/(generated)/", "cuda/"))
            if lt > lf:
                up.append((f, t, why, lf, lt))
    for f, t, why, lf, lt in up:
        allowed = (f, t) in ALLOWED_UP
        line = "%s upward%s: %s (%s) -> %s (%s): %s" % (
            kind, " (registration)" if allowed else "", f, LAYER_NAMES[lf], t, LAYER_NAMES[lt],
            " ".join(sorted(set(why))[:8]))
        if not allowed:
            problems.append(line)
        elif verbose:
            print(line)
    return len(comps), len(up)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--lib", required=True)
    ap.add_argument("--objects", action="append", default=[])
    ap.add_argument("--verbose", action="store_true")
    a = ap.parse_args()
    files = lib_files(a.lib)
    problems = []
    inc = include_graph(a.lib, files)
    nci, nui = report("include", inc, problems, a.verbose)
    ncc = nuc = 0
    nobj = 0
    if a.objects:
        calls, nobj = call_graph(a.objects, a.lib, files)
        if nobj == 0:
            problems.append("no object files under %s: build the library first" % ", ".join(a.objects))
        ncc, nuc = report("call", calls, problems, a.verbose)
    if len(ALLOWED_UP) > MAX_UP:
        problems.append("%d registrations allowed upward, more than %d" % (len(ALLOWED_UP), MAX_UP))
    for f in files:
        if f.endswith(".in"):
            continue
        with open(os.path.join(a.lib, f), errors="replace") as fh:
            n = sum(1 for _ in fh)
        if n > MAX_LINES:
            problems.append("lib/%s has %d lines (at most %d)" % (f, n, MAX_LINES))
    for p in problems:
        print(p)
    print("layers: %d files, %d objects; include circles %d, upward includes %d; call circles %d, upward calls %d;"
          " %d problems" % (len(files), nobj, nci, nui, ncc, nuc, len(problems)))
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
