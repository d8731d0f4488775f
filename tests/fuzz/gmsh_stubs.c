/* gmsh_stubs.c -- the library helpers lib/simplex/gmsh.c calls (errors, allocation), for the
 * standalone fuzz builds of tests/fuzz/README.md (no MPI, no p4est, no rest of the library). */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

#include "mf_testing.h"

static char last_msg[1024];

const char *mf_last_error_message(void) { return last_msg; }

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

