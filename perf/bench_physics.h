/* bench_physics.h -- mfree-bench's problems of users' physics (perf/bench_physics.c). */
#ifndef MF_BENCH_PHYSICS_H
#define MF_BENCH_PHYSICS_H

#include <stdio.h>

#include "mf_testing.h"

typedef struct {
  const char *problem; /* bp1-physics, bp2, bp3-physics, bp4, bp5-physics, bp6 */
  int dim;
  const int *degrees;
  int ndeg;
  double target;       /* DoFs (nodes x components) */
  const char *device;
  double triad;        /* GB/s, 0 where not measured */
  /* median ms per application (mfree-bench's timing) */
  double (*time_apply)(mf_operator op, mf_vector x, mf_vector y, int *err);
  int mg_float;        /* elasticity-mg: the V-cycle in float (--mg-precision float) */
} mf_bench_physics_opts;

/** Index of a problem of this file, -1 if the name is none of them. */
int mf_bench_physics_problem(const char *name);
/** The rows of o->problem for every degree, printed and written to out (may be NULL); 0, or 1 where a
 *  case failed (reported on stderr). */
int mf_bench_physics_run(mf_context ctx, const mf_bench_physics_opts *o, FILE *out);

#endif
