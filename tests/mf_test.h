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

/* ---- 1 rank against N ranks: vectors gathered on rank 0 by the positions of their DoFs ----
 * A vector computed on N ranks and the same vector computed on 1 rank number their DoFs differently;
 * the DoFs' positions do not depend on the partition. t_bypos_create gathers, on rank 0 of the
 * context's communicator, the position of every owned DoF (mf_vector_interpolate of x, y, z: the
 * public interface only) and sorts them lexicographically, the coordinates rounded to 1e-9 (the
 * rounding of mf_vector_set_random) so that the last bits of a position computed from another cell
 * do not change the order; t_bypos_gather then gives a vector's owned entries in that order. Two
 * positions that coincide (a space of several components, or a numbering that lists a DoF twice)
 * cannot be lined up: the test stops there, naming the position. Owned DoFs are the independent ones
 * (hanging DoFs are no entries), so continuous Q_p spaces, adaptive or not, have unique positions. */
typedef struct {
  MPI_Comm comm;        /* the context's communicator */
  int rank, nowned;     /* this rank's owned entries */
  int64_t n;            /* entries over all ranks */
  int *counts, *displs; /* rank 0: owned entries per rank, and where each rank's start, rank by rank */
  int64_t *order;       /* rank 0: order[k] = index (rank by rank) of the k-th entry by position */
  double *x;            /* rank 0: the positions in that order, 3 per entry */
} t_bypos;

typedef struct {
  int64_t key[3]; /* the coordinates in units of 1e-9 */
  int64_t index;  /* rank by rank */
} t_bypos_entry;

static int t_bypos_cmp(const void *a, const void *b)
{
  const t_bypos_entry *p = a, *q = b;
  for (int k = 0; k < 3; k++)
    if (p->key[k] != q->key[k]) return p->key[k] < q->key[k] ? -1 : 1;
  return 0;
}

static double t_bypos_coord(const double *x, int dim, void *user)
{
  const int k = *(const int *)user;
  return k < dim ? x[k] : 0.0;
}

/* This rank's owned entries of v, gathered on rank 0 rank by rank (NULL on the other ranks). */
static double *t_bypos_gather_raw(const t_bypos *bp, mf_vector v)
{
  double *mine = malloc(sizeof(double) * ((size_t)bp->nowned + 1)), *all = NULL;
  T_CALL(mf_vector_get_values(v, mine));
  if (bp->rank == 0) all = malloc(sizeof(double) * ((size_t)bp->n + 1));
  MPI_Gatherv(mine, bp->nowned, MPI_DOUBLE, all, bp->counts, bp->displs, MPI_DOUBLE, 0, bp->comm);
  free(mine);
  return all;
}

/* The layout by position of the space's vectors (collective on the context's communicator). */
static void t_bypos_create(mf_context ctx, mf_space space, t_bypos *bp)
{
  memset(bp, 0, sizeof *bp);
  T_CALL(mf_context_comm(ctx, &bp->comm));
  MPI_Comm_rank(bp->comm, &bp->rank);
  int size;
  MPI_Comm_size(bp->comm, &size);
  T_CALL(mf_space_local_sizes(space, &bp->nowned, NULL));
  if (bp->rank == 0) {
    bp->counts = malloc(sizeof(int) * (size_t)size);
    bp->displs = malloc(sizeof(int) * (size_t)size);
  }
  MPI_Gather(&bp->nowned, 1, MPI_INT, bp->counts, 1, MPI_INT, 0, bp->comm);
  if (bp->rank == 0)
    for (int r = 0; r < size; r++) {
      bp->displs[r] = r ? bp->displs[r - 1] + bp->counts[r - 1] : 0;
      bp->n += bp->counts[r];
    }
  double *coord[3];
  mf_vector c;
  T_CALL(mf_vector_create(space, &c));
  for (int k = 0; k < 3; k++) {
    T_CALL(mf_vector_interpolate(c, t_bypos_coord, &k));
    coord[k] = t_bypos_gather_raw(bp, c);
  }
  mf_vector_destroy(&c);
  if (bp->rank == 0) {
    t_bypos_entry *e = malloc(sizeof *e * ((size_t)bp->n + 1));
    for (int64_t i = 0; i < bp->n; i++) {
      for (int k = 0; k < 3; k++) e[i].key[k] = (int64_t)llround(coord[k][i] * 1e9);
      e[i].index = i;
    }
    qsort(e, (size_t)bp->n, sizeof *e, t_bypos_cmp);
    bp->order = malloc(sizeof(int64_t) * ((size_t)bp->n + 1));
    bp->x = malloc(sizeof(double) * 3 * ((size_t)bp->n + 1));
    for (int64_t i = 0; i < bp->n; i++) {
      bp->order[i] = e[i].index;
      for (int k = 0; k < 3; k++) bp->x[3 * i + k] = coord[k][e[i].index];
      if (i > 0 && !t_bypos_cmp(&e[i - 1], &e[i])) {
        fprintf(stderr, "FAIL %s:%d: two DoFs at the position (%.12g, %.12g, %.12g): vectors cannot be lined up by "
                        "position\n", __FILE__, __LINE__, bp->x[3 * i], bp->x[3 * i + 1], bp->x[3 * i + 2]);
        MPI_Abort(MPI_COMM_WORLD, 1);
      }
    }
    free(e);
  }
  for (int k = 0; k < 3; k++) free(coord[k]);
}

static void t_bypos_destroy(t_bypos *bp)
{
  free(bp->counts);
  free(bp->displs);
  free(bp->order);
  free(bp->x);
  memset(bp, 0, sizeof *bp);
}

/* v's owned entries of every rank, on rank 0 in the order of positions (n entries; NULL on the other
 * ranks; collective). The caller frees it. */
static double *t_bypos_gather(const t_bypos *bp, mf_vector v)
{
  double *raw = t_bypos_gather_raw(bp, v), *sorted = NULL;
  if (bp->rank == 0) {
    sorted = malloc(sizeof(double) * ((size_t)bp->n + 1));
    for (int64_t i = 0; i < bp->n; i++) sorted[i] = raw[bp->order[i]];
  }
  free(raw);
  return sorted;
}

/* Rank 0: max_i |a_i - b_i| / max_i |b_i| of two gathered vectors (the entries at the same position;
 * b the reference), or INFINITY where the layouts do not line up (other sizes, or positions 1e-8
 * apart: reported). *worst: the index of the largest difference. */
static double t_bypos_diff(const t_bypos *pa, const double *a, const t_bypos *pb, const double *b, int64_t *worst)
{
  *worst = 0;
  if (pa->n != pb->n) {
    fprintf(stderr, "FAIL %s:%d: %lld entries against %lld\n", __FILE__, __LINE__, (long long)pa->n, (long long)pb->n);
    return INFINITY;
  }
  for (int64_t i = 0; i < pa->n * 3; i++)
    if (!(fabs(pa->x[i] - pb->x[i]) <= 1e-8)) {
      fprintf(stderr, "FAIL %s:%d: entry %lld by position: coordinate %.17g against %.17g\n", __FILE__, __LINE__,
              (long long)(i / 3), pa->x[i], pb->x[i]);
      *worst = i / 3;
      return INFINITY;
    }
  double d = 0.0, m = 0.0;
  for (int64_t i = 0; i < pa->n; i++) {
    const double e = fabs(a[i] - b[i]);
    if (e > d || isnan(e)) d = isnan(e) ? INFINITY : e, *worst = i;
    m = fmax(m, fabs(b[i]));
  }
  return m > 0.0 ? d / m : d;
}

/* Rank 0: the gathered vectors a (N ranks) and b (1 rank) agree entry by entry to tol relative to
 * max |b|; a failure names the worst entry's position and values. */
#define T_BYPOS_CHECK(pa, a, pb, b, tol, ...)                                                             \
  do {                                                                                                  \
    int64_t w_;                                                                                         \
    const double r_ = t_bypos_diff(pa, a, pb, b, &w_);                                                  \
    if (!(r_ <= (tol))) {                                                                               \
      fprintf(stderr, "FAIL %s:%d: ", __FILE__, __LINE__);                                              \
      fprintf(stderr, __VA_ARGS__);                                                                     \
      fprintf(stderr, ": differ by %.3e relative (max norm), tolerance %.1e; worst at (%.6g, %.6g, %.6g): " \
                      "%.17g against %.17g\n", r_, (double)(tol), (pb)->x[3 * w_], (pb)->x[3 * w_ + 1],  \
              (pb)->x[3 * w_ + 2], (a)[w_], (b)[w_]);                                                     \
      t_failures++;                                                                                     \
    } else if (getenv("MF_TEST_VERBOSE")) {                                                             \
      printf(__VA_ARGS__);                                                                              \
      printf(": differ by %.3e relative (tolerance %.1e)\n", r_, (double)(tol));                        \
    }                                                                                                   \
  } while (0)

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

/* Refine the cells whose centre has x, y < 1/2: t_refine_ball refines no cell of the cube at level 1 in 3D
 * (its centres lie 0.35 or more from the point) nor of the deformed cube at level 1. */
static int t_refine_corner(const double *x, int dim, int level, void *user)
{
  (void)dim, (void)level, (void)user;
  return x[0] < 0.5 && x[1] < 0.5;
}

/* A mesh for tests: name/dim/level as mf_mesh_create, then `adapt` rounds (ball: shells; other
 * meshes: t_refine_ball, or from level 1 t_refine_corner, so that every adapted mesh has hanging nodes). */
static void t_mesh(mf_context ctx, const char *name, int dim, int level, int adapt, mf_mesh *mesh)
{
  T_CALL(mf_mesh_create(ctx, name, dim, level, mesh));
  if (!strcmp(name, "ball")) T_CALL(mf_mesh_refine_shells(*mesh, adapt));
  else
    for (int k = 0; k < adapt; k++) T_CALL(mf_mesh_adapt(*mesh, level <= 1 ? t_refine_corner : t_refine_ball, NULL));
}

/* The ball for the GPU-against-CPU tests: uniform at `level`, or (adapt) level 1 with the cells near
 * a point refined once: hanging faces and edges in 2D and 3D on few cells. */
static void t_ball(mf_context ctx, int dim, int level, int adapt, mf_mesh *mesh)
{
  T_CALL(mf_mesh_create(ctx, "ball", dim, adapt ? 1 : level, mesh));
  if (adapt) T_CALL(mf_mesh_adapt(*mesh, t_refine_ball, NULL));
}

#endif
