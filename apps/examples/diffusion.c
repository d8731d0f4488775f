/* diffusion.c -- anisotropic diffusion written by the user as pointwise physics in a C file read at run
 * time: -div(K grad u) = f on the unit square with u = sin(pi x) sin(pi y) on the boundary, solved on two
 * meshes (Q2, the second refined once) by CG with multigrid through the residual (u = g on the boundary,
 * A d = -F(u), u += d); prints the L2 errors and their rate (3 for Q2).
 *   example-diffusion PHYSICS.c [backend]      PHYSICS.c: apps/examples/diffusion_physics.c or yours
 *                                              (functions residual0, flux, conductivity); backend
 *                                              "cpu" (default), "cuda" or "auto" */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <mpi.h>

#include "mfree.h"

#define CALL(expr)                                                                  \
  do {                                                                              \
    if ((expr)) {                                                                   \
      fprintf(stderr, "diffusion: %s failed: %s\n", #expr, mf_last_error_message()); \
      MPI_Abort(MPI_COMM_WORLD, 1);                                                 \
    }                                                                               \
  } while (0)

static double exact(const double *x, int dim, void *user)
{
  (void)dim, (void)user;
  return sin(M_PI * x[0]) * sin(M_PI * x[1]);
}

/* the L2 error on the unit square refined `level` times, Q2 */
static double solve(mf_context ctx, const char *file, int level, int rank)
{
  const double K[3] = {1.0, 0.4, 0.5}; /* k0, k1, k2: symmetric positive definite */
  mf_mesh mesh;
  mf_space space;
  mf_physics ph;
  mf_operator A;
  mf_vector u, r, d;
  mf_pc pc;
  mf_cg cg;
  mf_cg_info info;
  int64_t ndofs;
  CALL(mf_mesh_create(ctx, "cube", 2, level, &mesh));
  CALL(mf_space_create(mesh, 2, &space));
  CALL(mf_physics_create(ctx, 1, &ph));
  CALL(mf_physics_set_source_file(ph, file, "f0=residual0 f1=flux g3=conductivity"));
  CALL(mf_physics_set_constants(ph, 3, K));
  CALL(mf_operator_create_physics(space, ph, MF_QUAD_GAUSS, &A));
  CALL(mf_operator_set_dirichlet(A, 1));
  CALL(mf_vector_create(space, &u));
  CALL(mf_vector_create(space, &r));
  CALL(mf_vector_create(space, &d));
  CALL(mf_vector_set_boundary(u, exact, NULL)); /* u = g on the boundary, 0 inside */
  CALL(mf_operator_residual(A, u, r));          /* r = F(u), zero on the boundary */
  CALL(mf_vector_scale(r, -1.0));
  CALL(mf_pc_create(A, MF_PC_MULTIGRID, &pc));
  CALL(mf_cg_create(A, &cg));
  CALL(mf_cg_set_pc(cg, pc));
  CALL(mf_cg_set_tolerance(cg, 1e-10, 500));
  CALL(mf_vector_set_value(d, 0.0));
  CALL(mf_cg_solve(cg, r, d, &info));
  CALL(mf_vector_axpy(u, 1.0, d));
  double err = 0.0;
  CALL(mf_vector_l2_error(u, exact, NULL, &err));
  CALL(mf_space_num_dofs(space, &ndofs));
  if (!rank)
    printf("level %d: %lld DoFs, %s after %d CG iterations, L2 error %.4e\n", level, (long long)ndofs,
           info.converged ? "converged" : "NOT converged", info.iterations, err);
  mf_cg_destroy(&cg);
  mf_pc_destroy(&pc);
  mf_vector_destroy(&u);
  mf_vector_destroy(&r);
  mf_vector_destroy(&d);
  mf_operator_destroy(&A);
  mf_physics_destroy(&ph);
  mf_space_destroy(&space);
  mf_mesh_destroy(&mesh);
  return info.converged ? err : -1.0;
}

int main(int argc, char **argv)
{
  MPI_Init(&argc, &argv);
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  if (argc < 2 || argc > 3) {
    if (!rank) fprintf(stderr, "usage: example-diffusion PHYSICS.c [cpu|cuda|auto]\n");
    MPI_Finalize();
    return 2;
  }
  mf_context ctx;
  CALL(mf_context_create(MPI_COMM_WORLD, argc > 2 ? argv[2] : "cpu", &ctx));
  const double e0 = solve(ctx, argv[1], 3, rank), e1 = solve(ctx, argv[1], 4, rank);
  const int ok = e0 > 0.0 && e1 > 0.0;
  if (!rank && ok) printf("L2 rate %.2f (Q2: 3 expected)\n", log2(e0 / e1));
  mf_context_destroy(&ctx);
  MPI_Finalize();
  return ok ? 0 : 1;
}
