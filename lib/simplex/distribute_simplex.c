/* distribute_simplex.c -- a simplex space on a coarse mesh (made or read) on several ranks; the meshes refined
 * from it are held in parts (parts_simplex.c: their spaces are distributed there). Every rank holds the whole
 * mesh and its partition (mesh->part: coordinate bisection or Scotch), numbers the
 * DoFs of the whole mesh as one rank does (dofs.c), and keeps what its own cells need:
 *   - its cells, in the mesh's order, as a mesh of their own (ss->local: their vertices renumbered in the
 *     order the cells use them, the boundary facets that belong to them with their tags);
 *   - its DoFs: those of its cells. A DoF belongs to the lowest rank that has a cell with it; the owned
 *     ones come first in the order of the whole mesh's numbering, then the ghosts by owner and then in
 *     that order (ss->l2g: the whole mesh's number of each);
 *   - the global numbering: rank r's owned DoFs are global_offset .. + nowned, in the same order;
 *   - the exchange (lib/space.c: import owner -> ghost, export-add back): with rank r it sends the owned
 *     DoFs that r's cells have and receives its ghosts owned by r, both in the whole mesh's order, so the
 *     two sides' lists match without a message.
 * Every rank computes the same owners from the same mesh; nothing is communicated. The whole mesh's
 * arrays (O(DoFs) on each rank) are freed at the end but for the mesh itself. */
#include "mf_simplex_space.h"

#include <limits.h>

/* (rank, DoF) pairs: sorted and unique (the DoF a whole-mesh number until the exchange is made) */
typedef mf_simplex_rank_dof pair;
static int pair_cmp(const void *a, const void *b)
{
  const pair *p = (const pair *)a, *q = (const pair *)b;
  if (p->r != q->r) return (p->r > q->r) - (p->r < q->r);
  return (p->l > q->l) - (p->l < q->l);
}
static int64_t pairs_unique(pair *p, int64_t n)
{
  if (n == 0) return 0;
  qsort(p, (size_t)n, sizeof *p, pair_cmp);
  int64_t k = 1;
  for (int64_t i = 1; i < n; i++)
    if (p[i].r != p[k - 1].r || p[i].l != p[k - 1].l) p[k++] = p[i];
  return k;
}

/* The local mesh: cells with part == rank, their vertices numbered by first use, the boundary facets of
 * those cells (the whole mesh's facets found among the faces of one local cell) with their tags. */
int mf_simplex_mesh_local(mf_context ctx, const mf_simplex_mesh *m, int rank, mf_simplex_mesh *lm, int **cells_out)
{
  const int dim = m->dim, nvc = dim + 1;
  int *vmap = NULL, *cells = NULL, nlc = 0;
  memset(lm, 0, sizeof *lm);
  for (int e = 0; e < m->ncells; e++) nlc += m->part[e] == rank;
  int ierr = MF_CALLOC(ctx, (size_t)m->nv + 1, &vmap);
  if (!ierr) ierr = MF_CALLOC(ctx, (size_t)nlc + 1, &cells);
  if (!ierr) ierr = MF_CALLOC(ctx, (size_t)nlc * nvc + 1, &lm->cells);
  int nv = 0;
  if (!ierr) {
    for (int v = 0; v < m->nv; v++) vmap[v] = -1;
    for (int e = 0, k = 0; e < m->ncells; e++) {
      if (m->part[e] != rank) continue;
      cells[k] = e;
      for (int a = 0; a < nvc; a++) {
        const int v = m->cells[(size_t)e * nvc + a];
        if (vmap[v] < 0) vmap[v] = nv++;
        lm->cells[(size_t)k * nvc + a] = vmap[v];
      }
      k++;
    }
    lm->dim = dim, lm->ncells = nlc, lm->nv = nv;
    ierr = MF_CALLOC(ctx, (size_t)nv * 3 + 1, &lm->coords);
  }
  if (!ierr)
    for (int v = 0; v < m->nv; v++)
      if (vmap[v] >= 0) memcpy(lm->coords + 3 * (size_t)vmap[v], m->coords + 3 * (size_t)v, 3 * sizeof(double));
  /* the boundary facets of the local cells */
  static const int tri[3][3] = {{1, 2, 0}, {0, 2, 0}, {0, 1, 0}};
  static const int tet[4][3] = {{1, 2, 3}, {0, 2, 3}, {0, 1, 3}, {0, 1, 2}};
  mf_simplex_entities B;
  int have_b = 0;
  if (!ierr) ierr = mf_simplex_entities_create(ctx, lm, dim, dim + 1, dim == 2 ? tri : tet, 1, &B);
  have_b = !ierr;
  int nf = 0;
  for (int pass = 0; pass < 2 && !ierr; pass++) {
    for (int t = 0; t < m->nfacets; t++) {
      int v[3], in = 1;
      for (int a = 0; a < dim; a++) {
        v[a] = vmap[m->facets[(size_t)t * dim + a]];
        in = in && v[a] >= 0;
      }
      if (!in || mf_simplex_entities_find(&B, dim, v, (uint64_t)lm->nv) < 0) continue;
      if (pass) {
        memcpy(lm->facets + (size_t)nf * dim, v, sizeof(int) * dim);
        lm->facet_tag[nf] = m->facet_tag[t];
      }
      nf++;
    }
    if (!pass) {
      ierr = MF_CALLOC(ctx, (size_t)nf * dim + 1, &lm->facets);
      if (!ierr) ierr = MF_CALLOC(ctx, (size_t)nf + 1, &lm->facet_tag);
      lm->nfacets = nf;
      nf = 0;
    }
  }
  if (have_b) mf_simplex_entities_free(&B);
  free(vmap);
  if (ierr) {
    mf_simplex_mesh_free(lm);
    free(cells);
    return ierr;
  }
  *cells_out = cells;
  return 0;
}

int mf_simplex_exchange_make(mf_context ctx, const mf_simplex_rank_dof *send, int64_t nsend,
                             const mf_simplex_rank_dof *recv, int64_t nrecv, int nc, mf_exchange *ex)
{
  int nn = 0; /* the neighbours: the ranks in either list, ascending */
  for (int64_t a = 0, b = 0; a < nrecv || b < nsend; nn++) {
    const int r = a < nrecv && (b >= nsend || recv[a].r <= send[b].r) ? recv[a].r : send[b].r;
    while (a < nrecv && recv[a].r == r) a++;
    while (b < nsend && send[b].r == r) b++;
  }
  ex->nneigh = nn;
  int ierr = MF_CALLOC(ctx, (size_t)nn + 1, &ex->rank);
  if (!ierr) ierr = MF_CALLOC(ctx, (size_t)nn + 1, &ex->send_off);
  if (!ierr) ierr = MF_CALLOC(ctx, (size_t)nn + 1, &ex->recv_off);
  if (!ierr) ierr = MF_CALLOC(ctx, (size_t)nsend * nc + 1, &ex->send_idx);
  if (!ierr) ierr = MF_CALLOC(ctx, (size_t)nrecv * nc + 1, &ex->recv_idx);
  const size_t nbuf = (size_t)(nsend > nrecv ? nsend : nrecv) * nc + 1;
  if (!ierr) ierr = MF_CALLOC(ctx, nbuf, &ex->send_buf);
  if (!ierr) ierr = MF_CALLOC(ctx, nbuf, &ex->recv_buf);
  if (!ierr) ierr = MF_CALLOC(ctx, 2 * (size_t)nn + 1, &ex->req);
  if (ierr) return ierr; /* what was allocated goes with the space (mf_exchange_free) */
  int i = 0, ns = 0, nr = 0;
  for (int64_t a = 0, b = 0; a < nrecv || b < nsend; i++) {
    const int r = a < nrecv && (b >= nsend || recv[a].r <= send[b].r) ? recv[a].r : send[b].r;
    ex->rank[i] = r, ex->send_off[i] = ns, ex->recv_off[i] = nr;
    for (; b < nsend && send[b].r == r; b++)
      for (int c = 0; c < nc; c++) ex->send_idx[ns++] = send[b].l * nc + c;
    for (; a < nrecv && recv[a].r == r; a++)
      for (int c = 0; c < nc; c++) ex->recv_idx[nr++] = recv[a].l * nc + c;
  }
  ex->send_off[nn] = ns, ex->recv_off[nn] = nr;
  return 0;
}

int mf_simplex_space_distribute(mf_space s, const mf_simplex_mesh *m)
{
  mf_context ctx = s->ctx;
  mf_simplex_space *ss = (mf_simplex_space *)s->fdata;
  const int rank = ctx->rank, size = ctx->size, N = ss->basis.nnodes, nc = s->ncomp, ng = ss->dofs.ndofs;
  const int *gcd = ss->dofs.cell_dofs;
  int *owner = NULL, *g2l = NULL, *lcells = NULL, *cnt = NULL, *l2g = NULL, *lcd = NULL;
  pair *ghost = NULL, *send = NULL;
  unsigned char *lbc = NULL;
  mf_exchange *ex = &s->ex;
  int ierr = mf_simplex_mesh_local(ctx, m, rank, &ss->local, &lcells);
  const int nlc = ss->local.ncells;
  if (!ierr) ierr = MF_CALLOC(ctx, (size_t)ng + 1, &owner);
  if (!ierr) ierr = MF_CALLOC(ctx, (size_t)ng + 1, &g2l);
  if (!ierr) ierr = MF_CALLOC(ctx, (size_t)size + 1, &cnt);
  if (!ierr) {
    for (int g = 0; g < ng; g++) owner[g] = INT_MAX, g2l[g] = -1;
    for (int e = 0; e < m->ncells; e++)
      for (int i = 0; i < N; i++) {
        const int g = gcd[(size_t)e * N + i];
        if (m->part[e] < owner[g]) owner[g] = m->part[e];
      }
    for (int g = 0; g < ng; g++) cnt[owner[g]]++;
  }
  /* the local DoFs: owned (whole-mesh order), then the ghosts by owner */
  int nown = 0, nloc = 0;
  int64_t ngh = 0, nsend = 0;
  if (!ierr) {
    for (int k = 0; k < nlc; k++)
      for (int i = 0; i < N; i++) g2l[gcd[(size_t)lcells[k] * N + i]] = 0; /* touched */
    for (int g = 0; g < ng; g++)
      if (g2l[g] == 0) ngh += owner[g] != rank;
    ierr = MF_CALLOC(ctx, (size_t)ngh + 1, &ghost);
  }
  if (!ierr) {
    int64_t k = 0;
    for (int g = 0; g < ng; g++)
      if (g2l[g] == 0 && owner[g] != rank) ghost[k].r = owner[g], ghost[k++].l = g;
    qsort(ghost, (size_t)ngh, sizeof *ghost, pair_cmp);
    for (int g = 0; g < ng; g++)
      if (g2l[g] == 0 && owner[g] == rank) nown++;
    nloc = nown + (int)ngh;
    ierr = MF_CALLOC(ctx, (size_t)nloc + 1, &l2g);
  }
  if (!ierr) {
    int k = 0;
    for (int g = 0; g < ng; g++)
      if (g2l[g] == 0 && owner[g] == rank) l2g[k] = g, g2l[g] = k++;
    for (int64_t j = 0; j < ngh; j++) l2g[k] = ghost[j].l, g2l[ghost[j].l] = k++;
    /* what this rank sends: its owned DoFs in the cells of other ranks */
    for (int e = 0; e < m->ncells; e++)
      if (m->part[e] != rank)
        for (int i = 0; i < N; i++) nsend += owner[gcd[(size_t)e * N + i]] == rank;
    ierr = MF_CALLOC(ctx, (size_t)nsend + 1, &send);
  }
  if (!ierr) {
    int64_t k = 0;
    for (int e = 0; e < m->ncells; e++)
      if (m->part[e] != rank)
        for (int i = 0; i < N; i++) {
          const int g = gcd[(size_t)e * N + i];
          if (owner[g] == rank) send[k].r = m->part[e], send[k++].l = g;
        }
    nsend = pairs_unique(send, nsend);
    ierr = MF_CALLOC(ctx, (size_t)nlc * N + 1, &lcd);
  }
  if (!ierr) ierr = MF_CALLOC(ctx, (size_t)nloc + 1, &lbc);
  if (!ierr) {
    for (int k = 0; k < nlc; k++)
      for (int i = 0; i < N; i++) lcd[(size_t)k * N + i] = g2l[gcd[(size_t)lcells[k] * N + i]];
    for (int j = 0; j < nloc; j++) lbc[j] = ss->dofs.bc[l2g[j]];
    /* the exchange in local numbers (ghost and send lists: whole-mesh DoFs until here) */
    for (int64_t j = 0; j < ngh; j++) ghost[j].l = g2l[ghost[j].l];
    for (int64_t j = 0; j < nsend; j++) send[j].l = g2l[send[j].l];
    ierr = mf_simplex_exchange_make(ctx, send, nsend, ghost, ngh, nc, ex);
  }
  if (!ierr) { /* the sizes and the global numbering */
    int64_t off = 0, tot = 0;
    for (int r = 0; r < size; r++) {
      if (r < rank) off += cnt[r];
      tot += cnt[r];
    }
    s->ncells = nlc;
    s->nowned = nown * nc;
    s->nlocal = nloc * nc;
    s->nglobal = tot * nc;
    s->global_offset = off * nc;
    ss->l2g = l2g;
    l2g = NULL;
    mf_simplex_dofs_free(&ss->dofs); /* the whole mesh's, replaced by the local ones */
    ss->dofs.ndofs = nloc, ss->dofs.nnodes = N;
    ss->dofs.cell_dofs = lcd, ss->dofs.bc = lbc;
    lcd = NULL, lbc = NULL;
  }
  free(owner), free(g2l), free(lcells), free(cnt), free(l2g), free(lcd), free(ghost), free(send), free(lbc);
  return ierr;
}
