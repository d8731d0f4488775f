// physics.cu -- users' physics on the device (the backend table's physics entries): the source of a
// physics compiled at run time by NVRTC together with the kernels of physics_jit.cuh, for one operator
// shape (dim, degree, points, components, cells per block, the functions present), into a cubin kept
// in the cache folder (lib/physics/source.c) and loaded with the runtime's library API; then the
// stored data made on the device (mfree_setup, one block where it serves), the product and the
// residual. A library loaded once in a process serves every operator of the same key.
#include "mf_cuda_common.cuh"
#include "hex/mf_hex_physics.h"
#include "assembled/assembly_impl.h"
#include "mf_cuda_jit.h"
#include "mf_jit_stubs.h"
#include "physics_vcol.h"
#include "column_cell.cuh"
#include "cell_thread.cuh"
#include "cell_slab.cuh"

#include <nvrtc.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <string>
#include <vector>

extern "C" {
extern const int mf_jit_nheaders;
extern const char *const mf_jit_header_names[];
extern const char *const mf_jit_header_texts[];
}

namespace {


struct loaded {
  mf_context ctx;
  std::string key;
  cudaLibrary_t lib;
  loaded *next;
};
loaded *loaded_list = nullptr; // the libraries loaded in this process, by context

void unload_context(void *arg)
{
  mf_context ctx = (mf_context)arg;
  for (loaded **p = &loaded_list; *p;) {
    if ((*p)->ctx == ctx) {
      loaded *l = *p;
      *p = l->next;
      cudaLibraryUnload(l->lib);
      delete l;
    } else p = &(*p)->next;
  }
}

struct phys_dev {
  cudaKernel_t setup[4], apply_full, apply_one, apply_sym, residual; // setup: the modes of physics_jit.cuh
  cudaKernel_t apply_vcol; // the vector mass / Laplace shape (no g1, g2), or NULL: mfree_apply_vcol
  cudaKernel_t setup_geo, apply_fused, diagonal, assemble; // the fused operator; the diagonal and assembly of either
  cudaKernel_t apply_full_f, apply_one_f, apply_sym_f, apply_fused_f, apply_vcol_f; // the float copy's (_f)
  cudaKernel_t setup_state, apply_fused_state, diagonal_state, assemble_state; // at a state (the MF_STATE library)
  double *sv; // the fused operator's state (its local values; mf_operator_set_state), else NULL (u = 0)
  cudaKernel_t faces;          // the faces' terms (every boundary term given as source), else NULL
  int *bf_cell, *bf_face, *bf_term; // the boundary face entries: cell, face, term
  double *fg;                  // their points: x, the outward normal, W (mf_hex_phys_face_points)
  size_t shmem_vcol, shmem_vcol_f;
  int cpb_vcol, tpb_vcol, slab_vcol, ns_sym; // tpb_vcol, slab_vcol > 0: the thread or slab design's block; ns_sym: entries per point of the one-block symmetric layout
  int fused; // qd holds the geometry (MF_NG entries per point) and the g-functions run at each application
  double *B, *D, *qw, *k, *BB, *BG, *GG;
  double *qd;
  float *qdf; // the float copy's data (its stored data, or fused its geometry, rounded to float), else NULL
  int cpb, nt;
  size_t shmem;
};

phys_dev *dev_of(mf_operator op) { return (phys_dev *)mf_hexphys(op)->dev; }

using mf_jit::cells_per_block;
using mf_jit::cuda_fail;
using mf_jit::first_flag;
using mf_jit::kernel;
using mf_jit::launch;
using mf_jit::upload;


// the text NVRTC compiles: the shape, the library's headers, the user's source, the glue, the kernels
std::string program(const mf_hex_phys *h, const mf_space s, int cpb, bool single, bool state = false)
{
  const mf_phys *ph = &h->ph;
  mf_phys_layout full, one, sym; /* the stored entries' sizes: the same for a float copy (whose lay is narrowed) */
  mf_phys_layout_make(s->dim, s->ncomp, s->ncomp, 0, h->lay.has, &full);
  mf_phys_layout_make(s->dim, s->ncomp, 1, 0, h->lay.has, &one);
  mf_phys_layout_make(s->dim, s->ncomp, 1, 1, h->lay.has, &sym);
  const int ns_full = full.n, ns_one = one.n, ns_sym = sym.n;
  char buf[512];
  std::string t = single ? "#define MF_FLOAT_COPY 1\n" : state ? "#define MF_STATE 1\n" : "";
  snprintf(buf, sizeof buf,
           "#define MF_DIM %d\n#define MF_N1 %d\n#define MF_NQ %d\n#define MF_NC %d\n#define MF_CPB %d\n"
           "#define MF_HAS0 %d\n#define MF_HAS1 %d\n#define MF_HAS2 %d\n#define MF_HAS3 %d\n#define MF_HASF0 %d\n"
           "#define MF_HASF1 %d\n#define MF_NS_FULL %d\n#define MF_NS_ONE %d\n#define MF_NS_SYM %d\n",
           s->dim, s->n1, h->basis.nq, s->ncomp, cpb, h->lay.has[0], h->lay.has[1], h->lay.has[2], h->lay.has[3],
           ph->src_has[0], ph->src_has[1], ns_full, ns_one, ns_sym);
  t += buf;
  int ccpb, cminb, cnj, ctpb, cvl, cslab, cxp, cqs;
  vcol_shape(h, s, &ccpb, &cminb, &cnj, &ctpb, &cvl, &cslab, &cxp, &cqs);
  snprintf(buf, sizeof buf,
           "#define MF_VCOL_CPB %d\n#define MF_VCOL_MINB %d\n#define MF_VCOL_NJ %d\n#define MF_VCOL_TPB %d\n"
           "#define MF_VCOL_VLOAD %d\n#define MF_VCOL_SLAB %d\n#define MF_VCOL_XPLANE %d\n#define MF_VCOL_QSTAGE %d\n"
           "#define MF_COLLOC %d\n#define MF_HANG %d\n",
           ccpb, cminb, cnj, ctpb, cvl, cslab, cxp, cqs, h->basis.collocated ? 1 : 0, s->nmasked > 0 ? 1 : 0);
  t += buf;
  if (cslab) t += const_basis(&h->basis);
  t += "#include \"physics/mf_physics.h\"\n#include \"hanging/mf_hanging.h\"\n";
  t += mf_jit::physics_glue(ph);
  if (!single && mf_jit::boundary_on_device(ph)) { // the faces' kernel and the glue of the boundary terms
    t += "#define MF_FACES 1\n";
    t += mf_jit::boundary_glue(ph);
  }
  t += "#include \"cuda/physics_jit.cuh\"\n";
  return t;
}

// The device's architecture, "sm_90".
int arch(mf_context ctx, char *out, size_t n)
{
  int dev = 0, major = 0, minor = 0;
  cudaError_t e = cudaGetDevice(&dev);
  if (e == cudaSuccess) e = cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, dev);
  if (e == cudaSuccess) e = cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, dev);
  if (e != cudaSuccess) return cuda_fail(ctx, e, "the device's compute capability");
  snprintf(out, n, "sm_%d%d", major, minor);
  return 0;
}

// The library of the program: loaded already in this process, from the cache, or compiled now.
int library(mf_context ctx, const std::string &prog, cudaLibrary_t *lib)
{
  char sm[16], key[17], dir[1024], name[64];
  MF_CALL(arch(ctx, sm, sizeof sm));
  std::string headers;
  for (int i = 0; i < mf_jit_nheaders; i++) headers += mf_jit_header_texts[i];
  int nvmajor = 0, nvminor = 0;
  nvrtcVersion(&nvmajor, &nvminor);
  char nvv[32];
  snprintf(nvv, sizeof nvv, "nvrtc %d.%d", nvmajor, nvminor);
  const char *parts[6] = {"mfree " MF_LIB_VERSION, "cuda", sm, nvv, headers.c_str(), prog.c_str()};
  mf_jit_key(parts, 6, key);
  for (loaded *l = loaded_list; l; l = l->next)
    if (l->ctx == ctx && l->key == key) {
      *lib = l->lib;
      ctx->jit_loaded++;
      return 0;
    }
  const double t0 = mf_phase_begin(ctx);
  snprintf(name, sizeof name, "cuda-%s.cubin", key);
  const int cached = !mf_jit_cache_dir(ctx, dir, sizeof dir);
  void *bin = NULL;
  size_t nbin = 0;
  int ierr = 0;
  *lib = NULL;
  if (cached && mf_jit_cache_read(dir, name, &bin, &nbin) == 1) {
    if (cudaLibraryLoadData(lib, bin, NULL, NULL, 0, NULL, NULL, 0) == cudaSuccess) ctx->jit_loaded++;
    else {
      cudaGetLastError();
      *lib = NULL;
    }
  }
  free(bin);
  bin = NULL;
  if (!*lib) { // compile: a miss, or an entry that does not load (corrupt, another driver)
    if (cached) mf_jit_cache_remove(dir, name);
    std::vector<const char *> hn, ht; // the library's headers, then the stubs
    for (int i = 0; i < mf_jit_nheaders; i++) hn.push_back(mf_jit_header_names[i]), ht.push_back(mf_jit_header_texts[i]);
    for (int i = 0; i < MF_JIT_NSTUBS; i++) hn.push_back(mf_jit_stub_names[i]), ht.push_back(mf_jit_stub_texts[i]);
    const int nh = (int)hn.size();
    nvrtcProgram p;
    nvrtcResult r = nvrtcCreateProgram(&p, prog.c_str(), "mfree_physics.cu", nh, ht.data(), hn.data());
    if (r != NVRTC_SUCCESS) {
      mf_phase_end(ctx, MF_PHASE_COMPILE, t0);
      return mf_error_set(ctx, MF_ERR_CUDA, __FILE__, __LINE__, __func__, "NVRTC: %s", nvrtcGetErrorString(r));
    }
    char archopt[40];
    snprintf(archopt, sizeof archopt, "--gpu-architecture=%s", sm);
    const char *opts[] = {archopt, "-default-device", "--std=c++17", "-DMFREE_JIT"};
    r = nvrtcCompileProgram(p, 4, opts);
    ctx->jit_compiled++;
    if (r != NVRTC_SUCCESS) {
      size_t nlog = 0;
      nvrtcGetProgramLogSize(p, &nlog);
      std::string log(nlog + 1, '\0');
      nvrtcGetProgramLog(p, &log[0]);
      char cut[700];
      snprintf(cut, sizeof cut, "%s", log.c_str());
      ierr = mf_error_set(ctx, MF_ERR_ARGUMENT, __FILE__, __LINE__, __func__,
                          "the physics source did not compile (NVRTC, %s):\n%s", nvrtcGetErrorString(r), cut);
    } else {
      r = nvrtcGetCUBINSize(p, &nbin);
      if (r == NVRTC_SUCCESS) {
        bin = malloc(nbin);
        r = bin ? nvrtcGetCUBIN(p, (char *)bin) : NVRTC_ERROR_OUT_OF_MEMORY;
      }
      if (r != NVRTC_SUCCESS)
        ierr = mf_error_set(ctx, MF_ERR_CUDA, __FILE__, __LINE__, __func__, "NVRTC: no cubin: %s", nvrtcGetErrorString(r));
    }
    nvrtcDestroyProgram(&p);
    if (!ierr) {
      cudaError_t e = cudaLibraryLoadData(lib, bin, NULL, NULL, 0, NULL, NULL, 0);
      if (e != cudaSuccess) ierr = cuda_fail(ctx, e, "loading the compiled physics");
    }
    if (!ierr && cached) mf_jit_cache_write(dir, name, bin, nbin); // a failed write costs the next run a compile
    free(bin);
  }
  mf_phase_end(ctx, MF_PHASE_COMPILE, t0);
  if (ierr) return ierr;
  loaded *l = new loaded{ctx, key, *lib, loaded_list};
  const bool first = [&] {
    for (loaded *o = loaded_list; o; o = o->next)
      if (o->ctx == ctx) return false;
    return true;
  }();
  loaded_list = l;
  if (first) MF_CALL(mf_context_on_release(ctx, unload_context, ctx));
  return 0;
}

void free_dev(phys_dev *d)
{
  if (!d) return;
  for (void *p : {(void *)d->B, (void *)d->D, (void *)d->qw, (void *)d->k, (void *)d->qd, (void *)d->qdf, (void *)d->BB,
                  (void *)d->BG, (void *)d->GG, (void *)d->bf_cell, (void *)d->bf_face, (void *)d->bf_term,
                  (void *)d->fg, (void *)d->sv})
    cudaFree(p);
  delete d;
}

int destroy_op(mf_operator op)
{
  free_dev(dev_of(op));
  mf_hexphys(op)->dev = NULL;
  return 0;
}

int apply_op(mf_operator op, mf_vector x, mf_vector y)
{
  const mf_space s = op->space;
  const mf_cuda_space *ds = (const mf_cuda_space *)s->dev;
  phys_dev *d = dev_of(op);
  const mf_hex_phys *h = mf_hexphys(op);
  const int *cells = ds->cell_nodes, *order = ds->atomic_cells;
  const short *mask = (const short *)ds->mask;
  const double *P = ds->mask ? ds->P : NULL;
  int ncells = s->ncells;
  const int single = op->prec == MF_PRECISION_FLOAT;
  const void *xd = single ? (const void *)x->sdata : (const void *)x->data;
  void *yd = single ? (void *)y->sdata : (void *)y->data;
  const void *geo = single ? (const void *)d->qdf : (const void *)d->qd;
  if (d->sv && !single) { // fused at a state
    void *sargs[] = {(void *)&cells, (void *)&order,  (void *)&mask,   (void *)&d->B,  (void *)&d->D,
                     (void *)&P,     (void *)&d->qw,  (void *)&d->qd,  (void *)&d->k,  (void *)&ncells,
                     (void *)&d->sv, (void *)&xd,     (void *)&yd};
    return launch(op->ctx, d->apply_fused_state, (unsigned)((ncells + d->cpb - 1) / d->cpb), (unsigned)d->nt, d->shmem,
                  sargs, "physics apply at a state");
  }
  if (d->fused) {
    void *fargs[] = {(void *)&cells, (void *)&order, (void *)&mask, (void *)&d->B,    (void *)&d->D, (void *)&P,
                     (void *)&d->qw, (void *)&geo,    (void *)&d->k, (void *)&ncells, (void *)&xd,  (void *)&yd};
    return launch(op->ctx, single ? d->apply_fused_f : d->apply_fused, (unsigned)((ncells + d->cpb - 1) / d->cpb), (unsigned)d->nt, d->shmem,
                  fargs, "physics apply");
  }
  if ((single ? d->apply_vcol_f : d->apply_vcol) && h->lay.nb == 1 && (h->lay.sym || !h->lay.has[3])) {
    mf_cuda_apply_args a;
    memset(&a, 0, sizeof a);
    a.cell_nodes = cells;
    a.qd = single ? (const void *)d->qdf : (const void *)d->qd;
    a.qd_batch = 1; // the physics' layout: cell by cell, entry by entry, point by point
    a.qd_block_stride = h->nqp;
    a.qd_batch_stride = (long long)d->ns_sym * h->nqp;
    a.B = d->B;
    a.D = d->D;
    a.mask = (const int16_t *)mask;
    a.P = P;
    a.cell_list = order;
    a.cell_end = ncells;
    a.atomic = 1;
    a.x = xd;
    a.y = yd;
    void *cargs[] = {(void *)&a};
    const int nt = s->dim == 3 ? h->basis.nq * h->basis.nq : h->basis.nq;
    const long long nthr = (long long)ncells * s->ncomp; // the thread design: one thread per component of a cell
    if (d->slab_vcol) // the slab design: NQ lanes per component of a cell
      return launch(op->ctx, single ? d->apply_vcol_f : d->apply_vcol,
                    (unsigned)mfc::slab_blocks(nthr, h->basis.nq, d->slab_vcol), (unsigned)d->slab_vcol,
                    single ? d->shmem_vcol_f : d->shmem_vcol, cargs,
                    "physics apply");
    return launch(op->ctx, single ? d->apply_vcol_f : d->apply_vcol,
                  d->tpb_vcol ? (unsigned)((nthr + d->tpb_vcol - 1) / d->tpb_vcol)
                              : (unsigned)((ncells + d->cpb_vcol - 1) / d->cpb_vcol),
                  (unsigned)(d->tpb_vcol ? d->tpb_vcol : d->cpb_vcol * nt), single ? d->shmem_vcol_f : d->shmem_vcol,
                  cargs, "physics apply");
  }
  if (single) {
    const double *none = NULL;
    void *fargs[] = {(void *)&cells, (void *)&order, (void *)&mask,   (void *)&d->B, (void *)&d->D, (void *)&P,
                     (void *)&d->qw, (void *)&none,  (void *)&d->qdf, (void *)&ncells, (void *)&xd, (void *)&yd};
    return launch(op->ctx, h->lay.sym ? d->apply_sym_f : h->lay.nb == 1 ? d->apply_one_f : d->apply_full_f,
                  (unsigned)((ncells + d->cpb - 1) / d->cpb), (unsigned)d->nt, d->shmem, fargs, "physics apply (float)");
  }
  void *args[] = {(void *)&cells, (void *)&order, (void *)&mask, (void *)&d->B, (void *)&d->D, (void *)&P,
                  (void *)&d->qw, (void *)&d->qd, (void *)&d->qdf, (void *)&ncells, (void *)&xd, (void *)&yd};
  return launch(op->ctx, h->lay.sym ? d->apply_sym : h->lay.nb == 1 ? d->apply_one : d->apply_full,
                (unsigned)((ncells + d->cpb - 1) / d->cpb),
                (unsigned)d->nt, d->shmem, args, "physics apply");
}

// "x = (...)" of point q of cell e (the host's geometry)
void point_text(mf_operator op, int cell, int q, char *buf, size_t n)
{
  const mf_space s = op->space;
  const mf_hex_phys *h = mf_hexphys(op);
  double xq[3 * MF_MAX_NQ * MF_MAX_NQ * MF_MAX_NQ];
  mf_geom_work gw;
  snprintf(buf, n, "(unknown)");
  if (!s->coords && op->ctx->size > 1) return; // their making is collective: not from one rank's error
  if (mf_space_host_coords(s) || mf_geom_work_init(s, &h->basis, &gw)) return;
  mf_cell_points(s, &h->basis, cell, &gw, xq);
  mf_geom_work_free(&gw);
  int len = snprintf(buf, n, "(");
  for (int k = 0; k < s->dim; k++) len += snprintf(buf + len, n - (size_t)len, k ? ", %g" : "%g", xq[q * s->dim + k]);
  snprintf(buf + len, n - (size_t)len, ")");
}

int residual_op(mf_operator op, mf_vector u, mf_vector r)
{
  const mf_space s = op->space;
  const mf_cuda_space *ds = (const mf_cuda_space *)s->dev;
  phys_dev *d = dev_of(op);
  const mf_hex_phys *h = mf_hexphys(op);
  mf_context ctx = op->ctx;
  unsigned long long *flag = NULL;
  MF_CALL(mf_jit::new_flag(ctx, &flag, "a flag of the residual"));
  const int *cells = ds->cell_nodes;
  const short *mask = (const short *)ds->mask;
  const double *P = ds->mask ? ds->P : NULL, *coords = ds->coords, *ud = u->data;
  double *rd = r->data;
  int cstride = s->ncomp * s->dim, ncells = s->ncells;
  void *args[] = {(void *)&cells, (void *)&mask, (void *)&coords, (void *)&cstride, (void *)&d->B, (void *)&d->D,
                  (void *)&P, (void *)&d->qw, (void *)&d->k, (void *)&ncells, (void *)&ud, (void *)&rd, (void *)&flag};
  int ierr = launch(ctx, d->residual, (unsigned)((ncells + d->cpb - 1) / d->cpb), (unsigned)d->nt, d->shmem, args,
                    "physics residual");
  const long long bad = ierr ? -1 : first_flag(ctx, flag, &ierr);
  cudaFree(flag);
  if (!ierr && bad >= 0) {
    char xs[96];
    point_text(op, (int)(bad >> 20), (int)(bad & 0xfffff), xs, sizeof xs);
    ierr = mf_error_set(ctx, MF_ERR_ARGUMENT, __FILE__, __LINE__, __func__,
                        "physics '%s': f0 or f1 gave a value that is not finite at quadrature point %d of cell %d (rank "
                        "%d), x = %s: the pointwise functions must give finite values",
                        h->ph.name, (int)(bad & 0xfffff), (int)(bad >> 20), ctx->rank, xs);
  }
  return ierr;
}

// The faces' kernel, their entries and points on the device, op's faces then run there (faces_device). The host's
// coordinates are made already (mf_hex_physics_create, collectively), so nothing here is collective.
int faces_setup(mf_operator op, phys_dev *d, cudaLibrary_t lib)
{
  mf_context ctx = op->ctx;
  const mf_space s = op->space;
  mf_hex_phys *h = mf_hexphys(op);
  MF_CALL(kernel(ctx, lib, "mfree_faces", &d->faces));
  MF_CALL(mf_space_host_coords(s));
  if (h->nbf) {
    const int nqf = s->dim == 2 ? h->basis.nq : h->basis.nq * h->basis.nq, per = nqf * (2 * s->dim + 1);
    std::vector<double> fg((size_t)h->nbf * per), X((size_t)s->npc * s->dim);
    for (int k = 0; k < h->nbf; k++) mf_hex_phys_face_points(op, k, X.data(), fg.data() + (size_t)k * per);
    MF_CALL(upload(ctx, &d->bf_cell, h->bf_cell, (size_t)h->nbf, "the boundary faces' cells"));
    MF_CALL(upload(ctx, &d->bf_face, h->bf_face, (size_t)h->nbf, "the boundary faces"));
    MF_CALL(upload(ctx, &d->bf_term, h->bf_term, (size_t)h->nbf, "the boundary faces' terms"));
    MF_CALL(upload(ctx, &d->fg, fg.data(), fg.size(), "the boundary faces' points"));
  }
  h->faces_device = 1;
  return 0;
}

// the kernels and basis of op (its library compiled or found); single: the float copy's (a library of their own)
int make_dev(mf_operator op, phys_dev **out, bool single = false)
{
  mf_context ctx = op->ctx;
  const mf_space s = op->space;
  mf_hex_phys *h = mf_hexphys(op);
  phys_dev *d = new phys_dev();
  *out = d;
  mf_phys_layout sym;
  mf_phys_layout_make(s->dim, s->ncomp, 1, 1, h->lay.has, &sym);
  d->ns_sym = sym.n;
  d->cpb = cells_per_block(h->nqp);
  d->nt = d->cpb * h->nqp;
  const int nq = h->basis.nq, n1 = s->n1;
  d->shmem = sizeof(double) * ((size_t)nq * n1 + (size_t)nq * nq + 2 * n1 * n1 + nq + (size_t)d->cpb * 2 * h->nqp);
  cudaLibrary_t lib = NULL;
  MF_CALL(library(ctx, program(h, s, d->cpb, single), &lib));
  const char *ev = getenv("MFREE_PHYSICS_VEC");
  const bool vcol = !h->lay.has[1] && !h->lay.has[2] && (h->lay.has[0] || h->lay.has[3]) && !(ev && !strcmp(ev, "0"));
  if (single) {
    MF_CALL(kernel(ctx, lib, "mfree_apply_full_f", &d->apply_full_f));
    MF_CALL(kernel(ctx, lib, "mfree_apply_one_f", &d->apply_one_f));
    MF_CALL(kernel(ctx, lib, "mfree_apply_sym_f", &d->apply_sym_f));
    MF_CALL(kernel(ctx, lib, "mfree_apply_fused_f", &d->apply_fused_f));
    if (vcol) MF_CALL(kernel(ctx, lib, "mfree_apply_vcol_f", &d->apply_vcol_f));
  } else {
    static const char *const setups[4] = {"mfree_setup_full", "mfree_setup_one", "mfree_setup_sym",
                                          "mfree_setup_builtin"};
    for (int m = 0; m < 4; m++) MF_CALL(kernel(ctx, lib, setups[m], &d->setup[m]));
    MF_CALL(kernel(ctx, lib, "mfree_apply_full", &d->apply_full));
    MF_CALL(kernel(ctx, lib, "mfree_apply_one", &d->apply_one));
    MF_CALL(kernel(ctx, lib, "mfree_apply_sym", &d->apply_sym));
    MF_CALL(kernel(ctx, lib, "mfree_residual", &d->residual));
    MF_CALL(kernel(ctx, lib, "mfree_setup_geo", &d->setup_geo));
    MF_CALL(kernel(ctx, lib, "mfree_apply_fused", &d->apply_fused));
    MF_CALL(kernel(ctx, lib, "mfree_diagonal", &d->diagonal));
    MF_CALL(kernel(ctx, lib, "mfree_assemble", &d->assemble));
    /* the vector mass / Laplace kernel where the shape allows it (MFREE_PHYSICS_VEC=0: the generic one) */
    if (vcol) MF_CALL(kernel(ctx, lib, "mfree_apply_vcol", &d->apply_vcol));
    if (mf_jit::boundary_on_device(&h->ph)) MF_CALL(faces_setup(op, d, lib));
  }
  if (vcol) {
    int minb, nj, vl, xp, qs;
    vcol_shape(h, s, &d->cpb_vcol, &minb, &nj, &d->tpb_vcol, &vl, &d->slab_vcol, &xp, &qs);
    const int ncs = mfc::slab_entries(h->lay.has[0], h->lay.has[3]);
    const size_t nbuf = d->slab_vcol  ? (qs ? mfc::slab_stage_size(nq, s->ncomp, d->slab_vcol, ncs) : 0)
                        : d->tpb_vcol ? mfc::thread_buf_size(n1, nq)
                                      : mfc::colbuf_size(s->dim, n1, nq, d->cpb_vcol, h->lay.has[3], s->nmasked > 0, nj);
    d->shmem_vcol = sizeof(double) * nbuf;
    d->shmem_vcol_f = sizeof(float) * nbuf;
    const size_t need = single ? d->shmem_vcol_f : d->shmem_vcol;
    if (need > 48 * 1024) {
      const cudaError_t e = cudaFuncSetAttribute(single ? (const void *)d->apply_vcol_f : (const void *)d->apply_vcol,
                                                 cudaFuncAttributeMaxDynamicSharedMemorySize, (int)need);
      if (e != cudaSuccess) return cuda_fail(ctx, e, "the shared memory of the vector kernel");
    }
  }
  const mf_basis1d *b = &h->basis;
  MF_CALL(upload(ctx, &d->B, b->B, (size_t)nq * n1, "the basis"));
  MF_CALL(upload(ctx, &d->D, b->D, (size_t)nq * nq, "the derivative matrix"));
  MF_CALL(upload(ctx, &d->qw, b->qwts, (size_t)nq, "the weights"));
  MF_CALL(upload(ctx, &d->k, h->ph.k, (size_t)MF_PHYS_MAX_CONSTANTS, "the constants"));
  MF_CALL(upload(ctx, &d->BB, b->BB, (size_t)nq * n1, "the diagonal's factors"));
  MF_CALL(upload(ctx, &d->BG, b->BG, (size_t)nq * n1, "the diagonal's factors"));
  MF_CALL(upload(ctx, &d->GG, b->GG, (size_t)nq * n1, "the diagonal's factors"));
  return 0;
}


// One set-up run in mode m (physics_jit.cuh) into out (the mode's layout; mode 3: a built-in's, with its
// strides; mode 4: the fused operator's geometry; mode 5: the full layout at the state of local values ud, or with
// out NULL its checks alone); *shape: what the mode found that it cannot hold (1 not one block, 2 D3 not symmetric).
int setup_run(mf_operator op, int m, double *out, int batch, long long bs, long long bt, int *shape,
              const double *ud = NULL)
{
  mf_context ctx = op->ctx;
  const mf_space s = op->space;
  const mf_cuda_space *ds = (const mf_cuda_space *)s->dev;
  const mf_hex_phys *h = mf_hexphys(op);
  phys_dev *d = dev_of(op);
  unsigned long long *flags = NULL;
  cudaError_t e = cudaMalloc((void **)&flags, 2 * sizeof *flags + sizeof(int));
  if (e == cudaSuccess) e = cudaMemset(flags, 0xff, 2 * sizeof *flags);
  if (e == cudaSuccess) e = cudaMemset(flags + 2, 0, sizeof(int));
  if (e != cudaSuccess) {
    cudaFree(flags);
    return cuda_fail(ctx, e, "the set-up's checks");
  }
  int *shape_dev = (int *)(flags + 2);
  const int *cells = ds->cell_nodes;
  const short *mask = (const short *)ds->mask;
  const double *P = ds->mask ? ds->P : NULL, *coords = ds->coords;
  int cstride = s->ncomp * s->dim, ncells = s->ncells;
  unsigned long long *bad = flags, *nonfinite = flags + 1;
  void *args[] = {(void *)&cells, (void *)&mask, (void *)&coords, (void *)&cstride, (void *)&d->B, (void *)&d->D,
                  (void *)&P, (void *)&d->qw, (void *)&d->k, (void *)&ncells, (void *)&out, (void *)&batch,
                  (void *)&bs, (void *)&bt, (void *)&shape_dev, (void *)&bad, (void *)&nonfinite};
  void *gargs[] = {(void *)&cells, (void *)&mask, (void *)&coords, (void *)&cstride, (void *)&d->B,
                   (void *)&d->D,  (void *)&P,    (void *)&d->qw,   (void *)&d->k,     (void *)&ncells,
                   (void *)&out,   (void *)&bad,  (void *)&nonfinite};
  void *sargs[] = {(void *)&cells, (void *)&mask, (void *)&coords, (void *)&cstride, (void *)&d->B,
                   (void *)&d->D,  (void *)&P,    (void *)&d->qw,   (void *)&d->k,     (void *)&ncells,
                   (void *)&ud,    (void *)&out,  (void *)&bad,     (void *)&nonfinite};
  int ierr = launch(ctx, m == 5 ? d->setup_state : m == 4 ? d->setup_geo : d->setup[m],
                    (unsigned)((ncells + d->cpb - 1) / d->cpb), (unsigned)d->nt, d->shmem,
                    m == 5 ? sargs : m == 4 ? gargs : args, m == 5 ? "physics at a state" : "physics set-up");
  long long b = -1, nf = -1;
  if (!ierr) b = first_flag(ctx, flags, &ierr);
  if (!ierr) nf = first_flag(ctx, flags + 1, &ierr);
  *shape = 0;
  if (!ierr && (e = cudaMemcpy(shape, shape_dev, sizeof(int), cudaMemcpyDeviceToHost)) != cudaSuccess)
    ierr = cuda_fail(ctx, e, "the set-up's checks");
  cudaFree(flags);
  if (!ierr && b >= 0)
    ierr = mf_error_set(ctx, MF_ERR_ARGUMENT, __FILE__, __LINE__, __func__,
                        "degenerate cell %d: Jacobian determinant not positive at quadrature point %d", (int)(b >> 20),
                        (int)(b & 0xfffff));
  if (!ierr && nf >= 0) {
    char xs[96];
    point_text(op, (int)(nf >> 20), (int)(nf & 0xfffff), xs, sizeof xs);
    ierr = mf_error_set(ctx, MF_ERR_ARGUMENT, __FILE__, __LINE__, __func__,
                        "physics '%s': a g-function gave a value that is not finite %sat quadrature point %d of cell "
                        "%d (rank %d), x = %s: %s",
                        h->ph.name, m == 5 ? "at the state, " : "", (int)(nf & 0xfffff), (int)(nf >> 20), ctx->rank,
                        xs, m == 5 ? "the state is outside where the functions are defined"
                                   : "the pointwise functions must give finite values");
  }
  return ierr;
}

// the operator's kernels and steps on the device (its data made by the caller)
int device_ops(mf_operator op)
{
  mf_hex_phys *h = mf_hexphys(op);
  phys_dev *d = NULL;
  const int ierr = make_dev(op, &d);
  h->dev = d;
  op->ops.destroy = destroy_op;
  op->ops.apply = apply_op;
  op->ops.residual = residual_op;
  return ierr;
}

} // namespace

/* the run-time compiled library of a program (lib/cuda/mf_cuda_jit.h) */
int mf_cuda_jit_library(mf_context ctx, const std::string &prog, cudaLibrary_t *lib) { return library(ctx, prog, lib); }

/* The stored data in the narrowest layout that holds them: one block with D3's upper triangle, else one
 * block, else full (each mode checks what it assumes; a wider one runs where it does not hold), so that
 * the device never holds more than one layout's data. Where the full layout would store more entries per
 * point than the geometry (MF_NG: dim^2 + 1 + dim), the operator runs fused instead: the geometry stored,
 * the g-functions evaluated at every application (docs/physics.md: stored or fused). MFREE_PHYSICS_FUSED=1
 * runs every operator fused, =0 none (measurements). */
extern "C" int mf_cuda_physics_setup(mf_operator op)
{
  mf_context ctx = op->ctx;
  const mf_space s = op->space;
  mf_hex_phys *h = mf_hexphys(op);
  if (!h->dev) MF_CALL(device_ops(op)); /* made already where the built-in's data did not fit */
  phys_dev *d = dev_of(op);
  const double t0 = mf_phase_begin(ctx);
  const size_t npts = (size_t)s->ncells * h->nqp;
  const int ng = s->dim * s->dim + 1 + s->dim;
  const char *ef = getenv("MFREE_PHYSICS_FUSED");
  const int force = ef && !strcmp(ef, "1") ? 1 : ef && !strcmp(ef, "0") ? 0 : -1;
  int mode = force == 1 ? 4 : h->lay.has[3] ? 2 : s->ncomp > 1 ? 1 : 0, ierr = 0;
  for (;;) {
    mf_phys_layout L;
    mf_phys_layout_make(s->dim, s->ncomp, mode ? 1 : s->ncomp, mode == 2, h->lay.has, &L);
    if (mode == 0 && force != 0 && L.n > ng) mode = 4;
    const size_t n = mode == 4 ? (size_t)ng : (size_t)L.n;
    cudaError_t e = cudaMalloc((void **)&d->qd, sizeof(double) * (npts ? npts : 1) * n);
    if (e != cudaSuccess) {
      d->qd = NULL;
      ierr = cuda_fail(ctx, e, mode == 4 ? "the physics' stored geometry" : "the physics' stored data");
      break;
    }
    int shape = 0;
    ierr = setup_run(op, mode, d->qd, 0, 0, 0, &shape);
    if (mode == 4) {
      d->fused = !ierr;
      h->fused = d->fused;
      if (!ierr) mf_phys_layout_make(s->dim, s->ncomp, s->ncomp, 0, h->lay.has, &h->lay); /* what the g-functions give */
      break;
    }
    if (ierr || !(mode && shape)) {
      if (!ierr) h->lay = L;
      break;
    }
    cudaFree(d->qd); /* a wider layout */
    d->qd = NULL;
    mode = (shape & 1) || s->ncomp == 1 ? 0 : 1;
  }
  mf_phase_end(ctx, MF_PHASE_GEOMETRY, t0);
  return ierr;
}

namespace {
// the state's kernels (a library of their own, MF_STATE: compiled at the first state of an operator's shape)
int state_kernels(mf_operator op, phys_dev *d)
{
  if (d->setup_state) return 0;
  mf_context ctx = op->ctx;
  const mf_space s = op->space;
  cudaLibrary_t lib = NULL;
  MF_CALL(library(ctx, program(mf_hexphys(op), s, d->cpb, false, true), &lib));
  MF_CALL(kernel(ctx, lib, "mfree_apply_fused_state", &d->apply_fused_state));
  MF_CALL(kernel(ctx, lib, "mfree_diagonal_state", &d->diagonal_state));
  MF_CALL(kernel(ctx, lib, "mfree_assemble_state", &d->assemble_state));
  return kernel(ctx, lib, "mfree_setup_state", &d->setup_state);
}
} // namespace

/* The operator at the state u (mf_operator_set_state on the device): the g-functions at (u, grad u) of every point
 * stored in the full layout where it holds no more entries per point than the geometry (dim^2 + 1 + dim) and, where
 * the operator runs fused already, the new data fit beside its geometry; else fused: the geometry stored (made here
 * where the operator was stored before), the state's values kept (one vector) and the g-functions evaluated at every
 * application (MFREE_PHYSICS_FUSED=1 or 0 forces either; docs/nonlinear.md). Checked at every point first (a
 * degenerate cell, a value that is not finite: refused naming the point, the data before kept on every rank).
 * The caller (lib/hex/physics_hex.c) leaves a built-in fit. Collective. */
extern "C" int mf_cuda_physics_state(mf_operator op, mf_vector u)
{
  mf_context ctx = op->ctx;
  const mf_space s = op->space;
  mf_hex_phys *h = mf_hexphys(op);
  int ierr = h->dev ? 0 : device_ops(op);
  phys_dev *d = dev_of(op);
  if (!ierr) ierr = state_kernels(op, d);
  MF_CALL(mf_agree(ctx, ierr)); // every rank reaches the rule's reduction, or none
  const size_t npts = (size_t)s->ncells * h->nqp, nl = (size_t)s->nlocal;
  const int ng = s->dim * s->dim + 1 + s->dim;
  mf_phys_layout full;
  mf_phys_layout_make(s->dim, s->ncomp, s->ncomp, 0, h->lay.has, &full);
  const char *ef = getenv("MFREE_PHYSICS_FUSED");
  const int force = ef && !strcmp(ef, "1") ? 1 : ef && !strcmp(ef, "0") ? 0 : -1;
  int fused = force >= 0 ? force : full.n > ng;
  size_t free_b = 0, total_b = 0;
  if (!fused && force != 0 && d->fused && // the geometry kept already: no room for stored data beside the old
      (cudaMemGetInfo(&free_b, &total_b) != cudaSuccess || free_b / 2 < sizeof(double) * npts * (size_t)full.n)) {
    cudaGetLastError();
    fused = 1;
  }
  if (ctx->size > 1 && MPI_Allreduce(MPI_IN_PLACE, &fused, 1, MPI_INT, MPI_MAX, ctx->comm) != MPI_SUCCESS)
    return mf_error_set(ctx, MF_ERR_MPI, __FILE__, __LINE__, __func__, "MPI_Allreduce failed");
  const size_t bytes = sizeof(double) * (npts * (size_t)(fused ? ng : full.n) + 1); // after the ranks agree
  const double t0 = mf_phase_begin(ctx);
  double *qd = NULL, *geo = NULL, *sv = NULL;
  int shape = 0;
  char what[112];
  snprintf(what, sizeof what, "the physics' %s at a state (%zu points x %d)", fused ? "geometry" : "data", npts,
           fused ? ng : full.n);
  if (fused) {
    cudaError_t e = cudaMalloc((void **)&sv, sizeof(double) * (nl + 1));
    if (e != cudaSuccess) ierr = cuda_fail(ctx, e, "the state's values");
    if (!ierr && (e = cudaMemcpy(sv, u->data, sizeof(double) * nl, cudaMemcpyDeviceToDevice)) != cudaSuccess)
      ierr = cuda_fail(ctx, e, "copying the state");
    if (!ierr && !d->fused) { // the geometry, where the operator was stored
      if ((e = cudaMalloc((void **)&geo, bytes)) != cudaSuccess) ierr = cuda_fail(ctx, e, what);
      if (!ierr) ierr = setup_run(op, 4, geo, 0, 0, 0, &shape);
    }
    if (!ierr) ierr = setup_run(op, 5, NULL, 0, 0, 0, &shape, sv);
  } else {
    const cudaError_t e = cudaMalloc((void **)&qd, bytes);
    if (e != cudaSuccess) ierr = cuda_fail(ctx, e, what);
    if (!ierr) ierr = setup_run(op, 5, qd, 0, 0, 0, &shape, u->data);
  }
  mf_phase_end(ctx, MF_PHASE_GEOMETRY, t0);
  ierr = mf_agree(ctx, ierr); // every rank keeps its data before, or every rank takes the new
  if (ierr) {
    cudaFree(qd);
    cudaFree(geo);
    cudaFree(sv);
    return ierr;
  }
  if (fused) {
    if (geo) { // the stored data before dropped for the geometry
      cudaFree(d->qd);
      d->qd = geo;
    }
  } else {
    cudaFree(d->qd);
    d->qd = qd;
  }
  cudaFree(d->sv);
  d->sv = sv;
  d->fused = fused;
  h->fused = fused;
  h->lay = full;
  op->ops.apply = apply_op; // the caller sets the rest where the operator ran on a built-in
  return 0;
}

/* A one-component physics without g1, g2 written straight into the device data of the built-in operator
 * inner (same space and rule); *fits 0 where its D3 is not symmetric somewhere (the caller then makes
 * its own data). The operator's kernels (residual) are made either way. */
extern "C" int mf_cuda_physics_setup_builtin(mf_operator op, mf_operator inner, int *fits)
{
  mf_context ctx = op->ctx;
  mf_hex_phys *h = mf_hexphys(op);
  *fits = 0;
  MF_CALL(device_ops(op));
  const double t0 = mf_phase_begin(ctx);
  const mf_qdata *qd = &mf_hexop(inner)->qd;
  double *out = ((mf_cuda_operator *)mf_hexop(inner)->dev)->qd;
  int shape = 0;
  const int ierr = setup_run(op, 3, out, qd->batch, (long long)qd->block_stride, (long long)qd->batch_stride, &shape);
  mf_phase_end(ctx, MF_PHASE_GEOMETRY, t0);
  if (!ierr && !(shape & 2)) {
    *fits = 1;
    mf_phys_layout_make(op->space->dim, 1, 1, 1, h->lay.has, &h->lay);
  }
  return ierr;
}

/* The float copy op of like (multigrid's float V-cycle; op a copy of like's description, made by
 * lib/hex/physics_hex.c): the float kernels of like's shape (a library of their own: MF_FLOAT_COPY), its
 * stored data, or fused its geometry, rounded to float on the device. It applies to float vectors only; no residual and no diagonal
 * (the double operator's serve). */
extern "C" int mf_cuda_physics_single(mf_operator op, mf_operator like)
{
  mf_context ctx = op->ctx;
  const mf_space s = op->space;
  mf_hex_phys *h = mf_hexphys(op);
  const phys_dev *ld = dev_of(like);
  MF_CHECK(ld && ld->qd, ctx, MF_ERR_ARGUMENT, "the float copy of a physics operator whose device data are not made");
  MF_CHECK(!ld->sv, ctx, MF_ERR_UNSUPPORTED,
           "physics '%s' at a state evaluates its g-functions at every application (fused): no float copy (use "
           "double levels)", h->ph.name);
  phys_dev *d = NULL;
  int ierr = make_dev(op, &d, true);
  h->dev = d;
  op->ops.destroy = destroy_op;
  op->ops.apply = apply_op;
  op->ops.residual = NULL;
  op->ops.diagonal = NULL;
  if (ierr) return ierr;
  d->fused = ld->fused;
  const size_t n = (size_t)s->ncells * h->nqp * (d->fused ? (size_t)(s->dim * s->dim + 1 + s->dim) : (size_t)h->lay.n);
  char what[96];
  snprintf(what, sizeof what, "the float copy of a physics' %s (%zu values)", d->fused ? "geometry" : "stored data", n);
  MF_CALL(mf_cuda_require(ctx, sizeof(float) * n, what));
  cudaError_t e = cudaMalloc((void **)&d->qdf, sizeof(float) * (n ? n : 1));
  if (e != cudaSuccess) {
    d->qdf = NULL;
    return cuda_fail(ctx, e, what);
  }
  return mf_cuda_round(ctx, d->qdf, ld->qd, n, what);
}

/* The diagonal of op added into dv (zeroed by the caller): from the stored data or, fused, from the
 * g-functions at the points. */
extern "C" int mf_cuda_physics_diagonal(mf_operator op, mf_vector dv)
{
  const mf_space s = op->space;
  const mf_cuda_space *ds = (const mf_cuda_space *)s->dev;
  const mf_hex_phys *h = mf_hexphys(op);
  phys_dev *d = dev_of(op);
  const int *cells = ds->cell_nodes;
  const short *mask = (const short *)ds->mask;
  const double *P = ds->mask ? ds->P : NULL, *qd = d->fused ? NULL : d->qd, *geo = d->fused ? d->qd : NULL;
  int nb = h->lay.nb, sym = h->lay.sym, ncells = s->ncells;
  double *yd = dv->data;
  if (d->sv) { // fused at a state
    void *sargs[] = {(void *)&cells, (void *)&mask, (void *)&d->B,  (void *)&d->D,   (void *)&P,
                     (void *)&d->qw, (void *)&d->BB, (void *)&d->BG, (void *)&d->GG, (void *)&geo,
                     (void *)&d->k,  (void *)&ncells, (void *)&d->sv, (void *)&yd};
    return launch(op->ctx, d->diagonal_state, (unsigned)((ncells + d->cpb - 1) / d->cpb), (unsigned)d->nt, d->shmem,
                  sargs, "physics diagonal at a state");
  }
  void *args[] = {(void *)&cells, (void *)&mask, (void *)&d->B,  (void *)&d->D,   (void *)&P,     (void *)&d->qw,
                  (void *)&d->BB, (void *)&d->BG, (void *)&d->GG, (void *)&qd,    (void *)&nb,    (void *)&sym,
                  (void *)&geo,   (void *)&d->k,  (void *)&ncells, (void *)&yd};
  return launch(op->ctx, d->diagonal, (unsigned)((ncells + d->cpb - 1) / d->cpb), (unsigned)d->nt, d->shmem, args,
                "physics diagonal");
}

/* The faces' terms added into y (mode 0 the operator's, 1 the residual's, 2 the diagonal's): mfree_faces,
 * one block per boundary face entry. */
extern "C" int mf_cuda_physics_faces(mf_operator op, int mode, mf_vector x, mf_vector y)
{
  mf_context ctx = op->ctx;
  const mf_space s = op->space;
  const mf_cuda_space *ds = (const mf_cuda_space *)s->dev;
  const mf_hex_phys *h = mf_hexphys(op);
  phys_dev *d = dev_of(op);
  if (!h->nbf || (mode != 1 && !mf_hex_phys_faces_has_operator(h))) return 0;
  unsigned long long *flag = NULL; // the residual's check alone (no allocation in a product's path)
  if (mode == 1) MF_CALL(mf_jit::new_flag(ctx, &flag, "a flag of the faces' residual"));
  const int *cells = ds->cell_nodes;
  const short *mask = (const short *)ds->mask;
  const double *P = ds->mask ? ds->P : NULL, *xd = x ? x->data : NULL;
  double *yd = y->data;
  void *args[] = {(void *)&cells,      (void *)&mask,      (void *)&d->B,     (void *)&P,    (void *)&d->bf_cell,
                  (void *)&d->bf_face, (void *)&d->bf_term, (void *)&d->fg,   (void *)&d->k, (void *)&mode,
                  (void *)&xd,         (void *)&yd,         (void *)&flag};
  const unsigned nt = (unsigned)h->nqp;
  int ierr = launch(ctx, d->faces, (unsigned)h->nbf, nt, 0, args, "physics faces");
  const long long f = ierr || mode != 1 ? -1 : first_flag(ctx, flag, &ierr);
  if (flag) cudaFree(flag);
  if (!ierr && f >= 0) {
    const int k = (int)(f >> 20), q = (int)(f & 0xfffff), nqf = s->dim == 2 ? h->basis.nq : h->basis.nq * h->basis.nq;
    std::vector<double> pts((size_t)nqf * (2 * s->dim + 1)), X((size_t)s->npc * s->dim);
    mf_hex_phys_face_points(op, k, X.data(), pts.data()); // the point's place, for the message
    char xs[96];
    mf_point_text(s->dim, pts.data() + (size_t)q * (2 * s->dim + 1), xs, sizeof xs);
    ierr = mf_error_set(ctx, MF_ERR_ARGUMENT, __FILE__, __LINE__, __func__,
                        "physics '%s': a boundary term f0 gave a value that is not finite at face point %d of cell %d "
                        "(rank %d), x = %s (the faces' kernel on the device): the boundary functions must give "
                        "finite values", h->ph.name, q, h->bf_cell[k], ctx->rank, xs);
  }
  return ierr;
}

// The assembled matrix's values on the device (A: the CSR operator of op's space, its pattern there: the
// backend's assembly.pattern): allocated here, zeroed, then every cell's constrained element matrix added
// by mfree_assemble (physics_jit.cuh); freed with A (A->ops.destroy).
static int destroy_assembled_values(mf_operator A)
{
  mf_cuda_free(A->ctx, mf_csr(A)->vals);
  mf_csr(A)->vals = NULL;
  return 0;
}
extern "C" int mf_cuda_physics_assemble(mf_operator op, mf_operator A)
{
  mf_context ctx = op->ctx;
  const mf_space s = op->space;
  const mf_cuda_space *ds = (const mf_cuda_space *)s->dev;
  const mf_hex_phys *h = mf_hexphys(op);
  phys_dev *d = dev_of(op);
  const size_t nnz = (size_t)s->csr_rowptr[s->nlocal];
  char what[96];
  snprintf(what, sizeof what, "the assembled values (%zu)", nnz);
  MF_CALL(mf_cuda_require(ctx, sizeof(double) * nnz, what));
  MF_CALL(mf_cuda_malloc(ctx, (void **)&mf_csr(A)->vals, sizeof(double) * (nnz ? nnz : 1), what));
  A->ops.destroy = destroy_assembled_values;
  if (cudaMemset(mf_csr(A)->vals, 0, sizeof(double) * nnz) != cudaSuccess)
    return cuda_fail(ctx, cudaGetLastError(), "zeroing the assembled values");
  if (s->ncells == 0) return 0;
  const int *cells = ds->cell_nodes, *colidx = ds->csr_colidx;
  const int64_t *rowptr = ds->csr_rowptr;
  const short *mask = (const short *)ds->mask;
  const double *P = ds->mask ? ds->P : NULL, *qd = d->fused ? NULL : d->qd, *geo = d->fused ? d->qd : NULL;
  int nb = h->lay.nb, sym = h->lay.sym, ncells = s->ncells;
  double *vals = mf_csr(A)->vals;
  if (d->sv) { // fused at a state
    void *sargs[] = {(void *)&cells, (void *)&mask,   (void *)&d->B,   (void *)&d->D,    (void *)&P,
                     (void *)&d->qw, (void *)&geo,    (void *)&d->k,   (void *)&ncells,  (void *)&d->sv,
                     (void *)&rowptr, (void *)&colidx, (void *)&vals};
    return launch(ctx, d->assemble_state, (unsigned)((ncells + d->cpb - 1) / d->cpb), (unsigned)d->nt, d->shmem,
                  sargs, "physics assembly at a state");
  }
  void *args[] = {(void *)&cells, (void *)&mask, (void *)&d->B, (void *)&d->D,   (void *)&P,      (void *)&d->qw,
                  (void *)&qd,    (void *)&nb,   (void *)&sym,  (void *)&geo,    (void *)&d->k,   (void *)&ncells,
                  (void *)&rowptr, (void *)&colidx, (void *)&vals};
  return launch(ctx, d->assemble, (unsigned)((ncells + d->cpb - 1) / d->cpb), (unsigned)d->nt, d->shmem, args,
                "physics assembly");
}
