/* physics.c -- users' pointwise physics (mfree.h, "Pointwise physics"): the mf_physics object, its
 * gallery, the public creator of its operators (each cell family makes them: lib/hex/physics_hex.c,
 * lib/simplex/physics_simplex.c) and what those share on the host: the g-functions at one point into
 * the stored reference form (mf_physics.h), the finite check of their values, and "one block". */
#include "physics/mf_physics_impl.h"
#include "base/mf_random.h"
#include "family.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>

struct mf_physics_s {
  mf_context ctx;
  mf_phys ph;
};

int mf_physics_create(mf_context ctx, int ncomp, mf_physics *ph)
{
  if (ph) *ph = NULL;
  MF_CHECK(ctx, NULL, MF_ERR_NULL, "context is NULL");
  MF_CHECK(ph, ctx, MF_ERR_NULL, "output pointer ph is NULL");
  MF_CHECK(ncomp >= 1 && ncomp <= MF_MAX_COMPONENTS, ctx, MF_ERR_ARGUMENT, "field components %d out of range 1..%d",
           ncomp, MF_MAX_COMPONENTS);
  mf_physics p = NULL;
  MF_CALL(MF_CALLOC(ctx, 1, &p));
  p->ctx = ctx;
  p->ph.ncomp = ncomp;
  p->ph.name = "user";
  *ph = p;
  return 0;
}

int mf_physics_destroy(mf_physics *ph)
{
  if (!ph || !*ph) return 0;
  mf_phys_release(&(*ph)->ph);
  free(*ph);
  *ph = NULL;
  return 0;
}

/* functions given after a source: the source goes (the other functions were its own) */
static void from_functions(mf_physics ph)
{
  ph->ph.gallery_functions = NULL; /* a gallery entry changed by the user is the user's */
  if (!ph->ph.from_source) return;
  mf_phys_release(&ph->ph);
  ph->ph.from_source = 0;
  for (int t = 0; t < 6; t++) ph->ph.src_has[t] = 0;
}

int mf_physics_set_source(mf_physics ph, const char *source, const char *functions)
{
  MF_CHECK(ph, NULL, MF_ERR_NULL, "physics is NULL");
  MF_CHECK(source, ph->ctx, MF_ERR_NULL, "source is NULL");
  MF_CHECK(functions, ph->ctx, MF_ERR_NULL, "functions is NULL");
  return mf_phys_source_set(&ph->ph, ph->ctx, source, strlen(source), "physics source", functions);
}

int mf_physics_set_source_file(mf_physics ph, const char *path, const char *functions)
{
  MF_CHECK(ph, NULL, MF_ERR_NULL, "physics is NULL");
  MF_CHECK(path, ph->ctx, MF_ERR_NULL, "path is NULL");
  MF_CHECK(functions, ph->ctx, MF_ERR_NULL, "functions is NULL");
  FILE *f = fopen(path, "rb");
  MF_CHECK(f, ph->ctx, MF_ERR_IO, "physics source file '%s' cannot be opened: %s", path, strerror(errno));
  char *text = NULL;
  size_t n = 0, cap = 0;
  int ierr = 0;
  for (;;) {
    if (n + 4096 + 1 > cap) {
      cap = 2 * cap + 8192;
      char *t = realloc(text, cap);
      if (!t) {
        ierr = mf_error_set(ph->ctx, MF_ERR_MEMORY, __FILE__, __LINE__, __func__, "out of host memory reading '%s'", path);
        break;
      }
      text = t;
    }
    const size_t r = fread(text + n, 1, 4096, f);
    n += r;
    if (r < 4096) break;
  }
  if (!ierr && ferror(f)) ierr = mf_error_set(ph->ctx, MF_ERR_IO, __FILE__, __LINE__, __func__, "physics source file '%s' could not be read", path);
  fclose(f);
  if (!ierr) ierr = mf_phys_source_set(&ph->ph, ph->ctx, text, n, path, functions);
  free(text);
  return ierr;
}

int mf_physics_set_residual(mf_physics ph, mf_pointwise_fn f0, mf_pointwise_fn f1)
{
  MF_CHECK(ph, NULL, MF_ERR_NULL, "physics is NULL");
  from_functions(ph);
  ph->ph.f[0] = f0;
  ph->ph.f[1] = f1;
  return 0;
}

int mf_physics_set_jacobian(mf_physics ph, mf_pointwise_fn g0, mf_pointwise_fn g1, mf_pointwise_fn g2,
                            mf_pointwise_fn g3)
{
  MF_CHECK(ph, NULL, MF_ERR_NULL, "physics is NULL");
  from_functions(ph);
  ph->ph.g[0] = g0;
  ph->ph.g[1] = g1;
  ph->ph.g[2] = g2;
  ph->ph.g[3] = g3;
  return 0;
}

int mf_physics_set_constants(mf_physics ph, int n, const double *k)
{
  MF_CHECK(ph, NULL, MF_ERR_NULL, "physics is NULL");
  MF_CHECK(n >= 0 && n <= MF_PHYS_MAX_CONSTANTS, ph->ctx, MF_ERR_ARGUMENT, "number of constants %d out of range 0..%d",
           n, MF_PHYS_MAX_CONSTANTS);
  MF_CHECK(n == 0 || k, ph->ctx, MF_ERR_NULL, "constants k is NULL (n = %d)", n);
  for (int i = 0; i < n; i++)
    MF_CHECK(isfinite(k[i]), ph->ctx, MF_ERR_ARGUMENT, "constant k[%d] = %g must be finite", i, k[i]);
  if (n) memcpy(ph->ph.k, k, sizeof(double) * (size_t)n);
  ph->ph.nconst = n;
  return 0;
}

int mf_physics_set_boundary(mf_physics ph, int tag, mf_boundary_fn f0, mf_boundary_fn g0)
{
  MF_CHECK(ph, NULL, MF_ERR_NULL, "physics is NULL");
  MF_CHECK(tag >= 1, ph->ctx, MF_ERR_ARGUMENT, "boundary tag %d: tags are positive", tag);
  mf_phys *p = &ph->ph;
  int i = 0;
  while (i < p->nbound && p->btag[i] != tag) i++;
  MF_CHECK(i < MF_PHYS_MAX_BOUNDARY, ph->ctx, MF_ERR_ARGUMENT, "boundary terms on more than %d tags",
           MF_PHYS_MAX_BOUNDARY);
  if (i == p->nbound) p->nbound++;
  p->btag[i] = tag;
  p->bf0[i] = f0;
  p->bg0[i] = g0;
  p->bsrc[i] = 0;
  memset(p->bname[i], 0, sizeof p->bname[i]);
  return 0;
}

int mf_physics_set_boundary_source(mf_physics ph, int tag, const char *functions)
{
  MF_CHECK(ph, NULL, MF_ERR_NULL, "physics is NULL");
  MF_CHECK(functions, ph->ctx, MF_ERR_NULL, "functions is NULL");
  MF_CHECK(ph->ph.from_source, ph->ctx, MF_ERR_ARGUMENT,
           "boundary functions '%s' as source: give the physics its source first (mf_physics_set_source)", functions);
  char names[2][MF_PHYS_MAX_NAME];
  MF_CALL(mf_phys_boundary_names(ph->ctx, functions, names));
  MF_CALL(mf_physics_set_boundary(ph, tag, NULL, NULL));
  mf_phys *p = &ph->ph;
  int i = 0;
  while (p->btag[i] != tag) i++;
  p->bsrc[i] = 1;
  memcpy(p->bname[i], names, sizeof names);
  return 0;
}

int mf_physics_components(mf_physics ph, int *ncomp)
{
  MF_CHECK(ph, NULL, MF_ERR_NULL, "physics is NULL");
  MF_CHECK(ncomp, ph->ctx, MF_ERR_NULL, "output pointer ncomp is NULL");
  *ncomp = ph->ph.ncomp;
  return 0;
}

/* ------------------------------------------------------------------ the gallery */

/* Written with the public API, as a user would; constants in k. */
static void g0_mass(int dim, int nc, const double *u, const double *du, const double *x, const double *k, double *g0)
{
  (void)dim, (void)u, (void)du, (void)x;
  for (int c = 0; c < nc; c++) g0[c * nc + c] = k[0];
}
static void g3_laplace(int dim, int nc, const double *u, const double *du, const double *x, const double *k,
                       double *g3)
{
  (void)u, (void)du, (void)x;
  for (int c = 0; c < nc; c++)
    for (int d = 0; d < dim; d++) g3[((c * nc + c) * dim + d) * dim + d] = k[0];
}
static void g0_helmholtz(int dim, int nc, const double *u, const double *du, const double *x, const double *k,
                         double *g0)
{
  (void)dim, (void)u, (void)du, (void)x;
  for (int c = 0; c < nc; c++) g0[c * nc + c] = k[0];
}
static void g3_helmholtz(int dim, int nc, const double *u, const double *du, const double *x, const double *k,
                         double *g3)
{
  (void)u, (void)du, (void)x;
  for (int c = 0; c < nc; c++)
    for (int d = 0; d < dim; d++) g3[((c * nc + c) * dim + d) * dim + d] = k[1];
}
/* anisotropic diffusion: (K grad u, grad v), K = k[0 .. dim*dim) row by row */
static void g3_diffusion(int dim, int nc, const double *u, const double *du, const double *x, const double *k,
                         double *g3)
{
  (void)u, (void)du, (void)x;
  for (int c = 0; c < nc; c++)
    for (int d = 0; d < dim; d++)
      for (int e = 0; e < dim; e++) g3[((c * nc + c) * dim + d) * dim + e] = k[d * dim + e];
}
/* linear elasticity: sigma(u) : eps(v), sigma = lambda tr(eps) I + 2 mu eps, k = (lambda, mu), nc = dim;
 * d sigma_cd / d (du_b/dx_e) = lambda delta_cd delta_be + mu (delta_cb delta_de + delta_ce delta_db) */
static void g3_elasticity(int dim, int nc, const double *u, const double *du, const double *x, const double *k,
                          double *g3)
{
  (void)u, (void)du, (void)x;
  const double lambda = k[0], mu = k[1];
  for (int c = 0; c < nc; c++)
    for (int b = 0; b < nc; b++)
      for (int d = 0; d < dim; d++)
        for (int e = 0; e < dim; e++)
          g3[((c * nc + b) * dim + d) * dim + e] =
              lambda * (c == d && b == e) + mu * ((c == b && d == e) + (c == e && d == b));
}

/* the residuals of the linear entries: f0 = g0 u, f1 = g3 du (so that F(u) = A u) */
static void f0_mass(int dim, int nc, const double *u, const double *du, const double *x, const double *k, double *f0)
{
  (void)dim, (void)du, (void)x;
  for (int c = 0; c < nc; c++) f0[c] = k[0] * u[c];
}
static void f1_laplace(int dim, int nc, const double *u, const double *du, const double *x, const double *k, double *f1)
{
  (void)u, (void)x;
  for (int i = 0; i < nc * dim; i++) f1[i] = k[0] * du[i];
}
static void f1_helmholtz(int dim, int nc, const double *u, const double *du, const double *x, const double *k,
                         double *f1)
{
  (void)u, (void)x;
  for (int i = 0; i < nc * dim; i++) f1[i] = k[1] * du[i];
}
static void f1_diffusion(int dim, int nc, const double *u, const double *du, const double *x, const double *k,
                         double *f1)
{
  (void)u, (void)x;
  for (int c = 0; c < nc; c++)
    for (int d = 0; d < dim; d++) {
      double s = 0.0;
      for (int e = 0; e < dim; e++) s += k[d * dim + e] * du[c * dim + e];
      f1[c * dim + d] = s;
    }
}
static void f1_elasticity(int dim, int nc, const double *u, const double *du, const double *x, const double *k,
                          double *f1)
{
  (void)u, (void)x, (void)nc;
  const double lambda = k[0], mu = k[1];
  double tr = 0.0;
  for (int d = 0; d < dim; d++) tr += du[d * dim + d];
  for (int c = 0; c < dim; c++)
    for (int d = 0; d < dim; d++) f1[c * dim + d] = mu * (du[c * dim + d] + du[d * dim + c]) + (c == d ? lambda * tr : 0.0);
}

/* The same entries as source, for the backends that compile physics at run time (cuda). */
const char *const mf_phys_gallery_source =
    "void gallery_g0_mass(int dim, int nc, const double *u, const double *du, const double *x, const double *k, double *g0)\n"
    "{ for (int c = 0; c < nc; c++) g0[c * nc + c] = k[0]; }\n"
    "void gallery_f0_mass(int dim, int nc, const double *u, const double *du, const double *x, const double *k, double *f0)\n"
    "{ for (int c = 0; c < nc; c++) f0[c] = k[0] * u[c]; }\n"
    "void gallery_g3_laplace(int dim, int nc, const double *u, const double *du, const double *x, const double *k, double *g3)\n"
    "{ for (int c = 0; c < nc; c++) for (int d = 0; d < dim; d++) g3[((c * nc + c) * dim + d) * dim + d] = k[0]; }\n"
    "void gallery_f1_laplace(int dim, int nc, const double *u, const double *du, const double *x, const double *k, double *f1)\n"
    "{ for (int i = 0; i < nc * dim; i++) f1[i] = k[0] * du[i]; }\n"
    "void gallery_g3_helmholtz(int dim, int nc, const double *u, const double *du, const double *x, const double *k, double *g3)\n"
    "{ for (int c = 0; c < nc; c++) for (int d = 0; d < dim; d++) g3[((c * nc + c) * dim + d) * dim + d] = k[1]; }\n"
    "void gallery_f1_helmholtz(int dim, int nc, const double *u, const double *du, const double *x, const double *k, double *f1)\n"
    "{ for (int i = 0; i < nc * dim; i++) f1[i] = k[1] * du[i]; }\n"
    "void gallery_g3_diffusion(int dim, int nc, const double *u, const double *du, const double *x, const double *k, double *g3)\n"
    "{\n"
    "  for (int c = 0; c < nc; c++)\n"
    "    for (int d = 0; d < dim; d++)\n"
    "      for (int e = 0; e < dim; e++) g3[((c * nc + c) * dim + d) * dim + e] = k[d * dim + e];\n"
    "}\n"
    "void gallery_f1_diffusion(int dim, int nc, const double *u, const double *du, const double *x, const double *k, double *f1)\n"
    "{\n"
    "  for (int c = 0; c < nc; c++)\n"
    "    for (int d = 0; d < dim; d++) {\n"
    "      double s = 0.0;\n"
    "      for (int e = 0; e < dim; e++) s += k[d * dim + e] * du[c * dim + e];\n"
    "      f1[c * dim + d] = s;\n"
    "    }\n"
    "}\n"
    "void gallery_g3_elasticity(int dim, int nc, const double *u, const double *du, const double *x, const double *k, double *g3)\n"
    "{\n"
    "  for (int c = 0; c < nc; c++)\n"
    "    for (int b = 0; b < nc; b++)\n"
    "      for (int d = 0; d < dim; d++)\n"
    "        for (int e = 0; e < dim; e++)\n"
    "          g3[((c * nc + b) * dim + d) * dim + e] = k[0] * (c == d && b == e) + k[1] * ((c == b && d == e) + (c == e && d == b));\n"
    "}\n"
    "void gallery_f1_elasticity(int dim, int nc, const double *u, const double *du, const double *x, const double *k, double *f1)\n"
    "{\n"
    "  double tr = 0.0;\n"
    "  for (int d = 0; d < dim; d++) tr += du[d * dim + d];\n"
    "  for (int c = 0; c < dim; c++)\n"
    "    for (int d = 0; d < dim; d++) f1[c * dim + d] = k[1] * (du[c * dim + d] + du[d * dim + c]) + (c == d ? k[0] * tr : 0.0);\n"
    "}\n";

typedef struct {
  const char *name;
  const char *functions; /* in mf_phys_gallery_source */
  int nconst;       /* constants it needs (-1: dim * dim, read at the operator) */
  int needs_dim;    /* components = dim */
  mf_phys_fn f[2], g[4];
  double k[2];      /* default constants */
  const char *what; /* the constants in words */
} gallery_entry;

static const gallery_entry gallery[] = {
    {"mass", "f0=gallery_f0_mass g0=gallery_g0_mass", 1, 0, {f0_mass, NULL}, {g0_mass, NULL, NULL, NULL}, {1.0, 0.0},
     "k = (c)"},
    {"laplace", "f1=gallery_f1_laplace g3=gallery_g3_laplace", 1, 0, {NULL, f1_laplace},
     {NULL, NULL, NULL, g3_laplace}, {1.0, 0.0}, "k = (c)"},
    {"helmholtz", "f0=gallery_f0_mass f1=gallery_f1_helmholtz g0=gallery_g0_mass g3=gallery_g3_helmholtz", 2, 0,
     {f0_mass, f1_helmholtz}, {g0_helmholtz, NULL, NULL, g3_helmholtz}, {1.0, 1.0}, "k = (a, b)"},
    {"diffusion", "f1=gallery_f1_diffusion g3=gallery_g3_diffusion", -1, 0, {NULL, f1_diffusion},
     {NULL, NULL, NULL, g3_diffusion}, {0.0, 0.0}, "k = the dim x dim tensor, row by row"},
    {"elasticity", "f1=gallery_f1_elasticity g3=gallery_g3_elasticity", 2, 1, {NULL, f1_elasticity},
     {NULL, NULL, NULL, g3_elasticity}, {1.0, 1.0}, "k = (lambda, mu)"},
};

int mf_physics_create_gallery(mf_context ctx, const char *name, int ncomp, int n, const double *k, mf_physics *ph)
{
  if (ph) *ph = NULL;
  MF_CHECK(ctx, NULL, MF_ERR_NULL, "context is NULL");
  MF_CHECK(name, ctx, MF_ERR_NULL, "gallery name is NULL");
  MF_CHECK(ph, ctx, MF_ERR_NULL, "output pointer ph is NULL");
  const gallery_entry *g = NULL;
  for (size_t i = 0; i < sizeof gallery / sizeof *gallery; i++)
    if (!strcmp(gallery[i].name, name)) g = &gallery[i];
  MF_CHECK(g, ctx, MF_ERR_ARGUMENT,
           "gallery physics '%s' unknown (mass, laplace, helmholtz, diffusion, elasticity)", name);
  if (g->nconst == -1)
    MF_CHECK(n == 4 || n == 9, ctx, MF_ERR_ARGUMENT, "gallery physics '%s' takes %s: 4 (2D) or 9 (3D) constants, not %d",
             name, g->what, n);
  else
    MF_CHECK(n == 0 || n == g->nconst, ctx, MF_ERR_ARGUMENT,
             "gallery physics '%s' takes %s: %d constants (or 0 for the defaults), not %d", name, g->what, g->nconst, n);
  mf_physics p = NULL;
  MF_CALL(mf_physics_create(ctx, ncomp, &p));
  for (int t = 0; t < 4; t++) p->ph.g[t] = g->g[t];
  for (int t = 0; t < 2; t++) p->ph.f[t] = g->f[t];
  p->ph.name = g->name;
  p->ph.needs_dim = g->needs_dim;
  p->ph.gallery_functions = g->functions;
  int ierr = n ? mf_physics_set_constants(p, n, k) : mf_physics_set_constants(p, g->nconst, g->k);
  if (ierr) {
    mf_physics_destroy(&p);
    return ierr;
  }
  *ph = p;
  return 0;
}

/* ------------------------------------------------------------------ operators */

int mf_operator_create_physics(mf_space space, mf_physics ph, mf_quadrature quad, mf_operator *op)
{
  if (op) *op = NULL;
  MF_CHECK(space, NULL, MF_ERR_NULL, "space is NULL");
  mf_context ctx = space->ctx;
  MF_CHECK(ph, ctx, MF_ERR_NULL, "physics is NULL");
  MF_CHECK(op, ctx, MF_ERR_NULL, "output pointer op is NULL");
  MF_CHECK(ph->ctx == ctx, ctx, MF_ERR_INCOMPATIBLE, "the physics belongs to another context than the space");
  MF_CHECK(quad == MF_QUAD_GAUSS || quad == MF_QUAD_GAUSS_P2 || quad == MF_QUAD_GLL || quad == MF_QUAD_GAUSS_M2, ctx,
           MF_ERR_ARGUMENT, "quadrature %d unknown (MF_QUAD_GAUSS, MF_QUAD_GAUSS_P2, MF_QUAD_GLL or MF_QUAD_GAUSS_M2)",
           (int)quad);
  MF_CHECK(quad != MF_QUAD_GAUSS_M2 || space->fam->kind == MF_CELL_SIMPLEX, ctx, MF_ERR_UNSUPPORTED,
           "quadrature MF_QUAD_GAUSS_M2 (degree 2p - 2) is for simplex spaces, not %s ones", space->fam->name);
  MF_CHECK(ph->ph.ncomp == space->ncomp, ctx, MF_ERR_INCOMPATIBLE,
           "the physics has %d components, the space %d (mf_space_create_components)", ph->ph.ncomp, space->ncomp);
  MF_CHECK(!ph->ph.needs_dim || ph->ph.ncomp == space->dim, ctx, MF_ERR_INCOMPATIBLE,
           "physics '%s' acts on fields of dim = %d components, this one has %d", ph->ph.name, space->dim,
           ph->ph.ncomp);
  MF_CHECK(!strcmp(ph->ph.name, "diffusion") ? ph->ph.nconst == space->dim * space->dim : 1, ctx,
           MF_ERR_INCOMPATIBLE, "physics 'diffusion' has a %d-entry tensor, the space's dim %d needs %d", ph->ph.nconst,
           space->dim, space->dim * space->dim);
  const mf_phys *p = &ph->ph;
  MF_CHECK(p->g[0] || p->g[1] || p->g[2] || p->g[3] || (p->from_source && (p->src_has[2] || p->src_has[3] ||
                                                                           p->src_has[4] || p->src_has[5])),
           ctx, MF_ERR_ARGUMENT, "the physics has no g-function (mf_physics_set_jacobian): no linear operator to make");
  for (int t = 0; t < p->nbound; t++)
    MF_CHECK(!p->bsrc[t] || p->from_source, ctx, MF_ERR_ARGUMENT,
             "the boundary terms of tag %d are named in a source the physics no longer has (functions given since "
             "replaced it): give them again (mf_physics_set_boundary or mf_physics_set_boundary_source)", p->btag[t]);
  MF_CALL(mf_space_check_mesh(space));
  MF_CHECK(space->fam->physics_create, ctx, MF_ERR_UNSUPPORTED, "pointwise physics: not on %s meshes",
           space->fam->name);
  /* a copy of the physics (holding its source), compiled for the cpu backend where it is source */
  mf_phys copy = *p;
  mf_phys_retain(&copy);
  int ierr = ctx->backend == MF_BACKEND_CPU ? mf_phys_compile_cpu(ctx, &copy) : 0;
  if (!ierr && ctx->backend != MF_BACKEND_CPU && mf_phys_has_boundary_source(&copy)) {
    /* boundary terms as source on a device backend: their host functions too (where the faces' terms run
     * on the host); the volume's functions stay the device's */
    ierr = mf_phys_compile_cpu(ctx, &copy);
    for (int t = 0; t < 2; t++) copy.f[t] = NULL;
    for (int t = 0; t < 4; t++) copy.g[t] = NULL;
  }
  /* a gallery entry on a backend that compiles at run time: the same entry as source */
  if (!ierr && ctx->backend != MF_BACKEND_CPU && !copy.from_source && copy.gallery_functions)
    ierr = mf_phys_source_set(&copy, ctx, mf_phys_gallery_source, strlen(mf_phys_gallery_source), "mfree gallery",
                              copy.gallery_functions);
  ierr = mf_agree(ctx, ierr);
  if (!ierr) ierr = space->fam->physics_create(space, &copy, quad, op);
  mf_phys_release(&copy);
  return ierr;
}

/* ------------------------------------------------------------------ the Jacobian's check */

static const char *const gname[4] = {"g0", "g1", "g2", "g3"}, *const fname[2] = {"f0", "f1"};

/* The state of point p: u, du in [-scale, scale], x in [0, 1)^dim, from a hash of (p, entry). */
static double check_value(int p, int i, double lo, double hi)
{
  const uint64_t h = mf_mix64(mf_mix64((uint64_t)p + 0x5eedULL) ^ (uint64_t)i);
  return lo + (hi - lo) * ((double)(h >> 11) * (1.0 / 9007199254740992.0));
}

/* out = f_t(u, du, x) (zeroed first, zero where f_t is absent); 1 where a value is not finite */
static int check_eval(const mf_phys *ph, int t, int dim, const double *u, const double *du, const double *x, double *out)
{
  const int nc = ph->ncomp, n = t == 0 ? nc : nc * dim;
  memset(out, 0, sizeof(double) * (size_t)n);
  if (ph->f[t]) ph->f[t](dim, nc, u, du, x, ph->k, out);
  int bad = 0;
  for (int i = 0; i < n; i++) bad |= !isfinite(out[i]);
  return bad;
}

static void check_state_text(int dim, int nc, const double *u, const double *du, const double *x, char *buf, size_t n)
{
  int len = snprintf(buf, n, "u = (");
  for (int c = 0; c < nc && len < (int)n; c++) len += snprintf(buf + len, n - (size_t)len, c ? ", %.6g" : "%.6g", u[c]);
  if (len < (int)n) len += snprintf(buf + len, n - (size_t)len, "), du = (");
  for (int i = 0; i < nc * dim && len < (int)n; i++) len += snprintf(buf + len, n - (size_t)len, i ? ", %.6g" : "%.6g", du[i]);
  if (len < (int)n) len += snprintf(buf + len, n - (size_t)len, "), x = (");
  for (int k = 0; k < dim && len < (int)n; k++) len += snprintf(buf + len, n - (size_t)len, k ? ", %.6g" : "%.6g", x[k]);
  if (len < (int)n) snprintf(buf + len, n - (size_t)len, ")");
}

/* g_t at the state against centred differences of f_(t / 2) in u (t even) or du (t odd): into g and fd
 * (mf_phys_gsize(t) entries each, in g_t's order); 1 where a value is not finite (*which: the function) */
static int check_point(const mf_phys *ph, int t, int dim, double *u, double *du, const double *x, double *g, double *fd,
                       const char **which)
{
  const int nc = ph->ncomp, fi = t / 2, nf = fi == 0 ? nc : nc * dim, wrt = t % 2 == 0 ? nc : nc * dim;
  const int n = mf_phys_gsize(t, dim, nc);
  double fp[MF_MAX_COMPONENTS * 3], fm[MF_MAX_COMPONENTS * 3];
  memset(g, 0, sizeof(double) * (size_t)n);
  if (ph->g[t]) ph->g[t](dim, nc, u, du, x, ph->k, g);
  for (int i = 0; i < n; i++)
    if (!isfinite(g[i])) {
      *which = gname[t];
      return 1;
    }
  for (int b = 0; b < wrt; b++) { /* the b-th variable: u_b (t even) or du_b (t odd), du_b = d u_(b / dim) / d x_(b % dim) */
    double *v = t % 2 == 0 ? &u[b] : &du[b];
    const double v0 = *v, h = 1e-6 * (fabs(v0) > 1.0 ? fabs(v0) : 1.0);
    *v = v0 + h;
    int bad = check_eval(ph, fi, dim, u, du, x, fp);
    *v = v0 - h;
    bad |= check_eval(ph, fi, dim, u, du, x, fm);
    *v = v0;
    if (bad) {
      *which = fname[fi];
      return 1;
    }
    const double inv = 1.0 / (2.0 * h);
    for (int r = 0; r < nf; r++) { /* r = c (f0) or c * dim + d (f1); g_t's entry of (r, b) */
      const int c = fi == 0 ? r : r / dim, d = fi == 0 ? 0 : r % dim, ub = t % 2 == 0 ? b : b / dim, e = b % dim;
      int at;
      switch (t) {
      case 0: at = c * nc + ub; break;
      case 1: at = (c * nc + ub) * dim + e; break;
      case 2: at = (c * nc + ub) * dim + d; break;
      default: at = ((c * nc + ub) * dim + d) * dim + e; break;
      }
      fd[at] = (fp[r] - fm[r]) * inv;
    }
  }
  return 0;
}

int mf_physics_check_jacobian(mf_physics ph, int dim, int npoints, double scale, double *err, char *worst, size_t n)
{
  MF_CHECK(ph, NULL, MF_ERR_NULL, "physics is NULL");
  mf_context ctx = ph->ctx;
  MF_CHECK(err, ctx, MF_ERR_NULL, "output pointer err is NULL");
  *err = 0.0;
  if (worst && n) worst[0] = '\0';
  MF_CHECK(dim == 2 || dim == 3, ctx, MF_ERR_ARGUMENT, "dimension %d: 2 or 3", dim);
  MF_CHECK(npoints >= 1 && npoints <= 100000, ctx, MF_ERR_ARGUMENT, "points %d out of range 1..100000", npoints);
  MF_CHECK(scale > 0.0 && isfinite(scale), ctx, MF_ERR_ARGUMENT, "scale %g: the states' entries lie in [-scale, scale], scale > 0", scale);
  MF_CHECK(!ph->ph.needs_dim || ph->ph.ncomp == dim, ctx, MF_ERR_INCOMPATIBLE,
           "physics '%s' acts on fields of dim components: %d components with dim = %d", ph->ph.name, ph->ph.ncomp, dim);
  mf_phys copy = ph->ph; /* a source compiled for the host, as the cpu backend does */
  mf_phys_retain(&copy);
  int ierr = copy.from_source ? mf_phys_compile_cpu(ctx, &copy) : 0;
  if (!ierr && !copy.f[0] && !copy.f[1])
    ierr = mf_error_set(ctx, MF_ERR_ARGUMENT, __FILE__, __LINE__, __func__,
                        "physics '%s' has no f-function (mf_physics_set_residual): nothing to check its g-functions against",
                        copy.name);
  const int nc = copy.ncomp;
  double big[4] = {0, 0, 0, 0}, dev[4] = {0, 0, 0, 0};
  int at_p[4] = {0, 0, 0, 0}, at_i[4] = {0, 0, 0, 0};
  double at_g[4] = {0, 0, 0, 0}, at_fd[4] = {0, 0, 0, 0};
  double g[MF_MAX_COMPONENTS * MF_MAX_COMPONENTS * 9], fd[MF_MAX_COMPONENTS * MF_MAX_COMPONENTS * 9];
  double u[MF_MAX_COMPONENTS], du[MF_MAX_COMPONENTS * 3], x[3];
  for (int p = 0; p < npoints && !ierr; p++) {
    for (int c = 0; c < nc; c++) u[c] = check_value(p, c, -scale, scale);
    for (int i = 0; i < nc * dim; i++) du[i] = check_value(p, 16 + i, -scale, scale);
    for (int k = 0; k < dim; k++) x[k] = check_value(p, 64 + k, 0.0, 1.0);
    for (int t = 0; t < 4 && !ierr; t++) {
      const int m = mf_phys_gsize(t, dim, nc);
      memset(fd, 0, sizeof(double) * (size_t)m);
      const char *which = NULL;
      if (check_point(&copy, t, dim, u, du, x, g, fd, &which)) {
        char st[256];
        check_state_text(dim, nc, u, du, x, st, sizeof st);
        ierr = mf_error_set(ctx, MF_ERR_ARGUMENT, __FILE__, __LINE__, __func__,
                            "physics '%s': %s gave a value that is not finite at %s: check the Jacobian at states where "
                            "the functions are defined (a smaller scale)",
                            copy.name, which, st);
        break;
      }
      for (int i = 0; i < m; i++) {
        big[t] = fmax(big[t], fmax(fabs(g[i]), fabs(fd[i])));
        const double d = fabs(g[i] - fd[i]);
        if (d > dev[t]) dev[t] = d, at_p[t] = p, at_i[t] = i, at_g[t] = g[i], at_fd[t] = fd[i];
      }
    }
  }
  int tw = -1; /* the function of the largest relative discrepancy (the first nonzero one where all agree) */
  for (int t = 0; t < 4 && !ierr; t++) {
    const double e = big[t] > 0.0 ? dev[t] / big[t] : 0.0;
    if (big[t] > 0.0 && (tw < 0 || e > *err)) *err = e, tw = t;
  }
  if (!ierr && worst && n && tw >= 0) { /* the worst function's entry and state, from the state's hash */
    const int p = at_p[tw];
    for (int c = 0; c < nc; c++) u[c] = check_value(p, c, -scale, scale);
    for (int i = 0; i < nc * dim; i++) du[i] = check_value(p, 16 + i, -scale, scale);
    for (int k = 0; k < dim; k++) x[k] = check_value(p, 64 + k, 0.0, 1.0);
    char st[256];
    check_state_text(dim, nc, u, du, x, st, sizeof st);
    snprintf(worst, n, "%s[%d] = %.10g against %.10g by finite differences of %s (%s, relative %.3g) at %s",
             gname[tw], at_i[tw], at_g[tw], at_fd[tw], fname[tw / 2], copy.g[tw] ? "given" : "absent",
             big[tw] > 0.0 ? dev[tw] / big[tw] : 0.0, st);
  }
  mf_phys_release(&copy);
  return ierr;
}

/* ------------------------------------------------------------------ at one point */

/* the g-functions at (u, du) stored in reference form */
static int point_at(const mf_phys *ph, const mf_phys_layout *L, const double *x, const double *Ji, double W,
                    const double *u, const double *du, double *D)
{
  const int dim = L->dim, nc = L->nc;
  double G[4][MF_MAX_COMPONENTS * MF_MAX_COMPONENTS * 9];
  const double *Gp[4] = {NULL, NULL, NULL, NULL};
  int bad = 0;
  for (int t = 0; t < 4; t++) {
    if (!L->has[t]) continue;
    const int n = mf_phys_gsize(t, dim, nc);
    memset(G[t], 0, sizeof(double) * (size_t)n);
    ph->g[t](dim, nc, u, du, x, ph->k, G[t]);
    for (int i = 0; i < n; i++) bad |= !isfinite(G[t][i]);
    Gp[t] = G[t];
  }
  mf_phys_store_point(L, Gp, Ji, W, D);
  return bad;
}

int mf_phys_point(const mf_phys *ph, const mf_phys_layout *L, const double *x, const double *Ji, double W, double *D)
{
  const double u[MF_MAX_COMPONENTS] = {0.0}, du[MF_MAX_COMPONENTS * 3] = {0.0};
  return point_at(ph, L, x, Ji, W, u, du, D);
}

int mf_phys_point_state(const mf_phys *ph, const mf_phys_layout *L, const double *x, const double *Ji, double W,
                        const double *u, const double *ref, double *D)
{
  const int dim = L->dim, nc = L->nc;
  double du[MF_MAX_COMPONENTS * 3];
  for (int b = 0; b < nc; b++) /* du_b,e = sum_m ref_b,m Ji[m][e], as the residual */
    for (int e = 0; e < dim; e++) {
      double s = 0.0;
      for (int m = 0; m < dim; m++) s += ref[b * dim + m] * Ji[3 * m + e];
      du[b * dim + e] = s;
    }
  return point_at(ph, L, x, Ji, W, u, du, D);
}

int mf_phys_refuse(mf_context ctx, const mf_phys *ph, const mf_phys_layout *L, int cell, int q, const double *x)
{
  const int dim = L->dim, nc = L->nc;
  double G[MF_MAX_COMPONENTS * MF_MAX_COMPONENTS * 9];
  const double u[MF_MAX_COMPONENTS] = {0.0}, du[MF_MAX_COMPONENTS * 3] = {0.0};
  char xs[96];
  int len = snprintf(xs, sizeof xs, "(");
  for (int k = 0; k < dim; k++) len += snprintf(xs + len, sizeof xs - (size_t)len, k ? ", %g" : "%g", x[k]);
  snprintf(xs + len, sizeof xs - (size_t)len, ")");
  for (int t = 0; t < 4; t++) {
    if (!L->has[t]) continue;
    const int n = mf_phys_gsize(t, dim, nc);
    memset(G, 0, sizeof(double) * (size_t)n);
    ph->g[t](dim, nc, u, du, x, ph->k, G);
    for (int i = 0; i < n; i++)
      if (!isfinite(G[i]))
        return mf_error_set(ctx, MF_ERR_ARGUMENT, __FILE__, __LINE__, __func__,
                            "physics '%s': %s[%d] = %g at quadrature point %d of cell %d (rank %d), x = %s: the "
                            "pointwise function %s must give finite values",
                            ph->name, gname[t], i, G[i], q, cell, ctx->rank, xs, gname[t]);
  }
  return mf_error_set(ctx, MF_ERR_ARGUMENT, __FILE__, __LINE__, __func__,
                      "physics '%s': a value that is not finite at quadrature point %d of cell %d (rank %d), x = %s",
                      ph->name, q, cell, ctx->rank, xs);
}

static int one_block(const mf_phys_layout *L, const double *D, size_t npoints, size_t stride)
{
  const int dim = L->dim, nc = L->nc;
  if (nc == 1) return 1;
  const int per[4] = {1, dim, dim, dim * dim};
  for (size_t p = 0; p < npoints; p++) {
    const double *d = D + p * stride;
    for (int t = 0; t < 4; t++) {
      if (!L->has[t]) continue;
      const double *blk = d + L->off[t];
      for (int c = 0; c < nc; c++)
        for (int b = 0; b < nc; b++)
          for (int i = 0; i < per[t]; i++) {
            const double v = blk[(c * nc + b) * per[t] + i];
            if (c != b ? v != 0.0 : v != blk[i]) return 0;
          }
    }
  }
  return 1;
}

static void to_one_block(const mf_phys_layout *full, const mf_phys_layout *one, const double *src, double *dst)
{
  const int per[4] = {1, full->dim, full->dim, full->dim * full->dim};
  for (int t = 0; t < 4; t++)
    if (full->has[t])
      for (int i = 0; i < per[t]; i++) dst[one->off[t] + i] = src[full->off[t] + i];
}

int mf_phys_layout_init(const mf_phys *ph, int dim, mf_phys_layout *L)
{
  int has[4];
  for (int t = 0; t < 4; t++) has[t] = ph->g[t] != NULL || (ph->from_source && ph->src_has[2 + t]);
  mf_phys_layout_make(dim, ph->ncomp, ph->ncomp, 0, has, L);
  return L->n;
}

int mf_phys_residual_point(const mf_phys *ph, int dim, const double *x, const double *Ji, double W, const double *u,
                           const double *ref, double *r0, double *r1)
{
  const int nc = ph->ncomp;
  double du[MF_MAX_COMPONENTS * 3], f0[MF_MAX_COMPONENTS], f1[MF_MAX_COMPONENTS * 3];
  for (int b = 0; b < nc; b++) /* du_b,e = sum_m ref_b,m Ji[m][e] */
    for (int e = 0; e < dim; e++) {
      double s = 0.0;
      for (int m = 0; m < dim; m++) s += ref[b * dim + m] * Ji[3 * m + e];
      du[b * dim + e] = s;
    }
  memset(f0, 0, sizeof f0);
  memset(f1, 0, sizeof f1);
  if (ph->f[0]) ph->f[0](dim, nc, u, du, x, ph->k, f0);
  if (ph->f[1]) ph->f[1](dim, nc, u, du, x, ph->k, f1);
  int bad = 0;
  for (int c = 0; c < nc; c++) {
    r0[c] = W * f0[c];
    bad |= !isfinite(f0[c]);
    for (int l = 0; l < dim; l++) { /* against the reference derivative l: sum_d Ji[l][d] f1_c,d */
      double s = 0.0;
      for (int d = 0; d < dim; d++) s += Ji[3 * l + d] * f1[c * dim + d];
      bad |= !isfinite(f1[c * dim + l]);
      r1[c * dim + l] = W * s;
    }
  }
  return bad;
}

int mf_phys_residual_refuse(mf_context ctx, const mf_phys *ph, int dim, int cell, int q, const double *x,
                            const double *u, const double *du)
{
  const int nc = ph->ncomp;
  double f[MF_MAX_COMPONENTS * 3];
  char xs[96];
  int len = snprintf(xs, sizeof xs, "(");
  for (int k = 0; k < dim; k++) len += snprintf(xs + len, sizeof xs - (size_t)len, k ? ", %g" : "%g", x[k]);
  snprintf(xs + len, sizeof xs - (size_t)len, ")");
  for (int t = 0; t < 2; t++) {
    if (!ph->f[t]) continue;
    const int n = t ? nc * dim : nc;
    memset(f, 0, sizeof f);
    ph->f[t](dim, nc, u, du, x, ph->k, f);
    for (int i = 0; i < n; i++)
      if (!isfinite(f[i]))
        return mf_error_set(ctx, MF_ERR_ARGUMENT, __FILE__, __LINE__, __func__,
                            "physics '%s': f%d[%d] = %g at quadrature point %d of cell %d (rank %d), x = %s: the "
                            "pointwise function f%d must give finite values",
                            ph->name, t, i, f[i], q, cell, ctx->rank, xs, t);
  }
  return mf_error_set(ctx, MF_ERR_ARGUMENT, __FILE__, __LINE__, __func__,
                      "physics '%s': the residual is not finite at quadrature point %d of cell %d (rank %d), x = %s",
                      ph->name, q, cell, ctx->rank, xs);
}

/* ------------------------------------------------------------------ residuals */

int mf_operator_residual(mf_operator op, mf_vector u, mf_vector r)
{
  MF_CHECK(op, NULL, MF_ERR_NULL, "operator is NULL");
  mf_context ctx = op->ctx;
  MF_CHECK(u, ctx, MF_ERR_NULL, "input vector u is NULL");
  MF_CHECK(r, ctx, MF_ERR_NULL, "output vector r is NULL");
  MF_CHECK(u != r, ctx, MF_ERR_ARGUMENT, "u and r must be different vectors");
  char why[192];
  MF_CHECK(u->space == op->space, ctx, MF_ERR_INCOMPATIBLE, "input vector u belongs to another space%s",
           mf_space_mismatch(u->space, op->space, "operator has", why, sizeof why));
  MF_CHECK(r->space == op->space, ctx, MF_ERR_INCOMPATIBLE, "output vector r belongs to another space%s",
           mf_space_mismatch(r->space, op->space, "operator has", why, sizeof why));
  const mf_pw_op *pw = mf_pw(op);
  MF_CHECK(pw && pw->kind == MF_OP_PHYSICS && op->ops.residual, ctx, MF_ERR_UNSUPPORTED,
           "a residual needs an operator of a pointwise physics (mf_operator_create_physics), not %s operator",
           mf_operator_kind_name(op));
  MF_CHECK(u->prec == MF_PRECISION_DOUBLE && r->prec == MF_PRECISION_DOUBLE, ctx, MF_ERR_UNSUPPORTED,
           "residuals are computed in double only");
  MF_CALL(mf_vector_access_all(u, MF_ACCESS_READ, "u"));
  MF_CALL(mf_vector_access_all(r, MF_ACCESS_WRITE, "r"));
  int ierr = u->ops.import(u);
  if (!ierr) ierr = r->ops.set_value(r, 0.0);
  if (!ierr) ierr = op->ops.residual(op, u, r);
  ierr = mf_agree(ctx, ierr); /* the export-add waits for every neighbour */
  if (!ierr) ierr = r->ops.export_add(r);
  if (!ierr && op->dirichlet) ierr = r->ops.bc_zero(r);
  return mf_vector_written(r, ierr);
}

int mf_operator_set_state(mf_operator op, mf_vector u)
{
  MF_CHECK(op, NULL, MF_ERR_NULL, "operator is NULL");
  mf_context ctx = op->ctx;
  MF_CHECK(u, ctx, MF_ERR_NULL, "state vector u is NULL");
  char why[192];
  MF_CHECK(u->space == op->space, ctx, MF_ERR_INCOMPATIBLE, "state vector u belongs to another space%s",
           mf_space_mismatch(u->space, op->space, "operator has", why, sizeof why));
  const mf_pw_op *pw = mf_pw(op);
  MF_CHECK(pw && pw->kind == MF_OP_PHYSICS, ctx, MF_ERR_UNSUPPORTED,
           "a state needs an operator of a pointwise physics (mf_operator_create_physics), not %s operator",
           mf_operator_kind_name(op));
  MF_CHECK(op->ops.set_state, ctx, MF_ERR_UNSUPPORTED,
           "the linearisation at a state is not made for %s spaces on the %s backend",
           op->space->fam->name, mf_context_backend(ctx));
  MF_CHECK(op->prec == MF_PRECISION_DOUBLE && u->prec == MF_PRECISION_DOUBLE, ctx, MF_ERR_UNSUPPORTED,
           "states are taken in double only");
  MF_CALL(mf_vector_access_all(u, MF_ACCESS_READ, "u"));
  int ierr = mf_agree(ctx, u->ops.import(u)); /* the family's step is collective */
  if (!ierr) ierr = op->ops.set_state(op, u);
  ierr = mf_agree(ctx, ierr);
  if (!ierr && !op->state) ierr = mf_agree(ctx, mf_vector_create_prec(op->space, MF_PRECISION_DOUBLE, &op->state));
  if (!ierr) ierr = mf_agree(ctx, mf_vector_copy(op->state, u)); /* for multigrid's coarser levels */
  op->revision++; /* its preconditioners set up again at their next use (changed data, or the old kept on an error) */
  return ierr;
}

static int sym_check(const mf_phys_layout *L, const double *D, size_t npoints, size_t stride)
{
  const int dim = L->dim;
  if (L->nb != 1 || !L->has[3] || L->sym) return 0;
  for (size_t p = 0; p < npoints; p++) {
    const double *d3 = D + p * stride + L->off[3];
    for (int l = 0; l < dim; l++)
      for (int m = l + 1; m < dim; m++)
        if (d3[l * dim + m] != d3[m * dim + l]) return 0;
  }
  return 1;
}

static void to_sym(const mf_phys_layout *one, const mf_phys_layout *sym, const double *src, double *dst)
{
  const int dim = one->dim;
  for (int t = 0; t < 3; t++)
    if (one->has[t])
      for (int i = 0; i < (t ? dim : 1); i++) dst[sym->off[t] + i] = src[one->off[t] + i];
  for (int l = 0; l < dim; l++)
    for (int m = l; m < dim; m++) dst[mf_phys_d3(sym, 0, l, m)] = src[one->off[3] + l * dim + m];
}

/* *qd (npts points of layout *lay) converted point by point into layout *to */
static int relayout(mf_context ctx, mf_phys_layout *lay, double **qd, size_t npts, const mf_phys_layout *to,
                    void (*convert)(const mf_phys_layout *, const mf_phys_layout *, const double *, double *))
{
  double *d = NULL;
  MF_CALL(MF_CALLOC_TOUCH(ctx, npts * to->n + 1, &d));
#pragma omp parallel for schedule(static)
  for (size_t p = 0; p < npts; p++) convert(lay, to, *qd + p * lay->n, d + p * to->n);
  free(*qd);
  *qd = d;
  *lay = *to;
  return 0;
}

int mf_phys_narrow(mf_context ctx, mf_phys_layout *lay, double **qd, size_t npts)
{
  mf_phys_layout to;
  if (lay->nb > 1 && one_block(lay, *qd, npts, (size_t)lay->n)) {
    mf_phys_layout_make(lay->dim, lay->nc, 1, 0, lay->has, &to);
    MF_CALL(relayout(ctx, lay, qd, npts, &to, to_one_block));
  }
  if (sym_check(lay, *qd, npts, (size_t)lay->n)) {
    mf_phys_layout_make(lay->dim, lay->nc, 1, 1, lay->has, &to);
    MF_CALL(relayout(ctx, lay, qd, npts, &to, to_sym));
  }
  return 0;
}
