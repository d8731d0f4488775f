// memory.cu -- the context's device memory (mf_cuda_malloc, mf_cuda_free: every allocation recorded against
// its limit and peak; mf_cuda_require; copies of host arrays shared by their holders: mf_cuda_share), the pinned staging buffer (mf_cuda_stage) and the set-up's large copies
// through it (mf_cuda_upload, mf_cuda_download; the host's side copied by all OpenMP threads). Calls nothing
// else of lib/cuda/.
#include "mf_cuda_common.cuh"

int mf_cuda_malloc(mf_context ctx, void **p, size_t bytes, const char *what)
{
  mf_cuda_context *c = mf_cuda_ctx(ctx);
  *p = NULL;
  if (bytes == 0) bytes = 8;
  if (c->mem_limit && c->mem_in_use + bytes > c->mem_limit)
    return mf_error_set(ctx, MF_ERR_MEMORY, __FILE__, __LINE__, __func__,
                        "device memory limit: allocating %zu bytes for %s would pass the limit of %zu bytes (%zu in use)",
                        bytes, what, c->mem_limit, c->mem_in_use);
  if (c->nallocs == c->cap_allocs) {
    int cap = c->cap_allocs ? 2 * c->cap_allocs : 64;
    mf_cuda_alloc *a = (mf_cuda_alloc *)realloc(c->allocs, sizeof *a * (size_t)cap);
    MF_CHECK(a, ctx, MF_ERR_MEMORY, "out of host memory (%zu bytes)", sizeof *a * (size_t)cap);
    c->allocs = a;
    c->cap_allocs = cap;
  }
  cudaError_t e = cudaMalloc(p, bytes);
  if (e != cudaSuccess) {
    cudaGetLastError();
    *p = NULL;
    size_t freeb = 0, total = 0;
    cudaMemGetInfo(&freeb, &total);
    return mf_error_set(ctx, e == cudaErrorMemoryAllocation ? MF_ERR_MEMORY : MF_ERR_CUDA, __FILE__, __LINE__, __func__,
                        "out of device memory allocating %zu bytes for %s (%zu of %zu bytes free): %s", bytes, what,
                        freeb, total, cudaGetErrorString(e));
  }
  c->allocs[c->nallocs].ptr = *p;
  c->allocs[c->nallocs].bytes = bytes;
  c->allocs[c->nallocs].host = NULL;
  c->allocs[c->nallocs].fp = 0;
  c->allocs[c->nallocs++].refs = 0;
  c->mem_in_use += bytes;
  if (c->mem_in_use > c->mem_peak) c->mem_peak = c->mem_in_use;
  return 0;
}

void mf_cuda_free(mf_context ctx, void *p)
{
  if (!p) return;
  mf_cuda_context *c = mf_cuda_ctx(ctx);
  for (int k = c->nallocs - 1; k >= 0; k--) /* recent allocations are freed first, mostly */
    if (c->allocs[k].ptr == p) {
      if (c->allocs[k].refs > 1) { /* a shared copy that others still hold */
        c->allocs[k].refs--;
        return;
      }
      c->mem_in_use -= c->allocs[k].bytes;
      c->allocs[k] = c->allocs[--c->nallocs];
      break;
    }
  cudaFree(p);
  cudaGetLastError(); /* a pointer of no record (made outside mf_cuda_malloc): its error is not the next launch's */
}

void mf_cuda_free_all(mf_context ctx)
{
  mf_cuda_context *c = mf_cuda_ctx(ctx);
  for (int k = 0; k < c->nallocs; k++) cudaFree(c->allocs[k].ptr); /* what the context's objects still hold */
  c->nallocs = 0;
  c->mem_in_use = 0;
  cudaGetLastError();
}

int mf_cuda_require(mf_context ctx, size_t bytes, const char *what)
{
  mf_cuda_context *c = mf_cuda_ctx(ctx);
  size_t freeb = 0, total = 0;
  MF_CUDA_CALL(ctx, cudaMemGetInfo(&freeb, &total));
  size_t avail = freeb;
  if (c->mem_limit) {
    size_t left = c->mem_limit > c->mem_in_use ? c->mem_limit - c->mem_in_use : 0;
    if (left < avail) avail = left;
  }
  if (bytes > avail) {
    char lim[96] = "";
    if (c->mem_limit) snprintf(lim, sizeof lim, ", limit %zu bytes with %zu in use", c->mem_limit, c->mem_in_use);
    return mf_error_set(ctx, MF_ERR_MEMORY, __FILE__, __LINE__, __func__,
                        "%s needs %zu bytes of device memory but %zu are available (%zu of %zu free on device %d%s)",
                        what, bytes, avail, freeb, total, c->device, lim);
  }
  return 0;
}

int mf_cuda_stage(mf_context ctx, size_t bytes, void **host)
{
  mf_cuda_context *c = mf_cuda_ctx(ctx);
  if (bytes > c->stage_bytes) {
    if (c->stage_pinned) cudaFreeHost(c->stage);
    else free(c->stage);
    c->stage = NULL;
    c->stage_bytes = 0;
    c->stage_pinned = cudaMallocHost(&c->stage, bytes) == cudaSuccess;
    if (!c->stage_pinned) { /* pinned memory may be scarce: pageable works, only slower */
      cudaGetLastError();
      c->stage = malloc(bytes);
      MF_CHECK(c->stage, ctx, MF_ERR_MEMORY, "out of host memory allocating %zu bytes for set-up transfers", bytes);
    }
    c->stage_bytes = bytes;
  }
  *host = c->stage;
  return 0;
}

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

/* A fingerprint of a host array: its size and all its bytes up to 4 KiB, else 64 words spread over it (another
 * array at the same address and of the same size is told apart in practice; the rule of mf_cuda_share, not
 * this, is what guarantees it). */
static uint64_t fingerprint(const void *host, size_t bytes)
{
  uint64_t h = 1469598103934665603ull ^ bytes;
  const unsigned char *b = (const unsigned char *)host;
  if (bytes <= 4096) { /* a small array: all of it */
    for (size_t i = 0; i < bytes; i++) h = (h ^ b[i]) * 1099511628211ull;
    return h;
  }
  for (size_t k = 0; k < 64; k++) {
    uint64_t w;
    memcpy(&w, b + k * ((bytes - 8) / 63), 8);
    h = (h ^ w) * 1099511628211ull;
    h ^= h >> 29;
  }
  return h;
}

int mf_cuda_share(mf_context ctx, void **p, const void *host, size_t bytes, const char *what)
{
  mf_cuda_context *c = mf_cuda_ctx(ctx);
  *p = NULL;
  const size_t sz = bytes ? bytes : 8;
  const uint64_t fp = fingerprint(host, bytes);
  for (int k = 0; k < c->nallocs; k++) {
    mf_cuda_alloc *a = &c->allocs[k];
    if (a->refs > 0 && a->host == host && a->bytes == sz && a->fp == fp) {
      a->refs++;
      *p = a->ptr;
      return 0;
    }
  }
  MF_CALL(mf_cuda_upload(ctx, p, host, bytes, what));
  for (int k = c->nallocs - 1; k >= 0; k--)
    if (c->allocs[k].ptr == *p) {
      c->allocs[k].host = host;
      c->allocs[k].fp = fp;
      c->allocs[k].refs = 1;
      break;
    }
  return 0;
}

int mf_cuda_retain(mf_context ctx, void *p)
{
  mf_cuda_context *c = mf_cuda_ctx(ctx);
  for (int k = 0; p && k < c->nallocs; k++)
    if (c->allocs[k].ptr == p && c->allocs[k].refs > 0) {
      c->allocs[k].refs++;
      return 1;
    }
  return 0;
}

namespace {
__global__ void k_round(float *out, const double *in, size_t n)
{
  for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x)
    out[i] = (float)in[i];
}
} // namespace

int mf_cuda_round(mf_context ctx, float *out, const double *in, size_t n, const char *what)
{
  if (!n) return 0;
  k_round<<<1024, 256>>>(out, in, n);
  const cudaError_t e = mf_cuda_launch_status();
  if (e != cudaSuccess)
    return mf_error_set(ctx, MF_ERR_CUDA, __FILE__, __LINE__, __func__, "kernel '%s': %s (%s)%s", what,
                        cudaGetErrorString(e), cudaGetErrorName(e), MF_CUDA_LAUNCH_HINT);
  return 0;
}
