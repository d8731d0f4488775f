/* t38_physics -- users' pointwise physics (mf_physics, mf_operator_create_physics) against what is known:
 *   gallery = built-in   the gallery's mass, Laplace (a user g3 with c(x) too) and Helmholtz equal the
 *                        built-in operators (y = A x for a random x, and the diagonals) to 1e-12 relative,
 *                        applied by the built-ins' kernels on the physics' data and by the physics' own
 *                        kernels (MFREE_PHYSICS_BUILTIN=0):
 *                        Q_p 2D p = 1..4 and 3D p = 1..3, every rule, uniform and with hanging nodes, and
 *                        on the sheared cube (J^-1 not diagonal: p = 1, 3, with the vector case);
 *                        P_p 2D/3D p = 1..3 (one rank); simplex elasticity = the built-in one;
 *   components           the vector Laplace and vector mass (3 components, one block stored) equal three
 *                        scalar ones, component by component, on hexes and simplices;
 *   diagonal             the diagonal of a coupled operator (2D/3D elasticity, hanging nodes) equals
 *                        e_i^T A e_i for every DoF (one rank);
 *   patch test           elasticity applied to a linear displacement vanishes at every interior DoF
 *                        (hex, hanging nodes; simplex);
 *   multigrid            the gallery Laplace takes the built-in's iterations (+-1, double and float
 *                        V-cycles, uniform and hanging nodes); 3D elasticity (nu = 0.3) on Q2 and Q4
 *                        hexes at most 25 iterations to 1e-8, flat over three refinements;
 *   residual             F(u) of the gallery's f0/f1 equals A u; Poisson with a source (f0) and non-zero
 *                        boundary values solved through the residual converges at rate p + 1 in L2
 *                        (hex and simplex, 2D/3D);
 *   elasticity           with a body force (f0) converges at rate p + 1 in L2 (mf_vector_l2_error_field) on
 *                        hexes with multigrid (1 and 2 ranks) and on simplices, 2D and 3D, p = 1, 2;
 *   assembled            the CSR matrix of physics operators (1, 2 and dim components; own kernels and the
 *                        built-ins') applied and its diagonal equal the matrix-free ones to 1e-12 (hex with
 *                        hanging nodes on 1 and 2 ranks; simplex);
 *   Neumann, Robin       boundary terms f0, g0 on the faces of tags 2..2 dim (Dirichlet on tag 1): Poisson with
 *                        Neumann or Robin conditions converges at rate p + 1 (2D/3D, p = 1, 2); the Robin
 *                        operator assembled equals its matrix-free product and diagonal;
 *   boundary tags        hex box meshes' faces (tag 1: x = 0) as Dirichlet boundary, Neumann elsewhere:
 *                        -u'' = 2 solved exactly by Q2 (with hanging nodes, 2D and 3D, 1 and 2 ranks);
 *   non-symmetric        an advection term in g1 gives A with (A x, y) != (x, A y), and the physics
 *                        with the same term in g2 is its transpose: (A x, y) = (x, A^T y);
 *   source               the same physics as C source, compiled by the system compiler: equal to the
 *                        functions' operator; a cache miss then a hit and a corrupt entry rebuilt (the
 *                        library's counters); the compiler's messages with file:line; an unwritable cache;
 *   bad input            each refusal with its code and message (components, constants, gallery names,
 *                        NaN from a g-function naming the entry, point, cell and x; what vector spaces
 *                        do not take yet).
 * Usage: t38_physics [cpu|cuda] [quick] (quick: the refusals and a few cases, for valgrind; 1 or more
 * ranks; the simplex and unit-vector parts on one rank). With cuda: the same sources on the cpu and cuda
 * backends (Q_p, 1, dim and 3 components, uniform and with hanging nodes) give the same A x, diagonal and
 * residual to 1e-12, through each of the device's kernels (the vector kernel, the generic one, stored and
 * fused, the diagonal of each); the gallery from its source on the device against its C functions; Neumann
 * terms on the device (the residual) and the refusal of Robin ones; the cache's counters on the device;
 * NVRTC's messages; multigrid on the device, vector-valued too (elasticity: the cpu's iterations +-1). */
#include "mf_test.h"
#include "mf_testing.h"
#include "hex/mf_hex_physics.h"

#include <math.h>
#include <stdarg.h>
#include <stdlib.h>

/* The unit square or cube (2 or 1 levels) with the cells of x > 1/2, y < 1/2 refined once: in 3D hanging faces and
 * edges that meet the boundary faces x = 1 (tag 2) and y = 0 (tag 3), whose nodes there are constrained; in 2D the
 * hanging edges end on the boundary (no constrained node lies on a boundary face there, but the constrained columns
 * of the diagonal reach it). */
static int refine_quadrant(const double *x, int dim, int level, void *user)
{
  (void)dim, (void)level, (void)user;
  return x[0] > 0.5 && x[1] < 0.5;
}
static void faces_mesh(mf_context ctx, int dim, mf_mesh *mesh)
{
  T_CALL(mf_mesh_create(ctx, "cube", dim, dim == 2 ? 2 : 1, mesh));
  T_CALL(mf_mesh_adapt(*mesh, refine_quadrant, NULL));
}

/* t_mesh, but an adapted cube refines the quadrant of refine_quadrant (t_refine_ball refines no cell of the
 * cube at level 1 in 3D: its "adapted" meshes there had no hanging node) */
static void t38_mesh(mf_context ctx, const char *name, int dim, int level, int adapt, mf_mesh *mesh)
{
  if (!adapt || strcmp(name, "cube")) {
    t_mesh(ctx, name, dim, level, adapt, mesh);
    return;
  }
  T_CALL(mf_mesh_create(ctx, name, dim, level, mesh));
  for (int k = 0; k < adapt; k++) T_CALL(mf_mesh_adapt(*mesh, refine_quadrant, NULL));
}

static int nranks = 1;

/* ------------------------------------------------------------------ users' functions */

static double coef(const double *x, int dim, void *user)
{
  (void)user;
  double s = 1.0;
  for (int k = 0; k < dim; k++) s += x[k] * x[k];
  return s;
}

/* (c(x) grad u, grad v) as a user writes it */
static void g3_coef(int dim, int nc, const double *u, const double *du, const double *x, const double *k, double *g3)
{
  (void)nc, (void)u, (void)du, (void)k;
  const double c = coef(x, dim, NULL);
  for (int d = 0; d < dim; d++) g3[d * dim + d] = c;
}

/* advection (beta . grad u) v against its transpose u (beta . grad v), beta = k */
static void g1_adv(int dim, int nc, const double *u, const double *du, const double *x, const double *k, double *g1)
{
  (void)nc, (void)u, (void)du, (void)x;
  for (int e = 0; e < dim; e++) g1[e] = k[e];
}
static void g2_adv(int dim, int nc, const double *u, const double *du, const double *x, const double *k, double *g2)
{
  (void)nc, (void)u, (void)du, (void)x;
  for (int d = 0; d < dim; d++) g2[d] = k[d];
}
static void g3_one(int dim, int nc, const double *u, const double *du, const double *x, const double *k, double *g3)
{
  (void)nc, (void)u, (void)du, (void)x, (void)k;
  for (int d = 0; d < dim; d++) g3[d * dim + d] = 1.0;
}

/* NaN where x_0 > 0.5, at entry 0 */
static void g3_nan(int dim, int nc, const double *u, const double *du, const double *x, const double *k, double *g3)
{
  (void)nc, (void)u, (void)du, (void)k;
  for (int d = 0; d < dim; d++) g3[d * dim + d] = 1.0;
  if (x[0] > 0.5) g3[0] = NAN;
}

/* ------------------------------------------------------------------ helpers */

static double rel_diff(mf_space s, mf_vector a, mf_vector b)
{
  double na = 0.0, nd = 0.0;
  mf_vector d = NULL;
  T_CALL(mf_vector_create(s, &d));
  T_CALL(mf_vector_copy(d, a));
  T_CALL(mf_vector_axpy(d, -1.0, b));
  T_CALL(mf_vector_norm2(a, &na));
  T_CALL(mf_vector_norm2(d, &nd));
  mf_vector_destroy(&d);
  return nd / (na > 0.0 ? na : 1.0);
}

/* F(x) of A's physics (mf_operator_residual) equals B x (Dirichlet forms off), or with residuals B's F(x),
 * to tol */
static void residual_against(mf_operator A, mf_operator B, int residuals, mf_space s, double tol, const char *what)
{
  mf_vector x = NULL, r = NULL, y = NULL;
  T_CALL(mf_vector_create(s, &x));
  T_CALL(mf_vector_create(s, &r));
  T_CALL(mf_vector_create(s, &y));
  T_CALL(mf_vector_set_random(x, residuals ? 19 : 17));
  T_CALL(mf_operator_residual(A, x, r));
  if (residuals) T_CALL(mf_operator_residual(B, x, y));
  else T_CALL(mf_operator_apply(B, x, y));
  const double e = residuals ? rel_diff(s, r, y) : rel_diff(s, y, r);
  T_CHECK(e <= tol, residuals ? "%s: the residuals differ by %.3g (relative)"
                              : "%s: the residual F(x) differs from A x by %.3g (relative)", what, e);
  mf_vector_destroy(&x);
  mf_vector_destroy(&r);
  mf_vector_destroy(&y);
}
static void same_residual(mf_operator A, mf_operator B, mf_space s, double tol, const char *what)
{
  residual_against(A, B, 0, s, tol, what);
}

/* y = A x and diag(A) of two operators on one space agree to tol */
static void same_operator(mf_operator A, mf_operator B, mf_space s, double tol, const char *what)
{
  mf_vector x = NULL, ya = NULL, yb = NULL;
  T_CALL(mf_vector_create(s, &x));
  T_CALL(mf_vector_create(s, &ya));
  T_CALL(mf_vector_create(s, &yb));
  T_CALL(mf_vector_set_random(x, 7));
  T_CALL(mf_operator_apply(A, x, ya));
  T_CALL(mf_operator_apply(B, x, yb));
  double e = rel_diff(s, ya, yb);
  T_CHECK(e <= tol, "%s: A x differs by %.3g (relative)", what, e);
  T_CALL(mf_operator_diagonal(A, ya));
  T_CALL(mf_operator_diagonal(B, yb));
  e = rel_diff(s, ya, yb);
  T_CHECK(e <= tol, "%s: diagonal differs by %.3g (relative)", what, e);
  mf_vector_destroy(&x);
  mf_vector_destroy(&ya);
  mf_vector_destroy(&yb);
}

static const char *quad_name[3] = {"gauss", "gauss-p2", "gll"};

/* The gallery's mass, Laplace, Helmholtz and a user Laplace with c(x) against the built-ins. */
static void gallery_case(mf_context ctx, mf_mesh mesh, int p, mf_quadrature quad, const char *where)
{
  mf_space s = NULL;
  mf_physics ph = NULL;
  mf_operator A = NULL, B = NULL;
  char what[160];
  T_CALL(mf_space_create(mesh, p, &s));
  const double k2[2] = {2.0, 3.0};
  for (int kind = 0; kind < 4; kind++) {
    if (kind == 0) {
      const double c = 1.5;
      T_CALL(mf_physics_create_gallery(ctx, "mass", 1, 1, &c, &ph));
      T_CALL(mf_operator_create_helmholtz(s, quad, 1.5, 0.0, NULL, NULL, &B));
    } else if (kind == 1) {
      T_CALL(mf_physics_create_gallery(ctx, "laplace", 1, 0, NULL, &ph));
      T_CALL(mf_operator_create_laplace(s, quad, NULL, NULL, &B));
    } else if (kind == 2) {
      T_CALL(mf_physics_create_gallery(ctx, "helmholtz", 1, 2, k2, &ph));
      T_CALL(mf_operator_create_helmholtz(s, quad, 2.0, 3.0, NULL, NULL, &B));
    } else {
      T_CALL(mf_physics_create(ctx, 1, &ph));
      T_CALL(mf_physics_set_jacobian(ph, NULL, NULL, NULL, g3_coef));
      T_CALL(mf_operator_create_laplace(s, quad, coef, NULL, &B));
    }
    T_CALL(mf_operator_create_physics(s, ph, quad, &A));
    T_CALL(mf_physics_destroy(&ph)); /* the operator keeps what it needs */
    snprintf(what, sizeof what, "%s p=%d %s, %s", where, p, quad_name[quad],
             kind == 0 ? "mass" : kind == 1 ? "laplace" : kind == 2 ? "helmholtz" : "laplace c(x)");
    same_operator(A, B, s, 1e-12, what);
    if (kind < 3) same_residual(A, B, s, 1e-12, what);
    mf_operator_destroy(&A);
    mf_operator_destroy(&B);
  }
  mf_space_destroy(&s);
}

/* The vector Laplace and vector mass (3 components) against the scalar ones, component by component. */
static void vector_case(mf_context ctx, mf_mesh mesh, int p, const char *where)
{
  mf_space s1 = NULL, s3 = NULL;
  T_CALL(mf_space_create(mesh, p, &s1));
  T_CALL(mf_space_create_components(mesh, p, 3, &s3));
  int n1 = 0, l1 = 0, n3 = 0, l3 = 0;
  T_CALL(mf_space_local_sizes(s1, &n1, &l1));
  T_CALL(mf_space_local_sizes(s3, &n3, &l3));
  T_CHECK(n3 == 3 * n1, "%s: %d owned entries of 3 components, %d scalar", where, n3, n1);
  int64_t g1 = 0, g3 = 0;
  T_CALL(mf_space_num_dofs(s1, &g1));
  T_CALL(mf_space_num_dofs(s3, &g3));
  T_CHECK(g3 == 3 * g1, "%s: %lld DoFs of 3 components, %lld scalar", where, (long long)g3, (long long)g1);
  for (int kind = 0; kind < 2; kind++) {
    mf_physics p1 = NULL, p3 = NULL;
    mf_operator A1 = NULL, A3 = NULL;
    const char *name = kind ? "mass" : "laplace";
    T_CALL(mf_physics_create_gallery(ctx, name, 1, 0, NULL, &p1));
    T_CALL(mf_physics_create_gallery(ctx, name, 3, 0, NULL, &p3));
    T_CALL(mf_operator_create_physics(s1, p1, MF_QUAD_GAUSS, &A1));
    T_CALL(mf_operator_create_physics(s3, p3, MF_QUAD_GAUSS, &A3));
    mf_vector x3 = NULL, y3 = NULL, x1 = NULL, y1 = NULL, d3 = NULL, d1 = NULL;
    T_CALL(mf_vector_create(s3, &x3));
    T_CALL(mf_vector_create(s3, &y3));
    T_CALL(mf_vector_create(s3, &d3));
    T_CALL(mf_vector_create(s1, &x1));
    T_CALL(mf_vector_create(s1, &y1));
    T_CALL(mf_vector_create(s1, &d1));
    T_CALL(mf_vector_set_random(x3, 11));
    T_CALL(mf_operator_apply(A3, x3, y3));
    T_CALL(mf_operator_diagonal(A3, d3));
    T_CALL(mf_operator_diagonal(A1, d1));
    double *a3 = NULL, *b3 = NULL, *a1 = NULL, *dd3 = NULL;
    double worst = 0.0, worstd = 0.0, scale = 0.0;
    for (int c = 0; c < 3; c++) {
      T_CALL(mf_vector_get_array(x3, MF_MEM_HOST, &a3));
      T_CALL(mf_vector_get_array(x1, MF_MEM_HOST, &a1));
      for (int i = 0; i < n1; i++) a1[i] = a3[3 * i + c];
      T_CALL(mf_vector_restore_array(x1, &a1));
      T_CALL(mf_vector_restore_array(x3, &a3));
      T_CALL(mf_operator_apply(A1, x1, y1));
      const double *r1 = NULL, *dg1 = NULL;
      T_CALL(mf_vector_get_array_read(y1, MF_MEM_HOST, &r1));
      T_CALL(mf_vector_get_array(y3, MF_MEM_HOST, &b3));
      T_CALL(mf_vector_get_array_read(d1, MF_MEM_HOST, &dg1));
      T_CALL(mf_vector_get_array(d3, MF_MEM_HOST, &dd3));
      for (int i = 0; i < n1; i++) {
        worst = fmax(worst, fabs(b3[3 * i + c] - r1[i]));
        worstd = fmax(worstd, fabs(dd3[3 * i + c] - dg1[i]));
        scale = fmax(scale, fabs(r1[i]));
      }
      T_CALL(mf_vector_restore_array(d3, &dd3));
      T_CALL(mf_vector_restore_array_read(d1, &dg1));
      T_CALL(mf_vector_restore_array(y3, &b3));
      T_CALL(mf_vector_restore_array_read(y1, &r1));
    }
    T_CHECK(worst <= 1e-12 * scale, "%s p=%d vector %s: component differs by %.3g (scale %.3g)", where, p, name, worst,
            scale);
    T_CHECK(worstd <= 1e-12 * scale, "%s p=%d vector %s: diagonal differs by %.3g", where, p, name, worstd);
    mf_vector_destroy(&x3);
    mf_vector_destroy(&y3);
    mf_vector_destroy(&d3);
    mf_vector_destroy(&x1);
    mf_vector_destroy(&y1);
    mf_vector_destroy(&d1);
    mf_operator_destroy(&A1);
    mf_operator_destroy(&A3);
    mf_physics_destroy(&p1);
    mf_physics_destroy(&p3);
  }
  mf_space_destroy(&s1);
  mf_space_destroy(&s3);
}

/* diag(A) = e_i^T A e_i for every entry (one rank: the local entries are all of them) */
static void diagonal_case(mf_context ctx, mf_mesh mesh, int p, const char *gallery, int nc, const char *where)
{
  mf_space s = NULL;
  mf_physics ph = NULL;
  mf_operator A = NULL;
  const double k[2] = {1.3, 0.7};
  T_CALL(mf_space_create_components(mesh, p, nc, &s));
  T_CALL(mf_physics_create_gallery(ctx, gallery, nc, 2, k, &ph));
  T_CALL(mf_operator_create_physics(s, ph, MF_QUAD_GAUSS, &A));
  T_CALL(mf_operator_set_dirichlet(A, 0));
  mf_vector d = NULL, e = NULL, y = NULL;
  T_CALL(mf_vector_create(s, &d));
  T_CALL(mf_vector_create(s, &e));
  T_CALL(mf_vector_create(s, &y));
  T_CALL(mf_operator_diagonal(A, d));
  int n = 0, nl = 0;
  T_CALL(mf_space_local_sizes(s, &n, &nl));
  const double *dd = NULL;
  T_CALL(mf_vector_get_array_read(d, MF_MEM_HOST, &dd));
  double worst = 0.0, scale = 0.0;
  for (int i = 0; i < n; i++) {
    double *a = NULL;
    T_CALL(mf_vector_set_value(e, 0.0));
    T_CALL(mf_vector_get_array(e, MF_MEM_HOST, &a));
    a[i] = 1.0;
    T_CALL(mf_vector_restore_array(e, &a));
    T_CALL(mf_operator_apply(A, e, y));
    const double *r = NULL;
    T_CALL(mf_vector_get_array_read(y, MF_MEM_HOST, &r));
    worst = fmax(worst, fabs(r[i] - dd[i]));
    scale = fmax(scale, fabs(r[i]));
    T_CALL(mf_vector_restore_array_read(y, &r));
  }
  T_CALL(mf_vector_restore_array_read(d, &dd));
  T_CHECK(worst <= 1e-12 * scale, "%s p=%d %s (%d components): diagonal differs from e_i^T A e_i by %.3g (scale %.3g)",
          where, p, gallery, nc, worst, scale);
  mf_vector_destroy(&d);
  mf_vector_destroy(&e);
  mf_vector_destroy(&y);
  mf_operator_destroy(&A);
  mf_physics_destroy(&ph);
  mf_space_destroy(&s);
}

static double coordinate(const double *x, int dim, void *user)
{
  (void)dim;
  return x[*(const int *)user];
}

/* elasticity on u_c = sum_k M[c][k] x_k + b_c: A u = 0 at every interior DoF (Dirichlet form off; the
 * boundary entries zeroed afterwards) */
static void patch_case(mf_context ctx, mf_mesh mesh, int p, const char *where)
{
  int dim = 0;
  T_CALL(mf_mesh_dim(mesh, &dim));
  mf_space s = NULL;
  mf_physics ph = NULL;
  mf_operator A = NULL;
  const double k[2] = {2.0, 0.8};
  const double M[3][3] = {{0.3, -1.2, 0.5}, {0.7, 0.2, -0.4}, {-0.6, 0.9, 1.1}}, b[3] = {0.25, -0.5, 2.0};
  T_CALL(mf_space_create_components(mesh, p, dim, &s));
  T_CALL(mf_physics_create_gallery(ctx, "elasticity", dim, 2, k, &ph));
  T_CALL(mf_operator_create_physics(s, ph, MF_QUAD_GAUSS, &A));
  T_CALL(mf_operator_set_dirichlet(A, 0));
  mf_vector X[3] = {NULL, NULL, NULL}, u = NULL, y = NULL;
  int kk[3] = {0, 1, 2};
  for (int c = 0; c < dim; c++) {
    T_CALL(mf_vector_create(s, &X[c]));
    T_CALL(mf_vector_interpolate(X[c], coordinate, &kk[c])); /* x_c in every component */
  }
  T_CALL(mf_vector_create(s, &u));
  T_CALL(mf_vector_create(s, &y));
  int n = 0, nl = 0;
  T_CALL(mf_space_local_sizes(s, &n, &nl));
  double *a = NULL;
  T_CALL(mf_vector_get_array(u, MF_MEM_HOST, &a));
  for (int c = 0; c < dim; c++) {
    const double *xc = NULL;
    T_CALL(mf_vector_get_array_read(X[c], MF_MEM_HOST, &xc));
    for (int i = 0; i < n; i++) a[i] += M[i % dim][c] * xc[i] + (c == 0 ? b[i % dim] : 0.0);
    T_CALL(mf_vector_restore_array_read(X[c], &xc));
  }
  T_CALL(mf_vector_restore_array(u, &a));
  T_CALL(mf_operator_apply(A, u, y));
  double ny = 0.0, nyi = 0.0;
  T_CALL(mf_vector_norm2(y, &ny));
  T_CALL(mf_vector_zero_boundary(y));
  T_CALL(mf_vector_norm2(y, &nyi));
  T_CHECK(ny > 1e-6 && nyi <= 1e-11 * ny, "%s p=%d elasticity patch test: interior residual %.3g of %.3g", where, p, nyi,
          ny);
  mf_vector_destroy(&y);
  mf_vector_destroy(&u);
  for (int c = 0; c < dim; c++) mf_vector_destroy(&X[c]);
  mf_operator_destroy(&A);
  mf_physics_destroy(&ph);
  mf_space_destroy(&s);
}

/* advection in g1 (A) and in g2 (T): T = A^T, and A is not symmetric */
static void nonsymmetric_case(mf_context ctx, mf_mesh mesh, int p, const char *where)
{
  int dim = 0;
  T_CALL(mf_mesh_dim(mesh, &dim));
  mf_space s = NULL;
  mf_physics pa = NULL, pt = NULL;
  mf_operator A = NULL, T = NULL;
  const double beta[3] = {1.0, -2.0, 0.5};
  T_CALL(mf_space_create(mesh, p, &s));
  T_CALL(mf_physics_create(ctx, 1, &pa));
  T_CALL(mf_physics_create(ctx, 1, &pt));
  T_CALL(mf_physics_set_constants(pa, 3, beta));
  T_CALL(mf_physics_set_constants(pt, 3, beta));
  T_CALL(mf_physics_set_jacobian(pa, NULL, g1_adv, NULL, g3_one));
  T_CALL(mf_physics_set_jacobian(pt, NULL, NULL, g2_adv, g3_one));
  T_CALL(mf_operator_create_physics(s, pa, MF_QUAD_GAUSS, &A));
  T_CALL(mf_operator_create_physics(s, pt, MF_QUAD_GAUSS, &T));
  mf_vector x = NULL, y = NULL, ax = NULL, ay = NULL, ty = NULL;
  T_CALL(mf_vector_create(s, &x));
  T_CALL(mf_vector_create(s, &y));
  T_CALL(mf_vector_create(s, &ax));
  T_CALL(mf_vector_create(s, &ay));
  T_CALL(mf_vector_create(s, &ty));
  T_CALL(mf_vector_set_random(x, 3));
  T_CALL(mf_vector_set_random(y, 5));
  T_CALL(mf_operator_apply(A, x, ax));
  T_CALL(mf_operator_apply(A, y, ay));
  T_CALL(mf_operator_apply(T, y, ty));
  double axy = 0.0, xay = 0.0, xty = 0.0, nax = 0.0, ny = 0.0;
  T_CALL(mf_vector_dot(ax, y, &axy));
  T_CALL(mf_vector_dot(x, ay, &xay));
  T_CALL(mf_vector_dot(x, ty, &xty));
  T_CALL(mf_vector_norm2(ax, &nax));
  T_CALL(mf_vector_norm2(y, &ny));
  const double scale = nax * ny;
  T_CHECK(fabs(axy - xty) <= 1e-12 * scale, "%s p=%d: (A x, y) = %.15g, (x, A^T y) = %.15g", where, p, axy, xty);
  T_CHECK(fabs(axy - xay) >= 1e-3 * fabs(axy), "%s p=%d: the advection operator came out symmetric: %.15g, %.15g",
          where, p, axy, xay);
  mf_vector_destroy(&x);
  mf_vector_destroy(&y);
  mf_vector_destroy(&ax);
  mf_vector_destroy(&ay);
  mf_vector_destroy(&ty);
  mf_operator_destroy(&A);
  mf_operator_destroy(&T);
  mf_physics_destroy(&pa);
  mf_physics_destroy(&pt);
  mf_space_destroy(&s);
}

/* simplex elasticity from the gallery = the built-in one */
static void simplex_elasticity_case(mf_context ctx, mf_mesh mesh, int p, const char *where)
{
  int dim = 0;
  T_CALL(mf_mesh_dim(mesh, &dim));
  mf_space s = NULL;
  mf_physics ph = NULL;
  mf_operator A = NULL, B = NULL;
  const double k[2] = {1.7, 0.6};
  T_CALL(mf_space_create_components(mesh, p, dim, &s));
  T_CALL(mf_physics_create_gallery(ctx, "elasticity", dim, 2, k, &ph));
  T_CALL(mf_operator_create_physics(s, ph, MF_QUAD_GAUSS, &A));
  T_CALL(mf_operator_create_elasticity(s, 1.7, 0.6, &B));
  char what[96];
  snprintf(what, sizeof what, "%s p=%d elasticity", where, p);
  same_operator(A, B, s, 1e-12, what);
  same_residual(A, B, s, 1e-12, what);
  mf_operator_destroy(&A);
  mf_operator_destroy(&B);
  mf_physics_destroy(&ph);
  mf_space_destroy(&s);
}

/* CG with multigrid on the operator of ph on space: the iterations to 1e-8 from a random right-hand
 * side with zero boundary values */
static int mg_iterations(mf_operator A, mf_space s, mf_precision prec)
{
  mf_pc pc = NULL;
  mf_cg cg = NULL;
  mf_vector b = NULL, x = NULL;
  mf_cg_info info;
  T_CALL(mf_operator_set_dirichlet(A, 1));
  T_CALL(mf_pc_create(A, MF_PC_MULTIGRID, &pc));
  T_CALL(mf_pc_set_multigrid_precision(pc, prec));
  T_CALL(mf_cg_create(A, &cg));
  T_CALL(mf_cg_set_pc(cg, pc));
  T_CALL(mf_cg_set_tolerance(cg, 1e-8, 200));
  T_CALL(mf_vector_create(s, &b));
  T_CALL(mf_vector_create(s, &x));
  T_CALL(mf_vector_set_random(b, 13));
  T_CALL(mf_vector_zero_boundary(b));
  T_CALL(mf_vector_set_value(x, 0.0));
  T_CALL(mf_cg_solve(cg, b, x, &info));
  T_CHECK(info.converged, "multigrid CG did not converge in %d iterations", info.iterations);
  mf_vector_destroy(&b);
  mf_vector_destroy(&x);
  mf_cg_destroy(&cg);
  mf_pc_destroy(&pc);
  return info.iterations;
}

/* multigrid on physics: the gallery Laplace takes the iterations of the built-in (+-1; double and
 * float V-cycles); elasticity (nu = 0.3) on 3 components: at most 25 iterations, flat over levels */
static void multigrid_case(mf_context ctx)
{
  for (int adapt = 0; adapt <= 1; adapt++) {
    mf_mesh mesh = NULL;
    t38_mesh(ctx, "cube", 3, 1, adapt, &mesh);
    mf_space s = NULL;
    mf_physics ph = NULL;
    mf_operator A = NULL, B = NULL;
    T_CALL(mf_space_create(mesh, 3, &s));
    T_CALL(mf_physics_create_gallery(ctx, "laplace", 1, 0, NULL, &ph));
    T_CALL(mf_operator_create_physics(s, ph, MF_QUAD_GAUSS, &A));
    T_CALL(mf_operator_create_laplace(s, MF_QUAD_GAUSS, NULL, NULL, &B));
    for (int prec = 0; prec <= 1; prec++) {
      const int ia = mg_iterations(A, s, (mf_precision)prec), ib = mg_iterations(B, s, (mf_precision)prec);
      T_CHECK(abs(ia - ib) <= 1, "multigrid Laplace%s (%s): physics %d iterations, built-in %d", adapt ? " adapted" : "",
              prec ? "float" : "double", ia, ib);
    }
    mf_operator_destroy(&A);
    mf_operator_destroy(&B);
    mf_physics_destroy(&ph);
    mf_space_destroy(&s);
    mf_mesh_destroy(&mesh);
  }
  const double E = 1.0, nu = 0.3, k[2] = {E * nu / ((1 + nu) * (1 - 2 * nu)), E / (2 * (1 + nu))};
  for (int p = 2; p <= 4; p += 2) {
    int its[3] = {0, 0, 0};
    for (int level = 0; level < 3; level++) {
      mf_mesh mesh = NULL;
      mf_space s = NULL;
      mf_physics ph = NULL;
      mf_operator A = NULL;
      T_CALL(mf_mesh_create(ctx, "cube", 3, p == 2 ? level + 1 : level, &mesh));
      T_CALL(mf_space_create_components(mesh, p, 3, &s));
      T_CALL(mf_physics_create_gallery(ctx, "elasticity", 3, 2, k, &ph));
      T_CALL(mf_operator_create_physics(s, ph, MF_QUAD_GAUSS, &A));
      its[level] = mg_iterations(A, s, MF_PRECISION_DOUBLE);
      T_CHECK(its[level] <= 25, "elasticity Q%d level %d: %d multigrid CG iterations (at most 25)", p, level, its[level]);
      mf_operator_destroy(&A);
      mf_physics_destroy(&ph);
      mf_space_destroy(&s);
      mf_mesh_destroy(&mesh);
    }
    T_CHECK(its[2] <= its[0] + 3, "elasticity Q%d: multigrid iterations grow over refinement: %d %d %d", p, its[0], its[1],
            its[2]);
    if (getenv("T38_VERBOSE")) printf("elasticity Q%d: %d %d %d iterations\n", p, its[0], its[1], its[2]);
  }
}

/* u = exp(x_0) sin(x_1) (+ x_2 in 3D): -div grad u = f = (1 - 1) ... written out below */
static double u_exact(const double *x, int dim, void *user)
{
  (void)user;
  return exp(x[0]) * sin(1.3 * x[1]) + (dim == 3 ? x[2] * x[2] : 0.0);
}
/* f0 = -f with f = -lap u = (1.69 - 1) e^x0 sin(1.3 x1) - 2 [3D] */
static void f0_source(int dim, int nc, const double *u, const double *du, const double *x, const double *k, double *f0)
{
  (void)nc, (void)u, (void)du, (void)k;
  const double f = 0.69 * exp(x[0]) * sin(1.3 * x[1]) - (dim == 3 ? 2.0 : 0.0);
  f0[0] = -f;
}
static void f1_grad(int dim, int nc, const double *u, const double *du, const double *x, const double *k, double *f1)
{
  (void)nc, (void)u, (void)x, (void)k;
  for (int d = 0; d < dim; d++) f1[d] = du[d];
}

/* u = u_exact on the boundary, A d = -F(u) by Jacobi CG to 1e-12, u += d: the L2 error of u into *err;
 * returns whether CG converged */
static int solve_by_residual(mf_operator A, mf_space s, double *err)
{
  mf_vector x = NULL, r = NULL, d = NULL;
  mf_cg cg = NULL;
  mf_cg_info info;
  T_CALL(mf_vector_create(s, &x));
  T_CALL(mf_vector_create(s, &r));
  T_CALL(mf_vector_create(s, &d));
  T_CALL(mf_vector_set_boundary(x, u_exact, NULL));
  T_CALL(mf_operator_residual(A, x, r));
  T_CALL(mf_vector_scale(r, -1.0));
  T_CALL(mf_cg_create(A, &cg));
  T_CALL(mf_cg_set_tolerance(cg, 1e-12, 5000));
  T_CALL(mf_vector_set_value(d, 0.0));
  T_CALL(mf_cg_solve(cg, r, d, &info));
  T_CALL(mf_vector_axpy(x, 1.0, d));
  T_CALL(mf_vector_l2_error(x, u_exact, NULL, err));
  mf_cg_destroy(&cg);
  mf_vector_destroy(&x);
  mf_vector_destroy(&r);
  mf_vector_destroy(&d);
  return info.converged;
}

/* Poisson with a source and non-zero boundary values through the residual: x_g = g on the boundary,
 * A d = -F(x_g) (Dirichlet form: the free DoFs), u = x_g + d; the L2 error at rate p + 1 */
static double poisson_error(mf_context ctx, int dim, int level, int p, int simplex)
{
  mf_mesh mesh = NULL;
  mf_space s = NULL;
  mf_physics ph = NULL;
  mf_operator A = NULL;
  if (simplex) T_CALL(mf_mesh_create(ctx, dim == 2 ? "square-tris" : "cube-tets", dim, level, &mesh));
  else T_CALL(mf_mesh_create(ctx, "sheared", dim, level, &mesh));
  T_CALL(mf_space_create(mesh, p, &s));
  T_CALL(mf_physics_create(ctx, 1, &ph));
  T_CALL(mf_physics_set_residual(ph, f0_source, f1_grad));
  T_CALL(mf_physics_set_jacobian(ph, NULL, NULL, NULL, g3_one));
  T_CALL(mf_operator_create_physics(s, ph, MF_QUAD_GAUSS, &A));
  T_CALL(mf_operator_set_dirichlet(A, 1));
  double err = 0.0;
  T_CHECK(solve_by_residual(A, s, &err), "Poisson %dD p=%d: CG did not converge", dim, p);
  mf_operator_destroy(&A);
  mf_physics_destroy(&ph);
  mf_space_destroy(&s);
  mf_mesh_destroy(&mesh);
  return err;
}

static void convergence_case(mf_context ctx)
{
  for (int simplex = 0; simplex <= 1; simplex++)
    for (int dim = 2; dim <= 3; dim++)
      for (int p = 1; p <= (dim == 2 ? 3 : 2); p++) {
        const int l0 = dim == 2 ? 1 : 0;
        const double e0 = poisson_error(ctx, dim, l0 + 1, p, simplex), e1 = poisson_error(ctx, dim, l0 + 2, p, simplex);
        const double rate = log2(e0 / e1);
        T_CHECK(rate >= p + 0.8 && rate <= p + 1.3, "%s Poisson %dD p=%d with source and boundary values: L2 rate %.3f "
                "(errors %.3g, %.3g), expected in [%g, %g]", simplex ? "simplex" : "hex", dim, p, rate, e0, e1, p + 0.8,
                p + 1.3);
        if (getenv("T38_VERBOSE"))
          printf("%s %dD p=%d: L2 %.3g %.3g rate %.2f\n", simplex ? "simplex" : "hex", dim, p, e0, e1, rate);
      }
}

/* ---- elasticity with a body force: u = a s(x), s = prod_k sin(pi x_k), a = (1, -0.5, 0.25) (zero on the
 * boundary of the unit square or cube), f = -div sigma(u) = -[(lambda + mu) grad(a . grad s) + mu a lap s] */
static const double el_a[3] = {1.0, -0.5, 0.25};
static void el_exact(const double *x, int dim, double *v, void *user)
{
  (void)user;
  double s = 1.0;
  for (int k = 0; k < dim; k++) s *= sin(M_PI * x[k]);
  for (int c = 0; c < dim; c++) v[c] = el_a[c] * s;
}
/* d_i d_k s */
static double el_dds(int dim, const double *x, int i, int k)
{
  double v = M_PI * M_PI;
  for (int j = 0; j < dim; j++)
    if (i == k) v *= sin(M_PI * x[j]) * (j == i ? -1.0 : 1.0);
    else v *= (j == i || j == k) ? cos(M_PI * x[j]) : sin(M_PI * x[j]);
  return v;
}
static void el_f0(int dim, int nc, const double *u, const double *du, const double *x, const double *k, double *f0)
{
  (void)nc, (void)u, (void)du;
  const double lambda = k[0], mu = k[1];
  double lap = 0.0;
  for (int j = 0; j < dim; j++) lap += el_dds(dim, x, j, j);
  for (int i = 0; i < dim; i++) {
    double g = 0.0;
    for (int kk = 0; kk < dim; kk++) g += el_a[kk] * el_dds(dim, x, i, kk);
    f0[i] = (lambda + mu) * g + mu * el_a[i] * lap; /* -f */
  }
}
static void el_f1(int dim, int nc, const double *u, const double *du, const double *x, const double *k, double *f1)
{
  (void)nc, (void)u, (void)x;
  double tr = 0.0;
  for (int d = 0; d < dim; d++) tr += du[d * dim + d];
  for (int c = 0; c < dim; c++)
    for (int d = 0; d < dim; d++) f1[c * dim + d] = k[1] * (du[c * dim + d] + du[d * dim + c]) + (c == d ? k[0] * tr : 0.0);
}
static void el_g3(int dim, int nc, const double *u, const double *du, const double *x, const double *k, double *g3)
{
  (void)u, (void)du, (void)x;
  for (int c = 0; c < nc; c++)
    for (int b = 0; b < nc; b++)
      for (int d = 0; d < dim; d++)
        for (int e = 0; e < dim; e++)
          g3[((c * nc + b) * dim + d) * dim + e] = k[0] * (c == d && b == e) + k[1] * ((c == b && d == e) + (c == e && d == b));
}

/* the L2 error of elasticity (nu = 0.3) with the body force above: hex (multigrid CG) or simplex (Jacobi CG) */
static double elasticity_error(mf_context ctx, int dim, int level, int p, int simplex, int *its)
{
  const double E = 1.0, nu = 0.3, k[2] = {E * nu / ((1 + nu) * (1 - 2 * nu)), E / (2 * (1 + nu))};
  mf_mesh mesh = NULL;
  mf_space s = NULL;
  mf_physics ph = NULL;
  mf_operator A = NULL;
  mf_vector u = NULL, r = NULL;
  mf_cg cg = NULL;
  mf_pc pc = NULL;
  mf_cg_info info;
  if (simplex) T_CALL(mf_mesh_create(ctx, dim == 2 ? "square-tris" : "cube-tets", dim, level, &mesh));
  else T_CALL(mf_mesh_create(ctx, "cube", dim, level, &mesh)); /* the unit square or cube: u = 0 on its boundary */
  T_CALL(mf_space_create_components(mesh, p, dim, &s));
  T_CALL(mf_physics_create(ctx, dim, &ph));
  T_CALL(mf_physics_set_constants(ph, 2, k));
  T_CALL(mf_physics_set_residual(ph, el_f0, el_f1));
  T_CALL(mf_physics_set_jacobian(ph, NULL, NULL, NULL, el_g3));
  T_CALL(mf_operator_create_physics(s, ph, MF_QUAD_GAUSS, &A));
  T_CALL(mf_operator_set_dirichlet(A, 1));
  T_CALL(mf_vector_create(s, &u));
  T_CALL(mf_vector_create(s, &r));
  T_CALL(mf_vector_set_value(u, 0.0));
  T_CALL(mf_operator_residual(A, u, r)); /* -b */
  T_CALL(mf_vector_scale(r, -1.0));
  T_CALL(mf_cg_create(A, &cg));
  if (!simplex) {
    T_CALL(mf_pc_create(A, MF_PC_MULTIGRID, &pc));
    T_CALL(mf_cg_set_pc(cg, pc));
  }
  T_CALL(mf_cg_set_tolerance(cg, 1e-10, 5000));
  T_CALL(mf_cg_solve(cg, r, u, &info));
  T_CHECK(info.converged, "elasticity %dD p=%d: CG did not converge", dim, p);
  *its = info.iterations;
  double err = 0.0;
  T_CALL(mf_vector_l2_error_field(u, el_exact, NULL, &err));
  mf_pc_destroy(&pc);
  mf_cg_destroy(&cg);
  mf_vector_destroy(&u);
  mf_vector_destroy(&r);
  mf_operator_destroy(&A);
  mf_physics_destroy(&ph);
  mf_space_destroy(&s);
  mf_mesh_destroy(&mesh);
  return err;
}

/* elasticity converges at rate p + 1 in L2 on hexes (with multigrid, also on 2 ranks) and simplices;
 * the field's interpolation and boundary values, component by component */
static void elasticity_convergence(mf_context ctx)
{
  for (int simplex = 0; simplex <= 1; simplex++)
    for (int dim = 2; dim <= 3; dim++)
      for (int p = 1; p <= 2; p++) {
        const int l0 = simplex && p == 1 ? 3 : dim == 2 || p == 1 ? 2 : 1; /* out of the pre-asymptotic range */
        int i0 = 0, i1 = 0;
        const double e0 = elasticity_error(ctx, dim, l0, p, simplex, &i0), e1 = elasticity_error(ctx, dim, l0 + 1, p, simplex, &i1);
        const double rate = log2(e0 / e1);
        T_CHECK(rate >= p + 0.8 && rate <= p + 1.3, "%s elasticity %dD p=%d: L2 rate %.3f (errors %.3g, %.3g), expected in "
                "[%g, %g]", simplex ? "simplex" : "hex", dim, p, rate, e0, e1, p + 0.8, p + 1.3);
        if (getenv("T38_VERBOSE"))
          printf("%s elasticity %dD p=%d: L2 %.3g %.3g rate %.2f, CG %d %d\n", simplex ? "simplex" : "hex", dim, p, e0, e1,
                 rate, i0, i1);
      }
  /* interpolation and boundary values of a field */
  mf_mesh mesh = NULL;
  mf_space s = NULL;
  mf_vector v = NULL;
  T_CALL(mf_mesh_create(ctx, "cube", 3, 1, &mesh));
  T_CALL(mf_space_create_components(mesh, 2, 3, &s));
  T_CALL(mf_vector_create(s, &v));
  T_CALL(mf_vector_interpolate_field(v, el_exact, NULL));
  double e = 1.0;
  T_CALL(mf_vector_l2_error_field(v, el_exact, NULL, &e));
  T_CHECK(e < 0.02, "the interpolated field's L2 error %.3g", e);
  T_CALL(mf_vector_set_boundary_field(v, el_exact, NULL));
  double n = 1.0;
  T_CALL(mf_vector_norm2(v, &n));
  T_CHECK(n < 1e-12, "the field vanishes on the boundary, its boundary values do not: %.3g", n);
  EXPECT(mf_vector_interpolate_field(v, NULL, NULL), MF_ERR_NULL, "function f is NULL");
  EXPECT(mf_vector_l2_error_field(v, el_exact, NULL, NULL), MF_ERR_NULL, "output pointer err is NULL");
  mf_vector_destroy(&v);
  mf_space_destroy(&s);
  mf_mesh_destroy(&mesh);
}

/* The assembled matrix of a physics operator (mf_operator_create_assembled) applied to a random vector and
 * its diagonal equal the matrix-free ones to 1e-12 (Dirichlet form on): one component (an advection-
 * diffusion, own kernels; a Laplace through the built-ins), two (Helmholtz) and dim (elasticity). */
static void assembled_case(mf_context ctx, mf_mesh mesh, int p, const char *where)
{
  int dim = 0;
  T_CALL(mf_mesh_dim(mesh, &dim));
  const double beta[3] = {1.0, -2.0, 0.5}, k2[2] = {1.3, 0.7};
  for (int kind = 0; kind < 4; kind++) {
    const int nc = kind < 2 ? 1 : kind == 2 ? 2 : dim;
    mf_space s = NULL;
    mf_physics ph = NULL;
    mf_operator A = NULL, C = NULL;
    T_CALL(mf_space_create_components(mesh, p, nc, &s));
    if (kind == 0) {
      T_CALL(mf_physics_create(ctx, 1, &ph));
      T_CALL(mf_physics_set_constants(ph, 3, beta));
      T_CALL(mf_physics_set_jacobian(ph, NULL, g1_adv, NULL, g3_one));
    } else if (kind == 1) T_CALL(mf_physics_create_gallery(ctx, "laplace", 1, 0, NULL, &ph));
    else T_CALL(mf_physics_create_gallery(ctx, kind == 2 ? "helmholtz" : "elasticity", nc, 2, k2, &ph));
    T_CALL(mf_operator_create_physics(s, ph, MF_QUAD_GAUSS, &A));
    T_CALL(mf_operator_set_dirichlet(A, 1));
    T_CALL(mf_operator_create_assembled(A, &C));
    char what[128];
    snprintf(what, sizeof what, "%s p=%d assembled %s (%d components)", where, p,
             kind == 0 ? "advection" : kind == 1 ? "laplace" : kind == 2 ? "helmholtz" : "elasticity", nc);
    same_operator(A, C, s, 1e-12, what);
    mf_operator_destroy(&C);
    mf_operator_destroy(&A);
    mf_physics_destroy(&ph);
    mf_space_destroy(&s);
  }
}

/* ---- Neumann and Robin terms: -lap u = f with u = exp(x_0) sin(1.3 x_1) (+ x_2^2) (u_exact, f0_source
 * above); Dirichlet on x = 0 (tag 1), on the other faces du/dn = g (Neumann, f0 = -g) or du/dn + alpha u = g
 * (Robin, f0 = alpha u - g, g0 = alpha), alpha = k[0] */
static void grad_exact(const double *x, int dim, double *g)
{
  g[0] = exp(x[0]) * sin(1.3 * x[1]);
  g[1] = 1.3 * exp(x[0]) * cos(1.3 * x[1]);
  if (dim == 3) g[2] = 2.0 * x[2];
}
static void neumann_f0(int dim, int nc, const double *u, const double *x, const double *n, const double *k, double *f0)
{
  (void)nc, (void)u, (void)k;
  double g[3], dn = 0.0;
  grad_exact(x, dim, g);
  for (int d = 0; d < dim; d++) dn += g[d] * n[d];
  f0[0] = -dn;
}
static void robin_f0(int dim, int nc, const double *u, const double *x, const double *n, const double *k, double *f0)
{
  (void)nc;
  double g[3], dn = 0.0;
  grad_exact(x, dim, g);
  for (int d = 0; d < dim; d++) dn += g[d] * n[d];
  f0[0] = k[0] * u[0] - (dn + k[0] * u_exact(x, dim, NULL));
}
static void robin_g0(int dim, int nc, const double *u, const double *x, const double *n, const double *k, double *g0)
{
  (void)dim, (void)nc, (void)u, (void)x, (void)n;
  g0[0] = k[0];
}

static void nan_f0(int dim, int nc, const double *u, const double *x, const double *n, const double *k, double *f0)
{
  (void)dim, (void)nc, (void)u, (void)x, (void)n, (void)k;
  f0[0] = NAN;
}

static void nan_g0(int dim, int nc, const double *u, const double *x, const double *n, const double *k, double *g0)
{
  (void)dim, (void)nc, (void)u, (void)x, (void)n, (void)k;
  g0[0] = NAN;
}

static double boundary_error(mf_context ctx, const char *mesh_name, int dim, int level, int p, int robin,
                             mf_operator *keep, mf_space *skeep)
{
  mf_mesh mesh = NULL;
  mf_space s = NULL;
  mf_physics ph = NULL;
  mf_operator A = NULL;
  const int one_tag = 1;
  const double alpha = 2.5;
  t38_mesh(ctx, mesh_name, dim, level, 0, &mesh);
  T_CALL(mf_space_create(mesh, p, &s));
  T_CALL(mf_space_set_dirichlet_tags(s, 1, &one_tag));
  T_CALL(mf_physics_create(ctx, 1, &ph));
  T_CALL(mf_physics_set_constants(ph, 1, &alpha));
  T_CALL(mf_physics_set_residual(ph, f0_source, f1_grad));
  T_CALL(mf_physics_set_jacobian(ph, NULL, NULL, NULL, g3_one));
  for (int tag = 2; tag <= 2 * dim; tag++)
    T_CALL(mf_physics_set_boundary(ph, tag, robin ? robin_f0 : neumann_f0, robin ? robin_g0 : NULL));
  T_CALL(mf_operator_create_physics(s, ph, MF_QUAD_GAUSS, &A));
  T_CALL(mf_operator_set_dirichlet(A, 1));
  double err = 0.0;
  T_CHECK(solve_by_residual(A, s, &err), "%s %s %dD p=%d: CG did not converge", mesh_name, robin ? "Robin" : "Neumann",
          dim, p);
  if (keep) *keep = A;
  else mf_operator_destroy(&A);
  mf_physics_destroy(&ph);
  if (skeep) *skeep = s;
  else mf_space_destroy(&s);
  mf_mesh_destroy(&mesh);
  return err;
}

/* Neumann and Robin problems converge at rate p + 1 (hexahedra; simplices, their box meshes tagged by side as
 * the hex boxes); the Robin operator's assembled matrix and diagonal equal its matrix-free product and
 * diagonal */
static mf_operator vector_boundary_physics(mf_context ctx, mf_space s, int dim, int nc);
static void boundary_case(mf_context ctx)
{
  for (int simplex = 0; simplex <= 1; simplex++)
    for (int robin = 0; robin <= 1; robin++)
      for (int dim = 2; dim <= 3; dim++)
        for (int p = 1; p <= 2; p++) {
          const char *name = simplex ? (dim == 2 ? "square-tris" : "cube-tets") : "cube";
          const int l0 = dim == 2 ? (simplex ? 3 : 2) : (simplex && p == 1 ? 2 : 1);
          const double e0 = boundary_error(ctx, name, dim, l0, p, robin, NULL, NULL),
                       e1 = boundary_error(ctx, name, dim, l0 + 1, p, robin, NULL, NULL);
          const double rate = log2(e0 / e1);
          T_CHECK(rate >= p + 0.8 && rate <= p + 1.3,
                  "%s %s %dD p=%d: L2 rate %.3f (errors %.3g, %.3g), expected in [%g, %g]", name,
                  robin ? "Robin" : "Neumann", dim, p, rate, e0, e1, p + 0.8, p + 1.3);
          if (getenv("T38_VERBOSE"))
            printf("%s %s %dD p=%d: L2 %.3g %.3g rate %.2f\n", name, robin ? "Robin" : "Neumann", dim, p, e0, e1, rate);
        }
  for (int simplex = 0; simplex <= 1; simplex++)
    for (int dim = 2; dim <= 3; dim++) {
      mf_operator A = NULL, C = NULL;
      mf_space s = NULL;
      boundary_error(ctx, simplex ? (dim == 2 ? "square-tris" : "cube-tets") : "cube", dim, 1, 2, 1, &A, &s);
      T_CALL(mf_operator_create_assembled(A, &C));
      same_operator(A, C, s, 1e-12, simplex ? "Robin assembled (simplices)" : "Robin assembled");
      mf_operator_destroy(&C);
      mf_operator_destroy(&A);
      mf_space_destroy(&s);
    }
  for (int dim = 2; dim <= 3; dim++) { /* a vector Robin term coupling the components, with hanging nodes */
    mf_mesh mesh = NULL;
    mf_space s = NULL;
    mf_operator C = NULL;
    faces_mesh(ctx, dim, &mesh);
    T_CALL(mf_space_create_components(mesh, 2, dim, &s));
    mf_operator A = vector_boundary_physics(ctx, s, dim, dim);
    T_CALL(mf_operator_create_assembled(A, &C));
    same_operator(A, C, s, 1e-12, dim == 2 ? "vector Robin assembled (2D adapted)" : "vector Robin assembled (3D adapted)");
    mf_operator_destroy(&C);
    mf_operator_destroy(&A);
    mf_space_destroy(&s);
    mf_mesh_destroy(&mesh);
  }
}

/* boundary tags on hex meshes: -u'' = 2 on the unit square or cube with u = 0 on x = 0 (tag 1) and natural
 * (Neumann) conditions elsewhere has u = 2 x - x^2, which Q2 holds: the solution is exact to the solver's
 * tolerance; with every face Dirichlet (tags 1..2 dim) it is not */
static double two(const double *x, int dim, void *user)
{
  (void)x, (void)dim, (void)user;
  return 2.0;
}
static double parabola(const double *x, int dim, void *user)
{
  (void)dim, (void)user;
  return 2.0 * x[0] - x[0] * x[0];
}
static void tags_case(mf_context ctx)
{
  for (int dim = 2; dim <= 3; dim++)
    for (int all = 0; all <= 1; all++) {
      mf_mesh mesh = NULL;
      mf_space s = NULL;
      mf_operator A = NULL;
      mf_vector b = NULL, u = NULL;
      mf_cg cg = NULL;
      mf_cg_info info;
      const int faces[6] = {1, 2, 3, 4, 5, 6};
      t38_mesh(ctx, "cube", dim, 2, 1, &mesh); /* hanging nodes too */
      T_CALL(mf_space_create(mesh, 2, &s));
      int nb0 = 0, nb1 = 0, nlocal = 0, nowned = 0;
      T_CALL(mf_space_dirichlet_dofs(s, &nb0, NULL));
      T_CALL(mf_space_set_dirichlet_tags(s, all ? 2 * dim : 1, faces));
      T_CALL(mf_space_dirichlet_dofs(s, &nb1, NULL));
      T_CALL(mf_space_local_sizes(s, &nowned, &nlocal));
      T_CHECK(all ? nb1 == nb0 : nb1 > 0 && nb1 < nb0, "%dD: %d Dirichlet DoFs on every face, %d on tag%s", dim, nb0, nb1,
              all ? "s 1..2 dim" : " 1");
      { /* the list: ascending local indices, each at x = 0 with tag 1 alone */
        int *list = malloc(sizeof(int) * (size_t)(nb1 + 1));
        T_CALL(mf_space_dirichlet_dofs(s, &nb1, list));
        mf_vector X = NULL;
        int kx = 0;
        T_CALL(mf_vector_create(s, &X));
        T_CALL(mf_vector_interpolate(X, coordinate, &kx));
        const double *xv = NULL;
        T_CALL(mf_vector_get_array_read(X, MF_MEM_HOST, &xv));
        for (int i = 0; i < nb1; i++) {
          T_CHECK(list[i] >= 0 && list[i] < nlocal && (i == 0 || list[i] > list[i - 1]), "Dirichlet list entry %d: %d", i,
                  list[i]);
          if (!all && list[i] < nowned) T_CHECK(fabs(xv[list[i]]) < 1e-12, "a Dirichlet DoF of tag 1 at x = %g", xv[list[i]]);
        }
        T_CALL(mf_vector_restore_array_read(X, &xv));
        mf_vector_destroy(&X);
        free(list);
      }
      T_CALL(mf_operator_create_laplace(s, MF_QUAD_GAUSS, NULL, NULL, &A));
      T_CALL(mf_operator_set_dirichlet(A, 1));
      T_CALL(mf_vector_create(s, &b));
      T_CALL(mf_vector_create(s, &u));
      T_CALL(mf_vector_assemble_rhs(b, two, NULL));
      T_CALL(mf_vector_zero_boundary(b));
      T_CALL(mf_cg_create(A, &cg));
      T_CALL(mf_cg_set_tolerance(cg, 1e-12, 2000));
      T_CALL(mf_vector_set_value(u, 0.0));
      T_CALL(mf_cg_solve(cg, b, u, &info));
      double err = 0.0;
      T_CALL(mf_vector_l2_error(u, parabola, NULL, &err));
      if (all) T_CHECK(err > 1e-2, "tags 1..%d (every face Dirichlet): the L2 error %.3g is that of u = 2x - x^2", 2 * dim, err);
      else T_CHECK(err < 1e-9, "%dD, Dirichlet on tag 1 (x = 0) only: u = 2x - x^2 missed by %.3g in L2", dim, err);
      mf_cg_destroy(&cg);
      mf_vector_destroy(&b);
      mf_vector_destroy(&u);
      mf_operator_destroy(&A);
      mf_space_destroy(&s);
      mf_mesh_destroy(&mesh);
    }
}

static void refusals(mf_context ctx)
{
  mf_mesh mesh = NULL;
  mf_space s1 = NULL, s2 = NULL;
  mf_physics ph = NULL;
  mf_operator A = NULL;
  mf_vector v = NULL;
  mf_pc pc = NULL;
  T_CALL(mf_mesh_create(ctx, "cube", 3, 1, &mesh));
  T_CALL(mf_space_create(mesh, 2, &s1));
  T_CALL(mf_space_create_components(mesh, 2, 2, &s2));
  EXPECT(mf_physics_create(ctx, 5, &ph), MF_ERR_ARGUMENT, "field components 5 out of range 1..4");
  EXPECT(mf_physics_create(NULL, 1, &ph), MF_ERR_NULL, "context is NULL");
  EXPECT(mf_physics_create_gallery(ctx, "stokes", 1, 0, NULL, &ph), MF_ERR_ARGUMENT, "gallery physics 'stokes' unknown");
  EXPECT(mf_physics_create_gallery(ctx, "helmholtz", 1, 1, (const double[]){1.0}, &ph), MF_ERR_ARGUMENT,
         "takes k = (a, b): 2 constants");
  EXPECT(mf_physics_create_gallery(ctx, "diffusion", 1, 0, NULL, &ph), MF_ERR_ARGUMENT, "4 (2D) or 9 (3D) constants");
  T_CHECK(ph == NULL, "a refused physics was made");
  T_CALL(mf_physics_create(ctx, 2, &ph));
  int nc = 0;
  T_CALL(mf_physics_components(ph, &nc));
  T_CHECK(nc == 2, "mf_physics_components: %d, made with 2", nc);
  EXPECT(mf_physics_components(ph, NULL), MF_ERR_NULL, "output pointer ncomp is NULL");
  double many[65] = {0};
  EXPECT(mf_physics_set_constants(ph, 65, many), MF_ERR_ARGUMENT, "number of constants 65 out of range 0..64");
  many[3] = NAN;
  EXPECT(mf_physics_set_constants(ph, 4, many), MF_ERR_ARGUMENT, "constant k[3] = nan must be finite");
  EXPECT(mf_operator_create_physics(s2, ph, MF_QUAD_GAUSS, &A), MF_ERR_ARGUMENT, "no g-function");
  T_CALL(mf_physics_set_jacobian(ph, NULL, NULL, NULL, g3_one));
  EXPECT(mf_operator_create_physics(s1, ph, MF_QUAD_GAUSS, &A), MF_ERR_INCOMPATIBLE, "the physics has 2 components, the space 1");
  EXPECT(mf_operator_create_physics(s2, ph, (mf_quadrature)7, &A), MF_ERR_ARGUMENT, "quadrature 7 unknown");
  EXPECT(mf_operator_create_physics(s2, NULL, MF_QUAD_GAUSS, &A), MF_ERR_NULL, "physics is NULL");
  mf_physics_destroy(&ph);
  T_CALL(mf_physics_create_gallery(ctx, "elasticity", 2, 0, NULL, &ph));
  EXPECT(mf_operator_create_physics(s2, ph, MF_QUAD_GAUSS, &A), MF_ERR_INCOMPATIBLE,
         "physics 'elasticity' acts on fields of dim = 3 components, this one has 2");
  mf_physics_destroy(&ph);
  T_CALL(mf_physics_create_gallery(ctx, "diffusion", 1, 4, (const double[]){1, 0, 0, 1}, &ph));
  EXPECT(mf_operator_create_physics(s1, ph, MF_QUAD_GAUSS, &A), MF_ERR_INCOMPATIBLE, "a 4-entry tensor, the space's dim 3 needs 9");
  mf_physics_destroy(&ph);
  /* a g-function's NaN: the entry, the point, its cell and x */
  T_CALL(mf_physics_create(ctx, 1, &ph));
  T_CALL(mf_physics_set_jacobian(ph, NULL, NULL, NULL, g3_nan));
  EXPECT(mf_operator_create_physics(s1, ph, MF_QUAD_GAUSS, &A), MF_ERR_ARGUMENT, "physics 'user': g3[0] = nan at quadrature point");
  T_CHECK(strstr(mf_last_error_message(), "of cell") && strstr(mf_last_error_message(), "x = ("),
          "the NaN message names no cell or point: %s", mf_last_error_message());
  T_CHECK(A == NULL, "a refused operator was made");
  mf_physics_destroy(&ph);
  /* boundary terms: a NaN named with its point (hexahedra, simplices); bad tags */
  {
    mf_mesh sm = NULL;
    mf_space ss = NULL;
    mf_vector r = NULL;
    T_CALL(mf_physics_create(ctx, 1, &ph));
    T_CALL(mf_physics_set_jacobian(ph, NULL, NULL, NULL, g3_one));
    EXPECT(mf_physics_set_boundary(ph, 0, neumann_f0, NULL), MF_ERR_ARGUMENT, "boundary tag 0: tags are positive");
    for (int t = 1; t <= 8; t++) T_CALL(mf_physics_set_boundary(ph, t, neumann_f0, NULL));
    EXPECT(mf_physics_set_boundary(ph, 9, neumann_f0, NULL), MF_ERR_ARGUMENT, "boundary terms on more than 8 tags");
    T_CALL(mf_physics_set_boundary(ph, 2, nan_f0, NULL)); /* replaces tag 2's */
    T_CALL(mf_operator_create_physics(s1, ph, MF_QUAD_GAUSS, &A));
    T_CALL(mf_vector_create(s1, &v));
    T_CALL(mf_vector_create(s1, &r));
    EXPECT(mf_operator_residual(A, v, r), MF_ERR_ARGUMENT, "a boundary term f0 gave a value that is not finite at face point");
    T_CHECK(strstr(mf_last_error_message(), "x = (1,") != NULL, "the boundary NaN names no point on x = 1: %s",
            mf_last_error_message());
    mf_vector_destroy(&r);
    mf_vector_destroy(&v);
    mf_operator_destroy(&A);
    if (nranks == 1) { /* on simplices: the f0's NaN at its facet point (tag 2: x = 1), a g0's at set-up */
      T_CALL(mf_mesh_create(ctx, "cube-tets", 3, 1, &sm));
      T_CALL(mf_space_create(sm, 1, &ss));
      T_CALL(mf_operator_create_physics(ss, ph, MF_QUAD_GAUSS, &A));
      T_CALL(mf_vector_create(ss, &v));
      T_CALL(mf_vector_create(ss, &r));
      EXPECT(mf_operator_residual(A, v, r), MF_ERR_ARGUMENT, "a boundary f0 gave a value that is not finite at facet point");
      T_CHECK(strstr(mf_last_error_message(), "x = (1,") != NULL, "the simplex boundary NaN names no point on x = 1: %s",
              mf_last_error_message());
      mf_vector_destroy(&r);
      mf_vector_destroy(&v);
      mf_operator_destroy(&A);
      T_CALL(mf_physics_set_boundary(ph, 3, neumann_f0, nan_g0));
      EXPECT(mf_operator_create_physics(ss, ph, MF_QUAD_GAUSS, &A), MF_ERR_ARGUMENT,
             "a boundary g0 gave a value that is not finite at facet point");
      T_CHECK(A == NULL && strstr(mf_last_error_message(), "x = (") != NULL, "the simplex g0 NaN: %s",
              mf_last_error_message());
      mf_space_destroy(&ss);
      mf_mesh_destroy(&sm);
    }
    mf_physics_destroy(&ph);
  }
  /* what spaces of several components do not take yet */
  T_CALL(mf_vector_create(s2, &v));
  EXPECT(mf_operator_create_laplace(s2, MF_QUAD_GAUSS, NULL, NULL, &A), MF_ERR_INCOMPATIBLE,
         "act on scalar spaces (this one has 2 components)");
  EXPECT(mf_vector_assemble_rhs(v, coef, NULL), MF_ERR_UNSUPPORTED, "right-hand sides of spaces of 2 components");
  EXPECT(mf_vector_l2_error(v, coef, NULL, &many[0]), MF_ERR_UNSUPPORTED, "L2 errors of spaces of 2 components");
  EXPECT(mf_vector_write_vtu(v, "t38_out", "u"), MF_ERR_UNSUPPORTED, "VTU output of spaces of 2 components");
  T_CALL(mf_physics_create_gallery(ctx, "laplace", 2, 0, NULL, &ph));
  T_CALL(mf_operator_create_physics(s2, ph, MF_QUAD_GAUSS, &A));
  mf_operator_destroy(&A);
  mf_physics_destroy(&ph);
  mf_vector_destroy(&v);
  mf_space_destroy(&s1);
  mf_space_destroy(&s2);
  mf_mesh_destroy(&mesh);
}

/* The Laplace with c(x) = 1 + x_0^2 + ... as source text, for the run-time compilers */
static const char *laplace_source =
    "#include <math.h>\n"
    "/* (c(x) grad u, grad v) */\n"
    "static double coefficient(int dim, const double *x)\n"
    "{\n"
    "  double s = 1.0;\n"
    "  for (int k = 0; k < dim; k++) s += x[k] * x[k];\n"
    "  return s + 0.0 * sin(x[0]);\n"
    "}\n"
    "void stiffness(int dim, int nc, const double *u, const double *du, const double *x, const double *k, double *g3)\n"
    "{\n"
    "  for (int d = 0; d < dim; d++) g3[d * dim + d] = coefficient(dim, x);\n"
    "}\n"
    "static void flux(int dim, int nc, const double *u, const double *du, const double *x, const double *k, double *f1)\n"
    "{\n"
    "  for (int d = 0; d < dim; d++) f1[d] = coefficient(dim, x) * du[d];\n"
    "}\n";

static int counts(mf_context ctx, int which)
{
  int c = 0, l = 0;
  T_CALL(mf_context_jit_counts(ctx, &c, &l));
  return which ? l : c;
}

/* physics as source on the cpu backend: the operator of the compiled source equals the one of the same
 * functions given as pointers; a miss then hits (the library's counters), a corrupt entry rebuilt; the
 * compiler's messages with file:line; the refusals */
static void source_case(mf_context ctx)
{
  char dir[] = "/tmp/t38-cache-XXXXXX";
  T_CHECK(mkdtemp(dir) != NULL, "no temporary folder");
  T_CALL(mf_context_set_cache_dir(ctx, dir));
  mf_mesh mesh = NULL;
  mf_space s = NULL;
  mf_physics ph = NULL, pf = NULL;
  mf_operator A = NULL, B = NULL, C = NULL;
  t38_mesh(ctx, "cube", 2, 2, 1, &mesh);
  T_CALL(mf_space_create(mesh, 3, &s));
  T_CALL(mf_physics_create(ctx, 1, &ph));
  T_CALL(mf_physics_set_source(ph, laplace_source, "g3=stiffness, f1=flux"));
  const int c0 = counts(ctx, 0), l0 = counts(ctx, 1);
  T_CALL(mf_operator_create_physics(s, ph, MF_QUAD_GAUSS, &A));
  T_CHECK(counts(ctx, 0) == c0 + 1 && counts(ctx, 1) == l0, "first operator of a new source: %d compiles, %d loads (expected 1, 0)",
          counts(ctx, 0) - c0, counts(ctx, 1) - l0);
  T_CALL(mf_operator_create_physics(s, ph, MF_QUAD_GAUSS, &C));
  T_CHECK(counts(ctx, 0) == c0 + 1 && counts(ctx, 1) == l0 + 1, "second operator: %d compiles, %d loads (expected 1, 1)",
          counts(ctx, 0) - c0, counts(ctx, 1) - l0);
  T_CALL(mf_physics_create(ctx, 1, &pf));
  T_CALL(mf_physics_set_jacobian(pf, NULL, NULL, NULL, g3_coef));
  T_CALL(mf_operator_create_physics(s, pf, MF_QUAD_GAUSS, &B));
  same_operator(A, B, s, 1e-14, "source against functions");
  same_operator(A, C, s, 0.0, "source: compiled against cached");
  {
    mf_operator L = NULL;
    T_CALL(mf_operator_create_laplace(s, MF_QUAD_GAUSS, coef, NULL, &L));
    same_residual(A, L, s, 1e-12, "source: residual of flux");
    mf_operator_destroy(&L);
  }
  mf_operator_destroy(&C);
  /* a corrupt entry: compiled again, not loaded */
  if (nranks == 1) {
    char cmd[512];
    /* replaced, not written in place: the loaded object stays mapped */
    snprintf(cmd, sizeof cmd, "for f in %s/cpu-*.so; do echo corrupt > $f.new && mv $f.new $f; done", dir);
    T_CHECK(system(cmd) == 0, "could not damage the cache entry");
    const int c1 = counts(ctx, 0), l1 = counts(ctx, 1);
    T_CALL(mf_operator_create_physics(s, ph, MF_QUAD_GAUSS, &C));
    T_CHECK(counts(ctx, 0) == c1 + 1 && counts(ctx, 1) == l1, "corrupt entry: %d compiles, %d loads (expected 1, 0)",
            counts(ctx, 0) - c1, counts(ctx, 1) - l1);
    same_operator(A, C, s, 0.0, "source: rebuilt against first");
    mf_operator_destroy(&C);
  }
  /* a source that does not compile: the compiler's message with the origin and line */
  T_CALL(mf_physics_set_source(ph, "void g(int dim, int nc, const double *u, const double *du, const double *x,\n"
                                   "       const double *k, double *out)\n{\n  out[0] = undeclared_name;\n}\n", "g3=g"));
  EXPECT(mf_operator_create_physics(s, ph, MF_QUAD_GAUSS, &C), MF_ERR_ARGUMENT, "physics source:4:");
  T_CHECK(strstr(mf_last_error_message(), "undeclared_name") != NULL, "the compiler's message is missing: %s",
          mf_last_error_message());
  /* a named function the source lacks */
  T_CALL(mf_physics_set_source(ph, laplace_source, "g3=stiffnes"));
  EXPECT(mf_operator_create_physics(s, ph, MF_QUAD_GAUSS, &C), MF_ERR_ARGUMENT, "stiffnes");
  /* from a file: its name and line in the message */
  if (nranks == 1) {
    char path[600];
    snprintf(path, sizeof path, "%s/bad_physics.c", dir);
    FILE *f = fopen(path, "w");
    T_CHECK(f != NULL, "cannot write %s", path);
    if (f) {
      fprintf(f, "/* line 1 */\nvoid g(int dim, int nc, const double *u, const double *du, const double *x, "
                 "const double *k, double *out)\n{\n  out[0] = 1.0 +;\n}\n");
      fclose(f);
    }
    T_CALL(mf_physics_set_source_file(ph, path, "g3=g"));
    char want[640];
    snprintf(want, sizeof want, "%s:4:", path);
    EXPECT(mf_operator_create_physics(s, ph, MF_QUAD_GAUSS, &C), MF_ERR_ARGUMENT, want);
  }
  EXPECT(mf_physics_set_source_file(ph, "/nonexistent/physics.c", "g3=g"), MF_ERR_IO, "cannot be opened");
  EXPECT(mf_physics_set_source(ph, laplace_source, "h3=stiffness"), MF_ERR_ARGUMENT, "expected entries like g3=name");
  EXPECT(mf_physics_set_source(ph, laplace_source, "g3=2x"), MF_ERR_ARGUMENT, "is not a C name");
  EXPECT(mf_physics_set_source(ph, laplace_source, "g3=a g3=b"), MF_ERR_ARGUMENT, "g3 named twice");
  EXPECT(mf_physics_set_source(ph, laplace_source, " , "), MF_ERR_ARGUMENT, "name no function");
  EXPECT(mf_physics_set_source(ph, NULL, "g3=a"), MF_ERR_NULL, "source is NULL");
  /* a cache folder that cannot be written: compiled all the same, without caching */
  T_CALL(mf_context_set_cache_dir(ctx, "/proc/t38-no-such-cache"));
  T_CALL(mf_physics_set_source(ph, laplace_source, "g3=stiffness"));
  const int c2 = counts(ctx, 0);
  T_CALL(mf_operator_create_physics(s, ph, MF_QUAD_GAUSS, &C));
  T_CHECK(counts(ctx, 0) == c2 + 1, "unwritable cache: %d compiles (expected 1)", counts(ctx, 0) - c2);
  same_operator(A, C, s, 0.0, "source: compiled without cache against first");
  mf_operator_destroy(&C);
  T_CALL(mf_context_set_cache_dir(ctx, NULL));
  EXPECT(mf_context_set_cache_dir(ctx, ""), MF_ERR_ARGUMENT, "is empty or too long");
  mf_operator_destroy(&A);
  mf_operator_destroy(&B);
  mf_physics_destroy(&ph);
  mf_physics_destroy(&pf);
  mf_space_destroy(&s);
  mf_mesh_destroy(&mesh);
  if (nranks == 1) {
    char cmd[512];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    T_CHECK(system(cmd) == 0, "could not remove %s", dir);
  }
}

/* Elasticity (lambda, mu as constants) and a vector Laplace as source: the same text on both backends. */
static const char *vector_source =
    "void elastic(int dim, int nc, const double *u, const double *du, const double *x, const double *k, double *g3)\n"
    "{\n"
    "  for (int c = 0; c < nc; c++)\n"
    "    for (int b = 0; b < nc; b++)\n"
    "      for (int d = 0; d < dim; d++)\n"
    "        for (int e = 0; e < dim; e++)\n"
    "          g3[((c * nc + b) * dim + d) * dim + e] = k[0] * (c == d && b == e) + k[1] * ((c == b && d == e) + (c == e && d == b));\n"
    "}\n"
    "void stress(int dim, int nc, const double *u, const double *du, const double *x, const double *k, double *f1)\n"
    "{\n"
    "  double tr = 0.0;\n"
    "  for (int d = 0; d < dim; d++) tr += du[d * dim + d];\n"
    "  for (int c = 0; c < dim; c++)\n"
    "    for (int d = 0; d < dim; d++) f1[c * dim + d] = k[1] * (du[c * dim + d] + du[d * dim + c]) + (c == d ? k[0] * tr : 0.0);\n"
    "}\n"
    "void vlaplace(int dim, int nc, const double *u, const double *du, const double *x, const double *k, double *g3)\n"
    "{\n"
    "  for (int c = 0; c < nc; c++)\n"
    "    for (int d = 0; d < dim; d++) g3[((c * nc + c) * dim + d) * dim + d] = 1.0 + x[0] * x[1];\n"
    "}\n"
    "void vmass(int dim, int nc, const double *u, const double *du, const double *x, const double *k, double *g0)\n"
    "{\n"
    "  for (int c = 0; c < nc; c++) g0[c * nc + c] = 2.0;\n"
    "}\n"
    "void vlaplacez(int dim, int nc, const double *u, const double *du, const double *x, const double *k, double *g3)\n"
    "{\n"
    "  for (int c = 0; c < nc; c++)\n"
    "    for (int d = 0; d < dim; d++) g3[((c * nc + c) * dim + d) * dim + d] = 1.0 + x[0] * x[1] + 0.5 * x[dim - 1];\n"
    "}\n"
    "void vmassz(int dim, int nc, const double *u, const double *du, const double *x, const double *k, double *g0)\n"
    "{\n"
    "  for (int c = 0; c < nc; c++) g0[c * nc + c] = 2.0 + x[0] - x[dim - 1];\n"
    "}\n";

/* values of a vector on the host (owned entries) */
static double *host_values(mf_space s, mf_vector v)
{
  int n = 0, nl = 0;
  T_CALL(mf_space_local_sizes(s, &n, &nl));
  double *h = calloc((size_t)n + 1, sizeof(double));
  T_CALL(mf_vector_get_values(v, h));
  return h;
}

/* op on the cpu context and the cuda context, from the same source (source NULL: the gallery entry named
 * functions, C functions on the cpu, the gallery's source on cuda): y = A x for the same x, the diagonal,
 * and (if residual) F(x), to tol relative */
static mf_quadrature cuda_quad = MF_QUAD_GAUSS; /* the rule of cpu_cuda_case's operators */
static void cpu_cuda_case(mf_context cc, mf_context gc, const char *mesh_name, int dim, int level, int adapt, int p, int nc,
                          const char *source, const char *functions, const double *k, int nk, int residual, double tol)
{
  mf_mesh mc = NULL, mg = NULL;
  mf_space sc = NULL, sg = NULL;
  mf_physics pc = NULL, pg = NULL;
  mf_operator Ac = NULL, Ag = NULL;
  t38_mesh(cc, mesh_name, dim, level, adapt, &mc);
  t38_mesh(gc, mesh_name, dim, level, adapt, &mg);
  T_CALL(mf_space_create_components(mc, p, nc, &sc));
  T_CALL(mf_space_create_components(mg, p, nc, &sg));
  if (source) {
    T_CALL(mf_physics_create(cc, nc, &pc));
    T_CALL(mf_physics_create(gc, nc, &pg));
    T_CALL(mf_physics_set_source(pc, source, functions));
    T_CALL(mf_physics_set_source(pg, source, functions));
    T_CALL(mf_physics_set_constants(pc, nk, k));
    T_CALL(mf_physics_set_constants(pg, nk, k));
  } else {
    T_CALL(mf_physics_create_gallery(cc, functions, nc, nk, k, &pc));
    T_CALL(mf_physics_create_gallery(gc, functions, nc, nk, k, &pg));
  }
  T_CALL(mf_operator_create_physics(sc, pc, cuda_quad, &Ac));
  T_CALL(mf_operator_create_physics(sg, pg, cuda_quad, &Ag));
  mf_vector xc = NULL, yc = NULL, xg = NULL, yg = NULL;
  T_CALL(mf_vector_create(sc, &xc));
  T_CALL(mf_vector_create(sc, &yc));
  T_CALL(mf_vector_create(sg, &xg));
  T_CALL(mf_vector_create(sg, &yg));
  T_CALL(mf_vector_set_random(xc, 21));
  double *x = host_values(sc, xc);
  T_CALL(mf_vector_set_values(xg, x));
  int n = 0, nl = 0;
  T_CALL(mf_space_local_sizes(sc, &n, &nl));
  for (int what = 0; what < 3; what++) {
    if (what == 0) {
      T_CALL(mf_operator_apply(Ac, xc, yc));
      T_CALL(mf_operator_apply(Ag, xg, yg));
    } else if (what == 1) {
      T_CALL(mf_operator_diagonal(Ac, yc));
      T_CALL(mf_operator_diagonal(Ag, yg));
    } else {
      if (!residual) break;
      T_CALL(mf_operator_residual(Ac, xc, yc));
      T_CALL(mf_operator_residual(Ag, xg, yg));
    }
    double *a = host_values(sc, yc), *b = host_values(sg, yg), num = 0.0, den = 0.0;
    for (int i = 0; i < n; i++) {
      num += (a[i] - b[i]) * (a[i] - b[i]);
      den += a[i] * a[i];
    }
    MPI_Allreduce(MPI_IN_PLACE, &num, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    MPI_Allreduce(MPI_IN_PLACE, &den, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    const double e = sqrt(num / (den > 0 ? den : 1.0));
    T_CHECK(e <= tol, "%s %dD%s p=%d, %d components (%s): cuda %s differs from cpu by %.3g", mesh_name, dim,
            adapt ? " adapted" : "", p, nc, functions, what == 0 ? "A x" : what == 1 ? "diagonal" : "residual", e);
    free(a);
    free(b);
  }
  free(x);
  mf_vector_destroy(&xc);
  mf_vector_destroy(&yc);
  mf_vector_destroy(&xg);
  mf_vector_destroy(&yg);
  mf_operator_destroy(&Ac);
  mf_operator_destroy(&Ag);
  mf_physics_destroy(&pc);
  mf_physics_destroy(&pg);
  mf_space_destroy(&sc);
  mf_space_destroy(&sg);
  mf_mesh_destroy(&mc);
  mf_mesh_destroy(&mg);
}

/* advection (g1 = beta = k) and a diffusion with c(x) (g3), as source: a non-symmetric operator */
static const char *adv_source =
    "void adv(int dim, int nc, const double *u, const double *du, const double *x, const double *k, double *g1)\n"
    "{\n"
    "  for (int e = 0; e < dim; e++) g1[e] = k[e];\n"
    "}\n"
    "void diff(int dim, int nc, const double *u, const double *du, const double *x, const double *k, double *g3)\n"
    "{\n"
    "  for (int d = 0; d < dim; d++) g3[d * dim + d] = 1.0 + x[0] * x[0];\n"
    "}\n";

/* g3 = diag(c, 2c[, 3c]): not a multiple of the identity (a simplex physics keeps its own data) */
static const char *aniso_source =
    "void aniso(int dim, int nc, const double *u, const double *du, const double *x, const double *k, double *g3)\n"
    "{\n"
    "  for (int d = 0; d < dim; d++) g3[d * dim + d] = (d + 1) * (1.0 + x[0] * x[0]);\n"
    "}\n";

/* g3 = 2.5 I: a constant (the fit takes it as the built-in operator's weight) */
static const char *konst_source =
    "void konst(int dim, int nc, const double *u, const double *du, const double *x, const double *k, double *g3)\n"
    "{\n"
    "  for (int d = 0; d < dim; d++) g3[d * dim + d] = 2.5;\n"
    "}\n";

/* ---- boundary terms given as source (mf_physics_set_boundary_source) */

/* robin_f0, robin_g0 and neumann_f0 above, as source text (appended to laplace_source) */
static const char *boundary_source =
    "static double u_ex(int dim, const double *x) { return exp(x[0]) * sin(1.3 * x[1]) + (dim == 3 ? x[2] * x[2] : 0.0); }\n"
    "static double dn_ex(int dim, const double *x, const double *n)\n"
    "{\n"
    "  const double g[3] = {exp(x[0]) * sin(1.3 * x[1]), 1.3 * exp(x[0]) * cos(1.3 * x[1]), dim == 3 ? 2.0 * x[2] : 0.0};\n"
    "  double dn = 0.0;\n"
    "  for (int d = 0; d < dim; d++) dn += g[d] * n[d];\n"
    "  return dn;\n"
    "}\n"
    "void b_robin_f0(int dim, int nc, const double *u, const double *x, const double *n, const double *k, double *f0)\n"
    "{\n"
    "  f0[0] = k[0] * u[0] - (dn_ex(dim, x, n) + k[0] * u_ex(dim, x));\n"
    "}\n"
    "void b_robin_g0(int dim, int nc, const double *u, const double *x, const double *n, const double *k, double *g0)\n"
    "{\n"
    "  g0[0] = k[0];\n"
    "}\n"
    "void b_neumann_f0(int dim, int nc, const double *u, const double *x, const double *n, const double *k, double *f0)\n"
    "{\n"
    "  f0[0] = -dn_ex(dim, x, n);\n"
    "}\n"
    "void b_nan(int dim, int nc, const double *u, const double *x, const double *n, const double *k, double *f0)\n"
    "{\n"
    "  f0[0] = x[0] > 0.5 ? NAN : 0.0;\n"
    "}\n";

/* the Laplace of laplace_source with Robin (robin: else Neumann) terms on tag 2 and on tag 3 in 3D, as C
 * functions (source 0) or as source (1); the constants {0.8} */
static mf_operator boundary_physics(mf_context ctx, mf_space s, int dim, int robin, int source)
{
  static char text[8192];
  snprintf(text, sizeof text, "%s%s", laplace_source, boundary_source);
  mf_physics ph = NULL;
  mf_operator A = NULL;
  T_CALL(mf_physics_create(ctx, 1, &ph));
  T_CALL(mf_physics_set_source(ph, text, "g3=stiffness f1=flux"));
  T_CALL(mf_physics_set_constants(ph, 1, (const double[]){0.8}));
  for (int tag = 2; tag <= (dim == 3 ? 3 : 2); tag++) {
    if (source) T_CALL(mf_physics_set_boundary_source(ph, tag, robin ? "f0=b_robin_f0 g0=b_robin_g0" : "f0=b_neumann_f0"));
    else T_CALL(mf_physics_set_boundary(ph, tag, robin ? robin_f0 : neumann_f0, robin ? robin_g0 : NULL));
  }
  T_CALL(mf_operator_create_physics(s, ph, MF_QUAD_GAUSS, &A));
  mf_physics_destroy(&ph);
  return A;
}

/* Boundary terms as source equal the same terms as C functions (product, diagonal, residual; Neumann and
 * Robin; hexahedra with hanging nodes and simplices, 2D and 3D; quick: 2D alone), and the refusals of their
 * names. */
static void boundary_source_case(mf_context ctx, int quick)
{
  for (int simplex = 0; simplex <= 1; simplex++)
    for (int dim = 2; dim <= (quick ? 2 : 3); dim++) {
      mf_mesh mesh = NULL;
      mf_space s = NULL;
      if (simplex) T_CALL(mf_mesh_create(ctx, dim == 2 ? "square-tris" : "cube-tets", dim, 2, &mesh));
      else faces_mesh(ctx, dim, &mesh);
      T_CALL(mf_space_create(mesh, 2, &s));
      for (int robin = 0; robin <= 1; robin++) {
        char what[96];
        snprintf(what, sizeof what, "%s %dD %s as source", simplex ? "simplex" : "hex", dim, robin ? "Robin" : "Neumann");
        mf_operator A = boundary_physics(ctx, s, dim, robin, 0), B = boundary_physics(ctx, s, dim, robin, 1);
        same_operator(A, B, s, 1e-13, what);
        residual_against(A, B, 1, s, 1e-13, what);
        mf_operator_destroy(&A);
        mf_operator_destroy(&B);
      }
      mf_space_destroy(&s);
      mf_mesh_destroy(&mesh);
    }
  mf_physics ph = NULL;
  T_CALL(mf_physics_create(ctx, 1, &ph));
  EXPECT(mf_physics_set_boundary_source(ph, 2, "f0=b_neumann_f0"), MF_ERR_ARGUMENT, "give the physics its source first");
  T_CALL(mf_physics_set_source(ph, laplace_source, "g3=stiffness"));
  EXPECT(mf_physics_set_boundary_source(ph, 2, "f1=b_neumann_f0"), MF_ERR_ARGUMENT, "f0 or g0");
  EXPECT(mf_physics_set_boundary_source(ph, 2, "f0=9x"), MF_ERR_ARGUMENT, "is not a C name");
  EXPECT(mf_physics_set_boundary_source(ph, 2, ""), MF_ERR_ARGUMENT, "name no function");
  EXPECT(mf_physics_set_boundary_source(ph, 0, "f0=b"), MF_ERR_ARGUMENT, "tags are positive");
  EXPECT(mf_physics_set_boundary_source(ph, 2, NULL), MF_ERR_NULL, "functions is NULL");
  /* functions given since replace the source: the terms named in it are refused, not dropped */
  T_CALL(mf_physics_set_boundary_source(ph, 2, "f0=b_neumann_f0"));
  T_CALL(mf_physics_set_jacobian(ph, NULL, NULL, NULL, g3_one));
  {
    mf_mesh mesh = NULL;
    mf_space s = NULL;
    mf_operator A = NULL;
    T_CALL(mf_mesh_create(ctx, "cube", 2, 1, &mesh));
    T_CALL(mf_space_create(mesh, 1, &s));
    EXPECT(mf_operator_create_physics(s, ph, MF_QUAD_GAUSS, &A), MF_ERR_ARGUMENT,
           "the boundary terms of tag 2 are named in a source the physics no longer has");
    T_CALL(mf_physics_set_boundary(ph, 2, neumann_f0, NULL)); /* given again: made */
    T_CALL(mf_operator_create_physics(s, ph, MF_QUAD_GAUSS, &A));
    mf_operator_destroy(&A);
    mf_space_destroy(&s);
    mf_mesh_destroy(&mesh);
  }
  mf_physics_destroy(&ph);
}

/* A x, diag(A) and F(x) of Ac (cpu) and Ag (cuda) on the same x agree to tol (relative 2-norms) */
static void cpu_cuda_same(mf_operator Ac, mf_space sc, mf_operator Ag, mf_space sg, double tol, const char *what)
{
  int n = 0, nl = 0;
  T_CALL(mf_space_local_sizes(sc, &n, &nl));
  mf_vector xc = NULL, xg = NULL, yc = NULL, yg = NULL;
  T_CALL(mf_vector_create(sc, &xc));
  T_CALL(mf_vector_create(sc, &yc));
  T_CALL(mf_vector_create(sg, &xg));
  T_CALL(mf_vector_create(sg, &yg));
  T_CALL(mf_vector_set_random(xc, 23));
  double *hx = host_values(sc, xc);
  T_CALL(mf_vector_set_values(xg, hx));
  free(hx);
  static const char *const step[3] = {"product", "diagonal", "residual"};
  for (int k = 0; k < 3; k++) {
    if (k == 0) {
      T_CALL(mf_operator_apply(Ac, xc, yc));
      T_CALL(mf_operator_apply(Ag, xg, yg));
    } else if (k == 1) {
      T_CALL(mf_operator_diagonal(Ac, yc));
      T_CALL(mf_operator_diagonal(Ag, yg));
    } else {
      T_CALL(mf_operator_residual(Ac, xc, yc));
      T_CALL(mf_operator_residual(Ag, xg, yg));
    }
    double *hc = host_values(sc, yc), *hg = host_values(sg, yg), num = 0.0, den = 0.0;
    for (int i = 0; i < n; i++) num += (hc[i] - hg[i]) * (hc[i] - hg[i]), den += hc[i] * hc[i];
    T_CHECK(den > 0.0 && sqrt(num / den) <= tol, "%s: the cuda %s differs from the cpu's by %.3g", what, step[k],
            sqrt(num / (den > 0.0 ? den : 1.0)));
    free(hc);
    free(hg);
  }
  mf_vector_destroy(&xc), mf_vector_destroy(&xg), mf_vector_destroy(&yc), mf_vector_destroy(&yg);
}

/* A Laplace on mesh (P2) with a boundary f0 that is not finite (tag 2): its residual is refused with the message
 * expect (which kernel ran) */
static void boundary_nan_refused(mf_context gc, mf_mesh mesh, const char *expect)
{
  static char text[8192];
  snprintf(text, sizeof text, "%s%s", laplace_source, boundary_source);
  mf_space s = NULL;
  mf_physics ph = NULL;
  mf_operator A = NULL;
  mf_vector u = NULL, r = NULL;
  T_CALL(mf_space_create(mesh, 2, &s));
  T_CALL(mf_physics_create(gc, 1, &ph));
  T_CALL(mf_physics_set_source(ph, text, "g3=stiffness"));
  T_CALL(mf_physics_set_boundary_source(ph, 2, "f0=b_nan"));
  T_CALL(mf_operator_create_physics(s, ph, MF_QUAD_GAUSS, &A));
  T_CALL(mf_vector_create(s, &u));
  T_CALL(mf_vector_create(s, &r));
  EXPECT(mf_operator_residual(A, u, r), MF_ERR_ARGUMENT, expect);
  mf_vector_destroy(&u), mf_vector_destroy(&r);
  mf_operator_destroy(&A);
  mf_physics_destroy(&ph);
  mf_space_destroy(&s);
}

/* Boundary terms as source on the device (simplices: the facets' kernel; hexahedra: the faces' kernel)
 * against the cpu's C functions: Neumann and Robin, triangles, tetrahedra, hexahedra with hanging
 * nodes; a boundary f0 that is not finite named with its point */
static void cuda_boundary_source_case(mf_context cc, mf_context gc)
{
  for (int m = 0; m < 4; m++)
    for (int robin = 0; robin <= 1; robin++) {
      const int dim = m == 0 ? 2 : 3;
      mf_mesh mc = NULL, mg = NULL;
      mf_space sc = NULL, sg = NULL;
      if (m < 2) {
        T_CALL(mf_mesh_create(cc, dim == 2 ? "square-tris" : "cube-tets", dim, 2, &mc));
        T_CALL(mf_mesh_create(gc, dim == 2 ? "square-tris" : "cube-tets", dim, 2, &mg));
      } else {
        t38_mesh(cc, "cube", 3, 1, m == 3, &mc);
        t38_mesh(gc, "cube", 3, 1, m == 3, &mg);
      }
      for (int p = 1; p <= 2; p++) {
        T_CALL(mf_space_create(mc, p, &sc));
        T_CALL(mf_space_create(mg, p, &sg));
        mf_operator Ac = boundary_physics(cc, sc, dim, robin, 0), Ag = boundary_physics(gc, sg, dim, robin, 1);
        char what[96];
        snprintf(what, sizeof what, "%s as source, %s p=%d", robin ? "Robin" : "Neumann",
                 m == 0 ? "triangles" : m == 1 ? "tetrahedra" : m == 2 ? "hexahedra" : "hexahedra (adapted)", p);
        if (getenv("T38_VERBOSE")) printf("%s\n", what), fflush(stdout);
        cpu_cuda_same(Ac, sc, Ag, sg, 1e-12, what);
        mf_operator_destroy(&Ac), mf_operator_destroy(&Ag);
        mf_space_destroy(&sc), mf_space_destroy(&sg);
      }
      mf_mesh_destroy(&mc), mf_mesh_destroy(&mg);
    }
  /* NaN from a boundary f0 on the device: refused, naming the facet point and x */
  mf_mesh mesh = NULL;
  T_CALL(mf_mesh_create(gc, "cube-tets", 3, 1, &mesh));
  boundary_nan_refused(gc, mesh, "(the facets' kernel on the device)");
  mf_mesh_destroy(&mesh);
}

/* a vector Robin term: g0 couples the components (not symmetric), f0 depends on u, x and the normal */
static const char *vector_boundary_source =
    "void b_vrobin_f0(int dim, int nc, const double *u, const double *x, const double *n, const double *k, double *f0)\n"
    "{\n"
    "  for (int c = 0; c < nc; c++) f0[c] = u[c] * (1.0 + n[c % dim]) - x[c % dim] * x[(c + 1) % dim];\n"
    "}\n"
    "void b_vrobin_g0(int dim, int nc, const double *u, const double *x, const double *n, const double *k, double *g0)\n"
    "{\n"
    "  for (int c = 0; c < nc; c++)\n"
    "    for (int b = 0; b < nc; b++) g0[c * nc + b] = c == b ? 1.0 + n[c % dim] * n[c % dim] : 0.1 * x[1] * (c + 2 * b);\n"
    "}\n";

/* the vector Laplace of vector_source with the vector Robin term on tag 2 and, in 3D, tag 3 (tags 1..2d: the box's faces) */
static mf_operator vector_boundary_physics(mf_context ctx, mf_space s, int dim, int nc)
{
  static char text[8192];
  snprintf(text, sizeof text, "%s%s", vector_source, vector_boundary_source);
  mf_physics ph = NULL;
  mf_operator A = NULL;
  T_CALL(mf_physics_create(ctx, nc, &ph));
  T_CALL(mf_physics_set_source(ph, text, "g3=vlaplace"));
  for (int tag = 2; tag <= (dim == 3 ? 3 : 2); tag++)
    T_CALL(mf_physics_set_boundary_source(ph, tag, "f0=b_vrobin_f0 g0=b_vrobin_g0"));
  T_CALL(mf_operator_create_physics(s, ph, MF_QUAD_GAUSS, &A));
  mf_physics_destroy(&ph);
  return A;
}

/* Hexahedra on cuda: the faces' kernel on the device (every boundary term given as source, mfree_faces)
 * against the cpu and against the host's faces on the same context (the same terms as C functions):
 * product, diagonal and residual, Neumann and Robin, 2D and 3D with hanging nodes (on the faces with terms in 3D),
 * p = 1..3; a vector
 * Robin term coupling the components; a boundary f0 that is not finite named with its face point. */
static void cuda_hex_faces_case(mf_context cc, mf_context gc)
{
  for (int dim = 2; dim <= 3; dim++) {
    mf_mesh mc = NULL, mg = NULL;
    faces_mesh(cc, dim, &mc);
    faces_mesh(gc, dim, &mg);
    for (int p = 1; p <= 3; p++) {
      mf_space sc = NULL, sg = NULL;
      char what[128];
      T_CALL(mf_space_create(mc, p, &sc));
      T_CALL(mf_space_create(mg, p, &sg));
      for (int robin = 0; robin <= 1; robin++) {
        mf_operator Ac = boundary_physics(cc, sc, dim, robin, 0), Ag = boundary_physics(gc, sg, dim, robin, 1),
                    Ah = boundary_physics(gc, sg, dim, robin, 0);
        snprintf(what, sizeof what, "hex %dD adapted p=%d %s: the faces on the device", dim, p, robin ? "Robin" : "Neumann");
        T_CHECK(mf_hexphys(Ag)->faces_device && !mf_hexphys(Ah)->faces_device,
                "%s: the faces' path (source: the device %d, C functions: the host %d)", what, mf_hexphys(Ag)->faces_device,
                !mf_hexphys(Ah)->faces_device);
        if (getenv("T38_VERBOSE")) printf("%s\n", what), fflush(stdout);
        cpu_cuda_same(Ac, sc, Ag, sg, 1e-12, what);
        snprintf(what, sizeof what, "hex %dD adapted p=%d %s: the faces on the host of cuda", dim, p, robin ? "Robin" : "Neumann");
        cpu_cuda_same(Ac, sc, Ah, sg, 1e-12, what);
        mf_operator_destroy(&Ac), mf_operator_destroy(&Ag), mf_operator_destroy(&Ah);
      }
      mf_space_destroy(&sc), mf_space_destroy(&sg);
      T_CALL(mf_space_create_components(mc, p, dim, &sc));
      T_CALL(mf_space_create_components(mg, p, dim, &sg));
      mf_operator Vc = vector_boundary_physics(cc, sc, dim, dim), Vg = vector_boundary_physics(gc, sg, dim, dim);
      snprintf(what, sizeof what, "hex %dD adapted p=%d, %d components: a vector Robin term on the device", dim, p, dim);
      T_CHECK(mf_hexphys(Vg)->faces_device, "%s: not on the device", what);
      if (getenv("T38_VERBOSE")) printf("%s\n", what), fflush(stdout);
      cpu_cuda_same(Vc, sc, Vg, sg, 1e-12, what);
      mf_operator_destroy(&Vc), mf_operator_destroy(&Vg);
      mf_space_destroy(&sc), mf_space_destroy(&sg);
    }
    mf_mesh_destroy(&mc), mf_mesh_destroy(&mg);
  }
  mf_mesh mesh = NULL;
  t38_mesh(gc, "cube", 3, 1, 0, &mesh);
  boundary_nan_refused(gc, mesh, "(the faces' kernel on the device)");
  mf_mesh_destroy(&mesh);
}

/* ---- the float copy of a physics' own kernels (multigrid's float V-cycle) */

/* A's float copy against A on a random x: the products agree to float rounding (1e-5 relative, 2-norm)
 * and not to 1e-12 (the copy works on float data). */
static void float_copy_check(mf_operator A, mf_space s, const char *what)
{
  mf_operator Af = NULL;
  mf_vector x = NULL, y = NULL, xf = NULL, yf = NULL, yd = NULL, d = NULL;
  T_CALL(mf_operator_create_single(A, &Af));
  T_CALL(mf_vector_create(s, &x));
  T_CALL(mf_vector_create(s, &y));
  T_CALL(mf_vector_create(s, &yd));
  T_CALL(mf_vector_create(s, &d));
  T_CALL(mf_vector_create_prec(s, MF_PRECISION_FLOAT, &xf));
  T_CALL(mf_vector_create_prec(s, MF_PRECISION_FLOAT, &yf));
  T_CALL(mf_vector_set_random(x, 17));
  T_CALL(mf_vector_convert(xf, x)); /* the same x in both */
  T_CALL(mf_vector_convert(x, xf));
  T_CALL(mf_operator_apply(A, x, y));
  T_CALL(mf_operator_apply(Af, xf, yf));
  T_CALL(mf_vector_convert(yd, yf));
  double scale = 0.0, diff = 0.0;
  T_CALL(mf_vector_norm2(y, &scale));
  T_CALL(mf_vector_axpy(yd, -1.0, y));
  T_CALL(mf_vector_norm2(yd, &diff));
  T_CHECK(scale > 0.0 && diff <= 1e-5 * scale && diff > 1e-12 * scale,
          "%s: the float copy's product - the double one's = %.3e (the product's norm %.3e)", what, diff, scale);
  mf_vector *vs[] = {&x, &y, &xf, &yf, &yd, &d};
  for (int k = 0; k < 6; k++) mf_vector_destroy(vs[k]);
  mf_operator_destroy(&Af);
}

/* The physics of source/functions (constants k) on mesh at degree p, nc components, against its float copy */
static void float_copy_one(mf_context ctx, mf_mesh mesh, int p, int nc, const char *source, const char *functions,
                           const double *k, int nk, const char *where)
{
  mf_space s = NULL;
  mf_physics ph = NULL;
  mf_operator A = NULL;
  T_CALL(mf_space_create_components(mesh, p, nc, &s));
  T_CALL(mf_physics_create(ctx, nc, &ph));
  T_CALL(mf_physics_set_source(ph, source, functions));
  if (nk) T_CALL(mf_physics_set_constants(ph, nk, k));
  T_CALL(mf_operator_create_physics(s, ph, MF_QUAD_GAUSS, &A));
  char what[160];
  snprintf(what, sizeof what, "%s p=%d %s", where, p, functions);
  float_copy_check(A, s, what);
  mf_operator_destroy(&A);
  mf_physics_destroy(&ph);
  mf_space_destroy(&s);
}

/* Elasticity (nu = 0.3 through kel) with multigrid on mesh, P/Q p: the float V-cycle takes the double one's
 * iterations (+-1) */
static void float_vcycle_elasticity(mf_context ctx, mf_mesh mesh, int p, const double *kel, const char *where)
{
  int dim = 0;
  T_CALL(mf_mesh_dim(mesh, &dim));
  mf_space s = NULL;
  mf_physics ph = NULL;
  mf_operator A = NULL;
  T_CALL(mf_space_create_components(mesh, p, dim, &s));
  T_CALL(mf_physics_create(ctx, dim, &ph));
  T_CALL(mf_physics_set_source(ph, vector_source, "g3=elastic f1=stress"));
  T_CALL(mf_physics_set_constants(ph, 2, kel));
  T_CALL(mf_operator_create_physics(s, ph, MF_QUAD_GAUSS, &A));
  const int it = mg_iterations(A, s, MF_PRECISION_DOUBLE), itf = mg_iterations(A, s, MF_PRECISION_FLOAT);
  T_CHECK(it <= 25 && abs(itf - it) <= 1, "%s p=%d elasticity: multigrid %d iterations, %d with the float V-cycle", where,
          p, it, itf);
  if (getenv("T38_VERBOSE")) printf("%s p=%d elasticity: %d iterations, %d in float\n", where, p, it, itf);
  mf_operator_destroy(&A);
  mf_physics_destroy(&ph);
  mf_space_destroy(&s);
}

/* The float copies of the physics' own kernels: on hexahedra (hex; with hanging nodes) the stored data in
 * the full and the one-block symmetric layouts, the vector kernel and the fused operator; on simplices
 * (simplex; one rank) P1 and P2; each against the double operator, and elasticity's float V-cycle. */
static void float_copy_case(mf_context ctx, int hex, int simplex)
{
  const double kel[2] = {0.5769230769230769, 0.3846153846153846}; /* E = 1, nu = 0.3 */
  for (int dim = 2; hex && dim <= 3; dim++) {
    mf_mesh mesh = NULL;
    t38_mesh(ctx, "cube", dim, dim == 2 ? 2 : 1, 1, &mesh);
    const char *where = dim == 2 ? "float copy, hex 2D adapted" : "float copy, hex 3D adapted";
    for (int p = 2; p <= 2; p++) { /* one degree: every variant is a compile of its own on the device */
      float_copy_one(ctx, mesh, p, dim, vector_source, "g3=elastic f1=stress", kel, 2, where); /* fused on cuda */
      setenv("MFREE_PHYSICS_FUSED", "0", 1);
      float_copy_one(ctx, mesh, p, dim, vector_source, "g3=elastic f1=stress", kel, 2, where); /* full layout */
      unsetenv("MFREE_PHYSICS_FUSED");
      float_copy_one(ctx, mesh, p, 3, vector_source, "g3=vlaplace g0=vmass", NULL, 0, where); /* vector kernel on cuda */
      setenv("MFREE_PHYSICS_VEC", "0", 1);
      float_copy_one(ctx, mesh, p, 3, vector_source, "g3=vlaplace g0=vmass", NULL, 0, where); /* one block, symmetric */
      unsetenv("MFREE_PHYSICS_VEC");
      setenv("MFREE_PHYSICS_BUILTIN", "0", 1);
      float_copy_one(ctx, mesh, p, 1, aniso_source, "g3=aniso", NULL, 0, where);
      unsetenv("MFREE_PHYSICS_BUILTIN");
    }
    mf_mesh_destroy(&mesh);
  }
  if (hex) {
    mf_mesh mesh = NULL;
    T_CALL(mf_mesh_create(ctx, "cube", 3, 1, &mesh));
    /* the vector kernel's thread design on cuda (no hanging nodes, p = 1) */
    float_copy_one(ctx, mesh, 1, 3, vector_source, "g3=vlaplace g0=vmass", NULL, 0, "float copy, hex 3D uniform");
    float_vcycle_elasticity(ctx, mesh, 2, kel, "hex 3D");
    mf_mesh_destroy(&mesh);
  }
  for (int dim = 2; simplex && dim <= 3; dim++) {
    mf_mesh base = NULL, mesh = NULL;
    T_CALL(mf_mesh_create(ctx, dim == 2 ? "square-tris" : "cube-tets", dim, 1, &base));
    T_CALL(mf_mesh_refine(base, dim == 2 ? 2 : 1, &mesh));
    const char *where = dim == 2 ? "float copy, simplex 2D" : "float copy, simplex 3D";
    for (int p = 1; p <= 2; p++) {
      float_copy_one(ctx, mesh, p, dim, vector_source, "g3=elastic f1=stress", kel, 2, where);
      float_copy_one(ctx, mesh, p, 3, vector_source, "g3=vlaplace g0=vmass", NULL, 0, where);
      float_copy_one(ctx, mesh, p, 1, aniso_source, "g3=aniso", NULL, 0, where);
    }
    float_vcycle_elasticity(ctx, mesh, dim == 2 ? 2 : 1, kel, where);
    mf_mesh_destroy(&mesh);
    mf_mesh_destroy(&base);
  }
}

/* device bytes held by the physics operator of source/functions on s */
static size_t physics_bytes(mf_context gc, mf_space s, const char *source, const char *functions, mf_operator *A)
{
  mf_physics ph = NULL;
  size_t m0 = 0, m1 = 0;
  T_CALL(mf_physics_create(gc, 1, &ph));
  T_CALL(mf_physics_set_source(ph, source, functions));
  T_CALL(mf_context_device_memory(gc, &m0, NULL));
  T_CALL(mf_operator_create_physics(s, ph, MF_QUAD_GAUSS, A));
  T_CALL(mf_context_device_memory(gc, &m1, NULL));
  mf_physics_destroy(&ph);
  return m1 - m0;
}

/* The assembled matrix of a physics on the device, from its own kernels (mfree_assemble), applied to a
 * random vector and its diagonal equal the matrix-free ones to 1e-12, Dirichlet form on: one component
 * (non-symmetric, the generic kernels), three (the vector kernel's shape) and dim (elasticity, fused and
 * stored); uniform and with hanging nodes. */
static void cuda_assembled_case(mf_context gc)
{
  const double beta[3] = {1.0, -2.0, 0.5}, kel[2] = {1.3, 0.7};
  for (int dim = 2; dim <= 3; dim++)
    for (int adapt = 0; adapt <= 1; adapt++)
      for (int kind = 0; kind < 4; kind++) {
        const int nc = kind == 0 ? 1 : kind == 1 ? 3 : dim;
        mf_mesh mesh = NULL;
        mf_space s = NULL;
        mf_physics ph = NULL;
        mf_operator A = NULL, C = NULL;
        t38_mesh(gc, "cube", dim, dim == 2 ? 2 : 1, adapt, &mesh);
        T_CALL(mf_space_create_components(mesh, 2, nc, &s));
        T_CALL(mf_physics_create(gc, nc, &ph));
        T_CALL(mf_physics_set_source(ph, kind == 0 ? adv_source : vector_source,
                                     kind == 0 ? "g1=adv g3=diff" : kind == 1 ? "g3=vlaplace g0=vmass" : "g3=elastic"));
        T_CALL(mf_physics_set_constants(ph, kind == 0 ? 3 : 2, kind == 0 ? beta : kel));
        if (kind == 3) setenv("MFREE_PHYSICS_FUSED", "0", 1); /* elasticity stored (81 entries per point) */
        T_CALL(mf_operator_create_physics(s, ph, MF_QUAD_GAUSS, &A));
        unsetenv("MFREE_PHYSICS_FUSED");
        T_CALL(mf_operator_set_dirichlet(A, 1));
        T_CALL(mf_operator_create_assembled(A, &C));
        char what[128];
        snprintf(what, sizeof what, "cuda dim %d adapt %d assembled %s", dim, adapt,
                 kind == 0 ? "advection" : kind == 1 ? "vector laplace" : kind == 2 ? "elasticity (fused)" : "elasticity (stored)");
        same_operator(A, C, s, 1e-12, what);
        mf_operator_destroy(&C);
        mf_operator_destroy(&A);
        mf_physics_destroy(&ph);
        mf_space_destroy(&s);
        mf_mesh_destroy(&mesh);
      }
  /* simplices on several ranks (each rank's cells): Laplace with c(x) as a physics, through the built-in fit
   * and through its own data (MFREE_PHYSICS_BUILTIN=0), against the built-in operator with the callback */
  for (int dim = 2; dim <= 3 && nranks > 1; dim++) {
    mf_mesh mesh = NULL;
    mf_space s = NULL;
    mf_operator A = NULL, B = NULL, D = NULL;
    T_CALL(mf_mesh_create(gc, dim == 2 ? "square-tris" : "cube-tets", dim, dim == 2 ? 3 : 2, &mesh));
    T_CALL(mf_space_create(mesh, 2, &s));
    T_CALL(mf_operator_create_laplace(s, MF_QUAD_GAUSS, coef, NULL, &B));
    physics_bytes(gc, s, laplace_source, "g3=stiffness", &A);
    setenv("MFREE_PHYSICS_BUILTIN", "0", 1);
    physics_bytes(gc, s, laplace_source, "g3=stiffness", &D);
    unsetenv("MFREE_PHYSICS_BUILTIN");
    char what[128];
    snprintf(what, sizeof what, "cuda simplex %dD P2 on %d ranks: the fitted physics against the built-in", dim, nranks);
    same_operator(A, B, s, 1e-12, what);
    snprintf(what, sizeof what, "cuda simplex %dD P2 on %d ranks: the physics' own data against the built-in", dim, nranks);
    same_operator(D, B, s, 1e-12, what);
    mf_operator_destroy(&A);
    mf_operator_destroy(&B);
    mf_operator_destroy(&D);
    mf_space_destroy(&s);
    mf_mesh_destroy(&mesh);
  }
  /* simplices (simplex_phys_jit.cuh's assembly): P2, the same three kinds; one rank */
  for (int dim = 2; dim <= 3 && nranks == 1; dim++)
    for (int kind = 0; kind < 3; kind++) {
      const int nc = kind == 0 ? 1 : kind == 1 ? 3 : dim;
      mf_mesh mesh = NULL;
      mf_space s = NULL;
      mf_physics ph = NULL;
      mf_operator A = NULL, C = NULL;
      T_CALL(mf_mesh_create(gc, dim == 2 ? "square-tris" : "cube-tets", dim, dim == 2 ? 3 : 1, &mesh));
      T_CALL(mf_space_create_components(mesh, 2, nc, &s));
      T_CALL(mf_physics_create(gc, nc, &ph));
      T_CALL(mf_physics_set_source(ph, kind == 0 ? adv_source : vector_source,
                                   kind == 0 ? "g1=adv g3=diff" : kind == 1 ? "g3=vlaplace g0=vmass" : "g3=elastic"));
      T_CALL(mf_physics_set_constants(ph, kind == 0 ? 3 : 2, kind == 0 ? beta : kel));
      T_CALL(mf_operator_create_physics(s, ph, MF_QUAD_GAUSS, &A));
      T_CALL(mf_operator_set_dirichlet(A, 1));
      T_CALL(mf_operator_create_assembled(A, &C));
      char what[128];
      snprintf(what, sizeof what, "cuda simplex %dD P2 assembled %s", dim,
               kind == 0 ? "advection" : kind == 1 ? "vector laplace" : "elasticity");
      same_operator(A, C, s, 1e-12, what);
      mf_operator_destroy(&C);
      mf_operator_destroy(&A);
      mf_physics_destroy(&ph);
      mf_space_destroy(&s);
      mf_mesh_destroy(&mesh);
    }
}

/* The built-in fit on simplices (g3 = c(x) I alone): the same operator, diagonal and assembled matrix as
 * the cpu's physics, and fewer device bytes than the physics' own data (MFREE_PHYSICS_BUILTIN=0) by at
 * least the full layout's dim^2 - 1 values per point, apart from the cells' matrices K_e that a varying c adds
 * for the gradient form (n1 (n1 + 1) / 2 values per cell, more than the points' at 2D P4: speed for memory); an anisotropic g3 keeps its own data (as many bytes
 * both ways) and the cpu's values. */
static void cuda_simplex_fit_case(mf_context cc, mf_context gc)
{
  for (int dim = 2; dim <= 3; dim++)
    for (int p = 1; p <= 4; p++)
      for (int konst = 0; konst <= 1; konst++) {
        const char *m = dim == 2 ? "square-tris" : "cube-tets", *src = konst ? konst_source : laplace_source,
                   *fn = konst ? "g3=konst" : "g3=stiffness";
        const int level = dim == 2 ? 3 : 1;
        cpu_cuda_case(cc, gc, m, dim, level, 0, p, 1, src, fn, NULL, 0, 0, 1e-12);
        if (!konst) cpu_cuda_case(cc, gc, m, dim, level, 0, p, 1, aniso_source, "g3=aniso", NULL, 0, 0, 1e-12);
        mf_mesh mesh = NULL;
        mf_space s = NULL;
        mf_operator A = NULL, B = NULL, C = NULL, D = NULL;
        T_CALL(mf_mesh_create(gc, m, dim, level, &mesh));
        T_CALL(mf_space_create(mesh, p, &s));
        const size_t fit = physics_bytes(gc, s, src, fn, &A);
        const size_t aniso = physics_bytes(gc, s, aniso_source, "g3=aniso", &C);
        setenv("MFREE_PHYSICS_BUILTIN", "0", 1);
        const size_t own = physics_bytes(gc, s, src, fn, &B);
        const size_t aniso_own = physics_bytes(gc, s, aniso_source, "g3=aniso", &D);
        unsetenv("MFREE_PHYSICS_BUILTIN");
        int64_t ncells = 0;
        T_CALL(mf_mesh_num_cells(mesh, &ncells));
        const size_t full = (size_t)ncells * 8u * (size_t)(dim * dim - 1); /* per point, at least one point per cell */
        const int n1 = dim == 2 ? p * (p + 1) / 2 : p * (p + 1) * (p + 2) / 6; /* nodes of P_{p-1} */
        const size_t kbytes = konst ? 0 : (size_t)ncells * 8u * (size_t)(n1 * (n1 + 1) / 2);
        T_CHECK(fit - kbytes + full <= own,
                "%s P%d: the fitted physics holds %zu device bytes (%zu of them K_e), its own data %zu (at least %zu less "
                "expected)", m, p, fit, kbytes, own, full);
        T_CHECK(aniso == aniso_own, "%s P%d: an anisotropic g3 holds %zu bytes, %zu with its own data", m, p, aniso, aniso_own);
        char what[96];
        snprintf(what, sizeof what, "%s P%d fitted physics%s against its own data", m, p, konst ? " (constant)" : "");
        same_operator(A, B, s, 1e-12, what);
        mf_operator Ma = NULL, Mb = NULL;
        T_CALL(mf_operator_create_assembled(A, &Ma));
        T_CALL(mf_operator_create_assembled(B, &Mb));
        snprintf(what, sizeof what, "%s P%d assembled fitted physics%s against its own data", m, p, konst ? " (constant)" : "");
        same_operator(Ma, Mb, s, 1e-12, what);
        mf_operator_destroy(&Ma);
        mf_operator_destroy(&Mb);
        mf_operator_destroy(&A);
        mf_operator_destroy(&B);
        mf_operator_destroy(&C);
        mf_operator_destroy(&D);
        mf_space_destroy(&s);
        mf_mesh_destroy(&mesh);
      }
}

/* The float V-cycle on simplex physics takes the iterations of the double V-cycle (+-1), P2 in 2D and 3D on
 * nested meshes: a fitted physics (g3 = c(x) I, the built-ins' float copies), the physics' own data
 * (MFREE_PHYSICS_BUILTIN=0), an anisotropic g3 and the cpu backend's physics (their own float copies). */
static void cuda_simplex_float_case(mf_context cc, mf_context gc)
{
  for (int dim = 2; dim <= 3; dim++)
    for (int b = 0; b < 2; b++) {
      mf_context ctx = b ? gc : cc;
      mf_mesh base = NULL, mesh = NULL;
      mf_space s = NULL;
      mf_physics ph = NULL;
      mf_operator A = NULL, O = NULL, C = NULL;
      T_CALL(mf_mesh_create(ctx, dim == 2 ? "square-tris" : "cube-tets", dim, 1, &base));
      T_CALL(mf_mesh_refine(base, dim == 2 ? 3 : 2, &mesh));
      T_CALL(mf_space_create(mesh, 2, &s));
      const int tag = 1;
      T_CALL(mf_space_set_dirichlet_tags(s, 1, &tag));
      T_CALL(mf_physics_create(ctx, 1, &ph));
      T_CALL(mf_physics_set_source(ph, laplace_source, "g3=stiffness"));
      T_CALL(mf_operator_create_physics(s, ph, MF_QUAD_GAUSS, &A));
      if (b) {
        const int it = mg_iterations(A, s, MF_PRECISION_DOUBLE), itf = mg_iterations(A, s, MF_PRECISION_FLOAT);
        T_CHECK(it <= 12 && abs(itf - it) <= 1, "cuda %dD P2 fitted physics: multigrid %d iterations, %d in float", dim,
                it, itf);
        setenv("MFREE_PHYSICS_BUILTIN", "0", 1);
        T_CALL(mf_operator_create_physics(s, ph, MF_QUAD_GAUSS, &O));
        unsetenv("MFREE_PHYSICS_BUILTIN");
        mf_physics_destroy(&ph);
        T_CALL(mf_physics_create(ctx, 1, &ph));
        T_CALL(mf_physics_set_source(ph, aniso_source, "g3=aniso"));
        T_CALL(mf_operator_create_physics(s, ph, MF_QUAD_GAUSS, &C));
      } else O = A, A = NULL;
      mf_operator ops[2] = {O, C};
      for (int k = 0; k < 2; k++) {
        if (!ops[k]) continue;
        const int it = mg_iterations(ops[k], s, MF_PRECISION_DOUBLE), itf = mg_iterations(ops[k], s, MF_PRECISION_FLOAT);
        T_CHECK(it <= 12 && abs(itf - it) <= 1, "%s %dD P2 physics (%s): multigrid %d iterations, %d in float",
                b ? "cuda" : "cpu", dim, k ? "anisotropic" : "its own data", it, itf);
      }
      mf_operator_destroy(&A), mf_operator_destroy(&O), mf_operator_destroy(&C);
      mf_physics_destroy(&ph);
      mf_space_destroy(&s);
      mf_mesh_destroy(&mesh);
      mf_mesh_destroy(&base);
    }
}

/* Simplices on the cuda backend: the same source through the device's simplex kernels
 * (simplex_phys_jit.cuh) as through the cpu's, and the refusals there. */
static void cuda_simplex_case(mf_context cc, mf_context gc)
{
  const double kel[2] = {1.3, 0.7};
  cuda_simplex_fit_case(cc, gc);
  cuda_simplex_float_case(cc, gc);
  float_copy_case(gc, 0, 1);
  cuda_boundary_source_case(cc, gc);
  /* simplices: the same source through the device's simplex kernels (simplex_phys_jit.cuh) */
  for (int dim = 2; dim <= 3; dim++)
    for (int p = 1; p <= 3; p++) {
      const char *m = dim == 2 ? "square-tris" : "cube-tets";
      const int level = dim == 2 ? 3 : 1;
      cpu_cuda_case(cc, gc, m, dim, level, 0, p, 1, laplace_source, "g3=stiffness f1=flux", NULL, 0, 1, 1e-12);
      cpu_cuda_case(cc, gc, m, dim, level, 0, p, dim, vector_source, "g3=elastic f1=stress", kel, 2, 1, 1e-12);
      cpu_cuda_case(cc, gc, m, dim, level, 0, p, 3, vector_source, "g3=vlaplace g0=vmass", NULL, 0, 0, 1e-12);
    }
  { /* on simplices too: functions without source cannot run on the device; nor can a non-finite g */
    mf_mesh mesh = NULL;
    mf_space s = NULL;
    mf_physics ph = NULL;
    mf_operator A = NULL;
    T_CALL(mf_mesh_create(gc, "cube-tets", 3, 1, &mesh));
    T_CALL(mf_space_create(mesh, 2, &s));
    T_CALL(mf_physics_create(gc, 1, &ph));
    T_CALL(mf_physics_set_jacobian(ph, NULL, NULL, NULL, g3_one));
    EXPECT(mf_operator_create_physics(s, ph, MF_QUAD_GAUSS, &A), MF_ERR_UNSUPPORTED, "runs from its source");
    T_CALL(mf_physics_set_source(ph, "void g(int dim, int nc, const double *u, const double *du, const double *x,\n"
                                     "       const double *k, double *out)\n{\n  out[0] = x[0] > 0.5 ? 0.0 / 0.0 : 1.0;\n}\n",
                                 "g3=g"));
    EXPECT(mf_operator_create_physics(s, ph, MF_QUAD_GAUSS, &A), MF_ERR_ARGUMENT, "not finite at quadrature point");
    T_CHECK(A == NULL, "a refused simplex physics left an operator");
    mf_physics_destroy(&ph);
    mf_space_destroy(&s);
    mf_mesh_destroy(&mesh);
  }
}

/* The vector kernel's slab design (cell_slab.cuh: 3D, 2..6 nodes per direction, no hanging nodes; chosen
 * here by MFREE_PHYSICS_VCOL_SLAB) and thread design (cell_thread.cuh: Q1 and Q2) against the cpu on a
 * sheared mesh of 64 cells (G's entries all distinct; coefficients varying in every direction; 192 cell
 * components, so groups across the warps' and blocks' edges): p = 1..4, the three rules, mass, Laplace and
 * both (the slab design; its x derivative kept and plane by plane); the thread design at p = 1, 2 (pairs of
 * stored entries in a load where a cell holds an even count, at two, three and four points; one entry per
 * load; 32 threads per block); the slab design on one warp per block, with its default launches at the
 * collocated Laplacian (a register cap at p = 2, 3, 256 threads at p = 4; asked for by
 * MFREE_PHYSICS_VCOL_SLAB=128 it runs without the cap) and the mass at q = p + 2 (p = 2, 3), where the
 * stored entries are staged in shared memory (at p = 3 of the Laplacian too), the stage asked for at two
 * more shapes, and at p = 5 (the collocated Laplacian, the mass at q = p + 2); the column design on the same shape, and the float copies at p = 1..4. In two halves that
 * ctest runs side by side (most of the time is the compiles): half 1 the slab design and its float copies,
 * half 2 the rest; 0 both (without the six-point cases of half 2 and 4); 3 (argument "stage") the staged cases alone (stage_cases; a quick device check); 4
 * (argument "six", also in half 2) the column design's default launch at six points per direction (p = 4 with
 * q = p + 2, p = 5 collocated). Each case says when it is done (a run stopped by its time limit shows how far
 * it came). */
static int half_stage_only = 0; /* t38 cuda thread stage: stage_cases alone */
static void progress(const char *fmt, ...)
{
  static int started = 0;
  static double t0 = 0.0;
  if (!started) t0 = MPI_Wtime(), started = 1;
  printf("%7.1f s  ", MPI_Wtime() - t0);
  va_list ap;
  va_start(ap, fmt);
  vprintf(fmt, ap);
  va_end(ap);
  printf("\n");
  fflush(stdout);
}

/* The slab design's stored entries staged in shared memory: by default at the mass with q = p + 2 (p = 2, 3)
 * and the collocated Laplacian at p = 3 (with the default launches above); asked for (with the slab design
 * asked for too, as neither is the default there) at the Laplacian with q = p + 2 and at mass and Laplace
 * together with Gauss points. */
static void stage_cases(mf_context cc, mf_context gc)
{
  cuda_quad = MF_QUAD_GAUSS_P2;
  for (int p = 2; p <= 3; p++) {
    cpu_cuda_case(cc, gc, "sheared", 3, 2, 0, p, 3, vector_source, "g0=vmassz", NULL, 0, 0, 1e-12);
    progress("slab design, p = %d, gauss+2, g0=vmassz, the default launch (staged)", p);
  }
  if (half_stage_only) { /* alone: the collocated Laplacian's default at p = 3 too */
    cuda_quad = MF_QUAD_GLL;
    cpu_cuda_case(cc, gc, "sheared", 3, 2, 0, 3, 3, vector_source, "g3=vlaplacez", NULL, 0, 0, 1e-12);
    progress("slab design, p = 3, gll, g3=vlaplacez, the default launch (staged)");
  }
  setenv("MFREE_PHYSICS_VCOL_QSTAGE", "1", 1);
  setenv("MFREE_PHYSICS_VCOL_SLAB", "128", 1);
  cuda_quad = MF_QUAD_GAUSS_P2;
  cpu_cuda_case(cc, gc, "sheared", 3, 2, 0, 3, 3, vector_source, "g3=vlaplacez", NULL, 0, 0, 1e-12);
  cuda_quad = MF_QUAD_GAUSS;
  cpu_cuda_case(cc, gc, "sheared", 3, 2, 0, 2, 3, vector_source, "g3=vlaplacez g0=vmassz", NULL, 0, 0, 1e-12);
  unsetenv("MFREE_PHYSICS_VCOL_SLAB");
  unsetenv("MFREE_PHYSICS_VCOL_QSTAGE");
  progress("slab design, staged: p = 3 gauss+2 g3=vlaplacez, p = 2 gauss g3=vlaplacez g0=vmassz");
}

static void cuda_thread_case(mf_context cc, mf_context gc, int half)
{
  char dir[] = "/tmp/t38-thread-cache-XXXXXX";
  T_CHECK(mkdtemp(dir) != NULL, "no temporary folder");
  T_CALL(mf_context_set_cache_dir(gc, dir));
  T_CALL(mf_context_set_cache_dir(cc, dir));
  static const mf_quadrature rules[3] = {MF_QUAD_GAUSS, MF_QUAD_GAUSS_P2, MF_QUAD_GLL};
  static const char *const fns[3] = {"g3=vlaplacez g0=vmassz", "g3=vlaplacez", "g0=vmassz"};
  static const char *const rname[3] = {"gauss", "gauss+2", "gll"};
  progress("start (half %d)", half);
  if (half == 3) {
    half_stage_only = 1;
    stage_cases(cc, gc);
  }
  if (half == 4 || half == 2) { /* the column design's default at six points per direction (physics_vcol.cu: one
                                 * component at a time, two blocks per SM): bp4's shape at p = 4, bp6's at p = 5 */
    cuda_quad = MF_QUAD_GAUSS_P2;
    cpu_cuda_case(cc, gc, "sheared", 3, 2, 0, 4, 3, vector_source, "g3=vlaplacez", NULL, 0, 0, 1e-12);
    cuda_quad = MF_QUAD_GLL;
    cpu_cuda_case(cc, gc, "sheared", 3, 2, 0, 5, 3, vector_source, "g3=vlaplacez", NULL, 0, 0, 1e-12);
    progress("column design, six points: p = 4 gauss+2 and p = 5 gll, g3=vlaplacez, the default launch");
    if (half == 4) goto cleanup;
  }
  for (int design = half == 2 ? 1 : 0; design < (half == 1 ? 1 : half == 3 ? 0 : 2); design++) { /* 0: slab, 1: thread */
    setenv("MFREE_PHYSICS_VCOL_SLAB", design ? "0" : "128", 1);
    for (int p = 1; p <= (design ? 2 : 4); p++)
      for (int r = 0; r < 3; r++)
        for (int f = 0; f < 3; f++) {
          if ((r == 2 || p >= 2) && f != 1 && !(p >= 2 && r == 0 && f == 0) && !(p >= 3 && r == 1 && f == 2))
            continue; /* 11 shapes of the 18 at p = 1, 2; 5 of 9 at p = 3, 4 */
          cuda_quad = rules[r];
          cpu_cuda_case(cc, gc, "sheared", 3, 2, 0, p, 3, vector_source, fns[f], NULL, 0, 0, 1e-12);
          progress("%s design, p = %d, %s, %s", design ? "thread" : "slab", p, rname[r], fns[f]);
          if (!design && p >= 3 && f != 2) { /* the x derivative kept (the slab design plane by plane by default) */
            setenv("MFREE_PHYSICS_VCOL_XPLANE", "0", 1);
            cpu_cuda_case(cc, gc, "sheared", 3, 2, 0, p, 3, vector_source, fns[f], NULL, 0, 0, 1e-12);
            unsetenv("MFREE_PHYSICS_VCOL_XPLANE");
            progress("slab design, p = %d, %s, %s, x derivative kept", p, rname[r], fns[f]);
          }
        }
    unsetenv("MFREE_PHYSICS_VCOL_SLAB");
  }
  if (half != 2 && half != 3) {
    cuda_quad = MF_QUAD_GLL; /* the defaults at the collocated Laplacian: 128 threads held to four blocks per SM at
                              * p = 2, 3, 256 at 4 */
    for (int p = 2; p <= 4; p++) {
      cpu_cuda_case(cc, gc, "sheared", 3, 2, 0, p, 3, vector_source, "g3=vlaplacez", NULL, 0, 0, 1e-12);
      progress("slab design, p = %d, gll, g3=vlaplacez, the default launch", p);
    }
    stage_cases(cc, gc);
    cuda_quad = MF_QUAD_GLL;
    /* six nodes per direction (p = 5; only where asked for): the Laplacian collocated, the mass at q = p + 2 */
    setenv("MFREE_PHYSICS_VCOL_SLAB", "128", 1);
    cpu_cuda_case(cc, gc, "sheared", 3, 2, 0, 5, 3, vector_source, "g3=vlaplacez", NULL, 0, 0, 1e-12);
    cuda_quad = MF_QUAD_GAUSS_P2;
    cpu_cuda_case(cc, gc, "sheared", 3, 2, 0, 5, 3, vector_source, "g0=vmassz", NULL, 0, 0, 1e-12);
    unsetenv("MFREE_PHYSICS_VCOL_SLAB");
    progress("slab design, p = 5, gll g3=vlaplacez and gauss+2 g0=vmassz");
  }
  cuda_quad = MF_QUAD_GAUSS_P2;
  static const char *const envs[4][4] = {{"MFREE_PHYSICS_VCOL_VLOAD", "0", "MFREE_PHYSICS_VCOL_SLAB", "0"},
                                         {"MFREE_PHYSICS_VCOL_THREAD", "32", "MFREE_PHYSICS_VCOL_SLAB", "0"},
                                         {"MFREE_PHYSICS_VCOL_THREAD", "0", "MFREE_PHYSICS_VCOL_SLAB", "0"},
                                         {"MFREE_PHYSICS_VCOL_SLAB", "32", "MFREE_PHYSICS_VCOL_XPLANE", "0"}};
  for (int e = half == 1 ? 3 : half == 3 ? 4 : 0; e < (half == 2 ? 3 : 4); e++) {
    setenv(envs[e][0], envs[e][1], 1);
    setenv(envs[e][2], envs[e][3], 1);
    cpu_cuda_case(cc, gc, "sheared", 3, 2, 0, 1, 3, vector_source, "g3=vlaplacez", NULL, 0, 0, 1e-12);
    if (e == 3) cpu_cuda_case(cc, gc, "sheared", 3, 2, 0, 3, 3, vector_source, "g3=vlaplacez", NULL, 0, 0, 1e-12);
    progress("p = 1%s, gauss+2, g3=vlaplacez, %s=%s %s=%s", e == 3 ? " and 3" : "", envs[e][0], envs[e][1], envs[e][2],
             envs[e][3]);
    unsetenv(envs[e][0]);
    unsetenv(envs[e][2]);
  }
  cuda_quad = MF_QUAD_GAUSS;
  mf_mesh mesh = NULL;
  T_CALL(mf_mesh_create(gc, "sheared", 3, 2, &mesh));
  if (half != 2 && half != 3) {
    setenv("MFREE_PHYSICS_VCOL_SLAB", "128", 1); /* the slab design's float copies */
    float_copy_one(gc, mesh, 1, 3, vector_source, "g3=vlaplacez g0=vmassz", NULL, 0, "float copy, hex 3D sheared");
    float_copy_one(gc, mesh, 2, 3, vector_source, "g3=vlaplacez", NULL, 0, "float copy, hex 3D sheared");
    float_copy_one(gc, mesh, 3, 3, vector_source, "g3=vlaplacez g0=vmassz", NULL, 0, "float copy, hex 3D sheared");
    float_copy_one(gc, mesh, 4, 3, vector_source, "g3=vlaplacez", NULL, 0, "float copy, hex 3D sheared");
    progress("slab design, float copies p = 1..4");
  }
  if (half != 1 && half != 3) {
    setenv("MFREE_PHYSICS_VCOL_SLAB", "0", 1); /* the thread design's float copies */
    float_copy_one(gc, mesh, 1, 3, vector_source, "g3=vlaplacez g0=vmassz", NULL, 0, "float copy, hex 3D sheared");
    float_copy_one(gc, mesh, 2, 3, vector_source, "g3=vlaplacez", NULL, 0, "float copy, hex 3D sheared");
    progress("thread design, float copies p = 1, 2");
  }
  unsetenv("MFREE_PHYSICS_VCOL_SLAB");
  mf_mesh_destroy(&mesh);
cleanup:;
  char cmd[128];
  snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
  T_CHECK(system(cmd) == 0, "could not remove %s", dir);
}

/* The cuda backend: the same source as on the cpu (NVRTC against the system compiler) gives the same
 * operator, diagonal and residual; the cache's miss, in-process hit and on-disk hit (a new context); the
 * compile error's message; multigrid; the refusals. In three parts (ctest runs each within its time): 1
 * the hex cases of every degree and kernel form in 2D (and the float copies), 3 those in 3D (and the faces'
 * kernel), 2 the rest; 0 all. */
static int cuda_part = 0;
static void cuda_case(mf_context gc)
{
  mf_context cc = NULL;
  T_CALL(mf_context_create(MPI_COMM_WORLD, "cpu", &cc));
  char dir[] = "/tmp/t38-cuda-cache-XXXXXX";
  T_CHECK(mkdtemp(dir) != NULL, "no temporary folder");
  T_CALL(mf_context_set_cache_dir(gc, dir));
  T_CALL(mf_context_set_cache_dir(cc, dir));
  const double kel[2] = {1.3, 0.7};
  if (cuda_part != 2)
  for (int dim = cuda_part == 3 ? 3 : 2; dim <= (cuda_part == 1 ? 2 : 3); dim++) /* part 1: 2D, part 3: 3D */
    for (int adapt = 0; adapt <= 1; adapt++)
      for (int p = 1; p <= (dim == 2 ? 4 : 3); p++) {
        cpu_cuda_case(cc, gc, "cube", dim, dim == 2 ? 2 : 1, adapt, p, 1, laplace_source, "g3=stiffness f1=flux", NULL, 0,
                      1, 1e-12);
        setenv("MFREE_PHYSICS_BUILTIN", "0", 1); /* the physics' own kernels on the device too */
        cpu_cuda_case(cc, gc, "cube", dim, dim == 2 ? 2 : 1, adapt, p, 1, laplace_source, "g3=stiffness f1=flux", NULL, 0,
                      1, 1e-12);
        unsetenv("MFREE_PHYSICS_BUILTIN");
        cpu_cuda_case(cc, gc, "cube", dim, dim == 2 ? 2 : 1, adapt, p, dim, vector_source, "g3=elastic f1=stress", kel, 2,
                      1, 1e-12);
        cpu_cuda_case(cc, gc, "cube", dim, dim == 2 ? 2 : 1, adapt, p, 3, vector_source, "g3=vlaplace g0=vmass", NULL, 0,
                      0, 1e-12);
        setenv("MFREE_PHYSICS_VEC", "0", 1); /* the generic kernel of the same shape */
        cpu_cuda_case(cc, gc, "cube", dim, dim == 2 ? 2 : 1, adapt, p, 3, vector_source, "g3=vlaplace g0=vmass", NULL, 0,
                      0, 1e-12);
        unsetenv("MFREE_PHYSICS_VEC");
        if (p <= 2) { /* the vector kernel one component at a time (its default at high degrees), collocated,
                       * and its mass-only form; in 3D at p = 1 and 2 without hanging nodes the thread design
                       * (cell_thread.cuh) or where it is the default the slab design (cell_slab.cuh: at
                       * p = 2 the collocated Laplacian, the Laplacian and the mass alone at q = p + 2), also
                       * with q = p + 2 points (bp2, bp4; the stored entries read in pairs where a cell holds
                       * an even count) */
          if (dim == 2 || adapt) { /* the column design's grouping (3D uniform: the thread or slab design) */
            setenv("MFREE_PHYSICS_VCOL_NJ", "1", 1);
            cpu_cuda_case(cc, gc, "cube", dim, dim == 2 ? 2 : 1, adapt, p, 3, vector_source, "g3=vlaplace g0=vmass",
                          NULL, 0, 0, 1e-12);
            unsetenv("MFREE_PHYSICS_VCOL_NJ");
          }
          cuda_quad = MF_QUAD_GLL;
          cpu_cuda_case(cc, gc, "cube", dim, dim == 2 ? 2 : 1, adapt, p, 3, vector_source, "g3=vlaplace", NULL, 0, 0, 1e-12);
          cuda_quad = MF_QUAD_GAUSS;
          cpu_cuda_case(cc, gc, "cube", dim, dim == 2 ? 2 : 1, adapt, p, 3, vector_source, "g0=vmass", NULL, 0, 0, 1e-12);
          if (dim == 3) {
            cuda_quad = MF_QUAD_GAUSS_P2;
            cpu_cuda_case(cc, gc, "cube", dim, 1, adapt, p, 3, vector_source, "g3=vlaplace g0=vmass", NULL, 0, 0, 1e-12);
            cpu_cuda_case(cc, gc, "cube", dim, 1, adapt, p, 3, vector_source, "g3=vlaplace", NULL, 0, 0, 1e-12);
            cpu_cuda_case(cc, gc, "cube", dim, 1, adapt, p, 3, vector_source, "g0=vmass", NULL, 0, 0, 1e-12);
            cuda_quad = MF_QUAD_GAUSS;
          }
        }
        /* elasticity runs fused (its full layout outgrows the geometry); stored here, and the vector
         * operators fused */
        setenv("MFREE_PHYSICS_FUSED", "0", 1);
        cpu_cuda_case(cc, gc, "cube", dim, dim == 2 ? 2 : 1, adapt, p, dim, vector_source, "g3=elastic f1=stress", kel, 2,
                      1, 1e-12);
        setenv("MFREE_PHYSICS_FUSED", "1", 1);
        cpu_cuda_case(cc, gc, "cube", dim, dim == 2 ? 2 : 1, adapt, p, 3, vector_source, "g3=vlaplace g0=vmass", NULL, 0,
                      0, 1e-12);
        unsetenv("MFREE_PHYSICS_FUSED");
      }
  if (cuda_part == 0 || cuda_part == 1) float_copy_case(gc, 1, 0);
  if (cuda_part == 0 || cuda_part == 3) cuda_hex_faces_case(cc, gc);
  if (cuda_part == 1 || cuda_part == 3) goto done;
  cuda_assembled_case(gc);
  cuda_simplex_case(cc, gc);
  /* the gallery on the device (its entries as source there), each entry against the cpu's C functions */
  {
    const double k1[1] = {1.7}, k2[2] = {0.6, 1.3}, kd[9] = {2.0, 0.3, 0.1, 0.3, 1.5, 0.2, 0.1, 0.2, 1.1};
    for (int dim = 2; dim <= 3; dim++) {
      cpu_cuda_case(cc, gc, "cube", dim, 1, 1, 2, 1, NULL, "mass", k1, 1, 1, 1e-12);
      cpu_cuda_case(cc, gc, "cube", dim, 1, 1, 2, 3, NULL, "laplace", k1, 1, 1, 1e-12);
      cpu_cuda_case(cc, gc, "cube", dim, 1, 1, 2, 2, NULL, "helmholtz", k2, 2, 1, 1e-12);
      const double k2d[4] = {2.0, 0.3, 0.3, 1.5};
      cpu_cuda_case(cc, gc, "cube", dim, 1, 1, 2, 1, NULL, "diffusion", dim == 2 ? k2d : kd, dim * dim, 1, 1e-12);
      cpu_cuda_case(cc, gc, "cube", dim, 1, 1, 2, dim, NULL, "elasticity", k2, 2, 1, 1e-12);
      const char *sm = dim == 2 ? "square-tris" : "cube-tets";
      cpu_cuda_case(cc, gc, sm, dim, 2, 0, 2, 1, NULL, "mass", k1, 1, 1, 1e-12);
      cpu_cuda_case(cc, gc, sm, dim, 2, 0, 3, 1, NULL, "laplace", k1, 1, 1, 1e-12);
      cpu_cuda_case(cc, gc, sm, dim, 2, 0, 2, 2, NULL, "helmholtz", k2, 2, 1, 1e-12);
      cpu_cuda_case(cc, gc, sm, dim, 2, 0, 1, 1, NULL, "diffusion", dim == 2 ? k2d : kd, dim * dim, 1, 1e-12);
      cpu_cuda_case(cc, gc, sm, dim, 2, 0, 2, dim, NULL, "elasticity", k2, 2, 1, 1e-12);
    }
  }
  /* Neumann terms (f0 on tagged faces) on the device: the residual equals the cpu's; Robin terms (g0) too.
   * On hexahedra (adapt 0, 1: with hanging nodes) and tetrahedra (adapt 2) */
  for (int adapt = 0; adapt <= 2; adapt++) {
    const char *where = adapt == 1 ? " (adapted)" : adapt == 2 ? " (tetrahedra)" : "";
    mf_mesh mesh[2] = {NULL, NULL};
    mf_space s[2] = {NULL, NULL};
    mf_physics ph[2] = {NULL, NULL};
    mf_operator A[2] = {NULL, NULL};
    mf_vector x[2] = {NULL, NULL}, r[2] = {NULL, NULL};
    const int one_tag = 1;
    double *h[2] = {NULL, NULL};
    for (int b = 0; b < 2; b++) {
      mf_context ctx = b ? gc : cc;
      if (adapt == 2) T_CALL(mf_mesh_create(ctx, "cube-tets", 3, 1, &mesh[b]));
      else t38_mesh(ctx, "cube", 3, 1, adapt, &mesh[b]);
      T_CALL(mf_space_create(mesh[b], 2, &s[b]));
      T_CALL(mf_space_set_dirichlet_tags(s[b], 1, &one_tag));
      T_CALL(mf_physics_create(ctx, 1, &ph[b]));
      T_CALL(mf_physics_set_source(ph[b], laplace_source, "g3=stiffness f1=flux"));
      for (int tag = 2; tag <= 6; tag++) T_CALL(mf_physics_set_boundary(ph[b], tag, neumann_f0, NULL));
      T_CALL(mf_operator_create_physics(s[b], ph[b], MF_QUAD_GAUSS, &A[b]));
      T_CALL(mf_vector_create(s[b], &x[b]));
      T_CALL(mf_vector_create(s[b], &r[b]));
      if (!b) T_CALL(mf_vector_set_random(x[0], 8));
      else {
        double *hx = host_values(s[0], x[0]);
        T_CALL(mf_vector_set_values(x[1], hx));
        free(hx);
      }
      T_CALL(mf_operator_residual(A[b], x[b], r[b]));
      h[b] = host_values(s[b], r[b]);
    }
    int n = 0, nl = 0;
    T_CALL(mf_space_local_sizes(s[0], &n, &nl));
    double num = 0.0, den = 0.0;
    for (int i = 0; i < n; i++) {
      num += (h[0][i] - h[1][i]) * (h[0][i] - h[1][i]);
      den += h[0][i] * h[0][i];
    }
    T_CHECK(den > 0.0 && sqrt(num / den) <= 1e-12, "Neumann terms%s: the cuda residual differs from the cpu's by %.3g",
            where, sqrt(num / (den > 0 ? den : 1.0)));
    /* Robin terms (g0 on a face: the operator's faces, added on the host): product, diagonal and residual
     * equal the cpu's */
    mf_operator R[2] = {NULL, NULL};
    mf_vector y[2] = {NULL, NULL};
    for (int b = 0; b < 2; b++) {
      T_CALL(mf_physics_set_boundary(ph[b], 2, robin_f0, robin_g0));
      T_CALL(mf_physics_set_constants(ph[b], 1, (const double[]){0.8}));
      T_CALL(mf_operator_create_physics(s[b], ph[b], MF_QUAD_GAUSS, &R[b]));
      T_CALL(mf_vector_create(s[b], &y[b]));
    }
    for (int what = 0; what < 3; what++) {
      for (int b = 0; b < 2; b++) {
        if (what == 0) T_CALL(mf_operator_apply(R[b], x[b], y[b]));
        else if (what == 1) T_CALL(mf_operator_diagonal(R[b], y[b]));
        else T_CALL(mf_operator_residual(R[b], x[b], y[b]));
        free(h[b]);
        h[b] = host_values(s[b], y[b]);
      }
      num = den = 0.0;
      for (int i = 0; i < n; i++) {
        num += (h[0][i] - h[1][i]) * (h[0][i] - h[1][i]);
        den += h[0][i] * h[0][i];
      }
      T_CHECK(den > 0.0 && sqrt(num / den) <= 1e-12, "Robin terms%s: the cuda %s differs from the cpu's by %.3g",
              where, what == 0 ? "product" : what == 1 ? "diagonal" : "residual",
              sqrt(num / (den > 0 ? den : 1.0)));
    }
    { /* assembled on the device, the faces' g0 terms added from the host: the matrix-free product's */
      mf_operator C = NULL;
      char what[64];
      snprintf(what, sizeof what, "cuda Robin assembled%s", where);
      T_CALL(mf_operator_create_assembled(R[1], &C));
      same_operator(R[1], C, s[1], 1e-12, what);
      mf_operator_destroy(&C);
      /* a float copy: on the cpu with its faces; none on the device, where the faces run on the host */
      snprintf(what, sizeof what, "cpu Robin float copy%s", where);
      float_copy_check(R[0], s[0], what);
      EXPECT(mf_operator_create_single(R[1], &C), MF_ERR_UNSUPPORTED, "no float copy");
    }
    for (int b = 0; b < 2; b++) {
      mf_vector_destroy(&y[b]);
      mf_operator_destroy(&R[b]);
    }
    for (int b = 0; b < 2; b++) {
      free(h[b]);
      mf_vector_destroy(&x[b]);
      mf_vector_destroy(&r[b]);
      mf_operator_destroy(&A[b]);
      mf_physics_destroy(&ph[b]);
      mf_space_destroy(&s[b]);
      mf_mesh_destroy(&mesh[b]);
    }
  }
  /* the vector kernel's blocks of one cell (3D q^3 >= 256, up to 1000 threads), with hanging nodes */
  for (int p = 5; p <= 8; p += 3)
    cpu_cuda_case(cc, gc, "cube", 3, 1, 1, p, 3, vector_source, "g3=vlaplace g0=vmass", NULL, 0, 0, 1e-12);
  /* vector multigrid on the device (components transferred together): elasticity takes the cpu's
   * iterations (+-1), on uniform and adapted meshes */
  {
    const double E = 1.0, nu = 0.3, kl[2] = {E * nu / ((1 + nu) * (1 - 2 * nu)), E / (2 * (1 + nu))};
    for (int adapt = 0; adapt <= 1; adapt++)
      for (int p = 2; p <= 4; p += 2) {
        int its[2] = {0, 0};
        for (int b = 0; b < 2; b++) {
          mf_context ctx = b ? gc : cc;
          mf_mesh mesh = NULL;
          mf_space s = NULL;
          mf_physics ph = NULL;
          mf_operator A = NULL;
          t38_mesh(ctx, "cube", 3, p == 2 ? 2 : 1, adapt, &mesh);
          T_CALL(mf_space_create_components(mesh, p, 3, &s));
          T_CALL(mf_physics_create(ctx, 3, &ph));
          T_CALL(mf_physics_set_source(ph, vector_source, "g3=elastic f1=stress"));
          T_CALL(mf_physics_set_constants(ph, 2, kl));
          T_CALL(mf_operator_create_physics(s, ph, MF_QUAD_GAUSS, &A));
          its[b] = mg_iterations(A, s, MF_PRECISION_DOUBLE);
          mf_operator_destroy(&A);
          mf_physics_destroy(&ph);
          mf_space_destroy(&s);
          mf_mesh_destroy(&mesh);
        }
        T_CHECK(abs(its[0] - its[1]) <= 1 && its[1] <= 25,
                "elasticity Q%d%s multigrid: cuda %d CG iterations, cpu %d (expected the same +-1, at most 25)", p,
                adapt ? " adapted" : "", its[1], its[0]);
      }
  }
  /* the cache: a new shape compiles once, a second operator finds it in the process, a new context on
   * disk */
  {
    mf_mesh mesh = NULL;
    mf_space s = NULL;
    mf_physics ph = NULL;
    mf_operator A = NULL, B = NULL;
    T_CALL(mf_mesh_create(gc, "cube", 3, 1, &mesh));
    T_CALL(mf_space_create(mesh, 5, &s));
    T_CALL(mf_physics_create(gc, 1, &ph));
    T_CALL(mf_physics_set_source(ph, laplace_source, "g3=stiffness"));
    const int c0 = counts(gc, 0), l0 = counts(gc, 1);
    T_CALL(mf_operator_create_physics(s, ph, MF_QUAD_GAUSS, &A));
    T_CHECK(counts(gc, 0) == c0 + 1 && counts(gc, 1) == l0, "cuda, a new shape: %d compiles, %d loads (expected 1, 0)",
            counts(gc, 0) - c0, counts(gc, 1) - l0);
    T_CALL(mf_operator_create_physics(s, ph, MF_QUAD_GAUSS, &B));
    T_CHECK(counts(gc, 0) == c0 + 1 && counts(gc, 1) == l0 + 1, "cuda, the same again: %d compiles, %d loads (expected 1, 1)",
            counts(gc, 0) - c0, counts(gc, 1) - l0);
    mf_operator_destroy(&A);
    mf_operator_destroy(&B);
    mf_physics_destroy(&ph);
    mf_space_destroy(&s);
    mf_mesh_destroy(&mesh);
    mf_context g2 = NULL;
    T_CALL(mf_context_create(MPI_COMM_WORLD, "cuda", &g2));
    T_CALL(mf_context_set_cache_dir(g2, dir));
    T_CALL(mf_mesh_create(g2, "cube", 3, 1, &mesh));
    T_CALL(mf_space_create(mesh, 5, &s));
    T_CALL(mf_physics_create(g2, 1, &ph));
    T_CALL(mf_physics_set_source(ph, laplace_source, "g3=stiffness"));
    T_CALL(mf_operator_create_physics(s, ph, MF_QUAD_GAUSS, &A));
    T_CHECK(counts(g2, 0) == 0 && counts(g2, 1) == 1, "cuda, a new context: %d compiles, %d loads (expected 0, 1)",
            counts(g2, 0), counts(g2, 1));
    /* multigrid: the physics on every level; in float through the built-ins' copies, and through the
     * physics' own kernels' float copies (the same iterations +-1) */
    const int it = mg_iterations(A, s, MF_PRECISION_DOUBLE), itf = mg_iterations(A, s, MF_PRECISION_FLOAT);
    T_CHECK(it <= 15 && abs(itf - it) <= 1, "cuda multigrid on a physics Laplace: %d iterations, %d in float", it, itf);
    {
      mf_operator O = NULL;
      setenv("MFREE_PHYSICS_BUILTIN", "0", 1);
      T_CALL(mf_operator_create_physics(s, ph, MF_QUAD_GAUSS, &O));
      unsetenv("MFREE_PHYSICS_BUILTIN");
      const int ito = mg_iterations(O, s, MF_PRECISION_DOUBLE), itof = mg_iterations(O, s, MF_PRECISION_FLOAT);
      T_CHECK(abs(ito - it) <= 1 && abs(itof - ito) <= 1,
              "cuda multigrid on the physics' own kernels: %d iterations, %d in float (the built-in's: %d)", ito, itof, it);
      mf_operator_destroy(&O);
    }
    /* functions without source cannot run on the device; a compile error names the line */
    mf_operator_destroy(&A);
    mf_physics_destroy(&ph);
    T_CALL(mf_physics_create(g2, 1, &ph));
    T_CALL(mf_physics_set_jacobian(ph, NULL, NULL, NULL, g3_one));
    EXPECT(mf_operator_create_physics(s, ph, MF_QUAD_GAUSS, &A), MF_ERR_UNSUPPORTED, "runs from its source");
    T_CALL(mf_physics_set_source(ph, "void g(int dim, int nc, const double *u, const double *du, const double *x,\n"
                                     "       const double *k, double *out)\n{\n  out[0] = undeclared_name;\n}\n", "g3=g"));
    EXPECT(mf_operator_create_physics(s, ph, MF_QUAD_GAUSS, &A), MF_ERR_ARGUMENT, "physics source(4)");
    T_CHECK(strstr(mf_last_error_message(), "undeclared_name") != NULL, "NVRTC's message is missing: %s",
            mf_last_error_message());
    T_CALL(mf_physics_set_source(ph, "void g(int dim, int nc, const double *u, const double *du, const double *x,\n"
                                     "       const double *k, double *out)\n{\n  out[0] = x[0] > 0.5 ? 0.0 / 0.0 : 1.0;\n}\n",
                                 "g3=g"));
    EXPECT(mf_operator_create_physics(s, ph, MF_QUAD_GAUSS, &A), MF_ERR_ARGUMENT, "not finite at quadrature point");
    mf_physics_destroy(&ph);
    mf_space_destroy(&s);
    mf_mesh_destroy(&mesh);
    mf_context_destroy(&g2);
  }
done:;
  char cmd[512];
  snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
  T_CHECK(system(cmd) == 0, "could not remove %s", dir);
  mf_context_destroy(&cc);
}

int main(int argc, char **argv)
{
  MPI_Init(&argc, &argv);
  MPI_Comm_size(MPI_COMM_WORLD, &nranks);
  const char *backend = t_backend(argc, argv);
  mf_context ctx = NULL;
  T_CALL(mf_context_create(MPI_COMM_WORLD, backend, &ctx));
  if (!strcmp(backend, "cuda")) {
    if (argc > 2 && !strcmp(argv[2], "assembled")) cuda_assembled_case(ctx); /* alone (compute-sanitizer) */
    else {
      cuda_part = argc > 2 && !strcmp(argv[2], "hex") ? 1 : argc > 2 && !strcmp(argv[2], "rest") ? 2
                  : argc > 2 && !strcmp(argv[2], "hex3d") ? 3 : 0;
      const int simplex = argc > 2 && !strcmp(argv[2], "simplex"), faces = argc > 2 && !strcmp(argv[2], "faces");
      const int thread = argc > 2 && !strcmp(argv[2], "thread");
      const int half = argc > 3 && !strcmp(argv[3], "slab")     ? 1
                       : argc > 3 && !strcmp(argv[3], "others") ? 2
                       : argc > 3 && !strcmp(argv[3], "stage")  ? 3
                       : argc > 3 && !strcmp(argv[3], "six")    ? 4
                                                                : 0;
      if (simplex || faces || thread) { /* alone (compute-sanitizer; thread: its own two tests) */
        mf_context cc = NULL;
        T_CALL(mf_context_create(MPI_COMM_WORLD, "cpu", &cc));
        if (simplex) cuda_simplex_case(cc, ctx);
        else if (thread) cuda_thread_case(cc, ctx, half);
        else cuda_hex_faces_case(cc, ctx);
        mf_context_destroy(&cc);
      } else cuda_case(ctx);
    }
    mf_context_destroy(&ctx);
    return t_finish();
  }
  if (argc > 2 && !strcmp(argv[2], "quick")) { /* under valgrind: the refusals and one case of each family */
    mf_mesh mesh = NULL;
    t38_mesh(ctx, "cube", 2, 1, 1, &mesh);
    gallery_case(ctx, mesh, 2, MF_QUAD_GAUSS, "hex 2D adapted");
    vector_case(ctx, mesh, 2, "hex 2D adapted");
    mf_mesh_destroy(&mesh);
    T_CALL(mf_mesh_create(ctx, "square-tris", 2, 1, &mesh));
    gallery_case(ctx, mesh, 2, MF_QUAD_GAUSS, "simplex 2D");
    simplex_elasticity_case(ctx, mesh, 2, "simplex 2D");
    float_copy_one(ctx, mesh, 2, 2, vector_source, "g3=elastic f1=stress", (const double[]){1.3, 0.7}, 2,
                   "float copy, simplex 2D");
    boundary_source_case(ctx, 1);
    mf_mesh_destroy(&mesh);
    source_case(ctx);
    refusals(ctx);
    mf_context_destroy(&ctx);
    return t_finish();
  }
  for (int dim = 2; dim <= 3; dim++)
    for (int adapt = 0; adapt <= 1; adapt++) {
      mf_mesh mesh = NULL;
      t38_mesh(ctx, "cube", dim, dim == 2 ? 2 : 1, adapt, &mesh);
      char where[64];
      snprintf(where, sizeof where, "hex %dD%s", dim, adapt ? " adapted" : "");
      for (int p = 1; p <= (dim == 2 ? 4 : 3); p++) {
        /* the built-ins' kernels on the physics' data, and the physics' own kernels (MFREE_PHYSICS_BUILTIN=0) */
        for (int q = 0; q < 3; q++) gallery_case(ctx, mesh, p, (mf_quadrature)q, where);
        setenv("MFREE_PHYSICS_BUILTIN", "0", 1);
        for (int q = 0; q < 3; q++) gallery_case(ctx, mesh, p, (mf_quadrature)q, where);
        unsetenv("MFREE_PHYSICS_BUILTIN");
        vector_case(ctx, mesh, p, where);
        patch_case(ctx, mesh, p, where);
        nonsymmetric_case(ctx, mesh, p, where);
      }
      if (nranks == 1)
        for (int p = 1; p <= 2; p++) {
          diagonal_case(ctx, mesh, p, "elasticity", dim, where);
          diagonal_case(ctx, mesh, p, "helmholtz", 2, where);
        }
      for (int p = 1; p <= 2; p++) assembled_case(ctx, mesh, p, where);
      mf_mesh_destroy(&mesh);
    }
  /* a sheared mesh: J^-1 with off-diagonal entries (the cube's cells are axis-aligned, and the deformed
   * cube's map acts direction by direction), both paths */
  for (int dim = 2; dim <= 3; dim++) {
    mf_mesh mesh = NULL;
    T_CALL(mf_mesh_create(ctx, "sheared", dim, dim == 2 ? 2 : 1, &mesh));
    char where[64];
    snprintf(where, sizeof where, "hex %dD sheared", dim);
    for (int p = 1; p <= 3; p += 2) {
      gallery_case(ctx, mesh, p, MF_QUAD_GAUSS, where);
      setenv("MFREE_PHYSICS_BUILTIN", "0", 1);
      gallery_case(ctx, mesh, p, MF_QUAD_GAUSS, where);
      unsetenv("MFREE_PHYSICS_BUILTIN");
      vector_case(ctx, mesh, p, where);
    }
    mf_mesh_destroy(&mesh);
  }
  { /* the higher degrees on a few cells: Q4..Q8 in 3D, every rule */
    mf_mesh mesh = NULL;
    t38_mesh(ctx, "cube", 3, 0, 0, &mesh);
    for (int p = 4; p <= 8; p++)
      for (int q = 0; q < 3; q++) gallery_case(ctx, mesh, p, (mf_quadrature)q, "hex 3D one cell");
    mf_mesh_destroy(&mesh);
  }
  if (nranks == 1) /* simplex meshes are one rank's */
    for (int dim = 2; dim <= 3; dim++) {
      mf_mesh mesh = NULL;
      T_CALL(mf_mesh_create(ctx, dim == 2 ? "square-tris" : "cube-tets", dim, dim == 2 ? 2 : 1, &mesh));
      char where[64];
      snprintf(where, sizeof where, "simplex %dD", dim);
      for (int p = 1; p <= 3; p++) {
        gallery_case(ctx, mesh, p, MF_QUAD_GAUSS, where);
        gallery_case(ctx, mesh, p, MF_QUAD_GAUSS_P2, where);
        vector_case(ctx, mesh, p, where);
        patch_case(ctx, mesh, p, where);
        nonsymmetric_case(ctx, mesh, p, where);
        simplex_elasticity_case(ctx, mesh, p, where);
        diagonal_case(ctx, mesh, p, "elasticity", dim, where);
        assembled_case(ctx, mesh, p, where);
      }
      mf_mesh_destroy(&mesh);
    }
  multigrid_case(ctx);
  float_copy_case(ctx, 1, 1);
  convergence_case(ctx);
  elasticity_convergence(ctx);
  tags_case(ctx);
  boundary_case(ctx);
  boundary_source_case(ctx, 0);
  source_case(ctx);
  refusals(ctx);
  mf_context_destroy(&ctx);
  return t_finish();
}
