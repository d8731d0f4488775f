/* jacobi.c -- the pointwise preconditioners: MF_PC_NONE (z = r) and MF_PC_JACOBI (z = D^-1 r, D the
 * operator's matrix-free diagonal). CG applies both inside its fused steps (the pointwise entry). */
#include "mg/pc_impl.h"

typedef struct {
  mf_vector dinv; /* 1/diag(A) */
} jacobi_data;

static jacobi_data *jacobi(mf_pc pc) { return (jacobi_data *)pc->data; }

int mf_pc_inverse_diagonal(mf_operator op, mf_vector *dinv)
{
  int ierr = 0;
  if (!*dinv) ierr = mf_vector_create_prec(op->space, MF_PRECISION_DOUBLE, dinv);
  ierr = mf_agree(op->ctx, ierr); /* the diagonal communicates */
  if (!ierr) ierr = mf_operator_diagonal(op, *dinv);
  if (!ierr) ierr = (*dinv)->ops.reciprocal(*dinv);
  return ierr;
}

static int none_apply(mf_pc pc, mf_vector r, mf_vector z)
{
  (void)pc;
  return z->ops.copy(z, r);
}

static int none_pointwise(mf_pc pc, mf_vector *dinv)
{
  (void)pc;
  *dinv = NULL;
  return 1;
}

const mf_pc_type mf_pc_type_none = {
  .kind = MF_PC_NONE,
  .name = "none (MF_PC_NONE)",
  .apply = none_apply,
  .pointwise = none_pointwise,
};

/* collective: what one rank alone can fail (memory, the device) is agreed on before each step that
 * communicates, and at the end */
static int jacobi_setup(mf_pc pc)
{
  double t0 = mf_phase_begin(pc->ctx);
  int ierr = mf_pc_inverse_diagonal(pc->op, &jacobi(pc)->dinv);
  ierr = mf_agree(pc->ctx, ierr);
  mf_phase_end(pc->ctx, MF_PHASE_DIAGONAL, t0);
  return ierr;
}

static int jacobi_apply(mf_pc pc, mf_vector r, mf_vector z) { return z->ops.pmult(z, jacobi(pc)->dinv, r); }

static void jacobi_destroy(mf_pc pc) { mf_vector_destroy(&jacobi(pc)->dinv); }

static int jacobi_pointwise(mf_pc pc, mf_vector *dinv)
{
  const mf_vector d = jacobi(pc)->dinv;
  if (!d || d->prec != MF_PRECISION_DOUBLE) return 0;
  *dinv = d;
  return 1;
}

const mf_pc_type mf_pc_type_jacobi = {
  .kind = MF_PC_JACOBI,
  .name = "Jacobi (MF_PC_JACOBI)",
  .data_size = sizeof(jacobi_data),
  .setup = jacobi_setup,
  .apply = jacobi_apply,
  .destroy = jacobi_destroy,
  .pointwise = jacobi_pointwise,
};
