// apply_args.h -- the arguments of one launch of a sum-factorised apply kernel, apart from the launch
// interface (mf_cuda_apply.h) so that the run-time compiled kernels (NVRTC, physics_jit.cuh) take the
// same structure: no host headers here.
#ifndef MF_APPLY_ARGS_H
#define MF_APPLY_ARGS_H
#include <stdint.h>

// Arguments of one matrix-free apply launch (one color, or all cells with atomics).
struct mf_cuda_apply_args {
  const int *cell_nodes;
  const unsigned char *bc; // NULL: no Dirichlet masking of the input
  const void *qd; // double or float, the kernel's type
  long long qd_batch_stride, qd_block_stride;
  int qd_batch;
  const double *B, *D;
  const int16_t *mask; // NULL: no hanging nodes on this mesh
  const double *P;
  const int *cell_list; // NULL: cells cell_begin..cell_end-1; else cell_list[cell_begin..cell_end-1]
  int cell_begin, cell_end, cells_per_block;
  int atomic;
  const void *x; // vectors of the kernel's type
  void *y;
  // geometry on the fly (point design, double): node coordinates component-major (component k of node
  // n at coords[k * coords_stride + n]), the coefficient per point (NULL: constant), the 1D weights,
  // and the factors a (mass part) and b (gradient part) of mf_qf_geometry
  const double *coords;
  long long coords_stride;
  const double *coefq, *qw;
  double qf_a, qf_b;
};

#endif
