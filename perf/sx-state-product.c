/* sx-state-product.c -- the fused simplex product at a state (mfree_sx_apply_state) alone on the GPU: the
 * Neo-Hookean P1 operator of mfree-hyperelastic (apps/hyperelastic.h), compiled by NVRTC from the library's kernel
 * text as lib/cuda/physics_simplex.cu does, timed on a box mesh refined as the app's (CUDA events, warm-up, the
 * median), with an include folder of variant headers ahead of lib/ (perf/sx_state_variants.py writes them).
 *
 *   sx-state-product [--cubes N] [--refine L] [--variant DIR] [--source FILE] [--threads T] [--group G]
 *                    [--arch sm_XY [--report KERNEL]]
 *
 * --cubes N --refine L: the box of N^3 cubes (6 tetrahedra each) refined L times (the app's mesh 8: 25 and 3; the
 * unrefined box of 200 cubes: 200 and 0); --source FILE: the physics' C source instead of the app's (functions
 * hyper_f0, hyper_f1, hyper_g3); --group G: the cells transposed in groups of 32 G (cell p G + k of a group at
 * position 32 k + p: the siblings of a refined cell, or the tetrahedra of a cube, in different warps).
 * --arch sm_XY: compile for that architecture and print ptxas's report of the kernel (registers, spills; --report
 * NAME: of another kernel of the program), no GPU needed. Prints the registers, the median and fastest of 20 runs after 3, and ||y|| (the same for every numbering). */
#include <cuda_runtime.h>
#include <math.h>
#include <nvrtc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cuda/mf_jit_stubs.h"
#include "hyperelastic.h"
#include "simplex/mf_simplex.h"

#define CK(x)                                                                                                          \
  do {                                                                                                                 \
    cudaError_t e_ = (x);                                                                                              \
    if (e_ != cudaSuccess) {                                                                                           \
      fprintf(stderr, "sx-state-product: %s at line %d: %s\n", #x, __LINE__, cudaGetErrorString(e_));               \
      exit(1);                                                                                                         \
    }                                                                                                                  \
  } while (0)

static char *read_text(const char *path)
{
  FILE *f = fopen(path, "rb");
  if (!f) return NULL;
  fseek(f, 0, SEEK_END);
  const long n = ftell(f);
  fseek(f, 0, SEEK_SET);
  char *t = malloc((size_t)n + 1);
  if (t && fread(t, 1, (size_t)n, f) != (size_t)n) free(t), t = NULL;
  if (t) t[n] = 0;
  fclose(f);
  return t;
}

static int cmp(const void *a, const void *b)
{
  const float x = *(const float *)a, y = *(const float *)b;
  return (x > y) - (x < y);
}

int main(int argc, char **argv)
{
  int cubes = 25, refine = 3, threads = 128, group = 0;
  const char *variant = NULL, *srcfile = NULL, *only = NULL, *report = "mfree_sx_apply_state";
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
    if (!v || strncmp(a, "--", 2)) {
      fprintf(stderr, "sx-state-product: %s: %s\n", a, strncmp(a, "--", 2) ? "not an option" : "needs a value");
      return 2;
    }
    char *end = NULL;
    const long iv = strtol(v, &end, 10);
    const int isnum = end != v && *end == 0 && iv >= 0 && iv <= 1000000;
    if (!strcmp(a, "--cubes") || !strcmp(a, "--refine") || !strcmp(a, "--threads") || !strcmp(a, "--group")) {
      if (!isnum) {
        fprintf(stderr, "sx-state-product: %s %s: not a number in 0..1000000\n", a, v);
        return 2;
      }
      *(!strcmp(a, "--cubes") ? &cubes : !strcmp(a, "--refine") ? &refine : !strcmp(a, "--threads") ? &threads : &group) = (int)iv;
    }
    else if (!strcmp(a, "--variant")) variant = v;
    else if (!strcmp(a, "--source")) srcfile = v;
    else if (!strcmp(a, "--arch")) only = v;
    else if (!strcmp(a, "--report")) report = v;
    else {
      fprintf(stderr, "sx-state-product: unknown option %s\n", a);
      return 2;
    }
    i++;
  }
  if (cubes < 1 || cubes > MF_SIMPLEX_BOX_MAX_3D || refine < 0 || refine > 4 || threads < 32 || threads > 1024 ||
      threads % 32 || group < 0) {
    fprintf(stderr, "sx-state-product: --cubes 1..%d, --refine 0..4, --threads 32..1024 (multiple of 32), --group >= 0\n",
            MF_SIMPLEX_BOX_MAX_3D);
    return 2;
  }
  int dev = 0;
  if (!only && (cudaGetDeviceCount(&dev) != cudaSuccess || dev < 1)) {
    fprintf(stderr, "sx-state-product: no GPU\n");
    return 77;
  }
  char *src = srcfile ? read_text(srcfile) : NULL;
  if (srcfile && !src) {
    fprintf(stderr, "sx-state-product: cannot read %s\n", srcfile);
    return 2;
  }
  /* the program: physics_simplex.cu's program() for 3D P1, three components, the one-point rule, g3 alone */
  const char *head = "#define MF_DIM 3\n#define MF_NC 3\n#define MF_NN 4\n#define MF_NQS 1\n#define MF_HAS0 0\n#define MF_HAS1 0\n"
                     "#define MF_HAS2 0\n#define MF_HAS3 1\n#define MF_HASF0 1\n#define MF_HASF1 1\n#define MF_NS_FULL 81\n"
                     "#include \"physics/mf_physics.h\"\n#define MF_STATE 1\n#line 1 \"physics\"\n";
  const char *sig = "(int t, int dim, int nc, const double *u, const double *du, const double *x, const double *k, double *out)";
  const char *body = src ? src : hyper_source;
  size_t n = strlen(head) + strlen(body) + 2 * strlen(sig) + 1024;
  char *prog = malloc(n);
  snprintf(prog, n,
           "%s%s\n#line 1 \"glue\"\n__device__ inline void mfree_f%s\n{\n  switch (t) {\n  case 0: hyper_f0(dim, nc, u, du, x, k, "
           "out); break;\n  case 1: hyper_f1(dim, nc, u, du, x, k, out); break;\n  default: break;\n  }\n}\n"
           "__device__ inline void mfree_g%s\n{\n  if (t == 3) hyper_g3(dim, nc, u, du, x, k, out);\n}\n"
           "#include \"cuda/simplex_phys_jit.cuh\"\n",
           head, body, sig, sig);
  struct cudaDeviceProp prop;
  char arch[48], inc_v[1100], inc_l[1100];
  if (only) snprintf(arch, sizeof arch, "--gpu-architecture=%s", only);
  else {
    CK(cudaGetDeviceProperties(&prop, 0));
    snprintf(arch, sizeof arch, "--gpu-architecture=sm_%d%d", prop.major, prop.minor);
  }
  snprintf(inc_l, sizeof inc_l, "-I%s/lib", MFREE_SOURCE_DIR);
  snprintf(inc_v, sizeof inc_v, "-I%s", variant ? variant : MFREE_SOURCE_DIR "/lib");
  const char *opts[] = {arch, "-default-device", "--std=c++17", "-DMFREE_JIT", inc_v, inc_l, "--ptxas-options=-v"};
  nvrtcProgram p;
  if (!prog || nvrtcCreateProgram(&p, prog, "sx_state_product.cu", MF_JIT_NSTUBS, mf_jit_stub_texts, mf_jit_stub_names) != NVRTC_SUCCESS) {
    fprintf(stderr, "sx-state-product: NVRTC could not take the program\n");
    return 1;
  }
  const nvrtcResult rc = nvrtcCompileProgram(p, only ? 7 : 6, opts);
  size_t nl = 0;
  nvrtcGetProgramLogSize(p, &nl);
  char *log = malloc(nl + 1);
  nvrtcGetProgramLog(p, log);
  if (rc != NVRTC_SUCCESS) {
    fprintf(stderr, "sx-state-product: NVRTC:\n%s\n", log);
    return 1;
  }
  if (only) { /* ptxas's lines about the kernel */
    char entry[160];
    snprintf(entry, sizeof entry, "entry function '%s'", report);
    const char *at = strstr(log, entry);
    for (int lines = 0; at && lines < 4; lines++) {
      const char *e = strchr(at, '\n');
      printf("%.*s\n", e ? (int)(e - at) : (int)strlen(at), at);
      at = e ? e + 1 : NULL;
    }
    return 0;
  }
  size_t nbin = 0;
  char *bin = nvrtcGetCUBINSize(p, &nbin) == NVRTC_SUCCESS ? malloc(nbin) : NULL;
  if (!bin || nvrtcGetCUBIN(p, bin) != NVRTC_SUCCESS) {
    fprintf(stderr, "sx-state-product: no cubin\n");
    return 1;
  }
  nvrtcDestroyProgram(&p);
  cudaLibrary_t lib;
  cudaKernel_t ker;
  CK(cudaLibraryLoadData(&lib, bin, NULL, NULL, 0, NULL, NULL, 0));
  CK(cudaLibraryGetKernel(&ker, lib, "mfree_sx_apply_state"));

  /* the mesh: as the app's (mf_simplex_mesh_box, refined), its cells transposed in groups if asked */
  MPI_Init(&argc, &argv);
  mf_context ctx;
  mf_simplex_mesh m[5];
  if (mf_context_create(MPI_COMM_WORLD, "cpu", &ctx) || mf_simplex_mesh_box(ctx, 3, cubes, &m[0])) return 1;
  for (int l = 0; l < refine; l++)
    if (mf_simplex_mesh_refine(ctx, &m[l], &m[l + 1])) {
      fprintf(stderr, "sx-state-product: %s\n", mf_context_error_message(ctx));
      return 1;
    }
  const mf_simplex_mesh *M = &m[refine];
  const long long nv = M->nv, nc = M->ncells;
  int *C = malloc(sizeof(int) * 4 * nc);
  memcpy(C, M->cells, sizeof(int) * 4 * nc);
  if (group > 0) {
    const long long G = 32LL * group;
    for (long long b = 0; b + G <= nc; b += G)
      for (int q = 0; q < 32; q++)
        for (int k = 0; k < group; k++) memcpy(C + 4 * (b + 32LL * k + q), M->cells + 4 * (b + (long long)q * group + k), 16);
  }
  double *S = malloc(sizeof(double) * 3 * nv), *U = malloc(sizeof(double) * 3 * nv);
  for (long long v = 0; v < nv; v++)
    for (int d = 0; d < 3; d++) {
      const double *x = M->coords + 3 * v;
      S[3 * v + d] = 0.1 * sin(3.0 * x[0] + d) * x[1]; /* a smooth state, J > 0 */
      U[3 * v + d] = cos(7.0 * x[0] + 5.0 * x[1] + 3.0 * x[2] + d);
    }
  const hyper_problem hp = hyper_demo();
  const double lambda = hp.E * hp.nu / ((1.0 + hp.nu) * (1.0 - 2.0 * hp.nu)), mu = hp.E / (2.0 * (1.0 + hp.nu));
  const double B[4] = {0.25, 0.25, 0.25, 0.25}, Gr[12] = {-1, -1, -1, 1, 0, 0, 0, 1, 0, 0, 0, 1}, qp[3] = {0.25, 0.25, 0.25},
               qw[1] = {1.0 / 6.0}, k[8] = {lambda, mu, hp.B[0], hp.B[1], hp.B[2], hp.T[0], hp.T[1], hp.T[2]};
  int *dC;
  double *dX, *dS, *dU, *dY, *dB, *dG, *dqp, *dqw, *dk;
  CK(cudaMalloc((void **)&dC, sizeof(int) * 4 * nc));
  CK(cudaMalloc((void **)&dX, sizeof(double) * 3 * nv));
  CK(cudaMalloc((void **)&dS, sizeof(double) * 3 * nv));
  CK(cudaMalloc((void **)&dU, sizeof(double) * 3 * nv));
  CK(cudaMalloc((void **)&dY, sizeof(double) * 3 * nv));
  CK(cudaMalloc((void **)&dB, sizeof B));
  CK(cudaMalloc((void **)&dG, sizeof Gr));
  CK(cudaMalloc((void **)&dqp, sizeof qp));
  CK(cudaMalloc((void **)&dqw, sizeof qw));
  CK(cudaMalloc((void **)&dk, sizeof k));
  CK(cudaMemcpy(dC, C, sizeof(int) * 4 * nc, cudaMemcpyHostToDevice));
  CK(cudaMemcpy(dX, M->coords, sizeof(double) * 3 * nv, cudaMemcpyHostToDevice));
  CK(cudaMemcpy(dS, S, sizeof(double) * 3 * nv, cudaMemcpyHostToDevice));
  CK(cudaMemcpy(dU, U, sizeof(double) * 3 * nv, cudaMemcpyHostToDevice));
  CK(cudaMemcpy(dB, B, sizeof B, cudaMemcpyHostToDevice));
  CK(cudaMemcpy(dG, Gr, sizeof Gr, cudaMemcpyHostToDevice));
  CK(cudaMemcpy(dqp, qp, sizeof qp, cudaMemcpyHostToDevice));
  CK(cudaMemcpy(dqw, qw, sizeof qw, cudaMemcpyHostToDevice));
  CK(cudaMemcpy(dk, k, sizeof k, cudaMemcpyHostToDevice));
  int ncells = (int)nc;
  void *args[] = {&dC, &dX, &dC, &dB, &dG, &dqp, &dqw, &dk, &ncells, &dS, &dU, &dY};
  const dim3 grid = {(unsigned)((nc + threads - 1) / threads), 1, 1}, block = {(unsigned)threads, 1, 1};
  cudaEvent_t a, b;
  CK(cudaEventCreate(&a));
  CK(cudaEventCreate(&b));
  float ms[23];
  for (int r = 0; r < 23; r++) {
    CK(cudaMemset(dY, 0, sizeof(double) * 3 * nv));
    CK(cudaEventRecord(a, 0));
    CK(cudaLaunchKernel((const void *)ker, grid, block, args, 0, 0));
    CK(cudaEventRecord(b, 0));
    CK(cudaEventSynchronize(b));
    CK(cudaEventElapsedTime(&ms[r], a, b));
  }
  qsort(ms + 3, 20, sizeof(float), cmp);
  CK(cudaMemcpy(U, dY, sizeof(double) * 3 * nv, cudaMemcpyDeviceToHost));
  double yy = 0.0;
  for (long long i = 0; i < 3 * nv; i++) yy += U[i] * U[i];
  struct cudaFuncAttributes at;
  CK(cudaFuncGetAttributes(&at, (const void *)ker));
  const char *vname = variant ? strrchr(variant, '/') : NULL, *sname = srcfile ? strrchr(srcfile, '/') : NULL;
  printf("%s: variant %s, physics %s, cubes %d refined %d, %lld cells, %lld DoFs, %d threads, group %d: %d registers, median %.3f ms, fastest "
         "%.3f ms, %.3g cells/s, ||y|| %.12e\n",
         prop.name, vname ? vname + 1 : variant ? variant : "lib", sname ? sname + 1 : srcfile ? srcfile : "app", cubes, refine, nc, 3 * nv, threads, group, at.numRegs, ms[3 + 10],
         ms[3], nc / (ms[3 + 10] * 1e-3), sqrt(yy));
  for (int l = 0; l <= refine; l++) mf_simplex_mesh_free(&m[l]);
  mf_context_destroy(&ctx);
  MPI_Finalize();
  return 0;
}
