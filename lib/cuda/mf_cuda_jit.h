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

#endif
