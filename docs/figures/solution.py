#!/usr/bin/python3
"""Draws docs/figures/solution.png: the solution of the demo problem (mfree-poisson's default: Q3 on
the ball, 3 refinements) written with --vtu and read by VTK's own reader, an octant cut away, cell
edges drawn as the curves they are. Rendered off screen.

  xvfb-run -a /usr/bin/python3 docs/figures/solution.py [BUILD_DIR] [-- mfree-poisson options]

Needs the Debian packages python3-vtk9 and (without a display) xvfb: VTK's Debian build renders
through X, so the script runs inside a virtual X server."""
import os
import subprocess
import sys
import tempfile

from vtkmodules.vtkCommonCore import reference, vtkPoints
from vtkmodules.vtkCommonDataModel import vtkBox, vtkCellArray, vtkPolyData, vtkPolyLine
from vtkmodules.vtkFiltersExtraction import vtkExtractGeometry
from vtkmodules.vtkFiltersGeometry import vtkDataSetSurfaceFilter
from vtkmodules.vtkIOImage import vtkPNGWriter
from vtkmodules.vtkIOXML import vtkXMLPUnstructuredGridReader
from vtkmodules.vtkRenderingAnnotation import vtkScalarBarActor
from vtkmodules.vtkRenderingCore import (vtkActor, vtkColorTransferFunction, vtkPolyDataMapper, vtkRenderer,
                                         vtkRenderWindow, vtkWindowToImageFilter)
import vtkmodules.vtkRenderingOpenGL2  # noqa: F401 (the OpenGL render window)

here = os.path.dirname(os.path.abspath(__file__))
argv = sys.argv[1:]
extra = argv[argv.index("--") + 1:] if "--" in argv else []
build = argv[0] if argv and argv[0] != "--" else os.path.join(here, "..", "..", "build")
tmp = tempfile.mkdtemp(prefix="mfree-solution-")
prefix = os.path.join(tmp, "sol")
subprocess.run([os.path.join(build, "apps", "mfree-poisson"), "--backend", "cpu", "--vtu", prefix] + extra, check=True,
               stdout=subprocess.DEVNULL)

reader = vtkXMLPUnstructuredGridReader()
reader.SetFileName(prefix + ".pvtu")
reader.Update()
grid = reader.GetOutput()
lo, hi = grid.GetPointData().GetArray("u").GetRange()

# cut away the octant facing the camera: whole cells, so the cut shows the cells as they are
box = vtkBox()
box.SetBounds(0.0, 2.0, -2.0, 0.0, 0.0, 2.0)
cut = vtkExtractGeometry()
cut.SetInputData(grid)
cut.SetImplicitFunction(box)
cut.ExtractInsideOff()
cut.ExtractBoundaryCellsOff()
cut.Update()
cells = cut.GetOutput()

# the surface, each Lagrange face subdivided so that curved cells and the Q3 field show smoothly
surface = vtkDataSetSurfaceFilter()
surface.SetInputData(cells)
surface.SetNonlinearSubdivisionLevel(3)
lut = vtkColorTransferFunction()  # a viridis-like ramp: dark blue, teal, green, yellow
for t, rgb in [(0.0, (0.267, 0.005, 0.329)), (0.25, (0.229, 0.322, 0.546)), (0.5, (0.128, 0.567, 0.551)),
               (0.75, (0.369, 0.789, 0.383)), (1.0, (0.993, 0.906, 0.144))]:
    lut.AddRGBPoint(lo + t * (hi - lo), *rgb)
mapper = vtkPolyDataMapper()
mapper.SetInputConnection(surface.GetOutputPort())
mapper.SetScalarModeToUsePointFieldData()
mapper.SelectColorArray("u")
mapper.SetLookupTable(lut)
mapper.SetScalarRange(lo, hi)
body = vtkActor()
body.SetMapper(mapper)
body.GetProperty().SetAmbient(0.35)
body.GetProperty().SetDiffuse(0.75)

# cell edges: every edge of every cell left, sampled along VTK's own Lagrange curve, moved a little
# towards the camera so that the faces they lie on do not hide them
eye = (2.6, -3.4, 2.4)
pts, lines = vtkPoints(), vtkCellArray()
nsamp = 8
for c in range(cells.GetNumberOfCells()):
    cell = cells.GetCell(c)
    for e in range(cell.GetNumberOfEdges()):
        edge = cell.GetEdge(e)
        w = [0.0] * edge.GetNumberOfPoints()
        line = vtkPolyLine()
        line.GetPointIds().SetNumberOfIds(nsamp + 1)
        for k in range(nsamp + 1):
            x = [0.0, 0.0, 0.0]
            edge.EvaluateLocation(reference(0), [k / nsamp, 0.0, 0.0], x, w)
            d = [eye[i] - x[i] for i in range(3)]
            n = sum(v * v for v in d) ** 0.5
            x = [x[i] + 0.004 * d[i] / n for i in range(3)]
            line.GetPointIds().SetId(k, pts.InsertNextPoint(x))
        lines.InsertNextCell(line)
edges = vtkPolyData()
edges.SetPoints(pts)
edges.SetLines(lines)
emapper = vtkPolyDataMapper()
emapper.SetInputData(edges)
eactor = vtkActor()
eactor.SetMapper(emapper)
eactor.GetProperty().SetColor(0.1, 0.1, 0.1)
eactor.GetProperty().SetLineWidth(1.0)
eactor.GetProperty().SetOpacity(0.55)

bar = vtkScalarBarActor()
bar.SetLookupTable(lut)
bar.SetTitle("u")
bar.SetNumberOfLabels(5)
bar.SetLabelFormat("%.1f")
bar.SetUnconstrainedFontSize(True)
bar.SetWidth(0.065)
bar.SetHeight(0.6)
bar.SetPosition(0.89, 0.2)
for t, size in ((bar.GetTitleTextProperty(), 26), (bar.GetLabelTextProperty(), 18)):
    t.SetColor(0.1, 0.1, 0.1)
    t.SetFontSize(size)
    t.ItalicOff()
    t.ShadowOff()
    t.BoldOff()

ren = vtkRenderer()
ren.SetBackground(1.0, 1.0, 1.0)
ren.AddActor(body)
ren.AddActor(eactor)
ren.AddActor2D(bar)
cam = ren.GetActiveCamera()
cam.SetFocalPoint(0.0, 0.0, 0.0)
cam.SetPosition(*eye)
cam.SetViewUp(0.0, 0.0, 1.0)
ren.ResetCamera()
cam.Zoom(1.38)
win = vtkRenderWindow()
win.SetOffScreenRendering(1)
win.SetMultiSamples(8)
win.AddRenderer(ren)
win.SetSize(940, 760)
win.Render()
shot = vtkWindowToImageFilter()
shot.SetInput(win)
shot.Update()
png = vtkPNGWriter()
png.SetFileName(os.path.join(here, "solution.png"))
png.SetInputConnection(shot.GetOutputPort())
png.Write()
for f in os.listdir(tmp):
    os.remove(os.path.join(tmp, f))
os.rmdir(tmp)
print("wrote", os.path.join(here, "solution.png"), f"({grid.GetNumberOfCells()} cells, u in [{lo:.3f}, {hi:.3f}])")
