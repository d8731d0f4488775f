/* mf_hanging.h -- hanging-node constraints of adaptive meshes, resolved per cell from a mask.
 *
 * The mask of a cell is p4est_lnodes' face_code (16 bits):
 *   3D: bits 0-2 child id c (position in the parent: bit k = upper half along axis k),
 *       bits 3-5 hanging face normal to axis 0/1/2 (the face of the cell touching corner c),
 *       bits 6-8 hanging edge parallel to axis 0/1/2 (the edge touching corner c);
 *   2D: bits 0-1 child id, bits 2-3 hanging face normal to axis 0/1.
 * On a hanging face (edge) the cell's gathered values are the coarse neighbour's face (edge) values
 * at the same positions; the cell's own values follow by 1D interpolation onto its half of the
 * coarse face: u_fine[i] = sum_m P_h[i][m] u_coarse[m], P_h[i][m] = l_m((h + x_i)/2), h the child's
 * bit along that direction. Faces take two passes (their two directions), edges one.            */
#ifndef MF_HANGING_H
#define MF_HANGING_H

#ifdef __cplusplus
extern "C" {
#endif

static inline int mf_hanging_child(int dim, int mask) { return mask & (dim == 3 ? 7 : 3); }
static inline int mf_hanging_faces(int dim, int mask) { return (mask >> (dim == 3 ? 3 : 2)) & (dim == 3 ? 7 : 3); }
static inline int mf_hanging_edges(int dim, int mask) { return dim == 3 ? (mask >> 6) & 7 : 0; }

/** 0 if mask is a valid face_code for dim, else -1 (bits beyond the layout, or a child id without
 *  any hanging face or edge). */
int mf_hanging_check(int dim, int mask);
/** The same information as p4est's p{4,8}est_lnodes_decode, computed from the bit layout above:
 *  hanging_face[f] = corner of the full face the cell's face f touches, or -1; hanging_edge[e] =
 *  0/1 (first/second half of a full edge), 2/3 (same, on the boundary of a hanging face), 4 (in the
 *  middle of a hanging face), or -1. Returns 1 if anything hangs, else 0 (arrays untouched). */
int mf_hanging_decode(int dim, int mask, int hanging_face[6], int hanging_edge[12]);
/** P (2 x n1 x n1): P[h * n1 * n1 + i * n1 + m] = l_m((h + x_i) / 2) on Gauss-Lobatto nodes x. */
void mf_hanging_matrices(int degree, double *P);
/** In place on a cell's nodal values (n1^dim, x fastest): u <- C u (transpose = 0) or C^T u. */
void mf_hanging_apply(int dim, int n1, int mask, const double *P, double *u, int transpose);
/** 1 if local node `node` of a cell with this mask lies on a hanging face or edge (its gathered value
 *  is a coarse neighbour's), else 0. */
int mf_hanging_node_constrained(int dim, int n1, int mask, int node);

#ifdef __cplusplus
}
#endif
#endif
