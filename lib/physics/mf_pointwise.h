/* mf_pointwise.h -- the pointwise physics of the operators, written once and used by the CPU set-up
 * (lib/hex/geometry.c) and the CUDA set-up kernels (lib/cuda/setup.cu).
 *
 * Quadrature data at one point, from the Jacobian J (J[3k + l] = d x_k / d xi_l) and the weight w:
 *   mass part      m = a w |det J|            (times c when the operator has no gradient part)
 *   gradient part  G = b w |det J| J^-1 J^-T  (times c), upper triangle row by row:
 *                  2D (00, 01, 11), 3D (00, 01, 02, 11, 12, 22)
 * The coefficient c multiplies afterwards (mf_qf_scale): the geometry and the user's callback are
 * separate set-up phases.                                                                       */
#ifndef MF_POINTWISE_H
#define MF_POINTWISE_H

#include <math.h>
#include <stddef.h>

#include "base/mf_common.h"

MF_HD static inline double mf_qf_det(int dim, const double *J)
{
  if (dim == 2) return J[0] * J[4] - J[1] * J[3];
  return J[0] * (J[4] * J[8] - J[5] * J[7]) - J[1] * (J[3] * J[8] - J[5] * J[6]) + J[2] * (J[3] * J[7] - J[4] * J[6]);
}

/** Number of stored components per point. */
MF_HD static inline int mf_qf_ncomp(int dim, int has_mass, int has_grad)
{
  return (has_mass ? 1 : 0) + (has_grad ? (dim == 2 ? 3 : 6) : 0);
}

/** Writes the components to out[c * stride]; returns det J (the caller rejects det <= 0). */
MF_HD static inline double mf_qf_geometry(int dim, const double *J, double w, double a, double b, int has_mass,
                                          int has_grad, double *out, size_t stride)
{
  const double det = mf_qf_det(dim, J), wd = w * fabs(det);
  int comp = 0;
  if (has_mass) out[stride * comp++] = a * wd;
  if (has_grad) {
    double Ji[9];
    if (dim == 2) {
      Ji[0] = J[4] / det, Ji[1] = -J[1] / det, Ji[3] = -J[3] / det, Ji[4] = J[0] / det;
    } else {
      Ji[0] = (J[4] * J[8] - J[5] * J[7]) / det;
      Ji[1] = (J[2] * J[7] - J[1] * J[8]) / det;
      Ji[2] = (J[1] * J[5] - J[2] * J[4]) / det;
      Ji[3] = (J[5] * J[6] - J[3] * J[8]) / det;
      Ji[4] = (J[0] * J[8] - J[2] * J[6]) / det;
      Ji[5] = (J[2] * J[3] - J[0] * J[5]) / det;
      Ji[6] = (J[3] * J[7] - J[4] * J[6]) / det;
      Ji[7] = (J[1] * J[6] - J[0] * J[7]) / det;
      Ji[8] = (J[0] * J[4] - J[1] * J[3]) / det;
    }
    for (int k = 0; k < dim; k++)
      for (int l = k; l < dim; l++) {
        double g = 0.0; /* (J^-1 J^-T)_kl = sum_m Ji[k][m] Ji[l][m] */
        for (int m = 0; m < dim; m++) g += Ji[3 * k + m] * Ji[3 * l + m];
        out[stride * comp++] = b * wd * g;
      }
  }
  return det;
}

/** Multiplies the components that carry the coefficient by c. */
MF_HD static inline void mf_qf_scale(int dim, int has_mass, int has_grad, double c, double *out, size_t stride)
{
  const int first = has_grad ? (has_mass ? 1 : 0) : 0, ncomp = mf_qf_ncomp(dim, has_mass, has_grad);
  for (int comp = first; comp < ncomp; comp++) out[stride * comp] *= c;
}

#endif
