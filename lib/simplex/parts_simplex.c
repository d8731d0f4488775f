/* parts_simplex.c -- simplex meshes held in parts on several ranks. A mesh read or made on several ranks is
 * whole on every rank with its partition (partition_simplex.c: the coarse mesh); mf_mesh_refine of such a mesh
 * refines on each rank its own cells only (the local mesh of distribute_simplex.c, refined by refine.c), and
 * so on for every further level: a refined mesh holds this rank's cells, their vertices and boundary facets,
 * and a counted reference to the coarse mesh (mf_simplex_root) that every rank keeps whole.
 *
 * What makes the parts agree without a message: every point of a uniform refinement lies on the lattice of
 * its coarse cell (barycentric coordinates in multiples of 2^-level), and so does every P_p node
 * (multiples of 1/(p 2^level)). Each cell keeps its coarse cell (anc) and its corners' lattice coordinates
 * there (lat); a node's coordinates then name the smallest coarse entity that holds it (a vertex, edge, face
 * or the cell's interior) and its place on that entity, counted from the entity's vertices sorted by their
 * coarse numbers: the node's key (the same on every rank that has the node). The ranks that hold a node are
 * those whose coarse cells hold its entity (made once per coarse mesh), its owner the lowest of them, as on
 * the whole mesh (distribute_simplex.c); a node is on a Dirichlet boundary when its entity lies on a coarse
 * boundary facet of a chosen tag, which is where the whole mesh's numbering puts it. The exchange lists of
 * two ranks are their shared nodes in the order of their keys. */
#include "mf_simplex_space.h"

#include <limits.h>
#include <math.h>

static const int tri_edges[3][3] = {{0, 1, 0}, {0, 2, 0}, {1, 2, 0}};
static const int tet_edges[6][3] = {{0, 1, 0}, {0, 2, 0}, {0, 3, 0}, {1, 2, 0}, {1, 3, 0}, {2, 3, 0}};
static const int tet_faces[4][3] = {{0, 1, 2}, {0, 1, 3}, {0, 2, 3}, {1, 2, 3}};

/* the index of the entity of dimension t (0, 1, 2) with the coarse vertices v (t + 1 of them, any order) */
static int64_t entity(const mf_simplex_root *R, int t, const int *v)
{
  return t == 0 ? v[0] : mf_simplex_entities_find(&R->E[t - 1], t + 1, v, (uint64_t)R->m.nv);
}

/* sort a few ints ascending */
static void sort_small(int *v, int n)
{
  for (int i = 1; i < n; i++)
    for (int j = i; j > 0 && v[j - 1] > v[j]; j--) {
      const int s = v[j];
      v[j] = v[j - 1], v[j - 1] = s;
    }
}

/* CSR lists: pass 0 counts into off (n + 1), pass 1 fills; then each list sorted and made unique (off
 * rewritten, the lists packed) */
static void csr_unique(int64_t n, int64_t *off, int *val)
{
  int64_t k = 0;
  for (int64_t i = 0; i < n; i++) {
    const int64_t a = off[i], b = off[i + 1];
    sort_small(val + a, (int)(b - a));
    off[i] = k;
    for (int64_t j = a; j < b; j++)
      if (j == a || val[j] != val[j - 1]) val[k++] = val[j];
  }
  off[n] = k;
}

/* the lists of ranks (what = 0: each cell's rank onto its sub-entities) or of tags (1: each boundary facet's
 * tag onto its sub-entities) of the entities of dimension t */
static int entity_lists(mf_context ctx, mf_simplex_root *R, int t, int what, int64_t **off_out, int **val_out)
{
  const mf_simplex_mesh *m = &R->m;
  const int dim = m->dim, nvc = dim + 1, nit = what ? m->nfacets : m->ncells, nv = what ? dim : nvc;
  const int nsub = t == 0 ? nv : t == 1 ? (nv == 2 ? 1 : nv == 3 ? 3 : 6) : (nv == 3 ? 1 : 4);
  const int(*sub)[3] = t == 1 ? (nv == 3 ? tri_edges : tet_edges) : tet_faces;
  int64_t *off = NULL;
  int *val = NULL;
  MF_CALL(MF_CALLOC(ctx, (size_t)R->n[t] + 1, &off));
  int ierr = MF_CALLOC(ctx, (size_t)nit * nsub + 1, &val);
  for (int pass = 0; pass < 2 && !ierr; pass++) {
    for (int i = 0; i < nit; i++) {
      const int *v = what ? m->facets + (size_t)i * dim : m->cells + (size_t)i * nvc;
      const int x = what ? m->facet_tag[i] : m->part[i];
      for (int s = 0; s < nsub; s++) {
        int w[3];
        if (t == 0) w[0] = v[s];
        else
          for (int a = 0; a <= t; a++) w[a] = v[(nv == 2 && t == 1) ? a : (t == 2 && nv == 3) ? a : sub[s][a]];
        const int64_t k = entity(R, t, w);
        if (k < 0) continue; /* not among the cells' (cannot happen for a conforming mesh) */
        if (pass == 0) off[k + 1]++;
        else val[off[k]++] = x;
      }
    }
    if (pass == 0)
      for (int64_t k = 0; k < R->n[t]; k++) off[k + 1] += off[k];
    else
      for (int64_t k = R->n[t]; k > 0; k--) off[k] = off[k - 1]; /* back to the starts */
    if (pass == 1) off[0] = 0;
  }
  if (!ierr) csr_unique(R->n[t], off, val);
  if (ierr) free(off), free(val), off = NULL, val = NULL;
  *off_out = off, *val_out = val;
  return ierr;
}

/* The root of a whole mesh with its partition: a copy of it, its entities and their lists */
static int root_create(mf_context ctx, const mf_simplex_mesh *m, mf_simplex_root **out)
{
  mf_simplex_root *R = NULL;
  MF_CALL(MF_CALLOC(ctx, 1, &R));
  R->refs = 1;
  const int dim = m->dim, nvc = dim + 1;
  mf_simplex_mesh *c = &R->m;
  c->dim = dim, c->nv = m->nv, c->ncells = m->ncells, c->nfacets = m->nfacets;
  int ierr = MF_CALLOC(ctx, (size_t)m->nv * 3 + 1, &c->coords);
  if (!ierr) ierr = MF_CALLOC(ctx, (size_t)m->ncells * nvc + 1, &c->cells);
  if (!ierr) ierr = MF_CALLOC(ctx, (size_t)m->nfacets * dim + 1, &c->facets);
  if (!ierr) ierr = MF_CALLOC(ctx, (size_t)m->nfacets + 1, &c->facet_tag);
  if (!ierr) ierr = MF_CALLOC(ctx, (size_t)m->ncells + 1, &c->part);
  if (!ierr) {
    memcpy(c->coords, m->coords, sizeof(double) * 3 * (size_t)m->nv);
    memcpy(c->cells, m->cells, sizeof(int) * (size_t)m->ncells * nvc);
    memcpy(c->facets, m->facets, sizeof(int) * (size_t)m->nfacets * dim);
    memcpy(c->facet_tag, m->facet_tag, sizeof(int) * (size_t)m->nfacets);
    memcpy(c->part, m->part, sizeof(int) * (size_t)m->ncells);
    ierr = mf_simplex_entities_create(ctx, c, 2, dim == 2 ? 3 : 6, dim == 2 ? tri_edges : tet_edges, 0, &R->E[0]);
  }
  if (!ierr && dim == 3) ierr = mf_simplex_entities_create(ctx, c, 3, 4, tet_faces, 0, &R->E[1]);
  if (!ierr) {
    R->n[0] = m->nv, R->n[1] = R->E[0].n, R->n[2] = dim == 3 ? R->E[1].n : 0;
    for (int t = 0; t < dim && !ierr; t++) {
      ierr = entity_lists(ctx, R, t, 0, &R->roff[t], &R->rk[t]);
      if (!ierr) ierr = entity_lists(ctx, R, t, 1, &R->toff[t], &R->tg[t]);
    }
  }
  if (ierr) {
    mf_simplex_root_release(R);
    return ierr;
  }
  *out = R;
  return 0;
}

/* ------------------------------------------------------------------ refinement */

int mf_simplex_refine_parts(mf_context ctx, const mf_simplex_mesh *m, mf_simplex_mesh *f)
{
  const int dim = m->dim, nvc = dim + 1, nch = dim == 2 ? 4 : 8;
  MF_CHECK(m->part || m->root, ctx, MF_ERR_ARGUMENT, "a mesh on several ranks has a partition or is held in parts");
  MF_CHECK(!m->root || m->level < 15, ctx, MF_ERR_ARGUMENT,
           "refining a mesh held in parts %d times: at most 15 levels (the lattice of its cells)", m->level + 1);
  mf_simplex_root *R = NULL;
  mf_simplex_mesh loc;
  int *lcells = NULL;
  memset(&loc, 0, sizeof loc);
  const mf_simplex_mesh *src = m;
  int ierr = 0;
  if (m->root) R = mf_simplex_root_retain(m->root);
  else {
    ierr = root_create(ctx, m, &R);
    if (!ierr) ierr = mf_simplex_mesh_local(ctx, m, ctx->rank, &loc, &lcells);
    src = &loc;
  }
  if (!ierr) ierr = mf_simplex_mesh_refine(ctx, src, f);
  if (!ierr) ierr = MF_CALLOC(ctx, (size_t)f->ncells + 1, &f->anc);
  if (!ierr) ierr = MF_CALLOC(ctx, (size_t)f->ncells * nvc * nvc + 1, &f->lat);
  int lost = 0; /* a child's corner that is none of its parent's corners and midpoints (refine.c's layout broken) */
  if (!ierr) {
    const int level = (m->root ? m->level : 0) + 1;
#pragma omp parallel for schedule(static)
    for (int e = 0; e < src->ncells; e++) {
      /* the parent's corners and edge midpoints (their fine numbers) with their lattice coordinates at the
       * fine level: corner a 2 lat_a, the midpoint of (a, b) lat_a + lat_b */
      int id[10], np = 0;
      unsigned short L[10][4] = {{0}};
      const int *fc = f->cells + (size_t)nch * e * nvc;
      for (int a = 0; a <= dim; a++)
        for (int b = a; b <= dim; b++) {
          id[np] = fc[(size_t)a * nvc + b]; /* child a's corner b: the midpoint of (a, b), corner a itself */
          for (int k = 0; k <= dim; k++) {
            const int la = src == &loc ? (a == k) : m->lat[((size_t)e * nvc + a) * nvc + k];
            const int lb = src == &loc ? (b == k) : m->lat[((size_t)e * nvc + b) * nvc + k];
            L[np][k] = (unsigned short)(la + lb);
          }
          np++;
        }
      const int anc = src == &loc ? lcells[e] : m->anc[e];
      for (int k = 0; k < nch; k++) {
        f->anc[(size_t)nch * e + k] = anc;
        for (int j = 0; j <= dim; j++) {
          const int v = fc[(size_t)k * nvc + j];
          int i = 0;
          while (i < np && id[i] != v) i++;
          if (i == np) {
#pragma omp atomic write
            lost = 1;
            i = 0;
          }
          for (int c = 0; c <= dim; c++) f->lat[(((size_t)nch * e + k) * nvc + j) * nvc + c] = L[i][c];
        }
      }
    }
    f->level = level;
    if (lost)
      ierr = mf_error_set(ctx, MF_ERR_ARGUMENT, __FILE__, __LINE__, __func__,
                          "refining in parts: a child's corner is none of its parent's corners and edge midpoints");
    else f->root = R, R = NULL;
  }
  mf_simplex_root_release(R);
  mf_simplex_mesh_free(&loc);
  free(lcells);
  if (ierr) mf_simplex_mesh_free(f);
  return ierr;
}

int64_t mf_simplex_parts_ncells_global(const mf_simplex_mesh *m)
{
  int64_t n = m->root->m.ncells;
  for (int l = 0; l < m->level; l++) n *= m->dim == 2 ? 4 : 8;
  return n;
}

int mf_simplex_parts_copy(mf_context ctx, const mf_simplex_mesh *m, mf_simplex_mesh *c)
{
  const int dim = m->dim, nvc = dim + 1;
  memset(c, 0, sizeof *c);
  c->dim = dim, c->nv = m->nv, c->ncells = m->ncells, c->nfacets = m->nfacets, c->level = m->level;
  int ierr = MF_CALLOC(ctx, (size_t)m->nv * 3 + 1, &c->coords);
  if (!ierr) ierr = MF_CALLOC(ctx, (size_t)m->ncells * nvc + 1, &c->cells);
  if (!ierr) ierr = MF_CALLOC(ctx, (size_t)m->nfacets * dim + 1, &c->facets);
  if (!ierr) ierr = MF_CALLOC(ctx, (size_t)m->nfacets + 1, &c->facet_tag);
  if (!ierr) ierr = MF_CALLOC(ctx, (size_t)m->ncells + 1, &c->anc);
  if (!ierr) ierr = MF_CALLOC(ctx, (size_t)m->ncells * nvc * nvc + 1, &c->lat);
  if (!ierr) {
    memcpy(c->coords, m->coords, sizeof(double) * 3 * (size_t)m->nv);
    memcpy(c->cells, m->cells, sizeof(int) * (size_t)m->ncells * nvc);
    memcpy(c->facets, m->facets, sizeof(int) * (size_t)m->nfacets * dim);
    memcpy(c->facet_tag, m->facet_tag, sizeof(int) * (size_t)m->nfacets);
    memcpy(c->anc, m->anc, sizeof(int) * (size_t)m->ncells);
    memcpy(c->lat, m->lat, sizeof(unsigned short) * (size_t)m->ncells * nvc * nvc);
    c->root = mf_simplex_root_retain(m->root);
  } else mf_simplex_mesh_free(c);
  return ierr;
}

/* ------------------------------------------------------------------ DoFs */

/* a node's key: the entity (dimension t, index) that holds it and its place there */
typedef struct {
  uint64_t hi, lo;
  int owner, l; /* the lowest rank that holds it; the local DoF */
} node_key;

static int key_cmp(const void *a, const void *b)
{
  const node_key *p = (const node_key *)a, *q = (const node_key *)b;
  if (p->owner != q->owner) return p->owner < q->owner ? -1 : 1;
  if (p->hi != q->hi) return p->hi < q->hi ? -1 : 1;
  return (p->lo > q->lo) - (p->lo < q->lo);
}

/* The key of reference node n (numerators bn of its barycentric coordinates, denominator p) of cell e:
 * its entity's dimension *t and index *x, and key->hi, key->lo */
static void key_of(const mf_simplex_mesh *m, int e, const int *bn, int p, node_key *key, int *t, int64_t *x)
{
  const mf_simplex_root *R = m->root;
  const int dim = m->dim, nvc = dim + 1;
  int64_t L[4] = {0, 0, 0, 0};
  for (int a = 0; a <= dim; a++)
    for (int c = 0; c <= dim; c++) L[c] += (int64_t)bn[a] * m->lat[((size_t)e * nvc + a) * nvc + c];
  const int anc = m->anc[e], *cv = R->m.cells + (size_t)anc * nvc;
  const uint64_t base = ((uint64_t)p << m->level) + 1;
  int S[4], ns = 0;
  for (int c = 0; c <= dim; c++)
    if (L[c] > 0) S[ns++] = c;
  for (int i = 1; i < ns; i++) /* by the coarse vertices' numbers */
    for (int j = i; j > 0 && cv[S[j - 1]] > cv[S[j]]; j--) {
      const int s = S[j];
      S[j] = S[j - 1], S[j - 1] = s;
    }
  *t = ns - 1;
  uint64_t lo = 0;
  if (*t == dim) { /* the interior of the coarse cell: its own order */
    *x = anc;
    for (int c = dim; c >= 1; c--) lo = lo * base + (uint64_t)L[c];
  } else {
    int v[3];
    for (int i = 0; i < ns; i++) v[i] = cv[S[i]];
    *x = entity(R, *t, v);
    for (int i = ns - 1; i >= 1; i--) lo = lo * base + (uint64_t)L[S[i]];
  }
  key->hi = ((uint64_t)*t << 48) | (uint64_t)*x;
  key->lo = lo;
}

/* the ranks (t < dim: the entity's list; the interior: the cell's rank alone) */
static const int *ranks_of(const mf_simplex_root *R, int dim, int t, int64_t x, int anc, int *n)
{
  if (t == dim) {
    *n = 1;
    return R->m.part + anc;
  }
  *n = (int)(R->roff[t][x + 1] - R->roff[t][x]);
  return R->rk[t] + R->roff[t][x];
}

int mf_simplex_parts_marks(mf_space s, int ntags, const int *tags, unsigned char *dbc)
{
  const mf_simplex_space *ss = (const mf_simplex_space *)s->fdata;
  const mf_simplex_root *R = ((const mf_simplex_mesh *)s->mesh->fdata)->root;
  const int dim = s->dim, nd = ss->dofs.ndofs;
  for (int i = 0; i < nd; i++) {
    const int t = ss->sup_t[i];
    int on = 0;
    if (t < dim)
      for (int64_t k = R->toff[t][ss->sup_x[i]]; k < R->toff[t][ss->sup_x[i] + 1] && !on; k++) {
        if (ntags < 0) on = 1;
        for (int j = 0; j < ntags && !on; j++) on = R->tg[t][k] == tags[j];
      }
    dbc[i] = (unsigned char)on;
  }
  return 0;
}

/* exchange lists with the neighbours from the sorted ghost keys and the sorted send pairs */
typedef struct {
  int r, l;
  uint64_t hi, lo;
} send_item;
static int send_cmp(const void *a, const void *b)
{
  const send_item *p = (const send_item *)a, *q = (const send_item *)b;
  if (p->r != q->r) return p->r < q->r ? -1 : 1;
  if (p->hi != q->hi) return p->hi < q->hi ? -1 : 1;
  return (p->lo > q->lo) - (p->lo < q->lo);
}

int mf_simplex_space_distribute_parts(mf_space s, int ierr_in)
{
  mf_context ctx = s->ctx;
  mf_simplex_space *ss = (mf_simplex_space *)s->fdata;
  const mf_simplex_mesh *m = (const mf_simplex_mesh *)s->mesh->fdata;
  const mf_simplex_root *R = m->root;
  const int rank = ctx->rank, dim = m->dim, N = ss->basis.nnodes, nc = s->ncomp, nd = ss->dofs.ndofs, p = s->degree;
  int *cd = ss->dofs.cell_dofs, *bn = NULL, *perm = NULL;
  int64_t *first = NULL; /* each DoF's first (cell, node): cell N + node */
  node_key *k = NULL;
  send_item *snd = NULL;
  int ierr = ierr_in, nown = 0;
  if (!ierr && ((uint64_t)p << m->level) >= (1u << 20))
    ierr = mf_error_set(ctx, MF_ERR_ARGUMENT, __FILE__, __LINE__, __func__,
                        "degree %d on a mesh refined %d times on several ranks: beyond the nodes' keys (p 2^level < "
                        "2^20)", p, m->level);
  if (!ierr) ierr = MF_CALLOC(ctx, (size_t)N * (dim + 1) + 1, &bn);
  if (!ierr) ierr = MF_CALLOC(ctx, (size_t)nd + 1, &k);
  if (!ierr) ierr = MF_CALLOC(ctx, (size_t)nd + 1, &first);
  if (!ierr) ierr = MF_CALLOC(ctx, (size_t)nd + 1, &ss->sup_t);
  if (!ierr) ierr = MF_CALLOC(ctx, (size_t)nd + 1, &ss->sup_x);
  if (ierr) goto agree;
  for (int n = 0; n < N; n++) { /* the nodes' barycentric numerators */
    int sum = 0;
    for (int l = 0; l < dim; l++) {
      const int v = (int)lround(ss->basis.nodes[(size_t)n * dim + l] * p);
      bn[n * (dim + 1) + l + 1] = v, sum += v;
    }
    bn[n * (dim + 1)] = p - sum;
  }
  for (int i = 0; i < nd; i++) first[i] = -1;
  for (int e = 0; e < m->ncells; e++) /* each DoF's first cell and node */
    for (int n = 0; n < N; n++)
      if (first[cd[(size_t)e * N + n]] < 0) first[cd[(size_t)e * N + n]] = (int64_t)e * N + n;
  for (int i = 0; i < nd; i++) {
    const int e = (int)(first[i] / N), n = (int)(first[i] % N);
    int t = 0, nr = 0;
    int64_t x = 0;
    key_of(m, e, bn + n * (dim + 1), p, &k[i], &t, &x);
    const int *rk = ranks_of(R, dim, t, x, m->anc[e], &nr);
    ss->sup_t[i] = (signed char)t, ss->sup_x[i] = x;
    k[i].owner = rk[0], k[i].l = i;
  }
  /* the new order: owned DoFs (in the local order), then the ghosts by owner and key */
  for (int i = 0; i < nd; i++) nown += k[i].owner == rank;
  ierr = MF_CALLOC(ctx, (size_t)nd + 1, &perm);
  if (ierr) goto agree;
  {
    int a = 0;
    for (int i = 0; i < nd; i++)
      if (k[i].owner == rank) perm[i] = a++;
    qsort(k, (size_t)nd, sizeof *k, key_cmp); /* the ghosts' order: by owner, then key */
    int b = nown;
    for (int i = 0; i < nd; i++)
      if (k[i].owner != rank) perm[k[i].l] = b++;
  }
  /* what this rank sends: each owned DoF to every other rank that holds it, by rank, then key (counted, then
   * listed) */
  int64_t ns = 0;
  for (int pass = 0; pass < 2; pass++) {
    if (pass) {
      ierr = MF_CALLOC(ctx, (size_t)ns + 1, &snd);
      if (ierr) goto agree;
      ns = 0;
    }
    for (int i = 0; i < nd; i++) {
      if (k[i].owner != rank) continue;
      const int l = k[i].l;
      int nr = 0;
      const int *rk = ranks_of(R, dim, ss->sup_t[l], ss->sup_x[l], m->anc[(size_t)(first[l] / N)], &nr);
      for (int j = 0; j < nr; j++) {
        if (rk[j] == rank) continue;
        if (pass) snd[ns].r = rk[j], snd[ns].l = perm[l], snd[ns].hi = k[i].hi, snd[ns].lo = k[i].lo;
        ns++;
      }
    }
  }
  qsort(snd, (size_t)ns, sizeof *snd, send_cmp);
  { /* the exchange: the send list, and the ghosts (k by owner, then key) in their new numbers */
    mf_simplex_rank_dof *sp = NULL, *rp = NULL;
    ierr = MF_CALLOC(ctx, (size_t)ns + 1, &sp);
    if (!ierr) ierr = MF_CALLOC(ctx, (size_t)(nd - nown) + 1, &rp);
    if (!ierr) {
      for (int64_t j = 0; j < ns; j++) sp[j].r = snd[j].r, sp[j].l = snd[j].l;
      for (int i = 0, j = 0; i < nd; i++)
        if (k[i].owner != rank) rp[j].r = k[i].owner, rp[j++].l = perm[k[i].l];
      ierr = mf_simplex_exchange_make(ctx, sp, ns, rp, nd - nown, nc, &s->ex);
    }
    free(sp);
    free(rp);
  }
  if (!ierr) { /* the new order applied: the cells' DoFs, the supports, the marks */
    for (size_t j = 0; j < (size_t)m->ncells * N; j++) cd[j] = perm[cd[j]];
    signed char *t2 = NULL;
    int64_t *x2 = NULL;
    unsigned char *b2 = NULL;
    ierr = MF_CALLOC(ctx, (size_t)nd + 1, &t2);
    if (!ierr) ierr = MF_CALLOC(ctx, (size_t)nd + 1, &x2);
    if (!ierr) ierr = MF_CALLOC(ctx, (size_t)nd + 1, &b2);
    if (!ierr) {
      for (int i = 0; i < nd; i++) t2[perm[i]] = ss->sup_t[i], x2[perm[i]] = ss->sup_x[i], b2[perm[i]] = ss->dofs.bc[i];
      free(ss->sup_t), free(ss->sup_x), free(ss->dofs.bc);
      ss->sup_t = t2, ss->sup_x = x2, ss->dofs.bc = b2;
      t2 = NULL, x2 = NULL, b2 = NULL;
    }
    free(t2), free(x2), free(b2);
  }
agree: /* every rank reaches the collective steps: a failure on one is every rank's */
  ierr = mf_agree(ctx, ierr);
  if (!ierr) { /* the sizes and the global numbering */
    long long own = nown, off = 0, tot = 0;
    MPI_Exscan(&own, &off, 1, MPI_LONG_LONG, MPI_SUM, ctx->comm);
    MPI_Allreduce(&own, &tot, 1, MPI_LONG_LONG, MPI_SUM, ctx->comm);
    if (rank == 0) off = 0;
    s->ncells = m->ncells;
    s->nowned = nown * nc;
    s->nlocal = nd * nc;
    s->nglobal = (int64_t)tot * nc;
    s->global_offset = (int64_t)off * nc;
  }
  free(bn), free(k), free(first), free(perm), free(snd);
  return ierr;
}
