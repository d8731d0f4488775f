/* petsc.c -- an mfree operator as a PETSc matrix: a MatShell whose MatMult is mf_operator_apply and
 * whose diagonal is mfree's, solved with KSPCG + PCJACOBI on mfree-poisson's manufactured problem
 * (apps/poisson.h) and compared with mfree's own Jacobi CG: the same iterations (+-1) and the same
 * solution (1e-8 relative); the exit status says whether they agree. PETSc's Vec holds the rank's
 * owned entries in mfree's order, so the copies between the two are plain copies of nowned values
 * (through host arrays: on the cuda backend each product uploads x and downloads y once).
 *   example-petsc [backend [level]]           backend "cpu" (default), "cuda" or "auto"
 * A level that is not a whole number, or a third argument, exits 2 (a typo must not run level 0). */
#include <errno.h>
#include <limits.h>
#include <petscksp.h>

#include "poisson.h"

#define CALL(expr)                                                                \
  do {                                                                            \
    if ((expr)) {                                                                 \
      fprintf(stderr, "petsc: %s failed: %s\n", #expr, mf_last_error_message()); \
      MPI_Abort(MPI_COMM_WORLD, 1);                                               \
    }                                                                             \
  } while (0)

typedef struct {
  mf_operator A;
  mf_vector x, y; /* work vectors of the operator's space */
  int nowned;
} shell_ctx;

/* mfree vector <- PETSc Vec (owned entries) */
static PetscErrorCode to_mfree(const shell_ctx *s, Vec v, mf_vector m)
{
  const PetscScalar *va;
  double *ma;
  PetscFunctionBeginUser;
  PetscCall(VecGetArrayRead(v, &va));
  CALL(mf_vector_get_array(m, MF_MEM_HOST, &ma));
  memcpy(ma, va, sizeof(double) * (size_t)s->nowned);
  CALL(mf_vector_restore_array(m, &ma));
  PetscCall(VecRestoreArrayRead(v, &va));
  PetscFunctionReturn(0);
}

/* PETSc Vec <- mfree vector (owned entries) */
static PetscErrorCode from_mfree(const shell_ctx *s, mf_vector m, Vec v)
{
  const double *ma;
  PetscScalar *va;
  PetscFunctionBeginUser;
  PetscCall(VecGetArrayWrite(v, &va));
  CALL(mf_vector_get_array_read(m, MF_MEM_HOST, &ma));
  memcpy(va, ma, sizeof(double) * (size_t)s->nowned);
  CALL(mf_vector_restore_array_read(m, &ma));
  PetscCall(VecRestoreArrayWrite(v, &va));
  PetscFunctionReturn(0);
}

static PetscErrorCode shell_mult(Mat M, Vec x, Vec y)
{
  shell_ctx *s;
  PetscFunctionBeginUser;
  PetscCall(MatShellGetContext(M, &s));
  PetscCall(to_mfree(s, x, s->x));
  CALL(mf_operator_apply(s->A, s->x, s->y));
  PetscCall(from_mfree(s, s->y, y));
  PetscFunctionReturn(0);
}

static PetscErrorCode shell_diagonal(Mat M, Vec d)
{
  shell_ctx *s;
  PetscFunctionBeginUser;
  PetscCall(MatShellGetContext(M, &s));
  CALL(mf_operator_diagonal(s->A, s->y));
  PetscCall(from_mfree(s, s->y, d));
  PetscFunctionReturn(0);
}

/* The level argument: a whole number (the library checks its range), anything else refused. */
static int parse_level(const char *s, int *level)
{
  char *end;
  errno = 0;
  const long v = strtol(s, &end, 10);
  if (end == s || *end || errno || v < INT_MIN || v > INT_MAX) return 1;
  *level = (int)v;
  return 0;
}

int main(int argc, char **argv)
{
  MPI_Init(&argc, &argv); /* before PETSc, which then leaves MPI_Finalize to us */
  const char *backend = argc > 1 ? argv[1] : "cpu";
  int level = 3, rank;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  if (argc > 3 || (argc > 2 && parse_level(argv[2], &level))) { /* a typo must not run another problem */
    if (rank == 0) {
      if (argc > 3) fprintf(stderr, "petsc: unexpected argument '%s'", argv[3]);
      else fprintf(stderr, "petsc: level '%s' is not a whole number", argv[2]);
      fprintf(stderr, " (usage: example-petsc [backend [level]])\n");
    }
    MPI_Finalize();
    return 2;
  }
  PetscCall(PetscInitializeNoArguments());
  mf_context ctx;
  mf_mesh mesh;
  mf_space space;
  mf_operator A;
  mf_vector b, g, t, xref, xp;
  mf_cg cg;
  mf_cg_info info;
  poisson_coef coef = POISSON_COEF_LJUNGKVIST;
  const double rtol = 1e-10;
  CALL(mf_context_create(MPI_COMM_WORLD, backend, &ctx));
  CALL(mf_mesh_create(ctx, "ball", 3, level, &mesh));
  CALL(mf_space_create(mesh, 2, &space));
  CALL(mf_operator_create_laplace(space, MF_QUAD_GAUSS, poisson_c, &coef, &A));
  mf_vector *vs[] = {&b, &g, &t, &xref, &xp};
  for (int i = 0; i < 5; i++) CALL(mf_vector_create(space, vs[i]));
  /* A_0 w = F - A g_h (poisson.h): w zero on the boundary, A_0 the Dirichlet form */
  CALL(mf_vector_assemble_rhs(b, poisson_f, &coef));
  CALL(mf_vector_set_boundary(g, poisson_u, NULL));
  CALL(mf_operator_apply(A, g, t));
  CALL(mf_vector_axpy(b, -1.0, t));
  CALL(mf_vector_zero_boundary(b));
  CALL(mf_operator_set_dirichlet(A, 1));

  /* mfree's own CG (Jacobi) */
  CALL(mf_cg_create(A, &cg));
  CALL(mf_cg_set_tolerance(cg, rtol, 2000));
  CALL(mf_vector_set_value(xref, 0.0));
  CALL(mf_cg_solve(cg, b, xref, &info));

  /* PETSc: the same operator as a MatShell, KSPCG + PCJACOBI with mfree's stopping rule:
   * sqrt(r^T D^-1 r) (the natural norm) down by rtol from x = 0, no absolute tolerance */
  int64_t ndofs;
  shell_ctx s = {A, NULL, NULL, 0};
  CALL(mf_space_num_dofs(space, &ndofs));
  CALL(mf_space_local_sizes(space, &s.nowned, NULL));
  CALL(mf_vector_create(space, &s.x));
  CALL(mf_vector_create(space, &s.y));
  Mat M;
  Vec pb, px;
  KSP ksp;
  PC pc;
  PetscInt its;
  KSPConvergedReason reason;
  PetscCall(MatCreateShell(PETSC_COMM_WORLD, s.nowned, s.nowned, (PetscInt)ndofs, (PetscInt)ndofs, &s, &M));
  PetscCall(MatShellSetOperation(M, MATOP_MULT, (void (*)(void))shell_mult));
  PetscCall(MatShellSetOperation(M, MATOP_GET_DIAGONAL, (void (*)(void))shell_diagonal));
  PetscCall(MatCreateVecs(M, &px, &pb));
  PetscCall(from_mfree(&s, b, pb));
  PetscCall(KSPCreate(PETSC_COMM_WORLD, &ksp));
  PetscCall(KSPSetOperators(ksp, M, M));
  PetscCall(KSPSetType(ksp, KSPCG));
  PetscCall(KSPGetPC(ksp, &pc));
  PetscCall(PCSetType(pc, PCJACOBI));
  PetscCall(KSPSetNormType(ksp, KSP_NORM_NATURAL));
  PetscCall(KSPSetTolerances(ksp, rtol, 0.0, PETSC_DEFAULT, 2000));
  PetscCall(KSPSolve(ksp, pb, px));
  PetscCall(KSPGetIterationNumber(ksp, &its));
  PetscCall(KSPGetConvergedReason(ksp, &reason));

  double dx, nx;
  PetscCall(to_mfree(&s, px, xp));
  CALL(mf_vector_axpy(xp, -1.0, xref));
  CALL(mf_vector_norm2(xp, &dx));
  CALL(mf_vector_norm2(xref, &nx));
  const int ok = reason > 0 && info.converged && abs((int)its - info.iterations) <= 1 && dx <= 1e-8 * nx;
  if (rank == 0) {
    printf("backend %s, %lld DoFs, PETSc %d.%d.%d\n", mf_context_backend(ctx), (long long)ndofs, PETSC_VERSION_MAJOR,
           PETSC_VERSION_MINOR, PETSC_VERSION_SUBMINOR);
    printf("mfree CG:        %d iterations\n", info.iterations);
    printf("KSPCG+PCJACOBI:  %d iterations (%s)\n", (int)its, KSPConvergedReasons[reason]);
    printf("|x_petsc - x_mfree| / |x_mfree| = %.2e  %s\n", dx / nx, ok ? "agree" : "DIFFER");
  }
  PetscCall(KSPDestroy(&ksp));
  PetscCall(VecDestroy(&px));
  PetscCall(VecDestroy(&pb));
  PetscCall(MatDestroy(&M));
  mf_vector_destroy(&s.y);
  mf_vector_destroy(&s.x);
  mf_cg_destroy(&cg);
  for (int i = 0; i < 5; i++) mf_vector_destroy(vs[i]);
  mf_operator_destroy(&A);
  mf_space_destroy(&space);
  mf_mesh_destroy(&mesh);
  mf_context_destroy(&ctx);
  PetscCall(PetscFinalize());
  MPI_Finalize();
  return ok ? 0 : 1;
}
