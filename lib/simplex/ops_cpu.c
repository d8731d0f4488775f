/* ops_cpu.c -- the CPU reference of the simplex operators (mf_simplex.h): the action of each cell at
 * its quadrature points, affine geometry from the cell's vertices. */
#include "mf_simplex.h"
#include "physics/mf_gallery.h"

#include <limits.h>
#include <math.h>

/* |det J| and J^-1 (row-major, dim x dim) of affine cell c; scale: its edges' (may be NULL). */
static double cell_geometry(const mf_simplex_mesh *m, int c, double Ji[3][3], double *scale)
{
  const int dim = m->dim, *v = m->cells + (size_t)c * (dim + 1);
  double X[12];
  for (int i = 0; i <= dim; i++)
    for (int k = 0; k < dim; k++) X[i * dim + k] = m->coords[3 * v[i] + k];
  return fabs(mf_simplex_affine(dim, X, Ji, scale));
}

/* |det J| of cell c, with J^-1 in Ji and G = J^-1 J^-T (reference gradients in, reference gradients out) */
static double cell_metric(const mf_simplex_mesh *m, int c, double Ji[3][3], double G[3][3])
{
  const double det = cell_geometry(m, c, Ji, NULL);
  for (int k = 0; k < m->dim; k++)
    for (int l = 0; l < m->dim; l++) {
      G[k][l] = 0.0;
      for (int r = 0; r < m->dim; r++) G[k][l] += Ji[k][r] * Ji[l][r];
    }
  return det;
}

/* x (3 entries, z = 0 in 2D) <- point q of the basis's rule in cell e */
void mf_simplex_point(const mf_simplex_mesh *m, const mf_simplex_basis *b, int e, int q, double *x)
{
  const int dim = m->dim, *v = m->cells + (size_t)e * (dim + 1);
  x[0] = x[1] = x[2] = 0.0;
  for (int k = 0; k < dim; k++) {
    x[k] = m->coords[3 * v[0] + k];
    for (int l = 0; l < dim; l++) x[k] += (m->coords[3 * v[l + 1] + k] - m->coords[3 * v[0] + k]) * b->qpts[q * dim + l];
  }
}

int mf_simplex_op_create(mf_context ctx, const mf_simplex_mesh *m, const mf_simplex_basis *b, const mf_simplex_dofs *d,
                         double a, double bb, mf_coefficient_fn c, void *user, mf_simplex_op *op)
{
  MF_CHECK(m && b && d && op, ctx, MF_ERR_NULL, "mesh, basis, DoFs or output is NULL");
  memset(op, 0, sizeof *op);
  MF_CHECK(m->dim == b->dim, ctx, MF_ERR_INCOMPATIBLE, "a %dD basis on a %dD mesh", b->dim, m->dim);
  MF_CHECK(d->nnodes == b->nnodes, ctx, MF_ERR_INCOMPATIBLE,
           "DoFs made for %d nodes per cell, the degree-%d basis has %d", d->nnodes, b->degree, b->nnodes);
  MF_CHECK(isfinite(a) && isfinite(bb) && (a != 0.0 || bb != 0.0), ctx, MF_ERR_ARGUMENT,
           "operator weights a = %g, b = %g (finite, not both 0)", a, bb);
  /* every cell invertible, as the element matrices require: the first one that is not is named (OpenMP
   * over the cells, the smallest index kept) */
  int bad = INT_MAX;
#pragma omp parallel for schedule(static) reduction(min : bad)
  for (int e = 0; e < m->ncells; e++) {
    double Ji[3][3], scale;
    const double det = cell_geometry(m, e, Ji, &scale);
    if (!(isfinite(det) && det > 1e-14 * pow(scale, m->dim)) && e < bad) bad = e;
  }
  if (bad < INT_MAX) {
    double Ji[3][3], scale;
    const double det = cell_geometry(m, bad, Ji, &scale);
    return mf_error_set(ctx, MF_ERR_ARGUMENT, __FILE__, __LINE__, __func__,
                        "degenerate cell %d: |det J| = %.3e for edges of size %.3e", bad, det, scale);
  }
  op->mesh = m;
  op->basis = b;
  op->dofs = d;
  op->a = a;
  op->b = bb;
  if (!c) return 0;
  const int dim = m->dim, nq = b->nq;
  MF_CALL(MF_CALLOC(ctx, (size_t)m->ncells * nq, &op->coefq));
  /* c at the points, OpenMP over the cells (c is called from several threads at once); the first
   * non-finite value (smallest cell, then point) is reported */
  long long badq = LLONG_MAX;
#pragma omp parallel for schedule(static) reduction(min : badq)
  for (int e = 0; e < m->ncells; e++) {
    for (int q = 0; q < nq; q++) {
      double x[3];
      mf_simplex_point(m, b, e, q, x);
      const double cv = c(x, dim, user);
      op->coefq[(size_t)e * nq + q] = cv;
      if (!isfinite(cv) && (long long)e * nq + q < badq) badq = (long long)e * nq + q;
    }
  }
  if (badq < LLONG_MAX) {
    const int e = (int)(badq / nq), q = (int)(badq % nq);
    double x[3];
    mf_simplex_point(m, b, e, q, x);
    const double cv = op->coefq[badq];
    mf_simplex_op_destroy(op);
    return mf_error_set(ctx, MF_ERR_ARGUMENT, __FILE__, __LINE__, __func__, "the coefficient is %g at (%g, %g, %g) (cell %d)",
                        cv, x[0], x[1], x[2], e);
  }
  return 0;
}

void mf_simplex_op_destroy(mf_simplex_op *op)
{
  if (!op) return;
  free(op->coefq);
  memset(op, 0, sizeof *op);
}

void mf_simplex_op_apply_cpu(const mf_simplex_op *op, const double *x, double *y)
{
  const mf_simplex_mesh *m = op->mesh;
  const mf_simplex_basis *b = op->basis;
  const int dim = m->dim, N = b->nnodes, nq = b->nq;
  memset(y, 0, sizeof(double) * (size_t)op->dofs->ndofs);
  double ue[84], ve[84];
  for (int e = 0; e < m->ncells; e++) {
    const int *cd = op->dofs->cell_dofs + (size_t)e * N;
    for (int i = 0; i < N; i++) ue[i] = x[cd[i]], ve[i] = 0.0;
    double Ji[3][3], G[3][3];
    const double det = cell_metric(m, e, Ji, G);
    for (int q = 0; q < nq; q++) {
      const double *phi = b->B + (size_t)q * N, *gr = b->G + (size_t)q * N * dim;
      const double wd = b->qwts[q] * det, wq = wd * (op->coefq ? op->coefq[(size_t)e * nq + q] : 1.0);
      double uq = 0.0, g[3] = {0, 0, 0};
      for (int j = 0; j < N; j++) {
        uq += phi[j] * ue[j];
        for (int k = 0; k < dim; k++) g[k] += gr[j * dim + k] * ue[j];
      }
      double gm[3] = {0, 0, 0}, f0, f[3]; /* gm = J^-1 J^-T g, then the physics (lib/physics/mf_gallery.h) */
      for (int k = 0; k < dim; k++)
        for (int l = 0; l < dim; l++) gm[k] += G[k][l] * g[l];
      /* Helmholtz: the mass has no c */
      mf_pw_scalar_d(dim, op->a * (op->mass_coef ? wq : wd), op->b * wq, uq, gm, &f0, f);
      for (int i = 0; i < N; i++) {
        double s = f0 * phi[i];
        for (int k = 0; k < dim; k++) s += gr[i * dim + k] * f[k];
        ve[i] += s;
      }
    }
    for (int i = 0; i < N; i++) y[cd[i]] += ve[i];
  }
}

int mf_simplex_gradient_n1(int dim, int p)
{
  return dim == 2 ? p * (p + 1) / 2 : p * (p + 1) * (p + 2) / 6; /* C(p - 1 + dim, dim) */
}

/* The P_{p-1} reference mass Mhat = L L^T (the reference volume for p = 1) of basis b's degree p: L (n1 x n1,
 * lower, row-major) and, for p > 1, the basis b1 of P_{p-1} (rule of degree 2(p - 1)) whose nodes carry D. */
static int gradient_factor(mf_context ctx, const mf_simplex_basis *b, double *L, mf_simplex_basis *b1)
{
  const int dim = b->dim, p = b->degree, n1 = mf_simplex_gradient_n1(dim, p);
  memset(b1, 0, sizeof *b1);
  if (p > 1) MF_CALL(mf_simplex_basis_setup(ctx, dim, p - 1, -1, b1)); /* rule of degree 2(p - 1) */
  memset(L, 0, sizeof(double) * (size_t)n1 * n1);
  if (p == 1) L[0] = dim == 2 ? 0.5 : 1.0 / 6.0; /* the P0 mass: the reference volume */
  else                                          /* Mhat[r][s] = sum_q w_q psi_r psi_s (exact) */
    for (int q = 0; q < b1->nq; q++)
      for (int r = 0; r < n1; r++)
        for (int s = 0; s < n1; s++) L[r * n1 + s] += b1->qwts[q] * b1->B[q * n1 + r] * b1->B[q * n1 + s];
  for (int j = 0; j < n1; j++) { /* Cholesky in place: Mhat = L L^T, L lower (row-major) */
    double d = L[j * n1 + j];
    for (int s = 0; s < j; s++) d -= L[j * n1 + s] * L[j * n1 + s];
    MF_CHECK(d > 0.0, ctx, MF_ERR_ARGUMENT, "the P%d reference mass matrix is not positive definite", p - 1);
    L[j * n1 + j] = sqrt(d);
    for (int i = j + 1; i < n1; i++) {
      double t = L[i * n1 + j];
      for (int s = 0; s < j; s++) t -= L[i * n1 + s] * L[j * n1 + s];
      L[i * n1 + j] = t / L[j * n1 + j];
    }
    for (int i = 0; i < j; i++) L[i * n1 + j] = 0.0; /* the upper part (Mhat's) cleared */
  }
  return 0;
}

int mf_simplex_gradient_table(mf_context ctx, const mf_simplex_basis *b, double *E)
{
  MF_CHECK(b && E, ctx, MF_ERR_NULL, "basis or table is NULL");
  const int dim = b->dim, p = b->degree, N = b->nnodes, n1 = mf_simplex_gradient_n1(dim, p);
  mf_simplex_basis b1;
  memset(&b1, 0, sizeof b1);
  double *L = NULL, *D = NULL, *phi = NULL;
  int ierr = MF_CALLOC(ctx, (size_t)n1 * n1, &L);
  if (!ierr) ierr = MF_CALLOC(ctx, (size_t)n1 * N * dim, &D);
  if (!ierr) ierr = MF_CALLOC(ctx, (size_t)N, &phi);
  if (!ierr) ierr = gradient_factor(ctx, b, L, &b1);
  if (ierr) goto done;
  for (int r = 0; r < n1; r++) { /* D[r][j][k] = d phi_j / d xhat_k at node r of P_{p-1} */
    double x[3] = {1.0 / (dim + 1), 1.0 / (dim + 1), 1.0 / (dim + 1)};
    if (p > 1)
      for (int k = 0; k < dim; k++) x[k] = b1.nodes[r * dim + k];
    mf_simplex_basis_eval(b, x, phi, D + (size_t)r * N * dim);
  }
  for (int r = 0; r < n1; r++) /* E_k = L^T D_k: E[r][k][j] = sum_{s >= r} L[s][r] D_k[s][j] */
    for (int k = 0; k < dim; k++)
      for (int j = 0; j < N; j++) {
        double t = 0.0;
        for (int s = r; s < n1; s++) t += L[s * n1 + r] * D[((size_t)s * N + j) * dim + k];
        E[((size_t)r * dim + k) * N + j] = t;
      }
done:
  mf_simplex_basis_free(&b1);
  free(L), free(D), free(phi);
  return ierr;
}

int mf_simplex_gradient_points(mf_context ctx, const mf_simplex_basis *b, double *Phi)
{
  MF_CHECK(b && Phi, ctx, MF_ERR_NULL, "basis or table is NULL");
  const int dim = b->dim, p = b->degree, n1 = mf_simplex_gradient_n1(dim, p);
  mf_simplex_basis b1;
  memset(&b1, 0, sizeof b1);
  double *L = NULL, *psi = NULL;
  int ierr = MF_CALLOC(ctx, (size_t)n1 * n1, &L);
  if (!ierr) ierr = MF_CALLOC(ctx, (size_t)n1, &psi);
  if (!ierr) ierr = gradient_factor(ctx, b, L, &b1);
  for (int q = 0; !ierr && q < b->nq; q++) {
    if (p > 1) mf_simplex_basis_eval(&b1, b->qpts + (size_t)q * dim, psi, NULL);
    else psi[0] = 1.0;
    for (int r = 0; r < n1; r++) { /* L Phi = psi, forward */
      double t = psi[r];
      for (int s = 0; s < r; s++) t -= L[r * n1 + s] * Phi[(size_t)q * n1 + s];
      Phi[(size_t)q * n1 + r] = t / L[r * n1 + r];
    }
  }
  mf_simplex_basis_free(&b1);
  free(L), free(psi);
  return ierr;
}

int mf_simplex_gradient_nk(int dim, int p)
{
  const int n1 = mf_simplex_gradient_n1(dim, p);
  return n1 * (n1 + 1) / 2;
}

void mf_simplex_gradient_coef(const mf_simplex_basis *b, const double *Phi, int ncells, const double *coefq, double *K)
{
  const int n1 = mf_simplex_gradient_n1(b->dim, b->degree), nq = b->nq;
#pragma omp parallel for schedule(static)
  for (int e = 0; e < ncells; e++) {
    double k[MF_SIMPLEX_GRAD_NK_MAX];
    const int nk = n1 * (n1 + 1) / 2;
    for (int m = 0; m < nk; m++) k[m] = 0.0;
    for (int q = 0; q < nq; q++) {
      const double c = b->qwts[q] * coefq[(size_t)e * nq + q], *f = Phi + (size_t)q * n1;
      for (int r = 0, m = 0; r < n1; r++)
        for (int t = r; t < n1; t++, m++) k[m] += c * f[r] * f[t];
    }
    for (int m = 0; m < nk; m++) K[(size_t)m * ncells + e] = k[m];
  }
}

void mf_simplex_op_apply_gradient_cpu(const mf_simplex_op *op, const double *E, const double *K, const double *x,
                                      double *y)
{
  const mf_simplex_mesh *m = op->mesh;
  const mf_simplex_basis *b = op->basis;
  const int dim = m->dim, N = b->nnodes, nq = b->nq, n1 = mf_simplex_gradient_n1(dim, b->degree);
  memset(y, 0, sizeof(double) * (size_t)op->dofs->ndofs);
  double ue[84], ve[84];
  for (int e = 0; e < m->ncells; e++) {
    const int *cd = op->dofs->cell_dofs + (size_t)e * N;
    for (int i = 0; i < N; i++) ue[i] = x[cd[i]], ve[i] = 0.0;
    double Ji[3][3], G[3][3];
    const double det = cell_metric(m, e, Ji, G);
    for (int k = 0; k < dim; k++) /* b |det J| J^-1 J^-T */
      for (int l = 0; l < dim; l++) G[k][l] *= op->b * det;
    if (op->a != 0.0)
      for (int q = 0; q < nq; q++) { /* a M u at the points */
        const double *phi = b->B + (size_t)q * N;
        double uq = 0.0;
        for (int j = 0; j < N; j++) uq += phi[j] * ue[j];
        const double f = op->a * b->qwts[q] * det * uq;
        for (int i = 0; i < N; i++) ve[i] += f * phi[i];
      }
    if (op->b != 0.0) {
      double h[MF_SIMPLEX_GRAD_N1_MAX][3]; /* g_rk = (E_k u)_r, h_r = G g_r */
      for (int r = 0; r < n1; r++) {
        const double *Er = E + (size_t)r * dim * N;
        double g[3] = {0, 0, 0};
        for (int k = 0; k < dim; k++)
          for (int j = 0; j < N; j++) g[k] += Er[k * N + j] * ue[j];
        for (int k = 0; k < dim; k++) {
          h[r][k] = 0.0;
          for (int l = 0; l < dim; l++) h[r][k] += G[k][l] * g[l];
        }
      }
      for (int r = 0; r < n1; r++) { /* f_r = sum_s K_rs h_s (K = I for c = 1), v += sum_k f_rk (E_k)_r */
        const double *Er = E + (size_t)r * dim * N;
        double f[3] = {0, 0, 0};
        for (int t = 0; t < n1; t++) {
          const int lo = r < t ? r : t, hi = r < t ? t : r, mi = lo * n1 - lo * (lo - 1) / 2 + (hi - lo);
          const double krt = K ? K[(size_t)mi * (size_t)m->ncells + e] : (r == t);
          for (int k = 0; k < dim; k++) f[k] += krt * h[t][k];
        }
        for (int k = 0; k < dim; k++)
          for (int i = 0; i < N; i++) ve[i] += f[k] * Er[k * N + i];
      }
    }
    for (int i = 0; i < N; i++) y[cd[i]] += ve[i];
  }
}

int mf_simplex_elasticity_check(mf_context ctx, double lambda, double mu)
{
  MF_CHECK(isfinite(mu) && mu > 0.0, ctx, MF_ERR_ARGUMENT, "shear modulus mu = %g (positive)", mu);
  MF_CHECK(isfinite(lambda) && lambda > -2.0 * mu / 3.0, ctx, MF_ERR_ARGUMENT,
           "Lame parameter lambda = %g (above -2 mu / 3 = %g for a positive bulk modulus)", lambda, -2.0 * mu / 3.0);
  return 0;
}

void mf_simplex_elasticity_apply_cpu(const mf_simplex_mesh *m, const mf_simplex_basis *b, const mf_simplex_dofs *d,
                                     double lambda, double mu, const double *x, double *y)
{
  const int dim = m->dim, N = b->nnodes, nq = b->nq;
  memset(y, 0, sizeof(double) * (size_t)d->ndofs * dim);
  double ue[84 * 3], ve[84 * 3], gx[84 * 3];
  for (int e = 0; e < m->ncells; e++) {
    const int *cd = d->cell_dofs + (size_t)e * N;
    for (int i = 0; i < N; i++)
      for (int c = 0; c < dim; c++) ue[i * dim + c] = x[(size_t)cd[i] * dim + c], ve[i * dim + c] = 0.0;
    double Ji[3][3];
    const double det = cell_geometry(m, e, Ji, NULL);
    for (int q = 0; q < nq; q++) {
      const double *gr = b->G + (size_t)q * N * dim, w = b->qwts[q] * det;
      for (int i = 0; i < N; i++) /* physical gradients: gradx phi = J^-T gradxi phi */
        for (int k = 0; k < dim; k++) {
          double s = 0.0;
          for (int l = 0; l < dim; l++) s += Ji[l][k] * gr[i * dim + l];
          gx[i * dim + k] = s;
        }
      double gu[3][3] = {{0}}; /* gu[c][k] = d u_c / d x_k */
      for (int j = 0; j < N; j++)
        for (int c = 0; c < dim; c++)
          for (int k = 0; k < dim; k++) gu[c][k] += ue[j * dim + c] * gx[j * dim + k];
      double sig[3][3];
      MF_PW_STRESS(double, dim, lambda, mu, w, gu, sig); /* lib/physics/mf_gallery.h */
      for (int i = 0; i < N; i++) /* sigma : grad v (sigma symmetric: the same as sigma : eps(v)) */
        for (int c = 0; c < dim; c++) {
          double s = 0.0;
          for (int k = 0; k < dim; k++) s += sig[c][k] * gx[i * dim + k];
          ve[i * dim + c] += s;
        }
    }
    for (int i = 0; i < N; i++)
      for (int c = 0; c < dim; c++) y[(size_t)cd[i] * dim + c] += ve[i * dim + c];
  }
}

void mf_simplex_elasticity_apply_gradient_cpu(const mf_simplex_mesh *m, const mf_simplex_basis *b, const mf_simplex_dofs *d,
                                              const double *E, double lambda, double mu, const double *x, double *y)
{
  const int dim = m->dim, N = b->nnodes, n1 = mf_simplex_gradient_n1(dim, b->degree);
  memset(y, 0, sizeof(double) * (size_t)d->ndofs * dim);
  double ue[84 * 3], ve[84 * 3];
  for (int e = 0; e < m->ncells; e++) {
    const int *cd = d->cell_dofs + (size_t)e * N;
    for (int i = 0; i < N; i++)
      for (int c = 0; c < dim; c++) ue[i * dim + c] = x[(size_t)cd[i] * dim + c], ve[i * dim + c] = 0.0;
    double Ji[3][3];
    const double det = cell_geometry(m, e, Ji, NULL);
    for (int r = 0; r < n1; r++) {
      const double *Er = E + (size_t)r * dim * N;
      double g[3][3] = {{0}}, gu[3][3] = {{0}}, sig[3][3], f[3][3] = {{0}}; /* g[c][l] = (E_l u_c)_r */
      for (int c = 0; c < dim; c++)
        for (int l = 0; l < dim; l++)
          for (int j = 0; j < N; j++) g[c][l] += Er[l * N + j] * ue[j * dim + c];
      for (int c = 0; c < dim; c++) /* physical: gu[c][k] = sum_l g[c][l] Ji[l][k] */
        for (int k = 0; k < dim; k++)
          for (int l = 0; l < dim; l++) gu[c][k] += g[c][l] * Ji[l][k];
      MF_PW_STRESS(double, dim, lambda, mu, det, gu, sig);
      for (int c = 0; c < dim; c++) /* back to reference directions: f[c][l] = sum_k Ji[l][k] sig[c][k] */
        for (int l = 0; l < dim; l++)
          for (int k = 0; k < dim; k++) f[c][l] += Ji[l][k] * sig[c][k];
      for (int i = 0; i < N; i++)
        for (int c = 0; c < dim; c++)
          for (int l = 0; l < dim; l++) ve[i * dim + c] += Er[l * N + i] * f[c][l];
    }
    for (int i = 0; i < N; i++)
      for (int c = 0; c < dim; c++) y[(size_t)cd[i] * dim + c] += ve[i * dim + c];
  }
}

static int int_cmp(const void *a, const void *b)
{
  const int x = *(const int *)a, y = *(const int *)b;
  return (x > y) - (x < y);
}

int mf_simplex_tiles(mf_context ctx, int ncells, int ni, const int *ids, int tile, int **off, int **list,
                     unsigned short **loc, int *maxn)
{
  MF_CHECK(off && list && loc && maxn, ctx, MF_ERR_NULL, "tiles: an output (off, list, loc or maxn) is NULL");
  MF_CHECK(ids || !ncells, ctx, MF_ERR_NULL, "tiles: the ids of %d cells are NULL", ncells);
  MF_CHECK(ncells >= 0 && ni >= 1 && tile >= 1, ctx, MF_ERR_ARGUMENT, "tiles of %d cells, %d ids each, %d cells", tile,
           ni, ncells);
  MF_CHECK((long long)tile * ni < 65536, ctx, MF_ERR_ARGUMENT, "tiles of %d cells x %d ids (below 2^16)", tile, ni);
  const int nt = (ncells + tile - 1) / tile;
  int *o = NULL, *l = NULL, *buf = NULL, most = 0;
  unsigned short *c = NULL;
  int ierr = MF_CALLOC(ctx, (size_t)nt + 1, &o);
  if (!ierr) ierr = MF_CALLOC(ctx, (size_t)ncells * ni + 1, &l);
  if (!ierr) ierr = MF_CALLOC(ctx, (size_t)ncells * ni + 1, &c);
  if (!ierr) ierr = MF_CALLOC(ctx, (size_t)tile * ni + 1, &buf);
  for (int t = 0; !ierr && t < nt; t++) {
    const int e0 = t * tile, e1 = e0 + tile < ncells ? e0 + tile : ncells, n = (e1 - e0) * ni;
    memcpy(buf, ids + (size_t)e0 * ni, sizeof(int) * n);
    qsort(buf, (size_t)n, sizeof(int), int_cmp);
    int u = 0;
    for (int k = 0; k < n; k++)
      if (!k || buf[k] != buf[k - 1]) buf[u++] = buf[k];
    if ((long long)o[t] + u > INT_MAX) {
      ierr = mf_error_set(ctx, MF_ERR_UNSUPPORTED, __FILE__, __LINE__, __func__,
                          "tiles: more than 2^31 - 1 entries in the tiles' lists (%lld at tile %d)", (long long)o[t] + u, t);
      break;
    }
    memcpy(l + o[t], buf, sizeof(int) * u);
    o[t + 1] = o[t] + u;
    most = u > most ? u : most;
    for (int k = 0; k < n; k++) {
      const int *f = bsearch(ids + (size_t)e0 * ni + k, buf, (size_t)u, sizeof(int), int_cmp);
      c[(size_t)e0 * ni + k] = (unsigned short)(f - buf);
    }
  }
  free(buf);
  if (ierr) {
    free(o), free(l), free(c);
    return ierr;
  }
  *off = o, *list = l, *loc = c, *maxn = most;
  return 0;
}
