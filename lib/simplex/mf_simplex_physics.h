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
  void *dev;              /* cuda backend: the compiled kernels and the data on the device */
} mf_simplex_phys;

static inline mf_simplex_phys *mf_sxphys(const struct mf_operator_s *op) { return (mf_simplex_phys *)op->data; }

#ifdef __cplusplus
}
#endif
#endif
