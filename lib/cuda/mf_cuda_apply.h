// mf_cuda_apply.h -- the launch interface of the sum-factorised apply kernels: their arguments, the
// launcher type and the lookup of one (dim, p). The generated kernel files (apply_inst.cu.in,
// apply_col_inst.cu.in, apply_otf_inst.cu.in) include only this, the gallery and the hanging-node
// constants: they compile without the library's object layouts, so a change to those does not rebuild
// the kernels.
#ifndef MF_CUDA_APPLY_H
#define MF_CUDA_APPLY_H

#include <cuda_runtime.h>
#include <stdint.h>

#include "base/mf_common.h"
#include "cuda/apply_args.h"

// The status after a kernel launch: the launch error (configuration). An execution error shows at
// the next synchronising call, which may blame a later kernel; a debug build (-DMFREE_DEBUG_SYNC=ON)
// synchronises here, so that a fault is reported at the kernel that made it.
static inline cudaError_t mf_cuda_launch_status(void)
{
  cudaError_t e = cudaGetLastError();
#ifdef MFREE_DEBUG_SYNC
  if (e == cudaSuccess) e = cudaDeviceSynchronize();
#endif
  return e;
}

// op: 0 mass, 1 Laplace, 2 Helmholtz; quad: MF_QUAD_*; column: the column design (apply_column.cuh),
// else one thread per point (apply_kernel.cuh; only it reads cells_per_block). Returns the launch's
// cudaError_t.
typedef cudaError_t (*mf_cuda_apply_fn)(const mf_cuda_apply_args *a);
// In a kernel design's namespace, given its launcher template LAUNCH<DIM, N1, NQ, OP, COLLOC, HANG, T>:
// lookup<DIM, P, T>(quad, op, hang), the launcher of one (dim, p) for the three rules (Gauss p+1,
// Gauss p+2, GLL p+1 collocated) and three operators, with or without hanging nodes.
#define MF_CUDA_APPLY_LOOKUP(LAUNCH)                                                                               \
  template <int DIM, int P, bool H, class T>                                                                      \
  mf_cuda_apply_fn lookup_h(int quad, int op)                                                                     \
  {                                                                                                               \
    constexpr int N1 = P + 1;                                                                                     \
    static const mf_cuda_apply_fn table[3][3] = {                                                                 \
        {LAUNCH<DIM, N1, N1, 0, false, H, T>, LAUNCH<DIM, N1, N1, 1, false, H, T>,                                \
         LAUNCH<DIM, N1, N1, 2, false, H, T>},                                                                    \
        {LAUNCH<DIM, N1, N1 + 1, 0, false, H, T>, LAUNCH<DIM, N1, N1 + 1, 1, false, H, T>,                        \
         LAUNCH<DIM, N1, N1 + 1, 2, false, H, T>},                                                                \
        {LAUNCH<DIM, N1, N1, 0, true, H, T>, LAUNCH<DIM, N1, N1, 1, true, H, T>, LAUNCH<DIM, N1, N1, 2, true, H, T>}}; \
    return table[quad][op];                                                                                       \
  }                                                                                                               \
  template <int DIM, int P, class T>                                                                              \
  mf_cuda_apply_fn lookup(int quad, int op, int hang)                                                             \
  {                                                                                                               \
    return hang ? lookup_h<DIM, P, true, T>(quad, op) : lookup_h<DIM, P, false, T>(quad, op);                     \
  }
extern "C" mf_cuda_apply_fn mf_cuda_apply_lookup(int dim, int degree, int quad, int op, int hang, int single,
                                                 int column);
// The on-the-fly variants of the point design (double only).
extern "C" mf_cuda_apply_fn mf_cuda_apply_otf_lookup(int dim, int degree, int quad, int op, int hang);

#endif
