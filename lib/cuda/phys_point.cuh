// phys_point.cuh -- what the run-time compiled kernels of users' physics do at one quadrature point, for
// every cell family (physics_jit.cuh: hexahedra, simplex_phys_jit.cuh: simplices). Compiled by NVRTC
// only; the including text defines MF_DIM, MF_NC, MF_HAS0..MF_HAS3, MF_HASF0, MF_HASF1 and mfree_g,
// mfree_f (the glue that calls the user's functions) and includes physics/mf_physics.h.
#ifndef MF_PHYS_POINT_CUH
#define MF_PHYS_POINT_CUH

namespace mfp {

// the g-functions at x into G0..G3 (zeroed first), at the state us, dus (physical gradient); whether all their
// values are finite
__device__ inline bool eval_g_at(const double *x, const double *k, const double *us, const double *dus, double *G0,
                                 double *G1, double *G2, double *G3)
{
  double *G[4] = {G0, G1, G2, G3};
  const int has[4] = {MF_HAS0, MF_HAS1, MF_HAS2, MF_HAS3};
  bool finite = true;
  for (int t = 0; t < 4; t++) {
    if (!has[t]) continue;
    const int n = mf_phys_gsize(t, MF_DIM, MF_NC);
    for (int i = 0; i < n; i++) G[t][i] = 0.0;
    mfree_g(t, MF_DIM, MF_NC, us, dus, x, k, G[t]);
    for (int i = 0; i < n; i++) finite = finite && MF_FINITE(G[t][i]);
  }
  return finite;
}

// the same at u = 0, du = 0 (the operator as made)
__device__ inline bool eval_g(const double *x, const double *k, double *G0, double *G1, double *G2, double *G3)
{
  const double u0[MF_NC + 1] = {0.0}, du0[MF_NC * MF_DIM + 1] = {0.0};
  return eval_g_at(x, k, u0, du0, G0, G1, G2, G3);
}

// physical du[c DIM + e] = sum_m ref[c DIM + m] Ji[3 m + e]
__device__ inline void physical_gradient(const double *ref, const double *Ji, double *du)
{
  for (int c = 0; c < MF_NC; c++)
    for (int e = 0; e < MF_DIM; e++) {
      double s = 0.0;
      for (int m = 0; m < MF_DIM; m++) s += ref[c * MF_DIM + m] * Ji[3 * m + e];
      du[c * MF_DIM + e] = s;
    }
}

// r0 = W f0, r1 = W J^-1 f1 (the stored form of mf_phys_store_point)
__device__ inline void reference_form(const double *f0, const double *f1, const double *Ji, double W, double *r0,
                                      double *r1)
{
  for (int c = 0; c < MF_NC; c++) {
    r0[c] = W * f0[c];
    for (int l = 0; l < MF_DIM; l++) {
      double s = 0.0;
      for (int d = 0; d < MF_DIM; d++) s += Ji[3 * l + d] * f1[c * MF_DIM + d];
      r1[c * MF_DIM + l] = W * s;
    }
  }
}

// The residual's point: r0 = W f0(u, du, x), r1 = W J^-1 f1 (Ji[3 l + e]); whether f0 and f1 gave finite values.
__device__ inline bool residual_point(const double *x, const double *Ji, double W, const double *k, const double *u,
                                      const double *ref, double *r0, double *r1)
{
  double du[MF_NC * MF_DIM], f0[MF_NC], f1[MF_NC * MF_DIM];
  physical_gradient(ref, Ji, du);
  for (int i = 0; i < MF_NC; i++) f0[i] = 0.0;
  for (int i = 0; i < MF_NC * MF_DIM; i++) f1[i] = 0.0;
  if (MF_HASF0) mfree_f(0, MF_DIM, MF_NC, u, du, x, k, f0);
  if (MF_HASF1) mfree_f(1, MF_DIM, MF_NC, u, du, x, k, f1);
  bool finite = true;
  for (int i = 0; i < MF_NC; i++) finite = finite && MF_FINITE(f0[i]);
  for (int i = 0; i < MF_NC * MF_DIM; i++) finite = finite && MF_FINITE(f1[i]);
  reference_form(f0, f1, Ji, W, r0, r1);
  return finite;
}

// The point's action with the g-functions evaluated here at the state u0, du0 (physical gradient):
// f0 = G0 u + G1 du, f1 = G2 u + G3 du (physical du = ref J^-1), then r0 = W f0, r1 = W J^-1 f1 (the stored
// form of mf_phys_store_point).
__device__ inline void fused_point_at(const double *Ji, double W, const double *x, const double *k, const double *u0,
                                      const double *du0, const double *u, const double *ref, double *r0, double *r1)
{
  double du[MF_NC * MF_DIM], f0[MF_NC], f1[MF_NC * MF_DIM];
  physical_gradient(ref, Ji, du);
  for (int i = 0; i < MF_NC; i++) f0[i] = 0.0;
  for (int i = 0; i < MF_NC * MF_DIM; i++) f1[i] = 0.0;
#if MF_HAS0
  {
    double G[MF_NC * MF_NC];
    for (int i = 0; i < MF_NC * MF_NC; i++) G[i] = 0.0;
    mfree_g(0, MF_DIM, MF_NC, u0, du0, x, k, G);
    for (int c = 0; c < MF_NC; c++)
      for (int b = 0; b < MF_NC; b++) f0[c] += G[c * MF_NC + b] * u[b];
  }
#endif
#if MF_HAS1
  {
    double G[MF_NC * MF_NC * MF_DIM];
    for (int i = 0; i < MF_NC * MF_NC * MF_DIM; i++) G[i] = 0.0;
    mfree_g(1, MF_DIM, MF_NC, u0, du0, x, k, G);
    for (int c = 0; c < MF_NC; c++)
      for (int b = 0; b < MF_NC; b++)
        for (int e = 0; e < MF_DIM; e++) f0[c] += G[(c * MF_NC + b) * MF_DIM + e] * du[b * MF_DIM + e];
  }
#endif
#if MF_HAS2
  {
    double G[MF_NC * MF_NC * MF_DIM];
    for (int i = 0; i < MF_NC * MF_NC * MF_DIM; i++) G[i] = 0.0;
    mfree_g(2, MF_DIM, MF_NC, u0, du0, x, k, G);
    for (int c = 0; c < MF_NC; c++)
      for (int b = 0; b < MF_NC; b++)
        for (int d = 0; d < MF_DIM; d++) f1[c * MF_DIM + d] += G[(c * MF_NC + b) * MF_DIM + d] * u[b];
  }
#endif
#if MF_HAS3
  {
    double G[MF_NC * MF_NC * MF_DIM * MF_DIM];
    for (int i = 0; i < MF_NC * MF_NC * MF_DIM * MF_DIM; i++) G[i] = 0.0;
    mfree_g(3, MF_DIM, MF_NC, u0, du0, x, k, G);
    for (int c = 0; c < MF_NC; c++)
      for (int b = 0; b < MF_NC; b++)
        for (int d = 0; d < MF_DIM; d++)
          for (int e = 0; e < MF_DIM; e++)
            f1[c * MF_DIM + d] += G[((c * MF_NC + b) * MF_DIM + d) * MF_DIM + e] * du[b * MF_DIM + e];
  }
#endif
  reference_form(f0, f1, Ji, W, r0, r1);
}

// the same at u = 0, du = 0 (the operator as made)
__device__ inline void fused_point(const double *Ji, double W, const double *x, const double *k, const double *u,
                                   const double *ref, double *r0, double *r1)
{
  const double u0[MF_NC + 1] = {0.0}, du0[MF_NC * MF_DIM + 1] = {0.0};
  fused_point_at(Ji, W, x, k, u0, du0, u, ref, r0, r1);
}

} // namespace mfp

#endif
