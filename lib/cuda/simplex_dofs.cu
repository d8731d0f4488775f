// simplex_dofs.cu -- the continuous P_p numbering of a simplex mesh made on the GPU (mf_simplex_backend.h:
// dofs_create), the twin of lib/simplex/dofs.c: the edges (and in 3D from P3 on the faces) of every cell as
// keys of their sorted vertices, sorted and made unique (the host's order: by smallest vertex, then the
// others), each cell's DoFs by a binary search of its entities, the boundary facets' DoFs marked, each DoF's
// highest-numbered cell found (an atomic maximum: what the host's points need); the cell DoFs, the marks and
// those cells then copied to the host, where the space keeps them. The same numbers as the host's.
#include <cub/device/device_radix_sort.cuh>
#include <cub/device/device_select.cuh>

#include "mf_cuda_common.cuh"
#include "mf_simplex_cuda.h"

namespace {

// the local entities of a cell: edges (k = 2) or faces (k = 3) as local vertex ids
struct subs {
  int n, k;
  int v[6][3];
};

constexpr subs tri_edges = {3, 2, {{0, 1, 0}, {0, 2, 0}, {1, 2, 0}}};
constexpr subs tet_edges = {6, 2, {{0, 1, 0}, {0, 2, 0}, {0, 3, 0}, {1, 2, 0}, {1, 3, 0}, {2, 3, 0}}};
constexpr subs tet_faces = {4, 3, {{0, 1, 2}, {0, 1, 3}, {0, 2, 3}, {1, 2, 3}}};

// an entity's key: its vertices sorted, packed so that the keys sort as (s0, s1, s2) do (edges 32 bits
// each; faces 21 bits each, the caller's vertices below 2^21)
__device__ __forceinline__ unsigned long long key_of(int k, int a, int b, int c)
{
  int t;
  if (k == 2) return a < b ? ((unsigned long long)a << 32) | (unsigned)b : ((unsigned long long)b << 32) | (unsigned)a;
  if (b < a) t = a, a = b, b = t;
  if (c < b) t = b, b = c, c = t;
  if (b < a) t = a, a = b, b = t;
  return ((unsigned long long)a << 42) | ((unsigned long long)b << 21) | (unsigned long long)c;
}

__global__ void k_keys(int ncells, int nvc, subs s, const int *__restrict__ cells, unsigned long long *__restrict__ keys)
{
  const long long t = (long long)blockIdx.x * blockDim.x + threadIdx.x;
  if (t >= (long long)ncells * s.n) return;
  const int c = (int)(t / s.n), j = (int)(t - (long long)c * s.n);
  const int *v = cells + (size_t)c * nvc;
  keys[t] = key_of(s.k, v[s.v[j][0]], v[s.v[j][1]], s.k == 3 ? v[s.v[j][2]] : 0);
}

// the entity's index: its place among the sorted unique keys
__device__ __forceinline__ int find(const unsigned long long *__restrict__ u, int n, unsigned long long key)
{
  int lo = 0, hi = n;
  while (lo < hi) {
    const int mid = lo + (hi - lo) / 2;
    if (u[mid] < key) lo = mid + 1;
    else hi = mid;
  }
  return lo < n && u[lo] == key ? lo : -1;
}

// node (i, j) of a face in the order j outer, i inner (dofs.c's face_pos)
__device__ __forceinline__ int face_pos(int p, int i, int j)
{
  int pos = 0;
  for (int jj = 1; jj < j; jj++) pos += p - 1 - jj;
  return pos + i - 1;
}

struct layout {
  int dim, p, N, pe, pf, pi, ebase, fbase, ibase, nek, nfk;
};

// each cell's DoFs, in dofs.c's order: vertices, edges (oriented from the smaller global vertex), faces
// (by the sorted global vertices), the interior
__global__ void k_cells(int ncells, layout L, subs se, subs sf, const int *__restrict__ cells,
                        const unsigned long long *__restrict__ E, const unsigned long long *__restrict__ F,
                        int *__restrict__ cd)
{
  const long long c = (long long)blockIdx.x * blockDim.x + threadIdx.x;
  if (c >= ncells) return;
  const int nvc = L.dim + 1, p = L.p;
  const int *v = cells + (size_t)c * nvc;
  int *out = cd + (size_t)c * L.N, n = 0;
  for (int k = 0; k < nvc; k++) out[n++] = v[k];
  for (int e = 0; e < se.n && L.pe > 0; e++) {
    const int a = v[se.v[e][0]], b = v[se.v[e][1]];
    const int g = find(E, L.nek, key_of(2, a, b, 0));
    for (int k = 1; k < p; k++) out[n++] = L.ebase + g * L.pe + (a < b ? k - 1 : p - 1 - k);
  }
  for (int f = 0; f < (L.dim == 3 ? 4 : 0) && L.pf > 0; f++) {
    const int gv[3] = {v[sf.v[f][0]], v[sf.v[f][1]], v[sf.v[f][2]]};
    const int g = find(F, L.nfk, key_of(3, gv[0], gv[1], gv[2]));
    int ord[3] = {0, 1, 2};
    for (int i = 0; i < 3; i++)
      for (int j = i + 1; j < 3; j++)
        if (gv[ord[j]] < gv[ord[i]]) {
          const int t = ord[i];
          ord[i] = ord[j], ord[j] = t;
        }
    for (int j = 1; j < p; j++)
      for (int i = 1; i + j < p; i++) {
        const int B[3] = {p - i - j, i, j};
        out[n++] = L.fbase + g * L.pf + face_pos(p, B[ord[1]], B[ord[2]]);
      }
  }
  for (int k = 0; k < L.pi; k++) out[n++] = L.ibase + (int)c * L.pi + k;
}

// the boundary facets' DoFs: their vertices, edges and (3D) face
__global__ void k_marks(int nfacets, layout L, const int *__restrict__ facets, const unsigned long long *__restrict__ E,
                        const unsigned long long *__restrict__ F, unsigned char *__restrict__ bc)
{
  const long long t = (long long)blockIdx.x * blockDim.x + threadIdx.x;
  if (t >= nfacets) return;
  const int dim = L.dim, *fv = facets + (size_t)t * dim;
  for (int k = 0; k < dim; k++) bc[fv[k]] = 1;
  for (int e = 0; e < (dim == 2 ? 1 : 3) && L.pe > 0; e++) {
    const int g = find(E, L.nek, key_of(2, fv[e == 2 ? 1 : 0], fv[e == 0 ? 1 : 2], 0));
    for (int k = 0; k < L.pe && g >= 0; k++) bc[L.ebase + g * L.pe + k] = 1;
  }
  if (dim == 3 && L.pf > 0) {
    const int g = find(F, L.nfk, key_of(3, fv[0], fv[1], fv[2]));
    for (int k = 0; k < L.pf && g >= 0; k++) bc[L.fbase + g * L.pf + k] = 1;
  }
}

// each DoF's highest-numbered cell (the cell the host takes its point from: lib/simplex/space_simplex.c)
__global__ void k_last(long long slots, int N, const int *__restrict__ cd, int *__restrict__ last)
{
  const long long t = (long long)blockIdx.x * blockDim.x + threadIdx.x;
  if (t < slots) atomicMax(&last[cd[t]], (int)(t / N));
}

struct bufs {
  int *cells = nullptr, *facets = nullptr, *cd = nullptr, *nsel = nullptr, *last = nullptr;
  unsigned long long *keys = nullptr, *sorted = nullptr, *E = nullptr, *F = nullptr;
  unsigned char *bc = nullptr;
  void *tmp = nullptr;
};

// the distinct entities s of the cells, sorted, into *u (device), their number into *n
int entities(mf_context ctx, bufs &b, int ncells, int nvc, const subs &s, int bits, unsigned long long **u, int *n)
{
  const long long total = (long long)ncells * s.n;
  const char *what = "the simplex DoF numbering";
  MF_CALL(mf_cuda_malloc(ctx, (void **)&b.keys, sizeof(unsigned long long) * ((size_t)total + 1), what));
  MF_CALL(mf_cuda_malloc(ctx, (void **)&b.sorted, sizeof(unsigned long long) * ((size_t)total + 1), what));
  if (total) {
    k_keys<<<(unsigned)((total + 255) / 256), 256>>>(ncells, nvc, s, b.cells, b.keys);
    MF_CUDA_LAUNCH_CHECK(ctx, "the simplex entities' keys");
  }
  size_t bs = 0, bu = 0;
  MF_CUDA_CALL(ctx, cub::DeviceRadixSort::SortKeys(nullptr, bs, b.keys, b.sorted, (int)total, 0, bits));
  MF_CUDA_CALL(ctx, cub::DeviceSelect::Unique(nullptr, bu, b.sorted, b.keys, b.nsel, (int)total));
  MF_CALL(mf_cuda_malloc(ctx, &b.tmp, bs > bu ? bs : bu, what));
  MF_CUDA_CALL(ctx, cub::DeviceRadixSort::SortKeys(b.tmp, bs, b.keys, b.sorted, (int)total, 0, bits));
  MF_CUDA_CALL(ctx, cub::DeviceSelect::Unique(b.tmp, bu, b.sorted, b.keys, b.nsel, (int)total));
  MF_CUDA_CALL(ctx, cudaMemcpy(n, b.nsel, sizeof(int), cudaMemcpyDeviceToHost));
  mf_cuda_drop(ctx, b.tmp);
  mf_cuda_drop(ctx, b.sorted);
  *u = b.keys; // the unique keys are the first *n (the rest is not read)
  b.keys = nullptr;
  return 0;
}

int number(mf_context ctx, const mf_simplex_mesh *m, int p, bufs &b, mf_simplex_dofs *d)
{
  const int dim = m->dim, nvc = dim + 1;
  layout L = {};
  L.dim = dim, L.p = p, L.pe = p - 1, L.pf = dim == 3 ? (p - 1) * (p - 2) / 2 : 0;
  L.N = dim == 2 ? (p + 1) * (p + 2) / 2 : (p + 1) * (p + 2) * (p + 3) / 6;
  L.pi = dim == 2 ? (p - 1) * (p - 2) / 2 : (p - 1) * (p - 2) * (p - 3) / 6;
  const char *what = "the simplex DoF numbering";
  { // its largest moment: the cells, two arrays of keys and the sort's space, or the unique keys, the cell DoFs,
    // the marks and the cells found
    const size_t keys = sizeof(unsigned long long) * (size_t)m->ncells * (dim == 2 ? 3 : 6);
    const size_t cells = sizeof(int) * (size_t)m->ncells * nvc, cd = sizeof(int) * (size_t)m->ncells * L.N;
    const size_t sort = 3 * keys, after = keys + cd + cd / 2;
    MF_CALL(mf_cuda_require(ctx, cells + (sort > after ? sort : after), what));
  }
  MF_CALL(mf_cuda_share(ctx, (void **)&b.cells, m->cells, sizeof(int) * (size_t)m->ncells * nvc, what));
  MF_CALL(mf_cuda_upload(ctx, (void **)&b.facets, m->facets, sizeof(int) * (size_t)m->nfacets * dim, what));
  MF_CALL(mf_cuda_malloc(ctx, (void **)&b.nsel, sizeof(int), what));
  int vbits = 1;
  while (vbits < 31 && (1LL << vbits) < m->nv) vbits++;
  if (L.pe > 0) MF_CALL(entities(ctx, b, m->ncells, nvc, dim == 2 ? tri_edges : tet_edges, 32 + vbits, &b.E, &L.nek));
  if (L.pf > 0) MF_CALL(entities(ctx, b, m->ncells, nvc, tet_faces, 42 + vbits, &b.F, &L.nfk));
  const long long nd = (long long)m->nv + (long long)L.nek * L.pe + (long long)L.nfk * L.pf + (long long)m->ncells * L.pi;
  MF_CHECK(nd <= INT32_MAX, ctx, MF_ERR_ARGUMENT, "%lld DoFs exceed the 32-bit indices", nd);
  L.ebase = m->nv, L.fbase = L.ebase + L.nek * L.pe, L.ibase = L.fbase + L.nfk * L.pf;
  MF_CALL(mf_cuda_malloc(ctx, (void **)&b.cd, sizeof(int) * ((size_t)m->ncells * L.N + 1), what));
  MF_CALL(mf_cuda_malloc(ctx, (void **)&b.bc, (size_t)nd + 1, what));
  MF_CUDA_CALL(ctx, cudaMemset(b.bc, 0, (size_t)nd + 1));
  if (m->ncells)
    k_cells<<<(unsigned)((m->ncells + 127) / 128), 128>>>(m->ncells, L, dim == 2 ? tri_edges : tet_edges, tet_faces,
                                                          b.cells, b.E, b.F, b.cd);
  if (m->nfacets) k_marks<<<(unsigned)((m->nfacets + 255) / 256), 256>>>(m->nfacets, L, b.facets, b.E, b.F, b.bc);
  const long long slots = (long long)m->ncells * L.N;
  MF_CALL(mf_cuda_malloc(ctx, (void **)&b.last, sizeof(int) * ((size_t)nd + 1), what));
  MF_CUDA_CALL(ctx, cudaMemset(b.last, 0xff, sizeof(int) * ((size_t)nd + 1)));
  if (slots) k_last<<<(unsigned)((slots + 255) / 256), 256>>>(slots, L.N, b.cd, b.last);
  MF_CUDA_LAUNCH_CHECK(ctx, "the simplex DoF numbering");
  d->nnodes = L.N, d->nedges = L.nek, d->nfaces = L.nfk, d->ndofs = (int)nd;
  d->cell_dofs = (int *)malloc(sizeof(int) * ((size_t)m->ncells * L.N + 1));
  d->bc = (unsigned char *)malloc((size_t)nd + 1);
  d->last = (int *)malloc(sizeof(int) * ((size_t)nd + 1));
  MF_CHECK(d->cell_dofs && d->bc && d->last, ctx, MF_ERR_MEMORY, "out of host memory for the DoFs of %d cells", m->ncells);
  MF_CALL(mf_cuda_download(ctx, d->cell_dofs, b.cd, sizeof(int) * (size_t)m->ncells * L.N, what));
  MF_CALL(mf_cuda_download(ctx, d->bc, b.bc, (size_t)nd + 1, what));
  MF_CALL(mf_cuda_download(ctx, d->last, b.last, sizeof(int) * ((size_t)nd + 1), what));
  return 0;
}

} // namespace

extern "C" int mf_simplex_cuda_dofs_create(mf_context ctx, const mf_simplex_mesh *m, int degree, mf_simplex_dofs *d)
{
  memset(d, 0, sizeof *d);
  MF_CHECK(m && degree >= 1, ctx, MF_ERR_ARGUMENT, "the simplex DoF numbering: mesh NULL or degree %d", degree);
  MF_CHECK(m->dim == 2 || degree < 3 || m->nv <= (1 << 21), ctx, MF_ERR_UNSUPPORTED,
           "the simplex DoF numbering on the device: faces of %d vertices (at most 2^21)", m->nv);
  bufs b;
  int ierr = number(ctx, m, degree, b, d);
  void *all[] = {b.cells, b.facets, b.cd, b.nsel, b.last, b.keys, b.sorted, b.E, b.F, b.bc, b.tmp};
  for (void *p : all) mf_cuda_free(ctx, p);
  if (ierr) mf_simplex_dofs_free(d);
  return ierr;
}
