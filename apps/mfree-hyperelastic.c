/* mfree-hyperelastic -- the Neo-Hookean hyperelasticity of the FEniCS demonstration (apps/hyperelastic.h) solved by
 * Newton's method (mf_newton) with matrix-free CG inside: the unit cube in N^3 cubes of 6 tetrahedra (P1, P2) or of
 * hexahedra (Q1, Q2), or a Gmsh file; load stepping; Newton and CG iterations, the time of every phase and the
 * Mdof/s per CG iteration as text and, with --json, one JSON object; --vtu the displacement (ParaView's "Warp By
 * Vector" draws the deformed body). Options are checked before anything runs (options.h). */
#include <stdlib.h>
#include <unistd.h>

#include "hyperelastic.h"
#include "options.h"

static void usage(FILE *f)
{
  fprintf(f,
          "usage: mfree-hyperelastic [options]\n"
          "  --mesh M           cube-tets (tetrahedra, 6 per cube) | cube (hexahedra) | FILE.msh (tetrahedra; its\n"
          "                     boundary tags 1 and 2 clamped and twisted, 3..6 the traction) (default cube-tets)\n"
          "  --cubes N          cubes per side of the unit cube, 1..256 (default 8); the mesh is made as N / 2^r\n"
          "                     cubes per side refined r times (r the largest of 0..3 with 2^r dividing N), so that\n"
          "                     multigrid has r + 1 levels of cells\n"
          "  --refine R         a mesh file refined R times, 0..8 (default 0)\n"
          "  --degree P         1 or 2: P1/P2 tetrahedra, Q1/Q2 hexahedra (default 1)\n"
          "  --quadrature Q     2p | 2p-2: tetrahedra's rule of degree 2p, or 2p - 2 (exact where F is constant in a\n"
          "                     cell: one point per P1 cell) (default 2p-2 for P1, 2p for P2; hexahedra: p + 1 Gauss)\n"
          "  --initial I        linear | lift | boundary: each load step's initial guess from the tangent at the last\n"
          "                     one's solution with the load's increment (a linearised step: from u = 0 linear\n"
          "                     elasticity), x times the twist, or the Dirichlet values with 0 inside (default\n"
          "                     linear; docs/nonlinear.md)\n"
          "  --backend B        cpu | cuda | auto (default auto)\n"
          "  --pc P             the inner CG's preconditioner: jacobi | mg | none (default jacobi)\n"
          "  --method M         mf | assembled: the Jacobian matrix-free, or assembled (CSR) at every Newton step (with\n"
          "                     --pc jacobi or none; the predictor stays matrix-free) (default mf)\n"
          "  --cg-tol T         the inner CG's relative tolerance, fixed (default 1e-5, as the FEniCS study)\n"
          "  --ew               Eisenstat-Walker forcing from 0.5 instead of the fixed --cg-tol\n"
          "  --cg-max N         CG iterations per Newton step at most (default 100000)\n"
          "  --mg-degree D      with --pc mg: the smoothers' Chebyshev degree, 1..64 (default 4)\n"
          "  --newton-stol S    converged when the update's ||du||_2 <= S (default 1e-12, the FEniCS study's)\n"
          "  --newton-rtol R    or when ||F(u)||_2 <= R ||F(u0)||_2 (default 0: off)\n"
          "  --newton-max N     Newton steps per load step at most (default 50)\n"
          "  --pc-lag TAU       keep the inner preconditioner's set-up of an earlier Newton step while the state\n"
          "                     moved by at most TAU ||u|| since, 0 <= TAU < 1 (default 0: a set-up every step)\n"
          "  --load-steps S     the loads (B, T and the twist) in S equal increments (default 1)\n"
          "  --load-cuts K      a load step whose Newton solve fails (or whose predictor inverts a cell) is taken\n"
          "                     again from the last converged load with half the increment, K times at most in\n"
          "                     all (default 0: the run stops there)\n"
          "  --line-search L    off | backtrack | admissible | critical | trust: full Newton steps; the step halved\n"
          "                     until ||F|| decreases enough (default); halved only until F is finite (no\n"
          "                     inverted cell), then taken; shortened until the energy's slope along it,\n"
          "                     negative at the start, is at most half that size above zero; or a trust region\n"
          "                     (Steihaug's CG; with --pc jacobi, mg or none) (docs/nonlinear.md)\n"
          "  --no-line-search   the same as --line-search off\n"
          "  --E E, --nu NU     Young's modulus (default 10) and Poisson's ratio (default 0.3)\n"
          "  --load-scale S     B, T and the twist's displacement times S (default 1: the demonstration's)\n"
          "  --check-jacobian   compare the physics' g3 with finite differences of f1 first (exit 1 where the\n"
          "                     largest relative difference exceeds 1e-6)\n"
          "  --json FILE        the summary as one JSON object\n"
          "  --vtu PREFIX       the displacement for ParaView (PREFIX.pvtu, PREFIX_<rank>.vtu)\n"
          "  --verbose          every Newton step on stderr\n"
          "  --help             this text\n"
          "Exit status: 0 solved, 1 the run failed, 2 a bad option, 3 Newton did not converge.\n");
}

typedef struct {
  int verbose, rank, load, nloads; /* nloads 0 (with --load-cuts): the step named by its load fraction, frac */
  double t0, frac;
} mon_data;

/* "load 2/4", or with --load-cuts (the steps' number not known ahead) "load 2 (to 0.5)" */
static const char *load_name(const mon_data *m, char *buf, size_t n)
{
  if (m->nloads > 0) snprintf(buf, n, "load %d/%d", m->load, m->nloads);
  else snprintf(buf, n, "load %d (to %.6g)", m->load, m->frac);
  return buf;
}

/* the multigrid smoothers' Chebyshev degree of Newton's inner preconditioner (the defaults' range and coarse
 * reduction) */
static int set_mg_degree(mf_newton nw, int degree)
{
  mf_pc pc = NULL;
  if (mf_newton_get_pc(nw, &pc)) return 1;
  return mf_pc_set_multigrid(pc, degree, 15.0, 1e-3);
}

static int monitor(int step, double res, double upd, int lin, void *user)
{
  const mon_data *m = (const mon_data *)user;
  if (m->verbose && m->rank == 0) {
    char name[64];
    fprintf(stderr, "mfree-hyperelastic: [%.2f s] %s Newton %d: ||F|| %.3e ||du|| %.3e CG %d\n", MPI_Wtime() - m->t0,
            load_name(m, name, sizeof name), step, res, upd, lin);
  }
  return 0;
}

static int fail(mf_context ctx, const char *what)
{
  fprintf(stderr, "mfree-hyperelastic: %s failed: %s\n", what, ctx ? mf_context_error_message(ctx) : mf_last_error_message());
  return 1;
}

int main(int argc, char **argv)
{
  static const char *const backends[] = {"auto", "cpu", "cuda"}, *const pcs[] = {"jacobi", "mg", "none"};
  static const mf_pc_kind pc_kinds[] = {MF_PC_JACOBI, MF_PC_MULTIGRID, MF_PC_NONE};
  const char *mesh_arg = "cube-tets", *json = NULL, *vtu = NULL;
  int cubes = 8, refine = 0, degree = 1, backend_i = 0, pc_i = 0, ew = 0, cg_max = 100000, newton_max = 50, mg_degree = -1;
  int loads = 1, load_cuts = 0, line_search = 1, check = 0, verbose = 0, given_refine = 0, quad_i = -1, init_i = 0, method_i = 0;
  static const char *const methods[] = {"mf", "assembled"};
  static const char *const searches[] = {"off", "backtrack", "admissible", "critical", "trust"}; /* MF_NEWTON_FULL_STEPS .. _TRUST_REGION */
  static const char *const quads[] = {"2p", "2p-2"}, *const inits[] = {"linear", "lift", "boundary"};
  double cg_tol = 1e-5, stol = 1e-12, rtol = 0.0, load_scale = 1.0, pc_lag = 0.0;
  hyper_problem prob = hyper_demo();
  opt_parser P;
  opt_init(&P, "mfree-hyperelastic", argc, argv);
  while (opt_next(&P)) {
    if (opt_is(&P, "--help")) {
      usage(stdout);
      return 0;
    } else if (opt_is(&P, "--mesh")) opt_string(&P, &mesh_arg);
    else if (opt_is(&P, "--cubes")) opt_int(&P, 1, 256, &cubes);
    else if (opt_is(&P, "--refine")) opt_int(&P, 0, 8, &refine), given_refine = 1;
    else if (opt_is(&P, "--degree")) opt_int(&P, 1, 2, &degree);
    else if (opt_is(&P, "--backend")) opt_choice(&P, backends, 3, &backend_i);
    else if (opt_is(&P, "--quadrature")) opt_choice(&P, quads, 2, &quad_i);
    else if (opt_is(&P, "--method")) opt_choice(&P, methods, 2, &method_i);
    else if (opt_is(&P, "--initial")) opt_choice(&P, inits, 3, &init_i);
    else if (opt_is(&P, "--pc")) opt_choice(&P, pcs, 3, &pc_i);
    else if (opt_is(&P, "--cg-tol")) opt_double(&P, 0.0, 1, 1.0, 1, &cg_tol);
    else if (opt_is(&P, "--ew")) ew = 1;
    else if (opt_is(&P, "--cg-max")) opt_int(&P, 1, 100000000, &cg_max);
    else if (opt_is(&P, "--mg-degree")) opt_int(&P, 1, 64, &mg_degree);
    else if (opt_is(&P, "--newton-stol")) opt_double(&P, 0.0, 0, 1.0, 1, &stol);
    else if (opt_is(&P, "--newton-rtol")) opt_double(&P, 0.0, 0, 1.0, 1, &rtol);
    else if (opt_is(&P, "--newton-max")) opt_int(&P, 1, 1000, &newton_max);
    else if (opt_is(&P, "--pc-lag")) opt_double(&P, 0.0, 0, 1.0, 1, &pc_lag);
    else if (opt_is(&P, "--load-steps")) opt_int(&P, 1, 1000, &loads);
    else if (opt_is(&P, "--load-cuts")) opt_int(&P, 0, 30, &load_cuts);
    else if (opt_is(&P, "--no-line-search")) line_search = 0;
    else if (opt_is(&P, "--line-search")) opt_choice(&P, searches, 5, &line_search);
    else if (opt_is(&P, "--E")) opt_double(&P, 0.0, 1, 1e300, 0, &prob.E);
    else if (opt_is(&P, "--nu")) opt_double(&P, -1.0, 1, 0.5, 1, &prob.nu);
    else if (opt_is(&P, "--load-scale")) opt_double(&P, 0.0, 0, 1e6, 0, &load_scale);
    else if (opt_is(&P, "--check-jacobian")) check = 1;
    else if (opt_is(&P, "--json")) opt_string(&P, &json);
    else if (opt_is(&P, "--vtu")) opt_string(&P, &vtu);
    else if (opt_is(&P, "--verbose")) verbose = 1;
    else opt_unknown(&P);
  }
  const int hex = !strcmp(mesh_arg, "cube"), box = hex || !strcmp(mesh_arg, "cube-tets");
  if (!P.bad && !box && (strlen(mesh_arg) < 5 || strcmp(mesh_arg + strlen(mesh_arg) - 4, ".msh")))
    opt_error(&P, "option --mesh: '%s' is not cube-tets, cube or a .msh file", mesh_arg);
  if (!P.bad && box && given_refine) opt_error(&P, "option --refine applies to a mesh file (--mesh %s: --cubes)", mesh_arg);
  if (!P.bad && hex && quad_i == 1) opt_error(&P, "option --quadrature 2p-2 is for tetrahedra (--mesh %s)", mesh_arg);
  if (quad_i < 0) quad_i = !hex && degree == 1 ? 1 : 0;
  if (!P.bad && mg_degree > 0 && pc_i != 1) opt_error(&P, "option --mg-degree applies to --pc mg");
  if (!P.bad && pc_lag > 0.0 && (pc_i == 2 || method_i == 1))
    opt_error(&P, "option --pc-lag applies to --pc jacobi or mg with --method mf");
  if (mg_degree < 0) mg_degree = 4;
  if (!P.bad && method_i && pc_i == 1) opt_error(&P, "option --method assembled needs --pc jacobi or none (not 'mg')");
  if (!P.bad && stol == 0.0 && rtol == 0.0) opt_error(&P, "options --newton-stol and --newton-rtol are both 0: no criterion");
  if (P.bad) return 2;
  for (int k = 0; k < 3; k++) prob.B[k] *= load_scale, prob.T[k] *= load_scale;
  prob.twist_scale *= load_scale;
  FILE *jf = NULL;
  if (json && !P.quiet && !(jf = fopen(json, "w"))) { /* the launcher's first process writes it */
    fprintf(stderr, "mfree-hyperelastic: option --json: cannot open '%s' for writing\n", json);
    return 2;
  }

  MPI_Init(&argc, &argv);
  const double t0 = MPI_Wtime();
  mf_context ctx = NULL;
  mf_mesh mesh = NULL;
  mf_space space = NULL;
  mf_physics ph = NULL;
  mf_operator op = NULL;
  mf_vector u = NULL, g = NULL, b = NULL, zero = NULL, w = NULL, rhs = NULL, F00 = NULL, usave = NULL;
  mf_cg pcg = NULL;
  mf_pc ppc = NULL;
  int pred_its = 0;
  double t_pred = 0.0;
  mf_newton nw = NULL;
  int rc = 0, rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  if (mf_context_create(MPI_COMM_WORLD, backends[backend_i], &ctx)) {
    rc = fail(ctx, "mf_context_create");
    goto done;
  }
  const int dim = 3;
  double jac_err = -1.0;
  char worst[256] = "";
  if (check) { /* the physics' g3 against its f1, at random deformations of size 0.3 */
    mf_physics chk = NULL;
    if (hyper_physics(ctx, dim, &prob, &chk) || mf_physics_check_jacobian(chk, dim, 200, 0.3, &jac_err, worst, sizeof worst)) {
      mf_physics_destroy(&chk);
      rc = fail(ctx, "the Jacobian check");
      goto done;
    }
    mf_physics_destroy(&chk);
    if (rank == 0) printf("Jacobian check: largest relative difference %.3e (%s)\n", jac_err, worst);
    if (!(jac_err <= 1e-6)) {
      fprintf(stderr, "mfree-hyperelastic: the Jacobian check failed: %.3e > 1e-6 (%s)\n", jac_err, worst);
      rc = 1;
      goto done;
    }
  }
  int r = 0; /* the box's refinements: N = c 2^r */
  while (box && r < 3 && cubes % (2 << r) == 0) r++;
  const int c = cubes >> r, trees[3] = {c, c, c};
  int ierr = box ? mf_mesh_create_box(ctx, hex ? "cube" : "cube-tets", dim, trees, r, &mesh)
                 : mf_mesh_create_from_file(ctx, mesh_arg, dim, &mesh);
  if (!ierr && !box && refine > 0) {
    mf_mesh fine = NULL;
    ierr = mf_mesh_refine(mesh, refine, &fine);
    mf_mesh_destroy(&mesh);
    mesh = fine;
  }
  if (ierr) {
    rc = fail(ctx, "the mesh");
    goto done;
  }
  const int clamp[2] = {1, 2};
  int64_t ndofs = 0;
  if (mf_space_create_components(mesh, degree, dim, &space) || mf_space_set_dirichlet_tags(space, 2, clamp) ||
      mf_space_num_dofs(space, &ndofs)) {
    rc = fail(ctx, "the space");
    goto done;
  }
  if (hyper_physics(ctx, dim, &prob, &ph) ||
      mf_operator_create_physics(space, ph, quad_i ? MF_QUAD_GAUSS_M2 : MF_QUAD_GAUSS, &op)) {
    rc = fail(ctx, "the operator");
    goto done;
  }
  if (mf_vector_create(space, &u) || mf_vector_create(space, &g) || mf_vector_create(space, &b) ||
      mf_vector_create(space, &zero) || mf_vector_create(space, &w) || mf_vector_create(space, &rhs) ||
      mf_operator_set_dirichlet(op, 1) || mf_operator_residual(op, zero, b)) {
    rc = fail(ctx, "the vectors and the loads F(0)");
    goto done;
  }
  mon_data md = {verbose, rank, 0, load_cuts ? 0 : loads, t0, 0.0};
  if (mf_newton_create(op, &nw) || mf_newton_set_tolerances(nw, rtol, 0.0, stol, newton_max) ||
      mf_newton_set_linear(nw, pc_kinds[pc_i], ew, ew ? 0.5 : cg_tol, cg_max) ||
      mf_newton_set_line_search(nw, line_search) || mf_newton_set_monitor(nw, monitor, &md) ||
      mf_newton_set_pc_lag(nw, pc_lag) ||
      mf_newton_set_assembled(nw, method_i) || (pc_i == 1 && set_mg_degree(nw, mg_degree))) {
    rc = fail(ctx, "the Newton solver");
    goto done;
  }
  const double t_setup = MPI_Wtime() - t0;
  double phases[MF_PHASE_COUNT] = {0};
  mf_context_phase_times(ctx, phases); /* the set-up's phases (the library's steps) */
  if (verbose && rank == 0) {
    fprintf(stderr, "mfree-hyperelastic: [%.2f s] set up: %lld DoFs, %s; phases:", t_setup, (long long)ndofs, mesh_arg);
    for (int k = 0; k < MF_PHASE_COUNT; k++)
      if (phases[k] > 0.0) fprintf(stderr, " %s %.3f s", mf_phase_name((mf_phase)k), phases[k]);
    fprintf(stderr, "\n");
  }
  mf_newton_info tot, step;
  memset(&tot, 0, sizeof tot);
  /* b = (1 - s) F(0) for the load fraction s, scaled from the last step's (bnow); with --load-cuts F(0) and the last
   * converged state kept (F00, usave) to take a failed step again with half its increment */
  double bnow = 1.0;
  long long den = loads, at = 0, du_n = 1; /* the loads in units of 1/den: at converged, du_n the increment (exact:
                                              s/loads without cuts, den doubled at each cut) */
  int attempts = 0, cuts_used = 0;
  const double unit[3] = {1.0, prob.twist_scale, prob.twist_angle};
  ierr = init_i < 2 ? mf_vector_interpolate_field(g, hyper_lift, (void *)unit) /* g: the full load's lifting */
                    : mf_vector_set_boundary_field(g, hyper_twist, (void *)unit);
  if (!ierr && init_i == 0) { /* the predictor's CG, with the inner solves' preconditioner */
    ierr = mf_cg_create(op, &pcg);
    if (!ierr) ierr = mf_cg_set_tolerance(pcg, ew ? 0.5 : cg_tol, cg_max);
    /* Newton's own preconditioner (held by it): one multigrid hierarchy, its levels taken to each new state */
    if (!ierr) ierr = mf_newton_get_pc(nw, &ppc);
    if (!ierr) ierr = mf_cg_set_pc(pcg, ppc);
  }
  if (!ierr && load_cuts > 0) {
    ierr = mf_vector_create(space, &F00);
    if (!ierr) ierr = mf_vector_create(space, &usave);
    if (!ierr) ierr = mf_vector_copy(F00, b);
  }
  if (ierr) rc = fail(ctx, "the initial guess");
  for (int s = 1; at < den && !rc; s++) {
    const long long to = at + du_n < den ? at + du_n : den;
    const double from = (double)at / (double)den, frac = (double)to / (double)den, inc = (double)(to - at) / (double)den;
    md.load = s, md.frac = frac;
    attempts++;
    mf_newton_info *in = &step;
    if (F00) { /* this step's b, and the state to go back to */
      ierr = mf_vector_copy(b, F00);
      if (!ierr) ierr = mf_vector_scale(b, 1.0 - frac);
      if (!ierr) ierr = mf_vector_copy(usave, u);
    } else ierr = mf_vector_scale(b, bnow > 0.0 ? (1.0 - frac) / bnow : 0.0);
    bnow = 1.0 - frac;
    if (ierr) {
      rc = fail(ctx, "the load step");
      break;
    }
    if (init_i == 2) { /* the Dirichlet values at this load, the inside as it is */
      ierr = mf_vector_zero_boundary(u);
      if (!ierr) ierr = mf_vector_axpy(u, frac, g);
    } else if (init_i == 1) ierr = mf_vector_axpy(u, inc, g); /* the lifting's increment */
    else { /* the linearised step: J(u) w = -(F(u) - b_s) - J(u) dg, dg the boundary values' increment, u += dg + w */
      const double tp = MPI_Wtime();
      mf_cg_info ci;
      memset(&ci, 0, sizeof ci);
      ierr = mf_operator_set_state(op, u);
      if (!ierr) ierr = mf_operator_residual(op, u, rhs);
      if (!ierr) ierr = mf_vector_axpy(rhs, -1.0, b);
      if (!ierr) ierr = mf_operator_set_dirichlet(op, 0); /* J(u) dg whole, the boundary columns included */
      if (!ierr) ierr = mf_operator_apply(op, g, w);
      if (!ierr) ierr = mf_operator_set_dirichlet(op, 1);
      if (!ierr) ierr = mf_vector_axpy(rhs, inc, w);
      if (!ierr) ierr = mf_vector_scale(rhs, -1.0);
      if (!ierr) ierr = mf_vector_zero_boundary(rhs);
      if (!ierr) ierr = mf_vector_set_value(w, 0.0);
      if (!ierr) ierr = mf_cg_solve(pcg, rhs, w, &ci);
      if (!ierr && !ci.converged)
        fprintf(stderr, "mfree-hyperelastic: load step %d: the predictor's CG stopped short (%d iterations)\n", s,
                ci.iterations);
      if (!ierr) ierr = mf_vector_axpy(u, inc, g);
      /* backtracking towards the smooth lifting where the linearised step leaves a cell inverted (F not finite):
       * u + lambda w, lambda = 1, 1/2, ..., 1/2^10 (the linear step of large rotations at the corners of fine
       * meshes) */
      double lambda = 1.0;
      for (int t = 0; !ierr && t <= 10; t++, lambda *= 0.5) {
        ierr = mf_vector_copy(rhs, u);
        if (!ierr) ierr = mf_vector_axpy(rhs, lambda, w);
        const int rerr = ierr ? 0 : mf_operator_residual(op, rhs, zero);
        if (rerr == MF_ERR_ARGUMENT && t < 10) continue; /* not finite there: shorter */
        ierr = rerr;
        break;
      }
      if (!ierr) ierr = mf_vector_copy(u, rhs);
      if (verbose && rank == 0 && lambda < 1.0)
        fprintf(stderr, "mfree-hyperelastic: load step %d: the linearised step taken %g times\n", s, lambda);
      pred_its += ci.iterations;
      t_pred += MPI_Wtime() - tp;
      if (verbose && rank == 0) {
        char name[64];
        fprintf(stderr, "mfree-hyperelastic: [%.2f s] %s predictor: CG %d\n", MPI_Wtime() - t0,
                load_name(&md, name, sizeof name), ci.iterations);
      }
    }
    if (!ierr) ierr = mf_newton_set_rhs(nw, to == den ? NULL : b);
    if (ierr != MF_ERR_ARGUMENT || !usave || cuts_used >= load_cuts) { /* (the predictor's inverted cell: cut back) */
      if (ierr) {
        rc = fail(ctx, "the load step");
        break;
      }
      ierr = mf_newton_solve(nw, u, in);
    } else memset(in, 0, sizeof *in);
    tot.iterations += in->iterations, tot.linear_iterations += in->linear_iterations;
    tot.seconds += in->seconds, tot.seconds_residual += in->seconds_residual;
    tot.seconds_jacobian += in->seconds_jacobian, tot.seconds_pc += in->seconds_pc;
    tot.seconds_linear += in->seconds_linear;
    tot.negative_curvature += in->negative_curvature;
    tot.pc_kept += in->pc_kept;
    tot.trust_rejected += in->trust_rejected;
    if ((ierr == MF_ERR_NOT_CONVERGED || ierr == MF_ERR_ARGUMENT) && cuts_used < load_cuts) {
      /* back to the last converged load, half the increment */
      if (rank == 0)
        fprintf(stderr, "mfree-hyperelastic: load step %d (load %.6g to %.6g) not solved (%s); again from %.6g with half "
                "the increment (cut %d of at most %d)\n", s, from, frac, mf_context_error_message(ctx), from,
                cuts_used + 1, load_cuts);
      cuts_used++;
      du_n = to - at; /* half the increment: den doubled */
      den *= 2, at *= 2;
      ierr = mf_vector_copy(u, usave);
      if (ierr) rc = fail(ctx, "the load step");
      continue;
    }
    if (ierr) {
      fprintf(stderr, "mfree-hyperelastic: load step %d (load %.6g to %.6g): %s\n", s, from, frac,
              mf_context_error_message(ctx));
      rc = ierr == MF_ERR_NOT_CONVERGED ? 3 : 1;
      break;
    }
    at = to;
  }
  const double t_total = MPI_Wtime() - t0;
  double phases_end[MF_PHASE_COUNT] = {0}; /* the compiles after the set-up: a state's kernels at the first state */
  mf_context_phase_times(ctx, phases_end);
  const double t_compile = phases_end[MF_PHASE_COMPILE], t_compile_later = t_compile - phases[MF_PHASE_COMPILE];
  const double mdofs_it = tot.seconds_linear > 0.0 ? (double)ndofs * tot.linear_iterations / tot.seconds_linear / 1e6 : 0.0;
  int nranks = 1;
  MPI_Comm_size(MPI_COMM_WORLD, &nranks);
  if (rank == 0) {
    if (box) printf("mesh %s, %d cubes per side (%d refined %d times)", mesh_arg, cubes, c, r);
    else printf("mesh %s refined %d times", mesh_arg, refine);
    printf(", %s%d, %lld DoFs, %d ranks, backend %s, pc %s, method %s, line search %s\n", hex ? "Q" : "P", degree,
           (long long)ndofs, nranks, mf_context_backend(ctx), pcs[pc_i], methods[method_i], searches[line_search]);
    printf("Newton steps %d, CG iterations %d (%.1f per step), %s; initial guesses: %s", tot.iterations,
           tot.linear_iterations, tot.iterations ? (double)tot.linear_iterations / tot.iterations : 0.0,
           rc ? "NOT converged" : "converged", inits[init_i]);
    if (init_i == 0) printf(" (%d linearised steps, %d CG iterations, %.3f s)", attempts, pred_its, t_pred);
    if (load_cuts > 0)
      printf("\nload steps: %d taken, %d of them failed and taken again with half the increment (--load-cuts %d)",
             attempts, cuts_used, load_cuts);
    printf("\ntime: total %.3f s = set-up %.3f s + initial guesses %.3f s + Newton %.3f s (residuals %.3f, Jacobians "
           "%.3f, preconditioner %.3f, CG %.3f)\n",
           t_total, t_setup, t_pred, tot.seconds, tot.seconds_residual, tot.seconds_jacobian, tot.seconds_pc,
           tot.seconds_linear);
    printf("CG: %.1f Mdof/s per iteration; %d Newton steps met negative curvature (truncated CG)\n", mdofs_it,
           tot.negative_curvature);
    if (pc_lag > 0.0)
      printf("preconditioner lag %g: %d Newton steps kept an earlier step's set-up\n", pc_lag, tot.pc_kept);
    if (line_search == MF_NEWTON_TRUST_REGION)
      printf("trust region: %d trial steps rejected (the region quartered)\n", tot.trust_rejected);
    printf("compiling the physics (or loading it from the cache): %.3f s in all, %.3f s of it after the set-up (in the "
           "times above)\n", t_compile, t_compile_later);
    printf("the library's phases after the set-up (within the times above):");
    for (int k = 0; k < MF_PHASE_COUNT; k++)
      if (phases_end[k] - phases[k] > 0.0) printf(" %s %.3f s", mf_phase_name((mf_phase)k), phases_end[k] - phases[k]);
    printf("\n");
  }
  if (vtu && !rc && mf_vector_write_vtu(u, vtu, "displacement")) rc = fail(ctx, "--vtu");
  if (jf && rank == 0) {
    fprintf(jf, "{\"app\": \"mfree-hyperelastic\", \"mesh\": \"%s\", \"cubes\": %d, \"coarse_cubes\": %d, \"refinements\": %d, "
                "\"element\": \"%s%d\", \"dofs\": %lld, \"ranks\": %d, \"backend\": \"%s\", \"pc\": \"%s\", \"mg_degree\": %d, \"method\": \"%s\", "
                "\"cg_tol\": %g, \"ew\": %d, \"newton_stol\": %g, \"newton_rtol\": %g, \"load_steps\": %d, \"load_cuts\": %d, \"load_cutbacks\": %d, \"load_attempts\": %d, "
                "\"load_scale\": %g, \"quadrature\": \"%s\", \"initial\": \"%s\", \"line_search\": \"%s\", \"E\": %g, \"nu\": %g, \"converged\": %d, \"newton_iterations\": %d, \"cg_iterations\": %d, \"negative_curvature_steps\": %d, \"trust_rejected_trials\": %d, "
                "\"pc_lag\": %g, \"pc_kept_steps\": %d, \"predictor_cg_iterations\": %d, \"t_predictor\": %.6f, \"t_total\": %.6f, \"t_setup\": %.6f, \"t_newton\": %.6f, \"t_residual\": %.6f, \"t_jacobian\": %.6f, "
                "\"t_pc\": %.6f, \"t_cg\": %.6f, \"t_compile\": %.6f, \"t_compile_after_setup\": %.6f, "
                "\"mdofs_per_cg_iteration\": %.3f, \"jacobian_check\": %g, \"last_load_history\": [",
            mesh_arg, box ? cubes : 0, box ? c : 0, box ? r : refine, hex ? "Q" : "P", degree, (long long)ndofs, nranks, mf_context_backend(ctx),
            pcs[pc_i], pc_i == 1 ? mg_degree : 0, methods[method_i], ew ? 0.0 : cg_tol, ew, stol, rtol, loads, load_cuts, cuts_used, attempts, load_scale, hex ? "p+1" : quads[quad_i], inits[init_i], searches[line_search], prob.E, prob.nu, rc == 0, tot.iterations,
            tot.linear_iterations, tot.negative_curvature, tot.trust_rejected, pc_lag, tot.pc_kept, pred_its, t_pred, t_total, t_setup, tot.seconds, tot.seconds_residual, tot.seconds_jacobian,
            tot.seconds_pc, tot.seconds_linear, t_compile, t_compile_later, mdofs_it, jac_err);
    const double *res = NULL, *upd = NULL, *tr[3] = {NULL, NULL, NULL};
    int nh = 0, nt = 0;
    if (line_search == MF_NEWTON_TRUST_REGION && mf_newton_trust_history(nw, &tr[0], &tr[1], &tr[2], &nt)) nt = 0;
    if (!mf_newton_history(nw, &res, &upd, &nh)) /* the last load step's history (in the trust region its rho, radius
                                                    and step norm too; null where not finite) */
      for (int k = 0; k < nh; k++) {
        fprintf(jf, "%s{\"residual\": %.6e, \"update\": %.6e", k ? ", " : "", res[k], upd[k]);
        static const char *const key[3] = {"rho", "radius", "step_norm"};
        for (int i = 0; i < 3 && k < nt; i++)
          if (isfinite(tr[i][k])) fprintf(jf, ", \"%s\": %.6e", key[i], tr[i][k]);
          else fprintf(jf, ", \"%s\": null", key[i]);
        fprintf(jf, "}");
      }
    fprintf(jf, "], \"setup_phases\": {");
    for (int k = 0, first = 1; k < MF_PHASE_COUNT; k++)
      if (phases[k] > 0.0) fprintf(jf, "%s\"%s\": %.6f", first ? "" : ", ", mf_phase_name((mf_phase)k), phases[k]), first = 0;
    fprintf(jf, "}, \"solve_phases\": {"); /* the same steps after the set-up (the states' data, the preconditioners) */
    for (int k = 0, first = 1; k < MF_PHASE_COUNT; k++)
      if (phases_end[k] - phases[k] > 0.0)
        fprintf(jf, "%s\"%s\": %.6f", first ? "" : ", ", mf_phase_name((mf_phase)k), phases_end[k] - phases[k]), first = 0;
    fprintf(jf, "}}\n");
  }
done:
  if (jf) fclose(jf);
  mf_newton_destroy(&nw);
  mf_cg_destroy(&pcg);
  mf_vector_destroy(&w);
  mf_vector_destroy(&rhs);
  mf_vector_destroy(&u);
  mf_vector_destroy(&g);
  mf_vector_destroy(&b);
  mf_vector_destroy(&F00);
  mf_vector_destroy(&usave);
  mf_vector_destroy(&zero);
  mf_operator_destroy(&op);
  mf_physics_destroy(&ph);
  mf_space_destroy(&space);
  mf_mesh_destroy(&mesh);
  mf_context_destroy(&ctx);
  MPI_Finalize();
  return rc;
}
