/* operator.c -- the mf_operator object: creation of the matrix-free operators (mass, Laplace,
 * Helmholtz) and shell operators, and the apply flow common to all backends (assembled operators:
 * lib/assembled/assembly.c):
 *     x_w = x with boundary entries zeroed (Dirichlet form)   -> import ghosts of x_w
 *     y   = sum over cells of A_e x_w (backend kernel)         -> export-add ghosts of y to owners
 *     y[bc] = x[bc] (Dirichlet form)                                                            */
#include "mfree_impl.h"
#include "family.h"

#include <math.h>

#include "base/mf_backend.h"

static int apply_mf_cpu(mf_operator op, mf_vector x, mf_vector y)
{
  if (op->prec == MF_PRECISION_FLOAT) return mf_kernel_apply_cpu_single(op, x->sdata, y->sdata);
  return mf_kernel_apply_cpu(op, x->data, y->data);
}
static int apply_part_mf_cpu(mf_operator op, mf_vector x, mf_vector y, mf_cell_part part)
{
  if (op->prec == MF_PRECISION_FLOAT) return mf_kernel_apply_cpu_part(op, x->sdata, y->sdata, part);
  return mf_kernel_apply_cpu_part(op, x->data, y->data, part);
}
static int diagonal_mf_cpu(mf_operator op, mf_vector d)
{
  if (op->geometry == MF_GEOMETRY_ON_THE_FLY) { /* from quadrature data made for the moment: the stored diagonal */
    double *data = NULL;
    MF_CALL(mf_otf_qdata_cpu(op, &data));
    op->qd.data = data;
    int ierr = mf_kernel_diagonal_cpu(op, d->data);
    if (!ierr) ierr = mf_kernel_diagonal_hanging_cpu(op, d->data);
    op->qd.data = NULL;
    free(data);
    return ierr;
  }
  MF_CALL(mf_kernel_diagonal_cpu(op, d->data));
  return mf_kernel_diagonal_hanging_cpu(op, d->data);
}
static int destroy_mf_cpu(mf_operator op)
{
  (void)op;
  return 0;
}

/* The matrix-free operators. Collective: the set-up is local to each rank (quadrature data, device
 * copies), and the ranks agree on its result at the end. */
static int operator_create(mf_space space, mf_op_kind kind, mf_quadrature quad, double a, double b,
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
  MF_CALL(mf_space_check_mesh(space));
  if (space->fam->operator_create) return space->fam->operator_create(space, kind, quad, a, b, c, user, op);
  mf_operator o = NULL;
  int ierr = MF_CALLOC(ctx, 1, &o);
  if (!ierr) {
    o->ctx = ctx;
    o->space = space;
    o->refs = 1;
    mf_space_retain(space);
    o->kind = kind;
    o->quad = quad;
    o->has_mass = kind == MF_OP_MASS || kind == MF_OP_HELMHOLTZ;
    o->has_grad = kind == MF_OP_LAPLACE || kind == MF_OP_HELMHOLTZ;
    o->coef = c;
    o->coef_user = user;
    o->coef_a = a;
    o->coef_b = b;
    ierr = mf_basis1d_setup(space->degree, quad, &o->basis);
  }
  if (!ierr) {
    mf_qdata_layout(o);
    o->cells_per_block = o->qd.batch;
    if (!ctx->bk->op.setup) {
      o->ops.apply = apply_mf_cpu;
      o->ops.apply_part = apply_part_mf_cpu;
      o->ops.diagonal = diagonal_mf_cpu;
      o->ops.destroy = destroy_mf_cpu;
      ierr = mf_qdata_setup(o, c, user, a, b);
    }
    else ierr = ctx->bk->op.setup(o, c, user, a, b);
  }
  if (!ierr) ierr = mf_vector_create_prec(space, MF_PRECISION_DOUBLE, &o->xwork);
  ierr = mf_agree(ctx, ierr);
  if (ierr) {
    mf_operator_destroy(&o);
    return ierr;
  }
  *op = o;
  return 0;
}

const char *mf_operator_kind_name(const struct mf_operator_s *op)
{
  switch (op->kind) {
  case MF_OP_MASS: return "a matrix-free mass";
  case MF_OP_LAPLACE: return "a matrix-free Laplace";
  case MF_OP_HELMHOLTZ: return "a matrix-free Helmholtz";
  case MF_OP_SHELL: return "a shell";
  case MF_OP_ASSEMBLED: return "an assembled (CSR)";
  case MF_OP_SIMPLEX: /* elasticity is the one of several components */
    return op->space->ncomp > 1 ? "a simplex elasticity"
           : op->has_mass && op->has_grad ? "a simplex Helmholtz"
           : op->has_mass ? "a simplex mass" : "a simplex Laplace";
  }
  return "an unknown";
}

int mf_operator_create_like(mf_operator like, mf_space space, mf_operator *op)
{
  MF_CHECK(like, NULL, MF_ERR_NULL, "operator is NULL");
  MF_CHECK(like->kind == MF_OP_MASS || like->kind == MF_OP_LAPLACE || like->kind == MF_OP_HELMHOLTZ, like->ctx,
           MF_ERR_UNSUPPORTED, "only matrix-free mass, Laplace and Helmholtz operators can be made again, not %s operator",
           mf_operator_kind_name(like));
  MF_CALL(operator_create(space, like->kind, like->quad, like->coef_a, like->coef_b, like->coef, like->coef_user, op));
  (*op)->dirichlet = like->dirichlet;
  (*op)->scatter = like->scatter;
  (*op)->design = like->design;
  return 0;
}

int mf_operator_create_single(mf_operator like, mf_operator *op)
{
  MF_CHECK(like, NULL, MF_ERR_NULL, "operator is NULL");
  mf_context ctx = like->ctx;
  MF_CHECK(op, ctx, MF_ERR_NULL, "output pointer op is NULL");
  *op = NULL;
  MF_CHECK(like->kind == MF_OP_MASS || like->kind == MF_OP_LAPLACE || like->kind == MF_OP_HELMHOLTZ, ctx,
           MF_ERR_UNSUPPORTED,
           "only matrix-free mass, Laplace and Helmholtz operators have a single-precision copy, not %s operator",
           mf_operator_kind_name(like));
  MF_CHECK(like->prec == MF_PRECISION_DOUBLE, ctx, MF_ERR_ARGUMENT, "the operator is a single-precision copy already");
  mf_operator o = NULL;
  int ierr = MF_CALLOC(ctx, 1, &o);
  if (ierr) return mf_agree(ctx, ierr);
  *o = *like; /* kind, rule, coefficient, layout, Dirichlet form, scatter, cells per block */
  o->refs = 1;
  mf_space_retain(o->space);
  o->prec = MF_PRECISION_FLOAT;
  o->geometry = MF_GEOMETRY_STORED; /* its float data; from like's made for the moment when like has none */
  o->coefq = NULL;
  o->qd.data = NULL;
  o->qdf = NULL;
  o->xwork = NULL;
  o->dev = NULL;
  memset(&o->ops, 0, sizeof o->ops);
  if (!ctx->bk->op.single) {
    o->ops.apply = apply_mf_cpu;
    o->ops.apply_part = apply_part_mf_cpu;
    o->ops.destroy = destroy_mf_cpu;
    ierr = MF_CALLOC(ctx, o->qd.len, &o->qdf);
    double *made = NULL;
    if (!ierr && like->geometry == MF_GEOMETRY_ON_THE_FLY) ierr = mf_otf_qdata_cpu(like, &made);
    const double *src = made ? made : like->qd.data;
    for (size_t i = 0; !ierr && i < o->qd.len; i++) o->qdf[i] = (float)src[i];
    free(made);
  }
  else ierr = ctx->bk->op.single(o, like);
  if (!ierr) ierr = mf_vector_create_prec(o->space, MF_PRECISION_FLOAT, &o->xwork);
  ierr = mf_agree(ctx, ierr);
  if (ierr) {
    mf_operator_destroy(&o);
    return ierr;
  }
  *op = o;
  return 0;
}

int mf_operator_create_mass(mf_space space, mf_quadrature quad, mf_coefficient_fn c, void *user, mf_operator *op)
{
  return operator_create(space, MF_OP_MASS, quad, 1.0, 0.0, c, user, op);
}

int mf_operator_create_laplace(mf_space space, mf_quadrature quad, mf_coefficient_fn c, void *user, mf_operator *op)
{
  return operator_create(space, MF_OP_LAPLACE, quad, 0.0, 1.0, c, user, op);
}

int mf_operator_create_helmholtz(mf_space space, mf_quadrature quad, double a, double b, mf_coefficient_fn c,
                                 void *user, mf_operator *op)
{
  return operator_create(space, MF_OP_HELMHOLTZ, quad, a, b, c, user, op);
}

int mf_operator_create_shell(mf_space space, mf_shell_apply_fn apply, mf_shell_apply_fn diag, void *user,
                             mf_operator *op)
{
  if (op) *op = NULL; /* NULL on every failure, the first argument's included */
  MF_CHECK(space, NULL, MF_ERR_NULL, "space is NULL");
  MF_CHECK(op, space->ctx, MF_ERR_NULL, "output pointer op is NULL");
  *op = NULL;
  MF_CHECK(apply, space->ctx, MF_ERR_NULL, "shell apply function is NULL");
  MF_CALL(mf_space_check_mesh(space));
  mf_operator o;
  MF_CALL(MF_CALLOC_AGREED(space->ctx, 1, &o));
  o->ctx = space->ctx;
  o->space = space;
  o->refs = 1;
  mf_space_retain(space);
  o->kind = MF_OP_SHELL;
  o->shell_apply = apply;
  o->shell_diag = diag;
  o->shell_user = user;
  *op = o;
  return 0;
}

int mf_operator_set_scatter(mf_operator op, mf_scatter mode)
{
  MF_CHECK(op, NULL, MF_ERR_NULL, "operator is NULL");
  MF_CHECK(mode == MF_SCATTER_COLORED || mode == MF_SCATTER_ATOMIC, op->ctx, MF_ERR_ARGUMENT,
           "scatter mode %d unknown (MF_SCATTER_COLORED or MF_SCATTER_ATOMIC)", (int)mode);
  op->scatter = mode;
  return 0;
}

int mf_operator_set_cells_per_block(mf_operator op, int n)
{
  MF_CHECK(op, NULL, MF_ERR_NULL, "operator is NULL");
  MF_CHECK(op->kind != MF_OP_SHELL && op->kind != MF_OP_ASSEMBLED && op->kind != MF_OP_SIMPLEX, op->ctx,
           MF_ERR_UNSUPPORTED, "cells per block applies to matrix-free operators on hexahedra only");
  const int maxt = op->qd.nqp > 512 ? 1024 : 512; /* the kernels' launch bounds */
  MF_CHECK(n >= 1 && (long)n * op->qd.nqp <= maxt, op->ctx, MF_ERR_ARGUMENT,
           "cells per block %d out of range 1..%d (%d threads per cell, at most %d per block)", n, maxt / op->qd.nqp,
           op->qd.nqp, maxt);
  op->cells_per_block = n;
  return 0;
}

int mf_operator_set_kernel_design(mf_operator op, mf_kernel_design design)
{
  MF_CHECK(op, NULL, MF_ERR_NULL, "operator is NULL");
  MF_CHECK(op->kind != MF_OP_SHELL && op->kind != MF_OP_ASSEMBLED && op->kind != MF_OP_SIMPLEX, op->ctx,
           MF_ERR_UNSUPPORTED, "a kernel design applies to matrix-free operators on hexahedra only");
  MF_CHECK(design == MF_KERNEL_AUTO || design == MF_KERNEL_POINT || design == MF_KERNEL_COLUMN, op->ctx,
           MF_ERR_ARGUMENT, "kernel design %d unknown (MF_KERNEL_AUTO, MF_KERNEL_POINT or MF_KERNEL_COLUMN)",
           (int)design);
  op->design = design;
  return 0;
}

/* Geometry on the fly, cpu backend: the coefficient at the points (op->coefq) replaces the stored data;
 * back to stored, the data are made from the geometry and those values. In two steps, so that every
 * rank switches or none does: the new state is made (*st: the coefficient values, NULL without a
 * coefficient, or the quadrature data) without touching the old one, then, once the ranks agree,
 * committed. */
static int geometry_prepare_cpu(mf_operator op, mf_geometry mode, void **st)
{
  mf_space s = op->space;
  *st = NULL;
  if (mode == MF_GEOMETRY_ON_THE_FLY) {
    MF_CALL(mf_space_host_coords(s));
    if (!op->coef) return 0;
    double *cq = NULL;
    MF_CALL(MF_CALLOC(op->ctx, (size_t)s->ncells * op->qd.nqp, &cq));
    int ierr = mf_otf_coefficient_cpu(op, cq);
    if (ierr) {
      free(cq);
      return ierr;
    }
    *st = cq;
    return 0;
  }
  double *data = NULL;
  MF_CALL(mf_otf_qdata_cpu(op, &data));
  *st = data;
  return 0;
}
static void geometry_commit_cpu(mf_operator op, mf_geometry mode, void *st)
{
  if (mode == MF_GEOMETRY_ON_THE_FLY) {
    free(op->qd.data);
    op->qd.data = NULL;
    op->coefq = (double *)st;
  } else {
    op->qd.data = (double *)st;
    free(op->coefq);
    op->coefq = NULL;
  }
  op->geometry = mode;
}

int mf_operator_set_geometry(mf_operator op, mf_geometry mode)
{
  MF_CHECK(op, NULL, MF_ERR_NULL, "operator is NULL");
  mf_context ctx = op->ctx;
  MF_CHECK(mode == MF_GEOMETRY_STORED || mode == MF_GEOMETRY_ON_THE_FLY, ctx, MF_ERR_ARGUMENT,
           "geometry mode %d unknown (MF_GEOMETRY_STORED or MF_GEOMETRY_ON_THE_FLY)", (int)mode);
  MF_CHECK(op->kind == MF_OP_MASS || op->kind == MF_OP_LAPLACE || op->kind == MF_OP_HELMHOLTZ, ctx,
           MF_ERR_UNSUPPORTED, "a geometry mode applies to matrix-free mass, Laplace and Helmholtz operators only (this "
           "one is %s)", op->kind == MF_OP_SHELL ? "a shell operator" : op->kind == MF_OP_SIMPLEX ? "on simplices" : "assembled");
  MF_CHECK(op->prec == MF_PRECISION_DOUBLE, ctx, MF_ERR_UNSUPPORTED,
           "geometry on the fly is for double-precision operators: a single-precision copy keeps its stored "
           "quadrature data");
  /* the same on every rank: a switch is committed everywhere or nowhere (below) */
  if (mode == op->geometry) return 0;
  void *st = NULL;
  int ierr = 0;
  if (!ctx->bk->op.geometry_prepare) ierr = geometry_prepare_cpu(op, mode, &st);
  else ierr = ctx->bk->op.geometry_prepare(op, mode, &st);
  ierr = mf_agree(ctx, ierr);
  if (ierr) { /* a rank failed: every rank keeps its old state */
    if (!ctx->bk->op.geometry_prepare) free(st);
    else ctx->bk->op.geometry_discard(op, st);
    return ierr;
  }
  if (!ctx->bk->op.geometry_prepare) geometry_commit_cpu(op, mode, st);
  else ctx->bk->op.geometry_commit(op, mode, st);
  return 0;
}

int mf_operator_get_geometry(mf_operator op, mf_geometry *mode)
{
  MF_CHECK(op, NULL, MF_ERR_NULL, "operator is NULL");
  MF_CHECK(mode, op->ctx, MF_ERR_NULL, "output pointer mode is NULL");
  *mode = op->geometry;
  return 0;
}

/* MF_KERNEL_AUTO: the design measured faster for the case (docs/performance.md, "Kernel designs"; 3D
 * on the H100, 2D on the H200): per dim, rule (Gauss p+1, Gauss p+2, GLL collocated), mass or gradient
 * (Laplace, Helmholtz) and degree 1..8, 1 for the column design. */
mf_kernel_design mf_operator_design(const mf_operator op)
{
  /* on the fly exists in the point design only: MF_KERNEL_COLUMN falls back to it */
  if (op->geometry == MF_GEOMETRY_ON_THE_FLY) return MF_KERNEL_POINT;
  if (op->design != MF_KERNEL_AUTO) return op->design;
  static const unsigned char column[2][3][2][8] = {
      /* 2D */
      {{{1, 1, 1, 1, 1, 1, 1, 0}, {1, 1, 0, 1, 1, 1, 1, 1}},
       {{1, 1, 1, 1, 1, 1, 1, 0}, {1, 0, 1, 1, 1, 1, 1, 1}},
       {{0, 0, 0, 0, 0, 0, 0, 0}, {1, 1, 0, 1, 0, 0, 1, 1}}},
      /* 3D (H100): mass row, then gradient row */
      {{{1, 1, 1, 1, 1, 1, 1, 1}, {0, 1, 0, 1, 1, 1, 1, 1}},
       {{1, 1, 1, 1, 1, 1, 1, 1}, {1, 1, 1, 1, 1, 1, 1, 1}},
       {{0, 0, 0, 0, 0, 0, 0, 0}, {1, 0, 0, 0, 0, 0, 0, 1}}}};
  const int dim = op->space->dim, p = op->space->degree, q = (int)op->quad;
  if (dim < 2 || dim > 3 || p < 1 || p > 8 || q < 0 || q > 2) return MF_KERNEL_POINT;
  return column[dim - 2][q][op->has_grad ? 1 : 0][p - 1] ? MF_KERNEL_COLUMN : MF_KERNEL_POINT;
}

int mf_operator_set_dirichlet(mf_operator op, int on)
{
  MF_CHECK(op, NULL, MF_ERR_NULL, "operator is NULL");
  MF_CHECK(op->kind != MF_OP_SHELL, op->ctx, MF_ERR_UNSUPPORTED,
           "a shell operator handles its boundary conditions itself");
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
static int apply(mf_operator op, mf_vector x, mf_vector y, int ierr)
{
  if (op->kind == MF_OP_SHELL) {
    if (ierr) return ierr;
    const unsigned long serial = mf_error_serial();
    return mf_callback_result(op->ctx,
                              mf_vector_call_user(op->shell_apply, x, y, op->shell_user, "the shell operator's apply", "x", "y"),
                              serial, "shell operator's apply function");
  }
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
   * still run (apply), so that no other rank waits */
  int ierr = mf_vector_access(x, MF_ACCESS_READ, "x");
  const int ywritten = !ierr && !(ierr = mf_vector_access(y, MF_ACCESS_READ_WRITE, "y"));
  ierr = apply(op, x, y, ierr);
  return ywritten ? mf_vector_written(y, ierr) : ierr;
}

int mf_operator_qdata_to_host(mf_operator op, double *host)
{
  MF_CHECK(op->kind == MF_OP_MASS || op->kind == MF_OP_LAPLACE || op->kind == MF_OP_HELMHOLTZ, op->ctx,
           MF_ERR_UNSUPPORTED, "only matrix-free operators have quadrature data");
  MF_CHECK(op->prec == MF_PRECISION_DOUBLE, op->ctx, MF_ERR_UNSUPPORTED,
           "a single-precision operator copy has no double quadrature data");
  MF_CHECK(op->geometry == MF_GEOMETRY_STORED, op->ctx, MF_ERR_UNSUPPORTED,
           "the operator computes its geometry on the fly and keeps no quadrature data");
  if (op->ctx->bk->op.qdata_to_host) return op->ctx->bk->op.qdata_to_host(op, host);
  memcpy(host, op->qd.data, sizeof(double) * op->qd.len);
  return 0;
}

static int diagonal(mf_operator op, mf_vector d)
{
  if (op->kind == MF_OP_SHELL) {
    const unsigned long serial = mf_error_serial();
    return mf_callback_result(
        op->ctx, mf_vector_call_user(op->shell_diag, d, d, op->shell_user, "the shell operator's diagonal", "diag", "diag"),
        serial, "shell operator's diagonal function");
  }
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
  MF_CHECK(op->kind != MF_OP_SHELL || op->shell_diag, op->ctx, MF_ERR_UNSUPPORTED,
           "shell operator has no diagonal function");
  MF_CALL(mf_vector_access(d, MF_ACCESS_READ_WRITE, "diag"));
  return mf_vector_written(d, diagonal(op, d));
}

void mf_operator_retain(mf_operator op) { op->refs++; }

void mf_operator_release(mf_operator o)
{
  if (!o || --o->refs > 0) return;
  if (o->ops.destroy) o->ops.destroy(o); /* and the kind's data (kdata) */
  mf_vector_destroy(&o->xwork);
  free(o->qd.data);
  free(o->qdf);
  free(o->coefq);
  /* rowptr, colidx: the space's; the values of an assembled operator on the device: its destroy's */
  if (!(o->kind == MF_OP_ASSEMBLED && o->ctx->backend == MF_BACKEND_CUDA)) free(o->vals);
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
