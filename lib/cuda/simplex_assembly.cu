// simplex_assembly.cu -- the assembled simplex operators on the device (mf_simplex_cuda.h): the values
// of a M + b K_c (the mass operator: a M_c) on P_p (p = 1..4, 2D and 3D) into the space's sparsity, rowwise, with the entries of
// lib/simplex/mf_simplex_asm.h (the CPU twin: lib/simplex/assembly_simplex.c). A thread per DoF r owns
// row r: for every (cell, i) of r's list (cells ascending) it computes the cell's geometry from its
// vertices and adds row i of the element matrix at the columns' places in the row. No atomics; the sums
// of a row are in the CPU twin's order.
//   shared  (k_sx_asm_rows_sh) the row is summed in shared memory (a slice per thread, interleaved across
//           the block's threads), at places read from a table of one byte per (entry, j) (the column's
//           position in the row: rows of at most 255 columns), and written to the values once;
//   p1      (k_sx_asm_rows_p1) 3D P1 with a constant coefficient: as shared, and the row's columns'
//           coordinates read into a slice of their own first, from which the cells' vertices are taken at
//           the places (no gather of the cells' vertex ids and coordinates per cell);
//   search  (k_sx_asm_rows) where the rows are longer or the slices do not fit: the places found by
//           binary search in the row, the sums made in the values in global memory.
// The table of places is made on the device (k_sx_asm_places, one binary search per byte) with the
// DoF-to-cell lists (mf_assembly_dof_cells over all cells, made on the host, copied with 4-byte entries
// where cells x N < 2^31, else 8-byte) by the first assembly on a space, and kept with the space
// (mf_simplex_space.dev_asm) for the next ones; the values are allocated per assembly. The reference
// matrices (constant coefficient) are read from shared memory where they fit.
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mf_cuda_common.cuh"
#include "mf_simplex_cuda.h"
#include "simplex_kernels.cuh"
#include "assembled/assembly_impl.h"
#include "simplex/mf_simplex_asm.h"

#define MF_SX_ASM_THREADS 128

struct sx_asm_lists {
  mf_context ctx;
  int64_t *off;    // nrows + 1
  void *ent;       // (cell * N + i), int32 or int64
  uint32_t *places; // per entry ceil(N / 4) words: byte j = the place of column cell_dofs[e][j] in the row
  int wide;
  int rmax;        // the longest row
  int vertex_dofs; // P1: every cell's DoFs are its vertex ids (the staged kernel may run)
  long long nent;
};

struct sx_asm_args {
  mf_simplex_cuda_arrays d;
  int nrows;
  int shared_S; // the reference matrices staged in shared memory
  const int64_t *rowptr;
  const int *colidx;
  double *vals;
};

// The geometry of cell e from its vertices.
template <int DIM>
__device__ __forceinline__ void sx_asm_cell_of(const mf_simplex_cuda_arrays &d, int e, mf_sx_asm_cell *c)
{
  double X[(DIM + 1) * DIM];
  int vi[DIM + 1];
  if constexpr (DIM == 3) { // the four vertex ids in one 16-byte load (cells: 4 ints per cell, the array 16-byte aligned)
    const int4 q = __ldg(reinterpret_cast<const int4 *>(d.cells) + e);
    vi[0] = q.x, vi[1] = q.y, vi[2] = q.z, vi[3] = q.w;
  } else {
#pragma unroll
    for (int v = 0; v <= DIM; v++) vi[v] = __ldg(d.cells + (size_t)e * (DIM + 1) + v);
  }
#pragma unroll
  for (int v = 0; v <= DIM; v++)
#pragma unroll
    for (int k = 0; k < DIM; k++) X[v * DIM + k] = __ldg(d.coords + (size_t)vi[v] * DIM + k);
  mf_sx_asm_geometry(DIM, X, c);
}

// The reference matrices of N nodes: copied to sS in shared memory where a.shared_S (every thread of the block
// calls it: a barrier), else a.d.S in global memory.
template <int DIM>
__device__ __forceinline__ const double *sx_asm_ref(const sx_asm_args &a, int N, double *sS)
{
  if (!a.shared_S) return a.d.S;
  const int n = mf_sx_ref_doubles(DIM, N);
  for (int t = threadIdx.x; t < n; t += blockDim.x) sS[t] = a.d.S[t];
  __syncthreads();
  return sS;
}

template <int DIM, int P, typename E, bool COEF>
__global__ void __launch_bounds__(MF_SX_ASM_THREADS) k_sx_asm_rows(sx_asm_args a, const int64_t *__restrict__ off,
                                                                  const E *__restrict__ ent)
{
  constexpr int N = mf_sx_nnodes(DIM, P), NQ = mf_sx_nq(DIM, P);
  extern __shared__ double sS[];
  const double *S = COEF ? a.d.S : sx_asm_ref<DIM>(a, N, sS);
  for (int r = blockIdx.x * blockDim.x + threadIdx.x; r < a.nrows; r += gridDim.x * blockDim.x) {
    const int64_t r0 = a.rowptr[r], r1 = a.rowptr[r + 1];
    for (int64_t k = r0; k < r1; k++) a.vals[k] = 0.0;
    const int64_t t1 = off[r + 1];
    for (int64_t t = off[r]; t < t1; t++) {
      const long long en = (long long)ent[t];
      const int e = (int)(en / N), i = (int)(en % N);
      mf_sx_asm_cell c;
      sx_asm_cell_of<DIM>(a.d, e, &c);
      const int *cd = a.d.cell_dofs + (size_t)e * N;
#pragma unroll
      for (int j = 0; j < N; j++) {
        const double v = COEF ? mf_sx_asm_entry_quad(DIM, N, NQ, a.d.B, a.d.G, a.d.w, a.d.coefq + (size_t)e * NQ, &c,
                                                     a.d.a, a.d.b, a.d.mass_coef, i, j)
                              : mf_sx_asm_entry_ref(DIM, N, S, &c, a.d.a, a.d.b, i, j);
        const int col = __ldg(cd + j);
        int64_t lo = r0, hi = r1 - 1; // mf_csr_find within the row
        while (lo < hi) {
          const int64_t mid = lo + (hi - lo) / 2;
          if (__ldg(a.colidx + mid) < col) lo = mid + 1;
          else hi = mid;
        }
        a.vals[lo] += v;
      }
    }
  }
}

// The places of the columns of every entry (cell, i) of every row: byte j of the entry's words is the
// position of column cell_dofs[e][j] in the row (binary search), relative to the row's start.
template <int DIM, int P, typename E>
__global__ void k_sx_asm_places(sx_asm_args a, const int64_t *__restrict__ off, const E *__restrict__ ent,
                                uint32_t *__restrict__ places)
{
  constexpr int N = mf_sx_nnodes(DIM, P), PW = (N + 3) / 4;
  for (int r = blockIdx.x * blockDim.x + threadIdx.x; r < a.nrows; r += gridDim.x * blockDim.x) {
    const int64_t r0 = a.rowptr[r], r1 = a.rowptr[r + 1];
    for (int64_t t = off[r]; t < off[r + 1]; t++) {
      const long long en = (long long)ent[t];
      const int e = (int)(en / N);
      const int *cd = a.d.cell_dofs + (size_t)e * N;
      for (int q = 0; q < PW; q++) {
        uint32_t w = 0;
        for (int b = 0; b < 4 && 4 * q + b < N; b++) {
          const int col = cd[4 * q + b];
          int64_t lo = r0, hi = r1 - 1;
          while (lo < hi) {
            const int64_t mid = lo + (hi - lo) / 2;
            if (a.colidx[mid] < col) lo = mid + 1;
            else hi = mid;
          }
          w |= (uint32_t)(lo - r0) << (8 * b);
        }
        places[(size_t)t * PW + q] = w;
      }
    }
  }
}

// The rows summed in shared memory: thread tid's slice is acc[k * blockDim.x + tid], k < its row's
// length (at most rmax); the reference matrices after the slices where staged.
template <int DIM, int P, typename E, bool COEF>
__global__ void __launch_bounds__(MF_SX_ASM_THREADS) k_sx_asm_rows_sh(sx_asm_args a, const int64_t *__restrict__ off,
                                                                     const E *__restrict__ ent,
                                                                     const uint32_t *__restrict__ places, int rmax)
{
  constexpr int N = mf_sx_nnodes(DIM, P), NQ = mf_sx_nq(DIM, P), PW = (N + 3) / 4;
  extern __shared__ double sh[];
  const int bd = blockDim.x, tid = threadIdx.x;
  double *acc = sh + tid;
  const double *S = COEF ? a.d.S : sx_asm_ref<DIM>(a, N, sh + (size_t)rmax * bd);
  for (int r = blockIdx.x * bd + tid; r < a.nrows; r += gridDim.x * bd) {
    const int64_t r0 = a.rowptr[r];
    const int len = (int)(a.rowptr[r + 1] - r0);
    for (int k = 0; k < len; k++) acc[k * bd] = 0.0;
    const int64_t t1 = off[r + 1];
    for (int64_t t = off[r]; t < t1; t++) {
      const long long en = (long long)ent[t];
      const int e = (int)(en / N), i = (int)(en % N);
      mf_sx_asm_cell c;
      sx_asm_cell_of<DIM>(a.d, e, &c);
      uint32_t w[PW];
#pragma unroll
      for (int q = 0; q < PW; q++) w[q] = __ldg(places + (size_t)t * PW + q);
#pragma unroll
      for (int j = 0; j < N; j++) {
        const double v = COEF ? mf_sx_asm_entry_quad(DIM, N, NQ, a.d.B, a.d.G, a.d.w, a.d.coefq + (size_t)e * NQ, &c,
                                                     a.d.a, a.d.b, a.d.mass_coef, i, j)
                              : mf_sx_asm_entry_ref(DIM, N, S, &c, a.d.a, a.d.b, i, j);
        acc[(int)((w[j >> 2] >> (8 * (j & 3))) & 255u) * bd] += v;
      }
    }
    for (int k = 0; k < len; k++) a.vals[r0 + k] = acc[k * bd];
  }
}

// P1, the row's columns staged: the columns of row r are the vertices of r's cells (a P1 cell's DoFs are its
// vertex ids: checked once per space, k_sx_asm_vertex_dofs), so each row first reads its columns' coordinates
// into shared memory (a slice of DIM x rmax beside the sums), and a cell's vertices come from there at the
// places of the table: a row gathers its len columns' coordinates once instead of every cell's vertex ids and
// coordinates (an interior row of cube-tets: 15 gathers against 24 x 5). The same coordinates in the same
// order as sx_asm_cell_of: the same values to the bit. Taken for 3D with a constant coefficient, where it
// measured faster (H100, perf/results/simplex-asm-p1-h100-2026-12-07: cube-tets P1 at 1.7e7 DoFs 8.99 ms
// against 16.99; slower in 2D, square-tris P1 at 4.2e6 DoFs 0.51 against 0.45 ms, and with a coefficient,
// cube-tets P1 at 2.1e6 DoFs 7.07 against 4.97 ms: not taken there).
template <int DIM, typename E>
__global__ void __launch_bounds__(MF_SX_ASM_THREADS) k_sx_asm_rows_p1(sx_asm_args a, const int64_t *__restrict__ off,
                                                                     const E *__restrict__ ent,
                                                                     const uint32_t *__restrict__ places, int rmax)
{
  constexpr int N = DIM + 1;
  extern __shared__ double sh[];
  const int bd = blockDim.x, tid = threadIdx.x;
  double *acc = sh + tid, *xs = sh + (size_t)rmax * bd + tid; // xs[(k * DIM + d) * bd]: column k's coordinate d
  const double *S = sx_asm_ref<DIM>(a, N, sh + (size_t)rmax * (DIM + 1) * bd);
  for (int r = blockIdx.x * bd + tid; r < a.nrows; r += gridDim.x * bd) {
    const int64_t r0 = a.rowptr[r];
    const int len = (int)(a.rowptr[r + 1] - r0);
    for (int k = 0; k < len; k++) {
      const int col = __ldg(a.colidx + r0 + k);
      acc[k * bd] = 0.0;
#pragma unroll
      for (int d = 0; d < DIM; d++) xs[(k * DIM + d) * bd] = __ldg(a.d.coords + (size_t)col * DIM + d);
    }
    const int64_t t1 = off[r + 1];
    for (int64_t t = off[r]; t < t1; t++) {
      const int i = (int)((long long)ent[t] % N);
      const uint32_t w = __ldg(places + t);
      int pl[N];
      double X[N * DIM];
#pragma unroll
      for (int j = 0; j < N; j++) {
        pl[j] = (int)((w >> (8 * j)) & 255u);
#pragma unroll
        for (int d = 0; d < DIM; d++) X[j * DIM + d] = xs[(pl[j] * DIM + d) * bd];
      }
      mf_sx_asm_cell c;
      mf_sx_asm_geometry(DIM, X, &c);
#pragma unroll
      for (int j = 0; j < N; j++) {
        acc[pl[j] * bd] += mf_sx_asm_entry_ref(DIM, N, S, &c, a.d.a, a.d.b, i, j);
      }
    }
    for (int k = 0; k < len; k++) a.vals[r0 + k] = acc[k * bd];
  }
}

// Whether every cell's first DIM + 1 DoFs are its vertex ids (P1: its DoFs; the staged kernel's premise): *bad
// set to 1 where one is not.
template <int DIM>
__global__ void k_sx_asm_vertex_dofs(mf_simplex_cuda_arrays d, int N, int *bad)
{
  for (long long e = blockIdx.x * (long long)blockDim.x + threadIdx.x; e < d.ncells; e += (long long)gridDim.x * blockDim.x)
#pragma unroll
    for (int v = 0; v <= DIM; v++)
      if (__ldg(d.cells + e * (DIM + 1) + v) != __ldg(d.cell_dofs + e * N + v)) *bad = 1;
}

typedef void (*sx_asm_fn)(sx_asm_args, const int64_t *, const void *);
typedef void (*sx_asm_sh_fn)(sx_asm_args, const int64_t *, const void *, const uint32_t *, int);
typedef void (*sx_asm_places_fn)(sx_asm_args, const int64_t *, const void *, uint32_t *);
struct sx_asm_kernels {
  sx_asm_fn rows;       // search
  sx_asm_sh_fn rows_sh; // shared
  sx_asm_sh_fn rows_p1; // P1, the columns staged (NULL at p > 1)
  sx_asm_places_fn places;
};

template <int DIM, int P, typename E>
static sx_asm_kernels sx_asm_pick_e(int coef)
{
  sx_asm_kernels k;
  k.rows = coef ? (sx_asm_fn)k_sx_asm_rows<DIM, P, E, true> : (sx_asm_fn)k_sx_asm_rows<DIM, P, E, false>;
  k.rows_sh = coef ? (sx_asm_sh_fn)k_sx_asm_rows_sh<DIM, P, E, true> : (sx_asm_sh_fn)k_sx_asm_rows_sh<DIM, P, E, false>;
  k.places = (sx_asm_places_fn)k_sx_asm_places<DIM, P, E>;
  k.rows_p1 = NULL;
  if constexpr (P == 1 && DIM == 3)
    if (!coef) k.rows_p1 = (sx_asm_sh_fn)k_sx_asm_rows_p1<DIM, E>;
  return k;
}

template <int DIM, int P>
static sx_asm_kernels sx_asm_pick(int wide, int coef)
{
  return wide ? sx_asm_pick_e<DIM, P, long long>(coef) : sx_asm_pick_e<DIM, P, int>(coef);
}

// the kernels of (dim, p); ok = 0 where none is compiled
static sx_asm_kernels sx_asm_kernel(int dim, int p, int wide, int coef, int *ok)
{
  *ok = 1;
  switch (dim * 10 + p) {
  case 21: return sx_asm_pick<2, 1>(wide, coef);
  case 22: return sx_asm_pick<2, 2>(wide, coef);
  case 23: return sx_asm_pick<2, 3>(wide, coef);
  case 24: return sx_asm_pick<2, 4>(wide, coef);
  case 31: return sx_asm_pick<3, 1>(wide, coef);
  case 32: return sx_asm_pick<3, 2>(wide, coef);
  case 33: return sx_asm_pick<3, 3>(wide, coef);
  case 34: return sx_asm_pick<3, 4>(wide, coef);
  default: {
    sx_asm_kernels k = {NULL, NULL, NULL, NULL};
    *ok = 0;
    return k;
  }
  }
}

static unsigned sx_asm_blocks(long long n, int threads)
{
  long long b = (n + threads - 1) / threads;
  if (b < 1) b = 1;
  if (b > (1LL << 20)) b = 1LL << 20;
  return (unsigned)b;
}

extern "C" void mf_simplex_cuda_asm_free(void *kept)
{
  sx_asm_lists *l = (sx_asm_lists *)kept;
  if (!l) return;
  mf_cuda_free(l->ctx, l->off);
  mf_cuda_free(l->ctx, l->ent);
  mf_cuda_free(l->ctx, l->places);
  free(l);
}

// The lists of the space made on the host (mf_assembly_dof_cells) and copied, narrowed where they fit;
// the table of places made on the device where the rows have at most 255 columns.
static int sx_asm_lists_make(mf_space s, const sx_asm_args &a, int coef, sx_asm_lists **out)
{
  mf_context ctx = s->ctx;
  const int N = a.d.N, PW = (N + 3) / 4;
  const long long nent = (long long)s->ncells * N;
  const int wide = nent >= (1LL << 31);
  const size_t esz = wide ? sizeof(int64_t) : sizeof(int32_t);
  int rmax = 0;
  for (int r = 0; r < s->nlocal; r++) {
    const int len = (int)(s->csr_rowptr[r + 1] - s->csr_rowptr[r]);
    rmax = len > rmax ? len : rmax;
  }
  const size_t bytes_places = rmax <= 255 ? sizeof(uint32_t) * (size_t)PW * (size_t)nent : 0;
  MF_CALL(mf_cuda_require(ctx, sizeof(int64_t) * ((size_t)s->nlocal + 1) + esz * (size_t)nent + bytes_places,
                          "the DoF-to-cell lists of the simplex assembly"));
  int64_t *hoff = NULL, *hent = NULL;
  MF_CALL(mf_assembly_dof_cells(s, NULL, s->ncells, &hoff, &hent));
  sx_asm_lists *l = (sx_asm_lists *)calloc(1, sizeof *l);
  int ierr = l ? 0 : mf_error_set(ctx, MF_ERR_MEMORY, __FILE__, __LINE__, __func__, "out of host memory");
  if (!ierr) {
    l->ctx = ctx, l->wide = wide, l->nent = nent, l->rmax = rmax;
    if (!wide) { // in place: entry k's 4 bytes never overtake entry k's 8 still to be read
      int32_t *n32 = (int32_t *)hent;
      for (long long k = 0; k < nent; k++) n32[k] = (int32_t)hent[k];
    }
    ierr = mf_cuda_upload(ctx, (void **)&l->off, hoff, sizeof(int64_t) * ((size_t)s->nlocal + 1),
                          "the DoF-to-cell lists of the simplex assembly");
    if (!ierr)
      ierr = mf_cuda_upload(ctx, &l->ent, hent, esz * (size_t)(nent ? nent : 1), "the DoF-to-cell lists of the simplex assembly");
  }
  free(hoff);
  free(hent);
  if (!ierr && bytes_places) {
    int ok = 0;
    const sx_asm_kernels k = sx_asm_kernel(a.d.dim, a.d.p, wide, coef, &ok);
    ierr = mf_cuda_malloc(ctx, (void **)&l->places, bytes_places, "the places of the simplex assembly");
    if (!ierr) {
      k.places<<<sx_asm_blocks(s->nlocal, MF_SX_ASM_THREADS), MF_SX_ASM_THREADS>>>(a, l->off, l->ent, l->places);
      const cudaError_t e = cudaGetLastError();
      if (e != cudaSuccess)
        ierr = mf_error_set(ctx, MF_ERR_CUDA, __FILE__, __LINE__, __func__,
                            "launch of the places of the simplex assembly failed: %s", cudaGetErrorString(e));
    }
  }
  if (!ierr && l->places && a.d.p == 1 && a.d.dim == 3) { // the staged kernel's premise, once per space
    int *bad = NULL, hbad = 1;
    ierr = mf_cuda_malloc(ctx, (void **)&bad, sizeof(int), "a flag of the simplex assembly");
    if (!ierr) {
      cudaError_t e = cudaMemset(bad, 0, sizeof(int));
      if (e == cudaSuccess) {
        k_sx_asm_vertex_dofs<3><<<sx_asm_blocks(s->ncells, 256), 256>>>(a.d, N, bad);
        e = cudaGetLastError();
      }
      if (e == cudaSuccess) e = cudaMemcpy(&hbad, bad, sizeof(int), cudaMemcpyDeviceToHost);
      if (e != cudaSuccess)
        ierr = mf_error_set(ctx, MF_ERR_CUDA, __FILE__, __LINE__, __func__,
                            "the places or the vertex check of the simplex assembly failed: %s", cudaGetErrorString(e));
      mf_cuda_free(ctx, bad);
    }
    l->vertex_dofs = !ierr && !hbad;
  }
  if (ierr) {
    mf_simplex_cuda_asm_free(l);
    return ierr;
  }
  *out = l;
  return 0;
}

static int sx_destroy_values(mf_operator A)
{
  mf_cuda_free(A->ctx, mf_csr(A)->vals);
  mf_csr(A)->vals = NULL;
  return 0;
}

// Threads per block of the shared kernels: 128 down to 32 until the slices (per thread: the row's sums, and
// the columns' coordinates where stage is the dimension) and the staged reference matrices fit in 96 KiB; 0
// where they do not, or where no table of places was made.
static int sx_asm_shared_threads(const sx_asm_lists *l, int stage, size_t sbytes, size_t *shmem)
{
  if (!l->places) return 0;
  for (int t = MF_SX_ASM_THREADS; t >= 32; t /= 2) {
    *shmem = sizeof(double) * (size_t)l->rmax * (1 + stage) * t + sbytes;
    if (*shmem <= 96 * 1024) return t;
  }
  return 0;
}

extern "C" int mf_simplex_cuda_assemble(mf_simplex_cuda_op op, mf_space s, void **kept, mf_operator A)
{
  mf_context ctx = s->ctx;
  mf_simplex_cuda_arrays d;
  MF_CHECK(op && mf_simplex_cuda_get_arrays(op, &d) == 0, ctx, MF_ERR_NULL, "the operator has no device part");
  MF_CHECK(!d.elasticity, ctx, MF_ERR_UNSUPPORTED, "simplex elasticity operators are not assembled");
  const mf_cuda_space *ds = (const mf_cuda_space *)s->dev;
  MF_CHECK(ds && ds->csr_rowptr, ctx, MF_ERR_ARGUMENT, "the space's sparsity is not on the device");
  const int coef = d.coefq != NULL;
  int ok = 0;
  sx_asm_kernel(d.dim, d.p, 0, coef, &ok);
  MF_CHECK(ok, ctx, MF_ERR_UNSUPPORTED, "simplex assembly on the device of degree %d (1..%d)", d.p,
           MF_SIMPLEX_CUDA_MAX_DEGREE);
  const int64_t nnz = s->csr_rowptr[s->nlocal];
  sx_asm_args a;
  a.d = d;
  a.nrows = s->nlocal;
  a.rowptr = ds->csr_rowptr;
  a.colidx = ds->csr_colidx;
  a.vals = NULL;
  const size_t sbytes = sizeof(double) * (size_t)mf_sx_ref_doubles(d.dim, d.N);
  a.shared_S = !coef && sbytes <= 48 * 1024;
  if (!*kept) MF_CALL(sx_asm_lists_make(s, a, coef, (sx_asm_lists **)kept));
  const sx_asm_lists *l = (const sx_asm_lists *)*kept;
  char what[160];
  snprintf(what, sizeof what, "the assembled values (%lld nonzeros)", (long long)nnz);
  MF_CALL(mf_cuda_require(ctx, sizeof(double) * ((size_t)nnz + (size_t)s->nlocal), what));
  MF_CALL(mf_cuda_malloc(ctx, (void **)&mf_csr(A)->vals, sizeof(double) * (size_t)(nnz ? nnz : 1), what));
  A->ops.destroy = sx_destroy_values;
  a.vals = mf_csr(A)->vals;
  const sx_asm_kernels k = sx_asm_kernel(d.dim, d.p, l->wide, coef, &ok);
  size_t shmem = 0;
  // P1 with its columns staged where the premise holds and the slices fit (MFREE_SIMPLEX_ASM_STAGE=0: never;
  // measurements), else the shared kernel
  const char *ev = getenv("MFREE_SIMPLEX_ASM_STAGE");
  // (and only where its slices leave it as many threads per block as the shared kernel's: measured at 128)
  const int want = k.rows_p1 && l->vertex_dofs && !(ev && !strcmp(ev, "0"));
  size_t shmem_sh = 0;
  int tsh = sx_asm_shared_threads(l, 0, a.shared_S ? sbytes : 0, &shmem_sh);
  int tp1 = want ? sx_asm_shared_threads(l, d.dim, a.shared_S ? sbytes : 0, &shmem) : 0;
  if (tp1 && tp1 >= tsh) tsh = 0;
  else tp1 = 0, shmem = shmem_sh;
  if (tp1 || tsh) {
    const sx_asm_sh_fn f = tp1 ? k.rows_p1 : k.rows_sh;
    const int t = tp1 ? tp1 : tsh;
    if (shmem > 48 * 1024)
      MF_CUDA_CALL(ctx, cudaFuncSetAttribute(f, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)shmem));
    f<<<sx_asm_blocks(s->nlocal, t), t, shmem>>>(a, l->off, l->ent, l->places, l->rmax);
  } else {
    k.rows<<<sx_asm_blocks(s->nlocal, MF_SX_ASM_THREADS), MF_SX_ASM_THREADS, a.shared_S ? sbytes : 0>>>(a, l->off, l->ent);
  }
  MF_CUDA_LAUNCH_CHECK(ctx, "simplex assembly (rowwise)");
  MF_CUDA_CALL(ctx, cudaDeviceSynchronize()); // the values are complete when the call returns
  return 0;
}
