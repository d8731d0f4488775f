/* operator.c -- the mf_operator object: what every operator type shares (lib/operator_impl.h: context,
 * space, type table, Dirichlet form, scatter, precision, work vector, references), the public functions
 * that call the type table (mf_optype), and the apply flow that the pointwise and assembled types run
 * over their backend's steps (op->ops):
 *     x_w = x with boundary entries zeroed (Dirichlet form)   -> import ghosts of x_w
 *     y   = sum over cells of A_e x_w (backend kernel)         -> export-add ghosts of y to owners
 *     y[bc] = x[bc] (Dirichlet form)
 * The types: the matrix-free pointwise operators of each cell family (lib/hex/operator_hex.c,
 * lib/simplex/operator_simplex.c; made through space->fam->operator_create), the shell operator
 * (lib/operator_shell.c) and the assembled one (lib/assembled/assembly.c). */
#include "operator_impl.h"
#include "family.h"

#include <math.h>

int mf_operator_alloc(mf_space space, const mf_optype *type, void *data, mf_operator *op)
{
  *op = NULL;
  mf_operator o = NULL;
  MF_CALL(MF_CALLOC(space->ctx, 1, &o));
  o->ctx = space->ctx;
  o->space = space;
  mf_space_retain(space);
  o->type = type;
  o->data = data;
  o->refs = 1;
  *op = o;
  return 0;
}

int mf_operator_finish(mf_operator o, int ierr, mf_operator *op)
{
  mf_context ctx = o->ctx;
  if (!ierr) ierr = mf_vector_create_prec(o->space, o->prec, &o->xwork);
  ierr = mf_agree(ctx, ierr);
  if (ierr) {
    mf_operator_destroy(&o);
    return ierr;
  }
  *op = o;
  return 0;
}

/* The matrix-free pointwise operators: the arguments every family takes, then the family's creator.
 * Collective. */
int mf_operator_create_pointwise(mf_space space, mf_op_kind kind, mf_quadrature quad, double a, double b,
                                mf_coefficient_fn c, void *user, mf_operator *op)
{
  if (op) *op = NULL; /* NULL on every failure, the first argument's included */
  MF_CHECK(space, NULL, MF_ERR_NULL, "space is NULL");
  mf_context ctx = space->ctx;
  MF_CHECK(op, ctx, MF_ERR_NULL, "output pointer op is NULL");
  *op = NULL;
  MF_CHECK(quad == MF_QUAD_GAUSS || quad == MF_QUAD_GAUSS_P2 || quad == MF_QUAD_GLL, ctx, MF_ERR_ARGUMENT,
           "quadrature %d unknown (MF_QUAD_GAUSS, MF_QUAD_GAUSS_P2 or MF_QUAD_GLL)", (int)quad);
  MF_CHECK(isfinite(a) && isfinite(b), ctx, MF_ERR_ARGUMENT, "Helmholtz coefficients a = %g, b = %g must be finite", a, b);
  MF_CHECK(space->ncomp == 1, ctx, MF_ERR_INCOMPATIBLE,
           "mass, Laplace and Helmholtz operators act on scalar spaces (this one has %d components): a vector "
           "operator is a physics (mf_operator_create_physics)", space->ncomp);
  MF_CALL(mf_space_check_mesh(space));
  MF_CHECK(space->fam->operator_create, ctx, MF_ERR_UNSUPPORTED, "matrix-free operators: not on %s meshes",
           space->fam->name);
  return space->fam->operator_create(space, kind, quad, a, b, c, user, op);
}

const char *mf_operator_kind_name(const struct mf_operator_s *op)
{
  const mf_pw_op *pw = mf_pw(op);
  return op->type->names[pw ? (int)pw->kind : 0];
}

int mf_operator_create_like(mf_operator like, mf_space space, mf_operator *op)
{
  MF_CHECK(like, NULL, MF_ERR_NULL, "operator is NULL");
  MF_CHECK(like->type->create_like, like->ctx, MF_ERR_UNSUPPORTED,
           "only matrix-free mass, Laplace and Helmholtz operators can be made again, not %s operator",
           mf_operator_kind_name(like));
  return like->type->create_like(like, space, op);
}

int mf_operator_create_single(mf_operator like, mf_operator *op)
{
  MF_CHECK(like, NULL, MF_ERR_NULL, "operator is NULL");
  mf_context ctx = like->ctx;
  MF_CHECK(op, ctx, MF_ERR_NULL, "output pointer op is NULL");
  *op = NULL;
  MF_CHECK(like->type->create_single, ctx, MF_ERR_UNSUPPORTED,
           "only matrix-free mass, Laplace, Helmholtz and simplex elasticity operators and physics on their kernels "
           "have a single-precision copy, not %s operator",
           mf_operator_kind_name(like));
  MF_CHECK(like->prec == MF_PRECISION_DOUBLE, ctx, MF_ERR_ARGUMENT, "the operator is a single-precision copy already");
  return like->type->create_single(like, op);
}

int mf_operator_create_mass(mf_space space, mf_quadrature quad, mf_coefficient_fn c, void *user, mf_operator *op)
{
  return mf_operator_create_pointwise(space, MF_OP_MASS, quad, 1.0, 0.0, c, user, op);
}

int mf_operator_create_laplace(mf_space space, mf_quadrature quad, mf_coefficient_fn c, void *user, mf_operator *op)
{
  return mf_operator_create_pointwise(space, MF_OP_LAPLACE, quad, 0.0, 1.0, c, user, op);
}

int mf_operator_create_helmholtz(mf_space space, mf_quadrature quad, double a, double b, mf_coefficient_fn c,
                                 void *user, mf_operator *op)
{
  return mf_operator_create_pointwise(space, MF_OP_HELMHOLTZ, quad, a, b, c, user, op);
}

int mf_operator_set_scatter(mf_operator op, mf_scatter mode)
{
  MF_CHECK(op, NULL, MF_ERR_NULL, "operator is NULL");
  MF_CHECK(mode == MF_SCATTER_COLORED || mode == MF_SCATTER_ATOMIC, op->ctx, MF_ERR_ARGUMENT,
           "scatter mode %d unknown (MF_SCATTER_COLORED or MF_SCATTER_ATOMIC)", (int)mode);
  op->scatter = mode;
  return 0;
}

int mf_operator_set_dirichlet(mf_operator op, int on)
{
  MF_CHECK(op, NULL, MF_ERR_NULL, "operator is NULL");
  MF_CHECK(op->type->dirichlet_form, op->ctx, MF_ERR_UNSUPPORTED, "%s operator handles its boundary conditions itself",
           mf_operator_kind_name(op));
  op->dirichlet = on != 0;
  return 0;
}

/* A user callback's result: a failure it did not describe gets a message naming the callback, so that
 * no earlier, unrelated message is read as its cause. */
int mf_callback_result(mf_context ctx, int code, unsigned long serial, const char *what)
{
  if (!code || mf_error_serial() != serial) return code;
  return mf_error_set(ctx, code, __FILE__, __LINE__, __func__, "%s returned %d (and recorded no message)", what, code);
}

/* y <- A x for checked arguments (the flow in the file comment). The ghost exchanges run on every rank
 * even after a local failure (a neighbour waits for them); the first failure is returned. */
int mf_operator_flow_apply(mf_operator op, mf_vector x, mf_vector y, int ierr)
{
  mf_vector xin = x;
  if (!ierr && op->dirichlet && !op->ops.masks_bc) {
    ierr = op->xwork->ops.copy(op->xwork, x);
    if (!ierr) ierr = op->xwork->ops.bc_zero(op->xwork);
    xin = op->xwork;
  }
  if (mf_operator_overlaps(op)) {
    /* the messages travel while the cells that touch no ghost DoF compute: the import with the first
     * half of them, the export-add of y's ghosts (final once the boundary cells are done) with the
     * second half */
    if (!ierr) ierr = y->ops.set_value(y, 0.0);
    MF_KEEP(ierr, xin->ops.exchange_begin(xin, 1));
    if (!ierr) ierr = op->ops.apply_part(op, xin, y, MF_PART_INTERIOR_A);
    MF_KEEP(ierr, xin->ops.exchange_end(xin, 1));
    if (!ierr) ierr = op->ops.apply_part(op, xin, y, MF_PART_BOUNDARY);
    MF_KEEP(ierr, y->ops.exchange_begin(y, 0));
    if (!ierr) ierr = op->ops.apply_part(op, xin, y, MF_PART_INTERIOR_B);
    MF_KEEP(ierr, y->ops.exchange_end(y, 0));
  } else {
    MF_KEEP(ierr, xin->ops.import(xin));
    if (!ierr) ierr = y->ops.set_value(y, 0.0);
    if (!ierr) ierr = op->ops.apply(op, xin, y);
    MF_KEEP(ierr, y->ops.export_add(y));
  }
  if (!ierr && op->dirichlet) ierr = y->ops.bc_set(y, x);
  return ierr;
}

int mf_operator_overlaps(const mf_operator op)
{
  return op->ctx->size > 1 && op->ctx->overlap && op->ops.apply_part;
}

int mf_operator_apply(mf_operator op, mf_vector x, mf_vector y)
{
  MF_CHECK(op, NULL, MF_ERR_NULL, "operator is NULL");
  mf_context ctx = op->ctx;
  MF_CHECK(x, ctx, MF_ERR_NULL, "input vector x is NULL");
  MF_CHECK(y, ctx, MF_ERR_NULL, "output vector y is NULL");
  char why[192];
  MF_CHECK(x->space == op->space, ctx, MF_ERR_INCOMPATIBLE, "input vector x belongs to another space%s",
           mf_space_mismatch(x->space, op->space, "operator has", why, sizeof why));
  MF_CHECK(y->space == op->space, ctx, MF_ERR_INCOMPATIBLE, "output vector y belongs to another space%s",
           mf_space_mismatch(y->space, op->space, "operator has", why, sizeof why));
  MF_CHECK(x != y, ctx, MF_ERR_ARGUMENT, "x and y must be different vectors");
  MF_CHECK(x->prec == op->prec && y->prec == op->prec, ctx, MF_ERR_INCOMPATIBLE,
           "vectors x (%s) and y (%s) for an operator in %s", mf_precision_name(x->prec), mf_precision_name(y->prec),
           mf_precision_name(op->prec));
  /* a vector that cannot be used here (an array checked out) fails this rank only: the exchanges
   * still run (the type's apply), so that no other rank waits */
  int ierr = mf_vector_access(x, MF_ACCESS_READ, "x");
  const int ywritten = !ierr && !(ierr = mf_vector_access(y, MF_ACCESS_READ_WRITE, "y"));
  ierr = op->type->apply(op, x, y, ierr);
  return ywritten ? mf_vector_written(y, ierr) : ierr;
}

int mf_operator_flow_diagonal(mf_operator op, mf_vector d)
{
  int ierr = d->ops.set_value(d, 0.0);
  if (!ierr) ierr = op->ops.diagonal(op, d);
  MF_KEEP(ierr, d->ops.export_add(d)); /* on every rank, as in mf_operator_apply */
  if (!ierr && op->dirichlet) ierr = d->ops.bc_set(d, NULL);
  return ierr;
}

int mf_operator_diagonal(mf_operator op, mf_vector d)
{
  MF_CHECK(op, NULL, MF_ERR_NULL, "operator is NULL");
  MF_CHECK(d, op->ctx, MF_ERR_NULL, "diagonal vector is NULL");
  char why[192];
  MF_CHECK(d->space == op->space, op->ctx, MF_ERR_INCOMPATIBLE, "diagonal vector belongs to another space%s",
           mf_space_mismatch(d->space, op->space, "operator has", why, sizeof why));
  MF_CHECK(op->prec == MF_PRECISION_DOUBLE && d->prec == MF_PRECISION_DOUBLE, op->ctx, MF_ERR_UNSUPPORTED,
           "the diagonal is computed in double only (operator %s, vector %s)", mf_precision_name(op->prec),
           mf_precision_name(d->prec));
  MF_CHECK(op->type->diagonal, op->ctx, MF_ERR_UNSUPPORTED, "%s operator has no diagonal function",
           mf_operator_kind_name(op));
  MF_CALL(mf_vector_access(d, MF_ACCESS_READ_WRITE, "diag"));
  return mf_vector_written(d, op->type->diagonal(op, d));
}

void mf_operator_retain(mf_operator op) { op->refs++; }

void mf_operator_release(mf_operator o)
{
  if (!o || --o->refs > 0) return;
  if (o->ops.destroy) o->ops.destroy(o); /* what the backend made for the product */
  if (o->type->destroy) o->type->destroy(o); /* the type's data */
  mf_vector_destroy(&o->xwork);
  mf_vector_destroy(&o->state);
  mf_space_release(o->space);
  free(o);
}

int mf_operator_destroy(mf_operator *op)
{
  if (!op || !*op) return 0;
  mf_operator o = *op;
  *op = NULL;
  mf_operator_release(o);
  return 0;
}
