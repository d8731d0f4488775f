/* space_simplex.c -- the simplex family's meshes from Gmsh files (the checks of their cells, the tags
 * of their boundary facets), P_p spaces (DoFs, points, Dirichlet marks and tags) and the host integrals
 * of mf_vector_assemble_rhs, mf_vector_l2_error and mf_vector_h1_error (mf_simplex_space.h). One rank. */
#include "mf_simplex_space.h"
#include "mf_simplex_backend.h"

#include <math.h>

int mf_simplex_backend_check(mf_context ctx, int degree)
{
  /* the backend's simplex kernels (ctx->bk->simplex: cuda) take degrees up to their max_degree */
  const mf_simplex_backend_ops *sx = ctx->bk->simplex;
  MF_CHECK(!sx || degree <= sx->max_degree, ctx, MF_ERR_UNSUPPORTED,
           "simplex spaces of degree %d on the cuda backend: its kernels (lib/cuda/simplex.cu) go up to degree %d "
           "(use the cpu backend for degree %d..%d)", degree, sx->max_degree, sx->max_degree + 1,
           MF_SIMPLEX_MAX_DEGREE);
  return 0;
}

/* ------------------------------------------------------------------ meshes */

/* A file facet: its smallest vertex and the key of the others (mf_simplex_entities), its tag. */
typedef struct {
  int s0, tag;
  uint64_t key;
} file_facet;

static int cmp_file_facet(const void *x, const void *y)
{
  const file_facet *a = (const file_facet *)x, *b = (const file_facet *)y;
  if (a->s0 != b->s0) return a->s0 < b->s0 ? -1 : 1;
  return (a->key > b->key) - (a->key < b->key);
}

/* The smallest of the k sorted-to-be vertices v and the key of the others, as mf_simplex_entities. */
static file_facet facet_of(int k, const int *v, uint64_t nv)
{
  int s[3] = {v[0], v[1], k == 3 ? v[2] : INT32_MAX};
  for (int i = 0; i < 3; i++)
    for (int j = i + 1; j < 3; j++)
      if (s[j] < s[i]) {
        const int t = s[i];
        s[i] = s[j], s[j] = t;
      }
  file_facet f = {s[0], 0, k == 2 ? (uint64_t)s[1] : (uint64_t)s[1] * nv + (uint64_t)s[2]};
  return f;
}

/* A cell's vertices ascending, and the cell, for finding cells given twice. */
typedef struct {
  int v[4], cell;
} sorted_cell;

static int cmp_sorted_cell(const void *x, const void *y)
{
  const sorted_cell *a = (const sorted_cell *)x, *b = (const sorted_cell *)y;
  for (int k = 0; k < 4; k++)
    if (a->v[k] != b->v[k]) return a->v[k] < b->v[k] ? -1 : 1;
  return (a->cell > b->cell) - (a->cell < b->cell);
}

/* Cells that overlap where they meet: a cell given twice (the same vertices, in any order), or a facet
 * of more than two cells. Either passes every other check of the file (each cell alone is valid) and
 * would give a slightly wrong operator; refused naming the cells by their element ids and lines in
 * the file. orig[v]: the file's node id of vertex v. */
static int check_overlaps(mf_context ctx, const mf_gmsh_mesh *g, const char *path, const mf_simplex_mesh *m,
                          const long *orig)
{
  const int dim = m->dim, nvc = dim + 1;
  const char *cell_name = dim == 2 ? "triangle" : "tetrahedron";
  sorted_cell *sc = NULL;
  MF_CALL(MF_CALLOC(ctx, (size_t)m->ncells + 1, &sc));
  for (int c = 0; c < m->ncells; c++) {
    int *v = sc[c].v;
    for (int i = 0; i < 4; i++) v[i] = i < nvc ? m->cells[(size_t)c * nvc + i] : INT32_MAX;
    for (int i = 1; i < nvc; i++) /* insertion sort of 3 or 4 */
      for (int j = i; j > 0 && v[j] < v[j - 1]; j--) {
        const int t = v[j];
        v[j] = v[j - 1], v[j - 1] = t;
      }
    sc[c].cell = c;
  }
  qsort(sc, (size_t)m->ncells, sizeof *sc, cmp_sorted_cell);
  for (int i = 1; i < m->ncells; i++)
    if (!memcmp(sc[i].v, sc[i - 1].v, sizeof sc[i].v)) {
      const int a = sc[i - 1].cell, b = sc[i].cell; /* a < b: b repeats a */
      char nodes[96] = "";
      for (int k = 0; k < nvc; k++)
        snprintf(nodes + strlen(nodes), sizeof nodes - strlen(nodes), " %ld", orig[sc[i].v[k]]);
      free(sc);
      return mf_error_set(ctx, MF_ERR_ARGUMENT, __FILE__, __LINE__, "mf_gmsh_read",
                          "%s:%ld: element %ld repeats element %ld (line %ld): the same %s (nodes%s) given twice",
                          path, g->cell_line[b], g->cell_id[b], g->cell_id[a], g->cell_line[a], cell_name, nodes);
    }
  free(sc);
  /* facets of three cells or more: the first such (by its vertices), and every cell that has it */
  static const int tri[3][3] = {{1, 2, 0}, {0, 2, 0}, {0, 1, 0}};
  static const int tet[4][3] = {{1, 2, 3}, {0, 2, 3}, {0, 1, 3}, {0, 1, 2}};
  mf_simplex_entities e;
  MF_CALL(mf_simplex_entities_create(ctx, m, dim, nvc, dim == 2 ? tri : tet, 3, &e));
  if (e.n == 0) {
    mf_simplex_entities_free(&e);
    return 0;
  }
  int f[3] = {0, 0, 0};
  while (e.off[f[0] + 1] == 0) f[0]++; /* the first vertex whose bucket is not empty */
  const uint64_t key = e.keys[0], nv = (uint64_t)m->nv;
  if (dim == 2) f[1] = (int)key;
  else f[1] = (int)(key / nv), f[2] = (int)(key % nv);
  mf_simplex_entities_free(&e);
  char cells[512] = "", nodes[96] = "";
  int count = 0;
  long last_line = 0;
  for (int c = 0; c < m->ncells; c++) {
    int has = 0;
    for (int i = 0; i < nvc; i++)
      for (int k = 0; k < dim; k++) has += m->cells[(size_t)c * nvc + i] == f[k];
    if (has < dim) continue;
    if (count < 6)
      snprintf(cells + strlen(cells), sizeof cells - strlen(cells), "%s%ld (line %ld)", count ? ", " : "",
               g->cell_id[c], g->cell_line[c]);
    else if (count == 6) snprintf(cells + strlen(cells), sizeof cells - strlen(cells), ", ...");
    if (count == 2) last_line = g->cell_line[c];
    count++;
  }
  for (int k = 0; k < dim; k++) snprintf(nodes + strlen(nodes), sizeof nodes - strlen(nodes), " %ld", orig[f[k]]);
  return mf_error_set(ctx, MF_ERR_ARGUMENT, __FILE__, __LINE__, "mf_gmsh_read",
                      "%s:%ld: the %s of nodes%s is a facet of %d cells, elements %s: a facet belongs to one cell (on "
                      "the boundary) or two; the cells overlap",
                      path, last_line, dim == 2 ? "edge" : "triangle", nodes, count, cells);
}

/* The cells of a Gmsh mesh on the vertices they reference (renumbered in the file's node order), the
 * boundary computed, each boundary facet tagged with the physical tag of the file's facet on it. */
int mf_simplex_mesh_from_gmsh(mf_context ctx, const mf_gmsh_mesh *g, const char *path, mf_simplex_mesh *m)
{
  const int dim = g->dim, nvc = dim + 1;
  MF_CHECK(g->n_cells > 0, ctx, MF_ERR_ARGUMENT, "%s: no %s in the file", path, dim == 2 ? "triangles" : "tetrahedra");
  MF_CHECK(g->n_cells <= INT32_MAX / 8 && g->n_nodes <= INT32_MAX, ctx, MF_ERR_ARGUMENT,
           "%s: %ld cells and %ld nodes exceed the 32-bit indices", path, g->n_cells, g->n_nodes);
  int *newid = NULL;
  MF_CALL(MF_CALLOC(ctx, (size_t)g->n_nodes + 1, &newid));
  for (long i = 0; i < g->n_nodes; i++) newid[i] = -1;
  for (long k = 0; k < g->n_cells * nvc; k++) newid[g->cells[k]] = 0;
  int nv = 0;
  for (long i = 0; i < g->n_nodes; i++)
    if (newid[i] == 0) newid[i] = nv++;
  memset(m, 0, sizeof *m);
  m->dim = dim;
  m->nv = nv;
  m->ncells = (int)g->n_cells;
  int ierr = MF_CALLOC(ctx, (size_t)nv * 3, &m->coords);
  if (!ierr) ierr = MF_CALLOC(ctx, (size_t)m->ncells * nvc, &m->cells);
  if (!ierr) {
    for (long i = 0; i < g->n_nodes; i++)
      if (newid[i] >= 0)
        for (int k = 0; k < 3; k++) m->coords[3 * (size_t)newid[i] + k] = k < dim ? g->x[3 * i + k] : 0.0;
    for (long k = 0; k < g->n_cells * nvc; k++) m->cells[k] = newid[g->cells[k]];
    long *orig = NULL; /* the file's node id of each vertex, for the messages */
    ierr = MF_CALLOC(ctx, (size_t)nv + 1, &orig);
    if (!ierr) {
      for (long i = 0; i < g->n_nodes; i++)
        if (newid[i] >= 0) orig[newid[i]] = g->node_id[i];
      ierr = check_overlaps(ctx, g, path, m, orig);
    }
    free(orig);
    if (!ierr) ierr = mf_simplex_mesh_boundary(ctx, m);
  }
  file_facet *fk = NULL; /* the file's facets sorted by their vertices */
  if (!ierr && g->n_facets) ierr = MF_CALLOC(ctx, (size_t)g->n_facets, &fk);
  if (!ierr) {
    long nf = 0;
    for (long t = 0; t < g->n_facets; t++) {
      int v[3] = {0, 0, 0}, ok = 1;
      for (int k = 0; k < dim; k++) {
        v[k] = newid[g->facets[t * dim + k]];
        ok = ok && v[k] >= 0;
      }
      if (!ok) continue; /* a facet off the cells' vertices cannot be on their boundary */
      fk[nf] = facet_of(dim, v, (uint64_t)nv);
      fk[nf].tag = g->facet_tag[t];
      nf++;
    }
    if (nf) qsort(fk, (size_t)nf, sizeof *fk, cmp_file_facet);
    for (int t = 0; t < m->nfacets; t++) {
      const file_facet f = facet_of(dim, &m->facets[(size_t)t * dim], (uint64_t)nv);
      long lo = 0, hi = nf;
      while (lo < hi) {
        const long mid = lo + (hi - lo) / 2;
        if (cmp_file_facet(&fk[mid], &f) < 0) lo = mid + 1;
        else hi = mid;
      }
      m->facet_tag[t] = lo < nf && !cmp_file_facet(&fk[lo], &f) ? fk[lo].tag : 0;
    }
  }
  free(fk);
  free(newid);
  if (ierr) mf_simplex_mesh_free(m);
  return ierr;
}

/* ------------------------------------------------------------------ spaces */

void mf_simplex_space_destroy(mf_space s)
{
  mf_simplex_space *ss = (mf_simplex_space *)s->fdata;
  if (!ss) return;
  if (ss->dofs.cell_dofs == s->cell_nodes) ss->dofs.cell_dofs = NULL; /* the space's, freed with it */
  mf_simplex_basis_free(&ss->basis);
  mf_simplex_basis_free(&ss->basis_l2);
  mf_simplex_dofs_free(&ss->dofs);
  mf_simplex_mesh_free(&ss->local);
  free(ss->l2g);
  free(ss->sup_t);
  free(ss->sup_x);
  free(ss->tags);
  if (ss->dev_asm) ss->dev_asm_free(ss->dev_asm);
  free(ss);
  s->fdata = NULL;
}

const mf_simplex_mesh *mf_simplex_space_mesh(const struct mf_space_s *s)
{
  const mf_simplex_space *ss = (const mf_simplex_space *)s->fdata;
  return ss->l2g ? &ss->local : (const mf_simplex_mesh *)s->mesh->fdata;
}

/* The Dirichlet marks of the space (bc, nbc, bc_list; every component of a marked DoF) from the DoF
 * marks dbc: the local DoFs' (whole 0), or the whole mesh's (whole 1: on several ranks taken through l2g). */
static int set_marks(mf_space s, const unsigned char *dbc, int whole)
{
  const mf_simplex_space *ss = (const mf_simplex_space *)s->fdata;
  const int nc = s->ncomp, nd = ss->dofs.ndofs, *l2g = whole ? ss->l2g : NULL;
  unsigned char *bc = NULL;
  int *list = NULL, nbc = 0;
#define MF_SX_MARK(i) (dbc[l2g ? l2g[i] : (i)])
  /* nb blocks of consecutive DoFs, one per thread: each block's marks counted, then listed from its first
   * place on (the list ascending, whatever the threads) */
  const int nb = nd >= 4096 ? mf_max_threads() : 1;
  int *first = NULL;
  MF_CALL(MF_CALLOC(s->ctx, (size_t)nb + 1, &first));
#pragma omp parallel for schedule(static, 1)
  for (int b = 0; b < nb; b++) {
    const int i0 = (int)((int64_t)nd * b / nb), i1 = (int)((int64_t)nd * (b + 1) / nb);
    int k = 0;
    for (int i = i0; i < i1; i++) k += MF_SX_MARK(i) ? nc : 0;
    first[b + 1] = k;
  }
  for (int b = 0; b < nb; b++) first[b + 1] += first[b];
  nbc = first[nb];
  int ierr = MF_CALLOC(s->ctx, (size_t)nd * nc + 1, &bc);
  if (!ierr) ierr = MF_CALLOC(s->ctx, (size_t)nbc + 1, &list);
  if (ierr) {
    free(bc);
    free(first);
    return ierr;
  }
#pragma omp parallel for schedule(static, 1)
  for (int b = 0; b < nb; b++) {
    const int i0 = (int)((int64_t)nd * b / nb), i1 = (int)((int64_t)nd * (b + 1) / nb);
    for (int i = i0, k = first[b]; i < i1; i++)
      for (int c = 0; c < nc; c++)
        if (MF_SX_MARK(i)) {
          bc[(size_t)i * nc + c] = 1;
          list[k++] = i * nc + c;
        }
  }
  free(first);
#undef MF_SX_MARK
  free(s->bc);
  free(s->bc_list);
  s->bc = bc;
  s->bc_list = list;
  s->nbc = nbc;
  return s->dev ? mf_space_device_sync(s) : 0; /* new marks: on the device too, once it has the old */
}

int mf_simplex_space_create(mf_mesh mesh, int degree, int ncomp, mf_space *space)
{
  mf_context ctx = mesh->ctx;
  MF_CHECK(degree >= 1 && degree <= MF_SIMPLEX_MAX_DEGREE, ctx, MF_ERR_ARGUMENT,
           "degree %d out of range 1..%d on a simplex mesh", degree, MF_SIMPLEX_MAX_DEGREE);
  MF_CALL(mf_simplex_backend_check(ctx, degree));
  MF_CHECK(ncomp >= 1 && ncomp <= MF_MAX_COMPONENTS, ctx, MF_ERR_ARGUMENT, "components per DoF %d out of range 1..%d", ncomp,
           MF_MAX_COMPONENTS);
  const mf_simplex_mesh *m = (const mf_simplex_mesh *)mesh->fdata;
  const int dim = m->dim;
  double t0 = mf_phase_begin(ctx);
  mf_space s = NULL;
  mf_simplex_space *ss = NULL;
  /* a mesh held in parts: the DoFs' distribution agrees on the error once (collective), so every failure before
   * it does that agreement in its place */
  const int agree = m->root != NULL;
  int e0 = MF_CALLOC(ctx, 1, &s);
  if (e0) return agree ? mf_agree(ctx, e0) : e0;
  mf_space_init(s, mesh, degree, ncomp); /* simplex meshes are not adapted: always current */
  *space = s; /* from here on a failure destroys the space in mf_space_create */
  e0 = MF_CALLOC(ctx, 1, &ss);
  if (e0) return agree ? mf_agree(ctx, e0) : e0;
  s->fdata = ss;
  ss->ntags = -1;
  s->ncells = m->ncells; /* several ranks: this rank's, set by mf_simplex_space_distribute */
  int ierr = mf_simplex_basis_setup(ctx, dim, degree, 2 * degree, &ss->basis);
  /* the L2 error's rule: degree 2p + 3, within the rules that exist (2 MF_SIMPLEX_MAX_DEGREE + 2) */
  const int ql2 = 2 * degree + 3 < 2 * MF_SIMPLEX_MAX_DEGREE + 2 ? 2 * degree + 3 : 2 * MF_SIMPLEX_MAX_DEGREE + 2;
  if (!ierr) ierr = mf_simplex_basis_setup(ctx, dim, degree, ql2, &ss->basis_l2);
  if (!ierr) ierr = mf_simplex_dofs_create(ctx, m, &ss->basis, &ss->dofs);
  if (!ierr && (int64_t)ss->dofs.ndofs * ncomp > INT32_MAX)
    ierr = mf_error_set(ctx, MF_ERR_ARGUMENT, __FILE__, __LINE__, __func__,
                        "%d DoFs of %d components exceed the 32-bit indices", ss->dofs.ndofs, ncomp);
  if (!ierr && m->part) { /* several ranks: this rank's cells and DoFs (the whole mesh's marks kept for set_marks) */
    unsigned char *gbc = NULL;
    ierr = MF_CALLOC(ctx, (size_t)ss->dofs.ndofs + 1, &gbc);
    if (!ierr) memcpy(gbc, ss->dofs.bc, (size_t)ss->dofs.ndofs);
    if (!ierr) ierr = mf_simplex_space_distribute(s, m);
    if (!ierr) { /* the local marks, from the whole mesh's through l2g */
      s->cell_nodes = ss->dofs.cell_dofs;
      ierr = set_marks(s, gbc, 1);
    }
    free(gbc);
  } else if (m->root) { /* a mesh held in parts: the local DoFs' owners, exchange and marks (collective) */
    unsigned char *dbc = NULL;
    ierr = mf_simplex_space_distribute_parts(s, ierr);
    if (!ierr) ierr = MF_CALLOC(ctx, (size_t)ss->dofs.ndofs + 1, &dbc);
    if (!ierr) ierr = mf_simplex_parts_marks(s, -1, NULL, dbc);
    if (!ierr) memcpy(ss->dofs.bc, dbc, (size_t)ss->dofs.ndofs); /* every boundary facet's, as one rank has them */
    if (!ierr) {
      s->cell_nodes = ss->dofs.cell_dofs;
      ierr = set_marks(s, dbc, 0);
    }
    free(dbc);
  }
  mf_phase_end(ctx, MF_PHASE_DOFS, t0);
  if (!ierr) {
    s->cell_nodes = ss->dofs.cell_dofs; /* the space's map; dofs.cell_dofs stays a view of it */
    s->npc = ss->basis.nnodes;
    if (!m->part && !m->root) {
      s->nowned = s->nlocal = ss->dofs.ndofs * ncomp;
      s->nglobal = s->nlocal;
    }
    s->owners_complete = 1; /* the points are made below, for every local DoF */
    t0 = mf_phase_begin(ctx);
    if (!m->part && !m->root) ierr = set_marks(s, ss->dofs.bc, 0);
    mf_phase_end(ctx, MF_PHASE_DIRICHLET, t0);
  }
  if (!ierr) { /* the point of every entry: x = v0 + sum_l (v_l+1 - v0) xi_l at the cell's nodes */
    t0 = mf_phase_begin(ctx);
    ierr = MF_CALLOC_TOUCH(ctx, (size_t)s->nlocal * dim, &s->coords);
    /* a shared DoF takes its point from the last cell that has it (the highest cell number), so that what
     * a DoF gets does not depend on the threads: that cell found first (an atomic maximum per node),
     * then each cell writes the nodes it is the last of; the cell's vertex and edge vectors read once */
    const int N = ss->basis.nnodes, nnodes = s->nlocal / ncomp;
    const double *xi = ss->basis.nodes;
    m = mf_simplex_space_mesh(s);
    int *last = ss->dofs.last; /* one rank: a device numbering found the cells already (several: other numbers) */
    ss->dofs.last = NULL;
    if (((const mf_simplex_mesh *)mesh->fdata)->part || ((const mf_simplex_mesh *)mesh->fdata)->root)
      free(last), last = NULL; /* renumbered since */
    const int found = last != NULL;
    /* one rank: node v < nv is vertex v (dofs.c numbers the vertices first, as they are), its point the vertex's
     * exactly; the cells write only their other nodes (P1: none, so no cell is looked for). Several ranks keep
     * the cells' formula for every node, x0 + (v_l - x0), which may differ from the vertex by a rounding */
    const int direct = !((const mf_simplex_mesh *)mesh->fdata)->part && !((const mf_simplex_mesh *)mesh->fdata)->root,
              first = direct ? dim + 1 : 0;
    if (!ierr && direct) {
#pragma omp parallel for schedule(static)
      for (int v = 0; v < m->nv; v++)
        for (int k = 0; k < dim; k++)
          for (int c = 0; c < ncomp; c++) s->coords[(size_t)v * ncomp * dim + c * dim + k] = m->coords[3 * (size_t)v + k];
    }
    if (!ierr && !found && N > first) ierr = MF_CALLOC(ctx, (size_t)nnodes + 1, &last);
    if (!ierr && N > first) {
#pragma omp parallel for schedule(static)
      for (int e = 0; e < (found ? 0 : m->ncells); e++)
        for (int n = first; n < N; n++) mf_atomic_max_int(&last[s->cell_nodes[(size_t)e * N + n]], e);
#pragma omp parallel for schedule(static)
      for (int e = 0; e < m->ncells; e++) {
        const int *v = m->cells + (size_t)e * (dim + 1), *cd = s->cell_nodes + (size_t)e * N;
        double x0[3], ed[3][3];
        for (int k = 0; k < dim; k++) {
          x0[k] = m->coords[3 * v[0] + k];
          for (int l = 0; l < dim; l++) ed[l][k] = m->coords[3 * v[l + 1] + k] - x0[k];
        }
        for (int n = first; n < N; n++) {
          if (last[cd[n]] != e) continue;
          double *xd = s->coords + (size_t)cd[n] * ncomp * dim;
          for (int k = 0; k < dim; k++) {
            double x = x0[k];
            for (int l = 0; l < dim; l++) x += ed[l][k] * xi[n * dim + l];
            for (int c = 0; c < ncomp; c++) xd[c * dim + k] = x;
          }
        }
      }
    }
    free(last);
    mf_phase_end(ctx, MF_PHASE_COORDINATES, t0);
  }
  return ierr; /* mf_space_create adds the device state (cuda backend: the boundary marks) */
}

/* The Dirichlet DoFs those of the boundary facets with the given tags (lib/space.c checked the arguments). */
int mf_simplex_space_dirichlet_tags(mf_space space, int ntags, const int *tags)
{
  mf_context ctx = space->ctx;
  mf_simplex_space *ss = (mf_simplex_space *)space->fdata;
  const mf_simplex_mesh *m = (const mf_simplex_mesh *)space->mesh->fdata;
  if (ntags < 0) { /* every boundary facet: the marks of the DoFs */
    free(ss->tags);
    ss->tags = NULL;
    ss->ntags = -1;
    return set_marks(space, ss->dofs.bc, 0);
  }
  const mf_simplex_mesh *whole = m->root ? mf_simplex_root_mesh(m->root) : m; /* the tags of every rank's facets */
  for (int k = 0; k < ntags; k++) {
    int found = 0;
    for (int t = 0; t < whole->nfacets && !found; t++) found = whole->facet_tag[t] == tags[k];
    MF_CHECK(found, ctx, MF_ERR_ARGUMENT, "Dirichlet tag %d (entry %d): no boundary facet carries it", tags[k], k);
  }
  if (m->root) { /* held in parts: the marks from the coarse entities that hold the DoFs */
    unsigned char *dbc = NULL;
    int *keep = NULL;
    int ierr = MF_CALLOC(ctx, (size_t)ss->dofs.ndofs + 1, &dbc);
    if (!ierr) ierr = MF_CALLOC(ctx, (size_t)ntags + 1, &keep);
    if (!ierr) ierr = mf_simplex_parts_marks(space, ntags, tags, dbc);
    if (!ierr) ierr = set_marks(space, dbc, 0);
    if (!ierr) {
      if (ntags) memcpy(keep, tags, sizeof(int) * ntags);
      free(ss->tags);
      ss->tags = keep, keep = NULL;
      ss->ntags = ntags;
    }
    free(dbc);
    free(keep);
    return ierr;
  }
  /* the DoFs of the chosen facets: the numbering again on the mesh with those facets only */
  mf_simplex_mesh view = *m;
  int *facets = NULL, *ftag = NULL, *keep = NULL;
  mf_simplex_dofs d;
  memset(&d, 0, sizeof d);
  int ierr = MF_CALLOC(ctx, (size_t)m->nfacets * m->dim + 1, &facets);
  if (!ierr) ierr = MF_CALLOC(ctx, (size_t)m->nfacets + 1, &ftag);
  if (!ierr) ierr = MF_CALLOC(ctx, (size_t)ntags + 1, &keep);
  if (!ierr) {
    view.nfacets = 0;
    for (int t = 0; t < m->nfacets; t++) {
      int on = 0;
      for (int k = 0; k < ntags; k++) on = on || m->facet_tag[t] == tags[k];
      if (!on) continue;
      memcpy(&facets[(size_t)view.nfacets * m->dim], &m->facets[(size_t)t * m->dim], sizeof(int) * m->dim);
      ftag[view.nfacets++] = m->facet_tag[t];
    }
    view.facets = facets;
    view.facet_tag = ftag;
    ierr = mf_simplex_dofs_create(ctx, &view, &ss->basis, &d);
  }
  if (!ierr) ierr = set_marks(space, d.bc, 1);
  if (!ierr) {
    if (ntags) memcpy(keep, tags, sizeof(int) * ntags);
    free(ss->tags);
    ss->tags = keep;
    ss->ntags = ntags;
    keep = NULL;
  }
  mf_simplex_dofs_free(&d);
  free(facets);
  free(ftag);
  free(keep);
  return ierr;
}

/* ------------------------------------------------------------------ integrals over the cells */

/* Quadrature points of cell e: x_q = v0 + sum_l (v_l+1 - v0) xi_q,l; returns |det J|. */
static double cell_points(const mf_simplex_mesh *m, const mf_simplex_basis *b, int e, double *xq)
{
  const int dim = m->dim, *v = m->cells + (size_t)e * (dim + 1);
  double X[12], Ji[3][3];
  for (int i = 0; i <= dim; i++)
    for (int k = 0; k < dim; k++) X[i * dim + k] = m->coords[3 * v[i] + k];
  for (int q = 0; q < b->nq; q++)
    for (int k = 0; k < dim; k++) {
      double x = X[k];
      for (int l = 0; l < dim; l++) x += (X[(l + 1) * dim + k] - X[k]) * b->qpts[q * dim + l];
      xq[q * dim + k] = x;
    }
  return fabs(mf_simplex_affine(dim, X, Ji, NULL));
}

void mf_simplex_point_text(const mf_simplex_mesh *m, const mf_simplex_basis *b, int e, int q, char *buf, size_t n)
{
  double x[3];
  mf_simplex_point(m, b, e, q, x);
  int len = snprintf(buf, n, "(");
  for (int k = 0; k < m->dim; k++) len += snprintf(buf + len, n - (size_t)len, k ? ", %g" : "%g", x[k]);
  snprintf(buf + len, n - (size_t)len, ")");
}

#define MF_SX_CELLS_CHUNK 65536

int mf_simplex_cells_sum(mf_context ctx, int ncells, int N, int nc, const int *cell_dofs,
                         void (*cell)(int e, double *ve, void *user), void *user, double *sum)
{
  const size_t per = (size_t)N * nc;
  double *buf = NULL;
  MF_CALL(MF_CALLOC(ctx, (size_t)MF_SX_CELLS_CHUNK * per, &buf));
  for (int c0 = 0; c0 < ncells; c0 += MF_SX_CELLS_CHUNK) {
    const int c1 = ncells - c0 < MF_SX_CELLS_CHUNK ? ncells : c0 + MF_SX_CELLS_CHUNK;
#pragma omp parallel for schedule(static)
    for (int e = c0; e < c1; e++) cell(e, buf + (size_t)(e - c0) * per, user);
    for (int e = c0; e < c1; e++) {
      const int *cd = cell_dofs + (size_t)e * N;
      const double *ve = buf + (size_t)(e - c0) * per;
      for (int i = 0; i < N; i++)
        for (int c = 0; c < nc; c++) sum[(size_t)cd[i] * nc + c] += ve[i * nc + c];
    }
  }
  free(buf);
  return 0;
}

/* the most points of a rule: degree 2 MF_SIMPLEX_MAX_DEGREE + 2 in 3D, ceil((q + 3) / 2)^3 */
#define MF_SX_MAX_NQ_1D ((2 * MF_SIMPLEX_MAX_DEGREE + 2 + 4) / 2)
#define MF_SX_MAX_NQ (MF_SX_MAX_NQ_1D * MF_SX_MAX_NQ_1D * MF_SX_MAX_NQ_1D)

typedef struct {
  const mf_simplex_mesh *m;
  const mf_simplex_basis *b;
  mf_coefficient_fn f;
  void *user;
  mf_bad_point *bad; /* the first point where f is not finite */
} rhs_cells;

/* b_e[i] = sum_q w_q |det J| f(x_q) phi_i(x_q) of cell e */
static void rhs_cell(int e, double *be, void *p)
{
  const rhs_cells *r = (const rhs_cells *)p;
  const mf_simplex_basis *b = r->b;
  const int dim = r->m->dim, N = b->nnodes, nq = b->nq;
  double xq[3 * MF_SX_MAX_NQ], fq[MF_SX_MAX_NQ];
  const double det = cell_points(r->m, b, e, xq);
  for (int q = 0; q < nq; q++) {
    const double fv = r->f(&xq[q * dim], dim, r->user);
    if (!isfinite(fv)) mf_bad_point_note(r->bad, e, q, dim, &xq[q * dim], 1, &fv);
    fq[q] = fv * b->qwts[q] * det;
  }
  for (int i = 0; i < N; i++) {
    double sum = 0.0;
    for (int q = 0; q < nq; q++) sum += b->B[(size_t)q * N + i] * fq[q];
    be[i] = sum;
  }
}

int mf_simplex_space_rhs(mf_space s, mf_coefficient_fn f, void *user, double *bv)
{
  const mf_simplex_space *ss = (const mf_simplex_space *)s->fdata;
  MF_CHECK(s->ncomp == 1, s->ctx, MF_ERR_UNSUPPORTED, "right-hand sides of spaces of %d components: not supported",
           s->ncomp);
  mf_bad_point bad = MF_BAD_POINT_NONE;
  rhs_cells r = {mf_simplex_space_mesh(s), &ss->basis, f, user, &bad};
  memset(bv, 0, sizeof(double) * (size_t)s->nlocal);
  MF_CALL(mf_simplex_cells_sum(s->ctx, r.m->ncells, ss->basis.nnodes, 1, s->cell_nodes, rhs_cell, &r, bv));
  return mf_bad_point_refuse(s->ctx, &bad, s->dim, "right-hand side f", "f");
}

/* The per-cell squared errors on the finer rule basis_l2: of the values (u given: L2) or of the gradients
 * (grad_u given: the H1 seminorm; grad u_h at a point is J^-T times the reference gradient, affine cell,
 * J^-1 from the vertices). A value of u or grad_u that is not finite is refused at the first such point. */
static int error_cells(mf_space s, const double *uh, mf_coefficient_fn u, mf_gradient_fn grad_u, void *user,
                       double *cellsum)
{
  const mf_simplex_space *ss = (const mf_simplex_space *)s->fdata;
  const mf_simplex_mesh *m = mf_simplex_space_mesh(s);
  const mf_simplex_basis *b = &ss->basis_l2;
  const char *norm = u ? "L2" : "H1";
  MF_CHECK(s->ncomp == 1, s->ctx, MF_ERR_UNSUPPORTED, "%s errors of spaces of %d components: not supported", norm,
           s->ncomp);
  const int dim = s->dim, N = b->nnodes, nq = b->nq;
  int ierr = 0;
  mf_bad_point bad = MF_BAD_POINT_NONE; /* refused below, at the first such point */
#pragma omp parallel
  {
    double *xq = NULL;
    int lerr = MF_CALLOC(NULL, (size_t)nq * dim, &xq);
    mf_thread_note(&ierr, lerr);
#pragma omp for schedule(static)
    for (int e = 0; e < m->ncells; e++) {
      if (lerr) continue;
      const int *v = m->cells + (size_t)e * (dim + 1), *cd = s->cell_nodes + (size_t)e * N;
      double X[12], Ji[3][3];
      if (!u) {
        for (int i = 0; i <= dim; i++)
          for (int k = 0; k < dim; k++) X[i * dim + k] = m->coords[3 * v[i] + k];
        mf_simplex_affine(dim, X, Ji, NULL);
      }
      const double det = cell_points(m, b, e, xq);
      double sum = 0.0;
      for (int q = 0; q < nq; q++) {
        if (u) {
          double vh = 0.0;
          for (int i = 0; i < N; i++) vh += b->B[(size_t)q * N + i] * uh[cd[i]];
          const double uq = u(&xq[q * dim], dim, user);
          if (!isfinite(uq)) mf_bad_point_note(&bad, e, q, dim, &xq[q * dim], 1, &uq);
          const double d = vh - uq;
          sum += d * d * b->qwts[q] * det;
          continue;
        }
        const double *gr = b->G + (size_t)q * N * dim;
        double gh[3] = {0.0, 0.0, 0.0}, g[3] = {0.0, 0.0, 0.0};
        for (int i = 0; i < N; i++)
          for (int l = 0; l < dim; l++) gh[l] += gr[i * dim + l] * uh[cd[i]];
        grad_u(&xq[q * dim], dim, g, user);
        if (mf_bad_point_note_vector(&bad, e, q, dim, &xq[q * dim], g)) break;
        double d2 = 0.0;
        for (int k = 0; k < dim; k++) { /* d u_h / d x_k = sum_l d u_h / d xi_l (J^-1)_lk */
          double gk = 0.0;
          for (int l = 0; l < dim; l++) gk += Ji[l][k] * gh[l];
          d2 += (gk - g[k]) * (gk - g[k]);
        }
        sum += d2 * b->qwts[q] * det;
      }
      cellsum[e] = sum;
    }
    free(xq);
  }
  MF_CALL(mf_thread_work_check(s->ctx, ierr, u ? "L2 error" : "H1 error"));
  return u ? mf_bad_point_refuse(s->ctx, &bad, dim, "exact solution u", "u")
           : mf_bad_point_refuse(s->ctx, &bad, dim, "gradient of u", "the gradient");
}

int mf_simplex_space_l2_cells(mf_space s, const double *uh, mf_coefficient_fn u, void *user, double *cellsum)
{
  return error_cells(s, uh, u, NULL, user, cellsum);
}

int mf_simplex_space_h1_cells(mf_space s, const double *uh, mf_gradient_fn grad_u, void *user, double *cellsum)
{
  return error_cells(s, uh, NULL, grad_u, user, cellsum);
}
