/* t06_mpi -- 1 rank and N ranks give the same results, vector by vector: every case is computed on
 * MPI_COMM_WORLD and, on rank 0 alone, on MPI_COMM_SELF, and the vectors of both are gathered on
 * rank 0 by the positions of their DoFs (tests/mf_test.h, t_bypos) and compared entry by entry,
 * relative to the 1-rank vector's max norm:
 *   the random input x (mf_vector_set_random depends on the position only): exactly;
 *   operator outputs (Laplace with a coefficient and the Dirichlet form applied to x, the mass
 *   applied to 1, Laplace's diagonal, the assembled Laplacian applied to x): 1e-12;
 *   solutions of CG to 1e-12 (Jacobi, multigrid, assembled with Jacobi): 1e-10, in iterations
 *   within 1 of each other;
 *   the reductions over ranks (x . A x, |A x|, sum(M 1), the L2 error): 1e-12 (L2 error 1e-10); the
 *   number of DoFs (mf_space_num_dofs) equals the entries gathered.
 * Uniform and adaptive (hanging nodes) meshes, 2D and 3D, p = 1..3; triangles and tetrahedra (built-in boxes,
 * and boxes refined by mf_mesh_refine: the partition inherited; the assembled operators on the cpu backend only). Run
 * under mpiexec -np 2, 3 (and -np 4 with argv[2] = "simplex": the simplex cases alone).
 * argv[1]: backend; argv[2] = "determinism": instead, three of the cases (uniform 2D, adaptive 2D and
 * 3D) twice on MPI_COMM_WORLD: bitwise the same vectors, scalars and iterations (the cpu backend adds
 * in a fixed order, the exchanges too). */
#include "mf_test.h"
#include "poisson.h"

/* the gathered vectors */
enum { V_X, V_AX, V_M1, V_DIAG, V_U, V_U_MG, V_CSR_AX, V_U_CSR, NV };
static const char *vname[NV] = {"random x", "A x", "M 1", "diag(A)", "u_h (Jacobi CG)", "u_h (multigrid CG)",
                                "A_csr x", "u_h (assembled CG)"};
/* the scalars: reductions over ranks and iteration counts */
enum { S_XAX, S_AX, S_MASS, S_L2, S_ITS, S_MG_ITS, S_CSR_ITS, NS };
static const char *sname[NS] = {"x . A x", "|A x|", "sum(M 1)", "L2 error", "CG iterations",
                                "multigrid CG iterations", "assembled CG iterations"};

typedef struct {
  t_bypos bp;
  int64_t ndofs;
  double *v[NV]; /* rank 0 */
  double s[NS];
} result;

static const char *backend = "cpu";

static void solve(mf_cg cg, mf_vector b, mf_vector g, mf_vector x, double *its)
{
  mf_cg_info info;
  T_CALL(mf_vector_set_value(x, 0.0));
  T_CALL(mf_cg_solve(cg, b, x, &info));
  T_CHECK(info.converged, "CG did not converge in %d iterations", info.iterations);
  T_CALL(mf_vector_axpy(x, 1.0, g));
  *its = info.iterations;
}

static void compute(MPI_Comm comm, const char *meshname, int dim, int level, int adapt, int p, result *r)
{
  mf_context ctx;
  mf_mesh mesh;
  mf_space space;
  mf_operator A, M;
  mf_vector x, y, one;
  poisson_coef coef = POISSON_COEF_LJUNGKVIST;
  T_CALL(mf_context_create(comm, backend, &ctx));
  const int simplex = !strcmp(meshname, "square-tris") || !strcmp(meshname, "cube-tets");
  if (simplex) { /* adapt: uniform refinements into a new mesh (mf_mesh_refine: the partition inherited) */
    mf_mesh base;
    T_CALL(mf_mesh_create(ctx, meshname, dim, level, &base));
    if (adapt) {
      T_CALL(mf_mesh_refine(base, adapt, &mesh));
      mf_mesh_destroy(&base);
    } else
      mesh = base;
  } else
    t_mesh(ctx, meshname, dim, level, adapt, &mesh);
  T_CALL(mf_space_create(mesh, p, &space));
  T_CALL(mf_space_num_dofs(space, &r->ndofs));
  t_bypos_create(ctx, space, &r->bp);
  T_CALL(mf_operator_create_laplace(space, MF_QUAD_GAUSS, poisson_c, &coef, &A));
  T_CALL(mf_operator_set_dirichlet(A, 1));
  /* (the simplex kernels of the cuda backend take the rule of degree 2p only) */
  T_CALL(mf_operator_create_mass(space, simplex ? MF_QUAD_GAUSS : MF_QUAD_GAUSS_P2, NULL, NULL, &M));
  T_CALL(mf_vector_create(space, &x));
  T_CALL(mf_vector_create(space, &y));
  T_CALL(mf_vector_create(space, &one));
  T_CALL(mf_vector_set_random(x, 42));
  r->v[V_X] = t_bypos_gather(&r->bp, x);
  T_CALL(mf_operator_apply(A, x, y));
  r->v[V_AX] = t_bypos_gather(&r->bp, y);
  T_CALL(mf_vector_norm2(y, &r->s[S_AX]));
  T_CALL(mf_vector_dot(x, y, &r->s[S_XAX]));
  T_CALL(mf_vector_set_value(one, 1.0));
  T_CALL(mf_operator_apply(M, one, y));
  r->v[V_M1] = t_bypos_gather(&r->bp, y);
  T_CALL(mf_vector_sum(y, &r->s[S_MASS]));
  T_CALL(mf_operator_diagonal(A, y));
  r->v[V_DIAG] = t_bypos_gather(&r->bp, y);
  /* the Poisson solve */
  {
    mf_cg cg;
    mf_vector b, g, t;
    T_CALL(mf_vector_create(space, &b));
    T_CALL(mf_vector_create(space, &g));
    T_CALL(mf_vector_create(space, &t));
    T_CALL(mf_vector_assemble_rhs(b, poisson_f, &coef));
    T_CALL(mf_vector_set_boundary(g, poisson_u, NULL));
    T_CALL(mf_operator_set_dirichlet(A, 0));
    T_CALL(mf_operator_apply(A, g, t));
    T_CALL(mf_operator_set_dirichlet(A, 1));
    T_CALL(mf_vector_axpy(b, -1.0, t));
    T_CALL(mf_vector_zero_boundary(b));
    T_CALL(mf_cg_create(A, &cg));
    T_CALL(mf_cg_set_tolerance(cg, 1e-12, 5000));
    solve(cg, b, g, x, &r->s[S_ITS]);
    T_CALL(mf_vector_l2_error(x, poisson_u, NULL, &r->s[S_L2]));
    r->v[V_U] = t_bypos_gather(&r->bp, x);
    /* again with multigrid (its coarse meshes differ on several ranks: families split between ranks
     * are not merged; the solutions agree to CG's tolerance) */
    mf_pc mg;
    T_CALL(mf_pc_create(A, MF_PC_MULTIGRID, &mg));
    T_CALL(mf_cg_set_pc(cg, mg));
    solve(cg, b, g, x, &r->s[S_MG_ITS]);
    r->v[V_U_MG] = t_bypos_gather(&r->bp, x);

    if (simplex && strcmp(backend, "cpu")) { /* assembled simplex operators on several ranks: cpu only */
      mf_cg_destroy(&cg);
      mf_pc_destroy(&mg);
      mf_vector_destroy(&b);
      mf_vector_destroy(&g);
      mf_vector_destroy(&t);
      goto done;
    }
    /* the assembled operator (ghost columns, rows summed onto the owners): product and Jacobi CG */
    mf_operator Ac;
    mf_cg cga;
    T_CALL(mf_operator_create_assembled(A, &Ac));
    T_CALL(mf_vector_set_random(x, 42));
    T_CALL(mf_operator_apply(Ac, x, t));
    r->v[V_CSR_AX] = t_bypos_gather(&r->bp, t);
    T_CALL(mf_cg_create(Ac, &cga));
    T_CALL(mf_cg_set_tolerance(cga, 1e-12, 5000));
    solve(cga, b, g, x, &r->s[S_CSR_ITS]);
    r->v[V_U_CSR] = t_bypos_gather(&r->bp, x);
    mf_cg_destroy(&cga);
    mf_operator_destroy(&Ac);
    mf_cg_destroy(&cg);
    mf_pc_destroy(&mg);
    mf_vector_destroy(&b);
    mf_vector_destroy(&g);
    mf_vector_destroy(&t);
  }
done:
  mf_vector_destroy(&one);
  mf_vector_destroy(&y);
  mf_vector_destroy(&x);
  mf_operator_destroy(&M);
  mf_operator_destroy(&A);
  mf_space_destroy(&space);
  mf_mesh_destroy(&mesh);
  mf_context_destroy(&ctx);
}

static void free_result(result *r)
{
  for (int k = 0; k < NV; k++) free(r->v[k]);
  t_bypos_destroy(&r->bp);
}

int main(int argc, char **argv)
{
  MPI_Init(&argc, &argv);
  backend = t_backend(argc, argv);
  const int determinism = argc > 2 && !strcmp(argv[2], "determinism");
  const int simplex_only = argc > 2 && !strcmp(argv[2], "simplex"); /* the simplex cases alone (4 ranks in CI) */
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  struct {
    const char *mesh;
    int dim, level, adapt, p;
  } cases[] = {{"ball", 2, 2, 0, 3}, {"deformed", 2, 3, 0, 2}, {"ball", 3, 1, 0, 2}, {"deformed", 3, 2, 0, 3},
               {"ball", 2, 1, 2, 3},  {"ball", 3, 1, 2, 2},     {"deformed", 3, 2, 1, 2},
               /* ranks that see some ghost DoFs only at hanging positions, next to ranks that do not */
               {"ball", 3, 1, 2, 1},  {"ball", 3, 1, 1, 3},
               /* simplices (adapt: uniform refinements of the level-1 box, the partition inherited) */
               {"square-tris", 2, 3, 0, 2}, {"cube-tets", 3, 2, 0, 3}, {"cube-tets", 3, 1, 2, 2},
               {"square-tris", 2, 1, 3, 1}};
  if (size < 2 && !determinism) { /* MPI_COMM_WORLD would be MPI_COMM_SELF: no test */
    fprintf(stderr, "FAIL: t06_mpi compares N ranks with 1 rank: run it on 2 or more ranks (or with 'determinism')\n");
    MPI_Finalize();
    return 1;
  }
  /* the determinism run: a uniform and two adaptive cases suffice (two runs cost twice) */
  const size_t det[] = {1, 4, 7};
  const size_t ncases = determinism ? sizeof det / sizeof det[0] : sizeof cases / sizeof cases[0];
  for (size_t i = 0; i < ncases; i++) {
    const size_t c = determinism ? det[i] : i;
    if (simplex_only && strcmp(cases[c].mesh, "square-tris") && strcmp(cases[c].mesh, "cube-tets")) continue;
    char what[128];
    snprintf(what, sizeof what, "%s dim %d p %d adapt %d, %d ranks", cases[c].mesh, cases[c].dim, cases[c].p,
             cases[c].adapt, size);
    result rw = {0}, rs = {0};
    compute(MPI_COMM_WORLD, cases[c].mesh, cases[c].dim, cases[c].level, cases[c].adapt, cases[c].p, &rw);
    if (determinism) {
      /* the same run again: the same bits */
      compute(MPI_COMM_WORLD, cases[c].mesh, cases[c].dim, cases[c].level, cases[c].adapt, cases[c].p, &rs);
      if (rank == 0) {
        for (int k = 0; k < NV; k++)
          T_CHECK(!memcmp(rw.v[k], rs.v[k], sizeof(double) * (size_t)rw.bp.n), "%s: %s differs between two runs", what,
                  vname[k]);
        for (int k = 0; k < NS; k++)
          T_CHECK(rw.s[k] == rs.s[k], "%s: %s %.17g, then %.17g", what, sname[k], rw.s[k], rs.s[k]);
      }
      free_result(&rs);
    } else if (rank == 0) {
      compute(MPI_COMM_SELF, cases[c].mesh, cases[c].dim, cases[c].level, cases[c].adapt, cases[c].p, &rs);
      T_CHECK(rw.ndofs == rw.bp.n && rs.ndofs == rs.bp.n && rw.ndofs == rs.ndofs,
              "%s: %lld DoFs (%lld gathered), on 1 rank %lld (%lld gathered)", what, (long long)rw.ndofs,
              (long long)rw.bp.n, (long long)rs.ndofs, (long long)rs.bp.n);
      for (int k = 0; k < NV; k++) {
        if (!rs.v[k]) continue; /* not computed for this case (simplices: no multigrid, no assembly) */
        const double tol = k == V_X ? 0.0 : (k == V_U || k == V_U_MG || k == V_U_CSR) ? 1e-10 : 1e-12;
        T_BYPOS_CHECK(&rw.bp, rw.v[k], &rs.bp, rs.v[k], tol, "%s: %s on N ranks and on 1 rank", what, vname[k]);
      }
      for (int k = 0; k < NS; k++) {
        if ((k == S_MG_ITS && !rs.v[V_U_MG]) || (k == S_CSR_ITS && !rs.v[V_U_CSR])) continue;
        const double tol = k >= S_ITS ? 1.0 : (k == S_L2 ? 1e-10 : 1e-12) * fabs(rs.s[k]);
        T_CHECK(fabs(rw.s[k] - rs.s[k]) <= tol, "%s: %s %.17g, on 1 rank %.17g", what, sname[k], rw.s[k], rs.s[k]);
      }
      free_result(&rs);
    }
    free_result(&rw);
  }
  return t_finish();
}
