/* mf_cuda_jit.h -- private to the cuda backend (C++): the run-time compiled libraries of lib/cuda/physics.cu,
 * shared with lib/cuda/source.cu. */
#ifndef MF_CUDA_JIT_H
#define MF_CUDA_JIT_H

#include <cuda_runtime.h>

#include <string>

#include "mfree_impl.h"
#include "physics/mf_physics_impl.h"

#include <stdio.h>

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

// n values to a new device array (at least one element allocated; on failure *dst is NULL)
template <class T>
int upload(mf_context ctx, T **dst, const T *src, size_t n, const char *what)
{
  cudaError_t e = cudaMalloc((void **)dst, sizeof(T) * (n ? n : 1));
  if (e == cudaSuccess && n) e = cudaMemcpy(*dst, src, sizeof(T) * n, cudaMemcpyHostToDevice);
  if (e != cudaSuccess) { // nothing half made is left: *dst NULL
    cudaFree(*dst);
    *dst = NULL;
    return cuda_fail(ctx, e, what);
  }
  return 0;
}

// cells per block of the one-thread-per-point kernels: about 256 threads, at least one cell
inline int cells_per_block(int nqp) { return nqp >= 256 ? 1 : 256 / nqp; }

// the kernel `name` of lib
inline int kernel(mf_context ctx, cudaLibrary_t lib, const char *name, cudaKernel_t *k)
{
  cudaError_t e = cudaLibraryGetKernel(k, lib, name);
  if (e != cudaSuccess) return cuda_fail(ctx, e, name);
  return 0;
}

// k on grid blocks of block threads (nothing where grid is 0); what names it in an error
inline int launch(mf_context ctx, cudaKernel_t k, unsigned grid, unsigned block, size_t shmem, void **args,
                  const char *what)
{
  if (!grid) return 0;
  cudaError_t e = cudaLaunchKernel((const void *)k, dim3(grid), dim3(block), args, shmem, 0);
  if (e == cudaSuccess) e = cudaGetLastError();
#ifdef MFREE_DEBUG_SYNC
  if (e == cudaSuccess) e = cudaDeviceSynchronize();
#endif
  if (e != cudaSuccess) return cuda_fail(ctx, e, what);
  return 0;
}

// a device flag of a kernel's checks, all bits set (none flagged); freed by the caller (cudaFree)
inline int new_flag(mf_context ctx, unsigned long long **flag, const char *what)
{
  cudaError_t e = cudaMalloc((void **)flag, sizeof **flag);
  if (e == cudaSuccess) e = cudaMemset(*flag, 0xff, sizeof **flag);
  if (e != cudaSuccess) {
    cudaFree(*flag);
    *flag = NULL;
    return cuda_fail(ctx, e, what);
  }
  return 0;
}

// the first flagged point (cell << 20 | q) of a device flag (all bits set: none), or -1
inline long long first_flag(mf_context ctx, unsigned long long *flag_dev, int *ierr)
{
  unsigned long long v = ~0ull;
  cudaError_t e = cudaMemcpy(&v, flag_dev, sizeof v, cudaMemcpyDeviceToHost);
  if (e != cudaSuccess) {
    *ierr = cuda_fail(ctx, e, "reading the kernel's checks");
    return -1;
  }
  return v == ~0ull ? -1 : (long long)v;
}

// *sum = the n cells' values of cellsum (device) added on the host in cell order (deterministic); cellsum freed
inline int cell_sums(mf_context ctx, double *cellsum, int n, double *sum)
{
  double *h = nullptr;
  int ierr = MF_CALLOC(ctx, (size_t)n + 1, &h);
  cudaError_t e = cudaSuccess;
  if (!ierr && (e = cudaMemcpy(h, cellsum, sizeof(double) * n, cudaMemcpyDeviceToHost)) != cudaSuccess)
    ierr = cuda_fail(ctx, e, "the cells' sums to the host");
  if (!ierr) {
    double t = 0.0;
    for (int c = 0; c < n; c++) t += h[c];
    *sum = t;
  }
  free(h);
  cudaFree(cellsum);
  return ierr;
}

// The user's source of ph (its #line origin kept) and the glue that calls its functions by number:
// mfree_f(t: 0 f0, 1 f1, ...) and mfree_g(t: 0..3 g0..g3, ...), a function it does not name doing nothing.
inline std::string physics_glue(const mf_phys *ph)
{
  std::string t = "#line 1 \"";
  t += mf_phys_source_origin(ph);
  t += "\"\n";
  t += mf_phys_source_text(ph);
  t += "\n#line 1 \"mfree glue\"\n";
  const char *sig = "(int t, int dim, int nc, const double *u, const double *du, const double *x, const double *k, double *out)";
  char buf[512];
  for (int w = 0; w < 2; w++) {
    t += w ? "__device__ inline void mfree_g" : "__device__ inline void mfree_f";
    t += sig;
    t += "\n{\n  switch (t) {\n";
    for (int i = 0; i < (w ? 4 : 2); i++) {
      const char *name = mf_phys_source_name(ph, w ? 2 + i : i);
      if (!name) continue;
      snprintf(buf, sizeof buf, "  case %d: %s(dim, nc, u, du, x, k, out); break;\n", i, name);
      t += buf;
    }
    t += "  default: break;\n  }\n}\n";
  }
  return t;
}

// The glue of a physics' boundary terms given as source: mfree_b(t, w, ...) calls term t's f0 (w = 0) or g0
// (w = 1), a function it does not name doing nothing.
inline std::string boundary_glue(const mf_phys *ph)
{
  std::string t = "__device__ inline void mfree_b(int t, int w, int dim, int nc, const double *u, const double *x, "
                  "const double *n, const double *k, double *out)\n{\n  switch (2 * t + w) {\n";
  char buf[512];
  for (int b = 0; b < ph->nbound; b++)
    for (int w = 0; w < 2; w++)
      if (ph->bname[b][w][0]) {
        snprintf(buf, sizeof buf, "  case %d: %s(dim, nc, u, x, n, k, out); break;\n", 2 * b + w, ph->bname[b][w]);
        t += buf;
      }
  t += "  default: break;\n  }\n}\n";
  return t;
}

// whether the boundary terms of ph run on the device: there are some, every one given as source (the
// physics', the same on every rank)
inline bool boundary_on_device(const mf_phys *ph)
{
  if (!ph->nbound) return false;
  for (int t = 0; t < ph->nbound; t++)
    if (!ph->bsrc[t]) return false;
  return true;
}

} // namespace mf_jit

#endif
