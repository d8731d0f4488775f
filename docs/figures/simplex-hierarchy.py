#!/usr/bin/env python3
"""Draws docs/figures/simplex-hierarchy.png: the nested meshes of multigrid on triangles as the library makes
them on 3 ranks (the level-1 square refined 0, 1, 2 times by mf_mesh_refine), each cell coloured by its rank:
the coarse cells are partitioned once and every child stays on its parent's rank.
  python3 docs/figures/simplex-hierarchy.py BUILD/apps/mfree-poisson [MPIEXEC]
runs `mfree-poisson --mesh square-tris --refine L --pc mg --vtu` for L = 1, 2, 3 on 3 ranks and reads the pieces
back with VTK (python3-vtk9)."""
import os
import subprocess
import sys
import tempfile

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
import vtk

app = sys.argv[1]
mpiexec = sys.argv[2] if len(sys.argv) > 2 else "mpiexec"
env = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
colors = ["tab:blue", "tab:orange", "tab:green"]
fig, axes = plt.subplots(1, 3, figsize=(11, 4.3))
with tempfile.TemporaryDirectory() as tmp:
    for ax, level in zip(axes, (1, 2, 3)):
        prefix = os.path.join(tmp, f"level{level}")
        subprocess.run([mpiexec, "--oversubscribe", "-n", "3", app, "--mesh", "square-tris", "--refine", str(level),
                        "--degree", "1", "--pc", "mg", "--backend", "cpu", "--vtu", prefix], check=True, env=env,
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        ncells = 0
        for rank in range(3):
            r = vtk.vtkXMLUnstructuredGridReader()
            r.SetFileName(f"{prefix}_{rank}.vtu")
            r.Update()
            g = r.GetOutput()
            for c in range(g.GetNumberOfCells()):
                ids = g.GetCell(c).GetPointIds()
                xy = [g.GetPoint(ids.GetId(k))[:2] for k in range(3)]
                ax.fill([p[0] for p in xy], [p[1] for p in xy], color=colors[rank], alpha=0.55, lw=0)
                ax.plot([p[0] for p in xy + xy[:1]], [p[1] for p in xy + xy[:1]], color="k", lw=0.6)
                ncells += 1
        ax.set_title(f"level-1 square refined {level - 1} times: {ncells} cells", fontsize=10)
        ax.set_aspect("equal")
        ax.axis("off")
fig.legend([plt.Rectangle((0, 0), 1, 1, color=c, alpha=0.55) for c in colors], ["rank 0", "rank 1", "rank 2"],
           loc="lower center", ncol=3, frameon=False)
fig.tight_layout(rect=(0, 0.07, 1, 0.97))
fig.savefig(__file__.replace(".py", ".png"), dpi=100)
