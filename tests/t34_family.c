/* t34_family -- the cell-family table (lib/family.h):
 *   - every name of MF_MESH_NAMES is one family's, and a mesh made by that name holds that family,
 *     whose kind mf_mesh_cell_kind reports;
 *   - a family that lacks an entry makes the generic caller refuse with MF_ERR_UNSUPPORTED, naming the
 *     family and the capability: a mesh and a space made by the hex family are switched to a copy of
 *     it ("bare") without its optional entries, and every public function that needs one refuses
 *     (operators, multigrid on an operator made before the switch included);
 *   - one element-to-DoF map: cell_nodes holds the local DoFs of every cell, for both families.
 * argv[1]: backend (cpu). */
#include "mf_test.h"
#include "family.h"

static double one(const double *x, int dim, void *u)
{
  (void)x, (void)dim, (void)u;
  return 1.0;
}

static void grad_zero(const double *x, int dim, double *g, void *u)
{
  (void)x, (void)u;
  for (int k = 0; k < dim; k++) g[k] = 0.0;
}

static int keep_all(const double *x, int dim, int level, void *u)
{
  (void)x, (void)dim, (void)level, (void)u;
  return 0;
}

/* the names of MF_MESH_NAMES, each claimed by exactly one family, in the order the macro lists them */
static void registry(mf_context ctx, int size)
{
  const mf_family *fams[2] = {&mf_family_hex, &mf_family_simplex};
  char names[] = MF_MESH_NAMES;
  int count = 0;
  for (char *tok = strtok(names, " |"); tok; tok = strtok(NULL, " |")) {
    const mf_family *owner = NULL;
    int claims = 0;
    for (int f = 0; f < 2; f++)
      for (const char *const *n = fams[f]->mesh_names; *n; n++)
        if (!strcmp(*n, tok)) claims++, owner = fams[f];
    T_CHECK(claims == 1, "mesh name '%s' is claimed by %d families", tok, claims);
    count++;
    if (!owner || (owner == &mf_family_simplex && size > 1)) continue; /* simplex meshes: one rank */
    const int dim = !strcmp(tok, "square-tris") ? 2 : 3;
    mf_mesh mesh = NULL;
    T_CALL(mf_mesh_create(ctx, tok, dim, 0, &mesh));
    mf_cell_kind kind;
    T_CALL(mf_mesh_cell_kind(mesh, &kind));
    T_CHECK(mesh->fam == owner && kind == owner->kind, "mesh '%s': family %s, kind %d", tok, mesh->fam->name, (int)kind);
    mf_mesh_destroy(&mesh);
  }
  int listed = 0;
  for (int f = 0; f < 2; f++)
    for (const char *const *n = fams[f]->mesh_names; *n; n++) listed++;
  T_CHECK(count == listed, "MF_MESH_NAMES lists %d names, the families %d", count, listed);
}

/* A hex mesh and space switched to a family without the optional entries. */
static void bare_family(mf_context ctx)
{
  mf_family bare = mf_family_hex;
  bare.name = "bare";
  bare.mesh_coarsen = NULL;
  bare.mesh_adapt = NULL;
  bare.mesh_refine_shells = NULL;
  bare.components = 0;
  bare.space_dirichlet_tags = NULL;
  bare.rhs = NULL;
  bare.l2_error = NULL;
  bare.h1_error = NULL;
  bare.vtu_begin = NULL;
  bare.operator_create = NULL;
  bare.transfer_create = NULL;
  mf_mesh mesh = NULL, coarse = (mf_mesh)1;
  mf_operator A = NULL, B = (mf_operator)1;
  mf_pc pc = (mf_pc)1;
  mf_space s = NULL, s2 = (mf_space)1;
  mf_vector v = NULL;
  T_CALL(mf_mesh_create(ctx, "cube", 2, 2, &mesh));
  T_CALL(mf_space_create(mesh, 2, &s));
  T_CALL(mf_vector_create(s, &v));
  T_CALL(mf_operator_create_laplace(s, MF_QUAD_GAUSS, NULL, NULL, &A)); /* made by the hex family */
  mesh->fam = &bare;
  s->fam = &bare;
  EXPECT(mf_operator_create_laplace(s, MF_QUAD_GAUSS, NULL, NULL, &B), MF_ERR_UNSUPPORTED,
         "matrix-free operators: not on bare meshes");
  T_CHECK(B == NULL, "a refused operator leaves its output NULL");
  EXPECT(mf_pc_create(A, MF_PC_MULTIGRID, &pc), MF_ERR_UNSUPPORTED,
         "multigrid needs coarser copies of the mesh: not available on bare meshes");
  T_CHECK(pc == NULL, "a refused preconditioner leaves its output NULL");
  EXPECT(mf_mesh_coarsened(mesh, &coarse), MF_ERR_UNSUPPORTED, "a bare mesh has no coarser copy (multigrid)");
  T_CHECK(coarse == NULL, "a refused coarser copy leaves its output NULL");
  EXPECT(mf_mesh_adapt(mesh, keep_all, NULL), MF_ERR_UNSUPPORTED, "adaptation needs a p4est mesh: bare meshes are not adapted");
  EXPECT(mf_mesh_refine_shells(mesh, 1), MF_ERR_UNSUPPORTED, "bare meshes are not adapted");
  EXPECT(mf_space_create_components(mesh, 1, 2, &s2), MF_ERR_UNSUPPORTED, "several components: not on bare meshes");
  T_CHECK(s2 == NULL, "a refused space leaves its output NULL");
  EXPECT(mf_space_set_dirichlet_tags(s, 0, NULL), MF_ERR_UNSUPPORTED, "Dirichlet tags: not on bare meshes");
  EXPECT(mf_vector_assemble_rhs(v, one, NULL), MF_ERR_UNSUPPORTED, "right-hand sides of bare spaces: not supported");
  double err = -1.0;
  EXPECT(mf_vector_l2_error(v, one, NULL, &err), MF_ERR_UNSUPPORTED, "L2 errors of bare spaces: not supported");
  EXPECT(mf_vector_h1_error(v, grad_zero, NULL, &err), MF_ERR_UNSUPPORTED, "H1 errors of bare spaces: not supported");
  T_CHECK(err == -1.0, "a refused error measure wrote %g", err);
  EXPECT(mf_vector_write_vtu(v, "t34_bare", "u"), MF_ERR_UNSUPPORTED, "VTU output of bare spaces: not supported yet");
  /* what the bare family has still works: the vector functions at the DoF points, the mesh's queries */
  T_CALL(mf_vector_interpolate(v, one, NULL));
  double sum = 0.0;
  int64_t n = 0;
  T_CALL(mf_vector_sum(v, &sum));
  T_CALL(mf_space_num_dofs(s, &n));
  T_CHECK(sum == (double)n, "interpolated 1: sum %g over %lld DoFs", sum, (long long)n);
  mf_cell_kind kind;
  T_CALL(mf_mesh_cell_kind(mesh, &kind));
  T_CHECK(kind == MF_CELL_HEX, "the bare copy's kind: %d", (int)kind);
  /* and a family's refusals do not outlive the switch back */
  mesh->fam = &mf_family_hex;
  s->fam = &mf_family_hex;
  T_CALL(mf_vector_assemble_rhs(v, one, NULL));
  T_CALL(mf_vector_sum(v, &sum));
  T_CHECK(fabs(sum - 1.0) < 1e-12, "int 1 over the unit square: %.17g", sum);
  T_CALL(mf_pc_create(A, MF_PC_MULTIGRID, &pc));
  mf_pc_destroy(&pc);
  mf_operator_destroy(&A);
  mf_vector_destroy(&v);
  mf_space_destroy(&s);
  mf_mesh_destroy(&mesh);
}

/* cell_nodes: ncells x npc local DoF indices on every family; every local DoF in some cell */
static void cell_map(mf_space s, const char *what)
{
  const int nd = s->nlocal / s->ncomp;
  int bad = 0, *seen = calloc((size_t)nd + 1, sizeof *seen);
  for (size_t k = 0; k < (size_t)s->ncells * s->npc; k++) {
    const int d = s->cell_nodes[k];
    if (d < 0 || d >= nd) bad++;
    else seen[d] = 1;
  }
  int missing = 0;
  for (int d = 0; d < nd; d++) missing += !seen[d];
  free(seen);
  T_CHECK(s->cell_nodes && !bad && !missing, "%s: %d entries of cell_nodes out of 0..%d, %d DoFs in no cell", what, bad,
          nd - 1, missing);
}

static void maps(mf_context ctx, int size)
{
  mf_mesh mesh = NULL;
  mf_space s = NULL;
  T_CALL(mf_mesh_create(ctx, "ball", 3, 1, &mesh));
  T_CALL(mf_space_create(mesh, 2, &s));
  cell_map(s, "hex Q2 on the ball");
  mf_space_destroy(&s);
  mf_mesh_destroy(&mesh);
  if (size > 1) return;
  T_CALL(mf_mesh_create(ctx, "cube-tets", 3, 1, &mesh));
  T_CALL(mf_space_create_components(mesh, 3, 3, &s));
  cell_map(s, "simplex P3 of 3 components");
  mf_space_destroy(&s);
  mf_mesh_destroy(&mesh);
}

int main(int argc, char **argv)
{
  MPI_Init(&argc, &argv);
  const char *be = t_backend(argc, argv);
  int size;
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  mf_context ctx;
  T_CALL(mf_context_create(MPI_COMM_WORLD, be, &ctx));
  registry(ctx, size);
  bare_family(ctx);
  maps(ctx, size);
  mf_context_destroy(&ctx);
  return t_finish();
}
