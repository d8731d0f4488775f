// apply_column.cuh -- the built-in operators' kernels of the column design (column_cell.cuh): the
// launch shape, one kernel per (dim, N1, NQ, operator, collocation, hanging nodes, type), its launcher
// and their lookup.
#ifndef MF_APPLY_COLUMN_CUH
#define MF_APPLY_COLUMN_CUH

#include "mf_cuda_apply.h"
#include "column_cell.cuh"

namespace mfc {

// Threads of one cell, and cells per block: blocks of about 256 threads. minb: the blocks per SM the
// register budget of the gradient kernels must allow (0: no cap).
#ifndef MF_COL_MIN_BLOCKS
#define MF_COL_MIN_BLOCKS 0
#endif
template <int DIM, int NQ, int OP>
struct shape {
  static constexpr int nt = DIM == 3 ? NQ * NQ : NQ;
  static constexpr int cpb = 256 / nt > 0 ? 256 / nt : 1;
  static constexpr int threads = cpb * nt;
  static constexpr int minb = OP == 0 ? 0 : MF_COL_MIN_BLOCKS; // 0: as if not given
};

// OP: the gallery's entry (0 mass, 1 Laplace, 2 Helmholtz), one component
template <int DIM, int N1, int NQ, int OP, bool COLLOC, bool HANG, class T>
__global__ void __launch_bounds__(shape<DIM, NQ, OP>::threads, shape<DIM, NQ, OP>::minb) apply(const mf_cuda_apply_args a)
{
  extern __shared__ __align__(16) unsigned char smem_raw[];
  column_apply<DIM, N1, NQ, mf_pw_has(OP, MF_PW_VALUE), mf_pw_has(OP, MF_PW_GRAD), COLLOC, HANG, 1,
               shape<DIM, NQ, OP>::cpb, T>(a, smem_raw);
}

template <int DIM, int N1, int NQ, int OP, bool COLLOC, bool HANG, class T>
cudaError_t launch(const mf_cuda_apply_args *a)
{
  constexpr int NT = shape<DIM, NQ, OP>::nt, CPB = shape<DIM, NQ, OP>::cpb;
  const int ncells = a->cell_end - a->cell_begin;
  if (ncells <= 0) return cudaSuccess;
  const size_t shmem = sizeof(T) * colbuf_size(DIM, N1, NQ, CPB, mf_pw_has(OP, MF_PW_GRAD), HANG);
  if (shmem > 48 * 1024) {
    cudaError_t e = cudaFuncSetAttribute(apply<DIM, N1, NQ, OP, COLLOC, HANG, T>,
                                         cudaFuncAttributeMaxDynamicSharedMemorySize, (int)shmem);
    if (e != cudaSuccess) return e;
  }
  const int blocks = (ncells + CPB - 1) / CPB;
  apply<DIM, N1, NQ, OP, COLLOC, HANG, T><<<blocks, CPB * NT, shmem>>>(*a);
  return mf_cuda_launch_status();
}

MF_CUDA_APPLY_LOOKUP(launch)

} // namespace mfc

#endif
