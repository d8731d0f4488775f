/* gmsh_fuzz.c -- libFuzzer entry point of the .msh reader (lib/simplex/gmsh.c): each input is read
 * as 2D and as 3D by mf_gmsh_read_buffer. Built standalone with clang (tests/fuzz/README.md): this
 * file supplies the three library helpers the reader calls, so no MPI or p4est is linked. */
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mfree_impl.h"
#include "simplex/mf_gmsh.h"

static char last_msg[1024];

int mf_error_set(mf_context ctx, int code, const char *file, int line, const char *func, const char *fmt, ...)
{
  (void)ctx; (void)file; (void)line; (void)func;
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(last_msg, sizeof last_msg, fmt, ap);
  va_end(ap);
  return code;
}

int mf_calloc(mf_context ctx, size_t count, size_t size, void *ptr)
{
  (void)ctx;
  void **p = (void **)ptr;
  if (count == 0) count = 1;
  *p = calloc(count, size);
  return *p ? 0 : MF_ERR_MEMORY;
}

int mf_malloc(mf_context ctx, size_t bytes, void *ptr)
{
  (void)ctx;
  void **p = (void **)ptr;
  *p = malloc(bytes ? bytes : 1);
  return *p ? 0 : MF_ERR_MEMORY;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
  for (int dim = 2; dim <= 3; dim++) {
    mf_gmsh_mesh m;
    int ierr = mf_gmsh_read_buffer(NULL, (const char *)data, size, "fuzz", dim, &m);
    if (ierr) {
      if (m.x || m.cells || strncmp(last_msg, "fuzz:", 5)) abort(); /* output not cleared, or no file:line */
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
