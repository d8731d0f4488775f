/* t14_cg_monitor -- the CG monitor (argv[1]: backend). On a Dirichlet Laplace problem on the ball:
 *   the monitor sees iteration 0, 1, ..., n with exactly the residual history's values, and the solve
 *   with a monitor takes the same iterations to the same solution as without one;
 *   a monitor that asks to stop (on one rank only, under MPI) stops every rank after that iteration
 *   with MF_ERR_NOT_CONVERGED, a message naming the iteration, and info/history of the iterations done;
 *   a stop request on the converged iteration is no stop; NULL removes the monitor. */
#include "mf_test.h"

#define MAX_CALLS 1000

typedef struct {
  int ncalls, stop_at, stop_rank, rank;
  int it[MAX_CALLS];
  double res[MAX_CALLS];
} record;

static int monitor(int iteration, double residual, void *user)
{
  record *r = (record *)user;
  if (r->ncalls < MAX_CALLS) r->it[r->ncalls] = iteration, r->res[r->ncalls] = residual;
  r->ncalls++;
  return iteration == r->stop_at && (r->stop_rank < 0 || r->stop_rank == r->rank) ? 7 : 0;
}

static double rhs(const double *x, int dim, void *u)
{
  (void)u;
  return 1.0 + x[0] * x[dim - 1];
}

static double max_diff(mf_vector a, mf_vector b, int n)
{
  double *ha = malloc(sizeof(double) * (n ? n : 1)), *hb = malloc(sizeof(double) * (n ? n : 1)), d = 0.0;
  T_CALL(mf_vector_get_values(a, ha));
  T_CALL(mf_vector_get_values(b, hb));
  for (int i = 0; i < n; i++) d = fmax(d, fabs(ha[i] - hb[i]));
  free(ha);
  free(hb);
  MPI_Allreduce(MPI_IN_PLACE, &d, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  return d;
}

int main(int argc, char **argv)
{
  MPI_Init(&argc, &argv);
  const char *be = t_backend(argc, argv);
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  mf_context ctx;
  mf_mesh mesh;
  mf_space s;
  mf_operator A;
  mf_vector b, x, x0;
  mf_cg cg;
  mf_cg_info info, info0;
  const double *hist;
  int nhist, nowned, nlocal;
  T_CALL(mf_context_create(MPI_COMM_WORLD, be, &ctx));
  T_CALL(mf_mesh_create(ctx, "ball", 2, 3, &mesh));
  T_CALL(mf_space_create(mesh, 2, &s));
  T_CALL(mf_space_local_sizes(s, &nowned, &nlocal));
  T_CALL(mf_operator_create_laplace(s, MF_QUAD_GAUSS, t_ljungkvist, NULL, &A));
  /* colored scatter: the same input gives bitwise the same output (atomics add in any order) */
  T_CALL(mf_operator_set_scatter(A, MF_SCATTER_COLORED));
  T_CALL(mf_operator_set_dirichlet(A, 1));
  T_CALL(mf_vector_create(s, &b));
  T_CALL(mf_vector_create(s, &x));
  T_CALL(mf_vector_create(s, &x0));
  T_CALL(mf_vector_assemble_rhs(b, rhs, NULL));
  T_CALL(mf_vector_zero_boundary(b));
  T_CALL(mf_cg_create(A, &cg));
  T_CALL(mf_cg_set_tolerance(cg, 1e-10, MAX_CALLS - 1));

  /* without a monitor: the reference */
  T_CALL(mf_vector_set_value(x0, 0.0));
  T_CALL(mf_cg_solve(cg, b, x0, &info0));
  T_CHECK(info0.converged && info0.iterations > 5, "reference solve: %d iterations, converged %d", info0.iterations,
          info0.converged);

  /* a monitor that only watches */
  record rec = {0, -1, -1, rank, {0}, {0}};
  T_CALL(mf_cg_set_monitor(cg, monitor, &rec));
  T_CALL(mf_vector_set_value(x, 0.0));
  T_CALL(mf_cg_solve(cg, b, x, &info));
  T_CALL(mf_cg_residual_history(cg, &hist, &nhist));
  T_CHECK(info.iterations == info0.iterations && info.converged, "with a monitor: %d iterations (converged %d), without %d",
          info.iterations, info.converged, info0.iterations);
  T_CHECK(max_diff(x, x0, nowned) == 0.0, "the monitor changed the solution by %g", max_diff(x, x0, nowned));
  T_CHECK(rec.ncalls == nhist && nhist == info.iterations + 1, "monitor called %d times, history has %d entries, %d iterations",
          rec.ncalls, nhist, info.iterations);
  for (int k = 0; k < rec.ncalls && k < nhist; k++)
    T_CHECK(rec.it[k] == k && rec.res[k] == hist[k], "call %d: iteration %d residual %.17g, history %.17g", k, rec.it[k],
            rec.res[k], hist[k]);

  /* a stop at iteration 3, asked for by the last rank only */
  rec = (record){0, 3, size - 1, rank, {0}, {0}};
  T_CALL(mf_vector_set_value(x, 0.0));
  EXPECT(mf_cg_solve(cg, b, x, &info), MF_ERR_NOT_CONVERGED, "stopped by its monitor at iteration 3");
  T_CALL(mf_cg_residual_history(cg, &hist, &nhist));
  T_CHECK(info.iterations == 3 && !info.converged && nhist == 4 && rec.ncalls == 4,
          "stop at 3: %d iterations (converged %d), %d history entries, %d monitor calls on rank %d", info.iterations,
          info.converged, nhist, rec.ncalls, rank);
  T_CHECK(info.residual == hist[3], "stop at 3: info.residual %g, history %g", info.residual, hist[3]);

  /* a stop before the first iteration leaves x as it was */
  rec = (record){0, 0, -1, rank, {0}, {0}};
  T_CALL(mf_vector_copy(x, x0));
  EXPECT(mf_cg_solve(cg, b, x, &info), MF_ERR_NOT_CONVERGED, "at iteration 0");
  T_CHECK(info.iterations == 0 && rec.ncalls == 1 && max_diff(x, x0, nowned) == 0.0,
          "stop at 0: %d iterations, %d calls, x changed by %g", info.iterations, rec.ncalls, max_diff(x, x0, nowned));

  /* a stop asked for on the iteration that converges is no stop */
  rec = (record){0, info0.iterations, -1, rank, {0}, {0}};
  T_CALL(mf_vector_set_value(x, 0.0));
  T_CALL(mf_cg_solve(cg, b, x, &info));
  T_CHECK(info.converged && info.iterations == info0.iterations, "stop on convergence: %d iterations, converged %d",
          info.iterations, info.converged);

  /* NULL removes the monitor */
  rec.ncalls = 0;
  T_CALL(mf_cg_set_monitor(cg, NULL, &rec));
  T_CALL(mf_vector_set_value(x, 0.0));
  T_CALL(mf_cg_solve(cg, b, x, &info));
  T_CHECK(rec.ncalls == 0 && info.converged, "after removal: %d monitor calls", rec.ncalls);
  EXPECT(mf_cg_set_monitor(NULL, monitor, NULL), MF_ERR_NULL, "cg is NULL");

  mf_cg_destroy(&cg);
  mf_vector_destroy(&x0);
  mf_vector_destroy(&x);
  mf_vector_destroy(&b);
  mf_operator_destroy(&A);
  mf_space_destroy(&s);
  mf_mesh_destroy(&mesh);
  mf_context_destroy(&ctx);
  return t_finish();
}
