/* mesh.c -- the mf_mesh object: named domains on p4est forests and their geometry mappings. */
#include "mfree_impl.h"
#include "simplex/mf_simplex_space.h"

#include <math.h>

#include <stdio.h>
#include <sys/resource.h>
#include <unistd.h>

#define MF_MAX_LEVEL_2D 18
#define MF_MAX_LEVEL_3D 12
#define MF_MAX_TREES_PER_DIR 4096

/* Bytes per rank of a forest with ntrees coarse trees and `cells` cells on this rank at the end of
 * its making: the connectivity, the per-tree arrays of p4est and of the mesh (every rank holds them
 * all) and, for the ball, the corner lists its connectivity is built from; per cell, a quadrant and
 * room for copies while p4est fills, balances or moves its arrays. On one rank with p4est 2.2 the
 * peak was 24 bytes per cell (2D level 11, 3D level 7); the estimate takes 2-2.7 times that, for the
 * copies a partition makes while cells move between ranks: it errs on the side of refusing. */
double mf_mesh_bytes(int dim, int64_t ntrees, double cells)
{
  const double per_tree = dim == 2 ? 800.0 : 1300.0, per_cell = dim == 2 ? 48.0 : 64.0;
  return per_tree * (double)ntrees + per_cell * cells;
}

int mf_mesh_create(mf_context ctx, const char *name, int dim, int level, mf_mesh *mesh)
{
  const int one[3] = {1, 1, 1};
  if (mesh) *mesh = NULL; /* NULL on every failure, the first argument's included */
  if (ctx && mesh && name && mf_simplex_mesh_name(name)) return mf_simplex_mesh_create(ctx, name, dim, level, mesh);
  return mf_mesh_create_box(ctx, name, dim, one, level, mesh);
}

int mf_mesh_create_box(mf_context ctx, const char *name, int dim, const int trees[3], int level, mf_mesh *mesh)
{
  if (mesh) *mesh = NULL; /* NULL on every failure, the first argument's included */
  MF_CHECK(ctx, NULL, MF_ERR_NULL, "context is NULL");
  MF_CHECK(mesh, ctx, MF_ERR_NULL, "output pointer mesh is NULL");
  *mesh = NULL;
  MF_CHECK(name, ctx, MF_ERR_NULL, "mesh name is NULL (" MF_MESH_NAMES ")");
  MF_CHECK(!mf_simplex_mesh_name(name), ctx, MF_ERR_ARGUMENT,
           "mesh '%s' has no trees: make it with mf_mesh_create (level: 2^level cells per side)", name);
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
  int ierr = mf_host_require(ctx, mf_mesh_bytes(dim, ntrees, local), what);
  if (!ierr) ierr = MF_CALLOC(ctx, 1, &m);
  ierr = mf_agree(ctx, ierr);
  if (ierr) {
    free(m);
    return ierr;
  }
  for (int k = 0; k < 3; k++) m->trees[k] = k < dim ? trees[k] : 1;
  m->ctx = ctx;
  m->refs = 1;
  mf_context_retain(ctx);
  m->dim = dim;
  m->level = level;
  m->map = map;
  m->ball_inner = 0.4;
  ierr = dim == 2 ? mf_forest_create_2d(m) : mf_forest_create_3d(m); /* agreed */
  if (ierr) {
    mf_mesh_destroy(&m);
    return ierr;
  }
  *mesh = m;
  return 0;
}

void mf_mesh_retain(mf_mesh mesh) { mesh->refs++; }

void mf_mesh_release(mf_mesh m)
{
  if (!m || --m->refs > 0) return;
  if (m->cell_kind == MF_CELL_SIMPLEX) mf_simplex_mesh_release(m);
  else if (m->dim == 2) mf_forest_destroy_2d(m);
  else mf_forest_destroy_3d(m);
  free(m->tree_vertices);
  mf_mesh_release(m->parent);
  mf_context_release(m->ctx);
  free(m);
}

int mf_mesh_destroy(mf_mesh *mesh)
{
  if (!mesh || !*mesh) return 0;
  mf_mesh m = *mesh;
  *mesh = NULL;
  mf_mesh_release(m);
  return 0;
}

int mf_mesh_dim(mf_mesh mesh, int *dim)
{
  MF_CHECK(mesh, NULL, MF_ERR_NULL, "mesh is NULL");
  MF_CHECK(dim, mesh->ctx, MF_ERR_NULL, "output pointer dim is NULL");
  *dim = mesh->dim;
  return 0;
}

int mf_mesh_cell_kind(mf_mesh mesh, mf_cell_kind *kind)
{
  MF_CHECK(mesh, NULL, MF_ERR_NULL, "mesh is NULL");
  MF_CHECK(kind, mesh->ctx, MF_ERR_NULL, "output pointer kind is NULL");
  *kind = mesh->cell_kind;
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
  mf_context ctx = mesh->ctx;
  MF_CHECK(mesh->cell_kind == MF_CELL_HEX, ctx, MF_ERR_UNSUPPORTED, "a simplex mesh has no coarser copy (multigrid)");
  mf_mesh m = NULL;
  const size_t nv = (size_t)mesh->ntrees * 3 * (1 << mesh->dim);
  int ierr = MF_CALLOC(ctx, 1, &m);
  double *tv = NULL;
  if (!ierr) ierr = MF_CALLOC(ctx, nv, &tv);
  ierr = mf_agree(ctx, ierr); /* the coarsening is collective */
  if (ierr) {
    free(m);
    free(tv);
    return ierr;
  }
  *m = *mesh;
  m->refs = 1;
  m->parent = mesh; /* shares its connectivity */
  mf_mesh_retain(mesh);
  mf_context_retain(ctx);
  m->forest = m->ghost = m->conn = NULL;
  m->tree_vertices = tv;
  m->level = mesh->level > 0 ? mesh->level - 1 : 0;
  memcpy(m->tree_vertices, mesh->tree_vertices, sizeof(double) * nv);
  ierr = mesh->dim == 2 ? mf_forest_coarsen_2d(mesh, m) : mf_forest_coarsen_3d(mesh, m);
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
  MF_CHECK(mesh->cell_kind == MF_CELL_HEX, mesh->ctx, MF_ERR_UNSUPPORTED,
           "adaptation needs a p4est mesh: simplex meshes are not adapted");
  MF_CALL(mesh->dim == 2 ? mf_forest_adapt_2d(mesh, fn, user) : mf_forest_adapt_3d(mesh, fn, user));
  mesh->revision++; /* the spaces made before are stale (mf_space_check_mesh) */
  return 0;
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
  MF_CHECK(mesh->cell_kind == MF_CELL_HEX, mesh->ctx, MF_ERR_UNSUPPORTED,
           "shell refinement needs a p4est mesh: simplex meshes are not adapted");
  MF_CHECK(levels >= 0 && levels <= 10, mesh->ctx, MF_ERR_ARGUMENT, "shell refinement levels %d out of range 0..10",
           levels);
  for (int l = 0; l < levels; l++) MF_CALL(mf_mesh_adapt(mesh, shells_fn, mesh));
  return 0;
}

void mf_mesh_map_point(const struct mf_mesh_s *mesh, int tree, const double *s, double *x)
{
  mf_map_point(mesh->dim, mesh->map, mesh->ball_inner, &mesh->tree_vertices[(size_t)3 * (1 << mesh->dim) * tree], s, x);
}
