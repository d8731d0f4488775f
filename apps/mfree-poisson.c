/* mfree-poisson -- solves -div(c grad u) = f with a manufactured solution on a square/cube, ball or
 * deformed cube (Q_p on p4est hexahedra), or on triangles/tetrahedra (P_p: the built-in square-tris,
 * cube-tets, or a Gmsh .msh file; cpu or cuda backend, one rank or several) with Jacobi-preconditioned CG on the matrix-free Laplace operator (--method: or its
 * assembled CSR matrix, or both side by side), and reports
 * DoFs, ranks, backend, iterations, times and the L2 and H1 (seminorm) errors (text and, with --json, one
 * JSON object);
 * --verbose tells on stderr where a long run is. Options are checked before anything runs
 * (options.h); an error of the library that an option's value caused is reported naming the option. */
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <unistd.h>

#include "options.h"
#include "poisson.h"

static void usage(FILE *f)
{
  fprintf(f,
          "usage: mfree-poisson [options]\n"
          "  --dim D            2 or 3 (default 3)\n"
          "  --degree P         polynomial degree 1..8 (default 3)\n"
          "  --mesh M           cube | ball | deformed | sheared (default ball), or on simplices: square-tris |\n"
          "                     cube-tets (2^refine cells per side; --dim follows the mesh) | FILE.msh (a Gmsh\n"
          "                     file; its dimension unless --dim is given); simplices: degree 1..6 (cuda: 1..4), --pc\n"
          "                     jacobi, chebyshev, mg (double) or none, no --adapt or --trees; --method assembled\n"
          "                     and both assemble rowwise\n"
          "  --refine L         uniform refinement level, 0..12 in 3D, 0..18 in 2D (default 3; square-tris\n"
          "                     0..12, cube-tets 0..8; a mesh file: its mesh refined L times, 0..8, default 0)\n"
          "  --trees T          the coarse mesh split T-fold per direction, 1..4096 (cube, deformed, sheared: T^dim\n"
          "                     trees; ball: each tree T^dim-fold), for sizes between powers of 2 (default 1)\n"
          "  --backend B        cpu | cuda | auto (default auto)\n"
          "  --coefficient C    constant | ljungkvist, c(x) = 1/(0.05 + 2|x|^2) (default ljungkvist)\n"
          "  --fields F         host | source: u, f and c(x) as host callbacks, or as C source evaluated where\n"
          "                     the vectors live (on the device on cuda; the operator then a physics) (default\n"
          "                     host)\n"
          "  --tol T            relative CG tolerance in (0, 1) (default 1e-10)\n"
          "  --pc P             preconditioner: jacobi | chebyshev | mg | none (default jacobi)\n"
          "  --pc-degree K      Chebyshev degree, or the multigrid smoother's, 1..64 (default 4)\n"
          "  --mg-precision P   the V-cycle's precision: double | float (default double; needs --pc mg)\n"
          "  --mg-coarse K      multigrid's coarsest level: matrix-free | assembled (its CSR matrix;\n"
          "                     default matrix-free; needs --pc mg and --mg-precision double)\n"
          "  --method M         mf | assembled | both: solve with the matrix-free operator, the assembled\n"
          "                     (CSR) matrix, or both one after the other with a side-by-side table\n"
          "                     (default mf; assembled and both: --pc jacobi or none)\n"
          "  --assembly-variant V  auto | search | table | rowwise: how the assembled matrix's values are\n"
          "                     computed (default auto; needs --method assembled or both)\n"
          "  --adapt none|shells  adaptive refinement: shells refines along several spherical shells\n"
          "  --levels L         rounds of adaptive refinement, 0..10 (default 2; needs --adapt shells)\n"
          "  --json FILE        also write the summary as one JSON object to FILE (opened before the run)\n"
          "  --vtu PREFIX       write the solution for ParaView: PREFIX.pvtu, PREFIX_<rank>.vtu (checked\n"
          "                     before the run)\n"
          "  --verbose          progress on stderr: each set-up step with its phase times, CG residuals\n"
          "  --verbose-every N  a CG line every N iterations (default 10)\n"
          "  --help             this text\n"
          "Exit status: 0 solved, 1 the run failed, 2 a bad option (the message names it; also a problem\n"
          "larger than the machine holds, naming the options that set its size), 3 CG did not converge.\n");
}

/* --verbose: progress lines on stderr (rank 0), each with the time since the start and the set-up
 * phases (mf_context_phase_times) that grew since the line before. */
typedef struct {
  int on, every;
  mf_context ctx;
  double t0, last[MF_PHASE_COUNT], res0;
} progress;

static void say(progress *pg, const char *step, const char *detail)
{
  if (!pg->on) return;
  char phases[512] = "";
  double now[MF_PHASE_COUNT] = {0};
  if (pg->ctx && !mf_context_phase_times(pg->ctx, now))
    for (int k = 0; k < MF_PHASE_COUNT; k++) {
      if (now[k] > pg->last[k])
        snprintf(phases + strlen(phases), sizeof phases - strlen(phases), "%s%s %.3g s", phases[0] ? ", " : " (phases: ",
                 mf_phase_name((mf_phase)k), now[k] - pg->last[k]);
      pg->last[k] = now[k];
    }
  fprintf(stderr, "mfree-poisson: [%9.3f s] %s: %s%s%s\n", MPI_Wtime() - pg->t0, step, detail, phases,
          phases[0] ? ")" : "");
  fflush(stderr);
}

static void on_progress(const char *step, const char *detail, void *user) { say((progress *)user, step, detail); }

/* The CG's monitor: a line every `every` iterations (and the initial residual); never stops the solve. */
static int on_iteration(int it, double residual, void *user)
{
  progress *pg = (progress *)user;
  if (it == 0) pg->res0 = residual;
  if (pg->on && it % pg->every == 0) {
    char line[128];
    snprintf(line, sizeof line, "iteration %d, residual %.3e (relative %.3e)", it, residual,
             pg->res0 > 0 ? residual / pg->res0 : 0.0);
    say(pg, "cg", line);
  }
  return 0;
}

/* A library error: where an option's value fed the failing call, name the option (exit 2); a problem
 * too large for this machine (memory, host or device) names the options that set its size and exits 2
 * too, as the p4est and DoF-index limits do for the same options; anything else exits 1. */
static int report(int ierr, const char *option, const char *size_options)
{
  const char *msg = mf_last_error_message();
  if (ierr == MF_ERR_MEMORY) {
    fprintf(stderr, "mfree-poisson: the problem is too large for this machine (its size comes from %s): %s\n",
            size_options, msg);
    return 2;
  }
  if (option && ierr != MF_ERR_CUDA && ierr != MF_ERR_MPI) {
    fprintf(stderr, "mfree-poisson: option %s: %s\n", option, msg);
    return 2;
  }
  fprintf(stderr, "mfree-poisson: error %d: %s\n", ierr, msg);
  return 1;
}

/* Whether path can be written (0, or the errno of the failure): opened for appending, so that a file
 * there keeps its contents, and removed again if it was not there before. */
static int probe_writable(const char *path)
{
  const int existed = access(path, F_OK) == 0;
  errno = 0;
  FILE *f = fopen(path, "a");
  if (!f) return errno ? errno : EIO;
  fclose(f);
  if (!existed) remove(path);
  return 0;
}

int main(int argc, char **argv)
{
  int dim = 3, degree = 3, refine = 3, levels = 2, trees = 1, verbose = 0, every = 10;
  int given_levels = 0, given_pc_degree = 0, given_every = 0, given_dim = 0, given_refine = 0, given_trees = 0;
  const char *mesh_arg = NULL; /* --mesh as given */
  const char *json = NULL, *vtu = NULL;
  static const char *const mesh_names[] = {"cube", "ball", "deformed", "sheared"}, *const backends[] = {"cpu", "cuda", "auto"},
                           *const coefs[] = {"constant", "ljungkvist"}, *const adapts[] = {"none", "shells"},
                           *const pcs[] = {"jacobi", "chebyshev", "mg", "none"}, *const precs[] = {"double", "float"},
                           *const methods[] = {"mf", "assembled", "both"},
                           *const variants[] = {"auto", "search", "table", "rowwise"},
                           *const coarses[] = {"matrix-free", "assembled"}, *const fields[] = {"host", "source"};
  static const mf_pc_kind pc_kinds[] = {MF_PC_JACOBI, MF_PC_CHEBYSHEV, MF_PC_MULTIGRID, MF_PC_NONE};
  int mesh_i = 1, backend_i = 2, coef_i = 1, adapt_i = 0, pc_i = 0, prec_i = 0, method_i = 0, variant_i = 0, coarse_i = 0,
      fields_i = 0;
  poisson_pc pcopt = {MF_PC_JACOBI, 0, 0, MF_PRECISION_DOUBLE, NULL, NULL, NULL, 0, MF_ASSEMBLY_AUTO, NULL, MF_MG_COARSE_MATRIX_FREE, NULL, 0};
  double tol = 1e-10;

  /* Options first, before MPI starts: a bad one costs nothing and stops before any work. */
  opt_parser P;
  opt_init(&P, "mfree-poisson", argc, argv);
  while (opt_next(&P)) {
    if (opt_is(&P, "--help") || opt_is(&P, "-h")) {
      if (!P.quiet) usage(stdout);
      return 0;
    }
    if (opt_is(&P, "--dim")) given_dim = !opt_int(&P, 2, 3, &dim);
    else if (opt_is(&P, "--degree")) opt_int(&P, 1, 8, &degree);
    else if (opt_is(&P, "--refine")) given_refine = !opt_int(&P, INT_MIN, INT_MAX, &refine); /* range: below, by mesh and dim */
    else if (opt_is(&P, "--trees")) given_trees = !opt_int(&P, 1, 4096, &trees);
    else if (opt_is(&P, "--mesh")) opt_string(&P, &mesh_arg);
    else if (opt_is(&P, "--backend")) opt_choice(&P, backends, 3, &backend_i);
    else if (opt_is(&P, "--coefficient")) opt_choice(&P, coefs, 2, &coef_i);
    else if (opt_is(&P, "--tol")) opt_double(&P, 0.0, 1, 1.0, 1, &tol);
    else if (opt_is(&P, "--json")) opt_string(&P, &json);
    else if (opt_is(&P, "--vtu")) opt_string(&P, &vtu);
    else if (opt_is(&P, "--adapt")) opt_choice(&P, adapts, 2, &adapt_i);
    else if (opt_is(&P, "--levels")) given_levels = !opt_int(&P, 0, 10, &levels);
    else if (opt_is(&P, "--pc")) opt_choice(&P, pcs, 4, &pc_i);
    else if (opt_is(&P, "--pc-degree")) given_pc_degree = !opt_int(&P, 1, 64, &pcopt.degree);
    else if (opt_is(&P, "--mg-precision")) opt_choice(&P, precs, 2, &prec_i);
    else if (opt_is(&P, "--mg-coarse")) opt_choice(&P, coarses, 2, &coarse_i);
    else if (opt_is(&P, "--fields")) opt_choice(&P, fields, 2, &fields_i);
    else if (opt_is(&P, "--method")) opt_choice(&P, methods, 3, &method_i);
    else if (opt_is(&P, "--assembly-variant")) opt_choice(&P, variants, 4, &variant_i);
    else if (opt_is(&P, "--verbose")) verbose = 1;
    else if (opt_is(&P, "--verbose-every")) given_every = !opt_int(&P, 1, INT_MAX, &every);
    else opt_unknown(&P);
  }
  /* --mesh: a p4est mesh by name, a built-in simplex mesh, or a Gmsh file */
  int simplex = 0; /* 1 built-in simplex mesh, 2 a .msh file */
  if (!P.bad && mesh_arg) {
    const size_t len = strlen(mesh_arg);
    mesh_i = -1;
    for (int k = 0; k < 4; k++)
      if (!strcmp(mesh_arg, mesh_names[k])) mesh_i = k;
    if (!strcmp(mesh_arg, "square-tris") || !strcmp(mesh_arg, "cube-tets")) simplex = 1;
    else if (len > 4 && !strcmp(mesh_arg + len - 4, ".msh")) simplex = 2;
    else if (mesh_i < 0)
      opt_error(&P, "option --mesh: unknown value '%s' (" MF_MESH_NAMES " | FILE.msh)", mesh_arg);
  }
  if (!P.bad && simplex == 1) { /* the dimension follows the mesh */
    const int mdim = !strcmp(mesh_arg, "square-tris") ? 2 : 3;
    if (given_dim && dim != mdim) opt_error(&P, "option --dim %d: mesh '%s' is %dD", dim, mesh_arg, mdim);
    dim = mdim;
    if (!P.bad && (refine < 0 || refine > (dim == 2 ? 12 : 8)))
      opt_error(&P, "option --refine: %d out of range 0..%d for --mesh %s", refine, dim == 2 ? 12 : 8, mesh_arg);
  }
  if (!P.bad && simplex) { /* what needs the p4est forest, or Q_p, is refused on simplices */
    if (degree > 6) opt_error(&P, "option --degree: %d out of range 1..6 on simplices (--mesh %s)", degree, mesh_arg);
    else if (simplex == 2 && given_refine && (refine < 0 || refine > 8))
      opt_error(&P, "option --refine: %d out of range 0..8 for a mesh file (--mesh %s)", refine, mesh_arg);
    else if (given_trees) opt_error(&P, "option --trees does not apply to simplex meshes (--mesh %s)", mesh_arg);
    else if (adapt_i) opt_error(&P, "option --adapt %s: simplex meshes are not adapted (--mesh %s)", adapts[adapt_i], mesh_arg);
    else if (variant_i == 1 || variant_i == 2)
      opt_error(&P, "option --assembly-variant %s: simplex operators are assembled rowwise (auto or rowwise; --mesh %s)",
                variants[variant_i], mesh_arg);
  }
  /* options that depend on others: none is ignored in silence */
  pcopt.kind = pc_kinds[pc_i];
  pcopt.profile = pcopt.kind == MF_PC_MULTIGRID;
  pcopt.precision = prec_i ? MF_PRECISION_FLOAT : MF_PRECISION_DOUBLE;
  if (!P.bad && !simplex && (refine < 0 || refine > (dim == 3 ? 12 : 18)))
    opt_error(&P, "option --refine: %d out of range 0..%d for --dim %d", refine, dim == 3 ? 12 : 18, dim);
  if (!P.bad && given_levels && adapt_i == 0) opt_error(&P, "option --levels needs --adapt shells");
  if (!P.bad && given_pc_degree && pcopt.kind != MF_PC_CHEBYSHEV && pcopt.kind != MF_PC_MULTIGRID)
    opt_error(&P, "option --pc-degree needs --pc chebyshev or --pc mg (not '%s')", pcs[pc_i]);
  if (!P.bad && prec_i && pcopt.kind != MF_PC_MULTIGRID)
    opt_error(&P, "option --mg-precision %s needs --pc mg (not '%s')", precs[prec_i], pcs[pc_i]);
  if (!P.bad && coarse_i && pcopt.kind != MF_PC_MULTIGRID)
    opt_error(&P, "option --mg-coarse %s needs --pc mg (not '%s')", coarses[coarse_i], pcs[pc_i]);
  if (!P.bad && coarse_i && prec_i)
    opt_error(&P, "option --mg-coarse %s needs --mg-precision double (not '%s')", coarses[coarse_i], precs[prec_i]);
  pcopt.coarse = coarse_i ? MF_MG_COARSE_ASSEMBLED : MF_MG_COARSE_MATRIX_FREE;
  if (!P.bad && given_every && !verbose) opt_error(&P, "option --verbose-every needs --verbose");
  /* the assembled operator has a diagonal but no multigrid hierarchy, and its Chebyshev use is untested */
  if (!P.bad && method_i && pcopt.kind != MF_PC_JACOBI && pcopt.kind != MF_PC_NONE)
    opt_error(&P, "option --method %s needs --pc jacobi or --pc none (not '%s')", methods[method_i], pcs[pc_i]);
  if (!P.bad && variant_i && !method_i)
    opt_error(&P, "option --assembly-variant %s needs --method assembled or both", variants[variant_i]);
  pcopt.variant = (mf_assembly_variant)variant_i;
  pcopt.source_fields = fields_i;
  if (P.bad) return 2;
  const char *mesh_name = simplex ? mesh_arg : mesh_names[mesh_i], *backend = backends[backend_i], *coef_name = coefs[coef_i];
  const char *adapt = adapts[adapt_i], *pc_name = pcs[pc_i], *mg_prec = precs[prec_i];
  const char *mg_coarse = coarses[coarse_i];
  const poisson_coef coef = coef_i ? POISSON_COEF_LJUNGKVIST : POISSON_COEF_CONSTANT;

  MPI_Init(&argc, &argv);
  int rank, nranks;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &nranks);
  if (rank) fclose(stderr), stderr = fopen("/dev/null", "w");
  progress pg = {verbose && !rank, every, NULL, MPI_Wtime(), {0}, 0.0};

  /* the JSON file is opened (by rank 0, which writes it) before any work: a path that cannot be
   * written fails now, not after the solve */
  FILE *jf = NULL;
  int jerr = 0;
  if (json && !rank && !(jf = fopen(json, "w"))) {
    fprintf(stderr, "mfree-poisson: option --json: cannot open '%s' for writing: %s\n", json, strerror(errno));
    jerr = 1;
  }
  if (vtu && !rank && !jerr) { /* the prefix by the library's rules (mf_vector_write_vtu), now */
    const size_t plen = strlen(vtu);
    const char *slash = strrchr(vtu, '/'), *base = slash ? slash + 1 : vtu;
    if (!plen || vtu[plen - 1] == '/' || strpbrk(base, "<>&\"'")) {
      fprintf(stderr, "mfree-poisson: option --vtu: '%s' names no file, or its file name holds one of < > & \" '\n",
              vtu);
      jerr = 1;
      if (jf) fclose(jf), jf = NULL, remove(json);
    }
  }
  MPI_Bcast(&jerr, 1, MPI_INT, 0, MPI_COMM_WORLD);
  if (vtu && !jerr) { /* the same for the ParaView files: every rank's piece PREFIX_<rank>.vtu and rank
                       * 0's PREFIX.pvtu, each opened without truncating it (an earlier run's file stays
                       * until the new one is written) and removed again if it was not there; rank 0
                       * names the lowest rank that cannot write its file */
    char path[4096];
    int e = 0, in[2], out[2];
    for (int k = 0; k < (rank ? 1 : 2) && !e; k++) { /* the piece, then (rank 0) the .pvtu */
      if (snprintf(path, sizeof path, k ? "%s.pvtu" : "%s_%d.vtu", vtu, rank) >= (int)sizeof path) e = ENAMETOOLONG;
      else e = probe_writable(path);
    }
    in[0] = e ? rank : nranks, in[1] = e;
    MPI_Allreduce(in, out, 1, MPI_2INT, MPI_MINLOC, MPI_COMM_WORLD);
    if (out[0] < nranks) {
      if (!rank) { /* rank 0's failure is its piece or its .pvtu: path names it; another rank's is its piece */
        char rpath[4096], who[32] = "";
        if (out[0]) snprintf(rpath, sizeof rpath, "%s_%d.vtu", vtu, out[0]);
        else snprintf(rpath, sizeof rpath, "%s", path);
        if (nranks > 1) snprintf(who, sizeof who, "rank %d: ", out[0]);
        fprintf(stderr, "mfree-poisson: option --vtu: %scannot open '%s' for writing: %s\n", who, rpath, strerror(out[1]));
      }
      jerr = 1;
      if (jf) fclose(jf), jf = NULL, remove(json);
    }
  }
  if (jerr) {
    MPI_Finalize();
    return 2;
  }

  int ierr;
  const char *failed = NULL; /* the option that fed a failing call */
  mf_context ctx = NULL;
  mf_mesh mesh = NULL;
  poisson_result res;
  memset(&res, 0, sizeof res);
  double t_mesh = 0.0, phases[MF_PHASE_COUNT] = {0};
  ierr = mf_context_create(MPI_COMM_WORLD, backend, &ctx);
  if (ierr) failed = "--backend";
  pg.ctx = ctx;
  pcopt.ctx = ctx;
  if (!ierr) {
    char line[128];
    snprintf(line, sizeof line, "backend %s, %d rank(s)", mf_context_backend(ctx), nranks);
    say(&pg, "context", line);
    MPI_Barrier(MPI_COMM_WORLD);
    t_mesh = MPI_Wtime();
    const int tt[3] = {trees, trees, trees};
    if (simplex == 2) {
      if (!given_refine) refine = 0;
      mf_mesh file = NULL;
      ierr = mf_mesh_create_from_file(ctx, mesh_name, given_dim ? dim : 0, &file); /* 0: the file's dimension */
      if (!ierr) ierr = mf_mesh_dim(file, &dim);
      if (!ierr && refine == 0) mesh = file, file = NULL;
      else if (!ierr) ierr = mf_mesh_refine(file, refine, &mesh); /* the file's mesh refined uniformly */
      mf_mesh_destroy(&file);
    }
    else if (simplex == 1 && pc_i == 2 && refine > 1) { /* multigrid: the level-1 box refined, nested levels */
      mf_mesh base = NULL;
      ierr = mf_mesh_create(ctx, mesh_name, dim, 1, &base);
      if (!ierr) ierr = mf_mesh_refine(base, refine - 1, &mesh);
      mf_mesh_destroy(&base);
    } else if (simplex == 1) ierr = mf_mesh_create(ctx, mesh_name, dim, refine, &mesh);
    else ierr = mf_mesh_create_box(ctx, mesh_name, dim, tt, refine, &mesh);
    if (ierr) failed = simplex == 2 ? "--mesh" : "--mesh, --dim, --trees or --refine";
  }
  int64_t ncells = 0;
  if (!ierr) ierr = mf_mesh_num_cells(mesh, &ncells);
  if (!ierr) {
    char line[160];
    if (simplex == 2) snprintf(line, sizeof line, "%s, dim %d, refined %d times: %lld cells", mesh_name, dim, refine, (long long)ncells);
    else if (simplex) snprintf(line, sizeof line, "%s, dim %d, refine %d: %lld cells", mesh_name, dim, refine, (long long)ncells);
    else
      snprintf(line, sizeof line, "%s, dim %d, %d tree(s) per direction, refine %d: %lld cells", mesh_name, dim, trees,
               refine, (long long)ncells);
    say(&pg, "mesh", line);
  }
  if (!ierr && adapt_i) {
    ierr = mf_mesh_refine_shells(mesh, levels);
    if (ierr) failed = "--levels";
    if (!ierr) ierr = mf_mesh_num_cells(mesh, &ncells);
    if (!ierr) {
      char line[128];
      snprintf(line, sizeof line, "shells, %d level(s): %lld cells", levels, (long long)ncells);
      say(&pg, "adapt", line);
    }
  }
  if (!ierr) t_mesh = MPI_Wtime() - t_mesh;
  if (!ierr) {
    pcopt.progress = on_progress;
    pcopt.monitor = verbose ? on_iteration : NULL;
    pcopt.user = &pg;
    pcopt.assembled = method_i == 1;
    ierr = poisson_solve_vtu(mesh, degree, coef, tol, &pcopt, vtu, &res);
    failed = res.failed_option;
  }
  if (!ierr) memcpy(phases, res.setup_phases, sizeof phases); /* the first run's phases at the end of its set-up */
  poisson_result res_asm; /* --method both: the assembled run, after the matrix-free one on the same mesh */
  memset(&res_asm, 0, sizeof res_asm);
  if (!ierr && method_i == 2) {
    pcopt.assembled = 1;
    ierr = poisson_solve_vtu(mesh, degree, coef, tol, &pcopt, NULL, &res_asm);
    failed = res_asm.failed_option;
  }
  size_t mem_in_use = 0, mem_peak = 0;
  if (!ierr) ierr = mf_context_device_memory(ctx, &mem_in_use, &mem_peak);
  if (ierr) {
    const char *size_options = simplex == 2   ? "--mesh, --degree, --method"
                               : simplex == 1 ? "--mesh, --refine, --degree, --method"
                               : adapt_i      ? "--refine, --trees, --degree, --levels, --method, --pc"
                                              : "--refine, --trees, --degree, --method, --pc";
    int rc = report(ierr, failed, size_options);
    if (jf) fclose(jf), remove(json); /* no result: no file that looks like one */
    mf_mesh_destroy(&mesh);
    mf_context_destroy(&ctx);
    MPI_Finalize();
    return rc;
  }
  /* set-up: mesh to solver ready (the Jacobi diagonal included). Each figure is the slowest rank's;
   * "other" is the set-up time outside the library's phases (vectors, the operator application of the
   * boundary lift), per rank. */
  double setup = t_mesh + res.setup_s, other = setup;
  for (int k = 0; k < MF_PHASE_COUNT; k++) other -= phases[k];
  MPI_Allreduce(MPI_IN_PLACE, &setup, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  MPI_Allreduce(MPI_IN_PLACE, &other, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  MPI_Allreduce(MPI_IN_PLACE, phases, MF_PHASE_COUNT, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  /* --method both: set-up (space to solver ready) of each run and the assembly, the slowest rank's */
  double setup_mf[3] = {res.setup_s, res_asm.setup_s, res_asm.assembly_s};
  MPI_Allreduce(MPI_IN_PLACE, setup_mf, 3, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  /* the operators side by side: throughput of one application (the slowest rank's), the memory
   * models over all ranks (quadrature data: the Laplace tensor's dim (dim + 1) / 2 entries per Gauss
   * point, (p + 1)^dim points per cell; matrix: values, columns, row starts), device memory (rank 0) */
  double apply_s[2] = {res.apply_s, res_asm.apply_s}, matrix_mb[2] = {res.local_bytes / 1e6, res_asm.local_bytes / 1e6};
  MPI_Allreduce(MPI_IN_PLACE, apply_s, 2, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  MPI_Allreduce(MPI_IN_PLACE, matrix_mb, 2, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
  const double dofs_per_apply[2] = {apply_s[0] > 0 ? res.ndofs / apply_s[0] : 0.0,
                                    apply_s[1] > 0 ? res.ndofs / apply_s[1] : 0.0};
  /* simplices store no quadrature data (affine geometry from the vertices at every application) */
  const double qdata_mb = simplex ? 0.0 : 8.0 * (double)ncells * (dim == 2 ? 3 : 6) * pow(degree + 1, dim) / 1e6;
  char mesh_line[4200], degree_line[96];
  if (simplex == 2 && refine > 0)
    snprintf(mesh_line, sizeof mesh_line, "%s (Gmsh file), dim %d, refine %d (%lld cells)", mesh_name, dim, refine,
             (long long)ncells);
  else if (simplex == 2)
    snprintf(mesh_line, sizeof mesh_line, "%s (Gmsh file), dim %d (%lld cells)", mesh_name, dim, (long long)ncells);
  else if (simplex)
    snprintf(mesh_line, sizeof mesh_line, "%s, dim %d, refine %d (%d cells per side), adapt %s (%lld cells)", mesh_name, dim,
             refine, 1 << refine, adapt, (long long)ncells);
  else
    snprintf(mesh_line, sizeof mesh_line, "%s, dim %d, %d tree(s) per direction, refine %d, adapt %s (%lld cells)", mesh_name,
             dim, trees, refine, adapt, (long long)ncells);
  if (simplex) snprintf(degree_line, sizeof degree_line, "%d (P%d, rule of degree %d)", degree, degree, 2 * degree);
  else snprintf(degree_line, sizeof degree_line, "%d (Q%d, Gauss q = %d)", degree, degree, degree + 1);
  const int on_device = strcmp(mf_context_backend(ctx), "cpu") != 0;
  char dev_note[1][96] = {""};
  if (on_device) snprintf(dev_note[0], sizeof dev_note[0], "; %.3f MB of device memory (rank 0)", res.op_device_bytes / 1e6);
  const char *be = mf_context_backend(ctx);
  double dofs_per_s = res.s_per_iter > 0 ? res.ndofs / res.s_per_iter : 0.0;
  if (!rank) {
    printf("mfree-poisson: -div(c grad u) = f, manufactured solution\n"
           "  mesh           %s\n"
           "  degree         %s\n"
           "  coefficient    %s%s\n"
           "  DoFs           %lld\n"
           "  ranks          %d\n"
           "  backend        %s\n"
           "  preconditioner %s\n"
           "  CG iterations  %d (%s, relative residual %.2e, tol %.1e)\n"
           "  setup time     %.3f s (mesh to solver ready)\n"
           "  solve time     %.3f s (%.3e s per iteration, %.3e DoF/s per iteration)\n"
           "  L2 error       %.6e (%.3f s)\n"
           "  H1 error       %.6e (seminorm, ||grad(u_h - u)||_L2)\n"
           "  device memory  %.3f GB peak (rank 0)\n",
           mesh_line, degree_line, coef_name, fields_i ? " (u, f, c as source)" : "", (long long)res.ndofs, nranks, be,
           pc_name, res.iterations, res.converged ? "converged" : "NOT converged", res.residual, tol, setup,
           res.solve_s, res.s_per_iter, dofs_per_s, res.l2_error, res.error_s, res.h1_error, mem_peak / 1e9);
    printf("  setup          phase          seconds   share\n");
    for (int k = 0; k < MF_PHASE_COUNT; k++)
      printf("                 %-12s %9.4f  %5.1f%%\n", mf_phase_name((mf_phase)k), phases[k],
             setup > 0 ? 100.0 * phases[k] / setup : 0.0);
    printf("                 %-12s %9.4f  %5.1f%%\n", "other", other, setup > 0 ? 100.0 * other / setup : 0.0);
    printf("  solve rate     %.3e DoF/s (DoFs / solve time)\n", res.solve_s > 0 ? res.ndofs / res.solve_s : 0.0);
    if (method_i == 0 && simplex)
      printf("  operator       matrix-free on simplices: %.3e DoF/s per application; no quadrature data (affine "
             "geometry from the vertices)\n", dofs_per_apply[0]);
    else if (method_i == 0)
      printf("  operator       matrix-free: %.3e DoF/s per application; quadrature data %.3f MB (model, all ranks)%s\n",
             dofs_per_apply[0], qdata_mb, dev_note[0]);
    if (method_i == 1)
      printf("  operator       assembled (CSR, variant %s): %lld nonzeros, %.3f MB on rank 0, %.3f MB on all ranks; "
             "assembly %.3f s (within the set-up); %.3e DoF/s per application%s\n",
             variants[variant_i], (long long)res.local_nnz, res.local_bytes / 1e6, matrix_mb[0], res.assembly_s,
             dofs_per_apply[0], dev_note[0]);
    if (method_i == 2) { /* the two runs on the same mesh and problem, one after the other */
      const poisson_result *r[2] = {&res, &res_asm};
      char asm_setup[64], mem_mf[64];
      snprintf(asm_setup, sizeof asm_setup, "%.3f s (assembly %.3f s, %s)", setup_mf[1], setup_mf[2], variants[variant_i]);
      snprintf(mem_mf, sizeof mem_mf, "%.3f MB quad. data", qdata_mb);
      printf("  method         %-22s %-22s (same mesh, problem and preconditioner; slowest rank's times)\n"
             "  set-up         %-9.3f s %11s %s; space to solver ready\n"
             "  CG iterations  %-22d %d\n"
             "  s per iter.    %-22.3e %.3e\n"
             "  DoF/s per it.  %-22.3e %.3e\n"
             "  apply DoF/s    %-22.3e %.3e (operator alone, 10 applications)\n"
             "  memory         %-22s %.3f MB matrix (all ranks; model: 12 B per nonzero, 8 B per row)\n",
             "matrix-free", "assembled", setup_mf[0], "", asm_setup, r[0]->iterations, r[1]->iterations,
             r[0]->s_per_iter, r[1]->s_per_iter, r[0]->s_per_iter > 0 ? r[0]->ndofs / r[0]->s_per_iter : 0.0,
             r[1]->s_per_iter > 0 ? r[1]->ndofs / r[1]->s_per_iter : 0.0, dofs_per_apply[0], dofs_per_apply[1], mem_mf,
             matrix_mb[1]);
      if (on_device) {
        char dmf[64], dpk[64];
        snprintf(dmf, sizeof dmf, "%.3f MB", res.op_device_bytes / 1e6);
        snprintf(dpk, sizeof dpk, "%.3f GB", res.device_peak / 1e9);
        printf("  device memory  %-22s %.3f MB (the operator's, rank 0)\n"
               "  device peak    %-22s %.3f GB (rank 0, since the start, after each run)\n",
               dmf, res_asm.op_device_bytes / 1e6, dpk, res_asm.device_peak / 1e9);
      }
      printf("  L2 error       %-22.6e %.6e\n", r[0]->l2_error, r[1]->l2_error);
      printf("  H1 error       %-22.6e %.6e\n", r[0]->h1_error, r[1]->h1_error);
    }
    if (res.levels) {
      printf("  multigrid      %d levels in %s, coarsest %s, set-up %.3f s (within the set-up above), V-cycle %.3e s\n"
             "                 level  degree         DoFs      cells   s per V-cycle  share\n",
             res.levels, mg_prec, mg_coarse, res.pc_setup_s, res.vcycle_s);
      for (int k = res.levels - 1; k >= 0; k--)
        printf("                 %5d  %6d %12lld %10lld   %13.3e  %4.1f%%\n", k, res.level_degree[k],
               (long long)res.level_dofs[k], (long long)res.level_cells[k], res.level_s[k],
               res.vcycle_s > 0 ? 100.0 * res.level_s[k] / res.vcycle_s : 0.0);
    }
    if (jf) { /* opened at the start */
      FILE *f = jf;
      fprintf(f,
              "{\"ndofs\": %lld, \"ranks\": %d, \"backend\": \"%s\", \"degree\": %d, \"dim\": %d, "
              "\"mesh\": \"%s\", \"trees\": %d, \"refine\": %d, \"adapt\": \"%s\", \"cells\": %lld, \"coefficient\": \"%s\", \"fields\": \"%s\", \"iterations\": %d, "
              "\"converged\": %s, \"setup_s\": %.6e, \"solve_s\": %.6e, \"s_per_iteration\": %.6e, "
              "\"dofs_per_s_per_iteration\": %.6e, \"l2_error\": %.10e, \"l2_error_s\": %.6e, \"h1_error\": %.10e, "
              "\"device_mem_peak_bytes\": %zu, \"setup_phases_s\": {",
              (long long)res.ndofs, nranks, be, degree, dim, mesh_name, trees, refine, adapt, (long long)ncells, coef_name,
              fields[fields_i], res.iterations,
              res.converged ? "true" : "false", setup, res.solve_s, res.s_per_iter, dofs_per_s,
              res.l2_error, res.error_s, res.h1_error, mem_peak);
      for (int k = 0; k < MF_PHASE_COUNT; k++) fprintf(f, "\"%s\": %.6e, ", mf_phase_name((mf_phase)k), phases[k]);
      fprintf(f, "\"other\": %.6e}, \"pc\": \"%s\", \"pc_setup_s\": %.6e, \"solve_dofs_per_s\": %.6e",
              other, pc_name, res.pc_setup_s, res.solve_s > 0 ? res.ndofs / res.solve_s : 0.0);
      fprintf(f, ", \"method\": \"%s\"", methods[method_i]);
      fprintf(f, ", \"apply_s\": %.6e, \"operator_device_bytes\": %zu", apply_s[0], res.op_device_bytes);
      if (method_i != 1) fprintf(f, ", \"qdata_bytes_model\": %.6e", qdata_mb * 1e6);
      if (method_i) fprintf(f, ", \"assembly_variant\": \"%s\"", variants[variant_i]);
      if (method_i == 1)
        fprintf(f, ", \"assembly_s\": %.6e, \"matrix_bytes_rank0\": %.6e, \"matrix_bytes\": %.6e", res.assembly_s,
                res.local_bytes, matrix_mb[0] * 1e6);
      if (method_i == 2)
        fprintf(f,
                ", \"assembled\": {\"iterations\": %d, \"setup_s\": %.6e, \"assembly_s\": %.6e, \"s_per_iteration\": %.6e, "
                "\"apply_s\": %.6e, \"matrix_bytes_rank0\": %.6e, \"matrix_bytes\": %.6e, \"operator_device_bytes\": %zu, "
                "\"device_mem_peak_bytes\": %zu, \"l2_error\": %.10e, \"h1_error\": %.10e}",
                res_asm.iterations, setup_mf[1], setup_mf[2], res_asm.s_per_iter, apply_s[1], res_asm.local_bytes,
                matrix_mb[1] * 1e6, res_asm.op_device_bytes, res_asm.device_peak, res_asm.l2_error, res_asm.h1_error);
      if (res.levels) {
        fprintf(f, ", \"mg_precision\": \"%s\", \"mg_coarse\": \"%s\", \"vcycle_s\": %.6e, \"mg_levels\": [", mg_prec,
                mg_coarse, res.vcycle_s);
        for (int k = 0; k < res.levels; k++)
          fprintf(f, "%s{\"degree\": %d, \"ndofs\": %lld, \"cells\": %lld, \"vcycle_s\": %.6e}", k ? ", " : "",
                  res.level_degree[k], (long long)res.level_dofs[k], (long long)res.level_cells[k], res.level_s[k]);
        fprintf(f, "]");
      }
      fprintf(f, "}\n");
      if (fclose(f)) {
        fprintf(stderr, "mfree-poisson: option --json: writing '%s' failed: %s\n", json, strerror(errno));
        ierr = 1;
      }
    }
  }
  MPI_Bcast(&ierr, 1, MPI_INT, 0, MPI_COMM_WORLD);
  if (!ierr && (!res.converged || (method_i == 2 && !res_asm.converged))) ierr = 3;
  mf_mesh_destroy(&mesh);
  mf_context_destroy(&ctx);
  MPI_Finalize();
  return ierr;
}
