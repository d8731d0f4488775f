// cuda_runtime.h -- a host stand-in for the CUDA runtime, only what lib/cuda/simplex_kernels.cuh and the
// hex cell designs of lib/cuda/cell_slab.cuh and cell_thread.cuh use, so that their kernels compile as
// C++ and run on the CPU (t25_simplex_emu, t46_hex_emu): a thread block is an OpenMP team (threadIdx.x =
// the thread number, blockDim.x = the team size), __syncthreads is an OpenMP barrier, shared memory a
// static array of the instantiation file, atomicAdd a critical section, constant memory a static array,
// a warp shuffle a write, a barrier, a read of the source lane's slot and a barrier (every thread of the
// team must call it: the kernels' shuffles are in uniform control flow). The kernels' indexing, phases
// and algebra are the GPU's; their speed is not.
#ifndef MF_SIMPLEX_EMU_CUDA_RUNTIME_H
#define MF_SIMPLEX_EMU_CUDA_RUNTIME_H
#include <math.h>
#include <omp.h>
#include <string.h>

#include <algorithm>

typedef int cudaError_t;
#define cudaSuccess 0
#define __global__
#define __device__
#define __host__
#define __forceinline__ inline
#define __launch_bounds__(...)
#define __constant__
#define __shared__
struct double2 {
  double x, y;
};
struct float2 {
  float x, y;
};
struct mf_emu_dim {
  int x;
};
extern mf_emu_dim mf_emu_block; // the block being run (set by the launcher)
inline mf_emu_dim mf_emu_tid() { return mf_emu_dim{omp_get_thread_num()}; }
inline mf_emu_dim mf_emu_bdim() { return mf_emu_dim{omp_get_num_threads()}; }
#define threadIdx (mf_emu_tid())
#define blockIdx mf_emu_block
#define blockDim (mf_emu_bdim())
#define __syncthreads() _Pragma("omp barrier")
template <class T> inline T __ldg(const T *p) { return *p; }
inline double atomicAdd(double *p, double v)
{
  double old;
#pragma omp critical(mf_emu_atomic)
  {
    old = *p;
    *p += v;
  }
  return old;
}
inline float atomicAdd(float *p, float v)
{
  float old;
#pragma omp critical(mf_emu_atomic)
  {
    old = *p;
    *p += v;
  }
  return old;
}
// __shfl_sync: the value of lane src (mod 32) of the caller's warp; mask ignored (every lane takes part)
inline double *mf_emu_shfl_slots()
{
  static double slots[1024];
  return slots;
}
template <class T> inline T __shfl_sync(unsigned mask, T v, int src)
{
  (void)mask;
  double *s = mf_emu_shfl_slots();
  const int tid = omp_get_thread_num();
  s[tid] = (double)v; // float and double values both exact in a double
#pragma omp barrier
  const T r = (T)s[(tid & ~31) + (src & 31)];
#pragma omp barrier
  return r;
}
using std::min;
template <class S> inline cudaError_t cudaMemcpyToSymbol(S &sym, const void *src, size_t n)
{
  memcpy(&sym, src, n);
  return cudaSuccess;
}
#endif
