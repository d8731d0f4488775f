/* mf_random.h -- the pseudo-random vector values of mf_vector_set_random, one formula for the host and
 * the device kernels: a hash of the DoF's point (rounded to 1e-9) and of its component, so that the
 * values are the same on every partition and on every backend that has the points. */
#ifndef MF_RANDOM_H
#define MF_RANDOM_H

#include <math.h>
#include <stdint.h>

#include "base/mf_common.h"

/** splitmix64: a well-mixed 64-bit hash */
MF_HD static inline uint64_t mf_mix64(uint64_t z)
{
  z += 0x9e3779b97f4a7c15ULL;
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

/** The value in [-1, 1) of component comp (of ncomp) at point x (dim coordinates) for seed. */
MF_HD static inline double mf_random_point(const double *x, int dim, int ncomp, int comp, uint64_t seed)
{
  uint64_t h = mf_mix64(ncomp > 1 ? seed ^ mf_mix64((uint64_t)comp + 1) : seed);
  for (int k = 0; k < dim; k++) h = mf_mix64(h ^ (uint64_t)(int64_t)llround(x[k] * 1e9));
  return 2.0 * ((double)(h >> 11) * (1.0 / 9007199254740992.0)) - 1.0;
}

#endif
