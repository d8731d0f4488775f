// simplex_kernels.cuh -- the action kernels of the simplex operators (lib/cuda/simplex.cu), templated
// on (DIM, P) so that the node count N and the point count NQ are compile-time; instantiated once per
// (dim, p, vector type) in generated files (simplex_inst.cu.in). The CPU twins are in lib/simplex/ops_cpu.c.
// The gradient form's kernels with the table in global or shared memory are in simplex_grad_kernels.cuh; the
// geometry, where a cell's values and sums live (one cell per thread or the shared scatter's tile) and the tile's
// phases in simplex_cell_io.cuh.
//
// Three strategies (the first two after Kulkarni and Kloeckner) and three forms of the cell action:
//   thread  one cell per thread: the cell's values in registers, the tables read by all the threads of
//           a warp at the same address (broadcast), from shared memory when staged, else through L1;
//   tiled   a block takes a tile of cells; the threads cooperate over (cell, node) pairs for the
//           gather, over (cell, point) pairs for the values and gradients at the points and the
//           pointwise operator, and over (cell, node) pairs again to integrate back and scatter;
//   shared  one cell per thread on a tile of consecutive cells per block (tile_cells): the tile's DoF
//           values and vertex coordinates gathered once into shared memory, the cells' sums added there
//           (shared atomics), each of the tile's DoFs added to y once; the constant-memory kernels' cell
//           work through the same code (the IO policies sx_gio, sx_sio);
//   quadrature  u_q, grad u_q at the points, pointwise operator, integration: any coefficient c(x_q),
//           elasticity;
//   reference   constant coefficient, scalar operators: the cell matrix is a combination of reference
//           matrices, A_e = a |det J| M + b |det J| sum_{k<=l} (J^-1 J^-T)_kl S_kl, with M = B^T W B,
//           S_kk = G_k^T W G_k, S_kl = G_k^T W G_l + G_l^T W G_k (k < l): N^2 (1 + dim(dim+1)/2)
//           multiply-adds per cell, independent of the number of points; elasticity likewise from the
//           dim^2 matrices K_lm = G_l^T W G_m (k_thread_ec);
//   gradient    constant coefficient, one cell per thread: the reference gradient of
//           u in P_p lies in P_{p-1}, so the stiffness is |det J| sum_{k,l} (J^-1 J^-T)_kl E_k^T E_l with
//           E_k = L^T D_k (n1 x N), D_k the derivatives at the n1 nodes of P_{p-1} and L L^T the P_{p-1}
//           reference mass (mf_simplex_gradient_table): 2 dim n1 N + dim^2 n1 multiply-adds, the mass
//           part the reference mass matrix (N^2) as in the reference form (k_thread_g, k_thread_gc);
//           elasticity likewise, the pointwise stress at the n1 nodes (k_thread_ge, k_thread_gec).
// Geometry: J, J^-1 and |det J| from the cell's vertices in the kernel (as mf_simplex_affine);
// nothing is stored per point but c(x_q). Scatter: atomicAdd into y (zeroed by the caller), per cell or (shared)
// per tile.
#ifndef MF_SIMPLEX_KERNELS_CUH
#define MF_SIMPLEX_KERNELS_CUH

#include <cuda_runtime.h>

#include "mf_sx_table.h"
#include "physics/mf_gallery.h"

// The vectors x, y and c(x_q) are of type MF_SX_VALUE (double, or float for the single-precision copies of
// multigrid's levels); everything else (geometry, tables, the sums) is double. Each value type is its own
// namespace (MF_SX_NS), so that the two instantiations of one (dim, p) never share a kernel's name.
#ifndef MF_SX_VALUE
#define MF_SX_VALUE double
#endif
#ifndef MF_SX_NS
#define MF_SX_NS mfsx
#endif

namespace MF_SX_NS {

typedef MF_SX_VALUE vreal;
template <class V> struct mf_sx_vec;
template <> struct mf_sx_vec<double> {
  static __device__ __forceinline__ const double *x(const mf_sx_args &a) { return a.x; }
  static __device__ __forceinline__ double *y(const mf_sx_args &a) { return a.y; }
  static __device__ __forceinline__ const double *c(const mf_sx_args &a) { return a.coefq; }
  static __device__ __forceinline__ const double *k(const mf_sx_args &a) { return a.K; }
};
template <> struct mf_sx_vec<float> {
  static __device__ __forceinline__ const float *x(const mf_sx_args &a) { return a.xf; }
  static __device__ __forceinline__ float *y(const mf_sx_args &a) { return a.yf; }
  static __device__ __forceinline__ const float *c(const mf_sx_args &a) { return a.coefqf; }
  static __device__ __forceinline__ const float *k(const mf_sx_args &a) { return a.Kf; }
};
// x[i] read (in double), v added into y[i] (rounded to the vectors' type), c(x_q) of the operator or NULL
__device__ __forceinline__ double ldx(const mf_sx_args &a, size_t i) { return (double)__ldg(mf_sx_vec<vreal>::x(a) + i); }
__device__ __forceinline__ void addy(const mf_sx_args &a, size_t i, double v)
{
  atomicAdd(mf_sx_vec<vreal>::y(a) + i, (vreal)v);
}
__device__ __forceinline__ const vreal *coefq_of(const mf_sx_args &a) { return mf_sx_vec<vreal>::c(a); }
// entry m of cell e's matrix K_e (the gradient form with a coefficient; stored m-major: m ncells + e)
__device__ __forceinline__ double ldk(const mf_sx_args &a, int m, int e)
{
  return (double)__ldg(mf_sx_vec<vreal>::k(a) + (size_t)m * a.ncells + e);
}

} // namespace MF_SX_NS

#include "simplex_cell_io.cuh"

namespace MF_SX_NS {

// Gm = J^-1 J^-T (reference gradients in, reference gradients out)
template <int DIM>
__device__ __forceinline__ void metric(const double Ji[DIM][DIM], double Gm[DIM][DIM])
{
#pragma unroll
  for (int k = 0; k < DIM; k++)
#pragma unroll
    for (int l = 0; l < DIM; l++) {
      double s = 0.0;
#pragma unroll
      for (int r = 0; r < DIM; r++) s += Ji[k][r] * Ji[l][r];
      Gm[k][l] = s;
    }
}

// The cell's DoFs and the values of x on them, NC components a DoF (interleaved)
template <int N, int NC>
__device__ __forceinline__ void gather_cell(const mf_sx_args &a, int e, int idx[N], double ue[N * NC])
{
#pragma unroll
  for (int j = 0; j < N; j++) idx[j] = __ldg(a.cell_dofs + (size_t)e * N + j);
#pragma unroll
  for (int j = 0; j < N; j++)
#pragma unroll
    for (int c = 0; c < NC; c++) ue[j * NC + c] = ldx(a, (size_t)idx[j] * NC + c);
}

// Copy n doubles from global to shared, all threads of the block.
__device__ __forceinline__ void stage(double *dst, const double *__restrict__ src, int n)
{
  for (int i = threadIdx.x; i < n; i += blockDim.x) dst[i] = __ldg(src + i);
}

// The point data of a scalar operator from u_q and the reference gradient g: f[0] = a wm u_q,
// f[1 + k] = b wq (Gm g)_k (wm: the weight of the mass term, without the coefficient for Helmholtz):
// the metric here, the physics the gallery's (lib/physics/mf_gallery.h)
template <int DIM>
__device__ __forceinline__ void pointwise_scalar(double a, double b, double wm, double wq, double uq, const double g[DIM],
                                                 const double Gm[DIM][DIM], double f[1 + DIM])
{
  double gm[DIM];
#pragma unroll
  for (int k = 0; k < DIM; k++) {
    double s = 0.0;
#pragma unroll
    for (int l = 0; l < DIM; l++) s += Gm[k][l] * g[l];
    gm[k] = s;
  }
  MF_PW_SCALAR(DIM, a * wm, b * wq, uq, gm, f[0], f + 1);
}

// Elasticity at a point: g[c][l] = d u_c / d xi_l in, f[c][l] = sum_k Ji[l][k] sigma_ck out (so that
// v_ic += sum_l G_il f[c][l]), sigma = w (lambda tr(eps) I + 2 mu eps)
template <int DIM>
__device__ __forceinline__ void pointwise_elasticity(double lambda, double mu, double wq, const double g[DIM][DIM],
                                                     const double Ji[DIM][DIM], double f[DIM][DIM])
{
  double gu[DIM][DIM]; // d u_c / d x_k = sum_l g[c][l] Ji[l][k]
#pragma unroll
  for (int c = 0; c < DIM; c++)
#pragma unroll
    for (int k = 0; k < DIM; k++) {
      double s = 0.0;
#pragma unroll
      for (int l = 0; l < DIM; l++) s += Ji[l][k] * g[c][l];
      gu[c][k] = s;
    }
  double sig[DIM][DIM]; // the stress (lib/physics/mf_gallery.h)
  MF_PW_STRESS(double, DIM, lambda, mu, wq, gu, sig);
#pragma unroll
  for (int c = 0; c < DIM; c++)
#pragma unroll
    for (int l = 0; l < DIM; l++) {
      double s = 0.0;
#pragma unroll
      for (int k = 0; k < DIM; k++) s += Ji[l][k] * sig[c][k];
      f[c][l] = s;
    }
}

// ---------------------------------------------------------------------------- one cell per thread,
// quadrature form; NC = 1 (scalar) or DIM (elasticity, components interleaved)
template <int DIM, int P, int NC>
__global__ void __launch_bounds__(256) k_thread_q(const mf_sx_args a)
{
  constexpr int N = mf_sx_nnodes(DIM, P), NQ = mf_sx_nq(DIM, P);
  extern __shared__ double smem[];
  const double *tB = a.B, *tG = a.G, *tw = a.w;
  if (a.stage) {
    stage(smem, a.B, NQ * N);
    stage(smem + NQ * N, a.G, NQ * N * DIM);
    stage(smem + NQ * N * (1 + DIM), a.w, NQ);
    __syncthreads();
    tB = smem, tG = smem + NQ * N, tw = smem + NQ * N * (1 + DIM);
  }
  const int e = blockIdx.x * blockDim.x + threadIdx.x;
  if (e >= a.ncells) return;
  double Ji[DIM][DIM];
  const double det = geometry<DIM>(a.coords, a.cells, e, Ji);
  int idx[N];
  double ue[N * NC], ve[N * NC] = {};
  gather_cell<N, NC>(a, e, idx, ue);
  double Gm[DIM][DIM];
  if (NC == 1) metric<DIM>(Ji, Gm);
  const vreal *cq = coefq_of(a) ? coefq_of(a) + (size_t)e * NQ : nullptr;
#pragma unroll 1
  for (int q = 0; q < NQ; q++) {
    const double *Bq = tB + q * N, *Gq = tG + q * N * DIM;
    const double wd = tw[q] * det, wq = wd * (cq ? (double)__ldg(cq + q) : 1.0);
    if (NC == 1) {
      double uq = 0.0, g[DIM] = {};
#pragma unroll
      for (int j = 0; j < N; j++) {
        uq += Bq[j] * ue[j];
#pragma unroll
        for (int k = 0; k < DIM; k++) g[k] += Gq[j * DIM + k] * ue[j];
      }
      double f[1 + DIM];
      pointwise_scalar<DIM>(a.a, a.b, a.mass_coef ? wq : wd, wq, uq, g, Gm, f);
#pragma unroll
      for (int i = 0; i < N; i++) {
        double s = f[0] * Bq[i];
#pragma unroll
        for (int k = 0; k < DIM; k++) s += Gq[i * DIM + k] * f[1 + k];
        ve[i] += s;
      }
    } else {
      double g[DIM][DIM] = {};
#pragma unroll
      for (int j = 0; j < N; j++)
#pragma unroll
        for (int l = 0; l < DIM; l++) {
          const double gjl = Gq[j * DIM + l];
#pragma unroll
          for (int c = 0; c < DIM; c++) g[c][l] += ue[j * NC + c] * gjl;
        }
      double f[DIM][DIM];
      pointwise_elasticity<DIM>(a.lambda, a.mu, wq, g, Ji, f);
#pragma unroll
      for (int i = 0; i < N; i++)
#pragma unroll
        for (int l = 0; l < DIM; l++) {
          const double gil = Gq[i * DIM + l];
#pragma unroll
          for (int c = 0; c < DIM; c++) ve[i * NC + c] += gil * f[c][l];
        }
    }
  }
#pragma unroll
  for (int i = 0; i < N; i++)
#pragma unroll
    for (int c = 0; c < NC; c++) addy(a, (size_t)idx[i] * NC + c, ve[i * NC + c]);
}

// ---------------------------------------------------------------------------- tiled, quadrature form
// Shared memory: [tables if staged] | per cell of the tile: geometry (Gm or Ji, |det J|), u (N x NC),
// point data (NQ x NF), DoF ids (N ints, in double slots)
template <int DIM, int P, int NC>
__global__ void __launch_bounds__(256) k_tiled_q(const mf_sx_args a)
{
  constexpr int N = mf_sx_nnodes(DIM, P), NQ = mf_sx_nq(DIM, P), NF = NC == 1 ? 1 + DIM : DIM * DIM;
  constexpr int GEO = mf_sx_geo(DIM);
  extern __shared__ double smem[];
  const double *tB = a.B, *tG = a.G, *tw = a.w;
  double *sp = smem;
  if (a.stage) {
    stage(smem, a.B, NQ * N);
    stage(smem + NQ * N, a.G, NQ * N * DIM);
    stage(smem + NQ * N * (1 + DIM), a.w, NQ);
    tB = smem, tG = smem + NQ * N, tw = smem + NQ * N * (1 + DIM);
    sp = smem + mf_sx_table_doubles(DIM, N, NQ);
  }
  const int tile = a.tile, cell0 = blockIdx.x * tile;
  double *sgeo = sp, *su = sgeo + tile * GEO, *sf = su + tile * N * NC;
  int *sidx = (int *)(sf + tile * NQ * NF);
  const int ncell = min(tile, a.ncells - cell0);
  for (int t = threadIdx.x; t < ncell; t += blockDim.x) { // the geometry of each cell
    double Ji[DIM][DIM];
    const double det = geometry<DIM>(a.coords, a.cells, cell0 + t, Ji);
    double *g = sgeo + t * GEO;
    if (NC == 1) {
      double Gm[DIM][DIM];
      metric<DIM>(Ji, Gm);
#pragma unroll
      for (int k = 0; k < DIM; k++)
#pragma unroll
        for (int l = 0; l < DIM; l++) g[k * DIM + l] = Gm[k][l];
    } else {
#pragma unroll
      for (int k = 0; k < DIM; k++)
#pragma unroll
        for (int l = 0; l < DIM; l++) g[k * DIM + l] = Ji[k][l];
    }
    g[DIM * DIM] = det;
  }
  for (int r = threadIdx.x; r < ncell * N; r += blockDim.x) { // gather: (cell, node) pairs
    const int d = __ldg(a.cell_dofs + (size_t)cell0 * N + r);
    sidx[r] = d;
#pragma unroll
    for (int c = 0; c < NC; c++) su[r * NC + c] = ldx(a, (size_t)d * NC + c);
  }
  __syncthreads();
  for (int r = threadIdx.x; r < ncell * NQ; r += blockDim.x) { // (cell, point) pairs
    const int t = r / NQ, q = r - t * NQ;
    const double *Bq = tB + q * N, *Gq = tG + q * N * DIM, *ue = su + t * N * NC, *g = sgeo + t * GEO;
    const double wd = tw[q] * g[DIM * DIM], wq = wd * (coefq_of(a) ? (double)__ldg(coefq_of(a) + (size_t)(cell0 + t) * NQ + q) : 1.0);
    double *f = sf + (size_t)r * NF;
    if (NC == 1) {
      double uq = 0.0, gr[DIM] = {}, Gm[DIM][DIM], ff[1 + DIM];
#pragma unroll
      for (int j = 0; j < N; j++) {
        const double uj = ue[j];
        uq += Bq[j] * uj;
#pragma unroll
        for (int k = 0; k < DIM; k++) gr[k] += Gq[j * DIM + k] * uj;
      }
#pragma unroll
      for (int k = 0; k < DIM; k++)
#pragma unroll
        for (int l = 0; l < DIM; l++) Gm[k][l] = g[k * DIM + l];
      pointwise_scalar<DIM>(a.a, a.b, a.mass_coef ? wq : wd, wq, uq, gr, Gm, ff);
#pragma unroll
      for (int k = 0; k <= DIM; k++) f[k] = ff[k];
    } else {
      double gr[DIM][DIM] = {}, Ji[DIM][DIM], ff[DIM][DIM];
#pragma unroll
      for (int j = 0; j < N; j++)
#pragma unroll
        for (int l = 0; l < DIM; l++) {
          const double gjl = Gq[j * DIM + l];
#pragma unroll
          for (int c = 0; c < DIM; c++) gr[c][l] += ue[j * NC + c] * gjl;
        }
#pragma unroll
      for (int k = 0; k < DIM; k++)
#pragma unroll
        for (int l = 0; l < DIM; l++) Ji[k][l] = g[k * DIM + l];
      pointwise_elasticity<DIM>(a.lambda, a.mu, wq, gr, Ji, ff);
#pragma unroll
      for (int c = 0; c < DIM; c++)
#pragma unroll
        for (int l = 0; l < DIM; l++) f[c * DIM + l] = ff[c][l];
    }
  }
  __syncthreads();
  for (int r = threadIdx.x; r < ncell * N; r += blockDim.x) { // integrate back: (cell, node) pairs
    const int t = r / N, i = r - t * N;
    const double *f = sf + (size_t)t * NQ * NF;
    double v[NC] = {};
#pragma unroll 4
    for (int q = 0; q < NQ; q++, f += NF) {
      const double *Gi = tG + (q * N + i) * DIM;
      if (NC == 1) {
        double s = f[0] * tB[q * N + i];
#pragma unroll
        for (int k = 0; k < DIM; k++) s += Gi[k] * f[1 + k];
        v[0] += s;
      } else {
#pragma unroll
        for (int l = 0; l < DIM; l++) {
          const double gil = Gi[l];
#pragma unroll
          for (int c = 0; c < NC; c++) v[c] += gil * f[c * DIM + l];
        }
      }
    }
#pragma unroll
    for (int c = 0; c < NC; c++) addy(a, (size_t)sidx[r] * NC + c, v[c]);
  }
}

// The weights of the reference matrices of one cell: s[0] = a |det J|, s[1..] = b |det J| Gm_kl for
// k <= l (row by row)
template <int DIM>
__device__ __forceinline__ void ref_weights(double a, double b, double det, const double Gm[DIM][DIM],
                                            double s[mf_sx_nmat(DIM)])
{
  s[0] = a * det;
  int m = 1;
#pragma unroll
  for (int k = 0; k < DIM; k++)
#pragma unroll
    for (int l = k; l < DIM; l++) s[m++] = b * det * Gm[k][l];
}

// ---------------------------------------------------------------------------- one cell per thread,
// reference-matrix form: y_i += sum_m s_m sum_j S_m[j][i] u_j
template <int DIM, int P>
__global__ void __launch_bounds__(256) k_thread_r(const mf_sx_args a)
{
  constexpr int N = mf_sx_nnodes(DIM, P), NM = mf_sx_nmat(DIM);
  extern __shared__ double smem[];
  const double *S = a.S;
  if (a.stage) {
    stage(smem, a.S, NM * N * N);
    __syncthreads();
    S = smem;
  }
  const int e = blockIdx.x * blockDim.x + threadIdx.x;
  if (e >= a.ncells) return;
  double Ji[DIM][DIM], Gm[DIM][DIM], s[NM];
  const double det = geometry<DIM>(a.coords, a.cells, e, Ji);
  metric<DIM>(Ji, Gm);
  ref_weights<DIM>(a.a, a.b, det, Gm, s);
  const int m0 = a.a == 0.0 ? 1 : 0, m1 = a.b == 0.0 ? 1 : NM; // uniform: parts that are zero skipped
  int idx[N];
  double ue[N];
  gather_cell<N, 1>(a, e, idx, ue);
#pragma unroll
  for (int i = 0; i < N; i++) {
    double acc = 0.0;
#pragma unroll
    for (int m = 0; m < NM; m++) {
      if (m < m0 || m >= m1) continue;
      const double *Sm = S + m * N * N + i;
      double t = 0.0;
#pragma unroll
      for (int j = 0; j < N; j++) t += Sm[j * N] * ue[j];
      acc += s[m] * t;
    }
    addy(a, idx[i], acc);
  }
}

// ---------------------------------------------------------------------------- tiled, reference form
// Shared memory: [reference matrices if staged] | per cell of the tile: the weights s (NM), u (N)
template <int DIM, int P>
__global__ void __launch_bounds__(256) k_tiled_r(const mf_sx_args a)
{
  constexpr int N = mf_sx_nnodes(DIM, P), NM = mf_sx_nmat(DIM);
  extern __shared__ double smem[];
  const double *S = a.S;
  double *sp = smem;
  if (a.stage) {
    stage(smem, a.S, NM * N * N);
    S = smem;
    sp = smem + NM * N * N;
  }
  const int tile = a.tile, cell0 = blockIdx.x * tile;
  double *ss = sp, *su = ss + tile * NM;
  const int ncell = min(tile, a.ncells - cell0);
  for (int t = threadIdx.x; t < ncell; t += blockDim.x) {
    double Ji[DIM][DIM], Gm[DIM][DIM], s[NM];
    const double det = geometry<DIM>(a.coords, a.cells, cell0 + t, Ji);
    metric<DIM>(Ji, Gm);
    ref_weights<DIM>(a.a, a.b, det, Gm, s);
#pragma unroll
    for (int m = 0; m < NM; m++) ss[t * NM + m] = s[m];
  }
  for (int r = threadIdx.x; r < ncell * N; r += blockDim.x) su[r] = ldx(a, __ldg(a.cell_dofs + (size_t)cell0 * N + r));
  __syncthreads();
  const int m0 = a.a == 0.0 ? 1 : 0, m1 = a.b == 0.0 ? 1 : NM;
  for (int r = threadIdx.x; r < ncell * N; r += blockDim.x) { // (cell, node) pairs
    const int t = r / N, i = r - t * N;
    const double *ue = su + t * N;
    double acc = 0.0;
    for (int m = m0; m < m1; m++) {
      const double *Sm = S + m * N * N + i;
      double v = 0.0;
#pragma unroll
      for (int j = 0; j < N; j++) v += Sm[j * N] * ue[j];
      acc += ss[t * NM + m] * v;
    }
    addy(a, __ldg(a.cell_dofs + (size_t)cell0 * N + r), acc);
  }
}

} // namespace MF_SX_NS

#include "simplex_grad_kernels.cuh"

namespace MF_SX_NS {

// ---------------------------------------------------------------------------- one cell per thread,
// reference form with the matrices in constant memory: every index is known at compile time, so the
// multiply-adds take the matrix entry from the constant bank as an operand (no load instructions).
// Defined in the instantiation files only (MF_SX_CONST_DIM, MF_SX_CONST_P: the file's dim and p), each
// with its own constant array.
#ifdef MF_SX_CONST_DIM
// Constant memory, MF_SX_CONST_MAX_BYTES per file, in this order of priority: the gradient table E (at
// most 16.4 KiB, 3D p = 4); all the reference matrices where they fit, else the stiffness parts alone,
// else none (3D p = 4: the reference form then reads its matrices from global or shared memory, and the
// gradient form its mass matrix through L1); the elasticity matrices where they fit too.
constexpr int const_grad_doubles = mf_sx_grad_doubles(MF_SX_CONST_DIM, MF_SX_CONST_P);
static_assert(const_grad_doubles * 8 <= MF_SX_CONST_MAX_BYTES, "the gradient table fits in constant memory");
static __constant__ double cE[const_grad_doubles];
constexpr int const_left = MF_SX_CONST_MAX_BYTES / 8 - const_grad_doubles; // doubles left for cS and cK
constexpr int const_nn = mf_sx_nnodes(MF_SX_CONST_DIM, MF_SX_CONST_P) * mf_sx_nnodes(MF_SX_CONST_DIM, MF_SX_CONST_P);
constexpr bool const_mass = mf_sx_ref_doubles(MF_SX_CONST_DIM, mf_sx_nnodes(MF_SX_CONST_DIM, MF_SX_CONST_P)) <= const_left;
constexpr int const_doubles = const_mass ? mf_sx_ref_doubles(MF_SX_CONST_DIM, mf_sx_nnodes(MF_SX_CONST_DIM, MF_SX_CONST_P))
                              : (mf_sx_nmat(MF_SX_CONST_DIM) - 1) * const_nn <= const_left
                                  ? (mf_sx_nmat(MF_SX_CONST_DIM) - 1) * const_nn
                                  : 0;
constexpr int const_skip = const_mass ? 0 : const_nn; // doubles of S not in cS (the mass matrix)
static __constant__ double cS[const_doubles > 0 ? const_doubles : 1];
constexpr int const_elas_doubles =
    const_doubles + mf_sx_elas_doubles(MF_SX_CONST_DIM, mf_sx_nnodes(MF_SX_CONST_DIM, MF_SX_CONST_P)) <= const_left
        ? mf_sx_elas_doubles(MF_SX_CONST_DIM, mf_sx_nnodes(MF_SX_CONST_DIM, MF_SX_CONST_P))
        : 0;
static __constant__ double cK[const_elas_doubles > 0 ? const_elas_doubles : 1];

struct mf_sx_cE { // the gradient table in constant memory
  static constexpr bool constant = true;
  __device__ __forceinline__ double operator()(int i) const { return cE[i]; }
};
struct mf_sx_cM { // the mass matrix: in constant memory (cS[0..N^2)) where it is there, else through L1
  const double *p;
  __device__ __forceinline__ double operator()(int i) const
  {
    if constexpr (const_mass) return cS[i];
    else return __ldg(p + i);
  }
};

// Elasticity's gradient form, E in constant memory
template <int DIM, int P>
__global__ void __launch_bounds__(256) k_thread_gec(const mf_sx_args a)
{
  const int e = blockIdx.x * blockDim.x + threadIdx.x;
  if (e >= a.ncells) return;
  thread_ge<DIM, P>(a, gio<DIM, P>{a}, e, mf_sx_cE{});
}

// Blocks of 256 per SM for k_thread_gc: ptxas's own choice but for the 3D P2 Laplacian, 74 registers
// (3 blocks), which fits 64 without spilling (4 blocks: half the SM's warps resident, for the gather)
__host__ __device__ constexpr int mf_sx_gradc_minb(int dim, int p, bool mass) { return !mass && dim == 3 && p == 2 ? 4 : 1; }

// Gradient form, one cell per thread, E in constant memory (and the mass matrix where it is there)
template <int DIM, int P, bool MASS>
__global__ void __launch_bounds__(256, mf_sx_gradc_minb(DIM, P, MASS)) k_thread_gc(const mf_sx_args a)
{
  const int e = blockIdx.x * blockDim.x + threadIdx.x;
  if (e >= a.ncells) return;
  thread_g<DIM, P, MASS>(a, gio<DIM, P>{a}, e, mf_sx_cE{}, mf_sx_cM{a.S});
}

// The same with a coefficient (a = 0), E in constant memory
template <int DIM, int P>
__global__ void __launch_bounds__(256) k_thread_gkc(const mf_sx_args a)
{
  extern __shared__ double smem[]; // the copies of g where they are there (mf_sx_gk_shared)
  const int e = blockIdx.x * blockDim.x + threadIdx.x;
  if (e >= a.ncells) return;
  thread_g<DIM, P, false, mf_sx_cE, mf_sx_cM, true>(a, gio<DIM, P>{a}, e, mf_sx_cE{}, mf_sx_cM{a.S}, smem);
}

template <int DIM, int P, class IO>
__device__ __forceinline__ void cell_rc(const mf_sx_args &a, const IO &io, int e)
{
  constexpr int N = mf_sx_nnodes(DIM, P), NM = mf_sx_nmat(DIM);
  double Ji[DIM][DIM], Gm[DIM][DIM], s[NM];
  const double det = io.geo(e, Ji);
  metric<DIM>(Ji, Gm);
  ref_weights<DIM>(a.a, a.b, det, Gm, s);
  const bool mass = a.a != 0.0, stiff = a.b != 0.0; // uniform: parts that are zero skipped
  int idx[N];
  double ue[N];
  gather_io<N, 1>(io, e, idx, ue);
#pragma unroll
  for (int i = 0; i < N; i++) {
    double acc = 0.0;
    if (mass) {
      double t = 0.0;
#pragma unroll
      for (int j = 0; j < N; j++) t += (const_mass ? cS[j * N + i] : __ldg(a.S + j * N + i)) * ue[j];
      acc = s[0] * t;
    }
    if (stiff) {
#pragma unroll
      for (int m = 1; m < NM; m++) {
        double t = 0.0;
#pragma unroll
        for (int j = 0; j < N; j++) t += cS[(m * N + j) * N + i - const_skip] * ue[j];
        acc += s[m] * t;
      }
    }
    io.add(idx[i], acc);
  }
}

template <int DIM, int P>
__global__ void __launch_bounds__(256) k_thread_rc(const mf_sx_args a)
{
  const int e = blockIdx.x * blockDim.x + threadIdx.x;
  if (e >= a.ncells) return;
  cell_rc<DIM, P>(a, gio<DIM, P>{a}, e);
}

// Elasticity, one cell per thread, with the dim^2 matrices K_lm in constant memory:
//   y_ic = sum_{c', l, m} C[c][c'][l][m] sum_j (K_lm)_ij u_jc',
//   C[c][c'][l][m] = |det J| (lambda Ji_lc Ji_mc' + mu delta_cc' (J^-1 J^-T)_lm + mu Ji_lc' Ji_mc)
// (the pointwise stress of mf_simplex_elasticity_apply_cpu integrated exactly by the rule)
template <int DIM, int P, class IO>
__device__ __forceinline__ void cell_ec(const mf_sx_args &a, const IO &io, int e)
{
  constexpr int N = mf_sx_nnodes(DIM, P);
  double Ji[DIM][DIM], Gm[DIM][DIM];
  const double det = io.geo(e, Ji);
  metric<DIM>(Ji, Gm);
  const double ld = a.lambda * det, md = a.mu * det;
  int idx[N];
  double ue[N * DIM];
  gather_io<N, DIM>(io, e, idx, ue);
#pragma unroll
  for (int i = 0; i < N; i++) {
    double acc[DIM] = {};
#pragma unroll
    for (int l = 0; l < DIM; l++)
#pragma unroll
      for (int m = 0; m < DIM; m++) {
        double t[DIM] = {};
#pragma unroll
        for (int j = 0; j < N; j++) {
          const double k = cK[((l * DIM + m) * N + j) * N + i];
#pragma unroll
          for (int d = 0; d < DIM; d++) t[d] += k * ue[j * DIM + d];
        }
        // sum_d C[c][d][l][m] t_d without storing C (registers): lambda Ji_lc (Ji_m. t) + mu Ji_mc (Ji_l. t)
        // + mu Gm_lm t_c, all times |det J|
        double s1 = 0.0, s2 = 0.0;
#pragma unroll
        for (int d = 0; d < DIM; d++) s1 += Ji[m][d] * t[d], s2 += Ji[l][d] * t[d];
        s1 *= ld, s2 *= md;
        const double g = md * Gm[l][m];
#pragma unroll
        for (int c = 0; c < DIM; c++) acc[c] += Ji[l][c] * s1 + Ji[m][c] * s2 + g * t[c];
      }
#pragma unroll
    for (int c = 0; c < DIM; c++) io.add((size_t)idx[i] * DIM + c, acc[c]);
  }
}

template <int DIM, int P>
__global__ void __launch_bounds__(256) k_thread_ec(const mf_sx_args a)
{
  const int e = blockIdx.x * blockDim.x + threadIdx.x;
  if (e >= a.ncells) return;
  cell_ec<DIM, P>(a, gio<DIM, P>{a}, e);
}

// ---------------------------------------------------------------------------- the shared scatter: the
// constant-memory kernels' cell work on a tile of cells whose DoF values, sums and vertex coordinates are in
// shared memory (tile_cells)
template <int DIM, int P>
__global__ void __launch_bounds__(MF_SX_SHARED_TILE) k_shared_rc(const mf_sx_args a)
{
  tile_cells<DIM, 1>(a, [&](int e, const double *sx, double *sy, const double *sc) {
    cell_rc<DIM, P>(a, sio<DIM, P>{a.cell_ldofs, a.cell_lverts, sx, sc, sy}, e);
  });
}
template <int DIM, int P, bool MASS>
__global__ void __launch_bounds__(MF_SX_SHARED_TILE) k_shared_gc(const mf_sx_args a)
{
  tile_cells<DIM, 1>(a, [&](int e, const double *sx, double *sy, const double *sc) {
    thread_g<DIM, P, MASS>(a, sio<DIM, P>{a.cell_ldofs, a.cell_lverts, sx, sc, sy}, e, mf_sx_cE{},
                           mf_sx_cM{a.S});
  });
}
template <int DIM, int P>
__global__ void __launch_bounds__(MF_SX_SHARED_TILE) k_shared_ec(const mf_sx_args a)
{
  tile_cells<DIM, DIM>(a, [&](int e, const double *sx, double *sy, const double *sc) {
    cell_ec<DIM, P>(a, sio<DIM, P>{a.cell_ldofs, a.cell_lverts, sx, sc, sy}, e);
  });
}
template <int DIM, int P>
__global__ void __launch_bounds__(MF_SX_SHARED_TILE) k_shared_gec(const mf_sx_args a)
{
  tile_cells<DIM, DIM>(a, [&](int e, const double *sx, double *sy, const double *sc) {
    thread_ge<DIM, P>(a, sio<DIM, P>{a.cell_ldofs, a.cell_lverts, sx, sc, sy}, e, mf_sx_cE{});
  });
}

// static, as the constant arrays: each instantiation file writes its own (an inline function would be
// merged across the files by the linker, and write one file's array only)
static cudaError_t set_const(const double *S)
{
  return cudaMemcpyToSymbol(cS, S + const_skip, sizeof(double) * const_doubles);
}
static cudaError_t set_const_elas(const double *K)
{
  return cudaMemcpyToSymbol(cK, K, sizeof(double) * const_elas_doubles);
}
static cudaError_t set_const_grad(const double *E)
{
  return cudaMemcpyToSymbol(cE, E, sizeof(double) * const_grad_doubles);
}
template <int DIM, int P>
const void *ec_kernel()
{
  if constexpr (const_elas_doubles > 0) return (const void *)k_thread_ec<DIM, P>;
  else return nullptr;
}

// the gradient form with the mass part, tables in global or shared memory: not 3D p = 4, where the
// mass matrix and the table do not fit in registers without spilling (56 bytes, ptxas -v for sm_90);
// the constant-memory variant serves it
template <int DIM, int P>
const void *gm_kernel()
{
  if constexpr (DIM == 3 && P == 4) return nullptr;
  else return (const void *)k_thread_g<DIM, P, true>;
}

// elasticity's gradient form: not 3D p = 4, where its n1 dim^2 = 180 accumulated values
// do not fit in registers (ptxas -v for sm_90: 6 KiB of spills in global/shared, 83 KiB in constant)
template <int DIM, int P, bool CONSTANT>
const void *ge_kernel()
{
  if constexpr (DIM == 3 && P == 4) return nullptr;
  else if constexpr (CONSTANT) return (const void *)k_thread_gec<DIM, P>;
  else return (const void *)k_thread_ge<DIM, P>;
}

template <int DIM, int P>
const void *rc_kernel()
{
  if constexpr (const_doubles > 0) return (const void *)k_thread_rc<DIM, P>;
  else return nullptr;
}
// the shared scatter's, where their one-cell-per-thread kernels are
template <int DIM, int P>
const void *shared_rc_kernel()
{
  if constexpr (const_doubles > 0) return (const void *)k_shared_rc<DIM, P>;
  else return nullptr;
}
template <int DIM, int P>
const void *shared_ec_kernel()
{
  if constexpr (const_elas_doubles > 0) return (const void *)k_shared_ec<DIM, P>;
  else return nullptr;
}
template <int DIM, int P>
const void *shared_gec_kernel()
{
  if constexpr (DIM == 3 && P == 4) return nullptr;
  else return (const void *)k_shared_gec<DIM, P>;
}

// The diagonal, the twin of lib/simplex/operator_simplex.c's diagonal_cell (the same sums per cell), one cell per
// thread, each cell's part added into y (atomics; y zeroed by the caller): NC = 1, d_i = sum_q w_q |det J|
// [a c_m phi_i^2 + b c_q |g_i|^2] (c_m = c_q with mass_coef, else 1); NC = DIM (elasticity), component c of node i
// sum_q w_q |det J| (lambda g_c^2 + mu (|g|^2 + g_c^2)); g_i = J^-T grad phi_i
template <int DIM, int P, int NC>
__global__ void __launch_bounds__(256) k_diag(const mf_sx_args a)
{
  constexpr int N = mf_sx_nnodes(DIM, P), NQ = mf_sx_nq(DIM, P);
  const int e = blockIdx.x * blockDim.x + threadIdx.x;
  if (e >= a.ncells) return;
  double Ji[DIM][DIM];
  const double det = geometry<DIM>(a.coords, a.cells, e, Ji);
  for (int i = 0; i < N; i++) {
    double de[NC];
#pragma unroll
    for (int c = 0; c < NC; c++) de[c] = 0.0;
    for (int q = 0; q < NQ; q++) {
      const double *gr = a.G + ((size_t)q * N + i) * DIM, phi = a.B[(size_t)q * N + i];
      const double w = a.w[q] * det, cq = a.coefq ? a.coefq[(size_t)e * NQ + q] : 1.0;
      double g[DIM], gg = 0.0;
#pragma unroll
      for (int l = 0; l < DIM; l++) {
        g[l] = 0.0;
#pragma unroll
        for (int r = 0; r < DIM; r++) g[l] += Ji[r][l] * gr[r];
        gg += g[l] * g[l];
      }
      if (NC == 1) de[0] += w * mf_pw_scalar_entry_d(a.a * (a.mass_coef ? cq : 1.0), a.b * cq, phi, phi, gg);
      else
#pragma unroll
        for (int c = 0; c < NC; c++) de[c] += w * mf_pw_stress_diag_d(a.lambda, a.mu, g[c], gg);
    }
    const int dof = a.cell_dofs[(size_t)e * N + i];
#pragma unroll
    for (int c = 0; c < NC; c++) atomicAdd(&a.y[(size_t)dof * NC + c], de[c]);
  }
}

// the gradient form with a coefficient (3D P4: the copy of g in shared memory, mf_sx_gk_shared)
template <int DIM, int P, bool CONSTANT>
const void *gk_kernel()
{
  if constexpr (CONSTANT) return (const void *)k_thread_gkc<DIM, P>;
  else return (const void *)k_thread_gk<DIM, P>;
}

// the diagonal is made in double only (the single-precision copies take their double operator's)
template <int DIM, int P, int NC>
const void *diag_kernel()
{
  if constexpr (sizeof(vreal) == sizeof(double)) return (const void *)k_diag<DIM, P, NC>;
  else return nullptr;
}

// The kernels of one (dim, p)
template <int DIM, int P>
const mf_sx_table *table()
{
  constexpr bool has_const = const_doubles > 0;
  static const mf_sx_table t = {
      DIM,
      P,
      mf_sx_nnodes(DIM, P),
      mf_sx_nq(DIM, P),
      {(const void *)k_thread_q<DIM, P, 1>, (const void *)k_tiled_q<DIM, P, 1>, (const void *)k_thread_r<DIM, P>,
       (const void *)k_tiled_r<DIM, P>, (const void *)k_thread_q<DIM, P, DIM>, (const void *)k_tiled_q<DIM, P, DIM>,
       rc_kernel<DIM, P>(), ec_kernel<DIM, P>(), (const void *)k_thread_g<DIM, P, false>, (const void *)k_thread_gc<DIM, P, false>,
       gm_kernel<DIM, P>(), (const void *)k_thread_gc<DIM, P, true>, ge_kernel<DIM, P, false>(), ge_kernel<DIM, P, true>(),
       diag_kernel<DIM, P, 1>(), diag_kernel<DIM, P, DIM>(), gk_kernel<DIM, P, false>(), gk_kernel<DIM, P, true>(),
       shared_rc_kernel<DIM, P>(), (const void *)k_shared_gc<DIM, P, false>, (const void *)k_shared_gc<DIM, P, true>,
       shared_ec_kernel<DIM, P>(), shared_gec_kernel<DIM, P>(), (const void *)k_tiled_g<DIM, P, 1, false>,
       (const void *)k_tiled_g<DIM, P, 1, true>, (const void *)k_tiled_g<DIM, P, DIM, false>},
      has_const ? set_const : nullptr,
      const_elas_doubles > 0 ? set_const_elas : nullptr,
      set_const_grad};
  return &t;
}
#endif

} // namespace MF_SX_NS

#endif
