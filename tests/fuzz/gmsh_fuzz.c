/* gmsh_fuzz.c -- libFuzzer entry point of the .msh reader (lib/simplex/gmsh.c): each input is read
 * as 2D and as 3D by mf_gmsh_read_buffer. Built standalone with clang and gmsh_stubs.c (the library
 * helpers the reader calls), so no MPI or p4est is linked: see tests/fuzz/README.md. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mf_testing.h"
#include "simplex/mf_gmsh.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
  for (int dim = 2; dim <= 3; dim++) {
    mf_gmsh_mesh m;
    int ierr = mf_gmsh_read_buffer(NULL, (const char *)data, size, "fuzz", dim, &m);
    if (ierr) {
      if (m.x || m.cells || strncmp(mf_last_error_message(), "fuzz:", 5)) abort(); /* output not cleared, or no file:line */
      continue;
    }
    for (long i = 0; i < (long)(dim + 1) * m.n_cells; i++)
      if (m.cells[i] < 0 || m.cells[i] >= m.n_nodes) abort();
    for (long i = 0; i < (long)dim * m.n_facets; i++)
      if (m.facets[i] < 0 || m.facets[i] >= m.n_nodes) abort();
    mf_gmsh_free(&m);
  }
  return 0;
}
