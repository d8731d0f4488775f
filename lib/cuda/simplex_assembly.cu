// simplex_assembly.cu -- the assembled simplex operators on the device (mf_simplex_cuda.h): the values
// of a M_c + b K_c on P_p (p = 1..4, 2D and 3D) into the space's sparsity, rowwise, with the entries of
// lib/simplex/mf_simplex_asm.h (the CPU twin: lib/simplex/assembly_simplex.c). A thread per DoF r owns
// row r: it zeroes it, then for every (cell, i) of r's list (cells ascending) computes the cell's
// geometry from its vertices and adds row i of its element matrix at the columns' positions, found by
// binary search in the row. No atomics; the sums of a row are in the CPU twin's order. The reference
// matrices (constant coefficient) are read from shared memory where they fit in 48 KiB.
//
// The DoF-to-cell lists (mf_assembly_dof_cells, over all cells) are made on the host by the first
// assembly on a space, copied with 4-byte entries where cells x N < 2^31 (else 8-byte), and kept with
// the space (mf_simplex_space.dev_asm) for the next assemblies; the values are allocated per assembly.
#include <stdio.h>

#include "mf_cuda_common.cuh"
#include "mf_simplex_cuda.h"
#include "simplex_kernels.cuh"
#include "../assembly_impl.h"
#include "../simplex/mf_simplex_asm.h"

#define MF_SX_ASM_THREADS 128

struct sx_asm_lists {
  mf_context ctx;
  int64_t *off; // nrows + 1
  void *ent;    // (cell * N + i), int32 or int64
  int wide;
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

template <int DIM, int P, typename E, bool COEF>
__global__ void __launch_bounds__(MF_SX_ASM_THREADS) k_sx_asm_rows(sx_asm_args a, const int64_t *__restrict__ off,
                                                                  const E *__restrict__ ent)
{
  constexpr int N = mf_sx_nnodes(DIM, P), NQ = mf_sx_nq(DIM, P);
  extern __shared__ double sS[];
  const double *S = a.d.S;
  if (!COEF && a.shared_S) {
    const int n = mf_sx_ref_doubles(DIM, N);
    for (int t = threadIdx.x; t < n; t += blockDim.x) sS[t] = a.d.S[t];
    __syncthreads();
    S = sS;
  }
  for (int r = blockIdx.x * blockDim.x + threadIdx.x; r < a.nrows; r += gridDim.x * blockDim.x) {
    const int64_t r0 = a.rowptr[r], r1 = a.rowptr[r + 1];
    for (int64_t k = r0; k < r1; k++) a.vals[k] = 0.0;
    const int64_t t1 = off[r + 1];
    for (int64_t t = off[r]; t < t1; t++) {
      const long long en = (long long)ent[t];
      const int e = (int)(en / N), i = (int)(en % N);
      double X[(DIM + 1) * DIM];
#pragma unroll
      for (int v = 0; v <= DIM; v++) {
        const int vi = __ldg(a.d.cells + (size_t)e * (DIM + 1) + v);
#pragma unroll
        for (int k = 0; k < DIM; k++) X[v * DIM + k] = __ldg(a.d.coords + (size_t)vi * DIM + k);
      }
      mf_sx_asm_cell c;
      mf_sx_asm_geometry(DIM, X, &c);
      const int *cd = a.d.cell_dofs + (size_t)e * N;
#pragma unroll
      for (int j = 0; j < N; j++) {
        const double v = COEF ? mf_sx_asm_entry_quad(DIM, N, NQ, a.d.B, a.d.G, a.d.w, a.d.coefq + (size_t)e * NQ, &c,
                                                     a.d.a, a.d.b, i, j)
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

typedef void (*sx_asm_fn)(sx_asm_args, const int64_t *, const void *);

template <int DIM, int P>
static sx_asm_fn sx_asm_pick(int wide, int coef)
{
  if (wide) return coef ? (sx_asm_fn)k_sx_asm_rows<DIM, P, long long, true> : (sx_asm_fn)k_sx_asm_rows<DIM, P, long long, false>;
  return coef ? (sx_asm_fn)k_sx_asm_rows<DIM, P, int, true> : (sx_asm_fn)k_sx_asm_rows<DIM, P, int, false>;
}

static sx_asm_fn sx_asm_kernel(int dim, int p, int wide, int coef)
{
  switch (dim * 10 + p) {
  case 21: return sx_asm_pick<2, 1>(wide, coef);
  case 22: return sx_asm_pick<2, 2>(wide, coef);
  case 23: return sx_asm_pick<2, 3>(wide, coef);
  case 24: return sx_asm_pick<2, 4>(wide, coef);
  case 31: return sx_asm_pick<3, 1>(wide, coef);
  case 32: return sx_asm_pick<3, 2>(wide, coef);
  case 33: return sx_asm_pick<3, 3>(wide, coef);
  case 34: return sx_asm_pick<3, 4>(wide, coef);
  default: return NULL;
  }
}

extern "C" void mf_simplex_cuda_asm_free(void *kept)
{
  sx_asm_lists *l = (sx_asm_lists *)kept;
  if (!l) return;
  mf_cuda_free(l->ctx, l->off);
  mf_cuda_free(l->ctx, l->ent);
  free(l);
}

// The lists of the space made on the host (mf_assembly_dof_cells) and copied, narrowed where they fit.
static int sx_asm_lists_make(mf_space s, int N, sx_asm_lists **out)
{
  mf_context ctx = s->ctx;
  const long long nent = (long long)s->ncells * N;
  const int wide = nent >= (1LL << 31);
  const size_t esz = wide ? sizeof(int64_t) : sizeof(int32_t);
  MF_CALL(mf_cuda_require(ctx, sizeof(int64_t) * ((size_t)s->nlocal + 1) + esz * (size_t)nent,
                          "the DoF-to-cell lists of the simplex assembly"));
  int64_t *hoff = NULL, *hent = NULL;
  MF_CALL(mf_assembly_dof_cells(s, NULL, s->ncells, &hoff, &hent));
  sx_asm_lists *l = (sx_asm_lists *)calloc(1, sizeof *l);
  int ierr = l ? 0 : mf_error_set(ctx, MF_ERR_MEMORY, __FILE__, __LINE__, __func__, "out of host memory");
  if (!ierr) {
    l->ctx = ctx, l->wide = wide, l->nent = nent;
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
  if (ierr) {
    mf_simplex_cuda_asm_free(l);
    return ierr;
  }
  *out = l;
  return 0;
}

static int sx_destroy_values(mf_operator A)
{
  mf_cuda_free(A->ctx, A->vals);
  A->vals = NULL;
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
  const sx_asm_fn fn = sx_asm_kernel(d.dim, d.p, 0, 0);
  MF_CHECK(fn, ctx, MF_ERR_UNSUPPORTED, "simplex assembly on the device of degree %d (1..%d)", d.p,
           MF_SIMPLEX_CUDA_MAX_DEGREE);
  const int64_t nnz = s->csr_rowptr[s->nlocal];
  if (!*kept) MF_CALL(sx_asm_lists_make(s, d.N, (sx_asm_lists **)kept));
  const sx_asm_lists *l = (const sx_asm_lists *)*kept;
  char what[160];
  snprintf(what, sizeof what, "the assembled values (%lld nonzeros)", (long long)nnz);
  MF_CALL(mf_cuda_require(ctx, sizeof(double) * ((size_t)nnz + (size_t)s->nlocal), what));
  MF_CALL(mf_cuda_malloc(ctx, (void **)&A->vals, sizeof(double) * (size_t)(nnz ? nnz : 1), what));
  A->ops.destroy = sx_destroy_values;
  sx_asm_args a;
  a.d = d;
  a.nrows = s->nlocal;
  a.rowptr = ds->csr_rowptr;
  a.colidx = ds->csr_colidx;
  a.vals = A->vals;
  const int coef = d.coefq != NULL;
  const size_t sbytes = sizeof(double) * (size_t)mf_sx_ref_doubles(d.dim, d.N);
  a.shared_S = !coef && sbytes <= 48 * 1024;
  const size_t shmem = a.shared_S ? sbytes : 0;
  long long blocks = ((long long)s->nlocal + MF_SX_ASM_THREADS - 1) / MF_SX_ASM_THREADS;
  if (blocks < 1) blocks = 1;
  if (blocks > (1LL << 20)) blocks = 1LL << 20;
  sx_asm_kernel(d.dim, d.p, l->wide, coef)<<<(unsigned)blocks, MF_SX_ASM_THREADS, shmem>>>(a, l->off, l->ent);
  MF_CUDA_LAUNCH_CHECK(ctx, "simplex assembly (rowwise)");
  MF_CUDA_CALL(ctx, cudaDeviceSynchronize()); // the values are complete when the call returns
  return 0;
}
