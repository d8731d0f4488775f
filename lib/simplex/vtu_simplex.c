/* vtu_simplex.c -- VTU output of simplex spaces (lib/vtu.c through the family's vtu_* entries): every cell
 * one VTK Lagrange triangle (type 69) or tetrahedron (71) of the space's degree p. Its points are the
 * lattice points i/p of the cell in VTK's order: the vertices; the points inside the edges (0,1), (1,2),
 * (2,0), then (0,3), (1,3), (2,3) for tetrahedra, each from its first vertex; on tetrahedra the points
 * inside the faces, faces (0,1,3), (2,3,1), (0,3,2), (0,2,1) in turn, each as a triangle of order p - 3
 * spanned from its first vertex towards its second and third; then the cell's interior as a cell of
 * order p - 3 (triangles) or p - 4 (tetrahedra), in the same order, recursively. (tests/vtu_check.py
 * reads it back with VTK's Lagrange cells.) The field at those points is the space's basis there. */
#include "mf_simplex_space.h"

#define VTK_LAGRANGE_TRIANGLE 69
#define VTK_LAGRANGE_TETRAHEDRON 71

typedef struct {
  double *phi; /* npoints x nnodes: the basis at the points */
  double *xi;  /* npoints x dim: the points' reference coordinates */
} sx_vtu;

/* the lattice points (a, b) of the triangle of order p, in VTK's order, into out; returns their count */
static int tri_lattice(int p, int (*out)[2])
{
  if (p < 0) return 0;
  if (p == 0) {
    out[0][0] = out[0][1] = 0;
    return 1;
  }
  int n = 0;
  const int v[3][2] = {{0, 0}, {p, 0}, {0, p}};
  for (int k = 0; k < 3; k++) out[n][0] = v[k][0], out[n][1] = v[k][1], n++;
  for (int e = 0; e < 3; e++)
    for (int i = 1; i < p; i++) {
      const int *a = v[e], *b = v[(e + 1) % 3];
      out[n][0] = (a[0] * (p - i) + b[0] * i) / p, out[n][1] = (a[1] * (p - i) + b[1] * i) / p, n++;
    }
  const int m = tri_lattice(p - 3, out + n);
  for (int k = n; k < n + m; k++) out[k][0]++, out[k][1]++;
  return n + m;
}

/* the lattice points (x, y, z) of the tetrahedron of order p, in VTK's order */
static int tet_lattice(int p, int (*out)[3])
{
  if (p < 0) return 0;
  if (p == 0) {
    out[0][0] = out[0][1] = out[0][2] = 0;
    return 1;
  }
  int n = 0;
  const int v[4][3] = {{0, 0, 0}, {p, 0, 0}, {0, p, 0}, {0, 0, p}};
  static const int edges[6][2] = {{0, 1}, {1, 2}, {2, 0}, {0, 3}, {1, 3}, {2, 3}};
  static const int faces[4][3] = {{0, 1, 3}, {2, 3, 1}, {0, 3, 2}, {0, 2, 1}};
  for (int k = 0; k < 4; k++, n++)
    for (int d = 0; d < 3; d++) out[n][d] = v[k][d];
  for (int e = 0; e < 6; e++)
    for (int i = 1; i < p; i++, n++)
      for (int d = 0; d < 3; d++) out[n][d] = (v[edges[e][0]][d] * (p - i) + v[edges[e][1]][d] * i) / p;
  int t[MF_SIMPLEX_MAX_NODES][2];
  const int nt = tri_lattice(p - 3, t);
  for (int f = 0; f < 4; f++)
    for (int k = 0; k < nt; k++, n++) {
      const int a = t[k][0] + 1, b = t[k][1] + 1;
      for (int d = 0; d < 3; d++)
        out[n][d] = (v[faces[f][0]][d] * (p - a - b) + v[faces[f][1]][d] * a + v[faces[f][2]][d] * b) / p;
    }
  const int m = tet_lattice(p - 4, out + n);
  for (int k = n; k < n + m; k++)
    for (int d = 0; d < 3; d++) out[k][d]++;
  return n + m;
}

int mf_simplex_vtu_begin(mf_vtu_cells *c)
{
  const mf_space s = c->space;
  const mf_simplex_space *ss = (const mf_simplex_space *)s->fdata;
  const mf_simplex_basis *b = &ss->basis;
  const int dim = s->dim, p = s->degree, N = b->nnodes;
  sx_vtu *w = NULL;
  MF_CALL(MF_CALLOC(s->ctx, 1, &w));
  c->work = w;
  c->npoints = N; /* as many lattice points as nodes */
  c->type = dim == 2 ? VTK_LAGRANGE_TRIANGLE : VTK_LAGRANGE_TETRAHEDRON;
  MF_CALL(MF_CALLOC(s->ctx, (size_t)N * N, &w->phi));
  MF_CALL(MF_CALLOC(s->ctx, (size_t)N * dim, &w->xi));
  int lat[MF_SIMPLEX_MAX_NODES][3];
  int n = 0;
  if (dim == 2) {
    int t[MF_SIMPLEX_MAX_NODES][2];
    n = tri_lattice(p, t);
    for (int k = 0; k < n; k++) lat[k][0] = t[k][0], lat[k][1] = t[k][1], lat[k][2] = 0;
  } else n = tet_lattice(p, lat);
  MF_CHECK(n == N, s->ctx, MF_ERR_ARGUMENT, "VTU output: %d lattice points for %d nodes (degree %d)", n, N, p);
  for (int k = 0; k < N; k++) {
    for (int d = 0; d < dim; d++) w->xi[k * dim + d] = (double)lat[k][d] / p;
    mf_simplex_basis_eval(b, &w->xi[k * dim], &w->phi[(size_t)k * N], NULL);
  }
  return 0;
}

void mf_simplex_vtu_values(mf_vtu_cells *c, int e, double *vals)
{
  const mf_space s = c->space;
  const sx_vtu *w = (const sx_vtu *)c->work;
  const int N = c->npoints, *cd = s->cell_nodes + (size_t)e * N;
  for (int k = 0; k < N; k++) {
    double v = 0.0;
    for (int i = 0; i < N; i++) v += w->phi[(size_t)k * N + i] * c->u[cd[i]];
    vals[k] = v;
  }
}

void mf_simplex_vtu_points(mf_vtu_cells *c, int e, double *xyz)
{
  const mf_space s = c->space;
  const sx_vtu *w = (const sx_vtu *)c->work;
  const mf_simplex_mesh *m = mf_simplex_space_mesh(s);
  const int dim = s->dim, *v = m->cells + (size_t)e * (dim + 1);
  for (int k = 0; k < c->npoints; k++)
    for (int d = 0; d < 3; d++) {
      double x = m->coords[3 * (size_t)v[0] + d];
      for (int l = 0; l < dim; l++) x += (m->coords[3 * (size_t)v[l + 1] + d] - m->coords[3 * (size_t)v[0] + d]) * w->xi[k * dim + l];
      xyz[3 * k + d] = d < dim ? x : 0.0;
    }
}

void mf_simplex_vtu_cell_data(const mf_vtu_cells *c, int e, int32_t *level, int32_t *mask)
{
  (void)c, (void)e;
  *level = 0; /* uniform meshes: no refinement levels, no hanging nodes */
  *mask = 0;
}

void mf_simplex_vtu_end(mf_vtu_cells *c)
{
  sx_vtu *w = (sx_vtu *)c->work;
  if (!w) return;
  free(w->phi);
  free(w->xi);
  free(w);
  c->work = NULL;
}
