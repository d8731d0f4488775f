// transfer.cu -- the multigrid transfers on the device (the CPU twin: lib/mg/transfer.c). One block
// holds a few coarse cells, one thread per fine node position of a cell (n1_fine^dim); per coarse cell
// the coarse values are gathered (Dirichlet DoFs zero), constrained, and interpolated to each of its
// fine cells with the 1D matrices of each direction; each fine DoF is written by its owner cell only
// (a bit per fine cell and node, made on the host from the fine space's owners). Restriction runs the
// same steps transposed and adds into the coarse vector with atomics. Templated on the vectors' type
// T (double, or float for a V-cycle in single precision; then the matrices are rounded to float too).
// Spaces of several components (entries node * ncomp + comp): the steps run component by component,
// as in the CPU twin.
#include "cell_generic.cuh"
#include "mg/mf_mg.h"

namespace {

struct transfer_args {
  mfg::cell_shape c; // dim, n1 = coarse n1, nq = fine n1
  int ncells, cells_per_block, npc_fine, words, ncomp;
  const int *first;
  const int8_t *child;
  const int *cnodes, *fnodes;
  const int16_t *mask; // coarse masks (NULL: none)
  const double *P;     // coarse hanging-node matrices
  const unsigned char *cbc;
  const double *M;     // 2 x (n1f x n1c): p: M[0]; h: P_0, P_1
  int kind;
  const uint32_t *own; // fine cell x words: bit k = the cell owns its node k
  const void *in; // vectors of the kernel's type
  void *out;
};

template <class T>
inline size_t transfer_shared(const mfg::cell_shape &c, int cells_per_block)
{
  return sizeof(T) * (2 * (size_t)c.nq * c.n1 + (size_t)c.nq * c.nq /* identity */ + 2 * c.n1 * c.n1 +
                           (size_t)cells_per_block * 3 * c.nqp);
}

// the three direction matrices of fine cell j (identity where the fine cell is the coarse one)
template <class T>
__device__ inline void dir_matrices(const transfer_args &a, const T *sM, const T *sI, int j, const T **Md)
{
  const int c = a.child[j];
  for (int d = 0; d < 3; d++)
    Md[d] = a.kind == 0 ? sM : c < 0 ? sI : sM + ((c >> d) & 1) * a.c.nq * a.c.n1;
}

template <class T>
__global__ void __launch_bounds__(1024) k_prolongate(const transfer_args a)
{
  extern __shared__ __align__(16) unsigned char sm_raw[];
  T *sm = reinterpret_cast<T *>(sm_raw);
  const T *in = static_cast<const T *>(a.in);
  T *out = static_cast<T *>(a.out);
  const mfg::cell_shape c = a.c;
  T *sM = sm, *sI = sM + 2 * c.nq * c.n1, *sP = sI + c.nq * c.nq;
  const int lc = threadIdx.x / c.nqp, q = threadIdx.x - lc * c.nqp;
  T *sU = sP + 2 * c.n1 * c.n1 + (size_t)lc * 3 * c.nqp, *s0 = sU + c.nqp, *s1 = s0 + c.nqp;
  const int pos = blockIdx.x * a.cells_per_block + lc;
  const bool active = pos < a.ncells;
  const int K = active ? pos : 0;
  mfg::stage(sM, a.M, 2 * c.nq * c.n1);
  for (int t = threadIdx.x; t < c.nq * c.nq; t += blockDim.x) sI[t] = (t / c.nq) == (t % c.nq) ? (T)1 : (T)0;
  if (a.mask) mfg::stage(sP, a.P, 2 * c.n1 * c.n1);
  const mfg::point t = mfg::make_point(c, q);
  const int mk = a.mask ? a.mask[K] : 0;
  const int cnode = t.isdof ? a.cnodes[(size_t)K * (c.dim == 2 ? c.n1 * c.n1 : c.n1 * c.n1 * c.n1) + t.pos] : 0;
  const int nc = a.ncomp;
  for (int comp = 0; comp < nc; comp++) {
  __syncthreads(); // the previous component's reads of sU done
  T u = 0;
  if (t.isdof) {
    const size_t e = (size_t)cnode * nc + comp;
    u = a.cbc[e] ? (T)0 : in[e];
  }
  sU[q] = u;
  const bool any_mask = __syncthreads_or(mk != 0);
  if (any_mask) mfg::hanging(c, sU, mk, sP, t, false);
  // one fine cell per coarse cell (p-transfer) or up to 2^dim (h): the same rounds for the whole launch
  const int nmax = a.kind == 0 ? 1 : 1 << c.dim;
  for (int r = 0; r < nmax; r++) {
    const int j = active ? a.first[K] + r : -1;
    const bool has = active && j < a.first[K + 1];
    __syncthreads();
    s0[q] = sU[q];
    __syncthreads();
    const T *Md[3];
    dir_matrices(a, sM, sI, has ? j : a.first[K], Md);
    const T *v = mfg::interpolate_dirs(c, Md[0], Md[1], Md[2], s0, s1, t);
    if (has) { // every thread is a fine node (nq = n1 of the fine cell)
      const int fpos = t.i + c.nq * (t.j + c.nq * t.k);
      if (a.own[(size_t)j * a.words + (fpos >> 5)] >> (fpos & 31) & 1)
        out[(size_t)a.fnodes[(size_t)j * a.npc_fine + fpos] * nc + comp] = v[q];
    }
  }
  }
}

template <class T>
__global__ void __launch_bounds__(1024) k_restrict(const transfer_args a)
{
  extern __shared__ __align__(16) unsigned char sm_raw[];
  T *sm = reinterpret_cast<T *>(sm_raw);
  const T *in = static_cast<const T *>(a.in);
  T *out = static_cast<T *>(a.out);
  const mfg::cell_shape c = a.c;
  T *sM = sm, *sI = sM + 2 * c.nq * c.n1, *sP = sI + c.nq * c.nq;
  const int lc = threadIdx.x / c.nqp, q = threadIdx.x - lc * c.nqp;
  T *sA = sP + 2 * c.n1 * c.n1 + (size_t)lc * 3 * c.nqp, *s0 = sA + c.nqp, *s1 = s0 + c.nqp;
  const int pos = blockIdx.x * a.cells_per_block + lc;
  const bool active = pos < a.ncells;
  const int K = active ? pos : 0;
  mfg::stage(sM, a.M, 2 * c.nq * c.n1);
  for (int t = threadIdx.x; t < c.nq * c.nq; t += blockDim.x) sI[t] = (t / c.nq) == (t % c.nq) ? (T)1 : (T)0;
  if (a.mask) mfg::stage(sP, a.P, 2 * c.n1 * c.n1);
  const mfg::point t = mfg::make_point(c, q);
  const int mk = a.mask ? a.mask[K] : 0;
  const int nc = a.ncomp;
  for (int comp = 0; comp < nc; comp++) {
  T acc = 0;
  const int nmax = a.kind == 0 ? 1 : 1 << c.dim;
  for (int r = 0; r < nmax; r++) {
    const int j = active ? a.first[K] + r : -1;
    const bool has = active && j < a.first[K + 1];
    const int fpos = t.i + c.nq * (t.j + c.nq * t.k);
    T w = 0;
    if (has && (a.own[(size_t)j * a.words + (fpos >> 5)] >> (fpos & 31) & 1))
      w = in[(size_t)a.fnodes[(size_t)j * a.npc_fine + fpos] * nc + comp];
    __syncthreads();
    s0[q] = w;
    __syncthreads();
    const T *Md[3];
    dir_matrices(a, sM, sI, has ? j : a.first[K], Md);
    const T v = mfg::integrate_dirs(c, Md[0], Md[1], Md[2], s0, s1, t);
    if (has) acc += v;
  }
  const bool any_mask = __syncthreads_or(mk != 0);
  if (any_mask) {
    sA[q] = t.isdof ? acc : (T)0;
    __syncthreads();
    mfg::hanging(c, sA, mk, sP, t, true);
    acc = sA[q];
  }
  if (active && t.isdof) {
    const int node = a.cnodes[(size_t)K * (c.dim == 2 ? c.n1 * c.n1 : c.n1 * c.n1 * c.n1) + t.pos];
    const size_t e = (size_t)node * nc + comp;
    if (!a.cbc[e]) atomicAdd(&out[e], acc);
  }
  }
}

struct cuda_transfer {
  int *first;
  int8_t *child;
  double *M;
  uint32_t *own;
  int words;
};

transfer_args base_args(mf_transfer tr)
{
  const cuda_transfer *d = (const cuda_transfer *)tr->dev;
  const mf_cuda_space *dc = (const mf_cuda_space *)tr->coarse->dev, *df = (const mf_cuda_space *)tr->fine->dev;
  transfer_args a;
  a.c = mfg::make_shape(tr->coarse->dim, tr->coarse->n1, tr->fine->n1);
  a.ncells = tr->coarse->ncells;
  a.cells_per_block = a.c.nqp >= 256 ? 1 : 256 / a.c.nqp;
  a.npc_fine = tr->fine->npc;
  a.words = d->words;
  a.ncomp = tr->fine->ncomp;
  a.first = d->first;
  a.child = d->child;
  a.cnodes = dc->cell_nodes;
  a.fnodes = df->cell_nodes;
  a.mask = dc->mask;
  a.P = dc->P;
  a.cbc = dc->bc;
  a.M = d->M;
  a.kind = tr->kind;
  a.own = d->own;
  return a;
}

template <class T, class Kernel>
int launch(mf_context ctx, Kernel k, const transfer_args &a, const char *what)
{
  if (a.ncells == 0) return 0;
  const size_t shmem = transfer_shared<T>(a.c, a.cells_per_block);
  if (shmem > 48 * 1024) MF_CUDA_CALL(ctx, cudaFuncSetAttribute(k, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)shmem));
  const int blocks = (a.ncells + a.cells_per_block - 1) / a.cells_per_block;
  k<<<blocks, a.cells_per_block * a.c.nqp, shmem>>>(a);
  cudaError_t e = mf_cuda_launch_status();
  MF_CHECK(e == cudaSuccess, ctx, MF_ERR_CUDA, "%s kernel: %s", what, cudaGetErrorString(e));
  return 0;
}

} // namespace

extern "C" int mf_cuda_transfer_setup(mf_transfer tr)
{
  mf_context ctx = tr->fine->ctx;
  const mf_space f = tr->fine, c = tr->coarse;
  cuda_transfer *d = (cuda_transfer *)calloc(1, sizeof *d);
  MF_CHECK(d, ctx, MF_ERR_MEMORY, "out of host memory (%zu bytes)", sizeof *d);
  tr->dev = d;
  d->words = (f->npc + 31) / 32;
  const size_t nw = (size_t)f->ncells * d->words;
  MF_CALL(mf_cuda_require(ctx, sizeof(int) * ((size_t)c->ncells + 1) + (size_t)f->ncells + sizeof(uint32_t) * nw +
                                   sizeof(double) * 2 * MF_MAX_N1 * MF_MAX_N1,
                          "the multigrid transfer"));
  uint32_t *own = NULL;
  MF_CALL(mf_transfer_own_bits(tr, d->words, &own));
  int ierr = mf_cuda_upload(ctx, (void **)&d->own, own, sizeof(uint32_t) * nw, "the multigrid transfer");
  free(own);
  if (!ierr) ierr = mf_cuda_upload(ctx, (void **)&d->first, tr->first, sizeof(int) * ((size_t)c->ncells + 1), "the multigrid transfer");
  if (!ierr) ierr = mf_cuda_upload(ctx, (void **)&d->child, tr->child, (size_t)f->ncells, "the multigrid transfer");
  if (!ierr) {
    double M[2 * MF_MAX_N1 * MF_MAX_N1]; /* the two matrices packed: n1f x n1c each */
    const size_t m = (size_t)f->n1 * c->n1;
    memcpy(M, tr->M[0], sizeof(double) * m);
    memcpy(M + m, tr->M[1], sizeof(double) * m);
    ierr = mf_cuda_upload(ctx, (void **)&d->M, M, sizeof(double) * 2 * m, "the multigrid transfer");
  }
  return ierr;
}

extern "C" void mf_cuda_transfer_free(mf_transfer tr)
{
  cuda_transfer *d = (cuda_transfer *)tr->dev;
  if (!d) return;
  mf_context ctx = tr->fine->ctx;
  mf_cuda_free(ctx, d->first);
  mf_cuda_free(ctx, d->child);
  mf_cuda_free(ctx, d->M);
  mf_cuda_free(ctx, d->own);
  free(d);
  tr->dev = NULL;
}

extern "C" int mf_cuda_transfer_prolongate(mf_transfer tr, mf_vector coarse, mf_vector fine)
{
  MF_CALL(fine->ops.set_value(fine, 0.0));
  transfer_args a = base_args(tr);
  if (fine->prec == MF_PRECISION_FLOAT) {
    a.in = coarse->sdata;
    a.out = fine->sdata;
    return launch<float>(tr->fine->ctx, k_prolongate<float>, a, "prolongation");
  }
  a.in = coarse->data;
  a.out = fine->data;
  return launch<double>(tr->fine->ctx, k_prolongate<double>, a, "prolongation");
}

extern "C" int mf_cuda_transfer_restrict(mf_transfer tr, mf_vector fine, mf_vector coarse)
{
  MF_CALL(coarse->ops.set_value(coarse, 0.0));
  transfer_args a = base_args(tr);
  if (fine->prec == MF_PRECISION_FLOAT) {
    a.in = fine->sdata;
    a.out = coarse->sdata;
    return launch<float>(tr->fine->ctx, k_restrict<float>, a, "restriction");
  }
  a.in = fine->data;
  a.out = coarse->data;
  return launch<double>(tr->fine->ctx, k_restrict<double>, a, "restriction");
}
