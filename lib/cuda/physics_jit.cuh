// physics_jit.cuh -- the kernels of users' physics on hexahedra, compiled at run time by NVRTC
// (lib/cuda/physics.cu) together with the user's source, for one operator shape. Not compiled by nvcc:
// the including text (physics.cu's glue) defines before it
//   MF_DIM, MF_N1, MF_NQ (points per direction), MF_NC (components), MF_CPB (cells per block),
//   MF_HAS0..MF_HAS3 (which g-functions exist), MF_HASF0, MF_HASF1 (which f-functions), MF_NS_FULL,
//   MF_NS_ONE and MF_NS_SYM (stored entries per point: full, one block, one block with D3 symmetric),
//   mfree_g(t, ...) and mfree_f(t, ...), which call the user's functions,
// and includes physics/mf_physics.h and hanging/mf_hanging.h. With MF_FLOAT_COPY 1 the text holds the float
// copy's kernels only (the products on float vectors: _f), a library of its own, compiled where a float
// V-cycle asks for it; with MF_STATE 1 those of the operator at a state only (_state), compiled at its first
// state; else every other kernel.
//
// The cell steps (one thread per quadrature point, MF_CPB cells per block) are jit_cell.cuh's. The
// stored data are cell by cell, entry by entry, point by point:
// qd[(cell * NS + entry) * NQP + q] (coalesced over the points), in the reference form of
// mf_physics.h; the CPU keeps the same values point by point (lib/hex/physics_hex.c).

#include "assembled/mf_csr.h"
#include "cuda/jit_cell.cuh"
#include "cuda/phys_point.cuh"

#if !MF_FLOAT_COPY
// The stored data: the geometry and the g-functions at every point, written in the layout of MODE:
//   0 full (nb = nc), 1 one block, 2 one block with D3's upper triangle (sym), 3 a built-in operator's
//   (one component: D0, then D3's upper triangle, in the AoSoA layout of mf_qdata: batch, block and
//   batch strides);
// modes 1..3 check what they assume: *shape |= 1 where a point's blocks are not one block, |= 2 where
// its D3 is not symmetric (the caller then runs a wider mode). bad: the first point (cell << 20 | q)
// of a degenerate Jacobian; nonfinite: the first where a value is not finite. STATE (MODE 0 only): the
// g-functions at (u, grad u) of the state's values sv instead of at u = 0; qd NULL there: the checks alone (the
// fused operator at a state evaluates them at every application).
template <int MODE, bool STATE>
__device__ inline void setup_body(const int *cell_nodes, const short *mask_all, const double *coords, int cstride,
                                  const double *B, const double *D, const double *P, const double *qw, const double *k,
                                  int ncells, const double *sv, double *qd, int batch, long long block_stride,
                                  long long batch_stride, int *shape, unsigned long long *bad,
                                  unsigned long long *nonfinite)
{
  mfj::block b = mfj::make_block(mf_sm, B, D, P, qw, ncells);
  const int mask = mask_all ? mask_all[b.cell] : 0;
  const bool any_mask = __syncthreads_or(mask != 0);
  double x[3] = {0, 0, 0}, J[9] = {0, 0, 0, 0, 0, 0, 0, 0, 0}, Ji[9] = {0, 0, 0, 0, 0, 0, 0, 0, 0};
  mfj::geometry(b, cell_nodes, coords, cstride, mask, any_mask, x, J);
  double us[MF_NC + 1] = {0.0}, refs[MF_NC * MF_DIM + 1] = {0.0}, dus[MF_NC * MF_DIM + 1] = {0.0};
  if (STATE) mfj::field(b, cell_nodes, sv, mask, any_mask, us, refs);
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
  if (STATE) mfp::physical_gradient(refs, Ji, dus);
  if (!mfp::eval_g_at(x, k, us, dus, G0, G1, G2, G3))
    atomicMin(nonfinite, ((unsigned long long)b.cell << 20) | (unsigned long long)b.t.q);
  if (STATE && !qd) return;
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
    setup_body<MODE, false>(cell_nodes, mask_all, coords, cstride, B, D, P, qw, k, ncells, NULL, qd, batch,      \
                            block_stride, batch_stride, shape, bad, nonfinite);                                    \
  }
#if !MF_STATE
MF_SETUP_KERNEL(mfree_setup_full, 0)
MF_SETUP_KERNEL(mfree_setup_one, 1)
MF_SETUP_KERNEL(mfree_setup_sym, 2)
MF_SETUP_KERNEL(mfree_setup_builtin, 3)
#endif

#if MF_STATE
// the stored data at the state sv (the full layout), or with qd NULL its checks alone
extern "C" __global__ void __launch_bounds__(MF_NT)
    mfree_setup_state(const int *cell_nodes, const short *mask_all, const double *coords, int cstride, const double *B,
                      const double *D, const double *P, const double *qw, const double *k, int ncells, const double *sv,
                      double *qd, unsigned long long *bad, unsigned long long *nonfinite)
{
  setup_body<0, true>(cell_nodes, mask_all, coords, cstride, B, D, P, qw, k, ncells, sv, qd, 0, 0, 0, NULL, bad,
                      nonfinite);
}
#endif

#endif

// y += A x on the stored data of layout nb (1: one block for all components; SYM: its D3's upper triangle);
// T the vectors' type: double (qd), or float for the operator's float copy (qdf: its data rounded to float;
// the point's work in double)
template <int NB, int SYM, class T>
__device__ inline void apply_body(const int *cell_nodes, const int *order, const short *mask_all, const double *B,
                                  const double *D, const double *P, const double *qw, const double *qd,
                                  const float *qdf, int ncells, const T *x, T *y)
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

#define MF_APPLY_KERNEL(NAME, NB, SYM, T)                                                                        \
  extern "C" __global__ void __launch_bounds__(MF_NT)                                                              \
      NAME(const int *cell_nodes, const int *order, const short *mask_all, const double *B, const double *D,       \
           const double *P, const double *qw, const double *qd, const float *qdf, int ncells, const T *x, T *y)    \
  {                                                                                                                \
    apply_body<NB, SYM, T>(cell_nodes, order, mask_all, B, D, P, qw, qd, qdf, ncells, x, y);                     \
  }
#if MF_FLOAT_COPY
MF_APPLY_KERNEL(mfree_apply_full_f, MF_NC, 0, float)
MF_APPLY_KERNEL(mfree_apply_one_f, 1, 0, float)
MF_APPLY_KERNEL(mfree_apply_sym_f, 1, 1, float)
#elif !MF_STATE
MF_APPLY_KERNEL(mfree_apply_full, MF_NC, 0, double)
MF_APPLY_KERNEL(mfree_apply_one, 1, 0, double)
MF_APPLY_KERNEL(mfree_apply_sym, 1, 1, double)

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
  double u[MF_NC], ref[MF_NC * MF_DIM], r0[MF_NC], r1[MF_NC * MF_DIM];
  mfj::field(b, cell_nodes, uv, mask, any_mask, u, ref);
  const double det = mf_phys_inverse(MF_DIM, J, Ji), W = mfj::weight(b) * fabs(det);
  const bool finite = mfp::residual_point(x, Ji, W, k, u, ref, r0, r1);
  if (b.active && !finite) atomicMin(nonfinite, ((unsigned long long)b.cell << 20) | (unsigned long long)b.t.q);
  mfj::back(b, cell_nodes, rv, mask, any_mask, r0, r1);
}

#endif // MF_FLOAT_COPY

#if !MF_HAS1 && !MF_HAS2 && (MF_HAS0 || MF_HAS3)
// The vector kernel: physics of one data block for every component, without g1 and g2 and with D3
// symmetric (vector mass and Laplace: BP2, BP4, BP6, and one-component physics that do not go to a
// built-in), in the built-ins' column design (column_cell.cuh, one thread per column of a cell; or the
// thread design below): the stored data of the block (mf_phys_layout: m, then G's upper triangle) read as
// a built-in's with one cell per batch. MF_COLLOC (nodes = points), MF_HANG (the mesh has cells with hanging nodes), the launch
// shape (MF_VCOL_CPB cells per block, MF_VCOL_MINB blocks per SM) and the components that go through the
// steps together (MF_VCOL_NJ) come with the shape (physics_vcol.cu: vcol_shape).
// MF_VCOL_TPB > 0: the shape goes to the thread design instead (cell_thread.cuh: one thread per
// component of a cell, MF_VCOL_TPB threads per block; 3D Q1 and Q2 without hanging nodes; MF_VCOL_VLOAD:
// the stored entries read two points per load).
// MF_VCOL_SLAB > 0: the slab design (cell_slab.cuh: a cell's component on MF_NQ lanes of a warp, MF_VCOL_SLAB
// threads per block; 3D, 2..6 nodes per direction, no hanging nodes; the 1D matrices of mf_cbasis, constants
// of the text; MF_VCOL_XPLANE: the x derivative plane by plane; MF_VCOL_QSTAGE: the block's stored entries
// staged in shared memory).
#if MF_VCOL_SLAB
#include "cuda/cell_slab.cuh"
#define MF_VCOL_BODY(T)                                                                                            \
  mfc::slab_apply<MF_N1, MF_NQ, MF_HAS0 != 0, MF_HAS3 != 0, MF_COLLOC != 0, MF_NC, T, mf_cbasis, MF_VCOL_XPLANE != 0, \
                  MF_VCOL_QSTAGE != 0>(a, reinterpret_cast<unsigned char *>(mf_sm))
#define MF_VCOL_BOUNDS __launch_bounds__(MF_VCOL_SLAB, MF_VCOL_MINB)
#elif MF_VCOL_TPB
#include "cuda/cell_thread.cuh"
#define MF_VCOL_BODY(T)                                                                                            \
  mfc::thread_apply<MF_N1, MF_NQ, MF_HAS0 != 0, MF_HAS3 != 0, MF_COLLOC != 0, MF_NC, T, MF_VCOL_VLOAD != 0>(      \
      a, reinterpret_cast<unsigned char *>(mf_sm))
#define MF_VCOL_BOUNDS __launch_bounds__(MF_VCOL_TPB, MF_VCOL_MINB)
#else
#include "cuda/column_cell.cuh"
#define MF_VCOL_NT (MF_DIM == 3 ? MF_NQ * MF_NQ : MF_NQ)
#define MF_VCOL_BODY(T)                                                                                            \
  mfc::column_apply<MF_DIM, MF_N1, MF_NQ, MF_HAS0 != 0, MF_HAS3 != 0, MF_COLLOC != 0, MF_HANG != 0, MF_NC, MF_VCOL_CPB, \
                    T, MF_VCOL_NJ>(a, reinterpret_cast<unsigned char *>(mf_sm))
#define MF_VCOL_BOUNDS __launch_bounds__(MF_VCOL_CPB * MF_VCOL_NT, MF_VCOL_MINB)
#endif
#if !MF_FLOAT_COPY && !MF_STATE
extern "C" __global__ void MF_VCOL_BOUNDS mfree_apply_vcol(const mf_cuda_apply_args a) { MF_VCOL_BODY(double); }
#elif MF_FLOAT_COPY
// the same in float (the operator's float copy: its data and vectors in float, as the built-ins' float kernels)
extern "C" __global__ void MF_VCOL_BOUNDS mfree_apply_vcol_f(const mf_cuda_apply_args a) { MF_VCOL_BODY(float); }
#endif // MF_FLOAT_COPY
#endif

// ---------------------------------------------------------------------------------------------------
// Fused: the geometry stored (MF_NG entries per point: J^-1 row by row, W = w |det J|, the point x) and
// the g-functions evaluated at every application (at u = 0, du = 0, as the stored set-up does): for
// physics whose stored entries would outnumber these (elasticity: 81 per point in 3D against 13).
#define MF_NG (MF_DIM * MF_DIM + 1 + MF_DIM)

namespace mfj {

using mfp::eval_g;

// this point's state from the state's values sv: the value us and the physical gradient dus (the geometry's
// Ji); all threads of the block (field's barriers)
__device__ inline void state_at(block &b, const int *cell_nodes, const double *sv, int mask, bool any_mask,
                                const double *Ji, double *us, double *dus)
{
  double refs[MF_NC * MF_DIM];
  field(b, cell_nodes, sv, mask, any_mask, us, refs);
  mfp::physical_gradient(refs, Ji, dus);
}

// this point's geometry from the stored entries (Ji[3 l + e], W, x; G: double, or float in the float copy);
// zeros for an idle thread
template <class G>
__device__ inline void load_geo(const block &b, const G *geo, double *Ji, double *W, double *x)
{
  const G *g = geo + (size_t)b.cell * MF_NG * MF_NQP + b.t.q;
  for (int l = 0; l < MF_DIM; l++)
    for (int e = 0; e < MF_DIM; e++) Ji[3 * l + e] = b.active ? g[(size_t)(l * MF_DIM + e) * MF_NQP] : 0.0;
  *W = b.active ? g[(size_t)(MF_DIM * MF_DIM) * MF_NQP] : 0.0;
  for (int kk = 0; kk < MF_DIM; kk++) x[kk] = b.active ? g[(size_t)(MF_DIM * MF_DIM + 1 + kk) * MF_NQP] : 0.0;
}

using mfp::fused_point;

// this point's entries Dp in layout *L: the stored data (layout nb, sym) or, where geo is given, the fused
// operator's (the full layout, made here from the geometry and the g-functions at the state us, dus: the
// value and physical gradient, zeros for the operator as made). Not inlined: inlined
// together with unit_column and component_back, the diagonal of a mass-only physics with hanging nodes in
// 2D came out wrong on an H100 (NVRTC 13; 5e-2..2e-1 relative, t38), while either helper written out in
// the kernel, or this one called, gave the cpu's values (racecheck, initcheck and memcheck found nothing).
__device__ __noinline__ void point_entries(const block &b, const double *qd, int nb, int sym, const double *geo,
                                           const double *k, const double *us, const double *dus, mf_phys_layout *L,
                                           double *Dp)
{
  const int has[4] = {MF_HAS0, MF_HAS1, MF_HAS2, MF_HAS3};
  if (geo) {
    mf_phys_layout_make(MF_DIM, MF_NC, MF_NC, 0, has, L);
    double Ji[9] = {0, 0, 0, 0, 0, 0, 0, 0, 0}, W, xq[3] = {0, 0, 0};
    load_geo(b, geo, Ji, &W, xq);
    double G0[MF_NC * MF_NC + 1], G1[MF_NC * MF_NC * MF_DIM + 1], G2[MF_NC * MF_NC * MF_DIM + 1],
        G3[MF_NC * MF_NC * MF_DIM * MF_DIM + 1];
    mfp::eval_g_at(xq, k, us, dus, G0, G1, G2, G3);
    const double *Gc[4] = {G0, G1, G2, G3};
    mf_phys_store_point(L, Gc, Ji, W, Dp);
  } else {
    mf_phys_layout_make(MF_DIM, MF_NC, nb, sym, has, L);
    const size_t first = (size_t)b.cell * L->n * MF_NQP + b.t.q;
    for (int i = 0; i < L->n; i++) Dp[i] = b.active ? qd[first + (size_t)i * MF_NQP] : 0.0;
  }
}

// point_entries at the fused operator's state sv (geo given; sv NULL: u = 0), the state's value and gradient
// made here (all threads of the block)
__device__ inline void fused_entries(block &b, const int *cell_nodes, const double *qd, int nb, int sym,
                                     const double *geo, const double *k, const double *sv, int mask, bool any_mask,
                                     mf_phys_layout *L, double *Dp)
{
  double us[MF_NC + 1] = {0.0}, dus[MF_NC * MF_DIM + 1] = {0.0};
  if (sv) {
    double Ji[9] = {0, 0, 0, 0, 0, 0, 0, 0, 0}, W, xq[3] = {0, 0, 0};
    load_geo(b, geo, Ji, &W, xq);
    state_at(b, cell_nodes, sv, mask, any_mask, Ji, us, dus);
  }
  point_entries(b, qd, nb, sym, geo, k, us, dus, L, Dp);
}

// The cell operator on the unit vector of component bc at node position jc, its constraints applied
// (masked cells): the point's r0, r1 (all components). All threads of the block, the same column.
__device__ inline void unit_column(block &b, const mf_phys_layout *L, const double *Dp, int mask, bool any_mask, int bc,
                                   int jc, double *r0, double *r1)
{
  __syncthreads();
  b.s0[b.t.q] = b.t.isdof && b.t.pos == jc ? 1.0 : 0.0;
  __syncthreads();
  if (any_mask) hanging(b.s0, mask, b.sP, b.t, false);
  const double *v = interpolate(b.sB, b.s0, b.s1, b.t);
  double u[MF_NC], ref[MF_NC * MF_DIM];
  for (int i = 0; i < MF_NC; i++) u[i] = 0.0;
  for (int i = 0; i < MF_NC * MF_DIM; i++) ref[i] = 0.0;
  u[bc] = v[b.t.q];
  for (int m = 0; m < MF_DIM; m++) ref[bc * MF_DIM + m] = derivative(b.sD, v, b.t, m);
  __syncthreads();
  mf_phys_apply_point(L, Dp, u, ref, r0, r1);
}

// Component c of the points' r0, r1 back to the nodes (r0 + sum_l D_l^T r1_l, then B^T), the transposed
// constraints applied (masked cells): the buffer holding it. All threads of the block.
__device__ inline double *component_back(block &b, int mask, bool any_mask, const double *r0, const double *r1, int c)
{
  double a = r0[c];
  for (int l = 0; l < MF_DIM; l++) {
    b.s0[b.t.q] = r1[c * MF_DIM + l];
    __syncthreads();
    a += derivative_t(b.sD, b.s0, b.t, l);
    __syncthreads();
  }
  b.s0[b.t.q] = a;
  __syncthreads();
  double *w = integrate(b.sB, b.s0, b.s1, b.t);
  if (any_mask) hanging(w, mask, b.sP, b.t, true);
  return w;
}

} // namespace mfj

#if !MF_FLOAT_COPY && !MF_STATE
// the fused data: the geometry at every point; bad, nonfinite as in mfree_setup_*
extern "C" __global__ void __launch_bounds__(MF_NT)
    mfree_setup_geo(const int *cell_nodes, const short *mask_all, const double *coords, int cstride, const double *B,
                    const double *D, const double *P, const double *qw, const double *k, int ncells, double *geo,
                    unsigned long long *bad, unsigned long long *nonfinite)
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
  double G0[MF_NC * MF_NC + 1], G1[MF_NC * MF_NC * MF_DIM + 1], G2[MF_NC * MF_NC * MF_DIM + 1],
      G3[MF_NC * MF_NC * MF_DIM * MF_DIM + 1];
  if (!mfj::eval_g(x, k, G0, G1, G2, G3))
    atomicMin(nonfinite, ((unsigned long long)b.cell << 20) | (unsigned long long)b.t.q);
  double *out = geo + (size_t)b.cell * MF_NG * MF_NQP + b.t.q;
  for (int l = 0; l < MF_DIM; l++)
    for (int e = 0; e < MF_DIM; e++) out[(size_t)(l * MF_DIM + e) * MF_NQP] = Ji[3 * l + e];
  out[(size_t)(MF_DIM * MF_DIM) * MF_NQP] = mfj::weight(b) * fabs(det);
  for (int kk = 0; kk < MF_DIM; kk++) out[(size_t)(MF_DIM * MF_DIM + 1 + kk) * MF_NQP] = x[kk];
}

#endif

// y += A x, fused (T: the geometry's and vectors' type, float in the float copy); sv: the state's values
// (the g-functions at the state's u, grad u; double only), or NULL (at u = 0)
template <class T>
__device__ inline void apply_fused_body(const int *cell_nodes, const int *order, const short *mask_all, const double *B,
                                        const double *D, const double *P, const double *qw, const T *geo, const double *k,
                                        int ncells, const double *sv, const T *x, T *y)
{
  mfj::block b = mfj::make_block(mf_sm, B, D, P, qw, ncells);
  if (order) b.cell = order[b.cell];
  const int mask = mask_all ? mask_all[b.cell] : 0;
  const bool any_mask = __syncthreads_or(mask != 0);
  double Ji[9] = {0, 0, 0, 0, 0, 0, 0, 0, 0}, W, xq[3] = {0, 0, 0};
  mfj::load_geo(b, geo, Ji, &W, xq);
  double u[MF_NC], ref[MF_NC * MF_DIM], r0[MF_NC], r1[MF_NC * MF_DIM];
  mfj::field(b, cell_nodes, x, mask, any_mask, u, ref);
  if (sv) {
    double us[MF_NC], dus[MF_NC * MF_DIM];
    mfj::state_at(b, cell_nodes, sv, mask, any_mask, Ji, us, dus);
    mfp::fused_point_at(Ji, W, xq, k, us, dus, u, ref, r0, r1);
  } else
    mfj::fused_point(Ji, W, xq, k, u, ref, r0, r1);
  mfj::back(b, cell_nodes, y, mask, any_mask, r0, r1);
}
#define MF_FUSED_KERNEL(NAME, T)                                                                                 \
  extern "C" __global__ void __launch_bounds__(MF_NT)                                                              \
      NAME(const int *cell_nodes, const int *order, const short *mask_all, const double *B, const double *D,       \
           const double *P, const double *qw, const T *geo, const double *k, int ncells, const T *x, T *y)         \
  {                                                                                                                \
    apply_fused_body<T>(cell_nodes, order, mask_all, B, D, P, qw, geo, k, ncells, NULL, x, y);                   \
  }
#if MF_FLOAT_COPY
MF_FUSED_KERNEL(mfree_apply_fused_f, float)
#else
#if !MF_STATE
MF_FUSED_KERNEL(mfree_apply_fused, double)
#endif

#if MF_STATE
// y += A x, fused, at the state's values sv
extern "C" __global__ void __launch_bounds__(MF_NT)
    mfree_apply_fused_state(const int *cell_nodes, const int *order, const short *mask_all, const double *B,
                            const double *D, const double *P, const double *qw, const double *geo, const double *k,
                            int ncells, const double *sv, const double *x, double *y)
{
  apply_fused_body<double>(cell_nodes, order, mask_all, B, D, P, qw, geo, k, ncells, sv, x, y);
}
#endif

// The diagonal, added into y, of the stored data (qd in the layout nb, sym) or, where geo is given, of
// the fused operator (its entries made here in the full layout). The CPU twin: diagonal_host in
// lib/hex/physics_hex.c. Every term of a component's diagonal block is a separable product: the point
// values go through shared memory and each node thread sums them against its 1D factors (BB, BG, GG:
// nq x n1, the products of the basis and its derivative at the points). On a cell with a mask, the
// columns that mf_hanging_diag_column selects come from the cell operator with its constraints on unit
// vectors, column by column (all threads of the block take the same columns, their barriers alike).
// sv: the fused operator's state (its values; geo given), or NULL (u = 0).
__device__ inline void diagonal_body(const int *cell_nodes, const short *mask_all, const double *B, const double *D,
                                     const double *P, const double *qw, const double *BB, const double *BG,
                                     const double *GG, const double *qd, int nb, int sym, const double *geo,
                                     const double *k, int ncells, const double *sv, double *y)
{
  mfj::block b = mfj::make_block(mf_sm, B, D, P, qw, ncells);
  const int mask = mask_all && b.active ? mask_all[b.cell] : 0;
  const bool any_mask = __syncthreads_or(mask != 0);
  mf_phys_layout L;
  double Dp[MF_NS_FULL];
  mfj::fused_entries(b, cell_nodes, qd, nb, sym, geo, k, sv, mask, any_mask, &L, Dp);
  const int *nodes = cell_nodes + (size_t)b.cell * MF_NPC;
  const int nt = mf_phys_diag_nterms(&L);
  double *coef = b.s0;
  for (int c = 0; c < MF_NC; c++) {
    double acc = 0.0;
    for (int j = 0; j < nt; j++) {
      int kk, ll;
      const int off = mf_phys_diag_term(&L, c, j, &kk, &ll);
      __syncthreads();
      coef[b.t.q] = Dp[off];
      __syncthreads();
      if (b.t.isdof) {
        const int idx[3] = {b.t.i, b.t.j, b.t.k};
        const double *F[3];
        for (int e = 0; e < 3; e++) F[e] = (e == kk && e == ll) ? GG : (e == kk || e == ll) ? BG : BB;
        const int nz = MF_DIM == 3 ? MF_NQ : 1;
        for (int qz = 0; qz < nz; qz++) {
          const double fz = MF_DIM == 3 ? F[2][qz * MF_N1 + idx[2]] : 1.0;
          for (int qy = 0; qy < MF_NQ; qy++) {
            const double fyz = fz * F[1][qy * MF_N1 + idx[1]];
            const double *cq = coef + (qz * MF_NQ + qy) * MF_NQ;
            double sx = 0.0;
            for (int qx = 0; qx < MF_NQ; qx++) sx += cq[qx] * F[0][qx * MF_N1 + idx[0]];
            acc += fyz * sx;
          }
        }
      }
    }
    if (b.active && b.t.isdof && !(mask && mf_hanging_diag_column(MF_DIM, MF_N1, MF_NPC, mask, nodes, b.t.pos)))
      atomicAdd(&y[(size_t)nodes[b.t.pos] * MF_NC + c], acc);
    if (!any_mask) continue;
    // the constrained columns: C^T A_cc C e_j, each position holding j's DoF adds its entry
    double cacc = 0.0;
    for (int jc = 0; jc < MF_NPC; jc++) {
      const bool need = b.active && mask && mf_hanging_diag_column(MF_DIM, MF_N1, MF_NPC, mask, nodes, jc);
      if (!__syncthreads_or(need)) continue;
      double r0[MF_NC], r1[MF_NC * MF_DIM];
      mfj::unit_column(b, &L, Dp, mask, any_mask, c, jc, r0, r1);
      const double *w = mfj::component_back(b, mask, any_mask, r0, r1, c);
      if (need && b.t.isdof && nodes[b.t.pos] == nodes[jc]) cacc += w[b.t.q];
      __syncthreads();
    }
    if (b.active && b.t.isdof && cacc != 0.0) atomicAdd(&y[(size_t)nodes[b.t.pos] * MF_NC + c], cacc);
  }
}
#if !MF_STATE
extern "C" __global__ void __launch_bounds__(MF_NT)
    mfree_diagonal(const int *cell_nodes, const short *mask_all, const double *B, const double *D, const double *P,
                   const double *qw, const double *BB, const double *BG, const double *GG, const double *qd, int nb,
                   int sym, const double *geo, const double *k, int ncells, double *y)
{
  diagonal_body(cell_nodes, mask_all, B, D, P, qw, BB, BG, GG, qd, nb, sym, geo, k, ncells, NULL, y);
}
#else
extern "C" __global__ void __launch_bounds__(MF_NT)
    mfree_diagonal_state(const int *cell_nodes, const short *mask_all, const double *B, const double *D,
                         const double *P, const double *qw, const double *BB, const double *BG, const double *GG,
                         const double *geo, const double *k, int ncells, const double *sv, double *y)
{
  diagonal_body(cell_nodes, mask_all, B, D, P, qw, BB, BG, GG, NULL, MF_NC, 0, geo, k, ncells, sv, y);
}
#endif

// The assembled matrix's values, added into vals (the space's CSR pattern: rows and columns ascending,
// entry node * nc + component): every cell's C^T A_e C from the cell operator on unit vectors, column by
// column (component bc of node position jc; all threads of the block take the same column, their
// barriers alike), each entry added at its position (mf_csr_find). Stored data or, where geo is given,
// the fused operator's entries made here, as in mfree_diagonal. The CPU twin: assemble in
// lib/hex/physics_hex.c.
// sv as in diagonal_body.
__device__ inline void assemble_body(const int *cell_nodes, const short *mask_all, const double *B, const double *D,
                                     const double *P, const double *qw, const double *qd, int nb, int sym,
                                     const double *geo, const double *k, int ncells, const double *sv,
                                     const int64_t *rowptr, const int *colidx, double *vals)
{
  mfj::block b = mfj::make_block(mf_sm, B, D, P, qw, ncells);
  const int mask = mask_all && b.active ? mask_all[b.cell] : 0;
  const bool any_mask = __syncthreads_or(mask != 0);
  mf_phys_layout L;
  double Dp[MF_NS_FULL];
  mfj::fused_entries(b, cell_nodes, qd, nb, sym, geo, k, sv, mask, any_mask, &L, Dp);
  const int *nodes = cell_nodes + (size_t)b.cell * MF_NPC;
  const int row_node = b.active && b.t.isdof ? nodes[b.t.pos] : 0;
  for (int bc = 0; bc < MF_NC; bc++)
    for (int jc = 0; jc < MF_NPC; jc++) {
      const int col = b.active ? nodes[jc] * MF_NC + bc : 0;
      double r0[MF_NC], r1[MF_NC * MF_DIM];
      mfj::unit_column(b, &L, Dp, mask, any_mask, bc, jc, r0, r1);
      for (int c = 0; c < MF_NC; c++) {
        const double *w = mfj::component_back(b, mask, any_mask, r0, r1, c);
        const double e = b.active && b.t.isdof ? w[b.t.q] : 0.0;
        if (e != 0.0) atomicAdd(&vals[mf_csr_find(rowptr, colidx, row_node * MF_NC + c, col)], e);
        __syncthreads();
      }
    }
}
#if !MF_STATE
extern "C" __global__ void __launch_bounds__(MF_NT)
    mfree_assemble(const int *cell_nodes, const short *mask_all, const double *B, const double *D, const double *P,
                   const double *qw, const double *qd, int nb, int sym, const double *geo, const double *k, int ncells,
                   const int64_t *rowptr, const int *colidx, double *vals)
{
  assemble_body(cell_nodes, mask_all, B, D, P, qw, qd, nb, sym, geo, k, ncells, NULL, rowptr, colidx, vals);
}
#else
extern "C" __global__ void __launch_bounds__(MF_NT)
    mfree_assemble_state(const int *cell_nodes, const short *mask_all, const double *B, const double *D,
                         const double *P, const double *qw, const double *geo, const double *k, int ncells,
                         const double *sv, const int64_t *rowptr, const int *colidx, double *vals)
{
  assemble_body(cell_nodes, mask_all, B, D, P, qw, NULL, MF_NC, 0, geo, k, ncells, sv, rowptr, colidx, vals);
}
#endif
#endif // MF_FLOAT_COPY

#if MF_FACES && !MF_FLOAT_COPY && !MF_STATE
// ---------------------------------------------------------------------------------------------------
// The faces' terms (every boundary term given as source; the glue defines mfree_b(t, w, ...), term t's f0
// or g0), one block of MF_NQP threads per boundary face entry (its cell, face f, term t). The cell's values
// come with its constraints applied (hanging), those of face f give u at the face's Gauss points (the
// operator's rule in the face's directions), and the points' results go back to the face's nodes and
// through the transposed constraints. fg: the entries' points (mf_hex_phys_face_points: x, the outward
// normal, W, point by point). Mode 0 the operator's (g0 times x), 1 the residual's (f0 at x), 2 the
// diagonal's (as the host takes it: the plain entries, and the constrained columns from the constrained
// face operator on unit vectors). nonfinite: the first (entry << 20 | point) where f0 is not finite. The
// CPU twin: cell_faces in lib/hex/physics_faces.c.
#define MF_NQF (MF_DIM == 2 ? MF_NQ : MF_NQ * MF_NQ)
#define MF_FG (2 * MF_DIM + 1)

namespace mfj {

// whether the node of this thread lies on face f; its indices in the face's directions
__device__ inline bool on_face(const pt &t, int f, int *i0, int *i1)
{
  const int idx[3] = {t.i, t.j, t.k}, d = f / 2;
  if (!t.isdof || idx[d] != (f % 2 ? MF_N1 - 1 : 0)) return false;
  int a[2] = {0, 0}, m = 0;
  for (int kk = 0; kk < MF_DIM; kk++)
    if (kk != d) a[m++] = kk;
  *i0 = idx[a[0]];
  *i1 = MF_DIM == 3 ? idx[a[1]] : 0;
  return true;
}

// the position (at) of face f's node (i0, i1)
__device__ inline int face_at(int f, int i0, int i1)
{
  int ijk[3] = {0, 0, 0}, m = 0;
  const int d = f / 2;
  ijk[d] = f % 2 ? MF_N1 - 1 : 0;
  for (int kk = 0; kk < MF_DIM; kk++)
    if (kk != d) ijk[kk] = m++ ? i1 : i0;
  return at(ijk[0], ijk[1], ijk[2]);
}

// face point q's value of the nodal values s
__device__ inline double face_value(const double *sB, const double *s, int f, int q)
{
  const int q0 = q % MF_NQ, q1 = q / MF_NQ;
  double v = 0.0;
  for (int i1 = 0; i1 < (MF_DIM == 3 ? MF_N1 : 1); i1++)
    for (int i0 = 0; i0 < MF_N1; i0++)
      v += sB[q0 * MF_N1 + i0] * (MF_DIM == 3 ? sB[q1 * MF_N1 + i1] : 1.0) * s[face_at(f, i0, i1)];
  return v;
}

// face node (i0, i1)'s integral against the points' r[q stride + c]
__device__ inline double face_integral(const double *sB, const double *r, int stride, int c, int i0, int i1)
{
  double v = 0.0;
  for (int q = 0; q < MF_NQF; q++)
    v += sB[(q % MF_NQ) * MF_N1 + i0] * (MF_DIM == 3 ? sB[(q / MF_NQ) * MF_N1 + i1] : 1.0) * r[q * stride + c];
  return v;
}

} // namespace mfj

extern "C" __global__ void __launch_bounds__(MF_NQP)
    mfree_faces(const int *cell_nodes, const short *mask_all, const double *B, const double *P, const int *bf_cell,
                const int *bf_face, const int *bf_term, const double *fg, const double *k, int mode, const double *x,
                double *y, unsigned long long *nonfinite)
{
  __shared__ double sB[MF_NQ * MF_N1], sP[2 * MF_N1 * MF_N1], s[MF_NQP], uf[MF_NQF * MF_NC], gf[MF_NQF * MF_NC * MF_NC];
  const int id = blockIdx.x, e = bf_cell[id], f = bf_face[id], t = bf_term[id];
  const mfj::pt p = mfj::make_pt(threadIdx.x);
  mfj::stage(sB, B, MF_NQ * MF_N1);
  const int mask = mask_all ? mask_all[e] : 0; // the same for the whole block
  if (mask) mfj::stage(sP, P, 2 * MF_N1 * MF_N1);
  const int *nodes = cell_nodes + (size_t)e * MF_NPC;
  int i0 = 0, i1 = 0;
  const bool onf = mfj::on_face(p, f, &i0, &i1);
  __syncthreads();
  if (mode != 2) // u at the face's points
    for (int c = 0; c < MF_NC; c++) {
      s[p.q] = p.isdof ? x[(size_t)nodes[p.pos] * MF_NC + c] : 0.0;
      __syncthreads();
      if (mask) mfj::hanging(s, mask, sP, p, false);
      if (p.q < MF_NQF) uf[p.q * MF_NC + c] = mfj::face_value(sB, s, f, p.q);
      __syncthreads();
    }
  if (p.q < MF_NQF) { // the boundary function: gf = W f0 or W g0 u (modes 0, 1), W g0 (mode 2)
    const double *g = fg + ((size_t)id * MF_NQF + p.q) * MF_FG;
    double u[MF_NC], zero[MF_NC], out[MF_NC * MF_NC];
    for (int c = 0; c < MF_NC; c++) u[c] = mode == 2 ? 0.0 : uf[p.q * MF_NC + c], zero[c] = 0.0;
    for (int i = 0; i < MF_NC * MF_NC; i++) out[i] = 0.0;
    mfree_b(t, mode == 1 ? 0 : 1, MF_DIM, MF_NC, mode == 1 ? u : zero, g, g + MF_DIM, k, out);
    const double W = g[2 * MF_DIM];
    if (mode == 1) {
      bool fin = true;
      for (int c = 0; c < MF_NC; c++) fin = fin && isfinite(out[c]);
      if (!fin) atomicMin(nonfinite, ((unsigned long long)id << 20) | (unsigned long long)p.q);
    }
    if (mode == 2)
      for (int i = 0; i < MF_NC * MF_NC; i++) gf[p.q * MF_NC * MF_NC + i] = W * out[i];
    else
      for (int c = 0; c < MF_NC; c++) {
        double v = 0.0;
        if (mode == 1) v = out[c];
        else
          for (int b = 0; b < MF_NC; b++) v += out[c * MF_NC + b] * u[b];
        gf[p.q * MF_NC + c] = W * v;
      }
  }
  __syncthreads();
  if (mode != 2) { // back to the nodes, through the transposed constraints
    for (int c = 0; c < MF_NC; c++) {
      s[p.q] = onf ? mfj::face_integral(sB, gf, MF_NC, c, i0, i1) : 0.0;
      __syncthreads();
      if (mask) mfj::hanging(s, mask, sP, p, true);
      if (p.isdof && s[p.q] != 0.0) atomicAdd(&y[(size_t)nodes[p.pos] * MF_NC + c], s[p.q]);
      __syncthreads();
    }
    return;
  }
  for (int c = 0; c < MF_NC; c++) {
    // the plain entries (columns not constrained): W g0_cc phi_i^2 at the face's nodes
    double dv = 0.0;
    if (onf && !(mask && mf_hanging_diag_column(MF_DIM, MF_N1, MF_NPC, mask, nodes, p.pos)))
      for (int q = 0; q < MF_NQF; q++) {
        const double ph = sB[(q % MF_NQ) * MF_N1 + i0] * (MF_DIM == 3 ? sB[(q / MF_NQ) * MF_N1 + i1] : 1.0);
        dv += ph * ph * gf[q * MF_NC * MF_NC + c * MF_NC + c];
      }
    // the constrained columns: C^T F C e_j, each position holding j's DoF adds its entry
    for (int jc = 0; mask && jc < MF_NPC; jc++) {
      if (!mf_hanging_diag_column(MF_DIM, MF_N1, MF_NPC, mask, nodes, jc)) continue;
      s[p.q] = p.isdof && p.pos == jc ? 1.0 : 0.0;
      __syncthreads();
      mfj::hanging(s, mask, sP, p, false);
      if (p.q < MF_NQF) uf[p.q] = gf[p.q * MF_NC * MF_NC + c * MF_NC + c] * mfj::face_value(sB, s, f, p.q);
      __syncthreads();
      s[p.q] = onf ? mfj::face_integral(sB, uf, 1, 0, i0, i1) : 0.0;
      __syncthreads();
      mfj::hanging(s, mask, sP, p, true);
      if (p.isdof && nodes[p.pos] == nodes[jc]) dv += s[p.q];
      __syncthreads();
    }
    if (dv != 0.0) atomicAdd(&y[(size_t)nodes[p.pos] * MF_NC + c], dv);
  }
}
#endif // MF_FACES && !MF_FLOAT_COPY && !MF_STATE
