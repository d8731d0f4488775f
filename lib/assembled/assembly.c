/* assembly.c -- the assembled (CSR) operator: a sparse matrix made from the element matrices of a
 * matrix-free operator (hanging-node constraints condensed, C^T A_e C) and wrapped as an operator. The
 * reference values (dense element matrices added color by color) are here, into the space's sparsity
 * (lib/assembled/assembly_pattern.c); the variants that mirror the device kernels are in
 * lib/assembled/assembly_variants.c, the device ones in lib/cuda/assembly.cu. It
 * shares the apply flow of lib/operator.c (ghost exchange, Dirichlet form): rows and columns are the
 * local DoFs (owned then ghost), and each rank's product is summed onto the owners. */
#include "assembled/assembly_impl.h"
#include "hex/mf_hex_op.h"

#include "base/mf_backend.h"

#include <stdio.h>

static int apply_csr_cpu(mf_operator op, mf_vector x, mf_vector y)
{
  const mf_csr_op *A = mf_csr(op);
  const int n = op->space->nlocal;
  const int64_t *rowptr = A->rowptr;
  const int *colidx = A->colidx;
  const double *vals = A->vals, *xd = x->data;
  double *yd = y->data;
#pragma omp parallel for schedule(static)
  for (int i = 0; i < n; i++) {
    double acc = 0.0;
    for (int64_t k = rowptr[i]; k < rowptr[i + 1]; k++) acc += vals[k] * xd[colidx[k]];
    yd[i] = acc;
  }
  return 0;
}
/* The product in parts (lib/operator.c's overlapped flow, y zeroed first): every row's owned columns,
 * then the ghost columns of the rows that hold some (mf_csr_ghost_rows); nothing in the second
 * interior part, since the rows are final after the boundary part. */
static int apply_part_csr_cpu(mf_operator op, mf_vector x, mf_vector y, mf_cell_part part)
{
  const mf_csr_op *A = mf_csr(op);
  const mf_csr_ghost_rows *g = A->ghost;
  const int64_t *rowptr = A->rowptr;
  const int *colidx = A->colidx;
  const double *vals = A->vals, *xd = x->data;
  double *yd = y->data;
  if (part == MF_PART_INTERIOR_A) {
    const int n = op->space->nlocal, nowned = op->space->nowned;
#pragma omp parallel for schedule(static)
    for (int i = 0; i < n; i++) {
      double acc = 0.0;
      for (int64_t k = rowptr[i]; k < rowptr[i + 1] && colidx[k] < nowned; k++) acc += vals[k] * xd[colidx[k]];
      yd[i] += acc;
    }
  } else if (part == MF_PART_BOUNDARY) {
#pragma omp parallel for schedule(static)
    for (int r = 0; r < g->n; r++) {
      const int i = g->rows[r];
      double acc = 0.0;
      for (int64_t k = g->start[r]; k < rowptr[i + 1]; k++) acc += vals[k] * xd[colidx[k]];
      yd[i] += acc;
    }
  }
  return 0;
}
/* Row i's last column, its largest, is a ghost DoF. */
static int has_ghost_column(const mf_csr_op *A, int i, int nowned)
{
  return A->rowptr[i + 1] > A->rowptr[i] && A->colidx[A->rowptr[i + 1] - 1] >= nowned;
}

int mf_csr_ghost_rows_make(mf_operator A)
{
  mf_context ctx = A->ctx;
  const mf_space s = A->space;
  const int n = s->nlocal, nowned = s->nowned;
  mf_csr_ghost_rows *g = NULL;
  MF_CALL(MF_CALLOC(ctx, 1, &g));
  const mf_csr_op *c = mf_csr(A);
  for (int i = 0; i < n; i++) g->n += has_ghost_column(c, i, nowned);
  int ierr = MF_CALLOC(ctx, (size_t)g->n + 1, &g->rows);
  if (!ierr) ierr = MF_CALLOC(ctx, (size_t)g->n + 1, &g->start);
  if (ierr) {
    free(g->rows);
    free(g);
    return ierr;
  }
  for (int i = 0, k = 0; i < n; i++) {
    if (!has_ghost_column(c, i, nowned)) continue;
    g->rows[k] = i;
    g->start[k++] = mf_csr_find(c->rowptr, c->colidx, i, nowned); /* the first column >= nowned */
  }
  mf_csr(A)->ghost = g;
  return 0;
}

void mf_csr_ghost_rows_free(mf_operator A)
{
  mf_csr_ghost_rows *g = mf_csr(A)->ghost;
  if (!g) return;
  free(g->rows);
  free(g->start);
  free(g);
  mf_csr(A)->ghost = NULL;
}

static int diagonal_csr_cpu(mf_operator op, mf_vector d)
{
  const mf_csr_op *A = mf_csr(op);
  const int n = op->space->nlocal;
  for (int i = 0; i < n; i++)
    for (int64_t k = A->rowptr[i]; k < A->rowptr[i + 1]; k++)
      if (A->colidx[k] == i) d->data[i] += A->vals[k];
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
    mf_thread_note(&ierr, lerr);
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
  MF_CALL(mf_thread_work_check(s->ctx, ierr, "assembly"));
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

/* The values of a hex operator's assembled matrix A by variant v: on the host (cpu: the reference for
 * MF_ASSEMBLY_AUTO, else the CPU twins of lib/assembled/assembly_variants.c) or on the device (cuda: AUTO
 * is the table or the search variant, by the memory free). The hex type's assemble entry. */
int mf_assembly_hex_values(mf_operator op, mf_assembly_variant v, mf_operator A)
{
  mf_context ctx = op->ctx;
  if (ctx->bk->assembly.assemble) return ctx->bk->assembly.assemble(op, v, A);
  mf_csr_op *c = mf_csr(A);
  if (v != MF_ASSEMBLY_AUTO) return mf_assembly_values_cpu(op, v, c->rowptr, c->colidx, c->vals);
  MF_CALL(mf_space_colors(op->space));
  return csr_values(op, c->rowptr, c->colidx, c->vals);
}

static void destroy_csr(mf_operator A)
{
  mf_csr_op *c = mf_csr(A);
  if (!c) return;
  mf_csr_ghost_rows_free(A);
  if (!c->values_on_device) free(c->vals); /* on the device: freed by A->ops.destroy */
  free(c);
  A->data = NULL;
}

static const char *const csr_names[] = {"an assembled (CSR)"};
const mf_optype mf_optype_assembled = {
    .name = "assembled",
    .names = csr_names,
    .dirichlet_form = 1,
    .apply = mf_operator_flow_apply,
    .diagonal = mf_operator_flow_diagonal,
    .destroy = destroy_csr,
};

/* The assembled operator of mfop: the host sparsity of the space (made once), then the values by variant
 * v from mfop's type (lib/hex/operator_hex.c, lib/simplex/operator_simplex.c), on the host or on the
 * backend's device (the pattern copied there once); with_ops: the product too (on cuda lib/cuda/csr.cu's),
 * else a refusal (tests). The Dirichlet form is mfop's: the apply flow of lib/operator.c treats the
 * boundary as for it (x's boundary entries zeroed, y[bc] = x[bc]). */
static int create_assembled(mf_operator mfop, mf_assembly_variant v, int with_ops, mf_operator *assembled)
{
  if (assembled) *assembled = NULL; /* NULL on every failure, the first argument's included */
  MF_CHECK(mfop, NULL, MF_ERR_NULL, "operator is NULL");
  mf_context ctx = mfop->ctx;
  MF_CHECK(assembled, ctx, MF_ERR_NULL, "output pointer assembled is NULL");
  *assembled = NULL;
  MF_CHECK(v == MF_ASSEMBLY_AUTO || v == MF_ASSEMBLY_SEARCH || v == MF_ASSEMBLY_TABLE || v == MF_ASSEMBLY_ROWWISE, ctx,
           MF_ERR_ARGUMENT,
           "assembly variant %d unknown (MF_ASSEMBLY_AUTO, MF_ASSEMBLY_SEARCH, MF_ASSEMBLY_TABLE or MF_ASSEMBLY_ROWWISE)",
           (int)v);
  MF_CHECK(mfop->type->assemble_check, ctx, MF_ERR_UNSUPPORTED,
           "only mass, Laplace and Helmholtz operators can be assembled, not %s operator", mf_operator_kind_name(mfop));
  MF_CHECK(mfop->prec == MF_PRECISION_DOUBLE, ctx, MF_ERR_UNSUPPORTED, "a single-precision operator copy cannot be assembled");
  MF_CALL(mfop->type->assemble_check(mfop, v));
  MF_CALL(mf_space_check_mesh(mfop->space)); /* the sparsity comes from the space's cells */
  const int cuda = ctx->bk->assembly.assemble != NULL; /* assembled on the backend's device */
  mf_space s = mfop->space;
  mf_operator o = NULL;
  mf_csr_op *c = NULL;
  char what[96];
  snprintf(what, sizeof what, "the assembled degree-%d operator on %lld DoFs", s->degree, (long long)s->nglobal);
  /* memory is checked before each allocation that grows with the problem (mf_host_require, and on the
   * device mf_cuda_require): a matrix that would not fit is refused, with the bytes it needs and the
   * bytes available */
  const int made = s->csr_rowptr != NULL; /* the sparsity, made (and copied) once per space: the pattern phase */
  double tp = made ? 0.0 : mf_phase_begin(ctx);
  int ierr = mf_assembly_pattern(s, what, !cuda);
  if (!ierr && !cuda) ierr = mf_host_require(ctx, mf_assembly_matrix_bytes(s->nlocal, s->csr_rowptr[s->nlocal], 0), what);
  if (!ierr && cuda) ierr = ctx->bk->assembly.pattern(s);
  if (!made) mf_phase_end(ctx, MF_PHASE_PATTERN, tp);
  if (!ierr) ierr = MF_CALLOC(ctx, 1, &c);
  if (!ierr) {
    c->rowptr = s->csr_rowptr;
    c->colidx = s->csr_colidx;
    c->values_on_device = cuda;
    ierr = mf_operator_alloc(s, &mf_optype_assembled, c, &o);
    if (ierr) free(c);
  }
  if (ierr) return mf_agree(ctx, ierr);
  o->dirichlet = mfop->dirichlet;
  o->scatter = mfop->scatter;
  if (!cuda) {
    o->ops.apply = apply_csr_cpu;
    o->ops.diagonal = diagonal_csr_cpu;
    ierr = MF_CALLOC(ctx, (size_t)c->rowptr[s->nlocal], &c->vals);
  }
  /* on cuda c->vals in device memory, freed by o->ops.destroy (the assembly's, then the product's) */
  tp = mf_phase_begin(ctx);
  if (!ierr) ierr = mfop->type->assemble(mfop, v, o);
  mf_phase_end(ctx, MF_PHASE_ASSEMBLY, tp);
  if (!ierr && cuda && with_ops) ierr = ctx->bk->assembly.csr_ops(o);
  /* with several ranks, the rows' ghost parts for the overlapped product (apply_part; on cuda
   * mf_cuda_csr_ghost_rows copies the lists to the device and sets the device's) */
  if (!ierr && ctx->size > 1 && with_ops) {
    ierr = mf_csr_ghost_rows_make(o);
    if (!ierr && cuda) ierr = ctx->bk->assembly.ghost_rows(o);
    if (!ierr && !cuda) o->ops.apply_part = apply_part_csr_cpu;
  }
  if (!with_ops) {
    o->ops.apply = apply_values_only;
    o->ops.diagonal = diagonal_values_only;
  }
  return mf_operator_finish(o, ierr, assembled);
}

size_t mf_assembly_table_kept_bytes(mf_space s)
{
  if (s && s->ctx->bk->assembly.table_bytes) return s->ctx->bk->assembly.table_bytes(s);
  return 0;
}

void mf_assembly_table_drop(mf_space s)
{
  if (s && s->ctx->bk->assembly.table_drop) s->ctx->bk->assembly.table_drop(s);
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
  MF_CHECK(A && A->type == &mf_optype_assembled, A ? A->ctx : NULL, MF_ERR_ARGUMENT, "not an assembled operator");
  const size_t nnz = (size_t)mf_csr(A)->rowptr[A->space->nlocal];
  if (A->ctx->bk->assembly.values_to_host) return A->ctx->bk->assembly.values_to_host(A, host);
  memcpy(host, mf_csr(A)->vals, sizeof(double) * nnz);
  return 0;
}

int mf_csr_values_host_add(mf_operator A, mf_operator op,
                           int (*add)(mf_operator op, const int64_t *rowptr, const int *colidx, double *vals))
{
  const mf_csr_op *csr = mf_csr(A);
  if (!A->ctx->bk->assembly.values_to_host) return add(op, csr->rowptr, csr->colidx, csr->vals);
  MF_CHECK(A->ctx->bk->assembly.values_from_host, A->ctx, MF_ERR_UNSUPPORTED,
           "the %s backend cannot take assembled values from the host", mf_context_backend(A->ctx));
  const size_t nnz = (size_t)csr->rowptr[A->space->nlocal];
  double *host = NULL;
  MF_CALL(MF_CALLOC(A->ctx, nnz + 1, &host));
  int ierr = A->ctx->bk->assembly.values_to_host(A, host);
  if (!ierr) ierr = add(op, csr->rowptr, csr->colidx, host);
  if (!ierr) ierr = A->ctx->bk->assembly.values_from_host(A, host);
  free(host);
  return ierr;
}

int mf_operator_local_nnz(mf_operator op, int64_t *nnz)
{
  MF_CHECK(op, NULL, MF_ERR_NULL, "operator is NULL");
  MF_CHECK(nnz, op->ctx, MF_ERR_NULL, "output pointer nnz is NULL");
  *nnz = op->type == &mf_optype_assembled ? mf_csr(op)->rowptr[op->space->nlocal] : 0;
  return 0;
}
