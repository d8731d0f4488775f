// simplex_phys_jit.cuh -- the kernels of users' physics on simplices, compiled at run time by NVRTC
// (lib/cuda/physics_simplex.cu) together with the user's source, for one operator shape. Not compiled by
// nvcc: the including text defines MF_DIM, MF_NC, MF_NN (nodes per cell), MF_NQS (points per cell),
// MF_HAS0..MF_HAS3, MF_HASF0, MF_HASF1, MF_NS_FULL (entries per point, full layout) and the glue
// mfree_g, mfree_f, and includes physics/mf_physics.h; with MF_FACETS 1 also MF_FQ (points per facet) and
// the boundary terms' glue mfree_b (term t, w: 0 f0, 1 g0). With MF_FLOAT_COPY 1 the text holds the float copy's
// product only (mfree_sx_apply_f, a library of its own), else every other kernel.
//
// One thread per cell applies (the cell's values gathered, every point's action, the result added to the
// nodes atomically); one thread per point sets up. The stored data are those of the CPU twin
// (lib/simplex/physics_simplex.c) in the full layout: qd[(cell NQS + q) NS_FULL + entry]. Tables: B
// (NQS x NN), G (NQS x NN x DIM), the points (NQS x DIM) and weights (summing to 1/dim!). With MF_STATE 1 also the
// kernels of the operator at a state (mf_operator_set_state: stored, or fused with the g-functions evaluated at every
// application), compiled where an operator needs them.

#include "assembled/mf_csr.h"
#include "cuda/phys_point.cuh"

namespace mfs {

__device__ inline long long thread_id() { return (long long)blockIdx.x * blockDim.x + threadIdx.x; }

// the cell's vertices X[a DIM + k], J^-1 (Ji[3 l + e] = d xi_l / d x_e); det J returned
__device__ inline double geometry(const int *verts, const double *coords, int e, double *X, double *Ji)
{
  const int *v = verts + (size_t)e * (MF_DIM + 1);
  for (int a = 0; a <= MF_DIM; a++)
    for (int k = 0; k < MF_DIM; k++) X[a * MF_DIM + k] = coords[3 * (size_t)v[a] + k];
  double J[9] = {0, 0, 0, 0, 0, 0, 0, 0, 0};
  for (int k = 0; k < MF_DIM; k++)
    for (int l = 0; l < MF_DIM; l++) J[3 * k + l] = X[(l + 1) * MF_DIM + k] - X[k];
  return mf_phys_inverse(MF_DIM, J, Ji);
}

// point q's x in the cell of vertices X
__device__ inline void point_x(const double *X, const double *qp, int q, double *x)
{
  for (int k = 0; k < MF_DIM; k++) {
    x[k] = X[k];
    for (int l = 0; l < MF_DIM; l++) x[k] += (X[(l + 1) * MF_DIM + k] - X[k]) * qp[q * MF_DIM + l];
  }
}

// point q's state from the cell's values ue[i NC + c]
__device__ inline void state(const double *B, const double *G, int q, const double *ue, double *u, double *ref)
{
  const double *Bq = B + (size_t)q * MF_NN, *Gq = G + (size_t)q * MF_NN * MF_DIM;
  for (int c = 0; c < MF_NC; c++) {
    u[c] = 0.0;
    for (int m = 0; m < MF_DIM; m++) ref[c * MF_DIM + m] = 0.0;
  }
  for (int i = 0; i < MF_NN; i++)
    for (int c = 0; c < MF_NC; c++) {
      u[c] += Bq[i] * ue[i * MF_NC + c];
      for (int m = 0; m < MF_DIM; m++) ref[c * MF_DIM + m] += Gq[i * MF_DIM + m] * ue[i * MF_NC + c];
    }
}

// ve[i NC + c] += B_i r0[c] + G_i . r1[c] at point q
__device__ inline void back(const double *B, const double *G, int q, const double *r0, const double *r1, double *ve)
{
  const double *Bq = B + (size_t)q * MF_NN, *Gq = G + (size_t)q * MF_NN * MF_DIM;
  for (int i = 0; i < MF_NN; i++)
    for (int c = 0; c < MF_NC; c++) {
      double s = Bq[i] * r0[c];
      for (int l = 0; l < MF_DIM; l++) s += Gq[i * MF_DIM + l] * r1[c * MF_DIM + l];
      ve[i * MF_NC + c] += s;
    }
}

__device__ inline void full_layout(mf_phys_layout *L)
{
  const int has[4] = {MF_HAS0, MF_HAS1, MF_HAS2, MF_HAS3};
  mf_phys_layout_make(MF_DIM, MF_NC, MF_NC, 0, has, L);
}

// a point's stored entries: in place (double), or widened into buf (the float copy's data)
__device__ inline const double *point_data(const double *qd, size_t at, double *) { return qd + at; }
__device__ inline const double *point_data(const float *qd, size_t at, double *buf)
{
  for (int i = 0; i < MF_NS_FULL; i++) buf[i] = (double)qd[at + i];
  return buf;
}

// the cell's action on its values ue into ve (the CPU twin's cell_local); Q: the stored data's type
template <class Q>
__device__ inline void cell_local(const double *B, const double *G, const Q *qd, int e, const double *ue, double *ve)
{
  mf_phys_layout L;
  full_layout(&L);
  for (int i = 0; i < MF_NN * MF_NC; i++) ve[i] = 0.0;
  for (int q = 0; q < MF_NQS; q++) {
    double u[MF_NC], ref[MF_NC * MF_DIM], r0[MF_NC], r1[MF_NC * MF_DIM], buf[MF_NS_FULL];
    state(B, G, q, ue, u, ref);
    mf_phys_apply_point(&L, point_data(qd, ((size_t)e * MF_NQS + q) * MF_NS_FULL, buf), u, ref, r0, r1);
    back(B, G, q, r0, r1, ve);
  }
}

// the cell's values of x (T: double, or float for the float copy)
template <class T>
__device__ inline void gather(const int *cell_nodes, int e, const T *x, double *ue)
{
  const int *cd = cell_nodes + (size_t)e * MF_NN;
  for (int i = 0; i < MF_NN; i++)
    for (int c = 0; c < MF_NC; c++) ue[i * MF_NC + c] = (double)x[(size_t)cd[i] * MF_NC + c];
}

template <class T>
__device__ inline void scatter_add(const int *cell_nodes, int e, const double *ve, T *y)
{
  const int *cd = cell_nodes + (size_t)e * MF_NN;
  for (int i = 0; i < MF_NN; i++)
    for (int c = 0; c < MF_NC; c++)
      if (ve[i * MF_NC + c] != 0.0) atomicAdd(&y[(size_t)cd[i] * MF_NC + c], (T)ve[i * MF_NC + c]);
}

__device__ inline void flag(unsigned long long *f, int e, int q)
{
  atomicMin(f, ((unsigned long long)e << 20) | (unsigned long long)q);
}

// a point's entries in the full layout into D: the g-functions at the state us, dus (physical gradient) at x, with
// the geometry Ji, W (mf_phys_store_point); whether their values are finite
__device__ inline bool entries_at(const double *x, const double *k, const double *us, const double *dus,
                                  const double *Ji, double W, double *D)
{
  mf_phys_layout L;
  full_layout(&L);
  double G0[MF_NC * MF_NC + 1], G1[MF_NC * MF_NC * MF_DIM + 1], G2[MF_NC * MF_NC * MF_DIM + 1],
      G3[MF_NC * MF_NC * MF_DIM * MF_DIM + 1];
  const bool finite = mfp::eval_g_at(x, k, us, dus, G0, G1, G2, G3);
  const double *Gc[4] = {G0, G1, G2, G3};
  mf_phys_store_point(&L, Gc, Ji, W, D);
  return finite;
}

// point q's state from the cell's values se: the value us and the physical gradient dus
__device__ inline void state_physical(const double *B, const double *G, int q, const double *se, const double *Ji,
                                      double *us, double *dus)
{
  double refs[MF_NC * MF_DIM];
  state(B, G, q, se, us, refs);
  mfp::physical_gradient(refs, Ji, dus);
}

// de[i NC + c] += point q's part of the diagonal from its entries D (the CPU twin's cell_diagonal)
__device__ inline void diagonal_point(const double *B, const double *G, int q, const double *D, double *de)
{
  mf_phys_layout L;
  full_layout(&L);
  const int nt = mf_phys_diag_nterms(&L);
  const double *Bq = B + (size_t)q * MF_NN, *Gq = G + (size_t)q * MF_NN * MF_DIM;
  for (int c = 0; c < MF_NC; c++)
    for (int j = 0; j < nt; j++) {
      int kk, ll;
      const double d = D[mf_phys_diag_term(&L, c, j, &kk, &ll)];
      for (int i = 0; i < MF_NN; i++)
        de[i * MF_NC + c] += d * (kk < 0 ? Bq[i] : Gq[i * MF_DIM + kk]) * (ll < 0 ? Bq[i] : Gq[i * MF_DIM + ll]);
    }
}

// Whether the g-functions at x and the state us, dus (physical gradient) give finite values, and W times the point's
// part of the diagonal block of every basis function i: dg[i NC + c] += W (v g0 u + v g1 grad u + grad v g2 u +
// grad v g3 grad u) at v = u = phi_i e_c, B[i] its value and gp[i DIM + d] its physical gradient (dg NULL: the check
// alone). Each g-function into an array of its own indexed by constants (as mfp::fused_point_at): no local memory.
__device__ inline bool g_point_diagonal(const double *x, const double *k, const double *us, const double *dus, double W,
                                        const double *B, const double *gp, double *dg)
{
  bool finite = true;
#if MF_HAS0
  {
    double G[MF_NC * MF_NC];
    for (int i = 0; i < MF_NC * MF_NC; i++) G[i] = 0.0;
    mfree_g(0, MF_DIM, MF_NC, us, dus, x, k, G);
    for (int i = 0; i < MF_NC * MF_NC; i++) finite = finite && MF_FINITE(G[i]);
    if (dg)
      for (int i = 0; i < MF_NN; i++)
        for (int c = 0; c < MF_NC; c++) dg[i * MF_NC + c] += W * B[i] * G[c * MF_NC + c] * B[i];
  }
#endif
#if MF_HAS1
  {
    double G[MF_NC * MF_NC * MF_DIM];
    for (int i = 0; i < MF_NC * MF_NC * MF_DIM; i++) G[i] = 0.0;
    mfree_g(1, MF_DIM, MF_NC, us, dus, x, k, G);
    for (int i = 0; i < MF_NC * MF_NC * MF_DIM; i++) finite = finite && MF_FINITE(G[i]);
    if (dg)
      for (int i = 0; i < MF_NN; i++)
        for (int c = 0; c < MF_NC; c++)
          for (int e = 0; e < MF_DIM; e++) dg[i * MF_NC + c] += W * B[i] * G[(c * MF_NC + c) * MF_DIM + e] * gp[i * MF_DIM + e];
  }
#endif
#if MF_HAS2
  {
    double G[MF_NC * MF_NC * MF_DIM];
    for (int i = 0; i < MF_NC * MF_NC * MF_DIM; i++) G[i] = 0.0;
    mfree_g(2, MF_DIM, MF_NC, us, dus, x, k, G);
    for (int i = 0; i < MF_NC * MF_NC * MF_DIM; i++) finite = finite && MF_FINITE(G[i]);
    if (dg)
      for (int i = 0; i < MF_NN; i++)
        for (int c = 0; c < MF_NC; c++)
          for (int d = 0; d < MF_DIM; d++) dg[i * MF_NC + c] += W * gp[i * MF_DIM + d] * G[(c * MF_NC + c) * MF_DIM + d] * B[i];
  }
#endif
#if MF_HAS3
  {
    double G[MF_NC * MF_NC * MF_DIM * MF_DIM];
    for (int i = 0; i < MF_NC * MF_NC * MF_DIM * MF_DIM; i++) G[i] = 0.0;
    mfree_g(3, MF_DIM, MF_NC, us, dus, x, k, G);
    for (int i = 0; i < MF_NC * MF_NC * MF_DIM * MF_DIM; i++) finite = finite && MF_FINITE(G[i]);
    if (dg)
      for (int i = 0; i < MF_NN; i++)
        for (int c = 0; c < MF_NC; c++)
          for (int d = 0; d < MF_DIM; d++)
            for (int e = 0; e < MF_DIM; e++)
              dg[i * MF_NC + c] += W * gp[i * MF_DIM + d] * G[((c * MF_NC + c) * MF_DIM + d) * MF_DIM + e] * gp[i * MF_DIM + e];
  }
#endif
  return finite;
}

// cell e's element matrix (its action on unit vectors, from the entries of cell eq of qd) added at its CSR positions
// (row node_i NC + c, column node_j NC + b)
__device__ inline void assemble_cell(const int *cell_nodes, const double *B, const double *G, const double *qd, int eq,
                                     int e, const int64_t *rowptr, const int *colidx, double *vals)
{
  const int *cd = cell_nodes + (size_t)e * MF_NN;
  double ue[MF_NN * MF_NC], ve[MF_NN * MF_NC];
  for (int i = 0; i < MF_NN * MF_NC; i++) ue[i] = 0.0;
  for (int jb = 0; jb < MF_NN * MF_NC; jb++) {
    ue[jb] = 1.0;
    cell_local(B, G, qd, eq, ue, ve);
    ue[jb] = 0.0;
    const int col = cd[jb / MF_NC] * MF_NC + jb % MF_NC;
    for (int ic = 0; ic < MF_NN * MF_NC; ic++)
      if (ve[ic] != 0.0) atomicAdd(&vals[mf_csr_find(rowptr, colidx, cd[ic / MF_NC] * MF_NC + ic % MF_NC, col)], ve[ic]);
  }
}

} // namespace mfs

#if !MF_FLOAT_COPY
// The stored data (one thread per point): the g-functions at the point times the geometry, in the full
// layout. bad: the first point (cell << 20 | q) of a degenerate cell; nonfinite: the first whose values
// are not finite.
extern "C" __global__ void mfree_sx_setup(const int *verts, const double *coords, const double *qp, const double *qw,
                                          const double *k, int ncells, double *qd, unsigned long long *bad,
                                          unsigned long long *nonfinite)
{
  const long long id = mfs::thread_id();
  if (id >= (long long)ncells * MF_NQS) return;
  const int e = (int)(id / MF_NQS), q = (int)(id % MF_NQS);
  double X[(MF_DIM + 1) * MF_DIM], Ji[9] = {0, 0, 0, 0, 0, 0, 0, 0, 0}, x[3] = {0, 0, 0};
  const double det = mfs::geometry(verts, coords, e, X, Ji);
  if (!(fabs(det) > 0.0)) {
    mfs::flag(bad, e, q);
    return;
  }
  mfs::point_x(X, qp, q, x);
  const double u0[MF_NC + 1] = {0.0}, du0[MF_NC * MF_DIM + 1] = {0.0};
  if (!mfs::entries_at(x, k, u0, du0, Ji, qw[q] * fabs(det), qd + ((size_t)e * MF_NQS + q) * MF_NS_FULL))
    mfs::flag(nonfinite, e, q);
}

#if MF_STATE
// The stored data at a state (one thread per point): the g-functions at (u, grad u) of the state's local values sv,
// in the full layout, as mfree_sx_setup; qd NULL: the check alone (the fused operator at a state evaluates them at
// every application). bad, nonfinite as in mfree_sx_setup.
extern "C" __global__ void mfree_sx_state(const int *verts, const double *coords, const int *cell_nodes,
                                          const double *B, const double *G, const double *qp, const double *qw,
                                          const double *k, int ncells, const double *sv, double *qd,
                                          unsigned long long *bad, unsigned long long *nonfinite)
{
  const long long id = mfs::thread_id();
  if (id >= (long long)ncells * MF_NQS) return;
  const int e = (int)(id / MF_NQS), q = (int)(id % MF_NQS);
  double X[(MF_DIM + 1) * MF_DIM], Ji[9] = {0, 0, 0, 0, 0, 0, 0, 0, 0}, x[3] = {0, 0, 0};
  const double det = mfs::geometry(verts, coords, e, X, Ji);
  if (!(fabs(det) > 0.0)) {
    mfs::flag(bad, e, q);
    return;
  }
  mfs::point_x(X, qp, q, x);
  double ue[MF_NN * MF_NC], us[MF_NC], dus[MF_NC * MF_DIM];
  mfs::gather(cell_nodes, e, sv, ue);
  mfs::state_physical(B, G, q, ue, Ji, us, dus);
  // fused (qd NULL): the g-functions' values checked, nothing made of them (the full layout in local memory took
  // 43 ms a state at 4.8e7 cells on an H100)
  if (qd ? !mfs::entries_at(x, k, us, dus, Ji, qw[q] * fabs(det), qd + ((size_t)e * MF_NQS + q) * MF_NS_FULL)
         : !mfs::g_point_diagonal(x, k, us, dus, 0.0, B, G, nullptr))
    mfs::flag(nonfinite, e, q);
}

#endif // MF_STATE

namespace mfs {
// g3 at point q of cell e (the g-functions at x); whether its values are finite
__device__ inline bool g3_at(const int *verts, const double *coords, const double *qp, const double *k, int e, int q,
                             double *G3)
{
  double X[(MF_DIM + 1) * MF_DIM], Ji[9] = {0, 0, 0, 0, 0, 0, 0, 0, 0}, x[3] = {0, 0, 0};
  geometry(verts, coords, e, X, Ji);
  point_x(X, qp, q, x);
  double G0[MF_NC * MF_NC + 1], G1[MF_NC * MF_NC * MF_DIM + 1], G2[MF_NC * MF_NC * MF_DIM + 1];
  return mfp::eval_g(x, k, G0, G1, G2, G3);
}
} // namespace mfs

// The built-in fit (one component, g3 alone): c(x_q) = g3[0] at every point (one thread per point) where g3 is
// c times the identity; notiso: set (to some point) where it is not (then the physics keeps its own data);
// nonfinite as in mfree_sx_setup.
extern "C" __global__ void mfree_sx_coef(const int *verts, const double *coords, const double *qp, const double *k,
                                         int ncells, double *coefq, unsigned long long *notiso,
                                         unsigned long long *nonfinite)
{
  const long long id = mfs::thread_id();
  if (id >= (long long)ncells * MF_NQS) return;
  const int e = (int)(id / MF_NQS), q = (int)(id % MF_NQS);
  double G3[MF_NC * MF_NC * MF_DIM * MF_DIM + 1];
  if (!mfs::g3_at(verts, coords, qp, k, e, q, G3)) mfs::flag(nonfinite, e, q);
  const double c = G3[0];
  bool iso = true;
  for (int l = 0; l < MF_DIM; l++)
    for (int m = 0; m < MF_DIM; m++) iso = iso && G3[l * MF_DIM + m] == (l == m ? c : 0.0);
  // notiso answers yes or no: a plain store where nothing is stored yet (an atomic per point on one address
  // would serialise every thread where g3 is anisotropic)
  if (!iso && *(volatile unsigned long long *)notiso == ~0ull) *notiso = (unsigned long long)id;
  coefq[id] = c;
}

// varies: set (as notiso above) where c(x_q) differs from its first value (not set: a constant, which the
// built-in operator takes as its weight, with no c per point)
extern "C" __global__ void mfree_sx_varies(const double *coefq, long long n, unsigned long long *varies)
{
  const long long id = mfs::thread_id();
  if (id < n && coefq[id] != coefq[0] && *(volatile unsigned long long *)varies == ~0ull)
    *varies = (unsigned long long)id;
}

#endif

// y += A x (one thread per cell); T: the vectors' and data's type (float: the operator's float copy, the
// cell's work in double)
template <class T>
__device__ inline void apply_body(const int *cell_nodes, const double *B, const double *G, const T *qd, int ncells,
                                  const T *x, T *y)
{
  const long long e = mfs::thread_id();
  if (e >= ncells) return;
  double ue[MF_NN * MF_NC], ve[MF_NN * MF_NC];
  mfs::gather(cell_nodes, (int)e, x, ue);
  mfs::cell_local(B, G, qd, (int)e, ue, ve);
  mfs::scatter_add(cell_nodes, (int)e, ve, y);
}
#if MF_FLOAT_COPY
extern "C" __global__ void mfree_sx_apply_f(const int *cell_nodes, const double *B, const double *G, const float *qd,
                                            int ncells, const float *x, float *y)
{
  apply_body(cell_nodes, B, G, qd, ncells, x, y);
}
#else
extern "C" __global__ void mfree_sx_apply(const int *cell_nodes, const double *B, const double *G, const double *qd,
                                          int ncells, const double *x, double *y)
{
  apply_body(cell_nodes, B, G, qd, ncells, x, y);
}

// y += diag(A) (the CPU twin's cell_diagonal)
extern "C" __global__ void mfree_sx_diagonal(const int *cell_nodes, const double *B, const double *G, const double *qd,
                                             int ncells, double *y)
{
  const long long e = mfs::thread_id();
  if (e >= ncells) return;
  double de[MF_NN * MF_NC];
  for (int i = 0; i < MF_NN * MF_NC; i++) de[i] = 0.0;
  for (int q = 0; q < MF_NQS; q++) mfs::diagonal_point(B, G, q, qd + ((size_t)e * MF_NQS + q) * MF_NS_FULL, de);
  mfs::scatter_add(cell_nodes, (int)e, de, y);
}

#if MF_STATE
// The operator at a state, fused (one thread per cell): y += A(s) x with the g-functions evaluated at every point
// at the state's local values sv, nothing stored (the physics whose full layout would hold more entries per point
// than the state's values and the geometry cost; physics_simplex.cu: state_op).
#ifdef MF_SX_MINB
#define MF_SX_STATE_BOUNDS __launch_bounds__(128, MF_SX_MINB)
#else
#define MF_SX_STATE_BOUNDS
#endif
extern "C" __global__ void MF_SX_STATE_BOUNDS mfree_sx_apply_state(const int *verts, const double *coords, const int *cell_nodes,
                                                const double *B, const double *G, const double *qp, const double *qw,
                                                const double *k, int ncells, const double *sv, const double *xv,
                                                double *yv)
{
  const long long e = mfs::thread_id();
  if (e >= ncells) return;
  double X[(MF_DIM + 1) * MF_DIM], Ji[9] = {0, 0, 0, 0, 0, 0, 0, 0, 0};
  const double det = mfs::geometry(verts, coords, (int)e, X, Ji);
  double se[MF_NN * MF_NC], ue[MF_NN * MF_NC], ve[MF_NN * MF_NC];
  mfs::gather(cell_nodes, (int)e, sv, se);
  mfs::gather(cell_nodes, (int)e, xv, ue);
  for (int i = 0; i < MF_NN * MF_NC; i++) ve[i] = 0.0;
  for (int q = 0; q < MF_NQS; q++) {
    double us[MF_NC], dus[MF_NC * MF_DIM], u[MF_NC], ref[MF_NC * MF_DIM], r0[MF_NC], r1[MF_NC * MF_DIM],
        x[3] = {0, 0, 0};
    mfs::state_physical(B, G, q, se, Ji, us, dus);
    mfs::state(B, G, q, ue, u, ref);
    mfs::point_x(X, qp, q, x);
    mfp::fused_point_at(Ji, qw[q] * fabs(det), x, k, us, dus, u, ref, r0, r1);
    mfs::back(B, G, q, r0, r1, ve);
  }
  mfs::scatter_add(cell_nodes, (int)e, ve, yv);
}

// y += diag(A(s)) of the fused operator at a state: at each point the g-functions at the state, W times their diagonal
// blocks against the basis functions' values and physical gradients (mfs::g_point_diagonal, no local memory; before,
// the point's entries in the full layout and mfree_sx_diagonal's terms: a 1,952-byte stack frame, 60 ms a state at
// 4.8e7 cells on an H100).
extern "C" __global__ void mfree_sx_diagonal_state(const int *verts, const double *coords, const int *cell_nodes,
                                                   const double *B, const double *G, const double *qp,
                                                   const double *qw, const double *k, int ncells, const double *sv,
                                                   double *y)
{
  const long long e = mfs::thread_id();
  if (e >= ncells) return;
  double X[(MF_DIM + 1) * MF_DIM], Ji[9] = {0, 0, 0, 0, 0, 0, 0, 0, 0};
  const double det = mfs::geometry(verts, coords, (int)e, X, Ji);
  double se[MF_NN * MF_NC], de[MF_NN * MF_NC];
  mfs::gather(cell_nodes, (int)e, sv, se);
  for (int i = 0; i < MF_NN * MF_NC; i++) de[i] = 0.0;
  for (int q = 0; q < MF_NQS; q++) {
    double us[MF_NC], dus[MF_NC * MF_DIM], x[3] = {0, 0, 0}, gp[MF_NN * MF_DIM];
    mfs::state_physical(B, G, q, se, Ji, us, dus);
    mfs::point_x(X, qp, q, x);
    const double *Bq = B + (size_t)q * MF_NN, *Gq = G + (size_t)q * MF_NN * MF_DIM;
    for (int i = 0; i < MF_NN; i++)
      for (int d = 0; d < MF_DIM; d++) {
        double s = 0.0;
        for (int m = 0; m < MF_DIM; m++) s += Gq[i * MF_DIM + m] * Ji[3 * m + d];
        gp[i * MF_DIM + d] = s;
      }
    mfs::g_point_diagonal(x, k, us, dus, qw[q] * fabs(det), Bq, gp, de);
  }
  mfs::scatter_add(cell_nodes, (int)e, de, y);
}

#endif // MF_STATE

// r += F(u): f0 and f1 at every point (one thread per cell); nonfinite as in mfree_sx_setup
extern "C" __global__ void mfree_sx_residual(const int *verts, const double *coords, const int *cell_nodes,
                                             const double *B, const double *G, const double *qp, const double *qw,
                                             const double *k, int ncells, const double *uv, double *rv,
                                             unsigned long long *nonfinite)
{
  const long long e = mfs::thread_id();
  if (e >= ncells) return;
  double X[(MF_DIM + 1) * MF_DIM], Ji[9] = {0, 0, 0, 0, 0, 0, 0, 0, 0};
  const double det = mfs::geometry(verts, coords, (int)e, X, Ji);
  double ue[MF_NN * MF_NC], ve[MF_NN * MF_NC];
  mfs::gather(cell_nodes, (int)e, uv, ue);
  for (int i = 0; i < MF_NN * MF_NC; i++) ve[i] = 0.0;
  for (int q = 0; q < MF_NQS; q++) {
    double u[MF_NC], ref[MF_NC * MF_DIM], r0[MF_NC], r1[MF_NC * MF_DIM], x[3] = {0, 0, 0};
    mfs::state(B, G, q, ue, u, ref);
    mfs::point_x(X, qp, q, x);
    if (!mfp::residual_point(x, Ji, qw[q] * fabs(det), k, u, ref, r0, r1)) mfs::flag(nonfinite, (int)e, q);
    mfs::back(B, G, q, r0, r1, ve);
  }
  mfs::scatter_add(cell_nodes, (int)e, ve, rv);
}

// The assembled matrix's values: every cell's element matrix (its action on unit vectors) added at its
// CSR positions (row node_i NC + c, column node_j NC + b), one thread per cell.
extern "C" __global__ void mfree_sx_assemble(const int *cell_nodes, const double *B, const double *G, const double *qd,
                                             int ncells, const int64_t *rowptr, const int *colidx, double *vals)
{
  const long long e = mfs::thread_id();
  if (e >= ncells) return;
  mfs::assemble_cell(cell_nodes, B, G, qd, (int)e, (int)e, rowptr, colidx, vals);
}

#if MF_STATE
// The assembled matrix's values of the fused operator at a state: each cell's points' entries (full layout) made
// here from the state sv, then as mfree_sx_assemble.
extern "C" __global__ void mfree_sx_assemble_state(const int *verts, const double *coords, const int *cell_nodes,
                                                   const double *B, const double *G, const double *qp,
                                                   const double *qw, const double *k, int ncells, const double *sv,
                                                   const int64_t *rowptr, const int *colidx, double *vals)
{
  const long long e = mfs::thread_id();
  if (e >= ncells) return;
  mf_phys_layout L;
  mfs::full_layout(&L);
  double X[(MF_DIM + 1) * MF_DIM], Ji[9] = {0, 0, 0, 0, 0, 0, 0, 0, 0};
  const double det = mfs::geometry(verts, coords, (int)e, X, Ji);
  double se[MF_NN * MF_NC], D[MF_NQS * MF_NS_FULL];
  mfs::gather(cell_nodes, (int)e, sv, se);
  for (int q = 0; q < MF_NQS; q++) {
    double us[MF_NC], refs[MF_NC * MF_DIM], dus[MF_NC * MF_DIM], x[3] = {0, 0, 0};
    mfs::state(B, G, q, se, us, refs);
    mfp::physical_gradient(refs, Ji, dus);
    mfs::point_x(X, qp, q, x);
    double G0[MF_NC * MF_NC + 1], G1[MF_NC * MF_NC * MF_DIM + 1], G2[MF_NC * MF_NC * MF_DIM + 1],
        G3[MF_NC * MF_NC * MF_DIM * MF_DIM + 1];
    mfp::eval_g_at(x, k, us, dus, G0, G1, G2, G3);
    const double *Gc[4] = {G0, G1, G2, G3};
    mf_phys_store_point(&L, Gc, Ji, qw[q] * fabs(det), D + (size_t)q * MF_NS_FULL);
  }
  const int *cd = cell_nodes + (size_t)e * MF_NN;
  double ue[MF_NN * MF_NC], ve[MF_NN * MF_NC];
  for (int i = 0; i < MF_NN * MF_NC; i++) ue[i] = 0.0;
  for (int jb = 0; jb < MF_NN * MF_NC; jb++) {
    ue[jb] = 1.0;
    mfs::cell_local(B, G, D, 0, ue, ve); // the cell's own entries at "cell 0" of D
    ue[jb] = 0.0;
    const int col = cd[jb / MF_NC] * MF_NC + jb % MF_NC;
    for (int ic = 0; ic < MF_NN * MF_NC; ic++)
      if (ve[ic] != 0.0) atomicAdd(&vals[mf_csr_find(rowptr, colidx, cd[ic / MF_NC] * MF_NC + ic % MF_NC, col)], ve[ic]);
  }
}

#endif // MF_STATE

#if MF_FACETS
// The facets' terms, one thread per boundary facet entry (its cell, the local facet opposite vertex f, the
// term): mode 0 the operator's (g0 times u = x), 1 the residual's (f0 at u = x), 2 the diagonal's (g0's
// diagonal times phi_i^2), added into y atomically; f0 or g0 at u = 0 where mode != 1, as on the host.
// nonfinite: the first (entry << 20 | facet point) where f0 is not finite. The CPU twin: cell_terms in
// lib/simplex/physics_simplex_faces.c (fx: the facets' points in the cell's reference coordinates, fphi the
// basis there, fw the facet rule's weights).
extern "C" __global__ void mfree_sx_facets(const int *verts, const double *coords, const int *cell_nodes,
                                           const int *bf_cell, const int *bf_face, const int *bf_term, int nbf,
                                           const double *fx, const double *fphi, const double *fw, const double *k,
                                           int mode, const double *xv, double *y, unsigned long long *nonfinite)
{
  const long long id = mfs::thread_id();
  if (id >= nbf) return;
  const int e = bf_cell[id], f = bf_face[id], t = bf_term[id];
  const int *cv = verts + (size_t)e * (MF_DIM + 1);
  double X[4][3];
  for (int v = 0; v <= MF_DIM; v++)
    for (int kk = 0; kk < 3; kk++) X[v][kk] = coords[3 * (size_t)cv[v] + kk];
  double nrm[3] = {0, 0, 0};
  const double area = mf_phys_facet_normal(MF_DIM, X, f, nrm);
  double ue[MF_NN * MF_NC], ve[MF_NN * MF_NC];
  for (int i = 0; i < MF_NN * MF_NC; i++) ve[i] = 0.0, ue[i] = 0.0;
  if (mode != 2) mfs::gather(cell_nodes, e, xv, ue);
  for (int q = 0; q < MF_FQ; q++) {
    const double *xi = fx + ((size_t)f * MF_FQ + q) * MF_DIM, *phi = fphi + ((size_t)f * MF_FQ + q) * MF_NN;
    double x[3] = {0, 0, 0}, u[MF_NC], zero[MF_NC], out[MF_NC * MF_NC], r[MF_NC];
    for (int kk = 0; kk < MF_DIM; kk++) {
      x[kk] = X[0][kk];
      for (int l = 0; l < MF_DIM; l++) x[kk] += (X[l + 1][kk] - X[0][kk]) * xi[l];
    }
    for (int c = 0; c < MF_NC; c++) u[c] = 0.0, zero[c] = 0.0;
    for (int i = 0; i < MF_NC * MF_NC; i++) out[i] = 0.0;
    if (mode != 2)
      for (int i = 0; i < MF_NN; i++)
        for (int c = 0; c < MF_NC; c++) u[c] += phi[i] * ue[i * MF_NC + c];
    mfree_b(t, mode == 1 ? 0 : 1, MF_DIM, MF_NC, mode == 1 ? u : zero, x, nrm, k, out);
    const double W = fw[q] * area;
    if (mode == 1) {
      bool fin = true;
      for (int c = 0; c < MF_NC; c++) fin = fin && isfinite(out[c]);
      if (!fin) mfs::flag(nonfinite, (int)id, q);
    }
    if (mode == 2) {
      for (int i = 0; i < MF_NN; i++)
        for (int c = 0; c < MF_NC; c++) ve[i * MF_NC + c] += W * out[c * MF_NC + c] * phi[i] * phi[i];
      continue;
    }
    for (int c = 0; c < MF_NC; c++) {
      double v = 0.0;
      if (mode == 1) v = out[c];
      else
        for (int b = 0; b < MF_NC; b++) v += out[c * MF_NC + b] * u[b];
      r[c] = W * v;
    }
    for (int i = 0; i < MF_NN; i++)
      for (int c = 0; c < MF_NC; c++) ve[i * MF_NC + c] += phi[i] * r[c];
  }
  mfs::scatter_add(cell_nodes, e, ve, y);
}
#endif
#endif // MF_FLOAT_COPY
