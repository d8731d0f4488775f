// mf_cuda_common.cuh -- shared by the CUDA sources: checked calls, device allocation with sizes in
// the message, and the per-object device state.
#ifndef MF_CUDA_COMMON_CUH
#define MF_CUDA_COMMON_CUH

#include <cublas_v2.h>
#include <cuda_runtime.h>
#include <cusparse.h>

#include "mf_cuda.h"
#include "mf_cuda_apply.h"

// Check a CUDA runtime call; on failure record "<call> failed: <reason>" on ctx and return.
#define MF_CUDA_CALL(ctx, call)                                                                        \
  do {                                                                                                 \
    cudaError_t mf_cerr_ = (call);                                                                     \
    if (mf_cerr_ != cudaSuccess)                                                                       \
      return mf_error_set((ctx), MF_ERR_CUDA, __FILE__, __LINE__, __func__, "%s failed: %s (%s)", #call, \
                          cudaGetErrorString(mf_cerr_), cudaGetErrorName(mf_cerr_));                  \
  } while (0)
#ifdef MFREE_DEBUG_SYNC
#define MF_CUDA_LAUNCH_HINT ""
#else
#define MF_CUDA_LAUNCH_HINT " (an execution error may be an earlier kernel's: -DMFREE_DEBUG_SYNC=ON checks each)"
#endif
// After a kernel launch: record "kernel <what>: <reason>" on ctx and return on failure.
#define MF_CUDA_LAUNCH_CHECK(ctx, what)                                                                   \
  do {                                                                                                    \
    cudaError_t mf_lerr_ = mf_cuda_launch_status();                                                       \
    if (mf_lerr_ != cudaSuccess)                                                                          \
      return mf_error_set((ctx), MF_ERR_CUDA, __FILE__, __LINE__, __func__, "kernel '%s': %s (%s)%s", (what), \
                          cudaGetErrorString(mf_lerr_), cudaGetErrorName(mf_lerr_), MF_CUDA_LAUNCH_HINT);    \
  } while (0)
#define MF_CUBLAS_CALL(ctx, call)                                                                       \
  do {                                                                                                 \
    cublasStatus_t mf_bst_ = (call);                                                                   \
    if (mf_bst_ != CUBLAS_STATUS_SUCCESS)                                                              \
      return mf_error_set((ctx), MF_ERR_CUDA, __FILE__, __LINE__, __func__, "%s failed: cuBLAS status %d", \
                          #call, (int)mf_bst_);                                                        \
  } while (0)

#define MF_CUSPARSE_CALL(ctx, call)                                                                      \
  do {                                                                                                  \
    cusparseStatus_t mf_sst_ = (call);                                                                  \
    if (mf_sst_ != CUSPARSE_STATUS_SUCCESS)                                                             \
      return mf_error_set((ctx), MF_ERR_CUDA, __FILE__, __LINE__, __func__, "%s failed: %s (cuSPARSE status %d)", \
                          #call, cusparseGetErrorString(mf_sst_), (int)mf_sst_);                        \
  } while (0)

// the context's reduction scratch: 4 scalars, the block partials of the fused CG steps (at most
// MF_CG_BLOCKS blocks), their counter
#define MF_CG_BLOCKS 1024
#define MF_CG_SCRATCH_BYTES (sizeof(double) * (4 + MF_CG_BLOCKS) + 16)

struct mf_cuda_alloc {
  void *ptr;
  size_t bytes;
  // a shared copy of a host array (mf_cuda_share): the array, a fingerprint of its contents, its holders
  // (0: not shared)
  const void *host;
  uint64_t fp;
  int refs;
};

struct mf_cuda_context {
  int device;
  cublasHandle_t cublas;
  cusparseHandle_t cusparse; // made on first use (lib/cuda/csr.cu: mf_cuda_cusparse)
  double *scalar; // reduction scratch (MF_CG_SCRATCH_BYTES): scalar[0] for reductions
  // device memory held by the context: every allocation goes through mf_cuda_malloc/mf_cuda_free
  size_t mem_in_use, mem_peak, mem_limit; // limit 0: none
  mf_cuda_alloc *allocs;
  int nallocs, cap_allocs;
  // pinned host staging for set-up transfers (grown on demand, freed with the context)
  void *stage;
  size_t stage_bytes;
  int stage_pinned;
  // ghost exchange: packing and transfers on a stream of their own, so that cells that need no ghost
  // run meanwhile on the default stream; cuda_aware: MPI takes device buffers
  cudaStream_t xstream;
  cudaEvent_t xready;
  int cuda_aware;
};

struct mf_cuda_space {
  int *cell_nodes;           // ncells x npc
  int *color_cells;          // ncells, color by color
  int *atomic_cells;         // ncells: the atomic launch order (Morton chunks, colors within a chunk)
  unsigned char *bc;         // nlocal
  int16_t *mask;             // ncells hanging-node masks (NULL when no cell has one)
  double *P;                 // 2 x n1 x n1 hanging-node interpolation
  int *send_idx, *recv_idx;  // exchange lists
  double *send_buf, *recv_buf;
  double *coords;            // nlocal x dim node coordinates
  double *coords_cm;         // the same component-major (dim x nlocal): geometry on the fly, made on first use
  int *masked_cells;         // nmasked
  int *bc_list;              // nbc
  double *h_send, *h_recv;   // pinned host buffers of the exchange (host-staged MPI)
  int *atomic_parts;         // ncells: the atomic order split into the cell parts (made on first use)
  int atomic_part_off[4];
  int *color_parts;          // ncells: each color split into the cell parts (made on first use)
  int *color_part_off;       // host, 4 per color: absolute offsets of the parts in color_parts
  int64_t *csr_rowptr;       // nlocal + 1: the assembled operators' sparsity (made on first use)
  int *csr_colidx;           // csr_rowptr[nlocal]
  // the table assembly's positions of every entry of the element matrices of the cells without
  // hanging nodes (made by the first table assembly on the space, kept for the next ones; 4 or
  // 8 bytes per entry as asm_table_wide says; lib/cuda/assembly.cu)
  void *asm_table;
  int asm_table_wide;
};

struct mf_cuda_operator {
  double *qd;      // quadrature data, the host layout (NULL on a single-precision copy)
  float *qdf;      // the same in float (single-precision copy only)
  double *B, *D;   // 1D matrices
  double *BB, *BG, *GG; // diagonal factors
  double *qw;      // 1D quadrature weights
  double *coefq;   // geometry on the fly: c(x_q), ncells x nqp cell-major (NULL: constant coefficient)
};

// setup.cu: fill op's device quadrature data (geometry and, with c, the coefficient phase), and the
// extra device memory that needs.
extern "C" int mf_cuda_operator_qdata(mf_operator op, const double *B, const double *D, const double *qw,
                                      mf_coefficient_fn c, void *user, double a, double b);
extern "C" size_t mf_cuda_qdata_setup_bytes(mf_operator op, int with_coefficient);
// setup.cu, geometry on the fly: the coefficient at the quadrature points of every cell (the stored
// set-up's points, values checked on the host), coefq[cell * nqp + q]; and quadrature data in the layout of
// the operator's quadrature data (qd: zeroed, qd.len doubles) from the geometry and coefq (NULL: constant), the stored set-up's
// kernels and order, without calling the coefficient.
extern "C" int mf_cuda_otf_coefficient(mf_operator op, double *coefq);
extern "C" int mf_cuda_otf_qdata(mf_operator op, double *qd, const double *coefq);

static inline mf_cuda_context *mf_cuda_ctx(mf_context ctx) { return (mf_cuda_context *)ctx->cuda; }

// cudaMalloc with a clear out-of-memory message naming the bytes asked for; counted against the
// context's limit and peak. mf_cuda_free releases what it allocated (NULL: no-op).
int mf_cuda_malloc(mf_context ctx, void **p, size_t bytes, const char *what);
void mf_cuda_free(mf_context ctx, void *p);
// Free every allocation the context still records (its finalization: shared copies and buffers of objects not
// destroyed before it).
void mf_cuda_free_all(mf_context ctx);
// mf_cuda_free, and the pointer set to NULL (a buffer dropped as soon as it is done with)
template <class T> inline void mf_cuda_drop(mf_context ctx, T *&p)
{
  mf_cuda_free(ctx, p);
  p = nullptr;
}
int mf_cuda_upload(mf_context ctx, void **p, const void *host, size_t bytes, const char *what);
// The device copy of the host array `host` (bytes), shared by its holders: made (mf_cuda_upload) by the first,
// found again by the others (the same address, size and contents), freed by mf_cuda_free of its last holder.
// The set-up's meshes and spaces copy their cells, vertices and cell DoFs once this way for the operators,
// sources, numberings and transfers that read them. The rule: the host array stays alive and unchanged
// while any copy of it is held (its holders keep what owns it: an operator its space and mesh).
int mf_cuda_share(mf_context ctx, void **p, const void *host, size_t bytes, const char *what);
// One more holder of the device array p where it is a shared copy (mf_cuda_share): 1; else 0, nothing done.
int mf_cuda_retain(mf_context ctx, void *p);
// Device to host (bytes of what, named in an error): large copies through the pinned set-up buffer.
int mf_cuda_download(mf_context ctx, void *host, const void *dev, size_t bytes, const char *what);
// out[i] = in[i] rounded to float, i < n, both on the device (what: named in an error).
int mf_cuda_round(mf_context ctx, float *out, const double *in, size_t n, const char *what);
// Refuse, before allocating, a set-up that needs `bytes` more device memory than is available
// (the device's free memory, and the context's limit).
int mf_cuda_require(mf_context ctx, size_t bytes, const char *what);
// The context's cuSPARSE handle, made on first use (destroyed with the context).
int mf_cuda_cusparse(mf_context ctx, cusparseHandle_t *handle);
// Pinned host staging of at least `bytes` (valid until the next call or the context's end).
int mf_cuda_stage(mf_context ctx, size_t bytes, void **host);

#endif
