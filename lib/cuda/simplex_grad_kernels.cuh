// simplex_grad_kernels.cuh -- the gradient-form action kernels of the simplex operators (part of
// simplex_kernels.cuh, included there between its namespace's other parts; see its header for the forms):
// the cell work with the table E in global or shared memory, with or without the mass part and the cells'
// coefficient matrices K_e; the constant-memory variants stay in simplex_kernels.cuh with the constant arrays.
#ifndef MF_SIMPLEX_GRAD_KERNELS_CUH
#define MF_SIMPLEX_GRAD_KERNELS_CUH

namespace MF_SX_NS {

// ---------------------------------------------------------------------------- one cell per thread,
// gradient form, in two sweeps that keep few values live (registers):
//   over the nodes j: u_j = x[dof_j] (kept only with the mass part, MASS), g[r][l] += (E_l)_rj u_j;
//   f[r] = b |det J| (J^-1 J^-T) g[r];
//   over the nodes i: y[dof_i] += a |det J| sum_j M_ji u_j + sum_{r,k} (E_k)_ri f[r][k] (the DoF ids
//   read again).
// With a coefficient (COEF, a = 0): f[r] = sum_s K_e[r][s] b |det J| (J^-1 J^-T) g[s], K_e the cell's n1 x n1
// matrix of mf_simplex_gradient_coef (n1 (n1 + 1) / 2 values read per cell instead of c at nq points; 2 n1 dim
// values live).
// Live: n1 dim doubles (Laplace), n1 dim + N (Helmholtz). TE, TM read the table E (n1 x dim x N) and the
// mass matrix (N x N); in constant memory (TE::constant) every index must be known at compile time, so
// all is unrolled and the entry is an operand of the multiply-add; from global or shared memory the
// node loops stay loops where they can, which keeps the loads in flight (registers) few.
// With COEF and more than 10 nodes of P_{p-1} (3D P4: 20) the copy of g goes to the thread's slots of shared
// memory hs (mf_sx_gk_shared: n1 dim doubles per thread, interleaved over the block's threads), not registers.

template <int DIM, int P, bool MASS, class TE, class TM, bool COEF = false, class IO>
__device__ __forceinline__ void thread_g(const mf_sx_args &a, const IO &io, int e, TE E, TM M, double *hs = nullptr)
{
  constexpr int N = mf_sx_nnodes(DIM, P), N1 = mf_sx_n1(DIM, P);
  double g[N1][DIM], ue[MASS ? N : 1];
#pragma unroll
  for (int r = 0; r < N1; r++)
#pragma unroll
    for (int k = 0; k < DIM; k++) g[r][k] = 0.0;
#pragma unroll(TE::constant || MASS ? N : 1)
  for (int j = 0; j < N; j++) {
    const double u = io.x(io.dof(e, j));
    if (MASS) ue[MASS ? j : 0] = u;
#pragma unroll
    for (int r = 0; r < N1; r++)
#pragma unroll
      for (int k = 0; k < DIM; k++) g[r][k] += E((r * DIM + k) * N + j) * u;
  }
  double Ji[DIM][DIM], Gm[DIM][DIM]; // the geometry after the first sweep: not live during it
  const double det = io.geo(e, Ji);
  metric<DIM>(Ji, Gm);
  const double bd = a.b * det, ad = a.a * det;
#pragma unroll
  for (int k = 0; k < DIM; k++)
#pragma unroll
    for (int l = 0; l < DIM; l++) Gm[k][l] *= bd;
#pragma unroll
  for (int r = 0; r < N1; r++) {
    double f[DIM];
#pragma unroll
    for (int k = 0; k < DIM; k++) {
      double t = 0.0;
#pragma unroll
      for (int l = 0; l < DIM; l++) t += Gm[k][l] * g[r][l];
      f[k] = t;
    }
#pragma unroll
    for (int k = 0; k < DIM; k++) g[r][k] = f[k];
  }
  if constexpr (COEF) { // g <- K_e g, row by row from a copy (in registers h, or in shared memory hs)
    constexpr bool SH = mf_sx_gk_shared(DIM, P);
    const int bd = blockDim.x, tid = threadIdx.x;
    double h[SH ? 1 : N1][DIM];
#pragma unroll
    for (int r = 0; r < N1; r++)
#pragma unroll
      for (int k = 0; k < DIM; k++) {
        if constexpr (SH) hs[(r * DIM + k) * bd + tid] = g[r][k];
        else h[r][k] = g[r][k];
      }
#pragma unroll
    for (int r = 0; r < N1; r++) {
      double f[DIM] = {};
#pragma unroll
      for (int t = 0; t < N1; t++) {
        const int lo = r < t ? r : t, hi = r < t ? t : r;
        const double krt = ldk(a, lo * N1 - lo * (lo - 1) / 2 + (hi - lo), e);
#pragma unroll
        for (int k = 0; k < DIM; k++) f[k] += krt * (SH ? hs[(t * DIM + k) * bd + tid] : h[SH ? 0 : t][k]);
      }
#pragma unroll
      for (int k = 0; k < DIM; k++) g[r][k] = f[k];
    }
  }
#pragma unroll(TE::constant ? N : 1)
  for (int i = 0; i < N; i++) {
    double t = 0.0;
    if (MASS) {
#pragma unroll
      for (int j = 0; j < N; j++) t += M(j * N + i) * ue[MASS ? j : 0];
      t *= ad;
    }
#pragma unroll
    for (int r = 0; r < N1; r++)
#pragma unroll
      for (int k = 0; k < DIM; k++) t += E((r * DIM + k) * N + i) * g[r][k];
    io.add(io.dof(e, i), t);
  }
}

// gradient form of elasticity, the same two sweeps: g[r][c][l] = (E_l u_c)_r (n1 dim^2 values live),
// the pointwise stress at weight |det J| (pointwise_elasticity), y_ic += sum_{r,l} (E_l)_ri f[r][c][l]
template <int DIM, int P, class TE, class IO>
__device__ __forceinline__ void thread_ge(const mf_sx_args &a, const IO &io, int e, TE E)
{
  constexpr int N = mf_sx_nnodes(DIM, P), N1 = mf_sx_n1(DIM, P);
  double g[N1][DIM][DIM];
#pragma unroll
  for (int r = 0; r < N1; r++)
#pragma unroll
    for (int c = 0; c < DIM; c++)
#pragma unroll
      for (int l = 0; l < DIM; l++) g[r][c][l] = 0.0;
#pragma unroll(TE::constant ? N : 1)
  for (int j = 0; j < N; j++) {
    const int d = io.dof(e, j);
    double u[DIM];
#pragma unroll
    for (int c = 0; c < DIM; c++) u[c] = io.x((size_t)d * DIM + c);
#pragma unroll
    for (int r = 0; r < N1; r++)
#pragma unroll
      for (int l = 0; l < DIM; l++) {
        const double el = E((r * DIM + l) * N + j);
#pragma unroll
        for (int c = 0; c < DIM; c++) g[r][c][l] += el * u[c];
      }
  }
  double Ji[DIM][DIM];
  const double det = io.geo(e, Ji);
#pragma unroll
  for (int r = 0; r < N1; r++) {
    double f[DIM][DIM];
    pointwise_elasticity<DIM>(a.lambda, a.mu, det, g[r], Ji, f);
#pragma unroll
    for (int c = 0; c < DIM; c++)
#pragma unroll
      for (int l = 0; l < DIM; l++) g[r][c][l] = f[c][l];
  }
#pragma unroll(TE::constant ? N : 1)
  for (int i = 0; i < N; i++) {
    double t[DIM] = {};
#pragma unroll
    for (int r = 0; r < N1; r++)
#pragma unroll
      for (int l = 0; l < DIM; l++) {
        const double el = E((r * DIM + l) * N + i);
#pragma unroll
        for (int c = 0; c < DIM; c++) t[c] += el * g[r][c][l];
      }
    const int d = io.dof(e, i);
#pragma unroll
    for (int c = 0; c < DIM; c++) io.add((size_t)d * DIM + c, t[c]);
  }
}

struct mf_sx_ldg { // a table in global memory, read through L1
  static constexpr bool constant = false;
  const double *p;
  __device__ __forceinline__ double operator()(int i) const { return __ldg(p + i); }
};
struct mf_sx_lds { // a table in shared memory
  static constexpr bool constant = false;
  const double *p;
  __device__ __forceinline__ double operator()(int i) const { return p[i]; }
};

// Blocks of 256 per SM the register budget of k_thread_g must allow: left alone, ptxas gives the
// variants with the mass part up to 254 registers (the mass matrix's loads in flight); 2 (128
// registers) where that does not spill (ptxas -v for sm_90: 2D p = 2, 3 and 3D p = 2).
__host__ __device__ constexpr int mf_sx_grad_minb(int dim, int p, bool mass)
{
  return mass && (p == 2 || (dim == 2 && p == 3)) ? 2 : 1;
}

// Shared memory when staged (stage 1): E (n1 x dim x N), then the mass matrix (N x N) with MASS
template <int DIM, int P, bool MASS>
__global__ void __launch_bounds__(256, mf_sx_grad_minb(DIM, P, MASS)) k_thread_g(const mf_sx_args a)
{
  constexpr int N = mf_sx_nnodes(DIM, P), NG = mf_sx_grad_doubles(DIM, P);
  extern __shared__ double smem[];
  const int e = blockIdx.x * blockDim.x + threadIdx.x;
  if (a.stage) {
    stage(smem, a.E, NG);
    if (MASS) stage(smem + NG, a.S, N * N);
    __syncthreads();
    if (e < a.ncells) thread_g<DIM, P, MASS>(a, gio<DIM, P>{a}, e, mf_sx_lds{smem}, mf_sx_lds{smem + NG});
  } else if (e < a.ncells) {
    thread_g<DIM, P, MASS>(a, gio<DIM, P>{a}, e, mf_sx_ldg{a.E}, mf_sx_ldg{a.S});
  }
}

// Gradient form with a coefficient (a = 0): the cells' matrices K_e; shared memory when staged: E
template <int DIM, int P>
__global__ void __launch_bounds__(256) k_thread_gk(const mf_sx_args a)
{
  constexpr int NG = mf_sx_grad_doubles(DIM, P);
  extern __shared__ double smem[];
  const int e = blockIdx.x * blockDim.x + threadIdx.x;
  if (a.stage) { // shared memory: E, then the copies of g where they are there (mf_sx_gk_shared)
    stage(smem, a.E, NG);
    __syncthreads();
    if (e < a.ncells)
      thread_g<DIM, P, false, mf_sx_lds, mf_sx_lds, true>(a, gio<DIM, P>{a}, e, mf_sx_lds{smem}, mf_sx_lds{smem}, smem + NG);
  } else if (e < a.ncells) {
    thread_g<DIM, P, false, mf_sx_ldg, mf_sx_ldg, true>(a, gio<DIM, P>{a}, e, mf_sx_ldg{a.E}, mf_sx_ldg{a.S}, smem);
  }
}

// Elasticity's gradient form; shared memory when staged: E
template <int DIM, int P>
__global__ void __launch_bounds__(256) k_thread_ge(const mf_sx_args a)
{
  extern __shared__ double smem[];
  const int e = blockIdx.x * blockDim.x + threadIdx.x;
  if (a.stage) {
    stage(smem, a.E, mf_sx_grad_doubles(DIM, P));
    __syncthreads();
    if (e < a.ncells) thread_ge<DIM, P>(a, gio<DIM, P>{a}, e, mf_sx_lds{smem});
  } else if (e < a.ncells) {
    thread_ge<DIM, P>(a, gio<DIM, P>{a}, e, mf_sx_ldg{a.E});
  }
}

} // namespace MF_SX_NS

#endif
