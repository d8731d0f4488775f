/* diffusion_physics.c -- the physics of example-diffusion, read at run time (mf_physics_set_source_file)
 * and compiled by the system C compiler (cpu backend) or NVRTC (cuda backend): anisotropic diffusion
 * -div(K grad u) = f on the unit square, K = [[k0, k1], [k1, k2]] (the constants), with f made for the
 * exact solution u = sin(pi x) sin(pi y). */
#include <math.h>

/* f = -div(K grad u) for u = sin(pi x) sin(pi y) */
static double source(const double *x, const double *k)
{
  const double s = sin(M_PI * x[0]) * sin(M_PI * x[1]), c = cos(M_PI * x[0]) * cos(M_PI * x[1]);
  return M_PI * M_PI * ((k[0] + k[2]) * s - 2.0 * k[1] * c);
}

/* the residual: f0 = -f against v, f1 = K grad u against grad v */
void residual0(int dim, int nc, const double *u, const double *du, const double *x, const double *k, double *f0)
{
  f0[0] = -source(x, k);
}
void flux(int dim, int nc, const double *u, const double *du, const double *x, const double *k, double *f1)
{
  f1[0] = k[0] * du[0] + k[1] * du[1];
  f1[1] = k[1] * du[0] + k[2] * du[1];
}
/* the bilinear form: d f1 / d grad u = K */
void conductivity(int dim, int nc, const double *u, const double *du, const double *x, const double *k, double *g3)
{
  g3[0] = k[0];
  g3[1] = k[1];
  g3[2] = k[1];
  g3[3] = k[2];
}
