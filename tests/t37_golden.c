/* t37_golden -- the operators made from the gallery's description against the built-in operators as
 * they were before the house was reshaped: tests/data/t37_golden.txt holds, per case, figures of y = A x
 * and of the diagonal computed by the library of commit 1bbd92b (its own hard-coded mass, Laplace,
 * Helmholtz and elasticity kernels), written by this program's "generate" mode built against that
 * library. Each run computes them again and compares to 1e-14 relative:
 *   hex      Q_p, 2D p = 1..4 and 3D p = 1..3, on the deformed mesh uniform and adapted (hanging nodes),
 *            mass with a coefficient, Laplace with a coefficient in the Dirichlet form, Helmholtz
 *            a M + b K(c), on 1 or more ranks;
 *   simplex  P_p, p = 1..3, square-tris and cube-tets: mass, Laplace, Helmholtz and elasticity (one rank).
 * The vectors x and w are interpolated from fixed functions (random values by position for elasticity):
 * the same by position on any number of ranks. The figures: |y|, w.y, sum y, |d|, w.d. The tolerance is 1e-14 times |w||y| for dot
 * products, |y| for norms and sqrt(n)|y| for sums.
 * Usage: t37_golden [cpu|cuda] [GOLDEN_FILE] | t37_golden generate (prints the table). */
#include "mf_test.h"

#include <math.h>

static double coef(const double *x, int dim, void *u)
{
  (void)u;
  return 1.0 + 0.5 * sin(x[0]) + (dim > 1 ? x[1] * x[1] : 0.0) + (dim > 2 ? 0.25 * x[2] : 0.0);
}
static double fx(const double *x, int dim, void *u)
{
  (void)u;
  return sin(12.9898 * x[0] + 78.233 * x[1] + (dim > 2 ? 37.719 * x[2] : 0.0)) + 0.3;
}
static double fw(const double *x, int dim, void *u)
{
  (void)u;
  return cos(4.1 * x[0] - 2.7 * x[1] + (dim > 2 ? 5.3 * x[2] : 0.0));
}
static int refine_left(const double *c, int dim, int level, void *u)
{
  (void)dim, (void)u;
  return c[0] < 0.4 && level < 4 ? 1 : 0;
}

#define NFIG 5
typedef struct {
  char name[64];
  double fig[NFIG];  /* |y|, w.y, sum y, |d|, w.d */
  double scale[NFIG];
} figures;

static void measure(mf_space s, int ncomp, mf_operator A, figures *f)
{
  mf_vector x = NULL, y = NULL, w = NULL, d = NULL;
  T_CALL(mf_vector_create(s, &x));
  T_CALL(mf_vector_create(s, &y));
  T_CALL(mf_vector_create(s, &w));
  T_CALL(mf_vector_create(s, &d));
  if (ncomp == 1) {
    T_CALL(mf_vector_interpolate(x, fx, NULL));
    T_CALL(mf_vector_interpolate(w, fw, NULL));
  } else { /* several components: random values by position, a seed per component */
    T_CALL(mf_vector_set_random(x, 3));
    T_CALL(mf_vector_set_random(w, 4));
  }
  T_CALL(mf_operator_apply(A, x, y));
  T_CALL(mf_operator_diagonal(A, d));
  double ny = 0, nw = 0, nd = 0, wy = 0, sy = 0, wd = 0;
  int64_t n = 0;
  T_CALL(mf_space_num_dofs(s, &n));
  T_CALL(mf_vector_norm2(y, &ny));
  T_CALL(mf_vector_norm2(w, &nw));
  T_CALL(mf_vector_norm2(d, &nd));
  T_CALL(mf_vector_dot(w, y, &wy));
  T_CALL(mf_vector_sum(y, &sy));
  T_CALL(mf_vector_dot(w, d, &wd));
  const double fig[NFIG] = {ny, wy, sy, nd, wd};
  const double scale[NFIG] = {ny, nw * ny, sqrt((double)n) * ny, nd, nw * nd};
  for (int k = 0; k < NFIG; k++) f->fig[k] = fig[k], f->scale[k] = scale[k];
  mf_vector_destroy(&x);
  mf_vector_destroy(&y);
  mf_vector_destroy(&w);
  mf_vector_destroy(&d);
}

static const char *const KIND[4] = {"mass", "laplace", "helmholtz", "elasticity"};

static void make(mf_space s, int kind, mf_operator *A)
{
  if (kind == 0) T_CALL(mf_operator_create_mass(s, MF_QUAD_GAUSS, coef, NULL, A));
  else if (kind == 1) {
    T_CALL(mf_operator_create_laplace(s, MF_QUAD_GAUSS, coef, NULL, A));
    T_CALL(mf_operator_set_dirichlet(*A, 1));
  } else if (kind == 2) T_CALL(mf_operator_create_helmholtz(s, MF_QUAD_GAUSS, 1.5, 0.7, coef, NULL, A));
  else T_CALL(mf_operator_create_elasticity(s, 1.2, 0.8, A));
}

/* Every case, in a fixed order, into out (at most max); returns the count. */
static int run_cases(mf_context ctx, int size, int cuda, figures *out, int max)
{
  int n = 0;
  for (int dim = 2; dim <= 3; dim++)
    for (int adapt = 0; adapt <= 1; adapt++)
      for (int p = 1; p <= (dim == 2 ? 4 : 3); p++) {
        mf_mesh mesh = NULL;
        mf_space s = NULL;
        T_CALL(mf_mesh_create(ctx, "deformed", dim, dim == 2 ? 3 : 2, &mesh));
        if (adapt) T_CALL(mf_mesh_adapt(mesh, refine_left, NULL));
        T_CALL(mf_space_create(mesh, p, &s));
        for (int kind = 0; kind < 3 && n < max; kind++, n++) {
          mf_operator A = NULL;
          make(s, kind, &A);
          snprintf(out[n].name, sizeof out[n].name, "hex-%dd-%s-q%d-%s", dim, adapt ? "adapted" : "uniform", p, KIND[kind]);
          measure(s, 1, A, &out[n]);
          mf_operator_destroy(&A);
        }
        mf_space_destroy(&s);
        mf_mesh_destroy(&mesh);
      }
  if (size > 1) return n; /* simplex meshes: one rank */
  for (int dim = 2; dim <= 3; dim++)
    for (int p = 1; p <= 3; p++) {
      mf_mesh mesh = NULL;
      T_CALL(mf_mesh_create(ctx, dim == 2 ? "square-tris" : "cube-tets", dim, dim == 2 ? 3 : 1, &mesh));
      for (int kind = 0; kind < 4 && n < max; kind++, n++) {
        mf_space s = NULL;
        mf_operator A = NULL;
        if (kind == 3) T_CALL(mf_space_create_components(mesh, p, dim, &s));
        else T_CALL(mf_space_create(mesh, p, &s));
        make(s, kind, &A);
        snprintf(out[n].name, sizeof out[n].name, "simplex-%dd-p%d-%s", dim, p, KIND[kind]);
        measure(s, kind == 3 ? dim : 1, A, &out[n]);
        mf_operator_destroy(&A);
        mf_space_destroy(&s);
      }
      mf_mesh_destroy(&mesh);
    }
  (void)cuda;
  return n;
}

#define MAXCASES 128

int main(int argc, char **argv)
{
  MPI_Init(&argc, &argv);
  const int generate = argc > 1 && strcmp(argv[1], "generate") == 0;
  const char *be = generate ? "cpu" : t_backend(argc, argv);
  const char *path = argc > 2 ? argv[2] : NULL;
  int size, rank;
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  mf_context ctx;
  T_CALL(mf_context_create(MPI_COMM_WORLD, be, &ctx));
  figures *f = calloc(MAXCASES, sizeof *f);
  const int n = run_cases(ctx, size, strcmp(be, "cuda") == 0, f, MAXCASES);
  if (generate) {
    if (rank == 0) {
      printf("# t37_golden: case |y| w.y sum(y) |d| w.d (tests/t37_golden.c)\n");
      for (int i = 0; i < n; i++) {
        printf("%s", f[i].name);
        for (int k = 0; k < NFIG; k++) printf(" %.17g", f[i].fig[k]);
        printf("\n");
      }
    }
  } else {
    T_CHECK(path != NULL, "usage: t37_golden [cpu|cuda] GOLDEN_FILE");
    FILE *fp = path ? fopen(path, "r") : NULL;
    T_CHECK(!path || fp, "cannot open %s", path ? path : "");
    char line[512];
    int found = 0;
    double worst = 0.0;
    while (fp && fgets(line, sizeof line, fp)) {
      if (line[0] == '#') continue;
      char name[64];
      double g[NFIG];
      if (sscanf(line, "%63s %lg %lg %lg %lg %lg", name, &g[0], &g[1], &g[2], &g[3], &g[4]) != 1 + NFIG) continue;
      for (int i = 0; i < n; i++) {
        if (strcmp(f[i].name, name)) continue;
        found++;
        for (int k = 0; k < NFIG; k++) {
          const double err = fabs(f[i].fig[k] - g[k]) / (f[i].scale[k] > 0 ? f[i].scale[k] : 1.0);
          if (err > worst) worst = err;
          T_CHECK(err <= 1e-14, "%s figure %d: %.17g, before the reshape %.17g (%.3e relative)", name, k, f[i].fig[k],
                  g[k], err);
        }
      }
    }
    if (fp) fclose(fp);
    T_CHECK(found == n && n > 0, "%d of %d cases found in %s", found, n, path ? path : "");
    if (rank == 0) printf("t37_golden (%s, %d ranks): %d cases, largest difference %.3e relative\n", be, size, n, worst);
  }
  free(f);
  mf_context_destroy(&ctx);
  return t_finish();
}
