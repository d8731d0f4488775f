/* simplex-bench -- throughput of the simplex action kernels on the GPU (lib/cuda/simplex.cu) against
 * the ceilings measured in the same run: a STREAM triad and an FP64 peak (perf/triad.cu, the same
 * measurements as mfree-bench).
 *
 * Problems, on the built-in box meshes (mf_simplex_mesh_box: triangles, Kuhn tetrahedra), P_p with
 * the default rule (degree 2p), p = 1..4, dim 2 and 3:
 *   simplex-mass        y = M x
 *   simplex-laplace     y = K x
 *   simplex-helmholtz   y = (M + K) x
 *   simplex-elasticity  linear elasticity (lambda = 1.7, mu = 0.6), dim components per DoF
 * Sizes: the smallest n whose DoFs (unknowns: DoFs x components for elasticity) reach --dofs (default
 * 1e7), within the mesh builder's range (n <= 4096 in 2D, <= 128 in 3D: 3D P1 stops at 129^3 DoFs).
 * ndofs and the DoF rates count unknowns.
 *
 * Byte model (bytes_per_dof, the fewest bytes per application): x read once and y written once (8 B
 * each per unknown), the cell DoFs (4 B x nnodes per cell), the cells' vertex ids (4 B x (dim + 1)
 * per cell), the vertex coordinates (8 B x dim per vertex), and c(x_q) where the operator has one
 * (none here). Flop model (flops_per_dof): the flops per cell of the form the configuration runs
 * (mf_simplex_cuda_config.flops_per_cell: the quadrature form counts the values and gradients at the
 * points, the pointwise operator and the integration; the reference form N (2N + 2) per reference
 * matrix; the gradient form 2 dim n1 (2N + dim) and, with a mass part, 2 N^2 + N) times cells / DoFs.
 * The roofline takes the fewest flops of any candidate form of the operator (min_flops_per_dof in the
 * "# model" line: the gradient form's for Laplace, Helmholtz and elasticity but 3D P4), so a configuration of a
 * costlier form is measured against the cheapest form's ceiling. Both models are printed per case as a
 * "# model" line. frac_of_triad = gb_per_s / triad; frac_of_roofline = DoF/s / min(triad /
 * bytes_per_dof, fp64 / min_flops_per_dof).
 * Timing: CUDA events around repeated applications after a warm-up, median of --reps repeats
 * (mf_bench_time_ms). The configuration is the cost model's, or the measured fastest with --tune (or
 * MFREE_SIMPLEX_TUNE=1); the design column names it: strategy-form-tTILE-bTHREADS-sSTAGE[-tuned], form
 * quad, ref or grad.
 * setup_s: the device operator's creation (uploads, model, tuning when asked), the device
 * synchronised. No CG runs here: cg_ms_per_iter and cg_vs_apply are empty.
 *
 * Usage: mfree-simplex-bench [--problem NAME|all] [--dim 2|3|all] [--degree P|all] [--dofs N]
 *                            [--reps R] [--tune] [--csv FILE] */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cuda/mf_simplex_cuda.h"
#include "mfree_impl.h"
#include "simplex/mf_simplex.h"

double mf_bench_triad(size_t n, int reps);
double mf_bench_fp64_peak(int reps);
double mf_bench_time_ms(int (*fn)(void *), void *arg, int calls_per_rep, int reps, int *err);
void mf_bench_device_name(char *name, int len);

typedef struct {
  mf_simplex_cuda_op op;
  const double *x;
  double *y;
} apply_arg;

static int apply_once(void *p)
{
  apply_arg *a = (apply_arg *)p;
  return mf_simplex_cuda_apply(a->op, a->x, a->y);
}

static const char *problems[4] = {"simplex-mass", "simplex-laplace", "simplex-helmholtz", "simplex-elasticity"};

/* DoFs of P_p on the box with n cells per side: (n p + 1)^dim */
static double box_dofs(int dim, int n, int p) { return pow((double)n * p + 1.0, dim); }

static int usage(const char *msg)
{
  fprintf(stderr,
          "mfree-simplex-bench: %s\nusage: mfree-simplex-bench [--problem simplex-mass|simplex-laplace|"
          "simplex-helmholtz|simplex-elasticity|all] [--dim 2|3|all] [--degree 1..4|all] [--dofs N] [--reps R] "
          "[--tune] [--csv FILE]\n",
          msg);
  MPI_Finalize();
  return 2;
}

int main(int argc, char **argv)
{
  MPI_Init(&argc, &argv);
  int prob_sel = -1, dim_sel = 0, p_sel = 0, reps = 20, tune = 0;
  double target = 1e7;
  const char *csv = NULL;
  for (int i = 1; i < argc; i++) {
    const char *o = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
    if (!strcmp(o, "--tune")) {
      tune = 1;
      continue;
    }
    if (!v) return usage("an option without its value");
    i++;
    if (!strcmp(o, "--problem")) {
      prob_sel = -2;
      for (int k = 0; k < 4; k++)
        if (!strcmp(v, problems[k])) prob_sel = k;
      if (!strcmp(v, "all")) prob_sel = -1;
      if (prob_sel == -2) return usage("unknown --problem");
    } else if (!strcmp(o, "--dim")) {
      dim_sel = !strcmp(v, "all") ? 0 : atoi(v);
      if (dim_sel != 0 && dim_sel != 2 && dim_sel != 3) return usage("--dim 2, 3 or all");
    } else if (!strcmp(o, "--degree")) {
      p_sel = !strcmp(v, "all") ? 0 : atoi(v);
      if (p_sel < 0 || p_sel > MF_SIMPLEX_CUDA_MAX_DEGREE) return usage("--degree 1..4 or all");
    } else if (!strcmp(o, "--dofs")) {
      target = atof(v);
      if (!(target >= 1 && target <= 1e10)) return usage("--dofs 1..1e10");
    } else if (!strcmp(o, "--reps")) {
      reps = atoi(v);
      if (reps < 1 || reps > 64) return usage("--reps 1..64");
    } else if (!strcmp(o, "--csv")) {
      csv = v;
    } else {
      return usage("unknown option");
    }
  }
  if (!mf_cuda_available()) {
    fprintf(stderr, "mfree-simplex-bench: no usable GPU (or CUDA not compiled in)\n");
    MPI_Finalize();
    return 77;
  }
  mf_context ctx;
  if (mf_context_create(MPI_COMM_WORLD, "cuda", &ctx)) {
    fprintf(stderr, "mfree-simplex-bench: %s\n", mf_last_error_message());
    MPI_Finalize();
    return 1;
  }
  FILE *out = NULL;
  if (csv && !(out = fopen(csv, "w"))) {
    fprintf(stderr, "mfree-simplex-bench: cannot write %s\n", csv);
    mf_context_destroy(&ctx);
    MPI_Finalize();
    return 1;
  }
  char device[256];
  mf_bench_device_name(device, sizeof device);
  const double triad = mf_bench_triad((size_t)1 << 28, 20); /* 3 x 2 GiB */
  const double fp64 = mf_bench_fp64_peak(11);
  printf("# device %s, triad %.1f GB/s, fp64 %.0f GFLOP/s\n", device, triad, fp64);
  const char *hdr = "device,problem,dim,p,q,scatter,ndofs,ms_per_apply,gdofs_per_s,bytes_per_dof,gb_per_s,frac_of_triad,"
                    "setup_s,design,cg_ms_per_iter,cg_vs_apply,flops_per_dof,gflop_per_s,frac_of_roofline";
  printf("%s\n", hdr);
  if (out) fprintf(out, "%s\n", hdr);
  int failures = 0;
  /* per (dim, p) the mesh, basis and DoFs are built once and kept while the size stays (the scalar
   * problems share them; elasticity reaches the target with fewer DoFs) */
  for (int dim = 2; dim <= 3; dim++) {
    if (dim_sel && dim != dim_sel) continue;
    for (int p = 1; p <= MF_SIMPLEX_CUDA_MAX_DEGREE; p++) {
      if (p_sel && p != p_sel) continue;
      mf_simplex_mesh m;
      mf_simplex_basis b;
      mf_simplex_dofs d;
      int have = 0; /* n of the mesh held, 0: none */
      if (mf_simplex_basis_setup(ctx, dim, p, -1, &b)) {
        fprintf(stderr, "mfree-simplex-bench: %s\n", mf_last_error_message());
        failures++;
        continue;
      }
      for (int pi = 0; pi < 4; pi++) {
        if (prob_sel >= 0 && pi != prob_sel) continue;
        const int elas = pi == 3;
        const int ncomp = elas ? dim : 1, nmax = dim == 2 ? 4096 : 128;
        int n = 1;
        while (n < nmax && box_dofs(dim, n, p) * ncomp < target) n++;
        if (have != n) {
          if (have) mf_simplex_dofs_free(&d), mf_simplex_mesh_free(&m);
          have = 0;
          int ierr = mf_simplex_mesh_box(ctx, dim, n, &m);
          if (!ierr && (ierr = mf_simplex_dofs_create(ctx, &m, &b, &d))) mf_simplex_mesh_free(&m);
          if (ierr) {
            fprintf(stderr, "mfree-simplex-bench: %s\n", mf_last_error_message());
            failures++;
            continue;
          }
          have = n;
        }
        mf_simplex_op sop;
        memset(&sop, 0, sizeof sop);
        mf_simplex_cuda_op op = NULL;
        double *x = NULL, *dx = NULL;
        int ierr = 0;
        const long long nu = (long long)d.ndofs * ncomp;
        mf_device_sync(ctx);
        const double t0 = MPI_Wtime();
        if (elas) ierr = mf_simplex_cuda_elasticity_create(ctx, &m, &b, &d, 1.7, 0.6, tune, &op);
        else {
          const double a = pi == 0 || pi == 2 ? 1.0 : 0.0, bb = pi == 1 || pi == 2 ? 1.0 : 0.0;
          ierr = mf_simplex_op_create(ctx, &m, &b, &d, a, bb, NULL, NULL, &sop);
          if (!ierr) ierr = mf_simplex_cuda_op_create(ctx, &sop, tune, &op);
        }
        mf_device_sync(ctx);
        const double setup_s = MPI_Wtime() - t0;
        if (!ierr) {
          x = malloc(sizeof(double) * (size_t)nu);
          if (!x) ierr = MF_ERR_MEMORY;
        }
        if (!ierr) {
          for (long long i = 0; i < nu; i++) x[i] = (double)((i * 2654435761LL) % 1000) * 1e-3 - 0.5;
          ierr = mf_simplex_cuda_alloc(ctx, 2 * sizeof(double) * (size_t)nu, &dx);
        }
        if (!ierr) ierr = mf_simplex_cuda_copy(ctx, dx, x, (size_t)nu, 1);
        mf_simplex_cuda_config cfg;
        if (!ierr) ierr = mf_simplex_cuda_get_config(op, &cfg);
        double ms = 0.0;
        if (!ierr) {
          apply_arg a = {op, dx, dx + nu};
          int err = 0;
          ms = mf_bench_time_ms(apply_once, &a, 1, 3, &err); /* calls per repeat: at least 2 ms */
          int calls = ms > 0 ? (int)ceil(2.0 / ms) : 100;
          calls = calls < 1 ? 1 : calls > 200 ? 200 : calls;
          if (!err) ms = mf_bench_time_ms(apply_once, &a, calls, reps, &err);
          ierr = err;
        }
        if (ierr) {
          fprintf(stderr, "mfree-simplex-bench: %s %dD P%d: %s\n", problems[pi], dim, p, mf_last_error_message());
          failures++;
        } else {
          const double dofs_s = nu / (ms * 1e-3);
          const double bpd = cfg.bytes_per_cell * m.ncells / nu, fpd = cfg.flops_per_cell * m.ncells / nu;
          double min_fpc = cfg.flops_per_cell; /* the fewest flops of any candidate form */
          const int ncand = mf_simplex_cuda_candidates(op, NULL, 0);
          mf_simplex_cuda_config *cand = ncand > 0 ? malloc(sizeof *cand * (size_t)ncand) : NULL;
          if (cand && mf_simplex_cuda_candidates(op, cand, ncand) == ncand)
            for (int c = 0; c < ncand; c++) min_fpc = fmin(min_fpc, cand[c].flops_per_cell);
          free(cand);
          const double mfpd = min_fpc * m.ncells / nu;
          const double gbs = bpd * dofs_s / 1e9;
          const double roof = fmin(triad > 0 ? triad * 1e9 / bpd : INFINITY, fp64 > 0 ? fp64 * 1e9 / mfpd : INFINITY);
          char design[96];
          snprintf(design, sizeof design, "%s-%s-t%d-b%d-s%d%s", cfg.strategy ? "tiled" : "thread",
                   cfg.form == MF_SIMPLEX_CUDA_GRADIENT    ? "grad"
                   : cfg.form == MF_SIMPLEX_CUDA_REFERENCE ? "ref"
                                                           : "quad",
                   cfg.tile, cfg.threads, cfg.stage, cfg.tuned == 1 ? "-tuned" : "");
          printf("# model %s %dD P%d: n %d, cells %d, bytes_per_dof %.2f (bytes per cell %.1f), flops_per_dof %.1f "
                 "(flops per cell %.0f), min_flops_per_dof %.1f, roofline %.3f GDoF/s (%s-bound), regs %d, local %d B, "
                 "shmem %zu B, blocks/SM %d, occupancy %.2f, model %.1f us\n",
                 problems[pi], dim, p, n, m.ncells, bpd, cfg.bytes_per_cell, fpd, cfg.flops_per_cell, mfpd, roof / 1e9,
                 triad * 1e9 / bpd < fp64 * 1e9 / mfpd ? "memory" : "compute", cfg.regs, cfg.local_bytes, cfg.shmem,
                 cfg.blocks_per_sm, cfg.occupancy, cfg.model_us);
          char row[768];
          snprintf(row, sizeof row, "%s,%s,%d,%d,%d,atomic,%lld,%.5f,%.4f,%.1f,%.1f,%.3f,%.3f,%s,,,%.1f,%.1f,%.3f", device,
                   problems[pi], dim, p, b.nq, nu, ms, dofs_s / 1e9, bpd, gbs, triad > 0 ? gbs / triad : 0.0, setup_s,
                   design, fpd, fpd * dofs_s / 1e9, roof > 0 && isfinite(roof) ? dofs_s / roof : 0.0);
          printf("%s\n", row);
          fflush(stdout);
          if (out) fprintf(out, "%s\n", row), fflush(out);
        }
        mf_simplex_cuda_free(ctx, dx);
        free(x);
        mf_simplex_cuda_destroy(&op);
        mf_simplex_op_destroy(&sop);
      }
      if (have) mf_simplex_dofs_free(&d), mf_simplex_mesh_free(&m);
      mf_simplex_basis_free(&b);
    }
  }
  if (out) fclose(out);
  mf_context_destroy(&ctx);
  MPI_Finalize();
  return failures ? 1 : 0;
}
