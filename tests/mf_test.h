/* mf_test.h -- tiny helpers shared by the test programs: checks that count failures, and a call
 * macro that stops the test with the library's message. Tests are silent on success. */
#ifndef MF_TEST_H
#define MF_TEST_H

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mfree.h"

static int t_failures = 0;

#define T_CHECK(cond, ...)                                        \
  do {                                                            \
    if (!(cond)) {                                                \
      fprintf(stderr, "FAIL %s:%d: ", __FILE__, __LINE__);        \
      fprintf(stderr, __VA_ARGS__);                               \
      fprintf(stderr, "\n");                                      \
      t_failures++;                                               \
    }                                                             \
  } while (0)

#define T_CALL(expr)                                                                          \
  do {                                                                                        \
    int t_ierr_ = (expr);                                                                     \
    if (t_ierr_) {                                                                            \
      fprintf(stderr, "FAIL %s:%d: %s returned %d: %s\n", __FILE__, __LINE__, #expr, t_ierr_, \
              mf_last_error_message());                                                       \
      MPI_Abort(MPI_COMM_WORLD, 1);                                                           \
    }                                                                                         \
  } while (0)

/* A call that must fail with `code` and a message containing `substr`. */
#define EXPECT(expr, code, substr)                                                                     \
  do {                                                                                                 \
    int e_ = (expr);                                                                                   \
    const char *m_ = mf_last_error_message();                                                          \
    T_CHECK(e_ == (code), "%s returned %d, expected %d (%s)", #expr, e_, (int)(code), m_);             \
    T_CHECK(strstr(m_, substr) != NULL, "%s: message '%s' does not contain '%s'", #expr, m_, substr); \
  } while (0)

/* Exit code of a test: 0 if every check passed on every rank. */
static int t_finish(void)
{
  int all = t_failures;
  MPI_Allreduce(MPI_IN_PLACE, &all, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  MPI_Finalize();
  return all ? 1 : 0;
}

/* MFREE_TEST_REQUIRE_GPU=1 (set on GPU machines): a GPU must be usable, so that a broken driver or
 * device shows as failures, never as skipped tests. */
static int t_require_gpu(void)
{
  const char *v = getenv("MFREE_TEST_REQUIRE_GPU");
  return v && !strcmp(v, "1");
}

/* Where backend 'cuda' is not usable (mf_cuda_status), end the test saying why: exit 77 (skipped), or
 * 1 (failed) under MFREE_TEST_REQUIRE_GPU=1. Called after MPI_Init. */
static void t_need_cuda(void)
{
  mf_cuda_state state;
  const char *why = "";
  if (mf_cuda_status(&state, &why) == 0 && state == MF_CUDA_USABLE) return;
  const int fail = t_require_gpu();
  fprintf(stderr, "%s: backend 'cuda' not usable here%s: %s\n", fail ? "FAIL" : "SKIP",
          fail ? " and MFREE_TEST_REQUIRE_GPU=1" : "", why);
  MPI_Finalize();
  exit(fail ? 1 : 77);
}

/* Backend from argv[1] ("cpu" default). A "cuda" run without a usable GPU exits 77 (skipped), or
 * fails under MFREE_TEST_REQUIRE_GPU=1 (t_need_cuda). */
static const char *t_backend(int argc, char **argv)
{
  const char *be = argc > 1 ? argv[1] : "cpu";
  if (!strcmp(be, "cuda")) t_need_cuda();
  return be;
}

static double t_ljungkvist(const double *x, int dim, void *user)
{
  (void)user;
  double r2 = 0.0;
  for (int k = 0; k < dim; k++) r2 += x[k] * x[k];
  return 1.0 / (0.05 + 2.0 * r2);
}

/* Refine the cells whose centre lies within 0.3 of (0.4, 0.45, 0.5): hanging faces and, in 3D,
 * hanging edges on the cube meshes. */
static int t_refine_ball(const double *x, int dim, int level, void *user)
{
  (void)level;
  (void)user;
  const double c[3] = {0.4, 0.45, 0.5};
  double d = 0.0;
  for (int k = 0; k < dim; k++) d += (x[k] - c[k]) * (x[k] - c[k]);
  return d < 0.09 ? 1 : 0;
}

/* A mesh for tests: name/dim/level as mf_mesh_create, then `adapt` rounds (ball: shells; other
 * meshes: t_refine_ball). */
static void t_mesh(mf_context ctx, const char *name, int dim, int level, int adapt, mf_mesh *mesh)
{
  T_CALL(mf_mesh_create(ctx, name, dim, level, mesh));
  if (!strcmp(name, "ball")) T_CALL(mf_mesh_refine_shells(*mesh, adapt));
  else
    for (int k = 0; k < adapt; k++) T_CALL(mf_mesh_adapt(*mesh, t_refine_ball, NULL));
}

/* The ball for the GPU-against-CPU tests: uniform at `level`, or (adapt) level 1 with the cells near
 * a point refined once: hanging faces and edges in 2D and 3D on few cells. */
static void t_ball(mf_context ctx, int dim, int level, int adapt, mf_mesh *mesh)
{
  T_CALL(mf_mesh_create(ctx, "ball", dim, adapt ? 1 : level, mesh));
  if (adapt) T_CALL(mf_mesh_adapt(*mesh, t_refine_ball, NULL));
}

#endif
