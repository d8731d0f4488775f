/* hanging.c -- CPU reference of the hanging-node constraints (see mf_hanging.h): mask helpers,
 * decoding, 1D interpolation matrices and the in-place constraint application, direction by
 * direction. The CUDA kernels apply the same passes (lib/cuda/apply_kernel.cuh). */
#include "mf_hanging.h"

#include <string.h>

#include "hex/mf_hex_op.h"

int mf_hanging_check(int dim, int mask)
{
  if (mask < 0) return -1;
  if (mask == 0) return 0;
  if (mask >> (dim == 3 ? 9 : 4)) return -1;                  /* bits beyond the layout */
  if (!mf_hanging_faces(dim, mask) && !mf_hanging_edges(dim, mask)) return -1; /* nothing hangs */
  return 0;
}

/* Face f = 2 axis + side; corners of a face numbered by its two other axes (lower axis = bit 0);
 * edges 4 axis + (bits of the two other axes, lower axis = bit 0). */
int mf_hanging_decode(int dim, int mask, int hanging_face[6], int hanging_edge[12])
{
  if (!mask) return 0;
  const int c = mf_hanging_child(dim, mask), faces = mf_hanging_faces(dim, mask);
  const int nf = 2 * dim, ne = dim == 3 ? 12 : 0;
  for (int f = 0; f < nf; f++) hanging_face[f] = -1;
  for (int e = 0; e < ne; e++) hanging_edge[e] = -1;
  for (int a = 0; a < dim; a++) {
    if (!(faces >> a & 1)) continue;
    int f = 2 * a + (c >> a & 1), corner = 0, bit = 0;
    for (int b = 0; b < dim; b++)
      if (b != a) corner |= (c >> b & 1) << bit++;
    hanging_face[f] = corner;
    if (dim == 3) /* the four edges of that face are in the middle of the full face */
      for (int b = 0; b < 3; b++) {
        if (b == a) continue;
        int o = 3 - a - b, lo = a < o ? a : o, hi = a < o ? o : a; /* edge parallel to b: bits of a, o */
        for (int so = 0; so < 2; so++) {
          int sa = c >> a & 1, bits[3] = {0, 0, 0};
          bits[a] = sa;
          bits[o] = so;
          hanging_edge[4 * b + bits[lo] + 2 * bits[hi]] = 4;
        }
      }
  }
  for (int b = 0; b < (dim == 3 ? 3 : 0); b++) {
    if (!(mf_hanging_edges(dim, mask) >> b & 1)) continue;
    int lo = b == 0 ? 1 : 0, hi = b == 2 ? 1 : 2;
    int e = 4 * b + (c >> lo & 1) + 2 * (c >> hi & 1);
    hanging_edge[e] = (hanging_edge[e] == -1 ? 0 : 2) + (c >> b & 1);
  }
  return 1;
}

void mf_hanging_matrices(int degree, double *P)
{
  const int n1 = degree + 1;
  double x[MF_MAX_N1], w[MF_MAX_N1], pts[MF_MAX_N1];
  mf_gauss_lobatto(n1, x, w);
  for (int h = 0; h < 2; h++) {
    for (int i = 0; i < n1; i++) pts[i] = 0.5 * (h + x[i]);
    mf_lagrange_eval(n1, x, n1, pts, &P[h * n1 * n1], NULL);
    /* the fine node at the coarse endpoint is that endpoint exactly */
    for (int m = 0; m < n1; m++) P[h * n1 * n1 + (h ? n1 - 1 : 0) * n1 + m] = (m == (h ? n1 - 1 : 0));
  }
}

void mf_hanging_apply(int dim, int n1, int mask, const double *P, double *u, int transpose)
{
  if (!mask) return;
  const int c = mf_hanging_child(dim, mask);
  const int stride[3] = {1, n1, n1 * n1};
  for (int step = 0; step < dim; step++) {
    const int d = transpose ? dim - 1 - step : step; /* C = C_z C_y C_x, C^T = C_x^T C_y^T C_z^T */
    const double *M = &P[(c >> d & 1) * n1 * n1];
    const int nlines = dim == 2 ? n1 : n1 * n1;
    for (int l = 0; l < nlines; l++) {
      int idx[3] = {0, 0, 0}, t = l;
      for (int e = 0; e < dim; e++) {
        if (e == d) continue;
        idx[e] = t % n1;
        t /= n1;
      }
      if (!mf_hanging_line_needed(dim, n1, mask, d, idx)) continue;
      int base = 0;
      for (int e = 0; e < dim; e++) base += idx[e] * stride[e];
      double in[MF_MAX_N1], out[MF_MAX_N1];
      for (int i = 0; i < n1; i++) in[i] = u[base + i * stride[d]];
      for (int i = 0; i < n1; i++) {
        double s = 0.0;
        for (int m = 0; m < n1; m++) s += (transpose ? M[m * n1 + i] : M[i * n1 + m]) * in[m];
        out[i] = s;
      }
      for (int i = 0; i < n1; i++) u[base + i * stride[d]] = out[i];
    }
  }
}
