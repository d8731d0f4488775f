/* mf_physics.h -- private to the library: users' pointwise physics (the mf_physics object of
 * lib/physics/physics.c) and what every cell family does with it at one quadrature point.
 *
 * A linear operator from the g-functions (mfree.h, "Pointwise physics") runs in reference coordinates
 * on stored data. At a point with Jacobian J (J[3k + l] = d x_k / d xi_l), Ji = J^-1 (Ji[3l + e] =
 * d xi_l / d x_e) and weight w |det J| = W, the physical gradient of a field is du_e = sum_l ref_l Ji[l][e]
 * and the test function's is the same; so the point's contribution
 *     v . (g0 u + g1 du) + dv : (g2 u + g3 du)
 * in reference terms is, for test component c and trial component b,
 *     D0[c][b]       = W g0[c][b]
 *     D1[c][b][m]    = W sum_e g1[c][b][e] Ji[m][e]          (test value, trial reference derivative m)
 *     D2[c][b][l]    = W sum_d Ji[l][d] g2[c][b][d]          (test reference derivative l, trial value)
 *     D3[c][b][l][m] = W sum_{d,e} Ji[l][d] g3[c][b][d][e] Ji[m][e]
 * and the kernels apply
 *     r0[c]    = sum_b D0[c][b] u_b + sum_{b,m} D1[c][b][m] ref_b,m     (against the test values)
 *     r1[c][l] = sum_b D2[c][b][l] u_b + sum_{b,m} D3[c][b][l][m] ref_b,m (against the reference derivatives)
 * A point stores the blocks the physics has (g-function not NULL), each in full; where every point's
 * blocks are zero off the component diagonal and the same on it (a vector Laplace, a vector mass), one
 * scalar block is stored for all components ("one block", lay.nb = 1). The helpers are usable from
 * host and device code (MF_HD).                                                                     */
#ifndef MF_PHYSICS_H
#define MF_PHYSICS_H

#include <math.h>
#include <stddef.h>

#include "base/mf_common.h"

#ifdef __cplusplus
extern "C" {
#endif

/** The most entries a point stores: all four blocks of 4 components in 3D. */
#define MF_PHYS_MAX_ENTRIES (MF_MAX_COMPONENTS * MF_MAX_COMPONENTS * (1 + 3 + 3 + 9))
/** The most constants a physics holds (mf_physics_set_constants). */
#define MF_PHYS_MAX_CONSTANTS 64

/** A pointwise function (mfree.h's mf_pointwise_fn, repeated here so that device code needs no mfree.h). */
typedef void (*mf_phys_fn)(int dim, int nc, const double *u, const double *du, const double *x, const double *k,
                           double *out);

/** A boundary function (mfree.h's mf_boundary_fn): u, the point x and the outward unit normal n. */
typedef void (*mf_phys_bfn)(int dim, int nc, const double *u, const double *x, const double *n, const double *k,
                            double *out);
/** The most boundary tags a physics has terms on (mf_physics_set_boundary). */
#define MF_PHYS_MAX_BOUNDARY 8
/** The longest name of a function in a physics' source, with its terminating zero. */
#define MF_PHYS_MAX_NAME 64

/** What an operator keeps of a physics (a copy: the user's object may go after the operator is made). */
typedef struct mf_phys_s {
  int ncomp;
  mf_phys_fn f[2]; /* f0, f1 */
  mf_phys_fn g[4]; /* g0..g3 */
  int nconst;
  double k[MF_PHYS_MAX_CONSTANTS];
  int needs_dim;   /* 1: the physics acts on fields of dim components only (the gallery's elasticity) */
  const char *name; /* the gallery's name, or "user" */
  const char *gallery_functions; /* a gallery entry: its functions in mf_phys_gallery_source (the source a
                                  * device backend compiles), else NULL */
  /* given as source (mf_physics_set_source): the text and names (lib/physics/source.c, held by every
   * copy: mf_phys_retain, mf_phys_release); f and g are filled where the backend compiles it */
  int from_source;
  int src_has[6];   /* f0, f1, g0..g3 named */
  struct mf_phys_src_s *src;
  /* boundary terms (mf_physics_set_boundary): on the faces of tag btag[i], f0 against v (the residual) and
   * its derivative g0 (the operator) */
  int nbound;
  int btag[MF_PHYS_MAX_BOUNDARY];
  mf_phys_bfn bf0[MF_PHYS_MAX_BOUNDARY], bg0[MF_PHYS_MAX_BOUNDARY];
  /* terms given as source (mf_physics_set_boundary_source): the names of term i's f0 and g0 in the source
   * ("": none; bf0, bg0 then filled where the source is compiled for the host) */
  int bsrc[MF_PHYS_MAX_BOUNDARY];
  char bname[MF_PHYS_MAX_BOUNDARY][2][MF_PHYS_MAX_NAME];
} mf_phys;

/** The stored layout of one point: the blocks present, their offsets, nb components (1: one block for
 *  all, else nc). */
typedef struct {
  int dim, nc, nb;
  int sym;    /* one block whose D3 is symmetric at every point: its upper triangle, row by row */
  int has[4];
  int off[4]; /* offset of D0..D3 within the point's entries */
  int n;      /* entries per point */
} mf_phys_layout;

MF_HD static inline void mf_phys_layout_make(int dim, int nc, int nb, int sym, const int has[4], mf_phys_layout *L)
{
  const int size[4] = {nb * nb, nb * nb * dim, nb * nb * dim, sym ? dim * (dim + 1) / 2 : nb * nb * dim * dim};
  L->dim = dim;
  L->nc = nc;
  L->nb = nb;
  L->sym = sym;
  L->n = 0;
  for (int t = 0; t < 4; t++) {
    L->has[t] = has[t];
    L->off[t] = L->n;
    L->n += has[t] ? size[t] : 0;
  }
}

/** The offset of D3[cb][l][m] (cb the block: c nb + b) within a point's entries. */
MF_HD static inline int mf_phys_d3(const mf_phys_layout *L, int cb, int l, int m)
{
  const int dim = L->dim;
  if (!L->sym) return L->off[3] + (cb * dim + l) * dim + m;
  const int a = l < m ? l : m, b = l < m ? m : l;
  return L->off[3] + a * dim - a * (a + 1) / 2 + b;
}

/** Ji = J^-1 (both 3 x 3 row-major, the leading dim x dim block used) and det J. */
MF_HD static inline double mf_phys_inverse(int dim, const double *J, double *Ji)
{
  if (dim == 2) {
    const double det = J[0] * J[4] - J[1] * J[3];
    Ji[0] = J[4] / det, Ji[1] = -J[1] / det, Ji[3] = -J[3] / det, Ji[4] = J[0] / det;
    return det;
  }
  const double det = J[0] * (J[4] * J[8] - J[5] * J[7]) - J[1] * (J[3] * J[8] - J[5] * J[6]) +
                     J[2] * (J[3] * J[7] - J[4] * J[6]);
  Ji[0] = (J[4] * J[8] - J[5] * J[7]) / det;
  Ji[1] = (J[2] * J[7] - J[1] * J[8]) / det;
  Ji[2] = (J[1] * J[5] - J[2] * J[4]) / det;
  Ji[3] = (J[5] * J[6] - J[3] * J[8]) / det;
  Ji[4] = (J[0] * J[8] - J[2] * J[6]) / det;
  Ji[5] = (J[2] * J[3] - J[0] * J[5]) / det;
  Ji[6] = (J[3] * J[7] - J[4] * J[6]) / det;
  Ji[7] = (J[1] * J[6] - J[0] * J[7]) / det;
  Ji[8] = (J[0] * J[4] - J[1] * J[3]) / det;
  return det;
}

/** The stored entry of term j of component c's diagonal block and the reference derivatives it pairs
 *  (*k for the test function, *l for the trial function; -1: the value): j runs over
 *  mf_phys_diag_nterms(L) terms. */
MF_HD static inline int mf_phys_diag_nterms(const mf_phys_layout *L)
{
  const int dim = L->dim;
  return (L->has[0] ? 1 : 0) + (L->has[1] ? dim : 0) + (L->has[2] ? dim : 0) + (L->has[3] ? dim * dim : 0);
}
MF_HD static inline int mf_phys_diag_term(const mf_phys_layout *L, int c, int j, int *k, int *l)
{
  const int dim = L->dim, cc = L->nb == 1 ? 0 : c * L->nc + c;
  if (L->has[0]) {
    if (j == 0) {
      *k = *l = -1;
      return L->off[0] + cc;
    }
    j -= 1;
  }
  if (L->has[1]) {
    if (j < dim) {
      *k = -1, *l = j;
      return L->off[1] + cc * dim + j;
    }
    j -= dim;
  }
  if (L->has[2]) {
    if (j < dim) {
      *k = j, *l = -1;
      return L->off[2] + cc * dim + j;
    }
    j -= dim;
  }
  *k = j / dim, *l = j % dim;
  return mf_phys_d3(L, cc, *k, *l);
}

/** Entries of g-function t (0..3) for nc components in dim. */
MF_HD static inline int mf_phys_gsize(int t, int dim, int nc)
{
  return t == 0 ? nc * nc : t == 3 ? nc * nc * dim * dim : nc * nc * dim;
}

/** The reference-form entries of one point (full blocks, nb = nc) from the g-functions' values G[t]
 *  (physical, mfree.h's layout; NULL where absent), Ji (Ji[3l + e]) and W = w |det J|, into D. */
MF_HD static inline void mf_phys_store_point(const mf_phys_layout *L, const double *const G[4], const double *Ji,
                                             double W, double *D)
{
  const int dim = L->dim, nc = L->nc;
  for (int c = 0; c < nc; c++)
    for (int b = 0; b < nc; b++) {
      const int cb = c * nc + b;
      if (L->has[0]) D[L->off[0] + cb] = W * G[0][cb];
      if (L->has[1])
        for (int m = 0; m < dim; m++) {
          double s = 0.0;
          for (int e = 0; e < dim; e++) s += G[1][cb * dim + e] * Ji[3 * m + e];
          D[L->off[1] + cb * dim + m] = W * s;
        }
      if (L->has[2])
        for (int l = 0; l < dim; l++) {
          double s = 0.0;
          for (int d = 0; d < dim; d++) s += Ji[3 * l + d] * G[2][cb * dim + d];
          D[L->off[2] + cb * dim + l] = W * s;
        }
      if (L->has[3]) {
        /* a symmetric block of g3 gives a D3 block symmetric to the last bit: its upper triangle mirrored
         * (the two orders of the products round differently) */
        const double *g3 = &G[3][cb * dim * dim];
        int symmetric = 1;
        for (int d = 0; d < dim; d++)
          for (int e = d + 1; e < dim; e++) symmetric = symmetric && g3[d * dim + e] == g3[e * dim + d];
        for (int l = 0; l < dim; l++)
          for (int m = 0; m < dim; m++) {
            if (symmetric && m < l) {
              D[L->off[3] + (cb * dim + l) * dim + m] = D[L->off[3] + (cb * dim + m) * dim + l];
              continue;
            }
            double s = 0.0;
            for (int d = 0; d < dim; d++)
              for (int e = 0; e < dim; e++) s += Ji[3 * l + d] * g3[d * dim + e] * Ji[3 * m + e];
            D[L->off[3] + (cb * dim + l) * dim + m] = W * s;
          }
      }
    }
}

/** The point's action: r0[c] and r1[c * dim + l] (overwritten) from the field's values u[b] and
 *  reference derivatives ref[b * dim + m], by the stored entries D of layout L (one block: the same for
 *  every component, none between components). */
MF_HD static inline void mf_phys_apply_point(const mf_phys_layout *L, const double *D, const double *u,
                                             const double *ref, double *r0, double *r1)
{
  const int dim = L->dim, nc = L->nc, nb = L->nb;
  for (int c = 0; c < nc; c++) {
    double s0 = 0.0, s1[3] = {0.0, 0.0, 0.0};
    for (int b = 0; b < nc; b++) {
      if (nb == 1 && b != c) continue;
      const int cb = nb == 1 ? 0 : c * nc + b;
      if (L->has[0]) s0 += D[L->off[0] + cb] * u[b];
      if (L->has[1])
        for (int m = 0; m < dim; m++) s0 += D[L->off[1] + cb * dim + m] * ref[b * dim + m];
      if (L->has[2])
        for (int l = 0; l < dim; l++) s1[l] += D[L->off[2] + cb * dim + l] * u[b];
      if (L->has[3])
        for (int l = 0; l < dim; l++)
          for (int m = 0; m < dim; m++) s1[l] += D[mf_phys_d3(L, cb, l, m)] * ref[b * dim + m];
    }
    r0[c] = s0;
    for (int l = 0; l < dim; l++) r1[c * dim + l] = s1[l];
  }
}

/** Facet f (the one opposite vertex f) of the simplex of vertices X[0..dim] (3 coordinates each): its
 *  outward unit normal nrm[dim] (pointing away from vertex f) and, returned, the length of the normal to its
 *  edges (the facet's measure times (dim - 1)!). The host's facet terms and the device's (simplex_phys_jit.cuh)
 *  both take it from here. */
MF_HD static inline double mf_phys_facet_normal(int dim, const double (*X)[3], int f, double *nrm)
{
  int a[3] = {0, 0, 0};
  for (int v = 0, m = 0; v <= dim; v++)
    if (v != f) a[m++] = v;
  double t[2][3] = {{0, 0, 0}, {0, 0, 0}}, n[3] = {0, 0, 0};
  for (int j = 0; j < dim - 1; j++)
    for (int k = 0; k < dim; k++) t[j][k] = X[a[j + 1]][k] - X[a[0]][k];
  if (dim == 2) n[0] = t[0][1], n[1] = -t[0][0];
  else {
    n[0] = t[0][1] * t[1][2] - t[0][2] * t[1][1];
    n[1] = t[0][2] * t[1][0] - t[0][0] * t[1][2];
    n[2] = t[0][0] * t[1][1] - t[0][1] * t[1][0];
  }
  const double area = sqrt(n[0] * n[0] + n[1] * n[1] + n[2] * n[2]);
  double in = 0.0; /* towards the opposite vertex: the normal points the other way */
  for (int k = 0; k < dim; k++) in += n[k] * (X[f][k] - X[a[0]][k]);
  const double sgn = in > 0.0 ? -1.0 : 1.0;
  for (int k = 0; k < dim; k++) nrm[k] = sgn * n[k] / area;
  return area;
}

#ifdef __cplusplus
}
#endif
#endif
