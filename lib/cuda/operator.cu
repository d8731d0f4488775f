// operator.cu -- the CUDA matrix-free operator: device quadrature data and 1D matrices, the apply
// (one launch per cell color, or one atomic launch), and the matrix-free diagonal.
#include "mf_cuda_common.cuh"

// Lookup functions of the generated instantiation files apply_d<dim>_p<p>.cu.
#define MF_DECL(D, P) extern "C" mf_cuda_apply_fn mf_cuda_apply_lookup_d##D##_p##P(int quad, int op, int hang);
MF_DECL(2, 1) MF_DECL(2, 2) MF_DECL(2, 3) MF_DECL(2, 4) MF_DECL(2, 5) MF_DECL(2, 6) MF_DECL(2, 7) MF_DECL(2, 8)
MF_DECL(3, 1) MF_DECL(3, 2) MF_DECL(3, 3) MF_DECL(3, 4) MF_DECL(3, 5) MF_DECL(3, 6) MF_DECL(3, 7) MF_DECL(3, 8)

extern "C" mf_cuda_apply_fn mf_cuda_apply_lookup(int dim, int p, int quad, int op, int hang)
{
  typedef mf_cuda_apply_fn (*lookup_fn)(int, int, int);
  static const lookup_fn table[2][8] = {
      {mf_cuda_apply_lookup_d2_p1, mf_cuda_apply_lookup_d2_p2, mf_cuda_apply_lookup_d2_p3, mf_cuda_apply_lookup_d2_p4,
       mf_cuda_apply_lookup_d2_p5, mf_cuda_apply_lookup_d2_p6, mf_cuda_apply_lookup_d2_p7, mf_cuda_apply_lookup_d2_p8},
      {mf_cuda_apply_lookup_d3_p1, mf_cuda_apply_lookup_d3_p2, mf_cuda_apply_lookup_d3_p3, mf_cuda_apply_lookup_d3_p4,
       mf_cuda_apply_lookup_d3_p5, mf_cuda_apply_lookup_d3_p6, mf_cuda_apply_lookup_d3_p7, mf_cuda_apply_lookup_d3_p8}};
  if (dim < 2 || dim > 3 || p < 1 || p > 8 || quad < 0 || quad > 2 || op < 0 || op > 2) return NULL;
  return table[dim - 2][p - 1](quad, op, hang);
}

static int op_index(const mf_operator op) { return op->kind == MF_OP_MASS ? 0 : op->kind == MF_OP_LAPLACE ? 1 : 2; }

static int apply_cuda(mf_operator op, mf_vector x, mf_vector y)
{
  mf_space s = op->space;
  mf_context ctx = op->ctx;
  const mf_cuda_operator *d = (const mf_cuda_operator *)op->dev;
  const mf_cuda_space *ds = (const mf_cuda_space *)s->dev;
  mf_cuda_apply_fn fn = mf_cuda_apply_lookup(s->dim, s->degree, (int)op->quad, op_index(op), ds->mask != NULL);
  MF_CHECK(fn, ctx, MF_ERR_UNSUPPORTED, "no CUDA kernel for dim %d, degree %d, quadrature %d", s->dim, s->degree,
           (int)op->quad);
  mf_cuda_apply_args a;
  a.cell_nodes = ds->cell_nodes;
  a.bc = op->dirichlet ? ds->bc : NULL;
  a.qd = d->qd;
  a.qd_batch_stride = (long long)op->qd.batch_stride;
  a.qd_block_stride = (long long)op->qd.block_stride;
  a.qd_batch = op->qd.batch;
  a.B = d->B;
  a.D = d->D;
  a.mask = ds->mask;
  a.P = ds->P;
  a.cells_per_block = op->cells_per_block;
  a.x = x->data;
  a.y = y->data;
  if (op->scatter == MF_SCATTER_ATOMIC) {
    a.atomic = 1;
    a.cell_list = ds->atomic_cells;
    a.cell_begin = 0;
    a.cell_end = s->ncells;
    MF_CUDA_CALL(ctx, fn(&a));
  } else {
    a.atomic = 0;
    a.cell_list = ds->color_cells;
    for (int c = 0; c < s->ncolors; c++) {
      a.cell_begin = s->color_off[c];
      a.cell_end = s->color_off[c + 1];
      MF_CUDA_CALL(ctx, fn(&a));
    }
  }
  return 0;
}

// Diagonal: one block per cell, one thread per DoF; for every term (mass m, gradient G_kl) the
// coefficients of the cell are staged in shared memory and each thread sums
//   coef(q) F_x[qx][a] F_y[qy][b] F_z[qz][c] over the quadrature points, F one of B.B, B.Bg, Bg.Bg.
__global__ void k_diagonal(int dim, int n1, int nq, int has_mass, int has_grad, const double *__restrict__ qd,
                           long long batch_stride, long long block_stride, int batch, const double *__restrict__ BB,
                           const double *__restrict__ BG, const double *__restrict__ GG,
                           const int *__restrict__ cell_nodes, const int16_t *mask, double *d)
{
  extern __shared__ double coef[];
  const int cell = blockIdx.x, tid = threadIdx.x;
  if (mask && mask[cell]) return; // cells with hanging nodes: computed on the host (whole block leaves)
  const int nqp = dim == 2 ? nq * nq : nq * nq * nq, npc = dim == 2 ? n1 * n1 : n1 * n1 * n1;
  const int ia = tid % n1, ib = (tid / n1) % n1, ic = dim == 3 ? tid / (n1 * n1) : 0;
  const size_t base = (size_t)(cell / batch) * batch_stride + (size_t)(cell % batch) * nqp;
  const int nterms = (has_mass ? 1 : 0) + (has_grad ? dim * (dim + 1) / 2 : 0);
  double acc = 0.0;
  for (int term = 0; term < nterms; term++) {
    int kk = -1, ll = -1;
    if (!(has_mass && term == 0)) {
      int t = term - (has_mass ? 1 : 0), c = 0;
      for (int k = 0; k < dim; k++)
        for (int l = k; l < dim; l++, c++)
          if (c == t) kk = k, ll = l;
    }
    const double factor = kk != ll ? 2.0 : 1.0;
    __syncthreads();
    for (int q = tid; q < nqp; q += blockDim.x) coef[q] = factor * qd[base + (size_t)term * block_stride + q];
    __syncthreads();
    if (tid < npc) {
      const double *F[3];
      for (int e = 0; e < 3; e++)
        F[e] = kk < 0 ? BB : (e == kk && e == ll) ? GG : (e == kk || e == ll) ? BG : BB;
      const int nz = dim == 3 ? nq : 1;
      for (int qz = 0; qz < nz; qz++) {
        const double fz = dim == 3 ? F[2][qz * n1 + ic] : 1.0;
        for (int qy = 0; qy < nq; qy++) {
          const double fyz = fz * F[1][qy * n1 + ib];
          const double *cq = coef + (qz * nq + qy) * nq;
          double sx = 0.0;
          for (int qx = 0; qx < nq; qx++) sx += cq[qx] * F[0][qx * n1 + ia];
          acc += fyz * sx;
        }
      }
    }
  }
  if (tid < npc) atomicAdd(&d[cell_nodes[(size_t)cell * npc + tid]], acc);
}

static int diagonal_cuda(mf_operator op, mf_vector dvec)
{
  mf_space s = op->space;
  const mf_cuda_operator *d = (const mf_cuda_operator *)op->dev;
  const mf_cuda_space *ds = (const mf_cuda_space *)s->dev;
  if (s->ncells == 0) return 0;
  int threads = (s->npc + 31) / 32 * 32;
  k_diagonal<<<s->ncells, threads, sizeof(double) * op->qd.nqp>>>(
      s->dim, s->n1, op->basis.nq, op->has_mass, op->has_grad, d->qd, (long long)op->qd.batch_stride,
      (long long)op->qd.block_stride, op->qd.batch, d->BB, d->BG, d->GG, ds->cell_nodes, ds->mask, dvec->data);
  MF_CUDA_LAUNCH_CHECK(op->ctx, "diagonal");
  if (s->nmasked) { /* the cells with hanging nodes: C^T A_e C on the host, added on the device */
    double *h = (double *)calloc((size_t)s->nlocal + 1, sizeof(double)), *dh = NULL;
    MF_CHECK(h, op->ctx, MF_ERR_MEMORY, "out of host memory (%zu bytes)", sizeof(double) * (size_t)s->nlocal);
    int ierr = mf_kernel_diagonal_hanging_cpu(op, h);
    if (!ierr) ierr = mf_cuda_upload(op->ctx, (void **)&dh, h, sizeof(double) * (size_t)s->nlocal, "the diagonal");
    free(h);
    if (!ierr) {
      const double one = 1.0;
      if (cublasDaxpy(mf_cuda_ctx(op->ctx)->cublas, s->nlocal, &one, dh, 1, dvec->data, 1) != CUBLAS_STATUS_SUCCESS)
        ierr = mf_error_set(op->ctx, MF_ERR_CUDA, __FILE__, __LINE__, __func__, "cublasDaxpy failed");
    }
    cudaFree(dh);
    if (ierr) return ierr;
  }
  return 0;
}

static int destroy_cuda(mf_operator op)
{
  mf_cuda_operator *d = (mf_cuda_operator *)op->dev;
  if (!d) return 0;
  cudaFree(d->qd);
  cudaFree(d->B);
  cudaFree(d->D);
  cudaFree(d->BB);
  cudaFree(d->BG);
  cudaFree(d->GG);
  free(d);
  op->dev = NULL;
  return 0;
}

extern "C" int mf_cuda_operator_setup(mf_operator op)
{
  mf_context ctx = op->ctx;
  mf_cuda_operator *d = (mf_cuda_operator *)calloc(1, sizeof *d);
  MF_CHECK(d, ctx, MF_ERR_MEMORY, "out of host memory (%zu bytes)", sizeof *d);
  op->dev = d;
  op->ops.apply = apply_cuda;
  op->ops.diagonal = diagonal_cuda;
  op->ops.destroy = destroy_cuda;
  op->ops.masks_bc = 1;
  const mf_basis1d *b = &op->basis;
  const int nq = b->nq, n1 = b->n1;
  MF_CALL(mf_cuda_upload(ctx, (void **)&d->qd, op->qd.data, sizeof(double) * op->qd.len, "quadrature data"));
  MF_CALL(mf_cuda_upload(ctx, (void **)&d->B, b->B, sizeof(double) * nq * n1, "basis matrices"));
  MF_CALL(mf_cuda_upload(ctx, (void **)&d->D, b->D, sizeof(double) * nq * nq, "basis matrices"));
  MF_CALL(mf_cuda_upload(ctx, (void **)&d->BB, b->BB, sizeof(double) * nq * n1, "basis matrices"));
  MF_CALL(mf_cuda_upload(ctx, (void **)&d->BG, b->BG, sizeof(double) * nq * n1, "basis matrices"));
  MF_CALL(mf_cuda_upload(ctx, (void **)&d->GG, b->GG, sizeof(double) * nq * n1, "basis matrices"));
  /* the device holds the quadrature data now; the host copy stays only for the diagonal of the
   * cells with hanging nodes */
  if (!op->space->nmasked) {
    free(op->qd.data);
    op->qd.data = NULL;
  }
  return 0;
}
