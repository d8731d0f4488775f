#include <mfree.h>
#include <stdio.h>

static double coef(const double *x, int dim, void *user) { return 1.0 + x[0] * x[0]; }
static double source(const double *x, int dim, void *user) { return 1.0; }

int main(int argc, char **argv)
{
  MPI_Init(&argc, &argv);
  mf_context ctx; mf_mesh mesh; mf_space V; mf_operator A; mf_vector b, u; mf_cg cg; mf_cg_info info;
  mf_context_create(MPI_COMM_WORLD, "auto", &ctx);          /* "cpu", "cuda" or "auto" */
  mf_mesh_create(ctx, "ball", 3, 3, &mesh);                 /* unit ball, 3 uniform refinements */
  mf_space_create(mesh, 4, &V);                             /* continuous Q4 */
  mf_operator_create_laplace(V, MF_QUAD_GAUSS, coef, NULL, &A);
  mf_operator_set_dirichlet(A, 1);                          /* u = 0 on the boundary */
  mf_vector_create(V, &b); mf_vector_create(V, &u);
  mf_vector_assemble_rhs(b, source, NULL);
  mf_vector_zero_boundary(b);
  mf_vector_set_value(u, 0.0);
  mf_cg_create(A, &cg);                                     /* Jacobi-preconditioned CG */
  mf_cg_set_tolerance(cg, 1e-8, 1000);
  if (mf_cg_solve(cg, b, u, &info)) fprintf(stderr, "%s\n", mf_context_error_message(ctx));
  else printf("%s after %d CG iterations\n", info.converged ? "converged" : "not converged", info.iterations);
  mf_cg_destroy(&cg); mf_vector_destroy(&u); mf_vector_destroy(&b);
  mf_operator_destroy(&A); mf_space_destroy(&V); mf_mesh_destroy(&mesh); mf_context_destroy(&ctx);
  MPI_Finalize();
}
