/* simplex-assembly -- the assembled simplex operators (lib/simplex/assembly_simplex.c, on the GPU
 * lib/cuda/simplex_assembly.cu): the time of mf_operator_create_assembled for the Poisson operator
 * (Laplace, c = 1 or c(x) = 1 / (0.05 + 2|x|^2)) on the built-in meshes (square-tris, cube-tets) with
 * P_p, through the public interface, and the product of the matrix.
 *
 * first_s   the first assembly on the space: the host sparsity pattern (lib/assembled/assembly_pattern.c), the
 *           DoF-to-cell lists (host, then copied and kept with the space on cuda), the pattern's copy
 *           to the device, the values, the product's set-up;
 * values_s  the median of --reps later assemblies on the same space (pattern and lists kept): the
 *           values' allocation, the rowwise kernel, the product's set-up. dofs_per_s = ndofs / values_s.
 * Byte model of a later assembly (bytes_per_dof, the fewest bytes moved): the values written (8 B per
 * nonzero), the columns read (4 B per nonzero), rowptr and the lists' offsets (8 + 8 B per row), the
 * lists' entries (4 B per cell node; 8 where cells x N >= 2^31), the cells' vertex ids, the cell DoFs
 * and the vertex coordinates once; frac_of_triad against a STREAM triad measured in the same run.
 * apply: the assembled product (CG's operator), CUDA events, median of --reps.
 *
 * Usage: mfree-simplex-assembly [--dim 2|3] [--degree P] [--refine L] [--coefficient constant|variable]
 *                               [--backend cuda|cpu] [--reps R] [--csv FILE] */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <mpi.h>

#include "mfree.h"
#include "mf_testing.h"
#include "cuda/mf_cuda.h"

double mf_bench_triad(size_t n, int reps);
void mf_bench_device_name(char *name, int len);

static double coef_var(const double *x, int dim, void *u)
{
  (void)u;
  double r2 = 0.0;
  for (int k = 0; k < dim; k++) r2 += x[k] * x[k];
  return 1.0 / (0.05 + 2.0 * r2);
}

static int cmp_double(const void *a, const void *b)
{
  const double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

static double median(double *v, int n)
{
  qsort(v, (size_t)n, sizeof *v, cmp_double);
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

static int usage(const char *msg, const char *val)
{
  fprintf(stderr, "mfree-simplex-assembly: %s%s%s\n", msg, val ? ": " : "", val ? val : "");
  fprintf(stderr, "usage: mfree-simplex-assembly [--dim 2|3] [--degree P] [--refine L] [--coefficient constant|variable]\n"
                  "                              [--backend cuda|cpu] [--reps R] [--csv FILE]\n");
  return 2;
}

int main(int argc, char **argv)
{
  int dim = 3, p = 1, refine = 6, reps = 7, var = 0;
  const char *backend = "cuda", *csv = NULL;
  for (int i = 1; i < argc; i++) {
    const char *o = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
    if (!v) return usage("option without a value", o);
    char *end = NULL;
    if (!strcmp(o, "--dim")) dim = (int)strtol(v, &end, 10);
    else if (!strcmp(o, "--degree")) p = (int)strtol(v, &end, 10);
    else if (!strcmp(o, "--refine")) refine = (int)strtol(v, &end, 10);
    else if (!strcmp(o, "--reps")) reps = (int)strtol(v, &end, 10);
    else if (!strcmp(o, "--coefficient")) {
      if (strcmp(v, "constant") && strcmp(v, "variable")) return usage("--coefficient is constant or variable, not", v);
      var = !strcmp(v, "variable");
    } else if (!strcmp(o, "--backend")) backend = v;
    else if (!strcmp(o, "--csv")) csv = v;
    else return usage("unknown option", o);
    if (end && *end) return usage("not a number", v);
    i++;
  }
  if (dim != 2 && dim != 3) return usage("--dim is 2 or 3", NULL);
  if (reps < 1 || reps > 1000) return usage("--reps is 1..1000", NULL);
  MPI_Init(&argc, &argv);
  mf_context ctx = NULL;
  mf_mesh mesh = NULL;
  mf_space s = NULL;
  mf_operator A = NULL, B = NULL;
  mf_vector x = NULL, y = NULL;
  int ierr = mf_context_create(MPI_COMM_WORLD, backend, &ctx);
  const int cuda = !ierr && !strcmp(mf_context_backend(ctx), "cuda");
  if (!ierr) ierr = mf_mesh_create(ctx, dim == 2 ? "square-tris" : "cube-tets", dim, refine, &mesh);
  if (!ierr) ierr = mf_space_create(mesh, p, &s);
  if (!ierr) ierr = mf_operator_create_laplace(s, MF_QUAD_GAUSS, var ? coef_var : NULL, NULL, &A);
  if (!ierr) ierr = mf_operator_set_dirichlet(A, 1);
  double first = 0.0, *t = calloc((size_t)reps, sizeof(double)), *ta = calloc((size_t)reps, sizeof(double));
  if (!ierr) {
    const double t0 = MPI_Wtime();
    ierr = mf_operator_create_assembled(A, &B); /* returns with the values done (device synchronised) */
    first = MPI_Wtime() - t0;
  }
  for (int r = 0; r < reps && !ierr; r++) {
    mf_operator_destroy(&B);
    const double t0 = MPI_Wtime();
    ierr = mf_operator_create_assembled(A, &B);
    t[r] = MPI_Wtime() - t0;
  }
  if (!ierr) ierr = mf_vector_create(s, &x);
  if (!ierr) ierr = mf_vector_create(s, &y);
  if (!ierr) ierr = mf_vector_set_random(x, 7);
  if (!ierr) ierr = mf_operator_apply(B, x, y); /* warm-up */
  for (int r = 0; r < reps && !ierr; r++) {
    if (cuda) mf_cuda_synchronize(ctx);
    const double t0 = MPI_Wtime();
    for (int k = 0; k < 10 && !ierr; k++) ierr = mf_operator_apply(B, x, y);
    if (cuda) mf_cuda_synchronize(ctx);
    ta[r] = (MPI_Wtime() - t0) / 10;
  }
  if (ierr) {
    fprintf(stderr, "mfree-simplex-assembly: %s\n", mf_context_error_message(ctx));
  } else {
    int64_t ndofs = 0, nnz = 0, ncells = 0;
    mf_space_num_dofs(s, &ndofs);
    mf_operator_local_nnz(B, &nnz);
    mf_mesh_num_cells(mesh, &ncells);
    const int N = s->npc;
    const double nv = pow((1 << refine) + 1, dim), ent = (double)ncells * N >= 2147483648.0 ? 8.0 : 4.0;
    const double bytes = 12.0 * (double)nnz + 16.0 * (double)(ndofs + 1) + ent * (double)ncells * N +
                         4.0 * (double)ncells * (dim + 1) + 4.0 * (double)ncells * N + 8.0 * dim * nv;
    const double vs = median(t, reps), as = median(ta, reps);
    double triad = 0.0;
    char device[128] = "cpu";
    if (cuda) {
      mf_bench_device_name(device, sizeof device);
      triad = mf_bench_triad((size_t)1 << 28, 20);
    }
    const double gbs = bytes / vs / 1e9;
    printf("# device %s, triad %.1f GB/s\n", device, triad);
    printf("# %s P%d %s coefficient: %lld DoFs, %lld cells, %lld nonzeros; first assembly %.4f s, later %.4f s "
           "(%.4g DoF/s, %.4g nonzeros/s); bytes/DoF %.1f, %.1f GB/s (%.3f of triad); apply %.4g s (%.4g DoF/s)\n",
           dim == 2 ? "square-tris" : "cube-tets", p, var ? "variable" : "constant", (long long)ndofs, (long long)ncells,
           (long long)nnz, first, vs, ndofs / vs, nnz / vs, bytes / ndofs, gbs, triad > 0 ? gbs / triad : 0.0, as,
           ndofs / as);
    if (csv) {
      FILE *f = fopen(csv, "a");
      if (f) {
        fseek(f, 0, SEEK_END);
        if (ftell(f) == 0)
          fprintf(f, "device,mesh,dim,p,coefficient,ndofs,ncells,nnz,first_s,values_s,dofs_per_s,nnz_per_s,bytes_per_dof,"
                     "gb_per_s,frac_of_triad,apply_s,apply_dofs_per_s\n");
        fprintf(f, "%s,%s,%d,%d,%s,%lld,%lld,%lld,%.6f,%.6f,%.6g,%.6g,%.2f,%.2f,%.4f,%.6g,%.6g\n", device,
                dim == 2 ? "square-tris" : "cube-tets", dim, p, var ? "variable" : "constant", (long long)ndofs,
                (long long)ncells, (long long)nnz, first, vs, ndofs / vs, nnz / vs, bytes / ndofs, gbs,
                triad > 0 ? gbs / triad : 0.0, as, ndofs / as);
        fclose(f);
      }
    }
  }
  free(t);
  free(ta);
  mf_vector_destroy(&x);
  mf_vector_destroy(&y);
  mf_operator_destroy(&B);
  mf_operator_destroy(&A);
  mf_space_destroy(&s);
  mf_mesh_destroy(&mesh);
  mf_context_destroy(&ctx);
  MPI_Finalize();
  return ierr ? 1 : 0;
}
