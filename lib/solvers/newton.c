/* newton.c -- Newton's method for F(u) = 0 (mf_newton, mfree_newton.h): F the residual of an operator's physics
 * (mf_operator_residual), its Jacobian the same operator at the state (mf_operator_set_state), each step's
 * linear system solved matrix-free by CG (or GMRES for a Jacobian that is not symmetric) to an inexact tolerance (Eisenstat-Walker, choice 2, with the usual
 * safeguards), then a step length: backtracking on ||F||_2, full steps, admissible steps (halved only until F is
 * finite), or critical steps (by the energy's slope du . F along the step), or a trust region (Steihaug's CG, the
 * energy's decrease against the model's); with a lag, the inner preconditioner's
 * set-up of an earlier step kept. The vectors are the backend's; the norms, the
 * forcing and the step lengths are the same numbers on every rank (global reductions), so every rank takes
 * the same branch. */
#include "operator_impl.h"
#include "family.h"
#include "mg/pc_impl.h"
#include "solvers/mf_solvers.h"

#include <math.h>

struct mf_newton_s {
  mf_operator op;
  double rtol, atol, stol;
  int max_steps;
  mf_pc_kind pc_kind;
  int ew, max_linear, line_search;
  double eta;
  mf_newton_monitor_fn monitor;
  void *user;
  mf_vector F, Ft, du, rhs, trial;
  mf_vector b; /* the right-hand side of F(u) = b (mf_newton_set_rhs; the caller's), else NULL */
  int assembled;    /* the Jacobian assembled at every step (mf_newton_set_assembled) */
  mf_operator A;    /* then: the step's assembled Jacobian, its CG and preconditioner */
  mf_cg acg;
  mf_pc apc;
  mf_cg cg;
  mf_gmres gmres; /* the inner solver instead of CG where set (mf_newton_set_gmres) */
  int restart;
  mf_pc pc;
  mf_pc_kind pc_made; /* the kind of pc (made at the first solve, again where the kind changed) */
  double pc_lag;      /* the pc's set-up kept while ||u - upc|| <= pc_lag ||u|| (mf_newton_set_pc_lag; 0: off) */
  mf_vector upc;      /* the state of the pc's last set-up (with pc_lag) */
  double *res, *upd;  /* history */
  double *rho, *rad, *snm; /* the trust region's history: each step's ratio, radius and norm (NaN without it) */
  double step_rho, step_rad, step_snm; /* the current step's, recorded with it */
  int n, cap;
  double delta;       /* the trust region's radius (MF_NEWTON_TRUST_REGION; INFINITY until a step falls short) */
};

int mf_newton_create(mf_operator op, mf_newton *newton)
{
  if (newton) *newton = NULL;
  MF_CHECK(op, NULL, MF_ERR_NULL, "operator is NULL");
  mf_context ctx = op->ctx;
  MF_CHECK(newton, ctx, MF_ERR_NULL, "output pointer newton is NULL");
  const mf_pw_op *pw = mf_pw(op);
  MF_CHECK(pw && pw->kind == MF_OP_PHYSICS && op->ops.residual, ctx, MF_ERR_UNSUPPORTED,
           "Newton needs an operator of a pointwise physics with a residual (mf_operator_create_physics), not %s "
           "operator",
           mf_operator_kind_name(op));
  MF_CHECK(op->prec == MF_PRECISION_DOUBLE, ctx, MF_ERR_UNSUPPORTED, "Newton runs on an operator in double");
  MF_CHECK(op->ops.set_state, ctx, MF_ERR_UNSUPPORTED,
           "Newton needs the operator's Jacobian at a state (mf_operator_set_state), not made for %s spaces on the %s "
           "backend",
           op->space->fam->name, mf_context_backend(ctx));
  mf_newton n = NULL;
  MF_CALL(MF_CALLOC_AGREED(ctx, 1, &n));
  n->op = op;
  mf_operator_retain(op);
  n->rtol = 1e-10, n->atol = 1e-50, n->stol = 0.0, n->max_steps = 50;
  n->pc_kind = MF_PC_JACOBI, n->ew = 1, n->eta = 0.5, n->max_linear = 10000, n->line_search = MF_NEWTON_BACKTRACK;
  n->pc_made = (mf_pc_kind)-1;
  mf_vector *v[5] = {&n->F, &n->Ft, &n->du, &n->rhs, &n->trial};
  int ierr = 0;
  for (int i = 0; i < 5 && !ierr; i++) ierr = mf_vector_create_prec(op->space, MF_PRECISION_DOUBLE, v[i]);
  ierr = mf_agree(ctx, ierr);
  if (!ierr) ierr = mf_cg_create(op, &n->cg);
  if (!ierr) mf_cg_set_truncate(n->cg, 1); /* an indefinite Jacobian: the step so far, then the line search */
  if (ierr) {
    mf_newton_destroy(&n);
    return ierr;
  }
  *newton = n;
  return 0;
}

int mf_newton_destroy(mf_newton *newton)
{
  if (!newton || !*newton) return 0;
  mf_newton n = *newton;
  mf_vector *v[6] = {&n->F, &n->Ft, &n->du, &n->rhs, &n->trial, &n->upc};
  for (int i = 0; i < 6; i++) mf_vector_destroy(v[i]);
  mf_cg_destroy(&n->cg);
  mf_cg_destroy(&n->acg);
  mf_pc_destroy(&n->apc);
  mf_operator_destroy(&n->A);
  mf_gmres_destroy(&n->gmres);
  mf_pc_destroy(&n->pc);
  mf_operator_release(n->op);
  free(n->res);
  free(n->upd);
  free(n->rho);
  free(n->rad);
  free(n->snm);
  free(n);
  *newton = NULL;
  return 0;
}

int mf_newton_set_tolerances(mf_newton newton, double rtol, double atol, double stol, int max_steps)
{
  MF_CHECK(newton, NULL, MF_ERR_NULL, "newton is NULL");
  mf_context ctx = newton->op->ctx;
  MF_CHECK(rtol >= 0.0 && rtol < 1.0, ctx, MF_ERR_ARGUMENT, "relative tolerance %g out of range [0, 1)", rtol);
  MF_CHECK(atol >= 0.0 && isfinite(atol), ctx, MF_ERR_ARGUMENT, "absolute tolerance %g: finite, >= 0", atol);
  MF_CHECK(stol >= 0.0 && isfinite(stol), ctx, MF_ERR_ARGUMENT, "update tolerance %g: finite, >= 0 (0: off)", stol);
  MF_CHECK(max_steps >= 1, ctx, MF_ERR_ARGUMENT, "step limit %d: at least 1", max_steps);
  MF_CHECK(rtol > 0.0 || atol > 0.0 || stol > 0.0, ctx, MF_ERR_ARGUMENT, "all tolerances 0: Newton would never stop");
  newton->rtol = rtol, newton->atol = atol, newton->stol = stol, newton->max_steps = max_steps;
  return 0;
}

int mf_newton_set_linear(mf_newton newton, mf_pc_kind pc, int ew, double eta, int max_iterations)
{
  MF_CHECK(newton, NULL, MF_ERR_NULL, "newton is NULL");
  mf_context ctx = newton->op->ctx;
  MF_CHECK(pc == MF_PC_NONE || pc == MF_PC_JACOBI || pc == MF_PC_CHEBYSHEV || pc == MF_PC_MULTIGRID, ctx,
           MF_ERR_ARGUMENT, "Newton's inner preconditioner %d: MF_PC_NONE, MF_PC_JACOBI, MF_PC_CHEBYSHEV or MF_PC_MULTIGRID",
           (int)pc);
  MF_CHECK(ew == 0 || ew == 1, ctx, MF_ERR_ARGUMENT, "forcing %d: 1 (Eisenstat-Walker) or 0 (fixed)", ew);
  MF_CHECK(eta > 0.0 && eta < 1.0, ctx, MF_ERR_ARGUMENT, "forcing term eta %g out of range (0, 1)", eta);
  MF_CHECK(max_iterations >= 1, ctx, MF_ERR_ARGUMENT, "CG iteration limit %d: at least 1", max_iterations);
  newton->pc_kind = pc, newton->ew = ew, newton->eta = eta, newton->max_linear = max_iterations;
  return 0;
}

int mf_newton_set_gmres(mf_newton newton, int restart)
{
  MF_CHECK(newton, NULL, MF_ERR_NULL, "newton is NULL");
  mf_context ctx = newton->op->ctx;
  MF_CHECK(restart >= 0 && restart <= 1000, ctx, MF_ERR_ARGUMENT, "GMRES restart %d out of range 0..1000 (0: CG)",
           restart);
  if (!restart) {
    mf_gmres_destroy(&newton->gmres);
    newton->restart = 0;
    return 0;
  }
  if (!newton->gmres) MF_CALL(mf_gmres_create(newton->op, &newton->gmres));
  MF_CALL(mf_gmres_set_restart(newton->gmres, restart));
  newton->restart = restart;
  if (newton->pc) MF_CALL(mf_gmres_set_pc(newton->gmres, newton->pc)); /* the inner preconditioner, its settings kept */
  return 0;
}

int mf_newton_set_line_search(mf_newton newton, int mode)
{
  MF_CHECK(newton, NULL, MF_ERR_NULL, "newton is NULL");
  MF_CHECK(mode >= MF_NEWTON_FULL_STEPS && mode <= MF_NEWTON_TRUST_REGION, newton->op->ctx, MF_ERR_ARGUMENT,
           "line search %d: MF_NEWTON_FULL_STEPS (0), MF_NEWTON_BACKTRACK (1), MF_NEWTON_ADMISSIBLE (2), "
           "MF_NEWTON_CRITICAL (3) or MF_NEWTON_TRUST_REGION (4)", mode);
  newton->line_search = mode;
  return 0;
}

int mf_newton_set_pc_lag(mf_newton newton, double tau)
{
  MF_CHECK(newton, NULL, MF_ERR_NULL, "newton is NULL");
  MF_CHECK(tau >= 0.0 && tau < 1.0, newton->op->ctx, MF_ERR_ARGUMENT,
           "preconditioner lag %g out of range [0, 1) (0: a set-up at every Newton step)", tau);
  newton->pc_lag = tau;
  return 0;
}

int mf_newton_set_monitor(mf_newton newton, mf_newton_monitor_fn fn, void *user)
{
  MF_CHECK(newton, NULL, MF_ERR_NULL, "newton is NULL");
  newton->monitor = fn;
  newton->user = user;
  return 0;
}

int mf_newton_history(mf_newton newton, const double **residuals, const double **updates, int *n)
{
  MF_CHECK(newton, NULL, MF_ERR_NULL, "newton is NULL");
  MF_CHECK(n, newton->op->ctx, MF_ERR_NULL, "output pointer n is NULL");
  if (residuals) *residuals = newton->res;
  if (updates) *updates = newton->upd;
  *n = newton->n;
  return 0;
}

int mf_newton_trust_history(mf_newton newton, const double **ratios, const double **radii, const double **steps, int *n)
{
  MF_CHECK(newton, NULL, MF_ERR_NULL, "newton is NULL");
  MF_CHECK(n, newton->op->ctx, MF_ERR_NULL, "output pointer n is NULL");
  if (ratios) *ratios = newton->rho;
  if (radii) *radii = newton->rad;
  if (steps) *steps = newton->snm;
  *n = newton->n;
  return 0;
}

/* one entry of the history, with the step's trust-region ratio, radius and norm (n->step_rho, _rad, _snm; grown as
 * the steps go; every rank alike) */
static int record(mf_newton n, double f, double u)
{
  if (n->n == n->cap) {
    const int cap = n->cap ? 2 * n->cap : 16;
    double **h[5] = {&n->res, &n->upd, &n->rho, &n->rad, &n->snm};
    for (int i = 0; i < 5; i++) {
      double *r = realloc(*h[i], sizeof(double) * (size_t)cap);
      MF_CHECK(r, n->op->ctx, MF_ERR_MEMORY, "out of host memory (the Newton history, %d entries)", cap);
      *h[i] = r;
    }
    n->cap = cap;
  }
  n->res[n->n] = f, n->upd[n->n] = u, n->rho[n->n] = n->step_rho, n->rad[n->n] = n->step_rad;
  n->snm[n->n] = n->step_snm;
  n->n++;
  return 0;
}

/* the monitor's word: nonzero on every rank if it said stop on any (the ranks take the same branch) */
static int monitor_stop(mf_newton n, int step, double f, double upd, int lin)
{
  if (!n->monitor) return 0;
  int any = n->monitor(step, f, upd, lin, n->user) != 0;
  MPI_Allreduce(MPI_IN_PLACE, &any, 1, MPI_INT, MPI_LOR, n->op->ctx->comm);
  return any;
}

static const char *reason_text(mf_newton_reason r, int line_search)
{
  if (r == MF_NEWTON_LINE_SEARCH && line_search == MF_NEWTON_CRITICAL)
    return "the line search found no step length that brings the energy's slope along the step to half its size (13 "
           "trials)";
  if (r == MF_NEWTON_LINE_SEARCH && line_search == MF_NEWTON_TRUST_REGION)
    return "the trust region was shrunk (12 times at most) without a step that decreases the energy as its model "
           "predicts";
  switch (r) {
  case MF_NEWTON_MAX_ITERATIONS: return "the step limit was reached";
  case MF_NEWTON_DIVERGED: return "the residual grew past 1e10 times its start (diverged)";
  case MF_NEWTON_LINE_SEARCH: return "the line search found no step length that decreases the residual";
  case MF_NEWTON_LINEAR: return "the inner solve (CG or GMRES) did not reach its tolerance";
  case MF_NEWTON_STOPPED: return "stopped by its monitor";
  case MF_NEWTON_STATE: return "the residual or the Jacobian is not finite at the state";
  default: return "converged";
  }
}

int mf_newton_set_assembled(mf_newton newton, int on)
{
  MF_CHECK(newton, NULL, MF_ERR_NULL, "newton is NULL");
  MF_CHECK(on == 0 || on == 1, newton->op->ctx, MF_ERR_ARGUMENT, "assembled %d: 1 (the Jacobian assembled) or 0", on);
  newton->assembled = on;
  return 0;
}

/* The step's Jacobian assembled (CSR, on the device on cuda), with its CG and a preconditioner of the kind asked for
 * (Jacobi or none: the matrix has a diagonal, no multigrid hierarchy). */
static int assemble_jacobian(mf_newton n)
{
  mf_context ctx = n->op->ctx;
  MF_CHECK(n->pc_kind == MF_PC_JACOBI || n->pc_kind == MF_PC_NONE, ctx, MF_ERR_UNSUPPORTED,
           "Newton with the assembled Jacobian: Jacobi or no preconditioner (not kind %d)", (int)n->pc_kind);
  MF_CHECK(!n->gmres, ctx, MF_ERR_UNSUPPORTED, "Newton with the assembled Jacobian: CG inside, not GMRES");
  mf_cg_destroy(&n->acg);
  mf_pc_destroy(&n->apc);
  mf_operator_destroy(&n->A);
  MF_CALL(mf_operator_create_assembled(n->op, &n->A));
  MF_CALL(mf_cg_create(n->A, &n->acg));
  mf_cg_set_truncate(n->acg, 1);
  MF_CALL(mf_pc_create(n->A, n->pc_kind, &n->apc));
  MF_CALL(mf_cg_set_pc(n->acg, n->apc));
  return mf_pc_setup(n->apc);
}

int mf_newton_set_rhs(mf_newton newton, mf_vector b)
{
  MF_CHECK(newton, NULL, MF_ERR_NULL, "newton is NULL");
  MF_CHECK(!b || (b->space == newton->op->space && b->prec == MF_PRECISION_DOUBLE), newton->op->ctx,
           MF_ERR_INCOMPATIBLE, "the right-hand side b must be a double vector of the operator's space");
  newton->b = b;
  return 0;
}

/* F(v) - b into r and its norm; *ok 0 where a value was not finite (MF_ERR_ARGUMENT: the message names the
 * point). The time in *t. */
static int residual_at(mf_newton n, mf_vector v, mf_vector r, double *norm, int *ok, double *t)
{
  *ok = 1;
  const double t0 = MPI_Wtime();
  int ierr = mf_operator_residual(n->op, v, r);
  if (!ierr && n->b) ierr = mf_vector_axpy(r, -1.0, n->b);
  if (!ierr && n->b && n->op->dirichlet) ierr = mf_vector_zero_boundary(r);
  *t += MPI_Wtime() - t0;
  if (ierr == MF_ERR_ARGUMENT) {
    *ok = 0;
    *norm = INFINITY;
    return 0;
  }
  MF_CALL(ierr);
  MF_CALL(mf_vector_norm2(r, norm));
  if (!isfinite(*norm)) *ok = 0;
  return 0;
}

/* the trial state u + lambda du into n->trial and its residual into n->Ft (residual_at's norm and finiteness) */
static int trial_at(mf_newton n, mf_vector u, double lambda, double *norm, int *ok, double *t)
{
  int ierr = mf_vector_copy(n->trial, u);
  if (!ierr) ierr = mf_vector_axpy(n->trial, lambda, n->du);
  if (!ierr) ierr = residual_at(n, n->trial, n->Ft, norm, ok, t);
  return ierr;
}

/* an error of the machine (memory, the device, MPI), not of the method: it ends the solve as it is */
static int machine_error(int e) { return e == MF_ERR_MEMORY || e == MF_ERR_CUDA || e == MF_ERR_MPI; }

/* the inner solve J du = rhs from du as it is: GMRES where set, else the step's CG */
static int inner_solve(mf_newton n, mf_cg cg, mf_cg_info *ci)
{
  return n->gmres ? mf_gmres_solve(n->gmres, n->rhs, n->du, ci) : mf_cg_solve(cg, n->rhs, n->du, ci);
}

/* the inner solve from du = 0 (rhs = -F, its tolerance set by the caller), timed and counted in info; where a kept
 * set-up (mf_newton_set_pc_lag) fails it (an error, or short of the tolerance without negative curvature or the trust
 * region's edge stopping CG), the preconditioner is set up at this Jacobian (step k) and the solve run again. A failed
 * set-up again leaves its message in why. */
static int solve_inner(mf_newton n, mf_vector u, mf_cg cg, int k, mf_cg_info *ci, mf_newton_info *info, char *why,
                       size_t nwhy)
{
  for (int again = 0;; again = 1) {
    memset(ci, 0, sizeof *ci);
    MF_CALL(mf_vector_set_value(n->du, 0.0)); /* (its failure the machine's: no retry) */
    double tj = MPI_Wtime();
    int lerr = inner_solve(n, cg, ci);
    info->seconds_linear += MPI_Wtime() - tj;
    info->linear_iterations += ci->iterations;
    if (again || machine_error(lerr) || n->assembled || !n->pc->kept) return lerr;
    if (!lerr && (ci->converged || (!n->gmres && (mf_cg_negative_curvature(cg) || mf_cg_boundary(cg))))) return 0;
    info->pc_kept--;
    mf_pc_keep(n->pc, 0);
    tj = MPI_Wtime();
    lerr = mf_pc_setup(n->pc);
    if (lerr && !machine_error(lerr))
      snprintf(why, nwhy, ": its preconditioner's set-up at step %d (again, after the lagged one failed) failed: %s", k,
               mf_context_error_message(n->op->ctx));
    if (!lerr) lerr = mf_vector_copy(n->upc, u);
    info->seconds_pc += MPI_Wtime() - tj;
    if (lerr) return lerr;
  }
}

/* the inner preconditioner of the kind asked for (made at the first solve or mf_newton_get_pc, again where the kind
 * changed) */
static int inner_pc(mf_newton n)
{
  if (n->pc_made == n->pc_kind) return 0;
  mf_pc_destroy(&n->pc);
  n->pc_made = (mf_pc_kind)-1;
  MF_CALL(mf_pc_create(n->op, n->pc_kind, &n->pc));
  MF_CALL(mf_cg_set_pc(n->cg, n->pc));
  if (n->gmres) MF_CALL(mf_gmres_set_pc(n->gmres, n->pc));
  n->pc_made = n->pc_kind;
  return 0;
}

int mf_newton_get_pc(mf_newton n, mf_pc *pc)
{
  if (pc) *pc = NULL;
  MF_CHECK(n, NULL, MF_ERR_NULL, "newton is NULL");
  MF_CHECK(pc, n->op->ctx, MF_ERR_NULL, "output pointer pc is NULL");
  MF_CALL(inner_pc(n));
  *pc = n->pc;
  return 0;
}

/* Steihaug's trust-region step at u (MF_NEWTON_TRUST_REGION): du from the inner CG (solved already within the
 * radius n->delta), the quadratic model's decrease pred = -(du . F + du . J du / 2) against the energy's,
 * ared = -(g(0) + 4 g(1/2) + g(1)) / 6 with g(t) = du . F(u + t du) (Simpson's rule on its slope: exact for an
 * energy of degree 4 along du); the step taken where ared >= 1e-4 pred, else, where ||F|| and the step's are at
 * their rounding floor (at most 1e-10 ||F_0||: ared and pred are rounding there), taken as the line searches take
 * it there, else the radius quartered and CG solved again (12 times at most; a kept preconditioner that fails the
 * solve set up again first). Negative curvature counts once for the step. On return n->trial is u + du and n->Ft
 * its residual (norm *ft, *finite). */
static int trust_step(mf_newton n, mf_vector u, mf_cg cg, int k, double f, double f0, double eta, int *floor_steps,
                      mf_cg_info *ci, mf_newton_info *info, double *ft, int *accepted, int *finite,
                      mf_newton_reason *reason, char *why, size_t nwhy)
{
  mf_context ctx = n->op->ctx;
  mf_operator J = n->assembled ? n->A : n->op;
  int counted = mf_cg_negative_curvature(cg); /* the first solve's, counted by the caller */
  *accepted = 0;
  for (int t = 0; t <= 12; t++) {
    if (t > 0) { /* the region quartered: CG again from 0 (the same Jacobian and preconditioner) */
      mf_cg_set_radius(cg, n->delta);
      int lerr = mf_cg_set_tolerance(cg, eta, n->max_linear);
      if (!lerr) lerr = mf_vector_copy(n->rhs, n->F);
      if (!lerr) lerr = mf_vector_scale(n->rhs, -1.0);
      if (!lerr) lerr = solve_inner(n, u, cg, k, ci, info, why, nwhy);
      if (machine_error(lerr)) return lerr;
      const int negative = !lerr && mf_cg_negative_curvature(cg);
      info->negative_curvature += negative && !counted;
      counted |= negative;
      if ((lerr || !ci->converged) && !negative && !(!lerr && mf_cg_boundary(cg))) {
        *reason = MF_NEWTON_LINEAR;
        if (lerr && !why[0]) snprintf(why, nwhy, ": %s", mf_context_error_message(ctx));
        return 0;
      }
    }
    const double snorm = mf_cg_step_norm(cg);
    const int edge = mf_cg_boundary(cg);
    double g0 = 0.0, q = 0.0, gm = 0.0, g1 = 0.0, fm = 0.0;
    int okm = 1;
    MF_CALL(mf_vector_dot(n->du, n->F, &g0));
    MF_CALL(mf_operator_apply(J, n->du, n->trial)); /* J du */
    MF_CALL(mf_vector_dot(n->du, n->trial, &q));
    const double pred = -(g0 + 0.5 * q);
    MF_CALL(mf_vector_copy(n->trial, u)); /* the energy's slope halfway, its residual into rhs (free until CG) */
    MF_CALL(mf_vector_axpy(n->trial, 0.5, n->du));
    MF_CALL(residual_at(n, n->trial, n->rhs, &fm, &okm, &info->seconds_residual));
    if (okm) MF_CALL(mf_vector_dot(n->du, n->rhs, &gm));
    MF_CALL(trial_at(n, u, 1.0, ft, finite, &info->seconds_residual));
    if (*finite) MF_CALL(mf_vector_dot(n->du, n->Ft, &g1));
    const double ared = -(g0 + 4.0 * gm + g1) / 6.0;
    const double rho = okm && *finite && pred > 0.0 ? ared / pred : -INFINITY;
    n->step_rho = rho, n->step_rad = n->delta, n->step_snm = snorm; /* the history's (of the step taken) */
    if (rho >= 1e-4) {
      if (rho > 0.75 && edge) n->delta *= 2.0;
      if (rho < 0.25) n->delta = 0.25 * fmin(snorm, n->delta);
      *accepted = 1;
      *floor_steps = 0;
      return 0;
    }
    if (*finite && *floor_steps < 3 && f <= 1e-10 * f0 && *ft <= 1e-10 * f0 && *ft <= 10.0 * f) {
      *accepted = 1; /* the rounding floor: the criteria decide */
      (*floor_steps)++;
      return 0;
    }
    n->delta = 0.25 * fmin(snorm, n->delta);
    info->trust_rejected++;
    if (!(n->delta > 0.0)) break; /* a step of norm 0 (F = 0 in M's norm at rounding): nothing left to shrink */
  }
  return 0;
}

int mf_newton_solve(mf_newton n, mf_vector u, mf_newton_info *info)
{
  mf_newton_info dummy;
  if (!info) info = &dummy;
  memset(info, 0, sizeof *info);
  MF_CHECK(n, NULL, MF_ERR_NULL, "newton is NULL");
  mf_context ctx = n->op->ctx;
  MF_CHECK(u, ctx, MF_ERR_NULL, "state vector u is NULL");
  MF_CHECK(u->space == n->op->space && u->prec == MF_PRECISION_DOUBLE, ctx, MF_ERR_INCOMPATIBLE,
           "u must be a double vector of the operator's space");
  MF_CHECK(n->line_search != MF_NEWTON_TRUST_REGION || !n->gmres, ctx, MF_ERR_UNSUPPORTED,
           "Newton's trust region needs CG inside (Steihaug's), not GMRES (mf_newton_set_gmres(newton, 0))");
  const double t0 = MPI_Wtime();
  n->n = 0;
  n->delta = INFINITY;
  n->step_rho = n->step_rad = n->step_snm = NAN;
  const int trust = n->line_search == MF_NEWTON_TRUST_REGION;
  MF_CALL(inner_pc(n));
  MF_CALL(mf_operator_set_dirichlet(n->op, 1)); /* u's boundary entries stay: F and the updates are zero there */
  double f = 0.0, f0, fprev, eta_prev = n->eta;
  int ok = 1;
  mf_newton_reason reason = MF_NEWTON_MAX_ITERATIONS;
  char why[320] = ""; /* the inner solve's own message where it failed */
  int ierr = residual_at(n, u, n->F, &f, &ok, &info->seconds_residual);
  f0 = fprev = f;
  info->residual0 = info->residual = f;
  if (!ierr) ierr = mf_agree(ctx, record(n, f, 0.0));
  if (!ierr && !ok) { /* the initial guess: F not finite there (the message naming the point) */
    reason = MF_NEWTON_STATE;
    ierr = mf_operator_residual(n->op, u, n->F);
    if (!ierr) ierr = mf_error_set(ctx, MF_ERR_ARGUMENT, __FILE__, __LINE__, __func__,
                                   "Newton: the residual at the initial guess is not finite (||F|| = %g)", f);
  }
  const double target = fmax(n->atol, n->rtol * f0);
  if (!ierr && f <= target) reason = MF_NEWTON_CONVERGED_RESIDUAL;
  if (!ierr && monitor_stop(n, 0, f, 0.0, 0) && reason == MF_NEWTON_MAX_ITERATIONS) reason = MF_NEWTON_STOPPED;
  int floor_steps = 0;  /* full steps in a row taken at the rounding floor without a decrease */
  double dlast = 0.0;   /* ||du|| of the last step (before its line search) */
  int lastfull = 0;     /* whether the last step was a full one */
  for (int k = 1; !ierr && reason == MF_NEWTON_MAX_ITERATIONS && k <= n->max_steps; k++) {
    double tj = MPI_Wtime();
    ierr = mf_operator_set_state(n->op, u); /* the Jacobian at u */
    info->seconds_jacobian += MPI_Wtime() - tj;
    if (ierr) {
      if (ierr == MF_ERR_ARGUMENT) reason = MF_NEWTON_STATE;
      break;
    }
    tj = MPI_Wtime();
    if (n->assembled) { /* the matrix and its preconditioner (counted as the Jacobian's time) */
      ierr = assemble_jacobian(n);
      info->seconds_jacobian += MPI_Wtime() - tj;
    } else {
      /* the preconditioner at the new Jacobian (else at the inner solve's start), or with a lag (mf_newton_set_pc_lag)
       * its set-up at an earlier step's Jacobian kept while the state moved by at most pc_lag ||u|| since */
      int keep = 0;
      if (n->pc_lag > 0.0 && !n->upc) /* the state of the set-up (collective: every rank has it, or none) */
        ierr = mf_agree(ctx, mf_vector_create_prec(n->op->space, MF_PRECISION_DOUBLE, &n->upc));
      if (!ierr && n->pc_lag > 0.0 && k > 1 && n->pc->ready) {
        double moved = 0.0, unorm = 0.0;
        ierr = mf_vector_copy(n->trial, u);
        if (!ierr) ierr = mf_vector_axpy(n->trial, -1.0, n->upc);
        if (!ierr) ierr = mf_vector_norm2(n->trial, &moved);
        if (!ierr) ierr = mf_vector_norm2(u, &unorm);
        keep = !ierr && moved <= n->pc_lag * unorm;
      }
      if (ierr) break; /* the machine's (memory, the device), not the method's */
      mf_pc_keep(n->pc, keep);
      ierr = mf_pc_setup(n->pc);
      if (!ierr && !keep && n->pc_lag > 0.0) {
        ierr = mf_vector_copy(n->upc, u);
        if (ierr) break;
      }
      info->pc_kept += keep;
      info->seconds_pc += MPI_Wtime() - tj;
    }
    if (ierr && !machine_error(ierr)) {
      reason = MF_NEWTON_LINEAR; /* the inner solve's set-up failed (say a smoother's eigenvalue estimate at an
                                    indefinite Jacobian): the method's failure, its message kept */
      snprintf(why, sizeof why, ": its preconditioner's set-up at step %d failed: %s", k, mf_context_error_message(ctx));
      ierr = 0;
      break;
    }
    if (ierr) break;
    mf_cg cg = n->assembled ? n->acg : n->cg;
    double eta = n->eta; /* the forcing term */
    if (n->ew && k > 1) {
      const double r = f / fprev;
      eta = 0.9 * r * r;
      const double safe = 0.9 * eta_prev * eta_prev;
      if (safe > 0.1 && safe > eta) eta = safe;
      if (eta > n->eta) eta = n->eta;
      /* no oversolving near the end: the residual criterion needs F + F' du no smaller than half its target; the
       * update criterion du to about half of stol, du being at most the last step's once Newton converges (a heuristic:
       * only after a full step that at least halved ||F||, and at most 0.1) */
      double floor_ = 0.5 * target / f;
      if (n->stol > 0.0 && dlast > 0.0 && lastfull && f <= 0.5 * fprev) {
        const double fs = fmin(0.1, 0.5 * n->stol / dlast);
        if (fs > floor_) floor_ = fs;
      }
      if (eta < floor_) eta = floor_ < n->eta ? floor_ : n->eta;
    }
    eta_prev = eta;
    mf_cg_info ci;
    memset(&ci, 0, sizeof ci);
    ierr = mf_vector_copy(n->rhs, n->F);
    if (!ierr) ierr = mf_vector_scale(n->rhs, -1.0);
    if (ierr) break;
    int lerr = n->gmres ? mf_gmres_set_tolerance(n->gmres, eta, n->max_linear) : mf_cg_set_tolerance(cg, eta, n->max_linear);
    if (!n->gmres) mf_cg_set_radius(cg, trust ? n->delta : INFINITY);
    if (!lerr) lerr = solve_inner(n, u, cg, k, &ci, info, why, sizeof why);
    if (machine_error(lerr)) { /* the machine's, not the method's */
      ierr = lerr;
      break;
    }
    const int negative = !lerr && !n->gmres && mf_cg_negative_curvature(cg);
    info->negative_curvature += negative;
    if ((lerr || !ci.converged) && !negative && !(!lerr && !n->gmres && mf_cg_boundary(cg))) {
      /* short of its tolerance, or broken down (not stopped at the trust region's edge) */
      reason = MF_NEWTON_LINEAR;
      if (lerr && !why[0]) snprintf(why, sizeof why, ": %s", mf_context_error_message(ctx));
      break;
    }
    double lambda = 1.0, ft = INFINITY, ffull = INFINITY; /* ffull: ||F|| after the full step */
    int accepted = 0, finite = 1;
    if (trust) {
      ierr = trust_step(n, u, cg, k, f, f0, eta, &floor_steps, &ci, info, &ft, &accepted, &finite, &reason, why, sizeof why);
      if (ierr || reason != MF_NEWTON_MAX_ITERATIONS) break;
      ffull = ft;
    }
    if (n->line_search == MF_NEWTON_CRITICAL) { /* the energy's slope along du: g(lambda) = du . F(u + lambda du) */
      double g0 = 0.0;
      ierr = mf_vector_dot(n->du, n->F, &g0);
      const int descent = g0 < 0.0; /* else (rounding, a residual of no energy): as admissible steps */
      for (int t = 0; t <= 12 && !ierr; t++) {
        ierr = trial_at(n, u, lambda, &ft, &finite, &info->seconds_residual);
        if (ierr) break;
        if (!finite) { /* an inverted cell: shorter */
          lambda *= 0.5;
          continue;
        }
        if (lambda == 1.0) ffull = ft;
        double g = 0.0;
        if (descent) ierr = mf_vector_dot(n->du, n->Ft, &g);
        if (ierr) break;
        if (!descent || g <= -0.5 * g0) { /* the slope down to half its size or beyond: the energy decreased */
          accepted = 1;
          break;
        }
        /* past the minimum along du: where the slope's secant from lambda = 0 is zero, at least a tenth of lambda */
        lambda = fmax(lambda * g0 / (g0 - g), 0.1 * lambda);
      }
    }
    for (int t = 0; n->line_search != MF_NEWTON_CRITICAL && !trust &&
                    t <= (n->line_search != MF_NEWTON_FULL_STEPS ? 12 : 0) && !ierr;
         t++, lambda *= 0.5) {
      ierr = trial_at(n, u, lambda, &ft, &ok, &info->seconds_residual);
      if (!ierr && ok && t == 0) ffull = ft;
      if (!ierr && ok && (n->line_search != MF_NEWTON_BACKTRACK || ft <= (1.0 - 1e-4 * lambda) * f)) accepted = 1;
      if (accepted || ierr) break;
    }
    if (ierr) break;
    if (!accepted && !trust && (n->line_search == MF_NEWTON_BACKTRACK || n->line_search == MF_NEWTON_CRITICAL) && floor_steps < 3 &&
        f <= 1e-10 * f0 && ffull <= 1e-10 * f0 && ffull <= 10.0 * f) {
      /* no step length decreased ||F|| (critical: the slope) at its rounding floor (||F|| <= 1e-10 ||F_0||, below which
       * only a tighter rtol or the update criterion asks to go): the full step, which stays there, is taken and the
       * criteria decide; three such steps in a row at most */
      lambda = 1.0;
      ierr = trial_at(n, u, 1.0, &ft, &ok, &info->seconds_residual);
      if (ierr) break;
      accepted = finite = ok;
      floor_steps += accepted;
    } else if (accepted && !trust)
      floor_steps = 0;
    if (!accepted) {
      if (n->line_search == MF_NEWTON_BACKTRACK || ((n->line_search == MF_NEWTON_CRITICAL || trust) && finite))
        reason = MF_NEWTON_LINE_SEARCH;
      else { /* a full step (or every admissible or critical trial) to a state where F is not finite: the message
                naming the point */
        reason = MF_NEWTON_STATE;
        ierr = mf_operator_residual(n->op, n->trial, n->Ft);
        if (!ierr)
          ierr = mf_error_set(ctx, MF_ERR_ARGUMENT, __FILE__, __LINE__, __func__,
                              trust ? "Newton: the residual is not finite at step %d even after 12 shrinkings of the trust "
                                      "region (||F|| = %g)"
                              : n->line_search == MF_NEWTON_CRITICAL ? "Newton: the residual is not finite at step %d even after 13 "
                                              "trials (halvings where it was not finite, secant steps) (||F|| = %g)"
                              : n->line_search != MF_NEWTON_FULL_STEPS ? "Newton: the residual is not finite at step %d even after 12 halvings"
                                               " of the step (||F|| = %g)"
                                             : "Newton: the residual after full step %d is not finite (||F|| = %g)",
                              k, ft);
      }
      break;
    }
    double dnorm = 0.0;
    ierr = mf_vector_norm2(n->du, &dnorm);
    if (!ierr) ierr = mf_vector_copy(u, n->trial);
    if (ierr) break;
    dlast = dnorm, lastfull = lambda == 1.0 && !(trust && mf_cg_boundary(cg));
    mf_vector sw = n->F;
    n->F = n->Ft, n->Ft = sw;
    fprev = f, f = ft;
    info->iterations = k;
    info->residual = f;
    info->update = lambda * dnorm;
    ierr = mf_agree(ctx, record(n, f, info->update));
    if (ierr) break;
    if (f <= target) reason = MF_NEWTON_CONVERGED_RESIDUAL;
    else if (n->stol > 0.0 && info->update <= n->stol && !(trust && mf_cg_boundary(cg)))
      reason = MF_NEWTON_CONVERGED_UPDATE; /* (not a step cut short at the trust region's edge) */
    else if (n->line_search != MF_NEWTON_BACKTRACK && f > 1e10 * f0) reason = MF_NEWTON_DIVERGED;
    if (monitor_stop(n, k, f, info->update, ci.iterations) && reason == MF_NEWTON_MAX_ITERATIONS)
      reason = MF_NEWTON_STOPPED;
  }
  if (n->pc) mf_pc_keep(n->pc, 0); /* set up again at its next use, as without a lag */
  info->reason = reason;
  info->converged = reason > 0;
  info->seconds = MPI_Wtime() - t0;
  if (ierr) return ierr;
  if (!info->converged)
    return mf_error_set(ctx, MF_ERR_NOT_CONVERGED, __FILE__, __LINE__, __func__,
                        "Newton did not converge: %s after %d steps (||F|| = %.3e, start %.3e)%s", reason_text(reason, n->line_search),
                        info->iterations, f, f0, why);
  return 0;
}
