// physics_simplex.cu -- users' physics on simplices on the device (the backend table's physics.simplex_*):
// the source of a physics compiled at run time by NVRTC together with the kernels of
// simplex_phys_jit.cuh for one operator shape (dim, nodes, points, components, the functions present;
// cached as physics.cu's are), the stored data made on the device in the full layout, then the product,
// diagonal, residual and assembly there. The CPU twins are lib/simplex/physics_simplex.c's.
#include "mf_cuda_common.cuh"
#include "simplex/mf_simplex_physics.h"
#include "assembled/assembly_impl.h"
#include "mf_cuda_jit.h"

#include <stdio.h>
#include <string.h>
#include <string>

namespace {

using mf_jit::cuda_fail;
using mf_jit::first_flag;
using mf_jit::kernel;
using mf_jit::launch;
using mf_jit::upload;

const unsigned threads = 128; // per block: one thread per cell (or per point of the set-up)

struct sx_dev {
  cudaKernel_t setup, apply, diagonal, residual, assemble;
  int *verts, *cells;                   // the mesh's cells (dim + 1 vertices each), the cells' nodes
  double *coords, *B, *G, *qp, *qw, *k; // vertices (3 each), the basis at the points, the constants
  double *qd;                           // ncells x nq x lay.n (full layout)
  mf_context ctx;
};

sx_dev *dev_of(mf_operator op) { return (sx_dev *)mf_sxphys(op)->dev; }
const mf_simplex_mesh *mesh_of(mf_operator op) { return (const mf_simplex_mesh *)op->space->mesh->fdata; }
unsigned blocks(long long n) { return (unsigned)((n + threads - 1) / threads); }

std::string program(const mf_simplex_phys *h, const mf_space s)
{
  const mf_phys *ph = &h->ph;
  char buf[512];
  snprintf(buf, sizeof buf,
           "#define MF_DIM %d\n#define MF_NC %d\n#define MF_NN %d\n#define MF_NQS %d\n#define MF_HAS0 %d\n"
           "#define MF_HAS1 %d\n#define MF_HAS2 %d\n#define MF_HAS3 %d\n#define MF_HASF0 %d\n#define MF_HASF1 %d\n"
           "#define MF_NS_FULL %d\n#include \"physics/mf_physics.h\"\n",
           s->dim, s->ncomp, h->basis.nnodes, h->basis.nq, h->lay.has[0], h->lay.has[1], h->lay.has[2], h->lay.has[3],
           ph->src_has[0], ph->src_has[1], h->lay.n);
  std::string t = buf;
  t += mf_jit::physics_glue(ph);
  t += "#include \"cuda/simplex_phys_jit.cuh\"\n";
  return t;
}

void free_dev(sx_dev *d)
{
  if (!d) return;
  cudaFree(d->verts);
  cudaFree(d->cells);
  cudaFree(d->coords);
  cudaFree(d->B);
  cudaFree(d->G);
  cudaFree(d->qp);
  cudaFree(d->qw);
  cudaFree(d->k);
  mf_cuda_free(d->ctx, d->qd);
  delete d;
}

int destroy_op(mf_operator op)
{
  free_dev(dev_of(op));
  mf_sxphys(op)->dev = NULL;
  return 0;
}

// a device flag, all bits set (no point flagged)
int new_flag(mf_context ctx, unsigned long long **flag)
{
  cudaError_t e = cudaMalloc((void **)flag, sizeof **flag);
  if (e == cudaSuccess) e = cudaMemset(*flag, 0xff, sizeof **flag);
  if (e != cudaSuccess) {
    cudaFree(*flag);
    *flag = NULL;
    return cuda_fail(ctx, e, "a flag of the physics' checks");
  }
  return 0;
}

// "(x, y[, z])" of point q of cell e (the host's geometry)
void point_text(mf_operator op, int e, int q, char *buf, size_t n)
{
  const mf_simplex_mesh *m = mesh_of(op);
  const mf_simplex_basis *b = &mf_sxphys(op)->basis;
  const int dim = m->dim, *v = m->cells + (size_t)e * (dim + 1);
  int len = snprintf(buf, n, "(");
  for (int k = 0; k < dim; k++) {
    double x = m->coords[3 * (size_t)v[0] + k];
    for (int l = 0; l < dim; l++) x += (m->coords[3 * (size_t)v[l + 1] + k] - m->coords[3 * (size_t)v[0] + k]) * b->qpts[q * dim + l];
    len += snprintf(buf + len, n - (size_t)len, k ? ", %g" : "%g", x);
  }
  snprintf(buf + len, n - (size_t)len, ")");
}

int not_finite(mf_operator op, long long f, const char *which)
{
  char xs[96];
  const int e = (int)(f >> 20), q = (int)(f & 0xfffff);
  point_text(op, e, q, xs, sizeof xs);
  return mf_error_set(op->ctx, MF_ERR_ARGUMENT, __FILE__, __LINE__, __func__,
                      "physics '%s': %s gave a value that is not finite at quadrature point %d of cell %d, x = %s: "
                      "the pointwise functions must give finite values",
                      mf_sxphys(op)->ph.name, which, q, e, xs);
}

int apply_op(mf_operator op, mf_vector x, mf_vector y)
{
  sx_dev *d = dev_of(op);
  const mf_space s = op->space;
  const double *xd = x->data;
  double *yd = y->data;
  int ncells = s->ncells;
  cudaError_t e = cudaMemset(yd, 0, sizeof(double) * (size_t)s->nlocal);
  if (e != cudaSuccess) return cuda_fail(op->ctx, e, "zeroing the product");
  void *args[] = {(void *)&d->cells, (void *)&d->B, (void *)&d->G, (void *)&d->qd, (void *)&ncells, (void *)&xd,
                  (void *)&yd};
  return launch(op->ctx, d->apply, blocks(ncells), threads, 0, args, "simplex physics apply");
}

int diagonal_op(mf_operator op, mf_vector dv)
{
  sx_dev *d = dev_of(op);
  const mf_space s = op->space;
  double *yd = dv->data;
  int ncells = s->ncells;
  cudaError_t e = cudaMemset(yd, 0, sizeof(double) * (size_t)s->nlocal);
  if (e != cudaSuccess) return cuda_fail(op->ctx, e, "zeroing the diagonal");
  void *args[] = {(void *)&d->cells, (void *)&d->B, (void *)&d->G, (void *)&d->qd, (void *)&ncells, (void *)&yd};
  return launch(op->ctx, d->diagonal, blocks(ncells), threads, 0, args, "simplex physics diagonal");
}

int residual_op(mf_operator op, mf_vector u, mf_vector r)
{
  mf_context ctx = op->ctx;
  sx_dev *d = dev_of(op);
  const double *ud = u->data;
  double *rd = r->data;
  int ncells = op->space->ncells;
  unsigned long long *flag = NULL;
  MF_CALL(new_flag(ctx, &flag));
  void *args[] = {(void *)&d->verts, (void *)&d->coords, (void *)&d->cells, (void *)&d->B,  (void *)&d->G,
                  (void *)&d->qp,    (void *)&d->qw,     (void *)&d->k,     (void *)&ncells, (void *)&ud,
                  (void *)&rd,       (void *)&flag};
  int ierr = launch(ctx, d->residual, blocks(ncells), threads, 0, args, "simplex physics residual");
  const long long f = ierr ? -1 : first_flag(ctx, flag, &ierr);
  cudaFree(flag);
  if (!ierr && f >= 0) ierr = not_finite(op, f, "f0 or f1");
  return ierr;
}

// the kernels, tables and mesh on the device
int make_dev(mf_operator op, sx_dev *d)
{
  mf_context ctx = op->ctx;
  const mf_space s = op->space;
  const mf_simplex_phys *h = mf_sxphys(op);
  const mf_simplex_mesh *m = mesh_of(op);
  const mf_simplex_basis *b = &h->basis;
  const int dim = s->dim, N = b->nnodes, nq = b->nq;
  cudaLibrary_t lib = NULL;
  MF_CALL(mf_cuda_jit_library(ctx, program(h, s), &lib));
  MF_CALL(kernel(ctx, lib, "mfree_sx_setup", &d->setup));
  MF_CALL(kernel(ctx, lib, "mfree_sx_apply", &d->apply));
  MF_CALL(kernel(ctx, lib, "mfree_sx_diagonal", &d->diagonal));
  MF_CALL(kernel(ctx, lib, "mfree_sx_residual", &d->residual));
  MF_CALL(kernel(ctx, lib, "mfree_sx_assemble", &d->assemble));
  MF_CALL(upload(ctx, &d->verts, m->cells, (size_t)m->ncells * (dim + 1), "the simplex mesh's cells"));
  MF_CALL(upload(ctx, &d->coords, m->coords, (size_t)m->nv * 3, "the simplex mesh's vertices"));
  MF_CALL(upload(ctx, &d->cells, s->cell_nodes, (size_t)s->ncells * N, "the cells' nodes"));
  MF_CALL(upload(ctx, &d->B, b->B, (size_t)nq * N, "the simplex basis"));
  MF_CALL(upload(ctx, &d->G, b->G, (size_t)nq * N * dim, "the simplex basis"));
  MF_CALL(upload(ctx, &d->qp, b->qpts, (size_t)nq * dim, "the simplex rule"));
  MF_CALL(upload(ctx, &d->qw, b->qwts, (size_t)nq, "the simplex rule"));
  MF_CALL(upload(ctx, &d->k, h->ph.k, (size_t)h->ph.nconst, "the physics' constants"));
  return 0;
}

} // namespace

/* The operator's kernels (compiled or found in the cache), then its stored data made on the device: the
 * g-functions at every point in the full layout (phase "geometry"); a degenerate cell or a value that is
 * not finite refused, naming the point. */
extern "C" int mf_cuda_simplex_physics_setup(mf_operator op)
{
  mf_context ctx = op->ctx;
  const mf_space s = op->space;
  mf_simplex_phys *h = mf_sxphys(op);
  sx_dev *d = new sx_dev();
  d->ctx = ctx;
  h->dev = d;
  op->ops.destroy = destroy_op;
  op->ops.apply = apply_op;
  op->ops.diagonal = diagonal_op;
  op->ops.residual = residual_op;
  MF_CALL(make_dev(op, d));
  const size_t npts = (size_t)s->ncells * h->basis.nq, bytes = sizeof(double) * (npts * h->lay.n + 1);
  char what[96];
  snprintf(what, sizeof what, "the simplex physics' stored data (%zu points x %d)", npts, h->lay.n);
  MF_CALL(mf_cuda_require(ctx, bytes, what));
  MF_CALL(mf_cuda_malloc(ctx, (void **)&d->qd, bytes, what));
  unsigned long long *flags = NULL;
  cudaError_t e = cudaMalloc((void **)&flags, 2 * sizeof *flags);
  if (e == cudaSuccess) e = cudaMemset(flags, 0xff, 2 * sizeof *flags);
  if (e != cudaSuccess) {
    cudaFree(flags);
    return cuda_fail(ctx, e, "the set-up's checks");
  }
  const double t0 = mf_phase_begin(ctx);
  int ncells = s->ncells;
  unsigned long long *bad = flags, *nonfinite = flags + 1;
  void *args[] = {(void *)&d->verts, (void *)&d->coords, (void *)&d->qp, (void *)&d->qw,       (void *)&d->k,
                  (void *)&ncells,   (void *)&d->qd,     (void *)&bad,   (void *)&nonfinite};
  int ierr = launch(ctx, d->setup, blocks((long long)npts), threads, 0, args, "simplex physics set-up");
  const long long fb = ierr ? -1 : first_flag(ctx, bad, &ierr), fn = ierr ? -1 : first_flag(ctx, nonfinite, &ierr);
  cudaFree(flags);
  mf_phase_end(ctx, MF_PHASE_GEOMETRY, t0);
  if (!ierr && fb >= 0)
    ierr = mf_error_set(ctx, MF_ERR_ARGUMENT, __FILE__, __LINE__, __func__,
                        "degenerate cell %d: Jacobian determinant not positive", (int)(fb >> 20));
  if (!ierr && fn >= 0) ierr = not_finite(op, fn, "a g-function");
  return ierr;
}

/* The assembled matrix's values on the device (A: the CSR operator of op's space, its pattern there):
 * allocated, zeroed, every cell's element matrix added (mfree_sx_assemble); freed with A. */
static int destroy_values(mf_operator A)
{
  mf_cuda_free(A->ctx, mf_csr(A)->vals);
  mf_csr(A)->vals = NULL;
  return 0;
}
extern "C" int mf_cuda_simplex_physics_assemble(mf_operator op, mf_operator A)
{
  mf_context ctx = op->ctx;
  const mf_space s = op->space;
  const mf_cuda_space *ds = (const mf_cuda_space *)s->dev;
  MF_CHECK(ds && ds->csr_rowptr, ctx, MF_ERR_ARGUMENT, "the space's sparsity is not on the device");
  sx_dev *d = dev_of(op);
  const size_t nnz = (size_t)s->csr_rowptr[s->nlocal];
  char what[96];
  snprintf(what, sizeof what, "the assembled values (%zu)", nnz);
  MF_CALL(mf_cuda_require(ctx, sizeof(double) * nnz, what));
  MF_CALL(mf_cuda_malloc(ctx, (void **)&mf_csr(A)->vals, sizeof(double) * (nnz ? nnz : 1), what));
  A->ops.destroy = destroy_values;
  if (cudaMemset(mf_csr(A)->vals, 0, sizeof(double) * nnz) != cudaSuccess)
    return cuda_fail(ctx, cudaGetLastError(), "zeroing the assembled values");
  const int *colidx = ds->csr_colidx;
  const int64_t *rowptr = ds->csr_rowptr;
  double *vals = mf_csr(A)->vals;
  int ncells = s->ncells;
  void *args[] = {(void *)&d->cells, (void *)&d->B,    (void *)&d->G,      (void *)&d->qd,
                  (void *)&ncells,   (void *)&rowptr,  (void *)&colidx,    (void *)&vals};
  return launch(ctx, d->assemble, blocks(ncells), threads, 0, args, "simplex physics assembly");
}
