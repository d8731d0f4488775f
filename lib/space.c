/* space.c -- the mf_space object: what every cell family's space shares (the element-to-DoF map,
 * sizes, Dirichlet marks, DoF points, the cell parts, references, the backend's device state), the
 * capabilities asked of its family's table (lib/family.h: numbering, points, Dirichlet tags), and the
 * owner/ghost exchange of distributed vectors.
 *
 * Local DoF layout on each rank (p4est_lnodes' for hex spaces):
 *     [ owned (nowned) | ghosts owned by other ranks (nlocal - nowned) ]
 * Import copies each ghost from its owner; export-add sends each ghost's partial sum to its owner,
 * which adds it to the owned entry.                                                               */
#include "family.h"

#include "base/mf_backend.h"

#define MF_TAG_EXCHANGE 4711

/* 1 if cell e touches a ghost DoF (local indices >= nowned): it reads imported entries of x and writes
 * entries of y that the export-add sends */
static int touches_ghost(const mf_space s, int e)
{
  const int *nodes = &s->cell_nodes[(size_t)e * s->npc];
  for (int i = 0; i < s->npc; i++)
    if ((int64_t)nodes[i] * s->ncomp >= s->nowned) return 1; /* the node's entries are ghosts */
  return 0;
}

void mf_space_split_parts(const mf_space s, const int *order, int n, int *out, int off[4])
{
  int nint = 0;
  for (int k = 0; k < n; k++) nint += !touches_ghost(s, order[k]);
  const int half = nint / 2;
  off[0] = 0;
  off[1] = half;
  off[2] = half + (n - nint);
  off[3] = n;
  int pos[3] = {0, off[1], off[2]}, seen = 0;
  for (int k = 0; k < n; k++) {
    const int e = order[k];
    if (touches_ghost(s, e)) out[pos[1]++] = e;
    else out[pos[seen++ < half ? 0 : 2]++] = e;
  }
}

int mf_space_parts(mf_space s)
{
  if (s->part_cells) return 0;
  int *order = NULL, *parts = NULL;
  MF_CALL(MF_CALLOC(s->ctx, (size_t)s->ncells + 1, &order));
  int ierr = MF_CALLOC(s->ctx, (size_t)s->ncells + 1, &parts);
  if (!ierr) {
    for (int e = 0; e < s->ncells; e++) order[e] = e;
    mf_space_split_parts(s, order, s->ncells, parts, s->part_off);
    s->part_cells = parts;
    parts = NULL;
  }
  free(order);
  free(parts);
  return ierr;
}

void mf_space_dof_point(mf_space s, int dof, double *x)
{
  if (s->coords) {
    for (int k = 0; k < s->dim; k++) x[k] = s->coords[(size_t)dof * s->dim + k];
    return;
  }
  s->fam->dof_point(s, dof, x); /* a family without it makes the points with the space */
}

int mf_space_host_coords(mf_space s)
{
  if (s->coords) return 0;
  MF_CHECK(s->fam->node_points, s->ctx, MF_ERR_UNSUPPORTED, "the DoF points of a %s space were not made with it",
           s->fam->name);
  return s->fam->node_points(s);
}

void mf_space_init(mf_space s, mf_mesh mesh, int degree, int ncomp)
{
  s->ctx = mesh->ctx;
  s->mesh = mesh;
  s->mesh_revision = mesh->revision;
  s->refs = 1;
  mf_mesh_retain(mesh);
  s->fam = mesh->fam;
  s->dim = mesh->dim;
  s->degree = degree;
  s->ncomp = ncomp;
  s->n1 = degree + 1;
  s->dtag_n = -1;
}

/* The family's space and the backend's device state. Collective: a failure on one rank is every
 * rank's, and the space made so far is destroyed. */
static int space_create(mf_mesh mesh, int degree, int ncomp, mf_space *space)
{
  mf_context ctx = mesh->ctx;
  mf_space s = NULL;
  int ierr = mesh->fam->space_create(mesh, degree, ncomp, &s);
  if (!s) return mf_agree(ctx, ierr); /* refused, or failed, before anything was made (on one rank alone too) */
  if (!ierr && ctx->bk->space.setup) ierr = ctx->bk->space.setup(s); /* times its own phases */
  ierr = mf_agree(ctx, ierr);
  if (ierr) {
    mf_space_destroy(&s);
    return ierr;
  }
  *space = s;
  return 0;
}

int mf_space_create(mf_mesh mesh, int degree, mf_space *space)
{
  if (space) *space = NULL; /* NULL on every failure, the first argument's included */
  MF_CHECK(mesh, NULL, MF_ERR_NULL, "mesh is NULL");
  MF_CHECK(space, mesh->ctx, MF_ERR_NULL, "output pointer space is NULL");
  return space_create(mesh, degree, 1, space);
}

int mf_space_create_components(mf_mesh mesh, int degree, int ncomp, mf_space *space)
{
  if (space) *space = NULL; /* NULL on every failure, the first argument's included */
  MF_CHECK(mesh, NULL, MF_ERR_NULL, "mesh is NULL");
  MF_CHECK(space, mesh->ctx, MF_ERR_NULL, "output pointer space is NULL");
  MF_CHECK(mesh->fam->components, mesh->ctx, MF_ERR_UNSUPPORTED,
           "spaces of several components: not on %s meshes", mesh->fam->name);
  return space_create(mesh, degree, ncomp, space);
}

int mf_space_set_dirichlet_tags(mf_space space, int ntags, const int *tags)
{
  MF_CHECK(space, NULL, MF_ERR_NULL, "space is NULL");
  mf_context ctx = space->ctx;
  MF_CHECK(space->fam->space_dirichlet_tags, ctx, MF_ERR_UNSUPPORTED,
           "Dirichlet tags: not on %s meshes (their boundary is all Dirichlet)", space->fam->name);
  MF_CHECK(space->refs == 1, ctx, MF_ERR_ARGUMENT,
           "set the Dirichlet tags before making vectors or operators of the space (%d hold it)", space->refs - 1);
  MF_CHECK(ntags <= 0 || tags, ctx, MF_ERR_NULL, "%d tags but the tag array is NULL", ntags);
  MF_CHECK(ntags >= 0 || !tags, ctx, MF_ERR_ARGUMENT,
           "negative number of tags %d with a tag array (tags NULL with ntags < 0 goes back to every boundary facet)",
           ntags);
  /* collective: a failure on one rank is every rank's (before the family's step, which may be collective, and
   * after it) */
  int *keep = NULL, ierr = 0;
  if (ntags > 0) {
    ierr = MF_CALLOC(ctx, (size_t)ntags, &keep);
    if (!ierr) memcpy(keep, tags, sizeof(int) * (size_t)ntags);
  }
  ierr = mf_agree(ctx, ierr);
  if (!ierr) ierr = space->fam->space_dirichlet_tags(space, ntags, tags);
  ierr = mf_agree(ctx, ierr);
  if (ierr) {
    free(keep);
    return ierr;
  }
  free(space->dtags); /* kept: multigrid makes its levels' spaces with them */
  space->dtags = keep;
  space->dtag_n = ntags < 0 ? -1 : ntags;
  return 0;
}

int mf_space_dirichlet_dofs(mf_space space, int *n, int *dofs)
{
  MF_CHECK(space, NULL, MF_ERR_NULL, "space is NULL");
  MF_CHECK(n, space->ctx, MF_ERR_NULL, "output pointer n is NULL");
  *n = space->nbc;
  if (dofs && space->nbc) memcpy(dofs, space->bc_list, sizeof(int) * (size_t)space->nbc);
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

int mf_space_device_sync(mf_space s)
{
  if (s->ctx->bk->space.setup) return s->dev ? s->ctx->bk->space.marks(s) : s->ctx->bk->space.setup(s);
  return 0;
}

void mf_space_retain(mf_space space) { space->refs++; }

void mf_space_release(mf_space s)
{
  if (!s || --s->refs > 0) return;
  if (s->dev) s->ctx->bk->space.free(s);
  if (s->fam && s->fam->space_destroy) s->fam->space_destroy(s);
  free(s->cell_nodes);
  free(s->bc);
  free(s->bc_list);
  free(s->coords);
  free(s->part_cells);
  free(s->csr_rowptr);
  free(s->csr_colidx);
  free(s->dtags);
  mf_exchange_free(&s->ex);
  mf_mesh_release(s->mesh);
  free(s);
}

int mf_space_destroy(mf_space *space)
{
  if (!space || !*space) return 0;
  mf_space s = *space;
  *space = NULL;
  mf_space_release(s);
  return 0;
}

const char *mf_space_mismatch(mf_space a, mf_space b, const char *b_has, char *buf, size_t n)
{
  if (a->nglobal != b->nglobal)
    snprintf(buf, n, " (%lld DoFs, %s %lld)", (long long)a->nglobal, b_has, (long long)b->nglobal);
  else /* the sizes say nothing: two handles, each from its own mf_space_create */
    snprintf(buf, n, " object of the same size (%lld DoFs): a space made twice is two spaces; make both from one mf_space",
             (long long)a->nglobal);
  return buf;
}

int mf_space_check_mesh(mf_space s)
{
  const int rounds = s->mesh->revision - s->mesh_revision;
  MF_CHECK(rounds == 0, s->ctx, MF_ERR_INCOMPATIBLE,
           "the space was made on the mesh before it was adapted (%d round(s) of mf_mesh_adapt since): destroy it and "
           "create a new space on the adapted mesh", rounds);
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

/* The MPI part of one exchange: ex->send_buf (packed by the caller in list order) goes out, and
 * ex->recv_buf comes in. forward: owners -> ghosts (send lists send_idx); backward: the reverse. */
/* The messages of an exchange, posted (begin) and completed (end) apart so that work on cells that
 * need no ghost can run between: forward sends owned entries to the ranks holding them as ghosts,
 * backward sends ghost entries to their owners. sbuf/rbuf: the packed entries (host memory, or
 * device memory with a CUDA-aware MPI). A failed post still leaves the posted requests to the end,
 * which waits for them: no request is left behind. */
int mf_exchange_mpi_begin(mf_context ctx, mf_exchange *ex, int forward, double *sbuf, double *rbuf)
{
  ex->nreq = 0;
  if (ex->nneigh == 0) return 0;
  const int *soff = forward ? ex->send_off : ex->recv_off, *roff = forward ? ex->recv_off : ex->send_off;
  for (int i = 0; i < ex->nneigh; i++) {
    int rc = MPI_Irecv(rbuf + roff[i], roff[i + 1] - roff[i], MPI_DOUBLE, ex->rank[i], MF_TAG_EXCHANGE, ctx->comm,
                       &ex->req[ex->nreq]);
    MF_CHECK(rc == MPI_SUCCESS, ctx, MF_ERR_MPI, "MPI_Irecv from rank %d failed (%d)", ex->rank[i], rc);
    ex->nreq++;
  }
  for (int i = 0; i < ex->nneigh; i++) {
    int rc = MPI_Isend(sbuf + soff[i], soff[i + 1] - soff[i], MPI_DOUBLE, ex->rank[i], MF_TAG_EXCHANGE, ctx->comm,
                       &ex->req[ex->nreq]);
    MF_CHECK(rc == MPI_SUCCESS, ctx, MF_ERR_MPI, "MPI_Isend to rank %d failed (%d)", ex->rank[i], rc);
    ex->nreq++;
  }
  return 0;
}

int mf_exchange_mpi_end(mf_context ctx, mf_exchange *ex)
{
  const int n = ex->nreq;
  ex->nreq = 0;
  if (n == 0) return 0;
  int rc = MPI_Waitall(n, ex->req, MPI_STATUSES_IGNORE);
  MF_CHECK(rc == MPI_SUCCESS, ctx, MF_ERR_MPI, "MPI_Waitall in ghost exchange failed (%d)", rc);
  return 0;
}

int mf_exchange_mpi(mf_context ctx, mf_exchange *ex, int forward)
{
  int ierr = mf_exchange_mpi_begin(ctx, ex, forward, ex->send_buf, ex->recv_buf);
  MF_KEEP(ierr, mf_exchange_mpi_end(ctx, ex));
  return ierr;
}

/* Host exchange of a local array in halves: begin packs and posts the messages, end waits for them and
 * unpacks (assign forward, add backward). */
int mf_exchange_begin(mf_context ctx, mf_exchange *ex, const void *x, int single, int forward)
{
  if (ex->nneigh == 0) return 0;
  const int ns = forward ? ex->send_off[ex->nneigh] : ex->recv_off[ex->nneigh];
  const int *sidx = forward ? ex->send_idx : ex->recv_idx;
  const double *xd = single ? NULL : (const double *)x;
  const float *xs = single ? (const float *)x : NULL;
  for (int j = 0; j < ns; j++) ex->send_buf[j] = single ? xs[sidx[j]] : xd[sidx[j]];
  return mf_exchange_mpi_begin(ctx, ex, forward, ex->send_buf, ex->recv_buf);
}

int mf_exchange_end(mf_context ctx, mf_exchange *ex, void *x, int single, int forward)
{
  if (ex->nneigh == 0) return 0;
  MF_CALL(mf_exchange_mpi_end(ctx, ex));
  const int nr = forward ? ex->recv_off[ex->nneigh] : ex->send_off[ex->nneigh];
  const int *ridx = forward ? ex->recv_idx : ex->send_idx;
  double *xd = single ? NULL : (double *)x;
  float *xs = single ? (float *)x : NULL;
  for (int j = 0; j < nr; j++) {
    const double r = ex->recv_buf[j];
    if (single) xs[ridx[j]] = forward ? (float)r : xs[ridx[j]] + (float)r;
    else xd[ridx[j]] = forward ? r : xd[ridx[j]] + r;
  }
  return 0;
}

int mf_exchange_run(mf_context ctx, mf_exchange *ex, void *x, int single, int forward)
{
  int ierr = mf_exchange_begin(ctx, ex, x, single, forward);
  MF_KEEP(ierr, mf_exchange_end(ctx, ex, x, single, forward));
  return ierr;
}

int mf_exchange_import(mf_context ctx, mf_exchange *ex, double *x) { return mf_exchange_run(ctx, ex, x, 0, 1); }

int mf_exchange_export_add(mf_context ctx, mf_exchange *ex, double *x) { return mf_exchange_run(ctx, ex, x, 0, 0); }
