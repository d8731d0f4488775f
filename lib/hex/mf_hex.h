/* mf_hex.h -- the hex family (lib/family.h, mf_family_hex): quadrilaterals and hexahedra of a p4est
 * forest, continuous Q_p on Gauss-Lobatto points. Its entries live in
 *   family_hex.c  the table and the meshes (named coarse meshes, coarser copies, adaptation, shells)
 *   space_hex.c   the space (numbering by forest.c and dofs.c, Dirichlet marks, colors, owners, points)
 *   vector_hex.c  the integrals of vectors over the cells (right-hand side, L2 and H1 errors)
 *   vtu_hex.c     the VTK Lagrange cells of the output
 * and the p4est code in forest.c (compiled as 2D, and through forest3.c as 3D). Internal. */
#ifndef MF_HEX_H
#define MF_HEX_H

#include "family.h"
#include "hex/mf_map.h"

#ifdef __cplusplus
extern "C" {
#endif

/** The hex family's part of a mesh (mesh->fdata): the p4est forest and the map of the named mesh. */
typedef struct {
  mf_map_kind map;
  double ball_inner;     /* half-width of the inner cube of the ball's coarse mesh */
  int trees[3];          /* cube/deformed: trees per direction of the unit box (brick); ball: split t */
  int ntrees;
  double *tree_vertices; /* ntrees x 2^dim x 3: corner coordinates of each tree, z-order */
  void *conn, *forest, *ghost; /* p4est_ or p8est_ connectivity, forest, ghost layer */
  int owns_conn;         /* 0 for a coarsened copy, which shares its fine mesh's connectivity */
} mf_hex_mesh;
static inline mf_hex_mesh *mf_hexmesh(const struct mf_mesh_s *m) { return (mf_hex_mesh *)m->fdata; }

/* what the hex family's spaces have beyond the generic ones (lib/hex/space_hex.c) */
/** Lower corner and edge length of a cell in its tree's reference cube [0,1]^dim (exact: dyadic). */
static inline void mf_space_cell_box(const struct mf_space_s *s, int cell, double *origin, double *size)
{
  const double inv = 1.0 / (double)((int64_t)1 << s->root_log);
  for (int d = 0; d < 3; d++) origin[d] = s->cell_q[3 * (size_t)cell + d] * inv;
  *size = 1.0 / (double)((int64_t)1 << s->cell_level[cell]);
}
/** Reference point xi in [0,1]^dim of a cell -> physical point by the mesh mapping. */
void mf_space_cell_point(mf_space space, int cell, const double *xi, double *x);
/** The cell's geometry nodes, X[node*dim + k]: its DoFs' points with the hanging-node constraints
 *  applied (so a cell on a hanging face takes the coarse face's shape: the mesh stays watertight). */
void mf_space_cell_coords(mf_space space, int cell, double *X);
/** Launch order of the cells for an atomic scatter: Morton chunks of `chunk` cells, within a chunk
 *  by child id and, within one, cells without a mask first (chunk <= 0: Morton order). */
int mf_space_launch_order(mf_space space, int chunk, int *order);
/** The cell colors (ncolors, color_off, color_cells), made on first use. */
int mf_space_colors(mf_space space);

/* dimension-specific p4est code (forest.c compiled as 2D and, through p4est_to_p8est.h, as 3D) */
int mf_forest_create_2d(mf_mesh mesh);
int mf_forest_create_3d(mf_mesh mesh);
void mf_forest_destroy_2d(mf_mesh mesh);
void mf_forest_destroy_3d(mf_mesh mesh);
int mf_forest_space_2d(mf_space space);
int mf_forest_space_3d(mf_space space);
int mf_forest_adapt_2d(mf_mesh mesh, mf_adapt_fn fn, void *user);
int mf_forest_adapt_3d(mf_mesh mesh, mf_adapt_fn fn, void *user);
int mf_forest_coarsen_2d(mf_mesh fine, mf_mesh coarse);
int mf_forest_coarsen_3d(mf_mesh fine, mf_mesh coarse);

/** Bytes per rank of a forest with ntrees coarse trees and `cells` cells on this rank at the end of
 *  its making: the connectivity, the per-tree arrays of p4est and of the mesh (every rank holds them
 *  all) and, for the ball, the corner lists its connectivity is built from; per cell, a quadrant and
 *  room for copies while p4est fills, balances or moves its arrays. On one rank with p4est 2.2 the
 *  peak was 24 bytes per cell (2D level 11, 3D level 7); the estimate takes 2-2.7 times that, for the
 *  copies a partition makes while cells move between ranks: it errs on the side of refusing. */
static inline double mf_mesh_bytes(int dim, int64_t ntrees, double cells)
{
  const double per_tree = dim == 2 ? 800.0 : 1300.0, per_cell = dim == 2 ? 48.0 : 64.0;
  return per_tree * (double)ntrees + per_cell * cells;
}

/** Physical point of tree reference coordinates s in [0,1]^dim of tree t. */
static inline void mf_mesh_map_point(const struct mf_mesh_s *mesh, int tree, const double *s, double *x)
{
  mf_map_point(mesh->dim, mf_hexmesh(mesh)->map, mf_hexmesh(mesh)->ball_inner, &mf_hexmesh(mesh)->tree_vertices[(size_t)3 * (1 << mesh->dim) * tree], s, x);
}

/* the table's entries (lib/family.h says what each does) */
int mf_hex_space_create(mf_mesh mesh, int degree, int ncomp, mf_space *space);
void mf_hex_space_destroy(mf_space space);
int mf_hex_node_points(mf_space space);
void mf_hex_dof_point(mf_space space, int dof, double *x);
int mf_hex_rhs(mf_vector b, mf_coefficient_fn f, void *user);
int mf_hex_l2_error(mf_vector uh, mf_coefficient_fn u, void *user, double *err);
int mf_hex_h1_error(mf_vector uh, mf_gradient_fn grad_u, void *user, double *err);
/** The family's matrix-free operators (lib/hex/operator_hex.c): sum-factorised, of type mf_optype_hex. */
int mf_hex_operator_create(mf_space space, mf_op_kind kind, mf_quadrature quad, double a, double b,
                           mf_coefficient_fn c, void *user, mf_operator *op);
/** Dirichlet DoFs by boundary tags: box meshes' faces 1..2 dim (x = 0, x = 1, y = 0, ...), the ball's
 *  sphere 1 (lib/hex/space_hex.c). */
int mf_hex_space_dirichlet_tags(mf_space space, int ntags, const int *tags);
/** The family's operators of a pointwise physics (lib/hex/physics_hex.c; ph: lib/physics/mf_physics.h). */
int mf_hex_physics_create(mf_space space, const struct mf_phys_s *ph, mf_quadrature quad, mf_operator *op);
int mf_hex_vtu_begin(mf_vtu_cells *c);
void mf_hex_vtu_values(mf_vtu_cells *c, int cell, double *vals);
void mf_hex_vtu_points(mf_vtu_cells *c, int cell, double *xyz);
void mf_hex_vtu_cell_data(const mf_vtu_cells *c, int cell, int32_t *level, int32_t *mask);
void mf_hex_vtu_end(mf_vtu_cells *c);

#ifdef __cplusplus
}
#endif
#endif
