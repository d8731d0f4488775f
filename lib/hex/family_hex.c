/* family_hex.c -- the hex family's table (lib/family.h) and its meshes: the named coarse meshes on
 * p4est forests (cube, ball, deformed, sheared; trees per direction), coarser copies, adaptation and
 * refinement along spherical shells. The p4est calls themselves are in forest.c. */
#include "mf_hex.h"
#include "mg/mf_mg.h"

#include <math.h>
#include <stdio.h>

#define MF_MAX_LEVEL_2D 18
#define MF_MAX_LEVEL_3D 12
#define MF_MAX_TREES_PER_DIR 4096

static int hex_mesh_create_box(mf_context ctx, const char *name, int dim, const int trees[3], int level, mf_mesh *mesh)
{
  MF_CHECK(dim == 2 || dim == 3, ctx, MF_ERR_ARGUMENT, "dimension %d out of range (2 or 3)", dim);
  int maxlevel = dim == 2 ? MF_MAX_LEVEL_2D : MF_MAX_LEVEL_3D;
  MF_CHECK(level >= 0 && level <= maxlevel, ctx, MF_ERR_ARGUMENT,
           "refinement level %d out of range 0..%d for dim %d", level, maxlevel, dim);
  mf_map_kind map;
  if (!strcmp(name, "cube")) map = MF_MAP_CUBE;
  else if (!strcmp(name, "ball")) map = MF_MAP_BALL;
  else if (!strcmp(name, "deformed")) map = MF_MAP_DEFORMED;
  else if (!strcmp(name, "sheared")) map = MF_MAP_SHEARED;
  else
    return mf_error_set(ctx, MF_ERR_ARGUMENT, __FILE__, __LINE__, __func__,
                        "unknown mesh '%s' (" MF_MESH_NAMES "; Gmsh files: mf_mesh_create_from_file)", name);

  MF_CHECK(trees, ctx, MF_ERR_NULL, "trees per direction is NULL");
  for (int k = 0; k < dim; k++)
    MF_CHECK(trees[k] >= 1 && trees[k] <= MF_MAX_TREES_PER_DIR, ctx, MF_ERR_ARGUMENT,
             "trees in direction %d: %d out of range 1..%d", k, trees[k], MF_MAX_TREES_PER_DIR);
  MF_CHECK(map != MF_MAP_BALL || (trees[1] == trees[0] && (dim == 2 || trees[2] == trees[0])), ctx,
           MF_ERR_ARGUMENT, "mesh 'ball': its 1 + 2 dim coarse trees are split t^dim-fold, so trees per direction must "
           "be equal (got %d, %d, %d)", trees[0], trees[1], dim == 3 ? trees[2] : trees[1]);
  /* sizes in 64 bits: p4est numbers trees and a rank's cells in 32-bit integers */
  int64_t ntrees = map == MF_MAP_BALL ? 1 + 2 * dim : 1;
  for (int k = 0; k < dim; k++) ntrees *= trees[k];
  char split[48];
  if (dim == 3) snprintf(split, sizeof split, "%d x %d x %d", trees[0], trees[1], trees[2]);
  else snprintf(split, sizeof split, "%d x %d", trees[0], trees[1]);
  MF_CHECK(ntrees <= INT32_MAX, ctx, MF_ERR_ARGUMENT,
           "mesh '%s' with trees %s has %lld coarse trees; p4est allows at most %d", name, split, (long long)ntrees,
           INT32_MAX);
  const double cells = (double)ntrees * ldexp(1.0, dim * level), local = cells / ctx->size;
  MF_CHECK(local <= INT32_MAX, ctx, MF_ERR_ARGUMENT,
           "mesh '%s' at level %d has %.3g cells, %.3g per rank on %d rank(s); p4est allows at most %d per rank: use "
           "more ranks or a lower level", name, level, cells, local, ctx->size, INT32_MAX);

  /* what can fail on one rank alone (memory) is agreed on before p4est's collective calls */
  char what[160];
  snprintf(what, sizeof what, "mesh '%s' (dim %d, %lld coarse trees, level %d: %.3g cells)", name, dim,
           (long long)ntrees, level, cells);
  mf_mesh m = NULL;
  mf_hex_mesh *h = NULL;
  int ierr = mf_host_require(ctx, mf_mesh_bytes(dim, ntrees, local), what);
  if (!ierr) ierr = MF_CALLOC(ctx, 1, &m);
  if (!ierr) ierr = MF_CALLOC(ctx, 1, &h);
  ierr = mf_agree(ctx, ierr);
  if (ierr) {
    free(m);
    free(h);
    return ierr;
  }
  mf_mesh_init(m, ctx, &mf_family_hex, dim);
  m->fdata = h;
  for (int k = 0; k < 3; k++) mf_hexmesh(m)->trees[k] = k < dim ? trees[k] : 1;
  m->level = level;
  mf_hexmesh(m)->map = map;
  mf_hexmesh(m)->ball_inner = 0.4;
  ierr = dim == 2 ? mf_forest_create_2d(m) : mf_forest_create_3d(m); /* agreed */
  if (ierr) {
    mf_mesh_destroy(&m);
    return ierr;
  }
  *mesh = m;
  return 0;
}

static int hex_mesh_create(mf_context ctx, const char *name, int dim, int level, mf_mesh *mesh)
{
  const int one[3] = {1, 1, 1};
  return hex_mesh_create_box(ctx, name, dim, one, level, mesh);
}

static void hex_mesh_destroy(mf_mesh m)
{
  if (m->dim == 2) mf_forest_destroy_2d(m);
  else mf_forest_destroy_3d(m);
  free(mf_hexmesh(m)->tree_vertices);
  free(m->fdata);
  m->fdata = NULL;
}

/* Every family of 2^dim cells on one rank merged into its parent, then 2:1 balanced; no repartition.
 * The copy shares the connectivity and holds `mesh`. */
static int hex_mesh_coarsen(mf_mesh mesh, mf_mesh *coarse)
{
  mf_context ctx = mesh->ctx;
  const mf_hex_mesh *fh = mf_hexmesh(mesh);
  mf_mesh m = NULL;
  mf_hex_mesh *h = NULL;
  const size_t nv = (size_t)fh->ntrees * 3 * (1 << mesh->dim);
  int ierr = MF_CALLOC(ctx, 1, &m);
  if (!ierr) ierr = MF_CALLOC(ctx, 1, &h);
  double *tv = NULL;
  if (!ierr) ierr = MF_CALLOC(ctx, nv, &tv);
  ierr = mf_agree(ctx, ierr); /* the coarsening is collective */
  if (ierr) {
    free(m);
    free(h);
    free(tv);
    return ierr;
  }
  mf_mesh_init(m, ctx, &mf_family_hex, mesh->dim);
  m->fdata = h;
  m->parent = mesh; /* shares its connectivity */
  mf_mesh_retain(mesh);
  m->level = mesh->level > 0 ? mesh->level - 1 : 0;
  m->revision = mesh->revision;
  h->map = fh->map;
  h->ball_inner = fh->ball_inner;
  memcpy(h->trees, fh->trees, sizeof h->trees);
  h->ntrees = fh->ntrees;
  h->tree_vertices = tv;
  memcpy(h->tree_vertices, fh->tree_vertices, sizeof(double) * nv);
  ierr = mesh->dim == 2 ? mf_forest_coarsen_2d(mesh, m) : mf_forest_coarsen_3d(mesh, m);
  if (ierr) {
    mf_mesh_destroy(&m);
    return ierr;
  }
  *coarse = m;
  return 0;
}

static int hex_mesh_adapt(mf_mesh mesh, mf_adapt_fn fn, void *user)
{
  return mesh->dim == 2 ? mf_forest_adapt_2d(mesh, fn, user) : mf_forest_adapt_3d(mesh, fn, user);
}

/* Shells: centres and radii chosen so that the spheres cross each other and no axis. */
static const double shell_c[3][3] = {{0.15, -0.10, 0.05}, {-0.20, 0.25, -0.10}, {0.05, 0.10, -0.30}};
static const double shell_r[3] = {0.55, 0.35, 0.75};

static int shells_fn(const double *x, int dim, int level, void *user)
{
  const struct mf_mesh_s *m = (const struct mf_mesh_s *)user;
  /* cell diameter: coarse trees span about 1.2 / t of the ball */
  double h = 1.2 / (mf_hexmesh(m)->trees[0] * (double)(1 << level)) * sqrt((double)dim);
  for (int k = 0; k < 3; k++) {
    double d = 0.0;
    for (int j = 0; j < dim; j++) d += (x[j] - shell_c[k][j]) * (x[j] - shell_c[k][j]);
    if (fabs(sqrt(d) - shell_r[k]) < 0.5 * h) return 1;
  }
  return 0;
}

static int hex_mesh_refine_shells(mf_mesh mesh, int levels)
{
  for (int l = 0; l < levels; l++) MF_CALL(mf_mesh_adapt(mesh, shells_fn, mesh));
  return 0;
}

static const char *const hex_mesh_names[] = {"cube", "ball", "deformed", "sheared", NULL};

const mf_family mf_family_hex = {
    .name = "hex",
    .cells = "hexahedra",
    .kind = MF_CELL_HEX,
    .mesh_names = hex_mesh_names,
    .mesh_create = hex_mesh_create,
    .mesh_create_box = hex_mesh_create_box,
    .mesh_read = NULL, /* p4est meshes are made from their names only */
    .mesh_destroy = hex_mesh_destroy,
    .mesh_coarsen = hex_mesh_coarsen,
    .mesh_adapt = hex_mesh_adapt,
    .mesh_refine_shells = hex_mesh_refine_shells,
    .device_cells = 1,
    .components = 1,
    .space_create = mf_hex_space_create,
    .space_destroy = mf_hex_space_destroy,
    .space_dirichlet_tags = mf_hex_space_dirichlet_tags,
    .node_points = mf_hex_node_points,
    .dof_point = mf_hex_dof_point,
    .rhs = mf_hex_rhs,
    .l2_error = mf_hex_l2_error,
    .h1_error = mf_hex_h1_error,
    .operator_create = mf_hex_operator_create,
    .physics_create = mf_hex_physics_create,
    .transfer_create = mf_transfer_create, /* lib/mg/transfer.c */
    .vtu_begin = mf_hex_vtu_begin,
    .vtu_values = mf_hex_vtu_values,
    .vtu_points = mf_hex_vtu_points,
    .vtu_cell_data = mf_hex_vtu_cell_data,
    .vtu_end = mf_hex_vtu_end,
};
