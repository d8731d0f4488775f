/* t01_basis -- 1D rules and bases: Gauss and Gauss-Lobatto rules integrate the polynomials they
 * must exactly, Lagrange interpolation and derivative matrices are exact on polynomials, and the
 * tensor sweep equals the dense Kronecker product. */
#include "mf_test.h"
#include "mf_testing.h"

static double mono(double x, int k) { return k < 0 ? 0.0 : pow(x, k); }

int main(int argc, char **argv)
{
  MPI_Init(&argc, &argv);
  for (int n = 2; n <= MF_MAX_NQ; n++) {
    double x[MF_MAX_NQ], w[MF_MAX_NQ];
    mf_gauss(n, x, w);
    for (int k = 0; k <= 2 * n - 1; k++) {
      double s = 0.0;
      for (int i = 0; i < n; i++) s += w[i] * mono(x[i], k);
      T_CHECK(fabs(s - 1.0 / (k + 1)) < 1e-14, "Gauss n=%d: int x^%d = %.17g, exact %.17g", n, k, s, 1.0 / (k + 1));
    }
    mf_gauss_lobatto(n, x, w);
    T_CHECK(x[0] == 0.0 && x[n - 1] == 1.0, "GLL n=%d endpoints %g %g", n, x[0], x[n - 1]);
    for (int i = 1; i < n; i++) T_CHECK(x[i] > x[i - 1], "GLL n=%d nodes not increasing at %d", n, i);
    for (int k = 0; k <= 2 * n - 3; k++) {
      double s = 0.0;
      for (int i = 0; i < n; i++) s += w[i] * mono(x[i], k);
      T_CHECK(fabs(s - 1.0 / (k + 1)) < 1e-14, "GLL n=%d: int x^%d = %.17g, exact %.17g", n, k, s, 1.0 / (k + 1));
    }
  }
  /* bases of every degree and rule: B and Bg exact on x^k, k <= p; D exact on x^k, k < nq */
  for (int p = 1; p <= MF_MAX_DEGREE; p++)
    for (int quad = 0; quad < 3; quad++) {
      mf_basis1d b;
      T_CHECK(mf_basis1d_setup(p, (mf_quadrature)quad, &b) == 0, "basis setup p=%d quad=%d", p, quad);
      double nodes[MF_MAX_N1], w[MF_MAX_N1];
      mf_gauss_lobatto(b.n1, nodes, w);
      for (int k = 0; k <= p; k++)
        for (int i = 0; i < b.nq; i++) {
          double v = 0.0, g = 0.0;
          for (int j = 0; j < b.n1; j++) {
            v += b.B[i * b.n1 + j] * mono(nodes[j], k);
            g += b.Bg[i * b.n1 + j] * mono(nodes[j], k);
          }
          T_CHECK(fabs(v - mono(b.qpts[i], k)) < 1e-13, "p=%d quad=%d: B x^%d at q%d off by %g", p, quad, k, i,
                  v - mono(b.qpts[i], k));
          T_CHECK(fabs(g - k * mono(b.qpts[i], k - 1)) < 1e-11 * (1 + k), "p=%d quad=%d: Bg x^%d at q%d off by %g",
                  p, quad, k, i, g - k * mono(b.qpts[i], k - 1));
        }
      for (int k = 0; k < b.nq; k++)
        for (int i = 0; i < b.nq; i++) {
          double g = 0.0;
          for (int j = 0; j < b.nq; j++) g += b.D[i * b.nq + j] * mono(b.qpts[j], k);
          T_CHECK(fabs(g - k * mono(b.qpts[i], k - 1)) < 1e-11 * (1 + k), "p=%d quad=%d: D x^%d at q%d off by %g", p,
                  quad, k, i, g - k * mono(b.qpts[i], k - 1));
        }
      if (quad == MF_QUAD_GLL)
        for (int i = 0; i < b.nq * b.n1; i++) T_CHECK(b.B[i] == (i / b.n1 == i % b.n1), "collocated B not identity");
    }
  /* the tensor sweep against the dense Kronecker product (3D, non-square factor) */
  {
    const int n = 3, m = 4;
    double M[3][4 * 3], u[27], out[64], t1[64], t2[64], dense[64];
    for (int d = 0; d < 3; d++)
      for (int i = 0; i < m * n; i++) M[d][i] = sin(1.0 + i + 7 * d);
    for (int i = 0; i < 27; i++) u[i] = cos(0.3 * i);
    int sz[3] = {n, n, n};
    mf_tensor_apply(3, sz, 0, M[0], m, 0, u, t1, 0);
    sz[0] = m;
    mf_tensor_apply(3, sz, 1, M[1], m, 0, t1, t2, 0);
    sz[1] = m;
    mf_tensor_apply(3, sz, 2, M[2], m, 0, t2, out, 0);
    for (int I = 0; I < 64; I++) {
      int a = I % 4, b2 = (I / 4) % 4, c = I / 16;
      dense[I] = 0.0;
      for (int J = 0; J < 27; J++) {
        int i = J % 3, j = (J / 3) % 3, k = J / 9;
        dense[I] += M[0][a * n + i] * M[1][b2 * n + j] * M[2][c * n + k] * u[J];
      }
      T_CHECK(fabs(dense[I] - out[I]) < 1e-13, "tensor sweep entry %d: %g vs dense %g", I, out[I], dense[I]);
    }
  }
  /* degrees and rules the arrays cannot hold are refused, not written past their end */
  {
    mf_basis1d bad;
    EXPECT(mf_basis1d_setup(MF_MAX_DEGREE + 1, MF_QUAD_GAUSS, &bad), MF_ERR_ARGUMENT, "degree 9 out of range 1..8");
    EXPECT(mf_basis1d_setup(0, MF_QUAD_GLL, &bad), MF_ERR_ARGUMENT, "degree 0 out of range");
    EXPECT(mf_basis1d_setup(2, (mf_quadrature)7, &bad), MF_ERR_ARGUMENT, "quadrature 7 unknown");
  }
  return t_finish();
}
