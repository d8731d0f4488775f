/* cg.c -- preconditioned conjugate gradients on any mf_operator, the preconditioner behind the mf_pc
 * table (lib/mg/pc.c; the cg's own Jacobi unless another is set). The iteration uses only vector
 * operations of the backend, so on the GPU no vector leaves the device; the scalars of the dot
 * products are the only host traffic. A monitor (mf_cg_set_monitor) sees every residual of the history
 * as it is made. */
#include "mfree_impl.h"

#include <math.h>

struct mf_cg_s {
  mf_operator op;
  double rtol;
  int maxit;
  mf_vector r, z, p, Ap;
  mf_pc own; /* the cg's own preconditioner (Jacobi or none) */
  mf_pc pc;  /* the one in use: own, or the user's */
  double *history;
  int nhistory;
  mf_cg_monitor_fn monitor;
  void *monitor_user;
};

int mf_cg_create(mf_operator op, mf_cg *cg)
{
  MF_CHECK(op, NULL, MF_ERR_NULL, "operator is NULL");
  MF_CHECK(cg, op->ctx, MF_ERR_NULL, "output pointer cg is NULL");
  *cg = NULL;
  double t0 = mf_phase_begin(op->ctx);
  mf_cg c;
  MF_CALL(MF_CALLOC(op->ctx, 1, &c));
  c->op = op;
  c->rtol = 1e-10;
  c->maxit = 10000;
  int ierr = mf_vector_create(op->space, &c->r);
  if (!ierr) ierr = mf_vector_create(op->space, &c->z);
  if (!ierr) ierr = mf_vector_create(op->space, &c->p);
  if (!ierr) ierr = mf_vector_create(op->space, &c->Ap);
  if (!ierr) ierr = mf_pc_create(op, MF_PC_JACOBI, &c->own);
  c->pc = c->own;
  mf_phase_end(op->ctx, MF_PHASE_SOLVER, t0);
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
  mf_pc_destroy(&cg->own);
  cg->own = cg->pc = pc;
  return 0;
}

int mf_cg_set_pc(mf_cg cg, mf_pc pc)
{
  MF_CHECK(cg, NULL, MF_ERR_NULL, "cg is NULL");
  if (!pc) {
    cg->pc = cg->own;
    return 0;
  }
  MF_CHECK(mf_pc_operator(pc)->space == cg->op->space, cg->op->ctx, MF_ERR_INCOMPATIBLE,
           "preconditioner of another space (%lld DoFs) than the cg's operator (%lld)",
           (long long)mf_pc_operator(pc)->space->nglobal, (long long)cg->op->space->nglobal);
  cg->pc = pc;
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

/* the iteration, for checked arguments */
static int cg_solve(mf_cg c, mf_vector b, mf_vector x, mf_cg_info *info)
{
  mf_context ctx = c->op->ctx;
  free(c->history);
  c->nhistory = 0;
  MF_CALL(MF_CALLOC(ctx, c->maxit + 1, &c->history));
  MF_CALL(mf_cg_setup(c));
  mf_vector r = c->r, z = c->z, p = c->p, Ap = c->Ap;
  MPI_Barrier(ctx->comm);
  double t0 = MPI_Wtime(); /* the diagonal (set-up) is outside the timed solve */
  /* r <- b - A x;  z <- M^{-1} r;  p <- z */
  MF_CALL(mf_operator_apply(c->op, x, Ap));
  MF_CALL(r->ops.copy(r, b));
  MF_CALL(r->ops.axpy(r, -1.0, Ap));
  MF_CALL(precondition(c));
  MF_CALL(p->ops.copy(p, z));
  double rz, pAp;
  MF_CALL(mf_vector_dot(r, z, &rz));
  MF_CHECK(isfinite(rz) && rz >= 0.0, ctx, MF_ERR_ARGUMENT,
           "CG: initial r^T M^-1 r = %g (operator or preconditioner not positive definite?)", rz);
  double res0 = sqrt(rz), res = res0;
  c->history[c->nhistory++] = res;
  int it = 0, converged = res0 == 0.0, code = 0;
  int stopped = monitor_says_stop(c, it, res, &code);
  while (!stopped && !converged && it < c->maxit) {
    MF_CALL(mf_operator_apply(c->op, p, Ap));
    MF_CALL(mf_vector_dot(p, Ap, &pAp));
    MF_CHECK(isfinite(pAp) && pAp > 0.0, ctx, MF_ERR_ARGUMENT,
             "CG: p^T A p = %g at iteration %d (operator not positive definite?)", pAp, it);
    double alpha = rz / pAp;
    MF_CALL(x->ops.axpy(x, alpha, p));   /* x <- x + alpha p  */
    MF_CALL(r->ops.axpy(r, -alpha, Ap)); /* r <- r - alpha Ap */
    MF_CALL(precondition(c));            /* z <- M^{-1} r     */
    double rz_new;
    MF_CALL(mf_vector_dot(r, z, &rz_new));
    it++;
    res = sqrt(fabs(rz_new));
    c->history[c->nhistory++] = res;
    if (res <= c->rtol * res0) converged = 1;
    stopped = monitor_says_stop(c, it, res, &code);
    if (converged || stopped) break;
    MF_CALL(p->ops.aypx(p, rz_new / rz, z)); /* p <- z + beta p */
    rz = rz_new;
  }
  double t1 = MPI_Wtime(), dt = t1 - t0;
  MPI_Allreduce(MPI_IN_PLACE, &dt, 1, MPI_DOUBLE, MPI_MAX, ctx->comm);
  if (info) {
    info->iterations = it;
    info->converged = converged;
    info->residual0 = res0;
    info->residual = res;
    info->seconds = dt;
    info->seconds_per_iter = it ? dt / it : 0.0;
  }
  MF_CHECK(!stopped || converged, ctx, MF_ERR_NOT_CONVERGED,
           "CG stopped by its monitor at iteration %d (return value %d on this rank), residual %g of initial %g",
           it, code, res, res0);
  return 0;
}

int mf_cg_solve(mf_cg c, mf_vector b, mf_vector x, mf_cg_info *info)
{
  MF_CHECK(c, NULL, MF_ERR_NULL, "cg is NULL");
  mf_context ctx = c->op->ctx;
  MF_CHECK(b, ctx, MF_ERR_NULL, "right-hand side b is NULL");
  MF_CHECK(x, ctx, MF_ERR_NULL, "solution x is NULL");
  MF_CHECK(b->space == c->op->space && x->space == c->op->space, ctx, MF_ERR_INCOMPATIBLE,
           "b and x must belong to the operator's space (%lld DoFs)", (long long)c->op->space->nglobal);
  MF_CHECK(b != x, ctx, MF_ERR_ARGUMENT, "b and x must be different vectors");
  MF_CALL(mf_vector_access(b, MF_ACCESS_READ, "b"));
  MF_CALL(mf_vector_access(x, MF_ACCESS_READ_WRITE, "x"));
  return mf_vector_written(x, cg_solve(c, b, x, info));
}
