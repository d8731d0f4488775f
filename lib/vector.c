/* vector.c -- distributed vectors (owned then ghost entries) and their CPU backend; vector
 * functions that need the mesh geometry (interpolation, right-hand sides, L2 errors) run on the
 * host for every backend and move the result once. */
#include "mfree_impl.h"

#include <math.h>

#ifdef MFREE_WITH_CUDA
#include "cuda/mf_cuda.h"
#endif

/* ------------------------------------------------------------------ CPU backend */

static int set_value_cpu(mf_vector v, double a)
{
  for (int i = 0; i < v->n; i++) v->data[i] = a;
  return 0;
}
static int copy_cpu(mf_vector d, mf_vector s)
{
  memcpy(d->data, s->data, sizeof(double) * (size_t)s->n);
  return 0;
}
static int axpy_cpu(mf_vector y, double a, mf_vector x)
{
  const int n = y->space->nowned;
  for (int i = 0; i < n; i++) y->data[i] += a * x->data[i];
  return 0;
}
static int scale_cpu(mf_vector v, double a)
{
  for (int i = 0; i < v->n; i++) v->data[i] *= a;
  return 0;
}
static int dot_local_cpu(mf_vector x, mf_vector y, double *r)
{
  double s = 0.0;
  const int n = x->space->nowned;
  for (int i = 0; i < n; i++) s += x->data[i] * y->data[i];
  *r = s;
  return 0;
}
static int sum_local_cpu(mf_vector x, double *r)
{
  double s = 0.0;
  for (int i = 0; i < x->space->nowned; i++) s += x->data[i];
  *r = s;
  return 0;
}
static int pmult_cpu(mf_vector w, mf_vector x, mf_vector y)
{
  for (int i = 0; i < w->space->nowned; i++) w->data[i] = x->data[i] * y->data[i];
  return 0;
}
static int aypx_cpu(mf_vector y, double a, mf_vector x)
{
  for (int i = 0; i < y->space->nowned; i++) y->data[i] = x->data[i] + a * y->data[i];
  return 0;
}
static int reciprocal_cpu(mf_vector v)
{
  for (int i = 0; i < v->space->nowned; i++) v->data[i] = 1.0 / v->data[i];
  return 0;
}
static int bc_zero_cpu(mf_vector v)
{
  const unsigned char *bc = v->space->bc;
  for (int i = 0; i < v->n; i++)
    if (bc[i]) v->data[i] = 0.0;
  return 0;
}
static int bc_set_cpu(mf_vector d, mf_vector s)
{
  const unsigned char *bc = d->space->bc;
  for (int i = 0; i < d->n; i++)
    if (bc[i]) d->data[i] = s ? s->data[i] : 1.0;
  return 0;
}
static int import_cpu(mf_vector v) { return mf_exchange_import(v->space->ctx, &v->space->ex, v->data); }
static int export_add_cpu(mf_vector v) { return mf_exchange_export_add(v->space->ctx, &v->space->ex, v->data); }
static int to_host_cpu(mf_vector v, double *h, int n)
{
  memcpy(h, v->data, sizeof(double) * (size_t)n);
  return 0;
}
static int from_host_cpu(mf_vector v, const double *h, int n)
{
  memcpy(v->data, h, sizeof(double) * (size_t)n);
  return 0;
}
static int destroy_cpu(mf_vector v)
{
  free(v->data);
  return 0;
}

static const mf_vector_ops vector_ops_cpu = {
    .set_value = set_value_cpu, .copy = copy_cpu,         .axpy = axpy_cpu,         .scale = scale_cpu,
    .dot_local = dot_local_cpu, .sum_local = sum_local_cpu, .pmult = pmult_cpu,     .aypx = aypx_cpu,
    .reciprocal = reciprocal_cpu, .bc_zero = bc_zero_cpu, .bc_set = bc_set_cpu,     .import = import_cpu,
    .export_add = export_add_cpu, .to_host = to_host_cpu, .from_host = from_host_cpu, .destroy = destroy_cpu};

/* ------------------------------------------------------------------ interface */

int mf_vector_create(mf_space space, mf_vector *v)
{
  MF_CHECK(space, NULL, MF_ERR_NULL, "space is NULL");
  mf_context ctx = space->ctx;
  MF_CHECK(v, ctx, MF_ERR_NULL, "output pointer v is NULL");
  *v = NULL;
  mf_vector x;
  MF_CALL(MF_CALLOC(ctx, 1, &x));
  x->space = space;
  x->backend = ctx->backend;
  x->n = space->nlocal;
  int ierr = 0;
  if (x->backend == MF_BACKEND_CPU) {
    x->ops = vector_ops_cpu;
    ierr = MF_CALLOC(ctx, x->n, &x->data);
  }
#ifdef MFREE_WITH_CUDA
  else ierr = mf_cuda_vector_setup(x);
#endif
  if (ierr) {
    free(x);
    return ierr;
  }
  *v = x;
  return 0;
}

int mf_vector_destroy(mf_vector *v)
{
  if (!v || !*v) return 0;
  (*v)->ops.destroy(*v);
  free(*v);
  *v = NULL;
  return 0;
}

int mf_vector_check_pair(mf_vector a, mf_vector b, const char *an, const char *bn)
{
  MF_CHECK(a, NULL, MF_ERR_NULL, "vector %s is NULL", an);
  MF_CHECK(b, a->space->ctx, MF_ERR_NULL, "vector %s is NULL", bn);
  MF_CHECK(a->space == b->space, a->space->ctx, MF_ERR_INCOMPATIBLE,
           "vectors %s and %s belong to different spaces (%lld and %lld DoFs)", an, bn,
           (long long)a->space->nglobal, (long long)b->space->nglobal);
  return 0;
}

int mf_vector_set_value(mf_vector v, double value)
{
  MF_CHECK(v, NULL, MF_ERR_NULL, "vector is NULL");
  return v->ops.set_value(v, value);
}

int mf_vector_copy(mf_vector dst, mf_vector src)
{
  MF_CALL(mf_vector_check_pair(dst, src, "dst", "src"));
  return dst->ops.copy(dst, src);
}

int mf_vector_axpy(mf_vector y, double alpha, mf_vector x)
{
  MF_CALL(mf_vector_check_pair(y, x, "y", "x"));
  return y->ops.axpy(y, alpha, x);
}

int mf_vector_scale(mf_vector v, double alpha)
{
  MF_CHECK(v, NULL, MF_ERR_NULL, "vector is NULL");
  return v->ops.scale(v, alpha);
}

static int allreduce_sum(mf_context ctx, double *val)
{
  int rc = MPI_Allreduce(MPI_IN_PLACE, val, 1, MPI_DOUBLE, MPI_SUM, ctx->comm);
  MF_CHECK(rc == MPI_SUCCESS, ctx, MF_ERR_MPI, "MPI_Allreduce failed (%d)", rc);
  return 0;
}

int mf_vector_dot(mf_vector x, mf_vector y, double *result)
{
  MF_CALL(mf_vector_check_pair(x, y, "x", "y"));
  MF_CHECK(result, x->space->ctx, MF_ERR_NULL, "output pointer result is NULL");
  MF_CALL(x->ops.dot_local(x, y, result));
  return allreduce_sum(x->space->ctx, result);
}

int mf_vector_norm2(mf_vector x, double *result)
{
  MF_CALL(mf_vector_dot(x, x, result));
  *result = sqrt(*result);
  return 0;
}

int mf_vector_sum(mf_vector x, double *result)
{
  MF_CHECK(x, NULL, MF_ERR_NULL, "vector is NULL");
  MF_CHECK(result, x->space->ctx, MF_ERR_NULL, "output pointer result is NULL");
  MF_CALL(x->ops.sum_local(x, result));
  return allreduce_sum(x->space->ctx, result);
}

int mf_vector_get_values(mf_vector v, double *host)
{
  MF_CHECK(v, NULL, MF_ERR_NULL, "vector is NULL");
  MF_CHECK(host, v->space->ctx, MF_ERR_NULL, "host array is NULL");
  return v->ops.to_host(v, host, v->space->nowned);
}

int mf_vector_set_values(mf_vector v, const double *host)
{
  MF_CHECK(v, NULL, MF_ERR_NULL, "vector is NULL");
  MF_CHECK(host, v->space->ctx, MF_ERR_NULL, "host array is NULL");
  return v->ops.from_host(v, host, v->space->nowned);
}

/* ------------------------------------------------------------------ geometry-aware functions */

/* Host copy of all local entries (owned + ghost); for the CPU backend the array itself. */
static int host_begin(mf_vector v, double **h)
{
  if (v->backend == MF_BACKEND_CPU) {
    *h = v->data;
    return 0;
  }
  MF_CALL(MF_CALLOC(v->space->ctx, v->n, h));
  int ierr = v->ops.to_host(v, *h, v->n);
  if (ierr) free(*h);
  return ierr;
}
static int host_end(mf_vector v, double *h, int write)
{
  int ierr = 0;
  if (v->backend == MF_BACKEND_CPU) return 0;
  if (write) ierr = v->ops.from_host(v, h, v->n);
  free(h);
  return ierr;
}

/* Calls fn(x, dof, user) once per local DoF seen from a cell at a position of its own (positions on
 * hanging faces or edges hold a coarse neighbour's DoF, at another point, and are skipped). seen[dof]
 * is set for the DoFs visited. */
typedef void (*node_fn)(const double *x, int dof, void *data);
static int for_each_node(mf_space s, node_fn fn, void *data, unsigned char *seen)
{
  double *X;
  MF_CALL(MF_CALLOC(s->ctx, (size_t)s->npc * s->dim, &X));
  for (int e = 0; e < s->ncells; e++) {
    mf_space_cell_coords(s, e, X);
    const int mask = s->face_code[e];
    for (int k = 0; k < s->npc; k++) {
      int dof = s->cell_nodes[(size_t)e * s->npc + k];
      if (seen[dof] || (mask && mf_hanging_node_constrained(s->dim, s->n1, mask, k))) continue;
      seen[dof] = 1;
      fn(&X[k * s->dim], dof, data);
    }
  }
  free(X);
  return 0;
}

/* Fill h (owned + ghost) by fn at every DoF. A DoF that this rank sees only through hanging
 * positions gets its value from the ranks that see it: export-add of the values and of the counts,
 * then import. */
static int fill_nodes(mf_space s, double *h, node_fn fn, void *data)
{
  unsigned char *seen = NULL;
  double *cnt = NULL;
  int ierr = MF_CALLOC(s->ctx, s->nlocal, &seen);
  if (!ierr) ierr = MF_CALLOC(s->ctx, s->nlocal, &cnt);
  for (int i = 0; i < s->nlocal && !ierr; i++) h[i] = 0.0;
  if (!ierr) ierr = for_each_node(s, fn, data, seen);
  if (!ierr && s->ex.nneigh) {
    for (int i = 0; i < s->nlocal; i++) {
      cnt[i] = seen[i];
      if (!seen[i]) h[i] = 0.0;
    }
    ierr = mf_exchange_export_add(s->ctx, &s->ex, h);
    if (!ierr) ierr = mf_exchange_export_add(s->ctx, &s->ex, cnt);
    for (int i = 0; i < s->nowned && !ierr; i++)
      if (cnt[i] > 0) h[i] /= cnt[i];
    if (!ierr) ierr = mf_exchange_import(s->ctx, &s->ex, h);
  }
  free(seen);
  free(cnt);
  return ierr;
}

typedef struct {
  double *h;
  mf_coefficient_fn f;
  void *user;
  int dim, boundary_only;
  const unsigned char *bc;
  uint64_t seed;
} node_data;

static void interp_node(const double *x, int dof, void *p)
{
  node_data *d = (node_data *)p;
  if (d->boundary_only) d->h[dof] = d->bc[dof] ? d->f(x, d->dim, d->user) : 0.0;
  else d->h[dof] = d->f(x, d->dim, d->user);
}

int mf_vector_interpolate(mf_vector v, mf_coefficient_fn f, void *user)
{
  MF_CHECK(v, NULL, MF_ERR_NULL, "vector is NULL");
  MF_CHECK(f, v->space->ctx, MF_ERR_NULL, "function f is NULL");
  double *h;
  MF_CALL(host_begin(v, &h));
  node_data d = {h, f, user, v->space->dim, 0, v->space->bc, 0};
  int ierr = fill_nodes(v->space, h, interp_node, &d);
  int ierr2 = host_end(v, h, !ierr);
  return ierr ? ierr : ierr2;
}

static int set_boundary(mf_vector x, mf_coefficient_fn g, void *user)
{
  MF_CHECK(x, NULL, MF_ERR_NULL, "vector is NULL");
  MF_CHECK(g, x->space->ctx, MF_ERR_NULL, "function g is NULL");
  double *h;
  MF_CALL(host_begin(x, &h));
  node_data d = {h, g, user, x->space->dim, 1, x->space->bc, 0};
  int ierr = fill_nodes(x->space, h, interp_node, &d);
  int ierr2 = host_end(x, h, !ierr);
  return ierr ? ierr : ierr2;
}

int mf_vector_zero_boundary(mf_vector x)
{
  MF_CHECK(x, NULL, MF_ERR_NULL, "vector is NULL");
  return x->ops.bc_zero(x);
}

/* splitmix64: a well-mixed 64-bit hash */
static uint64_t mix64(uint64_t z)
{
  z += 0x9e3779b97f4a7c15ULL;
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

static void random_node(const double *x, int dof, void *p)
{
  node_data *d = (node_data *)p;
  /* hash of the position rounded to 1e-9: the same on every partition */
  uint64_t h = mix64(d->seed);
  for (int k = 0; k < d->dim; k++) h = mix64(h ^ (uint64_t)(int64_t)llround(x[k] * 1e9));
  d->h[dof] = 2.0 * ((double)(h >> 11) * (1.0 / 9007199254740992.0)) - 1.0;
}

int mf_vector_set_random(mf_vector v, uint64_t seed)
{
  MF_CHECK(v, NULL, MF_ERR_NULL, "vector is NULL");
  double *h;
  MF_CALL(host_begin(v, &h));
  node_data d = {h, NULL, NULL, v->space->dim, 0, NULL, seed};
  int ierr = fill_nodes(v->space, h, random_node, &d);
  int ierr2 = host_end(v, h, !ierr);
  return ierr ? ierr : ierr2;
}

/* Host-side integration over the cells with Gauss q = p + 2: per cell, points and w |det J|. */
typedef struct {
  mf_basis1d b;
  int nqp;
  mf_geom_work gw;
  double *xq, *jac, *wdet;
} cell_quad;

static int cell_quad_init(mf_space s, cell_quad *cq)
{
  memset(cq, 0, sizeof *cq);
  mf_basis1d_setup(s->degree, MF_QUAD_GAUSS_P2, &cq->b);
  cq->nqp = 1;
  for (int k = 0; k < s->dim; k++) cq->nqp *= cq->b.nq;
  int ierr = mf_geom_work_init(s, &cq->b, &cq->gw);
  if (!ierr) ierr = MF_CALLOC(s->ctx, (size_t)cq->nqp * s->dim, &cq->xq);
  if (!ierr) ierr = MF_CALLOC(s->ctx, (size_t)cq->nqp * 9, &cq->jac);
  if (!ierr) ierr = MF_CALLOC(s->ctx, (size_t)cq->nqp, &cq->wdet);
  return ierr;
}
static void cell_quad_free(cell_quad *cq)
{
  mf_geom_work_free(&cq->gw);
  free(cq->xq);
  free(cq->jac);
  free(cq->wdet);
}
static void cell_quad_geometry(mf_space s, int cell, cell_quad *cq)
{
  mf_cell_geometry(s, &cq->b, cell, &cq->gw, cq->xq, cq->jac);
  for (int q = 0; q < cq->nqp; q++) cq->wdet[q] = mf_qweight(s->dim, &cq->b, q) * fabs(mf_det(s->dim, &cq->jac[9 * q]));
}

static int assemble_rhs(mf_vector bvec, mf_coefficient_fn f, void *user)
{
  MF_CHECK(bvec, NULL, MF_ERR_NULL, "vector is NULL");
  mf_space s = bvec->space;
  MF_CHECK(f, s->ctx, MF_ERR_NULL, "function f is NULL");
  const int dim = s->dim;
  double *h = NULL;
  cell_quad cq;
  int ierr = cell_quad_init(s, &cq);
  if (!ierr) ierr = host_begin(bvec, &h);
  if (ierr) {
    cell_quad_free(&cq);
    return ierr;
  }
  for (int i = 0; i < s->nlocal; i++) h[i] = 0.0;
  const int nqp = cq.nqp;
  double fq[MF_MAX_NQ * MF_MAX_NQ * MF_MAX_NQ], be[MF_MAX_N1 * MF_MAX_N1 * MF_MAX_N1];
  for (int e = 0; e < s->ncells; e++) {
    cell_quad_geometry(s, e, &cq);
    for (int q = 0; q < nqp; q++) fq[q] = f(&cq.xq[q * dim], dim, user) * cq.wdet[q];
    mf_tensor_integrate(dim, &cq.b, fq, be, cq.gw.t1, cq.gw.t2); /* be = (B^T x B^T x B^T) fq */
    mf_hanging_apply(dim, s->n1, s->face_code[e], s->hanging_P, be, 1);
    for (int k = 0; k < s->npc; k++) h[s->cell_nodes[(size_t)e * s->npc + k]] += be[k];
  }
  cell_quad_free(&cq);
  ierr = mf_exchange_export_add(s->ctx, &s->ex, h);
  int ierr2 = host_end(bvec, h, !ierr);
  return ierr ? ierr : ierr2;
}

int mf_vector_l2_error(mf_vector uh, mf_coefficient_fn u, void *user, double *err)
{
  MF_CHECK(uh, NULL, MF_ERR_NULL, "vector is NULL");
  mf_space s = uh->space;
  MF_CHECK(u, s->ctx, MF_ERR_NULL, "function u is NULL");
  MF_CHECK(err, s->ctx, MF_ERR_NULL, "output pointer err is NULL");
  const int dim = s->dim;
  double *h = NULL;
  cell_quad cq;
  int ierr = cell_quad_init(s, &cq);
  if (!ierr) ierr = host_begin(uh, &h);
  if (ierr) {
    cell_quad_free(&cq);
    return ierr;
  }
  ierr = mf_exchange_import(s->ctx, &s->ex, h);
  const int nqp = cq.nqp;
  double ue[MF_MAX_N1 * MF_MAX_N1 * MF_MAX_N1], uq[MF_MAX_NQ * MF_MAX_NQ * MF_MAX_NQ], sum = 0.0;
  for (int e = 0; e < s->ncells && !ierr; e++) {
    cell_quad_geometry(s, e, &cq);
    for (int k = 0; k < s->npc; k++) ue[k] = h[s->cell_nodes[(size_t)e * s->npc + k]];
    mf_hanging_apply(dim, s->n1, s->face_code[e], s->hanging_P, ue, 0);
    mf_tensor_interpolate(dim, &cq.b, ue, uq, cq.gw.t1, cq.gw.t2);
    for (int q = 0; q < nqp; q++) {
      double d = uq[q] - u(&cq.xq[q * dim], dim, user);
      sum += d * d * cq.wdet[q];
    }
  }
  cell_quad_free(&cq);
  int ierr2 = host_end(uh, h, 0);
  if (ierr) return ierr;
  if (ierr2) return ierr2;
  MF_CALL(allreduce_sum(s->ctx, &sum));
  *err = sqrt(sum);
  return 0;
}

/* timed entry points of the set-up phases */
int mf_vector_set_boundary(mf_vector x, mf_coefficient_fn g, void *user)
{
  MF_CHECK(x, NULL, MF_ERR_NULL, "vector is NULL");
  mf_context ctx = x->space->ctx;
  double t0 = mf_phase_begin(ctx);
  int ierr = set_boundary(x, g, user);
  mf_phase_end(ctx, MF_PHASE_DIRICHLET, t0);
  return ierr;
}

int mf_vector_assemble_rhs(mf_vector b, mf_coefficient_fn f, void *user)
{
  MF_CHECK(b, NULL, MF_ERR_NULL, "vector is NULL");
  mf_context ctx = b->space->ctx;
  double t0 = mf_phase_begin(ctx);
  int ierr = assemble_rhs(b, f, user);
  mf_phase_end(ctx, MF_PHASE_RHS, t0);
  return ierr;
}
