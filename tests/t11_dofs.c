/* t11_dofs -- the DoF numbering of uniform forests on one rank (lib/hex/dofs.c) against p4est_lnodes, on
 * the unit square/cube in 1 and several trees, the ball (its trees meet at rotated faces, edges of 3
 * to 5 trees, and a split coarse mesh) and the deformed cube, dim 2 and 3, p = 1..4 (and 8 in 2D):
 * the same number of DoFs, a bijection between the two numberings that maps every cell's node list
 * onto the other's, the same boundary marks and the same node coordinates under it. The two orders
 * are even identical (both number by first cell and node index), checked too. An adapted mesh takes
 * p4est_lnodes (no fast path), as does MFREE_DOFS=lnodes. */
#include "mf_test.h"
#include "mf_testing.h"

static void compare(mf_context ctx, const char *name, int dim, const int trees[3], int level, int p)
{
  mf_mesh mesh;
  mf_space fast, ref;
  T_CALL(mf_mesh_create_box(ctx, name, dim, trees, level, &mesh));
  unsetenv("MFREE_DOFS");
  T_CALL(mf_space_create(mesh, p, &fast));
  setenv("MFREE_DOFS", "lnodes", 1);
  T_CALL(mf_space_create(mesh, p, &ref));
  unsetenv("MFREE_DOFS");
  const char *what = name;
  T_CHECK(fast->numbering == 1 && ref->numbering == 0, "%s dim %d p %d: numberings %d and %d (expected lib/hex/dofs.c and "
          "p4est_lnodes)", what, dim, p, fast->numbering, ref->numbering);
  T_CHECK(fast->nglobal == ref->nglobal && fast->nlocal == ref->nlocal && fast->ncells == ref->ncells,
          "%s dim %d trees %d level %d p %d: %lld DoFs, p4est_lnodes %lld", what, dim, trees[0], level, p,
          (long long)fast->nglobal, (long long)ref->nglobal);
  if (fast->nlocal != ref->nlocal || fast->ncells != ref->ncells) goto done;
  const int n = fast->nlocal;
  int *map = malloc(sizeof(int) * (size_t)n), *inv = malloc(sizeof(int) * (size_t)n), bad = 0, identical = 1;
  for (int i = 0; i < n; i++) map[i] = inv[i] = -1;
  for (size_t k = 0; k < (size_t)fast->ncells * fast->npc; k++) {
    const int a = fast->cell_nodes[k], b = ref->cell_nodes[k];
    if (a < 0 || a >= n || b < 0 || b >= n) {
      bad++;
      continue;
    }
    if (map[a] < 0 && inv[b] < 0) map[a] = b, inv[b] = a;
    else if (map[a] != b || inv[b] != a) bad++;
    identical &= a == b;
  }
  T_CHECK(bad == 0, "%s dim %d p %d: %d node entries break the bijection with p4est_lnodes", what, dim, p, bad);
  int nbc = 0;
  double dx = 0.0;
  for (int i = 0; i < n && !bad; i++) {
    if (map[i] < 0) {
      bad++;
      continue;
    }
    nbc += fast->bc[i] != ref->bc[map[i]];
    for (int d = 0; d < dim; d++) dx = fmax(dx, fabs(fast->coords[(size_t)i * dim + d] - ref->coords[(size_t)map[i] * dim + d]));
  }
  T_CHECK(bad == 0, "%s dim %d p %d: %d DoFs no cell refers to", what, dim, p, bad);
  T_CHECK(nbc == 0, "%s dim %d p %d: %d boundary marks differ", what, dim, p, nbc);
  T_CHECK(dx <= 1e-14, "%s dim %d p %d: node coordinates differ by %.3e", what, dim, p, dx);
  T_CHECK(identical, "%s dim %d p %d: the numbering is a permutation of p4est_lnodes', not the same order", what,
          dim, p);
  free(map);
  free(inv);
done:
  mf_space_destroy(&fast);
  mf_space_destroy(&ref);
  mf_mesh_destroy(&mesh);
}

int main(int argc, char **argv)
{
  MPI_Init(&argc, &argv);
  mf_context ctx;
  T_CALL(mf_context_create(MPI_COMM_SELF, "cpu", &ctx));
  const int one[3] = {1, 1, 1}, box[3] = {2, 3, 2}, two[3] = {2, 2, 2};
  for (int dim = 2; dim <= 3; dim++)
    for (int p = 1; p <= (dim == 2 ? 8 : 4); p++) {
      compare(ctx, "cube", dim, one, dim == 2 ? 3 : 2, p);
      compare(ctx, "deformed", dim, box, dim == 2 ? 2 : 1, p);
      compare(ctx, "ball", dim, one, dim == 2 ? 2 : 1, p);
      compare(ctx, "ball", dim, two, 1, p);
    }
  /* an adapted mesh, and the environment switch, take p4est_lnodes: same results either way */
  {
    mf_mesh mesh;
    mf_space s;
    T_CALL(mf_mesh_create(ctx, "ball", 3, 1, &mesh));
    T_CALL(mf_mesh_adapt(mesh, t_refine_ball, NULL));
    T_CALL(mf_space_create(mesh, 2, &s));
    T_CHECK(s->nmasked > 0 && s->numbering == 0, "the adapted ball has hanging nodes and takes p4est_lnodes");
    mf_space_destroy(&s);
    mf_mesh_destroy(&mesh);
  }
  mf_context_destroy(&ctx);
  return t_finish();
}
