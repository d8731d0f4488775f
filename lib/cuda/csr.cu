// csr.cu -- the assembled operator's product on the device (sparse matrix-vector product).
#include "mf_cuda_common.cuh"
#include "mf_cuda.h"

extern "C" int mf_cuda_csr_ops(mf_operator A)
{
  MF_CHECK(0, A->ctx, MF_ERR_UNSUPPORTED, "the assembled operator's product is not available on backend 'cuda'");
  return 0;
}
