/* mf_simplex_backend.h -- what the simplex family asks of a backend (ctx->bk->simplex, lib/base/mf_backend.h):
 * its operators on the device. The cuda backend fills it (lib/cuda/backend.c) with the entry points of
 * lib/cuda/simplex.cu and lib/cuda/simplex_assembly.cu; the cpu backend has none (NULL: the CPU
 * kernels of ops_cpu.c, every degree). */
#ifndef MF_SIMPLEX_BACKEND_H
#define MF_SIMPLEX_BACKEND_H

#ifdef __cplusplus
extern "C" { /* mf_simplex.h declares C functions without a guard of its own */
#endif
#include "mf_simplex.h"
#include "base/mf_backend.h"

struct mf_simplex_cuda_op_s;     /* a device operator, the backend's own */
struct mf_simplex_cuda_sparse_s; /* a sparse matrix on the device, the backend's own */

typedef struct mf_simplex_backend_ops_s {
  int max_degree; /* the highest degree its kernels take (mf_simplex_backend_check) */
  /* the P_p numbering of a mesh (p >= 2) made on the device, d filled as mf_simplex_dofs_create fills it (the
   * same numbers); MF_ERR_MEMORY or MF_ERR_UNSUPPORTED where it cannot (the host's then) */
  int (*dofs_create)(mf_context ctx, const mf_simplex_mesh *m, int degree, mf_simplex_dofs *d);
  /* a scalar operator (y = (a M + b K_c) x) or linear elasticity on the device: all is copied */
  int (*op_create)(mf_context ctx, const mf_simplex_op *op, int tune, struct mf_simplex_cuda_op_s **out);
  int (*elasticity_create)(mf_context ctx, const mf_simplex_mesh *m, const mf_simplex_basis *b,
                           const mf_simplex_dofs *d, double lambda, double mu, int tune,
                           struct mf_simplex_cuda_op_s **out);
  /* y <- A x on device arrays (y zeroed first) */
  int (*apply)(struct mf_simplex_cuda_op_s *op, const double *x, double *y);
  /* a single-precision copy of an operator (b: its basis), and its product on device arrays of floats */
  int (*single)(struct mf_simplex_cuda_op_s *like, const mf_simplex_basis *b, struct mf_simplex_cuda_op_s **out);
  int (*apply_single)(struct mf_simplex_cuda_op_s *op, const float *x, float *y);
  /* the diagonal into the device array d (overwritten) */
  int (*diagonal)(struct mf_simplex_cuda_op_s *op, double *d);
  void (*destroy)(struct mf_simplex_cuda_op_s **op);
  /* the values of a scalar operator into A (the space's sparsity on the device); *kept: the DoF-to-cell
   * lists, made by the first call on the space and kept until asm_free */
  int (*assemble)(struct mf_simplex_cuda_op_s *op, mf_space s, void **kept, mf_operator A);
  void (*asm_free)(void *kept);
  /* multigrid's transfers (transfer_simplex.c): a sparse matrix (CSR, rows x any columns; copied) applied
   * per component on device arrays, y[i nc + k] = sum_e v_e x[c_e nc + k], the Dirichlet entries of space
   * in read as zero and those of space out written as zero (nc: out's components; in NULL: no entry masked, a
   * state's injection) */
  int (*sparse_create)(mf_context ctx, int nrows, const int64_t *rowptr, const int *cols, const double *vals,
                       struct mf_simplex_cuda_sparse_s **out);
  int (*sparse_apply)(struct mf_simplex_cuda_sparse_s *A, mf_space in, mf_space out, const double *x, double *y);
  int (*sparse_apply_single)(struct mf_simplex_cuda_sparse_s *A, mf_space in, mf_space out, const float *x, float *y);
  void (*sparse_free)(struct mf_simplex_cuda_sparse_s **A);
  /* P and P^T of a plan made on the device (kind 0; kind 1 for a P1 coarse space), as sparse_create would
   * hold the host's (NULL, or MF_ERR_MEMORY / MF_ERR_UNSUPPORTED: the host builds them) */
  int (*transfer_build)(mf_context ctx, const mf_simplex_transfer_plan *plan, struct mf_simplex_cuda_sparse_s **P,
                        struct mf_simplex_cuda_sparse_s **PT);
} mf_simplex_backend_ops;

#ifdef __cplusplus
}
#endif
#endif
