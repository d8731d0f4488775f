/* pattern-time -- wall time of the assembled operators' sparsity (lib/assembled/assembly_pattern.c), the host
 * work that a first assembly on a space waits for, and of that first assembly (mass operator, cpu
 * backend, pattern and values).
 *
 *   pattern-time [--dim 2|3] [--degree p] [--mesh cube|ball] [--trees t] [--level L] [--shells k]
 *                [--reps r]
 *
 * The mesh is mf_mesh_create_box's t^dim trees refined L times, then k rounds of
 * mf_mesh_refine_shells (hanging nodes). The pattern is made r times on the space (dropped between
 * runs); printed: the fastest and the median wall time and the least CPU time (all threads), the
 * slowest rank's, with the DoFs, nonzeros, ranks and OpenMP threads, one CSV line after a header. */
#include "assembled/assembly_impl.h"

#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static int cmp_double(const void *a, const void *b)
{
  const double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

#define CALL(x)                                                                                                        \
  do {                                                                                                                 \
    if (x) {                                                                                                           \
      fprintf(stderr, "pattern-time: %s failed: %s\n", #x, mf_last_error_message());                                  \
      MPI_Abort(MPI_COMM_WORLD, 1);                                                                                    \
    }                                                                                                                  \
  } while (0)

/* CPU seconds of this process (all its threads): on a shared machine, what the work took
 * whatever else runs there */
static double cpu_seconds(void)
{
  struct timespec t;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
  return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

/* the time of the slowest rank */
static double slowest(double t)
{
  double m;
  MPI_Allreduce(&t, &m, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  return m;
}

int main(int argc, char **argv)
{
  MPI_Init(&argc, &argv);
  int dim = 3, degree = 1, trees = 1, level = 5, shells = 0, reps = 3, rank, nranks;
  const char *mesh_name = "cube";
  for (int a = 1; a + 1 < argc; a += 2) {
    if (!strcmp(argv[a], "--dim")) dim = atoi(argv[a + 1]);
    else if (!strcmp(argv[a], "--degree")) degree = atoi(argv[a + 1]);
    else if (!strcmp(argv[a], "--mesh")) mesh_name = argv[a + 1];
    else if (!strcmp(argv[a], "--trees")) trees = atoi(argv[a + 1]);
    else if (!strcmp(argv[a], "--level")) level = atoi(argv[a + 1]);
    else if (!strcmp(argv[a], "--shells")) shells = atoi(argv[a + 1]);
    else if (!strcmp(argv[a], "--reps")) reps = atoi(argv[a + 1]);
    else {
      fprintf(stderr, "pattern-time: unknown option %s\n", argv[a]);
      MPI_Abort(MPI_COMM_WORLD, 2);
    }
  }
  if (reps < 1 || reps > 100) reps = 3;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &nranks);
  mf_context ctx;
  mf_mesh mesh;
  mf_space s;
  mf_operator M, A;
  CALL(mf_context_create(MPI_COMM_WORLD, "cpu", &ctx));
  const int t3[3] = {trees, trees, trees};
  CALL(mf_mesh_create_box(ctx, mesh_name, dim, t3, level, &mesh));
  if (shells) CALL(mf_mesh_refine_shells(mesh, shells));
  CALL(mf_space_create(mesh, degree, &s));
  int64_t ndofs, nnz_local, nnz;
  CALL(mf_space_num_dofs(s, &ndofs));
  double *times = malloc(sizeof(double) * 2 * (size_t)reps), *cpu = times + reps;
  for (int r = 0; r < reps; r++) {
    free(s->csr_rowptr);
    free(s->csr_colidx);
    s->csr_rowptr = NULL;
    s->csr_colidx = NULL;
    MPI_Barrier(MPI_COMM_WORLD);
    const double t0 = MPI_Wtime(), c0 = cpu_seconds();
    CALL(mf_assembly_pattern(s, "the timed pattern", 0));
    cpu[r] = slowest(cpu_seconds() - c0);
    times[r] = slowest(MPI_Wtime() - t0);
  }
  nnz_local = s->csr_rowptr[s->nlocal];
  MPI_Allreduce(&nnz_local, &nnz, 1, MPI_INT64_T, MPI_SUM, MPI_COMM_WORLD);
  qsort(times, (size_t)reps, sizeof *times, cmp_double);
  qsort(cpu, (size_t)reps, sizeof *cpu, cmp_double);
  /* the first assembly: the pattern made again, then the values */
  free(s->csr_rowptr);
  free(s->csr_colidx);
  s->csr_rowptr = NULL;
  s->csr_colidx = NULL;
  CALL(mf_operator_create_mass(s, MF_QUAD_GAUSS, NULL, NULL, &M));
  MPI_Barrier(MPI_COMM_WORLD);
  double t0 = MPI_Wtime();
  CALL(mf_operator_create_assembled(M, &A));
  const double assembly = slowest(MPI_Wtime() - t0);
  if (!rank) {
    printf("mesh,dim,degree,dofs,nnz_local_sum,ranks,threads,reps,pattern_min_s,pattern_median_s,pattern_cpu_min_s,first_assembly_s\n");
    printf("%s%s,%d,%d,%lld,%lld,%d,%d,%d,%.4f,%.4f,%.4f,%.4f\n", mesh_name, shells ? "-shells" : "", dim, degree,
           (long long)ndofs, (long long)nnz, nranks, mf_max_threads(), reps, times[0], times[reps / 2], cpu[0],
           assembly);
  }
  free(times);
  mf_operator_destroy(&A);
  mf_operator_destroy(&M);
  mf_space_destroy(&s);
  mf_mesh_destroy(&mesh);
  mf_context_destroy(&ctx);
  MPI_Finalize();
  return 0;
}
