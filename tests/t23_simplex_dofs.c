/* t23_simplex_dofs -- built-in simplex meshes and P_p DoFs: positively oriented cells, the boundary
 * facets (4n edges of the square, 12 n^2 triangles of the cube), DoF counts equal to the lattice's
 * (n p + 1)^dim, boundary DoFs (n p + 1)^dim - (n p - 1)^dim, conformity (every cell places each of
 * its DoFs at the same point), and a Poisson solve (-lap u = f, u = prod sin(pi x_d), zero Dirichlet
 * data) assembled from the element matrices, whose L2 error (computed here) converges at a rate in
 * [p + 0.8, p + 1.3] and its H1 seminorm error at a rate in [p - 0.2, p + 0.3], for p = 1..3 in 2D and 3D
 * (the runs: L2 p + 1 within 0.09, H1 p within 0.14; 3D P2 and P3 from 3 cells per side, where the H1
 * rate of 2 and 4 cells is still 1.76). The numbering against a reference (global sorted keys of the
 * edges, faces and boundary facets) on box meshes with their vertices and cells shuffled: edges and faces numbered
 * in the order of their sorted vertices, the boundary facets in that order too; run with several
 * OpenMP threads as well (test simplex_dofs_threads), this checks that the threads change nothing.
 * Also refusals (dimension, size, mismatched basis). */
#include "mf_test.h"
#include "simplex/mf_simplex.h"

static const double PI = 3.14159265358979323846;

static double exact(int dim, const double *x)
{
  double u = 1.0;
  for (int d = 0; d < dim; d++) u *= sin(PI * x[d]);
  return u;
}

/* d exact / d x_k */
static double exact_grad(int dim, const double *x, int k)
{
  double g = PI * cos(PI * x[k]);
  for (int d = 0; d < dim; d++)
    if (d != k) g *= sin(PI * x[d]);
  return g;
}

/* The physical point of reference point xi in cell c. */
static void map_point(const mf_simplex_mesh *m, int c, const double *xi, double *x)
{
  const int dim = m->dim, *v = m->cells + (size_t)c * (dim + 1);
  for (int k = 0; k < dim; k++) {
    x[k] = m->coords[3 * v[0] + k];
    for (int l = 0; l < dim; l++) x[k] += (m->coords[3 * v[l + 1] + k] - m->coords[3 * v[0] + k]) * xi[l];
  }
}

static void cell_vertices(const mf_simplex_mesh *m, int c, double *X)
{
  for (int i = 0; i <= m->dim; i++)
    for (int k = 0; k < m->dim; k++) X[i * m->dim + k] = m->coords[3 * m->cells[(size_t)c * (m->dim + 1) + i] + k];
}

typedef struct {
  int n;
  int *rowptr, *col;
  double *val;
} csr;

static int cmp_pair(const void *a, const void *b)
{
  const long long x = *(const long long *)a, y = *(const long long *)b;
  return (x > y) - (x < y);
}

/* The pattern of the cells' DoF pairs, values 0. */
static void csr_pattern(const mf_simplex_dofs *d, int ncells, csr *A)
{
  const int N = d->nnodes;
  const size_t np = (size_t)ncells * N * N;
  long long *pairs = malloc(sizeof(long long) * np);
  size_t k = 0;
  for (int c = 0; c < ncells; c++)
    for (int i = 0; i < N; i++)
      for (int j = 0; j < N; j++)
        pairs[k++] = (long long)d->cell_dofs[(size_t)c * N + i] * d->ndofs + d->cell_dofs[(size_t)c * N + j];
  qsort(pairs, np, sizeof *pairs, cmp_pair);
  size_t u = 0;
  for (size_t i = 0; i < np; i++)
    if (u == 0 || pairs[i] != pairs[u - 1]) pairs[u++] = pairs[i];
  A->n = d->ndofs;
  A->rowptr = calloc((size_t)A->n + 1, sizeof(int));
  A->col = malloc(sizeof(int) * u);
  A->val = calloc(u, sizeof(double));
  for (size_t i = 0; i < u; i++) {
    A->rowptr[pairs[i] / d->ndofs + 1]++;
    A->col[i] = (int)(pairs[i] % d->ndofs);
  }
  for (int i = 0; i < A->n; i++) A->rowptr[i + 1] += A->rowptr[i];
  free(pairs);
}

static double *entry(csr *A, int i, int j)
{
  int lo = A->rowptr[i], hi = A->rowptr[i + 1] - 1;
  while (lo < hi) {
    const int mid = (lo + hi) / 2;
    if (A->col[mid] < j) lo = mid + 1;
    else hi = mid;
  }
  return &A->val[lo];
}

static void spmv(const csr *A, const double *x, double *y)
{
  for (int i = 0; i < A->n; i++) {
    double s = 0.0;
    for (int k = A->rowptr[i]; k < A->rowptr[i + 1]; k++) s += A->val[k] * x[A->col[k]];
    y[i] = s;
  }
}

/* Jacobi CG to a relative residual of 1e-12; returns the iterations. */
static int cg(const csr *A, const double *b, double *x)
{
  const int n = A->n;
  double *r = malloc(sizeof(double) * n), *z = malloc(sizeof(double) * n), *p = malloc(sizeof(double) * n),
         *q = malloc(sizeof(double) * n), *dinv = malloc(sizeof(double) * n);
  for (int i = 0; i < n; i++) {
    dinv[i] = 1.0 / *entry((csr *)A, i, i);
    x[i] = 0.0;
    r[i] = b[i];
    z[i] = dinv[i] * r[i];
    p[i] = z[i];
  }
  double rz = 0.0, r0 = 0.0;
  for (int i = 0; i < n; i++) rz += r[i] * z[i];
  r0 = sqrt(rz);
  int it = 0;
  while (it < 5000 && sqrt(rz) > 1e-12 * r0) {
    spmv(A, p, q);
    double pq = 0.0;
    for (int i = 0; i < n; i++) pq += p[i] * q[i];
    const double alpha = rz / pq;
    double rz1 = 0.0;
    for (int i = 0; i < n; i++) {
      x[i] += alpha * p[i];
      r[i] -= alpha * q[i];
      z[i] = dinv[i] * r[i];
      rz1 += r[i] * z[i];
    }
    for (int i = 0; i < n; i++) p[i] = z[i] + rz1 / rz * p[i];
    rz = rz1;
    it++;
  }
  free(r), free(z), free(p), free(q), free(dinv);
  return it;
}

/* L2 error and H1 seminorm error (in *h1) of the P_p Poisson solution on the box with n cells per
 * direction, both computed here (the gradient through J^-1 of the cell's vertices). */
static double poisson_error(mf_context ctx, int dim, int p, int n, double *h1)
{
  mf_simplex_mesh m;
  mf_simplex_basis b, bq;
  mf_simplex_dofs d;
  T_CALL(mf_simplex_mesh_box(ctx, dim, n, &m));
  T_CALL(mf_simplex_basis_setup(ctx, dim, p, -1, &b));
  T_CALL(mf_simplex_basis_setup(ctx, dim, p, 2 * p + 4, &bq)); /* right-hand side and error */
  T_CALL(mf_simplex_dofs_create(ctx, &m, &b, &d));
  const int N = b.nnodes;
  csr A;
  csr_pattern(&d, m.ncells, &A);
  double *rhs = calloc((size_t)d.ndofs, sizeof(double)), *u = calloc((size_t)d.ndofs, sizeof(double));
  double *K = malloc(sizeof(double) * N * N), X[12], det;
  for (int c = 0; c < m.ncells; c++) {
    cell_vertices(&m, c, X);
    T_CALL(mf_simplex_element_matrices(ctx, &b, X, NULL, K, &det));
    const int *cd = d.cell_dofs + (size_t)c * N;
    for (int i = 0; i < N; i++)
      for (int j = 0; j < N; j++) *entry(&A, cd[i], cd[j]) += K[i * N + j];
    for (int q = 0; q < bq.nq; q++) {
      double x[3];
      map_point(&m, c, bq.qpts + q * dim, x);
      const double f = dim * PI * PI * exact(dim, x) * bq.qwts[q] * det;
      for (int i = 0; i < N; i++) rhs[cd[i]] += f * bq.B[(size_t)q * N + i];
    }
  }
  for (int i = 0; i < d.ndofs; i++) /* zero Dirichlet data: identity rows and columns */
    for (int k = A.rowptr[i]; k < A.rowptr[i + 1]; k++)
      if (d.bc[i] || d.bc[A.col[k]]) A.val[k] = (A.col[k] == i) ? 1.0 : 0.0;
  for (int i = 0; i < d.ndofs; i++)
    if (d.bc[i]) rhs[i] = 0.0;
  const int it = cg(&A, rhs, u);
  T_CHECK(it < 5000, "P%d %dD n %d: CG did not converge", p, dim, n);
  double err = 0.0, herr = 0.0;
  for (int c = 0; c < m.ncells; c++) {
    cell_vertices(&m, c, X);
    T_CALL(mf_simplex_element_matrices(ctx, &bq, X, NULL, NULL, &det));
    double Ji[3][3];
    mf_simplex_affine(dim, X, Ji, NULL);
    const int *cd = d.cell_dofs + (size_t)c * N;
    for (int q = 0; q < bq.nq; q++) {
      double x[3], uh = 0.0, gref[3] = {0.0, 0.0, 0.0};
      map_point(&m, c, bq.qpts + q * dim, x);
      for (int i = 0; i < N; i++) {
        uh += u[cd[i]] * bq.B[(size_t)q * N + i];
        for (int l = 0; l < dim; l++) gref[l] += u[cd[i]] * bq.G[((size_t)q * N + i) * dim + l];
      }
      const double e = uh - exact(dim, x);
      err += e * e * bq.qwts[q] * det;
      for (int k = 0; k < dim; k++) { /* d u_h / d x_k = sum_l d u_h / d xi_l (J^-1)_lk */
        double gk = 0.0;
        for (int l = 0; l < dim; l++) gk += gref[l] * Ji[l][k];
        const double ek = gk - exact_grad(dim, x, k);
        herr += ek * ek * bq.qwts[q] * det;
      }
    }
  }
  *h1 = sqrt(herr);
  free(rhs), free(u), free(K), free(A.rowptr), free(A.col), free(A.val);
  mf_simplex_dofs_free(&d);
  mf_simplex_basis_free(&b);
  mf_simplex_basis_free(&bq);
  mf_simplex_mesh_free(&m);
  return sqrt(err);
}

static void test_structure(mf_context ctx, int dim, int n, int p)
{
  mf_simplex_mesh m;
  mf_simplex_basis b;
  mf_simplex_dofs d;
  T_CALL(mf_simplex_mesh_box(ctx, dim, n, &m));
  T_CALL(mf_simplex_basis_setup(ctx, dim, p, -1, &b));
  T_CALL(mf_simplex_dofs_create(ctx, &m, &b, &d));
  const int N = b.nnodes;
  T_CHECK(m.nfacets == (dim == 2 ? 4 * n : 12 * n * n), "%dD n %d: %d boundary facets", dim, n, m.nfacets);
  double minvol = 1e300, X[12];
  for (int c = 0; c < m.ncells; c++) {
    cell_vertices(&m, c, X);
    double J[3][3], det;
    for (int k = 0; k < dim; k++)
      for (int l = 0; l < dim; l++) J[k][l] = X[(l + 1) * dim + k] - X[k];
    det = dim == 2 ? J[0][0] * J[1][1] - J[0][1] * J[1][0]
                   : J[0][0] * (J[1][1] * J[2][2] - J[1][2] * J[2][1]) - J[0][1] * (J[1][0] * J[2][2] - J[1][2] * J[2][0]) +
                         J[0][2] * (J[1][0] * J[2][1] - J[1][1] * J[2][0]);
    minvol = fmin(minvol, det);
  }
  T_CHECK(minvol > 0.0, "%dD n %d: a cell with det J = %.3e", dim, n, minvol);
  const int np1 = n * p + 1, nm1 = n * p - 1;
  const int expect = dim == 2 ? np1 * np1 : np1 * np1 * np1;
  const int expect_bc = expect - (dim == 2 ? nm1 * nm1 : nm1 * nm1 * nm1);
  T_CHECK(d.ndofs == expect, "%dD n %d P%d: %d DoFs, the lattice has %d", dim, n, p, d.ndofs, expect);
  int nbc = 0;
  for (int i = 0; i < d.ndofs; i++) nbc += d.bc[i];
  T_CHECK(nbc == expect_bc, "%dD n %d P%d: %d boundary DoFs, expected %d", dim, n, p, nbc, expect_bc);
  /* conformity: every DoF at one point, whichever cell places it */
  double *pt = malloc(sizeof(double) * 3 * d.ndofs);
  unsigned char *seen = calloc((size_t)d.ndofs, 1);
  double worst = 0.0;
  int onbc_bad = 0;
  for (int c = 0; c < m.ncells; c++)
    for (int k = 0; k < N; k++) {
      double x[3] = {0, 0, 0};
      map_point(&m, c, b.nodes + k * dim, x);
      const int g = d.cell_dofs[(size_t)c * N + k];
      if (!seen[g]) {
        memcpy(pt + 3 * g, x, sizeof x), seen[g] = 1;
        int onb = 0;
        for (int q = 0; q < dim; q++) onb |= fabs(x[q]) < 1e-12 || fabs(x[q] - 1.0) < 1e-12;
        onbc_bad += onb != d.bc[g];
      } else
        for (int q = 0; q < dim; q++) worst = fmax(worst, fabs(pt[3 * g + q] - x[q]));
    }
  int unseen = 0;
  for (int i = 0; i < d.ndofs; i++) unseen += !seen[i];
  T_CHECK(worst < 1e-13 && unseen == 0, "%dD n %d P%d: a DoF placed %.3e apart by two cells; %d DoFs in no cell", dim,
          n, p, worst, unseen);
  T_CHECK(onbc_bad == 0, "%dD n %d P%d: %d DoFs marked boundary against their point", dim, n, p, onbc_bad);
  free(pt);
  free(seen);
  mf_simplex_dofs_free(&d);
  mf_simplex_basis_free(&b);
  mf_simplex_mesh_free(&m);
}

static int cmp_u64(const void *a, const void *b)
{
  const uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
  return (x > y) - (x < y);
}

/* Sorted vertices of k (2 or 3) packed: the reference key (nv^3 < 2^64 for these small meshes). */
static uint64_t ref_key(int k, const int *v, uint64_t nv)
{
  int s[3] = {v[0], v[1], k == 3 ? v[2] : 0};
  for (int i = 0; i < k; i++)
    for (int j = i + 1; j < k; j++)
      if (s[j] < s[i]) {
        const int t = s[i];
        s[i] = s[j], s[j] = t;
      }
  return k == 2 ? (uint64_t)s[0] * nv + s[1] : ((uint64_t)s[0] * nv + s[1]) * nv + s[2];
}

/* Sorted distinct keys; once: only those found exactly once. Returns their count. */
static size_t ref_unique(uint64_t *x, size_t n, int once)
{
  qsort(x, n, sizeof *x, cmp_u64);
  size_t u = 0;
  for (size_t i = 0; i < n;) {
    size_t j = i + 1;
    while (j < n && x[j] == x[i]) j++;
    if (!once || j - i == 1) x[u++] = x[i];
    i = j;
  }
  return u;
}

static size_t ref_find(const uint64_t *x, size_t n, uint64_t k)
{
  size_t lo = 0, hi = n;
  while (lo < hi) {
    const size_t mid = lo + (hi - lo) / 2;
    if (x[mid] < k) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/* The box mesh with its vertices renumbered and its cells reordered at random, boundary made again; the
 * edges' DoFs (p = 2), the faces' (3D, p = 3) and the boundary facets against the reference order. */
static void test_reference(mf_context ctx, int dim, int n, int p, unsigned seed)
{
  mf_simplex_mesh m;
  mf_simplex_basis b;
  mf_simplex_dofs d;
  T_CALL(mf_simplex_mesh_box(ctx, dim, n, &m));
  const int nvc = dim + 1, nv = m.nv;
  int *perm = malloc(sizeof(int) * nv), *cells = malloc(sizeof(int) * (size_t)m.ncells * nvc);
  double *coords = malloc(sizeof(double) * 3 * nv);
  for (int i = 0; i < nv; i++) perm[i] = i;
  for (int i = nv - 1; i > 0; i--) { /* Fisher-Yates with a fixed generator */
    seed = seed * 1103515245u + 12345u;
    const int j = (int)((seed >> 8) % (unsigned)(i + 1)), t = perm[i];
    perm[i] = perm[j], perm[j] = t;
  }
  for (int i = 0; i < nv; i++) memcpy(coords + 3 * perm[i], m.coords + 3 * i, sizeof(double) * 3);
  for (int c = 0; c < m.ncells; c++) { /* cell c goes to (c * 7919) mod ncells: a permutation when coprime */
    int to = (int)(((long)c * 7919) % m.ncells);
    if (m.ncells % 7919 == 0) to = c;
    for (int k = 0; k < nvc; k++) cells[(size_t)to * nvc + k] = perm[m.cells[(size_t)c * nvc + k]];
  }
  memcpy(m.coords, coords, sizeof(double) * 3 * nv);
  memcpy(m.cells, cells, sizeof(int) * (size_t)m.ncells * nvc);
  free(m.facets), free(m.facet_tag);
  m.facets = NULL, m.facet_tag = NULL, m.nfacets = 0;
  T_CALL(mf_simplex_mesh_boundary(ctx, &m));
  T_CALL(mf_simplex_basis_setup(ctx, dim, p, -1, &b));
  T_CALL(mf_simplex_dofs_create(ctx, &m, &b, &d));
  const int ne = dim == 2 ? 3 : 6, nf = dim == 2 ? 0 : 4, N = b.nnodes;
  static const int tri_e[3][2] = {{0, 1}, {0, 2}, {1, 2}}, tet_e[6][2] = {{0, 1}, {0, 2}, {0, 3}, {1, 2}, {1, 3}, {2, 3}};
  static const int tet_f[4][3] = {{0, 1, 2}, {0, 1, 3}, {0, 2, 3}, {1, 2, 3}};
  static const int tri_s[3][2] = {{1, 2}, {0, 2}, {0, 1}};
  uint64_t *ek = malloc(sizeof(uint64_t) * (size_t)m.ncells * 6), *fk = malloc(sizeof(uint64_t) * (size_t)m.ncells * 4);
  for (int c = 0; c < m.ncells; c++) {
    const int *v = m.cells + (size_t)c * nvc;
    for (int e = 0; e < ne; e++) {
      const int *l = dim == 2 ? tri_e[e] : tet_e[e], ev[2] = {v[l[0]], v[l[1]]};
      ek[(size_t)c * ne + e] = ref_key(2, ev, nv);
    }
    for (int f = 0; f < nvc; f++) { /* facets: all but vertex f */
      int fv[3];
      if (dim == 2) fv[0] = v[tri_s[f][0]], fv[1] = v[tri_s[f][1]];
      else fv[0] = v[tet_f[3 - f][0]], fv[1] = v[tet_f[3 - f][1]], fv[2] = v[tet_f[3 - f][2]];
      fk[(size_t)c * nvc + f] = ref_key(dim, fv, nv);
    }
  }
  const size_t nb = ref_unique(fk, (size_t)m.ncells * nvc, 1);
  int bad = nb != (size_t)m.nfacets;
  for (size_t t = 0; !bad && t < nb; t++) bad = ref_key(dim, m.facets + t * dim, nv) != fk[t];
  T_CHECK(!bad, "%dD n %d: boundary facets (%d) differ from the reference (%zu) in number or order", dim, n, m.nfacets, nb);
  const size_t nek = ref_unique(ek, (size_t)m.ncells * ne, 0);
  T_CHECK(nek == (size_t)d.nedges, "%dD n %d: %d edges, the reference has %zu", dim, n, d.nedges, nek);
  int wrong = 0;
  if (p == 2)
    for (int c = 0; c < m.ncells; c++)
      for (int e = 0; e < ne; e++) {
        const int *v = m.cells + (size_t)c * nvc, *l = dim == 2 ? tri_e[e] : tet_e[e], ev[2] = {v[l[0]], v[l[1]]};
        wrong += d.cell_dofs[(size_t)c * N + nvc + e] - nv != (int)ref_find(ek, nek, ref_key(2, ev, nv));
      }
  if (p == 3 && dim == 3) {
    for (int c = 0; c < m.ncells; c++)
      for (int f = 0; f < nf; f++) {
        const int *v = m.cells + (size_t)c * nvc, fv[3] = {v[tet_f[f][0]], v[tet_f[f][1]], v[tet_f[f][2]]};
        fk[(size_t)c * nf + f] = ref_key(3, fv, nv);
      }
    const size_t nfk = ref_unique(fk, (size_t)m.ncells * nf, 0);
    T_CHECK(nfk == (size_t)d.nfaces, "3D n %d: %d faces, the reference has %zu", n, d.nfaces, nfk);
    for (int c = 0; c < m.ncells; c++)
      for (int f = 0; f < nf; f++) {
        const int *v = m.cells + (size_t)c * nvc, fv[3] = {v[tet_f[f][0]], v[tet_f[f][1]], v[tet_f[f][2]]};
        wrong += d.cell_dofs[(size_t)c * N + nvc + 2 * ne + f] - (nv + 2 * d.nedges) !=
                 (int)ref_find(fk, nfk, ref_key(3, fv, nv));
      }
  }
  T_CHECK(wrong == 0, "%dD n %d P%d: %d entity DoFs differ from the reference numbering", dim, n, p, wrong);
  free(ek), free(fk), free(perm), free(cells), free(coords);
  mf_simplex_dofs_free(&d);
  mf_simplex_basis_free(&b);
  mf_simplex_mesh_free(&m);
}

int main(int argc, char **argv)
{
  MPI_Init(&argc, &argv);
  mf_context ctx;
  T_CALL(mf_context_create(MPI_COMM_SELF, "cpu", &ctx));
  for (int dim = 2; dim <= 3; dim++)
    for (int p = 1; p <= 4; p++)
      for (int n = 1; n <= 3; n++) test_structure(ctx, dim, n, p);
  for (int dim = 2; dim <= 3; dim++)
    for (int p = 2; p <= 3; p++) test_reference(ctx, dim, dim == 2 ? 24 : 7, p, 12345u + (unsigned)p);
  for (int dim = 2; dim <= 3; dim++)
    for (int p = 1; p <= 3; p++) {
      const int n0 = dim == 2 ? 4 : (p == 1 ? 2 : 3), nlev = dim == 2 ? 3 : (p == 1 ? 4 : 2);
      double e[4], h[4];
      for (int l = 0; l < nlev; l++) e[l] = poisson_error(ctx, dim, p, n0 << l, &h[l]);
      const double rate = log2(e[nlev - 2] / e[nlev - 1]), hrate = log2(h[nlev - 2] / h[nlev - 1]);
      T_CHECK(rate >= p + 0.8 && rate <= p + 1.3, "P%d %dD: L2 errors %.3e -> %.3e, rate %.2f outside [%.1f, %.1f]", p, dim,
              e[nlev - 2], e[nlev - 1], rate, p + 0.8, p + 1.3);
      T_CHECK(hrate >= p - 0.2 && hrate <= p + 0.3, "P%d %dD: H1 errors %.3e -> %.3e, rate %.2f outside [%.1f, %.1f]", p,
              dim, h[nlev - 2], h[nlev - 1], hrate, p - 0.2, p + 0.3);
      if (getenv("MFREE_TEST_VERBOSE"))
        printf("P%d %dD: L2 errors %.3e -> %.3e, rate %.2f; H1 %.3e -> %.3e, rate %.2f\n", p, dim, e[nlev - 2],
               e[nlev - 1], rate, h[nlev - 2], h[nlev - 1], hrate);
    }
  mf_simplex_mesh m;
  EXPECT(mf_simplex_mesh_box(ctx, 4, 2, &m), MF_ERR_ARGUMENT, "dimension 4 is not 2 or 3");
  EXPECT(mf_simplex_mesh_box(ctx, 3, 0, &m), MF_ERR_ARGUMENT, "0 cells per direction out of range 1..256");
  mf_simplex_basis b;
  mf_simplex_dofs d;
  T_CALL(mf_simplex_mesh_box(ctx, 2, 2, &m));
  T_CALL(mf_simplex_basis_setup(ctx, 3, 1, -1, &b));
  EXPECT(mf_simplex_dofs_create(ctx, &m, &b, &d), MF_ERR_INCOMPATIBLE, "a 3D basis on a 2D mesh");
  mf_simplex_basis_free(&b);
  mf_simplex_mesh_free(&m);
  mf_context_destroy(&ctx);
  MPI_Finalize();
  return t_failures ? 1 : 0;
}
