/* t30_api -- the public interface swept function by function (lib/mfree.h, in its order): what the
 * queries and the less used calls return, and the bad input each function can get, refused with the
 * code and a message naming it:
 *   NULL handles (a destroyed handle is NULL) and NULL output pointers;
 *   values out of range: degrees, levels, tolerances, Chebyshev and multigrid parameters, enum values;
 *   mismatched objects: vectors of another space (also of the same size), a preconditioner of another
 *   operator's space, the cg's vectors;
 *   a space used after its mesh was adapted (mf_mesh_adapt, mf_mesh_refine_shells).
 * Refusals leak nothing (valgrind_t30_api). Other programs hold the cases of their areas (t07_errors,
 * t12_pc, t13_mg, t14_arrays, t14_vtu, t17_geometry, t27_simplex_refusals, ...); the coverage check
 * (tests/api_coverage.cmake) keeps every public function called by some test.
 *   t30_api cpu        on 1 or more ranks (the simplex part on MPI_COMM_SELF) */
#include "mf_test.h"

static int size_ = 1; /* ranks of MPI_COMM_WORLD */

static void zero_grad(const double *x, int dim, double *g, void *u)
{
  (void)x, (void)u;
  for (int k = 0; k < dim; k++) g[k] = 0.0;
}
static double one_fn(const double *x, int dim, void *u)
{
  (void)x, (void)dim, (void)u;
  return 1.0;
}
static double quad_fn(const double *x, int dim, void *u)
{
  (void)u;
  double s = 1.0;
  for (int k = 0; k < dim; k++) s += x[k] * x[k];
  return s;
}
static int copy_apply(mf_vector x, mf_vector y, void *user)
{
  (void)user;
  return mf_vector_copy(y, x);
}
static int refine_all(const double *c, int dim, int level, void *u)
{
  (void)c, (void)dim, (void)level, (void)u;
  return 1;
}

/* ------------------------------------------------------------------ context */

static void contexts(const char *be)
{
  mf_context ctx = NULL, c = (mf_context)1;
  EXPECT(mf_context_create(MPI_COMM_WORLD, be, NULL), MF_ERR_NULL, "output pointer ctx is NULL");
  EXPECT(mf_context_create(MPI_COMM_NULL, be, &c), MF_ERR_MPI, "communicator is MPI_COMM_NULL");
  T_CHECK(c == NULL, "a refused context must leave the handle NULL");
  EXPECT(mf_context_create(MPI_COMM_WORLD, "", &c), MF_ERR_BACKEND, "unknown backend ''");
  T_CALL(mf_context_create(MPI_COMM_WORLD, be, &ctx));

  /* the communicator: a duplicate of the one given (same group, own context) */
  MPI_Comm comm = MPI_COMM_NULL;
  T_CALL(mf_context_comm(ctx, &comm));
  int cmp = MPI_UNEQUAL;
  MPI_Comm_compare(comm, MPI_COMM_WORLD, &cmp);
  T_CHECK(cmp == MPI_CONGRUENT, "mf_context_comm: MPI_Comm_compare with MPI_COMM_WORLD gives %d, not MPI_CONGRUENT", cmp);
  EXPECT(mf_context_comm(NULL, &comm), MF_ERR_NULL, "context is NULL");
  EXPECT(mf_context_comm(ctx, NULL), MF_ERR_NULL, "output pointer comm is NULL");

  /* the backend: the name asked for; "auto" is cuda exactly where mf_cuda_available says so */
  T_CHECK(!strcmp(mf_context_backend(ctx), be), "mf_context_backend: '%s', asked for '%s'", mf_context_backend(ctx), be);
  T_CHECK(!strcmp(mf_context_backend(NULL), "none"), "mf_context_backend(NULL): '%s'", mf_context_backend(NULL));
  const int avail = mf_cuda_available();
  T_CHECK(avail == 0 || avail == 1, "mf_cuda_available: %d", avail);
  mf_context a = NULL;
  T_CALL(mf_context_create(MPI_COMM_WORLD, "auto", &a));
  T_CHECK(!strcmp(mf_context_backend(a), avail ? "cuda" : "cpu"), "'auto' chose '%s' with mf_cuda_available %d",
          mf_context_backend(a), avail);
  mf_context_destroy(&a);
#ifndef MFREE_WITH_CUDA
  T_CHECK(avail == 0, "mf_cuda_available is %d in a build without CUDA", avail);
#endif

  /* device memory: NULL outputs are allowed (either figure alone) */
  size_t in_use = 7;
  T_CALL(mf_context_device_memory(ctx, &in_use, NULL));
  T_CALL(mf_context_device_memory(ctx, NULL, NULL));
  if (!strcmp(be, "cpu")) T_CHECK(in_use == 0, "cpu backend: device memory in use %zu", in_use);

  /* the messages: a NULL handle's error is the thread's, and the context shows it while it is the latest */
  EXPECT(mf_context_phase_reset(NULL), MF_ERR_NULL, "context is NULL");
  T_CHECK(strstr(mf_context_error_message(NULL), "context is NULL"), "mf_context_error_message(NULL): '%s'",
          mf_context_error_message(NULL));
  T_CHECK(strstr(mf_context_error_message(ctx), "context is NULL"), "mf_context_error_message(ctx): '%s'",
          mf_context_error_message(ctx));

  /* destroy: NULL-safe, sets the handle to NULL */
  T_CHECK(mf_context_destroy(NULL) == 0, "mf_context_destroy(NULL) must return 0");
  T_CALL(mf_context_destroy(&ctx));
  T_CHECK(ctx == NULL, "mf_context_destroy must set the handle to NULL");
  T_CHECK(mf_context_destroy(&ctx) == 0, "mf_context_destroy of a NULL handle must return 0");
}

/* ------------------------------------------------------------------ set-up phases */

static int phases_only(mf_context ctx, mf_phase want, const char *what)
{
  double ph[MF_PHASE_COUNT];
  T_CALL(mf_context_phase_times(ctx, ph));
  int bad = 0;
  for (int k = 0; k < MF_PHASE_COUNT; k++) {
    const int ok = k == (int)want ? ph[k] > 0.0 : ph[k] == 0.0;
    T_CHECK(ok, "%s: phase %s %g (only %s should have grown)", what, mf_phase_name((mf_phase)k), ph[k],
            mf_phase_name(want));
    bad += !ok;
  }
  T_CALL(mf_context_phase_reset(ctx));
  return bad;
}

/* After a reset every phase is zero; each set-up call adds to its own phase and to no other. */
static void phases(mf_context ctx)
{
  double ph[MF_PHASE_COUNT];
  mf_mesh mesh;
  mf_space s;
  mf_operator A;
  mf_vector b;
  mf_cg cg;
  T_CALL(mf_context_phase_reset(ctx));
  T_CALL(mf_context_phase_times(ctx, ph));
  for (int k = 0; k < MF_PHASE_COUNT; k++) T_CHECK(ph[k] == 0.0, "phase %s after a reset: %g", mf_phase_name((mf_phase)k), ph[k]);
  T_CALL(mf_mesh_create(ctx, "cube", 2, 3, &mesh));
  phases_only(ctx, MF_PHASE_MESH, "mf_mesh_create");
  T_CALL(mf_mesh_adapt(mesh, refine_all, NULL));
  phases_only(ctx, MF_PHASE_MESH, "mf_mesh_adapt");
  T_CALL(mf_space_create(mesh, 2, &s));
  T_CALL(mf_context_phase_times(ctx, ph));
  T_CHECK(ph[MF_PHASE_DOFS] > 0.0 && ph[MF_PHASE_DIRICHLET] > 0.0 && ph[MF_PHASE_COORDINATES] > 0.0 &&
              ph[MF_PHASE_MESH] == 0.0 && ph[MF_PHASE_GEOMETRY] == 0.0 && ph[MF_PHASE_RHS] == 0.0,
          "mf_space_create: dofs %g, dirichlet %g, coordinates %g, mesh %g, geometry %g, rhs %g", ph[MF_PHASE_DOFS],
          ph[MF_PHASE_DIRICHLET], ph[MF_PHASE_COORDINATES], ph[MF_PHASE_MESH], ph[MF_PHASE_GEOMETRY], ph[MF_PHASE_RHS]);
  T_CALL(mf_context_phase_reset(ctx));
  T_CALL(mf_operator_create_laplace(s, MF_QUAD_GAUSS, NULL, NULL, &A));
  phases_only(ctx, MF_PHASE_GEOMETRY, "mf_operator_create_laplace without a coefficient");
  T_CALL(mf_operator_set_dirichlet(A, 1));
  T_CALL(mf_vector_create(s, &b));
  T_CALL(mf_vector_assemble_rhs(b, one_fn, NULL));
  phases_only(ctx, MF_PHASE_RHS, "mf_vector_assemble_rhs");
  T_CALL(mf_vector_set_boundary(b, one_fn, NULL));
  phases_only(ctx, MF_PHASE_DIRICHLET, "mf_vector_set_boundary");
  T_CALL(mf_cg_create(A, &cg));
  phases_only(ctx, MF_PHASE_SOLVER, "mf_cg_create");
  /* mf_cg_setup does the preconditioner's set-up (the diagonal), which the solve then does not repeat */
  T_CALL(mf_cg_setup(cg));
  phases_only(ctx, MF_PHASE_DIAGONAL, "mf_cg_setup");
  mf_vector x;
  mf_cg_info info;
  T_CALL(mf_vector_create(s, &x));
  T_CALL(mf_vector_assemble_rhs(b, one_fn, NULL));
  T_CALL(mf_vector_zero_boundary(b));
  T_CALL(mf_context_phase_reset(ctx));
  T_CALL(mf_cg_solve(cg, b, x, &info));
  T_CALL(mf_context_phase_times(ctx, ph));
  T_CHECK(info.converged && ph[MF_PHASE_DIAGONAL] == 0.0, "the solve after mf_cg_setup set up again: diagonal phase %g",
          ph[MF_PHASE_DIAGONAL]);
  /* the assembled operator: the sparsity once per space (pattern), the values every time (assembly), nothing else */
  mf_operator M = NULL;
  T_CALL(mf_context_phase_reset(ctx));
  T_CALL(mf_operator_create_assembled(A, &M));
  T_CALL(mf_context_phase_times(ctx, ph));
  for (int k = 0; k < MF_PHASE_COUNT; k++) {
    const int mine = k == MF_PHASE_PATTERN || k == MF_PHASE_ASSEMBLY;
    T_CHECK(mine ? ph[k] > 0.0 : ph[k] == 0.0, "the first mf_operator_create_assembled: phase %s %g",
            mf_phase_name((mf_phase)k), ph[k]);
  }
  mf_operator_destroy(&M);
  T_CALL(mf_context_phase_reset(ctx));
  T_CALL(mf_operator_create_assembled(A, &M));
  phases_only(ctx, MF_PHASE_ASSEMBLY, "the second mf_operator_create_assembled (the pattern made already)");
  mf_operator_destroy(&M);
  T_CHECK(!strcmp(mf_phase_name(MF_PHASE_PATTERN), "pattern") && !strcmp(mf_phase_name(MF_PHASE_ASSEMBLY), "assembly"),
          "the phases' names: %s, %s", mf_phase_name(MF_PHASE_PATTERN), mf_phase_name(MF_PHASE_ASSEMBLY));
  mf_vector_destroy(&x);
  mf_cg_destroy(&cg);
  mf_vector_destroy(&b);
  mf_operator_destroy(&A);
  mf_space_destroy(&s);
  mf_mesh_destroy(&mesh);
}

/* ------------------------------------------------------------------ mesh */

static void meshes(mf_context ctx)
{
  mf_mesh m = (mf_mesh)1, mesh;
  const int one[3] = {1, 1, 1}, big[3] = {4097, 1, 1}, neg[3] = {1, -2, 1};
  EXPECT(mf_mesh_create(ctx, "cube", 2, 1, NULL), MF_ERR_NULL, "output pointer mesh is NULL");
  EXPECT(mf_mesh_create(ctx, "cube", 3, 13, &m), MF_ERR_ARGUMENT, "refinement level 13 out of range 0..12 for dim 3");
  T_CHECK(m == NULL, "a refused mesh must leave the handle NULL");
  EXPECT(mf_mesh_create(ctx, "cube", 2, 19, &m), MF_ERR_ARGUMENT, "refinement level 19 out of range 0..18 for dim 2");
  EXPECT(mf_mesh_create(ctx, "ball", 1, 1, &m), MF_ERR_ARGUMENT, "dimension 1 out of range");
  EXPECT(mf_mesh_create_box(NULL, "cube", 2, one, 1, &m), MF_ERR_NULL, "context is NULL");
  EXPECT(mf_mesh_create_box(ctx, "cube", 2, NULL, 1, &m), MF_ERR_NULL, "trees per direction is NULL");
  EXPECT(mf_mesh_create_box(ctx, "cube", 2, big, 1, &m), MF_ERR_ARGUMENT, "trees in direction 0: 4097 out of range 1..4096");
  EXPECT(mf_mesh_create_box(ctx, "deformed", 3, neg, 1, &m), MF_ERR_ARGUMENT, "trees in direction 1: -2 out of range");
  EXPECT(mf_mesh_create_box(ctx, "cube", 2, one, 1, NULL), MF_ERR_NULL, "output pointer mesh is NULL");
  EXPECT(mf_mesh_create_box(ctx, "cube", 2, one, -1, &m), MF_ERR_ARGUMENT, "refinement level -1 out of range");
  m = (mf_mesh)1;
  EXPECT(mf_mesh_create_from_file(NULL, "x.msh", 2, &m), MF_ERR_NULL, "context is NULL");
  T_CHECK(m == NULL, "a refused mesh must leave the handle NULL, also when the context is NULL");
  m = (mf_mesh)1;
  EXPECT(mf_mesh_create(NULL, "cube", 2, 1, &m), MF_ERR_NULL, "context is NULL");
  T_CHECK(m == NULL, "a refused mesh must leave the handle NULL, also when the context is NULL");
  EXPECT(mf_mesh_create_from_file(ctx, "x.msh", 2, NULL), MF_ERR_NULL, "output pointer mesh is NULL");

  for (int dim = 2; dim <= 3; dim++) {
    const int trees[3] = {2, 3, 1};
    int d = 0;
    int64_t n = 0;
    mf_cell_kind kind = MF_CELL_SIMPLEX;
    T_CALL(mf_mesh_create_box(ctx, "deformed", dim, trees, 1, &mesh));
    T_CALL(mf_mesh_dim(mesh, &d));
    T_CALL(mf_mesh_num_cells(mesh, &n));
    T_CALL(mf_mesh_cell_kind(mesh, &kind));
    const int64_t want = (int64_t)6 << dim; /* 2 x 3 (x 1) trees, each in 2^dim cells */
    T_CHECK(d == dim && n == want && kind == MF_CELL_HEX, "box 2 x 3 (x 1) dim %d level 1: dim %d, %lld cells (want %lld), kind %d",
            dim, d, (long long)n, (long long)want, (int)kind);
    EXPECT(mf_mesh_dim(NULL, &d), MF_ERR_NULL, "mesh is NULL");
    EXPECT(mf_mesh_dim(mesh, NULL), MF_ERR_NULL, "output pointer dim is NULL");
    EXPECT(mf_mesh_num_cells(NULL, &n), MF_ERR_NULL, "mesh is NULL");
    EXPECT(mf_mesh_num_cells(mesh, NULL), MF_ERR_NULL, "output pointer ncells is NULL");
    EXPECT(mf_mesh_cell_kind(NULL, &kind), MF_ERR_NULL, "mesh is NULL");
    EXPECT(mf_mesh_cell_kind(mesh, NULL), MF_ERR_NULL, "output pointer kind is NULL");
    EXPECT(mf_mesh_refine_shells(NULL, 1), MF_ERR_NULL, "mesh is NULL");
    EXPECT(mf_mesh_refine_shells(mesh, -1), MF_ERR_ARGUMENT, "shell refinement levels -1 out of range 0..10");
    T_CALL(mf_mesh_refine_shells(mesh, 0)); /* zero rounds: nothing changes */
    T_CALL(mf_mesh_num_cells(mesh, &n));
    T_CHECK(n == want, "mf_mesh_refine_shells(mesh, 0) changed the mesh: %lld cells", (long long)n);
    T_CALL(mf_mesh_adapt(mesh, refine_all, NULL));
    T_CALL(mf_mesh_num_cells(mesh, &n));
    T_CHECK(n == want << dim, "refine_all: %lld cells, want %lld", (long long)n, (long long)(want << dim));
    T_CALL(mf_mesh_destroy(&mesh));
    T_CHECK(mesh == NULL, "mf_mesh_destroy must set the handle to NULL");
    EXPECT(mf_mesh_dim(mesh, &d), MF_ERR_NULL, "mesh is NULL"); /* a destroyed handle is NULL */
  }
  T_CHECK(mf_mesh_destroy(NULL) == 0 && mf_mesh_destroy(&mesh) == 0, "mf_mesh_destroy of NULL must return 0");
}

/* ------------------------------------------------------------------ space */

static void spaces(mf_context ctx)
{
  mf_mesh mesh;
  mf_space s = (mf_space)1, s3;
  T_CALL(mf_mesh_create(ctx, "ball", 3, 0, &mesh));
  EXPECT(mf_space_create(mesh, 2, NULL), MF_ERR_NULL, "output pointer space is NULL");
  EXPECT(mf_space_create(mesh, -1, &s), MF_ERR_ARGUMENT, "degree -1 out of range 1..8");
  T_CHECK(s == NULL, "a refused space must leave the handle NULL");
  EXPECT(mf_space_create_components(mesh, 1, 5, &s), MF_ERR_ARGUMENT, "components per DoF 5 out of range 1..4");
  s = (mf_space)1;
  EXPECT(mf_space_create_components(NULL, 1, 3, &s), MF_ERR_NULL, "mesh is NULL");
  T_CHECK(s == NULL, "a refused space must leave the handle NULL, also when the mesh is NULL");
  s = (mf_space)1;
  EXPECT(mf_space_create(NULL, 1, &s), MF_ERR_NULL, "mesh is NULL");
  T_CHECK(s == NULL, "a refused space must leave the handle NULL, also when the mesh is NULL");
  EXPECT(mf_space_create_components(mesh, 1, 3, NULL), MF_ERR_NULL, "output pointer space is NULL");
  T_CALL(mf_space_create(mesh, 3, &s3));
  int p = 0, no = -1, nl = -1;
  int64_t n = 0;
  T_CALL(mf_space_degree(s3, &p));
  T_CALL(mf_space_num_dofs(s3, &n));
  T_CALL(mf_space_local_sizes(s3, &no, &nl));
  /* the owned DoFs of the ranks add up to the space's */
  int64_t sum = no;
  MPI_Allreduce(MPI_IN_PLACE, &sum, 1, MPI_INT64_T, MPI_SUM, MPI_COMM_WORLD);
  T_CHECK(p == 3 && sum == n && no <= nl, "Q3 space: degree %d, %lld DoFs, owned %d (sum %lld), local %d", p, (long long)n,
          no, (long long)sum, nl);
  T_CALL(mf_space_local_sizes(s3, NULL, NULL)); /* either output may be NULL */
  EXPECT(mf_space_degree(NULL, &p), MF_ERR_NULL, "space is NULL");
  EXPECT(mf_space_degree(s3, NULL), MF_ERR_NULL, "output pointer degree is NULL");
  EXPECT(mf_space_num_dofs(NULL, &n), MF_ERR_NULL, "space is NULL");
  EXPECT(mf_space_num_dofs(s3, NULL), MF_ERR_NULL, "output pointer ndofs is NULL");
  EXPECT(mf_space_local_sizes(NULL, &no, &nl), MF_ERR_NULL, "space is NULL");
  EXPECT(mf_space_set_dirichlet_tags(NULL, 0, NULL), MF_ERR_NULL, "space is NULL");
  const int tag2 = 2;
  EXPECT(mf_space_set_dirichlet_tags(s3, 1, &tag2), MF_ERR_ARGUMENT, "boundary tag 2: ball meshes tag their boundary 1");
  T_CALL(mf_space_set_dirichlet_tags(s3, 0, NULL)); /* no Dirichlet DoFs */
  T_CALL(mf_space_destroy(&s3));
  T_CHECK(s3 == NULL, "mf_space_destroy must set the handle to NULL");
  EXPECT(mf_space_degree(s3, &p), MF_ERR_NULL, "space is NULL");
  T_CHECK(mf_space_destroy(NULL) == 0 && mf_space_destroy(&s3) == 0, "mf_space_destroy of NULL must return 0");
  mf_mesh_destroy(&mesh);
}

/* Simplex meshes, spaces and operators (one rank: MPI_COMM_SELF). */
static void simplices(void)
{
  mf_context ctx;
  mf_mesh mesh;
  mf_space s, v, bad = (mf_space)1;
  mf_operator E = (mf_operator)1;
  T_CALL(mf_context_create(MPI_COMM_SELF, "cpu", &ctx));
  T_CALL(mf_mesh_create(ctx, "square-tris", 2, 2, &mesh));
  int d = 0, p = 0;
  mf_cell_kind kind = MF_CELL_HEX;
  int64_t n = 0;
  T_CALL(mf_mesh_dim(mesh, &d));
  T_CALL(mf_mesh_cell_kind(mesh, &kind));
  T_CALL(mf_mesh_num_cells(mesh, &n));
  T_CHECK(d == 2 && kind == MF_CELL_SIMPLEX && n == 32, "square-tris level 2: dim %d, kind %d, %lld cells", d, (int)kind,
          (long long)n);
  EXPECT(mf_space_create(mesh, 0, &bad), MF_ERR_ARGUMENT, "degree 0 out of range 1..6");
  EXPECT(mf_space_create(mesh, 7, &bad), MF_ERR_ARGUMENT, "degree 7 out of range 1..6");
  EXPECT(mf_space_create_components(mesh, 2, 0, &bad), MF_ERR_ARGUMENT, "components per DoF 0 out of range 1..4");
  EXPECT(mf_space_create_components(mesh, 2, 5, &bad), MF_ERR_ARGUMENT, "components per DoF 5 out of range 1..4");
  EXPECT(mf_space_create_components(mesh, 9, 2, &bad), MF_ERR_ARGUMENT, "degree 9 out of range");
  T_CHECK(bad == NULL, "a refused space must leave the handle NULL");
  T_CALL(mf_space_create(mesh, 4, &s));
  T_CALL(mf_space_degree(s, &p));
  T_CALL(mf_space_num_dofs(s, &n));
  T_CHECK(p == 4 && n == 17 * 17, "P4 on square-tris level 2: degree %d, %lld DoFs (want 289)", p, (long long)n);
  T_CALL(mf_space_create_components(mesh, 2, 2, &v));
  int no = 0, nl = 0;
  T_CALL(mf_space_local_sizes(v, &no, &nl));
  T_CALL(mf_space_num_dofs(v, &n));
  /* sizes count vector entries: 81 DoFs of 2 components */
  T_CHECK(n == 162 && no == 162 && nl == 162, "P2 with 2 components: %lld entries, %d owned, %d local (want 2 x 81)",
          (long long)n, no, nl);
  const int tag1 = 1, tag7 = 7;
  EXPECT(mf_space_set_dirichlet_tags(s, 1, NULL), MF_ERR_NULL, "1 tags but the tag array is NULL");
  EXPECT(mf_space_set_dirichlet_tags(s, 1, &tag7), MF_ERR_ARGUMENT, "Dirichlet tag 7 (entry 0): no boundary facet");
  EXPECT(mf_space_set_dirichlet_tags(s, -3, &tag1), MF_ERR_ARGUMENT, "negative number of tags -3 with a tag array");
  T_CALL(mf_space_set_dirichlet_tags(s, 1, &tag1));
  /* elasticity: simplex spaces of dim components, mu > 0, lambda > -2 mu / 3 */
  EXPECT(mf_operator_create_elasticity(NULL, 1.0, 1.0, &E), MF_ERR_NULL, "space is NULL");
  T_CHECK(E == NULL, "a refused operator must leave the handle NULL, also when the space is NULL");
  E = (mf_operator)1;
  EXPECT(mf_operator_create_elasticity(v, 1.0, 1.0, NULL), MF_ERR_NULL, "output pointer op is NULL");
  EXPECT(mf_operator_create_elasticity(s, 1.0, 1.0, &E), MF_ERR_INCOMPATIBLE, "components");
  T_CHECK(E == NULL, "a refused operator must leave the handle NULL");
  EXPECT(mf_operator_create_elasticity(v, 1.0, 0.0, &E), MF_ERR_ARGUMENT, "mu");
  EXPECT(mf_operator_create_elasticity(v, 1.0, NAN, &E), MF_ERR_ARGUMENT, "mu");
  EXPECT(mf_operator_create_elasticity(v, -1.0, 1.0, &E), MF_ERR_ARGUMENT, "lambda");
  EXPECT(mf_operator_create_elasticity(v, INFINITY, 1.0, &E), MF_ERR_ARGUMENT, "lambda");
  T_CHECK(E == NULL, "a refused operator must leave the handle NULL");
  T_CALL(mf_operator_create_elasticity(v, 1.0, 1.0, &E));
  /* a scalar operator refuses a vector space, the vector functions refuse several components */
  mf_operator M = NULL;
  mf_vector u;
  double err = 0.0;
  EXPECT(mf_operator_create_mass(v, MF_QUAD_GAUSS, NULL, NULL, &M), MF_ERR_INCOMPATIBLE, "components");
  T_CALL(mf_vector_create(v, &u));
  EXPECT(mf_vector_assemble_rhs(u, one_fn, NULL), MF_ERR_UNSUPPORTED, "2 components");
  EXPECT(mf_vector_l2_error(u, one_fn, NULL, &err), MF_ERR_UNSUPPORTED, "2 components");
  EXPECT(mf_vector_write_vtu(u, "t30_simplex", "u"), MF_ERR_UNSUPPORTED, "2 components");
  {
    mf_pc pe = NULL; /* multigrid on simplex elasticity: made (its transfers take the components together) */
    T_CALL(mf_pc_create(E, MF_PC_MULTIGRID, &pe));
    mf_pc_destroy(&pe);
  }
  EXPECT(mf_operator_create_assembled(E, &M), MF_ERR_UNSUPPORTED, "elasticity");
  /* after vectors exist the Dirichlet tags are fixed */
  EXPECT(mf_space_set_dirichlet_tags(v, -1, NULL), MF_ERR_ARGUMENT, "before");
  mf_vector_destroy(&u);
  mf_operator_destroy(&E);
  mf_space_destroy(&v);
  mf_space_destroy(&s);
  mf_mesh_destroy(&mesh);
  mf_context_destroy(&ctx);
}

/* ------------------------------------------------------------------ vectors */

static void vectors(mf_context ctx)
{
  mf_mesh mesh;
  mf_space s, o, same;
  mf_vector x, y, z, w, bad = (mf_vector)1;
  double r = 0.0, *h = NULL;
  T_CALL(mf_mesh_create(ctx, "cube", 2, 2, &mesh));
  T_CALL(mf_space_create(mesh, 2, &s));
  T_CALL(mf_space_create(mesh, 1, &o));
  T_CALL(mf_space_create(mesh, 2, &same)); /* another space object of the same size */
  EXPECT(mf_vector_create(NULL, &bad), MF_ERR_NULL, "space is NULL");
  T_CHECK(bad == NULL, "a refused vector must leave the handle NULL, also when the space is NULL");
  EXPECT(mf_vector_create(s, NULL), MF_ERR_NULL, "output pointer v is NULL");
  T_CALL(mf_vector_create(s, &x));
  T_CALL(mf_vector_create(s, &y));
  T_CALL(mf_vector_create(o, &z));
  T_CALL(mf_vector_create(same, &w));
  int no = 0;
  T_CALL(mf_space_local_sizes(s, &no, NULL));
  h = malloc(sizeof(double) * (size_t)no + 1);

  EXPECT(mf_vector_set_value(NULL, 1.0), MF_ERR_NULL, "vector is NULL");
  EXPECT(mf_vector_interpolate(NULL, one_fn, NULL), MF_ERR_NULL, "vector is NULL");
  EXPECT(mf_vector_set_random(NULL, 1), MF_ERR_NULL, "vector is NULL");
  EXPECT(mf_vector_get_values(NULL, h), MF_ERR_NULL, "vector is NULL");
  EXPECT(mf_vector_get_values(x, NULL), MF_ERR_NULL, "host array is NULL");
  EXPECT(mf_vector_set_values(x, NULL), MF_ERR_NULL, "host array is NULL");
  EXPECT(mf_vector_copy(NULL, x), MF_ERR_NULL, "is NULL");
  EXPECT(mf_vector_copy(x, NULL), MF_ERR_NULL, "is NULL");
  EXPECT(mf_vector_axpy(NULL, 1.0, x), MF_ERR_NULL, "is NULL");
  EXPECT(mf_vector_axpy(y, 1.0, NULL), MF_ERR_NULL, "is NULL");
  EXPECT(mf_vector_axpy(y, 1.0, z), MF_ERR_INCOMPATIBLE, "different spaces");
  EXPECT(mf_vector_scale(NULL, 2.0), MF_ERR_NULL, "vector is NULL");
  EXPECT(mf_vector_dot(x, NULL, &r), MF_ERR_NULL, "is NULL");
  EXPECT(mf_vector_dot(x, y, NULL), MF_ERR_NULL, "output pointer result is NULL");
  EXPECT(mf_vector_dot(x, z, &r), MF_ERR_INCOMPATIBLE, "different spaces");
  EXPECT(mf_vector_norm2(NULL, &r), MF_ERR_NULL, "is NULL");
  EXPECT(mf_vector_norm2(x, NULL), MF_ERR_NULL, "output pointer result is NULL");
  EXPECT(mf_vector_sum(NULL, &r), MF_ERR_NULL, "vector is NULL");
  EXPECT(mf_vector_sum(x, NULL), MF_ERR_NULL, "output pointer result is NULL");
  /* another space of the same size is another space (the wording of that message is not asserted here) */
  T_CHECK(mf_vector_copy(w, x) == MF_ERR_INCOMPATIBLE, "copy between two spaces of the same size accepted");
  T_CHECK(mf_vector_axpy(w, 1.0, x) == MF_ERR_INCOMPATIBLE, "axpy between two spaces of the same size accepted");
  T_CHECK(mf_vector_dot(w, x, &r) == MF_ERR_INCOMPATIBLE, "dot between two spaces of the same size accepted");
  /* the arrays: NULL handles and pointers */
  const double *ra = NULL;
  EXPECT(mf_vector_get_array_read(NULL, MF_MEM_HOST, &ra), MF_ERR_NULL, "vector is NULL");
  EXPECT(mf_vector_restore_array_read(NULL, &ra), MF_ERR_NULL, "vector is NULL");
  EXPECT(mf_vector_restore_array_read(x, NULL), MF_ERR_NULL, "pointer to the array is NULL");
  T_CALL(mf_vector_get_array_read(x, MF_MEM_HOST, &ra));
  const double *other = ra + 1;
  EXPECT(mf_vector_restore_array_read(x, &other), MF_ERR_ARGUMENT, "is not one of the vector's arrays");
  T_CALL(mf_vector_restore_array_read(x, &ra));
  T_CHECK(ra == NULL, "mf_vector_restore_array_read must set the pointer to NULL");

  /* what the values are: set, get, sum, norm, dot, interpolation of a constant */
  for (int i = 0; i < no; i++) h[i] = 1.0 + (i % 3);
  T_CALL(mf_vector_set_values(x, h));
  for (int i = 0; i < no; i++) h[i] = 0.0;
  T_CALL(mf_vector_get_values(x, h));
  int same_values = 1;
  for (int i = 0; i < no; i++) same_values &= h[i] == 1.0 + (i % 3);
  T_CHECK(same_values, "mf_vector_get_values does not give back what mf_vector_set_values set");
  T_CALL(mf_vector_interpolate(y, one_fn, NULL));
  int64_t n = 0;
  T_CALL(mf_space_num_dofs(s, &n));
  double sum = 0.0, nrm = 0.0, dot = 0.0;
  T_CALL(mf_vector_sum(y, &sum));
  T_CALL(mf_vector_norm2(y, &nrm));
  T_CALL(mf_vector_dot(y, y, &dot));
  T_CHECK(sum == (double)n && fabs(nrm - sqrt((double)n)) <= 1e-14 * nrm && dot == (double)n,
          "the constant 1 on %lld DoFs: sum %.17g, norm %.17g, dot %.17g", (long long)n, sum, nrm, dot);
  /* random values: in [-1, 1], reproducible, another seed another vector */
  T_CALL(mf_vector_set_random(x, 3));
  T_CALL(mf_vector_set_random(y, 3));
  T_CALL(mf_vector_axpy(y, -1.0, x));
  T_CALL(mf_vector_norm2(y, &nrm));
  T_CHECK(nrm == 0.0, "mf_vector_set_random is not reproducible: difference %g", nrm);
  T_CALL(mf_vector_set_random(y, 4));
  T_CALL(mf_vector_axpy(y, -1.0, x));
  T_CALL(mf_vector_norm2(y, &nrm));
  T_CHECK(nrm > 0.0, "seeds 3 and 4 give the same vector");
  T_CALL(mf_vector_get_values(x, h));
  int inside = 1;
  for (int i = 0; i < no; i++) inside &= h[i] >= -1.0 && h[i] <= 1.0;
  T_CHECK(inside, "mf_vector_set_random left [-1, 1]");

  T_CALL(mf_vector_destroy(&x));
  T_CHECK(x == NULL, "mf_vector_destroy must set the handle to NULL");
  EXPECT(mf_vector_scale(x, 1.0), MF_ERR_NULL, "vector is NULL"); /* a destroyed handle is NULL */
  T_CHECK(mf_vector_destroy(NULL) == 0 && mf_vector_destroy(&x) == 0, "mf_vector_destroy of NULL must return 0");
  free(h);
  mf_vector_destroy(&y);
  mf_vector_destroy(&z);
  mf_vector_destroy(&w);
  mf_space_destroy(&same);
  mf_space_destroy(&o);
  mf_space_destroy(&s);
  mf_mesh_destroy(&mesh);
}

/* ------------------------------------------------------------------ operators, right-hand sides, errors */

static void operators(mf_context ctx)
{
  mf_mesh mesh;
  mf_space s, o, same;
  mf_operator A, S, bad = (mf_operator)1;
  mf_vector x, y, w;
  T_CALL(mf_mesh_create(ctx, "cube", 2, 2, &mesh));
  T_CALL(mf_space_create(mesh, 2, &s));
  T_CALL(mf_space_create(mesh, 3, &o));
  T_CALL(mf_space_create(mesh, 2, &same));
  EXPECT(mf_operator_create_mass(s, MF_QUAD_GAUSS, NULL, NULL, NULL), MF_ERR_NULL, "output pointer op is NULL");
  EXPECT(mf_operator_create_laplace(NULL, MF_QUAD_GAUSS, NULL, NULL, &bad), MF_ERR_NULL, "space is NULL");
  T_CHECK(bad == NULL, "a refused operator must leave the handle NULL");
  EXPECT(mf_operator_create_laplace(s, (mf_quadrature)-1, NULL, NULL, &bad), MF_ERR_ARGUMENT, "quadrature -1 unknown");
  EXPECT(mf_operator_create_mass(s, (mf_quadrature)3, NULL, NULL, &bad), MF_ERR_ARGUMENT, "quadrature 3 unknown");
  EXPECT(mf_operator_create_helmholtz(NULL, MF_QUAD_GAUSS, 1.0, 1.0, NULL, NULL, &bad), MF_ERR_NULL, "space is NULL");
  EXPECT(mf_operator_create_helmholtz(s, MF_QUAD_GAUSS, 1.0, INFINITY, NULL, NULL, &bad), MF_ERR_ARGUMENT, "b = inf");
  EXPECT(mf_operator_create_helmholtz(s, MF_QUAD_GAUSS, 1.0, 1.0, NULL, NULL, NULL), MF_ERR_NULL, "output pointer op is NULL");
  EXPECT(mf_operator_create_elasticity(s, 1.0, 1.0, &bad), MF_ERR_UNSUPPORTED, "simplex spaces only");
  bad = (mf_operator)1;
  EXPECT(mf_operator_create_shell(NULL, copy_apply, NULL, NULL, &bad), MF_ERR_NULL, "space is NULL");
  T_CHECK(bad == NULL, "a refused shell operator must leave the handle NULL, also when the space is NULL");
  bad = (mf_operator)1;
  EXPECT(mf_operator_create_shell(s, NULL, NULL, NULL, &bad), MF_ERR_NULL, "shell apply function is NULL");
  T_CHECK(bad == NULL, "a refused shell operator must leave the handle NULL");
  EXPECT(mf_operator_create_shell(s, copy_apply, NULL, NULL, NULL), MF_ERR_NULL, "output pointer op is NULL");
  T_CALL(mf_operator_create_laplace(s, MF_QUAD_GAUSS, NULL, NULL, &A));
  T_CALL(mf_operator_create_shell(s, copy_apply, NULL, NULL, &S));
  T_CALL(mf_vector_create(s, &x));
  T_CALL(mf_vector_create(s, &y));
  T_CALL(mf_vector_create(same, &w));

  /* settings: NULL, enum values and sizes out of range, kinds that have no such setting */
  EXPECT(mf_operator_set_scatter(NULL, MF_SCATTER_ATOMIC), MF_ERR_NULL, "operator is NULL");
  EXPECT(mf_operator_set_scatter(A, (mf_scatter)-1), MF_ERR_ARGUMENT, "scatter mode -1 unknown");
  EXPECT(mf_operator_set_cells_per_block(NULL, 1), MF_ERR_NULL, "operator is NULL");
  EXPECT(mf_operator_set_cells_per_block(A, -3), MF_ERR_ARGUMENT, "cells per block -3 out of range");
  EXPECT(mf_operator_set_cells_per_block(S, 1), MF_ERR_UNSUPPORTED, "applies to matrix-free operators on hexahedra only");
  EXPECT(mf_operator_set_kernel_design(A, (mf_kernel_design)-1), MF_ERR_ARGUMENT, "kernel design -1 unknown");
  EXPECT(mf_operator_set_kernel_design(S, MF_KERNEL_POINT), MF_ERR_UNSUPPORTED, "applies to matrix-free operators on hexahedra only");
  EXPECT(mf_operator_set_dirichlet(NULL, 1), MF_ERR_NULL, "operator is NULL");
  mf_geometry g = MF_GEOMETRY_ON_THE_FLY;
  T_CALL(mf_operator_get_geometry(A, &g));
  T_CHECK(g == MF_GEOMETRY_STORED, "a new operator's geometry mode %d, want MF_GEOMETRY_STORED", (int)g);
  T_CALL(mf_operator_set_geometry(A, MF_GEOMETRY_ON_THE_FLY));
  T_CALL(mf_operator_get_geometry(A, &g));
  T_CHECK(g == MF_GEOMETRY_ON_THE_FLY, "geometry mode %d after switching on the fly", (int)g);
  T_CALL(mf_operator_set_geometry(A, MF_GEOMETRY_STORED));

  /* apply and diagonal: NULL vectors, another space, another space of the same size */
  EXPECT(mf_operator_apply(A, x, NULL), MF_ERR_NULL, "output vector y is NULL");
  T_CHECK(mf_operator_apply(A, w, y) == MF_ERR_INCOMPATIBLE, "apply to a vector of another space of the same size accepted");
  T_CHECK(mf_operator_apply(A, x, w) == MF_ERR_INCOMPATIBLE, "apply into a vector of another space of the same size accepted");
  EXPECT(mf_operator_diagonal(NULL, y), MF_ERR_NULL, "operator is NULL");
  EXPECT(mf_operator_diagonal(A, NULL), MF_ERR_NULL, "diagonal vector is NULL");
  T_CHECK(mf_operator_diagonal(A, w) == MF_ERR_INCOMPATIBLE, "the diagonal into a vector of another space of the same size");
  EXPECT(mf_operator_diagonal(S, y), MF_ERR_UNSUPPORTED, "shell operator has no diagonal function");

  /* assembled operators: NULL, the kinds that cannot be assembled, an unknown variant; the nonzeros */
  mf_operator B = (mf_operator)1;
  int64_t nnz = -1;
  EXPECT(mf_operator_create_assembled(NULL, &B), MF_ERR_NULL, "operator is NULL");
  T_CHECK(B == NULL, "a refused assembly must leave the handle NULL, also when the operator is NULL");
  EXPECT(mf_operator_create_assembled(A, NULL), MF_ERR_NULL, "output pointer assembled is NULL");
  /* (the wording of the operator kinds' refusals is not asserted here) */
  T_CHECK(mf_operator_create_assembled(S, &B) == MF_ERR_UNSUPPORTED, "a shell operator assembled");
  EXPECT(mf_operator_create_assembled_variant(A, (mf_assembly_variant)-1, &B), MF_ERR_ARGUMENT, "assembly variant -1 unknown");
  EXPECT(mf_operator_create_assembled_variant(A, (mf_assembly_variant)4, &B), MF_ERR_ARGUMENT, "assembly variant 4 unknown");
  EXPECT(mf_operator_create_assembled_variant(NULL, MF_ASSEMBLY_AUTO, &B), MF_ERR_NULL, "operator is NULL");
  T_CHECK(B == NULL, "a refused assembly must leave the handle NULL");
  EXPECT(mf_operator_local_nnz(NULL, &nnz), MF_ERR_NULL, "operator is NULL");
  EXPECT(mf_operator_local_nnz(A, NULL), MF_ERR_NULL, "output pointer nnz is NULL");
  T_CALL(mf_operator_local_nnz(A, &nnz));
  T_CHECK(nnz == 0, "a matrix-free operator has %lld stored nonzeros", (long long)nnz);

  /* right-hand sides, boundary values, errors: NULL vectors, functions and outputs */
  double err = -1.0;
  EXPECT(mf_vector_assemble_rhs(NULL, one_fn, NULL), MF_ERR_NULL, "vector is NULL");
  EXPECT(mf_vector_assemble_rhs(x, NULL, NULL), MF_ERR_NULL, "function f is NULL");
  EXPECT(mf_vector_set_boundary(NULL, one_fn, NULL), MF_ERR_NULL, "vector is NULL");
  EXPECT(mf_vector_set_boundary(x, NULL, NULL), MF_ERR_NULL, "function g is NULL");
  EXPECT(mf_vector_zero_boundary(NULL), MF_ERR_NULL, "vector is NULL");
  EXPECT(mf_vector_l2_error(NULL, one_fn, NULL, &err), MF_ERR_NULL, "vector is NULL");
  EXPECT(mf_vector_l2_error(x, NULL, NULL, &err), MF_ERR_NULL, "function u is NULL");
  EXPECT(mf_vector_l2_error(x, one_fn, NULL, NULL), MF_ERR_NULL, "output pointer err is NULL");
  /* what they give: boundary values where the Dirichlet DoFs are, zero elsewhere; the error of the
   * interpolant of a polynomial of the space's degree */
  T_CALL(mf_vector_set_value(x, 5.0));
  T_CALL(mf_vector_set_boundary(x, one_fn, NULL));
  double sum = 0.0;
  T_CALL(mf_vector_sum(x, &sum));
  T_CHECK(sum == 16.0 * 2, "set_boundary of 1 on Q2, 4 x 4 cells: sum %g, want the 32 boundary DoFs", sum);
  T_CALL(mf_vector_zero_boundary(x));
  T_CALL(mf_vector_sum(x, &sum));
  T_CHECK(sum == 0.0, "zero_boundary after set_boundary: sum %g", sum);
  T_CALL(mf_vector_interpolate(x, quad_fn, NULL));
  T_CALL(mf_vector_l2_error(x, quad_fn, NULL, &err));
  T_CHECK(err >= 0.0 && err < 1e-13, "Q2 interpolant of 1 + |x|^2: L2 error %g", err);

  T_CALL(mf_operator_destroy(&A));
  T_CHECK(A == NULL, "mf_operator_destroy must set the handle to NULL");
  EXPECT(mf_operator_apply(A, x, y), MF_ERR_NULL, "operator is NULL"); /* a destroyed handle is NULL */
  T_CHECK(mf_operator_destroy(NULL) == 0 && mf_operator_destroy(&A) == 0, "mf_operator_destroy of NULL must return 0");
  mf_operator_destroy(&S);
  mf_vector_destroy(&x);
  mf_vector_destroy(&y);
  mf_vector_destroy(&w);
  mf_space_destroy(&same);
  mf_space_destroy(&o);
  mf_space_destroy(&s);
  mf_mesh_destroy(&mesh);
}

/* ------------------------------------------------------------------ preconditioners and CG */

static int pc_copy(mf_vector r, mf_vector z, void *user)
{
  (void)user;
  return mf_vector_copy(z, r);
}

static void preconditioners(mf_context ctx)
{
  mf_mesh mesh;
  mf_space s, same;
  mf_operator A, A2, S;
  mf_pc jac, cheb, mg, bad = (mf_pc)1;
  mf_vector x, y, w;
  double l = 0.0;
  T_CALL(mf_mesh_create(ctx, "cube", 2, 2, &mesh));
  T_CALL(mf_space_create(mesh, 2, &s));
  T_CALL(mf_space_create(mesh, 2, &same));
  T_CALL(mf_operator_create_laplace(s, MF_QUAD_GAUSS, NULL, NULL, &A));
  T_CALL(mf_operator_set_dirichlet(A, 1));
  T_CALL(mf_operator_create_laplace(same, MF_QUAD_GAUSS, NULL, NULL, &A2));
  T_CALL(mf_operator_create_shell(s, copy_apply, NULL, NULL, &S));
  T_CALL(mf_vector_create(s, &x));
  T_CALL(mf_vector_create(s, &y));
  T_CALL(mf_vector_create(same, &w));
  T_CALL(mf_vector_set_random(x, 1));

  EXPECT(mf_pc_create(NULL, MF_PC_JACOBI, &bad), MF_ERR_NULL, "operator is NULL");
  T_CHECK(bad == NULL, "a refused preconditioner must leave the handle NULL");
  bad = (mf_pc)1;
  EXPECT(mf_pc_create(A, MF_PC_JACOBI, NULL), MF_ERR_NULL, "output pointer pc is NULL");
  EXPECT(mf_pc_create(A, (mf_pc_kind)-1, &bad), MF_ERR_ARGUMENT, "preconditioner kind -1 unknown");
  EXPECT(mf_pc_create(A, (mf_pc_kind)5, &bad), MF_ERR_ARGUMENT, "preconditioner kind 5 unknown");
  T_CHECK(mf_pc_create(S, MF_PC_MULTIGRID, &bad) == MF_ERR_UNSUPPORTED, "multigrid for a shell operator accepted");
  T_CHECK(bad == NULL, "a preconditioner refused for its kind must leave the handle NULL");
  bad = (mf_pc)1;
  EXPECT(mf_pc_create_shell(NULL, pc_copy, NULL, &bad), MF_ERR_NULL, "operator is NULL");
  T_CHECK(bad == NULL, "a refused preconditioner must leave the handle NULL, also when the operator is NULL");
  bad = (mf_pc)1;
  EXPECT(mf_pc_create_shell(A, NULL, NULL, &bad), MF_ERR_NULL, "shell preconditioner apply function is NULL");
  T_CHECK(bad == NULL, "a shell preconditioner without a function must leave the handle NULL");
  EXPECT(mf_pc_create_shell(A, pc_copy, NULL, NULL), MF_ERR_NULL, "output pointer pc is NULL");
  T_CALL(mf_pc_create(A, MF_PC_JACOBI, &jac));
  T_CALL(mf_pc_create(A, MF_PC_CHEBYSHEV, &cheb));
  T_CALL(mf_pc_create(A, MF_PC_MULTIGRID, &mg));

  /* Chebyshev's parameters at and beyond their limits */
  EXPECT(mf_pc_set_chebyshev(NULL, 4, 20.0, 12), MF_ERR_NULL, "preconditioner is NULL");
  EXPECT(mf_pc_set_chebyshev(cheb, 65, 20.0, 12), MF_ERR_ARGUMENT, "Chebyshev degree 65 out of range 1..64");
  EXPECT(mf_pc_set_chebyshev(cheb, 4, 1.0, 12), MF_ERR_ARGUMENT, "Chebyshev range 1 must be a finite number > 1");
  EXPECT(mf_pc_set_chebyshev(cheb, 4, NAN, 12), MF_ERR_ARGUMENT, "Chebyshev range nan");
  EXPECT(mf_pc_set_chebyshev(cheb, 4, INFINITY, 12), MF_ERR_ARGUMENT, "Chebyshev range inf");
  EXPECT(mf_pc_set_chebyshev(cheb, 4, 20.0, 101), MF_ERR_ARGUMENT, "eigenvalue estimate steps 101 out of range 2..100");
  T_CALL(mf_pc_set_chebyshev(cheb, 64, 1.0 + 1e-9, 100)); /* the limits themselves */
  T_CALL(mf_pc_set_chebyshev(cheb, 1, 20.0, 2));
  EXPECT(mf_pc_eigenvalue(NULL, &l), MF_ERR_NULL, "preconditioner is NULL");
  EXPECT(mf_pc_eigenvalue(cheb, NULL), MF_ERR_NULL, "output pointer lambda_max is NULL");
  /* lambda_max(D^-1 A) of a Laplacian: positive, and below 2^dim (Gershgorin on D^-1 A is not a bound
   * for Q2, but the estimate from below of a few CG steps is between 1 and the largest row sum) */
  T_CALL(mf_pc_set_chebyshev(cheb, 4, 20.0, 12));
  T_CALL(mf_pc_eigenvalue(cheb, &l));
  T_CHECK(l > 1.0 && l < 10.0, "lambda_max(D^-1 A) estimate %g", l);

  /* multigrid's parameters at and beyond their limits */
  EXPECT(mf_pc_set_multigrid(NULL, 4, 15.0, 1e-3), MF_ERR_NULL, "preconditioner is NULL");
  EXPECT(mf_pc_set_multigrid(jac, 4, 15.0, 1e-3), MF_ERR_ARGUMENT, "preconditioner Jacobi (MF_PC_JACOBI) is not MF_PC_MULTIGRID");
  EXPECT(mf_pc_set_multigrid(mg, 0, 15.0, 1e-3), MF_ERR_ARGUMENT, "smoother degree 0 out of range 1..64");
  EXPECT(mf_pc_set_multigrid(mg, 65, 15.0, 1e-3), MF_ERR_ARGUMENT, "smoother degree 65 out of range 1..64");
  EXPECT(mf_pc_set_multigrid(mg, 4, 1.0, 1e-3), MF_ERR_ARGUMENT, "smoothing range 1 must be a finite number > 1");
  EXPECT(mf_pc_set_multigrid(mg, 4, NAN, 1e-3), MF_ERR_ARGUMENT, "smoothing range nan");
  EXPECT(mf_pc_set_multigrid(mg, 4, INFINITY, 1e-3), MF_ERR_ARGUMENT, "smoothing range inf");
  EXPECT(mf_pc_set_multigrid(mg, 4, 15.0, 0.0), MF_ERR_ARGUMENT, "coarse reduction 0 out of range (0, 1)");
  EXPECT(mf_pc_set_multigrid(mg, 4, 15.0, 1.0), MF_ERR_ARGUMENT, "coarse reduction 1 out of range (0, 1)");
  EXPECT(mf_pc_set_multigrid(mg, 4, 15.0, NAN), MF_ERR_ARGUMENT, "coarse reduction nan out of range (0, 1)");
  EXPECT(mf_pc_set_multigrid_precision(NULL, MF_PRECISION_FLOAT), MF_ERR_NULL, "preconditioner is NULL");
  EXPECT(mf_pc_set_multigrid_precision(mg, (mf_precision)-1), MF_ERR_ARGUMENT, "precision -1 unknown");
  int nl = 0;
  int64_t nd = 0, nc = 0;
  double t[64];
  /* the multigrid queries: NULL, a preconditioner of another kind (refused before any set-up: the
   * shell operator has no diagonal, which a Jacobi set-up would need) */
  mf_pc sj;
  T_CALL(mf_pc_create(S, MF_PC_JACOBI, &sj));
  EXPECT(mf_pc_multigrid_levels(NULL, &nl), MF_ERR_NULL, "preconditioner is NULL");
  EXPECT(mf_pc_multigrid_levels(sj, &nl), MF_ERR_ARGUMENT, "the preconditioner is not MF_PC_MULTIGRID");
  EXPECT(mf_pc_multigrid_level(sj, 0, NULL, NULL, NULL), MF_ERR_ARGUMENT, "the preconditioner is not MF_PC_MULTIGRID");
  EXPECT(mf_pc_multigrid_profile(sj, 1), MF_ERR_ARGUMENT, "the preconditioner is not MF_PC_MULTIGRID");
  EXPECT(mf_pc_multigrid_times(sj, t), MF_ERR_ARGUMENT, "the preconditioner is not MF_PC_MULTIGRID");
  EXPECT(mf_pc_multigrid_level(NULL, 0, NULL, NULL, NULL), MF_ERR_NULL, "preconditioner is NULL");
  EXPECT(mf_pc_multigrid_profile(NULL, 1), MF_ERR_NULL, "preconditioner is NULL");
  EXPECT(mf_pc_multigrid_times(NULL, t), MF_ERR_NULL, "preconditioner is NULL");
  EXPECT(mf_pc_multigrid_levels(mg, NULL), MF_ERR_NULL, "output pointer nlevels is NULL");
  EXPECT(mf_pc_multigrid_times(mg, NULL), MF_ERR_NULL, "output array seconds is NULL");
  T_CALL(mf_pc_multigrid_levels(mg, &nl));
  EXPECT(mf_pc_multigrid_level(mg, -1, NULL, &nd, NULL), MF_ERR_ARGUMENT, "level -1 out of range 0..");
  EXPECT(mf_pc_multigrid_level(mg, nl, NULL, &nd, NULL), MF_ERR_ARGUMENT, "out of range 0..");
  mf_pc_destroy(&sj);

  /* apply and set-up: NULL, vectors of another space (of the same size: code only) */
  EXPECT(mf_pc_setup(NULL), MF_ERR_NULL, "preconditioner is NULL");
  EXPECT(mf_pc_apply(jac, NULL, y), MF_ERR_NULL, "vector r is NULL");
  EXPECT(mf_pc_apply(jac, x, NULL), MF_ERR_NULL, "vector z is NULL");
  T_CHECK(mf_pc_apply(jac, w, y) != 0, "pc apply to r of another space of the same size accepted");
  {
    mf_vector w2;
    T_CALL(mf_vector_create(same, &w2));
    T_CHECK(mf_pc_apply(jac, w, w2) == MF_ERR_INCOMPATIBLE, "pc apply to vectors of another space of the same size accepted");
    mf_vector_destroy(&w2);
  }

  /* CG: NULL handles and outputs, tolerances, a preconditioner of another operator's space */
  mf_cg cg, cbad = (mf_cg)1;
  mf_cg_info info;
  const double *hist = NULL;
  int nh = -1;
  EXPECT(mf_cg_create(A, NULL), MF_ERR_NULL, "output pointer cg is NULL");
  T_CALL(mf_cg_create(A, &cg));
  EXPECT(mf_cg_create(NULL, &cbad), MF_ERR_NULL, "operator is NULL");
  T_CHECK(cbad == NULL, "a refused cg must leave the handle NULL");
  EXPECT(mf_cg_set_tolerance(NULL, 1e-8, 10), MF_ERR_NULL, "cg is NULL");
  EXPECT(mf_cg_set_tolerance(cg, 0.0, 10), MF_ERR_ARGUMENT, "tolerance 0 out of range (0, 1)");
  EXPECT(mf_cg_set_tolerance(cg, 1.0, 10), MF_ERR_ARGUMENT, "tolerance 1 out of range (0, 1)");
  EXPECT(mf_cg_set_tolerance(cg, NAN, 10), MF_ERR_ARGUMENT, "tolerance nan out of range (0, 1)");
  EXPECT(mf_cg_set_tolerance(cg, 1e-8, -5), MF_ERR_ARGUMENT, "iteration limit -5 must be positive");
  EXPECT(mf_cg_set_jacobi(NULL, 1), MF_ERR_NULL, "cg is NULL");
  EXPECT(mf_cg_set_pc(NULL, jac), MF_ERR_NULL, "cg is NULL");
  {
    mf_pc other;
    T_CALL(mf_pc_create(A2, MF_PC_JACOBI, &other));
    T_CHECK(mf_cg_set_pc(cg, other) == MF_ERR_INCOMPATIBLE, "a preconditioner of another space of the same size accepted");
    mf_pc_destroy(&other);
  }
  EXPECT(mf_cg_set_monitor(NULL, NULL, NULL), MF_ERR_NULL, "cg is NULL");
  EXPECT(mf_cg_residual_history(NULL, &hist, &nh), MF_ERR_NULL, "cg is NULL");
  EXPECT(mf_cg_residual_history(cg, NULL, &nh), MF_ERR_NULL, "output pointers history/length are NULL");
  EXPECT(mf_cg_residual_history(cg, &hist, NULL), MF_ERR_NULL, "output pointers history/length are NULL");
  EXPECT(mf_cg_solve(NULL, x, y, &info), MF_ERR_NULL, "cg is NULL");
  EXPECT(mf_cg_solve(cg, NULL, y, &info), MF_ERR_NULL, "right-hand side b is NULL");
  EXPECT(mf_cg_solve(cg, x, NULL, &info), MF_ERR_NULL, "solution x is NULL");
  T_CHECK(mf_cg_solve(cg, w, y, &info) == MF_ERR_INCOMPATIBLE, "cg solve with b of another space of the same size accepted");
  T_CHECK(mf_cg_solve(cg, x, w, &info) == MF_ERR_INCOMPATIBLE, "cg solve with x of another space of the same size accepted");
  T_CHECK(info.iterations == 0 && info.converged == 0, "info after a refusal: %d iterations, converged %d", info.iterations,
          info.converged);
  /* the history before any solve is empty; mf_cg_set_jacobi(cg, 0) drops the preconditioner: CG on
   * the Laplacian then takes more iterations than with Jacobi or Chebyshev */
  T_CALL(mf_cg_residual_history(cg, &hist, &nh));
  T_CHECK(nh == 0, "history before a solve: %d entries", nh);
  int its[3];
  for (int k = 0; k < 3; k++) {
    if (k == 0) T_CALL(mf_cg_set_jacobi(cg, 0));
    if (k == 1) T_CALL(mf_cg_set_jacobi(cg, 1));
    if (k == 2) T_CALL(mf_cg_set_pc(cg, cheb));
    T_CALL(mf_vector_set_value(y, 0.0));
    T_CALL(mf_vector_zero_boundary(x));
    T_CALL(mf_cg_solve(cg, x, y, &info));
    its[k] = info.iterations;
    T_CALL(mf_cg_residual_history(cg, &hist, &nh));
    T_CHECK(info.converged && nh == info.iterations + 1 && hist[0] == info.residual0,
            "case %d: converged %d, %d iterations, history of %d from %g (residual0 %g)", k, info.converged, info.iterations,
            nh, nh ? hist[0] : -1.0, info.residual0);
  }
  T_CHECK(its[2] < its[1] && its[1] <= its[0], "CG iterations: none %d, Jacobi %d, Chebyshev %d", its[0], its[1], its[2]);
  T_CALL(mf_cg_set_pc(cg, NULL)); /* back to the cg's own (Jacobi): the same iterations as before */
  T_CALL(mf_vector_set_value(y, 0.0));
  T_CALL(mf_cg_solve(cg, x, y, &info));
  T_CHECK(info.iterations == its[1], "mf_cg_set_pc(cg, NULL): %d iterations, Jacobi took %d", info.iterations, its[1]);
  /* the cg holds the preconditioner set for it: its handle may go first (valgrind_t30_api sees the
   * memory), set twice it is held once, and mf_cg_set_jacobi or another mf_cg_set_pc let it go */
  {
    mf_pc c2;
    T_CALL(mf_pc_create(A, MF_PC_CHEBYSHEV, &c2));
    T_CALL(mf_cg_set_pc(cg, c2));
    T_CALL(mf_cg_set_pc(cg, c2));
    T_CALL(mf_pc_destroy(&c2));
    T_CALL(mf_vector_set_value(y, 0.0));
    T_CALL(mf_cg_solve(cg, x, y, &info));
    T_CHECK(info.converged && info.iterations == its[2], "Chebyshev destroyed by the user, held by the cg: %d iterations, %d before",
            info.iterations, its[2]);
    T_CALL(mf_cg_set_jacobi(cg, 1));
    T_CALL(mf_pc_create(A, MF_PC_CHEBYSHEV, &c2));
    T_CALL(mf_cg_set_pc(cg, c2));
    T_CALL(mf_cg_set_pc(cg, cheb));
    T_CALL(mf_pc_destroy(&c2));
  }

  T_CALL(mf_cg_destroy(&cg));
  T_CHECK(cg == NULL, "mf_cg_destroy must set the handle to NULL");
  EXPECT(mf_cg_setup(cg), MF_ERR_NULL, "cg is NULL");
  T_CHECK(mf_cg_destroy(NULL) == 0, "mf_cg_destroy(NULL) must return 0");
  T_CALL(mf_pc_destroy(&jac));
  T_CHECK(jac == NULL, "mf_pc_destroy must set the handle to NULL");
  EXPECT(mf_pc_apply(jac, x, y), MF_ERR_NULL, "preconditioner is NULL");
  T_CHECK(mf_pc_destroy(NULL) == 0 && mf_pc_destroy(&jac) == 0, "mf_pc_destroy of NULL must return 0");
  mf_pc_destroy(&cheb);
  mf_pc_destroy(&mg);
  mf_vector_destroy(&x);
  mf_vector_destroy(&y);
  mf_vector_destroy(&w);
  mf_operator_destroy(&S);
  mf_operator_destroy(&A2);
  mf_operator_destroy(&A);
  mf_space_destroy(&same);
  mf_space_destroy(&s);
  mf_mesh_destroy(&mesh);
}

/* ------------------------------------------------------------------ multigrid: levels, parameters, profile */

/* CG from zero; returns the wall time of mf_cg_solve (info->seconds leaves out the check of the true
 * residual at the end, which applies the preconditioner once more) */
static double mg_solve(mf_cg cg, mf_vector b, mf_vector x, mf_cg_info *info)
{
  T_CALL(mf_vector_set_value(x, 0.0));
  const double t0 = MPI_Wtime();
  T_CALL(mf_cg_solve(cg, b, x, info));
  const double t = MPI_Wtime() - t0;
  T_CHECK(info->converged, "multigrid CG did not converge (%d iterations)", info->iterations);
  return t;
}

static void multigrid(mf_context ctx)
{
  mf_mesh mesh;
  mf_space s;
  mf_operator A;
  mf_pc mg;
  mf_vector b, x, z1, z2;
  mf_cg cg;
  mf_cg_info info;
  const int trees[3] = {3, 3, 1}; /* the coarsest level, 3 x 3 cells, has interior DoFs */
  T_CALL(mf_mesh_create_box(ctx, "cube", 2, trees, 2, &mesh));
  T_CALL(mf_space_create(mesh, 4, &s));
  T_CALL(mf_operator_create_laplace(s, MF_QUAD_GAUSS, NULL, NULL, &A));
  T_CALL(mf_operator_set_dirichlet(A, 1));
  T_CALL(mf_pc_create(A, MF_PC_MULTIGRID, &mg));
  T_CALL(mf_vector_create(s, &b));
  T_CALL(mf_vector_create(s, &x));
  T_CALL(mf_vector_create(s, &z1));
  T_CALL(mf_vector_create(s, &z2));
  T_CALL(mf_vector_assemble_rhs(b, one_fn, NULL));
  T_CALL(mf_vector_zero_boundary(b));

  /* the levels, finest last: Q4, Q2, Q1 on the 12 x 12 cells, then Q1 on 6 x 6 and 3 x 3 (the trees;
   * one rank: on more the coarsening stops where a family is split between ranks) */
  int nl = 0;
  T_CALL(mf_pc_multigrid_levels(mg, &nl));
  int64_t ncells = 0, ndofs = 0;
  T_CALL(mf_mesh_num_cells(mesh, &ncells));
  T_CALL(mf_space_num_dofs(s, &ndofs));
  int deg[64];
  int64_t nd[64], nc[64];
  for (int l = 0; l < nl && l < 64; l++) T_CALL(mf_pc_multigrid_level(mg, l, &deg[l], &nd[l], &nc[l]));
  T_CHECK(nl >= 3 && nl <= 64 && deg[nl - 1] == 4 && nd[nl - 1] == ndofs && nc[nl - 1] == ncells && deg[nl - 2] == 2 &&
              nc[nl - 2] == ncells && deg[nl - 3] == 1 && nc[nl - 3] == ncells,
          "multigrid levels: %d, finest Q%d with %lld DoFs (space %lld) on %lld cells (mesh %lld)", nl, deg[nl - 1],
          (long long)nd[nl - 1], (long long)ndofs, (long long)nc[nl - 1], (long long)ncells);
  for (int l = 1; l < nl; l++)
    T_CHECK(nd[l] > nd[l - 1] && nc[l] >= nc[l - 1] && (deg[l] == 1 || nc[l] == ncells),
            "level %d (Q%d, %lld DoFs, %lld cells) after level %d (Q%d, %lld DoFs, %lld cells)", l, deg[l], (long long)nd[l],
            (long long)nc[l], l - 1, deg[l - 1], (long long)nd[l - 1], (long long)nc[l - 1]);
  if (size_ == 1) {
    static const int want_deg[5] = {1, 1, 1, 2, 4};
    static const int64_t want_nd[5] = {16, 49, 169, 625, 2401}, want_nc[5] = {9, 36, 144, 144, 144};
    int same = nl == 5;
    for (int l = 0; same && l < 5; l++) same = deg[l] == want_deg[l] && nd[l] == want_nd[l] && nc[l] == want_nc[l];
    T_CHECK(same, "one rank, Q4 on 12 x 12 cells: %d levels, not Q1 (9, 36, 144 cells), Q2, Q4", nl);
  }
  T_CALL(mf_pc_multigrid_level(mg, 0, NULL, NULL, NULL)); /* every output may be NULL */

  /* the parameters take effect at the next set-up: another smoother degree gives another V-cycle,
   * the defaults again the same as before */
  T_CALL(mf_vector_set_random(x, 9));
  T_CALL(mf_vector_zero_boundary(x));
  T_CALL(mf_pc_apply(mg, x, z1));
  T_CALL(mf_pc_set_multigrid(mg, 1, 15.0, 1e-3));
  T_CALL(mf_pc_apply(mg, x, z2));
  double d1 = 0.0, d0 = 0.0;
  T_CALL(mf_vector_axpy(z2, -1.0, z1));
  T_CALL(mf_vector_norm2(z2, &d1));
  T_CALL(mf_pc_set_multigrid(mg, 4, 15.0, 1e-3));
  T_CALL(mf_pc_apply(mg, x, z2));
  T_CALL(mf_vector_axpy(z2, -1.0, z1));
  T_CALL(mf_vector_norm2(z2, &d0));
  T_CHECK(d1 > 0.0 && d0 == 0.0, "smoother degree 1 changes the V-cycle by %g, the defaults again by %g (want > 0, 0)", d1, d0);
  T_CALL(mf_pc_set_multigrid(mg, 4, 15.0, 0.5)); /* a coarse reduction of 1/2 changes the V-cycle too */
  T_CALL(mf_pc_apply(mg, x, z2));
  T_CALL(mf_vector_axpy(z2, -1.0, z1));
  T_CALL(mf_vector_norm2(z2, &d1));
  T_CALL(mf_pc_set_multigrid(mg, 4, 30.0, 1e-3)); /* and another smoothing range */
  T_CALL(mf_pc_apply(mg, x, z2));
  T_CALL(mf_vector_axpy(z2, -1.0, z1));
  T_CALL(mf_vector_norm2(z2, &d0));
  T_CHECK(d1 > 0.0 && d0 > 0.0, "coarse reduction 0.5 changes the V-cycle by %g, smoothing range 30 by %g", d1, d0);
  T_CALL(mf_pc_set_multigrid(mg, 4, 15.0, 1e-3));

  /* the profile: off (the default), the times stay zero; on, every level's time is >= 0, some > 0,
   * exactly nlevels entries are written, and their sum is within the solve's wall time; a call sets
   * them back to zero, and off they stay there */
  double t[64 + 1];
  T_CALL(mf_cg_create(A, &cg));
  T_CALL(mf_cg_set_tolerance(cg, 1e-8, 100));
  T_CALL(mf_cg_set_pc(cg, mg));
  mg_solve(cg, b, x, &info);
  for (int l = 0; l <= nl; l++) t[l] = -1.0;
  T_CALL(mf_pc_multigrid_times(mg, t));
  for (int l = 0; l < nl; l++) T_CHECK(t[l] == 0.0, "profile off: level %d took %g s", l, t[l]);
  T_CHECK(t[nl] == -1.0, "mf_pc_multigrid_times wrote past its %d levels", nl);
  T_CALL(mf_pc_multigrid_profile(mg, 1));
  const double wall = mg_solve(cg, b, x, &info);
  for (int l = 0; l <= nl; l++) t[l] = -1.0;
  T_CALL(mf_pc_multigrid_times(mg, t));
  double sum = 0.0;
  for (int l = 0; l < nl; l++) { /* every level written (a coarse level's time may be below the clock's tick) */
    T_CHECK(t[l] >= 0.0, "profile: level %d took %g s", l, t[l]);
    sum += t[l];
  }
  T_CHECK(t[nl] == -1.0, "mf_pc_multigrid_times wrote past its %d levels", nl);
  T_CHECK(t[nl - 1] > 0.0 && sum <= wall, "profile: the finest level %g s, %g s in all, the solve %g s", t[nl - 1], sum,
          wall);
  mg_solve(cg, b, x, &info);
  double again[64];
  T_CALL(mf_pc_multigrid_times(mg, again));
  T_CHECK(again[nl - 1] > t[nl - 1], "profile: a second solve adds to the times (finest level %g s, then %g s)", t[nl - 1],
          again[nl - 1]);
  T_CALL(mf_pc_multigrid_profile(mg, 1)); /* again on: the times start from zero */
  T_CALL(mf_pc_multigrid_times(mg, t));
  for (int l = 0; l < nl; l++) T_CHECK(t[l] == 0.0, "profile switched on again: level %d kept %g s", l, t[l]);
  /* a new set-up (new parameters) keeps the profile on */
  T_CALL(mf_pc_set_multigrid(mg, 3, 15.0, 1e-3));
  mg_solve(cg, b, x, &info);
  T_CALL(mf_pc_multigrid_times(mg, t));
  T_CHECK(t[nl - 1] > 0.0, "profile on, after a new set-up: finest level %g s", t[nl - 1]);
  T_CALL(mf_pc_multigrid_profile(mg, 0));
  mg_solve(cg, b, x, &info);
  T_CALL(mf_pc_multigrid_times(mg, t));
  for (int l = 0; l < nl; l++) T_CHECK(t[l] == 0.0, "profile switched off: level %d %g s", l, t[l]);

  mf_cg_destroy(&cg);
  mf_pc_destroy(&mg);
  mf_vector_destroy(&b);
  mf_vector_destroy(&x);
  mf_vector_destroy(&z1);
  mf_vector_destroy(&z2);
  mf_operator_destroy(&A);
  mf_space_destroy(&s);
  mf_mesh_destroy(&mesh);
}

/* ------------------------------------------------------------------ a space whose mesh was adapted */

#define STALE "space was made on the mesh before it was adapted"

/* The space made before an adaptation is refused wherever its mesh data would be used for something
 * new; what was made from it before (vectors, operators, a Jacobi or a set-up multigrid preconditioner)
 * keeps working on the old mesh. */
static void stale_space(mf_context ctx, int shells)
{
  mf_mesh mesh;
  mf_space s, fresh;
  mf_operator A, A2 = (mf_operator)1, B;
  mf_vector x, y, v = (mf_vector)1, f;
  mf_pc jac, mg, mgready;
  mf_cg cg;
  mf_cg_info info;
  double err = 0.0;
  if (shells) T_CALL(mf_mesh_create(ctx, "ball", 2, 1, &mesh));
  else T_CALL(mf_mesh_create(ctx, "cube", 2, 2, &mesh));
  T_CALL(mf_space_create(mesh, 2, &s));
  T_CALL(mf_operator_create_laplace(s, MF_QUAD_GAUSS, NULL, NULL, &A));
  T_CALL(mf_operator_set_dirichlet(A, 1));
  T_CALL(mf_vector_create(s, &x));
  T_CALL(mf_vector_create(s, &y));
  T_CALL(mf_vector_interpolate(x, quad_fn, NULL));
  T_CALL(mf_pc_create(A, MF_PC_JACOBI, &jac));
  T_CALL(mf_pc_create(A, MF_PC_MULTIGRID, &mg));
  T_CALL(mf_pc_create(A, MF_PC_MULTIGRID, &mgready));
  T_CALL(mf_pc_setup(mgready));
  T_CALL(mf_cg_create(A, &cg));
  int64_t before = 0, after = 0;
  T_CALL(mf_mesh_num_cells(mesh, &before));
  if (shells) T_CALL(mf_mesh_refine_shells(mesh, 1));
  else T_CALL(mf_mesh_adapt(mesh, t_refine_ball, NULL));
  T_CALL(mf_mesh_num_cells(mesh, &after));
  T_CHECK(after > before, "the adaptation added no cells (%lld, %lld)", (long long)before, (long long)after);

  /* new objects on the space, and what evaluates functions at its points: refused */
  EXPECT(mf_vector_create(s, &v), MF_ERR_INCOMPATIBLE, STALE);
  T_CHECK(v == NULL, "a refused vector must leave the handle NULL");
  EXPECT(mf_operator_create_mass(s, MF_QUAD_GAUSS, NULL, NULL, &A2), MF_ERR_INCOMPATIBLE, STALE);
  T_CHECK(A2 == NULL, "a refused operator must leave the handle NULL");
  EXPECT(mf_operator_create_laplace(s, MF_QUAD_GAUSS, NULL, NULL, &A2), MF_ERR_INCOMPATIBLE, "destroy it and create a new space");
  EXPECT(mf_operator_create_helmholtz(s, MF_QUAD_GAUSS, 1.0, 1.0, NULL, NULL, &A2), MF_ERR_INCOMPATIBLE, STALE);
  EXPECT(mf_operator_create_shell(s, copy_apply, NULL, NULL, &A2), MF_ERR_INCOMPATIBLE, STALE);
  EXPECT(mf_operator_create_assembled(A, &B), MF_ERR_INCOMPATIBLE, STALE);
  EXPECT(mf_vector_interpolate(x, quad_fn, NULL), MF_ERR_INCOMPATIBLE, STALE);
  EXPECT(mf_vector_set_random(x, 1), MF_ERR_INCOMPATIBLE, STALE);
  EXPECT(mf_vector_set_boundary(x, one_fn, NULL), MF_ERR_INCOMPATIBLE, STALE);
  EXPECT(mf_vector_assemble_rhs(y, one_fn, NULL), MF_ERR_INCOMPATIBLE, STALE);
  EXPECT(mf_vector_l2_error(x, quad_fn, NULL, &err), MF_ERR_INCOMPATIBLE, STALE);
  EXPECT(mf_vector_h1_error(x, zero_grad, NULL, &err), MF_ERR_INCOMPATIBLE, STALE);
  EXPECT(mf_vector_write_vtu(x, "t30_stale", "u"), MF_ERR_INCOMPATIBLE, STALE);
  EXPECT(mf_pc_setup(mg), MF_ERR_INCOMPATIBLE, STALE);
  EXPECT(mf_pc_apply(mg, x, y), MF_ERR_INCOMPATIBLE, STALE);
  EXPECT(mf_pc_multigrid_levels(mg, &(int){0}), MF_ERR_INCOMPATIBLE, STALE);
  T_CALL(mf_cg_set_pc(cg, mg));
  EXPECT(mf_cg_setup(cg), MF_ERR_INCOMPATIBLE, STALE);
  EXPECT(mf_cg_solve(cg, x, y, &info), MF_ERR_INCOMPATIBLE, STALE);

  /* what was made before keeps working: the operator, the vector algebra, Jacobi, a multigrid
   * hierarchy set up before; the queries answer */
  double nrm = 0.0;
  T_CALL(mf_operator_apply(A, x, y));
  T_CALL(mf_vector_zero_boundary(y));
  T_CALL(mf_vector_norm2(y, &nrm));
  T_CHECK(nrm > 0.0, "apply of the operator made before the adaptation: norm %g", nrm);
  T_CALL(mf_pc_apply(jac, y, x));
  T_CALL(mf_pc_apply(mgready, y, x));
  int nl = 0;
  int64_t nc = 0;
  T_CALL(mf_pc_multigrid_levels(mgready, &nl));
  T_CALL(mf_pc_multigrid_level(mgready, nl - 1, NULL, NULL, &nc));
  T_CHECK(nc == before, "the finest level of a hierarchy set up before the adaptation: %lld cells, its mesh had %lld",
          (long long)nc, (long long)before);
  T_CALL(mf_cg_set_pc(cg, NULL));
  T_CALL(mf_vector_set_value(x, 0.0));
  T_CALL(mf_cg_solve(cg, y, x, &info));
  T_CHECK(info.converged, "CG with the operator made before the adaptation did not converge");
  int64_t n = 0;
  T_CALL(mf_space_num_dofs(s, &n));

  /* a space made after the adaptation: everything works, and the old vectors are of another space */
  T_CALL(mf_space_create(mesh, 2, &fresh));
  T_CALL(mf_vector_create(fresh, &f));
  T_CALL(mf_vector_interpolate(f, quad_fn, NULL));
  T_CALL(mf_vector_l2_error(f, quad_fn, NULL, &err));
  T_CHECK(err < (shells ? 1e-2 : 1e-12), "the new space's interpolant of a quadratic: L2 error %g", err); /* ball: curved */
  EXPECT(mf_operator_apply(A, f, y), MF_ERR_INCOMPATIBLE, "another space");
  {
    mf_pc p;
    T_CALL(mf_operator_create_laplace(fresh, MF_QUAD_GAUSS, NULL, NULL, &A2));
    T_CALL(mf_operator_set_dirichlet(A2, 1));
    T_CALL(mf_pc_create(A2, MF_PC_MULTIGRID, &p));
    T_CALL(mf_pc_setup(p));
    mf_pc_destroy(&p);
    mf_operator_destroy(&A2);
  }
  /* adapting again makes the new space stale too */
  T_CALL(mf_mesh_adapt(mesh, t_refine_ball, NULL));
  EXPECT(mf_vector_create(fresh, &v), MF_ERR_INCOMPATIBLE, STALE);
  mf_vector_destroy(&f);
  mf_space_destroy(&fresh);
  mf_cg_destroy(&cg);
  mf_pc_destroy(&mgready);
  mf_pc_destroy(&mg);
  mf_pc_destroy(&jac);
  mf_vector_destroy(&x);
  mf_vector_destroy(&y);
  mf_operator_destroy(&A);
  mf_space_destroy(&s);
  mf_mesh_destroy(&mesh);
}

/* A vector checked out for writing on one rank only: the collective functions that need it refuse it on
 * every rank (the others learn it from that rank, "rank R: ") instead of going on alone into their
 * exchanges and waiting there; afterwards the vector works again on every rank. Several ranks only. */
static void one_rank_checked_out(mf_context ctx)
{
  if (size_ < 2) return;
  int rank;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  mf_mesh mesh;
  mf_space s;
  mf_vector x, b;
  mf_operator A;
  mf_cg cg;
  mf_cg_info info;
  double err, *arr = NULL;
  T_CALL(mf_mesh_create(ctx, "cube", 2, 2, &mesh));
  T_CALL(mf_space_create(mesh, 2, &s));
  T_CALL(mf_vector_create(s, &x));
  T_CALL(mf_vector_create(s, &b));
  T_CALL(mf_operator_create_laplace(s, MF_QUAD_GAUSS, NULL, NULL, &A));
  T_CALL(mf_operator_set_dirichlet(A, 1));
  T_CALL(mf_cg_create(A, &cg));
  T_CALL(mf_vector_set_value(b, 1.0));
  if (rank == 1) T_CALL(mf_vector_get_array(x, MF_MEM_HOST, &arr));
  const char *why = rank == 1 ? "checked out for writing" : "rank 1: ";
  EXPECT(mf_vector_interpolate(x, quad_fn, NULL), MF_ERR_ARGUMENT, why);
  EXPECT(mf_vector_set_boundary(x, one_fn, NULL), MF_ERR_ARGUMENT, why);
  EXPECT(mf_vector_assemble_rhs(x, one_fn, NULL), MF_ERR_ARGUMENT, why);
  EXPECT(mf_vector_l2_error(x, quad_fn, NULL, &err), MF_ERR_ARGUMENT, why);
  EXPECT(mf_vector_h1_error(x, zero_grad, NULL, &err), MF_ERR_ARGUMENT, why);
  EXPECT(mf_cg_solve(cg, b, x, &info), MF_ERR_ARGUMENT, why);
  if (rank == 1) T_CALL(mf_vector_restore_array(x, &arr));
  T_CALL(mf_vector_interpolate(x, quad_fn, NULL)); /* every rank's access was undone */
  T_CALL(mf_vector_set_value(x, 0.0));
  T_CALL(mf_cg_solve(cg, b, x, &info));
  T_CHECK(info.converged, "CG after the refusals: not converged");
  mf_cg_destroy(&cg);
  mf_operator_destroy(&A);
  mf_vector_destroy(&b);
  mf_vector_destroy(&x);
  mf_space_destroy(&s);
  mf_mesh_destroy(&mesh);
}

int main(int argc, char **argv)
{
  MPI_Init(&argc, &argv);
  const char *be = t_backend(argc, argv);
  MPI_Comm_size(MPI_COMM_WORLD, &size_);
  contexts(be);
  mf_context ctx;
  T_CALL(mf_context_create(MPI_COMM_WORLD, be, &ctx));
  phases(ctx);
  meshes(ctx);
  spaces(ctx);
  if (!strcmp(be, "cpu")) simplices();
  vectors(ctx);
  operators(ctx);
  preconditioners(ctx);
  multigrid(ctx);
  stale_space(ctx, 0);
  stale_space(ctx, 1);
  one_rank_checked_out(ctx);
  mf_context_destroy(&ctx);
  return t_finish();
}
