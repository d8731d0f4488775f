/* source_fields.c -- pointwise fields given as C source (mfree.h, mf_source): interpolation, boundary
 * values, right-hand sides and L2 errors. On a backend with source kernels (cuda, lib/cuda/source.cu
 * and simplex_source.cu) they are evaluated on the device; everywhere else the text is compiled by the system C compiler
 * (lib/physics/source.c's cache) and runs through the host functions of the callbacks (lib/vector.c), its
 * CPU twin. */
#include "physics/mf_physics_impl.h"
#include "physics/mf_source.h"
#include "family.h"
#include "vector_impl.h"
#include "base/mf_backend.h"

#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

int mf_source_create(mf_context ctx, const char *text, const char *name, int ncomp, mf_source *src)
{
  if (src) *src = NULL;
  MF_CHECK(ctx, NULL, MF_ERR_NULL, "context is NULL");
  MF_CHECK(text, ctx, MF_ERR_NULL, "source text is NULL");
  MF_CHECK(name, ctx, MF_ERR_NULL, "function name is NULL");
  MF_CHECK(src, ctx, MF_ERR_NULL, "output pointer src is NULL");
  MF_CHECK(ncomp >= 1 && ncomp <= MF_MAX_COMPONENTS, ctx, MF_ERR_ARGUMENT, "field components %d out of range 1..%d",
           ncomp, MF_MAX_COMPONENTS);
  const size_t n = strlen(name);
  int ok = n > 0 && n < 48 && (isalpha((unsigned char)name[0]) || name[0] == '_');
  for (size_t i = 0; ok && i < n; i++) ok = isalnum((unsigned char)name[i]) || name[i] == '_';
  MF_CHECK(ok, ctx, MF_ERR_ARGUMENT, "function name '%s' is not a C identifier of at most 47 characters", name);
  mf_source s = NULL;
  MF_CALL(MF_CALLOC(ctx, 1, &s));
  const int ierr = MF_CALLOC(ctx, strlen(text) + 1, &s->text);
  if (ierr) {
    free(s);
    return ierr;
  }
  strcpy(s->text, text);
  snprintf(s->name, sizeof s->name, "%s", name);
  s->ctx = ctx;
  s->ncomp = ncomp;
  *src = s;
  return 0;
}

int mf_source_set_constants(mf_source src, int n, const double *k)
{
  MF_CHECK(src, NULL, MF_ERR_NULL, "source is NULL");
  MF_CHECK(n >= 0 && n <= MF_PHYS_MAX_CONSTANTS, src->ctx, MF_ERR_ARGUMENT, "constants: %d out of range 0..%d", n,
           MF_PHYS_MAX_CONSTANTS);
  MF_CHECK(n == 0 || k, src->ctx, MF_ERR_NULL, "constants k is NULL");
  for (int i = 0; i < n; i++) src->k[i] = k[i];
  for (int i = n; i < MF_PHYS_MAX_CONSTANTS; i++) src->k[i] = 0.0;
  src->nk = n;
  return 0;
}

int mf_source_destroy(mf_source *src)
{
  if (!src || !*src) return 0;
  if ((*src)->host_made) mf_phys_release(&(*src)->host);
  free((*src)->text);
  free(*src);
  *src = NULL;
  return 0;
}

/* the host path: the text and a glue function with the physics' signature, compiled once */
static int host_function(mf_source s)
{
  if (s->host_made) return 0;
  const char *glue = "\nvoid mfree_source_glue(int dim, int nc, const double *u, const double *du, const double *x,\n"
                     "                        const double *k, double *out)\n"
                     "{\n  (void)nc, (void)u, (void)du;\n  %s(dim, x, k, out);\n}\n";
  const size_t len = strlen(s->text) + strlen(glue) + sizeof s->name + 1;
  char *full = NULL;
  MF_CALL(MF_CALLOC(s->ctx, len, &full));
  const int at = snprintf(full, len, "%s", s->text);
  snprintf(full + at, len - (size_t)at, glue, s->name);
  mf_phys ph;
  memset(&ph, 0, sizeof ph);
  ph.ncomp = s->ncomp;
  ph.name = "source";
  int ierr = mf_phys_source_set(&ph, s->ctx, full, strlen(full), "field source", "f0=mfree_source_glue");
  free(full);
  if (!ierr) ierr = mf_phys_compile_cpu(s->ctx, &ph);
  if (ierr) {
    mf_phys_release(&ph);
    return ierr;
  }
  s->host = ph;
  s->host_made = 1;
  return 0;
}

/* the callbacks' form of the compiled function */
static void call_field(const double *x, int dim, double *value, void *user)
{
  const mf_source s = (const mf_source)user;
  s->host.f[0](dim, s->ncomp, NULL, NULL, x, s->k, value);
}
static double call_scalar(const double *x, int dim, void *user)
{
  double v[MF_MAX_COMPONENTS] = {0.0};
  call_field(x, dim, v, user);
  return v[0];
}

/* whether the device evaluates it: a backend with source kernels (cuda: for both families) */
static int on_device(const mf_space s) { return s->ctx->bk->source.nodes != NULL; }

/* the end of a set-up phase that a run-time compile may have run inside: the compile is its own phase */
static void phase_end_less_compile(mf_context ctx, mf_phase phase, double t0, double compile0)
{
  mf_phase_end(ctx, phase, t0 + (ctx->phase_s[MF_PHASE_COMPILE] - compile0));
}

static int check(mf_vector v, mf_source f, const char *what)
{
  MF_CHECK(v, NULL, MF_ERR_NULL, "vector is NULL");
  mf_context ctx = v->space->ctx;
  MF_CHECK(f, ctx, MF_ERR_NULL, "source %s is NULL", what);
  MF_CHECK(f->ctx == ctx, ctx, MF_ERR_INCOMPATIBLE, "the source belongs to another context than the vector");
  MF_CHECK(f->ncomp == v->space->ncomp, ctx, MF_ERR_INCOMPATIBLE, "the source '%s' has %d components, the space %d",
           f->name, f->ncomp, v->space->ncomp);
  MF_CALL(mf_space_check_mesh(v->space));
  /* the host path: the function compiled once (collective: a refusal on one rank is every rank's) */
  return on_device(v->space) ? 0 : mf_agree(ctx, host_function(f));
}

/* the device's values at the nodes of v, taken for writing by the caller */
static int device_nodes(mf_vector v, mf_source f, int boundary)
{
  mf_context ctx = v->space->ctx;
  return mf_vector_written(v, mf_agree(ctx, ctx->bk->source.nodes(f, v, boundary)));
}

int mf_vector_interpolate_source(mf_vector v, mf_source f)
{
  MF_CALL(check(v, f, "f"));
  if (!on_device(v->space)) return mf_vector_interpolate_field(v, call_field, f);
  MF_CALL(mf_vector_access_all(v, MF_ACCESS_WRITE, "v"));
  return device_nodes(v, f, 0);
}

int mf_vector_set_boundary_source(mf_vector x, mf_source g)
{
  MF_CALL(check(x, g, "g"));
  mf_context ctx = x->space->ctx;
  if (!on_device(x->space)) return mf_vector_set_boundary_field(x, call_field, g); /* it times its phase */
  MF_CALL(mf_vector_access_all(x, MF_ACCESS_WRITE, "x"));
  const double t0 = mf_phase_begin(ctx), c0 = ctx->phase_s[MF_PHASE_COMPILE];
  const int ierr = device_nodes(x, g, 1);
  phase_end_less_compile(ctx, MF_PHASE_DIRICHLET, t0, c0);
  return ierr;
}

int mf_vector_assemble_rhs_source(mf_vector b, mf_source f)
{
  MF_CALL(check(b, f, "f"));
  mf_context ctx = b->space->ctx;
  MF_CHECK(b->space->ncomp == 1, ctx, MF_ERR_UNSUPPORTED,
           "right-hand sides of spaces of %d components: not supported (a load of several components is a "
           "physics' f0: mf_operator_residual)", b->space->ncomp);
  if (!on_device(b->space)) return mf_vector_assemble_rhs(b, call_scalar, f);
  MF_CALL(mf_vector_access_all(b, MF_ACCESS_READ_WRITE, "b"));
  const double t0 = mf_phase_begin(ctx), c0 = ctx->phase_s[MF_PHASE_COMPILE];
  int ierr = mf_agree(ctx, ctx->bk->source.rhs(f, b)); /* collective: the export-add waits for every neighbour */
  if (!ierr) ierr = b->ops.export_add(b);
  phase_end_less_compile(ctx, MF_PHASE_RHS, t0, c0);
  return mf_vector_written(b, ierr);
}

int mf_vector_l2_error_source(mf_vector uh, mf_source u, double *err)
{
  MF_CALL(check(uh, u, "u"));
  mf_context ctx = uh->space->ctx;
  MF_CHECK(err, ctx, MF_ERR_NULL, "output pointer err is NULL");
  if (!on_device(uh->space)) return mf_vector_l2_error_field(uh, call_field, u, err);
  MF_CALL(mf_vector_access_all(uh, MF_ACCESS_READ, "uh"));
  double sum = 0.0;
  int ierr = uh->ops.import(uh); /* the cells read their ghost entries: current values (every rank) */
  if (!ierr) ierr = ctx->bk->source.l2(u, uh, &sum);
  MF_CALL(mf_sum_over_ranks(ctx, &sum, ierr));
  *err = sqrt(sum);
  return 0;
}
