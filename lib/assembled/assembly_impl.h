/* assembly_impl.h -- private to the assembled operators: the helpers that the CPU assembly
 * (lib/assembled/assembly.c, lib/assembled/assembly_variants.c) and the device assembly (lib/cuda/assembly.cu) share.
 * The variants of the values and what they need:
 *   search   every (cell, i, j) of a cell without hanging nodes adds A_e(i, j) at the position of
 *            column nodes[j] in row nodes[i], found by binary search (atomics: cells share rows);
 *   table    the same with the positions read from a table (4 or 8 bytes per entry of every element
 *            matrix: the largest extra memory of the three), on the device made by the first table
 *            assembly on a space and kept with its device pattern, on the host made per assembly;
 *   rowwise  every local DoF r sums row i of the element matrices of the cells that hold r at position
 *            i (the lists of mf_assembly_dof_cells) into its own row: no atomics.
 * Cells with hanging nodes (face_code != 0) add C^T A_e C entry by entry at searched positions, the
 * same for all variants.                                                                          */
#ifndef MF_ASSEMBLY_IMPL_H
#define MF_ASSEMBLY_IMPL_H

#include "operator_impl.h"
#include "assembled/mf_element.h"

#ifdef __cplusplus
extern "C" {
#endif

/** The sparsity of every operator assembled on s (lib/assembled/assembly_pattern.c), made once and kept on the
 *  space (s->csr_rowptr, s->csr_colidx; nothing done where it is there): rows and columns are the local
 *  DoFs, row r holds the nodes of the cells that hold r, ascending. what names the operator in
 *  refusals; values_on_host: the memory check counts the operator's values too. */
int mf_assembly_pattern(mf_space s, const char *what, int values_on_host);
/** Bytes an assembled operator adds to its space's sparsity: the values (8 per nonzero) and its work
 *  vector (8 per local DoF); with_pattern: the columns too (4 per nonzero). */
double mf_assembly_matrix_bytes(int n, int64_t nnz, int with_pattern);
/** The shape of op's element entries (mf_element_entry). */
void mf_assembly_shape(mf_operator op, mf_element_shape *sh);
/** The cells without hanging nodes, ascending: *cells (NULL where every cell is one: the cells are then
 *  0 .. ncells-1) and their number. */
int mf_assembly_free_cells(mf_space s, int **cells, int *nfree);
/** Whether a table of positions into nnz nonzeros takes 8-byte entries (else 4). */
int mf_assembly_table_wide(int64_t nnz);
/** Tests only: on != 0 makes every table of positions 8-byte, whatever nnz. */
void mf_test_assembly_table_wide(int on);
/** Bytes of the DoF-to-cell lists of the rowwise variant (off: nlocal + 1, entries: one per node of a
 *  cell without hanging nodes). */
double mf_assembly_dof_cells_bytes(mf_space s, int nfree);
/** The rowwise lists: the entries off[r] .. off[r+1] of DoF r are (cell * npc + i) of every position
 *  i of a cell without hanging nodes that holds r, cells ascending. */
int mf_assembly_dof_cells(mf_space s, const int *cells, int nfree, int64_t **off, int64_t **entries);
/** Bytes of the table of positions kept with the space (the device's, made by its first table
 *  assembly; 0 before that and on the cpu backend, whose table serves one assembly). */
/* The rows of an assembled operator that hold ghost columns: in a row the columns ascend and the ghost
 * DoFs (local index >= nowned) come last, so its entries [start[k], rowptr[rows[k] + 1]) are those of
 * the ghost columns. The overlapped product (apply_part) adds every row's owned columns while the
 * import travels (MF_PART_INTERIOR_A), then these rows' ghost columns (MF_PART_BOUNDARY). Kept in the
 * assembled operator's data (mf_csr(A)->ghost), made where the communicator has several ranks. */
typedef struct {
  int n;          /* rows with ghost columns */
  int *rows;      /* n local rows, ascending */
  int64_t *start; /* n positions of their first ghost column */
} mf_csr_ghost_rows;
/** The data of an assembled operator (its type: mf_optype_assembled, op->data). */
typedef struct {
  const int64_t *rowptr;     /* the space's sparsity (host; lib/assembled/assembly_pattern.c) */
  const int *colidx;
  double *vals;              /* rowptr[nlocal] values: host, or device memory (freed by A->ops.destroy) */
  int values_on_device;
  mf_csr_ghost_rows *ghost;  /* the rows with ghost columns (several ranks), else NULL */
  void *dev;                 /* the backend's state of the product (lib/cuda/csr.cu) */
} mf_csr_op;
static inline mf_csr_op *mf_csr(const struct mf_operator_s *A) { return (mf_csr_op *)A->data; }
extern const mf_optype mf_optype_assembled;
/** The hex type's assemble entry (lib/assembled/assembly.c): A's values from op by variant v. */
int mf_assembly_hex_values(mf_operator op, mf_assembly_variant v, mf_operator A);
/** An assembled operator as mf_operator_create_assembled_variant makes it, without its product (apply
 *  and diagonal refuse): on 'cuda' its values can be checked without lib/cuda/csr.cu. Tests only. */
int mf_operator_create_assembled_values(mf_operator op, mf_assembly_variant variant, mf_operator *assembled);
/** Copy an assembled operator's values (its local nnz, the space's pattern) to host; on 'cuda' from the
 *  device. Tests only. */
int mf_operator_csr_values_host(mf_operator assembled, double *host);
/** add(op, rowptr, colidx, vals) adds terms into A's values where they are (the host's array; on a device
 *  backend a host copy, written back after): the boundary terms that a device's assembly leaves to the host. */
int mf_csr_values_host_add(mf_operator A, mf_operator op,
                           int (*add)(mf_operator op, const int64_t *rowptr, const int *colidx, double *vals));
int mf_csr_ghost_rows_make(mf_operator A);
void mf_csr_ghost_rows_free(mf_operator A);

size_t mf_assembly_table_kept_bytes(mf_space s);
/** Benchmarks: free the table of positions kept with the space (the next table assembly makes it
 *  again), so that the time of making it can be measured. */
void mf_assembly_table_drop(mf_space s);
/** vals (zeroed, the space's pattern) <- the assembled values by a variant's CPU twin. */
int mf_assembly_values_cpu(mf_operator op, mf_assembly_variant v, const int64_t *rowptr, const int *colidx,
                           double *vals);

#ifdef __cplusplus
}
#endif
#endif
