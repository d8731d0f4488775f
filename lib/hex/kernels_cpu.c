/* kernels_cpu.c -- the CPU reference kernels of the matrix-free operators: sum-factorised cell
 * application, the matrix-free diagonal, and dense element matrices for testing. Written for
 * clarity; the CUDA kernels (lib/cuda) are checked against these.
 *
 * One cell, Laplace part, in sum-factorised form (B: nodes -> quadrature points, D: collocation
 * derivative on the quadrature points, G: stored quadrature data):
 *     u_q  = (B x B x B) u_e
 *     g_l  = D_l u_q                    (D applied along direction l)
 *     v_k  = sum_l G_kl g_l             (pointwise)
 *     r    = sum_k D_k^T v_k + m u_q    (mass part m, if any)
 *     v_e  = (B^T x B^T x B^T) r                                                                  */
#include "hex/mf_hex_op.h"
#include "physics/mf_gallery.h"

size_t mf_kernel_work_size(mf_operator op)
{
  const int dim = op->space->dim;
  size_t nqp = mf_hexop(op)->qd.nqp, npc = op->space->npc;
  size_t big = nqp > npc ? nqp : npc;
  size_t n = big * (4 + 2 * (size_t)dim);
  /* on the fly: the cell's quadrature data and the work to make them */
  if (mf_hexop(op)->geometry == MF_GEOMETRY_ON_THE_FLY) n += (size_t)mf_hexop(op)->qd.ncomp * nqp + mf_otf_work_size(op);
  return n;
}

void mf_kernel_cell_cpu(mf_operator op, int cell, const double *ue, double *ve, double *work)
{
  const mf_space s = op->space;
  const mf_hex_op *h = mf_hexop(op);
  const int dim = s->dim, nq = h->basis.nq, has_mass = h->pw.has_mass, has_grad = h->pw.has_grad;
  const mf_basis1d *b = &h->basis;
  const mf_qdata *qd = &h->qd;
  const float *qdf = h->qdf;
  const int nqp = qd->nqp;
  size_t big = (size_t)(nqp > s->npc ? nqp : s->npc);
  double *uq = work, *r = work + big, *t1 = work + 2 * big, *t2 = work + 3 * big;
  double *g = work + 4 * big, *v = g + (size_t)dim * big;
  int nn[3] = {nq, nq, nq};

  if (b->collocated) memcpy(uq, ue, sizeof(double) * nqp);
  else mf_tensor_interpolate(dim, b, ue, uq, t1, t2);

  /* on the fly (and no stored data made for the moment, as the diagonal does): this cell's quadrature
   * data from its geometry nodes, the same values as the stored ones */
  double *qv = NULL;
  if (h->geometry == MF_GEOMETRY_ON_THE_FLY && !qd->data) {
    qv = v + (size_t)dim * big;
    mf_otf_cell_qdata(op, cell, qv + (size_t)qd->ncomp * nqp, qv);
  }
  /* the quadrature data in double, or the float copy of a single-precision operator */
#define QD(comp, q)                                                                         \
  (qv ? qv[(size_t)(comp) * nqp + (q)]                                                      \
      : qdf ? (double)qdf[mf_qdata_index(qd, cell, (comp), (q))] : qd->data[mf_qdata_index(qd, cell, (comp), (q))])
  if (has_grad)
    for (int l = 0; l < dim; l++) mf_tensor_apply(dim, nn, l, b->D, nq, 0, uq, g + (size_t)l * big, 0);
  for (int q = 0; q < nqp; q++) { /* the pointwise step: r = m u_q, v = G g (lib/physics/mf_gallery.h) */
    double qp[MF_PW_MAX_STORED], du[3] = {0.0, 0.0, 0.0}, dv[3];
    for (int c = 0; c < qd->ncomp; c++) qp[c] = QD(c, q);
    if (has_grad)
      for (int l = 0; l < dim; l++) du[l] = g[(size_t)l * big + q];
    r[q] = 0.0;
    mf_pw_apply_d(dim, has_mass, has_grad, qp, 1, uq[q], du, &r[q], dv);
    if (has_grad)
      for (int k = 0; k < dim; k++) v[(size_t)k * big + q] = dv[k];
  }
  if (has_grad)
    for (int k = 0; k < dim; k++) mf_tensor_apply(dim, nn, k, b->D, nq, 1, v + (size_t)k * big, r, 1);
#undef QD
  if (b->collocated) memcpy(ve, r, sizeof(double) * nqp);
  else mf_tensor_integrate(dim, b, r, ve, t1, t2);
}

/* x, y: double arrays, or float arrays (single = 1: a single-precision operator; the cell's work
 * runs in double here, the CUDA kernel's in float: they differ by rounding) */
static int apply_cpu(mf_operator op, const void *x, void *y, int single, const int *cells, int ncells)
{
  const mf_space s = op->space;
  const int npc = s->npc;
  double buf[2 * MF_MAX_N1 * MF_MAX_N1 * MF_MAX_N1];
  double *ue = buf, *ve = buf + MF_MAX_N1 * MF_MAX_N1 * MF_MAX_N1;
  const double *xd = single ? NULL : (const double *)x;
  const float *xs = single ? (const float *)x : NULL;
  double *yd = single ? NULL : (double *)y;
  float *ys = single ? (float *)y : NULL;
  double *work;
  MF_CALL(MF_CALLOC(s->ctx, mf_kernel_work_size(op), &work));
  for (int k = 0; k < ncells; k++) {
    const int e = cells ? cells[k] : k;
    const int *nodes = &s->cell_nodes[(size_t)e * npc];
    const int mask = s->face_code[e];
    for (int i = 0; i < npc; i++) ue[i] = single ? (double)xs[nodes[i]] : xd[nodes[i]];
    mf_hanging_apply(s->dim, s->n1, mask, s->hanging_P, ue, 0); /* coarse values -> this cell's */
    mf_kernel_cell_cpu(op, e, ue, ve, work);
    mf_hanging_apply(s->dim, s->n1, mask, s->hanging_P, ve, 1);
    if (single)
      for (int i = 0; i < npc; i++) ys[nodes[i]] += (float)ve[i];
    else
      for (int i = 0; i < npc; i++) yd[nodes[i]] += ve[i];
  }
  free(work);
  return 0;
}

int mf_kernel_apply_cpu(mf_operator op, const double *x, double *y)
{
  return apply_cpu(op, x, y, 0, NULL, op->space->ncells);
}

int mf_kernel_apply_cpu_single(mf_operator op, const float *x, float *y)
{
  return apply_cpu(op, x, y, 1, NULL, op->space->ncells);
}

int mf_kernel_apply_cpu_part(mf_operator op, const void *x, void *y, mf_cell_part part)
{
  const mf_space s = op->space;
  MF_CALL(mf_space_parts(s));
  return apply_cpu(op, x, y, op->prec == MF_PRECISION_FLOAT, s->part_cells + s->part_off[part],
                   s->part_off[part + 1] - s->part_off[part]);
}

/* Diagonal of one cell without constraints: diag(i) = sum_q [m(q) phi_i(q)^2 + sum_kl G_kl(q) d_k phi_i(q)
 * d_l phi_i(q)]. Each product is separable in the directions, so every (k, l) term is one contraction
 * of the quadrature-point tensor with 1D factor matrices F (nq x n1): B.B, B.Bg or Bg.Bg (elementwise).
 * buf: 3 nqp doubles. */
static void cell_diagonal(mf_operator op, int e, double *buf, double *de)
{
  const mf_space s = op->space;
  const int dim = s->dim, nq = mf_hexop(op)->basis.nq, n1 = s->n1, npc = s->npc;
  const mf_basis1d *b = &mf_hexop(op)->basis;
  const mf_qdata *qd = &mf_hexop(op)->qd;
  const int nqp = qd->nqp;
  double *coef = buf, *t1 = buf + nqp, *t2 = buf + 2 * nqp;
  memset(de, 0, sizeof(double) * npc);
  for (int term = 0; term < qd->ncomp; term++) {
    int k, l; /* the derivatives the term pairs (none for the mass part's), its factor */
    const double factor = mf_pw_diag_term(dim, mf_hexop(op)->pw.has_mass, term, &k, &l);
    for (int q = 0; q < nqp; q++) coef[q] = factor * qd->data[mf_qdata_index(qd, e, term, q)];
    int n[3] = {nq, nq, nq};
    const double *in = coef;
    for (int dd = 0; dd < dim; dd++) {
      const double *F = (k < 0) ? b->BB : (dd == k && dd == l) ? b->GG : (dd == k || dd == l) ? b->BG : b->BB;
      double *o = (dd % 2) ? t2 : t1;
      mf_tensor_apply(dim, n, dd, F, n1, 1, in, o, 0);
      n[dd] = n1;
      in = o;
    }
    for (int i = 0; i < npc; i++) de[i] += in[i];
  }
}

/* All cells, the cells of one color at a time shared among OpenMP threads (no two cells of a color
 * share a DoF: a deterministic scatter). On cells with a mask only the columns that the constraints
 * leave alone are added here (see mf_kernel_diagonal_hanging_cpu). */
int mf_kernel_diagonal_cpu(mf_operator op, double *d)
{
  const mf_space s = op->space;
  const int npc = s->npc;
  int ierr = 0;
#pragma omp parallel
  {
    double *buf = NULL;
    int lerr = MF_CALLOC(NULL, (size_t)(3 * mf_hexop(op)->qd.nqp + npc), &buf); /* reported once, below */
    mf_thread_note(&ierr, lerr);
    for (int c = 0; c < s->ncolors; c++) {
#pragma omp for schedule(static)
      for (int k = s->color_off[c]; k < s->color_off[c + 1]; k++) {
        if (lerr) continue;
        const int e = s->color_cells[k], mask = s->face_code[e];
        const int *nodes = &s->cell_nodes[(size_t)e * npc];
        double *de = buf + 3 * mf_hexop(op)->qd.nqp;
        cell_diagonal(op, e, buf, de);
        for (int i = 0; i < npc; i++)
          if (!mask || !mf_hanging_diag_column(s->dim, s->n1, npc, mask, nodes, i)) d[nodes[i]] += de[i];
      }
    }
    free(buf);
  }
  MF_CALL(mf_thread_work_check(s->ctx, ierr, "diagonal"));
  return 0;
}

/* Cells with a mask: column j of C^T A_e C for the columns mf_hanging_diag_column selects (the cell
 * operator with constraints on the unit vector e_j); every position holding j's DoF takes its entry. */
int mf_kernel_diagonal_hanging_cpu(mf_operator op, double *d)
{
  const mf_space s = op->space;
  const int npc = s->npc;
  if (!s->nmasked) return 0;
  int ierr = 0;
#pragma omp parallel
  {
    double *work = NULL;
    const size_t wsize = mf_kernel_work_size(op);
    int lerr = MF_CALLOC(NULL, wsize + 2 * (size_t)npc, &work); /* reported once, below */
    mf_thread_note(&ierr, lerr);
    for (int c = 0; c < s->ncolors; c++) {
#pragma omp for schedule(dynamic, 16)
      for (int k = s->color_off[c]; k < s->color_off[c + 1]; k++) {
        const int e = s->color_cells[k], mask = s->face_code[e];
        if (lerr || !mask) continue;
        const int *nodes = &s->cell_nodes[(size_t)e * npc];
        double *col = work + wsize, *u = col + npc;
        for (int j = 0; j < npc; j++) {
          if (!mf_hanging_diag_column(s->dim, s->n1, npc, mask, nodes, j)) continue;
          memset(u, 0, sizeof(double) * npc);
          u[j] = 1.0;
          mf_hanging_apply(s->dim, s->n1, mask, s->hanging_P, u, 0);
          mf_kernel_cell_cpu(op, e, u, col, work);
          mf_hanging_apply(s->dim, s->n1, mask, s->hanging_P, col, 1);
          for (int i = 0; i < npc; i++)
            if (nodes[i] == nodes[j]) d[nodes[i]] += col[i];
        }
      }
    }
    free(work);
  }
  MF_CALL(mf_thread_work_check(s->ctx, ierr, "diagonal"));
  return 0;
}

void mf_element_matrix_constrained_work(mf_operator op, int cell, double *Ac, double *work)
{
  const mf_space s = op->space;
  const int npc = s->npc, mask = s->face_code[cell];
  double *col = work + mf_kernel_work_size(op);
  /* column j of C^T A_e C: the cell operator with constraints on the unit vector e_j */
  for (int j = 0; j < npc; j++) {
    double *u = col + npc;
    memset(u, 0, sizeof(double) * npc);
    u[j] = 1.0;
    mf_hanging_apply(s->dim, s->n1, mask, s->hanging_P, u, 0);
    mf_kernel_cell_cpu(op, cell, u, col, work);
    mf_hanging_apply(s->dim, s->n1, mask, s->hanging_P, col, 1);
    for (int i = 0; i < npc; i++) Ac[(size_t)i * npc + j] = col[i];
  }
}

int mf_element_matrix_constrained(mf_operator op, int cell, double *Ac)
{
  double *work;
  MF_CALL(MF_CALLOC(op->space->ctx, mf_kernel_work_size(op) + 2 * (size_t)op->space->npc, &work));
  mf_element_matrix_constrained_work(op, cell, Ac, work);
  free(work);
  return 0;
}

void mf_element_matrix_dense(mf_operator op, int cell, double *Ae)
{
  const mf_space s = op->space;
  const int dim = s->dim, nq = mf_hexop(op)->basis.nq, n1 = s->n1, npc = s->npc;
  const mf_basis1d *b = &mf_hexop(op)->basis;
  const mf_qdata *qd = &mf_hexop(op)->qd;
  const int nqp = qd->nqp;
  memset(Ae, 0, sizeof(double) * (size_t)npc * npc);
  for (int q = 0; q < nqp; q++) {
    int qi[3] = {0, 0, 0}, t = q;
    for (int k = 0; k < dim; k++) {
      qi[k] = t % nq;
      t /= nq;
    }
    double qp[MF_PW_MAX_STORED];
    for (int c = 0; c < qd->ncomp; c++) qp[c] = qd->data[mf_qdata_index(qd, cell, c, q)];
    /* values and reference gradients of all basis functions at q */
    double phi[MF_MAX_N1 * MF_MAX_N1 * MF_MAX_N1], dphi[MF_MAX_N1 * MF_MAX_N1 * MF_MAX_N1][3];
    for (int i = 0; i < npc; i++) {
      int ii[3] = {0, 0, 0}, u = i;
      for (int k = 0; k < dim; k++) {
        ii[k] = u % n1;
        u /= n1;
      }
      phi[i] = 1.0;
      for (int k = 0; k < dim; k++) phi[i] *= b->B[qi[k] * n1 + ii[k]];
      for (int k = 0; k < dim; k++) {
        dphi[i][k] = 1.0;
        for (int dd = 0; dd < dim; dd++)
          dphi[i][k] *= (dd == k ? b->Bg : b->B)[qi[dd] * n1 + ii[dd]];
      }
    }
    for (int i = 0; i < npc; i++)
      for (int j = 0; j < npc; j++)
        Ae[(size_t)i * npc + j] += mf_pw_entry_d(dim, mf_hexop(op)->pw.has_mass, mf_hexop(op)->pw.has_grad, qp, 1, phi[i], dphi[i], phi[j], dphi[j]);
  }
}
