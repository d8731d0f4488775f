/* dofs.c -- continuous P_p DoFs on a simplex mesh, numbered by entity (mf_simplex.h): global edges
 * and faces found by sorting their vertex keys, their nodes oriented by sorted global vertices. */
#include "mf_simplex.h"

static const int tri_edges[3][2] = {{0, 1}, {0, 2}, {1, 2}};
static const int tet_edges[6][2] = {{0, 1}, {0, 2}, {0, 3}, {1, 2}, {1, 3}, {2, 3}};
static const int tet_faces[4][3] = {{0, 1, 2}, {0, 1, 3}, {0, 2, 3}, {1, 2, 3}};

static int cmp_u64(const void *x, const void *y)
{
  const uint64_t a = *(const uint64_t *)x, b = *(const uint64_t *)y;
  return (a > b) - (a < b);
}

static uint64_t key2(int a, int b, uint64_t nv) { return a < b ? (uint64_t)a * nv + b : (uint64_t)b * nv + a; }
static uint64_t key3(int a, int b, int c, uint64_t nv)
{
  int s[3] = {a, b, c};
  for (int i = 0; i < 3; i++)
    for (int j = i + 1; j < 3; j++)
      if (s[j] < s[i]) {
        const int t = s[i];
        s[i] = s[j], s[j] = t;
      }
  return ((uint64_t)s[0] * nv + s[1]) * nv + s[2];
}

/* Sorted distinct keys of keys[0..n) in place; returns their count. */
static size_t unique_keys(uint64_t *keys, size_t n)
{
  qsort(keys, n, sizeof *keys, cmp_u64);
  size_t u = 0;
  for (size_t i = 0; i < n; i++)
    if (u == 0 || keys[i] != keys[u - 1]) keys[u++] = keys[i];
  return u;
}

static size_t find_key(const uint64_t *keys, size_t n, uint64_t k)
{
  size_t lo = 0, hi = n;
  while (lo < hi) {
    const size_t mid = lo + (hi - lo) / 2;
    if (keys[mid] < k) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/* Position of the face node (i, j) (i, j >= 1, i + j <= p - 1) in the order j outer, i inner. */
static int face_pos(int p, int i, int j)
{
  int pos = 0;
  for (int jj = 1; jj < j; jj++) pos += p - 1 - jj;
  return pos + i - 1;
}

void mf_simplex_dofs_free(mf_simplex_dofs *d)
{
  if (!d) return;
  free(d->cell_dofs);
  free(d->bc);
  memset(d, 0, sizeof *d);
}

int mf_simplex_dofs_create(mf_context ctx, const mf_simplex_mesh *m, const mf_simplex_basis *b, mf_simplex_dofs *d)
{
  MF_CHECK(m && b && d, ctx, MF_ERR_NULL, "mesh, basis or output is NULL");
  memset(d, 0, sizeof *d);
  MF_CHECK(m->dim == b->dim, ctx, MF_ERR_INCOMPATIBLE, "a %dD basis on a %dD mesh", b->dim, m->dim);
  const int dim = m->dim, p = b->degree, nvc = dim + 1, N = b->nnodes;
  const int ne = dim == 2 ? 3 : 6, nf = dim == 2 ? 0 : 4, pe = p - 1, pf = (p - 1) * (p - 2) / 2;
  const int pi = dim == 2 ? pf : (p - 1) * (p - 2) * (p - 3) / 6; /* interior nodes of a cell */
  const uint64_t nv = (uint64_t)m->nv;
  uint64_t *ekeys = NULL, *fkeys = NULL;
  size_t nek = (size_t)m->ncells * ne, nfk = (size_t)m->ncells * nf;
  int ierr = MF_CALLOC(ctx, nek + 1, &ekeys);
  if (!ierr && nf) ierr = MF_CALLOC(ctx, nfk + 1, &fkeys);
  if (ierr) {
    free(ekeys);
    return ierr;
  }
  for (int c = 0; c < m->ncells; c++) {
    const int *v = m->cells + (size_t)c * nvc;
    for (int e = 0; e < ne; e++) {
      const int *ed = dim == 2 ? tri_edges[e] : tet_edges[e];
      ekeys[(size_t)c * ne + e] = key2(v[ed[0]], v[ed[1]], nv);
    }
    for (int f = 0; f < nf; f++)
      fkeys[(size_t)c * nf + f] = key3(v[tet_faces[f][0]], v[tet_faces[f][1]], v[tet_faces[f][2]], nv);
  }
  nek = unique_keys(ekeys, nek);
  if (nf) nfk = unique_keys(fkeys, nfk);
  d->nedges = (int)nek;
  d->nfaces = (int)nfk;
  d->nnodes = N;
  const int64_t nd = (int64_t)m->nv + (int64_t)nek * pe + (int64_t)nfk * pf + (int64_t)m->ncells * pi;
  if (nd > INT32_MAX)
    ierr = mf_error_set(ctx, MF_ERR_ARGUMENT, __FILE__, __LINE__, __func__, "%lld DoFs exceed the 32-bit indices",
                        (long long)nd);
  d->ndofs = (int)nd;
  if (!ierr) ierr = MF_CALLOC(ctx, (size_t)m->ncells * N, &d->cell_dofs);
  if (!ierr) ierr = MF_CALLOC(ctx, (size_t)d->ndofs + 1, &d->bc);
  if (ierr) {
    free(ekeys);
    free(fkeys);
    mf_simplex_dofs_free(d);
    return ierr;
  }
  const int ebase = m->nv, fbase = ebase + (int)nek * pe, ibase = fbase + (int)nfk * pf;
  for (int c = 0; c < m->ncells; c++) {
    const int *v = m->cells + (size_t)c * nvc;
    int *cd = d->cell_dofs + (size_t)c * N, n = 0;
    for (int k = 0; k < nvc; k++) cd[n++] = v[k];
    for (int e = 0; e < ne; e++) {
      const int *ed = dim == 2 ? tri_edges[e] : tet_edges[e];
      const int a = v[ed[0]], bb = v[ed[1]];
      const int g = (int)find_key(ekeys, nek, key2(a, bb, nv));
      for (int k = 1; k < p; k++) /* node k from local a to b; the global edge runs from min to max */
        cd[n++] = ebase + g * pe + (a < bb ? k - 1 : p - 1 - k);
    }
    for (int f = 0; f < nf; f++) {
      const int *fc = tet_faces[f];
      const int gv[3] = {v[fc[0]], v[fc[1]], v[fc[2]]};
      const int g = (int)find_key(fkeys, nfk, key3(gv[0], gv[1], gv[2], nv));
      int ord[3] = {0, 1, 2}; /* the face's vertices by global index */
      for (int i = 0; i < 3; i++)
        for (int j = i + 1; j < 3; j++)
          if (gv[ord[j]] < gv[ord[i]]) {
            const int t = ord[i];
            ord[i] = ord[j], ord[j] = t;
          }
      for (int j = 1; j < p; j++)
        for (int i = 1; i + j < p; i++) {
          const int L[3] = {p - i - j, i, j}; /* p x barycentric coordinates on (a, b, c) */
          cd[n++] = fbase + g * pf + face_pos(p, L[ord[1]], L[ord[2]]);
        }
    }
    for (int k = 0; k < pi; k++) cd[n++] = ibase + c * pi + k;
  }
  /* boundary DoFs: the nodes of the boundary facets (vertices, their edges, in 3D their face) */
  for (int t = 0; t < m->nfacets; t++) {
    const int *fv = m->facets + (size_t)t * dim;
    for (int k = 0; k < dim; k++) d->bc[fv[k]] = 1;
    const int nfe = dim == 2 ? 1 : 3;
    for (int e = 0; e < nfe; e++) {
      const int a = fv[e == 2 ? 1 : 0], bb = fv[e == 0 ? 1 : 2];
      const size_t g = find_key(ekeys, nek, key2(a, bb, nv));
      for (int k = 0; k < pe; k++) d->bc[ebase + g * pe + k] = 1;
    }
    if (dim == 3) {
      const size_t g = find_key(fkeys, nfk, key3(fv[0], fv[1], fv[2], nv));
      for (int k = 0; k < pf; k++) d->bc[fbase + g * pf + k] = 1;
    }
  }
  free(ekeys);
  free(fkeys);
  return 0;
}
