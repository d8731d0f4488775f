/* mesh.c -- the mf_mesh object: named domains on p4est forests and their geometry mappings. */
#include "mfree_impl.h"

#include <math.h>

#define MF_MAX_LEVEL_2D 18
#define MF_MAX_LEVEL_3D 12

int mf_mesh_create(mf_context ctx, const char *name, int dim, int level, mf_mesh *mesh)
{
  const int one[3] = {1, 1, 1};
  return mf_mesh_create_box(ctx, name, dim, one, level, mesh);
}

int mf_mesh_create_box(mf_context ctx, const char *name, int dim, const int trees[3], int level, mf_mesh *mesh)
{
  MF_CHECK(ctx, NULL, MF_ERR_NULL, "context is NULL");
  MF_CHECK(mesh, ctx, MF_ERR_NULL, "output pointer mesh is NULL");
  *mesh = NULL;
  MF_CHECK(name, ctx, MF_ERR_NULL, "mesh name is NULL (use \"cube\", \"ball\" or \"deformed\")");
  MF_CHECK(dim == 2 || dim == 3, ctx, MF_ERR_ARGUMENT, "dimension %d out of range (2 or 3)", dim);
  int maxlevel = dim == 2 ? MF_MAX_LEVEL_2D : MF_MAX_LEVEL_3D;
  MF_CHECK(level >= 0 && level <= maxlevel, ctx, MF_ERR_ARGUMENT,
           "refinement level %d out of range 0..%d for dim %d", level, maxlevel, dim);
  mf_map_kind map;
  if (!strcmp(name, "cube")) map = MF_MAP_CUBE;
  else if (!strcmp(name, "ball")) map = MF_MAP_BALL;
  else if (!strcmp(name, "deformed")) map = MF_MAP_DEFORMED;
  else
    return mf_error_set(ctx, MF_ERR_ARGUMENT, __FILE__, __LINE__, __func__,
                        "unknown mesh '%s' (use \"cube\", \"ball\" or \"deformed\")", name);

  MF_CHECK(trees, ctx, MF_ERR_NULL, "trees per direction is NULL");
  for (int k = 0; k < dim; k++)
    MF_CHECK(trees[k] >= 1 && trees[k] <= 4096, ctx, MF_ERR_ARGUMENT, "trees in direction %d: %d out of range 1..4096",
             k, trees[k]);
  MF_CHECK(map != MF_MAP_BALL || (trees[1] == trees[0] && (dim == 2 || trees[2] == trees[0])), ctx,
           MF_ERR_ARGUMENT, "mesh 'ball': its 1 + 2 dim coarse trees are split t^dim-fold, so trees per direction must "
           "be equal (got %d, %d, %d)", trees[0], trees[1], dim == 3 ? trees[2] : trees[1]);
  mf_mesh m;
  MF_CALL(MF_CALLOC(ctx, 1, &m));
  for (int k = 0; k < 3; k++) m->trees[k] = k < dim ? trees[k] : 1;
  m->ctx = ctx;
  m->dim = dim;
  m->level = level;
  m->map = map;
  m->ball_inner = 0.4;
  int ierr = dim == 2 ? mf_forest_create_2d(m) : mf_forest_create_3d(m);
  if (ierr) {
    mf_mesh_destroy(&m);
    return ierr;
  }
  *mesh = m;
  return 0;
}

int mf_mesh_destroy(mf_mesh *mesh)
{
  if (!mesh || !*mesh) return 0;
  mf_mesh m = *mesh;
  if (m->dim == 2) mf_forest_destroy_2d(m);
  else mf_forest_destroy_3d(m);
  free(m->tree_vertices);
  free(m);
  *mesh = NULL;
  return 0;
}

int mf_mesh_dim(mf_mesh mesh, int *dim)
{
  MF_CHECK(mesh, NULL, MF_ERR_NULL, "mesh is NULL");
  MF_CHECK(dim, mesh->ctx, MF_ERR_NULL, "output pointer dim is NULL");
  *dim = mesh->dim;
  return 0;
}

int mf_mesh_num_cells(mf_mesh mesh, int64_t *ncells)
{
  MF_CHECK(mesh, NULL, MF_ERR_NULL, "mesh is NULL");
  MF_CHECK(ncells, mesh->ctx, MF_ERR_NULL, "output pointer ncells is NULL");
  *ncells = mesh->ncells_global;
  return 0;
}

int mf_mesh_coarsened(mf_mesh mesh, mf_mesh *coarse)
{
  MF_CHECK(mesh, NULL, MF_ERR_NULL, "mesh is NULL");
  MF_CHECK(coarse, mesh->ctx, MF_ERR_NULL, "output pointer coarse is NULL");
  *coarse = NULL;
  mf_mesh m;
  MF_CALL(MF_CALLOC(mesh->ctx, 1, &m));
  *m = *mesh;
  m->forest = m->ghost = m->conn = NULL;
  m->tree_vertices = NULL;
  m->level = mesh->level > 0 ? mesh->level - 1 : 0;
  int ierr = MF_CALLOC(mesh->ctx, (size_t)mesh->ntrees * 3 * (1 << mesh->dim), &m->tree_vertices);
  if (!ierr) {
    memcpy(m->tree_vertices, mesh->tree_vertices, sizeof(double) * (size_t)mesh->ntrees * 3 * (1 << mesh->dim));
    ierr = mesh->dim == 2 ? mf_forest_coarsen_2d(mesh, m) : mf_forest_coarsen_3d(mesh, m);
  }
  if (ierr) {
    mf_mesh_destroy(&m);
    return ierr;
  }
  *coarse = m;
  return 0;
}

int mf_mesh_adapt(mf_mesh mesh, mf_adapt_fn fn, void *user)
{
  MF_CHECK(mesh, NULL, MF_ERR_NULL, "mesh is NULL");
  MF_CHECK(fn, mesh->ctx, MF_ERR_NULL, "adaptation callback is NULL");
  return mesh->dim == 2 ? mf_forest_adapt_2d(mesh, fn, user) : mf_forest_adapt_3d(mesh, fn, user);
}

/* Shells: centres and radii chosen so that the spheres cross each other and no axis. */
static const double shell_c[3][3] = {{0.15, -0.10, 0.05}, {-0.20, 0.25, -0.10}, {0.05, 0.10, -0.30}};
static const double shell_r[3] = {0.55, 0.35, 0.75};

static int shells_fn(const double *x, int dim, int level, void *user)
{
  const struct mf_mesh_s *m = (const struct mf_mesh_s *)user;
  /* cell diameter: coarse trees span about 1.2 / t of the ball */
  double h = 1.2 / (m->trees[0] * (double)(1 << level)) * sqrt((double)dim);
  for (int k = 0; k < 3; k++) {
    double d = 0.0;
    for (int j = 0; j < dim; j++) d += (x[j] - shell_c[k][j]) * (x[j] - shell_c[k][j]);
    if (fabs(sqrt(d) - shell_r[k]) < 0.5 * h) return 1;
  }
  return 0;
}

int mf_mesh_refine_shells(mf_mesh mesh, int levels)
{
  MF_CHECK(mesh, NULL, MF_ERR_NULL, "mesh is NULL");
  MF_CHECK(levels >= 0 && levels <= 10, mesh->ctx, MF_ERR_ARGUMENT, "shell refinement levels %d out of range 0..10",
           levels);
  for (int l = 0; l < levels; l++) MF_CALL(mf_mesh_adapt(mesh, shells_fn, mesh));
  return 0;
}

void mf_mesh_map_point(const struct mf_mesh_s *mesh, int tree, const double *s, double *x)
{
  mf_map_point(mesh->dim, mesh->map, mesh->ball_inner, &mesh->tree_vertices[(size_t)3 * (1 << mesh->dim) * tree], s, x);
}
