/* t29_reference.c -- the operators against references that share no code with them.
 *
 * The element matrices are computed here from first principles, in long double: Gauss-Lobatto nodes by
 * Newton's method on the Legendre derivative, Lagrange polynomials as monomial coefficient vectors,
 * and integrals of products of polynomials in closed form (monomial by monomial). Nothing comes from
 * lib/hex/basis.c, lib/simplex/basis.c, their quadrature tables or mf_element_matrix_dense. The library's
 * matrices are read through the public interface only, column by column (A e_j with
 * mf_vector_set_values, no Dirichlet form), and its DoFs are matched to the test's nodes by position
 * (mf_vector_interpolate of x, y, z), so that no numbering is shared either.
 *
 *   - Q_p on affine cells (one cell, and 2^dim cells, where the reference matrix is assembled here by
 *     position, which checks the scatter too): "cube" and "sheared", 2D p = 1..8 (one cell) and 1..6
 *     (4 cells), 3D p = 1..6 (one cell) and 1..3 (8 cells); mass, mass with c, Laplace with c, Helmholtz a M + b K(c) (Gauss
 *     q = p + 1 and p + 2, geometry on the fly, assembled). c(x) = 1 + x + 2y (+ 0.5 z) is linear, so
 *     the library's Gauss rules are exact and so is the reference.
 *   - P_p on simplices from Gmsh files written here (the reference cell, a sheared and scaled cell, a
 *     few cells of a sheared square or cube), 2D and 3D p = 1..6 (the 6 tetrahedra of the cube up to
 *     P4; cuda: p = 1..4): the same operators (the
 *     simplex rule of degree 2p is exact for all of them but mass with a linear c, which takes
 *     MF_QUAD_GAUSS_P2) and linear elasticity, sigma = lambda tr(eps) I + 2 mu eps.
 *   - Helmholtz(a, b, c) x = a M x + b K(c) x on random x with a variable c, on curved meshes too
 *     (ball, deformed), for hexahedra (stored, on the fly, assembled) and simplices.
 *   - Polynomials with known results: u^T M u = int u^2, u^T K u = int |grad u|^2 for an interpolated
 *     u of degree <= p (closed forms; Gauss-Lobatto on hexahedra: degree p - 1), K 1 = 0, 1^T M 1 = the volume, 1^T M_c 1 = int c, and
 *     (K u)_i = 0 at the interior DoFs for a linear u; for elasticity u^T A u of a linear field and
 *     A u = 0 for a rigid motion.
 *
 *   t29_reference BACKEND DIR   (cpu | cuda; DIR: a folder for the small Gmsh files written here)  */
#include "mf_test.h"

#include <stdint.h>

typedef long double ld;

#define HEX_PMAX 8
#define SX_PMAX 6

static const double HA = 2.5, HB = 0.75; /* Helmholtz weights a, b: distinct */
static const double LAMBDA = 1.7, MU = 0.6; /* Lame parameters: distinct */

/* ------------------------------------------------------------------ geometry of the test meshes */

/* The "sheared" map of mf_mesh_create (lib/mfree.h): x = A X, upper triangular. */
static void shear_matrix(int dim, int sheared, ld A[3][3])
{
  static const ld A3[3][3] = {{1.0L, 0.5L, 0.25L}, {0.0L, 1.2L, 0.3L}, {0.0L, 0.0L, 0.8L}};
  for (int k = 0; k < 3; k++)
    for (int l = 0; l < 3; l++) A[k][l] = sheared && k < dim && l < dim ? A3[k][l] : (k == l ? 1.0L : 0.0L);
}

/* X = A^-1 x for the upper triangular A above */
static void shear_inverse(int dim, int sheared, const double *x, ld *X)
{
  ld A[3][3];
  shear_matrix(dim, sheared, A);
  for (int k = dim - 1; k >= 0; k--) {
    ld s = x[k];
    for (int l = k + 1; l < dim; l++) s -= A[k][l] * X[l];
    X[k] = s / A[k][k];
  }
}

/* det and inverse of a dim x dim matrix (upper-left block of J) */
static ld inverse(int dim, const ld J[3][3], ld Ji[3][3])
{
  if (dim == 2) {
    const ld d = J[0][0] * J[1][1] - J[0][1] * J[1][0];
    Ji[0][0] = J[1][1] / d, Ji[0][1] = -J[0][1] / d, Ji[1][0] = -J[1][0] / d, Ji[1][1] = J[0][0] / d;
    return d;
  }
  const ld d = J[0][0] * (J[1][1] * J[2][2] - J[1][2] * J[2][1]) - J[0][1] * (J[1][0] * J[2][2] - J[1][2] * J[2][0]) +
               J[0][2] * (J[1][0] * J[2][1] - J[1][1] * J[2][0]);
  for (int r = 0; r < 3; r++)
    for (int c = 0; c < 3; c++) { /* (J^-1)_rc = cofactor(c, r) / d */
      const int r1 = (c + 1) % 3, r2 = (c + 2) % 3, c1 = (r + 1) % 3, c2 = (r + 2) % 3;
      Ji[r][c] = (J[r1][c1] * J[r2][c2] - J[r1][c2] * J[r2][c1]) / d;
    }
  return d;
}

/* A linear coefficient c(x) = c0 + g . x, as a callback and as data for the reference. */
typedef struct {
  ld c0, g[3];
} lin_coef;
static const lin_coef COEF = {1.0L, {1.0L, 2.0L, 0.5L}}; /* c(x) = 1 + x + 2y (+ 0.5 z) */
static const lin_coef ONE = {1.0L, {0.0L, 0.0L, 0.0L}};

static double coef_fn(const double *x, int dim, void *user)
{
  (void)user;
  double s = (double)COEF.c0;
  for (int k = 0; k < dim; k++) s += (double)COEF.g[k] * x[k];
  return s;
}

/* strongly varying, for the identity checks on curved meshes */
static double coef_curved(const double *x, int dim, void *user)
{
  (void)user;
  double r2 = 0.0;
  for (int k = 0; k < dim; k++) r2 += x[k] * x[k];
  return 1.0 / (0.05 + 2.0 * r2) + 0.5 * sin(3.0 * x[0]);
}

static double coord_fn(const double *x, int dim, void *user)
{
  (void)dim;
  return x[*(const int *)user];
}

/* The coefficients of c in the reference coordinates of the affine cell x = x0 + J xi:
 * c = e[0] + sum_l e[1 + l] xi_l. */
static void coef_in_cell(int dim, const lin_coef *c, const ld *x0, const ld J[3][3], ld e[4])
{
  e[0] = c->c0;
  for (int k = 0; k < dim; k++) e[0] += c->g[k] * x0[k];
  for (int l = 0; l < dim; l++) {
    e[1 + l] = 0.0L;
    for (int k = 0; k < dim; k++) e[1 + l] += c->g[k] * J[k][l];
  }
  for (int l = dim; l < 3; l++) e[1 + l] = 0.0L;
}

/* ------------------------------------------------------------------ the library through its interface */

/* Each DoF's point (n x 3), from mf_vector_interpolate of the coordinates; ncomp > 1: the point of DoF
 * i is that of entry i * ncomp (interleaved components, lib/mfree.h). */
static double *dof_points(mf_space s, int dim, int ncomp, int *ndof)
{
  int n, nl;
  T_CALL(mf_space_local_sizes(s, &n, &nl));
  T_CHECK(n == nl, "one rank: every DoF owned (%d of %d)", n, nl);
  mf_vector v;
  T_CALL(mf_vector_create(s, &v));
  double *vals = malloc(sizeof(double) * n), *P = calloc((size_t)(n / ncomp) * 3, sizeof(double));
  for (int k = 0; k < dim; k++) {
    T_CALL(mf_vector_interpolate(v, coord_fn, &k));
    T_CALL(mf_vector_get_values(v, vals));
    for (int i = 0; i < n / ncomp; i++) P[3 * i + k] = vals[i * ncomp];
  }
  mf_vector_destroy(&v);
  free(vals);
  *ndof = n / ncomp;
  return P;
}

/* The operator's matrix (n x n, row-major) from its columns A e_j. */
static double *library_matrix(mf_operator A, mf_space s, int n)
{
  mf_vector x, y;
  T_CALL(mf_vector_create(s, &x));
  T_CALL(mf_vector_create(s, &y));
  double *e = calloc((size_t)n, sizeof(double)), *col = malloc(sizeof(double) * n),
         *M = malloc(sizeof(double) * (size_t)n * n);
  for (int j = 0; j < n; j++) {
    e[j] = 1.0;
    T_CALL(mf_vector_set_values(x, e));
    T_CALL(mf_operator_apply(A, x, y));
    T_CALL(mf_vector_get_values(y, col));
    e[j] = 0.0;
    for (int i = 0; i < n; i++) M[(size_t)i * n + j] = col[i];
  }
  free(e);
  free(col);
  mf_vector_destroy(&x);
  mf_vector_destroy(&y);
  return M;
}

/* y = A x through host arrays */
static void apply_host(mf_operator A, mf_space s, const double *x, double *y)
{
  mf_vector vx, vy;
  T_CALL(mf_vector_create(s, &vx));
  T_CALL(mf_vector_create(s, &vy));
  T_CALL(mf_vector_set_values(vx, x));
  T_CALL(mf_operator_apply(A, vx, vy));
  T_CALL(mf_vector_get_values(vy, y));
  mf_vector_destroy(&vx);
  mf_vector_destroy(&vy);
}

/* The library's DoF at point x (the nearest; -1 if none lies within 1e-9). */
static int find_dof(const double *P, int n, int dim, const ld *x)
{
  int best = -1;
  double bd = 1e300;
  for (int i = 0; i < n; i++) {
    double d = 0.0;
    for (int k = 0; k < dim; k++) d = fmax(d, fabs(P[3 * i + k] - (double)x[k]));
    if (d < bd) bd = d, best = i;
  }
  return bd <= 1e-9 ? best : -1;
}

/* Entry by entry: |L - R| <= tol max |R|. */
static void compare(const char *what, int n, const double *L, const ld *R, double tol)
{
  double scale = 0.0, err = 0.0;
  size_t worst = 0;
  for (size_t k = 0; k < (size_t)n * n; k++) scale = fmax(scale, fabs((double)R[k]));
  for (size_t k = 0; k < (size_t)n * n; k++) {
    const double d = fabs(L[k] - (double)R[k]);
    if (d > err) err = d, worst = k;
  }
  T_CHECK(scale > 0.0 && err <= tol * scale,
          "%s: entry (%d, %d) is %.17g, the reference %.17g (difference %.3e, %.1e of the largest entry %.3e)", what,
          (int)(worst / n), (int)(worst % n), L[worst], (double)R[worst], err, err / scale, scale);
}

/* ------------------------------------------------------------------ 1D polynomials (Q_p) */

/* Coefficient vectors in t on [-1, 1], degree <= 2 HEX_PMAX + 1. */
#define PL (2 * HEX_PMAX + 2)

static int pmul(const ld *a, int da, const ld *b, int db, ld *c)
{
  for (int k = 0; k <= da + db; k++) c[k] = 0.0L;
  for (int i = 0; i <= da; i++)
    for (int j = 0; j <= db; j++) c[i + j] += a[i] * b[j];
  return da + db;
}

static ld pint(const ld *a, int da) /* int_{-1}^{1} */
{
  ld s = 0.0L;
  for (int k = 0; k <= da; k += 2) s += a[k] * 2.0L / (ld)(k + 1);
  return s;
}

static ld peval(const ld *a, int da, ld t)
{
  ld s = 0.0L;
  for (int k = da; k >= 0; k--) s = s * t + a[k];
  return s;
}

static void legendre(int n, ld x, ld *P, ld *dP)
{
  ld p0 = 1.0L, p1 = x;
  for (int k = 1; k < n; k++) {
    const ld p2 = ((2 * k + 1) * x * p1 - k * p0) / (k + 1);
    p0 = p1, p1 = p2;
  }
  *P = p1;
  *dP = n * (p0 - x * p1) / (1.0L - x * x); /* P_n' = n (P_{n-1} - x P_n) / (1 - x^2) */
}

/* Gauss-Lobatto nodes on [-1, 1]: +-1 and the zeros of P_p', by Newton from the Chebyshev points. */
static void gll_nodes(int p, ld *t)
{
  t[0] = -1.0L, t[p] = 1.0L;
  for (int k = 1; k < p; k++) {
    ld x = -cosl(3.14159265358979323846264338327950288L * k / p);
    for (int it = 0; it < 100; it++) {
      ld P, dP;
      legendre(p, x, &P, &dP);
      const ld d2P = (2.0L * x * dP - p * (p + 1) * P) / (1.0L - x * x), dx = dP / d2P;
      x -= dx;
      if (fabsl(dx) < 1e-18L) break;
    }
    t[k] = x;
  }
}

/* The 1D tables of Q_p on xi in [0, 1] = (1 + t)/2, with weight w_0 = 1 or w_1 = xi:
 * T[0][w][a][b] = int w phi_a phi_b, T[1] = int w phi_a' phi_b, T[2] = int w phi_a phi_b',
 * T[3] = int w phi_a' phi_b' (derivatives in xi). Also the nodes xi. */
typedef struct {
  int p;
  ld xi[HEX_PMAX + 1];
  ld T[4][2][HEX_PMAX + 1][HEX_PMAX + 1];
} hex_tables;

static void hex_tables_make(int p, hex_tables *h)
{
  ld t[HEX_PMAX + 1], L[HEX_PMAX + 1][PL], dL[HEX_PMAX + 1][PL];
  gll_nodes(p, t);
  h->p = p;
  for (int a = 0; a <= p; a++) {
    h->xi[a] = (1.0L + t[a]) / 2.0L;
    ld c[PL] = {1.0L}, tmp[PL];
    int d = 0;
    for (int m = 0; m <= p; m++) {
      if (m == a) continue;
      const ld f[2] = {-t[m] / (t[a] - t[m]), 1.0L / (t[a] - t[m])};
      d = pmul(c, d, f, 1, tmp);
      memcpy(c, tmp, sizeof(ld) * (d + 1));
    }
    memcpy(L[a], c, sizeof(ld) * (p + 1));
    for (int k = 0; k < p; k++) dL[a][k] = (k + 1) * L[a][k + 1] * 2.0L; /* d/dxi = 2 d/dt */
  }
  /* the Lagrange property, which the rest relies on */
  for (int a = 0; a <= p; a++)
    for (int b = 0; b <= p; b++)
      T_CHECK(fabsl(peval(L[a], p, t[b]) - (a == b)) < 1e-14L, "Q%d: own Lagrange polynomial %d at node %d", p, a, b);
  const ld w[2][2] = {{1.0L, 0.0L}, {0.5L, 0.5L}}; /* 1 and xi = (1 + t)/2 */
  for (int a = 0; a <= p; a++)
    for (int b = 0; b <= p; b++)
      for (int ww = 0; ww < 2; ww++)
        for (int kind = 0; kind < 4; kind++) {
          const ld *fa = (kind & 1) ? dL[a] : L[a], *fb = (kind & 2) ? dL[b] : L[b];
          const int da = (kind & 1) ? p - 1 : p, db = (kind & 2) ? p - 1 : p;
          ld ab[PL], abw[PL + 1];
          const int d = pmul(fa, da, fb, db, ab), dw = pmul(ab, d, w[ww], 1, abw);
          h->T[kind][ww][a][b] = pint(abw, dw) / 2.0L; /* dxi = dt / 2 */
        }
}

/* The cell matrices of the affine hex cell x = x0 + J xi that every operator combines (N = (p+1)^dim
 * nodes, node (i0, i1, i2) at i0 + (p+1) (i1 + (p+1) i2)):
 *   Mw[n] = |det J| int w_n phi_I phi_J,   Sw[n] = |det J| int w_n (J^-T grad phi_I) . (J^-T grad phi_J)
 * with w_0 = 1, w_{1+l} = xi_l; a linear c is e[0] + sum_l e[1+l] xi_l in the cell (coef_in_cell). */
static void hex_cell_matrices(int dim, const hex_tables *h, const ld J[3][3], ld *Mw[4], ld *Sw[4])
{
  const int n1 = h->p + 1, N = dim == 2 ? n1 * n1 : n1 * n1 * n1;
  ld Ji[3][3], G[3][3];
  const ld det = fabsl(inverse(dim, J, Ji));
  for (int k = 0; k < dim; k++)
    for (int l = 0; l < dim; l++) {
      G[k][l] = 0.0L;
      for (int m = 0; m < dim; m++) G[k][l] += Ji[k][m] * Ji[l][m]; /* J^-1 J^-T */
    }
  for (int I = 0; I < N; I++) {
    const int i[3] = {I % n1, (I / n1) % n1, I / (n1 * n1)};
    for (int Jn = 0; Jn < N; Jn++) {
      const int j[3] = {Jn % n1, (Jn / n1) % n1, Jn / (n1 * n1)};
      for (int n = 0; n <= dim; n++) { /* weight: 1 (n = 0) or xi_{n-1} */
        ld m = 1.0L, s = 0.0L;
        for (int d = 0; d < dim; d++) m *= h->T[0][n == d + 1][i[d]][j[d]];
        for (int k = 0; k < dim; k++)
          for (int l = 0; l < dim; l++) {
            ld f = 1.0L;
            for (int d = 0; d < dim; d++) f *= h->T[(d == k) + 2 * (d == l)][n == d + 1][i[d]][j[d]];
            s += G[k][l] * f;
          }
        Mw[n][(size_t)I * N + Jn] = det * m;
        Sw[n][(size_t)I * N + Jn] = det * s;
      }
    }
  }
}

/* One operator: alpha Mass(cm) + beta Stiffness(cs), as the library defines them (lib/mfree.h). */
typedef struct {
  const char *name;
  int kind;            /* 0 mass, 1 Laplace, 2 Helmholtz, 3 elasticity */
  mf_quadrature quad;
  int coef;            /* c(x) = COEF, else none */
  int variant;         /* 0 stored, 1 on the fly (hex), 2 assembled */
} op_case;

static void op_weights(const op_case *oc, ld *alpha, const lin_coef **cm, ld *beta, const lin_coef **cs)
{
  const lin_coef *c = oc->coef ? &COEF : &ONE;
  *alpha = oc->kind == 0 ? 1.0L : oc->kind == 2 ? HA : 0.0L;
  *beta = oc->kind == 1 ? 1.0L : oc->kind == 2 ? HB : 0.0L;
  *cm = oc->kind == 0 ? c : &ONE; /* Helmholtz: the mass term has no coefficient */
  *cs = c;
}

static mf_operator make_op(mf_space s, const op_case *oc)
{
  mf_operator A = NULL, B = NULL;
  mf_coefficient_fn c = oc->coef ? coef_fn : NULL;
  if (oc->kind == 0) T_CALL(mf_operator_create_mass(s, oc->quad, c, NULL, &A));
  else if (oc->kind == 1) T_CALL(mf_operator_create_laplace(s, oc->quad, c, NULL, &A));
  else if (oc->kind == 2) T_CALL(mf_operator_create_helmholtz(s, oc->quad, HA, HB, c, NULL, &A));
  else T_CALL(mf_operator_create_elasticity(s, LAMBDA, MU, &A));
  if (oc->variant == 1) T_CALL(mf_operator_set_geometry(A, MF_GEOMETRY_ON_THE_FLY));
  if (oc->variant == 2) {
    T_CALL(mf_operator_create_assembled(A, &B));
    mf_operator_destroy(&A);
    A = B;
  }
  return A;
}

/* Q_p on the mesh `name` ("cube" or "sheared") at `level`: every operator of `cases` against the
 * matrix assembled here from the cell matrices, its DoFs placed by position. */
static void hex_matrices(mf_context ctx, int dim, int p, const char *name, int level, const op_case *cases, int ncases)
{
  mf_mesh mesh;
  mf_space s;
  T_CALL(mf_mesh_create(ctx, name, dim, level, &mesh));
  T_CALL(mf_space_create(mesh, p, &s));
  int n;
  double *P = dof_points(s, dim, 1, &n);
  const int ncell1 = 1 << level, ncells = dim == 2 ? ncell1 * ncell1 : ncell1 * ncell1 * ncell1;
  const int n1 = p + 1, N = dim == 2 ? n1 * n1 : n1 * n1 * n1;
  const int expect = dim == 2 ? (ncell1 * p + 1) * (ncell1 * p + 1) : (ncell1 * p + 1) * (ncell1 * p + 1) * (ncell1 * p + 1);
  T_CHECK(n == expect, "%s %dD level %d Q%d: %d DoFs, expected %d", name, dim, level, p, n, expect);
  hex_tables h;
  hex_tables_make(p, &h);
  ld A[3][3];
  shear_matrix(dim, !strcmp(name, "sheared"), A);
  /* per cell: its affine map, its nodes' DoFs, its matrices */
  int *dof = malloc(sizeof(int) * (size_t)ncells * N), *hits = calloc((size_t)n, sizeof(int));
  ld *x0 = malloc(sizeof(ld) * 3 * ncells), (*J)[3][3] = malloc(sizeof(*J) * ncells);
  ld *Mw[4][64] = {{NULL}}, *Sw[4][64] = {{NULL}}; /* 2D: the fourth weight unused */
  for (int e = 0; e < ncells; e++) {
    const int ce[3] = {e % ncell1, (e / ncell1) % ncell1, e / (ncell1 * ncell1)};
    for (int k = 0; k < 3; k++) {
      x0[3 * e + k] = 0.0L;
      for (int l = 0; l < dim; l++) x0[3 * e + k] += A[k][l] * ce[l] / (ld)ncell1;
      for (int l = 0; l < 3; l++) J[e][k][l] = A[k][l] / (ld)ncell1;
    }
    for (int I = 0; I < N; I++) {
      const int i[3] = {I % n1, (I / n1) % n1, I / (n1 * n1)};
      ld x[3] = {0, 0, 0};
      for (int k = 0; k < dim; k++) {
        x[k] = x0[3 * e + k];
        for (int l = 0; l < dim; l++) x[k] += J[e][k][l] * h.xi[i[l]];
      }
      const int d = find_dof(P, n, dim, x);
      T_CHECK(d >= 0, "%s %dD Q%d: no DoF at the node (%g, %g, %g) of cell %d", name, dim, p, (double)x[0], (double)x[1],
              (double)x[2], e);
      dof[(size_t)e * N + I] = d < 0 ? 0 : d;
      if (d >= 0) hits[d]++;
    }
    for (int w = 0; w <= dim; w++) {
      Mw[w][e] = malloc(sizeof(ld) * (size_t)N * N);
      Sw[w][e] = malloc(sizeof(ld) * (size_t)N * N);
    }
    ld *Mc[4] = {Mw[0][e], Mw[1][e], Mw[2][e], Mw[3][e]}, *Sc[4] = {Sw[0][e], Sw[1][e], Sw[2][e], Sw[3][e]};
    hex_cell_matrices(dim, &h, J[e], Mc, Sc);
  }
  for (int i = 0; i < n; i++) T_CHECK(hits[i] > 0, "%s %dD Q%d: DoF %d at no node of the test's cells", name, dim, p, i);
  ld *R = malloc(sizeof(ld) * (size_t)n * n);
  for (int c = 0; c < ncases; c++) {
    const op_case *oc = &cases[c];
    ld alpha, beta;
    const lin_coef *cm, *cs;
    op_weights(oc, &alpha, &cm, &beta, &cs);
    memset(R, 0, sizeof(ld) * (size_t)n * n);
    for (int e = 0; e < ncells; e++) {
      ld em[4], es[4];
      coef_in_cell(dim, cm, &x0[3 * e], J[e], em);
      coef_in_cell(dim, cs, &x0[3 * e], J[e], es);
      const int *de = dof + (size_t)e * N;
      for (int I = 0; I < N; I++)
        for (int Jn = 0; Jn < N; Jn++) {
          ld v = 0.0L;
          const size_t ij = (size_t)I * N + Jn;
          for (int w = 0; w <= dim; w++) v += alpha * em[w] * Mw[w][e][ij] + beta * es[w] * Sw[w][e][ij];
          R[(size_t)de[I] * n + de[Jn]] += v;
        }
    }
    mf_operator op = make_op(s, oc);
    double *L = library_matrix(op, s, n);
    char what[160];
    snprintf(what, sizeof what, "%s %dD level %d Q%d %s", name, dim, level, p, oc->name);
    compare(what, n, L, R, 1e-12);
    free(L);
    mf_operator_destroy(&op);
  }
  for (int e = 0; e < ncells; e++)
    for (int w = 0; w <= dim; w++) free(Mw[w][e]), free(Sw[w][e]);
  free(R);
  free(dof), free(hits), free(x0), free(J), free(P);
  mf_space_destroy(&s);
  mf_mesh_destroy(&mesh);
}

/* ------------------------------------------------------------------ simplices: P_p */

/* Polynomials on the reference simplex as combinations of barycentric monomials
 * lambda^alpha = lambda_0^alpha_0 ... lambda_dim^alpha_dim of one total degree (lambda_0 = 1 - sum_k xi_k,
 * lambda_k = xi_k): the Lagrange basis of P_p in those of degree p, its derivatives in those of degree
 * p - 1. Their integrals over the reference simplex are exact,
 *   int lambda^alpha = alpha_0! alpha_1! ... alpha_dim! / (|alpha| + dim)!,
 * (a! b! c! / (a + b + c + dim)! for the monomials xi^(a, b, c)), and unlike the monomials of xi they
 * need no cancellation: with those, the P6 mass matrices came out 3e-13 off even in long double. */
#define SX_NM 84 /* nodes of P6 in 3D */
typedef struct {
  int dim, p, N, nq;
  int a[SX_NM][4];       /* degree-p exponents alpha; node i is alpha_i / p, alpha_i (1..dim) its xi */
  int aq[SX_NM][4];      /* degree p - 1 exponents */
  ld node[SX_NM][3];     /* the equispaced nodes (xi) */
  ld C[SX_NM][SX_NM];    /* C[m][i]: coefficient of lambda^a_m in phi_i */
  ld D[3][SX_NM][SX_NM]; /* D[k][m][i]: coefficient of lambda^aq_m in d phi_i / d xi_k */
  /* reference matrices over the reference simplex, weight w_0 = 1 or w_{1+l} = xi_l:
   * M[w] = int w phi_i phi_j, S[w][k][l] = int w d_k phi_i d_l phi_j */
  ld *M[4], *S[4][3][3];
} sx_tables;

static ld factorial(int n)
{
  ld f = 1.0L;
  for (int k = 2; k <= n; k++) f *= k;
  return f;
}

static ld sx_integral(int dim, const int *g) /* int over the reference simplex of lambda^g */
{
  ld v = 1.0L;
  int s = 0;
  for (int k = 0; k <= dim; k++) v *= factorial(g[k]), s += g[k];
  return v / factorial(s + dim);
}

/* the exponents of total degree deg in dim + 1 variables, alpha_0 = deg - the rest */
static int sx_exponents(int dim, int deg, int a[][4])
{
  int n = 0;
  for (int s = 0; s <= deg; s++)
    for (int c = 0; c <= (dim == 3 ? s : 0); c++)
      for (int b = 0; b <= s - c; b++) {
        a[n][1] = s - b - c, a[n][2] = b, a[n][3] = c, a[n][0] = deg - s;
        n++;
      }
  return n;
}

static int sx_find(int n, const int a[][4], const int *g)
{
  for (int m = 0; m < n; m++)
    if (a[m][0] == g[0] && a[m][1] == g[1] && a[m][2] == g[2] && a[m][3] == g[3]) return m;
  return -1;
}

/* M[w] or S: out = X^T H Y over the exponent list a (n entries), H[m][q] = int w lambda^(a_m + a_q) */
static ld *sx_product(int dim, int n, const int a[][4], int w, int N, const ld X[][SX_NM], const ld Y[][SX_NM])
{
  static ld H[SX_NM][SX_NM], HY[SX_NM][SX_NM];
  for (int m = 0; m < n; m++)
    for (int q = 0; q < n; q++) {
      int g[4];
      for (int k = 0; k < 4; k++) g[k] = a[m][k] + a[q][k];
      if (w > 0) g[w]++; /* xi_l = lambda_l */
      H[m][q] = sx_integral(dim, g);
    }
  for (int m = 0; m < n; m++)
    for (int j = 0; j < N; j++) {
      ld v = 0.0L;
      for (int q = 0; q < n; q++) v += H[m][q] * Y[q][j];
      HY[m][j] = v;
    }
  ld *out = malloc(sizeof(ld) * N * N);
  for (int i = 0; i < N; i++)
    for (int j = 0; j < N; j++) {
      ld v = 0.0L;
      for (int m = 0; m < n; m++) v += X[m][i] * HY[m][j];
      out[i * N + j] = v;
    }
  return out;
}

/* The Lagrange basis on the equispaced nodes as products of linear factors (no matrix inversion):
 *   phi_alpha = prod_{k=0..dim} prod_{m=0..alpha_k-1} (p lambda_k - m (lambda_0 + ... + lambda_dim)) / (m + 1),
 * 1 at its node alpha / p and 0 at every other, homogeneous of degree p. */
static void sx_tables_make(int dim, int p, sx_tables *t)
{
  memset(t, 0, sizeof *t);
  t->dim = dim, t->p = p;
  const int N = t->N = sx_exponents(dim, p, t->a), nq = t->nq = sx_exponents(dim, p - 1, t->aq);
  for (int i = 0; i < N; i++)
    for (int k = 0; k < dim; k++) t->node[i][k] = (ld)t->a[i][1 + k] / p;
  enum { P1 = SX_PMAX + 1 };
  static ld poly[P1][P1][P1][P1], next[P1][P1][P1][P1];
  for (int i = 0; i < N; i++) {
    memset(poly, 0, sizeof poly);
    poly[0][0][0][0] = 1.0L;
    int deg = 0;
    for (int k = 0; k <= dim; k++)
      for (int m = 0; m < t->a[i][k]; m++, deg++) {
        ld f[4] = {0, 0, 0, 0}; /* the factor sum_j f_j lambda_j */
        for (int j = 0; j <= dim; j++) f[j] = (j == k ? (ld)p : 0.0L) - (ld)m;
        for (int j = 0; j <= dim; j++) f[j] /= (ld)(m + 1);
        memset(next, 0, sizeof next);
        for (int a0 = 0; a0 <= deg; a0++)
          for (int a1 = 0; a0 + a1 <= deg; a1++)
            for (int a2 = 0; a0 + a1 + a2 <= deg; a2++)
              for (int a3 = 0; a0 + a1 + a2 + a3 <= deg; a3++) {
                const ld v = poly[a0][a1][a2][a3];
                if (v == 0.0L) continue;
                next[a0 + 1][a1][a2][a3] += f[0] * v;
                next[a0][a1 + 1][a2][a3] += f[1] * v;
                next[a0][a1][a2 + 1][a3] += f[2] * v;
                next[a0][a1][a2][a3 + 1] += f[3] * v;
              }
        memcpy(poly, next, sizeof poly);
      }
    for (int m = 0; m < N; m++) t->C[m][i] = poly[t->a[m][0]][t->a[m][1]][t->a[m][2]][t->a[m][3]];
  }
  /* the Lagrange property, which the rest relies on */
  for (int i = 0; i < N; i++)
    for (int j = 0; j < N; j++) {
      ld v = 0.0L;
      for (int m = 0; m < N; m++) {
        ld x = t->C[m][i];
        for (int k = 0; k <= dim; k++) x *= powl((ld)t->a[j][k] / p, t->a[m][k]);
        v += x;
      }
      T_CHECK(fabsl(v - (i == j)) < 1e-15L, "P%d %dD: own basis function %d at node %d is %.3Le", p, dim, i, j, v);
    }
  /* d lambda^alpha / d xi_k = alpha_k lambda^(alpha - e_k) - alpha_0 lambda^(alpha - e_0) */
  for (int k = 0; k < dim; k++)
    for (int m = 0; m < N; m++)
      for (int s = 0; s < 2; s++) {
        const int v = s ? 1 + k : 0;
        if (t->a[m][v] == 0) continue;
        int g[4] = {t->a[m][0], t->a[m][1], t->a[m][2], t->a[m][3]};
        g[v]--;
        const int q = sx_find(nq, t->aq, g);
        for (int i = 0; i < N; i++) t->D[k][q][i] += (s ? 1.0L : -1.0L) * t->a[m][v] * t->C[m][i];
      }
  for (int w = 0; w <= dim; w++) {
    t->M[w] = sx_product(dim, N, t->a, w, N, t->C, t->C);
    for (int k = 0; k < dim; k++)
      for (int l = 0; l < dim; l++) t->S[w][k][l] = sx_product(dim, nq, t->aq, w, N, t->D[k], t->D[l]);
  }
}

static void sx_tables_free(sx_tables *t)
{
  for (int w = 0; w <= t->dim; w++) {
    free(t->M[w]);
    for (int k = 0; k < t->dim; k++)
      for (int l = 0; l < t->dim; l++) free(t->S[w][k][l]);
  }
}

/* A simplex mesh of the test: vertices (nv x 3) and cells ((dim + 1) each), written as Gmsh 2.2. */
typedef struct {
  const char *name;
  int dim, nv, nc;
  double V[27][3];
  int C[48][4];
} sx_mesh;

static ld sx_cell_jacobian(const sx_mesh *m, int e, ld J[3][3], ld x0[3])
{
  const int dim = m->dim, *c = m->C[e];
  for (int k = 0; k < 3; k++) {
    x0[k] = k < dim ? m->V[c[0]][k] : 0.0L;
    for (int l = 0; l < 3; l++)
      J[k][l] = (k < dim && l < dim) ? (ld)m->V[c[l + 1]][k] - m->V[c[0]][k] : (k == l ? 1.0L : 0.0L);
  }
  ld Ji[3][3];
  return inverse(dim, J, Ji);
}

/* positively oriented cells: a negative one gets two vertices swapped */
static void sx_orient(sx_mesh *m)
{
  for (int e = 0; e < m->nc; e++) {
    ld J[3][3], x0[3];
    if (sx_cell_jacobian(m, e, J, x0) < 0) {
      const int t = m->C[e][1];
      m->C[e][1] = m->C[e][2], m->C[e][2] = t;
    }
  }
}

static void sx_write(const sx_mesh *m, const char *path)
{
  FILE *f = fopen(path, "w");
  if (!f) {
    fprintf(stderr, "FAIL: cannot write %s\n", path);
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
  fprintf(f, "$MeshFormat\n2.2 0 8\n$EndMeshFormat\n$Nodes\n%d\n", m->nv);
  for (int v = 0; v < m->nv; v++) fprintf(f, "%d %.17g %.17g %.17g\n", v + 1, m->V[v][0], m->V[v][1], m->V[v][2]);
  fprintf(f, "$EndNodes\n$Elements\n%d\n", m->nc);
  for (int e = 0; e < m->nc; e++) {
    fprintf(f, "%d %d 2 1 1", e + 1, m->dim == 2 ? 2 : 4);
    for (int k = 0; k <= m->dim; k++) fprintf(f, " %d", m->C[e][k] + 1);
    fprintf(f, "\n");
  }
  fprintf(f, "$EndElements\n");
  fclose(f);
}

/* The test's simplex meshes: the reference cell, one sheared and scaled cell, and a few cells of the
 * sheared square (a 2 x 2 grid, its centre moved; 8 triangles) or cube (the 6 tetrahedra of its Kuhn
 * split), the shear that of the hex mesh "sheared". */
static void sx_mesh_make(int dim, int which, sx_mesh *m)
{
  memset(m, 0, sizeof *m);
  m->dim = dim;
  if (which == 0) {
    m->name = "reference";
    m->nv = dim + 1, m->nc = 1;
    for (int k = 0; k < dim; k++) m->V[k + 1][k] = 1.0;
    for (int k = 0; k <= dim; k++) m->C[0][k] = k;
  } else if (which == 1) {
    m->name = "sheared cell";
    static const double V2[3][3] = {{0.2, -0.1, 0}, {1.5, 0.3, 0}, {0.6, 1.1, 0}};
    static const double V3[4][3] = {{0.2, -0.1, 0.3}, {1.4, 0.2, 0.1}, {0.5, 1.2, 0.4}, {0.3, 0.6, 1.5}};
    m->nv = dim + 1, m->nc = 1;
    memcpy(m->V, dim == 2 ? V2 : V3, sizeof(double) * 3 * (dim + 1));
    for (int k = 0; k <= dim; k++) m->C[0][k] = k;
  } else {
    ld A[3][3];
    shear_matrix(dim, 1, A);
    if (dim == 2) {
      m->name = "sheared square, 8 cells";
      m->nv = 9, m->nc = 0;
      for (int j = 0; j < 3; j++)
        for (int i = 0; i < 3; i++) m->V[i + 3 * j][0] = 0.5 * i, m->V[i + 3 * j][1] = 0.5 * j;
      m->V[4][0] = 0.55, m->V[4][1] = 0.42; /* the centre moved: cells of different shapes */
      for (int j = 0; j < 2; j++)
        for (int i = 0; i < 2; i++) {
          const int v00 = i + 3 * j, v10 = v00 + 1, v01 = v00 + 3, v11 = v00 + 4;
          const int t0[3] = {v00, v10, v11}, t1[3] = {v00, v11, v01};
          memcpy(m->C[m->nc++], t0, sizeof t0);
          memcpy(m->C[m->nc++], t1, sizeof t1);
        }
    } else {
      m->name = "sheared cube, 6 cells";
      m->nv = 8, m->nc = 0;
      for (int v = 0; v < 8; v++)
        for (int k = 0; k < 3; k++) m->V[v][k] = (v >> k) & 1;
      static const int perm[6][3] = {{0, 1, 2}, {0, 2, 1}, {1, 0, 2}, {1, 2, 0}, {2, 0, 1}, {2, 1, 0}};
      for (int s = 0; s < 6; s++) {
        const int a = 1 << perm[s][0], b = a | (1 << perm[s][1]);
        const int t[4] = {0, a, b, 7};
        memcpy(m->C[m->nc++], t, sizeof t);
      }
    }
    for (int v = 0; v < m->nv; v++) {
      double x[3] = {0, 0, 0};
      for (int k = 0; k < dim; k++)
        for (int l = 0; l < dim; l++) x[k] += (double)A[k][l] * m->V[v][l];
      memcpy(m->V[v], x, sizeof x);
    }
  }
  sx_orient(m);
}

/* P_p on the test's simplex mesh: the operators of `cases` (and elasticity) against the matrices
 * assembled here. */
static void sx_matrices(mf_context ctx, const char *dir, const char *be, int dim, int p, int which, const sx_tables *t,
                        const op_case *cases, int ncases)
{
  sx_mesh m;
  sx_mesh_make(dim, which, &m);
  char path[4096];
  snprintf(path, sizeof path, "%s/t29_reference_%s_%dd_%d.msh", dir, be, dim, which);
  sx_write(&m, path);
  mf_mesh mesh;
  T_CALL(mf_mesh_create_from_file(ctx, path, dim, &mesh));
  const int N = t->N;
  for (int c = 0; c < ncases; c++) {
    const op_case *oc = &cases[c];
    const int ncomp = oc->kind == 3 ? dim : 1;
    mf_space s;
    if (ncomp > 1) T_CALL(mf_space_create_components(mesh, p, ncomp, &s));
    else T_CALL(mf_space_create(mesh, p, &s));
    int n;
    double *P = dof_points(s, dim, ncomp, &n);
    const int nn = n * ncomp;
    ld *R = calloc((size_t)nn * nn, sizeof(ld));
    int *hits = calloc((size_t)n, sizeof(int)), de[SX_NM];
    ld alpha, beta;
    const lin_coef *cm, *cs;
    op_weights(oc, &alpha, &cm, &beta, &cs);
    for (int e = 0; e < m.nc; e++) {
      ld J[3][3], Ji[3][3], x0[3], G[3][3], em[4], es[4];
      sx_cell_jacobian(&m, e, J, x0);
      const ld det = fabsl(inverse(dim, J, Ji));
      for (int k = 0; k < dim; k++)
        for (int l = 0; l < dim; l++) {
          G[k][l] = 0.0L;
          for (int r = 0; r < dim; r++) G[k][l] += Ji[k][r] * Ji[l][r];
        }
      coef_in_cell(dim, cm, x0, J, em);
      coef_in_cell(dim, cs, x0, J, es);
      for (int i = 0; i < N; i++) {
        ld x[3] = {0, 0, 0};
        for (int k = 0; k < dim; k++) {
          x[k] = x0[k];
          for (int l = 0; l < dim; l++) x[k] += J[k][l] * t->node[i][l];
        }
        const int d = find_dof(P, n, dim, x);
        T_CHECK(d >= 0, "%s P%d: no DoF at the node (%g, %g, %g) of cell %d", m.name, p, (double)x[0], (double)x[1],
                (double)x[2], e);
        de[i] = d < 0 ? 0 : d;
        if (d >= 0) hits[d]++;
      }
      for (int i = 0; i < N; i++)
        for (int j = 0; j < N; j++) {
          const size_t ij = (size_t)i * N + j;
          if (oc->kind < 3) {
            ld v = 0.0L;
            for (int w = 0; w <= dim; w++) {
              ld sk = 0.0L;
              for (int k = 0; k < dim; k++)
                for (int l = 0; l < dim; l++) sk += G[k][l] * t->S[w][k][l][ij];
              v += alpha * em[w] * t->M[w][ij] + beta * es[w] * sk;
            }
            R[(size_t)de[i] * nn + de[j]] += det * v;
          } else /* (i, r), (j, c): int lambda g_ir g_jc + mu (delta_rc g_i . g_j + g_ic g_jr), g = J^-T grad phi */
            for (int r = 0; r < dim; r++)
              for (int cc = 0; cc < dim; cc++) {
                ld v = 0.0L;
                for (int k = 0; k < dim; k++)
                  for (int l = 0; l < dim; l++)
                    v += t->S[0][k][l][ij] *
                         (LAMBDA * Ji[k][r] * Ji[l][cc] + MU * ((r == cc) * G[k][l] + Ji[k][cc] * Ji[l][r]));
                R[((size_t)de[i] * dim + r) * nn + (size_t)de[j] * dim + cc] += det * v;
              }
        }
    }
    for (int i = 0; i < n; i++) T_CHECK(hits[i] > 0, "%s P%d: DoF %d at no node of the test's cells", m.name, p, i);
    mf_operator op = make_op(s, oc);
    double *L = library_matrix(op, s, nn);
    char what[160];
    snprintf(what, sizeof what, "%s %dD P%d %s", m.name, dim, p, oc->name);
    compare(what, nn, L, R, 1e-12);
    free(L);
    mf_operator_destroy(&op);
    free(R), free(hits), free(P);
    mf_space_destroy(&s);
  }
  mf_mesh_destroy(&mesh);
}

/* ------------------------------------------------------------------ Helmholtz = a M + b K(c) */

/* On random x: H x against a M x + b K x, H Helmholtz(a, b, c), M the mass (no c), K Laplace(c); with
 * the geometry on the fly (hex) and assembled H as well. */
static void identity(mf_context ctx, const char *name, int dim, int level, int p, const char *path, mf_quadrature quad,
                     int hex)
{
  mf_mesh mesh;
  mf_space s;
  if (path) T_CALL(mf_mesh_create_from_file(ctx, path, dim, &mesh));
  else T_CALL(mf_mesh_create(ctx, name, dim, level, &mesh));
  T_CALL(mf_space_create(mesh, p, &s));
  mf_operator M, K, H[3];
  T_CALL(mf_operator_create_mass(s, quad, NULL, NULL, &M));
  T_CALL(mf_operator_create_laplace(s, quad, coef_curved, NULL, &K));
  int nh = 0;
  T_CALL(mf_operator_create_helmholtz(s, quad, HA, HB, coef_curved, NULL, &H[nh++]));
  if (hex) {
    T_CALL(mf_operator_create_helmholtz(s, quad, HA, HB, coef_curved, NULL, &H[nh]));
    T_CALL(mf_operator_set_geometry(H[nh++], MF_GEOMETRY_ON_THE_FLY));
  }
  T_CALL(mf_operator_create_assembled(H[0], &H[nh++]));
  mf_vector x, y;
  T_CALL(mf_vector_create(s, &x));
  T_CALL(mf_vector_create(s, &y));
  T_CALL(mf_vector_set_random(x, 29 + p));
  int n, nl;
  T_CALL(mf_space_local_sizes(s, &n, &nl));
  double *mx = malloc(sizeof(double) * n), *kx = malloc(sizeof(double) * n), *hx = malloc(sizeof(double) * n);
  T_CALL(mf_operator_apply(M, x, y));
  T_CALL(mf_vector_get_values(y, mx));
  T_CALL(mf_operator_apply(K, x, y));
  T_CALL(mf_vector_get_values(y, kx));
  double scale = 0.0, sm = 0.0, sk = 0.0;
  for (int i = 0; i < n; i++) {
    scale = fmax(scale, fabs(HA * mx[i]) + fabs(HB * kx[i]));
    sm = fmax(sm, fabs(mx[i])), sk = fmax(sk, fabs(kx[i]));
  }
  T_CHECK(sm > 0.0 && sk > 0.0, "%s P%d: M x and K x nonzero (%g, %g)", name, p, sm, sk);
  static const char *const hname[2][3] = {{"stored", "assembled", ""}, {"stored", "on the fly", "assembled"}};
  for (int h = 0; h < nh; h++) {
    T_CALL(mf_operator_apply(H[h], x, y));
    T_CALL(mf_vector_get_values(y, hx));
    double err = 0.0;
    int worst = 0;
    for (int i = 0; i < n; i++) {
      const double d = fabs(hx[i] - (HA * mx[i] + HB * kx[i]));
      if (d > err) err = d, worst = i;
    }
    T_CHECK(err <= 1e-12 * scale,
            "%s %dD p = %d quadrature %d, Helmholtz (%s): (H x)_%d = %.17g, a (M x) + b (K x) = %.17g (%.1e of %.3e)",
            path ? path : name, dim, p, (int)quad, hname[hex][h], worst, hx[worst], HA * mx[worst] + HB * kx[worst],
            err / scale, scale);
  }
  free(mx), free(kx), free(hx);
  mf_vector_destroy(&x), mf_vector_destroy(&y);
  mf_operator_destroy(&M), mf_operator_destroy(&K);
  for (int h = 0; h < nh; h++) mf_operator_destroy(&H[h]);
  mf_space_destroy(&s);
  mf_mesh_destroy(&mesh);
}

/* ------------------------------------------------------------------ polynomials with known results */

/* u = sum_t coef_t X^e_t (monomials in X = A^-1 x, A the shear or the identity) */
typedef struct {
  int dim, sheared, nt;
  ld coef[4];
  int e[4][3];
} poly_u;

static double poly_fn(const double *x, int dim, void *user)
{
  const poly_u *u = (const poly_u *)user;
  ld X[3] = {0, 0, 0}, s = 0.0L;
  shear_inverse(dim, u->sheared, x, X);
  for (int t = 0; t < u->nt; t++) {
    ld v = u->coef[t];
    for (int k = 0; k < dim; k++) v *= powl(X[k], u->e[t][k]);
    s += v;
  }
  return (double)s;
}

/* Over the unit square/cube (X) mapped by A: int u^2 dx = |det A| sum_st c_s c_t prod_k 1/(e_sk + e_tk + 1)
 * and int |grad u|^2 dx = |det A| sum_kl G_kl int d_k u d_l u dX, G = A^-1 A^-T. Domains of simplices
 * (the unit square/cube split into cells) give the same numbers. */
static void poly_integrals(const poly_u *u, ld *uu, ld *gg)
{
  const int dim = u->dim;
  ld A[3][3], Ai[3][3], G[3][3];
  shear_matrix(dim, u->sheared, A);
  const ld det = fabsl(inverse(dim, A, Ai));
  for (int k = 0; k < dim; k++)
    for (int l = 0; l < dim; l++) {
      G[k][l] = 0.0L;
      for (int m = 0; m < dim; m++) G[k][l] += Ai[k][m] * Ai[l][m];
    }
  *uu = *gg = 0.0L;
  for (int s = 0; s < u->nt; s++)
    for (int t = 0; t < u->nt; t++) {
      ld v = u->coef[s] * u->coef[t];
      for (int k = 0; k < dim; k++) v /= (ld)(u->e[s][k] + u->e[t][k] + 1);
      *uu += det * v;
      for (int k = 0; k < dim; k++)
        for (int l = 0; l < dim; l++) {
          if (u->e[s][k] == 0 || u->e[t][l] == 0) continue;
          ld w = u->coef[s] * u->coef[t] * u->e[s][k] * u->e[t][l];
          for (int m = 0; m < dim; m++) w /= (ld)(u->e[s][m] - (m == k) + u->e[t][m] - (m == l) + 1);
          *gg += det * G[k][l] * w;
        }
    }
}

/* The largest diagonal entry of A: the scale of its entries (|A_ij| <= max A_ii for these symmetric
 * positive semidefinite matrices), against which sums that vanish are measured. */
static double diag_max(mf_operator A, mf_space s)
{
  int n, nl;
  T_CALL(mf_space_local_sizes(s, &n, &nl));
  mf_vector d;
  T_CALL(mf_vector_create(s, &d));
  T_CALL(mf_operator_diagonal(A, d));
  double *v = malloc(sizeof(double) * n), m = 0.0;
  T_CALL(mf_vector_get_values(d, v));
  for (int i = 0; i < n; i++) m = fmax(m, fabs(v[i]));
  free(v);
  mf_vector_destroy(&d);
  return m;
}

static double dotv(const double *a, const double *b, int n)
{
  double s = 0.0;
  for (int i = 0; i < n; i++) s += a[i] * b[i];
  return s;
}

/* On a mesh of the unit square/cube mapped by A (sheared or not): u^T M u, u^T K u, K 1, 1^T M 1,
 * 1^T M_c 1 and (K u)_i at interior DoFs for a linear u. hex: Q_p, u of degree p per direction;
 * else P_p, u of total degree p. */
static void polynomials(mf_context ctx, const char *name, int dim, int level, const char *path, int sheared, int p,
                        int hex)
{
  mf_mesh mesh;
  mf_space s;
  if (path) T_CALL(mf_mesh_create_from_file(ctx, path, dim, &mesh));
  else T_CALL(mf_mesh_create(ctx, name, dim, level, &mesh));
  T_CALL(mf_space_create(mesh, p, &s));
  const char *label = path ? path : name;
  int n;
  double *P = dof_points(s, dim, 1, &n);
  double *u = malloc(sizeof(double) * n), *y = malloc(sizeof(double) * n), *one = malloc(sizeof(double) * n);
  for (int i = 0; i < n; i++) one[i] = 1.0;
  const int cuda = !strcmp(mf_context_backend(ctx), "cuda");
  ld A[3][3], Ai[3][3];
  shear_matrix(dim, sheared, A);
  const ld det = fabsl(inverse(dim, A, Ai));
  /* u^T M u, u^T K u and 1^T M 1 by each rule exact for them: Gauss q = p + 1 and p + 2 (simplices: the
   * rules of degree 2p and 2p + 2, the latter not on cuda) with u of degree p, and on hexahedra
   * Gauss-Lobatto q = p + 1 (exact to degree 2p - 1 per direction) with u of degree p - 1 */
  for (int r = 0; r < (hex ? 3 : cuda ? 1 : 2); r++) {
    const mf_quadrature quad = r == 0 ? MF_QUAD_GAUSS : r == 1 ? MF_QUAD_GAUSS_P2 : MF_QUAD_GLL;
    const int deg = r == 2 ? p - 1 : p;
    if (deg < 1) continue;
    /* u of degree deg: hex X^deg Y^(deg-1) (Z) + 0.5 X - 0.25, simplex of total degree deg */
    poly_u pu = {dim, sheared, 3, {1.0L, 0.5L, -0.25L}, {{0}}};
    if (hex) pu.e[0][0] = deg, pu.e[0][1] = deg - 1, pu.e[0][2] = dim == 3 ? 1 : 0;
    else if (dim == 2) pu.e[0][0] = deg - 1, pu.e[0][1] = 1;
    else pu.e[0][0] = deg >= 2 ? deg - 2 : 0, pu.e[0][1] = 1, pu.e[0][2] = deg >= 2 ? 1 : 0;
    pu.e[1][0] = 1;
    ld uu, gg;
    poly_integrals(&pu, &uu, &gg);
    mf_vector vu;
    T_CALL(mf_vector_create(s, &vu));
    T_CALL(mf_vector_interpolate(vu, poly_fn, &pu));
    T_CALL(mf_vector_get_values(vu, u));
    mf_vector_destroy(&vu);
    mf_operator Mq, Kq;
    T_CALL(mf_operator_create_mass(s, quad, NULL, NULL, &Mq));
    T_CALL(mf_operator_create_laplace(s, quad, NULL, NULL, &Kq));
    apply_host(Mq, s, u, y);
    const double uMu = dotv(u, y, n);
    T_CHECK(fabs(uMu - (double)uu) <= 1e-12 * (double)uu, "%s %dD p = %d quadrature %d: u^T M u = %.17g, int u^2 = %.17g",
            label, dim, p, (int)quad, uMu, (double)uu);
    apply_host(Kq, s, u, y);
    const double uKu = dotv(u, y, n);
    T_CHECK(fabs(uKu - (double)gg) <= 1e-12 * (double)gg,
            "%s %dD p = %d quadrature %d: u^T K u = %.17g, int |grad u|^2 = %.17g", label, dim, p, (int)quad, uKu,
            (double)gg);
    apply_host(Mq, s, one, y);
    double vol = 0.0;
    for (int i = 0; i < n; i++) vol += y[i];
    T_CHECK(fabs(vol - (double)det) <= 1e-13, "%s %dD p = %d quadrature %d: 1^T M 1 = %.17g, the volume %.17g", label,
            dim, p, (int)quad, vol, (double)det);
    mf_operator_destroy(&Mq), mf_operator_destroy(&Kq);
  }
  /* K 1 = 0 (c = 1 and c linear) */
  mf_operator K, Kc;
  T_CALL(mf_operator_create_laplace(s, MF_QUAD_GAUSS, NULL, NULL, &K));
  T_CALL(mf_operator_create_laplace(s, MF_QUAD_GAUSS, coef_fn, NULL, &Kc));
  for (int kk = 0; kk < 2; kk++) {
    apply_host(kk ? Kc : K, s, one, y);
    const double dmax = diag_max(kk ? Kc : K, s);
    double err = 0.0;
    for (int i = 0; i < n; i++) err = fmax(err, fabs(y[i]));
    T_CHECK(err <= 1e-12 * dmax, "%s %dD p = %d: Laplace%s of 1: |K 1| = %.3e (largest diagonal entry %.3e)", label, dim,
            p, kk ? " with c" : "", err, dmax);
  }
  /* 1^T M_c 1 = int c = |det A| c(A (1/2, 1/2, 1/2)); simplices: the rule of degree 2p is not exact for
   * phi_i c with a linear c, 2p + 2 is (not on cuda) */
  mf_operator Mc = NULL;
  if (hex || !cuda) {
    T_CALL(mf_operator_create_mass(s, hex ? MF_QUAD_GAUSS : MF_QUAD_GAUSS_P2, coef_fn, NULL, &Mc));
    apply_host(Mc, s, one, y);
    ld cint = COEF.c0;
    for (int k = 0; k < dim; k++)
      for (int l = 0; l < dim; l++) cint += COEF.g[k] * A[k][l] * 0.5L;
    cint *= det;
    double ic = 0.0;
    for (int i = 0; i < n; i++) ic += y[i];
    T_CHECK(fabs(ic - (double)cint) <= 1e-13 * (double)cint, "%s %dD p = %d: 1^T M_c 1 = %.17g, int c = %.17g", label,
            dim, p, ic, (double)cint);
  }
  mf_vector vu;
  /* a linear u: (K u)_i = 0 where phi_i vanishes on the boundary (the interior DoFs) */
  poly_u lu = {dim, sheared, 4, {0.3L, 1.0L, -2.0L, 0.5L}, {{0, 0, 0}, {1, 0, 0}, {0, 1, 0}, {0, 0, 1}}};
  if (dim == 2) lu.nt = 3;
  T_CALL(mf_vector_create(s, &vu));
  T_CALL(mf_vector_interpolate(vu, poly_fn, &lu));
  T_CALL(mf_vector_get_values(vu, u));
  mf_vector_destroy(&vu);
  apply_host(K, s, u, y);
  const double kmax = diag_max(K, s);
  double err = 0.0;
  int ninterior = 0, worst = -1;
  for (int i = 0; i < n; i++) {
    ld X[3];
    shear_inverse(dim, sheared, &P[3 * i], X);
    int interior = 1;
    for (int k = 0; k < dim; k++) interior &= X[k] > 1e-9L && X[k] < 1.0L - 1e-9L;
    if (!interior) continue;
    ninterior++;
    if (fabs(y[i]) > err) err = fabs(y[i]), worst = i;
  }
  /* (the 6 tetrahedra of one cube have no interior vertex: P1 has no interior DoF there) */
  T_CHECK(ninterior > 0 || (path && dim == 3 && p == 1), "%s %dD p = %d: no interior DoF", label, dim, p);
  T_CHECK(err <= 1e-12 * kmax, "%s %dD p = %d: (K u)_%d = %.3e at an interior DoF for a linear u (largest diagonal entry %.3e)",
          label, dim, p, worst, err, kmax);
  mf_operator_destroy(&Mc), mf_operator_destroy(&K), mf_operator_destroy(&Kc);
  free(u), free(y), free(one), free(P);
  mf_space_destroy(&s);
  mf_mesh_destroy(&mesh);
}

/* Elasticity on the file mesh (the unit square/cube mapped by the shear A): for u = B x,
 * u^T A u = vol (lambda tr(B)^2 + 2 mu |sym B|^2); a rigid motion (B antisymmetric, plus a translation)
 * is in the kernel. */
static void elasticity_polynomials(mf_context ctx, const char *path, int dim, int p)
{
  mf_mesh mesh;
  mf_space s;
  T_CALL(mf_mesh_create_from_file(ctx, path, dim, &mesh));
  T_CALL(mf_space_create_components(mesh, p, dim, &s));
  mf_operator E;
  T_CALL(mf_operator_create_elasticity(s, LAMBDA, MU, &E));
  int n;
  double *P = dof_points(s, dim, dim, &n);
  const int nn = n * dim;
  double *u = malloc(sizeof(double) * nn), *y = malloc(sizeof(double) * nn);
  static const double B[3][3] = {{0.3, -0.7, 0.2}, {0.4, 1.1, -0.5}, {0.9, 0.1, -0.6}};
  ld As[3][3], Ai[3][3];
  shear_matrix(dim, 1, As);
  const double vol = (double)fabsl(inverse(dim, As, Ai));
  double tr = 0.0, ss = 0.0;
  for (int k = 0; k < dim; k++) {
    tr += B[k][k];
    for (int l = 0; l < dim; l++) ss += 0.25 * (B[k][l] + B[l][k]) * (B[k][l] + B[l][k]);
  }
  const double expect = vol * (LAMBDA * tr * tr + 2.0 * MU * ss);
  for (int i = 0; i < n; i++)
    for (int c = 0; c < dim; c++) {
      u[i * dim + c] = 0.0;
      for (int k = 0; k < dim; k++) u[i * dim + c] += B[c][k] * P[3 * i + k];
    }
  apply_host(E, s, u, y);
  const double uAu = dotv(u, y, nn);
  T_CHECK(fabs(uAu - expect) <= 1e-12 * expect, "%s P%d elasticity: u^T A u = %.17g for u = B x, expected %.17g", path, p,
          uAu, expect);
  const double dmax = diag_max(E, s);
  /* rotation + translation: u = W x + t, W antisymmetric */
  static const double W[3][3] = {{0.0, 0.8, -0.3}, {-0.8, 0.0, 0.5}, {0.3, -0.5, 0.0}}, tr3[3] = {0.2, -0.4, 0.7};
  for (int i = 0; i < n; i++)
    for (int c = 0; c < dim; c++) {
      u[i * dim + c] = tr3[c];
      for (int k = 0; k < dim; k++) u[i * dim + c] += W[c][k] * P[3 * i + k];
    }
  apply_host(E, s, u, y);
  double err = 0.0;
  for (int i = 0; i < nn; i++) err = fmax(err, fabs(y[i]));
  T_CHECK(err <= 1e-12 * dmax, "%s P%d elasticity: |A u| = %.3e for a rigid motion (largest diagonal entry %.3e)", path, p,
          err, dmax);
  mf_operator_destroy(&E);
  free(u), free(y), free(P);
  mf_space_destroy(&s);
  mf_mesh_destroy(&mesh);
}

/* ------------------------------------------------------------------ main */

int main(int argc, char **argv)
{
  MPI_Init(&argc, &argv);
  const char *be = t_backend(argc, argv);
  const char *dir = argc > 2 ? argv[2] : ".";
  const int cuda = !strcmp(be, "cuda");
  mf_context ctx;
  T_CALL(mf_context_create(MPI_COMM_WORLD, be, &ctx));

  /* Q_p: the element matrices on one cell, and assembled over 2^dim cells */
  static const op_case hex_cases[] = {
      {"mass", 0, MF_QUAD_GAUSS, 0, 0},
      {"mass with c", 0, MF_QUAD_GAUSS, 1, 0},
      {"Laplace with c", 1, MF_QUAD_GAUSS, 1, 0},
      {"Helmholtz", 2, MF_QUAD_GAUSS, 1, 0},
      {"Helmholtz q = p + 2", 2, MF_QUAD_GAUSS_P2, 1, 0},
      {"Helmholtz geometry on the fly", 2, MF_QUAD_GAUSS, 1, 1},
      {"Helmholtz assembled", 2, MF_QUAD_GAUSS, 1, 2},
      {"Laplace assembled", 1, MF_QUAD_GAUSS, 1, 2},
  };
  const int nhex = (int)(sizeof hex_cases / sizeof hex_cases[0]);
  for (int sheared = 0; sheared < 2; sheared++) {
    const char *name = sheared ? "sheared" : "cube";
    for (int p = 1; p <= 8; p++) hex_matrices(ctx, 2, p, name, 0, hex_cases, nhex);
    for (int p = 1; p <= 6; p++) hex_matrices(ctx, 2, p, name, 1, hex_cases, nhex);
    for (int p = 1; p <= 6; p++) hex_matrices(ctx, 3, p, name, 0, hex_cases, nhex);
    for (int p = 1; p <= 3; p++) hex_matrices(ctx, 3, p, name, 1, hex_cases, nhex);
  }

  /* P_p on the test's Gmsh files; mass with a linear c needs the rule of degree 2p + 2 (not on cuda) */
  static const op_case sx_cases[] = {
      {"mass", 0, MF_QUAD_GAUSS, 0, 0},
      {"Laplace with c", 1, MF_QUAD_GAUSS, 1, 0},
      {"Helmholtz", 2, MF_QUAD_GAUSS, 1, 0},
      {"Helmholtz assembled", 2, MF_QUAD_GAUSS, 1, 2},
      {"elasticity", 3, MF_QUAD_GAUSS, 0, 0},
      {"mass with c", 0, MF_QUAD_GAUSS_P2, 1, 0},
      {"Helmholtz rule 2p + 2", 2, MF_QUAD_GAUSS_P2, 1, 0},
  };
  const int nsx = cuda ? 5 : (int)(sizeof sx_cases / sizeof sx_cases[0]);
  const int sx_pmax = cuda ? 4 : SX_PMAX;
  for (int dim = 2; dim <= 3; dim++)
    for (int p = 1; p <= sx_pmax; p++) {
      sx_tables t;
      sx_tables_make(dim, p, &t);
      for (int which = 0; which < 3; which++) /* the 6 tetrahedra up to P4: each P_p apply costs there */
        if (which < 2 || dim == 2 || p <= 4) sx_matrices(ctx, dir, be, dim, p, which, &t, sx_cases, nsx);
      sx_tables_free(&t);
    }

  /* Helmholtz(a, b, c) = a M + b K(c) on random vectors, curved meshes included */
  static const mf_quadrature quads[3] = {MF_QUAD_GAUSS, MF_QUAD_GAUSS_P2, MF_QUAD_GLL};
  static const char *const curved[3] = {"ball", "deformed", "sheared"};
  for (int dim = 2; dim <= 3; dim++)
    for (int m = 0; m < 3; m++)
      for (int p = 1; p <= (dim == 2 ? 6 : 3); p++)
        for (int q = 0; q < 3; q++) identity(ctx, curved[m], dim, dim == 2 ? 2 : 1, p, NULL, quads[q], 1);
  for (int dim = 2; dim <= 3; dim++) {
    char path[4096];
    snprintf(path, sizeof path, "%s/t29_reference_%s_%dd_2.msh", dir, be, dim);
    for (int p = 1; p <= sx_pmax; p++)
      for (int q = 0; q < (cuda ? 1 : 2); q++) {
        identity(ctx, dim == 2 ? "square-tris" : "cube-tets", dim, dim == 2 ? 2 : p <= 4 ? 1 : 0, p, NULL, quads[q], 0);
        identity(ctx, "file", dim, 0, p, path, quads[q], 0);
      }
  }

  /* polynomials with known integrals */
  for (int dim = 2; dim <= 3; dim++)
    for (int sheared = 0; sheared < 2; sheared++)
      for (int p = 1; p <= (dim == 2 ? 8 : 4); p++)
        polynomials(ctx, sheared ? "sheared" : "cube", dim, dim == 2 ? 2 : 1, NULL, sheared, p, 1);
  for (int dim = 2; dim <= 3; dim++) {
    char path[4096];
    snprintf(path, sizeof path, "%s/t29_reference_%s_%dd_2.msh", dir, be, dim);
    for (int p = 1; p <= sx_pmax; p++) {
      polynomials(ctx, dim == 2 ? "square-tris" : "cube-tets", dim, dim == 2 ? 2 : 1, NULL, 0, p, 0);
      polynomials(ctx, "file", dim, 0, path, 1, p, 0);
      elasticity_polynomials(ctx, path, dim, p);
    }
  }

  mf_context_destroy(&ctx);
  return t_finish();
}
