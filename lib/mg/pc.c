/* pc.c -- the mf_pc object: preconditioners z = M^-1 r behind one table (pc_impl.h), so that CG
 * (lib/solvers/cg.c) and multigrid's smoothers (mg.c) call them alike. The functions here check the
 * arguments and call the type's entries; they never name a type. The types: none and Jacobi
 * (jacobi.c), Chebyshev (chebyshev.c), multigrid (mg.c), shell (shell.c); mf_pc_create, which
 * chooses one by kind, is in pc_registry.c, above them all. */
#include "mg/pc_impl.h"

mf_operator mf_pc_operator(mf_pc pc) { return pc->op; }

int mf_pc_pointwise(mf_pc pc, mf_vector *dinv)
{
  *dinv = NULL;
  return pc->type->pointwise ? pc->type->pointwise(pc, dinv) : 0;
}

int mf_pc_create_type(mf_operator op, const mf_pc_type *type, mf_pc *pc)
{
  MF_CHECK(op, NULL, MF_ERR_NULL, "operator is NULL");
  if (type->check) MF_CALL(type->check(op));
  MF_CHECK(pc, op->ctx, MF_ERR_NULL, "output pointer pc is NULL");
  *pc = NULL;
  mf_pc p;
  /* collective, as every creation; the type's data in the same allocation */
  MF_CALL(mf_calloc_agreed(op->ctx, 1, sizeof(struct mf_pc_s) + type->data_size, &p));
  p->ctx = op->ctx;
  p->op = op;
  mf_operator_retain(op);
  p->refs = 1;
  p->type = type;
  if (type->init) type->init(p);
  *pc = p;
  return 0;
}

int mf_pc_setup(mf_pc pc)
{
  MF_CHECK(pc, NULL, MF_ERR_NULL, "preconditioner is NULL");
  if ((pc->ready && (pc->op_revision == pc->op->revision || pc->kept)) || !pc->type->setup) return 0;
  const int ierr = pc->type->setup(pc); /* the first time, after a setting changed, or at a new operator state */
  pc->ready = !ierr;
  pc->op_revision = pc->op->revision;
  return ierr;
}

void mf_pc_keep(mf_pc pc, int on)
{
  pc->kept = on != 0;
  if (pc->type->keep) pc->type->keep(pc, on);
}

int mf_pc_to_single(mf_pc pc, mf_operator op)
{
  MF_CHECK(pc->type->to_single && pc->ready && op->space == pc->op->space && op->prec == MF_PRECISION_FLOAT, op->ctx,
           MF_ERR_ARGUMENT, "only a set-up Chebyshev preconditioner moves to a float copy of its operator");
  MF_CALL(pc->type->to_single(pc, op));
  mf_operator_retain(op);
  mf_operator_release(pc->op);
  pc->op = op;
  pc->op_revision = op->revision; /* set up for it: moved, not made again */
  return 0;
}

int mf_pc_apply(mf_pc pc, mf_vector r, mf_vector z)
{
  MF_CHECK(pc, NULL, MF_ERR_NULL, "preconditioner is NULL");
  mf_context ctx = pc->ctx;
  MF_CALL(mf_vector_check_pair(r, z, "r", "z"));
  MF_CHECK(r->prec == pc->op->prec, ctx, MF_ERR_INCOMPATIBLE,
           "vectors in %s for a preconditioner in %s", mf_precision_name(r->prec), mf_precision_name(pc->op->prec));
  char why[192];
  MF_CHECK(r->space == pc->op->space, ctx, MF_ERR_INCOMPATIBLE, "vectors r and z belong to another space%s",
           mf_space_mismatch(r->space, pc->op->space, "the preconditioner's operator has", why, sizeof why));
  MF_CHECK(r != z, ctx, MF_ERR_ARGUMENT, "r and z must be different vectors");
  MF_CALL(mf_vector_access(r, MF_ACCESS_READ, "r"));
  MF_CALL(mf_vector_access(z, MF_ACCESS_READ_WRITE, "z"));
  int ierr = mf_pc_setup(pc);
  if (!ierr) ierr = pc->type->apply(pc, r, z);
  return mf_vector_written(z, ierr);
}

void mf_pc_retain(mf_pc pc) { pc->refs++; }

void mf_pc_release(mf_pc p)
{
  if (!p || --p->refs > 0) return;
  if (p->type->destroy) p->type->destroy(p);
  mf_operator_release(p->op);
  free(p);
}

int mf_pc_destroy(mf_pc *pc)
{
  if (!pc || !*pc) return 0;
  mf_pc p = *pc;
  *pc = NULL;
  mf_pc_release(p);
  return 0;
}
