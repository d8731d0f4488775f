/* t28_simplex_cuda_api.c -- simplex spaces and operators on the cuda backend through the public
 * interface, against the cpu backend on the same meshes (two contexts side by side):
 *   - mass, Laplace with the coefficient c(x) = 1 / (0.05 + 2|x|^2), Helmholtz (c = 1) and elasticity,
 *     dim 2 and 3, p = 1..4: y = A x on the same random vector (mf_vector_set_random on each backend),
 *     with and without the Dirichlet form, and the diagonal, to 1e-12 relative in the max norm;
 *   - the vector functions of a Poisson solve (interpolate, set_boundary, zero_boundary,
 *     assemble_rhs, l2_error, dot, axpy) and the Dirichlet tags (the device marks follow them);
 *   - the Poisson solve of mfree-poisson (apps/poisson.h: CG with Jacobi, tolerance 1e-13) for P1..P3
 *     in 2D and 3D: the cpu backend's iterations (+-1), solution and L2 error (1e-10 relative);
 *   - the assembled operators (mass, Laplace, Helmholtz; p = 1..4): values, A x and diagonal against the
 *     cpu backend's, and the Poisson solve with them (assembly and CG on the device);
 *   - two operators of one space sharing the device copies of its cells, vertices and cell DoFs;
 *   - refusals on cuda: degree above MF_SIMPLEX_CUDA_MAX_DEGREE (4), the rule of degree 2p + 2;
 *   - device memory back to where it was once everything is destroyed.
 * Exit 77 where no GPU is usable (a failure under MFREE_TEST_REQUIRE_GPU=1).                      */
#include "mf_test.h"
#include "poisson.h"

#include "mf_testing.h" /* mf_operator_csr_values_host */
#include "operator_impl.h" /* mf_operator_create_single */

enum { MASS, LAPLACE_C, HELMHOLTZ, ELASTICITY, NKINDS };
static const char *const kind_name[NKINDS] = {"mass", "laplace-c", "helmholtz", "elasticity"};

static double smooth(const double *x, int dim, void *u)
{
  (void)u;
  double s = 1.0;
  for (int k = 0; k < dim; k++) s += sin(1.0 + (k + 1) * x[k]);
  return s;
}

/* max_i |a_i - b_i| / max_i |b_i| */
static double relerr(const double *a, const double *b, int n)
{
  double d = 0.0, m = 0.0;
  for (int i = 0; i < n; i++) {
    d = fmax(d, fabs(a[i] - b[i]));
    m = fmax(m, fabs(b[i]));
  }
  return m > 0.0 ? d / m : d;
}

static void make_op(mf_space s, int kind, mf_operator *A)
{
  switch (kind) {
  case MASS: T_CALL(mf_operator_create_mass(s, MF_QUAD_GAUSS, NULL, NULL, A)); break;
  case LAPLACE_C: T_CALL(mf_operator_create_laplace(s, MF_QUAD_GAUSS, t_ljungkvist, NULL, A)); break;
  case HELMHOLTZ: T_CALL(mf_operator_create_helmholtz(s, MF_QUAD_GAUSS, 0.7, 1.3, NULL, NULL, A)); break;
  default: T_CALL(mf_operator_create_elasticity(s, 1.5, 0.8, A)); break;
  }
}

typedef struct {
  mf_mesh mesh;
  mf_space s;
  mf_operator A;
  mf_vector x, y, d;
} side;

static void side_make(mf_context ctx, int dim, int level, int p, int kind, side *w)
{
  T_CALL(mf_mesh_create(ctx, dim == 2 ? "square-tris" : "cube-tets", dim, level, &w->mesh));
  if (kind == ELASTICITY) T_CALL(mf_space_create_components(w->mesh, p, dim, &w->s));
  else T_CALL(mf_space_create(w->mesh, p, &w->s));
  make_op(w->s, kind, &w->A);
  T_CALL(mf_vector_create(w->s, &w->x));
  T_CALL(mf_vector_create(w->s, &w->y));
  T_CALL(mf_vector_create(w->s, &w->d));
}

static void side_free(side *w)
{
  mf_vector_destroy(&w->x);
  mf_vector_destroy(&w->y);
  mf_vector_destroy(&w->d);
  mf_operator_destroy(&w->A);
  mf_space_destroy(&w->s);
  mf_mesh_destroy(&w->mesh);
}

/* the operator's action (without and with the Dirichlet form) and diagonal on both backends */
static void check_operator(mf_context cc, mf_context gc, int dim, int level, int p, int kind)
{
  side c, g;
  side_make(cc, dim, level, p, kind, &c);
  side_make(gc, dim, level, p, kind, &g);
  int n, ng;
  T_CALL(mf_space_local_sizes(c.s, NULL, &n));
  T_CALL(mf_space_local_sizes(g.s, NULL, &ng));
  T_CHECK(n == ng, "%dD P%d %s: %d DoFs on cpu, %d on cuda", dim, p, kind_name[kind], n, ng);
  double *hc = calloc((size_t)n, sizeof(double)), *hg = calloc((size_t)n, sizeof(double));
  T_CALL(mf_vector_set_random(c.x, 1234u + (unsigned)p));
  T_CALL(mf_vector_set_random(g.x, 1234u + (unsigned)p));
  T_CALL(mf_vector_get_values(c.x, hc));
  T_CALL(mf_vector_get_values(g.x, hg));
  T_CHECK(relerr(hg, hc, n) == 0.0, "%dD P%d %s: random vectors differ", dim, p, kind_name[kind]);
  for (int bc = 0; bc < 2; bc++) {
    T_CALL(mf_operator_set_dirichlet(c.A, bc));
    T_CALL(mf_operator_set_dirichlet(g.A, bc));
    T_CALL(mf_operator_apply(c.A, c.x, c.y));
    T_CALL(mf_operator_apply(g.A, g.x, g.y));
    T_CALL(mf_vector_get_values(c.y, hc));
    T_CALL(mf_vector_get_values(g.y, hg));
    const double e = relerr(hg, hc, n);
    T_CHECK(e <= 1e-12, "%dD P%d %s%s: cuda A x differs from cpu by %.3e relative", dim, p, kind_name[kind],
            bc ? " (Dirichlet form)" : "", e);
    T_CALL(mf_operator_diagonal(c.A, c.d));
    T_CALL(mf_operator_diagonal(g.A, g.d));
    T_CALL(mf_vector_get_values(c.d, hc));
    T_CALL(mf_vector_get_values(g.d, hg));
    const double ed = relerr(hg, hc, n);
    T_CHECK(ed <= 1e-12, "%dD P%d %s%s: cuda diagonal differs from cpu by %.3e relative", dim, p, kind_name[kind],
            bc ? " (Dirichlet form)" : "", ed);
  }
  free(hc);
  free(hg);
  side_free(&c);
  side_free(&g);
}

/* The assembled operator on the device (lib/cuda/simplex_assembly.cu) against the cpu backend's (the same
 * rowwise sums): its values, A x with and without the Dirichlet form and the diagonal, and assembling
 * twice on one space (the DoF-to-cell lists kept from the first); scalar kinds only. A third assembly with
 * MFREE_SIMPLEX_ASM_STAGE=0 (3D P1: the shared kernel instead of the staged one; elsewhere the same kernel)
 * gives the same values to the bit (the same coordinates, entries and order of sums). */
static void check_assembled(mf_context cc, mf_context gc, int dim, int level, int p, int kind)
{
  side c, g;
  side_make(cc, dim, level, p, kind, &c);
  side_make(gc, dim, level, p, kind, &g);
  mf_operator Bc = NULL, Bg = NULL, Bg2 = NULL;
  T_CALL(mf_operator_create_assembled(c.A, &Bc));
  T_CALL(mf_operator_create_assembled(g.A, &Bg));
  T_CALL(mf_operator_create_assembled(g.A, &Bg2));
  setenv("MFREE_SIMPLEX_ASM_STAGE", "0", 1);
  mf_operator Bg3 = NULL;
  T_CALL(mf_operator_create_assembled(g.A, &Bg3));
  unsetenv("MFREE_SIMPLEX_ASM_STAGE");
  int64_t nc = 0, ng = 0;
  T_CALL(mf_operator_local_nnz(Bc, &nc));
  T_CALL(mf_operator_local_nnz(Bg, &ng));
  T_CHECK(nc == ng && nc > 0, "%dD P%d %s: %lld nonzeros on cpu, %lld on cuda", dim, p, kind_name[kind], (long long)nc,
          (long long)ng);
  double *vc = malloc(sizeof(double) * (size_t)nc), *vg = malloc(sizeof(double) * (size_t)nc),
         *vg2 = malloc(sizeof(double) * (size_t)nc), *vg3 = malloc(sizeof(double) * (size_t)nc);
  T_CALL(mf_operator_csr_values_host(Bc, vc));
  T_CALL(mf_operator_csr_values_host(Bg, vg));
  T_CALL(mf_operator_csr_values_host(Bg2, vg2));
  T_CALL(mf_operator_csr_values_host(Bg3, vg3));
  const double ev = relerr(vg, vc, (int)nc);
  T_CHECK(ev <= 1e-13, "%dD P%d %s: assembled values on cuda differ from cpu by %.3e relative", dim, p, kind_name[kind], ev);
  T_CHECK(relerr(vg2, vg, (int)nc) == 0.0, "%dD P%d %s: a second assembly on the device differs", dim, p, kind_name[kind]);
  T_CHECK(relerr(vg3, vg, (int)nc) == 0.0, "%dD P%d %s: the assembly without the staged columns differs by %.3e", dim, p,
          kind_name[kind], relerr(vg3, vg, (int)nc));
  int n;
  T_CALL(mf_space_local_sizes(c.s, NULL, &n));
  double *hc = calloc((size_t)n, sizeof(double)), *hg = calloc((size_t)n, sizeof(double));
  T_CALL(mf_vector_set_random(c.x, 99u + (unsigned)p));
  T_CALL(mf_vector_set_random(g.x, 99u + (unsigned)p));
  for (int bc = 0; bc < 2; bc++) {
    T_CALL(mf_operator_set_dirichlet(Bc, bc));
    T_CALL(mf_operator_set_dirichlet(Bg, bc));
    T_CALL(mf_operator_apply(Bc, c.x, c.y));
    T_CALL(mf_operator_apply(Bg, g.x, g.y));
    T_CALL(mf_vector_get_values(c.y, hc));
    T_CALL(mf_vector_get_values(g.y, hg));
    const double e = relerr(hg, hc, n);
    T_CHECK(e <= 1e-12, "%dD P%d %s%s: assembled cuda A x differs from cpu by %.3e relative", dim, p, kind_name[kind],
            bc ? " (Dirichlet form)" : "", e);
    T_CALL(mf_operator_diagonal(Bc, c.d));
    T_CALL(mf_operator_diagonal(Bg, g.d));
    T_CALL(mf_vector_get_values(c.d, hc));
    T_CALL(mf_vector_get_values(g.d, hg));
    const double ed = relerr(hg, hc, n);
    T_CHECK(ed <= 1e-12, "%dD P%d %s%s: assembled cuda diagonal differs from cpu by %.3e relative", dim, p,
            kind_name[kind], bc ? " (Dirichlet form)" : "", ed);
  }
  free(vc), free(vg), free(vg2), free(vg3), free(hc), free(hg);
  mf_operator_destroy(&Bc);
  mf_operator_destroy(&Bg);
  mf_operator_destroy(&Bg2);
  mf_operator_destroy(&Bg3);
  side_free(&c);
  side_free(&g);
}

/* interpolate, set_boundary, zero_boundary, assemble_rhs, l2_error, dot, axpy; the Dirichlet tags */
static void check_vectors(mf_context cc, mf_context gc, int dim, int level, int p)
{
  mf_mesh m[2];
  mf_space s[2];
  mf_vector u[2], b[2];
  double l2[2], dot[2], *h[2];
  int n = 0;
  mf_context ctx[2] = {cc, gc};
  for (int k = 0; k < 2; k++) {
    T_CALL(mf_mesh_create(ctx[k], dim == 2 ? "square-tris" : "cube-tets", dim, level, &m[k]));
    T_CALL(mf_space_create(m[k], p, &s[k]));
    T_CALL(mf_space_local_sizes(s[k], NULL, &n));
    T_CALL(mf_vector_create(s[k], &u[k]));
    T_CALL(mf_vector_create(s[k], &b[k]));
    T_CALL(mf_vector_interpolate(u[k], smooth, NULL));
    T_CALL(mf_vector_assemble_rhs(b[k], smooth, NULL));
    T_CALL(mf_vector_axpy(b[k], 0.5, u[k]));
    T_CALL(mf_vector_dot(b[k], u[k], &dot[k]));
    T_CALL(mf_vector_l2_error(u[k], t_ljungkvist, NULL, &l2[k]));
    T_CALL(mf_vector_zero_boundary(u[k]));
    T_CALL(mf_vector_set_boundary(b[k], t_ljungkvist, NULL));
    T_CALL(mf_vector_axpy(b[k], 1.0, u[k])); /* boundary values plus the interior of u */
    h[k] = calloc((size_t)n, sizeof(double));
    T_CALL(mf_vector_get_values(b[k], h[k]));
  }
  T_CHECK(relerr(h[1], h[0], n) <= 1e-13, "%dD P%d: vector functions on cuda differ from cpu by %.3e", dim, p,
          relerr(h[1], h[0], n));
  T_CHECK(fabs(dot[1] - dot[0]) <= 1e-12 * fabs(dot[0]), "%dD P%d: dot %.17g on cuda, %.17g on cpu", dim, p, dot[1], dot[0]);
  T_CHECK(fabs(l2[1] - l2[0]) <= 1e-12 * fabs(l2[0]), "%dD P%d: L2 error %.17g on cuda, %.17g on cpu", dim, p, l2[1], l2[0]);
  for (int k = 0; k < 2; k++) {
    mf_vector_destroy(&u[k]);
    mf_vector_destroy(&b[k]);
    mf_space_destroy(&s[k]);
    free(h[k]);
  }
  /* Dirichlet tags: none (the device marks made at creation must follow), then every facet again */
  for (int ntags = 0; ntags >= -1; ntags--) {
    for (int k = 0; k < 2; k++) {
      T_CALL(mf_space_create(m[k], p, &s[k]));
      T_CALL(mf_space_set_dirichlet_tags(s[k], ntags, NULL));
      T_CALL(mf_vector_create(s[k], &u[k]));
      T_CALL(mf_vector_set_value(u[k], 1.0));
      T_CALL(mf_vector_zero_boundary(u[k]));
      T_CALL(mf_vector_dot(u[k], u[k], &dot[k]));
      mf_vector_destroy(&u[k]);
      mf_space_destroy(&s[k]);
    }
    T_CHECK(dot[0] == dot[1], "%dD P%d, Dirichlet tags %d: %g interior entries on cuda, %g on cpu", dim, p, ntags, dot[1],
            dot[0]);
    if (ntags == 0) T_CHECK(dot[1] == (double)n, "%dD P%d: no Dirichlet tags, yet %g of %d entries left", dim, p, dot[1], n);
  }
  mf_mesh_destroy(&m[0]);
  mf_mesh_destroy(&m[1]);
}

static double zero_fn(const double *x, int dim, void *u)
{
  (void)x, (void)dim, (void)u;
  return 0.0;
}

/* Poisson with CG and Jacobi (apps/poisson.h) on both backends, matrix-free or assembled (the
 * assembly and the solve on the device, no host transfer between): the cpu's iterations +-1, and its
 * solution u_h (entry by entry) and L2 error e = |u_h - u| to 1e-10 relative. Why 1e-10 holds:
 * - the two operators are the same up to rounding (with c = 1 the device combines reference tables
 *   where the cpu sums at the points; its atomics add in any order), so the exact discrete solutions
 *   differ by rounding times the conditioning (Jacobi-scaled, up to ~(p^2 / h)^2): measured on the
 *   cpu, matrix-free against assembled, 1.3e-14 of u_h at most on these meshes (2e-13 with 2D P3 on
 *   16 x 16 squares);
 * - CG to 1e-13 leaves an iteration error below 1e-13 of u_h (measured: 7e-14 at most; 6e-13 at
 *   1e-12), which bounds what the backends stopping one iteration apart can change;
 * - the L2 errors differ by at most |u_h,cuda - u_h,cpu| (triangle inequality): relative to e, the
 *   solutions' difference relative to |u_h| times |u_h| / e. On these meshes e >= 6.8e-4 |u_h|, so
 *   even without cancellation this is below 2e-11 (measured: 1.2e-12 at most). On finer meshes it is
 *   not: 2D P3 on 16 x 16 squares (e = 2.4e-6 |u_h|) moves e by 2e-10 of itself through rounding
 *   alone, whatever the CG tolerance. So the L2 errors are compared where e >= 5e-4 |u_h| (l2check = 1,
 *   which asserts that), and the finer meshes compare the solutions alone (l2check = 0). */
static void check_poisson(mf_context cc, mf_context gc, int dim, int level, int p, int assembled, int l2check)
{
  poisson_result r[2];
  mf_context ctx[2] = {cc, gc};
  double *u[2] = {NULL, NULL}, l2[2] = {0.0, 0.0};
  int n[2] = {0, 0};
  for (int k = 0; k < 2; k++) {
    mf_mesh mesh;
    mf_space s;
    mf_vector v;
    poisson_pc pc;
    memset(&pc, 0, sizeof pc);
    pc.kind = MF_PC_JACOBI;
    pc.assembled = assembled;
    T_CALL(mf_mesh_create(ctx[k], dim == 2 ? "square-tris" : "cube-tets", dim, level, &mesh));
    T_CALL(mf_space_create(mesh, p, &s));
    T_CALL(mf_space_local_sizes(s, NULL, &n[k]));
    pc.solution = u[k] = calloc((size_t)n[k], sizeof(double));
    T_CALL(poisson_solve_pc(mesh, p, POISSON_COEF_CONSTANT, 1e-13, &pc, &r[k]));
    /* |u_h|: the L2 error of u_h against zero */
    T_CALL(mf_vector_create(s, &v));
    T_CALL(mf_vector_set_values(v, u[k]));
    T_CALL(mf_vector_l2_error(v, zero_fn, NULL, &l2[k]));
    mf_vector_destroy(&v);
    mf_space_destroy(&s);
    mf_mesh_destroy(&mesh);
  }
  const char *how = assembled ? " assembled" : "";
  T_CHECK(r[1].converged && abs(r[1].iterations - r[0].iterations) <= 1,
          "%dD P%d%s: cuda CG %d iterations (converged %d), cpu %d", dim, p, how, r[1].iterations, r[1].converged,
          r[0].iterations);
  T_CHECK(n[0] == n[1], "%dD P%d%s: %d DoFs on cpu, %d on cuda", dim, p, how, n[0], n[1]);
  if (n[0] == n[1]) {
    const double e = relerr(u[1], u[0], n[0]);
    T_CHECK(e <= 1e-10, "%dD P%d%s: cuda solution differs from cpu by %.3e relative", dim, p, how, e);
  }
  if (l2check) {
    T_CHECK(fabs(r[1].l2_error - r[0].l2_error) <= 1e-10 * r[0].l2_error,
            "%dD P%d%s: L2 error %.17g on cuda, %.17g on cpu", dim, p, how, r[1].l2_error, r[0].l2_error);
    /* what the L2 check assumes: the error is not small against the solution */
    T_CHECK(r[0].l2_error >= 5e-4 * l2[0], "%dD P%d: L2 error %.3e, |u_h| %.3e: the mesh is too fine for the 1e-10 check",
            dim, p, r[0].l2_error, l2[0]);
  }
  free(u[0]);
  free(u[1]);
}

/* Two operators of one space share the device copies of the mesh's cells and vertices and of the space's cell
 * DoFs (lib/cuda/memory.cu: mf_cuda_share): the second Laplace operator adds exactly those bytes less than the
 * first; destroying the first frees only its own bytes and leaves the second's product unchanged; a float copy
 * holds the copies once more (mf_cuda_retain) and keeps them after its double operator goes; all of it freed
 * with the last. */
static void check_shared(mf_context gc)
{
  const int level = 3, p = 2;
  mf_mesh mesh;
  mf_space s;
  mf_operator A1 = NULL, A2 = NULL;
  mf_vector x, y;
  T_CALL(mf_mesh_create(gc, "cube-tets", 3, level, &mesh));
  T_CALL(mf_space_create(mesh, p, &s));
  T_CALL(mf_vector_create(s, &x));
  T_CALL(mf_vector_create(s, &y));
  T_CALL(mf_vector_set_random(x, 99u));
  int64_t ncells;
  int n;
  T_CALL(mf_mesh_num_cells(mesh, &ncells));
  T_CALL(mf_space_local_sizes(s, NULL, &n));
  const size_t nv = (size_t)((1 << level) + 1) * ((1 << level) + 1) * ((1 << level) + 1), N = 10;
  const size_t shared = sizeof(int) * (size_t)ncells * (4 + N) + sizeof(double) * 3 * nv;
  size_t m0, m1, m2, m3;
  T_CALL(mf_context_device_memory(gc, &m0, NULL));
  T_CALL(mf_operator_create_laplace(s, MF_QUAD_GAUSS, NULL, NULL, &A1));
  T_CALL(mf_context_device_memory(gc, &m1, NULL));
  T_CALL(mf_operator_create_laplace(s, MF_QUAD_GAUSS, NULL, NULL, &A2));
  T_CALL(mf_context_device_memory(gc, &m2, NULL));
  T_CHECK(m1 - m0 >= shared && (m1 - m0) - (m2 - m1) == shared,
          "3D P2: the first operator took %zu bytes, the second %zu: expected %zu less (the shared cells, vertices and "
          "cell DoFs)", m1 - m0, m2 - m1, shared);
  double *h1 = calloc((size_t)n, sizeof(double)), *h2 = calloc((size_t)n, sizeof(double));
  T_CALL(mf_operator_apply(A2, x, y));
  T_CALL(mf_vector_get_values(y, h1));
  mf_operator_destroy(&A1); /* its own bytes go, the shared copies stay with A2 */
  T_CALL(mf_context_device_memory(gc, &m3, NULL));
  T_CHECK(m3 == m1, "3D P2: %zu bytes in use after the first operator was destroyed, expected %zu", m3, m1);
  T_CALL(mf_operator_apply(A2, x, y));
  T_CALL(mf_vector_get_values(y, h2));
  const double e = relerr(h2, h1, n);
  T_CHECK(e <= 1e-14, "3D P2: the second operator's product changed by %.3e once the first was destroyed", e);
  /* a float copy holds the same copies once more: it adds less than them, and keeps them after A2 goes */
  mf_operator S = NULL;
  size_t s0, s1, s2;
  T_CALL(mf_context_device_memory(gc, &s0, NULL));
  T_CALL(mf_operator_create_single(A2, &S));
  T_CALL(mf_context_device_memory(gc, &s1, NULL));
  T_CHECK(s1 - s0 < shared, "3D P2: the float copy took %zu bytes, the shared copies are %zu", s1 - s0, shared);
  mf_operator_destroy(&A2);
  T_CALL(mf_context_device_memory(gc, &s2, NULL));
  T_CHECK(s2 == m0 + (s1 - s0) + shared, "3D P2: %zu bytes in use with the float copy alone, expected %zu", s2,
          m0 + (s1 - s0) + shared);
  mf_operator_destroy(&S);
  T_CALL(mf_context_device_memory(gc, &m3, NULL));
  T_CHECK(m3 == m0, "3D P2: %zu bytes held before the operators, %zu after all were destroyed", m0, m3);
  free(h1);
  free(h2);
  mf_vector_destroy(&x);
  mf_vector_destroy(&y);
  mf_space_destroy(&s);
  mf_mesh_destroy(&mesh);
}

int main(int argc, char **argv)
{
  MPI_Init(&argc, &argv);
  t_need_cuda(); /* 77 where no GPU is usable; a failure under MFREE_TEST_REQUIRE_GPU=1 */
  mf_context cc, gc;
  T_CALL(mf_context_create(MPI_COMM_WORLD, "cpu", &cc));
  T_CALL(mf_context_create(MPI_COMM_WORLD, "cuda", &gc));
  size_t before = 0, after = 0;
  T_CALL(mf_context_device_memory(gc, &before, NULL));

  check_shared(gc);
  for (int dim = 2; dim <= 3; dim++)
    for (int p = 1; p <= 4; p++)
      for (int kind = 0; kind < NKINDS; kind++) check_operator(cc, gc, dim, dim == 2 ? 3 : 2, p, kind);
  for (int dim = 2; dim <= 3; dim++)
    for (int p = 1; p <= 3; p++) check_vectors(cc, gc, dim, dim == 2 ? 3 : 1, p);
  for (int dim = 2; dim <= 3; dim++)
    for (int p = 1; p <= 3; p++)
      for (int assembled = 0; assembled < 2; assembled++) { /* 2D: 16, 8, 4 squares a side for P1, P2, P3 */
        check_poisson(cc, gc, dim, dim == 2 ? 5 - p : (p == 1 ? 3 : 2), p, assembled, 1);
        if (dim == 2 && p > 1) check_poisson(cc, gc, dim, 4, p, assembled, 0); /* 16 a side: the solutions */
      }
  for (int dim = 2; dim <= 3; dim++)
    for (int p = 1; p <= 4; p++)
      for (int kind = 0; kind < ELASTICITY; kind++) check_assembled(cc, gc, dim, dim == 2 ? 3 : 2, p, kind);

  /* refusals on cuda, with the reason */
  mf_mesh mesh;
  mf_space s;
  mf_operator A;
  T_CALL(mf_mesh_create(gc, "square-tris", 2, 1, &mesh));
  EXPECT(mf_space_create(mesh, 5, &s), MF_ERR_UNSUPPORTED,
         "simplex spaces of degree 5 on the cuda backend: its kernels (lib/cuda/simplex.cu) go up to degree 4");
  T_CALL(mf_space_create(mesh, 2, &s));
  EXPECT(mf_operator_create_laplace(s, MF_QUAD_GAUSS_P2, NULL, NULL, &A), MF_ERR_UNSUPPORTED,
         "use the rule of degree 2p = 4 (MF_QUAD_GAUSS or MF_QUAD_GLL), not 6");
  mf_space_destroy(&s);
  mf_mesh_destroy(&mesh);

  T_CALL(mf_context_device_memory(gc, &after, NULL));
  T_CHECK(after == before, "device memory: %zu bytes held before, %zu after everything was destroyed", before, after);
  mf_context_destroy(&gc);
  mf_context_destroy(&cc);
  return t_finish();
}
