/* t45_hyperelastic.c -- Newton's method on the Neo-Hookean hyperelasticity of mfree-hyperelastic (apps/hyperelastic.h),
 * the FEniCS demonstration's problem on the unit cube in tetrahedra (P1, P2) and hexahedra (Q1, Q2):
 *   - the Jacobian check passes for its g3 (2D and 3D) and fails for a deliberately wrong one;
 *   - small loads reproduce linear elasticity (the gallery's, same lambda and mu, same loads and boundary values):
 *     ||u_eps - u_lin,eps|| = O(eps^2) (the ratio of the errors at eps = 1e-2 and 1e-3 near 1e-2);
 *   - the energy Pi(u) = int psi(F) - int B.u - int T.u of the Newton iterates decreases at every step (P1: exact
 *     integrals from the cells' constant F), with backtracking, with the energy's slope (MF_NEWTON_CRITICAL) and in a
 *     trust region (MF_NEWTON_TRUST_REGION), and
 *     Newton converges quadratically (the update's order >= 1.6);
 *   - the failure codes from cases built for them: an inverted element in the initial guess (MF_NEWTON_STATE, the
 *     point named), a load too large for full steps (MF_NEWTON_STATE; an indefinite Jacobian met by CG's negative
 *     curvature stop), which converges with the line search, by the energy's slope, in a trust region or in load
 *     steps;
 *   - on 2 ranks (NP 2): the same Newton and CG iterations and residual history as rank 0 alone, ||u|| to 1e-10;
 *   - the assembled Jacobian at a state (mf_operator_create_assembled after mf_operator_set_state) applies as the
 *     matrix-free one, 1e-12, P1, P2, Q1 and Q2;
 *   - `t45_hyperelastic cuda`: cpu = cuda (the same Newton iterations, CG iterations within one per Newton step, the
 *     solutions to 1e-8) on P1, P2 (Jacobi), Q1 and Q2 (Jacobi and multigrid), with the Jacobian at the state stored
 *     and fused (MFREE_PHYSICS_FUSED=0, 1), and the assembled Jacobian at a state against the matrix-free one, stored
 *     and fused; J x, the diagonal and multigrid's M^-1 r at three Q2 states (one of them indefinite) as the cpu's;
 *     `cuda` on 2 ranks (NP 2): the ranks case on the device. */
#include "mf_test.h"
#include "hyperelastic.h"
#include "simplex/mf_simplex_space.h"

#include <math.h>

typedef struct {
  int newton, cg, reason, nhist, negative, kept;
  double unorm, hist[64];
  double *u; /* owned values (NULL where not kept) */
  double energy;
  int n;
  int ierr;
} run_result;

typedef struct {
  const char *mesh; /* cube-tets | cube */
  int cubes, degree, line_search, max_steps, loads;
  double cg_tol, rtol, eps; /* eps: the loads' and the twist's scale */
  int gallery;              /* 1: linear elasticity (the gallery's) with F(u) = eps L, L the hyperelastic loads */
  int energy;               /* 1: Pi(u) of the end state into the result (P1 tetrahedra, one rank, eps 1) */
  double *init;             /* the initial field's displacement gradient (constant), or NULL: 0 */
  double bscale;            /* the body force B times this (0: 1) */
  int mg;                   /* 1: multigrid inside (at the state), else Jacobi */
  int assembled;            /* 1: the Jacobian assembled at every step */
  double pc_lag;            /* mf_newton_set_pc_lag (0: off) */
} run_setup;

static void init_field(const double *x, int dim, double *v, void *user)
{
  const double *G = (const double *)user;
  for (int c = 0; c < dim; c++) {
    v[c] = 0.0;
    for (int d = 0; d < dim; d++) v[c] += G[c * 3 + d] * x[d];
  }
}

/* Pi(u) on P1 tetrahedra (one rank): F constant per cell, B and T integrated exactly (linear u) */
static double energy(mf_space s, const double *uval)
{
  const mf_simplex_mesh *m = mf_simplex_space_mesh(s);
  hyper_problem p = hyper_demo();
  const double lambda = p.E * p.nu / ((1.0 + p.nu) * (1.0 - 2.0 * p.nu)), mu = p.E / (2.0 * (1.0 + p.nu));
  int *vnode = malloc(sizeof(int) * (size_t)m->nv);
  for (int v = 0; v < m->nv; v++) vnode[v] = -1;
  int consistent = 1;
  for (int e = 0; e < m->ncells; e++)
    for (int a = 0; a < 4; a++) {
      const int v = m->cells[4 * e + a], node = s->cell_nodes[4 * e + a];
      if (vnode[v] >= 0 && vnode[v] != node) consistent = 0;
      vnode[v] = node;
    }
  T_CHECK(consistent, "P1 nodes are not the cells' vertices in order");
  double Pi = 0.0;
  for (int e = 0; e < m->ncells; e++) {
    double X[4][3], J[9], Ji[9];
    for (int a = 0; a < 4; a++)
      for (int k = 0; k < 3; k++) X[a][k] = m->coords[3 * (size_t)m->cells[4 * e + a] + k];
    for (int k = 0; k < 3; k++)
      for (int l = 0; l < 3; l++) J[3 * k + l] = X[l + 1][k] - X[0][k];
    const double det = J[0] * (J[4] * J[8] - J[5] * J[7]) - J[1] * (J[3] * J[8] - J[5] * J[6]) + J[2] * (J[3] * J[7] - J[4] * J[6]);
    Ji[0] = (J[4] * J[8] - J[5] * J[7]) / det, Ji[1] = (J[2] * J[7] - J[1] * J[8]) / det, Ji[2] = (J[1] * J[5] - J[2] * J[4]) / det;
    Ji[3] = (J[5] * J[6] - J[3] * J[8]) / det, Ji[4] = (J[0] * J[8] - J[2] * J[6]) / det, Ji[5] = (J[2] * J[3] - J[0] * J[5]) / det;
    Ji[6] = (J[3] * J[7] - J[4] * J[6]) / det, Ji[7] = (J[1] * J[6] - J[0] * J[7]) / det, Ji[8] = (J[0] * J[4] - J[1] * J[3]) / det;
    double gphi[4][3]; /* grad phi_a = rows of J^-1 (a = 1..3), phi_0 = 1 - sum */
    for (int k = 0; k < 3; k++) {
      gphi[0][k] = 0.0;
      for (int a = 1; a < 4; a++) gphi[a][k] = Ji[3 * (a - 1) + k], gphi[0][k] -= gphi[a][k];
    }
    double F[9], ubar[3] = {0, 0, 0};
    for (int c = 0; c < 3; c++)
      for (int d = 0; d < 3; d++) {
        F[3 * c + d] = c == d ? 1.0 : 0.0;
        for (int a = 0; a < 4; a++) F[3 * c + d] += uval[3 * (size_t)s->cell_nodes[4 * e + a] + c] * gphi[a][d];
      }
    for (int a = 0; a < 4; a++)
      for (int c = 0; c < 3; c++) ubar[c] += 0.25 * uval[3 * (size_t)s->cell_nodes[4 * e + a] + c];
    const double JF = F[0] * (F[4] * F[8] - F[5] * F[7]) - F[1] * (F[3] * F[8] - F[5] * F[6]) + F[2] * (F[3] * F[7] - F[4] * F[6]);
    double Ic = 0.0;
    for (int i = 0; i < 9; i++) Ic += F[i] * F[i];
    const double psi = 0.5 * mu * (Ic - 3.0) - mu * log(JF) + 0.5 * lambda * log(JF) * log(JF), vol = fabs(det) / 6.0;
    Pi += vol * (psi - (p.B[0] * ubar[0] + p.B[1] * ubar[1] + p.B[2] * ubar[2]));
  }
  for (int t = 0; t < m->nfacets; t++) {
    if (m->facet_tag[t] < 3) continue; /* the traction on y = 0, 1, z = 0, 1 */
    const int *f = m->facets + 3 * (size_t)t;
    double a[3], b[3], nrm[3], ubar[3] = {0, 0, 0};
    for (int k = 0; k < 3; k++) a[k] = m->coords[3 * (size_t)f[1] + k] - m->coords[3 * (size_t)f[0] + k],
                                b[k] = m->coords[3 * (size_t)f[2] + k] - m->coords[3 * (size_t)f[0] + k];
    nrm[0] = a[1] * b[2] - a[2] * b[1], nrm[1] = a[2] * b[0] - a[0] * b[2], nrm[2] = a[0] * b[1] - a[1] * b[0];
    const double area = 0.5 * sqrt(nrm[0] * nrm[0] + nrm[1] * nrm[1] + nrm[2] * nrm[2]);
    for (int v = 0; v < 3; v++)
      for (int c = 0; c < 3; c++) ubar[c] += uval[3 * (size_t)vnode[f[v]] + c] / 3.0;
    Pi -= area * (p.T[0] * ubar[0] + p.T[1] * ubar[1] + p.T[2] * ubar[2]);
  }
  free(vnode);
  return Pi;
}

/* The demonstration's operator of problem p on a box of trees cubes per side refined level times ("cube-tets" or
 * "cube"), degree p, clamped at x = 0 and x = 1 (tags 1, 2); free_problem destroys what it made */
typedef struct {
  mf_mesh mesh;
  mf_space s;
  mf_physics ph;
  mf_operator op;
} problem;
static problem make_problem(mf_context ctx, const char *mesh, const int trees[3], int level, int degree,
                            const hyper_problem *p)
{
  const int clamp[2] = {1, 2};
  problem P = {NULL, NULL, NULL, NULL};
  T_CALL(mf_mesh_create_box(ctx, mesh, 3, trees, level, &P.mesh));
  T_CALL(mf_space_create_components(P.mesh, degree, 3, &P.s));
  T_CALL(mf_space_set_dirichlet_tags(P.s, 2, clamp));
  T_CALL(hyper_physics(ctx, 3, p, &P.ph));
  T_CALL(mf_operator_create_physics(P.s, P.ph, MF_QUAD_GAUSS, &P.op));
  return P;
}
static void free_problem(problem *P)
{
  mf_operator_destroy(&P->op);
  mf_physics_destroy(&P->ph);
  mf_space_destroy(&P->s);
  mf_mesh_destroy(&P->mesh);
}

/* the problem of setup su on ctx, solved; the owned values kept where keep */
static run_result solve(mf_context ctx, const run_setup *su, int keep)
{
  run_result R;
  memset(&R, 0, sizeof R);
  const int dim = 3, hex = !strcmp(su->mesh, "cube");
  int r = 0;
  while (r < 3 && su->cubes % (2 << r) == 0) r++;
  const int c = su->cubes >> r, trees[3] = {c, c, c};
  hyper_problem p = hyper_demo();
  for (int k = 0; k < 3; k++) p.B[k] *= su->eps, p.T[k] *= su->eps;
  p.twist_scale *= su->eps;
  if (su->bscale > 0.0)
    for (int k = 0; k < 3; k++) p.B[k] *= su->bscale;
  problem P = make_problem(ctx, hex ? "cube" : "cube-tets", trees, r, su->degree, &p);
  const mf_space s = P.s;
  const mf_operator op = P.op;
  mf_physics lin = NULL;
  mf_operator A = NULL;
  mf_vector u = NULL, g = NULL, L = NULL, zero = NULL;
  mf_newton nw = NULL;
  T_CALL(mf_vector_create(s, &u));
  T_CALL(mf_vector_create(s, &g));
  T_CALL(mf_vector_create(s, &L));
  T_CALL(mf_vector_create(s, &zero));
  const double twist[3] = {1.0, p.twist_scale, p.twist_angle};
  if (su->init) T_CALL(mf_vector_interpolate_field(u, init_field, su->init));
  T_CALL(mf_vector_set_boundary_field(g, hyper_twist, (void *)twist));
  T_CALL(mf_vector_zero_boundary(u));
  T_CALL(mf_vector_axpy(u, 1.0, g));
  if (su->gallery) { /* A u = eps L: L = -F(0) of the hyperelastic physics */
    const double lambda = p.E * p.nu / ((1.0 + p.nu) * (1.0 - 2.0 * p.nu)), mu = p.E / (2.0 * (1.0 + p.nu)), k[2] = {lambda, mu};
    T_CALL(mf_operator_set_dirichlet(op, 1));
    T_CALL(mf_operator_residual(op, zero, L));
    T_CALL(mf_vector_scale(L, -1.0));
    T_CALL(mf_physics_create_gallery(ctx, "elasticity", dim, 2, k, &lin));
    T_CALL(mf_operator_create_physics(s, lin, MF_QUAD_GAUSS, &A));
  }
  mf_operator N = su->gallery ? A : op;
  T_CALL(mf_newton_create(N, &nw));
  T_CALL(mf_newton_set_tolerances(nw, su->rtol, 0.0, 0.0, su->max_steps > 0 ? su->max_steps : 1));
  T_CALL(mf_newton_set_linear(nw, su->mg ? MF_PC_MULTIGRID : MF_PC_JACOBI, 0, su->cg_tol, 100000));
  T_CALL(mf_newton_set_line_search(nw, su->line_search));
  T_CALL(mf_newton_set_assembled(nw, su->assembled));
  T_CALL(mf_newton_set_pc_lag(nw, su->pc_lag));
  if (su->gallery) T_CALL(mf_newton_set_rhs(nw, L));
  mf_newton_info info;
  int loads = su->loads > 0 ? su->loads : 1;
  if (loads > 1) { /* b = (1 - s) F(0) */
    T_CALL(mf_operator_set_dirichlet(op, 1));
    T_CALL(mf_operator_residual(op, zero, L));
  }
  for (int l = 1; l <= loads; l++) {
    const double frac = (double)l / loads, tw[3] = {frac, p.twist_scale, p.twist_angle};
    if (loads > 1) {
      T_CALL(mf_vector_set_boundary_field(g, hyper_twist, (void *)tw));
      T_CALL(mf_vector_zero_boundary(u));
      T_CALL(mf_vector_axpy(u, 1.0, g));
      T_CALL(mf_vector_scale(L, l == 1 ? 1.0 - frac : (1.0 - frac) / (1.0 - (double)(l - 1) / loads)));
      T_CALL(mf_newton_set_rhs(nw, l == loads ? NULL : L));
    }
    if (su->max_steps == 0) break; /* the initial guess alone */
    R.ierr = mf_newton_solve(nw, u, &info);
    R.newton += info.iterations, R.cg += info.linear_iterations, R.reason = info.reason;
    R.negative += info.negative_curvature, R.kept += info.pc_kept;
    if (R.ierr) break;
  }
  const double *res = NULL, *upd = NULL;
  T_CALL(mf_newton_history(nw, &res, &upd, &R.nhist));
  if (R.nhist > 64) R.nhist = 64;
  for (int k = 0; k < R.nhist; k++) R.hist[k] = upd[k];
  T_CALL(mf_vector_norm2(u, &R.unorm));
  if (keep) {
    int nl = 0;
    T_CALL(mf_space_local_sizes(s, &R.n, &nl));
    R.u = calloc((size_t)R.n + 1, sizeof(double));
    T_CALL(mf_vector_get_values(u, R.u));
  }
  if (su->energy) {
    double *h = NULL;
    T_CALL(mf_vector_get_array_read(u, MF_MEM_HOST, (const double **)&h));
    if (h) R.energy = energy(s, h);
    T_CALL(mf_vector_restore_array_read(u, (const double **)&h));
  }
  mf_newton_destroy(&nw);
  mf_vector_destroy(&u), mf_vector_destroy(&g), mf_vector_destroy(&L), mf_vector_destroy(&zero);
  mf_operator_destroy(&A);
  mf_physics_destroy(&lin);
  free_problem(&P);
  return R;
}

static double max_rel(const run_result *a, const run_result *b)
{
  double d = 0.0, m = 0.0;
  for (int i = 0; i < a->n && i < b->n; i++) d = fmax(d, fabs(a->u[i] - b->u[i])), m = fmax(m, fabs(b->u[i]));
  return m > 0.0 ? d / m : d;
}

static double l2_diff(const run_result *a, const run_result *b)
{
  double d = 0.0;
  for (int i = 0; i < a->n && i < b->n; i++) d += (a->u[i] - b->u[i]) * (a->u[i] - b->u[i]);
  return sqrt(d);
}

/* the Jacobian check of the hyperelastic g3, and of one with a wrong sign */
static void jacobian_case(mf_context ctx)
{
  hyper_problem p = hyper_demo();
  for (int dim = 2; dim <= 3; dim++) {
    mf_physics ph = NULL;
    double err = 1.0;
    char worst[256];
    T_CALL(hyper_physics(ctx, dim, &p, &ph));
    T_CALL(mf_physics_check_jacobian(ph, dim, 100, 0.3, &err, worst, sizeof worst));
    T_CHECK(err < 1e-7, "%dD Neo-Hookean: the Jacobian check gives %.3e (%s)", dim, err, worst);
    mf_physics_destroy(&ph);
  }
  /* a wrong g3: mu + lambda ln J instead of mu - lambda ln J */
  char *bad = strdup(hyper_source);
  char *at = strstr(bad, "a = mu - lambda * lnJ");
  T_CHECK(at != NULL, "the source's g3 has no term to break");
  if (at) at[7] = '+';
  mf_physics ph = NULL;
  double err = 0.0;
  T_CALL(mf_physics_create(ctx, 3, &ph));
  T_CALL(mf_physics_set_source(ph, bad, HYPER_FUNCTIONS));
  const double k[8] = {5.77, 3.85, 0, 0, 0, 0, 0, 0};
  T_CALL(mf_physics_set_constants(ph, 8, k));
  T_CALL(mf_physics_check_jacobian(ph, 3, 100, 0.3, &err, NULL, 0));
  T_CHECK(err > 1e-2, "a wrong g3 passes the Jacobian check (%.3e)", err);
  mf_physics_destroy(&ph);
  free(bad);
}

/* small loads: linear elasticity to O(eps^2) */
static void linear_limit_case(mf_context ctx)
{
  double e[2];
  const double eps[2] = {1e-2, 1e-3};
  for (int i = 0; i < 2; i++) {
    run_setup su = {"cube-tets", 4, 1, 1, 30, 1, 1e-12, 1e-12, eps[i], 0, 0, NULL};
    run_result nh = solve(ctx, &su, 1);
    su.gallery = 1;
    run_result li = solve(ctx, &su, 1);
    T_CHECK(nh.ierr == 0 && li.ierr == 0, "eps %g: Newton failed (%d, %d)", eps[i], nh.ierr, li.ierr);
    T_CHECK(li.newton == 1, "eps %g: linear elasticity took %d Newton steps, want 1", eps[i], li.newton);
    e[i] = l2_diff(&nh, &li) / (li.unorm / eps[i]); /* relative to the unit load's linear solution */
    free(nh.u), free(li.u);
  }
  const double ratio = e[1] / e[0];
  T_CHECK(ratio > 0.005 && ratio < 0.02, "small loads: ||u - u_lin|| %.3e at eps 1e-2, %.3e at 1e-3: ratio %.3e, want ~1e-2 (O(eps^2))",
          e[0], e[1], ratio);
}

/* the energy of the Newton iterates (k steps from the same start: the same iterates) and the quadratic convergence */
static void energy_case(mf_context ctx)
{
  double Pi[12];
  int steps = 0;
  for (int k = 0; k < 12; k++) {
    run_setup su = {"cube-tets", 4, 1, 1, k, 1, 1e-10, 1e-13, 1.0, 0, 1, NULL};
    run_result R = solve(ctx, &su, 0);
    Pi[k] = R.energy;
    steps = k;
    if (R.ierr == 0 && R.newton < k) break; /* converged before k steps: the iterates end */
    if (k > 0) T_CHECK(Pi[k] < Pi[k - 1], "the energy grew at Newton step %d: %.12e after %.12e", k, Pi[k], Pi[k - 1]);
  }
  T_CHECK(steps >= 3 && steps < 12, "Newton on the demonstration (4 cubes) took %d steps", steps);
  /* the step by the energy's slope (MF_NEWTON_CRITICAL) and the trust region (MF_NEWTON_TRUST_REGION): the energy
   * decreases at every step too, to the same end */
  for (int ls = MF_NEWTON_CRITICAL; ls <= MF_NEWTON_TRUST_REGION; ls++) {
    const char *name = ls == MF_NEWTON_CRITICAL ? "critical" : "trust region";
    double Pc = 0.0;
    int csteps = 0;
    for (int k = 0; k < 12; k++) {
      run_setup su = {"cube-tets", 4, 1, ls, k, 1, 1e-10, 1e-13, 1.0, 0, 1, NULL};
      run_result R = solve(ctx, &su, 0);
      csteps = k;
      if (R.ierr == 0 && R.newton < k) { /* converged before k steps: the iterates end */
        Pc = R.energy;
        break;
      }
      if (k > 0) T_CHECK(R.energy < Pc, "%s: the energy grew at Newton step %d: %.12e after %.12e", name, k, R.energy, Pc);
      Pc = R.energy;
    }
    T_CHECK(csteps >= 3 && csteps < 12 && fabs(Pc - Pi[steps]) <= 1e-10 * fabs(Pi[steps]),
            "%s: %d steps to the energy %.12e, backtracking's %.12e", name, csteps, Pc, Pi[steps]);
  }
  run_setup su = {"cube-tets", 4, 1, 1, 30, 1, 1e-12, 1e-13, 1.0, 0, 0, NULL};
  run_result R = solve(ctx, &su, 0);
  T_CHECK(R.ierr == 0, "Newton failed on the demonstration (%d)", R.ierr);
  /* the updates: order log(d_k+1 / d_k) / log(d_k / d_k-1) over the last three above 1e-11 */
  int last = R.nhist - 1;
  while (last > 2 && R.hist[last] < 1e-11) last--;
  if (last >= 3) {
    const double order = log(R.hist[last] / R.hist[last - 1]) / log(R.hist[last - 1] / R.hist[last - 2]);
    T_CHECK(order > 1.6, "Newton's updates %.3e, %.3e, %.3e: order %.2f, want quadratic", R.hist[last - 2], R.hist[last - 1],
            R.hist[last], order);
  } else T_CHECK(0, "too few Newton steps (%d) to see the order", R.nhist - 1);
}

/* the failure codes */
static void failure_case(mf_context ctx)
{
  /* an inverted element: the initial guess folded (F = diag(-1, 1, 1), J = -1) */
  double fold[9] = {-2, 0, 0, 0, 0, 0, 0, 0, 0};
  run_setup su = {"cube-tets", 2, 1, 1, 20, 1, 1e-10, 1e-10, 1.0, 0, 0, fold};
  run_result R = solve(ctx, &su, 0);
  T_CHECK(R.ierr == MF_ERR_ARGUMENT && R.reason == MF_NEWTON_STATE, "an inverted initial guess: error %d, reason %d", R.ierr,
          R.reason);
  const char *msg = mf_context_error_message(ctx);
  T_CHECK(strstr(msg, "must give finite values") && strstr(msg, "of cell") && strstr(msg, "x = ("),
          "an inverted initial guess: '%s'", msg);
  /* a load too large for full steps: the body force 160 times the demonstration's (the first full step inverts
   * elements; 80 times: the Jacobian after it is indefinite, the inner CG stops at the negative curvature and the
   * step so far inverts elements); the line search or four load steps converge */
  run_setup big = {"cube-tets", 4, 1, 0, 30, 1, 1e-10, 1e-10, 1.0, 0, 0, NULL, 160.0};
  R = solve(ctx, &big, 0);
  msg = mf_context_error_message(ctx);
  T_CHECK(R.ierr == MF_ERR_ARGUMENT && R.reason == MF_NEWTON_STATE && strstr(msg, "must give finite values") && strstr(msg, "of cell"),
          "B x 160 in full steps: error %d, reason %d, '%s' (want MF_NEWTON_STATE)", R.ierr, R.reason, msg);
  big.bscale = 80.0;
  R = solve(ctx, &big, 0);
  T_CHECK(R.negative >= 1 && R.ierr != 0, "B x 80 in full steps: %d steps met negative curvature (want >= 1), error %d",
          R.negative, R.ierr);
  big.bscale = 160.0, big.line_search = 1;
  R = solve(ctx, &big, 0);
  T_CHECK(R.ierr == 0, "B x 160 with the line search: error %d, reason %d", R.ierr, R.reason);

  big.line_search = MF_NEWTON_CRITICAL; /* the energy's slope: B x 160 and B x 80 converge in one load step */
  R = solve(ctx, &big, 0);
  T_CHECK(R.ierr == 0, "B x 160 by the energy's slope: error %d, reason %d", R.ierr, R.reason);
  big.bscale = 80.0;
  R = solve(ctx, &big, 0);
  T_CHECK(R.ierr == 0, "B x 80 by the energy's slope: error %d, reason %d", R.ierr, R.reason);
  big.line_search = MF_NEWTON_TRUST_REGION; /* the trust region: both in one load step (B x 160 in 32 steps: the
                                               region held near the cells' inversion), CG led along the negative
                                               curvature at B x 80 */
  big.max_steps = 50;
  R = solve(ctx, &big, 0);
  T_CHECK(R.ierr == 0 && R.negative >= 1, "B x 80 in a trust region: error %d, reason %d, %d steps, %d met negative "
          "curvature", R.ierr, R.reason, R.newton, R.negative);
  big.bscale = 160.0;
  R = solve(ctx, &big, 0);
  T_CHECK(R.ierr == 0, "B x 160 in a trust region: error %d, reason %d, %d steps", R.ierr, R.reason, R.newton);
  big.max_steps = 30;

  big.line_search = 0, big.loads = 4;
  R = solve(ctx, &big, 0);
  T_CHECK(R.ierr == 0 && R.newton > 4, "B x 160 in 4 load steps: error %d, reason %d, %d Newton steps", R.ierr, R.reason, R.newton);
}

/* An indefinite Jacobian (the state after one full step of B x 80, where the inner CG meets negative curvature): a
 * plain Chebyshev preconditioner of it is refused (its eigenvalue estimate meets p^T A p <= 0), multigrid at that
 * state sets up (its smoothers' estimates keep the steps before the negative curvature) and applies with finite
 * values */
static void indefinite_case(mf_context ctx)
{
  run_setup su = {"cube-tets", 4, 1, 0, 1, 1, 1e-10, 1e-10, 1.0, 0, 0, NULL, 80.0};
  run_result R = solve(ctx, &su, 1);
  const int trees[3] = {1, 1, 1};
  hyper_problem pr = hyper_demo();
  for (int k = 0; k < 3; k++) pr.B[k] *= 80.0;
  problem P = make_problem(ctx, "cube-tets", trees, 2, 1, &pr);
  const mf_space s = P.s;
  const mf_operator op = P.op;
  mf_vector u = NULL;
  mf_pc pc = NULL;
  T_CALL(mf_operator_set_dirichlet(op, 1));
  T_CALL(mf_vector_create(s, &u));
  T_CALL(mf_vector_set_values(u, R.u));
  T_CALL(mf_operator_set_state(op, u));
  T_CALL(mf_pc_create(op, MF_PC_CHEBYSHEV, &pc));
  int ierr = mf_pc_setup(pc);
  T_CHECK(ierr == MF_ERR_ARGUMENT && strstr(mf_context_error_message(ctx), "not positive definite"),
          "Chebyshev at an indefinite Jacobian: set-up error %d ('%s'), want MF_ERR_ARGUMENT (not positive definite)",
          ierr, ierr ? mf_context_error_message(ctx) : "");
  mf_pc_destroy(&pc);
  T_CALL(mf_pc_create(op, MF_PC_MULTIGRID, &pc));
  ierr = mf_pc_setup(pc);
  T_CHECK(ierr == 0, "multigrid at an indefinite Jacobian: set-up error %d ('%s')", ierr,
          ierr ? mf_context_error_message(ctx) : "");
  if (!ierr) {
    mf_vector r = NULL, z = NULL;
    double nz = 0.0;
    T_CALL(mf_vector_create(s, &r));
    T_CALL(mf_vector_create(s, &z));
    T_CALL(mf_vector_set_random(r, 3));
    T_CALL(mf_vector_zero_boundary(r));
    T_CALL(mf_pc_apply(pc, r, z));
    T_CALL(mf_vector_norm2(z, &nz));
    T_CHECK(isfinite(nz) && nz > 0.0, "multigrid at an indefinite Jacobian: ||M^-1 r|| = %g", nz);
    mf_vector_destroy(&r), mf_vector_destroy(&z);
  }
  mf_pc_destroy(&pc);
  /* Newton with a plain Chebyshev inside from there: MF_NEWTON_LINEAR, its message with the set-up's own */
  mf_newton nw = NULL;
  mf_newton_info info;
  T_CALL(mf_newton_create(op, &nw));
  T_CALL(mf_newton_set_linear(nw, MF_PC_CHEBYSHEV, 0, 1e-5, 1000));
  ierr = mf_newton_solve(nw, u, &info);
  const char *msg = mf_context_error_message(ctx);
  T_CHECK(ierr == MF_ERR_NOT_CONVERGED && info.reason == MF_NEWTON_LINEAR && strstr(msg, "set-up at step 1 failed") &&
              strstr(msg, "not positive definite"),
          "Newton with Chebyshev at an indefinite Jacobian: error %d, reason %d, '%s'", ierr, info.reason, msg);
  mf_newton_destroy(&nw);
  mf_vector_destroy(&u);
  free_problem(&P);
  free(R.u);
}

/* multigrid inside Newton (its levels at each state): the same solution as with Jacobi, CG iterations per Newton step
 * at most 10 and flat (+1.5 from one refinement to the next: 4 to 8 cubes in P1, 2 to 4 in P2) */
static void multigrid_case(mf_context ctx)
{
  for (int p = 1; p <= 2; p++) {
    double per[3] = {0, 0, 0};
    const int n = p == 1 ? 3 : 2;
    for (int i = 0; i < n; i++) {
      const int cubes = 2 << i;
      run_setup su = {"cube-tets", cubes, p, 1, 30, 1, 1e-5, 1e-11, 1.0, 0, 0, NULL, 0.0, 1};
      run_result m = solve(ctx, &su, 1);
      su.mg = 0;
      run_result j = solve(ctx, &su, 1);
      T_CHECK(m.ierr == 0 && j.ierr == 0, "P%d %d cubes: Newton with multigrid error %d, with Jacobi %d", p, cubes, m.ierr,
              j.ierr);
      const double d = max_rel(&m, &j);
      T_CHECK(d < 1e-7, "P%d %d cubes: the solutions with multigrid and Jacobi differ by %.3e", p, cubes, d);
      per[i] = m.newton ? (double)m.cg / m.newton : 0.0;
      T_CHECK(per[i] > 0 && per[i] <= 10.0 && m.cg < j.cg, "P%d %d cubes: %.1f CG iterations per Newton step with multigrid (%d in all; Jacobi %d)",
              p, cubes, per[i], m.cg, j.cg);
      if (i == n - 1) { /* the preconditioner lagged: kept at some steps, the same Newton steps and solution */
        su.mg = 1, su.pc_lag = 0.05;
        run_result l = solve(ctx, &su, 1);
        const double dl = l.ierr ? 1.0 : max_rel(&l, &m);
        T_CHECK(l.ierr == 0 && l.kept >= 1 && l.kept < l.newton && abs(l.newton - m.newton) <= 1 && l.cg <= m.cg + l.newton &&
                    dl < 1e-7,
                "P%d %d cubes, multigrid lagged by 0.05: error %d, %d of %d Newton steps kept the set-up (%d without a "
                "lag), %d CG iterations (%d), the solutions differ by %.3e",
                p, cubes, l.ierr, l.kept, l.newton, m.newton, l.cg, m.cg, dl);
        free(l.u);
      }
      free(m.u), free(j.u);
    }
    T_CHECK(per[n - 1] <= per[n - 2] + 1.5, "P%d: CG iterations per Newton step with multigrid grow: %.1f, then %.1f", p,
            per[n - 2], per[n - 1]);
  }
}

/* 2 ranks against rank 0 alone (on ctx's backend) */
static void ranks_case(mf_context ctx)
{
  int rank = 0, size = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  const char *meshes[2] = {"cube-tets", "cube"};
  for (int i = 0; i < 2; i++) {
    run_setup su = {meshes[i], 4, 1, 1, 30, 1, 1e-10, 1e-11, 1.0, 0, 0, NULL};
    run_result all = solve(ctx, &su, 0), one;
    memset(&one, 0, sizeof one);
    if (rank == 0) {
      mf_context self = NULL;
      T_CALL(mf_context_create(MPI_COMM_SELF, mf_context_backend(ctx), &self));
      one = solve(self, &su, 0);
      mf_context_destroy(&self);
    }
    MPI_Bcast(&one, (int)sizeof one, MPI_BYTE, 0, MPI_COMM_WORLD);
    T_CHECK(all.ierr == 0 && one.ierr == 0, "%s on %d ranks: error %d, alone %d", meshes[i], size, all.ierr, one.ierr);
    T_CHECK(all.newton == one.newton && abs(all.cg - one.cg) <= all.newton, "%s: %d ranks %d Newton / %d CG, one rank %d / %d",
            meshes[i], size, all.newton, all.cg, one.newton, one.cg);
    T_CHECK(fabs(all.unorm - one.unorm) <= 1e-10 * one.unorm, "%s: ||u|| %.15e on %d ranks, %.15e alone", meshes[i],
            all.unorm, size, one.unorm);
  }
}

/* the assembled Jacobian at a state (mf_operator_create_assembled of the operator after mf_operator_set_state)
 * against the matrix-free one: A x = J(u) x to 1e-12 for a random x, P1, P2, Q1 and Q2, at a smooth deformation */
static void assembled_case(mf_context ctx)
{
  for (int m = 0; m < 2; m++)
    for (int p = 1; p <= 2; p++) {
      const int trees[3] = {2, 2, 2};
      hyper_problem pr = hyper_demo();
      problem P = make_problem(ctx, m ? "cube" : "cube-tets", trees, 0, p, &pr);
      const mf_space s = P.s;
      const mf_operator op = P.op;
      mf_operator A = NULL;
      mf_vector u = NULL, x = NULL, y1 = NULL, y2 = NULL;
      T_CALL(mf_vector_create(s, &u));
      T_CALL(mf_vector_create(s, &x));
      T_CALL(mf_vector_create(s, &y1));
      T_CALL(mf_vector_create(s, &y2));
      const double unit[3] = {1.0, pr.twist_scale, pr.twist_angle};
      T_CALL(mf_vector_interpolate_field(u, hyper_lift, (void *)unit));
      T_CALL(mf_operator_set_state(op, u));
      T_CALL(mf_operator_create_assembled(op, &A));
      T_CALL(mf_vector_set_random(x, 7));
      T_CALL(mf_operator_apply(op, x, y1));
      if (A) T_CALL(mf_operator_apply(A, x, y2));
      double d = 0.0, n = 0.0;
      T_CALL(mf_vector_norm2(y1, &n));
      T_CALL(mf_vector_axpy(y2, -1.0, y1));
      T_CALL(mf_vector_norm2(y2, &d));
      T_CHECK(d <= 1e-12 * n, "%s%d on %s: the assembled Jacobian at a state differs from the matrix-free one by %.3e (of "
              "%.3e)", m ? "Q" : "P", p, mf_context_backend(ctx), d, n);
      mf_vector_destroy(&u), mf_vector_destroy(&x), mf_vector_destroy(&y1), mf_vector_destroy(&y2);
      mf_operator_destroy(&A);
      free_problem(&P);
    }
  /* Newton on the assembled Jacobian: the matrix-free run's steps and solution (1e-8); multigrid refused there */
  for (int k = 0; k < 4; k++) {
    const int p = 1 + k % 2;
    run_setup su = {k < 2 ? "cube-tets" : "cube", p == 1 ? 4 : 2, p, 1, 30, 1, 1e-10, 1e-11, 1.0, 0, 0, NULL, 0.0, 0, 1};
    run_result a = solve(ctx, &su, 1);
    su.assembled = 0;
    run_result m = solve(ctx, &su, 1);
    const double d = max_rel(&a, &m);
    T_CHECK(a.ierr == 0 && m.ierr == 0 && a.newton == m.newton && d < 1e-8,
            "%s%d on %s: Newton assembled error %d, %d steps; matrix-free %d, %d steps; solutions differ by %.3e",
            k < 2 ? "P" : "Q", p, mf_context_backend(ctx), a.ierr, a.newton, m.ierr, m.newton, d);
    free(a.u), free(m.u);
  }
}

/* the largest difference of two arrays relative to the largest entry of the second */
static double arr_rel(const double *a, const double *b, int n)
{
  double d = 0.0, m = 0.0;
  for (int i = 0; i < n; i++) {
    d = fmax(d, fabs(a[i] - b[i]));
    m = fmax(m, fabs(b[i]));
  }
  return m > 0.0 ? d / m : d;
}

/* The Jacobian at one state on both backends, Q2 hexahedra, 16 cubes (multigrid: Q2, Q1 and three coarser meshes):
 * J x, its diagonal, multigrid's M^-1 r (the levels at the injected state, the smoothers' estimates) and, at the
 * first state, one Chebyshev's on cuda equal the cpu's: J x and the diagonal to 1e-12, M^-1 r to 1e-9. The states: a
 * quarter of the smooth lifting of the twist (a positive definite Jacobian), the lifting itself (indefinite here: a plain
 * Chebyshev's estimate meets negative curvature; multigrid's smoothers stop there) and the Dirichlet values with 0
 * inside. */
static void state_pc_case(mf_context cpu, mf_context gpu)
{
  const int trees[3] = {2, 2, 2};
  hyper_problem pr = hyper_demo();
  const double unit[3] = {1.0, pr.twist_scale, pr.twist_angle};
  for (int st = 0; st < 3; st++) {
    double *val[2][5] = {{NULL}}; /* per backend: u, J x, diag, multigrid's M^-1 r, Chebyshev's (the lifting) */
    int n = 0, nl = 0;
    for (int b = 0; b < 2; b++) {
      mf_context ctx = b ? gpu : cpu;
      problem P = make_problem(ctx, "cube", trees, 3, 2, &pr); /* 16 cubes */
      mf_vector u = NULL, x = NULL, y = NULL, d = NULL, z = NULL, c = NULL;
      mf_pc pc = NULL;
      T_CALL(mf_operator_set_dirichlet(P.op, 1));
      T_CALL(mf_vector_create(P.s, &u));
      T_CALL(mf_vector_create(P.s, &x));
      T_CALL(mf_vector_create(P.s, &y));
      T_CALL(mf_vector_create(P.s, &d));
      T_CALL(mf_vector_create(P.s, &z));
      T_CALL(mf_vector_create(P.s, &c));
      if (st < 2) T_CALL(mf_vector_interpolate_field(u, hyper_lift, (void *)unit));
      else T_CALL(mf_vector_set_boundary_field(u, hyper_twist, (void *)unit));
      if (st == 0) T_CALL(mf_vector_scale(u, 0.25));
      T_CALL(mf_operator_set_state(P.op, u));
      T_CALL(mf_vector_set_random(x, 5));
      T_CALL(mf_vector_zero_boundary(x));
      T_CALL(mf_operator_apply(P.op, x, y));
      T_CALL(mf_operator_diagonal(P.op, d));
      T_CALL(mf_pc_create(P.op, MF_PC_MULTIGRID, &pc));
      T_CALL(mf_pc_set_multigrid(pc, 2, 15.0, 1e-3));
      int ierr = mf_pc_setup(pc);
      T_CHECK(ierr == 0, "Q2 state %d on %s: multigrid set-up error %d ('%s')", st, mf_context_backend(ctx), ierr,
              ierr ? mf_context_error_message(ctx) : "");
      if (!ierr) T_CALL(mf_pc_apply(pc, x, z));
      mf_pc_destroy(&pc);
      if (st == 0) { /* one level: Chebyshev(2) with its own estimate (the Jacobian positive definite there) */
        T_CALL(mf_pc_create(P.op, MF_PC_CHEBYSHEV, &pc));
        T_CALL(mf_pc_set_chebyshev(pc, 2, 15.0, 12));
        T_CALL(mf_pc_apply(pc, x, c));
      }
      T_CALL(mf_space_local_sizes(P.s, &n, &nl));
      mf_vector v[5] = {u, y, d, z, c};
      for (int k = 0; k < 5; k++) {
        val[b][k] = calloc((size_t)n + 1, sizeof(double));
        T_CALL(mf_vector_get_values(v[k], val[b][k]));
      }
      mf_pc_destroy(&pc);
      mf_vector_destroy(&u), mf_vector_destroy(&x), mf_vector_destroy(&y), mf_vector_destroy(&d), mf_vector_destroy(&z);
      mf_vector_destroy(&c);
      free_problem(&P);
    }
    const char *what[5] = {"the state u", "J x", "the diagonal", "multigrid's M^-1 r", "Chebyshev's M^-1 r"};
    const double tol[5] = {1e-14, 1e-12, 1e-12, 1e-9, 1e-9};
    for (int k = 0; k < 5; k++) {
      const double e = arr_rel(val[1][k], val[0][k], n);
      T_CHECK(e <= tol[k], "Q2 at %s: %s on cuda differs from the cpu's by %.3e (relative; at most %g)",
              st == 0 ? "a quarter of the lifting" : st == 1 ? "the lifting" : "the Dirichlet values", what[k], e, tol[k]);
      free(val[0][k]), free(val[1][k]);
    }
  }
}

/* cpu = cuda, stored and fused, tetrahedra (P1, P2) and hexahedra (Q1, Q2), with Jacobi and (hexahedra) multigrid */
static void cuda_case(mf_context cpu, mf_context gpu)
{
  for (int m = 0; m < 2; m++)
    for (int mg = 0; mg <= m; mg++)
      for (int p = 1; p <= 2; p++)
        for (int fused = 0; fused <= 1; fused++) {
          setenv("MFREE_PHYSICS_FUSED", fused ? "1" : "0", 1);
          run_setup su = {m ? "cube" : "cube-tets", p == 1 ? 4 : 2, p, 1, 30, 1, 1e-10, 1e-11, 1.0, 0, 0, NULL, 0.0, mg};
          run_result a = solve(cpu, &su, 1), b = solve(gpu, &su, 1);
          const char *k = m ? "Q" : "P", *pc = mg ? "multigrid" : "Jacobi";
          T_CHECK(a.ierr == 0 && b.ierr == 0, "%s%d fused %d, %s: cpu error %d, cuda %d", k, p, fused, pc, a.ierr, b.ierr);
          T_CHECK(a.newton == b.newton && abs(a.cg - b.cg) <= a.newton, "%s%d fused %d, %s: Newton steps (CG) cpu %d (%d), "
                  "cuda %d (%d)", k, p, fused, pc, a.newton, a.cg, b.newton, b.cg);
          const double d = max_rel(&b, &a);
          T_CHECK(d < 1e-8, "%s%d fused %d, %s: the cuda solution differs by %.3e (relative)", k, p, fused, pc, d);
          free(a.u), free(b.u);
        }
  unsetenv("MFREE_PHYSICS_FUSED");
}

int main(int argc, char **argv)
{
  MPI_Init(&argc, &argv);
  mf_context ctx = NULL;
  T_CALL(mf_context_create(MPI_COMM_WORLD, "cpu", &ctx));
  int size = 1;
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  if (argc > 1 && !strcmp(argv[1], "cuda")) {
    t_need_cuda();
    mf_context gpu = NULL;
    T_CALL(mf_context_create(MPI_COMM_WORLD, "cuda", &gpu));
    if (size > 1) ranks_case(gpu); /* NP 2: the state's rule and checks agreed over the ranks */
    else {
      state_pc_case(ctx, gpu);
      cuda_case(ctx, gpu);
      assembled_case(gpu);
      setenv("MFREE_PHYSICS_FUSED", "0", 1); /* the stored data at the state */
      assembled_case(gpu);
      unsetenv("MFREE_PHYSICS_FUSED");
    }
    mf_context_destroy(&gpu);
  } else if (size > 1) ranks_case(ctx);
  else {
    jacobian_case(ctx);
    linear_limit_case(ctx);
    energy_case(ctx);
    failure_case(ctx);
    indefinite_case(ctx);
    multigrid_case(ctx);
    assembled_case(ctx);
  }
  mf_context_destroy(&ctx);
  return t_finish();
}
