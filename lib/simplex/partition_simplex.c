/* partition_simplex.c -- the cells of a simplex mesh split into parts (mf_simplex_mesh_partition): recursive
 * coordinate bisection of their centroids, or (where the library was built with Debian's Scotch) a graph
 * partition of the cells' dual graph (cells adjacent through a facet) by SCOTCH_graphPart. Every rank holds
 * the whole mesh; rank 0 makes the partition and sends it to the others, so that they agree whatever the
 * partitioner does with its random numbers. */
#include "mf_simplex.h"

#include <math.h>
#ifdef MFREE_WITH_SCOTCH
#include <scotch.h>
#endif

/* the cells idx[0..n) (reordered) into the parts p0 .. p0 + np - 1; key: scratch of n entries */
typedef struct {
  double x;
  int i;
} rcb_key;
static int rcb_cmp(const void *a, const void *b)
{
  const rcb_key *p = (const rcb_key *)a, *q = (const rcb_key *)b;
  return p->x < q->x ? -1 : p->x > q->x ? 1 : (p->i > q->i) - (p->i < q->i);
}
static void rcb(const double *c, int *idx, rcb_key *key, int n, int p0, int np, int *part)
{
  if (np <= 1 || n == 0) {
    for (int i = 0; i < n; i++) part[idx[i]] = p0;
    return;
  }
  double lo[3] = {INFINITY, INFINITY, INFINITY}, hi[3] = {-INFINITY, -INFINITY, -INFINITY};
  for (int i = 0; i < n; i++)
    for (int k = 0; k < 3; k++) lo[k] = fmin(lo[k], c[3 * (size_t)idx[i] + k]), hi[k] = fmax(hi[k], c[3 * (size_t)idx[i] + k]);
  int axis = 0;
  for (int k = 1; k < 3; k++)
    if (hi[k] - lo[k] > hi[axis] - lo[axis]) axis = k;
  for (int i = 0; i < n; i++) key[i].x = c[3 * (size_t)idx[i] + axis], key[i].i = idx[i];
  qsort(key, (size_t)n, sizeof *key, rcb_cmp);
  for (int i = 0; i < n; i++) idx[i] = key[i].i;
  const int nl = np / 2, cut = (int)((int64_t)n * nl / np);
  rcb(c, idx, key, cut, p0, nl, part);
  rcb(c, idx + cut, key, n - cut, p0 + nl, np - nl, part);
}

static int partition_rcb(mf_context ctx, const mf_simplex_mesh *m, int nparts, int *part)
{
  double *c = NULL;
  int *idx = NULL;
  rcb_key *key = NULL;
  MF_CALL(MF_CALLOC(ctx, 3 * (size_t)m->ncells + 1, &c));
  int ierr = MF_CALLOC(ctx, (size_t)m->ncells + 1, &idx);
  if (!ierr) ierr = MF_CALLOC(ctx, (size_t)m->ncells + 1, &key);
  if (!ierr) {
    const int nvc = m->dim + 1;
    for (int e = 0; e < m->ncells; e++) {
      idx[e] = e;
      for (int a = 0; a < nvc; a++)
        for (int k = 0; k < 3; k++) c[3 * (size_t)e + k] += m->coords[3 * (size_t)m->cells[(size_t)e * nvc + a] + k] / nvc;
    }
    rcb(c, idx, key, m->ncells, 0, nparts, part);
  }
  free(c);
  free(idx);
  free(key);
  return ierr;
}


#ifdef MFREE_WITH_SCOTCH
/* The dual graph (an edge per facet shared by two cells) and SCOTCH_graphPart with its default strategy */
static int partition_scotch(mf_context ctx, const mf_simplex_mesh *m, int nparts, int *part)
{
  const int dim = m->dim, nvc = dim + 1, nc = m->ncells;
  const int64_t nk = (int64_t)nc * nvc;
  mf_simplex_facet_key *k = NULL;
  SCOTCH_Num *vert = NULL, *edge = NULL, *deg = NULL, *pt = NULL;
  int ierr = MF_CALLOC(ctx, (size_t)nk + 1, &k);
  if (!ierr) ierr = MF_CALLOC(ctx, (size_t)nc + 2, &vert);
  if (!ierr) ierr = MF_CALLOC(ctx, (size_t)nc + 1, &deg);
  if (!ierr) ierr = MF_CALLOC(ctx, (size_t)nk + 1, &edge);
  if (!ierr) ierr = MF_CALLOC(ctx, (size_t)nc + 1, &pt);
  if (!ierr) {
    for (int e = 0; e < nc; e++)
      for (int f = 0; f < nvc; f++) {
        int v[3], n = 0;
        for (int a = 0; a < nvc; a++)
          if (a != f) v[n++] = m->cells[(size_t)e * nvc + a];
        mf_simplex_facet_key_make(v, n, e, &k[(size_t)e * nvc + f]);
      }
    qsort(k, (size_t)nk, sizeof *k, mf_simplex_facet_cmp);
    for (int64_t i = 0; i + 1 < nk; i++) /* a facet of two cells: one edge each way */
      if (!mf_simplex_facet_cmp(&k[i], &k[i + 1])) deg[k[i].id]++, deg[k[i + 1].id]++;
    for (int e = 0; e < nc; e++) vert[e + 1] = vert[e] + deg[e], deg[e] = 0;
    for (int64_t i = 0; i + 1 < nk; i++)
      if (!mf_simplex_facet_cmp(&k[i], &k[i + 1])) {
        const int a = k[i].id, b = k[i + 1].id;
        edge[vert[a] + deg[a]++] = b;
        edge[vert[b] + deg[b]++] = a;
      }
    /* a context of its own, deterministic with a fixed seed (the same partition at every call; Scotch's
     * threads otherwise change it from run to run), the graph bound to it */
    SCOTCH_Graph g, gc;
    SCOTCH_Strat s;
    SCOTCH_Context sc;
    int rc = SCOTCH_contextInit(&sc);
    if (!rc) rc = SCOTCH_contextOptionSetNum(&sc, SCOTCH_OPTIONNUMDETERMINISTIC, 1);
    if (!rc) rc = SCOTCH_contextOptionSetNum(&sc, SCOTCH_OPTIONNUMRANDOMFIXEDSEED, 1);
    if (!rc) rc = SCOTCH_contextRandomClone(&sc);
    if (!rc) SCOTCH_contextRandomReset(&sc);
    if (!rc) rc = SCOTCH_graphInit(&g);
    if (!rc) rc = SCOTCH_graphBuild(&g, 0, nc, vert, vert + 1, NULL, NULL, vert[nc], edge, NULL);
    if (!rc) rc = SCOTCH_graphInit(&gc);
    if (!rc) rc = SCOTCH_contextBindGraph(&sc, &g, &gc);
    if (!rc && !SCOTCH_stratInit(&s)) {
      rc = SCOTCH_graphPart(&gc, nparts, &s, pt);
      SCOTCH_stratExit(&s);
    }
    SCOTCH_graphExit(&gc);
    SCOTCH_graphExit(&g);
    SCOTCH_contextExit(&sc);
    if (rc) ierr = mf_error_set(ctx, MF_ERR_ARGUMENT, __FILE__, __LINE__, __func__,
                                "Scotch could not partition the %d cells into %d parts (code %d)", nc, nparts, rc);
    for (int e = 0; e < nc && !ierr; e++) part[e] = (int)pt[e];
  }
  free(k), free(vert), free(deg), free(edge), free(pt);
  return ierr;
}
#endif

int mf_simplex_partitioner_default(void)
{
#ifdef MFREE_WITH_SCOTCH
  return MF_SIMPLEX_PARTITION_SCOTCH;
#else
  return MF_SIMPLEX_PARTITION_RCB;
#endif
}

int mf_simplex_mesh_partition(mf_context ctx, const mf_simplex_mesh *m, int nparts, int method, int *part)
{
  MF_CHECK(nparts >= 1, ctx, MF_ERR_ARGUMENT, "parts %d below 1", nparts);
  if (method == MF_SIMPLEX_PARTITION_DEFAULT) method = mf_simplex_partitioner_default();
#ifndef MFREE_WITH_SCOTCH
  MF_CHECK(method != MF_SIMPLEX_PARTITION_SCOTCH, ctx, MF_ERR_UNSUPPORTED,
           "partition by Scotch: the library was built without it (Debian's libscotch-dev)");
#endif
  MF_CHECK(method == MF_SIMPLEX_PARTITION_RCB || method == MF_SIMPLEX_PARTITION_SCOTCH, ctx, MF_ERR_ARGUMENT,
           "partition method %d unknown", method);
  int ierr = 0;
  if (!ctx || ctx->rank == 0) {
#ifdef MFREE_WITH_SCOTCH
    if (method == MF_SIMPLEX_PARTITION_SCOTCH) ierr = partition_scotch(ctx, m, nparts, part);
    else
#endif
      ierr = partition_rcb(ctx, m, nparts, part);
  }
  if (ctx && ctx->size > 1) { /* rank 0's partition on every rank */
    ierr = mf_agree(ctx, ierr);
    if (!ierr) MPI_Bcast(part, m->ncells, MPI_INT, 0, ctx->comm);
  }
  return ierr;
}
