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
 * The lanes of a row read consecutive entries of vals and colidx, so a warp's loads are coalesced. */
#ifndef MF_CSR_H
#define MF_CSR_H

#include <stdint.h>

#include "mf_common.h"

#define MF_CSR_MAX_GROUP 32

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

#endif
