/* physics_vcol.h -- private to the cuda backend (C++): the vector kernel's shape (physics_vcol.cu), for
 * lib/cuda/physics.cu. */
#ifndef MF_PHYSICS_VCOL_H
#define MF_PHYSICS_VCOL_H

#include <string>

#include "hex/mf_hex_physics.h"

/** The vector kernel's design and launch for the physics h on the space s (physics_vcol.cu says the rule and
 *  its measurements): the column design's cells per block, blocks per SM, components together; the thread
 *  design's block (0: not it) and paired loads; the slab design's block (0: not it), x derivative plane
 *  by plane and stage of stored entries in shared memory (QSTAGE of cell_slab.cuh). */
void vcol_shape(const mf_hex_phys *h, const mf_space s, int *cpb, int *minb, int *nj, int *tpb, int *vload, int *slab,
                int *xplane, int *qstage);
/** The 1D matrices of b as constants of the run-time text, with mf_cbasis, which reads them (the slab design). */
std::string const_basis(const mf_basis1d *b);

#endif
