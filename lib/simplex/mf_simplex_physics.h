/* mf_simplex_physics.h -- private to the library: the simplex family's operators of users' pointwise
 * physics (lib/simplex/physics_simplex.c), whose data the backends read (lib/cuda/physics_simplex.cu). */
#ifndef MF_SIMPLEX_PHYSICS_H
#define MF_SIMPLEX_PHYSICS_H

#include "mf_simplex_space.h"
#include "physics/mf_physics_impl.h"

#ifdef __cplusplus
extern "C" {
#endif

/** The data of a physics operator on simplices (op->data). */
typedef struct {
  mf_pw_op pw;            /* first: the description (kind MF_OP_PHYSICS) */
  mf_phys ph;             /* the physics (a copy holding its source) */
  mf_simplex_basis basis; /* the space's degree at the operator's rule */
  mf_phys_layout lay;     /* as stored: nb = 1 (one block) or nc (the device: always the full layout) */
  double *qd;             /* cpu backend: ncells x nq x lay.n */
  float *qdf;             /* cpu backend, the float copy (multigrid's float V-cycle): its data, rounded */
  void *dev;              /* cuda backend: the compiled kernels and the data on the device */
  /* boundary terms (physics_simplex_faces.c): the nbf boundary facets with one, cell by cell
   * (cell_bf_off[e] .. cell_bf_off[e + 1]): the local facet (the one opposite vertex bf_face) and the term;
   * the facet rule (fq points, reference weights fw) at the cell's reference coordinates of each local
   * facet (fx: (dim + 1) x fq x dim) and the basis there (fphi: (dim + 1) x fq x nnodes) */
  int nbf, fq;
  int faces_device; /* a device backend runs the facets' terms itself (every term given as source) */
  int *cell_bf_off, *bf_face, *bf_term;
  double *fw, *fx, *fphi;
  /* a device backend with boundary terms: the device's residual, product and diagonal, to which the host
   * adds the facets' */
  int (*residual_device)(struct mf_operator_s *op, struct mf_vector_s *u, struct mf_vector_s *r);
  int (*apply_device)(struct mf_operator_s *op, struct mf_vector_s *x, struct mf_vector_s *y);
  int (*diagonal_device)(struct mf_operator_s *op, struct mf_vector_s *d);
} mf_simplex_phys;

static inline mf_simplex_phys *mf_sxphys(const struct mf_operator_s *op) { return (mf_simplex_phys *)op->data; }

/* boundary terms (lib/simplex/physics_simplex_faces.c) */
/** The facets with a term (from the mesh's tags and the physics'), the facet rule and its basis tables;
 *  the g0 terms' values checked finite at every facet point (refused, naming the point, otherwise). */
int mf_simplex_phys_faces_setup(struct mf_operator_s *op);
void mf_simplex_phys_faces_free(mf_simplex_phys *h);
/** Cell e's facet terms added into ve (ue, ve: node i, component c at i nc + c): the operator's (g0 times
 *  ue; residual 0) or the residual's (f0 at the cell's values ue; residual 1). Returns 1 where an f0 value
 *  is not finite (*bad_q: the facet point, bad_x its coordinates), 0 otherwise. */
int mf_simplex_phys_faces_cell(struct mf_operator_s *const op, int e, const double *ue, double *ve, int residual,
                               int *bad_q, double *bad_x);
/** Cell e's facet terms of the diagonal added into de (i nc + c). */
void mf_simplex_phys_faces_diagonal(struct mf_operator_s *const op, int e, double *de);
/** Cell e's element matrix added into the CSR values vals (rows node_i nc + c, columns node_j nc + b), from
 *  cell_op (v = A_e u, v zeroed before) on the unit columns (lib/simplex/physics_simplex.c; the cells'
 *  assembly, the facets'). */
void mf_simplex_phys_element_add(struct mf_operator_s *const op, int e,
                                 void (*cell_op)(struct mf_operator_s *const op, int e, const double *u, double *v),
                                 const int64_t *rowptr, const int *colidx, double *vals);
/** The facets' g0 terms of every cell with some, as element matrices, added into the CSR values vals (rows
 *  node_i nc + c, columns node_j nc + b). */
int mf_simplex_phys_faces_assemble(struct mf_operator_s *op, const int64_t *rowptr, const int *colidx, double *vals);
/** The coordinates x[dim] of point q of local facet f of cell e. */
void mf_simplex_phys_facet_point(struct mf_operator_s *const op, int e, int f, int q, double *x);
/** Whether a term has a g0 (Robin): the operator then has facet terms. */
int mf_simplex_phys_faces_has_operator(const mf_simplex_phys *h);

#ifdef __cplusplus
}
#endif
#endif
