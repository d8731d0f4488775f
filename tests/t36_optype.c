/* t36_optype -- the operator type table (mf_optype, lib/operator_impl.h): what a type lacks is refused
 * with MF_ERR_UNSUPPORTED and a message naming the operator, and what it has keeps working.
 *   built-in types  a shell operator (no other space, precision or assembly; no diagonal when none was
 *                   given; its own boundary conditions), an assembled one, and on one rank the simplex
 *                   family's (other levels and copies in float made; elasticity not assembled);
 *   a bare copy     a hex Laplace operator switched to a copy of its type without the optional entries
 *                   (diagonal, create_like, create_single, assembly) and without the Dirichlet form: every
 *                   public function that needs one of them refuses, Jacobi and multigrid refuse, while
 *                   apply gives the same y = A x as before the switch (to 1e-14: on cuda the atomic
 *                   scatter may add in another order); back on its own type the
 *                   operator works again (diagonal, a copy in float, a coarser level).
 * Usage: t36_optype [cpu|cuda] (1 or more ranks; the simplex part on one rank). */
#include "mf_test.h"
#include "mf_testing.h"

#include <math.h>

static int shell_apply(mf_vector x, mf_vector y, void *u)
{
  (void)u;
  return mf_vector_copy(y, x);
}

static int shell_diag(mf_vector x, mf_vector d, void *u)
{
  (void)x, (void)u;
  return mf_vector_set_value(d, 2.0);
}

static void shell_types(mf_context ctx)
{
  mf_mesh mesh = NULL;
  mf_space s = NULL;
  mf_operator S = NULL, D = NULL, X = NULL;
  mf_vector d = NULL;
  mf_pc pc = NULL;
  T_CALL(mf_mesh_create(ctx, "cube", 2, 2, &mesh));
  T_CALL(mf_space_create(mesh, 2, &s));
  T_CALL(mf_vector_create(s, &d));
  T_CALL(mf_operator_create_shell(s, shell_apply, NULL, NULL, &S));
  EXPECT(mf_operator_create_like(S, s, &X), MF_ERR_UNSUPPORTED, "can be made again, not a shell operator");
  EXPECT(mf_operator_create_single(S, &X), MF_ERR_UNSUPPORTED, "single-precision copy, not a shell operator");
  EXPECT(mf_operator_create_assembled(S, &X), MF_ERR_UNSUPPORTED, "can be assembled, not a shell operator");
  EXPECT(mf_operator_diagonal(S, d), MF_ERR_UNSUPPORTED, "a shell operator has no diagonal function");
  EXPECT(mf_operator_set_dirichlet(S, 1), MF_ERR_UNSUPPORTED, "handles its boundary conditions itself");
  EXPECT(mf_pc_create(S, MF_PC_MULTIGRID, &pc), MF_ERR_UNSUPPORTED, "not a shell operator");
  T_CHECK(X == NULL && pc == NULL, "a refused creation left an object");
  /* with a diagonal function the same type has the entry */
  T_CALL(mf_operator_create_shell(s, shell_apply, shell_diag, NULL, &D));
  T_CALL(mf_operator_diagonal(D, d));
  double sum = 0.0;
  int64_t n = 0;
  T_CALL(mf_vector_sum(d, &sum));
  T_CALL(mf_space_num_dofs(s, &n));
  T_CHECK(sum == 2.0 * (double)n, "shell diagonal: sum %g, expected %g", sum, 2.0 * (double)n);
  mf_operator_destroy(&D);
  mf_operator_destroy(&S);
  mf_vector_destroy(&d);
  mf_space_destroy(&s);
  mf_mesh_destroy(&mesh);
}

static void assembled_type(mf_context ctx)
{
  mf_mesh mesh = NULL;
  mf_space s = NULL;
  mf_operator A = NULL, C = NULL, X = NULL;
  T_CALL(mf_mesh_create(ctx, "deformed", 2, 2, &mesh));
  T_CALL(mf_space_create(mesh, 2, &s));
  T_CALL(mf_operator_create_laplace(s, MF_QUAD_GAUSS, NULL, NULL, &A));
  T_CALL(mf_operator_create_assembled(A, &C));
  EXPECT(mf_operator_create_like(C, s, &X), MF_ERR_UNSUPPORTED, "can be made again, not an assembled (CSR) operator");
  EXPECT(mf_operator_create_single(C, &X), MF_ERR_UNSUPPORTED, "single-precision copy, not an assembled (CSR) operator");
  EXPECT(mf_operator_create_assembled(C, &X), MF_ERR_UNSUPPORTED, "can be assembled, not an assembled (CSR) operator");
  EXPECT(mf_operator_set_geometry(C, MF_GEOMETRY_ON_THE_FLY), MF_ERR_UNSUPPORTED, "(this one is assembled)");
  EXPECT(mf_operator_set_cells_per_block(C, 1), MF_ERR_UNSUPPORTED, "on hexahedra only");
  T_CHECK(X == NULL, "a refused creation left an object");
  mf_operator_destroy(&C);
  mf_operator_destroy(&A);
  mf_space_destroy(&s);
  mf_mesh_destroy(&mesh);
}

static void simplex_type(mf_context ctx)
{
  mf_mesh mesh = NULL;
  mf_space s = NULL, sv = NULL;
  mf_operator A = NULL, E = NULL, X = NULL;
  mf_pc pc = NULL;
  T_CALL(mf_mesh_create(ctx, "square-tris", 2, 2, &mesh));
  T_CALL(mf_space_create(mesh, 2, &s));
  T_CALL(mf_space_create_components(mesh, 2, 2, &sv));
  T_CALL(mf_operator_create_laplace(s, MF_QUAD_GAUSS, NULL, NULL, &A));
  T_CALL(mf_operator_create_elasticity(sv, 1.2, 0.8, &E));
  T_CALL(mf_operator_create_like(A, s, &X)); /* made again on a space (multigrid's levels) */
  T_CHECK(X && X->type == A->type && X->dirichlet == A->dirichlet, "create_like gave another kind of operator");
  mf_operator_destroy(&X);
  T_CALL(mf_operator_create_single(A, &X)); /* copies in float (multigrid's float V-cycle; t41 checks them) */
  T_CHECK(X && X->type == A->type && X->prec == MF_PRECISION_FLOAT && X->dirichlet == A->dirichlet,
          "create_single gave another kind of operator");
  mf_operator_destroy(&X);
  T_CALL(mf_operator_create_single(E, &X));
  T_CHECK(X && X->type == E->type && X->prec == MF_PRECISION_FLOAT, "create_single gave another kind of operator");
  mf_operator_destroy(&X);
  EXPECT(mf_operator_create_assembled(E, &X), MF_ERR_UNSUPPORTED, "simplex elasticity operators are not assembled");
  T_CHECK(X == NULL, "a refused creation left an object");
  T_CALL(mf_pc_create(A, MF_PC_MULTIGRID, &pc)); /* multigrid on simplices (cpu) */
  mf_pc_destroy(&pc);
  mf_operator_destroy(&E);
  mf_operator_destroy(&A);
  mf_space_destroy(&sv);
  mf_space_destroy(&s);
  mf_mesh_destroy(&mesh);
}

/* y = A x as host values */
static double *product(mf_operator A, mf_vector x, mf_vector y, int n)
{
  double *h = malloc(sizeof(double) * ((size_t)n + 1));
  T_CALL(mf_operator_apply(A, x, y));
  T_CALL(mf_vector_get_values(y, h));
  return h;
}

static void bare_type(mf_context ctx)
{
  mf_mesh mesh = NULL;
  mf_space s = NULL;
  mf_operator A = NULL, X = NULL;
  mf_vector x = NULL, y = NULL;
  mf_pc pc = NULL;
  T_CALL(mf_mesh_create(ctx, "deformed", 3, 2, &mesh));
  T_CALL(mf_space_create(mesh, 2, &s));
  T_CALL(mf_operator_create_laplace(s, MF_QUAD_GAUSS, NULL, NULL, &A));
  T_CALL(mf_operator_set_dirichlet(A, 1));
  T_CALL(mf_vector_create(s, &x));
  T_CALL(mf_vector_create(s, &y));
  T_CALL(mf_vector_set_random(x, 5));
  int nowned = 0, nlocal = 0;
  T_CALL(mf_space_local_sizes(s, &nowned, &nlocal));
  double *before = product(A, x, y, nowned);

  const mf_optype *own = A->type;
  mf_optype bare = *own;
  bare.diagonal = NULL;
  bare.create_like = NULL;
  bare.create_single = NULL;
  bare.assemble_check = NULL;
  bare.assemble = NULL;
  bare.linearize = NULL;
  bare.dirichlet_form = 0;
  A->type = &bare;
  EXPECT(mf_operator_diagonal(A, y), MF_ERR_UNSUPPORTED, "a matrix-free Laplace operator has no diagonal function");
  EXPECT(mf_operator_create_like(A, s, &X), MF_ERR_UNSUPPORTED, "can be made again, not a matrix-free Laplace operator");
  EXPECT(mf_operator_create_single(A, &X), MF_ERR_UNSUPPORTED, "single-precision copy, not a matrix-free Laplace operator");
  EXPECT(mf_operator_create_assembled(A, &X), MF_ERR_UNSUPPORTED, "can be assembled, not a matrix-free Laplace operator");
  EXPECT(mf_operator_set_dirichlet(A, 0), MF_ERR_UNSUPPORTED, "handles its boundary conditions itself");
  EXPECT(mf_pc_create(A, MF_PC_MULTIGRID, &pc), MF_ERR_UNSUPPORTED,
         "multigrid needs a matrix-free mass, Laplace or Helmholtz operator, not a matrix-free Laplace operator");
  T_CHECK(X == NULL && pc == NULL, "a refused creation left an object");
  /* Jacobi needs the diagonal: refused at set-up */
  if (mf_pc_create(A, MF_PC_JACOBI, &pc) == 0) {
    EXPECT(mf_pc_setup(pc), MF_ERR_UNSUPPORTED, "has no diagonal function");
    mf_pc_destroy(&pc);
  } else EXPECT(0, MF_ERR_UNSUPPORTED, "has no diagonal function");
  double *bare_y = product(A, x, y, nowned);
  double diff = 0.0, scale = 0.0; /* the same product (on cuda the atomic scatter's order may differ) */
  for (int i = 0; i < nowned; i++) {
    diff = fmax(diff, fabs(before[i] - bare_y[i]));
    scale = fmax(scale, fabs(before[i]));
  }
  T_CHECK(diff <= 1e-14 * scale, "apply on the bare type differs from apply on its own type by %.3e (of %.3e)", diff,
          scale);
  A->type = own; /* its own table again: the entries work */
  T_CALL(mf_operator_diagonal(A, y));
  T_CALL(mf_operator_create_single(A, &X));
  mf_operator_destroy(&X);
  T_CALL(mf_operator_create_like(A, s, &X));
  mf_operator_destroy(&X);
  free(before);
  free(bare_y);
  mf_vector_destroy(&x);
  mf_vector_destroy(&y);
  mf_operator_destroy(&A);
  mf_space_destroy(&s);
  mf_mesh_destroy(&mesh);
}

int main(int argc, char **argv)
{
  MPI_Init(&argc, &argv);
  const char *be = t_backend(argc, argv);
  int size;
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  mf_context ctx;
  T_CALL(mf_context_create(MPI_COMM_WORLD, be, &ctx));
  shell_types(ctx);
  assembled_type(ctx);
  if (size == 1) simplex_type(ctx);
  bare_type(ctx);
  mf_context_destroy(&ctx);
  return t_finish();
}
