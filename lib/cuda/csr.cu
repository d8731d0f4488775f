// csr.cu -- the assembled operator's product on the device (sparse matrix-vector product) and its
// diagonal. The matrix: rows and columns the local DoFs (owned then ghost), the space's device
// sparsity (mf_cuda_space csr_rowptr, 64-bit, and csr_colidx, 32-bit) and mf_csr(A)->vals in device memory;
// the apply flow (ghost exchange, Dirichlet form) is lib/operator.c's.
//
// The product is chosen when the operator is made, by the environment variable MFREE_SPMV:
//   (default)           stream for rows of at most MF_CSR_STREAM_MAX_AVG entries on average, else
//                       vector (measured: below);
//   stream              the streamed kernel below (CSR-Stream: a block's rows take their entries in
//                       chunks through shared memory, loads coalesced whatever the row lengths;
//                       lib/assembled/mf_csr.h has its CPU twin), 64-bit row offsets, deterministic: each row
//                       summed in order, as the CPU's row-by-row product. It reached 0.81-0.93 of the
//                       triad on an H200 where cuSPARSE reached 0.63-0.66 (docs/performance.md), up
//                       to 81 entries a row.
//   cusparse            cusparseSpMV, CSR, algorithm CUSPARSE_SPMV_CSR_ALG2: the one cuSPARSE
//                       documents as deterministic (the same bits on every run), so that CG's
//                       iterations repeat; the work buffer allocated once (counted), the product
//                       preprocessed on the first apply. cuSPARSE's generic product is given matching
//                       32-bit row offsets and columns: a 32-bit copy of the row offsets is kept
//                       (4 B per row), so at most 2^31 - 1 nonzeros per rank; above that
//                       MFREE_SPMV=cusparse is refused.
//   cusparse-alg1       the same with CUSPARSE_SPMV_CSR_ALG1 (for measurements).
//   vector              the grouped kernel below: g lanes per row (lib/assembled/mf_csr.h, its CPU twin there),
//                       64-bit row offsets, deterministic.
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "mf_cuda_common.cuh"
#include "assembled/mf_csr.h"
#include "assembled/assembly_impl.h"

#define MF_CSR_THREADS 256
// The default product: the streamed kernel for rows of at most this many entries on average, the
// grouped one (32 lanes a row) above: a chunk of the streamed kernel then spans few rows, and few of
// its threads add them (3D Q3, 125 a row: 0.74 of the triad against the grouped kernel's 0.95).
#define MF_CSR_STREAM_MAX_AVG 100.0

enum { SPMV_CUSPARSE = 0, SPMV_CUSPARSE_ALG1 = 1, SPMV_VECTOR = 2, SPMV_STREAM = 3, SPMV_COUNT = 4 };
static const char *const spmv_names[] = {"cusparse", "cusparse-alg1", "vector", "stream"};

struct csr_state {
  int kernel;             // SPMV_*
  int group;              // lanes per row of the grouped kernel
  const int64_t *rowptr;  // the space's device sparsity
  const int *colidx;
  int *rowptr32;          // cuSPARSE: the row offsets in 32 bits (nlocal + 1)
  cusparseSpMatDescr_t mat;
  cusparseDnVecDescr_t vx, vy;
  void *buffer;           // cuSPARSE's work buffer
  size_t buffer_bytes;
  int preprocessed;
  int nghost;             // rows with ghost columns (mf_csr_ghost_rows), on the device:
  int *ghost_rows;        //   their indices
  int64_t *ghost_start;   //   the positions of their first ghost column
};

int mf_cuda_cusparse(mf_context ctx, cusparseHandle_t *handle)
{
  mf_cuda_context *c = mf_cuda_ctx(ctx);
  if (!c->cusparse) {
    cusparseHandle_t h = NULL;
    MF_CUSPARSE_CALL(ctx, cusparseCreate(&h));
    c->cusparse = h;
  }
  *handle = c->cusparse;
  return 0;
}

// y[row] = row . x with G lanes per row: lane sums (mf_csr_lane_sum), then the shuffle tree of
// mf_csr_apply_grouped_cpu. Every thread of a warp takes part in the shuffles (rows past n sum 0).
// OWNED (the first part of the overlapped product): only the columns below `owned`, added to y.
template <int G, bool OWNED>
static __global__ void __launch_bounds__(MF_CSR_THREADS) k_csr_grouped(int n, const int64_t *__restrict__ rowptr,
                                                               const int *__restrict__ colidx,
                                                               const double *__restrict__ vals,
                                                               const double *__restrict__ x, double *__restrict__ y,
                                                               int owned)
{
  const long long t = (long long)blockIdx.x * blockDim.x + threadIdx.x;
  const long long row = t / G;
  const int lane = (int)(t % G);
  double s = 0.0;
  if (row < n) {
    if (OWNED)
      for (int64_t k = rowptr[row] + lane; k < rowptr[row + 1]; k += G) s += colidx[k] < owned ? vals[k] * x[colidx[k]] : 0.0;
    else s = mf_csr_lane_sum(vals, colidx, x, rowptr[row], rowptr[row + 1], lane, G);
  }
  for (int off = G / 2; off > 0; off /= 2) s += __shfl_down_sync(0xffffffffu, s, off, G);
  if (row < n && lane == 0) {
    if (OWNED) y[row] += s;
    else y[row] = s;
  }
}

template <int G, bool OWNED>
static cudaError_t launch_grouped(int n, const int64_t *rowptr, const int *colidx, const double *vals, const double *x,
                                  double *y, int owned)
{
  const long long threads = (long long)n * G;
  const unsigned blocks = (unsigned)((threads + MF_CSR_THREADS - 1) / MF_CSR_THREADS);
  k_csr_grouped<G, OWNED><<<blocks, MF_CSR_THREADS>>>(n, rowptr, colidx, vals, x, y, owned);
  return mf_cuda_launch_status();
}

// The rows with ghost columns, one thread each: y[row] += their ghost part (the overlapped product's
// second part, after the import).
static __global__ void k_csr_ghost_part(int nrows, const int *__restrict__ rows, const int64_t *__restrict__ start,
                                        const int64_t *__restrict__ rowptr, const int *__restrict__ colidx,
                                        const double *__restrict__ vals, const double *__restrict__ x, double *y)
{
  const int r = blockIdx.x * blockDim.x + threadIdx.x;
  if (r >= nrows) return;
  const int i = rows[r];
  double s = 0.0;
  for (int64_t k = start[r]; k < rowptr[i + 1]; k++) s += vals[k] * x[colidx[k]];
  y[i] += s;
}

// Streamed product: block b holds rows [b R, b R + R) (R = MF_CSR_STREAM_ROWS = blockDim.x, one per
// thread) and walks their entries in chunks of MF_CSR_STREAM_CHUNK: the products of a chunk to shared
// memory with consecutive threads on consecutive entries, then each thread adds its row's part of the
// chunk in order (mf_csr_apply_stream_cpu is the twin).
// OWNED: as the grouped kernel's.
template <bool OWNED>
static __global__ void __launch_bounds__(MF_CSR_STREAM_ROWS) k_csr_stream(int n, const int64_t *__restrict__ rowptr,
                                                                  const int *__restrict__ colidx,
                                                                  const double *__restrict__ vals,
                                                                  const double *__restrict__ x, double *__restrict__ y,
                                                                  int owned)
{
  __shared__ double prod[MF_CSR_STREAM_CHUNK];
  const int r0 = blockIdx.x * MF_CSR_STREAM_ROWS, row = r0 + (int)threadIdx.x;
  const int r1 = r0 + MF_CSR_STREAM_ROWS < n ? r0 + MF_CSR_STREAM_ROWS : n;
  const int64_t tb = rowptr[r0], te = rowptr[r1];
  int64_t rs = 0, re = 0;
  if (row < n) {
    rs = rowptr[row];
    re = rowptr[row + 1];
  }
  double s = 0.0;
  for (int64_t base = tb; base < te; base += MF_CSR_STREAM_CHUNK) {
    const int m = te - base < MF_CSR_STREAM_CHUNK ? (int)(te - base) : MF_CSR_STREAM_CHUNK;
    for (int t = threadIdx.x; t < m; t += MF_CSR_STREAM_ROWS) {
      const int c = colidx[base + t];
      prod[t] = !OWNED || c < owned ? vals[base + t] * x[c] : 0.0;
    }
    __syncthreads();
    const int lo = rs > base ? (int)(rs - base) : 0, hi = re < base + m ? (int)(re - base) : m;
    for (int k = lo; k < hi; k++) s += prod[k];
    __syncthreads();
  }
  if (row < n) {
    if (OWNED) y[row] += s;
    else y[row] = s;
  }
}

// d[i] += the diagonal entry of row i (binary search in the row); the CPU twin: diagonal_csr_cpu
// (lib/assembled/assembly.c).
static __global__ void k_csr_diagonal(int n, const int64_t *__restrict__ rowptr, const int *__restrict__ colidx,
                               const double *__restrict__ vals, double *d)
{
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  const int64_t k = mf_csr_diagonal_position(rowptr, colidx, i);
  if (k >= 0) d[i] += vals[k];
}

// The row offsets in 32 bits (nnz < 2^31 checked by the caller).
static __global__ void k_rowptr32(int n, const int64_t *__restrict__ in, int *__restrict__ out)
{
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i <= n) out[i] = (int)in[i];
}

static cusparseSpMVAlg_t spmv_alg(int kernel) { return kernel == SPMV_CUSPARSE_ALG1 ? CUSPARSE_SPMV_CSR_ALG1 : CUSPARSE_SPMV_CSR_ALG2; }

// The library's products over all rows; owned >= 0: only the columns below it, added to y (the first
// part of the overlapped product; cuSPARSE's product then takes the grouped kernel).
static int library_product(mf_operator A, const csr_state *st, const double *x, double *y, int owned)
{
  mf_context ctx = A->ctx;
  const int n = A->space->nlocal;
  if (st->kernel == SPMV_STREAM) {
    const unsigned blocks = (unsigned)((n + MF_CSR_STREAM_ROWS - 1) / MF_CSR_STREAM_ROWS);
    if (owned >= 0) k_csr_stream<true><<<blocks, MF_CSR_STREAM_ROWS>>>(n, st->rowptr, st->colidx, mf_csr(A)->vals, x, y, owned);
    else k_csr_stream<false><<<blocks, MF_CSR_STREAM_ROWS>>>(n, st->rowptr, st->colidx, mf_csr(A)->vals, x, y, 0);
    MF_CUDA_LAUNCH_CHECK(ctx, "csr product (streamed)");
    return 0;
  }
  {
    cudaError_t e;
    const bool own = owned >= 0;
#define MF_GROUPED(G)                                                                                      \
  (own ? launch_grouped<G, true>(n, st->rowptr, st->colidx, mf_csr(A)->vals, x, y, owned)                           \
       : launch_grouped<G, false>(n, st->rowptr, st->colidx, mf_csr(A)->vals, x, y, 0))
    switch (st->group) {
    case 4: e = MF_GROUPED(4); break;
    case 8: e = MF_GROUPED(8); break;
    case 16: e = MF_GROUPED(16); break;
    default: e = MF_GROUPED(32); break;
    }
#undef MF_GROUPED
    if (e != cudaSuccess)
      return mf_error_set(ctx, MF_ERR_CUDA, __FILE__, __LINE__, __func__, "kernel 'csr product' (%d lanes per row): %s (%s)%s",
                          st->group, cudaGetErrorString(e), cudaGetErrorName(e), MF_CUDA_LAUNCH_HINT);
    return 0;
  }
}

static int apply_csr_cuda(mf_operator A, mf_vector x, mf_vector y)
{
  csr_state *st = (csr_state *)mf_csr(A)->dev;
  mf_context ctx = A->ctx;
  const int n = A->space->nlocal;
  if (n == 0) return 0;
  if (st->kernel == SPMV_STREAM || st->kernel == SPMV_VECTOR) return library_product(A, st, x->data, y->data, -1);
  cusparseHandle_t h;
  MF_CALL(mf_cuda_cusparse(ctx, &h));
  const double one = 1.0, zero = 0.0;
  const cusparseSpMVAlg_t alg = spmv_alg(st->kernel);
  MF_CUSPARSE_CALL(ctx, cusparseDnVecSetValues(st->vx, x->data));
  MF_CUSPARSE_CALL(ctx, cusparseDnVecSetValues(st->vy, y->data));
  if (!st->preprocessed) {
    MF_CUSPARSE_CALL(ctx, cusparseSpMV_preprocess(h, CUSPARSE_OPERATION_NON_TRANSPOSE, &one, st->mat, st->vx, &zero,
                                                  st->vy, CUDA_R_64F, alg, st->buffer));
    st->preprocessed = 1;
  }
  MF_CUSPARSE_CALL(ctx, cusparseSpMV(h, CUSPARSE_OPERATION_NON_TRANSPOSE, &one, st->mat, st->vx, &zero, st->vy,
                                     CUDA_R_64F, alg, st->buffer));
  return 0;
}

static int diagonal_csr_cuda(mf_operator A, mf_vector d)
{
  const csr_state *st = (const csr_state *)mf_csr(A)->dev;
  const int n = A->space->nlocal;
  if (n == 0) return 0;
  k_csr_diagonal<<<(n + MF_CSR_THREADS - 1) / MF_CSR_THREADS, MF_CSR_THREADS>>>(n, st->rowptr, st->colidx, mf_csr(A)->vals,
                                                                                 d->data);
  MF_CUDA_LAUNCH_CHECK(A->ctx, "csr diagonal");
  return 0;
}

// The product in parts for lib/operator.c's overlapped flow (y zeroed first): every row's owned
// columns while the import travels, then the ghost columns of the rows that hold some; the rows are
// final after the boundary part, so the second interior part has nothing to do. CPU twin:
// apply_part_csr_cpu (lib/assembled/assembly.c).
static int apply_part_csr_cuda(mf_operator A, mf_vector x, mf_vector y, mf_cell_part part)
{
  const csr_state *st = (const csr_state *)mf_csr(A)->dev;
  const int n = A->space->nlocal;
  if (n == 0) return 0;
  if (part == MF_PART_INTERIOR_A) return library_product(A, st, x->data, y->data, A->space->nowned);
  if (part == MF_PART_BOUNDARY && st->nghost > 0) {
    k_csr_ghost_part<<<(st->nghost + MF_CSR_THREADS - 1) / MF_CSR_THREADS, MF_CSR_THREADS>>>(
        st->nghost, st->ghost_rows, st->ghost_start, st->rowptr, st->colidx, mf_csr(A)->vals, x->data, y->data);
    MF_CUDA_LAUNCH_CHECK(A->ctx, "csr product (ghost columns)");
  }
  return 0;
}

extern "C" int mf_cuda_csr_ghost_rows(mf_operator A)
{
  mf_context ctx = A->ctx;
  csr_state *st = (csr_state *)mf_csr(A)->dev;
  const mf_csr_ghost_rows *g = (const mf_csr_ghost_rows *)mf_csr(A)->ghost;
  MF_CHECK(st && g, ctx, MF_ERR_ARGUMENT, "the assembled operator has no product or no ghost rows");
  if (g->n > 0) {
    char what[96];
    snprintf(what, sizeof what, "the rows with ghost columns (%d) of the overlapped product", g->n);
    MF_CALL(mf_cuda_require(ctx, (sizeof(int) + sizeof(int64_t)) * (size_t)g->n, what));
    MF_CALL(mf_cuda_upload(ctx, (void **)&st->ghost_rows, g->rows, sizeof(int) * (size_t)g->n, what));
    MF_CALL(mf_cuda_upload(ctx, (void **)&st->ghost_start, g->start, sizeof(int64_t) * (size_t)g->n, what));
  }
  st->nghost = g->n;
  A->ops.apply_part = apply_part_csr_cuda;
  return 0;
}

// Everything the operator holds on the device, its values included (mf_csr(A)->vals: device memory here),
// and the host lists of its rows with ghost columns.
static int destroy_csr_cuda(mf_operator A)
{
  mf_context ctx = A->ctx;
  mf_cuda_free(ctx, mf_csr(A)->vals);
  mf_csr(A)->vals = NULL;
  mf_csr_ghost_rows_free(A);
  csr_state *st = (csr_state *)mf_csr(A)->dev;
  if (!st) return 0;
  mf_cuda_free(ctx, st->ghost_rows);
  mf_cuda_free(ctx, st->ghost_start);
  if (st->mat) cusparseDestroySpMat(st->mat);
  if (st->vx) cusparseDestroyDnVec(st->vx);
  if (st->vy) cusparseDestroyDnVec(st->vy);
  mf_cuda_free(ctx, st->buffer);
  mf_cuda_free(ctx, st->rowptr32);
  free(st);
  mf_csr(A)->dev = NULL;
  return 0;
}

// The product chosen by MFREE_SPMV (the file comment), for nnz nonzeros.
static int spmv_kernel(mf_context ctx, int64_t nnz, int n, int *kernel)
{
  const char *env = getenv("MFREE_SPMV");
  const int fits32 = nnz <= (int64_t)INT_MAX;
  if (!env || !*env) { /* measured: docs/performance.md, "Assembled path on the GPU" */
    *kernel = n > 0 && (double)nnz / n > MF_CSR_STREAM_MAX_AVG ? SPMV_VECTOR : SPMV_STREAM;
    return 0;
  }
  int k = 0;
  while (k < SPMV_COUNT && strcmp(env, spmv_names[k])) k++;
  MF_CHECK(k < SPMV_COUNT, ctx, MF_ERR_ARGUMENT,
           "environment variable MFREE_SPMV='%s' is not a product (cusparse, cusparse-alg1, vector or stream)", env);
  MF_CHECK(k == SPMV_VECTOR || k == SPMV_STREAM || fits32, ctx, MF_ERR_UNSUPPORTED,
           "MFREE_SPMV=%s: %lld nonzeros on this rank need 64-bit row offsets, and cuSPARSE's product is given "
           "matching 32-bit offsets and columns (at most %d nonzeros): use MFREE_SPMV=stream (the default) or vector",
           env, (long long)nnz, INT_MAX);
  *kernel = k;
  return 0;
}

extern "C" int mf_cuda_csr_ops(mf_operator A)
{
  mf_context ctx = A->ctx;
  const mf_space s = A->space;
  const mf_cuda_space *ds = (const mf_cuda_space *)s->dev;
  csr_state *st = (csr_state *)calloc(1, sizeof *st);
  MF_CHECK(st, ctx, MF_ERR_MEMORY, "out of host memory (%zu bytes)", sizeof *st);
  /* the table first: a failure below leaves the operator to mf_operator_destroy, which frees it all */
  mf_csr(A)->dev = st;
  A->ops.apply = apply_csr_cuda;
  A->ops.diagonal = diagonal_csr_cuda;
  A->ops.destroy = destroy_csr_cuda;
  A->ops.masks_bc = 0;
  const int n = s->nlocal;
  const int64_t nnz = mf_csr(A)->rowptr[n]; /* the host pattern */
  MF_CHECK(ds && ds->csr_rowptr && ds->csr_colidx && (mf_csr(A)->vals || nnz == 0), ctx, MF_ERR_ARGUMENT,
           "the assembled operator has no device sparsity pattern or values");
  st->rowptr = ds->csr_rowptr;
  st->colidx = ds->csr_colidx;
  st->group = mf_csr_group(n ? (double)nnz / n : 0.0);
  MF_CALL(spmv_kernel(ctx, nnz, n, &st->kernel));
  if (st->kernel == SPMV_VECTOR || st->kernel == SPMV_STREAM || n == 0) return 0;

  /* cuSPARSE: the 32-bit row offsets, the descriptors, the work buffer; refused before allocating */
  char what[160];
  snprintf(what, sizeof what, "the sparse product's 32-bit row offsets (%d rows)", n);
  MF_CALL(mf_cuda_require(ctx, sizeof(int) * ((size_t)n + 1), what));
  MF_CALL(mf_cuda_malloc(ctx, (void **)&st->rowptr32, sizeof(int) * ((size_t)n + 1), what));
  k_rowptr32<<<(n + 1 + MF_CSR_THREADS - 1) / MF_CSR_THREADS, MF_CSR_THREADS>>>(n, st->rowptr, st->rowptr32);
  MF_CUDA_LAUNCH_CHECK(ctx, "csr row offsets in 32 bits");
  cusparseHandle_t h;
  MF_CALL(mf_cuda_cusparse(ctx, &h));
  MF_CUSPARSE_CALL(ctx, cusparseCreateCsr(&st->mat, n, n, nnz, st->rowptr32, (void *)st->colidx, mf_csr(A)->vals,
                                          CUSPARSE_INDEX_32I, CUSPARSE_INDEX_32I, CUSPARSE_INDEX_BASE_ZERO, CUDA_R_64F));
  /* the vectors' arrays are set at each apply; the values stand in until then (nnz >= n: every row
   * holds its diagonal) */
  MF_CUSPARSE_CALL(ctx, cusparseCreateDnVec(&st->vx, n, mf_csr(A)->vals, CUDA_R_64F));
  MF_CUSPARSE_CALL(ctx, cusparseCreateDnVec(&st->vy, n, mf_csr(A)->vals, CUDA_R_64F));
  const double one = 1.0, zero = 0.0;
  MF_CUSPARSE_CALL(ctx, cusparseSpMV_bufferSize(h, CUSPARSE_OPERATION_NON_TRANSPOSE, &one, st->mat, st->vx, &zero,
                                                st->vy, CUDA_R_64F, spmv_alg(st->kernel), &st->buffer_bytes));
  snprintf(what, sizeof what, "the sparse product's work buffer (cuSPARSE, %lld nonzeros)", (long long)nnz);
  MF_CALL(mf_cuda_require(ctx, st->buffer_bytes, what));
  MF_CALL(mf_cuda_malloc(ctx, &st->buffer, st->buffer_bytes, what));
  return 0;
}
