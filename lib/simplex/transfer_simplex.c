/* transfer_simplex.c -- multigrid's transfers between simplex spaces (the family's transfer_create; the
 * generic steps are lib/mg/transfer.c's): a lower degree on the same mesh (p-transfer) or the same degree
 * on the mesh that the fine one refines (h-transfer: mf_mesh_refine, child k of coarse cell K is fine cell
 * 2^dim K + k). P is the interpolation of the coarse space at the fine nodes: each fine node, in the first
 * fine cell that has it, takes the coarse cell's basis at its coordinates in that cell's reference
 * frame. P is kept as a sparse matrix (fine nodes x coarse nodes, applied per component), with its
 * transpose for the restriction, both made once; Dirichlet entries are zero in P's input and output and
 * in R = P^T's. On a backend with simplex kernels (cuda) both live on the device and are applied there
 * (ctx->bk->simplex: sparse_apply): made there from the plan of mf_simplex.h (transfer_build: the cell nodes
 * and the weights' table or geometry copied) where the backend can (a lower degree on the same mesh, or a
 * refined mesh with a P1 coarse space: every transfer of the simplex hierarchy), else made here and copied
 * (sparse_create), the host's copies then freed. On several ranks the
 * spaces' own cells are used (a fine cell's parent is on its rank): P has a row for every local fine node,
 * owned or ghost (the coarse ghosts imported first: every rank computes its fine values whole, no exchange
 * after), P^T the rows of the owned fine nodes only, so that the export-add of the generic step
 * (lib/mg/transfer.c) counts each fine node once. */
#include "mf_simplex_backend.h"
#include "mf_simplex_space.h"
#include "mg/mf_mg.h"

#include <math.h>

typedef struct {
  int64_t *rp, *rt; /* P's rows (fine nodes), P^T's rows (coarse nodes) */
  int *cp, *ct;     /* their columns */
  double *vp, *vt;  /* their values */
  struct mf_simplex_cuda_sparse_s *dp, *dt; /* P, P^T on the device (NULL: on the host) */
  int64_t *ri; /* the injection (a state's restriction, made at its first use): coarse nodes x fine nodes, */
  int *ci;     /* the fine basis at each coarse node (one entry 1 where the node is a fine one) */
  double *vi;
  struct mf_simplex_cuda_sparse_s *di; /* the injection on the device (a device backend; made at its first use) */
  int di_host;                         /* 1: no room for it there, the injection on the host */
  const mf_simplex_backend_ops *sx;
} sx_transfer;

static void host_free(sx_transfer *t)
{
  free(t->rp), free(t->rt), free(t->cp), free(t->ct), free(t->vp), free(t->vt);
  t->rp = t->rt = NULL, t->cp = t->ct = NULL, t->vp = t->vt = NULL;
}

static void sx_free(mf_transfer tr)
{
  sx_transfer *t = (sx_transfer *)tr->fdata;
  if (!t) return;
  host_free(t);
  free(t->ri), free(t->ci), free(t->vi);
  if (t->dp) t->sx->sparse_free(&t->dp);
  if (t->dt) t->sx->sparse_free(&t->dt);
  if (t->di) t->sx->sparse_free(&t->di);
  free(t);
  tr->fdata = NULL;
}

/* y = A x per component, A a CSR matrix of nrows rows: the Dirichlet entries of space in read as zero, those of
 * space out written as zero (the host's twin of simplex_transfer.cu's kernel, the same sums in the same order).
 * The vectors' values in double (x, y) or in float (xf, yf: the float V-cycle, the sums in double). */
static void sparse_apply(int nrows, const int64_t *rp, const int *cols, const double *vals, const mf_space in,
                         const mf_space out, const double *x, double *y, const float *xf, float *yf)
{
  const int nc = out->ncomp;
#pragma omp parallel for schedule(static)
  for (int i = 0; i < nrows; i++)
    for (int k = 0; k < nc; k++) {
      double s = 0.0;
      for (int64_t e = rp[i]; e < rp[i + 1]; e++) {
        const size_t j = (size_t)cols[e] * nc + k;
        if (!in->bc[j]) s += vals[e] * (x ? x[j] : (double)xf[j]);
      }
      const size_t r = (size_t)i * nc + k;
      if (y) y[r] = out->bc[r] ? 0.0 : s;
      else yf[r] = out->bc[r] ? 0.0f : (float)s;
    }
}

/* y = A x with A on the device (dA) or the host (rp, cols, vals), in the vectors' precision */
static int apply_matrix(const sx_transfer *t, struct mf_simplex_cuda_sparse_s *dA, int nrows, const int64_t *rp,
                        const int *cols, const double *vals, const mf_space in, const mf_space out, mf_vector x,
                        mf_vector y)
{
  const int single = x->prec == MF_PRECISION_FLOAT;
  if (dA && single) return t->sx->sparse_apply_single(dA, in, out, x->sdata, y->sdata);
  if (dA) return t->sx->sparse_apply(dA, in, out, x->data, y->data);
  sparse_apply(nrows, rp, cols, vals, in, out, single ? NULL : x->data, single ? NULL : y->data, x->sdata, y->sdata);
  return 0;
}

/* fine = P coarse, per component; Dirichlet entries zero in and out */
static int sx_prolongate(mf_transfer tr, mf_vector coarse, mf_vector fine)
{
  const sx_transfer *t = (const sx_transfer *)tr->fdata;
  const mf_space c = tr->coarse, f = tr->fine;
  return apply_matrix(t, t->dp, f->nlocal / f->ncomp, t->rp, t->cp, t->vp, c, f, coarse, fine);
}

/* coarse = P^T fine, per component (fine's Dirichlet entries are zero already: the generic step) */
static int sx_restrict(mf_transfer tr, mf_vector fine, mf_vector coarse)
{
  const sx_transfer *t = (const sx_transfer *)tr->fdata;
  const mf_space c = tr->coarse, f = tr->fine;
  return apply_matrix(t, t->dt, c->nlocal / c->ncomp, t->rt, t->ct, t->vt, f, c, fine, coarse);
}

/* the vertices of cell e: X[a dim + k] */
static void vertices(const mf_simplex_mesh *m, int e, double *X)
{
  const int dim = m->dim;
  for (int a = 0; a <= dim; a++)
    for (int k = 0; k < dim; k++) X[a * dim + k] = m->coords[3 * (size_t)m->cells[(size_t)e * (dim + 1) + a] + k];
}

/* kind 0 (the same mesh): the coarse basis at the fine reference nodes, table[i Nc + j] (Nf x Nc) */
static int p_table(mf_context ctx, const mf_simplex_basis *bc, const mf_simplex_basis *bf, double **table)
{
  const int Nf = bf->nnodes, Nc = bc->nnodes;
  MF_CALL(MF_CALLOC(ctx, (size_t)Nf * Nc, table));
  for (int i = 0; i < Nf; i++) mf_simplex_basis_eval(bc, bf->nodes + (size_t)i * bf->dim, *table + (size_t)i * Nc, NULL);
  return 0;
}

static int build(mf_transfer tr, sx_transfer *t)
{
  const mf_space c = tr->coarse, f = tr->fine;
  mf_context ctx = f->ctx;
  const mf_simplex_mesh *mc = mf_simplex_space_mesh(c), *mfm = mf_simplex_space_mesh(f);
  const mf_simplex_basis *bc = &((const mf_simplex_space *)c->fdata)->basis,
                         *bf = &((const mf_simplex_space *)f->fdata)->basis;
  const int dim = f->dim, Nc = bc->nnodes, Nf = bf->nnodes, nch = dim == 2 ? 4 : 8;
  const int nf = f->nlocal / f->ncomp, ncn = c->nlocal / c->ncomp, nfo = f->nowned / f->ncomp;
  int *done = NULL;
  double *w = NULL;
  int ierr = MF_CALLOC(ctx, (size_t)nf + 1, &done);
  if (!ierr) ierr = MF_CALLOC(ctx, (size_t)nf * Nc + 1, &w); /* row i's weights, dense in the coarse cell */
  int *owner = NULL, *fpos = NULL;
  if (!ierr) ierr = MF_CALLOC(ctx, (size_t)nf + 1, &owner); /* the coarse cell of row i */
  if (!ierr) ierr = MF_CALLOC(ctx, (size_t)nf + 1, &fpos);  /* its node in its first fine cell */
  /* each fine node's first fine cell (the lowest number e, kept in done as ncells - e, 0 for none: an atomic
   * maximum, so the threads do not change it), its node there and its coarse cell, then the weights node by
   * node */
  if (!ierr) {
#pragma omp parallel for schedule(static)
    for (int e = 0; e < mfm->ncells; e++)
      for (int i = 0; i < Nf; i++) mf_atomic_max_int(&done[f->cell_nodes[(size_t)e * Nf + i]], mfm->ncells - e);
#pragma omp parallel for schedule(static)
    for (int e = 0; e < mfm->ncells; e++) {
      const int *cdf = f->cell_nodes + (size_t)e * Nf;
      for (int i = 0; i < Nf; i++)
        if (done[cdf[i]] == mfm->ncells - e) fpos[cdf[i]] = i, owner[cdf[i]] = tr->kind == 0 ? e : e / nch;
    }
  }
  /* on the same mesh (a lower degree) fine node i of a cell sits at reference node i of the same coarse
   * cell: its weights are the coarse basis there, one row per reference node (no geometry) */
  double *table = NULL;
  if (!ierr && tr->kind == 0) ierr = p_table(ctx, bc, bf, &table);
#pragma omp parallel for schedule(static)
  for (int n = 0; n < (ierr ? 0 : nf); n++) {
    if (!done[n]) continue;
    const int e = mfm->ncells - done[n], K = owner[n], i = fpos[n];
    if (table) {
      memcpy(w + (size_t)n * Nc, table + (size_t)i * Nc, sizeof(double) * Nc);
      continue;
    }
    double Xf[12], Xc[12], Ji[3][3], x[3], xi[3];
    vertices(mfm, e, Xf);
    vertices(mc, K, Xc);
    mf_simplex_affine(dim, Xc, Ji, NULL);
    for (int k = 0; k < dim; k++) { /* the node's point, then its coordinates in K's reference frame */
      x[k] = Xf[k];
      for (int l = 0; l < dim; l++) x[k] += (Xf[(l + 1) * dim + k] - Xf[k]) * bf->nodes[i * dim + l];
    }
    for (int l = 0; l < dim; l++) {
      xi[l] = 0.0;
      for (int k = 0; k < dim; k++) xi[l] += Ji[l][k] * (x[k] - Xc[k]);
    }
    mf_simplex_basis_eval(bc, xi, w + (size_t)n * Nc, NULL);
  }
  /* P's rows: the weights above 1e-14 (the basis vanishes at most nodes of a coarse cell) */
  int64_t nnz = 0;
  if (!ierr) ierr = MF_CALLOC(ctx, (size_t)nf + 1, &t->rp);
  if (!ierr) {
#pragma omp parallel for schedule(static)
    for (int n = 0; n < nf; n++) {
      int64_t k = 0;
      for (int j = 0; j < Nc; j++) k += fabs(w[(size_t)n * Nc + j]) > 1e-14;
      t->rp[n + 1] = k;
    }
    for (int n = 0; n < nf; n++) t->rp[n + 1] += t->rp[n];
    nnz = t->rp[nf];
    ierr = MF_CALLOC(ctx, (size_t)nnz + 1, &t->cp);
  }
  if (!ierr) ierr = MF_CALLOC(ctx, (size_t)nnz + 1, &t->vp);
  if (!ierr) ierr = MF_CALLOC(ctx, (size_t)ncn + 2, &t->rt);
  if (!ierr) ierr = MF_CALLOC(ctx, (size_t)nnz + 1, &t->ct);
  if (!ierr) ierr = MF_CALLOC(ctx, (size_t)nnz + 1, &t->vt);
  for (int n = 0; !ierr && n < nf; n++)
    if (!done[n])
      ierr = mf_error_set(ctx, MF_ERR_INCOMPATIBLE, __FILE__, __LINE__, __func__,
                          "multigrid transfer: fine node %d is in no cell", n);
  if (!ierr) { /* each row its own range (threads), then the transpose's row sizes (atomic counts) */
#pragma omp parallel for schedule(static)
    for (int n = 0; n < nf; n++) {
      int64_t e = t->rp[n];
      const int *cdc = c->cell_nodes + (size_t)owner[n] * Nc;
      for (int j = 0; j < Nc; j++)
        if (fabs(w[(size_t)n * Nc + j]) > 1e-14) {
          t->cp[e] = cdc[j];
          t->vp[e++] = w[(size_t)n * Nc + j];
          if (n < nfo) {
#pragma omp atomic update
            t->rt[cdc[j] + 1]++;
          }
        }
    }
  }
  if (!ierr) { /* the transpose, its rows in fine order: the owned fine rows (all of them on one rank) in nb
                 consecutive blocks, each block's entries per coarse row counted, then placed after those of
                 the blocks before it (the order of the one-thread loop, whatever the threads) */
    for (int j = 0; j < ncn; j++) t->rt[j + 1] += t->rt[j];
    int nb = mf_max_threads();
    while (nb > 1 && (double)nb * ncn * sizeof(int64_t) > 256e6) nb /= 2; /* the blocks' counters: at most 256 MB */
    if (nb > nfo) nb = nfo > 0 ? nfo : 1;
    int64_t *pos = NULL;
    ierr = MF_CALLOC(ctx, (size_t)nb * ncn + 1, &pos);
    if (!ierr) {
#pragma omp parallel for schedule(static, 1)
      for (int b = 0; b < nb; b++) {
        const int n0 = (int)((int64_t)nfo * b / nb), n1 = (int)((int64_t)nfo * (b + 1) / nb);
        int64_t *cnt = pos + (size_t)b * ncn;
        for (int64_t e = t->rp[n0]; e < t->rp[n1]; e++) cnt[t->cp[e]]++;
      }
#pragma omp parallel for schedule(static)
      for (int j = 0; j < ncn; j++) { /* each block's first place in coarse row j */
        int64_t at = t->rt[j];
        for (int b = 0; b < nb; b++) {
          const int64_t k = pos[(size_t)b * ncn + j];
          pos[(size_t)b * ncn + j] = at;
          at += k;
        }
      }
#pragma omp parallel for schedule(static, 1)
      for (int b = 0; b < nb; b++) {
        const int n0 = (int)((int64_t)nfo * b / nb), n1 = (int)((int64_t)nfo * (b + 1) / nb);
        int64_t *at = pos + (size_t)b * ncn;
        for (int n = n0; n < n1; n++)
          for (int64_t e = t->rp[n]; e < t->rp[n + 1]; e++) {
            const int64_t q = at[t->cp[e]]++;
            t->ct[q] = n;
            t->vt[q] = t->vp[e];
          }
      }
    }
    free(pos);
  }
  free(table);
  free(done);
  free(w);
  free(owner);
  free(fpos);
  return ierr;
}

/* The injection's rows: each local coarse node, in the first local coarse cell that has it, at its point x; the fine
 * cell there (p: the same cell; h: the first child whose barycentric coordinates of x are all >= -1e-10) and the fine
 * basis at x in that cell's frame, its entries above 1e-14 (one entry 1 where the spaces are nested: P_p -> P_q with
 * q dividing p, and every h-transfer of the hierarchy). */
static int build_inject(mf_transfer tr, sx_transfer *t)
{
  const mf_space c = tr->coarse, f = tr->fine;
  mf_context ctx = f->ctx;
  const mf_simplex_mesh *mc = mf_simplex_space_mesh(c), *mfm = mf_simplex_space_mesh(f);
  const mf_simplex_basis *bc = &((const mf_simplex_space *)c->fdata)->basis,
                         *bf = &((const mf_simplex_space *)f->fdata)->basis;
  const int dim = f->dim, Nc = bc->nnodes, Nf = bf->nnodes, nch = dim == 2 ? 4 : 8, ncn = c->nlocal / c->ncomp;
  int *first = NULL;
  double *w = NULL;
  int *wcell = NULL;
  int ierr = MF_CALLOC(ctx, (size_t)ncn + 1, &first);
  if (!ierr) ierr = MF_CALLOC(ctx, (size_t)ncn * Nf + 1, &w);
  if (!ierr) ierr = MF_CALLOC(ctx, (size_t)ncn + 1, &wcell);
  if (!ierr) {
#pragma omp parallel for schedule(static)
    for (int K = 0; K < mc->ncells; K++)
      for (int a = 0; a < Nc; a++) mf_atomic_max_int(&first[c->cell_nodes[(size_t)K * Nc + a]], mc->ncells - K);
#pragma omp parallel for schedule(static)
    for (int K = 0; K < mc->ncells; K++) {
      double Xc[12], Xf[12], Ji[3][3], x[3], xi[3];
      vertices(mc, K, Xc);
      for (int a = 0; a < Nc; a++) {
        const int n = c->cell_nodes[(size_t)K * Nc + a];
        if (first[n] != mc->ncells - K) continue;
        const double *ref = bc->nodes + (size_t)a * dim;
        int e = K;
        if (tr->kind == 0) memcpy(xi, ref, sizeof(double) * dim);
        else {
          for (int k = 0; k < dim; k++) {
            x[k] = Xc[k];
            for (int l = 0; l < dim; l++) x[k] += (Xc[(l + 1) * dim + k] - Xc[k]) * ref[l];
          }
          e = -1;
          for (int ch = 0; ch < nch && e < 0; ch++) {
            vertices(mfm, nch * K + ch, Xf);
            mf_simplex_affine(dim, Xf, Ji, NULL);
            double s = 0.0, lmin = 1.0;
            for (int l = 0; l < dim; l++) {
              xi[l] = 0.0;
              for (int k = 0; k < dim; k++) xi[l] += Ji[l][k] * (x[k] - Xf[k]);
              s += xi[l], lmin = fmin(lmin, xi[l]);
            }
            if (fmin(lmin, 1.0 - s) >= -1e-10) e = nch * K + ch;
          }
        }
        wcell[n] = e;
        if (e >= 0) mf_simplex_basis_eval(bf, xi, w + (size_t)n * Nf, NULL);
      }
    }
  }
  for (int n = 0; !ierr && n < ncn; n++)
    if (!first[n] || wcell[n] < 0)
      ierr = mf_error_set(ctx, MF_ERR_INCOMPATIBLE, __FILE__, __LINE__, __func__,
                          "a state's restriction: coarse node %d is in no %s cell", n, first[n] ? "fine" : "coarse");
  if (!ierr) ierr = MF_CALLOC(ctx, (size_t)ncn + 2, &t->ri);
  int64_t nnz = 0;
  if (!ierr) {
    for (int n = 0; n < ncn; n++) {
      int64_t k = 0;
      for (int j = 0; j < Nf; j++) k += fabs(w[(size_t)n * Nf + j]) > 1e-14;
      t->ri[n + 1] = t->ri[n] + k;
    }
    nnz = t->ri[ncn];
    ierr = MF_CALLOC(ctx, (size_t)nnz + 1, &t->ci);
  }
  if (!ierr) ierr = MF_CALLOC(ctx, (size_t)nnz + 1, &t->vi);
  for (int n = 0; !ierr && n < ncn; n++) {
    int64_t q = t->ri[n];
    const int *cdf = f->cell_nodes + (size_t)wcell[n] * Nf;
    for (int j = 0; j < Nf; j++)
      if (fabs(w[(size_t)n * Nf + j]) > 1e-14) t->ci[q] = cdf[j], t->vi[q++] = w[(size_t)n * Nf + j];
  }
  if (ierr) {
    free(t->ri), free(t->ci), free(t->vi);
    t->ri = NULL, t->ci = NULL, t->vi = NULL;
  }
  free(first), free(w), free(wcell);
  return ierr;
}

/* coarse = the fine function at the coarse nodes (every local coarse entry, the Dirichlet ones included): on a
 * device backend by its sparse product without the Dirichlet masks (the same sums in the same order as the host's
 * loop below, the twin), else on the host */
static int sx_inject(mf_transfer tr, mf_vector fine, mf_vector coarse)
{
  sx_transfer *t = (sx_transfer *)tr->fdata;
  if (!t->ri) MF_CALL(build_inject(tr, t));
  const int nc = tr->fine->ncomp, ncn = tr->coarse->nlocal / nc;
  if (!t->di && !t->di_host && t->sx && t->sx->sparse_create && tr->fine->ctx->backend != MF_BACKEND_CPU) {
    const int e = t->sx->sparse_create(tr->fine->ctx, ncn, t->ri, t->ci, t->vi, &t->di);
    if (e == MF_ERR_MEMORY) t->di_host = 1; /* no room on the device: on the host, as below */
    else if (e) return e;
  }
  if (t->di) return t->sx->sparse_apply(t->di, NULL, tr->coarse, fine->data, coarse->data); /* in NULL: no masks */
  const double *fv = NULL;
  double *cv = NULL;
  MF_CALL(mf_vector_get_array_read(fine, MF_MEM_HOST, &fv));
  int ierr = mf_vector_get_array(coarse, MF_MEM_HOST, &cv);
  if (!ierr) {
#pragma omp parallel for schedule(static)
    for (int n = 0; n < ncn; n++)
      for (int k = 0; k < nc; k++) {
        double s = 0.0;
        for (int64_t q = t->ri[n]; q < t->ri[n + 1]; q++) s += t->vi[q] * fv[(size_t)t->ci[q] * nc + k];
        cv[(size_t)n * nc + k] = s;
      }
    ierr = mf_vector_restore_array(coarse, &cv);
  }
  const int ierr2 = mf_vector_restore_array_read(fine, &fv);
  return ierr ? ierr : ierr2;
}

/* P and P^T made on the device from the plan (the backend's transfer_build, the same matrices as build's) */
static int build_device(mf_transfer tr, sx_transfer *t)
{
  const mf_space c = tr->coarse, f = tr->fine;
  const mf_simplex_mesh *mc = mf_simplex_space_mesh(c), *mfm = mf_simplex_space_mesh(f);
  const mf_simplex_basis *bc = &((const mf_simplex_space *)c->fdata)->basis,
                         *bf = &((const mf_simplex_space *)f->fdata)->basis;
  mf_simplex_transfer_plan p = {.kind = tr->kind, .dim = f->dim, .Nf = bf->nnodes, .Nc = bc->nnodes,
                                .nch = f->dim == 2 ? 4 : 8, .nf = f->nlocal / f->ncomp, .ncn = c->nlocal / c->ncomp,
                                .nfo = f->nowned / f->ncomp, .ncells_f = mfm->ncells, .ncells_c = mc->ncells,
                                .nodes_f = f->cell_nodes, .nodes_c = c->cell_nodes, .nv_f = mfm->nv, .nv_c = mc->nv,
                                .cells_f = mfm->cells, .cells_c = mc->cells, .coords_f = mfm->coords,
                                .coords_c = mc->coords, .xi_f = bf->nodes};
  double *table = NULL;
  if (tr->kind == 0) MF_CALL(p_table(f->ctx, bc, bf, &table));
  p.table = table;
  const int ierr = t->sx->transfer_build(f->ctx, &p, &t->dp, &t->dt);
  free(table);
  return ierr;
}

int mf_simplex_transfer_create(mf_space coarse, mf_space fine, mf_precision prec, mf_transfer *tr)
{
  MF_CHECK(coarse && fine, NULL, MF_ERR_NULL, "space is NULL");
  mf_context ctx = fine->ctx;
  *tr = NULL;
  const mf_simplex_backend_ops *sx = ctx->bk->simplex;
  MF_CHECK(ctx->backend == MF_BACKEND_CPU || (sx && sx->sparse_create), ctx, MF_ERR_UNSUPPORTED,
           "multigrid on simplices: the %s backend has no transfers for them", mf_context_backend(ctx));
  MF_CHECK(prec == MF_PRECISION_DOUBLE || prec == MF_PRECISION_FLOAT, ctx, MF_ERR_ARGUMENT,
           "precision %d unknown (MF_PRECISION_DOUBLE or MF_PRECISION_FLOAT)", (int)prec);
  MF_CHECK(prec == MF_PRECISION_DOUBLE || !sx || sx->sparse_apply_single, ctx, MF_ERR_UNSUPPORTED,
           "multigrid on simplices: the %s backend has no float transfers", mf_context_backend(ctx));
  MF_CHECK(coarse->ncomp == fine->ncomp && coarse->dim == fine->dim, ctx, MF_ERR_INCOMPATIBLE,
           "multigrid transfer between spaces of different components or dimensions");
  const int pkind = coarse->mesh == fine->mesh;
  MF_CHECK(pkind ? coarse->degree <= fine->degree : fine->mesh->coarser == coarse->mesh, ctx, MF_ERR_INCOMPATIBLE,
           "multigrid transfer: %s", pkind ? "the coarse degree above the fine one" : "the fine mesh does not refine the coarse one");
  mf_transfer t = NULL;
  MF_CALL(MF_CALLOC(ctx, 1, &t));
  t->coarse = coarse, t->fine = fine, t->kind = pkind ? 0 : 1, t->prec = prec;
  t->prolongate_fn = sx_prolongate, t->restrict_fn = sx_restrict, t->inject_fn = sx_inject, t->free_fn = sx_free;
  sx_transfer *d = NULL;
  int ierr = MF_CALLOC(ctx, 1, &d);
  t->fdata = d;
  if (d) d->sx = sx;
  int device = !ierr && sx && sx->transfer_build && (pkind || coarse->degree == 1);
  if (device) ierr = build_device(t, d);
  if (device && (ierr == MF_ERR_MEMORY || ierr == MF_ERR_UNSUPPORTED)) /* the device's limits: made here */
    device = 0, ierr = 0;
  if (!ierr && !device) ierr = build(t, d);
  if (!ierr && sx && !d->dp) { /* made on the host: copied, the host's copies not needed any more */
    const int nf = fine->nlocal / fine->ncomp, ncn = coarse->nlocal / coarse->ncomp;
    ierr = sx->sparse_create(ctx, nf, d->rp, d->cp, d->vp, &d->dp);
    if (!ierr) ierr = sx->sparse_create(ctx, ncn, d->rt, d->ct, d->vt, &d->dt);
    if (!ierr) host_free(d);
  }
  if (!ierr) ierr = mf_vector_create_prec(fine, prec, &t->work);
  if (ierr) {
    mf_transfer_destroy(&t);
    return ierr;
  }
  *tr = t;
  return 0;
}
