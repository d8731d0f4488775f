/* beam.c -- 3D linear elasticity on a hex mesh as a user writes it: the unit cube clamped at x = 0
 * (boundary tag 1), loaded by its own weight (a body force in f0) and a downward traction on the end
 * x = 1 (tag 2, a boundary term), the other faces free; Q2, E = 1, nu = 0.3; CG with multigrid on the
 * three components. The volume physics is C source in this file, compiled at run time (the same text runs
 * on the cuda backend); the traction is a C function (a boundary f0: on the cuda backend it is added on the
 * host). Prints the iterations and the displacement at the corner (1, 1, 1) in the direction of the load.
 *   example-beam [backend [level]]      backend "cpu" (default), "cuda" or "auto"; level 0..5 (default 2) */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <mpi.h>

#include "mfree.h"

#define CALL(expr)                                                             \
  do {                                                                         \
    if ((expr)) {                                                              \
      fprintf(stderr, "beam: %s failed: %s\n", #expr, mf_last_error_message()); \
      MPI_Abort(MPI_COMM_WORLD, 1);                                            \
    }                                                                          \
  } while (0)

/* sigma(u) : eps(v) - b . v with k = (lambda, mu, gravity): b = (0, -gravity, 0) */
static const char *physics =
    "void weight(int dim, int nc, const double *u, const double *du, const double *x, const double *k, double *f0)\n"
    "{\n"
    "  f0[1] = k[2]; /* -b */\n"
    "}\n"
    "void stress(int dim, int nc, const double *u, const double *du, const double *x, const double *k, double *f1)\n"
    "{\n"
    "  const double tr = du[0] + du[4] + du[8];\n"
    "  for (int c = 0; c < 3; c++)\n"
    "    for (int d = 0; d < 3; d++) f1[c * 3 + d] = k[1] * (du[c * 3 + d] + du[d * 3 + c]) + (c == d ? k[0] * tr : 0.0);\n"
    "}\n"
    "void tangent(int dim, int nc, const double *u, const double *du, const double *x, const double *k, double *g3)\n"
    "{\n"
    "  for (int c = 0; c < 3; c++)\n"
    "    for (int b = 0; b < 3; b++)\n"
    "      for (int d = 0; d < 3; d++)\n"
    "        for (int e = 0; e < 3; e++)\n"
    "          g3[((c * 3 + b) * 3 + d) * 3 + e] = k[0] * (c == d && b == e) + k[1] * ((c == b && d == e) + (c == e && d == b));\n"
    "}\n";

/* the traction T = (0, -k[3], 0) on the end: f0 = -T */
static void traction(int dim, int nc, const double *u, const double *x, const double *n, const double *k, double *f0)
{
  (void)dim, (void)nc, (void)u, (void)x, (void)n;
  f0[1] = k[3];
}

static double corner(const double *x, int dim, void *user)
{
  (void)dim, (void)user;
  return (x[0] > 1.0 - 1e-12 && x[1] > 1.0 - 1e-12 && x[2] > 1.0 - 1e-12) ? 1.0 : 0.0;
}

int main(int argc, char **argv)
{
  MPI_Init(&argc, &argv);
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  const char *backend = argc > 1 ? argv[1] : "cpu";
  int level = 2;
  if (argc > 3) {
    if (!rank) fprintf(stderr, "beam: unexpected argument '%s' (usage: example-beam [backend [level]])\n", argv[3]);
    MPI_Finalize();
    return 2;
  }
  if (argc > 2) {
    char *end = NULL;
    errno = 0;
    const long l = strtol(argv[2], &end, 10);
    if (end == argv[2] || *end || errno || l < 0 || l > 5) {
      if (!rank) fprintf(stderr, "beam: level '%s' is not one of 0..5 (usage: example-beam [backend [level]])\n", argv[2]);
      MPI_Finalize();
      return 2;
    }
    level = (int)l;
  }
  const double E = 1.0, nu = 0.3, k[4] = {E * nu / ((1 + nu) * (1 - 2 * nu)), E / (2 * (1 + nu)), 0.01, 0.02};
  const int clamped = 1, end = 2; /* the faces x = 0 and x = 1 */
  mf_context ctx;
  mf_mesh mesh;
  mf_space space;
  mf_physics ph;
  mf_operator A;
  mf_vector u, r, c;
  mf_pc pc = NULL;
  mf_cg cg;
  mf_cg_info info;
  int64_t ndofs;
  CALL(mf_context_create(MPI_COMM_WORLD, backend, &ctx));
  CALL(mf_mesh_create(ctx, "cube", 3, level, &mesh));
  CALL(mf_space_create_components(mesh, 2, 3, &space));
  CALL(mf_space_set_dirichlet_tags(space, 1, &clamped));
  CALL(mf_physics_create(ctx, 3, &ph));
  CALL(mf_physics_set_source(ph, physics, "f0=weight f1=stress g3=tangent"));
  CALL(mf_physics_set_constants(ph, 4, k));
  CALL(mf_physics_set_boundary(ph, end, traction, NULL));
  CALL(mf_operator_create_physics(space, ph, MF_QUAD_GAUSS, &A));
  CALL(mf_operator_set_dirichlet(A, 1));
  CALL(mf_vector_create(space, &u));
  CALL(mf_vector_create(space, &r));
  CALL(mf_vector_create(space, &c));
  CALL(mf_vector_set_value(u, 0.0));
  CALL(mf_operator_residual(A, u, r)); /* F(0) = -(b, v): the load */
  CALL(mf_vector_scale(r, -1.0));
  CALL(mf_cg_create(A, &cg));
  CALL(mf_pc_create(A, MF_PC_MULTIGRID, &pc)); /* the three components transferred together */
  CALL(mf_cg_set_pc(cg, pc));
  CALL(mf_cg_set_tolerance(cg, 1e-8, 5000));
  CALL(mf_cg_solve(cg, r, u, &info));
  /* the corner's displacement in the direction of the load: u . (indicator of the corner's y entry) */
  CALL(mf_vector_interpolate(c, corner, NULL));
  int nowned = 0, nlocal = 0;
  CALL(mf_space_local_sizes(space, &nowned, &nlocal));
  double *h = NULL;
  CALL(mf_vector_get_array(c, MF_MEM_HOST, &h));
  for (int i = 0; i < nowned; i++)
    if (i % 3 != 1) h[i] = 0.0; /* the y component alone */
  CALL(mf_vector_restore_array(c, &h));
  double uy = 0.0;
  CALL(mf_vector_dot(u, c, &uy));
  CALL(mf_space_num_dofs(space, &ndofs));
  if (!rank)
    printf("beam: %lld DoFs (Q2, 3 components), %s after %d CG iterations (%s), corner deflection %.6e\n",
           (long long)ndofs, info.converged ? "converged" : "NOT converged", info.iterations, pc ? "multigrid" : "Jacobi",
           uy);
  mf_cg_destroy(&cg);
  mf_pc_destroy(&pc);
  mf_vector_destroy(&u);
  mf_vector_destroy(&r);
  mf_vector_destroy(&c);
  mf_operator_destroy(&A);
  mf_physics_destroy(&ph);
  mf_space_destroy(&space);
  mf_mesh_destroy(&mesh);
  mf_context_destroy(&ctx);
  MPI_Finalize();
  return info.converged && uy < 0.0 ? 0 : 1;
}
