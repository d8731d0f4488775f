/* mesh.c -- built-in simplex meshes (the unit square in triangles, the unit cube in Kuhn
 * tetrahedra) and their boundary facets. */
#include "mf_simplex.h"

#include <math.h>

static int cmp_u64(const void *x, const void *y)
{
  const uint64_t a = *(const uint64_t *)x, b = *(const uint64_t *)y;
  return (a > b) - (a < b);
}

/* The smallest of the k vertices v (k = 2 or 3) and the key of the others (mf_simplex_entities). */
static inline int entity_key(int k, const int *v, uint64_t nv, uint64_t *key)
{
  int a = v[0], b = v[1], c = k == 3 ? v[2] : INT32_MAX, t;
  if (b < a) t = a, a = b, b = t;
  if (c < b) t = b, b = c, c = t;
  if (b < a) t = a, a = b, b = t;
  *key = k == 2 ? (uint64_t)b : (uint64_t)b * nv + (uint64_t)c;
  return a;
}

static void sort_u64(uint64_t *x, int64_t n)
{
  if (n > 64) {
    qsort(x, (size_t)n, sizeof *x, cmp_u64);
    return;
  }
  for (int64_t i = 1; i < n; i++) { /* the usual bucket is a few dozen keys (Kuhn edges: ~36): insertion */
    const uint64_t t = x[i];
    int64_t j = i;
    for (; j > 0 && x[j - 1] > t; j--) x[j] = x[j - 1];
    x[j] = t;
  }
}

void mf_simplex_entities_free(mf_simplex_entities *e)
{
  if (!e) return;
  free(e->off);
  free(e->keys);
  memset(e, 0, sizeof *e);
}

/* Counting sort of the cells' entities by their smallest vertex (two passes over the cells), then each
 * vertex's bucket sorted and reduced on its own (threads over the vertices), then the buckets packed.
 * Every step's result is independent of the threads' number and schedule. */
int mf_simplex_entities_create(mf_context ctx, const mf_simplex_mesh *m, int k, int nsub, const int (*sub)[3],
                               int select, mf_simplex_entities *e)
{
  memset(e, 0, sizeof *e);
  const int nvc = m->dim + 1, nv = m->nv;
  const uint64_t nvu = (uint64_t)nv;
  const size_t total = (size_t)m->ncells * nsub;
  int64_t *pos = NULL;
  int ierr = MF_CALLOC(ctx, (size_t)nv + 1, &e->off);
  if (!ierr) ierr = MF_CALLOC(ctx, (size_t)nv + 1, &pos);
  if (!ierr) ierr = MF_CALLOC(ctx, total + 1, &e->keys);
  if (ierr) {
    free(pos);
    mf_simplex_entities_free(e);
    return ierr;
  }
  int64_t *off = e->off;
  uint64_t *keys = e->keys;
  /* the buckets' sizes, then the keys put in; the order within a bucket depends on the threads, the
   * sort after does not */
#pragma omp parallel for schedule(static)
  for (int c = 0; c < m->ncells; c++) {
    const int *cv = m->cells + (size_t)c * nvc;
    for (int s = 0; s < nsub; s++) {
      const int v[3] = {cv[sub[s][0]], cv[sub[s][1]], k == 3 ? cv[sub[s][2]] : 0};
      uint64_t key;
      const int a = entity_key(k, v, nvu, &key);
#pragma omp atomic update
      pos[a + 1]++;
    }
  }
  for (int v = 0; v < nv; v++) pos[v + 1] += pos[v];
  memcpy(off, pos, sizeof(int64_t) * ((size_t)nv + 1));
#pragma omp parallel for schedule(static)
  for (int c = 0; c < m->ncells; c++) {
    const int *cv = m->cells + (size_t)c * nvc;
    for (int s = 0; s < nsub; s++) {
      const int v[3] = {cv[sub[s][0]], cv[sub[s][1]], k == 3 ? cv[sub[s][2]] : 0};
      uint64_t key;
      const int a = entity_key(k, v, nvu, &key);
      int64_t at;
#pragma omp atomic capture
      at = pos[a]++;
      keys[at] = key;
    }
  }
  /* pos[v] <- what bucket v keeps: every distinct key (select 0), the keys found exactly once (1), or
   * those found three times or more (3) */
#pragma omp parallel for schedule(dynamic, 4096)
  for (int v = 0; v < nv; v++) {
    uint64_t *x = keys + off[v];
    const int64_t n = off[v + 1] - off[v];
    sort_u64(x, n);
    int64_t u = 0;
    for (int64_t i = 0; i < n;) {
      int64_t j = i + 1;
      while (j < n && x[j] == x[i]) j++;
      if (select == 0 || (select == 1 ? j - i == 1 : j - i >= select)) x[u++] = x[i];
      i = j;
    }
    pos[v] = u;
  }
  int64_t n = 0; /* pack: the buckets move down, in order, never over a bucket not yet moved */
  for (int v = 0; v < nv; v++) {
    const int64_t u = pos[v];
    if (n != off[v]) memmove(keys + n, keys + off[v], sizeof *keys * (size_t)u);
    off[v] = n;
    n += u;
  }
  off[nv] = n;
  e->n = n;
  free(pos);
  uint64_t *shrunk = realloc(keys, sizeof *keys * ((size_t)n + 1));
  if (shrunk) e->keys = shrunk;
  return 0;
}

int64_t mf_simplex_entities_find(const mf_simplex_entities *e, int k, const int *v, uint64_t nv)
{
  uint64_t key;
  const int a = entity_key(k, v, nv, &key);
  int64_t lo = e->off[a], hi = e->off[a + 1];
  while (lo < hi) {
    const int64_t mid = lo + (hi - lo) / 2;
    if (e->keys[mid] < key) lo = mid + 1;
    else hi = mid;
  }
  return lo < e->off[a + 1] && e->keys[lo] == key ? lo : -1;
}

int mf_simplex_mesh_boundary(mf_context ctx, mf_simplex_mesh *m)
{
  const int dim = m->dim; /* facet f of a cell: all vertices but f */
  static const int tri[3][3] = {{1, 2, 0}, {0, 2, 0}, {0, 1, 0}};
  static const int tet[4][3] = {{1, 2, 3}, {0, 2, 3}, {0, 1, 3}, {0, 1, 2}};
  mf_simplex_entities e;
  MF_CALL(mf_simplex_entities_create(ctx, m, dim, dim + 1, dim == 2 ? tri : tet, 1, &e));
  const size_t nb = (size_t)e.n;
  int ierr = 0;
  if (e.n > INT32_MAX / 3)
    ierr = mf_error_set(ctx, MF_ERR_ARGUMENT, __FILE__, __LINE__, __func__,
                        "%lld boundary facets exceed the 32-bit indices", (long long)e.n);
  if (!ierr) ierr = MF_CALLOC(ctx, nb * dim + 1, &m->facets);
  if (!ierr) ierr = MF_CALLOC(ctx, nb + 1, &m->facet_tag);
  if (!ierr) {
    const uint64_t nv = (uint64_t)m->nv;
    for (int v = 0; v < m->nv; v++)
      for (int64_t i = e.off[v]; i < e.off[v + 1]; i++) {
        int *f = m->facets + (size_t)i * dim;
        f[0] = v;
        if (dim == 2) f[1] = (int)e.keys[i];
        else f[1] = (int)(e.keys[i] / nv), f[2] = (int)(e.keys[i] % nv);
        m->facet_tag[i] = 1;
      }
    m->nfacets = (int)nb;
  }
  mf_simplex_entities_free(&e);
  return ierr;
}

void mf_simplex_mesh_free(mf_simplex_mesh *m)
{
  if (!m) return;
  free(m->coords);
  free(m->cells);
  free(m->facets);
  free(m->facet_tag);
  free(m->part);
  free(m->anc);
  free(m->lat);
  mf_simplex_root_release(m->root);
  memset(m, 0, sizeof *m);
}

/* the coarse mesh of meshes held in parts: counted references (made by parts_simplex.c) */
void mf_simplex_root_release(mf_simplex_root *R)
{
  if (!R || --R->refs > 0) return;
  mf_simplex_mesh_free(&R->m);
  for (int t = 0; t < 2; t++) mf_simplex_entities_free(&R->E[t]);
  for (int t = 0; t < 3; t++) free(R->roff[t]), free(R->toff[t]), free(R->rk[t]), free(R->tg[t]);
  free(R);
}

mf_simplex_root *mf_simplex_root_retain(mf_simplex_root *R)
{
  if (R) R->refs++;
  return R;
}

const mf_simplex_mesh *mf_simplex_root_mesh(const mf_simplex_root *r) { return &r->m; }

void mf_simplex_facet_key_make(const int *v, int k, int id, mf_simplex_facet_key *key)
{
  key->v[0] = key->v[1] = key->v[2] = 0;
  for (int i = 0; i < k; i++) { /* insertion: k <= 3 */
    int j = i;
    for (; j > 0 && key->v[j - 1] > v[i]; j--) key->v[j] = key->v[j - 1];
    key->v[j] = v[i];
  }
  key->id = id;
}

int mf_simplex_facet_cmp(const void *a, const void *b)
{
  const mf_simplex_facet_key *p = (const mf_simplex_facet_key *)a, *q = (const mf_simplex_facet_key *)b;
  for (int j = 0; j < 3; j++)
    if (p->v[j] != q->v[j]) return p->v[j] < q->v[j] ? -1 : 1;
  return 0;
}

int mf_simplex_mesh_box(mf_context ctx, int dim, int n, mf_simplex_mesh *m)
{
  const int nn[3] = {n, n, n};
  return mf_simplex_mesh_box_n(ctx, dim, nn, m);
}

int mf_simplex_mesh_box_n(mf_context ctx, int dim, const int nn[3], mf_simplex_mesh *m)
{
  MF_CHECK(m, ctx, MF_ERR_NULL, "output pointer m is NULL");
  memset(m, 0, sizeof *m);
  MF_CHECK(nn, ctx, MF_ERR_NULL, "cells per direction is NULL");
  MF_CHECK(dim == 2 || dim == 3, ctx, MF_ERR_ARGUMENT, "simplex mesh dimension %d is not 2 or 3", dim);
  const int nmax = dim == 2 ? MF_SIMPLEX_BOX_MAX_2D : MF_SIMPLEX_BOX_MAX_3D;
  for (int d = 0; d < dim; d++)
    MF_CHECK(nn[d] >= 1 && nn[d] <= nmax, ctx, MF_ERR_ARGUMENT, "%d cells per direction out of range 1..%d for the %s",
             nn[d], nmax, dim == 2 ? "square" : "cube");
  const int nx = nn[0], ny = nn[1], nz = dim == 3 ? nn[2] : 1, n1 = nx + 1, m1 = ny + 1;
  m->dim = dim;
  m->nv = dim == 2 ? n1 * m1 : n1 * m1 * (nz + 1);
  m->ncells = dim == 2 ? 2 * nx * ny : 6 * nx * ny * nz;
  char what[96];
  snprintf(what, sizeof what, "the %s in %d %s", dim == 2 ? "square" : "cube", m->ncells,
           dim == 2 ? "triangles" : "tetrahedra");
  MF_CALL(mf_host_require(ctx, 24.0 * m->nv + (4.0 * (dim + 1) + 8.0 * (dim + 1)) * m->ncells, what));
  int ierr = MF_CALLOC(ctx, (size_t)m->nv * 3, &m->coords);
  if (!ierr) ierr = MF_CALLOC(ctx, (size_t)m->ncells * (dim + 1), &m->cells);
  if (ierr) {
    mf_simplex_mesh_free(m);
    return ierr;
  }
  for (int v = 0; v < m->nv; v++) {
    m->coords[3 * v] = (double)(v % n1) / nx;
    m->coords[3 * v + 1] = (double)(v / n1 % m1) / ny;
    m->coords[3 * v + 2] = dim == 3 ? (double)(v / (n1 * m1)) / nz : 0.0;
  }
  int c = 0;
  if (dim == 2) {
    for (int j = 0; j < ny; j++)
      for (int i = 0; i < nx; i++) {
        const int v00 = i + n1 * j, v10 = v00 + 1, v01 = v00 + n1, v11 = v01 + 1;
        const int t[2][3] = {{v00, v10, v11}, {v00, v11, v01}}; /* both positively oriented */
        for (int k = 0; k < 2; k++, c++) memcpy(m->cells + 3 * (size_t)c, t[k], sizeof t[k]);
      }
  } else {
    static const int perm[6][3] = {{0, 1, 2}, {0, 2, 1}, {1, 0, 2}, {1, 2, 0}, {2, 0, 1}, {2, 1, 0}};
    const int stride[3] = {1, n1, n1 * m1};
    for (int k = 0; k < nz; k++)
      for (int j = 0; j < ny; j++)
        for (int i = 0; i < nx; i++)
          for (int s = 0; s < 6; s++, c++) {
            int v[4];
            v[0] = i + n1 * (j + m1 * k);
            for (int l = 0; l < 3; l++) v[l + 1] = v[l] + stride[perm[s][l]];
            /* an odd permutation gives a negatively oriented path: swap two vertices */
            const int odd = s == 1 || s == 2 || s == 5;
            if (odd) {
              const int t = v[1];
              v[1] = v[2], v[2] = t;
            }
            memcpy(m->cells + 4 * (size_t)c, v, sizeof v);
          }
  }
  ierr = mf_simplex_mesh_boundary(ctx, m);
  if (ierr) {
    mf_simplex_mesh_free(m);
    return ierr;
  }
  /* the sides' tags, as the hex boxes': x = 0 1, x = 1 2, y = 0 3, y = 1 4, z = 0 5, z = 1 6 (the
   * vertices' coordinates are exact multiples of 1/n per direction: a facet lies in a side where all its vertices do) */
  for (int t = 0; t < m->nfacets; t++) {
    const int *f = m->facets + (size_t)t * dim;
    for (int d = 0, done = 0; d < dim && !done; d++)
      for (int side = 0; side < 2 && !done; side++) {
        int on = 1;
        for (int a = 0; a < dim; a++) on = on && m->coords[3 * (size_t)f[a] + d] == (double)side;
        if (on) m->facet_tag[t] = 2 * d + side + 1, done = 1;
      }
  }
  return 0;
}
