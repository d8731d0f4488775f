/* mf_source.h -- private to the library: pointwise fields given as source (mfree.h, mf_source; the
 * public functions in lib/physics/source_fields.c, the device's kernels in lib/cuda/source.cu). */
#ifndef MF_SOURCE_H
#define MF_SOURCE_H

#include "physics/mf_physics.h"

#ifdef __cplusplus
extern "C" {
#endif

struct mf_source_s {
  mf_context ctx;
  char *text;   /* the user's text */
  char name[64];
  int ncomp;
  int nk;
  double k[MF_PHYS_MAX_CONSTANTS];
  /* the host path: the text with a glue function compiled by the system C compiler (f[0] of this physics
   * calls name), made on first use */
  mf_phys host;
  int host_made;
};

#ifdef __cplusplus
}
#endif
#endif
