/* mf_csr.h -- the assembled operator's row products, shared by the C core and the CUDA kernels
 * (lib/cuda/csr.cu), so that the grouped product and its CPU twin cannot drift apart.
 *
 * Grouped product: g lanes (a power of 2, 4..32) share a row. Lane l sums the row's entries
 * l, l + g, l + 2g, ... in order; the g partial sums are then added pairwise as a warp shuffle does:
 *
 *     lanes  0 1 2 3 4 5 6 7        (g = 8)
 *            s0+s4 s1+s5 s2+s6 s3+s7    offset 4
 *            (s0+s4)+(s2+s6) ...        offset 2
 *            ... + ...                  offset 1  -> y[i]
 *
 * The lanes of a row read consecutive entries of vals and colidx, so a warp's loads are coalesced.
 *
 * Streamed product (CSR-Stream): a tile of MF_CSR_STREAM_ROWS consecutive rows (one per thread) takes
 * its entries [rowptr[r0], rowptr[r0 + rows]) in chunks of MF_CSR_STREAM_CHUNK: the block's threads
 * write the products vals[k] * x[colidx[k]] of a chunk to shared memory (consecutive k: coalesced
 * loads whatever the rows' lengths), then each row's thread adds the products of its row lying in the
 * chunk, in order. A row may span chunks; its sum runs over k in order all the same, so the result is
 * the plain row-by-row sum of products (bit for bit where the compiler does not fuse the row-by-row
 * multiply-adds into FMAs). */
#ifndef MF_CSR_H
#define MF_CSR_H

#include <stdint.h>

#include "base/mf_common.h"

#define MF_CSR_MAX_GROUP 32
#define MF_CSR_STREAM_ROWS 256
#define MF_CSR_STREAM_CHUNK 2048

/* Lanes per row for rows of `avg` stored entries on average: about two entries per lane (Q1 3D, 27
 * per row: 16 lanes; Q2 3D, 125: 32). */
MF_HD static inline int mf_csr_group(double avg)
{
  int g = 4;
  while (g < MF_CSR_MAX_GROUP && 2.0 * g < avg) g *= 2;
  return g;
}

/* Lane `lane`'s partial sum of row [begin, end) of a g-lane group. */
MF_HD static inline double mf_csr_lane_sum(const double *vals, const int *colidx, const double *x, int64_t begin,
                                           int64_t end, int lane, int g)
{
  double s = 0.0;
  for (int64_t k = begin + lane; k < end; k += g) s += vals[k] * x[colidx[k]];
  return s;
}

/* Position of column j in row i of a CSR pattern with ascending columns (j is there). */
MF_HD static inline int64_t mf_csr_find(const int64_t *rowptr, const int *colidx, int i, int j)
{
  int64_t lo = rowptr[i], hi = rowptr[i + 1] - 1;
  while (lo < hi) {
    const int64_t mid = lo + (hi - lo) / 2;
    if (colidx[mid] < j) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/* Position of the diagonal entry of row i (its columns ascending), or -1 where the row has none. */
MF_HD static inline int64_t mf_csr_diagonal_position(const int64_t *rowptr, const int *colidx, int i)
{
  int64_t lo = rowptr[i], hi = rowptr[i + 1];
  while (lo < hi) {
    const int64_t mid = lo + (hi - lo) / 2;
    if (colidx[mid] < i) lo = mid + 1;
    else hi = mid;
  }
  return lo < rowptr[i + 1] && colidx[lo] == i ? lo : -1;
}

/* CPU twin of the grouped kernel: y[i] = row i . x for i < n, the lanes' partial sums added in the
 * shuffle's order (the file comment). */
static inline void mf_csr_apply_grouped_cpu(int n, const int64_t *rowptr, const int *colidx, const double *vals,
                                            const double *x, double *y, int g)
{
  for (int i = 0; i < n; i++) {
    double part[MF_CSR_MAX_GROUP];
    for (int l = 0; l < g; l++) part[l] = mf_csr_lane_sum(vals, colidx, x, rowptr[i], rowptr[i + 1], l, g);
    for (int off = g / 2; off > 0; off /= 2)
      for (int l = 0; l < off; l++) part[l] += part[l + off];
    y[i] = part[0];
  }
}

/* CPU twin of the streamed kernel, tile by tile and chunk by chunk as the device goes (the file
 * comment): y[i] = row i . x for i < n. */
static inline void mf_csr_apply_stream_cpu(int n, const int64_t *rowptr, const int *colidx, const double *vals,
                                           const double *x, double *y)
{
  double prod[MF_CSR_STREAM_CHUNK];
  for (int r0 = 0; r0 < n; r0 += MF_CSR_STREAM_ROWS) {
    const int r1 = r0 + MF_CSR_STREAM_ROWS < n ? r0 + MF_CSR_STREAM_ROWS : n;
    for (int i = r0; i < r1; i++) y[i] = 0.0;
    for (int64_t base = rowptr[r0]; base < rowptr[r1]; base += MF_CSR_STREAM_CHUNK) {
      const int64_t left = rowptr[r1] - base;
      const int m = left < MF_CSR_STREAM_CHUNK ? (int)left : MF_CSR_STREAM_CHUNK;
      for (int t = 0; t < m; t++) prod[t] = vals[base + t] * x[colidx[base + t]];
      for (int i = r0; i < r1; i++) {
        const int64_t lo = rowptr[i] > base ? rowptr[i] : base, hi = rowptr[i + 1] < base + m ? rowptr[i + 1] : base + m;
        double s = y[i];
        for (int64_t k = lo; k < hi; k++) s += prod[k - base];
        y[i] = s;
      }
    }
  }
}

#endif
