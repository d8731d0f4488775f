/* t02_sumfact -- the sum-factorised cell kernel equals the dense element matrix built by direct
 * quadrature (1e-13 relative to the largest entry), and so does the sum-factorised diagonal, for
 * mass, Laplace (variable coefficient) and Helmholtz, every quadrature rule, 2D p = 1..8 and
 * 3D p = 1..5 (p = 6..8 for Laplace/Gauss), on a curved cell of the ball. */
#include "mf_test.h"
#include "mf_testing.h"

static void check_cell(mf_operator op, const char *what, int dim, int p, int quad)
{
  const int npc = op->space->npc, cell = op->space->ncells - 1; /* a cell of an outer, curved tree */
  double *Ae = malloc(sizeof(double) * npc * npc), *e = calloc(npc, sizeof(double)), *col = malloc(sizeof(double) * npc);
  double *work = malloc(sizeof(double) * mf_kernel_work_size(op));
  double amax = 0.0, err = 0.0;
  mf_element_matrix_dense(op, cell, Ae);
  for (int i = 0; i < npc * npc; i++) amax = fmax(amax, fabs(Ae[i]));
  for (int j = 0; j < npc; j++) {
    e[j] = 1.0;
    mf_kernel_cell_cpu(op, cell, e, col, work);
    e[j] = 0.0;
    for (int i = 0; i < npc; i++) err = fmax(err, fabs(col[i] - Ae[(size_t)i * npc + j]));
  }
  T_CHECK(amax > 0.0 && err <= 1e-13 * amax, "%s dim %d p %d quad %d: sum factorisation vs dense: %.3e (max entry %.3e)",
          what, dim, p, quad, err / amax, amax);
  free(Ae);
  free(e);
  free(col);
  free(work);
}

/* Matrix-free diagonal vs the diagonal of the dense element matrices, assembled. */
static void check_diagonal(mf_operator op, const char *what, int dim, int p, int quad)
{
  mf_space s = op->space;
  const int npc = s->npc;
  double *d = calloc(s->nlocal, sizeof(double)), *dd = calloc(s->nlocal, sizeof(double));
  double *Ae = malloc(sizeof(double) * npc * npc);
  mf_kernel_diagonal_cpu(op, d);
  for (int c = 0; c < s->ncells; c++) {
    mf_element_matrix_dense(op, c, Ae);
    for (int i = 0; i < npc; i++) dd[s->cell_nodes[(size_t)c * npc + i]] += Ae[(size_t)i * npc + i];
  }
  double err = 0.0, mx = 0.0;
  for (int i = 0; i < s->nlocal; i++) {
    err = fmax(err, fabs(d[i] - dd[i]));
    mx = fmax(mx, fabs(dd[i]));
  }
  T_CHECK(err <= 1e-13 * mx, "%s dim %d p %d quad %d: diagonal vs dense: %.3e", what, dim, p, quad, err / mx);
  free(d);
  free(dd);
  free(Ae);
}

int main(int argc, char **argv)
{
  MPI_Init(&argc, &argv);
  mf_context ctx;
  T_CALL(mf_context_create(MPI_COMM_SELF, "cpu", &ctx));
  for (int dim = 2; dim <= 3; dim++) {
    mf_mesh mesh;
    T_CALL(mf_mesh_create(ctx, "ball", dim, 0, &mesh));
    for (int p = 1; p <= MF_MAX_DEGREE; p++) {
      mf_space space;
      T_CALL(mf_space_create(mesh, p, &space));
      for (int quad = 0; quad < 3; quad++) {
        int full = dim == 2 || p <= 5;
        if (!full && quad != MF_QUAD_GAUSS) continue;
        mf_operator op;
        T_CALL(mf_operator_create_laplace(space, (mf_quadrature)quad, t_ljungkvist, NULL, &op));
        check_cell(op, "laplace", dim, p, quad);
        if (full) check_diagonal(op, "laplace", dim, p, quad);
        mf_operator_destroy(&op);
        if (!full) continue;
        T_CALL(mf_operator_create_mass(space, (mf_quadrature)quad, t_ljungkvist, NULL, &op));
        check_cell(op, "mass", dim, p, quad);
        check_diagonal(op, "mass", dim, p, quad);
        mf_operator_destroy(&op);
        T_CALL(mf_operator_create_helmholtz(space, (mf_quadrature)quad, 2.5, 0.75, t_ljungkvist, NULL, &op));
        check_cell(op, "helmholtz", dim, p, quad);
        check_diagonal(op, "helmholtz", dim, p, quad);
        mf_operator_destroy(&op);
      }
      mf_space_destroy(&space);
    }
    mf_mesh_destroy(&mesh);
  }
  mf_context_destroy(&ctx);
  return t_finish();
}
