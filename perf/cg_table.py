#!/usr/bin/env python3
"""Markdown table of CG's cost against one operator application from two mfree-bench CSVs run with
--cg N, the first with the fused steps (default), the second with --cg-steps: per problem and degree,
ms per CG iteration and cg_vs_apply (the apply's time over a CG iteration's) of each.
  perf/cg_table.py FUSED.csv STEPS.csv"""
import csv
import sys

fused, steps = (list(csv.DictReader(open(f))) for f in sys.argv[1:3])
key = lambda r: (r["problem"], int(r["p"]))
s = {key(r): r for r in steps}
degrees = sorted({int(r["p"]) for r in fused})
print("| problem | | " + " | ".join(f"p = {p}" for p in degrees) + " |")
print("|---|---|" + "---|" * len(degrees))
for prob in ["bp1", "bp3", "bp5", "ljungkvist"]:
    f = {int(r["p"]): r for r in fused if r["problem"] == prob}
    if not f:
        continue
    print(f"| {prob} | apply ms | " + " | ".join(f"{float(f[p]['ms_per_apply']):.2f}" for p in degrees) + " |")
    print(f"| | CG step by step: ms, apply/CG | " + " | ".join(
        f"{float(s[(prob, p)]['cg_ms_per_iter']):.2f}, {float(s[(prob, p)]['cg_vs_apply']):.2f}" for p in degrees) + " |")
    print(f"| | CG fused: ms, apply/CG | " + " | ".join(
        f"{float(f[p]['cg_ms_per_iter']):.2f}, **{float(f[p]['cg_vs_apply']):.2f}**" for p in degrees) + " |")
