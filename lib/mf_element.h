/* mf_element.h -- entries of the element matrix of a cell without hanging nodes, and the position of
 * an entry in the CSR sparsity: one source for the CPU twins (lib/assembly_variants.c) and the CUDA
 * assembly kernels (lib/cuda/assembly.cu), so that the two compute the same numbers the same way.
 *
 * Entry (i, j) of cell e from its quadrature data (op->qd, AoSoA: component c of point q at
 * qd[base + c * block_stride + q]) and the 1D tables B (nq x n1, phi_m(x_q)) and G (nq x n1,
 * phi_m'(x_q)):
 *     A_ij = sum_q  m_q phi_i(q) phi_j(q)                                     (mass part)
 *                 + sum_{k <= l} G_kl(q) [d_k phi_i d_l phi_j + d_l phi_i d_k phi_j] / (1 + [k == l])
 * with phi_i(q) = prod_d B[q_d][i_d] and d_k phi_i(q) = prod_d (d == k ? G : B)[q_d][i_d]: the stored
 * upper triangle of the symmetric G_kl counts twice off the diagonal, as in the diagonal kernels.   */
#ifndef MF_ELEMENT_H
#define MF_ELEMENT_H

#include <stddef.h>
#include <stdint.h>

#include "mf_common.h"

/** What mf_element_entry needs besides the cell's data: sizes and the operator's parts. */
typedef struct {
  int dim, n1, nq, nqp, npc;
  int has_mass, has_grad;
  size_t block_stride; /* of the quadrature data */
} mf_element_shape;

/** Offset of (cell, component 0, point 0) in AoSoA quadrature data (mf_qdata_index). */
MF_HD static inline size_t mf_element_qd_base(int cell, int batch, size_t batch_stride, int nqp)
{
  return (size_t)(cell / batch) * batch_stride + (size_t)(cell % batch) * (size_t)nqp;
}

/** Entry (i, j) of the element matrix; qd points at the cell's data (mf_element_qd_base). The loops
 *  over directions run to 3 with factors 1 beyond dim (the same products in 2D), so that a compiler
 *  unrolls them and keeps the small arrays in registers. */
MF_HD static inline double mf_element_entry(const mf_element_shape *sh, const double *qd, const double *B,
                                            const double *G, int i, int j)
{
  const int dim = sh->dim, n1 = sh->n1, nq = sh->nq;
  int ii[3], jj[3];
  for (int d = 0, ti = i, tj = j; d < 3; d++, ti /= n1, tj /= n1) {
    ii[d] = d < dim ? ti % n1 : 0;
    jj[d] = d < dim ? tj % n1 : 0;
  }
  const double *gq = qd + (sh->has_mass ? sh->block_stride : 0); /* component 0 of the gradient part */
  double a = 0.0;
  int q0 = 0, q1 = 0, q2 = 0; /* the point's indices, x fastest */
  for (int q = 0; q < sh->nqp; q++) {
    const int qi[3] = {q0, q1, q2};
    double bi[3], gi[3], bj[3], gj[3];
    for (int d = 0; d < 3; d++) {
      const int on = d < dim;
      bi[d] = on ? B[qi[d] * n1 + ii[d]] : 1.0;
      gi[d] = on ? G[qi[d] * n1 + ii[d]] : 1.0;
      bj[d] = on ? B[qi[d] * n1 + jj[d]] : 1.0;
      gj[d] = on ? G[qi[d] * n1 + jj[d]] : 1.0;
    }
    double e = 0.0;
    if (sh->has_mass) e = qd[q] * (bi[0] * bj[0]) * (bi[1] * bj[1]) * (bi[2] * bj[2]);
    if (sh->has_grad) {
      int c = 0;
      for (int k = 0; k < 3; k++)
        for (int l = k; l < 3; l++) {
          if (l >= dim) continue;
          /* d_k phi_i d_l phi_j (+ d_l phi_i d_k phi_j for k != l), direction by direction */
          double t1 = 1.0, t2 = 1.0;
          for (int d = 0; d < 3; d++) {
            t1 *= (d == k ? gi[d] : bi[d]) * (d == l ? gj[d] : bj[d]);
            t2 *= (d == l ? gi[d] : bi[d]) * (d == k ? gj[d] : bj[d]);
          }
          e += gq[(size_t)c * sh->block_stride + q] * (k == l ? t1 : t1 + t2);
          c++;
        }
    }
    a += e;
    if (++q0 == nq) {
      q0 = 0;
      if (++q1 == nq) {
        q1 = 0;
        q2++;
      }
    }
  }
  return a;
}

/** Position of column j in row i of a CSR pattern with ascending columns (j is there). */
MF_HD static inline int64_t mf_csr_find(const int64_t *rowptr, const int *colidx, int i, int j)
{
  int64_t lo = rowptr[i], hi = rowptr[i + 1] - 1;
  while (lo < hi) {
    const int64_t mid = lo + (hi - lo) / 2;
    if (colidx[mid] < j) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}
#endif
