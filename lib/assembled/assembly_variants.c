/* assembly_variants.c -- the CPU twins of the device assembly kernels (lib/cuda/assembly.cu): the
 * same element entries (lib/assembled/mf_element.h), the same positions, the same work per thread (an OpenMP
 * iteration here for a CUDA thread there, atomic adds where the kernel has them). The variants and
 * the memory each needs: lib/assembled/assembly_impl.h. The reference assembly (dense element matrices added
 * color by color) is lib/assembled/assembly.c; the twins agree with it to rounding.                        */
#include "assembled/assembly_impl.h"
#include "hex/mf_hex_op.h"

static int table_wide_forced = 0;

void mf_test_assembly_table_wide(int on) { table_wide_forced = on != 0; }

int mf_assembly_table_wide(int64_t nnz) { return table_wide_forced || nnz >= ((int64_t)1 << 31); }

void mf_assembly_shape(mf_operator op, mf_element_shape *sh)
{
  const mf_space s = op->space;
  sh->dim = s->dim;
  sh->n1 = s->n1;
  sh->nq = mf_hexop(op)->basis.nq;
  sh->nqp = mf_hexop(op)->qd.nqp;
  sh->npc = s->npc;
  sh->has_mass = mf_hexop(op)->pw.has_mass;
  sh->has_grad = mf_hexop(op)->pw.has_grad;
  sh->block_stride = mf_hexop(op)->qd.block_stride;
}

int mf_assembly_free_cells(mf_space s, int **cells, int *nfree)
{
  *cells = NULL;
  *nfree = s->ncells - s->nmasked;
  if (!s->nmasked) return 0;
  MF_CALL(mf_host_require(s->ctx, 4.0 * (double)*nfree, "the list of cells without hanging nodes"));
  MF_CALL(MF_CALLOC(s->ctx, *nfree > 0 ? *nfree : 1, cells));
  for (int e = 0, k = 0; e < s->ncells; e++)
    if (!s->face_code[e]) (*cells)[k++] = e;
  return 0;
}

double mf_assembly_dof_cells_bytes(mf_space s, int nfree)
{
  return 8.0 * ((double)s->nlocal + 1.0) + 8.0 * (double)nfree * (double)s->npc;
}

int mf_assembly_dof_cells(mf_space s, const int *cells, int nfree, int64_t **off, int64_t **entries)
{
  mf_context ctx = s->ctx;
  const int n = s->nlocal, npc = s->npc;
  const size_t nent = (size_t)nfree * (size_t)npc;
  const int *cell_nodes = s->cell_nodes;
  *off = NULL;
  *entries = NULL;
  MF_CALL(mf_host_require(ctx, mf_assembly_dof_cells_bytes(s, nfree), "the DoF-to-cell lists of the rowwise assembly"));
  int64_t *o = NULL, *en = NULL;
  int ierr = MF_CALLOC(ctx, (size_t)n + 1, &o);
  if (!ierr) ierr = MF_CALLOC(ctx, nent ? nent : 1, &en);
  if (ierr) {
    free(o);
    free(en);
    return ierr;
  }
  for (int k = 0; k < nfree; k++) {
    const int *nodes = &cell_nodes[(size_t)(cells ? cells[k] : k) * npc];
    for (int i = 0; i < npc; i++) o[nodes[i] + 1]++;
  }
  for (int r = 0; r < n; r++) o[r + 1] += o[r];
  /* fill, cells ascending: o[r] moves to the next row's start, then back */
  for (int k = 0; k < nfree; k++) {
    const int e = cells ? cells[k] : k;
    const int *nodes = &cell_nodes[(size_t)e * npc];
    for (int i = 0; i < npc; i++) en[o[nodes[i]]++] = (int64_t)e * npc + i;
  }
  for (int r = n; r > 0; r--) o[r] = o[r - 1];
  o[0] = 0;
  *off = o;
  *entries = en;
  return 0;
}

/* Cells with hanging nodes: C^T A_e C (the cell operator on unit vectors), every nonzero entry added
 * at its searched position; one iteration per cell (a block per cell on the device, which adds
 * column by column: the sums at a position differ in order only). */
static int hanging_cells(mf_operator op, const int64_t *rowptr, const int *colidx, double *vals)
{
  const mf_space s = op->space;
  const int npc = s->npc;
  if (!s->nmasked) return 0;
  const size_t nwork = (size_t)npc * npc + mf_kernel_work_size(op) + 2 * (size_t)npc;
  int ierr = 0;
#pragma omp parallel
  {
    double *Ae = NULL;
    int lerr = MF_CALLOC(NULL, nwork, &Ae); /* reported once, below */
    mf_thread_note(&ierr, lerr);
#pragma omp for schedule(dynamic, 4)
    for (int k = 0; k < s->nmasked; k++) {
      if (lerr) continue;
      const int e = s->masked_cells[k];
      const int *nodes = &s->cell_nodes[(size_t)e * npc];
      mf_element_matrix_constrained_work(op, e, Ae, Ae + (size_t)npc * npc);
      for (int i = 0; i < npc; i++)
        for (int j = 0; j < npc; j++) {
          const double a = Ae[(size_t)i * npc + j];
          if (a == 0.0) continue;
          const int64_t pos = mf_csr_find(rowptr, colidx, nodes[i], nodes[j]);
#pragma omp atomic update
          vals[pos] += a;
        }
    }
    free(Ae);
  }
  MF_CALL(mf_thread_work_check(s->ctx, ierr, "assembly"));
  return 0;
}

/* Search and table: one iteration per cell without hanging nodes, all its entries. Where the
 * column-wise form applies (mf_element_fast), column by column as the device's threads (cell, j) do:
 * mf_element_column with the point table, then the column's entries added at their positions; else
 * entry by entry (mf_element_entry; the device splits a cell's entries among threads: the same
 * entries). table32/table64: the positions of every (cell k of the list, i, j), or both NULL: binary
 * search. */
static int cells_atomic(mf_operator op, const int *cells, int nfree, const int32_t *table32, const int64_t *table64,
                        const int64_t *rowptr, const int *colidx, double *vals)
{
  const mf_space s = op->space;
  const int npc = s->npc;
  mf_element_shape sh;
  mf_assembly_shape(op, &sh);
  const double *B = mf_hexop(op)->basis.B, *G = mf_hexop(op)->basis.Bg;
  double *T = NULL;
  if (mf_element_fast(&sh)) {
    MF_CALL(MF_CALLOC(s->ctx, (size_t)4 * sh.nqp * npc, &T));
    mf_element_point_table(&sh, B, G, T);
  }
#pragma omp parallel for schedule(dynamic, 16)
  for (int k = 0; k < nfree; k++) {
    const int e = cells ? cells[k] : k;
    const double *qd = mf_hexop(op)->qd.data + mf_element_qd_base(e, mf_hexop(op)->qd.batch, mf_hexop(op)->qd.batch_stride, mf_hexop(op)->qd.nqp);
    const int *nodes = &s->cell_nodes[(size_t)e * npc];
    double col[MF_ELEMENT_FAST_MAX_NPC];
    for (int j = 0; j < npc; j++) {
      if (T) mf_element_column(&sh, qd, T, j, col);
      for (int i = 0; i < npc; i++) {
        const double a = T ? col[i] : mf_element_entry(&sh, qd, B, G, i, j);
        const size_t t = ((size_t)k * npc + i) * npc + j;
        const int64_t pos = table32 ? table32[t] : table64 ? table64[t] : mf_csr_find(rowptr, colidx, nodes[i], nodes[j]);
#pragma omp atomic update
        vals[pos] += a;
      }
    }
  }
  free(T);
  return 0;
}

/* The table of positions (the device's table kernel: one thread per entry). */
static int make_table(mf_operator op, const int *cells, int nfree, const int64_t *rowptr, const int *colidx,
                      int32_t **table32, int64_t **table64)
{
  const mf_space s = op->space;
  const int npc = s->npc;
  const size_t nent = (size_t)nfree * npc * npc;
  const int wide = mf_assembly_table_wide(rowptr[s->nlocal]);
  char msg[160];
  snprintf(msg, sizeof msg, "the table of positions of the assembly (%zu entries of %d bytes)", nent, wide ? 8 : 4);
  MF_CALL(mf_host_require(s->ctx, (wide ? 8.0 : 4.0) * (double)nent, msg));
  if (wide) MF_CALL(MF_CALLOC(s->ctx, nent ? nent : 1, table64));
  else MF_CALL(MF_CALLOC(s->ctx, nent ? nent : 1, table32));
#pragma omp parallel for schedule(static)
  for (int k = 0; k < nfree; k++) {
    const int *nodes = &s->cell_nodes[(size_t)(cells ? cells[k] : k) * npc];
    for (int i = 0; i < npc; i++)
      for (int j = 0; j < npc; j++) {
        const size_t t = ((size_t)k * npc + i) * npc + j;
        const int64_t pos = mf_csr_find(rowptr, colidx, nodes[i], nodes[j]);
        if (wide) (*table64)[t] = pos;
        else (*table32)[t] = (int32_t)pos;
      }
  }
  return 0;
}

/* Rowwise: one iteration per local DoF r, the rows of its cells' element matrices summed into row r in
 * list order (cells ascending): no two iterations write one value. Where the column-wise form applies
 * (mf_element_fast), row i of a cell's matrix is its column i (the matrices are symmetric: G_kl and
 * m_q are), made by mf_element_column as on the device; else entry by entry. */
static int rows_gather(mf_operator op, const int64_t *off, const int64_t *entries, const int64_t *rowptr,
                       const int *colidx, double *vals)
{
  const mf_space s = op->space;
  const int npc = s->npc;
  mf_element_shape sh;
  mf_assembly_shape(op, &sh);
  const double *B = mf_hexop(op)->basis.B, *G = mf_hexop(op)->basis.Bg;
  double *T = NULL;
  if (mf_element_fast(&sh)) {
    MF_CALL(MF_CALLOC(s->ctx, (size_t)4 * sh.nqp * npc, &T));
    mf_element_point_table(&sh, B, G, T);
  }
#pragma omp parallel for schedule(dynamic, 64)
  for (int r = 0; r < s->nlocal; r++)
    for (int64_t t = off[r]; t < off[r + 1]; t++) {
      const int e = (int)(entries[t] / npc), i = (int)(entries[t] % npc);
      const double *qd = mf_hexop(op)->qd.data + mf_element_qd_base(e, mf_hexop(op)->qd.batch, mf_hexop(op)->qd.batch_stride, mf_hexop(op)->qd.nqp);
      const int *nodes = &s->cell_nodes[(size_t)e * npc];
      double row[MF_ELEMENT_FAST_MAX_NPC];
      if (T) mf_element_column(&sh, qd, T, i, row);
      for (int j = 0; j < npc; j++)
        vals[mf_csr_find(rowptr, colidx, r, nodes[j])] += T ? row[j] : mf_element_entry(&sh, qd, B, G, i, j);
    }
  free(T);
  return 0;
}

int mf_assembly_values_cpu(mf_operator op, mf_assembly_variant v, const int64_t *rowptr, const int *colidx,
                           double *vals)
{
  const mf_space s = op->space;
  int *cells = NULL, nfree = 0;
  int32_t *t32 = NULL;
  int64_t *t64 = NULL, *off = NULL, *entries = NULL;
  int ierr = mf_assembly_free_cells(s, &cells, &nfree);
  if (ierr) return ierr;
  switch (v) {
  case MF_ASSEMBLY_SEARCH: ierr = cells_atomic(op, cells, nfree, NULL, NULL, rowptr, colidx, vals); break;
  case MF_ASSEMBLY_TABLE:
    ierr = make_table(op, cells, nfree, rowptr, colidx, &t32, &t64);
    if (!ierr) ierr = cells_atomic(op, cells, nfree, t32, t64, rowptr, colidx, vals);
    free(t32); /* the table serves this assembly only (the device keeps its own: lib/cuda/assembly.cu) */
    free(t64);
    break;
  case MF_ASSEMBLY_ROWWISE:
    ierr = mf_assembly_dof_cells(s, cells, nfree, &off, &entries);
    if (!ierr) ierr = rows_gather(op, off, entries, rowptr, colidx, vals);
    free(off);
    free(entries);
    break;
  default:
    ierr = mf_error_set(s->ctx, MF_ERR_ARGUMENT, __FILE__, __LINE__, __func__, "assembly variant %d has no CPU twin",
                        (int)v);
  }
  free(cells);
  if (!ierr) ierr = hanging_cells(op, rowptr, colidx, vals);
  return ierr;
}
