/* space_hex.c -- the hex family's spaces (lib/family.h): continuous Q_p on Gauss-Lobatto points of a
 * p4est forest. The numbering comes from forest.c (p4est_lnodes, or dofs.c on a uniform forest on one
 * rank); here the Dirichlet marks from the boundary faces, the hanging-node masks, the cell colors and
 * launch order, the DoF owners and points, and the cell geometry nodes. The space keeps them in its hex
 * fields of mf_space_s (face_code, cell_tree, ..., read by lib/hex/, lib/hanging/ and lib/cuda/). */
#include "mf_hex.h"
#include "hex/mf_hex_op.h"

#include <math.h>
#include <stdio.h>

/* Atomic minimum of an int (relaxed: only the final value matters). */
static inline void atomic_min_int(int *p, int v)
{
#if defined(_OPENMP) && defined(__GNUC__)
  int cur = __atomic_load_n(p, __ATOMIC_RELAXED);
  while (v < cur && !__atomic_compare_exchange_n(p, &cur, v, 1, __ATOMIC_RELAXED, __ATOMIC_RELAXED)) {
  }
#elif defined(_OPENMP)
#pragma omp critical(mf_atomic_min)
  if (v < *p) *p = v;
#else
  if (v < *p) *p = v;
#endif
}

/* Positions of a cell that decide whether two cells share a DoF: its 2^dim corners and, on a cell
 * with a mask, its constrained positions. Two cells sharing a DoF share one of these: a DoF seen at
 * own (unconstrained) positions by both is a node of an entity (vertex, edge, face) both have, whose
 * corner vertices both have; a coarse DoF seen at a constrained position lies on a coarse face or
 * edge whose corners the coarse cell has as corners and the fine cell has at constrained positions. */
static int conflict_positions(const mf_space s, int e, int *pos)
{
  const int n1 = s->n1, p = s->degree, nc = 1 << s->dim;
  int n = 0;
  for (int c = 0; c < nc; c++) pos[n++] = (c & 1) * p + n1 * ((c >> 1 & 1) * p + n1 * ((c >> 2 & 1) * p));
  const int mask = s->face_code[e];
  if (mask)
    for (int k = 0; k < s->npc; k++)
      if (mf_hanging_node_constrained(s->dim, n1, mask, k)) pos[n++] = k;
  return n;
}

/* Greedy first-fit coloring on the cell-DoF graph restricted to the positions above (each DoF
 * remembers the colors of its cells in a 64-bit mask): the same colors as on all positions, at
 * 2^dim instead of (p+1)^dim lookups per cell on conforming cells. Inherently sequential; linear in
 * the cells. Cells keep the p4est (Morton) order, which keeps neighbouring cells close in memory for
 * the atomic scatter; color_cells lists the cells color by color for the colored scatter. Made at
 * set-up on the cpu backend (its parallel loops scatter color by color); on the cuda backend when the
 * colored scatter is first used. */
int mf_space_colors(mf_space s)
{
  if (s->color_off) return 0;
  mf_context ctx = s->ctx;
  const int n = s->ncells;
  uint64_t *dofmask = NULL;
  int *color = NULL, *count = NULL, *pos = NULL, ierr = 0;
  ierr = MF_CALLOC_TOUCH(ctx, s->nlocal, &dofmask);
  if (!ierr) ierr = MF_CALLOC_TOUCH(ctx, n, &color);
  if (!ierr) ierr = MF_CALLOC(ctx, 65, &count);
  if (!ierr) ierr = MF_CALLOC(ctx, s->npc + 8, &pos);
  if (ierr) goto done;
  s->ncolors = 0;
  for (int e = 0; e < n; e++) {
    const int *nodes = &s->cell_nodes[(size_t)e * s->npc];
    const int np = conflict_positions(s, e, pos);
    uint64_t used = 0;
    for (int i = 0; i < np; i++) used |= dofmask[nodes[pos[i]]];
    MF_CHECK_GOTO(~used != 0, ctx, MF_ERR_UNSUPPORTED, done, "cell %d needs more than 64 colors", e);
    int c = 0;
    while (used >> c & 1) c++;
    color[e] = c;
    count[c + 1]++;
    if (c + 1 > s->ncolors) s->ncolors = c + 1;
    for (int i = 0; i < np; i++) dofmask[nodes[pos[i]]] |= (uint64_t)1 << c;
  }
  MF_CALL_GOTO(MF_CALLOC(ctx, s->ncolors + 1, &s->color_off), done);
  MF_CALL_GOTO(MF_CALLOC_TOUCH(ctx, n, &s->color_cells), done);
  for (int c = 0; c < s->ncolors; c++) s->color_off[c + 1] = s->color_off[c] + count[c + 1];
  for (int c = 0; c <= s->ncolors; c++) count[c] = s->color_off[c];
  for (int e = 0; e < n; e++) s->color_cells[count[color[e]]++] = e;
done:
  if (ierr) { /* nothing half made: the next call starts over */
    free(s->color_off);
    free(s->color_cells);
    s->color_off = NULL;
    s->color_cells = NULL;
    s->ncolors = 0;
  }
  free(dofmask);
  free(color);
  free(count);
  free(pos);
  return ierr;
}

/* The cells with a mask, ascending; every mask checked against the layout. */
static int masked_cells(mf_space s)
{
  int bad = -1;
  s->nmasked = 0;
  for (int e = 0; e < s->ncells; e++) {
    if (!s->face_code[e]) continue;
    if (bad < 0 && mf_hanging_check(s->dim, s->face_code[e])) bad = e;
    s->nmasked++;
  }
  MF_CHECK(bad < 0, s->ctx, MF_ERR_ARGUMENT, "cell %d: invalid hanging-node mask %d from p4est_lnodes", bad,
           bad < 0 ? 0 : (int)s->face_code[bad]);
  MF_CALL(MF_CALLOC(s->ctx, s->nmasked, &s->masked_cells));
  for (int e = 0, k = 0; e < s->ncells; e++)
    if (s->face_code[e]) s->masked_cells[k++] = e;
  return 0;
}

/* Within a chunk the cells go by child id (their position in the parent: cells of one child id in a
 * chunk never touch on a uniform mesh, so they add into different DoFs), and cells without a mask
 * before those with one; a counting sort per chunk, chunks in parallel. */
static inline int launch_key(const mf_space s, int e)
{
  const int shift = s->root_log - s->cell_level[e]; /* log2 of the cell's edge */
  int child = 0;
  for (int d = 0; d < s->dim; d++) child |= (int)((s->cell_q[3 * (size_t)e + d] >> shift) & 1) << d;
  return 2 * child + (s->face_code[e] != 0);
}

int mf_space_launch_order(mf_space s, int chunk, int *order)
{
  if (chunk <= 0) {
    for (int e = 0; e < s->ncells; e++) order[e] = e;
    return 0;
  }
  const int nkey = 2 << s->dim, nchunk = (s->ncells + chunk - 1) / chunk;
#pragma omp parallel
  {
    int cnt[2 * 8 + 1];
#pragma omp for schedule(static)
    for (int ch = 0; ch < nchunk; ch++) {
      const int start = ch * chunk, end = start + chunk < s->ncells ? start + chunk : s->ncells;
      memset(cnt, 0, sizeof(int) * (size_t)(nkey + 1));
      for (int e = start; e < end; e++) cnt[launch_key(s, e) + 1]++;
      for (int k = 0; k < nkey; k++) cnt[k + 1] += cnt[k];
      for (int e = start; e < end; e++) order[start + cnt[launch_key(s, e)]++] = e;
    }
  }
  return 0;
}

/* Dirichlet marks: every node (all nc components of it) of a cell face on the domain boundary whose
 * face number f is selected (bit f of faces: the boundary tags, mf_hex_space_dirichlet_tags); a boundary
 * node seen from any rank is a boundary node everywhere (export-add, import). Collective: called on
 * every rank with the agreed code so far, its local part runs where ierr is 0, then the ranks agree
 * before exchanging. */
static int dirichlet_marks(mf_space s, int ierr, unsigned faces, int nc)
{
  mf_context ctx = s->ctx;
  const int n1 = s->n1, npc = s->npc, dim = s->dim, ncells = s->ncells, nlocal = s->nlocal;
  double *mark = NULL;
  free(s->bc);
  free(s->bc_list);
  s->bc = NULL;
  s->bc_list = NULL;
  s->nbc = 0;
  if (!ierr) ierr = MF_CALLOC_TOUCH(ctx, nlocal, &s->bc);
  if (!ierr && s->ex.nneigh) ierr = MF_CALLOC(ctx, nlocal, &mark);
  if (!ierr) {
#pragma omp parallel for schedule(static)
    for (int e = 0; e < ncells; e++) {
      const unsigned bf = s->cell_bfaces[e] & faces;
      if (!bf) continue;
      const int *nodes = &s->cell_nodes[(size_t)e * npc];
      for (int node = 0; node < npc; node++) {
        int ijk[3] = {node % n1, (node / n1) % n1, node / (n1 * n1)}, on = 0;
        for (int f = 0; f < 2 * dim; f++)
          if ((bf >> f & 1) && ijk[f / 2] == ((f % 2) ? n1 - 1 : 0)) on = 1;
        if (on)
          for (int c = 0; c < nc; c++) {
#pragma omp atomic write
            s->bc[(size_t)nodes[node] * nc + c] = 1;
          }
      }
    }
  }
  ierr = mf_agree(ctx, ierr); /* the exchange below waits for every neighbour */
  if (!ierr && s->ex.nneigh) {
    for (int i = 0; i < nlocal; i++) mark[i] = s->bc[i];
    ierr = mf_exchange_export_add(ctx, &s->ex, mark);
    if (!ierr) ierr = mf_exchange_import(ctx, &s->ex, mark);
    for (int i = 0; i < nlocal; i++) s->bc[i] = mark[i] > 0.0;
  }
  free(mark);
  if (ierr) return ierr;
  /* the list, ascending: counts per block of DoFs, offsets, then each block fills its part */
  enum { NB = 256 };
  int off[NB + 1] = {0};
  const int blk = (nlocal + NB - 1) / NB;
#pragma omp parallel for schedule(static)
  for (int b = 0; b < NB; b++) {
    int c = 0;
    for (int i = b * blk; i < nlocal && i < (b + 1) * blk; i++) c += s->bc[i];
    off[b + 1] = c;
  }
  for (int b = 0; b < NB; b++) off[b + 1] += off[b];
  MF_CALL(MF_CALLOC(ctx, off[NB], &s->bc_list));
  s->nbc = off[NB]; /* with its list only */
#pragma omp parallel for schedule(static)
  for (int b = 0; b < NB; b++)
    for (int i = b * blk, k = off[b]; i < nlocal && i < (b + 1) * blk; i++)
      if (s->bc[i]) s->bc_list[k++] = i;
  return 0;
}

/* The owner of every DoF: the first cell (in cell order) that has it at an own (unconstrained)
 * position, and that position, so that its point is computed once and the same whatever the thread
 * count. The uniform numbering (lib/hex/dofs.c) knows them; otherwise an atomic minimum over the cells.
 * Collective (see dirichlet_marks). */
static int node_owners(mf_space s, int ierr)
{
  mf_context ctx = s->ctx;
  const int dim = s->dim, n1 = s->n1, npc = s->npc, ncells = s->ncells, nlocal = s->nlocal;
  if (!ierr && !s->dof_owner) {
    ierr = MF_CALLOC_TOUCH(ctx, nlocal, &s->dof_owner);
    if (!ierr) ierr = MF_CALLOC_TOUCH(ctx, nlocal, &s->dof_pos);
    if (!ierr) {
      int *owner = s->dof_owner;
#pragma omp parallel for schedule(static)
      for (int i = 0; i < nlocal; i++) owner[i] = ncells;
#pragma omp parallel for schedule(static)
      for (int e = 0; e < ncells; e++) {
        const int *nodes = &s->cell_nodes[(size_t)e * npc], mask = s->face_code[e];
        for (int k = 0; k < npc; k++)
          if (!mask || !mf_hanging_node_constrained(dim, n1, mask, k)) atomic_min_int(&owner[nodes[k]], e);
      }
#pragma omp parallel for schedule(static)
      for (int e = 0; e < ncells; e++) {
        const int *nodes = &s->cell_nodes[(size_t)e * npc], mask = s->face_code[e];
        for (int k = 0; k < npc; k++)
          if (owner[nodes[k]] == e && (!mask || !mf_hanging_node_constrained(dim, n1, mask, k)))
            s->dof_pos[nodes[k]] = (uint16_t)k;
      }
    }
  }
  ierr = mf_agree(ctx, ierr);
  if (ierr) return ierr;
  int complete = 1;
#pragma omp parallel for schedule(static) reduction(&& : complete)
  for (int i = 0; i < nlocal; i++) complete = complete && s->dof_owner[i] < ncells;
  /* the same answer on every rank: what depends on it may exchange */
  int rc = MPI_Allreduce(MPI_IN_PLACE, &complete, 1, MPI_INT, MPI_MIN, ctx->comm);
  MF_CHECK(rc == MPI_SUCCESS, ctx, MF_ERR_MPI, "MPI_Allreduce failed (%d)", rc);
  s->owners_complete = complete;
  return 0;
}

/* The point of a DoF from its owner cell and its node there (owners_complete; thread-safe). */
void mf_hex_dof_point(mf_space s, int dof, double *x)
{
  const int n1 = s->n1, k = s->dof_pos[dof];
  const double xi[3] = {s->gll[k % n1], s->gll[(k / n1) % n1], s->gll[k / (n1 * n1)]};
  mf_space_cell_point(s, s->dof_owner[dof], xi, x);
}

/* Node coordinates on the host, OpenMP over the DoFs. DoFs that this rank sees only at constrained
 * positions (possible for ghosts) get their point from the ranks that see them: export-add of points
 * and counts, import. Where it is made on every rank at once (set-up), every rank gets here. */
int mf_hex_node_points(mf_space s)
{
  if (s->coords) return 0;
  mf_context ctx = s->ctx;
  const int dim = s->dim, ncells = s->ncells, nlocal = s->nlocal;
  const int *owner = s->dof_owner;
  double *coords = NULL, *v = NULL, *cnt = NULL;
  int ierr = MF_CALLOC_TOUCH(ctx, (size_t)nlocal * dim, &coords);
  if (!ierr && s->ex.nneigh) ierr = MF_CALLOC(ctx, nlocal, &v);
  if (!ierr && s->ex.nneigh) ierr = MF_CALLOC(ctx, nlocal, &cnt);
  if (!ierr) {
#pragma omp parallel for schedule(static)
    for (int i = 0; i < nlocal; i++)
      if (owner[i] < ncells) mf_hex_dof_point(s, i, &coords[(size_t)i * dim]);
  }
  ierr = mf_agree(ctx, ierr); /* before the exchanges */
  if (!ierr && s->ex.nneigh) {
    for (int i = 0; i < nlocal; i++) cnt[i] = owner[i] < ncells;
    ierr = mf_exchange_export_add(ctx, &s->ex, cnt);
    for (int k = 0; k < dim && !ierr; k++) {
      for (int i = 0; i < nlocal; i++) v[i] = owner[i] < ncells ? coords[(size_t)i * dim + k] : 0.0;
      ierr = mf_exchange_export_add(ctx, &s->ex, v);
      for (int i = 0; i < s->nowned && !ierr; i++)
        if (cnt[i] > 0) v[i] /= cnt[i];
      if (!ierr) ierr = mf_exchange_import(ctx, &s->ex, v);
      for (int i = 0; i < nlocal && !ierr; i++) coords[(size_t)i * dim + k] = v[i];
    }
  }
  free(v);
  free(cnt);
  if (ierr) {
    free(coords);
    return ierr;
  }
  s->coords = coords;
  return 0;
}

/* Host memory of a space (bytes, this rank): per cell its DoF list twice (p4est_lnodes' and ours,
 * both alive while it is copied) and a few per-cell arrays; per DoF (about p^dim per cell) its point,
 * owner, marks and the exchange lists. */
static double space_bytes(const struct mf_mesh_s *m, int degree, double *ndofs)
{
  const double cells = (double)m->ncells_local, npc = pow(degree + 1, m->dim);
  *ndofs = cells * pow(degree, m->dim) * 1.25 + npc;
  return cells * (8.0 * npc + 64.0) + *ndofs * (8.0 * m->dim + 32.0);
}

/* One array of n entries per node made into n * nc entries, node i's value at i * nc + c (size: bytes
 * per entry). */
static int expand_array(mf_context ctx, void **a, size_t n, int nc, size_t size)
{
  if (!*a) return 0;
  unsigned char *b = NULL, *old = (unsigned char *)*a;
  MF_CALL(MF_CALLOC(ctx, n * (size_t)nc * size + 1, &b));
  for (size_t i = 0; i < n; i++)
    for (int c = 0; c < nc; c++) memcpy(b + (i * (size_t)nc + (size_t)c) * size, old + i * size, size);
  free(old);
  *a = b;
  return 0;
}

/* The same for a list of node indices (exchange lists, the Dirichlet list): node i becomes the entries
 * i * nc .. i * nc + nc - 1, in order. */
static int expand_list(mf_context ctx, int **a, int n, int nc)
{
  int *b = NULL;
  MF_CALL(MF_CALLOC(ctx, (size_t)n * nc + 1, &b));
  for (int i = 0; i < n; i++)
    for (int c = 0; c < nc; c++) b[(size_t)i * nc + c] = (*a)[i] * nc + c;
  free(*a);
  *a = b;
  return 0;
}

/* A space of nc components from its scalar numbering (made above): the components of a node are
 * interleaved (entry node * nc + c), as on simplex spaces; cell_nodes keeps the nodes, and every per-DoF
 * array (marks, owners, points, exchange lists, sizes) is widened to the entries. Not collective. */
static int expand_components(mf_space s, int nc)
{
  mf_context ctx = s->ctx;
  const size_t n = (size_t)s->nlocal;
  mf_exchange *ex = &s->ex;
  MF_CALL(expand_array(ctx, (void **)&s->bc, n, nc, sizeof *s->bc));
  MF_CALL(expand_list(ctx, &s->bc_list, s->nbc, nc));
  MF_CALL(expand_array(ctx, (void **)&s->dof_owner, n, nc, sizeof *s->dof_owner));
  MF_CALL(expand_array(ctx, (void **)&s->dof_pos, n, nc, sizeof *s->dof_pos));
  MF_CALL(expand_array(ctx, (void **)&s->coords, n, nc, sizeof *s->coords * (size_t)s->dim));
  if (ex->nneigh) {
    const int nsend = ex->send_off[ex->nneigh], nrecv = ex->recv_off[ex->nneigh];
    MF_CALL(expand_list(ctx, &ex->send_idx, nsend, nc));
    MF_CALL(expand_list(ctx, &ex->recv_idx, nrecv, nc));
    for (int k = 0; k <= ex->nneigh; k++) {
      ex->send_off[k] *= nc;
      ex->recv_off[k] *= nc;
    }
    const size_t nbuf = (size_t)(nsend > nrecv ? nsend : nrecv) * nc;
    free(ex->send_buf);
    free(ex->recv_buf);
    ex->send_buf = ex->recv_buf = NULL;
    MF_CALL(MF_CALLOC(ctx, nbuf + 1, &ex->send_buf));
    MF_CALL(MF_CALLOC(ctx, nbuf + 1, &ex->recv_buf));
  }
  s->nbc *= nc;
  s->nowned *= nc;
  s->nlocal *= nc;
  s->nglobal *= nc;
  s->global_offset *= nc;
  return 0;
}

/* Q_p on the forest, of ncomp components (1..MF_MAX_COMPONENTS) interleaved per node. */
int mf_hex_space_create(mf_mesh mesh, int degree, int ncomp, mf_space *space)
{
  mf_context ctx = mesh->ctx;
  MF_CHECK(degree >= 1 && degree <= MF_MAX_DEGREE, ctx, MF_ERR_ARGUMENT,
           "degree %d out of range 1..%d", degree, MF_MAX_DEGREE);
  MF_CHECK(ncomp >= 1 && ncomp <= MF_MAX_COMPONENTS, ctx, MF_ERR_ARGUMENT,
           "components per DoF %d out of range 1..%d", ncomp, MF_MAX_COMPONENTS);
  /* Collective: every step that can fail on one rank alone (memory, CUDA) is agreed on before the
   * next collective step (p4est_lnodes, the exchanges), so no rank waits for one that returned. */
  double ndofs = 0.0;
  const double bytes = space_bytes(mesh, degree, &ndofs);
  int ierr = 0;
  if (ndofs * ncomp > INT32_MAX)
    ierr = mf_error_set(ctx, MF_ERR_ARGUMENT, __FILE__, __LINE__, __func__,
                        "degree %d on %lld cells of this rank makes about %.3g DoFs per rank (of %d components); at "
                        "most %d: use more ranks",
                        degree, (long long)mesh->ncells_local, ndofs * ncomp, ncomp, INT32_MAX);
  if (!ierr) {
    char what[96];
    snprintf(what, sizeof what, "a degree-%d space on %lld cells", degree, (long long)mesh->ncells_global);
    ierr = mf_host_require(ctx, bytes, what);
  }
  mf_space s = NULL;
  if (!ierr) ierr = MF_CALLOC(ctx, 1, &s);
  ierr = mf_agree(ctx, ierr);
  if (ierr) {
    free(s);
    return ierr;
  }
  mf_space_init(s, mesh, degree, ncomp);
  *space = s; /* from here on a failure is agreed on and the space destroyed by mf_space_create */
  s->npc = s->dim == 2 ? s->n1 * s->n1 : s->n1 * s->n1 * s->n1;
  double w[MF_MAX_N1];
  mf_gauss_lobatto(s->n1, s->gll, w);
  mf_hanging_matrices(degree, s->hanging_P);
  double t0 = mf_phase_begin(ctx);
  ierr = s->dim == 2 ? mf_forest_space_2d(s) : mf_forest_space_3d(s); /* p4est's collective steps come first */
  mf_phase_end(ctx, MF_PHASE_DOFS, t0);
  t0 = mf_phase_begin(ctx);
  ierr = dirichlet_marks(s, mf_agree(ctx, ierr), 0xffu, 1); /* the whole boundary (before the components widen) */
  mf_phase_end(ctx, MF_PHASE_DIRICHLET, t0);
  if (!ierr) {
    t0 = mf_phase_begin(ctx);
    ierr = masked_cells(s);
    if (!ierr && ctx->backend == MF_BACKEND_CPU) ierr = mf_space_colors(s);
    if (!ierr && ctx->backend == MF_BACKEND_CUDA) { /* chunks of 1024 cells: docs/performance.md */
      const char *env = getenv("MF_CUDA_ATOMIC_CHUNK");
      ierr = MF_CALLOC_TOUCH(ctx, s->ncells, &s->launch_order);
      if (!ierr) ierr = mf_space_launch_order(s, env ? atoi(env) : 1024, s->launch_order);
    }
    mf_phase_end(ctx, MF_PHASE_ORDERING, t0);
  }
  /* the cuda backend computes the points on the device on one rank; with several, the host array
   * (collective: its exchange makes a shared DoF's point the same on every rank) is made here, on
   * every rank, so that no later call makes it on some ranks only */
  t0 = mf_phase_begin(ctx);
  ierr = node_owners(s, ierr); /* agreed */
  if (!ierr && (ctx->backend == MF_BACKEND_CPU || ctx->size > 1 || !s->owners_complete))
    ierr = mf_hex_node_points(s);
  mf_phase_end(ctx, MF_PHASE_COORDINATES, t0);
  if (!ierr && ncomp > 1) ierr = expand_components(s, ncomp);
  return ierr;
}

void mf_hex_space_destroy(mf_space s)
{
  free(s->face_code);
  free(s->cell_tree);
  free(s->cell_q);
  free(s->cell_level);
  free(s->cell_bfaces);
  free(s->masked_cells);
  free(s->dof_owner);
  free(s->dof_pos);
  free(s->color_off);
  free(s->color_cells);
  free(s->launch_order);
}

void mf_space_cell_point(mf_space space, int cell, const double *xi, double *x)
{
  double s[3] = {0, 0, 0}, o[3], h;
  mf_space_cell_box(space, cell, o, &h);
  for (int k = 0; k < space->dim; k++) s[k] = o[k] + h * xi[k];
  mf_mesh_map_point(space->mesh, space->cell_tree[cell], s, x);
}

void mf_space_cell_coords(mf_space space, int cell, double *X)
{
  const int dim = space->dim, npc = space->npc;
  const int *nodes = &space->cell_nodes[(size_t)cell * npc];
  double comp[MF_MAX_N1 * MF_MAX_N1 * MF_MAX_N1];
  for (int k = 0; k < dim; k++) {
    for (int node = 0; node < npc; node++) comp[node] = space->coords[(size_t)nodes[node] * space->ncomp * dim + k];
    mf_hanging_apply(dim, space->n1, space->face_code[cell], space->hanging_P, comp, 0);
    for (int node = 0; node < npc; node++) X[node * dim + k] = comp[node];
  }
}


/* The Dirichlet DoFs those of the domain faces with the given tags (lib/space.c checked the arguments):
 * box meshes (cube, deformed, sheared) tag their faces 1 + f, f the face number of p4est (x = 0, x = 1,
 * y = 0, y = 1, z = 0, z = 1: 1..2 dim); the ball its sphere 1. ntags < 0: the whole boundary again.
 * Collective (the marks are exchanged). */
int mf_hex_space_dirichlet_tags(mf_space s, int ntags, const int *tags)
{
  mf_context ctx = s->ctx;
  const int ball = mf_hexmesh(s->mesh)->map == MF_MAP_BALL, maxtag = ball ? 1 : 2 * s->dim;
  unsigned faces = ntags < 0 ? 0xffu : 0u;
  for (int k = 0; k < ntags; k++) {
    MF_CHECK(tags[k] >= 1 && tags[k] <= maxtag, ctx, MF_ERR_ARGUMENT,
             "boundary tag %d: %s meshes tag their boundary %s", tags[k], ball ? "ball" : "box",
             ball ? "1 (the sphere)" : s->dim == 2 ? "1..4 (x = 0, x = 1, y = 0, y = 1)"
                                                   : "1..6 (x = 0, x = 1, y = 0, y = 1, z = 0, z = 1)");
    faces |= ball ? 0xffu : 1u << (tags[k] - 1);
  }
  MF_CALL(mf_agree(ctx, dirichlet_marks(s, 0, faces, s->ncomp))); /* the list's allocation is this rank's */
  return s->dev ? mf_space_device_sync(s) : 0; /* new marks: on the device too */
}
