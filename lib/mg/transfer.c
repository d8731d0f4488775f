/* transfer.c -- matrix-free transfers between multigrid levels (see mf_mg.h), the CPU code; the
 * cuda backend runs the same cell work in lib/cuda/transfer.cu.
 *
 *   P u:  import u's ghosts -> per coarse cell K: u_K = C_K (u at K's nodes, Dirichlet DoFs zero)
 *         -> per fine cell e of K: (M_x x M_y x M_z) u_K at e's nodes -> each fine DoF from its
 *         owner cell -> [several ranks: export-add, divide by the count] -> Dirichlet DoFs zero
 *   P^T r: the transpose, step by step in reverse: r (Dirichlet zero) / count -> import -> per
 *         coarse cell the transposed interpolation of its fine cells' owned entries -> C_K^T ->
 *         scatter-add (Dirichlet DoFs left out), color by color -> export-add              */
#include "mf_mg.h"
#include "hex/mf_hex_op.h"

#include "base/mf_backend.h"

/* fine cells of every coarse cell: itself, or its 2^dim children (consecutive, in child order) */
static int cell_map(mf_transfer tr)
{
  const mf_space c = tr->coarse, f = tr->fine;
  mf_context ctx = c->ctx;
  const int nchild = 1 << c->dim;
  MF_CALL(MF_CALLOC(ctx, c->ncells + 1, &tr->first));
  MF_CALL(MF_CALLOC(ctx, f->ncells, &tr->child));
  int j = 0;
  for (int K = 0; K < c->ncells; K++) {
    tr->first[K] = j;
    const int lc = c->cell_level[K];
    MF_CHECK(j < f->ncells, ctx, MF_ERR_INCOMPATIBLE, "multigrid transfer: coarse cell %d has no fine cell", K);
    const int same = f->cell_level[j] == lc && f->cell_tree[j] == c->cell_tree[K] &&
                     !memcmp(&f->cell_q[3 * (size_t)j], &c->cell_q[3 * (size_t)K], 3 * sizeof(int32_t));
    if (tr->kind == 0 || same) {
      MF_CHECK(same, ctx, MF_ERR_INCOMPATIBLE, "multigrid transfer: cell %d differs on the two meshes", K);
      tr->child[j++] = -1;
      continue;
    }
    const int shift = f->root_log - (lc + 1); /* log2 of a child's edge */
    for (int k = 0; k < nchild; k++, j++) {
      int ok = j < f->ncells && f->cell_level[j] == lc + 1 && f->cell_tree[j] == c->cell_tree[K];
      int id = 0;
      for (int d = 0; ok && d < c->dim; d++) {
        const int32_t q = f->cell_q[3 * (size_t)j + d], qc = c->cell_q[3 * (size_t)K + d];
        id |= ((q >> shift) & 1) << d;
        ok = (q - qc) >> shift == ((k >> d) & 1);
      }
      MF_CHECK(ok && id == k, ctx, MF_ERR_INCOMPATIBLE,
               "multigrid transfer: the fine mesh is not the coarse one refined once at coarse cell %d", K);
      tr->child[j] = (int8_t)k;
    }
  }
  tr->first[c->ncells] = j;
  MF_CHECK(j == f->ncells, ctx, MF_ERR_INCOMPATIBLE, "multigrid transfer: %d fine cells, %d covered", f->ncells, j);
  return 0;
}

/* A state's restriction on hexahedra (mf_transfer_inject): each coarse DoF from its owner cell K, the fine cell of K
 * that holds its node (the same cell, or the child of its half per direction: a node at the middle from the lower
 * one), the fine cell's polynomial (hanging nodes resolved) evaluated there; several ranks: the owner cells' values
 * summed over the ranks and divided by their count, as the prolongation does. On the host for either backend. */
static int inject_hex(mf_transfer tr, mf_vector fine, mf_vector coarse)
{
  const mf_space c = tr->coarse, f = tr->fine;
  mf_context ctx = c->ctx;
  const int dim = c->dim, n1c = c->n1, n1f = f->n1, npcc = c->npc, npcf = f->npc, ncomp = c->ncomp;
  double E[3][MF_MAX_N1 * MF_MAX_N1], pts[MF_MAX_N1]; /* E[h][ic n1f + if]: h 0, 1 the halves; 2 the same cell */
  for (int h = 0; h < 3; h++) {
    for (int i = 0; i < n1c; i++) pts[i] = h == 2 ? c->gll[i] : fmin(fmax(2.0 * c->gll[i] - h, 0.0), 1.0);
    mf_lagrange_eval(n1f, f->gll, n1c, pts, E[h], NULL);
  }
  const double *fv = NULL;
  double *h = NULL, *cnt = NULL;
  int ierr = MF_CALLOC(ctx, (size_t)c->nlocal + 1, &h);
  if (!ierr) ierr = MF_CALLOC(ctx, (size_t)c->nlocal + 1, &cnt);
  if (!ierr) ierr = mf_vector_get_array_read(fine, MF_MEM_HOST, &fv);
  if (!ierr) {
#pragma omp parallel
    {
      double uF[MF_MAX_N1 * MF_MAX_N1 * MF_MAX_N1];
#pragma omp for schedule(static)
      for (int K = 0; K < c->ncells; K++)
        for (int k = 0; k < npcc; k++) {
          const int node = c->cell_nodes[(size_t)K * npcc + k];
          int ic[3] = {k % n1c, (k / n1c) % n1c, dim == 3 ? k / (n1c * n1c) : 0}, half[3] = {2, 2, 2}, child = 0;
          if (c->dof_owner[node * ncomp] != K || c->dof_pos[node * ncomp] != k) continue;
          for (int d = 0; d < dim && tr->kind == 1; d++) {
            half[d] = 2.0 * ic[d] > n1c - 1 ? 1 : 0; /* the middle node from the lower half */
            child |= half[d] << d;
          }
          const int j = tr->first[K] + (tr->kind == 1 && tr->child[tr->first[K]] >= 0 ? child : 0);
          if (tr->child[j] < 0) half[0] = half[1] = half[2] = 2; /* the same cell (not refined there) */
          const int *nf = &f->cell_nodes[(size_t)j * npcf];
          for (int comp = 0; comp < ncomp; comp++) {
            for (int q = 0; q < npcf; q++) uF[q] = fv[(size_t)nf[q] * ncomp + comp];
            mf_hanging_apply(dim, n1f, f->face_code[j], f->hanging_P, uF, 0);
            double s = 0.0;
            for (int q = 0; q < npcf; q++) {
              const int i0 = q % n1f, i1 = (q / n1f) % n1f, i2 = dim == 3 ? q / (n1f * n1f) : 0;
              double w = E[half[0]][ic[0] * n1f + i0] * E[half[1]][ic[1] * n1f + i1];
              if (dim == 3) w *= E[half[2]][ic[2] * n1f + i2];
              s += w * uF[q];
            }
            h[(size_t)node * ncomp + comp] = s;
            cnt[(size_t)node * ncomp + comp] = 1.0;
          }
        }
    }
  }
  if (fv) {
    const int e = mf_vector_restore_array_read(fine, &fv);
    if (!ierr) ierr = e;
  }
  if (ctx->size > 1) { /* the owner cells' values over the ranks */
    ierr = mf_agree(ctx, ierr);
    if (!ierr) ierr = mf_exchange_export_add(ctx, &c->ex, h);
    if (!ierr) ierr = mf_exchange_export_add(ctx, &c->ex, cnt);
  }
  for (int i = 0; !ierr && i < c->nowned; i++) h[i] = cnt[i] > 0.0 ? h[i] / cnt[i] : 0.0;
  if (!ierr) ierr = coarse->ops.from_host(coarse, h, c->nlocal);
  free(h);
  free(cnt);
  return ierr;
}

int mf_transfer_create(mf_space coarse, mf_space fine, mf_precision prec, mf_transfer *tr)
{
  MF_CHECK(coarse && fine, NULL, MF_ERR_NULL, "space is NULL");
  mf_context ctx = fine->ctx;
  MF_CHECK(tr, ctx, MF_ERR_NULL, "output pointer tr is NULL");
  *tr = NULL;
  MF_CHECK(coarse->fam == fine->fam, ctx, MF_ERR_INCOMPATIBLE, "multigrid transfer between a %s and a %s space",
           coarse->fam->name, fine->fam->name);
  if (fine->fam->transfer_create != mf_transfer_create) /* another family's own (simplices: transfer_simplex.c) */
    return fine->fam->transfer_create ? fine->fam->transfer_create(coarse, fine, prec, tr)
                                      : mf_error_set(ctx, MF_ERR_UNSUPPORTED, __FILE__, __LINE__, __func__,
                                                     "multigrid transfers: none on %s spaces", fine->fam->name);
  MF_CHECK(coarse->dim == fine->dim && coarse->ctx == fine->ctx, ctx, MF_ERR_INCOMPATIBLE,
           "multigrid transfer between spaces of different dimensions or contexts");
  MF_CHECK(coarse->ncomp == fine->ncomp, ctx, MF_ERR_INCOMPATIBLE,
           "multigrid transfer between spaces of %d and %d components", coarse->ncomp, fine->ncomp);
  const int pkind = coarse->mesh == fine->mesh;
  MF_CHECK(pkind ? coarse->degree <= fine->degree : coarse->degree == fine->degree, ctx, MF_ERR_INCOMPATIBLE,
           "multigrid transfer: degrees %d (coarse) and %d (fine) on %s mesh", coarse->degree, fine->degree,
           pkind ? "the same" : "another");
  /* collective: a failure of one rank is agreed on before each exchange and at the end */
  mf_transfer t;
  MF_CALL(MF_CALLOC_AGREED(ctx, 1, &t));
  t->coarse = coarse;
  t->fine = fine;
  t->kind = pkind ? 0 : 1;
  t->prec = prec;
  t->inject_fn = inject_hex;
  int ierr = cell_map(t);
  if (!ierr) {
    if (pkind) { /* M[i][j] = l_j^coarse(x_i^fine) on Gauss-Lobatto nodes */
      mf_lagrange_eval(coarse->n1, coarse->gll, fine->n1, fine->gll, t->M[0], NULL);
      for (int i = 0; i < fine->n1; i++) /* the end nodes exactly */
        for (int jj = 0; jj < coarse->n1; jj++)
          if (i == 0 || i == fine->n1 - 1) t->M[0][i * coarse->n1 + jj] = (i == 0) == (jj == 0) && (i == 0 || jj == coarse->n1 - 1);
    } else {
      memcpy(t->M[0], fine->hanging_P, sizeof(double) * fine->n1 * fine->n1);
      memcpy(t->M[1], fine->hanging_P + fine->n1 * fine->n1, sizeof(double) * fine->n1 * fine->n1);
    }
  }
  if (!ierr) ierr = mf_vector_create_prec(fine, prec, &t->work);
  if (ctx->size > 1) { /* ranks per DoF with an owner cell */
    double *h = NULL;
    if (!ierr) ierr = MF_CALLOC(ctx, fine->nlocal, &h);
    ierr = mf_agree(ctx, ierr);
    for (int i = 0; i < fine->nlocal && !ierr; i++) h[i] = fine->dof_owner[i] < fine->ncells;
    if (!ierr) ierr = mf_exchange_export_add(ctx, &fine->ex, h);
    for (int i = 0; i < fine->nowned && !ierr; i++)
      if (!(h[i] > 0.0))
        ierr = mf_error_set(ctx, MF_ERR_ARGUMENT, __FILE__, __LINE__, __func__,
                            "multigrid transfer: DoF %d of rank %d has no owner cell on any rank", i, ctx->rank);
    for (int i = 0; i < fine->nowned && !ierr; i++) h[i] = 1.0 / h[i];
    if (!ierr) ierr = mf_vector_create_prec(fine, prec, &t->count_inv);
    if (!ierr) ierr = t->count_inv->ops.from_host(t->count_inv, h, fine->nlocal);
    free(h);
  }
  if (!ierr && ctx->bk->transfer.setup) ierr = ctx->bk->transfer.setup(t);
  ierr = mf_agree(ctx, ierr); /* every rank fails, or none: the others would wait in the next exchange */
  if (ierr) {
    mf_transfer_destroy(&t);
    return ierr;
  }
  *tr = t;
  return 0;
}

int mf_transfer_own_bits(const mf_transfer tr, int words, uint32_t **own)
{
  const mf_space f = tr->fine;
  const size_t nw = (size_t)f->ncells * words;
  *own = NULL;
  MF_CALL(MF_CALLOC(f->ctx, nw ? nw : 1, own));
  uint32_t *o = *own;
#pragma omp parallel for schedule(static)
  for (int j = 0; j < f->ncells; j++) /* cell j writes its own words only */
    for (int k = 0; k < f->npc; k++) {
      const int dof = f->cell_nodes[(size_t)j * f->npc + k] * f->ncomp;
      if (f->dof_owner[dof] == j && f->dof_pos[dof] == k) o[(size_t)j * words + (k >> 5)] |= 1u << (k & 31);
    }
  return 0;
}

void mf_transfer_destroy(mf_transfer *tr)
{
  if (!tr || !*tr) return;
  mf_transfer t = *tr;
  if (t->dev) t->fine->ctx->bk->transfer.free(t);
  if (t->free_fn) t->free_fn(t);
  free(t->first);
  free(t->child);
  mf_vector_destroy(&t->count_inv);
  mf_vector_destroy(&t->work);
  free(t);
  *tr = NULL;
}

/* The 1D matrix of direction d for fine cell j: p: M[0] (n1f x n1c); h: P_bit or the identity. */
static const double *dir_matrix(const mf_transfer tr, int j, int d, const double *identity)
{
  if (tr->kind == 0) return tr->M[0];
  const int c = tr->child[j];
  if (c < 0) return identity;
  return tr->M[(c >> d) & 1];
}

/* in (coarse cell nodes) -> out (fine cell nodes), or the transpose; t1, t2 scratch */
static void cell_interpolate(const mf_transfer tr, int j, const double *in, double *out, double *t1, double *t2,
                             int transpose, const double *identity)
{
  const int dim = tr->fine->dim, n1c = tr->coarse->n1, n1f = tr->fine->n1;
  int n[3] = {transpose ? n1f : n1c, transpose ? n1f : n1c, transpose ? n1f : n1c};
  const double *src = in;
  double *bufs[2] = {t1, t2};
  for (int d = 0; d < dim; d++) {
    double *dst = d == dim - 1 ? out : bufs[d % 2];
    const double *M = dir_matrix(tr, j, d, identity);
    mf_tensor_apply(dim, n, d, M, transpose ? n1c : n1f, transpose, src, dst, 0);
    n[d] = transpose ? n1c : n1f;
    src = dst;
  }
}

/* Entries of a vector of either precision, in double (the cell work runs in double on the CPU). */
static inline double vget(const mf_vector v, int i) { return v->prec == MF_PRECISION_FLOAT ? (double)v->sdata[i] : v->data[i]; }
static inline void vset(mf_vector v, int i, double x)
{
  if (v->prec == MF_PRECISION_FLOAT) v->sdata[i] = (float)x;
  else v->data[i] = x;
}

static int prolongate_cpu(mf_transfer tr, const mf_vector uc, mf_vector vf)
{
  const mf_space c = tr->coarse, f = tr->fine;
  const int npcc = c->npc, npcf = f->npc, n1 = f->n1, ncomp = f->ncomp;
  double identity[MF_MAX_N1 * MF_MAX_N1];
  for (int i = 0; i < n1 * n1; i++) identity[i] = (i / n1) == (i % n1);
#pragma omp parallel for schedule(static)
  for (int i = 0; i < f->nlocal; i++) vset(vf, i, 0.0);
#pragma omp parallel
  {
    double uK[MF_MAX_N1 * MF_MAX_N1 * MF_MAX_N1], val[MF_MAX_N1 * MF_MAX_N1 * MF_MAX_N1];
    double t1[MF_MAX_N1 * MF_MAX_N1 * MF_MAX_N1], t2[MF_MAX_N1 * MF_MAX_N1 * MF_MAX_N1];
#pragma omp for schedule(static)
    for (int K = 0; K < c->ncells; K++) {
      const int *nc = &c->cell_nodes[(size_t)K * npcc];
      for (int comp = 0; comp < ncomp; comp++) { /* components alike, each on its own (entry node * ncomp + comp) */
        for (int k = 0; k < npcc; k++) {
          const int i = nc[k] * ncomp + comp;
          uK[k] = c->bc[i] ? 0.0 : vget(uc, i);
        }
        mf_hanging_apply(c->dim, c->n1, c->face_code[K], c->hanging_P, uK, 0);
        for (int j = tr->first[K]; j < tr->first[K + 1]; j++) {
          cell_interpolate(tr, j, uK, val, t1, t2, 0, identity);
          const int *nf = &f->cell_nodes[(size_t)j * npcf];
          for (int k = 0; k < npcf; k++) { /* each fine DoF from its owner cell: one writer */
            const int i = nf[k] * ncomp + comp;
            if (f->dof_owner[i] == j && f->dof_pos[i] == k) vset(vf, i, val[k]);
          }
        }
      }
    }
  }
  return 0;
}

static int restrict_cpu(mf_transfer tr, const mf_vector wf, mf_vector yc)
{
  const mf_space c = tr->coarse, f = tr->fine;
  const int npcc = c->npc, npcf = f->npc, n1 = f->n1, ncomp = f->ncomp;
  double identity[MF_MAX_N1 * MF_MAX_N1];
  for (int i = 0; i < n1 * n1; i++) identity[i] = (i / n1) == (i % n1);
  MF_CALL(mf_space_colors(c));
#pragma omp parallel for schedule(static)
  for (int i = 0; i < c->nlocal; i++) vset(yc, i, 0.0);
#pragma omp parallel
  {
    double acc[MF_MAX_N1 * MF_MAX_N1 * MF_MAX_N1], loc[MF_MAX_N1 * MF_MAX_N1 * MF_MAX_N1];
    double tmp[MF_MAX_N1 * MF_MAX_N1 * MF_MAX_N1], t1[MF_MAX_N1 * MF_MAX_N1 * MF_MAX_N1],
        t2[MF_MAX_N1 * MF_MAX_N1 * MF_MAX_N1];
    for (int col = 0; col < c->ncolors; col++) {
#pragma omp for schedule(static)
      for (int kk = c->color_off[col]; kk < c->color_off[col + 1]; kk++) {
        const int K = c->color_cells[kk];
        for (int comp = 0; comp < ncomp; comp++) {
          for (int k = 0; k < npcc; k++) acc[k] = 0.0;
          for (int j = tr->first[K]; j < tr->first[K + 1]; j++) {
            const int *nf = &f->cell_nodes[(size_t)j * npcf];
            for (int k = 0; k < npcf; k++) {
              const int i = nf[k] * ncomp + comp;
              loc[k] = (f->dof_owner[i] == j && f->dof_pos[i] == k) ? vget(wf, i) : 0.0;
            }
            cell_interpolate(tr, j, loc, tmp, t1, t2, 1, identity);
            for (int k = 0; k < npcc; k++) acc[k] += tmp[k];
          }
          mf_hanging_apply(c->dim, c->n1, c->face_code[K], c->hanging_P, acc, 1);
          const int *nc = &c->cell_nodes[(size_t)K * npcc];
          for (int k = 0; k < npcc; k++) {
            const int i = nc[k] * ncomp + comp;
            if (!c->bc[i]) vset(yc, i, vget(yc, i) + acc[k]);
          }
        }
      }
    }
  }
  return 0;
}

int mf_transfer_prolongate(mf_transfer tr, mf_vector coarse, mf_vector fine)
{
  MF_CHECK(tr, NULL, MF_ERR_NULL, "transfer is NULL");
  mf_context ctx = tr->fine->ctx;
  MF_CHECK(coarse && fine && coarse->space == tr->coarse && fine->space == tr->fine, ctx, MF_ERR_INCOMPATIBLE,
           "prolongation: vectors of other spaces than the transfer's");
  MF_CHECK(coarse->prec == tr->prec && fine->prec == tr->prec, ctx, MF_ERR_INCOMPATIBLE,
           "prolongation: vectors in %s and %s, the transfer in %s", mf_precision_name(coarse->prec),
           mf_precision_name(fine->prec), mf_precision_name(tr->prec));
  MF_CALL(coarse->ops.import(coarse));
  if (tr->prolongate_fn) MF_CALL(tr->prolongate_fn(tr, coarse, fine));
  else if (ctx->bk->transfer.prolongate) MF_CALL(ctx->bk->transfer.prolongate(tr, coarse, fine));
  else MF_CALL(prolongate_cpu(tr, coarse, fine));
  if (tr->count_inv) { /* several ranks computed a shared DoF: the mean of their (equal) values */
    MF_CALL(fine->ops.export_add(fine));
    MF_CALL(fine->ops.pmult(fine, fine, tr->count_inv));
  }
  return fine->ops.bc_zero(fine);
}

int mf_transfer_inject(mf_transfer tr, mf_vector fine, mf_vector coarse)
{
  MF_CHECK(tr, NULL, MF_ERR_NULL, "transfer is NULL");
  mf_context ctx = tr->fine->ctx;
  MF_CHECK(coarse && fine && coarse->space == tr->coarse && fine->space == tr->fine, ctx, MF_ERR_INCOMPATIBLE,
           "a state's restriction: vectors of other spaces than the transfer's");
  MF_CHECK(coarse->prec == MF_PRECISION_DOUBLE && fine->prec == MF_PRECISION_DOUBLE, ctx, MF_ERR_INCOMPATIBLE,
           "a state's restriction: double vectors only");
  MF_CHECK(tr->inject_fn, ctx, MF_ERR_UNSUPPORTED,
           "multigrid at a state: the state's restriction to the coarser levels is not made on %s spaces yet",
           tr->fine->fam->name);
  MF_CALL(mf_agree(ctx, fine->ops.import(fine)));
  return mf_agree(ctx, tr->inject_fn(tr, fine, coarse));
}

int mf_transfer_restrict(mf_transfer tr, mf_vector fine, mf_vector coarse)
{
  MF_CHECK(tr, NULL, MF_ERR_NULL, "transfer is NULL");
  mf_context ctx = tr->fine->ctx;
  MF_CHECK(coarse && fine && coarse->space == tr->coarse && fine->space == tr->fine, ctx, MF_ERR_INCOMPATIBLE,
           "restriction: vectors of other spaces than the transfer's");
  MF_CHECK(coarse->prec == tr->prec && fine->prec == tr->prec, ctx, MF_ERR_INCOMPATIBLE,
           "restriction: vectors in %s and %s, the transfer in %s", mf_precision_name(fine->prec),
           mf_precision_name(coarse->prec), mf_precision_name(tr->prec));
  mf_vector w = tr->work;
  MF_CALL(w->ops.copy(w, fine));
  MF_CALL(w->ops.bc_zero(w));
  if (tr->count_inv) MF_CALL(w->ops.pmult(w, w, tr->count_inv));
  MF_CALL(w->ops.import(w));
  if (tr->restrict_fn) MF_CALL(tr->restrict_fn(tr, w, coarse));
  else if (ctx->bk->transfer.restriction) MF_CALL(ctx->bk->transfer.restriction(tr, w, coarse));
  else MF_CALL(restrict_cpu(tr, w, coarse));
  return coarse->ops.export_add(coarse);
}
