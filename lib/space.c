/* space.c -- the mf_space object (continuous Q_p on Gauss-Lobatto points) and the owner/ghost
 * exchange of distributed vectors.
 *
 * Local DoF layout on each rank, as p4est_lnodes numbers it:
 *     [ owned (nowned) | ghosts owned by other ranks (nlocal - nowned) ]
 * Import copies each ghost from its owner; export-add sends each ghost's partial sum to its owner,
 * which adds it to the owned entry.                                                               */
#include "mfree_impl.h"

#ifdef MFREE_WITH_CUDA
#include "cuda/mf_cuda.h"
#endif

#define MF_TAG_EXCHANGE 4711

/* Greedy first-fit coloring on the cell-DoF graph (each DoF remembers the colors of its cells in a
 * 64-bit mask). Cells keep the p4est (Morton) order, which keeps neighbouring cells close in memory
 * for the atomic scatter; color_cells lists the cells color by color for the colored scatter. */
static int color_cells(mf_space s)
{
  mf_context ctx = s->ctx;
  const int n = s->ncells, npc = s->npc;
  uint64_t *dofmask = NULL;
  int *color = NULL, *count = NULL, ierr = 0;
  ierr = MF_CALLOC(ctx, s->nlocal, &dofmask);
  if (!ierr) ierr = MF_CALLOC(ctx, n, &color);
  if (!ierr) ierr = MF_CALLOC(ctx, 65, &count);
  if (ierr) goto done;
  s->ncolors = 0;
  for (int e = 0; e < n; e++) {
    const int *nodes = &s->cell_nodes[(size_t)e * npc];
    uint64_t used = 0;
    for (int i = 0; i < npc; i++) used |= dofmask[nodes[i]];
    MF_CHECK_GOTO(~used != 0, ctx, MF_ERR_UNSUPPORTED, done, "cell %d needs more than 64 colors", e);
    int c = 0;
    while (used >> c & 1) c++;
    color[e] = c;
    count[c + 1]++;
    if (c + 1 > s->ncolors) s->ncolors = c + 1;
    for (int i = 0; i < npc; i++) dofmask[nodes[i]] |= (uint64_t)1 << c;
  }
  MF_CALL_GOTO(MF_CALLOC(ctx, s->ncolors + 1, &s->color_off), done);
  MF_CALL_GOTO(MF_CALLOC(ctx, n, &s->color_cells), done);
  for (int c = 0; c < s->ncolors; c++) s->color_off[c + 1] = s->color_off[c] + count[c + 1];
  for (int c = 0; c <= s->ncolors; c++) count[c] = s->color_off[c];
  for (int e = 0; e < n; e++) s->color_cells[count[color[e]]++] = e;
done:
  free(dofmask);
  free(color);
  free(count);
  return ierr;
}

int mf_space_create(mf_mesh mesh, int degree, mf_space *space)
{
  MF_CHECK(mesh, NULL, MF_ERR_NULL, "mesh is NULL");
  mf_context ctx = mesh->ctx;
  MF_CHECK(space, ctx, MF_ERR_NULL, "output pointer space is NULL");
  *space = NULL;
  MF_CHECK(degree >= 1 && degree <= MF_MAX_DEGREE, ctx, MF_ERR_ARGUMENT,
           "degree %d out of range 1..%d", degree, MF_MAX_DEGREE);
  mf_space s;
  MF_CALL(MF_CALLOC(ctx, 1, &s));
  s->ctx = ctx;
  s->mesh = mesh;
  s->dim = mesh->dim;
  s->degree = degree;
  s->n1 = degree + 1;
  s->npc = s->dim == 2 ? s->n1 * s->n1 : s->n1 * s->n1 * s->n1;
  double w[MF_MAX_N1];
  mf_gauss_lobatto(s->n1, s->gll, w);
  int ierr = s->dim == 2 ? mf_forest_space_2d(s) : mf_forest_space_3d(s);
  double t0 = mf_phase_begin(ctx);
  if (!ierr) ierr = color_cells(s);
  mf_phase_end(ctx, MF_PHASE_ORDERING, t0);
  mf_hanging_matrices(degree, s->hanging_P);
  for (int e = 0; !ierr && e < s->ncells; e++) {
    if (mf_hanging_check(s->dim, s->face_code[e]))
      ierr = mf_error_set(ctx, MF_ERR_ARGUMENT, __FILE__, __LINE__, __func__,
                          "cell %d: invalid hanging-node mask %d from p4est_lnodes", e, (int)s->face_code[e]);
    s->nmasked += s->face_code[e] != 0;
  }
#ifdef MFREE_WITH_CUDA
  if (!ierr && ctx->backend == MF_BACKEND_CUDA) {
    t0 = mf_phase_begin(ctx);
    ierr = mf_cuda_space_setup(s);
    mf_phase_end(ctx, MF_PHASE_TRANSFER, t0);
  }
#endif
  if (ierr) {
    mf_space_destroy(&s);
    return ierr;
  }
  *space = s;
  return 0;
}

void mf_exchange_free(mf_exchange *ex)
{
  free(ex->rank);
  free(ex->send_off);
  free(ex->send_idx);
  free(ex->recv_off);
  free(ex->recv_idx);
  free(ex->send_buf);
  free(ex->recv_buf);
  free(ex->req);
  memset(ex, 0, sizeof *ex);
}

int mf_space_destroy(mf_space *space)
{
  if (!space || !*space) return 0;
  mf_space s = *space;
#ifdef MFREE_WITH_CUDA
  if (s->dev) mf_cuda_space_free(s);
#endif
  free(s->cell_nodes);
  free(s->face_code);
  free(s->cell_tree);
  free(s->cell_origin);
  free(s->cell_size);
  free(s->bc);
  free(s->global_index);
  free(s->color_off);
  free(s->color_cells);
  mf_exchange_free(&s->ex);
  free(s);
  *space = NULL;
  return 0;
}

int mf_space_degree(mf_space space, int *degree)
{
  MF_CHECK(space, NULL, MF_ERR_NULL, "space is NULL");
  MF_CHECK(degree, space->ctx, MF_ERR_NULL, "output pointer degree is NULL");
  *degree = space->degree;
  return 0;
}

int mf_space_num_dofs(mf_space space, int64_t *ndofs)
{
  MF_CHECK(space, NULL, MF_ERR_NULL, "space is NULL");
  MF_CHECK(ndofs, space->ctx, MF_ERR_NULL, "output pointer ndofs is NULL");
  *ndofs = space->nglobal;
  return 0;
}

int mf_space_local_sizes(mf_space space, int *nowned, int *nlocal)
{
  MF_CHECK(space, NULL, MF_ERR_NULL, "space is NULL");
  if (nowned) *nowned = space->nowned;
  if (nlocal) *nlocal = space->nlocal;
  return 0;
}

void mf_space_cell_point(mf_space space, int cell, const double *xi, double *x)
{
  double s[3] = {0, 0, 0};
  const double h = space->cell_size[cell], *o = &space->cell_origin[3 * cell];
  for (int k = 0; k < space->dim; k++) s[k] = o[k] + h * xi[k];
  mf_mesh_map_point(space->mesh, space->cell_tree[cell], s, x);
}

void mf_space_cell_coords(mf_space space, int cell, double *X)
{
  const int n1 = space->n1, dim = space->dim;
  for (int node = 0; node < space->npc; node++) {
    double xi[3] = {0, 0, 0};
    int idx = node;
    for (int k = 0; k < dim; k++) {
      xi[k] = space->gll[idx % n1];
      idx /= n1;
    }
    mf_space_cell_point(space, cell, xi, &X[node * dim]);
  }
}

/* The MPI part of one exchange: ex->send_buf (packed by the caller in list order) goes out, and
 * ex->recv_buf comes in. forward: owners -> ghosts (send lists send_idx); backward: the reverse. */
int mf_exchange_mpi(mf_context ctx, mf_exchange *ex, int forward)
{
  if (ex->nneigh == 0) return 0;
  const int *soff = forward ? ex->send_off : ex->recv_off, *roff = forward ? ex->recv_off : ex->send_off;
  int n = 0;
  for (int i = 0; i < ex->nneigh; i++) {
    int rc = MPI_Irecv(ex->recv_buf + roff[i], roff[i + 1] - roff[i], MPI_DOUBLE, ex->rank[i], MF_TAG_EXCHANGE,
                       ctx->comm, &ex->req[n++]);
    MF_CHECK(rc == MPI_SUCCESS, ctx, MF_ERR_MPI, "MPI_Irecv from rank %d failed (%d)", ex->rank[i], rc);
  }
  for (int i = 0; i < ex->nneigh; i++) {
    int rc = MPI_Isend(ex->send_buf + soff[i], soff[i + 1] - soff[i], MPI_DOUBLE, ex->rank[i], MF_TAG_EXCHANGE,
                       ctx->comm, &ex->req[n++]);
    MF_CHECK(rc == MPI_SUCCESS, ctx, MF_ERR_MPI, "MPI_Isend to rank %d failed (%d)", ex->rank[i], rc);
  }
  int rc = MPI_Waitall(n, ex->req, MPI_STATUSES_IGNORE);
  MF_CHECK(rc == MPI_SUCCESS, ctx, MF_ERR_MPI, "MPI_Waitall in ghost exchange failed (%d)", rc);
  return 0;
}

/* Host exchange of a local array: pack, MPI, unpack (assign forward, add backward). */
static int exchange(mf_context ctx, mf_exchange *ex, double *x, int forward)
{
  if (ex->nneigh == 0) return 0;
  const int ns = forward ? ex->send_off[ex->nneigh] : ex->recv_off[ex->nneigh];
  const int nr = forward ? ex->recv_off[ex->nneigh] : ex->send_off[ex->nneigh];
  const int *sidx = forward ? ex->send_idx : ex->recv_idx, *ridx = forward ? ex->recv_idx : ex->send_idx;
  for (int j = 0; j < ns; j++) ex->send_buf[j] = x[sidx[j]];
  MF_CALL(mf_exchange_mpi(ctx, ex, forward));
  if (forward)
    for (int j = 0; j < nr; j++) x[ridx[j]] = ex->recv_buf[j];
  else
    for (int j = 0; j < nr; j++) x[ridx[j]] += ex->recv_buf[j];
  return 0;
}

int mf_exchange_import(mf_context ctx, mf_exchange *ex, double *x) { return exchange(ctx, ex, x, 1); }

int mf_exchange_export_add(mf_context ctx, mf_exchange *ex, double *x) { return exchange(ctx, ex, x, 0); }
