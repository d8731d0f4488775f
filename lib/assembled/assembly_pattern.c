/* assembly_pattern.c -- the sparsity (CSR pattern) of the assembled operators of a space, made on the
 * host once per space and kept on it (s->csr_rowptr, s->csr_colidx); lib/assembled/assembly.c assembles the
 * values into it, and on cuda copies it to the device once. */
#include "assembled/assembly_impl.h"

#include <limits.h>
#include <stdio.h>

static int cmp_int(const void *a, const void *b)
{
  const int x = *(const int *)a, y = *(const int *)b;
  return (x > y) - (x < y);
}

/* a[0 .. m) ascending: insertion sort for the short node lists of low degree, qsort beyond */
static void sort_ints(int *a, int m)
{
  if (m > 32) {
    qsort(a, (size_t)m, sizeof *a, cmp_int);
    return;
  }
  for (int i = 1; i < m; i++) {
    const int v = a[i];
    int j = i;
    for (; j > 0 && a[j - 1] > v; j--) a[j] = a[j - 1];
    a[j] = v;
  }
}

/* Row r's columns: the k-way merge of the ascending node lists of its k cells (lists[c] .. up to
 * the INT_MAX that ends each; no repeats within a list), repeats across lists dropped; written to out
 * unless NULL. Returns their count. head/pos: k entries of work (each list's next value and its
 * place). Branch-free steps: every list whose head is the smallest value advances by one. */
static int row_merge(const int *lists, int stride, const int *cells, int k, int *head, const int **pos, int *out)
{
  for (int j = 0; j < k; j++) {
    pos[j] = lists + (size_t)cells[j] * stride;
    head[j] = *pos[j];
  }
  int c = INT_MAX, m = 0;
  for (int j = 0; j < k; j++) c = head[j] < c ? head[j] : c;
  while (c != INT_MAX) { /* c: the smallest head, the next column */
    if (out) out[m] = c;
    m++;
    int next = INT_MAX;
    for (int j = 0; j < k; j++) {
      const int *q = pos[j] + (head[j] == c);
      pos[j] = q;
      head[j] = *q;
      next = *q < next ? *q : next;
    }
    c = next;
  }
  return m;
}

/* The host bytes of a CSR matrix of n rows and nnz entries: values and columns, with_pattern its
 * column indices too (rowptr is counted with the pattern's work arrays below). */
double mf_assembly_matrix_bytes(int n, int64_t nnz, int with_pattern)
{
  return (with_pattern ? 12.0 : 8.0) * (double)nnz + 8.0 * (double)n;
}

/* The sparsity of every operator assembled on s, made once and kept on the space: rows and columns
 * are the local DoFs, and every pair of nodes of a cell couples (C^T A_e C of a cell with hanging
 * nodes couples the cell's nodes too: cell_nodes lists the constraining DoFs). So row r is the union
 * of the node lists of the cells that hold r:
 *
 *   lists   each cell's distinct nodes ascending, then INT_MAX (ncells x (npc + 1), OpenMP over cells)
 *   off     the distinct cells of each DoF                    (counting sort of the lists, OpenMP)
 *   row r   the k-way merge of its cells' lists, repeats dropped: ascending, no sort per row
 *
 * Two passes over the rows (count, fill; OpenMP over rows) make colidx at its final size, so the
 * memory is the pattern itself plus these O(DoFs + cells x npc) arrays and k-entry work per thread.
 * values_on_host: the memory check counts the values of the operator being assembled too (cpu
 * backend; on cuda they are in device memory). */
/* The pattern of the nodes (n of them) into *rowptr_out, *colidx_out (see mf_assembly_pattern). */
static int node_pattern(mf_space s, int n, const char *what, int values_on_host, int64_t **rowptr_out, int **colidx_out)
{
  mf_context ctx = s->ctx;
  const int npc = s->npc, ncells = s->ncells, stride = npc + 1;
  const size_t nent = (size_t)ncells * npc, nlist = (size_t)ncells * stride;
  const int *cell_nodes = s->cell_nodes;
  int64_t *off = NULL, *rowptr = NULL;
  int *cells = NULL, *lists = NULL, *colidx = NULL;
  /* first the work arrays and rowptr, whose sizes are known now; the columns and the values, which
   * take most of the memory, once the rows are counted (below) */
  char msg[320];
  snprintf(msg, sizeof msg, "the sparsity pattern of %s (work arrays: %d DoFs, %lld cell nodes)", what, n,
           (long long)nent);
  MF_CALL(mf_host_require(ctx, 16.0 * ((double)n + 1.0) + 4.0 * (double)nent + 4.0 * (double)nlist, msg));
  int ierr = MF_CALLOC(ctx, (size_t)n + 1, &off);
  if (!ierr) ierr = MF_CALLOC(ctx, nent, &cells);
  if (!ierr) ierr = MF_CALLOC(ctx, nlist, &lists);
  if (!ierr) ierr = MF_CALLOC(ctx, (size_t)n + 1, &rowptr);
  if (ierr) goto done;
#pragma omp parallel for schedule(static)
  for (int e = 0; e < ncells; e++) {
    int *l = lists + (size_t)e * stride;
    memcpy(l, &cell_nodes[(size_t)e * npc], sizeof(int) * (size_t)npc);
    sort_ints(l, npc);
    /* a cell with hanging nodes may hold a DoF at several positions: once here */
    int u = 1;
    for (int i = 1; i < npc; i++)
      if (l[i] != l[u - 1]) l[u++] = l[i];
    for (; u <= npc; u++) l[u] = INT_MAX;
  }
  /* off[i] .. off[i+1]: the cells of DoF i, in any order (the merge does not depend on it), so the
   * threads may take cells in any order too */
#pragma omp parallel for schedule(static)
  for (int e = 0; e < ncells; e++)
    for (const int *l = lists + (size_t)e * stride; *l != INT_MAX; l++) {
#pragma omp atomic update
      off[*l + 1]++;
    }
  for (int i = 0; i < n; i++) off[i + 1] += off[i];
  int kmax = 0;
  for (int i = 0; i < n; i++)
    if (off[i + 1] - off[i] > kmax) kmax = (int)(off[i + 1] - off[i]);
#pragma omp parallel for schedule(static)
  for (int e = 0; e < ncells; e++)
    for (const int *l = lists + (size_t)e * stride; *l != INT_MAX; l++) {
      int64_t at;
#pragma omp atomic capture
      at = off[*l]++;
      cells[at] = e;
    }
  for (int i = n; i > 0; i--) off[i] = off[i - 1]; /* the fill moved each start to the next row's */
  off[0] = 0;
  snprintf(msg, sizeof msg, "the sparsity pattern of %s (work arrays of %d threads, %d cells each)", what,
           mf_max_threads(), kmax);
  ierr = mf_host_require(ctx, 12.0 * (double)mf_max_threads() * (double)kmax, msg);
  for (int pass = 0; pass < 2 && !ierr; pass++) {
#pragma omp parallel
    {
      int *head = NULL;
      const int **pos = NULL;
      int lerr = MF_CALLOC(NULL, (size_t)kmax + 1, &head); /* reported once, below */
      if (!lerr) lerr = MF_CALLOC(NULL, (size_t)kmax + 1, &pos);
      mf_thread_note(&ierr, lerr);
#pragma omp for schedule(dynamic, 1024)
      for (int i = 0; i < n; i++) {
        if (lerr) continue;
        const int k = (int)(off[i + 1] - off[i]);
        if (pass == 0) rowptr[i + 1] = row_merge(lists, stride, cells + off[i], k, head, pos, NULL);
        else row_merge(lists, stride, cells + off[i], k, head, pos, colidx + rowptr[i]);
      }
      free(head);
      free(pos);
    }
    if (ierr) {
      ierr = mf_error_set(ctx, MF_ERR_MEMORY, __FILE__, __LINE__, __func__,
                          "out of host memory for the work arrays of %d threads (sparsity, %d cells per DoF)",
                          mf_max_threads(), kmax);
      break;
    }
    if (pass == 0) {
      for (int i = 0; i < n; i++) rowptr[i + 1] += rowptr[i];
      /* the columns, and the values of the operator being assembled, before either is allocated */
      snprintf(msg, sizeof msg, "%s (%lld nonzeros on %d local DoFs: columns%s)", what, (long long)rowptr[n], n,
               values_on_host ? " and values" : "");
      ierr = mf_host_require(ctx, values_on_host ? mf_assembly_matrix_bytes(n, rowptr[n], 1) : 4.0 * (double)rowptr[n],
                             msg);
      if (!ierr) ierr = MF_CALLOC(ctx, (size_t)rowptr[n], &colidx);
    }
  }
done:
  free(off);
  free(cells);
  free(lists);
  if (ierr) {
    free(rowptr);
    free(colidx);
    return ierr;
  }
  *rowptr_out = rowptr;
  *colidx_out = colidx;
  return 0;
}

int mf_assembly_pattern(mf_space s, const char *what, int values_on_host)
{
  if (s->csr_rowptr) return 0;
  const int nc = s->ncomp;
  if (nc == 1) return node_pattern(s, s->nlocal, what, values_on_host, &s->csr_rowptr, &s->csr_colidx);
  /* several components: the nodes' pattern, every node pair a block of nc x nc entries (row node i nc + c,
   * columns node j nc + b, ascending) */
  mf_context ctx = s->ctx;
  const int nn = s->nlocal / nc;
  int64_t *rp = NULL, *rowptr = NULL;
  int *ci = NULL, *colidx = NULL;
  MF_CALL(node_pattern(s, nn, what, 0, &rp, &ci));
  const double nnz = (double)rp[nn] * nc * nc;
  char msg[320];
  snprintf(msg, sizeof msg, "%s (%.0f nonzeros on %d local DoFs of %d components)", what, nnz, s->nlocal, nc);
  int ierr = mf_host_require(ctx, values_on_host ? mf_assembly_matrix_bytes(s->nlocal, (int64_t)nnz, 1) : 4.0 * nnz, msg);
  if (!ierr) ierr = MF_CALLOC(ctx, (size_t)s->nlocal + 1, &rowptr);
  if (!ierr) ierr = MF_CALLOC(ctx, (size_t)nnz + 1, &colidx);
  if (!ierr) {
    /* each node's rows at offsets of their own: in parallel (1.1e9 entries at the hyperelastic app's mesh 8) */
#pragma omp parallel for schedule(static)
    for (int i = 0; i < nn; i++)
      for (int c = 0; c < nc; c++) {
        const int row = i * nc + c;
        int64_t at = rowptr[row] = (rp[i] * nc + (rp[i + 1] - rp[i]) * c) * nc;
        for (int64_t k = rp[i]; k < rp[i + 1]; k++)
          for (int b = 0; b < nc; b++) colidx[at++] = ci[k] * nc + b;
      }
    rowptr[s->nlocal] = (int64_t)nnz;
  }
  free(rp);
  free(ci);
  if (ierr) {
    free(rowptr);
    free(colidx);
    return ierr;
  }
  s->csr_rowptr = rowptr;
  s->csr_colidx = colidx;
  return 0;
}
