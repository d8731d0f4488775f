#!/usr/bin/env python3
"""The comparison of perf/compare-speed.sh's runs: python3 perf/compare_speed.py OUT_DIR

Throughputs (mfree-bench's gdofs_per_s per row, the DoF/s of each '# assembly' line): per case the best
of the rounds of each build, and after / before (>= 1: the after build is as fast or faster); the
spread of the rounds within a build (max / min - 1) says how much the same code varies. mfree-poisson:
the best (least) set-up and solve times of each build's runs, and after / before of the times (<= 1:
as fast or faster)."""
import collections
import csv
import glob
import json
import os
import re
import sys


def runs(out, ext):
    """{(name, build, round): path} of OUT_DIR/name-build-round.ext"""
    found = {}
    for path in glob.glob(os.path.join(out, "*." + ext)):
        m = re.match(r"(.+)-(before|after)-(\d+)\.%s$" % ext, os.path.basename(path))
        if m:
            found[(m.group(1), m.group(2), int(m.group(3)))] = path
    return found


def bench_rows(path):
    with open(path) as fh:
        lines = [l for l in fh if not l.startswith("#")]
    return list(csv.DictReader(lines))


def compare(values, higher_better=True):
    """values[case][build] = [per round] -> rows (case, before, after, ratio, spread)"""
    rows = []
    for case in sorted(values):
        v = values[case]
        if not v.get("before") or not v.get("after"):
            continue
        best = max if higher_better else min
        b, a = best(v["before"]), best(v["after"])
        ratio = a / b if b else float("nan")
        spread = max(max(x) / min(x) - 1.0 for x in v.values() if min(x) > 0)
        rows.append((case, b, a, ratio, spread))
    return rows


def report(title, rows, higher_better=True, unit=""):
    if not rows:
        return
    print("## %s" % title)
    word = "after/before" if higher_better else "after/before (time)"
    print("%-48s %14s %14s %8s %8s" % ("case", "before" + unit, "after" + unit, word[:8], "spread"))
    for case, b, a, r, s in rows:
        print("%-48s %14.5g %14.5g %8.4f %7.2f%%" % (" ".join(str(c) for c in case), b, a, r, 100 * s))
    ratios = [r for _, _, _, r, _ in rows]
    worst = min(ratios) if higher_better else max(ratios)
    slower = [r for r in ratios if (r < 0.97 if higher_better else r > 1.05)]
    print("cases %d, worst after/before %.4f, median %.4f, beyond the goal (%s) %d; largest spread of one build %.2f%%\n"
          % (len(rows), worst, sorted(ratios)[len(ratios) // 2], "3% slower" if higher_better else "5% slower",
             len(slower), 100 * max(s for *_, s in rows)))


def main():
    out = sys.argv[1]
    dev = os.path.join(out, "device.txt")
    if os.path.exists(dev):
        print("device: " + " / ".join(l.strip() for l in open(dev)))
    csvs = runs(out, "csv")
    for part, names in (("mfree-bench bp1, bp3, bp5 (GDoF/s)", ("bp1", "bp3", "bp5")),
                        ("mfree-bench simplex-all (GDoF/s)", ("simplex2", "simplex3"))):
        values = collections.defaultdict(lambda: collections.defaultdict(list))
        for (name, build, _), path in sorted(csvs.items()):
            if name not in names:
                continue
            for row in bench_rows(path):
                key = (row["problem"], row["dim"] + "D", "p" + row["p"], "q" + row["q"], row["scatter"],
                       row.get("design", ""), row["ndofs"])
                values[key][build].append(float(row["gdofs_per_s"]))
        report(part, compare(values))
    values = collections.defaultdict(lambda: collections.defaultdict(list))
    pat = re.compile(r"# assembly (\S+) p (\d+) variant (\S+): ([0-9.eE+-]+) s, DoF/s ([0-9.eE+-]+)")
    for (name, build, _), path in sorted(runs(out, "txt").items()):
        if not name.startswith("assembly"):
            continue
        seen = collections.Counter()
        for line in open(path):
            m = pat.match(line)
            if m:
                k = (name[-1] + "D", m.group(1), "p" + m.group(2), m.group(3))
                seen[k] += 1
                values[k + ("first" if seen[k] == 1 else "again",)][build].append(float(m.group(5)))
    report("assembly (DoF/s)", compare(values))
    times = collections.defaultdict(lambda: collections.defaultdict(list))
    for (name, build, _), path in sorted(runs(out, "json").items()):
        d = json.load(open(path))
        for k in ("setup_s", "pc_setup_s", "solve_s"):
            if k in d:
                times[("poisson Q4", str(d.get("ndofs")), k)][build].append(float(d[k]))
        for k, v in sorted(d.get("setup_phases_s", {}).items()):
            times[("poisson Q4", str(d.get("ndofs")), "setup phase " + k)][build].append(float(v))
    report("mfree-poisson --pc mg (seconds, best of the runs)", compare(times, higher_better=False), higher_better=False)


if __name__ == "__main__":
    main()
