/* refine.c -- uniform refinement of a simplex mesh (mf_mesh_refine): every edge split at its midpoint,
 * each triangle into 4 (the triangles at its corners and the middle one), each tetrahedron into 8 (the
 * tetrahedra at its corners and the inner octahedron split along the shortest of its three diagonals, the
 * usual choice for shape quality; tests/t41_refine.c bounds the angles over four levels). Vertices: the
 * coarse mesh's and one per edge, numbered in the order the fine cells first use them (a cell's vertices,
 * and so its DoFs, near each other in memory: on an H100 the P2 product on cube-tets refined 6 times took
 * 1.86 ms so against 2.09 ms with the coarse vertices first and the edges' after them). Cells: child k of
 * coarse cell e is fine cell 2^dim e + k (the corners' children k = 0..dim first, child k at vertex k, which
 * is the parent's vertex k), each positively oriented. Boundary facets: split likewise, each child with
 * its parent's tag. */
#include "mf_simplex_space.h"

#include <limits.h>
#include <math.h>

/* the edges of a cell as local vertex pairs (third entry unused) */
static const int tri_edges[3][3] = {{0, 1, 0}, {0, 2, 0}, {1, 2, 0}};
static const int tet_edges[6][3] = {{0, 1, 0}, {0, 2, 0}, {0, 3, 0}, {1, 2, 0}, {1, 3, 0}, {2, 3, 0}};

/* the fine vertex at the midpoint of the edge (a, b) */
static int midpoint(const mf_simplex_entities *E, int nv, int a, int b)
{
  const int v[2] = {a, b};
  return nv + (int)mf_simplex_entities_find(E, 2, v, (uint64_t)nv);
}

static double volume(const double *coords, const int *t)
{
  double d[3][3];
  for (int a = 0; a < 3; a++)
    for (int k = 0; k < 3; k++) d[a][k] = coords[3 * (size_t)t[a + 1] + k] - coords[3 * (size_t)t[0] + k];
  return d[0][0] * (d[1][1] * d[2][2] - d[1][2] * d[2][1]) - d[0][1] * (d[1][0] * d[2][2] - d[1][2] * d[2][0]) +
         d[0][2] * (d[1][0] * d[2][1] - d[1][1] * d[2][0]);
}

static double dist2(const double *coords, int a, int b)
{
  double s = 0.0;
  for (int k = 0; k < 3; k++) {
    const double d = coords[3 * (size_t)a + k] - coords[3 * (size_t)b + k];
    s += d * d;
  }
  return s;
}

/* the 4 or 8 children of cell e into out ((dim + 1) vertices each) */
static void children(const mf_simplex_mesh *m, const mf_simplex_entities *E, const double *fcoords, int e, int *out)
{
  const int dim = m->dim, nv = m->nv, *v = m->cells + (size_t)e * (dim + 1);
  int mid[4][4];
  for (int a = 0; a <= dim; a++)
    for (int b = 0; b <= dim; b++) mid[a][b] = a == b ? v[a] : midpoint(E, nv, v[a], v[b]);
  int n = 0;
  for (int k = 0; k <= dim; k++) /* at corner k: the cell shrunk by 1/2 about vertex k (its orientation) */
    for (int a = 0; a <= dim; a++) out[n++] = mid[k][a];
  if (dim == 2) {
    out[n++] = mid[0][1], out[n++] = mid[1][2], out[n++] = mid[0][2];
    return;
  }
  /* the octahedron of the six midpoints: a diagonal (A, B) and the cycle of the four others around it */
  static const int diag[3][2][2] = {{{0, 1}, {2, 3}}, {{0, 2}, {1, 3}}, {{0, 3}, {1, 2}}};
  static const int ring[3][4][2] = {{{0, 2}, {0, 3}, {1, 3}, {1, 2}},
                                    {{0, 1}, {0, 3}, {2, 3}, {1, 2}},
                                    {{0, 1}, {0, 2}, {2, 3}, {1, 3}}};
  int best = 0;
  double len = INFINITY;
  for (int d = 0; d < 3; d++) {
    const double l = dist2(fcoords, mid[diag[d][0][0]][diag[d][0][1]], mid[diag[d][1][0]][diag[d][1][1]]);
    if (l < len) len = l, best = d;
  }
  const int A = mid[diag[best][0][0]][diag[best][0][1]], B = mid[diag[best][1][0]][diag[best][1][1]];
  for (int i = 0; i < 4; i++) {
    int *t = out + n;
    t[0] = A, t[1] = B;
    t[2] = mid[ring[best][i][0]][ring[best][i][1]];
    t[3] = mid[ring[best][(i + 1) % 4][0]][ring[best][(i + 1) % 4][1]];
    if (volume(fcoords, t) < 0.0) {
      const int s = t[2];
      t[2] = t[3], t[3] = s;
    }
    n += 4;
  }
}

/* The vertices of f renumbered in the order the cells first use them (those of no cell last, in their
 * order): cells in the refinement's order (children of a cell together) make a cell's vertices, and so
 * its DoFs, near each other in memory. *perm (old -> new) for the caller, who frees it. */
static int renumber(mf_context ctx, mf_simplex_mesh *f, int **perm)
{
  const int nvc = f->dim + 1;
  int *p = NULL, *first = NULL;
  double *xc = NULL;
  int ierr = MF_CALLOC(ctx, (size_t)f->nv + 1, &p);
  if (!ierr) ierr = MF_CALLOC(ctx, (size_t)f->nv * 3 + 1, &xc);
  if (!ierr) ierr = MF_CALLOC(ctx, (size_t)f->nv + 1, &first);
  if (ierr) {
    free(p);
    free(xc);
    free(first);
    return ierr;
  }
  /* the same numbers as one pass over the cells' entries that numbers each vertex at its first use, made by
   * threads: each vertex's first entry (an atomic maximum of minus the entry: first[]), then the first
   * entries counted in fixed chunks, the chunks' counts summed in order and each chunk numbering its own */
  const int n = f->ncells * nvc; /* below 2^31: checked by the caller */
  enum { CHUNKS = 256 };
  int base[CHUNKS + 1] = {0};
#pragma omp parallel for schedule(static)
  for (int v = 0; v < f->nv; v++) first[v] = INT_MIN;
#pragma omp parallel for schedule(static)
  for (int i = 0; i < n; i++) mf_atomic_max_int(&first[f->cells[i]], -i);
#pragma omp parallel for schedule(static)
  for (int c = 0; c < CHUNKS; c++) {
    const int lo = (int)((int64_t)n * c / CHUNKS), hi = (int)((int64_t)n * (c + 1) / CHUNKS);
    int k = 0;
    for (int i = lo; i < hi; i++) k += first[f->cells[i]] == -i;
    base[c + 1] = k;
  }
  for (int c = 0; c < CHUNKS; c++) base[c + 1] += base[c];
#pragma omp parallel for schedule(static)
  for (int c = 0; c < CHUNKS; c++) {
    const int lo = (int)((int64_t)n * c / CHUNKS), hi = (int)((int64_t)n * (c + 1) / CHUNKS);
    int next = base[c];
    for (int i = lo; i < hi; i++)
      if (first[f->cells[i]] == -i) p[f->cells[i]] = next++;
  }
  int next = base[CHUNKS];
  for (int v = 0; v < f->nv; v++) /* those of no cell last, in their order */
    if (first[v] == INT_MIN) p[v] = next++;
  free(first);
#pragma omp parallel for schedule(static)
  for (int v = 0; v < f->nv; v++)
    for (int k = 0; k < 3; k++) xc[3 * (size_t)p[v] + k] = f->coords[3 * (size_t)v + k];
#pragma omp parallel for schedule(static)
  for (int64_t i = 0; i < (int64_t)f->ncells * nvc; i++) f->cells[i] = p[f->cells[i]];
  free(f->coords);
  f->coords = xc;
  *perm = p;
  return 0;
}

/* f's boundary facets and tags from m's: each coarse facet split at its edges' midpoints (2 children in
 * 2D, 4 in 3D; vertices through perm, the fine renumbering), sorted as mf_simplex_mesh_boundary sorts (by
 * the ascending vertices: mf_simplex_facet_cmp), each child keyed by its parent facet for the tag */
static int boundary_children(mf_context ctx, const mf_simplex_mesh *m, const mf_simplex_entities *E, const int *perm,
                             mf_simplex_mesh *f)
{
  const int dim = m->dim, nch = dim == 2 ? 2 : 4;
  const size_t n = (size_t)m->nfacets * nch;
  mf_simplex_facet_key *cf = NULL;
  MF_CALL(MF_CALLOC(ctx, n + 1, &cf));
#pragma omp parallel for schedule(static)
  for (int t = 0; t < m->nfacets; t++) {
    const int *p = m->facets + (size_t)t * dim;
    int c[4][3] = {{0}};
    if (dim == 2) {
      const int mab = midpoint(E, m->nv, p[0], p[1]);
      c[0][0] = p[0], c[0][1] = mab, c[1][0] = mab, c[1][1] = p[1];
    } else {
      const int mab = midpoint(E, m->nv, p[0], p[1]), mac = midpoint(E, m->nv, p[0], p[2]),
                mbc = midpoint(E, m->nv, p[1], p[2]);
      const int tris[4][3] = {{p[0], mab, mac}, {mab, p[1], mbc}, {mac, mbc, p[2]}, {mab, mbc, mac}};
      memcpy(c, tris, sizeof tris);
    }
    for (int k = 0; k < nch; k++) {
      int v[3];
      for (int a = 0; a < dim; a++) v[a] = perm ? perm[c[k][a]] : c[k][a];
      mf_simplex_facet_key_make(v, dim, t, &cf[(size_t)t * nch + k]);
    }
  }
  qsort(cf, n, sizeof *cf, mf_simplex_facet_cmp);
  int ierr = n > INT32_MAX / 3 ? mf_error_set(ctx, MF_ERR_ARGUMENT, __FILE__, __LINE__, __func__,
                                              "%zu boundary facets exceed the 32-bit indices", n)
                               : 0;
  for (size_t i = 1; i < n && !ierr; i++)
    if (!mf_simplex_facet_cmp(&cf[i - 1], &cf[i]))
      ierr = mf_error_set(ctx, MF_ERR_ARGUMENT, __FILE__, __LINE__, __func__,
                          "a boundary facet of the refined mesh is the child of two coarse facets: the coarse "
                          "facets are not its boundary");
  if (!ierr) ierr = MF_CALLOC(ctx, n * dim + 1, &f->facets);
  if (!ierr) ierr = MF_CALLOC(ctx, n + 1, &f->facet_tag);
  if (!ierr) {
    for (size_t i = 0; i < n; i++) {
      for (int a = 0; a < dim; a++) f->facets[i * dim + a] = cf[i].v[a];
      f->facet_tag[i] = m->facet_tag[cf[i].id];
    }
    f->nfacets = (int)n;
  }
  free(cf);
  return ierr;
}

int mf_simplex_mesh_refine(mf_context ctx, const mf_simplex_mesh *m, mf_simplex_mesh *f)
{
  const int dim = m->dim, nch = dim == 2 ? 4 : 8;
  memset(f, 0, sizeof *f);
  MF_CHECK((int64_t)m->ncells * nch * (dim + 1) < INT32_MAX, ctx, MF_ERR_ARGUMENT,
           "refining %d cells gives %lld, beyond the 32-bit indices", m->ncells, (long long)m->ncells * nch);
  mf_simplex_entities E;
  MF_CALL(mf_simplex_entities_create(ctx, m, 2, dim == 2 ? 3 : 6, dim == 2 ? tri_edges : tet_edges, 0, &E));
  int ierr = 0;
  if (m->nv + E.n >= INT32_MAX)
    ierr = mf_error_set(ctx, MF_ERR_ARGUMENT, __FILE__, __LINE__, __func__,
                        "refining gives %lld vertices, beyond the 32-bit indices", (long long)(m->nv + E.n));
  char what[96];
  snprintf(what, sizeof what, "the refined mesh (%lld cells)", (long long)m->ncells * nch);
  if (!ierr) ierr = mf_host_require(ctx, 24.0 * (m->nv + E.n) + 4.0 * (dim + 1) * m->ncells * nch, what);
  f->dim = dim;
  f->nv = m->nv + (int)E.n;
  f->ncells = m->ncells * nch;
  if (!ierr) ierr = MF_CALLOC(ctx, (size_t)f->nv * 3, &f->coords);
  if (!ierr) ierr = MF_CALLOC(ctx, (size_t)f->ncells * (dim + 1), &f->cells);
  if (!ierr) {
    memcpy(f->coords, m->coords, sizeof(double) * 3 * (size_t)m->nv);
#pragma omp parallel for schedule(static)
    for (int v = 0; v < m->nv; v++)
      for (int64_t i = E.off[v]; i < E.off[v + 1]; i++)
        for (int k = 0; k < 3; k++)
          f->coords[3 * (size_t)(m->nv + i) + k] = 0.5 * (m->coords[3 * (size_t)v + k] + m->coords[3 * E.keys[i] + k]);
#pragma omp parallel for schedule(static)
    for (int e = 0; e < m->ncells; e++) children(m, &E, f->coords, e, f->cells + (size_t)e * nch * (dim + 1));
  }
  int *perm = NULL; /* the vertices renumbered by first use in cell order */
  if (!ierr) ierr = renumber(ctx, f, &perm);
  /* the boundary: the coarse boundary facets' children (the coarse facets are its whole boundary, so
   * theirs are the fine mesh's), each with its parent's tag, in mf_simplex_mesh_boundary's order (by
   * sorted vertex tuple); a child found twice is refused */
  if (!ierr) ierr = boundary_children(ctx, m, &E, perm, f);
  mf_simplex_entities_free(&E);
  free(perm);
  if (ierr) mf_simplex_mesh_free(f);
  return ierr;
}
