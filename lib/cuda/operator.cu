// operator.cu -- the CUDA matrix-free operator: device quadrature data and 1D matrices, the apply
// (one launch per cell color, or one atomic launch), and the matrix-free diagonal.
#include "cell_generic.cuh"

// Lookup functions of the generated instantiation files apply_d<dim>_p<p>_<d|s>.cu.
#define MF_DECL(D, P)                                                                            \
  extern "C" mf_cuda_apply_fn mf_cuda_apply_lookup_d##D##_p##P##_d(int quad, int op, int hang);     \
  extern "C" mf_cuda_apply_fn mf_cuda_apply_lookup_d##D##_p##P##_s(int quad, int op, int hang);     \
  extern "C" mf_cuda_apply_fn mf_cuda_apply_col_lookup_d##D##_p##P##_d(int quad, int op, int hang); \
  extern "C" mf_cuda_apply_fn mf_cuda_apply_col_lookup_d##D##_p##P##_s(int quad, int op, int hang);
MF_DECL(2, 1) MF_DECL(2, 2) MF_DECL(2, 3) MF_DECL(2, 4) MF_DECL(2, 5) MF_DECL(2, 6) MF_DECL(2, 7) MF_DECL(2, 8)
MF_DECL(3, 1) MF_DECL(3, 2) MF_DECL(3, 3) MF_DECL(3, 4) MF_DECL(3, 5) MF_DECL(3, 6) MF_DECL(3, 7) MF_DECL(3, 8)

#define MF_DECL_OTF(D, P) extern "C" mf_cuda_apply_fn mf_cuda_apply_otf_lookup_d##D##_p##P(int quad, int op, int hang);
MF_DECL_OTF(2, 1) MF_DECL_OTF(2, 2) MF_DECL_OTF(2, 3) MF_DECL_OTF(2, 4) MF_DECL_OTF(2, 5) MF_DECL_OTF(2, 6)
MF_DECL_OTF(2, 7) MF_DECL_OTF(2, 8) MF_DECL_OTF(3, 1) MF_DECL_OTF(3, 2) MF_DECL_OTF(3, 3) MF_DECL_OTF(3, 4)
MF_DECL_OTF(3, 5) MF_DECL_OTF(3, 6) MF_DECL_OTF(3, 7) MF_DECL_OTF(3, 8)

extern "C" mf_cuda_apply_fn mf_cuda_apply_otf_lookup(int dim, int p, int quad, int op, int hang)
{
  typedef mf_cuda_apply_fn (*lookup_fn)(int, int, int);
  static const lookup_fn table[2][8] = {
      {mf_cuda_apply_otf_lookup_d2_p1, mf_cuda_apply_otf_lookup_d2_p2, mf_cuda_apply_otf_lookup_d2_p3,
       mf_cuda_apply_otf_lookup_d2_p4, mf_cuda_apply_otf_lookup_d2_p5, mf_cuda_apply_otf_lookup_d2_p6,
       mf_cuda_apply_otf_lookup_d2_p7, mf_cuda_apply_otf_lookup_d2_p8},
      {mf_cuda_apply_otf_lookup_d3_p1, mf_cuda_apply_otf_lookup_d3_p2, mf_cuda_apply_otf_lookup_d3_p3,
       mf_cuda_apply_otf_lookup_d3_p4, mf_cuda_apply_otf_lookup_d3_p5, mf_cuda_apply_otf_lookup_d3_p6,
       mf_cuda_apply_otf_lookup_d3_p7, mf_cuda_apply_otf_lookup_d3_p8}};
  if (dim < 2 || dim > 3 || p < 1 || p > 8 || quad < 0 || quad > 2 || op < 0 || op > 2) return NULL;
  return table[dim - 2][p - 1](quad, op, hang);
}

extern "C" mf_cuda_apply_fn mf_cuda_apply_lookup(int dim, int p, int quad, int op, int hang, int single, int column)
{
  typedef mf_cuda_apply_fn (*lookup_fn)(int, int, int);
#define MF_ROW(K, D, S)                                                                                 \
  {mf_cuda_apply_##K##_d##D##_p1_##S, mf_cuda_apply_##K##_d##D##_p2_##S, mf_cuda_apply_##K##_d##D##_p3_##S, \
   mf_cuda_apply_##K##_d##D##_p4_##S, mf_cuda_apply_##K##_d##D##_p5_##S, mf_cuda_apply_##K##_d##D##_p6_##S, \
   mf_cuda_apply_##K##_d##D##_p7_##S, mf_cuda_apply_##K##_d##D##_p8_##S}
  static const lookup_fn table[2][2][2][8] = {
      {{MF_ROW(lookup, 2, d), MF_ROW(lookup, 3, d)}, {MF_ROW(lookup, 2, s), MF_ROW(lookup, 3, s)}},
      {{MF_ROW(col_lookup, 2, d), MF_ROW(col_lookup, 3, d)}, {MF_ROW(col_lookup, 2, s), MF_ROW(col_lookup, 3, s)}}};
#undef MF_ROW
  if (dim < 2 || dim > 3 || p < 1 || p > 8 || quad < 0 || quad > 2 || op < 0 || op > 2) return NULL;
  return table[column ? 1 : 0][single ? 1 : 0][dim - 2][p - 1](quad, op, hang);
}

// The launch status of a cell kernel, with the kernel named by its template parameters.
static int apply_status(mf_operator op, cudaError_t e)
{
  if (e == cudaSuccess) return 0;
  return mf_error_set(op->ctx, MF_ERR_CUDA, __FILE__, __LINE__, __func__,
                      "kernel 'apply' (dim %d, degree %d, quadrature %d, %s): %s (%s)%s", op->space->dim,
                      op->space->degree, (int)mf_pw(op)->quad, mf_precision_name(op->prec), cudaGetErrorString(e),
                      cudaGetErrorName(e), MF_CUDA_LAUNCH_HINT);
}

static int op_index(const mf_operator op) { return mf_pw(op)->kind == MF_OP_MASS ? 0 : mf_pw(op)->kind == MF_OP_LAPLACE ? 1 : 2; }

// The cell lists of the three parts (mf_cell_part) in launch order, made on first use: the atomic
// order split (each part keeps its Morton-chunk order), and each color split likewise.
static int cuda_parts(mf_operator op, int colored)
{
  mf_space s = op->space;
  mf_context ctx = op->ctx;
  mf_cuda_space *ds = (mf_cuda_space *)s->dev;
  if (colored ? ds->color_parts != NULL : ds->atomic_parts != NULL) return 0;
  int *h = NULL;
  MF_CALL(MF_CALLOC(ctx, (size_t)s->ncells + 1, &h));
  int ierr = 0;
  if (!colored) {
    mf_space_split_parts(s, s->launch_order, s->ncells, h, ds->atomic_part_off);
    ierr = mf_cuda_upload(ctx, (void **)&ds->atomic_parts, h, sizeof(int) * (size_t)s->ncells, "the cell parts");
  } else {
    ierr = MF_CALLOC(ctx, 4 * (size_t)s->ncolors, &ds->color_part_off);
    for (int c = 0; !ierr && c < s->ncolors; c++) {
      const int b = s->color_off[c];
      mf_space_split_parts(s, s->color_cells + b, s->color_off[c + 1] - b, h + b, ds->color_part_off + 4 * c);
      for (int k = 0; k < 4; k++) ds->color_part_off[4 * c + k] += b;
    }
    if (!ierr) ierr = mf_cuda_upload(ctx, (void **)&ds->color_parts, h, sizeof(int) * (size_t)s->ncells, "the cell parts");
    if (ierr) { /* made again at the next call */
      free(ds->color_part_off);
      ds->color_part_off = NULL;
    }
  }
  free(h);
  return ierr;
}

// All cells (part < 0) or the cells of one part, adding into y.
static int apply_cuda_cells(mf_operator op, mf_vector x, mf_vector y, int part)
{
  mf_space s = op->space;
  mf_context ctx = op->ctx;
  const mf_cuda_operator *d = (const mf_cuda_operator *)mf_hexop(op)->dev;
  const mf_cuda_space *ds = (const mf_cuda_space *)s->dev;
  const int single = op->prec == MF_PRECISION_FLOAT;
  const int column = mf_operator_design(op) == MF_KERNEL_COLUMN; /* never on the fly (mf_operator_design) */
  const int otf = mf_hexop(op)->geometry == MF_GEOMETRY_ON_THE_FLY;
  mf_cuda_apply_fn fn =
      otf ? mf_cuda_apply_otf_lookup(s->dim, s->degree, (int)mf_pw(op)->quad, op_index(op), ds->mask != NULL)
          : mf_cuda_apply_lookup(s->dim, s->degree, (int)mf_pw(op)->quad, op_index(op), ds->mask != NULL, single, column);
  MF_CHECK(fn, ctx, MF_ERR_UNSUPPORTED, "no CUDA kernel for dim %d, degree %d, quadrature %d", s->dim, s->degree,
           (int)mf_pw(op)->quad);
  mf_cuda_apply_args a;
  a.cell_nodes = ds->cell_nodes;
  a.bc = op->dirichlet ? ds->bc : NULL;
  a.qd = single ? (const void *)d->qdf : (const void *)d->qd; /* NULL on the fly */
  a.coords = otf ? ds->coords_cm : NULL;
  a.coords_stride = (long long)s->nlocal;
  a.coefq = otf ? d->coefq : NULL;
  a.qw = d->qw;
  a.qf_a = mf_pw(op)->coef_a;
  a.qf_b = mf_pw(op)->coef_b;
  a.qd_batch_stride = (long long)mf_hexop(op)->qd.batch_stride;
  a.qd_block_stride = (long long)mf_hexop(op)->qd.block_stride;
  a.qd_batch = mf_hexop(op)->qd.batch;
  a.B = d->B;
  a.D = d->D;
  a.mask = ds->mask;
  a.P = ds->P;
  a.cells_per_block = mf_hexop(op)->cells_per_block;
  a.x = single ? (const void *)x->sdata : (const void *)x->data;
  a.y = single ? (void *)y->sdata : (void *)y->data;
  if (op->scatter == MF_SCATTER_ATOMIC) {
    a.atomic = 1;
    if (part >= 0) MF_CALL(cuda_parts(op, 0));
    a.cell_list = part < 0 ? ds->atomic_cells : ds->atomic_parts;
    a.cell_begin = part < 0 ? 0 : ds->atomic_part_off[part];
    a.cell_end = part < 0 ? s->ncells : ds->atomic_part_off[part + 1];
    if (a.cell_end > a.cell_begin) MF_CALL(apply_status(op, fn(&a)));
  } else {
    if (!ds->color_cells) { /* the colors, on first use */
      MF_CALL(mf_space_colors(s));
      MF_CALL(mf_cuda_upload(ctx, (void **)&((mf_cuda_space *)s->dev)->color_cells, s->color_cells,
                             sizeof(int) * (size_t)s->ncells, "the cells by color"));
    }
    if (part >= 0) MF_CALL(cuda_parts(op, 1));
    a.atomic = 0;
    a.cell_list = part < 0 ? ds->color_cells : ds->color_parts;
    for (int c = 0; c < s->ncolors; c++) {
      a.cell_begin = part < 0 ? s->color_off[c] : ds->color_part_off[4 * c + part];
      a.cell_end = part < 0 ? s->color_off[c + 1] : ds->color_part_off[4 * c + part + 1];
      if (a.cell_end > a.cell_begin) MF_CALL(apply_status(op, fn(&a)));
    }
  }
  return 0;
}
static int apply_cuda(mf_operator op, mf_vector x, mf_vector y) { return apply_cuda_cells(op, x, y, -1); }
static int apply_part_cuda(mf_operator op, mf_vector x, mf_vector y, mf_cell_part part)
{
  return apply_cuda_cells(op, x, y, (int)part);
}

// Diagonal: one block per cell, one thread per DoF; for every term (mass m, gradient G_kl) the
// coefficients of the cell are staged in shared memory and each thread sums
//   coef(q) F_x[qx][a] F_y[qy][b] F_z[qz][c] over the quadrature points, F one of B.B, B.Bg, Bg.Bg.
// On a cell with a mask the columns that mf_hanging_diag_column selects are left to k_diag_hanging.
__global__ void k_diagonal(int dim, int n1, int nq, int has_mass, int has_grad, const double *__restrict__ qd,
                           long long batch_stride, long long block_stride, int batch, const double *__restrict__ BB,
                           const double *__restrict__ BG, const double *__restrict__ GG,
                           const int *__restrict__ cell_nodes, const int16_t *mask, double *d)
{
  extern __shared__ double coef[];
  const int cell = blockIdx.x, tid = threadIdx.x;
  const int nqp = dim == 2 ? nq * nq : nq * nq * nq, npc = dim == 2 ? n1 * n1 : n1 * n1 * n1;
  const int ia = tid % n1, ib = (tid / n1) % n1, ic = dim == 3 ? tid / (n1 * n1) : 0;
  const size_t base = (size_t)(cell / batch) * batch_stride + (size_t)(cell % batch) * nqp;
  const int nterms = (has_mass ? 1 : 0) + (has_grad ? dim * (dim + 1) / 2 : 0);
  double acc = 0.0;
  for (int term = 0; term < nterms; term++) {
    int kk, ll; // the derivatives the term pairs (none for the mass part's), its factor
    double factor;
    MF_PW_DIAG_TERM(dim, has_mass, term, kk, ll, factor);
    __syncthreads();
    for (int q = tid; q < nqp; q += blockDim.x) coef[q] = factor * qd[base + (size_t)term * block_stride + q];
    __syncthreads();
    if (tid < npc) {
      const double *F[3];
      for (int e = 0; e < 3; e++)
        F[e] = kk < 0 ? BB : (e == kk && e == ll) ? GG : (e == kk || e == ll) ? BG : BB;
      const int nz = dim == 3 ? nq : 1;
      double de = 0.0;
      for (int qz = 0; qz < nz; qz++) {
        const double fz = dim == 3 ? F[2][qz * n1 + ic] : 1.0;
        for (int qy = 0; qy < nq; qy++) {
          const double fyz = fz * F[1][qy * n1 + ib];
          const double *cq = coef + (qz * nq + qy) * nq;
          double sx = 0.0;
          for (int qx = 0; qx < nq; qx++) sx += cq[qx] * F[0][qx * n1 + ia];
          de += fyz * sx;
        }
      }
      acc += de;
    }
  }
  if (tid >= npc) return;
  const int *nodes = cell_nodes + (size_t)cell * npc, mk = mask ? mask[cell] : 0;
  if (mk && mf_hanging_diag_column(dim, n1, npc, mk, nodes, tid)) return;
  atomicAdd(&d[nodes[tid]], acc);
}

// Diagonal of the cells with a mask, one block per such cell, one thread per quadrature point: for
// each column j that mf_hanging_diag_column selects, the cell operator with constraints on e_j
// (C^T A_e C e_j, the same steps and order as mf_kernel_cell_cpu), and every position holding j's
// DoF adds its entry (the CPU twin: mf_kernel_diagonal_hanging_cpu).
struct diag_hanging_args : mfg::hanging_cell_args {
  double *d;
};

static size_t diag_hanging_shared(const mfg::cell_shape &c)
{
  return sizeof(double) * ((size_t)c.nq * c.n1 + (size_t)c.nq * c.nq + 2 * c.n1 * c.n1 + (size_t)(2 + c.dim) * c.nqp +
                           (size_t)c.npc);
}

__global__ void __launch_bounds__(1024) k_diag_hanging(const diag_hanging_args a)
{
  extern __shared__ double sm[];
  const mfg::cell_shape c = a.c;
  double *sB = sm, *sD = sB + c.nq * c.n1, *sP = sD + c.nq * c.nq, *s0 = sP + 2 * c.n1 * c.n1, *s1 = s0 + c.nqp;
  double *v = s1 + c.nqp, *column = v + (size_t)c.dim * c.nqp;
  const int cell = a.cells[blockIdx.x], mask = a.mask[cell];
  const int *nodes = a.cell_nodes + (size_t)cell * c.npc;
  for (int j = threadIdx.x; j < c.npc; j += blockDim.x) /* which columns need the cell operator: once */
    column[j] = mf_hanging_diag_column(c.dim, c.n1, c.npc, mask, nodes, j) ? 1.0 : 0.0;
  mfg::stage(sB, a.B, c.nq * c.n1);
  mfg::stage(sD, a.D, c.nq * c.nq);
  mfg::stage(sP, a.P, 2 * c.n1 * c.n1);
  const mfg::point t = mfg::make_point(c, threadIdx.x);
  const int ncomp = (a.has_mass ? 1 : 0) + (a.has_grad ? (c.dim == 2 ? 3 : 6) : 0);
  double qv[7];
  const size_t qbase = (size_t)(cell / a.batch) * a.batch_stride + (size_t)(cell % a.batch) * c.nqp + t.q;
  for (int k = 0; k < 7; k++) qv[k] = k < ncomp ? a.qd[qbase + (size_t)k * a.block_stride] : 0.0;
  const int mydof = t.isdof ? nodes[t.pos] : -1;
  double acc = 0.0;
  __syncthreads();
  for (int j = 0; j < c.npc; j++) {
    if (column[j] == 0.0) continue; /* the same j for all threads */
    const double res = mfg::constrained_column(c, j, mask, sB, sD, sP, s0, s1, v, qv, a.has_mass, a.has_grad, a.colloc, t);
    if (t.isdof && mydof == nodes[j]) acc += res;
  }
  if (t.isdof && acc != 0.0) atomicAdd(&a.d[mydof], acc);
}

static int diagonal_stored(mf_operator op, mf_vector dvec)
{
  mf_space s = op->space;
  const mf_cuda_operator *d = (const mf_cuda_operator *)mf_hexop(op)->dev;
  const mf_cuda_space *ds = (const mf_cuda_space *)s->dev;
  if (s->ncells == 0) return 0;
  int threads = (s->npc + 31) / 32 * 32;
  k_diagonal<<<s->ncells, threads, sizeof(double) * mf_hexop(op)->qd.nqp>>>(
      s->dim, s->n1, mf_hexop(op)->basis.nq, mf_pw(op)->has_mass, mf_pw(op)->has_grad, d->qd, (long long)mf_hexop(op)->qd.batch_stride,
      (long long)mf_hexop(op)->qd.block_stride, mf_hexop(op)->qd.batch, d->BB, d->BG, d->GG, ds->cell_nodes, ds->mask, dvec->data);
  MF_CUDA_LAUNCH_CHECK(op->ctx, "diagonal");
  if (s->nmasked) {
    diag_hanging_args a;
    mfg::hanging_cell_args_fill(op, &a);
    a.d = dvec->data;
    const size_t shmem = diag_hanging_shared(a.c);
    if (shmem > 48 * 1024)
      MF_CUDA_CALL(op->ctx, cudaFuncSetAttribute(k_diag_hanging, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)shmem));
    k_diag_hanging<<<s->nmasked, a.c.nqp, shmem>>>(a);
    MF_CUDA_LAUNCH_CHECK(op->ctx, "diagonal of cells with hanging nodes");
  }
  return 0;
}

// Zeroed device quadrature data in mf_hexop(op)->qd's layout (the padding stays defined, as on the host).
static int alloc_qdata(mf_operator op, double **qd)
{
  *qd = NULL;
  MF_CALL(mf_cuda_malloc(op->ctx, (void **)qd, sizeof(double) * mf_hexop(op)->qd.len, "quadrature data"));
  if (cudaMemset(*qd, 0, sizeof(double) * mf_hexop(op)->qd.len) != cudaSuccess) {
    mf_cuda_free(op->ctx, *qd);
    *qd = NULL;
    return mf_error_set(op->ctx, MF_ERR_CUDA, __FILE__, __LINE__, __func__, "cudaMemset of the quadrature data failed: %s",
                        cudaGetErrorString(cudaGetLastError()));
  }
  return 0;
}

// On the fly the diagonal comes from quadrature data made for the moment (the stored ones: the same
// kernels and values) and freed after.
static int diagonal_cuda(mf_operator op, mf_vector dvec)
{
  if (mf_hexop(op)->geometry != MF_GEOMETRY_ON_THE_FLY) return diagonal_stored(op, dvec);
  mf_cuda_operator *d = (mf_cuda_operator *)mf_hexop(op)->dev;
  double *qd = NULL;
  MF_CALL(mf_cuda_require(op->ctx, sizeof(double) * mf_hexop(op)->qd.len, "quadrature data for the diagonal"));
  MF_CALL(alloc_qdata(op, &qd));
  int ierr = mf_cuda_otf_qdata(op, qd, d->coefq);
  if (!ierr) {
    d->qd = qd;
    ierr = diagonal_stored(op, dvec);
    d->qd = NULL;
  }
  mf_cuda_free(op->ctx, qd);
  return ierr;
}

// Component-major node coordinates of the space (dim x nlocal), made once for all its operators: the
// threads of a warp gather one component of consecutive nodes from consecutive addresses, as they do
// u, where the interleaved array (nlocal x dim) would spread each load over dim times the sectors.
__global__ void k_coords_cm(int n, int dim, const double *__restrict__ in, double *__restrict__ out)
{
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  for (int k = 0; k < dim; k++) out[(size_t)k * n + i] = in[(size_t)i * dim + k];
}

static int space_coords_cm(mf_space s)
{
  mf_cuda_space *ds = (mf_cuda_space *)s->dev;
  if (ds->coords_cm) return 0;
  const size_t bytes = sizeof(double) * (size_t)s->nlocal * s->dim;
  MF_CALL(mf_cuda_malloc(s->ctx, (void **)&ds->coords_cm, bytes > 0 ? bytes : 8, "the node coordinates, component-major"));
  if (s->nlocal > 0) k_coords_cm<<<(s->nlocal + 255) / 256, 256>>>(s->nlocal, s->dim, ds->coords, ds->coords_cm);
  MF_CUDA_LAUNCH_CHECK(s->ctx, "coordinates component-major");
  return 0;
}

// Geometry switch in two steps (lib/operator.c commits once the ranks agree): the new device state,
// the coefficient at the points (NULL without a coefficient) or the quadrature data, made without
// touching the old one; then committed.
extern "C" int mf_cuda_operator_geometry_prepare(mf_operator op, mf_geometry mode, void **st)
{
  mf_context ctx = op->ctx;
  mf_space s = op->space;
  const mf_cuda_operator *d = (const mf_cuda_operator *)mf_hexop(op)->dev;
  const mf_cuda_space *ds = (const mf_cuda_space *)s->dev;
  *st = NULL;
  if (mode == MF_GEOMETRY_ON_THE_FLY) {
    const size_t npts = (size_t)s->ncells * mf_hexop(op)->qd.nqp;
    const size_t need = (ds->coords_cm ? 0 : sizeof(double) * (size_t)s->nlocal * s->dim) +
                        (mf_pw(op)->coef ? sizeof(double) * npts + mf_cuda_qdata_setup_bytes(op, 1) : 0);
    MF_CALL(mf_cuda_require(ctx, need, "geometry on the fly (coordinates, coefficient at the points)"));
    MF_CALL(space_coords_cm(s));
    if (!mf_pw(op)->coef) return 0;
    double *cq = NULL;
    MF_CALL(mf_cuda_malloc(ctx, (void **)&cq, sizeof(double) * (npts > 0 ? npts : 1), "the coefficient at the quadrature points"));
    int ierr = mf_cuda_otf_coefficient(op, cq);
    if (ierr) {
      mf_cuda_free(ctx, cq);
      return ierr;
    }
    *st = cq;
    return 0;
  }
  MF_CALL(mf_cuda_require(ctx, sizeof(double) * mf_hexop(op)->qd.len, "the quadrature data"));
  double *qd = NULL;
  MF_CALL(alloc_qdata(op, &qd));
  int ierr = mf_cuda_otf_qdata(op, qd, d->coefq);
  if (ierr) {
    mf_cuda_free(ctx, qd);
    return ierr;
  }
  *st = qd;
  return 0;
}

extern "C" void mf_cuda_operator_geometry_discard(mf_operator op, void *st) { mf_cuda_free(op->ctx, st); }

extern "C" void mf_cuda_operator_geometry_commit(mf_operator op, mf_geometry mode, void *st)
{
  mf_cuda_operator *d = (mf_cuda_operator *)mf_hexop(op)->dev;
  if (mode == MF_GEOMETRY_ON_THE_FLY) {
    mf_cuda_free(op->ctx, d->qd);
    d->qd = NULL;
    d->coefq = (double *)st;
  } else {
    d->qd = (double *)st;
    mf_cuda_free(op->ctx, d->coefq);
    d->coefq = NULL;
  }
  mf_hexop(op)->geometry = mode;
}

static int destroy_cuda(mf_operator op)
{
  mf_cuda_operator *d = (mf_cuda_operator *)mf_hexop(op)->dev;
  if (!d) return 0;
  void *ptrs[] = {d->qd, d->qdf, d->B, d->D, d->BB, d->BG, d->GG, d->qw, d->coefq};
  for (size_t k = 0; k < sizeof ptrs / sizeof ptrs[0]; k++) mf_cuda_free(op->ctx, ptrs[k]);
  free(d);
  mf_hexop(op)->dev = NULL;
  return 0;
}

extern "C" int mf_cuda_operator_setup(mf_operator op, mf_coefficient_fn c, void *user, double a, double b)
{
  mf_context ctx = op->ctx;
  mf_cuda_operator *d = (mf_cuda_operator *)calloc(1, sizeof *d);
  MF_CHECK(d, ctx, MF_ERR_MEMORY, "out of host memory (%zu bytes)", sizeof *d);
  mf_hexop(op)->dev = d;
  op->ops.apply = apply_cuda;
  op->ops.apply_part = apply_part_cuda;
  op->ops.diagonal = diagonal_cuda;
  op->ops.destroy = destroy_cuda;
  op->ops.masks_bc = 1;
  const mf_basis1d *bs = &mf_hexop(op)->basis;
  const int nq = bs->nq, n1 = bs->n1;
  /* refuse before allocating: quadrature data, 1D matrices, the set-up's batches, and the
   * operator's work vector (allocated next by the caller) */
  const size_t need = sizeof(double) * (mf_hexop(op)->qd.len + (size_t)nq * (4 * n1 + nq + 1) + (size_t)op->space->nlocal) +
                      mf_cuda_qdata_setup_bytes(op, c != NULL);
  MF_CALL(mf_cuda_require(ctx, need, "the operator (quadrature data, matrices and set-up batches)"));
  double t0 = mf_phase_begin(ctx);
  int ierr = mf_cuda_malloc(ctx, (void **)&d->qd, sizeof(double) * mf_hexop(op)->qd.len, "quadrature data");
  /* the padding of the AoSoA blocks stays defined (zero), as on the host */
  if (!ierr && cudaMemset(d->qd, 0, sizeof(double) * mf_hexop(op)->qd.len) != cudaSuccess)
    ierr = mf_error_set(ctx, MF_ERR_CUDA, __FILE__, __LINE__, __func__, "cudaMemset of the quadrature data failed: %s",
                        cudaGetErrorString(cudaGetLastError()));
  if (!ierr) ierr = mf_cuda_upload(ctx, (void **)&d->B, bs->B, sizeof(double) * nq * n1, "basis matrices");
  if (!ierr) ierr = mf_cuda_upload(ctx, (void **)&d->D, bs->D, sizeof(double) * nq * nq, "basis matrices");
  if (!ierr) ierr = mf_cuda_upload(ctx, (void **)&d->BB, bs->BB, sizeof(double) * nq * n1, "basis matrices");
  if (!ierr) ierr = mf_cuda_upload(ctx, (void **)&d->BG, bs->BG, sizeof(double) * nq * n1, "basis matrices");
  if (!ierr) ierr = mf_cuda_upload(ctx, (void **)&d->GG, bs->GG, sizeof(double) * nq * n1, "basis matrices");
  if (!ierr) ierr = mf_cuda_upload(ctx, (void **)&d->qw, bs->qwts, sizeof(double) * nq, "quadrature weights");
  mf_phase_end(ctx, MF_PHASE_TRANSFER, t0);
  if (ierr) return ierr;
  return mf_cuda_operator_qdata(op, d->B, d->D, d->qw, c, user, a, b);
}

extern "C" int mf_cuda_qdata_to_host(mf_operator op, double *host)
{
  const mf_cuda_operator *d = (const mf_cuda_operator *)mf_hexop(op)->dev;
  MF_CUDA_CALL(op->ctx, cudaMemcpy(host, d->qd, sizeof(double) * mf_hexop(op)->qd.len, cudaMemcpyDeviceToHost));
  return 0;
}

extern "C" int mf_cuda_operator_single(mf_operator op, mf_operator like)
{
  mf_context ctx = op->ctx;
  const mf_cuda_operator *l = (const mf_cuda_operator *)mf_hexop(like)->dev;
  mf_cuda_operator *d = (mf_cuda_operator *)calloc(1, sizeof *d);
  MF_CHECK(d, ctx, MF_ERR_MEMORY, "out of host memory (%zu bytes)", sizeof *d);
  mf_hexop(op)->dev = d;
  op->ops.apply = apply_cuda;
  op->ops.apply_part = apply_part_cuda;
  op->ops.destroy = destroy_cuda;
  op->ops.masks_bc = 1;
  const mf_basis1d *bs = &mf_hexop(op)->basis;
  const int nq = bs->nq, n1 = bs->n1;
  MF_CALL(mf_cuda_require(ctx, sizeof(float) * (mf_hexop(op)->qd.len + (size_t)op->space->nlocal) + sizeof(double) * nq * (n1 + nq),
                          "the single-precision operator"));
  MF_CALL(mf_cuda_malloc(ctx, (void **)&d->qdf, sizeof(float) * mf_hexop(op)->qd.len, "quadrature data in float"));
  MF_CALL(mf_cuda_upload(ctx, (void **)&d->B, bs->B, sizeof(double) * nq * n1, "basis matrices"));
  MF_CALL(mf_cuda_upload(ctx, (void **)&d->D, bs->D, sizeof(double) * nq * nq, "basis matrices"));
  const double *src = l->qd;
  double *made = NULL; /* like computes its geometry on the fly: its stored data made for the moment */
  if (mf_hexop(like)->geometry == MF_GEOMETRY_ON_THE_FLY) {
    MF_CALL(mf_cuda_require(ctx, sizeof(double) * mf_hexop(op)->qd.len, "quadrature data for the single-precision copy"));
    MF_CALL(alloc_qdata(like, &made));
    int ierr = mf_cuda_otf_qdata(like, made, l->coefq);
    if (ierr) {
      mf_cuda_free(ctx, made);
      return ierr;
    }
    src = made;
  }
  const int ierr = mf_cuda_round(ctx, d->qdf, src, mf_hexop(op)->qd.len, "rounding the quadrature data");
  mf_cuda_free(ctx, made);
  return ierr;
}
