/* t20_overlap -- the ghost exchanges overlapped with the cells that touch no ghost DoF give the
 * results of the plain order (import, all cells, export-add), and N ranks give the results of 1 rank:
 *   on N ranks, overlap on against off, rank by rank on the owned entries: operator applications to
 *   1e-12 relative (Laplace with a coefficient and Dirichlet rows, mass, Helmholtz; atomic and
 *   colored scatter), CG with Jacobi and with multigrid in the same iterations (+-1) to the same
 *   solution (1e-10); the same for the assembled Laplacian (rows' owned columns during the import,
 *   then the ghost columns) with Jacobi CG;
 *   N ranks (overlap on) against rank 0 alone (MPI_COMM_SELF, where nothing overlaps): the vectors
 *   gathered by the DoFs' positions (tests/mf_test.h, t_bypos) agree entry by entry, operator
 *   outputs to 1e-12 and CG solutions to 1e-10 (max norm, relative), the iterations within 1;
 *   on uniform and adaptive meshes in 2D and 3D. Also: the three cell parts cover every cell once, the
 *   boundary part holds exactly the cells with a ghost DoF (none on 1 rank), and with several ranks
 *   the overlap is on. Run under mpiexec -np 2, 4. argv[1]: backend. */
#include "mf_test.h"
#include "mf_testing.h"

static double relmax(const double *a, const double *b, int n, MPI_Comm comm)
{
  double d = 0.0, m = 0.0;
  for (int i = 0; i < n; i++) {
    d = fmax(d, fabs(a[i] - b[i]));
    m = fmax(m, fabs(b[i]));
  }
  double g[2] = {d, m};
  MPI_Allreduce(MPI_IN_PLACE, g, 2, MPI_DOUBLE, MPI_MAX, comm);
  return g[1] > 0 ? g[0] / g[1] : g[0];
}

static void check_parts(mf_space s)
{
  T_CALL(mf_space_parts(s));
  T_CHECK(s->part_off[0] == 0 && s->part_off[3] == s->ncells && s->part_off[1] <= s->part_off[2],
          "part offsets %d %d %d %d for %d cells", s->part_off[0], s->part_off[1], s->part_off[2], s->part_off[3],
          s->ncells);
  int *seen = calloc((size_t)s->ncells + 1, sizeof *seen);
  for (int k = 0; k < s->ncells; k++) {
    const int e = s->part_cells[k];
    T_CHECK(e >= 0 && e < s->ncells && !seen[e], "cell %d listed twice or out of range", e);
    if (e < 0 || e >= s->ncells) continue;
    seen[e] = 1;
    int ghost = 0;
    for (int i = 0; i < s->npc; i++) ghost |= s->cell_nodes[(size_t)e * s->npc + i] >= s->nowned;
    const int bnd = k >= s->part_off[1] && k < s->part_off[2];
    T_CHECK(ghost == bnd, "cell %d: touches a ghost %d, in the boundary part %d", e, ghost, bnd);
  }
  /* the interior halves differ by at most one cell */
  const int a = s->part_off[1], b = s->part_off[3] - s->part_off[2];
  T_CHECK(b - a == 0 || b - a == 1, "interior halves of %d and %d cells", a, b);
  free(seen);
}

/* y = A x with the overlap on and off; the overlapped y gathered by position (rank 0) */
static double *compare_apply(mf_operator A, mf_vector x, mf_vector y, double *h1, double *h2, int n,
                             const t_bypos *bp, const char *what)
{
  mf_context ctx = A->ctx;
  const int keep = ctx->overlap;
  ctx->overlap = 1;
  T_CHECK(ctx->size == 1 || mf_operator_overlaps(A), "%s: several ranks but no overlap", what);
  T_CALL(mf_operator_apply(A, x, y));
  T_CALL(mf_vector_get_values(y, h1));
  double *g = t_bypos_gather(bp, y);
  ctx->overlap = 0;
  T_CHECK(!mf_operator_overlaps(A), "%s: overlap off but still on", what);
  T_CALL(mf_operator_apply(A, x, y));
  T_CALL(mf_vector_get_values(y, h2));
  ctx->overlap = keep;
  const double r = relmax(h1, h2, n, ctx->comm);
  T_CHECK(r < 1e-12, "%s: overlapped apply differs from the plain one by %.3e", what, r);
  return g;
}

static void solve(mf_operator A, mf_vector b, mf_vector x, int mg, int *its, double *h, int n)
{
  mf_cg cg;
  mf_pc pc = NULL;
  mf_cg_info info;
  T_CALL(mf_cg_create(A, &cg));
  T_CALL(mf_cg_set_tolerance(cg, 1e-12, 2000));
  if (mg) {
    T_CALL(mf_pc_create(A, MF_PC_MULTIGRID, &pc));
    T_CALL(mf_cg_set_pc(cg, pc));
  }
  T_CALL(mf_vector_set_value(x, 0.0));
  T_CALL(mf_cg_solve(cg, b, x, &info));
  T_CHECK(info.converged, "CG did not converge (%d iterations)", info.iterations);
  *its = info.iterations;
  T_CALL(mf_vector_get_values(x, h));
  (void)n;
  mf_cg_destroy(&cg);
  if (pc) mf_pc_destroy(&pc);
}

/* the vectors gathered by position, for the comparison of N ranks with 1 rank */
enum { V_X, V_OPS, V_CSR = V_OPS + 6, V_U_CSR, V_U, V_U_MG, NV };
enum { I_CSR, I_JACOBI, I_MG, NI };
typedef struct {
  t_bypos bp;
  double *v[NV]; /* rank 0 */
  int its[NI];
} result;

static void run(MPI_Comm comm, const char *backend, const char *meshname, int dim, int level, int adapt, int p,
                result *res)
{
  mf_context ctx;
  mf_mesh mesh;
  mf_space space;
  T_CALL(mf_context_create(comm, backend, &ctx));
  t_mesh(ctx, meshname, dim, level, adapt, &mesh);
  T_CALL(mf_space_create(mesh, p, &space));
  check_parts(space);
  t_bypos_create(ctx, space, &res->bp);
  const int n = space->nowned;
  double *h1 = malloc(sizeof(double) * (n + 1)), *h2 = malloc(sizeof(double) * (n + 1));
  mf_vector x, y, b;
  T_CALL(mf_vector_create(space, &x));
  T_CALL(mf_vector_create(space, &y));
  T_CALL(mf_vector_create(space, &b));
  T_CALL(mf_vector_set_random(x, 7));
  res->v[V_X] = t_bypos_gather(&res->bp, x);
  char what[160];
  mf_operator A, M, H;
  T_CALL(mf_operator_create_laplace(space, MF_QUAD_GAUSS, t_ljungkvist, NULL, &A));
  T_CALL(mf_operator_set_dirichlet(A, 1));
  T_CALL(mf_operator_create_mass(space, MF_QUAD_GAUSS_P2, NULL, NULL, &M));
  T_CALL(mf_operator_create_helmholtz(space, MF_QUAD_GLL, 1.0, 1.0, NULL, NULL, &H));
  mf_operator ops[3] = {A, M, H};
  const char *names[3] = {"Laplace", "mass", "Helmholtz"};
  for (int k = 0; k < 3; k++)
    for (int sc = 0; sc < 2; sc++) {
      T_CALL(mf_operator_set_scatter(ops[k], sc ? MF_SCATTER_COLORED : MF_SCATTER_ATOMIC));
      snprintf(what, sizeof what, "%s, %s scatter, %s %dD level %d adapt %d, p %d, %d ranks", names[k],
               sc ? "colored" : "atomic", meshname, dim, level, adapt, p, ctx->size);
      res->v[V_OPS + 2 * k + sc] = compare_apply(ops[k], x, y, h1, h2, n, &res->bp, what);
    }
  /* the assembled Laplacian (Dirichlet form): the rows' owned columns while the import travels, then
   * the ghost columns; its apply and Jacobi CG with the overlap on and off */
  {
    mf_operator S;
    T_CALL(mf_operator_create_assembled(A, &S));
    snprintf(what, sizeof what, "assembled Laplace, %s %dD level %d adapt %d, p %d, %d ranks", meshname, dim, level, adapt,
             p, ctx->size);
    res->v[V_CSR] = compare_apply(S, x, y, h1, h2, n, &res->bp, what);
    T_CALL(mf_operator_apply(S, x, b));
    int it1, it2;
    ctx->overlap = 1;
    solve(S, b, y, 0, &it1, h1, n);
    res->v[V_U_CSR] = t_bypos_gather(&res->bp, y);
    ctx->overlap = 0;
    solve(S, b, y, 0, &it2, h2, n);
    ctx->overlap = 1;
    const double r = relmax(h1, h2, n, ctx->comm);
    T_CHECK(abs(it1 - it2) <= 1 && r < 1e-10, "assembled Jacobi CG, %s %dD adapt %d p %d: %d / %d iterations, solutions differ by %.3e",
            meshname, dim, adapt, p, it1, it2, r);
    res->its[I_CSR] = it1;
    mf_operator_destroy(&S);
  }
  /* CG: b = A x, solved with the overlap on and off */
  T_CALL(mf_operator_apply(A, x, b));
  for (int mg = 0; mg < 2; mg++) {
    int it1, it2;
    ctx->overlap = 1;
    solve(A, b, y, mg, &it1, h1, n);
    res->v[mg ? V_U_MG : V_U] = t_bypos_gather(&res->bp, y);
    ctx->overlap = 0;
    solve(A, b, y, mg, &it2, h2, n);
    ctx->overlap = 1;
    const double r = relmax(h1, h2, n, ctx->comm);
    T_CHECK(abs(it1 - it2) <= 1 && r < 1e-10, "%s CG, %s %dD adapt %d p %d: %d / %d iterations, solutions differ by %.3e",
            mg ? "multigrid" : "Jacobi", meshname, dim, adapt, p, it1, it2, r);
    res->its[mg ? I_MG : I_JACOBI] = it1;
  }
  mf_operator_destroy(&A);
  mf_operator_destroy(&M);
  mf_operator_destroy(&H);
  mf_vector_destroy(&x);
  mf_vector_destroy(&y);
  mf_vector_destroy(&b);
  free(h1);
  free(h2);
  mf_space_destroy(&space);
  mf_mesh_destroy(&mesh);
  mf_context_destroy(&ctx);
}

static void free_result(result *r)
{
  for (int k = 0; k < NV; k++) free(r->v[k]);
  t_bypos_destroy(&r->bp);
}

/* The case on every rank (overlap on), then on rank 0 alone: the same vectors entry by entry. */
static void run_against_one_rank(const char *backend, const char *meshname, int dim, int level, int adapt, int p)
{
  static const char *const vname[NV] = {"random x",
                                        "Laplace (atomic scatter)",
                                        "Laplace (colored scatter)",
                                        "mass (atomic scatter)",
                                        "mass (colored scatter)",
                                        "Helmholtz (atomic scatter)",
                                        "Helmholtz (colored scatter)",
                                        "assembled Laplace",
                                        "u (assembled Jacobi CG)",
                                        "u (Jacobi CG)",
                                        "u (multigrid CG)"};
  static const char *const iname[NI] = {"assembled Jacobi CG", "Jacobi CG", "multigrid CG"};
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  result rw = {0}, rs = {0};
  run(MPI_COMM_WORLD, backend, meshname, dim, level, adapt, p, &rw);
  if (rank == 0) {
    run(MPI_COMM_SELF, backend, meshname, dim, level, adapt, p, &rs);
    char what[128];
    snprintf(what, sizeof what, "%s %dD level %d adapt %d, p %d", meshname, dim, level, adapt, p);
    for (int k = 0; k < NV; k++) {
      const double tol = k == V_X ? 0.0 : k >= V_U_CSR ? 1e-10 : 1e-12;
      T_BYPOS_CHECK(&rw.bp, rw.v[k], &rs.bp, rs.v[k], tol, "%s: %s on %d ranks (overlapped) and on 1 rank", what,
                    vname[k], size);
    }
    for (int k = 0; k < NI; k++)
      T_CHECK(abs(rw.its[k] - rs.its[k]) <= 1, "%s: %s in %d iterations on %d ranks, %d on 1 rank", what, iname[k],
              rw.its[k], size, rs.its[k]);
  }
  free_result(&rs);
  free_result(&rw);
}

int main(int argc, char **argv)
{
  MPI_Init(&argc, &argv);
  const char *backend = t_backend(argc, argv);
  if (argc > 2 && !strcmp(argv[2], "share-refused")) {
    /* more ranks on the node than GPUs, MFREE_CUDA_SHARE unset: refused on every rank, by name */
    mf_context ctx = NULL;
    int e = mf_context_create(MPI_COMM_WORLD, backend, &ctx);
    if (e) {
      T_CHECK(e == MF_ERR_BACKEND && strstr(mf_last_error_message(), "MFREE_CUDA_SHARE=1"),
              "refusal %d: %s", e, mf_last_error_message());
    } else {
      int size = 0;
      MPI_Comm_size(MPI_COMM_WORLD, &size);
      fprintf(stderr, "note: %d ranks were given a GPU each, nothing to refuse\n", size);
      mf_context_destroy(&ctx);
    }
    int fails = t_failures;
    MPI_Allreduce(MPI_IN_PLACE, &fails, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    MPI_Finalize();
    return fails ? 1 : 0;
  }
  int size;
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  if (size < 2) { /* one rank against itself, and nothing overlaps: no test */
    fprintf(stderr, "FAIL: t20_overlap compares the overlap on N ranks with the plain order and with 1 rank: run it on "
                    "2 or more ranks\n");
    MPI_Finalize();
    return 1;
  }
  run_against_one_rank(backend, "deformed", 2, 3, 0, 3);
  run_against_one_rank(backend, "ball", 2, 1, 2, 2);
  run_against_one_rank(backend, "deformed", 3, 2, 0, 2);
  run_against_one_rank(backend, "ball", 3, 0, 1, 2);
  int fails = t_failures;
  MPI_Allreduce(MPI_IN_PLACE, &fails, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  MPI_Finalize();
  return fails ? 1 : 0;
}
