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
  double *qd;          /* cpu backend: ncells x nqp x lay.n, the point's entries cell by cell */
  float *qdf;          /* a single-precision copy's (cpu backend): the same rounded to float */
  void *dev;           /* cuda backend: the compiled kernels and the stored data on the device */
  mf_operator inner;   /* data of the built-ins' shape: the built-in operator that applies them (NULL: none) */
} mf_hex_phys;

static inline mf_hex_phys *mf_hexphys(const struct mf_operator_s *op) { return (mf_hex_phys *)op->data; }

#ifdef __cplusplus
}
#endif
#endif
