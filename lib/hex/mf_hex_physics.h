/* mf_hex_physics.h -- private to the library: the hex family's operators of users' pointwise physics
 * (lib/hex/physics_hex.c), whose data the backends read (lib/cuda/physics.cu). */
#ifndef MF_HEX_PHYSICS_H
#define MF_HEX_PHYSICS_H

#include "hex/mf_hex_op.h"
#include "physics/mf_physics_impl.h"

#ifdef __cplusplus
extern "C" {
#endif

/** The data of a physics operator on hexahedra (op->data). */
typedef struct {
  mf_pw_op pw;         /* first: the description (kind MF_OP_PHYSICS) */
  mf_phys ph;          /* the physics (a copy holding its source) */
  mf_basis1d basis;
  int nqp;
  mf_phys_layout lay;  /* as stored: nb = 1 (one block) or nc */
  int fused;           /* cuda: the geometry stored (dim^2 + 1 + dim per point), the g-functions run at each application */
  double *qd;          /* cpu backend: ncells x nqp x lay.n, the point's entries cell by cell */
  float *qdf;          /* a single-precision copy's (cpu backend): the same rounded to float */
  void *dev;           /* cuda backend: the compiled kernels and the stored data on the device */
  mf_operator inner;   /* data of the built-ins' shape: the built-in operator that applies them (NULL: none) */
  /* a device backend with boundary terms: the device's residual (f0 terms), product and diagonal (g0
   * terms), to which the host adds the faces' */
  int (*residual_device)(struct mf_operator_s *op, struct mf_vector_s *u, struct mf_vector_s *r);
  int (*apply_device)(struct mf_operator_s *op, struct mf_vector_s *x, struct mf_vector_s *y);
  int (*diagonal_device)(struct mf_operator_s *op, struct mf_vector_s *d);
  /* boundary terms (lib/hex/physics_faces.c): the nbf faces with one, cell by cell (cell_bf_off[e] ..
   * cell_bf_off[e + 1]): their cell, face number and term */
  int nbf;
  int *cell_bf_off, *bf_cell, *bf_face, *bf_term;
  int faces_device; /* a device backend runs the faces' terms itself (every term given as source) */
} mf_hex_phys;

static inline mf_hex_phys *mf_hexphys(const struct mf_operator_s *op) { return (mf_hex_phys *)op->data; }

/* boundary terms (lib/hex/physics_faces.c) */
/** The faces with a term on this rank (from the space's boundary faces and the physics' tags). */
int mf_hex_phys_faces_setup(mf_operator op);
void mf_hex_phys_faces_free(mf_hex_phys *h);
/** 1 where some term has g0 (the operator has face terms). */
int mf_hex_phys_faces_has_operator(const mf_hex_phys *h);
/** g0's values checked finite at every face point (after set-up). */
int mf_hex_phys_faces_check(const mf_operator op);
/** The points of boundary face entry k (its cell's face bf_face[k]), 2 dim + 1 values each, point by point:
 *  x, the outward unit normal, W (the Gauss weights times the area element); the host's coordinates made
 *  (mf_space_host_coords). For a device's faces kernel. */
void mf_hex_phys_face_points(const mf_operator op, int k, double *X, double *out);
/** Cell e's face terms added into ve (nc x npc) from its values ue (constraints applied): the operator's
 *  (g0) or the residual's (f0; an error where a value is not finite). X: npc x dim doubles of work. */
void mf_hex_phys_faces_apply(const mf_operator op, int e, const double *ue, double *ve, double *X);
int mf_hex_phys_faces_residual(const mf_operator op, int e, const double *ue, double *ve, double *X);
/** Cell e's constrained element matrix C^T A_e C added into the CSR values vals (rows node_i nc + c, columns
 *  node_j nc + b): A_e from cell_op on the constrained unit columns (v zeroed before; work: cell_op's),
 *  u and col nc npc doubles of work (lib/hex/physics_hex.c; the cells' assembly, the faces'). */
void mf_hex_phys_element_add(const mf_operator op, int e,
                             void (*cell_op)(const mf_operator op, int e, const double *u, double *v, double *work),
                             double *u, double *col, double *work, const int64_t *rowptr, const int *colidx,
                             double *vals);
/** The faces' g0 terms of every cell with some, as constrained element matrices, added into the CSR values
 *  vals (rowptr, colidx: the space's pattern; rows node_i nc + c, columns node_j nc + b). */
int mf_hex_phys_faces_assemble(struct mf_operator_s *op, const int64_t *rowptr, const int *colidx, double *vals);

#ifdef __cplusplus
}
#endif
#endif
