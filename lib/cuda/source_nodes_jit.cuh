// source_nodes_jit.cuh -- the nodes' values of a pointwise field given as source (mf_source), compiled at run
// time by NVRTC for either family (lib/cuda/source_jit.cuh on hexes, lib/cuda/simplex_source_jit.cuh on
// simplices). Not compiled by nvcc: the including text defines MF_DIM, MF_NC and mfree_source(dim, x, k,
// value). The CPU twin is the host interpolation of lib/vector.c with the source compiled by the system C
// compiler.
#ifndef MF_SOURCE_NODES_JIT_CUH
#define MF_SOURCE_NODES_JIT_CUH

// the first flagged item (node or cell << 20 | point) where a value is not finite
__device__ inline void mfs_flag(unsigned long long *flag, unsigned long long what) { atomicMin(flag, what); }

// v at the nodes (node n's point at coords[n * cstride]): every entry (boundary = 0), or the boundary
// entries and 0 elsewhere (boundary = 1, marks bc per entry)
extern "C" __global__ void mfree_source_nodes(const double *coords, int cstride, int nnodes, const unsigned char *bc,
                                              int boundary, const double *k, double *v, unsigned long long *nonfinite)
{
  const int n = blockIdx.x * blockDim.x + threadIdx.x;
  if (n >= nnodes) return;
  double x[3] = {0.0, 0.0, 0.0}, val[MF_NC];
  for (int d = 0; d < MF_DIM; d++) x[d] = coords[(size_t)n * cstride + d];
  for (int c = 0; c < MF_NC; c++) val[c] = 0.0;
  bool any = !boundary;
  for (int c = 0; c < MF_NC && !any; c++) any = bc[(size_t)n * MF_NC + c] != 0;
  if (any) mfree_source(MF_DIM, x, k, val);
  for (int c = 0; c < MF_NC; c++) {
    const size_t e = (size_t)n * MF_NC + c;
    const bool set = !boundary || bc[e];
    if (set && !MF_FINITE(val[c])) mfs_flag(nonfinite, (unsigned long long)n);
    v[e] = set ? val[c] : 0.0;
  }
}

#endif
