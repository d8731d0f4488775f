// emu_test.h -- what the tests of emulated kernels share (t25_simplex_emu, t46_hex_emu): a check that
// counts failures, and a launch that runs a grid's blocks one after the other, each by an OpenMP team
// (cuda_runtime.h of this folder).
#ifndef MF_EMU_TEST_H
#define MF_EMU_TEST_H
#include <cuda_runtime.h>
#include <stdio.h>

static int failures = 0;
#define CHECK(cond, ...)                                                                                           \
  do {                                                                                                           \
    if (!(cond)) {                                                                                               \
      fprintf(stderr, "FAIL %s:%d: ", __FILE__, __LINE__);                                                       \
      fprintf(stderr, __VA_ARGS__);                                                                              \
      fprintf(stderr, "\n");                                                                                     \
      failures++;                                                                                                \
    }                                                                                                            \
  } while (0)

// blocks 0..nblocks-1, each run by a team of `threads` calling body(); a failure where OpenMP gave a
// smaller team (then the kernels did not run as launched)
template <class F> static void mf_emu_launch(long long nblocks, int threads, F body)
{
  int team_ok = 1;
  for (long long blk = 0; blk < nblocks; blk++) {
    mf_emu_block.x = (int)blk;
#pragma omp parallel num_threads(threads)
    {
      if (omp_get_num_threads() != threads) {
#pragma omp atomic write
        team_ok = 0;
      } else {
        body();
      }
    }
  }
  CHECK(team_ok, "OpenMP gave fewer than %d threads (OMP_THREAD_LIMIT?)", threads);
}
#endif
