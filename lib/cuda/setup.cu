// setup.cu -- set-up on the device: the quadrature data of an operator computed from the node
// coordinates (Jacobians at the quadrature points, lib/physics/mf_pointwise.h), the user's coefficient at
// points computed here and evaluated on the host, the right-hand side and the L2 error. Host
// callbacks (coefficient, f, exact solution) run in a two-stage pipeline over batches of cells:
//
//   stream s:  points kernel (batch i) -> copy points to pinned host buffer s -> ...
//   host:      wait for batch i-1's points, evaluate the callback (OpenMP) on them
//   stream s': copy the values of batch i-1 to the device -> consume kernel (scale / integrate / sum)
//
// so the copies and kernels of one batch overlap the host evaluation of the other. Device memory of
// the pipeline is two batches of points and values on top of what the result needs.
#include "cell_generic.cuh"
#include "physics/mf_pointwise.h"

#include <limits.h>
#include <stdio.h>

#define MF_SETUP_BATCH_POINTS (1 << 20) /* quadrature points per pipeline batch */

namespace {

using mfg::cell_shape;
using mfg::point;

struct geo_args {
  cell_shape c;
  int cell_begin, cell_end, cells_per_block;
  const int *cell_nodes;
  const int16_t *mask; // NULL: no cell has a mask
  const double *P, *coords, *B, *D, *qw;
  // quadrature data (NULL: not written)
  double *qd;
  long long batch_stride, block_stride;
  int batch, has_mass, has_grad;
  double a, b;
  unsigned long long *bad; // min over degenerate points of (cell << 20 | q)
  // per-batch outputs, index (cell - cell_begin) * nqp + q (NULL: not written)
  double *xq, *wdet, *uq;
  const double *u; // interpolated into uq (constraints applied)
  int derivatives; // 0: points (and uq) only
};

// Shared memory: B, D, P, weights, then two nqp buffers per cell of the block.
__host__ __device__ inline size_t geo_shared(const cell_shape &c, int cells_per_block)
{
  return sizeof(double) * ((size_t)c.nq * c.n1 + (size_t)c.nq * c.nq + 2 * c.n1 * c.n1 + c.nq +
                           (size_t)cells_per_block * 2 * c.nqp);
}

__global__ void __launch_bounds__(1024) k_geometry(const geo_args a)
{
  extern __shared__ double sm[];
  const cell_shape c = a.c;
  double *sB = sm, *sD = sB + c.nq * c.n1, *sP = sD + c.nq * c.nq, *sw = sP + 2 * c.n1 * c.n1;
  const int lc = threadIdx.x / c.nqp, q = threadIdx.x - lc * c.nqp;
  double *s0 = sw + c.nq + (size_t)lc * 2 * c.nqp, *s1 = s0 + c.nqp;
  const int pos = a.cell_begin + blockIdx.x * a.cells_per_block + lc;
  const bool active = pos < a.cell_end;
  const int cell = active ? pos : a.cell_begin; // idle threads shadow a valid cell, results dropped
  mfg::stage(sB, a.B, c.nq * c.n1);
  mfg::stage(sD, a.D, c.nq * c.nq);
  mfg::stage(sw, a.qw, c.nq);
  if (a.mask) mfg::stage(sP, a.P, 2 * c.n1 * c.n1);
  const point t = mfg::make_point(c, q);
  const int mask = a.mask ? a.mask[cell] : 0;
  const bool any_mask = __syncthreads_or(mask != 0);
  const int *nodes = a.cell_nodes + (size_t)cell * c.npc;
  const int node = t.isdof ? nodes[t.pos] : 0;
  double J[9] = {0, 0, 0, 0, 0, 0, 0, 0, 0}, x[3] = {0, 0, 0}, uq = 0.0;
  for (int k = 0; k < c.dim + (a.u ? 1 : 0); k++) { // the coordinates, then u
    s0[q] = !t.isdof ? 0.0 : k < c.dim ? a.coords[(size_t)node * c.dim + k] : a.u[node];
    __syncthreads();
    if (any_mask) mfg::hanging(c, s0, mask, sP, t, false);
    const double *v = mfg::interpolate(c, sB, s0, s1, t);
    if (k < c.dim) {
      x[k] = v[q];
      if (a.derivatives)
        for (int l = 0; l < c.dim; l++) J[3 * k + l] = mfg::derivative(c, sD, v, t, l);
    } else {
      uq = v[q];
    }
    __syncthreads();
  }
  if (!active) return;
  const size_t bidx = (size_t)(cell - a.cell_begin) * c.nqp + q;
  if (a.xq)
    for (int k = 0; k < c.dim; k++) a.xq[bidx * c.dim + k] = x[k];
  if (a.uq) a.uq[bidx] = uq;
  if (!a.derivatives) return;
  double w = 1.0; /* the tensor weight in the order of mf_qweight */
  w *= sw[t.i];
  w *= sw[t.j];
  if (c.dim == 3) w *= sw[t.k];
  double det;
  if (a.qd) {
    double *out = a.qd + (size_t)(cell / a.batch) * a.batch_stride + (size_t)(cell % a.batch) * c.nqp + q;
    det = mf_qf_geometry(c.dim, J, w, a.a, a.b, a.has_mass, a.has_grad, out, (size_t)a.block_stride);
  } else {
    det = mf_qf_det(c.dim, J);
  }
  if (a.wdet) a.wdet[bidx] = w * fabs(det);
  if (a.bad && !(fabs(det) > 0.0)) atomicMin(a.bad, ((unsigned long long)cell << 20) | (unsigned long long)q);
}

// qd components that carry the coefficient *= c, for the points of cells [cell_begin, cell_end).
__global__ void k_scale(double *qd, long long batch_stride, long long block_stride, int batch, int nqp, int dim,
                        int has_mass, int has_grad, int cell_begin, long long npts, const double *cval)
{
  const long long idx = (long long)blockIdx.x * blockDim.x + threadIdx.x;
  if (idx >= npts) return;
  const int cell = cell_begin + (int)(idx / nqp), q = (int)(idx % nqp);
  double *out = qd + (size_t)(cell / batch) * batch_stride + (size_t)(cell % batch) * nqp + q;
  mf_qf_scale(dim, has_mass, has_grad, cval[idx], out, (size_t)block_stride);
}

struct rhs_args {
  cell_shape c;
  int cell_begin, cell_end, cells_per_block;
  const int *cell_nodes;
  const int16_t *mask;
  const double *P, *B;
  const double *fq, *wdet; // batch arrays
  double *b;
};

__host__ __device__ inline size_t rhs_shared(const cell_shape &c, int cells_per_block)
{
  return sizeof(double) * ((size_t)c.nq * c.n1 + 2 * c.n1 * c.n1 + (size_t)cells_per_block * 2 * c.nqp);
}

// b += C^T (B^T x B^T x B^T) (f w |det J|), atomically (the CPU twin, rhs_cpu, scatters color by
// color): the sums agree with the CPU's to rounding, not bitwise, and may differ in the last bits
// from run to run.
__global__ void __launch_bounds__(1024) k_rhs(const rhs_args a)
{
  extern __shared__ double sm[];
  const cell_shape c = a.c;
  double *sB = sm, *sP = sB + c.nq * c.n1;
  const int lc = threadIdx.x / c.nqp, q = threadIdx.x - lc * c.nqp;
  double *s0 = sP + 2 * c.n1 * c.n1 + (size_t)lc * 2 * c.nqp, *s1 = s0 + c.nqp;
  const int pos = a.cell_begin + blockIdx.x * a.cells_per_block + lc;
  const bool active = pos < a.cell_end;
  const int cell = active ? pos : a.cell_begin;
  mfg::stage(sB, a.B, c.nq * c.n1);
  if (a.mask) mfg::stage(sP, a.P, 2 * c.n1 * c.n1);
  const point t = mfg::make_point(c, q);
  const size_t bidx = (size_t)(cell - a.cell_begin) * c.nqp + q;
  s0[q] = a.fq[bidx] * a.wdet[bidx];
  const int mask = a.mask ? a.mask[cell] : 0;
  const bool any_mask = __syncthreads_or(mask != 0);
  double r = mfg::integrate(c, sB, s0, s1, t);
  if (any_mask) {
    s1[q] = r;
    __syncthreads();
    mfg::hanging(c, s1, mask, sP, t, true);
    r = s1[q];
  }
  if (active && t.isdof) atomicAdd(&a.b[a.cell_nodes[(size_t)cell * c.npc + t.pos]], r);
}

// cellsum[cell] = sum_q (uq - uex)^2 w |det J|, the points in order (one thread per cell).
__global__ void k_l2(int cell_begin, int cell_end, int nqp, const double *uq, const double *uex, const double *wdet,
                     double *cellsum)
{
  const int cell = cell_begin + blockIdx.x * blockDim.x + threadIdx.x;
  if (cell >= cell_end) return;
  const size_t b = (size_t)(cell - cell_begin) * nqp;
  double sum = 0.0;
  for (int q = 0; q < nqp; q++) {
    const double d = uq[b + q] - uex[b + q];
    sum += d * d * wdet[b + q];
  }
  cellsum[cell] = sum;
}

// Cells per block for the set-up kernels: up to 256 threads, at least one cell.
int setup_cells_per_block(const cell_shape &c) { return c.nqp >= 256 ? 1 : 256 / c.nqp; }

// Device copies of the 1D data of a basis (B, D, weights), freed by the destructor.
struct dev_basis {
  mf_context ctx;
  double *B = NULL, *D = NULL, *qw = NULL;
  explicit dev_basis(mf_context c) : ctx(c) {}
  ~dev_basis()
  {
    mf_cuda_free(ctx, B);
    mf_cuda_free(ctx, D);
    mf_cuda_free(ctx, qw);
  }
  int upload(const mf_basis1d *b)
  {
    MF_CALL(mf_cuda_upload(ctx, (void **)&B, b->B, sizeof(double) * b->nq * b->n1, "basis matrices"));
    MF_CALL(mf_cuda_upload(ctx, (void **)&D, b->D, sizeof(double) * b->nq * b->nq, "basis matrices"));
    return mf_cuda_upload(ctx, (void **)&qw, b->qwts, sizeof(double) * b->nq, "quadrature weights");
  }
};

geo_args geo_base(mf_space s, const cell_shape &c, const double *B, const double *D, const double *qw)
{
  const mf_cuda_space *ds = (const mf_cuda_space *)s->dev;
  geo_args a;
  memset(&a, 0, sizeof a);
  a.c = c;
  a.cells_per_block = setup_cells_per_block(c);
  a.cell_nodes = ds->cell_nodes;
  a.mask = ds->mask;
  a.P = ds->P;
  a.coords = ds->coords;
  a.B = B;
  a.D = D;
  a.qw = qw;
  a.batch = 1;
  return a;
}

cudaError_t launch_geometry(const geo_args &a, cudaStream_t st)
{
  const int n = a.cell_end - a.cell_begin;
  if (n <= 0) return cudaSuccess;
  const int blocks = (n + a.cells_per_block - 1) / a.cells_per_block;
  k_geometry<<<blocks, a.cells_per_block * a.c.nqp, geo_shared(a.c, a.cells_per_block), st>>>(a);
  return mf_cuda_launch_status();
}

// Degenerate points found by k_geometry: recompute the first one's Jacobian on the host for the message.
int check_degenerate(mf_space s, const mf_basis1d *b, unsigned long long *bad_dev)
{
  mf_context ctx = s->ctx;
  unsigned long long bad = ULLONG_MAX;
  MF_CUDA_CALL(ctx, cudaMemcpy(&bad, bad_dev, sizeof bad, cudaMemcpyDeviceToHost));
  if (bad == ULLONG_MAX) return 0;
  const int cell = (int)(bad >> 20), q = (int)(bad & 0xfffff);
  mf_geom_work gw;
  double *jac = (double *)calloc((size_t)9 * MF_MAX_NQ * MF_MAX_NQ * MF_MAX_NQ, sizeof(double)), det = 0.0;
  if (jac && !mf_space_host_coords(s) && !mf_geom_work_init(s, b, &gw)) {
    mf_cell_geometry(s, b, cell, &gw, NULL, jac);
    det = mf_det(s->dim, &jac[9 * q]);
    mf_geom_work_free(&gw);
  }
  free(jac);
  return mf_error_set(ctx, MF_ERR_ARGUMENT, __FILE__, __LINE__, __func__,
                      "degenerate cell %d: Jacobian determinant %g at quadrature point %d", cell, det, q);
}

// The pipeline of the file comment. produce(b0, b1, slot, stream) must leave the points of cells
// [b0, b1) in xq_dev[slot] (nqp dim doubles per cell); consume(b0, b1, slot, stream) reads the callback's
// values from val_dev[slot] (nqp per cell).
template <class Produce, class Consume>
int pipeline(mf_context ctx, int ncells, int cells_per_batch, int nqp, int dim, double *const xq_dev[2],
             double *const val_dev[2], mf_coefficient_fn f, void *user, Produce produce, Consume consume,
             const char *check_role = NULL, const char *check_sym = NULL)
{
  const size_t bp = (size_t)cells_per_batch * nqp;
  double *host = NULL;
  MF_CALL(mf_cuda_stage(ctx, sizeof(double) * 2 * bp * (dim + 1), (void **)&host));
  double *xq_h[2] = {host, host + bp * dim}, *val_h[2] = {host + 2 * bp * dim, host + 2 * bp * dim + bp};
  cudaStream_t st[2] = {NULL, NULL};
  cudaEvent_t ev[2] = {NULL, NULL};
  int ierr = 0;
  for (int k = 0; k < 2 && !ierr; k++) {
    if (cudaStreamCreate(&st[k]) != cudaSuccess || cudaEventCreateWithFlags(&ev[k], cudaEventDisableTiming) != cudaSuccess)
      ierr = mf_error_set(ctx, MF_ERR_CUDA, __FILE__, __LINE__, __func__, "cannot create a stream or event: %s",
                          cudaGetErrorString(cudaGetLastError()));
  }
  const int nb = (ncells + cells_per_batch - 1) / cells_per_batch;
  for (int i = 0; i <= nb && !ierr; i++) {
    if (i < nb) { /* points of batch i, copied to the host */
      const int s = i % 2, b0 = i * cells_per_batch, b1 = b0 + cells_per_batch < ncells ? b0 + cells_per_batch : ncells;
      ierr = produce(b0, b1, s, st[s]);
      cudaError_t e = cudaSuccess;
      if (!ierr) e = cudaMemcpyAsync(xq_h[s], xq_dev[s], sizeof(double) * (size_t)(b1 - b0) * nqp * dim,
                                     cudaMemcpyDeviceToHost, st[s]);
      if (!ierr && e == cudaSuccess) e = cudaEventRecord(ev[s], st[s]);
      if (!ierr && e != cudaSuccess)
        ierr = mf_error_set(ctx, MF_ERR_CUDA, __FILE__, __LINE__, __func__, "copying points to the host: %s",
                            cudaGetErrorString(e));
    }
    if (i >= 1 && !ierr) { /* values of batch i - 1 */
      const int j = i - 1, s = j % 2, b0 = j * cells_per_batch;
      const int b1 = b0 + cells_per_batch < ncells ? b0 + cells_per_batch : ncells;
      const size_t n = (size_t)(b1 - b0) * nqp;
      cudaError_t e = cudaEventSynchronize(ev[s]);
      if (e == cudaSuccess) {
        mf_eval_points(f, user, dim, n, xq_h[s], val_h[s]);
        if (check_role) ierr = mf_point_value_check(ctx, check_role, check_sym, dim, nqp, b0, 0, n, xq_h[s], val_h[s]);
        if (!ierr) e = cudaMemcpyAsync(val_dev[s], val_h[s], sizeof(double) * n, cudaMemcpyHostToDevice, st[s]);
      }
      if (ierr) break;
      if (e != cudaSuccess)
        ierr = mf_error_set(ctx, MF_ERR_CUDA, __FILE__, __LINE__, __func__, "moving callback values: %s",
                            cudaGetErrorString(e));
      if (!ierr) ierr = consume(b0, b1, s, st[s]);
    }
  }
  for (int k = 0; k < 2; k++) {
    if (st[k]) {
      cudaError_t e = cudaStreamSynchronize(st[k]);
      if (e != cudaSuccess && !ierr)
        ierr = mf_error_set(ctx, MF_ERR_CUDA, __FILE__, __LINE__, __func__, "set-up pipeline: %s", cudaGetErrorString(e));
      cudaStreamDestroy(st[k]);
    }
    if (ev[k]) cudaEventDestroy(ev[k]);
  }
  return ierr;
}

// Cells per pipeline batch: about MF_SETUP_BATCH_POINTS points, no more than the cells there are.
int batch_cells(int nqp, int ncells)
{
  const int b = MF_SETUP_BATCH_POINTS / nqp > 0 ? MF_SETUP_BATCH_POINTS / nqp : 1;
  return ncells < b ? (ncells > 0 ? ncells : 1) : b;
}

} // namespace

/* ------------------------------------------------------------------ operator set-up */

// Per-operator device state lives in operator.cu (mf_cuda_operator); the quadrature data is filled here.
extern "C" int mf_cuda_operator_qdata(mf_operator op, const double *B, const double *D, const double *qw,
                                      mf_coefficient_fn c, void *user, double a, double b)
{
  mf_space s = op->space;
  mf_context ctx = s->ctx;
  mf_cuda_operator *d = (mf_cuda_operator *)mf_hexop(op)->dev;
  const cell_shape cs = mfg::make_shape(s->dim, s->n1, mf_hexop(op)->basis.nq);
  unsigned long long *bad = NULL;
  MF_CALL(mf_cuda_malloc(ctx, (void **)&bad, sizeof *bad, "a flag"));
  int ierr = 0;
  {
    double t0 = mf_phase_begin(ctx);
    cudaError_t e = cudaMemset(bad, 0xff, sizeof *bad);
    geo_args g = geo_base(s, cs, B, D, qw);
    g.qd = d->qd;
    g.batch_stride = (long long)mf_hexop(op)->qd.batch_stride;
    g.block_stride = (long long)mf_hexop(op)->qd.block_stride;
    g.batch = mf_hexop(op)->qd.batch;
    g.has_mass = mf_pw(op)->has_mass;
    g.has_grad = mf_pw(op)->has_grad;
    g.a = a;
    g.b = b;
    g.bad = bad;
    g.derivatives = 1;
    g.cell_begin = 0;
    g.cell_end = s->ncells;
    if (e == cudaSuccess) e = launch_geometry(g, 0);
    if (e != cudaSuccess)
      ierr = mf_error_set(ctx, MF_ERR_CUDA, __FILE__, __LINE__, __func__, "geometry kernel: %s", cudaGetErrorString(e));
    if (!ierr) ierr = check_degenerate(s, &mf_hexop(op)->basis, bad);
    mf_phase_end(ctx, MF_PHASE_GEOMETRY, t0);
  }
  mf_cuda_free(ctx, bad);
  if (ierr || !c) return ierr;

  /* the coefficient: points of each batch to the host, c there, the values back and scaled in */
  double t0 = mf_phase_begin(ctx);
  const int cpb = batch_cells(cs.nqp, s->ncells);
  const size_t bp = (size_t)cpb * cs.nqp;
  double *buf = NULL;
  ierr = mf_cuda_malloc(ctx, (void **)&buf, sizeof(double) * 2 * bp * (s->dim + 1), "set-up batch buffers");
  if (!ierr) {
    double *xq_dev[2] = {buf, buf + bp * s->dim}, *val_dev[2] = {buf + 2 * bp * s->dim, buf + 2 * bp * s->dim + bp};
    geo_args g = geo_base(s, cs, B, D, qw);
    ierr = pipeline(
        ctx, s->ncells, cpb, cs.nqp, s->dim, xq_dev, val_dev, c, user,
        [&](int b0, int b1, int slot, cudaStream_t st) {
          g.cell_begin = b0;
          g.cell_end = b1;
          g.xq = xq_dev[slot];
          MF_CUDA_CALL(ctx, launch_geometry(g, st));
          return 0;
        },
        [&](int b0, int b1, int slot, cudaStream_t st) {
          const long long n = (long long)(b1 - b0) * cs.nqp;
          k_scale<<<(unsigned)((n + 255) / 256), 256, 0, st>>>(d->qd, (long long)mf_hexop(op)->qd.batch_stride,
                                                              (long long)mf_hexop(op)->qd.block_stride, mf_hexop(op)->qd.batch, cs.nqp,
                                                              s->dim, mf_pw(op)->has_mass, mf_pw(op)->has_grad, b0, n, val_dev[slot]);
          MF_CUDA_LAUNCH_CHECK(ctx, "scale");
          return 0;
        },
        "coefficient", "c"); /* the coefficient's values are refused unless finite, on the host as on the cpu backend */
  }
  mf_cuda_free(ctx, buf);
  mf_phase_end(ctx, MF_PHASE_COEFFICIENT, t0);
  return ierr;
}

/* ------------------------------------------------------------------ geometry on the fly */

// The coefficient pass of mf_cuda_operator_qdata with the values kept: the same points (k_geometry),
// the same host evaluation and finiteness check, each batch's values copied to coefq.
extern "C" int mf_cuda_otf_coefficient(mf_operator op, double *coefq)
{
  mf_space s = op->space;
  mf_context ctx = s->ctx;
  const mf_cuda_operator *d = (const mf_cuda_operator *)mf_hexop(op)->dev;
  const cell_shape cs = mfg::make_shape(s->dim, s->n1, mf_hexop(op)->basis.nq);
  double t0 = mf_phase_begin(ctx);
  const int cpb = batch_cells(cs.nqp, s->ncells);
  const size_t bp = (size_t)cpb * cs.nqp;
  double *buf = NULL;
  int ierr = mf_cuda_malloc(ctx, (void **)&buf, sizeof(double) * 2 * bp * (s->dim + 1), "set-up batch buffers");
  if (!ierr) {
    double *xq_dev[2] = {buf, buf + bp * s->dim}, *val_dev[2] = {buf + 2 * bp * s->dim, buf + 2 * bp * s->dim + bp};
    geo_args g = geo_base(s, cs, d->B, d->D, d->qw);
    ierr = pipeline(
        ctx, s->ncells, cpb, cs.nqp, s->dim, xq_dev, val_dev, mf_pw(op)->coef, mf_pw(op)->coef_user,
        [&](int b0, int b1, int slot, cudaStream_t st) {
          g.cell_begin = b0;
          g.cell_end = b1;
          g.xq = xq_dev[slot];
          MF_CUDA_CALL(ctx, launch_geometry(g, st));
          return 0;
        },
        [&](int b0, int b1, int slot, cudaStream_t st) {
          MF_CUDA_CALL(ctx, cudaMemcpyAsync(coefq + (size_t)b0 * cs.nqp, val_dev[slot],
                                            sizeof(double) * (size_t)(b1 - b0) * cs.nqp, cudaMemcpyDeviceToDevice, st));
          return 0;
        },
        "coefficient", "c");
  }
  mf_cuda_free(ctx, buf);
  mf_phase_end(ctx, MF_PHASE_COEFFICIENT, t0);
  return ierr;
}

// Stored quadrature data again: k_geometry as in mf_cuda_operator_qdata, then k_scale with the kept
// values (the same as the batches' there), so the data are the stored set-up's.
extern "C" int mf_cuda_otf_qdata(mf_operator op, double *qd, const double *coefq)
{
  mf_space s = op->space;
  mf_context ctx = s->ctx;
  const mf_cuda_operator *d = (const mf_cuda_operator *)mf_hexop(op)->dev;
  const cell_shape cs = mfg::make_shape(s->dim, s->n1, mf_hexop(op)->basis.nq);
  double t0 = mf_phase_begin(ctx);
  geo_args g = geo_base(s, cs, d->B, d->D, d->qw);
  g.qd = qd;
  g.batch_stride = (long long)mf_hexop(op)->qd.batch_stride;
  g.block_stride = (long long)mf_hexop(op)->qd.block_stride;
  g.batch = mf_hexop(op)->qd.batch;
  g.has_mass = mf_pw(op)->has_mass;
  g.has_grad = mf_pw(op)->has_grad;
  g.a = mf_pw(op)->coef_a;
  g.b = mf_pw(op)->coef_b;
  g.derivatives = 1;
  g.cell_begin = 0;
  g.cell_end = s->ncells;
  int ierr = 0;
  cudaError_t e = launch_geometry(g, 0);
  if (e != cudaSuccess)
    ierr = mf_error_set(ctx, MF_ERR_CUDA, __FILE__, __LINE__, __func__, "geometry kernel: %s", cudaGetErrorString(e));
  const long long n = (long long)s->ncells * cs.nqp;
  if (!ierr && coefq && n > 0) {
    k_scale<<<(unsigned)((n + 255) / 256), 256>>>(qd, (long long)mf_hexop(op)->qd.batch_stride, (long long)mf_hexop(op)->qd.block_stride,
                                                 mf_hexop(op)->qd.batch, cs.nqp, s->dim, mf_pw(op)->has_mass, mf_pw(op)->has_grad, 0, n, coefq);
    e = mf_cuda_launch_status();
    if (e != cudaSuccess)
      ierr = mf_error_set(ctx, MF_ERR_CUDA, __FILE__, __LINE__, __func__, "kernel 'scale': %s", cudaGetErrorString(e));
  }
  mf_phase_end(ctx, MF_PHASE_GEOMETRY, t0);
  return ierr;
}

/* Device memory the set-up of an operator needs beyond its quadrature data (for the refusal
 * before allocation). */
extern "C" size_t mf_cuda_qdata_setup_bytes(mf_operator op, int with_coefficient)
{
  const cell_shape cs = mfg::make_shape(op->space->dim, op->space->n1, mf_hexop(op)->basis.nq);
  if (!with_coefficient) return 64;
  return sizeof(double) * 2 * (size_t)batch_cells(cs.nqp, op->space->ncells) * cs.nqp * (op->space->dim + 1) + 64;
}

/* ------------------------------------------------------------------ right-hand side, L2 error */

extern "C" int mf_cuda_assemble_rhs(mf_vector bvec, const mf_basis1d *b, mf_coefficient_fn f, void *user)
{
  mf_space s = bvec->space;
  mf_context ctx = s->ctx;
  const mf_cuda_space *ds = (const mf_cuda_space *)s->dev;
  const cell_shape cs = mfg::make_shape(s->dim, s->n1, b->nq);
  const int cpb = batch_cells(cs.nqp, s->ncells);
  const size_t bp = (size_t)cpb * cs.nqp;
  MF_CALL(bvec->ops.set_value(bvec, 0.0));
  const size_t basis = sizeof(double) * ((size_t)b->nq * b->n1 + (size_t)b->nq * b->nq + b->nq) + 64;
  MF_CALL(mf_cuda_require(ctx, sizeof(double) * 2 * bp * (s->dim + 2) + basis, "the right-hand side"));
  dev_basis db(ctx);
  MF_CALL(db.upload(b));
  unsigned long long *bad = NULL;
  double *buf = NULL;
  int ierr = mf_cuda_malloc(ctx, (void **)&bad, sizeof *bad, "a flag");
  if (!ierr) ierr = mf_cuda_malloc(ctx, (void **)&buf, sizeof(double) * 2 * bp * (s->dim + 2), "set-up batch buffers");
  if (!ierr) {
    cudaError_t e = cudaMemset(bad, 0xff, sizeof *bad);
    if (e != cudaSuccess)
      ierr = mf_error_set(ctx, MF_ERR_CUDA, __FILE__, __LINE__, __func__, "cudaMemset of a flag failed: %s",
                          cudaGetErrorString(e));
  }
  if (!ierr) {
    double *xq_dev[2] = {buf, buf + bp * s->dim}, *val_dev[2] = {buf + 2 * bp * s->dim, buf + 2 * bp * s->dim + bp};
    double *wdet[2] = {buf + 2 * bp * (s->dim + 1), buf + 2 * bp * (s->dim + 1) + bp};
    geo_args g = geo_base(s, cs, db.B, db.D, db.qw);
    g.derivatives = 1;
    g.bad = bad;
    rhs_args r;
    r.c = cs;
    r.cells_per_block = g.cells_per_block;
    r.cell_nodes = ds->cell_nodes;
    r.mask = ds->mask;
    r.P = ds->P;
    r.B = db.B;
    r.b = bvec->data;
    ierr = pipeline(
        ctx, s->ncells, cpb, cs.nqp, s->dim, xq_dev, val_dev, f, user,
        [&](int b0, int b1, int slot, cudaStream_t st) {
          g.cell_begin = b0;
          g.cell_end = b1;
          g.xq = xq_dev[slot];
          g.wdet = wdet[slot];
          MF_CUDA_CALL(ctx, launch_geometry(g, st));
          return 0;
        },
        [&](int b0, int b1, int slot, cudaStream_t st) {
          r.cell_begin = b0;
          r.cell_end = b1;
          r.fq = val_dev[slot];
          r.wdet = wdet[slot];
          const int blocks = (b1 - b0 + r.cells_per_block - 1) / r.cells_per_block;
          k_rhs<<<blocks, r.cells_per_block * cs.nqp, rhs_shared(cs, r.cells_per_block), st>>>(r);
          MF_CUDA_LAUNCH_CHECK(ctx, "rhs");
          return 0;
        },
        "right-hand side", "f"); /* refused unless finite, on the host as on the cpu backend */
  }
  if (!ierr) ierr = check_degenerate(s, b, bad);
  mf_cuda_free(ctx, buf);
  mf_cuda_free(ctx, bad);
  return ierr;
}

extern "C" int mf_cuda_l2_cells(mf_vector uh, const mf_basis1d *b, mf_coefficient_fn u, void *user, double *cellsum)
{
  mf_space s = uh->space;
  mf_context ctx = s->ctx;
  const cell_shape cs = mfg::make_shape(s->dim, s->n1, b->nq);
  const int cpb = batch_cells(cs.nqp, s->ncells);
  const size_t bp = (size_t)cpb * cs.nqp;
  const size_t basis = sizeof(double) * ((size_t)b->nq * b->n1 + (size_t)b->nq * b->nq + b->nq) + 64;
  MF_CALL(mf_cuda_require(ctx, sizeof(double) * (2 * bp * (s->dim + 3) + (size_t)s->ncells) + basis, "the L2 error"));
  dev_basis db(ctx);
  MF_CALL(db.upload(b));
  double *buf = NULL, *sums = NULL;
  int ierr = mf_cuda_malloc(ctx, (void **)&buf, sizeof(double) * 2 * bp * (s->dim + 3), "set-up batch buffers");
  if (!ierr) ierr = mf_cuda_malloc(ctx, (void **)&sums, sizeof(double) * (size_t)s->ncells, "per-cell sums");
  if (!ierr) {
    double *xq_dev[2] = {buf, buf + bp * s->dim}, *val_dev[2] = {buf + 2 * bp * s->dim, buf + 2 * bp * s->dim + bp};
    double *wdet[2] = {val_dev[1] + bp, val_dev[1] + 2 * bp}, *uq[2] = {val_dev[1] + 3 * bp, val_dev[1] + 4 * bp};
    geo_args g = geo_base(s, cs, db.B, db.D, db.qw);
    g.derivatives = 1;
    g.u = uh->data;
    ierr = pipeline(
        ctx, s->ncells, cpb, cs.nqp, s->dim, xq_dev, val_dev, u, user,
        [&](int b0, int b1, int slot, cudaStream_t st) {
          g.cell_begin = b0;
          g.cell_end = b1;
          g.xq = xq_dev[slot];
          g.wdet = wdet[slot];
          g.uq = uq[slot];
          MF_CUDA_CALL(ctx, launch_geometry(g, st));
          return 0;
        },
        [&](int b0, int b1, int slot, cudaStream_t st) {
          k_l2<<<(b1 - b0 + 127) / 128, 128, 0, st>>>(b0, b1, cs.nqp, uq[slot], val_dev[slot], wdet[slot], sums);
          MF_CUDA_LAUNCH_CHECK(ctx, "l2");
          return 0;
        },
        "exact solution", "u");
  }
  if (!ierr && cudaMemcpy(cellsum, sums, sizeof(double) * (size_t)s->ncells, cudaMemcpyDeviceToHost) != cudaSuccess)
    ierr = mf_error_set(ctx, MF_ERR_CUDA, __FILE__, __LINE__, __func__, "copying per-cell sums: %s",
                        cudaGetErrorString(cudaGetLastError()));
  mf_cuda_free(ctx, buf);
  mf_cuda_free(ctx, sums);
  return ierr;
}
