#!/usr/bin/env python3
"""Markdown tables of the set-up phases from the files of the set-up study (perf/gpu-round.sh with
MFREE_SETUP=1): the app's JSON lines (setup_phases_s) and mfree-bench --setup-phases CSVs.
Usage: perf/setup_table.py app.jsonl [bench.csv]"""
import csv
import json
import sys

PHASES = ["mesh", "dofs", "ordering", "coordinates", "geometry", "coefficient", "dirichlet", "h2d", "rhs",
          "diagonal", "solver", "other"]


def app_table(path):
    runs = [json.loads(l) for l in open(path) if l.strip()]
    head = " | ".join(f"Q{r['degree']}, refine {r['refine']}" for r in runs)
    print(f"| phase (s) | {head} |")
    print("|---|" + "---|" * len(runs))
    for ph in PHASES:
        print(f"| {ph} | " + " | ".join(f"{r['setup_phases_s'].get(ph, 0.0):.3f}" for r in runs) + " |")
    print("| **set-up** | " + " | ".join(f"**{r['setup_s']:.3f}**" for r in runs) + " |")
    print("| solve (iterations) | " + " | ".join(f"{r['solve_s']:.2f} ({r['iterations']})" for r in runs) + " |")
    print("| DoFs | " + " | ".join(f"{r['ndofs']:,}" for r in runs) + " |")
    if all("device_mem_peak_bytes" in r for r in runs):
        print("| device memory peak (GB) | " + " | ".join(f"{r['device_mem_peak_bytes'] / 1e9:.2f}" for r in runs) + " |")


def bench_table(path):
    rows = list(csv.DictReader(open(path)))
    cols = [c for c in rows[0] if c.startswith("setup_") and c.endswith("_s") and c != "setup_s"]
    print("| p | DoFs | " + " | ".join(c[6:-2] for c in cols) + " | setup_s |")
    print("|---|---|" + "---|" * (len(cols) + 1))
    for r in rows:
        print(f"| {r['p']} | {float(r['ndofs']):.3g} | " + " | ".join(f"{float(r[c]):.3f}" for c in cols) +
              f" | **{float(r['setup_s']):.2f}** |")


if __name__ == "__main__":
    app_table(sys.argv[1])
    if len(sys.argv) > 2:
        print()
        bench_table(sys.argv[2])
