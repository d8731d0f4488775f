// source_jit.cuh -- the kernels of pointwise fields given as source (mf_source: coefficients, right-hand
// sides, boundary values, exact solutions), compiled at run time by NVRTC (lib/cuda/source.cu) with the
// user's function for one cell shape. Not compiled by nvcc: the including text defines MF_DIM, MF_N1,
// MF_NQ, MF_NC, MF_CPB (jit_cell.cuh) and mfree_source(dim, x, k, value), which calls the user's function,
// and includes hanging/mf_hanging.h. The CPU twins are the host functions of lib/vector.c and the
// families' rhs and l2_error, which the cpu backend runs with the same source compiled by the system C
// compiler (lib/source.c).
#include "cuda/jit_cell.cuh"
#include "cuda/source_nodes_jit.cuh"

// b += the integral of f phi_i (the rule of the shape: Gauss q = p + 1), the geometry made here
extern "C" __global__ void __launch_bounds__(MF_NT)
    mfree_source_rhs(const int *cell_nodes, const short *mask_all, const double *coords, int cstride, const double *B,
                     const double *D, const double *P, const double *qw, const double *k, int ncells, double *b,
                     unsigned long long *nonfinite)
{
  mfj::block bl = mfj::make_block(mf_sm, B, D, P, qw, ncells);
  const int mask = mask_all ? mask_all[bl.cell] : 0;
  const bool any_mask = __syncthreads_or(mask != 0);
  double x[3] = {0, 0, 0}, J[9] = {0, 0, 0, 0, 0, 0, 0, 0, 0}, Ji[9];
  mfj::geometry(bl, cell_nodes, coords, cstride, mask, any_mask, x, J);
  const double W = mfj::weight(bl) * fabs(mf_phys_inverse(MF_DIM, J, Ji));
  double f[MF_NC], r0[MF_NC], r1[MF_NC * MF_DIM];
  for (int c = 0; c < MF_NC; c++) f[c] = 0.0;
  if (bl.active) mfree_source(MF_DIM, x, k, f);
  for (int c = 0; c < MF_NC; c++) {
    if (bl.active && !MF_FINITE(f[c])) mfs_flag(nonfinite, ((unsigned long long)bl.cell << 20) | (unsigned long long)bl.t.q);
    r0[c] = bl.active ? W * f[c] : 0.0;
    for (int l = 0; l < MF_DIM; l++) r1[c * MF_DIM + l] = 0.0;
  }
  mfj::back(bl, cell_nodes, b, mask, any_mask, r0, r1);
}

// cellsum[cell] = the integral over the cell of |u_h - u|^2 (the rule of the shape: Gauss q = p + 2), the
// points summed in order (deterministic)
extern "C" __global__ void __launch_bounds__(MF_NT)
    mfree_source_l2(const int *cell_nodes, const short *mask_all, const double *coords, int cstride, const double *B,
                    const double *D, const double *P, const double *qw, const double *k, int ncells, const double *uh,
                    double *cellsum, unsigned long long *nonfinite)
{
  mfj::block bl = mfj::make_block(mf_sm, B, D, P, qw, ncells);
  const int mask = mask_all ? mask_all[bl.cell] : 0;
  const bool any_mask = __syncthreads_or(mask != 0);
  double x[3] = {0, 0, 0}, J[9] = {0, 0, 0, 0, 0, 0, 0, 0, 0}, Ji[9];
  mfj::geometry(bl, cell_nodes, coords, cstride, mask, any_mask, x, J);
  const double W = mfj::weight(bl) * fabs(mf_phys_inverse(MF_DIM, J, Ji));
  double u[MF_NC], ref[MF_NC * MF_DIM], ex[MF_NC];
  mfj::field(bl, cell_nodes, uh, mask, any_mask, u, ref);
  for (int c = 0; c < MF_NC; c++) ex[c] = 0.0;
  if (bl.active) mfree_source(MF_DIM, x, k, ex);
  double e2 = 0.0;
  for (int c = 0; c < MF_NC; c++) {
    if (bl.active && !MF_FINITE(ex[c])) mfs_flag(nonfinite, ((unsigned long long)bl.cell << 20) | (unsigned long long)bl.t.q);
    e2 += (u[c] - ex[c]) * (u[c] - ex[c]);
  }
  bl.s0[bl.t.q] = W * e2;
  __syncthreads();
  if (bl.active && bl.t.q == 0) {
    double s = 0.0;
    for (int q = 0; q < MF_NQP; q++) s += bl.s0[q];
    cellsum[bl.cell] = s;
  }
}
