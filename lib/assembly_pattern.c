/* assembly_pattern.c -- the sparsity (CSR pattern) of the assembled operators of a space, made on the
 * host once per space and kept on it (s->csr_rowptr, s->csr_colidx); lib/assembly.c assembles the
 * values into it, and on cuda copies it to the device once. */
#include "assembly_impl.h"

#include <stdio.h>

static int cmp_int(const void *a, const void *b)
{
  const int x = *(const int *)a, y = *(const int *)b;
  return (x > y) - (x < y);
}

/* The columns of row `row`: the nodes of the cells that hold it (cells[off[row] .. off[row+1])),
 * sorted and without repeats, in buf. Returns their count. */
static int row_columns(const mf_space s, const int64_t *off, const int *cells, int row, int *buf)
{
  const int npc = s->npc;
  int m = 0;
  for (int64_t c = off[row]; c < off[row + 1]; c++) {
    memcpy(buf + m, &s->cell_nodes[(size_t)cells[c] * npc], sizeof(int) * npc);
    m += npc;
  }
  qsort(buf, (size_t)m, sizeof *buf, cmp_int);
  int u = 0;
  for (int k = 0; k < m; k++)
    if (u == 0 || buf[k] != buf[u - 1]) buf[u++] = buf[k];
  return u;
}

/* The sparsity of every operator assembled on s, made once and kept on the space: rows and columns
 * are the local DoFs, and every pair of nodes of a cell couples (C^T A_e C of a cell with hanging
 * nodes couples the cell's nodes too: cell_nodes lists the constraining DoFs). From the cells of
 * each DoF, each row is the sorted union of their nodes: row by row, so the memory is the pattern
 * itself plus the DoF-to-cell lists, not one entry per element-matrix entry. Two passes over the
 * rows (count, fill) make colidx at its final size. values_on_host: the memory check counts the values
 * of the operator being assembled too (cpu backend; on cuda they are in device memory). */
int mf_assembly_pattern(mf_space s, const char *what, int values_on_host)
{
  if (s->csr_rowptr) return 0;
  mf_context ctx = s->ctx;
  const int n = s->nlocal, npc = s->npc;
  const size_t nent = (size_t)s->ncells * npc;
  int64_t *off = NULL, *rowptr = NULL;
  int *cells = NULL, *colidx = NULL;
  /* first the work arrays and rowptr, whose sizes are known now; the columns and the values, which
   * take most of the memory, once the rows are counted (below) */
  char msg[320];
  snprintf(msg, sizeof msg, "the sparsity pattern of %s (work arrays: %d DoFs, %lld cell nodes)", what, n,
           (long long)nent);
  MF_CALL(mf_host_require(ctx, 16.0 * ((double)n + 1.0) + 4.0 * (double)nent, msg));
  int ierr = MF_CALLOC(ctx, (size_t)n + 1, &off);
  if (!ierr) ierr = MF_CALLOC(ctx, nent, &cells);
  if (!ierr) ierr = MF_CALLOC(ctx, (size_t)n + 1, &rowptr);
  if (ierr) goto done;
  /* off[i] .. off[i+1]: the cells of DoF i (a cell listed once per position that holds i) */
  for (size_t k = 0; k < nent; k++) off[s->cell_nodes[k] + 1]++;
  for (int i = 0; i < n; i++) off[i + 1] += off[i];
  for (int e = 0; e < s->ncells; e++)
    for (int i = 0; i < npc; i++) cells[off[s->cell_nodes[(size_t)e * npc + i]]++] = e;
  for (int i = n; i > 0; i--) off[i] = off[i - 1]; /* the fill moved each start to the next row's */
  off[0] = 0;
  int64_t maxlen = 0;
  for (int i = 0; i < n; i++)
    if ((off[i + 1] - off[i]) * npc > maxlen) maxlen = (off[i + 1] - off[i]) * npc;
  snprintf(msg, sizeof msg, "the sparsity pattern of %s (work arrays of %d threads, %lld entries each)", what,
           mf_max_threads(), (long long)maxlen);
  ierr = mf_host_require(ctx, 4.0 * (double)mf_max_threads() * (double)maxlen, msg);
  for (int pass = 0; pass < 2 && !ierr; pass++) {
#pragma omp parallel
    {
      int *buf = NULL;
      int lerr = MF_CALLOC(NULL, (size_t)maxlen, &buf); /* reported once, below */
      if (lerr) {
#pragma omp atomic write
        ierr = lerr;
      }
#pragma omp for schedule(dynamic, 256)
      for (int i = 0; i < n; i++) {
        if (lerr) continue;
        const int m = row_columns(s, off, cells, i, buf);
        if (pass == 0) rowptr[i + 1] = m;
        else memcpy(colidx + rowptr[i], buf, sizeof(int) * (size_t)m);
      }
      free(buf);
    }
    if (ierr) {
      ierr = mf_error_set(ctx, MF_ERR_MEMORY, __FILE__, __LINE__, __func__,
                          "out of host memory for the work arrays of %d threads (sparsity of %lld entries per row)",
                          mf_max_threads(), (long long)maxlen);
      break;
    }
    if (pass == 0) {
      for (int i = 0; i < n; i++) rowptr[i + 1] += rowptr[i];
      /* the columns, and the values of the operator being assembled, before either is allocated */
      snprintf(msg, sizeof msg, "%s (%lld nonzeros on %d local DoFs: columns%s)", what, (long long)rowptr[n], n,
               values_on_host ? " and values" : "");
      ierr = mf_host_require(ctx, values_on_host ? mf_assembly_matrix_bytes(n, rowptr[n], 1) : 4.0 * (double)rowptr[n], msg);
      if (!ierr) ierr = MF_CALLOC(ctx, (size_t)rowptr[n], &colidx);
    }
  }
done:
  free(off);
  free(cells);
  if (ierr) {
    free(rowptr);
    free(colidx);
    return ierr;
  }
  s->csr_rowptr = rowptr;
  s->csr_colidx = colidx;
  return 0;
}
