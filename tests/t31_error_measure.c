/* t31_error_measure -- mf_vector_l2_error and mf_vector_h1_error against values known in closed form,
 * so that a fault in the measure itself (a lost square root, a weight, J^-1) cannot pass as a small
 * error. On hex meshes (the unit cube, uniform and with hanging nodes; the deformed cube; the ball) and
 * on simplex meshes (square-tris, cube-tets; one rank only), 2D and 3D, several degrees:
 *   u_h = 0 against u = 3: L2 = 3 sqrt(volume); against u = a.x + c: H1 = |a| sqrt(volume)
 *     (volume 1 for the cubes, pi and 4 pi / 3 for the ball to the accuracy of its geometry);
 *   u_h the interpolant of a linear function: L2 = H1 = 0 on every mesh (isoparametric: x is in the space);
 *   u_h the interpolant of a polynomial P in the space (affine meshes: Q_p, degree p per variable; P_p,
 *     total degree p): L2 = H1 = 0; against u = P + 1: L2 = sqrt(volume), H1 = 0; for P a monomial,
 *     against u = 2 P: L2 = ||P||_L2 and H1 = |P|_H1, integrals of monomials over the unit cube;
 *   refusals: NULL arguments, spaces of several components, a gradient that is not finite (naming the
 *     point; on two ranks a value bad on one rank only is every rank's failure).
 * argv[1]: backend (cuda: 77 where no GPU is usable). */
#include "mf_test.h"

enum { F_CONST, F_LINEAR, F_MONO, F_FULL_HEX, F_FULL_SIMPLEX, F_NAN_RIGHT };

/* u(x) = scale * P(x) + shift for the kinds above:
 *   F_CONST: P = 0; F_LINEAR: P = a.x; F_MONO: P = prod x_k^e_k;
 *   F_FULL_HEX: P = prod_k (x_k^p - 0.4 x_k + 0.3) + sum_k (k + 1) x_k (degree p in each variable);
 *   F_FULL_SIMPLEX: P = (0.3 + x_0 - 0.7 x_1 + 0.5 x_2)^p + 0.2 x_1 (total degree p);
 *   F_NAN_RIGHT: P = x_0, its gradient NaN where x_0 > 0.75. */
typedef struct {
  int kind, p, e[3];
  double scale, shift;
} fn_t;

static const double lin_a[3] = {0.8, -1.1, 0.6};

static double ipow(double x, int n)
{
  double r = 1.0;
  for (int k = 0; k < n; k++) r *= x;
  return r;
}

static double fn_u(const double *x, int dim, void *user)
{
  const fn_t *f = (const fn_t *)user;
  double P = 0.0;
  switch (f->kind) {
  case F_CONST: break;
  case F_LINEAR:
    for (int k = 0; k < dim; k++) P += lin_a[k] * x[k];
    break;
  case F_MONO:
    P = 1.0;
    for (int k = 0; k < dim; k++) P *= ipow(x[k], f->e[k]);
    break;
  case F_FULL_HEX:
    P = 1.0;
    for (int k = 0; k < dim; k++) P *= ipow(x[k], f->p) - 0.4 * x[k] + 0.3;
    for (int k = 0; k < dim; k++) P += (k + 1) * x[k];
    break;
  case F_FULL_SIMPLEX:
    P = ipow(0.3 + x[0] - 0.7 * x[1] + (dim == 3 ? 0.5 * x[2] : 0.0), f->p) + 0.2 * x[1];
    break;
  case F_NAN_RIGHT: P = x[0]; break;
  }
  return f->scale * P + f->shift;
}

static void fn_grad(const double *x, int dim, double *g, void *user)
{
  const fn_t *f = (const fn_t *)user;
  for (int k = 0; k < dim; k++) {
    double d = 0.0;
    switch (f->kind) {
    case F_CONST: break;
    case F_LINEAR: d = lin_a[k]; break;
    case F_MONO:
      d = f->e[k] ? f->e[k] * ipow(x[k], f->e[k] - 1) : 0.0;
      for (int j = 0; j < dim; j++)
        if (j != k) d *= ipow(x[j], f->e[j]);
      break;
    case F_FULL_HEX:
      d = f->p * ipow(x[k], f->p - 1) - 0.4;
      for (int j = 0; j < dim; j++)
        if (j != k) d *= ipow(x[j], f->p) - 0.4 * x[j] + 0.3;
      d += k + 1;
      break;
    case F_FULL_SIMPLEX: {
      const double c[3] = {1.0, -0.7, 0.5};
      d = f->p * ipow(0.3 + x[0] - 0.7 * x[1] + (dim == 3 ? 0.5 * x[2] : 0.0), f->p - 1) * c[k] + (k == 1 ? 0.2 : 0.0);
      break;
    }
    case F_NAN_RIGHT: d = (x[0] > 0.7 && x[1] > 0.7) ? NAN : (k == 0 ? 1.0 : 0.0); break;
    }
    g[k] = f->scale * d;
  }
}

/* ||P||_L2^2 and |P|_H1^2 of P = prod x_k^e_k over the unit cube */
static double mono_l2sq(int dim, const int *e)
{
  double r = 1.0;
  for (int k = 0; k < dim; k++) r /= 2.0 * e[k] + 1.0;
  return r;
}
static double mono_h1sq(int dim, const int *e)
{
  double r = 0.0;
  for (int k = 0; k < dim; k++) {
    if (!e[k]) continue;
    double t = (double)e[k] * e[k] / (2.0 * e[k] - 1.0);
    for (int j = 0; j < dim; j++)
      if (j != k) t /= 2.0 * e[j] + 1.0;
    r += t;
  }
  return r;
}

static double l2(mf_vector uh, fn_t f)
{
  double e = -1.0;
  T_CALL(mf_vector_l2_error(uh, fn_u, &f, &e));
  return e;
}
static double h1(mf_vector uh, fn_t f)
{
  double e = -1.0;
  T_CALL(mf_vector_h1_error(uh, fn_grad, &f, &e));
  return e;
}

/* |got - want| <= tol max(1, |want|) */
static void near(const char *what, const char *label, double got, double want, double tol)
{
  T_CHECK(fabs(got - want) <= tol * fmax(1.0, fabs(want)), "%s: %s = %.17g, expected %.17g (tol %g)", what, label, got,
          want, tol);
}

/* One mesh and degree: the checks of the file comment. volume: the exact volume of the domain;
 * vtol: how well the mesh's geometry gives it (relative, on sqrt(volume)); affine: polynomials of the
 * space's kind are in it. */
static void check_mesh(mf_mesh mesh, const char *what, int p, int simplex, double volume, double vtol, int affine)
{
  int dim;
  T_CALL(mf_mesh_dim(mesh, &dim));
  mf_space s;
  mf_vector uh;
  T_CALL(mf_space_create(mesh, p, &s));
  T_CALL(mf_vector_create(s, &uh));
  double alen = 0.0;
  for (int k = 0; k < dim; k++) alen += lin_a[k] * lin_a[k];
  alen = sqrt(alen);
  /* the volume of the mesh's geometry, 1^T M 1 with the mass operator on the measures' rule (hex: Gauss
   * q = p + 2; simplices: affine, any rule), against the domain's */
  double vh;
  {
    mf_operator M;
    mf_vector t;
    T_CALL(mf_operator_create_mass(s, simplex ? MF_QUAD_GAUSS : MF_QUAD_GAUSS_P2, NULL, NULL, &M));
    T_CALL(mf_vector_create(s, &t));
    T_CALL(mf_vector_set_value(uh, 1.0));
    T_CALL(mf_operator_apply(M, uh, t));
    T_CALL(mf_vector_dot(uh, t, &vh));
    mf_vector_destroy(&t);
    mf_operator_destroy(&M);
  }
  near(what, "sqrt(1^T M 1)", sqrt(vh), sqrt(volume), vtol);
  const double sv = sqrt(vh);

  /* u_h = 0 */
  T_CALL(mf_vector_set_value(uh, 0.0));
  near(what, "L2 of u = 3 against u_h = 0", l2(uh, (fn_t){F_CONST, p, {0}, 1.0, 3.0}), 3.0 * sv, 1e-12);
  near(what, "H1 of u = a.x + c against u_h = 0", h1(uh, (fn_t){F_LINEAR, p, {0}, 1.0, 0.25}), alen * sv, 1e-12);
  near(what, "H1 of u = 3 against u_h = 0", h1(uh, (fn_t){F_CONST, p, {0}, 1.0, 3.0}), 0.0, 1e-14);

  /* u_h = a.x + c, interpolated: in the space on every mesh */
  fn_t lin = {F_LINEAR, p, {0}, 1.0, 0.25};
  T_CALL(mf_vector_interpolate(uh, fn_u, &lin));
  near(what, "L2 of the interpolated linear function", l2(uh, lin), 0.0, 1e-12);
  near(what, "H1 of the interpolated linear function", h1(uh, lin), 0.0, 1e-11);
  fn_t lin1 = lin;
  lin1.shift += 1.0;
  near(what, "L2 of u = linear + 1 against the linear interpolant", l2(uh, lin1), sv, 1e-12);
  near(what, "H1 of u = linear + 1 against the linear interpolant", h1(uh, lin1), 0.0, 1e-11);

  if (affine) {
    /* a polynomial of the space */
    fn_t full = {simplex ? F_FULL_SIMPLEX : F_FULL_HEX, p, {0}, 1.0, 0.0};
    T_CALL(mf_vector_interpolate(uh, fn_u, &full));
    near(what, "L2 of the interpolated polynomial P", l2(uh, full), 0.0, 1e-12);
    near(what, "H1 of the interpolated polynomial P", h1(uh, full), 0.0, 1e-11);
    full.shift = 1.0;
    near(what, "L2 of u = P + 1 against the interpolant of P", l2(uh, full), 1.0, 1e-12);
    near(what, "H1 of u = P + 1 against the interpolant of P", h1(uh, full), 0.0, 1e-11);
    /* a monomial: the norms of the difference u_h - 2 P = -P in closed form */
    fn_t mono = {F_MONO, p, {0, 0, 0}, 1.0, 0.0};
    for (int k = 0; k < dim; k++) mono.e[k] = simplex ? p / dim + (k < p % dim) : p;
    T_CALL(mf_vector_interpolate(uh, fn_u, &mono));
    fn_t twice = mono;
    twice.scale = 2.0;
    char label[96];
    snprintf(label, sizeof label, "L2 of u = 2 x^(%d,%d,%d) against the interpolant of its half", mono.e[0], mono.e[1],
             mono.e[2]);
    near(what, label, l2(uh, twice), sqrt(mono_l2sq(dim, mono.e)), 1e-12);
    snprintf(label, sizeof label, "H1 of u = 2 x^(%d,%d,%d) against the interpolant of its half", mono.e[0], mono.e[1],
             mono.e[2]);
    near(what, label, h1(uh, twice), sqrt(mono_h1sq(dim, mono.e)), 1e-11);
  }
  if (getenv("MF_TEST_VERBOSE"))
    printf("%s: sqrt(volume) %.17g, of the mesh %.17g, relative difference %.3e\n", what, sqrt(volume), sv,
           fabs(sv - sqrt(volume)) / sqrt(volume));
  mf_vector_destroy(&uh);
  mf_space_destroy(&s);
}

static void check_hex(mf_context ctx, int gpu)
{
  for (int dim = 2; dim <= 3; dim++) {
    const double ball = dim == 2 ? M_PI : 4.0 * M_PI / 3.0;
    for (int p = 1; p <= (dim == 2 ? 6 : 4); p++) {
      char what[96];
      mf_mesh mesh;
      for (int adapt = 0; adapt < 2; adapt++) {
        t_mesh(ctx, "cube", dim, dim == 2 ? 2 : 1, adapt, &mesh);
        snprintf(what, sizeof what, "cube %dD Q%d%s", dim, p, adapt ? " adaptive" : "");
        check_mesh(mesh, what, p, 0, 1.0, 1e-12, 1);
        mf_mesh_destroy(&mesh);
      }
      /* the deformed cube: the mapping per coordinate, interpolated at the cell's nodes, keeps every
       * cell's edges from end to end: the volume is 1 to rounding, uniform mesh */
      t_mesh(ctx, "deformed", dim, 1, 0, &mesh);
      snprintf(what, sizeof what, "deformed %dD Q%d", dim, p);
      check_mesh(mesh, what, p, 0, 1.0, 1e-12, 0);
      mf_mesh_destroy(&mesh);
      /* the ball: its isoparametric geometry of degree p gives the volume to what its level 1 allows
       * (the relative differences of sqrt(volume) measured: 2D 5.1e-2, 2.0e-3, 2.8e-5, 4.6e-6, 1.4e-7,
       * 3.8e-9 for p = 1..6; 3D 1.2e-1, 5.4e-3, 6.7e-5, 1.3e-5 for p = 1..4), within twice that */
      t_mesh(ctx, "ball", dim, 1, 0, &mesh);
      snprintf(what, sizeof what, "ball %dD Q%d", dim, p);
      const double vtol_ball[2][7] = {{0, 1e-1, 4e-3, 6e-5, 1e-5, 3e-7, 1e-8}, {0, 2.5e-1, 1e-2, 1.5e-4, 3e-5, 0, 0}};
      check_mesh(mesh, what, p, 0, ball, vtol_ball[dim - 2][p], 0);
      mf_mesh_destroy(&mesh);
    }
  }
  (void)gpu;
}

static void check_simplex(mf_context ctx, int gpu)
{
  for (int dim = 2; dim <= 3; dim++)
    for (int p = 1; p <= (gpu ? 4 : 6); p++) {
      char what[96];
      mf_mesh mesh;
      T_CALL(mf_mesh_create(ctx, dim == 2 ? "square-tris" : "cube-tets", dim, dim == 2 ? 2 : 1, &mesh));
      snprintf(what, sizeof what, "%s P%d", dim == 2 ? "square-tris" : "cube-tets", p);
      check_mesh(mesh, what, p, 1, 1.0, 1e-12, 1);
      mf_mesh_destroy(&mesh);
    }
}

static void check_refusals(mf_context ctx, int nranks, int simplex)
{
  mf_mesh mesh;
  mf_space s;
  mf_vector uh;
  T_CALL(mf_mesh_create(ctx, "cube", 2, 2, &mesh));
  T_CALL(mf_space_create(mesh, 2, &s));
  T_CALL(mf_vector_create(s, &uh));
  T_CALL(mf_vector_set_value(uh, 0.0));
  fn_t f = {F_LINEAR, 2, {0}, 1.0, 0.0};
  double e = -1.0;
  EXPECT(mf_vector_h1_error(NULL, fn_grad, &f, &e), MF_ERR_NULL, "vector is NULL");
  EXPECT(mf_vector_h1_error(uh, NULL, &f, &e), MF_ERR_NULL, "gradient function grad_u is NULL");
  EXPECT(mf_vector_h1_error(uh, fn_grad, &f, NULL), MF_ERR_NULL, "output pointer err is NULL");
  EXPECT(mf_vector_l2_error(NULL, fn_u, &f, &e), MF_ERR_NULL, "vector is NULL");
  EXPECT(mf_vector_l2_error(uh, NULL, &f, &e), MF_ERR_NULL, "function u is NULL");
  EXPECT(mf_vector_l2_error(uh, fn_u, &f, NULL), MF_ERR_NULL, "output pointer err is NULL");
  /* a gradient that is not finite in the corner x, y > 0.7: on two ranks the corner is rank 1's alone
   * (the space-filling curve gives rank 0 the cells of y < 1/2), so rank 0 learns of it from rank 1 */
  fn_t bad = {F_NAN_RIGHT, 2, {0}, 1.0, 0.0};
  EXPECT(mf_vector_h1_error(uh, fn_grad, &bad, &e), MF_ERR_ARGUMENT, "the gradient must be finite");
  const char *m = mf_last_error_message();
  T_CHECK(strstr(m, "gradient of u = (nan, nan)") && strstr(m, "at quadrature point") && strstr(m, "of cell"),
          "message does not name the value and the point: %s", m);
  const char *x = strstr(m, "x = (");
  double px = 0.0, py = 0.0;
  T_CHECK(x && sscanf(x, "x = (%lf, %lf", &px, &py) == 2 && px > 0.7 && py > 0.7,
          "message does not name a point of the corner x, y > 0.7: %s", m);
  int rank;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  if (nranks == 2 && rank == 0)
    T_CHECK(!strncmp(m, "rank 1: ", 8), "rank 0's message is not rank 1's refusal: %s", m);
  T_CHECK(e == -1.0, "err written on failure: %g", e);
  /* the vector's array checked out for writing */
  double *arr;
  T_CALL(mf_vector_get_array(uh, MF_MEM_HOST, &arr));
  EXPECT(mf_vector_h1_error(uh, fn_grad, &f, &e), MF_ERR_ARGUMENT, "checked out for writing");
  T_CALL(mf_vector_restore_array(uh, &arr));
  mf_vector_destroy(&uh);
  mf_space_destroy(&s);
  mf_mesh_destroy(&mesh);
  if (simplex) { /* several components: refused by both measures */
    T_CALL(mf_mesh_create(ctx, "square-tris", 2, 1, &mesh));
    T_CALL(mf_space_create_components(mesh, 1, 2, &s));
    T_CALL(mf_vector_create(s, &uh));
    EXPECT(mf_vector_h1_error(uh, fn_grad, &f, &e), MF_ERR_UNSUPPORTED, "H1 errors of spaces of 2 components");
    EXPECT(mf_vector_l2_error(uh, fn_u, &f, &e), MF_ERR_UNSUPPORTED, "L2 errors of spaces of 2 components");
    mf_vector_destroy(&uh);
    mf_space_destroy(&s);
    /* a bad gradient on a simplex mesh */
    T_CALL(mf_space_create(mesh, 2, &s));
    T_CALL(mf_vector_create(s, &uh));
    T_CALL(mf_vector_set_value(uh, 0.0));
    EXPECT(mf_vector_h1_error(uh, fn_grad, &bad, &e), MF_ERR_ARGUMENT, "the gradient must be finite");
    m = mf_last_error_message();
    x = strstr(m, "x = (");
    T_CHECK(strstr(m, "gradient of u = (nan, nan)") && x && sscanf(x, "x = (%lf, %lf", &px, &py) == 2 && px > 0.7 &&
                py > 0.7, "simplex: message %s", m);
    mf_vector_destroy(&uh);
    mf_space_destroy(&s);
    mf_mesh_destroy(&mesh);
  }
}

int main(int argc, char **argv)
{
  MPI_Init(&argc, &argv);
  const char *backend = t_backend(argc, argv);
  const int gpu = !strcmp(backend, "cuda");
  int nranks;
  MPI_Comm_size(MPI_COMM_WORLD, &nranks);
  mf_context ctx;
  T_CALL(mf_context_create(MPI_COMM_WORLD, backend, &ctx));
  check_hex(ctx, gpu);
  if (nranks == 1) check_simplex(ctx, gpu); /* simplex meshes live on one rank */
  check_refusals(ctx, nranks, nranks == 1);
  mf_context_destroy(&ctx);
  return t_finish();
}
