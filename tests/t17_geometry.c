/* t17_geometry -- geometry on the fly (mf_operator_set_geometry) against stored quadrature data:
 *   for mass, Laplace and Helmholtz, dim 2 and 3, every degree (3D: p <= 4 on the cpu backend), the
 *   three quadrature rules, with a coefficient callback and without, on the deformed cube and the
 *   ball, uniform and adaptive (hanging nodes): the on-the-fly apply equals the stored one to 1e-12
 *   (relative, max norm) on random input, with both scatters; the diagonal too; back to stored the
 *   operator applies as before;
 *   CG with on-the-fly geometry takes the same iterations to the same solution, with Jacobi and with
 *   multigrid (double and float V-cycles: the float copies of an on-the-fly operator);
 *   bad input is refused with its message: an unknown mode, shell and assembled operators, a
 *   single-precision copy, the assembly of an on-the-fly operator, its quadrature data.
 * Usage: t17_geometry [cpu|cuda] [small]   (small: 2D, p <= 3, and the error cases: the valgrind run) */
#include "mf_test.h"
#include "mf_testing.h"

static double coef_sin(const double *x, int dim, void *user)
{
  (void)user;
  double s = 1.5;
  for (int k = 0; k < dim; k++) s += 0.4 * sin(2.0 + 3.0 * x[k] * (k + 1));
  return s;
}

static double source(const double *x, int dim, void *user)
{
  (void)x;
  (void)dim;
  (void)user;
  return 1.0;
}

/* max |a - b| / max |b| over the owned entries of all ranks (n: this rank's) */
static double rel_diff(mf_vector a, mf_vector b, int n)
{
  double *ha = malloc(sizeof(double) * (n + 1)), *hb = malloc(sizeof(double) * (n + 1)), num = 0.0, den = 0.0;
  T_CALL(mf_vector_get_values(a, ha));
  T_CALL(mf_vector_get_values(b, hb));
  for (int i = 0; i < n; i++) {
    num = fmax(num, fabs(ha[i] - hb[i]));
    den = fmax(den, fabs(hb[i]));
  }
  free(ha);
  free(hb);
  MPI_Allreduce(MPI_IN_PLACE, &num, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  MPI_Allreduce(MPI_IN_PLACE, &den, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  return den > 0 ? num / den : num;
}

static int ncases = 0;

/* One operator: stored apply and diagonal, then on the fly, then stored again. */
static void check_operator(mf_space V, int kind, mf_quadrature quad, int with_coef, const char *what)
{
  mf_operator A;
  mf_coefficient_fn c = with_coef ? coef_sin : NULL;
  if (kind == 0) T_CALL(mf_operator_create_mass(V, quad, c, NULL, &A));
  else if (kind == 1) T_CALL(mf_operator_create_laplace(V, quad, c, NULL, &A));
  else T_CALL(mf_operator_create_helmholtz(V, quad, 0.7, 1.3, c, NULL, &A));
  if (kind == 1) T_CALL(mf_operator_set_dirichlet(A, 1));
  int nowned, nlocal;
  T_CALL(mf_space_local_sizes(V, &nowned, &nlocal));
  mf_vector x, ys, yo, ds, dd;
  T_CALL(mf_vector_create(V, &x));
  T_CALL(mf_vector_create(V, &ys));
  T_CALL(mf_vector_create(V, &yo));
  T_CALL(mf_vector_create(V, &ds));
  T_CALL(mf_vector_create(V, &dd));
  T_CALL(mf_vector_set_random(x, 17 + (uint64_t)ncases));
  T_CALL(mf_operator_apply(A, x, ys));
  T_CALL(mf_operator_diagonal(A, ds));
  mf_geometry g = MF_GEOMETRY_ON_THE_FLY;
  T_CALL(mf_operator_get_geometry(A, &g));
  T_CHECK(g == MF_GEOMETRY_STORED, "%s: a new operator has geometry %d", what, (int)g);

  T_CALL(mf_operator_set_geometry(A, MF_GEOMETRY_ON_THE_FLY));
  T_CALL(mf_operator_get_geometry(A, &g));
  T_CHECK(g == MF_GEOMETRY_ON_THE_FLY, "%s: geometry %d after switching to on the fly", what, (int)g);
  T_CHECK(mf_hexop(A)->qd.data == NULL, "%s: stored data kept on the fly", what);
  T_CHECK((mf_hexop(A)->coefq != NULL) == (with_coef && A->ctx->backend == MF_BACKEND_CPU), "%s: coefficient array %p", what,
          (void *)mf_hexop(A)->coefq);
  T_CHECK(mf_operator_design(A) == MF_KERNEL_POINT, "%s: on-the-fly operator not in the point design", what);
  for (int sc = 0; sc < 2; sc++) {
    T_CALL(mf_operator_set_scatter(A, sc ? MF_SCATTER_COLORED : MF_SCATTER_ATOMIC));
    T_CALL(mf_operator_apply(A, x, yo));
    double e = rel_diff(yo, ys, nowned);
    T_CHECK(e <= 1e-12, "%s, %s scatter: on-the-fly apply differs from stored by %.3g", what,
            sc ? "colored" : "atomic", e);
  }
  T_CALL(mf_operator_diagonal(A, dd));
  double e = rel_diff(dd, ds, nowned);
  T_CHECK(e <= 1e-12, "%s: on-the-fly diagonal differs from stored by %.3g", what, e);

  T_CALL(mf_operator_set_geometry(A, MF_GEOMETRY_STORED));
  T_CHECK(mf_hexop(A)->coefq == NULL, "%s: coefficient array kept after switching back", what);
  T_CALL(mf_operator_set_scatter(A, MF_SCATTER_ATOMIC));
  T_CALL(mf_operator_apply(A, x, yo));
  e = rel_diff(yo, ys, nowned);
  T_CHECK(e <= 1e-12, "%s: stored again, apply differs from before by %.3g", what, e);
  mf_vector_destroy(&x);
  mf_vector_destroy(&ys);
  mf_vector_destroy(&yo);
  mf_vector_destroy(&ds);
  mf_vector_destroy(&dd);
  mf_operator_destroy(&A);
  ncases++;
}

/* CG on the adaptive ball: the same iterations and solution with either geometry. */
static void check_cg(mf_context ctx, int dim, int p)
{
  mf_mesh mesh;
  mf_space V;
  t_ball(ctx, dim, 1, 1, &mesh);
  T_CALL(mf_space_create(mesh, p, &V));
  int nowned, nlocal;
  T_CALL(mf_space_local_sizes(V, &nowned, &nlocal));
  mf_vector b, u[2];
  T_CALL(mf_vector_create(V, &b));
  T_CALL(mf_vector_assemble_rhs(b, source, NULL));
  T_CALL(mf_vector_zero_boundary(b));
  int iters[2];
  for (int k = 0; k < 2; k++) {
    mf_operator A;
    mf_cg cg;
    mf_cg_info info;
    T_CALL(mf_operator_create_laplace(V, MF_QUAD_GAUSS, t_ljungkvist, NULL, &A));
    T_CALL(mf_operator_set_dirichlet(A, 1));
    if (k) T_CALL(mf_operator_set_geometry(A, MF_GEOMETRY_ON_THE_FLY));
    T_CALL(mf_vector_create(V, &u[k]));
    T_CALL(mf_vector_set_value(u[k], 0.0));
    T_CALL(mf_cg_create(A, &cg));
    T_CALL(mf_cg_set_tolerance(cg, 1e-10, 2000));
    T_CALL(mf_cg_solve(cg, b, u[k], &info));
    T_CHECK(info.converged, "dim %d p %d: CG (%s geometry) did not converge", dim, p, k ? "on-the-fly" : "stored");
    iters[k] = info.iterations;
    mf_cg_destroy(&cg);
    mf_operator_destroy(&A);
  }
  T_CHECK(iters[0] == iters[1], "dim %d p %d: CG iterations %d stored, %d on the fly", dim, p, iters[0], iters[1]);
  double e = rel_diff(u[1], u[0], nowned);
  T_CHECK(e <= 1e-10, "dim %d p %d: CG solutions differ by %.3g", dim, p, e);
  mf_vector_destroy(&u[0]);
  mf_vector_destroy(&u[1]);
  mf_vector_destroy(&b);
  mf_space_destroy(&V);
  mf_mesh_destroy(&mesh);
}

/* Multigrid (double and float V-cycles) on an on-the-fly operator: the same iterations as on the
 * stored one (its levels and float copies are made from the same quadrature data). */
static void check_mg(mf_context ctx, int dim, int p)
{
  mf_mesh mesh;
  mf_space V;
  t_ball(ctx, dim, 1, 1, &mesh);
  T_CALL(mf_space_create(mesh, p, &V));
  int nowned, nlocal;
  T_CALL(mf_space_local_sizes(V, &nowned, &nlocal));
  mf_vector b;
  T_CALL(mf_vector_create(V, &b));
  T_CALL(mf_vector_assemble_rhs(b, source, NULL));
  T_CALL(mf_vector_zero_boundary(b));
  for (int prec = 0; prec < 2; prec++) {
    int iters[2];
    mf_vector u[2];
    for (int k = 0; k < 2; k++) {
      mf_operator A;
      mf_cg cg;
      mf_pc mg;
      mf_cg_info info;
      T_CALL(mf_operator_create_laplace(V, MF_QUAD_GAUSS, t_ljungkvist, NULL, &A));
      T_CALL(mf_operator_set_dirichlet(A, 1));
      if (k) T_CALL(mf_operator_set_geometry(A, MF_GEOMETRY_ON_THE_FLY));
      T_CALL(mf_pc_create(A, MF_PC_MULTIGRID, &mg));
      if (prec) T_CALL(mf_pc_set_multigrid_precision(mg, MF_PRECISION_FLOAT));
      T_CALL(mf_vector_create(V, &u[k]));
      T_CALL(mf_vector_set_value(u[k], 0.0));
      T_CALL(mf_cg_create(A, &cg));
      T_CALL(mf_cg_set_pc(cg, mg));
      T_CALL(mf_cg_set_tolerance(cg, 1e-9, 200));
      T_CALL(mf_cg_solve(cg, b, u[k], &info));
      iters[k] = info.iterations;
      T_CHECK(info.converged, "dim %d p %d: multigrid CG (%s, %s geometry) did not converge", dim, p,
              prec ? "float" : "double", k ? "on-the-fly" : "stored");
      mf_cg_destroy(&cg);
      mf_pc_destroy(&mg);
      mf_operator_destroy(&A);
    }
    T_CHECK(iters[0] == iters[1], "dim %d p %d: multigrid (%s) CG iterations %d stored, %d on the fly", dim, p,
            prec ? "float" : "double", iters[0], iters[1]);
    double e = rel_diff(u[1], u[0], nowned);
    T_CHECK(e <= (prec ? 1e-6 : 1e-9), "dim %d p %d: multigrid (%s) CG solutions differ by %.3g", dim, p,
            prec ? "float" : "double", e);
    mf_vector_destroy(&u[0]);
    mf_vector_destroy(&u[1]);
  }
  mf_vector_destroy(&b);
  mf_space_destroy(&V);
  mf_mesh_destroy(&mesh);
}

static int shell_apply(mf_vector x, mf_vector y, void *user)
{
  (void)user;
  return mf_vector_copy(y, x);
}

static void check_errors(mf_context ctx)
{
  mf_mesh mesh;
  mf_space V;
  mf_operator A, S, F = NULL, M = NULL;
  T_CALL(mf_mesh_create(ctx, "deformed", 2, 2, &mesh));
  T_CALL(mf_space_create(mesh, 2, &V));
  T_CALL(mf_operator_create_laplace(V, MF_QUAD_GAUSS, coef_sin, NULL, &A));
  mf_geometry g;
  EXPECT(mf_operator_set_geometry(NULL, MF_GEOMETRY_ON_THE_FLY), MF_ERR_NULL, "operator is NULL");
  EXPECT(mf_operator_set_geometry(A, (mf_geometry)7), MF_ERR_ARGUMENT, "geometry mode 7 unknown");
  EXPECT(mf_operator_set_geometry(A, (mf_geometry)-1), MF_ERR_ARGUMENT, "geometry mode -1 unknown");
  EXPECT(mf_operator_get_geometry(A, NULL), MF_ERR_NULL, "output pointer mode is NULL");
  EXPECT(mf_operator_get_geometry(NULL, &g), MF_ERR_NULL, "operator is NULL");
  T_CALL(mf_operator_create_shell(V, shell_apply, NULL, NULL, &S));
  EXPECT(mf_operator_set_geometry(S, MF_GEOMETRY_ON_THE_FLY), MF_ERR_UNSUPPORTED, "(this one is a shell operator)");
  T_CALL(mf_operator_get_geometry(S, &g));
  T_CHECK(g == MF_GEOMETRY_STORED, "a shell operator reports geometry %d", (int)g);
  /* a single-precision copy keeps stored data, and is made from stored data only */
  T_CALL(mf_operator_create_single(A, &F));
  EXPECT(mf_operator_set_geometry(F, MF_GEOMETRY_ON_THE_FLY), MF_ERR_UNSUPPORTED,
         "geometry on the fly is for double-precision operators");
  mf_operator_destroy(&F);
  if (ctx->backend == MF_BACKEND_CPU) {
    T_CALL(mf_operator_create_assembled(A, &M));
    EXPECT(mf_operator_set_geometry(M, MF_GEOMETRY_ON_THE_FLY), MF_ERR_UNSUPPORTED, "(this one is assembled)");
    mf_operator_destroy(&M);
  }
  T_CALL(mf_operator_set_geometry(A, MF_GEOMETRY_ON_THE_FLY));
  T_CALL(mf_operator_set_geometry(A, MF_GEOMETRY_ON_THE_FLY)); /* again: nothing to do */
  /* a float copy of an on-the-fly operator keeps stored float data (made from data made for the moment) */
  T_CALL(mf_operator_create_single(A, &F));
  T_CHECK(mf_hexop(F)->geometry == MF_GEOMETRY_STORED && mf_hexop(F)->coefq == NULL, "float copy of an on-the-fly operator: geometry %d",
          (int)mf_hexop(F)->geometry);
  EXPECT(mf_operator_set_geometry(F, MF_GEOMETRY_ON_THE_FLY), MF_ERR_UNSUPPORTED, "a single-precision copy keeps");
  mf_operator_destroy(&F);
  double *h = malloc(sizeof(double) * (mf_hexop(A)->qd.len + 1));
  EXPECT(mf_operator_qdata_to_host(A, h), MF_ERR_UNSUPPORTED, "keeps no quadrature data");
  free(h);
  if (ctx->backend == MF_BACKEND_CPU) {
    EXPECT(mf_operator_create_assembled(A, &M), MF_ERR_UNSUPPORTED, "computes its geometry on the fly: assemble it");
    T_CHECK(M == NULL, "a refused assembly left a handle");
  }
  /* the column design falls back to the point design on the fly */
  T_CALL(mf_operator_set_kernel_design(A, MF_KERNEL_COLUMN));
  T_CHECK(mf_operator_design(A) == MF_KERNEL_POINT, "on the fly with MF_KERNEL_COLUMN: design %d",
          (int)mf_operator_design(A));
  T_CALL(mf_operator_set_geometry(A, MF_GEOMETRY_STORED));
  T_CHECK(mf_operator_design(A) == MF_KERNEL_COLUMN, "stored again: design %d", (int)mf_operator_design(A));
  mf_operator_destroy(&S);
  mf_operator_destroy(&A);
  mf_space_destroy(&V);
  mf_mesh_destroy(&mesh);
}

/* A coefficient that is NaN on the last rank only (user: that rank's flag) */
static double nan_on_one_rank(const double *x, int dim, void *user)
{
  (void)x, (void)dim;
  return *(const int *)user ? NAN : 1.0;
}

/* A switch that fails on one rank only leaves every rank in its old state: each returns the error,
 * and the operator still applies (stored) on all of them, with no rank left waiting. */
static void check_one_rank_fails(mf_context ctx)
{
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  int last = rank == size - 1;
  mf_mesh mesh;
  mf_space V;
  mf_operator A;
  mf_vector x, y;
  T_CALL(mf_mesh_create(ctx, "deformed", 2, 2, &mesh));
  T_CALL(mf_space_create(mesh, 2, &V));
  /* stored set-up evaluates the coefficient too: make it finite there, NaN only for the switch */
  int fail = 0;
  T_CALL(mf_operator_create_laplace(V, MF_QUAD_GAUSS, nan_on_one_rank, &fail, &A));
  fail = last;
  const int e = mf_operator_set_geometry(A, MF_GEOMETRY_ON_THE_FLY);
  T_CHECK(e != 0, "a switch that fails on rank %d returned 0 on rank %d", size - 1, rank);
  mf_geometry g;
  T_CALL(mf_operator_get_geometry(A, &g));
  T_CHECK(g == MF_GEOMETRY_STORED, "rank %d switched although rank %d failed", rank, size - 1);
  T_CALL(mf_vector_create(V, &x));
  T_CALL(mf_vector_create(V, &y));
  T_CALL(mf_vector_set_random(x, 3));
  T_CALL(mf_operator_apply(A, x, y)); /* collective: every rank gets here */
  fail = 0;
  T_CALL(mf_operator_set_geometry(A, MF_GEOMETRY_ON_THE_FLY)); /* and can switch when all succeed */
  T_CALL(mf_operator_get_geometry(A, &g));
  T_CHECK(g == MF_GEOMETRY_ON_THE_FLY, "rank %d did not switch", rank);
  mf_vector_destroy(&x);
  mf_vector_destroy(&y);
  mf_operator_destroy(&A);
  mf_space_destroy(&V);
  mf_mesh_destroy(&mesh);
}

int main(int argc, char **argv)
{
  MPI_Init(&argc, &argv);
  const char *be = t_backend(argc, argv);
  const int small = argc > 2 && !strcmp(argv[2], "small");
  mf_context ctx;
  T_CALL(mf_context_create(MPI_COMM_WORLD, be, &ctx));
  const int gpu = !strcmp(be, "cuda");
  check_errors(ctx);
  check_one_rank_fails(ctx);
  static const char *meshes[2] = {"deformed", "ball"};
  for (int dim = 2; dim <= (small ? 2 : 3); dim++) {
    const int pmax = small ? 3 : (dim == 3 && !gpu) ? 4 : 8;
    for (int mi = 0; mi < 2; mi++)
      for (int adapt = 0; adapt < 2; adapt++) {
        mf_mesh mesh;
        /* deformed: level 2, the cells near a point refined once; ball: level 1, the same */
        if (mi == 0) t_mesh(ctx, meshes[mi], dim, 2, adapt, &mesh);
        else t_ball(ctx, dim, 1, adapt, &mesh);
        for (int p = 1; p <= pmax; p++) {
          mf_space V;
          T_CALL(mf_space_create(mesh, p, &V));
          int nmasked = V->nmasked;
          MPI_Allreduce(MPI_IN_PLACE, &nmasked, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
          T_CHECK(!adapt || nmasked > 0, "%s dim %d adaptive: no cell with hanging nodes", meshes[mi], dim);
          for (int quad = 0; quad < 3; quad++)
            for (int kind = 0; kind < 3; kind++)
              for (int wc = 0; wc < 2; wc++) {
                if (small && wc == 1 && kind != 1) continue;
                char what[160];
                snprintf(what, sizeof what, "%s %s dim %d p %d quad %d op %d %s", meshes[mi],
                         adapt ? "adaptive" : "uniform", dim, p, quad, kind, wc ? "coefficient" : "constant");
                check_operator(V, kind, (mf_quadrature)quad, wc, what);
              }
          mf_space_destroy(&V);
        }
        mf_mesh_destroy(&mesh);
      }
  }
  check_cg(ctx, 2, 3);
  check_mg(ctx, 2, 3);
  if (!small) {
    check_cg(ctx, 3, 2);
    check_mg(ctx, 3, 2);
  }
  mf_context_destroy(&ctx);
  return t_finish();
}
