/* t25_simplex_emu -- the simplex GPU kernels (lib/cuda/simplex_kernels.cuh) compiled for the host and
 * run with an OpenMP team per thread block (tests/simplex_emu/cuda_runtime.h), against the CPU twins
 * (lib/simplex/ops_cpu.c): every kernel of every (dim, p = 1..4) (one cell per thread and tiled;
 * quadrature, reference and gradient forms; tables in global or shared memory, or constant memory),
 * Helmholtz with c = 1 and with c(x), Laplace with c = 1 (gradient form), and elasticity (also its
 * gradient form), the shared scatter's kernels on tiles of 16 cells (mf_simplex_tiles, the CPU twin of the device's
 * tiles, checked: each entry's index names its id), on jittered box meshes, tiles 1, 3, 8, 32, to 1e-12
 * relative; the diagonal kernels (scalar with and without c(x), elasticity) against the columns A e_i. It checks the kernels' indexing, barriers and algebra where no GPU is (t25_simplex_cuda
 * runs them on the device); and that each instantiation file writes its own constant arrays. */
#include <cuda_runtime.h>
#include <stdio.h>
#include <stdlib.h>

#include "emu_test.h"
#include "mf_testing.h"
extern "C" {
#include "simplex/mf_simplex.h"
}
#include "simplex_kernels.cuh"

mf_emu_dim mf_emu_block;

#define MF_EMU_DECL(D, P) extern "C" const mf_sx_table *mf_emu_table_d##D##_p##P(void);
MF_EMU_DECL(2, 1) MF_EMU_DECL(2, 2) MF_EMU_DECL(2, 3) MF_EMU_DECL(2, 4)
MF_EMU_DECL(3, 1) MF_EMU_DECL(3, 2) MF_EMU_DECL(3, 3) MF_EMU_DECL(3, 4)

static const mf_sx_table *table(int dim, int p)
{
  const mf_sx_table *(*t[2][4])(void) = {
      {mf_emu_table_d2_p1, mf_emu_table_d2_p2, mf_emu_table_d2_p3, mf_emu_table_d2_p4},
      {mf_emu_table_d3_p1, mf_emu_table_d3_p2, mf_emu_table_d3_p3, mf_emu_table_d3_p4}};
  return t[dim - 2][p - 1]();
}

static double coef(const double *x, int dim, void *u)
{
  (void)u;
  double r2 = 0;
  for (int k = 0; k < dim; k++) r2 += x[k] * x[k];
  return 1.0 / (0.05 + 2.0 * r2);
}

static uint64_t z = 5;
static double rnd()
{
  z = z * 6364136223846793005ULL + 1442695040888963407ULL;
  return (double)(z >> 11) / 9007199254740992.0 - 0.5;
}

typedef void (*kernel_fn)(const mf_sx_args);

/* y zeroed, then every block of the grid run by a team of `threads` */
static void launch(const void *fn, const mf_sx_args &a, int threads, size_t ny)
{
  memset(a.y, 0, sizeof(double) * ny);
  mf_emu_launch((a.ncells + a.tile - 1) / a.tile, threads, [&] { ((kernel_fn)fn)(a); });
}

int main(int argc, char **argv)
{
  MPI_Init(&argc, &argv);
  omp_set_dynamic(0);
  mf_context ctx;
  if (mf_context_create(MPI_COMM_WORLD, "cpu", &ctx)) return 1;
  int cases = 0;
  for (int dim = 2; dim <= 3; dim++)
    for (int p = 1; p <= 4; p++) {
      mf_simplex_mesh m;
      mf_simplex_basis b;
      mf_simplex_dofs d;
      const int n = dim == 2 ? 5 : 2;
      if (mf_simplex_mesh_box(ctx, dim, n, &m) || mf_simplex_basis_setup(ctx, dim, p, -1, &b) ||
          mf_simplex_dofs_create(ctx, &m, &b, &d)) {
        fprintf(stderr, "FAIL: %s\n", mf_last_error_message());
        return 1;
      }
      for (int v = 0; v < m.nv; v++) /* jitter the interior vertices */
        for (int k = 0; k < dim; k++) {
          const double t = m.coords[3 * v + k], r = rnd();
          if (t > 1e-12 && t < 1 - 1e-12) m.coords[3 * v + k] += 0.15 / n * r;
        }
      const mf_sx_table *T = table(dim, p);
      const int N = b.nnodes, nq = b.nq, nd = d.ndofs, NM = mf_sx_nmat(dim);
      CHECK(T->dim == dim && T->p == p && T->nnodes == N && T->nq == nq, "%dD P%d: table of %dD P%d, %d nodes, %d points",
            dim, p, T->dim, T->p, T->nnodes, T->nq);
      /* the reference matrices, as lib/cuda/simplex.cu makes them: S[m][j][i], K[l][m][j][i] */
      double *S = (double *)calloc((size_t)NM * N * N, sizeof(double));
      double *K = (double *)calloc((size_t)dim * dim * N * N, sizeof(double));
      double *coords = (double *)malloc(sizeof(double) * m.nv * dim);
      for (int v = 0; v < m.nv; v++)
        for (int k = 0; k < dim; k++) coords[v * dim + k] = m.coords[3 * v + k];
      for (int q = 0; q < nq; q++) {
        const double w = b.qwts[q], *B = b.B + q * N, *G = b.G + q * N * dim;
        for (int j = 0; j < N; j++)
          for (int i = 0; i < N; i++) {
            S[j * N + i] += w * B[i] * B[j];
            int mm = 1;
            for (int k = 0; k < dim; k++)
              for (int l = k; l < dim; l++, mm++) {
                double v = G[i * dim + k] * G[j * dim + l];
                if (l != k) v += G[i * dim + l] * G[j * dim + k];
                S[(mm * N + j) * N + i] += w * v;
              }
            for (int l = 0; l < dim; l++)
              for (int m2 = 0; m2 < dim; m2++) K[((l * dim + m2) * N + j) * N + i] += w * G[i * dim + l] * G[j * dim + m2];
          }
      }
      /* the gradient table, as lib/cuda/simplex.cu makes it */
      double *E = (double *)malloc(sizeof(double) * mf_sx_grad_doubles(dim, p));
      CHECK(mf_simplex_gradient_n1(dim, p) == mf_sx_n1(dim, p), "%dD P%d: n1 %d, kernels %d", dim, p,
            mf_simplex_gradient_n1(dim, p), mf_sx_n1(dim, p));
      if (mf_simplex_gradient_table(ctx, &b, E)) return 1;
      if (T->set_const) T->set_const(S);
      if (T->set_const_elas) T->set_const_elas(K);
      CHECK(T->set_const_grad && T->fn[MF_SX_THREAD_G] && T->fn[MF_SX_THREAD_GC] && T->fn[MF_SX_THREAD_GMC] &&
                (T->fn[MF_SX_THREAD_GM] != nullptr) == (dim == 2 || p < 4),
            "%dD P%d: gradient kernels missing", dim, p);
      T->set_const_grad(E);
      /* constant memory goes to the gradient table first: 3D P4 has no room left for the reference matrices */
      CHECK((T->fn[MF_SX_THREAD_RC] != nullptr) == (dim == 2 || p < 4) && (T->set_const != nullptr) == (dim == 2 || p < 4),
            "%dD P%d: constant-memory reference kernel present %d", dim, p, T->fn[MF_SX_THREAD_RC] != nullptr);
      CHECK((T->fn[MF_SX_THREAD_EC] != nullptr) == (T->set_const_elas != nullptr) &&
                (dim == 2 || p < 4) == (T->set_const_elas != nullptr),
            "%dD P%d: constant-memory elasticity kernel present %d", dim, p, T->fn[MF_SX_THREAD_EC] != nullptr);
      /* the shared scatter's tiles of 16 cells (the CPU twin of the device's; the kernels take any tile) */
      int *toff = NULL, *tdofs = NULL, *tvoff = NULL, *tverts = NULL, maxd = 0, maxv = 0;
      unsigned short *ldofs = NULL, *lverts = NULL;
      if (mf_simplex_tiles(ctx, m.ncells, N, d.cell_dofs, 16, &toff, &tdofs, &ldofs, &maxd) ||
          mf_simplex_tiles(ctx, m.ncells, dim + 1, m.cells, 16, &tvoff, &tverts, &lverts, &maxv)) {
        fprintf(stderr, "FAIL: %s\n", mf_last_error_message());
        return 1;
      }
      for (int t = 0; t * 16 < m.ncells; t++) /* each entry's index names its id, the lists ascend */
        for (int e = t * 16; e < m.ncells && e < t * 16 + 16; e++)
          for (int j = 0; j < N; j++) {
            const int k = toff[t] + ldofs[(size_t)e * N + j];
            CHECK(k < toff[t + 1] && tdofs[k] == d.cell_dofs[(size_t)e * N + j] && (k == toff[t] || tdofs[k - 1] < tdofs[k]),
                  "%dD P%d: tile %d, cell %d, node %d: index %d", dim, p, t, e, j, ldofs[(size_t)e * N + j]);
          }
      double *x = (double *)malloc(sizeof(double) * nd * dim), *y = (double *)malloc(sizeof(double) * nd * dim),
             *yr = (double *)malloc(sizeof(double) * nd * dim);
      for (int i = 0; i < nd * dim; i++) x[i] = rnd();
      for (int kind = 0; kind < 5; kind++) { /* Helmholtz, Helmholtz with c(x), elasticity, Laplace, mass with c(x) */
        mf_simplex_op op;
        memset(&op, 0, sizeof op);
        const int ncomp = kind == 2 ? dim : 1;
        const double wa = kind == 3 ? 0.0 : kind == 4 ? 1.0 : 0.7, wb = kind == 4 ? 0.0 : 1.3;
        if (kind != 2) {
          if (mf_simplex_op_create(ctx, &m, &b, &d, wa, wb, kind == 1 || kind == 4 ? coef : NULL, NULL, &op)) return 1;
          op.mass_coef = kind == 4; /* the mass operator: c weights the mass term (Helmholtz: the stiffness only) */
          mf_simplex_op_apply_cpu(&op, x, yr);
        } else {
          mf_simplex_elasticity_apply_cpu(&m, &b, &d, 1.7, 0.6, x, yr);
        }
        mf_sx_args a;
        memset(&a, 0, sizeof a);
        a.coords = coords, a.cells = m.cells, a.cell_dofs = d.cell_dofs;
        a.B = b.B, a.G = b.G, a.w = b.qwts, a.S = S, a.E = E, a.coefq = op.coefq, a.mass_coef = op.mass_coef;
        a.a = wa, a.b = wb, a.lambda = 1.7, a.mu = 0.6;
        a.ncells = m.ncells, a.x = x, a.y = y;
        a.tile_off = toff, a.tile_dofs = tdofs, a.tile_voff = tvoff, a.tile_verts = tverts;
        a.cell_ldofs = ldofs, a.cell_lverts = lverts, a.tile_maxd = maxd, a.tile_maxv = maxv;
        int ks[12], nk = 0;
        if (kind == 2) {
          ks[nk++] = MF_SX_THREAD_E, ks[nk++] = MF_SX_TILED_E;
          if (T->fn[MF_SX_THREAD_EC]) ks[nk++] = MF_SX_THREAD_EC;
          CHECK((T->fn[MF_SX_THREAD_GE] != nullptr) == (dim == 2 || p < 4) &&
                    (T->fn[MF_SX_THREAD_GEC] != nullptr) == (dim == 2 || p < 4),
                "%dD P%d: elasticity's gradient kernels present %d", dim, p, T->fn[MF_SX_THREAD_GE] != nullptr);
          if (T->fn[MF_SX_THREAD_GE]) ks[nk++] = MF_SX_THREAD_GE, ks[nk++] = MF_SX_THREAD_GEC;
          CHECK((T->fn[MF_SX_SHARED_EC] != nullptr) == (T->fn[MF_SX_THREAD_EC] != nullptr) &&
                    (T->fn[MF_SX_SHARED_GEC] != nullptr) == (T->fn[MF_SX_THREAD_GEC] != nullptr),
                "%dD P%d: the shared scatter's elasticity kernels present %d %d", dim, p, T->fn[MF_SX_SHARED_EC] != nullptr,
                T->fn[MF_SX_SHARED_GEC] != nullptr);
          if (T->fn[MF_SX_SHARED_EC]) ks[nk++] = MF_SX_SHARED_EC;
          if (T->fn[MF_SX_SHARED_GEC]) ks[nk++] = MF_SX_SHARED_GEC;
          ks[nk++] = MF_SX_TILED_GE; /* every p, 3D P4 too */
        } else if (kind == 3) {
          ks[nk++] = MF_SX_THREAD_G, ks[nk++] = MF_SX_THREAD_GC, ks[nk++] = MF_SX_SHARED_GC, ks[nk++] = MF_SX_TILED_G;
        } else {
          ks[nk++] = MF_SX_THREAD_Q, ks[nk++] = MF_SX_TILED_Q;
          if (kind == 0) {
            ks[nk++] = MF_SX_THREAD_GMC;
            if (T->fn[MF_SX_THREAD_GM]) ks[nk++] = MF_SX_THREAD_GM;
            ks[nk++] = MF_SX_THREAD_R, ks[nk++] = MF_SX_TILED_R;
            if (T->fn[MF_SX_THREAD_RC]) ks[nk++] = MF_SX_THREAD_RC;
            CHECK((T->fn[MF_SX_SHARED_RC] != nullptr) == (T->fn[MF_SX_THREAD_RC] != nullptr) && T->fn[MF_SX_SHARED_GMC],
                  "%dD P%d: the shared scatter's kernels present %d", dim, p, T->fn[MF_SX_SHARED_RC] != nullptr);
            if (T->fn[MF_SX_SHARED_RC]) ks[nk++] = MF_SX_SHARED_RC;
            ks[nk++] = MF_SX_SHARED_GMC, ks[nk++] = MF_SX_TILED_GM;
          }
        }
        for (int ki = 0; ki < nk; ki++)
          for (int stage = 0; stage < 2; stage++)
            for (int tile : {1, 3, 8, 32}) {
              const int k = ks[ki];
              const bool thread = k == MF_SX_THREAD_Q || k == MF_SX_THREAD_R || k == MF_SX_THREAD_E ||
                                  k == MF_SX_THREAD_RC || k == MF_SX_THREAD_EC || k == MF_SX_THREAD_G ||
                                  k == MF_SX_THREAD_GC || k == MF_SX_THREAD_GM || k == MF_SX_THREAD_GMC ||
                                  k == MF_SX_THREAD_GE || k == MF_SX_THREAD_GEC;
              const bool shared = k == MF_SX_SHARED_RC || k == MF_SX_SHARED_GC || k == MF_SX_SHARED_GMC ||
                                  k == MF_SX_SHARED_EC || k == MF_SX_SHARED_GEC; /* tiles of 16 cells, 16 threads */
              const bool constant = k == MF_SX_THREAD_RC || k == MF_SX_THREAD_EC || k == MF_SX_THREAD_GC ||
                                    k == MF_SX_THREAD_GMC || k == MF_SX_THREAD_GEC || shared;
              if (((thread || shared) && tile > 1) || (constant && stage)) continue;
              const int threads = thread || shared ? 16 : 64; /* several blocks, the last one partly idle */
              a.tile = thread || shared ? threads : tile, a.stage = stage;
              launch(T->fn[k], a, threads, (size_t)nd * ncomp);
              double dd = 0, sc = 0;
              for (int i = 0; i < nd * ncomp; i++) dd = fmax(dd, fabs(y[i] - yr[i])), sc = fmax(sc, fabs(yr[i]));
              CHECK(dd <= 1e-12 * sc, "%dD P%d %s kernel %d stage %d tile %d: kernel-CPU %.3e rel", dim, p,
                    kind == 4   ? "mass with c(x)"
                    : kind == 3 ? "Laplace"
                    : kind == 2 ? "elasticity"
                    : kind      ? "Helmholtz with c(x)"
                                : "Helmholtz",
                    k, stage, a.tile, dd / sc);
              cases++;
            }
        { /* the diagonal kernel against the columns A e_i of the CPU twin (every 5th entry) */
          a.tile = 16;
          launch(T->fn[kind == 2 ? MF_SX_DIAG_E : MF_SX_DIAG], a, 16, (size_t)nd * ncomp);
          double *ei = (double *)calloc((size_t)nd * ncomp, sizeof(double)),
                 *col = (double *)calloc((size_t)nd * ncomp, sizeof(double));
          double dd = 0.0, sc = 0.0;
          for (int i = 0; ei && col && i < nd * ncomp; i += 5) {
            ei[i] = 1.0;
            if (kind == 2) mf_simplex_elasticity_apply_cpu(&m, &b, &d, 1.7, 0.6, ei, col);
            else mf_simplex_op_apply_cpu(&op, ei, col);
            ei[i] = 0.0;
            dd = fmax(dd, fabs(y[i] - col[i])), sc = fmax(sc, fabs(col[i]));
          }
          CHECK(ei && col && sc > 0.0 && dd <= 1e-12 * sc, "%dD P%d kind %d: diagonal kernel - A e_i %.3e (of %.3e)", dim,
                p, kind, dd, sc);
          free(ei), free(col);
          cases++;
        }
        mf_simplex_op_destroy(&op);
      }
      free(S), free(K), free(E), free(coords), free(x), free(y), free(yr);
      free(toff), free(tdofs), free(tvoff), free(tverts), free(ldofs), free(lverts);
      mf_simplex_dofs_free(&d);
      mf_simplex_basis_free(&b);
      mf_simplex_mesh_free(&m);
    }
  CHECK(cases > 300, "only %d cases ran", cases);
  mf_context_destroy(&ctx);
  MPI_Finalize();
  return failures ? 1 : 0;
}
