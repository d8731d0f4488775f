/* mf_simplex_space.h -- simplex meshes, spaces and operators behind the public handles (mf_mesh,
 * mf_space, mf_operator): the simplex family's entries of the cell-family table (lib/family.h,
 * filled in family_simplex.c), and the simplex operator kind that lib/operator.c makes on a simplex
 * space. Internal. On several ranks every rank holds the coarse mesh whole (a space on it keeps this rank's
 * cells) and the meshes refined from it in parts (parts_simplex.c). */
#ifndef MF_SIMPLEX_SPACE_H
#define MF_SIMPLEX_SPACE_H

#include "mf_simplex.h"
#include "mf_gmsh.h"
#include "family.h"

/** What a simplex space holds besides the generic fields of mf_space_s: the basis (rule of degree 2p),
 *  a finer rule for the L2 error, the DoFs (mf_simplex_dofs: bc there marks every boundary facet), and
 *  the Dirichlet tags in force (ntags < 0: every boundary facet). */
typedef struct {
  mf_simplex_basis basis;    /* qdegree 2p: operators (MF_QUAD_GAUSS) and right-hand sides */
  mf_simplex_basis basis_l2; /* qdegree 2p + 3 (at most 2 MF_SIMPLEX_MAX_DEGREE + 2): mf_vector_l2_error and
                                mf_vector_h1_error */
  mf_simplex_dofs dofs;       /* its cell_dofs: a view of the space's cell_nodes (which owns the map) */
  int ntags, *tags;
  void *dev_asm; /* cuda backend: the DoF-to-cell lists of the assembly, kept on the device once made
                    (lib/cuda/simplex_assembly.cu; freed with the space) */
  void (*dev_asm_free)(void *dev_asm); /* the backend's function that frees them (mf_simplex_backend.h) */
  mf_simplex_mesh local; /* several ranks: this rank's cells as a mesh (distribute_simplex.c); else empty */
  int *l2g;              /* several ranks: the whole mesh's DoF of each local DoF; else NULL */
  signed char *sup_t;    /* a mesh held in parts: the coarse entity that holds each local DoF, its dimension */
  int64_t *sup_x;        /* and its index (parts_simplex.c); else NULL */
} mf_simplex_space;

/** The cells a space works on: this rank's (several ranks: ss->local) or the mesh's (one rank). The
 *  operators, integrals and output of the family go through it. */
const mf_simplex_mesh *mf_simplex_space_mesh(const struct mf_space_s *space);
/** Several ranks (the mesh has a partition): the space's cells, DoFs, sizes, global numbering and exchange
 *  from the whole mesh's DoFs in ss->dofs, which it replaces by the local ones (distribute_simplex.c). */
int mf_simplex_space_distribute(struct mf_space_s *space, const mf_simplex_mesh *m);
/** A (rank, local DoF) pair of an exchange list. */
typedef struct {
  int r, l;
} mf_simplex_rank_dof;
/** The space's exchange (lib/space.c: import owner -> ghost, export-add back) from what this rank sends (its owned
 *  DoFs, to rank r) and receives (its ghosts, from their owner r): each list grouped by ascending rank, within a rank
 *  in the order both sides agree on; nc components a DoF. */
int mf_simplex_exchange_make(mf_context ctx, const mf_simplex_rank_dof *send, int64_t nsend,
                             const mf_simplex_rank_dof *recv, int64_t nrecv, int nc, mf_exchange *ex);
/** The local mesh of the whole mesh m on several ranks: its cells with part == rank in m's order (their numbers in
 *  m into *cells_out), their vertices numbered by first use, the boundary facets of those cells with their tags. */
int mf_simplex_mesh_local(mf_context ctx, const mf_simplex_mesh *m, int rank, mf_simplex_mesh *lm, int **cells_out);
/** A mesh held in parts (parts_simplex.c): the space's sizes, global numbering and exchange from its local DoFs
 *  (ss->dofs, renumbered: the owned ones first, then the ghosts by owner and key), and each DoF's coarse entity;
 *  collective (the global offsets): every rank calls it, with the error code of its steps before (ierr_in, then
 *  nothing is done but the agreement), and all return the same code. */
int mf_simplex_space_distribute_parts(struct mf_space_s *space, int ierr_in);
/** dbc[i] = 1 for the local DoFs on the coarse boundary facets of the tags (ntags < 0: of any tag). */
int mf_simplex_parts_marks(struct mf_space_s *space, int ntags, const int *tags, unsigned char *dbc);

/** The one place that decides which backends run simplex spaces of a degree: the cpu backend every
 *  degree, the cuda backend up to MF_SIMPLEX_CUDA_MAX_DEGREE (its kernels, lib/cuda/simplex.cu). */
int mf_simplex_backend_check(mf_context ctx, int degree);

/** The simplex family's meshes (lib/family.h): mf_mesh_create for the names "square-tris" and
 *  "cube-tets", mf_mesh_create_from_file for Gmsh files, and the mesh's simplex data freed. */
int mf_simplex_mesh_create(mf_context ctx, const char *name, int dim, int level, mf_mesh *mesh);
int mf_simplex_mesh_read(mf_context ctx, const char *path, int dim, mf_mesh *mesh);
void mf_simplex_mesh_release(mf_mesh mesh);
/** The simplex mesh of a Gmsh file's cells (path for messages): the vertices they reference, cells
 *  that overlap refused, the boundary computed and tagged from the file's facets (space_simplex.c). */
int mf_simplex_mesh_from_gmsh(mf_context ctx, const mf_gmsh_mesh *g, const char *path, mf_simplex_mesh *m);

/** The simplex family's spaces (lib/family.h): P_p of ncomp components per DoF (space_create; the
 *  DoFs' map into space->cell_nodes, of which dofs.cell_dofs is a view), the space's simplex data
 *  freed (space_destroy), and the Dirichlet DoFs of tagged boundary facets (space_dirichlet_tags). */
int mf_simplex_space_create(mf_mesh mesh, int degree, int ncomp, mf_space *space);
void mf_simplex_space_destroy(mf_space space);
int mf_simplex_space_dirichlet_tags(mf_space space, int ntags, const int *tags);

/** sum[cell_dofs[e N + i] nc + c] += v_e[i nc + c] over the ncells cells, v_e (N nc values) made by
 *  cell(e, v_e, user): a chunk of cells at a time on OpenMP threads (cell is called from several threads
 *  at once), then added in cell order by one thread, so that sum is the same whatever the number of
 *  threads. The right-hand side and the operators' diagonals. */
int mf_simplex_cells_sum(mf_context ctx, int ncells, int N, int nc, const int *cell_dofs,
                         void (*cell)(int e, double *ve, void *user), void *user, double *sum);
/** "(x, y[, z])" of quadrature point q (of basis b's rule) in cell e of m, at most n bytes: where messages
 *  name a point (the device's checks of sources and physics). */
void mf_simplex_point_text(const mf_simplex_mesh *m, const mf_simplex_basis *b, int e, int q, char *buf, size_t n);
/** Right-hand side b_i = int f phi_i (local array, overwritten) and the per-cell squared L2 errors. */
int mf_simplex_space_rhs(mf_space space, mf_coefficient_fn f, void *user, double *b);
int mf_simplex_space_l2_cells(mf_space space, const double *uh, mf_coefficient_fn u, void *user, double *cellsum);
/** The per-cell squared H1 seminorm errors |grad(u_h - u)|^2 (the L2 error's rule); a non-finite value of
 *  grad_u is refused, naming the first such point (lowest cell). */
int mf_simplex_space_h1_cells(mf_space space, const double *uh, mf_gradient_fn grad_u, void *user, double *cellsum);

/** The simplex family's operators (mass M_c, Laplace K_c, Helmholtz a M + b K_c; lib/simplex/operator_simplex.c,
 *  an operator type of its own that assembles rowwise), made by mf_operator_create_*. */
int mf_simplex_operator_create(mf_space space, mf_op_kind kind, mf_quadrature quad, double a, double b,
                               mf_coefficient_fn c, void *user, mf_operator *op);
struct mf_simplex_cuda_op_s; /* a device operator, the backend's own (mf_simplex_backend.h) */
/** A single-precision copy (mf_operator_create_single: multigrid's float V-cycle) of the scalar operator sop
 *  (elasticity NULL) or of elasticity (lambda, mu) on space, described by pw, with basis b's rule: on the cpu
 *  backend the CPU kernels on the float vectors' values (c(x_q) rounded to float), on a backend with simplex
 *  kernels the float twin of dev (ctx->bk->simplex->single). Its diagonal and assembly are refused (its double
 *  operator's serve). The operator's Dirichlet form is the caller's to set. */
int mf_simplex_operator_single(mf_space space, const mf_pw_op *pw, const mf_simplex_basis *b, const mf_simplex_op *sop,
                               int elasticity, double lambda, double mu, struct mf_simplex_cuda_op_s *dev,
                               mf_operator *op);
/** Multigrid's transfer between two simplex spaces (lib/simplex/transfer_simplex.c; lib/mg/mf_mg.h): a lower
 *  degree on the same mesh, or the same degree on the mesh the fine one refines (mf_mesh_refine). cpu. */
int mf_simplex_transfer_create(mf_space coarse, mf_space fine, mf_precision prec, struct mf_transfer_s **tr);
/** VTU output of simplex spaces (lib/simplex/vtu_simplex.c): the family's vtu_* entries (lib/family.h). */
int mf_simplex_vtu_begin(mf_vtu_cells *c);
void mf_simplex_vtu_values(mf_vtu_cells *c, int cell, double *vals);
void mf_simplex_vtu_points(mf_vtu_cells *c, int cell, double *xyz);
void mf_simplex_vtu_cell_data(const mf_vtu_cells *c, int cell, int32_t *level, int32_t *mask);
void mf_simplex_vtu_end(mf_vtu_cells *c);
/** The family's operators of a pointwise physics (lib/simplex/physics_simplex.c; ph: lib/physics/mf_physics.h). */
int mf_simplex_physics_create(mf_space space, const struct mf_phys_s *ph, mf_quadrature quad, mf_operator *op);

/* ------------------------------------------------------------------ assembled operators */

/** The host rows (assembly_simplex.c): S the reference matrices (mf_simplex_reference_matrices), off
 *  and ent the lists of mf_assembly_dof_cells over all cells. */
void mf_simplex_assembly_values_cpu(const mf_simplex_op *op, const double *S, const int64_t *rowptr, const int *colidx,
                                    const int64_t *off, const int64_t *ent, int nrows, double *vals);

#endif
