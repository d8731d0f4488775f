/* mfree_impl.h -- private object layouts, error macros and backend tables of mfree.
 * Not installed; users see only lib/mfree.h. Backends (lib/cuda) include this to fill their tables. */
#ifndef MFREE_IMPL_H
#define MFREE_IMPL_H

#include "mfree.h"
#include "base/mf_common.h"
#include "hanging/mf_hanging.h"

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
};

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

/* ------------------------------------------------------------------ mesh */

struct mf_family_s; /* the cell-family table (lib/family.h) */

struct mf_mesh_s {
  mf_context ctx;
  int dim, level;
  int64_t ncells_global, ncells_local;
  int refs;              /* the user's handle, spaces and coarsened copies made from it */
  struct mf_mesh_s *parent; /* a coarsened copy: the mesh whose connectivity it shares (held) */
  const struct mf_family_s *fam; /* its cell family's table (lib/family.h) */
  void *fdata;              /* the family's own data: hex meshes their forest (mf_hex_mesh, lib/hex/mf_hex.h),
                               simplex meshes the mf_simplex_mesh (lib/simplex/mf_simplex.h) */
  int revision;             /* rounds of adaptation so far (mf_mesh_adapt): a space made at another is stale */
};
void mf_mesh_retain(mf_mesh mesh);
void mf_mesh_release(mf_mesh mesh);

/* host memory (lib/base/memory.c) */
/** Host memory available to this rank (bytes): the node's available memory over its ranks, or the
 *  address space the process may still map under RLIMIT_AS (ulimit -v) where that is less. */
double mf_host_available(mf_context ctx);
/** Test hook, for tests only: mf_host_available returns `bytes` on the calling process (0: the real
 *  figure again), so that refusals before allocation can be tested with a small limit. */
void mf_test_set_host_available(double bytes);
/** Refuse, before allocating, what needs more host memory than mf_host_available, with both figures. */
int mf_host_require(mf_context ctx, double bytes, const char *what);

/** A coarser copy of mesh: every family of 2^dim cells on one rank merged into its parent, then 2:1
 *  balanced; no repartition, so every coarse cell is on the rank of its fine cells (nested meshes,
 *  rank-local transfers). It shares the connectivity, and holds mesh until it goes. */
int mf_mesh_coarsened(mf_mesh mesh, mf_mesh *coarse);

/* ------------------------------------------------------------------ space */

/** Neighbour exchange pattern built from p4est_lnodes sharers.
 *  Import (owner -> ghost): send owned entries send_idx[send_off[i]..send_off[i+1]) to rank[i];
 *  receive ghost entries recv_idx[recv_off[i]..). Export-add reverses the arrows and adds. */
typedef struct {
  int nneigh;
  int *rank;
  int *send_off, *send_idx;
  int *recv_off, *recv_idx;
  double *send_buf, *recv_buf;
  MPI_Request *req;
  int nreq; /* requests posted by mf_exchange_mpi_begin, waited for by mf_exchange_mpi_end */
} mf_exchange;

struct mf_space_s {
  mf_context ctx;
  mf_mesh mesh;
  int dim, degree, n1, npc; /* npc = n1^dim nodes per cell */
  int ncells;
  int nowned, nlocal;
  int64_t nglobal, global_offset;
  int *cell_nodes;      /* ncells x npc local DoF indices: the element-to-DoF map of every family (hex:
                           lexicographic, x fastest; simplex: in the order of mf_simplex_basis's nodes) */
  int16_t *face_code;   /* ncells: p4est_lnodes face_code (0 on conforming meshes) */
  int *cell_tree;       /* ncells: tree of each cell */
  int32_t *cell_q;      /* ncells x 3: lower corner in the tree, integer (p4est) coordinates */
  int8_t *cell_level;   /* ncells: refinement level */
  int root_log;         /* log2 of the tree's edge in those coordinates (P4EST_MAXLEVEL) */
  unsigned char *bc;    /* nlocal: 1 on Dirichlet boundary DoFs */
  int nbc, *bc_list;    /* the boundary DoFs, ascending */
  unsigned char *cell_bfaces; /* ncells: bit f set if face f lies on the domain boundary (set-up only) */
  int numbering;        /* how the DoFs were numbered: 1 lib/hex/dofs.c (uniform, one rank), 0 p4est_lnodes */
  int *dof_owner;       /* nlocal: the first cell with the DoF at an own (unconstrained) position, ncells
                           where this rank has none (possible for ghosts) */
  uint16_t *dof_pos;    /* nlocal: the DoF's node index in that cell */
  int owners_complete;  /* every local DoF, on every rank, has an owner cell on its rank */
  double *coords;       /* nlocal x dim: the point of every DoF, the node of the isoparametric geometry;
                           on the cuda backend made on first use (mf_space_host_coords) */
  double gll[MF_MAX_N1];/* 1D Gauss-Lobatto nodes on [0,1] */
  int ncolors;          /* color c: cells color_cells[color_off[c] .. color_off[c+1]) */
  int *color_off;       /* ncolors + 1; no two cells of one color share a DoF */
  int *color_cells;     /* ncells: the cells, color by color */
  int64_t *csr_rowptr;  /* nlocal + 1: the assembled operators' sparsity (lib/assembled/assembly.c), made on first use */
  int *csr_colidx;      /* csr_rowptr[nlocal]: the columns of each row, ascending */
  int *part_cells;      /* ncells: the cells part by part (mf_cell_part), ascending within each */
  int part_off[4];      /* part k: part_cells[part_off[k] .. part_off[k+1]) */
  int *launch_order;    /* ncells: order of the cells in an atomic launch (cuda backend; see
                           mf_space_launch_order), NULL on the cpu backend */
  int nmasked;          /* cells with hanging faces or edges (face_code != 0) */
  int *masked_cells;    /* nmasked: those cells, ascending */
  double hanging_P[2 * MF_MAX_N1 * MF_MAX_N1]; /* 1D coarse-to-fine interpolation, both halves */
  mf_exchange ex;
  void *dev;            /* backend mirror of cell_nodes, bc, exchange lists */
  int refs;             /* the user's handle, vectors and operators made on it */
  int ncomp;            /* components per DoF, interleaved (entry dof * ncomp + c); 1 for scalar spaces */
  const struct mf_family_s *fam; /* its mesh's cell family (lib/family.h) */
  void *fdata;          /* the family's own data: simplex spaces their basis and DoFs (mf_simplex_space,
                           lib/simplex/mf_simplex_space.h; the hex fields above stay empty); hex spaces NULL */

  int mesh_revision;    /* the mesh's revision when the space was made (mf_space_check_mesh) */
};
/** The space's device state on the cuda backend (nothing on the cpu backend): made where there is none
 *  (mf_space_create makes it with the space), else its Dirichlet marks copied again (after
 *  mf_space_set_dirichlet_tags changed them on a simplex space). */
int mf_space_device_sync(mf_space space);
void mf_space_retain(mf_space space);
void mf_space_release(mf_space space);
/** Refuse (MF_ERR_INCOMPATIBLE) a space whose mesh was adapted after the space was made: the space keeps
 *  the old cells, so what is made from it or evaluated at its points now would silently belong to a
 *  mesh that no longer exists. Called at the public entries that make objects on a space (vectors,
 *  operators, multigrid hierarchies) or evaluate functions at its points (interpolation, random values,
 *  boundary values, right-hand sides, L2 and H1 errors, VTU output); what was made before keeps working. The
 *  revisions are the same on every rank (adaptation is collective): the refusal is too. */
int mf_space_check_mesh(mf_space space);

/** The host array of node coordinates, made on first use (not thread-safe: call before parallel use).
 *  Collective where it is not made yet on several ranks; set-up makes it there already. */
int mf_space_host_coords(mf_space space);
/** The point of one DoF, from its owner cell (owners_complete) or the host array. */
void mf_space_dof_point(mf_space space, int dof, double *x);
/** For messages about an object of space a where space b was expected (a != b), the words after
 *  "belongs to another space": " (125 DoFs, <b_has> 64)" where the sizes differ, and where they do not
 *  " object of the same size (125 DoFs): ..." (two spaces alike are still two); into buf, returned. */
const char *mf_space_mismatch(mf_space a, mf_space b, const char *b_has, char *buf, size_t n);
/** Lower corner and edge length of a cell in its tree's reference cube [0,1]^dim (exact: dyadic). */
static inline void mf_space_cell_box(const struct mf_space_s *s, int cell, double *origin, double *size)
{
  const double inv = 1.0 / (double)((int64_t)1 << s->root_log);
  for (int d = 0; d < 3; d++) origin[d] = s->cell_q[3 * (size_t)cell + d] * inv;
  *size = 1.0 / (double)((int64_t)1 << s->cell_level[cell]);
}
/** Reference point xi in [0,1]^dim of a cell -> physical point by the mesh mapping. */
void mf_space_cell_point(mf_space space, int cell, const double *xi, double *x);
/** The cell's geometry nodes, X[node*dim + k]: its DoFs' points with the hanging-node constraints
 *  applied (so a cell on a hanging face takes the coarse face's shape: the mesh stays watertight). */
void mf_space_cell_coords(mf_space space, int cell, double *X);
/** Launch order of the cells for an atomic scatter: Morton chunks of `chunk` cells, within a chunk
 *  by child id and, within one, cells without a mask first (chunk <= 0: Morton order). */
int mf_space_launch_order(mf_space space, int chunk, int *order);
/** The cell colors (ncolors, color_off, color_cells), made on first use. */
int mf_space_colors(mf_space space);
/** The cell parts (part_cells, part_off), made on first use. */
int mf_space_parts(mf_space space);
/** Split `order` (n cells) into the three parts, each keeping its cells' order in `order`: out (n) and
 *  off[4]. The interior is halved by count. */
void mf_space_split_parts(const mf_space space, const int *order, int n, int *out, int off[4]);
/** 1 if mf_operator_apply overlaps the ghost exchanges with interior cells (several ranks, the
 *  operator has apply_part, ctx->overlap: on unless the environment has MFREE_OVERLAP=0). */
int mf_operator_overlaps(const mf_operator op);

int mf_exchange_import(mf_context ctx, mf_exchange *ex, double *x);
/** Host exchange of a local array of doubles (single = 0) or floats (1): forward (owners -> ghosts,
 *  assign) or backward (ghosts -> owners, add). The messages are doubles either way. */
int mf_exchange_run(mf_context ctx, mf_exchange *ex, void *x, int single, int forward);
/** The same in halves: begin packs x and posts the messages, end waits and unpacks. Between them x's
 *  entries may be read but not written (its ghosts not read forward; backward, its ghosts not written). */
int mf_exchange_begin(mf_context ctx, mf_exchange *ex, const void *x, int single, int forward);
int mf_exchange_end(mf_context ctx, mf_exchange *ex, void *x, int single, int forward);
/** MPI phase only: send ex->send_buf, receive ex->recv_buf (forward: owners -> ghosts). */
int mf_exchange_mpi(mf_context ctx, mf_exchange *ex, int forward);
/** The same in halves over the caller's buffers (host, or device with a CUDA-aware MPI): begin posts
 *  the receives and sends, end waits for every posted request. */
int mf_exchange_mpi_begin(mf_context ctx, mf_exchange *ex, int forward, double *sbuf, double *rbuf);
int mf_exchange_mpi_end(mf_context ctx, mf_exchange *ex);
int mf_exchange_export_add(mf_context ctx, mf_exchange *ex, double *x);
void mf_exchange_free(mf_exchange *ex);

/* ------------------------------------------------------------------ vectors */

typedef struct {
  int (*set_value)(mf_vector v, double a);
  int (*copy)(mf_vector dst, mf_vector src);
  int (*axpy)(mf_vector y, double a, mf_vector x);
  int (*scale)(mf_vector v, double a);
  int (*dot_local)(mf_vector x, mf_vector y, double *r);
  int (*sum_local)(mf_vector x, double *r);
  int (*pmult)(mf_vector w, mf_vector x, mf_vector y);     /* w = x .* y (owned) */
  int (*aypx)(mf_vector y, double a, mf_vector x);         /* y = x + a y (owned) */
  int (*reciprocal)(mf_vector v);                          /* v = 1 ./ v (owned) */
  int (*bc_zero)(mf_vector v);                             /* v[bc] = 0 (all local) */
  int (*bc_set)(mf_vector dst, mf_vector src);             /* dst[bc] = src[bc], or 1 if src is NULL */
  int (*bc_values)(mf_vector v, const double *vals);        /* v = 0, v[bc_list[k]] = vals[k] (host vals) */
  int (*import)(mf_vector v);                              /* ghosts <- owners */
  int (*export_add)(mf_vector v);                          /* owners += ghosts */
  /* the same in halves (forward: import, else export-add); between them, work that neither writes what
   * is sent nor reads what is received (the cells that touch no ghost DoF) overlaps the messages */
  int (*exchange_begin)(mf_vector v, int forward);
  int (*exchange_end)(mf_vector v, int forward);
  int (*to_host)(mf_vector v, double *host, int n);       /* first n entries */
  int (*from_host)(mf_vector v, const double *host, int n);
  int (*convert)(mf_vector dst, mf_vector src);            /* dst = src of the other precision (all local) */
  /* Jacobi CG's fused steps (double vectors; NULL on float ones), on owned entries, dinv NULL for none:
   * alpha = rz / pAp with pAp = *pAp_global, or (pAp_global NULL: one rank) this vector's p.Ap;
   * x += alpha p, r -= alpha Ap; out = {pAp, sum r dinv r} (local). A pAp that is not positive and
   * finite leaves x and r unchanged. */
  int (*cg_update)(mf_vector x, mf_vector r, mf_vector p, mf_vector Ap, mf_vector dinv, double rz,
                   const double *pAp_global, double out[2]);
  int (*cg_direction)(mf_vector p, mf_vector r, mf_vector dinv, double beta); /* p = dinv r + beta p */
  int (*destroy)(mf_vector v);
} mf_vector_ops;

/** Which copies of a mirrored vector's values are current (bits). */
enum { MF_SYNC_DEVICE = 1, MF_SYNC_HOST = 2, MF_SYNC_BOTH = 3 };

struct mf_vector_s {
  mf_space space;
  mf_backend backend;
  mf_precision prec;
  int n;          /* nlocal: owned then ghost */
  double *data;   /* host or device array of length n (double vectors; NULL for float ones) */
  float *sdata;   /* the same for float vectors (multigrid levels in single precision) */
  mf_vector_ops ops;
  /* memory-typed access (mf_vector_get_array, lib/vector.c) */
  int mirrored;   /* data is (or acts as) device memory, with a host copy `host` made on first host access:
                     double vectors of the cuda backend, or of a context that emulates a device */
  double *host;   /* the host copy (n entries), NULL before the first host access */
  int valid;      /* MF_SYNC_* bits: the copies that hold the current values (mirrored vectors) */
  int nread;      /* read-only arrays checked out */
  int write_mem;  /* MF_MEM_HOST or MF_MEM_DEVICE while an array is checked out for writing, else 0 */
  int busy;       /* public functions now writing the vector (between mf_vector_access and mf_vector_written):
                     internal code may change its device values at any time, so the host copy is never current */
  long long copies_to_host, copies_to_device; /* whole-vector copies between the two (the tests' counts) */
};

/** How a public function uses a vector. */
typedef enum { MF_ACCESS_READ = 1, MF_ACCESS_WRITE = 2, MF_ACCESS_READ_WRITE = 3 } mf_access;
/** At the entry of a public function that uses v (named `name` in messages): refuses a vector with an
 *  array checked out for writing, or one with read-only arrays out when the function changes it; makes
 *  the device copy current (one upload where the host copy was written; none for MF_ACCESS_WRITE, which
 *  overwrites every local entry); for writers, marks the host copy stale. Every public function
 *  checks its vectors so, and every one that writes a vector calls mf_vector_written at its end: only
 *  the public interface changes a vector that a user holds, so the host copy's state stays true. */
int mf_vector_access(mf_vector v, mf_access mode, const char *name);
/** mf_vector_access at the start of a collective function: a refusal on one rank is every rank's
 *  (mf_agree), so that no rank goes on alone into the function's exchanges; where another rank refused,
 *  this rank's access is undone. */
int mf_vector_access_all(mf_vector v, mf_access mode, const char *name);
/** At the end of a public function that wrote v (also on failure): the host copy is stale. Returns ierr.
 *  Calls to mf_vector_access for writing and to mf_vector_written pair up: a vector between the two is
 *  busy (a callback may read it on the host, always with a fresh copy, but not get it for writing). */
int mf_vector_written(mf_vector v, int ierr);
/** Call a user function (shell operator or preconditioner) on a and b (may be the same vector): their
 *  host copies are marked stale first (internal code writes its vectors on the device without marking
 *  them), and afterwards what the function wrote on the host is uploaded; an array left checked out is
 *  an error naming `what` and the vector (an, bn). */
int mf_vector_call_user(int (*fn)(mf_vector, mf_vector, void *), mf_vector a, mf_vector b, void *user,
                        const char *what, const char *an, const char *bn);
/** mf_vector_set_random without the check of the space's mesh: for the library's own vectors (the
 *  eigenvalue estimate of a preconditioner made before an adaptation keeps working). */
int mf_vector_random_values(mf_vector v, uint64_t seed);
/** Copies of the whole vector between host and device so far (mirrored vectors; 0 otherwise). */
void mf_vector_copy_counts(mf_vector v, long long *to_host, long long *to_device);

/** x^T y over all ranks, with ierr, this rank's result so far: the reduction runs on every rank, and
 *  a failure of any rank (ierr, or the local dot) is returned on all (mf_agree); x and y are not
 *  touched where ierr is nonzero. Collective; no extra communication when nothing failed. */
int mf_vector_dot_checked(mf_vector x, mf_vector y, double *result, int ierr);
/** *val summed over the ranks, with ierr as in mf_vector_dot_checked. Collective. */
int mf_sum_over_ranks(mf_context ctx, double *val, int ierr);
/** Tests: on = 0 makes cg iterate step by step (operator, dots, axpy, preconditioner) even where the
 *  fused steps apply (Jacobi or no preconditioner); 1 (default) fuses them. */
void mf_cg_set_fused(mf_cg cg, int on);
/** Same space and same precision (the precision message names both). */
int mf_vector_check_pair(mf_vector a, mf_vector b, const char *an, const char *bn);
/** A vector of the given precision (users get double ones; float vectors serve the V-cycle). */
int mf_vector_create_prec(mf_space space, mf_precision prec, mf_vector *v);
/** dst = src, all local entries, converting the precision where they differ. */
int mf_vector_convert(mf_vector dst, mf_vector src);
const char *mf_precision_name(mf_precision p);

/* ------------------------------------------------------------------ 1D bases and quadrature */

/** 1D data of an operator: n1 nodal (GLL) basis functions, nq quadrature points on [0,1]. */
typedef struct {
  int n1, nq;
  int collocated;                 /* quadrature points == nodes: B is the identity */
  double qpts[MF_MAX_NQ], qwts[MF_MAX_NQ];
  double B[MF_MAX_NQ * MF_MAX_N1];  /* B[i*n1+j] = phi_j(q_i) */
  double Bg[MF_MAX_NQ * MF_MAX_N1]; /* Bg[i*n1+j] = phi_j'(q_i) */
  double D[MF_MAX_NQ * MF_MAX_NQ];  /* collocation derivative on the quadrature points */
  /* factors of the sum-factorised diagonal (elementwise products): B.B, B.Bg, Bg.Bg */
  double BB[MF_MAX_NQ * MF_MAX_N1], BG[MF_MAX_NQ * MF_MAX_N1], GG[MF_MAX_NQ * MF_MAX_N1];
} mf_basis1d;

void mf_gauss_lobatto(int n, double *x, double *w); /* on [0,1] */
void mf_gauss(int n, double *x, double *w);         /* on [0,1] */
/** Lagrange basis on nodes (n) at points (m): V[i*n+j] = l_j(pts_i), G = l_j'(pts_i); either may be NULL. */
void mf_lagrange_eval(int n, const double *nodes, int m, const double *pts, double *V, double *G);
int mf_basis1d_setup(int degree, mf_quadrature quad, mf_basis1d *b);

/** Apply a 1D matrix along direction d of a tensor of sizes nin[0..dim-1] (x fastest).
 *  trans = 0: M is m x nin[d], out has m along d. trans = 1: M is nin[d] x m, applies M^T.
 *  add: accumulate into out. */
void mf_tensor_apply(int dim, const int *nin, int d, const double *M, int m, int trans,
                     const double *in, double *out, int add);

/** Interpolate nodal values (n1^dim) to quadrature points (nq^dim) by B sweeps; t1, t2 scratch. */
void mf_tensor_interpolate(int dim, const mf_basis1d *b, const double *u, double *uq, double *t1, double *t2);
/** Transpose: quadrature values (nq^dim) -> nodal (n1^dim) by B^T sweeps. */
void mf_tensor_integrate(int dim, const mf_basis1d *b, const double *vq, double *v, double *t1, double *t2);

/* ------------------------------------------------------------------ geometry (lib/hex/geometry.c) */

typedef struct {
  double *X, *comp, *xk, *t1, *t2;
} mf_geom_work;
int mf_geom_work_init(mf_space s, const mf_basis1d *b, mf_geom_work *gw);
void mf_geom_work_free(mf_geom_work *gw);
/** Isoparametric geometry of a cell at the quadrature points of b, from its geometry nodes
 *  (mf_space_cell_coords): xq[q*dim+k] (xq may be NULL) and jac[9*q + 3*k + l] = d x_k / d xi_l
 *  (xi the cell's reference coordinates in [0,1]^dim). */
void mf_cell_geometry(mf_space s, const mf_basis1d *b, int cell, mf_geom_work *gw, double *xq, double *jac);
/** The quadrature points alone: xq[q*dim+k]. */
void mf_cell_points(mf_space s, const mf_basis1d *b, int cell, mf_geom_work *gw, double *xq);
/** out[i] = f(x[i*dim .. i*dim+dim-1]) for i < n, OpenMP over the points (f must be thread-safe). */
void mf_eval_points(mf_coefficient_fn f, void *user, int dim, size_t n, const double *x, double *out);
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
/** 0 if nothing was noted, else MF_ERR_ARGUMENT: "<what> = <value> at quadrature point q of cell e (rank
 *  r), x = (...): <who> must be finite". */
int mf_bad_point_refuse(mf_context ctx, const mf_bad_point *bp, int dim, const char *what, const char *who);
double mf_det(int dim, const double *J);
/** Tensor quadrature weight of point q (x fastest). */
double mf_qweight(int dim, const mf_basis1d *b, int q);

/* ------------------------------------------------------------------ quadrature data */

/** Per-quadrature-point data in array-of-structure-of-arrays layout:
 *  cells are grouped in batches of `batch`; within a batch each component is one block holding
 *  all quadrature points of all cells of the batch (cell-major), padded to 128 bytes.
 *    value(cell, comp, q) = data[(cell / batch) * batch_stride + comp * block_stride
 *                                + (cell % batch) * nqp + q]                              */
typedef struct {
  int nqp, ncomp, batch, nbatch;
  size_t block_stride, batch_stride, len;
  double *data; /* host */
} mf_qdata;

static inline size_t mf_qdata_index(const mf_qdata *qd, int cell, int comp, int q)
{
  return (size_t)(cell / qd->batch) * qd->batch_stride + (size_t)comp * qd->block_stride +
         (size_t)(cell % qd->batch) * (size_t)qd->nqp + (size_t)q;
}
/** Cells per batch (and per CUDA block) for (dim, p): the cells-per-block table, docs/performance.md. */
int mf_cells_per_batch(int dim, int degree, int nq);
/** Sizes and strides of op->qd for op->basis and the space (no allocation). */
void mf_qdata_layout(mf_operator op);
/** CPU: allocate and fill op->qd.data: mass part a*c*w|J| (a*w|J| when the operator also has a
 *  gradient part) and gradient part b*c*w|J| J^-1 J^-T (lib/physics/mf_pointwise.h). */
int mf_qdata_setup(mf_operator op, mf_coefficient_fn c, void *user, double a, double b);
/** A host copy of the quadrature data in the layout of op->qd (len doubles), on any backend. */
int mf_operator_qdata_to_host(mf_operator op, double *host);

/* ------------------------------------------------------------------ operators */

/** The gallery's entries (lib/physics/mf_gallery.h): what a pointwise operator does at a point. */
typedef enum {
  MF_OP_MASS = 0,
  MF_OP_LAPLACE = 1,
  MF_OP_HELMHOLTZ = 2,
  MF_OP_ELASTICITY = 3
} mf_op_kind;
struct mf_operator_s;
/** The operator in words with its article, for messages ("a shell", "a matrix-free Laplace", "an
 *  assembled (CSR)", "a simplex elasticity"): "... not %s operator". */
const char *mf_operator_kind_name(const struct mf_operator_s *op);

/* The cells of a space in three parts for overlapping the ghost exchanges (mf_space_parts): the first
 * half of the cells that touch no ghost DoF, the cells that touch one, the second half. */
typedef enum { MF_PART_INTERIOR_A = 0, MF_PART_BOUNDARY = 1, MF_PART_INTERIOR_B = 2 } mf_cell_part;

/** The product's steps of one operator on its backend, which the apply flow of lib/operator.c calls
 *  (ghost exchanges and Dirichlet form around them); filled by the type's creator. */
typedef struct {
  int (*apply)(mf_operator op, mf_vector x, mf_vector y); /* y_local <- A_local x_local (no comm) */
  /* y_local += the cells of one part (NULL: the operator applies whole, no overlap) */
  int (*apply_part)(mf_operator op, mf_vector x, mf_vector y, mf_cell_part part);
  int (*diagonal)(mf_operator op, mf_vector d);           /* local contributions (no comm) */
  int (*destroy)(mf_operator op);                         /* what the backend made for the product */
  int masks_bc; /* apply() zeroes boundary entries of x itself (no copy of x needed) */
} mf_operator_ops;

/** The operator types (lib/operator.c calls only this table; the types fill it):
 *    matrix-free pointwise   per cell family: lib/hex/operator_hex.c (sum factorisation),
 *                            lib/simplex/operator_simplex.c; op->data starts with an mf_pw_op
 *    shell                   lib/operator_shell.c: the user's apply and diagonal
 *    assembled               lib/assembled/assembly.c: a CSR matrix (mf_csr_op)
 *  An entry left NULL is a capability the type lacks: the caller refuses with MF_ERR_UNSUPPORTED and a
 *  message naming the operator (mf_operator_kind_name). */
typedef struct mf_optype_s {
  const char *name;          /* what it is, in messages: "matrix-free", "simplex", "a shell operator", "assembled" */
  const char *const *names;  /* the operator in words, by gallery entry (pointwise types) or names[0] */
  int pointwise;             /* op->data starts with an mf_pw_op (the gallery's description) */
  int dirichlet_form;        /* the type applies op->dirichlet (mf_operator_set_dirichlet); else it refuses */
  /** y <- A x for checked arguments, ierr this rank's failure so far (the exchanges run whatever it is). */
  int (*apply)(mf_operator op, mf_vector x, mf_vector y, int ierr);
  /** d <- the diagonal for checked arguments (the whole computation, exchanges included); NULL: none. */
  int (*diagonal)(mf_operator op, mf_vector d);
  /** Free op->data (after op->ops.destroy). */
  void (*destroy)(mf_operator op);
  /** The same operator (gallery entry, rule, coefficient, Dirichlet form, scatter) on another space:
   *  multigrid's levels. NULL: none. */
  int (*create_like)(mf_operator like, mf_space space, mf_operator *op);
  /** A copy in single precision (float vectors; multigrid's float levels). NULL: none. */
  int (*create_single)(mf_operator like, mf_operator *op);
  /** Check that variant v can assemble op (NULL: the type cannot be assembled). */
  int (*assemble_check)(mf_operator op, mf_assembly_variant v);
  /** The values of the assembled operator A (its sparsity set: mf_csr(A)) from op by variant v. */
  int (*assemble)(mf_operator op, mf_assembly_variant v, mf_operator A);
  /** Evaluate again at a state (Newton's linearisation): empty until nonlinear operators come. */
  int (*linearize)(mf_operator op, mf_vector state);
} mf_optype;

/** What every pointwise operator says of itself (the gallery's description, how it was made); the
 *  first member of the data of the pointwise types, so that lib/operator.c and lib/mg/ read it alike. */
typedef struct {
  mf_op_kind kind;           /* the gallery entry */
  mf_quadrature quad;
  int has_mass, has_grad;    /* which parts the pointwise step uses */
  mf_coefficient_fn coef;    /* coefficient, its user data, a, b (made again on multigrid levels) */
  void *coef_user;
  double coef_a, coef_b;
} mf_pw_op;

struct mf_operator_s {
  mf_context ctx;
  mf_space space;
  const mf_optype *type;
  int dirichlet;
  mf_scatter scatter;
  mf_precision prec;    /* MF_PRECISION_FLOAT: a copy in single precision (mf_operator_create_single) */
  mf_operator_ops ops;  /* the product's steps on the backend */
  mf_vector xwork;      /* x with boundary entries zeroed (Dirichlet form), in the operator's precision */
  void *data;           /* the type's own (pointwise: starting with an mf_pw_op) */
  int refs;             /* the user's handle, preconditioners and solvers made for it */
};
/** The description of a pointwise operator (op->type->pointwise), else NULL. */
static inline mf_pw_op *mf_pw(const struct mf_operator_s *op)
{
  return op->type->pointwise ? (mf_pw_op *)op->data : NULL;
}
/** The generic fields of an operator of `type` on space, with its data (held from now on: freed by the
 *  type's destroy when the operator goes): context, space (held), type, one reference. Allocates the
 *  object (*op, NULL on failure). Not collective. */
int mf_operator_alloc(mf_space space, const mf_optype *type, void *data, mf_operator *op);
/** The end of a collective creator: the work vector in the operator's precision, the ranks' agreement;
 *  on failure the operator is destroyed (*op NULL) and the code returned on every rank. */
int mf_operator_finish(mf_operator o, int ierr, mf_operator *op);
/** A matrix-free pointwise operator of gallery entry `kind` on space (the public creators' checks, then
 *  the cell family's creator). Collective. */
int mf_operator_create_pointwise(mf_space space, mf_op_kind kind, mf_quadrature quad, double a, double b,
                                 mf_coefficient_fn c, void *user, mf_operator *op);
/** The apply flow (file comment of lib/operator.c) over op->ops: the pointwise and assembled types'
 *  apply and diagonal entries. */
int mf_operator_flow_apply(mf_operator op, mf_vector x, mf_vector y, int ierr);
int mf_operator_flow_diagonal(mf_operator op, mf_vector d);
void mf_operator_retain(mf_operator op);
void mf_operator_release(mf_operator op);
/** The result of a user callback (shell apply, diagonal, preconditioner) called when the thread's
 *  error serial was `serial`: a nonzero code without a new message gets one naming `what`. */
int mf_callback_result(mf_context ctx, int code, unsigned long serial, const char *what);

/** A copy of a matrix-free operator (same space, kind, rule, Dirichlet form and scatter) whose
 *  quadrature data are `like`'s rounded to float: it applies to float vectors only and has no
 *  diagonal (compute that on `like`). Multigrid's levels in single precision. */
int mf_operator_create_single(mf_operator like, mf_operator *op);
/** An operator of the same kind, rule and coefficient as `like`, on another space (its Dirichlet
 *  form too). */
int mf_operator_create_like(mf_operator like, mf_space space, mf_operator *op);

/** References to a preconditioner: a cg holds the one set by mf_cg_set_pc (lib/mg/pc.c). */
void mf_pc_retain(mf_pc pc);
void mf_pc_release(mf_pc pc);
/** The operator a preconditioner was made for (lib/mg/pc.c). */
mf_operator mf_pc_operator(mf_pc pc);
/** 1 if the set-up pc is z = dinv .* r (Jacobi: *dinv its inverse diagonal) or z = r (none: *dinv
 *  NULL), 0 otherwise: CG's fused steps apply it themselves. The rest of the preconditioners' private
 *  interface, their type table, is lib/mg/pc_impl.h. */
int mf_pc_pointwise(mf_pc pc, mf_vector *dinv);

/* ------------------------------------------------------------------ the hex family's operators */

/** The data of a sum-factorised operator on hexahedra (lib/hex/operator_hex.c; op->data). */
typedef struct {
  mf_pw_op pw;             /* first: the description */
  int cells_per_block;
  mf_kernel_design design; /* as set; mf_operator_design resolves MF_KERNEL_AUTO */
  mf_basis1d basis;
  mf_qdata qd;             /* qd.data: the host data (cpu backend, double operators) */
  mf_geometry geometry;    /* MF_GEOMETRY_ON_THE_FLY: qd.data (and the device copy) freed; Jacobians from the
                              space's node coordinates in the kernel (mf_operator_set_geometry) */
  double *coefq;           /* on the fly, cpu backend: c(x_q), ncells x nqp (cell-major); NULL when c is NULL */
  float *qdf;              /* a single-precision copy's host quadrature data (cpu backend), layout of qd */
  void *dev;               /* backend state: device quadrature data and basis */
} mf_hex_op;
/** The hex data of a sum-factorised operator (no check: the caller knows it has one). */
static inline mf_hex_op *mf_hexop(const struct mf_operator_s *op) { return (mf_hex_op *)op->data; }
/** The type of the hex family's matrix-free operators (lib/hex/operator_hex.c). */
extern const mf_optype mf_optype_hex;
/** The kernel design that applies op on the CUDA backend (MF_KERNEL_AUTO resolved). */
mf_kernel_design mf_operator_design(const mf_operator op);

/** CPU reference kernels (lib/hex/kernels_cpu.c). x, y: local arrays (owned + ghost). */
int mf_kernel_apply_cpu(mf_operator op, const double *x, double *y);
/** The same for a single-precision operator (float arrays; the cell's work in double). */
int mf_kernel_apply_cpu_single(mf_operator op, const float *x, float *y);
/** The cells of one part only (mf_space_parts), adding into y; x, y of the operator's precision. */
int mf_kernel_apply_cpu_part(mf_operator op, const void *x, void *y, mf_cell_part part);
int mf_kernel_diagonal_cpu(mf_operator op, double *d);
/** Apply one cell: ue (npc) -> ve (npc), work of size mf_kernel_work_size. */
void mf_kernel_cell_cpu(mf_operator op, int cell, const double *ue, double *ve, double *work);
size_t mf_kernel_work_size(mf_operator op);
/** On-the-fly geometry, CPU (lib/hex/kernels_otf.c). The cell's quadrature data from its geometry nodes
 *  (mf_space_cell_coords: the continuous coordinates with the cell's constraints) and op->coefq, in
 *  the order of the stored set-up: qv[comp * nqp + q]. work: mf_otf_work_size(op) doubles. */
void mf_otf_cell_qdata(mf_operator op, int cell, double *work, double *qv);
size_t mf_otf_work_size(mf_operator op);
/** The coefficient at the quadrature points of every cell, cq[cell * nqp + q] (the stored set-up's
 *  points and checks). */
int mf_otf_coefficient_cpu(mf_operator op, double *cq);
/** Quadrature data in op->qd's layout (qd.len doubles, allocated here) from the geometry and op->coefq:
 *  the stored data, without calling the coefficient again. */
int mf_otf_qdata_cpu(mf_operator op, double **data);
/** Dense element matrix of a cell (npc x npc, row-major) by direct quadrature, no sum factorisation. */
void mf_element_matrix_dense(mf_operator op, int cell, double *Ae);
/** C^T A_e C of a cell with the hanging-node constraints C, by the cell kernel on unit vectors. */
int mf_element_matrix_constrained(mf_operator op, int cell, double *Ac);
/** The same with the caller's work array of mf_kernel_work_size(op) + 2 npc doubles (no allocation:
 *  for threads that assemble many cells). */
void mf_element_matrix_constrained_work(mf_operator op, int cell, double *Ac, double *work);
/** An assembled operator as mf_operator_create_assembled_variant makes it, without its product (apply
 *  and diagonal refuse): on 'cuda' its values can be checked without lib/cuda/csr.cu. Tests only. */
int mf_operator_create_assembled_values(mf_operator op, mf_assembly_variant variant, mf_operator *assembled);
/** Copy an assembled operator's values (its local nnz, the space's pattern) to host; on 'cuda' from the
 *  device. Tests only. */
int mf_operator_csr_values_host(mf_operator assembled, double *host);
/** Diagonal contributions of the cells with hanging nodes from the columns j of C^T A_e C that
 *  mf_hanging_diag_column selects (mf_kernel_diagonal_cpu adds the others). */
int mf_kernel_diagonal_hanging_cpu(mf_operator op, double *d);

#ifdef __cplusplus
}
#endif
#endif
