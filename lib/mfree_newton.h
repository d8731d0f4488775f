/* mfree_newton.h -- Newton's method for nonlinear problems of users' pointwise physics: part of the public API,
 * included by mfree.h (include mfree.h, not this file). */
#ifndef MFREE_NEWTON_H
#define MFREE_NEWTON_H

#ifndef MFREE_H /* the types it uses (mf_operator, mf_vector, mf_pc) are mfree.h's, which includes this file last */
#error "include mfree.h, not mfree_newton.h"
#endif

#ifdef __cplusplus
extern "C" {
#endif

/* ---------------------------------------------------------------- Newton */

/** Why a Newton solve stopped (mf_newton_info.reason). */
typedef enum {
  MF_NEWTON_CONVERGED_RESIDUAL = 1, /**< ||F(u)|| <= max(atol, rtol ||F(u0)||) */
  MF_NEWTON_CONVERGED_UPDATE = 2,   /**< the last update's norm ||du|| <= stol */
  MF_NEWTON_MAX_ITERATIONS = -1,    /**< the iteration limit came first */
  MF_NEWTON_DIVERGED = -2,          /**< ||F(u)|| grew past 1e10 ||F(u0)|| (full, admissible or critical steps) */
  MF_NEWTON_LINE_SEARCH = -3,       /**< no step length in 1, 1/2, ..., 1/2^12 decreased ||F|| enough (critical: no
                                         trial of 13 brought the slope down) */
  MF_NEWTON_LINEAR = -4,            /**< the inner CG (or GMRES) did not reach its tolerance */
  MF_NEWTON_STATE = -5,             /**< the residual or the Jacobian is not finite at the state (e.g. det F <= 0) */
  MF_NEWTON_STOPPED = -6            /**< the monitor said stop (on any rank) */
} mf_newton_reason;

/** Result of a Newton solve. */
typedef struct {
  int iterations, linear_iterations, converged; /**< Newton steps, CG iterations over all steps, 1 where reason > 0 */
  mf_newton_reason reason;
  double residual0, residual; /**< ||F(u0)||_2 over the free DoFs, ||F(u)||_2 at the end */
  double update;         /**< ||du||_2 of the last step (the step taken, times its length) */
  double seconds;        /**< wall time of the solve */
  double seconds_residual, seconds_jacobian, seconds_pc, seconds_linear; /**< of which: residuals (line search's
                                 included), Jacobians (set_state), preconditioner set-ups, inner solves */
  int negative_curvature; /**< steps whose CG met p^T J p <= 0 and stopped there (truncated CG: the step so far, or
                               in the trust region the step to its edge) */
  int pc_kept;            /**< steps that kept an earlier step's preconditioner set-up (mf_newton_set_pc_lag) */
  int trust_rejected;     /**< trust region: trial steps rejected over all steps (each then solved again in a quartered
                               region, but the last of a step's 13 and one of norm 0) */
} mf_newton_info;

/** A monitor: called with step 0 and the initial residual norm (update 0, linear 0), then after every step
 *  with its number, ||F(u)||, ||du|| and the step's CG iterations; nonzero stops the solve (MF_ERR_NOT_CONVERGED). */
typedef int (*mf_newton_monitor_fn)(int step, double residual, double update, int linear_iterations, void *user);

/** @brief Newton's method for F(u) = 0, F the residual of op's physics (mf_operator_residual: f0, f1) and its
 *  Jacobian op at the state (mf_operator_set_state: g0..g3), solved matrix-free by CG with a preconditioner of op
 *  (mf_newton_set_linear). u's Dirichlet entries are the boundary values and stay: op takes the Dirichlet form (its
 *  rows of F are zero, the updates zero there). Each step: J(u) du = -F(u) to the relative tolerance eta_k
 *  (Eisenstat-Walker, choice 2: eta_k = 0.9 (||F_k|| / ||F_k-1||)^2, safeguarded, at most eta_max; or fixed), then
 *  u <- u + lambda du, lambda = 1, 1/2, ... until ||F|| decreases by the factor 1 - 1e-4 lambda (backtracking; full
 *  steps: lambda = 1; admissible: halved only until F is finite; critical: by the energy's slope along du;
 *  mf_newton_set_line_search). Defaults: rtol 1e-10,
 *  atol 1e-50, stol 0 (off), 50 steps, Jacobi, eta_max 0.5 with Eisenstat-Walker, backtracking. Collective; the op is held. Hex and simplex spaces on cpu, simplex spaces on cuda. */
typedef struct mf_newton_s *mf_newton;
int mf_newton_create(mf_operator op, mf_newton *newton);
int mf_newton_set_tolerances(mf_newton newton, double rtol, double atol, double stol, int max_steps); /**< relative,
                                  absolute on ||F(u)||_2, on the update's ||du||_2 (0: off), step limit */
/** @brief The inner solve: preconditioner (MF_PC_NONE, _JACOBI, _CHEBYSHEV, _MULTIGRID: its levels at each state),
 *  the forcing (ew 1: Eisenstat-Walker from eta, capped at eta; 0: the fixed tolerance eta), eta in (0, 1), CG limit */
int mf_newton_set_linear(mf_newton newton, mf_pc_kind pc, int ew, double eta, int max_iterations);
/** @brief The inner solve by restarted GMRES(restart), right-preconditioned (mf_gmres), for Jacobians that are not
 *  symmetric (a non-variational physics); 0 goes back to CG (the default). */
int mf_newton_set_gmres(mf_newton newton, int restart);
/** @brief The matrix-free inner solve's preconditioner (of mf_newton_set_linear's kind; made now if not yet, again
 *  where the kind changes) for its settings (e.g. mf_pc_set_multigrid's degree): borrowed, not to be destroyed. */
int mf_newton_get_pc(mf_newton newton, mf_pc *pc);
/** Newton's step length (mf_newton_set_line_search). */
typedef enum {
  MF_NEWTON_FULL_STEPS = 0, /**< lambda = 1 always */
  MF_NEWTON_BACKTRACK = 1,  /**< lambda = 1, 1/2, ... until ||F|| decreases enough (the default) */
  MF_NEWTON_ADMISSIBLE = 2, /**< lambda = 1, 1/2, ... only until F is finite at the trial (no inverted cell), then
                                 taken whether ||F|| decreased or not (Newton's full steps kept where the state allows) */
  MF_NEWTON_CRITICAL = 3,   /**< for F the gradient of an energy: from lambda = 1 (halved where F is not finite),
                                 the first lambda where the energy's slope g = du . F(u + lambda du) is at most
                                 -g(0) / 2 (g(0) < 0; any more negative g too), else the secant's zero of g from 0;
                                 ||F|| may grow */
  MF_NEWTON_TRUST_REGION = 4 /**< for F the gradient of an energy, CG inside: Steihaug's trust region in the inner
                                  preconditioner's norm (CG's steps cut at its edge, negative curvature followed to
                                  it), the step taken where the energy's decrease (by Simpson's rule on its slope
                                  du . F along the step) is at least 1e-4 of the quadratic model's, the region
                                  quartered below 0.25 of it and doubled above 0.75 on its edge; unbounded until a
                                  step falls short; the preconditioner must be positive definite (its norm) */
} mf_newton_line_search;
/** @brief The step length rule: MF_NEWTON_BACKTRACK (1, default), MF_NEWTON_FULL_STEPS (0), MF_NEWTON_ADMISSIBLE (2),
 *  MF_NEWTON_CRITICAL (3) or MF_NEWTON_TRUST_REGION (4); others MF_ERR_ARGUMENT. */
int mf_newton_set_line_search(mf_newton newton, int mode);
/** @brief Lag the matrix-free inner solve's preconditioner: its set-up (a multigrid hierarchy's levels at the state,
 *  smoothers' diagonals and eigenvalue estimates; Jacobi's diagonal) made at an earlier step of the solve is kept
 *  while the state has moved since by at most tau ||u||_2 (||u - u_setup||_2); where an inner solve with a kept
 *  set-up fails, it is set up at the step's Jacobian and the solve repeated. tau in [0, 1); 0 (default): a set-up
 *  at every step. */
int mf_newton_set_pc_lag(mf_newton newton, double tau);
/** @brief 1: each step's Jacobian assembled (mf_operator_create_assembled; CSR, on the device on cuda) and CG on it
 *  (Jacobi or none: MF_ERR_UNSUPPORTED at the solve for others, and for GMRES); 0 (default): matrix-free. */
int mf_newton_set_assembled(mf_newton newton, int on);
/** @brief Solve F(u) = b, not 0 (b a double vector of op's space, kept by the caller; its Dirichlet entries ignored;
 *  NULL: 0). Load stepping: with the loads in the physics, b = (1 - s) F(0) poses the load fraction s. */
int mf_newton_set_rhs(mf_newton newton, mf_vector b);
int mf_newton_set_monitor(mf_newton newton, mf_newton_monitor_fn fn, void *user);
/** @brief Solve from the initial guess u (boundary entries: the Dirichlet values). 0 when converged, else
 *  MF_ERR_NOT_CONVERGED naming the reason (info.reason; an inner solve short or failed: MF_NEWTON_LINEAR, its text),
 *  or MF_ERR_ARGUMENT where F or J is not finite at a state the line search cannot avoid (MF_NEWTON_STATE; the
 *  point in the message). info (may be NULL) is filled on every return. A rejected trial's message may stay the
 *  context's last error after a solve that returns 0. eta_k is relative in the inner solver's own measure. */
int mf_newton_solve(mf_newton newton, mf_vector u, mf_newton_info *info);
/** @brief The last solve's ||F(u_k)|| (k = 0..n-1), its steps' lambda_k ||du_k|| ([0] = 0), kept till the next. */
int mf_newton_history(mf_newton newton, const double **residuals, const double **updates, int *n);
/** @brief The last solve's trust-region steps (MF_NEWTON_TRUST_REGION), beside mf_newton_history: each step's ratio
 *  rho_k of the energy's decrease to the quadratic model's (accepted at rho >= 1e-4; the radius doubled after a step
 *  to the edge with rho > 3/4, quartered below the step's norm after one with rho < 1/4), the radius its CG was bounded
 *  by (INFINITY: not bounded yet) and the step's norm, both in the preconditioner's norm. NaN at [0] and for every
 *  step without the region. Any output pointer may be NULL but n. */
int mf_newton_trust_history(mf_newton newton, const double **ratios, const double **radii, const double **steps, int *n);
int mf_newton_destroy(mf_newton *newton);

#ifdef __cplusplus
}
#endif
#endif
