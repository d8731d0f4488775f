// simplex.cu -- the simplex operators on the GPU (mf_simplex_cuda.h): the device object, the measured tuning,
// and the launchers. The cost model that picks a kernel configuration is simplex_model.cu's, the shared scatter's
// tiles simplex_tiles.cu's; the kernels are in simplex_kernels.cuh, instantiated per (dim, p) in generated files.
#include <limits.h>
#include <math.h>

#include "mf_cuda_common.cuh"
#include "mf_simplex_cuda.h"
#include "simplex_kernels.cuh"
#include "simplex_op.cuh"

#define MF_SX_TABLE_DECL(D, P)                                                                                     \
  extern "C" const mf_sx_table *mf_sx_table_d##D##_p##P##_d(void);                                                \
  extern "C" const mf_sx_table *mf_sx_table_d##D##_p##P##_s(void);
MF_SX_TABLE_DECL(2, 1) MF_SX_TABLE_DECL(2, 2) MF_SX_TABLE_DECL(2, 3) MF_SX_TABLE_DECL(2, 4)
MF_SX_TABLE_DECL(3, 1) MF_SX_TABLE_DECL(3, 2) MF_SX_TABLE_DECL(3, 3) MF_SX_TABLE_DECL(3, 4)

// the kernels of (dim, p) with the vectors in double or (single) in float
static const mf_sx_table *sx_table(int dim, int p, int single)
{
  typedef const mf_sx_table *(*fn)(void);
  static const fn t[2][2][MF_SIMPLEX_CUDA_MAX_DEGREE] = {
      {{mf_sx_table_d2_p1_d, mf_sx_table_d2_p2_d, mf_sx_table_d2_p3_d, mf_sx_table_d2_p4_d},
       {mf_sx_table_d3_p1_d, mf_sx_table_d3_p2_d, mf_sx_table_d3_p3_d, mf_sx_table_d3_p4_d}},
      {{mf_sx_table_d2_p1_s, mf_sx_table_d2_p2_s, mf_sx_table_d2_p3_s, mf_sx_table_d2_p4_s},
       {mf_sx_table_d3_p1_s, mf_sx_table_d3_p2_s, mf_sx_table_d3_p3_s, mf_sx_table_d3_p4_s}}};
  return t[single != 0][dim - 2][p - 1]();
}


// ---------------------------------------------------------------------------- memory helpers for C

extern "C" int mf_simplex_cuda_alloc(mf_context ctx, size_t bytes, double **p)
{
  MF_CALL(mf_cuda_require(ctx, bytes, "a simplex vector"));
  return mf_cuda_malloc(ctx, (void **)p, bytes, "a simplex vector");
}

extern "C" void mf_simplex_cuda_free(mf_context ctx, double *p) { mf_cuda_free(ctx, p); }

extern "C" int mf_simplex_cuda_copy(mf_context ctx, double *dst, const double *src, size_t n, int to_device)
{
  return mf_simplex_cuda_copy_bytes(ctx, dst, src, n * sizeof(double), to_device);
}
extern "C" int mf_simplex_cuda_copy_bytes(mf_context ctx, void *dst, const void *src, size_t bytes, int to_device)
{
  MF_CUDA_CALL(ctx, cudaMemcpy(dst, src, bytes, to_device ? cudaMemcpyHostToDevice : cudaMemcpyDeviceToHost));
  return 0;
}

// ---------------------------------------------------------------------------- apply

// x, y: device arrays of doubles, or of floats for a single-precision copy
static int sx_launch(mf_simplex_cuda_op_s *o, const mf_simplex_cuda_config *c, const void *x, void *y)
{
  mf_sx_args a;
  memset(&a, 0, sizeof a);
  a.coords = o->coords, a.cells = o->cells, a.cell_dofs = o->cell_dofs;
  a.B = o->B, a.G = o->G, a.w = o->w, a.S = o->S, a.E = o->E, a.coefq = o->coefq, a.coefqf = o->coefqf;
  a.K = o->K, a.Kf = o->Kf;
  a.a = o->a, a.b = o->b, a.lambda = o->lambda, a.mu = o->mu, a.mass_coef = o->mass_coef;
  a.ncells = o->ncells, a.tile = c->tile, a.stage = c->stage;
  a.tile_off = o->tile_off, a.tile_dofs = o->tile_dofs, a.tile_voff = o->tile_voff, a.tile_verts = o->tile_verts;
  a.cell_ldofs = o->cell_ldofs, a.cell_lverts = o->cell_lverts, a.tile_maxd = o->tile_maxd, a.tile_maxv = o->tile_maxv;
  if (o->single) a.xf = (const float *)x, a.yf = (float *)y;
  else a.x = (const double *)x, a.y = (double *)y;
  const void *fn = o->tab->fn[mf_sx_kernel(o, c->strategy, c->form, c->stage)];
  MF_CUDA_CALL(o->ctx, cudaMemsetAsync(y, 0, (o->single ? sizeof(float) : sizeof(double)) * (size_t)o->ndofs * o->ncomp, 0));
  if (o->ncells == 0) return 0;
  if (c->shmem > 48 * 1024)
    MF_CUDA_CALL(o->ctx, cudaFuncSetAttribute(fn, cudaFuncAttributeMaxDynamicSharedMemorySize, o->smem_optin));
  void *args[] = {&a};
  const unsigned grid = (unsigned)((o->ncells + c->tile - 1) / c->tile);
  cudaError_t e = cudaLaunchKernel(fn, dim3(grid), dim3(c->threads), args, c->shmem, 0);
  if (e != cudaSuccess) cudaGetLastError();
  MF_CHECK(e == cudaSuccess, o->ctx, MF_ERR_CUDA, "kernel 'simplex %s %s, %dD p = %d': %s (%s)",
           mf_sx_strategy_name(c->strategy),
           c->form == MF_SIMPLEX_CUDA_REFERENCE  ? "reference"
           : c->form == MF_SIMPLEX_CUDA_GRADIENT ? "gradient"
                                                 : "quadrature",
           o->dim, o->p, cudaGetErrorString(e),
           cudaGetErrorName(e));
  MF_CUDA_LAUNCH_CHECK(o->ctx, "simplex action");
  return 0;
}

extern "C" int mf_simplex_cuda_apply(mf_simplex_cuda_op o, const double *x, double *y)
{
  MF_CHECK(o && x && y, o ? o->ctx : NULL, MF_ERR_NULL, "operator, x or y is NULL");
  MF_CHECK(!o->single, o->ctx, MF_ERR_INCOMPATIBLE, "vectors in double for a single-precision simplex operator");
  return sx_launch(o, &o->cfg, x, y);
}

extern "C" int mf_simplex_cuda_apply_single(mf_simplex_cuda_op o, const float *x, float *y)
{
  MF_CHECK(o && x && y, o ? o->ctx : NULL, MF_ERR_NULL, "operator, x or y is NULL");
  MF_CHECK(o->single, o->ctx, MF_ERR_INCOMPATIBLE, "vectors in float for a double-precision simplex operator");
  return sx_launch(o, &o->cfg, x, y);
}

extern "C" int mf_simplex_cuda_diagonal(mf_simplex_cuda_op o, double *d)
{
  MF_CHECK(o && d, o ? o->ctx : NULL, MF_ERR_NULL, "operator or d is NULL");
  MF_CHECK(!o->single, o->ctx, MF_ERR_UNSUPPORTED,
           "the diagonal of a single-precision simplex operator: made from its double operator only");
  MF_CUDA_CALL(o->ctx, cudaMemsetAsync(d, 0, sizeof(double) * (size_t)o->ndofs * o->ncomp, 0));
  if (o->ncells == 0) return 0;
  mf_sx_args a; // the kernel of simplex_kernels.cuh, one cell per thread
  memset(&a, 0, sizeof a);
  a.coords = o->coords, a.cells = o->cells, a.cell_dofs = o->cell_dofs;
  a.B = o->B, a.G = o->G, a.w = o->w, a.coefq = o->coefq;
  a.a = o->a, a.b = o->b, a.lambda = o->lambda, a.mu = o->mu, a.mass_coef = o->mass_coef;
  a.ncells = o->ncells, a.tile = 128, a.y = d;
  void *args[] = {&a};
  cudaError_t e = cudaLaunchKernel(o->tab->fn[o->elasticity ? MF_SX_DIAG_E : MF_SX_DIAG],
                                   dim3((unsigned)((o->ncells + 127) / 128)), dim3(128), args, 0, 0);
  if (e != cudaSuccess) cudaGetLastError();
  MF_CHECK(e == cudaSuccess, o->ctx, MF_ERR_CUDA, "kernel 'simplex diagonal, %dD p = %d': %s (%s)", o->dim, o->p,
           cudaGetErrorString(e), cudaGetErrorName(e));
  return 0;
}

extern "C" long long mf_simplex_cuda_size(mf_simplex_cuda_op o) { return o ? (long long)o->ndofs * o->ncomp : 0; }

extern "C" int mf_simplex_cuda_apply_host(mf_simplex_cuda_op o, const double *x, double *y)
{
  MF_CHECK(o && x && y, o ? o->ctx : NULL, MF_ERR_NULL, "operator, x or y is NULL");
  MF_CHECK(!o->single, o->ctx, MF_ERR_INCOMPATIBLE, "host vectors in double for a single-precision simplex operator");
  const size_t n = (size_t)o->ndofs * o->ncomp;
  double *dx = NULL, *dy = NULL;
  int ierr = mf_simplex_cuda_alloc(o->ctx, 2 * n * sizeof(double), &dx);
  if (!ierr) dy = dx + n;
  if (!ierr) ierr = mf_simplex_cuda_copy(o->ctx, dx, x, n, 1);
  if (!ierr) ierr = mf_simplex_cuda_apply(o, dx, dy);
  if (!ierr) ierr = mf_simplex_cuda_copy(o->ctx, y, dy, n, 0);
  mf_cuda_free(o->ctx, dx);
  return ierr;
}

extern "C" int mf_simplex_cuda_apply_host_single(mf_simplex_cuda_op o, const float *x, float *y)
{
  MF_CHECK(o && x && y, o ? o->ctx : NULL, MF_ERR_NULL, "operator, x or y is NULL");
  MF_CHECK(o->single, o->ctx, MF_ERR_INCOMPATIBLE, "host vectors in float for a double-precision simplex operator");
  const size_t n = (size_t)o->ndofs * o->ncomp;
  float *dx = NULL;
  MF_CALL(mf_cuda_require(o->ctx, 2 * n * sizeof(float) + 8, "the product's vectors"));
  MF_CALL(mf_cuda_malloc(o->ctx, (void **)&dx, 2 * n * sizeof(float) + 8, "the product's vectors"));
  cudaError_t e = cudaMemcpy(dx, x, n * sizeof(float), cudaMemcpyHostToDevice);
  int ierr = e == cudaSuccess ? mf_simplex_cuda_apply_single(o, dx, dx + n) : 0;
  if (e == cudaSuccess && !ierr) e = cudaMemcpy(y, dx + n, n * sizeof(float), cudaMemcpyDeviceToHost);
  if (!ierr && e != cudaSuccess)
    ierr = mf_error_set(o->ctx, MF_ERR_CUDA, __FILE__, __LINE__, __func__, "copying the product's vectors: %s",
                        cudaGetErrorString(e));
  mf_cuda_free(o->ctx, dx);
  return ierr;
}

// ---------------------------------------------------------------------------- configuration

extern "C" int mf_simplex_cuda_get_config(mf_simplex_cuda_op o, mf_simplex_cuda_config *cfg)
{
  MF_CHECK(o && cfg, o ? o->ctx : NULL, MF_ERR_NULL, "operator or output is NULL");
  *cfg = o->cfg;
  return 0;
}

extern "C" int mf_simplex_cuda_candidates(mf_simplex_cuda_op o, mf_simplex_cuda_config *list, int max)
{
  if (!o) return -1;
  int n = 0;
  if (mf_sx_enumerate(o, list, max, &n)) return -1;
  return n;
}

extern "C" int mf_simplex_cuda_set_config(mf_simplex_cuda_op o, int strategy, int form, int tile, int threads, int stage)
{
  MF_CHECK(o, NULL, MF_ERR_NULL, "operator is NULL");
  MF_CHECK(strategy == MF_SIMPLEX_CUDA_THREAD || strategy == MF_SIMPLEX_CUDA_TILED || strategy == MF_SIMPLEX_CUDA_SHARED,
           o->ctx, MF_ERR_ARGUMENT, "strategy %d (0 thread, 1 tiled, 2 shared)", strategy);
  MF_CHECK(form == MF_SIMPLEX_CUDA_QUADRATURE || form == MF_SIMPLEX_CUDA_REFERENCE || form == MF_SIMPLEX_CUDA_GRADIENT,
           o->ctx, MF_ERR_ARGUMENT, "form %d (0 quadrature, 1 reference, 2 gradient)", form);
  MF_CHECK(form != MF_SIMPLEX_CUDA_REFERENCE || !o->has_coef, o->ctx, MF_ERR_UNSUPPORTED,
           "the reference-matrix form needs a constant coefficient (this operator is weighted by c(x))");
  MF_CHECK(form != MF_SIMPLEX_CUDA_GRADIENT || !o->has_coef || o->K || o->Kf, o->ctx, MF_ERR_UNSUPPORTED,
           "the gradient form with a coefficient c(x) needs a Laplace operator (a = 0, no mass part; this one: a = %g)",
           o->a);
  MF_CHECK(form != MF_SIMPLEX_CUDA_GRADIENT || strategy != MF_SIMPLEX_CUDA_THREAD || !o->elasticity ||
               o->tab->fn[MF_SX_THREAD_GEC],
           o->ctx, MF_ERR_UNSUPPORTED,
           "elasticity's gradient form one cell per thread is not compiled for %dD p = %d (its values do not fit in "
           "registers; the tiled strategy runs it)",
           o->dim, o->p);
  MF_CHECK(form != MF_SIMPLEX_CUDA_GRADIENT || o->elasticity || o->b != 0.0, o->ctx, MF_ERR_UNSUPPORTED,
           "the gradient form needs a stiffness part (this operator is a mass matrix)");
  MF_CHECK(strategy != MF_SIMPLEX_CUDA_SHARED || o->ntiles, o->ctx, MF_ERR_UNSUPPORTED,
           "the shared scatter: this operator's tiles were not made (they are for elasticity, or with tune or "
           "MFREE_SIMPLEX_SHARED=1, c = 1, where its kernels exist)");
  mf_simplex_cuda_config c;
  MF_CALL(mf_sx_model_best(o, strategy, form, tile, threads, stage, &c));
  c.tuned = 2;
  o->cfg = c;
  return 0;
}

extern "C" int mf_simplex_cuda_tune(mf_simplex_cuda_op o, int reps)
{
  MF_CHECK(o, NULL, MF_ERR_NULL, "operator is NULL");
  MF_CHECK(reps >= 1 && reps <= 1000, o->ctx, MF_ERR_ARGUMENT, "reps = %d (1..1000)", reps);
  int n = 0;
  MF_CALL(mf_sx_enumerate(o, NULL, 0, &n));
  MF_CHECK(n > 0, o->ctx, MF_ERR_UNSUPPORTED, "no configuration fits this device (%dD, p = %d)", o->dim, o->p);
  const size_t len = (size_t)o->ndofs * o->ncomp;
  mf_simplex_cuda_config *list = (mf_simplex_cuda_config *)malloc(sizeof *list * n);
  float *ms = (float *)malloc(sizeof(float) * reps);
  double *hx = (double *)malloc(sizeof(double) * (len ? len : 1));
  double *dx = NULL;
  cudaEvent_t e0 = NULL, e1 = NULL;
  int ierr = 0, best = -1;
  MF_CHECK_GOTO(list && ms && hx, o->ctx, MF_ERR_MEMORY, done, "out of host memory tuning (%zu values)", len);
  for (size_t i = 0; i < len; i++) hx[i] = (double)((i * 2654435761u) % 1000) * 1e-3 - 0.5;
  MF_CALL_GOTO(mf_sx_enumerate(o, list, n, &n), done);
  MF_CALL_GOTO(mf_simplex_cuda_alloc(o->ctx, 2 * len * sizeof(double) + 16, &dx), done);
  if (o->single) { // x in float (y after x: dx + len whatever the precision)
    float *hf = (float *)malloc(sizeof(float) * (len ? len : 1));
    MF_CHECK_GOTO(hf, o->ctx, MF_ERR_MEMORY, done, "out of host memory tuning (%zu values)", len);
    for (size_t i = 0; i < len; i++) hf[i] = (float)hx[i];
    const cudaError_t e = cudaMemcpy(dx, hf, sizeof(float) * len, cudaMemcpyHostToDevice);
    free(hf);
    MF_CHECK_GOTO(e == cudaSuccess, o->ctx, MF_ERR_CUDA, done, "copying the tuning vector: %s", cudaGetErrorString(e));
  } else MF_CALL_GOTO(mf_simplex_cuda_copy(o->ctx, dx, hx, len, 1), done);
  MF_CHECK_GOTO(cudaEventCreate(&e0) == cudaSuccess && cudaEventCreate(&e1) == cudaSuccess, o->ctx, MF_ERR_CUDA, done,
                "cudaEventCreate failed");
  for (int c = 0; c < n; c++) {
    MF_CALL_GOTO(sx_launch(o, &list[c], dx, dx + len), done); // warm-up
    for (int r = 0; r < reps; r++) {
      MF_CHECK_GOTO(cudaEventRecord(e0, 0) == cudaSuccess, o->ctx, MF_ERR_CUDA, done, "cudaEventRecord failed");
      MF_CALL_GOTO(sx_launch(o, &list[c], dx, dx + len), done);
      cudaError_t e = cudaEventRecord(e1, 0);
      if (e == cudaSuccess) e = cudaEventSynchronize(e1);
      if (e == cudaSuccess) e = cudaEventElapsedTime(&ms[r], e0, e1);
      MF_CHECK_GOTO(e == cudaSuccess, o->ctx, MF_ERR_CUDA, done, "timing the simplex kernels: %s", cudaGetErrorString(e));
    }
    for (int i = 1; i < reps; i++) // insertion sort: the median
      for (int j = i; j > 0 && ms[j] < ms[j - 1]; j--) {
        const float t = ms[j];
        ms[j] = ms[j - 1], ms[j - 1] = t;
      }
    list[c].measured_ms = ms[reps / 2];
    if (best < 0 || list[c].measured_ms < list[best].measured_ms) best = c;
    if (getenv("MFREE_SIMPLEX_TUNE_LOG")) // every candidate, model against measurement (docs/simplex.md)
      fprintf(stderr, "# tune %dD P%d %s: %s-%s-t%d-b%d-s%d model %.1f us measured %.1f us regs %d local %d occupancy %.2f\n",
              o->dim, o->p, o->elasticity ? "elasticity" : o->has_coef ? "coefficient" : "c=1",
              mf_sx_strategy_name(list[c].strategy),
              list[c].form == MF_SIMPLEX_CUDA_GRADIENT    ? "grad"
              : list[c].form == MF_SIMPLEX_CUDA_REFERENCE ? "ref"
                                                          : "quad",
              list[c].tile, list[c].threads, list[c].stage, list[c].model_us, 1e3 * list[c].measured_ms, list[c].regs,
              list[c].local_bytes, list[c].occupancy);
  }
  list[best].tuned = 1;
  o->cfg = list[best];
done:
  if (e0) cudaEventDestroy(e0);
  if (e1) cudaEventDestroy(e1);
  mf_cuda_free(o->ctx, dx);
  free(list), free(ms), free(hx);
  return ierr;
}

// ---------------------------------------------------------------------------- create and destroy

extern "C" void mf_simplex_cuda_destroy(mf_simplex_cuda_op *op)
{
  if (!op || !*op) return;
  mf_simplex_cuda_op_s *o = *op;
  mf_cuda_free(o->ctx, o->coords), mf_cuda_free(o->ctx, o->cells), mf_cuda_free(o->ctx, o->cell_dofs);
  mf_cuda_free(o->ctx, o->B), mf_cuda_free(o->ctx, o->G), mf_cuda_free(o->ctx, o->w);
  mf_cuda_free(o->ctx, o->S), mf_cuda_free(o->ctx, o->E), mf_cuda_free(o->ctx, o->coefq);
  mf_cuda_free(o->ctx, o->coefqf);
  mf_cuda_free(o->ctx, o->K), mf_cuda_free(o->ctx, o->Kf);
  mf_cuda_free(o->ctx, o->tile_off), mf_cuda_free(o->ctx, o->tile_dofs), mf_cuda_free(o->ctx, o->tile_voff);
  mf_cuda_free(o->ctx, o->tile_verts), mf_cuda_free(o->ctx, o->cell_ldofs), mf_cuda_free(o->ctx, o->cell_lverts);
  free(o);
  *op = NULL;
}

// The reference tables of o's (dim, p) from the basis b: the reference matrices S (scalar operators) and the
// gradient table E into global memory, and into the constant memory of o's kernels (o->tab) what fits there,
// with elasticity's matrices K_lm = G_l^T W G_m; the same for every operator of a (dim, p) and precision.
static int sx_tables(mf_simplex_cuda_op_s *o, const mf_simplex_basis *b)
{
  mf_context ctx = o->ctx;
  const int dim = o->dim, N = o->N, nq = o->nq;
  const size_t bytes_S = sizeof(double) * (size_t)mf_sx_ref_doubles(dim, N),
               bytes_E = sizeof(double) * (size_t)mf_sx_grad_doubles(dim, b->degree);
  int ierr = 0;
  double *hS = NULL, *hE = NULL;
  if (o->elasticity && o->tab->set_const_elas) {
    const size_t nk = (size_t)mf_sx_elas_doubles(dim, N);
    hS = (double *)calloc(nk, sizeof(double));
    MF_CHECK_GOTO(hS, ctx, MF_ERR_MEMORY, fail, "out of host memory (%zu bytes)", sizeof(double) * nk);
    for (int q = 0; q < nq; q++)
      for (int l = 0; l < dim; l++)
        for (int mm = 0; mm < dim; mm++)
          for (int j = 0; j < N; j++)
            for (int i = 0; i < N; i++)
              hS[(((size_t)l * dim + mm) * N + j) * N + i] +=
                  b->qwts[q] * b->G[((size_t)q * N + i) * dim + l] * b->G[((size_t)q * N + j) * dim + mm];
    const cudaError_t e = o->tab->set_const_elas(hS);
    if (e != cudaSuccess) cudaGetLastError();
    MF_CHECK_GOTO(e == cudaSuccess, ctx, MF_ERR_CUDA, fail, "copying the elasticity matrices to constant memory: %s",
                  cudaGetErrorString(e));
  }
  if (!o->elasticity) {
    hS = (double *)malloc(bytes_S);
    MF_CHECK_GOTO(hS, ctx, MF_ERR_MEMORY, fail, "out of host memory (%zu bytes)", bytes_S);
    mf_simplex_reference_matrices(b, hS); // symmetric: S[m][j][i] as the kernels read them
    MF_CALL_GOTO(mf_cuda_upload(ctx, (void **)&o->S, hS, bytes_S, "the simplex reference matrices"), fail);
    if (o->tab->set_const) {
      const cudaError_t e = o->tab->set_const(hS);
      if (e != cudaSuccess) cudaGetLastError();
      MF_CHECK_GOTO(e == cudaSuccess, ctx, MF_ERR_CUDA, fail, "copying the reference matrices to constant memory: %s",
                    cudaGetErrorString(e));
    }
  }
  { // the gradient table E (mf_simplex_gradient_table), global and constant memory; every operator
    hE = (double *)malloc(bytes_E);
    MF_CHECK_GOTO(hE, ctx, MF_ERR_MEMORY, fail, "out of host memory (%zu bytes)", bytes_E);
    MF_CALL_GOTO(mf_simplex_gradient_table(ctx, b, hE), fail);
    MF_CALL_GOTO(mf_cuda_upload(ctx, (void **)&o->E, hE, bytes_E, "the simplex gradient table"), fail);
    const cudaError_t e = o->tab->set_const_grad(hE);
    if (e != cudaSuccess) cudaGetLastError();
    MF_CHECK_GOTO(e == cudaSuccess, ctx, MF_ERR_CUDA, fail, "copying the gradient table to constant memory: %s",
                  cudaGetErrorString(e));
  }
fail:
  free(hS), free(hE);
  return ierr;
}

// The device's figures for the model
static int sx_device(mf_simplex_cuda_op_s *o)
{
  mf_context ctx = o->ctx;
  const int dev = mf_cuda_ctx(ctx)->device;
  int mclock = 0, bus = 0, clock = 0, major = 0, minor = 0, threads_sm = 0;
  MF_CHECK(cudaDeviceGetAttribute(&o->sms, cudaDevAttrMultiProcessorCount, dev) == cudaSuccess &&
               cudaDeviceGetAttribute(&o->smem_optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, dev) == cudaSuccess &&
               cudaDeviceGetAttribute(&o->smem_sm, cudaDevAttrMaxSharedMemoryPerMultiprocessor, dev) == cudaSuccess &&
               cudaDeviceGetAttribute(&threads_sm, cudaDevAttrMaxThreadsPerMultiProcessor, dev) == cudaSuccess &&
               cudaDeviceGetAttribute(&o->regs_sm, cudaDevAttrMaxRegistersPerMultiprocessor, dev) == cudaSuccess &&
               cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, dev) == cudaSuccess &&
               cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, dev) == cudaSuccess,
           ctx, MF_ERR_CUDA, "cudaDeviceGetAttribute failed on device %d", dev);
  o->warps_sm = threads_sm / 32;
  // clocks may be unavailable (0): then the H100's figures; the model compares configurations, the
  // absolute times only set where memory and arithmetic cross
  if (cudaDeviceGetAttribute(&mclock, cudaDevAttrMemoryClockRate, dev) != cudaSuccess) mclock = 0, cudaGetLastError();
  if (cudaDeviceGetAttribute(&bus, cudaDevAttrGlobalMemoryBusWidth, dev) != cudaSuccess) bus = 0, cudaGetLastError();
  if (cudaDeviceGetAttribute(&clock, cudaDevAttrClockRate, dev) != cudaSuccess) clock = 0, cudaGetLastError();
  o->bw = mclock > 0 && bus > 0 ? 2.0 * mclock * 1e3 * bus / 8.0 : 3.35e12;
  const double fma_per_sm = minor == 0 && major >= 6 ? 64.0 : 2.0; // FP64 units of the data-centre parts
  o->peak = clock > 0 ? o->sms * clock * 1e3 * fma_per_sm * 2.0 : 3.4e13;
  o->wf_rate = clock > 0 ? o->sms * clock * 1e3 : 3.4e13 / 128.0;
  return 0;
}

// The configuration: the model's choice (also the fallback when tuning fails), then measured where asked
static int sx_choose(mf_simplex_cuda_op_s *o, int tune)
{
  const char *env = getenv("MFREE_SIMPLEX_TUNE");
  if (env && atoi(env) != 0) tune = 1;
  MF_CALL(mf_sx_model_best(o, -1, -1, 0, 0, -1, &o->cfg));
  if (tune) MF_CALL(mf_simplex_cuda_tune(o, 5));
  return 0;
}

namespace {
// K_e = sum_q w_q c_q Phi_q Phi_q^T, the upper triangle m-major (the device twin of mf_simplex_gradient_coef): one
// thread per (cell, entry)
__global__ void k_gradient_coef(int ncells, int nq, int n1, const double *__restrict__ w, const double *__restrict__ Phi,
                                const double *__restrict__ coefq, double *__restrict__ K)
{
  const long long t = (long long)blockIdx.x * blockDim.x + threadIdx.x, nk = (long long)n1 * (n1 + 1) / 2;
  if (t >= nk * ncells) return;
  const int m = (int)(t / ncells), e = (int)(t - (long long)m * ncells);
  int r = 0, mm = m;
  while (mm >= n1 - r) mm -= n1 - r, r++;
  const int s = r + mm;
  double k = 0.0;
  for (int q = 0; q < nq; q++) k += w[q] * coefq[(size_t)e * nq + q] * Phi[q * n1 + r] * Phi[q * n1 + s];
  K[t] = k;
}
} // namespace

// the last launch's error as an error code (recorded on ctx), for the paths that must free what they made
static int sx_launched(mf_context ctx, const char *what)
{
  const cudaError_t e = cudaGetLastError();
  if (e == cudaSuccess) return 0;
  return mf_error_set(ctx, MF_ERR_CUDA, __FILE__, __LINE__, __func__, "kernel '%s': %s", what, cudaGetErrorString(e));
}

// The cells' matrices K_e of the gradient form with a coefficient, where its kernels apply (a Laplace operator):
// from c(x_q) on the device and the table Phi of b
static int sx_gradient_coef(mf_simplex_cuda_op_s *o, const mf_simplex_basis *b)
{
  if (!o->coefq || o->elasticity || o->a != 0.0 || o->b == 0.0 || !o->tab->fn[MF_SX_THREAD_GK]) return 0;
  mf_context ctx = o->ctx;
  const int n1 = mf_simplex_gradient_n1(o->dim, o->p), nk = mf_simplex_gradient_nk(o->dim, o->p);
  const size_t bytes = sizeof(double) * (size_t)nk * o->ncells;
  MF_CALL(mf_cuda_require(ctx, bytes, "the cells' coefficient matrices"));
  double *Phi = (double *)malloc(sizeof(double) * (size_t)o->nq * n1), *dPhi = NULL;
  MF_CHECK(Phi, ctx, MF_ERR_MEMORY, "out of host memory (%d x %d values)", o->nq, n1);
  int ierr = mf_simplex_gradient_points(ctx, b, Phi);
  if (!ierr) ierr = mf_cuda_upload(ctx, (void **)&dPhi, Phi, sizeof(double) * (size_t)o->nq * n1, "the gradient points");
  if (!ierr) ierr = mf_cuda_malloc(ctx, (void **)&o->K, bytes ? bytes : 8, "the cells' coefficient matrices");
  const long long n = (long long)nk * o->ncells;
  if (!ierr && n) {
    k_gradient_coef<<<(unsigned)((n + 255) / 256), 256>>>(o->ncells, o->nq, n1, o->w, dPhi, o->coefq, o->K);
    ierr = sx_launched(ctx, "the cells' coefficient matrices");
  }
  mf_cuda_free(ctx, dPhi);
  free(Phi);
  return ierr;
}

// ---------------------------------------------------------------------------- the shared scatter's tiles

constexpr int TILE = MF_SX_SHARED_TILE;

// The shared scatter's tiles of o (c = 1, where its kernels are): the DoFs' and the vertices'. Refused quietly
// (no tiles: the strategy is not a candidate) where the device memory is short.
static int sx_tiles(mf_simplex_cuda_op_s *o, int tune)
{
  const int k = o->elasticity ? MF_SX_SHARED_GEC : MF_SX_SHARED_GC;
  // where they are made: elasticity (its scatter of dim components per node is what the tiles save: 1.2-1.8x on an
  // H100), and any operator with c = 1 where the configurations are measured (tune) or MFREE_SIMPLEX_SHARED=1; for the
  // scalar operators the cost model does not pick them (0.75-1.08x of one cell per thread measured on the bench's box
  // meshes) and their lists cost set-up time (0.07 s in the P2 multigrid goal case) and memory. MFREE_SIMPLEX_SHARED=0:
  // none (measurements).
  const char *env = getenv("MFREE_SIMPLEX_SHARED");
  const int want = env && !strcmp(env, "0") ? 0 : env && !strcmp(env, "1") ? 1 : o->elasticity || tune;
  if (o->has_coef || !o->ncells || !o->tab->fn[k] || !want) return 0;
  if ((long long)o->ncells * o->N > INT_MAX) return 0; // the lists' offsets are ints (at most one entry per cell node)
  const int nt = (o->ncells + TILE - 1) / TILE;
  const size_t bytes = sizeof(int) * (2 * (size_t)nt + 2) + (sizeof(int) + 2) * (size_t)o->ncells * (o->N + o->dim + 1);
  size_t freeb = 0, total = 0; // what mf_cuda_require checks, without its error
  if (cudaMemGetInfo(&freeb, &total) != cudaSuccess) {
    cudaGetLastError();
    return 0;
  }
  const mf_cuda_context *c = mf_cuda_ctx(o->ctx);
  if (c->mem_limit) freeb = c->mem_limit > c->mem_in_use && c->mem_limit - c->mem_in_use < freeb ? c->mem_limit - c->mem_in_use
                            : c->mem_limit > c->mem_in_use ? freeb : 0;
  if (bytes > freeb) return 0;
  o->ntiles = nt;
  MF_CALL(mf_simplex_cuda_tile_ids(o->ctx, o->cell_dofs, o->ncells, o->N, &o->tile_off, &o->tile_dofs, &o->cell_ldofs,
                                    &o->tile_maxd, &o->tile_nd, "the tiles' DoFs"));
  MF_CALL(mf_simplex_cuda_tile_ids(o->ctx, o->cells, o->ncells, o->dim + 1, &o->tile_voff, &o->tile_verts,
                                    &o->cell_lverts, &o->tile_maxv, &o->tile_nv, "the tiles' vertices"));
  return 0;
}

// coefq: c at the points on the host (copied), or *coefq_dev: on the device already (adopted: *coefq_dev set to
// NULL once the operator holds it, which frees it with itself, also on a failure after that)
static int sx_create(mf_context ctx, const mf_simplex_mesh *m, const mf_simplex_basis *b, const mf_simplex_dofs *d,
                     const double *coefq, double **coefq_dev, int mass_coef, int elasticity, double a, double bb,
                     double lambda, double mu, int tune, mf_simplex_cuda_op *out)
{
  MF_CHECK(out, ctx, MF_ERR_NULL, "output is NULL");
  *out = NULL;
  MF_CHECK(ctx && m && b && d, ctx, MF_ERR_NULL, "context, mesh, basis or DoFs is NULL");
  MF_CHECK(ctx->backend == MF_BACKEND_CUDA && ctx->cuda, ctx, MF_ERR_BACKEND,
           "the simplex GPU operator needs a context of backend 'cuda'");
  MF_CHECK(m->dim == b->dim && (m->dim == 2 || m->dim == 3), ctx, MF_ERR_INCOMPATIBLE, "a %dD basis on a %dD mesh",
           b->dim, m->dim);
  MF_CHECK(b->degree >= 1 && b->degree <= MF_SIMPLEX_CUDA_MAX_DEGREE, ctx, MF_ERR_UNSUPPORTED,
           "degree %d: the simplex GPU kernels are compiled for p = 1..%d", b->degree, MF_SIMPLEX_CUDA_MAX_DEGREE);
  MF_CHECK(b->nq == mf_sx_nq(b->dim, b->degree), ctx, MF_ERR_UNSUPPORTED,
           "a rule of %d points: the simplex GPU kernels are compiled for the default rule of degree %d (%d points)", b->nq,
           2 * b->degree, mf_sx_nq(b->dim, b->degree));
  MF_CHECK(d->nnodes == b->nnodes, ctx, MF_ERR_INCOMPATIBLE, "DoFs made for %d nodes per cell, the basis has %d",
           d->nnodes, b->nnodes);
  const int dim = m->dim, N = b->nnodes, nq = b->nq, ncomp = elasticity ? dim : 1;
  MF_CHECK((long long)d->ndofs * ncomp < (1LL << 31), ctx, MF_ERR_ARGUMENT, "%lld unknowns (below 2^31)",
           (long long)d->ndofs * ncomp);
  const size_t bytes_coords = sizeof(double) * (size_t)m->nv * dim, bytes_cells = sizeof(int) * (size_t)m->ncells * (dim + 1),
               bytes_dofs = sizeof(int) * (size_t)m->ncells * N, bytes_B = sizeof(double) * (size_t)nq * N,
               bytes_S = sizeof(double) * (size_t)mf_sx_ref_doubles(dim, N),
               bytes_E = sizeof(double) * (size_t)mf_sx_grad_doubles(dim, b->degree),
               bytes_coef = coefq ? sizeof(double) * (size_t)m->ncells * nq : 0;
  const size_t need = bytes_coords + bytes_cells + bytes_dofs + bytes_B * (1 + dim) + sizeof(double) * nq +
                      (elasticity ? 0 : bytes_S) + bytes_E + bytes_coef;
  MF_CALL(mf_cuda_require(ctx, need, "the simplex operator"));
  mf_simplex_cuda_op_s *o = (mf_simplex_cuda_op_s *)calloc(1, sizeof *o);
  MF_CHECK(o, ctx, MF_ERR_MEMORY, "out of host memory (%zu bytes)", sizeof *o);
  o->ctx = ctx, o->dim = dim, o->p = b->degree, o->N = N, o->nq = nq, o->ncomp = ncomp;
  o->ncells = m->ncells, o->nv = m->nv, o->ndofs = d->ndofs;
  o->elasticity = elasticity, o->has_coef = coefq != NULL || (coefq_dev && *coefq_dev), o->mass_coef = mass_coef;
  if (coefq_dev && *coefq_dev) o->coefq = *coefq_dev, *coefq_dev = NULL;
  o->a = a, o->b = bb, o->lambda = lambda, o->mu = mu;
  o->tab = sx_table(dim, b->degree, 0);
  int ierr = 0;
  double *hc = NULL;
  // the mesh's cells and vertices and the space's cell DoFs: the device copies the space's other operators,
  // its sources and transfers share (mf_cuda_share); in 2D the vertices packed to 2 coordinates for the kernels
  if (dim == 3)
    MF_CALL_GOTO(mf_cuda_share(ctx, (void **)&o->coords, m->coords, bytes_coords, "the simplex vertex coordinates"), fail);
  else {
    hc = (double *)malloc(bytes_coords ? bytes_coords : 8);
    MF_CHECK_GOTO(hc, ctx, MF_ERR_MEMORY, fail, "out of host memory (%zu bytes)", bytes_coords);
    for (int v = 0; v < m->nv; v++)
      for (int k = 0; k < dim; k++) hc[(size_t)v * dim + k] = m->coords[3 * (size_t)v + k];
    MF_CALL_GOTO(mf_cuda_upload(ctx, (void **)&o->coords, hc, bytes_coords, "the simplex vertex coordinates"), fail);
  }
  MF_CALL_GOTO(mf_cuda_share(ctx, (void **)&o->cells, m->cells, bytes_cells, "the simplex cells"), fail);
  MF_CALL_GOTO(mf_cuda_share(ctx, (void **)&o->cell_dofs, d->cell_dofs, bytes_dofs, "the simplex cell DoFs"), fail);
  MF_CALL_GOTO(mf_cuda_upload(ctx, (void **)&o->B, b->B, bytes_B, "the simplex basis values"), fail);
  MF_CALL_GOTO(mf_cuda_upload(ctx, (void **)&o->G, b->G, bytes_B * dim, "the simplex basis gradients"), fail);
  MF_CALL_GOTO(mf_cuda_upload(ctx, (void **)&o->w, b->qwts, sizeof(double) * nq, "the simplex weights"), fail);
  MF_CALL_GOTO(sx_tables(o, b), fail);
  if (coefq) MF_CALL_GOTO(mf_cuda_upload(ctx, (void **)&o->coefq, coefq, bytes_coef, "the coefficient per point"), fail);
  MF_CALL_GOTO(sx_gradient_coef(o, b), fail);
  MF_CALL_GOTO(sx_tiles(o, tune || (getenv("MFREE_SIMPLEX_TUNE") && atoi(getenv("MFREE_SIMPLEX_TUNE")) != 0)), fail);
  MF_CALL_GOTO(sx_device(o), fail);
  MF_CALL_GOTO(sx_choose(o, tune), fail);
  free(hc);
  *out = o;
  return 0;
fail:
  free(hc);
  mf_simplex_cuda_destroy(&o);
  return ierr;
}

extern "C" int mf_simplex_cuda_op_create(mf_context ctx, const mf_simplex_op *op, int tune, mf_simplex_cuda_op *out)
{
  MF_CHECK(op && op->mesh, ctx, MF_ERR_NULL, "simplex operator is NULL or not created");
  return sx_create(ctx, op->mesh, op->basis, op->dofs, op->coefq, NULL, op->mass_coef, 0, op->a, op->b, 0.0, 0.0, tune,
                   out);
}

extern "C" int mf_simplex_cuda_op_create_device_coef(mf_context ctx, const mf_simplex_op *op, double *coefq_dev, int tune,
                                                     mf_simplex_cuda_op *out)
{
  int ierr = op && op->mesh && coefq_dev ? 0
                                         : mf_error_set(ctx, MF_ERR_NULL, __FILE__, __LINE__, __func__,
                                                        "simplex operator or its device coefficient is NULL");
  if (!ierr) ierr = sx_create(ctx, op->mesh, op->basis, op->dofs, NULL, &coefq_dev, op->mass_coef, 0, op->a, op->b, 0.0,
                              0.0, tune, out);
  mf_cuda_free(ctx, coefq_dev); // not adopted: a refusal before the operator held it (NULL otherwise)
  return ierr;
}

extern "C" int mf_simplex_cuda_elasticity_create(mf_context ctx, const mf_simplex_mesh *m, const mf_simplex_basis *b,
                                                 const mf_simplex_dofs *d, double lambda, double mu, int tune,
                                                 mf_simplex_cuda_op *out)
{
  MF_CALL(mf_simplex_elasticity_check(ctx, lambda, mu));
  return sx_create(ctx, m, b, d, NULL, NULL, 0, 1, 0.0, 0.0, lambda, mu, tune, out);
}

namespace {
__global__ void k_to_float(float *d, const double *s, long long n)
{
  const long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) d[i] = (float)s[i];
}
} // namespace

// a device array of bytes copied from src (device) into *dst
static int sx_dup(mf_context ctx, void **dst, const void *src, size_t bytes, const char *what)
{
  MF_CALL(mf_cuda_malloc(ctx, dst, bytes ? bytes : 8, what));
  if (bytes) MF_CUDA_CALL(ctx, cudaMemcpy(*dst, src, bytes, cudaMemcpyDeviceToDevice));
  return 0;
}

extern "C" int mf_simplex_cuda_single(mf_simplex_cuda_op like, const mf_simplex_basis *b, mf_simplex_cuda_op *out)
{
  MF_CHECK(like, NULL, MF_ERR_NULL, "operator is NULL");
  mf_context ctx = like->ctx;
  MF_CHECK(out && b, ctx, MF_ERR_NULL, "output or basis is NULL");
  *out = NULL;
  MF_CHECK(!like->single, ctx, MF_ERR_ARGUMENT, "the simplex operator is a single-precision copy already");
  MF_CHECK(b->dim == like->dim && b->degree == like->p && b->nq == like->nq, ctx, MF_ERR_INCOMPATIBLE,
           "a basis of %dD p = %d (%d points) for an operator of %dD p = %d (%d points)", b->dim, b->degree, b->nq,
           like->dim, like->p, like->nq);
  const int dim = like->dim, N = like->N, nq = like->nq;
  const size_t npts = (size_t)like->ncells * nq;
  const size_t bytes_coords = sizeof(double) * (size_t)like->nv * dim,
               bytes_cells = sizeof(int) * (size_t)like->ncells * (dim + 1),
               bytes_dofs = sizeof(int) * (size_t)like->ncells * N, bytes_B = sizeof(double) * (size_t)nq * N;
  MF_CALL(mf_cuda_require(ctx,
                          bytes_coords + bytes_cells + bytes_dofs + bytes_B * (1 + dim) + sizeof(double) * nq +
                              sizeof(double) * ((size_t)mf_sx_ref_doubles(dim, N) + mf_sx_grad_doubles(dim, like->p)) +
                              (like->coefq ? sizeof(float) * npts : 0) +
                              (like->K ? sizeof(float) * mf_simplex_gradient_nk(dim, like->p) * like->ncells : 0),
                          "the single-precision simplex operator"));
  mf_simplex_cuda_op_s *o = (mf_simplex_cuda_op_s *)calloc(1, sizeof *o);
  MF_CHECK(o, ctx, MF_ERR_MEMORY, "out of host memory (%zu bytes)", sizeof *o);
  o->ctx = ctx, o->dim = dim, o->p = like->p, o->N = N, o->nq = nq, o->ncomp = like->ncomp;
  o->ncells = like->ncells, o->nv = like->nv, o->ndofs = like->ndofs;
  o->elasticity = like->elasticity, o->has_coef = like->has_coef, o->mass_coef = like->mass_coef, o->single = 1;
  o->a = like->a, o->b = like->b, o->lambda = like->lambda, o->mu = like->mu;
  o->tab = sx_table(dim, o->p, 1);
  int ierr = 0;
  // the shared copies (mf_cuda_share) held once more; a private copy duplicated
  if (mf_cuda_retain(ctx, like->coords)) o->coords = like->coords;
  else MF_CALL_GOTO(sx_dup(ctx, (void **)&o->coords, like->coords, bytes_coords, "the simplex vertex coordinates"), fail);
  if (mf_cuda_retain(ctx, like->cells)) o->cells = like->cells;
  else MF_CALL_GOTO(sx_dup(ctx, (void **)&o->cells, like->cells, bytes_cells, "the simplex cells"), fail);
  if (mf_cuda_retain(ctx, like->cell_dofs)) o->cell_dofs = like->cell_dofs;
  else MF_CALL_GOTO(sx_dup(ctx, (void **)&o->cell_dofs, like->cell_dofs, bytes_dofs, "the simplex cell DoFs"), fail);
  MF_CALL_GOTO(sx_dup(ctx, (void **)&o->B, like->B, bytes_B, "the simplex basis values"), fail);
  MF_CALL_GOTO(sx_dup(ctx, (void **)&o->G, like->G, bytes_B * dim, "the simplex basis gradients"), fail);
  MF_CALL_GOTO(sx_dup(ctx, (void **)&o->w, like->w, sizeof(double) * nq, "the simplex weights"), fail);
  MF_CALL_GOTO(sx_tables(o, b), fail); // the float kernels' own constant memory
  if (like->coefq) {
    MF_CALL_GOTO(mf_cuda_malloc(ctx, (void **)&o->coefqf, sizeof(float) * (npts ? npts : 1), "the coefficient per point"),
                 fail);
    if (npts) {
      k_to_float<<<(unsigned)((npts + 255) / 256), 256>>>(o->coefqf, like->coefq, (long long)npts);
      MF_CALL_GOTO(sx_launched(ctx, "the coefficient per point in float"), fail);
    }
  }
  if (like->K) { // the cells' matrices of the gradient form, in float
    const size_t nk = (size_t)mf_simplex_gradient_nk(dim, o->p) * o->ncells;
    MF_CALL_GOTO(mf_cuda_malloc(ctx, (void **)&o->Kf, sizeof(float) * (nk ? nk : 1), "the cells' coefficient matrices"),
                 fail);
    if (nk) {
      k_to_float<<<(unsigned)((nk + 255) / 256), 256>>>(o->Kf, like->K, (long long)nk);
      MF_CALL_GOTO(sx_launched(ctx, "the cells' coefficient matrices in float"), fail);
    }
  }
  if (like->ntiles) MF_CALL_GOTO(sx_tiles(o, 1), fail); // its own where like has them (from its copies)
  MF_CALL_GOTO(sx_device(o), fail);
  MF_CALL_GOTO(sx_choose(o, 0), fail);
  *out = o;
  return 0;
fail:
  mf_simplex_cuda_destroy(&o);
  return ierr;
}

extern "C" int mf_simplex_cuda_get_arrays(mf_simplex_cuda_op o, mf_simplex_cuda_arrays *a)
{
  if (!o || !a) return MF_ERR_NULL;
  a->dim = o->dim, a->p = o->p, a->N = o->N, a->nq = o->nq, a->ncells = o->ncells, a->elasticity = o->elasticity;
  a->a = o->a, a->b = o->b, a->mass_coef = o->mass_coef;
  a->coords = o->coords, a->cells = o->cells, a->cell_dofs = o->cell_dofs;
  a->B = o->B, a->G = o->G, a->w = o->w, a->S = o->S, a->coefq = o->coefq;
  a->ntiles = o->ntiles, a->tile = TILE;
  a->tile_off = o->tile_off, a->tile_dofs = o->tile_dofs, a->tile_voff = o->tile_voff, a->tile_verts = o->tile_verts;
  a->cell_ldofs = o->cell_ldofs, a->cell_lverts = o->cell_lverts;
  return 0;
}
