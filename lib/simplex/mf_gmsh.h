/* mf_gmsh.h -- reader of Gmsh .msh mesh files (ASCII 2.2 and 4.1) into plain arrays: the first
 * piece of simplex support. Internal header; one rank reads the whole file (no distribution yet). */
#ifndef MF_GMSH_H
#define MF_GMSH_H

#include <stddef.h>

#include "mfree.h"

/** One entry of $PhysicalNames. */
typedef struct {
  int dim;        /**< dimension of the physical group (0..3) */
  int tag;        /**< physical tag */
  char name[128]; /**< the name without quotes (longer names are refused) */
} mf_gmsh_name;

/** A simplex mesh as read from a .msh file. Node numbers are 0..n_nodes-1 (the file's ids, which
 *  may be sparse, are kept in node_id). Second-order cells (6-node triangles, 10-node tetrahedra,
 *  3-node lines, 6-node facet triangles) keep their VERTICES only; their edge nodes stay in the
 *  node list, unreferenced. */
typedef struct {
  int dim;           /**< 2 (triangles) or 3 (tetrahedra) */
  long n_nodes;
  double *x;         /**< [3 * n_nodes] coordinates */
  long *node_id;     /**< [n_nodes] the file's node id of each node */
  long n_cells;
  long *cells;       /**< [(dim+1) * n_cells] vertices, positively oriented */
  int *cell_tag;     /**< [n_cells] physical tag (0: none) */
  long *cell_id;     /**< [n_cells] the file's element id of each cell (for messages) */
  long *cell_line;   /**< [n_cells] the file line of each cell (for messages) */
  long n_facets;
  long *facets;      /**< [dim * n_facets] the file's facet elements (lines in 2D, triangles in 3D) */
  int *facet_tag;    /**< [n_facets] physical tag (0: none) */
  int n_names;
  mf_gmsh_name *names; /**< [n_names] $PhysicalNames */
} mf_gmsh_mesh;

/** Relative tolerance of the degenerate-cell check: a cell is refused when
 *  |det J| <= MF_GMSH_DEGENERATE_TOL * (longest edge)^dim. */
#define MF_GMSH_DEGENERATE_TOL 1e-10

/** Read the .msh file `path` as a mesh of dimension dim (2 or 3; 0: the file's, 3 where it has
 *  tetrahedra, else 2) into *out (zeroed first; freed on failure). Errors: MF_ERR_IO (unreadable, truncated, malformed, binary) and MF_ERR_ARGUMENT
 *  (content that is not a valid simplex mesh of that dimension), with "file:line: problem". */
int mf_gmsh_read(mf_context ctx, const char *path, int dim, mf_gmsh_mesh *out);
/** The same from len bytes in memory; name is used in messages. */
int mf_gmsh_read_buffer(mf_context ctx, const char *buf, size_t len, const char *name, int dim,
                        mf_gmsh_mesh *out);
/** Free the arrays of m and zero it (m may be NULL or zeroed). */
void mf_gmsh_free(mf_gmsh_mesh *m);

#endif
