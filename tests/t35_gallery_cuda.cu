// t35_gallery_cuda.cu -- the device side of t35_gallery: the gallery calls of t34_eval (t35_gallery.h)
// run in a kernel, one case per thread, so that the CUDA compilation of lib/physics/mf_gallery.h is
// checked against the same closed forms as the host's.
#include <cuda_runtime.h>
#include <stdio.h>

#include "t35_gallery.h"

__global__ void k_t34_eval(const t34_case *in, t34_out *out, int n)
{
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) t34_eval(&in[i], &out[i]);
}

// out[0 .. n) from in[0 .. n) on the device; nonzero with a message on a CUDA error
extern "C" int t34_eval_cuda(const t34_case *in, t34_out *out, int n, char *msg, size_t len)
{
  t34_case *din = NULL;
  t34_out *dout = NULL;
  cudaError_t e = cudaMalloc((void **)&din, sizeof(t34_case) * n);
  if (e == cudaSuccess) e = cudaMalloc((void **)&dout, sizeof(t34_out) * n);
  if (e == cudaSuccess) e = cudaMemcpy(din, in, sizeof(t34_case) * n, cudaMemcpyHostToDevice);
  if (e == cudaSuccess) {
    k_t34_eval<<<(n + 127) / 128, 128>>>(din, dout, n);
    e = cudaGetLastError();
  }
  if (e == cudaSuccess) e = cudaMemcpy(out, dout, sizeof(t34_out) * n, cudaMemcpyDeviceToHost);
  if (e != cudaSuccess) snprintf(msg, len, "%s", cudaGetErrorString(e));
  cudaFree(din);
  cudaFree(dout);
  return e != cudaSuccess;
}
