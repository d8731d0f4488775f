// simplex_transfer.cu -- multigrid's transfers between simplex spaces on the GPU: the sparse matrices P
// and P^T that lib/simplex/transfer_simplex.c builds on the host, copied once and applied per component
// with the spaces' Dirichlet marks (mf_simplex_backend.h: sparse_create, sparse_apply, sparse_free). The
// CPU twin is transfer_simplex.c's sx_prolongate / sx_restrict: the same sums in the same order.
#include "mf_cuda_common.cuh"
#include "mf_simplex_cuda.h"

struct mf_simplex_cuda_sparse_s {
  mf_context ctx;
  int nrows;
  long long nnz;
  long long *rp; // device
  int *cols;     // device
  double *vals;  // device
};

namespace {

// y[i nc + k] = (Dirichlet out ? 0 : sum_e v_e x[c_e nc + k] over the entries not Dirichlet in): one thread
// per (row, component)
// per (row, component); T: the vectors' type (double, or float for the float V-cycle: the sum in double)
template <class T>
__global__ void sparse_apply_kernel(int nrows, int nc, const long long *__restrict__ rp, const int *__restrict__ cols,
                                    const double *__restrict__ v, const unsigned char *__restrict__ bin,
                                    const unsigned char *__restrict__ bout, const T *__restrict__ x, T *__restrict__ y)
{
  const long long t = (long long)blockIdx.x * blockDim.x + threadIdx.x;
  if (t >= (long long)nrows * nc) return;
  const int i = (int)(t / nc), k = (int)(t - (long long)i * nc);
  double s = 0.0;
  for (long long e = rp[i]; e < rp[i + 1]; e++) {
    const size_t j = (size_t)cols[e] * nc + k;
    if (!bin[j]) s += v[e] * (double)x[j];
  }
  y[t] = bout[t] ? (T)0 : (T)s;
}

template <class T>
int sparse_apply(mf_simplex_cuda_sparse A, mf_space in, mf_space out, const T *x, T *y)
{
  const int nc = out->ncomp;
  const long long n = (long long)A->nrows * nc;
  if (n == 0) return 0;
  const unsigned char *bin = ((const mf_cuda_space *)in->dev)->bc, *bout = ((const mf_cuda_space *)out->dev)->bc;
  const int threads = 256;
  sparse_apply_kernel<T><<<(unsigned)((n + threads - 1) / threads), threads>>>(A->nrows, nc, A->rp, A->cols, A->vals,
                                                                              bin, bout, x, y);
  MF_CUDA_LAUNCH_CHECK(A->ctx, "the multigrid transfer");
  return 0;
}

} // namespace

extern "C" int mf_simplex_cuda_sparse_create(mf_context ctx, int nrows, const int64_t *rowptr, const int *cols,
                                             const double *vals, mf_simplex_cuda_sparse *out)
{
  *out = NULL;
  const long long nnz = (long long)rowptr[nrows];
  MF_CALL(mf_cuda_require(ctx, sizeof(long long) * ((size_t)nrows + 1) + (sizeof(int) + sizeof(double)) * (size_t)nnz,
                          "a multigrid transfer"));
  mf_simplex_cuda_sparse A = (mf_simplex_cuda_sparse)calloc(1, sizeof *A);
  MF_CHECK(A, ctx, MF_ERR_MEMORY, "out of host memory (%zu bytes)", sizeof *A);
  A->ctx = ctx, A->nrows = nrows, A->nnz = nnz;
  int ierr = mf_cuda_upload(ctx, (void **)&A->rp, rowptr, sizeof(long long) * ((size_t)nrows + 1), "a multigrid transfer");
  if (!ierr) ierr = mf_cuda_upload(ctx, (void **)&A->cols, cols, sizeof(int) * (size_t)nnz, "a multigrid transfer");
  if (!ierr) ierr = mf_cuda_upload(ctx, (void **)&A->vals, vals, sizeof(double) * (size_t)nnz, "a multigrid transfer");
  if (ierr) {
    mf_simplex_cuda_sparse_free(&A);
    return ierr;
  }
  *out = A;
  return 0;
}

extern "C" int mf_simplex_cuda_sparse_apply(mf_simplex_cuda_sparse A, mf_space in, mf_space out, const double *x,
                                            double *y)
{
  return sparse_apply<double>(A, in, out, x, y);
}

extern "C" int mf_simplex_cuda_sparse_apply_single(mf_simplex_cuda_sparse A, mf_space in, mf_space out, const float *x,
                                                   float *y)
{
  return sparse_apply<float>(A, in, out, x, y);
}

extern "C" void mf_simplex_cuda_sparse_free(mf_simplex_cuda_sparse *A)
{
  if (!A || !*A) return;
  mf_cuda_free((*A)->ctx, (*A)->rp);
  mf_cuda_free((*A)->ctx, (*A)->cols);
  mf_cuda_free((*A)->ctx, (*A)->vals);
  free(*A);
  *A = NULL;
}
