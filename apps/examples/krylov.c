/* krylov.c -- an mfree operator inside a Krylov loop the user writes: Jacobi-preconditioned CG over the
 * raw arrays of mfree vectors (mf_vector_get_array), with mf_operator_apply as the only mfree call in
 * the loop. On the cpu backend the loop runs plain C over host arrays; on the cuda backend (when mfree
 * is built with it) over device arrays with cuBLAS, so no value crosses to the host. The result is
 * compared with mfree's own CG on the same problem: the same iterations (+-1) and the same solution
 * (1e-10 relative); the exit status says whether they agree.
 *   example-krylov [backend [level]]           backend "cpu" (default), "cuda" or "auto"
 * A level that is not a whole number, or a third argument, exits 2 (a typo must not run level 0). */
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <mpi.h>

#include "mfree.h"

#ifdef MFREE_WITH_CUDA
#include <cublas_v2.h>
#endif

#define CALL(expr)                                                                        \
  do {                                                                                    \
    if ((expr)) {                                                                         \
      fprintf(stderr, "krylov: %s failed: %s\n", #expr, mf_last_error_message());         \
      MPI_Abort(MPI_COMM_WORLD, 1);                                                       \
    }                                                                                     \
  } while (0)

/* The few vector operations CG needs, on the owned entries (n) of host or device arrays. */
typedef struct {
  int n;
  mf_memtype mem;
#ifdef MFREE_WITH_CUDA
  cublasHandle_t blas;
#endif
} kit;

#ifdef MFREE_WITH_CUDA
#define BLAS(expr)                                                           \
  do {                                                                       \
    cublasStatus_t st_ = (expr);                                             \
    if (st_ != CUBLAS_STATUS_SUCCESS) {                                      \
      fprintf(stderr, "krylov: %s failed (cuBLAS status %d)\n", #expr, st_); \
      MPI_Abort(MPI_COMM_WORLD, 1);                                          \
    }                                                                        \
  } while (0)
#endif

/* x^T y over all ranks */
static double dot(kit *k, const double *x, const double *y)
{
  double s = 0.0;
  if (k->mem == MF_MEM_HOST)
    for (int i = 0; i < k->n; i++) s += x[i] * y[i];
#ifdef MFREE_WITH_CUDA
  else BLAS(cublasDdot(k->blas, k->n, x, 1, y, 1, &s));
#endif
  MPI_Allreduce(MPI_IN_PLACE, &s, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
  return s;
}

/* y <- y + a x */
static void axpy(kit *k, double a, const double *x, double *y)
{
  if (k->mem == MF_MEM_HOST)
    for (int i = 0; i < k->n; i++) y[i] += a * x[i];
#ifdef MFREE_WITH_CUDA
  else BLAS(cublasDaxpy(k->blas, k->n, &a, x, 1, y, 1));
#endif
}

/* y <- x + b y */
static void xpby(kit *k, const double *x, double b, double *y)
{
  if (k->mem == MF_MEM_HOST)
    for (int i = 0; i < k->n; i++) y[i] = x[i] + b * y[i];
#ifdef MFREE_WITH_CUDA
  else {
    const double one = 1.0;
    BLAS(cublasDscal(k->blas, k->n, &b, y, 1));
    BLAS(cublasDaxpy(k->blas, k->n, &one, x, 1, y, 1));
  }
#endif
}

/* z <- d .* r (z must not be r) */
static void pmult(kit *k, const double *d, const double *r, double *z)
{
  if (k->mem == MF_MEM_HOST)
    for (int i = 0; i < k->n; i++) z[i] = d[i] * r[i];
#ifdef MFREE_WITH_CUDA
  else BLAS(cublasDdgmm(k->blas, CUBLAS_SIDE_LEFT, k->n, 1, r, k->n, d, 1, z, k->n)); /* diag(d) r */
#endif
}

/* Jacobi-preconditioned CG from x = 0, stopping when sqrt(r^T D^-1 r) has dropped by rtol (mfree's
 * criterion). Only p and Ap go through mfree; x, r, z and D^-1 stay checked out for the whole loop. */
static int user_cg(kit *k, mf_operator A, mf_vector dinv, mf_vector b, mf_vector x, mf_vector r, mf_vector z,
                   mf_vector p, mf_vector Ap, double rtol, int maxit)
{
  double *xa, *ra, *za, *pa;
  const double *da, *apa;
  CALL(mf_vector_set_value(x, 0.0));
  CALL(mf_vector_copy(r, b)); /* r = b - A 0 */
  CALL(mf_vector_get_array(x, k->mem, &xa));
  CALL(mf_vector_get_array(r, k->mem, &ra));
  CALL(mf_vector_get_array(z, k->mem, &za));
  CALL(mf_vector_get_array_read(dinv, k->mem, &da));
  CALL(mf_vector_get_array(p, k->mem, &pa));
  pmult(k, da, ra, za);
  pmult(k, da, ra, pa); /* p = z */
  double rz = dot(k, ra, za), res0 = sqrt(rz);
  int it = 0;
  while (it < maxit && sqrt(rz) > rtol * res0) {
    CALL(mf_vector_restore_array(p, &pa)); /* mfree reads p: give it back, then take it again */
    CALL(mf_operator_apply(A, p, Ap));
    CALL(mf_vector_get_array(p, k->mem, &pa));
    CALL(mf_vector_get_array_read(Ap, k->mem, &apa));
    const double alpha = rz / dot(k, pa, apa);
    axpy(k, alpha, pa, xa);
    axpy(k, -alpha, apa, ra);
    CALL(mf_vector_restore_array_read(Ap, &apa));
    pmult(k, da, ra, za);
    const double rz_new = dot(k, ra, za);
    xpby(k, za, rz_new / rz, pa);
    rz = rz_new;
    it++;
  }
  CALL(mf_vector_restore_array(p, &pa));
  CALL(mf_vector_restore_array_read(dinv, &da));
  CALL(mf_vector_restore_array(z, &za));
  CALL(mf_vector_restore_array(r, &ra));
  CALL(mf_vector_restore_array(x, &xa));
  return it;
}

static double one(const double *x, int dim, void *user)
{
  (void)x, (void)dim, (void)user;
  return 1.0;
}

/* The level argument: a whole number (the library checks its range), anything else refused. */
static int parse_level(const char *s, int *level)
{
  char *end;
  errno = 0;
  const long v = strtol(s, &end, 10);
  if (end == s || *end || errno || v < INT_MIN || v > INT_MAX) return 1;
  *level = (int)v;
  return 0;
}

int main(int argc, char **argv)
{
  MPI_Init(&argc, &argv);
  const char *backend = argc > 1 ? argv[1] : "cpu";
  int level = 3, rank;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  if (argc > 3 || (argc > 2 && parse_level(argv[2], &level))) { /* a typo must not run another problem */
    if (rank == 0) {
      if (argc > 3) fprintf(stderr, "krylov: unexpected argument '%s'", argv[3]);
      else fprintf(stderr, "krylov: level '%s' is not a whole number", argv[2]);
      fprintf(stderr, " (usage: example-krylov [backend [level]])\n");
    }
    MPI_Finalize();
    return 2;
  }
  mf_context ctx;
  mf_mesh mesh;
  mf_space space;
  mf_operator A;
  mf_vector b, x, xref, dinv, r, z, p, Ap;
  mf_cg cg;
  mf_cg_info info;
  const double rtol = 1e-10;
  mf_cuda_state cuda_state;
  const char *why = "";
  mf_cuda_status(&cuda_state, &why);
  if (!strcmp(backend, "cuda") && cuda_state != MF_CUDA_USABLE) {
    /* 77: the test suite's "skipped", unless the suite runs on a GPU machine (MFREE_TEST_REQUIRE_GPU=1),
     * where no usable GPU is a failure */
    const char *require = getenv("MFREE_TEST_REQUIRE_GPU");
    if (rank == 0) fprintf(stderr, "krylov: backend 'cuda' not usable here: %s\n", why);
    MPI_Finalize();
    return require && !strcmp(require, "1") ? 1 : 77;
  }
  CALL(mf_context_create(MPI_COMM_WORLD, backend, &ctx));
  CALL(mf_mesh_create(ctx, "ball", 3, level, &mesh));
  CALL(mf_space_create(mesh, 2, &space));
  CALL(mf_operator_create_laplace(space, MF_QUAD_GAUSS, NULL, NULL, &A));
  CALL(mf_operator_set_dirichlet(A, 1)); /* -lap u = 1, u = 0 on the boundary */
  mf_vector *vs[] = {&b, &x, &xref, &dinv, &r, &z, &p, &Ap};
  for (int i = 0; i < 8; i++) CALL(mf_vector_create(space, vs[i]));
  CALL(mf_vector_assemble_rhs(b, one, NULL));
  CALL(mf_vector_zero_boundary(b));

  /* mfree's own CG (Jacobi) */
  CALL(mf_cg_create(A, &cg));
  CALL(mf_cg_set_tolerance(cg, rtol, 1000));
  CALL(mf_vector_set_value(xref, 0.0));
  CALL(mf_cg_solve(cg, b, xref, &info));

  /* the user's CG: D^-1 on the arrays once, then the loop */
  kit k;
  memset(&k, 0, sizeof k);
  k.mem = MF_MEM_HOST;
  CALL(mf_space_local_sizes(space, &k.n, NULL));
  const int device = !strcmp(mf_context_backend(ctx), "cuda");
#ifdef MFREE_WITH_CUDA
  if (device) {
    k.mem = MF_MEM_DEVICE;
    BLAS(cublasCreate(&k.blas));
  }
#endif
  CALL(mf_operator_diagonal(A, dinv));
  double *da;
  CALL(mf_vector_get_array(dinv, MF_MEM_HOST, &da)); /* once, on the host: one copy each way */
  for (int i = 0; i < k.n; i++) da[i] = 1.0 / da[i];
  CALL(mf_vector_restore_array(dinv, &da));
  const double t0 = MPI_Wtime();
  const int its = user_cg(&k, A, dinv, b, x, r, z, p, Ap, rtol, 1000);
  const double t_user = MPI_Wtime() - t0;
#ifdef MFREE_WITH_CUDA
  if (device) cublasDestroy(k.blas);
#endif

  double dx, nx;
  CALL(mf_vector_axpy(x, -1.0, xref));
  CALL(mf_vector_norm2(x, &dx));
  CALL(mf_vector_norm2(xref, &nx));
  int64_t ndofs;
  CALL(mf_space_num_dofs(space, &ndofs));
  const int ok = abs(its - info.iterations) <= 1 && dx <= 1e-10 * nx;
  if (rank == 0) {
    printf("backend %s, %lld DoFs, %s arrays\n", mf_context_backend(ctx), (long long)ndofs,
           device ? "device" : "host");
    printf("mfree CG:    %d iterations (%.3f s)\n", info.iterations, info.seconds);
    printf("user's CG:   %d iterations (%.3f s)\n", its, t_user);
    printf("|x_user - x_mfree| / |x_mfree| = %.2e  %s\n", dx / nx, ok ? "agree" : "DIFFER");
  }
  mf_cg_destroy(&cg);
  for (int i = 0; i < 8; i++) mf_vector_destroy(vs[i]);
  mf_operator_destroy(&A);
  mf_space_destroy(&space);
  mf_mesh_destroy(&mesh);
  mf_context_destroy(&ctx);
  MPI_Finalize();
  return ok ? 0 : 1;
}
