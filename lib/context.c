/* context.c -- the mf_context object: communicator, backend choice, set-up phase times (its error
 * messages, allocation and phases: lib/base/). */
#include "mfree_impl.h"

#include <p4est_base.h>
#include <stdio.h>

#ifdef MFREE_WITH_CUDA
#include "cuda/mf_cuda.h"
#endif

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
  mf_test_read_alloc_limit();
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
  MF_CALL(mf_agree_comm(comm, NULL, ierr)); /* before the communicator's duplication, which is collective */
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
