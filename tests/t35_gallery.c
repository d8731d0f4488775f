/* t35_gallery -- the pointwise physics of the gallery (lib/physics/mf_gallery.h) against closed forms
 * written here from the formulas, at random points, to 1e-14 relative (float: 1e-6):
 *   description  the entries' fields (components, what they read, write, store, where c goes), and the
 *                stored components per point against mf_qf_ncomp;
 *   mass, Laplace, Helmholtz with a coefficient  the stored data the set-up makes from a random
 *                Jacobian, weight, a, b and c (mf_qf_geometry, mf_qf_scale), then mf_pw_apply (double
 *                and float): v = m u, grad v = G grad u with m = a c w |det J| (mass; a w |det J| for
 *                Helmholtz), G = b c w |det J| J^-1 J^-T, J^-1 by Gauss-Jordan elimination here;
 *                mf_pw_entry (m phi_i phi_j + grad phi_i . G grad phi_j) and the diagonal summed over
 *                mf_pw_diag_term's terms; the physics form mf_pw_scalar, mf_pw_scalar_entry;
 *   elasticity   mf_pw_stress for a random displacement gradient, lambda, mu and weight against
 *                w (lambda tr(eps) I + 2 mu eps), and mf_pw_stress_diag against sigma(phi e_c) : grad(phi e_c).
 * Usage: t35_gallery [cpu|cuda]: cuda runs the same gallery calls in a kernel (t35_gallery_cuda.cu)
 * and checks them against the same closed forms; 77 where no GPU is usable.                         */
#include "mf_test.h"
#include "t35_gallery.h"

#ifdef T35_CUDA
int t34_eval_cuda(const t34_case *in, t34_out *out, int n, char *msg, size_t len);
#endif

#define NCASES 200

static unsigned long long rng_state = 0x9e3779b97f4a7c15ULL;
static double rnd(double lo, double hi) /* splitmix64 */
{
  unsigned long long z = (rng_state += 0x9e3779b97f4a7c15ULL);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  z ^= z >> 31;
  return lo + (hi - lo) * (double)(z >> 11) / 9007199254740992.0;
}

/* |x - ref| against tol times scale (the sum of the absolute values of the terms of ref) */
static void near(double x, double ref, double scale, double tol, const char *what, int dim, int kind, int n)
{
  T_CHECK(fabs(x - ref) <= tol * scale, "%s (dim %d, kind %d, case %d): %.17g, closed form %.17g (%.3e relative)", what,
          dim, kind, n, x, ref, fabs(x - ref) / scale);
}

/* A^-1 (dim x dim in 3 x 3 slots) by Gauss-Jordan elimination with partial pivoting */
static void inverse(int dim, const double *A, double Ai[3][3])
{
  double M[3][6];
  for (int r = 0; r < dim; r++)
    for (int c = 0; c < 2 * dim; c++) M[r][c] = c < dim ? A[3 * r + c] : (c - dim == r ? 1.0 : 0.0);
  for (int c = 0; c < dim; c++) {
    int piv = c;
    for (int r = c + 1; r < dim; r++)
      if (fabs(M[r][c]) > fabs(M[piv][c])) piv = r;
    for (int k = 0; k < 2 * dim; k++) {
      const double t = M[c][k];
      M[c][k] = M[piv][k], M[piv][k] = t;
    }
    const double d = M[c][c];
    for (int k = 0; k < 2 * dim; k++) M[c][k] /= d;
    for (int r = 0; r < dim; r++)
      if (r != c) {
        const double f = M[r][c];
        for (int k = 0; k < 2 * dim; k++) M[r][k] -= f * M[c][k];
      }
  }
  for (int r = 0; r < dim; r++)
    for (int c = 0; c < dim; c++) Ai[r][c] = M[r][dim + c];
}

static double det(int dim, const double *J)
{
  if (dim == 2) return J[0] * J[4] - J[1] * J[3];
  /* the rule of Sarrus */
  return J[0] * J[4] * J[8] + J[1] * J[5] * J[6] + J[2] * J[3] * J[7] - J[2] * J[4] * J[6] - J[0] * J[5] * J[7] -
         J[1] * J[3] * J[8];
}

static void make_case(int dim, int kind, t34_case *in)
{
  memset(in, 0, sizeof *in);
  in->dim = dim;
  in->kind = kind;
  in->mass = mf_pw_has(kind, MF_PW_VALUE);
  in->grad = mf_pw_has(kind, MF_PW_GRAD);
  do { /* a Jacobian near a rotation-free identity, sometimes a reflection: |det J| well away from 0 */
    for (int k = 0; k < 3; k++)
      for (int l = 0; l < 3; l++) in->J[3 * k + l] = (k == l && k < dim ? 1.0 : 0.0) + (k < dim && l < dim ? rnd(-0.4, 0.4) : 0.0);
    if (rnd(0, 1) < 0.3)
      for (int l = 0; l < dim; l++) in->J[l] = -in->J[l];
  } while (fabs(det(dim, in->J)) < 0.3);
  in->w = rnd(0.1, 1.0);
  in->a = rnd(0.5, 2.0), in->b = rnd(0.5, 2.0), in->c = rnd(0.1, 10.0);
  in->u = rnd(-1, 1);
  for (int k = 0; k < dim; k++) in->du[k] = rnd(-1, 1);
  for (int i = 0; i < 2; i++) {
    in->phi[i] = rnd(-1, 1);
    for (int k = 0; k < dim; k++) in->dphi[i][k] = rnd(-1, 1);
  }
  in->lambda = rnd(0.1, 10.0), in->mu = rnd(0.1, 10.0);
  for (int c = 0; c < dim; c++)
    for (int k = 0; k < dim; k++) in->gu[c][k] = rnd(-1, 1);
}

/* The gallery's entries as the formulas say */
static void check_description(void)
{
  const char *names[MF_PW_NKINDS] = {"mass", "Laplace", "Helmholtz", "elasticity"};
  for (int k = 0; k < MF_PW_NKINDS; k++) T_CHECK(!strcmp(mf_pw_gallery[k].name, names[k]), "entry %d is %s", k, mf_pw_gallery[k].name);
  for (int dim = 2; dim <= 3; dim++) {
    const int ng = dim * (dim + 1) / 2;
    T_CHECK(mf_pw_field_ncomp(MF_PW_MASS, dim) == 1 && mf_pw_field_ncomp(MF_PW_LAPLACE, dim) == 1 &&
                mf_pw_field_ncomp(MF_PW_HELMHOLTZ, dim) == 1 && mf_pw_field_ncomp(MF_PW_ELASTICITY, dim) == dim,
            "field components in %dD", dim);
    T_CHECK(mf_pw_nstored(MF_PW_MASS, dim) == 1 && mf_pw_nstored(MF_PW_LAPLACE, dim) == ng &&
                mf_pw_nstored(MF_PW_HELMHOLTZ, dim) == 1 + ng && mf_pw_nstored(MF_PW_ELASTICITY, dim) == 0,
            "stored components in %dD", dim);
    for (int k = 0; k < 3; k++)
      T_CHECK(mf_pw_nstored(k, dim) == mf_qf_ncomp(dim, mf_pw_has(k, MF_PW_VALUE), mf_pw_has(k, MF_PW_GRAD)),
              "kind %d %dD: the gallery's stored components are not mf_qf_ncomp's", k, dim);
  }
  /* reads (u, grad u) and writes (v, grad v) */
  const int rw[MF_PW_NKINDS] = {MF_PW_VALUE, MF_PW_GRAD, MF_PW_VALUE | MF_PW_GRAD, MF_PW_GRAD};
  for (int k = 0; k < MF_PW_NKINDS; k++) {
    T_CHECK(mf_pw_gallery[k].reads == rw[k] && mf_pw_gallery[k].writes == rw[k], "kind %d: reads %d, writes %d", k,
            mf_pw_gallery[k].reads, mf_pw_gallery[k].writes);
    T_CHECK(mf_pw_has(k, MF_PW_VALUE) == !!(rw[k] & MF_PW_VALUE) && mf_pw_has(k, MF_PW_GRAD) == !!(rw[k] & MF_PW_GRAD),
            "kind %d: mf_pw_has", k);
  }
  /* the coefficient: on the mass term of the mass operator, the gradient term of Laplace and Helmholtz */
  T_CHECK(mf_pw_gallery[MF_PW_MASS].coef == MF_PW_VALUE && mf_pw_gallery[MF_PW_LAPLACE].coef == MF_PW_GRAD &&
              mf_pw_gallery[MF_PW_HELMHOLTZ].coef == MF_PW_GRAD && mf_pw_gallery[MF_PW_ELASTICITY].coef == 0,
          "where the coefficient goes");
  T_CHECK(mf_pw_gallery[MF_PW_ELASTICITY].stores == 0, "elasticity stores nothing per point");
}

/* The closed forms for one case, and the checks of out against them */
static void check_case(const t34_case *in, const t34_out *out, int n)
{
  const int dim = in->dim, kind = in->kind, mass = in->mass, grad = in->grad;
  const double tol = 1e-14, wd = in->w * fabs(det(dim, in->J));
  double Ji[3][3], G[3][3] = {{0}}, Ga[3][3] = {{0}}; /* G and its terms' absolute sums */
  inverse(dim, in->J, Ji);
  const double gs = in->b * in->c * wd, ms = in->a * (kind == MF_PW_MASS ? in->c : 1.0) * wd;
  for (int k = 0; k < dim; k++)
    for (int l = 0; l < dim; l++)
      for (int m = 0; m < dim; m++) {
        G[k][l] += gs * Ji[k][m] * Ji[l][m];
        Ga[k][l] += gs * fabs(Ji[k][m] * Ji[l][m]);
      }
  T_CHECK(out->nstored == mass + (grad ? dim * (dim + 1) / 2 : 0), "case %d: %d stored components", n, out->nstored);
  /* the stored data: m, then G's upper triangle row by row */
  int comp = 0;
  if (mass) near(out->qv[comp++], ms, ms, tol, "stored m", dim, kind, n);
  if (grad)
    for (int k = 0; k < dim; k++)
      for (int l = k; l < dim; l++) near(out->qv[comp++], G[k][l], Ga[k][l], tol, "stored G", dim, kind, n);
  /* apply: v = m u, dv = G du */
  if (mass) {
    near(out->v, ms * in->u, fabs(ms * in->u), tol, "v = m u", dim, kind, n);
    near(out->vf, ms * in->u, fabs(ms * in->u), 1e-6, "v = m u (float)", dim, kind, n);
  }
  if (grad)
    for (int k = 0; k < dim; k++) {
      double r = 0.0, s = 0.0;
      for (int l = 0; l < dim; l++) r += G[k][l] * in->du[l], s += Ga[k][l] * fabs(in->du[l]);
      near(out->dv[k], r, s, tol, "dv = G du", dim, kind, n);
      near(out->dvf[k], r, s, 1e-6, "dv = G du (float)", dim, kind, n);
    }
  /* the element-matrix integrand (i, j) and the diagonal (i, i) */
  for (int d = 0; d < 2; d++) {
    const int j = d ? 0 : 1; /* d = 0: entry (0, 1); d = 1: the diagonal (0, 0) */
    double r = mass ? ms * in->phi[0] * in->phi[j] : 0.0, s = fabs(r);
    if (grad)
      for (int k = 0; k < dim; k++)
        for (int l = 0; l < dim; l++) {
          r += in->dphi[0][k] * G[k][l] * in->dphi[j][l];
          s += fabs(in->dphi[0][k] * in->dphi[j][l]) * Ga[k][l];
        }
    near(d ? out->diag : out->entry, r, s, tol, d ? "diagonal from the terms" : "entry", dim, kind, n);
  }
  /* the physics form: alpha = a w, beta = b c w */
  const double al = in->a * in->w, be = in->b * in->c * in->w;
  near(out->f0, al * in->u, fabs(al * in->u), tol, "f0 = alpha u", dim, kind, n);
  double gg = 0.0, gga = 0.0;
  for (int k = 0; k < dim; k++) {
    near(out->f1[k], be * in->du[k], fabs(be * in->du[k]), tol, "f1 = beta du", dim, kind, n);
    gg += in->dphi[0][k] * in->dphi[1][k], gga += fabs(in->dphi[0][k] * in->dphi[1][k]);
  }
  near(out->sentry, al * in->phi[0] * in->phi[1] + be * gg, fabs(al * in->phi[0] * in->phi[1]) + be * gga, tol,
       "alpha phi_i phi_j + beta grad phi_i . grad phi_j", dim, kind, n);
  /* elasticity: sigma = w (lambda tr(eps) I + 2 mu eps), eps the symmetric part of gu */
  double eps[3][3], tr = 0.0, tra = 0.0;
  for (int c = 0; c < dim; c++)
    for (int k = 0; k < dim; k++) eps[c][k] = 0.5 * (in->gu[c][k] + in->gu[k][c]);
  for (int c = 0; c < dim; c++) tr += eps[c][c], tra += fabs(eps[c][c]);
  for (int c = 0; c < dim; c++)
    for (int k = 0; k < dim; k++) {
      const double r = in->w * ((c == k ? in->lambda * tr : 0.0) + 2.0 * in->mu * eps[c][k]);
      const double s = in->w * ((c == k ? in->lambda * tra : 0.0) + in->mu * (fabs(in->gu[c][k]) + fabs(in->gu[k][c])));
      near(out->sig[c][k], r, s, tol, "stress", dim, kind, n);
    }
  /* its diagonal: u = v = phi e_c with grad phi = g (dphi[0]): grad u has the row g at c only */
  const double *g = in->dphi[0];
  double g2 = 0.0;
  for (int k = 0; k < dim; k++) g2 += g[k] * g[k];
  for (int c = 0; c < dim; c++) {
    /* eps = (e_c g^T + g e_c^T) / 2, tr eps = g_c, sigma : grad v = lambda g_c^2 + 2 mu eps_ck g_k */
    double r = in->lambda * g[c] * g[c];
    for (int k = 0; k < dim; k++) r += 2.0 * in->mu * 0.5 * (g[k] + (k == c ? g[c] : 0.0)) * g[k];
    near(out->sdiag[c], r, in->lambda * g[c] * g[c] + in->mu * (g2 + g[c] * g[c]), tol, "stress diagonal", dim, kind, n);
  }
}

int main(int argc, char **argv)
{
  MPI_Init(&argc, &argv);
  const char *be = t_backend(argc, argv);
  check_description();
  const int n = 2 * 3 * NCASES;
  t34_case *in = calloc(n, sizeof *in);
  t34_out *out = calloc(n, sizeof *out);
  T_CHECK(in && out, "out of memory");
  if (!in || !out) return 1;
  int m = 0;
  for (int dim = 2; dim <= 3; dim++)
    for (int kind = 0; kind < 3; kind++)
      for (int k = 0; k < NCASES; k++) make_case(dim, kind, &in[m++]);
  if (!strcmp(be, "cuda")) {
#ifdef T35_CUDA
    char msg[256] = "";
    const int ierr = t34_eval_cuda(in, out, n, msg, sizeof msg);
    T_CHECK(!ierr, "the gallery on the device: %s", msg);
#endif
  } else {
    for (int k = 0; k < n; k++) t34_eval(&in[k], &out[k]);
  }
  for (int k = 0; k < n; k++) check_case(&in[k], &out[k], k % NCASES);
  free(in);
  free(out);
  return t_finish();
}
