/* forest.c -- everything that touches p4est directly: the coarse meshes, the forest and ghost layer,
 * and the extraction of the DoF numbering (p4est_lnodes) into the plain arrays of mf_space.
 * Compiled once for 2D and, through forest3.c (p4est_to_p8est.h), once for 3D, as p4est does. */
#ifndef P4_TO_P8
#include <p4est_extended.h>
#include <p4est_ghost.h>
#include <p4est_lnodes.h>
#define MF_DIM 2
#define MF_DIMNAME(x) x##_2d
#else
#include <p8est_extended.h>
#include <p8est_ghost.h>
#include <p8est_lnodes.h>
#define MF_DIM 3
#define MF_DIMNAME(x) x##_3d
#endif
#include "space_impl.h"
#include "dofs.h"
#include "mf_hex.h"

#include <math.h>
#include <stdio.h>

#define NCORNER P4EST_CHILDREN
#define NFACE P4EST_FACES

/* The ball: an inner cube of half-width a and 2*dim outer trees reaching the cube of half-width 1,
 * which mf_mesh_map_point bends onto the sphere. Each tree keeps the global axes (right-handed).
 * With t > 1 every one of these trees is split into t^dim trees; the tree maps are multilinear, so
 * the split trees describe the same geometry. Shared vertices are merged by their coordinates. */
static int cmp_vertex(const void *pa, const void *pb)
{
  const double *a = (const double *)pa, *b = (const double *)pb;
  for (int k = 0; k < 3; k++) {
    double da = round(a[k] * 1e9), db = round(b[k] * 1e9);
    if (da != db) return da < db ? -1 : 1;
  }
  return 0;
}

static int ball_connectivity(mf_context ctx, double a, int t, p4est_connectivity_t **connp)
{
  /* t^dim split trees per base tree: counts and indices in size_t (7 t^3 passes 2^31 at t = 675) */
  const size_t nbase = 1 + 2 * MF_DIM, nsub = MF_DIM == 3 ? (size_t)t * t * t : (size_t)t * t, nt = nbase * nsub;
  *connp = NULL;
  /* corner coordinates of the base trees */
  double base[7][NCORNER][3];
  for (int c = 0; c < NCORNER; c++)
    for (int k = 0; k < 3; k++) base[0][c][k] = k < MF_DIM ? (((c >> k) & 1) ? a : -a) : 0.0;
  for (int k = 0; k < MF_DIM; k++)
    for (int sgn = 0; sgn < 2; sgn++) {
      int b = 1 + 2 * k + sgn;
      for (int c = 0; c < NCORNER; c++) {
        /* along axis k the tree runs from the inner to the outer cube (sgn = 1) or the reverse; the
         * other bits of c pick the side of the face, as on the corresponding cube corner */
        int bk = (c >> k) & 1, outer = sgn ? bk : !bk;
        double h = outer ? 1.0 : a;
        for (int l = 0; l < 3; l++) {
          if (l >= MF_DIM) base[b][c][l] = 0.0;
          else if (l == k) base[b][c][l] = sgn ? h : -h;
          else base[b][c][l] = ((c >> l) & 1) ? h : -h;
        }
      }
    }
  /* all corners of all split trees, then merged */
  double *corner = NULL, *uniq = NULL;
  int ierr = MF_CALLOC(ctx, 4 * nt * NCORNER, &corner);
  if (!ierr) ierr = mf_malloc(ctx, sizeof(double) * 4 * nt * NCORNER, &uniq);
  if (ierr) {
    free(corner);
    return ierr;
  }
  for (size_t b = 0; b < nbase; b++)
    for (size_t sub = 0; sub < nsub; sub++)
      for (int c = 0; c < NCORNER; c++) {
        const size_t idx[3] = {sub % t, (sub / t) % t, sub / ((size_t)t * t)};
        double s[3];
        for (int k = 0; k < 3; k++) s[k] = k < MF_DIM ? (idx[k] + ((c >> k) & 1)) / (double)t : 0.0;
        double *x = &corner[4 * ((b * nsub + sub) * NCORNER + c)];
        x[0] = x[1] = x[2] = 0.0;
        for (int v = 0; v < NCORNER; v++) {
          double w = 1.0;
          for (int k = 0; k < MF_DIM; k++) w *= ((v >> k) & 1) ? s[k] : 1.0 - s[k];
          for (int k = 0; k < 3; k++) x[k] += w * base[b][v][k];
        }
        x[3] = 0.0;
      }
  memcpy(uniq, corner, sizeof(double) * 4 * nt * NCORNER);
  qsort(uniq, nt * NCORNER, 4 * sizeof(double), cmp_vertex);
  size_t nv = 0;
  for (size_t i = 0; i < nt * NCORNER; i++)
    if (nv == 0 || cmp_vertex(&uniq[4 * i], &uniq[4 * (nv - 1)])) memmove(&uniq[4 * nv++], &uniq[4 * i], 4 * sizeof(double));
#ifndef P4_TO_P8
  p4est_connectivity_t *conn = p4est_connectivity_new((p4est_topidx_t)nv, (p4est_topidx_t)nt, 0, 0);
#else
  p4est_connectivity_t *conn = p4est_connectivity_new((p4est_topidx_t)nv, (p4est_topidx_t)nt, 0, 0, 0, 0);
#endif
  for (size_t v = 0; v < nv; v++)
    for (int k = 0; k < 3; k++) conn->vertices[3 * v + k] = uniq[4 * v + k];
  for (size_t tr = 0; tr < nt; tr++)
    for (int c = 0; c < NCORNER; c++) {
      const double *x = &corner[4 * (tr * NCORNER + c)];
      const double *hit = bsearch(x, uniq, nv, 4 * sizeof(double), cmp_vertex);
      conn->tree_to_vertex[NCORNER * tr + c] = (p4est_topidx_t)((hit - uniq) / 4);
    }
  free(corner);
  free(uniq);
  for (size_t tr = 0; tr < nt; tr++)
    for (int f = 0; f < NFACE; f++) {
      conn->tree_to_tree[NFACE * tr + f] = (p4est_topidx_t)tr;
      conn->tree_to_face[NFACE * tr + f] = (int8_t)f;
    }
  p4est_connectivity_complete(conn);
  *connp = conn;
  return 0;
}

/* The coarse mesh (on every rank alike), then the forest: collective, so that what can fail on one
 * rank alone (memory) is agreed on before p4est's collective calls. */
int MF_DIMNAME(mf_forest_create)(mf_mesh mesh)
{
  mf_context ctx = mesh->ctx;
  double tm = mf_phase_begin(ctx);
  p4est_connectivity_t *conn = NULL;
  int ierr = 0;
  if (mf_hexmesh(mesh)->map == MF_MAP_BALL) ierr = ball_connectivity(ctx, mf_hexmesh(mesh)->ball_inner, mf_hexmesh(mesh)->trees[0], &conn);
  else
#ifndef P4_TO_P8
    conn = p4est_connectivity_new_brick(mf_hexmesh(mesh)->trees[0], mf_hexmesh(mesh)->trees[1], 0, 0);
#else
    conn = p8est_connectivity_new_brick(mf_hexmesh(mesh)->trees[0], mf_hexmesh(mesh)->trees[1], mf_hexmesh(mesh)->trees[2], 0, 0, 0);
#endif
  if (!ierr && !p4est_connectivity_is_valid(conn))
    ierr = mf_error_set(ctx, MF_ERR_ARGUMENT, __FILE__, __LINE__, __func__, "invalid coarse mesh connectivity (%lld trees)",
                        (long long)conn->num_trees);
  if (!ierr) {
    mf_hexmesh(mesh)->ntrees = (int)conn->num_trees;
    ierr = MF_CALLOC(ctx, (size_t)mf_hexmesh(mesh)->ntrees * NCORNER * 3, &mf_hexmesh(mesh)->tree_vertices);
  }
  ierr = mf_agree(ctx, ierr);
  if (ierr) {
    if (conn) p4est_connectivity_destroy(conn);
    mf_phase_end(ctx, MF_PHASE_MESH, tm);
    return ierr;
  }
  for (int t = 0; t < mf_hexmesh(mesh)->ntrees; t++)
    for (int c = 0; c < NCORNER; c++) {
      double *v = &mf_hexmesh(mesh)->tree_vertices[3 * (NCORNER * (size_t)t + c)];
      memcpy(v, &conn->vertices[3 * conn->tree_to_vertex[NCORNER * (size_t)t + c]], 3 * sizeof(double));
      if (mf_hexmesh(mesh)->map != MF_MAP_BALL) /* the brick has integer vertices: scale it to the unit box */
        for (int k = 0; k < MF_DIM; k++) v[k] /= mf_hexmesh(mesh)->trees[k];
    }
  p4est_t *p4est = p4est_new_ext(ctx->comm, conn, 0, mesh->level, 1, 0, NULL, NULL);
  p4est_partition(p4est, 0, NULL);
  mf_phase_end(ctx, MF_PHASE_MESH, tm);
  mf_hexmesh(mesh)->conn = conn;
  mf_hexmesh(mesh)->owns_conn = 1;
  mf_hexmesh(mesh)->forest = p4est;
  mf_hexmesh(mesh)->ghost = NULL; /* made when p4est_lnodes needs it (see dofs_lnodes) */
  mesh->ncells_global = (int64_t)p4est->global_num_quadrants;
  mesh->ncells_local = (int64_t)p4est->local_num_quadrants;
  return 0;
}

void MF_DIMNAME(mf_forest_destroy)(mf_mesh mesh)
{
  if (mf_hexmesh(mesh)->ghost) p4est_ghost_destroy((p4est_ghost_t *)mf_hexmesh(mesh)->ghost);
  if (mf_hexmesh(mesh)->forest) p4est_destroy((p4est_t *)mf_hexmesh(mesh)->forest);
  if (mf_hexmesh(mesh)->conn && mf_hexmesh(mesh)->owns_conn) p4est_connectivity_destroy((p4est_connectivity_t *)mf_hexmesh(mesh)->conn);
  mf_hexmesh(mesh)->ghost = mf_hexmesh(mesh)->forest = mf_hexmesh(mesh)->conn = NULL;
}

/* Adaptation: the user's callback decides on each cell from its centre and level. */
typedef struct {
  mf_mesh mesh;
  mf_adapt_fn fn;
  void *user;
} adapt_ctx;

static void quadrant_centre(const adapt_ctx *a, p4est_topidx_t t, const p4est_quadrant_t *q, double *x)
{
  const double inv = 1.0 / (double)P4EST_ROOT_LEN, h = 0.5 * P4EST_QUADRANT_LEN(q->level) * inv;
  double s[3] = {q->x * inv + h, q->y * inv + h, 0.0};
#ifdef P4_TO_P8
  s[2] = q->z * inv + h;
#endif
  mf_mesh_map_point(a->mesh, (int)t, s, x);
}

static int refine_cb(p4est_t *p4est, p4est_topidx_t t, p4est_quadrant_t *q)
{
  const adapt_ctx *a = (const adapt_ctx *)p4est->user_pointer;
  double x[3];
  quadrant_centre(a, t, q, x);
  return q->level < P4EST_QMAXLEVEL && a->fn(x, MF_DIM, q->level, a->user) > 0;
}

static int coarsen_cb(p4est_t *p4est, p4est_topidx_t t, p4est_quadrant_t *children[])
{
  const adapt_ctx *a = (const adapt_ctx *)p4est->user_pointer;
  for (int k = 0; k < P4EST_CHILDREN; k++) {
    double x[3];
    quadrant_centre(a, t, children[k], x);
    if (a->fn(x, MF_DIM, children[k]->level, a->user) >= 0) return 0;
  }
  return 1;
}

int MF_DIMNAME(mf_forest_adapt)(mf_mesh mesh, mf_adapt_fn fn, void *user)
{
  mf_context ctx = mesh->ctx;
  p4est_t *p4est = (p4est_t *)mf_hexmesh(mesh)->forest;
  double tm = mf_phase_begin(ctx);
  adapt_ctx a = {mesh, fn, user};
  void *saved = p4est->user_pointer;
  p4est->user_pointer = &a;
  /* the cells this round would make, counted first (one more call of fn per cell): a round that
   * would not fit is refused before p4est allocates (its allocator aborts the job) */
  double local = 0.0;
  for (p4est_topidx_t t = p4est->first_local_tree; t <= p4est->last_local_tree; t++) {
    p4est_tree_t *tree = p4est_tree_array_index(p4est->trees, t);
    for (size_t k = 0; k < tree->quadrants.elem_count; k++)
      local += refine_cb(p4est, t, p4est_quadrant_array_index(&tree->quadrants, k)) ? P4EST_CHILDREN : 1;
  }
  double cells[2] = {local, local}; /* the largest rank's share (before the repartition), and the sum */
  int ierr = 0, rc = MPI_Allreduce(MPI_IN_PLACE, &cells[0], 1, MPI_DOUBLE, MPI_MAX, ctx->comm);
  if (rc == MPI_SUCCESS) rc = MPI_Allreduce(MPI_IN_PLACE, &cells[1], 1, MPI_DOUBLE, MPI_SUM, ctx->comm);
  if (rc != MPI_SUCCESS) ierr = mf_error_set(ctx, MF_ERR_MPI, __FILE__, __LINE__, __func__, "MPI_Allreduce failed (%d)", rc);
  const double per_rank = cells[0];
  if (!ierr && per_rank > INT32_MAX)
    ierr = mf_error_set(ctx, MF_ERR_ARGUMENT, __FILE__, __LINE__, __func__,
                        "refinement to %.3g cells would put %.3g on one rank; p4est allows at most %d per rank", cells[1],
                        per_rank, INT32_MAX);
  if (!ierr) {
    char what[96];
    snprintf(what, sizeof what, "refinement to %.3g cells", cells[1]);
    ierr = mf_host_require(ctx, mf_mesh_bytes(MF_DIM, mf_hexmesh(mesh)->ntrees, per_rank), what);
  }
  ierr = mf_agree(ctx, ierr);
  if (ierr) {
    p4est->user_pointer = saved;
    mf_phase_end(ctx, MF_PHASE_MESH, tm);
    return ierr;
  }
  p4est_refine(p4est, 0, refine_cb, NULL);
  p4est_coarsen(p4est, 0, coarsen_cb, NULL);
  p4est->user_pointer = saved;
  p4est_balance(p4est, P4EST_CONNECT_FULL, NULL); /* 2:1 across faces, edges and corners */
  p4est_partition(p4est, 0, NULL);
  mf_phase_end(ctx, MF_PHASE_MESH, tm);
  if (mf_hexmesh(mesh)->ghost) p4est_ghost_destroy((p4est_ghost_t *)mf_hexmesh(mesh)->ghost);
  mf_hexmesh(mesh)->ghost = NULL; /* the old layer is stale; the next space makes a new one if it needs it */
  mesh->ncells_global = (int64_t)p4est->global_num_quadrants;
  mesh->ncells_local = (int64_t)p4est->local_num_quadrants;
  return 0;
}

static int coarsen_all(p4est_t *p4est, p4est_topidx_t t, p4est_quadrant_t *children[])
{
  (void)p4est;
  (void)t;
  (void)children;
  return 1;
}

int MF_DIMNAME(mf_forest_coarsen)(mf_mesh fine, mf_mesh coarse)
{
  double tm = mf_phase_begin(fine->ctx);
  /* If every tree of the (balanced) fine forest is complete at one level on this rank, each loses
   * exactly one level (or stays at 0): neighbouring trees keep their difference of at most one, and
   * the balance pass (a full pass over the cells) is not needed. Decided on all ranks together. */
  p4est_t *src = (p4est_t *)mf_hexmesh(fine)->forest;
  int uniform = 1;
  for (p4est_topidx_t t = src->first_local_tree; uniform && t <= src->last_local_tree; t++) {
    p4est_tree_t *tr = p4est_tree_array_index(src->trees, t);
    uniform = tr->quadrants.elem_count == ((size_t)1 << (P4EST_DIM * tr->maxlevel));
  }
  int all = uniform;
  const int rc = MPI_Allreduce(&uniform, &all, 1, MPI_INT, MPI_MIN, fine->ctx->comm);
  if (rc != MPI_SUCCESS) {
    mf_phase_end(fine->ctx, MF_PHASE_MESH, tm);
    return mf_error_set(fine->ctx, MF_ERR_MPI, __FILE__, __LINE__, __func__, "MPI_Allreduce failed (%d)", rc);
  }
  p4est_t *p4est = p4est_copy(src, 0);
  p4est_coarsen(p4est, 0, coarsen_all, NULL); /* families whose cells are all on this rank */
  if (!all) p4est_balance(p4est, P4EST_CONNECT_FULL, NULL);
  mf_hexmesh(coarse)->conn = mf_hexmesh(fine)->conn;
  mf_hexmesh(coarse)->owns_conn = 0;
  mf_hexmesh(coarse)->forest = p4est;
  mf_hexmesh(coarse)->ghost = NULL;
  coarse->ncells_global = (int64_t)p4est->global_num_quadrants;
  coarse->ncells_local = (int64_t)p4est->local_num_quadrants;
  mf_phase_end(fine->ctx, MF_PHASE_MESH, tm);
  return 0;
}

/* Is face f of quadrant q (in tree t) on the domain boundary? */
static int quadrant_face_on_boundary(const p4est_connectivity_t *conn, p4est_topidx_t t,
                                     const p4est_quadrant_t *q, int f)
{
  if (conn->tree_to_tree[NFACE * t + f] != t || conn->tree_to_face[NFACE * t + f] != f) return 0;
  p4est_qcoord_t len = P4EST_QUADRANT_LEN(q->level);
  p4est_qcoord_t c = (f / 2 == 0) ? q->x : (f / 2 == 1) ? q->y :
#ifdef P4_TO_P8
                                                       q->z;
#else
                                                       0;
#endif
  return (f % 2 == 0) ? (c == 0) : (c + len == P4EST_ROOT_LEN);
}

/* The uniform fast path of lib/hex/dofs.c: one rank, every tree complete at one level. Returns 0 and fills
 * the numbering, or 1 to leave it to p4est_lnodes (nothing allocated then). */
static int dofs_uniform(mf_space space, p4est_t *p4est, p4est_connectivity_t *conn, int *used, mf_dofs_uniform **lat)
{
  mf_context ctx = space->ctx;
  *used = 0;
  *lat = NULL;
  const char *env = getenv("MFREE_DOFS");
  if (ctx->size != 1 || (env && !strcmp(env, "lnodes")) || !conn->tree_to_vertex || conn->num_vertices <= 0) return 0;
  const int ncells = (int)p4est->local_num_quadrants;
  if (ncells < 1 || p4est->first_local_tree != 0 || p4est->last_local_tree != conn->num_trees - 1) return 0;
  p4est_tree_t *first = p4est_tree_array_index(p4est->trees, 0);
  const int level = p4est_quadrant_array_index(&first->quadrants, 0)->level;
  const int64_t per_tree = (int64_t)1 << (P4EST_DIM * level);
  int uniform = (int64_t)conn->num_trees * per_tree == ncells;
  for (p4est_topidx_t t = 0; uniform && t < conn->num_trees; t++) {
    p4est_tree_t *tr = p4est_tree_array_index(p4est->trees, t);
    uniform = (int64_t)tr->quadrants.elem_count == per_tree && tr->maxlevel == level;
  }
  if (!uniform) return 0; /* a complete tree whose deepest level is the first cell's is uniform */
  if (mf_dofs_uniform_create(P4EST_DIM, space->degree, level, (int)conn->num_trees, (const int *)conn->tree_to_vertex,
                             (const int *)conn->tree_to_tree, conn->tree_to_face, lat))
    return 0;
  int nnodes = 0;
  space->cell_nodes = malloc(sizeof(int) * (size_t)ncells * space->npc); /* every entry written in parallel */
  MF_CHECK(space->cell_nodes, ctx, MF_ERR_MEMORY, "out of host memory allocating %zu bytes",
           sizeof(int) * (size_t)ncells * space->npc);
  if (mf_dofs_uniform_number(*lat, ncells, space->cell_nodes, &nnodes, &space->dof_owner, &space->dof_pos)) {
    free(space->cell_nodes);
    space->cell_nodes = NULL;
    return mf_error_set(ctx, MF_ERR_MEMORY, __FILE__, __LINE__, __func__, "out of host memory numbering %d cells",
                        ncells);
  }
  space->ncells = ncells;
  space->nowned = space->nlocal = nnodes;
  space->global_offset = 0;
  space->nglobal = nnodes;
  MF_CALL(MF_CALLOC_TOUCH(ctx, ncells, &space->face_code));
  *used = 1;
  return 0;
}

/* The numbering by p4est_lnodes: any forest, any number of ranks (hanging nodes, ghosts, sharers). */
static int dofs_lnodes(mf_space space, p4est_t *p4est)
{
  mf_context ctx = space->ctx;
  mf_mesh mesh = space->mesh;
  const int npc = space->npc;
  int ierr = 0;
  if (!mf_hexmesh(mesh)->ghost) /* the ghost layer, once per mesh; on one rank with uniform cells never needed */
    mf_hexmesh(mesh)->ghost = p4est_ghost_new(p4est, P4EST_CONNECT_FULL);
  p4est_lnodes_t *ln = p4est_lnodes_new(p4est, (p4est_ghost_t *)mf_hexmesh(mesh)->ghost, space->degree);
  space->ncells = (int)ln->num_local_elements;
  space->nowned = (int)ln->owned_count;
  space->nlocal = (int)ln->num_local_nodes;
  space->global_offset = (int64_t)ln->global_offset;
  space->nglobal = 0;
  for (int r = 0; r < ctx->size; r++) space->nglobal += ln->global_owned_count[r];
  const int ncells = space->ncells;

  MF_CALL_GOTO(MF_CALLOC_TOUCH(ctx, (size_t)ncells * npc, &space->cell_nodes), done);
  MF_CALL_GOTO(MF_CALLOC_TOUCH(ctx, ncells, &space->face_code), done);
  const size_t nnodes = (size_t)ncells * npc;
#pragma omp parallel for schedule(static)
  for (size_t i = 0; i < nnodes; i++) space->cell_nodes[i] = (int)ln->element_nodes[i];
#pragma omp parallel for schedule(static)
  for (int e = 0; e < ncells; e++) space->face_code[e] = (int16_t)ln->face_code[e];

  /* neighbour exchange lists from the sharers */
  mf_exchange *ex = &space->ex;
  size_t nsh = ln->sharers ? ln->sharers->elem_count : 0;
  int nsend = 0, nrecv = 0;
  MF_CALL_GOTO(MF_CALLOC(ctx, nsh + 1, &ex->rank), done);
  MF_CALL_GOTO(MF_CALLOC(ctx, nsh + 2, &ex->send_off), done);
  MF_CALL_GOTO(MF_CALLOC(ctx, nsh + 2, &ex->recv_off), done);
  for (int pass = 0; pass < 2; pass++) {
    int nn = 0;
    nsend = nrecv = 0;
    for (size_t s = 0; s < nsh; s++) {
      p4est_lnodes_rank_t *lr = (p4est_lnodes_rank_t *)sc_array_index(ln->sharers, s);
      if (lr->rank == ctx->rank) continue;
      if (pass) {
        ex->rank[nn] = lr->rank;
        ex->send_off[nn] = nsend;
        ex->recv_off[nn] = nrecv;
      }
      for (p4est_locidx_t j = 0; j < lr->shared_mine_count; j++) {
        p4est_locidx_t node = *(p4est_locidx_t *)sc_array_index(&lr->shared_nodes, lr->shared_mine_offset + j);
        if (pass) ex->send_idx[nsend] = (int)node;
        nsend++;
      }
      for (size_t j = 0; j < lr->shared_nodes.elem_count; j++) {
        p4est_locidx_t node = *(p4est_locidx_t *)sc_array_index(&lr->shared_nodes, j);
        if (node < lr->owned_offset || node >= lr->owned_offset + lr->owned_count) continue;
        if (pass) ex->recv_idx[nrecv] = (int)node;
        nrecv++;
      }
      nn++;
    }
    ex->nneigh = nn;
    if (!pass) {
      MF_CALL_GOTO(MF_CALLOC(ctx, nsend, &ex->send_idx), done);
      MF_CALL_GOTO(MF_CALLOC(ctx, nrecv, &ex->recv_idx), done);
      MF_CALL_GOTO(MF_CALLOC(ctx, (nsend > nrecv ? nsend : nrecv), &ex->send_buf), done);
      MF_CALL_GOTO(MF_CALLOC(ctx, (nsend > nrecv ? nsend : nrecv), &ex->recv_buf), done);
      MF_CALL_GOTO(MF_CALLOC(ctx, 2 * (nsh + 1), &ex->req), done);
    }
  }
  ex->send_off[ex->nneigh] = nsend;
  ex->recv_off[ex->nneigh] = nrecv;
done:
  p4est_lnodes_destroy(ln);
  return ierr;
}

int MF_DIMNAME(mf_forest_space)(mf_space space)
{
  mf_context ctx = space->ctx;
  mf_mesh mesh = space->mesh;
  p4est_t *p4est = (p4est_t *)mf_hexmesh(mesh)->forest;
  p4est_connectivity_t *conn = (p4est_connectivity_t *)mf_hexmesh(mesh)->conn;
  mf_dofs_uniform *lat = NULL;
  int used = 0, ierr = dofs_uniform(space, p4est, conn, &used, &lat);
  if (!ierr && !used) ierr = dofs_lnodes(space, p4est);
  space->numbering = used;
  const int ncells = space->ncells;
  space->root_log = P4EST_MAXLEVEL;
  if (!ierr) ierr = MF_CALLOC_TOUCH(ctx, ncells, &space->cell_tree);
  if (!ierr) ierr = MF_CALLOC_TOUCH(ctx, (size_t)ncells * 3, &space->cell_q);
  if (!ierr) ierr = MF_CALLOC_TOUCH(ctx, ncells, &space->cell_level);
  if (!ierr) ierr = MF_CALLOC_TOUCH(ctx, ncells, &space->cell_bfaces);
  if (ierr) {
    mf_dofs_uniform_destroy(lat);
    return ierr;
  }

  /* cell placement in the tree and the faces on the domain boundary; on the fast path also the check
   * that the cells are where lib/hex/dofs.c assumed them */
  int e0 = 0, misplaced = 0;
  for (p4est_topidx_t t = p4est->first_local_tree; t <= p4est->last_local_tree; t++) {
    p4est_tree_t *tree = p4est_tree_array_index(p4est->trees, t);
    const int nq = (int)tree->quadrants.elem_count;
#pragma omp parallel for schedule(static) reduction(+ : misplaced)
    for (int k = 0; k < nq; k++) {
      const int e = e0 + k;
      p4est_quadrant_t *q = p4est_quadrant_array_index(&tree->quadrants, (size_t)k);
      space->cell_tree[e] = (int)t;
      space->cell_q[3 * (size_t)e + 0] = q->x;
      space->cell_q[3 * (size_t)e + 1] = q->y;
#ifdef P4_TO_P8
      space->cell_q[3 * (size_t)e + 2] = q->z;
#endif
      space->cell_level[e] = (int8_t)q->level;
      unsigned char bf = 0;
      for (int f = 0; f < NFACE; f++)
        if (quadrant_face_on_boundary(conn, t, q, f)) bf |= (unsigned char)(1u << f);
      space->cell_bfaces[e] = bf;
      if (lat) {
        int64_t c[3] = {0, 0, 0};
        const int ct = mf_dofs_uniform_cell(lat, e, c);
        const p4est_qcoord_t h = P4EST_QUADRANT_LEN(q->level);
        misplaced += ct != (int)t || c[0] != q->x / h || c[1] != q->y / h;
#ifdef P4_TO_P8
        misplaced += c[2] != q->z / h;
#endif
      }
    }
    e0 += nq;
  }
  mf_dofs_uniform_destroy(lat);
  MF_CHECK(!misplaced, ctx, MF_ERR_ARGUMENT, "DoF numbering: %d cells are not in the order of their uniform forest",
           misplaced);
  return 0;
}
