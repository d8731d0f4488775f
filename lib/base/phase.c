/* phase.c -- the bottom of the library: the timed set-up phases (mf_context_phase_times). A phase
 * waits for the context's device work at both ends (its backend's synchronize, lib/base/mf_backend.h),
 * so that asynchronous kernels are counted in the phase that launched them. Calls nothing above
 * lib/base/. */
#include "base/mf_backend.h"

static void device_sync(mf_context ctx);
void mf_device_sync(mf_context ctx) { device_sync(ctx); }

static void device_sync(mf_context ctx)
{
  if (ctx->bk->context.synchronize) ctx->bk->context.synchronize(ctx);
}

double mf_phase_begin(mf_context ctx)
{
  device_sync(ctx);
  return MPI_Wtime();
}

void mf_phase_end(mf_context ctx, mf_phase phase, double t0)
{
  device_sync(ctx);
  ctx->phase_s[phase] += MPI_Wtime() - t0;
}

