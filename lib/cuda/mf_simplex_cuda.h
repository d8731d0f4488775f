/* mf_simplex_cuda.h -- the simplex operators on the GPU (lib/cuda/simplex.cu): the CUDA twins of
 * mf_simplex_op_apply_cpu and mf_simplex_elasticity_apply_cpu (lib/simplex/ops_cpu.c). Internal to
 * the library; callable from C. Every function checks its CUDA calls and launches and records
 * failures on the context.
 *
 * A device operator holds the vertex coordinates, the cells' vertex ids, the cell DoFs, the
 * reference tabulations (B, G, weights), the reference matrices and the gradient table, and c(x_q) when there is a
 * coefficient: J, J^-1 and |det J| are computed per cell in the kernel, nothing else per point.
 * Kernels exist for p = 1..4 in 2D and 3D with the basis's default rule (qdegree 2p). */
#ifndef MF_SIMPLEX_CUDA_H
#define MF_SIMPLEX_CUDA_H

#include "operator_impl.h"

#ifdef __cplusplus
extern "C" { /* mf_simplex.h declares C functions without a guard of its own */
#endif
#include "simplex/mf_simplex.h"

#define MF_SIMPLEX_CUDA_MAX_DEGREE 4

typedef struct mf_simplex_cuda_op_s *mf_simplex_cuda_op;
typedef struct mf_simplex_cuda_sparse_s *mf_simplex_cuda_sparse;

/** Strategy: one cell per thread; a tile of cells per block with the threads over (cell, node) and
 *  (cell, point) pairs; or the shared scatter: one cell per thread in tiles of MF_SX_SHARED_TILE consecutive
 *  cells, each tile's DoF values and vertex coordinates gathered once into shared memory, the cells' sums
 *  added there and each of the tile's DoFs added to y once (no atomics per cell in global memory; the
 *  constant-memory reference and gradient forms, c = 1). */
typedef enum { MF_SIMPLEX_CUDA_THREAD = 0, MF_SIMPLEX_CUDA_TILED = 1, MF_SIMPLEX_CUDA_SHARED = 2 } mf_simplex_cuda_strategy;
/** Form of the cell action: values and gradients at the quadrature points (any coefficient), a
 *  combination of reference matrices (c = 1 only; elasticity: one cell per thread with the matrices
 *  in constant memory, where they fit: not 3D p = 4), or the gradient form (c = 1, one cell per
 *  thread: the reference gradient on the P_{p-1} nodes, mf_simplex_gradient_table; scalar operators
 *  with a stiffness part, the mass part by the reference mass matrix; elasticity but in 3D p = 4). */
typedef enum {
  MF_SIMPLEX_CUDA_QUADRATURE = 0,
  MF_SIMPLEX_CUDA_REFERENCE = 1,
  MF_SIMPLEX_CUDA_GRADIENT = 2
} mf_simplex_cuda_form;

/** A launch configuration with what the cost model says of it. */
typedef struct {
  int strategy, form;     /* mf_simplex_cuda_strategy, mf_simplex_cuda_form */
  int tile, threads;      /* cells per block, threads per block (thread strategy: tile = threads) */
  int stage;              /* where the tables (or reference matrices) are read: 0 global memory through
                             L1, 1 copied into shared memory per block, 2 constant memory (reference
                             and gradient forms, one cell per thread, where the matrices fit in the
                             60 KiB of each (dim, p)) */
  size_t shmem;           /* dynamic shared memory per block, bytes */
  int regs, local_bytes;  /* registers per thread and local (spill) bytes, cudaFuncGetAttributes */
  int blocks_per_sm;      /* cudaOccupancyMaxActiveBlocksPerMultiprocessor */
  double occupancy;       /* resident warps / the SM's maximum */
  double bytes_per_cell;  /* the fewest bytes moved, per cell */
  double flops_per_cell;  /* the form's flops per cell */
  double model_us;        /* the model's time per application, microseconds */
  double measured_ms;     /* the measured time per application (tuning), 0 when not measured */
  int tuned;              /* 1: chosen by measurement, 0: by the model, 2: set by the caller */
} mf_simplex_cuda_config;

/** The scalar operator op (mf_simplex_op_create: y = (a M + b K_c) x; with op->mass_coef the mass
 *  weighted by c too) on the device of ctx (a cuda context). The mesh's cells and vertices and the cell
 *  DoFs are device copies shared with the other holders of the same host arrays (mf_cuda_share): the mesh
 *  and the DoFs must stay alive and unchanged until the operator is destroyed (the basis is copied). tune: 1 measures the
 *  candidate configurations on the operator and keeps the fastest; 0 keeps the cost model's choice,
 *  unless the environment variable MFREE_SIMPLEX_TUNE is set to a nonzero value. Refused: degree
 *  above MF_SIMPLEX_CUDA_MAX_DEGREE or a rule other than the default (MF_ERR_UNSUPPORTED), and
 *  device memory short of what the arrays need (MF_ERR_MEMORY, naming bytes needed and free). */
int mf_simplex_cuda_op_create(mf_context ctx, const mf_simplex_op *op, int tune, mf_simplex_cuda_op *out);
/** The same with op's c(x_q) already on the device (coefq_dev: ncells x nq doubles from mf_cuda_malloc, op->coefq
 *  NULL), which the operator adopts (freed here if it is refused). */
int mf_simplex_cuda_op_create_device_coef(mf_context ctx, const mf_simplex_op *op, double *coefq_dev, int tune,
                                          mf_simplex_cuda_op *out);
/** Linear elasticity (mf_simplex_elasticity_apply_cpu) on the device: dim components per DoF,
 *  interleaved. Same refusals, and mf_simplex_elasticity_check's. */
int mf_simplex_cuda_elasticity_create(mf_context ctx, const mf_simplex_mesh *m, const mf_simplex_basis *b,
                                      const mf_simplex_dofs *d, double lambda, double mu, int tune,
                                      mf_simplex_cuda_op *out);
/** y <- A x, x and y device arrays of ndofs (elasticity: ndofs x dim) doubles; y is zeroed first.
 *  Asynchronous on the default stream; the launch is checked. Refused for a single-precision copy. */
int mf_simplex_cuda_apply(mf_simplex_cuda_op op, const double *x, double *y);
/** A single-precision copy of like (multigrid's float V-cycle): like's shared copies of the cells, vertices
 *  and cell DoFs held once more (mf_cuda_retain), its own tables, c(x_q) rounded to float, the kernels instantiated with the vectors and
 *  c(x_q) in float (the geometry, tables and sums stay double), its configuration the cost model's for
 *  4-byte values. b: like's basis (the reference tables of the float kernels' constant memory). like may be
 *  destroyed afterwards. Refused: like a copy already, device memory short. */
int mf_simplex_cuda_single(mf_simplex_cuda_op like, const mf_simplex_basis *b, mf_simplex_cuda_op *out);
/** y <- A x for a single-precision copy, x and y device arrays of floats (as mf_simplex_cuda_apply). */
int mf_simplex_cuda_apply_single(mf_simplex_cuda_op op, const float *x, float *y);
/** Multigrid's transfers between simplex spaces (lib/cuda/simplex_transfer.cu): a sparse matrix of nrows rows
 *  (CSR: rowptr[nrows + 1], cols, vals; all copied) applied per component, y[i nc + k] = sum_e v_e x[c_e nc + k]
 *  with the Dirichlet entries of space in read as zero and those of space out written as zero (x, y device
 *  arrays of in's and out's nlocal; nc = out's components; in NULL: no entry masked). Refused: device memory short (MF_ERR_MEMORY). */
int mf_simplex_cuda_sparse_create(mf_context ctx, int nrows, const int64_t *rowptr, const int *cols, const double *vals,
                                  mf_simplex_cuda_sparse *out);
int mf_simplex_cuda_sparse_apply(mf_simplex_cuda_sparse A, mf_space in, mf_space out, const double *x, double *y);
/** The same on arrays of floats (the float V-cycle; the sums in double). */
int mf_simplex_cuda_sparse_apply_single(mf_simplex_cuda_sparse A, mf_space in, mf_space out, const float *x, float *y);
void mf_simplex_cuda_sparse_free(mf_simplex_cuda_sparse *A);
/** The continuous P_p numbering of m (degree >= 2) made on the device (lib/cuda/simplex_dofs.cu): the same
 *  cell DoFs, counts and boundary marks as mf_simplex_dofs_create's, into host arrays of d. Refused: faces (3D,
 *  p >= 3) of a mesh of more than 2^21 vertices (MF_ERR_UNSUPPORTED), 2^31 DoFs or more, memory short. */
int mf_simplex_cuda_dofs_create(mf_context ctx, const mf_simplex_mesh *m, int degree, mf_simplex_dofs *d);
/** P and P^T of a transfer plan (mf_simplex.h) made on the device: the host's build (transfer_simplex.c) in
 *  kernels, the same entries in the same order (kind 1: the weights to rounding), P^T by a stable sort of P's
 *  owned entries by column. Refused: kind 1 with a coarse degree above 1, 2^31 entries or more
 *  (MF_ERR_UNSUPPORTED), a fine node in no cell (MF_ERR_INCOMPATIBLE), device memory short (MF_ERR_MEMORY): the
 *  caller then builds them on the host (transfer_simplex.c) but for the fine node in no cell. */
int mf_simplex_cuda_transfer_build(mf_context ctx, const mf_simplex_transfer_plan *plan, mf_simplex_cuda_sparse *P,
                                   mf_simplex_cuda_sparse *PT);
/** The diagonal into d (a device array of ndofs (elasticity: ndofs x dim) doubles, overwritten): the exact
 *  sums at the quadrature points, one thread per cell (the host's diagonal of lib/simplex/operator_simplex.c,
 *  to rounding: the cells' parts are added in no fixed order). */
int mf_simplex_cuda_diagonal(mf_simplex_cuda_op op, double *d);
/** The same from and to host arrays (copies through device buffers allocated for the call); _single for a
 *  single-precision copy, from and to host arrays of floats. */
int mf_simplex_cuda_apply_host(mf_simplex_cuda_op op, const double *x, double *y);
int mf_simplex_cuda_apply_host_single(mf_simplex_cuda_op op, const float *x, float *y);
/** The configuration in use. */
int mf_simplex_cuda_get_config(mf_simplex_cuda_op op, mf_simplex_cuda_config *cfg);
/** The candidate configurations of op (its kernels, forms and tile sizes) with the model's
 *  figures, into list (at most max; NULL: count only); returns the count, or -1 on error. */
int mf_simplex_cuda_candidates(mf_simplex_cuda_op op, mf_simplex_cuda_config *list, int max);
/** Use a configuration: strategy and form (the shared scatter: reference or gradient form, constant memory), tile (cells per block of the tiled strategy), threads per
 *  block (0: any) and stage (0, 1, 2 as in mf_simplex_cuda_config; -1: any); among those that match, the
 *  model's best. Refused when the form does not apply (reference or gradient with a coefficient,
 *  gradient for a mass operator or for elasticity in 3D p = 4) or no such block fits. */
int mf_simplex_cuda_set_config(mf_simplex_cuda_op op, int strategy, int form, int tile, int threads, int stage);
/** Measure every candidate (reps timed applications each, CUDA events, after a warm-up) on device
 *  buffers of the operator's size and keep the fastest. */
int mf_simplex_cuda_tune(mf_simplex_cuda_op op, int reps);
/** DoFs (scalar unknowns: ndofs x components) of the operator. */
long long mf_simplex_cuda_size(mf_simplex_cuda_op op);
void mf_simplex_cuda_destroy(mf_simplex_cuda_op *op);

/** The device arrays of an operator (read only; they live as long as it does), for the assembly. */
typedef struct {
  int dim, p, N, nq, ncells, elasticity;
  double a, b;
  int mass_coef;          /* the mass term weighted by coefq too (the mass operator) */
  const double *coords;   /* nv x dim */
  const int *cells;       /* ncells x (dim + 1) */
  const int *cell_dofs;   /* ncells x N */
  const double *B, *G, *w; /* the rule's tables */
  const double *S;        /* reference matrices (scalar operators) */
  const double *coefq;    /* ncells x nq, or NULL */
  /* the shared scatter's tiles (mf_simplex_tiles' arrays, made on the device; ntiles 0: none) */
  int ntiles, tile;
  const int *tile_off, *tile_dofs, *tile_voff, *tile_verts;
  const unsigned short *cell_ldofs, *cell_lverts;
} mf_simplex_cuda_arrays;
int mf_simplex_cuda_get_arrays(mf_simplex_cuda_op op, mf_simplex_cuda_arrays *a);

/** Assembly (lib/cuda/simplex_assembly.cu): the values of the scalar operator op (mass, Laplace,
 *  Helmholtz) of space s into A (its rows and columns: the space's sparsity, on the device already,
 *  mf_cuda_csr_pattern), rowwise as the CPU twin (lib/simplex/mf_simplex_asm.h). A->vals is allocated
 *  here (device memory checked first) and freed by A->ops.destroy. *kept: the DoF-to-cell lists on the
 *  device, made by the first call on the space and kept (mf_simplex_cuda_asm_free). Returns when the
 *  values are done. */
int mf_simplex_cuda_assemble(mf_simplex_cuda_op op, mf_space s, void **kept, mf_operator A);
void mf_simplex_cuda_asm_free(void *kept);

/** Device memory for callers written in C (tests, benchmarks): counted on ctx like the library's. */
int mf_simplex_cuda_alloc(mf_context ctx, size_t bytes, double **p);
void mf_simplex_cuda_free(mf_context ctx, double *p);
/** Copies: to_device 1 from host src to device dst, 0 from device src to host dst. */
int mf_simplex_cuda_copy(mf_context ctx, double *dst, const double *src, size_t n, int to_device);
int mf_simplex_cuda_copy_bytes(mf_context ctx, void *dst, const void *src, size_t bytes, int to_device);
/** The shared scatter's tiles of ni ids per cell (lib/cuda/simplex_tiles.cu; ids: device, ncells x ni, the cells' DoFs
 *  or vertices), tiles of MF_SX_SHARED_TILE cells: *off (ntiles + 1), *list (each tile's distinct ids ascending) and
 *  *loc (each cell entry's index in its tile's list) allocated on the device; *maxn the most ids of a tile, *total
 *  their sum. The same arrays as mf_simplex_tiles. Refused: ni not a simplex node count (3, 4, 6, 10, 15, 20, 35). */
int mf_simplex_cuda_tile_ids(mf_context ctx, const int *ids, int ncells, int ni, int **off, int **list,
                             unsigned short **loc, int *maxn, long long *total, const char *what);

#ifdef __cplusplus
}
#endif
#endif
