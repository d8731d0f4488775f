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

static _Thread_local char mf_global_errmsg[1024];

int mf_error_set(mf_context ctx, int code, const char *file, int line, const char *func,
                 const char *fmt, ...)
{
  char msg[768];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  /* the file name only, not the build path */
  const char *base = strrchr(file, '/');
  base = base ? base + 1 : file;
  snprintf(mf_global_errmsg, sizeof mf_global_errmsg, "%s (%s:%d in %s)", msg, base, line, func);
  if (ctx) snprintf(ctx->errmsg, sizeof ctx->errmsg, "%s", mf_global_errmsg);
  return code;
}

const char *mf_last_error_message(void) { return mf_global_errmsg; }

const char *mf_context_error_message(mf_context ctx) { return ctx ? ctx->errmsg : mf_global_errmsg; }

int mf_calloc(mf_context ctx, size_t count, size_t size, void *ptr)
{
  void **p = (void **)ptr;
  *p = NULL;
  if (count == 0) count = 1; /* a valid, freeable pointer for empty arrays */
  *p = calloc(count, size);
  MF_CHECK(*p, ctx, MF_ERR_MEMORY, "out of host memory allocating %zu bytes", count * size);
  return 0;
}

int mf_calloc_touch(mf_context ctx, size_t count, size_t size, void *ptr)
{
  void **p = (void **)ptr;
  *p = NULL;
  const size_t bytes = (count ? count : 1) * size;
  if (bytes < ((size_t)1 << 22)) return mf_calloc(ctx, count, size, ptr);
  *p = malloc(bytes);
  MF_CHECK(*p, ctx, MF_ERR_MEMORY, "out of host memory allocating %zu bytes", bytes);
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

int mf_context_create(MPI_Comm comm, const char *backend, mf_context *ctx)
{
  int ierr = 0, inited = 0;
  MF_CHECK(ctx, NULL, MF_ERR_NULL, "output pointer ctx is NULL");
  *ctx = NULL;
  MF_CHECK(backend, NULL, MF_ERR_NULL, "backend name is NULL (use \"cpu\", \"cuda\" or \"auto\")");
  MPI_Initialized(&inited);
  MF_CHECK(inited, NULL, MF_ERR_MPI, "MPI is not initialised: call MPI_Init before mf_context_create");
  MF_CHECK(comm != MPI_COMM_NULL, NULL, MF_ERR_MPI, "communicator is MPI_COMM_NULL");

  static int p4est_quiet = 0;
  if (!p4est_quiet) { /* p4est logs every step at its default level: keep only errors */
    sc_set_log_defaults(NULL, NULL, SC_LP_ERROR);
    p4est_init(NULL, SC_LP_ERROR);
    p4est_quiet = 1;
  }
  mf_backend be;
  if (!strcmp(backend, "cpu")) be = MF_BACKEND_CPU;
  else if (!strcmp(backend, "cuda")) be = MF_BACKEND_CUDA;
  else if (!strcmp(backend, "auto")) be = mf_cuda_available() ? MF_BACKEND_CUDA : MF_BACKEND_CPU;
  else
    return mf_error_set(NULL, MF_ERR_BACKEND, __FILE__, __LINE__, __func__,
                        "unknown backend '%s' (use \"cpu\", \"cuda\" or \"auto\")", backend);
#ifndef MFREE_WITH_CUDA
  MF_CHECK(be != MF_BACKEND_CUDA, NULL, MF_ERR_BACKEND,
           "backend 'cuda' not compiled in (configure with nvcc present and -DMFREE_WITH_CUDA=ON)");
#else
  MF_CHECK(be != MF_BACKEND_CUDA || mf_cuda_available(), NULL, MF_ERR_BACKEND,
           "backend 'cuda' requested but no usable CUDA device was found");
#endif

  mf_context c;
  MF_CALL(MF_CALLOC(NULL, 1, &c));
  c->backend = be;
  if (MPI_Comm_dup(comm, &c->comm) != MPI_SUCCESS) {
    free(c);
    return mf_error_set(NULL, MF_ERR_MPI, __FILE__, __LINE__, __func__, "MPI_Comm_dup failed");
  }
  MPI_Comm_rank(c->comm, &c->rank);
  MPI_Comm_size(c->comm, &c->size);
#ifdef MFREE_WITH_CUDA
  if (be == MF_BACKEND_CUDA) {
    ierr = mf_cuda_context_init(c);
    if (ierr) {
      MPI_Comm_free(&c->comm);
      free(c);
      return ierr;
    }
  }
#endif
  *ctx = c;
  return ierr;
}

int mf_context_destroy(mf_context *ctx)
{
  if (!ctx || !*ctx) return 0;
  mf_context c = *ctx;
#ifdef MFREE_WITH_CUDA
  if (c->cuda) mf_cuda_context_finalize(c);
#endif
  MPI_Comm_free(&c->comm);
  free(c);
  *ctx = NULL;
  return 0;
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
