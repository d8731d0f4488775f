/* mf_element.h -- entries of the element matrix of a cell without hanging nodes, and the position of
 * an entry in the CSR sparsity: one source for the CPU twins (lib/assembled/assembly_variants.c) and the CUDA
 * assembly kernels (lib/cuda/assembly.cu), so that the two compute the same numbers the same way.
 *
 * Entry (i, j) of cell e from its quadrature data (the operator's, AoSoA: component c of point q at
 * qd[base + c * block_stride + q]) and the 1D tables B (nq x n1, phi_m(x_q)) and G (nq x n1,
 * phi_m'(x_q)):
 *     A_ij = sum_q  m_q phi_i(q) phi_j(q) + grad phi_i(q) . G(q) grad phi_j(q)
 * with phi_i(q) = prod_d B[q_d][i_d] and d_k phi_i(q) = prod_d (d == k ? G : B)[q_d][i_d], the
 * integrand at each point the gallery's (mf_pw_entry, lib/physics/mf_gallery.h).                   */
#ifndef MF_ELEMENT_H
#define MF_ELEMENT_H

#include <stddef.h>
#include <stdint.h>

#include "assembled/mf_csr.h"
#include "base/mf_common.h"
#include "physics/mf_gallery.h"

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
  const double *gq = MF_PW_GRAD_BASE(sh->has_mass, qd, sh->block_stride); /* the gradient part's first component */
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
    double e; /* the point's term (lib/physics/mf_gallery.h) */
    MF_PW_ENTRY_DIRS(dim, sh->has_mass, sh->has_grad, qd, gq, sh->block_stride, q, bi, gi, bj, gj, e);
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

/* The column-wise form (cells without hanging nodes, low order: mf_element_fast). Column j of the
 * element matrix, point by point:
 *     t = G(q) grad phi_j(q),  m_j = m_q phi_j(q),   A_ij += grad phi_i(q) . t + phi_i(q) m_j   (all i)
 * with the reference cell's values of every phi_i at every point in a point table
 *     T[(q npc + i) 4 + k] = d_k phi_i(q) (k < dim, 0 for k = 2 in 2D),  T[(q npc + i) 4 + 3] = phi_i(q),
 * made once (mf_element_point_table) instead of the 1D products per entry. The four values of (q, i)
 * are contiguous: the device reads them with two 16-byte loads (mf_element_point_values), all threads
 * of a warp the same row i at once (a broadcast). The CPU twins and the device
 * kernels call mf_element_column with the same table, so they compute the same sums in the same order;
 * on the device the sizes are compile-time constants and the loop over i unrolls into registers. */

/* The (dim, n1 = p + 1, nq) of the column-wise form: 2D p <= 3 and 3D p <= 2 (npc <= 27, a column in
 * registers), nq = p + 1 or p + 2 (every rule of mf_quadrature). lib/cuda/assembly.cu instantiates
 * its kernel for exactly these. */
#define MF_ELEMENT_FAST_MAX_NPC 27
#define MF_ELEMENT_FAST_MAX_NQP 64
static inline int mf_element_fast(const mf_element_shape *sh)
{
  return (sh->dim == 2 ? sh->n1 <= 4 : sh->dim == 3 && sh->n1 <= 3) && sh->n1 >= 2 &&
         (sh->nq == sh->n1 || sh->nq == sh->n1 + 1);
}

#ifdef __CUDA_ARCH__
#define MF_ELEMENT_UNROLL _Pragma("unroll")
#else
#define MF_ELEMENT_UNROLL
#endif

/** The point table T (4 nqp npc doubles, the comment above) from the 1D tables B and G (nq x n1). */
static inline void mf_element_point_table(const mf_element_shape *sh, const double *B, const double *G, double *T)
{
  const int dim = sh->dim, n1 = sh->n1, nq = sh->nq;
  for (int q = 0; q < sh->nqp; q++)
    for (int i = 0; i < sh->npc; i++) {
      double b[3] = {1.0, 1.0, 1.0}, g[3] = {1.0, 1.0, 1.0};
      for (int d = 0, tq = q, ti = i; d < dim; d++, tq /= nq, ti /= n1) {
        b[d] = B[(tq % nq) * n1 + ti % n1];
        g[d] = G[(tq % nq) * n1 + ti % n1];
      }
      double *t = T + ((size_t)q * sh->npc + i) * 4;
      for (int k = 0; k < 3; k++) t[k] = k < dim ? (k == 0 ? g[0] : b[0]) * (k == 1 ? g[1] : b[1]) * (k == 2 ? g[2] : b[2]) : 0.0;
      t[3] = b[0] * b[1] * b[2];
    }
}

/** The four values of T at t (16-byte aligned on the device: two 16-byte loads there). */
MF_HD static inline void mf_element_point_values(const double *t, double *d0, double *d1, double *d2, double *phi)
{
#ifdef __CUDA_ARCH__
  const double2 a = *(const double2 *)t, b = *(const double2 *)(t + 2);
  *d0 = a.x;
  *d1 = a.y;
  *d2 = b.x;
  *phi = b.y;
#else
  *d0 = t[0];
  *d1 = t[1];
  *d2 = t[2];
  *phi = t[3];
#endif
}

/** col[i] += grad phi_i(q) . t + phi_i(q) m_j for every i (tq: the point table at q); mass and grad are
 *  constants where it is called, so that the parts an operator lacks cost nothing. */
MF_HD static inline void mf_element_rows(int npc, int dim, int mass, int grad, const double *tq, double t0, double t1,
                                         double t2, double mj, double *col)
{
  MF_ELEMENT_UNROLL
  for (int i = 0; i < npc; i++) {
    double i0, i1, i2, i3;
    mf_element_point_values(tq + 4 * i, &i0, &i1, &i2, &i3);
    double c = col[i]; /* a chain of multiply-adds (fused on the device) */
    if (grad) {
      c += i0 * t0;
      c += i1 * t1;
      if (dim == 3) c += i2 * t2;
    }
    if (mass) c += i3 * mj;
    col[i] = c;
  }
}

/** Column j of the element matrix into col[0 .. npc): qd points at the cell's quadrature data (component
 *  c of point q at qd[c * sh->block_stride + q]), T at the point table. */
MF_HD static inline void mf_element_column(const mf_element_shape *sh, const double *qd, const double *T, int j,
                                           double *col)
{
  const int npc = sh->npc, dim = sh->dim;
  const size_t bs = sh->block_stride;
  const double *gq = MF_PW_GRAD_BASE(sh->has_mass, qd, bs); /* the gradient part's first component */
  MF_ELEMENT_UNROLL
  for (int i = 0; i < npc; i++) col[i] = 0.0;
  for (int q = 0; q < sh->nqp; q++) {
    const double *tq = T + (size_t)q * npc * 4;
    double j0, j1, j2, j3;
    mf_element_point_values(tq + 4 * j, &j0, &j1, &j2, &j3);
    /* the point's action on phi_j: mj = m phi_j, t = G grad phi_j (lib/physics/mf_gallery.h) */
    double t0 = 0.0, t1 = 0.0, t2 = 0.0, mj = 0.0;
    if (sh->has_grad) MF_PW_G_TIMES(dim, gq, bs, q, j0, j1, j2, t0, t1, t2);
    MF_PW_APPLY_MASS(sh->has_mass, qd, q, j3, mj);
    if (sh->has_grad && sh->has_mass) mf_element_rows(npc, dim, 1, 1, tq, t0, t1, t2, mj, col);
    else if (sh->has_grad) mf_element_rows(npc, dim, 0, 1, tq, t0, t1, t2, mj, col);
    else mf_element_rows(npc, dim, 1, 0, tq, t0, t1, t2, mj, col);
  }
}

#endif
