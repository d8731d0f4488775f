#!/usr/bin/env python3
"""Iterations and DoF/s of the solve against DoFs per degree, from perf/solve-study.sh's CSV (a V-cycle
in float, where the CSV has one, dashed).
Usage: perf/plot_solve.py SOLVE.csv OUT.png [TITLE]"""
import csv
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt


def main():
    rows = [r for r in csv.DictReader(open(sys.argv[1])) if r["adapt"] == "none"]
    for r in rows:  # files from before the precision column: double
        r["mg_precision"] = r.get("mg_precision") or "double"
    fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(11, 4.2))
    precs = sorted({r["mg_precision"] for r in rows})
    for p in sorted({int(r["p"]) for r in rows}):
        color = f"C{(p - 1) % 10}"
        for prec in precs:  # double solid, float dashed
            sel = sorted((r for r in rows if int(r["p"]) == p and r["mg_precision"] == prec), key=lambda r: float(r["ndofs"]))
            if not sel:
                continue
            n = [float(r["ndofs"]) for r in sel]
            style, label = ("o-", f"Q{p}") if prec == "double" else ("s--", f"Q{p} {prec}")
            ax1.plot(n, [int(r["iterations"]) for r in sel], style, color=color, label=label)
            ax2.plot(n, [float(r["solve_dofs_per_s"]) for r in sel], style, color=color, label=label)
    ax1.set_xscale("log")
    ax1.set_ylim(0, 16)
    ax1.axhline(15, color="gray", ls=":", lw=1)
    ax1.set_xlabel("DoFs")
    ax1.set_ylabel("CG iterations to 1e-8")
    ax1.set_title("multigrid-preconditioned CG, deformed cube")
    ax2.set_xscale("log")
    ax2.set_yscale("log")
    ax2.set_xlabel("DoFs")
    ax2.set_ylabel("DoFs / solve time [1/s]")
    ax2.set_title("solve rate")
    ax2.axhline(4e7, color="gray", ls=":", lw=1)
    for ax in (ax1, ax2):
        ax.grid(True, which="both", alpha=0.3)
        ax.legend(ncol=2, fontsize=8)
    title = sys.argv[3] if len(sys.argv) > 3 else ""
    if title:
        fig.suptitle(title, fontsize=9)
    fig.tight_layout()
    fig.savefig(sys.argv[2], dpi=110)


if __name__ == "__main__":
    main()
