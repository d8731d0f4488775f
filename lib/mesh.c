/* mesh.c -- the mf_mesh object: what every cell family's mesh shares (references, the coarser copy's
 * hold on its fine mesh, the adaptation count) and the capabilities asked of its family's table
 * (lib/family.h). The meshes themselves are made by the families (lib/family.c finds the family by
 * the mesh's name). */
#include "family.h"

void mf_mesh_init(mf_mesh m, mf_context ctx, const mf_family *fam, int dim)
{
  m->ctx = ctx;
  m->refs = 1;
  mf_context_retain(ctx);
  m->fam = fam;
  m->dim = dim;
}

void mf_mesh_retain(mf_mesh mesh) { mesh->refs++; }

void mf_mesh_release(mf_mesh m)
{
  if (!m || --m->refs > 0) return;
  if (m->fam && m->fam->mesh_destroy) m->fam->mesh_destroy(m);
  mf_mesh_release(m->parent);
  mf_mesh_release(m->coarser);
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
  *kind = mesh->fam->kind;
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
  const mf_family *fam = mesh->fam;
  MF_CHECK(fam->mesh_coarsen, mesh->ctx, MF_ERR_UNSUPPORTED, "a %s mesh has no coarser copy (multigrid)", fam->name);
  return fam->mesh_coarsen(mesh, coarse);
}

int mf_mesh_refine(mf_mesh coarse, int levels, mf_mesh *fine)
{
  MF_CHECK(fine, coarse ? coarse->ctx : NULL, MF_ERR_NULL, "output pointer fine is NULL");
  *fine = NULL;
  MF_CHECK(coarse, NULL, MF_ERR_NULL, "mesh is NULL");
  MF_CHECK(coarse->fam->mesh_refine, coarse->ctx, MF_ERR_UNSUPPORTED,
           "uniform refinement into a new mesh: simplex meshes (%s meshes: mf_mesh_create's level, mf_mesh_adapt)",
           coarse->fam->name);
  MF_CHECK(levels >= 0 && levels <= 8, coarse->ctx, MF_ERR_ARGUMENT, "refinement levels %d out of range 0..8", levels);
  return coarse->fam->mesh_refine(coarse, levels, fine);
}

int mf_mesh_adapt(mf_mesh mesh, mf_adapt_fn fn, void *user)
{
  MF_CHECK(mesh, NULL, MF_ERR_NULL, "mesh is NULL");
  MF_CHECK(fn, mesh->ctx, MF_ERR_NULL, "adaptation callback is NULL");
  MF_CHECK(mesh->fam->mesh_adapt, mesh->ctx, MF_ERR_UNSUPPORTED,
           "adaptation needs a p4est mesh: %s meshes are not adapted", mesh->fam->name);
  MF_CALL(mesh->fam->mesh_adapt(mesh, fn, user));
  mesh->revision++; /* the spaces made before are stale (mf_space_check_mesh) */
  return 0;
}

int mf_mesh_refine_shells(mf_mesh mesh, int levels)
{
  MF_CHECK(mesh, NULL, MF_ERR_NULL, "mesh is NULL");
  MF_CHECK(mesh->fam->mesh_refine_shells, mesh->ctx, MF_ERR_UNSUPPORTED,
           "shell refinement needs a p4est mesh: %s meshes are not adapted", mesh->fam->name);
  MF_CHECK(levels >= 0 && levels <= 10, mesh->ctx, MF_ERR_ARGUMENT, "shell refinement levels %d out of range 0..10",
           levels);
  return mesh->fam->mesh_refine_shells(mesh, levels);
}
