#!/usr/bin/env python3
"""Plot of the ljungkvist-adaptive results: overhead per DoF (and per cell) of the adaptive mesh
against the uniform ball, and the share of hanging nodes, per p, 2D and 3D (like Ljungkvist's
Figures 6-7). Usage: perf/plot_adaptive.py OUT.png FILE_2D.csv FILE_3D.csv"""
import csv
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt

out, files = sys.argv[1], sys.argv[2:]
fig, axes = plt.subplots(1, 2, figsize=(10, 4))
for f in files:
    rows = list(csv.DictReader(open(f)))
    dim = rows[0]["dim"]
    p = [int(r["p"]) for r in rows]
    axes[0].plot(p, [100 * float(r["overhead_per_dof"]) for r in rows], marker="o", label=f"{dim}D per DoF")
    axes[0].plot(p, [100 * float(r["overhead_per_cell"]) for r in rows], marker="x", ls="--", label=f"{dim}D per cell")
    axes[1].plot(p, [100 * float(r["hanging_node_share"]) for r in rows], marker="o", label=f"{dim}D hanging nodes")
    axes[1].plot(p, [100 * float(r["masked_cell_share"]) for r in rows], marker="x", ls="--", label=f"{dim}D cells with a mask")
axes[0].axhline(10, color="gray", lw=0.8)
axes[0].set_xlabel("p")
axes[0].set_ylabel("overhead against the uniform ball, %")
axes[0].set_title("ljungkvist-adaptive: time overhead")
axes[1].set_xlabel("p")
axes[1].set_ylabel("%")
axes[1].set_title("share of hanging nodes and masked cells")
for ax in axes:
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8)
fig.suptitle(f"shells-refined ball, 2 rounds, {rows[0]['device']}")
fig.tight_layout()
fig.savefig(out, dpi=110)
