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
/** Newton's inner solves: on = 1 makes cg stop at a direction of negative curvature (p^T A p <= 0, an indefinite
 *  Jacobian) instead of failing: x is the iterate so far, or at the first iteration the preconditioned residual
 *  times r^T z / |p^T A p| (1 where p^T A p = 0) (truncated CG); mf_cg_negative_curvature then says so until the next solve. */
void mf_cg_set_truncate(mf_cg cg, int on);
int mf_cg_negative_curvature(mf_cg cg);

#ifdef __cplusplus
}
#endif
#endif
