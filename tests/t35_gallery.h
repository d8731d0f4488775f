/* t35_gallery.h -- the evaluation side of t35_gallery: one random case of every pointwise function of
 * lib/physics/mf_gallery.h, compiled for the host (t35_gallery.c) and for the device
 * (t35_gallery_cuda.cu), so that both run the same calls; the closed forms they are checked against
 * are in t35_gallery.c, written from the formulas and sharing no code with the library. */
#ifndef T34_GALLERY_H
#define T34_GALLERY_H

#include "physics/mf_gallery.h"
#include "physics/mf_pointwise.h"

/* the inputs of one case: an operator of the gallery in dimension dim at one point */
typedef struct {
  int dim, kind;       /* kind: MF_PW_MASS, MF_PW_LAPLACE or MF_PW_HELMHOLTZ (stored data); every case: stress */
  int mass, grad;      /* its parts, from the gallery's description on the host (mf_pw_has) */
  double J[9], w;      /* the Jacobian (J[3k + l] = d x_k / d xi_l) and the weight of the point */
  double a, b, c;      /* the operator's weights and the coefficient at the point */
  double u, du[3];     /* the trial function: value, reference gradient */
  double phi[2], dphi[2][3]; /* two basis functions i, j: values, reference gradients */
  double lambda, mu, gu[3][3]; /* elasticity: Lame parameters, displacement gradient gu[c][k] */
} t34_case;

/* what the gallery gives for it */
typedef struct {
  int nstored;
  double qv[MF_PW_MAX_STORED]; /* the stored data: mf_qf_geometry, mf_qf_scale (the set-up) */
  double v, dv[3];             /* mf_pw_apply of (u, du) */
  float vf, dvf[3];            /* the same in float */
  double entry, diag;          /* mf_pw_entry (i, j); the diagonal (i, i) summed from mf_pw_diag_term */
  double f0, f1[3], sentry;    /* physics form: mf_pw_scalar (alpha = a w, beta = b c w), mf_pw_scalar_entry */
  double sig[3][3], sdiag[3];  /* mf_pw_stress of gu; mf_pw_stress_diag of dphi[0], each c */
} t34_out;

MF_HD static inline void t34_eval(const t34_case *in, t34_out *out)
{
  const int dim = in->dim, mass = in->mass, grad = in->grad;
  out->nstored = mf_pw_nstored_parts((mass ? MF_PW_VALUE : 0) | (grad ? MF_PW_GRAD : 0), dim);
  for (int c = 0; c < MF_PW_MAX_STORED; c++) out->qv[c] = 0.0;
  mf_qf_geometry(dim, in->J, in->w, in->a, in->b, mass, grad, out->qv, 1);
  mf_qf_scale(dim, mass, grad, in->c, out->qv, 1);
  out->v = 0.0;
  for (int k = 0; k < 3; k++) out->dv[k] = 0.0;
  mf_pw_apply_d(dim, mass, grad, out->qv, 1, in->u, in->du, &out->v, out->dv);
  float qf[MF_PW_MAX_STORED], duf[3] = {(float)in->du[0], (float)in->du[1], (float)in->du[2]};
  for (int c = 0; c < MF_PW_MAX_STORED; c++) qf[c] = (float)out->qv[c];
  out->vf = 0.0f;
  for (int k = 0; k < 3; k++) out->dvf[k] = 0.0f;
  mf_pw_apply_f(dim, mass, grad, qf, 1, (float)in->u, duf, &out->vf, out->dvf);
  out->entry = mf_pw_entry_d(dim, mass, grad, out->qv, 1, in->phi[0], in->dphi[0], in->phi[1], in->dphi[1]);
  out->diag = 0.0;
  for (int comp = 0; comp < out->nstored; comp++) {
    int k, l;
    const double f = mf_pw_diag_term(dim, mass, comp, &k, &l);
    out->diag += f * out->qv[comp] * (k < 0 ? in->phi[0] * in->phi[0] : in->dphi[0][k] * in->dphi[0][l]);
  }
  for (int k = 0; k < 3; k++) out->f1[k] = 0.0;
  mf_pw_scalar_d(dim, in->a * in->w, in->b * in->c * in->w, in->u, in->du, &out->f0, out->f1);
  double gg = 0.0;
  for (int k = 0; k < dim; k++) gg += in->dphi[0][k] * in->dphi[1][k];
  out->sentry = mf_pw_scalar_entry_d(in->a * in->w, in->b * in->c * in->w, in->phi[0], in->phi[1], gg);
  for (int k = 0; k < 9; k++) out->sig[k / 3][k % 3] = 0.0;
  mf_pw_stress_d(dim, in->lambda, in->mu, in->w, in->gu, out->sig);
  double g2 = 0.0;
  for (int k = 0; k < dim; k++) g2 += in->dphi[0][k] * in->dphi[0][k];
  for (int c = 0; c < 3; c++) out->sdiag[c] = c < dim ? mf_pw_stress_diag_d(in->lambda, in->mu, in->dphi[0][c], g2) : 0.0;
}

#endif
