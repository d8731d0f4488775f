/* mf_cuda.h -- entry points of the CUDA backend, which the C core (lib/) reaches through the backend
 * table that lib/cuda/backend.c fills with them. All are extern "C" launchers/wrappers that check
 * every CUDA call and record failures on the context. */
#ifndef MF_CUDA_H
#define MF_CUDA_H

#include "hex/mf_hex_op.h"

#ifdef __cplusplus
extern "C" {
#endif

/** Number of usable CUDA devices (0 on error or without a driver). */
int mf_cuda_device_count(void);
/** cudaGetDeviceCount's answer sorted (usable, no device, fault) with a text naming the CUDA error,
 *  written to reason (len bytes). */
mf_cuda_state mf_cuda_probe(char *reason, size_t len);
int mf_cuda_context_init(mf_context ctx);
/** The PCI bus id of the context's device (a string of at most len bytes): the physical GPU. */
int mf_cuda_device_id(mf_context ctx, char *id, int len);
void mf_cuda_context_finalize(mf_context ctx);
/** Device memory held and peak (either may be NULL); with set_limit, set the limit first. */
void mf_cuda_memory(mf_context ctx, size_t *in_use, size_t *peak, const size_t *set_limit);
/** Wait for all device work of the context (errors are left to the next checked call). */
void mf_cuda_synchronize(mf_context ctx);
int mf_cuda_space_setup(mf_space space);
void mf_cuda_space_free(mf_space space);
/** The space's boundary marks (bc, bc_list) copied to the device again, after they changed
 *  (mf_space_set_dirichlet_tags on a simplex space). */
int mf_cuda_space_marks(mf_space space);
int mf_cuda_vector_setup(mf_vector v);
/** The operator on the device: quadrature data computed there (coefficient c evaluated on the host
 *  at points computed there), 1D matrices; phases geometry, coefficient and h2d. */
int mf_cuda_operator_setup(mf_operator op, mf_coefficient_fn c, void *user, double a, double b);
/** b (local entries, before the export-add) = sum over cells of C^T B^T (f w |det J|) with the 1D
 *  basis b (the caller's rule): points on the device, f on the host in batches. */
int mf_cuda_assemble_rhs(mf_vector bvec, const mf_basis1d *b, mf_coefficient_fn f, void *user);
/** cellsum[e] (host) = sum over the points of cell e of (u_h - u)^2 w |det J| (ghosts of uh imported). */
int mf_cuda_l2_cells(mf_vector uh, const mf_basis1d *b, mf_coefficient_fn u, void *user, double *cellsum);
/** Multigrid transfers on the device (lib/cuda/transfer.cu; the type is in lib/mg/mf_mg.h). */
struct mf_transfer_s;
int mf_cuda_transfer_setup(struct mf_transfer_s *tr);
void mf_cuda_transfer_free(struct mf_transfer_s *tr);
int mf_cuda_transfer_prolongate(struct mf_transfer_s *tr, mf_vector coarse, mf_vector fine);
int mf_cuda_transfer_restrict(struct mf_transfer_s *tr, mf_vector fine, mf_vector coarse);
/** op (a copy of like, mf_operator_create_single): its device state with like's quadrature data
 *  rounded to float. */
int mf_cuda_operator_single(mf_operator op, mf_operator like);
/** Switch op's device state between stored quadrature data and geometry on the fly (the coefficient
 *  at the quadrature points on the device, the space's coordinates component-major) in two steps:
 *  prepare the new state *st without touching the old one, then commit it, or discard it where a rank
 *  failed (lib/cuda/operator.cu). */
int mf_cuda_operator_geometry_prepare(mf_operator op, mf_geometry mode, void **st);
void mf_cuda_operator_geometry_commit(mf_operator op, mf_geometry mode, void *st);
void mf_cuda_operator_geometry_discard(mf_operator op, void *st);
/** Copy the device quadrature data to host (len doubles). */
int mf_cuda_qdata_to_host(mf_operator op, double *host);
/** The assembled operator on the device. lib/cuda/assembly.cu: the space's sparsity copied to the
 *  device once (mf_cuda_space csr_rowptr/csr_colidx), and A->vals (device memory) computed there by
 *  variant v from mfop's device quadrature data. lib/cuda/csr.cu: A's apply, diagonal and destroy
 *  through a sparse matrix-vector product (A->dev its state). */
int mf_cuda_csr_pattern(mf_space space);
int mf_cuda_assemble(mf_operator mfop, mf_assembly_variant v, mf_operator A);
int mf_cuda_csr_ops(mf_operator A);
/* the rows with ghost columns (mf_csr(A)->ghost, mf_csr_ghost_rows) copied to the device, and the overlapped
 * product in parts (ops.apply_part) */
int mf_cuda_csr_ghost_rows(mf_operator A);
/** Bytes of the table of positions kept with the space's device pattern (0: none made yet). */
size_t mf_cuda_assembly_table_bytes(mf_space space);
/** mf_assembly_table_drop on the device. */
void mf_cuda_assembly_table_drop(mf_space s);
/** Users' physics on hexahedra (lib/cuda/physics.cu): the operator's kernels compiled by NVRTC (or taken
 *  from the cache), its stored data made on the device, op->ops; its stored data to the host in the cpu
 *  layout (ncells x nqp x entries). */
int mf_cuda_physics_setup(mf_operator op);
int mf_cuda_physics_diagonal(mf_operator op, mf_vector dv);
int mf_cuda_physics_faces(mf_operator op, int mode, mf_vector x, mf_vector y);
int mf_cuda_physics_single(mf_operator op, mf_operator like);
/** The CSR values of a physics operator's matrix on the device (A: the space's pattern, there already). */
int mf_cuda_physics_assemble(mf_operator op, mf_operator A);
int mf_cuda_physics_state(mf_operator op, mf_vector u);
/** Users' physics on simplices (lib/cuda/physics_simplex.cu): the kernels compiled (NVRTC, cached), the
 *  stored data made on the device, op->ops; the CSR values of its matrix on the device. */
int mf_cuda_simplex_physics_setup(mf_operator op);
int mf_cuda_simplex_physics_assemble(mf_operator op, mf_operator A);
int mf_cuda_simplex_physics_single(mf_operator op, mf_operator like);
struct mf_simplex_op_s;
struct mf_simplex_cuda_op_s;
/** The built-in operator a simplex physics runs on (the built-in fit of physics_simplex.cu): its description and
 *  device operator; both NULL where the physics keeps its own data. */
void mf_cuda_simplex_physics_builtin(mf_operator op, const struct mf_simplex_op_s **sop,
                                     struct mf_simplex_cuda_op_s **dev);
/** Pointwise fields given as source (lib/cuda/source.cu; the backend table's source): on hex spaces there,
 *  on the spaces of a family that keeps its cells itself (simplex) by the functions of
 *  lib/cuda/simplex_source.cu, which the first three call. */
int mf_cuda_source_nodes(mf_source f, mf_vector v, int boundary);
int mf_cuda_source_rhs(mf_source f, mf_vector b);
int mf_cuda_source_l2(mf_source f, mf_vector uh, double *sum);
int mf_cuda_simplex_source_nodes(mf_source f, mf_vector v, int boundary);
int mf_cuda_simplex_source_rhs(mf_source f, mf_vector b);
int mf_cuda_simplex_source_l2(mf_source f, mf_vector uh, double *sum);
/** A one-component physics without g1, g2: its data written straight into the device data of the built-in
 *  operator inner (same space and rule); *fits 0 where D3 is not symmetric somewhere. */
int mf_cuda_physics_setup_builtin(mf_operator op, mf_operator inner, int *fits);
/** Copy A->vals (device memory, nnz doubles) to host. */
int mf_cuda_csr_values_to_host(mf_operator A, double *host);
int mf_cuda_csr_values_from_host(mf_operator A, const double *host);

#ifdef __cplusplus
}
#endif
#endif
