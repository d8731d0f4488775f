#include <execinfo.h>
/* memory.c -- the bottom of the library: host allocation with messages (and the tests' allocation
 * failures), OpenMP threads, and the host memory a rank may still use. Calls nothing above lib/base/. */
#include "mfree_impl.h"

#include <stdio.h>
#include <sys/resource.h>
#include <unistd.h>
#ifdef _OPENMP
#include <omp.h>
#endif

/* Test-only failures of host allocations (mfree_impl.h): a limit on single allocations (0: none), and
 * a countdown to the one allocation that fails (0: none), with the count of allocations made. */
static size_t mf_test_alloc_limit;
static long mf_test_alloc_countdown, mf_test_alloc_count;

void mf_test_set_host_alloc_limit(size_t bytes) { mf_test_alloc_limit = bytes; }

void mf_test_fail_host_alloc(long n)
{
  mf_test_alloc_countdown = n > 0 ? n : 0;
  mf_test_alloc_count = 0;
}

long mf_test_host_alloc_count(void) { return mf_test_alloc_count; }

/* MFREE_TEST_HOST_ALLOC_LIMIT=bytes or bytes@rank (rank of MPI_COMM_WORLD): read at context creation */
void mf_test_read_alloc_limit(void)
{
  const char *env = getenv("MFREE_TEST_HOST_ALLOC_LIMIT");
  if (!env || !*env) return;
  char *end = NULL;
  unsigned long long bytes = strtoull(env, &end, 10);
  int world = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &world);
  if (end && *end == '@' && atoi(end + 1) != world) bytes = 0;
  mf_test_alloc_limit = (size_t)bytes;
}

static int over_test_limit(mf_context ctx, size_t bytes)
{
  mf_test_alloc_count++;
  if (mf_test_alloc_countdown == 1 && getenv("T14_TRACE")) { void *bt[20]; int nb = backtrace(bt, 20); backtrace_symbols_fd(bt, nb, 2); }
  if (mf_test_alloc_countdown > 0 && --mf_test_alloc_countdown == 0)
    return mf_error_set(ctx, MF_ERR_MEMORY, __FILE__, __LINE__, __func__,
                        "out of host memory allocating %zu bytes (test failure of allocation %ld)", bytes,
                        mf_test_alloc_count);
  if (!mf_test_alloc_limit || bytes <= mf_test_alloc_limit) return 0;
  return mf_error_set(ctx, MF_ERR_MEMORY, __FILE__, __LINE__, __func__,
                      "out of host memory allocating %zu bytes (test limit of %zu bytes per allocation)", bytes,
                      mf_test_alloc_limit);
}

int mf_calloc(mf_context ctx, size_t count, size_t size, void *ptr)
{
  void **p = (void **)ptr;
  *p = NULL;
  if (count == 0) count = 1; /* a valid, freeable pointer for empty arrays */
  MF_CHECK(size == 0 || count <= SIZE_MAX / size, ctx, MF_ERR_MEMORY, "allocation of %zu x %zu bytes overflows",
           count, size);
  MF_CALL(over_test_limit(ctx, count * size));
  *p = calloc(count, size);
  MF_CHECK(*p, ctx, MF_ERR_MEMORY, "out of host memory allocating %zu bytes", count * size);
  return 0;
}

int mf_calloc_agreed(mf_context ctx, size_t count, size_t size, void *ptr)
{
  int ierr = mf_agree(ctx, mf_calloc(ctx, count, size, ptr));
  if (ierr) {
    free(*(void **)ptr);
    *(void **)ptr = NULL;
  }
  return ierr;
}

int mf_malloc(mf_context ctx, size_t bytes, void *ptr)
{
  void **p = (void **)ptr;
  *p = NULL;
  if (bytes == 0) bytes = 1;
  MF_CALL(over_test_limit(ctx, bytes));
  *p = malloc(bytes);
  MF_CHECK(*p, ctx, MF_ERR_MEMORY, "out of host memory allocating %zu bytes", bytes);
  return 0;
}

int mf_calloc_touch(mf_context ctx, size_t count, size_t size, void *ptr)
{
  void **p = (void **)ptr;
  *p = NULL;
  if (count == 0) count = 1;
  MF_CHECK(size == 0 || count <= SIZE_MAX / size, ctx, MF_ERR_MEMORY, "allocation of %zu x %zu bytes overflows",
           count, size);
  const size_t bytes = count * size;
  if (bytes < ((size_t)1 << 22)) return mf_calloc(ctx, count, size, ptr);
  MF_CALL(mf_malloc(ctx, bytes, ptr));
  const size_t chunk = (size_t)1 << 20, nchunk = (bytes + chunk - 1) / chunk;
  char *c = (char *)*p;
#pragma omp parallel for schedule(static)
  for (size_t k = 0; k < nchunk; k++) memset(c + k * chunk, 0, k + 1 < nchunk ? chunk : bytes - k * chunk);
  return 0;
}

int mf_thread_work_check(mf_context ctx, int ierr, const char *what)
{
  MF_CHECK(!ierr, ctx, MF_ERR_MEMORY, "out of host memory for the work arrays of %d threads (%s)", mf_max_threads(),
           what);
  return 0;
}

int mf_max_threads(void)
{
#ifdef _OPENMP
  return omp_get_max_threads();
#else
  return 1;
#endif
}

void mf_parallel_copy(void *dst, const void *src, size_t bytes)
{
  const size_t chunk = (size_t)1 << 20, nchunk = (bytes + chunk - 1) / chunk;
#pragma omp parallel for schedule(static)
  for (size_t k = 0; k < nchunk; k++)
    memcpy((char *)dst + k * chunk, (const char *)src + k * chunk, k + 1 < nchunk ? chunk : bytes - k * chunk);
}

static double mf_test_host_avail; /* test hook: at most this many bytes available (0: no limit) */

void mf_test_set_host_available(double bytes) { mf_test_host_avail = bytes > 0.0 ? bytes : 0.0; }

/* The address space this process may still map: RLIMIT_AS (ulimit -v) less what it has mapped already
 * (the first field of /proc/self/statm, in pages); -1 without a limit. *limit: the limit in bytes. */
static double address_space_left(double *limit)
{
  struct rlimit rl;
  *limit = -1.0;
  if (getrlimit(RLIMIT_AS, &rl) != 0 || rl.rlim_cur == RLIM_INFINITY) return -1.0;
  *limit = (double)rl.rlim_cur;
  double mapped = 0.0;
  FILE *f = fopen("/proc/self/statm", "r");
  if (f) {
    unsigned long long pages;
    if (fscanf(f, "%llu", &pages) == 1) mapped = (double)pages * (double)sysconf(_SC_PAGESIZE);
    fclose(f);
  }
  return *limit > mapped ? *limit - mapped : 0.0;
}

/* Host memory this rank may use: the node's available memory (MemAvailable of /proc/meminfo, else
 * the free pages) shared by the ranks on the node, or, where less, the address space the process may
 * still map (ulimit -v). *why (may be NULL) says which bound it is, for messages. */
static double host_available(mf_context ctx, char *why, size_t n)
{
  if (why && n) why[0] = '\0';
  if (mf_test_host_avail > 0.0) {
    if (why && n) snprintf(why, n, "a test limit");
    return mf_test_host_avail;
  }
  double bytes = -1.0;
  FILE *f = fopen("/proc/meminfo", "r");
  if (f) {
    char line[256];
    unsigned long long kb;
    while (fgets(line, sizeof line, f))
      if (sscanf(line, "MemAvailable: %llu kB", &kb) == 1) {
        bytes = 1024.0 * (double)kb;
        break;
      }
    fclose(f);
  }
#if defined(_SC_AVPHYS_PAGES) && defined(_SC_PAGESIZE)
  if (bytes < 0.0) bytes = (double)sysconf(_SC_AVPHYS_PAGES) * (double)sysconf(_SC_PAGESIZE);
#endif
  const int ranks = ctx->node_size > 0 ? ctx->node_size : 1;
  double avail = bytes < 0.0 ? 1e300 : bytes / ranks; /* unknown: refuse nothing */
  if (why && bytes >= 0.0) snprintf(why, n, "%d rank(s) on this node", ranks);
  else if (why) snprintf(why, n, "the node's memory unknown");
  double limit, left = address_space_left(&limit);
  if (left >= 0.0 && left < avail) {
    avail = left;
    if (why)
      snprintf(why, n, "the address-space limit of this process, ulimit -v, is %.3g GB, %.3g GB of it mapped already",
               limit / 1e9, (limit - left) / 1e9);
  }
  return avail;
}

double mf_host_available(mf_context ctx) { return host_available(ctx, NULL, 0); }

int mf_host_require(mf_context ctx, double bytes, const char *what)
{
  char why[160];
  const double avail = host_available(ctx, why, sizeof why);
  MF_CHECK(bytes <= avail, ctx, MF_ERR_MEMORY,
           "%s needs about %.3g GB of host memory per rank, but %.3g GB are available per rank (%s)", what, bytes / 1e9,
           avail / 1e9, why);
  return 0;
}
