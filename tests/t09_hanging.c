/* t09_hanging -- hanging-node constraints on adaptive meshes:
 *   mask decode agrees with p4est's own decoder on every cell of several refined meshes, and every
 *   mask passes the validity check (crafted bad ones fail it);
 *   a random finite-element function and an interpolated polynomial of degree p, evaluated at Gauss
 *   points of every hanging face from the fine side (constraints applied) and from the coarse cell
 *   there, agree to 1e-12 (cube meshes: affine cells, so points map exactly);
 *   the polynomial is reproduced exactly at the volume quadrature points of every cell;
 *   operators are symmetric and Laplace annihilates constants on adaptive balls. */
#include <p4est_lnodes.h>
#include <p8est_lnodes.h>

#include "mf_test.h"
#include "mf_testing.h"

static int coef_seed;
static double poly(const double *x, int dim, void *user)
{
  (void)user;
  /* a tensor-product polynomial of degree p in each variable, p = *(int *)user */
  int p = coef_seed;
  double v = 1.0;
  for (int k = 0; k < dim; k++) {
    double t = 0.0, xp = 1.0;
    for (int j = 0; j <= p; j++, xp *= x[k]) t += sin(1.0 + j + 3 * k) * xp;
    v *= t;
  }
  return v;
}

/* Value of the FE function of cell e at reference point xi (constraints applied). */
static double eval_cell(mf_space s, const double *h, int e, const double *xi)
{
  double ue[MF_MAX_N1 * MF_MAX_N1 * MF_MAX_N1], l[3][MF_MAX_N1];
  for (int k = 0; k < s->npc; k++) ue[k] = h[s->cell_nodes[(size_t)e * s->npc + k]];
  mf_hanging_apply(s->dim, s->n1, s->face_code[e], s->hanging_P, ue, 0);
  for (int d = 0; d < s->dim; d++) mf_lagrange_eval(s->n1, s->gll, 1, &xi[d], l[d], NULL);
  double v = 0.0;
  for (int k = 0; k < s->npc; k++) {
    double w = 1.0;
    for (int d = 0, t = k; d < s->dim; d++, t /= s->n1) w *= l[d][t % s->n1];
    v += w * ue[k];
  }
  return v;
}

static void check_decode(mf_space s, int *nface, int *nedge)
{
  for (int e = 0; e < s->ncells; e++) {
    int m = s->face_code[e], hf[6], he[12], pf[6], pe[12], r1, r2;
    T_CHECK(mf_hanging_check(s->dim, m) == 0, "cell %d: mask %d fails the validity check", e, m);
    for (int k = 0; k < 6; k++) hf[k] = pf[k] = 99;
    for (int k = 0; k < 12; k++) he[k] = pe[k] = 99;
    r1 = mf_hanging_decode(s->dim, m, hf, he);
    if (s->dim == 2) r2 = p4est_lnodes_decode((p4est_lnodes_code_t)m, pf);
    else r2 = p8est_lnodes_decode((p8est_lnodes_code_t)m, pf, pe);
    T_CHECK(r1 == r2, "mask %d: decode returns %d, p4est %d", m, r1, r2);
    for (int k = 0; k < 2 * s->dim; k++) T_CHECK(hf[k] == pf[k], "mask %d face %d: %d, p4est %d", m, k, hf[k], pf[k]);
    if (s->dim == 3)
      for (int k = 0; k < 12; k++) T_CHECK(he[k] == pe[k], "mask %d edge %d: %d, p4est %d", m, k, he[k], pe[k]);
    if (mf_hanging_faces(s->dim, m)) (*nface)++;
    if (mf_hanging_edges(s->dim, m) && !mf_hanging_faces(s->dim, m)) (*nedge)++;
  }
}

/* Every hanging face (and, in 3D, hanging edge) of every cell: fine-side value vs the coarser
 * cells' containing the point, at Gauss points of the face (edge). */
static double face_jump(mf_space s, const double *h, double *scale, int *nchecked)
{
  double gx[MF_MAX_N1], gw[MF_MAX_N1], worst = 0.0;
  mf_gauss(s->n1, gx, gw);
  *scale = 0.0;
  for (int i = 0; i < s->nlocal; i++) *scale = fmax(*scale, fabs(h[i]));
  for (int e = 0; e < s->ncells; e++) {
    int m = s->face_code[e], faces = mf_hanging_faces(s->dim, m), c = mf_hanging_child(s->dim, m);
    int edges = mf_hanging_edges(s->dim, m);
    for (int a = 0; a < 2 * s->dim; a++) { /* a < dim: face normal to a; a >= dim: edge along a - dim */
      int edge = a >= s->dim, ax = a % s->dim;
      if (!edge && !(faces >> ax & 1)) continue;
      if (edge && !(edges >> ax & 1)) continue;
      int npts = edge ? s->n1 : s->dim == 2 ? s->n1 : s->n1 * s->n1;
      for (int ip = 0; ip < npts; ip++) {
        double xi[3], x[3];
        for (int d = 0, t = ip; d < s->dim; d++) {
          int fixed = edge ? d != ax : d == ax;
          if (fixed) xi[d] = (c >> d & 1) ? 1.0 : 0.0;
          else xi[d] = gx[t % s->n1], t /= s->n1;
        }
        double oe[3], he, of[3], hf;
        mf_space_cell_box(s, e, oe, &he);
        for (int d = 0; d < s->dim; d++) x[d] = oe[d] + he * xi[d];
        double vf = eval_cell(s, h, e, xi);
        int found = 0;
        for (int f = 0; f < s->ncells; f++) { /* the coarser cell containing x */
          mf_space_cell_box(s, f, of, &hf);
          if (hf <= he * 1.5) continue;
          double xc[3];
          int in = 1;
          for (int d = 0; d < s->dim; d++) {
            xc[d] = (x[d] - of[d]) / hf;
            if (xc[d] < -1e-12 || xc[d] > 1 + 1e-12) in = 0;
          }
          if (!in) continue;
          worst = fmax(worst, fabs(eval_cell(s, h, f, xc) - vf));
          found = 1;
        }
        T_CHECK(found, "cell %d face %d point %d: no coarse neighbour found", e, a, ip);
        (*nchecked)++;
      }
    }
  }
  return worst;
}

static int refine_all(const double *x, int dim, int level, void *u) { return 1; }
static int coarsen_all(const double *x, int dim, int level, void *u) { return -1; }

int main(int argc, char **argv)
{
  MPI_Init(&argc, &argv);
  mf_context ctx;
  T_CALL(mf_context_create(MPI_COMM_SELF, "cpu", &ctx));
  /* adaptation: refine everything, coarsen everything back; the shells pattern adds cells */
  for (int dim = 2; dim <= 3; dim++) {
    mf_mesh mesh;
    int64_t n0, n1, n2;
    T_CALL(mf_mesh_create(ctx, "ball", dim, 1, &mesh));
    T_CALL(mf_mesh_num_cells(mesh, &n0));
    T_CALL(mf_mesh_adapt(mesh, refine_all, NULL));
    T_CALL(mf_mesh_num_cells(mesh, &n1));
    T_CALL(mf_mesh_adapt(mesh, coarsen_all, NULL));
    T_CALL(mf_mesh_num_cells(mesh, &n2));
    T_CHECK(n1 == n0 << dim && n2 == n0, "dim %d: %lld cells, refined %lld, coarsened %lld", dim, (long long)n0,
            (long long)n1, (long long)n2);
    mf_mesh_destroy(&mesh);
    T_CALL(mf_mesh_create(ctx, "ball", dim, 2, &mesh)); /* fine enough that the shells miss some cells */
    T_CALL(mf_mesh_num_cells(mesh, &n0));
    T_CALL(mf_mesh_refine_shells(mesh, 1));
    T_CALL(mf_mesh_num_cells(mesh, &n1));
    T_CHECK(n1 > n0 && n1 < n0 << dim, "dim %d: shells refined %lld of %lld cells' worth", dim, (long long)n1, (long long)n0);
    mf_mesh_destroy(&mesh);
  }
  /* bad masks */
  T_CHECK(mf_hanging_check(3, 1 << 9) != 0 && mf_hanging_check(2, 1 << 4) != 0, "bits beyond the layout accepted");
  T_CHECK(mf_hanging_check(3, 5) != 0 && mf_hanging_check(2, 3) != 0, "child id without hanging accepted");
  T_CHECK(mf_hanging_check(3, (1 << 6) | 3) == 0 && mf_hanging_check(2, 1 << 2) == 0, "valid masks rejected");
  for (int dim = 2; dim <= 3; dim++) {
    int nface = 0, nedge = 0;
    /* decode on several meshes */
    for (int variant = 0; variant < 3; variant++) {
      mf_mesh mesh;
      mf_space s;
      if (variant == 0) t_mesh(ctx, "cube", dim, dim == 2 ? 1 : 2, 2, &mesh);
      else if (variant == 1) t_mesh(ctx, "ball", dim, 1, 2, &mesh);
      else t_mesh(ctx, "deformed", dim, 2, 1, &mesh);
      T_CALL(mf_space_create(mesh, 2, &s));
      T_CHECK(s->nmasked > 0, "dim %d variant %d: no hanging cells", dim, variant);
      check_decode(s, &nface, &nedge);
      mf_space_destroy(&s);
      mf_mesh_destroy(&mesh);
    }
    T_CHECK(nface > 0 && (dim == 2 || nedge > 0), "dim %d: %d face-hanging, %d edge-only cells", dim, nface, nedge);
    /* continuity across hanging faces */
    mf_mesh mesh;
    t_mesh(ctx, "cube", dim, dim == 2 ? 1 : 2, 2, &mesh); /* 3D: 314 face-hanging, 36 edge-only cells */
    for (int p = 1; p <= (dim == 2 ? 8 : 4); p++) {
      mf_space s;
      mf_vector v;
      T_CALL(mf_space_create(mesh, p, &s));
      T_CALL(mf_vector_create(s, &v));
      for (int kind = 0; kind < 2; kind++) {
        coef_seed = p;
        if (kind == 0) T_CALL(mf_vector_set_random(v, 5 + p));
        else T_CALL(mf_vector_interpolate(v, poly, NULL));
        double scale, jump;
        int n = 0;
        jump = face_jump(s, v->data, &scale, &n);
        T_CHECK(n > 0 && jump <= 1e-12 * scale, "dim %d p %d %s: jump %.3e across hanging faces (%d points)", dim, p,
                kind ? "polynomial" : "random", jump / scale, n);
        if (kind == 1) { /* exact at the volume quadrature points of every cell */
          double err = 0.0, gx[MF_MAX_N1], gw[MF_MAX_N1];
          mf_gauss(s->n1, gx, gw);
          int npts = dim == 2 ? s->n1 * s->n1 : s->n1 * s->n1 * s->n1;
          for (int e = 0; e < s->ncells; e++)
            for (int ip = 0; ip < npts; ip++) {
              double xi[3], x[3];
              for (int d = 0, t = ip; d < dim; d++, t /= s->n1) xi[d] = gx[t % s->n1];
              double oe[3], he;
              mf_space_cell_box(s, e, oe, &he);
              for (int d = 0; d < dim; d++) x[d] = oe[d] + he * xi[d];
              err = fmax(err, fabs(eval_cell(s, v->data, e, xi) - poly(x, dim, NULL)));
            }
          T_CHECK(err <= 1e-12 * scale, "dim %d p %d: polynomial not reproduced (%.3e)", dim, p, err / scale);
        }
      }
      mf_vector_destroy(&v);
      mf_space_destroy(&s);
    }
    mf_mesh_destroy(&mesh);
    /* symmetry and constants on the adaptive ball */
    t_mesh(ctx, "ball", dim, 1, 2, &mesh);
    for (int p = 1; p <= 4; p++) {
      mf_space s;
      mf_vector x, y, t, one;
      mf_operator A;
      T_CALL(mf_space_create(mesh, p, &s));
      T_CALL(mf_vector_create(s, &x));
      T_CALL(mf_vector_create(s, &y));
      T_CALL(mf_vector_create(s, &t));
      T_CALL(mf_vector_create(s, &one));
      T_CALL(mf_vector_set_random(x, 1));
      T_CALL(mf_vector_set_random(y, 2));
      T_CALL(mf_vector_set_value(one, 1.0));
      T_CALL(mf_operator_create_helmholtz(s, MF_QUAD_GAUSS, 0.0, 1.0, t_ljungkvist, NULL, &A));
      for (int dir = 0; dir < 2; dir++) {
        double xAy, yAx, nx;
        T_CALL(mf_operator_set_dirichlet(A, dir));
        T_CALL(mf_operator_apply(A, y, t));
        T_CALL(mf_vector_dot(x, t, &xAy));
        T_CALL(mf_operator_apply(A, x, t));
        T_CALL(mf_vector_dot(y, t, &yAx));
        T_CALL(mf_vector_norm2(t, &nx));
        T_CHECK(fabs(xAy - yAx) <= 1e-12 * nx * nx, "dim %d p %d dirichlet %d: x.Ay - y.Ax = %.3e", dim, p, dir, xAy - yAx);
        if (!dir) {
          double n1;
          T_CALL(mf_operator_apply(A, one, t));
          T_CALL(mf_vector_norm2(t, &n1));
          T_CHECK(n1 <= 1e-12 * nx, "dim %d p %d: |A 1| = %.3e (|A x| = %.3e)", dim, p, n1, nx);
        }
      }
      mf_operator_destroy(&A);
      mf_vector_destroy(&one);
      mf_vector_destroy(&t);
      mf_vector_destroy(&y);
      mf_vector_destroy(&x);
      mf_space_destroy(&s);
    }
    mf_mesh_destroy(&mesh);
  }
  mf_context_destroy(&ctx);
  return t_finish();
}
