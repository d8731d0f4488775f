/* simplex-setup-time -- host wall time of the simplex set-up steps on the built-in box meshes: the
 * mesh (mf_simplex_mesh_box, which includes its boundary), the boundary facets alone again
 * (mf_simplex_mesh_boundary), the DoFs (mf_simplex_dofs_create), and the whole space through the
 * public calls (mf_mesh_create "cube-tets"/"square-tris" and mf_space_create on the cpu backend,
 * split into the library's set-up phases).
 *
 *   simplex-setup-time [--dim 2|3] [--n N] [--degree p] [--reps r]
 *
 * Each step is run r times (default 3); printed: the fastest wall time of each (box_mesh_s,
 * boundary_s, numbering_s: mf_simplex_dofs_create; mesh_and_space_s and its phases phase_*_s), with
 * the cells, facets, DoFs and OpenMP threads, one CSV line after a header. --n must be a power of two for the space step
 * (mf_mesh_create's refinement levels); other n time the steps on mf_simplex_mesh_box alone. */
#include "simplex/mf_simplex.h"

#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CALL(x)                                                                                                        \
  do {                                                                                                                 \
    if (x) {                                                                                                           \
      fprintf(stderr, "simplex-setup-time: %s failed: %s\n", #x, mf_last_error_message());                            \
      MPI_Abort(MPI_COMM_WORLD, 1);                                                                                    \
    }                                                                                                                  \
  } while (0)

int main(int argc, char **argv)
{
  int dim = 3, n = 64, p = 2, reps = 3;
  for (int i = 1; i + 1 < argc; i += 2) {
    if (!strcmp(argv[i], "--dim")) dim = atoi(argv[i + 1]);
    else if (!strcmp(argv[i], "--n")) n = atoi(argv[i + 1]);
    else if (!strcmp(argv[i], "--degree")) p = atoi(argv[i + 1]);
    else if (!strcmp(argv[i], "--reps")) reps = atoi(argv[i + 1]);
    else {
      fprintf(stderr, "usage: simplex-setup-time [--dim 2|3] [--n N] [--degree p] [--reps r]\n");
      return 2;
    }
  }
  if (reps < 1) reps = 1;
  MPI_Init(&argc, &argv);
  mf_context ctx;
  CALL(mf_context_create(MPI_COMM_WORLD, "cpu", &ctx));
  mf_simplex_basis b;
  CALL(mf_simplex_basis_setup(ctx, dim, p, -1, &b));
  double best[4] = {1e30, 1e30, 1e30, 1e30}, phases[MF_PHASE_COUNT] = {0};
  int ncells = 0, ndofs = 0, nfacets = 0;
  int level = 0;
  while ((1 << level) < n) level++;
  const int pow2 = (1 << level) == n;
  for (int r = 0; r < reps; r++) {
    mf_simplex_mesh m;
    mf_simplex_dofs d;
    double t0 = MPI_Wtime();
    CALL(mf_simplex_mesh_box(ctx, dim, n, &m));
    double t1 = MPI_Wtime();
    int *facets = m.facets, *tags = m.facet_tag, nf = m.nfacets;
    m.facets = NULL, m.facet_tag = NULL, m.nfacets = 0;
    CALL(mf_simplex_mesh_boundary(ctx, &m));
    double t2 = MPI_Wtime();
    if (nf != m.nfacets || memcmp(facets, m.facets, sizeof(int) * (size_t)nf * dim)) {
      fprintf(stderr, "simplex-setup-time: the boundary made twice differs\n");
      MPI_Abort(MPI_COMM_WORLD, 1);
    }
    free(facets);
    free(tags);
    CALL(mf_simplex_dofs_create(ctx, &m, &b, &d));
    double t3 = MPI_Wtime();
    ncells = m.ncells, ndofs = d.ndofs, nfacets = m.nfacets;
    mf_simplex_dofs_free(&d);
    mf_simplex_mesh_free(&m);
    double step[3] = {t1 - t0, t2 - t1, t3 - t2};
    for (int k = 0; k < 3; k++)
      if (step[k] < best[k]) best[k] = step[k];
    if (pow2) {
      mf_mesh mesh = NULL;
      mf_space space = NULL;
      double ph[MF_PHASE_COUNT];
      mf_context_phase_reset(ctx);
      double t4 = MPI_Wtime();
      CALL(mf_mesh_create(ctx, dim == 2 ? "square-tris" : "cube-tets", dim, level, &mesh));
      CALL(mf_space_create(mesh, p, &space));
      double t5 = MPI_Wtime();
      mf_context_phase_times(ctx, ph);
      if (t5 - t4 < best[3]) best[3] = t5 - t4, memcpy(phases, ph, sizeof ph);
      mf_space_destroy(&space);
      mf_mesh_destroy(&mesh);
    }
  }
  printf("dim,n,p,cells,facets,dofs,threads,box_mesh_s,boundary_s,numbering_s,mesh_and_space_s");
  for (int k = 0; k < MF_PHASE_COUNT; k++) printf(",phase_%s_s", mf_phase_name((mf_phase)k));
  printf("\n%d,%d,%d,%d,%d,%d,%d,%.3f,%.3f,%.3f,", dim, n, p, ncells, nfacets, ndofs, mf_max_threads(), best[0],
         best[1], best[2]);
  if (pow2) printf("%.3f", best[3]);
  for (int k = 0; k < MF_PHASE_COUNT; k++) printf(",%.3f", pow2 ? phases[k] : 0.0);
  printf("\n");
  mf_simplex_basis_free(&b);
  mf_context_destroy(&ctx);
  MPI_Finalize();
  return 0;
}
