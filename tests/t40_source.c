/* t40_source -- pointwise fields given as C source (mf_source): on the backend of argv[1], the source's
 * interpolation, boundary values, right-hand side and L2 error equal the same functions given as host
 * callbacks (the library's long-standing path) on hex meshes (2D/3D, uniform and with hanging nodes,
 * Q1..Q3, one and three components; 1 or more ranks: on several, the L2 error of a vector whose ghost
 * entries an axpy left behind) and on simplex meshes (square-tris, cube-tets, P1..P4, one and three
 * components; partitioned on several ranks), to 1e-12 relative; a second use compiles nothing
 * (the counters); and the refusals, each with its code and message: NULLs, a bad name, constants out of
 * range, components that do not match, a text that does not compile (the compiler's message), a value
 * that is not finite (named with its point), a right-hand side of three components.
 * Usage: t40_source [cpu|cuda] */
#include "mf_test.h"

#include <math.h>
#include <stdlib.h>

static const char *text =
    "#include <math.h>\n"
    "void u_exact(int dim, const double *x, const double *k, double *v)\n"
    "{\n"
    "  double u = 1.0;\n"
    "  for (int d = 0; d < dim; d++) u *= sin(k[0] * x[d] + 0.3 * (d + 1));\n"
    "  v[0] = u;\n"
    "}\n"
    "void rhs(int dim, const double *x, const double *k, double *v)\n"
    "{\n"
    "  u_exact(dim, x, k, v);\n"
    "  v[0] *= dim * k[0] * k[0];\n"
    "}\n"
    "void field3(int dim, const double *x, const double *k, double *v)\n"
    "{\n"
    "  v[0] = exp(x[0]) * k[1];\n"
    "  v[1] = x[1] * x[1] - x[0];\n"
    "  v[2] = cos(x[dim - 1]) + x[0] * x[1];\n"
    "}\n"
    "void half_nan(int dim, const double *x, const double *k, double *v)\n"
    "{\n"
    "  v[0] = x[0] > 0.5 ? NAN : 1.0;\n"
    "}\n";
static const double kk[2] = {2.1, 0.7};

/* the same functions as callbacks */
static double cb_u(const double *x, int dim, void *user)
{
  (void)user;
  double u = 1.0;
  for (int d = 0; d < dim; d++) u *= sin(kk[0] * x[d] + 0.3 * (d + 1));
  return u;
}
static double cb_rhs(const double *x, int dim, void *user) { return cb_u(x, dim, user) * dim * kk[0] * kk[0]; }
static void cb_field3(const double *x, int dim, double *v, void *user)
{
  (void)user;
  v[0] = exp(x[0]) * kk[1];
  v[1] = x[1] * x[1] - x[0];
  v[2] = cos(x[dim - 1]) + x[0] * x[1];
}

static double rel_diff(mf_space s, mf_vector a, mf_vector b)
{
  int n = 0, nl = 0;
  T_CALL(mf_space_local_sizes(s, &n, &nl));
  double *ha = calloc((size_t)n + 1, sizeof(double)), *hb = calloc((size_t)n + 1, sizeof(double));
  T_CALL(mf_vector_get_values(a, ha));
  T_CALL(mf_vector_get_values(b, hb));
  double num = 0.0, den = 0.0;
  for (int i = 0; i < n; i++) {
    num += (ha[i] - hb[i]) * (ha[i] - hb[i]);
    den += ha[i] * ha[i];
  }
  MPI_Allreduce(MPI_IN_PLACE, &num, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
  MPI_Allreduce(MPI_IN_PLACE, &den, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
  free(ha);
  free(hb);
  T_CHECK(den > 0.0, "a vector of zeros where values were expected");
  return sqrt(num / (den > 0.0 ? den : 1.0));
}

/* the hex cube (adapt: with hanging nodes) or, simplex set, the simplex box of the dimension */
static void make_mesh(mf_context ctx, int simplex, int dim, int adapt, mf_mesh *mesh)
{
  if (simplex) T_CALL(mf_mesh_create(ctx, dim == 2 ? "square-tris" : "cube-tets", dim, dim == 2 ? 3 : 2, mesh));
  else t_mesh(ctx, "cube", dim, dim == 2 ? 2 : 1, adapt, mesh);
}

static void scalar_case(mf_context ctx, int simplex, int dim, int adapt, int p)
{
  mf_mesh mesh = NULL;
  mf_space s = NULL;
  mf_source u = NULL, f = NULL;
  mf_vector a = NULL, b = NULL;
  make_mesh(ctx, simplex, dim, adapt, &mesh);
  T_CALL(mf_space_create(mesh, p, &s));
  T_CALL(mf_source_create(ctx, text, "u_exact", 1, &u));
  T_CALL(mf_source_create(ctx, text, "rhs", 1, &f));
  T_CALL(mf_source_set_constants(u, 2, kk));
  T_CALL(mf_source_set_constants(f, 2, kk));
  T_CALL(mf_vector_create(s, &a));
  T_CALL(mf_vector_create(s, &b));
  const char *where = simplex ? " simplex" : adapt ? " adapted" : "";
  T_CALL(mf_vector_interpolate_source(a, u));
  T_CALL(mf_vector_interpolate(b, cb_u, NULL));
  double e = rel_diff(s, a, b);
  T_CHECK(e <= 1e-13, "%dD%s Q%d: interpolation from source differs from the callback's by %.3g", dim, where, p, e);
  T_CALL(mf_vector_set_boundary_source(a, u));
  T_CALL(mf_vector_set_boundary(b, cb_u, NULL));
  e = rel_diff(s, a, b);
  T_CHECK(e <= 1e-13, "%dD%s Q%d: boundary values from source differ from the callback's by %.3g", dim, where, p, e);
  T_CALL(mf_vector_assemble_rhs_source(a, f));
  T_CALL(mf_vector_assemble_rhs(b, cb_rhs, NULL));
  e = rel_diff(s, a, b);
  T_CHECK(e <= 1e-12, "%dD%s Q%d: right-hand side from source differs from the callback's by %.3g", dim, where, p, e);
  /* the error of 1.5 times the interpolant (made by an axpy after the interpolation: the owned entries
   * only, so the measure must bring the ghosts up to date on several ranks): the same both ways, and
   * positive */
  T_CALL(mf_vector_interpolate(a, cb_u, NULL));
  T_CALL(mf_vector_interpolate(b, cb_u, NULL));
  T_CALL(mf_vector_axpy(a, 0.5, b));
  double es = 0.0, ec = 0.0;
  T_CALL(mf_vector_l2_error_source(a, u, &es));
  T_CALL(mf_vector_l2_error(a, cb_u, NULL, &ec));
  T_CHECK(ec > 0.0 && fabs(es - ec) <= 1e-12 * ec, "%dD%s Q%d: L2 error from source %.17g, from the callback %.17g", dim,
          where, p, es, ec);
  mf_vector_destroy(&a);
  mf_vector_destroy(&b);
  mf_source_destroy(&u);
  mf_source_destroy(&f);
  mf_space_destroy(&s);
  mf_mesh_destroy(&mesh);
}

static void vector_case(mf_context ctx, int simplex, int dim, int adapt, int p)
{
  mf_mesh mesh = NULL;
  mf_space s = NULL;
  mf_source g = NULL;
  mf_vector a = NULL, b = NULL;
  make_mesh(ctx, simplex, dim, adapt, &mesh);
  T_CALL(mf_space_create_components(mesh, p, 3, &s));
  T_CALL(mf_source_create(ctx, text, "field3", 3, &g));
  T_CALL(mf_source_set_constants(g, 2, kk));
  T_CALL(mf_vector_create(s, &a));
  T_CALL(mf_vector_create(s, &b));
  T_CALL(mf_vector_interpolate_source(a, g));
  T_CALL(mf_vector_interpolate_field(b, cb_field3, NULL));
  double e = rel_diff(s, a, b);
  T_CHECK(e <= 1e-13, "%dD %s%d, 3 components: interpolation from source differs by %.3g", dim, simplex ? "P" : "Q", p, e);
  T_CALL(mf_vector_set_boundary_source(a, g));
  T_CALL(mf_vector_set_boundary_field(b, cb_field3, NULL));
  e = rel_diff(s, a, b);
  T_CHECK(e <= 1e-13, "%dD %s%d, 3 components: boundary values from source differ by %.3g", dim, simplex ? "P" : "Q", p,
          e);
  T_CALL(mf_vector_set_random(a, 4));
  double es = 0.0, ec = 0.0;
  T_CALL(mf_vector_l2_error_source(a, g, &es));
  T_CALL(mf_vector_l2_error_field(a, cb_field3, NULL, &ec));
  T_CHECK(ec > 0.0 && fabs(es - ec) <= 1e-12 * ec, "%dD %s%d, 3 components: L2 error from source %.17g, callback %.17g", dim,
          simplex ? "P" : "Q", p, es, ec);
  EXPECT(mf_vector_assemble_rhs_source(a, g), MF_ERR_UNSUPPORTED, "spaces of 3 components");
  mf_vector_destroy(&a);
  mf_vector_destroy(&b);
  mf_source_destroy(&g);
  mf_space_destroy(&s);
  mf_mesh_destroy(&mesh);
}

/* the refusals on a 2D hex mesh or (simplex) triangles */
static void refusals(mf_context ctx, int simplex)
{
  mf_mesh mesh = NULL;
  mf_space s = NULL;
  mf_vector v = NULL;
  mf_source f = NULL;
  double err = 0.0;
  T_CALL(mf_mesh_create(ctx, simplex ? "square-tris" : "cube", 2, simplex ? 3 : 1, &mesh));
  T_CALL(mf_space_create(mesh, 2, &s));
  T_CALL(mf_vector_create(s, &v));
  EXPECT(mf_source_create(NULL, text, "u_exact", 1, &f), MF_ERR_NULL, "context is NULL");
  EXPECT(mf_source_create(ctx, NULL, "u_exact", 1, &f), MF_ERR_NULL, "source text is NULL");
  EXPECT(mf_source_create(ctx, text, NULL, 1, &f), MF_ERR_NULL, "function name is NULL");
  EXPECT(mf_source_create(ctx, text, "u_exact", 1, NULL), MF_ERR_NULL, "output pointer src is NULL");
  EXPECT(mf_source_create(ctx, text, "u_exact", 0, &f), MF_ERR_ARGUMENT, "field components 0 out of range");
  EXPECT(mf_source_create(ctx, text, "u exact", 1, &f), MF_ERR_ARGUMENT, "'u exact' is not a C identifier");
  EXPECT(mf_source_create(ctx, text, "", 1, &f), MF_ERR_ARGUMENT, "is not a C identifier");
  T_CHECK(f == NULL, "a refused source was made");
  T_CALL(mf_source_create(ctx, text, "field3", 3, &f));
  EXPECT(mf_source_set_constants(f, 65, kk), MF_ERR_ARGUMENT, "constants: 65 out of range 0..64");
  EXPECT(mf_source_set_constants(f, 2, NULL), MF_ERR_NULL, "constants k is NULL");
  EXPECT(mf_source_set_constants(NULL, 0, NULL), MF_ERR_NULL, "source is NULL");
  EXPECT(mf_vector_interpolate_source(v, f), MF_ERR_INCOMPATIBLE, "the source 'field3' has 3 components, the space 1");
  EXPECT(mf_vector_interpolate_source(NULL, f), MF_ERR_NULL, "vector is NULL");
  EXPECT(mf_vector_interpolate_source(v, NULL), MF_ERR_NULL, "source f is NULL");
  EXPECT(mf_vector_l2_error_source(v, f, NULL), MF_ERR_INCOMPATIBLE, "3 components");
  mf_source_destroy(&f);
  T_CALL(mf_source_create(ctx, text, "u_exact", 1, &f));
  EXPECT(mf_vector_l2_error_source(v, f, NULL), MF_ERR_NULL, "output pointer err is NULL");
  mf_source_destroy(&f);
  /* a value that is not finite, named with where it is */
  T_CALL(mf_source_create(ctx, text, "half_nan", 1, &f));
  EXPECT(mf_vector_interpolate_source(v, f), MF_ERR_ARGUMENT, "finite");
  EXPECT(mf_vector_assemble_rhs_source(v, f), MF_ERR_ARGUMENT, "finite");
  EXPECT(mf_vector_l2_error_source(v, f, &err), MF_ERR_ARGUMENT, "finite");
  mf_source_destroy(&f);
  /* a text that does not compile: the compiler's message, with the line */
  T_CALL(mf_source_create(ctx, "void g(int dim, const double *x, const double *k, double *v)\n{\n  v[0] = nowhere;\n}\n", "g",
                          1, &f));
  EXPECT(mf_vector_interpolate_source(v, f), MF_ERR_ARGUMENT, "source");
  T_CHECK(strstr(mf_last_error_message(), "nowhere") != NULL, "the compiler's message is missing: %s",
          mf_last_error_message());
  mf_source_destroy(&f);
  /* a function that is not in the text */
  T_CALL(mf_source_create(ctx, text, "missing_one", 1, &f));
  EXPECT(mf_vector_interpolate_source(v, f), MF_ERR_ARGUMENT, "missing_one");
  mf_source_destroy(&f);
  T_CALL(mf_source_destroy(&f)); /* NULL: nothing */
  mf_vector_destroy(&v);
  mf_space_destroy(&s);
  mf_mesh_destroy(&mesh);
}

/* a second use of the same text and shape compiles nothing (a text of its own: the cases above compiled
 * theirs in this process already) */
static void cache_case(mf_context ctx)
{
  char own[4096];
  snprintf(own, sizeof own, "%s/* the cache case */\n", text);
  char dir[] = "/tmp/t40-cache-XXXXXX";
  T_CHECK(mkdtemp(dir) != NULL, "no temporary folder");
  T_CALL(mf_context_set_cache_dir(ctx, dir));
  mf_mesh mesh = NULL;
  mf_space s = NULL;
  mf_vector v = NULL;
  mf_source f = NULL;
  T_CALL(mf_mesh_create(ctx, "cube", 3, 1, &mesh));
  T_CALL(mf_space_create(mesh, 2, &s));
  T_CALL(mf_vector_create(s, &v));
  T_CALL(mf_source_create(ctx, own, "u_exact", 1, &f));
  int c0 = 0, l0 = 0, c1 = 0, l1 = 0;
  T_CALL(mf_context_jit_counts(ctx, &c0, &l0));
  T_CALL(mf_vector_interpolate_source(v, f));
  T_CALL(mf_context_jit_counts(ctx, &c1, &l1));
  T_CHECK(c1 == c0 + 1, "a new text: %d compiles (expected 1)", c1 - c0);
  mf_source_destroy(&f);
  T_CALL(mf_source_create(ctx, own, "u_exact", 1, &f));
  T_CALL(mf_vector_interpolate_source(v, f));
  T_CALL(mf_context_jit_counts(ctx, &c0, &l0));
  T_CHECK(c0 == c1 && l0 == l1 + 1, "the same text again: %d compiles, %d loads (expected 0, 1)", c0 - c1, l0 - l1);
  mf_source_destroy(&f);
  mf_vector_destroy(&v);
  mf_space_destroy(&s);
  mf_mesh_destroy(&mesh);
  char cmd[128];
  snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
  T_CHECK(system(cmd) == 0, "could not remove %s", dir);
}

int main(int argc, char **argv)
{
  MPI_Init(&argc, &argv);
  const char *backend = t_backend(argc, argv);
  mf_context ctx = NULL;
  T_CALL(mf_context_create(MPI_COMM_WORLD, backend, &ctx));
  for (int dim = 2; dim <= 3; dim++)
    for (int adapt = 0; adapt <= 1; adapt++)
      for (int p = 1; p <= 3; p++) {
        scalar_case(ctx, 0, dim, adapt, p);
        if (p == 2) vector_case(ctx, 0, dim, adapt, p);
      }
  for (int dim = 2; dim <= 3; dim++)
    for (int p = 1; p <= 4; p++) {
      scalar_case(ctx, 1, dim, 0, p);
      if (p == 2) vector_case(ctx, 1, dim, 0, p);
    }
  refusals(ctx, 0);
  refusals(ctx, 1);
  cache_case(ctx);
  mf_context_destroy(&ctx);
  return t_finish();
}
