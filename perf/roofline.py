#!/usr/bin/env python3
"""Roofline of mfree-bench rows: each row placed by its models (arithmetic intensity =
flops_per_dof / bytes_per_dof) at its measured GFLOP/s, under the bandwidth ceiling (the triad of the
same run, recovered as gb_per_s / frac_of_triad) and the FP64 ceiling (the '# device ..., fp64 F
GFLOP/s' line of the same run, given as --fp64 F). Also prints a markdown table: GB/s and GFLOP/s
next to each other, and the fraction of the roofline min(triad x AI, fp64) reached.

Usage: perf/roofline.py --fp64 GFLOPS OUT.png RESULTS.csv [MORE.csv ...]"""
import argparse
import csv

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt

MARKERS = {"bp1": "o", "bp3": "s", "bp5": "^", "ljungkvist": "D"}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--fp64", type=float, required=True, help="measured FP64 ceiling, GFLOP/s")
    ap.add_argument("out")
    ap.add_argument("csv", nargs="+")
    a = ap.parse_args()
    rows = [r for f in a.csv for r in csv.DictReader(open(f)) if r.get("flops_per_dof")]
    rows = [r for r in rows if float(r["frac_of_triad"] or 0) > 0]
    if not rows:
        raise SystemExit("no rows with flops_per_dof and frac_of_triad")
    triad = sorted(float(r["gb_per_s"]) / float(r["frac_of_triad"]) for r in rows)[len(rows) // 2]
    print(f"triad {triad:.0f} GB/s, fp64 {a.fp64:.0f} GFLOP/s, ridge at {a.fp64 / triad:.1f} flop/byte\n")
    print("| problem | p | design | GB/s | GFLOP/s | flop/byte | roofline GFLOP/s | fraction |")
    print("|---|---|---|---|---|---|---|---|")
    fig, ax = plt.subplots(figsize=(7.5, 5))
    designs = sorted({r["design"] for r in rows})
    colors = {d: f"C{i}" for i, d in enumerate(designs)}
    seen = set()
    for r in rows:
        ai = float(r["flops_per_dof"]) / float(r["bytes_per_dof"])
        gf = float(r["gflop_per_s"])
        roof = min(triad * ai, a.fp64)
        base = r["problem"].replace("-csr", "")
        print(f"| {r['problem']} | {r['p']} | {r['design']} | {float(r['gb_per_s']):.0f} | {gf:.0f} | {ai:.2f} | "
              f"{roof:.0f} | {gf / roof:.2f} |")
        key = (base, r["design"])
        ax.scatter(ai, gf, marker=MARKERS.get(base, "x"), color=colors[r["design"]], s=28,
                   label=f"{base} {r['design']}" if key not in seen else None)
        ax.annotate(r["p"], (ai, gf), fontsize=6, xytext=(3, 2), textcoords="offset points")
        seen.add(key)
    lo = min(float(r["flops_per_dof"]) / float(r["bytes_per_dof"]) for r in rows) / 2
    hi = max(max(float(r["flops_per_dof"]) / float(r["bytes_per_dof"]) for r in rows) * 2, 2 * a.fp64 / triad)
    xs = [lo * (hi / lo) ** (k / 200) for k in range(201)]
    ax.plot(xs, [min(triad * x, a.fp64) for x in xs], "k-", lw=1.2)
    ax.text(lo * 1.1, triad * lo * 1.3, f"triad {triad:.0f} GB/s", fontsize=8, rotation=30)
    ax.text(hi / 6, a.fp64 * 1.08, f"FP64 {a.fp64 / 1000:.1f} TFLOP/s", fontsize=8)
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("arithmetic intensity of the models (flop / byte)")
    ax.set_ylabel("GFLOP/s (flop model x measured DoF/s)")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=7, ncol=2)
    ax.set_title(f"mfree operators on {rows[0]['device']} (numbers: p)", fontsize=10)
    fig.tight_layout()
    fig.savefig(a.out, dpi=110)


if __name__ == "__main__":
    main()
