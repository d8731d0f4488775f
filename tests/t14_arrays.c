/* t14_arrays -- memory-typed vector access (mf_vector_get_array and friends).
 *   values:    arrays show the vector's values, and what is written there becomes the vector's;
 *   copies:    on a vector with a device copy, host and device are copied only when the other side is
 *              stale, with exact counts (get host twice: 1 copy; a device write between: 2; host
 *              write then two operator applications: 1 upload; a read-only restore: no upload);
 *   callbacks: shell operators and preconditioners working on host arrays inside CG see the values
 *              CG wrote on the device, and their host writes reach the device; CG's solution read on
 *              the host inside a callback is fresh every time, and cannot be got for writing there;
 *   errors:    restore without get, a second get while writing, vectors in use while checked out,
 *              wrong memory types, NULL pointers, callbacks that return with an array checked out.
 * argv[1] = "cpu": the cpu backend as users see it (host arrays only), then the copy logic on an
 * emulated device (mf_context_emulate_device: the CPU twin of the cuda backend's host copy);
 * "cuda": the same on the GPU (exits 77 without one). */
#include "mf_test.h"
#include "mf_testing.h"

typedef struct {
  mf_space space;
  double *leak_y; /* the shell that forgets to restore leaves its array here */
  int forget;     /* 1: leave y checked out for writing; 2: leave x checked out read-only */
} shell_data;

static double dval(int i) { return 1.0 + (i % 5); } /* diagonal of the shell: 5 distinct values */
static double fval(int i, int rank) { return sin(0.37 * i + rank) + 0.1 * rank; }

static void expect_counts(mf_vector v, long long th, long long td, const char *when)
{
  long long a, b;
  mf_vector_copy_counts(v, &a, &b);
  T_CHECK(a == th && b == td, "%s: %lld copies to host and %lld to device, expected %lld and %lld", when, a, b, th, td);
}

/* y = D x on host arrays (owned entries) */
static int shell_apply(mf_vector x, mf_vector y, void *user)
{
  shell_data *sd = (shell_data *)user;
  int nowned;
  const double *xa;
  double *ya;
  mf_space_local_sizes(sd->space, &nowned, NULL);
  int e = mf_vector_get_array_read(x, MF_MEM_HOST, &xa);
  if (!e) e = mf_vector_get_array(y, MF_MEM_HOST, &ya);
  if (e) return e;
  for (int i = 0; i < nowned; i++) ya[i] = dval(i) * xa[i];
  if (sd->forget == 1) sd->leak_y = ya;
  else e = mf_vector_restore_array(y, &ya);
  if (sd->forget != 2 && !e) e = mf_vector_restore_array_read(x, &xa);
  return e;
}

static int shell_diag(mf_vector x, mf_vector d, void *user)
{
  (void)x;
  shell_data *sd = (shell_data *)user;
  int nowned;
  double *da;
  mf_space_local_sizes(sd->space, &nowned, NULL);
  MF_CALL(mf_vector_get_array(d, MF_MEM_HOST, &da));
  for (int i = 0; i < nowned; i++) da[i] = dval(i);
  return mf_vector_restore_array(d, &da);
}

/* z = D^-1 r on host arrays, with dinv = 1 ./ diag(A) (the built-in Jacobi's arithmetic) */
typedef struct {
  mf_vector dinv;
  int nowned;
  mf_vector watch;  /* the solution of the running CG, read on the host at every call (NULL: not) */
  double watch_err; /* largest relative difference of its host sum from mf_vector_sum */
  int watch_reads, watch_write_err; /* host reads; the error code of a get for writing */
} jacobi_data;
static int host_jacobi(mf_vector r, mf_vector z, void *user)
{
  jacobi_data *jd = (jacobi_data *)user;
  const double *ra, *da;
  double *za;
  if (jd->watch) { /* CG changes it on the device between calls: every host read must be fresh */
    const double *wa;
    double hs = 0.0, s;
    MF_CALL(mf_vector_get_array_read(jd->watch, MF_MEM_HOST, &wa));
    for (int i = 0; i < jd->nowned; i++) hs += wa[i];
    MF_CALL(mf_vector_restore_array_read(jd->watch, &wa));
    MPI_Allreduce(MPI_IN_PLACE, &hs, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    MF_CALL(mf_vector_sum(jd->watch, &s));
    jd->watch_err = fmax(jd->watch_err, fabs(hs - s) / fmax(fabs(s), 1e-300));
    jd->watch_reads++;
    double *w = NULL;
    jd->watch_write_err = mf_vector_get_array(jd->watch, MF_MEM_HOST, &w);
    if (!jd->watch_write_err) MF_CALL(mf_vector_restore_array(jd->watch, &w));
  }
  MF_CALL(mf_vector_get_array_read(r, MF_MEM_HOST, &ra));
  MF_CALL(mf_vector_get_array_read(jd->dinv, MF_MEM_HOST, &da));
  MF_CALL(mf_vector_get_array(z, MF_MEM_HOST, &za));
  for (int i = 0; i < jd->nowned; i++) za[i] = da[i] * ra[i];
  MF_CALL(mf_vector_restore_array(z, &za));
  MF_CALL(mf_vector_restore_array_read(jd->dinv, &da));
  return mf_vector_restore_array_read(r, &ra);
}

static double max_diff(mf_vector a, mf_vector b, int n)
{
  const double *x, *y;
  double d = 0.0;
  T_CALL(mf_vector_get_array_read(a, MF_MEM_HOST, &x));
  T_CALL(mf_vector_get_array_read(b, MF_MEM_HOST, &y));
  for (int i = 0; i < n; i++) d = fmax(d, fabs(x[i] - y[i]));
  T_CALL(mf_vector_restore_array_read(b, &y));
  T_CALL(mf_vector_restore_array_read(a, &x));
  MPI_Allreduce(MPI_IN_PLACE, &d, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  return d;
}

/* Arrays show the values and take writes; on the cpu backend without a device, the host array is
 * the vector's own (no copies) and MF_MEM_DEVICE is refused. */
static void check_values(mf_context ctx, mf_space s, int rank)
{
  int nowned, nlocal;
  mf_vector v, w;
  const double *r;
  double *a;
  T_CALL(mf_space_local_sizes(s, &nowned, &nlocal));
  T_CALL(mf_vector_create(s, &v));
  T_CALL(mf_vector_create(s, &w));
  T_CALL(mf_vector_set_value(v, 3.0));
  T_CALL(mf_vector_get_array_read(v, MF_MEM_HOST, &r));
  int bad = 0;
  for (int i = 0; i < nlocal; i++) bad += r[i] != 3.0;
  T_CHECK(bad == 0, "%d of %d host entries differ from 3 after set_value", bad, nlocal);
  T_CALL(mf_vector_restore_array_read(v, &r));
  T_CHECK(r == NULL, "restore must set the pointer to NULL");
  T_CALL(mf_vector_get_array(v, MF_MEM_HOST, &a));
  for (int i = 0; i < nowned; i++) a[i] = fval(i, rank);
  T_CALL(mf_vector_restore_array(v, &a));
  T_CHECK(a == NULL, "restore must set the pointer to NULL");
  double *h = malloc(sizeof(double) * (nowned ? nowned : 1)), sum = 0.0, want = 0.0;
  T_CALL(mf_vector_get_values(v, h));
  bad = 0;
  for (int i = 0; i < nowned; i++) {
    bad += h[i] != fval(i, rank);
    want += fval(i, rank);
  }
  T_CHECK(bad == 0, "%d owned entries differ from what was written to the host array", bad);
  MPI_Allreduce(MPI_IN_PLACE, &want, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
  T_CALL(mf_vector_sum(v, &sum));
  T_CHECK(fabs(sum - want) <= 1e-12 * fmax(1.0, fabs(want)), "sum %.17g after a host write, expected %.17g", sum,
          want);
  /* a device array of the device backend shows the same values */
  if (v->mirrored) {
    const double *dv;
    T_CALL(mf_vector_get_array_read(v, MF_MEM_DEVICE, &dv));
    T_CHECK(dv == v->data, "the device array is the vector's data");
    T_CALL(mf_vector_restore_array_read(v, &dv));
  } else {
    T_CALL(mf_vector_get_array_read(v, MF_MEM_HOST, &r));
    T_CHECK(r == v->data, "without a device the host array is the vector's own");
    T_CALL(mf_vector_restore_array_read(v, &r));
    EXPECT(mf_vector_get_array(v, MF_MEM_DEVICE, &a), MF_ERR_BACKEND, "backend 'cpu'");
    T_CHECK(a == NULL, "a failed get leaves the pointer NULL");
    long long th, td;
    mf_vector_copy_counts(v, &th, &td);
    T_CHECK(th == 0 && td == 0, "no copies without a device (%lld, %lld)", th, td);
  }
  /* several read-only arrays at once, then one for writing */
  const double *r1, *r2;
  T_CALL(mf_vector_get_array_read(v, MF_MEM_HOST, &r1));
  T_CALL(mf_vector_get_array_read(v, MF_MEM_HOST, &r2));
  T_CALL(mf_vector_copy(w, v)); /* reading the vector meanwhile is allowed */
  T_CALL(mf_vector_restore_array_read(v, &r2));
  T_CALL(mf_vector_restore_array_read(v, &r1));
  T_CALL(mf_vector_get_array(v, MF_MEM_HOST, &a));
  T_CALL(mf_vector_restore_array(v, &a));
  T_CHECK(max_diff(v, w, nowned) == 0.0, "copy made while arrays were read differs");
  free(h);
  mf_vector_destroy(&w);
  mf_vector_destroy(&v);
}

/* Exact copy counts on a vector with a device copy (cuda, or the emulated device). */
static void check_copies(mf_space s, int rank)
{
  int nowned;
  mf_operator A;
  mf_vector v, y, w, yref;
  const double *r;
  double *a;
  T_CALL(mf_space_local_sizes(s, &nowned, NULL));
  T_CALL(mf_operator_create_laplace(s, MF_QUAD_GAUSS, t_ljungkvist, NULL, &A));
  /* colored scatter: the same input gives bitwise the same output (atomics add in any order) */
  T_CALL(mf_operator_set_scatter(A, MF_SCATTER_COLORED));
  T_CALL(mf_vector_create(s, &v));
  T_CALL(mf_vector_create(s, &y));
  T_CALL(mf_vector_create(s, &w));
  T_CALL(mf_vector_create(s, &yref));
  T_CHECK(v->mirrored, "vector without a host copy on a device backend");

  T_CALL(mf_vector_set_value(v, 2.0));
  expect_counts(v, 0, 0, "fresh vector after set_value");
  T_CALL(mf_vector_get_array_read(v, MF_MEM_HOST, &r));
  T_CHECK(nowned == 0 || r[0] == 2.0, "host copy shows %g, expected 2", nowned ? r[0] : 2.0);
  T_CALL(mf_vector_restore_array_read(v, &r));
  expect_counts(v, 1, 0, "first host read");
  T_CALL(mf_vector_get_array_read(v, MF_MEM_HOST, &r));
  T_CALL(mf_vector_restore_array_read(v, &r));
  expect_counts(v, 1, 0, "second host read, nothing changed");

  T_CALL(mf_vector_scale(v, 3.0)); /* a device write */
  T_CALL(mf_vector_get_array_read(v, MF_MEM_HOST, &r));
  T_CHECK(nowned == 0 || r[0] == 6.0, "host copy shows %g after scale, expected 6", nowned ? r[0] : 6.0);
  T_CALL(mf_vector_restore_array_read(v, &r));
  expect_counts(v, 2, 0, "host read after a device write");

  T_CALL(mf_vector_get_array(v, MF_MEM_HOST, &a)); /* host current: no copy */
  for (int i = 0; i < nowned; i++) a[i] = fval(i, rank);
  T_CALL(mf_vector_restore_array(v, &a));
  expect_counts(v, 2, 0, "host write");
  T_CALL(mf_vector_get_array_read(v, MF_MEM_HOST, &r));
  T_CALL(mf_vector_restore_array_read(v, &r));
  expect_counts(v, 2, 0, "host read after the host write");
  T_CALL(mf_operator_apply(A, v, y));
  expect_counts(v, 2, 1, "operator apply after the host write");
  T_CALL(mf_operator_apply(A, v, y));
  expect_counts(v, 2, 1, "second operator apply");
  /* the same product from values set the ordinary way */
  double *h = malloc(sizeof(double) * (nowned ? nowned : 1));
  for (int i = 0; i < nowned; i++) h[i] = fval(i, rank);
  T_CALL(mf_vector_set_values(w, h));
  T_CALL(mf_operator_apply(A, w, yref));
  T_CHECK(max_diff(y, yref, nowned) == 0.0, "A x from a host-written x differs from A x of set_values");

  T_CALL(mf_vector_get_array_read(v, MF_MEM_HOST, &r));
  T_CALL(mf_vector_restore_array_read(v, &r));
  T_CALL(mf_operator_apply(A, v, y));
  expect_counts(v, 2, 1, "read-only host access, then apply");

  T_CALL(mf_vector_get_array(v, MF_MEM_DEVICE, &a)); /* both current: no copy; the host goes stale */
  T_CALL(mf_vector_restore_array(v, &a));
  expect_counts(v, 2, 1, "device array for writing");
  T_CALL(mf_vector_get_array_read(v, MF_MEM_HOST, &r));
  T_CALL(mf_vector_restore_array_read(v, &r));
  expect_counts(v, 3, 1, "host read after a device array was written");

  T_CALL(mf_vector_get_array(v, MF_MEM_HOST, &a));
  if (nowned) a[0] += 1.0;
  T_CALL(mf_vector_restore_array(v, &a));
  T_CALL(mf_vector_get_array_read(v, MF_MEM_DEVICE, &r));
  T_CALL(mf_vector_restore_array_read(v, &r));
  expect_counts(v, 3, 2, "device read after a host write");
  T_CALL(mf_operator_apply(A, v, y));
  expect_counts(v, 3, 2, "apply after the device was brought up to date");
  h[0] += nowned ? 1.0 : 0.0;
  T_CALL(mf_vector_set_values(w, h));
  T_CALL(mf_operator_apply(A, w, yref));
  T_CHECK(max_diff(y, yref, nowned) == 0.0, "A x after a host write through a device read differs");

  T_CALL(mf_vector_get_array(v, MF_MEM_HOST, &a)); /* a host write that a full overwrite discards */
  T_CALL(mf_vector_restore_array(v, &a));
  T_CALL(mf_vector_set_value(v, 1.0));
  expect_counts(v, 3, 2, "set_value after a host write (no upload)");
  T_CALL(mf_vector_get_array_read(v, MF_MEM_HOST, &r));
  T_CHECK(nowned == 0 || r[0] == 1.0, "host copy shows %g after set_value, expected 1", nowned ? r[0] : 1.0);
  T_CALL(mf_vector_restore_array_read(v, &r));
  expect_counts(v, 4, 2, "host read after set_value");
  expect_counts(y, 2, 0, "output vector: read on the host twice, each time after an apply");
  free(h);
  mf_vector_destroy(&yref);
  mf_vector_destroy(&w);
  mf_vector_destroy(&y);
  mf_vector_destroy(&v);
  mf_operator_destroy(&A);
}

/* CG with callbacks on host arrays: a shell operator (diagonal D, 5 distinct values) solved without
 * a preconditioner needs the search directions CG updates on the device in every callback; a host
 * Jacobi shell preconditioner must give the built-in Jacobi's iterations and solution. */
static void check_callbacks(mf_space s, int rank)
{
  (void)rank;
  int nowned;
  T_CALL(mf_space_local_sizes(s, &nowned, NULL));
  shell_data sd = {s, NULL, 0};
  mf_operator S, A;
  mf_cg cg;
  mf_cg_info info;
  mf_vector b, x, x2, d;
  const double *xa, *ba;
  T_CALL(mf_operator_create_shell(s, shell_apply, shell_diag, &sd, &S));
  T_CALL(mf_vector_create(s, &b));
  T_CALL(mf_vector_create(s, &x));
  T_CALL(mf_vector_create(s, &x2));
  T_CALL(mf_vector_create(s, &d));
  T_CALL(mf_vector_set_random(b, 11));
  T_CALL(mf_vector_set_value(x, 0.0));
  T_CALL(mf_cg_create(S, &cg));
  T_CALL(mf_cg_set_jacobi(cg, 0));
  T_CALL(mf_cg_set_tolerance(cg, 1e-12, 100));
  T_CALL(mf_cg_solve(cg, b, x, &info));
  T_CHECK(info.converged && info.iterations <= 6, "CG on the host shell: converged %d in %d iterations (5 expected)",
          info.converged, info.iterations);
  T_CALL(mf_vector_get_array_read(x, MF_MEM_HOST, &xa));
  T_CALL(mf_vector_get_array_read(b, MF_MEM_HOST, &ba));
  double err = 0.0;
  for (int i = 0; i < nowned; i++) err = fmax(err, fabs(xa[i] - ba[i] / dval(i)));
  MPI_Allreduce(MPI_IN_PLACE, &err, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  T_CHECK(err < 1e-10, "CG on the host shell: solution off by %g", err);
  T_CALL(mf_vector_restore_array_read(b, &ba));
  T_CALL(mf_vector_restore_array_read(x, &xa));
  /* the shell's diagonal (host writes into the operator's output) */
  T_CALL(mf_operator_diagonal(S, d));
  double sum = 0.0, want = 0.0;
  for (int i = 0; i < nowned; i++) want += dval(i);
  MPI_Allreduce(MPI_IN_PLACE, &want, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
  T_CALL(mf_vector_sum(d, &sum));
  T_CHECK(sum == want, "shell diagonal sums to %g, expected %g", sum, want);
  mf_cg_destroy(&cg);

  /* host Jacobi shell against the built-in Jacobi on a matrix-free Laplacian */
  mf_pc pc;
  jacobi_data jd = {d, nowned, NULL, 0.0, 0, 0};
  mf_cg_info info2;
  T_CALL(mf_operator_create_laplace(s, MF_QUAD_GAUSS, t_ljungkvist, NULL, &A));
  T_CALL(mf_operator_set_dirichlet(A, 1));
  T_CALL(mf_operator_diagonal(A, d));
  double *da;
  T_CALL(mf_vector_get_array(d, MF_MEM_HOST, &da));
  for (int i = 0; i < nowned; i++) da[i] = 1.0 / da[i];
  T_CALL(mf_vector_restore_array(d, &da));
  T_CALL(mf_pc_create_shell(A, host_jacobi, &jd, &pc));
  T_CALL(mf_cg_create(A, &cg));
  T_CALL(mf_cg_set_tolerance(cg, 1e-10, 500));
  T_CALL(mf_vector_set_value(x, 0.0));
  T_CALL(mf_cg_solve(cg, b, x, &info));
  T_CALL(mf_cg_set_pc(cg, pc));
  T_CALL(mf_vector_set_value(x2, 0.0));
  jd.watch = x2;
  T_CALL(mf_cg_solve(cg, b, x2, &info2));
  /* one preconditioner call per iteration, one before the first, one for the final true residual */
  T_CHECK(jd.watch_reads == info2.iterations + 2 && jd.watch_err < 1e-12,
          "the solution read on the host inside CG (%d reads) differs from its values by %g (relative)",
          jd.watch_reads, jd.watch_err);
  T_CHECK(jd.watch_write_err == MF_ERR_ARGUMENT, "getting CG's solution for writing inside CG returned %d, expected %d",
          jd.watch_write_err, MF_ERR_ARGUMENT);
  T_CHECK(info.converged && info2.iterations == info.iterations,
          "host Jacobi shell: %d iterations, built-in Jacobi %d", info2.iterations, info.iterations);
  double xn;
  T_CALL(mf_vector_norm2(x, &xn));
  err = max_diff(x, x2, nowned);
  T_CHECK(err <= 1e-14 * xn, "host Jacobi shell: solution differs by %g (norm %g)", err, xn);
  mf_cg_destroy(&cg);
  mf_pc_destroy(&pc);
  mf_operator_destroy(&A);
  mf_vector_destroy(&d);
  mf_vector_destroy(&x2);
  mf_vector_destroy(&x);
  mf_vector_destroy(&b);
  mf_operator_destroy(&S);
}

static void check_errors(mf_context ctx, mf_space s)
{
  (void)ctx;
  mf_operator A, S;
  mf_vector v, y, f = NULL;
  mf_cg cg;
  double *a = NULL, *a2 = NULL, wrong = 0.0, dot;
  const double *r = NULL, *r2 = NULL;
  shell_data sd = {s, NULL, 0};
  T_CALL(mf_operator_create_laplace(s, MF_QUAD_GAUSS, NULL, NULL, &A));
  T_CALL(mf_operator_create_shell(s, shell_apply, NULL, &sd, &S));
  T_CALL(mf_vector_create(s, &v));
  T_CALL(mf_vector_create(s, &y));
  T_CALL(mf_cg_create(A, &cg));

  EXPECT(mf_vector_get_array(NULL, MF_MEM_HOST, &a), MF_ERR_NULL, "vector is NULL");
  EXPECT(mf_vector_get_array(v, MF_MEM_HOST, NULL), MF_ERR_NULL, "output pointer array is NULL");
  EXPECT(mf_vector_get_array_read(v, MF_MEM_HOST, NULL), MF_ERR_NULL, "output pointer array is NULL");
  EXPECT(mf_vector_get_array(v, (mf_memtype)3, &a), MF_ERR_ARGUMENT, "memory type 3 unknown");
  EXPECT(mf_vector_get_array_read(v, (mf_memtype)0, &r), MF_ERR_ARGUMENT, "memory type 0 unknown");
  EXPECT(mf_vector_restore_array(v, &a), MF_ERR_ARGUMENT, "no array of the vector is checked out for writing");
  EXPECT(mf_vector_restore_array_read(v, &r), MF_ERR_ARGUMENT, "no read-only array of the vector is checked out");
  EXPECT(mf_vector_restore_array(NULL, &a), MF_ERR_NULL, "vector is NULL");
  EXPECT(mf_vector_restore_array(v, NULL), MF_ERR_NULL, "pointer to the array is NULL");
  T_CALL(mf_vector_create_prec(s, MF_PRECISION_FLOAT, &f));
  EXPECT(mf_vector_get_array(f, MF_MEM_HOST, &a), MF_ERR_UNSUPPORTED, "arrays of float vectors");
  mf_vector_destroy(&f);

  /* checked out for writing: nothing else may touch the vector */
  T_CALL(mf_vector_get_array(v, MF_MEM_HOST, &a));
  EXPECT(mf_vector_get_array(v, MF_MEM_HOST, &a2), MF_ERR_ARGUMENT, "host array is checked out for writing");
  EXPECT(mf_vector_get_array_read(v, MF_MEM_HOST, &r), MF_ERR_ARGUMENT, "host array is checked out for writing");
  EXPECT(mf_vector_scale(v, 2.0), MF_ERR_ARGUMENT, "vector v has its host array checked out for writing");
  EXPECT(mf_vector_dot(y, v, &dot), MF_ERR_ARGUMENT, "vector y has its host array checked out for writing");
  EXPECT(mf_operator_apply(A, v, y), MF_ERR_ARGUMENT, "vector x has its host array checked out for writing");
  EXPECT(mf_cg_solve(cg, y, v, NULL), MF_ERR_ARGUMENT, "vector x has its host array checked out for writing");
  EXPECT(mf_vector_restore_array_read(v, &r), MF_ERR_ARGUMENT, "goes back with mf_vector_restore_array");
  double *bad = &wrong;
  EXPECT(mf_vector_restore_array(v, &bad), MF_ERR_ARGUMENT, "is not the vector's host array");
  T_CALL(mf_vector_restore_array(v, &a));

  /* read-only: the vector may be read, not changed */
  T_CALL(mf_vector_get_array_read(v, MF_MEM_HOST, &r));
  T_CALL(mf_vector_get_array_read(v, MF_MEM_HOST, &r2));
  EXPECT(mf_vector_get_array(v, MF_MEM_HOST, &a), MF_ERR_ARGUMENT, "2 read-only array(s) checked out");
  EXPECT(mf_vector_set_value(v, 1.0), MF_ERR_ARGUMENT, "vector v has 2 read-only array(s) checked out");
  EXPECT(mf_operator_apply(A, y, v), MF_ERR_ARGUMENT, "vector y has 2 read-only array(s) checked out");
  EXPECT(mf_cg_solve(cg, y, v, NULL), MF_ERR_ARGUMENT, "vector x has 2 read-only array(s)");
  T_CALL(mf_operator_apply(A, v, y)); /* reading is fine */
  EXPECT(mf_vector_restore_array(v, (double **)&r), MF_ERR_ARGUMENT, "its read-only ones go back");
  const double *notmine = &wrong;
  EXPECT(mf_vector_restore_array_read(v, &notmine), MF_ERR_ARGUMENT, "is not one of the vector's arrays");
  T_CALL(mf_vector_restore_array_read(v, &r2));
  T_CALL(mf_vector_restore_array_read(v, &r));
  T_CALL(mf_vector_set_value(v, 1.0));

  /* callbacks must restore what they get */
  sd.forget = 1;
  EXPECT(mf_operator_apply(S, v, y), MF_ERR_ARGUMENT,
         "the shell operator's apply returned with the host array of vector y checked out for writing");
  T_CALL(mf_vector_restore_array(y, &sd.leak_y));
  sd.forget = 2;
  EXPECT(mf_operator_apply(S, v, y), MF_ERR_ARGUMENT, "returned with 1 read-only array(s) of vector x checked out");
  T_CALL(mf_vector_get_array_read(v, MF_MEM_HOST, &r)); /* the same array: give back ours and the shell's */
  r2 = r;
  T_CALL(mf_vector_restore_array_read(v, &r));
  T_CALL(mf_vector_restore_array_read(v, &r2));
  sd.forget = 0;
  T_CALL(mf_operator_apply(S, v, y));
  T_CALL(mf_vector_get_array(v, MF_MEM_HOST, &a)); /* everything was given back */
  T_CALL(mf_vector_restore_array(v, &a));

  mf_cg_destroy(&cg);
  mf_vector_destroy(&y);
  mf_vector_destroy(&v);
  mf_operator_destroy(&S);
  mf_operator_destroy(&A);
}

static void run(mf_context ctx, int rank, int device)
{
  mf_mesh mesh;
  mf_space s;
  T_CALL(mf_mesh_create(ctx, "ball", 2, 2, &mesh));
  T_CALL(mf_space_create(mesh, 2, &s));
  check_values(ctx, s, rank);
  if (device) check_copies(s, rank);
  check_callbacks(s, rank);
  check_errors(ctx, s);
  mf_space_destroy(&s);
  mf_mesh_destroy(&mesh);
}

int main(int argc, char **argv)
{
  MPI_Init(&argc, &argv);
  const char *be = t_backend(argc, argv);
  int rank;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  mf_context ctx;
  T_CALL(mf_context_create(MPI_COMM_WORLD, be, &ctx));
  if (!strcmp(be, "cpu")) {
    run(ctx, rank, 0);
    T_CALL(mf_context_emulate_device(ctx, 1));
  }
  run(ctx, rank, 1);
  mf_context_destroy(&ctx);
  return t_finish();
}
