/* geometry.c -- isoparametric geometry: cell node coordinates at Gauss-Lobatto points from the mesh
 * mapping, interpolated to quadrature points, Jacobians by the collocation derivative there (sum
 * factorisation); and the quadrature data of the operators in array-of-structure-of-arrays layout. */
#include "hex/mf_hex_op.h"
#include "physics/mf_pointwise.h"

#include <math.h>
#include <string.h>

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
  /* no context: called from OpenMP threads, whose callers report a failure once */
  int ierr = MF_CALLOC(NULL, (size_t)s->npc * s->dim, &gw->X);
  if (!ierr) ierr = MF_CALLOC(NULL, MF_MAX_QP, &gw->comp);
  if (!ierr) ierr = MF_CALLOC(NULL, MF_MAX_QP, &gw->xk);
  if (!ierr) ierr = MF_CALLOC(NULL, MF_MAX_QP, &gw->t1);
  if (!ierr) ierr = MF_CALLOC(NULL, MF_MAX_QP, &gw->t2);
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

/* Interpolates component k of the cell's geometry nodes (gw->X) to the quadrature points: gw->xk. */
static void interpolate_component(mf_space s, const mf_basis1d *b, mf_geom_work *gw, int k)
{
  for (int node = 0; node < s->npc; node++) gw->comp[node] = gw->X[node * s->dim + k];
  mf_tensor_interpolate(s->dim, b, gw->comp, gw->xk, gw->t1, gw->t2);
}

void mf_cell_geometry(mf_space s, const mf_basis1d *b, int cell, mf_geom_work *gw, double *xq, double *jac)
{
  const int dim = s->dim, nq = b->nq;
  int nqp = 1;
  for (int k = 0; k < dim; k++) nqp *= nq;
  mf_space_cell_coords(s, cell, gw->X);
  for (int k = 0; k < dim; k++) {
    interpolate_component(s, b, gw, k);
    if (xq)
      for (int q = 0; q < nqp; q++) xq[q * dim + k] = gw->xk[q];
    int nn[3] = {nq, nq, nq};
    for (int l = 0; l < dim; l++) {
      mf_tensor_apply(dim, nn, l, b->D, nq, 0, gw->xk, gw->t1, 0);
      for (int q = 0; q < nqp; q++) jac[9 * q + 3 * k + l] = gw->t1[q];
    }
  }
}

void mf_cell_points(mf_space s, const mf_basis1d *b, int cell, mf_geom_work *gw, double *xq)
{
  const int dim = s->dim;
  int nqp = 1;
  for (int k = 0; k < dim; k++) nqp *= b->nq;
  mf_space_cell_coords(s, cell, gw->X);
  for (int k = 0; k < dim; k++) {
    interpolate_component(s, b, gw, k);
    for (int q = 0; q < nqp; q++) xq[q * dim + k] = gw->xk[q];
  }
}

double mf_det(int dim, const double *J) { return mf_qf_det(dim, J); }

double mf_qweight(int dim, const mf_basis1d *b, int q)
{
  double w = 1.0;
  for (int k = 0; k < dim; k++) {
    w *= b->qwts[q % b->nq];
    q /= b->nq;
  }
  return w;
}

void mf_eval_points(mf_coefficient_fn f, void *user, int dim, size_t n, const double *x, double *out)
{
#pragma omp parallel for schedule(static)
  for (size_t i = 0; i < n; i++) out[i] = f(&x[i * dim], dim, user);
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

void mf_qdata_layout(mf_operator op)
{
  const mf_space s = op->space;
  const int dim = s->dim;
  mf_qdata *qd = &mf_hexop(op)->qd;
  int nqp = 1;
  for (int k = 0; k < dim; k++) nqp *= mf_hexop(op)->basis.nq;
  qd->nqp = nqp;
  qd->ncomp = mf_qf_ncomp(dim, mf_hexop(op)->pw.has_mass, mf_hexop(op)->pw.has_grad);
  qd->batch = mf_cells_per_batch(dim, s->degree, mf_hexop(op)->basis.nq);
  qd->nbatch = (s->ncells + qd->batch - 1) / qd->batch;
  qd->block_stride = ((size_t)qd->batch * nqp + 15) / 16 * 16; /* 16 doubles = 128 bytes */
  qd->batch_stride = qd->block_stride * qd->ncomp;
  qd->len = qd->batch_stride * qd->nbatch;
}

/* The CPU set-up of the quadrature data, cells shared among OpenMP threads (each cell's data depends
 * on that cell alone, so the result does not depend on the thread count): the geometry first
 * (mf_qf_geometry), then, with a coefficient, c at the quadrature points (mf_qf_scale). */
int mf_qdata_setup(mf_operator op, mf_coefficient_fn c, void *user, double a, double bcoef)
{
  mf_space s = op->space;
  mf_context ctx = s->ctx;
  const int dim = s->dim;
  const mf_basis1d *b = &mf_hexop(op)->basis;
  mf_qdata *qd = &mf_hexop(op)->qd;
  const int nqp = qd->nqp;
  MF_CALL(MF_CALLOC_TOUCH(ctx, qd->len, &qd->data));

  int ierr = 0, bad_cell = -1, bad_q = -1;
  double bad_det = 0.0;
  mf_bad_point nan = MF_BAD_POINT_NONE; /* refused below: the first point where c is not finite */
  for (int pass = 0; pass < (c ? 2 : 1); pass++) {
    double t0 = mf_phase_begin(ctx);
#pragma omp parallel
    {
      mf_geom_work gw;
      double *xq = NULL, *jac = NULL;
      int lerr = mf_geom_work_init(s, b, &gw);
      if (!lerr) lerr = MF_CALLOC(NULL, (size_t)nqp * dim, &xq);
      if (!lerr) lerr = MF_CALLOC(NULL, (size_t)nqp * 9, &jac);
      mf_thread_note(&ierr, lerr);
#pragma omp for schedule(static)
      for (int e = 0; e < s->ncells; e++) {
        if (lerr) continue;
        double *out = &qd->data[mf_qdata_index(qd, e, 0, 0)];
        if (pass == 0) {
          mf_cell_geometry(s, b, e, &gw, NULL, jac);
          for (int q = 0; q < nqp; q++) {
            double det = mf_qf_geometry(dim, &jac[9 * q], mf_qweight(dim, b, q), a, bcoef, mf_hexop(op)->pw.has_mass,
                                        mf_hexop(op)->pw.has_grad, out + q, qd->block_stride);
            if (!(fabs(det) > 0.0)) {
#pragma omp critical(mf_qdata_bad)
              if (bad_cell < 0 || e < bad_cell) bad_cell = e, bad_q = q, bad_det = det;
              break;
            }
          }
        } else {
          mf_cell_points(s, b, e, &gw, xq);
          for (int q = 0; q < nqp; q++) {
            const double cq = c(&xq[q * dim], dim, user);
            if (!isfinite(cq)) { /* refused below, at the first such point (the same for any thread count) */
              mf_bad_point_note(&nan, e, q, dim, &xq[q * dim], 1, &cq);
              break;
            }
            mf_qf_scale(dim, mf_hexop(op)->pw.has_mass, mf_hexop(op)->pw.has_grad, cq, out + q, qd->block_stride);
          }
        }
      }
      mf_geom_work_free(&gw);
      free(xq);
      free(jac);
    }
    mf_phase_end(ctx, pass ? MF_PHASE_COEFFICIENT : MF_PHASE_GEOMETRY, t0);
    MF_CALL(mf_thread_work_check(ctx, ierr, "quadrature data"));
    MF_CHECK(bad_cell < 0, ctx, MF_ERR_ARGUMENT,
             "degenerate cell %d: Jacobian determinant %g at quadrature point %d", bad_cell, bad_det,
             bad_q);
    MF_CALL(mf_bad_point_refuse(ctx, &nan, dim, "coefficient c", "c"));
  }
  return 0;
}
