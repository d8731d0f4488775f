/* t05_convergence -- Poisson with a manufactured solution on the deformed cube: between two
 * refinements, p = 1..4, the L2 error falls at a rate in [p + 0.8, p + 1.3] and the H1 seminorm error
 * at a rate in [p - 0.2, p + 0.3] (expected p + 1 and p; the runs give p + 1 and p within 0.07, see
 * docs/convergence.md). Bounded from above too: an error measure that lost its square root would
 * double the rates. argv: backend dim [coefficient] [adaptive]. adaptive: each mesh of the sequence
 * is refined once more in a ball (hanging nodes). */
#include "mf_test.h"
#include "poisson.h"

int main(int argc, char **argv)
{
  MPI_Init(&argc, &argv);
  const char *backend = t_backend(argc, argv);
  int dim = argc > 2 ? atoi(argv[2]) : 2;
  poisson_coef coef = (argc > 3 && !strcmp(argv[3], "ljungkvist")) ? POISSON_COEF_LJUNGKVIST : POISSON_COEF_CONSTANT;
  int adaptive = argc > 4 && !strcmp(argv[4], "adaptive");
  /* coarse levels in the asymptotic range, fine enough to be cheap on the CPU */
  const int level2d[5] = {0, 4, 3, 2, 2}, level3d[5] = {0, 3, 2, 2, 2};
  mf_context ctx;
  T_CALL(mf_context_create(MPI_COMM_WORLD, backend, &ctx));
  for (int p = 1; p <= 4; p++) {
    double err[2], herr[2];
    int l0 = dim == 2 ? level2d[p] : level3d[p];
    for (int k = 0; k < 2; k++) {
      mf_mesh mesh;
      poisson_result r;
      t_mesh(ctx, "deformed", dim, l0 + k, adaptive, &mesh);
      T_CALL(poisson_solve(mesh, p, coef, 1e-13, &r));
      T_CHECK(r.converged, "dim %d p %d level %d: CG did not converge", dim, p, l0 + k);
      err[k] = r.l2_error;
      herr[k] = r.h1_error;
      mf_mesh_destroy(&mesh);
    }
    const double rate = log2(err[0] / err[1]), hrate = log2(herr[0] / herr[1]);
    T_CHECK(rate >= p + 0.8 && rate <= p + 1.3, "dim %d p %d: L2 errors %.3e -> %.3e, rate %.2f outside [%.1f, %.1f]", dim, p,
            err[0], err[1], rate, p + 0.8, p + 1.3);
    T_CHECK(hrate >= p - 0.2 && hrate <= p + 0.3, "dim %d p %d: H1 errors %.3e -> %.3e, rate %.2f outside [%.1f, %.1f]", dim,
            p, herr[0], herr[1], hrate, p - 0.2, p + 0.3);
    if (getenv("MF_TEST_VERBOSE"))
      printf("dim %d p %d: L2 %.3e -> %.3e rate %.2f, H1 %.3e -> %.3e rate %.2f\n", dim, p, err[0], err[1], rate, herr[0],
             herr[1], hrate);
  }
  mf_context_destroy(&ctx);
  return t_finish();
}
