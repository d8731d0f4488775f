/* cg.c -- preconditioned conjugate gradients on any mf_operator, the preconditioner behind the mf_pc
 * table (lib/mg/pc.c; the cg's own Jacobi unless another is set). The iteration uses only vector
 * operations of the backend, so on the GPU no vector leaves the device; the scalars of the dot
 * products are the only host traffic. A monitor (mf_cg_set_monitor) sees every residual of the history
 * as it is made. */
#include "operator_impl.h"
#include "mg/pc_impl.h"
#include "solvers/mf_solvers.h"

#include <limits.h>
#include <math.h>

struct mf_cg_s {
  mf_operator op;
  double rtol;
  int maxit;
  mf_vector r, z, p, Ap;
  mf_pc own; /* the cg's own preconditioner (Jacobi or none) */
  mf_pc pc;  /* the one in use: own, or the user's (a reference held: the user may destroy the handle) */
  double *history;
  int nhistory, capacity; /* entries used, entries allocated */
  mf_cg_monitor_fn monitor;
  void *monitor_user;
  int unfused; /* tests: the iteration step by step even where the fused steps apply */
  int truncate, negative; /* stop at negative curvature (Newton); it was met in the last solve */
  double radius;          /* Steihaug's trust region in the preconditioner's norm (mf_cg_set_radius; INFINITY: off) */
  int boundary;           /* the last solve stopped on the region's edge */
  double xnorm;           /* ||x||_M at the last solve's end (with truncate, x from 0) */
};

int mf_cg_create(mf_operator op, mf_cg *cg)
{
  if (cg) *cg = NULL; /* NULL on every failure, the first argument's included */
  MF_CHECK(op, NULL, MF_ERR_NULL, "operator is NULL");
  MF_CHECK(cg, op->ctx, MF_ERR_NULL, "output pointer cg is NULL");
  *cg = NULL;
  mf_context ctx = op->ctx;
  double t0 = mf_phase_begin(ctx);
  mf_cg c = NULL;
  /* collective: the ranks agree on the allocations before the preconditioner's creation */
  MF_CALL(MF_CALLOC_AGREED(ctx, 1, &c));
  c->op = op;
  c->rtol = 1e-10;
  c->maxit = 10000;
  c->radius = INFINITY;
  int ierr = mf_vector_create_prec(op->space, MF_PRECISION_DOUBLE, &c->r);
  if (!ierr) ierr = mf_vector_create_prec(op->space, MF_PRECISION_DOUBLE, &c->z);
  if (!ierr) ierr = mf_vector_create_prec(op->space, MF_PRECISION_DOUBLE, &c->p);
  if (!ierr) ierr = mf_vector_create_prec(op->space, MF_PRECISION_DOUBLE, &c->Ap);
  ierr = mf_agree(ctx, ierr);
  if (!ierr) ierr = mf_pc_create(op, MF_PC_JACOBI, &c->own);
  c->pc = c->own;
  mf_phase_end(ctx, MF_PHASE_SOLVER, t0);
  if (ierr) {
    mf_cg_destroy(&c);
    return ierr;
  }
  *cg = c;
  return 0;
}

int mf_cg_destroy(mf_cg *cg)
{
  if (!cg || !*cg) return 0;
  mf_cg c = *cg;
  mf_vector_destroy(&c->r);
  mf_vector_destroy(&c->z);
  mf_vector_destroy(&c->p);
  mf_vector_destroy(&c->Ap);
  if (c->pc != c->own) mf_pc_release(c->pc);
  mf_pc_destroy(&c->own);
  free(c->history);
  free(c);
  *cg = NULL;
  return 0;
}

int mf_cg_set_tolerance(mf_cg cg, double rtol, int max_iterations)
{
  MF_CHECK(cg, NULL, MF_ERR_NULL, "cg is NULL");
  MF_CHECK(rtol > 0.0 && rtol < 1.0, cg->op->ctx, MF_ERR_ARGUMENT, "tolerance %g out of range (0, 1)", rtol);
  MF_CHECK(max_iterations > 0, cg->op->ctx, MF_ERR_ARGUMENT, "iteration limit %d must be positive", max_iterations);
  cg->rtol = rtol;
  cg->maxit = max_iterations;
  return 0;
}

int mf_cg_set_jacobi(mf_cg cg, int on)
{
  MF_CHECK(cg, NULL, MF_ERR_NULL, "cg is NULL");
  mf_pc pc = NULL;
  MF_CALL(mf_pc_create(cg->op, on ? MF_PC_JACOBI : MF_PC_NONE, &pc));
  if (cg->pc != cg->own) mf_pc_release(cg->pc);
  mf_pc_destroy(&cg->own);
  cg->own = cg->pc = pc;
  return 0;
}

int mf_cg_set_pc(mf_cg cg, mf_pc pc)
{
  MF_CHECK(cg, NULL, MF_ERR_NULL, "cg is NULL");
  char why[192];
  MF_CHECK(!pc || mf_pc_operator(pc)->space == cg->op->space, cg->op->ctx, MF_ERR_INCOMPATIBLE,
           "preconditioner of another space%s",
           pc ? mf_space_mismatch(mf_pc_operator(pc)->space, cg->op->space, "the cg's operator has", why, sizeof why) : "");
  if (pc) mf_pc_retain(pc); /* before the release: the same pc set again */
  if (cg->pc != cg->own) mf_pc_release(cg->pc);
  cg->pc = pc ? pc : cg->own;
  return 0;
}

int mf_cg_set_monitor(mf_cg cg, mf_cg_monitor_fn fn, void *user)
{
  MF_CHECK(cg, NULL, MF_ERR_NULL, "cg is NULL");
  cg->monitor = fn;
  cg->monitor_user = fn ? user : NULL;
  return 0;
}

/* The monitor's word on iteration `it`: nonzero on every rank if it returned nonzero on any (a rank
 * that stopped alone would leave the others waiting in the next dot product). */
static int monitor_says_stop(mf_cg c, int it, double res, int *code)
{
  *code = 0;
  if (!c->monitor) return 0;
  int mine = c->monitor(it, res, c->monitor_user), any = mine;
  MPI_Allreduce(MPI_IN_PLACE, &any, 1, MPI_INT, MPI_LOR, c->op->ctx->comm);
  *code = mine;
  return any;
}

int mf_cg_residual_history(mf_cg cg, const double **history, int *length)
{
  MF_CHECK(cg, NULL, MF_ERR_NULL, "cg is NULL");
  MF_CHECK(history && length, cg->op->ctx, MF_ERR_NULL, "output pointers history/length are NULL");
  *history = cg->history;
  *length = cg->nhistory;
  return 0;
}

int mf_cg_setup(mf_cg c)
{
  MF_CHECK(c, NULL, MF_ERR_NULL, "cg is NULL");
  return mf_pc_setup(c->pc);
}

/* z <- M^{-1} r */
static int precondition(mf_cg c) { return mf_pc_apply(c->pc, c->r, c->z); }

/* Room for entry n of the residual history: it grows as the iteration goes (the limit may be
 * INT_MAX). Every rank grows it at the same iteration, so the ranks agree on the result. */
static int history_reserve(mf_cg c, int n)
{
  if (n < c->capacity) return 0;
  const int cap = c->capacity < 64 ? 64 : (c->capacity > INT_MAX / 2 ? INT_MAX : 2 * c->capacity);
  double *h = NULL;
  int ierr = n < cap ? mf_malloc(c->op->ctx, sizeof(double) * (size_t)cap, &h) :
             mf_error_set(c->op->ctx, MF_ERR_MEMORY, __FILE__, __LINE__, __func__, "CG: residual history full (%d)", n);
  ierr = mf_agree(c->op->ctx, ierr);
  if (ierr) {
    free(h);
    return ierr;
  }
  if (c->nhistory) memcpy(h, c->history, sizeof(double) * (size_t)c->nhistory);
  free(c->history);
  c->history = h;
  c->capacity = cap;
  return 0;
}

void mf_cg_set_fused(mf_cg cg, int on) { cg->unfused = !on; }
void mf_cg_set_truncate(mf_cg cg, int on) { cg->truncate = on != 0; }
int mf_cg_negative_curvature(mf_cg cg) { return cg->negative; }
void mf_cg_set_radius(mf_cg cg, double radius) { cg->radius = radius > 0.0 ? radius : INFINITY; }
int mf_cg_boundary(mf_cg cg) { return cg->boundary; }
double mf_cg_step_norm(mf_cg cg) { return cg->xnorm; }

/* tau >= 0 with ||x + tau p||_M = radius, from ||x||_M^2 = xx, (x, p)_M = xp, ||p||_M^2 = pp > 0 (xx <= radius^2, up
 * to rounding: held there) */
static double to_edge(double xx, double xp, double pp, double radius)
{
  const double c = fmin(xx - radius * radius, 0.0), disc = sqrt(fmax(xp * xp - pp * c, 0.0));
  const double tau = xp >= 0.0 ? (xp + disc > 0.0 ? -c / (xp + disc) : 0.0) : (disc - xp) / pp;
  return isfinite(tau) ? fmax(tau, 0.0) : 0.0;
}

/* the iteration, for checked arguments */
static int cg_solve(mf_cg c, mf_vector b, mf_vector x, mf_cg_info *info)
{
  mf_context ctx = c->op->ctx;
  c->nhistory = 0;
  c->negative = 0;
  c->boundary = 0;
  c->xnorm = 0.0;
  const int region = c->truncate && isfinite(c->radius); /* Steihaug's: x from 0, the steps cut at the edge */
  double xx = 0.0, xp = 0.0, pp = 0.0; /* ||x||_M^2, (x, p)_M, ||p||_M^2 by their recurrences (x from 0) */
  mf_vector r = c->r, z = c->z, p = c->p, Ap = c->Ap;
  double rz = 0.0, pAp = 0.0, res0 = 0.0, res = 0.0, t0 = 0.0, dt = 0.0;
  int it = 0, converged = 0, reached = 0, code = 0, stopped = 0; /* reached: the recursive residual did */
  /* Collective throughout: the steps that can fail on one rank alone are followed by a dot product
   * that carries the failure to every rank (mf_vector_dot_checked), or by an agreement. */
  int ierr = mf_cg_setup(c);
  if (ierr) goto done;
  MPI_Barrier(ctx->comm);
  t0 = MPI_Wtime(); /* the diagonal (set-up) is outside the timed solve */
  /* r <- b - A x;  z <- M^{-1} r;  p <- z */
  ierr = mf_operator_apply(c->op, x, Ap);
  if (!ierr) ierr = r->ops.copy(r, b);
  if (!ierr) ierr = r->ops.axpy(r, -1.0, Ap);
  MF_KEEP(ierr, precondition(c));
  if (!ierr) ierr = p->ops.copy(p, z);
  ierr = mf_vector_dot_checked(r, z, &rz, ierr);
  if (!ierr) ierr = history_reserve(c, 0);
  if (ierr) goto done;
  MF_CHECK_GOTO(isfinite(rz) && rz >= 0.0, ctx, MF_ERR_ARGUMENT, done,
                "CG: initial r^T M^-1 r = %g (operator or preconditioner not positive definite?)", rz);
  res0 = res = sqrt(rz);
  c->history[c->nhistory++] = res;
  converged = reached = res0 == 0.0;
  pp = rz; /* p = z: ||z||_M^2 = r^T M^-1 r */
  stopped = monitor_says_stop(c, it, res, &code);
  /* Jacobi or no preconditioner: the fused steps (mf_vector_ops.cg_update, cg_direction), three
   * passes over the vectors besides the operator and, on one rank, one host synchronisation per
   * iteration; with several ranks p^T A p is summed over the ranks before the update (two). */
  mf_vector dinv = NULL;
  const int fused = !c->unfused && !region && r->ops.cg_update && mf_pc_pointwise(c->pc, &dinv);
  while (!stopped && !converged && it < c->maxit) {
    double rz_new = 0.0;
    /* ierr may hold the last direction update's failure on this rank: the apply still runs (its ghost
     * exchange is collective) and the reductions below carry the failure to every rank */
    if (fused) {
      double out[2] = {0.0, 0.0};
      MF_KEEP(ierr, mf_operator_apply(c->op, p, Ap));
      if (ctx->size == 1) { /* p^T A p, alpha and the update in one go: x and r stay if p^T A p is bad */
        if (!ierr) ierr = r->ops.cg_update(x, r, p, Ap, dinv, rz, NULL, out);
        pAp = out[0];
      } else {
        ierr = mf_vector_dot_checked(p, Ap, &pAp, ierr);
        if (!ierr && isfinite(pAp) && pAp > 0.0) ierr = r->ops.cg_update(x, r, p, Ap, dinv, rz, &pAp, out);
      }
      rz_new = out[1];
      ierr = mf_sum_over_ranks(ctx, &rz_new, ierr);
    } else {
      MF_KEEP(ierr, mf_operator_apply(c->op, p, Ap));
      ierr = mf_vector_dot_checked(p, Ap, &pAp, ierr);
      const double a = pAp > 0.0 ? rz / pAp : 0.0; /* the region's test in the recurrence's own expression */
      if (!ierr && region && isfinite(pAp) &&
          (pAp <= 0.0 || !isfinite(a) || xx + a * (2.0 * xp + a * pp) >= c->radius * c->radius)) {
        /* negative curvature, or the step leaves the region: along p to its edge, and stop */
        ierr = x->ops.axpy(x, to_edge(xx, xp, pp, c->radius), p);
        c->boundary = 1;
        c->negative = pAp <= 0.0;
        c->xnorm = c->radius;
        it++; /* an operator's application, as an iteration */
        break; /* a failed axpy is agreed on below */
      }
      if (!ierr && isfinite(pAp) && pAp > 0.0) {
        const double alpha = rz / pAp;
        ierr = x->ops.axpy(x, alpha, p);              /* x <- x + alpha p  */
        if (!ierr) ierr = r->ops.axpy(r, -alpha, Ap); /* r <- r - alpha Ap */
        MF_KEEP(ierr, precondition(c));               /* z <- M^{-1} r     */
        ierr = mf_vector_dot_checked(r, z, &rz_new, ierr);
      }
    }
    if (ierr) goto done;
    if (c->truncate && isfinite(pAp) && pAp <= 0.0) { /* negative curvature: x as it is (x and r stayed) */
      const double t = pAp < 0.0 ? rz / -pAp : 1.0;
      if (it == 0) ierr = x->ops.axpy(x, t, p);
      if (it == 0) xx = t * t * pp;
      c->negative = 1;
      break;
    }
    MF_CHECK_GOTO(isfinite(pAp) && pAp > 0.0, ctx, MF_ERR_ARGUMENT, done,
                  "CG: p^T A p = %g at iteration %d (operator not positive definite?)", pAp, it);
    /* a preconditioner set up at an earlier operator (Newton's lag, mf_pc_keep) may have become indefinite */
    MF_CHECK_GOTO(!(c->pc->kept && rz_new < 0.0), ctx, MF_ERR_ARGUMENT, done,
                  "CG: r^T M^-1 r = %g at iteration %d with a preconditioner set up at an earlier state (not positive "
                  "definite at this one?)",
                  rz_new, it);
    /* the region's norm is the preconditioner's: it must be positive definite */
    MF_CHECK_GOTO(!(region && rz_new < 0.0), ctx, MF_ERR_ARGUMENT, done,
                  "CG: r^T M^-1 r = %g at iteration %d in a trust region (the preconditioner, whose norm bounds the "
                  "step, is not positive definite)",
                  rz_new, it);
    const double alpha = rz / pAp, beta = rz_new / rz; /* ||x||_M by the recurrences of x and p (x from 0) */
    xx += alpha * (2.0 * xp + alpha * pp);
    xp = beta * (xp + alpha * pp);
    pp = rz_new + beta * beta * pp;
    ierr = history_reserve(c, c->nhistory);
    if (ierr) goto done;
    it++;
    res = sqrt(fabs(rz_new));
    c->history[c->nhistory++] = res;
    if (res <= c->rtol * res0) converged = reached = 1;
    stopped = monitor_says_stop(c, it, res, &code);
    if (converged || stopped) break;
    if (fused) ierr = p->ops.cg_direction(p, r, dinv, rz_new / rz); /* p <- D^-1 r + beta p */
    else ierr = p->ops.aypx(p, rz_new / rz, z);                      /* p <- z + beta p */
    rz = rz_new;
  }
  ierr = mf_agree(ctx, ierr); /* a failed last direction update (the loop ended on the limit) */
  if (!c->boundary) c->xnorm = sqrt(fmax(xx, 0.0));
  dt = MPI_Wtime() - t0;
  /* The recursive residual keeps falling where rounding stalls the true one (tolerances near the
   * precision's limit): converged means that the true residual b - A x, recomputed here (outside the
   * timed solve), reaches twice the tolerance; it is what info.residual reports. */
  if (!ierr && converged && res0 > 0.0) {
    ierr = mf_operator_apply(c->op, x, Ap);
    if (!ierr) ierr = r->ops.copy(r, b);
    if (!ierr) ierr = r->ops.axpy(r, -1.0, Ap);
    MF_KEEP(ierr, precondition(c));
    ierr = mf_vector_dot_checked(r, z, &rz, ierr);
    if (!ierr) {
      res = sqrt(fabs(rz));
      converged = res <= 2.0 * c->rtol * res0 && !(c->pc->kept && rz < 0.0);
    }
  }
done:
  /* every rank reaches here with the same ierr (agreed), so the reduction below is collective */
  if (t0 > 0.0) MPI_Allreduce(MPI_IN_PLACE, &dt, 1, MPI_DOUBLE, MPI_MAX, ctx->comm);
  if (info) {
    info->iterations = it;
    info->converged = !ierr && converged;
    info->residual0 = res0;
    info->residual = res;
    info->seconds = dt;
    info->seconds_per_iter = it ? dt / it : 0.0;
  }
  if (!ierr && stopped && !reached) /* a stop asked for on the converging iteration is no stop */
    ierr = mf_error_set(ctx, MF_ERR_NOT_CONVERGED, __FILE__, __LINE__, __func__,
                        "CG stopped by its monitor at iteration %d (return value %d on this rank), residual %g of "
                        "initial %g", it, code, res, res0);
  return ierr;
}

int mf_cg_solve(mf_cg c, mf_vector b, mf_vector x, mf_cg_info *info)
{
  if (info) memset(info, 0, sizeof *info); /* filled on every return, an error's included */
  MF_CHECK(c, NULL, MF_ERR_NULL, "cg is NULL");
  mf_context ctx = c->op->ctx;
  MF_CHECK(b, ctx, MF_ERR_NULL, "right-hand side b is NULL");
  MF_CHECK(x, ctx, MF_ERR_NULL, "solution x is NULL");
  char why[192];
  MF_CHECK(b->space == c->op->space, ctx, MF_ERR_INCOMPATIBLE, "right-hand side b belongs to another space%s",
           mf_space_mismatch(b->space, c->op->space, "operator has", why, sizeof why));
  MF_CHECK(x->space == c->op->space, ctx, MF_ERR_INCOMPATIBLE, "solution x belongs to another space%s",
           mf_space_mismatch(x->space, c->op->space, "operator has", why, sizeof why));
  MF_CHECK(b != x, ctx, MF_ERR_ARGUMENT, "b and x must be different vectors");
  MF_CALL(mf_vector_access_all(b, MF_ACCESS_READ, "b"));
  MF_CALL(mf_vector_access_all(x, MF_ACCESS_READ_WRITE, "x"));
  return mf_vector_written(x, cg_solve(c, b, x, info));
}
