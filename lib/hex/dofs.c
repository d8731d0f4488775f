/* dofs.c -- continuous Q_p DoF numbering of a uniformly refined forest on one rank, in time linear in
 * the cells and OpenMP over them, without p4est_lnodes (which walks faces, edges and corners through
 * p4est_iterate at about a microsecond per cell).
 *
 * Every tree of a uniform forest at level L is a lattice of n = 2^L cells per direction, and its
 * nodes are the points P = c p + i (c the cell coordinate, i = 0..p the node index) of the lattice
 * [0, N]^dim, N = p n. A node belongs to the first cell in the forest's order that has it:
 *   - in its own tree, the lowest cell along every direction (cells are in Morton order, which grows
 *     with every coordinate): c_d = (P_d - 1) / p, node index P_d - c_d p (c_d = 0 where P_d = 0);
 *   - on a tree face, edge or corner, the tree of lowest index among those sharing it.
 * Trees sharing a face, edge or corner are found, and their coordinates matched, through the coarse
 * mesh's vertex numbers: an edge is read from its lower-numbered vertex, a face in a frame whose
 * origin is its lowest-numbered vertex and whose first axis points to the lower-numbered neighbour
 * of that vertex. DoFs are numbered by owner cell and, within it, by node index: the order
 * p4est_lnodes gives (test `dofs` compares the two).
 *
 *  3D node index (x fastest), p = 2:      a cell owns the nodes with index >= 1 in every direction,
 *        z=2: 24 25 26                    and index 0 where it lies on the lower side of its tree
 *        z=1: 15 16 17                    (and that tree owns the face, edge or corner)
 *        z=0:  6  7  8  (y = 2)
 *              3  4  5  (y = 1)
 *              0  1  2  (y = 0)                                                                  */
#include "mfree_impl.h"
#include "dofs.h"

#include <limits.h>

/* A tree's face, edge or corner, and where the owner of its points is. */
typedef struct {
  int key[4];      /* sorted vertex numbers of the entity (unused entries INT_MAX) */
  int tree, local; /* this tree and its local entity */
  int frame;       /* face: bit 0 origin along t1, bit 1 along t2, bit 2 axes swapped; edge: reversed */
  int owner;       /* index of the owner's entry in the same table */
} entity;

struct mf_dofs_uniform_s {
  int dim, p, n1, npc, level;
  int64_t n, N; /* cells and lattice intervals per tree direction */
  int ntrees;
  entity *face, *edge, *corner; /* per tree: 2 dim faces, 12 edges (3D), 2^dim corners */
};
typedef struct mf_dofs_uniform_s lattice;

static int cmp_key(const void *pa, const void *pb)
{
  const entity *a = (const entity *)pa, *b = (const entity *)pb;
  for (int k = 0; k < 4; k++)
    if (a->key[k] != b->key[k]) return a->key[k] < b->key[k] ? -1 : 1;
  return a->tree < b->tree ? -1 : a->tree > b->tree;
}

static void sort4(int *v)
{
  for (int i = 1; i < 4; i++)
    for (int j = i; j > 0 && v[j] < v[j - 1]; j--) {
      int t = v[j];
      v[j] = v[j - 1];
      v[j - 1] = t;
    }
}

/* Group the entries of a table by key; each entry points to the entry of the lowest tree in its group.
 * Entries are sorted in a copy, so the table keeps its (tree, local) order. Returns the largest group. */
static int set_owners(entity *table, int count, entity *work)
{
  memcpy(work, table, sizeof(entity) * (size_t)count);
  for (int k = 0; k < count; k++) work[k].owner = k; /* remember the position */
  qsort(work, (size_t)count, sizeof(entity), cmp_key);
  int largest = 0;
  for (int a = 0; a < count;) {
    int b = a;
    while (b < count && !memcmp(work[b].key, work[a].key, sizeof work[a].key)) b++;
    if (b - a > largest) largest = b - a;
    for (int k = a; k < b; k++) table[work[k].owner].owner = work[a].owner; /* the group's lowest tree */
    a = b;
  }
  return largest;
}

/* Tree corner index with bit `bit` along axis `axis` for each given (axis, bit). */
static int corner_of(int dim, const int *axis, const int *bit, int n)
{
  int c = 0;
  for (int k = 0; k < n; k++) c |= bit[k] << axis[k];
  (void)dim;
  return c;
}

/* The two (3D) or one (2D) tangential axes of face normal a, ascending. */
static void face_axes(int dim, int a, int *t)
{
  for (int d = 0, k = 0; d < dim; d++)
    if (d != a) t[k++] = d;
}

int mf_dofs_uniform_create(int dim, int degree, int level, int ntrees, const int *tree_to_vertex,
                           const int *tree_to_tree, const int8_t *tree_to_face, mf_dofs_uniform **out)
{
  *out = NULL;
  if (level > (dim == 3 ? 19 : 29) || ntrees < 1 || !tree_to_vertex) return 1;
  lattice *L = calloc(1, sizeof *L);
  if (!L) return 1;
  L->dim = dim;
  L->p = degree;
  L->n1 = degree + 1;
  L->npc = dim == 2 ? L->n1 * L->n1 : L->n1 * L->n1 * L->n1;
  L->level = level;
  L->n = (int64_t)1 << level;
  L->N = L->n * degree;
  L->ntrees = ntrees;
  const int nc = 1 << dim, nf = 2 * dim, ne = dim == 3 ? 12 : 0;
  L->face = calloc((size_t)ntrees * nf, sizeof(entity));
  L->edge = calloc((size_t)ntrees * (ne ? ne : 1), sizeof(entity));
  L->corner = calloc((size_t)ntrees * nc, sizeof(entity));
  entity *work = calloc((size_t)ntrees * 12 + 1, sizeof(entity));
  int ok = L->face && L->edge && L->corner && work;
  for (int t = 0; ok && t < ntrees; t++) {
    const int *V = &tree_to_vertex[(size_t)t * nc];
    for (int c = 0; c < nc; c++) {
      entity *en = &L->corner[(size_t)t * nc + c];
      en->key[0] = V[c];
      en->key[1] = en->key[2] = en->key[3] = INT_MAX;
      en->tree = t;
      en->local = c;
    }
    for (int f = 0; f < nf; f++) {
      const int a = f / 2, s = f % 2;
      int tx[2];
      face_axes(dim, a, tx);
      entity *en = &L->face[(size_t)t * nf + f];
      en->tree = t;
      en->local = f;
      en->key[2] = en->key[3] = INT_MAX;
      if (dim == 2) { /* a face is an edge of the square: reversed if its far end has the lower vertex */
        int ax[2] = {a, tx[0]}, b0[2] = {s, 0}, b1[2] = {s, 1};
        const int v0 = V[corner_of(dim, ax, b0, 2)], v1 = V[corner_of(dim, ax, b1, 2)];
        en->key[0] = v0 < v1 ? v0 : v1;
        en->key[1] = v0 < v1 ? v1 : v0;
        en->frame = v1 < v0;
        if (v0 == v1) ok = 0;
        continue;
      }
      int Vf[2][2];
      for (int i = 0; i < 2; i++)
        for (int j = 0; j < 2; j++) {
          int ax[3] = {a, tx[0], tx[1]}, bits[3] = {s, i, j};
          Vf[i][j] = V[corner_of(dim, ax, bits, 3)];
        }
      int i0 = 0, j0 = 0;
      for (int i = 0; i < 2; i++)
        for (int j = 0; j < 2; j++)
          if (Vf[i][j] < Vf[i0][j0]) i0 = i, j0 = j;
      const int swap = Vf[i0][1 - j0] < Vf[1 - i0][j0]; /* first axis towards the lower neighbour */
      en->frame = i0 | j0 << 1 | swap << 2;
      int key[4] = {Vf[0][0], Vf[0][1], Vf[1][0], Vf[1][1]};
      sort4(key);
      for (int k = 0; k < 4; k++) en->key[k] = key[k];
      for (int k = 0; k < 3; k++)
        if (key[k] == key[k + 1]) ok = 0; /* degenerate face: leave it to p4est_lnodes */
    }
    for (int e = 0; e < ne; e++) { /* edge along d = e / 4, bits of the other two axes in e % 4 */
      const int d = e / 4;
      int o[2];
      face_axes(dim, d, o);
      int ax[3] = {d, o[0], o[1]}, b0[3] = {0, e & 1, e >> 1 & 1}, b1[3] = {1, e & 1, e >> 1 & 1};
      const int v0 = V[corner_of(dim, ax, b0, 3)], v1 = V[corner_of(dim, ax, b1, 3)];
      entity *en = &L->edge[(size_t)t * ne + e];
      en->tree = t;
      en->local = e;
      en->key[0] = v0 < v1 ? v0 : v1;
      en->key[1] = v0 < v1 ? v1 : v0;
      en->key[2] = en->key[3] = INT_MAX;
      en->frame = v1 < v0;
      if (v0 == v1) ok = 0;
    }
  }
  if (ok) {
    /* faces: two trees at most, and exactly those p4est connects */
    ok = set_owners(L->face, ntrees * nf, work) <= 2;
    int *partner = ok ? malloc(sizeof(int) * (size_t)ntrees * nf) : NULL;
    if (ok && !partner) ok = 0;
    for (int k = 0; ok && k < ntrees * nf; k++) partner[k] = -1;
    for (int k = 0; ok && k < ntrees * nf; k++)
      if (L->face[k].owner != k) partner[k] = L->face[k].owner, partner[L->face[k].owner] = k;
    for (int t = 0; ok && t < ntrees; t++)
      for (int f = 0; f < nf && ok; f++) {
        const int nt = tree_to_tree[(size_t)t * nf + f], nface = tree_to_face[(size_t)t * nf + f] % nf;
        const int self = nt == t && nface == f;
        if (self ? partner[t * nf + f] >= 0 : partner[t * nf + f] != nt * nf + nface) ok = 0;
      }
    free(partner);
  }
  if (ok && ne) set_owners(L->edge, ntrees * ne, work);
  if (ok) set_owners(L->corner, ntrees * nc, work);
  free(work);
  if (!ok) {
    mf_dofs_uniform_destroy(L);
    return 1;
  }
  *out = L;
  return 0;
}

void mf_dofs_uniform_destroy(mf_dofs_uniform *L)
{
  if (!L) return;
  free(L->face);
  free(L->edge);
  free(L->corner);
  free(L);
}

static inline uint64_t spread2(uint64_t x)
{
  x &= 0xffffffffULL;
  x = (x | x << 16) & 0x0000ffff0000ffffULL;
  x = (x | x << 8) & 0x00ff00ff00ff00ffULL;
  x = (x | x << 4) & 0x0f0f0f0f0f0f0f0fULL;
  x = (x | x << 2) & 0x3333333333333333ULL;
  return (x | x << 1) & 0x5555555555555555ULL;
}

static inline uint64_t compact2(uint64_t x)
{
  x &= 0x5555555555555555ULL;
  x = (x | x >> 1) & 0x3333333333333333ULL;
  x = (x | x >> 2) & 0x0f0f0f0f0f0f0f0fULL;
  x = (x | x >> 4) & 0x00ff00ff00ff00ffULL;
  x = (x | x >> 8) & 0x0000ffff0000ffffULL;
  return (x | x >> 16) & 0xffffffffULL;
}

static inline uint64_t compact3(uint64_t x)
{
  x &= 0x1249249249249249ULL;
  x = (x | x >> 2) & 0x10c30c30c30c30c3ULL;
  x = (x | x >> 4) & 0x100f00f00f00f00fULL;
  x = (x | x >> 8) & 0x1f0000ff0000ffULL;
  x = (x | x >> 16) & 0x1f00000000ffffULL;
  return (x | x >> 32) & 0x1fffffULL;
}

static inline uint64_t spread3(uint64_t x)
{
  x &= 0x1fffffULL;
  x = (x | x << 32) & 0x1f00000000ffffULL;
  x = (x | x << 16) & 0x1f0000ff0000ffULL;
  x = (x | x << 8) & 0x100f00f00f00f00fULL;
  x = (x | x << 4) & 0x10c30c30c30c30c3ULL;
  return (x | x << 2) & 0x1249249249249249ULL;
}

/* Morton index of a cell within its tree (x in the lowest bit, as p4est orders quadrants). */
static inline int64_t morton(int dim, const int64_t *c)
{
  return dim == 2 ? (int64_t)(spread2((uint64_t)c[0]) | spread2((uint64_t)c[1]) << 1)
                  : (int64_t)(spread3((uint64_t)c[0]) | spread3((uint64_t)c[1]) << 1 | spread3((uint64_t)c[2]) << 2);
}

/* Tree and lattice coordinates of cell e (cells tree by tree, each tree complete in Morton order). */
static inline int cell_coords(const lattice *L, int64_t e, int64_t *c)
{
  const int64_t per_tree = L->dim == 2 ? L->n * L->n : L->n * L->n * L->n;
  const uint64_t m = (uint64_t)(e % per_tree);
  if (L->dim == 2) {
    c[0] = (int64_t)compact2(m);
    c[1] = (int64_t)compact2(m >> 1);
    c[2] = 0;
  } else {
    c[0] = (int64_t)compact3(m);
    c[1] = (int64_t)compact3(m >> 1);
    c[2] = (int64_t)compact3(m >> 2);
  }
  return (int)(e / per_tree);
}

int mf_dofs_uniform_cell(const mf_dofs_uniform *L, int64_t e, int64_t *c) { return cell_coords(L, e, c); }

/* Lattice point P of tree t that lies on an entity of that tree -> the same point in the coordinates
 * of the entity's owner tree; returns the owner tree. */
static int to_owner(const lattice *L, int t, int64_t *P)
{
  const int dim = L->dim, nf = 2 * dim;
  const int64_t N = L->N;
  int nb = 0, baxis[3], bside[3], free_axis = 0;
  for (int d = 0; d < dim; d++) {
    if (P[d] == 0 || P[d] == N) {
      baxis[nb] = d;
      bside[nb++] = P[d] == N;
    } else {
      free_axis = d;
    }
  }
  if (nb == 0) return t;
  if (nb == dim) { /* a corner */
    const entity *own = &L->corner[L->corner[(size_t)t * (1 << dim) + corner_of(dim, baxis, bside, nb)].owner];
    for (int d = 0; d < dim; d++) P[d] = (own->local >> d & 1) ? N : 0;
    return own->tree;
  }
  if (nb == 1) { /* a face (in 2D, an edge of the square) */
    const int f = 2 * baxis[0] + bside[0];
    const entity *me = &L->face[(size_t)t * nf + f], *own = &L->face[me->owner];
    if (own == me) return t;
    int tx[2], to[2];
    face_axes(dim, baxis[0], tx);
    face_axes(dim, own->local / 2, to);
    if (dim == 2) {
      int64_t u = me->frame ? N - P[tx[0]] : P[tx[0]]; /* from the lower vertex */
      P[own->local / 2] = (own->local % 2) ? N : 0;
      P[to[0]] = own->frame ? N - u : u;
      return own->tree;
    }
    int64_t u = P[tx[0]], w = P[tx[1]]; /* mine -> canonical */
    if (me->frame & 1) u = N - u;
    if (me->frame & 2) w = N - w;
    if (me->frame & 4) {
      int64_t x = u;
      u = w;
      w = x;
    }
    if (own->frame & 4) { /* canonical -> owner's */
      int64_t x = u;
      u = w;
      w = x;
    }
    if (own->frame & 1) u = N - u;
    if (own->frame & 2) w = N - w;
    P[own->local / 2] = (own->local % 2) ? N : 0;
    P[to[0]] = u;
    P[to[1]] = w;
    return own->tree;
  }
  /* an edge (3D): along free_axis, the other two on the boundary */
  const int e = 4 * free_axis + bside[0] + 2 * bside[1];
  const entity *me = &L->edge[(size_t)t * 12 + e], *own = &L->edge[me->owner];
  if (own == me) return t;
  const int64_t s = me->frame ? N - P[free_axis] : P[free_axis];
  const int d = own->local / 4;
  int o[2];
  face_axes(dim, d, o);
  P[d] = own->frame ? N - s : s;
  P[o[0]] = (own->local & 1) ? N : 0;
  P[o[1]] = (own->local >> 1 & 1) ? N : 0;
  return own->tree;
}

/* Owner (cell index, node index) of node idx (per direction 0..p) of the cell at lattice coordinates c
 * of tree t. Inside a tree the owner is the cell itself or a lower neighbour; only nodes on the
 * tree's boundary need the coarse mesh's entities and a division. */
static inline void owner_of(const lattice *L, int t, const int64_t *c, const int *idx, int64_t *ocell, int *opos)
{
  const int dim = L->dim, n1 = L->n1, p = L->p;
  const int64_t per_tree = dim == 2 ? L->n * L->n : L->n * L->n * L->n;
  int64_t oc[3] = {0, 0, 0};
  int oi[3] = {0, 0, 0}, to = t, boundary = 0;
  for (int d = 0; d < dim; d++) boundary |= (c[d] == 0 && idx[d] == 0) || (c[d] == L->n - 1 && idx[d] == p);
  if (!boundary) {
    for (int d = 0; d < dim; d++) {
      oc[d] = idx[d] ? c[d] : c[d] - 1;
      oi[d] = idx[d] ? idx[d] : p;
    }
  } else {
    int64_t P[3] = {0, 0, 0};
    for (int d = 0; d < dim; d++) P[d] = c[d] * p + idx[d];
    to = to_owner(L, t, P);
    for (int d = 0; d < dim; d++) {
      oc[d] = P[d] == 0 ? 0 : (P[d] - 1) / p;
      oi[d] = (int)(P[d] - oc[d] * p);
    }
  }
  *ocell = (int64_t)to * per_tree + morton(dim, oc);
  *opos = oi[0] + n1 * (oi[1] + n1 * oi[2]);
}

/* Loop over the nodes of a cell with their indices per direction. */
#define FOR_NODES(L, idx, pos)                                                         \
  for (int idx##k = 0, pos = 0; idx##k < ((L)->dim == 3 ? (L)->n1 : 1); idx##k++)      \
    for (int idx##j = 0; idx##j < (L)->n1; idx##j++)                                   \
      for (int idx##i = 0; idx##i < (L)->n1; idx##i++, pos++)                          \
        for (int idx[3] = {idx##i, idx##j, idx##k}, once_ = 1; once_; once_ = 0)

int mf_dofs_uniform_number(const mf_dofs_uniform *L, int ncells, int *cell_nodes, int *nnodes, int **dof_owner,
                           uint16_t **dof_pos)
{
  const int npc = L->npc, dim = L->dim, p = L->p;
  *dof_owner = NULL;
  *dof_pos = NULL;
  int *cnt = malloc(sizeof(int) * ((size_t)ncells + 1));
  if (!cnt) return 1;
  /* 1. nodes owned per cell: p^dim inside a tree, counted on its boundary */
#pragma omp parallel for schedule(static)
  for (int e = 0; e < ncells; e++) {
    int64_t c[3];
    const int t = cell_coords(L, e, c);
    int edge = 0;
    for (int d = 0; d < dim; d++) edge |= c[d] == 0 || c[d] == L->n - 1;
    int k = 0;
    if (!edge) {
      k = dim == 2 ? p * p : p * p * p;
    } else {
      FOR_NODES(L, idx, pos)
      {
        int64_t oc;
        int op;
        owner_of(L, t, c, idx, &oc, &op);
        k += oc == e && op == pos;
      }
    }
    cnt[e + 1] = k;
  }
  /* 2. offsets, then the owned nodes numbered in node order */
  cnt[0] = 0;
  for (int e = 0; e < ncells; e++) cnt[e + 1] += cnt[e];
  int *owner = malloc(sizeof(int) * ((size_t)cnt[ncells] + 1));
  uint16_t *opos = malloc(sizeof(uint16_t) * ((size_t)cnt[ncells] + 1));
  if (!owner || !opos) {
    free(cnt);
    free(owner);
    free(opos);
    return 1;
  }
#pragma omp parallel for schedule(static)
  for (int e = 0; e < ncells; e++) {
    int64_t c[3];
    const int t = cell_coords(L, e, c);
    int next = cnt[e];
    FOR_NODES(L, idx, pos)
    {
      int64_t oc;
      int op;
      owner_of(L, t, c, idx, &oc, &op);
      if (oc == e && op == pos) owner[next] = e, opos[next] = (uint16_t)pos;
      cell_nodes[(size_t)e * npc + pos] = (oc == e && op == pos) ? next++ : -1;
    }
  }
  /* 3. the others read their owner's number */
#pragma omp parallel for schedule(static)
  for (int e = 0; e < ncells; e++) {
    int64_t c[3];
    const int t = cell_coords(L, e, c);
    FOR_NODES(L, idx, pos)
    {
      if (cell_nodes[(size_t)e * npc + pos] >= 0) continue;
      int64_t oc;
      int op;
      owner_of(L, t, c, idx, &oc, &op);
      cell_nodes[(size_t)e * npc + pos] = cell_nodes[(size_t)oc * npc + op];
    }
  }
  *nnodes = cnt[ncells];
  *dof_owner = owner;
  *dof_pos = opos;
  free(cnt);
  return 0;
}
