/* vector_hex.c -- the hex family's integrals of vectors over the cells (lib/family.h): right-hand
 * sides and L2 errors cell by cell, on the CPU here (OpenMP) or by the backend's table where it has them
 * (cuda: lib/cuda/setup.cu); H1 seminorm errors on the host for both backends. Hanging-node constraints
 * applied per cell. */
#include "mf_hex.h"
#include "hex/mf_hex_op.h"

#include <math.h>

#include "base/mf_backend.h"

/* Integration over the cells on the host: per cell, points and w |det J|. */
typedef struct {
  int nqp;
  mf_geom_work gw;
  double *xq, *jac, *wdet, *fq, *be;
} cell_quad;

/* per thread (no context: a failure is reported once by the caller) */
static int cell_quad_init(mf_space s, const mf_basis1d *b, cell_quad *cq)
{
  memset(cq, 0, sizeof *cq);
  cq->nqp = 1;
  for (int k = 0; k < s->dim; k++) cq->nqp *= b->nq;
  int ierr = mf_geom_work_init(s, b, &cq->gw);
  if (!ierr) ierr = MF_CALLOC(NULL, (size_t)cq->nqp * s->dim, &cq->xq);
  if (!ierr) ierr = MF_CALLOC(NULL, (size_t)cq->nqp * 9, &cq->jac);
  if (!ierr) ierr = MF_CALLOC(NULL, (size_t)cq->nqp, &cq->wdet);
  if (!ierr) ierr = MF_CALLOC(NULL, (size_t)cq->nqp, &cq->fq);
  if (!ierr) ierr = MF_CALLOC(NULL, (size_t)cq->nqp, &cq->be);
  return ierr;
}
static void cell_quad_free(cell_quad *cq)
{
  mf_geom_work_free(&cq->gw);
  free(cq->xq);
  free(cq->jac);
  free(cq->wdet);
  free(cq->fq);
  free(cq->be);
}
static void cell_quad_geometry(mf_space s, const mf_basis1d *b, int cell, cell_quad *cq)
{
  mf_cell_geometry(s, b, cell, &cq->gw, cq->xq, cq->jac);
  for (int q = 0; q < cq->nqp; q++) cq->wdet[q] = mf_qweight(s->dim, b, q) * fabs(mf_det(s->dim, &cq->jac[9 * q]));
}

/* b_i = sum over cells of C^T B^T (f w |det J|): the cells of one color at a time shared among
 * OpenMP threads, so the scatter needs no atomics and every entry sums its cells in the same order
 * whatever the thread count. */
static int rhs_cpu(mf_vector bvec, const mf_basis1d *b, mf_coefficient_fn f, void *user)
{
  mf_space s = bvec->space;
  const int dim = s->dim, npc = s->npc;
  double *h = bvec->data;
  int ierr = 0;
  mf_bad_point bad = MF_BAD_POINT_NONE; /* refused below: the first point where f is not finite */
#pragma omp parallel for schedule(static)
  for (int i = 0; i < s->nlocal; i++) h[i] = 0.0;
#pragma omp parallel
  {
    cell_quad cq;
    int lerr = cell_quad_init(s, b, &cq);
    mf_thread_note(&ierr, lerr);
    for (int c = 0; c < s->ncolors; c++) {
#pragma omp for schedule(static)
      for (int k = s->color_off[c]; k < s->color_off[c + 1]; k++) {
        if (lerr) continue;
        const int e = s->color_cells[k];
        cell_quad_geometry(s, b, e, &cq);
        for (int q = 0; q < cq.nqp; q++) {
          const double fv = f(&cq.xq[q * dim], dim, user);
          if (!isfinite(fv)) mf_bad_point_note(&bad, e, q, dim, &cq.xq[q * dim], 1, &fv);
          cq.fq[q] = fv * cq.wdet[q];
        }
        mf_tensor_integrate(dim, b, cq.fq, cq.be, cq.gw.t1, cq.gw.t2); /* be = (B^T x B^T x B^T) fq */
        mf_hanging_apply(dim, s->n1, s->face_code[e], s->hanging_P, cq.be, 1);
        const int *nodes = &s->cell_nodes[(size_t)e * npc];
        for (int i = 0; i < npc; i++) h[nodes[i]] += cq.be[i];
      }
    }
    cell_quad_free(&cq);
  }
  MF_CALL(mf_thread_work_check(s->ctx, ierr, "right-hand side"));
  return mf_bad_point_refuse(s->ctx, &bad, dim, "right-hand side f", "f");
}

/* Per-cell sums of (u_h - u)^2 w |det J| into cellsum (the caller adds them in cell order). */
static int l2_cells_cpu(mf_vector uh, const mf_basis1d *b, mf_coefficient_fn u, void *user, double *cellsum)
{
  mf_space s = uh->space;
  const int dim = s->dim, npc = s->npc;
  int ierr = 0;
  mf_bad_point bad = MF_BAD_POINT_NONE; /* refused below, as in rhs_cpu */
#pragma omp parallel
  {
    cell_quad cq;
    double ue[MF_MAX_N1 * MF_MAX_N1 * MF_MAX_N1];
    int lerr = cell_quad_init(s, b, &cq);
    mf_thread_note(&ierr, lerr);
#pragma omp for schedule(static)
    for (int e = 0; e < s->ncells; e++) {
      if (lerr) continue;
      cell_quad_geometry(s, b, e, &cq);
      for (int k = 0; k < npc; k++) ue[k] = uh->data[s->cell_nodes[(size_t)e * npc + k]];
      mf_hanging_apply(dim, s->n1, s->face_code[e], s->hanging_P, ue, 0);
      mf_tensor_interpolate(dim, b, ue, cq.fq, cq.gw.t1, cq.gw.t2);
      double sum = 0.0;
      for (int q = 0; q < cq.nqp; q++) {
        const double uq = u(&cq.xq[q * dim], dim, user);
        if (!isfinite(uq)) mf_bad_point_note(&bad, e, q, dim, &cq.xq[q * dim], 1, &uq);
        const double d = cq.fq[q] - uq;
        sum += d * d * cq.wdet[q];
      }
      cellsum[e] = sum;
    }
    cell_quad_free(&cq);
  }
  MF_CALL(mf_thread_work_check(s->ctx, ierr, "L2 error"));
  return mf_bad_point_refuse(s->ctx, &bad, dim, "exact solution u", "u");
}

/* ------------------------------------------------------------------ H1 seminorm of the error
 *
 * Hex cells, at the Gauss q = p + 2 points of the L2 error: the reference gradient of u_h from the
 * cell's nodal values through B and Bg (the derivatives of the nodal basis at the points), the
 * Jacobian the same way from the cell's geometry nodes, and J^-1 by the adjugate written out here.
 * The measure shares neither the operators' collocation derivative D nor their pointwise
 * J^-1 J^-T (lib/physics/mf_pointwise.h): a fault there cannot hide in the measure as well. */

/* out[l nqp + q] = d u / d xi_l at point q: (B x .. Bg along l .. x B) u, u nodal (n1^dim values);
 * t1, t2 scratch of nqp values */
static void ref_gradient(int dim, const mf_basis1d *b, const double *u, int nqp, double *out, double *t1, double *t2)
{
  for (int l = 0; l < dim; l++) {
    int n[3] = {b->n1, b->n1, b->n1};
    const double *in = u;
    for (int d = 0; d < dim; d++) {
      double *o = d == dim - 1 ? out + (size_t)l * nqp : d % 2 ? t2 : t1;
      mf_tensor_apply(dim, n, d, d == l ? b->Bg : b->B, b->nq, 0, in, o, 0);
      n[d] = b->nq;
      in = o;
    }
  }
}

/* Ji = J^-1 (both row-major 3 x 3, J[3k + l] = d x_k / d xi_l, so Ji[3l + k] = d xi_l / d x_k);
 * returns det J */
static double jacobian_inverse(int dim, const double *J, double *Ji)
{
  if (dim == 2) {
    const double det = J[0] * J[4] - J[1] * J[3];
    Ji[0] = J[4] / det, Ji[1] = -J[1] / det, Ji[3] = -J[3] / det, Ji[4] = J[0] / det;
    return det;
  }
  const double det = J[0] * (J[4] * J[8] - J[5] * J[7]) - J[1] * (J[3] * J[8] - J[5] * J[6]) +
                     J[2] * (J[3] * J[7] - J[4] * J[6]);
  for (int r = 0; r < 3; r++)
    for (int c = 0; c < 3; c++) { /* (J^-1)_rc = cofactor_cr / det; cyclic indices carry the sign */
      const int r1 = (r + 1) % 3, r2 = (r + 2) % 3, c1 = (c + 1) % 3, c2 = (c + 2) % 3;
      Ji[3 * r + c] = (J[3 * c1 + r1] * J[3 * c2 + r2] - J[3 * c1 + r2] * J[3 * c2 + r1]) / det;
    }
  return det;
}

/* Per-cell sums of |grad u_h - grad u|^2 w |det J| into cellsum, uh the local values (owned and
 * ghost); the first cell (lowest index, whatever the threads) where grad_u is not finite is refused. */
static int h1_cells_cpu(mf_space s, const double *uh, const mf_basis1d *b, mf_gradient_fn grad_u, void *user,
                        double *cellsum)
{
  const int dim = s->dim, npc = s->npc;
  int nqp = 1;
  for (int k = 0; k < dim; k++) nqp *= b->nq;
  int ierr = 0;
  mf_bad_point bad = MF_BAD_POINT_NONE; /* refused below, as in rhs_cpu */
#pragma omp parallel
  {
    /* X: geometry nodes (npc x dim); per point: x (dim), J (9), the reference gradient (dim, direction-major) */
    double *work = NULL, ue[MF_MAX_N1 * MF_MAX_N1 * MF_MAX_N1], comp[MF_MAX_N1 * MF_MAX_N1 * MF_MAX_N1];
    int lerr = MF_CALLOC(NULL, (size_t)npc * dim + (size_t)nqp * (3 + 9 + 3 + 3 + 2), &work);
    mf_thread_note(&ierr, lerr);
    double *X = work, *xq = X + (size_t)npc * dim, *jac = xq + (size_t)nqp * 3, *gref = jac + (size_t)nqp * 9;
    double *xk = gref + (size_t)nqp * 3, *t1 = xk + (size_t)nqp * 3, *t2 = t1 + nqp;
#pragma omp for schedule(static)
    for (int e = 0; e < s->ncells; e++) {
      if (lerr) continue;
      mf_space_cell_coords(s, e, X);
      for (int k = 0; k < dim; k++) { /* x_k and d x_k / d xi_l at the points */
        for (int node = 0; node < npc; node++) comp[node] = X[node * dim + k];
        mf_tensor_interpolate(dim, b, comp, xk, t1, t2);
        ref_gradient(dim, b, comp, nqp, gref, t1, t2);
        for (int q = 0; q < nqp; q++) {
          xq[q * dim + k] = xk[q];
          for (int l = 0; l < dim; l++) jac[9 * q + 3 * k + l] = gref[(size_t)l * nqp + q];
        }
      }
      for (int k = 0; k < npc; k++) ue[k] = uh[s->cell_nodes[(size_t)e * npc + k]];
      mf_hanging_apply(dim, s->n1, s->face_code[e], s->hanging_P, ue, 0);
      ref_gradient(dim, b, ue, nqp, gref, t1, t2);
      double sum = 0.0;
      for (int q = 0; q < nqp; q++) {
        double Ji[9], g[3] = {0.0, 0.0, 0.0};
        const double det = jacobian_inverse(dim, &jac[9 * q], Ji);
        grad_u(&xq[q * dim], dim, g, user);
        if (mf_bad_point_note_vector(&bad, e, q, dim, &xq[q * dim], g)) break;
        double d2 = 0.0;
        for (int k = 0; k < dim; k++) { /* d u_h / d x_k = sum_l d u_h / d xi_l  d xi_l / d x_k */
          double gk = 0.0;
          for (int l = 0; l < dim; l++) gk += Ji[3 * l + k] * gref[(size_t)l * nqp + q];
          d2 += (gk - g[k]) * (gk - g[k]);
        }
        sum += d2 * mf_qweight(dim, b, q) * fabs(det);
      }
      cellsum[e] = sum;
    }
    free(work);
  }
  MF_CALL(mf_thread_work_check(s->ctx, ierr, "H1 error"));
  return mf_bad_point_refuse(s->ctx, &bad, dim, "gradient of u", "the gradient");
}

/* ------------------------------------------------------------------ the table's entries */

int mf_hex_rhs(mf_vector bvec, mf_coefficient_fn f, void *user)
{
  mf_space s = bvec->space;
  mf_basis1d b; /* Gauss q = p + 1: the operators' default; f is evaluated (q/p)^dim times per DoF */
  int ierr = mf_basis1d_setup(s->degree, MF_QUAD_GAUSS, &b);
  if (!ierr && s->ctx->bk->vector.assemble_rhs) ierr = s->ctx->bk->vector.assemble_rhs(bvec, &b, f, user);
  else if (!ierr) ierr = rhs_cpu(bvec, &b, f, user);
  return ierr;
}

int mf_hex_l2_error(mf_vector uh, mf_coefficient_fn u, void *user, double *err)
{
  mf_space s = uh->space;
  mf_basis1d b;
  MF_CALL(mf_basis1d_setup(s->degree, MF_QUAD_GAUSS_P2, &b));
  double *cellsum = NULL, sum = 0.0;
  /* collective: the import runs on every rank, a local failure travels with the sum */
  int ierr = uh->ops.import(uh);
  if (!ierr) ierr = MF_CALLOC_TOUCH(s->ctx, s->ncells, &cellsum);
  if (!ierr && s->ctx->bk->vector.l2_cells) ierr = s->ctx->bk->vector.l2_cells(uh, &b, u, user, cellsum);
  else if (!ierr) ierr = l2_cells_cpu(uh, &b, u, user, cellsum);
  for (int e = 0; e < s->ncells && !ierr; e++) sum += cellsum[e]; /* cell order: deterministic */
  free(cellsum);
  MF_CALL(mf_sum_over_ranks(s->ctx, &sum, ierr));
  *err = sqrt(sum);
  return 0;
}

/* The cells on the host on every backend: the cpu backend reads the vector's array, the cuda backend
 * copies its local values (owned and ghost) to the host first. */
int mf_hex_h1_error(mf_vector uh, mf_gradient_fn grad_u, void *user, double *err)
{
  mf_space s = uh->space;
  mf_basis1d b;
  MF_CALL(mf_basis1d_setup(s->degree, MF_QUAD_GAUSS_P2, &b));
  const int host = uh->backend == MF_BACKEND_CPU && uh->prec == MF_PRECISION_DOUBLE;
  double *cellsum = NULL, *h = NULL, sum = 0.0;
  /* collective: the import runs on every rank, a local failure travels with the sum */
  int ierr = uh->ops.import(uh);
  /* the geometry nodes on the host (the cuda backend makes them on first use; collective) */
  MF_KEEP(ierr, mf_space_host_coords(s));
  if (!ierr) ierr = MF_CALLOC_TOUCH(s->ctx, s->ncells, &cellsum);
  if (!ierr && !host) ierr = MF_CALLOC_TOUCH(s->ctx, (size_t)uh->n + 1, &h);
  if (!ierr && !host) ierr = uh->ops.to_host(uh, h, uh->n);
  if (!ierr) ierr = h1_cells_cpu(s, host ? uh->data : h, &b, grad_u, user, cellsum);
  for (int e = 0; e < s->ncells && !ierr; e++) sum += cellsum[e]; /* cell order: deterministic */
  free(cellsum);
  free(h);
  MF_CALL(mf_sum_over_ranks(s->ctx, &sum, ierr));
  *err = sqrt(sum);
  return 0;
}
