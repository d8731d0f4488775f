/* bench_simplex.h -- the simplex problems of mfree-bench (perf/bench_simplex.c): the GPU action
 * kernels of lib/cuda/simplex.cu on the built-in box meshes. Built with CUDA only. */
#ifndef MF_BENCH_SIMPLEX_H
#define MF_BENCH_SIMPLEX_H

#include <stdio.h>

#include "mfree.h"

/** The simplex problems by index: simplex-mass, simplex-laplace, simplex-helmholtz, simplex-elasticity. */
#define MF_BENCH_SIMPLEX_NPROBLEMS 4
extern const char *const mf_bench_simplex_problems[MF_BENCH_SIMPLEX_NPROBLEMS];

typedef struct {
  int problem;          /* 0..3 (mf_bench_simplex_problems), -1: all four */
  int dim;              /* 2 or 3 */
  const int *degrees;   /* 1..MF_SIMPLEX_CUDA_MAX_DEGREE each */
  int ndeg;
  double min_dofs, max_dofs; /* the size targets, nsizes of them, geometric between the two */
  int nsizes;
  int reps, tune;
  const char *device;   /* the device's name, the first column */
  double triad, fp64;   /* the ceilings measured in the same run: GB/s, GFLOP/s */
  void (*progress)(int i, int n, const char *what); /* "case i of n" (may be NULL) */
  int coefficient;      /* 1: the scalar problems with c(x) = 1/(0.05 + 2|x|^2) per quadrature point (the
                           quadrature form; elasticity keeps none); 0: c = 1 */
} mf_bench_simplex_opts;

/** Runs the cases of o on ctx (a cuda context): prints the header, a "# model" line and a row per case
 *  on stdout, the header and the rows into out (may be NULL). Failed cases are reported on stderr and
 *  skipped; returns their number. */
int mf_bench_simplex_run(mf_context ctx, const mf_bench_simplex_opts *o, FILE *out);

#endif
