/* operator_simplex.c -- the simplex family's operator type: mass (M_c), Laplace (K_c), Helmholtz
 * (a M + b K_c) and linear elasticity on a simplex space, through the generic flow of lib/operator.c
 * (Dirichlet form, ghost exchanges: none on one rank). Its product applies, on the cpu backend, the CPU
 * reference kernels of ops_cpu.c and, on the cuda backend, their device twins (lib/cuda/simplex.cu) on
 * the vectors' device arrays; the diagonal is computed exactly at the quadrature points, on the host
 * (cpu) or by the device twin (cuda: mf_simplex_cuda_diagonal). The type's data (op->data: simplex_kind, which starts
 * with the description mf_pw_op) is its own basis (the rule), the mf_simplex_op and the device
 * operator. Which degrees a backend takes is decided once, in mf_simplex_backend_check. */
#include "mf_simplex_space.h"
#include "mf_simplex_backend.h"
#include "assembled/assembly_impl.h"
#include "physics/mf_gallery.h"

#include <math.h>

typedef struct {
  mf_pw_op pw;            /* first: the description (lib/operator_impl.h) */
  mf_simplex_basis basis; /* the space's degree at the operator's rule */
  mf_simplex_op sop;      /* scalar operators */
  int elasticity;
  double lambda, mu;
  struct mf_simplex_cuda_op_s *dev; /* cuda backend: the device operator (mf_simplex_cuda.h) */
  double *xs, *ys; /* a single-precision copy on the cpu backend: the vectors in double for the CPU kernels */
} simplex_kind;

static const mf_simplex_mesh *op_mesh(mf_operator op) { return mf_simplex_space_mesh(op->space); }
static const mf_simplex_dofs *op_dofs(mf_operator op) { return &((const mf_simplex_space *)op->space->fdata)->dofs; }

static int apply_simplex_cpu(mf_operator op, mf_vector x, mf_vector y)
{
  const simplex_kind *k = (const simplex_kind *)op->data;
  if (k->elasticity) mf_simplex_elasticity_apply_cpu(op_mesh(op), &k->basis, op_dofs(op), k->lambda, k->mu, x->data, y->data);
  else mf_simplex_op_apply_cpu(&k->sop, x->data, y->data);
  return 0;
}

/* The diagonal of cell e: d_i += sum_q w_q |det J| [a c_m phi_i^2 + b c_q g_i . g_i] for the scalar
 * operators (c_m = c_q for the mass operator, 1 for Helmholtz), with g_i the physical gradient J^-T grad phi_i; for elasticity the entry of component c of
 * node i, lambda g_c^2 + mu (|g|^2 + g_c^2) (u = v = phi_i e_c in sigma(u) : eps(v)). */
static void diagonal_cell(int e, double *de, void *p)
{
  const mf_operator op = (mf_operator)p;
  const simplex_kind *k = (const simplex_kind *)op->data;
  const mf_simplex_mesh *m = op_mesh(op);
  const mf_simplex_basis *b = &k->basis;
  const int dim = m->dim, N = b->nnodes, nq = b->nq, nc = op->space->ncomp;
  const int *v = m->cells + (size_t)e * (dim + 1);
  double X[12], Ji[3][3];
  for (int i = 0; i <= dim; i++)
    for (int l = 0; l < dim; l++) X[i * dim + l] = m->coords[3 * v[i] + l];
  const double det = fabs(mf_simplex_affine(dim, X, Ji, NULL));
  for (int i = 0; i < N * nc; i++) de[i] = 0.0;
  for (int q = 0; q < nq; q++) {
    const double *phi = b->B + (size_t)q * N, *gr = b->G + (size_t)q * N * dim;
    const double w = b->qwts[q] * det, cq = k->sop.coefq ? k->sop.coefq[(size_t)e * nq + q] : 1.0;
    for (int i = 0; i < N; i++) {
      double g[3] = {0, 0, 0}, gg = 0.0;
      for (int l = 0; l < dim; l++) {
        for (int r = 0; r < dim; r++) g[l] += Ji[r][l] * gr[i * dim + r];
        gg += g[l] * g[l];
      }
      if (k->elasticity)
        for (int c = 0; c < dim; c++) de[i * dim + c] += w * mf_pw_stress_diag_d(k->lambda, k->mu, g[c], gg);
      else de[i] += w * mf_pw_scalar_entry_d(k->sop.a * (k->sop.mass_coef ? cq : 1.0), k->sop.b * cq, phi[i], phi[i], gg);
    }
  }
}

/* d += the operator's diagonal (every cell's, in cell order) */
static int diagonal_host(mf_operator op, double *d)
{
  const simplex_kind *k = (const simplex_kind *)op->data;
  return mf_simplex_cells_sum(op->ctx, op_mesh(op)->ncells, k->basis.nnodes, op->space->ncomp,
                              op_dofs(op)->cell_dofs, diagonal_cell, op, d);
}

static int diagonal_simplex_cpu(mf_operator op, mf_vector dv) { return diagonal_host(op, dv->data); }

/* On a backend with simplex kernels (ctx->bk->simplex, mf_simplex_backend.h: cuda): the action on the
 * device arrays of x and y (the kernel zeroes y), the diagonal there too (the sums above, one thread per
 * cell), or from the host where the backend has no diagonal (copied once per call). */
static int apply_simplex_cuda(mf_operator op, mf_vector x, mf_vector y)
{
  return op->ctx->bk->simplex->apply(((const simplex_kind *)op->data)->dev, x->data, y->data);
}

static int diagonal_simplex_cuda(mf_operator op, mf_vector dv)
{
  const mf_simplex_backend_ops *sx = op->ctx->bk->simplex;
  if (sx->diagonal) return sx->diagonal(((const simplex_kind *)op->data)->dev, dv->data);
  double *d = NULL;
  MF_CALL(MF_CALLOC_TOUCH(op->ctx, (size_t)dv->n + 1, &d));
  int ierr = diagonal_host(op, d);
  if (!ierr) ierr = dv->ops.from_host(dv, d, dv->n);
  free(d);
  return ierr;
}

static int device_create(mf_operator o, simplex_kind *k)
{
  const mf_simplex_backend_ops *sx = o->ctx->bk->simplex;
  o->ops.apply = apply_simplex_cuda;
  o->ops.diagonal = diagonal_simplex_cuda;
  const double t0 = mf_phase_begin(o->ctx);
  int ierr;
  if (k->elasticity)
    ierr = sx->elasticity_create(o->ctx, op_mesh(o), &k->basis, op_dofs(o), k->lambda, k->mu, 0, &k->dev);
  else ierr = sx->op_create(o->ctx, &k->sop, 0, &k->dev);
  mf_phase_end(o->ctx, MF_PHASE_TRANSFER, t0);
  return ierr;
}

static void destroy_simplex(mf_operator op)
{
  simplex_kind *k = (simplex_kind *)op->data;
  if (!k) return;
  if (k->dev) op->ctx->bk->simplex->destroy(&k->dev);
  free(k->xs);
  mf_simplex_op_destroy(&k->sop);
  mf_simplex_basis_free(&k->basis);
  free(k);
  op->data = NULL;
}

static int assemble_check(mf_operator op, mf_assembly_variant v);
static int assemble(mf_operator op, mf_assembly_variant v, mf_operator A);
static int create_single(mf_operator like, mf_operator *op);
static const char *const simplex_names[] = {"a simplex mass", "a simplex Laplace", "a simplex Helmholtz",
                                            "a simplex elasticity"};
/* the simplex family's operator type: made again on other spaces (multigrid's levels) and copied in float
 * (the float V-cycle) */
/* the same operator on another space (multigrid's levels) */
static int create_like(mf_operator like, mf_space space, mf_operator *op)
{
  const simplex_kind *k = (const simplex_kind *)like->data;
  if (k->elasticity) MF_CALL(mf_operator_create_elasticity(space, k->lambda, k->mu, op));
  else
    MF_CALL(mf_operator_create_pointwise(space, k->pw.kind, k->pw.quad, k->pw.coef_a, k->pw.coef_b, k->pw.coef,
                                         k->pw.coef_user, op));
  (*op)->dirichlet = like->dirichlet;
  return 0;
}

static const mf_optype simplex_type = {
    .name = "simplex",
    .names = simplex_names,
    .pointwise = 1,
    .dirichlet_form = 1,
    .apply = mf_operator_flow_apply,
    .diagonal = mf_operator_flow_diagonal,
    .destroy = destroy_simplex,
    .create_like = create_like,
    .create_single = create_single,
    .assemble_check = assemble_check,
    .assemble = assemble,
};

/* The operator object of the simplex type around its data (k: made here, taken over). */
static int create(mf_space space, mf_op_kind kind, mf_quadrature quad, int qdegree, double a, double b,
                  mf_coefficient_fn c, void *user, simplex_kind *k, mf_operator *op)
{
  mf_context ctx = space->ctx;
  const mf_simplex_space *ss = (const mf_simplex_space *)space->fdata;
  const mf_simplex_mesh *m = mf_simplex_space_mesh(space);
  mf_operator o = NULL;
  int ierr = mf_simplex_backend_check(ctx, space->degree);
  if (!ierr && ctx->backend == MF_BACKEND_CUDA && qdegree != 2 * space->degree)
    ierr = mf_error_set(ctx, MF_ERR_UNSUPPORTED, __FILE__, __LINE__, __func__,
                        "simplex operators on the cuda backend use the rule of degree 2p = %d (MF_QUAD_GAUSS or "
                        "MF_QUAD_GLL), not %d (MF_QUAD_GAUSS_P2)", 2 * space->degree, qdegree);
  if (!ierr) ierr = mf_operator_alloc(space, &simplex_type, k, &o);
  if (ierr) {
    free(k);
    return mf_agree(ctx, ierr); /* collective, as every creator */
  }
  k->pw.kind = kind; /* the gallery's description (mf_gallery.h) */
  k->pw.quad = quad;
  k->pw.has_mass = mf_pw_has((int)kind, MF_PW_VALUE);
  k->pw.has_grad = mf_pw_has((int)kind, MF_PW_GRAD);
  k->pw.coef = c;
  k->pw.coef_user = user;
  k->pw.coef_a = a;
  k->pw.coef_b = b;
  o->ops.apply = apply_simplex_cpu;
  o->ops.diagonal = diagonal_simplex_cpu;
  const double t0 = mf_phase_begin(ctx);
  ierr = mf_simplex_basis_setup(ctx, space->dim, space->degree, qdegree, &k->basis);
  if (!ierr && !k->elasticity) ierr = mf_simplex_op_create(ctx, m, &k->basis, &ss->dofs, a, b, c, user, &k->sop);
  /* Helmholtz a M + b K(c): its mass term has no coefficient */
  k->sop.mass_coef = (mf_pw_gallery[kind].coef & MF_PW_VALUE) != 0;
  mf_phase_end(ctx, MF_PHASE_COEFFICIENT, t0);
  if (!ierr && ctx->bk->simplex) ierr = device_create(o, k);
  return mf_operator_finish(o, ierr, op);
}

int mf_simplex_operator_create(mf_space space, mf_op_kind kind, mf_quadrature quad, double a, double b,
                               mf_coefficient_fn c, void *user, mf_operator *op)
{
  simplex_kind *k = NULL; /* a scalar space (mf_operator_create_pointwise) */
  MF_CALL(MF_CALLOC_AGREED(space->ctx, 1, &k));
  /* the rule: degree 2p (exact for the mass and stiffness of affine cells), 2p + 2 for MF_QUAD_GAUSS_P2 */
  const int qdegree = 2 * space->degree + (quad == MF_QUAD_GAUSS_P2 ? 2 : 0);
  return create(space, kind, quad, qdegree, a, b, c, user, k, op);
}

int mf_operator_create_elasticity(mf_space space, double lambda, double mu, mf_operator *op)
{
  if (op) *op = NULL; /* NULL on every failure, the first argument's included */
  MF_CHECK(space, NULL, MF_ERR_NULL, "space is NULL");
  mf_context ctx = space->ctx;
  MF_CHECK(op, ctx, MF_ERR_NULL, "output pointer op is NULL");
  *op = NULL;
  MF_CHECK(space->fdata, ctx, MF_ERR_UNSUPPORTED, "elasticity operators are made on simplex spaces only");
  MF_CHECK(space->ncomp == space->dim, ctx, MF_ERR_INCOMPATIBLE,
           "elasticity needs a space of %d components (mf_space_create_components), this one has %d", space->dim,
           space->ncomp);
  MF_CALL(mf_space_check_mesh(space));
  MF_CALL(mf_simplex_elasticity_check(ctx, lambda, mu));
  simplex_kind *k = NULL;
  MF_CALL(MF_CALLOC_AGREED(ctx, 1, &k));
  k->elasticity = 1;
  k->lambda = lambda;
  k->mu = mu;
  /* degenerate cells were refused when the mesh was made (built-in, Gmsh reader) */
  return create(space, MF_OP_ELASTICITY, MF_QUAD_GAUSS, 2 * space->degree, 0.0, 1.0, NULL, NULL, k, op);
}

/* ------------------------------------------------------------------ single-precision copies */

/* The product of a copy in float: on the cpu backend the CPU kernels in double on the vectors' values
 * (c(x_q) rounded to float when the copy was made), the result rounded to float once; the device's float
 * kernels read the same float values and sum each cell in double, but add the cells into y in float (atomics),
 * so the two agree to float rounding, not bit for bit. The scratch xs, ys is the operator's: one product at
 * a time per operator. */
static int apply_single_cpu(mf_operator op, mf_vector x, mf_vector y)
{
  const simplex_kind *k = (const simplex_kind *)op->data;
  const int n = x->n;
#pragma omp parallel for schedule(static)
  for (int i = 0; i < n; i++) k->xs[i] = x->sdata[i];
  if (k->elasticity) mf_simplex_elasticity_apply_cpu(op_mesh(op), &k->basis, op_dofs(op), k->lambda, k->mu, k->xs, k->ys);
  else mf_simplex_op_apply_cpu(&k->sop, k->xs, k->ys);
#pragma omp parallel for schedule(static)
  for (int i = 0; i < n; i++) y->sdata[i] = (float)k->ys[i];
  return 0;
}

static int apply_single_cuda(mf_operator op, mf_vector x, mf_vector y)
{
  return op->ctx->bk->simplex->apply_single(((const simplex_kind *)op->data)->dev, x->sdata, y->sdata);
}

static int diagonal_single(mf_operator op, mf_vector d)
{
  (void)d;
  return mf_error_set(op->ctx, MF_ERR_UNSUPPORTED, __FILE__, __LINE__, __func__,
                      "the diagonal of a single-precision copy is its double operator's");
}

int mf_simplex_operator_single(mf_space space, const mf_pw_op *pw, const mf_simplex_basis *b, const mf_simplex_op *sop,
                               int elasticity, double lambda, double mu, struct mf_simplex_cuda_op_s *dev,
                               mf_operator *op)
{
  mf_context ctx = space->ctx;
  *op = NULL;
  const mf_simplex_backend_ops *sx = ctx->bk->simplex;
  /* collective, as every creator: a refusal on one rank is every rank's */
  int ierr = !sx || (sx->single && dev)
                 ? 0
                 : mf_error_set(ctx, MF_ERR_UNSUPPORTED, __FILE__, __LINE__, __func__,
                                "a single-precision simplex operator: the %s backend has no float kernels for it",
                                mf_context_backend(ctx));
  if (!ierr && !elasticity && !sop)
    ierr = mf_error_set(ctx, MF_ERR_NULL, __FILE__, __LINE__, __func__, "the scalar operator is NULL");
  simplex_kind *k = NULL;
  mf_operator o = NULL;
  if (!ierr) ierr = MF_CALLOC(ctx, 1, &k);
  if (!ierr) ierr = mf_operator_alloc(space, &simplex_type, k, &o);
  if (ierr) {
    free(k);
    return mf_agree(ctx, ierr);
  }
  k->pw = *pw;
  k->elasticity = elasticity, k->lambda = lambda, k->mu = mu;
  o->prec = MF_PRECISION_FLOAT;
  o->ops.diagonal = diagonal_single;
  ierr = mf_simplex_basis_setup(ctx, space->dim, space->degree, b->qdegree, &k->basis);
  if (!ierr && !elasticity) { /* the description; c(x_q) rounded to float on the host (cpu), on the device (cuda) */
    k->sop = *sop;
    k->sop.basis = &k->basis;
    k->sop.coefq = NULL;
    if (!sx && sop->coefq) {
      const size_t n = (size_t)sop->mesh->ncells * b->nq;
      ierr = MF_CALLOC(ctx, n + 1, &k->sop.coefq);
      for (size_t i = 0; !ierr && i < n; i++) k->sop.coefq[i] = (double)(float)sop->coefq[i];
    }
  }
  if (!ierr && sx) {
    o->ops.apply = apply_single_cuda;
    const double t0 = mf_phase_begin(ctx);
    ierr = sx->single(dev, b, &k->dev);
    mf_phase_end(ctx, MF_PHASE_TRANSFER, t0);
  } else if (!ierr) {
    o->ops.apply = apply_single_cpu;
    ierr = MF_CALLOC(ctx, 2 * (size_t)space->nlocal + 1, &k->xs);
    k->ys = k->xs ? k->xs + space->nlocal : NULL;
  }
  return mf_operator_finish(o, ierr, op);
}

/* simplex_type's copy in float (mf_operator_create_single) */
static int create_single(mf_operator like, mf_operator *op)
{
  const simplex_kind *k = (const simplex_kind *)like->data;
  MF_CALL(mf_simplex_operator_single(like->space, &k->pw, &k->basis, k->elasticity ? NULL : &k->sop, k->elasticity,
                                     k->lambda, k->mu, k->dev, op));
  (*op)->dirichlet = like->dirichlet;
  return 0;
}

/* ------------------------------------------------------------------ assembled operators */

static int assemble_check(mf_operator op, mf_assembly_variant v)
{
  const simplex_kind *k = (const simplex_kind *)op->data;
  MF_CHECK(!k->elasticity, op->ctx, MF_ERR_UNSUPPORTED,
           "simplex elasticity operators are not assembled (mass, Laplace and Helmholtz are)");
  MF_CHECK(op->ctx->size == 1 || op->ctx->backend == MF_BACKEND_CPU, op->ctx, MF_ERR_UNSUPPORTED,
           "assembled simplex operators on %d ranks: the cpu backend (on the %s backend one rank)", op->ctx->size,
           mf_context_backend(op->ctx));
  MF_CHECK(v == MF_ASSEMBLY_AUTO || v == MF_ASSEMBLY_ROWWISE, op->ctx, MF_ERR_UNSUPPORTED,
           "simplex operators are assembled rowwise (MF_ASSEMBLY_AUTO or MF_ASSEMBLY_ROWWISE), not by the %s variant",
           v == MF_ASSEMBLY_SEARCH ? "search" : "table");
  return 0;
}

static int assemble_cuda(mf_operator op, mf_operator A)
{
  const mf_simplex_backend_ops *sx = op->ctx->bk->simplex;
  mf_simplex_space *ss = (mf_simplex_space *)op->space->fdata;
  ss->dev_asm_free = sx->asm_free;
  return sx->assemble(((const simplex_kind *)op->data)->dev, op->space, &ss->dev_asm, A);
}

static int assemble(mf_operator op, mf_assembly_variant v, mf_operator A)
{
  (void)v; /* rowwise (assemble_check) */
  mf_context ctx = op->ctx;
  if (ctx->bk->simplex) return assemble_cuda(op, A);
  const simplex_kind *k = (const simplex_kind *)op->data;
  const mf_simplex_basis *b = &k->basis;
  const int nm = 1 + b->dim * (b->dim + 1) / 2;
  mf_space s = op->space;
  double *S = NULL;
  int64_t *off = NULL, *ent = NULL;
  int ierr = MF_CALLOC(ctx, (size_t)nm * b->nnodes * b->nnodes, &S);
  if (!ierr) ierr = mf_assembly_dof_cells(s, NULL, s->ncells, &off, &ent);
  if (!ierr) {
    mf_simplex_reference_matrices(b, S);
    mf_simplex_assembly_values_cpu(&k->sop, S, mf_csr(A)->rowptr, mf_csr(A)->colidx, off, ent, s->nlocal,
                                   mf_csr(A)->vals);
  }
  free(S);
  free(off);
  free(ent);
  return ierr;
}
