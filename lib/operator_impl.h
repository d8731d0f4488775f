/* operator_impl.h -- private to the library: operators (lib/operator.c), their type table and what
 * every pointwise operator says of itself. */
#ifndef MF_OPERATOR_IMPL_H
#define MF_OPERATOR_IMPL_H

#include "vector_impl.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ------------------------------------------------------------------ operators */

/** The gallery's entries (lib/physics/mf_gallery.h): what a pointwise operator does at a point. */
typedef enum {
  MF_OP_MASS = 0,
  MF_OP_LAPLACE = 1,
  MF_OP_HELMHOLTZ = 2,
  MF_OP_ELASTICITY = 3,
  MF_OP_PHYSICS = 4 /* the user's pointwise physics (lib/physics/physics.c), its own operator types */
} mf_op_kind;
struct mf_operator_s;
/** The operator in words with its article, for messages ("a shell", "a matrix-free Laplace", "an
 *  assembled (CSR)", "a simplex elasticity"): "... not %s operator". */
const char *mf_operator_kind_name(const struct mf_operator_s *op);

/** 1 if mf_operator_apply overlaps the ghost exchanges with interior cells (several ranks, the
 *  operator has apply_part, ctx->overlap: on unless the environment has MFREE_OVERLAP=0). */
int mf_operator_overlaps(const mf_operator op);

/* The cells of a space in three parts for overlapping the ghost exchanges (mf_space_parts): the first
 * half of the cells that touch no ghost DoF, the cells that touch one, the second half. */
typedef enum { MF_PART_INTERIOR_A = 0, MF_PART_BOUNDARY = 1, MF_PART_INTERIOR_B = 2 } mf_cell_part;

/** The product's steps of one operator on its backend, which the apply flow of lib/operator.c calls
 *  (ghost exchanges and Dirichlet form around them); filled by the type's creator. */
typedef struct {
  int (*apply)(mf_operator op, mf_vector x, mf_vector y); /* y_local <- A_local x_local (no comm) */
  /* y_local += the cells of one part (NULL: the operator applies whole, no overlap) */
  int (*apply_part)(mf_operator op, mf_vector x, mf_vector y, mf_cell_part part);
  int (*diagonal)(mf_operator op, mf_vector d);           /* local contributions (no comm) */
  int (*destroy)(mf_operator op);                         /* what the backend made for the product */
  /* r_local += F(u_local), the residual of a physics' f0 and f1 (no comm); NULL: the operator has none */
  int (*residual)(mf_operator op, mf_vector u, mf_vector r);
  /* the stored data made again with the g-functions at the state u_local (ghosts imported; collective: the ranks
   * agree before the data change); NULL: the operator has no linearisation at a state here */
  int (*set_state)(mf_operator op, mf_vector u);
  int masks_bc; /* apply() zeroes boundary entries of x itself (no copy of x needed) */
} mf_operator_ops;

/** The operator types (lib/operator.c calls only this table; the types fill it):
 *    matrix-free pointwise   per cell family: lib/hex/operator_hex.c (sum factorisation),
 *                            lib/simplex/operator_simplex.c; op->data starts with an mf_pw_op
 *    shell                   lib/operator_shell.c: the user's apply and diagonal
 *    assembled               lib/assembled/assembly.c: a CSR matrix (mf_csr_op)
 *  An entry left NULL is a capability the type lacks: the caller refuses with MF_ERR_UNSUPPORTED and a
 *  message naming the operator (mf_operator_kind_name). */
typedef struct mf_optype_s {
  const char *name;          /* what it is, in messages: "matrix-free", "simplex", "a shell operator", "assembled" */
  const char *const *names;  /* the operator in words, by gallery entry (pointwise types) or names[0] */
  int pointwise;             /* op->data starts with an mf_pw_op (the gallery's description) */
  int dirichlet_form;        /* the type applies op->dirichlet (mf_operator_set_dirichlet); else it refuses */
  /** y <- A x for checked arguments, ierr this rank's failure so far (the exchanges run whatever it is). */
  int (*apply)(mf_operator op, mf_vector x, mf_vector y, int ierr);
  /** d <- the diagonal for checked arguments (the whole computation, exchanges included); NULL: none. */
  int (*diagonal)(mf_operator op, mf_vector d);
  /** Free op->data (after op->ops.destroy). */
  void (*destroy)(mf_operator op);
  /** The same operator (gallery entry, rule, coefficient, Dirichlet form, scatter) on another space:
   *  multigrid's levels. NULL: none. */
  int (*create_like)(mf_operator like, mf_space space, mf_operator *op);
  /** A copy in single precision (float vectors; multigrid's float levels). NULL: none. */
  int (*create_single)(mf_operator like, mf_operator *op);
  /** Check that variant v can assemble op (NULL: the type cannot be assembled). */
  int (*assemble_check)(mf_operator op, mf_assembly_variant v);
  /** The values of the assembled operator A (its sparsity set: mf_csr(A)) from op by variant v. */
  int (*assemble)(mf_operator op, mf_assembly_variant v, mf_operator A);
  /** Evaluate again at a state (Newton's linearisation): empty until nonlinear operators come. */
  int (*linearize)(mf_operator op, mf_vector state);
} mf_optype;

/** What every pointwise operator says of itself (the gallery's description, how it was made); the
 *  first member of the data of the pointwise types, so that generic code (mf_pw) reads it whatever the
 *  family. */
typedef struct {
  mf_op_kind kind;           /* the gallery entry */
  mf_quadrature quad;
  int has_mass, has_grad;    /* which parts the pointwise step uses */
  mf_coefficient_fn coef;    /* coefficient, its user data, a, b (made again on multigrid levels) */
  void *coef_user;
  double coef_a, coef_b;
} mf_pw_op;

struct mf_operator_s {
  mf_context ctx;
  mf_space space;
  const mf_optype *type;
  int dirichlet;
  mf_scatter scatter;
  mf_precision prec;    /* MF_PRECISION_FLOAT: a copy in single precision (mf_operator_create_single) */
  mf_operator_ops ops;  /* the product's steps on the backend */
  mf_vector xwork;      /* x with boundary entries zeroed (Dirichlet form), in the operator's precision */
  void *data;           /* the type's own (pointwise: starting with an mf_pw_op) */
  int refs;             /* the user's handle, preconditioners and solvers made for it */
  int revision;         /* counts the changes of its values (mf_operator_set_state): a preconditioner set up
                           at another revision is set up again */
  mf_vector state;      /* a copy of the state of the last mf_operator_set_state (multigrid restricts it to its
                           coarser levels), else NULL */
};
/** The description of a pointwise operator (op->type->pointwise), else NULL. */
static inline mf_pw_op *mf_pw(const struct mf_operator_s *op)
{
  return op->type->pointwise ? (mf_pw_op *)op->data : NULL;
}
/** The generic fields of an operator of `type` on space, with its data (held from now on: freed by the
 *  type's destroy when the operator goes): context, space (held), type, one reference. Allocates the
 *  object (*op, NULL on failure). Not collective. */
int mf_operator_alloc(mf_space space, const mf_optype *type, void *data, mf_operator *op);
/** The end of a collective creator: the work vector in the operator's precision, the ranks' agreement;
 *  on failure the operator is destroyed (*op NULL) and the code returned on every rank. */
int mf_operator_finish(mf_operator o, int ierr, mf_operator *op);
/** A matrix-free pointwise operator of gallery entry `kind` on space (the public creators' checks, then
 *  the cell family's creator). Collective. */
int mf_operator_create_pointwise(mf_space space, mf_op_kind kind, mf_quadrature quad, double a, double b,
                                 mf_coefficient_fn c, void *user, mf_operator *op);
/** The apply flow (file comment of lib/operator.c) over op->ops: the pointwise and assembled types'
 *  apply and diagonal entries. */
int mf_operator_flow_apply(mf_operator op, mf_vector x, mf_vector y, int ierr);
int mf_operator_flow_diagonal(mf_operator op, mf_vector d);
void mf_operator_retain(mf_operator op);
void mf_operator_release(mf_operator op);
/** The result of a user callback (shell apply, diagonal, preconditioner) called when the thread's
 *  error serial was `serial`: a nonzero code without a new message gets one naming `what`. */
int mf_callback_result(mf_context ctx, int code, unsigned long serial, const char *what);

/** A copy of a matrix-free operator (same space, kind, rule, Dirichlet form and scatter) whose
 *  quadrature data are `like`'s rounded to float: it applies to float vectors only and has no
 *  diagonal (compute that on `like`). Multigrid's levels in single precision. */
int mf_operator_create_single(mf_operator like, mf_operator *op);
/** An operator of the same kind, rule and coefficient as `like`, on another space (its Dirichlet
 *  form too). */
int mf_operator_create_like(mf_operator like, mf_space space, mf_operator *op);

#ifdef __cplusplus
}
#endif
#endif
