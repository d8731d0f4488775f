/* bench_physics.c -- mfree-bench's problems of users' physics (mf_operator_create_physics), the CEED
 * benchmark problems written with the pointwise API and compiled at run time (cuda: NVRTC; cpu: the
 * system compiler), on the deformed cube of mfree-bench's bp problems:
 *   bp1-physics   mass, Gauss q = p + 2                     (the built-in: bp1)
 *   bp2           vector mass, 3 components, Gauss q = p + 2
 *   bp3-physics   Laplace, Gauss q = p + 2                  (the built-in: bp3)
 *   bp4           vector Laplace, 3 components, Gauss q = p + 2
 *   bp5-physics   Laplace, Gauss-Lobatto q = p + 1          (the built-in: bp5)
 *   bp6           vector Laplace, 3 components, Gauss-Lobatto q = p + 1
 * DoFs are nodes x components. Byte model (fewest bytes per application): x read once and y written
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
    "}\n";

int mf_bench_physics_problem(const char *name)
{
  static const char *const names[] = {"bp1-physics", "bp2", "bp3-physics", "bp4", "bp5-physics", "bp6"};
  for (int i = 0; i < 6; i++)
    if (!strcmp(name, names[i])) return i;
  return -1;
}

int mf_bench_physics_run(mf_context ctx, const mf_bench_physics_opts *o, FILE *out)
{
  const int pi = mf_bench_physics_problem(o->problem);
  if (pi < 0) return 1;
  const int nc = pi % 2 ? 3 : 1, mass = pi < 2;
  const mf_quadrature quad = pi >= 4 ? MF_QUAD_GLL : MF_QUAD_GAUSS_P2;
  const char *hdr = "device,problem,dim,p,q,ncomp,ndofs,ms_per_apply,gdofs_per_s,bytes_per_dof,gb_per_s,frac_of_triad,"
                    "stored_per_point,setup_s,compile_s";
  printf("%s\n", hdr);
  if (out) fprintf(out, "%s\n", hdr);
  int status = 0;
  for (int di = 0; di < o->ndeg; di++) {
    const int p = o->degrees[di], dim = o->dim;
    /* the unit box in t^dim trees of 2^level cells per direction, nodes x components near the target */
    const double cells1d = (pow(o->target / nc, 1.0 / dim) - 1.0) / p;
    const int level = cells1d > 8 ? (int)floor(log2(cells1d / 4.0)) : 0;
    int t = (int)floor(cells1d / pow(2.0, level) + 0.5), trees[3];
    trees[0] = trees[1] = trees[2] = t < 1 ? 1 : t;
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
        const double bytes = 16.0 * n + 8.0 * cells * h->nqp * h->lay.n + 4.0 * cells * s->npc;
        const double dofs = n / (ms * 1e-3), bpd = bytes / n, gbs = bpd * dofs / 1e9;
        char row[512];
        snprintf(row, sizeof row, "%s,%s,%d,%d,%d,%d,%lld,%.5f,%.4f,%.1f,%.1f,%.3f,%d,%.3f,%.3f", o->device, o->problem,
                 dim, p, h->basis.nq, nc, (long long)s->nglobal, ms, dofs / 1e9, bpd, gbs,
                 o->triad > 0 ? gbs / o->triad : 0.0, h->lay.n, setup, phases[MF_PHASE_COMPILE]);
        printf("%s\n", row);
        fflush(stdout);
        if (out) fprintf(out, "%s\n", row), fflush(out);
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
