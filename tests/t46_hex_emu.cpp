/* t46_hex_emu -- the vector kernels' cell designs for 3D hexahedra (lib/cuda/cell_slab.cuh: a cell's
 * component on NQ lanes of a warp, the x direction by shuffles; lib/cuda/cell_thread.cuh: one thread per
 * component of a cell) compiled for the host and run with an OpenMP team per thread block
 * (tests/simplex_emu/cuda_runtime.h), against a reference written here from the definitions, sharing no
 * code with them: for every cell component and point, u_q and the reference gradient summed node by
 * node from the 1D matrices, r = m u_q and v = G grad u_q from the stored entries, tested against every
 * node's basis function. Every shape the designs take (slab: 2..6 nodes per direction with Gauss q = p + 1,
 * q = p + 2 and Gauss-Lobatto points; thread: 2 and 3 nodes), mass, gradient and both, the x derivative
 * kept or plane by plane, the stored entries read in place or staged per block, double and float, on a mesh of shared nodes (the scatter adds across cells),
 * cells in a permuted order with the last one left out of the launch, Dirichlet marks on the input, one
 * and two warps per block: to 1e-12 relative (float: 1e-5). It checks the designs' indexing, shuffles and
 * algebra where no GPU is; t38's cuda cases run them on the device against the cpu backend. */
#include <cuda_runtime.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <vector>

#include "emu_test.h"
#include "mf_testing.h"
#include "cuda/cell_slab.cuh"
#include "cuda/cell_thread.cuh"

mf_emu_dim mf_emu_block;

static int cases = 0;

static uint64_t z = 11;
static double rnd()
{
  z = z * 6364136223846793005ULL + 1442695040888963407ULL;
  return (double)(z >> 11) / 9007199254740992.0 - 0.5;
}

/* the 1D matrices the slab design reads as constants (the run-time text's mf_cbasis) */
struct emu_cb {
  static double B[MF_MAX_NQ * MF_MAX_N1], G[MF_MAX_NQ * MF_MAX_N1], D[MF_MAX_NQ * MF_MAX_NQ];
  static double b(int i) { return B[i]; }
  static double g(int i) { return G[i]; }
  static double d(int i) { return D[i]; }
};
double emu_cb::B[MF_MAX_NQ * MF_MAX_N1], emu_cb::G[MF_MAX_NQ * MF_MAX_N1], emu_cb::D[MF_MAX_NQ * MF_MAX_NQ];

enum { NCOMP = 3, E = 2 }; /* components; cells per direction */

/* The problem of one shape: E^3 cells sharing their faces' nodes, the stored entries (m first where there
 * is a mass part, then G's upper triangle: 00 01 02 11 12 22), the input, Dirichlet marks, the cell order. */
struct problem {
  int n1, nq, ns, ncells, nnodes;
  std::vector<int> cell_nodes, order;
  std::vector<double> qd, x;
  std::vector<unsigned char> bc;
};

static void make_problem(const mf_basis1d &b, bool mass, bool grad, problem &P)
{
  const int n1 = b.n1, nq = b.nq, nl = E * (n1 - 1) + 1, npc = n1 * n1 * n1, nqp = nq * nq * nq;
  P.n1 = n1;
  P.nq = nq;
  P.ns = (mass ? 1 : 0) + (grad ? 6 : 0);
  P.ncells = E * E * E;
  P.nnodes = nl * nl * nl;
  P.cell_nodes.assign((size_t)P.ncells * npc, 0);
  for (int c = 0; c < P.ncells; c++) {
    const int ex = c % E, ey = c / E % E, ez = c / (E * E);
    for (int k = 0; k < n1; k++)
      for (int j = 0; j < n1; j++)
        for (int i = 0; i < n1; i++)
          P.cell_nodes[(size_t)c * npc + (k * n1 + j) * n1 + i] =
              ((ez * (n1 - 1) + k) * nl + ey * (n1 - 1) + j) * nl + ex * (n1 - 1) + i;
  }
  P.order.resize(P.ncells);
  for (int c = 0; c < P.ncells; c++) P.order[c] = (5 * c + 3) % P.ncells; /* a permutation (E^3 = 8) */
  P.qd.resize((size_t)P.ncells * P.ns * nqp);
  for (double &v : P.qd) v = rnd();
  for (int c = 0; c < P.ncells; c++) /* m > 0 and G diagonally dominant, as a real operator's */
    for (int q = 0; q < nqp; q++) {
      double *e = &P.qd[(size_t)c * P.ns * nqp + q];
      if (mass) e[0] = 1.0 + e[0];
      if (grad) {
        const int o = mass ? 1 : 0;
        e[(o + 0) * nqp] += 2.0, e[(o + 3) * nqp] += 2.0, e[(o + 5) * nqp] += 2.0;
      }
    }
  P.x.resize((size_t)P.nnodes * NCOMP);
  for (double &v : P.x) v = rnd();
  P.bc.assign(P.x.size(), 0);
  for (size_t i = 0; i < P.bc.size(); i++) P.bc[i] = rnd() > 0.35; /* about 15% marked */
}

/* y = the operator of the cells order[0..nrun-1] on x (marked entries of x read as 0), from the definitions */
static void reference(const mf_basis1d &b, bool mass, bool grad, const problem &P, int nrun, std::vector<double> &y)
{
  const int n1 = b.n1, nq = b.nq, npc = n1 * n1 * n1, nqp = nq * nq * nq;
  y.assign(P.x.size(), 0.0);
  std::vector<double> u(npc), r(npc);
  for (int pos = 0; pos < nrun; pos++) {
    const int c = P.order[pos];
    const double *qd = &P.qd[(size_t)c * P.ns * nqp];
    for (int comp = 0; comp < NCOMP; comp++) {
      for (int n = 0; n < npc; n++) {
        const size_t dof = (size_t)P.cell_nodes[(size_t)c * npc + n] * NCOMP + comp;
        u[n] = P.bc[dof] ? 0.0 : P.x[dof];
        r[n] = 0.0;
      }
      for (int q = 0; q < nqp; q++) {
        const int pa = q % nq, pb = q / nq % nq, pc = q / (nq * nq);
        double uq = 0, g[3] = {0, 0, 0};
        for (int n = 0; n < npc; n++) {
          const int i = n % n1, j = n / n1 % n1, k = n / (n1 * n1);
          const double bi = b.B[pa * n1 + i], bj = b.B[pb * n1 + j], bk = b.B[pc * n1 + k];
          uq += bi * bj * bk * u[n];
          g[0] += b.Bg[pa * n1 + i] * bj * bk * u[n];
          g[1] += bi * b.Bg[pb * n1 + j] * bk * u[n];
          g[2] += bi * bj * b.Bg[pc * n1 + k] * u[n];
        }
        const double m = mass ? qd[q] : 0.0;
        const double *G = qd + (mass ? nqp : 0);
        double v[3] = {0, 0, 0};
        if (grad) {
          const double G00 = G[q], G01 = G[nqp + q], G02 = G[2 * nqp + q], G11 = G[3 * nqp + q],
                       G12 = G[4 * nqp + q], G22 = G[5 * nqp + q];
          v[0] = G00 * g[0] + G01 * g[1] + G02 * g[2];
          v[1] = G01 * g[0] + G11 * g[1] + G12 * g[2];
          v[2] = G02 * g[0] + G12 * g[1] + G22 * g[2];
        }
        for (int n = 0; n < npc; n++) {
          const int i = n % n1, j = n / n1 % n1, k = n / (n1 * n1);
          const double bi = b.B[pa * n1 + i], bj = b.B[pb * n1 + j], bk = b.B[pc * n1 + k];
          r[n] += m * uq * bi * bj * bk + v[0] * b.Bg[pa * n1 + i] * bj * bk + v[1] * bi * b.Bg[pb * n1 + j] * bk +
                  v[2] * bi * bj * b.Bg[pc * n1 + k];
        }
      }
      for (int n = 0; n < npc; n++) y[(size_t)P.cell_nodes[(size_t)c * npc + n] * NCOMP + comp] += r[n];
    }
  }
}

/* the launch's arguments on P's arrays (qd and x as T in qt, xt; y in yt) for the cells order[0..nrun-1] */
template <class T>
static mf_cuda_apply_args args_of(const mf_basis1d &b, const problem &P, int nrun, std::vector<T> &qt,
                                  std::vector<T> &xt, std::vector<T> &yt)
{
  qt.assign(P.qd.begin(), P.qd.end());
  xt.assign(P.x.begin(), P.x.end());
  yt.assign(P.x.size(), (T)0);
  mf_cuda_apply_args a;
  memset(&a, 0, sizeof a);
  a.cell_nodes = P.cell_nodes.data();
  a.bc = P.bc.data();
  a.qd = qt.data();
  a.qd_batch = 1; /* the physics' layout: cell by cell, entry by entry, point by point */
  a.qd_block_stride = (long long)P.nq * P.nq * P.nq;
  a.qd_batch_stride = (long long)P.ns * a.qd_block_stride;
  a.B = b.B;
  a.D = b.D;
  a.cell_list = P.order.data();
  a.cell_begin = 0;
  a.cell_end = nrun;
  a.atomic = 1;
  a.x = xt.data();
  a.y = yt.data();
  return a;
}

static double rel_diff(const std::vector<double> &ref, const double *got, size_t n)
{
  double d = 0, m = 0;
  for (size_t i = 0; i < n; i++) {
    d = fmax(d, fabs(got[i] - ref[i]));
    m = fmax(m, fabs(ref[i]));
  }
  return d / (m > 0 ? m : 1);
}

template <class T> static std::vector<double> as_double(const std::vector<T> &v) { return std::vector<double>(v.begin(), v.end()); }

/* the slab design of one shape (N1, NQ; the basis b of that shape) against the reference */
template <int N1, int NQ, bool COLLOC, bool MASS, bool GRAD, bool XP, class T, bool QS = false>
static void slab_case(const mf_basis1d &b, const char *rule, int tpb)
{
  problem P;
  make_problem(b, MASS, GRAD, P);
  const int nrun = P.ncells - 1; /* the last cell of the order is not launched */
  std::vector<double> ref;
  reference(b, MASS, GRAD, P, nrun, ref);
  std::vector<T> qt, xt, yt;
  const mf_cuda_apply_args a = args_of<T>(b, P, nrun, qt, xt, yt);
  /* QS: the block's stored entries staged in shared memory, of the size the library launches with, and a
   * guard after it that the kernel must not touch */
  const size_t nstage = QS ? mfc::slab_stage_size(NQ, NCOMP, tpb, mfc::slab_entries(MASS, GRAD)) : 1, nguard = 64;
  std::vector<T> stage(nstage + nguard, (T)-7.25);
  mf_emu_launch(mfc::slab_blocks((long long)nrun * NCOMP, NQ, tpb), tpb, [&] {
    mfc::slab_apply<N1, NQ, MASS, GRAD, COLLOC, NCOMP, T, emu_cb, XP, QS>(a, reinterpret_cast<unsigned char *>(stage.data()));
  });
  for (size_t k = nstage; k < nstage + nguard; k++)
    CHECK(stage[k] == (T)-7.25, "slab %s p = %d: the stage wrote past its %zu values", rule, N1 - 1, nstage);
  const std::vector<double> got = as_double(yt);
  const double err = rel_diff(ref, got.data(), got.size()), tol = sizeof(T) == 4 ? 1e-5 : 1e-12;
  cases++;
  CHECK(err <= tol, "slab %s p = %d q = %d mass %d grad %d xplane %d stage %d %s, %d threads: relative difference %.3e > %.0e",
        rule, N1 - 1, NQ, MASS, GRAD, XP, QS, sizeof(T) == 4 ? "float" : "double", tpb, err, tol);
}

/* the thread design of one shape against the reference */
template <int N1, int NQ, bool COLLOC, bool MASS, bool GRAD, bool VLOAD, class T>
static void thread_case(const mf_basis1d &b, const char *rule, int tpb)
{
  problem P;
  make_problem(b, MASS, GRAD, P);
  const int nrun = P.ncells - 1;
  std::vector<double> ref;
  reference(b, MASS, GRAD, P, nrun, ref);
  std::vector<T> qt, xt, yt;
  const mf_cuda_apply_args a = args_of<T>(b, P, nrun, qt, xt, yt);
  static unsigned char smem[sizeof(double) * 2 * MF_MAX_NQ * MF_MAX_N1];
  mf_emu_launch(((long long)nrun * NCOMP + tpb - 1) / tpb, tpb,
             [&] { mfc::thread_apply<N1, NQ, MASS, GRAD, COLLOC, NCOMP, T, VLOAD>(a, smem); });
  const std::vector<double> got = as_double(yt);
  const double err = rel_diff(ref, got.data(), got.size()), tol = sizeof(T) == 4 ? 1e-5 : 1e-12;
  cases++;
  CHECK(err <= tol, "thread %s p = %d q = %d mass %d grad %d vload %d %s: relative difference %.3e > %.0e", rule,
        N1 - 1, NQ, MASS, GRAD, VLOAD, sizeof(T) == 4 ? "float" : "double", err, tol);
}

/* the 1D matrices of degree n1 - 1 with rule quad, into b and the constants of the slab design */
static int basis(int n1, mf_quadrature quad, mf_basis1d *b)
{
  if (mf_basis1d_setup(n1 - 1, quad, b)) {
    fprintf(stderr, "FAIL: %s\n", mf_last_error_message());
    return 1;
  }
  memcpy(emu_cb::B, b->B, sizeof(double) * b->nq * b->n1);
  memcpy(emu_cb::G, b->Bg, sizeof(double) * b->nq * b->n1);
  memcpy(emu_cb::D, b->D, sizeof(double) * b->nq * b->nq);
  return 0;
}

/* every operator of the slab design at one shape: mass, gradient (x derivative kept and plane by plane)
 * and both, in double; mass and gradient in float; with the stored entries staged in shared memory
 * (QSTAGE): mass and the gradient plane by plane in double, both in float */
template <int N1, int NQ, bool COLLOC> static int slab_shape(mf_quadrature quad, const char *rule, int tpb)
{
  mf_basis1d b;
  if (basis(N1, quad, &b)) return 1;
  if (b.nq != NQ || (b.collocated != 0) != COLLOC) {
    fprintf(stderr, "FAIL: %s p = %d: %d points, collocated %d\n", rule, N1 - 1, b.nq, b.collocated);
    return 1;
  }
  slab_case<N1, NQ, COLLOC, true, false, false, double>(b, rule, tpb);
  slab_case<N1, NQ, COLLOC, false, true, false, double>(b, rule, tpb);
  slab_case<N1, NQ, COLLOC, false, true, true, double>(b, rule, tpb);
  slab_case<N1, NQ, COLLOC, true, true, true, double>(b, rule, tpb);
  slab_case<N1, NQ, COLLOC, true, true, false, float>(b, rule, tpb);
  slab_case<N1, NQ, COLLOC, true, false, false, double, true>(b, rule, tpb);
  slab_case<N1, NQ, COLLOC, false, true, true, double, true>(b, rule, tpb);
  slab_case<N1, NQ, COLLOC, true, true, true, float, true>(b, rule, tpb);
  return 0;
}

int main(int argc, char **argv)
{
  MPI_Init(&argc, &argv);
  omp_set_dynamic(0);
  int bad = 0;
  /* the slab design: 2..6 nodes per direction, Gauss q = p + 1, q = p + 2, Gauss-Lobatto (collocated) */
  bad |= slab_shape<2, 2, false>(MF_QUAD_GAUSS, "gauss", 32);
  bad |= slab_shape<2, 3, false>(MF_QUAD_GAUSS_P2, "gauss+2", 64);
  bad |= slab_shape<2, 2, true>(MF_QUAD_GLL, "gll", 32);
  bad |= slab_shape<3, 3, false>(MF_QUAD_GAUSS, "gauss", 32);
  bad |= slab_shape<3, 4, false>(MF_QUAD_GAUSS_P2, "gauss+2", 32);
  bad |= slab_shape<3, 3, true>(MF_QUAD_GLL, "gll", 64);
  bad |= slab_shape<4, 4, false>(MF_QUAD_GAUSS, "gauss", 32);
  bad |= slab_shape<4, 5, false>(MF_QUAD_GAUSS_P2, "gauss+2", 64);
  bad |= slab_shape<4, 4, true>(MF_QUAD_GLL, "gll", 32);
  bad |= slab_shape<5, 5, false>(MF_QUAD_GAUSS, "gauss", 32);
  bad |= slab_shape<5, 6, false>(MF_QUAD_GAUSS_P2, "gauss+2", 32);
  bad |= slab_shape<5, 5, true>(MF_QUAD_GLL, "gll", 64);
  bad |= slab_shape<6, 6, false>(MF_QUAD_GAUSS, "gauss", 32);
  bad |= slab_shape<6, 7, false>(MF_QUAD_GAUSS_P2, "gauss+2", 64);
  bad |= slab_shape<6, 6, true>(MF_QUAD_GLL, "gll", 32);
  /* the thread design: 2 and 3 nodes per direction (its shapes), paired loads where a cell's count is even */
  {
    mf_basis1d b;
    bad |= basis(2, MF_QUAD_GAUSS_P2, &b);
    thread_case<2, 3, false, true, false, false, double>(b, "gauss+2", 64);
    thread_case<2, 3, false, false, true, true, double>(b, "gauss+2", 64);
    bad |= basis(2, MF_QUAD_GLL, &b);
    thread_case<2, 2, true, false, true, true, double>(b, "gll", 64);
    bad |= basis(3, MF_QUAD_GAUSS_P2, &b);
    thread_case<3, 4, false, true, true, false, double>(b, "gauss+2", 32);
    thread_case<3, 4, false, true, false, true, float>(b, "gauss+2", 32);
    bad |= basis(3, MF_QUAD_GLL, &b);
    thread_case<3, 3, true, false, true, true, double>(b, "gll", 32);
  }
  if (bad) failures++;
  printf("%d cases, %d failures\n", cases, failures);
  MPI_Finalize();
  return failures ? 1 : 0;
}
