/* mf_map.h -- the geometry of the built-in meshes, one definition for host and device: a point s of a
 * tree's reference cube [0,1]^dim -> the multilinear tree map from its corner vertices V (2^dim x 3,
 * z-order) -> the mesh's map (cube: identity; deformed: the CEED benchmark map per coordinate; ball:
 * the blend of the cube shell onto the sphere; sheared: a fixed affine map, see docs/architecture.md). */
#ifndef MF_MAP_H
#define MF_MAP_H

#include <math.h>

#include "base/mf_common.h"

#ifndef M_PI
#define M_PI 3.14159265358979323846
#endif

typedef enum { MF_MAP_CUBE = 0, MF_MAP_BALL = 1, MF_MAP_DEFORMED = 2, MF_MAP_SHEARED = 3 } mf_map_kind;

/* The ball: a point X of the cube [-1,1]^dim at max-norm m lies in the inner cube (m <= a, kept as
 * is) or in the shell between the inner cube and the unit cube, which is blended linearly onto the
 * unit sphere along rays: x = (1 - t) a X/m + t X/|X|, t = (m - a)/(1 - a). Smooth inside each
 * tree, continuous across trees, exact on the coarse vertices. */
MF_HD static inline void mf_map_ball(int dim, double a, const double *X, double *x)
{
  double m = 0.0, r = 0.0;
  for (int k = 0; k < dim; k++) {
    m = fmax(m, fabs(X[k]));
    r += X[k] * X[k];
  }
  r = sqrt(r);
  if (m <= a) {
    for (int k = 0; k < dim; k++) x[k] = X[k];
    return;
  }
  const double t = (m - a) / (1.0 - a);
  for (int k = 0; k < dim; k++) x[k] = (1.0 - t) * a * X[k] / m + t * X[k] / r;
}

MF_HD static inline void mf_map_point(int dim, mf_map_kind map, double ball_inner, const double *V, const double *s,
                                      double *x)
{
  const int nc = 1 << dim;
  double X[3] = {0, 0, 0};
  for (int c = 0; c < nc; c++) {
    double w = 1.0;
    for (int k = 0; k < dim; k++) w *= ((c >> k) & 1) ? s[k] : 1.0 - s[k];
    for (int k = 0; k < dim; k++) X[k] += w * V[3 * c + k];
  }
  switch (map) {
  case MF_MAP_CUBE:
    for (int k = 0; k < dim; k++) x[k] = X[k];
    break;
  case MF_MAP_DEFORMED:
    for (int k = 0; k < dim; k++) x[k] = 0.5 + sin(2.0 * M_PI / 3.0 * (X[k] - 0.5)) / sqrt(3.0);
    break;
  case MF_MAP_BALL: mf_map_ball(dim, ball_inner, X, x); break;
  case MF_MAP_SHEARED: /* affine, with shear and unequal stretch: the cells are parallelograms and
                          parallelepipeds, not rectangles (the 2D map is the 3D one's first two rows at z = 0) */
    if (dim == 2) {
      x[0] = X[0] + 0.5 * X[1];
      x[1] = 1.2 * X[1];
    } else {
      x[0] = X[0] + 0.5 * X[1] + 0.25 * X[2];
      x[1] = 1.2 * X[1] + 0.3 * X[2];
      x[2] = 0.8 * X[2];
    }
    break;
  }
}

#endif
