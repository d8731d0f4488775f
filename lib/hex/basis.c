/* basis.c -- 1D Gauss and Gauss-Lobatto rules, Lagrange bases, and the tensor-product sweep that
 * every sum-factorised kernel is built from. All rules live on [0,1]. */
#include "hex/mf_hex_op.h"

#include <math.h>

/* Legendre P_n(x) and its derivative on [-1,1] by the three-term recurrence. */
static void legendre(int n, double x, double *p, double *dp)
{
  double p0 = 1.0, p1 = x;
  if (n == 0) {
    *p = 1.0;
    *dp = 0.0;
    return;
  }
  for (int k = 2; k <= n; k++) {
    double p2 = ((2.0 * k - 1.0) * x * p1 - (k - 1.0) * p0) / k;
    p0 = p1;
    p1 = p2;
  }
  *p = p1;
  /* P_n' = n (x P_n - P_{n-1}) / (x^2 - 1); nodes here are interior so x^2 != 1 */
  *dp = n * (x * p1 - p0) / (x * x - 1.0);
}

void mf_gauss(int n, double *x, double *w)
{
  for (int i = 0; i < n; i++) {
    /* Chebyshev-like initial guess, Newton on P_n */
    double z = -cos(M_PI * (i + 0.75) / (n + 0.5)), p, dp;
    for (int it = 0; it < 100; it++) {
      legendre(n, z, &p, &dp);
      double dz = p / dp;
      z -= dz;
      if (fabs(dz) < 1e-16) break;
    }
    legendre(n, z, &p, &dp);
    x[i] = 0.5 * (1.0 + z);
    w[i] = 1.0 / ((1.0 - z * z) * dp * dp); /* 2/((1-z^2)P'^2) halved for [0,1] */
  }
}

void mf_gauss_lobatto(int n, double *x, double *w)
{
  /* nodes: -1, 1 and the roots of P'_{n-1}; weights 2/(n(n-1) P_{n-1}(z)^2) on [-1,1] */
  int m = n - 1;
  for (int i = 0; i < n; i++) {
    double z = -cos(M_PI * i / m);
    if (i > 0 && i < m) {
      /* Newton on q(z) = P_m'(z), with q' from the Legendre ODE: (1-z^2)P'' = 2zP' - m(m+1)P */
      for (int it = 0; it < 100; it++) {
        double p, dp;
        legendre(m, z, &p, &dp);
        double d2p = (2.0 * z * dp - m * (m + 1.0) * p) / (1.0 - z * z);
        double dz = dp / d2p;
        z -= dz;
        if (fabs(dz) < 1e-16) break;
      }
    }
    double p, dp;
    if (i == 0 || i == m) p = (i == 0 && (m % 2)) ? -1.0 : 1.0;
    else legendre(m, z, &p, &dp);
    x[i] = 0.5 * (1.0 + z);
    w[i] = 1.0 / (m * (m + 1.0) * p * p);
  }
  x[0] = 0.0;
  x[m] = 1.0;
}

void mf_lagrange_eval(int n, const double *nodes, int m, const double *pts, double *V, double *G)
{
  for (int i = 0; i < m; i++) {
    double t = pts[i];
    for (int j = 0; j < n; j++) {
      double v = 1.0, g = 0.0;
      for (int k = 0; k < n; k++) {
        if (k == j) continue;
        double f = 1.0 / (nodes[j] - nodes[k]);
        /* product rule: (v * (t - x_k) f)' = g (t - x_k) f + v f */
        g = g * (t - nodes[k]) * f + v * f;
        v = v * (t - nodes[k]) * f;
      }
      if (V) V[i * n + j] = v;
      if (G) G[i * n + j] = g;
    }
  }
}

int mf_basis1d_setup(int degree, mf_quadrature quad, mf_basis1d *b)
{
  double nodes[MF_MAX_N1], w[MF_MAX_N1];
  memset(b, 0, sizeof *b);
  /* the arrays hold degree MF_MAX_DEGREE with q = p + 2 at most */
  MF_CHECK(degree >= 1 && degree <= MF_MAX_DEGREE, NULL, MF_ERR_ARGUMENT, "1D basis: degree %d out of range 1..%d",
           degree, MF_MAX_DEGREE);
  MF_CHECK(quad == MF_QUAD_GAUSS || quad == MF_QUAD_GAUSS_P2 || quad == MF_QUAD_GLL, NULL, MF_ERR_ARGUMENT,
           "1D basis: quadrature %d unknown", (int)quad);
  b->n1 = degree + 1;
  mf_gauss_lobatto(b->n1, nodes, w);
  switch (quad) {
  case MF_QUAD_GAUSS: b->nq = degree + 1; mf_gauss(b->nq, b->qpts, b->qwts); break;
  case MF_QUAD_GAUSS_P2: b->nq = degree + 2; mf_gauss(b->nq, b->qpts, b->qwts); break;
  case MF_QUAD_GLL:
    b->nq = degree + 1;
    b->collocated = 1;
    mf_gauss_lobatto(b->nq, b->qpts, b->qwts);
    break;
  default: break; /* MF_QUAD_GAUSS_M2: refused above (simplex physics only) */
  }
  mf_lagrange_eval(b->n1, nodes, b->nq, b->qpts, b->B, b->Bg);
  if (b->collocated) /* exact identity, not identity up to rounding */
    for (int i = 0; i < b->nq; i++)
      for (int j = 0; j < b->n1; j++) b->B[i * b->n1 + j] = (i == j);
  mf_lagrange_eval(b->nq, b->qpts, b->nq, b->qpts, NULL, b->D);
  for (int i = 0; i < b->nq * b->n1; i++) {
    b->BB[i] = b->B[i] * b->B[i];
    b->BG[i] = b->B[i] * b->Bg[i];
    b->GG[i] = b->Bg[i] * b->Bg[i];
  }
  return 0;
}

void mf_tensor_apply(int dim, const int *nin, int d, const double *M, int m, int trans,
                     const double *in, double *out, int add)
{
  int pre = 1, post = 1, nd = nin[d];
  for (int k = 0; k < d; k++) pre *= nin[k];
  for (int k = d + 1; k < dim; k++) post *= nin[k];
  for (int s = 0; s < post; s++)
    for (int i = 0; i < m; i++)
      for (int r = 0; r < pre; r++) {
        double acc = 0.0;
        for (int j = 0; j < nd; j++) {
          double mij = trans ? M[j * m + i] : M[i * nd + j];
          acc += mij * in[((size_t)s * nd + j) * pre + r];
        }
        double *o = &out[((size_t)s * m + i) * pre + r];
        *o = add ? *o + acc : acc;
      }
}
