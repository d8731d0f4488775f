/* t03_operator -- properties of the matrix-free operators on every mesh:
 *   symmetry  x.(A y) = y.(A x) (with and without the Dirichlet form), 1e-12 relative;
 *   Laplace annihilates constants; the Jacobi diagonal is positive;
 *   mass applied to 1 sums to the area/volume (cube, deformed cube: 1; ball: -> pi, 4pi/3 with
 *   refinement, at the isoparametric rate). argv[1]: backend. */
#include "mf_test.h"

static double sym_defect(mf_operator A, mf_vector x, mf_vector y, mf_vector t)
{
  double xAy, yAx, nx, nAx;
  T_CALL(mf_operator_apply(A, y, t));
  T_CALL(mf_vector_dot(x, t, &xAy));
  T_CALL(mf_operator_apply(A, x, t));
  T_CALL(mf_vector_dot(y, t, &yAx));
  T_CALL(mf_vector_norm2(x, &nx));
  T_CALL(mf_vector_norm2(t, &nAx));
  return fabs(xAy - yAx) / (nx * nAx);
}

int main(int argc, char **argv)
{
  MPI_Init(&argc, &argv);
  const char *backend = t_backend(argc, argv);
  mf_context ctx;
  T_CALL(mf_context_create(MPI_COMM_WORLD, backend, &ctx));
  const char *meshes[3] = {"cube", "deformed", "ball"};
  for (int dim = 2; dim <= 3; dim++)
    for (int m = 0; m < 3; m++)
      for (int p = 1; p <= (dim == 2 ? 8 : 4); p += (dim == 2 ? 1 : 1)) {
        mf_mesh mesh;
        mf_space space;
        mf_vector x, y, t, one;
        T_CALL(mf_mesh_create(ctx, meshes[m], dim, dim == 2 ? 2 : 1, &mesh));
        T_CALL(mf_space_create(mesh, p, &space));
        T_CALL(mf_vector_create(space, &x));
        T_CALL(mf_vector_create(space, &y));
        T_CALL(mf_vector_create(space, &t));
        T_CALL(mf_vector_create(space, &one));
        T_CALL(mf_vector_set_random(x, 1));
        T_CALL(mf_vector_set_random(y, 2));
        T_CALL(mf_vector_set_value(one, 1.0));
        for (int kind = 0; kind < 3; kind++) {
          mf_operator A;
          const char *kn = kind == 0 ? "mass" : kind == 1 ? "laplace" : "helmholtz";
          mf_quadrature q = (mf_quadrature)((p + kind) % 3);
          if (kind == 0) T_CALL(mf_operator_create_mass(space, q, t_ljungkvist, NULL, &A));
          else if (kind == 1) T_CALL(mf_operator_create_laplace(space, q, t_ljungkvist, NULL, &A));
          else T_CALL(mf_operator_create_helmholtz(space, q, 1.5, 2.0, t_ljungkvist, NULL, &A));
          for (int dir = 0; dir < 2; dir++) {
            T_CALL(mf_operator_set_dirichlet(A, dir));
            double s = sym_defect(A, x, y, t);
            T_CHECK(s < 1e-12, "%s %s dim %d p %d dirichlet %d: symmetry defect %.3e", kn, meshes[m], dim, p, dir, s);
            mf_vector d;
            T_CALL(mf_vector_create(space, &d));
            T_CALL(mf_operator_diagonal(A, d));
            double dmin;
            T_CALL(mf_vector_scale(d, -1.0));
            /* min(d) > 0  <=>  sum of max(-d, 0) = 0: check through the host copy */
            int no;
            mf_space_local_sizes(space, &no, NULL);
            double *h = malloc(sizeof(double) * (no ? no : 1));
            T_CALL(mf_vector_get_values(d, h));
            dmin = INFINITY;
            for (int i = 0; i < no; i++) dmin = fmin(dmin, -h[i]);
            free(h);
            MPI_Allreduce(MPI_IN_PLACE, &dmin, 1, MPI_DOUBLE, MPI_MIN, MPI_COMM_WORLD);
            T_CHECK(dmin > 0.0, "%s %s dim %d p %d: diagonal not positive (min %g)", kn, meshes[m], dim, p, dmin);
            mf_vector_destroy(&d);
          }
          T_CALL(mf_operator_set_dirichlet(A, 0));
          if (kind == 1) {
            double n1, nx;
            T_CALL(mf_operator_apply(A, one, t));
            T_CALL(mf_vector_norm2(t, &n1));
            T_CALL(mf_operator_apply(A, x, t));
            T_CALL(mf_vector_norm2(t, &nx));
            T_CHECK(n1 < 1e-12 * nx, "laplace %s dim %d p %d: |A 1| = %.3e (|A x| = %.3e)", meshes[m], dim, p, n1, nx);
          }
          mf_operator_destroy(&A);
        }
        if (m < 2) { /* cube and deformed cube have volume 1 */
          mf_operator M;
          double vol;
          T_CALL(mf_operator_create_mass(space, MF_QUAD_GAUSS, NULL, NULL, &M));
          T_CALL(mf_operator_apply(M, one, t));
          T_CALL(mf_vector_sum(t, &vol));
          T_CHECK(fabs(vol - 1.0) < 1e-12, "mass %s dim %d p %d: sum(M 1) = %.16g, expected 1", meshes[m], dim, p, vol);
          mf_operator_destroy(&M);
        }
        mf_vector_destroy(&one);
        mf_vector_destroy(&t);
        mf_vector_destroy(&y);
        mf_vector_destroy(&x);
        mf_space_destroy(&space);
        mf_mesh_destroy(&mesh);
      }
  /* ball: sum(M 1) -> pi (2D) and 4pi/3 (3D); the error falls at least by 2^(p+1) per level
   * (isoparametric boundary of degree p) and is small at the finest level. */
  for (int dim = 2; dim <= 3; dim++)
    for (int p = 1; p <= 3; p++) {
      double exact = dim == 2 ? M_PI : 4.0 * M_PI / 3.0, prev = 0.0;
      int lmax = dim == 2 ? 4 : 3;
      for (int level = 1; level <= lmax; level++) {
        mf_mesh mesh;
        mf_space space;
        mf_operator M;
        mf_vector one, t;
        double vol;
        T_CALL(mf_mesh_create(ctx, "ball", dim, level, &mesh));
        T_CALL(mf_space_create(mesh, p, &space));
        T_CALL(mf_operator_create_mass(space, MF_QUAD_GAUSS_P2, NULL, NULL, &M));
        T_CALL(mf_vector_create(space, &one));
        T_CALL(mf_vector_create(space, &t));
        T_CALL(mf_vector_set_value(one, 1.0));
        T_CALL(mf_operator_apply(M, one, t));
        T_CALL(mf_vector_sum(t, &vol));
        double err = fabs(vol - exact);
        double rate = p + 1; /* at least; the volume superconverges like h^2p */
        if (level > 1)
          T_CHECK(err < prev / (0.8 * pow(2.0, rate)), "ball dim %d p %d level %d: volume error %.3e not below %.3e / (0.8 2^%g)",
                  dim, p, level, err, prev, rate);
        if (getenv("MF_TEST_VERBOSE")) printf("ball dim %d p %d level %d: volume error %.3e\n", dim, p, level, err);
        prev = err;
        if (level == lmax) T_CHECK(err < 0.1 * pow(30.0, 1 - p), "ball dim %d p %d: volume error %.3e at level %d", dim, p, err, level);
        mf_vector_destroy(&t);
        mf_vector_destroy(&one);
        mf_operator_destroy(&M);
        mf_space_destroy(&space);
        mf_mesh_destroy(&mesh);
      }
    }
  /* the ball with its coarse trees split 2^dim-fold, one level less: the same mesh */
  for (int dim = 2; dim <= 3; dim++) {
    double vol[2];
    int64_t n[2];
    for (int t = 1; t <= 2; t++) {
      const int trees[3] = {t, t, t};
      mf_mesh mesh;
      mf_space space;
      mf_operator M;
      mf_vector one, y;
      T_CALL(mf_mesh_create_box(ctx, "ball", dim, trees, 3 - t, &mesh));
      T_CALL(mf_space_create(mesh, 2, &space));
      T_CALL(mf_space_num_dofs(space, &n[t - 1]));
      T_CALL(mf_operator_create_mass(space, MF_QUAD_GAUSS, NULL, NULL, &M));
      T_CALL(mf_vector_create(space, &one));
      T_CALL(mf_vector_create(space, &y));
      T_CALL(mf_vector_set_value(one, 1.0));
      T_CALL(mf_operator_apply(M, one, y));
      T_CALL(mf_vector_sum(y, &vol[t - 1]));
      mf_vector_destroy(&one);
      mf_vector_destroy(&y);
      mf_operator_destroy(&M);
      mf_space_destroy(&space);
      mf_mesh_destroy(&mesh);
    }
    T_CHECK(n[0] == n[1] && fabs(vol[0] - vol[1]) < 1e-12, "ball dim %d split trees: %lld DoFs, volume %.16g vs %lld, %.16g",
            dim, (long long)n[1], vol[1], (long long)n[0], vol[0]);
  }
  mf_context_destroy(&ctx);
  return t_finish();
}
