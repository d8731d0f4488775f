/* geometry.c -- isoparametric geometry: cell node coordinates at Gauss-Lobatto points from the mesh
 * mapping, interpolated to quadrature points, Jacobians by the collocation derivative there (sum
 * factorisation); and the quadrature data of the operators in array-of-structure-of-arrays layout. */
#include "mfree_impl.h"

#include <math.h>

#define MF_MAX_QP (MF_MAX_NQ * MF_MAX_NQ * MF_MAX_NQ)

void mf_tensor_interpolate(int dim, const mf_basis1d *b, const double *u, double *uq, double *t1, double *t2)
{
  int n[3] = {b->n1, b->n1, b->n1};
  const double *in = u;
  double *bufs[2] = {t1, t2};
  for (int d = 0; d < dim; d++) {
    double *o = (d == dim - 1) ? uq : bufs[d % 2];
    mf_tensor_apply(dim, n, d, b->B, b->nq, 0, in, o, 0);
    n[d] = b->nq;
    in = o;
  }
}

void mf_tensor_integrate(int dim, const mf_basis1d *b, const double *vq, double *v, double *t1, double *t2)
{
  int n[3] = {b->nq, b->nq, b->nq};
  const double *in = vq;
  double *bufs[2] = {t1, t2};
  for (int d = 0; d < dim; d++) {
    double *o = (d == dim - 1) ? v : bufs[d % 2];
    mf_tensor_apply(dim, n, d, b->B, b->n1, 1, in, o, 0);
    n[d] = b->n1;
    in = o;
  }
}

int mf_geom_work_init(mf_space s, const mf_basis1d *b, mf_geom_work *gw)
{
  memset(gw, 0, sizeof *gw);
  (void)b;
  int ierr = MF_CALLOC(s->ctx, (size_t)s->npc * s->dim, &gw->X);
  if (!ierr) ierr = MF_CALLOC(s->ctx, MF_MAX_QP, &gw->comp);
  if (!ierr) ierr = MF_CALLOC(s->ctx, MF_MAX_QP, &gw->xk);
  if (!ierr) ierr = MF_CALLOC(s->ctx, MF_MAX_QP, &gw->t1);
  if (!ierr) ierr = MF_CALLOC(s->ctx, MF_MAX_QP, &gw->t2);
  if (ierr) mf_geom_work_free(gw);
  return ierr;
}

void mf_geom_work_free(mf_geom_work *gw)
{
  free(gw->X);
  free(gw->comp);
  free(gw->xk);
  free(gw->t1);
  free(gw->t2);
  memset(gw, 0, sizeof *gw);
}

void mf_cell_geometry(mf_space s, const mf_basis1d *b, int cell, mf_geom_work *gw, double *xq, double *jac)
{
  const int dim = s->dim, nq = b->nq;
  int nqp = 1;
  for (int k = 0; k < dim; k++) nqp *= nq;
  mf_space_cell_coords(s, cell, gw->X);
  for (int k = 0; k < dim; k++) {
    for (int node = 0; node < s->npc; node++) gw->comp[node] = gw->X[node * dim + k];
    mf_tensor_interpolate(dim, b, gw->comp, gw->xk, gw->t1, gw->t2);
    for (int q = 0; q < nqp; q++) xq[q * dim + k] = gw->xk[q];
    int nn[3] = {nq, nq, nq};
    for (int l = 0; l < dim; l++) {
      mf_tensor_apply(dim, nn, l, b->D, nq, 0, gw->xk, gw->t1, 0);
      for (int q = 0; q < nqp; q++) jac[9 * q + 3 * k + l] = gw->t1[q];
    }
  }
}

double mf_det(int dim, const double *J)
{
  if (dim == 2) return J[0] * J[4] - J[1] * J[3];
  return J[0] * (J[4] * J[8] - J[5] * J[7]) - J[1] * (J[3] * J[8] - J[5] * J[6]) +
         J[2] * (J[3] * J[7] - J[4] * J[6]);
}

double mf_qweight(int dim, const mf_basis1d *b, int q)
{
  double w = 1.0;
  for (int k = 0; k < dim; k++) {
    w *= b->qwts[q % b->nq];
    q /= b->nq;
  }
  return w;
}

/* Inverse of a 2x2 or 3x3 matrix stored in a 3x3 array. */
static void inverse(int dim, const double *J, double det, double *Ji)
{
  if (dim == 2) {
    Ji[0] = J[4] / det;
    Ji[1] = -J[1] / det;
    Ji[3] = -J[3] / det;
    Ji[4] = J[0] / det;
    return;
  }
  Ji[0] = (J[4] * J[8] - J[5] * J[7]) / det;
  Ji[1] = (J[2] * J[7] - J[1] * J[8]) / det;
  Ji[2] = (J[1] * J[5] - J[2] * J[4]) / det;
  Ji[3] = (J[5] * J[6] - J[3] * J[8]) / det;
  Ji[4] = (J[0] * J[8] - J[2] * J[6]) / det;
  Ji[5] = (J[2] * J[3] - J[0] * J[5]) / det;
  Ji[6] = (J[3] * J[7] - J[4] * J[6]) / det;
  Ji[7] = (J[1] * J[6] - J[0] * J[7]) / det;
  Ji[8] = (J[0] * J[4] - J[1] * J[3]) / det;
}

/* The cells-per-block table, retuned on an H100 (docs/performance.md): 3D keeps the seed paper's
 * values (Q1 8, Q2 2, Q3+ 1); 2D gains from more cells per block at every degree. */
int mf_cells_per_batch(int dim, int degree, int nq)
{
  (void)nq;
  if (dim == 3) return degree == 1 ? 8 : degree == 2 ? 2 : 1;
  static const int table2d[9] = {0, 32, 16, 4, 8, 4, 4, 2, 2};
  return table2d[degree];
}

/* Components: [mass m = a c w|detJ|] then [G = b c w|detJ| J^-1 J^-T, symmetric, upper triangle row
 * by row: 2D (00,01,11), 3D (00,01,02,11,12,22)]. */
int mf_qdata_setup(mf_operator op, mf_coefficient_fn c, void *user, double a, double bcoef)
{
  mf_space s = op->space;
  mf_context ctx = s->ctx;
  const int dim = s->dim;
  const mf_basis1d *b = &op->basis;
  mf_qdata *qd = &op->qd;
  int nqp = 1;
  for (int k = 0; k < dim; k++) nqp *= b->nq;
  qd->nqp = nqp;
  qd->ncomp = (op->has_mass ? 1 : 0) + (op->has_grad ? (dim == 2 ? 3 : 6) : 0);
  qd->batch = mf_cells_per_batch(dim, s->degree, b->nq);
  qd->nbatch = (s->ncells + qd->batch - 1) / qd->batch;
  qd->block_stride = ((size_t)qd->batch * nqp + 15) / 16 * 16; /* 16 doubles = 128 bytes */
  qd->batch_stride = qd->block_stride * qd->ncomp;
  qd->len = qd->batch_stride * qd->nbatch;
  MF_CALL(MF_CALLOC(ctx, qd->len, &qd->data));

  /* cells are independent: OpenMP threads share them (the coefficient callback must be thread-safe) */
  int ierr = 0, bad_cell = -1, bad_q = -1;
  double bad_det = 0.0;
#pragma omp parallel
  {
    mf_geom_work gw;
    double *xq = NULL, *jac = NULL;
    int lerr = mf_geom_work_init(s, b, &gw);
    if (!lerr) lerr = MF_CALLOC(ctx, (size_t)nqp * dim, &xq);
    if (!lerr) lerr = MF_CALLOC(ctx, (size_t)nqp * 9, &jac);
    if (lerr) {
#pragma omp atomic write
      ierr = lerr;
    }
#pragma omp for schedule(static)
    for (int e = 0; e < s->ncells; e++) {
      if (lerr) continue;
      mf_cell_geometry(s, b, e, &gw, xq, jac);
      for (int q = 0; q < nqp; q++) {
        const double *J = &jac[9 * q];
        double det = mf_det(dim, J);
        if (!(fabs(det) > 0.0)) {
#pragma omp critical(mf_qdata_bad)
          if (bad_cell < 0 || e < bad_cell) bad_cell = e, bad_q = q, bad_det = det;
          break;
        }
        double cval = c ? c(&xq[q * dim], dim, user) : 1.0;
        double wd = mf_qweight(dim, b, q) * fabs(det);
        int comp = 0;
        if (op->has_mass) qd->data[mf_qdata_index(qd, e, comp++, q)] = a * (op->has_grad ? 1.0 : cval) * wd;
        if (op->has_grad) {
          double Ji[9];
          inverse(dim, J, det, Ji);
          for (int k = 0; k < dim; k++)
            for (int l = k; l < dim; l++) {
              double g = 0.0; /* (J^-1 J^-T)_kl = sum_m Ji[k][m] Ji[l][m] */
              for (int m = 0; m < dim; m++) g += Ji[3 * k + m] * Ji[3 * l + m];
              qd->data[mf_qdata_index(qd, e, comp++, q)] = bcoef * cval * wd * g;
            }
        }
      }
    }
    mf_geom_work_free(&gw);
    free(xq);
    free(jac);
  }
  if (ierr) return ierr;
  MF_CHECK(bad_cell < 0, ctx, MF_ERR_ARGUMENT, "degenerate cell %d: Jacobian determinant %g at quadrature point %d",
           bad_cell, bad_det, bad_q);
  return 0;
}
