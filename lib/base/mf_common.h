/* mf_common.h -- limits and helpers shared by the C core and the CUDA kernels, so that a CPU twin
 * and its kernel cannot drift apart: MF_HD marks functions compiled for host and device. */
#ifndef MF_COMMON_H
#define MF_COMMON_H

#ifdef __CUDACC__
#define MF_HD __host__ __device__
#else
#define MF_HD
#endif

#define MF_MAX_DEGREE 8
#define MF_MAX_N1 (MF_MAX_DEGREE + 1)
#define MF_MAX_NQ (MF_MAX_DEGREE + 2)
#define MF_MAX_COMPONENTS 4 /* field components per DoF (mf_space_create_components, pointwise physics) */

/* whether a double is finite, without the math library (run-time compiled kernels): false for NaN and
 * the infinities */
#define MF_FINITE(v) ((v) - (v) == 0.0)

#endif
