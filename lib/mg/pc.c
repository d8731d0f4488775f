/* pc.c -- the mf_pc object: preconditioners z = M^-1 r behind one table, so that CG (lib/solvers/cg.c) and,
 * later, multigrid smoothers call them alike. Kinds: none, Jacobi (the matrix-free diagonal),
 * Chebyshev (a fixed polynomial in D^-1 A from an eigenvalue estimate), shell (a user function).
 * Everything is written with vector operations of the backend table and operator applications, so
 * one code runs on the CPU and, with no host copies, on the GPU.
 *
 * Chebyshev iteration for A x = r from x = 0, D = diag(A), eigenvalues of D^-1 A targeted in
 * [a, b] = [1.2 lambda / range, 1.2 lambda] (theta = (b + a)/2, delta = (b - a)/2, sigma = theta/delta):
 *     d_1 = D^-1 r / theta,  x_1 = d_1,  rho_1 = 1/sigma
 *     rho_{k+1} = 1/(2 sigma - rho_k)
 *     d_{k+1} = rho_{k+1} rho_k d_k + (2 rho_{k+1}/delta) D^-1 (r - A x_k),  x_{k+1} = x_k + d_{k+1}
 * x_k = p(D^-1 A) D^-1 r with a fixed polynomial p, positive on [0, b]: a symmetric positive
 * definite preconditioner whatever r is.
 * The largest eigenvalue lambda of D^-1 A comes from `eig_steps` Jacobi-preconditioned CG steps on
 * A x = b (b pseudo-random): the CG coefficients give the Lanczos tridiagonal matrix, whose largest
 * eigenvalue (bisection on Sturm sequences) approaches lambda from below. */
#include "mfree_impl.h"

#include <math.h>

struct mf_pc_s {
  mf_operator op;
  mf_pc_kind kind;
  int refs; /* the user's handle and the cgs that use it (mf_cg_set_pc) */
  int ready;
  mf_vector dinv; /* 1/diag(A) (Jacobi, Chebyshev) */
  /* Chebyshev */
  int degree, eig_steps;
  double range, lambda_max, lambda_min;
  double solve_reduction; /* > 0: a solver over the whole spectrum (multigrid's coarse level): the
                             interval [0.9 lambda_min, 1.2 lambda_max], the degree for this reduction */
  mf_vector d, res, t;
  /* multigrid (lib/mg/mg.c) */
  mf_mg mg;
  int mg_degree;
  double mg_range, mg_coarse;
  mf_precision mg_prec;
  mf_mg_coarse mg_coarse_kind;
  int mg_profile; /* mf_pc_multigrid_profile: kept for the hierarchies that later set-ups make */
  /* shell */
  mf_pc_apply_fn shell;
  void *user;
};

mf_operator mf_pc_operator(mf_pc pc) { return pc->op; }

int mf_pc_pointwise(mf_pc pc, mf_vector *dinv)
{
  *dinv = NULL;
  if (pc->kind == MF_PC_NONE) return 1;
  if (pc->kind != MF_PC_JACOBI || !pc->dinv || pc->dinv->prec != MF_PRECISION_DOUBLE) return 0;
  *dinv = pc->dinv;
  return 1;
}

/* A preconditioner's kind in words and its enumerator, for messages */
static const char *pc_kind_name(mf_pc_kind kind)
{
  switch (kind) {
  case MF_PC_NONE: return "none (MF_PC_NONE)";
  case MF_PC_JACOBI: return "Jacobi (MF_PC_JACOBI)";
  case MF_PC_CHEBYSHEV: return "Chebyshev (MF_PC_CHEBYSHEV)";
  case MF_PC_MULTIGRID: return "multigrid (MF_PC_MULTIGRID)";
  case MF_PC_SHELL: return "shell (MF_PC_SHELL)";
  }
  return "of an unknown kind";
}

static int pc_new(mf_operator op, mf_pc_kind kind, mf_pc *pc)
{
  MF_CHECK(op, NULL, MF_ERR_NULL, "operator is NULL");
  MF_CHECK(pc, op->ctx, MF_ERR_NULL, "output pointer pc is NULL");
  *pc = NULL;
  mf_pc p;
  MF_CALL(MF_CALLOC_AGREED(op->ctx, 1, &p)); /* collective, as every creation */
  p->op = op;
  mf_operator_retain(op);
  p->refs = 1;
  p->kind = kind;
  p->degree = 4;
  p->range = 20.0;
  p->eig_steps = 12;
  p->mg_degree = 4;
  p->mg_range = 15.0;
  p->mg_coarse = 1e-3;
  *pc = p;
  return 0;
}

int mf_pc_create(mf_operator op, mf_pc_kind kind, mf_pc *pc)
{
  if (pc) *pc = NULL; /* NULL on every failure, the first argument's included */
  MF_CHECK(op, NULL, MF_ERR_NULL, "operator is NULL");
  MF_CHECK(kind == MF_PC_NONE || kind == MF_PC_JACOBI || kind == MF_PC_CHEBYSHEV || kind == MF_PC_MULTIGRID,
           op->ctx, MF_ERR_ARGUMENT,
           "preconditioner kind %d unknown here (MF_PC_NONE, MF_PC_JACOBI, MF_PC_CHEBYSHEV or MF_PC_MULTIGRID; shells "
           "come from mf_pc_create_shell)",
           (int)kind);
  MF_CHECK(kind != MF_PC_MULTIGRID || !op->space->simplex, op->ctx, MF_ERR_UNSUPPORTED,
           "multigrid needs the p4est forest's coarser copies: not available on simplex meshes (use Jacobi or "
           "Chebyshev)");
  MF_CHECK(kind != MF_PC_MULTIGRID || op->kind == MF_OP_MASS || op->kind == MF_OP_LAPLACE || op->kind == MF_OP_HELMHOLTZ,
           op->ctx, MF_ERR_UNSUPPORTED, "multigrid needs a matrix-free mass, Laplace or Helmholtz operator, not %s operator",
           mf_operator_kind_name(op));
  return pc_new(op, kind, pc);
}

int mf_pc_create_shell(mf_operator op, mf_pc_apply_fn apply, void *user, mf_pc *pc)
{
  if (pc) *pc = NULL; /* NULL on every failure, the first argument's included */
  MF_CHECK(op, NULL, MF_ERR_NULL, "operator is NULL");
  MF_CHECK(apply, op->ctx, MF_ERR_NULL, "shell preconditioner apply function is NULL");
  MF_CALL(pc_new(op, MF_PC_SHELL, pc));
  (*pc)->shell = apply;
  (*pc)->user = user;
  return 0;
}

int mf_pc_set_chebyshev(mf_pc pc, int degree, double range, int eig_steps)
{
  MF_CHECK(pc, NULL, MF_ERR_NULL, "preconditioner is NULL");
  mf_context ctx = pc->op->ctx;
  MF_CHECK(pc->kind == MF_PC_CHEBYSHEV, ctx, MF_ERR_ARGUMENT, "preconditioner %s is not MF_PC_CHEBYSHEV",
           pc_kind_name(pc->kind));
  MF_CHECK(degree >= 1 && degree <= 64, ctx, MF_ERR_ARGUMENT, "Chebyshev degree %d out of range 1..64", degree);
  MF_CHECK(range > 1.0 && isfinite(range), ctx, MF_ERR_ARGUMENT, "Chebyshev range %g must be a finite number > 1",
           range);
  MF_CHECK(eig_steps >= 2 && eig_steps <= 100, ctx, MF_ERR_ARGUMENT,
           "eigenvalue estimate steps %d out of range 2..100", eig_steps);
  pc->degree = degree;
  pc->range = range;
  pc->eig_steps = eig_steps;
  pc->ready = 0;
  return 0;
}

/* Number of eigenvalues below x of the symmetric tridiagonal matrix (diag a, off-diagonal b): the
 * negative pivots of the Sturm sequence. */
static int sturm_below(int n, const double *a, const double *b, double x)
{
  int below = 0;
  double q = 1.0;
  for (int i = 0; i < n; i++) {
    q = a[i] - x - (i > 0 ? b[i - 1] * b[i - 1] / q : 0.0);
    if (q == 0.0) q = -1e-300;
    if (q < 0.0) below++;
  }
  return below;
}

/* Smallest eigenvalue, by bisection. */
static double tridiag_min_eig(int n, const double *a, const double *b)
{
  double lo = INFINITY, hi = -INFINITY;
  for (int i = 0; i < n; i++) {
    double r = (i > 0 ? fabs(b[i - 1]) : 0.0) + (i + 1 < n ? fabs(b[i]) : 0.0);
    lo = fmin(lo, a[i] - r);
    hi = fmax(hi, a[i] + r);
  }
  for (int it = 0; it < 200 && hi - lo > 1e-14 * fmax(1e-300, fabs(hi)); it++) {
    const double x = 0.5 * (lo + hi);
    if (sturm_below(n, a, b, x) >= 1) hi = x;
    else lo = x;
  }
  return lo;
}

/* Largest eigenvalue of the symmetric tridiagonal matrix (diag a, off-diagonal b) by bisection on
 * the Sturm sequence count of eigenvalues below x. */
static double tridiag_max_eig(int n, const double *a, const double *b)
{
  double lo = INFINITY, hi = -INFINITY;
  for (int i = 0; i < n; i++) { /* Gershgorin */
    double r = (i > 0 ? fabs(b[i - 1]) : 0.0) + (i + 1 < n ? fabs(b[i]) : 0.0);
    lo = fmin(lo, a[i] - r);
    hi = fmax(hi, a[i] + r);
  }
  for (int it = 0; it < 200 && hi - lo > 1e-14 * fmax(1.0, fabs(hi)); it++) {
    const double x = 0.5 * (lo + hi);
    int below = 0; /* eigenvalues < x */
    double q = 1.0;
    for (int i = 0; i < n; i++) {
      q = a[i] - x - (i > 0 ? b[i - 1] * b[i - 1] / q : 0.0);
      if (q == 0.0) q = -1e-300;
      if (q < 0.0) below++;
    }
    if (below == n) hi = x; /* all below: the largest is below x */
    else lo = x;
  }
  return hi;
}

/* lambda_max(D^-1 A) by Lanczos through CG (see the file comment). Collective: the dot products
 * carry a failure of one rank to all (mf_vector_dot_checked). */
static int estimate_eigenvalue(mf_pc pc)
{
  mf_operator op = pc->op;
  mf_space s = op->space;
  mf_context ctx = op->ctx;
  const int m = pc->eig_steps;
  mf_vector r = NULL, z = NULL, p = NULL, Ap = NULL;
  double alpha[101], beta[101], diag[101], off[101];
  int ierr = mf_vector_create_prec(s, MF_PRECISION_DOUBLE, &r);
  if (!ierr) ierr = mf_vector_create_prec(s, MF_PRECISION_DOUBLE, &z);
  if (!ierr) ierr = mf_vector_create_prec(s, MF_PRECISION_DOUBLE, &p);
  if (!ierr) ierr = mf_vector_create_prec(s, MF_PRECISION_DOUBLE, &Ap);
  ierr = mf_agree(ctx, ierr); /* the dot products below need the vectors on every rank */
  if (ierr) goto done;
  ierr = mf_vector_random_values(r, 7); /* b: the same on any partition */
  if (!ierr) ierr = z->ops.pmult(z, pc->dinv, r);
  if (!ierr) ierr = p->ops.copy(p, z);
  double rz = 0.0;
  ierr = mf_vector_dot_checked(r, z, &rz, ierr);
  const double rz0 = rz;
  /* at most as many steps as DoFs; stop where CG has converged (a rounding-size residual, or the
   * null space of a singular operator, would make the next steps meaningless) */
  const int steps = (int64_t)m < s->nglobal ? m : (int)s->nglobal;
  int k = 0;
  while (!ierr && k < steps && rz > 1e-28 * rz0) {
    double pAp = 0.0;
    ierr = mf_vector_dot_checked(p, Ap, &pAp, mf_operator_apply(op, p, Ap));
    if (ierr) break;
    MF_CHECK_GOTO(isfinite(pAp) && pAp > 0.0, ctx, MF_ERR_ARGUMENT, done,
                  "eigenvalue estimate: p^T A p = %g at step %d (operator not positive definite?)", pAp, k);
    alpha[k] = rz / pAp;
    ierr = r->ops.axpy(r, -alpha[k], Ap);
    if (!ierr) ierr = z->ops.pmult(z, pc->dinv, r);
    double rz_new = 0.0;
    ierr = mf_vector_dot_checked(r, z, &rz_new, ierr);
    if (ierr) break;
    beta[k] = rz_new / rz;
    rz = rz_new;
    ierr = p->ops.aypx(p, beta[k], z);
    if (ctx->size > 1) ierr = mf_agree(ctx, ierr); /* the next step's apply communicates */
    k++;
  }
  ierr = mf_agree(ctx, ierr);
  if (!ierr) {
    MF_CHECK_GOTO(k > 0, ctx, MF_ERR_ARGUMENT, done, "eigenvalue estimate: the operator gave no CG step");
    for (int i = 0; i < k; i++) { /* the Lanczos matrix of the CG coefficients */
      diag[i] = 1.0 / alpha[i] + (i > 0 ? beta[i - 1] / alpha[i - 1] : 0.0);
      if (i + 1 < k) off[i] = sqrt(beta[i]) / alpha[i];
    }
    pc->lambda_max = tridiag_max_eig(k, diag, off);
    pc->lambda_min = tridiag_min_eig(k, diag, off);
  }
done:
  mf_vector_destroy(&r);
  mf_vector_destroy(&z);
  mf_vector_destroy(&p);
  mf_vector_destroy(&Ap);
  return ierr;
}

/* Lower end of a solver's interval: 0.9 lambda_min, but at most a condition number of 10^6 (a
 * singular or nearly singular operator would otherwise ask for an unbounded degree). */
static double solver_lower(const mf_pc pc)
{
  const double a = 0.9 * pc->lambda_min, floor_ = 1.2 * pc->lambda_max * 1e-6;
  return a > floor_ ? a : floor_;
}

int mf_pc_setup(mf_pc pc)
{
  MF_CHECK(pc, NULL, MF_ERR_NULL, "preconditioner is NULL");
  if (pc->ready || pc->kind == MF_PC_NONE || pc->kind == MF_PC_SHELL) return 0;
  if (pc->kind == MF_PC_MULTIGRID) { /* the hierarchy, each level with its own smoother set-up */
    MF_CALL(mf_space_check_mesh(pc->op->space)); /* its levels are made on the mesh as it is now */
    int ierr = mf_mg_setup(pc, &pc->mg, pc->mg_degree, pc->mg_range, pc->mg_coarse, pc->mg_prec,
                           pc->mg_coarse_kind);
    if (!ierr) mf_mg_profile(pc->mg, pc->mg_profile);
    pc->ready = !ierr;
    return ierr;
  }
  /* collective: what one rank alone can fail (memory, the device) is agreed on before each step
   * that communicates, and at the end */
  mf_operator op = pc->op;
  mf_context ctx = op->ctx;
  double t0 = mf_phase_begin(ctx);
  int ierr = 0;
  if (!pc->dinv) ierr = mf_vector_create_prec(op->space, MF_PRECISION_DOUBLE, &pc->dinv);
  ierr = mf_agree(ctx, ierr);
  if (!ierr) ierr = mf_operator_diagonal(op, pc->dinv);
  if (!ierr) ierr = pc->dinv->ops.reciprocal(pc->dinv);
  if (pc->kind == MF_PC_CHEBYSHEV) {
    if (!ierr && !pc->d) ierr = mf_vector_create_prec(op->space, MF_PRECISION_DOUBLE, &pc->d);
    if (!ierr && !pc->res) ierr = mf_vector_create_prec(op->space, MF_PRECISION_DOUBLE, &pc->res);
    if (!ierr && !pc->t) ierr = mf_vector_create_prec(op->space, MF_PRECISION_DOUBLE, &pc->t);
    ierr = mf_agree(ctx, ierr);
    if (!ierr) ierr = estimate_eigenvalue(pc);
    if (!ierr && pc->solve_reduction > 0.0) { /* the degree that reduces the error on [a, b] enough */
      const double b = 1.2 * pc->lambda_max, a = solver_lower(pc);
      if (!(pc->lambda_max - pc->lambda_min > 1e-12 * pc->lambda_max)) pc->degree = 1; /* one eigenvalue: exact */
      else {
        const double k = acosh(2.0 / pc->solve_reduction) / acosh((b + a) / (b - a));
        pc->degree = k < 1.0 ? 1 : k > 1000.0 ? 1000 : (int)ceil(k);
      }
    }
  }
  ierr = mf_agree(ctx, ierr);
  mf_phase_end(ctx, MF_PHASE_DIAGONAL, t0);
  pc->ready = !ierr;
  return ierr;
}

int mf_pc_chebyshev_solver(mf_pc pc, double reduction)
{
  pc->solve_reduction = reduction;
  pc->eig_steps = 40;
  pc->ready = 0;
  return 0;
}

int mf_pc_set_multigrid(mf_pc pc, int smoother_degree, double smoothing_range, double coarse_reduction)
{
  MF_CHECK(pc, NULL, MF_ERR_NULL, "preconditioner is NULL");
  mf_context ctx = pc->op->ctx;
  MF_CHECK(pc->kind == MF_PC_MULTIGRID, ctx, MF_ERR_ARGUMENT, "preconditioner %s is not MF_PC_MULTIGRID",
           pc_kind_name(pc->kind));
  MF_CHECK(smoother_degree >= 1 && smoother_degree <= 64, ctx, MF_ERR_ARGUMENT,
           "smoother degree %d out of range 1..64", smoother_degree);
  MF_CHECK(smoothing_range > 1.0 && isfinite(smoothing_range), ctx, MF_ERR_ARGUMENT,
           "smoothing range %g must be a finite number > 1", smoothing_range);
  MF_CHECK(coarse_reduction > 0.0 && coarse_reduction < 1.0, ctx, MF_ERR_ARGUMENT,
           "coarse reduction %g out of range (0, 1)", coarse_reduction);
  pc->mg_degree = smoother_degree;
  pc->mg_range = smoothing_range;
  pc->mg_coarse = coarse_reduction;
  mf_mg_destroy(&pc->mg);
  pc->ready = 0;
  return 0;
}

int mf_pc_set_multigrid_precision(mf_pc pc, mf_precision prec)
{
  MF_CHECK(pc, NULL, MF_ERR_NULL, "preconditioner is NULL");
  mf_context ctx = pc->op->ctx;
  MF_CHECK(pc->kind == MF_PC_MULTIGRID, ctx, MF_ERR_ARGUMENT, "preconditioner %s is not MF_PC_MULTIGRID",
           pc_kind_name(pc->kind));
  MF_CHECK(prec == MF_PRECISION_DOUBLE || prec == MF_PRECISION_FLOAT, ctx, MF_ERR_ARGUMENT,
           "precision %d unknown (MF_PRECISION_DOUBLE or MF_PRECISION_FLOAT)", (int)prec);
  MF_CHECK(prec == MF_PRECISION_DOUBLE || pc->mg_coarse_kind == MF_MG_COARSE_MATRIX_FREE, ctx, MF_ERR_UNSUPPORTED,
           "a single-precision V-cycle needs the matrix-free coarse level (the coarse level is set to "
           "MF_MG_COARSE_ASSEMBLED, which is double only)");
  pc->mg_prec = prec;
  mf_mg_destroy(&pc->mg);
  pc->ready = 0;
  return 0;
}

int mf_pc_set_multigrid_coarse(mf_pc pc, mf_mg_coarse kind)
{
  MF_CHECK(pc, NULL, MF_ERR_NULL, "preconditioner is NULL");
  mf_context ctx = pc->op->ctx;
  MF_CHECK(pc->kind == MF_PC_MULTIGRID, ctx, MF_ERR_ARGUMENT, "preconditioner %s is not MF_PC_MULTIGRID",
           pc_kind_name(pc->kind));
  MF_CHECK(kind == MF_MG_COARSE_MATRIX_FREE || kind == MF_MG_COARSE_ASSEMBLED, ctx, MF_ERR_ARGUMENT,
           "multigrid coarse level kind %d unknown (MF_MG_COARSE_MATRIX_FREE or MF_MG_COARSE_ASSEMBLED)", (int)kind);
  MF_CHECK(kind == MF_MG_COARSE_MATRIX_FREE || pc->mg_prec == MF_PRECISION_DOUBLE, ctx, MF_ERR_UNSUPPORTED,
           "the assembled coarse level needs a double-precision V-cycle (the precision is set to "
           "MF_PRECISION_FLOAT)");
  pc->mg_coarse_kind = kind;
  mf_mg_destroy(&pc->mg);
  pc->ready = 0;
  return 0;
}

/* A set-up Chebyshev preconditioner moved to op (a single-precision copy of its operator): the
 * inverse diagonal rounded to float, work vectors in float; the eigenvalues stay. */
int mf_pc_to_single(mf_pc pc, mf_operator op)
{
  mf_context ctx = op->ctx;
  MF_CHECK(pc->kind == MF_PC_CHEBYSHEV && pc->ready && op->space == pc->op->space && op->prec == MF_PRECISION_FLOAT,
           ctx, MF_ERR_ARGUMENT, "only a set-up Chebyshev preconditioner moves to a float copy of its operator");
  mf_vector v[4] = {NULL, NULL, NULL, NULL};
  int ierr = 0;
  for (int k = 0; k < 4 && !ierr; k++) ierr = mf_vector_create_prec(op->space, MF_PRECISION_FLOAT, &v[k]);
  if (!ierr) ierr = mf_vector_convert(v[0], pc->dinv);
  if (ierr) {
    for (int k = 0; k < 4; k++) mf_vector_destroy(&v[k]);
    return ierr;
  }
  mf_vector *old[4] = {&pc->dinv, &pc->d, &pc->res, &pc->t};
  for (int k = 0; k < 4; k++) {
    mf_vector_destroy(old[k]);
    *old[k] = v[k];
  }
  mf_operator_retain(op);
  mf_operator_release(pc->op);
  pc->op = op;
  return 0;
}

mf_mg mf_pc_multigrid(mf_pc pc) { return pc && pc->kind == MF_PC_MULTIGRID ? pc->mg : NULL; }

int mf_pc_is_multigrid(mf_pc pc) { return pc->kind == MF_PC_MULTIGRID; }

void mf_pc_multigrid_keep_profile(mf_pc pc, int on) { pc->mg_profile = on; }

static int chebyshev(mf_pc pc, mf_vector r, mf_vector x)
{
  const double b = 1.2 * pc->lambda_max, a = pc->solve_reduction > 0.0 ? solver_lower(pc) : b / pc->range;
  if (pc->solve_reduction > 0.0 && !(pc->lambda_max - pc->lambda_min > 1e-12 * pc->lambda_max)) {
    /* a single eigenvalue (e.g. only Dirichlet DoFs): D^-1 A = lambda I, solved exactly */
    MF_CALL(x->ops.pmult(x, pc->dinv, r));
    return x->ops.scale(x, 1.0 / pc->lambda_max);
  }
  const double theta = 0.5 * (b + a), delta = 0.5 * (b - a), sigma = theta / delta;
  mf_vector d = pc->d, res = pc->res, t = pc->t;
  double rho = 1.0 / sigma;
  /* the operator applications (ghost exchanges) run on every rank after a local failure too */
  int ierr = d->ops.pmult(d, pc->dinv, r); /* d_1 = D^-1 r / theta */
  if (!ierr) ierr = d->ops.scale(d, 1.0 / theta);
  if (!ierr) ierr = x->ops.copy(x, d);
  for (int k = 1; k < pc->degree; k++) {
    MF_KEEP(ierr, mf_operator_apply(pc->op, x, res)); /* res = r - A x */
    if (!ierr) ierr = res->ops.aypx(res, -1.0, r);
    const double rho_new = 1.0 / (2.0 * sigma - rho);
    if (!ierr) ierr = t->ops.pmult(t, pc->dinv, res);
    if (!ierr) ierr = d->ops.scale(d, rho_new * rho);
    if (!ierr) ierr = d->ops.axpy(d, 2.0 * rho_new / delta, t);
    if (!ierr) ierr = x->ops.axpy(x, 1.0, d);
    rho = rho_new;
  }
  return ierr;
}

/* z <- M^-1 r for checked arguments */
static int pc_apply(mf_pc pc, mf_vector r, mf_vector z)
{
  switch (pc->kind) {
  case MF_PC_NONE: return z->ops.copy(z, r);
  case MF_PC_SHELL: {
    const unsigned long serial = mf_error_serial();
    return mf_callback_result(pc->op->ctx, mf_vector_call_user(pc->shell, r, z, pc->user, "the shell preconditioner", "r", "z"),
                              serial, "shell preconditioner's apply function");
  }
  case MF_PC_JACOBI: MF_CALL(mf_pc_setup(pc)); return z->ops.pmult(z, pc->dinv, r);
  case MF_PC_CHEBYSHEV: MF_CALL(mf_pc_setup(pc)); return chebyshev(pc, r, z);
  case MF_PC_MULTIGRID: MF_CALL(mf_pc_setup(pc)); return mf_mg_apply(pc->mg, r, z);
  }
  return mf_error_set(pc->op->ctx, MF_ERR_ARGUMENT, __FILE__, __LINE__, __func__, "preconditioner kind %d unknown",
                      (int)pc->kind);
}

int mf_pc_apply(mf_pc pc, mf_vector r, mf_vector z)
{
  MF_CHECK(pc, NULL, MF_ERR_NULL, "preconditioner is NULL");
  mf_context ctx = pc->op->ctx;
  MF_CALL(mf_vector_check_pair(r, z, "r", "z"));
  MF_CHECK(r->prec == pc->op->prec, ctx, MF_ERR_INCOMPATIBLE,
           "vectors in %s for a preconditioner in %s", mf_precision_name(r->prec), mf_precision_name(pc->op->prec));
  char why[192];
  MF_CHECK(r->space == pc->op->space, ctx, MF_ERR_INCOMPATIBLE, "vectors r and z belong to another space%s",
           mf_space_mismatch(r->space, pc->op->space, "the preconditioner's operator has", why, sizeof why));
  MF_CHECK(r != z, ctx, MF_ERR_ARGUMENT, "r and z must be different vectors");
  MF_CALL(mf_vector_access(r, MF_ACCESS_READ, "r"));
  MF_CALL(mf_vector_access(z, MF_ACCESS_READ_WRITE, "z"));
  return mf_vector_written(z, pc_apply(pc, r, z));
}

int mf_pc_eigenvalue(mf_pc pc, double *lambda_max)
{
  MF_CHECK(pc, NULL, MF_ERR_NULL, "preconditioner is NULL");
  MF_CHECK(lambda_max, pc->op->ctx, MF_ERR_NULL, "output pointer lambda_max is NULL");
  MF_CHECK(pc->kind == MF_PC_CHEBYSHEV, pc->op->ctx, MF_ERR_ARGUMENT,
           "only a Chebyshev preconditioner estimates eigenvalues, not %s", pc_kind_name(pc->kind));
  MF_CALL(mf_pc_setup(pc));
  *lambda_max = pc->lambda_max;
  return 0;
}

void mf_pc_retain(mf_pc pc) { pc->refs++; }

void mf_pc_release(mf_pc p)
{
  if (!p || --p->refs > 0) return;
  mf_vector_destroy(&p->dinv);
  mf_vector_destroy(&p->d);
  mf_vector_destroy(&p->res);
  mf_vector_destroy(&p->t);
  mf_mg_destroy(&p->mg);
  mf_operator_release(p->op);
  free(p);
}

int mf_pc_destroy(mf_pc *pc)
{
  if (!pc || !*pc) return 0;
  mf_pc p = *pc;
  *pc = NULL;
  mf_pc_release(p);
  return 0;
}
