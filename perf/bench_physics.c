/* bench_physics.c -- mfree-bench's problems of users' physics (mf_operator_create_physics), the CEED
 * benchmark problems written with the pointwise API and compiled at run time (cuda: NVRTC; cpu: the
 * system compiler), on the deformed cube of mfree-bench's bp problems:
 *   bp1-physics   mass, Gauss q = p + 2                     (the built-in: bp1)
 *   bp2           vector mass, 3 components, Gauss q = p + 2
 *   bp3-physics   Laplace, Gauss q = p + 2                  (the built-in: bp3)
 *   bp4           vector Laplace, 3 components, Gauss q = p + 2
 *   bp5-physics   Laplace, Gauss-Lobatto q = p + 1          (the built-in: bp5)
 *   bp6           vector Laplace, 3 components, Gauss-Lobatto q = p + 1
 *   bp3-robin     bp3-physics with a Robin term (g0 = 1, f0 = u) on every face of the box, given as source
 *                 (cuda: the faces' kernel on the device, after the physics' own volume kernel)
 *   bp3-robin-host the same Robin term as C functions (cuda: the faces' terms on the host, through host
 *                 copies of x and y at every application): the path the device's faces kernel replaces
 *   elasticity-mg linear elasticity (E = 1, nu = 0.3), dim components, Gauss q = p + 1, clamped at x = 0
 *                 (box face tag 1), loaded by its weight (f0); CG with multigrid to 1e-8 from u = 0: the
 *                 time to solution (set-up of the operator and the V-cycle, the solve) and its phases
 * DoFs are nodes x components. Byte model (the Robin problems: the volume's alone) (fewest bytes per application): x read once and y written
 * once (8 B each per DoF), the stored entries of every point (8 B each: the layout the operator chose,
 * one block for the vector problems), the node indices (4 B per cell node); bytes_per_dof = that total /
 * DoFs, frac_of_triad = bytes_per_dof x DoF/s / triad. Timing as the other problems (CUDA events, a
 * warm-up, median of the repeats). */
#include "bench_physics.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "hex/mf_hex_physics.h"

static const char *const source =
    "void mass(int dim, int nc, const double *u, const double *du, const double *x, const double *k, double *g0)\n"
    "{\n"
    "  for (int c = 0; c < nc; c++) g0[c * nc + c] = 1.0;\n"
    "}\n"
    "void diffusion(int dim, int nc, const double *u, const double *du, const double *x, const double *k, double *g3)\n"
    "{\n"
    "  for (int c = 0; c < nc; c++)\n"
    "    for (int d = 0; d < dim; d++) g3[((c * nc + c) * dim + d) * dim + d] = 1.0;\n"
    "}\n"
    "void weight(int dim, int nc, const double *u, const double *du, const double *x, const double *k, double *f0)\n"
    "{\n"
    "  f0[1] = k[2];\n"
    "}\n"
    "void stress(int dim, int nc, const double *u, const double *du, const double *x, const double *k, double *f1)\n"
    "{\n"
    "  double tr = 0.0;\n"
    "  for (int d = 0; d < dim; d++) tr += du[d * dim + d];\n"
    "  for (int c = 0; c < dim; c++)\n"
    "    for (int d = 0; d < dim; d++) f1[c * dim + d] = k[1] * (du[c * dim + d] + du[d * dim + c]) + (c == d ? k[0] * tr : 0.0);\n"
    "}\n"
    "void robin_f0(int dim, int nc, const double *u, const double *x, const double *n, const double *k, double *f0)\n"
    "{\n"
    "  f0[0] = u[0];\n"
    "}\n"
    "void robin_g0(int dim, int nc, const double *u, const double *x, const double *n, const double *k, double *g0)\n"
    "{\n"
    "  g0[0] = 1.0;\n"
    "}\n"
    "void tangent(int dim, int nc, const double *u, const double *du, const double *x, const double *k, double *g3)\n"
    "{\n"
    "  for (int c = 0; c < dim; c++)\n"
    "    for (int b = 0; b < dim; b++)\n"
    "      for (int d = 0; d < dim; d++)\n"
    "        for (int e = 0; e < dim; e++)\n"
    "          g3[((c * dim + b) * dim + d) * dim + e] = k[0] * (c == d && b == e) + k[1] * ((c == b && d == e) + (c == e && d == b));\n"
    "}\n";

/* the Robin term of bp3-robin-host as C functions (the same as robin_f0, robin_g0 in the source) */
static void robin_f0_c(int dim, int nc, const double *u, const double *x, const double *n, const double *k, double *f0)
{
  (void)dim, (void)nc, (void)x, (void)n, (void)k;
  f0[0] = u[0];
}
static void robin_g0_c(int dim, int nc, const double *u, const double *x, const double *n, const double *k, double *g0)
{
  (void)dim, (void)nc, (void)u, (void)x, (void)n, (void)k;
  g0[0] = 1.0;
}

enum { ELASTICITY = 6, ROBIN = 7, ROBIN_HOST = 8 };

int mf_bench_physics_problem(const char *name)
{
  static const char *const names[] = {"bp1-physics", "bp2",           "bp3-physics", "bp4",           "bp5-physics",
                                      "bp6",         "elasticity-mg", "bp3-robin",   "bp3-robin-host"};
  for (int i = 0; i < 9; i++)
    if (!strcmp(name, names[i])) return i;
  return -1;
}

/* a line on stdout and in the CSV file (may be NULL), flushed: rows appear as they are measured */
static void emit(FILE *out, const char *line)
{
  printf("%s\n", line);
  fflush(stdout);
  if (out) fprintf(out, "%s\n", line), fflush(out);
}

/* the unit box in t^dim trees of 2^level cells per direction, nodes x nc near the target */
static void box_size(double target, int nc, int dim, int p, int *trees, int *level)
{
  const double cells1d = (pow(target / nc, 1.0 / dim) - 1.0) / p;
  *level = cells1d > 8 ? (int)floor(log2(cells1d / 4.0)) : 0;
  const int t = (int)floor(cells1d / pow(2.0, *level) + 0.5);
  trees[0] = trees[1] = trees[2] = t < 1 ? 1 : t;
}

/* elasticity-mg: one row per degree */
static int elasticity_run(mf_context ctx, const mf_bench_physics_opts *o, FILE *out)
{
  const char *hdr = "device,problem,dim,p,ncomp,ndofs,iterations,converged,setup_s,solve_s,total_s,dofs_per_s,"
                    "compile_s,operator_s,pc_setup_s,rhs_s,mg_precision";
  emit(out, hdr);
  int status = 0;
  for (int di = 0; di < o->ndeg; di++) {
    const int p = o->degrees[di], dim = o->dim, nc = dim, clamped = 1;
    const double E = 1.0, nu = 0.3, k[3] = {E * nu / ((1 + nu) * (1 - 2 * nu)), E / (2 * (1 + nu)), 0.01};
    int trees[3], level;
    box_size(o->target, nc, dim, p, trees, &level);
    mf_mesh mesh = NULL;
    mf_space s = NULL;
    mf_physics ph = NULL;
    mf_operator op = NULL;
    mf_pc pc = NULL;
    mf_cg cg = NULL;
    mf_vector u = NULL, b = NULL;
    mf_cg_info info = {0};
    double phases[MF_PHASE_COUNT] = {0};
    int ierr = mf_mesh_create_box(ctx, "deformed", dim, trees, level, &mesh);
    if (!ierr) ierr = mf_space_create_components(mesh, p, nc, &s);
    if (!ierr) ierr = mf_space_set_dirichlet_tags(s, 1, &clamped);
    if (!ierr) ierr = mf_physics_create(ctx, nc, &ph);
    if (!ierr) ierr = mf_physics_set_source(ph, source, "f0=weight f1=stress g3=tangent");
    if (!ierr) ierr = mf_physics_set_constants(ph, 3, k);
    if (!ierr) ierr = mf_vector_create(s, &u);
    if (!ierr) ierr = mf_vector_create(s, &b);
    mf_device_sync(ctx);
    mf_context_phase_reset(ctx);
    const double t0 = MPI_Wtime();
    if (!ierr) ierr = mf_operator_create_physics(s, ph, MF_QUAD_GAUSS, &op);
    if (!ierr) ierr = mf_operator_set_dirichlet(op, 1);
    mf_device_sync(ctx);
    const double t1 = MPI_Wtime();
    if (!ierr) ierr = mf_vector_set_value(u, 0.0);
    if (!ierr) ierr = mf_operator_residual(op, u, b); /* F(0) = -(load, v) */
    if (!ierr) ierr = mf_vector_scale(b, -1.0);
    mf_device_sync(ctx);
    const double t2 = MPI_Wtime();
    if (!ierr) ierr = mf_pc_create(op, MF_PC_MULTIGRID, &pc);
    if (!ierr && o->mg_float) ierr = mf_pc_set_multigrid_precision(pc, MF_PRECISION_FLOAT);
    if (!ierr) ierr = mf_pc_setup(pc);
    if (!ierr) ierr = mf_cg_create(op, &cg);
    if (!ierr) ierr = mf_cg_set_pc(cg, pc);
    if (!ierr) ierr = mf_cg_set_tolerance(cg, 1e-8, 500);
    mf_device_sync(ctx);
    const double t3 = MPI_Wtime();
    if (!ierr) ierr = mf_cg_solve(cg, b, u, &info);
    mf_device_sync(ctx);
    const double t4 = MPI_Wtime();
    mf_context_phase_times(ctx, phases);
    if (ierr) {
      fprintf(stderr, "mfree-bench: %s p %d: %s\n", o->problem, p, mf_last_error_message());
      status = 1;
    } else {
      char row[512];
      const double n = (double)s->nglobal;
      snprintf(row, sizeof row, "%s,%s,%d,%d,%d,%lld,%d,%d,%.3f,%.3f,%.3f,%.4g,%.3f,%.3f,%.3f,%.3f,%s", o->device,
               o->problem, dim, p, nc, (long long)s->nglobal, info.iterations, info.converged, t3 - t0, t4 - t3,
               t4 - t0, n / (t4 - t0), phases[MF_PHASE_COMPILE], t1 - t0, t3 - t2, t2 - t1, o->mg_float ? "float" : "double");
      emit(out, row);
      if (!info.converged) status = 1;
    }
    mf_cg_destroy(&cg);
    mf_pc_destroy(&pc);
    mf_vector_destroy(&u);
    mf_vector_destroy(&b);
    mf_operator_destroy(&op);
    mf_physics_destroy(&ph);
    mf_space_destroy(&s);
    mf_mesh_destroy(&mesh);
  }
  return status;
}

int mf_bench_physics_run(mf_context ctx, const mf_bench_physics_opts *o, FILE *out)
{
  const int pi = mf_bench_physics_problem(o->problem);
  if (pi < 0) return 1;
  if (pi == ELASTICITY) return elasticity_run(ctx, o, out);
  const int robin = pi == ROBIN || pi == ROBIN_HOST;
  const int nc = !robin && pi % 2 ? 3 : 1, mass = pi < 2;
  const mf_quadrature quad = !robin && pi >= 4 ? MF_QUAD_GLL : MF_QUAD_GAUSS_P2;
  const char *hdr = "device,problem,dim,p,q,ncomp,ndofs,ms_per_apply,gdofs_per_s,bytes_per_dof,gb_per_s,frac_of_triad,"
                    "stored_per_point,setup_s,compile_s";
  emit(out, hdr);
  int status = 0;
  for (int di = 0; di < o->ndeg; di++) {
    const int p = o->degrees[di], dim = o->dim;
    int trees[3], level;
    box_size(o->target, nc, dim, p, trees, &level);
    mf_mesh mesh = NULL;
    mf_space s = NULL;
    mf_physics ph = NULL;
    mf_operator op = NULL;
    mf_vector x = NULL, y = NULL;
    double phases[MF_PHASE_COUNT] = {0};
    mf_context_phase_reset(ctx);
    int ierr = mf_mesh_create_box(ctx, "deformed", dim, trees, level, &mesh);
    if (!ierr) ierr = mf_space_create_components(mesh, p, nc, &s);
    if (!ierr) ierr = mf_physics_create(ctx, nc, &ph);
    if (!ierr) ierr = mf_physics_set_source(ph, source, mass ? "g0=mass" : "g3=diffusion");
    for (int tag = 1; robin && !ierr && tag <= 2 * dim; tag++)
      ierr = pi == ROBIN ? mf_physics_set_boundary_source(ph, tag, "f0=robin_f0 g0=robin_g0")
                         : mf_physics_set_boundary(ph, tag, robin_f0_c, robin_g0_c);
    double t0 = MPI_Wtime();
    if (!ierr) ierr = mf_operator_create_physics(s, ph, quad, &op);
    const double setup = MPI_Wtime() - t0;
    mf_context_phase_times(ctx, phases);
    if (!ierr) ierr = mf_vector_create(s, &x);
    if (!ierr) ierr = mf_vector_create(s, &y);
    if (!ierr) ierr = mf_vector_set_random(x, 3);
    if (ierr) {
      fprintf(stderr, "mfree-bench: %s p %d: %s\n", o->problem, p, mf_last_error_message());
      status = 1;
    } else {
      int err = 0;
      const double ms = o->time_apply(op, x, y, &err);
      if (err) {
        fprintf(stderr, "mfree-bench: %s p %d: apply failed: %s\n", o->problem, p, mf_last_error_message());
        status = 1;
      } else {
        const mf_hex_phys *h = mf_hexphys(op);
        const double n = (double)s->nglobal, cells = (double)mesh->ncells_global;
        const int stored = h->fused ? dim * dim + 1 + dim : h->lay.n; /* entries per point */
        const double bytes = 16.0 * n + 8.0 * cells * h->nqp * stored + 4.0 * cells * s->npc;
        const double dofs = n / (ms * 1e-3), bpd = bytes / n, gbs = bpd * dofs / 1e9;
        char row[512];
        snprintf(row, sizeof row, "%s,%s,%d,%d,%d,%d,%lld,%.5f,%.4f,%.1f,%.1f,%.3f,%d,%.3f,%.3f", o->device, o->problem,
                 dim, p, h->basis.nq, nc, (long long)s->nglobal, ms, dofs / 1e9, bpd, gbs,
                 o->triad > 0 ? gbs / o->triad : 0.0, stored, setup, phases[MF_PHASE_COMPILE]);
        emit(out, row);
      }
    }
    mf_vector_destroy(&x);
    mf_vector_destroy(&y);
    mf_operator_destroy(&op);
    mf_physics_destroy(&ph);
    mf_space_destroy(&s);
    mf_mesh_destroy(&mesh);
  }
  return status;
}
