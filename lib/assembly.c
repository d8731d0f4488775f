/* assembly.c -- the assembled (CSR) operator: a sparse matrix made from the element matrices of a
 * matrix-free operator (hanging-node constraints condensed, C^T A_e C) and wrapped as an operator. The
 * reference values (dense element matrices added color by color) are here; the variants that mirror
 * the device kernels are in lib/assembly_variants.c, the device ones in lib/cuda/assembly.cu. It
 * shares the apply flow of lib/operator.c (ghost exchange, Dirichlet form): rows and columns are the
 * local DoFs (owned then ghost), and each rank's product is summed onto the owners. */
#include "assembly_impl.h"

#ifdef MFREE_WITH_CUDA
#include "cuda/mf_cuda.h"
#endif

#include <stdio.h>

static int apply_csr_cpu(mf_operator op, mf_vector x, mf_vector y)
{
  const int n = op->space->nlocal;
  const int64_t *rowptr = op->rowptr;
  const int *colidx = op->colidx;
  const double *vals = op->vals, *xd = x->data;
  double *yd = y->data;
#pragma omp parallel for schedule(static)
  for (int i = 0; i < n; i++) {
    double acc = 0.0;
    for (int64_t k = rowptr[i]; k < rowptr[i + 1]; k++) acc += vals[k] * xd[colidx[k]];
    yd[i] = acc;
  }
  return 0;
}
static int diagonal_csr_cpu(mf_operator op, mf_vector d)
{
  const int n = op->space->nlocal;
  for (int i = 0; i < n; i++)
    for (int64_t k = op->rowptr[i]; k < op->rowptr[i + 1]; k++)
      if (op->colidx[k] == i) d->data[i] += op->vals[k];
  return 0;
}

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

/* Bytes an assembled operator adds to its space's sparsity: the values (8 per nonzero) and its work
 * vector (8 per local DoF); with_pattern: the columns too (4 per nonzero; rowptr is counted with the
 * pattern's work arrays). */
static double csr_matrix_bytes(int n, int64_t nnz, int with_pattern)
{
  return (with_pattern ? 12.0 : 8.0) * (double)nnz + 8.0 * (double)n;
}

/* The sparsity of every operator assembled on s, made once and kept on the space: rows and columns
 * are the local DoFs, and every pair of nodes of a cell couples (C^T A_e C of a cell with hanging
 * nodes couples the cell's nodes too: cell_nodes lists the constraining DoFs). From the cells of
 * each DoF, each row is the sorted union of their nodes: row by row, so the memory is the pattern
 * itself plus the DoF-to-cell lists, not one entry per element-matrix entry. Two passes over the
 * rows (count, fill) make colidx at its final size. values_on_host: the memory check counts the values
 * of the operator being assembled too (cpu backend; on cuda they are in device memory). */
static int csr_pattern(mf_space s, const char *what, int values_on_host)
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
      ierr = mf_host_require(ctx, values_on_host ? csr_matrix_bytes(n, rowptr[n], 1) : 4.0 * (double)rowptr[n], msg);
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

/* vals <- sum over cells of the element matrices (C^T A_e C on cells with hanging nodes), the cells of
 * one color at a time shared among OpenMP threads: no two cells of a color share a DoF, so each row
 * is written by one thread and takes its cells' contributions in color order, whatever the number
 * of threads. */
static int csr_values(mf_operator mfop, const int64_t *rowptr, const int *colidx, double *vals)
{
  const mf_space s = mfop->space;
  const int npc = s->npc;
  const size_t nwork = (size_t)npc * npc + mf_kernel_work_size(mfop) + 2 * (size_t)npc;
  int ierr = 0;
#pragma omp parallel
  {
    double *Ae = NULL;
    int lerr = MF_CALLOC(NULL, nwork, &Ae); /* reported once, below */
    if (lerr) {
#pragma omp atomic write
      ierr = lerr;
    }
    double *work = Ae ? Ae + (size_t)npc * npc : NULL;
    for (int c = 0; c < s->ncolors; c++) {
#pragma omp for schedule(dynamic, 16)
      for (int k = s->color_off[c]; k < s->color_off[c + 1]; k++) {
        if (lerr) continue;
        const int e = s->color_cells[k];
        if (s->face_code[e]) mf_element_matrix_constrained_work(mfop, e, Ae, work);
        else mf_element_matrix_dense(mfop, e, Ae);
        const int *nodes = &s->cell_nodes[(size_t)e * npc];
        for (int i = 0; i < npc; i++)
          for (int j = 0; j < npc; j++) vals[mf_csr_find(rowptr, colidx, nodes[i], nodes[j])] += Ae[(size_t)i * npc + j];
      }
    }
    free(Ae);
  }
  MF_CHECK(!ierr, s->ctx, MF_ERR_MEMORY, "out of host memory for the work arrays of %d threads (assembly)",
           mf_max_threads());
  return 0;
}

/* An operator made by mf_operator_create_assembled_values: its values, no product. */
static int apply_values_only(mf_operator op, mf_vector x, mf_vector y)
{
  (void)x, (void)y;
  MF_CHECK(0, op->ctx, MF_ERR_UNSUPPORTED, "this assembled operator holds its values only (no product)");
  return 0;
}
static int diagonal_values_only(mf_operator op, mf_vector d)
{
  (void)d;
  MF_CHECK(0, op->ctx, MF_ERR_UNSUPPORTED, "this assembled operator holds its values only (no diagonal)");
  return 0;
}

/* The assembled operator: the host sparsity of the space (made once), then the values by variant v, on
 * the host (cpu: the reference for MF_ASSEMBLY_AUTO, else the CPU twins of lib/assembly_variants.c) or
 * on the device (cuda: the pattern copied there once, the values computed there; AUTO is the table
 * variant); with_ops: the product too (on cuda lib/cuda/csr.cu's), else a refusal (tests). */
static int create_assembled(mf_operator mfop, mf_assembly_variant v, int with_ops, mf_operator *assembled)
{
  MF_CHECK(mfop, NULL, MF_ERR_NULL, "operator is NULL");
  mf_context ctx = mfop->ctx;
  MF_CHECK(assembled, ctx, MF_ERR_NULL, "output pointer assembled is NULL");
  *assembled = NULL;
  MF_CHECK(v == MF_ASSEMBLY_AUTO || v == MF_ASSEMBLY_SEARCH || v == MF_ASSEMBLY_TABLE || v == MF_ASSEMBLY_ROWWISE, ctx,
           MF_ERR_ARGUMENT,
           "assembly variant %d unknown (MF_ASSEMBLY_AUTO, MF_ASSEMBLY_SEARCH, MF_ASSEMBLY_TABLE or MF_ASSEMBLY_ROWWISE)",
           (int)v);
  MF_CHECK(mfop->kind == MF_OP_MASS || mfop->kind == MF_OP_LAPLACE || mfop->kind == MF_OP_HELMHOLTZ, ctx,
           MF_ERR_UNSUPPORTED, "only matrix-free mass, Laplace and Helmholtz operators can be assembled (kind %d)",
           (int)mfop->kind);
  MF_CHECK(mfop->prec == MF_PRECISION_DOUBLE, ctx, MF_ERR_UNSUPPORTED, "a single-precision operator copy cannot be assembled");
  MF_CHECK(mfop->geometry == MF_GEOMETRY_STORED, ctx, MF_ERR_UNSUPPORTED,
           "the operator computes its geometry on the fly: assemble it with stored geometry "
           "(mf_operator_set_geometry(op, MF_GEOMETRY_STORED) first)");
  const int cuda = ctx->backend == MF_BACKEND_CUDA;
  mf_space s = mfop->space;
  mf_operator o = NULL;
  char what[96];
  snprintf(what, sizeof what, "the assembled degree-%d operator on %lld DoFs", s->degree, (long long)s->nglobal);
  /* memory is checked before each allocation that grows with the problem (mf_host_require, and on the
   * device mf_cuda_require): a matrix that would not fit is refused, with the bytes it needs and the
   * bytes available */
  int ierr = csr_pattern(s, what, !cuda);
  if (!ierr && !cuda) ierr = mf_host_require(ctx, csr_matrix_bytes(s->nlocal, s->csr_rowptr[s->nlocal], 0), what);
  if (!ierr && !cuda && v == MF_ASSEMBLY_AUTO) ierr = mf_space_colors(s);
#ifdef MFREE_WITH_CUDA
  if (!ierr && cuda) ierr = mf_cuda_csr_pattern(s);
#endif
  if (!ierr) ierr = MF_CALLOC(ctx, 1, &o);
  if (ierr) return mf_agree(ctx, ierr);
  /* the matrix-free operator's kind, rule, coefficient and Dirichlet form: the apply flow of
   * lib/operator.c treats the boundary as for it (x's boundary entries zeroed, y[bc] = x[bc]) */
  *o = *mfop;
  o->refs = 1;
  mf_space_retain(o->space);
  o->qd.data = NULL;
  o->coefq = NULL;
  o->qdf = NULL;
  o->xwork = NULL;
  o->dev = NULL;
  o->vals = NULL;
  o->kind = MF_OP_ASSEMBLED;
  memset(&o->ops, 0, sizeof o->ops); /* apply_part NULL: rows, not cells, so the exchanges are not overlapped */
  o->rowptr = s->csr_rowptr;
  o->colidx = s->csr_colidx;
  if (!cuda) {
    o->ops.apply = apply_csr_cpu;
    o->ops.diagonal = diagonal_csr_cpu;
    ierr = MF_CALLOC(ctx, (size_t)o->rowptr[s->nlocal], &o->vals);
    if (!ierr)
      ierr = v == MF_ASSEMBLY_AUTO ? csr_values(mfop, o->rowptr, o->colidx, o->vals)
                                   : mf_assembly_values_cpu(mfop, v, o->rowptr, o->colidx, o->vals);
  }
#ifdef MFREE_WITH_CUDA
  else {
    /* o->vals in device memory, freed by o->ops.destroy (the assembly's, then the product's) */
    ierr = mf_cuda_assemble(mfop, v == MF_ASSEMBLY_AUTO ? MF_ASSEMBLY_TABLE : v, o);
    if (!ierr && with_ops) ierr = mf_cuda_csr_ops(o);
  }
#endif
  if (!with_ops) {
    o->ops.apply = apply_values_only;
    o->ops.diagonal = diagonal_values_only;
  }
  if (!ierr) ierr = mf_vector_create_prec(s, MF_PRECISION_DOUBLE, &o->xwork);
  ierr = mf_agree(ctx, ierr);
  if (ierr) {
    mf_operator_destroy(&o);
    return ierr;
  }
  *assembled = o;
  return 0;
}

size_t mf_assembly_table_kept_bytes(mf_space s)
{
#ifdef MFREE_WITH_CUDA
  if (s && s->ctx->backend == MF_BACKEND_CUDA) return mf_cuda_assembly_table_bytes(s);
#endif
  (void)s;
  return 0;
}

void mf_assembly_table_drop(mf_space s)
{
#ifdef MFREE_WITH_CUDA
  if (s && s->ctx->backend == MF_BACKEND_CUDA) mf_cuda_assembly_table_drop(s);
#endif
  (void)s;
}

int mf_operator_create_assembled(mf_operator mfop, mf_operator *assembled)
{
  return create_assembled(mfop, MF_ASSEMBLY_AUTO, 1, assembled);
}

int mf_operator_create_assembled_variant(mf_operator mfop, mf_assembly_variant variant, mf_operator *assembled)
{
  return create_assembled(mfop, variant, 1, assembled);
}

int mf_operator_create_assembled_values(mf_operator mfop, mf_assembly_variant variant, mf_operator *assembled)
{
  return create_assembled(mfop, variant, 0, assembled);
}

int mf_operator_csr_values_host(mf_operator A, double *host)
{
  MF_CHECK(A && A->kind == MF_OP_ASSEMBLED, A ? A->ctx : NULL, MF_ERR_ARGUMENT, "not an assembled operator");
  const size_t nnz = (size_t)A->rowptr[A->space->nlocal];
#ifdef MFREE_WITH_CUDA
  if (A->ctx->backend == MF_BACKEND_CUDA) return mf_cuda_csr_values_to_host(A, host);
#endif
  memcpy(host, A->vals, sizeof(double) * nnz);
  return 0;
}

int mf_operator_local_nnz(mf_operator op, int64_t *nnz)
{
  MF_CHECK(op, NULL, MF_ERR_NULL, "operator is NULL");
  MF_CHECK(nnz, op->ctx, MF_ERR_NULL, "output pointer nnz is NULL");
  *nnz = op->kind == MF_OP_ASSEMBLED ? op->rowptr[op->space->nlocal] : 0;
  return 0;
}
