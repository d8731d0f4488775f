#!/usr/bin/env python3
"""Scaling on the GPUs of one node (perf/scaling.sh): weak and strong efficiency of bp3 p = 4 (apply and
Jacobi-CG iteration, exchange overlapped and not) and of the shells-adaptive ball (Jacobi and
multigrid solves). Prints markdown tables and writes a figure.

Usage: perf/plot_scaling.py SCALING.csv SCALING-BALL.jsonl OUT.png"""
import csv
import json
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt


def main():
    rows = list(csv.DictReader(open(sys.argv[1])))
    ball = [json.loads(l) for l in open(sys.argv[2]) if l.strip()]
    out = sys.argv[3]
    fig, axes = plt.subplots(1, 3, figsize=(14, 4.2))
    # weak and strong, bp3 p = 4: efficiency of DoF/s per GPU against one GPU
    for ax, kind in zip(axes[:2], ["weak", "strong"]):
        print(f"\n{kind} scaling, bp3 p = 4\n")
        print("| GPUs | overlap | DoFs | DoFs per GPU | apply ms | GDoF/s | efficiency | CG ms/iter | CG efficiency |")
        print("|---|---|---|---|---|---|---|---|---|")
        for ov, style in [("1", "-"), ("0", "--")]:
            sel = sorted((r for r in rows if r["kind"] == kind and r["overlap"] == ov), key=lambda r: int(r["ranks"]))
            base = [r for r in sel if r["ranks"] == "1"]
            if not base:
                continue
            b = base[0]
            a1 = float(b["gdofs_per_s"])
            c1 = int(b["ndofs"]) / float(b["cg_ms_per_iter"])
            n, ea, ec = [], [], []
            for r in sel:
                g = int(r["ranks"])
                ra = float(r["gdofs_per_s"]) / (g * a1)
                rc = int(r["ndofs"]) / float(r["cg_ms_per_iter"]) / (g * c1)
                n.append(g), ea.append(ra), ec.append(rc)
                print(f"| {g} | {'on' if ov == '1' else 'off'} | {int(r['ndofs']):.3g} | {int(r['ndofs']) / g:.3g} | "
                      f"{float(r['ms_per_apply']):.2f} | {float(r['gdofs_per_s']):.1f} | {ra:.2f} | "
                      f"{float(r['cg_ms_per_iter']):.2f} | {rc:.2f} |")
            lab = "overlap" if ov == "1" else "no overlap"
            ax.plot(n, ea, "o" + style, label=f"apply, {lab}")
            ax.plot(n, ec, "s" + style, label=f"CG iteration, {lab}")
        ax.axhline(0.9, color="gray", lw=0.8, ls=":")
        ax.set_title(f"bp3 p = 4, {kind} scaling")
        ax.set_xlabel("GPUs")
        ax.set_ylim(0.5, 1.1)
        ax.set_xticks([1, 2, 4])
        ax.grid(alpha=0.3)
        ax.legend(fontsize=7)
    axes[0].set_ylabel("parallel efficiency (DoF/s per GPU over 1 GPU)")
    print("\nshells-adaptive ball, strong scaling (mfree-poisson)\n")
    print("| p | preconditioner | GPUs | DoFs | iterations | solve s | efficiency |")
    print("|---|---|---|---|---|---|---|")
    ax = axes[2]
    for p in sorted({d["degree"] for d in ball}):
        for pc in ["jacobi", "mg"]:
            sel = sorted((d for d in ball if d["degree"] == p and d["pc"] == pc), key=lambda d: d["ranks"])
            base = [d for d in sel if d["ranks"] == 1]
            if not base:
                continue
            t1 = base[0]["solve_s"]
            n, e = [], []
            for d in sel:
                eff = t1 / (d["ranks"] * d["solve_s"])
                n.append(d["ranks"]), e.append(eff)
                print(f"| {p} | {pc} | {d['ranks']} | {d['ndofs']:.3g} | {d['iterations']} | {d['solve_s']:.3f} | {eff:.2f} |")
            ax.plot(n, e, "o-" if pc == "mg" else "s--", label=f"p = {p}, {pc}")
    ax.set_title("shells-adaptive ball, strong scaling (solve)")
    ax.set_xlabel("GPUs")
    ax.set_ylim(0.3, 1.1)
    ax.set_xticks([1, 2, 4])
    ax.grid(alpha=0.3)
    ax.legend(fontsize=7)
    dev = rows[0]["device"] if rows else ""
    fig.suptitle(f"mfree on {dev} GPUs of one node, one MPI rank per GPU")
    fig.tight_layout()
    fig.savefig(out, dpi=110)


if __name__ == "__main__":
    main()
