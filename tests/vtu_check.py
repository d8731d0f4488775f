#!/usr/bin/python3
"""Reads mfree's ParaView output back with VTK's own XML reader and checks what ParaView would show.

  vtu_check.py --t14 T14_VTU --app MFREE_POISSON --workdir DIR [--mpiexec "mpiexec -n 2"] [--np N]

For a 2D and a 3D adaptive mesh (hanging nodes) and several degrees, t14_vtu writes the interpolant
of a polynomial of degree p per variable (exact in Q_p on the cube's affine cells). Checked: the
pieces, the point and cell counts, the cell types, the per-cell arrays, and the field at points
inside every cell: VTK evaluates the cell's geometry and values with its own Lagrange basis and node
order; both must give the polynomial at the point (to 1e-10): a wrong node order or the Gauss-Lobatto
positions taken for VTK's equispaced ones would not. Then VTK's probe filter (what ParaView's probe
does) at random points, and mfree-poisson --vtu against the manufactured solution.
Exit 77 (skipped) when VTK's Python module is not installed (Debian: python3-vtk9)."""
import argparse
import os
import random
import shlex
import subprocess
import sys

try:
    from vtkmodules.vtkCommonCore import reference, vtkPoints
    from vtkmodules.vtkCommonDataModel import vtkCellLocator, vtkCellLocatorStrategy, vtkPolyData
    from vtkmodules.vtkFiltersCore import vtkProbeFilter
    from vtkmodules.vtkIOXML import vtkXMLPUnstructuredGridReader
except ImportError as e:
    print(f"SKIP: VTK's Python module is not importable ({e}); install python3-vtk9")
    sys.exit(77)

VTK_LAGRANGE_TRIANGLE, VTK_LAGRANGE_QUADRILATERAL, VTK_LAGRANGE_TETRAHEDRON, VTK_LAGRANGE_HEXAHEDRON = 69, 70, 71, 72
failures = []


def check(cond, msg):
    if not cond:
        failures.append(msg)
        print("FAIL", msg, file=sys.stderr)


def poly(x, p):
    """the polynomial of tests/t14_vtu.c (t_poly)"""
    X, Y, Z = x
    return 0.5 + X**p - 2.0 * X * Y**p + 3.0 * Y ** (p - 1) * Z**p + (X * Y * Z) ** p


def run(cmd):
    out = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    if out.returncode != 0:
        print(f"FAIL: {' '.join(cmd)} exited {out.returncode}\n{out.stdout}\n{out.stderr}", file=sys.stderr)
        sys.exit(1)
    return out.stdout


def read(pvtu):
    r = vtkXMLPUnstructuredGridReader()
    r.SetFileName(pvtu)
    r.Update()
    return r.GetOutput()


def cell_values(grid, cell_id, pcoords, field):
    """physical point and field value of a cell at parametric pcoords, through VTK's Lagrange cell"""
    cell = grid.GetCell(cell_id)
    n = cell.GetNumberOfPoints()
    weights = [0.0] * n
    x = [0.0, 0.0, 0.0]
    cell.EvaluateLocation(reference(0), pcoords, x, weights)
    return x, sum(w * field.GetValue(cell.GetPointId(i)) for i, w in enumerate(weights))


def check_written(args, dim, p, adapt):
    prefix = os.path.join(args.workdir, f"vtu_{dim}d_q{p}_a{adapt}_np{args.np}")
    out = run(args.launch + [args.t14, "cpu", "write", prefix, str(dim), str(p), str(adapt)])
    ncells = int(out.split("cells")[1].split()[0])
    what = f"{dim}D Q{p} adapt {adapt} on {args.np} rank(s)"
    for r in range(args.np):
        check(os.path.isfile(f"{prefix}_{r}.vtu"), f"{what}: piece {prefix}_{r}.vtu missing")
    g = read(prefix + ".pvtu")
    npc = (p + 1) ** dim
    check(g.GetNumberOfCells() == ncells, f"{what}: {g.GetNumberOfCells()} cells read, {ncells} written")
    check(g.GetNumberOfPoints() == ncells * npc, f"{what}: {g.GetNumberOfPoints()} points, expected {ncells * npc}")
    want = VTK_LAGRANGE_HEXAHEDRON if dim == 3 else VTK_LAGRANGE_QUADRILATERAL
    types = {g.GetCellType(c) for c in range(g.GetNumberOfCells())}
    check(types == {want}, f"{what}: cell types {types}, expected {{{want}}}")
    cd = g.GetCellData()
    arrays = {}
    for name in ("rank", "level", "hanging_mask"):
        a = cd.GetArray(name)
        check(a is not None and a.GetNumberOfTuples() == ncells, f"{what}: cell array '{name}' missing or short")
        arrays[name] = [int(a.GetValue(c)) for c in range(ncells)] if a is not None else []
    check(set(arrays["rank"]) == set(range(args.np)), f"{what}: ranks {set(arrays['rank'])}")
    base = 2
    check(set(arrays["level"]) == ({base, base + 1} if adapt else {base}), f"{what}: levels {set(arrays['level'])}")
    masks = arrays["hanging_mask"]
    check(all(0 <= m < (1 << (9 if dim == 3 else 4)) for m in masks), f"{what}: hanging_mask out of range")
    nhanging = sum(1 for m in masks if m)
    check((nhanging > 0) == bool(adapt), f"{what}: {nhanging} cells with hanging nodes")
    field = g.GetPointData().GetArray("f")
    check(field is not None and field.GetNumberOfTuples() == ncells * npc, f"{what}: point array 'f' missing")
    if field is None:
        return
    # every cell at a few parametric points (not nodes): geometry and field by VTK's Lagrange basis
    rnd = random.Random(dim * 100 + p * 10 + adapt)
    worst = 0.0
    for c in range(ncells):
        for _ in range(3):
            pc = [rnd.uniform(0.05, 0.95) for _ in range(3)]
            if dim == 2:
                pc[2] = 0.0
            x, val = cell_values(g, c, pc, field)
            worst = max(worst, abs(val - poly(x, p)))
            check(all(-1e-12 <= x[k] <= 1 + 1e-12 for k in range(dim)), f"{what}: cell {c} maps outside the cube: {x}")
    check(worst < 1e-10, f"{what}: field at points inside the cells differs from the polynomial by {worst:.3e}")
    # ParaView's probe: cell location by VTK, then interpolation. The cells share no points, so the
    # cells are found by a cell locator (the default strategy walks from the closest point to its
    # cells); VTK inverts the cell map to about 1e-7.
    pts = vtkPoints()
    probes = [[rnd.uniform(0.01, 0.99) for _ in range(dim)] + [0.0] * (3 - dim) for _ in range(40)]
    for x in probes:
        pts.InsertNextPoint(x)
    pd = vtkPolyData()
    pd.SetPoints(pts)
    probe = vtkProbeFilter()
    probe.SetInputData(pd)
    probe.SetSourceData(g)
    strategy = vtkCellLocatorStrategy()
    strategy.SetCellLocator(vtkCellLocator())
    probe.SetFindCellStrategy(strategy)
    probe.Update()
    res = probe.GetOutput()
    valid = res.GetPointData().GetArray("vtkValidPointMask")
    vals = res.GetPointData().GetArray("f")
    found = sum(int(valid.GetTuple1(i)) for i in range(len(probes)))
    check(found == len(probes), f"{what}: the probe found {found} of {len(probes)} points")
    perr = max((abs(vals.GetValue(i) - poly(x, p)) for i, x in enumerate(probes) if valid.GetTuple1(i)), default=0.0)
    check(perr < 1e-5, f"{what}: probed values differ from the polynomial by {perr:.3e}")
    print(f"{what}: {ncells} cells, {nhanging} with hanging nodes, field error {worst:.1e} (cells), {perr:.1e} (probe)")


def spoly(x, p):
    """the polynomial of total degree p of tests/t14_vtu.c (t_spoly)"""
    X, Y, Z = x
    return 0.5 + (0.3 + X + 2.0 * Y - Z) ** p - 2.0 * (X - Y + 0.5 * Z) ** p


def check_simplex(args, dim, p):
    """P_p on the built-in triangles or tetrahedra (on several ranks one piece per rank, the cells split
    between them): VTK's Lagrange simplices of degree p, their node order checked by VTK evaluating geometry
    and field inside every cell"""
    prefix = os.path.join(args.workdir, f"vtu_simplex_{dim}d_p{p}_np{args.np}")
    out = run(args.launch + [args.t14, "cpu", "write-simplex", prefix, str(dim), str(p)])
    ncells = int(out.split("cells")[1].split()[0])
    what = f"{dim}D P{p} simplices"
    g = read(prefix + ".pvtu")
    npc = (p + 1) * (p + 2) // 2 if dim == 2 else (p + 1) * (p + 2) * (p + 3) // 6
    check(g.GetNumberOfCells() == ncells, f"{what}: {g.GetNumberOfCells()} cells read, {ncells} written")
    check(g.GetNumberOfPoints() == ncells * npc, f"{what}: {g.GetNumberOfPoints()} points, expected {ncells * npc}")
    want = VTK_LAGRANGE_TETRAHEDRON if dim == 3 else VTK_LAGRANGE_TRIANGLE
    types = {g.GetCellType(c) for c in range(g.GetNumberOfCells())}
    check(types == {want}, f"{what}: cell types {types}, expected {{{want}}}")
    field = g.GetPointData().GetArray("f")
    check(field is not None and field.GetNumberOfTuples() == ncells * npc, f"{what}: point array 'f' missing")
    if field is None:
        return
    rnd = random.Random(dim * 10 + p)
    worst, volume = 0.0, 0.0
    for c in range(ncells):
        cell = g.GetCell(c)
        volume += abs(cell.ComputeVolume()) if dim == 3 and hasattr(cell, "ComputeVolume") else 0.0
        for _ in range(3):
            b = [rnd.uniform(0.02, 1.0) for _ in range(dim + 1)]
            s = sum(b)
            pc = [b[k] / s for k in range(dim)] + [0.0] * (3 - dim)  # inside the reference simplex
            x, val = cell_values(g, c, pc, field)
            worst = max(worst, abs(val - spoly(x, p)))
            check(all(-1e-12 <= x[k] <= 1 + 1e-12 for k in range(dim)), f"{what}: cell {c} maps outside the box: {x}")
    check(worst < 1e-10, f"{what}: field at points inside the cells differs from the polynomial by {worst:.3e}")
    print(f"{what}: {ncells} cells, field error {worst:.1e} (cells)")


def check_app(args):
    """mfree-poisson --vtu: the solution u on a curved 2D mesh against the manufactured one"""
    import math

    prefix = os.path.join(args.workdir, f"vtu_app_np{args.np}")
    run(args.launch + [args.app, "--dim", "2", "--degree", "3", "--mesh", "ball", "--refine", "3",
                       "--adapt", "shells", "--levels", "1", "--backend", "cpu", "--vtu", prefix])
    g = read(prefix + ".pvtu")
    u = g.GetPointData().GetArray("u")
    check(u is not None, "mfree-poisson --vtu: no point array 'u'")
    if u is None:
        return
    rnd = random.Random(7)
    worst = 0.0
    for c in range(g.GetNumberOfCells()):
        x, val = cell_values(g, c, [rnd.uniform(0.1, 0.9), rnd.uniform(0.1, 0.9), 0.0], u)
        exact = math.sin(math.pi * x[0] + 0.3) * math.sin(math.pi * x[1] + 0.5)
        worst = max(worst, abs(val - exact))
        check(x[0] ** 2 + x[1] ** 2 <= 1 + 1e-9, f"mfree-poisson --vtu: point {x} outside the disk")
    check(worst < 1e-3, f"mfree-poisson --vtu: u differs from the manufactured solution by {worst:.3e}")
    print(f"mfree-poisson --vtu: {g.GetNumberOfCells()} cells, max error {worst:.1e}")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--t14", required=True)
    ap.add_argument("--app", required=True)
    ap.add_argument("--workdir", required=True)
    ap.add_argument("--mpiexec", default="")
    ap.add_argument("--np", type=int, default=1)
    args = ap.parse_args()
    args.launch = shlex.split(args.mpiexec) + [str(args.np)] if args.np > 1 else []
    os.makedirs(args.workdir, exist_ok=True)
    for dim, p, adapt in [(2, 1, 0), (2, 3, 1), (2, 4, 1), (3, 2, 0), (3, 3, 1), (3, 4, 1)]:
        check_written(args, dim, p, adapt)
    for dim in (2, 3):
        for p in range(1, 7 if args.np == 1 else 4):
            check_simplex(args, dim, p)
    check_app(args)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
