/* fake_libcuda.c -- a stand-in for the CUDA driver library, built as fake-cuda-driver/libcuda.so.1 and
 * put first on LD_LIBRARY_PATH by the test cuda_status_fault: a driver that is installed but older
 * than the runtime (it says CUDA 11.0), as on a GPU machine whose driver was not updated with the
 * toolkit. The runtime loads it, asks its version first and stops with cudaErrorInsufficientDriver;
 * mf_cuda_status must call that a fault, not a machine without a GPU. */
int cuDriverGetVersion(int *version);

int cuDriverGetVersion(int *version)
{
  if (!version) return 1; /* CUDA_ERROR_INVALID_VALUE */
  *version = 11000;
  return 0; /* CUDA_SUCCESS */
}
