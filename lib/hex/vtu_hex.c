/* vtu_hex.c -- the hex family's cells in VTU output (lib/vtu.c, lib/family.h).
 *
 * Every cell becomes one VTK Lagrange cell of the space's degree p (VTK_LAGRANGE_QUADRILATERAL = 70,
 * VTK_LAGRANGE_HEXAHEDRON = 72) with its own (p+1)^dim points: points shared by cells are written
 * once per cell (simple, and each piece stands alone). VTK interpolates a Lagrange cell on equispaced
 * parametric points, mfree on Gauss-Lobatto points: both are bases of the same Q_p, so the geometry
 * and the field are evaluated at the equispaced points of each cell and VTK's cell is then exactly
 * the mfree one. Hanging-node constraints are applied first (as the kernels do), so the field and
 * the geometry are continuous across hanging faces.
 *
 * VTK's node order within a cell (VTK >= 9, file version 2.2), i, j, k = 0..p the lexicographic
 * indices along x, y, z; every edge and face runs along increasing i, j, k:
 *
 *     2D:   3 --e2-- 2      corners 0..3, then the p-1 interior nodes of edges e0 (j = 0),
 *           |        |      e1 (i = p), e2 (j = p), e3 (i = 0), then the (p-1)^2 interior
 *          e3  face  e1     nodes, i fastest
 *           |        |
 *           0 --e0-- 1
 *     3D:   corners 0..3 as above at k = 0, 4..7 at k = p; edges e0..e3 at k = 0 and e4..e7 at
 *           k = p as in 2D, then e8..e11 along k at (i, j) = (0,0), (p,0), (p,p), (0,p); faces
 *           i = 0, i = p (j fastest, then k), j = 0, j = p (i, then k), k = 0, k = p (i, then j);
 *           then the interior, i fastest.
 */
#include "mf_hex.h"
#include "hex/mf_hex_op.h"

#define VTK_LAGRANGE_QUADRILATERAL 70
#define VTK_LAGRANGE_HEXAHEDRON 72

/* VTK's index of node ijk of a Lagrange cell of degree p (see the file comment). */
static int vtk_node_index(int dim, int p, const int *ijk)
{
  static const int corner_of[8] = {0, 1, 3, 2, 4, 5, 7, 6}; /* lexicographic corner bits -> VTK corner */
  const int m = p - 1; /* interior nodes per edge */
  int on[3] = {0, 0, 0}, nbdy = 0;
  for (int d = 0; d < dim; d++) nbdy += on[d] = (ijk[d] == 0 || ijk[d] == p);
  if (nbdy == dim) {
    int bits = 0;
    for (int d = 0; d < dim; d++) bits |= (ijk[d] == p) << d;
    return corner_of[bits];
  }
  int offset = 1 << dim;
  if (nbdy == dim - 1) { /* the interior of an edge along the one direction d not on the boundary */
    int d = 0;
    while (on[d]) d++;
    const int top = dim == 3 && ijk[2] == p ? 4 : 0; /* edges at k = p follow those at k = 0 */
    int edge;
    if (d == 0) edge = (ijk[1] == p ? 2 : 0) + top;
    else if (d == 1) edge = (ijk[0] == p ? 1 : 3) + top;
    else edge = 8 + (ijk[0] == p ? (ijk[1] == p ? 2 : 1) : (ijk[1] == p ? 3 : 0));
    return offset + edge * m + ijk[d] - 1;
  }
  offset += (dim == 3 ? 12 : 4) * m;
  if (dim == 3 && nbdy == 1) { /* the interior of the face normal to direction n */
    int n = 0;
    while (!on[n]) n++;
    const int a = n == 0 ? 1 : 0, b = n == 2 ? 1 : 2; /* its two directions, a fastest */
    const int face = 2 * n + (ijk[n] == p);
    return offset + face * m * m + (ijk[a] - 1) + m * (ijk[b] - 1);
  }
  if (dim == 3) offset += 6 * m * m;
  return offset + (ijk[0] - 1) + m * ((ijk[1] - 1) + (dim == 3 ? m * (ijk[2] - 1) : 0));
}

/* The writer's work: the 1D evaluation of the Gauss-Lobatto basis at the equispaced points, the
 * lexicographic -> VTK permutation, scratch, and the cell's geometry nodes. */
typedef struct {
  double E[MF_MAX_N1 * MF_MAX_N1]; /* E[i*n1 + j] = l_j(i/p), l_j the Gauss-Lobatto Lagrange basis */
  int *perm;                       /* npc: VTK index of lexicographic node l */
  double *a, *b, *c;               /* npc scratch each */
  double *X;                       /* npc x dim: the cell's geometry nodes */
} hex_vtu;

/* Nodal values at the Gauss-Lobatto nodes of a cell (in) -> values at the equispaced points in VTK
 * order (out, stride apart). */
static void to_vtk_points(const mf_space s, hex_vtu *w, const double *in, double *out, int stride)
{
  const int n[3] = {s->n1, s->n1, s->n1};
  double *x = w->b, *y = w->c;
  memcpy(x, in, sizeof(double) * s->npc);
  for (int d = 0; d < s->dim; d++) {
    mf_tensor_apply(s->dim, n, d, w->E, s->n1, 0, x, y, 0);
    double *t = x;
    x = y, y = t;
  }
  for (int l = 0; l < s->npc; l++) out[(size_t)w->perm[l] * stride] = x[l];
}

int mf_hex_vtu_begin(mf_vtu_cells *c)
{
  const mf_space s = c->space;
  const int p = s->degree, n1 = s->n1, npc = s->npc;
  hex_vtu *w = NULL;
  MF_CALL(MF_CALLOC(s->ctx, 1, &w));
  c->work = w;
  c->npoints = npc;
  c->type = s->dim == 3 ? VTK_LAGRANGE_HEXAHEDRON : VTK_LAGRANGE_QUADRILATERAL;
  MF_CALL(MF_CALLOC(s->ctx, npc, &w->perm));
  MF_CALL(MF_CALLOC(s->ctx, 3 * (size_t)npc, &w->a));
  MF_CALL(MF_CALLOC(s->ctx, (size_t)npc * s->dim, &w->X));
  w->b = w->a + npc;
  w->c = w->b + npc;
  double equi[MF_MAX_N1];
  for (int i = 0; i < n1; i++) equi[i] = (double)i / p;
  mf_lagrange_eval(n1, s->gll, n1, equi, w->E, NULL);
  for (int l = 0; l < npc; l++) {
    const int ijk[3] = {l % n1, (l / n1) % n1, l / (n1 * n1)};
    w->perm[l] = vtk_node_index(s->dim, p, ijk);
  }
  return 0;
}

/* the field: the cell's gathered values, constrained, at the equispaced points */
void mf_hex_vtu_values(mf_vtu_cells *c, int e, double *out)
{
  const mf_space s = c->space;
  hex_vtu *w = (hex_vtu *)c->work;
  const int *nodes = &s->cell_nodes[(size_t)e * s->npc];
  double *vals = w->a;
  for (int l = 0; l < s->npc; l++) vals[l] = c->u[nodes[l]];
  mf_hanging_apply(s->dim, s->n1, s->face_code[e], s->hanging_P, vals, 0);
  to_vtk_points(s, w, vals, out, 1);
}

/* the points: the cell's geometry nodes (constrained), at the equispaced points; z = 0 in 2D */
void mf_hex_vtu_points(mf_vtu_cells *c, int e, double *pts)
{
  const mf_space s = c->space;
  hex_vtu *w = (hex_vtu *)c->work;
  const int npc = s->npc, dim = s->dim;
  double *vals = w->a;
  mf_space_cell_coords(s, e, w->X);
  memset(pts, 0, sizeof(double) * 3 * npc);
  for (int d = 0; d < dim; d++) {
    for (int l = 0; l < npc; l++) vals[l] = w->X[l * dim + d];
    to_vtk_points(s, w, vals, pts + d, 3);
  }
}

void mf_hex_vtu_cell_data(const mf_vtu_cells *c, int e, int32_t *level, int32_t *mask)
{
  *level = c->space->cell_level[e];
  *mask = c->space->face_code[e];
}

void mf_hex_vtu_end(mf_vtu_cells *c)
{
  hex_vtu *w = (hex_vtu *)c->work;
  if (!w) return;
  free(w->perm);
  free(w->a);
  free(w->X);
  free(w);
  c->work = NULL;
}
