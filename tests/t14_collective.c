/* t14_collective -- an error on one rank alone becomes every rank's error (run on 2 or more ranks).
 * Rank 1 fails one host allocation (a test hook), each allocation in turn; each time the
 * chain mesh, space, vectors, operator, Chebyshev set-up, CG solve, multigrid set-up runs on every
 * rank until the first failure. Every rank must fail at the same step with the same code, and its
 * message must name rank 1 and the test failure; a rank left waiting in a collective call is a hang, which
 * the test's CTest timeout turns into a failure. argv[1]: fail every n-th allocation only (default 1);
 * under valgrind, the failure paths must not leak. */
#include "mf_test.h"
#include "mf_testing.h"

static double rhs(const double *x, int dim, void *u)
{
  (void)u;
  return 1.0 + x[0] * x[dim - 1];
}

static long chain_allocs; /* host allocations of the last chain, to its end */

/* The step (1..) at which the chain failed, 0 if it ran through; *code: the failing code. */
static int chain(mf_context ctx, long fail_at, int rank, int *code)
{
  mf_mesh mesh = NULL;
  mf_space s = NULL;
  mf_operator A = NULL;
  mf_vector b = NULL, x = NULL;
  mf_pc cheb = NULL, mg = NULL;
  mf_cg cg = NULL;
  const int trees[3] = {2, 1, 1};
  if (rank == 1) mf_test_fail_host_alloc(fail_at);
  int step = 0, ierr = 0;
#define STEP(expr) \
  if (!ierr) {     \
    step++;        \
    ierr = (expr); \
  }
  STEP(mf_mesh_create_box(ctx, "deformed", 2, trees, 2, &mesh));
  STEP(mf_space_create(mesh, 2, &s));
  STEP(mf_vector_create(s, &b));
  STEP(mf_vector_create(s, &x));
  STEP(mf_vector_assemble_rhs(b, rhs, NULL));
  STEP(mf_operator_create_laplace(s, MF_QUAD_GAUSS, NULL, NULL, &A));
  STEP(mf_operator_set_dirichlet(A, 1));
  STEP(mf_pc_create(A, MF_PC_CHEBYSHEV, &cheb));
  STEP(mf_pc_setup(cheb));
  STEP(mf_cg_create(A, &cg));
  STEP(mf_cg_set_pc(cg, cheb));
  STEP(mf_cg_set_tolerance(cg, 1e-8, 200));
  STEP(mf_cg_solve(cg, b, x, NULL));
  STEP(mf_pc_create(A, MF_PC_MULTIGRID, &mg));
  STEP(mf_pc_setup(mg));
#undef STEP
  chain_allocs = mf_test_host_alloc_count();
  if (rank == 1) mf_test_fail_host_alloc(0);
  mf_cg_destroy(&cg);
  mf_pc_destroy(&mg);
  mf_pc_destroy(&cheb);
  mf_operator_destroy(&A);
  mf_vector_destroy(&x);
  mf_vector_destroy(&b);
  mf_space_destroy(&s);
  mf_mesh_destroy(&mesh);
  *code = ierr;
  return ierr ? step : 0;
}

int main(int argc, char **argv)
{
  MPI_Init(&argc, &argv);
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  if (size < 2) {
    fprintf(stderr, "SKIP: needs 2 or more ranks\n");
    MPI_Finalize();
    return 77;
  }
  mf_context ctx;
  T_CALL(mf_context_create(MPI_COMM_WORLD, "cpu", &ctx));
  /* the allocations of the chain on rank 1, then a run that fails at each in turn */
  int code = 0;
  T_CHECK(chain(ctx, 0, rank, &code) == 0, "the chain fails without a test failure: %s", mf_last_error_message());
  long nalloc = chain_allocs;
  MPI_Bcast(&nalloc, 1, MPI_LONG, 1, MPI_COMM_WORLD);
  unsigned steps = 0; /* the steps seen failing */
  const long stride = argc > 1 ? atol(argv[1]) : 1; /* every stride-th allocation (valgrind runs fewer) */
  for (long n = 1; n <= nalloc; n += stride > 0 ? stride : 1) {
    const int step = chain(ctx, n, rank, &code);
    int v[4] = {step, -step, code, -code};
    MPI_Allreduce(MPI_IN_PLACE, v, 4, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    T_CHECK(v[0] == -v[1] && v[2] == -v[3], "allocation %ld: ranks disagree: steps %d..%d, codes %d..%d", n, v[0],
            -v[1], v[2], -v[3]);
    const char *m = mf_context_error_message(ctx);
    T_CHECK(step > 0, "allocation %ld failed on rank 1, but the chain succeeded", n);
    T_CHECK(code == MF_ERR_MEMORY, "allocation %ld, step %d: code %d (%s)", n, step, code, m);
    T_CHECK(strstr(m, "rank 1: ") && strstr(m, "out of host memory"), "allocation %ld, step %d: message '%s'",
            n, step, m);
    if (step > 0) steps |= 1u << step;
  }
  int nsteps = 0;
  for (int k = 0; k < 32; k++) nsteps += steps >> k & 1;
  T_CHECK(nsteps >= (stride > 1 ? 4 : 8), "%ld allocations failed at %d different steps only (mask 0x%x)", nalloc,
          nsteps, steps);
  mf_context_destroy(&ctx);
  return t_finish();
}
