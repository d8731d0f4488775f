// cell_thread.cuh -- the third design of the sum-factorised cell kernel, for the shortest lines: one
// thread per component of a cell, every sweep in registers. Device code only (NVRTC compiles it with
// users' physics: physics_jit.cuh).
//
// At two or three nodes per direction (Q1, Q2) the column design (column_cell.cuh) keeps most of a cell's
// threads idle in the node steps and passes every component through shared memory at each sweep: at bp2
// p = 1 its L1/shared-memory pipe ran at 94.5% while DRAM ran at 15% (perf/results/vcol-ncu-h100-2026-11-26).
// Here a thread holds its cell's nodal values of one
// component (N1^3) and its residual (N1^3) and walks the points plane by plane (z), row by row (y) and
// point by point (x), contracting one direction at each level and accumulating the transpose on the way
// back, so that only a plane's and a row's partial sums are live at once. The threads of a cell's
// components read the same stored entries at the same time (one transaction) and neighbouring entries
// of the DoF vector. No barrier but the one after the 1D matrices are staged; no hanging nodes (cells
// with constraints go to the column design).
//
// Per cell, each of the NCOMP threads: gather u (N1^3) -> for each plane c: tv = B_c u, tz = G_c u ->
// for each row b: sv = B_b tv, sy = G_b tv, sz = B_b tz -> for each point a: u_q = B_a sv, g = (G_a sv,
// B_a sy, B_a sz) -> r = m u_q, v = G g (stored entries) -> the transposes accumulate row, plane and
// cell residuals -> scatter-add. B: the basis at the points (NQ x N1), G = D B: its derivative.
#ifndef MF_CELL_THREAD_CUH
#define MF_CELL_THREAD_CUH

#include "cuda/apply_args.h"
#include "physics/mf_gallery.h"

namespace mfc {

// The shapes this design takes: 3D, two nodes per direction at up to three points, or three nodes at
// up to four.
__host__ __device__ constexpr bool thread_design_fits(int dim, int n1, int nq, bool colloc)
{
  return dim == 3 && ((n1 == 2 && nq <= 3) || (n1 == 3 && nq <= 4)) && (!colloc || nq == n1);
}
// Shared memory of a block: B and G (NQ x N1 each).
__host__ __device__ constexpr size_t thread_buf_size(int n1, int nq) { return (size_t)2 * nq * n1; }

template <class T> struct pair_of;
template <> struct pair_of<double> { typedef double2 type; };
template <> struct pair_of<float> { typedef float2 type; };

// VLOAD (a cell's stored entries contiguous, entry after entry, as the physics' layout, and of an even
// count, so that every cell starts on a pair): a row's stored entries read two points per load where the
// pair is aligned, one where not (at an odd NQ: one single load per row).
template <int N1, int NQ, bool MASS, bool GRAD, bool COLLOC, int NCOMP, class T, bool VLOAD = false>
__device__ __forceinline__ void thread_apply(const mf_cuda_apply_args &a, unsigned char *smem_raw)
{
  static_assert(thread_design_fits(3, N1, NQ, COLLOC), "a shape of the thread design");
  constexpr int N2 = N1 * N1, NPC = N2 * N1, NQP = NQ * NQ * NQ;
  constexpr int NC = (MASS ? 1 : 0) + (GRAD ? 6 : 0); // stored entries per point: m, G's upper triangle
  static_assert(!VLOAD || (NC * NQP) % 2 == 0, "cells start on a pair");
  T *sB = reinterpret_cast<T *>(smem_raw), *sG = sB + NQ * N1;
  for (int e = threadIdx.x; e < NQ * N1; e += blockDim.x) { // in double, then rounded
    const int r = e / N1, c = e % N1;
    double g = 0;
    for (int m = 0; m < NQ; m++) g += a.D[r * NQ + m] * a.B[m * N1 + c];
    sB[e] = (T)a.B[e];
    sG[e] = (T)g;
  }
  __syncthreads();
  const long long gt = (long long)blockIdx.x * blockDim.x + threadIdx.x;
  const int comp = (int)(gt % NCOMP);
  const long long pos = a.cell_begin + gt / NCOMP;
  if (pos >= a.cell_end) return;
  const int cell = a.cell_list ? __ldg(&a.cell_list[pos]) : (int)pos;
  const T *qd = static_cast<const T *>(a.qd), *x = static_cast<const T *>(a.x);
  T *y = static_cast<T *>(a.y);
  const size_t qbase = (size_t)(cell / a.qd_batch) * a.qd_batch_stride + (size_t)(cell % a.qd_batch) * NQP;

  int node[NPC];
  T u[NPC], res[NPC];
#pragma unroll
  for (int n = 0; n < NPC; n++) {
    node[n] = __ldg(&a.cell_nodes[(size_t)cell * NPC + n]);
    const size_t dof = (size_t)node[n] * NCOMP + comp;
    u[n] = __ldg(&x[dof]);
    if (a.bc && a.bc[dof]) u[n] = 0;
    res[n] = 0;
  }

#pragma unroll
  for (int c = 0; c < NQ; c++) { // planes: z contracted
    T tv[N2], tz[N2], rv[N2], rz[N2];
#pragma unroll
    for (int ji = 0; ji < N2; ji++) {
      T sv = 0, sz = 0;
#pragma unroll
      for (int k = 0; k < N1; k++) {
        if (!COLLOC) sv += sB[c * N1 + k] * u[k * N2 + ji];
        if (GRAD) sz += sG[c * N1 + k] * u[k * N2 + ji];
      }
      tv[ji] = COLLOC ? u[c * N2 + ji] : sv;
      tz[ji] = sz;
      rv[ji] = 0;
      rz[ji] = 0;
    }
#pragma unroll
    for (int b = 0; b < NQ; b++) { // rows: y contracted
      T sv[N1], sy[N1], sz[N1], pv[N1], py[N1], pz[N1];
#pragma unroll
      for (int i = 0; i < N1; i++) {
        T s0 = 0, s1 = 0, s2 = 0;
#pragma unroll
        for (int j = 0; j < N1; j++) {
          if (!COLLOC) s0 += sB[b * N1 + j] * tv[j * N1 + i];
          if (GRAD) s1 += sG[b * N1 + j] * tv[j * N1 + i];
          if (GRAD && !COLLOC) s2 += sB[b * N1 + j] * tz[j * N1 + i];
        }
        sv[i] = COLLOC ? tv[b * N1 + i] : s0;
        sy[i] = s1;
        sz[i] = COLLOC ? tz[b * N1 + i] : s2;
        pv[i] = py[i] = pz[i] = 0;
      }
      T qrow[VLOAD ? (NC > 0 ? NC : 1) : 1][VLOAD ? NQ : 1];
      if (VLOAD) {
        typedef typename pair_of<T>::type P2;
#pragma unroll
        for (int e = 0; e < NC; e++) {
          const int o = e * NQP + (c * NQ + b) * NQ; // the row's offset in the cell: its parity is the address's
          const T *rp = &qd[qbase + (size_t)e * a.qd_block_stride + (c * NQ + b) * NQ];
#pragma unroll
          for (int k = 0; k < NQ; k++) {
            if (k > 0 && (o + k) % 2) continue; // the second of a pair
            if ((o + k) % 2 == 0 && k + 1 < NQ) {
              const P2 v2 = __ldg(reinterpret_cast<const P2 *>(rp + k));
              qrow[e][VLOAD ? k : 0] = v2.x;
              qrow[e][VLOAD ? k + 1 : 0] = v2.y;
            } else {
              qrow[e][VLOAD ? k : 0] = __ldg(rp + k);
            }
          }
        }
      }
#pragma unroll
      for (int ap = 0; ap < NQ; ap++) { // points: x contracted
        T uq = 0, g[3] = {0, 0, 0};
#pragma unroll
        for (int i = 0; i < N1; i++) {
          if (!COLLOC) uq += sB[ap * N1 + i] * sv[i];
          if (GRAD) g[0] += sG[ap * N1 + i] * sv[i];
          if (GRAD && !COLLOC) g[1] += sB[ap * N1 + i] * sy[i], g[2] += sB[ap * N1 + i] * sz[i];
        }
        if (COLLOC) uq = sv[ap], g[1] = sy[ap], g[2] = sz[ap];
        const int q = (c * NQ + b) * NQ + ap;
        T qv[NC > 0 ? NC : 1];
#pragma unroll
        for (int e = 0; e < NC; e++) qv[e] = VLOAD ? qrow[e][VLOAD ? ap : 0] : __ldg(&qd[qbase + (size_t)e * a.qd_block_stride + q]);
        T rq = 0, v[3] = {0, 0, 0}; // the pointwise step (lib/physics/mf_gallery.h): m u_q, G g
        MF_PW_APPLY_MASS(MASS, qv, 0, uq, rq);
        MF_PW_APPLY_GRAD(T, 3, MASS, GRAD, qv, 1, 0, g, v);
#pragma unroll
        for (int i = 0; i < N1; i++) {
          if (COLLOC) {
            if (i == ap) pv[i] += rq, py[i] += v[1], pz[i] += v[2];
          } else {
            pv[i] += sB[ap * N1 + i] * rq;
            if (GRAD) py[i] += sB[ap * N1 + i] * v[1], pz[i] += sB[ap * N1 + i] * v[2];
          }
          if (GRAD) pv[i] += sG[ap * N1 + i] * v[0];
        }
      }
#pragma unroll
      for (int j = 0; j < N1; j++)
#pragma unroll
        for (int i = 0; i < N1; i++) {
          if (COLLOC) {
            if (j == b) rv[j * N1 + i] += pv[i], rz[j * N1 + i] += pz[i];
          } else {
            rv[j * N1 + i] += sB[b * N1 + j] * pv[i];
            if (GRAD) rz[j * N1 + i] += sB[b * N1 + j] * pz[i];
          }
          if (GRAD) rv[j * N1 + i] += sG[b * N1 + j] * py[i];
        }
    }
#pragma unroll
    for (int k = 0; k < N1; k++)
#pragma unroll
      for (int ji = 0; ji < N2; ji++) {
        if (COLLOC) {
          if (k == c) res[k * N2 + ji] += rv[ji];
        } else {
          res[k * N2 + ji] += sB[c * N1 + k] * rv[ji];
        }
        if (GRAD) res[k * N2 + ji] += sG[c * N1 + k] * rz[ji];
      }
  }

#pragma unroll
  for (int n = 0; n < NPC; n++) { // scatter-add
    const size_t dof = (size_t)node[n] * NCOMP + comp;
    if (a.atomic) atomicAdd(&y[dof], res[n]);
    else y[dof] += res[n]; // colored: no other cell of this launch touches node
  }
}

} // namespace mfc

#endif
