/* context.c -- the mf_context object: references, device memory, set-up phase times, the backend's
 * name. It is made on a registered backend by mf_context_create (lib/backend.c); its error messages,
 * allocation and phases are in lib/base/. */
#include "base/mf_backend.h"

static void context_free(mf_context c)
{
  for (int i = c->nreleases - 1; i >= 0; i--) c->releases[i].fn(c->releases[i].arg);
  free(c->releases);
  free(c->cache_dir);
  if (c->cuda) c->bk->context.finalize(c);
  MPI_Comm_free(&c->comm);
  free(c);
}

int mf_context_destroy(mf_context *ctx)
{
  if (!ctx || !*ctx) return 0;
  mf_context c = *ctx;
  *ctx = NULL;
  mf_context_release(c);
  return 0;
}

void mf_context_retain(mf_context ctx) { ctx->refs++; }

int mf_context_on_release(mf_context ctx, void (*fn)(void *), void *arg)
{
  struct mf_release_s *r = realloc(ctx->releases, sizeof *r * (size_t)(ctx->nreleases + 1));
  if (!r) {
    fn(arg);
    return mf_error_set(ctx, MF_ERR_MEMORY, __FILE__, __LINE__, __func__, "out of host memory (release list)");
  }
  ctx->releases = r;
  r[ctx->nreleases].fn = fn;
  r[ctx->nreleases].arg = arg;
  ctx->nreleases++;
  return 0;
}

void mf_context_release(mf_context ctx)
{
  if (ctx && --ctx->refs == 0) context_free(ctx);
}

int mf_context_set_device_memory_limit(mf_context ctx, size_t bytes)
{
  MF_CHECK(ctx, NULL, MF_ERR_NULL, "context is NULL");
  if (ctx->bk->context.memory) ctx->bk->context.memory(ctx, NULL, NULL, &bytes);
  return 0;
}

int mf_context_device_memory(mf_context ctx, size_t *in_use, size_t *peak)
{
  MF_CHECK(ctx, NULL, MF_ERR_NULL, "context is NULL");
  if (in_use) *in_use = 0;
  if (peak) *peak = 0;
  if (ctx->bk->context.memory) ctx->bk->context.memory(ctx, in_use, peak, NULL);
  return 0;
}

/* ------------------------------------------------------------------ set-up phases */

static const char *const phase_names[MF_PHASE_COUNT] = {"mesh", "dofs", "ordering", "coordinates", "geometry",
                                                         "coefficient", "dirichlet", "h2d", "rhs", "diagonal",
                                                         "solver", "compile", "eigenvalues",
                                                         "transfers", "pattern", "assembly"};

const char *mf_phase_name(mf_phase phase)
{
  return (int)phase >= 0 && phase < MF_PHASE_COUNT ? phase_names[phase] : "unknown";
}

int mf_context_phase_times(mf_context ctx, double seconds[MF_PHASE_COUNT])
{
  MF_CHECK(ctx, NULL, MF_ERR_NULL, "context is NULL");
  MF_CHECK(seconds, ctx, MF_ERR_NULL, "output array seconds is NULL");
  memcpy(seconds, ctx->phase_s, sizeof ctx->phase_s);
  return 0;
}

int mf_context_phase_reset(mf_context ctx)
{
  MF_CHECK(ctx, NULL, MF_ERR_NULL, "context is NULL");
  memset(ctx->phase_s, 0, sizeof ctx->phase_s);
  return 0;
}

const char *mf_context_backend(mf_context ctx)
{
  if (!ctx) return "none";
  return ctx->bk->name;
}

int mf_context_comm(mf_context ctx, MPI_Comm *comm)
{
  MF_CHECK(ctx, NULL, MF_ERR_NULL, "context is NULL");
  MF_CHECK(comm, ctx, MF_ERR_NULL, "output pointer comm is NULL");
  *comm = ctx->comm;
  return 0;
}
