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

#include "base/mf_common.h"

#ifdef __cplusplus
extern "C" {
#endif

MF_HD static inline int mf_hanging_child(int dim, int mask) { return mask & (dim == 3 ? 7 : 3); }
MF_HD static inline int mf_hanging_faces(int dim, int mask) { return (mask >> (dim == 3 ? 3 : 2)) & (dim == 3 ? 7 : 3); }
MF_HD static inline int mf_hanging_edges(int dim, int mask) { return dim == 3 ? (mask >> 6) & 7 : 0; }

/** Does the line along direction d through node index idx[0..dim-1] (n1 = p + 1 nodes per direction)
 *  lie on a hanging face or edge, i.e. take the 1D interpolation in direction d? */
MF_HD static inline int mf_hanging_line_needed(int dim, int n1, int mask, int d, const int *idx)
{
  const int c = mf_hanging_child(dim, mask), faces = mf_hanging_faces(dim, mask), edges = mf_hanging_edges(dim, mask);
  int on_all = 1, any = 0;
  for (int e = 0; e < dim; e++) {
    if (e == d) continue;
    const int on = idx[e] == ((c >> e & 1) ? n1 - 1 : 0);
    if ((faces >> e & 1) && on) any = 1;
    on_all &= on;
  }
  if ((edges >> d & 1) && on_all) any = 1;
  return any;
}

/** 1 if local node `node` of a cell with this mask lies on a hanging face or edge (its gathered value
 *  is a coarse neighbour's, and the constraint matrix C has a column other than e_node there). */
MF_HD static inline int mf_hanging_node_constrained(int dim, int n1, int mask, int node)
{
  if (!mask) return 0;
  int idx[3] = {0, 0, 0};
  for (int e = 0, t = node; e < dim; e++, t /= n1) idx[e] = t % n1;
  for (int d = 0; d < dim; d++)
    if (mf_hanging_line_needed(dim, n1, mask, d, idx)) return 1;
  return 0;
}

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

/** Whether column j of C^T A_e C adds to the diagonal more than A_jj: j is constrained or holds the
 *  DoF of a constrained position (nodes: the cell's DoFs). Elsewhere C e_j = e_j, and the diagonal
 *  entry is the unconstrained one. */
MF_HD static inline int mf_hanging_diag_column(int dim, int n1, int npc, int mask, const int *nodes, int j)
{
  if (!mask) return 0;
  if (mf_hanging_node_constrained(dim, n1, mask, j)) return 1;
  for (int i = 0; i < npc; i++)
    if (nodes[i] == nodes[j] && i != j && mf_hanging_node_constrained(dim, n1, mask, i)) return 1;
  return 0;
}

#ifdef __cplusplus
}
#endif
#endif
