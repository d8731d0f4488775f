/* bench_simplex.c -- the simplex problems of mfree-bench: throughput of the simplex action kernels on
 * the GPU (lib/cuda/simplex.cu) against the ceilings measured in the same run, a STREAM triad and an
 * FP64 peak (perf/triad.cu, measured by mfree-bench).
 *
 * Problems, on the built-in box meshes (mf_simplex_mesh_box: triangles, Kuhn tetrahedra), P_p with
 * the default rule (degree 2p), p = 1..4, dim 2 or 3:
 *   simplex-mass        y = M x
 *   simplex-laplace     y = K x
 *   simplex-helmholtz   y = (M + K) x
 *   simplex-elasticity  linear elasticity (lambda = 1.7, mu = 0.6), dim components per DoF
 * Sizes: per size target (mfree-bench's --min-dofs, --max-dofs, --sizes) the smallest n whose DoFs
 * (unknowns: DoFs x components for elasticity) reach it, within the mesh builder's range (n <=
 * MF_SIMPLEX_BOX_MAX_2D in 2D, MF_SIMPLEX_BOX_MAX_3D in 3D); a size whose n equals the previous one's is left out.
 * ndofs and the DoF rates count unknowns.
 *
 * Byte model (bytes_per_dof, the fewest bytes per application): x read once and y written once (8 B
 * each per unknown), the cell DoFs (4 B x nnodes per cell), the cells' vertex ids (4 B x (dim + 1)
 * per cell), the vertex coordinates (8 B x dim per vertex), and the coefficient where the operator has one
 * (--coefficient ljungkvist: c(x_q), nq values per cell, in the quadrature form; the cell's matrix K_e,
 * n1 (n1 + 1) / 2 values, in the gradient form); the shared scatter (c = 1) moves fewer: x read and y added
 * once per tile holding a DoF, the tiles' DoF and vertex lists, the cells' 2-byte indices into them. bytes_per_dof is
 * the fewest of every candidate configuration's model (like the flops), the roofline's; gb_per_s and frac_of_triad
 * count the bytes of the configuration run. Flop model (flops_per_dof): the fewest flops per cell among the operator's forms
 * (mf_simplex_cuda_config.flops_per_cell of every candidate: the quadrature form counts the values and
 * gradients at the points, the pointwise operator and the integration; the reference form N (2N + 2)
 * per reference matrix; the gradient form 2 dim n1 (2N + dim) and, with a mass part, 2 N^2 + N) times
 * cells / DoFs (the gradient form's for Laplace, Helmholtz and elasticity but 3D P4); gflop_per_s counts the flops of the form that ran. Both
 * models are printed per case as a "# model" line.
 * frac_of_triad = gb_per_s / triad; frac_of_roofline = DoF/s / min(triad / bytes_per_dof,
 * fp64 / flops_per_dof).
 * Timing: CUDA events around repeated applications after a warm-up, median of reps repeats
 * (mf_bench_time_ms). The configuration is the cost model's, or the measured fastest with tune (or
 * MFREE_SIMPLEX_TUNE=1); the design column names it: strategy-form-tTILE-bTHREADS-sSTAGE[-tuned], form
 * quad, ref or grad.
 * setup_s: the device operator's creation (uploads, model, tuning when asked), the device
 * synchronised. No CG runs here: cg_ms_per_iter and cg_vs_apply are empty. */
#include "bench_simplex.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cuda/mf_simplex_cuda.h"
#include "mf_testing.h"
#include "simplex/mf_simplex.h"

double mf_bench_time_ms(int (*fn)(void *), void *arg, int calls_per_rep, int reps, int *err);

const char *const mf_bench_simplex_problems[MF_BENCH_SIMPLEX_NPROBLEMS] = {"simplex-mass", "simplex-laplace",
                                                                           "simplex-helmholtz", "simplex-elasticity"};

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

/* c(x) = 1/(0.05 + 2|x|^2) (mfree-poisson's --coefficient ljungkvist) */
static double ljungkvist(const double *x, int dim, void *user)
{
  (void)user;
  double r2 = 0.0;
  for (int k = 0; k < dim; k++) r2 += x[k] * x[k];
  return 1.0 / (0.05 + 2.0 * r2);
}

/* DoFs of P_p on the box with n cells per side: (n p + 1)^dim */
static double box_dofs(int dim, int n, int p) { return pow((double)n * p + 1.0, dim); }

/* One case: the operator of problem pi on (m, b, d) made, timed and written; 0 or the error. */
static int run_case(mf_context ctx, const mf_bench_simplex_opts *o, int pi, int n, const mf_simplex_mesh *m,
                    const mf_simplex_basis *b, const mf_simplex_dofs *d, FILE *out)
{
  const int dim = o->dim, p = b->degree, elas = pi == 3, ncomp = elas ? dim : 1;
  mf_simplex_op sop;
  memset(&sop, 0, sizeof sop);
  mf_simplex_cuda_op op = NULL;
  double *x = NULL, *dx = NULL;
  int ierr = 0;
  const long long nu = (long long)d->ndofs * ncomp;
  mf_device_sync(ctx);
  const double t0 = MPI_Wtime();
  if (elas) ierr = mf_simplex_cuda_elasticity_create(ctx, m, b, d, 1.7, 0.6, o->tune, &op);
  else {
    const double a = pi == 0 || pi == 2 ? 1.0 : 0.0, bb = pi == 1 || pi == 2 ? 1.0 : 0.0;
    ierr = mf_simplex_op_create(ctx, m, b, d, a, bb, o->coefficient ? ljungkvist : NULL, NULL, &sop);
    if (!ierr) ierr = mf_simplex_cuda_op_create(ctx, &sop, o->tune, &op);
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
    if (!err) ms = mf_bench_time_ms(apply_once, &a, calls, o->reps, &err);
    ierr = err;
  }
  if (!ierr) {
    const double triad = o->triad, fp64 = o->fp64;
    const double dofs_s = nu / (ms * 1e-3);
    /* the roofline's flops: the fewest of the operator's forms (every candidate configuration) */
    double fmin_cell = cfg.flops_per_cell, bmin_cell = cfg.bytes_per_cell; /* and the fewest bytes */
    const int ncand = mf_simplex_cuda_candidates(op, NULL, 0);
    mf_simplex_cuda_config *cand = ncand > 0 ? malloc(sizeof *cand * (size_t)ncand) : NULL;
    if (cand && mf_simplex_cuda_candidates(op, cand, ncand) == ncand)
      for (int k = 0; k < ncand; k++)
        fmin_cell = fmin(fmin_cell, cand[k].flops_per_cell), bmin_cell = fmin(bmin_cell, cand[k].bytes_per_cell);
    free(cand);
    const double bpd = bmin_cell * m->ncells / nu, fpd = fmin_cell * m->ncells / nu,
                 fpd_run = cfg.flops_per_cell * m->ncells / nu;
    const double gbs = cfg.bytes_per_cell * m->ncells / nu * dofs_s / 1e9; /* the configuration run's bytes */
    const double roof = fmin(triad > 0 ? triad * 1e9 / bpd : INFINITY, fp64 > 0 ? fp64 * 1e9 / fpd : INFINITY);
    char design[96];
    snprintf(design, sizeof design, "%s-%s-t%d-b%d-s%d%s", cfg.strategy == 2 ? "shared" : cfg.strategy ? "tiled" : "thread",
             cfg.form == MF_SIMPLEX_CUDA_GRADIENT    ? "grad"
             : cfg.form == MF_SIMPLEX_CUDA_REFERENCE ? "ref"
                                                     : "quad",
             cfg.tile, cfg.threads, cfg.stage, cfg.tuned == 1 ? "-tuned" : "");
    if (o->coefficient && !elas) strncat(design, "-c", sizeof design - strlen(design) - 1);
    printf("# model %s %dD P%d: n %d, cells %d, bytes_per_dof %.2f (the fewest of the configurations; %.1f per cell in the one run), flops_per_dof %.1f "
           "(flops per cell %.0f, the fewest of the forms; %.0f in the form run), roofline %.3f GDoF/s (%s-bound), "
           "regs %d, local %d B, shmem %zu B, blocks/SM %d, occupancy %.2f, model %.1f us\n",
           mf_bench_simplex_problems[pi], dim, p, n, m->ncells, bpd, cfg.bytes_per_cell, fpd, fmin_cell, cfg.flops_per_cell,
           roof / 1e9, triad * 1e9 / bpd < fp64 * 1e9 / fpd ? "memory" : "compute", cfg.regs, cfg.local_bytes,
           cfg.shmem, cfg.blocks_per_sm, cfg.occupancy, cfg.model_us);
    char row[768];
    snprintf(row, sizeof row, "%s,%s,%d,%d,%d,%s,%lld,%.5f,%.4f,%.1f,%.1f,%.3f,%.3f,%s,,,%.1f,%.1f,%.3f", o->device,
             mf_bench_simplex_problems[pi], dim, p, b->nq, cfg.strategy == 2 ? "tile" : "atomic", nu, ms, dofs_s / 1e9, bpd, gbs, triad > 0 ? gbs / triad : 0.0,
             setup_s, design, fpd, fpd_run * dofs_s / 1e9, roof > 0 && isfinite(roof) ? dofs_s / roof : 0.0);
    printf("%s\n", row);
    fflush(stdout);
    if (out) fprintf(out, "%s\n", row), fflush(out);
  }
  mf_simplex_cuda_free(ctx, dx);
  free(x);
  mf_simplex_cuda_destroy(&op);
  mf_simplex_op_destroy(&sop);
  return ierr;
}

int mf_bench_simplex_run(mf_context ctx, const mf_bench_simplex_opts *o, FILE *out)
{
  const char *hdr = "device,problem,dim,p,q,scatter,ndofs,ms_per_apply,gdofs_per_s,bytes_per_dof,gb_per_s,frac_of_triad,"
                    "setup_s,design,cg_ms_per_iter,cg_vs_apply,flops_per_dof,gflop_per_s,frac_of_roofline";
  printf("%s\n", hdr);
  if (out) fprintf(out, "%s\n", hdr);
  const int dim = o->dim, nmax = dim == 2 ? MF_SIMPLEX_BOX_MAX_2D : MF_SIMPLEX_BOX_MAX_3D;
  const int nprob = o->problem < 0 ? MF_BENCH_SIMPLEX_NPROBLEMS : 1;
  const int ncases = o->ndeg * o->nsizes * nprob;
  int failures = 0, icase = 0;
  /* per degree the basis is made once; the mesh and DoFs are kept while n stays (the scalar problems
   * share them; elasticity reaches a target with fewer DoFs) */
  for (int di = 0; di < o->ndeg; di++) {
    const int p = o->degrees[di];
    mf_simplex_basis b;
    if (mf_simplex_basis_setup(ctx, dim, p, -1, &b)) {
      fprintf(stderr, "mfree-bench: simplex P%d: %s\n", p, mf_last_error_message());
      failures++;
      continue;
    }
    mf_simplex_mesh m;
    mf_simplex_dofs d;
    int have = 0, last[MF_BENCH_SIMPLEX_NPROBLEMS] = {0}; /* n of the mesh held (0: none), of each problem's last case */
    for (int si = 0; si < o->nsizes; si++) {
      const double target =
          o->nsizes == 1 ? o->max_dofs : o->min_dofs * pow(o->max_dofs / o->min_dofs, (double)si / (o->nsizes - 1));
      for (int pi = 0; pi < MF_BENCH_SIMPLEX_NPROBLEMS; pi++) {
        if (o->problem >= 0 && pi != o->problem) continue;
        const int ncomp = pi == 3 ? dim : 1;
        int n = 1;
        while (n < nmax && box_dofs(dim, n, p) * ncomp < target) n++;
        char what[160];
        snprintf(what, sizeof what, "p %d, %s, %dD, target %.3g DoFs: n %d", p, mf_bench_simplex_problems[pi], dim,
                 target, n);
        if (o->progress) o->progress(++icase, ncases, what);
        if (n == last[pi]) continue; /* same size as the previous point */
        last[pi] = n;
        if (have != n) {
          if (have) mf_simplex_dofs_free(&d), mf_simplex_mesh_free(&m);
          have = 0;
          int ierr = mf_simplex_mesh_box(ctx, dim, n, &m);
          if (!ierr && (ierr = mf_simplex_dofs_create(ctx, &m, &b, &d))) mf_simplex_mesh_free(&m);
          if (ierr) {
            fprintf(stderr, "mfree-bench: %s %dD P%d n %d: %s\n", mf_bench_simplex_problems[pi], dim, p, n,
                    mf_last_error_message());
            failures++;
            continue;
          }
          have = n;
        }
        if (run_case(ctx, o, pi, n, &m, &b, &d, out)) {
          fprintf(stderr, "mfree-bench: %s %dD P%d: %s\n", mf_bench_simplex_problems[pi], dim, p, mf_last_error_message());
          failures++;
        }
      }
    }
    if (have) mf_simplex_dofs_free(&d), mf_simplex_mesh_free(&m);
    mf_simplex_basis_free(&b);
  }
  return failures;
}
