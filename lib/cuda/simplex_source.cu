// simplex_source.cu -- pointwise fields given as source on simplex spaces, on the device (called by the
// backend table's source entries of lib/cuda/source.cu for spaces whose family keeps its cells itself):
// the user's function compiled at run time by NVRTC with the kernels of simplex_source_jit.cuh for one
// space shape (cached as the physics are: mf_cuda_jit.h), then the nodes' values, the right-hand side's
// cell integrals and the L2 error's cell sums made there. The mesh's cells and vertices and the cells' nodes
// are the device copies the space's operators share (mf_cuda_share: copied for the call where none is held),
// the nodes' points copied for the call; all released after it (the set-up's data; nothing per point crosses;
// the free memory is checked first, and the copies are counted in the context's device memory figures). The right-hand side adds the cells' parts with atomics: the same to rounding, not bit
// for bit, from run to run. The CPU twins: lib/simplex/space_simplex.c and lib/vector.c, with the same source compiled by
// the system C compiler (lib/physics/source_fields.c).
#include "mf_cuda_common.cuh"
#include "mf_cuda_jit.h"
#include "physics/mf_source.h"
extern "C" { /* the simplex headers declare C functions without a guard of their own */
#include "simplex/mf_simplex_space.h"
}

#include <math.h>
#include <stdio.h>
#include <string>

namespace {

using mf_jit::cuda_fail;
using mf_jit::first_flag;
using mf_jit::upload;

const unsigned threads = 128;

// what one call needs on the device: the kernel, the rule's tables, the constants, a flag, the mesh
struct run {
  cudaKernel_t k = nullptr;
  double *B = nullptr, *qp = nullptr, *qw = nullptr, *kc = nullptr, *coords = nullptr, *nodes = nullptr;
  int *verts = nullptr, *cells = nullptr;
  unsigned long long *flag = nullptr;
  mf_context ctx = nullptr; // where the mesh's and the cells' copies are shared ones (mf_cuda_share)
  ~run()
  {
    cudaFree(B);
    cudaFree(qp);
    cudaFree(qw);
    cudaFree(kc);
    if (ctx) { // shared (the nodes' points: counted): freed with their last holder
      mf_cuda_free(ctx, nodes);
      mf_cuda_free(ctx, coords);
      mf_cuda_free(ctx, verts);
      mf_cuda_free(ctx, cells);
    }
    cudaFree(flag);
  }
};

const mf_simplex_space *sx(const mf_space s) { return (const mf_simplex_space *)s->fdata; }

std::string program(const mf_source f, const mf_space s, const mf_simplex_basis *b)
{
  char buf[256];
  snprintf(buf, sizeof buf, "#define MF_DIM %d\n#define MF_NC %d\n#define MF_NN %d\n#define MF_NQS %d\n", s->dim,
           f->ncomp, b->nnodes, b->nq);
  std::string t = buf;
  t += "#include \"physics/mf_physics.h\"\n#line 1 \"field source\"\n";
  t += f->text;
  t += "\n#line 1 \"mfree glue\"\n__device__ inline void mfree_source(int dim, const double *x, const double *k, double *v)\n{\n  ";
  t += f->name;
  t += "(dim, x, k, v);\n}\n#include \"cuda/simplex_source_jit.cuh\"\n";
  return t;
}

// the kernel `name` for the rule of b, the constants and a flag; with cells, the rule's tables and the
// space's cells (vertices, their points, the cells' nodes)
int prepare(mf_source f, const mf_space s, const mf_simplex_basis *b, const char *name, int cells, run *r)
{
  mf_context ctx = f->ctx;
  cudaLibrary_t lib = nullptr;
  MF_CALL(mf_cuda_jit_library(ctx, program(f, s, b), &lib));
  MF_CALL(mf_jit::kernel(ctx, lib, name, &r->k));
  MF_CALL(upload(ctx, &r->kc, f->k, (size_t)MF_PHYS_MAX_CONSTANTS, "the constants"));
  cudaError_t e = cudaMalloc((void **)&r->flag, sizeof *r->flag);
  if (e == cudaSuccess) e = cudaMemset(r->flag, 0xff, sizeof *r->flag);
  if (e != cudaSuccess) return cuda_fail(ctx, e, "a flag");
  if (!cells) return 0;
  const mf_simplex_mesh *m = mf_simplex_space_mesh(s);
  const int dim = s->dim, N = b->nnodes, nq = b->nq;
  MF_CALL(mf_cuda_require(ctx, sizeof(double) * ((size_t)m->nv * 3 + (size_t)nq * (N + dim + 1)) +
                                   sizeof(int) * (size_t)m->ncells * (dim + 1 + N),
                          "the source's copies of the cells and vertices"));
  MF_CALL(upload(ctx, &r->B, b->B, (size_t)nq * N, "the simplex basis"));
  MF_CALL(upload(ctx, &r->qp, b->qpts, (size_t)nq * dim, "the simplex rule"));
  MF_CALL(upload(ctx, &r->qw, b->qwts, (size_t)nq, "the simplex rule"));
  // the copies the space's operators hold already, else made for the call (mf_cuda_share)
  r->ctx = ctx;
  MF_CALL(mf_cuda_share(ctx, (void **)&r->verts, m->cells, sizeof(int) * (size_t)m->ncells * (dim + 1),
                        "the simplex mesh's cells"));
  MF_CALL(mf_cuda_share(ctx, (void **)&r->coords, m->coords, sizeof(double) * (size_t)m->nv * 3,
                        "the simplex mesh's vertices"));
  MF_CALL(mf_cuda_share(ctx, (void **)&r->cells, s->cell_nodes, sizeof(int) * (size_t)s->ncells * N, "the cells' nodes"));
  return 0;
}

int launch(mf_context ctx, const run &r, long long n, void **args, const char *what)
{
  return mf_jit::launch(ctx, r.k, (unsigned)((n + threads - 1) / threads), threads, 0, args, what);
}

int point_error(mf_source f, const mf_space s, const mf_simplex_basis *b, long long at)
{
  char xs[96];
  const int e = (int)(at >> 20), q = (int)(at & 0xfffff);
  mf_simplex_point_text(mf_simplex_space_mesh(s), b, e, q, xs, sizeof xs);
  return mf_error_set(f->ctx, MF_ERR_ARGUMENT, __FILE__, __LINE__, __func__,
                      "source '%s' gave a value that is not finite at quadrature point %d of cell %d (rank %d), x = %s: "
                      "the function must give finite values",
                      f->name, q, e, f->ctx->rank, xs);
}

} // namespace

extern "C" int mf_cuda_simplex_source_nodes(mf_source f, mf_vector v, int boundary)
{
  const mf_space s = v->space;
  const mf_cuda_space *ds = (const mf_cuda_space *)s->dev;
  mf_context ctx = f->ctx;
  run r;
  MF_CALL(prepare(f, s, &sx(s)->basis, "mfree_source_nodes", 0, &r));
  MF_CALL(mf_cuda_require(ctx, sizeof(double) * (size_t)s->nlocal * s->dim, "the source's copy of the nodes' points"));
  MF_CALL(mf_cuda_upload(ctx, (void **)&r.nodes, s->coords, sizeof(double) * (size_t)s->nlocal * s->dim,
                         "the nodes' points")); // through the pinned buffers
  r.ctx = ctx;
  const unsigned char *bc = ds->bc;
  int cstride = s->ncomp * s->dim, nnodes = s->nlocal / s->ncomp;
  double *vd = v->data;
  void *args[] = {(void *)&r.nodes, (void *)&cstride, (void *)&nnodes, (void *)&bc,
                  (void *)&boundary, (void *)&r.kc,   (void *)&vd,     (void *)&r.flag};
  int ierr = launch(ctx, r, nnodes, args, "source at the nodes");
  const long long bad = ierr ? -1 : first_flag(ctx, r.flag, &ierr);
  if (!ierr && bad >= 0) {
    const double *x = s->coords + (size_t)bad * cstride;
    char z[40] = ""; /* the third coordinate in 3D */
    if (s->dim == 3) snprintf(z, sizeof z, ", %g", x[2]);
    ierr = mf_error_set(ctx, MF_ERR_ARGUMENT, __FILE__, __LINE__, __func__,
                        "source '%s' gave a value that is not finite at DoF %lld (rank %d), x = (%g, %g%s)",
                        f->name, bad * s->ncomp, ctx->rank, x[0], x[1], z);
  }
  return ierr;
}

extern "C" int mf_cuda_simplex_source_rhs(mf_source f, mf_vector b)
{
  const mf_space s = b->space;
  mf_context ctx = f->ctx;
  const mf_simplex_basis *basis = &sx(s)->basis;
  MF_CALL(b->ops.set_value(b, 0.0));
  run r;
  MF_CALL(prepare(f, s, basis, "mfree_sx_source_rhs", 1, &r));
  int ncells = s->ncells;
  double *bd = b->data;
  void *args[] = {(void *)&r.verts, (void *)&r.coords, (void *)&r.cells, (void *)&r.B,  (void *)&r.qp,
                  (void *)&r.qw,    (void *)&r.kc,     (void *)&ncells,  (void *)&bd,   (void *)&r.flag};
  int ierr = launch(ctx, r, ncells, args, "source right-hand side (simplex)");
  const long long bad = ierr ? -1 : first_flag(ctx, r.flag, &ierr);
  if (!ierr && bad >= 0) ierr = point_error(f, s, basis, bad);
  return ierr;
}

extern "C" int mf_cuda_simplex_source_l2(mf_source f, mf_vector uh, double *sum)
{
  const mf_space s = uh->space;
  mf_context ctx = f->ctx;
  const mf_simplex_basis *basis = &sx(s)->basis_l2;
  *sum = 0.0;
  run r;
  MF_CALL(prepare(f, s, basis, "mfree_sx_source_l2", 1, &r));
  double *cellsum = nullptr;
  cudaError_t e = cudaMalloc((void **)&cellsum, sizeof(double) * (s->ncells ? s->ncells : 1));
  if (e != cudaSuccess) return cuda_fail(ctx, e, "the cells' sums");
  int ncells = s->ncells;
  const double *ud = uh->data;
  void *args[] = {(void *)&r.verts, (void *)&r.coords, (void *)&r.cells, (void *)&r.B,      (void *)&r.qp,   (void *)&r.qw,
                  (void *)&r.kc,    (void *)&ncells,   (void *)&ud,      (void *)&cellsum, (void *)&r.flag};
  int ierr = launch(ctx, r, ncells, args, "source L2 error (simplex)");
  const long long bad = ierr ? -1 : first_flag(ctx, r.flag, &ierr);
  if (!ierr && bad >= 0) ierr = point_error(f, s, basis, bad);
  if (ierr) {
    cudaFree(cellsum);
    return ierr;
  }
  return mf_jit::cell_sums(ctx, cellsum, s->ncells, sum); // in cell order: deterministic
}
