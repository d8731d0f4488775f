// copies.cu -- the set-up's large copies between host and device (mf_cuda_upload, mf_cuda_download of
// mf_cuda_common.cuh): through the context's pinned staging buffers (mf_cuda_stage, device.cu), the host's
// side copied by all OpenMP threads.
#include "mf_cuda_common.cuh"

/* Host to device. Large copies go through two pinned buffers in turn: the host copies a chunk into
 * one (all OpenMP threads) while the other's chunk moves; a pageable cudaMemcpy stages through one
 * buffer with a single thread. */
static cudaError_t copy_to_device(mf_context ctx, void *dst, const void *src, size_t bytes)
{
  const size_t chunk = (size_t)1 << 25;
  void *stage = NULL;
  if (bytes < 2 * chunk || mf_cuda_stage(ctx, 2 * chunk, &stage)) return cudaMemcpy(dst, src, bytes, cudaMemcpyHostToDevice);
  cudaEvent_t ev[2] = {NULL, NULL};
  cudaError_t e = cudaEventCreateWithFlags(&ev[0], cudaEventDisableTiming);
  if (e == cudaSuccess) e = cudaEventCreateWithFlags(&ev[1], cudaEventDisableTiming);
  for (size_t off = 0, k = 0; e == cudaSuccess && off < bytes; off += chunk, k++) {
    const int b = (int)(k % 2);
    const size_t n = bytes - off < chunk ? bytes - off : chunk;
    char *buf = (char *)stage + (size_t)b * chunk;
    if (k >= 2) e = cudaEventSynchronize(ev[b]);
    if (e != cudaSuccess) break;
    mf_parallel_copy(buf, (const char *)src + off, n);
    e = cudaMemcpyAsync((char *)dst + off, buf, n, cudaMemcpyHostToDevice, 0);
    if (e == cudaSuccess) e = cudaEventRecord(ev[b], 0);
  }
  /* all chunks done before the buffers are reused, also after an error */
  cudaError_t es = cudaStreamSynchronize(0);
  if (e == cudaSuccess) e = es;
  for (int b = 0; b < 2; b++)
    if (ev[b]) cudaEventDestroy(ev[b]);
  return e;
}

/* Device to host, the reverse of copy_to_device: large copies through a pinned buffer, chunk by chunk (the
 * device's copy, then all OpenMP threads copy it out); small ones by one cudaMemcpy. */
int mf_cuda_download(mf_context ctx, void *host, const void *dev, size_t bytes, const char *what)
{
  const size_t chunk = (size_t)1 << 25;
  void *stage = NULL;
  cudaError_t e = cudaSuccess;
  if (bytes < 2 * chunk || mf_cuda_stage(ctx, 2 * chunk, &stage)) e = cudaMemcpy(host, dev, bytes, cudaMemcpyDeviceToHost);
  else
    for (size_t off = 0; e == cudaSuccess && off < bytes; off += chunk) {
      const size_t n = bytes - off < chunk ? bytes - off : chunk;
      e = cudaMemcpy(stage, (const char *)dev + off, n, cudaMemcpyDeviceToHost);
      if (e == cudaSuccess) mf_parallel_copy((char *)host + off, stage, n);
    }
  if (e != cudaSuccess)
    return mf_error_set(ctx, MF_ERR_CUDA, __FILE__, __LINE__, __func__, "copying %zu bytes of %s to the host: %s", bytes,
                        what, cudaGetErrorString(e));
  return 0;
}

int mf_cuda_upload(mf_context ctx, void **p, const void *host, size_t bytes, const char *what)
{
  MF_CALL(mf_cuda_malloc(ctx, p, bytes, what));
  if (bytes) {
    cudaError_t e = copy_to_device(ctx, *p, host, bytes);
    if (e != cudaSuccess) {
      mf_cuda_free(ctx, *p);
      *p = NULL;
      return mf_error_set(ctx, MF_ERR_CUDA, __FILE__, __LINE__, __func__, "copying %zu bytes of %s to the device: %s",
                          bytes, what, cudaGetErrorString(e));
    }
  }
  return 0;
}
