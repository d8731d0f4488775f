// apply_column.cuh -- the second design of the sum-factorised cell kernel: one thread per column of
// a cell, the values along the last direction (z in 3D, y in 2D) held in registers.
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
#ifndef MF_APPLY_COLUMN_CUH
#define MF_APPLY_COLUMN_CUH

#include "mf_cuda_apply.h"
#include "hanging/mf_hanging.h"
#include "physics/mf_gallery.h"

namespace mfc {

// Threads of one cell, and cells per block: blocks of about 256 threads. minb: the blocks per SM the
// register budget of the gradient kernels must allow (0: no cap).
#ifndef MF_COL_MIN_BLOCKS
#define MF_COL_MIN_BLOCKS 0
#endif
template <int DIM, int NQ, int OP>
struct shape {
  static constexpr int nt = DIM == 3 ? NQ * NQ : NQ;
  static constexpr int cpb = 256 / nt > 0 ? 256 / nt : 1;
  static constexpr int threads = cpb * nt;
  static constexpr int minb = OP == 0 ? 0 : MF_COL_MIN_BLOCKS; // 0: as if not given
};

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

template <int DIM, int N1, int NQ, int OP, bool COLLOC, bool HANG, class T>
__global__ void __launch_bounds__(shape<DIM, NQ, OP>::threads, shape<DIM, NQ, OP>::minb) apply(const mf_cuda_apply_args a)
{
  constexpr int NT = shape<DIM, NQ, OP>::nt, CPB = shape<DIM, NQ, OP>::cpb;
  constexpr int NQP = NT * NQ, NPC = DIM == 2 ? N1 * N1 : N1 * N1 * N1, NPL1 = DIM == 3 ? N1 * N1 : N1;
  constexpr bool MASS = mf_pw_has(OP, MF_PW_VALUE), GRAD = mf_pw_has(OP, MF_PW_GRAD); // the gallery's entry OP
  constexpr int NBUF = GRAD && DIM == 3 ? 3 : 2;
  constexpr int NC = mf_pw_nstored(OP, DIM);
  extern __shared__ __align__(16) unsigned char smem_raw[];
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
  T *sA = sEB + NEO + (size_t)lc * NBUF * NQP, *sBb = sA + NQP, *sC = sBb + NQP;
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

  // gather the column (i, j, 0..N1-1)
  const bool col = i < N1 && (DIM == 2 || j < N1);
  int node[N1];
  T u[N1];
#pragma unroll
  for (int k = 0; k < N1; k++) {
    node[k] = 0;
    u[k] = 0;
    if (active && col) {
      node[k] = __ldg(&a.cell_nodes[(size_t)cell * NPC + k * NPL1 + (DIM == 3 ? j * N1 + i : i)]);
      u[k] = __ldg(&x[node[k]]);
      if (a.bc && a.bc[node[k]]) u[k] = 0;
    }
  }

  // hanging nodes: coarse values -> this cell's values (blocks without a masked cell skip it)
  const int mk = (HANG && active) ? a.mask[cell] : 0;
  const bool hang = HANG && __syncthreads_or(mk != 0);
  if (hang) {
    if (col)
#pragma unroll
      for (int k = 0; k < N1; k++) sA[k * KS + ij] = u[k];
    __syncthreads();
    hanging<DIM, N1, NQ>(sA, mk, sP, i, j, col, false);
    if (col)
#pragma unroll
      for (int k = 0; k < N1; k++) u[k] = sA[k * KS + ij];
  }
  __syncthreads(); // the matrices are staged; the hanging pass has read sA

  // interpolation to the quadrature points
  T uq[NQ];
  if (COLLOC) {
#pragma unroll
    for (int k = 0; k < NQ; k++) uq[k] = u[k < N1 ? k : 0];
  } else {
    if (col) { // register direction, into A
      eo_b<N1, NQ>(sB, sEB, sOB, u, uq);
#pragma unroll
      for (int kq = 0; kq < NQ; kq++) sA[kq * KS + ij] = uq[kq];
    }
    __syncthreads();
    const T *src = sA;
    if (DIM == 3) { // y: A -> B, threads i < N1, all j
      if (i < N1) {
        T bj[N1];
#pragma unroll
        for (int m = 0; m < N1; m++) bj[m] = sB[j * N1 + m];
#pragma unroll
        for (int kq = 0; kq < NQ; kq++) {
          T s = 0;
#pragma unroll
          for (int m = 0; m < N1; m++) s += bj[m] * sA[kq * KS + m * NQ + i];
          sBb[kq * KS + ij] = s;
        }
      }
      __syncthreads();
      src = sBb;
    }
    T bi[N1];
#pragma unroll
    for (int m = 0; m < N1; m++) bi[m] = sB[i * N1 + m];
#pragma unroll
    for (int kq = 0; kq < NQ; kq++) { // x: all threads
      T s = 0;
#pragma unroll
      for (int m = 0; m < N1; m++) s += bi[m] * src[kq * KS + (ij - i) + m];
      uq[kq] = s;
    }
  }

  // pointwise operator with the quadrature data
  const size_t qbase = (size_t)(cell / a.qd_batch) * a.qd_batch_stride + (size_t)(cell % a.qd_batch) * NQP + ij;
  T r[NQ];
  if (GRAD) {
    __syncthreads(); // every read of A and B above is done
#pragma unroll
    for (int kq = 0; kq < NQ; kq++) sA[kq * KS + ij] = uq[kq];
    __syncthreads();
    // the rows of D are read from shared memory at each use: holding them in registers for the whole
    // column spilled more under the register bound (H100: bp3 p = 3..8 1-20% slower, ljungkvist 2-12%)
    T vz[NQ], gr[NQ];
    eo_d<NQ>(sD, sED, sOD, uq, gr); // register direction
#pragma unroll
    for (int kq = 0; kq < NQ; kq++) {
      T g0 = 0, g1 = 0, g2 = 0;
#pragma unroll
      for (int m = 0; m < NQ; m++) {
        g0 += sD[i * NQ + m] * sA[kq * KS + (ij - i) + m];
        if (DIM == 3) g1 += sD[j * NQ + m] * sA[kq * KS + m * NQ + i];
      }
      (DIM == 3 ? g2 : g1) = gr[kq];
      T qv[NC];
#pragma unroll
      for (int c = 0; c < NC; c++)
        qv[c] = active ? __ldg(&qd[qbase + (size_t)kq * KS + (size_t)c * a.qd_block_stride]) : (T)0;
      const T g[3] = {g0, g1, g2}; // the pointwise step (lib/physics/mf_gallery.h): m u_q, the rows of G g
      r[kq] = 0;
      MF_PW_APPLY_MASS(MASS, qv, 0, uq[kq], r[kq]);
      sBb[kq * KS + ij] = MF_PW_GRAD_ROW(DIM, MASS, qv, 1, 0, g, 0);
      if (DIM == 3) sC[kq * KS + ij] = MF_PW_GRAD_ROW(DIM, MASS, qv, 1, 0, g, 1);
      vz[kq] = MF_PW_GRAD_ROW(DIM, MASS, qv, 1, 0, g, DIM - 1);
    }
    __syncthreads();
    eo_dt<NQ>(sD, sED, sOD, vz, gr); // register direction
#pragma unroll
    for (int kq = 0; kq < NQ; kq++) {
      T s = r[kq] + gr[kq];
#pragma unroll
      for (int m = 0; m < NQ; m++) {
        s += sD[m * NQ + i] * sBb[kq * KS + (ij - i) + m];
        if (DIM == 3) s += sD[m * NQ + j] * sC[kq * KS + m * NQ + i];
      }
      r[kq] = s;
    }
  } else {
#pragma unroll
    for (int kq = 0; kq < NQ; kq++) { // m u_q (lib/physics/mf_gallery.h)
      const T m[1] = {active ? __ldg(&qd[qbase + (size_t)kq * KS]) : (T)0};
      MF_PW_APPLY_MASS(MASS, m, 0, uq[kq], r[kq]);
    }
  }

  // integration back to the nodes
  T out[N1];
  if (COLLOC) {
#pragma unroll
    for (int k = 0; k < N1; k++) out[k] = r[k];
  } else {
    __syncthreads(); // every read of A, B and C above is done
#pragma unroll
    for (int kq = 0; kq < NQ; kq++) sA[kq * KS + ij] = r[kq];
    __syncthreads();
    T w[NQ];
    T bti[NQ];
#pragma unroll
    for (int m = 0; m < NQ; m++) bti[m] = sB[m * N1 + (i < N1 ? i : 0)];
    if (DIM == 3) { // x^T: A -> B, threads i < N1; then y^T: B -> registers, threads i, j < N1
      if (i < N1) {
#pragma unroll
        for (int kq = 0; kq < NQ; kq++) {
          T s = 0;
#pragma unroll
          for (int m = 0; m < NQ; m++) s += bti[m] * sA[kq * KS + (ij - i) + m];
          sBb[kq * KS + ij] = s;
        }
      }
      __syncthreads();
#pragma unroll
      for (int m = 0; m < NQ; m++) bti[m] = sB[m * N1 + (j < N1 ? j : 0)];
#pragma unroll
      for (int kq = 0; kq < NQ; kq++) {
        T s = 0;
        if (col) {
#pragma unroll
          for (int m = 0; m < NQ; m++) s += bti[m] * sBb[kq * KS + m * NQ + i];
        }
        w[kq] = s;
      }
    } else { // x^T: A -> registers
#pragma unroll
      for (int kq = 0; kq < NQ; kq++) {
        T s = 0;
        if (col) {
#pragma unroll
          for (int m = 0; m < NQ; m++) s += bti[m] * sA[kq * KS + m];
        }
        w[kq] = s;
      }
    }
    eo_bt<N1, NQ>(sB, sEB, sOB, w, out); // register direction
  }

  // hanging nodes: the transpose
  if (hang) {
    __syncthreads();
    if (col)
#pragma unroll
      for (int k = 0; k < N1; k++) sA[k * KS + ij] = out[k];
    __syncthreads();
    hanging<DIM, N1, NQ>(sA, mk, sP, i, j, col, true);
    if (col)
#pragma unroll
      for (int k = 0; k < N1; k++) out[k] = sA[k * KS + ij];
  }

  // scatter-add
  if (active && col) {
#pragma unroll
    for (int k = 0; k < N1; k++) {
      if (a.atomic) atomicAdd(&y[node[k]], out[k]);
      else y[node[k]] += out[k]; // colored: no other cell of this launch touches node
    }
  }
}

template <int DIM, int N1, int NQ, int OP, bool COLLOC, bool HANG, class T>
cudaError_t launch(const mf_cuda_apply_args *a)
{
  constexpr int NT = shape<DIM, NQ, OP>::nt, CPB = shape<DIM, NQ, OP>::cpb;
  constexpr int NBUF = OP != 0 && DIM == 3 ? 3 : 2;
  const int ncells = a->cell_end - a->cell_begin;
  if (ncells <= 0) return cudaSuccess;
  constexpr int NEO = 2 * (NQ / 2) * (N1 / 2) + 2 * (NQ / 2) * (NQ / 2);
  const size_t shmem =
      sizeof(T) * ((size_t)NQ * N1 + NQ * NQ + (HANG ? 2 * N1 * N1 : 0) + NEO + (size_t)CPB * NBUF * NT * NQ);
  if (shmem > 48 * 1024) {
    cudaError_t e = cudaFuncSetAttribute(apply<DIM, N1, NQ, OP, COLLOC, HANG, T>,
                                         cudaFuncAttributeMaxDynamicSharedMemorySize, (int)shmem);
    if (e != cudaSuccess) return e;
  }
  const int blocks = (ncells + CPB - 1) / CPB;
  apply<DIM, N1, NQ, OP, COLLOC, HANG, T><<<blocks, CPB * NT, shmem>>>(*a);
  return mf_cuda_launch_status();
}

MF_CUDA_APPLY_LOOKUP(launch)

} // namespace mfc

#endif
