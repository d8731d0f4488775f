/* t41_refine -- uniform refinement of simplex meshes (mf_mesh_refine, lib/simplex/refine.c), on the
 * built-in meshes and the Gmsh files of tests/gmsh: over four levels (three in 3D from a file) the cells
 * multiply by 2^dim and stay positively oriented; volume and each tag's boundary measure are preserved;
 * the mesh is conforming (no facet of three cells or more, the boundary facets are 2^(dim-1) times the
 * coarse ones and those of one cell only); the boundary tags are inherited (each tag's facet count scales
 * too); the smallest angle (2D) or dihedral angle (3D) stays above a bound; the coarse vertices keep their
 * indices and coordinates; child k of cell e is cell 2^dim e + k, inside its parent. A P2 Poisson solve on
 * a refined Gmsh cube converges at rate 3. Multigrid on simplices: the transfers exact on the coarse
 * space and R = P^T (p and h), CG iterations bounded and flat over three refinements; the refusals.
 * `t41_refine DIR cuda`: the transfers' checks on the cuda backend, the transfers and the DoF numbering made on
 * the device against the cpu's (P x and P^T y to 1e-13; the numbering and the DoF points exactly), and multigrid there against the cpu's (the same CG iterations +-1, the
 * solutions to 1e-10). Elasticity with multigrid on P1 and P2 tetrahedra: CG
 * iterations bounded by 30 and flat over three refinements (on both backends). Multigrid on the unstructured
 * ball with a hole (Gmsh); the V-cycle symmetric and positive; the partitions of simplex meshes (balance,
 * every part used, repeatable). */
#include "mf_test.h"
#include "poisson.h"
#include "simplex/mf_simplex_space.h"
#include "mg/mf_mg.h"

#include <math.h>
#ifdef _OPENMP
#include <omp.h>
#endif

static const mf_simplex_mesh *sx(mf_mesh m) { return (const mf_simplex_mesh *)m->fdata; }

/* the largest of three iteration counts less the smallest */
static int its_spread(const int its[3])
{
  int lo = its[0], hi = its[0];
  for (int k = 1; k < 3; k++) lo = its[k] < lo ? its[k] : lo, hi = its[k] > hi ? its[k] : hi;
  return hi - lo;
}

static void cell_coords(const mf_simplex_mesh *m, int e, double X[4][3])
{
  for (int a = 0; a <= m->dim; a++)
    for (int k = 0; k < 3; k++) X[a][k] = m->coords[3 * (size_t)m->cells[(size_t)e * (m->dim + 1) + a] + k];
}

/* signed measure (area / volume) of a cell */
static double measure(const mf_simplex_mesh *m, int e)
{
  double X[4][3];
  cell_coords(m, e, X);
  const double a[3] = {X[1][0] - X[0][0], X[1][1] - X[0][1], X[1][2] - X[0][2]},
               b[3] = {X[2][0] - X[0][0], X[2][1] - X[0][1], X[2][2] - X[0][2]};
  if (m->dim == 2) return 0.5 * (a[0] * b[1] - a[1] * b[0]);
  const double c[3] = {X[3][0] - X[0][0], X[3][1] - X[0][1], X[3][2] - X[0][2]};
  return (a[0] * (b[1] * c[2] - b[2] * c[1]) - a[1] * (b[0] * c[2] - b[2] * c[0]) + a[2] * (b[0] * c[1] - b[1] * c[0])) /
         6.0;
}

static void sub(const double *x, const double *y, double *d)
{
  for (int k = 0; k < 3; k++) d[k] = x[k] - y[k];
}
static void cross(const double *a, const double *b, double *c)
{
  c[0] = a[1] * b[2] - a[2] * b[1], c[1] = a[2] * b[0] - a[0] * b[2], c[2] = a[0] * b[1] - a[1] * b[0];
}
static double dot(const double *a, const double *b) { return a[0] * b[0] + a[1] * b[1] + a[2] * b[2]; }

/* the smallest angle of a triangle or dihedral angle of a tetrahedron, in degrees */
static double min_angle(const mf_simplex_mesh *m, int e)
{
  double X[4][3], best = 180.0;
  cell_coords(m, e, X);
  if (m->dim == 2) {
    for (int a = 0; a < 3; a++) {
      double u[3], v[3];
      sub(X[(a + 1) % 3], X[a], u);
      sub(X[(a + 2) % 3], X[a], v);
      best = fmin(best, acos(dot(u, v) / sqrt(dot(u, u) * dot(v, v))) * 180.0 / M_PI);
    }
    return best;
  }
  for (int a = 0; a < 4; a++) /* the edge (a, b) and the faces on it, through c and d */
    for (int b = a + 1; b < 4; b++) {
      int c = 0, d;
      while (c == a || c == b) c++;
      d = 6 - a - b - c;
      double ab[3], ac[3], ad[3], n1[3], n2[3];
      sub(X[b], X[a], ab), sub(X[c], X[a], ac), sub(X[d], X[a], ad);
      cross(ab, ac, n1), cross(ab, ad, n2);
      best = fmin(best, acos(dot(n1, n2) / sqrt(dot(n1, n1) * dot(n2, n2))) * 180.0 / M_PI);
    }
  return best;
}

/* the measure of boundary facet t (length or area) */
static double facet_measure(const mf_simplex_mesh *m, int t)
{
  const int *f = m->facets + (size_t)t * m->dim;
  double u[3], v[3], n[3];
  sub(&m->coords[3 * (size_t)f[1]], &m->coords[3 * (size_t)f[0]], u);
  if (m->dim == 2) return sqrt(dot(u, u));
  sub(&m->coords[3 * (size_t)f[2]], &m->coords[3 * (size_t)f[0]], v);
  cross(u, v, n);
  return 0.5 * sqrt(dot(n, n));
}

#define MAXTAG 16
typedef struct {
  double volume, tag_measure[MAXTAG], min_angle;
  int tag_count[MAXTAG];
} stats;

static stats mesh_stats(const char *what, int level, const mf_simplex_mesh *m)
{
  stats s;
  memset(&s, 0, sizeof s);
  s.min_angle = 180.0;
  for (int e = 0; e < m->ncells; e++) {
    const double v = measure(m, e);
    T_CHECK(v > 0.0, "%s level %d: cell %d has measure %g", what, level, e, v);
    s.volume += v;
    s.min_angle = fmin(s.min_angle, min_angle(m, e));
  }
  for (int t = 0; t < m->nfacets; t++) {
    const int tag = m->facet_tag[t];
    T_CHECK(tag >= 0 && tag < MAXTAG, "%s level %d: facet %d has tag %d", what, level, t, tag);
    if (tag < 0 || tag >= MAXTAG) continue;
    s.tag_count[tag]++;
    s.tag_measure[tag] += facet_measure(m, t);
  }
  return s;
}

static void refine_case(mf_context ctx, const char *what, mf_mesh coarse, int levels)
{
  const mf_simplex_mesh *m0 = sx(coarse);
  const int dim = m0->dim, nch = dim == 2 ? 4 : 8;
  const stats s0 = mesh_stats(what, 0, m0);
  mf_mesh prev = coarse;
  double first_angle = s0.min_angle;
  for (int l = 1; l <= levels; l++) {
    mf_mesh fine = NULL;
    T_CALL(mf_mesh_refine(prev, 1, &fine));
    const mf_simplex_mesh *c = sx(prev), *f = sx(fine);
    T_CHECK(f->ncells == nch * c->ncells, "%s level %d: %d cells from %d", what, l, f->ncells, c->ncells);
    T_CHECK(f->nfacets == (dim == 2 ? 2 : 4) * c->nfacets, "%s level %d: %d boundary facets from %d", what, l,
            f->nfacets, c->nfacets);
    /* the coarse vertices stay: child k <= dim of cell e has the parent's vertex k as its vertex k */
    for (int e = 0; e < c->ncells; e++)
      for (int k = 0; k <= dim; k++) {
        const double *xc = c->coords + 3 * (size_t)c->cells[(size_t)e * (dim + 1) + k],
                     *xf = f->coords + 3 * (size_t)f->cells[((size_t)nch * e + k) * (dim + 1) + k];
        if (memcmp(xc, xf, 3 * sizeof(double))) {
          T_CHECK(0, "%s level %d: vertex %d of cell %d moved: (%g, %g, %g) in child %d", what, l, k, e, xf[0], xf[1],
                  xf[2], k);
          e = c->ncells;
          break;
        }
      }
    {
      static const int tri_e[3][3] = {{0, 1, 0}, {0, 2, 0}, {1, 2, 0}};
      static const int tet_e[6][3] = {{0, 1, 0}, {0, 2, 0}, {0, 3, 0}, {1, 2, 0}, {1, 3, 0}, {2, 3, 0}};
      mf_simplex_entities ce;
      T_CALL(mf_simplex_entities_create(ctx, c, 2, dim == 2 ? 3 : 6, dim == 2 ? tri_e : tet_e, 0, &ce));
      T_CHECK(f->nv == c->nv + ce.n, "%s level %d: %d vertices from %d and %lld edges", what, l, f->nv, c->nv,
              (long long)ce.n);
      mf_simplex_entities_free(&ce);
    }
    /* child k of cell e inside its parent: its centroid's barycentric coordinates in the parent all positive */
    for (int e = 0; e < c->ncells; e += 7)
      for (int k = 0; k < nch; k++) {
        double P[4][3], C[4][3], g[3] = {0, 0, 0};
        cell_coords(c, e, P);
        cell_coords(f, nch * e + k, C);
        for (int a = 0; a <= dim; a++)
          for (int q = 0; q < 3; q++) g[q] += C[a][q] / (dim + 1);
        mf_simplex_mesh tmp = *c; /* the sub-cells (g, faces of the parent) have positive measure iff g is inside */
        double inside = 1.0;
        for (int a = 0; a <= dim && inside > 0.0; a++) {
          double Y[4][3];
          memcpy(Y, P, sizeof Y);
          memcpy(Y[a], g, sizeof g);
          double cd[12];
          int cv[4] = {0, 1, 2, 3};
          for (int b = 0; b <= dim; b++) memcpy(&cd[3 * b], Y[b], sizeof Y[b]);
          tmp.coords = cd, tmp.cells = cv, tmp.ncells = 1;
          inside = measure(&tmp, 0);
        }
        T_CHECK(inside > 0.0, "%s level %d: child %d of cell %d is not inside it", what, l, k, e);
      }
    const stats s = mesh_stats(what, l, f);
    T_CHECK(fabs(s.volume - s0.volume) <= 1e-12 * s0.volume, "%s level %d: volume %.15g, coarse %.15g", what, l,
            s.volume, s0.volume);
    for (int tag = 0; tag < MAXTAG; tag++) {
      T_CHECK(s.tag_count[tag] == s0.tag_count[tag] << ((dim - 1) * l), "%s level %d: tag %d on %d facets (coarse %d)",
              what, l, tag, s.tag_count[tag], s0.tag_count[tag]);
      T_CHECK(fabs(s.tag_measure[tag] - s0.tag_measure[tag]) <= 1e-12 * (1.0 + s0.tag_measure[tag]),
              "%s level %d: tag %d measures %.15g (coarse %.15g)", what, l, tag, s.tag_measure[tag], s0.tag_measure[tag]);
    }
    /* conforming: no facet of three cells or more; the boundary is the facets of one cell */
    static const int tri[3][3] = {{1, 2, 0}, {0, 2, 0}, {0, 1, 0}};
    static const int tet[4][3] = {{1, 2, 3}, {0, 2, 3}, {0, 1, 3}, {0, 1, 2}};
    mf_simplex_entities E;
    T_CALL(mf_simplex_entities_create(ctx, f, dim, dim + 1, dim == 2 ? tri : tet, 3, &E));
    T_CHECK(E.n == 0, "%s level %d: %lld facets of three cells or more", what, l, (long long)E.n);
    mf_simplex_entities_free(&E);
    T_CALL(mf_simplex_entities_create(ctx, f, dim, dim + 1, dim == 2 ? tri : tet, 1, &E));
    T_CHECK(E.n == f->nfacets, "%s level %d: %lld facets of one cell, %d boundary facets", what, l, (long long)E.n,
            f->nfacets);
    /* and they are the refined mesh's boundary facets, one for one and in the same order (the refinement
     * splits the coarse facets instead of searching the fine cells' facets) */
    int differ = 0;
    for (int v = 0; v < f->nv && E.n == f->nfacets; v++)
      for (int64_t i = E.off[v]; i < E.off[v + 1]; i++) {
        const int *ft = f->facets + (size_t)i * dim;
        const uint64_t nvu = (uint64_t)f->nv;
        differ += ft[0] != v || (dim == 2 ? (uint64_t)ft[1] != E.keys[i]
                                          : (uint64_t)ft[1] != E.keys[i] / nvu || (uint64_t)ft[2] != E.keys[i] % nvu);
      }
    T_CHECK(differ == 0, "%s level %d: %d boundary facets differ from the fine cells' own", what, l, differ);
    mf_simplex_entities_free(&E);
    if (l == 1) first_angle = s.min_angle;
    /* shape: the angles of later levels stay within those of the first refinement (a bound, not a decay) */
    T_CHECK(s.min_angle >= 0.999 * fmin(first_angle, s0.min_angle), "%s level %d: smallest angle %.3f deg (level 1: %.3f)",
            what, l, s.min_angle, first_angle);
    if (getenv("T41_VERBOSE"))
      printf("%s level %d: %d cells, smallest angle %.2f deg\n", what, l, f->ncells, s.min_angle);
    if (prev != coarse) mf_mesh_destroy(&prev);
    prev = fine;
  }
  if (prev != coarse) mf_mesh_destroy(&prev);
}

/* P2 Poisson (the app's problem, apps/poisson.h) on a mesh: the L2 error */
static double poisson_error(mf_mesh mesh)
{
  poisson_result r;
  memset(&r, 0, sizeof r);
  T_CALL(poisson_solve(mesh, 2, POISSON_COEF_CONSTANT, 1e-12, &r));
  return r.l2_error;
}

/* Multigrid on simplices (p-coarsening to P1, then the nested meshes of mf_mesh_refine): CG iterations to
 * 1e-8 bounded and flat over three refinements, P1..P3 (P4 in 2D), built-in and Gmsh meshes */
static void multigrid_case(mf_context ctx, const char *dir)
{
  const poisson_pc mgopt = {MF_PC_MULTIGRID, 0, 0, MF_PRECISION_DOUBLE};
  for (int dim = 2; dim <= 3; dim++)
    for (int file = 0; file <= 1; file++)
      for (int p = 1; p <= (dim == 2 ? 4 : 3); p++) {
        if (file && p > (dim == 2 ? 2 : 1)) continue;
        mf_mesh base = NULL;
        char path[1024];
        snprintf(path, sizeof path, "%s/%s", dir, dim == 2 ? "square41.msh" : "cube41.msh");
        if (file) T_CALL(mf_mesh_create_from_file(ctx, path, 0, &base));
        else T_CALL(mf_mesh_create(ctx, dim == 2 ? "square-tris" : "cube-tets", dim, 1, &base));
        int its[3];
        const int l0 = dim == 2 || file ? 2 : 1; /* the file's cube once refined has one interior vertex */
        for (int k = 0; k < 3; k++) {
          mf_mesh mesh = NULL;
          poisson_result r;
          T_CALL(mf_mesh_refine(base, l0 + k, &mesh));
          T_CALL(poisson_solve_pc(mesh, p, POISSON_COEF_CONSTANT, 1e-8, &mgopt, &r));
          T_CHECK(r.converged && r.iterations <= 12 && r.levels >= 2 + l0 + k - (p == 1),
                  "multigrid %s %dD P%d refined %d times: %d iterations (%s), %d levels", file ? path : "box", dim, p,
                  l0 + k, r.iterations, r.converged ? "converged" : "not converged", r.levels);
          its[k] = r.iterations;
          if (getenv("T41_VERBOSE")) printf("mg %s %dD P%d refine %d: %d iterations, %d levels\n", file ? "file" : "box", dim, p, l0 + k, r.iterations, r.levels);
          mf_mesh_destroy(&mesh);
        }
        const int spread = its_spread(its);
        T_CHECK(spread <= 2, "multigrid %dD P%d: iterations %d %d %d not flat", dim, p, its[0], its[1], its[2]);
        if (!file && p == 2) { /* the coarsest level assembled (its CSR matrix): the same iterations, +-1 */
          poisson_pc aopt = mgopt;
          aopt.coarse = MF_MG_COARSE_ASSEMBLED;
          mf_mesh mesh = NULL;
          poisson_result r;
          T_CALL(mf_mesh_refine(base, l0 + 1, &mesh));
          T_CALL(poisson_solve_pc(mesh, p, POISSON_COEF_CONSTANT, 1e-8, &aopt, &r));
          T_CHECK(r.converged && abs(r.iterations - its[1]) <= 1, "multigrid %dD P2, coarsest assembled: %d iterations (%d)",
                  dim, r.iterations, its[1]);
          mf_mesh_destroy(&mesh);
        }
        mf_mesh_destroy(&base);
      }
}

/* Linear elasticity (E = 1, nu = 0.3; clamped at x = 0, tag 1) on P1 and P2 tetrahedra with multigrid: CG to
 * 1e-8 within 30 iterations and flat (within 3) over three refinements of the level-1 cube, 1..3 times
 * (T41_ELASTICITY_FIRST=L: L..L+2 times, for larger runs by hand) */
static double load(const double *x, int dim, void *user)
{
  (void)x, (void)dim, (void)user;
  return 1.0;
}
static void elasticity_case(mf_context ctx)
{
  const double E = 1.0, nu = 0.3, lambda = E * nu / ((1 + nu) * (1 - 2 * nu)), mu = E / (2 * (1 + nu));
  const int clamped = 1, l0 = getenv("T41_ELASTICITY_FIRST") ? atoi(getenv("T41_ELASTICITY_FIRST")) : 1;
  T_CHECK(l0 >= 1 && l0 <= 6, "T41_ELASTICITY_FIRST=%d out of range 1..6", l0);
  for (int p = 1; p <= 2 && l0 >= 1 && l0 <= 6; p++) {
    int its[3];
    mf_mesh base = NULL;
    T_CALL(mf_mesh_create(ctx, "cube-tets", 3, 1, &base));
    for (int k = 0; k < 3; k++) {
      mf_mesh mesh = NULL;
      mf_space s = NULL;
      mf_operator A = NULL;
      mf_pc pc = NULL;
      mf_cg cg = NULL;
      mf_vector b = NULL, u = NULL;
      mf_cg_info info;
      T_CALL(mf_mesh_refine(base, l0 + k, &mesh));
      T_CALL(mf_space_create_components(mesh, p, 3, &s));
      T_CALL(mf_space_set_dirichlet_tags(s, 1, &clamped));
      T_CALL(mf_operator_create_elasticity(s, lambda, mu, &A));
      T_CALL(mf_operator_set_dirichlet(A, 1));
      T_CALL(mf_vector_create(s, &b));
      T_CALL(mf_vector_create(s, &u));
      T_CALL(mf_vector_interpolate(b, load, NULL));
      T_CALL(mf_vector_zero_boundary(b));
      T_CALL(mf_vector_set_value(u, 0.0));
      T_CALL(mf_pc_create(A, MF_PC_MULTIGRID, &pc));
      T_CALL(mf_cg_create(A, &cg));
      T_CALL(mf_cg_set_pc(cg, pc));
      T_CALL(mf_cg_set_tolerance(cg, 1e-8, 200));
      T_CALL(mf_cg_solve(cg, b, u, &info));
      T_CHECK(info.converged && info.iterations <= 30, "elasticity %s P%d refined %d times: %d iterations (%s)",
              mf_context_backend(ctx), p, l0 + k, info.iterations, info.converged ? "converged" : "not converged");
      its[k] = info.iterations;
      if (k == 1) { /* the float V-cycle: within 1 iteration of the double one */
        mf_cg_info finfo;
        T_CALL(mf_pc_set_multigrid_precision(pc, MF_PRECISION_FLOAT));
        T_CALL(mf_pc_setup(pc));
        T_CALL(mf_vector_set_value(u, 0.0));
        T_CALL(mf_cg_solve(cg, b, u, &finfo));
        T_CHECK(finfo.converged && finfo.iterations <= info.iterations + 1,
                "elasticity %s P%d refined %d times, float V-cycle: %d iterations (%s; double %d)",
                mf_context_backend(ctx), p, l0 + k, finfo.iterations, finfo.converged ? "converged" : "not converged",
                info.iterations);
      }
      if (getenv("T41_VERBOSE"))
        printf("elasticity mg %s P%d refine %d: %lld DoFs, %d iterations, solve %.3f s\n", mf_context_backend(ctx), p,
               l0 + k, (long long)s->nglobal, info.iterations, info.seconds);
      mf_cg_destroy(&cg);
      mf_pc_destroy(&pc);
      mf_vector_destroy(&b), mf_vector_destroy(&u);
      mf_operator_destroy(&A);
      mf_space_destroy(&s);
      mf_mesh_destroy(&mesh);
    }
    const int spread = its_spread(its);
    T_CHECK(spread <= 3, "elasticity P%d: iterations %d %d %d not flat", p, its[0], its[1], its[2]);
    mf_mesh_destroy(&base);
  }
}

/* Multigrid on an unstructured Gmsh mesh: the ball with a spherical hole (tests/gmsh/sphere_hole.geo), P2,
 * refined 0, 1, 2 times: CG to 1e-8 within 12 iterations and within 2 of each other */
static void sphere_case(mf_context ctx, const char *dir)
{
  const poisson_pc mgopt = {MF_PC_MULTIGRID, 0, 0, MF_PRECISION_DOUBLE};
  char path[1024];
  snprintf(path, sizeof path, "%s/sphere_hole.msh", dir);
  mf_mesh base = NULL;
  T_CALL(mf_mesh_create_from_file(ctx, path, 0, &base));
  int its[3];
  for (int k = 0; k < 3; k++) {
    mf_mesh mesh = NULL;
    poisson_result r;
    T_CALL(mf_mesh_refine(base, k, &mesh));
    T_CALL(poisson_solve_pc(mesh, 2, POISSON_COEF_CONSTANT, 1e-8, &mgopt, &r));
    T_CHECK(r.converged && r.iterations <= 12, "multigrid on %s P2 refined %d times: %d iterations (%s)", path, k,
            r.iterations, r.converged ? "converged" : "not converged");
    its[k] = r.iterations;
    if (getenv("T41_VERBOSE")) printf("mg sphere_hole P2 refine %d: %lld DoFs, %d iterations\n", k, (long long)r.ndofs, r.iterations);
    mf_mesh_destroy(&mesh);
  }
  const int spread = its_spread(its);
  T_CHECK(spread <= 2, "multigrid on %s P2: iterations %d %d %d not flat", path, its[0], its[1], its[2]);
  mf_mesh_destroy(&base);
}

/* The V-cycle on simplices is symmetric and positive: <B x, y> = <x, B y> to 1e-12 and <B x, x> > 0, P1..P3
 * (p- and h-levels) in 2D and 3D, Laplace with the Dirichlet form */
static void vcycle_case(mf_context ctx)
{
  for (int dim = 2; dim <= 3; dim++)
    for (int p = 1; p <= 3; p++) {
      mf_mesh base = NULL, mesh = NULL;
      mf_space s = NULL;
      mf_operator A = NULL;
      mf_pc pc = NULL;
      mf_vector x = NULL, y = NULL, bx = NULL, by = NULL;
      T_CALL(mf_mesh_create(ctx, dim == 2 ? "square-tris" : "cube-tets", dim, 1, &base));
      T_CALL(mf_mesh_refine(base, dim == 2 ? 3 : 2, &mesh));
      T_CALL(mf_space_create(mesh, p, &s));
      T_CALL(mf_operator_create_laplace(s, MF_QUAD_GAUSS, NULL, NULL, &A));
      T_CALL(mf_operator_set_dirichlet(A, 1));
      T_CALL(mf_pc_create(A, MF_PC_MULTIGRID, &pc));
      T_CALL(mf_pc_setup(pc));
      T_CALL(mf_vector_create(s, &x)); T_CALL(mf_vector_create(s, &y));
      T_CALL(mf_vector_create(s, &bx)); T_CALL(mf_vector_create(s, &by));
      T_CALL(mf_vector_set_random(x, 11)); T_CALL(mf_vector_set_random(y, 12));
      T_CALL(mf_vector_zero_boundary(x)); T_CALL(mf_vector_zero_boundary(y));
      T_CALL(mf_pc_apply(pc, x, bx)); T_CALL(mf_pc_apply(pc, y, by));
      double bxy = 0.0, xby = 0.0, bxx = 0.0;
      T_CALL(mf_vector_dot(bx, y, &bxy)); T_CALL(mf_vector_dot(x, by, &xby)); T_CALL(mf_vector_dot(bx, x, &bxx));
      T_CHECK(fabs(bxy - xby) <= 1e-12 * fabs(bxx) && bxx > 0.0,
              "V-cycle %dD P%d: <B x, y> = %.17g, <x, B y> = %.17g, <B x, x> = %.3g", dim, p, bxy, xby, bxx);
      mf_vector_destroy(&x), mf_vector_destroy(&y), mf_vector_destroy(&bx), mf_vector_destroy(&by);
      mf_pc_destroy(&pc);
      mf_operator_destroy(&A);
      mf_space_destroy(&s);
      mf_mesh_destroy(&mesh);
      mf_mesh_destroy(&base);
    }
}

/* The partitions of simplex meshes (lib/simplex/partition_simplex.c): every part used where the cells are
 * as many, the largest part within 2% of the mean (coordinate bisection: exact shares), the same partition
 * twice, and the refusals */
static void partition_case(mf_context ctx, const char *dir)
{
  char path[1024];
  snprintf(path, sizeof path, "%s/sphere_hole.msh", dir);
  mf_mesh mesh = NULL;
  T_CALL(mf_mesh_create_from_file(ctx, path, 0, &mesh));
  const mf_simplex_mesh *m = sx(mesh);
  int *a = malloc(sizeof(int) * (size_t)m->ncells), *b = malloc(sizeof(int) * (size_t)m->ncells);
  for (int method = MF_SIMPLEX_PARTITION_RCB; method <= MF_SIMPLEX_PARTITION_SCOTCH; method++)
    for (int np = 1; np <= 16; np *= 2) {
      const int e = mf_simplex_mesh_partition(ctx, m, np, method, a);
      if (e && method == MF_SIMPLEX_PARTITION_SCOTCH) { /* built without Scotch: refused, naming it */
        T_CHECK(e == MF_ERR_UNSUPPORTED && strstr(mf_last_error_message(), "Scotch"), "Scotch refusal: %d '%s'", e,
                mf_last_error_message());
        break;
      }
      T_CALL(e);
      T_CALL(mf_simplex_mesh_partition(ctx, m, np, method, b));
      int cnt[16] = {0}, mx = 0, bad = 0;
      for (int c = 0; c < m->ncells; c++) {
        bad += a[c] < 0 || a[c] >= np || a[c] != b[c];
        if (a[c] >= 0 && a[c] < np) cnt[a[c]]++;
      }
      int empty = 0;
      for (int p = 0; p < np; p++) mx = cnt[p] > mx ? cnt[p] : mx, empty += cnt[p] == 0;
      const double balance = mx / ((double)m->ncells / np);
      T_CHECK(!bad && !empty && balance <= (method == MF_SIMPLEX_PARTITION_RCB ? 1.0 + 1.0 * np / m->ncells : 1.02),
              "%s partition of %d cells into %d: %d entries out of range or different twice, %d parts empty, balance %.3f",
              method == MF_SIMPLEX_PARTITION_RCB ? "rcb" : "scotch", m->ncells, np, bad, empty, balance);
    }
  EXPECT(mf_simplex_mesh_partition(ctx, m, 0, MF_SIMPLEX_PARTITION_RCB, a), MF_ERR_ARGUMENT, "parts 0 below 1");
  EXPECT(mf_simplex_mesh_partition(ctx, m, 2, 7, a), MF_ERR_ARGUMENT, "partition method 7 unknown");
  free(a), free(b);
  mf_mesh_destroy(&mesh);
}

/* the transfers: P exact on the coarse space (a polynomial of the coarse degree interpolated on the coarse
 * level, prolongated, equals its interpolant on the fine one), R = P^T ((R y, x) = (y, P x)); p and h */
static double poly_q(const double *x, int dim, void *user)
{
  const int q = *(const int *)user;
  const double X = x[0], Y = x[1], Z = dim == 3 ? x[2] : 0.0;
  return 0.25 + pow(0.2 + X - 0.7 * Y + 0.4 * Z, q) + 0.5 * pow(Y + Z, q > 1 ? q - 1 : 1);
}
static void transfer_case(mf_context ctx)
{
  for (int dim = 2; dim <= 3; dim++)
    for (int h = 0; h <= 1; h++)
      for (int q = 1; q <= 3; q++) {
        const int pf = h ? q : q + 1; /* p: q -> q + 1 on one mesh; h: q on the mesh refined once */
        mf_mesh mc = NULL, mf = NULL;
        T_CALL(mf_mesh_create(ctx, dim == 2 ? "square-tris" : "cube-tets", dim, 1, &mc));
        if (h) T_CALL(mf_mesh_refine(mc, 1, &mf));
        mf_space sc = NULL, sf = NULL;
        T_CALL(mf_space_create(mc, q, &sc));
        T_CALL(mf_space_create(h ? mf : mc, pf, &sf));
        T_CALL(mf_space_set_dirichlet_tags(sc, 0, NULL)); /* no Dirichlet DoFs: P whole */
        T_CALL(mf_space_set_dirichlet_tags(sf, 0, NULL));
        mf_transfer tr = NULL;
        T_CALL(sc->fam->transfer_create(sc, sf, MF_PRECISION_DOUBLE, &tr));
        mf_vector uc = NULL, uf = NULL, want = NULL, yf = NULL, rc = NULL;
        T_CALL(mf_vector_create(sc, &uc));
        T_CALL(mf_vector_create(sf, &uf));
        T_CALL(mf_vector_create(sf, &want));
        T_CALL(mf_vector_create(sf, &yf));
        T_CALL(mf_vector_create(sc, &rc));
        T_CALL(mf_vector_interpolate(uc, poly_q, &q));
        T_CALL(mf_vector_interpolate(want, poly_q, &q));
        T_CALL(mf_transfer_prolongate(tr, uc, uf));
        double err = 0.0, nrm = 0.0, a = 0.0, b = 0.0;
        T_CALL(mf_vector_axpy(want, -1.0, uf));
        T_CALL(mf_vector_norm2(want, &err));
        T_CALL(mf_vector_norm2(uf, &nrm));
        T_CHECK(err <= 1e-12 * nrm, "transfer %dD %s P%d -> P%d: P of the interpolant differs by %.3g (of %.3g)", dim,
                h ? "h" : "p", q, pf, err, nrm);
        T_CALL(mf_vector_set_random(uc, 3));
        T_CALL(mf_vector_set_random(yf, 4));
        T_CALL(mf_transfer_prolongate(tr, uc, uf));
        T_CALL(mf_transfer_restrict(tr, yf, rc));
        T_CALL(mf_vector_dot(yf, uf, &a));
        T_CALL(mf_vector_dot(rc, uc, &b));
        T_CHECK(fabs(a - b) <= 1e-12 * fabs(a), "transfer %dD %s P%d -> P%d: (y, P x) = %.15g, (R y, x) = %.15g", dim,
                h ? "h" : "p", q, pf, a, b);
        mf_transfer_destroy(&tr);
        mf_vector_destroy(&uc), mf_vector_destroy(&uf), mf_vector_destroy(&want), mf_vector_destroy(&yf),
            mf_vector_destroy(&rc);
        mf_space_destroy(&sc), mf_space_destroy(&sf);
        mf_mesh_destroy(&mf), mf_mesh_destroy(&mc);
      }
}

/* A state's restriction (mf_transfer_inject): the fine interpolant of a polynomial of the fine degree gives the
 * coarse interpolant at every coarse node, the Dirichlet ones included (the whole boundary here), for the nested
 * transfers (p: q -> 2q; h) and a non-nested one (P3 -> P2) alike; on two components. */
static void inject_case(mf_context ctx)
{
  const int cases[4][3] = {{0, 1, 2}, {0, 2, 3}, {1, 1, 1}, {1, 2, 2}}; /* h, coarse degree, fine degree */
  for (int dim = 2; dim <= 3; dim++)
    for (int c = 0; c < 4; c++) {
      const int h = cases[c][0], q = cases[c][1], pf = cases[c][2];
      mf_mesh mc = NULL, mf = NULL;
      T_CALL(mf_mesh_create(ctx, dim == 2 ? "square-tris" : "cube-tets", dim, 1, &mc));
      if (h) T_CALL(mf_mesh_refine(mc, 1, &mf));
      mf_space sc = NULL, sf = NULL;
      T_CALL(mf_space_create_components(mc, q, 2, &sc));
      T_CALL(mf_space_create_components(h ? mf : mc, pf, 2, &sf));
      mf_transfer tr = NULL;
      T_CALL(sc->fam->transfer_create(sc, sf, MF_PRECISION_DOUBLE, &tr));
      mf_vector uf = NULL, want = NULL, got = NULL;
      T_CALL(mf_vector_create(sf, &uf));
      T_CALL(mf_vector_create(sc, &want));
      T_CALL(mf_vector_create(sc, &got));
      int deg = pf;
      T_CALL(mf_vector_interpolate(uf, poly_q, &deg)); /* both components alike */
      T_CALL(mf_vector_interpolate(want, poly_q, &deg));
      T_CALL(mf_transfer_inject(tr, uf, got));
      double err = 0.0, nrm = 0.0, bnd = 0.0;
      T_CALL(mf_vector_norm2(want, &nrm));
      T_CALL(mf_vector_axpy(got, -1.0, want));
      T_CALL(mf_vector_norm2(got, &err));
      T_CALL(mf_vector_zero_boundary(want));
      T_CALL(mf_vector_norm2(want, &bnd));
      T_CHECK(err <= 1e-12 * nrm && bnd < 0.999 * nrm, "injection %dD %s P%d -> P%d: differs by %.3g (of %.3g; inside %.3g)",
              dim, h ? "h" : "p", pf, q, err, nrm, bnd);
      mf_transfer_destroy(&tr);
      mf_vector_destroy(&uf), mf_vector_destroy(&want), mf_vector_destroy(&got);
      mf_space_destroy(&sc), mf_space_destroy(&sf);
      mf_mesh_destroy(&mf), mf_mesh_destroy(&mc);
    }
}

/* The DoF numbering made on the device (lib/cuda/simplex_dofs.cu, P2 and up) against the cpu's
 * (lib/simplex/dofs.c): the same counts, cell DoFs, boundary marks and DoF points (each from the cell the device
 * found), exactly; box meshes and a Gmsh file, refined, P1..P4 */
static void dofs_twin_case(mf_context cpu, mf_context gpu, const char *dir)
{
  for (int mesh = 0; mesh < 3; mesh++)
    for (int p = 1; p <= 4; p++) {
      mf_simplex_dofs got[2];
      int ncells = 0;
      mf_space s[2] = {NULL, NULL};
      mf_mesh base[2] = {NULL, NULL}, fine[2] = {NULL, NULL};
      for (int b = 0; b < 2; b++) {
        mf_context ctx = b ? gpu : cpu;
        char path[1024];
        snprintf(path, sizeof path, "%s/cube41.msh", dir);
        if (mesh == 2) T_CALL(mf_mesh_create_from_file(ctx, path, 0, &base[b]));
        else T_CALL(mf_mesh_create(ctx, mesh ? "cube-tets" : "square-tris", 2 + mesh, 1, &base[b]));
        T_CALL(mf_mesh_refine(base[b], mesh ? 2 : 3, &fine[b]));
        T_CALL(mf_space_create(fine[b], p, &s[b]));
        got[b] = ((const mf_simplex_space *)s[b]->fdata)->dofs;
        ncells = s[b]->ncells;
      }
      if (p >= 2) { /* the cuda context numbers on the device (a numbering there comes with each DoF's last cell) */
        const mf_simplex_space *gs = (const mf_simplex_space *)s[1]->fdata;
        mf_simplex_dofs dd;
        T_CALL(mf_simplex_dofs_create(gpu, mf_simplex_space_mesh(s[1]), &gs->basis, &dd));
        T_CHECK(dd.last != NULL, "numbering on cuda, mesh %d P%d: not made on the device", mesh, p);
        mf_simplex_dofs_free(&dd);
      }
      const mf_simplex_dofs *a = &got[0], *g = &got[1];
      int same = a->ndofs == g->ndofs && a->nnodes == g->nnodes && a->nedges == g->nedges && a->nfaces == g->nfaces;
      long long dcells = 0, dbc = 0;
      for (size_t i = 0; same && i < (size_t)ncells * a->nnodes; i++) dcells += a->cell_dofs[i] != g->cell_dofs[i];
      for (int i = 0; same && i < a->ndofs; i++) dbc += a->bc[i] != g->bc[i];
      long long dpts = 0; /* the points: each DoF's from its highest-numbered cell, found on the device there */
      for (size_t i = 0; same && i < (size_t)s[0]->nlocal * s[0]->dim; i++) dpts += s[0]->coords[i] != s[1]->coords[i];
      T_CHECK(same && !dcells && !dbc && !dpts,
              "numbering on cuda, mesh %d P%d: %d/%d DoFs, %d/%d edges, %d/%d faces; %lld cell DoFs, %lld marks and "
              "%lld point coordinates differ",
              mesh, p, a->ndofs, g->ndofs, a->nedges, g->nedges, a->nfaces, g->nfaces, dcells, dbc, dpts);
      for (int b = 0; b < 2; b++) mf_space_destroy(&s[b]), mf_mesh_destroy(&fine[b]), mf_mesh_destroy(&base[b]);
    }
}

/* The transfers made on the device (lib/cuda/simplex_transfer.cu: every p-transfer, the h-transfers of P1) and
 * the one still made on the host and copied (h, P2) against the cpu backend's (lib/simplex/transfer_simplex.c):
 * P x and P^T y with the boundary's Dirichlet marks, the same random vectors, to 1e-13 (the h-transfers'
 * weights are made from the geometry on both, to rounding) */
static void transfer_twin_case(mf_context cpu, mf_context gpu)
{
  for (int dim = 2; dim <= 3; dim++)
    for (int h = 0; h <= 1; h++)
      for (int q = 1; q <= (h ? 2 : 3); q++) {
        const int pf = h ? q : q + 1;
        double *out[2][2] = {{NULL, NULL}, {NULL, NULL}};
        int n[2] = {0, 0};
        for (int b = 0; b < 2; b++) {
          mf_context ctx = b ? gpu : cpu;
          mf_mesh mc = NULL, mf = NULL;
          T_CALL(mf_mesh_create(ctx, dim == 2 ? "square-tris" : "cube-tets", dim, 2, &mc));
          if (h) T_CALL(mf_mesh_refine(mc, 1, &mf));
          mf_space sc = NULL, sf = NULL;
          T_CALL(mf_space_create(mc, q, &sc));
          T_CALL(mf_space_create(h ? mf : mc, pf, &sf));
          mf_transfer tr = NULL;
          T_CALL(sf->fam->transfer_create(sc, sf, MF_PRECISION_DOUBLE, &tr));
          mf_vector uc = NULL, uf = NULL, yf = NULL, rc = NULL;
          T_CALL(mf_vector_create(sc, &uc)); T_CALL(mf_vector_create(sf, &uf));
          T_CALL(mf_vector_create(sf, &yf)); T_CALL(mf_vector_create(sc, &rc));
          T_CALL(mf_vector_set_random(uc, 21)); T_CALL(mf_vector_set_random(yf, 22));
          T_CALL(mf_vector_zero_boundary(uc)); T_CALL(mf_vector_zero_boundary(yf));
          T_CALL(mf_transfer_prolongate(tr, uc, uf));
          T_CALL(mf_transfer_restrict(tr, yf, rc));
          n[0] = sf->nlocal, n[1] = sc->nlocal;
          out[b][0] = calloc((size_t)n[0] + 1, sizeof(double));
          out[b][1] = calloc((size_t)n[1] + 1, sizeof(double));
          T_CALL(mf_vector_get_values(uf, out[b][0]));
          T_CALL(mf_vector_get_values(rc, out[b][1]));
          mf_transfer_destroy(&tr);
          mf_vector_destroy(&uc), mf_vector_destroy(&uf), mf_vector_destroy(&yf), mf_vector_destroy(&rc);
          mf_space_destroy(&sc), mf_space_destroy(&sf);
          mf_mesh_destroy(&mf), mf_mesh_destroy(&mc);
        }
        for (int k = 0; k < 2; k++) {
          double d = 0.0, m = 0.0;
          for (int i = 0; i < n[k]; i++) d = fmax(d, fabs(out[0][k][i] - out[1][k][i])), m = fmax(m, fabs(out[0][k][i]));
          T_CHECK(m > 0.0 && d <= 1e-13 * m, "transfer %dD %s P%d -> P%d on cuda: %s differs from the cpu's by %.3g (max %.3g)",
                  dim, h ? "h" : "p", q, pf, k ? "P^T y" : "P x", d, m);
          free(out[0][k]), free(out[1][k]);
        }
      }
}

/* multigrid on the cuda backend against the cpu's: the box meshes (refined 3 times in 2D, twice in 3D) and
 * the Gmsh cube refined twice, P1..P3 (P4 in 2D); the Dirichlet-zero problem of apps/poisson.h, CG to 1e-8 */
static void cuda_multigrid_case(mf_context cpu, mf_context gpu, const char *dir)
{
  for (int dim = 2; dim <= 3; dim++)
    for (int file = 0; file <= 1; file++)
      for (int p = 1; p <= (dim == 2 ? 4 : 3); p++) {
        if (file && (dim == 2 || p > 2)) continue;
        int its[2] = {0, 0};
        double *sol[2] = {NULL, NULL};
        int n = 0;
        for (int b = 0; b < 2; b++) {
          mf_context ctx = b ? gpu : cpu;
          mf_mesh base = NULL, mesh = NULL;
          char path[1024];
          snprintf(path, sizeof path, "%s/cube41.msh", dir);
          if (file) T_CALL(mf_mesh_create_from_file(ctx, path, 0, &base));
          else T_CALL(mf_mesh_create(ctx, dim == 2 ? "square-tris" : "cube-tets", dim, 1, &base));
          T_CALL(mf_mesh_refine(base, dim == 2 ? 3 : 2, &mesh));
          mf_space s = NULL;
          T_CALL(mf_space_create(mesh, p, &s));
          int nown = 0, nlocal = 0;
          T_CALL(mf_space_local_sizes(s, &nown, &nlocal));
          mf_space_destroy(&s);
          n = nown;
          sol[b] = (double *)calloc((size_t)n + 1, sizeof(double));
          poisson_pc opt = {MF_PC_MULTIGRID, 0, 0, MF_PRECISION_DOUBLE};
          opt.solution = sol[b];
          poisson_result r;
          T_CALL(poisson_solve_pc(mesh, p, POISSON_COEF_CONSTANT, 1e-8, &opt, &r));
          T_CHECK(r.converged && r.levels >= 3, "multigrid %s %dD P%d on %s: %s, %d levels", file ? "file" : "box", dim,
                  p, mf_context_backend(ctx), r.converged ? "converged" : "not converged", r.levels);
          its[b] = r.iterations;
          mf_mesh_destroy(&mesh);
          mf_mesh_destroy(&base);
        }
        double d = 0.0, m = 0.0;
        for (int i = 0; i < n; i++) {
          d = fmax(d, fabs(sol[0][i] - sol[1][i]));
          m = fmax(m, fabs(sol[0][i]));
        }
        T_CHECK(abs(its[0] - its[1]) <= 1 && d <= 1e-10 * m,
                "multigrid %s %dD P%d: cpu %d, cuda %d iterations; solutions differ by %.3g (max %.3g)",
                file ? "file" : "box", dim, p, its[0], its[1], d, m);
        if (getenv("T41_VERBOSE")) printf("mg cuda %s %dD P%d: cpu %d cuda %d its, diff %.3g\n", file ? "file" : "box", dim, p, its[0], its[1], d);
        free(sol[0]), free(sol[1]);
      }
}

/* What the set-up's threads make does not depend on how many there are: with 1 and 3 OpenMP threads the
 * refined mesh's boundary facets, the DoF points of P1 and P3 spaces, the P3 space's Dirichlet list (ascending),
 * and the transfers' P x and P^T y (P3 -> P1 on one mesh, P1 -> P1 across a refinement) are the same bit for bit. */
typedef struct {
  int nfacets, *facets, n3, n1, npx[2], npty[2], nbc3, *bc3;
  double *pts3, *pts1, *px[2], *pty[2];
} thread_run;

static double *values(mf_space s, mf_vector v, int *n)
{
  int nl = 0;
  T_CALL(mf_space_local_sizes(s, n, &nl));
  double *h = calloc((size_t)*n + 1, sizeof(double));
  T_CALL(mf_vector_get_values(v, h));
  return h;
}

/* ------------------------------------------------------------------ the float V-cycle */

static mf_vector converted(mf_vector v, mf_precision prec)
{
  mf_vector c = NULL;
  T_CALL(mf_vector_create_prec(v->space, prec, &c));
  T_CALL(mf_vector_convert(c, v));
  return c;
}

/* max |a - b| over the owned entries of two double vectors, and max |b| (scale) */
static double maxdiff(mf_vector a, mf_vector b, double *scale)
{
  int n = 0;
  double *ha = values(a->space, a, &n), *hb = values(b->space, b, &n), d = 0.0;
  *scale = 0.0;
  for (int i = 0; i < n; i++) d = fmax(d, fabs(ha[i] - hb[i])), *scale = fmax(*scale, fabs(hb[i]));
  free(ha), free(hb);
  return d;
}

static double cx(const double *x, int dim, void *user)
{
  (void)dim, (void)user;
  return 1.0 + 0.5 * x[0] + x[1] * x[1];
}

/* The single-precision copies on backend ctx: the product of the float copy of Helmholtz and of Laplace with c(x)
 * (P1..P3; P4 in 2D; on cuda Laplace with c(x) runs the gradient form with the cells' K_e) and of elasticity (P1, P2)
 * within 1e-5 of the double operator's (and not equal to it: it is float), its refusals; the float transfers (p and
 * h) within 1e-6 of the double ones. */
static void float_operator_case(mf_context ctx)
{
  const char *be = mf_context_backend(ctx);
  for (int dim = 2; dim <= 3; dim++)
    for (int p = 1; p <= (dim == 2 ? 4 : 3); p++)
      for (int kind = 0; kind <= (p <= 2 ? 2 : 1); kind++) { /* Helmholtz c(x), Laplace c(x), elasticity */
        const int elas = kind == 2;
        mf_mesh base = NULL, mesh = NULL;
        mf_space s = NULL;
        mf_operator A = NULL, Af = NULL, Af2 = NULL, B = NULL;
        mf_vector x = NULL, y = NULL, xf = NULL, yf = NULL, yd = NULL, d = NULL;
        T_CALL(mf_mesh_create(ctx, dim == 2 ? "square-tris" : "cube-tets", dim, 1, &base));
        T_CALL(mf_mesh_refine(base, dim == 2 ? 2 : 1, &mesh));
        T_CALL(mf_space_create_components(mesh, p, elas ? dim : 1, &s));
        const int tag = 1;
        T_CALL(mf_space_set_dirichlet_tags(s, 1, &tag));
        if (elas) T_CALL(mf_operator_create_elasticity(s, 0.6, 0.4, &A));
        else T_CALL(mf_operator_create_helmholtz(s, MF_QUAD_GAUSS, kind ? 0.0 : 0.5, 1.0, cx, NULL, &A));
        T_CALL(mf_operator_set_dirichlet(A, 1));
        T_CALL(mf_operator_create_single(A, &Af));
        T_CALL(mf_vector_create(s, &x));
        T_CALL(mf_vector_create(s, &y));
        T_CALL(mf_vector_create(s, &d));
        T_CALL(mf_vector_set_random(x, 17));
        T_CALL(mf_operator_apply(A, x, y));
        xf = converted(x, MF_PRECISION_FLOAT);
        T_CALL(mf_vector_create_prec(s, MF_PRECISION_FLOAT, &yf));
        T_CALL(mf_operator_apply(Af, xf, yf));
        yd = converted(yf, MF_PRECISION_DOUBLE);
        double scale = 0.0;
        const double diff = maxdiff(yd, y, &scale);
        T_CHECK(scale > 0.0 && diff <= 1e-5 * scale && diff > 1e-12 * scale,
                "%s %dD P%d %s: float copy - double operator = %.3e (scale %g)", be, dim, p,
                elas ? "elasticity" : kind ? "Laplace c(x)" : "Helmholtz c(x)", diff, scale);
        EXPECT(mf_operator_apply(Af, x, y), MF_ERR_INCOMPATIBLE, "for an operator in float");
        EXPECT(mf_operator_diagonal(Af, d), MF_ERR_UNSUPPORTED, "in double only");
        EXPECT(mf_operator_create_single(Af, &Af2), MF_ERR_ARGUMENT, "single-precision copy already");
        if (!elas) EXPECT(mf_operator_create_assembled(Af, &B), MF_ERR_UNSUPPORTED, "single-precision operator copy cannot be assembled");
        mf_operator_destroy(&A); /* the copy lives on its own */
        T_CALL(mf_operator_apply(Af, xf, yf));
        mf_vector_destroy(&yd);
        yd = converted(yf, MF_PRECISION_DOUBLE);
        const double again = maxdiff(yd, y, &scale); /* the same to rounding (the device's float atomics: any order) */
        T_CHECK(again <= 1e-5 * scale, "%s %dD P%d: the float copy is off by %.3g with its double operator gone", be, dim, p,
                again);
        mf_vector *vs[] = {&x, &y, &xf, &yf, &yd, &d};
        for (int k = 0; k < 6; k++) mf_vector_destroy(vs[k]);
        mf_operator_destroy(&Af);
        mf_space_destroy(&s);
        mf_mesh_destroy(&mesh);
        mf_mesh_destroy(&base);
      }
  /* the transfers in float: P3 -> P1 on one mesh, P2 across a refinement */
  for (int dim = 2; dim <= 3; dim++)
    for (int h = 0; h <= 1; h++) {
      mf_mesh base = NULL, mesh = NULL;
      mf_space cs = NULL, fs = NULL;
      mf_transfer td = NULL, tf = NULL;
      T_CALL(mf_mesh_create(ctx, dim == 2 ? "square-tris" : "cube-tets", dim, 1, &base));
      T_CALL(mf_mesh_refine(base, 1, &mesh));
      T_CALL(mf_space_create(h ? base : mesh, h ? 2 : 1, &cs));
      T_CALL(mf_space_create(mesh, h ? 2 : 3, &fs));
      const int tag = 1;
      T_CALL(mf_space_set_dirichlet_tags(cs, 1, &tag));
      T_CALL(mf_space_set_dirichlet_tags(fs, 1, &tag));
      T_CALL(mf_transfer_create(cs, fs, MF_PRECISION_DOUBLE, &td)); /* the family's, through the generic call */
      T_CALL(mf_transfer_create(cs, fs, MF_PRECISION_FLOAT, &tf));
      mf_vector xc = NULL, xfn = NULL, pd = NULL, rd = NULL;
      T_CALL(mf_vector_create(cs, &xc));
      T_CALL(mf_vector_create(fs, &xfn));
      T_CALL(mf_vector_create(fs, &pd));
      T_CALL(mf_vector_create(cs, &rd));
      T_CALL(mf_vector_set_random(xc, 5));
      T_CALL(mf_vector_set_random(xfn, 6));
      T_CALL(mf_transfer_prolongate(td, xc, pd));
      T_CALL(mf_transfer_restrict(td, xfn, rd));
      mf_vector xcs = converted(xc, MF_PRECISION_FLOAT), xfs = converted(xfn, MF_PRECISION_FLOAT), ps = NULL, rs = NULL;
      T_CALL(mf_vector_create_prec(fs, MF_PRECISION_FLOAT, &ps));
      T_CALL(mf_vector_create_prec(cs, MF_PRECISION_FLOAT, &rs));
      T_CALL(mf_transfer_prolongate(tf, xcs, ps));
      T_CALL(mf_transfer_restrict(tf, xfs, rs));
      mf_vector pdd = converted(ps, MF_PRECISION_DOUBLE), rdd = converted(rs, MF_PRECISION_DOUBLE);
      double sp = 0.0, sr = 0.0;
      const double dp = maxdiff(pdd, pd, &sp), dr = maxdiff(rdd, rd, &sr);
      T_CHECK(sp > 0.0 && sr > 0.0 && dp <= 1e-6 * sp && dr <= 1e-6 * sr,
              "%s %dD %s transfer in float: prolongation off by %.3g (scale %g), restriction by %.3g (scale %g)", be, dim,
              h ? "h" : "p", dp, sp, dr, sr);
      EXPECT(mf_transfer_prolongate(tf, xc, pd), MF_ERR_INCOMPATIBLE, "the transfer in float");
      mf_vector *vs[] = {&xc, &xfn, &pd, &rd, &xcs, &xfs, &ps, &rs, &pdd, &rdd};
      for (int k = 0; k < 10; k++) mf_vector_destroy(vs[k]);
      mf_transfer_destroy(&td);
      mf_transfer_destroy(&tf);
      mf_space_destroy(&cs);
      mf_space_destroy(&fs);
      mf_mesh_destroy(&mesh);
      mf_mesh_destroy(&base);
    }
}

/* The float V-cycle (mf_pc_set_multigrid_precision): CG to 1e-8 with it within 1 iteration of the double V-cycle's
 * count, P1..P3 (P4 in 2D) on the box meshes with c(x); with cpu given too (ctx cuda), the cuda float V-cycle
 * against the cpu's: iterations +-1, the solutions to 1e-7 of their size (the V-cycles round differently). */
static void float_multigrid_case(mf_context ctx, mf_context cpu)
{
  for (int dim = 2; dim <= 3; dim++)
    for (int p = 1; p <= (dim == 2 ? 4 : 3); p++) {
      int its[3] = {0, 0, 0}, n = 0;
      double *sol[3] = {NULL, NULL, NULL};
      for (int run = 0; run < (cpu ? 3 : 2); run++) { /* double, float, float on the cpu */
        mf_context c = run == 2 ? cpu : ctx;
        mf_mesh base = NULL, mesh = NULL;
        mf_space s = NULL;
        T_CALL(mf_mesh_create(c, dim == 2 ? "square-tris" : "cube-tets", dim, 1, &base));
        T_CALL(mf_mesh_refine(base, dim == 2 ? 3 : 2, &mesh));
        T_CALL(mf_space_create(mesh, p, &s));
        int nl = 0;
        T_CALL(mf_space_local_sizes(s, &n, &nl));
        mf_space_destroy(&s);
        sol[run] = (double *)calloc((size_t)n + 1, sizeof(double));
        poisson_pc opt = {MF_PC_MULTIGRID, 0, 0, run ? MF_PRECISION_FLOAT : MF_PRECISION_DOUBLE};
        opt.solution = sol[run];
        poisson_result r;
        T_CALL(poisson_solve_pc(mesh, p, POISSON_COEF_LJUNGKVIST, 1e-8, &opt, &r));
        T_CHECK(r.converged && r.levels >= 3, "%s %s V-cycle %dD P%d: %s, %d levels", mf_context_backend(c),
                run ? "float" : "double", dim, p, r.converged ? "converged" : "not converged", r.levels);
        its[run] = r.iterations;
        mf_mesh_destroy(&mesh);
        mf_mesh_destroy(&base);
      }
      T_CHECK(its[1] <= its[0] + 1, "%s %dD P%d: the float V-cycle takes %d CG iterations, the double one %d",
              mf_context_backend(ctx), dim, p, its[1], its[0]);
      if (cpu) {
        double d = 0.0, m = 0.0;
        for (int i = 0; i < n; i++) d = fmax(d, fabs(sol[1][i] - sol[2][i])), m = fmax(m, fabs(sol[2][i]));
        T_CHECK(abs(its[1] - its[2]) <= 1 && d <= 1e-7 * m,
                "float V-cycle %dD P%d: cpu %d, cuda %d iterations; solutions differ by %.3g (max %.3g)", dim, p, its[2],
                its[1], d, m);
      }
      if (getenv("T41_VERBOSE"))
        printf("float mg %s %dD P%d: double %d float %d (cpu %d) its\n", mf_context_backend(ctx), dim, p, its[0], its[1],
               its[2]);
      free(sol[0]), free(sol[1]), free(sol[2]);
    }
}

static void threads_run(mf_context ctx, mf_mesh coarse, int threads, thread_run *r)
{
#ifdef _OPENMP
  const int nt = omp_get_max_threads();
  omp_set_num_threads(threads);
#else
  (void)threads;
#endif
  mf_mesh fine = NULL;
  mf_space s3 = NULL, s1 = NULL, c1 = NULL;
  T_CALL(mf_mesh_refine(coarse, 1, &fine));
  const mf_simplex_mesh *fm = (const mf_simplex_mesh *)fine->fdata;
  r->nfacets = fm->nfacets;
  r->facets = malloc(sizeof(int) * (size_t)fm->nfacets * fm->dim + 1);
  memcpy(r->facets, fm->facets, sizeof(int) * (size_t)fm->nfacets * fm->dim);
  T_CALL(mf_space_create(fine, 3, &s3));
  T_CALL(mf_space_create(fine, 1, &s1));
  T_CALL(mf_space_create(coarse, 1, &c1));
  r->n3 = s3->nlocal * s3->dim, r->n1 = s1->nlocal * s1->dim;
  r->pts3 = malloc(sizeof(double) * (size_t)r->n3 + 1);
  r->pts1 = malloc(sizeof(double) * (size_t)r->n1 + 1);
  memcpy(r->pts3, s3->coords, sizeof(double) * (size_t)r->n3);
  memcpy(r->pts1, s1->coords, sizeof(double) * (size_t)r->n1);
  r->nbc3 = s3->nbc; /* the Dirichlet list: 15,625 DoFs, listed by the threads in blocks */
  r->bc3 = malloc(sizeof(int) * (size_t)s3->nbc + 1);
  memcpy(r->bc3, s3->bc_list, sizeof(int) * (size_t)s3->nbc);
  mf_space cs[2] = {s1, c1}, fs[2] = {s3, s1};
  for (int k = 0; k < 2; k++) {
    mf_transfer tr = NULL;
    mf_vector xc = NULL, xf = NULL;
    T_CALL(fs[k]->fam->transfer_create(cs[k], fs[k], MF_PRECISION_DOUBLE, &tr));
    T_CALL(mf_vector_create(cs[k], &xc));
    T_CALL(mf_vector_create(fs[k], &xf));
    T_CALL(mf_vector_set_random(xc, 5));
    T_CALL(mf_transfer_prolongate(tr, xc, xf));
    r->px[k] = values(fs[k], xf, &r->npx[k]);
    T_CALL(mf_vector_set_random(xf, 6));
    T_CALL(mf_vector_zero_boundary(xf));
    T_CALL(mf_transfer_restrict(tr, xf, xc));
    r->pty[k] = values(cs[k], xc, &r->npty[k]);
    mf_vector_destroy(&xc);
    mf_vector_destroy(&xf);
    mf_transfer_destroy(&tr);
  }
  mf_space_destroy(&s3);
  mf_space_destroy(&s1);
  mf_space_destroy(&c1);
  mf_mesh_destroy(&fine);
#ifdef _OPENMP
  omp_set_num_threads(nt);
#endif
  (void)ctx;
}

static void threads_case(mf_context ctx)
{
  mf_mesh coarse = NULL;
  T_CALL(mf_mesh_create(ctx, "cube-tets", 3, 2, &coarse));
  thread_run a = {0}, b = {0};
  threads_run(ctx, coarse, 1, &a);
  threads_run(ctx, coarse, 3, &b);
  T_CHECK(a.nfacets == b.nfacets && !memcmp(a.facets, b.facets, sizeof(int) * (size_t)a.nfacets * 3),
          "1 and 3 threads: the refined mesh's boundary facets differ");
  T_CHECK(a.n3 == b.n3 && !memcmp(a.pts3, b.pts3, sizeof(double) * (size_t)a.n3), "1 and 3 threads: the P3 DoF points differ");
  T_CHECK(a.n1 == b.n1 && !memcmp(a.pts1, b.pts1, sizeof(double) * (size_t)a.n1), "1 and 3 threads: the P1 DoF points differ");
  T_CHECK(a.nbc3 == b.nbc3 && a.nbc3 > 0 && !memcmp(a.bc3, b.bc3, sizeof(int) * (size_t)a.nbc3),
          "1 and 3 threads: the P3 Dirichlet lists differ (%d and %d entries)", a.nbc3, b.nbc3);
  int asc = 1;
  for (int i = 1; i < b.nbc3; i++) asc = asc && b.bc3[i] > b.bc3[i - 1];
  T_CHECK(asc, "3 threads: the P3 Dirichlet list is not ascending");
  for (int k = 0; k < 2; k++) {
    T_CHECK(a.npx[k] == b.npx[k] && !memcmp(a.px[k], b.px[k], sizeof(double) * (size_t)a.npx[k]),
            "1 and 3 threads: transfer %d's P x differs", k);
    T_CHECK(a.npty[k] == b.npty[k] && !memcmp(a.pty[k], b.pty[k], sizeof(double) * (size_t)a.npty[k]),
            "1 and 3 threads: transfer %d's P^T y differs", k);
  }
  free(a.facets), free(b.facets), free(a.pts3), free(b.pts3), free(a.pts1), free(b.pts1), free(a.bc3), free(b.bc3);
  for (int k = 0; k < 2; k++) free(a.px[k]), free(b.px[k]), free(a.pty[k]), free(b.pty[k]);
  mf_mesh_destroy(&coarse);
}

/* a cell's key: its vertices' coordinates in lexicographic order (dim + 1 points of 3) */
static int cmp_point(const void *a, const void *b)
{
  const double *x = (const double *)a, *y = (const double *)b;
  for (int k = 0; k < 3; k++)
    if (x[k] != y[k]) return x[k] < y[k] ? -1 : 1;
  return 0;
}
static int cmp_key(const void *a, const void *b)
{
  const double *x = (const double *)a, *y = (const double *)b;
  for (int k = 0; k < 12; k++)
    if (x[k] != y[k]) return x[k] < y[k] ? -1 : 1;
  return 0;
}
static double *cell_keys(const mf_simplex_mesh *m)
{
  double *keys = calloc((size_t)m->ncells * 12, sizeof *keys);
  for (int e = 0; e < m->ncells; e++) {
    double *k = keys + 12 * (size_t)e;
    for (int a = 0; a <= m->dim; a++)
      memcpy(k + 3 * a, m->coords + 3 * (size_t)m->cells[(size_t)e * (m->dim + 1) + a], 3 * sizeof(double));
    qsort(k, (size_t)m->dim + 1, 3 * sizeof(double), cmp_point);
  }
  qsort(keys, (size_t)m->ncells, 12 * sizeof(double), cmp_key);
  return keys;
}

/* mf_mesh_create_box on simplex meshes: n[0] x n[1] (x n[2]) squares or cubes of 2 or 6 cells, volume 1, each
 * side one tag of area 1 and 2 n_a n_b facets; a box refined k times is the box of 2^k times the cubes (the
 * same cells: the Kuhn split is kept by the refinement); the refusals. */
static void box_case(mf_context ctx)
{
  for (int dim = 2; dim <= 3; dim++) {
    const int n[3] = {3, 2, 5};
    const char *name = dim == 2 ? "square-tris" : "cube-tets";
    mf_mesh m = NULL;
    T_CALL(mf_mesh_create_box(ctx, name, dim, n, 0, &m));
    if (!m) return;
    const mf_simplex_mesh *sm = sx(m);
    const int want = dim == 2 ? 2 * n[0] * n[1] : 6 * n[0] * n[1] * n[2];
    T_CHECK(sm->ncells == want, "%s box: %d cells, want %d", name, sm->ncells, want);
    const stats s = mesh_stats(name, 0, sm);
    T_CHECK(fabs(s.volume - 1.0) < 1e-13, "%s box: volume %.15g", name, s.volume);
    for (int t = 1; t <= 2 * dim; t++) {
      const int d = (t - 1) / 2, a = (d + 1) % dim, b = (d + 2) % dim;
      const int nf = dim == 2 ? n[a] : 2 * n[a] * n[b];
      T_CHECK(s.tag_count[t] == nf && fabs(s.tag_measure[t] - 1.0) < 1e-13, "%s box: tag %d has %d facets of measure %g, want %d of 1",
              name, t, s.tag_count[t], s.tag_measure[t], nf);
    }
    mf_mesh_destroy(&m);
    /* refined: the same cells as the finer box */
    const int c[3] = {2, 1, 3}, f[3] = {8, 4, 12};
    mf_mesh r = NULL, b = NULL;
    T_CALL(mf_mesh_create_box(ctx, name, dim, c, 2, &r));
    T_CALL(mf_mesh_create_box(ctx, name, dim, f, 0, &b));
    if (!r || !b) return;
    const mf_simplex_mesh *rm = sx(r), *bm = sx(b);
    T_CHECK(rm->ncells == bm->ncells, "%s: refined box %d cells, finer box %d", name, rm->ncells, bm->ncells);
    if (rm->ncells == bm->ncells) {
      double *kr = cell_keys(rm), *kb = cell_keys(bm);
      int same = 1;
      for (size_t i = 0; i < (size_t)rm->ncells * 12 && same; i++) same = fabs(kr[i] - kb[i]) < 1e-14;
      T_CHECK(same, "%s: the box refined twice is not the Kuhn split of the finer box", name);
      free(kr);
      free(kb);
    }
    mf_mesh coarse = NULL; /* multigrid's levels: the refinements */
    T_CALL(mf_mesh_coarsened(r, &coarse));
    T_CHECK(coarse && coarse != r && coarse->ncells_global * (dim == 2 ? 4 : 8) == r->ncells_global,
            "%s: the refined box has no coarser level", name);
    mf_mesh_destroy(&coarse);
    mf_mesh_destroy(&r);
    mf_mesh_destroy(&b);
    const int zero[3] = {4, 0, 1}, big[3] = {1, 1, 100000};
    EXPECT(mf_mesh_create_box(ctx, name, dim, zero, 0, &m), MF_ERR_ARGUMENT, "0 cells in direction 1 out of range");
    if (dim == 3)
      EXPECT(mf_mesh_create_box(ctx, name, dim, big, 0, &m), MF_ERR_ARGUMENT, "100000 cells in direction 2 out of range 1..256");
    EXPECT(mf_mesh_create_box(ctx, name, dim, n, 9, &m), MF_ERR_ARGUMENT, "refinement level 9 out of range 0..8");
    EXPECT(mf_mesh_create_box(ctx, name, 5 - dim, n, 0, &m), MF_ERR_ARGUMENT, "dimension");
    T_CHECK(m == NULL, "%s: a refused box left a mesh", name);
  }
}

int main(int argc, char **argv)
{
  MPI_Init(&argc, &argv);
  mf_context ctx = NULL;
  T_CALL(mf_context_create(MPI_COMM_WORLD, "cpu", &ctx));
  const char *dir = argc > 1 ? argv[1] : "gmsh";
  if (argc > 2 && !strcmp(argv[2], "cuda")) {
    t_need_cuda();
    mf_context gpu = NULL;
    T_CALL(mf_context_create(MPI_COMM_WORLD, "cuda", &gpu));
    transfer_case(gpu);
    inject_case(gpu);
    transfer_twin_case(ctx, gpu);
    dofs_twin_case(ctx, gpu, dir);
    cuda_multigrid_case(ctx, gpu, dir);
    elasticity_case(gpu);
    float_operator_case(gpu);
    float_multigrid_case(gpu, ctx);
    mf_context_destroy(&gpu);
    mf_context_destroy(&ctx);
    return t_finish();
  }
  threads_case(ctx);
  box_case(ctx);
  inject_case(ctx);
  mf_mesh m = NULL;
  T_CALL(mf_mesh_create(ctx, "square-tris", 2, 1, &m));
  refine_case(ctx, "square-tris", m, 4);
  mf_mesh_destroy(&m);
  T_CALL(mf_mesh_create(ctx, "cube-tets", 3, 1, &m));
  refine_case(ctx, "cube-tets", m, 3);
  mf_mesh_destroy(&m);
  const char *files[2] = {"square41.msh", "cube41.msh"};
  for (int k = 0; k < 2; k++) {
    char path[1024];
    snprintf(path, sizeof path, "%s/%s", dir, files[k]);
    T_CALL(mf_mesh_create_from_file(ctx, path, 2 + k, &m));
    refine_case(ctx, files[k], m, k ? 3 : 4);
    if (k == 1) { /* Poisson P2 at rate 3 on the file's mesh refined 2 and 3 times */
      mf_mesh f2 = NULL, f3 = NULL;
      T_CALL(mf_mesh_refine(m, 2, &f2));
      T_CALL(mf_mesh_refine(m, 3, &f3));
      const double e2 = poisson_error(f2), e3 = poisson_error(f3), rate = log2(e2 / e3);
      T_CHECK(rate >= 2.7 && rate <= 3.3, "P2 on %s refined 2, 3 times: L2 errors %.3g, %.3g, rate %.2f", files[k], e2,
              e3, rate);
      mf_mesh_destroy(&f2);
      mf_mesh_destroy(&f3);
    }
    /* no refinement: a copy, the same mesh */
    mf_mesh c = NULL;
    T_CALL(mf_mesh_refine(m, 0, &c));
    T_CHECK(sx(c)->ncells == sx(m)->ncells && sx(c)->nfacets == sx(m)->nfacets &&
                !memcmp(sx(c)->cells, sx(m)->cells, sizeof(int) * (size_t)sx(m)->ncells * (3 + k)),
            "%s: refined 0 times is not a copy", files[k]);
    mf_mesh_destroy(&c);
    mf_mesh_destroy(&m);
  }
  transfer_case(ctx);
  multigrid_case(ctx, dir);
  sphere_case(ctx, dir);
  vcycle_case(ctx);
  partition_case(ctx, dir);
  elasticity_case(ctx);
  float_operator_case(ctx);
  float_multigrid_case(ctx, NULL);
  /* the refusals */
  mf_mesh fine = NULL;
  EXPECT(mf_mesh_refine(NULL, 1, &fine), MF_ERR_NULL, "mesh is NULL");
  T_CALL(mf_mesh_create(ctx, "square-tris", 2, 0, &m));
  EXPECT(mf_mesh_refine(m, 1, NULL), MF_ERR_NULL, "output pointer fine is NULL");
  EXPECT(mf_mesh_refine(m, 9, &fine), MF_ERR_ARGUMENT, "refinement levels 9 out of range 0..8");
  EXPECT(mf_mesh_refine(m, -1, &fine), MF_ERR_ARGUMENT, "refinement levels -1 out of range 0..8");
  T_CHECK(fine == NULL, "a refused refinement gave a mesh");
  mf_mesh_destroy(&m);
  T_CALL(mf_mesh_create(ctx, "cube", 3, 1, &m));
  EXPECT(mf_mesh_refine(m, 1, &fine), MF_ERR_UNSUPPORTED, "uniform refinement into a new mesh: simplex meshes");
  { /* a transfer between spaces of two families */
    mf_mesh t = NULL;
    mf_space sh = NULL, st = NULL;
    mf_transfer tr = NULL;
    T_CALL(mf_mesh_create(ctx, "cube-tets", 3, 1, &t));
    T_CALL(mf_space_create(m, 1, &sh));
    T_CALL(mf_space_create(t, 1, &st));
    EXPECT(mf_transfer_create(sh, st, MF_PRECISION_DOUBLE, &tr), MF_ERR_INCOMPATIBLE, "between a hex and a simplex space");
    T_CHECK(tr == NULL, "a refused transfer left an object");
    mf_space_destroy(&sh), mf_space_destroy(&st);
    mf_mesh_destroy(&t);
  }
  mf_mesh_destroy(&m);
  mf_context_destroy(&ctx);
  return t_finish();
}
