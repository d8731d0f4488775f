/* mf_backend.h -- the backend table: what the core objects and the families ask of a backend, filled
 * by the backend and held by the context (ctx->bk), chosen when the context is made (lib/backend.c,
 * the registry). The cpu backend's table (lib/backend.c) leaves every entry NULL: the caller then runs
 * its CPU path, the reference. The cuda backend fills its table in lib/cuda/backend.c with the
 * extern "C" entry points of lib/cuda/. Callers test an entry before calling it; a backend that
 * fills one entry of a group fills the group. Entries take the objects whole (the backend reads their
 * private layouts) and record failures on the object's context, as every function of the library. */
#ifndef MF_BACKEND_H
#define MF_BACKEND_H

#include "mfree_impl.h"

#ifdef __cplusplus
extern "C" {
#endif

struct mf_transfer_s;              /* lib/mg/mf_mg.h */
struct mf_basis1d_s;               /* lib/hex/mf_hex_op.h */
struct mf_simplex_backend_ops_s;   /* lib/simplex/mf_simplex_backend.h */
struct mf_simplex_op_s;            /* lib/simplex/mf_simplex.h */
struct mf_simplex_cuda_op_s;       /* lib/cuda/simplex.cu, the backend's own */

typedef struct mf_backend_ops_s {
  const char *name; /* as mf_context_create takes it */
  mf_backend kind;
  /* the process, no context: usable devices (0: none), and why not, for mf_cuda_status */
  int (*device_count)(void);
  mf_cuda_state (*probe)(char *reason, size_t len);
  struct {
    /* the backend's state in ctx->cuda; init fails without it (no device), finalize frees it */
    int (*init)(mf_context ctx);
    void (*finalize)(mf_context ctx);
    /* the device's physical id (PCI bus id, at most len bytes): ranks of a node on one device refused */
    int (*device_id)(mf_context ctx, char *id, int len);
    /* wait for the context's device work (set-up phases' times; errors left to the next checked call) */
    void (*synchronize)(mf_context ctx);
    /* device memory held and peak (either may be NULL); with set_limit, set the limit first */
    void (*memory)(mf_context ctx, size_t *in_use, size_t *peak, const size_t *set_limit);
  } context;
  struct {
    int (*setup)(mf_space space);  /* the device mirror (space->dev); times its own phases */
    int (*marks)(mf_space space);  /* the boundary marks copied again after they changed */
    void (*free)(mf_space space);
  } space;
  struct {
    int (*setup)(mf_vector v);     /* v->data and v->ops (NULL: the host arrays and the CPU table) */
    /* b (local entries, before the export-add) = sum over cells of C^T B^T (f w |det J|), basis b */
    int (*assemble_rhs)(mf_vector b, const struct mf_basis1d_s *basis, mf_coefficient_fn f, void *user);
    /* cellsum[e] (host) = sum over the points of cell e of (u_h - u)^2 w |det J| (ghosts imported) */
    int (*l2_cells)(mf_vector uh, const struct mf_basis1d_s *basis, mf_coefficient_fn u, void *user, double *cellsum);
  } vector;
  struct {
    /* a matrix-free operator's data and op->ops (NULL: the CPU quadrature data and kernels) */
    int (*setup)(mf_operator op, mf_coefficient_fn c, void *user, double a, double b);
    int (*single)(mf_operator op, mf_operator like); /* mf_operator_create_single's copy in float */
    /* mf_operator_set_geometry in two steps: prepare the new state, then commit it or discard it */
    int (*geometry_prepare)(mf_operator op, mf_geometry mode, void **st);
    void (*geometry_commit)(mf_operator op, mf_geometry mode, void *st);
    void (*geometry_discard)(mf_operator op, void *st);
    int (*qdata_to_host)(mf_operator op, double *host); /* op->qd.len doubles */
  } op;
  struct {
    /* the assembled operators: the space's sparsity on the device, A's values from mfop by variant
     * v, A's product (apply, diagonal, destroy), its rows with ghost columns; the kept table of
     * positions (bytes, dropped); A's values copied to host */
    int (*pattern)(mf_space space);
    int (*assemble)(mf_operator mfop, mf_assembly_variant v, mf_operator A);
    int (*csr_ops)(mf_operator A);
    int (*ghost_rows)(mf_operator A);
    size_t (*table_bytes)(mf_space space);
    void (*table_drop)(mf_space space);
    int (*values_to_host)(mf_operator A, double *host);
    int (*values_from_host)(mf_operator A, const double *host); /* A's values from the host's */
  } assembly;
  struct {
    /* multigrid's level transfers (lib/mg/transfer.c): tr->dev, and P and P^T on the device */
    int (*setup)(struct mf_transfer_s *tr);
    void (*free)(struct mf_transfer_s *tr);
    int (*prolongate)(struct mf_transfer_s *tr, mf_vector coarse, mf_vector fine);
    int (*restriction)(struct mf_transfer_s *tr, mf_vector fine, mf_vector coarse);
  } transfer;
  struct {
    /* the hex family's operators of a physics given as source (lib/hex/mf_hex_physics.h) on the device
     * (lib/cuda/physics.cu): its kernels compiled for the operator's shape (NVRTC, cached), the stored
     * data (or the fused operator's geometry) made there, op->ops (apply, residual, destroy); a copy in
     * float; the diagonal into d (overwritten) */
    int (*hex_setup)(mf_operator op);
    int (*hex_single)(mf_operator op, mf_operator like);
    int (*hex_diagonal)(mf_operator op, mf_vector d);
    /* a one-component physics without g1, g2: its kernels (the residual) made and its data written into
     * the device data of a built-in operator (inner) that applies them from then on; *fits 0 where its
     * D3 is not symmetric somewhere (then hex_setup makes its own) */
    int (*hex_setup_builtin)(mf_operator op, mf_operator inner, int *fits);
    /* the values of A (the CSR operator of op's space, its pattern on the device) allocated on the device
     * and assembled there from op's element matrices */
    int (*hex_assemble)(mf_operator op, mf_operator A);
    /* op at the state u (mf_operator_set_state): the g-functions at (u, grad u) stored, or fused with the state's
     * values kept; op->ops.apply set to the device's (collective) */
    int (*hex_state)(mf_operator op, mf_vector u);
    /* the faces' terms of a physics whose boundary terms are all given as source, added into y on the
     * device: mode 0 the operator's (g0 times x), 1 the residual's (f0 at x), 2 the diagonal's (x unused) */
    int (*hex_faces)(mf_operator op, int mode, mf_vector x, mf_vector y);
    /* the simplex family's operators of a physics given as source (lib/simplex/mf_simplex_physics.h) on the
     * device (lib/cuda/physics_simplex.cu): its kernels compiled, the stored data made there, op->ops
     * (apply, diagonal, residual, destroy); the values of A (its pattern on the device) assembled there */
    int (*simplex_setup)(mf_operator op);
    int (*simplex_assemble)(mf_operator op, mf_operator A);
    /* the built-in operator (description, device operator) a simplex physics runs on; NULLs: none */
    void (*simplex_builtin)(mf_operator op, const struct mf_simplex_op_s **sop, struct mf_simplex_cuda_op_s **dev);
    /* the float copy op of like (its own stored data rounded on the device; op: like's description) */
    int (*simplex_single)(mf_operator op, mf_operator like);
  } physics;
  struct {
    /* pointwise fields given as source (lib/cuda/source.cu) on hex spaces, on the device: the nodes'
     * values (boundary: the boundary entries, 0 elsewhere), b += the integral of f phi_i (local entries,
     * the caller exports), and this rank's sum of the cells' integrals of |u_h - u|^2. NULL: the host path
     * of lib/physics/source_fields.c. */
    int (*nodes)(mf_source f, mf_vector v, int boundary);
    int (*rhs)(mf_source f, mf_vector b);
    int (*l2)(mf_source f, mf_vector uh, double *sum);
  } source;
  /* the simplex family's device operators (NULL: the CPU kernels of lib/simplex/ops_cpu.c) */
  const struct mf_simplex_backend_ops_s *simplex;
} mf_backend_ops;

/** The backends compiled in (lib/backend.c registers them; the cuda table is in lib/cuda/backend.c). */
extern const mf_backend_ops mf_backend_ops_cpu;
extern const mf_backend_ops mf_backend_ops_cuda;
/** The registered table of a backend, NULL where it was not compiled in. */
const mf_backend_ops *mf_backend_find(mf_backend kind);

#ifdef __cplusplus
}
#endif
#endif
