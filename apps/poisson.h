/* poisson.h -- the manufactured Poisson problem of mfree-poisson, shared with the tests:
 *   -div(c grad u) = f in the domain, u = g on the boundary, with
 *   u(x) = prod_k sin(pi x_k + phi_k)   (phi = 0.3, 0.5, 0.7: nonzero on every boundary)
 *   c(x) = 1 (constant) or 1/(0.05 + 2|x|^2) (ljungkvist).
 * Errors of the solution u_h: ||u_h - u||_L2 and the H1 seminorm |u_h - u|_H1 = ||grad(u_h - u)||_L2.
 * Solve: u_h = w + g_h, g_h the boundary interpolant, A_0 w = b - A g_h with A_0 the Dirichlet
 * form of A (boundary rows and columns replaced by the identity).                               */
#ifndef MFREE_POISSON_H
#define MFREE_POISSON_H

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "mfree.h"

typedef enum { POISSON_COEF_CONSTANT = 0, POISSON_COEF_LJUNGKVIST = 1 } poisson_coef;

static const double poisson_phi[3] = {0.3, 0.5, 0.7};

static double poisson_u(const double *x, int dim, void *user)
{
  (void)user;
  double u = 1.0;
  for (int k = 0; k < dim; k++) u *= sin(M_PI * x[k] + poisson_phi[k]);
  return u;
}

/* grad u: d u / d x_k = pi cos(pi x_k + phi_k) prod_{j != k} sin(pi x_j + phi_j) (for the H1 error) */
static void poisson_grad_u(const double *x, int dim, double *grad, void *user)
{
  (void)user;
  double s[3], c[3];
  for (int k = 0; k < dim; k++) {
    s[k] = sin(M_PI * x[k] + poisson_phi[k]);
    c[k] = cos(M_PI * x[k] + poisson_phi[k]);
  }
  for (int k = 0; k < dim; k++) {
    double g = M_PI * c[k];
    for (int j = 0; j < dim; j++)
      if (j != k) g *= s[j];
    grad[k] = g;
  }
}

static double poisson_c(const double *x, int dim, void *user)
{
  if (*(const poisson_coef *)user == POISSON_COEF_CONSTANT) return 1.0;
  double r2 = 0.0;
  for (int k = 0; k < dim; k++) r2 += x[k] * x[k];
  return 1.0 / (0.05 + 2.0 * r2);
}

/* f = -c lap u - grad c . grad u, lap u = -dim pi^2 u, grad c = -4 x c^2; one sine and cosine per
 * coordinate (the set-up evaluates f at every quadrature point). Thread-safe, as callbacks must be. */
static double poisson_f(const double *x, int dim, void *user)
{
  double s[3] = {1.0, 1.0, 1.0}, co[3] = {0.0, 0.0, 0.0};
  for (int k = 0; k < dim; k++) {
    s[k] = sin(M_PI * x[k] + poisson_phi[k]);
    co[k] = cos(M_PI * x[k] + poisson_phi[k]);
  }
  const double u = s[0] * s[1] * s[2], c = poisson_c(x, dim, user);
  double f = c * dim * M_PI * M_PI * u;
  if (*(const poisson_coef *)user == POISSON_COEF_LJUNGKVIST)
    for (int k = 0; k < dim; k++) {
      double du = M_PI * co[k];
      for (int j = 0; j < dim; j++)
        if (j != k) du *= s[j];
      f += 4.0 * c * c * x[k] * du;
    }
  return f;
}

/* The same problem as C source (mf_source, mf_physics_set_source: evaluated where the vectors live, on the
 * device on cuda): u, f and the coefficient as g3 = c(x) I; k[0] = the coefficient (0 constant, 1 ljungkvist). */
static const char *const poisson_source =
    "#include <math.h>\n"
    "#define POISSON_PI 3.14159265358979323846\n"
    "static double poisson_src_c(int dim, const double *x, const double *k)\n"
    "{\n"
    "  if (k[0] == 0.0) return 1.0;\n"
    "  double r2 = 0.0;\n"
    "  for (int d = 0; d < dim; d++) r2 += x[d] * x[d];\n"
    "  return 1.0 / (0.05 + 2.0 * r2);\n"
    "}\n"
    "void poisson_src_u(int dim, const double *x, const double *k, double *v)\n"
    "{\n"
    "  const double phi[3] = {0.3, 0.5, 0.7};\n"
    "  double u = 1.0;\n"
    "  for (int d = 0; d < dim; d++) u *= sin(POISSON_PI * x[d] + phi[d]);\n"
    "  v[0] = u;\n"
    "}\n"
    "void poisson_src_f(int dim, const double *x, const double *k, double *v)\n"
    "{\n"
    "  const double phi[3] = {0.3, 0.5, 0.7};\n"
    "  double s[3] = {1.0, 1.0, 1.0}, co[3] = {0.0, 0.0, 0.0};\n"
    "  for (int d = 0; d < dim; d++) {\n"
    "    s[d] = sin(POISSON_PI * x[d] + phi[d]);\n"
    "    co[d] = cos(POISSON_PI * x[d] + phi[d]);\n"
    "  }\n"
    "  const double u = s[0] * s[1] * s[2], c = poisson_src_c(dim, x, k);\n"
    "  double f = c * dim * POISSON_PI * POISSON_PI * u;\n"
    "  if (k[0] != 0.0)\n"
    "    for (int d = 0; d < dim; d++) {\n"
    "      double du = POISSON_PI * co[d];\n"
    "      for (int j = 0; j < dim; j++)\n"
    "        if (j != d) du *= s[j];\n"
    "      f += 4.0 * c * c * x[d] * du;\n"
    "    }\n"
    "  v[0] = f;\n"
    "}\n"
    "void poisson_src_g3(int dim, int nc, const double *u, const double *du, const double *x, const double *k, double *g3)\n"
    "{\n"
    "  const double c = poisson_src_c(dim, x, k);\n"
    "  for (int d = 0; d < dim; d++) g3[d * dim + d] = c;\n"
    "}\n";

/* Progress of a solve: called after each step ("space", "operator", "right-hand side", "solver",
 * "solve", "L2 error", "H1 error", "multigrid profile") with a short description of what it made. */
typedef void (*poisson_progress_fn)(const char *step, const char *detail, void *user);

/* The preconditioner of the solve (mfree-poisson --pc, --pc-degree, --mg-precision, --mg-coarse) and what watches
 * it (--verbose); zero-initialised members take the defaults. */
typedef struct {
  mf_pc_kind kind; /* MF_PC_JACOBI (default), MF_PC_CHEBYSHEV, MF_PC_MULTIGRID or MF_PC_NONE */
  int degree;      /* Chebyshev degree, or the multigrid smoother's (0: the library's default) */
  int profile;     /* multigrid: time 10 V-cycles level by level after the solve */
  mf_precision precision; /* multigrid: the V-cycle's precision */
  poisson_progress_fn progress; /* NULL: silent */
  mf_cg_monitor_fn monitor;     /* the CG's monitor (NULL: none) */
  void *user;                   /* of both */
  int assembled;                /* solve with the assembled (CSR) operator instead of the matrix-free one */
  mf_assembly_variant variant;  /* assembled: how its values are computed (MF_ASSEMBLY_AUTO: the default) */
  mf_context ctx;               /* the mesh's context, for the device memory figures (NULL: none) */
  mf_mg_coarse coarse;          /* multigrid: the coarsest level's operator (default matrix-free) */
  double *solution;             /* if not NULL: u_h's owned values (mf_space_local_sizes' nowned of them)
                                   copied here after the solve */
  int source_fields;            /* (needs ctx) u, f and c as source (poisson_source), evaluated where
                                   the vectors live, the operator a physics (mfree-poisson --fields source) */
} poisson_pc;

#define POISSON_MAX_LEVELS 48

typedef struct {
  int64_t ndofs;
  int iterations, converged;
  double lambda_max; /* Chebyshev: the estimated largest eigenvalue of D^-1 A */
  double pc_setup_s; /* the preconditioner's set-up (multigrid: the whole hierarchy) */
  int levels;        /* multigrid: levels (coarsest first), their degrees, DoFs, cells, V-cycle split */
  int level_degree[POISSON_MAX_LEVELS];
  int64_t level_dofs[POISSON_MAX_LEVELS], level_cells[POISSON_MAX_LEVELS];
  double vcycle_s, level_s[POISSON_MAX_LEVELS];
  double setup_s, solve_s, s_per_iter, l2_error, residual;
  double h1_error; /* the H1 seminorm of the error, |u_h - u|_H1 */
  double error_s; /* time of the L2 error after the solve */
  double setup_phases[MF_PHASE_COUNT]; /* with opt->ctx: the context's phase times at the end of the set-up */
  double assembly_s;  /* assembled: the assembly's time (within setup_s) */
  int64_t local_nnz;  /* assembled: nonzeros of this rank's matrix */
  double local_bytes; /* assembled: bytes of this rank's matrix (values, columns, row starts) */
  double apply_s;     /* seconds per application of the operator CG used (after the solve, 10 applications) */
  size_t op_device_bytes; /* device memory the operator CG used added when it was made (0 on 'cpu'; the
                             assembled one: its sparsity pattern, values, product buffers, work vector) */
  size_t device_peak;     /* the context's device memory peak after the solve (0 on 'cpu') */
  const char *failed_option; /* on an error: the mfree-poisson option whose value fed the failing call, or NULL */
} poisson_result;

#define POISSON_CALL(expr)   \
  do {                       \
    ierr = (expr);           \
    if (ierr) goto cleanup;  \
  } while (0)
/* The same for a call that an option of mfree-poisson feeds. */
#define POISSON_CALL_OPT(option, expr)  \
  do {                                  \
    ierr = (expr);                      \
    if (ierr) {                         \
      res->failed_option = option;      \
      goto cleanup;                     \
    }                                   \
  } while (0)

static inline void poisson_progress(const poisson_pc *opt, const char *step, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;
static inline void poisson_progress(const poisson_pc *opt, const char *step, const char *fmt, ...)
{
  if (!opt || !opt->progress) return;
  char detail[256];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(detail, sizeof detail, fmt, ap);
  va_end(ap);
  opt->progress(step, detail, opt->user);
}

/* Device memory in use and peak (either may be NULL): 0 without opt->ctx. */
static inline int poisson_device_memory(const poisson_pc *opt, size_t *in_use, size_t *peak)
{
  if (in_use) *in_use = 0;
  if (peak) *peak = 0;
  return opt && opt->ctx ? mf_context_device_memory(opt->ctx, in_use, peak) : 0;
}

/** Solve the manufactured problem on mesh with Q_degree and the preconditioner pcopt (NULL: Jacobi);
 *  with vtu != NULL also write the solution u_h for ParaView (vtu.pvtu, mf_vector_write_vtu, field
 *  "u"). Returns 0 or the first error code. */
static int poisson_solve_vtu(mf_mesh mesh, int degree, poisson_coef coef, double tol, const poisson_pc *pcopt,
                             const char *vtu, poisson_result *res)
{
  int ierr = 0;
  mf_space space = NULL;
  mf_operator A = NULL, S = NULL;
  mf_vector b = NULL, x = NULL, g = NULL, t = NULL;
  mf_cg cg = NULL;
  mf_pc pc = NULL;
  mf_physics ph = NULL;
  mf_source usrc = NULL, fsrc = NULL;
  mf_cg_info info;
  memset(res, 0, sizeof *res);
  double t0 = MPI_Wtime();
  POISSON_CALL_OPT("--degree", mf_space_create(mesh, degree, &space));
  POISSON_CALL(mf_space_num_dofs(space, &res->ndofs));
  mf_cell_kind cells = MF_CELL_HEX;
  POISSON_CALL(mf_mesh_cell_kind(mesh, &cells));
  const int simplex = cells == MF_CELL_SIMPLEX; /* P_p on triangles/tetrahedra, one rank */
  poisson_progress(pcopt, "space", "%s%d, %lld DoFs", simplex ? "P" : "Q", degree, (long long)res->ndofs);
  size_t dev0 = 0, dev1 = 0;
  POISSON_CALL(poisson_device_memory(pcopt, &dev0, NULL));
  /* c = 1 on simplices: no callback, so that the kernels combine reference tables (no c(x_q) stored or
   * read: the reference and gradient forms of lib/cuda/simplex.cu) */
  const mf_coefficient_fn cfn = simplex && coef == POISSON_COEF_CONSTANT ? NULL : poisson_c;
  const int src = pcopt && pcopt->source_fields && pcopt->ctx;
  const double kc = coef == POISSON_COEF_LJUNGKVIST ? 1.0 : 0.0;
  if (src) { /* the same operator as a physics: c(x) evaluated where the operator lives (on simplices on cuda
                g3 = c I runs on the built-in kernels, c(x_q) made on the device) */
    POISSON_CALL(mf_physics_create(pcopt->ctx, 1, &ph));
    POISSON_CALL(mf_physics_set_source(ph, poisson_source, "g3=poisson_src_g3"));
    POISSON_CALL(mf_physics_set_constants(ph, 1, &kc));
    POISSON_CALL(mf_operator_create_physics(space, ph, MF_QUAD_GAUSS, &A));
  } else POISSON_CALL(mf_operator_create_laplace(space, MF_QUAD_GAUSS, cfn, &coef, &A));
  if (src) { /* u and f as source */
    POISSON_CALL(mf_source_create(pcopt->ctx, poisson_source, "poisson_src_u", 1, &usrc));
    POISSON_CALL(mf_source_create(pcopt->ctx, poisson_source, "poisson_src_f", 1, &fsrc));
    POISSON_CALL(mf_source_set_constants(usrc, 1, &kc));
    POISSON_CALL(mf_source_set_constants(fsrc, 1, &kc));
  }
  POISSON_CALL(poisson_device_memory(pcopt, &dev1, NULL));
  res->op_device_bytes = dev1 - dev0;
  if (simplex) poisson_progress(pcopt, "operator", "Laplace on simplices, rule of degree %d", 2 * degree);
  else poisson_progress(pcopt, "operator", "Laplace, Gauss q = %d", degree + 1);
  POISSON_CALL(mf_vector_create(space, &b));
  POISSON_CALL(mf_vector_create(space, &x));
  POISSON_CALL(mf_vector_create(space, &g));
  POISSON_CALL(mf_vector_create(space, &t));
  /* b <- F - A g, zero on the boundary */
  if (src) {
    POISSON_CALL(mf_vector_assemble_rhs_source(b, fsrc));
    POISSON_CALL(mf_vector_set_boundary_source(g, usrc));
  } else {
    POISSON_CALL(mf_vector_assemble_rhs(b, poisson_f, &coef));
    POISSON_CALL(mf_vector_set_boundary(g, poisson_u, NULL));
  }
  POISSON_CALL(mf_operator_apply(A, g, t));
  POISSON_CALL(mf_vector_axpy(b, -1.0, t));
  POISSON_CALL(mf_vector_zero_boundary(b));
  poisson_progress(pcopt, "right-hand side", "with the boundary lift");
  POISSON_CALL(mf_operator_set_dirichlet(A, 1));
  if (pcopt && pcopt->assembled) { /* the CSR matrix of the same operator, Dirichlet form included */
    double ta = MPI_Wtime(), nrm;
    POISSON_CALL(poisson_device_memory(pcopt, &dev0, NULL));
    POISSON_CALL(mf_operator_create_assembled_variant(A, pcopt->variant, &S));
    POISSON_CALL(mf_vector_norm2(b, &nrm)); /* a reduction: the assembly's device work is done */
    res->assembly_s = MPI_Wtime() - ta;
    POISSON_CALL(poisson_device_memory(pcopt, &dev1, NULL));
    res->op_device_bytes = dev1 - dev0;
    int nowned, nlocal;
    POISSON_CALL(mf_operator_local_nnz(S, &res->local_nnz));
    POISSON_CALL(mf_space_local_sizes(space, &nowned, &nlocal));
    res->local_bytes = 12.0 * (double)res->local_nnz + 8.0 * ((double)nlocal + 1.0);
    poisson_progress(pcopt, "assembly", "%lld nonzeros on this rank, %.3f s", (long long)res->local_nnz,
                     res->assembly_s);
  }
  POISSON_CALL(mf_cg_create(S ? S : A, &cg));
  POISSON_CALL_OPT("--tol", mf_cg_set_tolerance(cg, tol, 20000));
  if (pcopt && pcopt->monitor) POISSON_CALL(mf_cg_set_monitor(cg, pcopt->monitor, pcopt->user));
  if (pcopt && pcopt->kind != MF_PC_JACOBI) {
    POISSON_CALL_OPT("--pc", mf_pc_create(A, pcopt->kind, &pc));
    if (pcopt->kind == MF_PC_CHEBYSHEV && pcopt->degree > 0)
      POISSON_CALL_OPT("--pc-degree", mf_pc_set_chebyshev(pc, pcopt->degree, 20.0, 12));
    if (pcopt->kind == MF_PC_MULTIGRID && pcopt->degree > 0)
      POISSON_CALL_OPT("--pc-degree", mf_pc_set_multigrid(pc, pcopt->degree, 15.0, 1e-3));
    if (pcopt->kind == MF_PC_MULTIGRID)
      POISSON_CALL_OPT("--mg-precision", mf_pc_set_multigrid_precision(pc, pcopt->precision));
    if (pcopt->kind == MF_PC_MULTIGRID && pcopt->coarse != MF_MG_COARSE_MATRIX_FREE)
      POISSON_CALL_OPT("--mg-coarse", mf_pc_set_multigrid_coarse(pc, pcopt->coarse));
    POISSON_CALL(mf_cg_set_pc(cg, pc));
  }
  POISSON_CALL(mf_vector_set_value(x, 0.0));
  double tp = MPI_Wtime();
  POISSON_CALL(mf_cg_setup(cg)); /* the preconditioner's set-up (diagonal, eigenvalues, levels) belongs to set-up */
  res->pc_setup_s = MPI_Wtime() - tp;
  if (pc && pcopt->kind == MF_PC_CHEBYSHEV) POISSON_CALL(mf_pc_eigenvalue(pc, &res->lambda_max));
  if (pc && pcopt->kind == MF_PC_MULTIGRID) {
    POISSON_CALL(mf_pc_multigrid_levels(pc, &res->levels));
    if (res->levels > POISSON_MAX_LEVELS) res->levels = POISSON_MAX_LEVELS;
    for (int k = 0; k < res->levels; k++)
      POISSON_CALL(mf_pc_multigrid_level(pc, k, &res->level_degree[k], &res->level_dofs[k], &res->level_cells[k]));
  }
  res->setup_s = MPI_Wtime() - t0;
  /* the set-up's phases as they stand now (a run-time compile after the set-up, of the L2 error's source,
   * is the error's time, not the set-up's) */
  if (pcopt && pcopt->ctx) POISSON_CALL(mf_context_phase_times(pcopt->ctx, res->setup_phases));
  if (res->levels) poisson_progress(pcopt, "solver", "CG, multigrid of %d levels", res->levels);
  else poisson_progress(pcopt, "solver", "CG, preconditioner %s", !pcopt || pcopt->kind == MF_PC_JACOBI ? "jacobi"
                                                                  : pcopt->kind == MF_PC_CHEBYSHEV ? "chebyshev" : "none");
  POISSON_CALL(mf_cg_solve(cg, b, x, &info));
  poisson_progress(pcopt, "solve", "%d iterations, %s, %.3f s", info.iterations,
                   info.converged ? "converged" : "NOT converged", info.seconds);
  POISSON_CALL(mf_vector_axpy(x, 1.0, g)); /* u_h = w + g_h */
  if (pcopt && pcopt->solution) POISSON_CALL(mf_vector_get_values(x, pcopt->solution));
  t0 = MPI_Wtime();
  if (src) POISSON_CALL(mf_vector_l2_error_source(x, usrc, &res->l2_error));
  else POISSON_CALL(mf_vector_l2_error(x, poisson_u, NULL, &res->l2_error));
  res->error_s = MPI_Wtime() - t0;
  poisson_progress(pcopt, "L2 error", "%.6e", res->l2_error);
  POISSON_CALL(mf_vector_h1_error(x, poisson_grad_u, NULL, &res->h1_error));
  poisson_progress(pcopt, "H1 error", "%.6e (seminorm)", res->h1_error);
  if (vtu) {
    POISSON_CALL_OPT("--vtu", mf_vector_write_vtu(x, vtu, "u"));
    poisson_progress(pcopt, "output", "%s.pvtu", vtu);
  }
  { /* the operator's throughput: 10 applications after a warm-up, the last reduction waits for them */
    mf_operator op = S ? S : A;
    double nrm;
    /* every rank makes every call (a rank that stopped early would leave the others waiting in an
     * exchange); the reductions after them agree on a failure */
    int e = mf_operator_apply(op, x, t);
    POISSON_CALL(mf_vector_norm2(t, &nrm));
    POISSON_CALL(e);
    t0 = MPI_Wtime();
    for (int k = 0; k < 10; k++) {
      const int ek = mf_operator_apply(op, x, t);
      if (!e) e = ek;
    }
    POISSON_CALL(mf_vector_norm2(t, &nrm));
    POISSON_CALL(e);
    res->apply_s = (MPI_Wtime() - t0) / 10;
    POISSON_CALL(poisson_device_memory(pcopt, NULL, &res->device_peak));
  }
  if (pc && pcopt->kind == MF_PC_MULTIGRID && pcopt->profile) { /* 10 V-cycles, level by level */
    POISSON_CALL(mf_pc_apply(pc, b, t)); /* warm-up */
    POISSON_CALL(mf_pc_multigrid_profile(pc, 1));
    t0 = MPI_Wtime();
    for (int k = 0; k < 10; k++) POISSON_CALL(mf_pc_apply(pc, b, t));
    res->vcycle_s = (MPI_Wtime() - t0) / 10;
    POISSON_CALL(mf_pc_multigrid_times(pc, res->level_s));
    for (int k = 0; k < res->levels; k++) res->level_s[k] /= 10;
    POISSON_CALL(mf_pc_multigrid_profile(pc, 0));
    poisson_progress(pcopt, "multigrid profile", "10 V-cycles, %.3e s each", res->vcycle_s);
  }
  res->iterations = info.iterations;
  res->converged = info.converged;
  res->solve_s = info.seconds;
  res->s_per_iter = info.seconds_per_iter;
  res->residual = info.residual / (info.residual0 > 0 ? info.residual0 : 1.0);
cleanup:
  mf_cg_destroy(&cg);
  mf_pc_destroy(&pc);
  mf_physics_destroy(&ph);
  mf_source_destroy(&usrc);
  mf_source_destroy(&fsrc);
  mf_vector_destroy(&t);
  mf_vector_destroy(&g);
  mf_vector_destroy(&x);
  mf_vector_destroy(&b);
  mf_operator_destroy(&S);
  mf_operator_destroy(&A);
  mf_space_destroy(&space);
  return ierr;
}

/** The same without output. */
static inline int poisson_solve_pc(mf_mesh mesh, int degree, poisson_coef coef, double tol, const poisson_pc *pcopt,
                                   poisson_result *res)
{
  return poisson_solve_vtu(mesh, degree, coef, tol, pcopt, NULL, res);
}

/** The same with the Jacobi preconditioner. */
static inline int poisson_solve(mf_mesh mesh, int degree, poisson_coef coef, double tol, poisson_result *res)
{
  return poisson_solve_pc(mesh, degree, coef, tol, NULL, res);
}

#endif
