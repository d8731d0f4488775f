// source.cu -- pointwise fields given as source on hex spaces, on the device (the backend table's source
// entries; lib/physics/source_fields.c calls them; a simplex space's go to lib/cuda/simplex_source.cu): the user's function compiled at run time by NVRTC with
// the kernels of source_jit.cuh for one cell shape and rule (cached as the physics are: mf_cuda_jit.h),
// then the nodes' values, the right-hand side's cell integrals and the L2 error's cell sums made there.
#include "mf_cuda_common.cuh"
#include "mf_cuda_jit.h"
#include "hex/mf_hex_op.h"
#include "physics/mf_source.h"

#include <math.h>
#include <stdio.h>
#include <string>

namespace {

using mf_jit::cells_per_block;
using mf_jit::cuda_fail;
using mf_jit::upload;

// the program of f for the space's shape with nq points per direction
std::string program(const mf_source f, const mf_space s, int nq, int cpb)
{
  char buf[512];
  snprintf(buf, sizeof buf, "#define MF_DIM %d\n#define MF_N1 %d\n#define MF_NQ %d\n#define MF_NC %d\n#define MF_CPB %d\n",
           s->dim, s->n1, nq, f->ncomp, cpb);
  std::string t = buf;
  t += "#include \"physics/mf_physics.h\"\n#include \"hanging/mf_hanging.h\"\n#line 1 \"field source\"\n";
  t += f->text;
  t += "\n#line 1 \"mfree glue\"\n__device__ inline void mfree_source(int dim, const double *x, const double *k, double *v)\n{\n  ";
  t += f->name;
  t += "(dim, x, k, v);\n}\n#include \"cuda/source_jit.cuh\"\n";
  return t;
}

// what one launch needs: the kernel, the rule's matrices and the constants on the device
struct run {
  cudaKernel_t k = nullptr;
  double *B = nullptr, *D = nullptr, *qw = nullptr, *kc = nullptr;
  unsigned long long *flag = nullptr;
  int nq = 0, cpb = 1, nqp = 1;
  ~run()
  {
    cudaFree(B);
    cudaFree(D);
    cudaFree(qw);
    cudaFree(kc);
    cudaFree(flag);
  }
};

// the kernel `name` of f's program for rule quad (MF_QUAD_GAUSS: q = p + 1, GAUSS_P2: q = p + 2)
int prepare(mf_source f, const mf_space s, mf_quadrature quad, const char *name, run *r)
{
  mf_context ctx = f->ctx;
  mf_basis1d b;
  MF_CALL(mf_basis1d_setup(s->degree, quad, &b));
  r->nq = b.nq;
  r->nqp = s->dim == 2 ? b.nq * b.nq : b.nq * b.nq * b.nq;
  r->cpb = cells_per_block(r->nqp);
  cudaLibrary_t lib = nullptr;
  MF_CALL(mf_cuda_jit_library(ctx, program(f, s, b.nq, r->cpb), &lib));
  cudaError_t e = cudaLibraryGetKernel(&r->k, lib, name);
  if (e != cudaSuccess) return cuda_fail(ctx, e, name);
  MF_CALL(upload(ctx, &r->B, b.B, (size_t)b.nq * s->n1, "the basis"));
  MF_CALL(upload(ctx, &r->D, b.D, (size_t)b.nq * b.nq, "the derivative matrix"));
  MF_CALL(upload(ctx, &r->qw, b.qwts, (size_t)b.nq, "the weights"));
  MF_CALL(upload(ctx, &r->kc, f->k, (size_t)MF_PHYS_MAX_CONSTANTS, "the constants"));
  e = cudaMalloc((void **)&r->flag, sizeof *r->flag);
  if (e == cudaSuccess) e = cudaMemset(r->flag, 0xff, sizeof *r->flag);
  if (e != cudaSuccess) return cuda_fail(ctx, e, "a flag");
  return 0;
}

int launch(mf_context ctx, const run &r, unsigned grid, unsigned block, size_t shmem, void **args, const char *what)
{
  if (!grid) return 0;
  cudaError_t e = cudaLaunchKernel((const void *)r.k, dim3(grid), dim3(block), args, shmem, 0);
  if (e == cudaSuccess) e = cudaGetLastError();
  if (e != cudaSuccess) return cuda_fail(ctx, e, what);
  return 0;
}

// the flagged item (-1: none)
long long flagged(mf_context ctx, const run &r, int *ierr)
{
  unsigned long long v = ~0ull;
  cudaError_t e = cudaMemcpy(&v, r.flag, sizeof v, cudaMemcpyDeviceToHost);
  if (e != cudaSuccess) *ierr = cuda_fail(ctx, e, "reading the source's checks");
  return v == ~0ull ? -1 : (long long)v;
}

// the shared memory of the cell kernels (jit_cell.cuh's block)
size_t cell_shmem(const mf_space s, const run &r)
{
  const int nq = r.nq, n1 = s->n1;
  return sizeof(double) * ((size_t)nq * n1 + (size_t)nq * nq + 2 * n1 * n1 + nq + (size_t)r.cpb * 2 * r.nqp);
}

// "x = (...)" of quadrature point q of cell e (the host's geometry), for messages
void point_text(const mf_space s, mf_quadrature quad, int e, int q, char *buf, size_t n)
{
  mf_basis1d b;
  mf_geom_work gw;
  double xq[3 * MF_MAX_NQ * MF_MAX_NQ * MF_MAX_NQ];
  snprintf(buf, n, "(unknown)");
  if (mf_basis1d_setup(s->degree, quad, &b) || mf_space_host_coords(s) || mf_geom_work_init(s, &b, &gw)) return;
  mf_cell_points(s, &b, e, &gw, xq);
  mf_geom_work_free(&gw);
  int len = snprintf(buf, n, "(");
  for (int k = 0; k < s->dim; k++) len += snprintf(buf + len, n - (size_t)len, k ? ", %g" : "%g", xq[q * s->dim + k]);
  snprintf(buf + len, n - (size_t)len, ")");
}

int point_error(mf_source f, const mf_space s, mf_quadrature quad, long long at)
{
  char xs[96];
  const int e = (int)(at >> 20), q = (int)(at & 0xfffff);
  point_text(s, quad, e, q, xs, sizeof xs);
  return mf_error_set(f->ctx, MF_ERR_ARGUMENT, __FILE__, __LINE__, __func__,
                      "source '%s' gave a value that is not finite at quadrature point %d of cell %d (rank %d), x = %s: "
                      "the function must give finite values",
                      f->name, q, e, f->ctx->rank, xs);
}

} // namespace

extern "C" int mf_cuda_source_nodes(mf_source f, mf_vector v, int boundary)
{
  const mf_space s = v->space;
  if (!s->fam->device_cells) return mf_cuda_simplex_source_nodes(f, v, boundary);
  const mf_cuda_space *ds = (const mf_cuda_space *)s->dev;
  run r;
  MF_CALL(prepare(f, s, MF_QUAD_GAUSS, "mfree_source_nodes", &r));
  const double *coords = ds->coords;
  const unsigned char *bc = ds->bc;
  int cstride = s->ncomp * s->dim, nnodes = s->nlocal / s->ncomp;
  double *vd = v->data;
  void *args[] = {(void *)&coords, (void *)&cstride, (void *)&nnodes, (void *)&bc,
                  (void *)&boundary, (void *)&r.kc,  (void *)&vd,     (void *)&r.flag};
  int ierr = launch(f->ctx, r, (unsigned)((nnodes + 255) / 256), 256, 0, args, "source at the nodes");
  const long long bad = ierr ? -1 : flagged(f->ctx, r, &ierr);
  if (!ierr && bad >= 0) {
    double x[3] = {NAN, NAN, NAN}; /* shown as nan where the copy fails */
    if (cudaMemcpy(x, coords + (size_t)bad * cstride, sizeof(double) * s->dim, cudaMemcpyDeviceToHost) != cudaSuccess)
      cudaGetLastError();
    char z[40] = ""; /* the third coordinate in 3D */
    if (s->dim == 3) snprintf(z, sizeof z, ", %g", x[2]);
    ierr = mf_error_set(f->ctx, MF_ERR_ARGUMENT, __FILE__, __LINE__, __func__,
                        "source '%s' gave a value that is not finite at DoF %lld (rank %d), x = (%g, %g%s)",
                        f->name, bad * s->ncomp, f->ctx->rank, x[0], x[1], z);
  }
  return ierr;
}

extern "C" int mf_cuda_source_rhs(mf_source f, mf_vector b)
{
  const mf_space s = b->space;
  if (!s->fam->device_cells) return mf_cuda_simplex_source_rhs(f, b);
  const mf_cuda_space *ds = (const mf_cuda_space *)s->dev;
  MF_CALL(b->ops.set_value(b, 0.0));
  run r;
  MF_CALL(prepare(f, s, MF_QUAD_GAUSS, "mfree_source_rhs", &r));
  const int *cells = ds->cell_nodes;
  const short *mask = (const short *)ds->mask;
  const double *P = ds->mask ? ds->P : NULL, *coords = ds->coords;
  int cstride = s->ncomp * s->dim, ncells = s->ncells;
  double *bd = b->data;
  void *args[] = {(void *)&cells, (void *)&mask, (void *)&coords, (void *)&cstride, (void *)&r.B,    (void *)&r.D,
                  (void *)&P,     (void *)&r.qw, (void *)&r.kc,   (void *)&ncells,  (void *)&bd,     (void *)&r.flag};
  int ierr = launch(f->ctx, r, (unsigned)((ncells + r.cpb - 1) / r.cpb), (unsigned)(r.cpb * r.nqp), cell_shmem(s, r),
                    args, "source right-hand side");
  const long long bad = ierr ? -1 : flagged(f->ctx, r, &ierr);
  if (!ierr && bad >= 0) ierr = point_error(f, s, MF_QUAD_GAUSS, bad);
  return ierr;
}

extern "C" int mf_cuda_source_l2(mf_source f, mf_vector uh, double *sum)
{
  const mf_space s = uh->space;
  if (!s->fam->device_cells) return mf_cuda_simplex_source_l2(f, uh, sum);
  const mf_cuda_space *ds = (const mf_cuda_space *)s->dev;
  mf_context ctx = f->ctx;
  *sum = 0.0;
  run r;
  MF_CALL(prepare(f, s, MF_QUAD_GAUSS_P2, "mfree_source_l2", &r));
  double *cellsum = nullptr;
  cudaError_t e = cudaMalloc((void **)&cellsum, sizeof(double) * (s->ncells ? s->ncells : 1));
  if (e != cudaSuccess) return cuda_fail(ctx, e, "the cells' sums");
  const int *cells = ds->cell_nodes;
  const short *mask = (const short *)ds->mask;
  const double *P = ds->mask ? ds->P : NULL, *coords = ds->coords, *ud = uh->data;
  int cstride = s->ncomp * s->dim, ncells = s->ncells;
  void *args[] = {(void *)&cells, (void *)&mask,  (void *)&coords, (void *)&cstride, (void *)&r.B,
                  (void *)&r.D,   (void *)&P,     (void *)&r.qw,   (void *)&r.kc,    (void *)&ncells,
                  (void *)&ud,    (void *)&cellsum, (void *)&r.flag};
  int ierr = launch(ctx, r, (unsigned)((ncells + r.cpb - 1) / r.cpb), (unsigned)(r.cpb * r.nqp), cell_shmem(s, r), args,
                    "source L2 error");
  const long long bad = ierr ? -1 : flagged(ctx, r, &ierr);
  if (!ierr && bad >= 0) ierr = point_error(f, s, MF_QUAD_GAUSS_P2, bad);
  if (ierr) {
    cudaFree(cellsum);
    return ierr;
  }
  return mf_jit::cell_sums(ctx, cellsum, s->ncells, sum); // in cell order: deterministic
}
