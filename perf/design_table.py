#!/usr/bin/env python3
"""Markdown table of the kernel designs from an mfree-bench CSV run with --design point,column:
GDoF/s of each design per problem and degree, and the faster one.
  perf/design_table.py perf/results/design-3d-h200-2026-11-22.csv"""
import csv
import sys

rows = list(csv.DictReader(open(sys.argv[1])))
probs = [p for p in ["bp1", "bp3", "bp5", "ljungkvist"] if any(r["problem"] == p for r in rows)]
degrees = sorted({int(r["p"]) for r in rows})
g = {(r["problem"], int(r["p"]), r["design"]): float(r["gdofs_per_s"]) for r in rows}
print("| problem | design | " + " | ".join(f"p = {p}" for p in degrees) + " |")
print("|---|---|" + "---|" * len(degrees))
for pr in probs:
    for d in ["point", "column"]:
        cells = []
        for p in degrees:
            a, b = g.get((pr, p, "point")), g.get((pr, p, "column"))
            v = g.get((pr, p, d))
            best = a is not None and b is not None and v == max(a, b)
            cells.append("" if v is None else (f"**{v:.1f}**" if best else f"{v:.1f}"))
        print(f"| {pr} | {d} | " + " | ".join(cells) + " |")
    ratio = [g[(pr, p, "column")] / g[(pr, p, "point")] if (pr, p, "point") in g and (pr, p, "column") in g else None
             for p in degrees]
    print(f"| {pr} | column/point | " + " | ".join("" if x is None else f"{x:.2f}" for x in ratio) + " |")
