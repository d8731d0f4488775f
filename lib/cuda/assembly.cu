// assembly.cu -- assembled operators on the device: the space's sparsity copied there once, and the
// values computed there by one of three variants (lib/assembled/assembly_impl.h; their CPU twins are in
// lib/assembled/assembly_variants.c and use the same element entries, lib/assembled/mf_element.h):
//   search   a block stages the quadrature data of a few cells without hanging nodes in shared memory;
//            where the column-wise form applies (mf_element_fast: 2D p <= 3, 3D p <= 2, every rule)
//            each thread computes one column (cell, j) of the element matrix (k_asm_fast, instantiated
//            on (dim, n1, nq)), else one entry (cell, i, j) (k_asm_block), and atomically adds it at
//            the positions found by binary search in the rows;
//   table    the same with the positions read from a table (int32 where the local nnz < 2^31, else
//            int64; after Trotter, Langguth and Cai 2023) made by the first table assembly on the
//            space and kept beside its device sparsity for the next ones (freed with the space);
//   rowwise  a thread per local DoF r sums row i of the element matrices of the cells that hold r at
//            position i (lists made on the host and copied) into its own row, without atomics (after
//            Cecka, Lew and Darve 2011); column-wise where it applies (k_asm_rows_fast: row i made as
//            column i, the matrices being symmetric), else entry by entry (k_asm_rows).
// Cells with hanging nodes: a block per cell applies the cell operator with constraints to every unit
// vector (C^T A_e C column by column, as k_diag_hanging in operator.cu) and atomically adds the entries
// at searched positions, for every variant. The values stay on the device; every allocation is checked
// first against the free device memory (mf_cuda_require); the call returns when the values are done.
#include "cell_generic.cuh"
#include "assembled/assembly_impl.h"

#include <stdio.h>

// Threads per block of the search, table and rowwise kernels. They carry no __launch_bounds__: with
// one, ptxas held them to 64 registers and spilled; without, they take about 70, and 256 threads of
// up to 255 registers always fit a block.
#define MF_ASM_THREADS 256

// Blocks of a grid-stride loop over n items (at least 1; capped, the loop covers the rest).
static unsigned int grid_for(long long n)
{
  long long b = (n + MF_ASM_THREADS - 1) / MF_ASM_THREADS;
  if (b < 1) b = 1;
  if (b > (1LL << 20)) b = 1LL << 20;
  return (unsigned int)b;
}

struct asm_args {
  mf_element_shape sh;
  int batch;
  long long batch_stride;
  const double *qd;
  const double *BG; // B then G (phi'), nq x n1 each
  const int *cell_nodes;
  const int *cells; // the cells without hanging nodes; NULL: cells 0 .. nfree-1
  int nfree;
  const int64_t *rowptr;
  const int *colidx;
  double *vals;
};

// B and G of the element entries into shared memory (all threads; synchronises).
__device__ inline void stage_tables(const asm_args &a, double *sBG)
{
  const int n = 2 * a.sh.nq * a.sh.n1;
  for (int t = threadIdx.x; t < n; t += blockDim.x) sBG[t] = a.BG[t];
  __syncthreads();
}

// Search (MODE 0) and table (MODE 1: int32 positions, 2: int64) variants on the cells without hanging
// nodes: work item w is cell k of the list (all rows) or (k, row i).
// The search and table kernels: a block takes cpb cells at a time, stages their quadrature data in
// shared memory (coalesced: a cell's points are contiguous in each component), and its threads take
// the cells' entries (cell, i, j), each computing one entry from shared memory and adding it at its
// position (MODE 0: binary search, 1 and 2: the table of 4- or 8-byte positions). The first form, one
// thread per cell (or per row) reading the quadrature data from global memory for every entry, took
// 8.3-9.6 s for the 3.3 x 10^7-DoF Q1 bp3 matrix on the H100; this one reads them once per cell.
template <int MODE>
__global__ void __launch_bounds__(MF_ASM_THREADS) k_asm_block(const asm_args a, const void *table, int cpb, int ncomp)
{
  extern __shared__ double sm[];
  const mf_element_shape sh = a.sh;
  const int npc = sh.npc, nqp = sh.nqp, nt = 2 * sh.nq * sh.n1;
  double *sB = sm, *sG = sm + sh.nq * sh.n1, *sq = sm + nt;
  for (int t = threadIdx.x; t < nt; t += blockDim.x) sm[t] = a.BG[t];
  mf_element_shape shs = sh;
  shs.block_stride = (size_t)nqp; /* the staged layout: component c of point q at c * nqp + q */
  const long long per = (long long)npc * npc, cdata = (long long)ncomp * nqp;
  for (long long k0 = (long long)blockIdx.x * cpb; k0 < a.nfree; k0 += (long long)gridDim.x * cpb) {
    const int nc = a.nfree - k0 < cpb ? (int)(a.nfree - k0) : cpb;
    __syncthreads(); /* the previous group's entries are done with sq */
    for (long long t = threadIdx.x; t < nc * cdata; t += blockDim.x) {
      const long long c = t / cdata, r = t % cdata;
      const int comp = (int)(r / nqp), q = (int)(r % nqp);
      const int cell = a.cells ? a.cells[k0 + c] : (int)(k0 + c);
      sq[t] = a.qd[mf_element_qd_base(cell, a.batch, (size_t)a.batch_stride, nqp) + (size_t)comp * sh.block_stride + q];
    }
    __syncthreads();
    for (long long e = threadIdx.x; e < nc * per; e += blockDim.x) {
      const long long c = e / per, r = e % per;
      const int i = (int)(r / npc), j = (int)(r % npc);
      const long long k = k0 + c;
      const int cell = a.cells ? a.cells[k] : (int)k;
      const int *nodes = a.cell_nodes + (size_t)cell * npc;
      const double v = mf_element_entry(&shs, sq + c * cdata, sB, sG, i, j);
      const size_t t = (size_t)k * (size_t)per + (size_t)r;
      int64_t pos;
      if (MODE == 1) pos = ((const int32_t *)table)[t];
      else if (MODE == 2) pos = ((const int64_t *)table)[t];
      else pos = mf_csr_find(a.rowptr, a.colidx, nodes[i], nodes[j]);
      atomicAdd(&a.vals[pos], v);
    }
  }
}

template <int MODE> static int launch_block(mf_context ctx, const asm_args &a, const void *table, const char *what)
{
  const long long per = (long long)a.sh.npc * a.sh.npc;
  const int ncomp = (a.sh.has_mass ? 1 : 0) + (a.sh.has_grad ? (a.sh.dim == 2 ? 3 : 6) : 0);
  int cpb = per >= MF_ASM_THREADS ? 1 : (int)(MF_ASM_THREADS / per);
  const size_t shmem = sizeof(double) * (2 * (size_t)a.sh.nq * a.sh.n1 + (size_t)cpb * ncomp * a.sh.nqp);
  if (shmem > 48 * 1024)
    MF_CUDA_CALL(ctx, cudaFuncSetAttribute(k_asm_block<MODE>, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)shmem));
  long long groups = (a.nfree + cpb - 1) / cpb;
  if (groups > (1LL << 20)) groups = 1LL << 20;
  k_asm_block<MODE><<<(unsigned int)(groups < 1 ? 1 : groups), MF_ASM_THREADS, shmem>>>(a, table, cpb, ncomp);
  MF_CUDA_LAUNCH_CHECK(ctx, what);
  return 0;
}

// The column-wise kernel (cells without hanging nodes, the (dim, n1, nq) of mf_element_fast): a thread
// per (cell, column j). A block holds CPB = 256 / npc cells (npc threads each); it stages the point
// table (mf_element_point_table, 4 nqp npc doubles: every thread of a warp reads the same row i at the
// same point, a broadcast) once, then takes groups of CPB cells, stages their quadrature data in shared
// memory coalesced (a cell's points are contiguous in each component), and each thread computes its
// column with mf_element_column (the CPU twin's function; here npc, nqp and dim are constants, the
// loop over the rows unrolls and the column stays in registers) and adds entry (i, j) for every i at
// its position (MODE 0: binary search, 1 and 2: the table of 4- or 8-byte positions, laid out
// (cell, i, j) so that the threads of a cell read consecutive positions). 32-bit index arithmetic with
// compile-time divisors only.
template <int DIM, int N1, int NQ> struct fast_shape {
  static constexpr int npc = DIM == 2 ? N1 * N1 : N1 * N1 * N1;
  static constexpr int nqp = DIM == 2 ? NQ * NQ : NQ * NQ * NQ;
  static constexpr int cpb = MF_ASM_THREADS / npc;
  static constexpr int ntab = 4 * nqp * npc;
};

// The staged quadrature data of a cell take an odd number of doubles, so that the cells of a warp read
// their points from different shared-memory banks.
__host__ __device__ constexpr int fast_cell_stride(int ncomp, int nqp) { return ncomp * nqp | 1; }

// Q1 3D: at most 40 registers (6 blocks of 256 threads per SM, 75% occupancy) where ptxas took 56 and
// ncu found half the warps resident, stalled on the loads and atomics (52% of their cycles).
template <int DIM, int N1, int NQ, int MODE>
__global__ void __launch_bounds__(MF_ASM_THREADS, (DIM == 3 && N1 == 2) ? 6 : 1) k_asm_fast(const asm_args a, const double *T, const void *table, int ncomp)
{
  typedef fast_shape<DIM, N1, NQ> F;
  constexpr int NPC = F::npc, NQP = F::nqp, CPB = F::cpb;
  extern __shared__ __align__(16) double smf[]; /* 16 bytes: the point table's values are read in pairs */
  __shared__ size_t sbase[CPB];
  double *sT = smf, *sq = smf + F::ntab;
  for (int t = threadIdx.x; t < F::ntab; t += blockDim.x) sT[t] = T[t];
  mf_element_shape sh; /* constants but the operator's parts; block_stride: the staged layout */
  sh.dim = DIM;
  sh.n1 = N1;
  sh.nq = NQ;
  sh.nqp = NQP;
  sh.npc = NPC;
  sh.has_mass = a.sh.has_mass;
  sh.has_grad = a.sh.has_grad;
  sh.block_stride = NQP;
  const int c = (int)threadIdx.x / NPC, j = (int)threadIdx.x - c * NPC, cdata = fast_cell_stride(ncomp, NQP);
  const size_t qbs = a.sh.block_stride;
  for (long long k0 = (long long)blockIdx.x * CPB; k0 < a.nfree; k0 += (long long)gridDim.x * CPB) {
    const int nc = a.nfree - k0 < CPB ? (int)(a.nfree - k0) : CPB;
    __syncthreads(); /* the previous group's columns are done with sq and sbase (and sT is staged) */
    if ((int)threadIdx.x < nc) { /* the offsets of the group's cells: one division by the batch per cell */
      const int cell = a.cells ? a.cells[k0 + threadIdx.x] : (int)(k0 + threadIdx.x);
      sbase[threadIdx.x] = mf_element_qd_base(cell, a.batch, (size_t)a.batch_stride, NQP);
    }
    __syncthreads();
    for (int comp = 0; comp < ncomp; comp++)
      for (int t = threadIdx.x; t < nc * NQP; t += blockDim.x) {
        const int cc = t / NQP, q = t - cc * NQP;
        sq[cc * cdata + comp * NQP + q] = a.qd[sbase[cc] + (size_t)comp * qbs + q];
      }
    __syncthreads();
    if (c < nc) {
      double col[NPC];
      mf_element_column(&sh, sq + c * cdata, sT, j, col);
      const long long k = k0 + c;
      const int cell = a.cells ? a.cells[k] : (int)k;
      const int *nodes = a.cell_nodes + (size_t)cell * NPC;
      const size_t t0 = (size_t)k * (NPC * NPC) + j;
      const int nj = MODE == 0 ? nodes[j] : 0;
#pragma unroll
      for (int i = 0; i < NPC; i++) {
        int64_t pos;
        if (MODE == 1) pos = ((const int32_t *)table)[t0 + i * NPC];
        else if (MODE == 2) pos = ((const int64_t *)table)[t0 + i * NPC];
        else pos = mf_csr_find(a.rowptr, a.colidx, nodes[i], nj);
        atomicAdd(&a.vals[pos], col[i]);
      }
    }
  }
}

template <int DIM, int N1, int NQ, int MODE>
static int launch_fast_mode(mf_context ctx, const asm_args &a, const double *T, const void *table, const char *what)
{
  typedef fast_shape<DIM, N1, NQ> F;
  const int ncomp = (a.sh.has_mass ? 1 : 0) + (a.sh.has_grad ? (DIM == 2 ? 3 : 6) : 0);
  const size_t shmem = sizeof(double) * ((size_t)F::ntab + (size_t)F::cpb * fast_cell_stride(ncomp, F::nqp));
  auto kern = k_asm_fast<DIM, N1, NQ, MODE>;
  if (shmem > 48 * 1024)
    MF_CUDA_CALL(ctx, cudaFuncSetAttribute(kern, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)shmem));
  /* a grid of a few waves of resident blocks: each stages the point table once for many cell groups */
  int dev = 0, nsm = 1, per_sm = 1;
  MF_CUDA_CALL(ctx, cudaGetDevice(&dev));
  MF_CUDA_CALL(ctx, cudaDeviceGetAttribute(&nsm, cudaDevAttrMultiProcessorCount, dev));
  MF_CUDA_CALL(ctx, cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kern, F::cpb * F::npc, shmem));
  long long groups = (a.nfree + F::cpb - 1) / F::cpb, cap = 4LL * nsm * (per_sm > 0 ? per_sm : 1);
  if (groups > cap) groups = cap;
  kern<<<(unsigned int)(groups < 1 ? 1 : groups), F::cpb * F::npc, shmem>>>(a, T, table, ncomp);
  MF_CUDA_LAUNCH_CHECK(ctx, what);
  return 0;
}

template <int DIM, int N1, int NQ>
static int launch_fast_shape(mf_context ctx, int mode, const asm_args &a, const double *T, const void *table,
                             const char *what)
{
  if (mode == 1) return launch_fast_mode<DIM, N1, NQ, 1>(ctx, a, T, table, what);
  if (mode == 2) return launch_fast_mode<DIM, N1, NQ, 2>(ctx, a, T, table, what);
  return launch_fast_mode<DIM, N1, NQ, 0>(ctx, a, T, table, what);
}

// The instantiations: (dim, n1, nq) of mf_element_fast, nq = n1 (Gauss p + 1, Gauss-Lobatto) or n1 + 1
// (Gauss p + 2): L::run<D, N, NQ>(ctx, a) for the shape of a (L: a launcher below).
template <class L> static int with_fast_shape(mf_context ctx, const asm_args &a, const L &l)
{
  const int dim = a.sh.dim, n1 = a.sh.n1, p2 = a.sh.nq == n1 + 1;
#define MF_ASM_FAST(D, N)                                                                                    \
  if (dim == D && n1 == N) return p2 ? l.template run<D, N, N + 1>(ctx, a) : l.template run<D, N, N>(ctx, a);
  MF_ASM_FAST(2, 2)
  MF_ASM_FAST(2, 3)
  MF_ASM_FAST(2, 4)
  MF_ASM_FAST(3, 2)
  MF_ASM_FAST(3, 3)
#undef MF_ASM_FAST
  return mf_error_set(ctx, MF_ERR_UNSUPPORTED, __FILE__, __LINE__, __func__,
                      "no column-wise %s kernel for dim %d, n1 %d, nq %d", l.what, dim, n1, a.sh.nq);
}

// The search and table kernels, each in its mode of finding positions.
struct fast_launcher {
  int mode;
  const double *T;
  const void *table;
  const char *what;
  template <int D, int N, int NQ> int run(mf_context ctx, const asm_args &a) const
  {
    return launch_fast_shape<D, N, NQ>(ctx, mode, a, T, table, what);
  }
};

static int launch_fast(mf_context ctx, int mode, const asm_args &a, const double *T, const void *table,
                       const char *what)
{
  return with_fast_shape(ctx, a, fast_launcher{mode, T, table, what});
}

// Rowwise, column-wise form: one thread per local DoF r as k_asm_rows, row i of each of its cells'
// element matrices made as column i (the matrices are symmetric) by mf_element_column from the point
// table in shared memory and the cell's quadrature data read from global memory; CPU twin: rows_gather.
template <int DIM, int N1, int NQ>
__global__ void __launch_bounds__(MF_ASM_THREADS) k_asm_rows_fast(const asm_args a, const double *T, int nrows,
                                                                  const int64_t *off, const int64_t *entries)
{
  typedef fast_shape<DIM, N1, NQ> F;
  constexpr int NPC = F::npc;
  extern __shared__ __align__(16) double smr[];
  for (int t = threadIdx.x; t < F::ntab; t += blockDim.x) smr[t] = T[t];
  __syncthreads();
  mf_element_shape sh = a.sh; /* the sizes as constants, the global layout of the quadrature data */
  sh.dim = DIM;
  sh.n1 = N1;
  sh.nq = NQ;
  sh.nqp = F::nqp;
  sh.npc = NPC;
  for (long long r = blockIdx.x * (long long)blockDim.x + threadIdx.x; r < nrows; r += (long long)gridDim.x * blockDim.x) {
    for (int64_t t = off[r]; t < off[r + 1]; t++) {
      const int64_t en = entries[t];
      const int cell = (int)(en / NPC), i = (int)(en - (int64_t)cell * NPC);
      const double *qd = a.qd + mf_element_qd_base(cell, a.batch, (size_t)a.batch_stride, F::nqp);
      const int *nodes = a.cell_nodes + (size_t)cell * NPC;
      double row[NPC];
      mf_element_column(&sh, qd, smr, i, row);
#pragma unroll
      for (int j = 0; j < NPC; j++) a.vals[mf_csr_find(a.rowptr, a.colidx, (int)r, nodes[j])] += row[j];
    }
  }
}

template <int DIM, int N1, int NQ>
static int launch_rows_shape(mf_context ctx, const asm_args &a, const double *T, int nrows, const int64_t *off,
                             const int64_t *entries)
{
  typedef fast_shape<DIM, N1, NQ> F;
  const size_t shmem = sizeof(double) * (size_t)F::ntab;
  auto kern = k_asm_rows_fast<DIM, N1, NQ>;
  if (shmem > 48 * 1024)
    MF_CUDA_CALL(ctx, cudaFuncSetAttribute(kern, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)shmem));
  kern<<<grid_for(nrows), MF_ASM_THREADS, shmem>>>(a, T, nrows, off, entries);
  MF_CUDA_LAUNCH_CHECK(ctx, "assembly (rowwise, column-wise)");
  return 0;
}

// The rowwise kernel.
struct rows_launcher {
  const double *T;
  int nrows;
  const int64_t *off, *entries;
  const char *what;
  template <int D, int N, int NQ> int run(mf_context ctx, const asm_args &a) const
  {
    return launch_rows_shape<D, N, NQ>(ctx, a, T, nrows, off, entries);
  }
};

static int launch_rows_fast(mf_context ctx, const asm_args &a, const double *T, int nrows, const int64_t *off,
                            const int64_t *entries)
{
  return with_fast_shape(ctx, a, rows_launcher{T, nrows, off, entries, "rowwise assembly"});
}

template <class T>
__global__ void k_asm_table(const asm_args a, T *table)
{
  const int npc = a.sh.npc;
  const long long per = (long long)npc * npc, n = (long long)a.nfree * per;
  for (long long t = blockIdx.x * (long long)blockDim.x + threadIdx.x; t < n; t += (long long)gridDim.x * blockDim.x) {
    const long long k = t / per;
    const int r = (int)(t % per), i = r / npc, j = r % npc;
    const int cell = a.cells ? a.cells[k] : (int)k;
    const int *nodes = a.cell_nodes + (size_t)cell * npc;
    table[t] = (T)mf_csr_find(a.rowptr, a.colidx, nodes[i], nodes[j]);
  }
}

// Rowwise: one thread per local DoF r; entries[off[r] .. off[r+1]) = cell * npc + i, cells ascending
// (mf_assembly_dof_cells). Only this thread writes row r.
__global__ void k_asm_rows(const asm_args a, int nrows, const int64_t *off,
                                                             const int64_t *entries)
{
  __shared__ double sBG[2 * MF_MAX_NQ * MF_MAX_N1];
  stage_tables(a, sBG);
  const mf_element_shape sh = a.sh;
  const int npc = sh.npc;
  const double *sB = sBG, *sG = sBG + sh.nq * sh.n1;
  for (long long r = blockIdx.x * (long long)blockDim.x + threadIdx.x; r < nrows; r += (long long)gridDim.x * blockDim.x) {
    for (int64_t t = off[r]; t < off[r + 1]; t++) {
      const int64_t en = entries[t];
      const int cell = (int)(en / npc), i = (int)(en % npc);
      const double *qd = a.qd + mf_element_qd_base(cell, a.batch, (size_t)a.batch_stride, sh.nqp);
      const int *nodes = a.cell_nodes + (size_t)cell * npc;
      for (int j = 0; j < npc; j++)
        a.vals[mf_csr_find(a.rowptr, a.colidx, (int)r, nodes[j])] += mf_element_entry(&sh, qd, sB, sG, i, j);
    }
  }
}

// Cells with hanging nodes, one block per cell, one thread per quadrature point: for every column j,
// the cell operator with constraints on e_j (C^T A_e C e_j: the steps and order of mf_kernel_cell_cpu
// between mf_hanging_apply and its transpose, as k_diag_hanging), and each node thread i adds entry
// (i, j) at the position of (nodes[i], nodes[j]). CPU twin: hanging_cells in lib/assembled/assembly_variants.c.
struct asm_hanging_args : mfg::hanging_cell_args {
  const int64_t *rowptr;
  const int *colidx;
  double *vals;
};

static size_t asm_hanging_shared(const mfg::cell_shape &c)
{
  return sizeof(double) * ((size_t)c.nq * c.n1 + (size_t)c.nq * c.nq + 2 * c.n1 * c.n1 + (size_t)(2 + c.dim) * c.nqp);
}

__global__ void __launch_bounds__(1024) k_asm_hanging(const asm_hanging_args a)
{
  extern __shared__ double sm[];
  const mfg::cell_shape c = a.c;
  double *sB = sm, *sD = sB + c.nq * c.n1, *sP = sD + c.nq * c.nq, *s0 = sP + 2 * c.n1 * c.n1, *s1 = s0 + c.nqp;
  double *v = s1 + c.nqp;
  const int cell = a.cells[blockIdx.x], mask = a.mask[cell];
  const int *nodes = a.cell_nodes + (size_t)cell * c.npc;
  mfg::stage(sB, a.B, c.nq * c.n1);
  mfg::stage(sD, a.D, c.nq * c.nq);
  mfg::stage(sP, a.P, 2 * c.n1 * c.n1);
  const mfg::point t = mfg::make_point(c, threadIdx.x);
  const int ncomp = (a.has_mass ? 1 : 0) + (a.has_grad ? (c.dim == 2 ? 3 : 6) : 0);
  double qv[7];
  const size_t qbase = (size_t)(cell / a.batch) * a.batch_stride + (size_t)(cell % a.batch) * c.nqp + t.q;
  for (int k = 0; k < 7; k++) qv[k] = k < ncomp ? a.qd[qbase + (size_t)k * a.block_stride] : 0.0;
  const int myrow = t.isdof ? nodes[t.pos] : -1;
  __syncthreads();
  for (int j = 0; j < c.npc; j++) {
    const double res = mfg::constrained_column(c, j, mask, sB, sD, sP, s0, s1, v, qv, a.has_mass, a.has_grad, a.colloc, t);
    if (t.isdof && res != 0.0) atomicAdd(&a.vals[mf_csr_find(a.rowptr, a.colidx, myrow, nodes[j])], res);
  }
}

extern "C" int mf_cuda_csr_pattern(mf_space s)
{
  mf_context ctx = s->ctx;
  mf_cuda_space *ds = (mf_cuda_space *)s->dev;
  if (ds->csr_rowptr) return 0;
  const size_t n = (size_t)s->nlocal, nnz = (size_t)s->csr_rowptr[n];
  char what[160];
  snprintf(what, sizeof what, "the sparsity of the assembled operators (%zu nonzeros on %zu local DoFs)", nnz, n);
  MF_CALL(mf_cuda_require(ctx, sizeof(int64_t) * (n + 1) + sizeof(int) * nnz, what));
  int64_t *rowptr = NULL;
  int *colidx = NULL;
  int ierr = mf_cuda_upload(ctx, (void **)&rowptr, s->csr_rowptr, sizeof(int64_t) * (n + 1), "the sparsity's rows");
  if (!ierr) ierr = mf_cuda_upload(ctx, (void **)&colidx, s->csr_colidx, sizeof(int) * nnz, "the sparsity's columns");
  if (ierr) {
    mf_cuda_free(ctx, rowptr);
    return ierr;
  }
  ds->csr_rowptr = rowptr; // freed with the space's device state (mf_cuda_space_free)
  ds->csr_colidx = colidx;
  return 0;
}

// The assembled operator's values on the device until its product takes them over (lib/cuda/csr.cu's
// destroy frees them then).
static int destroy_values(mf_operator A)
{
  mf_cuda_free(A->ctx, mf_csr(A)->vals);
  mf_csr(A)->vals = NULL;
  return 0;
}

// The launches of variant v into a.vals (zeroed); every one checked. T: the point table (device), or
// NULL where the column-wise form does not apply; table: the positions (made before, kept with the
// space).
static int assemble_launch(mf_operator mfop, mf_assembly_variant v, const asm_args &a, const double *T,
                           const void *table, int wide, const int64_t *off, const int64_t *entries)
{
  mf_context ctx = mfop->ctx;
  mf_space s = mfop->space;
  if (a.nfree > 0) {
    if (v == MF_ASSEMBLY_SEARCH) {
      if (T) MF_CALL(launch_fast(ctx, 0, a, T, NULL, "assembly (search, column-wise)"));
      else MF_CALL(launch_block<0>(ctx, a, NULL, "assembly (search)"));
    } else if (v == MF_ASSEMBLY_TABLE) {
      if (T) MF_CALL(launch_fast(ctx, wide ? 2 : 1, a, T, table, "assembly (table, column-wise)"));
      else if (wide) MF_CALL(launch_block<2>(ctx, a, table, "assembly (table)"));
      else MF_CALL(launch_block<1>(ctx, a, table, "assembly (table)"));
    } else {
      if (T) MF_CALL(launch_rows_fast(ctx, a, T, s->nlocal, off, entries));
      else {
        k_asm_rows<<<grid_for(s->nlocal), MF_ASM_THREADS>>>(a, s->nlocal, off, entries);
        MF_CUDA_LAUNCH_CHECK(ctx, "assembly (rowwise)");
      }
    }
  }
  if (s->nmasked) {
    asm_hanging_args h;
    mfg::hanging_cell_args_fill(mfop, &h);
    h.rowptr = a.rowptr;
    h.colidx = a.colidx;
    h.vals = a.vals;
    const size_t shmem = asm_hanging_shared(h.c);
    if (shmem > 48 * 1024)
      MF_CUDA_CALL(ctx, cudaFuncSetAttribute(k_asm_hanging, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)shmem));
    k_asm_hanging<<<s->nmasked, h.c.nqp, shmem>>>(h);
    MF_CUDA_LAUNCH_CHECK(ctx, "assembly of cells with hanging nodes");
  }
  // the values are complete when the call returns (the assembly's time is the call's)
  MF_CUDA_CALL(ctx, cudaDeviceSynchronize());
  return 0;
}

// The table of positions kept with the space's device pattern: made by the first table assembly on the
// space (k_asm_table, a binary search per entry), reused by the next ones; remade only where the width
// asked for changes (tests force 8-byte positions). Freed with the space (mf_cuda_space_free).
static int kept_table(const asm_args &a, mf_space s, int wide, size_t nent)
{
  mf_context ctx = s->ctx;
  mf_cuda_space *ds = (mf_cuda_space *)s->dev;
  void *table = NULL;
  MF_CALL(mf_cuda_malloc(ctx, &table, (wide ? sizeof(int64_t) : sizeof(int32_t)) * nent, "the table of positions"));
  if (nent) {
    if (wide) k_asm_table<int64_t><<<grid_for((long long)nent), MF_ASM_THREADS>>>(a, (int64_t *)table);
    else k_asm_table<int32_t><<<grid_for((long long)nent), MF_ASM_THREADS>>>(a, (int32_t *)table);
    const cudaError_t e = cudaGetLastError();
    if (e != cudaSuccess) {
      mf_cuda_free(ctx, table);
      return mf_error_set(ctx, MF_ERR_CUDA, __FILE__, __LINE__, __func__, "launch of the table of positions failed: %s",
                          cudaGetErrorString(e));
    }
  }
  ds->asm_table = table;
  ds->asm_table_wide = wide;
  return 0;
}

extern "C" size_t mf_cuda_assembly_table_bytes(mf_space s)
{
  const mf_cuda_space *ds = (const mf_cuda_space *)s->dev;
  if (!ds || !ds->asm_table) return 0;
  return (ds->asm_table_wide ? sizeof(int64_t) : sizeof(int32_t)) * (size_t)(s->ncells - s->nmasked) *
         (size_t)s->npc * (size_t)s->npc;
}

extern "C" void mf_cuda_assembly_table_drop(mf_space s)
{
  mf_cuda_space *ds = (mf_cuda_space *)s->dev;
  if (!ds) return;
  mf_cuda_free(s->ctx, ds->asm_table);
  ds->asm_table = NULL;
}

extern "C" int mf_cuda_assemble(mf_operator mfop, mf_assembly_variant v, mf_operator A)
{
  mf_context ctx = mfop->ctx;
  mf_space s = mfop->space;
  const mf_cuda_operator *d = (const mf_cuda_operator *)mf_hexop(mfop)->dev;
  mf_cuda_space *ds = (mf_cuda_space *)s->dev;
  const int n = s->nlocal, npc = s->npc, nq = mf_hexop(mfop)->basis.nq, n1 = s->n1;
  const int64_t nnz = s->csr_rowptr[n];
  int *hcells = NULL, nfree = 0, *cells = NULL;
  int64_t *hoff = NULL, *hentries = NULL, *off = NULL, *entries = NULL;
  double *BG = NULL, *T = NULL, *hT = NULL;
  const int wide = mf_assembly_table_wide(nnz);
  const size_t ntable = (size_t)(s->ncells - s->nmasked) * (size_t)npc * (size_t)npc;
  mf_element_shape sh;
  mf_assembly_shape(mfop, &sh);
  const int fast = mf_element_fast(&sh);
  const size_t nT = fast ? (size_t)4 * sh.nqp * npc : 0;
  /* auto: the table where one is kept, or where making and keeping one leaves the device a quarter of
   * what it has free beyond this assembly's values; else the search (at most 15% slower at Q1-Q2,
   * docs/performance.md), so that keeping a table never refuses a matrix that fits without one */
  if (v == MF_ASSEMBLY_AUTO) {
    v = MF_ASSEMBLY_TABLE;
    if (!ds->asm_table || ds->asm_table_wide != wide) {
      const mf_cuda_context *cc = mf_cuda_ctx(ctx);
      size_t freeb = 0, total = 0;
      MF_CUDA_CALL(ctx, cudaMemGetInfo(&freeb, &total));
      if (cc->mem_limit) {
        const size_t left = cc->mem_limit > cc->mem_in_use ? cc->mem_limit - cc->mem_in_use : 0;
        if (left < freeb) freeb = left;
      }
      const double values = sizeof(double) * ((double)nnz + (double)n);
      const double table = (double)(wide ? sizeof(int64_t) : sizeof(int32_t)) * (double)ntable;
      if (values + table > 0.75 * (double)freeb) v = MF_ASSEMBLY_SEARCH;
    }
  }
  /* a kept table of the other width is remade */
  if (v == MF_ASSEMBLY_TABLE && ds->asm_table && ds->asm_table_wide != wide) {
    mf_cuda_free(ctx, ds->asm_table);
    ds->asm_table = NULL;
  }
  const int make_table = v == MF_ASSEMBLY_TABLE && !ds->asm_table;
  /* the host lists first (host memory checked there), then everything on the device checked at once */
  int ierr = mf_assembly_free_cells(s, &hcells, &nfree);
  if (!ierr && v == MF_ASSEMBLY_ROWWISE) ierr = mf_assembly_dof_cells(s, hcells, nfree, &hoff, &hentries);
  if (!ierr && fast) {
    ierr = MF_CALLOC(ctx, nT, &hT);
    if (!ierr) mf_element_point_table(&sh, mf_hexop(mfop)->basis.B, mf_hexop(mfop)->basis.Bg, hT);
  }
  if (!ierr) {
    /* values, 1D tables, the point table, the cell list, and the operator's work vector (made next by the
     * caller); the table of positions where this assembly makes it (it stays with the space) */
    size_t need = sizeof(double) * ((size_t)nnz + 2 * (size_t)nq * n1 + nT + (size_t)n) +
                  (hcells ? sizeof(int) * (size_t)nfree : 0);
    if (make_table) need += (wide ? sizeof(int64_t) : sizeof(int32_t)) * ntable;
    if (v == MF_ASSEMBLY_ROWWISE) need += sizeof(int64_t) * ((size_t)n + 1 + (size_t)nfree * npc);
    char what[200];
    snprintf(what, sizeof what, "the assembly (%s variant: %lld values%s)",
             v == MF_ASSEMBLY_SEARCH ? "search" : v == MF_ASSEMBLY_TABLE ? "table" : "rowwise", (long long)nnz,
             make_table ? (wide ? ", a table of 8-byte positions kept with the space"
                                : ", a table of 4-byte positions kept with the space")
             : v == MF_ASSEMBLY_ROWWISE ? ", the DoF-to-cell lists" : "");
    ierr = mf_cuda_require(ctx, need, what);
  }
  if (!ierr) {
    ierr = mf_cuda_malloc(ctx, (void **)&mf_csr(A)->vals, sizeof(double) * (size_t)nnz, "the assembled values");
    if (!ierr) A->ops.destroy = destroy_values;
  }
  if (!ierr && cudaMemset(mf_csr(A)->vals, 0, sizeof(double) * (size_t)nnz) != cudaSuccess)
    ierr = mf_error_set(ctx, MF_ERR_CUDA, __FILE__, __LINE__, __func__, "cudaMemset of the assembled values failed: %s",
                        cudaGetErrorString(cudaGetLastError()));
  if (!ierr) {
    double hBG[2 * MF_MAX_NQ * MF_MAX_N1];
    memcpy(hBG, mf_hexop(mfop)->basis.B, sizeof(double) * nq * n1);
    memcpy(hBG + nq * n1, mf_hexop(mfop)->basis.Bg, sizeof(double) * nq * n1);
    ierr = mf_cuda_upload(ctx, (void **)&BG, hBG, sizeof(double) * 2 * nq * n1, "the 1D tables of the assembly");
  }
  if (!ierr && fast) ierr = mf_cuda_upload(ctx, (void **)&T, hT, sizeof(double) * nT, "the point table of the assembly");
  if (!ierr && hcells)
    ierr = mf_cuda_upload(ctx, (void **)&cells, hcells, sizeof(int) * (size_t)nfree, "the cells without hanging nodes");
  if (!ierr && v == MF_ASSEMBLY_ROWWISE) {
    ierr = mf_cuda_upload(ctx, (void **)&off, hoff, sizeof(int64_t) * ((size_t)n + 1), "the DoF-to-cell lists");
    if (!ierr)
      ierr = mf_cuda_upload(ctx, (void **)&entries, hentries, sizeof(int64_t) * (size_t)nfree * npc,
                            "the DoF-to-cell lists");
  }
  if (!ierr) {
    asm_args a;
    a.sh = sh;
    a.batch = mf_hexop(mfop)->qd.batch;
    a.batch_stride = (long long)mf_hexop(mfop)->qd.batch_stride;
    a.qd = d->qd;
    a.BG = BG;
    a.cell_nodes = ds->cell_nodes;
    a.cells = cells;
    a.nfree = nfree;
    a.rowptr = ds->csr_rowptr;
    a.colidx = ds->csr_colidx;
    a.vals = mf_csr(A)->vals;
    if (make_table) ierr = kept_table(a, s, wide, ntable);
    if (!ierr)
      ierr = assemble_launch(mfop, v, a, T, v == MF_ASSEMBLY_TABLE ? ds->asm_table : NULL, wide, off, entries);
  }
  /* the lists and the tables serve this assembly only (the table of positions stays with the space) */
  void *tmp[] = {BG, T, cells, off, entries};
  for (size_t k = 0; k < sizeof tmp / sizeof tmp[0]; k++) mf_cuda_free(ctx, tmp[k]);
  free(hT);
  free(hcells);
  free(hoff);
  free(hentries);
  return ierr;
}

extern "C" int mf_cuda_csr_values_to_host(mf_operator A, double *host)
{
  const size_t nnz = (size_t)mf_csr(A)->rowptr[A->space->nlocal];
  MF_CUDA_CALL(A->ctx, cudaMemcpy(host, mf_csr(A)->vals, sizeof(double) * nnz, cudaMemcpyDeviceToHost));
  return 0;
}

extern "C" int mf_cuda_csr_values_from_host(mf_operator A, const double *host)
{
  const size_t nnz = (size_t)mf_csr(A)->rowptr[A->space->nlocal];
  MF_CUDA_CALL(A->ctx, cudaMemcpy(mf_csr(A)->vals, host, sizeof(double) * nnz, cudaMemcpyHostToDevice));
  return 0;
}
