/* operator_shell.c -- the shell operator type: the user's apply and diagonal functions behind the
 * operator interface (its data: the functions and their user data). It applies its boundary conditions
 * itself, is not assembled and has no other precision or space. */
#include "operator_impl.h"

typedef struct {
  mf_shell_apply_fn apply, diag;
  void *user;
} shell_op;

static int shell_apply(mf_operator op, mf_vector x, mf_vector y, int ierr)
{
  if (ierr) return ierr;
  const shell_op *sh = (const shell_op *)op->data;
  const unsigned long serial = mf_error_serial();
  return mf_callback_result(op->ctx, mf_vector_call_user(sh->apply, x, y, sh->user, "the shell operator's apply", "x", "y"),
                            serial, "shell operator's apply function");
}

static int shell_diagonal(mf_operator op, mf_vector d)
{
  const shell_op *sh = (const shell_op *)op->data;
  const unsigned long serial = mf_error_serial();
  return mf_callback_result(
      op->ctx, mf_vector_call_user(sh->diag, d, d, sh->user, "the shell operator's diagonal", "diag", "diag"), serial,
      "shell operator's diagonal function");
}

static void shell_destroy(mf_operator op)
{
  free(op->data);
  op->data = NULL;
}

static const char *const shell_names[] = {"a shell"};
/* two tables: with the user's diagonal, and without (no diagonal entry: mf_operator_diagonal refuses) */
static const mf_optype shell_type = {
    .name = "a shell operator", .names = shell_names, .apply = shell_apply, .diagonal = shell_diagonal, .destroy = shell_destroy};
static const mf_optype shell_type_nodiag = {
    .name = "a shell operator", .names = shell_names, .apply = shell_apply, .destroy = shell_destroy};

int mf_operator_create_shell(mf_space space, mf_shell_apply_fn apply, mf_shell_apply_fn diag, void *user,
                             mf_operator *op)
{
  if (op) *op = NULL; /* NULL on every failure, the first argument's included */
  MF_CHECK(space, NULL, MF_ERR_NULL, "space is NULL");
  MF_CHECK(op, space->ctx, MF_ERR_NULL, "output pointer op is NULL");
  *op = NULL;
  MF_CHECK(apply, space->ctx, MF_ERR_NULL, "shell apply function is NULL");
  MF_CALL(mf_space_check_mesh(space));
  shell_op *sh = NULL;
  int ierr = MF_CALLOC(space->ctx, 1, &sh);
  if (!ierr) {
    sh->apply = apply;
    sh->diag = diag;
    sh->user = user;
    ierr = mf_operator_alloc(space, diag ? &shell_type : &shell_type_nodiag, sh, op);
    if (ierr) free(sh);
  }
  ierr = mf_agree(space->ctx, ierr); /* every rank has its operator, or none keeps one */
  if (ierr) mf_operator_destroy(op);
  return ierr;
}
