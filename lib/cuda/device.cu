// device.cu -- CUDA device discovery and the per-context device state.
#include "mf_cuda.h"

#include <cuda_runtime.h>

extern "C" int mf_cuda_device_count(void)
{
  int n = 0;
  if (cudaGetDeviceCount(&n) != cudaSuccess) {
    cudaGetLastError(); // clear the sticky "no device" error
    return 0;
  }
  return n;
}

extern "C" int mf_cuda_context_init(mf_context ctx)
{
  return mf_error_set(ctx, MF_ERR_BACKEND, __FILE__, __LINE__, __func__,
                      "backend 'cuda': the CUDA kernels are not part of this build yet");
}

extern "C" void mf_cuda_context_finalize(mf_context ctx) { (void)ctx; }
extern "C" int mf_cuda_space_setup(mf_space s) { return MF_ERR_BACKEND; }
extern "C" void mf_cuda_space_free(mf_space s) { (void)s; }
extern "C" int mf_cuda_vector_setup(mf_vector v) { return MF_ERR_BACKEND; }
extern "C" int mf_cuda_operator_setup(mf_operator op) { return MF_ERR_BACKEND; }
