/* t06_mpi -- 1 rank and N ranks give the same results: every quantity is computed on
 * MPI_COMM_WORLD and, on rank 0 alone, on MPI_COMM_SELF, and compared (operators 1e-12 relative;
 * CG: iterations within 1, solution and L2 error 1e-10 relative), matrix-free with Jacobi and with
 * multigrid, and assembled with Jacobi. Run under mpiexec -np 1, 2, 3.
 * argv[1]: backend. */
#include "mf_test.h"
#include "poisson.h"

enum { Q_NDOFS, Q_AX, Q_XAX, Q_MASS, Q_DIAG, Q_ITS, Q_L2, Q_SOL, Q_MG_ITS, Q_MG_SOL, Q_CSR_AX, Q_CSR_ITS, Q_CSR_SOL, NQ };
static const char *qname[NQ] = {"ndofs", "|A x|", "x.A x", "sum(M 1)", "|diag|", "CG iterations", "L2 error", "|u_h|",
                                "multigrid CG iterations", "|u_h| (multigrid)", "|A_csr x|", "assembled CG iterations",
                                "|u_h| (assembled)"};

static const char *backend = "cpu";

static void compute(MPI_Comm comm, const char *meshname, int dim, int level, int adapt, int p, double *q)
{
  mf_context ctx;
  mf_mesh mesh;
  mf_space space;
  mf_operator A, M;
  mf_vector x, y, one;
  int64_t n;
  poisson_coef coef = POISSON_COEF_LJUNGKVIST;
  T_CALL(mf_context_create(comm, backend, &ctx));
  t_mesh(ctx, meshname, dim, level, adapt, &mesh);
  T_CALL(mf_space_create(mesh, p, &space));
  T_CALL(mf_space_num_dofs(space, &n));
  q[Q_NDOFS] = (double)n;
  T_CALL(mf_operator_create_laplace(space, MF_QUAD_GAUSS, poisson_c, &coef, &A));
  T_CALL(mf_operator_set_dirichlet(A, 1));
  T_CALL(mf_operator_create_mass(space, MF_QUAD_GAUSS_P2, NULL, NULL, &M));
  T_CALL(mf_vector_create(space, &x));
  T_CALL(mf_vector_create(space, &y));
  T_CALL(mf_vector_create(space, &one));
  T_CALL(mf_vector_set_random(x, 42));
  T_CALL(mf_operator_apply(A, x, y));
  T_CALL(mf_vector_norm2(y, &q[Q_AX]));
  T_CALL(mf_vector_dot(x, y, &q[Q_XAX]));
  T_CALL(mf_vector_set_value(one, 1.0));
  T_CALL(mf_operator_apply(M, one, y));
  T_CALL(mf_vector_sum(y, &q[Q_MASS]));
  T_CALL(mf_operator_diagonal(A, y));
  T_CALL(mf_vector_norm2(y, &q[Q_DIAG]));
  /* the Poisson solve, and the norm of its solution */
  {
    mf_cg cg;
    mf_cg_info info;
    mf_vector b, g, t;
    T_CALL(mf_vector_create(space, &b));
    T_CALL(mf_vector_create(space, &g));
    T_CALL(mf_vector_create(space, &t));
    T_CALL(mf_vector_assemble_rhs(b, poisson_f, &coef));
    T_CALL(mf_vector_set_boundary(g, poisson_u, NULL));
    T_CALL(mf_operator_set_dirichlet(A, 0));
    T_CALL(mf_operator_apply(A, g, t));
    T_CALL(mf_operator_set_dirichlet(A, 1));
    T_CALL(mf_vector_axpy(b, -1.0, t));
    T_CALL(mf_vector_zero_boundary(b));
    T_CALL(mf_vector_set_value(x, 0.0));
    T_CALL(mf_cg_create(A, &cg));
    T_CALL(mf_cg_set_tolerance(cg, 1e-12, 5000));
    T_CALL(mf_cg_solve(cg, b, x, &info));
    T_CALL(mf_vector_axpy(x, 1.0, g));
    q[Q_ITS] = info.iterations;
    T_CALL(mf_vector_l2_error(x, poisson_u, NULL, &q[Q_L2]));
    T_CALL(mf_vector_norm2(x, &q[Q_SOL]));
    /* again with multigrid (its coarse meshes differ on several ranks: families split between ranks
     * are not merged) */
    mf_pc mg;
    T_CALL(mf_pc_create(A, MF_PC_MULTIGRID, &mg));
    T_CALL(mf_cg_set_pc(cg, mg));
    T_CALL(mf_vector_set_value(x, 0.0));
    T_CALL(mf_cg_solve(cg, b, x, &info));
    T_CALL(mf_vector_axpy(x, 1.0, g));
    q[Q_MG_ITS] = info.iterations;
    T_CALL(mf_vector_norm2(x, &q[Q_MG_SOL]));
    /* the assembled operator (ghost columns, rows summed onto the owners): product and Jacobi CG */
    mf_operator Ac;
    mf_cg cga;
    T_CALL(mf_operator_create_assembled(A, &Ac));
    T_CALL(mf_vector_set_random(x, 42));
    T_CALL(mf_operator_apply(Ac, x, t));
    T_CALL(mf_vector_norm2(t, &q[Q_CSR_AX]));
    T_CALL(mf_cg_create(Ac, &cga));
    T_CALL(mf_cg_set_tolerance(cga, 1e-12, 5000));
    T_CALL(mf_vector_set_value(x, 0.0));
    T_CALL(mf_cg_solve(cga, b, x, &info));
    T_CALL(mf_vector_axpy(x, 1.0, g));
    q[Q_CSR_ITS] = info.iterations;
    T_CALL(mf_vector_norm2(x, &q[Q_CSR_SOL]));
    mf_cg_destroy(&cga);
    mf_operator_destroy(&Ac);
    mf_cg_destroy(&cg);
    mf_pc_destroy(&mg);
    mf_vector_destroy(&b);
    mf_vector_destroy(&g);
    mf_vector_destroy(&t);
  }
  mf_vector_destroy(&one);
  mf_vector_destroy(&y);
  mf_vector_destroy(&x);
  mf_operator_destroy(&M);
  mf_operator_destroy(&A);
  mf_space_destroy(&space);
  mf_mesh_destroy(&mesh);
  mf_context_destroy(&ctx);
}

int main(int argc, char **argv)
{
  MPI_Init(&argc, &argv);
  backend = t_backend(argc, argv);
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  struct {
    const char *mesh;
    int dim, level, adapt, p;
  } cases[] = {{"ball", 2, 2, 0, 3}, {"deformed", 2, 3, 0, 2}, {"ball", 3, 1, 0, 2}, {"deformed", 3, 2, 0, 3},
               {"ball", 2, 1, 2, 3},  {"ball", 3, 1, 2, 2},     {"deformed", 3, 2, 1, 2},
               /* ranks that see some ghost DoFs only at hanging positions, next to ranks that do not */
               {"ball", 3, 1, 2, 1},  {"ball", 3, 1, 1, 3}};
  for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
    double qw[NQ], qs[NQ];
    compute(MPI_COMM_WORLD, cases[c].mesh, cases[c].dim, cases[c].level, cases[c].adapt, cases[c].p, qw);
    if (rank == 0) {
      compute(MPI_COMM_SELF, cases[c].mesh, cases[c].dim, cases[c].level, cases[c].adapt, cases[c].p, qs);
      for (int k = 0; k < NQ; k++) {
        double tol = (k == Q_ITS || k == Q_MG_ITS || k == Q_CSR_ITS) ? 1.0
                     : (k >= Q_L2 && k != Q_CSR_AX ? 1e-10 * fabs(qs[k]) : 1e-12 * fabs(qs[k]));
        T_CHECK(fabs(qw[k] - qs[k]) <= tol, "%s dim %d p %d adapt %d: %s on %d ranks %.17g, on 1 rank %.17g",
                cases[c].mesh, cases[c].dim, cases[c].p, cases[c].adapt, qname[k], size, qw[k], qs[k]);
      }
    }
  }
  return t_finish();
}
