/* family_simplex.c -- the simplex family's table (lib/family.h): triangles and tetrahedra on one rank,
 * continuous P_p on equispaced nodes. Meshes, spaces and integrals are in space_simplex.c. */
#include "mf_simplex_space.h"

static const char *const simplex_mesh_names[] = {"square-tris", "cube-tets", NULL};

const mf_family mf_family_simplex = {
    .name = "simplex",
    .kind = MF_CELL_SIMPLEX,
    .mesh_names = simplex_mesh_names,
    .mesh_create = mf_simplex_mesh_create,
    .mesh_create_box = NULL, /* no trees */
    .mesh_read = mf_simplex_mesh_read,
    .mesh_destroy = mf_simplex_mesh_release,
    .mesh_coarsen = NULL, /* uniform refinement comes with simplex multigrid */
    .mesh_adapt = NULL,
    .mesh_refine_shells = NULL,
};
