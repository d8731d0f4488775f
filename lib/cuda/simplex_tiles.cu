// simplex_tiles.cu -- the shared scatter's tiles of a simplex operator on the device (lib/cuda/simplex.cu makes
// them at the operator's creation; the kernels read them in simplex_cell_io.cuh's tile_cells): the cells in tiles of
// MF_SX_SHARED_TILE consecutive cells, each tile's distinct ids (DoFs or vertices) ascending, each cell entry's index
// into its tile's list. The CPU twin: mf_simplex_tiles (lib/simplex/ops_cpu.c).
#include <limits.h>

#include <cub/block/block_radix_sort.cuh>
#include <cub/block/block_scan.cuh>

#include "mf_cuda_common.cuh"
#include "mf_simplex_cuda.h"
#include "mf_sx_table.h"

namespace {
constexpr int TILE = MF_SX_SHARED_TILE;
// The tiles of NI ids per cell (the cells' DoFs or vertices), one block per tile of TILE consecutive cells: the
// tile's ids sorted (with their places), the first of each distinct one flagged and ranked. off NULL: count[t],
// tile t's distinct ids; else its distinct ids ascending into list[off[t] ..) and each cell's entries as their
// indices there (loc, ncells x NI). The CPU twin: mf_simplex_tiles (lib/simplex/ops_cpu.c).
template <int NI>
__global__ void __launch_bounds__(TILE) k_tile_ids(const int *__restrict__ ids, int ncells, const int *__restrict__ off,
                                                   int *__restrict__ count, int *__restrict__ list,
                                                   unsigned short *__restrict__ loc)
{
  typedef cub::BlockRadixSort<int, TILE, NI, int> Sort;
  typedef cub::BlockScan<int, TILE> Scan;
  __shared__ union {
    typename Sort::TempStorage sort;
    typename Scan::TempStorage scan;
  } tmp;
  __shared__ int last[TILE];
  const int t = blockIdx.x, e = t * TILE + threadIdx.x;
  int key[NI], val[NI], flag[NI], rank[NI];
#pragma unroll
  for (int j = 0; j < NI; j++) {
    key[j] = e < ncells ? ids[(size_t)e * NI + j] : INT_MAX;
    val[j] = threadIdx.x * NI + j;
  }
  Sort(tmp.sort).Sort(key, val); // blocked: this thread's items are consecutive in the order
  last[threadIdx.x] = key[NI - 1];
  __syncthreads(); // also between the sort's and the scan's use of tmp
  const int prev = threadIdx.x ? last[threadIdx.x - 1] : -1;
#pragma unroll
  for (int j = 0; j < NI; j++) flag[j] = key[j] != INT_MAX && key[j] != (j ? key[j - 1] : prev);
  int total = 0;
  Scan(tmp.scan).ExclusiveSum(flag, rank, total);
  if (!off) {
    if (threadIdx.x == 0) count[t] = total;
    return;
  }
#pragma unroll
  for (int j = 0; j < NI; j++) {
    if (key[j] == INT_MAX) continue;
    const int li = rank[j] + flag[j] - 1; // the index of its first occurrence
    if (flag[j]) list[off[t] + li] = key[j];
    loc[(size_t)t * TILE * NI + val[j]] = (unsigned short)li;
  }
}

// the last launch's error as an error code (recorded on ctx)
int launched(mf_context ctx, const char *what)
{
  const cudaError_t e = cudaGetLastError();
  if (e == cudaSuccess) return 0;
  return mf_error_set(ctx, MF_ERR_CUDA, __FILE__, __LINE__, __func__, "kernel '%s': %s", what, cudaGetErrorString(e));
}

template <int NI>
void tile_ids_launch(int ntiles, const int *ids, int ncells, const int *off, int *count, int *list, unsigned short *loc)
{
  k_tile_ids<NI><<<ntiles, TILE>>>(ids, ncells, off, count, list, loc);
}
} // namespace

extern "C" int mf_simplex_cuda_tile_ids(mf_context ctx, const int *ids, int ncells, int ni, int **off, int **list,
                                        unsigned short **loc, int *maxn, long long *total, const char *what)
{
  const int ntiles = (ncells + TILE - 1) / TILE;
  void (*launch)(int, const int *, int, const int *, int *, int *, unsigned short *) =
      ni == 3 ? tile_ids_launch<3> : ni == 4 ? tile_ids_launch<4> : ni == 6 ? tile_ids_launch<6> : ni == 10 ? tile_ids_launch<10>
      : ni == 15 ? tile_ids_launch<15> : ni == 20 ? tile_ids_launch<20> : ni == 35 ? tile_ids_launch<35> : nullptr;
  MF_CHECK(launch, ctx, MF_ERR_UNSUPPORTED, "tiles of %d ids per cell", ni);
  int *h = (int *)malloc(sizeof(int) * ((size_t)ntiles + 1));
  MF_CHECK(h, ctx, MF_ERR_MEMORY, "out of host memory (%d tiles)", ntiles);
  int ierr = mf_cuda_malloc(ctx, (void **)off, sizeof(int) * ((size_t)ntiles + 1), what);
  if (!ierr) {
    launch(ntiles, ids, ncells, NULL, *off, NULL, NULL);
    ierr = launched(ctx, what);
  }
  if (!ierr && cudaMemcpy(h, *off, sizeof(int) * ntiles, cudaMemcpyDeviceToHost) != cudaSuccess)
    ierr = mf_error_set(ctx, MF_ERR_CUDA, __FILE__, __LINE__, __func__, "%s: %s", what, cudaGetErrorString(cudaGetLastError()));
  long long sum = 0;
  int most = 0;
  for (int t = 0; !ierr && t < ntiles; t++) {
    const int c = h[t];
    h[t] = (int)sum;
    sum += c;
    most = c > most ? c : most;
  }
  if (!ierr && sum > INT_MAX)
    ierr = mf_error_set(ctx, MF_ERR_UNSUPPORTED, __FILE__, __LINE__, __func__,
                        "%s: %lld entries in the tiles' lists (below 2^31)", what, sum);
  if (!ierr) h[ntiles] = (int)sum;
  if (!ierr && cudaMemcpy(*off, h, sizeof(int) * ((size_t)ntiles + 1), cudaMemcpyHostToDevice) != cudaSuccess)
    ierr = mf_error_set(ctx, MF_ERR_CUDA, __FILE__, __LINE__, __func__, "%s: %s", what, cudaGetErrorString(cudaGetLastError()));
  free(h);
  if (!ierr) ierr = mf_cuda_malloc(ctx, (void **)list, sizeof(int) * (size_t)(sum ? sum : 1), what);
  if (!ierr) ierr = mf_cuda_malloc(ctx, (void **)loc, sizeof(unsigned short) * ((size_t)ncells * ni + 1), what);
  if (!ierr) {
    launch(ntiles, ids, ncells, *off, NULL, *list, *loc);
    ierr = launched(ctx, what);
  }
  *maxn = most, *total = sum;
  return ierr;
}

