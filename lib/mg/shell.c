/* shell.c -- MF_PC_SHELL: z = apply(r, z, user), a user function (mf_pc_create_shell). */
#include "mg/pc_impl.h"

typedef struct {
  mf_pc_apply_fn apply;
  void *user;
} shell_data;

static shell_data *shell(mf_pc pc) { return (shell_data *)pc->data; }

static int shell_apply(mf_pc pc, mf_vector r, mf_vector z)
{
  const shell_data *s = shell(pc);
  const unsigned long serial = mf_error_serial();
  return mf_callback_result(pc->ctx, mf_vector_call_user(s->apply, r, z, s->user, "the shell preconditioner", "r", "z"),
                            serial, "shell preconditioner's apply function");
}

const mf_pc_type mf_pc_type_shell = {
  .kind = MF_PC_SHELL,
  .name = "shell (MF_PC_SHELL)",
  .data_size = sizeof(shell_data),
  .apply = shell_apply,
};

int mf_pc_create_shell(mf_operator op, mf_pc_apply_fn apply, void *user, mf_pc *pc)
{
  if (pc) *pc = NULL; /* NULL on every failure, the first argument's included */
  MF_CHECK(op, NULL, MF_ERR_NULL, "operator is NULL");
  MF_CHECK(apply, op->ctx, MF_ERR_NULL, "shell preconditioner apply function is NULL");
  MF_CALL(mf_pc_create_type(op, &mf_pc_type_shell, pc));
  shell(*pc)->apply = apply;
  shell(*pc)->user = user;
  return 0;
}
