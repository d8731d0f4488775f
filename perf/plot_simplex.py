#!/usr/bin/env python3
"""Fraction of the roofline per simplex case (after Kulkarni and Klöckner's Figure 5): one bar per
(problem, dim, p) of the CSV rows of mfree-bench's simplex problems (--problem simplex-...), the roofline being the smaller of the bandwidth-bound
(triad / bytes_per_dof) and FP64-bound (peak / flops_per_dof) throughputs of the same run; a line at the
0.6 goal. Where a case appears in several files the last one wins (e.g. a tuned run after the model's).

Usage: perf/plot_simplex.py OUT.png A.csv [B.csv ...]"""
import csv
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt


def main():
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    out, files = sys.argv[1], sys.argv[2:]
    cases = {}
    for f in files:
        for r in csv.DictReader(open(f)):
            cases[(r["problem"], int(r["dim"]), int(r["p"]))] = r
    keys = sorted(cases, key=lambda k: (k[1], k[0], k[2]))
    fr = [float(cases[k]["frac_of_roofline"]) for k in keys]
    labels = [f"{k[0].replace('simplex-', '')} {k[1]}D P{k[2]}" + (" *" if "tuned" in cases[k]["design"] else "") for k in keys]
    colors = {"simplex-mass": "C0", "simplex-laplace": "C1", "simplex-helmholtz": "C2", "simplex-elasticity": "C3"}
    fig, ax = plt.subplots(figsize=(12, 4.5))
    ax.bar(range(len(keys)), fr, color=[colors.get(k[0], "C7") for k in keys])
    ax.axhline(0.6, color="k", ls="--", lw=1, label="goal 0.6")
    ax.set_xticks(range(len(keys)))
    ax.set_xticklabels(labels, rotation=70, ha="right", fontsize=7)
    ax.set_ylabel("fraction of roofline")
    ax.set_ylim(0, 1)
    ax.grid(axis="y", alpha=0.3)
    ax.legend()
    dev = cases[keys[0]]["device"] if keys else ""
    met = sum(x >= 0.6 for x in fr)
    ax.set_title(f"simplex action kernels on {dev}: {met} of {len(fr)} cases at >= 0.6 of the roofline (* tuned)")
    fig.tight_layout()
    fig.savefig(out, dpi=110)
    for k, x in zip(keys, fr):
        print(f"{k[0]} {k[1]}D P{k[2]}: {x:.3f}")


if __name__ == "__main__":
    main()
