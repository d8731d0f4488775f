/* kernels_otf.c -- geometry on the fly, CPU reference (the twin of the on-the-fly variant of the
 * point-design CUDA kernel, lib/cuda/apply_kernel.cuh). An operator in MF_GEOMETRY_ON_THE_FLY keeps
 * no quadrature data: at every application each cell's data are made again from
 *   - its geometry nodes: the space's continuous node coordinates gathered through cell_nodes, with
 *     the cell's hanging-node constraints applied (mf_space_cell_coords). Stored geometry is made from
 *     the same nodes (lib/hex/geometry.c), so cells with a mask need no coordinates of their own;
 *   - the coefficient at the quadrature points, one value per point (mf_hexop(op)->coefq; none when c is NULL).
 * Per quadrature point, in the order of the stored set-up (mf_qdata_setup):
 *   x_k,q = (B x B x B) X_k            interpolation of coordinate k (skipped on the GPU when collocated:
 *                                      B is the identity there, the values are the same)
 *   J_kl  = D_l x_k,q                  collocation derivative, as for the gradient of u
 *   qv    = mf_qf_geometry(J, w_q, a, b), then * c_q (mf_qf_scale)  -- lib/physics/mf_pointwise.h
 * so that the values equal the stored ones to the last bit on the CPU. The apply itself is
 * mf_kernel_cell_cpu with these values (lib/hex/kernels_cpu.c).                                     */
#include "hex/mf_hex_op.h"
#include "physics/mf_pointwise.h"

#include <math.h>

static size_t otf_big(mf_operator op)
{
  const size_t nqp = (size_t)mf_hexop(op)->qd.nqp, npc = (size_t)op->space->npc;
  return nqp > npc ? nqp : npc;
}

size_t mf_otf_work_size(mf_operator op)
{
  const mf_space s = op->space;
  /* X (npc dim), comp, xk, t1, t2 (big each), Jacobians (9 nqp) */
  return (size_t)s->npc * s->dim + 4 * otf_big(op) + 9 * (size_t)mf_hexop(op)->qd.nqp;
}

void mf_otf_cell_qdata(mf_operator op, int cell, double *work, double *qv)
{
  const mf_space s = op->space;
  const int dim = s->dim, nqp = mf_hexop(op)->qd.nqp;
  const size_t big = otf_big(op);
  mf_geom_work gw;
  gw.X = work;
  gw.comp = gw.X + (size_t)s->npc * dim;
  gw.xk = gw.comp + big;
  gw.t1 = gw.xk + big;
  gw.t2 = gw.t1 + big;
  double *jac = gw.t2 + big;
  mf_cell_geometry(s, &mf_hexop(op)->basis, cell, &gw, NULL, jac);
  for (int q = 0; q < nqp; q++) {
    mf_qf_geometry(dim, &jac[9 * q], mf_qweight(dim, &mf_hexop(op)->basis, q), mf_hexop(op)->pw.coef_a, mf_hexop(op)->pw.coef_b, mf_hexop(op)->pw.has_mass,
                   mf_hexop(op)->pw.has_grad, qv + q, (size_t)nqp);
    if (mf_hexop(op)->coefq) mf_qf_scale(dim, mf_hexop(op)->pw.has_mass, mf_hexop(op)->pw.has_grad, mf_hexop(op)->coefq[(size_t)cell * nqp + q], qv + q, (size_t)nqp);
  }
}

/* The points of mf_qdata_setup's coefficient pass, the same refusal of values that are not finite
 * (the first such cell, whatever the thread count). */
int mf_otf_coefficient_cpu(mf_operator op, double *cq)
{
  mf_space s = op->space;
  mf_context ctx = s->ctx;
  const int dim = s->dim, nqp = mf_hexop(op)->qd.nqp;
  const mf_basis1d *b = &mf_hexop(op)->basis;
  int ierr = 0;
  mf_bad_point bad = MF_BAD_POINT_NONE; /* refused below: the first point where c is not finite */
  double t0 = mf_phase_begin(ctx);
#pragma omp parallel
  {
    mf_geom_work gw;
    double *xq = NULL;
    int lerr = mf_geom_work_init(s, b, &gw);
    if (!lerr) lerr = MF_CALLOC(NULL, (size_t)nqp * dim, &xq);
    mf_thread_note(&ierr, lerr);
#pragma omp for schedule(static)
    for (int e = 0; e < s->ncells; e++) {
      if (lerr) continue;
      mf_cell_points(s, b, e, &gw, xq);
      for (int q = 0; q < nqp; q++) {
        const double c = mf_hexop(op)->pw.coef(&xq[q * dim], dim, mf_hexop(op)->pw.coef_user);
        cq[(size_t)e * nqp + q] = c;
        if (!isfinite(c)) {
          mf_bad_point_note(&bad, e, q, dim, &xq[q * dim], 1, &c);
          break;
        }
      }
    }
    mf_geom_work_free(&gw);
    free(xq);
  }
  mf_phase_end(ctx, MF_PHASE_COEFFICIENT, t0);
  MF_CALL(mf_thread_work_check(ctx, ierr, "coefficient"));
  return mf_bad_point_refuse(ctx, &bad, dim, "coefficient c", "c");
}

int mf_otf_qdata_cpu(mf_operator op, double **data)
{
  mf_space s = op->space;
  mf_context ctx = s->ctx;
  const mf_qdata *qd = &mf_hexop(op)->qd;
  const int nqp = qd->nqp;
  double *out = NULL;
  *data = NULL;
  MF_CALL(MF_CALLOC_TOUCH(ctx, qd->len, &out));
  int ierr = 0;
  double t0 = mf_phase_begin(ctx);
#pragma omp parallel
  {
    double *work = NULL;
    int lerr = MF_CALLOC(NULL, mf_otf_work_size(op) + (size_t)qd->ncomp * nqp, &work);
    mf_thread_note(&ierr, lerr);
#pragma omp for schedule(static)
    for (int e = 0; e < s->ncells; e++) {
      if (lerr) continue;
      double *qv = work + mf_otf_work_size(op);
      mf_otf_cell_qdata(op, e, work, qv);
      for (int c = 0; c < qd->ncomp; c++)
        for (int q = 0; q < nqp; q++) out[mf_qdata_index(qd, e, c, q)] = qv[(size_t)c * nqp + q];
    }
    free(work);
  }
  mf_phase_end(ctx, MF_PHASE_GEOMETRY, t0);
  if (ierr) free(out);
  MF_CALL(mf_thread_work_check(ctx, ierr, "quadrature data"));
  *data = out;
  return 0;
}
