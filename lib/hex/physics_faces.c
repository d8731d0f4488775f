/* physics_faces.c -- the boundary terms of users' physics on hexahedra (mf_physics_set_boundary): the
 * faces on the domain boundary whose tag has a term (box meshes: face f of a cell is domain face f, tag
 * f + 1; the ball: tag 1), at the Gauss points of the operator's rule in the face's directions. On a face
 * f (normal direction d = f / 2, side f % 2) the face's nodes are those of the cell with index n1 - 1 or 0
 * along d (Gauss-Lobatto nodes: the basis functions of the other nodes vanish there), so values, points
 * and tangents at the face's points come from those nodes through B and Bg in the in-face directions. The
 * outward normal is the unit normal of the tangents, pointing away from the cell's centre. The cell's
 * values come with its hanging-node constraints applied (the caller's), so constrained face nodes take
 * part as in the volume terms. */
#include "hex/mf_hex_physics.h"
#include "assembled/mf_csr.h"
#include "hanging/mf_hanging.h"

#include <math.h>
#include <stdio.h>

/* the in-face directions of face f and the cell node of face node (i0, i1) */
static void face_dirs(int dim, int f, int *a)
{
  const int d = f / 2;
  for (int k = 0, m = 0; k < dim; k++)
    if (k != d) a[m++] = k;
}
static int face_node(int dim, int n1, int f, const int *a, int i0, int i1)
{
  int ijk[3] = {0, 0, 0};
  ijk[f / 2] = (f % 2) ? n1 - 1 : 0;
  ijk[a[0]] = i0;
  if (dim == 3) ijk[a[1]] = i1;
  return ijk[0] + n1 * (ijk[1] + n1 * ijk[2]);
}

int mf_hex_phys_faces_setup(mf_operator op)
{
  mf_hex_phys *h = mf_hexphys(op);
  const mf_space s = op->space;
  mf_context ctx = op->ctx;
  if (!h->ph.nbound) return 0;
  const int ball = mf_hexmesh(s->mesh)->map == MF_MAP_BALL, nf = 2 * s->dim;
  int n = 0;
  MF_CALL(MF_CALLOC(ctx, (size_t)s->ncells + 1, &h->cell_bf_off));
  for (int pass = 0; pass < 2; pass++) {
    n = 0;
    for (int e = 0; e < s->ncells; e++) {
      if (pass) h->cell_bf_off[e] = n;
      for (int f = 0; f < nf; f++) {
        if (!(s->cell_bfaces[e] >> f & 1)) continue;
        const int tag = ball ? 1 : f + 1;
        for (int t = 0; t < h->ph.nbound; t++)
          if (h->ph.btag[t] == tag) {
            if (pass) {
              h->bf_cell[n] = e;
              h->bf_face[n] = f;
              h->bf_term[n] = t;
            }
            n++;
          }
      }
    }
    if (!pass) {
      MF_CALL(MF_CALLOC(ctx, (size_t)n + 1, &h->bf_cell));
      MF_CALL(MF_CALLOC(ctx, (size_t)n + 1, &h->bf_face));
      MF_CALL(MF_CALLOC(ctx, (size_t)n + 1, &h->bf_term));
    }
  }
  h->cell_bf_off[s->ncells] = n;
  h->nbf = n;
  return 0;
}

void mf_hex_phys_faces_free(mf_hex_phys *h)
{
  free(h->cell_bf_off);
  free(h->bf_cell);
  free(h->bf_face);
  free(h->bf_term);
  h->cell_bf_off = h->bf_cell = h->bf_face = h->bf_term = NULL;
  h->nbf = 0;
}

/* the face's points: x, the weight W (Gauss weights times the area element) and the outward normal, from
 * the cell's geometry nodes X (npc x dim) */
static void face_geometry(const mf_space s, const mf_basis1d *b, int f, const double *X, double *xq, double *W,
                          double *nq_out)
{
  const int dim = s->dim, n1 = s->n1, nq = b->nq, nqf = dim == 2 ? nq : nq * nq, n1f = dim == 2 ? 1 : n1;
  int a[2] = {0, 0};
  face_dirs(dim, f, a);
  double xc[3] = {0, 0, 0};
  for (int i = 0; i < s->npc; i++)
    for (int k = 0; k < dim; k++) xc[k] += X[i * dim + k] / s->npc;
  for (int q = 0; q < nqf; q++) {
    const int q0 = q % nq, q1 = q / nq;
    double x[3] = {0, 0, 0}, t0[3] = {0, 0, 0}, t1[3] = {0, 0, 0};
    for (int i1 = 0; i1 < n1f; i1++)
      for (int i0 = 0; i0 < n1; i0++) {
        const double *Xn = &X[face_node(dim, n1, f, a, i0, i1) * dim];
        const double b1 = dim == 3 ? b->B[q1 * n1 + i1] : 1.0, g1 = dim == 3 ? b->Bg[q1 * n1 + i1] : 0.0;
        const double v = b->B[q0 * n1 + i0] * b1, d0 = b->Bg[q0 * n1 + i0] * b1, d1 = b->B[q0 * n1 + i0] * g1;
        for (int k = 0; k < dim; k++) {
          x[k] += v * Xn[k];
          t0[k] += d0 * Xn[k];
          t1[k] += d1 * Xn[k];
        }
      }
    double n[3] = {0, 0, 0}, area;
    if (dim == 2) {
      n[0] = t0[1], n[1] = -t0[0];
    } else {
      n[0] = t0[1] * t1[2] - t0[2] * t1[1];
      n[1] = t0[2] * t1[0] - t0[0] * t1[2];
      n[2] = t0[0] * t1[1] - t0[1] * t1[0];
    }
    area = sqrt(n[0] * n[0] + n[1] * n[1] + n[2] * n[2]);
    double out = 0.0;
    for (int k = 0; k < dim; k++) out += n[k] * (x[k] - xc[k]);
    const double sgn = out < 0.0 ? -1.0 : 1.0;
    for (int k = 0; k < dim; k++) {
      xq[q * dim + k] = x[k];
      nq_out[q * dim + k] = area > 0.0 ? sgn * n[k] / area : 0.0;
    }
    W[q] = b->qwts[q0] * (dim == 3 ? b->qwts[q1] : 1.0) * area;
  }
}

/* u at the face's points from the cell's values ue (nc x npc, component by component): uq[q nc + c] */
static void face_values(const mf_space s, const mf_basis1d *b, int f, const double *ue, double *uq)
{
  const int dim = s->dim, n1 = s->n1, nq = b->nq, nqf = dim == 2 ? nq : nq * nq, n1f = dim == 2 ? 1 : n1, nc = s->ncomp;
  int a[2] = {0, 0};
  face_dirs(dim, f, a);
  for (int q = 0; q < nqf; q++) {
    const int q0 = q % nq, q1 = q / nq;
    for (int c = 0; c < nc; c++) {
      double v = 0.0;
      for (int i1 = 0; i1 < n1f; i1++)
        for (int i0 = 0; i0 < n1; i0++)
          v += b->B[q0 * n1 + i0] * (dim == 3 ? b->B[q1 * n1 + i1] : 1.0) *
               ue[(size_t)c * s->npc + face_node(dim, n1, f, a, i0, i1)];
      uq[q * nc + c] = v;
    }
  }
}

/* ve[c npc + face node] += sum over the points of phi_i r[q nc + c] */
static void face_integrate(const mf_space s, const mf_basis1d *b, int f, const double *r, double *ve)
{
  const int dim = s->dim, n1 = s->n1, nq = b->nq, nqf = dim == 2 ? nq : nq * nq, n1f = dim == 2 ? 1 : n1, nc = s->ncomp;
  int a[2] = {0, 0};
  face_dirs(dim, f, a);
  for (int i1 = 0; i1 < n1f; i1++)
    for (int i0 = 0; i0 < n1; i0++) {
      const int node = face_node(dim, n1, f, a, i0, i1);
      for (int c = 0; c < nc; c++) {
        double v = 0.0;
        for (int q = 0; q < nqf; q++)
          v += b->B[(q % nq) * n1 + i0] * (dim == 3 ? b->B[(q / nq) * n1 + i1] : 1.0) * r[q * nc + c];
        ve[(size_t)c * s->npc + node] += v;
      }
    }
}

#define MF_MAX_QF (MF_MAX_NQ * MF_MAX_NQ)

void mf_hex_phys_face_points(const mf_operator op, int k, double *X, double *out)
{
  const mf_hex_phys *h = mf_hexphys(op);
  const mf_space s = op->space;
  const int dim = s->dim, nq = h->basis.nq, nqf = dim == 2 ? nq : nq * nq;
  double xq[3 * MF_MAX_QF], W[MF_MAX_QF], nrm[3 * MF_MAX_QF];
  mf_space_cell_coords(s, h->bf_cell[k], X);
  face_geometry(s, &h->basis, h->bf_face[k], X, xq, W, nrm);
  for (int q = 0; q < nqf; q++) {
    double *o = out + (size_t)q * (2 * dim + 1);
    for (int d = 0; d < dim; d++) o[d] = xq[q * dim + d], o[dim + d] = nrm[q * dim + d];
    o[2 * dim] = W[q];
  }
}

/* The boundary terms of cell e: residual (f0 at the cell's values ue) or the operator's (g0 times ue) added
 * into ve. Returns 1 where a value is not finite (*bad_q: the face point), 0 otherwise. */
static int cell_faces(const mf_operator op, int e, const double *ue, double *ve, int operator_term, double *X, int *bad_q,
                      double *bad_x)
{
  const mf_hex_phys *h = mf_hexphys(op);
  const mf_space s = op->space;
  const int dim = s->dim, nc = s->ncomp, nq = h->basis.nq, nqf = dim == 2 ? nq : nq * nq;
  double xq[3 * MF_MAX_QF], W[MF_MAX_QF], nrm[3 * MF_MAX_QF], uq[MF_MAX_COMPONENTS * MF_MAX_QF],
      r[MF_MAX_COMPONENTS * MF_MAX_QF];
  int have_geometry = 0;
  for (int k = h->cell_bf_off[e]; k < h->cell_bf_off[e + 1]; k++) {
    const int f = h->bf_face[k], t = h->bf_term[k];
    const mf_phys_bfn fn = operator_term ? h->ph.bg0[t] : h->ph.bf0[t];
    if (!fn) continue;
    if (!have_geometry) mf_space_cell_coords(s, e, X), have_geometry = 1;
    face_geometry(s, &h->basis, f, X, xq, W, nrm);
    face_values(s, &h->basis, f, ue, uq);
    for (int q = 0; q < nqf; q++) {
      double out[MF_MAX_COMPONENTS * MF_MAX_COMPONENTS] = {0.0};
      const double zero[MF_MAX_COMPONENTS] = {0.0};
      fn(dim, nc, operator_term ? zero : &uq[q * nc], &xq[q * dim], &nrm[q * dim], h->ph.k, out);
      for (int i = 0; i < (operator_term ? nc * nc : nc); i++)
        if (!isfinite(out[i])) {
          *bad_q = q;
          for (int d = 0; d < dim; d++) bad_x[d] = xq[q * dim + d];
          return 1;
        }
      for (int c = 0; c < nc; c++) {
        double v = 0.0;
        if (operator_term)
          for (int bb = 0; bb < nc; bb++) v += out[c * nc + bb] * uq[q * nc + bb];
        else v = out[c];
        r[q * nc + c] = W[q] * v;
      }
    }
    face_integrate(s, &h->basis, f, r, ve);
  }
  return 0;
}

int mf_hex_phys_faces_has_operator(const mf_hex_phys *h)
{
  for (int t = 0; t < h->ph.nbound; t++)
    if (h->ph.bg0[t]) return 1;
  return 0;
}

void mf_hex_phys_faces_apply(const mf_operator op, int e, const double *ue, double *ve, double *X)
{
  int q = 0;
  double x[3];
  cell_faces(op, e, ue, ve, 1, X, &q, x); /* g0's values were checked at set-up (mf_hex_phys_faces_check) */
}

void mf_hex_phys_element_add(const mf_operator op, int e,
                             void (*cell_op)(const mf_operator op, int e, const double *u, double *v, double *work),
                             double *u, double *col, double *work, const int64_t *rowptr, const int *colidx,
                             double *vals)
{
  const mf_space s = op->space;
  const int npc = s->npc, nc = s->ncomp, nent = npc * nc, mask = s->face_code[e];
  const int *nodes = &s->cell_nodes[(size_t)e * npc];
  for (int b = 0; b < nc; b++)
    for (int j = 0; j < npc; j++) {
      memset(u, 0, sizeof(double) * nent);
      memset(col, 0, sizeof(double) * nent);
      u[(size_t)b * npc + j] = 1.0;
      mf_hanging_apply(s->dim, s->n1, mask, s->hanging_P, u + (size_t)b * npc, 0);
      cell_op(op, e, u, col, work);
      for (int c = 0; c < nc; c++) {
        double *cc = col + (size_t)c * npc;
        mf_hanging_apply(s->dim, s->n1, mask, s->hanging_P, cc, 1);
        for (int i = 0; i < npc; i++)
          if (cc[i] != 0.0) vals[mf_csr_find(rowptr, colidx, nodes[i] * nc + c, nodes[j] * nc + b)] += cc[i];
      }
    }
}

int mf_hex_phys_faces_assemble(mf_operator op, const int64_t *rowptr, const int *colidx, double *vals)
{
  const mf_hex_phys *h = mf_hexphys(op);
  const mf_space s = op->space;
  const size_t nent = (size_t)s->npc * s->ncomp;
  double *u = NULL, *col = NULL, *X = NULL;
  int ierr = MF_CALLOC(op->ctx, nent, &u);
  if (!ierr) ierr = MF_CALLOC(op->ctx, nent, &col);
  if (!ierr) ierr = MF_CALLOC(op->ctx, (size_t)s->npc * s->dim, &X);
  for (int e = 0; !ierr && e < s->ncells; e++) /* the constrained face operator, as the cells' */
    if (h->cell_bf_off[e + 1] > h->cell_bf_off[e])
      mf_hex_phys_element_add(op, e, mf_hex_phys_faces_apply, u, col, X, rowptr, colidx, vals);
  free(u);
  free(col);
  free(X);
  return ierr;
}

int mf_hex_phys_faces_residual(const mf_operator op, int e, const double *ue, double *ve, double *X)
{
  int q = 0;
  double x[3] = {0, 0, 0};
  char xs[96];
  if (!cell_faces(op, e, ue, ve, 0, X, &q, x)) return 0;
  mf_point_text(op->space->dim, x, xs, sizeof xs);
  return mf_error_set(op->ctx, MF_ERR_ARGUMENT, __FILE__, __LINE__, __func__,
                      "physics '%s': a boundary term f0 gave a value that is not finite at face point %d of cell %d (rank "
                      "%d), x = %s: the boundary functions must give finite values",
                      mf_hexphys(op)->ph.name, q, e, op->ctx->rank, xs);
}

int mf_hex_phys_faces_check(const mf_operator op)
{
  const mf_hex_phys *h = mf_hexphys(op);
  const mf_space s = op->space;
  if (!mf_hex_phys_faces_has_operator(h)) return 0;
  /* the cells' coordinates on the host (a device backend drops them at set-up; collective: on every rank,
   * with faces or not) */
  MF_CALL(mf_space_host_coords(s));
  if (!h->nbf) return 0;
  double *X = NULL, *ue = NULL, *ve = NULL;
  int ierr = MF_CALLOC(op->ctx, (size_t)s->npc * s->dim, &X);
  if (!ierr) ierr = MF_CALLOC(op->ctx, (size_t)s->npc * s->ncomp, &ue);
  if (!ierr) ierr = MF_CALLOC(op->ctx, (size_t)s->npc * s->ncomp, &ve);
  for (int k = 0; k < h->nbf && !ierr; k++) {
    int q = 0;
    double x[3] = {0, 0, 0};
    char xs[96];
    const int e = h->bf_cell[k];
    if (k > 0 && h->bf_cell[k - 1] == e) continue;
    if (cell_faces(op, e, ue, ve, 1, X, &q, x)) {
      mf_point_text(s->dim, x, xs, sizeof xs);
      ierr = mf_error_set(op->ctx, MF_ERR_ARGUMENT, __FILE__, __LINE__, __func__,
                          "physics '%s': a boundary term g0 gave a value that is not finite at face point %d of cell %d "
                          "(rank %d), x = %s: the boundary functions must give finite values",
                          h->ph.name, q, e, op->ctx->rank, xs);
    }
  }
  free(X);
  free(ue);
  free(ve);
  return ierr;
}
