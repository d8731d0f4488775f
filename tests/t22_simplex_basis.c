/* t22_simplex_basis -- the reference simplex layer: quadrature exact on monomials (int x^a y^b z^c
 * = a! b! c! / (a + b + c + dim)!), Lagrange bases p = 1..6 in 2D and 3D (phi_n(node_k) = delta,
 * partition of unity, polynomials of degree <= p reproduced, the gradient against finite
 * differences, node entities counted), element matrices (P1 triangle mass and stiffness against the
 * closed forms, the mass of 1 is the volume, stiffness rows sum to 0, x^T K x = |grad u|^2 vol for
 * affine u, symmetry), and refusals (degree, dim, quadrature degree, degenerate cells). */
#include "mf_test.h"
#include "simplex/mf_simplex.h"

static double fact(int n)
{
  double f = 1.0;
  for (int k = 2; k <= n; k++) f *= k;
  return f;
}

static double poly(int dim, int p, const double *x) /* a polynomial of total degree p */
{
  double v = 0.3;
  for (int k = 1; k <= p; k++) v += 0.7 * pow(x[0] - 0.2 * x[1], k) / k + (dim == 3 ? 0.4 * pow(x[2] + 0.1 * x[1], k) : 0.0);
  return v;
}

static void test_quadrature(int dim)
{
  for (int q = 0; q <= 14; q++) {
    const int nq = mf_simplex_quadrature(dim, q, NULL, NULL), n1 = (q + 2) / 2;
    /* Gauss-Jacobi in the collapsed coordinates: ceil((q + 1) / 2) points per direction */
    T_CHECK(nq == (dim == 2 ? n1 * n1 : n1 * n1 * n1), "dim %d rule %d: %d points, expected %d^%d", dim, q, nq, n1, dim);
    double *pts = malloc(sizeof(double) * nq * dim), *w = malloc(sizeof(double) * nq);
    mf_simplex_quadrature(dim, q, pts, w);
    for (int a = 0; a <= q; a++)
      for (int b = 0; a + b <= q; b++)
        for (int c = 0; a + b + c <= (dim == 3 ? q : a + b); c++) {
          double s = 0.0;
          for (int k = 0; k < nq; k++)
            s += w[k] * pow(pts[k * dim], a) * pow(pts[k * dim + 1], b) * (dim == 3 ? pow(pts[k * dim + 2], c) : 1.0);
          const double exact = fact(a) * fact(b) * fact(c) / fact(a + b + c + dim);
          T_CHECK(fabs(s - exact) <= 1e-14 * fmax(1.0, exact) + 1e-16, "dim %d rule %d: x^%d y^%d z^%d: %.17g vs %.17g",
                  dim, q, a, b, c, s, exact);
        }
    free(pts);
    free(w);
  }
}

static void test_basis(mf_context ctx, int dim, int p)
{
  mf_simplex_basis b;
  T_CALL(mf_simplex_basis_setup(ctx, dim, p, -1, &b));
  const int N = b.nnodes;
  T_CHECK(N == (dim == 2 ? (p + 1) * (p + 2) / 2 : (p + 1) * (p + 2) * (p + 3) / 6), "P%d %dD: %d nodes", p, dim, N);
  /* entity counts: dim + 1 vertices, (p - 1) per edge, (p-1)(p-2)/2 per face, interior */
  int cnt[4] = {0, 0, 0, 0};
  for (int n = 0; n < N; n++) cnt[b.node_entity[n]]++;
  const int ne = dim == 2 ? 3 : 6, nf = dim == 2 ? 1 : 4;
  T_CHECK(cnt[0] == dim + 1 && cnt[1] == ne * (p - 1) && cnt[2] == nf * (p - 1) * (p - 2) / 2 &&
              (dim == 2 || cnt[3] == (p - 1) * (p - 2) * (p - 3) / 6),
          "P%d %dD: entity counts %d %d %d %d", p, dim, cnt[0], cnt[1], cnt[2], cnt[3]);
  double *phi = malloc(sizeof(double) * N), *gr = malloc(sizeof(double) * N * dim), *ph2 = malloc(sizeof(double) * N);
  double maxd = 0.0;
  for (int k = 0; k < N; k++) { /* Kronecker property */
    mf_simplex_basis_eval(&b, b.nodes + k * dim, phi, NULL);
    for (int n = 0; n < N; n++) maxd = fmax(maxd, fabs(phi[n] - (n == k ? 1.0 : 0.0)));
  }
  T_CHECK(maxd < 1e-11, "P%d %dD: phi_n(node_k) off delta by %.3e", p, dim, maxd);
  uint64_t z = 12345;
  for (int t = 0; t < 20; t++) { /* random points inside: unity, reproduction, gradient */
    double x[3] = {0, 0, 0}, s = 0.0;
    for (int d = 0; d < dim; d++) {
      z = z * 6364136223846793005ULL + 1442695040888963407ULL;
      x[d] = (double)(z >> 11) / 9007199254740992.0 * (1.0 - s);
      s += x[d];
    }
    mf_simplex_basis_eval(&b, x, phi, gr);
    double sum = 0.0, u = 0.0, gsum[3] = {0, 0, 0};
    for (int n = 0; n < N; n++) {
      sum += phi[n];
      u += phi[n] * poly(dim, p, b.nodes + n * dim);
      for (int d = 0; d < dim; d++) gsum[d] += gr[n * dim + d];
    }
    T_CHECK(fabs(sum - 1.0) < 1e-11, "P%d %dD: sum of phi %.17g", p, dim, sum);
    T_CHECK(fabs(u - poly(dim, p, x)) < 1e-10, "P%d %dD: degree-%d polynomial not reproduced (%.3e)", p, dim, p,
            fabs(u - poly(dim, p, x)));
    for (int d = 0; d < dim; d++) {
      T_CHECK(fabs(gsum[d]) < 1e-9, "P%d %dD: sum of d phi/dx%d = %.3e", p, dim, d, gsum[d]);
      const double h = 1e-6;
      double xp[3] = {x[0], x[1], x[2]}, xm[3] = {x[0], x[1], x[2]};
      xp[d] += h, xm[d] -= h;
      mf_simplex_basis_eval(&b, xp, ph2, NULL);
      double fd[84];
      for (int n = 0; n < N; n++) fd[n] = ph2[n];
      mf_simplex_basis_eval(&b, xm, ph2, NULL);
      for (int n = 0; n < N; n++) {
        const double g = (fd[n] - ph2[n]) / (2 * h);
        T_CHECK(fabs(g - gr[n * dim + d]) < 1e-5 * fmax(1.0, fabs(g)), "P%d %dD: d phi_%d/dx%d %.9g vs difference %.9g",
                p, dim, n, d, gr[n * dim + d], g);
      }
    }
  }
  /* element matrices on a distorted affine cell */
  double X[12] = {0.1, 0.2, 0.0, 1.3, 0.1, 0.2, 0.2, 0.9, 0.1, 0.3, 0.4, 1.1};
  if (dim == 2) {
    const double X2[6] = {0.1, 0.2, 1.3, 0.1, 0.2, 0.9};
    memcpy(X, X2, sizeof X2);
  }
  double *M = malloc(sizeof(double) * N * N), *K = malloc(sizeof(double) * N * N), det;
  T_CALL(mf_simplex_element_matrices(ctx, &b, X, M, K, &det));
  const double vol = det / (dim == 2 ? 2.0 : 6.0);
  double msum = 0.0, asym = 0.0, rowmax = 0.0;
  for (int i = 0; i < N; i++) {
    double r = 0.0;
    for (int j = 0; j < N; j++) {
      msum += M[i * N + j];
      r += K[i * N + j];
      asym = fmax(asym, fabs(M[i * N + j] - M[j * N + i]) + fabs(K[i * N + j] - K[j * N + i]));
    }
    rowmax = fmax(rowmax, fabs(r));
  }
  T_CHECK(fabs(msum - vol) < 1e-13 * vol, "P%d %dD: mass of 1 = %.17g, volume %.17g", p, dim, msum, vol);
  T_CHECK(rowmax < 1e-11, "P%d %dD: a stiffness row sums to %.3e", p, dim, rowmax);
  T_CHECK(asym < 1e-13, "P%d %dD: element matrices not symmetric (%.3e)", p, dim, asym);
  /* u = 1 + 2x - 3y (+ 0.5 z): u^T K u = |grad u|^2 vol (the nodes mapped to the cell) */
  double *uu = malloc(sizeof(double) * N), g2 = dim == 2 ? 4.0 + 9.0 : 4.0 + 9.0 + 0.25, quad = 0.0;
  for (int n = 0; n < N; n++) {
    double xp[3] = {X[0], X[1], dim == 3 ? X[2] : 0.0};
    for (int l = 0; l < dim; l++)
      for (int k = 0; k < dim; k++) xp[k] += (X[(l + 1) * dim + k] - X[k]) * b.nodes[n * dim + l];
    uu[n] = 1.0 + 2.0 * xp[0] - 3.0 * xp[1] + (dim == 3 ? 0.5 * xp[2] : 0.0);
  }
  for (int i = 0; i < N; i++)
    for (int j = 0; j < N; j++) quad += uu[i] * K[i * N + j] * uu[j];
  T_CHECK(fabs(quad - g2 * vol) < 1e-11 * g2 * vol, "P%d %dD: u^T K u = %.17g, |grad u|^2 vol = %.17g", p, dim, quad,
          g2 * vol);
  free(uu);
  free(M);
  free(K);
  free(phi);
  free(gr);
  free(ph2);
  mf_simplex_basis_free(&b);
}

static void test_p1_closed_forms(mf_context ctx)
{
  mf_simplex_basis b;
  T_CALL(mf_simplex_basis_setup(ctx, 2, 1, -1, &b));
  const double X[6] = {0, 0, 1, 0, 0, 1};
  double M[9], K[9];
  T_CALL(mf_simplex_element_matrices(ctx, &b, X, M, K, NULL));
  const double Me[9] = {2, 1, 1, 1, 2, 1, 1, 1, 2}, Ke[9] = {1, -0.5, -0.5, -0.5, 0.5, 0, -0.5, 0, 0.5};
  for (int k = 0; k < 9; k++) {
    T_CHECK(fabs(M[k] - Me[k] / 24.0) < 1e-15, "P1 mass entry %d: %.17g vs %.17g", k, M[k], Me[k] / 24.0);
    T_CHECK(fabs(K[k] - Ke[k]) < 1e-15, "P1 stiffness entry %d: %.17g vs %.17g", k, K[k], Ke[k]);
  }
  mf_simplex_basis_free(&b);
}

static void test_refusals(mf_context ctx)
{
  mf_simplex_basis b;
  EXPECT(mf_simplex_basis_setup(ctx, 2, 0, -1, &b), MF_ERR_ARGUMENT, "degree 0 out of range");
  EXPECT(mf_simplex_basis_setup(ctx, 3, 7, -1, &b), MF_ERR_ARGUMENT, "degree 7 out of range");
  EXPECT(mf_simplex_basis_setup(ctx, 1, 2, -1, &b), MF_ERR_ARGUMENT, "dimension 1 is not 2 or 3");
  EXPECT(mf_simplex_basis_setup(ctx, 2, 2, 99, &b), MF_ERR_ARGUMENT, "quadrature degree 99");
  T_CALL(mf_simplex_basis_setup(ctx, 3, 2, -1, &b));
  const double flat[12] = {0, 0, 0, 1, 0, 0, 0, 1, 0, 1, 1, 0}; /* four points in z = 0 */
  double M[100];
  EXPECT(mf_simplex_element_matrices(ctx, &b, flat, M, NULL, NULL), MF_ERR_ARGUMENT, "degenerate tetrahedron");
  mf_simplex_basis_free(&b);
}

int main(int argc, char **argv)
{
  MPI_Init(&argc, &argv);
  mf_context ctx;
  T_CALL(mf_context_create(MPI_COMM_SELF, "cpu", &ctx));
  test_quadrature(2);
  test_quadrature(3);
  for (int dim = 2; dim <= 3; dim++)
    for (int p = 1; p <= MF_SIMPLEX_MAX_DEGREE; p++) test_basis(ctx, dim, p);
  test_p1_closed_forms(ctx);
  test_refusals(ctx);
  mf_context_destroy(&ctx);
  MPI_Finalize();
  return t_failures ? 1 : 0;
}
