/* t24_simplex_ops -- the CPU reference of the simplex operators (action at the quadrature points,
 * affine geometry from the vertices) against matrices assembled from element matrices, on a box mesh
 * with jittered interior vertices, 2D and 3D, p = 1..4: mass, Laplace and Helmholtz with constant
 * coefficient against mf_simplex_element_matrices (1e-13), Laplace with a variable coefficient
 * against dense element matrices built here, the gradient form (mf_simplex_op_apply_gradient_cpu, with c(x)
 * through the cells' matrices K_e of mf_simplex_gradient_coef, which are the identity for c = 1 to 1e-13)
 * against the element matrices (1e-12), symmetry, the mass of 1 is the area/volume, the Laplacian
 * of an affine function vanishes at interior DoFs, and refusals; linear elasticity (dim components)
 * against element matrices built here (also its gradient form, 1e-12), symmetry, and zero on the
 * rigid-body modes. */
#include "mf_test.h"
#include "simplex/mf_simplex.h"

static double coef(const double *x, int dim, void *user)
{
  (void)user;
  double r2 = 0.0;
  for (int k = 0; k < dim; k++) r2 += x[k] * x[k];
  return 1.0 / (0.05 + 2.0 * r2);
}

static double nan_coef(const double *x, int dim, void *user)
{
  (void)dim, (void)user;
  return x[0] > 0.5 ? NAN : 1.0;
}

static double rel(const double *a, const double *b, int n)
{
  double d = 0.0, s = 0.0;
  for (int i = 0; i < n; i++) d = fmax(d, fabs(a[i] - b[i])), s = fmax(s, fabs(b[i]));
  return s > 0 ? d / s : d;
}

static void cell_X(const mf_simplex_mesh *m, int c, double *X)
{
  for (int i = 0; i <= m->dim; i++)
    for (int k = 0; k < m->dim; k++) X[i * m->dim + k] = m->coords[3 * m->cells[(size_t)c * (m->dim + 1) + i] + k];
}

/* y = sum over cells of Ae x_e, Ae = a M + b K with the coefficient c at the points (NULL: 1), built
 * densely from physical gradients */
static void assembled_apply(mf_context ctx, const mf_simplex_mesh *m, const mf_simplex_basis *b, const mf_simplex_dofs *d,
                            double a, double bb, mf_coefficient_fn c, const double *x, double *y)
{
  const int N = b->nnodes, dim = m->dim;
  double *M = malloc(sizeof(double) * N * N), *K = malloc(sizeof(double) * N * N), X[12], det;
  memset(y, 0, sizeof(double) * d->ndofs);
  for (int e = 0; e < m->ncells; e++) {
    cell_X(m, e, X);
    if (!c) T_CALL(mf_simplex_element_matrices(ctx, b, X, M, K, &det));
    else { /* with the coefficient: Ae_ij = sum_q w |det J| c(x_q) (a phi_i phi_j + b gradx phi_i . gradx phi_j) */
      double Ji[3][3];
      det = fabs(mf_simplex_affine(dim, X, Ji, NULL));
      memset(M, 0, sizeof(double) * N * N);
      memset(K, 0, sizeof(double) * N * N);
      for (int q = 0; q < b->nq; q++) {
        double xq[3] = {0, 0, 0};
        for (int k = 0; k < dim; k++) {
          xq[k] = X[k];
          for (int l = 0; l < dim; l++) xq[k] += (X[(l + 1) * dim + k] - X[k]) * b->qpts[q * dim + l];
        }
        const double w = b->qwts[q] * det * c(xq, dim, NULL);
        const double *phi = b->B + (size_t)q * N, *gr = b->G + (size_t)q * N * dim;
        for (int i = 0; i < N; i++)
          for (int j = 0; j < N; j++) {
            double s = 0.0;
            for (int k = 0; k < dim; k++) {
              double gi = 0.0, gj = 0.0;
              for (int l = 0; l < dim; l++) gi += Ji[l][k] * gr[i * dim + l], gj += Ji[l][k] * gr[j * dim + l];
              s += gi * gj;
            }
            M[i * N + j] += w * phi[i] * phi[j];
            K[i * N + j] += w * s;
          }
      }
    }
    const int *cd = d->cell_dofs + (size_t)e * N;
    for (int i = 0; i < N; i++)
      for (int j = 0; j < N; j++) y[cd[i]] += (a * M[i * N + j] + bb * K[i * N + j]) * x[cd[j]];
  }
  free(M);
  free(K);
}

static void run(mf_context ctx, int dim, int p)
{
  mf_simplex_mesh m;
  mf_simplex_basis b;
  mf_simplex_dofs d;
  const int n = dim == 2 ? 3 : 2;
  T_CALL(mf_simplex_mesh_box(ctx, dim, n, &m));
  uint64_t z = 99;
  for (int v = 0; v < m.nv; v++) /* jitter the interior vertices: general affine cells */
    for (int k = 0; k < dim; k++) {
      const double t = m.coords[3 * v + k];
      z = z * 6364136223846793005ULL + 1442695040888963407ULL;
      if (t > 1e-12 && t < 1 - 1e-12) m.coords[3 * v + k] += 0.15 / n * ((double)(z >> 11) / 9007199254740992.0 - 0.5);
    }
  T_CALL(mf_simplex_basis_setup(ctx, dim, p, -1, &b));
  T_CALL(mf_simplex_dofs_create(ctx, &m, &b, &d));
  const int nd = d.ndofs;
  double *x = malloc(sizeof(double) * nd), *x2 = malloc(sizeof(double) * nd), *y = malloc(sizeof(double) * nd),
         *yr = malloc(sizeof(double) * nd), *y2 = malloc(sizeof(double) * nd);
  for (int i = 0; i < nd; i++) {
    z = z * 6364136223846793005ULL + 1442695040888963407ULL;
    x[i] = (double)(z >> 11) / 9007199254740992.0 - 0.5;
    z = z * 6364136223846793005ULL + 1442695040888963407ULL;
    x2[i] = (double)(z >> 11) / 9007199254740992.0 - 0.5;
  }
  const double ab[4][2] = {{1, 0}, {0, 1}, {1, 1}, {0, 1}};
  const char *name[4] = {"mass", "Laplace", "Helmholtz", "Laplace with c(x)"};
  for (int k = 0; k < 4; k++) {
    mf_simplex_op op;
    mf_coefficient_fn c = k == 3 ? coef : NULL;
    T_CALL(mf_simplex_op_create(ctx, &m, &b, &d, ab[k][0], ab[k][1], c, NULL, &op));
    mf_simplex_op_apply_cpu(&op, x, y);
    assembled_apply(ctx, &m, &b, &d, ab[k][0], ab[k][1], c, x, yr);
    const double r = rel(y, yr, nd);
    T_CHECK(r < 1e-13, "%s P%d %dD: matrix-free against assembled %.3e", name[k], p, dim, r);
    { /* the gradient form (the twin of the GPU's): the same operator from the P_{p-1} table, with c(x) from the
       * cells' matrices K_e (and K_e = I for c = 1) */
      const int n1 = mf_simplex_gradient_n1(dim, p), nk = mf_simplex_gradient_nk(dim, p);
      double *E = malloc(sizeof(double) * (size_t)n1 * dim * b.nnodes), *K = NULL;
      T_CALL(mf_simplex_gradient_table(ctx, &b, E));
      if (c) {
        double *Phi = malloc(sizeof(double) * (size_t)b.nq * n1), *ones = malloc(sizeof(double) * (size_t)m.ncells * b.nq);
        K = malloc(sizeof(double) * (size_t)nk * m.ncells);
        T_CALL(mf_simplex_gradient_points(ctx, &b, Phi));
        for (size_t i = 0; i < (size_t)m.ncells * b.nq; i++) ones[i] = 1.0;
        mf_simplex_gradient_coef(&b, Phi, m.ncells, ones, K); /* c = 1: the identity */
        double off = 0.0;
        for (int r = 0, mi = 0; r < n1; r++)
          for (int t = r; t < n1; t++, mi++)
            for (int e = 0; e < m.ncells; e++) off = fmax(off, fabs(K[(size_t)mi * m.ncells + e] - (r == t)));
        T_CHECK(off < 1e-13, "P%d %dD: the cells' matrices K_e of c = 1 are %.3e off the identity", p, dim, off);
        mf_simplex_gradient_coef(&b, Phi, m.ncells, op.coefq, K);
        free(Phi), free(ones);
      }
      mf_simplex_op_apply_gradient_cpu(&op, E, K, x, y2); /* (the c(x) case has a = 0: no mass part) */
      const double rg = rel(y2, yr, nd);
      T_CHECK(rg < 1e-12, "%s P%d %dD: gradient form against assembled %.3e", name[k], p, dim, rg);
      free(E), free(K);
    }
    /* symmetry: x2 . A x = x . A x2 */
    mf_simplex_op_apply_cpu(&op, x2, y2);
    double s1 = 0.0, s2 = 0.0, sc = 0.0;
    for (int i = 0; i < nd; i++) s1 += x2[i] * y[i], s2 += x[i] * y2[i], sc += fabs(x2[i] * y[i]);
    T_CHECK(fabs(s1 - s2) < 1e-13 * sc, "%s P%d %dD: not symmetric (%.3e)", name[k], p, dim, fabs(s1 - s2) / sc);
    if (k == 0) { /* the mass of 1 is the area/volume of the unit box */
      for (int i = 0; i < nd; i++) x2[i] = 1.0;
      mf_simplex_op_apply_cpu(&op, x2, y2);
      double tot = 0.0;
      for (int i = 0; i < nd; i++) tot += y2[i];
      T_CHECK(fabs(tot - 1.0) < 1e-13, "P%d %dD: the mass of 1 is %.17g", p, dim, tot);
    }
    if (k == 1) { /* Laplacian of an affine function: zero at the interior DoFs */
      for (int e = 0; e < m.ncells; e++)
        for (int i = 0; i < b.nnodes; i++) {
          double X[3] = {0, 0, 0};
          const int *v = m.cells + (size_t)e * (dim + 1);
          for (int kk = 0; kk < dim; kk++) {
            X[kk] = m.coords[3 * v[0] + kk];
            for (int l = 0; l < dim; l++)
              X[kk] += (m.coords[3 * v[l + 1] + kk] - m.coords[3 * v[0] + kk]) * b.nodes[i * dim + l];
          }
          x2[d.cell_dofs[(size_t)e * b.nnodes + i]] = 0.5 + X[0] - 2.0 * X[1] + (dim == 3 ? 3.0 * X[2] : 0.0);
        }
      mf_simplex_op_apply_cpu(&op, x2, y2);
      double worst = 0.0;
      for (int i = 0; i < nd; i++)
        if (!d.bc[i]) worst = fmax(worst, fabs(y2[i]));
      T_CHECK(worst < 1e-12, "P%d %dD: Laplacian of an affine function is %.3e at an interior DoF", p, dim, worst);
    }
    for (int i = 0; i < nd; i++) { /* x2 back to random for the next symmetry check */
      z = z * 6364136223846793005ULL + 1442695040888963407ULL;
      x2[i] = (double)(z >> 11) / 9007199254740992.0 - 0.5;
    }
    mf_simplex_op_destroy(&op);
  }
  mf_simplex_op op;
  EXPECT(mf_simplex_op_create(ctx, &m, &b, &d, 0.0, 0.0, NULL, NULL, &op), MF_ERR_ARGUMENT, "not both 0");
  EXPECT(mf_simplex_op_create(ctx, &m, &b, &d, 0.0, 1.0, nan_coef, NULL, &op), MF_ERR_ARGUMENT, "the coefficient is nan");
  if (p < 4) { /* DoFs of another degree */
    mf_simplex_basis b2;
    T_CALL(mf_simplex_basis_setup(ctx, dim, p + 1, -1, &b2));
    EXPECT(mf_simplex_op_create(ctx, &m, &b2, &d, 1.0, 0.0, NULL, NULL, &op), MF_ERR_INCOMPATIBLE, "DoFs made for");
    mf_simplex_basis_free(&b2);
  }
  { /* a flattened cell: its vertex 1 moved onto vertex 0 */
    const int *v = m.cells;
    double keep[3];
    memcpy(keep, m.coords + 3 * v[1], sizeof keep);
    memcpy(m.coords + 3 * v[1], m.coords + 3 * v[0], sizeof keep);
    EXPECT(mf_simplex_op_create(ctx, &m, &b, &d, 1.0, 0.0, NULL, NULL, &op), MF_ERR_ARGUMENT, "degenerate cell");
    memcpy(m.coords + 3 * v[1], keep, sizeof keep);
  }
  free(x), free(x2), free(y), free(yr), free(y2);
  mf_simplex_dofs_free(&d);
  mf_simplex_basis_free(&b);
  mf_simplex_mesh_free(&m);
}

/* Elasticity: against element matrices assembled here, symmetry, rigid-body modes in the kernel */
static void run_elasticity(mf_context ctx, int dim, int p)
{
  mf_simplex_mesh m;
  mf_simplex_basis b;
  mf_simplex_dofs d;
  const int n = 2;
  T_CALL(mf_simplex_mesh_box(ctx, dim, n, &m));
  uint64_t z = 7;
  for (int v = 0; v < m.nv; v++)
    for (int k = 0; k < dim; k++) {
      const double t = m.coords[3 * v + k];
      z = z * 6364136223846793005ULL + 1442695040888963407ULL;
      if (t > 1e-12 && t < 1 - 1e-12) m.coords[3 * v + k] += 0.15 / n * ((double)(z >> 11) / 9007199254740992.0 - 0.5);
    }
  T_CALL(mf_simplex_basis_setup(ctx, dim, p, -1, &b));
  T_CALL(mf_simplex_dofs_create(ctx, &m, &b, &d));
  const double lambda = 1.7, mu = 0.6;
  T_CALL(mf_simplex_elasticity_check(ctx, lambda, mu));
  const int nd = d.ndofs * dim, N = b.nnodes;
  double *x = malloc(sizeof(double) * nd), *x2 = malloc(sizeof(double) * nd), *y = malloc(sizeof(double) * nd),
         *yr = calloc((size_t)nd, sizeof(double)), *y2 = malloc(sizeof(double) * nd);
  for (int i = 0; i < nd; i++) {
    z = z * 6364136223846793005ULL + 1442695040888963407ULL;
    x[i] = (double)(z >> 11) / 9007199254740992.0 - 0.5;
    z = z * 6364136223846793005ULL + 1442695040888963407ULL;
    x2[i] = (double)(z >> 11) / 9007199254740992.0 - 0.5;
  }
  mf_simplex_elasticity_apply_cpu(&m, &b, &d, lambda, mu, x, y);
  /* reference: Ae[(i,c),(j,e)] = sum_q w (mu (gi.gj [c == e] + gi_e gj_c) + lambda gi_c gj_e) */
  double *gx = malloc(sizeof(double) * N * 3);
  for (int cell = 0; cell < m.ncells; cell++) {
    double X[12], Ji[3][3];
    cell_X(&m, cell, X);
    const double det = fabs(mf_simplex_affine(dim, X, Ji, NULL));
    const int *cd = d.cell_dofs + (size_t)cell * N;
    for (int q = 0; q < b.nq; q++) {
      const double w = b.qwts[q] * det, *gr = b.G + (size_t)q * N * dim;
      for (int i = 0; i < N; i++)
        for (int k = 0; k < dim; k++) {
          gx[i * dim + k] = 0.0;
          for (int l = 0; l < dim; l++) gx[i * dim + k] += Ji[l][k] * gr[i * dim + l];
        }
      for (int i = 0; i < N; i++)
        for (int j = 0; j < N; j++) {
          double gg = 0.0;
          for (int k = 0; k < dim; k++) gg += gx[i * dim + k] * gx[j * dim + k];
          for (int c = 0; c < dim; c++)
            for (int e = 0; e < dim; e++) {
              const double a = w * (mu * ((c == e ? gg : 0.0) + gx[i * dim + e] * gx[j * dim + c]) +
                                    lambda * gx[i * dim + c] * gx[j * dim + e]);
              yr[(size_t)cd[i] * dim + c] += a * x[(size_t)cd[j] * dim + e];
            }
        }
    }
  }
  T_CHECK(rel(y, yr, nd) < 1e-13, "elasticity P%d %dD: matrix-free against assembled %.3e", p, dim, rel(y, yr, nd));
  { /* the gradient form (the twin of the GPU's) against the same assembled matrices */
    double *E = malloc(sizeof(double) * (size_t)mf_simplex_gradient_n1(dim, p) * dim * b.nnodes);
    T_CALL(mf_simplex_gradient_table(ctx, &b, E));
    mf_simplex_elasticity_apply_gradient_cpu(&m, &b, &d, E, lambda, mu, x, y2);
    T_CHECK(rel(y2, yr, nd) < 1e-12, "elasticity P%d %dD: gradient form against assembled %.3e", p, dim, rel(y2, yr, nd));
    free(E);
  }
  mf_simplex_elasticity_apply_cpu(&m, &b, &d, lambda, mu, x2, y2);
  double s1 = 0.0, s2 = 0.0, sc = 0.0;
  for (int i = 0; i < nd; i++) s1 += x2[i] * y[i], s2 += x[i] * y2[i], sc += fabs(x2[i] * y[i]);
  T_CHECK(fabs(s1 - s2) < 1e-13 * sc, "elasticity P%d %dD: not symmetric (%.3e)", p, dim, fabs(s1 - s2) / sc);
  double scale = 0.0;
  for (int i = 0; i < nd; i++) scale = fmax(scale, fabs(y[i]));
  /* rigid-body modes: dim translations and dim (dim - 1) / 2 rotations, zero strain */
  const int nmodes = dim == 2 ? 3 : 6;
  for (int r = 0; r < nmodes; r++) {
    double *pt = calloc((size_t)d.ndofs * 3, sizeof(double));
    for (int cell = 0; cell < m.ncells; cell++)
      for (int i = 0; i < N; i++) {
        const int *v = m.cells + (size_t)cell * (dim + 1);
        double *P = pt + 3 * (size_t)d.cell_dofs[(size_t)cell * N + i];
        for (int k = 0; k < dim; k++) {
          P[k] = m.coords[3 * v[0] + k];
          for (int l = 0; l < dim; l++) P[k] += (m.coords[3 * v[l + 1] + k] - m.coords[3 * v[0] + k]) * b.nodes[i * dim + l];
        }
      }
    for (int g = 0; g < d.ndofs; g++) {
      const double *P = pt + 3 * g;
      double u[3] = {0, 0, 0};
      if (r < dim) u[r] = 1.0;
      else if (dim == 2) u[0] = -P[1], u[1] = P[0];
      else { /* rotations about the axes: e_a x P */
        const int a = r - 3, a1 = (a + 1) % 3, a2 = (a + 2) % 3;
        u[a1] = -P[a2], u[a2] = P[a1];
      }
      for (int c = 0; c < dim; c++) x2[(size_t)g * dim + c] = u[c];
    }
    free(pt);
    mf_simplex_elasticity_apply_cpu(&m, &b, &d, lambda, mu, x2, y2);
    double worst = 0.0;
    for (int i = 0; i < nd; i++) worst = fmax(worst, fabs(y2[i]));
    T_CHECK(worst < 1e-12 * fmax(1.0, scale), "elasticity P%d %dD: rigid-body mode %d gives %.3e", p, dim, r, worst);
  }
  EXPECT(mf_simplex_elasticity_check(ctx, 1.0, 0.0), MF_ERR_ARGUMENT, "shear modulus mu = 0");
  EXPECT(mf_simplex_elasticity_check(ctx, -1.0, 1.0), MF_ERR_ARGUMENT, "Lame parameter lambda = -1");
  free(gx), free(x), free(x2), free(y), free(yr), free(y2);
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
    for (int p = 1; p <= 4; p++) run(ctx, dim, p), run_elasticity(ctx, dim, p);
  mf_context_destroy(&ctx);
  MPI_Finalize();
  return t_failures ? 1 : 0;
}
