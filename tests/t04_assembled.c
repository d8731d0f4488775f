/* t04_assembled -- the matrix-free operators equal a CPU sparse (CSR) matrix assembled from dense
 * element matrices, on random vectors, with and without the Dirichlet form, for every operator
 * kind, 2D p = 1..8 and 3D p = 1..4 on the deformed cube and the ball, uniform and adaptive (hanging
 * nodes; the CSR holds C^T A_e C, the constraints condensed) (1e-12 relative). The same
 * CG solves both to the same iterate. Runs on 1 and 3 ranks. */
#include "mf_test.h"

int main(int argc, char **argv)
{
  MPI_Init(&argc, &argv);
  mf_context ctx;
  T_CALL(mf_context_create(MPI_COMM_WORLD, "cpu", &ctx));
  /* uniform deformed cube and ball, and adaptive (hanging nodes, constraints condensed in the CSR) */
  const char *meshes[4] = {"deformed", "ball", "deformed", "ball"};
  for (int dim = 2; dim <= 3; dim++)
    for (int m = 0; m < 4; m++)
      for (int p = 1; p <= (dim == 2 ? 8 : m < 2 ? 4 : 3); p++) {
        mf_mesh mesh;
        mf_space space;
        mf_vector x, y1, y2;
        if (m < 2) T_CALL(mf_mesh_create(ctx, meshes[m], dim, dim == 2 ? 2 : 1, &mesh));
        else t_mesh(ctx, meshes[m], dim, m == 2 ? 2 : 1, 1, &mesh);
        T_CALL(mf_space_create(mesh, p, &space));
        T_CALL(mf_vector_create(space, &x));
        T_CALL(mf_vector_create(space, &y1));
        T_CALL(mf_vector_create(space, &y2));
        T_CALL(mf_vector_set_random(x, 7 + p));
        for (int kind = 0; kind < 3; kind++) {
          mf_operator A, S;
          mf_quadrature q = (mf_quadrature)((p + kind) % 3);
          if (kind == 0) T_CALL(mf_operator_create_mass(space, q, t_ljungkvist, NULL, &A));
          else if (kind == 1) T_CALL(mf_operator_create_laplace(space, q, t_ljungkvist, NULL, &A));
          else T_CALL(mf_operator_create_helmholtz(space, q, 0.5, 3.0, t_ljungkvist, NULL, &A));
          T_CALL(mf_operator_create_assembled(A, &S));
          int64_t nnz = 0;
          T_CALL(mf_operator_local_nnz(S, &nnz));
          T_CHECK(nnz > 0, "assembled operator has no nonzeros");
          for (int dir = 0; dir < 2; dir++) {
            T_CALL(mf_operator_set_dirichlet(A, dir));
            T_CALL(mf_operator_set_dirichlet(S, dir));
            double n1, nd;
            T_CALL(mf_operator_apply(A, x, y1));
            T_CALL(mf_operator_apply(S, x, y2));
            T_CALL(mf_vector_norm2(y1, &n1));
            T_CALL(mf_vector_axpy(y2, -1.0, y1));
            T_CALL(mf_vector_norm2(y2, &nd));
            T_CHECK(nd <= 1e-12 * n1, "kind %d %s dim %d p %d quad %d dirichlet %d: |A_mf x - A_csr x| / |A x| = %.3e",
                    kind, meshes[m], dim, p, (int)q, dir, nd / n1);
            T_CALL(mf_operator_diagonal(A, y1));
            T_CALL(mf_operator_diagonal(S, y2));
            T_CALL(mf_vector_norm2(y1, &n1));
            T_CALL(mf_vector_axpy(y2, -1.0, y1));
            T_CALL(mf_vector_norm2(y2, &nd));
            T_CHECK(nd <= 1e-12 * n1, "kind %d %s dim %d p %d dirichlet %d: diagonals differ by %.3e", kind, meshes[m], dim,
                    p, dir, nd / n1);
          }
          if (kind == 1 && p <= 3) { /* one CG on both: same iterations, same solution */
            mf_cg cg1, cg2;
            mf_cg_info i1, i2;
            mf_vector b, u1, u2;
            T_CALL(mf_vector_create(space, &b));
            T_CALL(mf_vector_create(space, &u1));
            T_CALL(mf_vector_create(space, &u2));
            T_CALL(mf_vector_copy(b, x));
            T_CALL(mf_vector_zero_boundary(b));
            T_CALL(mf_vector_set_value(u1, 0.0));
            T_CALL(mf_vector_set_value(u2, 0.0));
            T_CALL(mf_cg_create(A, &cg1));
            T_CALL(mf_cg_create(S, &cg2));
            T_CALL(mf_cg_solve(cg1, b, u1, &i1));
            T_CALL(mf_cg_solve(cg2, b, u2, &i2));
            double nu, nd;
            T_CALL(mf_vector_norm2(u1, &nu));
            T_CALL(mf_vector_axpy(u2, -1.0, u1));
            T_CALL(mf_vector_norm2(u2, &nd));
            T_CHECK(i1.converged && i2.converged, "CG did not converge (%d, %d)", i1.converged, i2.converged);
            T_CHECK(abs(i1.iterations - i2.iterations) <= 1, "CG iterations %d (matrix-free) vs %d (CSR)", i1.iterations,
                    i2.iterations);
            T_CHECK(nd <= 1e-8 * nu, "CG solutions differ by %.3e relative", nd / nu);
            mf_cg_destroy(&cg1);
            mf_cg_destroy(&cg2);
            mf_vector_destroy(&b);
            mf_vector_destroy(&u1);
            mf_vector_destroy(&u2);
          }
          mf_operator_destroy(&S);
          mf_operator_destroy(&A);
        }
        mf_vector_destroy(&y2);
        mf_vector_destroy(&y1);
        mf_vector_destroy(&x);
        mf_space_destroy(&space);
        mf_mesh_destroy(&mesh);
      }
  mf_context_destroy(&ctx);
  return t_finish();
}
