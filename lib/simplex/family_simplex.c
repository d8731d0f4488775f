/* family_simplex.c -- the simplex family's table (lib/family.h): triangles and tetrahedra (on several ranks
 * every rank holds the coarse mesh whole, its cells split between them: partition_simplex.c, and the meshes
 * refined from it in parts: parts_simplex.c),
 * continuous P_p on equispaced nodes; here the meshes as mf_mesh (the built-in ones of mesh.c, Gmsh
 * files read by gmsh.c) and the vectors' integrals on the host for either backend; the spaces and the
 * cell loops of the integrals in space_simplex.c. */
#include "mf_simplex_space.h"

#include <math.h>

/* The mf_mesh around a made mf_simplex_mesh (taken over; freed on failure). On several ranks a mesh read or
 * made holds the whole mesh and sm->part says whose each cell is: made here (mf_simplex_mesh_partition; the
 * environment variable MFREE_SIMPLEX_PARTITION=rcb|scotch overrides the default) unless given (a copy keeps its
 * original's); a refined mesh is held in parts (sm->root: this rank's cells of the coarse mesh's partition). */
static int wrap(mf_context ctx, mf_simplex_mesh *sm, mf_mesh *mesh)
{
  mf_mesh m = NULL;
  int ierr = MF_CALLOC(ctx, 1, &m);
  if (ctx->size > 1 && !sm->part && !sm->root) { /* collective: every rank made or read its mesh (the callers) */
    if (!ierr) ierr = MF_CALLOC(ctx, (size_t)sm->ncells + 1, &sm->part);
    ierr = mf_agree(ctx, ierr);
    const char *env = getenv("MFREE_SIMPLEX_PARTITION"); /* rcb | scotch (measurements, docs/simplex.md) */
    const int method = env && !strcmp(env, "rcb")      ? MF_SIMPLEX_PARTITION_RCB
                       : env && !strcmp(env, "scotch") ? MF_SIMPLEX_PARTITION_SCOTCH
                                                       : MF_SIMPLEX_PARTITION_DEFAULT;
    if (!ierr) ierr = mf_simplex_mesh_partition(ctx, sm, ctx->size, method, sm->part);
  }
  if (ierr) {
    free(m);
    mf_simplex_mesh_free(sm);
    free(sm);
    return ierr;
  }
  mf_mesh_init(m, ctx, &mf_family_simplex, sm->dim);
  m->fdata = sm;
  m->ncells_global = m->ncells_local = sm->ncells;
  if (sm->root) m->ncells_global = mf_simplex_parts_ncells_global(sm);
  if (sm->part) {
    m->ncells_local = 0;
    for (int e = 0; e < sm->ncells; e++) m->ncells_local += sm->part[e] == ctx->rank;
  }
  *mesh = m;
  return 0;
}

int mf_simplex_mesh_create(mf_context ctx, const char *name, int dim, int level, mf_mesh *mesh)
{
  /* 2^level cells per side within mf_simplex_mesh_box's range: 4096 = 2^12, 256 = 2^8 */
  const int want = !strcmp(name, "square-tris") ? 2 : 3, maxlevel = dim == 2 ? 12 : 8;
  MF_CHECK(dim == want, ctx, MF_ERR_ARGUMENT, "mesh '%s' is %dD, dimension %d asked", name, want, dim);
  MF_CHECK(level >= 0 && level <= maxlevel, ctx, MF_ERR_ARGUMENT,
           "refinement level %d out of range 0..%d for mesh '%s' (2^level cells per side)", level, maxlevel, name);
  const double n = ldexp(1.0, level), cells = dim == 2 ? 2.0 * n * n : 6.0 * n * n * n;
  char what[96];
  snprintf(what, sizeof what, "mesh '%s' at level %d (%.3g cells)", name, level, cells);
  /* several ranks: every rank reaches the agreement before wrap's partition (collective) */
  int ierr = mf_host_require(ctx, cells * (dim + 1) * 4.0 * 3.0 + pow(n + 1, dim) * 24.0, what);
  mf_simplex_mesh *sm = NULL;
  if (!ierr) ierr = MF_CALLOC(ctx, 1, &sm);
  const double t0 = mf_phase_begin(ctx);
  if (!ierr) ierr = mf_simplex_mesh_box(ctx, dim, 1 << level, sm);
  if (ctx->size > 1) ierr = mf_agree(ctx, ierr);
  if (ierr) {
    if (sm) mf_simplex_mesh_free(sm);
    free(sm);
  } else ierr = wrap(ctx, sm, mesh);
  mf_phase_end(ctx, MF_PHASE_MESH, t0);
  return ierr;
}

static int simplex_mesh_refine(mf_mesh coarse, int levels, mf_mesh *fine);

/* mf_mesh_create_box: the unit square or cube in trees[0] x trees[1] (x trees[2]) squares or cubes, each split
 * as mesh.c's box does (2 triangles, 6 tetrahedra), then `level` rounds of uniform refinement (the nested
 * levels of multigrid). */
static int simplex_mesh_create_box(mf_context ctx, const char *name, int dim, const int trees[3], int level, mf_mesh *mesh)
{
  const int want = !strcmp(name, "square-tris") ? 2 : 3, nmax = dim == 2 ? MF_SIMPLEX_BOX_MAX_2D : MF_SIMPLEX_BOX_MAX_3D;
  MF_CHECK(dim == want, ctx, MF_ERR_ARGUMENT, "mesh '%s' is %dD, dimension %d asked", name, want, dim);
  MF_CHECK(trees, ctx, MF_ERR_NULL, "trees is NULL");
  double cells = dim == 2 ? 2.0 : 6.0;
  for (int d = 0; d < dim; d++) {
    MF_CHECK(trees[d] >= 1 && trees[d] <= nmax, ctx, MF_ERR_ARGUMENT,
             "%d cells in direction %d out of range 1..%d for mesh '%s'", trees[d], d, nmax, name);
    cells *= trees[d];
  }
  MF_CHECK(level >= 0 && level <= 8, ctx, MF_ERR_ARGUMENT, "refinement level %d out of range 0..8", level);
  MF_CHECK(ldexp(cells, dim * level) <= 2147483647.0, ctx, MF_ERR_ARGUMENT,
           "mesh '%s' of %.4g cells refined %d times: %.4g cells, more than the 32-bit indices hold", name, cells, level,
           ldexp(cells, dim * level));
  char what[96];
  snprintf(what, sizeof what, "mesh '%s' of %.4g cells", name, cells);
  int ierr = mf_host_require(ctx, cells * (dim + 1) * 4.0 * 3.0 + cells * 24.0, what);
  mf_simplex_mesh *sm = NULL;
  if (!ierr) ierr = MF_CALLOC(ctx, 1, &sm);
  const double t0 = mf_phase_begin(ctx);
  if (!ierr) ierr = mf_simplex_mesh_box_n(ctx, dim, trees, sm);
  if (ctx->size > 1) ierr = mf_agree(ctx, ierr);
  mf_mesh coarse = NULL;
  if (ierr) {
    if (sm) mf_simplex_mesh_free(sm);
    free(sm);
  } else ierr = wrap(ctx, sm, &coarse);
  mf_phase_end(ctx, MF_PHASE_MESH, t0);
  if (ierr || level == 0) {
    *mesh = coarse;
    return ierr;
  }
  ierr = simplex_mesh_refine(coarse, level, mesh);
  mf_mesh_destroy(&coarse); /* held by the refined mesh */
  return ierr;
}

int mf_simplex_mesh_read(mf_context ctx, const char *path, int dim, mf_mesh *mesh)
{
  const double t0 = mf_phase_begin(ctx);
  mf_gmsh_mesh g;
  int ierr = mf_gmsh_read(ctx, path, dim, &g);
  mf_simplex_mesh *sm = NULL;
  if (!ierr) ierr = MF_CALLOC(ctx, 1, &sm);
  if (!ierr) ierr = mf_simplex_mesh_from_gmsh(ctx, &g, path, sm);
  mf_gmsh_free(&g);
  if (ctx->size > 1) ierr = mf_agree(ctx, ierr); /* every rank reaches wrap's partition (collective) */
  if (!ierr) ierr = wrap(ctx, sm, mesh);
  else {
    if (sm) mf_simplex_mesh_free(sm);
    free(sm);
  }
  mf_phase_end(ctx, MF_PHASE_MESH, t0);
  return ierr;
}

void mf_simplex_mesh_release(mf_mesh mesh)
{
  mf_simplex_mesh_free((mf_simplex_mesh *)mesh->fdata);
  free(mesh->fdata);
  mesh->fdata = NULL;
}

/* Simplex spaces (one rank): the integrals on the host, into the vector's array on the cpu backend,
 * else through a host array copied to the device (rhs) or from it (L2 error). */
static int simplex_rhs(mf_vector v, mf_coefficient_fn f, void *user)
{
  mf_space s = v->space;
  if (v->backend == MF_BACKEND_CPU && v->prec == MF_PRECISION_DOUBLE) return mf_simplex_space_rhs(s, f, user, v->data);
  double *h = NULL;
  MF_CALL(MF_CALLOC_TOUCH(s->ctx, (size_t)v->n + 1, &h));
  int ierr = mf_simplex_space_rhs(s, f, user, h);
  if (!ierr) ierr = v->ops.from_host(v, h, v->n);
  free(h);
  return ierr;
}
/* The L2 error (u given) or the H1 seminorm error (grad_u given) on a simplex space: the cells on the
 * host, from the vector's array on the cpu backend, else from a host copy of the device values. */
static int simplex_error(mf_vector uh, mf_coefficient_fn u, mf_gradient_fn grad_u, void *user, double *err)
{
  mf_space s = uh->space;
  double *cellsum = NULL, *h = NULL, sum = 0.0;
  const int host = uh->backend == MF_BACKEND_CPU && uh->prec == MF_PRECISION_DOUBLE;
  /* several ranks: the ghosts' values made current (collective), each rank's cells summed, the sums added */
  int ierr = s->ctx->size > 1 ? uh->ops.import(uh) : 0;
  if (!ierr) ierr = MF_CALLOC_TOUCH(s->ctx, (size_t)s->ncells + 1, &cellsum);
  if (!ierr && !host) ierr = MF_CALLOC_TOUCH(s->ctx, (size_t)uh->n + 1, &h);
  if (!ierr && !host) ierr = uh->ops.to_host(uh, h, uh->n);
  const double *vals = host ? uh->data : h;
  if (!ierr) ierr = u ? mf_simplex_space_l2_cells(s, vals, u, user, cellsum)
                      : mf_simplex_space_h1_cells(s, vals, grad_u, user, cellsum);
  for (int e = 0; e < s->ncells && !ierr; e++) sum += cellsum[e]; /* cell order: deterministic */
  free(cellsum);
  free(h);
  if (s->ctx->size > 1) {
    ierr = mf_agree(s->ctx, ierr);
    if (!ierr) MPI_Allreduce(MPI_IN_PLACE, &sum, 1, MPI_DOUBLE, MPI_SUM, s->ctx->comm);
  }
  MF_CALL(ierr);
  *err = sqrt(sum);
  return 0;
}

static int simplex_l2_error(mf_vector uh, mf_coefficient_fn u, void *user, double *err)
{
  return simplex_error(uh, u, NULL, user, err);
}

static int simplex_h1_error(mf_vector uh, mf_gradient_fn grad_u, void *user, double *err)
{
  return simplex_error(uh, NULL, grad_u, user, err);
}

/* mf_mesh_refine: levels rounds of refine.c's uniform refinement, each a new mesh that holds the one it
 * refines (the nested levels of multigrid: mesh_coarsen gives it back); 0 levels: a copy. On several ranks
 * each rank refines its own cells only (parts_simplex.c): the refined meshes are held in parts. */
static int refine_once(mf_mesh coarse, int copy, mf_mesh *fine)
{
  mf_context ctx = coarse->ctx;
  const mf_simplex_mesh *m = (const mf_simplex_mesh *)coarse->fdata;
  mf_simplex_mesh *c = NULL;
  MF_CALL(MF_CALLOC(ctx, 1, &c));
  int ierr = 0;
  if (m->root || (m->part && !copy)) /* several ranks: this rank's cells refined, held in parts */
    ierr = copy ? mf_simplex_parts_copy(ctx, m, c) : mf_simplex_refine_parts(ctx, m, c);
  else if (!copy) ierr = mf_simplex_mesh_refine(ctx, m, c);
  else {
    c->dim = m->dim, c->nv = m->nv, c->ncells = m->ncells, c->nfacets = m->nfacets;
    ierr = MF_CALLOC(ctx, (size_t)m->nv * 3 + 1, &c->coords);
    if (!ierr) ierr = MF_CALLOC(ctx, (size_t)m->ncells * (m->dim + 1) + 1, &c->cells);
    if (!ierr) ierr = MF_CALLOC(ctx, (size_t)m->nfacets * m->dim + 1, &c->facets);
    if (!ierr) ierr = MF_CALLOC(ctx, (size_t)m->nfacets + 1, &c->facet_tag);
    if (!ierr) {
      memcpy(c->coords, m->coords, sizeof(double) * 3 * (size_t)m->nv);
      memcpy(c->cells, m->cells, sizeof(int) * (size_t)m->ncells * (m->dim + 1));
      memcpy(c->facets, m->facets, sizeof(int) * (size_t)m->nfacets * m->dim);
      memcpy(c->facet_tag, m->facet_tag, sizeof(int) * (size_t)m->nfacets);
    } else mf_simplex_mesh_free(c);
  }
  if (!ierr && m->part && copy) { /* a copy of a whole mesh keeps its partition */
    ierr = MF_CALLOC(ctx, (size_t)c->ncells + 1, &c->part);
    if (!ierr) memcpy(c->part, m->part, sizeof(int) * (size_t)c->ncells);
    if (ierr) mf_simplex_mesh_free(c);
  }
  if (ierr) {
    free(c);
    return ierr;
  }
  MF_CALL(wrap(ctx, c, fine));
  if (!copy) {
    mf_mesh_retain(coarse);
    (*fine)->coarser = coarse;
  }
  return 0;
}

static int simplex_mesh_refine(mf_mesh coarse, int levels, mf_mesh *fine)
{
  mf_context ctx = coarse->ctx;
  const double t0 = mf_phase_begin(ctx);
  mf_mesh cur = NULL;
  /* several ranks: a failure on one rank is every rank's, level by level (each refines its own part) */
  int ierr = refine_once(coarse, levels == 0, &cur);
  if (ctx->size > 1) ierr = mf_agree(ctx, ierr);
  for (int l = 1; !ierr && l < levels; l++) {
    mf_mesh next = NULL;
    ierr = refine_once(cur, 0, &next);
    if (ctx->size > 1) ierr = mf_agree(ctx, ierr);
    mf_mesh_destroy(&cur); /* held by next */
    cur = next;
  }
  if (ierr) mf_mesh_destroy(&cur);
  *fine = cur;
  mf_phase_end(ctx, MF_PHASE_MESH, t0);
  return ierr;
}

/* multigrid's coarser copy: the mesh this one refines (mf_mesh_refine), else the mesh itself (as many
 * cells: the coarsest) */
static int simplex_mesh_coarsen(mf_mesh fine, mf_mesh *coarse)
{
  *coarse = fine->coarser ? fine->coarser : fine;
  mf_mesh_retain(*coarse);
  return 0;
}

static const char *const simplex_mesh_names[] = {"square-tris", "cube-tets", NULL};

const mf_family mf_family_simplex = {
    .name = "simplex",
    .cells = "simplices",
    .kind = MF_CELL_SIMPLEX,
    .mesh_names = simplex_mesh_names,
    .mesh_create = mf_simplex_mesh_create,
    .mesh_create_box = simplex_mesh_create_box,
    .mesh_read = mf_simplex_mesh_read,
    .mesh_destroy = mf_simplex_mesh_release,
    .mesh_coarsen = simplex_mesh_coarsen,
    .transfer_create = mf_simplex_transfer_create,
    .mesh_refine = simplex_mesh_refine,
    .mesh_adapt = NULL,
    .mesh_refine_shells = NULL,
    .components = 1,
    .space_create = mf_simplex_space_create,
    .space_destroy = mf_simplex_space_destroy,
    .space_dirichlet_tags = mf_simplex_space_dirichlet_tags,
    .node_points = NULL, /* made with the space */
    .dof_point = NULL,
    .rhs = simplex_rhs,
    .l2_error = simplex_l2_error,
    .h1_error = simplex_h1_error,
    .operator_create = mf_simplex_operator_create,
    .physics_create = mf_simplex_physics_create,
    .vtu_begin = mf_simplex_vtu_begin,
    .vtu_values = mf_simplex_vtu_values,
    .vtu_points = mf_simplex_vtu_points,
    .vtu_cell_data = mf_simplex_vtu_cell_data,
    .vtu_end = mf_simplex_vtu_end,
};
