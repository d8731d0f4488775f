/* t21_gmsh.c -- the Gmsh .msh reader (lib/simplex/gmsh.c): valid ASCII 2.2 and 4.1 triangle and
 * tetrahedron meshes (counts, coordinates, total area/volume 1, physical tags and names) and one
 * broken file per refusal (code and "file:line: problem" message).
 *   t21_gmsh DIR            the files in DIR (tests/gmsh)
 *   t21_gmsh DIR gmsh BUILD   run `gmsh` on DIR/*.geo into BUILD and read the results (77 without gmsh) */
#include <mpi.h>
#include <stdlib.h>

#include "mf_test.h"
#include "mf_testing.h"
#include "simplex/mf_gmsh.h"

static char path_buf[4096];
static const char *path(const char *dir, const char *file)
{
  snprintf(path_buf, sizeof path_buf, "%s/%s", dir, file);
  return path_buf;
}

/* sum of |det J| / d! over the cells */
static double measure(const mf_gmsh_mesh *m)
{
  double sum = 0;
  int d = m->dim;
  for (long c = 0; c < m->n_cells; c++) {
    const double *v[4];
    double e[3][3];
    for (int i = 0; i <= d; i++) v[i] = m->x + 3 * m->cells[c * (d + 1) + i];
    for (int i = 0; i < d; i++)
      for (int k = 0; k < 3; k++) e[i][k] = v[i + 1][k] - v[0][k];
    double det = d == 2 ? e[0][0] * e[1][1] - e[1][0] * e[0][1]
                        : e[0][0] * (e[1][1] * e[2][2] - e[1][2] * e[2][1]) -
                              e[0][1] * (e[1][0] * e[2][2] - e[1][2] * e[2][0]) +
                              e[0][2] * (e[1][0] * e[2][1] - e[1][1] * e[2][0]);
    T_CHECK(det > 0, "cell %ld not positively oriented (det %g)", c, det);
    sum += fabs(det) / (d == 2 ? 2.0 : 6.0);
  }
  return sum;
}

static const char *name_of(const mf_gmsh_mesh *m, int dim, int tag)
{
  for (int i = 0; i < m->n_names; i++)
    if (m->names[i].dim == dim && m->names[i].tag == tag) return m->names[i].name;
  return "";
}

static void check_square(mf_context ctx, const char *dir, const char *file, int sparse)
{
  mf_gmsh_mesh m;
  T_CALL(mf_gmsh_read(ctx, path(dir, file), 2, &m));
  T_CHECK(m.dim == 2 && m.n_nodes == 4 && m.n_cells == 2 && m.n_facets == 4, "%s: dim %d, %ld nodes, %ld cells, %ld facets",
          file, m.dim, m.n_nodes, m.n_cells, m.n_facets);
  const double want[4][3] = {{0, 0, 0}, {1, 0, 0}, {1, 1, 0}, {0, 1, 0}};
  for (long i = 0; i < m.n_nodes && i < 4; i++)
    for (int k = 0; k < 3; k++) T_CHECK(m.x[3 * i + k] == want[i][k], "%s: node %ld coordinate %d = %g", file, i, k, m.x[3 * i + k]);
  if (m.n_nodes == 4) T_CHECK(m.node_id[3] == (sparse ? 5 : 4), "%s: file id of node 3 is %ld", file, m.node_id[3]);
  for (long i = 0; i < 3 * m.n_cells; i++) T_CHECK(m.cells[i] >= 0 && m.cells[i] < m.n_nodes, "%s: cell node %ld", file, m.cells[i]);
  T_CHECK(fabs(measure(&m) - 1) < 1e-14, "%s: area %.17g", file, measure(&m));
  for (long c = 0; c < m.n_cells; c++) T_CHECK(m.cell_tag[c] == 3, "%s: cell %ld tag %d", file, c, m.cell_tag[c]);
  /* the right side x = 1 is "outlet" (2), the others "walls" (1) */
  for (long f = 0; f < m.n_facets; f++) {
    const double *a = m.x + 3 * m.facets[2 * f], *b = m.x + 3 * m.facets[2 * f + 1];
    int right = a[0] == 1 && b[0] == 1;
    T_CHECK(m.facet_tag[f] == (right ? 2 : 1), "%s: facet %ld tag %d", file, f, m.facet_tag[f]);
  }
  T_CHECK(m.n_names == 3, "%s: %d names", file, m.n_names);
  T_CHECK(!strcmp(name_of(&m, 1, 1), "walls") && !strcmp(name_of(&m, 1, 2), "outlet") && !strcmp(name_of(&m, 2, 3), "domain"),
          "%s: names", file);
  mf_gmsh_free(&m);
  T_CHECK(m.x == NULL && m.n_nodes == 0, "mf_gmsh_free zeroes");
}

/* the bytes of a file (NULL if unreadable), their count in *n */
static char *slurp_file(const char *file, long *n)
{
  FILE *f = fopen(file, "rb");
  if (!f) return NULL;
  fseek(f, 0, SEEK_END);
  *n = ftell(f);
  fseek(f, 0, SEEK_SET);
  char *b = malloc((size_t)*n + 1);
  if (b && fread(b, 1, (size_t)*n, f) != (size_t)*n) {
    free(b);
    b = NULL;
  }
  fclose(f);
  return b;
}

/* second order: the cells and facets keep their vertices; the edge nodes stay in the node list */
static void check_order2(mf_context ctx, const char *dir)
{
  mf_gmsh_mesh m;
  T_CALL(mf_gmsh_read(ctx, path(dir, "square22_order2.msh"), 2, &m));
  T_CHECK(m.n_nodes == 9 && m.n_cells == 2 && m.n_facets == 4, "order 2: %ld nodes, %ld cells, %ld facets", m.n_nodes,
          m.n_cells, m.n_facets);
  for (long i = 0; i < 3 * m.n_cells; i++) T_CHECK(m.cells[i] >= 0 && m.cells[i] < 4, "order 2: cell node %ld", m.cells[i]);
  for (long i = 0; i < 2 * m.n_facets; i++) T_CHECK(m.facets[i] >= 0 && m.facets[i] < 4, "order 2: facet node %ld", m.facets[i]);
  T_CHECK(fabs(measure(&m) - 1) < 1e-14, "order 2: area %.17g", measure(&m));
  T_CHECK(m.n_facets == 4 && m.facet_tag[1] == 2 && m.facet_tag[0] == 1, "order 2: facet tags");
  mf_gmsh_free(&m);
}

static void check_cube(mf_context ctx, const char *dir, const char *file)
{
  mf_gmsh_mesh m;
  T_CALL(mf_gmsh_read(ctx, path(dir, file), 3, &m));
  T_CHECK(m.dim == 3 && m.n_nodes == 8 && m.n_cells == 6 && m.n_facets == 12, "%s: dim %d, %ld nodes, %ld cells, %ld facets",
          file, m.dim, m.n_nodes, m.n_cells, m.n_facets);
  for (long i = 0; i < m.n_nodes; i++) {
    double w[3] = {(double)(i & 1), (double)((i >> 1) & 1), (double)((i >> 2) & 1)};
    for (int k = 0; k < 3; k++) T_CHECK(m.x[3 * i + k] == w[k], "%s: node %ld coordinate %d = %g", file, i, k, m.x[3 * i + k]);
  }
  T_CHECK(fabs(measure(&m) - 1) < 1e-14, "%s: volume %.17g", file, measure(&m));
  for (long c = 0; c < m.n_cells; c++) T_CHECK(m.cell_tag[c] == 4, "%s: cell %ld tag %d", file, c, m.cell_tag[c]);
  int count[4] = {0, 0, 0, 0};
  for (long f = 0; f < m.n_facets; f++) {
    int t = m.facet_tag[f], left = 1, right = 1;
    for (int i = 0; i < 3; i++) {
      double x = m.x[3 * m.facets[3 * f + i]];
      left &= x == 0;
      right &= x == 1;
    }
    T_CHECK(t == (left ? 1 : right ? 2 : 3), "%s: facet %ld tag %d", file, f, t);
    if (t >= 0 && t < 4) count[t]++;
  }
  T_CHECK(count[1] == 2 && count[2] == 2 && count[3] == 8, "%s: facets per tag %d %d %d", file, count[1], count[2], count[3]);
  T_CHECK(m.n_names == 4 && !strcmp(name_of(&m, 2, 1), "left") && !strcmp(name_of(&m, 3, 4), "cube"), "%s: names", file);
  mf_gmsh_free(&m);
}

static void check_refusals(mf_context ctx, const char *dir)
{
  mf_gmsh_mesh m;
  const struct {
    const char *file;
    int dim, code;
    const char *msg1, *msg2;
  } bad[] = {
      {"missing.msh", 2, MF_ERR_IO, "missing.msh:0:", "cannot open"},
      {"bad_truncated.msh", 2, MF_ERR_IO, "bad_truncated.msh:25:", "missing $EndElements"},
      {"bad_short_count.msh", 2, MF_ERR_IO, "bad_short_count.msh:25:", "fewer entries than announced"},
      {"bad_wrong_count.msh", 2, MF_ERR_IO, "bad_wrong_count.msh:15:", "expected $EndNodes"},
      {"bad_quad.msh", 2, MF_ERR_ARGUMENT, "bad_quad.msh:24:", "type 3 (4-node quadrangle), not a simplex"},
      {"bad_unknown_type.msh", 2, MF_ERR_ARGUMENT, "bad_unknown_type.msh:24:", "unknown type 99"},
      {"bad_undefined_node.msh", 2, MF_ERR_ARGUMENT, "bad_undefined_node.msh:23:", "references node 9, which is not defined"},
      {"bad_node_id_zero.msh", 2, MF_ERR_ARGUMENT, "bad_node_id_zero.msh:12:", "node id 0 out of range"},
      {"bad_duplicate_node.msh", 2, MF_ERR_ARGUMENT, "bad_duplicate_node.msh:15:", "duplicate node id 3 (also on line 14)"},
      {"bad_inverted.msh", 2, MF_ERR_ARGUMENT, "bad_inverted.msh:23:", "inverted triangle"},
      {"bad_degenerate.msh", 2, MF_ERR_ARGUMENT, "bad_degenerate.msh:24:", "degenerate triangle"},
      {"bad_z_nonzero.msh", 2, MF_ERR_ARGUMENT, "bad_z_nonzero.msh:14:", "z = 0.5, not 0: a 3D file read as 2D"},
      {"bad_tet_in_2d.msh", 2, MF_ERR_ARGUMENT, "bad_tet_in_2d.msh:25:", "(4-node tetrahedron): a 3D file read as 2D"},
      {"cube22.msh", 2, MF_ERR_ARGUMENT, "cube22.msh:17:", "z = 1, not 0: a 3D file read as 2D"},
      {"square22.msh", 3, MF_ERR_ARGUMENT, "square22.msh:25:", "no tetrahedra in the file: a 2D file read as 3D"},
      {"square41.msh", 3, MF_ERR_ARGUMENT, "square41.msh:50:", "no tetrahedra in the file: a 2D file read as 3D"},
      {"bad_non_numeric.msh", 2, MF_ERR_IO, "bad_non_numeric.msh:13:", "non-numeric token 'abc'"},
      {"bad_huge_count.msh", 2, MF_ERR_IO, "bad_huge_count.msh:11:", "number of nodes 1000000000000 is more than"},
      {"bad_binary.msh", 2, MF_ERR_IO, "bad_binary.msh:2:", "the binary byte-order check reads"},
      /* second-order elements are read where straight (square22_order2.msh), refused where curved */
      {"bad_curved.msh", 2, MF_ERR_ARGUMENT, "bad_curved.msh:26:", "element 3 (3-node line) is curved: its node 7 lies 0.1 from every edge's midpoint"},
      {"bad_curved_cell.msh", 2, MF_ERR_ARGUMENT, "bad_curved_cell.msh:28:", "element 5 (6-node triangle) is curved: its node 9 lies 0.05 from"},
      {"bad_unterminated_section.msh", 2, MF_ERR_IO, "bad_unterminated_section.msh:28:", "$Periodic (line 17) has no $EndPeriodic"},
      /* hostile inputs (docs/testing.md): a number beyond the doubles is out of range, not "non-numeric";
       * a negative count says so; coordinates whose differences overflow are not a "degenerate" cell */
      {"bad_out_of_range.msh", 2, MF_ERR_IO, "bad_out_of_range.msh:14:", "number 1e400 out of range (beyond 1.79769e+308, the largest double)"},
      {"bad_negative_count.msh", 2, MF_ERR_IO, "bad_negative_count.msh:11:", "the number of nodes is negative (-4)"},
      {"bad_overflow.msh", 2, MF_ERR_ARGUMENT, "bad_overflow.msh:23:", "the coordinates of this triangle overflow: its edge lengths or |det J| are not finite"},
  };
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    memset(&m, 0x5a, sizeof m); /* the reader zeroes it first */
    EXPECT(mf_gmsh_read(ctx, path(dir, bad[i].file), bad[i].dim, &m), bad[i].code, bad[i].msg1);
    EXPECT(mf_gmsh_read(ctx, path(dir, bad[i].file), bad[i].dim, &m), bad[i].code, bad[i].msg2);
    T_CHECK(m.x == NULL && m.cells == NULL && m.names == NULL && m.n_cells == 0, "%s: output not cleared", bad[i].file);
  }
  /* arguments and buffers */
  EXPECT(mf_gmsh_read(ctx, path(dir, "square22.msh"), 1, &m), MF_ERR_ARGUMENT, "dim 1");
  EXPECT(mf_gmsh_read(ctx, NULL, 2, &m), MF_ERR_NULL, "path is NULL");
  EXPECT(mf_gmsh_read(ctx, path(dir, "square22.msh"), 2, NULL), MF_ERR_NULL, "out is NULL");
  EXPECT(mf_gmsh_read_buffer(ctx, "", 0, "empty", 2, &m), MF_ERR_IO, "empty:1: no $MeshFormat");
  EXPECT(mf_gmsh_read_buffer(ctx, "$Nodes\n", 7, "b", 2, &m), MF_ERR_IO, "b:1: the file does not start with $MeshFormat");
  EXPECT(mf_gmsh_read_buffer(ctx, "$MeshFormat\n3.0 0 8\n$EndMeshFormat\n", 35, "v", 2, &m), MF_ERR_IO, "v:2: format version 3");
  /* a failed allocation anywhere leaks nothing and leaves the output empty */
  for (long n = 1; n < 40; n++) {
    mf_test_fail_host_alloc(n);
    int ierr = mf_gmsh_read(ctx, path(dir, n % 2 ? "cube41.msh" : "square22.msh"), n % 2 ? 3 : 2, &m);
    mf_test_fail_host_alloc(0);
    T_CHECK(ierr == 0 || ierr == MF_ERR_MEMORY, "allocation failure %ld: code %d (%s)", n, ierr, mf_last_error_message());
    if (ierr) T_CHECK(m.x == NULL && m.cells == NULL, "allocation failure %ld: output not cleared", n);
    mf_gmsh_free(&m);
  }
}

/* gmsh generates the meshes from the .geo files (where installed) */
static int check_gmsh(mf_context ctx, const char *dir, const char *build)
{
  if (system("gmsh --version > /dev/null 2>&1") != 0) return 77;
  const char *geo[2] = {"square.geo", "cube.geo"};
  const char *fmt[2] = {"msh22", "msh41"};
  for (int g = 0; g < 2; g++)
    for (int f = 0; f < 2; f++) {
      char cmd[8192], out[4096];
      snprintf(out, sizeof out, "%s/t21_%s_%s.msh", build, g ? "cube" : "square", fmt[f]);
      snprintf(cmd, sizeof cmd, "gmsh -%d -format %s -o '%s' '%s/%s' > /dev/null 2>&1", g + 2, fmt[f], out, dir, geo[g]);
      T_CHECK(system(cmd) == 0, "%s failed", cmd);
      mf_gmsh_mesh m;
      int ierr = mf_gmsh_read(ctx, out, g + 2, &m);
      T_CHECK(ierr == 0, "%s: %s", out, mf_last_error_message());
      if (ierr) continue;
      T_CHECK(m.n_nodes > 0 && m.n_cells > 0 && m.n_facets > 0 && m.n_names > 0, "%s: %ld nodes %ld cells %ld facets %d names",
              out, m.n_nodes, m.n_cells, m.n_facets, m.n_names);
      T_CHECK(fabs(measure(&m) - 1) < 1e-12, "%s: measure %.17g", out, measure(&m));
      for (long i = 0; i < m.n_facets; i++) T_CHECK(m.facet_tag[i] > 0, "%s: facet %ld without physical tag", out, i);
      mf_gmsh_free(&m);
    }
  return 0;
}

int main(int argc, char **argv)
{
  MPI_Init(&argc, &argv);
  if (argc < 2) {
    fprintf(stderr, "usage: t21_gmsh DIR [gmsh BUILD]\n");
    MPI_Finalize();
    return 2;
  }
  mf_context ctx;
  T_CALL(mf_context_create(MPI_COMM_WORLD, "cpu", &ctx));
  if (argc > 3 && !strcmp(argv[2], "gmsh")) {
    int r = check_gmsh(ctx, argv[1], argv[3]);
    if (r == 77) {
      fprintf(stderr, "SKIP: gmsh not on PATH\n");
      mf_context_destroy(&ctx);
      MPI_Finalize();
      return 77;
    }
  } else {
    check_square(ctx, argv[1], "square22.msh", 0);
    check_square(ctx, argv[1], "square41.msh", 1);
    check_order2(ctx, argv[1]);
    check_cube(ctx, argv[1], "cube22.msh");
    check_cube(ctx, argv[1], "cube41.msh");
    { /* dim 0: the file's dimension, 2 for the squares, 3 for the cubes (the same mesh as read with it) */
      const char *files[4] = {"square22.msh", "square41.msh", "cube22.msh", "cube41.msh"};
      for (int i = 0; i < 4; i++) {
        mf_gmsh_mesh a, b;
        T_CALL(mf_gmsh_read(ctx, path(argv[1], files[i]), 0, &a));
        T_CALL(mf_gmsh_read(ctx, path(argv[1], files[i]), i < 2 ? 2 : 3, &b));
        T_CHECK(a.dim == (i < 2 ? 2 : 3) && a.n_cells == b.n_cells && a.n_facets == b.n_facets &&
                    !memcmp(a.cells, b.cells, sizeof(long) * (size_t)a.n_cells * (a.dim + 1)),
                "%s read with dim 0: dim %d, %ld cells (with its dim: %ld)", files[i], a.dim, a.n_cells, b.n_cells);
        mf_gmsh_free(&a);
        mf_gmsh_free(&b);
      }
      mf_gmsh_mesh m;
      EXPECT(mf_gmsh_read(ctx, path(argv[1], "square22.msh"), 1, &m), MF_ERR_ARGUMENT, "dim 1 (2, 3, or 0: the file's)");
      EXPECT(mf_gmsh_read(ctx, path(argv[1], "bad_quad.msh"), 0, &m), MF_ERR_ARGUMENT, "not a simplex");
    }
    { /* binary 4.1 (tests/gmsh/ascii41_to_binary.py): the same mesh as the ASCII file; a cut file refused */
      const char *files[2][2] = {{"square41.msh", "square41_bin.msh"}, {"cube41.msh", "cube41_bin.msh"}};
      for (int i = 0; i < 2; i++) {
        mf_gmsh_mesh a, b;
        T_CALL(mf_gmsh_read(ctx, path(argv[1], files[i][0]), 2 + i, &a));
        T_CALL(mf_gmsh_read(ctx, path(argv[1], files[i][1]), 0, &b));
        T_CHECK(b.dim == 2 + i && a.n_nodes == b.n_nodes && a.n_cells == b.n_cells && a.n_facets == b.n_facets &&
                    a.n_names == b.n_names && !memcmp(a.x, b.x, sizeof(double) * 3 * (size_t)a.n_nodes) &&
                    !memcmp(a.cells, b.cells, sizeof(long) * (size_t)a.n_cells * (a.dim + 1)) &&
                    !memcmp(a.facets, b.facets, sizeof(long) * (size_t)a.n_facets * a.dim) &&
                    !memcmp(a.facet_tag, b.facet_tag, sizeof(int) * (size_t)a.n_facets) &&
                    !memcmp(a.cell_tag, b.cell_tag, sizeof(int) * (size_t)a.n_cells),
                "%s and %s are not the same mesh", files[i][0], files[i][1]);
        mf_gmsh_free(&a);
        mf_gmsh_free(&b);
        long n = 0;
        char *bytes = slurp_file(path(argv[1], files[i][1]), &n);
        T_CHECK(bytes != NULL, "cannot read %s", files[i][1]);
        if (bytes) {
          mf_gmsh_mesh m;
          EXPECT(mf_gmsh_read_buffer(ctx, bytes, (size_t)(n - 100), "cut.msh", 0, &m), MF_ERR_IO, "truncated");
          free(bytes);
        }
      }
    }
    check_refusals(ctx, argv[1]);
  }
  mf_context_destroy(&ctx);
  return t_finish();
}
