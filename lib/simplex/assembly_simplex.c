/* assembly_simplex.c -- the assembled simplex operators on the host: the reference matrices of a
 * basis, and the rowwise values (lib/simplex/mf_simplex_asm.h) into the space's sparsity
 * (lib/assembled/assembly_pattern.c). The device twin is lib/cuda/simplex_assembly.cu; lib/assembled/assembly.c makes the
 * operator around the values (operator_simplex.c's mf_simplex_operator_assemble). */
#include "mf_simplex_asm.h"
#include "mf_simplex_space.h"
#include "assembled/assembly_impl.h"

void mf_simplex_reference_matrices(const mf_simplex_basis *b, double *S)
{
  const int N = b->nnodes, D = b->dim, nq = b->nq;
  const size_t NN = (size_t)N * N;
  memset(S, 0, sizeof(double) * NN * (size_t)(1 + D * (D + 1) / 2));
  for (int q = 0; q < nq; q++) {
    const double w = b->qwts[q], *B = b->B + (size_t)q * N, *G = b->G + (size_t)q * N * D;
    for (int i = 0; i < N; i++)
      for (int j = 0; j < N; j++) {
        S[(size_t)i * N + j] += w * B[i] * B[j];
        int m = 1;
        for (int k = 0; k < D; k++)
          for (int l = k; l < D; l++, m++) {
            double v = G[i * D + k] * G[j * D + l];
            if (l != k) v += G[i * D + l] * G[j * D + k];
            S[(size_t)m * NN + (size_t)i * N + j] += w * v;
          }
      }
  }
}

/* vals <- the rows of the assembled a M + b K_c (the mass operator: a M_c), rowwise: row r zeroed, then row i of the element
 * matrix of every (cell, i) in r's list (off, ent: mf_assembly_dof_cells) added at the searched
 * positions. One thread per row: the order of every sum is the device kernel's. */
void mf_simplex_assembly_values_cpu(const mf_simplex_op *op, const double *S, const int64_t *rowptr, const int *colidx,
                                    const int64_t *off, const int64_t *ent, int nrows, double *vals)
{
  const mf_simplex_mesh *m = op->mesh;
  const mf_simplex_basis *b = op->basis;
  const int dim = m->dim, N = b->nnodes, nq = b->nq;
  const int *cell_dofs = op->dofs->cell_dofs;
#pragma omp parallel for schedule(dynamic, 256)
  for (int r = 0; r < nrows; r++) {
    for (int64_t k = rowptr[r]; k < rowptr[r + 1]; k++) vals[k] = 0.0;
    for (int64_t t = off[r]; t < off[r + 1]; t++) {
      const int e = (int)(ent[t] / N), i = (int)(ent[t] % N);
      const int *v = m->cells + (size_t)e * (dim + 1), *cd = cell_dofs + (size_t)e * N;
      double X[12];
      for (int a = 0; a <= dim; a++)
        for (int k = 0; k < dim; k++) X[a * dim + k] = m->coords[3 * (size_t)v[a] + k];
      mf_sx_asm_cell c;
      mf_sx_asm_geometry(dim, X, &c);
      const double *cq = op->coefq ? op->coefq + (size_t)e * nq : NULL;
      for (int j = 0; j < N; j++) {
        const double a = cq ? mf_sx_asm_entry_quad(dim, N, nq, b->B, b->G, b->qwts, cq, &c, op->a, op->b, op->mass_coef,
                                                   i, j)
                            : mf_sx_asm_entry_ref(dim, N, S, &c, op->a, op->b, i, j);
        vals[mf_csr_find(rowptr, colidx, r, cd[j])] += a;
      }
    }
  }
}
