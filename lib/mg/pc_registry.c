/* pc_registry.c -- mf_pc_create: the preconditioner types that a kind names. The one file that
 * knows them all, above them (pc_impl.h): the types call the generic functions of pc.c, never this
 * file, so multigrid, whose levels use Chebyshev preconditioners, is one entry here and no circle. */
#include "mg/pc_impl.h"

/* by kind; a shell needs its function (mf_pc_create_shell) */
static const mf_pc_type *const pc_types[] = {
  [MF_PC_NONE] = &mf_pc_type_none,
  [MF_PC_JACOBI] = &mf_pc_type_jacobi,
  [MF_PC_CHEBYSHEV] = &mf_pc_type_chebyshev,
  [MF_PC_MULTIGRID] = &mf_pc_type_multigrid,
};

int mf_pc_create(mf_operator op, mf_pc_kind kind, mf_pc *pc)
{
  if (pc) *pc = NULL; /* NULL on every failure, the first argument's included */
  MF_CHECK(op, NULL, MF_ERR_NULL, "operator is NULL");
  const int ntypes = (int)(sizeof pc_types / sizeof pc_types[0]);
  MF_CHECK((int)kind >= 0 && (int)kind < ntypes && pc_types[kind], op->ctx, MF_ERR_ARGUMENT,
           "preconditioner kind %d unknown here (MF_PC_NONE, MF_PC_JACOBI, MF_PC_CHEBYSHEV or MF_PC_MULTIGRID; shells "
           "come from mf_pc_create_shell)",
           (int)kind);
  return mf_pc_create_type(op, pc_types[kind], pc);
}
