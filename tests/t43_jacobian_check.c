/* t43_jacobian_check.c -- mf_physics_check_jacobian: a physics' g-functions against centred finite
 * differences of its f-functions, point by point (mfree.h):
 *   - the gallery (mass, laplace, helmholtz, diffusion with K not symmetric, elasticity with lambda != mu;
 *     scalar and 3-component fields, 2D and 3D) and a nonlinear diffusion f1 = (1 + u^2) grad u, f0 = u^3 - s(x) with its right g0, g2, g3,
 *     given as C functions and as source: relative error below 1e-7;
 *   - the same physics with one g3 entry wrong by 10%, and with g2 left out: the error is large and the
 *     report names the function; two coupled components (g1 and an off-diagonal g0) right, then with g0's
 *     indices exchanged and with g1 left out;
 *   - the same states on every call (the error equal twice);
 *   - refusals: NULL arguments, dim, npoints, scale, no f-function, a function that is not finite at a
 *     state, elasticity with components other than dim.
 * Backend-free: runs on a cpu context (the source compiled by the system C compiler, as the cpu backend
 * does).                                                                                                 */
#include "mf_test.h"

#include <math.h>

/* f0 = u^3 - sin(x0), f1 = (1 + u^2) grad u, per component alike */
static void f0_nl(int dim, int nc, const double *u, const double *du, const double *x, const double *k, double *out)
{
  (void)dim, (void)du, (void)k;
  for (int c = 0; c < nc; c++) out[c] = u[c] * u[c] * u[c] - sin(x[0]);
}
static void f1_nl(int dim, int nc, const double *u, const double *du, const double *x, const double *k, double *out)
{
  (void)x, (void)k;
  for (int c = 0; c < nc; c++)
    for (int d = 0; d < dim; d++) out[c * dim + d] = (1.0 + u[c] * u[c]) * du[c * dim + d];
}
static void g0_nl(int dim, int nc, const double *u, const double *du, const double *x, const double *k, double *out)
{
  (void)dim, (void)du, (void)x, (void)k;
  for (int c = 0; c < nc; c++) out[c * nc + c] = 3.0 * u[c] * u[c];
}
static void g2_nl(int dim, int nc, const double *u, const double *du, const double *x, const double *k, double *out)
{
  (void)x, (void)k;
  for (int c = 0; c < nc; c++)
    for (int d = 0; d < dim; d++) out[(c * nc + c) * dim + d] = 2.0 * u[c] * du[c * dim + d];
}
static void g3_nl(int dim, int nc, const double *u, const double *du, const double *x, const double *k, double *out)
{
  (void)du, (void)x, (void)k;
  for (int c = 0; c < nc; c++)
    for (int d = 0; d < dim; d++) out[((c * nc + c) * dim + d) * dim + d] = 1.0 + u[c] * u[c];
}
/* g3 with its first diagonal entry 10% off */
static void g3_wrong(int dim, int nc, const double *u, const double *du, const double *x, const double *k, double *out)
{
  g3_nl(dim, nc, u, du, x, k, out);
  out[0] *= 1.1;
}
/* f0 = log(u): not finite where u <= 0 */
static void f0_log(int dim, int nc, const double *u, const double *du, const double *x, const double *k, double *out)
{
  (void)dim, (void)du, (void)x, (void)k;
  for (int c = 0; c < nc; c++) out[c] = log(u[c]);
}

/* two coupled components: f0_0 = b . grad u_0 + u_1^2, f0_1 = u_0 u_1, f1_c = grad u_c (g1 and off-diagonal g0) */
static const double beta[3] = {0.7, -1.3, 0.4};
static void f0_cp(int dim, int nc, const double *u, const double *du, const double *x, const double *k, double *o)
{
  (void)nc, (void)x, (void)k;
  o[0] = u[1] * u[1];
  for (int e = 0; e < dim; e++) o[0] += beta[e] * du[e];
  o[1] = u[0] * u[1];
}
static void f1_cp(int dim, int nc, const double *u, const double *du, const double *x, const double *k, double *o)
{
  (void)u, (void)x, (void)k;
  for (int i = 0; i < nc * dim; i++) o[i] = du[i];
}
static void g0_cp(int dim, int nc, const double *u, const double *du, const double *x, const double *k, double *o)
{
  (void)dim, (void)du, (void)x, (void)k;
  o[0 * nc + 1] = 2.0 * u[1], o[1 * nc + 0] = u[1], o[1 * nc + 1] = u[0];
}
static void g0_cp_swapped(int dim, int nc, const double *u, const double *du, const double *x, const double *k, double *o)
{
  (void)dim, (void)du, (void)x, (void)k; /* c and b exchanged */
  o[1 * nc + 0] = 2.0 * u[1], o[0 * nc + 1] = u[1], o[1 * nc + 1] = u[0];
}
static void g1_cp(int dim, int nc, const double *u, const double *du, const double *x, const double *k, double *o)
{
  (void)u, (void)du, (void)x, (void)k;
  for (int e = 0; e < dim; e++) o[(0 * nc + 0) * dim + e] = beta[e];
}
static void g3_cp(int dim, int nc, const double *u, const double *du, const double *x, const double *k, double *o)
{
  (void)u, (void)du, (void)x, (void)k;
  for (int c = 0; c < nc; c++)
    for (int d = 0; d < dim; d++) o[((c * nc + c) * dim + d) * dim + d] = 1.0;
}

static const char nl_source[] =
    "#include <math.h>\n"
    "static void f0(int dim, int nc, const double *u, const double *du, const double *x, const double *k, double *o)\n"
    "{ for (int c = 0; c < nc; c++) o[c] = u[c] * u[c] * u[c] - sin(x[0]); }\n"
    "static void f1(int dim, int nc, const double *u, const double *du, const double *x, const double *k, double *o)\n"
    "{ for (int c = 0; c < nc; c++) for (int d = 0; d < dim; d++) o[c * dim + d] = (1.0 + u[c] * u[c]) * du[c * dim + d]; }\n"
    "static void g0(int dim, int nc, const double *u, const double *du, const double *x, const double *k, double *o)\n"
    "{ for (int c = 0; c < nc; c++) o[c * nc + c] = 3.0 * u[c] * u[c]; }\n"
    "static void g2(int dim, int nc, const double *u, const double *du, const double *x, const double *k, double *o)\n"
    "{ for (int c = 0; c < nc; c++) for (int d = 0; d < dim; d++) o[(c * nc + c) * dim + d] = 2.0 * u[c] * du[c * dim + d]; }\n"
    "static void g3(int dim, int nc, const double *u, const double *du, const double *x, const double *k, double *o)\n"
    "{ for (int c = 0; c < nc; c++) for (int d = 0; d < dim; d++) o[((c * nc + c) * dim + d) * dim + d] = 1.0 + u[c] * u[c]; }\n";

static double check(mf_physics ph, int dim, double scale, char *worst, size_t n)
{
  double err = -1.0;
  T_CALL(mf_physics_check_jacobian(ph, dim, 50, scale, &err, worst, n));
  return err;
}

int main(int argc, char **argv)
{
  MPI_Init(&argc, &argv);
  mf_context ctx;
  T_CALL(mf_context_create(MPI_COMM_WORLD, "cpu", &ctx));
  char worst[512];

  /* the gallery: right by construction */
  static const char *const names[] = {"mass", "laplace", "helmholtz", "diffusion", "elasticity"};
  for (int dim = 2; dim <= 3; dim++)
    for (int g = 0; g < 5; g++)
      for (int nc = 1; nc <= 3; nc += 2) {
        if ((g == 3 || g == 4) && nc > 1) continue; /* diffusion: scalar; elasticity: dim components anyway */
        const int ncomp = g == 4 ? dim : nc;
        /* constants that tell the derivatives' indices apart: K not symmetric, lambda != mu, a != b */
        const double K[9] = {2.0, 0.3, 0.1, -0.2, 1.5, 0.2, 0.4, 0.0, 1.0}, K2[4] = {2.0, 0.3, -0.4, 1.5};
        const double k2[2] = {1.5, 0.7}, k1[1] = {1.3};
        const int nk = g == 3 ? dim * dim : g == 2 || g == 4 ? 2 : 1;
        const double *kv = g == 3 ? (dim == 3 ? K : K2) : g == 2 || g == 4 ? k2 : k1;
        mf_physics ph;
        T_CALL(mf_physics_create_gallery(ctx, names[g], ncomp, nk, kv, &ph));
        const double e = check(ph, dim, 1.0, worst, sizeof worst);
        T_CHECK(e >= 0.0 && e < 1e-7, "%dD gallery '%s' (%d components): Jacobian error %.3e (%s)", dim, names[g], ncomp, e,
                worst);
        mf_physics_destroy(&ph);
      }

  for (int dim = 2; dim <= 3; dim++)
    for (int nc = 1; nc <= 3; nc += 2) {
      mf_physics ph;
      T_CALL(mf_physics_create(ctx, nc, &ph));
      T_CALL(mf_physics_set_residual(ph, f0_nl, f1_nl));
      T_CALL(mf_physics_set_jacobian(ph, g0_nl, NULL, g2_nl, g3_nl));
      const double e = check(ph, dim, 1.0, worst, sizeof worst);
      T_CHECK(e < 1e-7, "%dD nonlinear diffusion (%d components): Jacobian error %.3e (%s)", dim, nc, e, worst);
      T_CHECK(check(ph, dim, 1.0, NULL, 0) == e, "%dD: a second check gave another error (the states differ)", dim);
      /* one g3 entry 10% off: the error is of that order and names g3 */
      T_CALL(mf_physics_set_jacobian(ph, g0_nl, NULL, g2_nl, g3_wrong));
      const double ew = check(ph, dim, 1.0, worst, sizeof worst);
      T_CHECK(ew > 0.02 && strstr(worst, "g3[0]") && strstr(worst, "given"),
              "%dD: a wrong g3 gave error %.3e, report '%s'", dim, ew, worst);
      /* g2 left out: names g2 as absent */
      T_CALL(mf_physics_set_jacobian(ph, g0_nl, NULL, NULL, g3_nl));
      const double em = check(ph, dim, 1.0, worst, sizeof worst);
      T_CHECK(em > 0.5 && strstr(worst, "g2[") && strstr(worst, "absent"), "%dD: g2 left out gave error %.3e, report '%s'",
              dim, em, worst);
      mf_physics_destroy(&ph);
      /* the same physics as source, compiled for the host */
      T_CALL(mf_physics_create(ctx, nc, &ph));
      T_CALL(mf_physics_set_source(ph, nl_source, "f0=f0 f1=f1 g0=g0 g2=g2 g3=g3"));
      const double es = check(ph, dim, 1.0, worst, sizeof worst);
      T_CHECK(es < 1e-7, "%dD nonlinear diffusion as source (%d components): Jacobian error %.3e (%s)", dim, nc, es, worst);
      mf_physics_destroy(&ph);
    }

  /* coupled components: g1 and an off-diagonal g0 right, then g0 with its indices exchanged, then g1 absent */
  for (int dim = 2; dim <= 3; dim++) {
    mf_physics ph;
    T_CALL(mf_physics_create(ctx, 2, &ph));
    T_CALL(mf_physics_set_residual(ph, f0_cp, f1_cp));
    T_CALL(mf_physics_set_jacobian(ph, g0_cp, g1_cp, NULL, g3_cp));
    double e = check(ph, dim, 1.0, worst, sizeof worst);
    T_CHECK(e < 1e-7, "%dD coupled: Jacobian error %.3e (%s)", dim, e, worst);
    T_CALL(mf_physics_set_jacobian(ph, g0_cp_swapped, g1_cp, NULL, g3_cp));
    e = check(ph, dim, 1.0, worst, sizeof worst);
    T_CHECK(e > 0.1 && strstr(worst, "g0["), "%dD coupled: g0 with c and b exchanged gave %.3e (%s)", dim, e, worst);
    T_CALL(mf_physics_set_jacobian(ph, g0_cp, NULL, NULL, g3_cp));
    e = check(ph, dim, 1.0, worst, sizeof worst);
    T_CHECK(e > 0.5 && strstr(worst, "g1[") && strstr(worst, "absent"), "%dD coupled: g1 absent gave %.3e (%s)", dim, e,
            worst);
    mf_physics_destroy(&ph);
  }

  /* refusals */
  mf_physics ph, pg;
  double err;
  EXPECT(mf_physics_check_jacobian(NULL, 3, 10, 1.0, &err, NULL, 0), MF_ERR_NULL, "physics is NULL");
  T_CALL(mf_physics_create(ctx, 1, &ph));
  EXPECT(mf_physics_check_jacobian(ph, 3, 10, 1.0, NULL, NULL, 0), MF_ERR_NULL, "err is NULL");
  EXPECT(mf_physics_check_jacobian(ph, 4, 10, 1.0, &err, NULL, 0), MF_ERR_ARGUMENT, "dimension 4");
  EXPECT(mf_physics_check_jacobian(ph, 3, 0, 1.0, &err, NULL, 0), MF_ERR_ARGUMENT, "points 0 out of range");
  EXPECT(mf_physics_check_jacobian(ph, 3, 10, 0.0, &err, NULL, 0), MF_ERR_ARGUMENT, "scale 0");
  EXPECT(mf_physics_check_jacobian(ph, 3, 10, NAN, &err, NULL, 0), MF_ERR_ARGUMENT, "scale nan");
  T_CALL(mf_physics_set_jacobian(ph, NULL, NULL, NULL, g3_nl));
  EXPECT(mf_physics_check_jacobian(ph, 3, 10, 1.0, &err, NULL, 0), MF_ERR_ARGUMENT, "has no f-function");
  T_CALL(mf_physics_set_residual(ph, f0_log, NULL));
  EXPECT(mf_physics_check_jacobian(ph, 2, 10, 1.0, &err, NULL, 0), MF_ERR_ARGUMENT, "f0 gave a value that is not finite at u = (");
  mf_physics_destroy(&ph);
  T_CALL(mf_physics_create_gallery(ctx, "elasticity", 3, 0, NULL, &pg));
  EXPECT(mf_physics_check_jacobian(pg, 2, 10, 1.0, &err, NULL, 0), MF_ERR_INCOMPATIBLE, "3 components with dim = 2");
  mf_physics_destroy(&pg);

  mf_context_destroy(&ctx);
  return t_finish();
}
