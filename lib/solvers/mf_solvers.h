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
/** Newton's trust region (Steihaug): with truncate on and radius finite, x from 0 stays within ||x||_M <= radius (M
 *  the preconditioner, ||x||_M^2 = x^T M x by the recurrences of x and p): a step that would leave the region, or a
 *  direction of negative curvature, goes along p to the edge and the solve stops there (mf_cg_boundary 1; with
 *  negative curvature mf_cg_negative_curvature too). radius <= 0 or INFINITY: off (the default). mf_cg_step_norm:
 *  ||x||_M at the last solve's end (with truncate on). */
void mf_cg_set_radius(mf_cg cg, double radius);
int mf_cg_boundary(mf_cg cg);
double mf_cg_step_norm(mf_cg cg);

#ifdef __cplusplus
}
#endif
#endif
