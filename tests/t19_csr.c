/* t19_csr -- the assembled operator's products (lib/assembled/mf_csr.h, lib/cuda/csr.cu).
 *   cpu:  the grouped product's CPU twin (g = 4..32 lanes per row, the shuffle's order of sums) equals
 *         the row-by-row product to 1e-13 relative, and the binary search finds every diagonal entry,
 *         on assembled Helmholtz matrices (2D/3D, p = 1..3, uniform and adaptive); the lanes per row
 *         grow with the row length (Q1 3D: 16, Q2 3D: 32); the streamed product's twin (rows in tiles,
 *         entries in chunks through a buffer, rows spanning chunks) equals the row-by-row sum.
 *   cuda: the assembled operator on the device (Dirichlet form on, Helmholtz with a variable
 *         coefficient, 2D/3D, p = 1..3, uniform and adaptive with hanging nodes) against the
 *         matrix-free one and the cpu backend's assembled one: apply to 1e-12 relative on random
 *         vectors, diagonal the same; the three products (MFREE_SPMV=cusparse, vector, stream) agree; Jacobi CG
 *         on it takes the cpu assembled CG's iterations (+-1) and every product the same; a bad
 *         MFREE_SPMV and a device memory limit are refused with messages; everything made is freed
 *         (the device memory in use returns to its start). Exits 77 where no GPU is usable. */
#define _POSIX_C_SOURCE 200809L
#include "mf_test.h"
#include "mf_testing.h"
#include "assembled/assembly_impl.h"
#include "assembled/mf_csr.h"

static mf_operator helmholtz(mf_space s)
{
  mf_operator A;
  T_CALL(mf_operator_create_helmholtz(s, MF_QUAD_GAUSS, 0.7, 1.3, t_ljungkvist, NULL, &A));
  return A;
}

/* max |a - b| / max |b| over the local entries */
static double reldiff(mf_vector a, mf_vector b)
{
  int n;
  mf_space_local_sizes(a->space, &n, NULL);
  double *ha = malloc(sizeof(double) * (n ? n : 1)), *hb = malloc(sizeof(double) * (n ? n : 1)), d = 0.0, m = 0.0;
  T_CALL(mf_vector_get_values(a, ha));
  T_CALL(mf_vector_get_values(b, hb));
  for (int i = 0; i < n; i++) {
    d = fmax(d, fabs(ha[i] - hb[i]));
    m = fmax(m, fabs(hb[i]));
  }
  free(ha);
  free(hb);
  return m > 0 ? d / m : d;
}

static void check_cpu(void)
{
  mf_context ctx;
  T_CALL(mf_context_create(MPI_COMM_WORLD, "cpu", &ctx));
  T_CHECK(mf_csr_group(27) == 16 && mf_csr_group(125) == 32 && mf_csr_group(9) == 8 && mf_csr_group(3) == 4 &&
              mf_csr_group(1000) == 32,
          "lanes per row: 27 -> %d, 125 -> %d, 9 -> %d, 3 -> %d, 1000 -> %d", mf_csr_group(27), mf_csr_group(125),
          mf_csr_group(9), mf_csr_group(3), mf_csr_group(1000));
  for (int adapt = 0; adapt < 2; adapt++)
    for (int dim = 2; dim <= 3; dim++)
      for (int p = 1; p <= 3; p++) {
        mf_mesh mesh;
        mf_space s;
        t_ball(ctx, dim, dim == 2 ? 2 : 1, adapt, &mesh);
        T_CALL(mf_space_create(mesh, p, &s));
        mf_operator A = helmholtz(s), S;
        T_CALL(mf_operator_create_assembled(A, &S));
        const int n = s->nlocal;
        double *x = malloc(sizeof(double) * n), *y = malloc(sizeof(double) * n), *z = malloc(sizeof(double) * n);
        uint64_t r = 12345 + 7 * p + dim;
        for (int i = 0; i < n; i++) {
          r ^= r << 13, r ^= r >> 7, r ^= r << 17;
          x[i] = (double)(r >> 11) / 9007199254740992.0 - 0.5;
        }
        double m = 0.0;
        for (int i = 0; i < n; i++) { /* row by row, as apply_csr_cpu */
          double acc = 0.0;
          for (int64_t k = mf_csr(S)->rowptr[i]; k < mf_csr(S)->rowptr[i + 1]; k++) acc += mf_csr(S)->vals[k] * x[mf_csr(S)->colidx[k]];
          y[i] = acc;
          m = fmax(m, fabs(acc));
        }
        for (int g = 4; g <= MF_CSR_MAX_GROUP; g *= 2) {
          mf_csr_apply_grouped_cpu(n, mf_csr(S)->rowptr, mf_csr(S)->colidx, mf_csr(S)->vals, x, z, g);
          double d = 0.0;
          for (int i = 0; i < n; i++) d = fmax(d, fabs(z[i] - y[i]));
          T_CHECK(d <= 1e-13 * m, "grouped product dim %d p %d adapt %d, %d lanes: %.3e relative", dim, p, adapt, g, d / m);
        }
        mf_csr_apply_stream_cpu(n, mf_csr(S)->rowptr, mf_csr(S)->colidx, mf_csr(S)->vals, x, z);
        int differ = 0; /* the same sums in the same order: equal but for a contraction into FMAs */
        for (int i = 0; i < n; i++) differ += fabs(z[i] - y[i]) > 1e-15 * m;
        T_CHECK(!differ, "streamed product dim %d p %d adapt %d: %d of %d rows differ from the row-by-row sum", dim, p,
                adapt, differ, n);
        int missing = 0, wrong = 0;
        for (int i = 0; i < n; i++) {
          const int64_t k = mf_csr_diagonal_position(mf_csr(S)->rowptr, mf_csr(S)->colidx, i);
          if (k < 0) missing++;
          else if (mf_csr(S)->colidx[k] != i || k < mf_csr(S)->rowptr[i] || k >= mf_csr(S)->rowptr[i + 1]) wrong++;
        }
        T_CHECK(!missing && !wrong, "diagonal search dim %d p %d adapt %d: %d rows without, %d wrong", dim, p, adapt,
                missing, wrong);
        if (n > 0) { /* a column that is not in a row is not found */
          int cols[1] = {-1};
          const int64_t rp[2] = {0, 1};
          T_CHECK(mf_csr_diagonal_position(rp, cols, 0) == -1, "a row without its diagonal gave a position");
        }
        free(x);
        free(y);
        free(z);
        mf_operator_destroy(&S);
        mf_operator_destroy(&A);
        mf_space_destroy(&s);
        mf_mesh_destroy(&mesh);
      }
  mf_context_destroy(&ctx);
}

/* Jacobi CG on op, b = random with a zero boundary, x0 = 0, tolerance 1e-10: iterations */
static int cg_iterations(mf_operator op, mf_space s, int seed)
{
  mf_vector b, x;
  mf_cg cg;
  mf_cg_info info;
  T_CALL(mf_vector_create(s, &b));
  T_CALL(mf_vector_create(s, &x));
  T_CALL(mf_vector_set_random(b, seed));
  T_CALL(mf_vector_zero_boundary(b));
  T_CALL(mf_vector_set_value(x, 0.0));
  T_CALL(mf_cg_create(op, &cg));
  T_CALL(mf_cg_set_tolerance(cg, 1e-10, 5000));
  T_CALL(mf_cg_solve(cg, b, x, &info));
  T_CHECK(info.converged, "CG did not converge (%d iterations)", info.iterations);
  mf_cg_destroy(&cg);
  mf_vector_destroy(&b);
  mf_vector_destroy(&x);
  return info.iterations;
}

static void check_cuda(void)
{
  mf_context cc, gc;
  T_CALL(mf_context_create(MPI_COMM_WORLD, "cpu", &cc));
  T_CALL(mf_context_create(MPI_COMM_WORLD, "cuda", &gc));
  int ncases = 0;
  for (int adapt = 0; adapt < 2; adapt++)
    for (int dim = 2; dim <= 3; dim++)
      for (int p = 1; p <= 3; p++) {
        size_t mem0 = 0, mem1 = 0;
        T_CALL(mf_context_device_memory(gc, &mem0, NULL));
        const int level = dim == 2 ? 3 : (p == 1 ? 2 : 1);
        mf_mesh cm, gm;
        mf_space cs, gs;
        t_ball(cc, dim, level, adapt, &cm);
        t_ball(gc, dim, level, adapt, &gm);
        T_CALL(mf_space_create(cm, p, &cs));
        T_CALL(mf_space_create(gm, p, &gs));
        mf_operator co = helmholtz(cs), go = helmholtz(gs), cS, gS, gV, gT;
        T_CALL(mf_operator_set_dirichlet(co, 1));
        T_CALL(mf_operator_set_dirichlet(go, 1));
        unsetenv("MFREE_SPMV");
        T_CALL(mf_operator_create_assembled(co, &cS));
        setenv("MFREE_SPMV", "cusparse", 1);
        T_CALL(mf_operator_create_assembled(go, &gS)); /* cuSPARSE's product */
        setenv("MFREE_SPMV", "vector", 1);
        T_CALL(mf_operator_create_assembled(go, &gV)); /* the grouped kernel */
        setenv("MFREE_SPMV", "stream", 1);
        T_CALL(mf_operator_create_assembled(go, &gT)); /* the streamed kernel */
        unsetenv("MFREE_SPMV");
        mf_vector cx, cy, gx, gy, gz, gw, gt;
        T_CALL(mf_vector_create(cs, &cx));
        T_CALL(mf_vector_create(cs, &cy));
        T_CALL(mf_vector_create(gs, &gx));
        T_CALL(mf_vector_create(gs, &gy));
        T_CALL(mf_vector_create(gs, &gz));
        T_CALL(mf_vector_create(gs, &gw));
        T_CALL(mf_vector_create(gs, &gt));
        for (int seed = 1; seed <= 2; seed++) {
          T_CALL(mf_vector_set_random(cx, 40 + seed));
          T_CALL(mf_vector_set_random(gx, 40 + seed));
          T_CALL(mf_operator_apply(go, gx, gy));
          T_CALL(mf_vector_set_value(gz, NAN)); /* every entry must be written */
          T_CALL(mf_operator_apply(gS, gx, gz));
          T_CALL(mf_vector_set_value(gw, NAN));
          T_CALL(mf_operator_apply(gV, gx, gw));
          T_CALL(mf_vector_set_value(gt, NAN));
          T_CALL(mf_operator_apply(gT, gx, gt));
          T_CALL(mf_operator_apply(cS, cx, cy));
          double d1 = reldiff(gz, gy), d2 = reldiff(gz, cy), d3 = reldiff(gw, gz), d4 = reldiff(gt, gz);
          T_CHECK(d1 <= 1e-12, "dim %d p %d adapt %d: assembled (cusparse) vs matrix-free on cuda %.3e", dim, p, adapt, d1);
          T_CHECK(d2 <= 1e-12, "dim %d p %d adapt %d: assembled cuda vs cpu %.3e", dim, p, adapt, d2);
          T_CHECK(d3 <= 1e-12, "dim %d p %d adapt %d: grouped kernel vs cusparse %.3e", dim, p, adapt, d3);
          T_CHECK(d4 <= 1e-12, "dim %d p %d adapt %d: streamed kernel vs cusparse %.3e", dim, p, adapt, d4);
          ncases++;
        }
        T_CALL(mf_operator_diagonal(go, gy));
        T_CALL(mf_operator_diagonal(gS, gz));
        T_CALL(mf_operator_diagonal(gV, gw));
        T_CALL(mf_operator_diagonal(cS, cy));
        double e1 = reldiff(gz, gy), e2 = reldiff(gz, cy), e3 = reldiff(gw, gz);
        T_CHECK(e1 <= 1e-12 && e2 <= 1e-12 && e3 <= 1e-13, /* two assemblies: atomics add in any order */
                "dim %d p %d adapt %d: diagonal vs matrix-free %.3e, vs cpu %.3e, the two products' %.3e", dim, p, adapt,
                e1, e2, e3);
        const int ic = cg_iterations(cS, cs, 7), ig = cg_iterations(gS, gs, 7), iv = cg_iterations(gV, gs, 7);
        const int it = cg_iterations(gT, gs, 7);
        T_CHECK(abs(ic - ig) <= 1 && abs(iv - ig) <= 1 && abs(it - ig) <= 1,
                "dim %d p %d adapt %d: CG iterations cpu %d, cusparse %d, grouped %d, streamed %d", dim, p, adapt, ic, ig, iv, it);
        T_CHECK(it == cg_iterations(gT, gs, 7), "dim %d p %d adapt %d: CG with the streamed kernel not reproducible", dim, p,
                adapt);
        T_CHECK(ig == cg_iterations(gS, gs, 7), "dim %d p %d adapt %d: CG with cusparse not reproducible", dim, p, adapt);
        mf_vector_destroy(&cx);
        mf_vector_destroy(&cy);
        mf_vector_destroy(&gx);
        mf_vector_destroy(&gy);
        mf_vector_destroy(&gz);
        mf_vector_destroy(&gw);
        mf_vector_destroy(&gt);
        mf_operator_destroy(&gT);
        mf_operator_destroy(&gV);
        mf_operator_destroy(&gS);
        mf_operator_destroy(&cS);
        mf_operator_destroy(&go);
        mf_operator_destroy(&co);
        mf_space_destroy(&gs);
        mf_space_destroy(&cs);
        mf_mesh_destroy(&gm);
        mf_mesh_destroy(&cm);
        T_CALL(mf_context_device_memory(gc, &mem1, NULL));
        T_CHECK(mem1 == mem0, "dim %d p %d adapt %d: %zu bytes of device memory in use after all was destroyed, %zu before",
                dim, p, adapt, mem1, mem0);
      }
  T_CHECK(ncases == 2 * 2 * 3 * 2, "ran %d apply cases", ncases);

  /* refusals: a product that is not one; a device memory limit below what the matrix needs. Nothing
   * is left behind. */
  {
    mf_mesh gm;
    mf_space gs;
    t_ball(gc, 3, 1, 0, &gm);
    T_CALL(mf_space_create(gm, 2, &gs));
    mf_operator go = helmholtz(gs), gS = NULL;
    size_t mem0 = 0, mem1 = 0;
    T_CALL(mf_context_device_memory(gc, &mem0, NULL));
    setenv("MFREE_SPMV", "bogus", 1);
    EXPECT(mf_operator_create_assembled(go, &gS), MF_ERR_ARGUMENT, "MFREE_SPMV='bogus'");
    unsetenv("MFREE_SPMV");
    T_CHECK(gS == NULL, "a refused assembly left an operator");
    T_CALL(mf_operator_create_assembled(go, &gS)); /* the pattern is the space's from here on */
    mf_operator_destroy(&gS);
    T_CALL(mf_context_device_memory(gc, &mem0, NULL));
    const size_t limit = mem0 + 1000;
    T_CALL(mf_context_set_device_memory_limit(gc, limit));
    EXPECT(mf_operator_create_assembled(go, &gS), MF_ERR_MEMORY, "device memory");
    T_CHECK(gS == NULL, "a refused assembly left an operator");
    T_CALL(mf_context_device_memory(gc, &mem1, NULL));
    T_CHECK(mem1 == mem0, "a refused assembly left %zu bytes of device memory behind", mem1 - mem0);
    T_CALL(mf_context_set_device_memory_limit(gc, 0));
    T_CALL(mf_operator_create_assembled(go, &gS));
    mf_operator_destroy(&gS);
    mf_operator_destroy(&go);
    mf_space_destroy(&gs);
    mf_mesh_destroy(&gm);
  }
  mf_context_destroy(&gc);
  mf_context_destroy(&cc);
}

int main(int argc, char **argv)
{
  MPI_Init(&argc, &argv);
  const char *be = t_backend(argc, argv);
  if (!strcmp(be, "cuda")) check_cuda();
  else check_cpu();
  return t_finish();
}
