/* mf_mg.h -- private to the multigrid code (lib/mg) and its tests: transfers between the levels. */
#ifndef MF_MG_H
#define MF_MG_H

#include "mfree_impl.h"

#ifdef __cplusplus
extern "C" {
#endif

/** Transfer between a coarse and a fine space: either the same mesh and a lower degree (p-transfer:
 *  in-cell interpolation l_j^coarse(x_i^fine) along each direction), or the same degree on a mesh
 *  whose cells are the fine mesh's cells or their parents (h-transfer: the children's nodes by the
 *  1D matrices of the hanging-node code, P_h with h the child's bit per direction).
 *  Prolongation v = P u: the coarse cell's values (constraints and Dirichlet zeros applied) are
 *  interpolated to the fine nodes, and each fine DoF takes the value of one fine cell that has it at
 *  an own position (its owner: mf_space dof_owner), on each rank; several ranks' values are averaged
 *  (the same up to rounding). Restriction is the exact transpose. Dirichlet DoFs of both spaces are
 *  zero in P's input and output (P = Z_f P Z_c), so R = P^T keeps them zero too. */
typedef struct mf_transfer_s *mf_transfer;

struct mf_transfer_s {
  mf_space coarse, fine;
  int kind;           /* 0: p-transfer, 1: h-transfer */
  mf_precision prec;  /* of the vectors it takes */
  int *first;         /* ncells_coarse + 1: fine cells first[K] .. first[K+1]-1 of coarse cell K */
  int8_t *child;      /* ncells_fine: child id in the coarse cell, -1 if it is the coarse cell */
  double M[2][MF_MAX_N1 * MF_MAX_N1]; /* 1D matrices, n1_fine x n1_coarse: p: M[0]; h: P_0, P_1 */
  mf_vector count_inv; /* fine: 1 / (ranks with an owner cell of the DoF) (NULL on one rank) */
  mf_vector work;     /* fine work vector (restriction) */
  void *dev;          /* backend state */
  /* a family's own transfer (simplex: lib/simplex/transfer_simplex.c): P, P^T (after the generic steps'
   * checks and imports) and its data's release; NULL: the hex cell work of transfer.c */
  int (*prolongate_fn)(struct mf_transfer_s *tr, mf_vector coarse, mf_vector fine);
  int (*restrict_fn)(struct mf_transfer_s *tr, mf_vector fine, mf_vector coarse);
  /* the fine function's values at the coarse nodes (a state on a coarser level: mf_transfer_inject), double
   * vectors, the fine ghosts imported; NULL: not made for the family */
  int (*inject_fn)(struct mf_transfer_s *tr, mf_vector fine, mf_vector coarse);
  void (*free_fn)(struct mf_transfer_s *tr);
  void *fdata;
};

/** A transfer for vectors of precision prec (the spaces' family's: hex here, simplices in transfer_simplex.c). */
int mf_transfer_create(mf_space coarse, mf_space fine, mf_precision prec, mf_transfer *tr);
/** The positions of the fine cells that own their DoF (component 0's dof_owner and dof_pos): bit k of
 * (*own)[j * words + k / 32] set where fine cell j owns position k; words = ceil(npc / 32). The host's
 * threads share the cells. The caller frees *own. */
int mf_transfer_own_bits(const mf_transfer tr, int words, uint32_t **own);
/** fine = P coarse (owned entries; the coarse ghosts are imported) */
int mf_transfer_prolongate(mf_transfer tr, mf_vector coarse, mf_vector fine);
/** coarse = P^T fine (owned entries) */
int mf_transfer_restrict(mf_transfer tr, mf_vector fine, mf_vector coarse);
void mf_transfer_destroy(mf_transfer *tr);
/** coarse = the fine function interpolated at the coarse nodes, the Dirichlet entries included (not P^T: a state,
 *  not a residual; exact where the coarse space is in the fine one's). Double vectors of any backend (the values
 *  taken to the host and back). MF_ERR_UNSUPPORTED where the family has none. Collective. */
int mf_transfer_inject(mf_transfer tr, mf_vector fine, mf_vector coarse);

#ifdef __cplusplus
}
#endif
#endif
