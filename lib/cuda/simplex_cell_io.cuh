// simplex_cell_io.cuh -- part of simplex_kernels.cuh (included there between its namespace's other parts, after
// ldx and addy): a cell's geometry from its vertices, where its DoFs, values and sums live (the IO policies of the
// cell bodies: one cell per thread in global memory, or the shared scatter's tile in shared memory), the gather
// through a policy, and the shared scatter's tile phases (tile_cells).
#ifndef MF_SIMPLEX_CELL_IO_CUH
#define MF_SIMPLEX_CELL_IO_CUH

namespace MF_SX_NS {

// |det J| and J^-1 of a cell from its vertices' coordinates X (J[k][l] = X_{l+1,k} - X_{0,k}, as
// mf_simplex_affine)
template <int DIM>
__device__ __forceinline__ double geometry_x(const double X[DIM + 1][DIM], double Ji[DIM][DIM])
{
  double J[DIM][DIM];
#pragma unroll
  for (int l = 0; l < DIM; l++)
#pragma unroll
    for (int k = 0; k < DIM; k++) J[k][l] = X[l + 1][k] - X[0][k];
  double det;
  if (DIM == 2) {
    det = J[0][0] * J[1][1] - J[0][1] * J[1][0];
    const double id = 1.0 / det; // one division (the CPU divides each entry: equal to rounding)
    Ji[0][0] = J[1][1] * id, Ji[0][1] = -J[0][1] * id;
    Ji[1][0] = -J[1][0] * id, Ji[1][1] = J[0][0] * id;
  } else {
    det = J[0][0] * (J[1][1] * J[2][2] - J[1][2] * J[2][1]) - J[0][1] * (J[1][0] * J[2][2] - J[1][2] * J[2][0]) +
          J[0][2] * (J[1][0] * J[2][1] - J[1][1] * J[2][0]);
    const double id = 1.0 / det;
#pragma unroll
    for (int r = 0; r < DIM; r++)
#pragma unroll
      for (int c = 0; c < DIM; c++) {
        const int r1 = (c + 1) % 3, r2 = (c + 2) % 3, c1 = (r + 1) % 3, c2 = (r + 2) % 3;
        Ji[r][c] = (J[r1][c1] * J[r2][c2] - J[r1][c2] * J[r2][c1]) * id;
      }
  }
  return fabs(det);
}

// the same for cell e of the mesh (its vertex ids in cells, their coordinates in coords)
template <int DIM>
__device__ __forceinline__ double geometry(const double *__restrict__ coords, const int *__restrict__ cells, int e,
                                           double Ji[DIM][DIM])
{
  double X[DIM + 1][DIM];
#pragma unroll
  for (int i = 0; i <= DIM; i++) {
    const int v = __ldg(cells + (size_t)e * (DIM + 1) + i);
#pragma unroll
    for (int k = 0; k < DIM; k++) X[i][k] = __ldg(coords + (size_t)v * DIM + k);
  }
  return geometry_x<DIM>(X, Ji);
}

// Where a cell's DoFs, values and sums live (the IO of the cell bodies). sx_gio, one cell per thread: the DoF
// ids of cell_dofs, x read and the sums added atomically in global memory, the geometry from the mesh's
// vertices. sx_sio, the shared scatter: the indices into the block's tile lists, the tile's values and sums in
// shared memory (sx, sy), the geometry from the tile's vertex coordinates there (sc).
template <int DIM, int N>
struct sx_gio {
  const mf_sx_args &a;
  __device__ __forceinline__ int dof(int e, int j) const { return __ldg(a.cell_dofs + (size_t)e * N + j); }
  __device__ __forceinline__ double x(size_t i) const { return ldx(a, i); }
  __device__ __forceinline__ void add(size_t i, double v) const { addy(a, i, v); }
  __device__ __forceinline__ double geo(int e, double Ji[DIM][DIM]) const
  {
    return geometry<DIM>(a.coords, a.cells, e, Ji);
  }
};
template <int DIM, int N>
struct sx_sio {
  const unsigned short *ldofs, *lverts; // the cells' indices into their tile's lists (global memory)
  const double *sx, *sc;                // shared: the tile's values and vertex coordinates
  double *sy;                           // shared: the tile's sums
  __device__ __forceinline__ int dof(int e, int j) const { return __ldg(ldofs + (size_t)e * N + j); }
  __device__ __forceinline__ double x(size_t i) const { return sx[i]; }
  __device__ __forceinline__ void add(size_t i, double v) const { atomicAdd(sy + i, v); }
  __device__ __forceinline__ double geo(int e, double Ji[DIM][DIM]) const
  {
    double X[DIM + 1][DIM];
#pragma unroll
    for (int i = 0; i <= DIM; i++) {
      const int l = __ldg(lverts + (size_t)e * (DIM + 1) + i);
#pragma unroll
      for (int k = 0; k < DIM; k++) X[i][k] = sc[l * DIM + k];
    }
    return geometry_x<DIM>(X, Ji);
  }
};

template <int DIM, int P> using gio = sx_gio<DIM, mf_sx_nnodes(DIM, P)>;
template <int DIM, int P> using sio = sx_sio<DIM, mf_sx_nnodes(DIM, P)>;

// The cell's DoFs (as io numbers them) and the values of x on them, NC components a DoF (interleaved)
template <int N, int NC, class IO>
__device__ __forceinline__ void gather_io(const IO &io, int e, int idx[N], double ue[N * NC])
{
#pragma unroll
  for (int j = 0; j < N; j++) idx[j] = io.dof(e, j);
#pragma unroll
  for (int j = 0; j < N; j++)
#pragma unroll
    for (int c = 0; c < NC; c++) ue[j * NC + c] = io.x((size_t)idx[j] * NC + c);
}

// The shared scatter: the block's tile (tile t = blockIdx.x, cells t tile ..) gathers its DoFs' values and its
// vertices' coordinates into shared memory, each thread runs cell(e, sx, sy, sc) on its cell, and each of the
// tile's DoFs is added to y once. Shared memory: x and the sums (tile_maxd nc each), the coordinates.
template <int DIM, int NC, class F>
__device__ __forceinline__ void tile_cells(const mf_sx_args &a, F cell)
{
  extern __shared__ double smem[];
  const int t = blockIdx.x, tid = threadIdx.x, bd = blockDim.x;
  const int d0 = __ldg(a.tile_off + t), nd = __ldg(a.tile_off + t + 1) - d0;
  const int v0 = __ldg(a.tile_voff + t), nv = __ldg(a.tile_voff + t + 1) - v0;
  double *sx = smem, *sy = smem + (size_t)a.tile_maxd * NC, *sc = smem + (size_t)2 * a.tile_maxd * NC;
  for (int r = tid; r < nd * NC; r += bd) {
    sx[r] = ldx(a, (size_t)__ldg(a.tile_dofs + d0 + r / NC) * NC + r % NC);
    sy[r] = 0.0;
  }
  for (int r = tid; r < nv * DIM; r += bd)
    sc[r] = __ldg(a.coords + (size_t)__ldg(a.tile_verts + v0 + r / DIM) * DIM + r % DIM);
  __syncthreads();
  const int e = t * a.tile + tid;
  if (tid < a.tile && e < a.ncells) cell(e, sx, sy, sc);
  __syncthreads();
  for (int r = tid; r < nd * NC; r += bd) {
    const double v = sy[r];
    if (v != 0.0) addy(a, (size_t)__ldg(a.tile_dofs + d0 + r / NC) * NC + r % NC, v);
  }
}

} // namespace MF_SX_NS

#endif
