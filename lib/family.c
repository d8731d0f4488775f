/* family.c -- the cell families mesh creation searches (lib/family.h), and the public creators that
 * search them: a built-in mesh by its name, with trees per direction, or from a file. The one place
 * where the core names the families; everything after the mesh is made goes through mesh->fam. */
#include "family.h"

static const mf_family *const families[] = {&mf_family_hex, &mf_family_simplex};
#define NFAMILIES (sizeof families / sizeof families[0])

/* The family whose built-in meshes include `name`, or NULL. */
static const mf_family *family_of_mesh(const char *name)
{
  for (size_t f = 0; f < NFAMILIES; f++)
    for (const char *const *n = families[f]->mesh_names; n && *n; n++)
      if (!strcmp(*n, name)) return families[f];
  return NULL;
}

/* The checks mf_mesh_create and mf_mesh_create_box share, and the family that claims the name. */
static int mesh_family(mf_context ctx, const char *name, mf_mesh *mesh, const mf_family **fam)
{
  if (mesh) *mesh = NULL; /* NULL on every failure, the first argument's included */
  MF_CHECK(ctx, NULL, MF_ERR_NULL, "context is NULL");
  MF_CHECK(mesh, ctx, MF_ERR_NULL, "output pointer mesh is NULL");
  MF_CHECK(name, ctx, MF_ERR_NULL, "mesh name is NULL (" MF_MESH_NAMES ")");
  *fam = family_of_mesh(name);
  MF_CHECK(*fam, ctx, MF_ERR_ARGUMENT, "unknown mesh '%s' (" MF_MESH_NAMES "; Gmsh files: mf_mesh_create_from_file)",
           name);
  return 0;
}

int mf_mesh_create(mf_context ctx, const char *name, int dim, int level, mf_mesh *mesh)
{
  const mf_family *fam = NULL;
  MF_CALL(mesh_family(ctx, name, mesh, &fam));
  return fam->mesh_create(ctx, name, dim, level, mesh);
}

int mf_mesh_create_box(mf_context ctx, const char *name, int dim, const int trees[3], int level, mf_mesh *mesh)
{
  const mf_family *fam = NULL;
  MF_CALL(mesh_family(ctx, name, mesh, &fam));
  MF_CHECK(fam->mesh_create_box, ctx, MF_ERR_ARGUMENT,
           "mesh '%s' has no trees (a %s mesh): make it with mf_mesh_create (level: 2^level cells per side)", name,
           fam->name);
  return fam->mesh_create_box(ctx, name, dim, trees, level, mesh);
}

int mf_mesh_create_from_file(mf_context ctx, const char *path, int dim, mf_mesh *mesh)
{
  if (mesh) *mesh = NULL; /* NULL on every failure, the first argument's included */
  MF_CHECK(ctx, NULL, MF_ERR_NULL, "context is NULL");
  MF_CHECK(mesh, ctx, MF_ERR_NULL, "output pointer mesh is NULL");
  MF_CHECK(path, ctx, MF_ERR_NULL, "file name is NULL");
  MF_CHECK(dim == 0 || dim == 2 || dim == 3, ctx, MF_ERR_ARGUMENT, "dimension %d out of range (2, 3, or 0: the file's)",
           dim);
  for (size_t f = 0; f < NFAMILIES; f++) /* the first family that reads files (simplex: Gmsh) */
    if (families[f]->mesh_read) return families[f]->mesh_read(ctx, path, dim, mesh);
  return mf_error_set(ctx, MF_ERR_UNSUPPORTED, __FILE__, __LINE__, __func__, "%s: no cell family reads mesh files",
                      path);
}
