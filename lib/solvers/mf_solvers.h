/* mf_solvers.h -- private to the solvers (lib/solvers/) and their tests. */
#ifndef MF_SOLVERS_H
#define MF_SOLVERS_H

#include "mfree_impl.h"

#ifdef __cplusplus
extern "C" {
#endif

/** Tests: on = 0 makes cg iterate step by step (operator, dots, axpy, preconditioner) even where the
 *  fused steps apply (Jacobi or no preconditioner); 1 (default) fuses them. */
void mf_cg_set_fused(mf_cg cg, int on);

#ifdef __cplusplus
}
#endif
#endif
