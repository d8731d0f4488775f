/* assembly.c -- the assembled (CSR) operator: a CPU sparse matrix made from the dense element
 * matrices of a matrix-free operator (hanging-node constraints condensed, C^T A_e C) and wrapped as
 * an operator. It shares the apply flow of lib/operator.c (ghost exchange, Dirichlet form): rows and
 * columns are the local DoFs (owned then ghost), and each rank's product is summed onto the owners. */
#include "mfree_impl.h"

static int apply_csr_cpu(mf_operator op, mf_vector x, mf_vector y)
{
  const int n = op->space->nlocal;
  for (int i = 0; i < n; i++) {
    double acc = 0.0;
    for (int k = op->rowptr[i]; k < op->rowptr[i + 1]; k++) acc += op->vals[k] * x->data[op->colidx[k]];
    y->data[i] = acc;
  }
  return 0;
}
static int diagonal_csr_cpu(mf_operator op, mf_vector d)
{
  const int n = op->space->nlocal;
  for (int i = 0; i < n; i++)
    for (int k = op->rowptr[i]; k < op->rowptr[i + 1]; k++)
      if (op->colidx[k] == i) d->data[i] += op->vals[k];
  return 0;
}

typedef struct {
  int64_t key;
  double val;
} triplet;
static int cmp_triplet(const void *a, const void *b)
{
  int64_t ka = ((const triplet *)a)->key, kb = ((const triplet *)b)->key;
  return (ka > kb) - (ka < kb);
}

int mf_operator_create_assembled(mf_operator mfop, mf_operator *assembled)
{
  MF_CHECK(mfop, NULL, MF_ERR_NULL, "operator is NULL");
  mf_context ctx = mfop->ctx;
  MF_CHECK(assembled, ctx, MF_ERR_NULL, "output pointer assembled is NULL");
  *assembled = NULL;
  MF_CHECK(mfop->kind == MF_OP_MASS || mfop->kind == MF_OP_LAPLACE || mfop->kind == MF_OP_HELMHOLTZ, ctx,
           MF_ERR_UNSUPPORTED, "only matrix-free mass, Laplace and Helmholtz operators can be assembled");
  MF_CHECK(ctx->backend == MF_BACKEND_CPU, ctx, MF_ERR_UNSUPPORTED,
           "the assembled reference operator runs on backend 'cpu' only (this context uses '%s')",
           mf_context_backend(ctx));
  MF_CHECK(mfop->prec == MF_PRECISION_DOUBLE, ctx, MF_ERR_UNSUPPORTED, "a single-precision operator copy cannot be assembled");
  mf_space s = mfop->space;
  const int npc = s->npc, n = s->nlocal;
  const size_t nt = (size_t)s->ncells * npc * npc;
  triplet *t = NULL;
  double *Ae = NULL;
  mf_operator o = NULL;
  int ierr = MF_CALLOC(ctx, nt, &t);
  if (!ierr) ierr = MF_CALLOC(ctx, (size_t)npc * npc, &Ae);
  if (!ierr) ierr = MF_CALLOC(ctx, 1, &o);
  if (ierr) goto fail;
  for (int e = 0; e < s->ncells; e++) {
    if (s->face_code[e]) { /* constraints condensed: C^T A_e C */
      ierr = mf_element_matrix_constrained(mfop, e, Ae);
      if (ierr) goto fail;
    } else {
      mf_element_matrix_dense(mfop, e, Ae);
    }
    const int *nodes = &s->cell_nodes[(size_t)e * npc];
    for (int i = 0; i < npc; i++)
      for (int j = 0; j < npc; j++) {
        triplet *tr = &t[((size_t)e * npc + i) * npc + j];
        tr->key = (int64_t)nodes[i] * n + nodes[j];
        tr->val = Ae[(size_t)i * npc + j];
      }
  }
  qsort(t, nt, sizeof *t, cmp_triplet);
  size_t nnz = 0;
  for (size_t k = 0; k < nt; k++)
    if (k == 0 || t[k].key != t[k - 1].key) nnz++;
  *o = *mfop;
  o->refs = 1;
  mf_space_retain(o->space);
  o->qd.data = NULL;
  o->qdf = NULL;
  o->xwork = NULL;
  o->dev = NULL;
  o->kind = MF_OP_ASSEMBLED;
  o->ops.apply = apply_csr_cpu;
  o->ops.diagonal = diagonal_csr_cpu;
  o->ops.destroy = NULL;
  ierr = MF_CALLOC(ctx, n + 1, &o->rowptr);
  if (!ierr) ierr = MF_CALLOC(ctx, nnz, &o->colidx);
  if (!ierr) ierr = MF_CALLOC(ctx, nnz, &o->vals);
  if (!ierr) ierr = mf_vector_create_prec(s, MF_PRECISION_DOUBLE, &o->xwork);
  if (ierr) goto fail;
  size_t m = 0;
  for (size_t k = 0; k < nt; k++) {
    if (k == 0 || t[k].key != t[k - 1].key) {
      m++;
      int row = (int)(t[k].key / n);
      o->colidx[m - 1] = (int)(t[k].key % n);
      o->vals[m - 1] = 0.0;
      o->rowptr[row + 1]++;
    }
    o->vals[m - 1] += t[k].val;
  }
  for (int i = 0; i < n; i++) o->rowptr[i + 1] += o->rowptr[i];
  free(t);
  free(Ae);
  *assembled = o;
  return mf_agree(ctx, 0);
fail:
  free(t);
  free(Ae);
  if (o && o->refs) mf_operator_destroy(&o);
  else free(o);
  return mf_agree(ctx, ierr);
}

int mf_operator_local_nnz(mf_operator op, int64_t *nnz)
{
  MF_CHECK(op, NULL, MF_ERR_NULL, "operator is NULL");
  MF_CHECK(nnz, op->ctx, MF_ERR_NULL, "output pointer nnz is NULL");
  *nnz = op->kind == MF_OP_ASSEMBLED ? op->rowptr[op->space->nlocal] : 0;
  return 0;
}
