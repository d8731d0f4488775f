/* mfree_impl.h -- what every file of the library needs, the bottom layer (lib/base/): errors, allocation,
 * threads, host memory, the context (on which errors are recorded), set-up phases and the finite-value
 * checks. Not installed; users see only lib/mfree.h (and its part lib/mfree_newton.h). The objects' private layouts are in their own
 * headers, each including the one above it here:
 *   space_impl.h      meshes, spaces and their ghost exchanges (lib/mesh.c, lib/space.c)
 *   vector_impl.h     vectors (lib/vector.c)
 *   operator_impl.h   operators and their type table (lib/operator.c)
 *   hex/mf_hex_op.h   the hex family's operators (1D bases, geometry, quadrature data, CPU kernels)
 * Tests and benchmarks include lib/mf_testing.h. */
#ifndef MFREE_IMPL_H
#define MFREE_IMPL_H

#include "mfree.h"
#include "base/mf_common.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef enum { MF_BACKEND_CPU = 0, MF_BACKEND_CUDA = 1 } mf_backend;

/* ------------------------------------------------------------------ errors (lib/base/error.c) */

/** Record an error (file, line, function, formatted message) on ctx (may be NULL) and return code. */
int mf_error_set(mf_context ctx, int code, const char *file, int line, const char *func,
                 const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 6, 7)))
#endif
    ;

/** Fail with a message naming the offending values: MF_CHECK(p >= 1, ctx, MF_ERR_ARGUMENT, "degree %d", p). */
#define MF_CHECK(cond, ctx, code, ...)                                                  \
  do {                                                                                 \
    if (!(cond)) return mf_error_set((ctx), (code), __FILE__, __LINE__, __func__, __VA_ARGS__); \
  } while (0)
/** Same, jumping to a cleanup label with ierr set. */
#define MF_CHECK_GOTO(cond, ctx, code, label, ...)                                       \
  do {                                                                                  \
    if (!(cond)) {                                                                      \
      ierr = mf_error_set((ctx), (code), __FILE__, __LINE__, __func__, __VA_ARGS__);    \
      goto label;                                                                       \
    }                                                                                   \
  } while (0)
/** Make a result collective (collective on ctx's communicator; nothing on one rank): every rank
 *  returns 0 if ierr is 0 everywhere, else the code of the lowest failing rank, whose message every
 *  rank records as "rank R: <message>". The library calls it before each collective step that
 *  follows work which can fail on one rank alone (allocation, CUDA, a callback's values), and at the
 *  end of every collective creation or set-up function: no rank is left waiting in a collective call
 *  for a rank that returned. Functions that call it must be reached by every rank. */
int mf_agree(mf_context ctx, int ierr);
/** The same over a communicator, recording on ctx (may be NULL): before a context has its own. */
int mf_agree_comm(MPI_Comm comm, mf_context ctx, int ierr);
/** Serial number of the calling thread's last recorded error (grows with every error): a caller can
 *  tell whether a callback recorded a message. */
unsigned long mf_error_serial(void);
/** Test hook, for tests only: every host allocation of the library larger than `bytes` fails as out
 *  of memory on the calling process (0: no limit). The environment variable
 *  MFREE_TEST_HOST_ALLOC_LIMIT=bytes[@rank] (rank of MPI_COMM_WORLD) sets it at context creation. */
void mf_test_set_host_alloc_limit(size_t bytes);
/** Test hook, for tests only: the n-th host allocation of the library from now on fails as out of
 *  memory on the calling process (0: none); mf_test_host_alloc_count counts the allocations since. */
void mf_test_fail_host_alloc(long n);
long mf_test_host_alloc_count(void);
/** Reads MFREE_TEST_HOST_ALLOC_LIMIT (mf_context_create). */
void mf_test_read_alloc_limit(void);

/** Propagate a nonzero code. */
#define MF_CALL(expr)                \
  do {                               \
    int mf_ierr_ = (expr);           \
    if (mf_ierr_) return mf_ierr_;   \
  } while (0)
/** Run a step that must run on every rank whatever happened before (a ghost exchange that
 *  neighbours wait for), keeping the first failure in ierr. */
#define MF_KEEP(ierr, expr)           \
  do {                                \
    int mf_keep_ = (expr);            \
    if (!(ierr)) (ierr) = mf_keep_;   \
  } while (0)
#define MF_CALL_GOTO(expr, label) \
  do {                            \
    ierr = (expr);                \
    if (ierr) goto label;         \
  } while (0)

/* allocation and threads (lib/base/memory.c) */
/** calloc that records "out of host memory (N bytes)" on failure. */
int mf_calloc(mf_context ctx, size_t count, size_t size, void *ptr);
#define MF_CALLOC(ctx, n, p) mf_calloc((ctx), (size_t)(n), sizeof(**(p)), (p))
/** MF_CALLOC made collective (mf_agree): every rank gets its array or none keeps one (freed where the
 *  allocation succeeded but another rank's failed). */
int mf_calloc_agreed(mf_context ctx, size_t count, size_t size, void *ptr);
#define MF_CALLOC_AGREED(ctx, n, p) mf_calloc_agreed((ctx), (size_t)(n), sizeof(**(p)), (p))
/** malloc with the same message (contents undefined). */
int mf_malloc(mf_context ctx, size_t bytes, void *ptr);
/** The same, zeroed by all OpenMP threads: large arrays get their pages first touched (faulted in)
 *  in parallel, which a single thread's calloc and first writes do one page at a time. */
int mf_calloc_touch(mf_context ctx, size_t count, size_t size, void *ptr);
/** The number of OpenMP threads a parallel region gets (1 without OpenMP). */
int mf_max_threads(void);
/** *at = max(*at, v), from several OpenMP threads at once (a relaxed compare-and-swap: the value that stays
 *  does not depend on the threads' order). */
static inline void mf_atomic_max_int(int *at, int v)
{
  int old = __atomic_load_n(at, __ATOMIC_RELAXED);
  while (old < v && !__atomic_compare_exchange_n(at, &old, v, 1, __ATOMIC_RELAXED, __ATOMIC_RELAXED)) {
  }
}
/** In an OpenMP parallel region: a thread's failure lerr (its work arrays, made at the region's start)
 *  noted in the shared *ierr; the thread then skips its share of the loop (`if (lerr) continue;`). */
static inline void mf_thread_note(int *ierr, int lerr)
{
  if (lerr) {
#ifdef _OPENMP
#pragma omp atomic write
#endif
    *ierr = lerr;
  }
}
/** After such a region: 0, or MF_ERR_MEMORY recorded once as "out of host memory for the work arrays of
 *  N threads (<what>)". */
int mf_thread_work_check(mf_context ctx, int ierr, const char *what);
/** memcpy by all OpenMP threads. */
void mf_parallel_copy(void *dst, const void *src, size_t bytes);
#define MF_CALLOC_TOUCH(ctx, n, p) mf_calloc_touch((ctx), (size_t)(n), sizeof(**(p)), (p))

/* ------------------------------------------------------------------ context */

struct mf_context_s {
  MPI_Comm comm;
  int rank, size;
  int node_rank, node_size; /* this rank among those sharing its node's memory */
  int overlap;              /* overlap ghost exchanges with interior cells (MFREE_OVERLAP=0: off) */
  int refs;              /* the user's handle and every mesh made on it (mf_context_release) */
  mf_backend backend;
  const struct mf_backend_ops_s *bk; /* the backend's table (lib/base/mf_backend.h), set by mf_context_create */
  char errmsg[1024];
  unsigned long errseq;  /* serial number of errmsg (mf_error_serial) */
  double phase_s[MF_PHASE_COUNT]; /* set-up time per phase on this rank */
  int emulate_device; /* cpu backend, tests only: new double vectors act as device vectors with a
                         separate host copy (mf_context_emulate_device) */
  void *cuda; /* backend-owned state (device id, library handles) */
  /* run-time compiled physics (lib/physics/source.c, the backends' compilers) */
  char *cache_dir;      /* set by mf_context_set_cache_dir (NULL: MFREE_CACHE_DIR, else the user's cache folder) */
  int jit_compiled;     /* compiles run (cache misses) */
  int jit_loaded;       /* compiled code taken from the cache (hits) */
  int cache_warned;     /* the unwritable cache directory was reported */
  int nreleases;        /* what the compiled code holds (loaded objects, modules), freed with the context */
  struct mf_release_s {
    void (*fn)(void *);
    void *arg;
  } *releases;
};
/** Keep arg until the context goes, then call fn(arg) (loaded shared objects, device modules). */
int mf_context_on_release(mf_context ctx, void (*fn)(void *), void *arg);

/** Tests only: on the cpu backend, double vectors created from now on (on != 0) keep their values in
 *  `data` as if it were device memory, answer MF_MEM_DEVICE with it and MF_MEM_HOST with a separate
 *  host copy, synchronised by the rules of the cuda backend: the copy logic and its counts are then
 *  checked where there is no GPU. */
int mf_context_emulate_device(mf_context ctx, int on);
/** References: objects made from a context, mesh, space or operator hold one on it, so that the
 *  user may destroy the handles in any order; the last release frees the object. */
void mf_context_retain(mf_context ctx);
void mf_context_release(mf_context ctx);

/* set-up phases (lib/base/phase.c) */
/** Start of a timed set-up step: waits for outstanding device work, returns the wall clock. */
double mf_phase_begin(mf_context ctx);
/** Waits for the context's device work (cuda backend; nothing on the cpu backend). */
void mf_device_sync(mf_context ctx);
/** End of a timed set-up step: waits for the step's device work and adds the time to `phase`. */
void mf_phase_end(mf_context ctx, mf_phase phase, double t0);

/* host memory (lib/base/memory.c) */
/** Host memory available to this rank (bytes): the node's available memory over its ranks, or the
 *  address space the process may still map under RLIMIT_AS (ulimit -v) where that is less. */
double mf_host_available(mf_context ctx);
/** Test hook, for tests only: mf_host_available returns `bytes` on the calling process (0: the real
 *  figure again), so that refusals before allocation can be tested with a small limit. */
void mf_test_set_host_available(double bytes);
/** Refuse, before allocating, what needs more host memory than mf_host_available, with both figures. */
int mf_host_require(mf_context ctx, double bytes, const char *what);

/* ------------------------------------------------------------------ finite values */

/* the finite-value checks (lib/base/checks.c) */
/** Refuse the first value of vals[0..n) that is not finite as the coefficient at its quadrature point:
 *  values from point first_q of cell first_cell on, nqp per cell, at the points x (dim per value).
 *  Both backends call it on the host values before they enter the quadrature data. */
int mf_coefficient_check(mf_context ctx, int dim, int nqp, int first_cell, int first_q, size_t n, const double *x,
                         const double *vals);
/** The same for any callback evaluated at quadrature points: "<role> <sym> = nan at quadrature point q
 *  of cell e (rank r), x = (...): <sym> must be finite" (role "right-hand side", sym "f", say). */
int mf_point_value_check(mf_context ctx, const char *role, const char *sym, int dim, int nqp, int first_cell,
                         int first_q, size_t n, const double *x, const double *vals);
/** The same for a callback evaluated at the point x of DoF dof (interpolation, boundary values). */
int mf_dof_value_check(mf_context ctx, const char *role, const char *sym, int dim, int dof, const double *x,
                       double value);
/** The first quadrature point (lowest cell, then point) where a callback gave a value that is not
 *  finite, noted from the threads of a cell loop and refused after it: the same point whatever the
 *  thread count. cell -1: none. v: the value (nv = 1) or the gradient (nv = dim). */
typedef struct {
  int cell, q, nv;
  double x[3], v[3];
} mf_bad_point;
#define MF_BAD_POINT_NONE {-1, 0, 0, {0.0, 0.0, 0.0}, {0.0, 0.0, 0.0}}
/** Note point q of cell (at x; nv values v) in bp if it comes before the one noted (thread-safe). */
void mf_bad_point_note(mf_bad_point *bp, int cell, int q, int dim, const double *x, int nv, const double *v);
/** Note point q of cell in bp if one of the dim values of g is not finite (a gradient); returns 1 then. */
int mf_bad_point_note_vector(mf_bad_point *bp, int cell, int q, int dim, const double *x, const double *g);
/** "(x, y)" or "(x, y, z)" of the point p into buf (n bytes): the messages that name a point. */
void mf_point_text(int dim, const double *p, char *buf, size_t n);
/** 0 if nothing was noted, else MF_ERR_ARGUMENT: "<what> = <value> at quadrature point q of cell e (rank
 *  r), x = (...): <who> must be finite". */
int mf_bad_point_refuse(mf_context ctx, const mf_bad_point *bp, int dim, const char *what, const char *who);

#ifdef __cplusplus
}
#endif
#endif
