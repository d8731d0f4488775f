/* mf_gallery.h -- the pointwise physics, written once: what an operator does at one quadrature point,
 * for the CPU kernels (C) and the CUDA kernels (C++), in double and float. The geometry that feeds
 * it (the stored data from the Jacobian and the weight) is lib/physics/mf_pointwise.h.
 *
 * An operator is described by an entry of the gallery (mf_pw_gallery, indexed by mf_pw_kind): the
 * components of its field, which of u and grad u a point reads and which of v and grad v it writes
 * (the PETSc form: f0 pairs with the test function, f1 with its gradient), the quadrature data it
 * stores per point and the terms the coefficient c multiplies:
 *
 *   kind        field  reads/writes   stored per point                 c multiplies
 *   mass        1      u              m = c w |det J|                  the mass term
 *   Laplace     1      grad u         G = c w |det J| J^-1 J^-T        the gradient term
 *   Helmholtz   1      u, grad u      m = a w |det J|, G = b c ...     the gradient term only
 *   elasticity  dim    grad u         nothing (lambda, mu per operator; geometry per cell)
 *
 * Stored data: component 0 is m where the operator has a mass part, then the upper triangle of the
 * symmetric G row by row (2D: 00, 01, 11; 3D: 00, 01, 02, 11, 12, 22). In the tables and helpers
 * below "mass" and "grad" are the parts an operator has (MF_PW_VALUE and MF_PW_GRAD of its reads),
 * constants in the kernels (template parameters), so that the parts an operator lacks cost nothing.
 *
 * The pointwise step, each formula once (two forms of the scalar operators: stored data, where the
 * set-up evaluated physics and geometry into m and G (hexahedra); the physics form, where the kernel
 * makes the geometry per cell (simplices)), as a macro that the kernels expand in place, whatever
 * their scalar type, and a function made from it for double (suffix _d) and float (_f):
 *   MF_PW_APPLY        mf_pw_apply     stored data: v = m u, grad v = G grad u (reference gradients)
 *                      mf_pw_entry     stored data: the element-matrix integrand phi_i v + grad phi_i .
 *                                      grad v, (v, grad v) the point's action on phi_j
 *   MF_PW_G_TIMES                      stored data: G grad u with all loads of the point first (the
 *                                      column-wise element matrices)
 *   MF_PW_ENTRY_DIRS                   stored data: mf_pw_entry from the 1D factors direction by
 *                                      direction (the element matrices entry by entry)
 *   MF_PW_MASS_VALUE, MF_PW_G_FULL, MF_PW_G_ROW_SUM  stored data, the dimension known at run time
 *                                      only (the kernels over the cells with hanging nodes)
 *   MF_PW_DIAG_TERM    mf_pw_diag_term stored data: a stored component's derivative directions and its
 *                                      factor in the sum-factorised diagonal
 *   MF_PW_SCALAR       mf_pw_scalar    physics form: f0 = alpha u, f1 = beta grad u (alpha = a c w |det J|,
 *                                      without c for Helmholtz; beta = b c w |det J|)
 *   MF_PW_SCALAR_ENTRY mf_pw_scalar_entry  alpha phi_i phi_j + beta grad phi_i . grad phi_j
 *   MF_PW_STRESS       mf_pw_stress    elasticity: sigma = w (lambda tr(eps) I + 2 mu eps)
 *   MF_PW_STRESS_DIAG  mf_pw_stress_diag  sigma(phi e_c) : grad(phi e_c) / w = lambda g_c^2 + mu (|g|^2 + g_c^2) */
#ifndef MF_GALLERY_H
#define MF_GALLERY_H

#include <stddef.h>

#include "base/mf_common.h"

/* ------------------------------------------------------------------ the description */

/** The gallery's operators; the hex kernels' operator index (0, 1, 2) is this. */
typedef enum { MF_PW_MASS = 0, MF_PW_LAPLACE = 1, MF_PW_HELMHOLTZ = 2, MF_PW_ELASTICITY = 3, MF_PW_NKINDS } mf_pw_kind;

/** What a point reads of the trial function and writes to the test function; for stored data, which
 *  parts are stored (MF_PW_VALUE: m, one component; MF_PW_GRAD: the upper triangle of G); for the
 *  coefficient, the terms it multiplies. */
enum { MF_PW_VALUE = 1, MF_PW_GRAD = 2 };

typedef struct {
  const char *name;
  int ncomp;  /* components of the field; 0: as many as the dimension (a vector field) */
  int reads;  /* MF_PW_VALUE | MF_PW_GRAD: u, grad u */
  int writes; /* MF_PW_VALUE | MF_PW_GRAD: v, grad v */
  int stores; /* MF_PW_VALUE | MF_PW_GRAD: m, G; 0: nothing stored per point */
  int coef;   /* the terms that the coefficient c multiplies */
} mf_pw_desc;

/* a table of constants in C; constant expressions in C++, so that the kernels' template parameters
 * read it at compile time */
#ifdef __cplusplus
#define MF_PW_CONSTEXPR constexpr
#else
#define MF_PW_CONSTEXPR
#endif

static MF_PW_CONSTEXPR const mf_pw_desc mf_pw_gallery[MF_PW_NKINDS] = {
    {"mass", 1, MF_PW_VALUE, MF_PW_VALUE, MF_PW_VALUE, MF_PW_VALUE},
    {"Laplace", 1, MF_PW_GRAD, MF_PW_GRAD, MF_PW_GRAD, MF_PW_GRAD},
    {"Helmholtz", 1, MF_PW_VALUE | MF_PW_GRAD, MF_PW_VALUE | MF_PW_GRAD, MF_PW_VALUE | MF_PW_GRAD, MF_PW_GRAD},
    {"elasticity", 0, MF_PW_GRAD, MF_PW_GRAD, 0, 0},
};

/** Stored components per point at most: m and the 6 entries of G in 3D. */
#define MF_PW_MAX_STORED 7

/** Whether operator `kind` has the part `what` (MF_PW_VALUE: a mass part, MF_PW_GRAD: a gradient part). */
MF_HD static inline MF_PW_CONSTEXPR int mf_pw_has(int kind, int what) { return (mf_pw_gallery[kind].reads & what) != 0; }

/** Components of the field of `kind` in dimension dim. */
MF_HD static inline MF_PW_CONSTEXPR int mf_pw_field_ncomp(int kind, int dim)
{
  return mf_pw_gallery[kind].ncomp ? mf_pw_gallery[kind].ncomp : dim;
}

/** Stored components per point for the stored parts `stores` (MF_PW_VALUE | MF_PW_GRAD) in dimension dim. */
MF_HD static inline MF_PW_CONSTEXPR int mf_pw_nstored_parts(int stores, int dim)
{
  return ((stores & MF_PW_VALUE) ? 1 : 0) + ((stores & MF_PW_GRAD) ? dim * (dim + 1) / 2 : 0);
}

/** Stored components per point of `kind` in dimension dim. */
MF_HD static inline MF_PW_CONSTEXPR int mf_pw_nstored(int kind, int dim)
{
  return mf_pw_nstored_parts(mf_pw_gallery[kind].stores, dim);
}

/* ------------------------------------------------------------------ the pointwise functions
 * Each formula is written once, as a statement (or expression) macro on the caller's arrays: the
 * kernels expand it in place, so that their small arrays stay in registers exactly as if the formula
 * were written there (an address passed to a function changes what the compiler makes of them). The
 * C functions below (suffix _d for double, _f for float) are made from the same macros. */

#ifdef __CUDA_ARCH__
#define MF_PW_UNROLL _Pragma("unroll")
#else
#define MF_PW_UNROLL
#endif

/** Stored data: v = m u (mass part), dv = G du (gradient part; du, dv: dim reference derivatives) at
 *  point q of the stored components, component c at qv[c * s + q] (m first where there is a mass part,
 *  then G's upper triangle row by row); v and dv are written only for the parts present. T: the scalar
 *  type; v an lvalue. The two parts are also macros of their own, for the kernels that compute them at
 *  different places (the point design: m u_q before the derivatives of u_q). */
#define MF_PW_APPLY(T, dim, mass, grad, qv, s, q, u, du, v, dv)                                                    \
  do {                                                                                                           \
    MF_PW_APPLY_MASS(mass, qv, q, u, v);                                                                         \
    MF_PW_APPLY_GRAD(T, dim, mass, grad, qv, s, q, du, dv);                                                      \
  } while (0)
#define MF_PW_APPLY_MASS(mass, qv, q, u, v)                                                                        \
  do {                                                                                                           \
    if (mass) (v) = (qv)[q] * (u);                                                                               \
  } while (0)
#define MF_PW_APPLY_GRAD(T, dim, mass, grad, qv, s, q, du, dv)                                                     \
  do {                                                                                                           \
    if (grad) {                                                                                                  \
      (dv)[0] = MF_PW_GRAD_ROW(dim, mass, qv, s, q, du, 0);                                                      \
      (dv)[1] = MF_PW_GRAD_ROW(dim, mass, qv, s, q, du, 1);                                                      \
      if ((dim) == 3) (dv)[2] = MF_PW_GRAD_ROW(dim, mass, qv, s, q, du, 2);                                      \
    }                                                                                                            \
  } while (0)
/** The same gradient part with every load of the point issued before its arithmetic, on scalars (the
 *  column-wise element matrices, whose registers this shape keeps): dv0, dv1 (, dv2) = G du for
 *  du = (du0, du1, du2), from gq, the gradient part's first component (MF_PW_GRAD_BASE, hoisted out of
 *  the caller's point loop); the same sums, in the same order, as MF_PW_GRAD_ROW. dv*: lvalues. */
#define MF_PW_GRAD_BASE(mass, qv, s) ((qv) + ((mass) ? (s) : 0))
#define MF_PW_G_TIMES(dim, gq, s, q, du0, du1, du2, dv0, dv1, dv2)                                                 \
  do {                                                                                                           \
    if ((dim) == 2) {                                                                                            \
      const double g00_ = (gq)[q], g01_ = (gq)[(s) + (q)], g11_ = (gq)[2 * (s) + (q)];                           \
      (dv0) = g00_ * (du0) + g01_ * (du1);                                                                       \
      (dv1) = g01_ * (du0) + g11_ * (du1);                                                                       \
    } else {                                                                                                     \
      const double g00_ = (gq)[q], g01_ = (gq)[(s) + (q)], g02_ = (gq)[2 * (s) + (q)], g11_ = (gq)[3 * (s) + (q)], \
                   g12_ = (gq)[4 * (s) + (q)], g22_ = (gq)[5 * (s) + (q)];                                        \
      (dv0) = g00_ * (du0) + g01_ * (du1) + g02_ * (du2);                                                        \
      (dv1) = g01_ * (du0) + g11_ * (du1) + g12_ * (du2);                                                        \
      (dv2) = g02_ * (du0) + g12_ * (du1) + g22_ * (du2);                                                        \
    }                                                                                                            \
  } while (0)
/** Entry (i, j) of a tensor-product cell at point q with the factors of phi_i, phi_j and their
 *  derivatives direction by direction (bi[d] = B, gi[d] = B' of phi_i along d; 1 beyond dim; likewise
 *  bj, gj): e = m phi_i phi_j + sum_{k <= l} G_kl (d_k phi_i d_l phi_j + d_l phi_i d_k phi_j) / (1 + [k == l]),
 *  the stored upper triangle of the symmetric G counting twice off the diagonal; mathematically
 *  m phi_i phi_j + grad phi_i . G grad phi_j (mf_pw_entry), in the product order of the element matrices'
 *  kernels (lib/assembled/mf_element.h). gq: MF_PW_GRAD_BASE. e: an lvalue. */
#define MF_PW_ENTRY_DIRS(dim, mass, grad, qv, gq, s, q, bi, gi, bj, gj, e)                                          \
  do {                                                                                                           \
    (e) = 0.0;                                                                                                   \
    if (mass) (e) = (qv)[q] * ((bi)[0] * (bj)[0]) * ((bi)[1] * (bj)[1]) * ((bi)[2] * (bj)[2]);                   \
    if (grad) {                                                                                                  \
      int c_ = 0;                                                                                                \
      for (int k_ = 0; k_ < 3; k_++)                                                                             \
        for (int l_ = k_; l_ < 3; l_++) {                                                                        \
          if (l_ >= (dim)) continue;                                                                             \
          double t1_ = 1.0, t2_ = 1.0;                                                                           \
          for (int d_ = 0; d_ < 3; d_++) {                                                                       \
            t1_ *= (d_ == k_ ? (gi)[d_] : (bi)[d_]) * (d_ == l_ ? (gj)[d_] : (bj)[d_]);                          \
            t2_ *= (d_ == l_ ? (gi)[d_] : (bi)[d_]) * (d_ == k_ ? (gj)[d_] : (bj)[d_]);                          \
          }                                                                                                      \
          (e) += (gq)[(size_t)c_ * (s) + (q)] * (k_ == l_ ? t1_ : t1_ + t2_);                                    \
          c_++;                                                                                                  \
        }                                                                                                        \
    }                                                                                                            \
  } while (0)
/** The same step for a dimension known at run time only (the generic kernels over the cells with
 *  hanging nodes): MF_PW_MASS_VALUE is m u as an expression (0 without a mass part); MF_PW_G_FULL
 *  unpacks G's upper triangle at gq (stride s; MF_PW_GRAD_BASE) into the symmetric 3 x 3 array Gm,
 *  and MF_PW_G_ROW_SUM is row k of G du summed in the order of l. */
#define MF_PW_MASS_VALUE(mass, qv, q, u) ((mass) ? (qv)[q] * (u) : 0.0)
#define MF_PW_G_FULL(dim, gq, s, Gm)                                                                               \
  do {                                                                                                           \
    for (int k_ = 0, c_ = 0; k_ < (dim); k_++)                                                                   \
      for (int l_ = k_; l_ < (dim); l_++, c_++) (Gm)[k_][l_] = (Gm)[l_][k_] = (gq)[c_ * (s)];                    \
  } while (0)
#define MF_PW_G_ROW_SUM(dim, Gm, k, du, out)                                                                       \
  do {                                                                                                           \
    (out) = 0.0;                                                                                                 \
    for (int l_ = 0; l_ < (dim); l_++) (out) += (Gm)[k][l_] * (du)[l_];                                          \
  } while (0)
/** Row k of G du (an expression; k < dim, a constant where the kernels use it). */
#define MF_PW_GRAD_ROW(dim, mass, qv, s, q, du, k)                                                                 \
  ((dim) == 2 ? MF_PW_G(dim, mass, qv, s, q, k, 0) * (du)[0] + MF_PW_G(dim, mass, qv, s, q, k, 1) * (du)[1]      \
              : MF_PW_G(dim, mass, qv, s, q, k, 0) * (du)[0] + MF_PW_G(dim, mass, qv, s, q, k, 1) * (du)[1] +     \
                    MF_PW_G(dim, mass, qv, s, q, k, 2) * (du)[2])
/** G_kl at point q: the upper triangle's entry (min(k, l), max(k, l)), after m where there is a mass part. */
#define MF_PW_G(dim, mass, qv, s, q, k, l) (((qv) + ((mass) ? (s) : 0))[MF_PW_G_INDEX(dim, k, l) * (s) + (q)])
#define MF_PW_G_INDEX(dim, k, l)                                                                                   \
  ((k) <= (l) ? (k) * (dim) - (k) * ((k) - 1) / 2 + (l) - (k) : (l) * (dim) - (l) * ((l) - 1) / 2 + (k) - (l))

/** Stored data: stored component comp of an operator with the parts (mass, grad): the directions k, l
 *  of the two derivatives it pairs (-1, -1: the mass term m) and its factor in the diagonal, where each
 *  term is sum_q comp(q) d_k phi_i(q) d_l phi_i(q): 2 off the diagonal of G (its upper triangle stands
 *  for G_kl and G_lk), else 1. k, l, factor: lvalues. */
#define MF_PW_DIAG_TERM(dim, mass, comp, k, l, factor)                                                             \
  do {                                                                                                           \
    (k) = -1, (l) = -1;                                                                                          \
    if (!((mass) && (comp) == 0)) {                                                                              \
      int mf_t_ = (comp) - ((mass) ? 1 : 0), mf_c_ = 0;                                                          \
      for (int mf_a_ = 0; mf_a_ < (dim); mf_a_++)                                                                \
        for (int mf_b_ = mf_a_; mf_b_ < (dim); mf_b_++, mf_c_++)                                                 \
          if (mf_c_ == mf_t_) (k) = mf_a_, (l) = mf_b_;                                                          \
    }                                                                                                            \
    (factor) = (k) != (l) ? 2.0 : 1.0;                                                                           \
  } while (0)

/** Physics form of the scalar operators: f0 = alpha u, f1 = beta du (du, f1: dim values); f0 an lvalue. */
#define MF_PW_SCALAR(dim, alpha, beta, u, du, f0, f1)                                                              \
  do {                                                                                                           \
    (f0) = (alpha) * (u);                                                                                        \
    MF_PW_UNROLL                                                                                                 \
    for (int mf_k_ = 0; mf_k_ < (dim); mf_k_++) (f1)[mf_k_] = (beta) * (du)[mf_k_];                             \
  } while (0)

/** Physics form: the element-matrix integrand alpha phi_i phi_j + beta gg, gg = grad phi_i . grad phi_j. */
#define MF_PW_SCALAR_ENTRY(alpha, beta, phi_i, phi_j, gg) ((alpha) * (phi_i) * (phi_j) + (beta) * (gg))

/** Elasticity: sig[c][k] = w (lambda tr(gu) delta_ck + mu (gu[c][k] + gu[k][c])) = w (lambda tr(eps) I +
 *  2 mu eps) from the displacement gradient gu[c][k] = d u_c / d x_k (dim x dim, two-index arrays);
 *  T: the scalar type. */
#define MF_PW_STRESS(T, dim, lambda, mu, w, gu, sig)                                                               \
  do {                                                                                                           \
    T mf_tr_ = 0;                                                                                                \
    MF_PW_UNROLL                                                                                                 \
    for (int mf_c_ = 0; mf_c_ < (dim); mf_c_++) mf_tr_ += (gu)[mf_c_][mf_c_];                                   \
    MF_PW_UNROLL                                                                                                 \
    for (int mf_c_ = 0; mf_c_ < (dim); mf_c_++)                                                                  \
      MF_PW_UNROLL                                                                                               \
      for (int mf_k_ = 0; mf_k_ < (dim); mf_k_++)                                                                \
        (sig)[mf_c_][mf_k_] = (w) * ((mu) * ((gu)[mf_c_][mf_k_] + (gu)[mf_k_][mf_c_]) +                          \
                                     (mf_c_ == mf_k_ ? (lambda) * mf_tr_ : (T)0));                               \
  } while (0)

/** Elasticity: the diagonal entry of component c of a basis function with physical gradient g, per unit
 *  weight: sigma(phi e_c) : grad(phi e_c) = lambda g_c^2 + mu (|g|^2 + g_c^2); gc = g_c, gg = |g|^2. */
#define MF_PW_STRESS_DIAG(lambda, mu, gc, gg) ((lambda) * (gc) * (gc) + (mu) * ((gg) + (gc) * (gc)))

/** The same as functions, for double (_d) and float (_f), from the macros above. */
#define MF_PW_DEFINE(T, SUF)                                                                                       \
  MF_HD static inline void mf_pw_apply##SUF(int dim, int mass, int grad, const T *qv, size_t stride, T u,        \
                                            const T *du, T *v, T *dv)                                         \
  {                                                                                                           \
    MF_PW_APPLY(T, dim, mass, grad, qv, stride, 0, u, du, *v, dv);                                           \
  }                                                                                                           \
  /** Stored data: the element-matrix integrand of (i, j) at a point, phi_i v + dphi_i . dv with (v, dv)      \
   *  the point's action on phi_j (MF_PW_APPLY). */                                                           \
  MF_HD static inline T mf_pw_entry##SUF(int dim, int mass, int grad, const T *qv, size_t stride, T phi_i,       \
                                         const T *dphi_i, T phi_j, const T *dphi_j)                           \
  {                                                                                                           \
    T v = 0, dv[3] = {0, 0, 0}, e = 0;                                                                        \
    MF_PW_APPLY(T, dim, mass, grad, qv, stride, 0, phi_j, dphi_j, v, dv);                                    \
    if (mass) e = phi_i * v;                                                                                  \
    if (grad) {                                                                                               \
      e += dphi_i[0] * dv[0];                                                                                 \
      e += dphi_i[1] * dv[1];                                                                                 \
      if (dim == 3) e += dphi_i[2] * dv[2];                                                                   \
    }                                                                                                         \
    return e;                                                                                                 \
  }                                                                                                           \
  MF_HD static inline void mf_pw_scalar##SUF(int dim, T alpha, T beta, T u, const T *du, T *f0, T *f1)         \
  {                                                                                                           \
    MF_PW_SCALAR(dim, alpha, beta, u, du, *f0, f1);                                                           \
  }                                                                                                           \
  MF_HD static inline T mf_pw_scalar_entry##SUF(T alpha, T beta, T phi_i, T phi_j, T gg)                       \
  {                                                                                                           \
    return MF_PW_SCALAR_ENTRY(alpha, beta, phi_i, phi_j, gg);                                                 \
  }                                                                                                           \
  MF_HD static inline void mf_pw_stress##SUF(int dim, T lambda, T mu, T w, const T gu[3][3], T sig[3][3])       \
  {                                                                                                           \
    MF_PW_STRESS(T, dim, lambda, mu, w, gu, sig);                                                             \
  }                                                                                                           \
  MF_HD static inline T mf_pw_stress_diag##SUF(T lambda, T mu, T gc, T gg)                                    \
  {                                                                                                           \
    return MF_PW_STRESS_DIAG(lambda, mu, gc, gg);                                                             \
  }

MF_PW_DEFINE(double, _d)
MF_PW_DEFINE(float, _f)

/** MF_PW_DIAG_TERM as a function: returns the factor. */
MF_HD static inline double mf_pw_diag_term(int dim, int mass, int comp, int *k, int *l)
{
  int kk, ll;
  double factor;
  MF_PW_DIAG_TERM(dim, mass, comp, kk, ll, factor);
  *k = kk;
  *l = ll;
  return factor;
}

#endif
