/* pc_impl.h -- private to the preconditioners (lib/mg): the mf_pc object and its type table.
 *
 * Who calls whom (no circle; each file calls only the ones below it):
 *
 *   pc_registry.c   mf_pc_create: the kind -> type table (none, Jacobi, Chebyshev, multigrid)
 *        |
 *   mg.c            MF_PC_MULTIGRID: hierarchy, V-cycle, its settings and queries; smoothers and
 *        |          coarse solver are Chebyshev preconditioners made and run through pc.c
 *   shell.c  chebyshev.c  jacobi.c      MF_PC_SHELL, MF_PC_CHEBYSHEV, MF_PC_NONE and MF_PC_JACOBI
 *        |
 *   pc.c            the generic functions (set-up, apply, references, ...): they call the table only
 *
 * `struct mf_pc_s` holds what every type shares; a type's own data follows it in the same allocation
 * (type->data_size bytes, zeroed, then type->init). */
#ifndef MF_PC_IMPL_H
#define MF_PC_IMPL_H

#include "operator_impl.h"

#include <stddef.h>

typedef struct mf_pc_type_s mf_pc_type;

/** References to a preconditioner: a cg holds the one set by mf_cg_set_pc (lib/mg/pc.c). */
void mf_pc_retain(mf_pc pc);
void mf_pc_release(mf_pc pc);
/** The operator a preconditioner was made for (lib/mg/pc.c). */
mf_operator mf_pc_operator(mf_pc pc);
/** 1 if the set-up pc is z = dinv .* r (Jacobi: *dinv its inverse diagonal) or z = r (none: *dinv
 *  NULL), 0 otherwise: CG's fused steps apply it themselves. The rest of the preconditioners' private
 *  interface, their type table, is lib/mg/pc_impl.h. */
int mf_pc_pointwise(mf_pc pc, mf_vector *dinv);

/** A preconditioner type: what differs between none, Jacobi, Chebyshev, multigrid and shell. The
 *  generic functions of pc.c check the arguments and call these. */
struct mf_pc_type_s {
  mf_pc_kind kind;
  const char *name;  /* in words with its enumerator, for messages: "Jacobi (MF_PC_JACOBI)" */
  size_t data_size;  /* bytes of the type's data (mf_pc_s.data) */
  /** Refuse an operator this type cannot precondition, before anything is made (NULL: any). */
  int (*check)(mf_operator op);
  /** Defaults of the type's data (NULL: all zero). */
  void (*init)(mf_pc pc);
  /** The work before the first application (NULL: none). Collective; pc->ready follows its result. */
  int (*setup)(mf_pc pc);
  /** z <- M^-1 r for checked arguments, set up. */
  int (*apply)(mf_pc pc, mf_vector r, mf_vector z);
  /** Free what the type's data holds (NULL: nothing), not the data itself. */
  void (*destroy)(mf_pc pc);
  /** 1 if the set-up pc is z = dinv .* r (*dinv) or z = r (*dinv NULL), for CG's fused steps (NULL: 0). */
  int (*pointwise)(mf_pc pc, mf_vector *dinv);
  /** Move the type's vectors to op, a float copy of the operator (NULL: refused); pc.c swaps pc->op. */
  int (*to_single)(mf_pc pc, mf_operator op);
  /** mf_pc_keep for the preconditioners this one holds (multigrid: its levels' smoothers; NULL: none). */
  void (*keep)(mf_pc pc, int on);
};

struct mf_pc_s {
  mf_context ctx;
  mf_operator op;          /* a reference held; after mf_pc_to_single its float copy */
  const mf_pc_type *type;
  int refs;                /* the user's handle and the cgs that use it (mf_cg_set_pc) */
  int ready;               /* set up (a setting that changes the set-up clears it) */
  int op_revision;         /* the operator's revision at the set-up (mf_operator_set_state changes it) */
  int kept;                /* the set-up kept at the operator's new revisions (mf_pc_keep) */
  max_align_t data[];      /* the type's data, type->data_size bytes */
};

/* the types (each defined in its file) */
extern const mf_pc_type mf_pc_type_none, mf_pc_type_jacobi; /* jacobi.c */
extern const mf_pc_type mf_pc_type_chebyshev;               /* chebyshev.c */
extern const mf_pc_type mf_pc_type_multigrid;               /* mg.c */
extern const mf_pc_type mf_pc_type_shell;                   /* shell.c */

/** Keep (on = 1) the set-up of a ready preconditioner when its operator takes a new state, or set it up again at
 *  the next use as before (0) (pc.c; Newton's lagged preconditioner: the set-up of an earlier Jacobian, for
 *  Jacobians that moved little). With the preconditioners it holds (type->keep). */
void mf_pc_keep(mf_pc pc, int on);

/** A preconditioner of the given type for op (pc.c): type->check, then one zeroed allocation of the
 *  object and its data (collective), type->init. */
int mf_pc_create_type(mf_operator op, const mf_pc_type *type, mf_pc *pc);

/** D^-1 of op into *dinv, made in double if NULL (jacobi.c; Jacobi and Chebyshev). Collective: the
 *  allocation is agreed on before the diagonal; a failure after it is this rank's (agree on it). */
int mf_pc_inverse_diagonal(mf_operator op, mf_vector *dinv);

/** Make a Chebyshev preconditioner a solver over the whole estimated spectrum: the interval
 *  [0.9 lambda_min, 1.2 lambda_max] and the degree that reduces the error by `reduction` there
 *  (multigrid's coarse level: linear and symmetric, unlike an inexact CG; chebyshev.c). */
int mf_pc_chebyshev_solver(mf_pc pc, double reduction);
/** A Chebyshev smoother of a Jacobian at a state (multigrid's finer levels inside Newton, where the tangent may be
 *  indefinite): its eigenvalue estimate stops at a negative curvature met after its first step and keeps the steps
 *  before (the smoother acts on the positive part); without it such an operator is refused (chebyshev.c). */
int mf_pc_chebyshev_indefinite(mf_pc pc);
/** Move a set-up preconditioner to op, a single-precision copy of its operator
 *  (mf_operator_create_single): its vectors become float, its eigenvalue estimates stay. Chebyshev
 *  only (the type's to_single entry; pc.c). */
int mf_pc_to_single(mf_pc pc, mf_operator op);

#endif
