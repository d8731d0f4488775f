/* t25_simplex_cuda -- the simplex action kernels on the GPU (lib/cuda/simplex.cu) against their CPU
 * twins (lib/simplex/ops_cpu.c) on random vectors, on box meshes with jittered interior vertices:
 * mass, Laplace and Helmholtz with c = 1 and with a coefficient c(x_q), and linear elasticity, dim 2
 * and 3, p = 1..4, every candidate configuration (strategy thread/tiled, form quadrature/reference/
 * gradient, tile sizes, threads, tables in global, shared or constant memory, the shared scatter with the
 * device's tiles equal to the CPU twin's; the gradient form a
 * candidate of every Laplace and Helmholtz operator with c = 1, of Laplace with c(x) (the cells'
 * matrices K_e, their bytes in the model) and of elasticity but in 3D P4) to 1e-12 relative (max norm); the
 * single-precision copies (mf_simplex_cuda_single) in every configuration to 1e-5 of the double result; the model's
 * choice and the measured tuning; refusals (device memory limit, degree, rule, form, backend, Lame
 * parameters). Exits 77 where no GPU is usable. */
#include "mf_test.h"
#include "simplex/mf_simplex.h"
#ifdef MFREE_WITH_CUDA
#include "cuda/mf_simplex_cuda.h"
#endif

#ifdef MFREE_WITH_CUDA
static double coef(const double *x, int dim, void *user)
{
  (void)user;
  double r2 = 0.0;
  for (int k = 0; k < dim; k++) r2 += x[k] * x[k];
  return 1.0 / (0.05 + 2.0 * r2);
}

static double rel(const double *a, const double *b, long long n)
{
  double d = 0.0, s = 0.0;
  for (long long i = 0; i < n; i++) d = fmax(d, fabs(a[i] - b[i])), s = fmax(s, fabs(b[i]));
  return s > 0 ? d / s : d;
}

static uint64_t z = 12345;
static double rnd(void)
{
  z = z * 6364136223846793005ULL + 1442695040888963407ULL;
  return (double)(z >> 11) / 9007199254740992.0 - 0.5;
}

static int ncases = 0;

static const char *form_name(int form)
{
  return form == MF_SIMPLEX_CUDA_GRADIENT ? "gradient" : form == MF_SIMPLEX_CUDA_REFERENCE ? "reference" : "quadrature";
}

/* every candidate of op against the CPU result yr; want_gradient: the gradient form must be among them */
static void all_configs(mf_simplex_cuda_op op, const mf_simplex_basis *b, const double *x, const double *yr, long long n,
                        const char *what, int dim, int p, int want_gradient)
{
  double *y = malloc(sizeof(double) * (size_t)n);
  const int nc = mf_simplex_cuda_candidates(op, NULL, 0);
  T_CHECK(nc > 0, "%s %dD P%d: no candidate configuration", what, dim, p);
  mf_simplex_cuda_config *list = malloc(sizeof *list * (size_t)(nc > 0 ? nc : 1));
  T_CHECK(mf_simplex_cuda_candidates(op, list, nc) == nc, "%s: candidate count changed", what);
  int ngrad = 0;
  for (int c = 0; c < nc; c++) ngrad += list[c].form == MF_SIMPLEX_CUDA_GRADIENT;
  T_CHECK(want_gradient ? ngrad >= 3 : ngrad == 0, "%s %dD P%d: %d gradient-form candidates", what, dim, p, ngrad);
  /* the shared scatter: a candidate of the operators with c = 1 wherever a constant-memory kernel one cell per
   * thread is (its cell work), of none with c(x) */
  int nshared = 0, nconst = 0, ntg = 0;
  for (int c = 0; c < nc; c++) {
    nshared += list[c].strategy == MF_SIMPLEX_CUDA_SHARED;
    nconst += list[c].strategy == MF_SIMPLEX_CUDA_THREAD && list[c].stage == 2;
    ntg += list[c].strategy == MF_SIMPLEX_CUDA_TILED && list[c].form == MF_SIMPLEX_CUDA_GRADIENT;
  }
  mf_simplex_cuda_arrays arr;
  T_CHECK(mf_simplex_cuda_get_arrays(op, &arr) == 0, "%s: the operator's arrays", what);
  /* the tiled gradient form: a candidate wherever the gradient form is, with c = 1 only */
  T_CHECK(arr.coefq || !want_gradient ? ntg == 0 : ntg > 0, "%s %dD P%d: %d tiled gradient-form candidates", what, dim, p,
          ntg);
  T_CHECK(arr.coefq ? nshared == 0 : (nshared > 0) == (nconst > 0), "%s %dD P%d: %d shared-scatter candidates, %d "
          "constant-memory ones", what, dim, p, nshared, nconst);
  mf_simplex_cuda_config def;
  T_CALL(mf_simplex_cuda_get_config(op, &def));
  for (int c = -1; c < nc; c++) { /* -1: the model's choice */
    const mf_simplex_cuda_config *k = c < 0 ? &def : &list[c];
    if (c >= 0) T_CALL(mf_simplex_cuda_set_config(op, k->strategy, k->form, k->tile, k->threads, k->stage));
    mf_simplex_cuda_config got;
    T_CALL(mf_simplex_cuda_get_config(op, &got));
    T_CHECK(got.strategy == k->strategy && got.form == k->form && got.tile == k->tile && got.threads == k->threads &&
                got.stage == k->stage,
            "%s: set_config did not take (%d %d %d %d %d)", what, k->strategy, k->form, k->tile, k->threads, k->stage);
    for (long long i = 0; i < n; i++) y[i] = NAN; /* every entry must be written */
    T_CALL(mf_simplex_cuda_apply_host(op, x, y));
    const double r = rel(y, yr, n);
    T_CHECK(r <= 1e-12, "%s %dD P%d strategy %s form %s tile %d threads %d stage %d: GPU-CPU %.3e rel", what, dim, p,
            k->strategy == MF_SIMPLEX_CUDA_SHARED ? "shared" : k->strategy ? "tiled" : "thread", form_name(k->form), k->tile,
            k->threads, k->stage, r);
    ncases++;
  }
  free(list);
  free(y);
  /* the single-precision copy: every configuration (its own candidates) within 1e-5 of the double result, and not
   * equal to it */
  mf_simplex_cuda_op s = NULL;
  T_CALL(mf_simplex_cuda_single(op, b, &s));
  float *xf = malloc(sizeof(float) * (size_t)n), *yf = malloc(sizeof(float) * (size_t)n);
  double *yd = malloc(sizeof(double) * (size_t)n);
  for (long long i = 0; i < n; i++) xf[i] = (float)x[i];
  const int ns = mf_simplex_cuda_candidates(s, NULL, 0);
  T_CHECK(ns == nc, "%s %dD P%d: %d candidates in float, %d in double", what, dim, p, ns, nc);
  mf_simplex_cuda_config *sl = malloc(sizeof *sl * (size_t)(ns > 0 ? ns : 1));
  T_CHECK(mf_simplex_cuda_candidates(s, sl, ns) == ns, "%s: float candidate count changed", what);
  for (int c = -1; c < ns; c++) {
    if (c >= 0) T_CALL(mf_simplex_cuda_set_config(s, sl[c].strategy, sl[c].form, sl[c].tile, sl[c].threads, sl[c].stage));
    for (long long i = 0; i < n; i++) yf[i] = NAN;
    T_CALL(mf_simplex_cuda_apply_host_single(s, xf, yf));
    for (long long i = 0; i < n; i++) yd[i] = yf[i];
    const double r = rel(yd, yr, n);
    T_CHECK(r <= 1e-5 && r > 0.0, "%s %dD P%d float copy, configuration %d: GPU float - CPU double %.3e rel", what, dim,
            p, c, r);
    ncases++;
  }
  EXPECT(mf_simplex_cuda_apply_host(s, x, yd), MF_ERR_INCOMPATIBLE, "for a single-precision simplex operator");
  EXPECT(mf_simplex_cuda_diagonal(s, yd), MF_ERR_UNSUPPORTED, "made from its double operator");
  mf_simplex_cuda_op s2 = NULL;
  EXPECT(mf_simplex_cuda_single(s, b, &s2), MF_ERR_ARGUMENT, "single-precision copy already");
  free(sl), free(xf), free(yf), free(yd);
  mf_simplex_cuda_destroy(&s);
}

/* the device's tiles of op (the shared scatter) equal the CPU twin's (mf_simplex_tiles), DoFs and vertices */
static void tiles_same(mf_context gc, mf_simplex_cuda_op op, const mf_simplex_mesh *m, const mf_simplex_dofs *d,
                       const char *what)
{
  mf_simplex_cuda_arrays a;
  T_CHECK(mf_simplex_cuda_get_arrays(op, &a) == 0 && a.ntiles == (m->ncells + a.tile - 1) / a.tile,
          "%s: %d tiles of %d cells for %d cells", what, a.ntiles, a.tile, m->ncells);
  for (int w = 0; w < 2; w++) {
    const int ni = w ? m->dim + 1 : a.N, *ids = w ? m->cells : d->cell_dofs, nt = a.ntiles;
    int *off = NULL, *list = NULL, maxn = 0;
    unsigned short *loc = NULL;
    T_CALL(mf_simplex_tiles(gc, m->ncells, ni, ids, a.tile, &off, &list, &loc, &maxn));
    int *doff = malloc(sizeof(int) * ((size_t)nt + 1)), *dlist = malloc(sizeof(int) * ((size_t)off[nt] + 1));
    unsigned short *dloc = malloc(sizeof(unsigned short) * ((size_t)m->ncells * ni + 1));
    T_CALL(mf_simplex_cuda_copy_bytes(gc, doff, w ? a.tile_voff : a.tile_off, sizeof(int) * ((size_t)nt + 1), 0));
    T_CHECK(!memcmp(doff, off, sizeof(int) * ((size_t)nt + 1)), "%s: the device's tile offsets (%s) differ", what,
            w ? "vertices" : "DoFs");
    T_CALL(mf_simplex_cuda_copy_bytes(gc, dlist, w ? a.tile_verts : a.tile_dofs, sizeof(int) * (size_t)off[nt], 0));
    T_CALL(mf_simplex_cuda_copy_bytes(gc, dloc, w ? a.cell_lverts : a.cell_ldofs,
                                      sizeof(unsigned short) * (size_t)m->ncells * ni, 0));
    T_CHECK(!memcmp(dlist, list, sizeof(int) * (size_t)off[nt]) &&
                !memcmp(dloc, loc, sizeof(unsigned short) * (size_t)m->ncells * ni),
            "%s: the device's tiles (%s) differ from the CPU twin's", what, w ? "vertices" : "DoFs");
    free(off), free(list), free(loc), free(doff), free(dlist), free(dloc);
  }
}

static void run(mf_context gc, int dim, int p)
{
  mf_simplex_mesh m;
  mf_simplex_basis b;
  mf_simplex_dofs d;
  /* a few hundred cells: several blocks of every configuration */
  const int n = dim == 2 ? (p <= 2 ? 12 : 8) : (p <= 2 ? 4 : 3);
  T_CALL(mf_simplex_mesh_box(gc, dim, n, &m));
  for (int v = 0; v < m.nv; v++) /* jitter the interior vertices: general affine cells */
    for (int k = 0; k < dim; k++) {
      const double t = m.coords[3 * v + k];
      const double r = rnd();
      if (t > 1e-12 && t < 1 - 1e-12) m.coords[3 * v + k] += 0.15 / n * r;
    }
  T_CALL(mf_simplex_basis_setup(gc, dim, p, -1, &b));
  T_CALL(mf_simplex_dofs_create(gc, &m, &b, &d));
  const long long nd = d.ndofs, ne = nd * dim;
  double *x = malloc(sizeof(double) * (size_t)ne), *yr = malloc(sizeof(double) * (size_t)ne);
  for (long long i = 0; i < ne; i++) x[i] = rnd();

  const double ab[3][2] = {{1, 0}, {0, 1}, {0.7, 1.3}};
  const char *name[3] = {"mass", "Laplace", "Helmholtz"};
  for (int withc = 0; withc < 2; withc++)
    for (int k = 0; k < 3; k++) {
      if (withc && k == 0) continue; /* mass with c: covered by Helmholtz's mass part */
      mf_simplex_op op;
      mf_simplex_cuda_op g;
      char what[64];
      snprintf(what, sizeof what, "%s%s", name[k], withc ? " with c(x)" : "");
      T_CALL(mf_simplex_op_create(gc, &m, &b, &d, ab[k][0], ab[k][1], withc ? coef : NULL, NULL, &op));
      mf_simplex_op_apply_cpu(&op, x, yr);
      T_CALL(mf_simplex_cuda_op_create(gc, &op, 0, &g));
      T_CHECK(mf_simplex_cuda_size(g) == nd, "%s: size %lld, expected %lld", what, mf_simplex_cuda_size(g), nd);
      if (!withc && k == 2) tiles_same(gc, g, &m, &d, what);
      /* the gradient form: c = 1 with a stiffness part; with c(x) Laplace (a = 0: the cells' K_e) */
      const int grad_c = k == 1;
      all_configs(g, &b, x, yr, nd, what, dim, p, withc ? grad_c : k > 0);
      if (withc) { /* the reference-matrix form needs c = 1, the gradient form with c(x) a = 0 */
        EXPECT(mf_simplex_cuda_set_config(g, MF_SIMPLEX_CUDA_THREAD, MF_SIMPLEX_CUDA_REFERENCE, 0, 0, -1),
               MF_ERR_UNSUPPORTED, "constant coefficient");
        if (!grad_c)
          EXPECT(mf_simplex_cuda_set_config(g, MF_SIMPLEX_CUDA_THREAD, MF_SIMPLEX_CUDA_GRADIENT, 0, 0, -1),
                 MF_ERR_UNSUPPORTED, "gradient form with a coefficient c(x) needs a Laplace operator (a = 0");
        else { /* the model's bytes: n1 (n1 + 1) / 2 values per cell instead of nq (fewer but in 2D P3: 21 and 16) */
          mf_simplex_cuda_config cq, cg;
          T_CALL(mf_simplex_cuda_set_config(g, MF_SIMPLEX_CUDA_THREAD, MF_SIMPLEX_CUDA_QUADRATURE, 0, 0, -1));
          T_CALL(mf_simplex_cuda_get_config(g, &cq));
          T_CALL(mf_simplex_cuda_set_config(g, MF_SIMPLEX_CUDA_THREAD, MF_SIMPLEX_CUDA_GRADIENT, 0, 0, -1));
          T_CALL(mf_simplex_cuda_get_config(g, &cg));
          const double want = 8.0 * (b.nq - mf_simplex_gradient_nk(dim, p));
          T_CHECK(fabs(cq.bytes_per_cell - cg.bytes_per_cell - want) < 1e-9 * cq.bytes_per_cell,
                  "%s %dD P%d: the model's bytes per cell %g (quadrature) and %g (gradient), %g apart expected", what, dim,
                  p, cq.bytes_per_cell, cg.bytes_per_cell, want);
        }
      } else if (k == 0) { /* the gradient form is for the stiffness */
        EXPECT(mf_simplex_cuda_set_config(g, MF_SIMPLEX_CUDA_THREAD, MF_SIMPLEX_CUDA_GRADIENT, 0, 0, -1),
               MF_ERR_UNSUPPORTED, "needs a stiffness part");
      } else { /* the tiled gradient form with c = 1 */
        mf_simplex_cuda_config cfg;
        T_CALL(mf_simplex_cuda_set_config(g, MF_SIMPLEX_CUDA_TILED, MF_SIMPLEX_CUDA_GRADIENT, 0, 0, -1));
        T_CALL(mf_simplex_cuda_get_config(g, &cfg));
        T_CHECK(cfg.strategy == MF_SIMPLEX_CUDA_TILED && cfg.form == MF_SIMPLEX_CUDA_GRADIENT,
                "%s %dD P%d: tiled gradient form asked, strategy %d form %d taken", what, dim, p, cfg.strategy, cfg.form);
      }
      if (withc && grad_c) /* with c(x) the gradient form one cell per thread only */
        EXPECT(mf_simplex_cuda_set_config(g, MF_SIMPLEX_CUDA_TILED, MF_SIMPLEX_CUDA_GRADIENT, 0, 0, -1), MF_ERR_ARGUMENT,
               "no configuration runs");
      mf_simplex_cuda_destroy(&g);
      T_CHECK(g == NULL, "destroy leaves the handle set");
      if (k == 2 && p == 2) { /* the measured tuning picks a candidate that agrees too */
        double *y = malloc(sizeof(double) * (size_t)nd);
        mf_simplex_cuda_config cfg;
        T_CALL(mf_simplex_cuda_op_create(gc, &op, 1, &g));
        T_CALL(mf_simplex_cuda_get_config(g, &cfg));
        T_CHECK(cfg.tuned == 1 && cfg.measured_ms > 0, "%s: tuning left tuned = %d, %g ms", what, cfg.tuned, cfg.measured_ms);
        T_CALL(mf_simplex_cuda_apply_host(g, x, y));
        T_CHECK(rel(y, yr, nd) <= 1e-12, "%s %dD P%d tuned: GPU-CPU %.3e", what, dim, p, rel(y, yr, nd));
        mf_simplex_cuda_destroy(&g);
        free(y);
      }
      mf_simplex_op_destroy(&op);
    }

  { /* elasticity */
    const double lambda = 1.7, mu = 0.6;
    mf_simplex_cuda_op g;
    mf_simplex_elasticity_apply_cpu(&m, &b, &d, lambda, mu, x, yr);
    T_CALL(mf_simplex_cuda_elasticity_create(gc, &m, &b, &d, lambda, mu, 0, &g));
    T_CHECK(mf_simplex_cuda_size(g) == ne, "elasticity: size %lld, expected %lld", mf_simplex_cuda_size(g), ne);
    all_configs(g, &b, x, yr, ne, "elasticity", dim, p, 1);
    if (dim == 3 && p == 4) /* elasticity's gradient form one cell per thread: not compiled for 3D P4 (registers) */
      EXPECT(mf_simplex_cuda_set_config(g, MF_SIMPLEX_CUDA_THREAD, MF_SIMPLEX_CUDA_GRADIENT, 0, 0, -1),
             MF_ERR_UNSUPPORTED, "not compiled for 3D p = 4");
    T_CALL(mf_simplex_cuda_set_config(g, MF_SIMPLEX_CUDA_TILED, MF_SIMPLEX_CUDA_GRADIENT, 0, 0, -1)); /* tiled: all p */
    /* elasticity's reference form runs one cell per thread only */
    EXPECT(mf_simplex_cuda_set_config(g, MF_SIMPLEX_CUDA_TILED, MF_SIMPLEX_CUDA_REFERENCE, 0, 0, -1), MF_ERR_ARGUMENT,
           "no configuration runs");
    mf_simplex_cuda_destroy(&g);
    EXPECT(mf_simplex_cuda_elasticity_create(gc, &m, &b, &d, 1.0, 0.0, 0, &g), MF_ERR_ARGUMENT, "shear modulus");
  }

  if (dim == 3 && p == 2) { /* refusals */
    mf_simplex_op op;
    mf_simplex_cuda_op g;
    T_CALL(mf_simplex_op_create(gc, &m, &b, &d, 1.0, 1.0, coef, NULL, &op));
    size_t in_use = 0;
    T_CALL(mf_context_device_memory(gc, &in_use, NULL));
    T_CALL(mf_context_set_device_memory_limit(gc, in_use + 1024));
    EXPECT(mf_simplex_cuda_op_create(gc, &op, 0, &g), MF_ERR_MEMORY, "the simplex operator needs");
    T_CHECK(g == NULL, "a refused operator is not NULL");
    size_t after = 0;
    T_CALL(mf_context_device_memory(gc, &after, NULL));
    T_CHECK(after == in_use, "the refusal left %zu bytes allocated", after - in_use);
    T_CALL(mf_context_set_device_memory_limit(gc, 0));
    EXPECT(mf_simplex_cuda_set_config(NULL, 0, 0, 0, 0, -1), MF_ERR_NULL, "NULL");
    T_CALL(mf_simplex_cuda_op_create(gc, &op, 0, &g));
    EXPECT(mf_simplex_cuda_set_config(g, 3, 0, 0, 0, -1), MF_ERR_ARGUMENT, "strategy 3");
    EXPECT(mf_simplex_cuda_set_config(g, 0, 3, 0, 0, -1), MF_ERR_ARGUMENT, "form 3");
    EXPECT(mf_simplex_cuda_set_config(g, 1, 0, 3, 0, -1), MF_ERR_ARGUMENT, "no configuration runs");
    EXPECT(mf_simplex_cuda_tune(g, 0), MF_ERR_ARGUMENT, "reps = 0");
    mf_simplex_cuda_destroy(&g);
    mf_simplex_op_destroy(&op);
    { /* a rule other than the default */
      mf_simplex_basis b2;
      T_CALL(mf_simplex_basis_setup(gc, dim, p, 2 * p + 2, &b2));
      T_CALL(mf_simplex_op_create(gc, &m, &b2, &d, 1.0, 0.0, NULL, NULL, &op));
      EXPECT(mf_simplex_cuda_op_create(gc, &op, 0, &g), MF_ERR_UNSUPPORTED, "default rule");
      mf_simplex_op_destroy(&op);
      mf_simplex_basis_free(&b2);
    }
    { /* degree 5 */
      mf_simplex_basis b5;
      mf_simplex_dofs d5;
      T_CALL(mf_simplex_basis_setup(gc, dim, 5, -1, &b5));
      T_CALL(mf_simplex_dofs_create(gc, &m, &b5, &d5));
      T_CALL(mf_simplex_op_create(gc, &m, &b5, &d5, 1.0, 0.0, NULL, NULL, &op));
      EXPECT(mf_simplex_cuda_op_create(gc, &op, 0, &g), MF_ERR_UNSUPPORTED, "p = 1..4");
      mf_simplex_op_destroy(&op);
      mf_simplex_dofs_free(&d5);
      mf_simplex_basis_free(&b5);
    }
    { /* a context of the cpu backend */
      mf_context cc;
      T_CALL(mf_context_create(MPI_COMM_WORLD, "cpu", &cc));
      T_CALL(mf_simplex_op_create(cc, &m, &b, &d, 1.0, 0.0, NULL, NULL, &op));
      EXPECT(mf_simplex_cuda_op_create(cc, &op, 0, &g), MF_ERR_BACKEND, "backend 'cuda'");
      mf_simplex_op_destroy(&op);
      mf_context_destroy(&cc);
    }
  }
  free(x), free(yr);
  mf_simplex_dofs_free(&d);
  mf_simplex_basis_free(&b);
  mf_simplex_mesh_free(&m);
}
#endif

int main(int argc, char **argv)
{
  MPI_Init(&argc, &argv);
  t_backend(2, (char *[]){argv[0], "cuda", NULL});
#ifdef MFREE_WITH_CUDA
  (void)argc;
  mf_context gc;
  T_CALL(mf_context_create(MPI_COMM_WORLD, "cuda", &gc));
  setenv("MFREE_SIMPLEX_SHARED", "1", 1); /* the shared scatter's tiles for every operator with c = 1: all candidates */
  for (int dim = 2; dim <= 3; dim++)
    for (int p = 1; p <= 4; p++) run(gc, dim, p);
  unsetenv("MFREE_SIMPLEX_SHARED");
  { /* by default the tiles are made for elasticity alone (the scalar operators' model never picks them) */
    mf_simplex_mesh m;
    mf_simplex_basis b;
    mf_simplex_dofs d;
    mf_simplex_op op;
    mf_simplex_cuda_op g = NULL, ge = NULL;
    mf_simplex_cuda_arrays a1, a2;
    T_CALL(mf_simplex_mesh_box(gc, 3, 3, &m));
    T_CALL(mf_simplex_basis_setup(gc, 3, 2, -1, &b));
    T_CALL(mf_simplex_dofs_create(gc, &m, &b, &d));
    T_CALL(mf_simplex_op_create(gc, &m, &b, &d, 0.7, 1.3, NULL, NULL, &op));
    T_CALL(mf_simplex_cuda_op_create(gc, &op, 0, &g));
    T_CALL(mf_simplex_cuda_elasticity_create(gc, &m, &b, &d, 1.7, 0.6, 0, &ge));
    T_CHECK(mf_simplex_cuda_get_arrays(g, &a1) == 0 && mf_simplex_cuda_get_arrays(ge, &a2) == 0 && a1.ntiles == 0 &&
                a2.ntiles > 0,
            "tiles by default: Helmholtz %d, elasticity %d (expected 0 and some)", a1.ntiles, a2.ntiles);
    mf_simplex_cuda_destroy(&g), mf_simplex_cuda_destroy(&ge);
    mf_simplex_op_destroy(&op);
    mf_simplex_dofs_free(&d), mf_simplex_basis_free(&b), mf_simplex_mesh_free(&m);
  }
  T_CHECK(ncases > 0, "no case ran");
  if (getenv("MFREE_TEST_VERBOSE")) printf("t25: %d configurations compared\n", ncases);
  mf_context_destroy(&gc);
#else
  (void)argc, (void)argv;
#endif
  return t_finish();
}
