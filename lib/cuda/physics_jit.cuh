// physics_jit.cuh -- the kernels of users' physics on hexahedra, compiled at run time by NVRTC
// (lib/cuda/physics.cu) together with the user's source, for one operator shape. Not compiled by nvcc:
// the including text (physics.cu's glue) defines before it
//   MF_DIM, MF_N1, MF_NQ (points per direction), MF_NC (components), MF_CPB (cells per block),
//   MF_HAS0..MF_HAS3 (which g-functions exist), MF_HASF0, MF_HASF1 (which f-functions), MF_NS_FULL,
//   MF_NS_ONE and MF_NS_SYM (stored entries per point: full, one block, one block with D3 symmetric),
//   mfree_g(t, ...) and mfree_f(t, ...), which call the user's functions,
// and includes physics/mf_physics.h and hanging/mf_hanging.h.
//
// One thread per quadrature point, MF_CPB cells per block; a cell's values live in shared memory as an
// nq^dim array, x fastest, stride nq in every direction (nodes at the positions below n1), as in
// cell_generic.cuh. The stored data are cell by cell, entry by entry, point by point:
// qd[(cell * NS + entry) * NQP + q] (coalesced over the points), in the reference form of
// mf_physics.h; the CPU keeps the same values point by point (lib/hex/physics_hex.c).

#define MF_NQP (MF_DIM == 2 ? MF_NQ * MF_NQ : MF_NQ * MF_NQ * MF_NQ)
#define MF_NPC (MF_DIM == 2 ? MF_N1 * MF_N1 : MF_N1 * MF_N1 * MF_N1)
#define MF_NT (MF_CPB * MF_NQP)
#define MF_FINITE(v) ((v) - (v) == 0.0) /* false for NaN and the infinities */

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

// the field's values and reference derivatives at this point, component by component
__device__ inline void field(block &b, const int *cell_nodes, const double *xv, int mask, bool any_mask, double *u,
                             double *ref)
{
  const int *nodes = cell_nodes + (size_t)b.cell * MF_NPC;
  const int node = b.t.isdof ? nodes[b.t.pos] : 0;
  for (int c = 0; c < MF_NC; c++) {
    b.s0[b.t.q] = b.t.isdof ? xv[(size_t)node * MF_NC + c] : 0.0;
    __syncthreads();
    if (any_mask) hanging(b.s0, mask, b.sP, b.t, false);
    const double *v = interpolate(b.sB, b.s0, b.s1, b.t);
    u[c] = v[b.t.q];
    for (int m = 0; m < MF_DIM; m++) ref[c * MF_DIM + m] = derivative(b.sD, v, b.t, m);
    __syncthreads();
  }
}

// what the point gives back (r0 against the values, r1 against the reference derivatives) integrated and
// added into y, component by component
__device__ inline void back(block &b, const int *cell_nodes, double *y, int mask, bool any_mask, const double *r0,
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
    if (b.active && b.t.isdof) atomicAdd(&y[(size_t)nodes[b.t.pos] * MF_NC + c], v[b.t.q]);
    __syncthreads();
  }
}

} // namespace mfj

// The stored data: the geometry and the g-functions at every point, written in the layout of MODE:
//   0 full (nb = nc), 1 one block, 2 one block with D3's upper triangle (sym), 3 a built-in operator's
//   (one component: D0, then D3's upper triangle, in the AoSoA layout of mf_qdata: batch, block and
//   batch strides);
// modes 1..3 check what they assume: *shape |= 1 where a point's blocks are not one block, |= 2 where
// its D3 is not symmetric (the caller then runs a wider mode). bad: the first point (cell << 20 | q)
// of a degenerate Jacobian; nonfinite: the first where a value is not finite.
template <int MODE>
__device__ inline void setup_body(const int *cell_nodes, const short *mask_all, const double *coords, int cstride,
                                  const double *B, const double *D, const double *P, const double *qw, const double *k,
                                  int ncells, double *qd, int batch, long long block_stride, long long batch_stride,
                                  int *shape, unsigned long long *bad, unsigned long long *nonfinite)
{
  mfj::block b = mfj::make_block(mf_sm, B, D, P, qw, ncells);
  const int mask = mask_all ? mask_all[b.cell] : 0;
  const bool any_mask = __syncthreads_or(mask != 0);
  double x[3] = {0, 0, 0}, J[9] = {0, 0, 0, 0, 0, 0, 0, 0, 0}, Ji[9] = {0, 0, 0, 0, 0, 0, 0, 0, 0};
  mfj::geometry(b, cell_nodes, coords, cstride, mask, any_mask, x, J);
  if (!b.active) return;
  const double det = mf_phys_inverse(MF_DIM, J, Ji);
  if (!(fabs(det) > 0.0)) {
    atomicMin(bad, ((unsigned long long)b.cell << 20) | (unsigned long long)b.t.q);
    return;
  }
  const double W = mfj::weight(b) * fabs(det);
  const int has[4] = {MF_HAS0, MF_HAS1, MF_HAS2, MF_HAS3};
  mf_phys_layout L;
  mf_phys_layout_make(MF_DIM, MF_NC, MF_NC, 0, has, &L);
  double G0[MF_NC * MF_NC + 1], G1[MF_NC * MF_NC * MF_DIM + 1], G2[MF_NC * MF_NC * MF_DIM + 1],
      G3[MF_NC * MF_NC * MF_DIM * MF_DIM + 1], Dp[MF_NS_FULL];
  double *G[4] = {G0, G1, G2, G3};
  const double u[MF_NC + 1] = {0.0}, du[MF_NC * MF_DIM + 1] = {0.0};
  bool finite = true;
  for (int t = 0; t < 4; t++) {
    if (!has[t]) continue;
    const int n = mf_phys_gsize(t, MF_DIM, MF_NC);
    for (int i = 0; i < n; i++) G[t][i] = 0.0;
    mfree_g(t, MF_DIM, MF_NC, u, du, x, k, G[t]);
    for (int i = 0; i < n; i++) finite = finite && MF_FINITE(G[t][i]);
  }
  if (!finite) atomicMin(nonfinite, ((unsigned long long)b.cell << 20) | (unsigned long long)b.t.q);
  const double *Gc[4] = {G0, G1, G2, G3};
  mf_phys_store_point(&L, Gc, Ji, W, Dp);
  if (MODE == 0) {
    double *out = qd + (size_t)b.cell * L.n * MF_NQP + b.t.q;
    for (int i = 0; i < L.n; i++) out[(size_t)i * MF_NQP] = Dp[i];
    return;
  }
  const int per[4] = {1, MF_DIM, MF_DIM, MF_DIM * MF_DIM};
  int flags = 0;
  for (int t = 0; t < 4; t++)
    if (has[t])
      for (int c = 0; c < MF_NC; c++)
        for (int bb = 0; bb < MF_NC; bb++)
          for (int i = 0; i < per[t]; i++) {
            const double v = Dp[L.off[t] + (c * MF_NC + bb) * per[t] + i], v0 = Dp[L.off[t] + i];
            if (c != bb ? v != 0.0 : v != v0) flags |= 1;
          }
  if (MODE >= 2 && MF_HAS3)
    for (int l = 0; l < MF_DIM; l++)
      for (int m = l + 1; m < MF_DIM; m++)
        if (Dp[L.off[3] + l * MF_DIM + m] != Dp[L.off[3] + m * MF_DIM + l]) flags |= 2;
  if (flags) atomicOr(shape, flags);
  mf_phys_layout O;
  mf_phys_layout_make(MF_DIM, MF_NC, 1, MODE >= 2 ? 1 : 0, has, &O);
  if (MODE == 3) { // D0, then D3's upper triangle, as mf_qdata
    double *o = qd + (size_t)(b.cell / batch) * batch_stride + (size_t)(b.cell % batch) * MF_NQP + b.t.q;
    int comp = 0;
    if (MF_HAS0) o[(size_t)(comp++) * block_stride] = Dp[L.off[0]];
    if (MF_HAS3)
      for (int l = 0; l < MF_DIM; l++)
        for (int m = l; m < MF_DIM; m++) o[(size_t)(comp++) * block_stride] = Dp[L.off[3] + l * MF_DIM + m];
    return;
  }
  double *out = qd + (size_t)b.cell * O.n * MF_NQP + b.t.q;
  for (int t = 0; t < 3; t++)
    if (has[t])
      for (int i = 0; i < per[t]; i++) out[(size_t)(O.off[t] + i) * MF_NQP] = Dp[L.off[t] + i];
  if (MF_HAS3)
    for (int l = 0; l < MF_DIM; l++)
      for (int m = 0; m < MF_DIM; m++)
        if (MODE == 1 || m >= l) out[(size_t)mf_phys_d3(&O, 0, l, m) * MF_NQP] = Dp[L.off[3] + l * MF_DIM + m];
}

#define MF_SETUP_KERNEL(NAME, MODE)                                                                                \
  extern "C" __global__ void __launch_bounds__(MF_NT)                                                              \
      NAME(const int *cell_nodes, const short *mask_all, const double *coords, int cstride, const double *B,       \
           const double *D, const double *P, const double *qw, const double *k, int ncells, double *qd, int batch, \
           long long block_stride, long long batch_stride, int *shape, unsigned long long *bad,                    \
           unsigned long long *nonfinite)                                                                          \
  {                                                                                                                \
    setup_body<MODE>(cell_nodes, mask_all, coords, cstride, B, D, P, qw, k, ncells, qd, batch, block_stride,       \
                     batch_stride, shape, bad, nonfinite);                                                         \
  }
MF_SETUP_KERNEL(mfree_setup_full, 0)
MF_SETUP_KERNEL(mfree_setup_one, 1)
MF_SETUP_KERNEL(mfree_setup_sym, 2)
MF_SETUP_KERNEL(mfree_setup_builtin, 3)

// y += A x on the stored data of layout nb (1: one block for all components; SYM: its D3's upper triangle)
template <int NB, int SYM>
__device__ inline void apply_body(const int *cell_nodes, const int *order, const short *mask_all, const double *B,
                                  const double *D, const double *P, const double *qw, const double *qd,
                                  const float *qdf, int ncells, const double *x, double *y)
{
  mfj::block b = mfj::make_block(mf_sm, B, D, P, qw, ncells);
  if (order) b.cell = order[b.cell];
  const int mask = mask_all ? mask_all[b.cell] : 0;
  const bool any_mask = __syncthreads_or(mask != 0);
  constexpr int NS = SYM ? MF_NS_SYM : NB == 1 ? MF_NS_ONE : MF_NS_FULL;
  double u[MF_NC], ref[MF_NC * MF_DIM], r0[MF_NC], r1[MF_NC * MF_DIM], Dp[NS];
  mfj::field(b, cell_nodes, x, mask, any_mask, u, ref);
  const int has[4] = {MF_HAS0, MF_HAS1, MF_HAS2, MF_HAS3};
  mf_phys_layout L;
  mf_phys_layout_make(MF_DIM, MF_NC, NB, SYM, has, &L);
  const size_t first = (size_t)b.cell * L.n * MF_NQP + b.t.q;
  for (int i = 0; i < L.n; i++) Dp[i] = qdf ? (double)qdf[first + (size_t)i * MF_NQP] : qd[first + (size_t)i * MF_NQP];
  mf_phys_apply_point(&L, Dp, u, ref, r0, r1);
  mfj::back(b, cell_nodes, y, mask, any_mask, r0, r1);
}

#define MF_APPLY_KERNEL(NAME, NB, SYM)                                                                           \
  extern "C" __global__ void __launch_bounds__(MF_NT)                                                              \
      NAME(const int *cell_nodes, const int *order, const short *mask_all, const double *B, const double *D,       \
           const double *P, const double *qw, const double *qd, const float *qdf, int ncells, const double *x,     \
           double *y)                                                                                              \
  {                                                                                                                \
    apply_body<NB, SYM>(cell_nodes, order, mask_all, B, D, P, qw, qd, qdf, ncells, x, y);                        \
  }
MF_APPLY_KERNEL(mfree_apply_full, MF_NC, 0)
MF_APPLY_KERNEL(mfree_apply_one, 1, 0)
MF_APPLY_KERNEL(mfree_apply_sym, 1, 1)

// r += F(u): the residual of f0 and f1 with the geometry made again here; nonfinite as in mfree_setup
extern "C" __global__ void __launch_bounds__(MF_NT) mfree_residual(const int *cell_nodes, const short *mask_all,
                                                                     const double *coords, int cstride, const double *B,
                                                                     const double *D, const double *P, const double *qw,
                                                                     const double *k, int ncells, const double *uv,
                                                                     double *rv, unsigned long long *nonfinite)
{
  mfj::block b = mfj::make_block(mf_sm, B, D, P, qw, ncells);
  const int mask = mask_all ? mask_all[b.cell] : 0;
  const bool any_mask = __syncthreads_or(mask != 0);
  double x[3] = {0, 0, 0}, J[9] = {0, 0, 0, 0, 0, 0, 0, 0, 0}, Ji[9] = {0, 0, 0, 0, 0, 0, 0, 0, 0};
  mfj::geometry(b, cell_nodes, coords, cstride, mask, any_mask, x, J);
  double u[MF_NC], ref[MF_NC * MF_DIM], du[MF_NC * MF_DIM], r0[MF_NC], r1[MF_NC * MF_DIM];
  mfj::field(b, cell_nodes, uv, mask, any_mask, u, ref);
  const double det = mf_phys_inverse(MF_DIM, J, Ji), W = mfj::weight(b) * fabs(det);
  for (int c = 0; c < MF_NC; c++)
    for (int e = 0; e < MF_DIM; e++) {
      double s = 0.0;
      for (int m = 0; m < MF_DIM; m++) s += ref[c * MF_DIM + m] * Ji[3 * m + e];
      du[c * MF_DIM + e] = s;
    }
  double f0[MF_NC], f1[MF_NC * MF_DIM];
  for (int i = 0; i < MF_NC; i++) f0[i] = 0.0;
  for (int i = 0; i < MF_NC * MF_DIM; i++) f1[i] = 0.0;
  if (MF_HASF0) mfree_f(0, MF_DIM, MF_NC, u, du, x, k, f0);
  if (MF_HASF1) mfree_f(1, MF_DIM, MF_NC, u, du, x, k, f1);
  bool finite = true;
  for (int c = 0; c < MF_NC; c++) {
    finite = finite && MF_FINITE(f0[c]);
    r0[c] = W * f0[c];
    for (int l = 0; l < MF_DIM; l++) {
      double s = 0.0;
      for (int d = 0; d < MF_DIM; d++) s += Ji[3 * l + d] * f1[c * MF_DIM + d];
      finite = finite && MF_FINITE(f1[c * MF_DIM + l]);
      r1[c * MF_DIM + l] = W * s;
    }
  }
  if (b.active && !finite) atomicMin(nonfinite, ((unsigned long long)b.cell << 20) | (unsigned long long)b.t.q);
  mfj::back(b, cell_nodes, rv, mask, any_mask, r0, r1);
}
