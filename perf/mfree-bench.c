/* mfree-bench -- throughput of the matrix-free operators (DoF/s per application) against the
 * bandwidth ceiling measured in the same run (STREAM triad).
 *
 * Problems (CEED benchmark problems on the deformed cube, and the Ljungkvist problem):
 *   bp1         mass, Gauss q = p + 2, deformed cube
 *   bp3         Laplace, Gauss q = p + 2, deformed cube
 *   bp5         Laplace, collocated Gauss-Lobatto q = p + 1, deformed cube
 *   ljungkvist  Laplace with c(x) = 1/(0.05 + 2|x|^2), Gauss q = p + 1, ball
 *   ljungkvist-adaptive  the same on the ball refined along spherical shells (hanging nodes), with
 *               the share of hanging nodes and the overhead per DoF against the uniform ball of the
 *               nearest size (own CSV columns; --max-dofs is the target size)
 * Byte model (fewest bytes per application): x read once and y written once (8 B each per DoF),
 * the stored quadrature data (ncomp x q^dim x 8 B per cell) and the DoF indices (4 B x (p+1)^dim
 * per cell); bytes_per_dof = that total / DoFs. gb_per_s = bytes_per_dof x DoF/s;
 * frac_of_triad = gb_per_s / triad bandwidth.
 * Flop model (flops_per_dof; gflop_per_s = flops_per_dof x DoF/s): the sum-factorised algorithm with
 * dense 1D products, 2 flops per multiply-add, per cell: interpolation to the quadrature points in dim
 * sweeps (sweep d maps n1 -> nq along d: 2 n1 nq^(d+1) n1^(dim-1-d)), for a gradient the collocation
 * derivative in each direction (2 nq^(dim+1) each), the pointwise operator (1 multiply for mass; for a
 * gradient the symmetric dim x dim product, dim^2 multiplies and dim(dim-1) adds; both parts: +2), and
 * the transposes of the derivative and interpolation steps; the collocated rule (bp5) skips the
 * interpolation. Gathers, scatters and hanging-node constraints are not counted. The column design's
 * even-odd products do fewer multiply-adds in one direction than counted here: the model is the
 * algorithm's, the same for both designs. The FP64 ceiling is measured in the same run (fused
 * multiply-adds in registers), printed with the triad on the first line; perf/roofline.py places each
 * row by bytes_per_dof and flops_per_dof under both ceilings.
 * Timing: CUDA events around repeated mf_operator_apply calls after a warm-up, median of repeats.
 *
 * --method assembled|both (backends cpu and cuda): per problem and degree the matrix-free operator is
 * also assembled (mf_operator_create_assembled_variant) and timed the same way, a row with problem
 * `<name>-csr`, design `csr`, scatter `none` (a row-wise product, no scatter; on cuda the product that
 * MFREE_SPMV selects, docs/performance.md). Its byte model: the values (8 B) and column indices (4 B)
 * of each stored nonzero, the 64-bit row pointers (8 B per row), x read once and y written once (8 B
 * each per DoF); rows and nonzeros summed over the ranks (a rank's rows include its ghost DoFs);
 * frac_of_triad as above. Its setup_s is the assembly alone, the device synchronised before and
 * after: the call that assembles, with the mesh, the space and the matrix-free operator it starts
 * from excluded. The first assembly on a mesh also makes the sparsity pattern, which later problems
 * on the same mesh share (--problem all: bp3 and bp5 reuse bp1's), so their setup_s is the values
 * alone; the "# assembly" line on stdout says which, with the variant, the seconds, the assembly's
 * DoF/s and nonzeros/s. --assembly-variant auto|search|table|rowwise (default auto) picks the
 * variant; `all` times each of search, table and rowwise on its own "# assembly" line (after an auto
 * assembly that makes the pattern, where none exists yet, so that all three reuse it) and writes the
 * row once, with the auto variant's matrix. The --setup-phases columns are empty on these rows. A
 * matrix that does not fit is refused by the library: reported on stderr, the case's csr row left out.
 * --method assembled writes only the csr rows (the matrix-free operator is still made: it is assembled).
 *
 * --geometry stored|on-the-fly|both: rows of operators with geometry computed on the fly
 * (mf_operator_set_geometry) have the design suffixed `-otf` (`point-otf`; `cpu-otf` on the cpu
 * backend); their setup_s includes the switch. Their byte model (otf_bytes) and flop model
 * (otf_flops_per_dof) are printed as a `# model` line per case on stdout; bytes_per_dof is otf_bytes.
 *
 * Simplex problems (perf/bench_simplex.c has their models): simplex-mass, simplex-laplace,
 * simplex-helmholtz, simplex-elasticity (simplex-all: the four) run the simplex action kernels on the
 * GPU (cuda backend only; degrees 1..4; --tune measures the launch configurations) on the box meshes of
 * --dim, sizes from --min-dofs, --max-dofs and --sizes. Their CSV has the columns of the other problems
 * and frac_of_roofline: DoF/s over the smaller of triad / bytes_per_dof and fp64 / flops_per_dof.
 * Without a usable GPU they exit with status 77. Options that do not apply to them (--method,
 * --geometry, --design, --cells-per-block, --scatter colored, --cg, --setup-phases, --backend cpu) are
 * refused.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mf_testing.h"
#include "assembled/assembly_impl.h"
#include "options.h"
#include "bench_physics.h"
#include "cuda/mf_simplex_cuda.h" /* MF_SIMPLEX_CUDA_MAX_DEGREE (a header usable without CUDA) */
#ifdef MFREE_WITH_CUDA
#include "bench_simplex.h"
#endif

#ifdef MFREE_WITH_CUDA
double mf_bench_triad(size_t n, int reps);
double mf_bench_fp64_peak(int reps);
double mf_bench_time_ms(int (*fn)(void *), void *arg, int calls_per_rep, int reps, int *err);
void mf_bench_device_name(char *name, int len);
#endif

typedef struct {
  mf_operator op;
  mf_vector x, y;
} apply_arg;

static int apply_once(void *p)
{
  apply_arg *a = (apply_arg *)p;
  return mf_operator_apply(a->op, a->x, a->y);
}

static double cpu_time_ms(apply_arg *a, int calls, int reps, int *err)
{
  double best[64];
  *err = 0;
  for (int r = -1; r < reps; r++) { /* every call made whatever fails (the exchanges of other ranks) */
    double t0 = MPI_Wtime();
    for (int k = 0; k < calls; k++) {
      const int ek = apply_once(a);
      if (!*err) *err = ek;
    }
    double t = (MPI_Wtime() - t0) * 1e3 / calls;
    if (r >= 0) best[r] = t;
  }
  for (int i = 0; i < reps; i++) /* median by insertion sort */
    for (int j = i; j > 0 && best[j] < best[j - 1]; j--) {
      double t = best[j];
      best[j] = best[j - 1];
      best[j - 1] = t;
    }
  return best[reps / 2];
}

/* Median ms per application (CUDA events on the GPU, wall clock on the CPU). */
static double time_apply(apply_arg *a, int on_gpu, int reps, int *err)
{
  int calls = 1;
  double ms;
  /* several ranks: the slowest rank's time, and the same number of calls on every rank (each call
   * exchanges with the neighbours) */
  MPI_Comm comm = a->op->ctx->comm;
#ifdef MFREE_WITH_CUDA
  if (on_gpu) {
    ms = mf_bench_time_ms(apply_once, a, 1, 3, err);
    MPI_Allreduce(MPI_IN_PLACE, &ms, 1, MPI_DOUBLE, MPI_MAX, comm);
    MPI_Allreduce(MPI_IN_PLACE, err, 1, MPI_INT, MPI_MAX, comm);
    calls = ms > 0 ? (int)ceil(2.0 / ms) : 100; /* at least 2 ms per repeat */
    if (calls > 200) calls = 200;
    if (calls < 1) calls = 1;
    if (!*err) ms = mf_bench_time_ms(apply_once, a, calls, reps, err);
    MPI_Allreduce(MPI_IN_PLACE, &ms, 1, MPI_DOUBLE, MPI_MAX, comm);
    MPI_Allreduce(MPI_IN_PLACE, err, 1, MPI_INT, MPI_MAX, comm);
    return ms;
  }
#endif
  (void)on_gpu;
  ms = cpu_time_ms(a, 1, 1, err);
  MPI_Allreduce(MPI_IN_PLACE, &ms, 1, MPI_DOUBLE, MPI_MAX, comm);
  MPI_Allreduce(MPI_IN_PLACE, err, 1, MPI_INT, MPI_MAX, comm);
  calls = ms > 0 ? (int)ceil(50.0 / ms) : 10;
  if (calls > 100) calls = 100;
  if (!*err) ms = cpu_time_ms(a, calls, reps < 5 ? reps : 5, err);
  MPI_Allreduce(MPI_IN_PLACE, &ms, 1, MPI_DOUBLE, MPI_MAX, comm);
  MPI_Allreduce(MPI_IN_PLACE, err, 1, MPI_INT, MPI_MAX, comm);
  return ms;
}

typedef struct {
  int64_t k[3];
} node_key;
/* Flops of one cell of a sum-factorised apply (the model in the file's top comment). */
static double sumfact_flops_cell(int dim, int n1, int nq, int has_mass, int has_grad, int colloc)
{
  double interp = 0.0, grad = 0.0, pw = 0.0, nqp = pow(nq, dim);
  if (!colloc)
    for (int d = 0; d < dim; d++) interp += 2.0 * n1 * pow(nq, d + 1) * pow(n1, dim - 1 - d);
  if (has_grad) grad = dim * 2.0 * nq * nqp, pw += (double)(dim * dim + dim * (dim - 1));
  if (has_mass) pw += has_grad ? 2.0 : 1.0;
  return 2.0 * (interp + grad) + pw * nqp;
}
static double op_flops_per_dof(const mf_operator op)
{
  const mf_space s = op->space;
  return sumfact_flops_cell(s->dim, s->n1, mf_hexop(op)->basis.nq, mf_pw(op)->has_mass, mf_pw(op)->has_grad, mf_hexop(op)->basis.collocated) *
         (double)s->mesh->ncells_global / (double)s->nglobal;
}

static int cmp_key(const void *x, const void *y)
{
  const node_key *a = (const node_key *)x, *b = (const node_key *)y;
  for (int i = 0; i < 3; i++)
    if (a->k[i] != b->k[i]) return a->k[i] < b->k[i] ? -1 : 1;
  return 0;
}

/* Hanging nodes = distinct node positions of all cells - DoFs (one rank). */
static int64_t count_hanging_nodes(mf_space s)
{
  if (mf_space_host_coords(s)) return -1;
  size_t n = (size_t)s->ncells * s->npc, m = 0;
  node_key *keys = malloc(sizeof(node_key) * (n ? n : 1));
  double *X = malloc(sizeof(double) * s->npc * s->dim);
  if (!keys || !X) return free(keys), free(X), -1;
  for (int e = 0; e < s->ncells; e++) {
    mf_space_cell_coords(s, e, X);
    for (int k = 0; k < s->npc; k++, m++)
      for (int d = 0; d < 3; d++) keys[m].k[d] = d < s->dim ? llround(X[k * s->dim + d] * 1e8) : 0;
  }
  qsort(keys, n, sizeof(node_key), cmp_key);
  int64_t distinct = 0;
  for (size_t i = 0; i < n; i++)
    if (i == 0 || cmp_key(&keys[i], &keys[i - 1])) distinct++;
  free(keys);
  free(X);
  return distinct - s->nglobal;
}

static double ljungkvist(const double *x, int dim, void *u)
{
  double r2 = 0.0;
  for (int k = 0; k < dim; k++) r2 += x[k] * x[k];
  return 1.0 / (0.05 + 2.0 * r2);
}

/* One timed Laplace (ljungkvist coefficient, Gauss q = p + 1) on a mesh: ms per apply, DoFs. */
static int time_ljungkvist(mf_mesh mesh, int p, int on_gpu, int reps, double *ms, mf_space *sp)
{
  mf_space space = NULL;
  mf_operator op = NULL;
  apply_arg a = {NULL, NULL, NULL};
  int ierr = mf_space_create(mesh, p, &space);
  if (!ierr) ierr = mf_operator_create_laplace(space, MF_QUAD_GAUSS, ljungkvist, NULL, &op);
  if (!ierr) ierr = mf_vector_create(space, &a.x);
  if (!ierr) ierr = mf_vector_create(space, &a.y);
  if (!ierr) ierr = mf_vector_set_random(a.x, 3);
  if (!ierr) {
    a.op = op;
    *ms = time_apply(&a, on_gpu, reps, &ierr);
  }
  mf_vector_destroy(&a.x);
  mf_vector_destroy(&a.y);
  mf_operator_destroy(&op);
  *sp = space;
  return ierr;
}

/* the physics problems' timing (perf/bench_physics.c): that of the other problems */
static int physics_reps = 9, physics_on_gpu = 0;
static double physics_time(mf_operator op, mf_vector x, mf_vector y, int *err)
{
  apply_arg a = {op, x, y};
  return time_apply(&a, physics_on_gpu, physics_reps, err);
}

/* --cg N: seconds per iteration of N Jacobi-CG iterations with op (Dirichlet form, x = 0, b random),
 * after a 3-iteration warm-up; the preconditioner's set-up is not timed */
static int cg_steps = 0; /* --cg-steps: the step-by-step iteration instead of the fused steps */
static double time_cg(mf_operator op, mf_vector b, mf_vector x, int iters, int *err)
{
  mf_cg cg = NULL;
  mf_cg_info info = {0};
  *err = mf_operator_set_dirichlet(op, 1);
  if (!*err) *err = mf_cg_create(op, &cg);
  if (!*err && cg_steps) mf_cg_set_fused(cg, 0);
  if (!*err) *err = mf_cg_setup(cg);
  for (int pass = 0; pass < 2 && !*err; pass++) {
    *err = mf_cg_set_tolerance(cg, 1e-12, pass ? iters : 3);
    if (!*err) *err = mf_vector_set_value(x, 0.0);
    if (!*err) *err = mf_cg_solve(cg, b, x, &info);
  }
  mf_cg_destroy(&cg);
  int e2 = mf_operator_set_dirichlet(op, 0);
  if (!*err) *err = e2;
  double s = info.iterations ? info.seconds / info.iterations : 0.0;
  MPI_Allreduce(MPI_IN_PLACE, &s, 1, MPI_DOUBLE, MPI_MAX, op->ctx->comm);
  return s;
}

/* --verbose: "case i of n" lines on stderr with the time since the start */
static int verbose = 0;
static double t_start = 0.0;
static void progress(int i, int n, const char *what)
{
  if (!verbose) return;
  fprintf(stderr, "mfree-bench: [%9.3f s] case %d of %d: %s\n", MPI_Wtime() - t_start, i, n, what);
  fflush(stderr);
}

/* ljungkvist-adaptive: the ball refined along three spherical shells (2 rounds) from the largest
 * base level within the target size, against the uniform ball of the nearest size. */
static void run_adaptive(mf_context ctx, const char *device, int on_gpu, int dim, const int *degrees, int ndeg,
                         double target, int reps, FILE *out)
{
  const char *hdr = "device,problem,dim,p,q,ndofs,cells,masked_cell_share,hanging_node_share,ms_per_apply,"
                    "gdofs_per_s,uniform_ndofs,uniform_gdofs_per_s,overhead_per_dof,overhead_per_cell";
  printf("%s\n", hdr);
  if (out) fprintf(out, "%s\n", hdr);
  for (int di = 0; di < ndeg; di++) {
    const int p = degrees[di];
    char what[128];
    snprintf(what, sizeof what, "p %d, ljungkvist-adaptive, target %.3g DoFs", p, target);
    progress(di + 1, ndeg, what);
    mf_mesh mesh = NULL, prev = NULL, uni = NULL;
    mf_space space = NULL, uspace = NULL;
    int ierr = 0;
    for (int level = 0; level <= 8 && !ierr; level++) { /* largest base level within the target */
      int64_t cells;
      ierr = mf_mesh_create(ctx, "ball", dim, level, &mesh);
      if (!ierr) ierr = mf_mesh_refine_shells(mesh, 2);
      if (!ierr) ierr = mf_mesh_num_cells(mesh, &cells);
      if (ierr) break;
      if (cells * pow(p, dim) > target && prev) {
        mf_mesh_destroy(&mesh);
        break;
      }
      mf_mesh_destroy(&prev);
      prev = mesh;
      mesh = NULL;
    }
    mesh = prev;
    double ms = 0.0, ums = 0.0;
    if (!ierr) ierr = time_ljungkvist(mesh, p, on_gpu, reps, &ms, &space);
    int64_t hanging = ierr ? 0 : count_hanging_nodes(space);
    if (!ierr) { /* uniform ball of the nearest size */
      int trees[3] = {1, 1, 1}, level = 0;
      double best = INFINITY;
      for (int t = 1; t <= 6; t++)
        for (int l = 0; l <= 10; l++) {
          double n = (1 + 2 * dim) * pow(t * p * pow(2.0, l), dim);
          if (fabs(log(n / space->nglobal)) < best) best = fabs(log(n / space->nglobal)), level = l, trees[0] = trees[1] = trees[2] = t;
        }
      ierr = mf_mesh_create_box(ctx, "ball", dim, trees, level, &uni);
      if (!ierr) ierr = time_ljungkvist(uni, p, on_gpu, reps, &ums, &uspace);
    }
    if (ierr) {
      fprintf(stderr, "mfree-bench: ljungkvist-adaptive p %d: %s\n", p, mf_last_error_message());
    } else {
      double n = space->nglobal, un = uspace->nglobal;
      double overhead = (ms / n) / (ums / un) - 1.0;
      double overhead_cell = (ms / space->ncells) / (ums / uspace->ncells) - 1.0;
      char row[512];
      snprintf(row, sizeof row, "%s,ljungkvist-adaptive,%d,%d,%d,%lld,%d,%.4f,%.4f,%.5f,%.4f,%lld,%.4f,%.4f,%.4f", device, dim,
               p, p + 1, (long long)space->nglobal, space->ncells, (double)space->nmasked / space->ncells,
               (double)hanging / (n + hanging), ms, n / (ms * 1e-3) / 1e9, (long long)uspace->nglobal,
               un / (ums * 1e-3) / 1e9, overhead, overhead_cell);
      printf("%s\n", row);
      fflush(stdout);
      if (out) fprintf(out, "%s\n", row), fflush(out);
    }
    mf_space_destroy(&space);
    mf_space_destroy(&uspace);
    mf_mesh_destroy(&mesh);
    mf_mesh_destroy(&uni);
  }
}

/* --assembly-variant: the library's variants (mf_assembly_variant: auto, search, table, rowwise) and
 * `all`; bench_on_gpu and bench_triad: the run's device (set in main) */
static const char *const assembly_variants[] = {"auto", "search", "table", "rowwise", "all"};
static int assembly_variant_i = 0, bench_on_gpu = 0;
static double bench_triad = 0.0;

/* op assembled with variant v and timed, the device synchronised before and after (the slowest
 * rank's time); a "# assembly" line with the variant, seconds, DoF/s and nonzeros/s, whether the
 * sparsity pattern was made or reused and, for a table assembly on the device, whether the table of
 * positions kept with the space was built by this assembly or reused (values alone). *A: the matrix
 * (NULL where the library refused: reported on stderr). Collective. */
static int assemble_timed(mf_operator op, int v, const char *problem, mf_operator *A, double *seconds, double *nnz_sum)
{
  const mf_space space = op->space;
  const int p = space->degree, reused = space->csr_rowptr != NULL;
  const size_t kept0 = mf_assembly_table_kept_bytes(space);
  mf_device_sync(space->ctx);
  double t0 = MPI_Wtime();
  int err = mf_operator_create_assembled_variant(op, (mf_assembly_variant)v, A);
  mf_device_sync(space->ctx);
  double assembly = MPI_Wtime() - t0;
  if (err) {
    fprintf(stderr, "mfree-bench: %s-csr p %d (%lld DoFs) skipped: %s\n", problem, p, (long long)space->nglobal,
            mf_last_error_message());
    return err;
  }
  MPI_Allreduce(MPI_IN_PLACE, &assembly, 1, MPI_DOUBLE, MPI_MAX, space->ctx->comm); /* the slowest rank's */
  int64_t nnz = 0;
  mf_operator_local_nnz(*A, &nnz);
  double sum = (double)nnz;
  MPI_Allreduce(MPI_IN_PLACE, &sum, 1, MPI_DOUBLE, MPI_SUM, space->ctx->comm);
  const double n = (double)space->nglobal;
  const size_t kept1 = mf_assembly_table_kept_bytes(space);
  char table[96] = "";
  if ((v == 0 || v == 2) && kept1 > 0)
    snprintf(table, sizeof table, "; table of positions %s, %.4g MB on rank 0", kept0 ? "reused" : "built",
             (double)kept1 / 1e6);
  printf("# assembly %s p %d variant %s: %.4f s, DoF/s %.4g, nonzeros/s %.4g (%.0f nonzeros; sparsity pattern %s%s)\n",
         problem, p, assembly_variants[v], assembly, n / assembly, sum / assembly, sum, reused ? "reused" : "made", table);
  fflush(stdout);
  *seconds = assembly;
  *nnz_sum = sum;
  return 0;
}

/* --method assembled|both: op assembled, timed and written as the row `<problem>-csr` (the model and
 * the columns: the header comment). --assembly-variant all: each variant assembled and timed on its
 * own line first (the sparsity pattern made beforehand by an auto assembly, so that all three reuse
 * it); on the device the table variant twice: first with the table of positions built (the kept table
 * dropped before, so that its making is timed, and a "table built" line gives the difference), then
 * reusing it (values alone, the variant's line); then the row with the auto variant's matrix. A
 * refusal (a matrix that does not fit) is reported and the row left out; the run goes on. */
static void csr_row(mf_operator op, apply_arg *a, const char *device, const char *problem, int dim, int reps,
                    int cg_iters, int setup_phases, FILE *out)
{
  const mf_space space = op->space;
  const int p = space->degree;
  mf_operator A = NULL;
  double assembly = 0.0, nnz = 0.0;
  int v = assembly_variant_i, err = 0;
  if (v == 4) { /* all */
    if (!space->csr_rowptr) {
      if (assemble_timed(op, 0, problem, &A, &assembly, &nnz)) return;
      mf_operator_destroy(&A);
    }
    for (int k = 1; k < 4; k++) {
      double built = -1.0;
      if (k == 2 && bench_on_gpu) { /* the first table assembly on the space, timed on its own */
        mf_assembly_table_drop(space);
        if (assemble_timed(op, k, problem, &A, &built, &nnz)) continue;
        mf_operator_destroy(&A);
      }
      if (assemble_timed(op, k, problem, &A, &assembly, &nnz)) continue;
      mf_operator_destroy(&A);
      if (built >= 0.0 && mf_assembly_table_kept_bytes(space) > 0) {
        printf("# assembly %s p %d table built: %.4f s (the first table assembly %.4f s less a reused one %.4f s; "
               "%.4g MB on rank 0)\n",
               problem, p, built - assembly, built, assembly, (double)mf_assembly_table_kept_bytes(space) / 1e6);
        fflush(stdout);
      }
    }
    v = 0;
  }
  if (assemble_timed(op, v, problem, &A, &assembly, &nnz)) return;
  double rows = (double)space->nlocal; /* over the ranks (a rank's rows include its ghost DoFs) */
  MPI_Allreduce(MPI_IN_PLACE, &rows, 1, MPI_DOUBLE, MPI_SUM, space->ctx->comm);
  const double n = (double)space->nglobal, bpd = (12.0 * nnz + 8.0 * rows + 16.0 * n) / n;
  apply_arg b = {A, a->x, a->y};
  double ms = time_apply(&b, bench_on_gpu, reps, &err);
  if (err) {
    fprintf(stderr, "mfree-bench: %s-csr p %d: apply failed: %s\n", problem, p, mf_last_error_message());
    mf_operator_destroy(&A);
    return;
  }
  double dofs = n / (ms * 1e-3), gbs = bpd * dofs / 1e9;
  char row[512], cgc[64] = ",,", phase_cols[64] = "";
  snprintf(row, sizeof row, "%s,%s-csr,%d,%d,%d,none,%lld,%.5f,%.4f,%.1f,%.1f,%.3f", device, problem, dim, p,
           mf_hexop(op)->basis.nq, (long long)space->nglobal, ms, dofs / 1e9, bpd, gbs, bench_triad > 0 ? gbs / bench_triad : 0.0);
  if (cg_iters > 0) {
    double cg_s = time_cg(A, a->x, a->y, cg_iters, &err);
    if (err) fprintf(stderr, "mfree-bench: %s-csr p %d: CG failed: %s\n", problem, p, mf_last_error_message());
    else snprintf(cgc, sizeof cgc, ",%.5f,%.3f", cg_s * 1e3, cg_s > 0 ? ms / (cg_s * 1e3) : 0.0);
  }
  if (setup_phases)
    for (int k = 0; k < MF_PHASE_COUNT && k < (int)sizeof phase_cols - 1; k++) strcat(phase_cols, ",");
  char fl[64]; /* 2 flops per stored nonzero */
  snprintf(fl, sizeof fl, ",%.1f,%.1f", 2.0 * nnz / n, 2.0 * nnz / n * dofs / 1e9);
  printf("%s,%.3f,0,csr%s%s%s\n", row, assembly, cgc, fl, phase_cols);
  fflush(stdout);
  if (out) fprintf(out, "%s,%.3f,csr%s%s%s\n", row, assembly, cgc, fl, phase_cols), fflush(out);
  mf_operator_destroy(&A);
}

/* Geometry on the fly, fewest bytes per application: x read and y written (16 B per DoF), the node
 * coordinates (8 dim B per DoF: the continuous vector, gathered like x), the coefficient (8 B per point
 * per cell; none when constant) and the DoF indices (4 B per cell node). Cells with hanging nodes read
 * nothing more: their geometry nodes are the constrained coordinates (mf_space_cell_coords), made in the
 * kernel like u's (the 2-byte masks, as in the stored model, are left out). */
static double otf_bytes(const mf_space s, const mf_operator op)
{
  const double ndofs = (double)s->nglobal, cells = (double)s->mesh->ncells_global;
  return 16.0 * ndofs + 8.0 * s->dim * ndofs + (mf_pw(op)->coef ? 8.0 * cells * mf_hexop(op)->qd.nqp : 0.0) + 4.0 * cells * s->npc;
}

/* Flops of one on-the-fly application per DoF (a multiply-add counts 2, a division 1), per cell:
 *   u:           B sweeps to the points and back (none when collocated), D and D^T per direction
 *                (gradient part), the pointwise product with the dim x dim symmetric tensor and m u;
 *   coordinates: dim components, each B sweeps (none when collocated) and D per direction (J);
 *   per point:   the weight, det J, J^-1 (adjugate / det), |det J| w and the components
 *                (mf_qf_geometry), times c (mf_qf_scale) with a coefficient. */
static double otf_flops_per_dof(const mf_space s, const mf_operator op)
{
  const int dim = s->dim, n1 = s->n1, nq = mf_hexop(op)->basis.nq, colloc = mf_hexop(op)->basis.collocated;
  const double nqp = mf_hexop(op)->qd.nqp;
  double sweeps = 0.0; /* B x B (x B): the sweep along direction d has nq^d n1^(dim-d) outputs of n1 terms */
  for (int d = 1; d <= dim; d++) sweeps += 2.0 * n1 * pow(nq, d) * pow(n1, dim - d);
  if (colloc) sweeps = 0.0;
  const double grad = 2.0 * dim * nq * nqp; /* D along every direction at every point */
  /* u: the stored-geometry model of the same operator (sumfact_flops_cell) */
  const double u = sumfact_flops_cell(dim, n1, nq, mf_pw(op)->has_mass, mf_pw(op)->has_grad, colloc);
  const double coords = dim * (sweeps + grad);
  const int ncomp = mf_hexop(op)->qd.ncomp;
  /* per point: weight (dim), det (2D 3, 3D 14), |det| w (1), inverse (2D 4 divisions, 3D 9 x (3 + 1)),
   * mass a w |det| (1), gradient components (dim(dim+1)/2 x (2 dim - 1 + 2)), the coefficient (ncomp) */
  double point = dim + (dim == 2 ? 3 : 14) + 1;
  if (mf_pw(op)->has_mass) point += 1;
  if (mf_pw(op)->has_grad) point += (dim == 2 ? 4 : 36) + dim * (dim + 1) / 2 * (2.0 * dim + 1);
  if (mf_pw(op)->coef) point += mf_pw(op)->has_grad ? ncomp - (mf_pw(op)->has_mass ? 1 : 0) : ncomp;
  const double per_cell = u + coords + nqp * point;
  return per_cell * (double)s->mesh->ncells_global / (double)s->nglobal;
}

/* The operator switched to geometry on the fly for the rows after: returns the switch's seconds (-1
 * when refused, reported) and sets *bpd to the on-the-fly byte model; prints the models. */
static double otf_switch(mf_operator op, double *bpd, double *fpd, const char *problem, int p)
{
  const mf_space s = op->space;
  double t0 = MPI_Wtime();
  if (mf_operator_set_geometry(op, MF_GEOMETRY_ON_THE_FLY)) {
    fprintf(stderr, "mfree-bench: %s p %d: geometry on the fly: %s\n", problem, p, mf_last_error_message());
    return -1.0;
  }
  const double dt = MPI_Wtime() - t0;
  const double stored = *bpd;
  *bpd = otf_bytes(s, op) / s->nglobal;
  *fpd = otf_flops_per_dof(s, op);
  printf("# model %s p %d q %d geometry on-the-fly: %.1f bytes/DoF (stored %.1f), %.1f flops/DoF\n", problem, p,
         mf_hexop(op)->basis.nq, *bpd, stored, *fpd);
  return dt;
}

static void usage(void)
{
  printf("usage: mfree-bench [--problem bp1|bp3|bp5|ljungkvist|all|ljungkvist-adaptive|simplex-mass|simplex-laplace|\n"
         "                              simplex-helmholtz|simplex-elasticity|simplex-all|bp1-physics|bp2|bp3-physics|\n"
         "                              bp4|bp5-physics|bp6|elasticity-mg|bp3-robin|bp3-robin-host]\n"
         "                              [--degrees 1,2,...] [--dim 2|3]\n"
         "                   [--min-dofs N] [--max-dofs N] [--sizes K] [--scatter colored|atomic|both]\n"
         "                   [--backend auto|cuda|cpu] [--cells-per-block N,M,...] [--reps R] [--csv FILE]\n"
         "                                      (default auto: cuda where a GPU is usable, else cpu)\n"
         "                   [--design auto|point|column,...]   (CUDA kernel designs to time, a row each)\n"
         "                   [--setup-phases]   (setup_s split into the library's set-up phases, extra columns)\n"
         "                   [--verbose]        (progress on stderr: case i of n, elapsed time)\n"
         "                   [--cg N]           (also N Jacobi-CG iterations per row: ms per iteration and the\n"
         "                                       apply's time over it, cg_ms_per_iter and cg_vs_apply)\n"
         "                   [--cg-steps]       (that CG step by step, not with its fused vector steps)\n"
         "                   [--method mf|assembled|both]  (also, or only, the assembled CSR operator: rows\n"
         "                                       <problem>-csr, design csr)\n"
         "                   [--assembly-variant auto|search|table|rowwise|all]  (how it is assembled; all:\n"
         "                                       each variant timed on a \"# assembly\" line, the row with auto)\n"
         "                   [--geometry stored|on-the-fly|both]  (on the fly: rows with design <design>-otf\n"
         "                                       and a '# model' line of bytes and flops per DoF)\n"
         "                   [--tune]           (simplex problems: the measured fastest launch configuration)\n"
         "                   [--mg-precision double|float]  (elasticity-mg: the V-cycle's precision; default double)\n"
         "                   [--coefficient constant|ljungkvist]  (simplex mass, Laplace, Helmholtz: c(x) =\n"
         "                                       1/(0.05 + 2|x|^2) on the stiffness (mass: the mass), stored per\n"
         "                                       quadrature point; design <design>-c; default constant)\n"
         "  degrees 1..8 (simplex problems 1..4, default 1..4), dim 2|3, 0 < min-dofs <= max-dofs <= 1e10,\n"
         "  sizes 1..100, reps 1..64,\n"
         "  cells per block 1..1024 (a value a degree cannot take is skipped with a note)\n"
         "Exit status: 0 done (failed cases are reported and skipped), 1 the run failed (simplex problems: a\n"
         "case failed), 2 a bad option, 77 a simplex problem without a usable GPU.\n");
}

int main(int argc, char **argv)
{
  /* simplex-*: index 6 + the problem of perf/bench_simplex.c, simplex-all last */
  static const char *const problem_names[] = {"all", "bp1", "bp3", "bp5", "ljungkvist", "ljungkvist-adaptive",
                                              "simplex-mass", "simplex-laplace", "simplex-helmholtz",
                                              "simplex-elasticity", "simplex-all", "bp1-physics", "bp2",
                                              "bp3-physics", "bp4", "bp5-physics", "bp6", "elasticity-mg",
                                              "bp3-robin", "bp3-robin-host"},
                           *const scatters[] = {"both", "colored", "atomic"}, *const backends[] = {"cuda", "cpu", "auto"};
  int problem_i = 0, scatter_i = 0, backend_i = 2; /* auto, as mfree-poisson: the GPU where one is usable */
  const char *csv = NULL;
  int degrees[8] = {1, 2, 3, 4, 5, 6, 7, 8}, ndeg = 8, dim = 3, nsizes = 5, reps = 11;
  int cpbs[16] = {0}, ncpb = 1; /* 0: the default table */
  double min_dofs = 1e4, max_dofs = 3.5e7;
  int setup_phases = 0, cg_iters = 0, method_i = 0, tune = 0, degrees_given = 0, coef_i = 0, coef_given = 0;
  static const char *const coefs[] = {"constant", "ljungkvist"};
  int given[5] = {0}; /* --design, --cells-per-block, --geometry, --scatter, --backend given */
  static const char *const precisions[] = {"double", "float"};
  int mg_prec_i = 0, mg_prec_given = 0;
  static const char *const methods[] = {"mf", "assembled", "both"};
  mf_kernel_design designs[3] = {MF_KERNEL_AUTO};
  int ndesign = 1;
  static const char *const design_names[3] = {"auto", "point", "column"};
  static const char *const geometries[] = {"stored", "on-the-fly", "both"};
  int geometry_i = 0;
  /* options first, before MPI starts (options.h): a bad one stops before any work */
  opt_parser P;
  opt_init(&P, "mfree-bench", argc, argv);
  while (opt_next(&P)) {
    if (opt_is(&P, "--help") || opt_is(&P, "-h")) {
      if (!P.quiet) usage();
      return 0;
    }
    if (opt_is(&P, "--setup-phases")) setup_phases = 1;
    else if (opt_is(&P, "--verbose")) verbose = 1;
    else if (opt_is(&P, "--cg")) opt_int(&P, 0, 100000, &cg_iters);
    else if (opt_is(&P, "--cg-steps")) cg_steps = 1;
    else if (opt_is(&P, "--tune")) tune = 1;
    else if (opt_is(&P, "--coefficient")) opt_choice(&P, coefs, 2, &coef_i), coef_given = 1;
    else if (opt_is(&P, "--mg-precision")) opt_choice(&P, precisions, 2, &mg_prec_i), mg_prec_given = 1;
    else if (opt_is(&P, "--problem")) opt_choice(&P, problem_names, (int)(sizeof problem_names / sizeof *problem_names), &problem_i);
    else if (opt_is(&P, "--backend")) opt_choice(&P, backends, 3, &backend_i), given[4] = 1;
    else if (opt_is(&P, "--scatter")) opt_choice(&P, scatters, 3, &scatter_i), given[3] = 1;
    else if (opt_is(&P, "--method")) opt_choice(&P, methods, 3, &method_i);
    else if (opt_is(&P, "--assembly-variant")) opt_choice(&P, assembly_variants, 5, &assembly_variant_i);
    else if (opt_is(&P, "--geometry")) opt_choice(&P, geometries, 3, &geometry_i), given[2] = 1;
    else if (opt_is(&P, "--csv")) opt_string(&P, &csv);
    else if (opt_is(&P, "--dim")) opt_int(&P, 2, 3, &dim);
    else if (opt_is(&P, "--sizes")) opt_int(&P, 1, 100, &nsizes);
    else if (opt_is(&P, "--reps")) opt_int(&P, 1, 64, &reps);
    else if (opt_is(&P, "--cells-per-block")) opt_int_list(&P, 1, 1024, 16, cpbs, &ncpb), given[1] = 1;
    else if (opt_is(&P, "--min-dofs")) opt_double(&P, 0.0, 1, 1e10, 0, &min_dofs);
    else if (opt_is(&P, "--max-dofs")) opt_double(&P, 0.0, 1, 1e10, 0, &max_dofs);
    else if (opt_is(&P, "--degrees")) opt_int_list(&P, 1, 8, 8, degrees, &ndeg), degrees_given = 1;
    else if (opt_is(&P, "--design")) {
      given[0] = 1;
      const char *v = NULL;
      if (opt_string(&P, &v) == 0 && v) {
        ndesign = 0;
        for (const char *t = v; *t && !P.bad;) { /* a comma-separated list of design names */
          size_t len = strcspn(t, ",");
          int k = 0;
          while (k < 3 && !(strlen(design_names[k]) == len && !strncmp(t, design_names[k], len))) k++;
          if (k == 3 || ndesign == 3) opt_error(&P, "option --design: '%.*s' is not a design (auto, point, column; at most 3)", (int)len, t);
          else designs[ndesign++] = (mf_kernel_design)k;
          t += len + (t[len] == ',');
        }
        if (!ndesign && !P.bad) opt_error(&P, "option --design: no design given");
      }
    }
    else opt_unknown(&P);
  }
  if (!P.bad && max_dofs < min_dofs) opt_error(&P, "option --max-dofs: %g is below --min-dofs %g", max_dofs, min_dofs);
  /* ljungkvist-adaptive writes its own columns, with no place for an assembled row */
  if (!P.bad && method_i && problem_i == 5)
    opt_error(&P, "option --method %s: not available with --problem ljungkvist-adaptive", methods[method_i]);
  if (!P.bad && assembly_variant_i && !method_i)
    opt_error(&P, "option --assembly-variant %s needs --method assembled or both", assembly_variants[assembly_variant_i]);
  const int simplex = problem_i >= 6 && problem_i <= 10, physics = problem_i >= 11;
  if (!P.bad && physics && (method_i || cg_iters || setup_phases || given[0] || given[1] || given[2] || given[3]))
    opt_error(&P, "options --method, --cg, --setup-phases, --design, --cells-per-block, --geometry and --scatter: not "
                  "available with --problem %s", problem_names[problem_i]);
  if (!P.bad && coef_given && (!simplex || problem_i == 9))
    opt_error(&P, "option --coefficient needs a scalar simplex problem (simplex-mass|laplace|helmholtz|all), not '%s'",
              problem_names[problem_i]);
  if (!P.bad && mg_prec_given && strcmp(problem_names[problem_i], "elasticity-mg"))
    opt_error(&P, "option --mg-precision needs --problem elasticity-mg, not '%s'", problem_names[problem_i]);
  if (!P.bad && tune && !simplex)
    opt_error(&P, "option --tune needs a simplex problem (--problem simplex-...), not '%s'", problem_names[problem_i]);
  if (!P.bad && simplex) { /* the simplex kernels on the GPU: what does not apply to them is refused */
    const char *pn = problem_names[problem_i];
    static const char *const nopt[5] = {"--design", "--cells-per-block", "--geometry", "--scatter", "--backend"};
    if (backend_i == 1) opt_error(&P, "option --backend cpu: --problem %s runs on the cuda backend only", pn);
    else if (method_i) opt_error(&P, "option --method %s: --problem %s is matrix-free only", methods[method_i], pn);
    else if (cg_iters) opt_error(&P, "option --cg: not available with --problem %s", pn);
    else if (setup_phases) opt_error(&P, "option --setup-phases: not available with --problem %s", pn);
    else if (given[3] && scatter_i == 1) opt_error(&P, "option --scatter colored: --problem %s scatters with atomics", pn);
    else
      for (int k = 0; k < 3 && !P.bad; k++)
        if (given[k]) opt_error(&P, "option %s: not available with --problem %s", nopt[k], pn);
    if (!P.bad && !degrees_given) ndeg = MF_SIMPLEX_CUDA_MAX_DEGREE; /* 1..4 */
    for (int k = 0; k < ndeg && !P.bad; k++)
      if (degrees[k] > MF_SIMPLEX_CUDA_MAX_DEGREE)
        opt_error(&P, "option --degrees: %d out of range 1..%d for --problem %s (the simplex kernels on the GPU)",
                  degrees[k], MF_SIMPLEX_CUDA_MAX_DEGREE, pn);
  }
  if (P.bad) return 2;
  const char *problem = problem_names[problem_i], *scatter = scatters[scatter_i], *backend = backends[backend_i];

  MPI_Init(&argc, &argv);
  t_start = MPI_Wtime();
  /* several ranks (one per GPU): rank 0 prints and writes the CSV */
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  if (rank) {
    if (!freopen("/dev/null", "w", stdout)) return 1;
    fclose(stderr), stderr = fopen("/dev/null", "w");
  }
  /* the CSV file before any work: a path that cannot be written fails now */
  FILE *out = csv && !rank ? fopen(csv, "w") : NULL;
  int bad_csv = csv && !rank && !out;
  MPI_Bcast(&bad_csv, 1, MPI_INT, 0, MPI_COMM_WORLD);
  if (bad_csv) {
    fprintf(stderr, "mfree-bench: option --csv: cannot open '%s' for writing: %s\n", csv, strerror(errno));
    MPI_Finalize();
    return 2;
  }
  if (simplex && !mf_cuda_available()) { /* a run that cannot happen here: skipped, as the tests read it */
    mf_cuda_state state;
    const char *why = "";
    mf_cuda_status(&state, &why);
    fprintf(stderr, "mfree-bench: --problem %s: no usable GPU: %s\n", problem, why);
    if (out) fclose(out), remove(csv);
    MPI_Finalize();
    return 77;
  }
  mf_context ctx;
  if (mf_context_create(MPI_COMM_WORLD, simplex ? "cuda" : backend, &ctx)) {
    fprintf(stderr, "mfree-bench: option --backend: %s\n", mf_last_error_message());
    if (out) fclose(out), remove(csv); /* no results: no file that looks like some */
    MPI_Finalize();
    return 2;
  }
  int on_gpu = ctx->backend == MF_BACKEND_CUDA, status = 0;
  char device[256] = "cpu";
  double triad = 0.0, fp64 = 0.0;
#ifdef MFREE_WITH_CUDA
  if (on_gpu) {
    mf_bench_device_name(device, sizeof device);
    triad = mf_bench_triad((size_t)1 << 28, 20); /* 3 x 2 GiB */
    fp64 = mf_bench_fp64_peak(11);
  }
#endif
  bench_on_gpu = on_gpu;
  bench_triad = triad;
  physics_on_gpu = on_gpu;
  physics_reps = reps;
  printf("# device %s, triad %.1f GB/s, fp64 %.0f GFLOP/s\n", device, triad, fp64);
  const char *hdr = "device,problem,dim,p,q,scatter,ndofs,ms_per_apply,gdofs_per_s,bytes_per_dof,gb_per_s,frac_of_triad";
#ifdef MFREE_WITH_CUDA
  if (simplex) {
    mf_bench_simplex_opts so = {problem_i == 10 ? -1 : problem_i - 6, dim, degrees, ndeg, min_dofs, max_dofs, nsizes,
                                reps, tune, device, triad, fp64, progress, coef_i};
    if (mf_bench_simplex_run(ctx, &so, out)) status = 1;
    goto done;
  }
#endif
  if (physics) {
    const mf_bench_physics_opts po = {problem, dim, degrees, ndeg, max_dofs, device, triad, physics_time, mg_prec_i};
    if (mf_bench_physics_run(ctx, &po, out)) status = 1;
    goto done;
  }
  if (!strcmp(problem, "ljungkvist-adaptive")) {
    run_adaptive(ctx, device, on_gpu, dim, degrees, ndeg, max_dofs, reps, out);
    goto done;
  }
  char phase_hdr[512] = "";
  if (setup_phases)
    for (int k = 0; k < MF_PHASE_COUNT; k++)
      snprintf(phase_hdr + strlen(phase_hdr), sizeof phase_hdr - strlen(phase_hdr), ",setup_%s_s",
               mf_phase_name((mf_phase)k));
  printf("%s,setup_s,cells_per_block,design,cg_ms_per_iter,cg_vs_apply,flops_per_dof,gflop_per_s%s\n", hdr, phase_hdr);
  if (out) fprintf(out, "%s,setup_s,design,cg_ms_per_iter,cg_vs_apply,flops_per_dof,gflop_per_s%s\n", hdr, phase_hdr);
  const char *problems[4] = {"bp1", "bp3", "bp5", "ljungkvist"};
  int on_domain[2] = {0, 0}; /* deformed cube, ball */
  for (int pi = 0; pi < 4; pi++)
    if (!strcmp(problem, "all") || !strcmp(problem, problems[pi])) on_domain[pi == 3] = 1;
  const int ncases = ndeg * (on_domain[0] + on_domain[1]) * nsizes;
  int icase = 0;
  /* one mesh, space and input vector per (degree, size, domain), shared by the problems on it */
  for (int di = 0; di < ndeg; di++) {
    const int p = degrees[di];
    for (int ball = 0; ball < 2; ball++) {
      if (!on_domain[ball]) continue;
      double last = 0.0;
      for (int si = 0; si < nsizes; si++) {
        double target = nsizes == 1 ? max_dofs : min_dofs * pow(max_dofs / min_dofs, (double)si / (nsizes - 1));
        char what[128];
        snprintf(what, sizeof what, "p %d, %s, target %.3g DoFs", p, ball ? "ball" : "deformed cube", target);
        progress(++icase, ncases, what);
        int trees[3] = {1, 1, 1}, level = 0;
        if (ball) { /* (1 + 2 dim) t^dim trees, 2^dim-fold per level: (t, level) nearest the target */
          double best = INFINITY;
          for (int t = 1; t <= 6; t++)
            for (int l = 0; l <= 10; l++) {
              double n = (1 + 2 * dim) * pow(t * p * pow(2.0, l), dim);
              if (fabs(log(n / target)) < best) best = fabs(log(n / target)), level = l, trees[0] = trees[1] = trees[2] = t;
            }
        } else { /* the unit box in t^dim trees of 2^level cells per direction: t = 4..8 */
          double cells1d = (pow(target, 1.0 / dim) - 1.0) / p;
          level = cells1d > 8 ? (int)floor(log2(cells1d / 4.0)) : 0;
          int t = (int)floor(cells1d / pow(2.0, level) + 0.5);
          trees[0] = trees[1] = trees[2] = t < 1 ? 1 : t;
        }
        double t0 = MPI_Wtime(), space_phases[MF_PHASE_COUNT];
        mf_context_phase_reset(ctx);
        mf_mesh mesh = NULL;
        mf_space space = NULL;
        apply_arg a = {NULL, NULL, NULL};
        int ierr = mf_mesh_create_box(ctx, ball ? "ball" : "deformed", dim, trees, level, &mesh);
        if (!ierr) ierr = mf_space_create(mesh, p, &space);
        if (!ierr && (double)space->nglobal <= last) goto next; /* same size as the previous point */
        if (!ierr) ierr = mf_vector_create(space, &a.x);
        if (!ierr) ierr = mf_vector_create(space, &a.y);
        if (!ierr) { /* random input, cheap to make for 10^8 entries */
          double *h = malloc(sizeof(double) * (space->nowned ? space->nowned : 1));
          uint64_t z = 88172645463325252ULL;
          for (int i = 0; i < space->nowned; i++) {
            z ^= z << 13, z ^= z >> 7, z ^= z << 17;
            h[i] = (double)(z >> 11) / 9007199254740992.0 - 0.5;
          }
          ierr = mf_vector_set_values(a.x, h);
          free(h);
        }
        if (ierr) {
          fprintf(stderr, "mfree-bench: p %d target %.3g: %s\n", p, target, mf_last_error_message());
          goto next;
        }
        last = (double)space->nglobal;
        double space_setup = MPI_Wtime() - t0;
        mf_context_phase_times(ctx, space_phases);
        for (int pi = ball ? 3 : 0; pi < (ball ? 4 : 3); pi++) {
          if (strcmp(problem, "all") && strcmp(problem, problems[pi])) continue;
          mf_operator op = NULL;
          mf_context_phase_reset(ctx);
          double t1 = MPI_Wtime();
          if (pi == 0) ierr = mf_operator_create_mass(space, MF_QUAD_GAUSS_P2, NULL, NULL, &op);
          else if (pi == 1) ierr = mf_operator_create_laplace(space, MF_QUAD_GAUSS_P2, NULL, NULL, &op);
          else if (pi == 2) ierr = mf_operator_create_laplace(space, MF_QUAD_GLL, NULL, NULL, &op);
          else ierr = mf_operator_create_laplace(space, MF_QUAD_GAUSS, ljungkvist, NULL, &op);
          if (ierr) {
            fprintf(stderr, "mfree-bench: %s p %d: %s\n", problems[pi], p, mf_last_error_message());
            continue;
          }
          a.op = op;
          double setup = space_setup + MPI_Wtime() - t1, phases[MF_PHASE_COUNT];
          char phase_cols[512] = "";
          mf_context_phase_times(ctx, phases);
          if (setup_phases)
            for (int k = 0; k < MF_PHASE_COUNT; k++)
              snprintf(phase_cols + strlen(phase_cols), sizeof phase_cols - strlen(phase_cols), ",%.4f",
                       space_phases[k] + phases[k]);
          const mf_qdata *qd = &mf_hexop(op)->qd;
          if (method_i == 1) geometry_i = 0; /* only the csr rows: the operator is assembled with stored data */
          const double cells = (double)space->mesh->ncells_global;
          double bytes = 16.0 * space->nglobal + 8.0 * cells * qd->ncomp * qd->nqp + 4.0 * cells * space->npc;
          double bpd = bytes / space->nglobal, fpd = op_flops_per_dof(op);
          for (int gi = 0; gi < 2; gi++) { /* stored, then on the fly (--geometry) */
          if (gi != geometry_i && geometry_i != 2) continue;
          const double sw = gi ? otf_switch(op, &bpd, &fpd, problems[pi], p) : 0.0, setup_g = setup + sw;
          if (sw < 0) break;
          for (int ki = 0; ki < ndesign && method_i != 1; ki++)
          for (int ci = 0; ci < ncpb; ci++)
            for (int sc = 0; sc < 2; sc++) {
              if (!on_gpu && ki > 0) break; /* one CPU kernel */
              if (gi && ki > 0) break;      /* on the fly: the point design whatever the design asked */
              mf_operator_set_kernel_design(op, designs[ki]);
              char dname[32];
              snprintf(dname, sizeof dname, "%s%s", on_gpu ? design_names[(int)mf_operator_design(op)] : "cpu",
                       gi ? "-otf" : "");
              if (cpbs[ci] && mf_operator_set_cells_per_block(op, cpbs[ci])) { /* too many threads for p */
                fprintf(stderr, "mfree-bench: --cells-per-block %d skipped for %s p %d: %s\n", cpbs[ci], problems[pi], p,
                        mf_last_error_message());
                break;
              }
              if (sc == 0 && !strcmp(scatter, "atomic")) continue;
              if (sc == 1 && (!strcmp(scatter, "colored") || !on_gpu)) continue;
              mf_operator_set_scatter(op, sc ? MF_SCATTER_ATOMIC : MF_SCATTER_COLORED);
              int err = 0;
              double ms = time_apply(&a, on_gpu, reps, &err);
              if (err) {
                fprintf(stderr, "mfree-bench: apply failed: %s\n", mf_last_error_message());
                continue;
              }
              double dofs = space->nglobal / (ms * 1e-3), gbs = bpd * dofs / 1e9;
              char row[512];
              snprintf(row, sizeof row, "%s,%s,%d,%d,%d,%s,%lld,%.5f,%.4f,%.1f,%.1f,%.3f", device, problems[pi], dim, p,
                       mf_hexop(op)->basis.nq, !on_gpu ? "serial" : sc ? "atomic" : "colored", (long long)space->nglobal, ms, dofs / 1e9, bpd, gbs,
                       triad > 0 ? gbs / triad : 0.0);
              char cgc[64] = ",,";
              if (cg_iters > 0) {
                double cg_s = time_cg(op, a.x, a.y, cg_iters, &err);
                if (err) fprintf(stderr, "mfree-bench: CG failed: %s\n", mf_last_error_message());
                else snprintf(cgc, sizeof cgc, ",%.5f,%.3f", cg_s * 1e3, cg_s > 0 ? ms / (cg_s * 1e3) : 0.0);
              }
              char fl[64];
              snprintf(fl, sizeof fl, ",%.1f,%.1f", fpd, fpd * dofs / 1e9);
              printf("%s,%.3f,%d,%s%s%s%s\n", row, setup_g, mf_hexop(op)->cells_per_block, dname, cgc, fl, phase_cols);
              fflush(stdout);
              if (out) fprintf(out, "%s,%.3f,%s%s%s%s\n", row, setup_g, dname, cgc, fl, phase_cols), fflush(out);
            }
          }
          if (method_i && mf_hexop(op)->geometry != MF_GEOMETRY_STORED) /* assembled from stored data */
            mf_operator_set_geometry(op, MF_GEOMETRY_STORED);
          if (method_i) csr_row(op, &a, device, problems[pi], dim, reps, cg_iters, setup_phases, out);
          mf_operator_destroy(&op);
        }
      next:
        mf_vector_destroy(&a.x);
        mf_vector_destroy(&a.y);
        mf_space_destroy(&space);
        mf_mesh_destroy(&mesh);
      }
    }
  }
done:
  if (out) fclose(out);
  mf_context_destroy(&ctx);
  MPI_Finalize();
  return status;
}
