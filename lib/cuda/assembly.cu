// assembly.cu -- assembled operators on the device: the space's sparsity and the values.
#include "mf_cuda_common.cuh"
#include "mf_cuda.h"

extern "C" int mf_cuda_csr_pattern(mf_space space)
{
  MF_CHECK(0, space->ctx, MF_ERR_UNSUPPORTED, "assembly is not available on backend 'cuda'");
  return 0;
}

extern "C" int mf_cuda_assemble(mf_operator mfop, mf_assembly_variant v, mf_operator A)
{
  (void)v, (void)A;
  MF_CHECK(0, mfop->ctx, MF_ERR_UNSUPPORTED, "assembly is not available on backend 'cuda'");
  return 0;
}
