/* vector_impl.h -- private to the library: vectors (lib/vector.c), their backend table and memory-typed
 * access. */
#ifndef MF_VECTOR_IMPL_H
#define MF_VECTOR_IMPL_H

#include "space_impl.h"

#ifdef __cplusplus
extern "C" {
#endif

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
  int (*random_points)(mf_vector v, uint64_t seed); /* mf_random_point at the DoFs' points on the device; NULL,
                                                       or -1 returned: none there (the host makes them) */
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
/** Same space and same precision (the precision message names both). */
int mf_vector_check_pair(mf_vector a, mf_vector b, const char *an, const char *bn);
/** A vector of the given precision (users get double ones; float vectors serve the V-cycle). */
int mf_vector_create_prec(mf_space space, mf_precision prec, mf_vector *v);
/** dst = src, all local entries, converting the precision where they differ. */
int mf_vector_convert(mf_vector dst, mf_vector src);
const char *mf_precision_name(mf_precision p);

#ifdef __cplusplus
}
#endif
#endif
