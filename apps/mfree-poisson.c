/* mfree-poisson -- solves -div(c grad u) = f with a manufactured solution on a square/cube, ball or
 * deformed cube with Jacobi-preconditioned CG on the matrix-free Laplace operator, and reports
 * DoFs, ranks, backend, iterations, times and the L2 error (text and, with --json, one JSON object). */
#include <errno.h>
#include <stdlib.h>

#include "poisson.h"

static void usage(FILE *f)
{
  fprintf(f,
          "usage: mfree-poisson [options]\n"
          "  --dim D            2 or 3 (default 3)\n"
          "  --degree P         polynomial degree 1..8 (default 3)\n"
          "  --mesh M           cube | ball | deformed (default ball)\n"
          "  --refine L         uniform refinement level (default 3)\n"
          "  --trees T          the coarse mesh split T-fold per direction (cube, deformed: T^dim trees;\n"
          "                     ball: each tree T^dim-fold), for sizes between powers of 2 (default 1)\n"
          "  --backend B        cpu | cuda | auto (default auto)\n"
          "  --coefficient C    constant | ljungkvist, c(x) = 1/(0.05 + 2|x|^2) (default ljungkvist)\n"
          "  --tol T            relative CG tolerance (default 1e-10)\n"
          "  --pc P             preconditioner: jacobi | chebyshev | mg | none (default jacobi)\n"
          "  --pc-degree K      Chebyshev degree, or the multigrid smoother's (default 4)\n"
          "  --mg-precision P   the V-cycle's precision: double | float (default double)\n"
          "  --adapt none|shells  adaptive refinement: shells refines along several spherical shells\n"
          "  --levels L         rounds of adaptive refinement (default 2 with --adapt shells)\n"
          "  --json FILE        also write the summary as one JSON object to FILE\n"
          "  --vtu PREFIX       write the solution for ParaView: PREFIX.pvtu, PREFIX_<rank>.vtu\n"
          "  --help             this text\n");
}

static int parse_int(const char *opt, const char *s, int *v)
{
  char *end;
  errno = 0;
  long x = strtol(s, &end, 10);
  if (errno || *end || end == s || x < -1000000 || x > 1000000) {
    fprintf(stderr, "mfree-poisson: option %s: '%s' is not an integer\n", opt, s);
    return 1;
  }
  *v = (int)x;
  return 0;
}

static int parse_double(const char *opt, const char *s, double *v)
{
  char *end;
  errno = 0;
  double x = strtod(s, &end);
  if (errno || *end || end == s) {
    fprintf(stderr, "mfree-poisson: option %s: '%s' is not a number\n", opt, s);
    return 1;
  }
  *v = x;
  return 0;
}

int main(int argc, char **argv)
{
  int dim = 3, degree = 3, refine = 3, levels = 2, trees = 1;
  const char *adapt = "none";
  const char *mesh_name = "ball", *backend = "auto", *coef_name = "ljungkvist", *json = NULL, *pc_name = "jacobi";
  const char *mg_prec = "double";
  const char *vtu = NULL; /* --vtu PREFIX */
  poisson_pc pcopt = {MF_PC_JACOBI, 0, 0, MF_PRECISION_DOUBLE};
  double tol = 1e-10;
  int bad = 0;

  MPI_Init(&argc, &argv);
  int rank, nranks;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &nranks);
  if (rank) fclose(stderr), stderr = fopen("/dev/null", "w");

  for (int i = 1; i < argc && !bad; i++) {
    const char *o = argv[i];
    if (!strcmp(o, "--help") || !strcmp(o, "-h")) {
      if (!rank) usage(stdout);
      MPI_Finalize();
      return 0;
    }
    if (strncmp(o, "--", 2) || i + 1 >= argc) {
      fprintf(stderr, "mfree-poisson: %s '%s'\n", strncmp(o, "--", 2) ? "unknown argument" : "missing value for option", o);
      bad = 1;
      break;
    }
    const char *v = argv[++i];
    if (!strcmp(o, "--dim")) bad = parse_int(o, v, &dim);
    else if (!strcmp(o, "--degree")) bad = parse_int(o, v, &degree);
    else if (!strcmp(o, "--refine")) bad = parse_int(o, v, &refine);
    else if (!strcmp(o, "--trees")) bad = parse_int(o, v, &trees);
    else if (!strcmp(o, "--mesh")) mesh_name = v;
    else if (!strcmp(o, "--backend")) backend = v;
    else if (!strcmp(o, "--coefficient")) coef_name = v;
    else if (!strcmp(o, "--tol")) bad = parse_double(o, v, &tol);
    else if (!strcmp(o, "--json")) json = v;
    else if (!strcmp(o, "--adapt")) adapt = v;
    else if (!strcmp(o, "--levels")) bad = parse_int(o, v, &levels);
    else if (!strcmp(o, "--pc")) pc_name = v;
    else if (!strcmp(o, "--pc-degree")) bad = parse_int(o, v, &pcopt.degree);
    else if (!strcmp(o, "--mg-precision")) mg_prec = v;
    else if (!strcmp(o, "--vtu")) vtu = v;
    else {
      fprintf(stderr, "mfree-poisson: unknown option '%s' (see --help)\n", o);
      bad = 1;
    }
  }
  poisson_coef coef = POISSON_COEF_CONSTANT;
  if (!bad) {
    if (!strcmp(coef_name, "constant")) coef = POISSON_COEF_CONSTANT;
    else if (!strcmp(coef_name, "ljungkvist")) coef = POISSON_COEF_LJUNGKVIST;
    else {
      fprintf(stderr, "mfree-poisson: option --coefficient: unknown coefficient '%s' (constant | ljungkvist)\n", coef_name);
      bad = 1;
    }
  }
  if (!bad) {
    if (!strcmp(pc_name, "jacobi")) pcopt.kind = MF_PC_JACOBI;
    else if (!strcmp(pc_name, "chebyshev")) pcopt.kind = MF_PC_CHEBYSHEV;
    else if (!strcmp(pc_name, "mg")) pcopt.kind = MF_PC_MULTIGRID, pcopt.profile = 1;
    else if (!strcmp(pc_name, "none")) pcopt.kind = MF_PC_NONE;
    else {
      fprintf(stderr, "mfree-poisson: option --pc: unknown preconditioner '%s' (jacobi | chebyshev | mg | none)\n", pc_name);
      bad = 1;
    }
  }
  if (!bad) {
    if (!strcmp(mg_prec, "double")) pcopt.precision = MF_PRECISION_DOUBLE;
    else if (!strcmp(mg_prec, "float")) pcopt.precision = MF_PRECISION_FLOAT;
    else {
      fprintf(stderr, "mfree-poisson: option --mg-precision: unknown precision '%s' (double | float)\n", mg_prec);
      bad = 1;
    }
  }
  if (!bad && pcopt.precision != MF_PRECISION_DOUBLE && pcopt.kind != MF_PC_MULTIGRID) {
    fprintf(stderr, "mfree-poisson: option --mg-precision %s needs --pc mg (not '%s')\n", mg_prec, pc_name);
    bad = 1;
  }
  if (!bad && (pcopt.degree < 0 || pcopt.degree > 64)) {
    fprintf(stderr, "mfree-poisson: option --pc-degree: %d out of range 1..64 (0: the default)\n", pcopt.degree);
    bad = 1;
  }
  if (!bad && strcmp(adapt, "none") && strcmp(adapt, "shells")) {
    fprintf(stderr, "mfree-poisson: option --adapt: unknown pattern '%s' (none | shells)\n", adapt);
    bad = 1;
  }
  if (!bad && !(tol > 0.0 && tol < 1.0)) {
    fprintf(stderr, "mfree-poisson: option --tol: %g out of range (0, 1)\n", tol);
    bad = 1;
  }
  if (bad) {
    MPI_Finalize();
    return 2;
  }

  int ierr;
  mf_context ctx = NULL;
  mf_mesh mesh = NULL;
  poisson_result res;
  double t_mesh = 0.0, phases[MF_PHASE_COUNT] = {0};
  ierr = mf_context_create(MPI_COMM_WORLD, backend, &ctx);
  if (!ierr) {
    MPI_Barrier(MPI_COMM_WORLD);
    t_mesh = MPI_Wtime();
    const int tt[3] = {trees, trees, trees};
    ierr = mf_mesh_create_box(ctx, mesh_name, dim, tt, refine, &mesh);
  }
  if (!ierr && !strcmp(adapt, "shells")) ierr = mf_mesh_refine_shells(mesh, levels);
  if (!ierr) t_mesh = MPI_Wtime() - t_mesh;
  int64_t ncells = 0;
  if (!ierr) ierr = mf_mesh_num_cells(mesh, &ncells);
  if (!ierr) ierr = poisson_solve_vtu(mesh, degree, coef, tol, &pcopt, vtu, &res);
  if (!ierr) ierr = mf_context_phase_times(ctx, phases);
  size_t mem_in_use = 0, mem_peak = 0;
  if (!ierr) ierr = mf_context_device_memory(ctx, &mem_in_use, &mem_peak);
  if (ierr) {
    fprintf(stderr, "mfree-poisson: error %d: %s\n", ierr, mf_last_error_message());
    mf_mesh_destroy(&mesh);
    mf_context_destroy(&ctx);
    MPI_Finalize();
    return 1;
  }
  /* set-up: mesh to solver ready (the Jacobi diagonal included). Each figure is the slowest rank's;
   * "other" is the set-up time outside the library's phases (vectors, the operator application of the
   * boundary lift), per rank. */
  double setup = t_mesh + res.setup_s, other = setup;
  for (int k = 0; k < MF_PHASE_COUNT; k++) other -= phases[k];
  MPI_Allreduce(MPI_IN_PLACE, &setup, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  MPI_Allreduce(MPI_IN_PLACE, &other, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  MPI_Allreduce(MPI_IN_PLACE, phases, MF_PHASE_COUNT, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  const char *be = mf_context_backend(ctx);
  double dofs_per_s = res.s_per_iter > 0 ? res.ndofs / res.s_per_iter : 0.0;
  if (!rank) {
    printf("mfree-poisson: -div(c grad u) = f, manufactured solution\n"
           "  mesh           %s, dim %d, %d tree(s) per direction, refine %d, adapt %s (%lld cells)\n"
           "  degree         %d (Q%d, Gauss q = %d)\n"
           "  coefficient    %s\n"
           "  DoFs           %lld\n"
           "  ranks          %d\n"
           "  backend        %s\n"
           "  preconditioner %s\n"
           "  CG iterations  %d (%s, relative residual %.2e, tol %.1e)\n"
           "  setup time     %.3f s (mesh to solver ready)\n"
           "  solve time     %.3f s (%.3e s per iteration, %.3e DoF/s per iteration)\n"
           "  L2 error       %.6e (%.3f s)\n"
           "  device memory  %.3f GB peak (rank 0)\n",
           mesh_name, dim, trees, refine, adapt, (long long)ncells, degree, degree, degree + 1, coef_name, (long long)res.ndofs, nranks, be,
           pc_name, res.iterations, res.converged ? "converged" : "NOT converged", res.residual, tol, setup,
           res.solve_s, res.s_per_iter, dofs_per_s, res.l2_error, res.error_s, mem_peak / 1e9);
    printf("  setup          phase          seconds   share\n");
    for (int k = 0; k < MF_PHASE_COUNT; k++)
      printf("                 %-12s %9.4f  %5.1f%%\n", mf_phase_name((mf_phase)k), phases[k],
             setup > 0 ? 100.0 * phases[k] / setup : 0.0);
    printf("                 %-12s %9.4f  %5.1f%%\n", "other", other, setup > 0 ? 100.0 * other / setup : 0.0);
    printf("  solve rate     %.3e DoF/s (DoFs / solve time)\n", res.solve_s > 0 ? res.ndofs / res.solve_s : 0.0);
    if (res.levels) {
      printf("  multigrid      %d levels in %s, set-up %.3f s (within the set-up above), V-cycle %.3e s\n"
             "                 level  degree         DoFs      cells   s per V-cycle  share\n",
             res.levels, mg_prec, res.pc_setup_s, res.vcycle_s);
      for (int k = res.levels - 1; k >= 0; k--)
        printf("                 %5d  %6d %12lld %10lld   %13.3e  %4.1f%%\n", k, res.level_degree[k],
               (long long)res.level_dofs[k], (long long)res.level_cells[k], res.level_s[k],
               res.vcycle_s > 0 ? 100.0 * res.level_s[k] / res.vcycle_s : 0.0);
    }
    if (json) {
      FILE *f = fopen(json, "w");
      if (!f) {
        fprintf(stderr, "mfree-poisson: option --json: cannot open '%s' for writing\n", json);
        ierr = 1;
      } else {
        fprintf(f,
                "{\"ndofs\": %lld, \"ranks\": %d, \"backend\": \"%s\", \"degree\": %d, \"dim\": %d, "
                "\"mesh\": \"%s\", \"trees\": %d, \"refine\": %d, \"adapt\": \"%s\", \"cells\": %lld, \"coefficient\": \"%s\", \"iterations\": %d, "
                "\"converged\": %s, \"setup_s\": %.6e, \"solve_s\": %.6e, \"s_per_iteration\": %.6e, "
                "\"dofs_per_s_per_iteration\": %.6e, \"l2_error\": %.10e, \"l2_error_s\": %.6e, \"device_mem_peak_bytes\": %zu, \"setup_phases_s\": {",
                (long long)res.ndofs, nranks, be, degree, dim, mesh_name, trees, refine, adapt, (long long)ncells, coef_name,
                res.iterations,
                res.converged ? "true" : "false", setup, res.solve_s, res.s_per_iter, dofs_per_s,
                res.l2_error, res.error_s, mem_peak);
        for (int k = 0; k < MF_PHASE_COUNT; k++) fprintf(f, "\"%s\": %.6e, ", mf_phase_name((mf_phase)k), phases[k]);
        fprintf(f, "\"other\": %.6e}, \"pc\": \"%s\", \"pc_setup_s\": %.6e, \"solve_dofs_per_s\": %.6e",
                other, pc_name, res.pc_setup_s, res.solve_s > 0 ? res.ndofs / res.solve_s : 0.0);
        if (res.levels) {
          fprintf(f, ", \"mg_precision\": \"%s\", \"vcycle_s\": %.6e, \"mg_levels\": [", mg_prec, res.vcycle_s);
          for (int k = 0; k < res.levels; k++)
            fprintf(f, "%s{\"degree\": %d, \"ndofs\": %lld, \"cells\": %lld, \"vcycle_s\": %.6e}", k ? ", " : "",
                    res.level_degree[k], (long long)res.level_dofs[k], (long long)res.level_cells[k], res.level_s[k]);
          fprintf(f, "]");
        }
        fprintf(f, "}\n");
        fclose(f);
      }
    }
  }
  MPI_Bcast(&ierr, 1, MPI_INT, 0, MPI_COMM_WORLD);
  if (!ierr && !res.converged) ierr = 3;
  mf_mesh_destroy(&mesh);
  mf_context_destroy(&ctx);
  MPI_Finalize();
  return ierr;
}
