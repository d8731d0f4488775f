// column_cell.cuh -- the second design of the sum-factorised cell kernel: one thread per column of
// a cell, the values along the last direction (z in 3D, y in 2D) held in registers. Device code only,
// so that NVRTC compiles it too: the built-in kernels (apply_column.cuh) and the vector kernel of users'
// physics (physics_jit.cuh) are this one function.
//
// A cell has NQ^(dim-1) threads, thread (i, j) owning the points (i, j, 0..NQ-1). The sweeps and the
// derivative along the register direction are plain register arithmetic; only the other directions
// pass through shared memory (3D: x and y; 2D: x). Compared with one thread per point
// (apply_kernel.cuh) a cell needs a factor NQ fewer threads, barriers and shared-memory stores, and
// the 1D matrix entries a thread reads from shared memory serve NQ points each.
//
// Per cell, with buffers A, B (and C for the 3D gradient) of NQ^dim values in shared memory:
//   gather u (registers)  -> z in registers -> A -> y sweep A -> B -> x sweep B -> u_q (registers)
//   u_q -> A: g_x, g_y from A, g_z in registers -> v = G g (quadrature data) -> v_x -> B, v_y -> C
//   r = D_x^T v_x + D_y^T v_y (shared) + D_z^T v_z (registers) + m u_q
//   r -> A -> x^T -> B -> y^T -> z^T in registers -> scatter-add
// The numbering of points and quadrature data is that of the thread-per-point kernel (x fastest), so
// both designs read the same quadrature data.
#ifndef MF_COLUMN_CELL_CUH
#define MF_COLUMN_CELL_CUH

#include "cuda/apply_args.h"
#include "physics/mf_gallery.h"

namespace mfc {

// Even-odd decomposition along the register direction. The points of every rule are symmetric about
// the middle of the interval, so B[NQ-1-a][N1-1-b] = B[a][b] and D[NQ-1-a][NQ-1-b] = -D[a][b]: with
// E = (M[a][b] + M[a][n-1-b]) / 2 and O = (M[a][b] - M[a][n-1-b]) / 2 over the first halves of rows
// and columns (sE, sO: HQ x H, row-major), a product needs half the multiply-adds; the middle row and
// column (odd sizes) come from M itself.
// out = B u (N1 -> NQ)
template <int N1, int NQ, class T>
__device__ __forceinline__ void eo_b(const T *sB, const T *sE, const T *sO, const T (&u)[N1], T (&out)[NQ])
{
  constexpr int H = N1 / 2, HQ = NQ / 2;
  T e[H], o[H];
#pragma unroll
  for (int b = 0; b < H; b++) e[b] = u[b] + u[N1 - 1 - b], o[b] = u[b] - u[N1 - 1 - b];
#pragma unroll
  for (int a = 0; a < HQ; a++) {
    T se = N1 % 2 ? sB[a * N1 + H] * u[H % N1] : (T)0, so = 0;
#pragma unroll
    for (int b = 0; b < H; b++) se += sE[a * H + b] * e[b], so += sO[a * H + b] * o[b];
    out[a] = se + so;
    out[NQ - 1 - a] = se - so;
  }
  if (NQ % 2) {
    T sm = N1 % 2 ? sB[HQ * N1 + H] * u[H % N1] : (T)0;
#pragma unroll
    for (int b = 0; b < H; b++) sm += sB[HQ * N1 + b] * e[b];
    out[HQ % NQ] = sm;
  }
}
// out = B^T w (NQ -> N1)
template <int N1, int NQ, class T>
__device__ __forceinline__ void eo_bt(const T *sB, const T *sE, const T *sO, const T (&w)[NQ], T (&out)[N1])
{
  constexpr int H = N1 / 2, HQ = NQ / 2;
  T e[HQ], o[HQ];
#pragma unroll
  for (int a = 0; a < HQ; a++) e[a] = w[a] + w[NQ - 1 - a], o[a] = w[a] - w[NQ - 1 - a];
#pragma unroll
  for (int b = 0; b < H; b++) {
    T se = NQ % 2 ? sB[HQ * N1 + b] * w[HQ % NQ] : (T)0, so = 0;
#pragma unroll
    for (int a = 0; a < HQ; a++) se += sE[a * H + b] * e[a], so += sO[a * H + b] * o[a];
    out[b] = se + so;
    out[N1 - 1 - b] = se - so;
  }
  if (N1 % 2) {
    T sm = NQ % 2 ? sB[HQ * N1 + H] * w[HQ % NQ] : (T)0;
#pragma unroll
    for (int a = 0; a < HQ; a++) sm += sB[a * N1 + H] * e[a];
    out[H % N1] = sm;
  }
}
// out = D u (NQ -> NQ; D antisymmetric under the flip)
template <int NQ, class T>
__device__ __forceinline__ void eo_d(const T *sD, const T *sE, const T *sO, const T (&u)[NQ], T (&out)[NQ])
{
  constexpr int HQ = NQ / 2;
  T e[HQ], o[HQ];
#pragma unroll
  for (int b = 0; b < HQ; b++) e[b] = u[b] + u[NQ - 1 - b], o[b] = u[b] - u[NQ - 1 - b];
#pragma unroll
  for (int a = 0; a < HQ; a++) {
    T se = NQ % 2 ? sD[a * NQ + HQ] * u[HQ % NQ] : (T)0, so = 0;
#pragma unroll
    for (int b = 0; b < HQ; b++) se += sE[a * HQ + b] * e[b], so += sO[a * HQ + b] * o[b];
    out[a] = se + so;
    out[NQ - 1 - a] = so - se;
  }
  if (NQ % 2) {
    T sm = sD[HQ * NQ + HQ] * u[HQ % NQ];
#pragma unroll
    for (int b = 0; b < HQ; b++) sm += sD[HQ * NQ + b] * o[b];
    out[HQ % NQ] = sm;
  }
}
// out = D^T v
template <int NQ, class T>
__device__ __forceinline__ void eo_dt(const T *sD, const T *sE, const T *sO, const T (&v)[NQ], T (&out)[NQ])
{
  constexpr int HQ = NQ / 2;
  T e[HQ], o[HQ];
#pragma unroll
  for (int a = 0; a < HQ; a++) e[a] = v[a] + v[NQ - 1 - a], o[a] = v[a] - v[NQ - 1 - a];
#pragma unroll
  for (int b = 0; b < HQ; b++) {
    T sa = NQ % 2 ? sD[HQ * NQ + b] * v[HQ % NQ] : (T)0, sb = 0;
#pragma unroll
    for (int a = 0; a < HQ; a++) sa += sO[a * HQ + b] * e[a], sb += sE[a * HQ + b] * o[a];
    out[b] = sa + sb;
    out[NQ - 1 - b] = sb - sa;
  }
  if (NQ % 2) {
    T sm = sD[HQ * NQ + HQ] * v[HQ % NQ];
#pragma unroll
    for (int a = 0; a < HQ; a++) sm += sD[a * NQ + HQ] * o[a];
    out[HQ % NQ] = sm;
  }
}

// Hanging-node constraints of one cell on its nodal values in shared memory s (stride NQ in every
// direction), column by column: the same passes as mf_hanging_apply (lib/hanging) and mfk::hanging,
// each thread updating the points of its column. Every thread of the block calls it (barriers).
template <int DIM, int N1, int NQ, class T>
__device__ __forceinline__ void hanging(T *s, int mask, const T *sP, int i, int j, bool col, bool transpose)
{
  const int c = mask & (DIM == 3 ? 7 : 3), faces = (mask >> (DIM == 3 ? 3 : 2)) & (DIM == 3 ? 7 : 3);
  const int edges = DIM == 3 ? (mask >> 6) & 7 : 0;
#pragma unroll
  for (int step = 0; step < DIM; step++) {
    const int d = transpose ? DIM - 1 - step : step;
    T t[N1];
    bool need[N1];
#pragma unroll
    for (int k = 0; k < N1; k++) {
      const int idx[3] = {i, DIM == 3 ? j : k, DIM == 3 ? k : 0};
      need[k] = false;
      t[k] = 0;
      if (mask && col) {
        bool on_all = true;
#pragma unroll
        for (int e = 0; e < DIM; e++) {
          if (e == d) continue;
          const bool on = idx[e] == ((c >> e & 1) ? N1 - 1 : 0);
          if ((faces >> e & 1) && on) need[k] = true;
          on_all = on_all && on;
        }
        if ((edges >> d & 1) && on_all) need[k] = true;
      }
      const int st = d == 0 ? 1 : d == 1 ? NQ : NQ * NQ;
      if (need[k]) {
        const T *M = sP + (c >> d & 1) * N1 * N1;
        const int base = (idx[2] * NQ + idx[1]) * NQ + idx[0] - idx[d] * st;
#pragma unroll
        for (int m = 0; m < N1; m++) t[k] += (transpose ? M[m * N1 + idx[d]] : M[idx[d] * N1 + m]) * s[base + m * st];
      }
    }
    __syncthreads();
#pragma unroll
    for (int k = 0; k < N1; k++)
      if (need[k]) s[DIM == 3 ? (k * NQ + j) * NQ + i : k * NQ + i] = t[k];
    __syncthreads();
  }
}

// The work of one block: CPB cells of NQ^(dim-1) threads each (the caller's launch), the parts MASS
// (m u) and GRAD (G grad u) of the stored data (m first, then G's upper triangle: mf_gallery.h), NCOMP
// components per node each with the same data (x and y component-interleaved: DoF node * NCOMP + c).
// NJ components (a divisor of NCOMP) go through the steps together, each with buffers of its own: the
// barriers, the matrix entries read from shared memory and the stored data serve NJ columns at once
// (more registers); groups of NJ follow one another. Shared memory: colbuf_size entries of T.
__host__ __device__ constexpr size_t colbuf_size(int dim, int n1, int nq, int cpb, bool grad, bool hang, int nj = 1)
{
  return (size_t)nq * n1 + nq * nq + (hang ? 2 * n1 * n1 : 0) + 2 * (nq / 2) * (n1 / 2) + 2 * (nq / 2) * (nq / 2) +
         (size_t)cpb * nj * (grad && dim == 3 ? 3 : 2) * (dim == 3 ? nq * nq : nq) * nq;
}

template <int DIM, int N1, int NQ, bool MASS, bool GRAD, bool COLLOC, bool HANG, int NCOMP, int CPB, class T, int NJ = 1>
__device__ __forceinline__ void column_apply(const mf_cuda_apply_args &a, unsigned char *smem_raw)
{
  static_assert(NCOMP % NJ == 0, "components in groups of NJ");
  constexpr int NT = DIM == 3 ? NQ * NQ : NQ;
  constexpr int NQP = NT * NQ, NPC = DIM == 2 ? N1 * N1 : N1 * N1 * N1, NPL1 = DIM == 3 ? N1 * N1 : N1;
  constexpr int NBUF = GRAD && DIM == 3 ? 3 : 2;
  constexpr int NC = (MASS ? 1 : 0) + (GRAD ? DIM * (DIM + 1) / 2 : 0); // stored entries per point
  T *smem = reinterpret_cast<T *>(smem_raw);
  T *sB = smem, *sD = sB + NQ * N1, *sP = sD + NQ * NQ;
  const T *qd = static_cast<const T *>(a.qd), *x = static_cast<const T *>(a.x);
  T *y = static_cast<T *>(a.y);
  const int tid = threadIdx.x;
  const int lc = tid / NT, t = tid - lc * NT;
  const int i = t % NQ, j = DIM == 3 ? t / NQ : 0;
  const int pos = a.cell_begin + blockIdx.x * CPB + lc;
  const bool active = pos < a.cell_end;
  const int cell = !active ? 0 : a.cell_list ? __ldg(&a.cell_list[pos]) : pos;
  constexpr int H = N1 / 2, HQ = NQ / 2, NEO = 2 * HQ * H + 2 * HQ * HQ;
  T *sEB = sP + (HANG ? 2 * N1 * N1 : 0), *sOB = sEB + HQ * H, *sED = sOB + HQ * H, *sOD = sED + HQ * HQ;
  // the buffers A, B, C of component c of the group: sA + c * NQP, sBb + c * NQP, sC + c * NQP
  T *sA = sEB + NEO + (size_t)lc * NBUF * NJ * NQP, *sBb = sA + NJ * NQP, *sC = sBb + NJ * NQP;
  // index of point (i, j, k) in a buffer; the stride of the register direction
  constexpr int KS = DIM == 3 ? NQ * NQ : NQ;
  const int ij = DIM == 3 ? j * NQ + i : i;

  for (int e = tid; e < NQ * N1; e += blockDim.x) sB[e] = (T)a.B[e];
  for (int e = tid; e < NQ * NQ; e += blockDim.x) sD[e] = (T)a.D[e];
  if (HANG)
    for (int e = tid; e < 2 * N1 * N1; e += blockDim.x) sP[e] = (T)a.P[e];
  for (int e = tid; e < HQ * H; e += blockDim.x) { // in double, then rounded
    const int r = e / H, c = e % H;
    sEB[e] = (T)(0.5 * (a.B[r * N1 + c] + a.B[r * N1 + N1 - 1 - c]));
    sOB[e] = (T)(0.5 * (a.B[r * N1 + c] - a.B[r * N1 + N1 - 1 - c]));
  }
  for (int e = tid; e < HQ * HQ; e += blockDim.x) {
    const int r = e / HQ, c = e % HQ;
    sED[e] = (T)(0.5 * (a.D[r * NQ + c] + a.D[r * NQ + NQ - 1 - c]));
    sOD[e] = (T)(0.5 * (a.D[r * NQ + c] - a.D[r * NQ + NQ - 1 - c]));
  }

  // the nodes of the column (i, j, 0..N1-1)
  const bool col = i < N1 && (DIM == 2 || j < N1);
  int node[N1];
#pragma unroll
  for (int k = 0; k < N1; k++)
    node[k] = active && col ? __ldg(&a.cell_nodes[(size_t)cell * NPC + k * NPL1 + (DIM == 3 ? j * N1 + i : i)]) : 0;
  const int mk = (HANG && active) ? a.mask[cell] : 0;
  const bool hang = HANG && __syncthreads_or(mk != 0);

#pragma unroll 1
  for (int c0 = 0; c0 < NCOMP; c0 += NJ) {
    // gather the column's values of the group's components
    T u[NJ][N1];
#pragma unroll
    for (int c = 0; c < NJ; c++)
#pragma unroll
      for (int k = 0; k < N1; k++) {
        const size_t dof = (size_t)node[k] * NCOMP + c0 + c;
        u[c][k] = active && col ? __ldg(&x[dof]) : (T)0;
        if (active && col && a.bc && a.bc[dof]) u[c][k] = 0;
      }

    // hanging nodes: coarse values -> this cell's values (blocks without a masked cell skip it)
    if (hang) {
#pragma unroll
      for (int c = 0; c < NJ; c++) {
        if (col)
#pragma unroll
          for (int k = 0; k < N1; k++) sA[c * NQP + k * KS + ij] = u[c][k];
        __syncthreads();
        hanging<DIM, N1, NQ>(sA + c * NQP, mk, sP, i, j, col, false);
        if (col)
#pragma unroll
          for (int k = 0; k < N1; k++) u[c][k] = sA[c * NQP + k * KS + ij];
      }
    }
    __syncthreads(); // the matrices are staged; the hanging pass and the last group have read A

    // interpolation to the quadrature points
    T uq[NJ][NQ];
    if (COLLOC) {
#pragma unroll
      for (int c = 0; c < NJ; c++)
#pragma unroll
        for (int k = 0; k < NQ; k++) uq[c][k] = u[c][k < N1 ? k : 0];
    } else {
      if (col) { // register direction, into A
#pragma unroll
        for (int c = 0; c < NJ; c++) {
          eo_b<N1, NQ>(sB, sEB, sOB, u[c], uq[c]);
#pragma unroll
          for (int kq = 0; kq < NQ; kq++) sA[c * NQP + kq * KS + ij] = uq[c][kq];
        }
      }
      __syncthreads();
      const T *src = sA;
      if (DIM == 3) { // y: A -> B, threads i < N1, all j
        if (i < N1) {
          T bj[N1];
#pragma unroll
          for (int m = 0; m < N1; m++) bj[m] = sB[j * N1 + m];
#pragma unroll
          for (int kq = 0; kq < NQ; kq++)
#pragma unroll
            for (int c = 0; c < NJ; c++) {
              T s = 0;
#pragma unroll
              for (int m = 0; m < N1; m++) s += bj[m] * sA[c * NQP + kq * KS + m * NQ + i];
              sBb[c * NQP + kq * KS + ij] = s;
            }
        }
        __syncthreads();
        src = sBb;
      }
      T bi[N1];
#pragma unroll
      for (int m = 0; m < N1; m++) bi[m] = sB[i * N1 + m];
#pragma unroll
      for (int kq = 0; kq < NQ; kq++) // x: all threads
#pragma unroll
        for (int c = 0; c < NJ; c++) {
          T s = 0;
#pragma unroll
          for (int m = 0; m < N1; m++) s += bi[m] * src[c * NQP + kq * KS + (ij - i) + m];
          uq[c][kq] = s;
        }
    }

    // pointwise operator with the quadrature data
    const size_t qbase = (size_t)(cell / a.qd_batch) * a.qd_batch_stride + (size_t)(cell % a.qd_batch) * NQP + ij;
    T r[NJ][NQ];
    if (GRAD) {
      __syncthreads(); // every read of A and B above is done
#pragma unroll
      for (int c = 0; c < NJ; c++)
#pragma unroll
        for (int kq = 0; kq < NQ; kq++) sA[c * NQP + kq * KS + ij] = uq[c][kq];
      __syncthreads();
      // the rows of D are read from shared memory at each use: holding them in registers for the whole
      // column spilled more under the register bound (H100: bp3 p = 3..8 1-20% slower, ljungkvist 2-12%)
      T vz[NJ][NQ], gr[NJ][NQ];
#pragma unroll
      for (int c = 0; c < NJ; c++) eo_d<NQ>(sD, sED, sOD, uq[c], gr[c]); // register direction
#pragma unroll
      for (int kq = 0; kq < NQ; kq++) {
        T qv[NC];
#pragma unroll
        for (int e = 0; e < NC; e++)
          qv[e] = active ? __ldg(&qd[qbase + (size_t)kq * KS + (size_t)e * a.qd_block_stride]) : (T)0;
#pragma unroll
        for (int c = 0; c < NJ; c++) {
          T g0 = 0, g1 = 0, g2 = 0;
#pragma unroll
          for (int m = 0; m < NQ; m++) {
            g0 += sD[i * NQ + m] * sA[c * NQP + kq * KS + (ij - i) + m];
            if (DIM == 3) g1 += sD[j * NQ + m] * sA[c * NQP + kq * KS + m * NQ + i];
          }
          (DIM == 3 ? g2 : g1) = gr[c][kq];
          const T g[3] = {g0, g1, g2}; // the pointwise step (lib/physics/mf_gallery.h): m u_q, the rows of G g
          r[c][kq] = 0;
          MF_PW_APPLY_MASS(MASS, qv, 0, uq[c][kq], r[c][kq]);
          sBb[c * NQP + kq * KS + ij] = MF_PW_GRAD_ROW(DIM, MASS, qv, 1, 0, g, 0);
          if (DIM == 3) sC[c * NQP + kq * KS + ij] = MF_PW_GRAD_ROW(DIM, MASS, qv, 1, 0, g, 1);
          vz[c][kq] = MF_PW_GRAD_ROW(DIM, MASS, qv, 1, 0, g, DIM - 1);
        }
      }
      __syncthreads();
#pragma unroll
      for (int c = 0; c < NJ; c++) {
        eo_dt<NQ>(sD, sED, sOD, vz[c], gr[c]); // register direction
#pragma unroll
        for (int kq = 0; kq < NQ; kq++) {
          T s = r[c][kq] + gr[c][kq];
#pragma unroll
          for (int m = 0; m < NQ; m++) {
            s += sD[m * NQ + i] * sBb[c * NQP + kq * KS + (ij - i) + m];
            if (DIM == 3) s += sD[m * NQ + j] * sC[c * NQP + kq * KS + m * NQ + i];
          }
          r[c][kq] = s;
        }
      }
    } else {
#pragma unroll
      for (int kq = 0; kq < NQ; kq++) { // m u_q (lib/physics/mf_gallery.h)
        const T m[1] = {active ? __ldg(&qd[qbase + (size_t)kq * KS]) : (T)0};
#pragma unroll
        for (int c = 0; c < NJ; c++) MF_PW_APPLY_MASS(MASS, m, 0, uq[c][kq], r[c][kq]);
      }
    }

    // integration back to the nodes
    T out[NJ][N1];
    if (COLLOC) {
#pragma unroll
      for (int c = 0; c < NJ; c++)
#pragma unroll
        for (int k = 0; k < N1; k++) out[c][k] = r[c][k];
    } else {
      __syncthreads(); // every read of A, B and C above is done
#pragma unroll
      for (int c = 0; c < NJ; c++)
#pragma unroll
        for (int kq = 0; kq < NQ; kq++) sA[c * NQP + kq * KS + ij] = r[c][kq];
      __syncthreads();
      T w[NJ][NQ];
      T bti[NQ];
#pragma unroll
      for (int m = 0; m < NQ; m++) bti[m] = sB[m * N1 + (i < N1 ? i : 0)];
      if (DIM == 3) { // x^T: A -> B, threads i < N1; then y^T: B -> registers, threads i, j < N1
        if (i < N1) {
#pragma unroll
          for (int kq = 0; kq < NQ; kq++)
#pragma unroll
            for (int c = 0; c < NJ; c++) {
              T s = 0;
#pragma unroll
              for (int m = 0; m < NQ; m++) s += bti[m] * sA[c * NQP + kq * KS + (ij - i) + m];
              sBb[c * NQP + kq * KS + ij] = s;
            }
        }
        __syncthreads();
#pragma unroll
        for (int m = 0; m < NQ; m++) bti[m] = sB[m * N1 + (j < N1 ? j : 0)];
#pragma unroll
        for (int kq = 0; kq < NQ; kq++)
#pragma unroll
          for (int c = 0; c < NJ; c++) {
            T s = 0;
            if (col) {
#pragma unroll
              for (int m = 0; m < NQ; m++) s += bti[m] * sBb[c * NQP + kq * KS + m * NQ + i];
            }
            w[c][kq] = s;
          }
      } else { // x^T: A -> registers
#pragma unroll
        for (int kq = 0; kq < NQ; kq++)
#pragma unroll
          for (int c = 0; c < NJ; c++) {
            T s = 0;
            if (col) {
#pragma unroll
              for (int m = 0; m < NQ; m++) s += bti[m] * sA[c * NQP + kq * KS + m];
            }
            w[c][kq] = s;
          }
      }
#pragma unroll
      for (int c = 0; c < NJ; c++) eo_bt<N1, NQ>(sB, sEB, sOB, w[c], out[c]); // register direction
    }

    // hanging nodes: the transpose
    if (hang) {
#pragma unroll
      for (int c = 0; c < NJ; c++) {
        __syncthreads();
        if (col)
#pragma unroll
          for (int k = 0; k < N1; k++) sA[c * NQP + k * KS + ij] = out[c][k];
        __syncthreads();
        hanging<DIM, N1, NQ>(sA + c * NQP, mk, sP, i, j, col, true);
        if (col)
#pragma unroll
          for (int k = 0; k < N1; k++) out[c][k] = sA[c * NQP + k * KS + ij];
      }
    }

    // scatter-add
    if (active && col) {
#pragma unroll
      for (int c = 0; c < NJ; c++)
#pragma unroll
        for (int k = 0; k < N1; k++) {
          const size_t dof = (size_t)node[k] * NCOMP + c0 + c;
          if (a.atomic) atomicAdd(&y[dof], out[c][k]);
          else y[dof] += out[c][k]; // colored: no other cell of this launch touches node
        }
    }
    if (NCOMP > NJ && hang) __syncthreads(); // the next group's hanging pass writes A before a barrier
  }
}

} // namespace mfc

#endif
