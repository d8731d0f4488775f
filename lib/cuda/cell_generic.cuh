// cell_generic.cuh -- device building blocks with run-time sizes (dim, n1 = p + 1, nq) for the set-up
// kernels and the diagonal of cells with hanging nodes, where a few percent of speed matter less than
// one instantiation for every case. The apply kernels (apply_kernel.cuh) are the templated, tuned
// ones; these follow the same conventions and the same order of operations as the CPU reference
// (lib/hex/geometry.c, lib/hex/kernels_cpu.c, lib/hanging/hanging.c), so CPU and GPU agree to rounding.
//
// A cell's values live in shared memory as an nq^dim array, x fastest, stride nq in every direction;
// thread q of a cell handles point (i, j, k) = (q % nq, q / nq % nq, q / nq^2). Every function that
// synchronises must be called by all threads of the block.
#ifndef MF_CELL_GENERIC_CUH
#define MF_CELL_GENERIC_CUH

#include "mf_cuda_common.cuh"
#include "hanging/mf_hanging.h"
#include "physics/mf_gallery.h"

namespace mfg {

struct cell_shape {
  int dim, n1, nq, nqp, npc;
};

__host__ __device__ inline cell_shape make_shape(int dim, int n1, int nq)
{
  cell_shape c;
  c.dim = dim;
  c.n1 = n1;
  c.nq = nq;
  c.nqp = dim == 2 ? nq * nq : nq * nq * nq;
  c.npc = dim == 2 ? n1 * n1 : n1 * n1 * n1;
  return c;
}

struct point {
  int q, i, j, k;
  bool isdof; // i, j, k < n1: a node of the cell
  int pos;    // its node index i + n1 (j + n1 k) (valid if isdof)
};

__device__ inline point make_point(const cell_shape &c, int q)
{
  point t;
  t.q = q;
  t.i = q % c.nq;
  t.j = (q / c.nq) % c.nq;
  t.k = c.dim == 3 ? q / (c.nq * c.nq) : 0;
  t.isdof = t.i < c.n1 && t.j < c.n1 && (c.dim == 2 || t.k < c.n1);
  t.pos = t.i + c.n1 * (t.j + c.n1 * t.k);
  return t;
}

__device__ inline int at(const cell_shape &c, int i, int j, int k) { return (k * c.nq + j) * c.nq + i; }

// In place u <- C u (transpose: C^T u) on the nodal values s: direction by direction, the lines
// through hanging faces/edges get the 1D interpolation P (sP: 2 x n1 x n1), as mf_hanging_apply.
template <class T>
__device__ inline void hanging(const cell_shape &c, T *s, int mask, const T *sP, const point &t, bool transpose)
{
  const int child = mf_hanging_child(c.dim, mask), idx[3] = {t.i, t.j, t.k};
  for (int step = 0; step < c.dim; step++) {
    const int d = transpose ? c.dim - 1 - step : step;
    const bool need = mask && t.isdof && mf_hanging_line_needed(c.dim, c.n1, mask, d, idx);
    T v = 0;
    if (need) {
      const T *M = sP + (child >> d & 1) * c.n1 * c.n1;
      const int st = d == 0 ? 1 : d == 1 ? c.nq : c.nq * c.nq;
      const int base = at(c, t.i, t.j, t.k) - idx[d] * st;
      for (int m = 0; m < c.n1; m++)
        v += (transpose ? M[m * c.n1 + idx[d]] : M[idx[d] * c.n1 + m]) * s[base + m * st];
    }
    __syncthreads();
    if (need) s[at(c, t.i, t.j, t.k)] = v;
    __syncthreads();
  }
}

// Nodal values in s0 -> values at the quadrature points (Bx, By, Bz: nq x n1 per direction, sweeps
// x, y, z as mf_tensor_interpolate); returns the buffer holding them (s0 or s1).
template <class T>
__device__ inline T *interpolate_dirs(const cell_shape &c, const T *Bx, const T *By, const T *Bz, T *s0, T *s1,
                                      const point &t)
{
  const int n1 = c.n1;
  if (t.j < n1 && t.k < n1) {
    T v = 0;
    for (int m = 0; m < n1; m++) v += Bx[t.i * n1 + m] * s0[at(c, m, t.j, t.k)];
    s1[t.q] = v;
  }
  __syncthreads();
  if (t.k < n1) {
    T v = 0;
    for (int m = 0; m < n1; m++) v += By[t.j * n1 + m] * s1[at(c, t.i, m, t.k)];
    s0[t.q] = v;
  }
  __syncthreads();
  if (c.dim == 2) return s0;
  T v = 0;
  for (int m = 0; m < n1; m++) v += Bz[t.k * n1 + m] * s0[at(c, t.i, t.j, m)];
  s1[t.q] = v;
  __syncthreads();
  return s1;
}

template <class T>
__device__ inline T *interpolate(const cell_shape &c, const T *sB, T *s0, T *s1, const point &t)
{
  return interpolate_dirs(c, sB, sB, sB, s0, s1, t);
}

// Quadrature values in s0 -> nodal values (B^T sweeps x, y, z as mf_tensor_integrate); the result of
// a node thread is returned (0 elsewhere). s0 and s1 are overwritten.
template <class T>
__device__ inline T integrate_dirs(const cell_shape &c, const T *Bx, const T *By, const T *Bz, T *s0, T *s1,
                                   const point &t)
{
  const int n1 = c.n1, nq = c.nq;
  const T *sB = Bx;
  if (c.dim == 2) {
    if (t.i < n1) {
      T v = 0;
      for (int m = 0; m < nq; m++) v += sB[m * n1 + t.i] * s0[at(c, m, t.j, 0)];
      s1[t.q] = v;
    }
    __syncthreads();
    T r = 0;
    if (t.isdof)
      for (int m = 0; m < nq; m++) r += By[m * n1 + t.j] * s1[at(c, t.i, m, 0)];
    __syncthreads();
    return r;
  }
  if (t.i < n1) {
    T v = 0;
    for (int m = 0; m < nq; m++) v += sB[m * n1 + t.i] * s0[at(c, m, t.j, t.k)];
    s1[t.q] = v;
  }
  __syncthreads();
  if (t.i < n1 && t.j < n1) {
    T v = 0;
    for (int m = 0; m < nq; m++) v += By[m * n1 + t.j] * s1[at(c, t.i, m, t.k)];
    s0[t.q] = v;
  }
  __syncthreads();
  T r = 0;
  if (t.isdof)
    for (int m = 0; m < nq; m++) r += Bz[m * n1 + t.k] * s0[at(c, t.i, t.j, m)];
  __syncthreads();
  return r;
}

template <class T>
__device__ inline T integrate(const cell_shape &c, const T *sB, T *s0, T *s1, const point &t)
{
  return integrate_dirs(c, sB, sB, sB, s0, s1, t);
}

// Derivative along direction l at this point of the quadrature values u (collocation D: nq x nq).
__device__ inline double derivative(const cell_shape &c, const double *sD, const double *u, const point &t, int l)
{
  const int nq = c.nq, idx = l == 0 ? t.i : l == 1 ? t.j : t.k;
  double v = 0.0;
  for (int m = 0; m < nq; m++) {
    const int p = l == 0 ? at(c, m, t.j, t.k) : l == 1 ? at(c, t.i, m, t.k) : at(c, t.i, t.j, m);
    v += sD[idx * nq + m] * u[p];
  }
  return v;
}

// Transposed derivative: sum_m D[m][idx] v[line m] along direction l.
__device__ inline double derivative_t(const cell_shape &c, const double *sD, const double *v, const point &t, int l)
{
  const int nq = c.nq, idx = l == 0 ? t.i : l == 1 ? t.j : t.k;
  double r = 0.0;
  for (int m = 0; m < nq; m++) {
    const int p = l == 0 ? at(c, m, t.j, t.k) : l == 1 ? at(c, t.i, m, t.k) : at(c, t.i, t.j, m);
    r += sD[m * nq + idx] * v[p];
  }
  return r;
}

// Copy n values from global to shared memory with the whole block (rounded to the type of dst).
template <class T, class S>
__device__ inline void stage(T *dst, const S *src, int n)
{
  for (int t = threadIdx.x; t < n; t += blockDim.x) dst[t] = (T)src[t];
}

// Column j of C^T A_e C at this thread's node: the cell operator with constraints applied to the
// unit vector e_j, the same steps and order as mf_kernel_cell_cpu (the diagonal and the assembly of
// cells with hanging nodes use it). qv: this point's quadrature data (mass part first when present,
// then the dim (dim + 1) / 2 gradient components); s0, s1: nqp doubles, v: dim nqp. Synchronises: all
// threads of the block call it with the same j.
__device__ inline double constrained_column(const cell_shape &c, int j, int mask, const double *sB, const double *sD,
                                            const double *sP, double *s0, double *s1, double *v, const double *qv,
                                            int has_mass, int has_grad, int colloc, const point &t)
{
  s0[t.q] = (t.isdof && t.pos == j) ? 1.0 : 0.0;
  __syncthreads();
  hanging(c, s0, mask, sP, t, false);
  const double *uqs = colloc ? s0 : interpolate(c, sB, s0, s1, t);
  const double uq = uqs[t.q];
  // the pointwise step (lib/physics/mf_gallery.h): r = m u_q, then v = G g
  double r = MF_PW_MASS_VALUE(has_mass, qv, 0, uq);
  if (has_grad) {
    const double *G = MF_PW_GRAD_BASE(has_mass, qv, 1);
    double g[3] = {0, 0, 0};
    for (int l = 0; l < c.dim; l++) g[l] = derivative(c, sD, uqs, t, l);
    double Gm[3][3];
    MF_PW_G_FULL(c.dim, G, 1, Gm);
    for (int k = 0; k < c.dim; k++) {
      double s;
      MF_PW_G_ROW_SUM(c.dim, Gm, k, g, s);
      v[k * c.nqp + t.q] = s;
    }
    __syncthreads();
    for (int k = 0; k < c.dim; k++) r += derivative_t(c, sD, v + k * c.nqp, t, k);
  }
  __syncthreads();
  s0[t.q] = r;
  __syncthreads();
  double res = colloc ? (t.isdof ? r : 0.0) : integrate(c, sB, s0, s1, t);
  s1[t.q] = res;
  __syncthreads();
  hanging(c, s1, mask, sP, t, true);
  res = s1[t.q];
  __syncthreads();
  return res;
}

// What every kernel over the cells with hanging nodes reads (the diagonal's and the assembly's, one
// block per cell): the cells, their DoFs and masks, the 1D matrices and the operator's quadrature data.
// Their argument structs extend it with their output.
struct hanging_cell_args {
  cell_shape c;
  const int *cells, *cell_nodes;
  const int16_t *mask;
  const double *P, *B, *D, *qd;
  long long batch_stride, block_stride;
  int batch, has_mass, has_grad, colloc;
};

// Filled for a hex operator op (host).
static inline void hanging_cell_args_fill(mf_operator op, hanging_cell_args *a)
{
  const mf_space s = op->space;
  const mf_hex_op *h = mf_hexop(op);
  const mf_cuda_operator *d = (const mf_cuda_operator *)h->dev;
  const mf_cuda_space *ds = (const mf_cuda_space *)s->dev;
  a->c = make_shape(s->dim, s->n1, h->basis.nq);
  a->cells = ds->masked_cells;
  a->cell_nodes = ds->cell_nodes;
  a->mask = ds->mask;
  a->P = ds->P;
  a->B = d->B;
  a->D = d->D;
  a->qd = d->qd;
  a->batch_stride = (long long)h->qd.batch_stride;
  a->block_stride = (long long)h->qd.block_stride;
  a->batch = h->qd.batch;
  a->has_mass = h->pw.has_mass;
  a->has_grad = h->pw.has_grad;
  a->colloc = h->basis.collocated;
}

} // namespace mfg

#endif
