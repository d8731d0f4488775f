// apply_kernel.cuh -- the sum-factorised matrix-free cell kernel: one thread per DoF (per
// quadrature point where q > p + 1) of a cell, several cells per block at low order, instantiated
// on (dim, n1 = p + 1, nq, operator, collocation) so every loop unrolls.
//
// Per cell, in shared memory s (nq^dim, x fastest, stride nq in every direction):
//   gather u (masked on Dirichlet nodes)  -> B sweeps x, y, z (skipped when collocated)
//   g_l = D_l u_q (from s)                -> v = G g (quadrature data, coalesced AoSoA loads)
//   r = sum_l D_l^T v_l + m u_q           -> B^T sweeps z, y, x -> scatter-add (atomic or colored)
// Sweeps alternate between two shared buffers (one barrier per sweep).
//
// Geometry on the fly (OTF, double only): no quadrature data are read. Before u, each thread gathers
// its node's coordinates (component-major: one coalesced load per component, like u), and for each
// component k the cell runs the steps of u on them -- constraints, B sweeps (skipped when collocated:
// B is the identity), collocation derivative -- giving J_kl = d x_k / d xi_l at its point; then the
// stored set-up's pointwise formulas (lib/physics/mf_pointwise.h: mf_qf_geometry, times c_q by mf_qf_scale)
// make the values the stored path would have read. The CPU twin: lib/hex/kernels_otf.c.
#ifndef MF_APPLY_KERNEL_CUH
#define MF_APPLY_KERNEL_CUH

#include "mf_cuda_apply.h"
#include "hanging/mf_hanging.h"
#include "physics/mf_gallery.h"
#include "physics/mf_pointwise.h"

namespace mfk {

// Hanging-node constraints of one cell in place on its nodal values s (stride NQ in every
// direction): direction by direction, the lines through hanging faces/edges get the 1D coarse-to-fine
// interpolation (transpose: P^T, directions in reverse). Same passes as mf_hanging_apply (lib/hanging).
// Every thread of the block must call it (barriers); threads of cells without a mask only wait.
template <int DIM, int N1, int NQ, class T>
__device__ __forceinline__ void hanging(T *s, int mask, const T *sP, int i, int j, int k, bool isdof, bool transpose)
{
  const int c = mask & (DIM == 3 ? 7 : 3), faces = (mask >> (DIM == 3 ? 3 : 2)) & (DIM == 3 ? 7 : 3);
  const int edges = DIM == 3 ? (mask >> 6) & 7 : 0;
  const int idx[3] = {i, j, k};
#pragma unroll
  for (int step = 0; step < DIM; step++) {
    const int d = transpose ? DIM - 1 - step : step;
    bool need = false;
    if (mask && isdof) {
      bool on_all = true;
#pragma unroll
      for (int e = 0; e < DIM; e++) {
        if (e == d) continue;
        const bool on = idx[e] == ((c >> e & 1) ? N1 - 1 : 0);
        if ((faces >> e & 1) && on) need = true;
        on_all = on_all && on;
      }
      if ((edges >> d & 1) && on_all) need = true;
    }
    T t = 0;
    const int st = d == 0 ? 1 : d == 1 ? NQ : NQ * NQ;
    if (need) {
      const T *M = sP + (c >> d & 1) * N1 * N1;
      const int base = (k * NQ + j) * NQ + i - idx[d] * st;
#pragma unroll
      for (int m = 0; m < N1; m++) t += (transpose ? M[m * N1 + idx[d]] : M[idx[d] * N1 + m]) * s[base + m * st];
    }
    __syncthreads();
    if (need) s[(k * NQ + j) * NQ + i] = t;
    __syncthreads();
  }
}

// Blocks of more than 512 threads only where one cell needs them (3D q >= 9); those are capped at
// 32 registers so that two blocks fit on an SM (one block alone idles the SM at every barrier).
// Elsewhere up to 512 threads and 128 registers (mf_operator_set_cells_per_block matches this).
#ifndef MF_CUDA_MIN_BLOCKS
#define MF_CUDA_MIN_BLOCKS 3 /* blocks of 512 threads per SM the register budget must allow */
#endif
#ifndef MF_CUDA_OTF_MIN_BLOCKS
#define MF_CUDA_OTF_MIN_BLOCKS 2 /* the same for the on-the-fly kernels (1 for blocks of 1024) */
#endif
template <int DIM, int NQ, int OP, bool OTF = false>
struct bounds {
  static constexpr bool big = (DIM == 2 ? NQ * NQ : NQ * NQ * NQ) > 512;
  // mass kernels have few live values: one more block fits without spilling (measured: bp1 +10%).
  // On the fly the Jacobian and its inverse are live too: 64 registers by default (2 blocks of 512, 1
  // of 1024; a few dozen bytes spill in the 3D gradient kernels), MFREE_CUDA_OTF_MIN_BLOCKS in CMake.
  static constexpr int threads = big ? 1024 : 512,
                       blocks = OTF ? (big ? 1 : MF_CUDA_OTF_MIN_BLOCKS)
                                    : big ? 2 : MF_CUDA_MIN_BLOCKS + (OP == 0 ? 1 : 0);
};

// HANG: the variant for meshes with hanging nodes; meshes without any run the kernel without the
// constraint code (it costs registers even when no cell uses it: -13% on bp3 p = 8 measured).
// T: the scalar type of the vectors, the quadrature data and the arithmetic (double, or float for
// multigrid levels in single precision); the 1D matrices come in double and are rounded when staged.
// OTF: geometry on the fly (file comment; T = double).
template <int DIM, int N1, int NQ, int OP, bool COLLOC, bool HANG, class T, bool OTF>
__global__ void __launch_bounds__(bounds<DIM, NQ, OP, OTF>::threads, bounds<DIM, NQ, OP, OTF>::blocks)
    apply(const mf_cuda_apply_args a)
{
  constexpr int NQP = DIM == 2 ? NQ * NQ : NQ * NQ * NQ;
  constexpr int NPC = DIM == 2 ? N1 * N1 : N1 * N1 * N1;
  constexpr bool MASS = mf_pw_has(OP, MF_PW_VALUE), GRAD = mf_pw_has(OP, MF_PW_GRAD); // the gallery's entry OP
  constexpr int NBUF = GRAD ? 2 + DIM : 2; // s0, s1 (ping-pong), then v_0 .. v_{DIM-1}
  extern __shared__ __align__(16) unsigned char smem_raw[];
  T *smem = reinterpret_cast<T *>(smem_raw);
  T *sB = smem, *sD = sB + NQ * N1, *sP = sD + NQ * NQ;
  const T *qd = static_cast<const T *>(a.qd), *x = static_cast<const T *>(a.x);
  T *y = static_cast<T *>(a.y);
  const int tid = threadIdx.x;
  const int lc = tid / NQP, q = tid - lc * NQP;
  const int i = q % NQ, j = (q / NQ) % NQ, k = DIM == 3 ? q / (NQ * NQ) : 0;
  const int pos = a.cell_begin + blockIdx.x * a.cells_per_block + lc;
  const bool active = pos < a.cell_end;
  const int cell = !active ? 0 : a.cell_list ? __ldg(&a.cell_list[pos]) : pos;
  T *sw = sP + (HANG ? 2 * N1 * N1 : 0); // OTF: the 1D quadrature weights
  T *s0 = sw + (OTF ? NQ : 0) + (size_t)lc * NBUF * NQP, *s1 = s0 + NQP;

  // the quadrature data does not depend on anything: issue its loads first, so that their latency
  // overlaps the gather and the interpolation sweeps (not in the register-capped big blocks)
  constexpr int NC = mf_pw_nstored(OP, DIM);
  constexpr bool PREFETCH = !bounds<DIM, NQ, OP>::big && !OTF;
  const size_t qbase = (size_t)(cell / a.qd_batch) * a.qd_batch_stride + (size_t)(cell % a.qd_batch) * NQP + q;
  T qv[NC];
  if (PREFETCH) {
#pragma unroll
    for (int c = 0; c < NC; c++) qv[c] = active ? __ldg(&qd[qbase + (size_t)c * a.qd_block_stride]) : (T)0;
  }
  for (int t = tid; t < NQ * N1; t += blockDim.x) sB[t] = (T)a.B[t];
  for (int t = tid; t < NQ * NQ; t += blockDim.x) sD[t] = (T)a.D[t];
  if (HANG)
    for (int t = tid; t < 2 * N1 * N1; t += blockDim.x) sP[t] = (T)a.P[t];
  if (OTF)
    for (int t = tid; t < NQ; t += blockDim.x) sw[t] = (T)a.qw[t];

  // gather
  const bool isdof = i < N1 && j < N1 && (DIM == 2 || k < N1);
  int node = 0;
  T u = 0;
  double xc[3] = {0.0, 0.0, 0.0}; // OTF: this node's coordinates
  if (active && isdof) {
    node = __ldg(&a.cell_nodes[(size_t)cell * NPC + i + N1 * (j + N1 * k)]);
    u = __ldg(&x[node]);
    if (OTF)
#pragma unroll
      for (int kc = 0; kc < DIM; kc++) xc[kc] = __ldg(&a.coords[(size_t)kc * a.coords_stride + node]);
    if (a.bc && a.bc[node]) u = 0;
  }

  if (OTF) { // the quadrature data of this point from the geometry nodes (file comment)
    const double cq = (active && a.coefq) ? __ldg(&a.coefq[(size_t)cell * NQP + q]) : 1.0;
    const int mkg = (HANG && active) ? a.mask[cell] : 0;
    __syncthreads(); // the staged matrices and weights
    const bool hangg = HANG && __syncthreads_or(mkg != 0);
    double J[9] = {0, 0, 0, 0, 0, 0, 0, 0, 0};
#pragma unroll
    for (int kc = 0; kc < DIM; kc++) {
      s0[q] = (T)xc[kc];
      __syncthreads();
      if (hangg) hanging<DIM, N1, NQ>(s0, mkg, sP, i, j, k, isdof, false);
      const T *xs = s0;
      if (!COLLOC) { // the sweeps of u below
        if (j < N1 && k < N1) {
          T t = 0;
#pragma unroll
          for (int m = 0; m < N1; m++) t += sB[i * N1 + m] * s0[(k * NQ + j) * NQ + m];
          s1[q] = t;
        }
        __syncthreads();
        if (k < N1) {
          T t = 0;
#pragma unroll
          for (int m = 0; m < N1; m++) t += sB[j * N1 + m] * s1[(k * NQ + m) * NQ + i];
          s0[q] = t;
        }
        __syncthreads();
        if (DIM == 3) {
          T t = 0;
#pragma unroll
          for (int m = 0; m < N1; m++) t += sB[k * N1 + m] * s0[(m * NQ + j) * NQ + i];
          s1[q] = t;
          __syncthreads();
          xs = s1;
        }
      }
      T d0 = 0, d1 = 0, d2 = 0;
#pragma unroll
      for (int m = 0; m < NQ; m++) {
        d0 += sD[i * NQ + m] * xs[(k * NQ + j) * NQ + m];
        d1 += sD[j * NQ + m] * xs[(k * NQ + m) * NQ + i];
        if (DIM == 3) d2 += sD[k * NQ + m] * xs[(m * NQ + j) * NQ + i];
      }
      J[3 * kc + 0] = d0;
      J[3 * kc + 1] = d1;
      if (DIM == 3) J[3 * kc + 2] = d2;
      __syncthreads(); // every read of s0, s1 done before the next component (or u) overwrites them
    }
    double w = 1.0; // the tensor weight in the order of mf_qweight
    w *= sw[i];
    w *= sw[j];
    if (DIM == 3) w *= sw[k];
    double qg[NC];
    mf_qf_geometry(DIM, J, w, a.qf_a, a.qf_b, MASS, GRAD, qg, 1);
    if (a.coefq) mf_qf_scale(DIM, MASS, GRAD, cq, qg, 1);
#pragma unroll
    for (int c = 0; c < NC; c++) qv[c] = active ? (T)qg[c] : (T)0; // idle threads' cells are not cells
  }
  s0[q] = u;
  __syncthreads();

  // hanging nodes: coarse values -> this cell's values (blocks without a masked cell skip it)
  const int mk = (HANG && active) ? a.mask[cell] : 0;
  const bool hang = HANG && __syncthreads_or(mk != 0);
  if (hang) hanging<DIM, N1, NQ>(s0, mk, sP, i, j, k, isdof, false);

  // interpolation to the quadrature points: each sweep reads one buffer and writes the other
  const T *uqs = s0;
  if (!COLLOC) {
    if (j < N1 && k < N1) { // x: s0 -> s1
      T t = 0;
#pragma unroll
      for (int m = 0; m < N1; m++) t += sB[i * N1 + m] * s0[(k * NQ + j) * NQ + m];
      s1[q] = t;
    }
    __syncthreads();
    if (k < N1) { // y: s1 -> s0
      T t = 0;
#pragma unroll
      for (int m = 0; m < N1; m++) t += sB[j * N1 + m] * s1[(k * NQ + m) * NQ + i];
      s0[q] = t;
    }
    __syncthreads();
    if (DIM == 3) { // z: s0 -> s1
      T t = 0;
#pragma unroll
      for (int m = 0; m < N1; m++) t += sB[k * N1 + m] * s0[(m * NQ + j) * NQ + i];
      s1[q] = t;
      __syncthreads();
      uqs = s1;
    }
  }
  const T uq = uqs[q];

  // pointwise operator with the quadrature data
  if (!PREFETCH && !OTF) {
#pragma unroll
    for (int c = 0; c < NC; c++) qv[c] = active ? __ldg(&qd[qbase + (size_t)c * a.qd_block_stride]) : (T)0;
  }
  // the pointwise step (lib/physics/mf_gallery.h): r = m u_q, then v = G g
  T r = 0;
  MF_PW_APPLY_MASS(MASS, qv, 0, uq, r);
  if (GRAD) {
    T g[3] = {0, 0, 0}, dv[3];
#pragma unroll
    for (int m = 0; m < NQ; m++) {
      g[0] += sD[i * NQ + m] * uqs[(k * NQ + j) * NQ + m];
      g[1] += sD[j * NQ + m] * uqs[(k * NQ + m) * NQ + i];
      if (DIM == 3) g[2] += sD[k * NQ + m] * uqs[(m * NQ + j) * NQ + i];
    }
    MF_PW_APPLY_GRAD(T, DIM, MASS, GRAD, qv, 1, 0, g, dv);
    T *v = s1 + NQP;
    v[q] = dv[0];
    v[NQP + q] = dv[1];
    if (DIM == 3) v[2 * NQP + q] = dv[2];
    __syncthreads();
#pragma unroll
    for (int m = 0; m < NQ; m++) {
      r += sD[m * NQ + i] * v[(k * NQ + j) * NQ + m];
      r += sD[m * NQ + j] * v[NQP + (k * NQ + m) * NQ + i];
      if (DIM == 3) r += sD[m * NQ + k] * v[2 * NQP + (m * NQ + j) * NQ + i];
    }
  }

  // integration back to the nodes
  if (!COLLOC) {
    // s0 is free: in 3D u_q lives in s1; in 2D every read of u_q (s0) happened before the last barrier,
    // except for the mass-only kernel, which needs one more
    if (!GRAD && DIM == 2) __syncthreads();
    s0[q] = r;
    __syncthreads();
    const T *rs = s0;
    if (DIM == 3) { // z^T: s0 -> s1
      if (k < N1) {
        T t = 0;
#pragma unroll
        for (int m = 0; m < NQ; m++) t += sB[m * N1 + k] * s0[(m * NQ + j) * NQ + i];
        s1[q] = t;
      }
      __syncthreads();
      rs = s1;
    }
    T *ws = DIM == 3 ? s0 : s1;
    if (k < N1 && j < N1) { // y^T
      T t = 0;
#pragma unroll
      for (int m = 0; m < NQ; m++) t += sB[m * N1 + j] * rs[(k * NQ + m) * NQ + i];
      ws[q] = t;
    }
    __syncthreads();
    if (isdof) { // x^T
      r = 0;
#pragma unroll
      for (int m = 0; m < NQ; m++) r += sB[m * N1 + i] * ws[(k * NQ + j) * NQ + m];
    }
  }

  // hanging nodes: the transpose, in a buffer nobody reads any more
  if (hang) {
    T *hb = (COLLOC || DIM == 3) ? s1 : s0;
    hb[q] = isdof ? r : (T)0;
    __syncthreads();
    hanging<DIM, N1, NQ>(hb, mk, sP, i, j, k, isdof, true);
    r = hb[q];
  }

  // scatter-add
  if (active && isdof) {
    if (a.atomic) atomicAdd(&y[node], r);
    else y[node] += r; // colored: no other cell of this launch touches node
  }
}

template <int DIM, int N1, int NQ, int OP, bool COLLOC, bool HANG, class T, bool OTF>
cudaError_t launch_design(const mf_cuda_apply_args *a)
{
  constexpr int NQP = DIM == 2 ? NQ * NQ : NQ * NQ * NQ;
  constexpr int NBUF = OP != 0 ? 2 + DIM : 2;
  const int ncells = a->cell_end - a->cell_begin;
  if (ncells <= 0) return cudaSuccess;
  const int cpb = a->cells_per_block;
  const size_t shmem = sizeof(T) * ((size_t)NQ * N1 + NQ * NQ + (HANG ? 2 * N1 * N1 : 0) + (OTF ? NQ : 0) +
                                    (size_t)cpb * NBUF * NQP);
  if (shmem > 48 * 1024) {
    cudaError_t e = cudaFuncSetAttribute(apply<DIM, N1, NQ, OP, COLLOC, HANG, T, OTF>,
                                         cudaFuncAttributeMaxDynamicSharedMemorySize, (int)shmem);
    if (e != cudaSuccess) return e;
  }
  const int blocks = (ncells + cpb - 1) / cpb;
  apply<DIM, N1, NQ, OP, COLLOC, HANG, T, OTF><<<blocks, cpb * NQP, shmem>>>(*a);
  return mf_cuda_launch_status();
}

// stored quadrature data (apply_inst.cu.in), and geometry on the fly (apply_otf_inst.cu.in, double)
template <int DIM, int N1, int NQ, int OP, bool COLLOC, bool HANG, class T>
cudaError_t launch(const mf_cuda_apply_args *a)
{
  return launch_design<DIM, N1, NQ, OP, COLLOC, HANG, T, false>(a);
}
template <int DIM, int N1, int NQ, int OP, bool COLLOC, bool HANG, class T>
cudaError_t launch_otf(const mf_cuda_apply_args *a)
{
  return launch_design<DIM, N1, NQ, OP, COLLOC, HANG, T, true>(a);
}

MF_CUDA_APPLY_LOOKUP(launch)

} // namespace mfk

#endif
