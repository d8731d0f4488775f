/* basis.c -- Lagrange P_p bases and quadrature on the reference triangle and tetrahedron (the node
 * order and the formulas: mf_simplex.h). */
#include "mf_simplex.h"

#include <math.h>

static const int tri_edges[3][2] = {{0, 1}, {0, 2}, {1, 2}};
static const int tet_edges[6][2] = {{0, 1}, {0, 2}, {0, 3}, {1, 2}, {1, 3}, {2, 3}};
static const int tet_faces[4][3] = {{0, 1, 2}, {0, 1, 3}, {0, 2, 3}, {1, 2, 3}};

static int nchoose(int p, int dim) { return dim == 2 ? (p + 1) * (p + 2) / 2 : (p + 1) * (p + 2) * (p + 3) / 6; }

static void vertex(int dim, int v, double *x)
{
  for (int d = 0; d < dim; d++) x[d] = (v == d + 1) ? 1.0 : 0.0;
}

/* The nodes in entity order; returns their count. */
static int make_nodes(int dim, int p, double *X, int *entity)
{
  int n = 0;
  double va[3], vb[3], vc[3];
  for (int v = 0; v <= dim; v++, n++) {
    vertex(dim, v, X + n * dim);
    entity[n] = 0;
  }
  const int ne = dim == 2 ? 3 : 6;
  for (int e = 0; e < ne; e++) {
    const int *ed = dim == 2 ? tri_edges[e] : tet_edges[e];
    vertex(dim, ed[0], va);
    vertex(dim, ed[1], vb);
    for (int k = 1; k < p; k++, n++) {
      for (int d = 0; d < dim; d++) X[n * dim + d] = va[d] + (double)k / p * (vb[d] - va[d]);
      entity[n] = 1;
    }
  }
  const int nf = dim == 2 ? 1 : 4;
  for (int f = 0; f < nf; f++) {
    const int tri[3] = {0, 1, 2};
    const int *fc = dim == 2 ? tri : tet_faces[f];
    vertex(dim, fc[0], va);
    vertex(dim, fc[1], vb);
    vertex(dim, fc[2], vc);
    for (int j = 1; j < p; j++)
      for (int i = 1; i + j < p; i++, n++) {
        for (int d = 0; d < dim; d++)
          X[n * dim + d] = va[d] + (double)i / p * (vb[d] - va[d]) + (double)j / p * (vc[d] - va[d]);
        entity[n] = 2;
      }
  }
  if (dim == 3)
    for (int k = 1; k < p; k++)
      for (int j = 1; j + k < p; j++)
        for (int i = 1; i + j + k < p; i++, n++) {
          X[n * 3 + 0] = (double)i / p;
          X[n * 3 + 1] = (double)j / p;
          X[n * 3 + 2] = (double)k / p;
          entity[n] = 3;
        }
  return n;
}

/* Monomial m of the centred, scaled coordinates y = 2 (x - c) (c the centroid: a better conditioned
 * Vandermonde matrix than with x itself; at P6 in 3D phi_n(node_k) is delta to 3e-12 instead of 1e-11
 * and the mass of 1 the volume to 1e-13 instead of 6e-13) and its gradient in x at x (exponents e:
 * 3 per monomial). */
static double mono_eval(int dim, const int *e, const double *x, double *g)
{
  double pw[3][MF_SIMPLEX_MAX_DEGREE + 1];
  const double c = 1.0 / (dim + 1);
  for (int d = 0; d < 3; d++) {
    pw[d][0] = 1.0;
    for (int k = 1; k <= MF_SIMPLEX_MAX_DEGREE; k++) pw[d][k] = pw[d][k - 1] * (d < dim ? 2.0 * (x[d] - c) : 0.0);
  }
  const double v = pw[0][e[0]] * pw[1][e[1]] * pw[2][e[2]];
  if (g)
    for (int d = 0; d < dim; d++) {
      if (e[d] == 0) {
        g[d] = 0.0;
        continue;
      }
      double t = 2.0 * e[d] * pw[d][e[d] - 1];
      for (int o = 0; o < 3; o++)
        if (o != d) t *= pw[o][e[o]];
      g[d] = t;
    }
  return v;
}

/* A (n x n, row-major) <- A^-1 by Gauss-Jordan with partial pivoting; 0, or 1 if singular. */
static int invert(int n, double *A, double *work)
{
  double *I = work;
  for (int i = 0; i < n * n; i++) I[i] = 0.0;
  for (int i = 0; i < n; i++) I[i * n + i] = 1.0;
  for (int c = 0; c < n; c++) {
    int piv = c;
    for (int r = c + 1; r < n; r++)
      if (fabs(A[r * n + c]) > fabs(A[piv * n + c])) piv = r;
    if (fabs(A[piv * n + c]) < 1e-300) return 1;
    if (piv != c)
      for (int k = 0; k < n; k++) {
        double t = A[c * n + k];
        A[c * n + k] = A[piv * n + k], A[piv * n + k] = t;
        t = I[c * n + k];
        I[c * n + k] = I[piv * n + k], I[piv * n + k] = t;
      }
    const double s = 1.0 / A[c * n + c];
    for (int k = 0; k < n; k++) A[c * n + k] *= s, I[c * n + k] *= s;
    for (int r = 0; r < n; r++) {
      if (r == c || A[r * n + c] == 0.0) continue;
      const double f = A[r * n + c];
      for (int k = 0; k < n; k++) A[r * n + k] -= f * A[c * n + k], I[r * n + k] -= f * I[c * n + k];
    }
  }
  for (int i = 0; i < n * n; i++) A[i] = I[i];
  return 0;
}

/* Gauss-Jacobi rule of n points for the weight (1 - t)^alpha on [0, 1] (alpha = 0: Gauss-Legendre):
 * the zeros x_k of the Jacobi polynomial P_n^(alpha,0) on [-1, 1] by Newton's method with the found
 * zeros deflated, t_k = (1 + x_k) / 2 ascending, and the weights 1 / ((1 - x_k^2) P_n'(x_k)^2) (the
 * [-1, 1] weights 2^(alpha+1) / ((1 - x^2) P_n'^2) scaled to [0, 1]). */
static void jacobi_eval(int n, double alpha, double x, double *p, double *dp)
{
  /* P_0 = 1, P_1 = ((alpha + 2) x + alpha) / 2, the three-term recurrence (beta = 0); P' from
   * (2n + alpha)(1 - x^2) P_n' = n [alpha - (2n + alpha) x] P_n + 2 n (n + alpha) P_{n-1} */
  double p0 = 1.0, p1 = n > 0 ? 0.5 * ((alpha + 2.0) * x + alpha) : 1.0;
  for (int k = 2; k <= n; k++) {
    const double a1 = 2.0 * k * (k + alpha) * (2.0 * k + alpha - 2.0);
    const double a2 = (2.0 * k + alpha - 1.0) * alpha * alpha;
    const double a3 = (2.0 * k + alpha - 2.0) * (2.0 * k + alpha - 1.0) * (2.0 * k + alpha);
    const double a4 = 2.0 * (k + alpha - 1.0) * (k - 1.0) * (2.0 * k + alpha);
    const double p2 = ((a2 + a3 * x) * p1 - a4 * p0) / a1;
    p0 = p1, p1 = p2;
  }
  *p = p1;
  *dp = n > 0 ? (n * (alpha - (2.0 * n + alpha) * x) * p1 + 2.0 * n * (n + alpha) * p0) / ((2.0 * n + alpha) * (1.0 - x * x))
              : 0.0;
}

static void gauss_jacobi(int n, double alpha, double *t, double *w)
{
  double x[2 * MF_SIMPLEX_MAX_DEGREE + 4];
  for (int k = 0; k < n; k++) {
    double r = -cos((2.0 * k + 1.0) * M_PI / (2.0 * n)); /* Chebyshev guess, averaged with the last zero */
    if (k > 0) r = 0.5 * (r + x[k - 1]);
    for (int it = 0; it < 100; it++) {
      double p, dp, s = 0.0;
      jacobi_eval(n, alpha, r, &p, &dp);
      for (int j = 0; j < k; j++) s += 1.0 / (r - x[j]);
      const double delta = -p / (dp - s * p);
      r += delta;
      if (fabs(delta) < 1e-16) break;
    }
    x[k] = r;
  }
  for (int k = 0; k < n; k++) {
    double p, dp;
    jacobi_eval(n, alpha, x[k], &p, &dp);
    t[k] = 0.5 * (1.0 + x[k]);
    w[k] = 1.0 / ((1.0 - x[k] * x[k]) * dp * dp);
  }
}

/* Collapsed coordinates with the Jacobian's factors in the weights of Gauss-Jacobi rules: x = s (1 - t),
 * y = t with weight (1 - t) in 2D; x = s (1 - t)(1 - u), y = t (1 - u), z = u with (1 - t)(1 - u)^2 in
 * 3D. A polynomial of total degree q is of degree <= q in each of s, t, u, so n = ceil((q + 1) / 2)
 * points per direction integrate it exactly. */
int mf_simplex_quadrature(int dim, int qdegree, double *pts, double *wts)
{
  const int n = (qdegree + 2) / 2 < 1 ? 1 : (qdegree + 2) / 2;
  const int nq = dim == 1 ? n : dim == 2 ? n * n : n * n * n;
  if (!pts || !wts) return nq;
  if (dim == 1) {
    gauss_jacobi(n, 0.0, pts, wts);
    return nq;
  }
  double g[3][2 * MF_SIMPLEX_MAX_DEGREE + 4], w[3][2 * MF_SIMPLEX_MAX_DEGREE + 4];
  for (int d = 0; d < dim; d++) gauss_jacobi(n, (double)d, g[d], w[d]); /* s: Legendre, t: alpha 1, u: alpha 2 */
  int q = 0;
  for (int c = 0; c < (dim == 3 ? n : 1); c++)
    for (int b = 0; b < n; b++)
      for (int a = 0; a < n; a++, q++) {
        const double s = g[0][a], t = g[1][b], u = dim == 3 ? g[2][c] : 0.0;
        if (dim == 2) {
          pts[2 * q] = s * (1.0 - t);
          pts[2 * q + 1] = t;
          wts[q] = w[0][a] * w[1][b];
        } else {
          pts[3 * q] = s * (1.0 - t) * (1.0 - u);
          pts[3 * q + 1] = t * (1.0 - u);
          pts[3 * q + 2] = u;
          wts[q] = w[0][a] * w[1][b] * w[2][c];
        }
      }
  return nq;
}

void mf_simplex_basis_eval(const mf_simplex_basis *b, const double *x, double *phi, double *grad)
{
  const int N = b->nnodes, dim = b->dim;
  for (int n = 0; n < N; n++) phi[n] = 0.0;
  if (grad)
    for (int k = 0; k < N * dim; k++) grad[k] = 0.0;
  for (int m = 0; m < N; m++) {
    double g[3];
    const double v = mono_eval(dim, b->mono + 3 * m, x, grad ? g : NULL);
    const double *c = b->coef + (size_t)m * N;
    for (int n = 0; n < N; n++) {
      phi[n] += c[n] * v;
      if (grad)
        for (int d = 0; d < dim; d++) grad[n * dim + d] += c[n] * g[d];
    }
  }
}

void mf_simplex_basis_free(mf_simplex_basis *b)
{
  if (!b) return;
  free(b->nodes);
  free(b->node_entity);
  free(b->coef);
  free(b->mono);
  free(b->qpts);
  free(b->qwts);
  free(b->B);
  free(b->G);
  memset(b, 0, sizeof *b);
}

int mf_simplex_basis_setup(mf_context ctx, int dim, int degree, int qdegree, mf_simplex_basis *b)
{
  MF_CHECK(b, ctx, MF_ERR_NULL, "output pointer b is NULL");
  memset(b, 0, sizeof *b);
  MF_CHECK(dim == 2 || dim == 3, ctx, MF_ERR_ARGUMENT, "simplex dimension %d is not 2 or 3", dim);
  MF_CHECK(degree >= 1 && degree <= MF_SIMPLEX_MAX_DEGREE, ctx, MF_ERR_ARGUMENT,
           "simplex degree %d out of range 1..%d", degree, MF_SIMPLEX_MAX_DEGREE);
  if (qdegree < 0) qdegree = 2 * degree;
  MF_CHECK(qdegree <= 2 * MF_SIMPLEX_MAX_DEGREE + 2, ctx, MF_ERR_ARGUMENT,
           "quadrature degree %d out of range 0..%d", qdegree, 2 * MF_SIMPLEX_MAX_DEGREE + 2);
  const int N = nchoose(degree, dim), nq = mf_simplex_quadrature(dim, qdegree, NULL, NULL);
  b->dim = dim;
  b->degree = degree;
  b->nnodes = N;
  b->qdegree = qdegree;
  b->nq = nq;
  double *work = NULL;
  int ierr = MF_CALLOC(ctx, (size_t)N * dim, &b->nodes);
  if (!ierr) ierr = MF_CALLOC(ctx, (size_t)N, &b->node_entity);
  if (!ierr) ierr = MF_CALLOC(ctx, (size_t)N * N, &b->coef);
  if (!ierr) ierr = MF_CALLOC(ctx, (size_t)N * 3, &b->mono);
  if (!ierr) ierr = MF_CALLOC(ctx, (size_t)nq * dim, &b->qpts);
  if (!ierr) ierr = MF_CALLOC(ctx, (size_t)nq, &b->qwts);
  if (!ierr) ierr = MF_CALLOC(ctx, (size_t)nq * N, &b->B);
  if (!ierr) ierr = MF_CALLOC(ctx, (size_t)nq * N * dim, &b->G);
  if (!ierr) ierr = MF_CALLOC(ctx, (size_t)N * N, &work);
  if (ierr) {
    free(work);
    mf_simplex_basis_free(b);
    return ierr;
  }
  const int made = make_nodes(dim, degree, b->nodes, b->node_entity);
  int m = 0; /* monomials x^a y^b z^c, a + b + c <= p, by total degree */
  for (int t = 0; t <= degree; t++)
    for (int c = 0; c <= (dim == 3 ? t : 0); c++)
      for (int bb = 0; bb + c <= t; bb++, m++) {
        b->mono[3 * m] = t - bb - c;
        b->mono[3 * m + 1] = bb;
        b->mono[3 * m + 2] = c;
      }
  /* V[k][m] = monomial m at node k; coef = V^-1 (coef[m][n]) */
  for (int k = 0; k < N; k++)
    for (int j = 0; j < N; j++) b->coef[k * N + j] = mono_eval(dim, b->mono + 3 * j, b->nodes + k * dim, NULL);
  ierr = (made != N || m != N) ? 1 : invert(N, b->coef, work);
  free(work);
  if (ierr) {
    mf_simplex_basis_free(b);
    return mf_error_set(ctx, MF_ERR_ARGUMENT, __FILE__, __LINE__, __func__,
                        "the P%d Vandermonde matrix on the %s is singular", degree, dim == 2 ? "triangle" : "tetrahedron");
  }
  mf_simplex_quadrature(dim, qdegree, b->qpts, b->qwts);
  for (int q = 0; q < nq; q++)
    mf_simplex_basis_eval(b, b->qpts + q * dim, b->B + (size_t)q * N, b->G + (size_t)q * N * dim);
  return 0;
}

double mf_simplex_affine(int dim, const double *X, double Ji[3][3], double *scale)
{
  double J[3][3], sc = 0.0; /* J[k][l] = d x_k / d xi_l = X_{l+1,k} - X_{0,k} */
  for (int k = 0; k < dim; k++)
    for (int l = 0; l < dim; l++) {
      J[k][l] = X[(l + 1) * dim + k] - X[k];
      sc = fmax(sc, fabs(J[k][l]));
    }
  if (scale) *scale = sc;
  double det;
  if (dim == 2) {
    det = J[0][0] * J[1][1] - J[0][1] * J[1][0];
    Ji[0][0] = J[1][1] / det, Ji[0][1] = -J[0][1] / det;
    Ji[1][0] = -J[1][0] / det, Ji[1][1] = J[0][0] / det;
  } else {
    det = J[0][0] * (J[1][1] * J[2][2] - J[1][2] * J[2][1]) - J[0][1] * (J[1][0] * J[2][2] - J[1][2] * J[2][0]) +
          J[0][2] * (J[1][0] * J[2][1] - J[1][1] * J[2][0]);
    for (int r = 0; r < 3; r++)
      for (int c = 0; c < 3; c++) { /* inverse = adjugate / det */
        const int r1 = (c + 1) % 3, r2 = (c + 2) % 3, c1 = (r + 1) % 3, c2 = (r + 2) % 3;
        Ji[r][c] = (J[r1][c1] * J[r2][c2] - J[r1][c2] * J[r2][c1]) / det;
      }
  }
  return det;
}

int mf_simplex_element_matrices(mf_context ctx, const mf_simplex_basis *b, const double *X, double *M, double *K,
                                double *detJ)
{
  const int dim = b->dim, N = b->nnodes;
  double Ji[3][3], scale;
  const double det = mf_simplex_affine(dim, X, Ji, &scale);
  MF_CHECK(fabs(det) > 1e-14 * pow(scale, dim), ctx, MF_ERR_ARGUMENT,
           "degenerate %s: |det J| = %.3e for edges of size %.3e", dim == 2 ? "triangle" : "tetrahedron", fabs(det),
           scale);
  const double adet = fabs(det);
  if (detJ) *detJ = adet;
  if (M) memset(M, 0, sizeof(double) * (size_t)N * N);
  if (K) memset(K, 0, sizeof(double) * (size_t)N * N);
  for (int q = 0; q < b->nq; q++) {
    const double w = b->qwts[q] * adet;
    const double *phi = b->B + (size_t)q * N, *gr = b->G + (size_t)q * N * dim;
    if (M)
      for (int i = 0; i < N; i++)
        for (int j = 0; j < N; j++) M[i * N + j] += w * phi[i] * phi[j];
    if (K) {
      double gp[84 * 3]; /* physical gradients grad_x phi = J^-T grad_xi phi (N <= 84 for p <= 6) */
      for (int i = 0; i < N; i++)
        for (int k = 0; k < dim; k++) {
          double s = 0.0;
          for (int l = 0; l < dim; l++) s += Ji[l][k] * gr[i * dim + l];
          gp[i * dim + k] = s;
        }
      for (int i = 0; i < N; i++)
        for (int j = 0; j < N; j++) {
          double s = 0.0;
          for (int k = 0; k < dim; k++) s += gp[i * dim + k] * gp[j * dim + k];
          K[i * N + j] += w * s;
        }
    }
  }
  return 0;
}
