// jit_cell.cuh -- the cell steps of the kernels compiled at run time by NVRTC (physics_jit.cuh for users'
// physics, source_jit.cuh for pointwise fields given as source), for one cell shape. Not compiled by
// nvcc: the including text defines MF_DIM, MF_N1, MF_NQ (points per direction), MF_NC (components) and
// MF_CPB (cells per block) and includes hanging/mf_hanging.h before it.
//
// One thread per quadrature point, MF_CPB cells per block; a cell's values live in shared memory as an
// nq^dim array, x fastest, stride nq in every direction (nodes at the positions below n1), as in
// cell_generic.cuh.
#ifndef MF_JIT_CELL_CUH
#define MF_JIT_CELL_CUH
#define MF_NQP (MF_DIM == 2 ? MF_NQ * MF_NQ : MF_NQ * MF_NQ * MF_NQ)
#define MF_NPC (MF_DIM == 2 ? MF_N1 * MF_N1 : MF_N1 * MF_N1 * MF_N1)
#define MF_NT (MF_CPB * MF_NQP)

extern __shared__ double mf_sm[]; // every kernel's dynamic shared memory

namespace mfj {

struct pt {
  int q, i, j, k;
  bool isdof;
  int pos;
};

__device__ inline pt make_pt(int q)
{
  pt t;
  t.q = q;
  t.i = q % MF_NQ;
  t.j = (q / MF_NQ) % MF_NQ;
  t.k = MF_DIM == 3 ? q / (MF_NQ * MF_NQ) : 0;
  t.isdof = t.i < MF_N1 && t.j < MF_N1 && (MF_DIM == 2 || t.k < MF_N1);
  t.pos = t.i + MF_N1 * (t.j + MF_N1 * t.k);
  return t;
}

__device__ inline int at(int i, int j, int k) { return (k * MF_NQ + j) * MF_NQ + i; }

// In place u <- C u (transpose: C^T u) on the nodal values s (mf_hanging_apply's order). All threads.
__device__ inline void hanging(double *s, int mask, const double *sP, const pt &t, bool transpose)
{
  const int child = mf_hanging_child(MF_DIM, mask), idx[3] = {t.i, t.j, t.k};
  for (int step = 0; step < MF_DIM; step++) {
    const int d = transpose ? MF_DIM - 1 - step : step;
    const bool need = mask && t.isdof && mf_hanging_line_needed(MF_DIM, MF_N1, mask, d, idx);
    double v = 0.0;
    if (need) {
      const double *M = sP + (child >> d & 1) * MF_N1 * MF_N1;
      const int st = d == 0 ? 1 : d == 1 ? MF_NQ : MF_NQ * MF_NQ;
      const int base = at(t.i, t.j, t.k) - idx[d] * st;
      for (int m = 0; m < MF_N1; m++) v += (transpose ? M[m * MF_N1 + idx[d]] : M[idx[d] * MF_N1 + m]) * s[base + m * st];
    }
    __syncthreads();
    if (need) s[at(t.i, t.j, t.k)] = v;
    __syncthreads();
  }
}

// nodal values in s0 -> values at the points (B: nq x n1, sweeps x, y, z); returns the buffer
__device__ inline double *interpolate(const double *sB, double *s0, double *s1, const pt &t)
{
  double *in = s0, *out = s1;
  for (int d = 0; d < MF_DIM; d++) {
    const int idx[3] = {t.i, t.j, t.k};
    bool active = true; // out(i, j, k): directions < d and d itself run over nq, the others over n1
    for (int e = d + 1; e < MF_DIM; e++) active = active && idx[e] < MF_N1;
    double v = 0.0;
    if (active) {
      const int st = d == 0 ? 1 : d == 1 ? MF_NQ : MF_NQ * MF_NQ;
      const int base = at(t.i, t.j, t.k) - idx[d] * st;
      for (int m = 0; m < MF_N1; m++) v += sB[idx[d] * MF_N1 + m] * in[base + m * st];
    }
    __syncthreads();
    if (active) out[at(t.i, t.j, t.k)] = v;
    __syncthreads();
    double *tmp = in;
    in = out;
    out = tmp;
  }
  return in;
}

// point values in s0 -> nodal values (B^T, sweeps x, y, z as mf_tensor_integrate); returns the buffer
__device__ inline double *integrate(const double *sB, double *s0, double *s1, const pt &t)
{
  double *in = s0, *out = s1;
  for (int d = 0; d < MF_DIM; d++) {
    const int idx[3] = {t.i, t.j, t.k};
    // out(.., m at d, ..): directions < d run over n1 already, d over n1, the others over nq
    bool active = idx[d] < MF_N1;
    for (int e = 0; e < d; e++) active = active && idx[e] < MF_N1;
    double v = 0.0;
    if (active) {
      const int st = d == 0 ? 1 : d == 1 ? MF_NQ : MF_NQ * MF_NQ;
      const int base = at(t.i, t.j, t.k) - idx[d] * st;
      for (int q = 0; q < MF_NQ; q++) v += sB[q * MF_N1 + idx[d]] * in[base + q * st];
    }
    __syncthreads();
    if (active) out[at(t.i, t.j, t.k)] = v;
    __syncthreads();
    double *tmp = in;
    in = out;
    out = tmp;
  }
  return in;
}

// the derivative along l at this point of the point values v (collocation derivative D: nq x nq)
__device__ inline double derivative(const double *sD, const double *v, const pt &t, int l)
{
  const int idx[3] = {t.i, t.j, t.k}, st = l == 0 ? 1 : l == 1 ? MF_NQ : MF_NQ * MF_NQ;
  const int base = at(t.i, t.j, t.k) - idx[l] * st;
  double g = 0.0;
  for (int m = 0; m < MF_NQ; m++) g += sD[idx[l] * MF_NQ + m] * v[base + m * st];
  return g;
}
// sum over m of D[m][idx_l] v(.. m at l ..): the transpose
__device__ inline double derivative_t(const double *sD, const double *v, const pt &t, int l)
{
  const int idx[3] = {t.i, t.j, t.k}, st = l == 0 ? 1 : l == 1 ? MF_NQ : MF_NQ * MF_NQ;
  const int base = at(t.i, t.j, t.k) - idx[l] * st;
  double g = 0.0;
  for (int m = 0; m < MF_NQ; m++) g += sD[m * MF_NQ + idx[l]] * v[base + m * st];
  return g;
}

__device__ inline void stage(double *dst, const double *src, int n)
{
  for (int i = threadIdx.x; i < n; i += blockDim.x) dst[i] = src[i];
}

// shared memory of a block: B, D, P, weights, then two nq^dim buffers per cell
#define MF_SH_PER_CELL (2 * MF_NQP)
#define MF_SH_FIXED (MF_NQ * MF_N1 + MF_NQ * MF_NQ + 2 * MF_N1 * MF_N1 + MF_NQ)

struct block {
  double *sB, *sD, *sP, *sw, *s0, *s1;
  int cell;
  bool active;
  pt t;
};

__device__ inline block make_block(double *sm, const double *B, const double *D, const double *P, const double *qw,
                                   int ncells)
{
  block b;
  b.sB = sm;
  b.sD = b.sB + MF_NQ * MF_N1;
  b.sP = b.sD + MF_NQ * MF_NQ;
  b.sw = b.sP + 2 * MF_N1 * MF_N1;
  const int lc = threadIdx.x / MF_NQP, q = threadIdx.x - lc * MF_NQP;
  b.s0 = sm + MF_SH_FIXED + (size_t)lc * MF_SH_PER_CELL;
  b.s1 = b.s0 + MF_NQP;
  const int pos = blockIdx.x * MF_CPB + lc;
  b.active = pos < ncells;
  b.cell = b.active ? pos : 0; // idle threads shadow cell 0, results dropped
  b.t = make_pt(q);
  stage(b.sB, B, MF_NQ * MF_N1);
  stage(b.sD, D, MF_NQ * MF_NQ);
  stage(b.sw, qw, MF_NQ);
  if (P) stage(b.sP, P, 2 * MF_N1 * MF_N1);
  __syncthreads();
  return b;
}

// the point x and Jacobian J (J[3k + l] = d x_k / d xi_l) from the cell's geometry nodes (coords,
// stride cstride doubles per node, constraints applied)
__device__ inline void geometry(block &b, const int *cell_nodes, const double *coords, int cstride, int mask,
                                bool any_mask, double *x, double *J)
{
  const int *nodes = cell_nodes + (size_t)b.cell * MF_NPC;
  const int node = b.t.isdof ? nodes[b.t.pos] : 0;
  for (int k = 0; k < MF_DIM; k++) {
    b.s0[b.t.q] = b.t.isdof ? coords[(size_t)node * cstride + k] : 0.0;
    __syncthreads();
    if (any_mask) hanging(b.s0, mask, b.sP, b.t, false);
    const double *v = interpolate(b.sB, b.s0, b.s1, b.t);
    x[k] = v[b.t.q];
    for (int l = 0; l < MF_DIM; l++) J[3 * k + l] = derivative(b.sD, v, b.t, l);
    __syncthreads();
  }
}

__device__ inline double weight(const block &b)
{
  double w = b.sw[b.t.i] * b.sw[b.t.j];
  if (MF_DIM == 3) w *= b.sw[b.t.k];
  return w;
}

// the field's values and reference derivatives at this point, component by component (xv: double, or
// float for a float copy of the operator; the cell's work in double)
template <class T>
__device__ inline void field(block &b, const int *cell_nodes, const T *xv, int mask, bool any_mask, double *u,
                             double *ref)
{
  const int *nodes = cell_nodes + (size_t)b.cell * MF_NPC;
  const int node = b.t.isdof ? nodes[b.t.pos] : 0;
  for (int c = 0; c < MF_NC; c++) {
    b.s0[b.t.q] = b.t.isdof ? (double)xv[(size_t)node * MF_NC + c] : 0.0;
    __syncthreads();
    if (any_mask) hanging(b.s0, mask, b.sP, b.t, false);
    const double *v = interpolate(b.sB, b.s0, b.s1, b.t);
    u[c] = v[b.t.q];
    for (int m = 0; m < MF_DIM; m++) ref[c * MF_DIM + m] = derivative(b.sD, v, b.t, m);
    __syncthreads();
  }
}

// what the point gives back (r0 against the values, r1 against the reference derivatives) integrated and
// added into y (double, or float), component by component
template <class T>
__device__ inline void back(block &b, const int *cell_nodes, T *y, int mask, bool any_mask, const double *r0,
                            const double *r1)
{
  const int *nodes = cell_nodes + (size_t)b.cell * MF_NPC;
  for (int c = 0; c < MF_NC; c++) {
    double acc = r0[c];
    for (int l = 0; l < MF_DIM; l++) {
      b.s0[b.t.q] = r1[c * MF_DIM + l];
      __syncthreads();
      acc += derivative_t(b.sD, b.s0, b.t, l);
      __syncthreads();
    }
    b.s0[b.t.q] = acc;
    __syncthreads();
    double *v = integrate(b.sB, b.s0, b.s1, b.t);
    if (any_mask) hanging(v, mask, b.sP, b.t, true);
    if (b.active && b.t.isdof) atomicAdd(&y[(size_t)nodes[b.t.pos] * MF_NC + c], (T)v[b.t.q]);
    __syncthreads();
  }
}

} // namespace mfj

#endif
