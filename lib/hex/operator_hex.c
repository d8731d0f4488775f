/* operator_hex.c -- the hex family's operator type: sum-factorised matrix-free operators (mass, Laplace,
 * Helmholtz of the gallery) on Q_p spaces. Its data (mf_hex_op): the description, the 1D basis, the
 * quadrature data (stored, or geometry on the fly), the single-precision copy's data, the backend's
 * state. The product's steps are the CPU kernels (lib/hex/kernels_cpu.c, kernels_otf.c) or the
 * backend's (its table's op entries); the type's functions make it on another space (multigrid levels),
 * in single precision, and assembled (lib/assembled/). The public functions that only this type has
 * (cells per block, kernel design, geometry mode) are here too. */
#include "hex/mf_hex_op.h"
#include "family.h"
#include "hex/mf_hex.h"
#include "assembled/assembly_impl.h"

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
  mf_hex_op *h = mf_hexop(op);
  if (h->geometry == MF_GEOMETRY_ON_THE_FLY) { /* from quadrature data made for the moment: the stored diagonal */
    double *data = NULL;
    MF_CALL(mf_otf_qdata_cpu(op, &data));
    h->qd.data = data;
    int ierr = mf_kernel_diagonal_cpu(op, d->data);
    if (!ierr) ierr = mf_kernel_diagonal_hanging_cpu(op, d->data);
    h->qd.data = NULL;
    free(data);
    return ierr;
  }
  MF_CALL(mf_kernel_diagonal_cpu(op, d->data));
  return mf_kernel_diagonal_hanging_cpu(op, d->data);
}
static void cpu_steps(mf_operator o)
{
  o->ops.apply = apply_mf_cpu;
  o->ops.apply_part = apply_part_mf_cpu;
  o->ops.diagonal = o->prec == MF_PRECISION_DOUBLE ? diagonal_mf_cpu : NULL;
}

static void hex_destroy(mf_operator op)
{
  mf_hex_op *h = mf_hexop(op);
  if (!h) return;
  free(h->qd.data);
  free(h->qdf);
  free(h->coefq);
  free(h);
  op->data = NULL;
}

static int hex_diagonal(mf_operator op, mf_vector d)
{
  MF_CHECK(op->ops.diagonal, op->ctx, MF_ERR_UNSUPPORTED, "a single-precision operator copy has no diagonal");
  return mf_operator_flow_diagonal(op, d);
}

/* An operator of the type around its data h (taken over: freed with the operator, or here on failure). */
static int hex_alloc(mf_space space, mf_hex_op *h, mf_operator *op)
{
  int ierr = mf_operator_alloc(space, &mf_optype_hex, h, op);
  if (ierr) free(h);
  return ierr;
}

int mf_hex_operator_create(mf_space space, mf_op_kind kind, mf_quadrature quad, double a, double b,
                           mf_coefficient_fn c, void *user, mf_operator *op)
{
  mf_context ctx = space->ctx;
  mf_hex_op *h = NULL;
  mf_operator o = NULL;
  int ierr = MF_CALLOC(ctx, 1, &h);
  if (!ierr) {
    h->pw.kind = kind;
    h->pw.quad = quad;
    h->pw.has_mass = kind == MF_OP_MASS || kind == MF_OP_HELMHOLTZ;
    h->pw.has_grad = kind == MF_OP_LAPLACE || kind == MF_OP_HELMHOLTZ;
    h->pw.coef = c;
    h->pw.coef_user = user;
    h->pw.coef_a = a;
    h->pw.coef_b = b;
    ierr = hex_alloc(space, h, &o);
  }
  if (!ierr) ierr = mf_basis1d_setup(space->degree, quad, &h->basis);
  if (!ierr) {
    mf_qdata_layout(o);
    h->cells_per_block = h->qd.batch;
    if (!ctx->bk->op.setup) {
      cpu_steps(o);
      ierr = mf_qdata_setup(o, c, user, a, b);
    } else ierr = ctx->bk->op.setup(o, c, user, a, b);
  }
  if (!o) return mf_agree(ctx, ierr);
  return mf_operator_finish(o, ierr, op);
}

static int hex_create_like(mf_operator like, mf_space space, mf_operator *op)
{
  const mf_pw_op *pw = mf_pw(like);
  MF_CALL(mf_operator_create_pointwise(space, pw->kind, pw->quad, pw->coef_a, pw->coef_b, pw->coef, pw->coef_user, op));
  (*op)->dirichlet = like->dirichlet;
  (*op)->scatter = like->scatter;
  if ((*op)->type == &mf_optype_hex) mf_hexop(*op)->design = mf_hexop(like)->design;
  return 0;
}

static int hex_create_single(mf_operator like, mf_operator *op)
{
  mf_context ctx = like->ctx;
  const mf_hex_op *lh = mf_hexop(like);
  mf_hex_op *h = NULL;
  mf_operator o = NULL;
  int ierr = MF_CALLOC(ctx, 1, &h);
  if (!ierr) {
    /* the description, rule, layout and launch shape; its own float data (from like's, made for the
     * moment where like has none: on the fly) */
    h->pw = lh->pw;
    h->cells_per_block = lh->cells_per_block;
    h->design = lh->design;
    h->basis = lh->basis;
    h->qd = lh->qd;
    h->qd.data = NULL;
    h->geometry = MF_GEOMETRY_STORED;
    ierr = hex_alloc(like->space, h, &o);
  }
  if (!ierr) {
    o->dirichlet = like->dirichlet;
    o->scatter = like->scatter;
    o->prec = MF_PRECISION_FLOAT;
    if (!ctx->bk->op.single) {
      cpu_steps(o);
      ierr = MF_CALLOC(ctx, h->qd.len, &h->qdf);
      double *made = NULL;
      if (!ierr && lh->geometry == MF_GEOMETRY_ON_THE_FLY) ierr = mf_otf_qdata_cpu(like, &made);
      const double *src = made ? made : lh->qd.data;
      for (size_t i = 0; !ierr && i < h->qd.len; i++) h->qdf[i] = (float)src[i];
      free(made);
    } else ierr = ctx->bk->op.single(o, like);
  }
  if (!o) return mf_agree(ctx, ierr);
  return mf_operator_finish(o, ierr, op);
}

static int hex_assemble_check(mf_operator op, mf_assembly_variant v)
{
  (void)v;
  MF_CHECK(mf_hexop(op)->geometry == MF_GEOMETRY_STORED, op->ctx, MF_ERR_UNSUPPORTED,
           "the operator computes its geometry on the fly: assemble it with stored geometry "
           "(mf_operator_set_geometry(op, MF_GEOMETRY_STORED) first)");
  return 0;
}

static const char *const hex_names[] = {"a matrix-free mass", "a matrix-free Laplace", "a matrix-free Helmholtz",
                                        "a matrix-free elasticity"};
const mf_optype mf_optype_hex = {
    .name = "matrix-free",
    .names = hex_names,
    .pointwise = 1,
    .dirichlet_form = 1,
    .apply = mf_operator_flow_apply,
    .diagonal = hex_diagonal,
    .destroy = hex_destroy,
    .create_like = hex_create_like,
    .create_single = hex_create_single,
    .assemble_check = hex_assemble_check,
    .assemble = mf_assembly_hex_values,
    .linearize = NULL,
};

/* ------------------------------------------------------------------ what only this type has */

/* op is one of this type's, else a refusal that names what `what` applies to */
static int check_hex(mf_operator op, const char *what)
{
  MF_CHECK(op->type == &mf_optype_hex, op->ctx, MF_ERR_UNSUPPORTED, "%s applies to matrix-free operators on hexahedra only",
           what);
  return 0;
}

int mf_operator_set_cells_per_block(mf_operator op, int n)
{
  MF_CHECK(op, NULL, MF_ERR_NULL, "operator is NULL");
  MF_CALL(check_hex(op, "cells per block"));
  const mf_hex_op *h = mf_hexop(op);
  const int maxt = h->qd.nqp > 512 ? 1024 : 512; /* the kernels' launch bounds */
  MF_CHECK(n >= 1 && (long)n * h->qd.nqp <= maxt, op->ctx, MF_ERR_ARGUMENT,
           "cells per block %d out of range 1..%d (%d threads per cell, at most %d per block)", n, maxt / h->qd.nqp,
           h->qd.nqp, maxt);
  mf_hexop(op)->cells_per_block = n;
  return 0;
}

int mf_operator_set_kernel_design(mf_operator op, mf_kernel_design design)
{
  MF_CHECK(op, NULL, MF_ERR_NULL, "operator is NULL");
  MF_CALL(check_hex(op, "a kernel design"));
  MF_CHECK(design == MF_KERNEL_AUTO || design == MF_KERNEL_POINT || design == MF_KERNEL_COLUMN, op->ctx,
           MF_ERR_ARGUMENT, "kernel design %d unknown (MF_KERNEL_AUTO, MF_KERNEL_POINT or MF_KERNEL_COLUMN)",
           (int)design);
  mf_hexop(op)->design = design;
  return 0;
}

/* Geometry on the fly, cpu backend: the coefficient at the points (coefq) replaces the stored data;
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
    if (!mf_pw(op)->coef) return 0;
    double *cq = NULL;
    MF_CALL(MF_CALLOC(op->ctx, (size_t)s->ncells * mf_hexop(op)->qd.nqp, &cq));
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
  mf_hex_op *h = mf_hexop(op);
  if (mode == MF_GEOMETRY_ON_THE_FLY) {
    free(h->qd.data);
    h->qd.data = NULL;
    h->coefq = (double *)st;
  } else {
    h->qd.data = (double *)st;
    free(h->coefq);
    h->coefq = NULL;
  }
  h->geometry = mode;
}

int mf_operator_set_geometry(mf_operator op, mf_geometry mode)
{
  MF_CHECK(op, NULL, MF_ERR_NULL, "operator is NULL");
  mf_context ctx = op->ctx;
  MF_CHECK(mode == MF_GEOMETRY_STORED || mode == MF_GEOMETRY_ON_THE_FLY, ctx, MF_ERR_ARGUMENT,
           "geometry mode %d unknown (MF_GEOMETRY_STORED or MF_GEOMETRY_ON_THE_FLY)", (int)mode);
  MF_CHECK(op->type == &mf_optype_hex, ctx, MF_ERR_UNSUPPORTED,
           "a geometry mode applies to matrix-free mass, Laplace and Helmholtz operators only (this one is %s%s)",
           mf_pw(op) ? "on " : "", mf_pw(op) ? op->space->fam->cells : op->type->name);
  MF_CHECK(op->prec == MF_PRECISION_DOUBLE, ctx, MF_ERR_UNSUPPORTED,
           "geometry on the fly is for double-precision operators: a single-precision copy keeps its stored "
           "quadrature data");
  /* the same on every rank: a switch is committed everywhere or nowhere (below) */
  if (mode == mf_hexop(op)->geometry) return 0;
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
  *mode = op->type == &mf_optype_hex ? mf_hexop(op)->geometry : MF_GEOMETRY_STORED;
  return 0;
}

/* MF_KERNEL_AUTO: the design measured faster for the case (docs/performance.md, "Kernel designs"; 3D
 * on the H100, 2D on the H200): per dim, rule (Gauss p+1, Gauss p+2, GLL collocated), mass or gradient
 * (Laplace, Helmholtz) and degree 1..8, 1 for the column design. */
mf_kernel_design mf_operator_design(const mf_operator op)
{
  const mf_hex_op *h = mf_hexop(op);
  /* on the fly exists in the point design only: MF_KERNEL_COLUMN falls back to it */
  if (h->geometry == MF_GEOMETRY_ON_THE_FLY) return MF_KERNEL_POINT;
  if (h->design != MF_KERNEL_AUTO) return h->design;
  static const unsigned char column[2][3][2][8] = {
      /* 2D */
      {{{1, 1, 1, 1, 1, 1, 1, 0}, {1, 1, 0, 1, 1, 1, 1, 1}},
       {{1, 1, 1, 1, 1, 1, 1, 0}, {1, 0, 1, 1, 1, 1, 1, 1}},
       {{0, 0, 0, 0, 0, 0, 0, 0}, {1, 1, 0, 1, 0, 0, 1, 1}}},
      /* 3D (H100): mass row, then gradient row */
      {{{1, 1, 1, 1, 1, 1, 1, 1}, {0, 1, 0, 1, 1, 1, 1, 1}},
       {{1, 1, 1, 1, 1, 1, 1, 1}, {1, 1, 1, 1, 1, 1, 1, 1}},
       {{0, 0, 0, 0, 0, 0, 0, 0}, {1, 0, 0, 0, 0, 0, 0, 1}}}};
  const int dim = op->space->dim, p = op->space->degree, q = (int)h->pw.quad;
  if (dim < 2 || dim > 3 || p < 1 || p > 8 || q < 0 || q > 2) return MF_KERNEL_POINT;
  return column[dim - 2][q][h->pw.has_grad ? 1 : 0][p - 1] ? MF_KERNEL_COLUMN : MF_KERNEL_POINT;
}

int mf_operator_qdata_to_host(mf_operator op, double *host)
{
  MF_CHECK(op->type == &mf_optype_hex, op->ctx, MF_ERR_UNSUPPORTED, "only matrix-free operators have quadrature data");
  const mf_hex_op *h = mf_hexop(op);
  MF_CHECK(op->prec == MF_PRECISION_DOUBLE, op->ctx, MF_ERR_UNSUPPORTED,
           "a single-precision operator copy has no double quadrature data");
  MF_CHECK(h->geometry == MF_GEOMETRY_STORED, op->ctx, MF_ERR_UNSUPPORTED,
           "the operator computes its geometry on the fly and keeps no quadrature data");
  if (op->ctx->bk->op.qdata_to_host) return op->ctx->bk->op.qdata_to_host(op, host);
  memcpy(host, h->qd.data, sizeof(double) * h->qd.len);
  return 0;
}
