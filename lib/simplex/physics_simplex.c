/* physics_simplex.c -- the simplex family's operators of users' pointwise physics
 * (mf_operator_create_physics): P_p spaces of 1..4 components on affine cells, the g-functions stored
 * in reference form at the points of the rule of degree 2p (2p + 2 with MF_QUAD_GAUSS_P2;
 * lib/physics/mf_physics.h). One cell: the field's values and reference derivatives at the points from
 * the tabulated basis (B, G), the point's action, and back with B^T and G^T; the cells' contributions
 * are added in cell order (mf_simplex_cells_sum). The cpu backend's kernels, the twins of the cuda
 * backend's (lib/cuda/simplex_phys_jit.cuh, which keep the full layout); one rank. */
#include "mf_simplex_physics.h"
#include "assembled/assembly_impl.h"
#include "base/mf_backend.h"

#include <math.h>

typedef mf_simplex_phys simplex_phys;

static simplex_phys *sp(const struct mf_operator_s *op) { return (simplex_phys *)op->data; }
static const mf_simplex_mesh *op_mesh(const mf_operator op) { return mf_simplex_space_mesh(op->space); }

/* The cell's vertices (X), Ji (Ji[3l + e] = d xi_l / d x_e) and |det J|. */
static double cell_geometry(const mf_simplex_mesh *m, int e, double *X, double *Jf)
{
  const int dim = m->dim;
  const int *v = m->cells + (size_t)e * (dim + 1);
  double Ji[3][3];
  for (int i = 0; i <= dim; i++)
    for (int l = 0; l < dim; l++) X[i * dim + l] = m->coords[3 * v[i] + l];
  const double det = mf_simplex_affine(dim, X, Ji, NULL);
  for (int r = 0; r < 3; r++)
    for (int l = 0; l < 3; l++) Jf[3 * r + l] = (r < dim && l < dim) ? Ji[r][l] : 0.0;
  return fabs(det);
}

static double *point_data(mf_operator op, const double *state, const mf_phys_layout *full, mf_bad_point *nan);

/* The stored data at u = grad u = 0 (the set-up) */
static int setup_cpu(mf_operator op)
{
  mf_context ctx = op->ctx;
  simplex_phys *h = sp(op);
  const size_t npts = (size_t)op_mesh(op)->ncells * h->basis.nq;
  mf_phys_layout full;
  mf_phys_layout_init(&h->ph, op_mesh(op)->dim, &full);
  mf_bad_point nan = MF_BAD_POINT_NONE;
  double *data = point_data(op, NULL, &full, &nan);
  if (!data) return MF_ERR_MEMORY;
  if (nan.cell >= 0) {
    free(data);
    return mf_phys_refuse(ctx, &h->ph, &full, nan.cell, nan.q, nan.x);
  }
  h->lay = full;
  h->qd = data;
  /* the narrowest layout that holds them (one block; D3's upper triangle): a decision of this rank's
   * cells, whose data differ between ranks, not the result */
  return mf_phys_narrow(ctx, &h->lay, &h->qd, npts);
}

typedef struct {
  mf_operator op;
  const double *x;
  mf_bad_point *bad; /* the residual: the first point where f0 or f1 is not finite */
} cell_args;

static void cell_local(const mf_operator op, int e, const double *ue, double *ve);

/* ve[i nc + c] of cell e for the local vector a->x */
static void cell_apply(int e, double *ve, void *p)
{
  const cell_args *a = (const cell_args *)p;
  const int N = sp(a->op)->basis.nnodes, nc = a->op->space->ncomp;
  const int *cd = a->op->space->cell_nodes + (size_t)e * N;
  double ue[MF_MAX_COMPONENTS * MF_SIMPLEX_MAX_NODES];
  for (int i = 0; i < N; i++)
    for (int c = 0; c < nc; c++) ue[i * nc + c] = a->x[(size_t)cd[i] * nc + c];
  cell_local(a->op, e, ue, ve);
}

/* the cell's action on its values ue[i nc + c] into ve (the same layout) */
static void cell_local(const mf_operator op, int e, const double *ue, double *ve)
{
  const simplex_phys *h = sp(op);
  const mf_simplex_basis *b = &h->basis;
  const mf_phys_layout *L = &h->lay;
  const int dim = b->dim, N = b->nnodes, nq = b->nq, nc = L->nc;
  memset(ve, 0, sizeof(double) * (size_t)N * nc);
  const size_t first = (size_t)e * nq * L->n;
  for (int q = 0; q < nq; q++) {
    const double *B = b->B + (size_t)q * N, *G = b->G + (size_t)q * N * dim;
    double u[MF_MAX_COMPONENTS] = {0}, ref[MF_MAX_COMPONENTS * 3] = {0}, r0[MF_MAX_COMPONENTS], r1[MF_MAX_COMPONENTS * 3];
    double Dq[MF_PHYS_MAX_ENTRIES];
    const double *D = h->qd ? h->qd + first + (size_t)q * L->n : Dq;
    if (!h->qd) /* the float copy: the point's entries in double, the cell's work too */
      for (int i = 0; i < L->n; i++) Dq[i] = (double)h->qdf[first + (size_t)q * L->n + (size_t)i];
    for (int i = 0; i < N; i++)
      for (int c = 0; c < nc; c++) {
        u[c] += B[i] * ue[i * nc + c];
        for (int m = 0; m < dim; m++) ref[c * dim + m] += G[i * dim + m] * ue[i * nc + c];
      }
    mf_phys_apply_point(L, D, u, ref, r0, r1);
    for (int i = 0; i < N; i++)
      for (int c = 0; c < nc; c++) {
        double s = B[i] * r0[c];
        for (int l = 0; l < dim; l++) s += G[i * dim + l] * r1[c * dim + l];
        ve[i * nc + c] += s;
      }
  }
  if (h->nbf) mf_simplex_phys_faces_cell(op, e, ue, ve, 0, NULL, NULL); /* g0 on the facets (Robin) */
}

/* The state at point q of cell e (u[c], ref[c dim + m]) from the cell's values ue (i nc + c). */
static void point_state(const mf_simplex_basis *b, int nc, const double *ue, int q, double *u, double *ref)
{
  const int dim = b->dim, N = b->nnodes;
  const double *B = b->B + (size_t)q * N, *G = b->G + (size_t)q * N * dim;
  for (int c = 0; c < nc; c++) {
    u[c] = 0.0;
    for (int m = 0; m < dim; m++) ref[c * dim + m] = 0.0;
  }
  for (int i = 0; i < N; i++)
    for (int c = 0; c < nc; c++) {
      u[c] += B[i] * ue[i * nc + c];
      for (int m = 0; m < dim; m++) ref[c * dim + m] += G[i * dim + m] * ue[i * nc + c];
    }
}

/* the point's x in cell e (vertices X) */
static void point_x(const mf_simplex_basis *b, const double *X, int q, double *x)
{
  const int dim = b->dim;
  for (int k = 0; k < dim; k++) {
    x[k] = X[k];
    for (int l = 0; l < dim; l++) x[k] += (X[(l + 1) * dim + k] - X[k]) * b->qpts[q * dim + l];
  }
}

/* ve[i nc + c] of cell e: the residual of f0 and f1 at the local vector a->x */
static void cell_residual(int e, double *ve, void *p)
{
  const cell_args *a = (const cell_args *)p;
  const simplex_phys *h = sp(a->op);
  const mf_simplex_basis *b = &h->basis;
  const int dim = b->dim, N = b->nnodes, nq = b->nq, nc = h->ph.ncomp;
  const int *cd = a->op->space->cell_nodes + (size_t)e * N;
  double ue[MF_MAX_COMPONENTS * MF_SIMPLEX_MAX_NODES], X[12], Ji[9];
  const double det = cell_geometry(op_mesh(a->op), e, X, Ji);
  for (int i = 0; i < N; i++)
    for (int c = 0; c < nc; c++) ue[i * nc + c] = a->x[(size_t)cd[i] * nc + c];
  memset(ve, 0, sizeof(double) * (size_t)N * nc);
  for (int q = 0; q < nq; q++) {
    const double *B = b->B + (size_t)q * N, *G = b->G + (size_t)q * N * dim;
    double u[MF_MAX_COMPONENTS], ref[MF_MAX_COMPONENTS * 3], r0[MF_MAX_COMPONENTS], r1[MF_MAX_COMPONENTS * 3], x[3];
    point_state(b, nc, ue, q, u, ref);
    point_x(b, X, q, x);
    if (mf_phys_residual_point(&h->ph, dim, x, Ji, b->qwts[q] * det, u, ref, r0, r1)) {
      const double v = NAN;
      mf_bad_point_note(a->bad, e, q, dim, x, 1, &v);
      return;
    }
    for (int i = 0; i < N; i++)
      for (int c = 0; c < nc; c++) {
        double s = B[i] * r0[c];
        for (int l = 0; l < dim; l++) s += G[i * dim + l] * r1[c * dim + l];
        ve[i * nc + c] += s;
      }
  }
  int fq = 0;
  double fx[3] = {0, 0, 0};
  if (h->nbf && mf_simplex_phys_faces_cell(a->op, e, ue, ve, 1, &fq, fx)) { /* f0 on the facets: noted as q < 0 */
    const double v = NAN;
    mf_bad_point_note(a->bad, e, -1 - fq, dim, fx, 1, &v);
  }
}

static int residual_cpu(mf_operator op, mf_vector uv, mf_vector rv)
{
  mf_bad_point bad = MF_BAD_POINT_NONE;
  cell_args a = {op, uv->data, &bad};
  const simplex_phys *h = sp(op);
  MF_CALL(mf_simplex_cells_sum(op->ctx, op_mesh(op)->ncells, h->basis.nnodes, op->space->ncomp, op->space->cell_nodes,
                               cell_residual, &a, rv->data));
  if (bad.cell < 0) return 0;
  if (bad.q < 0) {
    char xs[96];
    mf_point_text(op->space->dim, bad.x, xs, sizeof xs);
    return mf_error_set(op->ctx, MF_ERR_ARGUMENT, __FILE__, __LINE__, __func__,
                        "physics '%s': a boundary f0 gave a value that is not finite at facet point %d of cell %d, x = "
                        "%s: the boundary functions must give finite values",
                        h->ph.name, -1 - bad.q, bad.cell, xs);
  }
  /* the state at the first such point, for the message */
  const mf_simplex_basis *b = &h->basis;
  const int dim = b->dim, N = b->nnodes, nc = h->ph.ncomp;
  const int *cd = op->space->cell_nodes + (size_t)bad.cell * N;
  double ue[MF_MAX_COMPONENTS * MF_SIMPLEX_MAX_NODES] = {0}, X[12], Ji[9], u[MF_MAX_COMPONENTS], ref[MF_MAX_COMPONENTS * 3], du[MF_MAX_COMPONENTS * 3];
  cell_geometry(op_mesh(op), bad.cell, X, Ji);
  for (int i = 0; i < N; i++)
    for (int c = 0; c < nc; c++) ue[i * nc + c] = uv->data[(size_t)cd[i] * nc + c];
  point_state(b, nc, ue, bad.q, u, ref);
  for (int c = 0; c < nc; c++)
    for (int k = 0; k < dim; k++) {
      du[c * dim + k] = 0.0;
      for (int m = 0; m < dim; m++) du[c * dim + k] += ref[c * dim + m] * Ji[3 * m + k];
    }
  return mf_phys_residual_refuse(op->ctx, &h->ph, dim, bad.cell, bad.q, bad.x, u, du);
}

/* The g-functions of every point in the layout full (phase "geometry"), at u = grad u = 0 (state NULL) or at the
 * local values state; the first point where one is not finite noted in *nan. NULL where the allocation failed. */
static double *point_data(mf_operator op, const double *state, const mf_phys_layout *full, mf_bad_point *nan)
{
  mf_context ctx = op->ctx;
  const simplex_phys *h = sp(op);
  const mf_simplex_mesh *m = op_mesh(op);
  const mf_simplex_basis *b = &h->basis;
  const int dim = m->dim, nq = b->nq, N = b->nnodes, nc = h->ph.ncomp;
  double *data = NULL;
  if (MF_CALLOC_TOUCH(ctx, (size_t)m->ncells * nq * full->n + 1, &data)) return NULL;
  const int *cells = op->space->cell_nodes;
  const double t0 = mf_phase_begin(ctx);
#pragma omp parallel for schedule(static)
  for (int e = 0; e < m->ncells; e++) {
    double X[12], Ji[9], ue[MF_MAX_COMPONENTS * MF_SIMPLEX_MAX_NODES];
    const double det = cell_geometry(m, e, X, Ji); /* degenerate cells were refused with the mesh */
    const int *cd = cells + (size_t)e * N;
    for (int i = 0; state && i < N; i++)
      for (int c = 0; c < nc; c++) ue[i * nc + c] = state[(size_t)cd[i] * nc + c];
    for (int q = 0; q < nq; q++) {
      double u[MF_MAX_COMPONENTS], ref[MF_MAX_COMPONENTS * 3], xq[3];
      double *D = data + ((size_t)e * nq + q) * full->n;
      point_x(b, X, q, xq);
      if (state) point_state(b, nc, ue, q, u, ref);
      if (state ? mf_phys_point_state(&h->ph, full, xq, Ji, b->qwts[q] * det, u, ref, D)
                : mf_phys_point(&h->ph, full, xq, Ji, b->qwts[q] * det, D)) {
        const double v = NAN;
        mf_bad_point_note(nan, e, q, dim, xq, 1, &v);
        break;
      }
    }
  }
  mf_phase_end(ctx, MF_PHASE_GEOMETRY, t0);
  return data;
}

/* The stored data at the state uv: the g-functions at (u, grad u) of every point, in the full layout, then the
 * narrowest that holds them (as setup_cpu); the data before are kept, on every rank, where a value is not finite
 * on one. */
static int state_cpu(mf_operator op, mf_vector uv)
{
  mf_context ctx = op->ctx;
  simplex_phys *h = sp(op);
  const int dim = op_mesh(op)->dim;
  MF_CHECK(!mf_simplex_phys_faces_has_operator(h), ctx, MF_ERR_UNSUPPORTED,
           "physics '%s' has boundary terms in its operator (g0 on facets): their linearisation at a state is not "
           "made yet",
           h->ph.name);
  mf_phys_layout full;
  mf_phys_layout_init(&h->ph, dim, &full);
  mf_bad_point nan = MF_BAD_POINT_NONE;
  double *data = point_data(op, uv->data, &full, &nan);
  int ierr = data ? 0 : MF_ERR_MEMORY;
  if (!ierr && nan.cell >= 0) {
    char xs[96];
    mf_point_text(dim, nan.x, xs, sizeof xs);
    ierr = mf_error_set(ctx, MF_ERR_ARGUMENT, __FILE__, __LINE__, __func__,
                        "physics '%s': a g-function gave a value that is not finite at the state, at quadrature point %d "
                        "of cell %d (rank %d), x = %s: the state is outside where the functions are defined",
                        h->ph.name, nan.q, nan.cell, ctx->rank, xs);
  }
  ierr = mf_agree(ctx, ierr); /* every rank keeps its data before, or every rank takes the new */
  if (ierr) {
    free(data);
    return ierr;
  }
  free(h->qd);
  h->lay = full;
  h->qd = data;
  return mf_phys_narrow(ctx, &h->lay, &h->qd, (size_t)op_mesh(op)->ncells * h->basis.nq);
}

/* de[i nc + c]: the diagonal entries of cell e */
static void cell_diagonal(int e, double *de, void *p)
{
  const cell_args *a = (const cell_args *)p;
  const simplex_phys *h = sp(a->op);
  const mf_simplex_basis *b = &h->basis;
  const mf_phys_layout *L = &h->lay;
  const int dim = b->dim, N = b->nnodes, nq = b->nq, nc = L->nc, nt = mf_phys_diag_nterms(L);
  memset(de, 0, sizeof(double) * (size_t)N * nc);
  const double *D = h->qd + (size_t)e * nq * L->n;
  for (int q = 0; q < nq; q++) {
    const double *B = b->B + (size_t)q * N, *G = b->G + (size_t)q * N * dim;
    for (int c = 0; c < nc; c++)
      for (int j = 0; j < nt; j++) {
        int k, l;
        const double d = D[(size_t)q * L->n + mf_phys_diag_term(L, c, j, &k, &l)];
        for (int i = 0; i < N; i++) de[i * nc + c] += d * (k < 0 ? B[i] : G[i * dim + k]) * (l < 0 ? B[i] : G[i * dim + l]);
      }
  }
  if (h->nbf) mf_simplex_phys_faces_diagonal(a->op, e, de);
}

static int apply_cpu(mf_operator op, mf_vector x, mf_vector y)
{
  cell_args a = {op, x->data, NULL};
  memset(y->data, 0, sizeof(double) * (size_t)op->space->nlocal);
  return mf_simplex_cells_sum(op->ctx, op_mesh(op)->ncells, sp(op)->basis.nnodes, op->space->ncomp,
                              op->space->cell_nodes, cell_apply, &a, y->data);
}

/* the float copy's y = A x (float vectors): through double copies of x and y, the cells' sums as in double */
static int apply_cpu_single(mf_operator op, mf_vector x, mf_vector y)
{
  const size_t n = (size_t)op->space->nlocal;
  double *xd = NULL, *yd = NULL;
  int ierr = MF_CALLOC(op->ctx, n + 1, &xd);
  if (!ierr) ierr = MF_CALLOC(op->ctx, n + 1, &yd);
  for (size_t i = 0; !ierr && i < n; i++) xd[i] = (double)x->sdata[i];
  cell_args a = {op, xd, NULL};
  if (!ierr)
    ierr = mf_simplex_cells_sum(op->ctx, op_mesh(op)->ncells, sp(op)->basis.nnodes, op->space->ncomp,
                                op->space->cell_nodes, cell_apply, &a, yd);
  for (size_t i = 0; !ierr && i < n; i++) y->sdata[i] = (float)yd[i];
  free(xd);
  free(yd);
  return ierr;
}

static int diagonal_cpu(mf_operator op, mf_vector d)
{
  cell_args a = {op, NULL, NULL};
  return mf_simplex_cells_sum(op->ctx, op_mesh(op)->ncells, sp(op)->basis.nnodes, op->space->ncomp,
                              op->space->cell_nodes, cell_diagonal, &a, d->data);
}

/* ------------------------------------------------------------------ assembly */

static int assemble_check(mf_operator op, mf_assembly_variant v)
{
  MF_CHECK(v == MF_ASSEMBLY_AUTO, op->ctx, MF_ERR_UNSUPPORTED,
           "physics operators are assembled from their element matrices (MF_ASSEMBLY_AUTO), not by variant %d", (int)v);
  return 0;
}

/* The element matrix of every cell from the cell's action on unit vectors, added into the CSR rows of its
 * entries (row node_i nc + c, column node_j nc + b), cell by cell in order (one rank; deterministic). */
static int assemble(mf_operator op, mf_assembly_variant v, mf_operator A)
{
  (void)v;
  if (op->ctx->backend != MF_BACKEND_CPU) { /* on the device; the facets' g0 terms added from the host */
    const simplex_phys *h = sp(op);
    MF_CALL(op->ctx->bk->physics.simplex_assemble(op, A));
    return h->nbf && mf_simplex_phys_faces_has_operator(h) ? mf_csr_values_host_add(A, op, mf_simplex_phys_faces_assemble)
                                                           : 0;
  }
  const mf_csr_op *csr = mf_csr(A);
  for (int e = 0; e < op->space->ncells; e++)
    mf_simplex_phys_element_add(op, e, cell_local, csr->rowptr, csr->colidx, csr->vals);
  return 0;
}

static void destroy(mf_operator op)
{
  simplex_phys *h = sp(op);
  if (!h) return;
  mf_simplex_basis_free(&h->basis);
  mf_simplex_phys_faces_free(h);
  free(h->qd);
  free(h->qdf);
  mf_phys_release(&h->ph);
  free(h);
  op->data = NULL;
}

/* ------------------------------------------------------------------ boundary terms on a device backend */

/* The facets' terms of the cells with some, on the host (the CPU twin's code) from host copies of in's and
 * out's local values, added into out: the residual's (f0; what 1), the operator's (g0; what 0) or the
 * diagonal's (what 2). Two copies of each vector per call: correct, not fast (no facet kernels on the device
 * yet). */
static int faces_host_add(mf_operator op, mf_vector inv, mf_vector outv, int what)
{
  const simplex_phys *h = sp(op);
  const mf_space s = op->space;
  const int N = h->basis.nnodes, nc = s->ncomp;
  const size_t n = (size_t)s->nlocal;
  double *in = NULL, *out = NULL, ue[MF_MAX_COMPONENTS * MF_SIMPLEX_MAX_NODES], ve[MF_MAX_COMPONENTS * MF_SIMPLEX_MAX_NODES];
  int ierr = MF_CALLOC(op->ctx, n + 1, &in);
  if (!ierr) ierr = MF_CALLOC(op->ctx, n + 1, &out);
  if (!ierr && inv) ierr = inv->ops.to_host(inv, in, s->nlocal);
  if (!ierr) ierr = outv->ops.to_host(outv, out, s->nlocal);
  for (int e = 0; !ierr && e < s->ncells; e++) {
    if (h->cell_bf_off[e + 1] == h->cell_bf_off[e]) continue;
    const int *cd = s->cell_nodes + (size_t)e * N;
    for (int i = 0; i < N; i++)
      for (int c = 0; c < nc; c++) ue[i * nc + c] = in[(size_t)cd[i] * nc + c], ve[i * nc + c] = 0.0;
    int q = 0;
    double x[3] = {0, 0, 0};
    if (what == 2) mf_simplex_phys_faces_diagonal(op, e, ve);
    else if (mf_simplex_phys_faces_cell(op, e, ue, ve, what, &q, x)) {
      char xs[96];
      mf_point_text(s->dim, x, xs, sizeof xs);
      ierr = mf_error_set(op->ctx, MF_ERR_ARGUMENT, __FILE__, __LINE__, __func__,
                          "physics '%s': a boundary f0 gave a value that is not finite at facet point %d of cell %d, x = "
                          "%s: the boundary functions must give finite values",
                          h->ph.name, q, e, xs);
    }
    for (int i = 0; !ierr && i < N; i++)
      for (int c = 0; c < nc; c++) out[(size_t)cd[i] * nc + c] += ve[i * nc + c];
  }
  if (!ierr) ierr = outv->ops.from_host(outv, out, s->nlocal);
  free(in);
  free(out);
  return ierr;
}
static int residual_device_faces(mf_operator op, mf_vector u, mf_vector r)
{
  MF_CALL(sp(op)->residual_device(op, u, r));
  return faces_host_add(op, u, r, 1);
}
static int apply_device_faces(mf_operator op, mf_vector x, mf_vector y)
{
  MF_CALL(sp(op)->apply_device(op, x, y));
  return faces_host_add(op, x, y, 0);
}
static int diagonal_device_faces(mf_operator op, mf_vector d)
{
  MF_CALL(sp(op)->diagonal_device(op, d));
  return faces_host_add(op, NULL, d, 2);
}

/* the same physics on another space (multigrid's levels) */
static int create_like(mf_operator like, mf_space space, mf_operator *op)
{
  MF_CALL(mf_simplex_physics_create(space, &sp(like)->ph, sp(like)->pw.quad, op));
  (*op)->dirichlet = like->dirichlet;
  return 0;
}

static int describe(mf_space space, const mf_phys *ph, mf_quadrature quad, mf_operator *out);

/* The copy in float (multigrid's float V-cycle). Where the physics runs on the built-in kernels (the built-in
 * fit of the cuda backend: one component, g3 = c(x) I alone) their float twin; else its own kernels on its
 * stored data rounded to float (the cells' work in double), applied to float vectors: no residual and no
 * diagonal (the double operator's serve). On a device the float kernels carry no facet terms: a physics
 * with a facet g0 has no float copy there. */
static int create_single(mf_operator like, mf_operator *op)
{
  mf_context ctx = like->ctx;
  const simplex_phys *lh = sp(like);
  const mf_simplex_op *sop = NULL;
  struct mf_simplex_cuda_op_s *dev = NULL;
  if (ctx->bk->physics.simplex_builtin) ctx->bk->physics.simplex_builtin(like, &sop, &dev);
  /* the ranks agree: each decided the fit on its own cells */
  int fit = sop && dev;
  const int rc = MPI_Allreduce(MPI_IN_PLACE, &fit, 1, MPI_INT, MPI_MIN, ctx->comm);
  MF_CHECK(rc == MPI_SUCCESS, ctx, MF_ERR_MPI, "MPI_Allreduce failed (%d)", rc);
  if (fit) {
    mf_pw_op pw = lh->pw;
    pw.kind = MF_OP_LAPLACE; /* what it runs as */
    MF_CALL(mf_simplex_operator_single(like->space, &pw, &lh->basis, sop, 0, 0.0, 0.0, dev, op));
    (*op)->dirichlet = like->dirichlet;
    return 0;
  }
  const int device = ctx->backend != MF_BACKEND_CPU;
  MF_CHECK(!device || ctx->bk->physics.simplex_single, ctx, MF_ERR_UNSUPPORTED,
           "physics '%s': no single-precision copy on the %s backend (use MF_PRECISION_DOUBLE)", lh->ph.name,
           mf_context_backend(ctx));
  /* the physics' property, the same on every rank (not its facets here: describe below is collective) */
  MF_CHECK(!device || !mf_simplex_phys_faces_has_operator(lh), ctx, MF_ERR_UNSUPPORTED,
           "physics '%s' has boundary terms in its operator (g0 on facets): no float copy on the %s backend (use "
           "MF_PRECISION_DOUBLE)",
           lh->ph.name, mf_context_backend(ctx));
  mf_operator o = NULL;
  int ierr = describe(like->space, &lh->ph, lh->pw.quad, &o);
  if (!o) return ierr;
  simplex_phys *h = sp(o);
  o->prec = MF_PRECISION_FLOAT;
  o->dirichlet = like->dirichlet;
  o->ops.diagonal = NULL;
  o->ops.residual = NULL;
  h->lay = lh->lay;
  if (!ierr && device) ierr = ctx->bk->physics.simplex_single(o, like);
  else if (!ierr) {
    const size_t n = (size_t)o->space->ncells * h->basis.nq * h->lay.n;
    o->ops.apply = apply_cpu_single;
    ierr = MF_CALLOC(ctx, n + 1, &h->qdf);
    for (size_t i = 0; !ierr && i < n; i++) h->qdf[i] = (float)lh->qd[i];
  }
  return mf_operator_finish(o, ierr, op);
}

static const char *const names[] = {"a simplex mass", "a simplex Laplace", "a simplex Helmholtz",
                                    "a simplex elasticity", "a simplex physics"};
static const mf_optype physics_simplex_type = {
    .name = "simplex physics",
    .names = names,
    .pointwise = 1,
    .dirichlet_form = 1,
    .apply = mf_operator_flow_apply,
    .diagonal = mf_operator_flow_diagonal,
    .destroy = destroy,
    .create_like = create_like,
    .create_single = create_single,
    .assemble_check = assemble_check,
    .assemble = assemble,
};

/* The operator's description on space: the physics, its rule and basis, its facets with terms; no data yet.
 * *out: the operator, to be finished by the caller (NULL where its allocation failed). */
static int describe(mf_space space, const mf_phys *ph, mf_quadrature quad, mf_operator *out)
{
  mf_context ctx = space->ctx;
  simplex_phys *h = NULL;
  mf_operator o = NULL;
  *out = NULL;
  MF_CALL(MF_CALLOC_AGREED(ctx, 1, &h));
  h->pw.kind = MF_OP_PHYSICS;
  h->pw.quad = quad;
  h->ph = *ph;
  mf_phys_layout_init(&h->ph, space->dim, &h->lay);
  h->pw.has_mass = h->lay.has[0] || h->lay.has[1];
  h->pw.has_grad = h->lay.has[2] || h->lay.has[3];
  mf_phys_retain(&h->ph);
  int ierr = mf_operator_alloc(space, &physics_simplex_type, h, &o);
  if (ierr) {
    mf_phys_release(&h->ph);
    free(h);
    return mf_agree(ctx, ierr);
  }
  *out = o;
  o->ops.apply = apply_cpu;
  o->ops.diagonal = diagonal_cpu;
  o->ops.residual = residual_cpu;
  o->ops.set_state = ctx->backend == MF_BACKEND_CPU ? state_cpu : NULL; /* a device backend sets its own */
  const int qdegree = 2 * space->degree + (quad == MF_QUAD_GAUSS_P2 ? 2 : quad == MF_QUAD_GAUSS_M2 ? -2 : 0);
  ierr = mf_simplex_basis_setup(ctx, space->dim, space->degree, qdegree, &h->basis);
  if (!ierr) ierr = mf_simplex_phys_faces_setup(o);
  return ierr;
}

int mf_simplex_physics_create(mf_space space, const mf_phys *ph, mf_quadrature quad, mf_operator *op)
{
  mf_context ctx = space->ctx;
  const int device = ctx->bk->physics.simplex_setup != NULL;
  MF_CHECK(ctx->backend == MF_BACKEND_CPU || device, ctx, MF_ERR_UNSUPPORTED,
           "pointwise physics on simplices: not on the %s backend", mf_context_backend(ctx));
  MF_CHECK(!device || ph->from_source, ctx, MF_ERR_UNSUPPORTED,
           "on the %s backend a physics runs from its source (mf_physics_set_source): functions compiled for the "
           "host cannot run on the device", mf_context_backend(ctx));
  mf_operator o = NULL;
  int ierr = describe(space, ph, quad, &o);
  if (!o) return ierr;
  simplex_phys *h = sp(o);
  /* on a device backend its kernels (compiled from the source) make the data there and set op's steps */
  if (!ierr) ierr = device ? ctx->bk->physics.simplex_setup(o) : setup_cpu(o);
  if (!ierr && device && h->nbf && !h->faces_device) { /* the facets' terms added on the host */
    h->residual_device = o->ops.residual;
    o->ops.residual = residual_device_faces;
    if (mf_simplex_phys_faces_has_operator(h)) {
      h->apply_device = o->ops.apply;
      h->diagonal_device = o->ops.diagonal;
      o->ops.apply = apply_device_faces;
      o->ops.diagonal = diagonal_device_faces;
    }
  }
  return mf_operator_finish(o, ierr, op);
}
