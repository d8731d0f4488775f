/* t16_assembled -- the assembled operator's memory checks: a matrix that would not fit in the host
 * memory (a small test limit) is refused before its arrays are allocated, with MF_ERR_MEMORY and a
 * message naming the bytes needed and available, on every rank; a failure of any one allocation of
 * the assembly returns MF_ERR_MEMORY and leaves nothing behind (run under valgrind too). */
#include "mf_test.h"
#include "mfree_impl.h"

/* |S x - A x| / |A x| for a random x */
static double apply_difference(mf_operator A, mf_operator S, mf_space space, int seed)
{
  mf_vector x, y1, y2;
  T_CALL(mf_vector_create(space, &x));
  T_CALL(mf_vector_create(space, &y1));
  T_CALL(mf_vector_create(space, &y2));
  T_CALL(mf_vector_set_random(x, seed));
  T_CALL(mf_operator_apply(A, x, y1));
  T_CALL(mf_operator_apply(S, x, y2));
  double n1, nd;
  T_CALL(mf_vector_norm2(y1, &n1));
  T_CALL(mf_vector_axpy(y2, -1.0, y1));
  T_CALL(mf_vector_norm2(y2, &nd));
  mf_vector_destroy(&x);
  mf_vector_destroy(&y1);
  mf_vector_destroy(&y2);
  return nd / n1;
}

static void check_memory(mf_context ctx)
{
  mf_mesh mesh;
  mf_space space;
  mf_operator A, S = NULL;
  T_CALL(mf_mesh_create(ctx, "cube", 2, 3, &mesh));
  T_CALL(mf_space_create(mesh, 2, &space));
  T_CALL(mf_operator_create_laplace(space, MF_QUAD_GAUSS, NULL, NULL, &A));
  /* far too little memory: refused before any allocation */
  mf_test_set_host_available(1000.0);
  mf_test_fail_host_alloc(0);
  EXPECT(mf_operator_create_assembled(A, &S), MF_ERR_MEMORY, "needs about");
  EXPECT(mf_operator_create_assembled(A, &S), MF_ERR_MEMORY, "GB are available");
  T_CHECK(S == NULL, "refused assembly left an operator");
  T_CHECK(mf_test_host_alloc_count() == 0, "refused assembly allocated %ld times first", mf_test_host_alloc_count());
  /* room for the pattern's work arrays, not for its columns and the values: refused after counting */
  const double work = 16.0 * (space->nlocal + 1.0) + 4.0 * (double)space->ncells * space->npc;
  mf_test_set_host_available(work + 1000.0);
  EXPECT(mf_operator_create_assembled(A, &S), MF_ERR_MEMORY, "nonzeros");
  T_CHECK(S == NULL, "refused assembly left an operator");
  mf_test_set_host_available(0.0);
  T_CALL(mf_operator_create_assembled(A, &S));
  double d = apply_difference(A, S, space, 3);
  T_CHECK(d <= 1e-12, "after refusals: |S x - A x| / |A x| = %.3e", d);
  mf_operator_destroy(&S);
  /* each allocation of an assembly on a fresh space failing in turn: MF_ERR_MEMORY, no operator, no leak */
  mf_space_destroy(&space);
  mf_operator_destroy(&A);
  T_CALL(mf_space_create(mesh, 2, &space));
  T_CALL(mf_operator_create_laplace(space, MF_QUAD_GAUSS, NULL, NULL, &A));
  int ok = 0;
  for (long k = 1; k < 100 && !ok; k++) {
    mf_test_fail_host_alloc(k);
    int ierr = mf_operator_create_assembled(A, &S);
    mf_test_fail_host_alloc(0);
    if (!ierr) {
      ok = 1;
      T_CHECK(k > 5, "assembly succeeded with allocation %ld failing", k);
    } else {
      T_CHECK(ierr == MF_ERR_MEMORY && S == NULL, "allocation %ld failing: code %d (%s), operator %p", k, ierr,
              mf_last_error_message(), (void *)S);
      T_CHECK(strstr(mf_last_error_message(), "out of host memory") != NULL, "allocation %ld failing: message '%s'", k,
              mf_last_error_message());
    }
  }
  T_CHECK(ok, "assembly failed with every allocation");
  d = apply_difference(A, S, space, 5);
  T_CHECK(d <= 1e-12, "after failed allocations: |S x - A x| / |A x| = %.3e", d);
  mf_operator_destroy(&S);
  mf_operator_destroy(&A);
  mf_space_destroy(&space);
  mf_mesh_destroy(&mesh);
}

int main(int argc, char **argv)
{
  MPI_Init(&argc, &argv);
  mf_context ctx;
  T_CALL(mf_context_create(MPI_COMM_WORLD, "cpu", &ctx));
  check_memory(ctx);
  mf_context_destroy(&ctx);
  return t_finish();
}
