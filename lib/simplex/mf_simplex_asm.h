/* mf_simplex_asm.h -- the assembled simplex operators (mass, Laplace, Helmholtz: a M + b K_c on P_p, the
 * mass operator a M_c):
 * the entries of a cell's element matrix, one source for the CPU twin (lib/simplex/assembly_simplex.c)
 * and the device kernel (lib/cuda/simplex_assembly.cu), so that the two compute the same numbers the
 * same way. Internal to the library.
 *
 * Rowwise (after Cecka, Lew and Darve 2011): every DoF r owns its row, zeroes it, and adds row i of
 * the element matrix of every cell e that holds r at position i (the lists of mf_assembly_dof_cells,
 * cells ascending), at the positions of the columns found by binary search in the row. No atomics,
 * and the sums of a row are taken in the same order on the host and on the device.
 *
 * Entry (i, j) of cell e, affine geometry from its vertices (nothing stored per point but c(x_q)):
 *   constant coefficient  |det J| (a S_0 + b sum_{k<=l} (J^-1 J^-T)_kl S_kl)_ij, with the reference
 *                         matrices S (mf_simplex_reference_matrices): S_0 = B^T W B, S_kk = G_k^T W G_k,
 *                         S_kl = G_k^T W G_l + G_l^T W G_k (k < l), all symmetric;
 *   coefficient c(x_q)    sum_q w_q |det J| (a c_m phi_i phi_j + b c_q (J^-T grad phi_i) . (J^-T grad phi_j))
 *                         at the points of the operator's rule, c_m = c_q for the mass operator
 *                         (mass_coef), 1 for Helmholtz. */
#ifndef MF_SIMPLEX_ASM_H
#define MF_SIMPLEX_ASM_H

#include <stddef.h>
#include <stdint.h>

#include "base/mf_common.h"
#include "physics/mf_gallery.h"

#ifdef __CUDACC__
#define MF_SX_UNROLL _Pragma("unroll")
#else
#define MF_SX_UNROLL
#endif

/** What a cell's entries need besides its vertices: per cell |det J|, J^-1 (row-major, 3 x 3 slots)
 *  and the packed (J^-1 J^-T)_kl, k <= l, in the order of the reference matrices (m = 1, 2, ...). */
typedef struct {
  double det;
  double Ji[9];
  double Gm[6];
} mf_sx_asm_cell;

/** The cell's geometry from its vertices X ((dim + 1) x dim): J[k][l] = X_{l+1,k} - X_{0,k}, one
 *  division for the inverse (as the action kernels, lib/cuda/simplex_kernels.cuh). */
MF_HD static inline void mf_sx_asm_geometry(int dim, const double *X, mf_sx_asm_cell *c)
{
  double J[3][3];
  MF_SX_UNROLL
  for (int k = 0; k < 9; k++) c->Ji[k] = 0.0;
  MF_SX_UNROLL
  for (int l = 0; l < 3; l++)
    MF_SX_UNROLL
    for (int k = 0; k < 3; k++) J[k][l] = (k < dim && l < dim) ? X[(l + 1) * dim + k] - X[k] : (k == l ? 1.0 : 0.0);
  double det;
  if (dim == 2) {
    det = J[0][0] * J[1][1] - J[0][1] * J[1][0];
    const double id = 1.0 / det;
    c->Ji[0] = J[1][1] * id, c->Ji[1] = -J[0][1] * id;
    c->Ji[3] = -J[1][0] * id, c->Ji[4] = J[0][0] * id;
  } else {
    det = J[0][0] * (J[1][1] * J[2][2] - J[1][2] * J[2][1]) - J[0][1] * (J[1][0] * J[2][2] - J[1][2] * J[2][0]) +
          J[0][2] * (J[1][0] * J[2][1] - J[1][1] * J[2][0]);
    const double id = 1.0 / det;
    MF_SX_UNROLL
    for (int r = 0; r < 3; r++)
      MF_SX_UNROLL
      for (int q = 0; q < 3; q++) { /* the adjugate's entry (r, q) is the cofactor of (q, r) */
        const int r1 = (q + 1) % 3, r2 = (q + 2) % 3, c1 = (r + 1) % 3, c2 = (r + 2) % 3;
        c->Ji[r * 3 + q] = (J[r1][c1] * J[r2][c2] - J[r1][c2] * J[r2][c1]) * id;
      }
  }
  c->det = det < 0 ? -det : det;
  int m = 0;
  MF_SX_UNROLL
  for (int k = 0; k < 3; k++)
    MF_SX_UNROLL
    for (int l = k; l < 3; l++) {
      if (k >= dim || l >= dim) continue;
      double g = 0.0;
      MF_SX_UNROLL
      for (int r = 0; r < 3; r++)
        if (r < dim) g += c->Ji[k * 3 + r] * c->Ji[l * 3 + r];
      c->Gm[m++] = g;
    }
}

/** (J^-1 J^-T)_kl from the packed upper triangle. */
MF_HD static inline double mf_sx_asm_G(const mf_sx_asm_cell *c, int dim, int k, int l)
{
  if (k > l) {
    const int t = k;
    k = l, l = t;
  }
  return c->Gm[k * dim - k * (k - 1) / 2 + (l - k)];
}

/** Entry (i, j) of P1, constant coefficient, without tables: the physical gradients are
 *  g_i = sum_r w_ir (row r of J^-1), w_0r = -1, w_ir = delta_{r,i-1} (i >= 1), so
 *  K_ij = |T| sum_rl w_ir w_jl (J^-1 J^-T)_rl, and M_ij = |T| (1 + delta_ij) / ((dim + 1)(dim + 2));
 *  |T| = |det J| / dim!. The loops have fixed bounds (the packed entries indexed by constants). */
MF_HD static inline double mf_sx_asm_entry_p1(int dim, const mf_sx_asm_cell *c, double a, double b, int i, int j)
{
  double k = 0.0;
  MF_SX_UNROLL
  for (int r = 0; r < 3; r++)
    MF_SX_UNROLL
    for (int l = 0; l < 3; l++) {
      if (r >= dim || l >= dim) continue;
      const double wi = i == 0 ? -1.0 : (r == i - 1 ? 1.0 : 0.0), wj = j == 0 ? -1.0 : (l == j - 1 ? 1.0 : 0.0);
      k += wi * wj * mf_sx_asm_G(c, dim, r, l);
    }
  const double vol = c->det / (dim == 2 ? 2.0 : 6.0), m = (i == j ? 2.0 : 1.0) / ((dim + 1) * (dim + 2));
  return vol * (a * m + b * k);
}

/** Entry (i, j), constant coefficient: S the reference matrices, (1 + dim(dim+1)/2) x N x N,
 *  S[(m N + i) N + j] (symmetric in i, j); P1 without them (mf_sx_asm_entry_p1). */
MF_HD static inline double mf_sx_asm_entry_ref(int dim, int N, const double *S, const mf_sx_asm_cell *c, double a,
                                               double b, int i, int j)
{
  if (N == dim + 1) return mf_sx_asm_entry_p1(dim, c, a, b, i, j);
  const int nm = dim * (dim + 1) / 2;
  const size_t NN = (size_t)N * N, ij = (size_t)i * N + j;
  double k = 0.0;
  MF_SX_UNROLL
  for (int m = 0; m < 6; m++)
    if (m < nm) k += c->Gm[m] * S[(size_t)(m + 1) * NN + ij];
  return c->det * (a * S[ij] + b * k);
}

/** Entry (i, j) with the coefficient cq (nq values of the cell) at the rule's points: B (nq x N),
 *  G (nq x N x dim), w (nq); mass_coef: the mass term is weighted by cq too. */
MF_HD static inline double mf_sx_asm_entry_quad(int dim, int N, int nq, const double *B, const double *G,
                                                const double *w, const double *cq, const mf_sx_asm_cell *c, double a,
                                                double b, int mass_coef, int i, int j)
{
  double s = 0.0;
  for (int q = 0; q < nq; q++) {
    const double *gi = G + ((size_t)q * N + i) * dim, *gj = G + ((size_t)q * N + j) * dim;
    double gg = 0.0;
    MF_SX_UNROLL
    for (int l = 0; l < 3; l++) {
      if (l >= dim) continue;
      double pi = 0.0, pj = 0.0; /* (J^-T grad phi)_l = sum_r Ji[r][l] dphi/dxhat_r */
      MF_SX_UNROLL
      for (int r = 0; r < 3; r++)
        if (r < dim) pi += c->Ji[r * 3 + l] * gi[r], pj += c->Ji[r * 3 + l] * gj[r];
      gg += pi * pj;
    }
    s += w[q] * MF_PW_SCALAR_ENTRY(a * (mass_coef ? cq[q] : 1.0), b * cq[q], B[(size_t)q * N + i], B[(size_t)q * N + j], gg);
  }
  return c->det * s;
}

#endif
