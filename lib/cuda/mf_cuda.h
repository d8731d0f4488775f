/* mf_cuda.h -- entry points of the CUDA backend, called from the C core (lib/). All are extern "C"
 * launchers/wrappers that check every CUDA call and record failures on the context. */
#ifndef MF_CUDA_H
#define MF_CUDA_H

#include "../mfree_impl.h"

#ifdef __cplusplus
extern "C" {
#endif

/** Number of usable CUDA devices (0 on error or without a driver). */
int mf_cuda_device_count(void);
int mf_cuda_context_init(mf_context ctx);
void mf_cuda_context_finalize(mf_context ctx);
/** Wait for all device work of the context (errors are left to the next checked call). */
void mf_cuda_synchronize(mf_context ctx);
int mf_cuda_space_setup(mf_space space);
void mf_cuda_space_free(mf_space space);
int mf_cuda_vector_setup(mf_vector v);
int mf_cuda_operator_setup(mf_operator op);

#ifdef __cplusplus
}
#endif
#endif
