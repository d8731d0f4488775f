// simplex_transfer.cu -- multigrid's transfers between simplex spaces on the GPU: the sparse matrices P
// and P^T, made here from a plan (transfer_build: the cell nodes and the weights' table or geometry copied,
// the host's build of lib/simplex/transfer_simplex.c in kernels) or made on the host and copied
// (sparse_create), applied per component with the spaces' Dirichlet marks (mf_simplex_backend.h). The
// CPU twins are transfer_simplex.c's build and its sx_prolongate / sx_restrict: the same entries in the
// same order, the same sums in the same order.
#include <cub/device/device_radix_sort.cuh>
#include <cub/device/device_scan.cuh>

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
// per (row, component); bin, bout NULL: no Dirichlet masks (a state's injection); T: the vectors' type (double, or float for the float V-cycle: the sum in double)
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
    if (!bin || !bin[j]) s += v[e] * (double)x[j];
  }
  y[t] = bout && bout[t] ? (T)0 : (T)s;
}

template <class T>
int sparse_apply(mf_simplex_cuda_sparse A, mf_space in, mf_space out, const T *x, T *y)
{
  const int nc = out->ncomp;
  const long long n = (long long)A->nrows * nc;
  if (n == 0) return 0;
  const unsigned char *bin = in ? ((const mf_cuda_space *)in->dev)->bc : nullptr, // in NULL: no masks at all
                      *bout = in ? ((const mf_cuda_space *)out->dev)->bc : nullptr;
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

// ---------------------------------------------------------------- P and P^T made on the device
namespace {

__device__ __forceinline__ long long tid() { return (long long)blockIdx.x * blockDim.x + threadIdx.x; }
unsigned blocks(long long n, int threads) { return (unsigned)((n + threads - 1) / threads); }

// each fine node's first fine cell e, kept as ncells - e (an atomic maximum: 0 for a node in no cell)
__global__ void k_first(int ncf, int Nf, const int *__restrict__ nodes, int *__restrict__ done)
{
  const long long t = tid();
  if (t >= (long long)ncf * Nf) return;
  atomicMax(&done[nodes[t]], ncf - (int)(t / Nf));
}

// the node's place in that cell and its coarse cell (the cell itself, or its parent e / nch)
__global__ void k_owner(int ncf, int Nf, int kind, int nch, const int *__restrict__ nodes, const int *__restrict__ done,
                        int *__restrict__ fpos, int *__restrict__ owner)
{
  const long long t = tid();
  if (t >= (long long)ncf * Nf) return;
  const int e = (int)(t / Nf), n = nodes[t];
  if (done[n] == ncf - e) fpos[n] = (int)(t - (long long)e * Nf), owner[n] = kind ? e / nch : e;
}

struct plan_dev {
  int kind, dim, Nf, Nc, ncf;
  const double *table;                 // kind 0
  const int *cells_f, *cells_c;        // kind 1
  const double *coords_f, *coords_c, *xi;
};

// row n's weights w[Nc]: the table's row (kind 0), or the P1 basis of the coarse cell at the node's point
// (kind 1: the host's mf_simplex_affine and the barycentric coordinates)
__device__ void weights(const plan_dev &p, int n, const int *done, const int *fpos, const int *owner, double *w)
{
  const int i = fpos[n];
  if (p.kind == 0) {
    for (int j = 0; j < p.Nc; j++) w[j] = p.table[i * p.Nc + j];
    return;
  }
  const int dim = p.dim, e = p.ncf - done[n], K = owner[n];
  double Xf[4][3], Xc[4][3], J[3][3], Ji[3][3], x[3];
  for (int a = 0; a <= dim; a++)
    for (int k = 0; k < dim; k++) {
      Xf[a][k] = p.coords_f[3 * (size_t)p.cells_f[(size_t)e * (dim + 1) + a] + k];
      Xc[a][k] = p.coords_c[3 * (size_t)p.cells_c[(size_t)K * (dim + 1) + a] + k];
    }
  for (int k = 0; k < dim; k++) {
    x[k] = Xf[0][k];
    for (int l = 0; l < dim; l++) x[k] += (Xf[l + 1][k] - Xf[0][k]) * p.xi[i * dim + l];
    for (int l = 0; l < dim; l++) J[k][l] = Xc[l + 1][k] - Xc[0][k];
  }
  if (dim == 2) {
    const double det = J[0][0] * J[1][1] - J[0][1] * J[1][0];
    Ji[0][0] = J[1][1] / det, Ji[0][1] = -J[0][1] / det;
    Ji[1][0] = -J[1][0] / det, Ji[1][1] = J[0][0] / det;
  } else {
    const double det = J[0][0] * (J[1][1] * J[2][2] - J[1][2] * J[2][1]) -
                       J[0][1] * (J[1][0] * J[2][2] - J[1][2] * J[2][0]) + J[0][2] * (J[1][0] * J[2][1] - J[1][1] * J[2][0]);
    for (int r = 0; r < 3; r++)
      for (int c = 0; c < 3; c++) {
        const int r1 = (c + 1) % 3, r2 = (c + 2) % 3, c1 = (r + 1) % 3, c2 = (r + 2) % 3;
        Ji[r][c] = (J[r1][c1] * J[r2][c2] - J[r1][c2] * J[r2][c1]) / det;
      }
  }
  double s = 0.0;
  for (int l = 0; l < dim; l++) {
    double xi = 0.0;
    for (int k = 0; k < dim; k++) xi += Ji[l][k] * (x[k] - Xc[0][k]);
    w[l + 1] = xi;
    s += xi;
  }
  w[0] = 1.0 - s;
}

#define MF_SX_TR_NC_MAX 35 // the coarse nodes of a cell: P4 in 3D

// row sizes (the weights above 1e-14); a node in no cell: the lowest such into *bad
__global__ void k_count(int nf, plan_dev p, const int *__restrict__ done, const int *__restrict__ fpos,
                        const int *__restrict__ owner, long long *__restrict__ cnt, int *__restrict__ bad)
{
  const long long n = tid();
  if (n >= nf) return;
  if (!done[n]) {
    atomicMin(bad, (int)n);
    cnt[n] = 0;
    return;
  }
  double w[MF_SX_TR_NC_MAX];
  weights(p, (int)n, done, fpos, owner, w);
  long long k = 0;
  for (int j = 0; j < p.Nc; j++) k += fabs(w[j]) > 1e-14;
  cnt[n] = k;
}

// P's entries, each row in the coarse cell's node order; the owned rows' column counts for P^T
__global__ void k_fill(int nf, int nfo, plan_dev p, const int *__restrict__ done, const int *__restrict__ fpos,
                       const int *__restrict__ owner, const int *__restrict__ nodes_c, const long long *__restrict__ rp,
                       int *__restrict__ cp, double *__restrict__ vp, int *__restrict__ row, long long *__restrict__ tcnt)
{
  const long long n = tid();
  if (n >= nf) return;
  double w[MF_SX_TR_NC_MAX];
  weights(p, (int)n, done, fpos, owner, w);
  const int *cc = nodes_c + (size_t)owner[n] * p.Nc;
  long long e = rp[n];
  const long long end = rp[n + 1]; // k_count's size (the same weights: the bound only guards the row)
  for (int j = 0; j < p.Nc && e < end; j++)
    if (fabs(w[j]) > 1e-14) {
      cp[e] = cc[j], vp[e] = w[j];
      if (n < nfo) {
        row[e] = (int)n;
        atomicAdd((unsigned long long *)&tcnt[cc[j]], 1ULL);
      }
      e++;
    }
}

__global__ void k_iota(int n, int *__restrict__ v)
{
  const long long t = tid();
  if (t < n) v[t] = (int)t;
}

// P^T's entries from the owned entries sorted by column (stable: each column's in ascending fine row)
__global__ void k_transpose(int n, const int *__restrict__ order, const int *__restrict__ row, const double *__restrict__ vp,
                            int *__restrict__ ct, double *__restrict__ vt)
{
  const long long q = tid();
  if (q >= n) return;
  const int e = order[q];
  ct[q] = row[e], vt[q] = vp[e];
}

struct build_bufs {
  int *nf_nodes = nullptr, *nc_nodes = nullptr, *done = nullptr, *fpos = nullptr, *owner = nullptr, *bad = nullptr;
  int *cells_f = nullptr, *cells_c = nullptr, *row = nullptr, *keys = nullptr, *vals = nullptr, *keys2 = nullptr,
      *vals2 = nullptr;
  double *table = nullptr, *coords_f = nullptr, *coords_c = nullptr, *xi = nullptr;
  long long *cnt = nullptr, *tcnt = nullptr;
  void *tmp = nullptr;
};

void bufs_free(mf_context ctx, build_bufs &b)
{
  void *all[] = {b.nf_nodes, b.nc_nodes, b.done, b.fpos, b.owner, b.bad, b.cells_f, b.cells_c, b.row, b.keys, b.vals,
                 b.keys2, b.vals2, b.table, b.coords_f, b.coords_c, b.xi, b.cnt, b.tcnt, b.tmp};
  for (void *p : all) mf_cuda_free(ctx, p);
}

// an exclusive sum of n + 1 counts (the last one 0) into out, in place allowed
int scan(mf_context ctx, long long *in, long long *out, int n)
{
  size_t bytes = 0;
  MF_CUDA_CALL(ctx, cub::DeviceScan::ExclusiveSum(nullptr, bytes, in, out, n + 1));
  void *tmp = nullptr;
  MF_CALL(mf_cuda_malloc(ctx, &tmp, bytes, "a multigrid transfer's scan"));
  const cudaError_t e = cub::DeviceScan::ExclusiveSum(tmp, bytes, in, out, n + 1);
  mf_cuda_free(ctx, tmp);
  MF_CUDA_CALL(ctx, e);
  return 0;
}

int build(mf_context ctx, const mf_simplex_transfer_plan *pl, build_bufs &b, mf_simplex_cuda_sparse P,
          mf_simplex_cuda_sparse PT)
{
  const int T = 256, nf = pl->nf, ncn = pl->ncn, ncf = pl->ncells_f, Nf = pl->Nf, Nc = pl->Nc, dim = pl->dim;
  const char *what = "a multigrid transfer";
  // the spaces' cell nodes, the meshes' cells and vertices: the copies their operators hold (mf_cuda_share)
  MF_CALL(mf_cuda_share(ctx, (void **)&b.nf_nodes, pl->nodes_f, sizeof(int) * (size_t)ncf * Nf, what));
  MF_CALL(mf_cuda_share(ctx, (void **)&b.nc_nodes, pl->nodes_c, sizeof(int) * (size_t)pl->ncells_c * Nc, what));
  plan_dev p = {pl->kind, dim, Nf, Nc, ncf, nullptr, nullptr, nullptr, nullptr, nullptr, nullptr};
  if (pl->kind == 0) {
    MF_CALL(mf_cuda_upload(ctx, (void **)&b.table, pl->table, sizeof(double) * (size_t)Nf * Nc, what));
    p.table = b.table;
  } else {
    MF_CALL(mf_cuda_share(ctx, (void **)&b.cells_f, pl->cells_f, sizeof(int) * (size_t)ncf * (dim + 1), what));
    MF_CALL(mf_cuda_share(ctx, (void **)&b.cells_c, pl->cells_c, sizeof(int) * (size_t)pl->ncells_c * (dim + 1), what));
    MF_CALL(mf_cuda_share(ctx, (void **)&b.coords_f, pl->coords_f, sizeof(double) * 3 * (size_t)pl->nv_f, what));
    MF_CALL(mf_cuda_share(ctx, (void **)&b.coords_c, pl->coords_c, sizeof(double) * 3 * (size_t)pl->nv_c, what));
    MF_CALL(mf_cuda_upload(ctx, (void **)&b.xi, pl->xi_f, sizeof(double) * (size_t)Nf * dim, what));
    p.cells_f = b.cells_f, p.cells_c = b.cells_c, p.coords_f = b.coords_f, p.coords_c = b.coords_c, p.xi = b.xi;
  }
  MF_CALL(mf_cuda_malloc(ctx, (void **)&b.done, sizeof(int) * ((size_t)nf + 1), what));
  MF_CALL(mf_cuda_malloc(ctx, (void **)&b.fpos, sizeof(int) * ((size_t)nf + 1), what));
  MF_CALL(mf_cuda_malloc(ctx, (void **)&b.owner, sizeof(int) * ((size_t)nf + 1), what));
  MF_CALL(mf_cuda_malloc(ctx, (void **)&b.bad, sizeof(int), what));
  MF_CALL(mf_cuda_malloc(ctx, (void **)&b.cnt, sizeof(long long) * ((size_t)nf + 1), what));
  MF_CUDA_CALL(ctx, cudaMemset(b.done, 0, sizeof(int) * ((size_t)nf + 1)));
  MF_CUDA_CALL(ctx, cudaMemset(b.cnt, 0, sizeof(long long) * ((size_t)nf + 1)));
  MF_CUDA_CALL(ctx, cudaMemset(b.bad, 0x7f, sizeof(int)));
  const long long slots = (long long)ncf * Nf;
  if (slots) {
    k_first<<<blocks(slots, T), T>>>(ncf, Nf, b.nf_nodes, b.done);
    k_owner<<<blocks(slots, T), T>>>(ncf, Nf, pl->kind, pl->nch, b.nf_nodes, b.done, b.fpos, b.owner);
  }
  if (nf) k_count<<<blocks(nf, T), T>>>(nf, p, b.done, b.fpos, b.owner, b.cnt, b.bad);
  MF_CUDA_LAUNCH_CHECK(ctx, "a multigrid transfer's rows");
  mf_cuda_drop(ctx, b.nf_nodes); // what is done with is freed at once: the build's peak stays near what it keeps
  int bad = 0;
  MF_CUDA_CALL(ctx, cudaMemcpy(&bad, b.bad, sizeof bad, cudaMemcpyDeviceToHost));
  MF_CHECK(bad == 0x7f7f7f7f, ctx, MF_ERR_INCOMPATIBLE, "multigrid transfer: fine node %d is in no cell", bad);
  MF_CALL(mf_cuda_malloc(ctx, (void **)&P->rp, sizeof(long long) * ((size_t)nf + 1), what));
  MF_CALL(scan(ctx, b.cnt, P->rp, nf));
  long long nnz = 0, nnzo = 0;
  MF_CUDA_CALL(ctx, cudaMemcpy(&nnz, P->rp + nf, sizeof nnz, cudaMemcpyDeviceToHost));
  MF_CUDA_CALL(ctx, cudaMemcpy(&nnzo, P->rp + pl->nfo, sizeof nnzo, cudaMemcpyDeviceToHost));
  MF_CHECK(nnz < INT32_MAX, ctx, MF_ERR_UNSUPPORTED, "multigrid transfer made on the device: %lld entries (below 2^31)",
           nnz);
  P->nrows = nf, P->nnz = nnz, PT->nrows = ncn, PT->nnz = nnzo;
  MF_CALL(mf_cuda_malloc(ctx, (void **)&P->cols, sizeof(int) * ((size_t)nnz + 1), what));
  MF_CALL(mf_cuda_malloc(ctx, (void **)&P->vals, sizeof(double) * ((size_t)nnz + 1), what));
  MF_CALL(mf_cuda_malloc(ctx, (void **)&b.row, sizeof(int) * ((size_t)nnzo + 1), what));
  MF_CALL(mf_cuda_malloc(ctx, (void **)&b.tcnt, sizeof(long long) * ((size_t)ncn + 1), what));
  MF_CUDA_CALL(ctx, cudaMemset(b.tcnt, 0, sizeof(long long) * ((size_t)ncn + 1)));
  if (nf)
    k_fill<<<blocks(nf, T), T>>>(nf, pl->nfo, p, b.done, b.fpos, b.owner, b.nc_nodes, P->rp, P->cols, P->vals, b.row,
                                 b.tcnt);
  MF_CUDA_LAUNCH_CHECK(ctx, "a multigrid transfer's entries");
  mf_cuda_drop(ctx, b.nc_nodes), mf_cuda_drop(ctx, b.done), mf_cuda_drop(ctx, b.fpos), mf_cuda_drop(ctx, b.owner), mf_cuda_drop(ctx, b.cnt);
  mf_cuda_drop(ctx, b.cells_f), mf_cuda_drop(ctx, b.cells_c), mf_cuda_drop(ctx, b.coords_f), mf_cuda_drop(ctx, b.coords_c);
  // P^T: the owned entries (the first nnzo) stably sorted by column, their rows and values gathered
  MF_CALL(mf_cuda_malloc(ctx, (void **)&PT->rp, sizeof(long long) * ((size_t)ncn + 1), what));
  MF_CALL(scan(ctx, b.tcnt, PT->rp, ncn));
  MF_CALL(mf_cuda_malloc(ctx, (void **)&PT->cols, sizeof(int) * ((size_t)nnzo + 1), what));
  MF_CALL(mf_cuda_malloc(ctx, (void **)&PT->vals, sizeof(double) * ((size_t)nnzo + 1), what));
  if (nnzo == 0) {
    MF_CUDA_CALL(ctx, cudaDeviceSynchronize());
    return 0;
  }
  MF_CALL(mf_cuda_malloc(ctx, (void **)&b.vals, sizeof(int) * (size_t)nnzo, what));
  MF_CALL(mf_cuda_malloc(ctx, (void **)&b.keys2, sizeof(int) * (size_t)nnzo, what));
  MF_CALL(mf_cuda_malloc(ctx, (void **)&b.vals2, sizeof(int) * (size_t)nnzo, what));
  k_iota<<<blocks(nnzo, T), T>>>((int)nnzo, b.vals);
  MF_CUDA_LAUNCH_CHECK(ctx, "a multigrid transfer's order");
  int bits = 1;
  while (bits < 31 && (1LL << bits) < ncn) bits++;
  size_t bytes = 0;
  MF_CUDA_CALL(ctx, cub::DeviceRadixSort::SortPairs(nullptr, bytes, P->cols, b.keys2, b.vals, b.vals2, (int)nnzo, 0, bits));
  MF_CALL(mf_cuda_malloc(ctx, &b.tmp, bytes, "a multigrid transfer's sort"));
  MF_CUDA_CALL(ctx, cub::DeviceRadixSort::SortPairs(b.tmp, bytes, P->cols, b.keys2, b.vals, b.vals2, (int)nnzo, 0, bits));
  k_transpose<<<blocks(nnzo, T), T>>>((int)nnzo, b.vals2, b.row, P->vals, PT->cols, PT->vals);
  MF_CUDA_LAUNCH_CHECK(ctx, "a multigrid transfer's transpose");
  MF_CUDA_CALL(ctx, cudaDeviceSynchronize());
  return 0;
}

} // namespace

extern "C" int mf_simplex_cuda_transfer_build(mf_context ctx, const mf_simplex_transfer_plan *plan,
                                              mf_simplex_cuda_sparse *P, mf_simplex_cuda_sparse *PT)
{
  *P = *PT = NULL;
  MF_CHECK(plan, ctx, MF_ERR_NULL, "transfer plan is NULL");
  MF_CHECK(plan->kind == 0 || plan->Nc == plan->dim + 1, ctx, MF_ERR_UNSUPPORTED,
           "multigrid transfer made on the device: a refined mesh's coarse space of degree 1 only (%d nodes per cell)",
           plan->Nc);
  MF_CHECK(plan->Nc <= MF_SX_TR_NC_MAX, ctx, MF_ERR_UNSUPPORTED,
           "multigrid transfer made on the device: %d coarse nodes per cell (at most %d)", plan->Nc, MF_SX_TR_NC_MAX);
  mf_simplex_cuda_sparse A = (mf_simplex_cuda_sparse)calloc(1, sizeof *A), B = (mf_simplex_cuda_sparse)calloc(1, sizeof *B);
  if (!A || !B) {
    free(A), free(B);
    return mf_error_set(ctx, MF_ERR_MEMORY, __FILE__, __LINE__, __func__, "out of host memory (%zu bytes)", sizeof *A);
  }
  A->ctx = B->ctx = ctx;
  build_bufs b;
  int ierr = build(ctx, plan, b, A, B);
  bufs_free(ctx, b);
  if (ierr) {
    mf_simplex_cuda_sparse_free(&A);
    mf_simplex_cuda_sparse_free(&B);
    return ierr;
  }
  *P = A, *PT = B;
  return 0;
}
