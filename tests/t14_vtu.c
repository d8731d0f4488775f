/* t14_vtu.c -- ParaView output (mf_vector_write_vtu).
 *   t14_vtu BACKEND write-simplex PREFIX DIM DEGREE
 *       interpolates a polynomial of total degree DEGREE (exact in P_p) on the built-in triangles or
 *       tetrahedra and writes it (one rank); prints the cell count
 *   t14_vtu BACKEND write PREFIX DIM DEGREE ADAPT
 *       interpolates t_poly (per-variable degree <= DEGREE: exact in Q_p on the cube's affine cells)
 *       on the unit square/cube, refined near a point ADAPT times (hanging nodes), writes PREFIX.pvtu
 *       and prints "cells N" (over all ranks); tests/vtu_check.py reads the files back with VTK.
 *   t14_vtu BACKEND [errors [TAG]]
 *       bad arguments, unwritable files (every rank returns the error, none hangs), and a 2D and a 3D
 *       write whose files exist afterwards, the vector unchanged; on the cuda backend, pieces equal
 *       to the cpu backend's byte for byte. Files are named TAG_* in the working folder.           */
#include <sys/stat.h>
#include <unistd.h>

#include "mf_test.h"

/* 0.5 + x^p - 2 x y^p + 3 y^(p-1) z^p + x^p y^p z^p: asymmetric in x, y, z, so a wrong node order or a
 * wrong orientation changes the values VTK interpolates; the same formula is in tests/vtu_check.py. */
static double t_poly(const double *x, int dim, void *user)
{
  const int p = *(const int *)user;
  const double X = x[0], Y = x[1], Z = dim == 3 ? x[2] : 0.0;
  return 0.5 + pow(X, p) - 2.0 * X * pow(Y, p) + 3.0 * pow(Y, p - 1) * pow(Z, p) + pow(X * Y * Z, p);
}

static void write_case(mf_context ctx, const char *prefix, int dim, int degree, int adapt, int print)
{
  mf_mesh mesh;
  mf_space V;
  mf_vector u;
  t_mesh(ctx, "cube", dim, 2, adapt, &mesh);
  T_CALL(mf_space_create(mesh, degree, &V));
  T_CALL(mf_vector_create(V, &u));
  T_CALL(mf_vector_interpolate(u, t_poly, &degree));
  T_CALL(mf_vector_write_vtu(u, prefix, "f"));
  int64_t ncells;
  T_CALL(mf_mesh_num_cells(mesh, &ncells));
  int rank;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  if (!rank && print) printf("cells %lld\n", (long long)ncells);
  mf_vector_destroy(&u);
  mf_space_destroy(&V);
  mf_mesh_destroy(&mesh);
}

/* a polynomial of total degree p: exact in P_p */
static double t_spoly(const double *x, int dim, void *user)
{
  const int p = *(const int *)user;
  const double X = x[0], Y = x[1], Z = dim == 3 ? x[2] : 0.0;
  return 0.5 + pow(0.3 + X + 2.0 * Y - Z, p) - 2.0 * pow(X - Y + 0.5 * Z, p);
}

/* the interpolant of t_spoly on the built-in triangles (level 2) or tetrahedra (level 1), written */
static void write_simplex_case(mf_context ctx, const char *prefix, int dim, int degree)
{
  mf_mesh mesh;
  mf_space V;
  mf_vector u;
  T_CALL(mf_mesh_create(ctx, dim == 2 ? "square-tris" : "cube-tets", dim, dim == 2 ? 2 : 1, &mesh));
  T_CALL(mf_space_create(mesh, degree, &V));
  T_CALL(mf_vector_create(V, &u));
  T_CALL(mf_vector_interpolate(u, t_spoly, &degree));
  T_CALL(mf_vector_write_vtu(u, prefix, "f"));
  int64_t ncells;
  T_CALL(mf_mesh_num_cells(mesh, &ncells));
  printf("cells %lld\n", (long long)ncells);
  mf_vector_destroy(&u);
  mf_space_destroy(&V);
  mf_mesh_destroy(&mesh);
}

/* The bytes of a file (NULL if unreadable), its length in *n. */
static char *slurp(const char *path, long *n)
{
  FILE *f = fopen(path, "rb");
  if (!f) return NULL;
  fseek(f, 0, SEEK_END);
  *n = ftell(f);
  fseek(f, 0, SEEK_SET);
  char *buf = malloc(*n + 1);
  if (buf && fread(buf, 1, *n, f) != (size_t)*n) free(buf), buf = NULL;
  fclose(f);
  return buf;
}

/* A vector of another backend gives the same pieces, byte for byte, as on the cpu backend: the host
 * copy and its ghosts are the same values, the geometry is the host's on either backend. */
static void same_as_cpu(mf_context ctx, const char *tag)
{
  char cpu_prefix[256], be_prefix[256], path[300];
  mf_context cpu;
  int rank;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  T_CALL(mf_context_create(MPI_COMM_WORLD, "cpu", &cpu));
  snprintf(cpu_prefix, sizeof cpu_prefix, "%s_cpu", tag);
  snprintf(be_prefix, sizeof be_prefix, "%s_%s", tag, mf_context_backend(ctx));
  write_case(cpu, cpu_prefix, 3, 3, 1, 0);
  write_case(ctx, be_prefix, 3, 3, 1, 0);
  long na = 0, nb = 0;
  snprintf(path, sizeof path, "%s_%d.vtu", cpu_prefix, rank);
  char *a = slurp(path, &na);
  remove(path);
  snprintf(path, sizeof path, "%s_%d.vtu", be_prefix, rank);
  char *b = slurp(path, &nb);
  remove(path);
  T_CHECK(a && b && na == nb && !memcmp(a, b, na), "%s differs from the cpu backend's piece (%ld and %ld bytes)", path,
          nb, na);
  free(a);
  free(b);
  MPI_Barrier(MPI_COMM_WORLD);
  if (!rank) {
    snprintf(path, sizeof path, "%s.pvtu", cpu_prefix);
    remove(path);
    snprintf(path, sizeof path, "%s.pvtu", be_prefix);
    remove(path);
  }
  mf_context_destroy(&cpu);
}

static int exists(const char *path)
{
  struct stat sb;
  return stat(path, &sb) == 0;
}

static void errors(mf_context ctx, const char *tag)
{
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  mf_mesh mesh;
  mf_space V;
  mf_vector u;
  int degree = 2;
  T_CALL(mf_mesh_create(ctx, "cube", 2, 2, &mesh));
  T_CALL(mf_space_create(mesh, degree, &V));
  T_CALL(mf_vector_create(V, &u));
  T_CALL(mf_vector_interpolate(u, t_poly, &degree));
  char prefix[256], path[300];

  /* bad arguments */
  EXPECT(mf_vector_write_vtu(NULL, "x", "u"), MF_ERR_NULL, "vector is NULL");
  EXPECT(mf_vector_write_vtu(u, NULL, "u"), MF_ERR_NULL, "file prefix is NULL");
  EXPECT(mf_vector_write_vtu(u, "", "u"), MF_ERR_ARGUMENT, "file prefix ''");
  EXPECT(mf_vector_write_vtu(u, "out/", "u"), MF_ERR_ARGUMENT, "file prefix 'out/' names no file");
  EXPECT(mf_vector_write_vtu(u, "x", NULL), MF_ERR_NULL, "field name is NULL");
  EXPECT(mf_vector_write_vtu(u, "x", ""), MF_ERR_ARGUMENT, "field name ''");
  EXPECT(mf_vector_write_vtu(u, "x", "a\"b"), MF_ERR_ARGUMENT, "field name 'a\"b'");
  EXPECT(mf_vector_write_vtu(u, "dir/a<b", "u"), MF_ERR_ARGUMENT, "file prefix 'dir/a<b'");

  /* a folder that does not exist: every rank fails, naming rank 0's piece ("rank 0: " first on
   * several ranks) */
  snprintf(prefix, sizeof prefix, "%s_no_such_folder/sol", tag);
  EXPECT(mf_vector_write_vtu(u, prefix, "u"), MF_ERR_IO, "cannot write '");
  snprintf(path, sizeof path, "%scannot write '%s_0.vtu': No such file or directory", size > 1 ? "rank 0: " : "", prefix);
  T_CHECK(strstr(mf_last_error_message(), path), "message '%s' lacks %s", mf_last_error_message(), path);

  /* the last rank's piece cannot be opened (a folder holds its name): all return the error naming that
   * piece and its rank; the pieces the other ranks wrote are removed again; no .pvtu */
  snprintf(prefix, sizeof prefix, "%s_piece", tag);
  snprintf(path, sizeof path, "%s.pvtu", prefix);
  if (rank == 0) remove(path); /* left by an earlier failed run */
  snprintf(path, sizeof path, "%s_%d.vtu", prefix, size - 1);
  if (rank == size - 1) T_CHECK(mkdir(path, 0755) == 0 || exists(path), "cannot make the folder %s", path);
  MPI_Barrier(MPI_COMM_WORLD);
  EXPECT(mf_vector_write_vtu(u, prefix, "u"), MF_ERR_IO, path);
  char want[400];
  if (size > 1) snprintf(want, sizeof want, "rank %d: cannot write '%s': Is a directory", size - 1, path);
  else snprintf(want, sizeof want, "cannot write '%s': Is a directory", path);
  T_CHECK(strstr(mf_last_error_message(), want), "message '%s' lacks %s", mf_last_error_message(), want);
  snprintf(path, sizeof path, "%s.pvtu", prefix);
  T_CHECK(!exists(path), "%s written although a piece failed", path);
  MPI_Barrier(MPI_COMM_WORLD);
  snprintf(path, sizeof path, "%s_%d.vtu", prefix, rank);
  if (rank == size - 1) T_CHECK(exists(path) && rmdir(path) == 0, "the folder %s was removed", path);
  else T_CHECK(!exists(path), "%s left behind although the piece of rank %d failed", path, size - 1);

  /* prefixes that differ by rank (a folder each, say), the last rank's in a folder that does not exist:
   * every rank reports that rank's own path, not rank 0's prefix with that rank's number */
  if (rank == size - 1) snprintf(prefix, sizeof prefix, "%s_missing_folder/sol", tag);
  else snprintf(prefix, sizeof prefix, "%s_own%d", tag, rank);
  EXPECT(mf_vector_write_vtu(u, prefix, "u"), MF_ERR_IO, "_missing_folder/sol_");
  if (size > 1)
    snprintf(want, sizeof want, "rank %d: cannot write '%s_missing_folder/sol_%d.vtu': No such file", size - 1, tag,
             size - 1);
  else snprintf(want, sizeof want, "cannot write '%s_missing_folder/sol_0.vtu': No such file", tag);
  T_CHECK(strstr(mf_last_error_message(), want), "message '%s' lacks %s", mf_last_error_message(), want);
  snprintf(path, sizeof path, "%s_%d.vtu", prefix, rank);
  T_CHECK(!exists(path), "%s left behind although the piece of rank %d failed", path, size - 1);

  /* the .pvtu cannot be written: every rank learns it, and removes its piece */
  snprintf(prefix, sizeof prefix, "%s_master", tag);
  snprintf(path, sizeof path, "%s.pvtu", prefix);
  if (rank == 0) T_CHECK(mkdir(path, 0755) == 0 || exists(path), "cannot make the folder %s", path);
  MPI_Barrier(MPI_COMM_WORLD);
  EXPECT(mf_vector_write_vtu(u, prefix, "u"), MF_ERR_IO, "cannot write '");
  T_CHECK(strstr(mf_last_error_message(), path), "message '%s' lacks %s", mf_last_error_message(), path);
  MPI_Barrier(MPI_COMM_WORLD);
  if (rank == 0) T_CHECK(exists(path) && rmdir(path) == 0, "the folder %s was removed", path);
  snprintf(path, sizeof path, "%s_%d.vtu", prefix, rank);
  T_CHECK(!exists(path), "%s left behind although the .pvtu failed", path);

  /* written: the vector is unchanged, the files are there (their contents: tests/vtu_check.py) */
  int nowned, nlocal;
  T_CALL(mf_space_local_sizes(V, &nowned, &nlocal));
  double *before = malloc(sizeof(double) * (nowned + 1)), *after = malloc(sizeof(double) * (nowned + 1));
  T_CALL(mf_vector_get_values(u, before));
  for (int dim = 2; dim <= 3; dim++) {
    snprintf(prefix, sizeof prefix, "%s_ok%dd", tag, dim);
    if (dim == 2) T_CALL(mf_vector_write_vtu(u, prefix, "u"));
    else write_case(ctx, prefix, 3, 3, 1, 0);
    MPI_Barrier(MPI_COMM_WORLD);
    snprintf(path, sizeof path, "%s_%d.vtu", prefix, rank);
    T_CHECK(exists(path) && !remove(path), "%s missing", path);
    MPI_Barrier(MPI_COMM_WORLD);
    snprintf(path, sizeof path, "%s.pvtu", prefix);
    if (!rank) T_CHECK(exists(path) && !remove(path), "%s missing", path);
  }
  T_CALL(mf_vector_get_values(u, after));
  T_CHECK(!memcmp(before, after, sizeof(double) * nowned), "mf_vector_write_vtu changed the vector");
  free(before);
  free(after);
  mf_vector_destroy(&u);
  mf_space_destroy(&V);
  mf_mesh_destroy(&mesh);
  if (strcmp(mf_context_backend(ctx), "cpu")) same_as_cpu(ctx, tag);
}

int main(int argc, char **argv)
{
  MPI_Init(&argc, &argv);
  const char *be = t_backend(argc, argv);
  mf_context ctx;
  T_CALL(mf_context_create(MPI_COMM_WORLD, be, &ctx));
  const char *mode = argc > 2 ? argv[2] : "errors";
  if (!strcmp(mode, "write") && argc > 6) write_case(ctx, argv[3], atoi(argv[4]), atoi(argv[5]), atoi(argv[6]), 1);
  else if (!strcmp(mode, "write-simplex") && argc > 5) write_simplex_case(ctx, argv[3], atoi(argv[4]), atoi(argv[5]));
  else if (!strcmp(mode, "errors")) errors(ctx, argc > 3 ? argv[3] : "t14");
  else
    T_CHECK(0, "usage: t14_vtu BACKEND write PREFIX DIM DEGREE ADAPT | t14_vtu BACKEND write-simplex PREFIX DIM DEGREE | "
               "t14_vtu BACKEND [errors [TAG]]");
  mf_context_destroy(&ctx);
  return t_finish();
}
