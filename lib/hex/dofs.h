/* dofs.h -- DoF numbering of uniformly refined forests on one rank (lib/hex/dofs.c). */
#ifndef MF_DOFS_H
#define MF_DOFS_H

#include <stdint.h>

typedef struct mf_dofs_uniform_s mf_dofs_uniform;

/** The coarse mesh's faces, edges and corners and their owner trees. Returns nonzero (and no object)
 *  where this numbering does not apply: degenerate or periodic trees, faces p4est does not connect
 *  although they share vertices, or the level too deep; the caller falls back to p4est_lnodes.
 *  tree_to_vertex: ntrees x 2^dim vertex numbers; tree_to_tree/face: p4est's face connectivity. */
int mf_dofs_uniform_create(int dim, int degree, int level, int ntrees, const int *tree_to_vertex,
                           const int *tree_to_tree, const int8_t *tree_to_face, mf_dofs_uniform **out);
void mf_dofs_uniform_destroy(mf_dofs_uniform *L);
/** Number the nodes: cell_nodes (ncells x (p+1)^dim), the node count and, newly allocated, the owner
 *  cell of every node and its node index there. The cells are every cell of every tree, tree by tree in Morton order (what
 *  p4est stores for a uniform forest on one rank): cell e's tree and coordinates follow from e. */
int mf_dofs_uniform_number(const mf_dofs_uniform *L, int ncells, int *cell_nodes, int *nnodes, int **dof_owner,
                           uint16_t **dof_pos);
/** Tree and lattice coordinates (at the level) of cell e, as the numbering assumes them. */
int mf_dofs_uniform_cell(const mf_dofs_uniform *L, int64_t e, int64_t *c);

#endif
