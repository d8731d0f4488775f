/* t10_setup -- the set-up of spaces and operators, for every operator (mass, Laplace, Helmholtz),
 * dim 2 and 3, p = 1..8, quadrature (Gauss p+1, Gauss p+2, GLL), on a uniform and an adaptive ball:
 *   argv[1] = cpu:  results do not depend on the OpenMP thread count: quadrature data, diagonal,
 *                   right-hand side and L2 error with 1 and 2 threads are bitwise equal; the cell
 *                   colors are valid on every DoF (no two cells of a color share one);
 *   argv[1] = cuda: the GPU set-up equals the CPU set-up (quadrature data, diagonal, right-hand side,
 *                   L2 error) to 1e-13 relative; a device memory limit refuses a space and an operator
 *                   that do not fit, before allocating, with the bytes in the message, and nothing
 *                   stays allocated; an operator's set-up peaks at its final memory plus one batch of
 *                   the coefficient pipeline. Exits 77 where no GPU is usable.                     */
#ifdef _OPENMP
#include <omp.h>
#endif

#include "mf_test.h"
#include "mf_testing.h"
#include "poisson.h"

/* everything one set-up produces, on the host */
typedef struct {
  double *qd, *diag, *rhs, l2;
  size_t len;
  int n;
} setup_result;

static int create(mf_space s, int kind, mf_quadrature q, mf_operator *op)
{
  if (kind == 0) return mf_operator_create_mass(s, q, t_ljungkvist, NULL, op);
  if (kind == 1) return mf_operator_create_laplace(s, q, t_ljungkvist, NULL, op);
  return mf_operator_create_helmholtz(s, q, 0.7, 1.3, t_ljungkvist, NULL, op);
}

static double rhs_f(const double *x, int dim, void *user)
{
  (void)user;
  return sin(3.0 * x[0]) * cos(2.0 * x[1]) + (dim == 3 ? x[2] * x[2] : 0.0);
}

/* the space's vectors: b (right-hand side of rhs_f), u (interpolated poisson_u, for the L2 error) */
static void space_results(mf_space s, setup_result *r)
{
  mf_vector b, u;
  int n;
  T_CALL(mf_space_local_sizes(s, &n, NULL));
  r->n = n;
  r->rhs = malloc(sizeof(double) * (n ? n : 1));
  T_CALL(mf_vector_create(s, &b));
  T_CALL(mf_vector_create(s, &u));
  T_CALL(mf_vector_assemble_rhs(b, rhs_f, NULL));
  T_CALL(mf_vector_get_values(b, r->rhs));
  T_CALL(mf_vector_interpolate(u, poisson_u, NULL));
  T_CALL(mf_vector_l2_error(u, rhs_f, NULL, &r->l2));
  mf_vector_destroy(&b);
  mf_vector_destroy(&u);
}

static void operator_results(mf_space s, mf_operator op, setup_result *r)
{
  mf_vector d;
  r->len = mf_hexop(op)->qd.len;
  r->qd = malloc(sizeof(double) * r->len);
  r->diag = malloc(sizeof(double) * (r->n ? r->n : 1));
  T_CALL(mf_operator_qdata_to_host(op, r->qd));
  T_CALL(mf_vector_create(s, &d));
  T_CALL(mf_operator_diagonal(op, d));
  T_CALL(mf_vector_get_values(d, r->diag));
  mf_vector_destroy(&d);
}

/* max |a - b| / max |b| (0 if both vanish) */
static double reldiff(const double *a, const double *b, size_t n)
{
  double d = 0.0, m = 0.0;
  for (size_t i = 0; i < n; i++) {
    d = fmax(d, fabs(a[i] - b[i]));
    m = fmax(m, fabs(b[i]));
  }
  return m > 0.0 ? d / m : d;
}

/* No two cells of one color share a DoF, on all positions. */
static void check_colors(mf_space s)
{
  T_CALL(mf_space_colors(s));
  int *seen = calloc((size_t)s->nlocal, sizeof(int)), bad = 0;
  for (int c = 0; c < s->ncolors; c++)
    for (int k = s->color_off[c]; k < s->color_off[c + 1]; k++) {
      const int e = s->color_cells[k];
      for (int i = 0; i < s->npc; i++) {
        const int dof = s->cell_nodes[(size_t)e * s->npc + i];
        if (seen[dof] == c + 1) {
          int first = 1; /* the same cell may hold a DoF twice */
          for (int j = 0; j < i; j++) first &= s->cell_nodes[(size_t)e * s->npc + j] != dof;
          if (first) bad++;
        }
        seen[dof] = c + 1;
      }
    }
  T_CHECK(bad == 0, "dim %d p %d: %d DoFs shared by two cells of one color (%d colors)", s->dim, s->degree, bad,
          s->ncolors);
  free(seen);
}

static void free_result(setup_result *r)
{
  free(r->qd);
  free(r->diag);
  r->qd = r->diag = NULL;
}

static int set_threads(int n)
{
#ifdef _OPENMP
  omp_set_num_threads(n);
  return 1;
#else
  (void)n;
  return 0;
#endif
}

/* The device memory limit: refusals before allocation, and nothing left allocated by them. */
static void check_memory_limit(mf_context gc)
{
  mf_mesh mesh;
  mf_space s = NULL;
  mf_operator op = NULL;
  size_t base, in_use, peak;
  T_CALL(mf_mesh_create(gc, "cube", 3, 3, &mesh));
  T_CALL(mf_context_device_memory(gc, &base, &peak));
  T_CALL(mf_context_set_device_memory_limit(gc, base + 4096));
  int e = mf_space_create(mesh, 4, &s);
  T_CHECK(e == MF_ERR_MEMORY && s == NULL, "space over the limit: code %d", e);
  T_CHECK(strstr(mf_last_error_message(), "the space needs") && strstr(mf_last_error_message(), "available"),
          "message names the bytes: '%s'", mf_last_error_message());
  T_CALL(mf_context_device_memory(gc, &in_use, &peak));
  T_CHECK(in_use == base, "refused space left %zu bytes allocated", in_use - base);
  /* a limit the space fits and the operator does not */
  T_CALL(mf_context_set_device_memory_limit(gc, 0));
  T_CALL(mf_space_create(mesh, 4, &s));
  T_CALL(mf_context_device_memory(gc, &base, &peak));
  T_CALL(mf_context_set_device_memory_limit(gc, base + 100000));
  e = mf_operator_create_laplace(s, MF_QUAD_GAUSS, t_ljungkvist, NULL, &op);
  T_CHECK(e == MF_ERR_MEMORY && op == NULL, "operator over the limit: code %d", e);
  T_CHECK(strstr(mf_last_error_message(), "the operator") && strstr(mf_last_error_message(), "needs"),
          "message names the operator: '%s'", mf_last_error_message());
  T_CALL(mf_context_device_memory(gc, &in_use, &peak));
  T_CHECK(in_use == base, "refused operator left %zu bytes allocated", in_use - base);
  T_CALL(mf_context_set_device_memory_limit(gc, 0));
  T_CALL(mf_operator_create_laplace(s, MF_QUAD_GAUSS, t_ljungkvist, NULL, &op));
  T_CALL(mf_context_device_memory(gc, &in_use, &peak));
  T_CHECK(in_use > base && peak >= in_use, "in use %zu, peak %zu after the operator", in_use, peak);
  mf_operator_destroy(&op);
  mf_space_destroy(&s);
  mf_mesh_destroy(&mesh);
  /* the set-up's peak: the final operator plus one batch of points and coefficient values (two halves
   * of cells x q^3 x (3 + 1) doubles) -- measured on a fresh context, whose peak is this set-up's */
  mf_context fc;
  T_CALL(mf_context_create(MPI_COMM_SELF, "cuda", &fc));
  T_CALL(mf_mesh_create(fc, "ball", 3, 2, &mesh));
  T_CALL(mf_space_create(mesh, 3, &s));
  T_CALL(mf_context_device_memory(fc, &base, &peak));
  T_CALL(mf_operator_create_laplace(s, MF_QUAD_GAUSS, t_ljungkvist, NULL, &op));
  T_CALL(mf_context_device_memory(fc, &in_use, &peak));
  const size_t batch = sizeof(double) * 2 * (size_t)s->ncells * 64 * 4;
  T_CHECK(peak >= in_use && peak - in_use <= batch + 1024, "operator set-up: peak %zu, final %zu, batch %zu bytes", peak,
          in_use, batch);
  mf_operator_destroy(&op);
  mf_space_destroy(&s);
  mf_mesh_destroy(&mesh);
  mf_context_destroy(&fc);
}

int main(int argc, char **argv)
{
  MPI_Init(&argc, &argv);
  const char *be = t_backend(argc, argv);
  const int gpu = !strcmp(be, "cuda");
  if (!gpu && !set_threads(1)) {
    fprintf(stderr, "SKIP: built without OpenMP\n");
    MPI_Finalize();
    return 77;
  }
  mf_context cc, oc; /* the reference (cpu, 1 thread) and the other set-up (cuda, or cpu with 2 threads) */
  T_CALL(mf_context_create(MPI_COMM_WORLD, "cpu", &cc));
  T_CALL(mf_context_create(MPI_COMM_WORLD, be, &oc));
  const double tol = gpu ? 1e-13 : 0.0;
  int ncases = 0;
  for (int adapt = 0; adapt < 2; adapt++)
    for (int dim = 2; dim <= 3; dim++)
      for (int p = 1; p <= 8; p++) {
        const int level = adapt ? 0 : dim == 2 ? (p <= 4 ? 2 : 1) : (p <= 2 ? 1 : 0);
        mf_mesh cm, om;
        mf_space cs, os;
        setup_result rc = {0}, ro = {0};
        t_ball(cc, dim, level, adapt, &cm);
        t_ball(oc, dim, level, adapt, &om);
        set_threads(1);
        T_CALL(mf_space_create(cm, p, &cs));
        space_results(cs, &rc);
        if (!gpu) set_threads(2);
        T_CALL(mf_space_create(om, p, &os));
        space_results(os, &ro);
        if (!gpu) check_colors(os);
        T_CHECK(adapt == 0 || cs->nmasked > 0, "dim %d p %d: the adaptive mesh has no hanging nodes", dim, p);
        double d = reldiff(ro.rhs, rc.rhs, (size_t)rc.n);
        T_CHECK(d <= tol, "rhs dim %d p %d adapt %d: %s vs cpu (1 thread) %.3e rel", dim, p, adapt, be, d);
        T_CHECK(fabs(ro.l2 - rc.l2) <= tol * rc.l2 && rc.l2 > 0, "L2 dim %d p %d adapt %d: %.17g vs %.17g", dim, p,
                adapt, ro.l2, rc.l2);
        for (int kind = 0; kind < 3; kind++)
          for (int q = 0; q < 3; q++) {
            mf_operator co, oo;
            set_threads(1);
            T_CALL(create(cs, kind, (mf_quadrature)q, &co));
            T_CALL(mf_operator_set_dirichlet(co, 1));
            operator_results(cs, co, &rc);
            if (!gpu) set_threads(2);
            T_CALL(create(os, kind, (mf_quadrature)q, &oo));
            T_CALL(mf_operator_set_dirichlet(oo, 1));
            operator_results(os, oo, &ro);
            d = reldiff(ro.qd, rc.qd, rc.len);
            T_CHECK(d <= tol, "qdata kind %d dim %d p %d quad %d adapt %d: %.3e rel", kind, dim, p, q, adapt, d);
            d = reldiff(ro.diag, rc.diag, (size_t)rc.n);
            T_CHECK(d <= tol, "diagonal kind %d dim %d p %d quad %d adapt %d: %.3e rel", kind, dim, p, q, adapt, d);
            free_result(&rc);
            free_result(&ro);
            mf_operator_destroy(&co);
            mf_operator_destroy(&oo);
            ncases++;
          }
        free(rc.rhs);
        free(ro.rhs);
        mf_space_destroy(&cs);
        mf_space_destroy(&os);
        mf_mesh_destroy(&cm);
        mf_mesh_destroy(&om);
      }
  T_CHECK(ncases == 2 * 2 * 8 * 3 * 3, "ran %d operator cases", ncases);
  if (gpu) check_memory_limit(oc);
  mf_context_destroy(&oc);
  mf_context_destroy(&cc);
  return t_finish();
}
