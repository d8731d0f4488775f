// triad.cu -- the bandwidth ceiling measured in the same run as the operators: a STREAM triad
// a = b + s c over three device arrays, bytes counted as 2 reads + 1 write per element.
#include <cuda_runtime.h>
#include <stdlib.h>

__global__ void k_triad(double *a, const double *b, const double *c, double s, size_t n)
{
  for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x)
    a[i] = b[i] + s * c[i];
}
__global__ void k_fill(double *a, double v, size_t n)
{
  for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x)
    a[i] = v + 1e-3 * (double)(i % 1000);
}

static int cmp(const void *x, const void *y)
{
  float a = *(const float *)x, b = *(const float *)y;
  return (a > b) - (a < b);
}

// Median triad bandwidth in GB/s over reps runs on arrays of n doubles; negative on error.
extern "C" double mf_bench_triad(size_t n, int reps)
{
  double *a, *b, *c;
  if (cudaMalloc(&a, n * 8) != cudaSuccess) return -1;
  if (cudaMalloc(&b, n * 8) != cudaSuccess) return cudaFree(a), -1;
  if (cudaMalloc(&c, n * 8) != cudaSuccess) return cudaFree(a), cudaFree(b), -1;
  int sms = 132;
  int dev = 0; // the rank's device (mf_context_create chose it)
  cudaGetDevice(&dev);
  cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev);
  k_fill<<<sms * 8, 256>>>(b, 1.0, n);
  k_fill<<<sms * 8, 256>>>(c, 2.0, n);
  cudaEvent_t e0, e1;
  cudaEventCreate(&e0);
  cudaEventCreate(&e1);
  float *ms = (float *)malloc(sizeof(float) * reps);
  if (!ms) {
    cudaEventDestroy(e0), cudaEventDestroy(e1), cudaFree(a), cudaFree(b), cudaFree(c);
    return -1;
  }
  for (int r = -3; r < reps; r++) { // 3 warm-up runs
    cudaEventRecord(e0);
    k_triad<<<sms * 8, 256>>>(a, b, c, 0.5, n);
    cudaEventRecord(e1);
    cudaEventSynchronize(e1);
    if (r >= 0) cudaEventElapsedTime(&ms[r], e0, e1);
  }
  qsort(ms, reps, sizeof(float), cmp);
  double med = ms[reps / 2];
  double gbs = cudaGetLastError() == cudaSuccess ? 3.0 * 8.0 * n / (med * 1e-3) / 1e9 : -1.0;
  free(ms);
  cudaEventDestroy(e0);
  cudaEventDestroy(e1);
  cudaFree(a);
  cudaFree(b);
  cudaFree(c);
  return gbs;
}

// The FP64 ceiling measured the same way: independent fused multiply-adds in registers (8 chains
// per thread, no memory traffic), 2 flops each. Median GFLOP/s over reps runs; negative on error.
__global__ void k_fma(double *out, double a, double b, int iters)
{
  double x[8];
  for (int c = 0; c < 8; c++) x[c] = threadIdx.x * 1e-9 + c;
  for (int it = 0; it < iters; it++)
#pragma unroll
    for (int c = 0; c < 8; c++) x[c] = fma(x[c], a, b);
  double s = 0.0;
  for (int c = 0; c < 8; c++) s += x[c];
  if (s == 12345.678) out[0] = s; // never true: keeps the chains alive
}

extern "C" double mf_bench_fp64_peak(int reps)
{
  double *out;
  if (cudaMalloc(&out, sizeof(double)) != cudaSuccess) return -1;
  int sms = 132;
  int dev = 0; // the rank's device (mf_context_create chose it)
  cudaGetDevice(&dev);
  cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev);
  const int blocks = sms * 16, threads = 256, iters = 1 << 14;
  cudaEvent_t e0, e1;
  cudaEventCreate(&e0);
  cudaEventCreate(&e1);
  float *ms = (float *)malloc(sizeof(float) * reps);
  if (!ms) {
    cudaEventDestroy(e0), cudaEventDestroy(e1), cudaFree(out);
    return -1;
  }
  for (int r = -3; r < reps; r++) {
    cudaEventRecord(e0);
    k_fma<<<blocks, threads>>>(out, 0.999999, 1e-7, iters);
    cudaEventRecord(e1);
    cudaEventSynchronize(e1);
    if (r >= 0) cudaEventElapsedTime(&ms[r], e0, e1);
  }
  qsort(ms, reps, sizeof(float), cmp);
  double med = ms[reps / 2];
  double gf = cudaGetLastError() == cudaSuccess ? 2.0 * 8.0 * iters * (double)blocks * threads / (med * 1e-3) / 1e9 : -1.0;
  free(ms);
  cudaEventDestroy(e0);
  cudaEventDestroy(e1);
  cudaFree(out);
  return gf;
}

// CUDA-event timer of a host callback that launches device work: median ms per call.
extern "C" double mf_bench_time_ms(int (*fn)(void *), void *arg, int calls_per_rep, int reps, int *err)
{
  cudaEvent_t e0, e1;
  cudaEventCreate(&e0);
  cudaEventCreate(&e1);
  float *ms = (float *)malloc(sizeof(float) * reps);
  *err = 0;
  if (!ms) {
    cudaEventDestroy(e0);
    cudaEventDestroy(e1);
    *err = -1;
    return 0.0;
  }
  // every call is made whatever fails (several ranks: each call exchanges with the neighbours, so a
  // rank that stopped early would leave them waiting); the first failure is returned
  for (int r = -1; r < reps; r++) { // one warm-up repeat
    cudaEventRecord(e0);
    for (int k = 0; k < calls_per_rep; k++) {
      const int ek = fn(arg);
      if (!*err) *err = ek;
    }
    cudaEventRecord(e1);
    cudaEventSynchronize(e1);
    if (r >= 0) cudaEventElapsedTime(&ms[r], e0, e1);
  }
  if (cudaGetLastError() != cudaSuccess) *err = -1;
  qsort(ms, reps, sizeof(float), cmp);
  double med = ms[reps / 2] / calls_per_rep;
  free(ms);
  cudaEventDestroy(e0);
  cudaEventDestroy(e1);
  return med;
}

extern "C" void mf_bench_device_name(char *name, int len)
{
  cudaDeviceProp prop;
  int dev = 0;
  cudaGetDevice(&dev);
  if (cudaGetDeviceProperties(&prop, dev) == cudaSuccess) {
    int i = 0;
    for (; i < len - 1 && prop.name[i]; i++) name[i] = prop.name[i] == ',' ? ' ' : prop.name[i];
    name[i] = 0;
  } else {
    name[0] = 0;
  }
}
