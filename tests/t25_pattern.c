/* t25_pattern -- the assembled operators' sparsity (lib/assembled/assembly_pattern.c), on 1 and 2 ranks, 2D and
 * 3D, p = 1..3, on a uniform cube, an adaptive ball and a ball refined along shells (hanging nodes,
 * whose cells list the constraining DoFs: the condensed couplings):
 *  - rowptr starts at 0 and never decreases; every column is a local DoF, strictly ascending per row;
 *  - every pair of nodes of every cell is an entry (found by binary search), and every entry is such
 *    a pair: the rows are exactly the unions of their cells' nodes, nothing missing, nothing extra;
 *  - the pattern made with 1 and with 3 OpenMP threads is the same, bit for bit (built with OpenMP);
 *  - an assembled operator on the space uses that pattern (made once per space). */
#include "mf_test.h"
#include "mf_testing.h"
#include "assembled/assembly_impl.h"
#include "assembled/mf_csr.h"
#ifdef _OPENMP
#include <omp.h>
#endif

/* position of column j in row i, or -1 */
static int64_t find(const int64_t *rowptr, const int *colidx, int i, int j)
{
  int64_t lo = rowptr[i], hi = rowptr[i + 1];
  while (lo < hi) {
    const int64_t mid = lo + (hi - lo) / 2;
    if (colidx[mid] < j) lo = mid + 1;
    else hi = mid;
  }
  return lo < rowptr[i + 1] && colidx[lo] == j ? lo : -1;
}

static void check_pattern(mf_space s, const char *what)
{
  const int n = s->nlocal, npc = s->npc;
  const int64_t *rowptr = s->csr_rowptr;
  const int *colidx = s->csr_colidx;
  T_CHECK(rowptr[0] == 0, "%s: rowptr[0] = %lld", what, (long long)rowptr[0]);
  int bad_rows = 0, bad_cols = 0, missing = 0, extra = 0;
  for (int i = 0; i < n; i++) {
    if (rowptr[i + 1] < rowptr[i]) bad_rows++;
    for (int64_t k = rowptr[i]; k < rowptr[i + 1]; k++)
      if (colidx[k] < 0 || colidx[k] >= n || (k > rowptr[i] && colidx[k] <= colidx[k - 1])) bad_cols++;
  }
  T_CHECK(!bad_rows, "%s: rowptr decreases at %d rows", what, bad_rows);
  T_CHECK(!bad_cols, "%s: %d columns out of range or not strictly ascending", what, bad_cols);
  if (bad_rows || bad_cols) return;
  /* every cell's pairs are entries; each entry so found is marked */
  const int64_t nnz = rowptr[n];
  char *covered = calloc((size_t)(nnz ? nnz : 1), 1);
  for (int e = 0; e < s->ncells; e++) {
    const int *nodes = &s->cell_nodes[(size_t)e * npc];
    for (int a = 0; a < npc; a++)
      for (int b = 0; b < npc; b++) {
        const int64_t k = find(rowptr, colidx, nodes[a], nodes[b]);
        if (k < 0) missing++;
        else covered[k] = 1;
      }
  }
  for (int64_t k = 0; k < nnz; k++) extra += !covered[k];
  free(covered);
  T_CHECK(!missing, "%s: %d pairs of nodes of a cell are not in the pattern", what, missing);
  T_CHECK(!extra, "%s: %d entries couple no two nodes of a cell", what, extra);
}

/* the space's pattern made with `threads` OpenMP threads (all where 0), taken off the space */
static void make_pattern(mf_space s, int threads, int64_t **rowptr, int **colidx)
{
#ifdef _OPENMP
  const int nt = omp_get_max_threads();
  if (threads) omp_set_num_threads(threads);
#else
  (void)threads;
#endif
  T_CALL(mf_assembly_pattern(s, "the tested pattern", 0));
#ifdef _OPENMP
  omp_set_num_threads(nt);
#endif
  *rowptr = s->csr_rowptr;
  *colidx = s->csr_colidx;
  s->csr_rowptr = NULL;
  s->csr_colidx = NULL;
}

int main(int argc, char **argv)
{
  MPI_Init(&argc, &argv);
  mf_context ctx;
  T_CALL(mf_context_create(MPI_COMM_WORLD, "cpu", &ctx));
  static const char *const meshes[] = {"uniform cube", "adaptive ball", "ball refined along shells"};
  for (int dim = 2; dim <= 3; dim++)
    for (int m = 0; m < 3; m++)
      for (int p = 1; p <= 3; p++) {
        mf_mesh mesh;
        mf_space s;
        if (m == 0) T_CALL(mf_mesh_create(ctx, "cube", dim, dim == 2 ? 3 : 2, &mesh));
        else if (m == 1) t_mesh(ctx, "ball", dim, 1, 2, &mesh);
        else {
          T_CALL(mf_mesh_create(ctx, "ball", dim, 1, &mesh));
          T_CALL(mf_mesh_refine_shells(mesh, 2));
        }
        T_CALL(mf_space_create(mesh, p, &s));
        char what[128];
        snprintf(what, sizeof what, "dim %d p %d, %s", dim, p, meshes[m]);
        int64_t *r1;
        int *c1;
        make_pattern(s, 1, &r1, &c1);
        const int n = s->nlocal;
#ifdef _OPENMP /* without OpenMP both would be the same run */
        int64_t *r3;
        int *c3;
        make_pattern(s, 3, &r3, &c3);
        T_CHECK(!memcmp(r1, r3, sizeof(int64_t) * ((size_t)n + 1)) &&
                    !memcmp(c1, c3, sizeof(int) * (size_t)r1[n]),
                "%s: the patterns made with 1 and 3 threads differ", what);
        free(r3);
        free(c3);
#endif
        s->csr_rowptr = r1;
        s->csr_colidx = c1;
        check_pattern(s, what);
        /* an assembled operator takes the space's pattern, made once */
        mf_operator A, S;
        T_CALL(mf_operator_create_mass(s, MF_QUAD_GAUSS, NULL, NULL, &A));
        T_CALL(mf_operator_create_assembled(A, &S));
        T_CHECK(mf_csr(S)->rowptr == r1 && mf_csr(S)->colidx == c1, "%s: the assembled operator made a pattern of its own", what);
        int nodiag = 0;
        for (int i = 0; i < n; i++) nodiag += mf_csr_diagonal_position(mf_csr(S)->rowptr, mf_csr(S)->colidx, i) < 0;
        T_CHECK(!nodiag, "%s: %d rows without their diagonal", what, nodiag);
        mf_operator_destroy(&S);
        mf_operator_destroy(&A);
        mf_space_destroy(&s);
        mf_mesh_destroy(&mesh);
      }
  mf_context_destroy(&ctx);
  return t_finish();
}
