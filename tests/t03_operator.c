/* t03_operator -- properties of the matrix-free operators on every mesh:
 *   symmetry  x.(A y) = y.(A x) (with and without the Dirichlet form), 1e-12 relative;
 *   Laplace annihilates constants; the Jacobi diagonal is positive;
 *   mass applied to 1 sums to the area/volume (cube, deformed cube: 1; ball: -> pi, 4pi/3 with
 *   refinement, at the isoparametric rate); the ball with its coarse trees split gives the same mass
 *   applied to 1, entry by entry at the same positions (tests/mf_test.h, t_bypos).
 * On several ranks (operator_np2) also: every operator's output (A x with and without the Dirichlet
 * form, x with stale ghost entries; the diagonal) equals that of rank 0 alone (MPI_COMM_SELF) entry by
 * entry at the same positions, 1e-12 relative to the max norm. argv[1]: backend. */
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

/* kind 0 mass, 1 Laplace, 2 Helmholtz, with a coefficient; the quadrature cycles with p and the kind */
static void make_operator(mf_space space, int kind, int p, mf_operator *A)
{
  mf_quadrature q = (mf_quadrature)((p + kind) % 3);
  if (kind == 0) T_CALL(mf_operator_create_mass(space, q, t_ljungkvist, NULL, A));
  else if (kind == 1) T_CALL(mf_operator_create_laplace(space, q, t_ljungkvist, NULL, A));
  else T_CALL(mf_operator_create_helmholtz(space, q, 1.5, 2.0, t_ljungkvist, NULL, A));
}

/* The outputs of an operator gathered by position: A x without and with the Dirichlet form, and the
 * diagonal with it. */
enum { O_AX, O_AX_DIR, O_DIAG, NO };
static void operator_outputs(mf_operator A, mf_vector x, mf_vector t, const t_bypos *bp, double *out[NO])
{
  T_CALL(mf_operator_set_dirichlet(A, 0));
  T_CALL(mf_operator_apply(A, x, t));
  out[O_AX] = t_bypos_gather(bp, t);
  T_CALL(mf_operator_set_dirichlet(A, 1));
  T_CALL(mf_operator_apply(A, x, t));
  out[O_AX_DIR] = t_bypos_gather(bp, t);
  T_CALL(mf_operator_diagonal(A, t));
  out[O_DIAG] = t_bypos_gather(bp, t);
}

/* z = r_2 + r_1 (random vectors of seeds 2 and 1) by an update of the owned entries: its ghost entries
 * are stale, so that an operator needs the import (mf_vector_set_random fills the ghosts too) */
static void ghosts_stale_input(mf_vector z, mf_vector w)
{
  T_CALL(mf_vector_set_random(z, 2));
  T_CALL(mf_vector_set_random(w, 1));
  T_CALL(mf_vector_axpy(z, 1.0, w));
}

/* The same mesh and space on rank 0 alone, to compare the operators of N ranks with */
typedef struct {
  mf_mesh mesh;
  mf_space space;
  mf_vector x, t;
  t_bypos bp;
} one_rank;

static void one_rank_create(mf_context self, const char *meshname, int dim, int level, int p, one_rank *o)
{
  T_CALL(mf_mesh_create(self, meshname, dim, level, &o->mesh));
  T_CALL(mf_space_create(o->mesh, p, &o->space));
  T_CALL(mf_vector_create(o->space, &o->x));
  T_CALL(mf_vector_create(o->space, &o->t));
  ghosts_stale_input(o->x, o->t);
  t_bypos_create(self, o->space, &o->bp);
}

static void one_rank_destroy(one_rank *o)
{
  t_bypos_destroy(&o->bp);
  mf_vector_destroy(&o->t);
  mf_vector_destroy(&o->x);
  mf_space_destroy(&o->space);
  mf_mesh_destroy(&o->mesh);
}

int main(int argc, char **argv)
{
  MPI_Init(&argc, &argv);
  const char *backend = t_backend(argc, argv);
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  const int against_one = size > 1; /* compare with rank 0 alone */
  mf_context ctx, self = NULL;
  T_CALL(mf_context_create(MPI_COMM_WORLD, backend, &ctx));
  if (against_one && rank == 0) T_CALL(mf_context_create(MPI_COMM_SELF, backend, &self));
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
        t_bypos bp;
        one_rank o;
        mf_vector z = NULL; /* the input of the comparison with one rank */
        if (against_one) {
          t_bypos_create(ctx, space, &bp);
          T_CALL(mf_vector_create(space, &z));
          ghosts_stale_input(z, t);
        }
        if (against_one && rank == 0) one_rank_create(self, meshes[m], dim, dim == 2 ? 2 : 1, p, &o);
        for (int kind = 0; kind < 3; kind++) {
          mf_operator A;
          const char *kn = kind == 0 ? "mass" : kind == 1 ? "laplace" : "helmholtz";
          make_operator(space, kind, p, &A);
          if (against_one) { /* the outputs of N ranks against those of rank 0 alone */
            static const char *const oname[NO] = {"A x", "A x (Dirichlet form)", "diagonal (Dirichlet form)"};
            double *on[NO], *o1[NO];
            operator_outputs(A, z, t, &bp, on);
            if (rank == 0) {
              mf_operator A1;
              make_operator(o.space, kind, p, &A1);
              operator_outputs(A1, o.x, o.t, &o.bp, o1);
              mf_operator_destroy(&A1);
              for (int k = 0; k < NO; k++) {
                T_BYPOS_CHECK(&bp, on[k], &o.bp, o1[k], 1e-12, "%s %s dim %d p %d: %s on %d ranks and on 1 rank", kn,
                              meshes[m], dim, p, oname[k], size);
                free(o1[k]);
              }
            }
            for (int k = 0; k < NO; k++) free(on[k]);
          }
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
        if (against_one) {
          t_bypos_destroy(&bp);
          mf_vector_destroy(&z);
        }
        if (against_one && rank == 0) one_rank_destroy(&o);
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
  /* the ball with its coarse trees split 2^dim-fold, one level less: the same mesh, so the same DoFs
   * (numbered otherwise) and the same mass applied to 1 at each of them */
  for (int dim = 2; dim <= 3; dim++) {
    double vol[2], *m1[2];
    int64_t n[2];
    t_bypos bp[2];
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
      t_bypos_create(ctx, space, &bp[t - 1]);
      m1[t - 1] = t_bypos_gather(&bp[t - 1], y);
      mf_vector_destroy(&one);
      mf_vector_destroy(&y);
      mf_operator_destroy(&M);
      mf_space_destroy(&space);
      mf_mesh_destroy(&mesh);
    }
    T_CHECK(n[0] == n[1] && fabs(vol[0] - vol[1]) < 1e-12, "ball dim %d split trees: %lld DoFs, volume %.16g vs %lld, %.16g",
            dim, (long long)n[1], vol[1], (long long)n[0], vol[0]);
    if (rank == 0)
      T_BYPOS_CHECK(&bp[1], m1[1], &bp[0], m1[0], 1e-12, "ball dim %d: M 1 with split trees and with the others", dim);
    for (int t = 0; t < 2; t++) {
      free(m1[t]);
      t_bypos_destroy(&bp[t]);
    }
  }
  if (self) mf_context_destroy(&self);
  mf_context_destroy(&ctx);
  return t_finish();
}
