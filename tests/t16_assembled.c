/* t16_assembled -- the assembled operator (lib/assembled/assembly.c) on 1, 2 and 3 ranks:
 *  - equals the matrix-free apply on random vectors (1e-12 relative), Helmholtz with a variable
 *    coefficient, p = 1..4 in 2D and 3D, uniform and adaptive ball, with and without Dirichlet form;
 *  - its local matrix is symmetric entry by entry, and x . S y = y . S x;
 *  - CG with it gives the matrix-free CG's solution (1e-10) in the same iterations (+-1);
 *  - its values are bitwise the same with 1 and 3 OpenMP threads (cells added color by color);
 *  - bad input is refused with a message;
 *  - memory: a matrix that would not fit in the host memory (a small test limit) is refused before
 *    its arrays are allocated, with MF_ERR_MEMORY and the bytes needed and available, on every rank;
 *    a failure of any one allocation returns MF_ERR_MEMORY and leaves nothing behind (valgrind). */
#include "mf_test.h"
#include "mf_testing.h"
#include "assembled/assembly_impl.h"
#ifdef _OPENMP
#include <omp.h>
#endif

/* |S x - A x| / |A x| for a random x */
static double apply_difference(mf_operator A, mf_operator S, mf_space space, int seed)
{
  mf_vector x, y1, y2;
  T_CALL(mf_vector_create(space, &x));
  T_CALL(mf_vector_create(space, &y1));
  T_CALL(mf_vector_create(space, &y2));
  T_CALL(mf_vector_set_random(x, seed));
  T_CALL(mf_operator_apply(A, x, y1));
  T_CALL(mf_operator_apply(S, x, y2));
  double n1, nd;
  T_CALL(mf_vector_norm2(y1, &n1));
  T_CALL(mf_vector_axpy(y2, -1.0, y1));
  T_CALL(mf_vector_norm2(y2, &nd));
  mf_vector_destroy(&x);
  mf_vector_destroy(&y1);
  mf_vector_destroy(&y2);
  return nd / n1;
}

static void check_memory(mf_context ctx)
{
  mf_mesh mesh;
  mf_space space;
  mf_operator A, S = NULL;
  T_CALL(mf_mesh_create(ctx, "cube", 2, 3, &mesh));
  T_CALL(mf_space_create(mesh, 2, &space));
  T_CALL(mf_operator_create_laplace(space, MF_QUAD_GAUSS, NULL, NULL, &A));
  /* far too little memory: refused before any allocation */
  mf_test_set_host_available(1000.0);
  mf_test_fail_host_alloc(0);
  EXPECT(mf_operator_create_assembled(A, &S), MF_ERR_MEMORY, "needs about");
  EXPECT(mf_operator_create_assembled(A, &S), MF_ERR_MEMORY, "GB are available");
  T_CHECK(S == NULL, "refused assembly left an operator");
  T_CHECK(mf_test_host_alloc_count() == 0, "refused assembly allocated %ld times first", mf_test_host_alloc_count());
  /* room for the pattern's work arrays, not for its columns and the values: refused after counting */
  /* off and rowptr (8 bytes per DoF each), the DoF-to-cell lists and the sorted node lists of the
   * cells (4 bytes per cell node, and one end mark per cell) */
  const double work = 16.0 * (space->nlocal + 1.0) + 4.0 * (double)space->ncells * (2.0 * space->npc + 1.0);
  mf_test_set_host_available(work + 1000.0);
  EXPECT(mf_operator_create_assembled(A, &S), MF_ERR_MEMORY, "nonzeros");
  T_CHECK(S == NULL, "refused assembly left an operator");
  mf_test_set_host_available(0.0);
  T_CALL(mf_operator_create_assembled(A, &S));
  double d = apply_difference(A, S, space, 3);
  T_CHECK(d <= 1e-12, "after refusals: |S x - A x| / |A x| = %.3e", d);
  mf_operator_destroy(&S);
  /* each allocation of an assembly on a fresh space failing in turn: MF_ERR_MEMORY, no operator, no leak */
  mf_space_destroy(&space);
  mf_operator_destroy(&A);
  T_CALL(mf_space_create(mesh, 2, &space));
  T_CALL(mf_operator_create_laplace(space, MF_QUAD_GAUSS, NULL, NULL, &A));
  int ok = 0;
  for (long k = 1; k < 100 && !ok; k++) {
    mf_test_fail_host_alloc(k);
    int ierr = mf_operator_create_assembled(A, &S);
    mf_test_fail_host_alloc(0);
    if (!ierr) {
      ok = 1;
      T_CHECK(k > 5, "assembly succeeded with allocation %ld failing", k);
    } else {
      T_CHECK(ierr == MF_ERR_MEMORY && S == NULL, "allocation %ld failing: code %d (%s), operator %p", k, ierr,
              mf_last_error_message(), (void *)S);
      T_CHECK(strstr(mf_last_error_message(), "out of host memory") != NULL, "allocation %ld failing: message '%s'", k,
              mf_last_error_message());
    }
  }
  T_CHECK(ok, "assembly failed with every allocation");
  d = apply_difference(A, S, space, 5);
  T_CHECK(d <= 1e-12, "after failed allocations: |S x - A x| / |A x| = %.3e", d);
  mf_operator_destroy(&S);
  mf_operator_destroy(&A);
  mf_space_destroy(&space);
  mf_mesh_destroy(&mesh);
}

/* max |S_ij - S_ji| / max |S_ij| of the local CSR (rows and columns: local DoFs); -1 if an entry's
 * transpose is missing from the pattern */
static double csr_asymmetry(mf_operator S)
{
  const int n = S->space->nlocal;
  double amax = 0.0, dmax = 0.0;
  for (int i = 0; i < n; i++)
    for (int64_t k = mf_csr(S)->rowptr[i]; k < mf_csr(S)->rowptr[i + 1]; k++) {
      const int j = mf_csr(S)->colidx[k];
      int64_t t = mf_csr(S)->rowptr[j];
      while (t < mf_csr(S)->rowptr[j + 1] && mf_csr(S)->colidx[t] != i) t++;
      if (t == mf_csr(S)->rowptr[j + 1]) return -1.0;
      amax = fmax(amax, fabs(mf_csr(S)->vals[k]));
      dmax = fmax(dmax, fabs(mf_csr(S)->vals[k] - mf_csr(S)->vals[t]));
    }
  return dmax / amax;
}

static void check_against_mf(mf_context ctx)
{
  for (int dim = 2; dim <= 3; dim++)
    for (int adapt = 0; adapt <= 1; adapt++)
      for (int p = 1; p <= 4; p++) {
        mf_mesh mesh;
        mf_space space;
        mf_operator A, S;
        t_ball(ctx, dim, dim == 2 ? 2 : 1, adapt, &mesh);
        T_CALL(mf_space_create(mesh, p, &space));
        T_CALL(mf_operator_create_helmholtz(space, MF_QUAD_GAUSS, 0.5, 3.0, t_ljungkvist, NULL, &A));
        T_CALL(mf_operator_create_assembled(A, &S));
        const double asym = csr_asymmetry(S);
        T_CHECK(asym >= 0.0 && asym <= 1e-13, "dim %d adapt %d p %d: CSR asymmetry %.3e (-1: pattern)", dim, adapt, p,
                asym);
        for (int dir = 0; dir < 2; dir++) {
          T_CALL(mf_operator_set_dirichlet(A, dir));
          T_CALL(mf_operator_set_dirichlet(S, dir));
          const double d = apply_difference(A, S, space, 11 + p);
          T_CHECK(d <= 1e-12, "dim %d adapt %d p %d dirichlet %d: |S x - A x| / |A x| = %.3e", dim, adapt, p, dir, d);
          /* x . S y = y . S x over all ranks */
          mf_vector x, y, sx, sy;
          T_CALL(mf_vector_create(space, &x));
          T_CALL(mf_vector_create(space, &y));
          T_CALL(mf_vector_create(space, &sx));
          T_CALL(mf_vector_create(space, &sy));
          T_CALL(mf_vector_set_random(x, 21));
          T_CALL(mf_vector_set_random(y, 22));
          T_CALL(mf_operator_apply(S, x, sx));
          T_CALL(mf_operator_apply(S, y, sy));
          double xsy, ysx, nx, nsy;
          T_CALL(mf_vector_dot(x, sy, &xsy));
          T_CALL(mf_vector_dot(y, sx, &ysx));
          T_CALL(mf_vector_norm2(x, &nx));
          T_CALL(mf_vector_norm2(sy, &nsy));
          T_CHECK(fabs(xsy - ysx) <= 1e-12 * nx * nsy, "dim %d adapt %d p %d dirichlet %d: x.Sy = %.15e, y.Sx = %.15e",
                  dim, adapt, p, dir, xsy, ysx);
          mf_vector_destroy(&x);
          mf_vector_destroy(&y);
          mf_vector_destroy(&sx);
          mf_vector_destroy(&sy);
        }
        mf_operator_destroy(&S);
        mf_operator_destroy(&A);
        mf_space_destroy(&space);
        mf_mesh_destroy(&mesh);
      }
}

/* The assembled values with 1 and with 3 threads on the adaptive ball (hanging nodes): bitwise equal */
static void check_threads(mf_context ctx, int dim)
{
#ifdef _OPENMP
  mf_mesh mesh;
  mf_space space;
  mf_operator A, S1, S3;
  t_ball(ctx, dim, 1, 1, &mesh);
  T_CALL(mf_space_create(mesh, 3, &space));
  T_CALL(mf_operator_create_helmholtz(space, MF_QUAD_GAUSS, 0.5, 3.0, t_ljungkvist, NULL, &A));
  const int nt = omp_get_max_threads();
  omp_set_num_threads(1);
  T_CALL(mf_operator_create_assembled(A, &S1));
  omp_set_num_threads(3);
  T_CALL(mf_operator_create_assembled(A, &S3));
  omp_set_num_threads(nt);
  const int64_t nnz = mf_csr(S1)->rowptr[space->nlocal];
  T_CHECK(mf_csr(S1)->rowptr == mf_csr(S3)->rowptr && mf_csr(S1)->colidx == mf_csr(S3)->colidx, "dim %d: the two assemblies do not share the pattern",
          dim);
  T_CHECK(!memcmp(mf_csr(S1)->vals, mf_csr(S3)->vals, sizeof(double) * (size_t)nnz), "dim %d: values with 1 and 3 threads differ", dim);
  mf_operator_destroy(&S1);
  mf_operator_destroy(&S3);
  mf_operator_destroy(&A);
  mf_space_destroy(&space);
  mf_mesh_destroy(&mesh);
#else
  (void)ctx;
  (void)dim;
#endif
}

static double t_one(const double *x, int dim, void *user)
{
  (void)x;
  (void)dim;
  (void)user;
  return 1.0;
}

/* -div(c grad u) = 1, u = 0 on the boundary, adaptive ball: the same CG on both operators */
static void check_cg(mf_context ctx, int dim, int p)
{
  mf_mesh mesh;
  mf_space space;
  mf_operator A, S;
  mf_vector b, u1, u2;
  t_ball(ctx, dim, 1, 1, &mesh);
  T_CALL(mf_space_create(mesh, p, &space));
  T_CALL(mf_operator_create_laplace(space, MF_QUAD_GAUSS, t_ljungkvist, NULL, &A));
  T_CALL(mf_operator_set_dirichlet(A, 1));
  T_CALL(mf_operator_create_assembled(A, &S));
  T_CALL(mf_vector_create(space, &b));
  T_CALL(mf_vector_create(space, &u1));
  T_CALL(mf_vector_create(space, &u2));
  T_CALL(mf_vector_assemble_rhs(b, t_one, NULL));
  T_CALL(mf_vector_zero_boundary(b));
  T_CALL(mf_vector_set_value(u1, 0.0));
  T_CALL(mf_vector_set_value(u2, 0.0));
  mf_cg cg1, cg2;
  mf_cg_info i1, i2;
  T_CALL(mf_cg_create(A, &cg1));
  T_CALL(mf_cg_create(S, &cg2));
  T_CALL(mf_cg_set_tolerance(cg1, 1e-13, 1000));
  T_CALL(mf_cg_set_tolerance(cg2, 1e-13, 1000));
  T_CALL(mf_cg_solve(cg1, b, u1, &i1));
  T_CALL(mf_cg_solve(cg2, b, u2, &i2));
  double nu, nd;
  T_CALL(mf_vector_norm2(u1, &nu));
  T_CALL(mf_vector_axpy(u2, -1.0, u1));
  T_CALL(mf_vector_norm2(u2, &nd));
  T_CHECK(i1.converged && i2.converged, "dim %d p %d: CG did not converge (%d, %d)", dim, p, i1.converged,
          i2.converged);
  T_CHECK(abs(i1.iterations - i2.iterations) <= 1, "dim %d p %d: CG iterations %d (matrix-free) vs %d (assembled)", dim,
          p, i1.iterations, i2.iterations);
  T_CHECK(nd <= 1e-10 * nu, "dim %d p %d: CG solutions differ by %.3e relative", dim, p, nd / nu);
  mf_cg_destroy(&cg1);
  mf_cg_destroy(&cg2);
  mf_vector_destroy(&b);
  mf_vector_destroy(&u1);
  mf_vector_destroy(&u2);
  mf_operator_destroy(&S);
  mf_operator_destroy(&A);
  mf_space_destroy(&space);
  mf_mesh_destroy(&mesh);
}

static int shell_apply(mf_vector x, mf_vector y, void *user)
{
  (void)user;
  return mf_vector_copy(y, x);
}

static void check_bad_input(mf_context ctx)
{
  mf_mesh mesh;
  mf_space space;
  mf_operator A, S = NULL, shell, single, S2 = NULL;
  T_CALL(mf_mesh_create(ctx, "cube", 2, 2, &mesh));
  T_CALL(mf_space_create(mesh, 2, &space));
  T_CALL(mf_operator_create_mass(space, MF_QUAD_GAUSS, NULL, NULL, &A));
  T_CALL(mf_operator_create_shell(space, shell_apply, NULL, NULL, &shell));
  EXPECT(mf_operator_create_assembled(NULL, &S), MF_ERR_NULL, "operator is NULL");
  EXPECT(mf_operator_create_assembled(A, NULL), MF_ERR_NULL, "output pointer assembled is NULL");
  EXPECT(mf_operator_create_assembled(shell, &S), MF_ERR_UNSUPPORTED, "can be assembled, not a shell operator");
  T_CHECK(S == NULL, "refused assembly of a shell operator left an operator");
  T_CALL(mf_operator_create_single(A, &single));
  EXPECT(mf_operator_create_assembled(single, &S), MF_ERR_UNSUPPORTED, "single-precision");
  T_CALL(mf_operator_create_assembled(A, &S));
  EXPECT(mf_operator_create_assembled(S, &S2), MF_ERR_UNSUPPORTED, "can be assembled, not an assembled (CSR) operator");
  T_CHECK(S2 == NULL, "refused assembly of an assembled operator left an operator");
  mf_operator_destroy(&S);
  mf_operator_destroy(&single);
  mf_operator_destroy(&shell);
  mf_operator_destroy(&A);
  mf_space_destroy(&space);
  mf_mesh_destroy(&mesh);
}

int main(int argc, char **argv)
{
  MPI_Init(&argc, &argv);
  mf_context ctx;
  T_CALL(mf_context_create(MPI_COMM_WORLD, "cpu", &ctx));
  check_bad_input(ctx);
  check_memory(ctx);
  if (argc < 2 || strcmp(argv[1], "memory")) { /* "memory": the memory checks alone (valgrind) */
    check_against_mf(ctx);
    check_threads(ctx, 2);
    check_threads(ctx, 3);
    for (int p = 1; p <= 3; p++) {
      check_cg(ctx, 2, p);
      check_cg(ctx, 3, p);
    }
  }
  mf_context_destroy(&ctx);
  return t_finish();
}
