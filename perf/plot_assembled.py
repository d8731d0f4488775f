#!/usr/bin/env python3
"""Matrix-free against assembled (CSR) by degree, like Ljungkvist's Figures 4-6: operator throughput
and CG iteration rate both ways (left), and the device bytes per DoF of each with the largest problem
that fits a GPU of the given memory (right). Rows: mfree-bench CSVs with `<problem>` and
`<problem>-csr` rows of one problem (the largest size of each degree is used).

Usage: perf/plot_assembled.py --problem bp3 [--dim 3] --gpu-gb 80 OUT.png A.csv [B.csv ...]"""
import argparse
import csv

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--problem", default="bp3")
    ap.add_argument("--dim", type=int, default=3)
    ap.add_argument("--gpu-gb", type=float, default=80.0)
    ap.add_argument("out")
    ap.add_argument("csv", nargs="+")
    a = ap.parse_args()
    rows = [r for f in a.csv for r in csv.DictReader(open(f)) if r["problem"] in (a.problem, a.problem + "-csr") and int(r["dim"]) == a.dim]
    best = {}
    for r in rows:  # the largest size per (problem, p); the fastest row (scatter, design) among equal sizes
        k = (r["problem"], int(r["p"]))
        key = (int(r["ndofs"]), float(r["gdofs_per_s"]))
        if k not in best or key > (int(best[k]["ndofs"]), float(best[k]["gdofs_per_s"])):
            best[k] = r
    ps = sorted({p for (_, p) in best})
    mf = [best.get((a.problem, p)) for p in ps]
    cs = [best.get((a.problem + "-csr", p)) for p in ps]
    fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(11, 4.2))
    print(f"| p | DoFs | matrix-free GDoF/s | CSR GDoF/s | CG GDoF/s per iteration mf | CSR | mf B/DoF (qdata) | CSR B/DoF (matrix) | largest fitting {a.gpu_gb:.0f} GB: mf | CSR |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    xm, xc, cm, cc, bm, bc = [], [], [], [], [], []
    for p, m, c in zip(ps, mf, cs):
        if not m or not c:
            continue
        n = int(c["ndofs"])
        g_m, g_c = float(m["gdofs_per_s"]), float(c["gdofs_per_s"])
        it_m = int(m["ndofs"]) / float(m["cg_ms_per_iter"]) / 1e6 if m["cg_ms_per_iter"] else float("nan")
        it_c = n / float(c["cg_ms_per_iter"]) / 1e6 if c["cg_ms_per_iter"] else float("nan")
        # stored bytes per DoF: the apply models less x and y (16 B/DoF) and, for the matrix, its row starts
        b_m = float(m["bytes_per_dof"]) - 16.0
        b_c = float(c["bytes_per_dof"]) - 16.0
        # held in memory besides: 4 vectors of CG (32 B/DoF) for both; the matrix-free operator also
        # for the matrix (it is assembled from it)
        fit_m = a.gpu_gb * 1e9 / (b_m + 32.0)
        fit_c = a.gpu_gb * 1e9 / (b_c + b_m + 32.0)
        xm.append(g_m), xc.append(g_c), cm.append(it_m), cc.append(it_c), bm.append(fit_m), bc.append(fit_c)
        print(f"| {p} | {n:.3g} | {g_m:.2f} | {g_c:.2f} | {it_m:.2f} | {it_c:.2f} | {b_m:.0f} | {b_c:.0f} | {fit_m:.2g} | {fit_c:.2g} |")
    ps = [p for p, m, c in zip(ps, mf, cs) if m and c]
    ax1.plot(ps, xm, "o-", label="matrix-free apply")
    ax1.plot(ps, xc, "s-", label="CSR SpMV")
    ax1.plot(ps, cm, "o--", label="matrix-free CG iteration")
    ax1.plot(ps, cc, "s--", label="CSR CG iteration")
    ax1.set_xlabel("degree p")
    ax1.set_ylabel("GDoF/s")
    ax1.set_xticks(ps)
    ax1.grid(alpha=0.3)
    ax1.legend(fontsize=8)
    ax1.set_title(f"{a.problem}, {a.dim}D: throughput")
    ax2.semilogy(ps, bm, "o-", label="matrix-free")
    ax2.semilogy(ps, bc, "s-", label="CSR (and the operator it is made from)")
    ax2.set_xlabel("degree p")
    ax2.set_ylabel(f"largest problem in {a.gpu_gb:.0f} GB (DoFs, model)")
    ax2.set_xticks(ps)
    ax2.grid(alpha=0.3, which="both")
    ax2.legend(fontsize=8)
    ax2.set_title("memory")
    dev = rows[0]["device"] if rows else ""
    fig.suptitle(f"matrix-free against assembled on {dev}")
    fig.tight_layout()
    fig.savefig(a.out, dpi=110)


if __name__ == "__main__":
    main()
