/* t32_cuda_status.c -- mf_cuda_status: why the cuda backend is usable or not, on any machine.
 *   t32_cuda_status            the plain environment: a valid state, the same on every call, agreeing
 *                              with mf_cuda_available, and with mf_context_create: "cuda" succeeds
 *                              where usable and is refused with the same reason elsewhere; "auto" takes
 *                              the GPU exactly where it is usable; a NULL state refused. Under
 *                              MFREE_TEST_REQUIRE_GPU=1 (GPU machines) the state must be usable.
 *   t32_cuda_status no-device  run with CUDA_VISIBLE_DEVICES=-1: MF_CUDA_NO_DEVICE, the CUDA error named
 *                              (cudaErrorNoDevice; on a machine without a CUDA driver
 *                              cudaErrorInsufficientDriver, "no CUDA driver is installed"); built
 *                              without CUDA: MF_CUDA_NOT_COMPILED
 *   t32_cuda_status fault      run with the stand-in driver tests/fake_libcuda.c first on
 *                              LD_LIBRARY_PATH (a driver older than the runtime): MF_CUDA_FAULT naming
 *                              cudaErrorInsufficientDriver and the driver's version, not available,
 *                              "cuda" refused with that reason, "auto" on the cpu
 * mf_cuda_status is asked before MPI_Init too (it needs neither MPI nor a context). */
#include "mf_test.h"

static const char *state_name(mf_cuda_state s)
{
  switch (s) {
  case MF_CUDA_USABLE: return "usable";
  case MF_CUDA_NOT_COMPILED: return "not compiled";
  case MF_CUDA_NO_DEVICE: return "no device";
  case MF_CUDA_FAULT: return "fault";
  default: return "(not a state)";
  }
}

/* mf_context_create with "cuda" and "auto" as the state says: usable, or refused with reason */
static void check_contexts(mf_cuda_state state, const char *reason)
{
  mf_context ctx = NULL;
  if (state == MF_CUDA_USABLE) {
    T_CALL(mf_context_create(MPI_COMM_WORLD, "cuda", &ctx));
    T_CHECK(!strcmp(mf_context_backend(ctx), "cuda"), "usable, yet backend '%s'", mf_context_backend(ctx));
    mf_context_destroy(&ctx);
  } else {
    EXPECT(mf_context_create(MPI_COMM_WORLD, "cuda", &ctx), MF_ERR_BACKEND, "backend 'cuda'");
    T_CHECK(ctx == NULL, "a refused context is not NULL");
    EXPECT(mf_context_create(MPI_COMM_WORLD, "cuda", &ctx), MF_ERR_BACKEND, reason); /* the same reason */
  }
  T_CALL(mf_context_create(MPI_COMM_WORLD, "auto", &ctx));
  const char *want = state == MF_CUDA_USABLE ? "cuda" : "cpu";
  T_CHECK(!strcmp(mf_context_backend(ctx), want), "state %s: \"auto\" took '%s', expected '%s'", state_name(state),
          mf_context_backend(ctx), want);
  mf_context_destroy(&ctx);
}

int main(int argc, char **argv)
{
  const char *mode = argc > 1 ? argv[1] : "plain";
  mf_cuda_state state = (mf_cuda_state)-1, again = (mf_cuda_state)-1;
  const char *reason = NULL, *reason2 = NULL;
  char first[512];
  /* before MPI_Init: no MPI needed */
  const int rc = mf_cuda_status(&state, &reason);
  snprintf(first, sizeof first, "%s", reason ? reason : "(null)");
  MPI_Init(&argc, &argv);
  T_CHECK(rc == 0, "mf_cuda_status returned %d", rc);
  T_CHECK(state == MF_CUDA_USABLE || state == MF_CUDA_NOT_COMPILED || state == MF_CUDA_NO_DEVICE ||
              state == MF_CUDA_FAULT,
          "mf_cuda_status: state %d is none of the four", (int)state);
  T_CHECK(reason && reason[0], "mf_cuda_status: no reason given (state %s)", state_name(state));
  T_CALL(mf_cuda_status(&again, &reason2));
  T_CHECK(again == state && reason2 && !strcmp(reason2, first), "a second call answers %s '%s', the first %s '%s'",
          state_name(again), reason2 ? reason2 : "(null)", state_name(state), first);
  T_CALL(mf_cuda_status(&again, NULL)); /* the reason is optional */
  T_CHECK(again == state, "without a reason pointer: %s, with one: %s", state_name(again), state_name(state));
  EXPECT(mf_cuda_status(NULL, &reason2), MF_ERR_NULL, "output pointer state is NULL");
  T_CHECK((state == MF_CUDA_USABLE) == (mf_cuda_available() == 1), "state %s, yet mf_cuda_available() = %d",
          state_name(state), mf_cuda_available());
#ifndef MFREE_WITH_CUDA
  T_CHECK(state == MF_CUDA_NOT_COMPILED && strstr(first, "built without the CUDA backend"),
          "built without CUDA, yet %s: '%s'", state_name(state), first);
#else
  T_CHECK(state != MF_CUDA_NOT_COMPILED, "built with CUDA, yet 'not compiled': '%s'", first);
  if (state == MF_CUDA_USABLE) T_CHECK(strstr(first, "CUDA device") != NULL, "usable: '%s'", first);
  else T_CHECK(strstr(first, "(cudaError") != NULL, "%s: the reason names no CUDA error: '%s'", state_name(state), first);
#endif
  if (!strcmp(mode, "no-device")) {
#ifdef MFREE_WITH_CUDA
    /* CUDA_VISIBLE_DEVICES=-1 hides every device: cudaErrorNoDevice; where no driver is installed at
     * all the runtime stops earlier, at the missing driver: "no device" as well */
    const int hidden = strstr(first, "no CUDA device: cudaGetDeviceCount failed: ") == first &&
                       strstr(first, "(cudaErrorNoDevice)") != NULL;
    const int nodriver = strstr(first, "no CUDA device: no CUDA driver is installed") == first &&
                         strstr(first, "(cudaErrorInsufficientDriver)") != NULL;
    T_CHECK(state == MF_CUDA_NO_DEVICE && (hidden || nodriver),
            "CUDA_VISIBLE_DEVICES=-1: %s '%s', expected no device (cudaErrorNoDevice, or no driver)",
            state_name(state), first);
#else
    T_CHECK(state == MF_CUDA_NOT_COMPILED, "without CUDA: %s '%s'", state_name(state), first);
#endif
  } else if (!strcmp(mode, "fault")) {
    /* the stand-in libcuda.so.1 says CUDA 11.0: a driver is there, too old for the runtime */
    T_CHECK(state == MF_CUDA_FAULT && strstr(first, "(cudaErrorInsufficientDriver)") &&
                strstr(first, "the driver supports CUDA 11.0, the runtime is "),
            "driver of CUDA 11.0: %s '%s', expected a fault naming cudaErrorInsufficientDriver and the versions",
            state_name(state), first);
  } else {
    T_CHECK(!strcmp(mode, "plain"), "unknown mode '%s' (plain, no-device or fault)", mode);
    /* on a GPU machine (MFREE_TEST_REQUIRE_GPU=1) anything but usable is a failure, with the reason */
    if (t_require_gpu())
      T_CHECK(state == MF_CUDA_USABLE, "MFREE_TEST_REQUIRE_GPU=1 but the cuda backend is not usable (%s): %s",
              state_name(state), first);
  }
  check_contexts(state, first);
  return t_finish();
}
