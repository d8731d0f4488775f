/* t12_pc -- preconditioners (argv[1]: backend). On the deformed cube and the ball, 2D and 3D:
 *   Jacobi and Chebyshev are symmetric (<B x, y> = <x, B y> to 1e-12) and positive (x^T B x > 0);
 *   the eigenvalue estimate of D^-1 A grows with the steps and 12 steps reach 95% of 60 steps';
 *   Chebyshev of degree 4 (8) needs at most half (a third) of Jacobi's CG iterations to 1e-10, with
 *   the same solution; a shell wrapping Jacobi takes exactly Jacobi's iterations; bad arguments are
 *   refused with a message naming the value. On cuda: the same, and CG iterations within 1 of the
 *   CPU's. On several ranks (pc_np2) also: Jacobi and Chebyshev (degree 4 and 8) applied to a random
 *   vector equal those of rank 0 alone (MPI_COMM_SELF) entry by entry at the same positions
 *   (tests/mf_test.h, t_bypos; 1e-12 relative to the max norm), and so does the eigenvalue estimate. */
#include "mf_test.h"
#include "mf_testing.h"

static int jacobi_shell(mf_vector r, mf_vector z, void *user)
{
  return mf_pc_apply((mf_pc)user, r, z);
}

static double rhs(const double *x, int dim, void *u)
{
  (void)u;
  return 1.0 + x[0] * x[dim - 1];
}

/* CG iterations to 1e-10 with pc (NULL: the cg's own Jacobi); the solution is left in x */
static int solve(mf_operator A, mf_pc pc, mf_vector b, mf_vector x)
{
  mf_cg cg;
  mf_cg_info info;
  T_CALL(mf_cg_create(A, &cg));
  T_CALL(mf_cg_set_tolerance(cg, 1e-10, 5000));
  if (pc) T_CALL(mf_cg_set_pc(cg, pc));
  T_CALL(mf_vector_set_value(x, 0.0));
  T_CALL(mf_cg_solve(cg, b, x, &info));
  T_CHECK(info.converged, "CG did not converge (%d iterations)", info.iterations);
  mf_cg_destroy(&cg);
  return info.iterations;
}

static double rel_diff(mf_vector a, mf_vector b, mf_vector w)
{
  double d, n;
  T_CALL(mf_vector_copy(w, a));
  T_CALL(mf_vector_axpy(w, -1.0, b));
  T_CALL(mf_vector_norm2(w, &d));
  T_CALL(mf_vector_norm2(b, &n));
  return d / n;
}

/* Jacobi, Chebyshev of degree 4 and of degree 8 applied to a random vector (zero on the boundary),
 * gathered by position; the Chebyshev eigenvalue estimate */
enum { P_JACOBI, P_CHEB4, P_CHEB8, NP };
static void pc_outputs(mf_space s, mf_operator A, const t_bypos *bp, double *out[NP], double *lambda)
{
  mf_pc pc[NP];
  mf_vector x, y;
  T_CALL(mf_pc_create(A, MF_PC_JACOBI, &pc[P_JACOBI]));
  T_CALL(mf_pc_create(A, MF_PC_CHEBYSHEV, &pc[P_CHEB4]));
  T_CALL(mf_pc_create(A, MF_PC_CHEBYSHEV, &pc[P_CHEB8]));
  T_CALL(mf_pc_set_chebyshev(pc[P_CHEB8], 8, 20.0, 12));
  T_CALL(mf_vector_create(s, &x));
  T_CALL(mf_vector_create(s, &y));
  T_CALL(mf_vector_set_random(x, 13));
  T_CALL(mf_vector_zero_boundary(x));
  for (int k = 0; k < NP; k++) {
    T_CALL(mf_pc_apply(pc[k], x, y));
    out[k] = t_bypos_gather(bp, y);
  }
  T_CALL(mf_pc_eigenvalue(pc[P_CHEB4], lambda));
  mf_vector_destroy(&x);
  mf_vector_destroy(&y);
  for (int k = 0; k < NP; k++) mf_pc_destroy(&pc[k]);
}

/* The Laplacian of the test (coefficient, Dirichlet form) on the deformed cube or the ball */
static void make_problem(mf_context ctx, int dim, int ball, mf_mesh *mesh, mf_space *s, mf_operator *A)
{
  T_CALL(mf_mesh_create(ctx, ball ? "ball" : "deformed", dim, dim == 2 ? 4 : 2, mesh));
  T_CALL(mf_space_create(*mesh, 3, s));
  T_CALL(mf_operator_create_laplace(*s, MF_QUAD_GAUSS, t_ljungkvist, NULL, A));
  T_CALL(mf_operator_set_dirichlet(*A, 1));
}

/* N ranks against rank 0 alone: the preconditioners' outputs by position */
static void compare_with_one_rank(const char *be, int dim, int ball, mf_context ctx, mf_space s, mf_operator A)
{
  static const char *const pname[NP] = {"Jacobi", "Chebyshev 4", "Chebyshev 8"};
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  t_bypos bp;
  double *out[NP], lambda;
  t_bypos_create(ctx, s, &bp);
  pc_outputs(s, A, &bp, out, &lambda);
  if (rank == 0) {
    mf_context c1;
    mf_mesh m1;
    mf_space s1;
    mf_operator A1;
    t_bypos bp1;
    double *out1[NP], lambda1;
    T_CALL(mf_context_create(MPI_COMM_SELF, be, &c1));
    make_problem(c1, dim, ball, &m1, &s1, &A1);
    t_bypos_create(c1, s1, &bp1);
    pc_outputs(s1, A1, &bp1, out1, &lambda1);
    for (int k = 0; k < NP; k++) {
      T_BYPOS_CHECK(&bp, out[k], &bp1, out1[k], 1e-12, "%s dim %d ball %d: %s B x on %d ranks and on 1 rank", be, dim,
                    ball, pname[k], size);
      free(out1[k]);
    }
    T_CHECK(fabs(lambda - lambda1) <= 1e-12 * lambda1, "%s dim %d ball %d: eigenvalue estimate %.17g on %d ranks, %.17g on 1 rank",
            be, dim, ball, lambda, size, lambda1);
    t_bypos_destroy(&bp1);
    mf_operator_destroy(&A1);
    mf_space_destroy(&s1);
    mf_mesh_destroy(&m1);
    mf_context_destroy(&c1);
  }
  for (int k = 0; k < NP; k++) free(out[k]);
  t_bypos_destroy(&bp);
}

/* iterations of every case, for the cpu/cuda comparison */
static int its[2][2][3];

static void run(const char *be, int dim, int ball, int record)
{
  mf_context ctx;
  mf_mesh mesh;
  mf_space s;
  mf_operator A;
  mf_vector b, x, y, bx, by, w, xj;
  mf_pc jac, cheb, cheb8, shell;
  T_CALL(mf_context_create(MPI_COMM_WORLD, be, &ctx));
  make_problem(ctx, dim, ball, &mesh, &s, &A);
  if (ctx->size > 1) compare_with_one_rank(be, dim, ball, ctx, s, A);
  mf_vector *vs[] = {&b, &x, &y, &bx, &by, &w, &xj};
  for (int k = 0; k < 7; k++) T_CALL(mf_vector_create(s, vs[k]));
  T_CALL(mf_pc_create(A, MF_PC_JACOBI, &jac));
  T_CALL(mf_pc_create(A, MF_PC_CHEBYSHEV, &cheb));
  T_CALL(mf_pc_create(A, MF_PC_CHEBYSHEV, &cheb8));
  T_CALL(mf_pc_set_chebyshev(cheb8, 8, 20.0, 12));
  T_CALL(mf_pc_create_shell(A, jacobi_shell, jac, &shell));

  /* symmetry and positivity */
  mf_pc pcs[2] = {jac, cheb};
  for (int k = 0; k < 2; k++) {
    double xBy, yBx, xBx;
    T_CALL(mf_vector_set_random(x, 11));
    T_CALL(mf_vector_set_random(y, 12));
    T_CALL(mf_vector_zero_boundary(x)); /* the Dirichlet form: boundary rows are the identity */
    T_CALL(mf_pc_apply(pcs[k], x, bx));
    T_CALL(mf_pc_apply(pcs[k], y, by));
    T_CALL(mf_vector_dot(y, bx, &yBx));
    T_CALL(mf_vector_dot(x, by, &xBy));
    T_CALL(mf_vector_dot(x, bx, &xBx));
    T_CHECK(fabs(xBy - yBx) <= 1e-12 * fabs(xBx), "%s dim %d ball %d pc %d: <B x, y> %.17g, <x, B y> %.17g", be, dim,
            ball, k, yBx, xBy);
    T_CHECK(xBx > 0.0, "%s dim %d ball %d pc %d: x^T B x = %g", be, dim, ball, k, xBx);
  }
  /* the eigenvalue estimate */
  {
    double l4, l12, l60;
    mf_pc e;
    T_CALL(mf_pc_create(A, MF_PC_CHEBYSHEV, &e));
    T_CALL(mf_pc_set_chebyshev(e, 4, 20.0, 4));
    T_CALL(mf_pc_eigenvalue(e, &l4));
    T_CALL(mf_pc_set_chebyshev(e, 4, 20.0, 60));
    T_CALL(mf_pc_eigenvalue(e, &l60));
    T_CALL(mf_pc_eigenvalue(cheb, &l12));
    T_CHECK(l4 <= l12 * (1 + 1e-10) && l12 <= l60 * (1 + 1e-10) && l12 >= 0.95 * l60,
            "%s dim %d ball %d: lambda_max estimates %g (4 steps), %g (12), %g (60)", be, dim, ball, l4, l12, l60);
    T_CHECK(l60 > 1.0 && l60 < 2.0 * dim, "%s dim %d ball %d: lambda_max(D^-1 A) = %g, expected in (1, 2 dim)", be, dim,
            ball, l60);
    mf_pc_destroy(&e);
  }
  /* iterations */
  T_CALL(mf_vector_assemble_rhs(b, rhs, NULL));
  T_CALL(mf_vector_zero_boundary(b));
  const int nj = solve(A, NULL, b, xj), nc = solve(A, cheb, b, x), nc8 = solve(A, cheb8, b, y), ns = solve(A, shell, b, w);
  T_CHECK(2 * nc <= nj && 3 * nc8 <= nj, "%s dim %d ball %d: iterations Jacobi %d, Chebyshev 4: %d, 8: %d", be, dim,
          ball, nj, nc, nc8);
  T_CHECK(ns == nj, "%s dim %d ball %d: shell Jacobi %d iterations, Jacobi %d", be, dim, ball, ns, nj);
  T_CHECK(rel_diff(x, xj, w) <= 1e-8, "%s dim %d ball %d: Chebyshev and Jacobi solutions differ by %.3e", be, dim, ball,
          rel_diff(x, xj, w));
  if (getenv("MF_TEST_VERBOSE")) printf("%s dim %d ball %d: CG iterations Jacobi %d, Chebyshev 4: %d, 8: %d\n", be, dim, ball, nj, nc, nc8);
  if (record) its[dim - 2][ball][0] = nj, its[dim - 2][ball][1] = nc, its[dim - 2][ball][2] = nc8;
  else
    for (int k = 0; k < 3; k++)
      T_CHECK(abs(its[dim - 2][ball][k] - (k == 0 ? nj : k == 1 ? nc : nc8)) <= 1,
              "dim %d ball %d pc %d: %d iterations on cuda, %d on cpu", dim, ball, k, k == 0 ? nj : k == 1 ? nc : nc8,
              its[dim - 2][ball][k]);

  /* bad arguments */
  if (dim == 2 && !ball) {
    mf_pc bad = NULL;
    mf_cg cg;
    EXPECT(mf_pc_set_chebyshev(cheb, 0, 20.0, 12), MF_ERR_ARGUMENT, "Chebyshev degree 0 out of range");
    EXPECT(mf_pc_set_chebyshev(cheb, 4, 0.5, 12), MF_ERR_ARGUMENT, "Chebyshev range 0.5");
    EXPECT(mf_pc_set_chebyshev(cheb, 4, 20.0, 1), MF_ERR_ARGUMENT, "eigenvalue estimate steps 1");
    EXPECT(mf_pc_set_chebyshev(jac, 4, 20.0, 12), MF_ERR_ARGUMENT, "is not MF_PC_CHEBYSHEV");
    EXPECT(mf_pc_eigenvalue(jac, &(double){0}), MF_ERR_ARGUMENT, "only a Chebyshev preconditioner");
    EXPECT(mf_pc_create(A, MF_PC_SHELL, &bad), MF_ERR_ARGUMENT, "preconditioner kind 4 unknown here");
    T_CHECK(bad == NULL, "failed create leaves the handle NULL");
    EXPECT(mf_pc_create(NULL, MF_PC_JACOBI, &bad), MF_ERR_NULL, "operator is NULL");
    EXPECT(mf_pc_create_shell(A, NULL, NULL, &bad), MF_ERR_NULL, "apply function is NULL");
    EXPECT(mf_pc_apply(jac, x, x), MF_ERR_ARGUMENT, "r and z must be different");
    EXPECT(mf_pc_apply(NULL, x, y), MF_ERR_NULL, "preconditioner is NULL");
    {
      mf_space s2;
      mf_operator A2;
      T_CALL(mf_space_create(mesh, 2, &s2));
      T_CALL(mf_operator_create_mass(s2, MF_QUAD_GAUSS, NULL, NULL, &A2));
      T_CALL(mf_pc_create(A2, MF_PC_JACOBI, &bad));
      T_CALL(mf_cg_create(A, &cg));
      EXPECT(mf_cg_set_pc(cg, bad), MF_ERR_INCOMPATIBLE, "preconditioner of another space");
      EXPECT(mf_pc_apply(bad, x, y), MF_ERR_INCOMPATIBLE, "another space");
      mf_cg_destroy(&cg);
      mf_pc_destroy(&bad);
      mf_operator_destroy(&A2);
      mf_space_destroy(&s2);
    }
    T_CALL(mf_pc_destroy(&bad));
    T_CHECK(bad == NULL, "destroy sets NULL");
  }
  mf_pc_destroy(&shell);
  mf_pc_destroy(&cheb8);
  mf_pc_destroy(&cheb);
  mf_pc_destroy(&jac);
  for (int k = 0; k < 7; k++) mf_vector_destroy(vs[k]);
  mf_operator_destroy(&A);
  mf_space_destroy(&s);
  mf_mesh_destroy(&mesh);
  mf_context_destroy(&ctx);
}

int main(int argc, char **argv)
{
  MPI_Init(&argc, &argv);
  const char *be = t_backend(argc, argv);
  const int gpu = !strcmp(be, "cuda");
  for (int dim = 2; dim <= 3; dim++)
    for (int ball = 0; ball < 2; ball++) {
      if (gpu) run("cpu", dim, ball, 1);
      run(be, dim, ball, !gpu);
    }
  return t_finish();
}
