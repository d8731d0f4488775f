/* t08_cuda -- every CUDA kernel against the CPU reference on random input: for every operator
 * (mass, Laplace, Helmholtz), dim 2 and 3, p = 1..8, quadrature (Gauss p+1, Gauss p+2, GLL p+1),
 * scatter (colored, atomic), with and without the Dirichlet form, on uniform and adaptive meshes
 * (hanging nodes): apply and diagonal agree to 1e-12 relative (max norm). Then the Poisson CG on both backends: iterations within 1, solutions
 * to 1e-10. Exits 77 where no GPU is usable. */
#include "mf_test.h"
#include "poisson.h"

static double maxdiff(mf_vector a, mf_vector b, int n, double *scale)
{
  double *ha = malloc(sizeof(double) * (n ? n : 1)), *hb = malloc(sizeof(double) * (n ? n : 1)), d = 0.0, m = 0.0;
  T_CALL(mf_vector_get_values(a, ha));
  T_CALL(mf_vector_get_values(b, hb));
  for (int i = 0; i < n; i++) {
    d = fmax(d, fabs(ha[i] - hb[i]));
    m = fmax(m, fabs(hb[i]));
  }
  free(ha);
  free(hb);
  *scale = m;
  return d;
}

static int create(mf_space s, int kind, mf_quadrature q, mf_operator *op)
{
  if (kind == 0) return mf_operator_create_mass(s, q, t_ljungkvist, NULL, op);
  if (kind == 1) return mf_operator_create_laplace(s, q, t_ljungkvist, NULL, op);
  return mf_operator_create_helmholtz(s, q, 0.7, 1.3, t_ljungkvist, NULL, op);
}

int main(int argc, char **argv)
{
  MPI_Init(&argc, &argv);
  t_backend(2, (char *[]){argv[0], "cuda", NULL});
  mf_context cc, gc;
  T_CALL(mf_context_create(MPI_COMM_WORLD, "cpu", &cc));
  T_CALL(mf_context_create(MPI_COMM_WORLD, "cuda", &gc));
  int ncases = 0;
  for (int adapt = 0; adapt < 2; adapt++)
  for (int dim = 2; dim <= 3; dim++)
    for (int p = 1; p <= 8; p++) {
      /* enough cells for several blocks and colors; curved cells of the ball; adapt: hanging faces and
       * edges (t_ball) */
      int level = adapt ? (dim == 2 ? 1 : 0) : dim == 2 ? (p <= 4 ? 3 : 2) : (p <= 2 ? 2 : 1);
      mf_mesh cm, gm;
      mf_space cs, gs;
      mf_vector cx, cy, gx, gy;
      t_ball(cc, dim, level, adapt, &cm);
      t_ball(gc, dim, level, adapt, &gm);
      T_CALL(mf_space_create(cm, p, &cs));
      T_CALL(mf_space_create(gm, p, &gs));
      int n;
      mf_space_local_sizes(cs, &n, NULL);
      T_CALL(mf_vector_create(cs, &cx));
      T_CALL(mf_vector_create(cs, &cy));
      T_CALL(mf_vector_create(gs, &gx));
      T_CALL(mf_vector_create(gs, &gy));
      T_CALL(mf_vector_set_random(cx, 100 + p));
      T_CALL(mf_vector_set_random(gx, 100 + p));
      { /* the device makes its random values from its own points, with the host's formula */
        double scale, d = maxdiff(gx, cx, n, &scale);
        T_CHECK(d == 0.0 && scale > 0.5, "random values dim %d p %d adapt %d: GPU-CPU %.3e (max %.3g)", dim, p, adapt, d,
                scale);
      }
      for (int kind = 0; kind < 3; kind++)
        for (int q = 0; q < 3; q++) {
          mf_operator co, go;
          T_CALL(create(cs, kind, (mf_quadrature)q, &co));
          T_CALL(create(gs, kind, (mf_quadrature)q, &go));
          for (int design = MF_KERNEL_POINT; design <= MF_KERNEL_COLUMN; design++)
          for (int scatter = 0; scatter < 2; scatter++)
            for (int dir = 0; dir < 2; dir++) {
              double scale, d;
              T_CALL(mf_operator_set_kernel_design(go, (mf_kernel_design)design));
              T_CALL(mf_operator_set_scatter(go, (mf_scatter)scatter));
              T_CALL(mf_operator_set_dirichlet(co, dir));
              T_CALL(mf_operator_set_dirichlet(go, dir));
              T_CALL(mf_vector_set_value(gy, NAN)); /* every entry must be written */
              T_CALL(mf_operator_apply(co, cx, cy));
              T_CALL(mf_operator_apply(go, gx, gy));
              d = maxdiff(gy, cy, n, &scale);
              T_CHECK(d <= 1e-12 * scale,
                      "apply kind %d dim %d p %d quad %d design %d scatter %d dirichlet %d adapt %d: GPU-CPU %.3e rel",
                      kind, dim, p, q, design, scatter, dir, adapt, d / scale);
              ncases++;
              if (scatter == 0 && design == MF_KERNEL_POINT) {
                T_CALL(mf_operator_diagonal(co, cy));
                T_CALL(mf_operator_diagonal(go, gy));
                d = maxdiff(gy, cy, n, &scale);
                T_CHECK(d <= 1e-12 * scale, "diagonal kind %d dim %d p %d quad %d dirichlet %d adapt %d: GPU-CPU %.3e",
                        kind, dim, p, q, dir, adapt, d / scale);
              }
            }
          /* more cells per block than the default, where it fits */
          if (mf_operator_set_cells_per_block(go, 2) == 0) {
            double scale, d;
            T_CALL(mf_operator_set_kernel_design(go, MF_KERNEL_POINT));
            T_CALL(mf_operator_set_dirichlet(co, 0));
            T_CALL(mf_operator_set_dirichlet(go, 0));
            T_CALL(mf_operator_apply(co, cx, cy));
            T_CALL(mf_operator_apply(go, gx, gy));
            d = maxdiff(gy, cy, n, &scale);
            T_CHECK(d <= 1e-12 * scale, "apply kind %d dim %d p %d quad %d, 2 cells per block: %.3e rel", kind, dim, p,
                    q, d / scale);
          }
          mf_operator_destroy(&co);
          mf_operator_destroy(&go);
        }
      mf_vector_destroy(&cx);
      mf_vector_destroy(&cy);
      mf_vector_destroy(&gx);
      mf_vector_destroy(&gy);
      mf_space_destroy(&cs);
      mf_space_destroy(&gs);
      mf_mesh_destroy(&cm);
      mf_mesh_destroy(&gm);
    }
  T_CHECK(ncases == 2 * 2 * 8 * 3 * 3 * 2 * 2 * 2, "ran %d apply cases", ncases);
  /* CG on the GPU: same iterations (+-1) and solution (1e-10) as on the CPU, uniform and adaptive */
  for (int adapt = 0; adapt < 2; adapt++)
  for (int dim = 2; dim <= 3; dim++)
    for (int p = 1; p <= 4; p++) {
      mf_mesh cm, gm;
      poisson_result rc, rg;
      int level = adapt ? 1 : dim == 2 ? 3 : 2;
      t_mesh(cc, "ball", dim, level, adapt ? 2 : 0, &cm);
      t_mesh(gc, "ball", dim, level, adapt ? 2 : 0, &gm);
      T_CALL(poisson_solve(cm, p, POISSON_COEF_LJUNGKVIST, 1e-12, &rc));
      T_CALL(poisson_solve(gm, p, POISSON_COEF_LJUNGKVIST, 1e-12, &rg));
      T_CHECK(rc.converged && rg.converged, "CG dim %d p %d did not converge", dim, p);
      T_CHECK(abs(rc.iterations - rg.iterations) <= 1, "CG dim %d p %d: %d iterations on the GPU, %d on the CPU", dim, p,
              rg.iterations, rc.iterations);
      T_CHECK(fabs(rc.l2_error - rg.l2_error) <= 1e-10 * rc.l2_error, "CG dim %d p %d: L2 error %.17g GPU vs %.17g CPU",
              dim, p, rg.l2_error, rc.l2_error);
      mf_mesh_destroy(&cm);
      mf_mesh_destroy(&gm);
    }
  mf_context_destroy(&gc);
  mf_context_destroy(&cc);
  return t_finish();
}
