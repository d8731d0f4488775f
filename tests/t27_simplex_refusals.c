/* t27_simplex_refusals.c -- what simplex meshes, spaces and operators refuse, with a clear message and
 * no crash: adaptation, multigrid, assembly, VTU output, bad files and arguments, degrees above 4 on the
 * cuda backend (the one place that decides it), hex-only and simplex-only calls crossed.
 *   t27_simplex_refusals cpu GMSHDIR     one rank
 *   t27_simplex_refusals cpu GMSHDIR     under mpiexec -n 2: the mesh split between the ranks, multigrid,
 *                                        assembly and physics made there, elasticity with multigrid
 *                                        (double and float V-cycles) against rank 0 alone           */
#include "mf_test.h"

#include <math.h>

#include "simplex/mf_simplex_space.h"
#include "simplex/mf_simplex_backend.h"
#include "cuda/mf_simplex_cuda.h" /* MF_SIMPLEX_CUDA_MAX_DEGREE, the cuda table's (a header usable without CUDA) */

static int refine_all(const double *c, int dim, int level, void *u)
{
  (void)c, (void)dim, (void)level, (void)u;
  return 1;
}

/* Linear elasticity on comm (cube-tets level 2, P2, clamped at x = 0, a uniform load): CG with multigrid to
 * 1e-10, its iterations and the solution's norm */
static double unit(const double *x, int dim, void *user)
{
  (void)x, (void)dim, (void)user;
  return 1.0;
}
static void elasticity_solve(MPI_Comm comm, mf_precision prec, int *its, double *norm)
{
  mf_context c;
  mf_mesh mesh;
  mf_space s;
  mf_operator E;
  mf_pc pc;
  mf_cg cg;
  mf_vector b, u;
  mf_cg_info info;
  const int clamped = 1;
  T_CALL(mf_context_create(comm, "cpu", &c));
  T_CALL(mf_mesh_create(c, "cube-tets", 3, 2, &mesh));
  T_CALL(mf_space_create_components(mesh, 2, 3, &s));
  T_CALL(mf_space_set_dirichlet_tags(s, 1, &clamped));
  T_CALL(mf_operator_create_elasticity(s, 0.5769, 0.3846, &E));
  T_CALL(mf_operator_set_dirichlet(E, 1));
  T_CALL(mf_vector_create(s, &b));
  T_CALL(mf_vector_create(s, &u));
  T_CALL(mf_vector_interpolate(b, unit, NULL));
  T_CALL(mf_vector_zero_boundary(b));
  T_CALL(mf_vector_set_value(u, 0.0));
  T_CALL(mf_pc_create(E, MF_PC_MULTIGRID, &pc));
  T_CALL(mf_pc_set_multigrid_precision(pc, prec));
  T_CALL(mf_cg_create(E, &cg));
  T_CALL(mf_cg_set_pc(cg, pc));
  T_CALL(mf_cg_set_tolerance(cg, 1e-10, 200));
  T_CALL(mf_cg_solve(cg, b, u, &info));
  T_CHECK(info.converged, "elasticity: CG did not converge (%d iterations)", info.iterations);
  T_CALL(mf_vector_norm2(u, norm));
  *its = info.iterations;
  mf_cg_destroy(&cg);
  mf_pc_destroy(&pc);
  mf_vector_destroy(&b), mf_vector_destroy(&u);
  mf_operator_destroy(&E);
  mf_space_destroy(&s);
  mf_mesh_destroy(&mesh);
  mf_context_destroy(&c);
}

static char path_buf[4096];
static const char *path(const char *dir, const char *file)
{
  snprintf(path_buf, sizeof path_buf, "%s/%s", dir, file);
  return path_buf;
}

int main(int argc, char **argv)
{
  MPI_Init(&argc, &argv);
  const char *be = t_backend(argc, argv);
  const char *dir = argc > 2 ? argv[2] : ".";
  mf_context ctx;
  T_CALL(mf_context_create(MPI_COMM_WORLD, be, &ctx));
  int size;
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  mf_mesh mesh = NULL;
  if (size > 1) { /* several ranks: the cells split between the ranks; what is not made there yet refused */
    T_CALL(mf_mesh_create(ctx, "square-tris", 2, 2, &mesh));
    int64_t n = 0, mine = mesh->ncells_local, all = 0;
    T_CALL(mf_mesh_num_cells(mesh, &n));
    MPI_Allreduce(&mine, &all, 1, MPI_INT64_T, MPI_SUM, MPI_COMM_WORLD);
    T_CHECK(n == 32 && all == n && mine > 0, "square-tris level 2 on %d ranks: %lld cells, %lld on this rank, %lld in all",
            size, (long long)n, (long long)mine, (long long)all);
    mf_space s = NULL;
    mf_operator A = NULL, B = NULL, P = NULL;
    mf_pc pc = NULL;
    mf_physics ph = NULL;
    T_CALL(mf_space_create(mesh, 2, &s));
    T_CALL(mf_operator_create_laplace(s, MF_QUAD_GAUSS, NULL, NULL, &A));
    T_CALL(mf_pc_create(A, MF_PC_MULTIGRID, &pc)); /* made on several ranks (t06 compares it with one rank) */
    T_CALL(mf_pc_setup(pc));
    mf_pc_destroy(&pc);
    T_CALL(mf_operator_create_assembled(A, &B)); /* made on several ranks (t06 compares it with one rank) */
    mf_operator_destroy(&B);
    T_CALL(mf_physics_create_gallery(ctx, "laplace", 1, 0, NULL, &ph));
    T_CALL(mf_operator_create_physics(s, ph, MF_QUAD_GAUSS, &P)); /* t38 on 2 ranks checks it */
    mf_operator_destroy(&P);
    mf_physics_destroy(&ph);
    mf_operator_destroy(&A);
    mf_space_destroy(&s);
    mf_mesh_destroy(&mesh);
    /* elasticity with multigrid on the ranks and on rank 0 alone: the same iterations (+-1) and solution norm (to
     * 1e-10; with the float V-cycle to 1e-7, its rounding differs with the ranks' order of sums) */
    for (int f = 0; f <= 1; f++) {
      const mf_precision prec = f ? MF_PRECISION_FLOAT : MF_PRECISION_DOUBLE;
      int its_w = 0, its_s = 0, rank = 0;
      double nw = 0.0, ns = 0.0;
      MPI_Comm_rank(MPI_COMM_WORLD, &rank);
      elasticity_solve(MPI_COMM_WORLD, prec, &its_w, &nw);
      if (rank == 0) {
        elasticity_solve(MPI_COMM_SELF, prec, &its_s, &ns);
        T_CHECK(abs(its_w - its_s) <= 1 && fabs(nw - ns) <= (f ? 1e-7 : 1e-10) * ns,
                "elasticity on %d ranks, %s V-cycle: %d iterations, |u| = %.15g; on one rank %d, %.15g", size,
                f ? "float" : "double", its_w, nw, its_s, ns);
      }
    }
    mf_context_destroy(&ctx);
    return t_finish();
  }
  /* meshes: names, dimensions, levels, files */
  EXPECT(mf_mesh_create(ctx, "square-tris", 3, 1, &mesh), MF_ERR_ARGUMENT, "mesh 'square-tris' is 2D, dimension 3");
  EXPECT(mf_mesh_create(ctx, "cube-tets", 2, 1, &mesh), MF_ERR_ARGUMENT, "mesh 'cube-tets' is 3D, dimension 2");
  EXPECT(mf_mesh_create(ctx, "cube-tets", 3, 9, &mesh), MF_ERR_ARGUMENT, "refinement level 9 out of range 0..8");
  EXPECT(mf_mesh_create(ctx, "square-tris", 2, -1, &mesh), MF_ERR_ARGUMENT, "refinement level -1 out of range 0..12");
  EXPECT(mf_mesh_create(ctx, "tris", 2, 1, &mesh), MF_ERR_ARGUMENT, "(cube | ball | deformed | sheared | square-tris | cube-tets;");
  const int trees[3] = {2, 0, 2};
  EXPECT(mf_mesh_create_box(ctx, "square-tris", 2, trees, 1, &mesh), MF_ERR_ARGUMENT,
         "0 cells in direction 1 out of range 1..4096 for mesh 'square-tris'");
  EXPECT(mf_mesh_create_from_file(ctx, path(dir, "no_such_file.msh"), 2, &mesh), MF_ERR_IO, "no_such_file.msh");
  EXPECT(mf_mesh_create_from_file(ctx, path(dir, "bad_quad.msh"), 2, &mesh), MF_ERR_ARGUMENT, "bad_quad.msh:");
  EXPECT(mf_mesh_create_from_file(ctx, path(dir, "bad_truncated.msh"), 2, &mesh), MF_ERR_IO, "bad_truncated.msh:");
  EXPECT(mf_mesh_create_from_file(ctx, path(dir, "square22.msh"), 3, &mesh), MF_ERR_ARGUMENT, "square22.msh");
  EXPECT(mf_mesh_create_from_file(ctx, NULL, 2, &mesh), MF_ERR_NULL, "file name is NULL");
  EXPECT(mf_mesh_create_from_file(ctx, path(dir, "square22.msh"), 4, &mesh), MF_ERR_ARGUMENT, "dimension 4");
  T_CHECK(mesh == NULL, "no mesh on failure");
  /* cells that overlap where they meet, each valid alone: a cell given twice (any vertex order), or a
   * facet of three cells; named by their element ids and lines in the file */
  EXPECT(mf_mesh_create_from_file(ctx, path(dir, "bad_duplicate_triangle.msh"), 2, &mesh), MF_ERR_ARGUMENT,
         "bad_duplicate_triangle.msh:25: element 7 repeats element 5 (line 23): the same triangle (nodes 1 2 3) given twice");
  EXPECT(mf_mesh_create_from_file(ctx, path(dir, "bad_duplicate_tet.msh"), 3, &mesh), MF_ERR_ARGUMENT,
         "bad_duplicate_tet.msh:42: element 19 repeats element 15 (line 38): the same tetrahedron (nodes 1 3 4 8) given twice");
  EXPECT(mf_mesh_create_from_file(ctx, path(dir, "bad_overlap.msh"), 2, &mesh), MF_ERR_ARGUMENT,
         "bad_overlap.msh:26: the edge of nodes 1 3 is a facet of 3 cells, elements 5 (line 24), 6 (line 25), 7 (line 26)");
  EXPECT(mf_mesh_create_from_file(ctx, path(dir, "bad_overlap_tets.msh"), 3, &mesh), MF_ERR_ARGUMENT,
         "bad_overlap_tets.msh:43: the triangle of nodes 1 2 8 is a facet of 3 cells, elements 13 (line 37), 14 (line 38), 19 (line 43)");
  T_CHECK(mesh == NULL, "no mesh on failure");

  /* a second-order file: its edge nodes are not vertices (every DoF of P1 is a vertex of a cell) */
  T_CALL(mf_mesh_create_from_file(ctx, path(dir, "square22_order2.msh"), 2, &mesh));
  mf_space s = NULL;
  T_CALL(mf_space_create(mesh, 1, &s));
  int64_t nd;
  T_CALL(mf_space_num_dofs(s, &nd));
  const mf_simplex_mesh *sm = (const mf_simplex_mesh *)mesh->fdata;
  T_CHECK(nd == sm->nv && sm->nv == 4, "order-2 square: %lld P1 DoFs on %d vertices", (long long)nd, sm->nv);
  mf_space_destroy(&s);
  mf_mesh_destroy(&mesh);

  /* what needs the p4est forest */
  T_CALL(mf_mesh_create(ctx, "square-tris", 2, 2, &mesh));
  EXPECT(mf_mesh_adapt(mesh, refine_all, NULL), MF_ERR_UNSUPPORTED, "simplex meshes are not adapted");
  EXPECT(mf_mesh_refine_shells(mesh, 1), MF_ERR_UNSUPPORTED, "simplex meshes are not adapted");
  int64_t nc;
  T_CALL(mf_mesh_num_cells(mesh, &nc));
  T_CHECK(nc == 32, "square-tris level 2: %lld cells, expected 32", (long long)nc);
  EXPECT(mf_space_create(mesh, 7, &s), MF_ERR_ARGUMENT, "degree 7 out of range 1..6 on a simplex mesh");
  EXPECT(mf_space_create(mesh, 0, &s), MF_ERR_ARGUMENT, "degree 0 out of range");
  EXPECT(mf_space_create_components(mesh, 1, 5, &s), MF_ERR_ARGUMENT, "components per DoF 5 out of range 1..4");
  T_CALL(mf_space_create(mesh, 2, &s));
  mf_operator A = NULL, B = NULL;
  mf_pc pc = NULL;
  mf_vector v = NULL;
  T_CALL(mf_operator_create_laplace(s, MF_QUAD_GAUSS, NULL, NULL, &A));
  T_CALL(mf_pc_create(A, MF_PC_MULTIGRID, &pc)); /* multigrid on simplices, also in float (t41 checks it) */
  T_CALL(mf_pc_set_multigrid_precision(pc, MF_PRECISION_FLOAT));
  T_CALL(mf_pc_setup(pc));
  mf_pc_destroy(&pc);
  EXPECT(mf_operator_create_assembled_variant(A, MF_ASSEMBLY_TABLE, &B), MF_ERR_UNSUPPORTED,
         "assembled rowwise (MF_ASSEMBLY_AUTO or MF_ASSEMBLY_ROWWISE), not by the table variant");
  EXPECT(mf_operator_create_assembled_variant(A, MF_ASSEMBLY_SEARCH, &B), MF_ERR_UNSUPPORTED, "not by the search variant");
  EXPECT(mf_operator_set_geometry(A, MF_GEOMETRY_ON_THE_FLY), MF_ERR_UNSUPPORTED, "on simplices");
  EXPECT(mf_operator_set_cells_per_block(A, 0), MF_ERR_UNSUPPORTED, "on hexahedra only");
  EXPECT(mf_operator_set_kernel_design(A, MF_KERNEL_POINT), MF_ERR_UNSUPPORTED, "on hexahedra only");
  EXPECT(mf_operator_create_laplace(s, (mf_quadrature)7, NULL, NULL, &B), MF_ERR_ARGUMENT, "quadrature 7 unknown");
  EXPECT(mf_operator_create_helmholtz(s, MF_QUAD_GAUSS, 0.0, 0.0, NULL, NULL, &B), MF_ERR_ARGUMENT, "not both 0");
  EXPECT(mf_operator_create_elasticity(s, 1.0, 1.0, &B), MF_ERR_INCOMPATIBLE, "needs a space of 2 components");
  T_CALL(mf_pc_create(A, MF_PC_CHEBYSHEV, &pc)); /* Chebyshev needs the diagonal and the product only */
  T_CALL(mf_vector_create(s, &v));
  T_CALL(mf_vector_write_vtu(v, "t27_simplex", "u")); /* written (tests/vtu_check.py reads it back) */
  T_CHECK(!remove("t27_simplex.pvtu") && !remove("t27_simplex_0.vtu"), "the simplex VTU files are missing");
  mf_pc_destroy(&pc);
  mf_vector_destroy(&v);
  mf_operator_destroy(&A);
  mf_space_destroy(&s);
  T_CALL(mf_space_create_components(mesh, 1, 2, &s));
  EXPECT(mf_operator_create_mass(s, MF_QUAD_GAUSS, NULL, NULL, &A), MF_ERR_INCOMPATIBLE, "act on scalar spaces");
  T_CALL(mf_vector_create(s, &v));
  EXPECT(mf_vector_write_vtu(v, "t27_simplex2", "u"), MF_ERR_UNSUPPORTED, "VTU output of spaces of 2 components");
  mf_vector_destroy(&v);
  EXPECT(mf_operator_create_elasticity(s, 1.0, 0.0, &A), MF_ERR_ARGUMENT, "shear modulus mu = 0");
  EXPECT(mf_operator_create_elasticity(s, -1.0, 1.0, &A), MF_ERR_ARGUMENT, "lambda = -1");
  T_CALL(mf_operator_create_elasticity(s, 1.0, 1.0, &A));
  EXPECT(mf_operator_create_assembled(A, &B), MF_ERR_UNSUPPORTED, "simplex elasticity operators are not assembled");
  T_CHECK(B == NULL, "a refused assembly leaves its output NULL");
  mf_operator_destroy(&A);
  T_CALL(mf_vector_create(s, &v));
  EXPECT(mf_vector_assemble_rhs(v, NULL, NULL), MF_ERR_NULL, "function f is NULL");
  mf_vector_destroy(&v);
  mf_space_destroy(&s);

  /* the cuda backend runs degrees 1..4 (t28 on a GPU); above, the space is refused in one place
   * (mf_simplex_backend_check) before any device call: here with the context's backend and its table's
   * simplex degrees (those of lib/cuda/backend.c; no device entry) set by hand, as no GPU is needed to
   * reach the refusal */
  const mf_backend_ops *cpu_table = ctx->bk;
  const mf_simplex_backend_ops cuda_simplex = {.max_degree = MF_SIMPLEX_CUDA_MAX_DEGREE};
  mf_backend_ops cuda_table = *cpu_table;
  cuda_table.name = "cuda";
  cuda_table.kind = MF_BACKEND_CUDA;
  cuda_table.simplex = &cuda_simplex;
  ctx->backend = MF_BACKEND_CUDA;
  ctx->bk = &cuda_table;
  EXPECT(mf_space_create(mesh, 5, &s), MF_ERR_UNSUPPORTED,
         "simplex spaces of degree 5 on the cuda backend: its kernels (lib/cuda/simplex.cu) go up to degree 4 (use the "
         "cpu backend for degree 5..6)");
  EXPECT(mf_space_create_components(mesh, 6, 2, &s), MF_ERR_UNSUPPORTED, "simplex spaces of degree 6 on the cuda backend");
  ctx->backend = MF_BACKEND_CPU;
  ctx->bk = cpu_table;
  T_CALL(mf_space_create(mesh, 2, &s)); /* made on the cpu backend: no device state to reach */
  ctx->backend = MF_BACKEND_CUDA;
  ctx->bk = &cuda_table;
  EXPECT(mf_operator_create_laplace(s, MF_QUAD_GAUSS_P2, NULL, NULL, &A), MF_ERR_UNSUPPORTED,
         "simplex operators on the cuda backend use the rule of degree 2p = 4 (MF_QUAD_GAUSS or MF_QUAD_GLL), not 6");
  T_CHECK(A == NULL, "a refused operator was returned");
  ctx->backend = MF_BACKEND_CPU;
  ctx->bk = cpu_table;
  mf_space_destroy(&s);
  mf_mesh_destroy(&mesh);

  /* simplex-only calls on hex meshes and spaces */
  T_CALL(mf_mesh_create(ctx, "cube", 2, 1, &mesh));
  mf_cell_kind kind;
  T_CALL(mf_mesh_cell_kind(mesh, &kind));
  T_CHECK(kind == MF_CELL_HEX, "cube: cell kind %d", (int)kind);
  T_CALL(mf_space_create(mesh, 1, &s));
  const int tag = 1;
  const int bad_tag = 7; /* hex box meshes tag their faces 1..4 in 2D */
  EXPECT(mf_space_set_dirichlet_tags(s, 1, &bad_tag), MF_ERR_ARGUMENT, "boundary tag 7: box meshes tag their boundary 1..4");
  T_CALL(mf_space_set_dirichlet_tags(s, 1, &tag));
  EXPECT(mf_operator_create_elasticity(s, 1.0, 1.0, &A), MF_ERR_UNSUPPORTED, "simplex spaces only");
  EXPECT(mf_mesh_cell_kind(mesh, NULL), MF_ERR_NULL, "kind is NULL");
  mf_space_destroy(&s);
  mf_mesh_destroy(&mesh);
  mf_context_destroy(&ctx);
  return t_finish();
}
