#include <execinfo.h>
/* context.c -- the mf_context object: communicator, backend choice, error messages. */
#include "mfree_impl.h"

#include <p4est_base.h>
#include <stdio.h>
#ifdef _OPENMP
#include <omp.h>
#endif

#ifdef MFREE_WITH_CUDA
#include "cuda/mf_cuda.h"
#endif

/* The calling thread's last message, and what mf_context_error_message needs to know of it: its
 * number in the process-wide order of errors, whether it was recorded without a context (an error
 * on a NULL handle, which no context owns), and whether it is a message that mf_agree made the same
 * on every rank (so that the next agreement does not wrap it again). */
static _Thread_local char mf_global_errmsg[1024];
static _Thread_local unsigned long mf_global_seq;
static _Thread_local int mf_global_noctx, mf_global_agreed;
static unsigned long mf_error_counter;

static void error_record(mf_context ctx, const char *msg)
{
  const unsigned long seq = __atomic_add_fetch(&mf_error_counter, 1, __ATOMIC_RELAXED);
  snprintf(mf_global_errmsg, sizeof mf_global_errmsg, "%s", msg);
  mf_global_seq = seq;
  mf_global_noctx = ctx == NULL;
  mf_global_agreed = 0;
  if (ctx) {
    snprintf(ctx->errmsg, sizeof ctx->errmsg, "%s", msg);
    ctx->errseq = seq;
  }
}

int mf_error_set(mf_context ctx, int code, const char *file, int line, const char *func,
                 const char *fmt, ...)
{
  char msg[768], full[1024];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  /* the file name only, not the build path */
  const char *base = strrchr(file, '/');
  base = base ? base + 1 : file;
  snprintf(full, sizeof full, "%s (%s:%d in %s)", msg, base, line, func);
  error_record(ctx, full);
  return code;
}

unsigned long mf_error_serial(void) { return mf_global_seq; }

const char *mf_last_error_message(void) { return mf_global_errmsg; }

const char *mf_context_error_message(mf_context ctx)
{
  if (!ctx) return mf_global_errmsg;
  /* an error on a NULL handle has no context of its own: the context asked after it shows it */
  if (mf_global_noctx && mf_global_seq > ctx->errseq) return mf_global_errmsg;
  return ctx->errmsg;
}

/* One rank's failure made everyone's: the lowest failing rank sends its code and message, which
 * every rank records as "rank R: message". An error that an earlier agreement made common is not
 * sent again. Collective on comm. */
static int agree_comm(MPI_Comm comm, mf_context ctx, int ierr)
{
  int rank = 0, size = 1;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);
  if (size == 1) return ierr;
  int v[2] = {ierr && !mf_global_agreed ? rank : size, ierr ? -1 : 0}; /* first new failure, any failure */
  int rc = MPI_Allreduce(MPI_IN_PLACE, v, 2, MPI_INT, MPI_MIN, comm);
  if (rc != MPI_SUCCESS)
    return ierr ? ierr : mf_error_set(ctx, MF_ERR_MPI, __FILE__, __LINE__, __func__, "MPI_Allreduce failed (%d)", rc);
  if (v[1] == 0) return 0;
  if (v[0] == size) /* every failure agreed on already */
    return ierr ? ierr : mf_error_set(ctx, MF_ERR_MPI, __FILE__, __LINE__, __func__, "an error on another rank");
  struct {
    int code;
    char msg[1024];
  } m;
  memset(&m, 0, sizeof m);
  if (rank == v[0]) {
    m.code = ierr;
    snprintf(m.msg, sizeof m.msg, "%s", mf_global_errmsg);
  }
  rc = MPI_Bcast(&m, (int)sizeof m, MPI_BYTE, v[0], comm);
  if (rc != MPI_SUCCESS)
    return ierr ? ierr : mf_error_set(ctx, MF_ERR_MPI, __FILE__, __LINE__, __func__, "MPI_Bcast failed (%d)", rc);
  char full[1024];
  snprintf(full, sizeof full, "rank %d: %.1000s", v[0], m.msg);
  error_record(ctx, full);
  mf_global_agreed = 1;
  return m.code;
}

int mf_agree(mf_context ctx, int ierr)
{
  if (!ctx || ctx->size == 1) return ierr;
  return agree_comm(ctx->comm, ctx, ierr);
}

/* Test-only failures of host allocations (mfree_impl.h): a limit on single allocations (0: none), and
 * a countdown to the one allocation that fails (0: none), with the count of allocations made. */
static size_t mf_test_alloc_limit;
static long mf_test_alloc_countdown, mf_test_alloc_count;

void mf_test_set_host_alloc_limit(size_t bytes) { mf_test_alloc_limit = bytes; }

void mf_test_fail_host_alloc(long n)
{
  mf_test_alloc_countdown = n > 0 ? n : 0;
  mf_test_alloc_count = 0;
}

long mf_test_host_alloc_count(void) { return mf_test_alloc_count; }

/* MFREE_TEST_HOST_ALLOC_LIMIT=bytes or bytes@rank (rank of MPI_COMM_WORLD): read at context creation */
static void read_test_alloc_limit(void)
{
  const char *env = getenv("MFREE_TEST_HOST_ALLOC_LIMIT");
  if (!env || !*env) return;
  char *end = NULL;
  unsigned long long bytes = strtoull(env, &end, 10);
  int world = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &world);
  if (end && *end == '@' && atoi(end + 1) != world) bytes = 0;
  mf_test_alloc_limit = (size_t)bytes;
}

static int over_test_limit(mf_context ctx, size_t bytes)
{
  mf_test_alloc_count++;
  if (mf_test_alloc_countdown == 1 && getenv("T14_TRACE")) { void *bt[20]; int nb = backtrace(bt, 20); backtrace_symbols_fd(bt, nb, 2); }
  if (mf_test_alloc_countdown > 0 && --mf_test_alloc_countdown == 0)
    return mf_error_set(ctx, MF_ERR_MEMORY, __FILE__, __LINE__, __func__,
                        "out of host memory allocating %zu bytes (test failure of allocation %ld)", bytes,
                        mf_test_alloc_count);
  if (!mf_test_alloc_limit || bytes <= mf_test_alloc_limit) return 0;
  return mf_error_set(ctx, MF_ERR_MEMORY, __FILE__, __LINE__, __func__,
                      "out of host memory allocating %zu bytes (test limit of %zu bytes per allocation)", bytes,
                      mf_test_alloc_limit);
}

int mf_calloc(mf_context ctx, size_t count, size_t size, void *ptr)
{
  void **p = (void **)ptr;
  *p = NULL;
  if (count == 0) count = 1; /* a valid, freeable pointer for empty arrays */
  MF_CHECK(size == 0 || count <= SIZE_MAX / size, ctx, MF_ERR_MEMORY, "allocation of %zu x %zu bytes overflows",
           count, size);
  MF_CALL(over_test_limit(ctx, count * size));
  *p = calloc(count, size);
  MF_CHECK(*p, ctx, MF_ERR_MEMORY, "out of host memory allocating %zu bytes", count * size);
  return 0;
}

int mf_calloc_agreed(mf_context ctx, size_t count, size_t size, void *ptr)
{
  int ierr = mf_agree(ctx, mf_calloc(ctx, count, size, ptr));
  if (ierr) {
    free(*(void **)ptr);
    *(void **)ptr = NULL;
  }
  return ierr;
}

int mf_malloc(mf_context ctx, size_t bytes, void *ptr)
{
  void **p = (void **)ptr;
  *p = NULL;
  if (bytes == 0) bytes = 1;
  MF_CALL(over_test_limit(ctx, bytes));
  *p = malloc(bytes);
  MF_CHECK(*p, ctx, MF_ERR_MEMORY, "out of host memory allocating %zu bytes", bytes);
  return 0;
}

int mf_calloc_touch(mf_context ctx, size_t count, size_t size, void *ptr)
{
  void **p = (void **)ptr;
  *p = NULL;
  if (count == 0) count = 1;
  MF_CHECK(size == 0 || count <= SIZE_MAX / size, ctx, MF_ERR_MEMORY, "allocation of %zu x %zu bytes overflows",
           count, size);
  const size_t bytes = count * size;
  if (bytes < ((size_t)1 << 22)) return mf_calloc(ctx, count, size, ptr);
  MF_CALL(mf_malloc(ctx, bytes, ptr));
  const size_t chunk = (size_t)1 << 20, nchunk = (bytes + chunk - 1) / chunk;
  char *c = (char *)*p;
#pragma omp parallel for schedule(static)
  for (size_t k = 0; k < nchunk; k++) memset(c + k * chunk, 0, k + 1 < nchunk ? chunk : bytes - k * chunk);
  return 0;
}

int mf_max_threads(void)
{
#ifdef _OPENMP
  return omp_get_max_threads();
#else
  return 1;
#endif
}

void mf_parallel_copy(void *dst, const void *src, size_t bytes)
{
  const size_t chunk = (size_t)1 << 20, nchunk = (bytes + chunk - 1) / chunk;
#pragma omp parallel for schedule(static)
  for (size_t k = 0; k < nchunk; k++)
    memcpy((char *)dst + k * chunk, (const char *)src + k * chunk, k + 1 < nchunk ? chunk : bytes - k * chunk);
}

int mf_cuda_available(void)
{
#ifdef MFREE_WITH_CUDA
  return mf_cuda_device_count() > 0;
#else
  return 0;
#endif
}

int mf_cuda_status(mf_cuda_state *state, const char **reason)
{
  static _Thread_local char why[512];
  MF_CHECK(state, NULL, MF_ERR_NULL, "output pointer state is NULL");
#ifdef MFREE_WITH_CUDA
  *state = mf_cuda_probe(why, sizeof why);
#else
  *state = MF_CUDA_NOT_COMPILED;
  snprintf(why, sizeof why,
           "mfree was built without the CUDA backend (configure with nvcc present and -DMFREE_WITH_CUDA=ON)");
#endif
  if (reason) *reason = why;
  return 0;
}

#ifdef MFREE_WITH_CUDA
/* Two ranks of a node on one physical GPU (found by its PCI bus id, so that ranks which each see one
 * GPU through CUDA_VISIBLE_DEVICES are told apart) are refused unless MFREE_CUDA_SHARE=1. Collective
 * over the context (every rank has a device). */
static int check_device_sharing(mf_context c)
{
  char id[32];
  int ierr = mf_cuda_device_id(c, id, (int)sizeof id);
  MPI_Comm node;
  if (MPI_Comm_split_type(c->comm, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node) != MPI_SUCCESS)
    return ierr ? ierr : mf_error_set(c, MF_ERR_MPI, __FILE__, __LINE__, __func__, "MPI_Comm_split_type failed");
  int n = 1, me = 0;
  MPI_Comm_size(node, &n);
  MPI_Comm_rank(node, &me);
  char *all = malloc((size_t)n * sizeof id);
  if (!all) {
    MPI_Comm_free(&node);
    return mf_error_set(c, MF_ERR_MEMORY, __FILE__, __LINE__, __func__, "out of host memory (%zu bytes)", (size_t)n * sizeof id);
  }
  if (ierr) memset(id, 0, sizeof id);
  MPI_Allgather(id, (int)sizeof id, MPI_CHAR, all, (int)sizeof id, MPI_CHAR, node);
  const char *share = getenv("MFREE_CUDA_SHARE");
  int other = -1;
  for (int r = 0; r < n && !ierr; r++)
    if (r != me && id[0] && !strncmp(all + (size_t)r * sizeof id, id, sizeof id)) other = r;
  free(all);
  MPI_Comm_free(&node);
  if (ierr) return ierr;
  if (other >= 0 && !(share && !strcmp(share, "1")))
    return mf_error_set(c, MF_ERR_BACKEND, __FILE__, __LINE__, __func__,
                        "ranks %d and %d of this node would share CUDA device %s: run at most one rank per GPU, or "
                        "set MFREE_CUDA_SHARE=1 to let ranks share a device", me, other, id);
  return 0;
}
#endif

int mf_context_create(MPI_Comm comm, const char *backend, mf_context *ctx)
{
  int ierr = 0, inited = 0;
  MF_CHECK(ctx, NULL, MF_ERR_NULL, "output pointer ctx is NULL");
  *ctx = NULL;
  MF_CHECK(backend, NULL, MF_ERR_NULL, "backend name is NULL (use \"cpu\", \"cuda\" or \"auto\")");
  MPI_Initialized(&inited);
  MF_CHECK(inited, NULL, MF_ERR_MPI, "MPI is not initialised: call MPI_Init before mf_context_create");
  MF_CHECK(comm != MPI_COMM_NULL, NULL, MF_ERR_MPI, "communicator is MPI_COMM_NULL");

  /* p4est logs every step at its default level: keep only its errors, unless the program registered
   * p4est itself (then its choice stands). Other libsc packages and libsc's defaults are left alone. */
#pragma omp critical(mf_p4est_init)
  if (p4est_package_id < 0) p4est_init(NULL, SC_LP_ERROR);
  read_test_alloc_limit();
  mf_backend be;
  if (!strcmp(backend, "cpu")) be = MF_BACKEND_CPU;
  else if (!strcmp(backend, "cuda")) be = MF_BACKEND_CUDA;
  else if (!strcmp(backend, "auto")) be = mf_cuda_available() ? MF_BACKEND_CUDA : MF_BACKEND_CPU;
  else
    return mf_error_set(NULL, MF_ERR_BACKEND, __FILE__, __LINE__, __func__,
                        "unknown backend '%s' (use \"cpu\", \"cuda\" or \"auto\")", backend);
#ifndef MFREE_WITH_CUDA
  if (be == MF_BACKEND_CUDA) {
    mf_cuda_state state;
    const char *why = "";
    mf_cuda_status(&state, &why);
    return mf_error_set(NULL, MF_ERR_BACKEND, __FILE__, __LINE__, __func__, "backend 'cuda': %s", why);
  }
#else
  /* "auto" may pick differently on ranks that see different devices: the choice is agreed below */
  if (be == MF_BACKEND_CUDA && !mf_cuda_available()) {
    mf_cuda_state state;
    const char *why = "";
    mf_cuda_status(&state, &why); /* why: no device, or the fault, with the CUDA error's name */
    ierr = mf_error_set(NULL, MF_ERR_BACKEND, __FILE__, __LINE__, __func__,
                        "backend 'cuda' requested but no usable CUDA device was found: %s", why);
  }
#endif

  mf_context c = NULL;
  if (!ierr) ierr = MF_CALLOC(NULL, 1, &c);
  MF_CALL(agree_comm(comm, NULL, ierr)); /* before the communicator's duplication, which is collective */
  c->backend = be;
  c->refs = 1;
  int rc = MPI_Comm_dup(comm, &c->comm);
  if (rc != MPI_SUCCESS) {
    free(c);
    return mf_error_set(NULL, MF_ERR_MPI, __FILE__, __LINE__, __func__, "MPI_Comm_dup failed (%d)", rc);
  }
  MPI_Comm_rank(c->comm, &c->rank);
  MPI_Comm_size(c->comm, &c->size);
  const char *overlap = getenv("MFREE_OVERLAP");
  c->overlap = !(overlap && !strcmp(overlap, "0"));
  /* ranks sharing this node's memory, for the estimates that refuse oversized meshes */
  MPI_Comm node;
  c->node_size = 1;
  rc = MPI_Comm_split_type(c->comm, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node);
  if (rc == MPI_SUCCESS) {
    MPI_Comm_size(node, &c->node_size);
    MPI_Comm_rank(node, &c->node_rank);
    MPI_Comm_free(&node);
  } else {
    ierr = mf_error_set(c, MF_ERR_MPI, __FILE__, __LINE__, __func__, "MPI_Comm_split_type failed (%d)", rc);
  }
  if (!ierr && c->size > 1) { /* every rank on the same backend */
    int b[2] = {(int)be, -(int)be};
    rc = MPI_Allreduce(MPI_IN_PLACE, b, 2, MPI_INT, MPI_MIN, c->comm);
    if (rc != MPI_SUCCESS) ierr = mf_error_set(c, MF_ERR_MPI, __FILE__, __LINE__, __func__, "MPI_Allreduce failed (%d)", rc);
    else if (b[0] != -b[1])
      ierr = mf_error_set(c, MF_ERR_BACKEND, __FILE__, __LINE__, __func__,
                          "backend '%s' is not the same on every rank (\"auto\" found a GPU on some ranks only)", backend);
  }
#ifdef MFREE_WITH_CUDA
  if (!ierr && be == MF_BACKEND_CUDA) ierr = mf_cuda_context_init(c);
#endif
  ierr = mf_agree(c, ierr);
#ifdef MFREE_WITH_CUDA
  if (!ierr && be == MF_BACKEND_CUDA) ierr = mf_agree(c, check_device_sharing(c));
#endif
  if (ierr) {
#ifdef MFREE_WITH_CUDA
    if (c->cuda) mf_cuda_context_finalize(c);
#endif
    MPI_Comm_free(&c->comm);
    free(c);
    return ierr;
  }
  *ctx = c;
  return 0;
}

static void context_free(mf_context c)
{
#ifdef MFREE_WITH_CUDA
  if (c->cuda) mf_cuda_context_finalize(c);
#endif
  MPI_Comm_free(&c->comm);
  free(c);
}

int mf_context_destroy(mf_context *ctx)
{
  if (!ctx || !*ctx) return 0;
  mf_context c = *ctx;
  *ctx = NULL;
  mf_context_release(c);
  return 0;
}

void mf_context_retain(mf_context ctx) { ctx->refs++; }

void mf_context_release(mf_context ctx)
{
  if (ctx && --ctx->refs == 0) context_free(ctx);
}

int mf_context_set_device_memory_limit(mf_context ctx, size_t bytes)
{
  MF_CHECK(ctx, NULL, MF_ERR_NULL, "context is NULL");
#ifdef MFREE_WITH_CUDA
  if (ctx->backend == MF_BACKEND_CUDA) mf_cuda_memory(ctx, NULL, NULL, &bytes);
#endif
  return 0;
}

int mf_context_device_memory(mf_context ctx, size_t *in_use, size_t *peak)
{
  MF_CHECK(ctx, NULL, MF_ERR_NULL, "context is NULL");
  if (in_use) *in_use = 0;
  if (peak) *peak = 0;
#ifdef MFREE_WITH_CUDA
  if (ctx->backend == MF_BACKEND_CUDA) mf_cuda_memory(ctx, in_use, peak, NULL);
#endif
  return 0;
}

/* ------------------------------------------------------------------ set-up phases */

static const char *const phase_names[MF_PHASE_COUNT] = {"mesh", "dofs", "ordering", "coordinates", "geometry",
                                                         "coefficient", "dirichlet", "h2d", "rhs", "diagonal",
                                                         "solver"};

const char *mf_phase_name(mf_phase phase)
{
  return (int)phase >= 0 && phase < MF_PHASE_COUNT ? phase_names[phase] : "unknown";
}

static void device_sync(mf_context ctx);
void mf_device_sync(mf_context ctx) { device_sync(ctx); }

static void device_sync(mf_context ctx)
{
#ifdef MFREE_WITH_CUDA
  if (ctx->backend == MF_BACKEND_CUDA) mf_cuda_synchronize(ctx);
#else
  (void)ctx;
#endif
}

double mf_phase_begin(mf_context ctx)
{
  device_sync(ctx);
  return MPI_Wtime();
}

void mf_phase_end(mf_context ctx, mf_phase phase, double t0)
{
  device_sync(ctx);
  ctx->phase_s[phase] += MPI_Wtime() - t0;
}

int mf_context_phase_times(mf_context ctx, double seconds[MF_PHASE_COUNT])
{
  MF_CHECK(ctx, NULL, MF_ERR_NULL, "context is NULL");
  MF_CHECK(seconds, ctx, MF_ERR_NULL, "output array seconds is NULL");
  memcpy(seconds, ctx->phase_s, sizeof ctx->phase_s);
  return 0;
}

int mf_context_phase_reset(mf_context ctx)
{
  MF_CHECK(ctx, NULL, MF_ERR_NULL, "context is NULL");
  memset(ctx->phase_s, 0, sizeof ctx->phase_s);
  return 0;
}

const char *mf_context_backend(mf_context ctx)
{
  if (!ctx) return "none";
  return ctx->backend == MF_BACKEND_CUDA ? "cuda" : "cpu";
}

int mf_context_comm(mf_context ctx, MPI_Comm *comm)
{
  MF_CHECK(ctx, NULL, MF_ERR_NULL, "context is NULL");
  MF_CHECK(comm, ctx, MF_ERR_NULL, "output pointer comm is NULL");
  *comm = ctx->comm;
  return 0;
}
