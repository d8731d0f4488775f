/* space_impl.h -- private to the library: meshes (lib/mesh.c), spaces (lib/space.c) and their ghost
 * exchanges; what every cell family shares (each family keeps its own part in fdata). */
#ifndef MF_SPACE_IMPL_H
#define MF_SPACE_IMPL_H

#include "mfree_impl.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ------------------------------------------------------------------ mesh */

struct mf_family_s; /* the cell-family table (lib/family.h) */

struct mf_mesh_s {
  mf_context ctx;
  int dim, level;
  int64_t ncells_global, ncells_local;
  int refs;              /* the user's handle, spaces and coarsened copies made from it */
  struct mf_mesh_s *parent; /* a coarsened copy: the mesh whose connectivity it shares (held) */
  struct mf_mesh_s *coarser; /* a refined mesh (mf_mesh_refine, one level): the mesh it refines (held) */
  const struct mf_family_s *fam; /* its cell family's table (lib/family.h) */
  void *fdata;              /* the family's own data: hex meshes their forest (mf_hex_mesh, lib/hex/mf_hex.h),
                               simplex meshes the mf_simplex_mesh (lib/simplex/mf_simplex.h) */
  int revision;             /* rounds of adaptation so far (mf_mesh_adapt): a space made at another is stale */
};
void mf_mesh_retain(mf_mesh mesh);
void mf_mesh_release(mf_mesh mesh);

/** A coarser copy of mesh: every family of 2^dim cells on one rank merged into its parent, then 2:1
 *  balanced; no repartition, so every coarse cell is on the rank of its fine cells (nested meshes,
 *  rank-local transfers). It shares the connectivity, and holds mesh until it goes. */
int mf_mesh_coarsened(mf_mesh mesh, mf_mesh *coarse);

/* ------------------------------------------------------------------ space */

/** Neighbour exchange pattern built from p4est_lnodes sharers.
 *  Import (owner -> ghost): send owned entries send_idx[send_off[i]..send_off[i+1]) to rank[i];
 *  receive ghost entries recv_idx[recv_off[i]..). Export-add reverses the arrows and adds. */
typedef struct {
  int nneigh;
  int *rank;
  int *send_off, *send_idx;
  int *recv_off, *recv_idx;
  double *send_buf, *recv_buf;
  MPI_Request *req;
  int nreq; /* requests posted by mf_exchange_mpi_begin, waited for by mf_exchange_mpi_end */
} mf_exchange;

struct mf_space_s {
  mf_context ctx;
  mf_mesh mesh;
  int dim, degree, n1, npc; /* npc = n1^dim nodes per cell */
  int ncells;
  int nowned, nlocal;
  int64_t nglobal, global_offset;
  int *cell_nodes;      /* ncells x npc local DoF indices: the element-to-DoF map of every family (hex:
                           lexicographic, x fastest; simplex: in the order of mf_simplex_basis's nodes) */
  int16_t *face_code;   /* ncells: p4est_lnodes face_code (0 on conforming meshes) */
  int *cell_tree;       /* ncells: tree of each cell */
  int32_t *cell_q;      /* ncells x 3: lower corner in the tree, integer (p4est) coordinates */
  int8_t *cell_level;   /* ncells: refinement level */
  int root_log;         /* log2 of the tree's edge in those coordinates (P4EST_MAXLEVEL) */
  unsigned char *bc;    /* nlocal: 1 on Dirichlet boundary DoFs */
  int nbc, *bc_list;    /* the boundary DoFs, ascending */
  unsigned char *cell_bfaces; /* ncells: bit f set if face f lies on the domain boundary (set-up only) */
  int numbering;        /* how the DoFs were numbered: 1 lib/hex/dofs.c (uniform, one rank), 0 p4est_lnodes */
  int *dof_owner;       /* nlocal: the first cell with the DoF at an own (unconstrained) position, ncells
                           where this rank has none (possible for ghosts) */
  uint16_t *dof_pos;    /* nlocal: the DoF's node index in that cell */
  int owners_complete;  /* every local DoF, on every rank, has an owner cell on its rank */
  double *coords;       /* nlocal x dim: the point of every DoF, the node of the isoparametric geometry;
                           on the cuda backend made on first use (mf_space_host_coords) */
  double gll[MF_MAX_N1];/* 1D Gauss-Lobatto nodes on [0,1] */
  int ncolors;          /* color c: cells color_cells[color_off[c] .. color_off[c+1]) */
  int *color_off;       /* ncolors + 1; no two cells of one color share a DoF */
  int *color_cells;     /* ncells: the cells, color by color */
  int64_t *csr_rowptr;  /* nlocal + 1: the assembled operators' sparsity (lib/assembled/assembly.c), made on first use */
  int *csr_colidx;      /* csr_rowptr[nlocal]: the columns of each row, ascending */
  int *part_cells;      /* ncells: the cells part by part (mf_cell_part), ascending within each */
  int part_off[4];      /* part k: part_cells[part_off[k] .. part_off[k+1]) */
  int *launch_order;    /* ncells: order of the cells in an atomic launch (cuda backend; see
                           mf_space_launch_order), NULL on the cpu backend */
  int nmasked;          /* cells with hanging faces or edges (face_code != 0) */
  int *masked_cells;    /* nmasked: those cells, ascending */
  double hanging_P[2 * MF_MAX_N1 * MF_MAX_N1]; /* 1D coarse-to-fine interpolation, both halves */
  mf_exchange ex;
  void *dev;            /* backend mirror of cell_nodes, bc, exchange lists */
  int refs;             /* the user's handle, vectors and operators made on it */
  int ncomp;            /* components per DoF, interleaved (entry dof * ncomp + c); 1 for scalar spaces */
  const struct mf_family_s *fam; /* its mesh's cell family (lib/family.h) */
  void *fdata;          /* the family's own data: simplex spaces their basis and DoFs (mf_simplex_space,
                           lib/simplex/mf_simplex_space.h; the hex fields above stay empty); hex spaces NULL */

  int mesh_revision;    /* the mesh's revision when the space was made (mf_space_check_mesh) */
  int dtag_n;           /* the Dirichlet tags set (mf_space_set_dirichlet_tags): dtag_n of dtags, -1 the default */
  int *dtags;
};
/** The space's device state on the cuda backend (nothing on the cpu backend): made where there is none
 *  (mf_space_create makes it with the space), else its Dirichlet marks copied again (after
 *  mf_space_set_dirichlet_tags changed them on a simplex space). */
int mf_space_device_sync(mf_space space);
void mf_space_retain(mf_space space);
void mf_space_release(mf_space space);
/** Refuse (MF_ERR_INCOMPATIBLE) a space whose mesh was adapted after the space was made: the space keeps
 *  the old cells, so what is made from it or evaluated at its points now would silently belong to a
 *  mesh that no longer exists. Called at the public entries that make objects on a space (vectors,
 *  operators, multigrid hierarchies) or evaluate functions at its points (interpolation, random values,
 *  boundary values, right-hand sides, L2 and H1 errors, VTU output); what was made before keeps working. The
 *  revisions are the same on every rank (adaptation is collective): the refusal is too. */
int mf_space_check_mesh(mf_space space);

/** The host array of node coordinates, made on first use (not thread-safe: call before parallel use).
 *  Collective where it is not made yet on several ranks; set-up makes it there already. */
int mf_space_host_coords(mf_space space);
/** The point of one DoF, from its owner cell (owners_complete) or the host array. */
void mf_space_dof_point(mf_space space, int dof, double *x);
/** For messages about an object of space a where space b was expected (a != b), the words after
 *  "belongs to another space": " (125 DoFs, <b_has> 64)" where the sizes differ, and where they do not
 *  " object of the same size (125 DoFs): ..." (two spaces alike are still two); into buf, returned. */
const char *mf_space_mismatch(mf_space a, mf_space b, const char *b_has, char *buf, size_t n);
/** The cell parts (part_cells, part_off), made on first use. */
int mf_space_parts(mf_space space);
/** Split `order` (n cells) into the three parts, each keeping its cells' order in `order`: out (n) and
 *  off[4]. The interior is halved by count. */
void mf_space_split_parts(const mf_space space, const int *order, int n, int *out, int off[4]);

int mf_exchange_import(mf_context ctx, mf_exchange *ex, double *x);
/** Host exchange of a local array of doubles (single = 0) or floats (1): forward (owners -> ghosts,
 *  assign) or backward (ghosts -> owners, add). The messages are doubles either way. */
int mf_exchange_run(mf_context ctx, mf_exchange *ex, void *x, int single, int forward);
/** The same in halves: begin packs x and posts the messages, end waits and unpacks. Between them x's
 *  entries may be read but not written (its ghosts not read forward; backward, its ghosts not written). */
int mf_exchange_begin(mf_context ctx, mf_exchange *ex, const void *x, int single, int forward);
int mf_exchange_end(mf_context ctx, mf_exchange *ex, void *x, int single, int forward);
/** MPI phase only: send ex->send_buf, receive ex->recv_buf (forward: owners -> ghosts). */
int mf_exchange_mpi(mf_context ctx, mf_exchange *ex, int forward);
/** The same in halves over the caller's buffers (host, or device with a CUDA-aware MPI): begin posts
 *  the receives and sends, end waits for every posted request. */
int mf_exchange_mpi_begin(mf_context ctx, mf_exchange *ex, int forward, double *sbuf, double *rbuf);
int mf_exchange_mpi_end(mf_context ctx, mf_exchange *ex);
int mf_exchange_export_add(mf_context ctx, mf_exchange *ex, double *x);
void mf_exchange_free(mf_exchange *ex);

#ifdef __cplusplus
}
#endif
#endif
