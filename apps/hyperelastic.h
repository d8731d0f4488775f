/* hyperelastic.h -- the Neo-Hookean hyperelasticity of mfree-hyperelastic, shared with the tests.
 *
 * The displacement u minimises  Pi(u) = int psi(F) - int B . u - int_{Gamma_T} T . u,  F = I + grad u, with the
 * compressible Neo-Hookean energy  psi = mu/2 (I_c - 3) - mu ln J + lambda/2 (ln J)^2  (I_c = tr F^T F, J = det F;
 * in 2D plane strain, I_c - 2). Its Euler-Lagrange residual and Jacobian in the pointwise form of mfree:
 *   f0 = -B,  f1 = P = mu (F - F^-T) + lambda ln J F^-T  (the first Piola-Kirchhoff stress),
 *   g3[c][b][d][e] = dP_cd / dF_be = mu d_cb d_de + (mu - lambda ln J) Finv_ec Finv_db + lambda Finv_dc Finv_eb,
 *   on the traction faces f0 = -T.
 * Constants k: lambda, mu, B (3), T (3). Where J <= 0 the functions give values that are not finite (ln J), which
 * the library refuses (the line search then takes a shorter step).
 *
 * The problem of the FEniCS hyperelasticity demonstration (unit cube, E = 10, nu = 0.3, B = (0, -0.5, 0),
 * T = (0.1, 0, 0) on the faces y = 0, 1 and z = 0, 1; clamped at x = 0; at x = 1 the displacement
 *   u = s (0, y0 + (y - y0) cos t - (z - z0) sin t - y, z0 + (y - y0) sin t + (z - z0) cos t - z),
 * t = pi/3, y0 = z0 = 1/2, s = 1/2 (the demonstration's scale: half of the 60-degree twist's displacement)). */
#ifndef MFREE_HYPERELASTIC_H
#define MFREE_HYPERELASTIC_H

#include <math.h>

#include "mfree.h"

/* the physics as C source (valid C and C++: it runs on the host through the system C compiler and on the device
 * through NVRTC) */
static const char hyper_source[] =
    "#include <math.h>\n"
    "/* F = I + du (row c: component, column d: direction), its inverse and J = det F */\n"
    "static double nh_inverse(int dim, const double *du, double *F, double *Fi)\n"
    "{\n"
    "  for (int c = 0; c < dim; c++)\n"
    "    for (int d = 0; d < dim; d++) F[c * dim + d] = du[c * dim + d] + (c == d ? 1.0 : 0.0);\n"
    "  double J;\n"
    "  if (dim == 2) {\n"
    "    J = F[0] * F[3] - F[1] * F[2];\n"
    "    Fi[0] = F[3] / J, Fi[1] = -F[1] / J, Fi[2] = -F[2] / J, Fi[3] = F[0] / J;\n"
    "  } else {\n"
    "    Fi[0] = F[4] * F[8] - F[5] * F[7], Fi[1] = F[2] * F[7] - F[1] * F[8], Fi[2] = F[1] * F[5] - F[2] * F[4];\n"
    "    Fi[3] = F[5] * F[6] - F[3] * F[8], Fi[4] = F[0] * F[8] - F[2] * F[6], Fi[5] = F[2] * F[3] - F[0] * F[5];\n"
    "    Fi[6] = F[3] * F[7] - F[4] * F[6], Fi[7] = F[1] * F[6] - F[0] * F[7], Fi[8] = F[0] * F[4] - F[1] * F[3];\n"
    "    J = F[0] * Fi[0] + F[1] * Fi[3] + F[2] * Fi[6];\n"
    "    for (int i = 0; i < 9; i++) Fi[i] /= J;\n"
    "  }\n"
    "  return J;\n"
    "}\n"
    "/* f0 = -B */\n"
    "void hyper_f0(int dim, int nc, const double *u, const double *du, const double *x, const double *k, double *f0)\n"
    "{\n"
    "  for (int c = 0; c < nc; c++) f0[c] = -k[2 + c];\n"
    "}\n"
    "/* f1 = P = mu (F - F^-T) + lambda ln J F^-T */\n"
    "void hyper_f1(int dim, int nc, const double *u, const double *du, const double *x, const double *k, double *f1)\n"
    "{\n"
    "  double F[9], Fi[9];\n"
    "  const double J = nh_inverse(dim, du, F, Fi), lnJ = log(J), lambda = k[0], mu = k[1];\n"
    "  for (int c = 0; c < dim; c++)\n"
    "    for (int d = 0; d < dim; d++) f1[c * dim + d] = mu * F[c * dim + d] + (lambda * lnJ - mu) * Fi[d * dim + c];\n"
    "}\n"
    "/* g3[((c nc + b) dim + d) dim + e] = dP_cd / dF_be */\n"
    "void hyper_g3(int dim, int nc, const double *u, const double *du, const double *x, const double *k, double *g3)\n"
    "{\n"
    "  double F[9], Fi[9];\n"
    "  const double J = nh_inverse(dim, du, F, Fi), lnJ = log(J), lambda = k[0], mu = k[1], a = mu - lambda * lnJ;\n"
    "  for (int c = 0; c < dim; c++)\n"
    "    for (int b = 0; b < dim; b++)\n"
    "      for (int d = 0; d < dim; d++)\n"
    "        for (int e = 0; e < dim; e++)\n"
    "          g3[((c * nc + b) * dim + d) * dim + e] = (c == b && d == e ? mu : 0.0) + a * Fi[e * dim + c] * Fi[d * dim + b] +\n"
    "                                                   lambda * Fi[d * dim + c] * Fi[e * dim + b];\n"
    "}\n"
    "/* the traction: f0 = -T on its faces */\n"
    "void hyper_traction(int dim, int nc, const double *u, const double *x, const double *n, const double *k, double *f0)\n"
    "{\n"
    "  for (int c = 0; c < nc; c++) f0[c] = -k[5 + c];\n"
    "}\n";

#define HYPER_FUNCTIONS "f0=hyper_f0 f1=hyper_f1 g3=hyper_g3"

/* The material and loads: Young's modulus E, Poisson's ratio nu, body force B, traction T (dim entries). */
typedef struct {
  double E, nu, B[3], T[3];
  double twist_scale, twist_angle; /* the displacement at x = 1: s times the rotation's by the angle (radians) */
} hyper_problem;

static inline hyper_problem hyper_demo(void)
{
  hyper_problem p = {10.0, 0.3, {0.0, -0.5, 0.0}, {0.1, 0.0, 0.0}, 0.5, M_PI / 3.0};
  return p;
}

/* The physics of problem p on dim-dimensional fields (traction on the tags 3..2 dim: the sides y = 0, 1, z = 0, 1 of
 * the box meshes); an error code on failure (the context's error says why; *ph NULL). */
static inline int hyper_physics(mf_context ctx, int dim, const hyper_problem *p, mf_physics *ph)
{
  const double lambda = p->E * p->nu / ((1.0 + p->nu) * (1.0 - 2.0 * p->nu)), mu = p->E / (2.0 * (1.0 + p->nu));
  const double k[8] = {lambda, mu, p->B[0], p->B[1], dim == 3 ? p->B[2] : 0.0, p->T[0], p->T[1], dim == 3 ? p->T[2] : 0.0};
  int ierr = mf_physics_create(ctx, dim, ph);
  if (!ierr) ierr = mf_physics_set_source(*ph, hyper_source, HYPER_FUNCTIONS);
  for (int tag = 3; !ierr && tag <= 2 * dim; tag++) ierr = mf_physics_set_boundary_source(*ph, tag, "f0=hyper_traction");
  if (!ierr) ierr = mf_physics_set_constants(*ph, 8, k);
  if (ierr) mf_physics_destroy(ph);
  return ierr;
}

/* s times the displacement of the rotation by t about the line y = z = 1/2 at x (in 2D plane strain: its y-component
 * in the plane z = 1/2, the side drawn towards y = 1/2) */
static inline void hyper_rotation(const double *x, int dim, double s, double t, double *value)
{
  const double y0 = 0.5, z0 = 0.5;
  for (int c = 0; c < dim; c++) value[c] = 0.0;
  if (dim == 2) {
    value[1] = s * (y0 + (x[1] - y0) * cos(t) - x[1]);
    return;
  }
  value[1] = s * (y0 + (x[1] - y0) * cos(t) - (x[2] - z0) * sin(t) - x[1]);
  value[2] = s * (z0 + (x[1] - y0) * sin(t) + (x[2] - z0) * cos(t) - x[2]);
}

/* The Dirichlet values at a point of x = 0 (zero) or x = 1 (the twist), scaled by the load fraction in user[0]
 * (user: double[3] = fraction, the problem's twist scale, its angle). */
static inline void hyper_twist(const double *x, int dim, double *value, void *user)
{
  const double *a = (const double *)user;
  hyper_rotation(x, dim, x[0] < 0.5 ? 0.0 : a[0] * a[1], a[2], value);
}

/* The smooth lifting of the Dirichlet values: x times the twist's displacement (0 at x = 0, the twist at x = 1; its
 * gradient of order 1 everywhere), scaled as hyper_twist (user: the same double[3]). An initial guess whose Jacobian
 * is positive definite: the Dirichlet values alone with 0 inside put a shear of order 1/h into the cells at x = 1,
 * where the Neo-Hookean tangent is indefinite on fine meshes (CG breaks down). */
static inline void hyper_lift(const double *x, int dim, double *value, void *user)
{
  const double *a = (const double *)user;
  hyper_rotation(x, dim, a[0] * a[1] * x[0], a[2], value);
}

#endif
