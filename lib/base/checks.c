/* checks.c -- the bottom of the library: refusals of callback values that are not finite (coefficients,
 * right-hand sides, exact solutions, boundary values), with the point and the cell or DoF; the first
 * bad quadrature point of a threaded cell loop, the same whatever the thread count. Calls nothing
 * above lib/base/. */
#include "mfree_impl.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

void mf_point_text(int dim, const double *p, char *buf, size_t n)
{
  if (dim == 3) snprintf(buf, n, "(%g, %g, %g)", p[0], p[1], p[2]);
  else snprintf(buf, n, "(%g, %g)", p[0], p[1]);
}

int mf_point_value_check(mf_context ctx, const char *role, const char *sym, int dim, int nqp, int first_cell,
                         int first_q, size_t n, const double *x, const double *vals)
{
  for (size_t i = 0; i < n; i++) {
    if (isfinite(vals[i])) continue;
    mf_bad_point bad = MF_BAD_POINT_NONE;
    char what[96];
    snprintf(what, sizeof what, "%s %s", role, sym);
    mf_bad_point_note(&bad, first_cell + (int)((first_q + i) / nqp), (int)((first_q + i) % nqp), dim, &x[i * dim], 1,
                      &vals[i]);
    return mf_bad_point_refuse(ctx, &bad, dim, what, sym);
  }
  return 0;
}

void mf_bad_point_note(mf_bad_point *bp, int cell, int q, int dim, const double *x, int nv, const double *v)
{
#pragma omp critical(mf_bad_point)
  if (bp->cell < 0 || cell < bp->cell || (cell == bp->cell && q < bp->q)) {
    bp->cell = cell, bp->q = q, bp->nv = nv;
    memcpy(bp->x, x, sizeof(double) * (size_t)dim);
    memcpy(bp->v, v, sizeof(double) * (size_t)nv);
  }
}

int mf_bad_point_note_vector(mf_bad_point *bp, int cell, int q, int dim, const double *x, const double *g)
{
  for (int k = 0; k < dim; k++)
    if (!isfinite(g[k])) {
      mf_bad_point_note(bp, cell, q, dim, x, dim, g);
      return 1;
    }
  return 0;
}

int mf_bad_point_refuse(mf_context ctx, const mf_bad_point *bp, int dim, const char *what, const char *who)
{
  if (bp->cell < 0) return 0;
  char xs[96], vs[96];
  mf_point_text(dim, bp->x, xs, sizeof xs);
  if (bp->nv == 1) snprintf(vs, sizeof vs, "%g", bp->v[0]);
  else mf_point_text(bp->nv, bp->v, vs, sizeof vs);
  return mf_error_set(ctx, MF_ERR_ARGUMENT, __FILE__, __LINE__, __func__,
                      "%s = %s at quadrature point %d of cell %d (rank %d), x = %s: %s must be finite", what, vs, bp->q,
                      bp->cell, ctx ? ctx->rank : 0, xs, who);
}

int mf_coefficient_check(mf_context ctx, int dim, int nqp, int first_cell, int first_q, size_t n, const double *x,
                         const double *vals)
{
  return mf_point_value_check(ctx, "coefficient", "c", dim, nqp, first_cell, first_q, n, x, vals);
}

int mf_dof_value_check(mf_context ctx, const char *role, const char *sym, int dim, int dof, const double *x, double value)
{
  if (isfinite(value)) return 0;
  char pt[96];
  mf_point_text(dim, x, pt, sizeof pt);
  return mf_error_set(ctx, MF_ERR_ARGUMENT, __FILE__, __LINE__, __func__,
                      "%s %s = %g at the point of DoF %d (rank %d), x = %s: %s must be finite", role, sym, value, dof,
                      ctx ? ctx->rank : 0, pt, sym);
}
