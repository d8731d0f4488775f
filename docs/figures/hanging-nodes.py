#!/usr/bin/env python3
"""Draws docs/figures/hanging-nodes.png: a coarse cell next to two fine cells (Q2), the coarse face
values gathered into the fine cell's face positions, and the 1D interpolation onto its half."""
import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt

fig, ax = plt.subplots(figsize=(9, 4.6))
ax.set_aspect("equal")
ax.axis("off")
# coarse cell [0,2]x[0,2], fine cells [2,3]x[0,1] (child 0) and [2,3]x[1,2] (child 2)
for (x0, y0, h) in [(0, 0, 2), (2, 0, 1), (2, 1, 1)]:
    ax.plot([x0, x0 + h, x0 + h, x0, x0], [y0, y0, y0 + h, y0 + h, y0], color="k", lw=1.5)
gll = [0.0, 0.5, 1.0]
for gy in gll:  # coarse face x = 2: the DoFs
    ax.plot(2, 2 * gy, "o", color="tab:blue", ms=11, zorder=3)
for gy in gll:  # fine cell child 0: positions on its hanging face x = 2, y in [0, 1]
    y = gy
    constrained = gy != 0.0
    ax.plot(2.0, y, "o", mfc="white" if constrained else "tab:blue", mec="tab:red", mew=2, ms=7, zorder=4)
ax.annotate("", xy=(2.08, 0.5), xytext=(2.08, 1.0), arrowprops=dict(arrowstyle="->", color="tab:red"))
ax.text(1.9, 0.72, "fine node at y = 1/2 (coarse 1/4):\nu = sum_m l_m(1/4) u_m", color="tab:red", fontsize=9, ha="right")
ax.text(-0.1, 2.15, "coarse cell (face DoFs u_0, u_1, u_2 at y = 0, 1, 2)", fontsize=9, color="tab:blue")
ax.text(3.1, 0.4, "fine cell, child 0:\nmask = face x hanging\nfine face nodes = P_0 u", fontsize=9)
ax.text(3.1, 1.4, "fine cell, child 2:\nfine face nodes = P_1 u", fontsize=9)
ax.text(-0.1, -0.45, "gather: the fine cell's face positions hold u_0, u_1, u_2 (the coarse DoFs, as p4est_lnodes numbers them);\n"
        "the kernel replaces them by P_h u (h = the child's half), evaluates, integrates, applies P_h^T, scatters.\n"
        "3D: faces take two such 1D passes (their two directions), edge-only constraints one.", fontsize=8.5)
ax.set_xlim(-0.2, 5.2)
ax.set_ylim(-0.9, 2.5)
fig.tight_layout()
fig.savefig(__file__.replace(".py", ".png"), dpi=110)
