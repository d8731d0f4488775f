/* mf_simplex.h -- reference simplices (triangle, tetrahedron): Lagrange P_p bases on equispaced
 * nodes numbered by mesh entity, and collapsed-coordinate quadrature. The first layer of the simplex
 * path (meshes, spaces and kernels build on it); internal to the library.
 *
 * Reference cells: the triangle (0,0), (1,0), (0,1) and the tetrahedron (0,0,0), (1,0,0), (0,1,0),
 * (0,0,1). Nodes, in this order (the order later DoF numbering by entity relies on):
 *   vertices   0, 1, 2 (, 3)
 *   edges      (0,1), (0,2), (1,2) in 2D; (0,1), (0,2), (0,3), (1,2), (1,3), (2,3) in 3D; the p - 1
 *              interior nodes of edge (a,b) from a to b: v_a + k/p (v_b - v_a), k = 1..p-1
 *   faces      (3D) (0,1,2), (0,1,3), (0,2,3), (1,2,3); interior nodes of face (a,b,c):
 *              v_a + i/p (v_b - v_a) + j/p (v_c - v_a), i, j >= 1, i + j <= p - 1, j outer, i inner
 *   interior   the lattice points with every barycentric coordinate > 0: in 2D the face nodes of
 *              (0,1,2); in 3D k outer, j, i inner (x = i/p, y = j/p, z = k/p)
 * Basis: phi_n = sum_m C[m][n] y1^a y2^b y3^c over the monomials of degree <= p in the centred
 * coordinates y = 2 (x - centroid) (C = V^-1 with V[k][m] = monomial m at node k), so
 * phi_n(node_k) = delta_nk.
 * Quadrature of degree q (exact for polynomials of total degree <= q): Gauss-Jacobi points in the
 * collapsed coordinates, x = s (1 - t), y = t (2D; the weight factor 1 - t in t's rule), and
 * x = s (1 - t)(1 - u), y = t (1 - u), z = u (3D; (1 - t) in t's, (1 - u)^2 in u's), n = ceil((q + 1) / 2)
 * points per direction. */
#ifndef MF_SIMPLEX_H
#define MF_SIMPLEX_H

#include "operator_impl.h"

#define MF_SIMPLEX_MAX_DEGREE 6
/** Nodes of a tetrahedron of the highest degree: (p + 1)(p + 2)(p + 3) / 6. */
#define MF_SIMPLEX_MAX_NODES ((MF_SIMPLEX_MAX_DEGREE + 1) * (MF_SIMPLEX_MAX_DEGREE + 2) * (MF_SIMPLEX_MAX_DEGREE + 3) / 6)

typedef struct {
  int dim, degree, nnodes; /* nnodes = C(p + dim, dim) */
  double *nodes;           /* nnodes x dim: reference coordinates */
  int *node_entity;        /* nnodes: dimension of the entity the node belongs to (0 vertex .. dim) */
  double *coef;            /* nnodes x nnodes: C[m * nnodes + n] */
  int *mono;               /* nnodes x 3: the exponents (a, b, c) of monomial m */
  int qdegree, nq;         /* quadrature: exact to total degree qdegree, nq points */
  double *qpts, *qwts;     /* nq x dim, nq (the weights sum to the reference volume 1/dim!) */
  double *B;               /* nq x nnodes: phi_n at point q */
  double *G;               /* nq x nnodes x dim: grad phi_n at point q */
} mf_simplex_basis;

/** Basis of degree 1..MF_SIMPLEX_MAX_DEGREE on the reference simplex of dim 2 or 3, tabulated at
 *  the points of a rule exact to degree qdegree (0..2 MF_SIMPLEX_MAX_DEGREE + 2; qdegree < 0: 2p). */
int mf_simplex_basis_setup(mf_context ctx, int dim, int degree, int qdegree, mf_simplex_basis *b);
void mf_simplex_basis_free(mf_simplex_basis *b);
/** phi (nnodes) and, when grad is not NULL, grad phi (nnodes x dim) at reference point x. */
void mf_simplex_basis_eval(const mf_simplex_basis *b, const double *x, double *phi, double *grad);
/** The rule alone: n = ceil((qdegree + 1) / 2) collapsed Gauss-Jacobi points per direction, n^dim points,
 *  into pts (n^dim x dim) and wts (n^dim); returns n^dim. pts/wts NULL: the count only. dim 1: Gauss-Legendre
 *  on [0, 1] (the facets of triangles; weights summing to 1). */
int mf_simplex_quadrature(int dim, int qdegree, double *pts, double *wts);
/** Affine map of the cell with vertices X (dim + 1 points, dim each): returns det J (signed), fills
 *  J^-1 (row-major in Ji) and, when scale is not NULL, the largest |J_kl| (the edges' scale). */
double mf_simplex_affine(int dim, const double *X, double Ji[3][3], double *scale);
/** Element matrices of the affine cell with vertices X (dim + 1 points, dim each): the mass matrix M
 *  and the stiffness matrix K (nnodes x nnodes, row-major; either may be NULL), and |det J| (may be
 *  NULL). Returns MF_ERR_ARGUMENT for a degenerate cell (|det J| below 1e-14 of its edges' scale). */
int mf_simplex_element_matrices(mf_context ctx, const mf_simplex_basis *b, const double *X, double *M, double *K,
                                double *detJ);
/** The reference matrices of b at its rule (1 + dim(dim+1)/2 of N x N, N = nnodes; all symmetric):
 *  S_0 = B^T W B, then for k <= l S_kk = G_k^T W G_k and S_kl = G_k^T W G_l + G_l^T W G_k (k < l), at
 *  S[(m N + i) N + j]. The cell matrices of a M + b K with a constant coefficient combine them
 *  (lib/simplex/mf_simplex_asm.h; the reference form of lib/cuda/simplex_kernels.cuh). */
void mf_simplex_reference_matrices(const mf_simplex_basis *b, double *S);

/* ------------------------------------------------------------------ meshes and DoFs (mesh.c, dofs.c) */

/** A conforming simplex mesh on one rank: vertices (nv x 3; z = 0 in 2D), cells ((dim + 1) vertices
 *  each, positively oriented), and the boundary facets (dim vertices each: edges in 2D, triangles in
 *  3D) with a tag (the physical group, or 1 for the built-in meshes' boundary). */
typedef struct {
  int dim, nv, ncells, nfacets;
  double *coords; /* nv x 3 */
  int *cells;     /* ncells x (dim + 1) */
  int *facets;    /* nfacets x dim */
  int *facet_tag; /* nfacets */
  int *part;      /* ncells: the rank of each cell on several ranks (every rank holds the whole mesh), or
                     NULL (one rank, or a mesh held in parts) */
  /* a mesh held in parts (several ranks, refined by mf_mesh_refine: parts_simplex.c): this rank's cells only;
   * root the coarse mesh they refine (whole, with its partition; a counted reference), level the refinements
   * since it, anc[e] the coarse cell that holds cell e, lat its corners' barycentric coordinates there times
   * 2^level ((dim + 1) x (dim + 1) per cell); root NULL for any other mesh (mf_simplex_mesh_free releases the
   * reference) */
  struct mf_simplex_root_s *root;
  int level;
  int *anc;
  unsigned short *lat;
} mf_simplex_mesh;

/** A facet (at most 3 vertices) by its vertices ascending (the unused entries 0) and an index: the facets of cells
 *  sorted (mf_simplex_facet_cmp: by the vertices alone) to find the shared or the boundary ones. */
typedef struct {
  int v[3], id;
} mf_simplex_facet_key;
void mf_simplex_facet_key_make(const int *v, int k, int id, mf_simplex_facet_key *key);
int mf_simplex_facet_cmp(const void *a, const void *b);

/** How the cells are split between ranks (partition_simplex.c): recursive coordinate bisection of the cells'
 *  centroids (the set split along its longest extent at the cell that gives each side its share, ties by
 *  index), or Scotch's graph partition of the dual graph (where the library was built with it); DEFAULT the
 *  library's choice (mf_simplex_partitioner_default: Scotch where built, docs/simplex.md says why). */
enum { MF_SIMPLEX_PARTITION_DEFAULT = 0, MF_SIMPLEX_PARTITION_RCB = 1, MF_SIMPLEX_PARTITION_SCOTCH = 2 };
int mf_simplex_partitioner_default(void);
/** part[e] in 0..nparts-1 for the cells of m, made on rank 0 of ctx and sent to the others (ctx may be
 *  NULL: this process alone). Refused: nparts < 1, an unknown method, Scotch where not built. */
int mf_simplex_mesh_partition(mf_context ctx, const mf_simplex_mesh *m, int nparts, int method, int *part);

/** Cells per side of the box meshes: at most 4096 in 2D, MF_SIMPLEX_BOX_MAX_3D in 3D. */
#define MF_SIMPLEX_BOX_MAX_2D 4096
#define MF_SIMPLEX_BOX_MAX_3D 256
/** The unit square split into 2 n^2 triangles (every square by its diagonal from (0,0) to (1,1)) or
 *  the unit cube into 6 n^3 tetrahedra (the Kuhn split of every cube along its diagonal from
 *  (0,0,0) to (1,1,1)): conforming, n = 1..MF_SIMPLEX_BOX_MAX_2D in 2D, 1..MF_SIMPLEX_BOX_MAX_3D in 3D.
 *  The boundary facets are tagged by side as the hex boxes' faces: x = 0 1, x = 1 2, y = 0 3, y = 1 4,
 *  z = 0 5, z = 1 6. */
int mf_simplex_mesh_box(mf_context ctx, int dim, int n, mf_simplex_mesh *m);
/** The same with n[d] cells in direction d (the rectangle or box of n[0] x n[1] (x n[2]) squares or cubes of the
 *  unit square or cube, each split as above), each 1..MF_SIMPLEX_BOX_MAX_2D / _3D. */
int mf_simplex_mesh_box_n(mf_context ctx, int dim, const int n[3], mf_simplex_mesh *m);
void mf_simplex_mesh_free(mf_simplex_mesh *m);
/** Entities of a mesh (edges, triangles) grouped by their smallest vertex s0: off[s0]..off[s0 + 1)
 *  index keys, ascending, each the key of the entity's other vertices (edges: s1; triangles:
 *  s1 nv + s2; s0 < s1 < s2). An entity's index is its position in keys: the order of (s0, s1, s2). */
typedef struct {
  int64_t *off;   /* nv + 1 */
  uint64_t *keys; /* n */
  int64_t n;
} mf_simplex_entities;
/** The entities of k vertices (2 or 3) that the cells of m have as sub[0..nsub) (k local vertex ids
 *  each): every distinct one (select = 0), those of exactly one cell (select = 1: the boundary facets
 *  when k = dim), or those of three cells or more (select = 3: facets where cells overlap). A counting
 *  sort by s0 and a sort per vertex (OpenMP threads over the vertices); the result does not depend on
 *  the number of threads. */
int mf_simplex_entities_create(mf_context ctx, const mf_simplex_mesh *m, int k, int nsub, const int (*sub)[3],
                               int select, mf_simplex_entities *e);
/** The index of the entity with the k vertices v (any order) in e, -1 when it is none of e's. */
int64_t mf_simplex_entities_find(const mf_simplex_entities *e, int k, const int *v, uint64_t nv);
void mf_simplex_entities_free(mf_simplex_entities *e);
/** The boundary of m: the facets of one cell only, into m->facets (each with its vertices ascending,
 *  the facets in the lexicographic order of those), each tagged 1. m->facets and m->facet_tag must be
 *  NULL before. */
int mf_simplex_mesh_boundary(mf_context ctx, mf_simplex_mesh *m);
/** The coarse mesh of meshes held in parts (made by parts_simplex.c; counted references, mesh.c): the coarse mesh
 *  whole with its partition, its edges and faces (3D), and for each vertex, edge and face (entity dimension t = 0,
 *  1, 2) the ranks whose cells hold it and the tags of the boundary facets that hold it (CSR, ascending, unique). */
typedef struct mf_simplex_root_s {
  int refs;
  mf_simplex_mesh m;
  mf_simplex_entities E[2]; /* edges, faces (3D) */
  int64_t n[3];
  int64_t *roff[3], *toff[3];
  int *rk[3], *tg[3];
} mf_simplex_root;
mf_simplex_root *mf_simplex_root_retain(mf_simplex_root *r);
void mf_simplex_root_release(mf_simplex_root *r);
/** The coarse mesh (whole, with its partition) of a root. */
const mf_simplex_mesh *mf_simplex_root_mesh(const mf_simplex_root *r);
/** f <- this rank's cells of m refined once, held in parts (m: a whole mesh with its partition, or a mesh held
 *  in parts); collective only in that every rank refines its own cells. */
int mf_simplex_refine_parts(mf_context ctx, const mf_simplex_mesh *m, mf_simplex_mesh *f);
/** A copy of a mesh held in parts (its root shared), and the cells of all ranks' parts. */
int mf_simplex_parts_copy(mf_context ctx, const mf_simplex_mesh *m, mf_simplex_mesh *c);
int64_t mf_simplex_parts_ncells_global(const mf_simplex_mesh *m);
/** f <- m refined uniformly once (lib/simplex/refine.c): every edge split at its midpoint, the vertices
 *  (the coarse ones and one per edge) numbered in the order the fine cells first use them, child k of cell e is
 *  cell 2^dim e + k, the inner octahedron of a
 *  tetrahedron split along its shortest diagonal; boundary facets inherit their parent's tag. */
int mf_simplex_mesh_refine(mf_context ctx, const mf_simplex_mesh *m, mf_simplex_mesh *f);

/** Continuous P_p DoFs on a simplex mesh, numbered by entity: the vertices (their indices), then p - 1
 *  per edge, (p-1)(p-2)/2 per face, then the cells' interior nodes. Edges and faces are oriented by
 *  their sorted global vertex indices, so two cells sharing one give its nodes the same DoFs.
 *  cell_dofs[c * nnodes + n]: the DoF of reference node n (mf_simplex_basis order) in cell c; bc[d]: 1
 *  on DoFs of the boundary facets. nedges, nfaces: the mesh's edges and faces where they carry DoFs (P2 and
 *  up: edges; P3 and up in 3D: faces), else 0 (they are not looked for). */
typedef struct {
  int ndofs, nnodes, nedges, nfaces;
  int *cell_dofs; /* ncells x nnodes */
  unsigned char *bc; /* ndofs */
  int *last; /* the numbering on a device: each DoF's highest-numbered cell, for the DoFs' points (else NULL) */
} mf_simplex_dofs;

int mf_simplex_dofs_create(mf_context ctx, const mf_simplex_mesh *m, const mf_simplex_basis *b, mf_simplex_dofs *d);
void mf_simplex_dofs_free(mf_simplex_dofs *d);

/** What a multigrid transfer between simplex spaces is made from (lib/simplex/transfer_simplex.c: the host's
 *  build; a backend's transfer_build makes the same matrices on the device). Row n of P (a fine node, nf of
 *  them, local numbering) holds the coarse basis at that node in its coarse cell, the entries above 1e-14 in
 *  the coarse cell's node order; the node's cell is its first fine cell (the lowest number that has it), the
 *  coarse cell that cell itself (kind 0: a lower degree on the same mesh, the weights row i of table for the
 *  node's place i in that cell) or its parent (kind 1: the mesh refined, fine cell e the child of coarse cell
 *  e / nch; the weights from the geometry, made on the device for a P1 coarse space only). P^T holds the
 *  entries of the owned rows (n < nfo), each coarse row's in ascending fine row. */
typedef struct {
  int kind, dim, Nf, Nc, nch;
  int nf, ncn, nfo;             /* fine nodes (owned and ghost), coarse nodes, owned fine nodes */
  int ncells_f, ncells_c;       /* fine, coarse cells */
  const int *nodes_f, *nodes_c; /* the spaces' cell nodes, ncells x Nf and ncells x Nc */
  const double *table;          /* kind 0: Nf x Nc */
  /* kind 1: the meshes' cells (dim + 1 vertices each) and vertex coordinates (3 each), the fine basis's
   * reference nodes (Nf x dim) */
  int nv_f, nv_c;
  const int *cells_f, *cells_c;
  const double *coords_f, *coords_c, *xi_f;
} mf_simplex_transfer_plan;

/* ------------------------------------------------------------------ operators, CPU reference (ops_cpu.c) */

/** A matrix-free operator on simplices: y = (a M + b K_c) x, with M the mass and K_c the stiffness
 *  weighted by the coefficient c (1 when NULL): the Helmholtz operator of lib/mfree.h. With mass_coef
 *  set (the mass operator, b = 0: mf_operator_create_mass) the mass is weighted by c as well,
 *  y = (a M_c + b K_c) x. Affine geometry: J and |det J| of each cell computed from its vertices at
 *  every application, nothing stored per point except c(x_q) (ncells x nq, evaluated once; none when c
 *  is NULL). The action of a cell: u_q = sum_j u_j phi_j(q) and g_q = sum_j u_j grad phi_j(q) at the
 *  basis's quadrature points, then
 *  v_i = sum_q w_q |det J| [a c_m phi_i u_q + b c_q grad phi_i . (J^-1 J^-T g_q)], c_m = c_q with
 *  mass_coef, else 1. Creation refuses DoFs of another degree and degenerate cells (as
 *  mf_simplex_element_matrices does); it leaves mass_coef 0. */
typedef struct mf_simplex_op_s {
  const mf_simplex_mesh *mesh;
  const mf_simplex_basis *basis;
  const mf_simplex_dofs *dofs;
  double a, b;
  double *coefq; /* ncells x nq, or NULL */
  int mass_coef; /* 1: the mass term carries c too (the mass operator); 0: only the stiffness does */
} mf_simplex_op;

/** x (3 entries, z = 0 in 2D) = quadrature point q of b's rule in cell e of m. */
void mf_simplex_point(const mf_simplex_mesh *m, const mf_simplex_basis *b, int e, int q, double *x);
int mf_simplex_op_create(mf_context ctx, const mf_simplex_mesh *m, const mf_simplex_basis *b, const mf_simplex_dofs *d,
                         double a, double bb, mf_coefficient_fn c, void *user, mf_simplex_op *op);
void mf_simplex_op_destroy(mf_simplex_op *op);
/** y <- A x over all DoFs (y overwritten; no boundary conditions). */
void mf_simplex_op_apply_cpu(const mf_simplex_op *op, const double *x, double *y);

/** The gradient form of the constant-coefficient stiffness. For P_p the reference gradient of u is a
 *  polynomial of degree p - 1, so each of its dim components is exactly its interpolant on the n1 =
 *  C(p - 1 + dim, dim) nodes of P_{p-1} (the centroid for p = 1): D_k[r][j] = d phi_j / d xhat_k at
 *  node r. With Mhat the reference mass matrix of P_{p-1} (the reference volume 1/dim! for p = 1) and
 *  its Cholesky factor Mhat = L L^T, the table E_k = L^T D_k gives the cell stiffness exactly,
 *    K_e = |det J| sum_{k,l} (J^-1 J^-T)_kl D_k^T Mhat D_l = |det J| sum_{k,l} (J^-1 J^-T)_kl E_k^T E_l,
 *  so a cell's stiffness action costs 2 dim n1 N + dim^2 n1 multiply-adds (no mass product: it is
 *  folded into E). mf_simplex_gradient_n1 gives n1; mf_simplex_gradient_table fills
 *  E[(r dim + k) N + j] (n1 x dim x N doubles) for basis b (any rule). */
int mf_simplex_gradient_n1(int dim, int p);
/* the largest n1 and n1 (n1 + 1) / 2 of the degrees the basis takes (3D, p = MF_SIMPLEX_MAX_DEGREE = 6) */
#define MF_SIMPLEX_GRAD_N1_MAX 56
#define MF_SIMPLEX_GRAD_NK_MAX (MF_SIMPLEX_GRAD_N1_MAX * (MF_SIMPLEX_GRAD_N1_MAX + 1) / 2)
int mf_simplex_gradient_table(mf_context ctx, const mf_simplex_basis *b, double *E);
/** With a coefficient: the reference gradient is still exactly its P_{p-1} interpolant, so the stiffness weighted by
 *  c at the rule's points is |det J| sum_{k,l} (J^-1 J^-T)_kl E_k^T K_e E_l with the cell's n1 x n1 matrix
 *  K_e = sum_q w_q c_q Phi(x_q) Phi(x_q)^T, Phi = L^-1 psi (psi the P_{p-1} basis; K_e = I for c = 1): the same
 *  sums as the quadrature form to rounding, from n1 (n1 + 1) / 2 values per cell (mf_simplex_gradient_nk) instead
 *  of nq. mf_simplex_gradient_points fills Phi[q n1 + r] at b's rule points (nq x n1);
 *  mf_simplex_gradient_coef the upper triangles K[m ncells + e] (m over r <= s, row by row) of ncells cells from
 *  c at the points (coefq, ncells x nq). */
int mf_simplex_gradient_points(mf_context ctx, const mf_simplex_basis *b, double *Phi);
int mf_simplex_gradient_nk(int dim, int p);
void mf_simplex_gradient_coef(const mf_simplex_basis *b, const double *Phi, int ncells, const double *coefq, double *K);
/** The CPU twin of the gradient-form kernels: y <- (a M + b K_c) x, the mass part (without c) at the quadrature
 *  points as mf_simplex_op_apply_cpu, the stiffness part from the table E of mf_simplex_gradient_table and the
 *  cells' matrices K of mf_simplex_gradient_coef (NULL: c = 1). */
void mf_simplex_op_apply_gradient_cpu(const mf_simplex_op *op, const double *E, const double *K, const double *x,
                                      double *y);

/** Linear isotropic elasticity, dim components per DoF stored interleaved (x[dof * dim + c]):
 *  y = A x with A the form sum over cells of int sigma(u) : eps(v), eps(u) = sym grad u,
 *  sigma = lambda tr(eps) I + 2 mu eps (Lame parameters, mu > 0, lambda > -2 mu / 3). Affine
 *  geometry per cell as for the scalar operators; y overwritten. */
int mf_simplex_elasticity_check(mf_context ctx, double lambda, double mu);
void mf_simplex_elasticity_apply_cpu(const mf_simplex_mesh *m, const mf_simplex_basis *b, const mf_simplex_dofs *d,
                                     double lambda, double mu, const double *x, double *y);
/** The gradient form of elasticity (the twin of the GPU's): the same operator from the table E of
 *  mf_simplex_gradient_table. The dim reference gradients of each component at the n1 nodes of
 *  P_{p-1}, scaled by L^T, g[r][c][l] = (E_l u_c)_r, go through the pointwise stress with weight
 *  |det J| (exact: the integrand is a quadratic form in the reference gradients with constant
 *  coefficients per cell, and Mhat = L L^T), and back through E^T. */
void mf_simplex_elasticity_apply_gradient_cpu(const mf_simplex_mesh *m, const mf_simplex_basis *b, const mf_simplex_dofs *d,
                                              const double *E, double lambda, double mu, const double *x, double *y);
/** The shared scatter's tiles (the CPU twin of the device's, lib/cuda/simplex_tiles.cu): the cells in tiles of `tile`
 *  consecutive cells, ni ids per cell (ids: ncells x ni, the cells' DoFs or vertices). *off (ntiles + 1): tile t's
 *  distinct ids list[off[t] .. off[t + 1]) ascending; *loc (ncells x ni): each entry's index in its tile's list;
 *  *maxn: the most ids of a tile. Refused: a tile of 2^16 ids or more (the indices are 2 bytes). */
int mf_simplex_tiles(mf_context ctx, int ncells, int ni, const int *ids, int tile, int **off, int **list,
                     unsigned short **loc, int *maxn);

#endif
