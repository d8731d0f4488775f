// device.cu -- CUDA device discovery, per-context state (device, cuBLAS, cuSPARSE), device mirrors of the
// space (DoF maps, boundary marks, exchange lists), device vectors and their operations, and the
// ghost exchange (pack on the device, MPI on pinned host buffers or, with a CUDA-aware MPI, on device
// buffers, unpack on the device), in begin/end halves.
#include "mf_cuda_common.cuh"
#include "family.h"
#include "hex/mf_hex.h"
#include "base/mf_random.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#if defined(OPEN_MPI) && OPEN_MPI && defined(__has_include)
#if __has_include(<mpi-ext.h>)
#include <mpi-ext.h> // MPIX_CUDA_AWARE_SUPPORT, MPIX_Query_cuda_support
#endif
#endif

#define MF_CUDA_THREADS 256

static int blocks_for(long long n) { return (int)((n + MF_CUDA_THREADS - 1) / MF_CUDA_THREADS); }

extern "C" int mf_cuda_device_count(void)
{
  int n = 0;
  if (cudaGetDeviceCount(&n) != cudaSuccess) {
    cudaGetLastError(); // clear the "no device" error
    return 0;
  }
  return n;
}

/* Why cudaGetDeviceCount finds no device, sorted for mf_cuda_status (lib/backend.c). "No device" is
 * what a machine without a GPU answers: cudaErrorNoDevice (also CUDA_VISIBLE_DEVICES=-1), or no driver
 * installed at all, which the runtime reports as cudaErrorInsufficientDriver with driver version 0.
 * Every other answer comes from a driver that is there but cannot serve this runtime (older than it,
 * failed initialisation, a device in an error state): a fault, not a machine without a GPU. */
extern "C" mf_cuda_state mf_cuda_probe(char *reason, size_t len)
{
  int n = 0;
  cudaError_t e = cudaGetDeviceCount(&n);
  if (e == cudaSuccess && n > 0) {
    snprintf(reason, len, "%d CUDA device%s found", n, n > 1 ? "s" : "");
    return MF_CUDA_USABLE;
  }
  cudaGetLastError(); /* leave no error behind for the next checked call */
  if (e == cudaSuccess) {
    snprintf(reason, len, "no CUDA device: cudaGetDeviceCount found none");
    return MF_CUDA_NO_DEVICE;
  }
  const char *what = cudaGetErrorString(e), *name = cudaGetErrorName(e);
  if (e == cudaErrorNoDevice) {
    snprintf(reason, len, "no CUDA device: cudaGetDeviceCount failed: %s (%s)", what, name);
    return MF_CUDA_NO_DEVICE;
  }
  int driver = -1, runtime = 0;
  if (cudaDriverGetVersion(&driver) != cudaSuccess) driver = -1;
  cudaRuntimeGetVersion(&runtime);
  cudaGetLastError();
  if (e == cudaErrorInsufficientDriver && driver == 0) {
    snprintf(reason, len, "no CUDA device: no CUDA driver is installed (cudaGetDeviceCount failed: %s (%s))", what,
             name);
    return MF_CUDA_NO_DEVICE;
  }
  if (e == cudaErrorInsufficientDriver && driver > 0)
    snprintf(reason, len, "cudaGetDeviceCount failed: %s (%s); the driver supports CUDA %d.%d, the runtime is %d.%d",
             what, name, driver / 1000, driver % 1000 / 10, runtime / 1000, runtime % 1000 / 10);
  else snprintf(reason, len, "cudaGetDeviceCount failed: %s (%s)", what, name);
  return MF_CUDA_FAULT;
}

extern "C" int mf_cuda_context_init(mf_context ctx)
{
  int ndev = mf_cuda_device_count();
  if (ndev <= 0) {
    char why[512];
    mf_cuda_probe(why, sizeof why);
    return mf_error_set(ctx, MF_ERR_BACKEND, __FILE__, __LINE__, __func__,
                        "backend 'cuda' requested but no usable CUDA device was found: %s", why);
  }
  /* one rank per GPU: ranks of a node take the node's visible GPUs in turn (the rank on the node comes
   * from mf_context_create, so that nothing here is collective: a failure here is agreed on there;
   * mf_context_create then refuses two ranks on one physical device unless MFREE_CUDA_SHARE=1) */
  mf_cuda_context *c = (mf_cuda_context *)calloc(1, sizeof *c);
  MF_CHECK(c, ctx, MF_ERR_MEMORY, "out of host memory (%zu bytes)", sizeof *c);
  c->device = ctx->node_rank % ndev;
  ctx->cuda = c;
  int ierr = 0;
  cudaError_t e = cudaSetDevice(c->device);
  if (e == cudaSuccess) e = cudaFree(0); // create the primary context now, not inside a timed region
  if (e != cudaSuccess)
    ierr = mf_error_set(ctx, MF_ERR_CUDA, __FILE__, __LINE__, __func__, "cannot use CUDA device %d: %s", c->device,
                        cudaGetErrorString(e));
  if (!ierr && (e = cudaStreamCreateWithFlags(&c->xstream, cudaStreamNonBlocking)) == cudaSuccess)
    e = cudaEventCreateWithFlags(&c->xready, cudaEventDisableTiming);
  if (!ierr && e != cudaSuccess)
    ierr = mf_error_set(ctx, MF_ERR_CUDA, __FILE__, __LINE__, __func__, "cannot create the exchange stream: %s",
                        cudaGetErrorString(e));
  /* MPI on device buffers where the library says it can, unless MFREE_CUDA_AWARE=0. Open MPI answers
   * through mpi-ext.h; for other libraries, which have no such query, MFREE_CUDA_AWARE=1 is trusted. */
  const char *aware = getenv("MFREE_CUDA_AWARE");
  int known = 0;
#if defined(MPIX_CUDA_AWARE_SUPPORT) && MPIX_CUDA_AWARE_SUPPORT
  c->cuda_aware = MPIX_Query_cuda_support() == 1;
  known = 1;
#elif defined(MPIX_CUDA_AWARE_SUPPORT)
  known = 1; /* built without CUDA support */
#endif
  if (aware && !strcmp(aware, "0")) c->cuda_aware = 0;
  if (aware && !strcmp(aware, "1")) {
    if (known && !c->cuda_aware && !ierr)
      ierr = mf_error_set(ctx, MF_ERR_BACKEND, __FILE__, __LINE__, __func__,
                          "MFREE_CUDA_AWARE=1 but this MPI library says it is not CUDA-aware (the exchange would "
                          "pass device memory to it); unset it to stage the messages through host memory");
    else c->cuda_aware = 1;
  }
  if (!ierr && cublasCreate(&c->cublas) != CUBLAS_STATUS_SUCCESS)
    ierr = mf_error_set(ctx, MF_ERR_CUDA, __FILE__, __LINE__, __func__, "cublasCreate failed on device %d", c->device);
  // scalar[0]: reductions; the fused CG steps use scalar[1..2], block partials from scalar + 4 and a
  // counter after them (MF_CG_SCRATCH_BYTES)
  if (!ierr) ierr = mf_cuda_malloc(ctx, (void **)&c->scalar, MF_CG_SCRATCH_BYTES, "reduction scratch");
  if (!ierr) e = cudaMemset(c->scalar, 0, MF_CG_SCRATCH_BYTES);
  if (!ierr && e != cudaSuccess)
    ierr = mf_error_set(ctx, MF_ERR_CUDA, __FILE__, __LINE__, __func__, "cudaMemset failed: %s", cudaGetErrorString(e));
  if (ierr) {
    mf_cuda_context_finalize(ctx);
    return ierr;
  }
  return 0;
}

extern "C" int mf_cuda_device_id(mf_context ctx, char *id, int len)
{
  cudaError_t e = cudaDeviceGetPCIBusId(id, len, mf_cuda_ctx(ctx)->device);
  MF_CHECK(e == cudaSuccess, ctx, MF_ERR_CUDA, "cudaDeviceGetPCIBusId of device %d: %s", mf_cuda_ctx(ctx)->device,
           cudaGetErrorString(e));
  return 0;
}

extern "C" void mf_cuda_context_finalize(mf_context ctx)
{
  mf_cuda_context *c = mf_cuda_ctx(ctx);
  if (!c) return;
  if (c->cublas) cublasDestroy(c->cublas);
  if (c->xready) cudaEventDestroy(c->xready);
  if (c->xstream) cudaStreamDestroy(c->xstream);
  if (c->cusparse) cusparseDestroy(c->cusparse);
  mf_cuda_free(ctx, c->scalar);
  mf_cuda_free_all(ctx);
  if (c->stage_pinned) cudaFreeHost(c->stage);
  else free(c->stage);
  free(c->allocs);
  free(c);
  ctx->cuda = NULL;
}

extern "C" void mf_cuda_memory(mf_context ctx, size_t *in_use, size_t *peak, const size_t *set_limit)
{
  mf_cuda_context *c = mf_cuda_ctx(ctx);
  if (set_limit) c->mem_limit = *set_limit;
  if (in_use) *in_use = c->mem_in_use;
  if (peak) *peak = c->mem_peak;
}

extern "C" void mf_cuda_synchronize(mf_context ctx)
{
  (void)ctx;
  cudaDeviceSynchronize();
}

/* ------------------------------------------------------------------ space */

// The point of every DoF from its owner cell and node index (the device twin of mf_space_dof_point).
__global__ void k_node_coords(int n, int dim, int n1, int root_log, mf_map_kind map, double ball_inner,
                              const int *__restrict__ owner, const uint16_t *__restrict__ pos,
                              const int *__restrict__ cell_tree, const int32_t *__restrict__ cell_q,
                              const int8_t *__restrict__ cell_level, const double *__restrict__ V,
                              const double *__restrict__ gll, double *coords)
{
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  const int e = owner[i], k = pos[i], idx[3] = {k % n1, (k / n1) % n1, k / (n1 * n1)};
  const double inv = 1.0 / (double)((long long)1 << root_log), h = 1.0 / (double)((long long)1 << cell_level[e]);
  double s[3] = {0, 0, 0};
  for (int d = 0; d < dim; d++) s[d] = cell_q[3 * (size_t)e + d] * inv + h * gll[idx[d]];
  mf_map_point(dim, map, ball_inner, V + (size_t)3 * (1 << dim) * cell_tree[e], s, coords + (size_t)i * dim);
}

static int device_coords(mf_space s, double *coords)
{
  mf_context ctx = s->ctx;
  const size_t nc = (size_t)s->ncells, nl = (size_t)s->nlocal;
  int *owner = NULL, *tree = NULL;
  uint16_t *pos = NULL;
  int32_t *q = NULL;
  int8_t *level = NULL;
  double *V = NULL, *gll = NULL;
  double t0 = mf_phase_begin(ctx);
  int ierr = mf_cuda_upload(ctx, (void **)&owner, s->dof_owner, sizeof(int) * nl, "the DoF owners");
  if (!ierr) ierr = mf_cuda_upload(ctx, (void **)&pos, s->dof_pos, sizeof(uint16_t) * nl, "the DoF owners");
  if (!ierr) ierr = mf_cuda_upload(ctx, (void **)&tree, s->cell_tree, sizeof(int) * nc, "the cell trees");
  if (!ierr) ierr = mf_cuda_upload(ctx, (void **)&q, s->cell_q, sizeof(int32_t) * 3 * nc, "the cell corners");
  if (!ierr) ierr = mf_cuda_upload(ctx, (void **)&level, s->cell_level, nc, "the cell levels");
  if (!ierr)
    ierr = mf_cuda_upload(ctx, (void **)&V, mf_hexmesh(s->mesh)->tree_vertices,
                          sizeof(double) * 3 * ((size_t)mf_hexmesh(s->mesh)->ntrees << s->dim), "the tree vertices");
  if (!ierr) ierr = mf_cuda_upload(ctx, (void **)&gll, s->gll, sizeof(double) * s->n1, "the nodes");
  mf_phase_end(ctx, MF_PHASE_TRANSFER, t0);
  if (!ierr) {
    t0 = mf_phase_begin(ctx);
    if (nl) {
      k_node_coords<<<(unsigned)((nl + 255) / 256), 256>>>((int)nl, s->dim, s->n1, s->root_log, mf_hexmesh(s->mesh)->map,
                                                          mf_hexmesh(s->mesh)->ball_inner, owner, pos, tree, q, level, V, gll, coords);
      cudaError_t e = mf_cuda_launch_status();
      if (e != cudaSuccess)
        ierr = mf_error_set(ctx, MF_ERR_CUDA, __FILE__, __LINE__, __func__, "node coordinates kernel: %s",
                            cudaGetErrorString(e));
    }
    mf_phase_end(ctx, MF_PHASE_COORDINATES, t0);
  }
  void *tmp[] = {owner, pos, tree, q, level, V, gll};
  for (size_t k = 0; k < sizeof tmp / sizeof tmp[0]; k++) mf_cuda_free(ctx, tmp[k]);
  return ierr;
}

static int space_setup(mf_space s);

/* The space on the device: its arrays copied (phase h2d), its node coordinates computed there where
 * every DoF has an owner cell on this rank (phase coordinates), else copied. */
extern "C" int mf_cuda_space_setup(mf_space s)
{
  mf_context ctx = s->ctx;
  double *ph = ctx->phase_s;
  const double t0 = mf_phase_begin(ctx), before = ph[MF_PHASE_TRANSFER] + ph[MF_PHASE_COORDINATES];
  int ierr = space_setup(s);
  const double inner = ph[MF_PHASE_TRANSFER] + ph[MF_PHASE_COORDINATES] - before; /* timed by device_coords */
  mf_phase_end(ctx, MF_PHASE_TRANSFER, t0);
  ph[MF_PHASE_TRANSFER] -= inner; /* counted once: the whole minus what device_coords charged */
  return ierr;
}

static int space_setup(mf_space s)
{
  mf_context ctx = s->ctx;
  mf_cuda_space *d = (mf_cuda_space *)calloc(1, sizeof *d);
  MF_CHECK(d, ctx, MF_ERR_MEMORY, "out of host memory (%zu bytes)", sizeof *d);
  s->dev = d;
  const mf_exchange *ex = &s->ex;
  const size_t ns = ex->send_off ? ex->send_off[ex->nneigh] : 0, nr = ex->recv_off ? ex->recv_off[ex->nneigh] : 0;
  const size_t nb = ns > nr ? ns : nr, nc = (size_t)s->ncells, nl = (size_t)s->nlocal;
  /* a family whose device operators keep their own cell DoFs and geometry (simplex: lib/cuda/simplex.cu)
   * needs here only what the vector functions use: the boundary marks */
  const int cells = s->fam->device_cells;
  /* the space's arrays and, while the points are computed, the owners and cell corners */
  const size_t need = sizeof(int) * (nc * s->npc + nc + (size_t)s->nmasked + (size_t)s->nbc + ns + nr) +
                      (s->nmasked ? sizeof(int16_t) * nc + sizeof(double) * 2 * s->n1 * s->n1 : 0) + nl +
                      sizeof(double) * (nl * s->dim + 2 * nb) +
                      (s->coords || !cells ? 0 : 6 * nl + 17 * nc + sizeof(double) * (3 * ((size_t)mf_hexmesh(s->mesh)->ntrees << s->dim) + 16));
  MF_CALL(mf_cuda_require(ctx, need, "the space"));
  if (cells) {
    MF_CALL(mf_cuda_upload(ctx, (void **)&d->cell_nodes, s->cell_nodes, sizeof(int) * nc * s->npc,
                           "the cell-to-DoF map"));
    MF_CALL(mf_cuda_upload(ctx, (void **)&d->atomic_cells, s->launch_order, sizeof(int) * nc, "the atomic cell order"));
  }
  if (s->nmasked) {
    MF_CALL(mf_cuda_upload(ctx, (void **)&d->mask, s->face_code, sizeof(int16_t) * nc, "the hanging-node masks"));
    MF_CALL(mf_cuda_upload(ctx, (void **)&d->P, s->hanging_P, sizeof(double) * 2 * s->n1 * s->n1,
                           "the hanging-node interpolation"));
  }
  MF_CALL(mf_cuda_upload(ctx, (void **)&d->masked_cells, s->masked_cells, sizeof(int) * (size_t)s->nmasked,
                         "the cells with hanging nodes"));
  MF_CALL(mf_cuda_upload(ctx, (void **)&d->bc, s->bc, nl, "the boundary marks"));
  MF_CALL(mf_cuda_upload(ctx, (void **)&d->bc_list, s->bc_list, sizeof(int) * (size_t)s->nbc, "the boundary DoFs"));
  if (!cells) {
    /* no device coordinates: the family's kernels compute their geometry themselves */
  } else if (s->coords) /* made on the host (several ranks: shared DoFs take the same point on every rank) */
    MF_CALL(mf_cuda_upload(ctx, (void **)&d->coords, s->coords, sizeof(double) * nl * s->dim, "the node coordinates"));
  else {
    MF_CALL(mf_cuda_malloc(ctx, (void **)&d->coords, sizeof(double) * nl * s->dim, "the node coordinates"));
    MF_CALL(device_coords(s, d->coords));
  }
  MF_CALL(mf_cuda_upload(ctx, (void **)&d->send_idx, ex->send_idx, sizeof(int) * ns, "exchange lists"));
  MF_CALL(mf_cuda_upload(ctx, (void **)&d->recv_idx, ex->recv_idx, sizeof(int) * nr, "exchange lists"));
  MF_CALL(mf_cuda_malloc(ctx, (void **)&d->send_buf, sizeof(double) * nb, "exchange buffers"));
  MF_CALL(mf_cuda_malloc(ctx, (void **)&d->recv_buf, sizeof(double) * nb, "exchange buffers"));
  if (nb) { /* pinned: asynchronous copies beside the cells that need no ghost */
    cudaError_t e = cudaMallocHost((void **)&d->h_send, sizeof(double) * nb);
    if (e == cudaSuccess) e = cudaMallocHost((void **)&d->h_recv, sizeof(double) * nb);
    MF_CHECK(e == cudaSuccess, ctx, MF_ERR_MEMORY, "cannot allocate %zu bytes of pinned host memory for the exchange: %s",
             2 * sizeof(double) * nb, cudaGetErrorString(e));
  }
  return 0;
}

extern "C" int mf_cuda_space_marks(mf_space s)
{
  mf_cuda_space *d = (mf_cuda_space *)s->dev;
  mf_context ctx = s->ctx;
  mf_cuda_free(ctx, d->bc);
  mf_cuda_free(ctx, d->bc_list);
  d->bc = NULL;
  d->bc_list = NULL;
  MF_CALL(mf_cuda_upload(ctx, (void **)&d->bc, s->bc, (size_t)s->nlocal, "the boundary marks"));
  return mf_cuda_upload(ctx, (void **)&d->bc_list, s->bc_list, sizeof(int) * (size_t)s->nbc, "the boundary DoFs");
}

extern "C" void mf_cuda_space_free(mf_space s)
{
  mf_cuda_space *d = (mf_cuda_space *)s->dev;
  if (!d) return;
  mf_context ctx = s->ctx;
  void *ptrs[] = {d->cell_nodes, d->color_cells, d->atomic_cells, d->bc, d->mask, d->P, d->send_idx, d->recv_idx,
                  d->send_buf, d->recv_buf, d->coords, d->coords_cm, d->masked_cells, d->bc_list, d->atomic_parts,
                  d->color_parts, d->csr_rowptr, d->csr_colidx, d->asm_table};
  for (size_t k = 0; k < sizeof ptrs / sizeof ptrs[0]; k++) mf_cuda_free(ctx, ptrs[k]);
  if (d->h_send) cudaFreeHost(d->h_send);
  if (d->h_recv) cudaFreeHost(d->h_recv);
  free(d->color_part_off);
  free(d);
  s->dev = NULL;
}

/* ------------------------------------------------------------------ vector kernels */
// Templated on the scalar type T of the vector (double, or float for multigrid levels in single
// precision); scalars arrive as double and are rounded to T; reductions accumulate in double.

template <class T> inline T *vdata(mf_vector v);
template <> inline double *vdata<double>(mf_vector v) { return v->data; }
template <> inline float *vdata<float>(mf_vector v) { return v->sdata; }

template <class T> __global__ void k_set(T *v, T a, int n)
{
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) v[i] = a;
}
template <class T> __global__ void k_axpy(T *y, T a, const T *x, int n)
{
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] += a * x[i];
}
template <class T> __global__ void k_scale(T *v, T a, int n)
{
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) v[i] *= a;
}
template <class T> __global__ void k_pmult(T *w, const T *x, const T *y, int n)
{
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) w[i] = x[i] * y[i];
}
template <class T> __global__ void k_aypx(T *y, T a, const T *x, int n)
{
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = x[i] + a * y[i];
}
template <class T> __global__ void k_reciprocal(T *v, int n)
{
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) v[i] = (T)1 / v[i];
}
template <class T> __global__ void k_bc_zero(T *v, const unsigned char *bc, int n)
{
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n && bc[i]) v[i] = 0;
}
template <class T> __global__ void k_bc_set(T *d, const T *s, const unsigned char *bc, int n)
{
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n && bc[i]) d[i] = s ? s[i] : (T)1;
}
template <class TD, class TS> __global__ void k_convert(TD *d, const TS *s, int n)
{
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) d[i] = (TD)s[i];
}
// sum of x (y NULL) or of x .* y, in double, added to *out
template <class T> __global__ void k_sum(const T *x, const T *y, int n, double *out)
{
  __shared__ double part[MF_CUDA_THREADS / 32];
  double s = 0.0;
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x)
    s += y ? (double)x[i] * (double)y[i] : (double)x[i];
  for (int o = 16; o > 0; o >>= 1) s += __shfl_down_sync(0xffffffffu, s, o);
  if ((threadIdx.x & 31) == 0) part[threadIdx.x >> 5] = s;
  __syncthreads();
  if (threadIdx.x < 32) {
    s = threadIdx.x < MF_CUDA_THREADS / 32 ? part[threadIdx.x] : 0.0;
    for (int o = 16; o > 0; o >>= 1) s += __shfl_down_sync(0xffffffffu, s, o);
    if (threadIdx.x == 0) atomicAdd(out, s);
  }
}
// the exchange buffers are doubles whatever the vector's type
template <class T> __global__ void k_pack(double *buf, const T *x, const int *idx, int n)
{
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) buf[i] = x[idx[i]];
}
template <class T> __global__ void k_unpack(T *x, const double *buf, const int *idx, int n, int add)
{
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) {
    if (add) atomicAdd(&x[idx[i]], (T)buf[i]); // a node shared with several ranks is in several lists
    else x[idx[i]] = (T)buf[i];
  }
}
template <class T> __global__ void k_scatter(T *v, const int *idx, const double *vals, int n)
{
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) v[idx[i]] = (T)vals[i];
}

#define CTX(v) ((v)->space->ctx)
#define NOWNED(v) ((v)->space->nowned)

template <class T> static int v_set_value(mf_vector v, double a)
{
  if (v->n) k_set<T><<<blocks_for(v->n), MF_CUDA_THREADS>>>(vdata<T>(v), (T)a, v->n);
  MF_CUDA_LAUNCH_CHECK(CTX(v), "set");
  return 0;
}
template <class T> static int v_copy(mf_vector d, mf_vector s)
{
  MF_CUDA_CALL(CTX(d), cudaMemcpyAsync(vdata<T>(d), vdata<T>(s), sizeof(T) * (size_t)s->n, cudaMemcpyDeviceToDevice, 0));
  return 0;
}
template <class T> static int v_axpy(mf_vector y, double a, mf_vector x)
{
  if (sizeof(T) == sizeof(double)) {
    MF_CUBLAS_CALL(CTX(y), cublasDaxpy(mf_cuda_ctx(CTX(y))->cublas, NOWNED(y), &a, x->data, 1, y->data, 1));
    return 0;
  }
  if (NOWNED(y)) k_axpy<T><<<blocks_for(NOWNED(y)), MF_CUDA_THREADS>>>(vdata<T>(y), (T)a, vdata<T>(x), NOWNED(y));
  MF_CUDA_LAUNCH_CHECK(CTX(y), "axpy");
  return 0;
}
template <class T> static int v_scale(mf_vector v, double a)
{
  if (sizeof(T) == sizeof(double)) {
    MF_CUBLAS_CALL(CTX(v), cublasDscal(mf_cuda_ctx(CTX(v))->cublas, v->n, &a, v->data, 1));
    return 0;
  }
  if (v->n) k_scale<T><<<blocks_for(v->n), MF_CUDA_THREADS>>>(vdata<T>(v), (T)a, v->n);
  MF_CUDA_LAUNCH_CHECK(CTX(v), "scale");
  return 0;
}
template <class T> static int reduce(mf_vector x, mf_vector y, double *r)
{
  mf_cuda_context *c = mf_cuda_ctx(CTX(x));
  MF_CUDA_CALL(CTX(x), cudaMemsetAsync(c->scalar, 0, sizeof(double), 0));
  int nb = blocks_for(NOWNED(x));
  if (nb > 1024) nb = 1024;
  if (nb) k_sum<T><<<nb, MF_CUDA_THREADS>>>(vdata<T>(x), y ? vdata<T>(y) : (const T *)NULL, NOWNED(x), c->scalar);
  MF_CUDA_LAUNCH_CHECK(CTX(x), "sum");
  MF_CUDA_CALL(CTX(x), cudaMemcpy(r, c->scalar, sizeof(double), cudaMemcpyDeviceToHost));
  return 0;
}
template <class T> static int v_dot_local(mf_vector x, mf_vector y, double *r)
{
  *r = 0.0;
  if (NOWNED(x) == 0) return 0;
  if (sizeof(T) == sizeof(double)) {
    MF_CUBLAS_CALL(CTX(x), cublasDdot(mf_cuda_ctx(CTX(x))->cublas, NOWNED(x), x->data, 1, y->data, 1, r));
    return 0;
  }
  return reduce<T>(x, y, r);
}
template <class T> static int v_sum_local(mf_vector x, double *r) { return reduce<T>(x, NULL, r); }
template <class T> static int v_pmult(mf_vector w, mf_vector x, mf_vector y)
{
  if (NOWNED(w)) k_pmult<T><<<blocks_for(NOWNED(w)), MF_CUDA_THREADS>>>(vdata<T>(w), vdata<T>(x), vdata<T>(y), NOWNED(w));
  MF_CUDA_LAUNCH_CHECK(CTX(w), "pmult");
  return 0;
}
template <class T> static int v_aypx(mf_vector y, double a, mf_vector x)
{
  if (NOWNED(y)) k_aypx<T><<<blocks_for(NOWNED(y)), MF_CUDA_THREADS>>>(vdata<T>(y), (T)a, vdata<T>(x), NOWNED(y));
  MF_CUDA_LAUNCH_CHECK(CTX(y), "aypx");
  return 0;
}
template <class T> static int v_reciprocal(mf_vector v)
{
  if (NOWNED(v)) k_reciprocal<T><<<blocks_for(NOWNED(v)), MF_CUDA_THREADS>>>(vdata<T>(v), NOWNED(v));
  MF_CUDA_LAUNCH_CHECK(CTX(v), "reciprocal");
  return 0;
}
template <class T> static int v_bc_zero(mf_vector v)
{
  const mf_cuda_space *d = (const mf_cuda_space *)v->space->dev;
  if (v->n) k_bc_zero<T><<<blocks_for(v->n), MF_CUDA_THREADS>>>(vdata<T>(v), d->bc, v->n);
  MF_CUDA_LAUNCH_CHECK(CTX(v), "bc_zero");
  return 0;
}
template <class T> static int v_bc_set(mf_vector dst, mf_vector src)
{
  const mf_cuda_space *d = (const mf_cuda_space *)dst->space->dev;
  if (dst->n)
    k_bc_set<T><<<blocks_for(dst->n), MF_CUDA_THREADS>>>(vdata<T>(dst), src ? vdata<T>(src) : (const T *)NULL, d->bc, dst->n);
  MF_CUDA_LAUNCH_CHECK(CTX(dst), "bc_set");
  return 0;
}
/* forward: owners -> ghosts (assign); backward: ghosts -> owners (add). Begin: once the default
 * stream's work on v is done (an event), pack on the exchange stream and copy to the pinned buffer,
 * without waiting; the host goes on to launch the cells that need no ghost. End: wait for the pack,
 * exchange the messages (device buffers with a CUDA-aware MPI), then on the default stream copy back
 * and unpack, after the cells launched in between (the unpack may add into entries they add into). */
template <class T> static int v_exchange_begin(mf_vector v, int forward)
{
  mf_space s = v->space;
  mf_exchange *ex = &s->ex;
  mf_context ctx = s->ctx;
  if (ex->nneigh == 0) return 0;
  mf_cuda_context *c = mf_cuda_ctx(ctx);
  mf_cuda_space *d = (mf_cuda_space *)s->dev;
  const int ns = forward ? ex->send_off[ex->nneigh] : ex->recv_off[ex->nneigh];
  const int *sidx = forward ? d->send_idx : d->recv_idx;
  MF_CUDA_CALL(ctx, cudaEventRecord(c->xready, 0));
  MF_CUDA_CALL(ctx, cudaStreamWaitEvent(c->xstream, c->xready, 0));
  if (ns) k_pack<T><<<blocks_for(ns), MF_CUDA_THREADS, 0, c->xstream>>>(d->send_buf, vdata<T>(v), sidx, ns);
  MF_CUDA_LAUNCH_CHECK(ctx, "pack");
  if (!c->cuda_aware && ns)
    MF_CUDA_CALL(ctx, cudaMemcpyAsync(d->h_send, d->send_buf, sizeof(double) * (size_t)ns, cudaMemcpyDeviceToHost,
                                      c->xstream));
  return 0;
}
template <class T> static int v_exchange_end(mf_vector v, int forward)
{
  mf_space s = v->space;
  mf_exchange *ex = &s->ex;
  mf_context ctx = s->ctx;
  if (ex->nneigh == 0) return 0;
  mf_cuda_context *c = mf_cuda_ctx(ctx);
  mf_cuda_space *d = (mf_cuda_space *)s->dev;
  const int nr = forward ? ex->recv_off[ex->nneigh] : ex->send_off[ex->nneigh];
  const int *ridx = forward ? d->recv_idx : d->send_idx;
  /* the messages go whatever happened: a neighbour waits for them */
  int ierr = 0;
  cudaError_t e = cudaStreamSynchronize(c->xstream);
  if (e != cudaSuccess)
    ierr = mf_error_set(ctx, MF_ERR_CUDA, __FILE__, __LINE__, __func__, "exchange stream (pack): %s", cudaGetErrorString(e));
  MF_KEEP(ierr, mf_exchange_mpi_begin(ctx, ex, forward, c->cuda_aware ? d->send_buf : d->h_send,
                                      c->cuda_aware ? d->recv_buf : d->h_recv));
  MF_KEEP(ierr, mf_exchange_mpi_end(ctx, ex));
  if (ierr) return ierr;
  if (!c->cuda_aware && nr)
    MF_CUDA_CALL(ctx, cudaMemcpyAsync(d->recv_buf, d->h_recv, sizeof(double) * (size_t)nr, cudaMemcpyHostToDevice, 0));
  if (nr) k_unpack<T><<<blocks_for(nr), MF_CUDA_THREADS>>>(vdata<T>(v), d->recv_buf, ridx, nr, !forward);
  MF_CUDA_LAUNCH_CHECK(ctx, "unpack");
  return 0;
}
template <class T> static int v_exchange(mf_vector v, int forward)
{
  int ierr = v_exchange_begin<T>(v, forward);
  MF_KEEP(ierr, v_exchange_end<T>(v, forward));
  return ierr;
}
template <class T> static int v_bc_values(mf_vector v, const double *vals)
{
  mf_context ctx = CTX(v);
  const mf_space s = v->space;
  const mf_cuda_space *d = (const mf_cuda_space *)s->dev;
  double *dv = NULL;
  MF_CALL(v_set_value<T>(v, 0.0));
  MF_CALL(mf_cuda_upload(ctx, (void **)&dv, vals, sizeof(double) * (size_t)s->nbc, "boundary values"));
  if (s->nbc) k_scatter<T><<<blocks_for(s->nbc), MF_CUDA_THREADS>>>(vdata<T>(v), d->bc_list, dv, s->nbc);
  cudaError_t e = mf_cuda_launch_status();
  mf_cuda_free(ctx, dv);
  MF_CHECK(e == cudaSuccess, ctx, MF_ERR_CUDA, "boundary values kernel: %s", cudaGetErrorString(e));
  return 0;
}
template <class T> __global__ void k_random(T *v, const double *__restrict__ coords, int n, int dim, int ncomp, uint64_t seed)
{
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) v[i] = (T)mf_random_point(coords + (size_t)i * dim, dim, ncomp, i % ncomp, seed);
}
template <class T> static int v_random_points(mf_vector v, uint64_t seed) // base/mf_random.h: the host's values
{
  const mf_space s = v->space;
  const double *coords = ((const mf_cuda_space *)s->dev)->coords;
  if (!coords) return -1; // a family without device points (simplex): the host's
  if (s->nlocal) k_random<T><<<blocks_for(s->nlocal), MF_CUDA_THREADS>>>(vdata<T>(v), coords, s->nlocal, s->dim, s->ncomp, seed);
  MF_CUDA_LAUNCH_CHECK(CTX(v), "random values");
  return 0;
}
template <class T> static int v_import(mf_vector v) { return v_exchange<T>(v, 1); }
template <class T> static int v_export_add(mf_vector v) { return v_exchange<T>(v, 0); }
// host <-> device in double: a float vector goes through a device buffer of doubles
template <class T> static int v_to_host(mf_vector v, double *h, int n)
{
  if (sizeof(T) == sizeof(double)) {
    MF_CUDA_CALL(CTX(v), cudaMemcpy(h, v->data, sizeof(double) * (size_t)n, cudaMemcpyDeviceToHost));
    return 0;
  }
  double *buf = NULL;
  MF_CALL(mf_cuda_malloc(CTX(v), (void **)&buf, sizeof(double) * (size_t)n, "a conversion buffer"));
  if (n) k_convert<double, T><<<blocks_for(n), MF_CUDA_THREADS>>>(buf, vdata<T>(v), n);
  cudaError_t e = mf_cuda_launch_status();
  if (e == cudaSuccess) e = cudaMemcpy(h, buf, sizeof(double) * (size_t)n, cudaMemcpyDeviceToHost);
  mf_cuda_free(CTX(v), buf);
  MF_CHECK(e == cudaSuccess, CTX(v), MF_ERR_CUDA, "copy of a float vector to the host: %s", cudaGetErrorString(e));
  return 0;
}
template <class T> static int v_from_host(mf_vector v, const double *h, int n)
{
  if (sizeof(T) == sizeof(double)) {
    MF_CUDA_CALL(CTX(v), cudaMemcpy(v->data, h, sizeof(double) * (size_t)n, cudaMemcpyHostToDevice));
    return 0;
  }
  double *buf = NULL;
  MF_CALL(mf_cuda_upload(CTX(v), (void **)&buf, h, sizeof(double) * (size_t)n, "a conversion buffer"));
  if (n) k_convert<T, double><<<blocks_for(n), MF_CUDA_THREADS>>>(vdata<T>(v), buf, n);
  cudaError_t e = mf_cuda_launch_status();
  mf_cuda_free(CTX(v), buf);
  MF_CHECK(e == cudaSuccess, CTX(v), MF_ERR_CUDA, "copy of host values to a float vector: %s", cudaGetErrorString(e));
  return 0;
}
template <class T> static int v_convert(mf_vector dst, mf_vector src)
{
  if (dst->n) {
    if (src->prec == MF_PRECISION_FLOAT) k_convert<T, float><<<blocks_for(dst->n), MF_CUDA_THREADS>>>(vdata<T>(dst), src->sdata, dst->n);
    else k_convert<T, double><<<blocks_for(dst->n), MF_CUDA_THREADS>>>(vdata<T>(dst), src->data, dst->n);
  }
  MF_CUDA_LAUNCH_CHECK(CTX(dst), "convert");
  return 0;
}
template <class T> static int v_destroy(mf_vector v)
{
  mf_cuda_free(CTX(v), vdata<T>(v));
  v->data = NULL;
  v->sdata = NULL;
  return 0;
}

// The fused steps of Jacobi-preconditioned CG (lib/solvers/cg.c; double vectors; CPU twins in
// lib/vector_cpu_ops.h).
// Reductions are deterministic: each block writes its partial sum, and the last block to finish adds
// the partials in block order.
__device__ __forceinline__ double block_sum(double s)
{
  __shared__ double part[MF_CUDA_THREADS / 32];
  for (int o = 16; o > 0; o >>= 1) s += __shfl_down_sync(0xffffffffu, s, o);
  if ((threadIdx.x & 31) == 0) part[threadIdx.x >> 5] = s;
  __syncthreads();
  s = 0.0;
  if (threadIdx.x < 32) {
    s = threadIdx.x < MF_CUDA_THREADS / 32 ? part[threadIdx.x] : 0.0;
    for (int o = 16; o > 0; o >>= 1) s += __shfl_down_sync(0xffffffffu, s, o);
  }
  __syncthreads(); // part may be used again
  return s;        // the block's sum, in thread 0
}
// block sum s -> partial[blockIdx.x]; the last block writes the total of all partials to *out
__device__ __forceinline__ void grid_sum(double s, double *partial, unsigned int *count, double *out)
{
  __shared__ bool last;
  s = block_sum(s);
  if (threadIdx.x == 0) {
    partial[blockIdx.x] = s;
    __threadfence();
    last = atomicAdd(count, 1u) == gridDim.x - 1;
  }
  __syncthreads();
  if (!last) return;
  double t = 0.0;
  for (int b = threadIdx.x; b < (int)gridDim.x; b += blockDim.x) t += __ldcg(&partial[b]);
  t = block_sum(t);
  if (threadIdx.x == 0) {
    *out = t;
    *count = 0; // ready for the next launch
  }
}
__global__ void k_cg_dot(const double *p, const double *Ap, int n, double *partial, unsigned int *count, double *out)
{
  double s = 0.0;
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) s += p[i] * Ap[i];
  grid_sum(s, partial, count, out);
}
// alpha = rz / pAp (pAp from *pAp_dev when given); x += alpha p; r -= alpha Ap; *out = sum r (dinv r).
// A pAp that is not positive and finite leaves x and r alone (CG reports it).
__global__ void k_cg_update(double *x, double *r, const double *p, const double *Ap, const double *dinv, int n,
                            double rz, const double *pAp_dev, double pAp_host, double *partial, unsigned int *count,
                            double *out)
{
  const double pAp = pAp_dev ? *pAp_dev : pAp_host;
  const bool ok = isfinite(pAp) && pAp > 0.0;
  const double alpha = ok ? rz / pAp : 0.0;
  double s = 0.0;
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; ok && i < n; i += gridDim.x * blockDim.x) {
    x[i] += alpha * p[i];
    const double ri = r[i] - alpha * Ap[i], zi = dinv ? dinv[i] * ri : ri;
    r[i] = ri;
    s += ri * zi;
  }
  grid_sum(s, partial, count, out);
}
__global__ void k_cg_direction(double *p, const double *r, const double *dinv, double beta, int n)
{
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) p[i] = (dinv ? dinv[i] * r[i] : r[i]) + beta * p[i];
}
static int v_cg_update(mf_vector x, mf_vector r, mf_vector p, mf_vector Ap, mf_vector dinv, double rz,
                       const double *pAp_global, double out[2])
{
  mf_context ctx = CTX(x);
  double *s = mf_cuda_ctx(ctx)->scalar, *partial = s + 4;
  unsigned int *count = (unsigned int *)(s + 4 + MF_CG_BLOCKS);
  const int n = NOWNED(x);
  int nb = blocks_for(n);
  if (nb > MF_CG_BLOCKS) nb = MF_CG_BLOCKS;
  if (nb < 1) nb = 1; // a rank without owned entries still writes its zero sums
  if (!pAp_global) k_cg_dot<<<nb, MF_CUDA_THREADS>>>(p->data, Ap->data, n, partial, count, s + 1);
  MF_CUDA_LAUNCH_CHECK(ctx, "cg_dot");
  k_cg_update<<<nb, MF_CUDA_THREADS>>>(x->data, r->data, p->data, Ap->data, dinv ? dinv->data : (const double *)NULL, n,
                                       rz, pAp_global ? (const double *)NULL : s + 1, pAp_global ? *pAp_global : 0.0,
                                       partial, count, s + 2);
  MF_CUDA_LAUNCH_CHECK(ctx, "cg_update");
  MF_CUDA_CALL(ctx, cudaMemcpy(out, s + 1, 2 * sizeof(double), cudaMemcpyDeviceToHost)); // the one host sync
  if (pAp_global) out[0] = *pAp_global;
  return 0;
}
static int v_cg_direction(mf_vector p, mf_vector r, mf_vector dinv, double beta)
{
  const int n = NOWNED(p);
  if (n) k_cg_direction<<<blocks_for(n), MF_CUDA_THREADS>>>(p->data, r->data, dinv ? dinv->data : (const double *)NULL, beta, n);
  MF_CUDA_LAUNCH_CHECK(CTX(p), "cg_direction");
  return 0;
}

template <class T> static mf_vector_ops vector_ops()
{
  mf_vector_ops ops = {};
  ops.set_value = v_set_value<T>;
  ops.copy = v_copy<T>;
  ops.axpy = v_axpy<T>;
  ops.scale = v_scale<T>;
  ops.dot_local = v_dot_local<T>;
  ops.sum_local = v_sum_local<T>;
  ops.pmult = v_pmult<T>;
  ops.aypx = v_aypx<T>;
  ops.reciprocal = v_reciprocal<T>;
  ops.bc_zero = v_bc_zero<T>;
  ops.bc_set = v_bc_set<T>;
  ops.bc_values = v_bc_values<T>;
  ops.random_points = v_random_points<T>;
  ops.import = v_import<T>;
  ops.export_add = v_export_add<T>;
  ops.exchange_begin = v_exchange_begin<T>;
  ops.exchange_end = v_exchange_end<T>;
  ops.to_host = v_to_host<T>;
  ops.from_host = v_from_host<T>;
  ops.convert = v_convert<T>;
  ops.destroy = v_destroy<T>;
  return ops;
}

extern "C" int mf_cuda_vector_setup(mf_vector v)
{
  const bool single = v->prec == MF_PRECISION_FLOAT;
  const size_t bytes = (single ? sizeof(float) : sizeof(double)) * (size_t)v->n;
  v->ops = single ? vector_ops<float>() : vector_ops<double>();
  if (!single) {
    v->ops.cg_update = v_cg_update;
    v->ops.cg_direction = v_cg_direction;
  }
  void *p = NULL;
  MF_CALL(mf_cuda_malloc(CTX(v), &p, bytes, "a vector"));
  if (single) v->sdata = (float *)p;
  else v->data = (double *)p;
  /* defined contents: zero, like the CPU backend's calloc */
  MF_CUDA_CALL(CTX(v), cudaMemset(p, 0, bytes));
  return 0;
}
