#!/usr/bin/env python3
"""Draws docs/figures/hyperelastic.png from mfree-hyperelastic's JSON summaries (--json) beside the FEniCS GPU study's
Table 6 (Trotter, Langguth, Cai; NVIDIA A100, CG time alone):
  python3 perf/plot_hyperelastic.py OUT.png RUN.json [RUN.json ...]
Left: time against DoFs (ours the whole nonlinear solve, set-up and predictor included; the paper's CG/Jacobi and
CG/AMG solve times). Right: CG iterations per Newton step (ours with multigrid; the paper's AMG totals over its 5
Newton steps). Runs that did not converge are left out of the times (their Mdof/s per CG iteration still count)."""
import json
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt

# Table 2 and 6 of the paper: mesh -> (DoFs = 3 x vertices, CG/Jacobi s, CG/AMG s or None, AMG iterations)
PAPER = {
    1: (3 * 226981, 2.5, 2.6, 182), 2: (3 * 531441, 6.8, 5.3, 175), 3: (3 * 1030301, 13.2, 9.5, 178),
    4: (3 * 1771561, 27.7, 17.3, 180), 5: (3 * 2803221, 49.3, 27.5, 183), 6: (3 * 4173281, 82.5, 36.9, 183),
    7: (3 * 5929741, 133.3, 52.9, 187), 8: (3 * 8120601, 194.9, None, None),
}

out, files = sys.argv[1], sys.argv[2:]
runs = [json.load(open(f)) for f in files]
fig, (a, b) = plt.subplots(1, 2, figsize=(11, 4.2))
dofs = [v[0] for v in PAPER.values()]
a.loglog(dofs, [v[1] for v in PAPER.values()], "s--", color="tab:gray", label="paper A100: CG/Jacobi (CG only)")
amg = [(v[0], v[2]) for v in PAPER.values() if v[2]]
a.loglog([x for x, _ in amg], [y for _, y in amg], "^--", color="tab:brown", label="paper A100: CG/AMG (CG only)")
b.semilogx([x for x, _ in amg], [v[3] / 5.0 for v in PAPER.values() if v[3]], "^--", color="tab:brown",
           label="paper A100: AMG (per Newton step)")
def series(r):
    """a run's series: Jacobi, or multigrid by its smoothers' degree and forcing"""
    if r["pc"] != "mg":
        return "Jacobi"
    ew = ", Eisenstat-Walker" if r.get("ew") else ", CG 1e-5"
    return f"multigrid, Chebyshev({r.get('mg_degree', 4)}){ew}"


colors = ["tab:red", "tab:blue", "tab:green", "tab:purple", "tab:orange"]
for k, name in enumerate(sorted({series(r) for r in runs if r["element"] == "P1"})):
    color = colors[k % len(colors)]
    sel = [r for r in runs if r["element"] == "P1" and series(r) == name and r["converged"]]
    pts = sorted((r["dofs"], r["t_total"]) for r in sel)
    if pts:
        a.loglog([x for x, _ in pts], [y for _, y in pts], "o-", color=color, label=f"mfree H100 P1, {name}: whole solve")
    its = sorted((r["dofs"], r["cg_iterations"] / r["newton_iterations"]) for r in sel
                 if r["pc"] == "mg" and r["newton_iterations"])
    if its:
        b.semilogx([x for x, _ in its], [y for _, y in its], "o-", color=color, label=f"mfree H100 P1, {name}")
a.set_xlabel("DoFs")
a.set_ylabel("seconds")
a.set_title("Neo-Hookean twist, uniform meshes of tetrahedra")
a.legend(fontsize=8)
b.set_xlabel("DoFs")
b.set_ylabel("CG iterations per Newton step")
b.set_ylim(bottom=0)
b.legend(fontsize=8)
fig.tight_layout()
fig.savefig(out, dpi=110)
