// physics_simplex.cu -- users' physics on simplices on the device (the backend table's physics.simplex_*):
// the source of a physics compiled at run time by NVRTC together with the kernels of
// simplex_phys_jit.cuh for one operator shape (dim, nodes, points, components, the functions present;
// cached as physics.cu's are), the stored data made on the device in the full layout, then the product,
// diagonal, residual and assembly there. The CPU twins are lib/simplex/physics_simplex.c's.
#include "mf_cuda_common.cuh"
extern "C" { /* the simplex headers declare C functions without a guard of their own */
#include "simplex/mf_simplex_space.h"
}
#include "simplex/mf_simplex_physics.h"
#include "assembled/assembly_impl.h"
#include "mf_cuda_jit.h"
#include "mf_simplex_cuda.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <string>
#include <vector>

namespace {

using mf_jit::cuda_fail;
using mf_jit::first_flag;
using mf_jit::kernel;
using mf_jit::launch;
using mf_jit::new_flag;
using mf_jit::upload;

const unsigned threads = 128; // per block: one thread per cell (or per point of the set-up)

struct sx_dev {
  cudaKernel_t setup, apply, apply_f, diagonal, residual, assemble, coef, varies; // apply_f: the float copy's
  cudaKernel_t state, apply_state, diagonal_state, assemble_state; // at a state (mf_operator_set_state)
  double *sv; // the state's local values where the operator is fused (nothing stored), else NULL
  int sv_zero; // sv is the state u = 0 (the operator as made: its stored data can be made, for a float copy)
  bool state_lib; // the kernels come from the library with the state's (MF_STATE)
  cudaKernel_t facets; // the facets' terms (every term given as source), else NULL
  int *bf_cell, *bf_face, *bf_term; // the boundary facet entries: cell, local facet, term
  double *fx, *fphi, *fw;           // the facet rule in each local facet's reference coordinates, the basis there
  // the built-in fit: the built-in operator's device form (its c(x_q) made here from g3) and its host
  // description; NULL where the physics keeps its own data (qd)
  mf_simplex_cuda_op builtin;
  mf_simplex_op sop;
  int *verts, *cells;                   // the mesh's cells (dim + 1 vertices each), the cells' nodes
  double *coords, *B, *G, *qp, *qw, *k; // vertices (3 each), the basis at the points, the constants
  double *qd;                           // ncells x nq x lay.n (full layout)
  float *qdf;                           // the float copy's: a double operator's qd rounded, else NULL
  mf_context ctx;
};

sx_dev *dev_of(mf_operator op) { return (sx_dev *)mf_sxphys(op)->dev; }
// the cells the operator works on: this rank's (several ranks) or the mesh's
const mf_simplex_mesh *mesh_of(mf_operator op) { return mf_simplex_space_mesh(op->space); }
unsigned blocks(long long n) { return (unsigned)((n + threads - 1) / threads); }

// whether the facets' terms run on the device: there are some, every term given as source
bool facets_on_device(const mf_simplex_phys *h) { return h->nbf && mf_jit::boundary_on_device(&h->ph); }

std::string program(const mf_simplex_phys *h, const mf_space s, bool single, bool state)
{
  const mf_phys *ph = &h->ph;
  char buf[512];
  snprintf(buf, sizeof buf,
           "%s#define MF_DIM %d\n#define MF_NC %d\n#define MF_NN %d\n#define MF_NQS %d\n#define MF_HAS0 %d\n"
           "#define MF_HAS1 %d\n#define MF_HAS2 %d\n#define MF_HAS3 %d\n#define MF_HASF0 %d\n#define MF_HASF1 %d\n"
           "#define MF_NS_FULL %d\n#include \"physics/mf_physics.h\"\n",
           single ? "#define MF_FLOAT_COPY 1\n" : "", s->dim, s->ncomp, h->basis.nnodes, h->basis.nq, h->lay.has[0], h->lay.has[1], h->lay.has[2], h->lay.has[3],
           ph->src_has[0], ph->src_has[1], h->lay.n);
  std::string t = buf;
  if (state) t += "#define MF_STATE 1\n";
  // the fused product at a state: MFREE_PHYSICS_SX_MINB=b bounds its registers for b blocks of 128 threads per
  // multiprocessor (measurements; unset or invalid: no bound)
  const char *mb = getenv("MFREE_PHYSICS_SX_MINB");
  const int minb = mb ? atoi(mb) : 0;
  if (state && minb >= 1 && minb <= 16) {
    snprintf(buf, sizeof buf, "#define MF_SX_MINB %d\n", minb);
    t += buf;
  }
  t += mf_jit::physics_glue(ph);
  if (!single && facets_on_device(h)) { // the facets' kernel and the glue of the boundary terms
    snprintf(buf, sizeof buf, "#define MF_FACETS 1\n#define MF_FQ %d\n", h->fq);
    t += buf;
    t += mf_jit::boundary_glue(ph);
  }
  t += "#include \"cuda/simplex_phys_jit.cuh\"\n";
  return t;
}

void free_dev(sx_dev *d)
{
  if (!d) return;
  mf_simplex_cuda_destroy(&d->builtin);
  mf_simplex_op_destroy(&d->sop);
  mf_cuda_free(d->ctx, d->verts); // shared copies: freed with their last holder
  mf_cuda_free(d->ctx, d->cells);
  mf_cuda_free(d->ctx, d->coords);
  cudaFree(d->B);
  cudaFree(d->G);
  cudaFree(d->qp);
  cudaFree(d->qw);
  cudaFree(d->k);
  mf_cuda_free(d->ctx, d->qd);
  mf_cuda_free(d->ctx, d->qdf);
  mf_cuda_free(d->ctx, d->sv);
  cudaFree(d->bf_cell);
  cudaFree(d->bf_face);
  cudaFree(d->bf_term);
  cudaFree(d->fx);
  cudaFree(d->fphi);
  cudaFree(d->fw);
  delete d;
}

int destroy_op(mf_operator op)
{
  free_dev(dev_of(op));
  mf_sxphys(op)->dev = NULL;
  return 0;
}

int not_finite(mf_operator op, long long f, const char *which)
{
  char xs[96];
  const int e = (int)(f >> 20), q = (int)(f & 0xfffff);
  mf_simplex_point_text(mesh_of(op), &mf_sxphys(op)->basis, e, q, xs, sizeof xs);
  return mf_error_set(op->ctx, MF_ERR_ARGUMENT, __FILE__, __LINE__, __func__,
                      "physics '%s': %s gave a value that is not finite at quadrature point %d of cell %d, x = %s: "
                      "the pointwise functions must give finite values",
                      mf_sxphys(op)->ph.name, which, q, e, xs);
}

// the cells' nodes on the device, copied at the first use of the physics' own kernels: a physics on the built-in
// kernels (try_builtin) applies through the built-in operator, which holds its own, and copies them only for its
// residual or an assembly
int cells_on_device(mf_operator op, sx_dev *d)
{
  if (d->cells) return 0;
  const mf_space s = op->space;
  return mf_cuda_share(op->ctx, (void **)&d->cells, s->cell_nodes,
                       sizeof(int) * (size_t)s->ncells * mf_sxphys(op)->basis.nnodes, "the cells' nodes");
}

int apply_op(mf_operator op, mf_vector x, mf_vector y)
{
  sx_dev *d = dev_of(op);
  MF_CALL(cells_on_device(op, d));
  const mf_space s = op->space;
  const int single = op->prec == MF_PRECISION_FLOAT;
  const void *xd = single ? (const void *)x->sdata : (const void *)x->data;
  void *yd = single ? (void *)y->sdata : (void *)y->data;
  const void *qd = single ? (const void *)d->qdf : (const void *)d->qd;
  int ncells = s->ncells;
  cudaError_t e = cudaMemset(yd, 0, (single ? sizeof(float) : sizeof(double)) * (size_t)s->nlocal);
  if (e != cudaSuccess) return cuda_fail(op->ctx, e, "zeroing the product");
  void *args[] = {(void *)&d->cells, (void *)&d->B, (void *)&d->G, (void *)&qd, (void *)&ncells, (void *)&xd,
                  (void *)&yd};
  return launch(op->ctx, single ? d->apply_f : d->apply, blocks(ncells), threads, 0, args, "simplex physics apply");
}

int diagonal_op(mf_operator op, mf_vector dv)
{
  sx_dev *d = dev_of(op);
  MF_CALL(cells_on_device(op, d));
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
  MF_CALL(cells_on_device(op, d));
  unsigned long long *flag = NULL;
  MF_CALL(new_flag(ctx, &flag, "a flag of the physics' checks"));
  void *args[] = {(void *)&d->verts, (void *)&d->coords, (void *)&d->cells, (void *)&d->B,  (void *)&d->G,
                  (void *)&d->qp,    (void *)&d->qw,     (void *)&d->k,     (void *)&ncells, (void *)&ud,
                  (void *)&rd,       (void *)&flag};
  int ierr = launch(ctx, d->residual, blocks(ncells), threads, 0, args, "simplex physics residual");
  const long long f = ierr ? -1 : first_flag(ctx, flag, &ierr);
  cudaFree(flag);
  if (!ierr && f >= 0) ierr = not_finite(op, f, "f0 or f1");
  return ierr;
}

// The facets' terms of mode (0 the operator's, 1 the residual's, 2 the diagonal's) added into y: mfree_sx_facets
int facets_add(mf_operator op, int mode, const mf_vector x, mf_vector y)
{
  mf_context ctx = op->ctx;
  sx_dev *d = dev_of(op);
  const mf_simplex_phys *h = mf_sxphys(op);
  if (mode != 1 && !mf_simplex_phys_faces_has_operator(h)) return 0;
  unsigned long long *flag = NULL; // the residual's check alone (no allocation in a product's hot path)
  if (mode == 1) MF_CALL(new_flag(ctx, &flag, "a flag of the physics' checks"));
  const double *xd = x ? x->data : NULL;
  double *yd = y->data;
  int nbf = h->nbf;
  void *args[] = {(void *)&d->verts, (void *)&d->coords, (void *)&d->cells, (void *)&d->bf_cell, (void *)&d->bf_face,
                  (void *)&d->bf_term, (void *)&nbf,     (void *)&d->fx,    (void *)&d->fphi,    (void *)&d->fw,
                  (void *)&d->k,       (void *)&mode,    (void *)&xd,       (void *)&yd,         (void *)&flag};
  int ierr = launch(ctx, d->facets, blocks(nbf), threads, 0, args, "simplex physics facets");
  const long long f = ierr || mode != 1 ? -1 : first_flag(ctx, flag, &ierr);
  if (flag) cudaFree(flag);
  if (!ierr && f >= 0) {
    char xs[96];
    double xq[3] = {0, 0, 0};
    const int k = (int)(f >> 20), q = (int)(f & 0xfffff);
    int e = 0; // the entry's cell
    while (h->cell_bf_off[e + 1] <= k) e++;
    mf_simplex_phys_facet_point(op, e, h->bf_face[k], q, xq); // the point's place, for the message
    mf_point_text(op->space->dim, xq, xs, sizeof xs);
    ierr = mf_error_set(ctx, MF_ERR_ARGUMENT, __FILE__, __LINE__, __func__,
                        "physics '%s': a boundary f0 gave a value that is not finite at facet point %d of cell %d, x = "
                        "%s (the facets' kernel on the device): the boundary functions must give finite values",
                        h->ph.name, q, e, xs);
  }
  return ierr;
}
int apply_facets_op(mf_operator op, mf_vector x, mf_vector y)
{
  MF_CALL(apply_op(op, x, y));
  return facets_add(op, 0, x, y);
}
int diagonal_facets_op(mf_operator op, mf_vector dv)
{
  MF_CALL(diagonal_op(op, dv));
  return facets_add(op, 2, NULL, dv);
}
int residual_facets_op(mf_operator op, mf_vector u, mf_vector r)
{
  MF_CALL(residual_op(op, u, r));
  return facets_add(op, 1, u, r);
}

// the facets' lists and tables on the device, their kernel, and op's steps that add their terms
int facets_setup(mf_operator op, sx_dev *d, cudaLibrary_t lib)
{
  mf_context ctx = op->ctx;
  mf_simplex_phys *h = mf_sxphys(op);
  const int dim = op->space->dim, N = h->basis.nnodes, ncells = op->space->ncells;
  MF_CALL(kernel(ctx, lib, "mfree_sx_facets", &d->facets));
  std::vector<int> cell((size_t)h->nbf + 1);
  for (int e = 0; e < ncells; e++)
    for (int k = h->cell_bf_off[e]; k < h->cell_bf_off[e + 1]; k++) cell[(size_t)k] = e;
  MF_CALL(upload(ctx, &d->bf_cell, cell.data(), (size_t)h->nbf, "the boundary facets' cells"));
  MF_CALL(upload(ctx, &d->bf_face, h->bf_face, (size_t)h->nbf, "the boundary facets"));
  MF_CALL(upload(ctx, &d->bf_term, h->bf_term, (size_t)h->nbf, "the boundary facets' terms"));
  MF_CALL(upload(ctx, &d->fx, h->fx, (size_t)(dim + 1) * h->fq * dim, "the facet rule"));
  MF_CALL(upload(ctx, &d->fphi, h->fphi, (size_t)(dim + 1) * h->fq * N, "the facet rule's basis"));
  MF_CALL(upload(ctx, &d->fw, h->fw, (size_t)h->fq, "the facet rule"));
  MF_CALL(cells_on_device(op, d));
  op->ops.apply = apply_facets_op;
  op->ops.diagonal = diagonal_facets_op;
  op->ops.residual = residual_facets_op;
  h->faces_device = 1;
  return 0;
}

// the kernels and tables on the device; single: the float copy's product alone (a library of its own), else
// every other kernel and the mesh (its cells' vertices and coordinates)
int make_dev(mf_operator op, sx_dev *d, bool single, bool state = false)
{
  mf_context ctx = op->ctx;
  const mf_space s = op->space;
  const mf_simplex_phys *h = mf_sxphys(op);
  const mf_simplex_mesh *m = mesh_of(op);
  const mf_simplex_basis *b = &h->basis;
  const int dim = s->dim, N = b->nnodes, nq = b->nq;
  cudaLibrary_t lib = NULL;
  MF_CALL(mf_cuda_jit_library(ctx, program(h, s, single, state), &lib));
  if (single) MF_CALL(kernel(ctx, lib, "mfree_sx_apply_f", &d->apply_f));
  else if (state) { // the state's kernels (the others again, from the same library)
    MF_CALL(kernel(ctx, lib, "mfree_sx_state", &d->state));
    MF_CALL(kernel(ctx, lib, "mfree_sx_apply_state", &d->apply_state));
    MF_CALL(kernel(ctx, lib, "mfree_sx_diagonal_state", &d->diagonal_state));
    MF_CALL(kernel(ctx, lib, "mfree_sx_assemble_state", &d->assemble_state));
    d->state_lib = true;
    return 0;
  } else {
    MF_CALL(kernel(ctx, lib, "mfree_sx_setup", &d->setup));
    MF_CALL(kernel(ctx, lib, "mfree_sx_apply", &d->apply));
    MF_CALL(kernel(ctx, lib, "mfree_sx_diagonal", &d->diagonal));
    MF_CALL(kernel(ctx, lib, "mfree_sx_residual", &d->residual));
    MF_CALL(kernel(ctx, lib, "mfree_sx_assemble", &d->assemble));
    MF_CALL(kernel(ctx, lib, "mfree_sx_coef", &d->coef));
    MF_CALL(kernel(ctx, lib, "mfree_sx_varies", &d->varies));
    if (facets_on_device(h)) MF_CALL(facets_setup(op, d, lib));
    // the copies the space's operators, sources and transfers share (mf_cuda_share)
    MF_CALL(mf_cuda_share(ctx, (void **)&d->verts, m->cells, sizeof(int) * (size_t)m->ncells * (dim + 1),
                          "the simplex mesh's cells"));
    MF_CALL(mf_cuda_share(ctx, (void **)&d->coords, m->coords, sizeof(double) * (size_t)m->nv * 3,
                          "the simplex mesh's vertices"));
  }
  MF_CALL(upload(ctx, &d->B, b->B, (size_t)nq * N, "the simplex basis"));
  MF_CALL(upload(ctx, &d->G, b->G, (size_t)nq * N * dim, "the simplex basis"));
  MF_CALL(upload(ctx, &d->qp, b->qpts, (size_t)nq * dim, "the simplex rule"));
  MF_CALL(upload(ctx, &d->qw, b->qwts, (size_t)nq, "the simplex rule"));
  MF_CALL(upload(ctx, &d->k, h->ph.k, (size_t)h->ph.nconst, "the physics' constants"));
  return 0;
}

// The stored data: the g-functions at every point in the full layout, made on the device (phase "geometry");
// a degenerate cell or a value that is not finite refused, naming the point.
int make_qd(mf_operator op, sx_dev *d)
{
  mf_context ctx = op->ctx;
  const mf_space s = op->space;
  const mf_simplex_phys *h = mf_sxphys(op);
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

int fit_apply(mf_operator op, mf_vector x, mf_vector y) { return mf_simplex_cuda_apply(dev_of(op)->builtin, x->data, y->data); }
int fit_diagonal(mf_operator op, mf_vector dv) { return mf_simplex_cuda_diagonal(dev_of(op)->builtin, dv->data); }

// The built-in fit: a physics of one component with g3 alone (no other g, no f, no facet terms), on the
// built-in kernels' degrees and rule, whose g3 is c(x) times the identity at every point, runs as the
// built-in Laplace operator with that c (not with MFREE_PHYSICS_BUILTIN=0): c(x_q) made on the device
// (phase "coefficient"), the built-in kernels (and the cost model's choice) from then on. *fits 0 where it
// does not apply (nothing made).
int try_builtin(mf_operator op, sx_dev *d, int *fits)
{
  mf_context ctx = op->ctx;
  const mf_space s = op->space;
  const mf_simplex_phys *h = mf_sxphys(op);
  *fits = 0;
  const int g3_alone = h->lay.has[3] && !h->lay.has[0] && !h->lay.has[1] && !h->lay.has[2];
  const char *env = getenv("MFREE_PHYSICS_BUILTIN"); // 0: the physics' own data always (as on hexes)
  if ((env && !strcmp(env, "0")) || s->ncomp != 1 || !g3_alone || h->ph.src_has[0] || h->ph.src_has[1] || h->nbf ||
      s->degree > MF_SIMPLEX_CUDA_MAX_DEGREE || h->basis.qdegree != 2 * s->degree)
    return 0;
  const size_t npts = (size_t)s->ncells * h->basis.nq;
  double *coefq = NULL;
  MF_CALL(mf_cuda_require(ctx, sizeof(double) * (npts + 1), "the coefficient per point"));
  MF_CALL(mf_cuda_malloc(ctx, (void **)&coefq, sizeof(double) * (npts + 1), "the coefficient per point"));
  unsigned long long *flags = NULL;
  cudaError_t e = cudaMalloc((void **)&flags, 3 * sizeof *flags);
  if (e == cudaSuccess) e = cudaMemset(flags, 0xff, 3 * sizeof *flags);
  if (e != cudaSuccess) {
    cudaFree(flags);
    mf_cuda_free(ctx, coefq);
    return cuda_fail(ctx, e, "the coefficient's checks");
  }
  const double t0 = mf_phase_begin(ctx);
  int ncells = s->ncells;
  unsigned long long *notiso = flags, *varies = flags + 1, *nonfinite = flags + 2;
  long long n = (long long)npts;
  void *args[] = {(void *)&d->verts, (void *)&d->coords, (void *)&d->qp,        (void *)&d->k,
                  (void *)&ncells,   (void *)&coefq,     (void *)&notiso,     (void *)&nonfinite};
  void *vargs[] = {(void *)&coefq, (void *)&n, (void *)&varies};
  int ierr = launch(ctx, d->coef, blocks(n), threads, 0, args, "simplex physics coefficient");
  if (!ierr) ierr = launch(ctx, d->varies, blocks(n), threads, 0, vargs, "simplex physics coefficient's check");
  const long long fi = ierr ? -1 : first_flag(ctx, notiso, &ierr), fv = ierr ? -1 : first_flag(ctx, varies, &ierr),
                  fn = ierr ? -1 : first_flag(ctx, nonfinite, &ierr);
  cudaFree(flags);
  double c0 = 1.0; // a constant c: its value (the built-in operator's weight b, no c per point)
  if (!ierr && fv < 0 && npts && (e = cudaMemcpy(&c0, coefq, sizeof c0, cudaMemcpyDeviceToHost)) != cudaSuccess)
    ierr = cuda_fail(ctx, e, "the constant coefficient");
  mf_phase_end(ctx, MF_PHASE_COEFFICIENT, t0);
  if (!ierr && fn >= 0) ierr = not_finite(op, fn, "a g-function");
  if (ierr || fi >= 0 || (fv < 0 && c0 == 0.0)) { // an error, or g3 not a multiple of the identity somewhere (or
    mf_cuda_free(ctx, coefq);                     // zero everywhere): the physics' own data
    return ierr;
  }
  if (fv < 0) { // constant: y = c0 K x, the built-ins' forms for c = 1 (the reference or gradient form)
    mf_cuda_free(ctx, coefq);
    coefq = NULL;
  }
  const mf_simplex_space *ss = (const mf_simplex_space *)s->fdata;
  ierr = mf_simplex_op_create(ctx, mf_simplex_space_mesh(s), &h->basis, &ss->dofs, 0.0, coefq ? 1.0 : c0, NULL, NULL,
                              &d->sop);
  const double t1 = mf_phase_begin(ctx);
  if (!ierr && coefq) ierr = mf_simplex_cuda_op_create_device_coef(ctx, &d->sop, coefq, 0, &d->builtin);
  else if (!ierr) ierr = mf_simplex_cuda_op_create(ctx, &d->sop, 0, &d->builtin);
  else mf_cuda_free(ctx, coefq);
  mf_phase_end(ctx, MF_PHASE_TRANSFER, t1);
  if (ierr) return ierr;
  op->ops.apply = fit_apply;
  op->ops.diagonal = fit_diagonal;
  *fits = 1;
  return 0;
}

// The fused operator at a state: the product and the diagonal with the g-functions evaluated at every point at
// the state's values d->sv
int state_args_launch(mf_operator op, cudaKernel_t k, const void *in, void *out, const char *what)
{
  sx_dev *d = dev_of(op);
  MF_CALL(cells_on_device(op, d));
  int ncells = op->space->ncells;
  void *args[] = {(void *)&d->verts, (void *)&d->coords, (void *)&d->cells, (void *)&d->B,  (void *)&d->G,
                  (void *)&d->qp,    (void *)&d->qw,     (void *)&d->k,     (void *)&ncells, (void *)&d->sv,
                  (void *)&in,       (void *)&out};
  void *dargs[] = {(void *)&d->verts, (void *)&d->coords, (void *)&d->cells, (void *)&d->B,  (void *)&d->G,
                   (void *)&d->qp,    (void *)&d->qw,     (void *)&d->k,     (void *)&ncells, (void *)&d->sv,
                   (void *)&out};
  return launch(op->ctx, k, blocks(ncells), threads, 0, in ? args : dargs, what);
}
int apply_state_op(mf_operator op, mf_vector x, mf_vector y)
{
  cudaError_t e = cudaMemset(y->data, 0, sizeof(double) * (size_t)op->space->nlocal);
  if (e != cudaSuccess) return cuda_fail(op->ctx, e, "zeroing the product");
  return state_args_launch(op, dev_of(op)->apply_state, x->data, y->data, "simplex physics apply at a state");
}
int diagonal_state_op(mf_operator op, mf_vector dv)
{
  cudaError_t e = cudaMemset(dv->data, 0, sizeof(double) * (size_t)op->space->nlocal);
  if (e != cudaSuccess) return cuda_fail(op->ctx, e, "zeroing the diagonal");
  return state_args_launch(op, dev_of(op)->diagonal_state, NULL, dv->data, "simplex physics diagonal at a state");
}

// The operator at the state u (mf_operator_set_state on the device): the g-functions at (u, grad u) of every point,
// stored in the full layout where it holds no more entries per point than the geometry would (dim^2 + 1 + dim) and
// fits the device, else fused: the state's values kept (one vector) and the g-functions evaluated at every
// application (MFREE_PHYSICS_FUSED=1 or 0 forces either; docs/nonlinear.md). Checked first at every point (a
// degenerate cell, a value that is not finite: refused naming the point, the data before kept, on every rank).
// The built-in fit, where the operator ran on it, is left: a state's g3 need not be c(x) I.
int state_from(mf_operator op, const double *ud, int zero);
int state_op(mf_operator op, mf_vector u) { return state_from(op, u->data, 0); }

// The rule of state_op: fused where the full layout holds more entries per point than the geometry would, or where
// the new data do not fit beside the old (MFREE_PHYSICS_FUSED=1 or 0 forces either); the same on every rank.
int fused_rule(mf_operator op, size_t bytes, int *fused)
{
  mf_context ctx = op->ctx;
  const mf_space s = op->space;
  const char *ef = getenv("MFREE_PHYSICS_FUSED");
  const int force = ef && !strcmp(ef, "1") ? 1 : ef && !strcmp(ef, "0") ? 0 : -1;
  const int ng = s->dim * s->dim + 1 + s->dim;
  *fused = force >= 0 ? force : mf_sxphys(op)->lay.n > ng;
  size_t free_b = 0, total_b = 0;
  if (!*fused && force != 0 && (cudaMemGetInfo(&free_b, &total_b) != cudaSuccess || free_b / 2 < bytes)) {
    cudaGetLastError(); // no room for the new data beside the old: fused
    *fused = 1;
  }
  if (ctx->size > 1 && MPI_Allreduce(MPI_IN_PLACE, fused, 1, MPI_INT, MPI_MAX, ctx->comm) != MPI_SUCCESS)
    return mf_error_set(ctx, MF_ERR_MPI, __FILE__, __LINE__, __func__, "MPI_Allreduce failed");
  return 0;
}

// The operator at the state of local values ud on the device (zero: u = 0, ud NULL: the operator as made, fused)
int state_from(mf_operator op, const double *ud, int zero)
{
  mf_context ctx = op->ctx;
  const mf_space s = op->space;
  mf_simplex_phys *h = mf_sxphys(op);
  sx_dev *d = dev_of(op);
  MF_CHECK(!mf_simplex_phys_faces_has_operator(h), ctx, MF_ERR_UNSUPPORTED,
           "physics '%s' has boundary terms in its operator (g0 on facets): their linearisation at a state is not "
           "made yet",
           h->ph.name);
  int ierr0 = cells_on_device(op, d);
  if (!ierr0 && !d->state_lib) ierr0 = make_dev(op, d, false, true); // the state's kernels, compiled at their first use
  if (ctx->size > 1) ierr0 = mf_agree(ctx, ierr0); // every rank reaches fused_rule's reduction, or none
  if (ierr0) return ierr0;
  const size_t npts = (size_t)s->ncells * h->basis.nq, nl = (size_t)s->nlocal;
  const size_t bytes = sizeof(double) * (npts * h->lay.n + 1);
  int fused = 0;
  MF_CALL(fused_rule(op, bytes, &fused));
  double *qd = NULL, *sv = NULL;
  char what[96];
  snprintf(what, sizeof what, "the simplex physics' data at a state (%zu points x %d)", npts, h->lay.n);
  int ierr = fused ? mf_cuda_malloc(ctx, (void **)&sv, sizeof(double) * (nl + 1), "the state's values")
                   : mf_cuda_malloc(ctx, (void **)&qd, bytes, what);
  cudaError_t e = cudaSuccess;
  if (!ierr && fused && !zero && (e = cudaMemcpy(sv, ud, sizeof(double) * nl, cudaMemcpyDeviceToDevice)) != cudaSuccess)
    ierr = cuda_fail(ctx, e, "copying the state");
  if (!ierr && fused && zero && (e = cudaMemset(sv, 0, sizeof(double) * nl)) != cudaSuccess)
    ierr = cuda_fail(ctx, e, "the state u = 0");
  double *zbuf = NULL; // u = 0 for the stored data's kernel
  if (!ierr && zero && !fused && (e = cudaMalloc((void **)&zbuf, sizeof(double) * (nl + 1))) == cudaSuccess)
    e = cudaMemset(zbuf, 0, sizeof(double) * (nl + 1));
  if (!ierr && e != cudaSuccess) ierr = cuda_fail(ctx, e, "the state u = 0");
  if (zero) ud = fused ? sv : zbuf;
  unsigned long long *flags = NULL;
  if (!ierr && (e = cudaMalloc((void **)&flags, 2 * sizeof *flags)) == cudaSuccess)
    e = cudaMemset(flags, 0xff, 2 * sizeof *flags);
  if (!ierr && e != cudaSuccess) ierr = cuda_fail(ctx, e, "the state's checks");
  const double t0 = mf_phase_begin(ctx);
  long long fb = -1, fn = -1;
  if (!ierr) {
    int ncells = s->ncells;
    unsigned long long *bad = flags, *nonfinite = flags + 1;
    void *args[] = {(void *)&d->verts, (void *)&d->coords, (void *)&d->cells, (void *)&d->B,
                    (void *)&d->G,     (void *)&d->qp,     (void *)&d->qw,    (void *)&d->k,
                    (void *)&ncells,   (void *)&ud,        (void *)&qd,       (void *)&bad,
                    (void *)&nonfinite};
    ierr = launch(ctx, d->state, blocks((long long)npts), threads, 0, args, "simplex physics at a state");
    fb = ierr ? -1 : first_flag(ctx, bad, &ierr);
    fn = ierr ? -1 : first_flag(ctx, nonfinite, &ierr);
  }
  cudaFree(flags);
  cudaFree(zbuf);
  mf_phase_end(ctx, MF_PHASE_GEOMETRY, t0);
  if (!ierr && fb >= 0)
    ierr = mf_error_set(ctx, MF_ERR_ARGUMENT, __FILE__, __LINE__, __func__,
                        "degenerate cell %d: Jacobian determinant not positive", (int)(fb >> 20));
  if (!ierr && fn >= 0 && zero) ierr = not_finite(op, fn, "a g-function");
  else if (!ierr && fn >= 0) {
    char xs[96];
    const int ce = (int)(fn >> 20), q = (int)(fn & 0xfffff);
    mf_simplex_point_text(mesh_of(op), &h->basis, ce, q, xs, sizeof xs);
    ierr = mf_error_set(ctx, MF_ERR_ARGUMENT, __FILE__, __LINE__, __func__,
                        "physics '%s': a g-function gave a value that is not finite at the state, at quadrature point "
                        "%d of cell %d (rank %d), x = %s: the state is outside where the functions are defined",
                        h->ph.name, q, ce, ctx->rank, xs);
  }
  ierr = mf_agree(ctx, ierr); // every rank keeps its data before, or every rank takes the new
  if (ierr) {
    mf_cuda_free(ctx, qd);
    mf_cuda_free(ctx, sv);
    return ierr;
  }
  if (d->builtin) { // leave the built-in fit
    mf_simplex_cuda_destroy(&d->builtin);
    mf_simplex_op_destroy(&d->sop);
  }
  mf_cuda_free(ctx, d->qd);
  mf_cuda_free(ctx, d->sv);
  d->qd = qd;
  d->sv = sv;
  d->sv_zero = zero;
  op->ops.apply = fused ? apply_state_op : apply_op;
  op->ops.diagonal = fused ? diagonal_state_op : diagonal_op;
  return 0;
}

// op's device part, empty, freed with op; its product apply_op
sx_dev *attach_dev(mf_operator op)
{
  sx_dev *d = new sx_dev();
  d->ctx = op->ctx;
  mf_sxphys(op)->dev = d;
  op->ops.destroy = destroy_op;
  op->ops.apply = apply_op;
  return d;
}

} // namespace

/* The operator's kernels (compiled or found in the cache); fused at u = 0 where fused_rule says so (not a physics with
 * facet g0 terms: those are added to the stored data's operator), else, where the physics fits the built-in Laplace
 * operator (try_builtin, each rank on its own cells), that operator with c(x_q) from g3, else its stored data made
 * on the device (make_qd). The ranks agree on the kernels and on the rule before the fused set-up's collectives. */
extern "C" int mf_cuda_simplex_physics_setup(mf_operator op)
{
  mf_context ctx = op->ctx;
  sx_dev *d = attach_dev(op);
  op->ops.diagonal = diagonal_op;
  op->ops.residual = residual_op;
  op->ops.set_state = state_op;
  int ierr = make_dev(op, d, false);
  if (ctx->size > 1) ierr = mf_agree(ctx, ierr);
  if (ierr) return ierr;
  const mf_simplex_phys *h = mf_sxphys(op);
  const size_t bytes = sizeof(double) * ((size_t)op->space->ncells * h->basis.nq * h->lay.n + 1);
  int fused = 0;
  if (!mf_simplex_phys_faces_has_operator(h)) MF_CALL(fused_rule(op, bytes, &fused)); // the same physics everywhere
  if (fused) return state_from(op, NULL, 1); // at u = 0, nothing stored
  int fits = 0;
  MF_CALL(try_builtin(op, d, &fits));
  return fits ? 0 : make_qd(op, d);
}

/* The float copy op of like (multigrid's float V-cycle; op: like's description, made by
 * lib/simplex/physics_simplex.c), where like does not run on the built-in kernels on every rank: the float
 * product of like's shape (a library of its own: MF_FLOAT_COPY), its data rounded to float on the device. It applies to float vectors only (no residual, no diagonal:
 * the double operator's serve). */
extern "C" int mf_cuda_simplex_physics_single(mf_operator op, mf_operator like)
{
  mf_context ctx = op->ctx;
  mf_simplex_phys *h = mf_sxphys(op);
  sx_dev *ld = dev_of(like);
  MF_CHECK(ld, ctx, MF_ERR_ARGUMENT, "the float copy of a simplex physics operator not set up");
  MF_CHECK(!ld->sv || ld->sv_zero, ctx, MF_ERR_UNSUPPORTED,
           "physics '%s' at a state evaluates its g-functions at every application (fused): no float copy (use "
           "MF_PRECISION_DOUBLE)",
           h->ph.name);
  if (!ld->qd) MF_CALL(make_qd(like, ld)); /* like runs on the built-in kernels here, not on every rank: its
                                               stored data made for the copy and kept, as for an assembly */
  sx_dev *d = attach_dev(op);
  op->ops.diagonal = NULL;
  op->ops.residual = NULL;
  MF_CALL(make_dev(op, d, true));
  const size_t n = (size_t)op->space->ncells * h->basis.nq * h->lay.n;
  char what[96];
  snprintf(what, sizeof what, "the float copy of a simplex physics' stored data (%zu values)", n);
  MF_CALL(mf_cuda_require(ctx, sizeof(float) * (n + 1), what));
  MF_CALL(mf_cuda_malloc(ctx, (void **)&d->qdf, sizeof(float) * (n + 1), what));
  return mf_cuda_round(ctx, d->qdf, ld->qd, n, what);
}

/* The assembled matrix's values on the device (A: the CSR operator of op's space, its pattern there):
 * allocated, zeroed, every cell's element matrix added (mfree_sx_assemble); freed with A. */
static int destroy_values(mf_operator A)
{
  mf_cuda_free(A->ctx, mf_csr(A)->vals);
  mf_csr(A)->vals = NULL;
  return 0;
}
extern "C" void mf_cuda_simplex_physics_builtin(mf_operator op, const mf_simplex_op **sop, mf_simplex_cuda_op *dev)
{
  const sx_dev *d = dev_of(op);
  *sop = d && d->builtin ? &d->sop : NULL;
  *dev = d ? d->builtin : NULL;
}

extern "C" int mf_cuda_simplex_physics_assemble(mf_operator op, mf_operator A)
{
  mf_context ctx = op->ctx;
  const mf_space s = op->space;
  const mf_cuda_space *ds = (const mf_cuda_space *)s->dev;
  MF_CHECK(ds && ds->csr_rowptr, ctx, MF_ERR_ARGUMENT, "the space's sparsity is not on the device");
  sx_dev *d = dev_of(op);
  if (d->builtin && ctx->size == 1) { // the built-in fit: the built-in rowwise assembly (its lists kept with the space)
    mf_simplex_space *ss = (mf_simplex_space *)s->fdata;
    ss->dev_asm_free = mf_simplex_cuda_asm_free;
    return mf_simplex_cuda_assemble(d->builtin, s, &ss->dev_asm, A);
  }
  if (d->builtin && !d->qd) MF_CALL(make_qd(op, d)); /* several ranks: the element matrices from the stored data,
                                                        made for the assembly and kept */
  const size_t nnz = (size_t)s->csr_rowptr[s->nlocal];
  char what[96];
  snprintf(what, sizeof what, "the assembled values (%zu)", nnz);
  MF_CALL(mf_cuda_require(ctx, sizeof(double) * nnz, what));
  MF_CALL(mf_cuda_malloc(ctx, (void **)&mf_csr(A)->vals, sizeof(double) * (nnz ? nnz : 1), what));
  A->ops.destroy = destroy_values;
  if (cudaMemset(mf_csr(A)->vals, 0, sizeof(double) * nnz) != cudaSuccess)
    return cuda_fail(ctx, cudaGetLastError(), "zeroing the assembled values");
  MF_CALL(cells_on_device(op, d));
  int ncells0 = s->ncells;
  const int *colidx0 = ds->csr_colidx;
  const int64_t *rowptr0 = ds->csr_rowptr;
  double *vals0 = mf_csr(A)->vals;
  if (d->sv) { // the fused operator at a state: the entries made from the state, cell by cell
    void *sargs[] = {(void *)&d->verts, (void *)&d->coords, (void *)&d->cells, (void *)&d->B,
                     (void *)&d->G,     (void *)&d->qp,     (void *)&d->qw,    (void *)&d->k,
                     (void *)&ncells0,  (void *)&d->sv,     (void *)&rowptr0,  (void *)&colidx0,
                     (void *)&vals0};
    return launch(ctx, d->assemble_state, blocks(ncells0), threads, 0, sargs, "simplex physics assembly at a state");
  }
  const int *colidx = ds->csr_colidx;
  const int64_t *rowptr = ds->csr_rowptr;
  double *vals = mf_csr(A)->vals;
  int ncells = s->ncells;
  void *args[] = {(void *)&d->cells, (void *)&d->B,    (void *)&d->G,      (void *)&d->qd,
                  (void *)&ncells,   (void *)&rowptr,  (void *)&colidx,    (void *)&vals};
  return launch(ctx, d->assemble, blocks(ncells), threads, 0, args, "simplex physics assembly");
}
