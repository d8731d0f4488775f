// simplex_source_jit.cuh -- the kernels of pointwise fields given as source (mf_source) on simplex spaces,
// compiled at run time by NVRTC (lib/cuda/simplex_source.cu) with the user's function for one space shape.
// Not compiled by nvcc: the including text defines MF_DIM, MF_NC, MF_NN (nodes per cell), MF_NQS (points
// of the rule the kernel is for) and mfree_source(dim, x, k, value), and includes physics/mf_physics.h.
// The CPU twins are the host functions of lib/simplex/space_simplex.c (mf_simplex_space_rhs, the L2
// error's cells) and lib/vector.c's interpolation, which the cpu backend runs with the same source
// compiled by the system C compiler. One thread per cell, the points in the host's order; tables: B
// (NQS x NN), the points (NQS x DIM) and the weights (summing to 1/dim!).
#include "cuda/source_nodes_jit.cuh"

namespace mfss {

__device__ inline long long thread_id() { return (long long)blockIdx.x * blockDim.x + threadIdx.x; }

// the cell's vertices X[a DIM + k]; |det J| returned (the host's mf_simplex_affine)
__device__ inline double vertices(const int *verts, const double *coords, long long e, double *X)
{
  const int *v = verts + (size_t)e * (MF_DIM + 1);
  for (int a = 0; a <= MF_DIM; a++)
    for (int k = 0; k < MF_DIM; k++) X[a * MF_DIM + k] = coords[3 * (size_t)v[a] + k];
  double J[9] = {0, 0, 0, 0, 0, 0, 0, 0, 0}, Ji[9];
  for (int k = 0; k < MF_DIM; k++)
    for (int l = 0; l < MF_DIM; l++) J[3 * k + l] = X[(l + 1) * MF_DIM + k] - X[k];
  return fabs(mf_phys_inverse(MF_DIM, J, Ji));
}

// point q's x in the cell of vertices X: x = v0 + sum_l (v_l+1 - v0) xi_l
__device__ inline void point_x(const double *X, const double *qp, int q, double *x)
{
  for (int k = 0; k < MF_DIM; k++) {
    x[k] = X[k];
    for (int l = 0; l < MF_DIM; l++) x[k] += (X[(l + 1) * MF_DIM + k] - X[k]) * qp[q * MF_DIM + l];
  }
}

} // namespace mfss

// b += the integral of f phi_i over each cell (the operator's rule), added to the cell's nodes atomically
extern "C" __global__ void mfree_sx_source_rhs(const int *verts, const double *coords, const int *cell_nodes,
                                               const double *B, const double *qp, const double *qw, const double *k,
                                               int ncells, double *b, unsigned long long *nonfinite)
{
  const long long e = mfss::thread_id();
  if (e >= ncells) return;
  double X[(MF_DIM + 1) * MF_DIM], be[MF_NN];
  const double det = mfss::vertices(verts, coords, e, X);
  for (int i = 0; i < MF_NN; i++) be[i] = 0.0;
  for (int q = 0; q < MF_NQS; q++) {
    double x[3] = {0, 0, 0}, f[MF_NC];
    mfss::point_x(X, qp, q, x);
    for (int c = 0; c < MF_NC; c++) f[c] = 0.0;
    mfree_source(MF_DIM, x, k, f);
    if (!MF_FINITE(f[0])) mfs_flag(nonfinite, ((unsigned long long)e << 20) | (unsigned long long)q);
    const double fw = f[0] * qw[q] * det;
    for (int i = 0; i < MF_NN; i++) be[i] += B[(size_t)q * MF_NN + i] * fw;
  }
  const int *cd = cell_nodes + (size_t)e * MF_NN;
  for (int i = 0; i < MF_NN; i++) atomicAdd(&b[cd[i]], be[i]);
}

// cellsum[e] = the integral over cell e of |u_h - u|^2 (the error's finer rule), the points in order
extern "C" __global__ void mfree_sx_source_l2(const int *verts, const double *coords, const int *cell_nodes,
                                              const double *B, const double *qp, const double *qw, const double *k,
                                              int ncells, const double *uh, double *cellsum,
                                              unsigned long long *nonfinite)
{
  const long long e = mfss::thread_id();
  if (e >= ncells) return;
  double X[(MF_DIM + 1) * MF_DIM], ue[MF_NN * MF_NC];
  const double det = mfss::vertices(verts, coords, e, X);
  const int *cd = cell_nodes + (size_t)e * MF_NN;
  for (int i = 0; i < MF_NN; i++)
    for (int c = 0; c < MF_NC; c++) ue[i * MF_NC + c] = uh[(size_t)cd[i] * MF_NC + c];
  double sum = 0.0;
  for (int q = 0; q < MF_NQS; q++) {
    double x[3] = {0, 0, 0}, ex[MF_NC];
    mfss::point_x(X, qp, q, x);
    for (int c = 0; c < MF_NC; c++) ex[c] = 0.0;
    mfree_source(MF_DIM, x, k, ex);
    double d2 = 0.0;
    for (int c = 0; c < MF_NC; c++) {
      if (!MF_FINITE(ex[c])) mfs_flag(nonfinite, ((unsigned long long)e << 20) | (unsigned long long)q);
      double vh = 0.0;
      for (int i = 0; i < MF_NN; i++) vh += B[(size_t)q * MF_NN + i] * ue[i * MF_NC + c];
      d2 += (vh - ex[c]) * (vh - ex[c]);
    }
    sum += d2 * qw[q] * det;
  }
  cellsum[e] = sum;
}
