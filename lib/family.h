/* family.h -- the cell-family table: what differs between the hexahedra of a p4est forest (lib/hex/)
 * and triangles/tetrahedra (lib/simplex/) for meshes, spaces, vectors and output. The generic objects
 * (lib/mesh.c, lib/space.c, lib/vector.c, lib/vtu.c) never ask which family they hold: they call
 * mesh->fam or space->fam. An entry a family leaves NULL is a capability it lacks; the caller then
 * refuses with MF_ERR_UNSUPPORTED and a message naming the family and the capability.
 *
 *   who fills it        lib/hex/family_hex.c (mf_family_hex), lib/simplex/family_simplex.c (mf_family_simplex)
 *   who searches them   lib/family.c: mf_mesh_create, mf_mesh_create_box, mf_mesh_create_from_file
 *
 * Of the operators the family makes the matrix-free pointwise ones (operator_create): each family's
 * operator type (mf_optype, lib/operator_impl.h) carries its kernels, assembly and levels from there. */
#ifndef MF_FAMILY_H
#define MF_FAMILY_H

#include "operator_impl.h"

#ifdef __cplusplus
extern "C" {
#endif

/* What VTU output (lib/vtu.c) writes of one rank's cells: every cell one VTK cell of `npoints` points
 * of its own (points shared by cells are written once per cell), all of VTK type `type`. Made by the
 * family's vtu_begin, which fills npoints, type and its work, freed by vtu_end. */
typedef struct {
  mf_space space;
  const double *u; /* the vector's local values on the host, ghosts imported */
  int npoints;     /* points per cell */
  int type;        /* VTK cell type (VTK_LAGRANGE_QUADRILATERAL = 70, VTK_LAGRANGE_HEXAHEDRON = 72, ...) */
  void *work;      /* the family's (one thread) */
} mf_vtu_cells;

struct mf_transfer_s; /* lib/mg/mf_mg.h */
struct mf_phys_s;     /* lib/physics/mf_physics.h */

typedef struct mf_family_s {
  const char *name;  /* "hex", "simplex": in messages, "a simplex mesh has no coarser copy" */
  mf_cell_kind kind; /* mf_mesh_cell_kind */
  const char *cells; /* the cells in words, plural: "hexahedra", "simplices" */

  /* ---- meshes */
  /** The names of the built-in meshes the family makes (mf_mesh_create), NULL-terminated. */
  const char *const *mesh_names;
  /** A built-in mesh by name (one of mesh_names; the caller checked ctx, mesh and name). */
  int (*mesh_create)(mf_context ctx, const char *name, int dim, int level, mf_mesh *mesh);
  /** The same with the coarse mesh split into trees per direction (mf_mesh_create_box). */
  int (*mesh_create_box)(mf_context ctx, const char *name, int dim, const int trees[3], int level, mf_mesh *mesh);
  /** A mesh read from a file (mf_mesh_create_from_file; the caller checked path and dim). */
  int (*mesh_read)(mf_context ctx, const char *path, int dim, mf_mesh *mesh);
  /** Free the family's part of a mesh (the generic release frees the object). */
  void (*mesh_destroy)(mf_mesh mesh);
  /** A coarser copy (multigrid's levels: mf_mesh_coarsened); collective. */
  int (*mesh_coarsen)(mf_mesh fine, mf_mesh *coarse);
  /** A new mesh, `levels` rounds of uniform refinement of this one (mf_mesh_refine; levels checked). */
  int (*mesh_refine)(mf_mesh coarse, int levels, mf_mesh *fine);
  /** One round of refinement/coarsening by the callback (mf_mesh_adapt; the caller counts the revision). */
  int (*mesh_adapt)(mf_mesh mesh, mf_adapt_fn fn, void *user);
  /** `levels` rounds of refinement along spherical shells (mf_mesh_refine_shells; levels checked). */
  int (*mesh_refine_shells)(mf_mesh mesh, int levels);

  /* ---- spaces */
  /** 1: the backend's device mirror of a space holds its cell-to-DoF map, launch order and node
   *  coordinates, which the sum-factorised kernels read (hex); 0: the family's device operators keep
   *  their own (simplex), and the mirror holds the boundary marks and exchange lists only. */
  int device_cells;
  /** 1: spaces of several components per DoF (mf_space_create_components), interleaved (entry node *
   *  ncomp + c; cell_nodes holds the nodes). */
  int components;
  /** The space of degree `degree` with ncomp components on mesh: its checks, the DoF numbering into the
   *  generic fields (cell_nodes, nowned, nlocal, nglobal, ex), the Dirichlet marks (bc, nbc, bc_list)
   *  and what the family keeps (fdata, or its fields of mf_space_s). Returns nonzero with *space NULL
   *  where nothing was made (the same refusal on every rank), else *space with the result, which the
   *  caller (lib/space.c) agrees on over the ranks after adding the backend's device state; a failed
   *  space is destroyed there. Collective. */
  int (*space_create)(mf_mesh mesh, int degree, int ncomp, mf_space *space);
  /** Free what space_create made besides the generic fields (the generic release frees those). */
  void (*space_destroy)(mf_space space);
  /** mf_space_set_dirichlet_tags after the generic checks (NULL: the space's boundary is all Dirichlet). */
  int (*space_dirichlet_tags)(mf_space space, int ntags, const int *tags);
  /** The host array of DoF points, space->coords (mf_space_host_coords; NULL: made with the space). */
  int (*node_points)(mf_space space);
  /** One DoF's point where space->coords is not made (mf_space_dof_point; thread-safe). */
  void (*dof_point)(mf_space space, int dof, double *x);

  /* ---- vectors: the integrals over the cells (values at the DoF points are generic: node_points) */
  /** The cells' contributions b_i = int f phi_i into b's local entries (owned and ghost; the caller
   *  agrees over the ranks and adds the ghosts to their owners). */
  int (*rhs)(mf_vector b, mf_coefficient_fn f, void *user);
  /** ||u_h - u||_L2 over every rank, into *err. Collective. */
  int (*l2_error)(mf_vector uh, mf_coefficient_fn u, void *user, double *err);
  /** ||grad(u_h - u)||_L2 over every rank, into *err (scalar spaces; checked by the caller). Collective. */
  int (*h1_error)(mf_vector uh, mf_gradient_fn grad_u, void *user, double *err);

  /* ---- operators */
  /** A matrix-free mass (a M), Laplace (b K_c) or Helmholtz (a M + b K_c) operator of the family's
   *  operator type on space (lib/hex/operator_hex.c, lib/simplex/operator_simplex.c), arguments checked
   *  by the caller (mf_operator_create_pointwise); NULL: the family has none. Collective. */
  int (*operator_create)(mf_space space, mf_op_kind kind, mf_quadrature quad, double a, double b,
                         mf_coefficient_fn c, void *user, mf_operator *op);

  /** A matrix-free operator of the user's pointwise physics ph (a copy: lib/physics/mf_physics.h) on
   *  space, arguments checked by the caller (mf_operator_create_physics); NULL: the family has none.
   *  Collective. */
  int (*physics_create)(mf_space space, const struct mf_phys_s *ph, mf_quadrature quad, mf_operator *op);

  /* ---- multigrid (lib/mg/mg.c; NULL: no multigrid on the family's meshes) */
  /** The transfer between a space and the one of its next finer level (the same mesh at a higher
   *  degree, or the mesh refined once at the same degree): P and P^T for vectors of precision prec
   *  (lib/mg/mf_mg.h). */
  int (*transfer_create)(mf_space coarse, mf_space fine, mf_precision prec, struct mf_transfer_s **tr);

  /* ---- output (lib/vtu.c; vtu_begin NULL: VTU output not supported) */
  /** Fill c->npoints, c->type and c->work for c->space. */
  int (*vtu_begin)(mf_vtu_cells *c);
  /** The field c->u at the points of a cell, in VTK order (npoints values). */
  void (*vtu_values)(mf_vtu_cells *c, int cell, double *vals);
  /** The points of a cell, in VTK order (3 coordinates each, z = 0 in 2D). */
  void (*vtu_points)(mf_vtu_cells *c, int cell, double *xyz);
  /** The cell's refinement level and hanging-node mask (the cell data "level" and "hanging_mask"). */
  void (*vtu_cell_data)(const mf_vtu_cells *c, int cell, int32_t *level, int32_t *mask);
  void (*vtu_end)(mf_vtu_cells *c);
} mf_family;

/* The families (lib/family.c lists them for mesh creation). */
extern const mf_family mf_family_hex;
extern const mf_family mf_family_simplex;

/** The generic fields of a mesh that a family's creator has just allocated (zeroed): context (held),
 *  family, dim, one reference. */
void mf_mesh_init(mf_mesh mesh, mf_context ctx, const mf_family *fam, int dim);
/** The generic fields of a space that a family's space_create has just allocated (zeroed): context,
 *  mesh (held) and its revision and family, dim, degree, ncomp, n1 = degree + 1, one reference. */
void mf_space_init(mf_space space, mf_mesh mesh, int degree, int ncomp);

#ifdef __cplusplus
}
#endif
#endif
