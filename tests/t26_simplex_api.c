/* t26_simplex_api.c -- simplices through the public interface: meshes "square-tris" / "cube-tets" and
 * Gmsh files as mf_mesh, P_p spaces, the simplex operator kind behind mf_operator_create_*, and the
 * Poisson solve of mfree-poisson (apps/poisson.h) with CG.
 *   t26_simplex_api cpu                 operators (mass = volume, symmetry, element matrices, diagonal,
 *                                       elasticity), assembled = matrix-free, Dirichlet tags,
 *                                       convergence P1..P3 in 2D and 3D, P6 in 2D (L2 and H1
 *                                       seminorm rates bounded from both sides)
 *   t26_simplex_api cpu gmsh GEODIR OUT convergence on meshes that gmsh makes from GEODIR/square.geo and
 *                                       cube.geo (77 where gmsh is not installed)                     */
#include "mf_test.h"
#include "poisson.h"
#include "mf_testing.h"

#include "assembled/mf_element.h" /* mf_csr_find */
#include "simplex/mf_simplex_space.h"

static double rnd(unsigned *s)
{
  *s = *s * 1664525u + 1013904223u;
  return (double)(*s >> 8) / 16777216.0 * 2.0 - 1.0;
}

static double one(const double *x, int dim, void *u)
{
  (void)x, (void)dim, (void)u;
  return 1.0;
}

static double coef_var(const double *x, int dim, void *u)
{
  (void)u;
  double s = 1.0;
  for (int k = 0; k < dim; k++) s += x[k] * x[k];
  return s;
}

/* y = A x by the public interface, with x and y as host arrays (n entries). */
static void apply_host(mf_operator A, mf_space s, const double *x, double *y)
{
  mf_vector vx, vy;
  T_CALL(mf_vector_create(s, &vx));
  T_CALL(mf_vector_create(s, &vy));
  T_CALL(mf_vector_set_values(vx, x));
  T_CALL(mf_operator_apply(A, vx, vy));
  T_CALL(mf_vector_get_values(vy, y));
  mf_vector_destroy(&vx);
  mf_vector_destroy(&vy);
}

/* The operator (Helmholtz a M + b K, c = 1; with and without the Dirichlet form) against the sum of
 * the element matrices, on a random vector; its symmetry; its diagonal against A's unit columns. */
static void check_operator(mf_context ctx, const char *name, int dim, int level, int p)
{
  mf_mesh mesh;
  mf_space s;
  mf_operator A;
  T_CALL(mf_mesh_create(ctx, name, dim, level, &mesh));
  mf_cell_kind kind;
  T_CALL(mf_mesh_cell_kind(mesh, &kind));
  T_CHECK(kind == MF_CELL_SIMPLEX, "%s: cell kind %d", name, (int)kind);
  T_CALL(mf_space_create(mesh, p, &s));
  const double a = 0.7, b = 1.3;
  T_CALL(mf_operator_create_helmholtz(s, MF_QUAD_GAUSS, a, b, NULL, NULL, &A));
  int n, nl;
  T_CALL(mf_space_local_sizes(s, &n, &nl));
  T_CHECK(n == nl, "one rank: every DoF owned (%d, %d)", n, nl);
  double *x = malloc(sizeof(double) * n), *z = malloc(sizeof(double) * n), *y = malloc(sizeof(double) * n),
         *r = calloc((size_t)n, sizeof(double)), *d = malloc(sizeof(double) * n);
  unsigned seed = 12345u + (unsigned)p;
  for (int i = 0; i < n; i++) x[i] = rnd(&seed), z[i] = rnd(&seed);
  /* the reference: sum over cells of (a M_e + b K_e) x_e */
  const mf_simplex_mesh *m = (const mf_simplex_mesh *)mesh->fdata;
  const mf_simplex_space *ss = (const mf_simplex_space *)s->fdata;
  const int N = ss->basis.nnodes;
  double *Me = malloc(sizeof(double) * N * N), *Ke = malloc(sizeof(double) * N * N), X[12], scale = 0.0;
  for (int e = 0; e < m->ncells; e++) {
    for (int i = 0; i <= dim; i++)
      for (int k = 0; k < dim; k++) X[i * dim + k] = m->coords[3 * m->cells[e * (dim + 1) + i] + k];
    T_CALL(mf_simplex_element_matrices(ctx, &ss->basis, X, Me, Ke, NULL));
    const int *cd = ss->dofs.cell_dofs + (size_t)e * N;
    for (int i = 0; i < N; i++)
      for (int j = 0; j < N; j++) {
        r[cd[i]] += (a * Me[i * N + j] + b * Ke[i * N + j]) * x[cd[j]];
        scale = fmax(scale, fabs(a * Me[i * N + j] + b * Ke[i * N + j]));
      }
  }
  apply_host(A, s, x, y);
  double err = 0.0;
  for (int i = 0; i < n; i++) err = fmax(err, fabs(y[i] - r[i]));
  T_CHECK(err <= 1e-12 * scale * N, "%s P%d: operator vs element matrices: %.3e (scale %.3e)", name, p, err, scale);
  /* symmetry: z^T A x = x^T A z, with and without the Dirichlet form */
  for (int dir = 0; dir < 2; dir++) {
    T_CALL(mf_operator_set_dirichlet(A, dir));
    double *Az = malloc(sizeof(double) * n), zAx = 0.0, xAz = 0.0, nrm = 0.0;
    apply_host(A, s, x, y);
    apply_host(A, s, z, Az);
    for (int i = 0; i < n; i++) zAx += z[i] * y[i], xAz += x[i] * Az[i], nrm += fabs(z[i] * y[i]);
    T_CHECK(fabs(zAx - xAz) <= 1e-13 * nrm, "%s P%d dirichlet %d: z^T A x = %.17g, x^T A z = %.17g", name, p, dir, zAx,
            xAz);
    if (dir) { /* Dirichlet form: boundary rows are the identity, boundary columns zero elsewhere */
      for (int k = 0; k < s->nbc; k++) {
        const int i = s->bc_list[k];
        T_CHECK(y[i] == x[i], "%s P%d: boundary row %d: %g, expected %g", name, p, i, y[i], x[i]);
      }
    }
    /* the diagonal: e_i^T A e_i for a few i */
    mf_vector vd;
    T_CALL(mf_vector_create(s, &vd));
    T_CALL(mf_operator_diagonal(A, vd));
    T_CALL(mf_vector_get_values(vd, d));
    mf_vector_destroy(&vd);
    double *ei = calloc((size_t)n, sizeof(double));
    for (int i = 0; i < n; i += n / 7 + 1) {
      ei[i] = 1.0;
      apply_host(A, s, ei, Az);
      T_CHECK(fabs(Az[i] - d[i]) <= 1e-12 * fabs(Az[i]), "%s P%d dirichlet %d: diagonal %d: %.17g, A e_i: %.17g", name, p,
              dir, i, d[i], Az[i]);
      ei[i] = 0.0;
    }
    free(ei);
    free(Az);
  }
  /* the mass of 1 is the volume, also with a coefficient for the mass operator */
  mf_operator M;
  mf_vector v1, w;
  T_CALL(mf_operator_create_mass(s, MF_QUAD_GAUSS, NULL, NULL, &M));
  T_CALL(mf_vector_create(s, &v1));
  T_CALL(mf_vector_create(s, &w));
  T_CALL(mf_vector_interpolate(v1, one, NULL));
  T_CALL(mf_operator_apply(M, v1, w));
  double vol;
  T_CALL(mf_vector_dot(v1, w, &vol));
  T_CHECK(fabs(vol - 1.0) < 1e-13, "%s P%d: mass of 1 = %.17g, volume 1", name, p, vol);
  mf_operator_destroy(&M);
  /* int (1 + |x|^2): dim / 3 + 1 on the unit box, a mass with a coefficient (rule exact for p >= 1) */
  T_CALL(mf_operator_create_mass(s, MF_QUAD_GAUSS_P2, coef_var, NULL, &M));
  T_CALL(mf_operator_apply(M, v1, w));
  T_CALL(mf_vector_dot(v1, w, &vol));
  T_CHECK(fabs(vol - (1.0 + dim / 3.0)) < 1e-13, "%s P%d: int 1 + |x|^2 = %.17g, expected %.17g", name, p, vol,
          1.0 + dim / 3.0);
  T_CALL(mf_vector_assemble_rhs(w, one, NULL)); /* b_i = int phi_i: they sum to the volume */
  T_CALL(mf_vector_sum(w, &vol));
  T_CHECK(fabs(vol - 1.0) < 1e-13, "%s P%d: sum of int phi_i = %.17g", name, p, vol);
  mf_operator_destroy(&M);
  mf_vector_destroy(&v1);
  mf_vector_destroy(&w);
  free(Me), free(Ke), free(x), free(y), free(z), free(r), free(d);
  mf_operator_destroy(&A);
  mf_space_destroy(&s);
  mf_mesh_destroy(&mesh);
}

/* The assembled operator (rowwise, lib/simplex/assembly_simplex.c) against the matrix-free one: mass and
 * Laplace with c(x) = 1 + |x|^2 (the quadrature entries), Helmholtz with c = 1 (the reference matrices)
 * and Laplace on the rule of degree 2p + 2; A x on random vectors with and without the Dirichlet form,
 * the diagonal, and the CSR matrix symmetric. */
static void check_assembled(mf_context ctx, const char *name, int dim, int level, int p)
{
  mf_mesh mesh;
  mf_space s;
  T_CALL(mf_mesh_create(ctx, name, dim, level, &mesh));
  T_CALL(mf_space_create(mesh, p, &s));
  int n;
  T_CALL(mf_space_local_sizes(s, &n, NULL));
  double *x = malloc(sizeof(double) * n), *y = malloc(sizeof(double) * n), *z = malloc(sizeof(double) * n);
  unsigned seed = 777u + (unsigned)p;
  for (int i = 0; i < n; i++) x[i] = rnd(&seed);
  for (int kind = 0; kind < 4; kind++) {
    mf_operator A = NULL, B = NULL;
    if (kind == 0) T_CALL(mf_operator_create_mass(s, MF_QUAD_GAUSS, coef_var, NULL, &A));
    else if (kind == 1) T_CALL(mf_operator_create_laplace(s, MF_QUAD_GAUSS, coef_var, NULL, &A));
    else if (kind == 2) T_CALL(mf_operator_create_helmholtz(s, MF_QUAD_GAUSS, 0.7, 1.3, NULL, NULL, &A));
    else T_CALL(mf_operator_create_laplace(s, MF_QUAD_GAUSS_P2, NULL, NULL, &A));
    T_CALL(mf_operator_create_assembled_variant(A, kind == 3 ? MF_ASSEMBLY_ROWWISE : MF_ASSEMBLY_AUTO, &B));
    for (int dir = 0; dir < 2; dir++) {
      T_CALL(mf_operator_set_dirichlet(A, dir));
      T_CALL(mf_operator_set_dirichlet(B, dir));
      apply_host(A, s, x, y);
      apply_host(B, s, x, z);
      double e = 0.0, m = 0.0;
      for (int i = 0; i < n; i++) e = fmax(e, fabs(y[i] - z[i])), m = fmax(m, fabs(y[i]));
      T_CHECK(e <= 1e-12 * m, "%s P%d kind %d dirichlet %d: assembled A x differs by %.3e (max %.3e)", name, p, kind, dir,
              e, m);
      mf_vector vd;
      T_CALL(mf_vector_create(s, &vd));
      T_CALL(mf_operator_diagonal(A, vd));
      T_CALL(mf_vector_get_values(vd, y));
      T_CALL(mf_vector_set_value(vd, 0.0));
      T_CALL(mf_operator_diagonal(B, vd));
      T_CALL(mf_vector_get_values(vd, z));
      mf_vector_destroy(&vd);
      e = 0.0, m = 0.0;
      for (int i = 0; i < n; i++) e = fmax(e, fabs(y[i] - z[i])), m = fmax(m, fabs(y[i]));
      T_CHECK(e <= 1e-12 * m, "%s P%d kind %d dirichlet %d: assembled diagonal differs by %.3e", name, p, kind, dir, e);
    }
    int64_t nnz = 0;
    T_CALL(mf_operator_local_nnz(B, &nnz));
    double *v = malloc(sizeof(double) * (size_t)nnz), asym = 0.0, vmax = 0.0;
    T_CALL(mf_operator_csr_values_host(B, v));
    for (int i = 0; i < n; i++)
      for (int64_t k = s->csr_rowptr[i]; k < s->csr_rowptr[i + 1]; k++) {
        const int j = s->csr_colidx[k];
        const int64_t kt = mf_csr_find(s->csr_rowptr, s->csr_colidx, j, i);
        T_CHECK(s->csr_colidx[kt] == i, "%s P%d: pattern not symmetric at (%d, %d)", name, p, i, j);
        asym = fmax(asym, fabs(v[k] - v[kt])), vmax = fmax(vmax, fabs(v[k]));
      }
    T_CHECK(asym <= 1e-14 * vmax, "%s P%d kind %d: assembled matrix asymmetric by %.3e (max %.3e)", name, p, kind, asym, vmax);
    free(v);
    mf_operator_destroy(&B);
    mf_operator_destroy(&A);
  }
  free(x), free(y), free(z);
  mf_space_destroy(&s);
  mf_mesh_destroy(&mesh);
}

/* Elasticity on dim components: symmetric, zero on rigid translations without the Dirichlet form, and
 * its diagonal equals A's unit columns. */
static void check_elasticity(mf_context ctx, const char *name, int dim, int level, int p)
{
  mf_mesh mesh;
  mf_space s;
  mf_operator A;
  T_CALL(mf_mesh_create(ctx, name, dim, level, &mesh));
  T_CALL(mf_space_create_components(mesh, p, dim, &s));
  T_CALL(mf_operator_create_elasticity(s, 1.5, 0.8, &A));
  int n;
  T_CALL(mf_space_local_sizes(s, &n, NULL));
  double *x = malloc(sizeof(double) * n), *z = malloc(sizeof(double) * n), *y = malloc(sizeof(double) * n),
         *Az = malloc(sizeof(double) * n), *d = malloc(sizeof(double) * n);
  unsigned seed = 777u;
  for (int i = 0; i < n; i++) x[i] = rnd(&seed), z[i] = rnd(&seed);
  apply_host(A, s, x, y);
  apply_host(A, s, z, Az);
  double zAx = 0.0, xAz = 0.0, nrm = 0.0;
  for (int i = 0; i < n; i++) zAx += z[i] * y[i], xAz += x[i] * Az[i], nrm += fabs(z[i] * y[i]);
  T_CHECK(fabs(zAx - xAz) <= 1e-13 * nrm, "%s elasticity P%d: z^T A x = %.17g, x^T A z = %.17g", name, p, zAx, xAz);
  for (int c = 0; c < dim; c++) { /* translation along c */
    for (int i = 0; i < n; i++) x[i] = i % dim == c;
    apply_host(A, s, x, y);
    double mx = 0.0;
    for (int i = 0; i < n; i++) mx = fmax(mx, fabs(y[i]));
    T_CHECK(mx < 1e-11, "%s elasticity P%d: translation %d: |A u| = %.3e", name, p, c, mx);
  }
  T_CALL(mf_operator_set_dirichlet(A, 1));
  mf_vector vd;
  T_CALL(mf_vector_create(s, &vd));
  T_CALL(mf_operator_diagonal(A, vd));
  T_CALL(mf_vector_get_values(vd, d));
  mf_vector_destroy(&vd);
  for (int i = 0; i < n; i++) x[i] = 0.0;
  for (int i = 0; i < n; i += n / 11 + 1) {
    x[i] = 1.0;
    apply_host(A, s, x, y);
    T_CHECK(fabs(y[i] - d[i]) <= 1e-12 * fabs(y[i]), "%s elasticity P%d: diagonal %d: %.17g, A e_i: %.17g", name, p, i,
            d[i], y[i]);
    x[i] = 0.0;
  }
  /* CG solves a loaded problem with every component fixed on the boundary */
  mf_vector b, u;
  mf_cg cg;
  mf_cg_info info;
  T_CALL(mf_vector_create(s, &b));
  T_CALL(mf_vector_create(s, &u));
  T_CALL(mf_vector_interpolate(b, one, NULL));
  T_CALL(mf_vector_zero_boundary(b));
  T_CALL(mf_vector_set_value(u, 0.0));
  T_CALL(mf_cg_create(A, &cg));
  T_CALL(mf_cg_set_tolerance(cg, 1e-10, 5000));
  T_CALL(mf_cg_solve(cg, b, u, &info));
  T_CHECK(info.converged, "%s elasticity P%d: CG did not converge (%d iterations)", name, p, info.iterations);
  mf_cg_destroy(&cg);
  mf_vector_destroy(&b);
  mf_vector_destroy(&u);
  free(x), free(y), free(z), free(Az), free(d);
  mf_operator_destroy(&A);
  mf_space_destroy(&s);
  mf_mesh_destroy(&mesh);
}


static void check_convergence_builtin(mf_context ctx, const char *name, int dim, int p, int l0, poisson_coef coef)
{
  poisson_result r[2];
  for (int k = 0; k < 2; k++) {
    mf_mesh mesh;
    T_CALL(mf_mesh_create(ctx, name, dim, l0 + k, &mesh));
    T_CALL(poisson_solve(mesh, p, coef, 1e-12, &r[k]));
    T_CHECK(r[k].converged, "%s P%d level %d: CG did not converge", name, p, l0 + k);
    mf_mesh_destroy(&mesh);
  }
  /* expected p + 1 (L2) and p (H1); the runs give them within 0.07, but for cube-tets P3 between levels 1
   * and 2 (two cells per side: its H1 rate is 2.85) */
  const double q = log2(r[0].l2_error / r[1].l2_error), qh = log2(r[0].h1_error / r[1].h1_error);
  if (getenv("T26_VERBOSE"))
    printf("%s P%d levels %d-%d: L2 errors %.3e %.3e rate %.2f, H1 errors %.3e %.3e rate %.2f\n", name, p, l0, l0 + 1,
           r[0].l2_error, r[1].l2_error, q, r[0].h1_error, r[1].h1_error, qh);
  T_CHECK(q >= p + 0.8 && q <= p + 1.3, "%s P%d levels %d-%d: L2 rate %.2f outside [%.1f, %.1f] (errors %.3e, %.3e)", name,
          p, l0, l0 + 1, q, p + 0.8, p + 1.3, r[0].l2_error, r[1].l2_error);
  T_CHECK(qh >= p - 0.2 && qh <= p + 0.3, "%s P%d levels %d-%d: H1 rate %.2f outside [%.1f, %.1f] (errors %.3e, %.3e)", name,
          p, l0, l0 + 1, qh, p - 0.2, p + 0.3, r[0].h1_error, r[1].h1_error);
}

/* Dirichlet tags: the built-in unit square tags its sides 1..4 (x = 0, x = 1, y = 0, y = 1) */
static void check_tags(mf_context ctx)
{
  mf_mesh mesh;
  mf_space s;
  int64_t nd;
  T_CALL(mf_mesh_create(ctx, "square-tris", 2, 2, &mesh));
  T_CALL(mf_space_create(mesh, 2, &s));
  T_CALL(mf_space_num_dofs(s, &nd));
  T_CHECK(nd == 9 * 9, "square-tris level 2 P2: %lld DoFs, expected 81", (long long)nd);
  T_CHECK(s->nbc == 32, "boundary DoFs %d, expected 32", s->nbc);
  const int tag1 = 1, tag7 = 7, sides[4] = {1, 2, 3, 4}, x_sides[2] = {1, 2};
  T_CALL(mf_space_set_dirichlet_tags(s, 0, NULL));
  T_CHECK(s->nbc == 0, "no tags: %d boundary DoFs", s->nbc);
  /* the box's sides are tagged as the hex boxes' faces: x = 0 1, x = 1 2, y = 0 3, y = 1 4 */
  T_CALL(mf_space_set_dirichlet_tags(s, 1, &tag1));
  T_CHECK(s->nbc == 9, "tag 1 (x = 0): %d boundary DoFs, expected 9", s->nbc);
  T_CALL(mf_space_host_coords(s));
  for (int k = 0; k < s->nbc; k++)
    T_CHECK(s->coords[(size_t)s->bc_list[k] * 2] == 0.0, "tag 1 marks DoF %d at x = %g", s->bc_list[k],
            s->coords[(size_t)s->bc_list[k] * 2]);
  T_CALL(mf_space_set_dirichlet_tags(s, 2, x_sides));
  T_CHECK(s->nbc == 18, "tags 1, 2: %d boundary DoFs, expected 18", s->nbc);
  T_CALL(mf_space_set_dirichlet_tags(s, 4, sides));
  T_CHECK(s->nbc == 32, "tags 1..4: %d boundary DoFs, expected 32", s->nbc);
  EXPECT(mf_space_set_dirichlet_tags(s, 1, &tag7), MF_ERR_ARGUMENT, "Dirichlet tag 7 (entry 0): no boundary facet");
  mf_vector v;
  T_CALL(mf_vector_create(s, &v));
  EXPECT(mf_space_set_dirichlet_tags(s, -1, NULL), MF_ERR_ARGUMENT, "before making vectors or operators");
  mf_vector_destroy(&v);
  T_CALL(mf_space_set_dirichlet_tags(s, -1, NULL));
  T_CHECK(s->nbc == 32, "all: %d boundary DoFs", s->nbc);
  mf_space_destroy(&s);
  mf_mesh_destroy(&mesh);
}

/* gmsh makes square.geo and cube.geo at two sizes; Poisson P1, P2 rates; the physical groups as
 * Dirichlet tags (square: "walls" 1 and "outlet" 2 cover the boundary). */
static int check_gmsh(mf_context ctx, const char *geodir, const char *out)
{
  if (system("gmsh --version > /dev/null 2>&1") != 0) return 77;
  for (int g = 0; g < 2; g++) {
    const int dim = g + 2;
    char file[2][4096];
    for (int k = 0; k < 2; k++) {
      char cmd[9000];
      snprintf(file[k], sizeof file[k], "%s/t26_%s_%d.msh", out, g ? "cube" : "square", k);
      /* the sizes of the .geo file (square h = 0.25, cube 0.4) scaled by 1 / 2^k */
      snprintf(cmd, sizeof cmd, "gmsh -%d -format msh41 -clscale %g -o '%s' '%s/%s' > /dev/null 2>&1", dim,
               1.0 / (1 << k), file[k], geodir, g ? "cube.geo" : "square.geo");
      T_CHECK(system(cmd) == 0, "%s failed", cmd);
    }
    for (int p = 1; p <= (dim == 2 ? 3 : 2); p++) {
      poisson_result r[2];
      for (int k = 0; k < 2; k++) {
        mf_mesh mesh;
        T_CALL(mf_mesh_create_from_file(ctx, file[k], dim, &mesh));
        T_CALL(poisson_solve(mesh, p, POISSON_COEF_CONSTANT, 1e-10, &r[k]));
        mf_mesh_destroy(&mesh);
      }
      /* the rates for the meshes' nominal sizes, h and h / 2 (-clscale): the DoF counts would say less (30 and
       * 98 DoFs for P1 in 2D, the boundary's share shrinking) and inflate them by 0.2-0.4 */
      const double q = log2(r[0].l2_error / r[1].l2_error), qh = log2(r[0].h1_error / r[1].h1_error);
      if (getenv("T26_VERBOSE"))
        printf("gmsh %dD P%d: DoFs %lld %lld L2 errors %.3e %.3e rate %.2f, H1 errors %.3e %.3e rate %.2f\n", dim, p,
               (long long)r[0].ndofs, (long long)r[1].ndofs, r[0].l2_error, r[1].l2_error, q, r[0].h1_error,
               r[1].h1_error, qh);
      T_CHECK(q >= p + 0.8 && q <= p + 1.3, "gmsh %dD P%d: L2 rate %.2f outside [%.1f, %.1f] (errors %.3e, %.3e)", dim, p, q,
              p + 0.8, p + 1.3, r[0].l2_error, r[1].l2_error);
      T_CHECK(qh >= p - 0.2 && qh <= p + 0.3, "gmsh %dD P%d: H1 rate %.2f outside [%.1f, %.1f] (errors %.3e, %.3e)", dim, p,
              qh, p - 0.2, p + 0.3, r[0].h1_error, r[1].h1_error);
    }
    /* the physical groups: the mass of 1 on the file's mesh is its volume; the tags select boundary DoFs */
    mf_mesh mesh;
    mf_space s;
    T_CALL(mf_mesh_create_from_file(ctx, file[0], dim, &mesh));
    T_CALL(mf_space_create(mesh, 2, &s));
    const int nall = s->nbc, t1 = 1, t2 = 2, t12[2] = {1, 2};
    T_CALL(mf_space_set_dirichlet_tags(s, 1, &t1));
    const int n1 = s->nbc;
    T_CALL(mf_space_set_dirichlet_tags(s, 1, &t2));
    const int n2 = s->nbc;
    T_CALL(mf_space_set_dirichlet_tags(s, 2, t12));
    const int n12 = s->nbc;
    T_CHECK(n1 > 0 && n2 > 0 && n1 < nall && n2 < nall && n12 <= n1 + n2 && n12 <= nall,
            "%dD tags: all %d, tag 1 %d, tag 2 %d, both %d", dim, nall, n1, n2, n12);
    if (dim == 2) T_CHECK(n12 == nall, "2D: walls and outlet cover the boundary (%d of %d)", n12, nall);
    mf_space_destroy(&s);
    mf_mesh_destroy(&mesh);
  }
  return 0;
}

int main(int argc, char **argv)
{
  MPI_Init(&argc, &argv);
  const char *be = t_backend(argc, argv);
  mf_context ctx;
  T_CALL(mf_context_create(MPI_COMM_WORLD, be, &ctx));
  if (argc > 4 && !strcmp(argv[2], "gmsh")) {
    if (check_gmsh(ctx, argv[3], argv[4]) == 77) {
      fprintf(stderr, "SKIP: gmsh not on PATH\n");
      mf_context_destroy(&ctx);
      MPI_Finalize();
      return 77;
    }
  } else {
    for (int p = 1; p <= 4; p++) check_operator(ctx, "square-tris", 2, 2, p);
    for (int p = 1; p <= 3; p++) check_operator(ctx, "cube-tets", 3, 1, p);
    for (int p = 1; p <= 4; p++) check_assembled(ctx, "square-tris", 2, 2, p);
    for (int p = 1; p <= 3; p++) check_assembled(ctx, "cube-tets", 3, 1, p);
    check_elasticity(ctx, "square-tris", 2, 2, 2);
    check_elasticity(ctx, "cube-tets", 3, 1, 2);
    check_tags(ctx);
    /* the highest degree solves (its L2 rule is the finest there is) and converges: on 2 x 2 x 2 triangles
     * its L2 error is 9.1e-6, the discretization error of h = 1/2 at rate 7 (levels 1, 2, 3: 9.10e-6,
     * 7.44e-8, 5.9e-10) */
    check_convergence_builtin(ctx, "square-tris", 2, 6, 1, POISSON_COEF_CONSTANT);
    { /* random vectors of several components: a different value per component */
      mf_mesh mesh;
      mf_space s;
      mf_vector v;
      T_CALL(mf_mesh_create(ctx, "cube-tets", 3, 1, &mesh));
      T_CALL(mf_space_create_components(mesh, 1, 3, &s));
      T_CALL(mf_vector_create(s, &v));
      T_CALL(mf_vector_set_random(v, 42));
      double h[81];
      T_CALL(mf_vector_get_values(v, h));
      int same = 0;
      for (int i = 0; i < 27; i++) same += h[3 * i] == h[3 * i + 1] || h[3 * i] == h[3 * i + 2];
      T_CHECK(same == 0, "random components: %d DoFs with equal components", same);
      mf_vector_destroy(&v);
      mf_space_destroy(&s);
      mf_mesh_destroy(&mesh);
    }
    check_convergence_builtin(ctx, "square-tris", 2, 1, 3, POISSON_COEF_LJUNGKVIST);
    check_convergence_builtin(ctx, "square-tris", 2, 2, 3, POISSON_COEF_CONSTANT);
    check_convergence_builtin(ctx, "square-tris", 2, 3, 3, POISSON_COEF_CONSTANT);
    check_convergence_builtin(ctx, "cube-tets", 3, 1, 3, POISSON_COEF_CONSTANT);
    check_convergence_builtin(ctx, "cube-tets", 3, 2, 2, POISSON_COEF_LJUNGKVIST);
    check_convergence_builtin(ctx, "cube-tets", 3, 3, 1, POISSON_COEF_CONSTANT);
  }
  mf_context_destroy(&ctx);
  return t_finish();
}
