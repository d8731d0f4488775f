/* t33_inputs.c -- inputs a hostile new user tries, which the library refuses with the right code and a
 * message that says what is wrong (docs/testing.md, "Hostile inputs"):
 *   - a folder, a named pipe (no hang: CTest's time limit would fail it) and /dev/null as a .msh file;
 *   - callbacks that return NaN or infinity: the right-hand side, boundary values, interpolation and the
 *     exact solution of the L2 error, on hex and simplex spaces, naming the point (checked: the point
 *     named is one where the callback is not finite) on every rank, also where the bad points are on
 *     one rank only;
 *   - a vector, preconditioner or right-hand side of another space object of the same size;
 *   - the mesh names, the same complete list in every message; operator and preconditioner kinds in
 *     words, not numbers.
 *   t33_inputs BACKEND GMSHDIR     (on several ranks: the hex cases; the simplex ones need one rank) */
#include <errno.h>
#include <sys/stat.h>
#include <unistd.h>

#include "mf_test.h"

/* NaN (*user 0) or +inf (*user 1) in the corner where every coordinate is above 0.7, 1 elsewhere: on two
 * ranks the corner's cells and DoFs are rank 1's alone (the cube's space-filling curve gives rank 0
 * the cells of y < 1/2 in 2D, z < 1/2 in 3D), so rank 0 learns of the refusal from rank 1 */
static int in_corner(const double *x, int dim)
{
  int in = 1;
  for (int k = 0; k < dim; k++) in = in && x[k] > 0.7;
  return in;
}
static double bad_fn(const double *x, int dim, void *u)
{
  return in_corner(x, dim) ? (*(const int *)u ? INFINITY : NAN) : 1.0;
}

static double one_fn(const double *x, int dim, void *u)
{
  (void)x, (void)dim, (void)u;
  return 1.0;
}

static int copy_apply(mf_vector x, mf_vector y, void *user)
{
  (void)user;
  return mf_vector_copy(y, x);
}

static char path_buf[4096];
static const char *path(const char *dir, const char *file)
{
  snprintf(path_buf, sizeof path_buf, "%s/%s", dir, file);
  return path_buf;
}

/* The last message names a point "x = (a, b[, c])" where bad_fn is not finite: the point it names is
 * one of the bad ones, not just any. */
static void names_bad_point(const char *what, int dim)
{
  const char *m = mf_last_error_message(), *at = strstr(m, "x = (");
  double x[3] = {0.0, 0.0, 0.0};
  T_CHECK(at && sscanf(at, "x = (%lf, %lf, %lf", &x[0], &x[1], &x[2]) == dim, "%s: no point in '%s'", what, m);
  T_CHECK(in_corner(x, dim), "%s: the point named, (%g, %g, %g), is not one where the function is not finite: '%s'",
          what, x[0], x[1], x[2], m);
}

/* The four callbacks of vectors on space V, each refused with its role named, NaN and infinity. */
static void callbacks(mf_space V, int dim, const char *what)
{
  mf_vector v;
  double err = 0.0;
  T_CALL(mf_vector_create(V, &v));
  for (int inf = 0; inf < 2; inf++) {
    const char *val = inf ? "inf" : "nan";
    char want[96];
    snprintf(want, sizeof want, "right-hand side f = %s at quadrature point", val);
    EXPECT(mf_vector_assemble_rhs(v, bad_fn, &inf), MF_ERR_ARGUMENT, want);
    T_CHECK(strstr(mf_last_error_message(), "f must be finite"), "%s rhs: '%s'", what, mf_last_error_message());
    names_bad_point(what, dim);
    snprintf(want, sizeof want, "boundary value g = %s at the point of DoF", val);
    EXPECT(mf_vector_set_boundary(v, bad_fn, &inf), MF_ERR_ARGUMENT, want);
    names_bad_point(what, dim);
    snprintf(want, sizeof want, "function f = %s at the point of DoF", val);
    EXPECT(mf_vector_interpolate(v, bad_fn, &inf), MF_ERR_ARGUMENT, want);
    names_bad_point(what, dim);
    T_CALL(mf_vector_interpolate(v, one_fn, NULL));
    snprintf(want, sizeof want, "exact solution u = %s at quadrature point", val);
    EXPECT(mf_vector_l2_error(v, bad_fn, &inf, &err), MF_ERR_ARGUMENT, want);
    names_bad_point(what, dim);
  }
  /* the same functions where they are finite: accepted (the refusals come from the values alone) */
  int zero = 0;
  T_CALL(mf_vector_interpolate(v, one_fn, NULL));
  T_CALL(mf_vector_set_boundary(v, one_fn, &zero));
  T_CALL(mf_vector_assemble_rhs(v, one_fn, NULL));
  T_CALL(mf_vector_l2_error(v, one_fn, NULL, &err));
  mf_vector_destroy(&v);
}

/* Two spaces made alike from one mesh are two spaces: every mismatch says so, not "125 DoFs, operator
 * has 125". */
static void same_size(mf_mesh mesh)
{
  mf_space V, W;
  mf_operator A, S;
  mf_vector x, y, w, w2;
  mf_pc pc;
  mf_cg cg;
  T_CALL(mf_space_create(mesh, 2, &V));
  T_CALL(mf_space_create(mesh, 2, &W));
  int64_t n;
  T_CALL(mf_space_num_dofs(V, &n));
  char want[160];
  snprintf(want, sizeof want, "another space object of the same size (%lld DoFs)", (long long)n);
  T_CALL(mf_operator_create_laplace(V, MF_QUAD_GAUSS, NULL, NULL, &A));
  T_CALL(mf_operator_set_dirichlet(A, 1));
  T_CALL(mf_vector_create(V, &x));
  T_CALL(mf_vector_create(V, &y));
  T_CALL(mf_vector_create(W, &w));
  T_CALL(mf_vector_create(W, &w2));
  EXPECT(mf_operator_apply(A, w, y), MF_ERR_INCOMPATIBLE, want);
  EXPECT(mf_operator_apply(A, x, w), MF_ERR_INCOMPATIBLE, want);
  T_CHECK(strstr(mf_last_error_message(), "output vector y"), "apply: '%s'", mf_last_error_message());
  EXPECT(mf_operator_diagonal(A, w), MF_ERR_INCOMPATIBLE, want);
  snprintf(want, sizeof want, "x is of another space object of the same size (%lld DoFs)", (long long)n);
  EXPECT(mf_vector_axpy(y, 1.0, w), MF_ERR_INCOMPATIBLE, want);
  snprintf(want, sizeof want, "src is of another space object of the same size (%lld DoFs)", (long long)n);
  EXPECT(mf_vector_copy(w, x), MF_ERR_INCOMPATIBLE, want);
  snprintf(want, sizeof want, "another space object of the same size (%lld DoFs)", (long long)n);
  T_CALL(mf_cg_create(A, &cg));
  EXPECT(mf_cg_solve(cg, w, x, NULL), MF_ERR_INCOMPATIBLE, want);
  T_CHECK(strstr(mf_last_error_message(), "right-hand side b"), "cg: '%s'", mf_last_error_message());
  EXPECT(mf_cg_solve(cg, x, w, NULL), MF_ERR_INCOMPATIBLE, want);
  T_CHECK(strstr(mf_last_error_message(), "solution x"), "cg: '%s'", mf_last_error_message());
  T_CALL(mf_operator_create_shell(W, copy_apply, NULL, NULL, &S));
  T_CALL(mf_pc_create(A, MF_PC_JACOBI, &pc));
  EXPECT(mf_pc_apply(pc, w, w2), MF_ERR_INCOMPATIBLE, want);
  mf_pc_destroy(&pc);
  T_CALL(mf_pc_create(S, MF_PC_NONE, &pc));
  EXPECT(mf_cg_set_pc(cg, pc), MF_ERR_INCOMPATIBLE, want);
  T_CHECK(strstr(mf_last_error_message(), "preconditioner of another space"), "cg: '%s'", mf_last_error_message());
  /* kinds in words: a shell operator, a Jacobi preconditioner */
  mf_cell_kind cells;
  T_CALL(mf_mesh_cell_kind(mesh, &cells));
  mf_pc mg = NULL;
  if (cells == MF_CELL_HEX) /* simplex meshes refuse multigrid before the operator's kind */
    EXPECT(mf_pc_create(S, MF_PC_MULTIGRID, &mg), MF_ERR_UNSUPPORTED, "not a shell operator");
  double lambda;
  EXPECT(mf_pc_eigenvalue(pc, &lambda), MF_ERR_ARGUMENT, "estimates eigenvalues, not none (MF_PC_NONE)");
  mf_pc_destroy(&pc);
  T_CALL(mf_pc_create(A, MF_PC_JACOBI, &pc));
  EXPECT(mf_pc_set_chebyshev(pc, 4, 20.0, 12), MF_ERR_ARGUMENT, "preconditioner Jacobi (MF_PC_JACOBI) is not MF_PC_CHEBYSHEV");
  mf_pc_destroy(&pc);
  mf_cg_destroy(&cg);
  mf_operator_destroy(&S);
  mf_operator_destroy(&A);
  mf_vector_destroy(&w2);
  mf_vector_destroy(&w);
  mf_vector_destroy(&y);
  mf_vector_destroy(&x);
  mf_space_destroy(&W);
  mf_space_destroy(&V);
}

/* What is not a regular .msh file: named before it is read (a folder's size is LONG_MAX, a named pipe
 * blocks its open); /dev/null reads as an empty file. */
static void not_files(mf_context ctx)
{
  mf_mesh mesh = NULL;
  /* names of this process's own: the test runs on several ranks, and several runs of it at once */
  char folder[64], fifo[64], want[128];
  snprintf(folder, sizeof folder, "t33_folder_%ld.msh", (long)getpid());
  snprintf(fifo, sizeof fifo, "t33_fifo_%ld.msh", (long)getpid());
  T_CHECK(mkdir(folder, 0755) == 0 || errno == EEXIST, "cannot make %s", folder);
  snprintf(want, sizeof want, "%s:0: is a directory, not a .msh file", folder);
  EXPECT(mf_mesh_create_from_file(ctx, folder, 2, &mesh), MF_ERR_IO, want);
  rmdir(folder);
  unlink(fifo);
  T_CHECK(mkfifo(fifo, 0644) == 0, "cannot make the named pipe %s", fifo);
  snprintf(want, sizeof want, "%s:0: is a named pipe (FIFO), not a regular file", fifo);
  EXPECT(mf_mesh_create_from_file(ctx, fifo, 3, &mesh), MF_ERR_IO, want);
  unlink(fifo);
  EXPECT(mf_mesh_create_from_file(ctx, "/dev/null", 2, &mesh), MF_ERR_IO, "/dev/null:1: no $MeshFormat section: not a .msh file");
  T_CHECK(mesh == NULL, "a refused file left a mesh");
}

int main(int argc, char **argv)
{
  MPI_Init(&argc, &argv);
  const char *be = t_backend(argc, argv);
  const char *dir = argc > 2 ? argv[2] : ".";
  int size;
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  mf_context ctx;
  T_CALL(mf_context_create(MPI_COMM_WORLD, be, &ctx));
  mf_mesh mesh = NULL;

  /* mesh names: the same complete list wherever a name is refused */
  EXPECT(mf_mesh_create(ctx, "torus", 3, 1, &mesh), MF_ERR_ARGUMENT, "unknown mesh 'torus' (" MF_MESH_NAMES ";");
  EXPECT(mf_mesh_create(ctx, NULL, 3, 1, &mesh), MF_ERR_NULL, "mesh name is NULL (" MF_MESH_NAMES ")");
  T_CHECK(!strcmp(MF_MESH_NAMES, "cube | ball | deformed | sheared | square-tris | cube-tets"), "MF_MESH_NAMES: %s", MF_MESH_NAMES);

  /* hex spaces: every callback, 2D and 3D (on several ranks the point is on some ranks only: all fail) */
  for (int dim = 2; dim <= 3; dim++) {
    T_CALL(mf_mesh_create(ctx, "cube", dim, dim == 2 ? 2 : 1, &mesh));
    mf_space V;
    T_CALL(mf_space_create(mesh, 2, &V));
    callbacks(V, dim, dim == 2 ? "hex 2D" : "hex 3D");
    mf_space_destroy(&V);
    if (dim == 2) same_size(mesh);
    mf_mesh_destroy(&mesh);
  }
  if (size == 1) { /* simplex meshes live on one rank */
    for (int dim = 2; dim <= 3; dim++) {
      T_CALL(mf_mesh_create(ctx, dim == 2 ? "square-tris" : "cube-tets", dim, 1, &mesh));
      mf_space V;
      T_CALL(mf_space_create(mesh, 2, &V));
      callbacks(V, dim, dim == 2 ? "simplex 2D" : "simplex 3D");
      mf_space_destroy(&V);
      if (dim == 3) same_size(mesh);
      mf_mesh_destroy(&mesh);
    }
    not_files(ctx);
    /* a file the reader takes, made by the same mesh call: the refusals above are of the input alone */
    T_CALL(mf_mesh_create_from_file(ctx, path(dir, "square22.msh"), 2, &mesh));
    mf_mesh_destroy(&mesh);
  }
  mf_context_destroy(&ctx);
  return t_finish();
}
