// physics_vcol.cu -- the vector kernel's shape on the cuda backend (lib/cuda/physics.cu's mfree_apply_vcol):
// which design (column, thread or slab), its launch, and the 1D matrices as constants of the run-time text.
#include "physics_vcol.h"

#include "space_impl.h"
#include "column_cell.cuh"
#include "cell_thread.cuh"
#include "cell_slab.cuh"

#include <cuda_runtime.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

// an environment setting of the vector kernel's launch shape (a positive integer), else def
static int env_int(const char *name, int def)
{
  const char *v = getenv(name);
  if (!v || !*v) return def;
  char *end = NULL;
  const long n = strtol(v, &end, 10);
  return *end || n < 1 || n > 64 ? def : (int)n;
}

// an environment setting of a design's block: 0 (not the design), or 32..1024 threads in steps of step; -1
// where unset or anything else (the default)
static int env_block(const char *name, int step)
{
  const char *v = getenv(name);
  if (!v || !*v) return -1;
  char *end = NULL;
  const long n = strtol(v, &end, 10);
  return !*end && (n == 0 || (n >= 32 && n <= 1024 && n % step == 0)) ? (int)n : -1;
}

// The vector kernel's shape: the built-ins' launch (mfc::shape: about 256 threads of NQ^(dim-1) per cell,
// no register cap) and all components through the steps together (nj = ncomp), except the gradient with
// NQ >= 9 points per direction and not collocated, where the registers of three components spill (H100,
// perf/results/setup-vcol-h100-2026-11-26: bp4 p = 7, 8 at 0.47x and 0.48x of one component at a time;
// elsewhere together was 1.01-1.50x faster, but for bp6 p = 4, 5 and bp2 p = 8 at 0.95-0.97x).
// With the components together, the gradient's kernels at 3..5 points (collocated) or 4 (not) are held to
// two blocks per SM (at most 128 registers): bp6 p = 2..4 and bp4 p = 2 at 1.08x, 0.99x, 1.35x and 1.49x
// of no cap; elsewhere the cap spilled (bp4 p = 4: 0.74x) or changed little (setup-vcol-h100-2026-11-26,
// minb/). The components go together only where their buffers fit the device's shared memory per block
// (4 components at 9 collocated points need 213 KB: an H100 has 227, an A100 163). MFREE_PHYSICS_VCOL_CPB,
// _MINB and _NJ (1 or the components) override it (measurements, tests).
// 3D Q1 and Q2 without hanging nodes go to the thread design instead, where the slab design below is not
// taken (cell_thread.cuh: *tpb threads per block, one per component of a cell; MFREE_PHYSICS_VCOL_THREAD=0
// keeps the column design, =N sets the block; either setting also sets aside the slab design's default);
// where a cell's stored entries are of an even count (so that cells start on a pair) it reads them two
// points per load where aligned (*vload; MFREE_PHYSICS_VCOL_VLOAD=0: one, =1: two wherever it can; the
// column design's MFREE_PHYSICS_VCOL_MINB also bounds the thread design's launch where set), but for the
// gradient at three nodes and Gauss points, whose 255 registers spilled more with it (H100,
// perf/results/vector-thread-h100-2026-11-27/r67: bp6 p = 1 1.24x, bp2 p = 2 1.02x, bp4 p = 2 0.98x).
// The slab design (cell_slab.cuh: a cell's component on NQ lanes of a warp, x by shuffles, the 1D matrices
// constants of the text) can take 3D shapes of 2..6 nodes per direction without hanging nodes: *slab threads
// per block (0: another design), *xplane its x derivative plane by plane (the gradient). It is the default
// at the forms and shapes where it was measured faster on the H100 (perf/results/vector-slab-h100-2026-12-07
// and vector-default-h100-2026-12-07, against the designs below on the same machine): 128 threads for the
// mass alone at 3..5 nodes and q = p + 2 points (bp2 p = 2..4: 1.04, 1.80, 1.57x) and the gradient alone
// at 3, 4 nodes and q = p + 2 (bp4 p = 2, 3: 1.39, 1.56x; in the later run 1.38, 1.14x, the column design
// at the top of its spread at p = 3); for the collocated gradient 128 threads held to 128 registers (four
// blocks per SM) at 3, 4 nodes (bp6 p = 2, 3: 1.05, 1.10x; without the cap 1.02, 0.94x; at p = 2 the three
// within one run's noise) and 256 threads at 5 nodes (bp6 p = 4: 1.17x; 128 threads 1.10x). Not at 2 nodes
// (level with the thread design), for the gradient at 5 nodes and q = p + 2 (bp4 p = 4: 0.95x, 255
// registers and a spill; a cap spills more), at 6 nodes (bp2, bp4, bp6 p = 5 at 128 threads: 0.85, 0.46,
// 0.84x the column design, vector-default-h100-2026-12-07/r92), for the mass and gradient together or at
// other rules (not measured). MFREE_PHYSICS_VCOL_SLAB=N (a multiple of 32 up to 1024) takes it with blocks of N
// threads wherever the shape fits, with no register cap, =0 never; MFREE_PHYSICS_VCOL_XPLANE=0 keeps the x
// derivative; MFREE_PHYSICS_VCOL_MINB=M sets any design's blocks per SM (=1: no cap). *qstage: the slab
// design's stored entries staged in shared memory per block (cell_slab.cuh's QSTAGE), by default with the
// slab design's default launch where it measured faster (qstage_default), wherever it fits with
// MFREE_PHYSICS_VCOL_QSTAGE=1, never with =0.
static int slab_default(const mf_hex_phys *h, int n1, int nq)
{
  const bool mass = h->lay.has[0], grad = h->lay.has[3];
  if (mass && !grad) return nq == n1 + 1 && n1 >= 3 && n1 <= 5 ? 128 : 0;
  if (!grad || mass) return 0;
  if (!h->basis.collocated) return nq == n1 + 1 && (n1 == 3 || n1 == 4) ? 128 : 0;
  return n1 == 3 || n1 == 4 ? 128 : n1 == 5 ? 256 : 0;
}

// The stage of stored entries (QSTAGE) with the slab design's default launch: where it measured faster on
// the H100 (perf/results/vector-stage-h100-2026-12-07, two runs each, GDoF/s staged / not): the mass alone
// at 3, 4 nodes and q = p + 2 (bp2 p = 2: 31.37 / 30.09, p = 3: 40.56 / 39.26) and the collocated gradient
// at 4 nodes (bp6 p = 3: 28.55 / 26.84). Slower elsewhere: bp2 p = 4 0.91x, bp4 p = 2, 3 0.87x, 0.84x,
// bp6 p = 2 0.87x, p = 4 0.73x (its shared memory takes blocks per SM; the long wait it removes is one
// plane's entries, of fewer points there).
static int qstage_default(const mf_hex_phys *h, int n1, int nq)
{
  const bool mass = h->lay.has[0], grad = h->lay.has[3];
  if (mass && !grad) return nq == n1 + 1 && (n1 == 3 || n1 == 4);
  return grad && !mass && h->basis.collocated && n1 == 4;
}

void vcol_shape(const mf_hex_phys *h, const mf_space s, int *cpb, int *minb, int *nj, int *tpb, int *vload, int *slab,
                int *xplane, int *qstage)
{
  const int dim = s->dim, ncomp = s->ncomp, nq = h->basis.nq, nt = dim == 3 ? nq * nq : nq;
  const char *evl = getenv("MFREE_PHYSICS_VCOL_VLOAD"), *ex = getenv("MFREE_PHYSICS_VCOL_XPLANE");
  const int tv = env_block("MFREE_PHYSICS_VCOL_THREAD", 1), sv = env_block("MFREE_PHYSICS_VCOL_SLAB", 32);
  const bool tset = tv >= 0, sset = sv >= 0;
  const int tp = tset ? tv : 64;
  const int sp = sset ? sv : tset ? 0 : slab_default(h, s->n1, nq);
  *slab = mfc::slab_design_fits(dim, s->n1, nq, h->basis.collocated) && s->nmasked == 0 ? sp : 0;
  *xplane = *slab && h->lay.has[3] && !(ex && !strcmp(ex, "0"));
  const char *eq = getenv("MFREE_PHYSICS_VCOL_QSTAGE");
  *qstage = *slab && (eq && !strcmp(eq, "1") ? 1 : eq && !strcmp(eq, "0") ? 0 : !sset && qstage_default(h, s->n1, nq));
  *tpb = !*slab && mfc::thread_design_fits(dim, s->n1, nq, h->basis.collocated) && s->nmasked == 0 ? tp : 0;
  const int ncs = (h->lay.has[0] ? 1 : 0) + (h->lay.has[3] ? dim * (dim + 1) / 2 : 0); // entries per point
  const bool pairs = *tpb && ncs * nq * nq * nq % 2 == 0;
  const int vdef = !(h->lay.has[3] && s->n1 == 3 && !h->basis.collocated); /* "0", "1"; anything else: this */
  *vload = pairs && (evl && !strcmp(evl, "0") ? 0 : evl && !strcmp(evl, "1") ? 1 : vdef);
  *cpb = env_int("MFREE_PHYSICS_VCOL_CPB", 256 / nt > 0 ? 256 / nt : 1);
  if (*cpb * nt > 1024) *cpb = 1024 / nt;
  int dev = 0, optin = 48 * 1024;
  if (cudaGetDevice(&dev) != cudaSuccess ||
      cudaDeviceGetAttribute(&optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, dev) != cudaSuccess) {
    cudaGetLastError();
    optin = 48 * 1024;
  }
  const int spills = h->lay.has[3] && !h->basis.collocated && nq >= 9;
  const int fits = sizeof(double) * mfc::colbuf_size(dim, s->n1, nq, *cpb, h->lay.has[3], s->nmasked > 0, ncomp) <=
                   (size_t)optin;
  // the gradient alone at six points per direction in 3D, as measured: bp4 p = 4 with q = p + 2 and bp6 p = 5
  // collocated, without hanging nodes (other shapes with six points keep the rule before, not measured): one
  // component at a time, two blocks per SM (128 registers; ptxas spills 24 and 12 B there). On the H100
  // (perf/results/vector-six-h100-2026-12-07, three runs each, GDoF/s) bp4 p = 4 11.24-11.25 against 10.56-10.60 with
  // the components together and one block per SM (1.06x), bp6 p = 5 25.71-25.74 against 25.05-25.25 (1.02x); at
  // seven and more points the same launch lost (bp4 p = 6 0.79x, bp6 p = 6, 7, 8 0.78x, 0.61x, 0.53x), and so did
  // larger blocks with the components together (bp6 p = 5 at 8 and 9 cells per block 0.95x, p = 6 at 6 cells 0.94x)
  const int six = dim == 3 && ncomp > 1 && h->lay.has[3] && !h->lay.has[0] && nq == 6 && !*tpb && !*slab &&
                  s->n1 == (h->basis.collocated ? 6 : 5) && s->nmasked == 0;
  *nj = env_int("MFREE_PHYSICS_VCOL_NJ", spills || !fits || six ? 1 : ncomp) >= ncomp ? ncomp : 1;
  const int cap = dim == 3 && h->lay.has[3] && *nj > 1 &&
                  (h->basis.collocated ? nq >= 3 && nq <= 5 : nq == 4);
  const int slab_cap = *slab && !sset && h->lay.has[3] && h->basis.collocated && (s->n1 == 3 || s->n1 == 4);
  *minb = env_int("MFREE_PHYSICS_VCOL_MINB", (cap || (six && *nj == 1)) && !*tpb && !*slab ? 2 : slab_cap ? 4 : 0);
  // the stage must fit the device's shared memory per block (as a 1024-thread block's at 4 nodes would not)
  if (*qstage && sizeof(double) * mfc::slab_stage_size(nq, ncomp, *slab, ncs) > (size_t)optin) *qstage = 0;
}

// The 1D matrices of b as constants of the text (the slab design: constant indices fold to immediate
// operands): B (nq x n1), G = B' (nq x n1) and the points' D (nq x nq), row-major, to the last bit (%.17g),
// and mf_cbasis, which reads them.
std::string const_basis(const mf_basis1d *b)
{
  std::string t;
  char buf[64];
  const double *m[3] = {b->B, b->Bg, b->D};
  const char *name[3] = {"mf_cb_B", "mf_cb_G", "mf_cb_D"};
  for (int w = 0; w < 3; w++) {
    const int n = b->nq * (w < 2 ? b->n1 : b->nq);
    snprintf(buf, sizeof buf, "__device__ const double %s[%d] = {", name[w], n);
    t += buf;
    for (int i = 0; i < n; i++) {
      snprintf(buf, sizeof buf, "%s%.17g", i ? ", " : "", m[w][i]);
      t += buf;
    }
    t += "};\n";
  }
  t += "struct mf_cbasis {\n"
       "  __device__ static __forceinline__ double b(int i) { return mf_cb_B[i]; }\n"
       "  __device__ static __forceinline__ double g(int i) { return mf_cb_G[i]; }\n"
       "  __device__ static __forceinline__ double d(int i) { return mf_cb_D[i]; }\n};\n";
  return t;
}
