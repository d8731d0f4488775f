/* mesh.c -- built-in simplex meshes (the unit square in triangles, the unit cube in Kuhn
 * tetrahedra) and their boundary facets. */
#include "mf_simplex.h"

#include <math.h>

static int cmp_u64(const void *x, const void *y)
{
  const uint64_t a = *(const uint64_t *)x, b = *(const uint64_t *)y;
  return (a > b) - (a < b);
}

/* A facet's key: its sorted vertices packed into 64 bits (nv^dim < 2^64 for the sizes allowed). */
uint64_t mf_simplex_facet_key(int dim, const int *v, uint64_t nv)
{
  int s[3] = {v[0], v[1], dim == 3 ? v[2] : 0};
  for (int i = 0; i < dim; i++)
    for (int j = i + 1; j < dim; j++)
      if (s[j] < s[i]) {
        const int t = s[i];
        s[i] = s[j], s[j] = t;
      }
  return dim == 2 ? (uint64_t)s[0] * nv + (uint64_t)s[1] : ((uint64_t)s[0] * nv + (uint64_t)s[1]) * nv + (uint64_t)s[2];
}

int mf_simplex_mesh_boundary(mf_context ctx, mf_simplex_mesh *m)
{
  const int dim = m->dim, nfc = dim + 1; /* facets per cell: leave out vertex f */
  const size_t n = (size_t)m->ncells * nfc;
  uint64_t *keys = NULL;
  MF_CALL(MF_CALLOC(ctx, n + 1, &keys));
  for (int c = 0; c < m->ncells; c++)
    for (int f = 0; f < nfc; f++) {
      int v[3], k = 0;
      for (int i = 0; i <= dim; i++)
        if (i != f) v[k++] = m->cells[(size_t)c * nfc + i];
      keys[(size_t)c * nfc + f] = mf_simplex_facet_key(dim, v, (uint64_t)m->nv);
    }
  qsort(keys, n, sizeof *keys, cmp_u64);
  size_t nb = 0;
  for (size_t i = 0; i < n;) {
    size_t j = i;
    while (j < n && keys[j] == keys[i]) j++;
    if (j - i == 1) keys[nb++] = keys[i];
    i = j;
  }
  int ierr = MF_CALLOC(ctx, nb * dim + 1, &m->facets);
  if (!ierr) ierr = MF_CALLOC(ctx, nb + 1, &m->facet_tag);
  if (!ierr) {
    const uint64_t nv = (uint64_t)m->nv;
    for (size_t i = 0; i < nb; i++) {
      uint64_t k = keys[i];
      for (int d = dim - 1; d >= 0; d--) m->facets[i * dim + d] = (int)(k % nv), k /= nv;
      m->facet_tag[i] = 1;
    }
    m->nfacets = (int)nb;
  }
  free(keys);
  return ierr;
}

void mf_simplex_mesh_free(mf_simplex_mesh *m)
{
  if (!m) return;
  free(m->coords);
  free(m->cells);
  free(m->facets);
  free(m->facet_tag);
  memset(m, 0, sizeof *m);
}

int mf_simplex_mesh_box(mf_context ctx, int dim, int n, mf_simplex_mesh *m)
{
  MF_CHECK(m, ctx, MF_ERR_NULL, "output pointer m is NULL");
  memset(m, 0, sizeof *m);
  MF_CHECK(dim == 2 || dim == 3, ctx, MF_ERR_ARGUMENT, "simplex mesh dimension %d is not 2 or 3", dim);
  const int nmax = dim == 2 ? MF_SIMPLEX_BOX_MAX_2D : MF_SIMPLEX_BOX_MAX_3D;
  MF_CHECK(n >= 1 && n <= nmax, ctx, MF_ERR_ARGUMENT, "%d cells per direction out of range 1..%d for the %s", n, nmax,
           dim == 2 ? "square" : "cube");
  const int n1 = n + 1;
  m->dim = dim;
  m->nv = dim == 2 ? n1 * n1 : n1 * n1 * n1;
  m->ncells = dim == 2 ? 2 * n * n : 6 * n * n * n;
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
    m->coords[3 * v] = (double)(v % n1) / n;
    m->coords[3 * v + 1] = (double)(v / n1 % n1) / n;
    m->coords[3 * v + 2] = dim == 3 ? (double)(v / (n1 * n1)) / n : 0.0;
  }
  int c = 0;
  if (dim == 2) {
    for (int j = 0; j < n; j++)
      for (int i = 0; i < n; i++) {
        const int v00 = i + n1 * j, v10 = v00 + 1, v01 = v00 + n1, v11 = v01 + 1;
        const int t[2][3] = {{v00, v10, v11}, {v00, v11, v01}}; /* both positively oriented */
        for (int k = 0; k < 2; k++, c++) memcpy(m->cells + 3 * c, t[k], sizeof t[k]);
      }
  } else {
    static const int perm[6][3] = {{0, 1, 2}, {0, 2, 1}, {1, 0, 2}, {1, 2, 0}, {2, 0, 1}, {2, 1, 0}};
    const int stride[3] = {1, n1, n1 * n1};
    for (int k = 0; k < n; k++)
      for (int j = 0; j < n; j++)
        for (int i = 0; i < n; i++)
          for (int s = 0; s < 6; s++, c++) {
            int v[4];
            v[0] = i + n1 * (j + n1 * k);
            for (int l = 0; l < 3; l++) v[l + 1] = v[l] + stride[perm[s][l]];
            /* an odd permutation gives a negatively oriented path: swap two vertices */
            const int odd = s == 1 || s == 2 || s == 5;
            if (odd) {
              const int t = v[1];
              v[1] = v[2], v[2] = t;
            }
            memcpy(m->cells + 4 * c, v, sizeof v);
          }
  }
  ierr = mf_simplex_mesh_boundary(ctx, m);
  if (ierr) mf_simplex_mesh_free(m);
  return ierr;
}
