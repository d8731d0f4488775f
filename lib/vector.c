/* vector.c -- distributed vectors (owned then ghost entries) and their CPU backend, memory-typed
 * access to their arrays (host and device copies synchronised lazily), and the vector functions that
 * need the mesh geometry: values at the DoF points (interpolation, boundary values, random vectors)
 * from the space's node points on the host; right-hand sides, L2 and H1 seminorm errors by the space's
 * cell family (lib/family.h: lib/hex/vector_hex.c, lib/simplex/family_simplex.c). */
#include "family.h"

#include <math.h>

#include "base/mf_backend.h"
#include "base/mf_random.h"

/* ------------------------------------------------------------------ CPU backend */

#define MF_VT double
#define MF_VD(v) ((v)->data)
#define MF_VS _d
#define MF_VCG 1 /* with CG's fused steps */
#include "vector_cpu_ops.h"
#undef MF_VCG
#undef MF_VT
#undef MF_VD
#undef MF_VS
#define MF_VT float
#define MF_VD(v) ((v)->sdata)
#define MF_VS _s
#include "vector_cpu_ops.h"
#undef MF_VT
#undef MF_VD
#undef MF_VS

/* ------------------------------------------------------------------ interface */

int mf_vector_create(mf_space space, mf_vector *v)
{
  if (v) *v = NULL; /* NULL on every failure, the first argument's included */
  MF_CHECK(space, NULL, MF_ERR_NULL, "space is NULL");
  MF_CHECK(v, space->ctx, MF_ERR_NULL, "output pointer v is NULL");
  MF_CALL(mf_space_check_mesh(space));
  /* collective: a rank that cannot allocate fails every rank */
  return mf_agree(space->ctx, mf_vector_create_prec(space, MF_PRECISION_DOUBLE, v));
}

int mf_vector_create_prec(mf_space space, mf_precision prec, mf_vector *v)
{
  MF_CHECK(space, NULL, MF_ERR_NULL, "space is NULL");
  mf_context ctx = space->ctx;
  MF_CHECK(v, ctx, MF_ERR_NULL, "output pointer v is NULL");
  *v = NULL;
  MF_CHECK(prec == MF_PRECISION_DOUBLE || prec == MF_PRECISION_FLOAT, ctx, MF_ERR_ARGUMENT,
           "precision %d unknown (MF_PRECISION_DOUBLE or MF_PRECISION_FLOAT)", (int)prec);
  mf_vector x;
  MF_CALL(MF_CALLOC(ctx, 1, &x));
  x->space = space;
  x->backend = ctx->backend;
  x->prec = prec;
  x->n = space->nlocal;
  x->mirrored = prec == MF_PRECISION_DOUBLE && (ctx->backend == MF_BACKEND_CUDA || ctx->emulate_device);
  x->valid = x->mirrored ? MF_SYNC_DEVICE : MF_SYNC_BOTH;
  int ierr = 0;
  if (!ctx->bk->vector.setup) {
    x->ops = prec == MF_PRECISION_FLOAT ? vector_ops_cpu_s : vector_ops_cpu_d;
    ierr = prec == MF_PRECISION_FLOAT ? MF_CALLOC_TOUCH(ctx, x->n, &x->sdata) : MF_CALLOC_TOUCH(ctx, x->n, &x->data);
  }
  else ierr = ctx->bk->vector.setup(x);
  if (ierr) {
    if (x->ops.destroy) x->ops.destroy(x);
    free(x);
    return ierr;
  }
  mf_space_retain(space);
  *v = x;
  return 0;
}

int mf_vector_destroy(mf_vector *v)
{
  if (!v || !*v) return 0;
  mf_vector x = *v;
  *v = NULL;
  x->ops.destroy(x);
  free(x->host);
  mf_space_release(x->space);
  free(x);
  return 0;
}

int mf_vector_check_pair(mf_vector a, mf_vector b, const char *an, const char *bn)
{
  MF_CHECK(a, NULL, MF_ERR_NULL, "vector %s is NULL", an);
  MF_CHECK(b, a->space->ctx, MF_ERR_NULL, "vector %s is NULL", bn);
  char has[64], why[192];
  snprintf(has, sizeof has, "vector %s has", an);
  MF_CHECK(a->space == b->space, a->space->ctx, MF_ERR_INCOMPATIBLE, "vectors %s and %s belong to different spaces: %s "
           "is of another space%s", an, bn, bn, mf_space_mismatch(b->space, a->space, has, why, sizeof why));
  MF_CHECK(a->prec == b->prec, a->space->ctx, MF_ERR_INCOMPATIBLE, "vectors %s (%s) and %s (%s) differ in precision",
           an, mf_precision_name(a->prec), bn, mf_precision_name(b->prec));
  return 0;
}

const char *mf_precision_name(mf_precision p) { return p == MF_PRECISION_FLOAT ? "float" : "double"; }

int mf_vector_convert(mf_vector dst, mf_vector src)
{
  MF_CHECK(dst && src, NULL, MF_ERR_NULL, "vector is NULL");
  char why[192];
  MF_CHECK(dst->space == src->space, dst->space->ctx, MF_ERR_INCOMPATIBLE,
           "conversion between vectors of different spaces: the source is of another space%s",
           mf_space_mismatch(src->space, dst->space, "the destination has", why, sizeof why));
  if (dst->prec == src->prec) return dst->ops.copy(dst, src);
  return dst->ops.convert(dst, src);
}

int mf_vector_set_value(mf_vector v, double value)
{
  MF_CHECK(v, NULL, MF_ERR_NULL, "vector is NULL");
  MF_CALL(mf_vector_access(v, MF_ACCESS_WRITE, "v"));
  return mf_vector_written(v, v->ops.set_value(v, value));
}

int mf_vector_copy(mf_vector dst, mf_vector src)
{
  MF_CALL(mf_vector_check_pair(dst, src, "dst", "src"));
  MF_CALL(mf_vector_access(src, MF_ACCESS_READ, "src"));
  MF_CALL(mf_vector_access(dst, dst == src ? MF_ACCESS_READ_WRITE : MF_ACCESS_WRITE, "dst"));
  return mf_vector_written(dst, dst->ops.copy(dst, src));
}

int mf_vector_axpy(mf_vector y, double alpha, mf_vector x)
{
  MF_CALL(mf_vector_check_pair(y, x, "y", "x"));
  MF_CALL(mf_vector_access(x, MF_ACCESS_READ, "x"));
  MF_CALL(mf_vector_access(y, MF_ACCESS_READ_WRITE, "y"));
  return mf_vector_written(y, y->ops.axpy(y, alpha, x));
}

int mf_vector_scale(mf_vector v, double alpha)
{
  MF_CHECK(v, NULL, MF_ERR_NULL, "vector is NULL");
  MF_CALL(mf_vector_access(v, MF_ACCESS_READ_WRITE, "v"));
  return mf_vector_written(v, v->ops.scale(v, alpha));
}

/* Sum over the ranks; ierr, this rank's result so far, travels with the sum: a rank that failed still
 * takes part, and then every rank returns the failure (mf_agree), at no extra collective call when
 * none failed. */
static int allreduce_sum(mf_context ctx, double *val, int ierr)
{
  double v[2] = {ierr ? 0.0 : *val, ierr ? 1.0 : 0.0};
  if (ctx->size > 1) {
    int rc = MPI_Allreduce(MPI_IN_PLACE, v, 2, MPI_DOUBLE, MPI_SUM, ctx->comm);
    MF_CHECK(rc == MPI_SUCCESS, ctx, MF_ERR_MPI, "MPI_Allreduce failed (%d)", rc);
  }
  if (v[1] > 0.0) return mf_agree(ctx, ierr); /* every rank sees the flag: collective */
  *val = v[0];
  return 0;
}

int mf_sum_over_ranks(mf_context ctx, double *val, int ierr) { return allreduce_sum(ctx, val, ierr); }

int mf_vector_dot(mf_vector x, mf_vector y, double *result)
{
  MF_CALL(mf_vector_check_pair(x, y, "x", "y"));
  MF_CHECK(result, x->space->ctx, MF_ERR_NULL, "output pointer result is NULL");
  /* collective: a failure (an array checked out) travels with the sum */
  int ierr = mf_vector_access(x, MF_ACCESS_READ, "x");
  if (!ierr) ierr = mf_vector_access(y, MF_ACCESS_READ, "y");
  if (!ierr) ierr = x->ops.dot_local(x, y, result);
  return allreduce_sum(x->space->ctx, result, ierr);
}

int mf_vector_dot_checked(mf_vector x, mf_vector y, double *result, int ierr)
{
  mf_context ctx = NULL;
  if (x) ctx = x->space->ctx;
  else if (y) ctx = y->space->ctx;
  MF_CHECK(ctx, NULL, MF_ERR_NULL, "vectors x and y are NULL");
  *result = 0.0;
  if (!ierr) ierr = mf_vector_check_pair(x, y, "x", "y");
  if (!ierr) ierr = x->ops.dot_local(x, y, result);
  return allreduce_sum(ctx, result, ierr);
}

int mf_vector_norm2(mf_vector x, double *result)
{
  MF_CALL(mf_vector_dot(x, x, result));
  *result = sqrt(*result);
  return 0;
}

int mf_vector_sum(mf_vector x, double *result)
{
  MF_CHECK(x, NULL, MF_ERR_NULL, "vector is NULL");
  MF_CHECK(result, x->space->ctx, MF_ERR_NULL, "output pointer result is NULL");
  int ierr = mf_vector_access(x, MF_ACCESS_READ, "x");
  if (!ierr) ierr = x->ops.sum_local(x, result);
  return allreduce_sum(x->space->ctx, result, ierr);
}

int mf_vector_get_values(mf_vector v, double *host)
{
  MF_CHECK(v, NULL, MF_ERR_NULL, "vector is NULL");
  MF_CHECK(host, v->space->ctx, MF_ERR_NULL, "host array is NULL");
  MF_CALL(mf_vector_access(v, MF_ACCESS_READ, "v"));
  return v->ops.to_host(v, host, v->space->nowned);
}

int mf_vector_set_values(mf_vector v, const double *host)
{
  MF_CHECK(v, NULL, MF_ERR_NULL, "vector is NULL");
  MF_CHECK(host, v->space->ctx, MF_ERR_NULL, "host array is NULL");
  MF_CALL(mf_vector_access(v, MF_ACCESS_READ_WRITE, "v")); /* the ghosts stay */
  return mf_vector_written(v, v->ops.from_host(v, host, v->space->nowned));
}

/* ------------------------------------------------------------------ memory-typed access
 *
 * A mirrored vector (cuda backend; cpu backend emulating a device, for tests) keeps its values in
 * `data` (device memory) and, once the host asks, in the host copy `host`; `valid` says which of the
 * two are current:
 *
 *   DEVICE --get host (read or write): copy to host--> BOTH (read) / HOST (write)
 *   HOST   --get device, or any mfree function using the vector: copy to device--> BOTH
 *   BOTH   --mfree function writing it, device array got for writing--> DEVICE
 *
 * Internal code works on `data` through the backend tables without touching `valid`; that is sound
 * because a vector a user holds changes only through public functions, which check and mark their
 * vectors (mf_vector_access, mf_vector_written), and because vectors that internal code lends to a
 * user callback are marked stale on the host before the call (mf_vector_call_user). A user vector
 * that a public function is writing (busy: mf_cg_solve's x while CG calls a shell preconditioner)
 * may change on the device at any moment, so a host read of it always copies. */

int mf_context_emulate_device(mf_context ctx, int on)
{
  MF_CHECK(ctx, NULL, MF_ERR_NULL, "context is NULL");
  MF_CHECK(ctx->backend == MF_BACKEND_CPU, ctx, MF_ERR_BACKEND,
           "device emulation is for the cpu backend (this context uses '%s', which has a device)",
           mf_context_backend(ctx));
  ctx->emulate_device = on != 0;
  return 0;
}

static const char *mem_name(int mem) { return mem == MF_MEM_HOST ? "host" : mem == MF_MEM_DEVICE ? "device" : "no"; }

/* host copy <- device values */
static int copy_to_host(mf_vector v)
{
  if (!v->host) MF_CALL(MF_CALLOC(v->space->ctx, v->n, &v->host));
  MF_CALL(v->ops.to_host(v, v->host, v->n));
  v->copies_to_host++;
  v->valid |= MF_SYNC_HOST;
  return 0;
}

/* device values <- host copy */
static int copy_to_device(mf_vector v)
{
  MF_CALL(v->ops.from_host(v, v->host, v->n));
  v->copies_to_device++;
  v->valid |= MF_SYNC_DEVICE;
  return 0;
}

static int get_array(mf_vector v, mf_memtype mem, int write, double **array)
{
  MF_CHECK(v, NULL, MF_ERR_NULL, "vector is NULL");
  mf_context ctx = v->space->ctx;
  MF_CHECK(array, ctx, MF_ERR_NULL, "output pointer array is NULL");
  *array = NULL;
  MF_CHECK(mem == MF_MEM_HOST || mem == MF_MEM_DEVICE, ctx, MF_ERR_ARGUMENT,
           "memory type %d unknown (MF_MEM_HOST or MF_MEM_DEVICE)", (int)mem);
  MF_CHECK(v->prec == MF_PRECISION_DOUBLE, ctx, MF_ERR_UNSUPPORTED, "arrays of %s vectors are not handed out",
           mf_precision_name(v->prec));
  MF_CHECK(mem == MF_MEM_HOST || v->mirrored, ctx, MF_ERR_BACKEND,
           "MF_MEM_DEVICE asked of a vector on backend '%s', which keeps its values in host memory only "
           "(ask for MF_MEM_HOST)", mf_context_backend(ctx));
  MF_CHECK(!v->write_mem, ctx, MF_ERR_ARGUMENT,
           "the vector's %s array is checked out for writing: restore it (mf_vector_restore_array) before getting "
           "another", mem_name(v->write_mem));
  MF_CHECK(!write || !v->nread, ctx, MF_ERR_ARGUMENT,
           "the vector has %d read-only array(s) checked out: restore them (mf_vector_restore_array_read) before "
           "getting one for writing", v->nread);
  MF_CHECK(!write || !v->busy, ctx, MF_ERR_ARGUMENT,
           "the vector is being changed by the mfree function that called back (e.g. the solution of mf_cg_solve, the "
           "output of mf_operator_apply): its arrays may be read there, not written");
  if (v->mirrored) {
    const int side = mem == MF_MEM_HOST ? MF_SYNC_HOST : MF_SYNC_DEVICE;
    if (v->busy && side == MF_SYNC_HOST) v->valid = MF_SYNC_DEVICE; /* its device values may have moved on */
    if (!(v->valid & side)) MF_CALL(side == MF_SYNC_HOST ? copy_to_host(v) : copy_to_device(v));
    if (write) v->valid = side; /* the other copy goes stale as the caller writes */
  }
  if (write) v->write_mem = mem;
  else v->nread++;
  *array = mem == MF_MEM_HOST && v->mirrored ? v->host : v->data;
  return 0;
}

int mf_vector_get_array(mf_vector v, mf_memtype mem, double **array) { return get_array(v, mem, 1, array); }

int mf_vector_get_array_read(mf_vector v, mf_memtype mem, const double **array)
{
  double *a = NULL;
  int ierr = get_array(v, mem, 0, array ? &a : NULL);
  if (array) *array = a;
  return ierr;
}

int mf_vector_restore_array(mf_vector v, double **array)
{
  MF_CHECK(v, NULL, MF_ERR_NULL, "vector is NULL");
  mf_context ctx = v->space->ctx;
  MF_CHECK(array, ctx, MF_ERR_NULL, "pointer to the array is NULL");
  MF_CHECK(v->write_mem, ctx, MF_ERR_ARGUMENT, "no array of the vector is checked out for writing (%s)",
           v->nread ? "its read-only ones go back with mf_vector_restore_array_read" : "nothing to restore");
  const double *got = v->write_mem == MF_MEM_HOST && v->mirrored ? v->host : v->data;
  MF_CHECK(*array == got, ctx, MF_ERR_ARGUMENT, "array %p is not the vector's %s array %p checked out for writing",
           (const void *)*array, mem_name(v->write_mem), (const void *)got);
  v->write_mem = 0;
  *array = NULL;
  return 0;
}

int mf_vector_restore_array_read(mf_vector v, const double **array)
{
  MF_CHECK(v, NULL, MF_ERR_NULL, "vector is NULL");
  mf_context ctx = v->space->ctx;
  MF_CHECK(array, ctx, MF_ERR_NULL, "pointer to the array is NULL");
  MF_CHECK(v->nread > 0, ctx, MF_ERR_ARGUMENT, "no read-only array of the vector is checked out (%s)",
           v->write_mem ? "its array for writing goes back with mf_vector_restore_array" : "nothing to restore");
  MF_CHECK(*array && (*array == v->data || *array == v->host), ctx, MF_ERR_ARGUMENT,
           "array %p is not one of the vector's arrays", (const void *)*array);
  v->nread--;
  *array = NULL;
  return 0;
}

int mf_vector_access(mf_vector v, mf_access mode, const char *name)
{
  mf_context ctx = v->space->ctx;
  MF_CHECK(!v->write_mem, ctx, MF_ERR_ARGUMENT,
           "vector %s has its %s array checked out for writing (mf_vector_get_array): restore it before using the "
           "vector", name, mem_name(v->write_mem));
  MF_CHECK(!(mode & MF_ACCESS_WRITE) || !v->nread, ctx, MF_ERR_ARGUMENT,
           "vector %s has %d read-only array(s) checked out (mf_vector_get_array_read) and must not change: restore "
           "them first", name, v->nread);
  if (v->mirrored && !(v->valid & MF_SYNC_DEVICE) && mode != MF_ACCESS_WRITE) MF_CALL(copy_to_device(v));
  if (v->mirrored && (mode & MF_ACCESS_WRITE)) v->valid = MF_SYNC_DEVICE;
  if (mode & MF_ACCESS_WRITE) v->busy++;
  return 0;
}

int mf_vector_access_all(mf_vector v, mf_access mode, const char *name)
{
  const int local = mf_vector_access(v, mode, name);
  const int ierr = mf_agree(v->space->ctx, local);
  if (ierr && !local && (mode & MF_ACCESS_WRITE)) mf_vector_written(v, 0);
  return ierr;
}

int mf_vector_written(mf_vector v, int ierr)
{
  if (v->mirrored) v->valid = MF_SYNC_DEVICE;
  if (v->busy > 0) v->busy--;
  return ierr;
}

/* After a user callback: its host writes to the device; no array may stay checked out. */
static int back_from_user(mf_vector v, int nread0, const char *what, const char *name)
{
  mf_context ctx = v->space->ctx;
  if (v->mirrored && !(v->valid & MF_SYNC_DEVICE)) MF_CALL(copy_to_device(v));
  MF_CHECK(!v->write_mem, ctx, MF_ERR_ARGUMENT,
           "%s returned with the %s array of vector %s checked out for writing: restore it (mf_vector_restore_array) "
           "before returning", what, mem_name(v->write_mem), name);
  MF_CHECK(v->nread <= nread0, ctx, MF_ERR_ARGUMENT,
           "%s returned with %d read-only array(s) of vector %s checked out: restore them "
           "(mf_vector_restore_array_read) before returning", what, v->nread - nread0, name);
  return 0;
}

int mf_vector_call_user(int (*fn)(mf_vector, mf_vector, void *), mf_vector a, mf_vector b, void *user,
                        const char *what, const char *an, const char *bn)
{
  const int na = a->nread, nb = b->nread, busya = a->busy, busyb = b->busy;
  if (a->mirrored && (a->valid & MF_SYNC_DEVICE)) a->valid = MF_SYNC_DEVICE;
  if (b->mirrored && (b->valid & MF_SYNC_DEVICE)) b->valid = MF_SYNC_DEVICE;
  a->busy = b->busy = 0; /* the callback's own vectors are its to write */
  int ierr = fn(a, b, user);
  a->busy = busya;
  b->busy = busyb;
  int e = back_from_user(a, na, what, an);
  if (!ierr) ierr = e;
  if (b != a) {
    e = back_from_user(b, nb, what, bn);
    if (!ierr) ierr = e;
  }
  return ierr;
}

void mf_vector_copy_counts(mf_vector v, long long *to_host, long long *to_device)
{
  if (to_host) *to_host = v->copies_to_host;
  if (to_device) *to_device = v->copies_to_device;
}

/* ------------------------------------------------------------------ geometry-aware functions */

/* Values at the DoF points: v[i] = fn(coords_i) for the local DoFs (all, or the boundary ones with the
 * rest zero), computed on the host from the space's node coordinates, OpenMP over the DoFs. With a
 * role and symbol (a user's function), a value that is not finite is refused, naming the first such
 * DoF and its point. */
typedef double (*point_fn)(const double *x, int dim, int comp, void *data); /* comp: the entry's component */
static int fill_points(mf_vector v, point_fn fn, void *data, int boundary_only, const char *role, const char *sym)
{
  mf_space s = v->space;
  const int dim = s->dim, n = s->nlocal;
  if (boundary_only) { /* the boundary DoFs' points alone (the cuda backend keeps no host array) */
    double *vals = NULL;
    MF_CALL(MF_CALLOC(s->ctx, s->nbc, &vals));
#pragma omp parallel for schedule(static)
    for (int k = 0; k < s->nbc; k++) {
      double x[3];
      mf_space_dof_point(s, s->bc_list[k], x);
      vals[k] = fn(x, dim, s->bc_list[k] % s->ncomp, data);
    }
    int ierr = 0;
    for (int k = 0; k < s->nbc && role && !ierr; k++)
      if (!isfinite(vals[k])) {
        double x[3];
        mf_space_dof_point(s, s->bc_list[k], x);
        ierr = mf_dof_value_check(s->ctx, role, sym, dim, s->bc_list[k], x, vals[k]);
      }
    if (!ierr) ierr = v->ops.bc_values(v, vals);
    free(vals);
    return ierr;
  }
  MF_CALL(mf_space_host_coords(s));
  double *h = v->data;
  if (v->backend != MF_BACKEND_CPU) MF_CALL(MF_CALLOC_TOUCH(s->ctx, n, &h));
#pragma omp parallel for schedule(static)
  for (int i = 0; i < n; i++) h[i] = fn(&s->coords[(size_t)i * dim], dim, i % s->ncomp, data);
  int ierr = 0;
  for (int i = 0; i < n && role && !ierr; i++)
    if (!isfinite(h[i])) ierr = mf_dof_value_check(s->ctx, role, sym, dim, i, &s->coords[(size_t)i * dim], h[i]);
  if (v->backend == MF_BACKEND_CPU) return ierr;
  if (!ierr) ierr = v->ops.from_host(v, h, n);
  free(h);
  return ierr;
}

typedef struct {
  mf_coefficient_fn f;
  void *user;
} user_fn;
static double call_user(const double *x, int dim, int comp, void *p)
{
  (void)comp;
  const user_fn *u = (const user_fn *)p;
  return u->f(x, dim, u->user);
}

/* a field's component at x (the whole field evaluated: nc values at most MF_MAX_COMPONENTS) */
typedef struct {
  mf_field_fn f;
  void *user;
} user_field;
static double call_field(const double *x, int dim, int comp, void *p)
{
  const user_field *u = (const user_field *)p;
  double v[MF_MAX_COMPONENTS] = {0.0};
  u->f(x, dim, v, u->user);
  return v[comp];
}

int mf_vector_interpolate(mf_vector v, mf_coefficient_fn f, void *user)
{
  MF_CHECK(v, NULL, MF_ERR_NULL, "vector is NULL");
  MF_CHECK(f, v->space->ctx, MF_ERR_NULL, "function f is NULL");
  MF_CALL(mf_space_check_mesh(v->space));
  MF_CALL(mf_vector_access_all(v, MF_ACCESS_WRITE, "v"));
  user_fn u = {f, user};
  /* a value refused on one rank is every rank's error (mf_agree): none goes on to an exchange alone */
  const int ierr = fill_points(v, call_user, &u, 0, "function", "f");
  return mf_vector_written(v, mf_agree(v->space->ctx, ierr));
}

static int set_boundary(mf_vector x, mf_coefficient_fn g, void *user)
{
  user_fn u = {g, user};
  return mf_agree(x->space->ctx, fill_points(x, call_user, &u, 1, "boundary value", "g"));
}

int mf_vector_zero_boundary(mf_vector x)
{
  MF_CHECK(x, NULL, MF_ERR_NULL, "vector is NULL");
  MF_CALL(mf_vector_access(x, MF_ACCESS_READ_WRITE, "x"));
  return mf_vector_written(x, x->ops.bc_zero(x));
}

/* the points' hash (base/mf_random.h) */
typedef struct {
  uint64_t seed;
  int ncomp;
} random_data;
static double random_point(const double *x, int dim, int comp, void *p)
{
  const random_data *r = (const random_data *)p;
  return mf_random_point(x, dim, r->ncomp, comp, r->seed);
}

int mf_vector_random_values(mf_vector v, uint64_t seed)
{
  MF_CALL(mf_vector_access(v, MF_ACCESS_WRITE, "v"));
  if (v->ops.random_points) { /* from the device's points, where it has them */
    const int ierr = v->ops.random_points(v, seed);
    if (ierr != -1) return mf_vector_written(v, ierr);
  }
  random_data r = {seed, v->space->ncomp};
  return mf_vector_written(v, fill_points(v, random_point, &r, 0, NULL, NULL));
}

int mf_vector_set_random(mf_vector v, uint64_t seed)
{
  MF_CHECK(v, NULL, MF_ERR_NULL, "vector is NULL");
  MF_CALL(mf_space_check_mesh(v->space));
  return mf_vector_random_values(v, seed);
}

static int assemble_rhs(mf_vector bvec, mf_coefficient_fn f, void *user)
{
  mf_space s = bvec->space;
  MF_CALL(mf_agree(s->ctx, s->fam->rhs(bvec, f, user))); /* collective: the export-add waits for every neighbour */
  return bvec->ops.export_add(bvec);
}

int mf_vector_l2_error(mf_vector uh, mf_coefficient_fn u, void *user, double *err)
{
  MF_CHECK(uh, NULL, MF_ERR_NULL, "vector is NULL");
  mf_space s = uh->space;
  MF_CHECK(u, s->ctx, MF_ERR_NULL, "function u is NULL");
  MF_CHECK(err, s->ctx, MF_ERR_NULL, "output pointer err is NULL");
  MF_CHECK(s->fam->l2_error, s->ctx, MF_ERR_UNSUPPORTED, "L2 errors of %s spaces: not supported", s->fam->name);
  MF_CHECK(s->ncomp == 1, s->ctx, MF_ERR_UNSUPPORTED, "L2 errors of spaces of %d components: not supported", s->ncomp);
  MF_CALL(mf_space_check_mesh(s));
  MF_CALL(mf_vector_access_all(uh, MF_ACCESS_READ, "uh"));
  return s->fam->l2_error(uh, u, user, err);
}

int mf_vector_h1_error(mf_vector uh, mf_gradient_fn grad_u, void *user, double *err)
{
  MF_CHECK(uh, NULL, MF_ERR_NULL, "vector is NULL");
  mf_space s = uh->space;
  MF_CHECK(grad_u, s->ctx, MF_ERR_NULL, "gradient function grad_u is NULL");
  MF_CHECK(err, s->ctx, MF_ERR_NULL, "output pointer err is NULL");
  MF_CHECK(s->ncomp == 1, s->ctx, MF_ERR_UNSUPPORTED, "H1 errors of spaces of %d components: not supported", s->ncomp);
  MF_CHECK(s->fam->h1_error, s->ctx, MF_ERR_UNSUPPORTED, "H1 errors of %s spaces: not supported", s->fam->name);
  MF_CALL(mf_space_check_mesh(s));
  MF_CALL(mf_vector_access_all(uh, MF_ACCESS_READ, "uh"));
  return s->fam->h1_error(uh, grad_u, user, err);
}

/* timed entry points of the set-up phases */
int mf_vector_set_boundary(mf_vector x, mf_coefficient_fn g, void *user)
{
  MF_CHECK(x, NULL, MF_ERR_NULL, "vector is NULL");
  mf_context ctx = x->space->ctx;
  MF_CHECK(g, ctx, MF_ERR_NULL, "function g is NULL");
  MF_CALL(mf_space_check_mesh(x->space));
  MF_CALL(mf_vector_access_all(x, MF_ACCESS_WRITE, "x"));
  double t0 = mf_phase_begin(ctx);
  int ierr = set_boundary(x, g, user);
  mf_phase_end(ctx, MF_PHASE_DIRICHLET, t0);
  return mf_vector_written(x, ierr);
}

int mf_vector_assemble_rhs(mf_vector b, mf_coefficient_fn f, void *user)
{
  MF_CHECK(b, NULL, MF_ERR_NULL, "vector is NULL");
  mf_context ctx = b->space->ctx;
  MF_CHECK(f, ctx, MF_ERR_NULL, "function f is NULL");
  MF_CHECK(b->space->fam->rhs, ctx, MF_ERR_UNSUPPORTED, "right-hand sides of %s spaces: not supported",
           b->space->fam->name);
  MF_CHECK(b->space->ncomp == 1, ctx, MF_ERR_UNSUPPORTED, "right-hand sides of spaces of %d components: not supported",
           b->space->ncomp);
  MF_CALL(mf_space_check_mesh(b->space));
  MF_CALL(mf_vector_access_all(b, MF_ACCESS_READ_WRITE, "b"));
  double t0 = mf_phase_begin(ctx);
  int ierr = assemble_rhs(b, f, user);
  mf_phase_end(ctx, MF_PHASE_RHS, t0);
  return mf_vector_written(b, ierr);
}

/* ------------------------------------------------------------------ fields of several components */

int mf_vector_interpolate_field(mf_vector v, mf_field_fn f, void *user)
{
  MF_CHECK(v, NULL, MF_ERR_NULL, "vector is NULL");
  MF_CHECK(f, v->space->ctx, MF_ERR_NULL, "function f is NULL");
  MF_CALL(mf_space_check_mesh(v->space));
  MF_CALL(mf_vector_access_all(v, MF_ACCESS_WRITE, "v"));
  user_field u = {f, user};
  const int ierr = fill_points(v, call_field, &u, 0, "function", "f");
  return mf_vector_written(v, mf_agree(v->space->ctx, ierr));
}

int mf_vector_set_boundary_field(mf_vector x, mf_field_fn g, void *user)
{
  MF_CHECK(x, NULL, MF_ERR_NULL, "vector is NULL");
  mf_context ctx = x->space->ctx;
  MF_CHECK(g, ctx, MF_ERR_NULL, "function g is NULL");
  MF_CALL(mf_space_check_mesh(x->space));
  MF_CALL(mf_vector_access_all(x, MF_ACCESS_WRITE, "x"));
  const double t0 = mf_phase_begin(ctx);
  user_field u = {g, user};
  const int ierr = mf_agree(ctx, fill_points(x, call_field, &u, 1, "boundary value", "g"));
  mf_phase_end(ctx, MF_PHASE_DIRICHLET, t0);
  return mf_vector_written(x, ierr);
}

/* the L2 error of component comp of a field: the scalar measure of each family on a scalar space of the
 * same mesh and degree (its nodes numbered as the field's), component by component */
typedef struct {
  mf_field_fn f;
  void *user;
  int comp;
} field_comp;
static double field_component(const double *x, int dim, void *p)
{
  const field_comp *u = (const field_comp *)p;
  double v[MF_MAX_COMPONENTS] = {0.0};
  u->f(x, dim, v, u->user);
  return v[u->comp];
}

int mf_vector_l2_error_field(mf_vector uh, mf_field_fn u, void *user, double *err)
{
  MF_CHECK(uh, NULL, MF_ERR_NULL, "vector is NULL");
  mf_space s = uh->space;
  mf_context ctx = s->ctx;
  MF_CHECK(u, ctx, MF_ERR_NULL, "function u is NULL");
  MF_CHECK(err, ctx, MF_ERR_NULL, "output pointer err is NULL");
  MF_CHECK(s->fam->l2_error, ctx, MF_ERR_UNSUPPORTED, "L2 errors of %s spaces: not supported", s->fam->name);
  MF_CHECK(uh->prec == MF_PRECISION_DOUBLE, ctx, MF_ERR_UNSUPPORTED, "L2 errors of float vectors: not supported");
  MF_CALL(mf_space_check_mesh(s));
  MF_CALL(mf_vector_access_all(uh, MF_ACCESS_READ, "uh"));
  const int nc = s->ncomp, nown = s->nowned / nc;
  mf_space s1 = NULL;
  mf_vector v1 = NULL;
  double *h = NULL, *h1 = NULL, sum = 0.0;
  /* collective: the scalar space and the errors on every rank; a local failure is agreed on */
  int ierr = mf_space_create(s->mesh, s->degree, &s1);
  if (!ierr) ierr = mf_vector_create(s1, &v1);
  if (!ierr) ierr = MF_CALLOC(ctx, (size_t)s->nowned + 1, &h);
  if (!ierr) ierr = MF_CALLOC(ctx, (size_t)nown + 1, &h1);
  if (!ierr && s1->nowned != nown)
    ierr = mf_error_set(ctx, MF_ERR_INCOMPATIBLE, __FILE__, __LINE__, __func__,
                        "L2 error of a field: the scalar space has %d owned nodes, the field %d", s1->nowned, nown);
  if (!ierr) ierr = uh->ops.to_host(uh, h, s->nowned);
  ierr = mf_agree(ctx, ierr);
  for (int c = 0; c < nc && !ierr; c++) {
    for (int i = 0; i < nown; i++) h1[i] = h[(size_t)i * nc + c];
    ierr = mf_agree(ctx, v1->ops.from_host(v1, h1, nown));
    field_comp fc = {u, user, c};
    double e = 0.0;
    if (!ierr) ierr = mf_vector_l2_error(v1, field_component, &fc, &e);
    sum += e * e;
  }
  free(h);
  free(h1);
  mf_vector_destroy(&v1);
  mf_space_destroy(&s1);
  if (!ierr) *err = sqrt(sum);
  return ierr;
}
