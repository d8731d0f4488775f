// cell_slab.cuh -- the fourth design of the sum-factorised cell kernel, for 3D cells of two to six nodes
// per direction: a cell's component is held by NQ neighbouring lanes of a warp, lane a owning the slab
// of values at x = a (its N1 x N1 nodes, then its NQ x NQ points). The y and z directions are register
// arithmetic inside a lane; the x direction passes between the lanes of the group by warp shuffles. Device
// code only (NVRTC compiles it with users' physics: physics_jit.cuh); tests/hex_emu runs it on the host.
//
// Why: in the column design (column_cell.cuh) two of the three directions go through shared memory, with
// a load for every multiply-add of those sweeps and barriers between them; in the thread design
// (cell_thread.cuh) a thread holds the whole cell, which spills from three nodes per direction on. Here
// only the x direction moves between lanes (N1 or NQ shuffles per value and sweep), no shared memory, no
// barrier (but with QSTAGE, below: one stage of the stored entries and one barrier per block), and the 1D
// matrices are compile-time constants of the program text (CB, below): the multiply-adds along y and z
// take them as immediate operands, with no load at all.
//
// Per cell component, lane a (a < N1: also node a along x):
//   gather u(a, j, k) -> t = B_x u, tx = G_x u (shuffles from the node lanes; collocated: t = u)
//   for each z point c: pv = B_c t, pz = G_c t, px = B_c tx (over k) ->
//     for each y point b: u_q = B_b pv, g = (B_b px, G_b pv, B_b pz) at point (a, b, c) ->
//       r = m u_q, v = G g (the stored entries, NQ consecutive points per group: one sector) ->
//       rv += B_b r + G_b v_y, rz += B_b v_z, rx += B_b v_x
//     res_t += B_c rv + G_c rz, res_x += B_c rx
//   out(i, j, k) = sum_a B_x(a, i) res_t(a) + G_x(a, i) res_x(a) (shuffles) -> scatter-add (node lanes)
// B: the basis at the points (NQ x N1), G = D B its derivative, D the points' derivative matrix (NQ x NQ).
// XPLANE (the gradient): tx and res_x are not kept; the x derivative is taken plane by plane on the points
// instead, px = D_x pv and rv += D_x^T rx (shuffles between the point lanes; G = D B): N1 x NQ more
// shuffles per plane and direction where the points are not the nodes (as many as without it where they
// are), 2 N1^2 fewer live values.
//
// CB supplies the matrices: static functions b(i), g(i), d(i) of B, G and D row-major, constant when the
// text defines them (physics.cu: the arrays mf_cb_*), so that constant indices fold to immediates.
#ifndef MF_CELL_SLAB_CUH
#define MF_CELL_SLAB_CUH

#include "cuda/apply_args.h"
#include "physics/mf_gallery.h"

namespace mfc {

// The shapes this design takes: 3D, 2..6 nodes per direction, at most 7 points (a group within a warp; a
// lane holds 2 N1^2 values of the cell's component, which at 6 nodes fill the 255 registers of a thread).
__host__ __device__ constexpr bool slab_design_fits(int dim, int n1, int nq, bool colloc)
{
  return dim == 3 && n1 >= 2 && n1 <= 6 && nq >= n1 && nq <= 7 && (!colloc || nq == n1);
}
// groups (cell components) per warp: NQ lanes each, the last 32 mod NQ lanes idle
__host__ __device__ constexpr int slab_groups_per_warp(int nq) { return 32 / nq; }
// blocks of tpb threads (a multiple of 32) for ngroups cell components
__host__ __device__ constexpr long long slab_blocks(long long ngroups, int nq, int tpb)
{
  return (ngroups + (long long)slab_groups_per_warp(nq) * (tpb / 32) - 1) / ((long long)slab_groups_per_warp(nq) * (tpb / 32));
}
// stored entries per point of the slab design's forms: m, G's upper triangle
__host__ __device__ constexpr int slab_entries(bool mass, bool grad) { return (mass ? 1 : 0) + (grad ? 6 : 0); }
// QSTAGE: the cells a block of tpb threads touches (its groups' cells, the first and last maybe shared with
// the blocks beside) and the values of its stage of stored entries (nc entries per point, nq^3 points)
__host__ __device__ constexpr int slab_stage_cells(int nq, int ncomp, int tpb)
{
  return (slab_groups_per_warp(nq) * (tpb / 32) + ncomp - 1) / ncomp + 1;
}
__host__ __device__ constexpr size_t slab_stage_size(int nq, int ncomp, int tpb, int nc)
{
  return (size_t)slab_stage_cells(nq, ncomp, tpb) * nc * nq * nq * nq;
}

// where a cell's stored entries start (entry e of point q at + e * a.qd_block_stride + q)
__device__ __forceinline__ size_t slab_qbase(const mf_cuda_apply_args &a, int cell, int nqp)
{
  return (size_t)(cell / a.qd_batch) * a.qd_batch_stride + (size_t)(cell % a.qd_batch) * nqp;
}

// An asynchronous copy of one value from global to shared memory (cp.async, sm_80 on), completed by
// slab_copy_wait; elsewhere (the host's emulation) a plain copy.
template <class T> __device__ __forceinline__ void slab_copy_async(T *dst, const T *src)
{
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  const unsigned d = (unsigned)__cvta_generic_to_shared(dst);
  if (sizeof(T) == 8) asm volatile("cp.async.ca.shared.global [%0], [%1], 8;\n" ::"r"(d), "l"(src));
  else asm volatile("cp.async.ca.shared.global [%0], [%1], 4;\n" ::"r"(d), "l"(src));
#else
  *dst = *src;
#endif
}
__device__ __forceinline__ void slab_copy_wait()
{
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  asm volatile("cp.async.commit_group;\ncp.async.wait_group 0;\n" ::: "memory");
#endif
}

// QSTAGE: the stored entries of the block's cells are copied into shared memory (smem: slab_stage_size
// values of T) at the start, asynchronously while the lanes gather their values and take the x direction,
// and read from there at the points: one wait for them per cell instead of one per plane of points (the
// loads of a plane's entries waited on global memory for most of the time: H100, bp6 p = 3, ncu's long
// scoreboard stalls 9.5 of 13.3 cycles per instruction).
template <int N1, int NQ, bool MASS, bool GRAD, bool COLLOC, int NCOMP, class T, class CB, bool XPLANE = false,
          bool QSTAGE = false>
__device__ __forceinline__ void slab_apply(const mf_cuda_apply_args &a, unsigned char *smem = nullptr)
{
  static_assert(slab_design_fits(3, N1, NQ, COLLOC), "a shape of the slab design");
  constexpr int N2 = N1 * N1, NPC = N2 * N1, NQP = NQ * NQ * NQ, GPW = slab_groups_per_warp(NQ);
  constexpr int NC = slab_entries(MASS, GRAD); // stored entries per point
  constexpr unsigned FULL = 0xffffffffu;
  constexpr bool TX = GRAD && !XPLANE; // tx and res_x kept
  const int lane = (int)(threadIdx.x & 31), gw = lane / NQ, ap = lane - gw * NQ, gbase = gw * NQ;
  const long long grp = ((long long)blockIdx.x * (blockDim.x >> 5) + (threadIdx.x >> 5)) * GPW + gw;
  const int comp = (int)(grp % NCOMP);
  const long long pos = a.cell_begin + grp / NCOMP;
  // every lane takes part in the shuffles; lanes of no cell (past the last group or the last cell) read
  // cell 0's entries and write nothing
  const bool active = gw < GPW && pos < a.cell_end;
  const int cell = !active ? 0 : a.cell_list ? __ldg(&a.cell_list[pos]) : (int)pos;
  const bool nlane = active && ap < N1; // the lane of node ap along x
  const T *qd = static_cast<const T *>(a.qd), *x = static_cast<const T *>(a.x);
  T *y = static_cast<T *>(a.y);
  const size_t qbase = slab_qbase(a, cell, NQP);
  const int *cn = a.cell_nodes + (size_t)cell * NPC + (ap < N1 ? ap : 0);
  // QSTAGE: the block's cells [c0, c1) (positions in the order) into sq, cell by cell, entry by entry
  T *sq = reinterpret_cast<T *>(smem);
  const T *qsrc = qd + qbase; // the group's entries: in global memory, or in the stage
  if (QSTAGE) {
    const long long g0 = (long long)blockIdx.x * (blockDim.x >> 5) * GPW;
    const long long c0 = a.cell_begin + g0 / NCOMP;
    long long c1 = a.cell_begin + (g0 + (long long)(blockDim.x >> 5) * GPW - 1) / NCOMP + 1;
    c1 = c1 < a.cell_end ? c1 : a.cell_end;
    const int n = c0 < c1 ? (int)(c1 - c0) * NC * NQP : 0;
    for (int k = threadIdx.x; k < n; k += blockDim.x) {
      const int l = k / (NC * NQP), r = k - l * (NC * NQP), e = r / NQP, q = r - e * NQP;
      const int ck = a.cell_list ? __ldg(&a.cell_list[c0 + l]) : (int)(c0 + l);
      slab_copy_async(sq + k, qd + slab_qbase(a, ck, NQP) + (size_t)e * a.qd_block_stride + q);
    }
    qsrc = sq + (active ? (size_t)(pos - c0) * NC * NQP : 0);
  }
  const size_t qstride = QSTAGE ? NQP : a.qd_block_stride;

  T t[N2], tx[TX ? N2 : 1];
  {
    T u[N2];
#pragma unroll
    for (int kj = 0; kj < N2; kj++) {
      const int n = nlane ? __ldg(&cn[kj * N1]) : 0;
      const size_t dof = (size_t)n * NCOMP + comp;
      u[kj] = nlane ? __ldg(&x[dof]) : (T)0;
      if (nlane && a.bc && a.bc[dof]) u[kj] = 0;
    }
    // x: from the node lanes to point a (lane-dependent rows of B and G, read once)
    T bx[N1], gx[N1];
#pragma unroll
    for (int m = 0; m < N1; m++) {
      bx[m] = (T)CB::b(ap * N1 + m);
      gx[m] = (T)CB::g(ap * N1 + m);
    }
#pragma unroll
    for (int kj = 0; kj < N2; kj++) {
      T s = 0, sx = 0;
#pragma unroll
      for (int m = 0; m < N1; m++) {
        const T um = __shfl_sync(FULL, u[kj], gbase + m);
        if (!COLLOC) s += bx[m] * um;
        if (TX) sx += gx[m] * um;
      }
      t[kj] = COLLOC ? u[kj] : s;
      if (TX) tx[kj] = sx;
    }
  }

  if (QSTAGE) { // the block's stage is complete
    slab_copy_wait();
    __syncthreads();
  }
  T res_t[N2], res_x[TX ? N2 : 1];
#pragma unroll
  for (int kj = 0; kj < N2; kj++) {
    res_t[kj] = 0;
    if (TX) res_x[kj] = 0;
  }
  T dx[XPLANE ? NQ : 1], dt[XPLANE ? NQ : 1]; // row a and column a of D (XPLANE)
#pragma unroll
  for (int m = 0; m < (XPLANE ? NQ : 0); m++) {
    dx[m] = (T)CB::d(ap * NQ + m);
    dt[m] = (T)CB::d(m * NQ + ap);
  }
#pragma unroll
  for (int c = 0; c < NQ; c++) { // z points
    T pv[N1], pz[N1], px[N1], rv[N1], rz[N1], rx[N1];
#pragma unroll
    for (int j = 0; j < N1; j++) {
      T s = 0, sz = 0, sx = 0;
#pragma unroll
      for (int k = 0; k < N1; k++) {
        if (!COLLOC) s += (T)CB::b(c * N1 + k) * t[k * N1 + j];
        if (GRAD) sz += (T)CB::g(c * N1 + k) * t[k * N1 + j];
        if (TX && !COLLOC) sx += (T)CB::b(c * N1 + k) * tx[k * N1 + j];
      }
      pv[j] = COLLOC ? t[c * N1 + j] : s;
      pz[j] = sz;
      px[j] = TX ? (COLLOC ? tx[c * N1 + j] : sx) : (T)0;
      rv[j] = rz[j] = rx[j] = 0;
    }
    if (XPLANE) // px = D_x pv, from the point lanes
#pragma unroll
      for (int j = 0; j < N1; j++)
#pragma unroll
        for (int m = 0; m < NQ; m++) px[j] += dx[m] * __shfl_sync(FULL, pv[j], gbase + m);
#pragma unroll
    for (int b = 0; b < NQ; b++) { // y points
      T uq = 0, g[3] = {0, 0, 0};
#pragma unroll
      for (int j = 0; j < N1; j++) {
        if (!COLLOC) uq += (T)CB::b(b * N1 + j) * pv[j];
        if (GRAD) g[1] += (T)CB::g(b * N1 + j) * pv[j];
        if (GRAD && !COLLOC) g[0] += (T)CB::b(b * N1 + j) * px[j], g[2] += (T)CB::b(b * N1 + j) * pz[j];
      }
      if (COLLOC) uq = pv[b], g[0] = px[b], g[2] = pz[b];
      const int q = (c * NQ + b) * NQ + ap;
      T qv[NC > 0 ? NC : 1];
#pragma unroll
      for (int e = 0; e < NC; e++) qv[e] = QSTAGE ? qsrc[(size_t)e * qstride + q] : __ldg(&qsrc[(size_t)e * qstride + q]);
      T rq = 0, v[3] = {0, 0, 0}; // the pointwise step (lib/physics/mf_gallery.h): m u_q, G g
      MF_PW_APPLY_MASS(MASS, qv, 0, uq, rq);
      MF_PW_APPLY_GRAD(T, 3, MASS, GRAD, qv, 1, 0, g, v);
#pragma unroll
      for (int j = 0; j < N1; j++) {
        if (COLLOC) {
          if (j == b) rv[j] += rq, rz[j] += v[2], rx[j] += v[0];
        } else {
          rv[j] += (T)CB::b(b * N1 + j) * rq;
          if (GRAD) rz[j] += (T)CB::b(b * N1 + j) * v[2], rx[j] += (T)CB::b(b * N1 + j) * v[0];
        }
        if (GRAD) rv[j] += (T)CB::g(b * N1 + j) * v[1];
      }
    }
    if (XPLANE) // rv += D_x^T rx, from the point lanes
#pragma unroll
      for (int j = 0; j < N1; j++)
#pragma unroll
        for (int m = 0; m < NQ; m++) rv[j] += dt[m] * __shfl_sync(FULL, rx[j], gbase + m);
#pragma unroll
    for (int k = 0; k < N1; k++)
#pragma unroll
      for (int j = 0; j < N1; j++) {
        if (COLLOC) {
          if (k == c) {
            res_t[k * N1 + j] += rv[j];
            if (TX) res_x[k * N1 + j] += rx[j];
          }
        } else {
          res_t[k * N1 + j] += (T)CB::b(c * N1 + k) * rv[j];
          if (TX) res_x[k * N1 + j] += (T)CB::b(c * N1 + k) * rx[j];
        }
        if (GRAD) res_t[k * N1 + j] += (T)CB::g(c * N1 + k) * rz[j];
      }
  }

  // x: back from the points to node i = ap (lanes ap >= N1 compute for node 0 and write nothing)
  T bt[NQ], gt[NQ];
  const int i = ap < N1 ? ap : 0;
#pragma unroll
  for (int m = 0; m < NQ; m++) {
    bt[m] = (T)CB::b(m * N1 + i);
    gt[m] = (T)CB::g(m * N1 + i);
  }
#pragma unroll
  for (int kj = 0; kj < N2; kj++) {
    T s = COLLOC ? res_t[kj] : (T)0;
#pragma unroll
    for (int m = 0; m < NQ; m++) {
      if (!COLLOC) s += bt[m] * __shfl_sync(FULL, res_t[kj], gbase + m);
      if (TX) s += gt[m] * __shfl_sync(FULL, res_x[kj], gbase + m);
    }
    if (nlane) { // scatter-add (the node read again: held from the gather it would cost N1^2 registers)
      const size_t dof = (size_t)__ldg(&cn[kj * N1]) * NCOMP + comp;
      if (a.atomic) atomicAdd(&y[dof], s);
      else y[dof] += s; // colored: no other cell of this launch touches the node
    }
  }
}

} // namespace mfc

#endif
