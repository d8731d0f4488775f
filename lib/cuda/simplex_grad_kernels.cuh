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

// ---------------------------------------------------------------------------- tiled, gradient form (c = 1)
// The register-light variant of thread_g and thread_ge (3D P3, P4: one cell per thread needs n1 dim NC values live,
// up to 180 at 3D P4 elasticity): a block takes a tile of cells; its threads cooperate over (cell, node) pairs for
// the gather, over (cell, r) pairs (r a node of P_{p-1}) for g = E u and the pointwise operator there (dim NC values
// live), and over (cell, node) pairs again for E^T f and, with MASS, the mass part a |det J| M u; the sums added to y
// per (cell, node). Shared memory: [staged (stage 1): E as n1 x dim x N (the second sweep: consecutive nodes i at
// consecutive addresses), E again as N x dim x n1 (the first sweep: consecutive r), the mass matrix with MASS] | per
// cell of the tile: the geometry (scalar: b |det J| J^-1 J^-T and a |det J|; elasticity: J^-1 and |det J|), u
// (N x NC), the values at the nodes of P_{p-1} (n1 x dim NC), the DoF ids (N ints in double slots).
template <int DIM, int P, int NC, bool MASS>
__global__ void __launch_bounds__(256) k_tiled_g(const mf_sx_args a)
{
  constexpr int N = mf_sx_nnodes(DIM, P), N1 = mf_sx_n1(DIM, P), NG = mf_sx_grad_doubles(DIM, P);
  constexpr int GEO = mf_sx_geo(DIM), NF = DIM * NC;
  extern __shared__ double smem[];
  const double *tE = a.E, *tM = a.S, *tEt = nullptr; // tEt: the transposed copy (staged only)
  double *sp = smem;
  if (a.stage) {
    stage(smem, a.E, NG);
    for (int i = threadIdx.x; i < NG; i += blockDim.x) { // E[(r dim + k) N + j] -> Et[(j dim + k) n1 + r]
      const int j = i % N, rk = i / N, k = rk % DIM, r = rk / DIM;
      smem[NG + (j * DIM + k) * N1 + r] = __ldg(a.E + i);
    }
    if (MASS) stage(smem + 2 * NG, a.S, N * N);
    tE = smem, tEt = smem + NG, tM = smem + 2 * NG;
    sp = smem + mf_sx_tiled_g_tables(DIM, P, MASS);
  }
  const int tile = a.tile, cell0 = blockIdx.x * tile;
  double *sgeo = sp, *su = sgeo + tile * GEO, *sf = su + tile * N * NC;
  int *sidx = (int *)(sf + tile * N1 * NF);
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
        for (int l = 0; l < DIM; l++) g[k * DIM + l] = a.b * det * Gm[k][l];
      g[DIM * DIM] = a.a * det;
    } else {
#pragma unroll
      for (int k = 0; k < DIM; k++)
#pragma unroll
        for (int l = 0; l < DIM; l++) g[k * DIM + l] = Ji[k][l];
      g[DIM * DIM] = det;
    }
  }
  for (int r = threadIdx.x; r < ncell * N; r += blockDim.x) { // gather: (cell, node) pairs
    const int d = __ldg(a.cell_dofs + (size_t)cell0 * N + r);
    sidx[r] = d;
#pragma unroll
    for (int c = 0; c < NC; c++) su[r * NC + c] = ldx(a, (size_t)d * NC + c);
  }
  __syncthreads();
  for (int r = threadIdx.x; r < ncell * N1; r += blockDim.x) { // (cell, node of P_{p-1}) pairs
    const int t = r / N1, s = r - t * N1;
    const double *ue = su + t * N * NC, *g = sgeo + t * GEO;
    double gr[NC][DIM] = {};
#pragma unroll 4
    for (int j = 0; j < N; j++) {
      double u[NC];
#pragma unroll
      for (int c = 0; c < NC; c++) u[c] = ue[j * NC + c];
#pragma unroll
      for (int k = 0; k < DIM; k++) {
        const double e = tEt ? tEt[(j * DIM + k) * N1 + s] : __ldg(tE + (s * DIM + k) * N + j);
#pragma unroll
        for (int c = 0; c < NC; c++) gr[c][k] += e * u[c];
      }
    }
    double *f = sf + (size_t)r * NF;
    if (NC == 1) {
#pragma unroll
      for (int k = 0; k < DIM; k++) {
        double v = 0.0;
#pragma unroll
        for (int l = 0; l < DIM; l++) v += g[k * DIM + l] * gr[0][l];
        f[k] = v;
      }
    } else {
      double Ji[DIM][DIM], ff[DIM][DIM], gg[DIM][DIM];
#pragma unroll
      for (int k = 0; k < DIM; k++)
#pragma unroll
        for (int l = 0; l < DIM; l++) Ji[k][l] = g[k * DIM + l], gg[k][l] = gr[k][l];
      pointwise_elasticity<DIM>(a.lambda, a.mu, g[DIM * DIM], gg, Ji, ff);
#pragma unroll
      for (int c = 0; c < DIM; c++)
#pragma unroll
        for (int l = 0; l < DIM; l++) f[c * DIM + l] = ff[c][l];
    }
  }
  __syncthreads();
  for (int r = threadIdx.x; r < ncell * N; r += blockDim.x) { // E^T f (and the mass part): (cell, node) pairs
    const int t = r / N, i = r - t * N;
    const double *f = sf + (size_t)t * N1 * NF;
    double v[NC] = {};
#pragma unroll 4
    for (int s = 0; s < N1; s++, f += NF)
#pragma unroll
      for (int k = 0; k < DIM; k++) {
        const double e = tEt ? tE[(s * DIM + k) * N + i] : __ldg(tE + (s * DIM + k) * N + i);
#pragma unroll
        for (int c = 0; c < NC; c++) v[c] += e * f[c * DIM + k];
      }
    if (MASS) {
      const double *ue = su + t * N;
      double m = 0.0;
#pragma unroll 4
      for (int j = 0; j < N; j++) m += (tEt ? tM[j * N + i] : __ldg(tM + j * N + i)) * ue[j];
      v[0] += sgeo[t * GEO + DIM * DIM] * m;
    }
#pragma unroll
    for (int c = 0; c < NC; c++) addy(a, (size_t)sidx[r] * NC + c, v[c]);
  }
}

} // namespace MF_SX_NS

#endif
