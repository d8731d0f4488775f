/* mf_cuda_jit.h -- private to the cuda backend (C++): the run-time compiled libraries of lib/cuda/physics.cu,
 * shared with lib/cuda/source.cu. */
#ifndef MF_CUDA_JIT_H
#define MF_CUDA_JIT_H

#include <cuda_runtime.h>

#include <string>

#include "mfree_impl.h"

/** The library of the program text prog (the library's headers embedded): loaded already in this process,
 *  from the cache folder, or compiled now by NVRTC (set-up phase "compile"). */
int mf_cuda_jit_library(mf_context ctx, const std::string &prog, cudaLibrary_t *lib);

namespace mf_jit { // the helpers both files use

// a failed CUDA call recorded on ctx ("what: reason"); the error it left is cleared
inline int cuda_fail(mf_context ctx, cudaError_t e, const char *what)
{
  cudaGetLastError();
  return mf_error_set(ctx, MF_ERR_CUDA, __FILE__, __LINE__, __func__, "%s: %s", what, cudaGetErrorString(e));
}

// n values to a new device array (at least one element allocated)
template <class T>
int upload(mf_context ctx, T **dst, const T *src, size_t n, const char *what)
{
  cudaError_t e = cudaMalloc((void **)dst, sizeof(T) * (n ? n : 1));
  if (e == cudaSuccess && n) e = cudaMemcpy(*dst, src, sizeof(T) * n, cudaMemcpyHostToDevice);
  if (e != cudaSuccess) return cuda_fail(ctx, e, what);
  return 0;
}

// cells per block of the one-thread-per-point kernels: about 256 threads, at least one cell
inline int cells_per_block(int nqp) { return nqp >= 256 ? 1 : 256 / nqp; }

} // namespace mf_jit

#endif
