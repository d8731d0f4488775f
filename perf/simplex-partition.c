/* simplex-partition -- the two partitions of simplex meshes (lib/simplex/partition_simplex.c) side by side:
 * coordinate bisection (rcb) and Scotch's graph partition (where built), for 2..16 parts, on the built-in
 * cube, a refined cube and a Gmsh file refined. Per case: the time to partition, the balance (largest part
 * over the mean), the cut (facets between two parts) and the ghost DoFs of P2 (over the DoFs, the parts that
 * hold one without owning it: what one ghost exchange moves per component); for the refined meshes also the
 * coarse mesh's partition inherited by the children (what mf_mesh_refine keeps). One process; prints CSV.
 *   simplex-partition [GMSH_FILE]                                                                       */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "simplex/mf_simplex_space.h"

static int cmp_ll(const void *a, const void *b)
{
  const long long x = *(const long long *)a, y = *(const long long *)b;
  return (x > y) - (x < y);
}

/* balance, cut facets and ghost DoFs of a partition (the DoFs d of m) */
static void measure(const mf_simplex_mesh *m, const mf_simplex_dofs *d, const int *part, int nparts, double *balance,
                    long long *cut, long long *ghosts)
{
  const int N = d->nnodes, nvc = m->dim + 1;
  int *cnt = calloc((size_t)nparts, sizeof(int)), mx = 0;
  for (int e = 0; e < m->ncells; e++) cnt[part[e]]++;
  for (int p = 0; p < nparts; p++) mx = cnt[p] > mx ? cnt[p] : mx;
  *balance = mx / ((double)m->ncells / nparts);
  free(cnt);
  const long long n = (long long)m->ncells * N;
  long long *pr = malloc(sizeof(long long) * (size_t)n), uniq = 0;
  for (int e = 0; e < m->ncells; e++)
    for (int i = 0; i < N; i++) pr[(size_t)e * N + i] = (long long)d->cell_dofs[(size_t)e * N + i] * nparts + part[e];
  qsort(pr, (size_t)n, sizeof *pr, cmp_ll);
  for (long long i = 0; i < n; i++) uniq += i == 0 || pr[i] != pr[i - 1];
  *ghosts = uniq - d->ndofs;
  free(pr);
  const long long nf = (long long)m->ncells * nvc;
  mf_simplex_facet_key *f = malloc(sizeof *f * (size_t)nf); /* id: the cell's part */
  for (int e = 0; e < m->ncells; e++)
    for (int k = 0; k < nvc; k++) {
      int v[3], j = 0;
      for (int a = 0; a < nvc; a++)
        if (a != k) v[j++] = m->cells[(size_t)e * nvc + a];
      mf_simplex_facet_key_make(v, j, part[e], &f[(size_t)e * nvc + k]);
    }
  qsort(f, (size_t)nf, sizeof *f, mf_simplex_facet_cmp);
  *cut = 0;
  for (long long i = 0; i + 1 < nf; i++)
    if (!mf_simplex_facet_cmp(&f[i], &f[i + 1]) && f[i].id != f[i + 1].id) (*cut)++;
  free(f);
}

/* coarse: the mesh m refines `levels` times (NULL: none): then also its partition inherited by the children,
 * as mf_mesh_refine keeps it (rows rcb-coarse, scotch-coarse) */
static int run(mf_context ctx, const char *name, const mf_simplex_mesh *m, const mf_simplex_mesh *coarse, int levels)
{
  mf_simplex_basis b;
  mf_simplex_dofs d;
  if (mf_simplex_basis_setup(ctx, m->dim, 2, 4, &b) || mf_simplex_dofs_create(ctx, m, &b, &d)) return 1;
  int *part = malloc(sizeof(int) * ((size_t)m->ncells + 1)), status = 0;
  int *cpart = coarse ? malloc(sizeof(int) * ((size_t)coarse->ncells + 1)) : NULL;
  for (int nparts = 2; nparts <= 16; nparts *= 2)
    for (int method = MF_SIMPLEX_PARTITION_RCB; method <= MF_SIMPLEX_PARTITION_SCOTCH + 2; method++) {
      const int inherit = method > MF_SIMPLEX_PARTITION_SCOTCH, how = inherit ? method - 2 : method;
      if (inherit && !coarse) break;
      const double t0 = MPI_Wtime();
      int e = inherit ? mf_simplex_mesh_partition(ctx, coarse, nparts, how, cpart)
                      : mf_simplex_mesh_partition(ctx, m, nparts, how, part);
      if (!e && inherit)
        for (int c = 0; c < m->ncells; c++) part[c] = cpart[c >> (3 * levels)]; /* child k of e: 8 e + k */
      if (e) {
        if (how == MF_SIMPLEX_PARTITION_SCOTCH) continue; /* built without Scotch */
        status = 1;
        break;
      }
      const double t = MPI_Wtime() - t0;
      double balance;
      long long cut, ghosts;
      measure(m, &d, part, nparts, &balance, &cut, &ghosts);
      printf("%s,%d,%d,%s%s,%.4f,%.3f,%lld,%lld,%d\n", name, m->ncells, nparts,
             how == MF_SIMPLEX_PARTITION_RCB ? "rcb" : "scotch", inherit ? "-coarse" : "", t, balance, cut, ghosts,
             d.ndofs);
      fflush(stdout);
    }
  free(part);
  free(cpart);
  mf_simplex_dofs_free(&d);
  mf_simplex_basis_free(&b);
  return status;
}

int main(int argc, char **argv)
{
  MPI_Init(&argc, &argv);
  mf_context ctx = NULL;
  int status = mf_context_create(MPI_COMM_SELF, "cpu", &ctx);
  printf("mesh,cells,parts,method,seconds,balance,cut_facets,ghost_dofs_p2,dofs_p2\n");
  mf_mesh box = NULL, fine = NULL;
  if (!status) status = mf_mesh_create(ctx, "cube-tets", 3, 5, &box);
  if (!status) status = run(ctx, "cube-tets-5", (const mf_simplex_mesh *)box->fdata, NULL, 0);
  mf_mesh_destroy(&box);
  if (!status) status = mf_mesh_create(ctx, "cube-tets", 3, 1, &box);
  if (!status) status = mf_mesh_refine(box, 4, &fine);
  if (!status) status = run(ctx, "cube-tets-1-refined-4", (const mf_simplex_mesh *)fine->fdata,
                             (const mf_simplex_mesh *)box->fdata, 4);
  mf_mesh_destroy(&fine);
  mf_mesh_destroy(&box);
  if (!status && argc > 1) {
    status = mf_mesh_create_from_file(ctx, argv[1], 0, &box);
    if (!status) status = mf_mesh_refine(box, 3, &fine);
    if (!status) status = run(ctx, "gmsh-refined-3", (const mf_simplex_mesh *)fine->fdata, (const mf_simplex_mesh *)box->fdata, 3);
    mf_mesh_destroy(&fine);
    mf_mesh_destroy(&box);
  }
  if (status) fprintf(stderr, "simplex-partition: %s\n", mf_last_error_message());
  mf_context_destroy(&ctx);
  MPI_Finalize();
  return status ? 1 : 0;
}
