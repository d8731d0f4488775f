/* mf_physics_impl.h -- private to the library: what the cell families' physics operators
 * (lib/hex/physics_hex.c, lib/simplex/physics_simplex.c) share on the host (lib/physics/physics.c). */
#ifndef MF_PHYSICS_IMPL_H
#define MF_PHYSICS_IMPL_H

#include "operator_impl.h"
#include "physics/mf_physics.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- physics given as source (lib/physics/source.c) */
/** Keep / let go of the source a copy of a physics holds (every operator's copy holds it). */
void mf_phys_retain(mf_phys *ph);
void mf_phys_release(mf_phys *ph);
/** The physics takes this source (len bytes, origin: its file or "physics source") and the functions
 *  named by `functions` ("g3=name f1=name ..."); its function pointers are cleared. */
int mf_phys_source_set(mf_phys *ph, mf_context ctx, const char *text, size_t len, const char *origin,
                       const char *functions);
const char *mf_phys_source_text(const mf_phys *ph);
const char *mf_phys_source_origin(const mf_phys *ph);
/** The name of function t (0 f0, 1 f1, 2..5 g0..g3) in the source, NULL if none. */
const char *mf_phys_source_name(const mf_phys *ph, int t);
/** "f0=name g0=name" (either may be missing) into names[0], names[1] ("": none); 0 or MF_ERR_ARGUMENT. */
int mf_phys_boundary_names(mf_context ctx, const char *spec, char names[2][MF_PHYS_MAX_NAME]);
/** Whether a boundary term of ph is given as source. */
int mf_phys_has_boundary_source(const mf_phys *ph);
/** The cpu backend: the source compiled by the system C compiler into a shared object (or that object
 *  taken from the cache) and ph's f and g set to its functions. Nothing for a physics of functions.
 *  Timed as set-up phase "compile". */
int mf_phys_compile_cpu(mf_context ctx, mf_phys *ph);
/** The cache folder (made if missing) into dir; nonzero (an errno) where it cannot be written: then
 *  said once on stderr, and the caller compiles without caching. */
int mf_jit_cache_dir(mf_context ctx, char *dir, size_t n);
/** The cache key of the parts (hex, 16 characters and the terminator). */
void mf_jit_key(const char *const *parts, int nparts, char key[17]);
/** A cache entry: written whole then renamed, with its sum beside it (0 or an errno); read (1: found and
 *  matching its sum, *data malloc'd; 0: none; -1: corrupt, half written or stale); removed. */
int mf_jit_cache_write(const char *dir, const char *name, const void *data, size_t n);
int mf_jit_cache_read(const char *dir, const char *name, void **data, size_t *n);
void mf_jit_cache_remove(const char *dir, const char *name);

/** The full layout (nb = nc) of ph's g-functions in dim; returns the entries per point. */
int mf_phys_layout_init(const mf_phys *ph, int dim, mf_phys_layout *L);
/** The g-functions at x (u = du = 0) stored in reference form into D (L full). Returns 1 where one of
 *  their values is not finite (D then holds it), else 0. Thread-safe where the user's functions are. */
int mf_phys_point(const mf_phys *ph, const mf_phys_layout *L, const double *x, const double *Ji, double W, double *D);
/** The same at the state u[nc], ref[nc * dim] (the field's reference gradient: d u_b / d xi_m at [b * dim + m]; the
 *  physical gradient is made here with Ji): the linearisation of the residual there. */
int mf_phys_point_state(const mf_phys *ph, const mf_phys_layout *L, const double *x, const double *Ji, double W,
                        const double *u, const double *ref, double *D);
/** MF_ERR_ARGUMENT naming the g-function, its entry and value, the point, cell and coordinates (the
 *  first point where mf_phys_point returned 1). */
int mf_phys_refuse(mf_context ctx, const mf_phys *ph, const mf_phys_layout *L, int cell, int q, const double *x);
/** The residual's functions at one point: r0[c] = W f0_c and r1[c * dim + l] = W sum_d Ji[l][d] f1_c,d
 *  (against the reference derivative l) from the field's values u and reference derivatives ref
 *  (ref[b * dim + m]); the physical gradient is ref Ji. Returns 1 where a value is not finite. */
int mf_phys_residual_point(const mf_phys *ph, int dim, const double *x, const double *Ji, double W, const double *u,
                           const double *ref, double *r0, double *r1);
/** MF_ERR_ARGUMENT naming the f-function, its entry and value, the point, cell and x (u, du: the state
 *  there). */
int mf_phys_residual_refuse(mf_context ctx, const mf_phys *ph, int dim, int cell, int q, const double *x,
                            const double *u, const double *du);
/** The data (npts points of layout *lay, *qd: malloc'd) in the narrowest layout that holds them: one
 *  block where every point's blocks are zero between components and equal on the diagonal, then D3's
 *  upper triangle where one block's D3 is symmetric everywhere (mf_physics.h); *qd and *lay replaced. */
int mf_phys_narrow(mf_context ctx, mf_phys_layout *lay, double **qd, size_t npts);

#ifdef __cplusplus
}
#endif
#endif
