/* t39_gmres -- restarted GMRES (mf_gmres), right-preconditioned:
 *   symmetric      on Poisson (the built-in Laplace, Dirichlet form) GMRES reaches CG's solution to 1e-8
 *                  relative, with Jacobi and with multigrid, restart 5 and 30;
 *   advection      an advection-diffusion operator (physics: g1 = beta, g3 = eps I) that CG cannot take:
 *                  GMRES's true residual ||b - A x|| reaches the tolerance (recomputed here), and with a
 *                  source (f0) and boundary values through the residual the L2 error falls at rate p + 1;
 *   ranks          the same iterations on 1 and N ranks (+-1);
 *   bad input      restart, tolerance, NULL arguments, vectors of another space, a preconditioner of
 *                  another space.
 * Usage: t39_gmres [cpu|cuda] (1 or more ranks). */
#include "mf_test.h"

#include <math.h>

static double one(const double *x, int dim, void *user)
{
  (void)x, (void)dim, (void)user;
  return 1.0;
}

/* advection-diffusion: eps (grad u, grad v) + (beta . grad u, v), beta = k[1..dim], eps = k[0] */
static void g1_adv(int dim, int nc, const double *u, const double *du, const double *x, const double *k, double *g1)
{
  (void)nc, (void)u, (void)du, (void)x;
  for (int e = 0; e < dim; e++) g1[e] = k[1 + e];
}
static void g3_diff(int dim, int nc, const double *u, const double *du, const double *x, const double *k, double *g3)
{
  (void)nc, (void)u, (void)du, (void)x;
  for (int d = 0; d < dim; d++) g3[d * dim + d] = k[0];
}
/* u = sin(pi x) sin(pi y) (3D: * (1 + z)); f = -eps lap u + beta . grad u */
static double u_exact(const double *x, int dim, void *user)
{
  (void)user;
  const double s = sin(M_PI * x[0]) * sin(M_PI * x[1]);
  return dim == 3 ? s * (1.0 + x[2]) : s;
}
static void f0_adv(int dim, int nc, const double *u, const double *du, const double *x, const double *k, double *f0)
{
  (void)nc;
  const double eps = k[0], sx = sin(M_PI * x[0]), sy = sin(M_PI * x[1]), cx = cos(M_PI * x[0]), cy = cos(M_PI * x[1]);
  const double z = dim == 3 ? 1.0 + x[2] : 1.0;
  const double lap = -2.0 * M_PI * M_PI * sx * sy * z;
  double grad[3] = {M_PI * cx * sy * z, M_PI * sx * cy * z, dim == 3 ? sx * sy : 0.0};
  double f = -eps * lap;
  for (int e = 0; e < dim; e++) f += k[1 + e] * grad[e];
  /* the residual's terms of the current state: f0 = beta . grad u - f */
  double adv = 0.0;
  for (int e = 0; e < dim; e++) adv += k[1 + e] * du[e];
  (void)u;
  f0[0] = adv - f;
}
static void f1_diff(int dim, int nc, const double *u, const double *du, const double *x, const double *k, double *f1)
{
  (void)nc, (void)u, (void)x;
  for (int d = 0; d < dim; d++) f1[d] = k[0] * du[d];
}

static double rel_diff(mf_space s, mf_vector a, mf_vector b)
{
  mf_vector d = NULL;
  double na = 0.0, nd = 0.0;
  T_CALL(mf_vector_create(s, &d));
  T_CALL(mf_vector_copy(d, a));
  T_CALL(mf_vector_axpy(d, -1.0, b));
  T_CALL(mf_vector_norm2(a, &na));
  T_CALL(mf_vector_norm2(d, &nd));
  mf_vector_destroy(&d);
  return nd / (na > 0 ? na : 1.0);
}

/* ||b - A x|| / ||b|| */
static double true_residual(mf_operator A, mf_space s, mf_vector b, mf_vector x)
{
  mf_vector r = NULL;
  double nr = 0.0, nb = 0.0;
  T_CALL(mf_vector_create(s, &r));
  T_CALL(mf_operator_apply(A, x, r));
  T_CALL(mf_vector_axpy(r, -1.0, b));
  T_CALL(mf_vector_norm2(r, &nr));
  T_CALL(mf_vector_norm2(b, &nb));
  mf_vector_destroy(&r);
  return nr / nb;
}

static void symmetric_case(mf_context ctx, int dim, int p)
{
  mf_mesh mesh = NULL;
  mf_space s = NULL;
  mf_operator A = NULL;
  mf_vector b = NULL, xc = NULL, xg = NULL;
  mf_cg cg = NULL;
  mf_cg_info ic, ig;
  t_mesh(ctx, "cube", dim, dim == 2 ? 3 : 2, 1, &mesh);
  T_CALL(mf_space_create(mesh, p, &s));
  T_CALL(mf_operator_create_laplace(s, MF_QUAD_GAUSS, NULL, NULL, &A));
  T_CALL(mf_operator_set_dirichlet(A, 1));
  T_CALL(mf_vector_create(s, &b));
  T_CALL(mf_vector_create(s, &xc));
  T_CALL(mf_vector_create(s, &xg));
  T_CALL(mf_vector_assemble_rhs(b, one, NULL));
  T_CALL(mf_vector_zero_boundary(b));
  T_CALL(mf_cg_create(A, &cg));
  T_CALL(mf_cg_set_tolerance(cg, 1e-11, 5000));
  T_CALL(mf_vector_set_value(xc, 0.0));
  T_CALL(mf_cg_solve(cg, b, xc, &ic));
  for (int pre = 0; pre < 2; pre++)
    for (int m = 5; m <= 30; m += 25) {
      mf_gmres g = NULL;
      mf_pc pc = NULL;
      T_CALL(mf_gmres_create(A, &g));
      T_CALL(mf_gmres_set_tolerance(g, 1e-11, 5000));
      T_CALL(mf_gmres_set_restart(g, m));
      if (pre) {
        T_CALL(mf_pc_create(A, MF_PC_MULTIGRID, &pc));
        T_CALL(mf_gmres_set_pc(g, pc));
        mf_pc_destroy(&pc); /* the solver holds it */
      }
      T_CALL(mf_vector_set_value(xg, 0.0));
      T_CALL(mf_gmres_solve(g, b, xg, &ig));
      const double e = rel_diff(s, xc, xg), tr = true_residual(A, s, b, xg);
      T_CHECK(ig.converged && e <= 1e-8 && tr <= 2e-11, "Poisson %dD p=%d, %s, restart %d: GMRES converged %d in %d "
              "iterations, differs from CG by %.3g, true residual %.3g", dim, p, pre ? "multigrid" : "Jacobi", m,
              ig.converged, ig.iterations, e, tr);
      if (pre) T_CHECK(ig.iterations <= 20, "GMRES with multigrid: %d iterations", ig.iterations);
      mf_gmres_destroy(&g);
    }
  mf_cg_destroy(&cg);
  mf_vector_destroy(&b);
  mf_vector_destroy(&xc);
  mf_vector_destroy(&xg);
  mf_operator_destroy(&A);
  mf_space_destroy(&s);
  mf_mesh_destroy(&mesh);
}

/* advection-diffusion with a source and boundary values through the residual: A d = -F(x_g), solved by
 * GMRES; returns the L2 error and the iterations */
static double advection_error(mf_context ctx, int dim, int level, int p, int *its)
{
  mf_mesh mesh = NULL;
  mf_space s = NULL;
  mf_physics ph = NULL;
  mf_operator A = NULL;
  mf_vector x = NULL, r = NULL, d = NULL;
  mf_gmres g = NULL;
  mf_cg_info info;
  const double k[4] = {0.05, 1.0, -0.7, 0.4}; /* eps, beta: a cell Peclet number near 1 on the finest */
  T_CALL(mf_mesh_create(ctx, "sheared", dim, level, &mesh));
  T_CALL(mf_space_create(mesh, p, &s));
  T_CALL(mf_physics_create(ctx, 1, &ph));
  T_CALL(mf_physics_set_constants(ph, 1 + dim, k));
  T_CALL(mf_physics_set_residual(ph, f0_adv, f1_diff));
  T_CALL(mf_physics_set_jacobian(ph, NULL, g1_adv, NULL, g3_diff));
  T_CALL(mf_operator_create_physics(s, ph, MF_QUAD_GAUSS, &A));
  T_CALL(mf_operator_set_dirichlet(A, 1));
  T_CALL(mf_vector_create(s, &x));
  T_CALL(mf_vector_create(s, &r));
  T_CALL(mf_vector_create(s, &d));
  T_CALL(mf_vector_set_boundary(x, u_exact, NULL));
  T_CALL(mf_operator_residual(A, x, r));
  T_CALL(mf_vector_scale(r, -1.0));
  T_CALL(mf_gmres_create(A, &g));
  T_CALL(mf_gmres_set_tolerance(g, 1e-12, 20000));
  T_CALL(mf_vector_set_value(d, 0.0));
  T_CALL(mf_gmres_solve(g, r, d, &info));
  T_CHECK(info.converged, "advection-diffusion %dD p=%d level %d: GMRES did not converge (%d iterations, residual %.3g of %.3g)",
          dim, p, level, info.iterations, info.residual, info.residual0);
  const double tr = true_residual(A, s, r, d);
  T_CHECK(tr <= 2e-12, "advection-diffusion: true residual %.3g after GMRES", tr);
  T_CALL(mf_vector_axpy(x, 1.0, d));
  double err = 0.0;
  T_CALL(mf_vector_l2_error(x, u_exact, NULL, &err));
  *its = info.iterations;
  mf_gmres_destroy(&g);
  mf_vector_destroy(&x);
  mf_vector_destroy(&r);
  mf_vector_destroy(&d);
  mf_operator_destroy(&A);
  mf_physics_destroy(&ph);
  mf_space_destroy(&s);
  mf_mesh_destroy(&mesh);
  return err;
}

static void refusals(mf_context ctx)
{
  mf_mesh mesh = NULL, m2 = NULL;
  mf_space s = NULL, s2 = NULL;
  mf_operator A = NULL, B = NULL;
  mf_vector b = NULL, x = NULL, y = NULL;
  mf_gmres g = NULL;
  mf_pc pc = NULL;
  mf_cg_info info;
  T_CALL(mf_mesh_create(ctx, "cube", 2, 1, &mesh));
  T_CALL(mf_mesh_create(ctx, "cube", 2, 2, &m2));
  T_CALL(mf_space_create(mesh, 1, &s));
  T_CALL(mf_space_create(m2, 1, &s2));
  T_CALL(mf_operator_create_laplace(s, MF_QUAD_GAUSS, NULL, NULL, &A));
  T_CALL(mf_operator_create_laplace(s2, MF_QUAD_GAUSS, NULL, NULL, &B));
  T_CALL(mf_vector_create(s, &b));
  T_CALL(mf_vector_create(s, &x));
  T_CALL(mf_vector_create(s2, &y));
  EXPECT(mf_gmres_create(NULL, &g), MF_ERR_NULL, "operator is NULL");
  EXPECT(mf_gmres_create(A, NULL), MF_ERR_NULL, "output pointer gmres is NULL");
  T_CALL(mf_gmres_create(A, &g));
  EXPECT(mf_gmres_set_restart(g, 0), MF_ERR_ARGUMENT, "restart 0 out of range 1..1000");
  EXPECT(mf_gmres_set_tolerance(g, 1.5, 10), MF_ERR_ARGUMENT, "tolerance 1.5 out of range");
  EXPECT(mf_gmres_set_tolerance(g, 1e-6, 0), MF_ERR_ARGUMENT, "iteration limit 0 must be positive");
  EXPECT(mf_gmres_solve(g, b, b, &info), MF_ERR_ARGUMENT, "b and x must be different vectors");
  EXPECT(mf_gmres_solve(g, b, y, &info), MF_ERR_INCOMPATIBLE, "solution x belongs to another space");
  EXPECT(mf_gmres_solve(g, NULL, x, &info), MF_ERR_NULL, "right-hand side b is NULL");
  T_CALL(mf_pc_create(B, MF_PC_JACOBI, &pc));
  EXPECT(mf_gmres_set_pc(g, pc), MF_ERR_INCOMPATIBLE, "preconditioner of another space");
  /* the iteration limit: no error, converged 0 */
  T_CALL(mf_vector_set_random(b, 1));
  T_CALL(mf_vector_set_value(x, 0.0));
  T_CALL(mf_gmres_set_tolerance(g, 1e-12, 1));
  T_CALL(mf_gmres_solve(g, b, x, &info));
  T_CHECK(!info.converged && info.iterations == 1, "a limit of 1 iteration: converged %d after %d", info.converged,
          info.iterations);
  mf_pc_destroy(&pc);
  mf_gmres_destroy(&g);
  mf_vector_destroy(&b);
  mf_vector_destroy(&x);
  mf_vector_destroy(&y);
  mf_operator_destroy(&A);
  mf_operator_destroy(&B);
  mf_space_destroy(&s);
  mf_space_destroy(&s2);
  mf_mesh_destroy(&mesh);
  mf_mesh_destroy(&m2);
}

int main(int argc, char **argv)
{
  MPI_Init(&argc, &argv);
  const char *backend = t_backend(argc, argv);
  mf_context ctx = NULL;
  T_CALL(mf_context_create(MPI_COMM_WORLD, backend, &ctx));
  for (int dim = 2; dim <= 3; dim++)
    for (int p = 1; p <= 2; p++) symmetric_case(ctx, dim, p);
  /* physics run on the cuda backend from source only: the advection problem on the cpu backend */
  if (!strcmp(backend, "cpu"))
    for (int dim = 2; dim <= 3; dim++)
      for (int p = 1; p <= 2; p++) {
        const int l0 = dim == 2 || p == 1 ? 2 : 1; /* out of the pre-asymptotic range */
        int i0 = 0, i1 = 0;
        const double e0 = advection_error(ctx, dim, l0, p, &i0), e1 = advection_error(ctx, dim, l0 + 1, p, &i1);
        const double rate = log2(e0 / e1);
        T_CHECK(rate >= p + 0.8 && rate <= p + 1.3, "advection-diffusion %dD p=%d: L2 rate %.3f (errors %.3g, %.3g), "
                "expected in [%g, %g]", dim, p, rate, e0, e1, p + 0.8, p + 1.3);
        if (getenv("T39_VERBOSE")) printf("advection %dD p=%d: L2 %.3g %.3g rate %.2f, GMRES %d %d iterations\n", dim, p, e0, e1,
                                          rate, i0, i1);
      }
  refusals(ctx);
  mf_context_destroy(&ctx);
  return t_finish();
}
