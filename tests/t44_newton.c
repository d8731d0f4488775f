/* t44_newton.c -- the linearisation at a state (mf_operator_set_state) and Newton's method (mf_newton) on
 * simplex (P1, P2) and hex (Q1, Q2) spaces, 2D and 3D, cpu backend (mfree.h):
 *   - J(u) v against the centred difference (F(u + e v) - F(u - e v)) / 2e of the residual, 2D and 3D, P1 and
 *     P2, to 1e-6; the state 0 gives the operator as made; the preconditioners are set up again at a new
 *     state (a Jacobi CG at the state converges);
 *   - Newton on -div((1 + |grad u|^2) grad u) + u^3 = s (an energy's: a symmetric Jacobian) with u = g on
 *     the boundary: converges to 1e-10, the
 *     residual falling quadratically with a tight inner tolerance (the order of the last step above rounding
 *     at least 1.6), in fewer CG iterations with Eisenstat-Walker; the boundary values stay; the history and
 *     the monitor agree;
 *   - a non-variational -div((1 + u^2) grad u) + u^3 = s (a non-symmetric Jacobian) with GMRES inside,
 *     quadratic as well;
 *   - a problem where full steps fail (f0 = atan(u - 1), small diffusion, u0 = -2 inside): without the line
 *     search Newton does not converge, with it it does and ||F|| decreases at every step;
 *   - the trust region (MF_NEWTON_TRUST_REGION) there in at most 6 steps, and its history: every step within
 *     its radius, accepted at rho >= 1e-4, the radius quartered below a step with rho < 1/4 (from u0 = -1/2 the
 *     first step's rho is below 1/4, and no trial is rejected after it), at most doubled after any; on a
 *     quadratic energy rho = 1;
 *   - the failure codes: the step limit, the inner CG's limit, a residual not finite at the start
 *     (MF_ERR_ARGUMENT naming the point), the monitor's stop, a Jacobian of the wrong sign (the line search);
 *     the update criterion; a start that meets the tolerance; a Jacobi preconditioner set up again at a new
 *     state (its z = D(u)^-1 r); multigrid at a state refused; and the refusals (a built-in operator, a facet
 *     g0's state, multigrid inside, bad tolerances).
 * Runs on 1 and 2 ranks (NP 2: the same assertions).                                                          */
#include "mf_test.h"

#include <math.h>

/* the energy of 1/4 (1 + |grad u|^2)^2 + 1/4 u^4 - s u, s = 4 + x0: -div((1 + |grad u|^2) grad u) + u^3 = s, a
 * symmetric Jacobian (CG inside) that depends on u and on grad u */
static void f0_nl(int dim, int nc, const double *u, const double *du, const double *x, const double *k, double *o)
{
  (void)dim, (void)nc, (void)du, (void)k;
  o[0] = u[0] * u[0] * u[0] - 4.0 - x[0];
}
static void f1_nl(int dim, int nc, const double *u, const double *du, const double *x, const double *k, double *o)
{
  (void)nc, (void)u, (void)x, (void)k;
  double q = 1.0;
  for (int d = 0; d < dim; d++) q += du[d] * du[d];
  for (int d = 0; d < dim; d++) o[d] = q * du[d];
}
static void g0_nl(int dim, int nc, const double *u, const double *du, const double *x, const double *k, double *o)
{
  (void)dim, (void)nc, (void)du, (void)x, (void)k;
  o[0] = 3.0 * u[0] * u[0];
}
static void g3_nl(int dim, int nc, const double *u, const double *du, const double *x, const double *k, double *o)
{
  (void)nc, (void)u, (void)x, (void)k;
  double q = 1.0;
  for (int d = 0; d < dim; d++) q += du[d] * du[d];
  for (int d = 0; d < dim; d++)
    for (int e = 0; e < dim; e++) o[d * dim + e] = (d == e ? q : 0.0) + 2.0 * du[d] * du[e];
}
/* -div((1 + u^2) grad u) + u^3 = s: not an energy's, g2 = 2 u grad u makes the Jacobian non-symmetric */
static void f1_nv(int dim, int nc, const double *u, const double *du, const double *x, const double *k, double *o)
{
  (void)nc, (void)x, (void)k;
  for (int d = 0; d < dim; d++) o[d] = (1.0 + u[0] * u[0]) * du[d];
}
static void g2_nv(int dim, int nc, const double *u, const double *du, const double *x, const double *k, double *o)
{
  (void)nc, (void)x, (void)k;
  for (int d = 0; d < dim; d++) o[d] = 2.0 * u[0] * du[d];
}
static void g3_nv(int dim, int nc, const double *u, const double *du, const double *x, const double *k, double *o)
{
  (void)nc, (void)du, (void)x, (void)k;
  for (int d = 0; d < dim; d++) o[d * dim + d] = 1.0 + u[0] * u[0];
}
/* u^3 - s with a plain Laplacian, and a Jacobian of the wrong sign: Newton's direction goes uphill */
static void f1_lap(int dim, int nc, const double *u, const double *du, const double *x, const double *k, double *o)
{
  (void)nc, (void)u, (void)x, (void)k;
  for (int d = 0; d < dim; d++) o[d] = du[d];
}
static void g0_neg(int dim, int nc, const double *u, const double *du, const double *x, const double *k, double *o)
{
  (void)dim, (void)nc, (void)du, (void)x, (void)k;
  o[0] = -3.0 * u[0] * u[0];
}
static void g3_neg(int dim, int nc, const double *u, const double *du, const double *x, const double *k, double *o)
{
  (void)nc, (void)u, (void)du, (void)x, (void)k;
  for (int d = 0; d < dim; d++) o[d * dim + d] = -1.0;
}
/* atan(u - 1) with diffusion 1e-3: pure Newton from u = -2 overshoots */
static void f0_atan(int dim, int nc, const double *u, const double *du, const double *x, const double *k, double *o)
{
  (void)dim, (void)nc, (void)du, (void)x, (void)k;
  o[0] = atan(u[0] - 1.0);
}
static void g0_atan(int dim, int nc, const double *u, const double *du, const double *x, const double *k, double *o)
{
  (void)dim, (void)nc, (void)du, (void)x, (void)k;
  o[0] = 1.0 / (1.0 + (u[0] - 1.0) * (u[0] - 1.0));
}
static void f1_small(int dim, int nc, const double *u, const double *du, const double *x, const double *k, double *o)
{
  (void)nc, (void)u, (void)x, (void)k;
  for (int d = 0; d < dim; d++) o[d] = 1e-3 * du[d];
}
static void g3_small(int dim, int nc, const double *u, const double *du, const double *x, const double *k, double *o)
{
  (void)nc, (void)u, (void)du, (void)x, (void)k;
  for (int d = 0; d < dim; d++) o[d * dim + d] = 1e-3;
}
static void f0_log(int dim, int nc, const double *u, const double *du, const double *x, const double *k, double *o)
{
  (void)dim, (void)nc, (void)du, (void)x, (void)k;
  o[0] = log(u[0]);
}
/* u^3 - 1 (its Jacobian 3 u^2 grows ninefold from u = 1/3 to the root u = 1) */
static void f0_cube(int dim, int nc, const double *u, const double *du, const double *x, const double *k, double *o)
{
  (void)dim, (void)nc, (void)du, (void)x, (void)k;
  o[0] = u[0] * u[0] * u[0] - 1.0;
}
static void g0_cube(int dim, int nc, const double *u, const double *du, const double *x, const double *k, double *o)
{
  (void)dim, (void)nc, (void)du, (void)x, (void)k;
  o[0] = 3.0 * u[0] * u[0];
}
/* u - 2 below u = 1, 1e6 from there (a jump), and a Jacobian 1 */
static void f0_jump(int dim, int nc, const double *u, const double *du, const double *x, const double *k, double *o)
{
  (void)dim, (void)nc, (void)du, (void)x, (void)k;
  o[0] = u[0] < 1.0 ? u[0] - 2.0 : 1e6;
}
static void g0_one(int dim, int nc, const double *u, const double *du, const double *x, const double *k, double *o)
{
  (void)dim, (void)nc, (void)u, (void)du, (void)x, (void)k;
  o[0] = 1.0;
}
/* ln(1 + u) and its derivative: finite for u > -1 */
static void f0_log1(int dim, int nc, const double *u, const double *du, const double *x, const double *k, double *o)
{
  (void)dim, (void)nc, (void)du, (void)x, (void)k;
  o[0] = log(1.0 + u[0]);
}
static void g0_log1(int dim, int nc, const double *u, const double *du, const double *x, const double *k, double *o)
{
  (void)dim, (void)nc, (void)du, (void)x, (void)k;
  o[0] = 1.0 / (1.0 + u[0]);
}
/* a Jacobian far too small (its steps some 1e9 long: every halving down to 1/4096 leaves 1 + u < 0) */
static void g0_tiny(int dim, int nc, const double *u, const double *du, const double *x, const double *k, double *o)
{
  (void)dim, (void)nc, (void)u, (void)du, (void)x, (void)k;
  o[0] = 1e-9;
}
static void g3_tiny(int dim, int nc, const double *u, const double *du, const double *x, const double *k, double *o)
{
  (void)nc, (void)u, (void)du, (void)x, (void)k;
  for (int d = 0; d < dim; d++) o[d * dim + d] = 1e-12;
}
static void robin_f0(int dim, int nc, const double *u, const double *x, const double *n, const double *k, double *o)
{
  (void)dim, (void)nc, (void)x, (void)n, (void)k;
  o[0] = 2.0 * u[0];
}
static void robin_g0(int dim, int nc, const double *u, const double *x, const double *n, const double *k, double *o)
{
  (void)dim, (void)nc, (void)u, (void)x, (void)n, (void)k;
  o[0] = 2.0;
}
static double bval(const double *x, int dim, void *u)
{
  (void)u;
  return x[0] + 0.5 * x[1] + (dim == 3 ? 0.25 * x[2] : 0.0);
}
static double one(const double *x, int dim, void *u)
{
  (void)x, (void)dim, (void)u;
  return 1.0;
}

typedef struct {
  int calls, last_step, stop_at;
  double last_res;
  int lin_prev, lin_last; /* the inner iterations of the step before the last, of the last */
} mon;
static int monitor(int step, double res, double upd, int lin, void *user)
{
  (void)upd;
  mon *m = (mon *)user;
  m->calls++, m->last_step = step, m->last_res = res;
  m->lin_prev = m->lin_last, m->lin_last = lin;
  return m->stop_at >= 0 && step >= m->stop_at;
}

static mf_physics nl_physics(mf_context ctx)
{
  mf_physics ph;
  T_CALL(mf_physics_create(ctx, 1, &ph));
  T_CALL(mf_physics_set_residual(ph, f0_nl, f1_nl));
  T_CALL(mf_physics_set_jacobian(ph, g0_nl, NULL, NULL, g3_nl));
  return ph;
}

static double maxdiff(mf_vector a, mf_vector b, int n, double *scale)
{
  double *ha = calloc((size_t)n + 1, sizeof(double)), *hb = calloc((size_t)n + 1, sizeof(double)), d = 0.0, m = 0.0;
  T_CALL(mf_vector_get_values(a, ha));
  T_CALL(mf_vector_get_values(b, hb));
  for (int i = 0; i < n; i++) d = fmax(d, fabs(ha[i] - hb[i])), m = fmax(m, fabs(hb[i]));
  free(ha);
  free(hb);
  if (scale) *scale = m;
  return d;
}

/* J(u) v against the residual's centred difference; J(0) against the operator as made */
static void check_state(mf_context ctx, const char *name, int dim, int level, int p)
{
  mf_mesh mesh;
  mf_space s;
  mf_operator A, A0;
  mf_vector u, v, w, Jv, Fp, Fm;
  T_CALL(mf_mesh_create(ctx, name, dim, level, &mesh));
  T_CALL(mf_space_create(mesh, p, &s));
  mf_physics ph = nl_physics(ctx);
  T_CALL(mf_operator_create_physics(s, ph, MF_QUAD_GAUSS, &A));
  T_CALL(mf_operator_create_physics(s, ph, MF_QUAD_GAUSS, &A0));
  mf_vector *vs[6] = {&u, &v, &w, &Jv, &Fp, &Fm};
  for (int i = 0; i < 6; i++) T_CALL(mf_vector_create(s, vs[i]));
  int n;
  T_CALL(mf_space_local_sizes(s, NULL, &n));
  T_CALL(mf_vector_set_random(u, 11u));
  T_CALL(mf_vector_set_random(v, 12u));
  /* the state 0: the operator as made */
  T_CALL(mf_vector_set_value(w, 0.0));
  T_CALL(mf_operator_set_state(A, w));
  T_CALL(mf_operator_apply(A, v, Jv));
  T_CALL(mf_operator_apply(A0, v, Fp));
  double sc = 0.0, d = maxdiff(Jv, Fp, n, &sc);
  T_CHECK(d <= 1e-13 * sc, "%s %dD P%d: the operator at the state 0 differs from the one made by %.3e (of %.3e)", name, dim, p, d, sc);
  /* J(u) v against the centred difference */
  T_CALL(mf_operator_set_state(A, u));
  T_CALL(mf_operator_apply(A, v, Jv));
  const double e = 1e-6;
  T_CALL(mf_vector_copy(w, u));
  T_CALL(mf_vector_axpy(w, e, v));
  T_CALL(mf_operator_residual(A, w, Fp));
  T_CALL(mf_vector_copy(w, u));
  T_CALL(mf_vector_axpy(w, -e, v));
  T_CALL(mf_operator_residual(A, w, Fm));
  T_CALL(mf_vector_axpy(Fp, -1.0, Fm));
  T_CALL(mf_vector_scale(Fp, 0.5 / e));
  d = maxdiff(Jv, Fp, n, &sc);
  T_CHECK(sc > 0.0 && d <= 1e-6 * sc, "%s %dD P%d: J(u) v differs from the residual's difference by %.3e (of %.3e)", name, dim, p,
          d, sc);
  /* and unlike the operator at 0 (the state matters) */
  T_CALL(mf_operator_apply(A0, v, Fm));
  d = maxdiff(Jv, Fm, n, &sc);
  T_CHECK(d > 1e-3 * sc, "%s %dD P%d: J(u) v equals the product at the state 0 (%.3e)", name, dim, p, d);
  /* a Jacobi preconditioner made before the state is set up again for it: z = D(u)^-1 r with D(u) the new diagonal */
  {
    mf_pc pc;
    T_CALL(mf_operator_set_dirichlet(A, 1));
    T_CALL(mf_vector_set_value(w, 0.0));
    T_CALL(mf_operator_set_state(A, w));
    T_CALL(mf_pc_create(A, MF_PC_JACOBI, &pc));
    T_CALL(mf_pc_setup(pc));
    T_CALL(mf_operator_set_state(A, u)); /* a new state: the pc's next use sets it up again */
    T_CALL(mf_vector_set_value(v, 1.0));
    T_CALL(mf_pc_apply(pc, v, Jv));
    T_CALL(mf_operator_diagonal(A, Fp));
    double *hz = calloc((size_t)n + 1, sizeof(double)), *hd = calloc((size_t)n + 1, sizeof(double)), dz = 0.0;
    T_CALL(mf_vector_get_values(Jv, hz));
    T_CALL(mf_vector_get_values(Fp, hd));
    int nown = 0; /* the owned entries (ghosts follow them): what the preconditioner makes */
    T_CALL(mf_space_local_sizes(s, &nown, NULL));
    for (int i = 0; i < nown; i++) dz = fmax(dz, fabs(hz[i] * hd[i] - 1.0));
    T_CHECK(dz <= 1e-12, "%s %dD P%d: the Jacobi preconditioner at the new state is off its diagonal by %.3e", name, dim, p,
            dz);
    free(hz), free(hd);
    mf_pc_destroy(&pc);
  }
  for (int i = 0; i < 6; i++) mf_vector_destroy(vs[i]);
  mf_operator_destroy(&A);
  mf_operator_destroy(&A0);
  mf_physics_destroy(&ph);
  mf_space_destroy(&s);
  mf_mesh_destroy(&mesh);
}

/* u - 2: a quadratic energy (with f1_small), where the model is the energy and rho = 1 */
static void f0_lin(int dim, int nc, const double *u, const double *du, const double *x, const double *k, double *o)
{
  (void)dim, (void)nc, (void)du, (void)x, (void)k;
  o[0] = u[0] - 2.0;
}

static int trust_small_rho; /* accepted trust-region steps with rho < 1/4 over every case (check_trust) */

/* the trust region's history of the last solve (mf_newton_trust_history): NaN at step 0; each step within its
 * radius, accepted at rho >= 1e-4 (but at the rounding floor, ||F|| <= 1e-10 ||F_0||), the next radius at most
 * a quarter of the step's norm after rho < 1/4 and at most twice the radius after any */
static void check_trust(mf_newton nw, const char *what, int dim, int p)
{
  const double *rho, *rad, *snm, *res;
  int n, nr;
  T_CALL(mf_newton_trust_history(nw, &rho, &rad, &snm, &n));
  T_CALL(mf_newton_history(nw, &res, NULL, &nr));
  T_CHECK(n == nr && n >= 2 && isnan(rho[0]) && isnan(rad[0]) && isnan(snm[0]),
          "%s %dD P%d: the trust history has %d entries (the history %d), step 0's (%g, %g, %g)", what, dim, p, n, nr,
          n ? rho[0] : 0.0, n ? rad[0] : 0.0, n ? snm[0] : 0.0);
  for (int k = 1; k < n; k++) {
    T_CHECK(snm[k] >= 0.0 && snm[k] <= rad[k] * (1.0 + 1e-10), "%s %dD P%d: step %d's norm %.6e beyond its radius %.6e",
            what, dim, p, k, snm[k], rad[k]);
    T_CHECK(rho[k] >= 1e-4 || res[k - 1] <= 1e-10 * res[0], "%s %dD P%d: step %d accepted at rho = %.3e", what, dim, p, k,
            rho[k]);
    if (k + 1 == n) break;
    T_CHECK(rad[k + 1] <= 2.0 * rad[k] * (1.0 + 1e-14), "%s %dD P%d: the radius grew from %.6e to %.6e after step %d",
            what, dim, p, rad[k], rad[k + 1], k);
    if (rho[k] >= 1e-4 && rho[k] < 0.25) {
      trust_small_rho++;
      T_CHECK(rad[k + 1] <= 0.25 * fmin(snm[k], rad[k]) * (1.0 + 1e-14),
              "%s %dD P%d: step %d (rho %.3f < 1/4, norm %.6e, radius %.6e) left the radius at %.6e, not a quarter", what,
              dim, p, k, rho[k], snm[k], rad[k], rad[k + 1]);
    }
  }
}

/* A one-component physics (f0, f1; g0, g3), its operator on s and Newton on it with Jacobi CG to the fixed 1e-10 */
static void jacobi_newton(mf_context ctx, mf_space s, mf_pointwise_fn f0, mf_pointwise_fn f1, mf_pointwise_fn g0,
                          mf_pointwise_fn g3, mf_physics *ph, mf_operator *A, mf_newton *nw)
{
  T_CALL(mf_physics_create(ctx, 1, ph));
  T_CALL(mf_physics_set_residual(*ph, f0, f1));
  T_CALL(mf_physics_set_jacobian(*ph, g0, NULL, NULL, g3));
  T_CALL(mf_operator_create_physics(s, *ph, MF_QUAD_GAUSS, A));
  T_CALL(mf_newton_create(*A, nw));
  T_CALL(mf_newton_set_linear(*nw, MF_PC_JACOBI, 0, 1e-10, 5000));
}

static void check_newton(mf_context ctx, const char *name, int dim, int level, int p)
{
  mf_mesh mesh;
  mf_space s;
  mf_operator A;
  mf_vector u, g;
  T_CALL(mf_mesh_create(ctx, name, dim, level, &mesh));
  T_CALL(mf_space_create(mesh, p, &s));
  mf_physics ph = nl_physics(ctx);
  T_CALL(mf_operator_create_physics(s, ph, MF_QUAD_GAUSS, &A));
  T_CALL(mf_vector_create(s, &u));
  T_CALL(mf_vector_create(s, &g));
  int n;
  T_CALL(mf_space_local_sizes(s, NULL, &n));
  mf_newton nw;
  T_CALL(mf_newton_create(A, &nw));
  int lin[2] = {0, 0}, steps[3] = {0, 0, 0};
  for (int ew = 0; ew < 3; ew++) { /* 0: fixed 1e-10, 1: Eisenstat-Walker from 0.5, 2: fixed 0.5 */
    T_CALL(mf_vector_set_boundary(u, bval, NULL)); /* the boundary values, 0 inside */
    T_CALL(mf_vector_copy(g, u));
    T_CALL(mf_newton_set_linear(nw, MF_PC_JACOBI, ew == 1, ew ? 0.5 : 1e-10, 5000));
    mon m = {0, -1, -1, 0.0};
    T_CALL(mf_newton_set_monitor(nw, monitor, &m));
    mf_newton_info info;
    T_CALL(mf_newton_solve(nw, u, &info));
    if (ew < 2) lin[ew] = info.linear_iterations;
    steps[ew] = info.iterations;
    const double *res, *upd;
    int nh;
    T_CALL(mf_newton_history(nw, &res, &upd, &nh));
    T_CHECK(info.converged && info.reason == MF_NEWTON_CONVERGED_RESIDUAL && info.residual <= 1e-10 * info.residual0,
            "%s %dD P%d ew %d: converged %d reason %d, ||F|| %.3e from %.3e", name, dim, p, ew, info.converged, (int)info.reason,
            info.residual, info.residual0);
    T_CHECK(nh == info.iterations + 1 && res[0] == info.residual0 && res[nh - 1] == info.residual,
            "%s %dD P%d: history of %d entries for %d steps", name, dim, p, nh, info.iterations);
    T_CHECK(m.calls == nh && m.last_step == info.iterations && m.last_res == info.residual,
            "%s %dD P%d: the monitor saw %d calls, last step %d", name, dim, p, m.calls, m.last_step);
    T_CHECK(info.iterations >= 3 && info.iterations <= (ew == 2 ? 60 : 15), "%s %dD P%d run %d: %d Newton steps", name, dim, p,
            ew, info.iterations);
    if (!ew) { /* quadratic: the order log(r_k / r_k-1) / log(r_k-1 / r_k-2) of the last step above rounding */
      int k = nh - 1;
      while (k > 2 && res[k] <= 1e-12 * res[0]) k--;
      const double q = k >= 2 ? log(res[k] / res[k - 1]) / log(res[k - 1] / res[k - 2]) : 0.0;
      T_CHECK(k >= 2 && q >= 1.6, "%s %dD P%d: order %.2f at step %d (residuals %.3e, %.3e, %.3e): not quadratic", name, dim, p, q, k,
              res[k - 2], res[k - 1], res[k]);
    }
    /* the boundary values stay */
    double *hu = calloc((size_t)n, sizeof(double)), *hg = calloc((size_t)n, sizeof(double));
    int nb = 0;
    T_CALL(mf_space_dirichlet_dofs(s, &nb, NULL));
    int *bd = calloc((size_t)nb + 1, sizeof(int));
    T_CALL(mf_space_dirichlet_dofs(s, &nb, bd));
    T_CALL(mf_vector_get_values(u, hu));
    T_CALL(mf_vector_get_values(g, hg));
    double db = 0.0;
    for (int i = 0; i < nb; i++) db = fmax(db, fabs(hu[bd[i]] - hg[bd[i]]));
    int nball = nb; /* a rank may hold interior cells only */
    MPI_Allreduce(MPI_IN_PLACE, &nball, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    T_CHECK(nball > 0 && db == 0.0, "%s %dD P%d: the boundary values moved by %.3e (%d boundary DoFs)", name, dim, p, db, nball);
    free(hu), free(hg), free(bd);
  }
  T_CHECK(steps[1] < steps[2], "%s %dD P%d: Eisenstat-Walker took %d Newton steps, a fixed 0.5 %d", name, dim, p, steps[1],
          steps[2]);
  /* from the solution (an absolute tolerance above its residual): converged at once; the update criterion alone */
  mf_newton_info i2;
  T_CALL(mf_newton_set_monitor(nw, NULL, NULL));
  T_CALL(mf_newton_set_tolerances(nw, 1e-10, 1e-6, 0.0, 50));
  T_CALL(mf_newton_solve(nw, u, &i2));
  T_CHECK(i2.iterations == 0 && i2.reason == MF_NEWTON_CONVERGED_RESIDUAL, "%s %dD P%d: from the solution %d steps, reason %d",
          name, dim, p, i2.iterations, (int)i2.reason);
  T_CALL(mf_vector_set_boundary(u, bval, NULL));
  T_CALL(mf_newton_set_linear(nw, MF_PC_JACOBI, 0, 1e-10, 5000));
  T_CALL(mf_newton_set_tolerances(nw, 1e-300, 0.0, 1e-6, 50));
  T_CALL(mf_newton_solve(nw, u, &i2));
  T_CHECK(i2.reason == MF_NEWTON_CONVERGED_UPDATE && i2.update <= 1e-6, "%s %dD P%d: the update criterion gave reason %d, "
          "update %.3e", name, dim, p, (int)i2.reason, i2.update);
  /* Eisenstat-Walker with the update criterion alone: the last inner solve no tighter than the update criterion
   * asks (eta >= stol / (2 ||du|| of the step before)): no more CG iterations than the step before (here 3-41
   * against 9-42, equal for 2D P2 on the triangles, on 1 and 2 ranks; without that floor 15-70 against 13-42, the
   * last solve the tightest) */
  {
    mon m2 = {0, -1, -1, 0.0, 0, 0};
    T_CALL(mf_vector_set_boundary(u, bval, NULL));
    T_CALL(mf_newton_set_linear(nw, MF_PC_JACOBI, 1, 0.5, 5000));
    T_CALL(mf_newton_set_tolerances(nw, 1e-300, 0.0, 1e-10, 50));
    T_CALL(mf_newton_set_monitor(nw, monitor, &m2));
    T_CALL(mf_newton_solve(nw, u, &i2));
    T_CALL(mf_newton_set_monitor(nw, NULL, NULL));
    T_CHECK(i2.reason == MF_NEWTON_CONVERGED_UPDATE && i2.update <= 1e-10 && m2.lin_last <= m2.lin_prev,
            "%s %dD P%d: the update criterion with Eisenstat-Walker: reason %d, update %.3e, CG iterations %d at the last "
            "step, %d at the one before", name, dim, p, (int)i2.reason, i2.update, m2.lin_last, m2.lin_prev);
    printf("%s %dD P%d: update criterion with Eisenstat-Walker: %d steps, CG %d then %d\n", name, dim, p, i2.iterations,
           m2.lin_prev, m2.lin_last);
  }
  T_CALL(mf_newton_set_linear(nw, MF_PC_JACOBI, 0, 1e-10, 5000)); /* the fixed inner tolerance again */
  /* past the residual's rounding floor (rtol below reach, no update criterion): where the line search finds no
   * decrease there the full step is taken (at most three in a row): the step limit, or a failed line search after
   * three such steps */
  T_CALL(mf_vector_set_boundary(u, bval, NULL));
  T_CALL(mf_newton_set_tolerances(nw, 1e-300, 0.0, 0.0, steps[0] + 8));
  EXPECT(mf_newton_solve(nw, u, &i2), MF_ERR_NOT_CONVERGED, "Newton did not converge");
  {
    const double *res, *upd;
    int nh = 0, flat = 0, run = 0, most = 0;
    T_CALL(mf_newton_history(nw, &res, &upd, &nh));
    for (int k = 1; k < nh; k++) { /* accepted steps that did not decrease ||F|| by the line search's factor */
      const int f = res[k] > (1.0 - 1e-4) * res[k - 1];
      flat += f, run = f ? run + 1 : 0, most = run > most ? run : most;
    }
    T_CHECK((i2.reason == MF_NEWTON_MAX_ITERATIONS || (i2.reason == MF_NEWTON_LINE_SEARCH && most == 3)) &&
            i2.iterations > steps[0] && most <= 3 && i2.residual <= 1e-10 * i2.residual0,
            "%s %dD P%d: past the rounding floor reason %d after %d steps (%d to converge), %d steps without a decrease "
            "(%d in a row), ||F|| %.3e from %.3e", name, dim, p, (int)i2.reason, i2.iterations, steps[0], flat, most,
            i2.residual, i2.residual0);
  }
  T_CALL(mf_newton_set_tolerances(nw, 1e-10, 0.0, 0.0, 50));
  T_CHECK(lin[1] < lin[0], "%s %dD P%d: Eisenstat-Walker took %d CG iterations, the tight tolerance %d", name, dim, p, lin[1], lin[0]);

  /* the failure codes */
  mf_newton_info info;
  T_CALL(mf_vector_set_boundary(u, bval, NULL));
  T_CALL(mf_newton_set_tolerances(nw, 1e-12, 0.0, 0.0, 1));
  EXPECT(mf_newton_solve(nw, u, &info), MF_ERR_NOT_CONVERGED, "the step limit was reached after 1 steps");
  T_CHECK(info.reason == MF_NEWTON_MAX_ITERATIONS && !info.converged, "%dD: reason %d", dim, (int)info.reason);
  T_CALL(mf_newton_set_tolerances(nw, 1e-10, 0.0, 0.0, 50));
  T_CALL(mf_newton_set_linear(nw, MF_PC_JACOBI, 0, 1e-12, 1));
  T_CALL(mf_vector_set_boundary(u, bval, NULL));
  EXPECT(mf_newton_solve(nw, u, &info), MF_ERR_NOT_CONVERGED, "the inner solve (CG or GMRES) did not reach its tolerance");
  T_CHECK(info.reason == MF_NEWTON_LINEAR, "%dD: reason %d", dim, (int)info.reason);
  T_CALL(mf_newton_set_linear(nw, MF_PC_CHEBYSHEV, 1, 0.5, 5000)); /* Chebyshev inside works too */
  mon m = {0, -1, 1, 0.0};
  T_CALL(mf_newton_set_monitor(nw, monitor, &m));
  T_CALL(mf_vector_set_boundary(u, bval, NULL));
  EXPECT(mf_newton_solve(nw, u, &info), MF_ERR_NOT_CONVERGED, "stopped by its monitor after 1 steps");
  T_CHECK(info.reason == MF_NEWTON_STOPPED, "%s %dD: reason %d after the monitor's stop", name, dim, (int)info.reason);
  T_CALL(mf_newton_set_monitor(nw, NULL, NULL));
  T_CALL(mf_vector_set_boundary(u, bval, NULL));
  T_CALL(mf_newton_solve(nw, u, &info));
  T_CHECK(info.converged, "%s %dD P%d: Chebyshev inside did not converge", name, dim, p);
  /* the inner preconditioner for its settings (mf_newton_get_pc): kept over solves and GMRES' switch, its degree used;
   * a new one where the kind changes */
  {
    mf_pc pc1 = NULL, pc2 = NULL;
    EXPECT(mf_newton_get_pc(nw, NULL), MF_ERR_NULL, "output pointer pc is NULL");
    EXPECT(mf_newton_get_pc(NULL, &pc1), MF_ERR_NULL, "newton is NULL");
    T_CALL(mf_newton_set_linear(nw, MF_PC_CHEBYSHEV, 0, 1e-8, 5000));
    T_CALL(mf_newton_get_pc(nw, &pc1));
    int its[2] = {0, 0}, nsteps[2] = {0, 0};
    for (int d = 0; d < 2; d++) {
      T_CALL(mf_pc_set_chebyshev(pc1, d ? 8 : 1, 20.0, 12));
      if (d) { /* a switch to GMRES keeps it: GMRES solves with it, then CG again */
        T_CALL(mf_newton_set_gmres(nw, 30));
        T_CALL(mf_vector_set_boundary(u, bval, NULL));
        T_CALL(mf_newton_solve(nw, u, &info));
        T_CALL(mf_newton_get_pc(nw, &pc2));
        T_CHECK(info.converged && pc2 == pc1, "%s %dD P%d: GMRES with the kept preconditioner: converged %d, the same %d",
                name, dim, p, info.converged, pc2 == pc1);
        T_CALL(mf_newton_set_gmres(nw, 0));
      }
      T_CALL(mf_vector_set_boundary(u, bval, NULL));
      T_CALL(mf_newton_solve(nw, u, &info));
      its[d] = info.linear_iterations, nsteps[d] = info.iterations;
      T_CALL(mf_newton_get_pc(nw, &pc2));
      T_CHECK(pc2 == pc1, "%s %dD P%d: mf_newton_get_pc gave another preconditioner after a solve", name, dim, p);
    }
    T_CHECK(info.converged && nsteps[0] > 0 && 4 * its[1] < 3 * its[0], "%s %dD P%d: Chebyshev(8) inside took %d CG iterations (%d Newton steps), "
            "Chebyshev(1) %d (%d): the degree set through mf_newton_get_pc not used", name, dim, p, its[1], nsteps[1], its[0],
            nsteps[0]);
    T_CALL(mf_newton_set_linear(nw, MF_PC_JACOBI, 0, 1e-8, 5000));
    T_CALL(mf_newton_get_pc(nw, &pc2));
    T_CHECK(pc2 != NULL && pc2 != pc1, "%s %dD P%d: the kind changed, the preconditioner did not", name, dim, p);
  }
  EXPECT(mf_newton_set_linear(nw, (mf_pc_kind)99, 1, 0.5, 10), MF_ERR_ARGUMENT, "inner preconditioner 99");
  EXPECT(mf_newton_set_tolerances(nw, 0.0, 0.0, 0.0, 10), MF_ERR_ARGUMENT, "Newton would never stop");
  EXPECT(mf_newton_set_tolerances(nw, 1.5, 0.0, 0.0, 10), MF_ERR_ARGUMENT, "relative tolerance 1.5");
  EXPECT(mf_newton_set_linear(nw, MF_PC_JACOBI, 1, 1.0, 10), MF_ERR_ARGUMENT, "eta 1 out of range");
  mf_newton_destroy(&nw);
  mf_operator_destroy(&A);
  mf_physics_destroy(&ph);

  /* full steps fail, the line search does not, nor the energy's slope, nor the trust region (the energy of
   * atan(u - 1) is convex) */
  jacobi_newton(ctx, s, f0_atan, f1_small, g0_atan, g3_small, &ph, &A, &nw);
  for (int ls = 0; ls <= MF_NEWTON_TRUST_REGION; ls++) { /* full steps, backtracking, admissible steps (here full
                                                          * steps: F stays finite), critical steps, the trust region */
    T_CALL(mf_vector_set_value(u, -2.0));
    T_CALL(mf_vector_zero_boundary(u));
    T_CALL(mf_vector_set_boundary(g, one, NULL));
    T_CALL(mf_vector_axpy(u, 1.0, g)); /* -2 inside, 1 on the boundary */
    T_CALL(mf_newton_set_line_search(nw, ls));
    T_CALL(mf_newton_set_tolerances(nw, 1e-10, 0.0, 0.0, 40));
    const int ierr = mf_newton_solve(nw, u, &info);
    if (ls == MF_NEWTON_TRUST_REGION) { /* (4 or 5 steps; a rejected model, every trial taken, needs 8 or more) */
      T_CHECK(info.iterations <= 6 && info.trust_rejected >= 1 && info.trust_rejected <= 2,
              "%s %dD P%d: the trust region took %d steps from u = -2 (at most 6), %d trials rejected (the unbounded "
              "first step's overshoot: 1 or 2)", name, dim, p, info.iterations, info.trust_rejected);
      check_trust(nw, "atan(u - 1) from -2", dim, p);
    }
    if (ls >= MF_NEWTON_CRITICAL)
      T_CHECK(ierr == 0 && info.converged, "%s %dD P%d: %s gave error %d reason %d", name, dim, p,
              ls == MF_NEWTON_CRITICAL ? "critical steps" : "the trust region", ierr, (int)info.reason);
    else if (ls != MF_NEWTON_BACKTRACK)
      T_CHECK(ierr == MF_ERR_NOT_CONVERGED && !info.converged &&
                  (info.reason == MF_NEWTON_DIVERGED || info.reason == MF_NEWTON_MAX_ITERATIONS),
              "%s %dD P%d: %s gave error %d reason %d (expected no convergence)", name, dim, p,
              ls ? "admissible steps" : "full steps", ierr, (int)info.reason);
    else {
      T_CHECK(ierr == 0 && info.converged, "%s %dD P%d: with the line search error %d reason %d", name, dim, p, ierr,
              (int)info.reason);
      const double *rho, *rad, *snm;
      int nt;
      T_CALL(mf_newton_trust_history(nw, &rho, &rad, &snm, &nt));
      for (int k = 0; k < nt; k++) /* no trust region: NaN throughout */
        T_CHECK(isnan(rho[k]) && isnan(rad[k]) && isnan(snm[k]) && info.trust_rejected == 0,
                "%s %dD P%d: backtracking's step %d has a trust history (%g, %g, %g), %d rejected", name, dim, p, k, rho[k],
                rad[k], snm[k], info.trust_rejected);
      const double *res;
      int nh;
      T_CALL(mf_newton_history(nw, &res, NULL, &nh));
      for (int k = 1; k < nh; k++)
        T_CHECK(res[k] < res[k - 1], "%s %dD P%d: ||F|| rose at step %d with the line search (%.3e -> %.3e)", name, dim, p, k,
                res[k - 1], res[k]);
    }
  }
  /* from u = -1/2 the full step overshoots less: taken at rho below 1/4 (0.045-0.072; 0.30-0.33 on the 3D P1
   * meshes), the radius quartered */
  T_CALL(mf_newton_set_line_search(nw, MF_NEWTON_TRUST_REGION));
  T_CALL(mf_vector_set_value(u, -0.5));
  T_CALL(mf_vector_zero_boundary(u));
  T_CALL(mf_vector_axpy(u, 1.0, g));
  {
    const int ierr = mf_newton_solve(nw, u, &info);
    /* no trial rejected: the step after the poor first one fits the quartered radius (one a quarter as tight,
     * the step's own norm, is rejected in six of the eight spaces) */
    T_CHECK(ierr == 0 && info.converged && info.iterations <= 8 && info.trust_rejected == 0,
            "%s %dD P%d: the trust region from u = -1/2: error %d, converged %d in %d steps, %d trials rejected (0)", name,
            dim, p, ierr, info.converged, info.iterations, info.trust_rejected);
    check_trust(nw, "atan(u - 1) from -1/2", dim, p);
  }
  mf_newton_destroy(&nw);
  mf_operator_destroy(&A);
  mf_physics_destroy(&ph);

  /* a quadratic energy (u - 2 with small diffusion): the model is the energy, rho = 1 (Simpson's rule exact) */
  jacobi_newton(ctx, s, f0_lin, f1_small, g0_one, g3_small, &ph, &A, &nw);
  T_CALL(mf_newton_set_line_search(nw, MF_NEWTON_TRUST_REGION));
  T_CALL(mf_newton_set_tolerances(nw, 1e-10, 0.0, 0.0, 10));
  T_CALL(mf_vector_set_value(u, 0.0));
  T_CALL(mf_vector_zero_boundary(u));
  T_CALL(mf_vector_axpy(u, 1.0, g));
  T_CALL(mf_newton_solve(nw, u, &info));
  {
    const double *rho, *rad;
    int nt;
    T_CALL(mf_newton_trust_history(nw, &rho, &rad, NULL, &nt));
    T_CHECK(info.converged && nt >= 2 && fabs(rho[1] - 1.0) <= 1e-8 && isinf(rad[1]),
            "%s %dD P%d: the trust region on a quadratic energy: converged %d, step 1's rho %.12f (1), radius %g (inf)",
            name, dim, p, info.converged, nt >= 2 ? rho[1] : 0.0, nt >= 2 ? rad[1] : 0.0);
    check_trust(nw, "u - 2", dim, p);
  }
  mf_newton_destroy(&nw);
  mf_operator_destroy(&A);
  mf_physics_destroy(&ph);

  /* a Jacobian that is not symmetric: GMRES inside converges, quadratically with a tight tolerance */
  T_CALL(mf_physics_create(ctx, 1, &ph));
  T_CALL(mf_physics_set_residual(ph, f0_nl, f1_nv));
  T_CALL(mf_physics_set_jacobian(ph, g0_nl, NULL, g2_nv, g3_nv));
  T_CALL(mf_operator_create_physics(s, ph, MF_QUAD_GAUSS, &A));
  T_CALL(mf_newton_create(A, &nw));
  T_CALL(mf_newton_set_gmres(nw, 40));
  T_CALL(mf_newton_set_linear(nw, MF_PC_JACOBI, 0, 1e-10, 2000));
  T_CALL(mf_vector_set_boundary(u, bval, NULL));
  T_CALL(mf_newton_solve(nw, u, &info));
  {
    const double *res;
    int nh;
    T_CALL(mf_newton_history(nw, &res, NULL, &nh));
    int k = nh - 1;
    while (k > 2 && res[k] <= 1e-12 * res[0]) k--;
    const double q = k >= 2 ? log(res[k] / res[k - 1]) / log(res[k - 1] / res[k - 2]) : 0.0;
    T_CHECK(info.converged && info.iterations <= 15 && k >= 2 && q >= 1.6, "%s %dD P%d GMRES inside: converged %d, order %.2f", name, dim, p,
            info.converged, q);
  }
  EXPECT(mf_newton_set_gmres(nw, -1), MF_ERR_ARGUMENT, "GMRES restart -1 out of range");
  T_CALL(mf_newton_set_line_search(nw, MF_NEWTON_TRUST_REGION)); /* Steihaug's region needs CG */
  EXPECT(mf_newton_solve(nw, u, &info), MF_ERR_UNSUPPORTED, "trust region needs CG inside");
  T_CALL(mf_newton_set_line_search(nw, MF_NEWTON_BACKTRACK));
  /* multigrid on the operator at a state: its levels at the state injected; a float V-cycle refused */
  {
    mf_pc pm = NULL;
    const int e1 = mf_pc_create(A, MF_PC_MULTIGRID, &pm);
    T_CHECK(e1 == 0, "%s %dD P%d: multigrid on the physics operator refused at creation (%d)", name, dim, p, e1);
    if (!e1) {
      T_CALL(mf_pc_setup(pm));
      T_CALL(mf_pc_set_multigrid_precision(pm, MF_PRECISION_FLOAT));
      EXPECT(mf_pc_setup(pm), MF_ERR_UNSUPPORTED, "a double V-cycle with the matrix-free coarse level only");
    }
    mf_pc_destroy(&pm);
  }
  mf_newton_destroy(&nw);
  mf_operator_destroy(&A);
  mf_physics_destroy(&ph);

  /* a Jacobian of the wrong sign (GMRES solves with it): no step length decreases ||F|| */
  T_CALL(mf_physics_create(ctx, 1, &ph));
  T_CALL(mf_physics_set_residual(ph, f0_nl, f1_lap));
  T_CALL(mf_physics_set_jacobian(ph, g0_neg, NULL, NULL, g3_neg));
  T_CALL(mf_operator_create_physics(s, ph, MF_QUAD_GAUSS, &A));
  T_CALL(mf_newton_create(A, &nw));
  T_CALL(mf_newton_set_gmres(nw, 40));
  T_CALL(mf_newton_set_linear(nw, MF_PC_NONE, 0, 1e-8, 2000));
  T_CALL(mf_vector_set_boundary(u, bval, NULL));
  EXPECT(mf_newton_solve(nw, u, &info), MF_ERR_NOT_CONVERGED, "the line search found no step length");
  T_CHECK(info.reason == MF_NEWTON_LINE_SEARCH && info.iterations == 0, "%s %dD P%d: a wrong Jacobian gave reason %d after %d "
          "steps", name, dim, p, (int)info.reason, info.iterations);
  mf_newton_destroy(&nw);
  mf_operator_destroy(&A);
  mf_physics_destroy(&ph);

  /* ln(1 + u) = 0 (u = 0) from u = 5 inside: the full step (1 + u to about (1 + u)(1 - ln(1 + u)) < 0) leaves F not
   * finite; admissible steps halve it until F is finite and converge, as backtracking, the energy's slope
   * (critical: the energy of ln(1 + u), a gradient) and the trust region (quartered where F is not finite) do */
  jacobi_newton(ctx, s, f0_log1, f1_small, g0_log1, g3_small, &ph, &A, &nw);
  T_CALL(mf_newton_set_tolerances(nw, 1e-10, 0.0, 0.0, 40));
  for (int ls = 0; ls <= MF_NEWTON_TRUST_REGION; ls++) {
    T_CALL(mf_vector_set_value(u, 5.0));
    T_CALL(mf_vector_zero_boundary(u));
    T_CALL(mf_newton_set_line_search(nw, ls));
    const int ierr = mf_newton_solve(nw, u, &info);
    if (ls == MF_NEWTON_FULL_STEPS)
      T_CHECK(ierr == MF_ERR_ARGUMENT && info.reason == MF_NEWTON_STATE && info.iterations == 0 &&
                  strstr(mf_context_error_message(ctx), "finite"),
              "%dD: full steps from u = 5 gave error %d reason %d after %d steps (%s)", dim, ierr, (int)info.reason,
              info.iterations, mf_context_error_message(ctx));
    else
      T_CHECK(ierr == 0 && info.converged && info.iterations <= 12, "%dD: %s from u = 5: error %d reason %d, %d steps",
              dim, ls == MF_NEWTON_ADMISSIBLE ? "admissible steps" : ls == MF_NEWTON_CRITICAL ? "critical" :
                   ls == MF_NEWTON_TRUST_REGION ? "the trust region" : "backtracking",
              ierr, (int)info.reason, info.iterations);
    if (ls == MF_NEWTON_TRUST_REGION) check_trust(nw, "ln(1 + u) from 5", dim, p);
  }
  mf_newton_destroy(&nw);
  mf_operator_destroy(&A);
  mf_physics_destroy(&ph);
  /* the same residual with a Jacobian far too small: no step length leaves F finite; admissible steps stop with the
   * state's error (the point named), as the energy's slope (critical) and the trust region (quartered 12 times) do,
   * backtracking with its own reason */
  jacobi_newton(ctx, s, f0_log1, f1_small, g0_tiny, g3_tiny, &ph, &A, &nw);
  T_CALL(mf_newton_set_tolerances(nw, 1e-10, 0.0, 0.0, 40));
  for (int ls = MF_NEWTON_BACKTRACK; ls <= MF_NEWTON_TRUST_REGION; ls++) {
    T_CALL(mf_vector_set_value(u, 5.0));
    T_CALL(mf_vector_zero_boundary(u));
    T_CALL(mf_newton_set_line_search(nw, ls));
    const int ierr = mf_newton_solve(nw, u, &info);
    if (ls != MF_NEWTON_BACKTRACK)
      T_CHECK(ierr == MF_ERR_ARGUMENT && info.reason == MF_NEWTON_STATE && info.iterations == 0 &&
                  strstr(mf_context_error_message(ctx), "finite"),
              "%dD: %s with no finite trial gave error %d reason %d after %d steps (%s)", dim,
              ls == MF_NEWTON_CRITICAL ? "critical" : ls == MF_NEWTON_TRUST_REGION ? "the trust region" : "admissible steps",
              ierr, (int)info.reason, info.iterations, mf_context_error_message(ctx));
    else
      T_CHECK(ierr == MF_ERR_NOT_CONVERGED && info.reason == MF_NEWTON_LINE_SEARCH && info.iterations == 0,
              "%dD: backtracking with no finite trial gave error %d reason %d after %d steps", dim, ierr,
              (int)info.reason, info.iterations);
  }
  mf_newton_destroy(&nw);
  mf_operator_destroy(&A);
  mf_physics_destroy(&ph);
  /* a residual that jumps from u - 2 to 1e6 at u = 1, from u = 1 - 2^-45: the step (about 1 long) crosses the jump
   * at every trial down to the thirteenth (lambda at least 1e-12, the secant's cuts held to 1/10), where the slope is
   * 1e6: critical steps stop with MF_NEWTON_LINE_SEARCH and their own words (with a far too small Jacobian instead,
   * atan(u - 1) from u = -2, the secant's steps found a length and converged) */
  jacobi_newton(ctx, s, f0_jump, f1_small, g0_one, g3_small, &ph, &A, &nw);
  T_CALL(mf_newton_set_tolerances(nw, 1e-10, 0.0, 0.0, 40));
  T_CALL(mf_newton_set_line_search(nw, MF_NEWTON_CRITICAL));
  T_CALL(mf_vector_set_value(u, 1.0 - ldexp(1.0, -45)));
  EXPECT(mf_newton_solve(nw, u, &info), MF_ERR_NOT_CONVERGED, "brings the energy's slope along the step to half its size");
  T_CHECK(info.reason == MF_NEWTON_LINE_SEARCH && info.iterations == 0, "%dD: critical steps with a far too small Jacobian "
          "gave reason %d after %d steps", dim, (int)info.reason, info.iterations);
  EXPECT(mf_newton_set_line_search(nw, 5), MF_ERR_ARGUMENT, "line search 5");
  EXPECT(mf_newton_set_pc_lag(nw, 1.0), MF_ERR_ARGUMENT, "preconditioner lag 1 out of range");
  EXPECT(mf_newton_set_pc_lag(nw, -0.5), MF_ERR_ARGUMENT, "preconditioner lag -0.5 out of range");
  EXPECT(mf_newton_set_line_search(nw, -1), MF_ERR_ARGUMENT, "line search -1");
  mf_newton_destroy(&nw);
  mf_operator_destroy(&A);
  mf_physics_destroy(&ph);

  /* the lagged preconditioner (mf_newton_set_pc_lag): u^3 - 1 from u = 1/3 inside (u = 1 on the boundary), Chebyshev
   * of degree 8 inside. Without a lag every step sets it up; with 0.99 the first step's set-up is kept at the second,
   * whose Jacobian has grown past its eigenvalue estimate (about 6x): the inner solve fails with it, so the step
   * sets up at its own Jacobian and solves again. Both converge in the same steps to the same solution. */
  {
    mf_vector u0 = NULL;
    mf_pc pcl = NULL;
    T_CALL(mf_vector_create(s, &u0));
    jacobi_newton(ctx, s, f0_cube, f1_small, g0_cube, g3_small, &ph, &A, &nw);
    T_CALL(mf_newton_set_linear(nw, MF_PC_CHEBYSHEV, 0, 1e-10, 500));
    T_CALL(mf_newton_get_pc(nw, &pcl));
    T_CALL(mf_pc_set_chebyshev(pcl, 8, 20.0, 12));
    T_CALL(mf_newton_set_tolerances(nw, 1e-10, 0.0, 0.0, 30));
    mf_newton_info in[2];
    for (int lag = 0; lag < 2; lag++) {
      T_CALL(mf_newton_set_pc_lag(nw, lag ? 0.99 : 0.0));
      T_CALL(mf_vector_set_value(lag ? u : u0, 1.0 / 3.0));
      T_CALL(mf_vector_zero_boundary(lag ? u : u0));
      T_CALL(mf_vector_set_boundary(g, one, NULL));
      T_CALL(mf_vector_axpy(lag ? u : u0, 1.0, g));
      T_CALL(mf_newton_solve(nw, lag ? u : u0, &in[lag]));
    }
    double scale = 0.0;
    const double d = maxdiff(u, u0, n, &scale);
    T_CHECK(in[0].converged && in[1].converged && in[1].iterations == in[0].iterations && in[0].pc_kept == 0 &&
                in[1].pc_kept >= 1 && in[1].pc_kept < in[1].iterations - 1 && d <= 1e-10 * scale,
            "%dD: u^3 - 1 with Chebyshev lagged by 0.99: converged %d, %d steps, %d kept its set-up (without the lag %d, "
            "%d, %d); the solutions differ by %.3e",
            dim, in[1].converged, in[1].iterations, in[1].pc_kept, in[0].converged, in[0].iterations, in[0].pc_kept, d);
    /* the same in the trust region (whose norm is the kept preconditioner's until its solve fails): converged, the
     * same solution */
    mf_newton_info it;
    T_CALL(mf_newton_set_line_search(nw, MF_NEWTON_TRUST_REGION));
    T_CALL(mf_vector_set_value(u, 1.0 / 3.0));
    T_CALL(mf_vector_zero_boundary(u));
    T_CALL(mf_vector_axpy(u, 1.0, g));
    const int ierr_t = mf_newton_solve(nw, u, &it);
    check_trust(nw, "u^3 - 1 lagged", dim, p);
    const double dt = ierr_t ? 1.0 : maxdiff(u, u0, n, &scale);
    T_CHECK(ierr_t == 0 && it.converged && it.pc_kept >= 1 && dt <= 1e-10 * scale,
            "%dD: u^3 - 1 with Chebyshev lagged by 0.99 in the trust region: error %d, converged %d, %d steps, %d kept "
            "its set-up; the solutions differ by %.3e", dim, ierr_t, it.converged, it.iterations, it.pc_kept, dt);
    T_CALL(mf_newton_set_line_search(nw, MF_NEWTON_BACKTRACK));
    mf_vector_destroy(&u0);
    mf_newton_destroy(&nw);
    mf_operator_destroy(&A);
    mf_physics_destroy(&ph);
  }

  /* a residual not finite at the start: the point named */
  T_CALL(mf_physics_create(ctx, 1, &ph));
  T_CALL(mf_physics_set_residual(ph, f0_log, f1_small));
  T_CALL(mf_physics_set_jacobian(ph, NULL, NULL, NULL, g3_small));
  T_CALL(mf_operator_create_physics(s, ph, MF_QUAD_GAUSS, &A));
  T_CALL(mf_newton_create(A, &nw));
  T_CALL(mf_vector_set_value(u, -1.0));
  EXPECT(mf_newton_solve(nw, u, &info), MF_ERR_ARGUMENT, "the pointwise function f0 must give finite values");
  T_CHECK(info.reason == MF_NEWTON_STATE, "%dD: reason %d for a residual not finite", dim, (int)info.reason);
  mf_newton_destroy(&nw);
  mf_operator_destroy(&A);
  mf_physics_destroy(&ph);

  /* refusals */
  T_CALL(mf_operator_create_laplace(s, MF_QUAD_GAUSS, NULL, NULL, &A));
  EXPECT(mf_newton_create(A, &nw), MF_ERR_UNSUPPORTED, "Newton needs an operator of a pointwise physics");
  EXPECT(mf_operator_set_state(A, u), MF_ERR_UNSUPPORTED, "a state needs an operator of a pointwise physics");
  mf_operator_destroy(&A);
  mf_vector_destroy(&u);
  mf_vector_destroy(&g);
  mf_space_destroy(&s);
  mf_mesh_destroy(&mesh);
}

int main(int argc, char **argv)
{
  MPI_Init(&argc, &argv);
  mf_context ctx;
  T_CALL(mf_context_create(MPI_COMM_WORLD, "cpu", &ctx));
  for (int hex = 0; hex < 2; hex++) /* simplices, then hexahedra (Q_p on the unit square and cube) */
    for (int dim = 2; dim <= 3; dim++)
      for (int p = 1; p <= 2; p++) {
        const char *name = hex ? "cube" : dim == 2 ? "square-tris" : "cube-tets";
        const int level = dim == 2 ? 3 : 2;
        check_state(ctx, name, dim, level, p);
        check_newton(ctx, name, dim, level, p);
      }
  /* a facet g0 (Robin) is not linearised at a state yet */
  {
    mf_mesh m2;
    mf_space s2;
    mf_operator B;
    mf_vector w;
    T_CALL(mf_mesh_create(ctx, "square-tris", 2, 2, &m2));
    T_CALL(mf_space_create(m2, 1, &s2));
    mf_physics pr = nl_physics(ctx);
    T_CALL(mf_physics_set_boundary(pr, 1, robin_f0, robin_g0));
    T_CALL(mf_operator_create_physics(s2, pr, MF_QUAD_GAUSS, &B));
    T_CALL(mf_vector_create(s2, &w));
    T_CALL(mf_vector_set_value(w, 0.5));
    EXPECT(mf_operator_set_state(B, w), MF_ERR_UNSUPPORTED, "boundary terms in its operator (g0 on facets)");
    mf_vector_destroy(&w);
    mf_operator_destroy(&B);
    mf_physics_destroy(&pr);
    mf_space_destroy(&s2);
    mf_mesh_destroy(&m2);
  }
  T_CHECK(trust_small_rho > 0, "no trust-region step was accepted at rho < 1/4 (the radius's rule not exercised)");
  /* the trust history's arguments */
  EXPECT(mf_newton_trust_history(NULL, NULL, NULL, NULL, NULL), MF_ERR_NULL, "newton is NULL");
  mf_context_destroy(&ctx);
  return t_finish();
}
