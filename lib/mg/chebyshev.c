/* chebyshev.c -- MF_PC_CHEBYSHEV: a fixed polynomial in D^-1 A from an eigenvalue estimate; also
 * multigrid's smoother and, over the whole spectrum, its coarse solver (mg.c). Written with vector
 * operations of the backend table and operator applications, so one code runs on the CPU and, with
 * no host copies, on the GPU.
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
#include "mg/pc_impl.h"

#include <math.h>

typedef struct {
  mf_vector dinv; /* 1/diag(A) */
  int degree, eig_steps;
  double range, lambda_max, lambda_min;
  double solve_reduction; /* > 0: a solver over the whole spectrum (multigrid's coarse level): the
                             interval [0.9 lambda_min, 1.2 lambda_max], the degree for this reduction */
  int indefinite;         /* 1: the estimate keeps the steps before a negative curvature (mf_pc_chebyshev_indefinite) */
  mf_vector d, res, t;
  mf_vector b0; /* the eigenvalue estimate's random start, kept for the next set-ups of an operator at a state (set
                   up again at every new state: the same start made once; on a simplex space its values come from
                   the host) */
} chebyshev_data;

static chebyshev_data *cheb(mf_pc pc) { return (chebyshev_data *)pc->data; }

static void chebyshev_init(mf_pc pc)
{
  chebyshev_data *c = cheb(pc);
  c->degree = 4;
  c->range = 20.0;
  c->eig_steps = 12;
}

int mf_pc_set_chebyshev(mf_pc pc, int degree, double range, int eig_steps)
{
  MF_CHECK(pc, NULL, MF_ERR_NULL, "preconditioner is NULL");
  mf_context ctx = pc->ctx;
  MF_CHECK(pc->type == &mf_pc_type_chebyshev, ctx, MF_ERR_ARGUMENT, "preconditioner %s is not MF_PC_CHEBYSHEV",
           pc->type->name);
  MF_CHECK(degree >= 1 && degree <= 64, ctx, MF_ERR_ARGUMENT, "Chebyshev degree %d out of range 1..64", degree);
  MF_CHECK(range > 1.0 && isfinite(range), ctx, MF_ERR_ARGUMENT, "Chebyshev range %g must be a finite number > 1",
           range);
  MF_CHECK(eig_steps >= 2 && eig_steps <= 100, ctx, MF_ERR_ARGUMENT,
           "eigenvalue estimate steps %d out of range 2..100", eig_steps);
  chebyshev_data *c = cheb(pc);
  c->degree = degree;
  c->range = range;
  c->eig_steps = eig_steps;
  pc->ready = 0;
  return 0;
}

int mf_pc_chebyshev_solver(mf_pc pc, double reduction)
{
  chebyshev_data *c = cheb(pc);
  c->solve_reduction = reduction;
  c->eig_steps = 40;
  pc->ready = 0;
  return 0;
}

int mf_pc_chebyshev_indefinite(mf_pc pc)
{
  cheb(pc)->indefinite = 1;
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
  chebyshev_data *c = cheb(pc);
  mf_operator op = pc->op;
  mf_space s = op->space;
  mf_context ctx = op->ctx;
  const int m = c->eig_steps;
  mf_vector r = NULL, z = NULL, p = NULL, Ap = NULL;
  double alpha[101], beta[101], diag[101], off[101];
  int ierr = mf_vector_create_prec(s, MF_PRECISION_DOUBLE, &r);
  if (!ierr) ierr = mf_vector_create_prec(s, MF_PRECISION_DOUBLE, &z);
  if (!ierr) ierr = mf_vector_create_prec(s, MF_PRECISION_DOUBLE, &p);
  if (!ierr) ierr = mf_vector_create_prec(s, MF_PRECISION_DOUBLE, &Ap);
  ierr = mf_agree(ctx, ierr); /* the dot products below need the vectors on every rank */
  if (ierr) goto done;
  if (c->b0 && c->b0->space != s) mf_vector_destroy(&c->b0); /* made on another space (an adapted one) */
  if (!c->b0) { /* b: the same on any partition */
    ierr = mf_vector_create_prec(s, MF_PRECISION_DOUBLE, &c->b0);
    if (!ierr) ierr = mf_vector_random_values(c->b0, 7);
    ierr = mf_agree(ctx, ierr); /* every rank keeps it, or none */
    if (ierr) mf_vector_destroy(&c->b0);
  }
  if (!ierr) ierr = r->ops.copy(r, c->b0);
  if (!ierr) ierr = z->ops.pmult(z, c->dinv, r);
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
    /* a smoother of a Jacobian whose tangent is indefinite (mf_pc_chebyshev_indefinite; negative curvature after
     * some steps): the estimate of the steps before, the smoother on the positive part of the spectrum (the outer
     * CG, truncated, meets the negative curvature itself) */
    if (isfinite(pAp) && pAp <= 0.0 && k > 0 && c->indefinite) break;
    MF_CHECK_GOTO(isfinite(pAp) && pAp > 0.0, ctx, MF_ERR_ARGUMENT, done,
                  "eigenvalue estimate: p^T A p = %g at step %d (operator not positive definite?)", pAp, k);
    alpha[k] = rz / pAp;
    ierr = r->ops.axpy(r, -alpha[k], Ap);
    if (!ierr) ierr = z->ops.pmult(z, c->dinv, r);
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
    c->lambda_max = tridiag_max_eig(k, diag, off);
    c->lambda_min = tridiag_min_eig(k, diag, off);
  }
done:
  if (!op->state) mf_vector_destroy(&c->b0); /* kept only where the set-up runs again at every new state */
  mf_vector_destroy(&r);
  mf_vector_destroy(&z);
  mf_vector_destroy(&p);
  mf_vector_destroy(&Ap);
  return ierr;
}

/* Lower end of a solver's interval: 0.9 lambda_min, but at most a condition number of 10^6 (a
 * singular or nearly singular operator would otherwise ask for an unbounded degree). */
static double solver_lower(const chebyshev_data *c)
{
  const double a = 0.9 * c->lambda_min, floor_ = 1.2 * c->lambda_max * 1e-6;
  return a > floor_ ? a : floor_;
}

/* collective: what one rank alone can fail (memory, the device) is agreed on before each step that
 * communicates, and at the end */
static int chebyshev_setup(mf_pc pc)
{
  chebyshev_data *c = cheb(pc);
  mf_operator op = pc->op;
  mf_context ctx = pc->ctx;
  double t0 = mf_phase_begin(ctx);
  int ierr = mf_pc_inverse_diagonal(op, &c->dinv);
  if (!ierr && !c->d) ierr = mf_vector_create_prec(op->space, MF_PRECISION_DOUBLE, &c->d);
  if (!ierr && !c->res) ierr = mf_vector_create_prec(op->space, MF_PRECISION_DOUBLE, &c->res);
  if (!ierr && !c->t) ierr = mf_vector_create_prec(op->space, MF_PRECISION_DOUBLE, &c->t);
  ierr = mf_agree(ctx, ierr);
  mf_phase_end(ctx, MF_PHASE_DIAGONAL, t0);
  t0 = mf_phase_begin(ctx);
  if (!ierr) ierr = estimate_eigenvalue(pc);
  if (!ierr && c->solve_reduction > 0.0) { /* the degree that reduces the error on [a, b] enough */
    const double b = 1.2 * c->lambda_max, a = solver_lower(c);
    if (!(c->lambda_max - c->lambda_min > 1e-12 * c->lambda_max)) c->degree = 1; /* one eigenvalue: exact */
    else {
      const double k = acosh(2.0 / c->solve_reduction) / acosh((b + a) / (b - a));
      c->degree = k < 1.0 ? 1 : k > 1000.0 ? 1000 : (int)ceil(k);
    }
  }
  ierr = mf_agree(ctx, ierr);
  mf_phase_end(ctx, MF_PHASE_EIGENVALUES, t0);
  return ierr;
}

static int chebyshev_apply(mf_pc pc, mf_vector r, mf_vector x)
{
  const chebyshev_data *c = cheb(pc);
  const double b = 1.2 * c->lambda_max, a = c->solve_reduction > 0.0 ? solver_lower(c) : b / c->range;
  if (c->solve_reduction > 0.0 && !(c->lambda_max - c->lambda_min > 1e-12 * c->lambda_max)) {
    /* a single eigenvalue (e.g. only Dirichlet DoFs): D^-1 A = lambda I, solved exactly */
    MF_CALL(x->ops.pmult(x, c->dinv, r));
    return x->ops.scale(x, 1.0 / c->lambda_max);
  }
  const double theta = 0.5 * (b + a), delta = 0.5 * (b - a), sigma = theta / delta;
  mf_vector d = c->d, res = c->res, t = c->t;
  double rho = 1.0 / sigma;
  /* the operator applications (ghost exchanges) run on every rank after a local failure too */
  int ierr = d->ops.pmult(d, c->dinv, r); /* d_1 = D^-1 r / theta */
  if (!ierr) ierr = d->ops.scale(d, 1.0 / theta);
  if (!ierr) ierr = x->ops.copy(x, d);
  for (int k = 1; k < c->degree; k++) {
    MF_KEEP(ierr, mf_operator_apply(pc->op, x, res)); /* res = r - A x */
    if (!ierr) ierr = res->ops.aypx(res, -1.0, r);
    const double rho_new = 1.0 / (2.0 * sigma - rho);
    if (!ierr) ierr = t->ops.pmult(t, c->dinv, res);
    if (!ierr) ierr = d->ops.scale(d, rho_new * rho);
    if (!ierr) ierr = d->ops.axpy(d, 2.0 * rho_new / delta, t);
    if (!ierr) ierr = x->ops.axpy(x, 1.0, d);
    rho = rho_new;
  }
  return ierr;
}

/* The inverse diagonal rounded to float, work vectors in float; the eigenvalues stay. */
static int chebyshev_to_single(mf_pc pc, mf_operator op)
{
  chebyshev_data *c = cheb(pc);
  mf_vector v[4] = {NULL, NULL, NULL, NULL};
  int ierr = 0;
  for (int k = 0; k < 4 && !ierr; k++) ierr = mf_vector_create_prec(op->space, MF_PRECISION_FLOAT, &v[k]);
  if (!ierr) ierr = mf_vector_convert(v[0], c->dinv);
  if (ierr) {
    for (int k = 0; k < 4; k++) mf_vector_destroy(&v[k]);
    return ierr;
  }
  mf_vector *old[4] = {&c->dinv, &c->d, &c->res, &c->t};
  for (int k = 0; k < 4; k++) {
    mf_vector_destroy(old[k]);
    *old[k] = v[k];
  }
  return 0;
}

static void chebyshev_destroy(mf_pc pc)
{
  chebyshev_data *c = cheb(pc);
  mf_vector_destroy(&c->dinv);
  mf_vector_destroy(&c->d);
  mf_vector_destroy(&c->res);
  mf_vector_destroy(&c->t);
  mf_vector_destroy(&c->b0);
}

int mf_pc_eigenvalue(mf_pc pc, double *lambda_max)
{
  MF_CHECK(pc, NULL, MF_ERR_NULL, "preconditioner is NULL");
  MF_CHECK(lambda_max, pc->ctx, MF_ERR_NULL, "output pointer lambda_max is NULL");
  MF_CHECK(pc->type == &mf_pc_type_chebyshev, pc->ctx, MF_ERR_ARGUMENT,
           "only a Chebyshev preconditioner estimates eigenvalues, not %s", pc->type->name);
  MF_CALL(mf_pc_setup(pc));
  *lambda_max = cheb(pc)->lambda_max;
  return 0;
}

const mf_pc_type mf_pc_type_chebyshev = {
  .kind = MF_PC_CHEBYSHEV,
  .name = "Chebyshev (MF_PC_CHEBYSHEV)",
  .data_size = sizeof(chebyshev_data),
  .init = chebyshev_init,
  .setup = chebyshev_setup,
  .apply = chebyshev_apply,
  .destroy = chebyshev_destroy,
  .to_single = chebyshev_to_single,
};
