// mf_sx_table.h -- the launch interface of the simplex action kernels (simplex_kernels.cuh): which
// kernels one (dim, p) has, their arguments, the table of one (dim, p) that its generated file
// (simplex_inst.cu.in) returns, and the sizes of the tables and tiles they use. lib/cuda/simplex.cu
// picks and launches the kernels through it.
#ifndef MF_SX_TABLE_H
#define MF_SX_TABLE_H

#include <cuda_runtime.h>

// kernels of one (dim, p), indices into mf_sx_table::fn
enum {
  MF_SX_THREAD_Q = 0, // one cell per thread, quadrature form, scalar
  MF_SX_TILED_Q,      // tiled, quadrature form, scalar
  MF_SX_THREAD_R,     // one cell per thread, reference-matrix form (constant coefficient)
  MF_SX_TILED_R,      // tiled, reference-matrix form
  MF_SX_THREAD_E,     // one cell per thread, quadrature form, elasticity
  MF_SX_TILED_E,      // tiled, quadrature form, elasticity
  MF_SX_THREAD_RC,    // one cell per thread, reference form, matrices in constant memory (NULL when too large)
  MF_SX_THREAD_EC,    // the same for elasticity (NULL when too large)
  MF_SX_THREAD_G,     // one cell per thread, gradient form (constant coefficient, a = 0), tables in global/shared memory
  MF_SX_THREAD_GC,    // the same with the gradient table in constant memory
  MF_SX_THREAD_GM,    // gradient form with the mass part (a != 0), tables in global/shared memory (NULL: 3D p = 4)
  MF_SX_THREAD_GMC,   // the same with the tables in constant memory (the mass matrix where it fits)
  MF_SX_THREAD_GE,    // gradient form of elasticity, table in global/shared memory (NULL where it would spill)
  MF_SX_THREAD_GEC,   // the same with the table in constant memory (NULL where it would spill)
  MF_SX_DIAG,         // the diagonal of a scalar operator into y, one cell per thread (tile = threads)
  MF_SX_DIAG_E,       // the diagonal of elasticity
  MF_SX_THREAD_GK,    // gradient form with a coefficient (a = 0: the cells' matrices K_e), tables in global/shared memory (NULL: p = 4)
  MF_SX_THREAD_GKC,   // the same with the gradient table in constant memory
  // the shared scatter (a tile of consecutive cells per block, one cell per thread): the tile's DoF values and
  // vertex coordinates gathered once into shared memory, the cells' sums added there, each of the tile's DoFs
  // added to y once; the constant-memory kernels' cell work (NULL where those are)
  MF_SX_SHARED_RC,    // reference form (k_thread_rc's)
  MF_SX_SHARED_GC,    // gradient form, a = 0 (k_thread_gc's)
  MF_SX_SHARED_GMC,   // gradient form with the mass part
  MF_SX_SHARED_EC,    // elasticity, reference form (k_thread_ec's)
  MF_SX_SHARED_GEC,   // elasticity, gradient form (k_thread_gec's)
  // tiled, gradient form (c = 1; k_tiled_g): a block's threads over (cell, node) and (cell, node of P_{p-1}) pairs
  MF_SX_TILED_G,      // a = 0
  MF_SX_TILED_GM,     // with the mass part (a != 0)
  MF_SX_TILED_GE,     // elasticity
  MF_SX_NKERNELS
};

struct mf_sx_args {
  const double *coords;  // nv x dim vertex coordinates
  const int *cells;      // ncells x (dim + 1) vertex ids
  const int *cell_dofs;  // ncells x N
  const double *B, *G, *w; // tables: nq x N, nq x N x dim, nq (global memory)
  const double *S;       // reference matrices (1 + dim(dim+1)/2) x N x N, S[m][j][i] (i fastest)
  const double *E;       // gradient table n1 x dim x N, E[r][k][j] (mf_simplex_gradient_table)
  const double *coefq;   // ncells x nq, or NULL (c = 1)
  const double *K;       // the gradient form with a coefficient: the cells' K_e, nk x ncells (mf_simplex_gradient_coef)
  const float *Kf;       // the same in float (the float kernels)
  double a, b;           // scalar operators: a M + b K_c (mass_coef: a M_c + b K_c)
  int mass_coef;          // the mass term weighted by coefq too (the mass operator)
  double lambda, mu;     // elasticity
  int ncells;
  int tile;              // cells per block (thread strategy: = threads)
  int stage;             // tables (quadrature) or reference matrices copied into shared memory (1)
  const double *x;        // the vectors in double (the double kernels)
  double *y;
  const float *xf;        // or in float, with c(x_q) in float (the float kernels: single-precision copies)
  float *yf;
  const float *coefqf;
  // the shared scatter's tiles (strategy 2; `tile` cells each, tile t = cells t tile ..): their DoFs
  // tile_dofs[tile_off[t] .. tile_off[t + 1]) and vertices tile_verts[tile_voff[t] ..), ascending; each cell's
  // DoFs and vertices as indices into its tile's lists (cell_ldofs: ncells x N, cell_lverts: ncells x (dim + 1));
  // the most DoFs and vertices of a tile (the shared memory: (2 nc maxd + dim maxv) doubles)
  const int *tile_off, *tile_dofs, *tile_voff, *tile_verts;
  const unsigned short *cell_ldofs, *cell_lverts;
  int tile_maxd, tile_maxv;
};

struct mf_sx_table {
  int dim, p, nnodes, nq;
  const void *fn[MF_SX_NKERNELS];
  // copy the reference matrices (mf_sx_ref_doubles, S[m][j][i]) into this (dim, p)'s constant memory;
  // NULL when they do not fit (MF_SX_CONST_MAX_BYTES)
  cudaError_t (*set_const)(const double *S);
  // the same for the dim^2 matrices of elasticity, K[l][m][j][i] = sum_q w G_qil G_qjm (mf_sx_elas_doubles)
  cudaError_t (*set_const_elas)(const double *K);
  // the same for the gradient table E (mf_sx_grad_doubles; it always fits)
  cudaError_t (*set_const_grad)(const double *E);
};
// the reference matrices go to constant memory up to this size (of the 64 KiB of a module)
#define MF_SX_CONST_MAX_BYTES (60 * 1024)

__host__ __device__ constexpr int mf_sx_nnodes(int dim, int p)
{
  return dim == 2 ? (p + 1) * (p + 2) / 2 : (p + 1) * (p + 2) * (p + 3) / 6;
}
// points of the default rule (exact to degree 2p): n = p + 1 Gauss-Jacobi points per direction, n^dim
__host__ __device__ constexpr int mf_sx_nq(int dim, int p)
{
  return dim == 2 ? (p + 1) * (p + 1) : (p + 1) * (p + 1) * (p + 1);
}
__host__ __device__ constexpr int mf_sx_nmat(int dim) { return 1 + dim * (dim + 1) / 2; }
// doubles of the quadrature tables B, G, w; of the reference matrices
__host__ __device__ constexpr int mf_sx_table_doubles(int dim, int N, int NQ) { return NQ * N * (1 + dim) + NQ; }
__host__ __device__ constexpr int mf_sx_ref_doubles(int dim, int N) { return mf_sx_nmat(dim) * N * N; }
__host__ __device__ constexpr int mf_sx_elas_doubles(int dim, int N) { return dim * dim * N * N; }
// nodes of P_{p-1} (1 for p = 1) and doubles of the gradient table E
__host__ __device__ constexpr int mf_sx_n1(int dim, int p) { return mf_sx_nnodes(dim, p - 1); }
__host__ __device__ constexpr int mf_sx_grad_doubles(int dim, int p) { return dim * mf_sx_n1(dim, p) * mf_sx_nnodes(dim, p); }
// the gradient form with a coefficient keeps its copy of the n1 x dim values in shared memory (per thread) where
// n1 > 10 (3D P4), else in registers
__host__ __device__ constexpr bool mf_sx_gk_shared(int dim, int p) { return mf_sx_n1(dim, p) > 10; }
// per cell of a tile, in doubles: tiled quadrature (geometry, values, point data), tiled reference
__host__ __device__ constexpr int mf_sx_geo(int dim) { return dim * dim + 1; }
__host__ __device__ constexpr int mf_sx_tiled_q_cell(int dim, int N, int NQ, int NC)
{
  return mf_sx_geo(dim) + N * NC + NQ * (NC == 1 ? 1 + dim : dim * dim) + N; // + N ints counted as doubles
}
__host__ __device__ constexpr int mf_sx_tiled_r_cell(int dim, int N) { return mf_sx_nmat(dim) + N; }
// tiled gradient form: per cell (geometry, values, the values at the nodes of P_{p-1}, DoF ids); the tables staged
// (E in both orders, the mass matrix with the mass part)
__host__ __device__ constexpr int mf_sx_tiled_g_cell(int dim, int p, int NC)
{
  return mf_sx_geo(dim) + mf_sx_nnodes(dim, p) * NC + mf_sx_n1(dim, p) * dim * NC + mf_sx_nnodes(dim, p);
}
__host__ __device__ constexpr int mf_sx_tiled_g_tables(int dim, int p, bool mass)
{
  return 2 * mf_sx_grad_doubles(dim, p) + (mass ? mf_sx_nnodes(dim, p) * mf_sx_nnodes(dim, p) : 0);
}
// cells of a tile of the shared scatter (threads per block)
#define MF_SX_SHARED_TILE 128

#endif
