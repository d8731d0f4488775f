/* backend.c -- the registry of backends: the tables compiled into this build (lib/base/mf_backend.h),
 * the making of a context on one of them (mf_context_create) and the public questions about the cuda
 * backend. The one file of the core that knows which backends were built: a backend left out fails at
 * run time, never at link time. Nothing in the library calls into this file (the backends' code reaches
 * the core, never the registry), so that registering the cuda table closes no circle. */
#include "base/mf_backend.h"

#include <p4est_base.h>
#include <stdio.h>

/* The reference: no entry, so that every caller runs its CPU path. */
const mf_backend_ops mf_backend_ops_cpu = {.name = "cpu", .kind = MF_BACKEND_CPU};

static const mf_backend_ops *const registered[] = {
    &mf_backend_ops_cpu,
#ifdef MFREE_WITH_CUDA
    &mf_backend_ops_cuda, /* lib/cuda/backend.c */
#endif
};

const mf_backend_ops *mf_backend_find(mf_backend kind)
{
  for (size_t i = 0; i < sizeof registered / sizeof *registered; i++)
    if (registered[i]->kind == kind) return registered[i];
  return NULL;
}

int mf_cuda_available(void)
{
  const mf_backend_ops *bk = mf_backend_find(MF_BACKEND_CUDA);
  return bk && bk->device_count() > 0;
}

int mf_cuda_status(mf_cuda_state *state, const char **reason)
{
  static _Thread_local char why[512];
  MF_CHECK(state, NULL, MF_ERR_NULL, "output pointer state is NULL");
  const mf_backend_ops *bk = mf_backend_find(MF_BACKEND_CUDA);
  if (bk) *state = bk->probe(why, sizeof why);
  else {
    *state = MF_CUDA_NOT_COMPILED;
    snprintf(why, sizeof why,
             "mfree was built without the CUDA backend (configure with nvcc present and -DMFREE_WITH_CUDA=ON)");
  }
  if (reason) *reason = why;
  return 0;
}

/* Two ranks of a node on one physical GPU (found by its PCI bus id, so that ranks which each see one
 * GPU through CUDA_VISIBLE_DEVICES are told apart) are refused unless MFREE_CUDA_SHARE=1. Collective
 * over the context (every rank has a device). */
static int check_device_sharing(mf_context c)
{
  char id[32];
  int ierr = c->bk->context.device_id(c, id, (int)sizeof id);
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
  const mf_backend_ops *bk = mf_backend_find(be);
  if (!bk) { /* not compiled in (lib/backend.c): the same on every rank */
    mf_cuda_state state;
    const char *why = "";
    mf_cuda_status(&state, &why);
    return mf_error_set(NULL, MF_ERR_BACKEND, __FILE__, __LINE__, __func__, "backend 'cuda': %s", why);
  }
  /* "auto" may pick differently on ranks that see different devices: the choice is agreed below */
  if (be == MF_BACKEND_CUDA && !mf_cuda_available()) {
    mf_cuda_state state;
    const char *why = "";
    mf_cuda_status(&state, &why); /* why: no device, or the fault, with the CUDA error's name */
    ierr = mf_error_set(NULL, MF_ERR_BACKEND, __FILE__, __LINE__, __func__,
                        "backend 'cuda' requested but no usable CUDA device was found: %s", why);
  }

  mf_context c = NULL;
  if (!ierr) ierr = MF_CALLOC(NULL, 1, &c);
  MF_CALL(mf_agree_comm(comm, NULL, ierr)); /* before the communicator's duplication, which is collective */
  c->backend = be;
  c->bk = bk;
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
  if (!ierr && bk->context.init) ierr = bk->context.init(c);
  ierr = mf_agree(c, ierr);
  if (!ierr && bk->context.device_id) ierr = mf_agree(c, check_device_sharing(c));
  if (ierr) {
    if (c->cuda) bk->context.finalize(c);
    MPI_Comm_free(&c->comm);
    free(c);
    return ierr;
  }
  *ctx = c;
  return 0;
}
