/* mf_hex_op.h -- private to the library: the hex family's sum-factorised operators: 1D bases and
 * quadrature (lib/hex/basis.c), geometry at quadrature points (lib/hex/geometry.c), quadrature data,
 * the operator data (lib/hex/operator_hex.c) and the CPU kernels (kernels_cpu.c, kernels_otf.c). */
#ifndef MF_HEX_OP_H
#define MF_HEX_OP_H

#include "operator_impl.h"
#include "hex/mf_hex.h"
#include "hanging/mf_hanging.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ------------------------------------------------------------------ 1D bases and quadrature */

/** 1D data of an operator: n1 nodal (GLL) basis functions, nq quadrature points on [0,1]. */
typedef struct mf_basis1d_s {
  int n1, nq;
  int collocated;                 /* quadrature points == nodes: B is the identity */
  double qpts[MF_MAX_NQ], qwts[MF_MAX_NQ];
  double B[MF_MAX_NQ * MF_MAX_N1];  /* B[i*n1+j] = phi_j(q_i) */
  double Bg[MF_MAX_NQ * MF_MAX_N1]; /* Bg[i*n1+j] = phi_j'(q_i) */
  double D[MF_MAX_NQ * MF_MAX_NQ];  /* collocation derivative on the quadrature points */
  /* factors of the sum-factorised diagonal (elementwise products): B.B, B.Bg, Bg.Bg */
  double BB[MF_MAX_NQ * MF_MAX_N1], BG[MF_MAX_NQ * MF_MAX_N1], GG[MF_MAX_NQ * MF_MAX_N1];
} mf_basis1d;

void mf_gauss_lobatto(int n, double *x, double *w); /* on [0,1] */
void mf_gauss(int n, double *x, double *w);         /* on [0,1] */
/** Lagrange basis on nodes (n) at points (m): V[i*n+j] = l_j(pts_i), G = l_j'(pts_i); either may be NULL. */
void mf_lagrange_eval(int n, const double *nodes, int m, const double *pts, double *V, double *G);
int mf_basis1d_setup(int degree, mf_quadrature quad, mf_basis1d *b);

/** Apply a 1D matrix along direction d of a tensor of sizes nin[0..dim-1] (x fastest).
 *  trans = 0: M is m x nin[d], out has m along d. trans = 1: M is nin[d] x m, applies M^T.
 *  add: accumulate into out. */
void mf_tensor_apply(int dim, const int *nin, int d, const double *M, int m, int trans,
                     const double *in, double *out, int add);

/** Interpolate nodal values (n1^dim) to quadrature points (nq^dim) by B sweeps; t1, t2 scratch. */
void mf_tensor_interpolate(int dim, const mf_basis1d *b, const double *u, double *uq, double *t1, double *t2);
/** Transpose: quadrature values (nq^dim) -> nodal (n1^dim) by B^T sweeps. */
void mf_tensor_integrate(int dim, const mf_basis1d *b, const double *vq, double *v, double *t1, double *t2);

/* ------------------------------------------------------------------ geometry (lib/hex/geometry.c) */

typedef struct {
  double *X, *comp, *xk, *t1, *t2;
} mf_geom_work;
int mf_geom_work_init(mf_space s, const mf_basis1d *b, mf_geom_work *gw);
void mf_geom_work_free(mf_geom_work *gw);
/** Isoparametric geometry of a cell at the quadrature points of b, from its geometry nodes
 *  (mf_space_cell_coords): xq[q*dim+k] (xq may be NULL) and jac[9*q + 3*k + l] = d x_k / d xi_l
 *  (xi the cell's reference coordinates in [0,1]^dim). */
void mf_cell_geometry(mf_space s, const mf_basis1d *b, int cell, mf_geom_work *gw, double *xq, double *jac);
/** The quadrature points alone: xq[q*dim+k]. */
void mf_cell_points(mf_space s, const mf_basis1d *b, int cell, mf_geom_work *gw, double *xq);
/** out[i] = f(x[i*dim .. i*dim+dim-1]) for i < n, OpenMP over the points (f must be thread-safe). */
void mf_eval_points(mf_coefficient_fn f, void *user, int dim, size_t n, const double *x, double *out);
double mf_det(int dim, const double *J);
/** Tensor quadrature weight of point q (x fastest). */
double mf_qweight(int dim, const mf_basis1d *b, int q);

/* ------------------------------------------------------------------ quadrature data */

/** Per-quadrature-point data in array-of-structure-of-arrays layout:
 *  cells are grouped in batches of `batch`; within a batch each component is one block holding
 *  all quadrature points of all cells of the batch (cell-major), padded to 128 bytes.
 *    value(cell, comp, q) = data[(cell / batch) * batch_stride + comp * block_stride
 *                                + (cell % batch) * nqp + q]                              */
typedef struct {
  int nqp, ncomp, batch, nbatch;
  size_t block_stride, batch_stride, len;
  double *data; /* host */
} mf_qdata;

static inline size_t mf_qdata_index(const mf_qdata *qd, int cell, int comp, int q)
{
  return (size_t)(cell / qd->batch) * qd->batch_stride + (size_t)comp * qd->block_stride +
         (size_t)(cell % qd->batch) * (size_t)qd->nqp + (size_t)q;
}
/** Cells per batch (and per CUDA block) for (dim, p): the cells-per-block table, docs/performance.md. */
int mf_cells_per_batch(int dim, int degree, int nq);
/** Sizes and strides of op->qd for op->basis and the space (no allocation). */
void mf_qdata_layout(mf_operator op);
/** CPU: allocate and fill op->qd.data: mass part a*c*w|J| (a*w|J| when the operator also has a
 *  gradient part) and gradient part b*c*w|J| J^-1 J^-T (lib/physics/mf_pointwise.h). */
int mf_qdata_setup(mf_operator op, mf_coefficient_fn c, void *user, double a, double b);
/** A host copy of the quadrature data in the layout of op->qd (len doubles), on any backend. */
int mf_operator_qdata_to_host(mf_operator op, double *host);

/* ------------------------------------------------------------------ the hex family's operators */

/** The data of a sum-factorised operator on hexahedra (lib/hex/operator_hex.c; op->data). */
typedef struct {
  mf_pw_op pw;             /* first: the description */
  int cells_per_block;
  mf_kernel_design design; /* as set; mf_operator_design resolves MF_KERNEL_AUTO */
  mf_basis1d basis;
  mf_qdata qd;             /* qd.data: the host data (cpu backend, double operators) */
  mf_geometry geometry;    /* MF_GEOMETRY_ON_THE_FLY: qd.data (and the device copy) freed; Jacobians from the
                              space's node coordinates in the kernel (mf_operator_set_geometry) */
  double *coefq;           /* on the fly, cpu backend: c(x_q), ncells x nqp (cell-major); NULL when c is NULL */
  float *qdf;              /* a single-precision copy's host quadrature data (cpu backend), layout of qd */
  void *dev;               /* backend state: device quadrature data and basis */
} mf_hex_op;
/** The hex data of a sum-factorised operator (no check: the caller knows it has one). */
static inline mf_hex_op *mf_hexop(const struct mf_operator_s *op) { return (mf_hex_op *)op->data; }
/** The type of the hex family's matrix-free operators (lib/hex/operator_hex.c). */
extern const mf_optype mf_optype_hex;
/** The kernel design that applies op on the CUDA backend (MF_KERNEL_AUTO resolved). */
mf_kernel_design mf_operator_design(const mf_operator op);

/** CPU reference kernels (lib/hex/kernels_cpu.c). x, y: local arrays (owned + ghost). */
int mf_kernel_apply_cpu(mf_operator op, const double *x, double *y);
/** The same for a single-precision operator (float arrays; the cell's work in double). */
int mf_kernel_apply_cpu_single(mf_operator op, const float *x, float *y);
/** The cells of one part only (mf_space_parts), adding into y; x, y of the operator's precision. */
int mf_kernel_apply_cpu_part(mf_operator op, const void *x, void *y, mf_cell_part part);
int mf_kernel_diagonal_cpu(mf_operator op, double *d);
/** Apply one cell: ue (npc) -> ve (npc), work of size mf_kernel_work_size. */
void mf_kernel_cell_cpu(mf_operator op, int cell, const double *ue, double *ve, double *work);
size_t mf_kernel_work_size(mf_operator op);
/** On-the-fly geometry, CPU (lib/hex/kernels_otf.c). The cell's quadrature data from its geometry nodes
 *  (mf_space_cell_coords: the continuous coordinates with the cell's constraints) and op->coefq, in
 *  the order of the stored set-up: qv[comp * nqp + q]. work: mf_otf_work_size(op) doubles. */
void mf_otf_cell_qdata(mf_operator op, int cell, double *work, double *qv);
size_t mf_otf_work_size(mf_operator op);
/** The coefficient at the quadrature points of every cell, cq[cell * nqp + q] (the stored set-up's
 *  points and checks). */
int mf_otf_coefficient_cpu(mf_operator op, double *cq);
/** Quadrature data in op->qd's layout (qd.len doubles, allocated here) from the geometry and op->coefq:
 *  the stored data, without calling the coefficient again. */
int mf_otf_qdata_cpu(mf_operator op, double **data);
/** Dense element matrix of a cell (npc x npc, row-major) by direct quadrature, no sum factorisation. */
void mf_element_matrix_dense(mf_operator op, int cell, double *Ae);
/** C^T A_e C of a cell with the hanging-node constraints C, by the cell kernel on unit vectors. */
int mf_element_matrix_constrained(mf_operator op, int cell, double *Ac);
/** The same with the caller's work array of mf_kernel_work_size(op) + 2 npc doubles (no allocation:
 *  for threads that assemble many cells). */
void mf_element_matrix_constrained_work(mf_operator op, int cell, double *Ac, double *work);
/** Diagonal contributions of the cells with hanging nodes from the columns j of C^T A_e C that
 *  mf_hanging_diag_column selects (mf_kernel_diagonal_cpu adds the others). */
int mf_kernel_diagonal_hanging_cpu(mf_operator op, double *d);

#ifdef __cplusplus
}
#endif
#endif
