#!/usr/bin/env python3
"""Plots of mfree-bench CSV files: GDoF/s against DoFs, one line per degree p, one panel per problem
(like Ljungkvist's Figures 4-5). Usage: perf/plot.py RESULTS.csv OUT.png [scatter]"""
import csv
import sys
from collections import defaultdict

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt


def main():
    src, out = sys.argv[1], sys.argv[2]
    scatter = sys.argv[3] if len(sys.argv) > 3 else "atomic"
    rows = [r for r in csv.DictReader(open(src)) if r["scatter"] == scatter]
    problems = [p for p in ["bp1", "bp3", "bp5", "ljungkvist"] if any(r["problem"] == p for r in rows)]
    fig, axes = plt.subplots(1, len(problems), figsize=(4.2 * len(problems), 4), sharey=True)
    axes = axes if len(problems) > 1 else [axes]
    for ax, prob in zip(axes, problems):
        lines = defaultdict(list)
        for r in rows:
            if r["problem"] == prob:
                lines[int(r["p"])].append((int(r["ndofs"]), float(r["gdofs_per_s"])))
        for p in sorted(lines):
            pts = sorted(lines[p])
            ax.plot([a for a, _ in pts], [b for _, b in pts], marker="o", ms=3, label=f"p={p}")
        ax.set_xscale("log")
        ax.set_title(f"{prob} ({scatter} scatter)")
        ax.set_xlabel("DoFs")
        ax.grid(True, which="both", alpha=0.3)
    axes[0].set_ylabel("GDoF/s per operator application")
    axes[-1].legend(fontsize=8)
    dev = rows[0]["device"] if rows else ""
    fig.suptitle(f"mfree matrix-free operators, 3D, double precision, {dev}")
    fig.tight_layout()
    fig.savefig(out, dpi=110)


if __name__ == "__main__":
    main()
