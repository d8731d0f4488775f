/* mfree.h -- the public interface of mfree, matrix-free finite-element operators on CPUs and GPUs.
 *
 * Everything a user may call is declared here (Newton's method in its part mfree_newton.h, included at the end). Objects are opaque handles named mf_<object>;
 * functions are mf_<object>_<verb>, return 0 on success and a nonzero mf_error_code otherwise, with
 * the message readable from the context (mf_context_error_message). Functions that create an object
 * set its handle to NULL on every failure (where the pointer to the handle is not NULL). Destroy
 * functions take the address of a handle and set it to NULL; destroying NULL is a no-op, and a
 * destroyed handle, being NULL, is refused with MF_ERR_NULL.
 *
 * Errors under MPI: every function that creates or sets up an object (context, mesh, space, vector,
 * operator, preconditioner, CG) and every reduction (dot, norm, sum, solve) is collective on the
 * context's communicator and returns the same code on every rank. mf_operator_apply,
 * mf_operator_diagonal and mf_pc_apply run their ghost exchanges on every rank even after a local
 * failure, so no rank waits, but return this rank's code: the next reduction agrees on it. A failure
 * that strikes one rank alone (an allocation, a file, the device, a callback's value) is agreed on at
 * the latest in the next collective step: every rank returns the code of the lowest failing rank, and every
 * rank's message is that rank's, prefixed "rank R: ", so that rank 0 can print it. No rank is left
 * waiting in a collective call. Argument checks that fail alike on every rank return at once.
 *
 * Lifetimes: a mesh holds its context, a space its mesh, a vector or operator its space, a
 * preconditioner its operator, a cg its operator and the preconditioner set for it (references, as
 * in libCEED). Handles may be destroyed in any order; an object goes when its last holder does.
 *
 * Data path (see docs/architecture.md):
 *   mf_context (MPI comm, backend) -> mf_mesh (p4est forest) -> mf_space (Q_p DoFs, lnodes)
 *   -> mf_operator (quadrature data + sum-factorised kernel) -> mf_cg (CG, preconditioned by an mf_pc:
 *   Jacobi, Chebyshev, geometric multigrid or a user shell)
 */
#ifndef MFREE_H
#define MFREE_H

#include <mpi.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/** Error codes returned by every function. */
typedef enum {
  MF_SUCCESS = 0,
  MF_ERR_ARGUMENT = 1,     /**< an argument is out of range or malformed */
  MF_ERR_NULL = 2,         /**< a required handle or pointer is NULL */
  MF_ERR_INCOMPATIBLE = 3, /**< objects that must match do not (spaces, backends, sizes) */
  MF_ERR_BACKEND = 4,      /**< backend unknown, not compiled in, or not usable here */
  MF_ERR_MEMORY = 5,       /**< an allocation failed */
  MF_ERR_CUDA = 6,         /**< a CUDA runtime or library call failed */
  MF_ERR_MPI = 7,          /**< an MPI call failed */
  MF_ERR_UNSUPPORTED = 8,  /**< the combination is valid but not implemented */
  MF_ERR_NOT_CONVERGED = 9, /**< an iterative solver stopped before reaching its tolerance */
  MF_ERR_IO = 10           /**< a file could not be opened or written */
} mf_error_code;

typedef struct mf_context_s *mf_context;
typedef struct mf_mesh_s *mf_mesh;
typedef struct mf_space_s *mf_space;
typedef struct mf_vector_s *mf_vector;
typedef struct mf_operator_s *mf_operator;
typedef struct mf_cg_s *mf_cg;
typedef struct mf_pc_s *mf_pc;

/** Scalar coefficient c(x) evaluated at quadrature points; x has dim entries. The library calls it
 *  from several OpenMP threads at once (set-up runs in parallel on the host, also for the cuda
 *  backend, where the points come from the device): it must be thread-safe, and give the same value for the same x. */
typedef double (*mf_coefficient_fn)(const double *x, int dim, void *user);

/* ---------------------------------------------------------------- context */

/** @brief Create a context on an MPI communicator with a backend "cpu", "cuda" or "auto".
 *  @param[in]  comm     communicator (MPI must be initialised); duplicated internally
 *  @param[in]  backend  "cpu", "cuda" (fails if not compiled in or no GPU is usable) or "auto"
 *  @param[out] ctx      new context; NULL on failure (the message is then in mf_last_error_message) */
int mf_context_create(MPI_Comm comm, const char *backend, mf_context *ctx);
int mf_context_destroy(mf_context *ctx);
/** @brief The last error message recorded on ctx (never NULL; "" if none), or, if it is later, the
 *  calling thread's last error on a NULL handle (which belongs to no context). ctx NULL: the thread's last message. */
const char *mf_context_error_message(mf_context ctx);
/** @brief The last error message of any object in this process. */
const char *mf_last_error_message(void);
/** @brief The backend actually in use: "cpu" or "cuda". */
const char *mf_context_backend(mf_context ctx);
/** @brief The context's communicator: the duplicate of mf_context_create's, owned by the context (do
 *  not free it). */
int mf_context_comm(mf_context ctx, MPI_Comm *comm);
/** @brief Whether the CUDA backend was compiled in and a device is usable (1) or not (0).
 *  mf_cuda_status says why not. */
int mf_cuda_available(void);

/** What mf_cuda_status found. */
typedef enum {
  MF_CUDA_USABLE = 0,   /**< compiled in, and the CUDA runtime counts at least one device */
  MF_CUDA_NOT_COMPILED, /**< mfree was built without the CUDA backend */
  MF_CUDA_NO_DEVICE,    /**< no device to use: cudaErrorNoDevice (no GPU, or CUDA_VISIBLE_DEVICES hides
                         *   them all), or no CUDA driver installed at all (the runtime answers
                         *   cudaErrorInsufficientDriver and cudaDriverGetVersion gives 0): a machine
                         *   without a GPU */
  MF_CUDA_FAULT         /**< a CUDA driver is installed but the runtime cannot start on it: any other
                         *   error of cudaGetDeviceCount (a driver older than the runtime,
                         *   cudaErrorInitializationError, a device in an error state, ...): a GPU
                         *   machine that is broken */
} mf_cuda_state;

/** @brief Whether the CUDA backend is usable here and, if not, why; mf_cuda_available() is 1
 *  exactly where *state is MF_CUDA_USABLE.
 *  @param[out] state   the answer (required)
 *  @param[out] reason  if not NULL: a text for people, naming the CUDA error and its name, e.g.
 *                      "no CUDA device: cudaGetDeviceCount failed: no CUDA-capable device is detected
 *                      (cudaErrorNoDevice)" or "cudaGetDeviceCount failed: CUDA driver version is
 *                      insufficient for CUDA runtime version (cudaErrorInsufficientDriver); the driver
 *                      supports CUDA 11.0, the runtime is 13.0"; with MF_CUDA_USABLE it says how many
 *                      devices were found. Owned by the library and kept per thread until this
 *                      thread's next call of mf_cuda_status.
 *  Asks the CUDA runtime for its devices (cudaGetDeviceCount), which creates no CUDA context and
 *  takes no device memory; a device that is counted but then cannot be used (cudaSetDevice or its
 *  first allocation failing: out of memory, exclusive mode taken, a fault) is reported by
 *  mf_context_create(.., "cuda", ..) as MF_ERR_CUDA, "cannot use CUDA device D: ...". Needs no MPI
 *  and no context. Returns MF_ERR_NULL if state is NULL, else 0. */
int mf_cuda_status(mf_cuda_state *state, const char **reason);

/** @brief Limit the device memory this context may hold (bytes; 0: no limit beyond the device's free
 *  memory). Set-up that would pass it is refused before allocating, with MF_ERR_MEMORY and the bytes
 *  needed and available. No effect on the cpu backend. */
int mf_context_set_device_memory_limit(mf_context ctx, size_t bytes);
/** @brief Device memory the context holds now and the most it held since creation (bytes; 0 on the
 *  cpu backend). Counts every allocation of mfree's own (not the CUDA runtime's or cuBLAS's). */
int mf_context_device_memory(mf_context ctx, size_t *in_use, size_t *peak);

/* ---------------------------------------------------------------- set-up phases */

/** The named phases of set-up. Every library call that does set-up work adds its wall time to the
 *  phase it belongs to, per context and per rank; on the cuda backend a phase's time includes its
 *  device work (the phase ends with a device synchronisation). */
typedef enum {
  MF_PHASE_MESH = 0,     /**< coarse mesh, forest, uniform refinement, partition, adaptation */
  MF_PHASE_DOFS,         /**< ghost layer, DoF numbering (p4est_lnodes), exchange lists */
  MF_PHASE_ORDERING,     /**< cell coloring and launch order */
  MF_PHASE_COORDINATES,  /**< node coordinates: one point per DoF, from the mesh mapping */
  MF_PHASE_GEOMETRY,     /**< Jacobians and the stored quadrature data */
  MF_PHASE_COEFFICIENT,  /**< coefficient callbacks at the quadrature points */
  MF_PHASE_DIRICHLET,    /**< Dirichlet marks and boundary values */
  MF_PHASE_TRANSFER,     /**< host-to-device copies of the space and operator data */
  MF_PHASE_RHS,          /**< right-hand side assembly */
  MF_PHASE_DIAGONAL,     /**< matrix-free diagonal (Jacobi, Chebyshev and the multigrid smoothers) */
  MF_PHASE_SOLVER,       /**< solver creation */
  MF_PHASE_COMPILE,      /**< users' physics compiled at run time (system C compiler, NVRTC) or loaded from the cache */
  MF_PHASE_EIGENVALUES,  /**< Chebyshev's eigenvalue estimates (CG steps, on every multigrid level) */
  MF_PHASE_TRANSFERS,    /**< multigrid's transfers between levels (P and P^T) made and copied to the device */
  MF_PHASE_PATTERN,      /**< the assembled operators' sparsity (CSR), made once per space and copied to the device */
  MF_PHASE_ASSEMBLY,     /**< the assembled operators' values (mf_operator_create_assembled) */
  MF_PHASE_COUNT
} mf_phase;
/** @brief Short name of a phase ("mesh", "dofs", ...; "unknown" out of range). */
const char *mf_phase_name(mf_phase phase);
/** @brief Seconds spent in each phase on this rank since the context was made or last reset. */
int mf_context_phase_times(mf_context ctx, double seconds[MF_PHASE_COUNT]);
/** @brief Set every phase's time to zero. */
int mf_context_phase_reset(mf_context ctx);

/* ---------------------------------------------------------------- mesh */

/** The names of the meshes mf_mesh_create makes, as the library's messages list them (and
 *  mfree-poisson's --mesh): the p4est meshes, which mf_mesh_create_box also takes, then the simplex
 *  ones. Gmsh files: mf_mesh_create_from_file. */
#define MF_MESH_NAMES "cube | ball | deformed | sheared | square-tris | cube-tets"

/** @brief Create a uniformly refined, partitioned mesh.
 *  @param[in] name  "cube" (unit square/cube), "ball" (disk/ball of radius 1, curved boundary),
 *                   "deformed" (unit cube mapped by x -> 0.5 + sin(2pi/3 (x-0.5))/sqrt(3) per coordinate) or
 *                   "sheared" (unit cube mapped by the affine x -> (x + 0.5 y + 0.25 z, 1.2 y + 0.3 z, 0.8 z),
 *                   in 2D x -> (x + 0.5 y, 1.2 y): parallelogram/parallelepiped cells; area 1.2, volume 0.96)
 *  @param[in] dim   2 or 3
 *  @param[in] level uniform refinement level, 0..(12 in 3D, 18 in 2D); a mesh that would not fit is
 *                   refused before any allocation (MF_ERR_MEMORY, with the estimated and the available
 *                   host memory per rank: the node's available memory over its ranks, or the address
 *                   space that RLIMIT_AS, ulimit -v, leaves where less), as is one of more than
 *                   2^31 - 1 cells per rank or trees */
int mf_mesh_create(mf_context ctx, const char *name, int dim, int level, mf_mesh *mesh);
/* Simplex meshes (docs/simplex.md): mf_mesh_create also makes the built-in
 *   "square-tris"  (dim 2) the unit square in 2 n^2 triangles, n = 2^level cells per side, level 0..12;
 *   "cube-tets"    (dim 3) the unit cube in 6 n^3 tetrahedra (Kuhn split), n = 2^level, level 0..8;
 * their boundary facets tagged by side as the hex boxes' faces (x = 0 1, x = 1 2, y = 0 3, y = 1 4, z = 0 5,
 * z = 1 6); mf_mesh_refine refines them (and a file's mesh) uniformly into a new mesh. On several ranks the mesh
 * is split between them (docs/simplex.md). Refused on them (MF_ERR_UNSUPPORTED): adaptation, shell refinement, the
 * search and table assembly variants; on the cuda backend degrees above 4. */
/** Cell kinds of a mesh. */
typedef enum {
  MF_CELL_HEX = 0,    /**< quadrilaterals (2D) or hexahedra (3D) of a p4est forest: Q_p spaces */
  MF_CELL_SIMPLEX = 1 /**< triangles (2D) or tetrahedra (3D): P_p spaces */
} mf_cell_kind;
/** @brief A simplex mesh read from a Gmsh .msh file (ASCII 2.2 or 4.1, binary 4.1): its triangles (dim 2) or tetrahedra
 *  (dim 3) are the cells (dim 0: the file's dimension, 3 where it has tetrahedra, else 2; mf_mesh_dim tells it); its
 *  boundary is computed (the facets of one cell only), each boundary facet tagged with the physical tag of the file's
 *  facet element on it (0 where the file has none), for mf_space_set_dirichlet_tags. Second-order elements are read
 *  where straight (their edge nodes at the midpoints) and refused where curved (MF_ERR_ARGUMENT: the cells are affine).
 *  On several ranks every rank reads it and the cells are split. A malformed file gives MF_ERR_IO or MF_ERR_ARGUMENT
 *  with "FILE:LINE: problem" (docs/simplex.md); so do a path that is a folder or a named pipe (MF_ERR_IO), and cells
 *  that overlap where they meet: a cell given twice or a facet of three cells or more (MF_ERR_ARGUMENT, naming the
 *  elements). */
int mf_mesh_create_from_file(mf_context ctx, const char *path, int dim, mf_mesh *mesh);
/** @brief A new mesh: `levels` (0..8) rounds of uniform refinement of `coarse`, which stays as it is (simplex meshes,
 *  built-in or from a file: every edge split at its midpoint, each triangle into 4, each tetrahedron into 8,
 *  the inner octahedron along its shortest diagonal; boundary tags inherited; docs/simplex.md). Hex meshes
 *  refine through mf_mesh_create's level or mf_mesh_adapt (MF_ERR_UNSUPPORTED here). Too many cells for the
 *  32-bit indices or the host's memory are refused (MF_ERR_ARGUMENT, MF_ERR_MEMORY). */
int mf_mesh_refine(mf_mesh coarse, int levels, mf_mesh *fine);
/** @brief The mesh's cell kind (MF_CELL_HEX or MF_CELL_SIMPLEX). */
int mf_mesh_cell_kind(mf_mesh mesh, mf_cell_kind *kind);
/** @brief Like mf_mesh_create, with a finer coarse mesh: for "cube", "deformed" and "sheared" the unit box split into
 *  trees[0] x trees[1] (x trees[2]) trees; for "ball" each of its 1 + 2 dim trees split t^dim-fold
 *  (t = trees[0] = trees[1] (= trees[2])). Gives sizes between the powers of 2^dim. Trees per
 *  direction 1..4096, within the limits of mf_mesh_create (memory; at most 2^31 - 1 trees in all: for
 *  the 3D ball, 7 t^3 trees, t <= 674). "square-tris", "cube-tets": trees[0] x trees[1] (x trees[2]) squares or cubes
 *  (1..4096 per side in 2D, 1..256 in 3D) of 2 triangles or 6 tetrahedra, then `level` (0..8) rounds of
 *  mf_mesh_refine (multigrid's levels; the Kuhn split refined is the Kuhn split of the finer cubes). */
int mf_mesh_create_box(mf_context ctx, const char *name, int dim, const int trees[3], int level, mf_mesh *mesh);
int mf_mesh_destroy(mf_mesh *mesh);
/** @brief The mesh's dimension (2 or 3). */
int mf_mesh_dim(mf_mesh mesh, int *dim);
/** @brief Number of cells over all ranks. */
int mf_mesh_num_cells(mf_mesh mesh, int64_t *ncells);

/** Adaptation callback: > 0 refines the cell, < 0 votes to coarsen it (a family of 2^dim cells is
 *  merged when all vote so), 0 keeps it. centre: the cell centre in physical coordinates. */
typedef int (*mf_adapt_fn)(const double *centre, int dim, int level, void *user);
/** @brief One round of adaptation: refine/coarsen by fn, then 2:1 balance across faces, edges and corners, and
 *  repartition across ranks. Spaces made before refer to the old mesh: destroy them and create new ones after. Such a
 *  space is refused (MF_ERR_INCOMPATIBLE, "the space was made on the mesh before it was adapted") wherever it would
 *  make something new or evaluate a function at its points: vectors and operators made on it
 *  (mf_operator_create_assembled of its operators too), mf_vector_interpolate, mf_vector_set_random,
 *  mf_vector_set_boundary, mf_vector_assemble_rhs, mf_vector_l2_error, mf_vector_h1_error, mf_vector_write_vtu of its
 *  vectors, and the set-up of a multigrid preconditioner of its operators. What was made before keeps working on the
 *  old mesh (operators, vectors, vector algebra, Jacobi and Chebyshev preconditioners, a multigrid hierarchy set up
 *  before, CG). The callback must give the same answer on every rank. A round whose cells would not fit in the host
 *  memory is refused before p4est allocates (MF_ERR_MEMORY). */
int mf_mesh_adapt(mf_mesh mesh, mf_adapt_fn fn, void *user);
/** @brief The built-in pattern: `levels` rounds (0..10) refining the cells that several non-concentric
 *  spherical shells (as of wave fronts) pass through; any mesh, made for the ball. Each round is one
 *  mf_mesh_adapt (its rules for the spaces made before apply). */
int mf_mesh_refine_shells(mf_mesh mesh, int levels);

/* ---------------------------------------------------------------- space */

/** @brief Continuous Lagrange Q_p space on Gauss-Lobatto points, p = 1..8; boundary DoFs marked. */
int mf_space_create(mf_mesh mesh, int degree, mf_space *space);
/* On a simplex mesh mf_space_create makes the continuous Lagrange P_p space on equispaced nodes,
 * p = 1..6, its DoFs numbered by entity (vertices, edges, faces, interiors); every DoF is owned (one
 * rank). The Dirichlet DoFs are those on the boundary facets: all of them by default, or those of
 * chosen physical tags (mf_space_set_dirichlet_tags). */
/** @brief A space of ncomp components per DoF (1..4), stored interleaved: entry node * ncomp + c, on hex
 *  (Q_p) and simplex (P_p) meshes; the vectors of vector-valued physics (mf_operator_create_physics) and
 *  of mf_operator_create_elasticity (ncomp = dim). mf_vector_interpolate and mf_vector_set_boundary give
 *  every component of a DoF the function's value at the DoF (mf_vector_set_random: a different value per
 *  component); the Dirichlet form fixes every component of a boundary node. The built-in mass, Laplace
 *  and Helmholtz operators, mf_vector_assemble_rhs, mf_vector_l2_error, mf_vector_h1_error, VTU output,
 *  assembly and multigrid refuse ncomp > 1 (MF_ERR_UNSUPPORTED). */
int mf_space_create_components(mf_mesh mesh, int degree, int ncomp, mf_space *space);
/** @brief The Dirichlet DoFs become those on the boundary with one of the tags[0..ntags): simplex meshes
 *  the physical tags of a Gmsh file's facets (the built-in meshes tag their sides as the hex boxes); hex box
 *  meshes (cube, deformed, sheared) their faces 1..2 dim in the order x = 0, x = 1, y = 0, y = 1, z = 0,
 *  z = 1; the hex ball its sphere 1. Every component of a marked node. ntags = 0: no Dirichlet DoFs
 *  (pure Neumann); tags NULL with ntags < 0: the whole boundary again (the default; a negative ntags with a
 *  tag array is refused, MF_ERR_ARGUMENT). Call it before making operators and vectors of the space
 *  (MF_ERR_ARGUMENT after). A tag that the mesh does not have is refused (MF_ERR_ARGUMENT, naming it).
 *  Collective: an error on one rank is every rank's, and the space's marks may then differ between ranks
 *  (destroy it). */
int mf_space_set_dirichlet_tags(mf_space space, int ntags, const int *tags);
/** @brief The Dirichlet DoFs of this rank: *n of them (owned and ghost entries; every component of a
 *  marked node counts), and, where dofs is not NULL, their local indices ascending into dofs (n entries;
 *  the local numbering of mf_vector_get_array). */
int mf_space_dirichlet_dofs(mf_space space, int *n, int *dofs);
int mf_space_destroy(mf_space *space);
/** @brief The space's polynomial degree p. */
int mf_space_degree(mf_space space, int *degree);
/** @brief Global number of DoFs (all ranks); for a space of ncomp components, the vector entries
 *  (DoFs times ncomp). */
int mf_space_num_dofs(mf_space space, int64_t *ndofs);
/** @brief DoFs owned by this rank, and owned plus ghost (entries, as mf_space_num_dofs); either
 *  pointer may be NULL. */
int mf_space_local_sizes(mf_space space, int *nowned, int *nlocal);

/* ---------------------------------------------------------------- vectors */

/** @brief A distributed vector of the space: owned entries then ghost entries, on the context's backend. */
int mf_vector_create(mf_space space, mf_vector *v);
int mf_vector_destroy(mf_vector *v);
int mf_vector_set_value(mf_vector v, double value);
/** @brief Interpolate f at the DoF points (owned and ghost entries). A value of f that is not finite
 *  (NaN, infinite) is refused (MF_ERR_ARGUMENT) naming the DoF and its point; collective, so that a
 *  refusal on one rank is every rank's. */
int mf_vector_interpolate(mf_vector v, mf_coefficient_fn f, void *user);
/** @brief Fill owned entries with reproducible pseudo-random values in [-1,1] that depend on the
 *  DoF's position, not on the partition (so 1 and N ranks give the same vector). */
int mf_vector_set_random(mf_vector v, uint64_t seed);
/** @brief Copy the owned entries to/from a host array of length nowned. */
int mf_vector_get_values(mf_vector v, double *host);
int mf_vector_set_values(mf_vector v, const double *host);
int mf_vector_copy(mf_vector dst, mf_vector src);
/** @brief y <- alpha x + y (owned entries). */
int mf_vector_axpy(mf_vector y, double alpha, mf_vector x);
int mf_vector_scale(mf_vector v, double alpha);
int mf_vector_dot(mf_vector x, mf_vector y, double *result);
int mf_vector_norm2(mf_vector x, double *result);
/** @brief Sum of the owned entries over all ranks. */
int mf_vector_sum(mf_vector x, double *result);

/* ---------------------------------------------------------------- vector arrays */

/** Where an array lives. */
typedef enum {
  MF_MEM_HOST = 1,  /**< host memory */
  MF_MEM_DEVICE = 2 /**< device (GPU) memory: the cuda backend only */
} mf_memtype;

/** @brief The vector's local array (nlocal entries: the nowned owned entries, then the ghosts, see
 *  mf_space_local_sizes) in memory `mem`, to read and write until mf_vector_restore_array.
 *
 *  On the cuda backend a vector keeps its values on the device and, from the first host access on, a
 *  host copy, and knows which of the two is current: the other is copied only when it is stale. A
 *  host array is copied from the device if the device was written since the last copy; after a
 *  host array is written (got with this function), the next device use (any mfree function, or a
 *  device array) copies it to the device once. Device arrays cost nothing when the device is
 *  current, so a Krylov loop on device arrays around mf_operator_apply makes no host copies. The
 *  device array is valid in the CUDA context mfree uses, on the default stream (mfree's device work
 *  runs there; synchronise before using it on another stream).
 *
 *  On the cpu backend the values live in host memory only: MF_MEM_HOST gives them, without a copy,
 *  and MF_MEM_DEVICE fails (MF_ERR_BACKEND).
 *
 *  The owned entries are the vector's values. Ghost entries are copies of other ranks' owned
 *  entries that mfree refreshes when an operation needs them: they may be stale, and what is
 *  written there is overwritten by the next refresh.
 *
 *  While an array is checked out for writing, no other array of the vector can be got and no mfree
 *  function may use the vector (MF_ERR_ARGUMENT, naming the vector): restore it first. Read-only
 *  arrays (mf_vector_get_array_read) can be held several at once, also of both memories, and the
 *  vector can be read meanwhile (e.g. be the input of mf_operator_apply), but not changed.
 *  @param[in]  mem    MF_MEM_HOST or MF_MEM_DEVICE
 *  @param[out] array  the array (NULL on failure) */
int mf_vector_get_array(mf_vector v, mf_memtype mem, double **array);
/** @brief Give back an array of mf_vector_get_array: the values written there become the vector's.
 *  *array must be the array got; it is set to NULL. */
int mf_vector_restore_array(mf_vector v, double **array);
/** @brief The same for reading only: the vector's values do not change, so nothing is copied back. */
int mf_vector_get_array_read(mf_vector v, mf_memtype mem, const double **array);
int mf_vector_restore_array_read(mf_vector v, const double **array);

/* ---------------------------------------------------------------- operators */

/** Quadrature rules, per direction. */
typedef enum {
  MF_QUAD_GAUSS = 0,     /**< Gauss, q = p + 1 points (default) */
  MF_QUAD_GAUSS_P2 = 1,  /**< Gauss, q = p + 2 points */
  MF_QUAD_GLL = 2,       /**< Gauss-Lobatto collocated with the nodes, q = p + 1 */
  MF_QUAD_GAUSS_M2 = 3   /**< simplex physics only (mf_operator_create_physics): the rule of degree 2p - 2, exact for
                              constant g-functions of grad u on affine cells (one point per P1 cell) */
} mf_quadrature;

/** @brief Mass operator (c u, v), coefficient c(x) (NULL: 1). */
int mf_operator_create_mass(mf_space space, mf_quadrature quad, mf_coefficient_fn c, void *user,
                            mf_operator *op);
/** @brief Laplace operator (c grad u, grad v), i.e. -div(c grad u), coefficient c(x) (NULL: 1). */
int mf_operator_create_laplace(mf_space space, mf_quadrature quad, mf_coefficient_fn c, void *user,
                               mf_operator *op);
/** @brief Helmholtz operator a M + b K with K the Laplace operator with coefficient c (NULL: 1).
 *
 *  Coefficients of the operators: c must be finite at every quadrature point; a value that is not
 *  (NaN, infinite) is refused at creation with MF_ERR_ARGUMENT, naming the quadrature point, its cell
 *  and its coordinates (on both backends). Its sign is not checked: CG and the preconditioners need a
 *  symmetric positive definite operator, i.e. c > 0 (mass, Laplace) and a, b >= 0 with a c or b c
 *  positive (Helmholtz); with other signs CG stops with "not positive definite". */
int mf_operator_create_helmholtz(mf_space space, mf_quadrature quad, double a, double b,
                                 mf_coefficient_fn c, void *user, mf_operator *op);
/* On a simplex space the three operators above are the simplex kind (lib/simplex/operator_simplex.c):
 * affine cells, the P_p basis at a rule of degree 2p (the quadrature argument is checked, not used);
 * Dirichlet form and diagonal as for hex operators. */
/** @brief Linear isotropic elasticity on a simplex space of dim components (mf_space_create_components):
 *  (sigma(u), eps(v)) with eps(u) = sym grad u, sigma = lambda tr(eps) I + 2 mu eps; mu > 0 and
 *  lambda > -2 mu / 3 (MF_ERR_ARGUMENT otherwise). The Dirichlet form fixes every component of a
 *  boundary DoF. Simplex spaces only (MF_ERR_UNSUPPORTED on hex spaces). */
int mf_operator_create_elasticity(mf_space space, double lambda, double mu, mf_operator *op);
/** @brief A user operator: apply(x, y, user) computes y = A x; diag (may be NULL) fills the diagonal. */
typedef int (*mf_shell_apply_fn)(mf_vector x, mf_vector y, void *user);
/* Callbacks (shell operators and preconditioners) may use the arrays of their vectors
 * (mf_vector_get_array...) and must restore them before returning. Other vectors that the calling mfree
 * function is changing (the solution x inside mf_cg_solve) can be read there, not got for writing. */
int mf_operator_create_shell(mf_space space, mf_shell_apply_fn apply, mf_shell_apply_fn diag,
                             void *user, mf_operator *op);
/** How cell contributions are added into the output vector (CUDA backend; the CPU is sequential). */
typedef enum {
  MF_SCATTER_ATOMIC = 0,  /**< one launch over all cells, atomicAdd into the output (default: faster on H100) */
  MF_SCATTER_COLORED = 1  /**< one launch per cell color; no two cells of a color share a DoF */
} mf_scatter;
int mf_operator_set_scatter(mf_operator op, mf_scatter mode);
/** @brief Cells per CUDA block (default: the cells-per-block table of docs/performance.md); n * q^dim
 *  must not exceed 512 threads (1024 where one cell needs more than 512). No effect on the CPU backend. */
int mf_operator_set_cells_per_block(mf_operator op, int n);
/** Which CUDA cell-kernel design applies a matrix-free operator (docs/performance.md, "Kernel designs"). */
typedef enum {
  MF_KERNEL_AUTO = 0,   /**< the faster design for the case, from the measured table in the docs (default) */
  MF_KERNEL_POINT = 1,  /**< one thread per quadrature point, several cells per block at low order */
  MF_KERNEL_COLUMN = 2  /**< one thread per column of points, the last direction held in registers */
} mf_kernel_design;
/** @brief Choose the CUDA kernel design (MF_KERNEL_AUTO by default). Both compute the same operator; no
 *  effect on the CPU backend. mf_operator_set_cells_per_block applies to MF_KERNEL_POINT only. */
int mf_operator_set_kernel_design(mf_operator op, mf_kernel_design design);
/** Where a matrix-free operator's geometry comes from at each application (docs/performance.md,
 *  "Geometry on the fly"). */
typedef enum {
  MF_GEOMETRY_STORED = 0,   /**< quadrature data stored per point (c w |J| and c w |J| J^-1 J^-T; default) */
  MF_GEOMETRY_ON_THE_FLY = 1 /**< Jacobians computed in the kernel from the space's node coordinates; only
                                  the coefficient is stored (one value per point, none when c is NULL) */
} mf_geometry;
/** @brief Switch a matrix-free mass, Laplace or Helmholtz operator (double precision) between stored
 *  quadrature data and geometry computed on the fly. To on-the-fly: the coefficient is evaluated at
 *  the quadrature points (the same points and values as the stored data) and the quadrature data are
 *  freed. Back to stored: they are recomputed from the node coordinates and those coefficient values
 *  (no callback). Both forms give the same operator to rounding (the same formulas, lib/physics/mf_pointwise.h).
 *  The diagonal and multigrid's float copies are made from quadrature data computed for the moment.
 *  On the cuda backend on-the-fly runs in the point design (MF_KERNEL_COLUMN falls back to it). Refused:
 *  shell and assembled operators, single-precision copies; mf_operator_create_assembled refuses an
 *  on-the-fly operator (switch it back first). Collective. */
int mf_operator_set_geometry(mf_operator op, mf_geometry mode);
/** @brief The operator's geometry mode (shell and assembled operators: MF_GEOMETRY_STORED). */
int mf_operator_get_geometry(mf_operator op, mf_geometry *mode);
/** @brief With on != 0, boundary DoFs become identity rows/columns (homogeneous Dirichlet form). */
int mf_operator_set_dirichlet(mf_operator op, int on);
/** @brief y <- A x (owned entries of y; x's ghosts are imported as needed). x and y must differ. */
int mf_operator_apply(mf_operator op, mf_vector x, mf_vector y);
/** @brief The operator's diagonal, computed matrix-free. */
int mf_operator_diagonal(mf_operator op, mf_vector diag);
int mf_operator_destroy(mf_operator *op);
/** @brief Assemble the operator into a sparse matrix (CSR) and wrap it as an operator with the same
 *  interface: mf_operator_create_assembled_variant with MF_ASSEMBLY_AUTO. On 'cpu' the values come from
 *  dense element matrices added color by color: the reference against which matrix-free and the other
 *  variants are checked; on 'cuda' they are computed on the device (the table variant) and stay there.
 *  Hanging-node constraints are condensed (C^T A_e C); the Dirichlet form is the operator's, as for
 *  it. The sparsity is made once per space (on the host; on 'cuda' copied to the device once) and
 *  shared by every operator assembled on it. A matrix that would not fit in the host memory, or on
 *  'cuda' in the device memory, is refused before its arrays are allocated (MF_ERR_MEMORY, with the
 *  bytes needed and available). Pointwise operators (built-in, physics: at their state) in double; collective. */
int mf_operator_create_assembled(mf_operator op, mf_operator *assembled);
/** How the values of an assembled operator are computed (the sparsity is the same for all). */
typedef enum {
  MF_ASSEMBLY_AUTO = 0,    /**< the backend's default: the reference on 'cpu', the fastest measured on 'cuda' */
  MF_ASSEMBLY_SEARCH = 1,  /**< (a) element entries cell by cell (on the device: a block stages a few cells'
                                quadrature data, one thread per entry), added at positions found by binary
                                search in the row, with atomics on the device */
  MF_ASSEMBLY_TABLE = 2,   /**< (b) the same with a precomputed table of each cell's nonzero positions (on
                                'cuda' made by the first table assembly on a space and kept with it) */
  MF_ASSEMBLY_ROWWISE = 3  /**< (c) one thread per row, gathering from the cells that hold the row's DoF */
} mf_assembly_variant;
/** @brief mf_operator_create_assembled with a chosen variant: on 'cpu' the CPU twins of the device
 *  kernels (the same matrix as the reference to rounding; AUTO is the reference), on 'cuda' the device
 *  kernels (AUTO is MF_ASSEMBLY_TABLE where a table is kept or one fits with room to spare, else
 *  MF_ASSEMBLY_SEARCH). The same sparsity and the same matrix to rounding for all; they
 *  differ in speed and in the memory they need while assembling (docs/performance.md, "Assembly
 *  variants"). On 'cuda' the call returns when the values are complete on the device. An unknown
 *  variant is refused (MF_ERR_ARGUMENT); collective. */
int mf_operator_create_assembled_variant(mf_operator op, mf_assembly_variant variant, mf_operator *assembled);
/** @brief Number of stored nonzeros of an assembled operator on this rank (0 for matrix-free ones). */
int mf_operator_local_nnz(mf_operator op, int64_t *nnz);

/* ---------------------------------------------------------------- pointwise physics */

/** @brief A pointwise function of a physics, in the form of PETSc's f0/f1 and g0..g3: called at one
 *  quadrature point in physical coordinates with dim, nc (the field's components), u[nc] the field,
 *  du[nc * dim] its gradient (du[b * dim + e] = d u_b / d x_e), x[dim] the point and k the physics'
 *  constants (mf_physics_set_constants); it writes out, which the library zeroes before the call:
 *    f0  out[nc]                   the residual's term against the test function's value v_c
 *    f1  out[nc * dim]             against its gradient d v_c / d x_d, at [c * dim + d]
 *    g0  out[nc * nc]              d f0_c / d u_b,                 at [c * nc + b]
 *    g1  out[nc * nc * dim]        d f0_c / d (d u_b / d x_e),     at [(c * nc + b) * dim + e]
 *    g2  out[nc * nc * dim]        d f1_{c,d} / d u_b,             at [(c * nc + b) * dim + d]
 *    g3  out[nc * nc * dim * dim]  d f1_{c,d} / d (d u_b / d x_e), at [((c * nc + b) * dim + d) * dim + e]
 *  The linear operator of g0..g3 (evaluated at u = du = 0) is
 *    (A u, v) = integral of  v . (g0 u + g1 du) + dv : (g2 u + g3 du),
 *  the library doing the geometry (J^-1, w |det J|), sum factorisation, hanging nodes, the Dirichlet form,
 *  the scatter and the ranks. The functions are called from several OpenMP threads at once (thread-safe:
 *  no writes but to out) and must give finite values; a value that is not is refused with
 *  MF_ERR_ARGUMENT naming the function, its entry, the point, its cell and x. */
typedef void (*mf_pointwise_fn)(int dim, int nc, const double *u, const double *du, const double *x,
                                const double *k, double *out);
/** A physics: the pointwise functions of a field of ncomp components and their constants. */
typedef struct mf_physics_s *mf_physics;
/** @brief An empty physics of ncomp (1..4) components. */
int mf_physics_create(mf_context ctx, int ncomp, mf_physics *ph);
/** @brief A physics of the gallery, written with the functions above (lib/physics/physics.c), on fields
 *  of ncomp components (every component alike; "elasticity" needs ncomp = dim), with n constants k (0:
 *  the defaults in brackets):
 *    "mass"        (c u, v)                          k = (c)            [1]
 *    "laplace"     (c grad u, grad v)                k = (c)            [1]
 *    "helmholtz"   a (u, v) + b (grad u, grad v)     k = (a, b)         [1, 1]
 *    "diffusion"   (K grad u, grad v)                k = K row by row   (4 in 2D, 9 in 3D; no default)
 *    "elasticity"  (sigma(u), eps(v)), sigma = lambda tr(eps) I + 2 mu eps   k = (lambda, mu) [1, 1]
 *  With ncomp = 3 "mass" and "laplace" are the vector mass and vector Laplace of the CEED benchmarks
 *  BP2/BP4/BP6. Each has the residual of its form, f0 = g0 u and f1 = g3 grad u (so that
 *  mf_operator_residual gives A u). */
int mf_physics_create_gallery(mf_context ctx, const char *name, int ncomp, int n, const double *k, mf_physics *ph);
/** @brief The residual's functions f0 and f1 (either may be NULL). */
int mf_physics_set_residual(mf_physics ph, mf_pointwise_fn f0, mf_pointwise_fn f1);
/** @brief The bilinear form's / Jacobian's functions g0..g3 (any may be NULL: that term is absent and
 *  costs nothing). */
int mf_physics_set_jacobian(mf_physics ph, mf_pointwise_fn g0, mf_pointwise_fn g1, mf_pointwise_fn g2,
                            mf_pointwise_fn g3);
/** @brief The physics' functions as C source: `source` (a string) or the file at `path`, and the names of
 *  its functions in `functions`, e.g. "f1=flux g3=stiffness" (entries f0, f1, g0..g3 = a C name, spaces
 *  or commas between; those not named are absent). The same text runs on every backend: on 'cpu' it is
 *  compiled by the system C compiler (MFREE_CC, else CC, else cc) into a shared object when an operator
 *  is made; on 'cuda' by NVRTC into the operator's kernels. Both are kept in the cache folder
 *  (mf_context_set_cache_dir), so that a later run does not compile again. The source is C that is also
 *  valid C++ (NVRTC compiles C++: no implicit conversions from void *), may include <math.h> and use its
 *  functions, and defines each named function with the signature of mf_pointwise_fn (static or not).
 *  Replaces functions given before (and mf_physics_set_residual/_jacobian replace the source). A source
 *  that does not compile is refused when the operator is made (MF_ERR_ARGUMENT) with the compiler's own
 *  messages (file:line); a named function the source lacks, likewise. */
int mf_physics_set_source(mf_physics ph, const char *source, const char *functions);
int mf_physics_set_source_file(mf_physics ph, const char *path, const char *functions);
/** @brief The folder of compiled physics (made if missing). NULL: the default, MFREE_CACHE_DIR if set, else
 *  $XDG_CACHE_HOME/mfree, else ~/.cache/mfree. A folder that cannot be written is said once on stderr and
 *  the physics are compiled without caching. An entry that cannot be loaded (corrupt, or missing a
 *  function) is compiled again and replaced. */
int mf_context_set_cache_dir(mf_context ctx, const char *dir);
/** @brief The context's compiles of physics so far (cache misses) and compiled code taken from the cache
 *  (hits); either pointer may be NULL. */
int mf_context_jit_counts(mf_context ctx, int *compiled, int *loaded);
/** @brief A boundary function at a point of a boundary face: u[nc] the field there, x[dim] the point,
 *  n[dim] the outward unit normal, k the constants; out zeroed before the call. */
typedef void (*mf_boundary_fn)(int dim, int nc, const double *u, const double *x, const double *n, const double *k,
                               double *out);
/** @brief Terms on the boundary faces of tag `tag` (mf_space_set_dirichlet_tags' numbering; at most 8 tags, the
 *  same tag again replaces its terms): f0 (out[nc]) against the test function in the residual,
 *      F(u)_i += integral over those faces of f0(u, x, n) . phi_i,
 *  and its derivative g0 (out[nc * nc], d f0_c / d u_b at [c * nc + b]) in the operator,
 *      (A u, v) += integral over those faces of v . (g0 u):
 *  a Neumann condition is f0 = -g (a traction, a flux), a Robin condition f0 = alpha u - g with g0 = alpha.
 *  Either may be NULL. Faces that are Dirichlet keep their Dirichlet rows. Hex and simplex spaces (the
 *  facets of simplex meshes by their tags); on the cuda backend the faces' terms run on the host (and are
 *  added there to a matrix assembled on the device). */
int mf_physics_set_boundary(mf_physics ph, int tag, mf_boundary_fn f0, mf_boundary_fn g0);
/** @brief The terms of tag `tag` as functions of the physics' source (mf_physics_set_source first; each of
 *  mf_boundary_fn's signature), named as "f0=name g0=name" (either may be left out): they run wherever the
 *  source runs. The cpu backend compiles them with the source; on the cuda backend the facets' terms of a
 *  simplex space run on the device where every term of the physics is given so (else all on the host), a hex
 *  space's on the host (the source compiled there too, with the system C compiler). Replaces the tag's
 *  terms, as mf_physics_set_boundary does; functions given later (mf_physics_set_jacobian, _residual)
 *  replace the source, and an operator is then refused until the terms are given again. */
int mf_physics_set_boundary_source(mf_physics ph, int tag, const char *functions);
/** @brief The constants k[0..n) passed to every function (copied; n <= 64, finite). */
int mf_physics_set_constants(mf_physics ph, int n, const double *k);
int mf_physics_components(mf_physics ph, int *ncomp);
/** @brief Free a physics (operators made from it keep what they need). */
int mf_physics_destroy(mf_physics *ph);
/** @brief Check ph's g-functions against centred finite differences of its f-functions (as PETSc's
 *  -snes_test_jacobian does for a whole residual), point by point: at npoints states drawn at random (the same
 *  ones on every call: u and du with entries in [-scale, scale], x in the unit box of dimension dim), g0 is
 *  compared with d f0 / d u, g1 with d f0 / d du, g2 with d f1 / d u and g3 with d f1 / d du (an absent
 *  function counts as zero). *err: the largest |g - fd| over every entry and point, relative to the largest
 *  |g| or |fd| of that function over all points (0 where both are zero everywhere); about 1e-9 for a right
 *  Jacobian, order 1 for a wrong entry. worst (n bytes, may be NULL): the function, entry, state and both
 *  values of the largest discrepancy. A physics given as source is compiled for the host (the system C
 *  compiler, as on the cpu backend) on any context. Errors: MF_ERR_ARGUMENT (dim not 2 or 3, npoints out of
 *  1..100000, scale not positive, no f-function, a value that is not finite, naming the function and state),
 *  MF_ERR_INCOMPATIBLE (a physics of dim components with another dim). */
int mf_physics_check_jacobian(mf_physics ph, int dim, int npoints, double scale, double *err, char *worst, size_t n);
/** @brief The matrix-free linear operator of ph's g-functions on space (its components those of ph), with
 *  the quadrature of the built-in operators (hex Q_p: q points per direction; simplex P_p: the rule of
 *  degree 2p, 2p + 2 with MF_QUAD_GAUSS_P2, 2p - 2 with MF_QUAD_GAUSS_M2; facets 2p). Jacobi, Chebyshev and
 *  multigrid take it as they take the built-ins. The g-functions are evaluated once here into stored quadrature data
 *  in reference form (on cuda, where they hold more entries per point than the geometry: evaluated at every product
 *  instead, docs/physics.md); one block for all components where the blocks are equal (vector mass, Laplace). */
int mf_operator_create_physics(mf_space space, mf_physics ph, mf_quadrature quad, mf_operator *op);
/** @brief r = F(u), the residual of the physics' f0 and f1 that op was made from:
 *    F(u)_i = integral of  f0(u, grad u, x) . phi_i + f1(u, grad u, x) : grad phi_i
 *  over every cell (hanging nodes and ranks as for A x); with op's Dirichlet form on, r's boundary entries
 *  are zero (the residual of the free DoFs). A linear problem A u = b with f0 = -f, f1 = g3 grad u (and
 *  g0..g3 consistent) has b = -F(0). u and r of op's space, in double. Collective. Errors:
 *  MF_ERR_UNSUPPORTED (op not of a physics), MF_ERR_ARGUMENT (a value of f0 or f1 that is not finite:
 *  the function, its entry, the point, its cell and x). */
int mf_operator_residual(mf_operator op, mf_vector u, mf_vector r);
/** @brief The operator becomes the Jacobian of its residual at the state u: its g-functions evaluated at
 *  (u, grad u) at every quadrature point (u's ghosts imported), in place of u = grad u = 0, so that A v is
 *  F'(u) v where g0..g3 are the derivatives of f0 and f1 (mf_physics_check_jacobian checks that). The
 *  Dirichlet form stays as set. Preconditioners made from op are set up again at their next use (multigrid with
 *  its levels at the state injected). u of op's space, in double. Hex and simplex spaces on cpu and cuda (there
 *  stored or fused: docs/nonlinear.md); boundary terms in the operator (a face g0) refused (MF_ERR_UNSUPPORTED).
 *  Errors: MF_ERR_ARGUMENT (a g-value not finite at u, naming the point; op keeps its data on every rank). */
int mf_operator_set_state(mf_operator op, mf_vector u);

/* ---------------------------------------------------------------- right-hand sides, errors */

/** @brief b_i = integral f phi_i over the domain (Gauss q = p + 1), owned entries. f is called once
 *  per quadrature point, from several OpenMP threads at once: it must be thread-safe.
 *
 *  The callbacks of this section and mf_vector_interpolate must return finite values: NaN or an
 *  infinity is refused with MF_ERR_ARGUMENT, naming the function ("right-hand side f", "boundary
 *  value g", "exact solution u"), the quadrature point and its cell (or the DoF) and the coordinates,
 *  as the operators' coefficients are, on both backends and every rank. */
int mf_vector_assemble_rhs(mf_vector b, mf_coefficient_fn f, void *user);
/** @brief Set the boundary DoFs of x to g(x) at the nodes, others to 0 (collective: a refused value
 *  of g on one rank is every rank's error). */
int mf_vector_set_boundary(mf_vector x, mf_coefficient_fn g, void *user);
/** @brief Set the boundary DoFs of x to 0. */
int mf_vector_zero_boundary(mf_vector x);
/** @brief ||u_h - u||_L2 (Gauss q = p + 2; simplex P_p: the rule of degree 2p + 3, at most 14; u must be
 *  thread-safe). The sum over cells is in cell order on every backend and thread count (deterministic).
 *  Collective. Errors: MF_ERR_NULL (uh, u or err NULL), MF_ERR_UNSUPPORTED (a simplex space of several
 *  components), MF_ERR_ARGUMENT (a value of u that is not finite, naming the quadrature point, its cell and
 *  x), MF_ERR_INCOMPATIBLE (a space made before its mesh was adapted). */
int mf_vector_l2_error(mf_vector uh, mf_coefficient_fn u, void *user, double *err);
/** A field of several components at x: value[c] for the space's components c (mf_space_create_components),
 *  called from several OpenMP threads at once (thread-safe). */
typedef void (*mf_field_fn)(const double *x, int dim, double *value, void *user);
/** @brief v = the field f at the DoF points, component by component (any number of components). */
int mf_vector_interpolate_field(mf_vector v, mf_field_fn f, void *user);
/** @brief The boundary entries of x = the field g at their points, the others 0 (collective). */
int mf_vector_set_boundary_field(mf_vector x, mf_field_fn g, void *user);
/** @brief ||u_h - u||_L2 of a field: sqrt of the sum over the components of mf_vector_l2_error's measure
 *  (each component on a scalar space of the same mesh and degree). Collective. */
int mf_vector_l2_error_field(mf_vector uh, mf_field_fn u, void *user, double *err);

/* ---- pointwise fields as source: evaluated where the vector lives */

/** A field given as C source (coefficient, right-hand side, boundary values, exact solution): the text
 *  holds a function
 *      void name(int dim, const double *x, const double *k, double *value)
 *  giving value[c] for the ncomp components at the point x, k the constants (mf_source_set_constants).
 *  On the cuda backend it is compiled at run time by NVRTC with the library's kernels and runs on the
 *  device: no host callback and no host-device copy of values at points (hex and simplex spaces). On the
 *  cpu backend the system C compiler makes it a shared object. Both are cached as physics sources are
 *  (mf_context_set_cache_dir; set-up phase "compile"). A text that does not compile is refused where the
 *  source is first used, with the compiler's own messages. */
typedef struct mf_source_s *mf_source;
/** @brief A source field of ncomp components (1..4) named `name` in `text` (copied). */
int mf_source_create(mf_context ctx, const char *text, const char *name, int ncomp, mf_source *src);
/** @brief Its constants k (at most 64, copied; none by default). */
int mf_source_set_constants(mf_source src, int n, const double *k);
int mf_source_destroy(mf_source *src);
/** @brief v = the field at the DoF points (owned and ghost entries); as mf_vector_interpolate_field. */
int mf_vector_interpolate_source(mf_vector v, mf_source f);
/** @brief The boundary entries of x = the field at their points, the others 0; as
 *  mf_vector_set_boundary_field (set-up phase "dirichlet"). */
int mf_vector_set_boundary_source(mf_vector x, mf_source g);
/** @brief b_i = integral f phi_i (hexes: Gauss q = p + 1; simplices: the rule of degree 2p) for a
 *  one-component field on a one-component space; as
 *  mf_vector_assemble_rhs (set-up phase "rhs"). Loads of several components: a physics' f0. */
int mf_vector_assemble_rhs_source(mf_vector b, mf_source f);
/** @brief ||u_h - u||_L2 (hexes: Gauss q = p + 2; simplices: the rule of degree 2p + 3, at most 14; the
 *  components summed), as mf_vector_l2_error_field; the cells summed in cell order (deterministic). */
int mf_vector_l2_error_source(mf_vector uh, mf_source u, double *err);
/** The gradient of a function at x (dim entries): grad[k] = d u / d x_k for k < dim. Called from several
 *  OpenMP threads at once: it must be thread-safe, and give the same values for the same x. */
typedef void (*mf_gradient_fn)(const double *x, int dim, double *grad, void *user);
/** @brief The H1 seminorm of the error, |u_h - u|_H1 = ||grad(u_h - u)||_L2 = sqrt(sum over cells of the
 *  integral of |grad u_h - grad u|^2), u given by its gradient grad_u.
 *
 *  Rule: that of mf_vector_l2_error (hex Q_p: Gauss q = p + 2 per direction, the geometry isoparametric;
 *  simplex P_p: the rule of degree 2p + 3, at most 14), exact where grad u_h - grad u is a polynomial on
 *  affine cells. Hanging-node constraints apply (u_h is the conforming function). On every backend the
 *  cells are summed on the host (the cuda backend copies the vector's local values there first), in
 *  cell order on every rank, then over the ranks: the result does not depend on the number of threads
 *  (deterministic). Collective.
 *  @param[in]  uh      a vector of a scalar space (hex, or simplex of one component)
 *  @param[in]  grad_u  the exact gradient; a value that is not finite is refused (MF_ERR_ARGUMENT, naming
 *                      the quadrature point, its cell and x: the first such cell)
 *  @param[out] err     the error (not touched on failure)
 *  Errors: MF_ERR_NULL (uh, grad_u or err NULL), MF_ERR_UNSUPPORTED (a space of several components),
 *  MF_ERR_ARGUMENT (a non-finite gradient; an array of uh checked out for writing), MF_ERR_MEMORY. */
int mf_vector_h1_error(mf_vector uh, mf_gradient_fn grad_u, void *user, double *err);

/* ---------------------------------------------------------------- output */

/** @brief Write v for ParaView/VTK (collective): PREFIX_<rank>.vtu on every rank and PREFIX.pvtu on
 *  rank 0, which lists the pieces by file name (keep them in one folder; it must exist). Each cell is
 *  one VTK Lagrange cell of degree p (quadrilateral 70, hexahedron 72, triangle 69, tetrahedron 71, VTK >= 9
 *  node order) with its own points at equispaced reference positions ((p+1)^dim on hexahedra, the nodes'
 *  count on simplices): the geometry and the field, hanging-node constraints applied, are the space's Q_p
 *  or P_p functions exactly (simplex cells: level and hanging_mask 0). Point data: the field `name`; cell
 *  data: `rank`, `level` (refinement level) and `hanging_mask` (the cell's face_code). Binary
 *  (raw appended) VTK XML. Any backend (a device vector is copied to the host); owned and ghost
 *  values are read, v is not changed. Docs: docs/output.md.
 *  @param[in] prefix  path without extension (not ending in '/')
 *  @param[in] name    the field's name: 1..200 characters, none of < > & " '
 *  A file that cannot be written gives MF_ERR_IO on every rank with the failing rank's path ("rank R:
 *  " first on several ranks); the .pvtu is written only when every piece was, and a failed write
 *  removes the files it made on every rank. */
int mf_vector_write_vtu(mf_vector v, const char *prefix, const char *name);

/* ---------------------------------------------------------------- preconditioners */

/** Preconditioner kinds: z = M^-1 r. */
typedef enum {
  MF_PC_NONE = 0,      /**< z = r */
  MF_PC_JACOBI = 1,    /**< z = D^-1 r, D the operator's matrix-free diagonal */
  MF_PC_CHEBYSHEV = 2, /**< z = x_k, k steps of the Chebyshev iteration for A x = r around D^-1 from
                            x_0 = 0, on the eigenvalue interval [1.2 lambda / range, 1.2 lambda],
                            lambda the largest eigenvalue of D^-1 A estimated at set-up: a fixed
                            polynomial in D^-1 A, symmetric and positive, k - 1 applications of A */
  MF_PC_MULTIGRID = 3, /**< one V-cycle of geometric multigrid: degrees p, ceil(p/2), ..., 1 on the mesh, then
                            coarser and coarser copies of the forest at degree 1; Chebyshev smoothing,
                            a Chebyshev solve on the coarsest level (docs/multigrid.md) */
  MF_PC_SHELL = 4      /**< z = apply(r, z, user), a user function (mf_pc_create_shell) */
} mf_pc_kind;
/** A user preconditioner: z <- M^-1 r (r must not change). */
typedef int (*mf_pc_apply_fn)(mf_vector r, mf_vector z, void *user);

/** @brief A preconditioner of the given kind for op (MF_PC_NONE, MF_PC_JACOBI, MF_PC_CHEBYSHEV or
 *  MF_PC_MULTIGRID; multigrid needs a matrix-free mass, Laplace or Helmholtz operator that is
 *  positive definite, e.g. with Dirichlet boundaries or a mass term). */
int mf_pc_create(mf_operator op, mf_pc_kind kind, mf_pc *pc);
/** @brief A preconditioner that calls apply (MF_PC_SHELL). */
int mf_pc_create_shell(mf_operator op, mf_pc_apply_fn apply, void *user, mf_pc *pc);
/** @brief Chebyshev parameters: polynomial degree k (1..64, default 4), range = lambda_max/lambda_min
 *  of the targeted interval (> 1, default 20), CG steps for the eigenvalue estimate (2..100, default
 *  12). Takes effect at the next set-up. */
int mf_pc_set_chebyshev(mf_pc pc, int degree, double range, int eig_steps);
/** @brief The work before the first application (diagonal, eigenvalue estimate); mf_pc_apply calls it
 *  when not done. Counts as set-up phases "diagonal" and "eigenvalues". */
int mf_pc_setup(mf_pc pc);
/** @brief z <- M^-1 r; r and z different vectors of the operator's space. */
int mf_pc_apply(mf_pc pc, mf_vector r, mf_vector z);
/** @brief Multigrid parameters: Chebyshev smoother degree (1..64, default 4) and smoothing range (> 1,
 *  default 15) on every level but the coarsest, where a Chebyshev iteration over the whole spectrum
 *  reduces the error by coarse_reduction (0..1, default 1e-3). Takes effect at the next set-up. */
int mf_pc_set_multigrid(mf_pc pc, int smoother_degree, double smoothing_range, double coarse_reduction);
/** Floating-point precision of the multigrid V-cycle's vectors and quadrature data. */
typedef enum {
  MF_PRECISION_DOUBLE = 0, /**< the default */
  MF_PRECISION_FLOAT = 1   /**< single precision: half the bytes per DoF; the CG around it stays in double */
} mf_precision;
/** @brief Run the V-cycle in `prec` (default MF_PRECISION_DOUBLE). With MF_PRECISION_FLOAT every level,
 *  the finest included, keeps its vectors and quadrature data in float (a float copy of the finest
 *  operator's data: 1.5x its memory), the smoothers' diagonals and eigenvalue estimates are computed
 *  in double first; the V-cycle converts the residual to float and its result back. The CG's accuracy
 *  is unchanged (the preconditioner needs no more than a few digits). Takes effect at the next set-up. */
int mf_pc_set_multigrid_precision(mf_pc pc, mf_precision prec);
/** The operator of multigrid's coarsest level (degree 1 on the coarsest forest copy). */
typedef enum {
  MF_MG_COARSE_MATRIX_FREE = 0, /**< a matrix-free operator like every other level (the default) */
  MF_MG_COARSE_ASSEMBLED = 1    /**< that operator assembled (mf_operator_create_assembled, MF_ASSEMBLY_AUTO;
                                     on 'cuda' the matrix lives on the device); the coarse Chebyshev solve
                                     uses its product and diagonal */
} mf_mg_coarse;
/** @brief Choose the coarsest level's operator (default MF_MG_COARSE_MATRIX_FREE). With MF_MG_COARSE_ASSEMBLED the
 *  set-up assembles the coarsest level's operator (its matrix-free form is freed unless it is the user's, whose own
 *  refusals apply: geometry on the fly); a matrix that does not fit is refused by the set-up (MF_ERR_MEMORY, with the
 *  bytes; a later set-up retries). An unknown kind is refused (MF_ERR_ARGUMENT); the assembled coarse level needs the
 *  V-cycle in double (MF_ERR_UNSUPPORTED with MF_PRECISION_FLOAT, either order of the two calls). Takes effect at the
 *  next set-up (docs/multigrid.md). */
int mf_pc_set_multigrid_coarse(mf_pc pc, mf_mg_coarse kind);
/** @brief Levels of the hierarchy, finest last, and one level's degree, DoFs and cells (level
 *  0..nlevels-1; the outputs may be NULL; the cells as they were at set-up). These and the two below
 *  set the preconditioner up if it is not yet, and refuse one of another kind (MF_ERR_ARGUMENT) before any set-up. */
int mf_pc_multigrid_levels(mf_pc pc, int *nlevels);
int mf_pc_multigrid_level(mf_pc pc, int level, int *degree, int64_t *ndofs, int64_t *ncells);
/** @brief Time per level: with on != 0 every V-cycle synchronises the device at each level and adds
 *  the wall time of the level's own work (smoothing, residuals, transfers) to seconds[level]
 *  (mf_pc_multigrid_times); costs a little speed, off by default. Each call sets the times to zero;
 *  the choice holds for the hierarchies of later set-ups too (new parameters). Off, the times stay zero. */
int mf_pc_multigrid_profile(mf_pc pc, int on);
/** @brief The times of mf_pc_multigrid_profile: seconds[0..nlevels) (coarsest first) are written. */
int mf_pc_multigrid_times(mf_pc pc, double *seconds);
/** @brief The estimated largest eigenvalue of D^-1 A (MF_PC_CHEBYSHEV, after set-up). */
int mf_pc_eigenvalue(mf_pc pc, double *lambda_max);
int mf_pc_destroy(mf_pc *pc);

/* ---------------------------------------------------------------- CG */

/** Result of a CG solve. */
typedef struct {
  int iterations;          /**< iterations taken */
  int converged;           /**< 1 if the true relative residual, recomputed at the end, is within twice the
                                tolerance (the recursive one falls below what the precision can reach) */
  double residual0;        /**< initial preconditioned residual norm sqrt(r^T z) */
  double residual;         /**< final norm, same measure: of the true residual b - A x if the recursive
                                one reached the tolerance, else the recursive one */
  double seconds;          /**< wall time of the solve */
  double seconds_per_iter; /**< seconds / iterations */
} mf_cg_info;

/** @brief Preconditioned CG on any operator (matrix-free, assembled or shell); Jacobi unless
 *  mf_cg_set_pc or mf_cg_set_jacobi say otherwise. */
int mf_cg_create(mf_operator op, mf_cg *cg);
/** @brief Compute what the solve needs before the first iteration (the preconditioner's set-up: the
 *  inverse diagonal, eigenvalue estimates), so that it counts as set-up; mf_cg_solve calls it when not done. */
int mf_cg_setup(mf_cg cg);
/** @brief Relative tolerance on sqrt(r^T z) (default 1e-10) and iteration limit (default 10000; up
 *  to INT_MAX: the residual history grows as the iteration goes). */
int mf_cg_set_tolerance(mf_cg cg, double rtol, int max_iterations);
/** @brief Use the Jacobi preconditioner (on, default) or none (off); drops a preconditioner set by
 *  mf_cg_set_pc. */
int mf_cg_set_jacobi(mf_cg cg, int on);
/** @brief Precondition with pc (of the same operator's space): the cg holds a reference to it, so the
 *  pc's handle may be destroyed before the cg. NULL goes back to the cg's own Jacobi. */
int mf_cg_set_pc(mf_cg cg, mf_pc pc);
/** @brief Solve A x = b from the initial guess in x. Not reaching the tolerance returns 0 with
 *  info.converged = 0 (the caller decides). info is filled on every return, an error's included
 *  (converged 0, what was reached). */
int mf_cg_solve(mf_cg cg, mf_vector b, mf_vector x, mf_cg_info *info);
/** @brief Residual history (one entry per iteration plus the initial one); valid until the next solve. */
int mf_cg_residual_history(mf_cg cg, const double **history, int *length);
/** A CG monitor: called with iteration 0 and the initial residual, then after every iteration with
 *  its number and residual: the entries of mf_cg_residual_history as they are made (the same values
 *  on every rank). Return 0 to go on, nonzero to stop the solve. */
typedef int (*mf_cg_monitor_fn)(int iteration, double residual, void *user);
/** @brief Call fn (NULL: none, the default) during every mf_cg_solve of cg, on every rank. Where fn
 *  returns nonzero on any rank, the solve stops on all ranks after that iteration and returns
 *  MF_ERR_NOT_CONVERGED with a message naming the iteration (info and the residual history hold the
 *  iterations done; an iteration that reached the tolerance counts as converged, not stopped). The
 *  monitor's time is part of the solve's, and each call adds one small MPI reduction. */
int mf_cg_set_monitor(mf_cg cg, mf_cg_monitor_fn fn, void *user);
int mf_cg_destroy(mf_cg *cg);

/** @brief Restarted GMRES(m), right-preconditioned, for operators that need not be symmetric (advection,
 *  the non-symmetric forms g1 and g2 make): it solves A M^-1 y = b - A x0, x = x0 + M^-1 y, so that the
 *  residual it minimises, reports (info.residual0, info.residual: ||b - A x||_2) and stops on
 *  (||b - A x|| <= rtol ||b - A x0||) is the true one. The preconditioner interface is CG's: Jacobi by
 *  default, any mf_pc (mf_gmres_set_pc). Defaults: rtol 1e-10, 10000 iterations, restart 30. Collective. */
typedef struct mf_gmres_s *mf_gmres;
int mf_gmres_create(mf_operator op, mf_gmres *gmres);
int mf_gmres_set_tolerance(mf_gmres gmres, double rtol, int max_iterations);
/** @brief Basis vectors per cycle, 1..1000 (memory: m + 4 vectors). */
int mf_gmres_set_restart(mf_gmres gmres, int m);
int mf_gmres_set_pc(mf_gmres gmres, mf_pc pc);
/** @brief x <- the solution of A x = b from the initial guess x; info as for CG (info.converged 0 where the
 *  limit was reached: no error, the caller decides). */
int mf_gmres_solve(mf_gmres gmres, mf_vector b, mf_vector x, mf_cg_info *info);
int mf_gmres_destroy(mf_gmres *gmres);

#ifdef __cplusplus
}
#endif
#include "mfree_newton.h" /* Newton's method (the nonlinear solver) */
#endif
