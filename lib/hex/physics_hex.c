/* physics_hex.c -- the hex family's operators of users' pointwise physics (mf_operator_create_physics):
 * Q_p spaces of 1..4 components, sum-factorised, on the stored reference-form data of the g-functions
 * (lib/physics/mf_physics.h). One cell, for every component b of the field:
 *     u_b    = (B x B x B) u_e,b          values at the quadrature points
 *     ref_bm = D_m u_b                   reference derivatives (collocation derivative D)
 *     r0, r1 = the point's action on (u, ref)   (mf_phys_apply_point)
 *     v_e,c  = (B^T x B^T x B^T) (r0_c + sum_l D_l^T r1_cl)
 * with the hanging-node constraints applied per component around it, as the built-ins do. The CPU
 * kernels are here; the type is the pointwise type of the family for physics (kind MF_OP_PHYSICS). */
#include "hex/mf_hex_physics.h"
#include "assembled/assembly_impl.h"
#include "base/mf_backend.h"

#include <math.h>

typedef mf_hex_phys hex_phys;
static hex_phys *hp(const struct mf_operator_s *op) { return mf_hexphys(op); }

/* ------------------------------------------------------------------ set-up */

/* The stored data: the geometry and the g-functions at every quadrature point (OpenMP over the cells;
 * a cell's data depend on that cell alone), then one block where it serves. */
static int setup_cpu(mf_operator op)
{
  mf_space s = op->space;
  mf_context ctx = s->ctx;
  hex_phys *h = hp(op);
  const int dim = s->dim, nqp = h->nqp;
  const mf_basis1d *b = &h->basis;
  mf_phys_layout full;
  mf_phys_layout_init(&h->ph, dim, &full);
  const size_t npts = (size_t)s->ncells * nqp;
  double *data = NULL;
  MF_CALL(MF_CALLOC_TOUCH(ctx, npts * full.n + 1, &data));
  int ierr = 0, bad_cell = -1, bad_q = -1;
  double bad_det = 0.0;
  mf_bad_point nan = MF_BAD_POINT_NONE;
  double t0 = mf_phase_begin(ctx);
#pragma omp parallel
  {
    mf_geom_work gw;
    double *xq = NULL, *jac = NULL;
    int lerr = mf_geom_work_init(s, b, &gw);
    if (!lerr) lerr = MF_CALLOC(NULL, (size_t)nqp * dim, &xq);
    if (!lerr) lerr = MF_CALLOC(NULL, (size_t)nqp * 9, &jac);
    mf_thread_note(&ierr, lerr);
#pragma omp for schedule(static)
    for (int e = 0; e < s->ncells; e++) {
      if (lerr) continue;
      mf_cell_geometry(s, b, e, &gw, xq, jac);
      for (int q = 0; q < nqp; q++) {
        double Ji[9];
        const double det = mf_phys_inverse(dim, &jac[9 * q], Ji);
        if (!(fabs(det) > 0.0)) {
#pragma omp critical(mf_phys_bad)
          if (bad_cell < 0 || e < bad_cell) bad_cell = e, bad_q = q, bad_det = det;
          break;
        }
        const double W = mf_qweight(dim, b, q) * fabs(det);
        if (mf_phys_point(&h->ph, &full, &xq[q * dim], Ji, W, data + ((size_t)e * nqp + q) * full.n)) {
          const double v = NAN;
          mf_bad_point_note(&nan, e, q, dim, &xq[q * dim], 1, &v);
          break;
        }
      }
    }
    mf_geom_work_free(&gw);
    free(xq);
    free(jac);
  }
  mf_phase_end(ctx, MF_PHASE_GEOMETRY, t0);
  ierr = mf_thread_work_check(ctx, ierr, "quadrature data");
  if (!ierr && bad_cell >= 0)
    ierr = mf_error_set(ctx, MF_ERR_ARGUMENT, __FILE__, __LINE__, __func__,
                        "degenerate cell %d: Jacobian determinant %g at quadrature point %d", bad_cell, bad_det, bad_q);
  if (!ierr && nan.cell >= 0) ierr = mf_phys_refuse(ctx, &h->ph, &full, nan.cell, nan.q, nan.x);
  if (ierr) {
    free(data);
    return ierr;
  }
  h->lay = full;
  h->qd = data;
  /* the narrowest layout that holds them (one block; D3's upper triangle): a decision of this rank's
   * cells, whose data differ between ranks, not the result */
  return mf_phys_narrow(ctx, &h->lay, &h->qd, npts);
}

/* ------------------------------------------------------------------ the cell kernel */

static size_t big_size(const mf_operator op)
{
  const size_t nqp = (size_t)hp(op)->nqp, npc = (size_t)op->space->npc;
  return nqp > npc ? nqp : npc;
}
/* doubles of work for one cell */
static size_t work_size(const mf_operator op)
{
  const size_t big = big_size(op), nc = (size_t)op->space->ncomp, dim = (size_t)op->space->dim;
  return big * (2 + nc * 2 * (1 + dim)) + (size_t)op->space->npc * dim; /* and the geometry nodes of a boundary cell */
}

/* The cell's work arrays (cell_arrays): t1, t2 scratch, uq values and g reference derivatives at the
 * points, rq and v what the points give back against the test values and derivatives. */
typedef struct {
  size_t big;
  double *t1, *t2, *uq, *g, *rq, *v;
} cell_arrays;
static cell_arrays arrays(const mf_operator op, double *work)
{
  const size_t big = big_size(op), nc = (size_t)op->space->ncomp, dim = (size_t)op->space->dim;
  cell_arrays a;
  a.big = big;
  a.t1 = work;
  a.t2 = work + big;
  a.uq = a.t2 + big;          /* nc x big */
  a.g = a.uq + nc * big;      /* nc x dim x big */
  a.rq = a.g + nc * dim * big; /* nc x big */
  a.v = a.rq + nc * big;      /* nc x dim x big */
  return a;
}

/* ue (nc x npc, component by component) -> values and reference derivatives at the points */
static void cell_values(const mf_operator op, const double *ue, cell_arrays *a)
{
  const mf_space s = op->space;
  const mf_basis1d *b = &hp(op)->basis;
  const int dim = s->dim, nc = s->ncomp, nq = b->nq, nqp = hp(op)->nqp, npc = s->npc;
  int nn[3] = {nq, nq, nq};
  for (int c = 0; c < nc; c++) {
    double *u = a->uq + (size_t)c * a->big;
    if (b->collocated) memcpy(u, ue + (size_t)c * npc, sizeof(double) * nqp);
    else mf_tensor_interpolate(dim, b, ue + (size_t)c * npc, u, a->t1, a->t2);
    for (int l = 0; l < dim; l++) mf_tensor_apply(dim, nn, l, b->D, nq, 0, u, a->g + ((size_t)c * dim + l) * a->big, 0);
  }
}

/* a->rq and a->v (what the points give back) -> ve (nc x npc) */
static void cell_integrate(const mf_operator op, cell_arrays *a, double *ve)
{
  const mf_space s = op->space;
  const mf_basis1d *b = &hp(op)->basis;
  const int dim = s->dim, nc = s->ncomp, nq = b->nq, nqp = hp(op)->nqp, npc = s->npc;
  int nn[3] = {nq, nq, nq};
  for (int c = 0; c < nc; c++) {
    double *r = a->rq + (size_t)c * a->big;
    for (int l = 0; l < dim; l++) mf_tensor_apply(dim, nn, l, b->D, nq, 1, a->v + ((size_t)c * dim + l) * a->big, r, 1);
    if (b->collocated) memcpy(ve + (size_t)c * npc, r, sizeof(double) * nqp);
    else mf_tensor_integrate(dim, b, r, ve + (size_t)c * npc, a->t1, a->t2);
  }
}

/* the field at point q from the arrays: u[c], ref[c * dim + m] */
static void point_field(const cell_arrays *a, int nc, int dim, int q, double *u, double *ref)
{
  for (int c = 0; c < nc; c++) {
    u[c] = a->uq[(size_t)c * a->big + q];
    for (int m = 0; m < dim; m++) ref[c * dim + m] = a->g[((size_t)c * dim + m) * a->big + q];
  }
}
static void point_back(cell_arrays *a, int nc, int dim, int q, const double *r0, const double *r1)
{
  for (int c = 0; c < nc; c++) {
    a->rq[(size_t)c * a->big + q] = r0[c];
    for (int l = 0; l < dim; l++) a->v[((size_t)c * dim + l) * a->big + q] = r1[c * dim + l];
  }
}

/* ue (nc x npc, component by component) -> ve (the same): the linear operator on the stored data */
static void cell_apply(const mf_operator op, int e, const double *ue, double *ve, double *work)
{
  const mf_space s = op->space;
  const hex_phys *h = hp(op);
  const mf_phys_layout *L = &h->lay;
  const int dim = s->dim, nc = s->ncomp, nqp = h->nqp;
  cell_arrays a = arrays(op, work);
  cell_values(op, ue, &a);
  const size_t first = (size_t)e * nqp * L->n;
  for (int q = 0; q < nqp; q++) {
    double u[MF_MAX_COMPONENTS], ref[MF_MAX_COMPONENTS * 3], r0[MF_MAX_COMPONENTS], r1[MF_MAX_COMPONENTS * 3];
    double Dq[MF_PHYS_MAX_ENTRIES];
    const double *D = Dq;
    if (h->qdf) /* a single-precision copy: the point's entries in double, the cell's work too */
      for (int i = 0; i < L->n; i++) Dq[i] = (double)h->qdf[first + (size_t)q * L->n + (size_t)i];
    else D = h->qd + first + (size_t)q * L->n;
    point_field(&a, nc, dim, q, u, ref);
    mf_phys_apply_point(L, D, u, ref, r0, r1);
    point_back(&a, nc, dim, q, r0, r1);
  }
  cell_integrate(op, &a, ve);
  if (h->nbf && h->cell_bf_off[e + 1] > h->cell_bf_off[e]) /* boundary terms (g0) */
    mf_hex_phys_faces_apply(op, e, ue, ve, a.v + (size_t)nc * dim * a.big);
}

/* The cell's values of x with its constraints (ue), or its contributions added into y (ve); x and y
 * of doubles, or of floats (single). */
static void gather(const mf_space s, int e, const void *x, int single, double *ue)
{
  const int npc = s->npc, nc = s->ncomp, mask = s->face_code[e];
  const int *nodes = &s->cell_nodes[(size_t)e * npc];
  for (int c = 0; c < nc; c++) {
    double *u = ue + (size_t)c * npc;
    for (int i = 0; i < npc; i++) {
      const size_t k = (size_t)nodes[i] * nc + c;
      u[i] = single ? (double)((const float *)x)[k] : ((const double *)x)[k];
    }
    mf_hanging_apply(s->dim, s->n1, mask, s->hanging_P, u, 0);
  }
}
static void scatter(const mf_space s, int e, double *ve, void *y, int single)
{
  const int npc = s->npc, nc = s->ncomp, mask = s->face_code[e];
  const int *nodes = &s->cell_nodes[(size_t)e * npc];
  for (int c = 0; c < nc; c++) {
    double *v = ve + (size_t)c * npc;
    mf_hanging_apply(s->dim, s->n1, mask, s->hanging_P, v, 1);
    for (int i = 0; i < npc; i++) {
      const size_t k = (size_t)nodes[i] * nc + c;
      if (single) ((float *)y)[k] += (float)v[i];
      else ((double *)y)[k] += v[i];
    }
  }
}

static int apply_cells(mf_operator op, const mf_vector xv, mf_vector yv, const int *cells, int ncells)
{
  const int single = op->prec == MF_PRECISION_FLOAT;
  const void *x = single ? (const void *)xv->sdata : (const void *)xv->data;
  void *y = single ? (void *)yv->sdata : (void *)yv->data;
  const mf_space s = op->space;
  const size_t ncell = (size_t)s->npc * s->ncomp;
  double *work = NULL;
  MF_CALL(MF_CALLOC(op->ctx, work_size(op) + 2 * ncell, &work));
  double *ue = work + work_size(op), *ve = ue + ncell;
  for (int k = 0; k < ncells; k++) {
    const int e = cells ? cells[k] : k;
    gather(s, e, x, single, ue);
    cell_apply(op, e, ue, ve, work);
    scatter(s, e, ve, y, single);
  }
  free(work);
  return 0;
}

static int apply_cpu(mf_operator op, mf_vector x, mf_vector y)
{
  return apply_cells(op, x, y, NULL, op->space->ncells);
}

static int apply_part_cpu(mf_operator op, mf_vector x, mf_vector y, mf_cell_part part)
{
  const mf_space s = op->space;
  MF_CALL(mf_space_parts(s));
  return apply_cells(op, x, y, s->part_cells + s->part_off[part], s->part_off[part + 1] - s->part_off[part]);
}

/* Cell by cell in order, from the local values u: the residual F(u) of the physics' f0 and f1 into r (data NULL;
 * the first point with a value that is not finite is refused, naming it), or the g-functions at the state into
 * data (layout full, r NULL); the geometry of each cell made again here. */
static int cells_at(mf_operator op, const double *uvals, double *r, const mf_phys_layout *full, double *data)
{
  const mf_space s = op->space;
  const hex_phys *h = hp(op);
  const int dim = s->dim, nc = s->ncomp, nqp = h->nqp;
  const size_t ncell = (size_t)s->npc * nc;
  double *work = NULL, *xq = NULL, *jac = NULL;
  mf_geom_work gw;
  MF_CALL(mf_geom_work_init(s, &h->basis, &gw));
  int ierr = MF_CALLOC(op->ctx, work_size(op) + 2 * ncell, &work);
  if (!ierr) ierr = MF_CALLOC(op->ctx, (size_t)nqp * dim, &xq);
  if (!ierr) ierr = MF_CALLOC(op->ctx, (size_t)nqp * 9, &jac);
  double *ue = work + work_size(op), *ve = ue + ncell;
  for (int e = 0; !ierr && e < s->ncells; e++) {
    cell_arrays a = arrays(op, work);
    gather(s, e, uvals, 0, ue);
    cell_values(op, ue, &a);
    mf_cell_geometry(s, &h->basis, e, &gw, xq, jac);
    for (int q = 0; q < nqp && !ierr; q++) {
      double u[MF_MAX_COMPONENTS], ref[MF_MAX_COMPONENTS * 3], r0[MF_MAX_COMPONENTS], r1[MF_MAX_COMPONENTS * 3], Ji[9];
      const double det = mf_phys_inverse(dim, &jac[9 * q], Ji), W = mf_qweight(dim, &h->basis, q) * fabs(det);
      const double *x = &xq[q * dim];
      point_field(&a, nc, dim, q, u, ref);
      if (data) { /* the state's g-values */
        if (mf_phys_point_state(&h->ph, full, x, Ji, W, u, ref, data + ((size_t)e * nqp + q) * full->n)) {
          char xs[96];
          mf_point_text(dim, x, xs, sizeof xs);
          ierr = mf_error_set(op->ctx, MF_ERR_ARGUMENT, __FILE__, __LINE__, __func__,
                              "physics '%s': a g-function gave a value that is not finite at the state, at quadrature "
                              "point %d of cell %d (rank %d), x = %s: the state is outside where the functions are defined",
                              h->ph.name, q, e, op->ctx->rank, xs);
        }
        continue;
      }
      if (mf_phys_residual_point(&h->ph, dim, x, Ji, W, u, ref, r0, r1)) {
        double du[MF_MAX_COMPONENTS * 3];
        for (int b = 0; b < nc; b++)
          for (int k = 0; k < dim; k++) {
            du[b * dim + k] = 0.0;
            for (int m = 0; m < dim; m++) du[b * dim + k] += ref[b * dim + m] * Ji[3 * m + k];
          }
        ierr = mf_phys_residual_refuse(op->ctx, &h->ph, dim, e, q, x, u, du);
      }
      point_back(&a, nc, dim, q, r0, r1);
    }
    if (ierr || data) continue;
    cell_integrate(op, &a, ve);
    if (h->nbf && h->cell_bf_off[e + 1] > h->cell_bf_off[e]) /* boundary terms (f0) */
      ierr = mf_hex_phys_faces_residual(op, e, ue, ve, a.v + (size_t)nc * dim * a.big);
    if (!ierr) scatter(s, e, ve, r, 0);
  }
  mf_geom_work_free(&gw);
  free(work);
  free(xq);
  free(jac);
  return ierr;
}
static int residual_cpu(mf_operator op, mf_vector uv, mf_vector rv) { return cells_at(op, uv->data, rv->data, NULL, NULL); }

/* On a device backend with boundary terms (Neumann, Robin): the device's residual, product or diagonal,
 * then the faces' terms: on the device where every term is given as source (the backend's hex_faces),
 * else on the host (the CPU twin's code, the functions compiled for the host) from host copies, added
 * through a host copy of the result: two copies of each vector per call, correct, not fast.
 * faces_host_begin: host copies of a's (unless NULL) and b's local values and a cell's work;
 * faces_host_end: b from its copy (unless ierr), the copies freed. */
static int faces_host_begin(mf_operator op, mf_vector a, mf_vector b, double **ha, double **hb, double **ue)
{
  const mf_space s = op->space;
  const size_t n = (size_t)s->nlocal, ncell = (size_t)s->npc * s->ncomp;
  *ha = *hb = *ue = NULL;
  MF_CALL(mf_space_host_coords(s));
  int ierr = MF_CALLOC(op->ctx, n + 1, ha);
  if (!ierr) ierr = MF_CALLOC(op->ctx, n + 1, hb);
  if (!ierr) ierr = MF_CALLOC(op->ctx, 2 * ncell + (size_t)s->npc * 3, ue);
  if (!ierr && a) ierr = a->ops.to_host(a, *ha, s->nlocal);
  if (!ierr) ierr = b->ops.to_host(b, *hb, s->nlocal);
  return ierr;
}
static int faces_host_end(mf_operator op, mf_vector b, double *ha, double *hb, double *ue, int ierr)
{
  if (!ierr) ierr = b->ops.from_host(b, hb, op->space->nlocal);
  free(ha);
  free(hb);
  free(ue);
  return ierr;
}
/* The faces' terms of the cells with some, on the host (the CPU twin's code) from host copies: the
 * residual's (f0; residual 1) or the operator's (g0) of in's local values, added into out. */
static int faces_host_add(mf_operator op, mf_vector inv, mf_vector outv, int residual)
{
  const hex_phys *h = hp(op);
  const mf_space s = op->space;
  const size_t ncell = (size_t)s->npc * s->ncomp;
  double *in = NULL, *out = NULL, *ue = NULL;
  int ierr = faces_host_begin(op, inv, outv, &in, &out, &ue);
  double *ve = ue ? ue + ncell : NULL, *X = ve ? ve + ncell : NULL;
  for (int e = 0; !ierr && e < s->ncells; e++) {
    if (h->cell_bf_off[e + 1] == h->cell_bf_off[e]) continue;
    gather(s, e, in, 0, ue);
    memset(ve, 0, sizeof(double) * ncell);
    if (residual) ierr = mf_hex_phys_faces_residual(op, e, ue, ve, X);
    else mf_hex_phys_faces_apply(op, e, ue, ve, X);
    if (!ierr) scatter(s, e, ve, out, 0);
  }
  return faces_host_end(op, outv, in, out, ue, ierr);
}
/* Neumann (and Robin's f0): the device's residual, then the faces'. Two copies of each vector per residual:
 * fine for the loads of a linear solve, where the residual is made once. */
static int residual_device_faces(mf_operator op, mf_vector uv, mf_vector rv)
{
  MF_CALL(hp(op)->residual_device(op, uv, rv));
  if (hp(op)->faces_device) return op->ctx->bk->physics.hex_faces(op, 1, uv, rv);
  return faces_host_add(op, uv, rv, 1);
}
/* Robin's g0: the device's product, then the faces' */
static int apply_device_faces(mf_operator op, mf_vector xv, mf_vector yv)
{
  MF_CALL(hp(op)->apply_device(op, xv, yv));
  if (hp(op)->faces_device) return op->ctx->bk->physics.hex_faces(op, 0, xv, yv);
  return faces_host_add(op, xv, yv, 0);
}
/* the faces' part of the diagonal as diagonal_host takes it: position by position, the constrained
 * columns (mf_hanging_diag_column) from the constrained face operator */
static int diagonal_device_faces(mf_operator op, mf_vector dv)
{
  const hex_phys *h = hp(op);
  const mf_space s = op->space;
  const int npc = s->npc, nc = s->ncomp;
  const size_t ncell = (size_t)npc * nc;
  MF_CALL(h->diagonal_device(op, dv));
  if (h->faces_device) return op->ctx->bk->physics.hex_faces(op, 2, NULL, dv);
  double *unused = NULL, *d = NULL, *u = NULL;
  int ierr = faces_host_begin(op, NULL, dv, &unused, &d, &u);
  double *col = u ? u + ncell : NULL, *X = col ? col + ncell : NULL;
  for (int e = 0; !ierr && e < s->ncells; e++) {
    if (h->cell_bf_off[e + 1] == h->cell_bf_off[e]) continue;
    const int mask = s->face_code[e], *nodes = &s->cell_nodes[(size_t)e * npc];
    for (int c = 0; c < nc; c++)
      for (int j = 0; j < npc; j++) {
        const int constrained = mask && mf_hanging_diag_column(s->dim, s->n1, npc, mask, nodes, j);
        memset(u, 0, sizeof(double) * ncell);
        memset(col, 0, sizeof(double) * ncell);
        u[(size_t)c * npc + j] = 1.0;
        if (constrained) mf_hanging_apply(s->dim, s->n1, mask, s->hanging_P, u + (size_t)c * npc, 0);
        mf_hex_phys_faces_apply(op, e, u, col, X);
        double *cc = col + (size_t)c * npc;
        if (!constrained) {
          d[(size_t)nodes[j] * nc + c] += cc[j];
          continue;
        }
        mf_hanging_apply(s->dim, s->n1, mask, s->hanging_P, cc, 1);
        for (int i = 0; i < npc; i++)
          if (nodes[i] == nodes[j]) d[(size_t)nodes[i] * nc + c] += cc[i];
      }
  }
  return faces_host_end(op, dv, unused, d, u, ierr);
}

/* ------------------------------------------------------------------ the diagonal */

/* The unconstrained diagonal of cell e, component c (de: npc): every term of the component's diagonal
 * block is a separable product, one contraction of its values at the points with 1D factors (B.B,
 * B.Bg, Bg.Bg elementwise). buf: 3 nqp doubles. */
static void cell_diagonal(const mf_operator op, int e, int c, double *buf, double *de)
{
  const mf_space s = op->space;
  const hex_phys *h = hp(op);
  const mf_basis1d *b = &h->basis;
  const mf_phys_layout *L = &h->lay;
  const int dim = s->dim, nq = b->nq, n1 = s->n1, npc = s->npc, nqp = h->nqp;
  double *coef = buf, *t1 = buf + nqp, *t2 = buf + 2 * nqp;
  const double *D = h->qd + (size_t)e * nqp * L->n;
  memset(de, 0, sizeof(double) * npc);
  const int nt = mf_phys_diag_nterms(L);
  for (int j = 0; j < nt; j++) {
    int k, l;
    const int off = mf_phys_diag_term(L, c, j, &k, &l);
    for (int q = 0; q < nqp; q++) coef[q] = D[(size_t)q * L->n + off];
    int n[3] = {nq, nq, nq};
    const double *in = coef;
    for (int dd = 0; dd < dim; dd++) {
      const double *F = (dd == k && dd == l) ? b->GG : (dd == k || dd == l) ? b->BG : b->BB;
      double *o = (dd % 2) ? t2 : t1;
      mf_tensor_apply(dim, n, dd, F, n1, 1, in, o, 0);
      n[dd] = n1;
      in = o;
    }
    for (int i = 0; i < npc; i++) de[i] += in[i];
  }
}

/* All cells, color by color among the threads (deterministic). On a cell with a mask the columns that
 * mf_hanging_diag_column selects come from the cell operator with its constraints on unit vectors, the
 * others from the plain diagonal, as for the built-ins (lib/hex/kernels_cpu.c). */
static int diagonal_host(mf_operator op, double *d)
{
  const mf_space s = op->space;
  const int npc = s->npc, nc = s->ncomp, nqp = hp(op)->nqp;
  const size_t ncell = (size_t)npc * nc, wsize = work_size(op);
  int ierr = 0;
#pragma omp parallel
  {
    double *buf = NULL;
    int lerr = MF_CALLOC(NULL, 3 * (size_t)nqp + (size_t)npc + wsize + 2 * ncell, &buf);
    mf_thread_note(&ierr, lerr);
    double *de = buf + 3 * nqp, *work = de + npc, *u = work + wsize, *col = u + ncell;
    for (int cl = 0; cl < s->ncolors; cl++) {
#pragma omp for schedule(dynamic, 16)
      for (int k = s->color_off[cl]; k < s->color_off[cl + 1]; k++) {
        if (lerr) continue;
        const int e = s->color_cells[k], mask = s->face_code[e];
        const int *nodes = &s->cell_nodes[(size_t)e * npc];
        /* a cell with boundary terms in the operator: its plain diagonal from the cell operator on unit
         * vectors (the face terms are not in the sum-factorised contraction) */
        const hex_phys *h = hp(op);
        const int faces = h->nbf && h->cell_bf_off[e + 1] > h->cell_bf_off[e] && mf_hex_phys_faces_has_operator(h);
        for (int c = 0; c < nc; c++) {
          if (faces)
            for (int j = 0; j < npc; j++) {
              memset(u, 0, sizeof(double) * ncell);
              u[(size_t)c * npc + j] = 1.0;
              cell_apply(op, e, u, col, work);
              de[j] = col[(size_t)c * npc + j];
            }
          else cell_diagonal(op, e, c, buf, de);
          for (int i = 0; i < npc; i++)
            if (!mask || !mf_hanging_diag_column(s->dim, s->n1, npc, mask, nodes, i)) d[(size_t)nodes[i] * nc + c] += de[i];
          if (!mask) continue;
          for (int j = 0; j < npc; j++) {
            if (!mf_hanging_diag_column(s->dim, s->n1, npc, mask, nodes, j)) continue;
            memset(u, 0, sizeof(double) * ncell);
            u[(size_t)c * npc + j] = 1.0;
            mf_hanging_apply(s->dim, s->n1, mask, s->hanging_P, u + (size_t)c * npc, 0);
            cell_apply(op, e, u, col, work);
            double *cc = col + (size_t)c * npc;
            mf_hanging_apply(s->dim, s->n1, mask, s->hanging_P, cc, 1);
            for (int i = 0; i < npc; i++)
              if (nodes[i] == nodes[j]) d[(size_t)nodes[i] * nc + c] += cc[i];
          }
        }
      }
    }
    free(buf);
  }
  return mf_thread_work_check(s->ctx, ierr, "diagonal");
}

static int diagonal_cpu(mf_operator op, mf_vector dv) { return diagonal_host(op, dv->data); }

/* On a backend that keeps the data on the device: its diagonal kernel (the twin of diagonal_host). */
static int diagonal_device(mf_operator op, mf_vector dv)
{
  MF_CALL(dv->ops.set_value(dv, 0.0));
  return op->ctx->bk->physics.hex_diagonal(op, dv);
}

/* ------------------------------------------------------------------ the built-ins' shape */

/* A physics of one component whose stored data have the built-ins' shape (no g1 or g2, D3 symmetric at
 * every point: layout sym) runs as a built-in mass, Laplace or Helmholtz operator holding these data: the tuned
 * kernels (both designs, cells per block) and their bytes (the upper triangle of D3). The built-in
 * applies with this operator's scatter; this operator's flow applies the Dirichlet form, except that a
 * built-in whose kernel masks the boundary entries of x (cuda) does that part itself (no copy of x per
 * product: 6% of a multigrid CG iteration, measured on an H100 at 1.7e7 DoFs). */
static int inner_product(mf_operator op, mf_vector x, mf_vector y, int part) /* part -1: all cells */
{
  mf_operator in = hp(op)->inner;
  in->scatter = op->scatter;
  in->dirichlet = op->dirichlet && in->ops.masks_bc; /* for this product only */
  const int ierr = part < 0 ? in->ops.apply(in, x, y) : in->ops.apply_part(in, x, y, (mf_cell_part)part);
  in->dirichlet = 0;
  return ierr;
}
static int apply_inner(mf_operator op, mf_vector x, mf_vector y) { return inner_product(op, x, y, -1); }
static int apply_part_inner(mf_operator op, mf_vector x, mf_vector y, mf_cell_part p) { return inner_product(op, x, y, (int)p); }
static int diagonal_inner(mf_operator op, mf_vector d) { return hp(op)->inner->ops.diagonal(hp(op)->inner, d); }
static int as_builtin(mf_operator o);

/* The stored data at the state uv: on the cpu backend the g-functions at (u, grad u) of every point in the full
 * layout (cells_at), then as at the set-up: the narrowest layout, and the built-in operator's data where the physics
 * fits its shape (made again: the previous one is dropped); on a device the backend's (stored or fused), a built-in
 * fit left. The data before are kept where a value is not finite. Collective (the built-in's choice). */
static int state_set(mf_operator op, mf_vector uv)
{
  mf_context ctx = op->ctx;
  hex_phys *h = hp(op);
  MF_CHECK(!mf_hex_phys_faces_has_operator(h), ctx, MF_ERR_UNSUPPORTED, "physics '%s' has boundary terms in its "
           "operator (g0 on faces): their linearisation at a state is not made yet", h->ph.name);
  if (ctx->backend != MF_BACKEND_CPU) {
    MF_CALL(ctx->bk->physics.hex_state(op, uv)); /* op->ops.apply the device's */
    if (h->inner) mf_operator_destroy(&h->inner);
    op->ops.apply_part = NULL;
    op->ops.diagonal = diagonal_device;
    op->ops.masks_bc = 0;
    return 0;
  }
  const size_t npts = (size_t)op->space->ncells * h->nqp;
  mf_phys_layout full;
  mf_phys_layout_init(&h->ph, op->space->dim, &full);
  double *data = NULL;
  int ierr = MF_CALLOC_TOUCH(ctx, npts * full.n + 1, &data);
  const double t0 = mf_phase_begin(ctx);
  if (!ierr) ierr = cells_at(op, uv->data, NULL, &full, data);
  mf_phase_end(ctx, MF_PHASE_GEOMETRY, t0);
  ierr = mf_agree(ctx, ierr);
  if (ierr) {
    free(data);
    return ierr;
  }
  if (h->inner) { /* the built-in's data were of the state before: the physics' own kernels until as_builtin */
    mf_operator_destroy(&h->inner);
    op->ops.apply = apply_cpu;
    op->ops.apply_part = apply_part_cpu;
    op->ops.diagonal = diagonal_cpu;
    op->ops.masks_bc = 0;
  }
  free(h->qd);
  h->lay = full;
  h->qd = data;
  ierr = mf_agree(ctx, mf_phys_narrow(ctx, &h->lay, &h->qd, npts));
  return ierr ? ierr : mf_agree(ctx, as_builtin(op));
}

static void delegate(mf_operator o)
{
  const mf_operator in = hp(o)->inner;
  o->ops.apply = apply_inner;
  o->ops.apply_part = in->ops.apply_part ? apply_part_inner : NULL;
  o->ops.masks_bc = in->ops.masks_bc;
  o->ops.diagonal = in->ops.diagonal ? diagonal_inner : NULL;
}

/* the built-ins' shape can hold this physics: one component, no g1 or g2 (and not switched off by
 * MFREE_PHYSICS_BUILTIN=0, which keeps the physics' own kernels, for measurements) */
static int builtin_candidate(const mf_operator o)
{
  const hex_phys *h = hp(o);
  const char *env = getenv("MFREE_PHYSICS_BUILTIN");
  return o->space->ncomp == 1 && !h->lay.has[1] && !h->lay.has[2] && !mf_hex_phys_faces_has_operator(h) &&
         !(env && !strcmp(env, "0"));
}
static mf_op_kind builtin_kind(const hex_phys *h)
{
  return h->lay.has[0] && h->lay.has[3] ? MF_OP_HELMHOLTZ : h->lay.has[0] ? MF_OP_MASS : MF_OP_LAPLACE;
}

/* cpu backend, after the set-up of the physics' own data */
static int as_builtin(mf_operator o)
{
  hex_phys *h = hp(o);
  const mf_space s = o->space;
  mf_context ctx = o->ctx;
  if (!builtin_candidate(o)) return 0;
  int fits = !h->lay.has[3] || h->lay.sym; /* set-up stored D3's upper triangle where it is symmetric */
  /* the same choice on every rank: the built-in's creation is collective */
  int rc = MPI_Allreduce(MPI_IN_PLACE, &fits, 1, MPI_INT, MPI_MIN, ctx->comm);
  MF_CHECK(rc == MPI_SUCCESS, ctx, MF_ERR_MPI, "MPI_Allreduce failed (%d)", rc);
  if (!fits) return 0;
  mf_operator in = NULL;
  MF_CALL(mf_hex_operator_create(s, builtin_kind(h), h->pw.quad, 1.0, 1.0, NULL, NULL, &in));
  int ierr = 0;
  { /* the mass part, then the upper triangle of D3, component by component (mf_qdata) */
    const mf_qdata *qd = &mf_hexop(in)->qd;
    const int dim = s->dim;
    for (int e = 0; e < s->ncells; e++)
      for (int q = 0; q < h->nqp; q++) {
        const double *D = h->qd + ((size_t)e * h->nqp + q) * h->lay.n;
        int comp = 0;
        if (h->lay.has[0]) qd->data[mf_qdata_index(qd, e, comp++, q)] = D[h->lay.off[0]];
        if (h->lay.has[3])
          for (int l = 0; l < dim; l++)
            for (int m = l; m < dim; m++) qd->data[mf_qdata_index(qd, e, comp++, q)] = D[mf_phys_d3(&h->lay, 0, l, m)];
      }
    free(h->qd);
    h->qd = NULL;
  }
  ierr = mf_agree(ctx, ierr);
  if (ierr) {
    mf_operator_destroy(&in);
    return ierr;
  }
  h->inner = in;
  delegate(o);
  return 0;
}

/* device backends: the data written straight into a built-in operator's where they fit (no second copy
 * on the device), else the physics' own data and kernels. Collective (the choice is the same on every
 * rank). */
static int device_setup(mf_operator o)
{
  hex_phys *h = hp(o);
  mf_context ctx = o->ctx;
  if (builtin_candidate(o)) {
    mf_operator in = NULL;
    int fits = 0;
    MF_CALL(mf_hex_operator_create(o->space, builtin_kind(h), h->pw.quad, 1.0, 1.0, NULL, NULL, &in));
    int ierr = mf_agree(ctx, ctx->bk->physics.hex_setup_builtin(o, in, &fits));
    if (!ierr) {
      const int rc = MPI_Allreduce(MPI_IN_PLACE, &fits, 1, MPI_INT, MPI_MIN, ctx->comm);
      if (rc != MPI_SUCCESS) ierr = mf_error_set(ctx, MF_ERR_MPI, __FILE__, __LINE__, __func__, "MPI_Allreduce failed (%d)", rc);
    }
    if (!ierr && fits) {
      h->inner = in;
      delegate(o);
      return 0;
    }
    mf_operator_destroy(&in);
    if (ierr) return ierr;
  }
  MF_CALL(ctx->bk->physics.hex_setup(o));
  o->ops.diagonal = diagonal_device;
  return 0;
}

/* ------------------------------------------------------------------ assembly */

static int assemble_check(mf_operator op, mf_assembly_variant v)
{
  const hex_phys *h = hp(op);
  if (h->inner) return h->inner->type->assemble_check(h->inner, v); /* the built-in's variants */
  MF_CHECK(op->ctx->backend == MF_BACKEND_CPU || op->ctx->bk->physics.hex_assemble, op->ctx, MF_ERR_UNSUPPORTED,
           "physics operators on hexahedra are assembled on the cpu and cuda backends, not on %s",
           mf_context_backend(op->ctx));
  MF_CHECK(v == MF_ASSEMBLY_AUTO, op->ctx, MF_ERR_UNSUPPORTED,
           "physics operators are assembled from their element matrices (MF_ASSEMBLY_AUTO), not by variant %d", (int)v);
  return 0;
}

/* The values of the assembled matrix A: every cell's element matrix with its constraints, C^T A_e C, from
 * the cell operator on unit vectors (column (b, j): component b of node j), added into the CSR rows of its
 * entries (row node_i nc + c, column node_j nc + b), the cells of one color at a time among the threads
 * (each row written by one thread, in color order: deterministic). */
static int assemble(mf_operator op, mf_assembly_variant v, mf_operator A)
{
  const hex_phys *h = hp(op);
  if (h->inner) return h->inner->type->assemble(h->inner, v, A);
  if (op->ctx->backend != MF_BACKEND_CPU) { /* on the device; the faces' g0 terms added from the host */
    MF_CALL(op->ctx->bk->physics.hex_assemble(op, A));
    return h->nbf && mf_hex_phys_faces_has_operator(h) ? mf_csr_values_host_add(A, op, mf_hex_phys_faces_assemble) : 0;
  }
  const mf_space s = op->space;
  const mf_csr_op *csr = mf_csr(A);
  const int npc = s->npc, nc = s->ncomp, nent = npc * nc;
  const size_t wsize = work_size(op);
  MF_CALL(mf_space_colors(s));
  int ierr = 0;
#pragma omp parallel
  {
    double *buf = NULL;
    int lerr = MF_CALLOC(NULL, wsize + 2 * (size_t)nent, &buf);
    mf_thread_note(&ierr, lerr);
    double *work = buf, *u = buf + wsize, *col = u + nent;
    for (int cl = 0; cl < s->ncolors; cl++) {
#pragma omp for schedule(dynamic, 16)
      for (int k = s->color_off[cl]; k < s->color_off[cl + 1]; k++) {
        if (lerr) continue;
        mf_hex_phys_element_add(op, s->color_cells[k], cell_apply, u, col, work, csr->rowptr, csr->colidx, csr->vals);
      }
    }
    free(buf);
  }
  return mf_thread_work_check(s->ctx, ierr, "assembly");
}

/* ------------------------------------------------------------------ the type */

static void destroy(mf_operator op)
{
  hex_phys *h = hp(op);
  if (!h) return;
  mf_operator_destroy(&h->inner);
  mf_hex_phys_faces_free(h);
  free(h->qd);
  free(h->qdf);
  mf_phys_release(&h->ph);
  free(h);
  op->data = NULL;
}

static int create_like(mf_operator like, mf_space space, mf_operator *op);
static int create_single(mf_operator like, mf_operator *op);

static const char *const names[] = {"a matrix-free mass", "a matrix-free Laplace", "a matrix-free Helmholtz",
                                    "a matrix-free elasticity", "a matrix-free physics (hexahedra)"};
static const mf_optype physics_hex_type = {
    .name = "matrix-free physics",
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

int mf_hex_physics_create(mf_space space, const mf_phys *ph, mf_quadrature quad, mf_operator *op)
{
  mf_context ctx = space->ctx;
  const int device = ctx->bk->physics.hex_setup != NULL;
  MF_CHECK(ctx->backend == MF_BACKEND_CPU || device, ctx, MF_ERR_UNSUPPORTED,
           "pointwise physics on hexahedra: not on the %s backend", mf_context_backend(ctx));
  MF_CHECK(!device || ph->from_source, ctx, MF_ERR_UNSUPPORTED,
           "on the %s backend a physics runs from its source (mf_physics_set_source): functions compiled for the "
           "host cannot run on the device", mf_context_backend(ctx));
  hex_phys *h = NULL;
  mf_operator o = NULL;
  int ierr = MF_CALLOC(ctx, 1, &h);
  if (!ierr) {
    h->pw.kind = MF_OP_PHYSICS;
    h->pw.quad = quad;
    h->ph = *ph;
    mf_phys_retain(&h->ph);
    mf_phys_layout_init(&h->ph, space->dim, &h->lay);
    h->pw.has_mass = h->lay.has[0] || h->lay.has[1];
    h->pw.has_grad = h->lay.has[2] || h->lay.has[3];
    ierr = mf_operator_alloc(space, &physics_hex_type, h, &o);
    if (ierr) {
      mf_phys_release(&h->ph);
      free(h);
    }
  }
  /* the ranks agree before the collective steps below (an operator made on some ranks only is let go) */
  ierr = mf_agree(ctx, ierr);
  if (ierr) {
    mf_operator_destroy(&o);
    return ierr;
  }
  ierr = mf_basis1d_setup(space->degree, quad, &h->basis);
  if (!ierr) {
    h->nqp = space->dim == 2 ? h->basis.nq * h->basis.nq : h->basis.nq * h->basis.nq * h->basis.nq;
    /* the face lists before the set-up (the built-ins take no face terms); agreed: the device set-up is
     * collective */
    ierr = mf_agree(ctx, mf_hex_phys_faces_setup(o));
    /* boundary terms on a device backend: the host's coordinates now, on every rank (collective), so that the
     * faces' set-up and check below, which need them and may fail on one rank, run no collective */
    if (!ierr && device && h->ph.nbound) ierr = mf_agree(ctx, mf_space_host_coords(space));
    if (ierr) {
    } else if (device) { /* the backend's kernels and data (the built-in's where they fit) */
      ierr = device_setup(o);
      if (ctx->bk->physics.hex_state) o->ops.set_state = state_set;
      if (!ierr && h->nbf) { /* boundary terms: added on the device or the host */
        h->residual_device = o->ops.residual;
        o->ops.residual = residual_device_faces;
      }
      if (!ierr && h->nbf && mf_hex_phys_faces_has_operator(h)) { /* Robin terms in the operator too */
        h->apply_device = o->ops.apply;
        h->diagonal_device = o->ops.diagonal;
        o->ops.apply = apply_device_faces;
        o->ops.apply_part = NULL;
        o->ops.diagonal = diagonal_device_faces;
      }
    } else {
      o->ops.apply = apply_cpu;
      o->ops.apply_part = apply_part_cpu;
      o->ops.diagonal = diagonal_cpu;
      o->ops.residual = residual_cpu;
      o->ops.set_state = state_set;
      ierr = setup_cpu(o);
    }
    if (!ierr) ierr = mf_hex_phys_faces_check(o);
    ierr = mf_agree(ctx, ierr);
    if (!ierr && !device) ierr = as_builtin(o);
  }
  if (!o) return mf_agree(ctx, ierr);
  return mf_operator_finish(o, ierr, op);
}

static int create_like(mf_operator like, mf_space space, mf_operator *op)
{
  MF_CALL(mf_hex_physics_create(space, &hp(like)->ph, hp(like)->pw.quad, op));
  (*op)->dirichlet = like->dirichlet;
  (*op)->scatter = like->scatter;
  return 0;
}

/* The same operator in single precision (multigrid's float levels): its data rounded to float, applied
 * to float vectors (the cell's work in double); no diagonal (the double operator's serves). */
static int create_single(mf_operator like, mf_operator *op)
{
  mf_context ctx = like->ctx;
  const hex_phys *lh = hp(like);
  hex_phys *h = NULL;
  mf_operator o = NULL;
  int ierr = MF_CALLOC(ctx, 1, &h);
  if (!ierr) {
    *h = *lh;
    mf_phys_retain(&h->ph);
    h->qd = NULL;
    h->qdf = NULL;
    h->inner = NULL;
    h->nbf = 0; /* its own face lists, made below */
    h->faces_device = 0;
    h->cell_bf_off = h->bf_cell = h->bf_face = h->bf_term = NULL;
    ierr = mf_operator_alloc(like->space, &physics_hex_type, h, &o);
    if (ierr) {
      mf_phys_release(&h->ph);
      free(h);
    }
  }
  ierr = mf_agree(ctx, ierr); /* before the collective float copy of the built-in below */
  if (ierr) {
    mf_operator_destroy(&o);
    return ierr;
  }
  {
    o->dirichlet = like->dirichlet;
    o->scatter = like->scatter;
    o->prec = MF_PRECISION_FLOAT;
    h->dev = NULL;
    ierr = mf_agree(ctx, mf_hex_phys_faces_setup(o)); /* before the collective copy of the built-in */
    if (ierr) {
    } else if (lh->inner) { /* the built-in's float copy */
      ierr = mf_operator_create_single(lh->inner, &h->inner);
      if (!ierr) delegate(o);
    } else if (ctx->bk->physics.hex_setup) { /* the device rounds its data (the float kernels carry no faces' g0) */
      if (!ctx->bk->physics.hex_single)
        ierr = mf_error_set(ctx, MF_ERR_UNSUPPORTED, __FILE__, __LINE__, __func__,
                            "physics operators in single precision (float multigrid V-cycles): not on the %s "
                            "backend (use MF_PRECISION_DOUBLE)", mf_context_backend(ctx));
      else if (mf_hex_phys_faces_has_operator(h)) /* the physics', the same on every rank */
        ierr = mf_error_set(ctx, MF_ERR_UNSUPPORTED, __FILE__, __LINE__, __func__,
                            "physics '%s' has boundary terms in its operator (g0 on faces), which the float kernels "
                            "do not carry: no float copy on the %s backend (use MF_PRECISION_DOUBLE)",
                            h->ph.name, mf_context_backend(ctx));
      else ierr = ctx->bk->physics.hex_single(o, like);
    }
    else {
      o->ops.apply = apply_cpu;
      o->ops.apply_part = apply_part_cpu;
      const size_t n = (size_t)like->space->ncells * lh->nqp * lh->lay.n;
      ierr = MF_CALLOC(ctx, n + 1, &h->qdf);
      for (size_t i = 0; !ierr && i < n; i++) h->qdf[i] = (float)lh->qd[i];
    }
  }
  return mf_operator_finish(o, ierr, op);
}
