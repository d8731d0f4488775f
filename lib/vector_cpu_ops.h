/* vector_cpu_ops.h -- the CPU backend's vector operations for one scalar type. vector.c includes it
 * once per precision with
 *   MF_VT       the scalar type (double or float)
 *   MF_VD(v)    the vector's array of that type (v->data or v->sdata)
 *   MF_VS       the suffix of the names (_d or _s)
 * Reductions accumulate in double whatever the type. */
#define MF_VCAT_(a, b) a##b
#define MF_VCAT(a, b) MF_VCAT_(a, b)
#define MF_VFN(name) MF_VCAT(name, MF_VS)

static int MF_VFN(set_value)(mf_vector v, double a)
{
  MF_VT *x = MF_VD(v);
  for (int i = 0; i < v->n; i++) x[i] = (MF_VT)a;
  return 0;
}
static int MF_VFN(copy)(mf_vector d, mf_vector s)
{
  memcpy(MF_VD(d), MF_VD(s), sizeof(MF_VT) * (size_t)s->n);
  return 0;
}
static int MF_VFN(axpy)(mf_vector y, double a, mf_vector x)
{
  const int n = y->space->nowned;
  MF_VT *yd = MF_VD(y);
  const MF_VT *xd = MF_VD(x), aa = (MF_VT)a;
  for (int i = 0; i < n; i++) yd[i] += aa * xd[i];
  return 0;
}
static int MF_VFN(scale)(mf_vector v, double a)
{
  MF_VT *x = MF_VD(v);
  const MF_VT aa = (MF_VT)a;
  for (int i = 0; i < v->n; i++) x[i] *= aa;
  return 0;
}
static int MF_VFN(dot_local)(mf_vector x, mf_vector y, double *r)
{
  double s = 0.0;
  const int n = x->space->nowned;
  const MF_VT *xd = MF_VD(x), *yd = MF_VD(y);
  for (int i = 0; i < n; i++) s += (double)xd[i] * (double)yd[i];
  *r = s;
  return 0;
}
static int MF_VFN(sum_local)(mf_vector x, double *r)
{
  double s = 0.0;
  const MF_VT *xd = MF_VD(x);
  for (int i = 0; i < x->space->nowned; i++) s += xd[i];
  *r = s;
  return 0;
}
static int MF_VFN(pmult)(mf_vector w, mf_vector x, mf_vector y)
{
  MF_VT *wd = MF_VD(w);
  const MF_VT *xd = MF_VD(x), *yd = MF_VD(y);
  for (int i = 0; i < w->space->nowned; i++) wd[i] = xd[i] * yd[i];
  return 0;
}
static int MF_VFN(aypx)(mf_vector y, double a, mf_vector x)
{
  MF_VT *yd = MF_VD(y);
  const MF_VT *xd = MF_VD(x), aa = (MF_VT)a;
  for (int i = 0; i < y->space->nowned; i++) yd[i] = xd[i] + aa * yd[i];
  return 0;
}
static int MF_VFN(reciprocal)(mf_vector v)
{
  MF_VT *x = MF_VD(v);
  for (int i = 0; i < v->space->nowned; i++) x[i] = (MF_VT)1 / x[i];
  return 0;
}
static int MF_VFN(bc_zero)(mf_vector v)
{
  const unsigned char *bc = v->space->bc;
  MF_VT *x = MF_VD(v);
  for (int i = 0; i < v->n; i++)
    if (bc[i]) x[i] = 0;
  return 0;
}
static int MF_VFN(bc_set)(mf_vector d, mf_vector s)
{
  const unsigned char *bc = d->space->bc;
  MF_VT *x = MF_VD(d);
  for (int i = 0; i < d->n; i++)
    if (bc[i]) x[i] = s ? MF_VD(s)[i] : (MF_VT)1;
  return 0;
}
static int MF_VFN(bc_values)(mf_vector v, const double *vals)
{
  const mf_space s = v->space;
  MF_VT *x = MF_VD(v);
#pragma omp parallel for schedule(static)
  for (int i = 0; i < v->n; i++) x[i] = 0;
#pragma omp parallel for schedule(static)
  for (int k = 0; k < s->nbc; k++) x[s->bc_list[k]] = (MF_VT)vals[k];
  return 0;
}
static int MF_VFN(import)(mf_vector v)
{
  return mf_exchange_run(v->space->ctx, &v->space->ex, MF_VD(v), sizeof(MF_VT) == sizeof(float), 1);
}
static int MF_VFN(export_add)(mf_vector v)
{
  return mf_exchange_run(v->space->ctx, &v->space->ex, MF_VD(v), sizeof(MF_VT) == sizeof(float), 0);
}
static int MF_VFN(exchange_begin)(mf_vector v, int forward)
{
  return mf_exchange_begin(v->space->ctx, &v->space->ex, MF_VD(v), sizeof(MF_VT) == sizeof(float), forward);
}
static int MF_VFN(exchange_end)(mf_vector v, int forward)
{
  return mf_exchange_end(v->space->ctx, &v->space->ex, MF_VD(v), sizeof(MF_VT) == sizeof(float), forward);
}
static int MF_VFN(to_host)(mf_vector v, double *h, int n)
{
  const MF_VT *x = MF_VD(v);
  for (int i = 0; i < n; i++) h[i] = x[i];
  return 0;
}
static int MF_VFN(from_host)(mf_vector v, const double *h, int n)
{
  MF_VT *x = MF_VD(v);
  for (int i = 0; i < n; i++) x[i] = (MF_VT)h[i];
  return 0;
}
static int MF_VFN(convert)(mf_vector d, mf_vector s)
{
  MF_VT *x = MF_VD(d);
  if (s->prec == MF_PRECISION_FLOAT)
    for (int i = 0; i < d->n; i++) x[i] = (MF_VT)s->sdata[i];
  else
    for (int i = 0; i < d->n; i++) x[i] = (MF_VT)s->data[i];
  return 0;
}
static int MF_VFN(destroy)(mf_vector v)
{
  free(MF_VD(v));
  return 0;
}

#ifdef MF_VCG
/* CG's fused steps (mf_vector_ops): the CPU twins of k_cg_dot, k_cg_update and k_cg_direction
 * (lib/cuda/device.cu), with the same arithmetic as the unfused steps they replace (axpy, pmult, dot,
 * aypx), so that both give the same iterates on the CPU. */
static int MF_VFN(cg_update)(mf_vector x, mf_vector r, mf_vector p, mf_vector Ap, mf_vector dinv, double rz,
                             const double *pAp_global, double out[2])
{
  const int n = x->space->nowned;
  MF_VT *xd = MF_VD(x), *rd = MF_VD(r);
  const MF_VT *pd = MF_VD(p), *ad = MF_VD(Ap), *dd = dinv ? MF_VD(dinv) : NULL;
  double pAp = 0.0, s = 0.0;
  if (pAp_global) pAp = *pAp_global;
  else
    for (int i = 0; i < n; i++) pAp += (double)pd[i] * (double)ad[i];
  out[0] = pAp;
  out[1] = 0.0;
  if (!(isfinite(pAp) && pAp > 0.0)) return 0; /* x and r stay; CG reports p^T A p */
  const double alpha = rz / pAp;
  for (int i = 0; i < n; i++) {
    xd[i] += alpha * pd[i];
    const MF_VT ri = rd[i] - alpha * ad[i], zi = dd ? dd[i] * ri : ri;
    rd[i] = ri;
    s += (double)ri * (double)zi;
  }
  out[1] = s;
  return 0;
}
static int MF_VFN(cg_direction)(mf_vector p, mf_vector r, mf_vector dinv, double beta)
{
  const int n = p->space->nowned;
  MF_VT *pd = MF_VD(p);
  const MF_VT *rd = MF_VD(r), *dd = dinv ? MF_VD(dinv) : NULL;
  for (int i = 0; i < n; i++) pd[i] = (dd ? dd[i] * rd[i] : rd[i]) + beta * pd[i];
  return 0;
}
#define MF_VCG_OPS , .cg_update = MF_VFN(cg_update), .cg_direction = MF_VFN(cg_direction)
#else
#define MF_VCG_OPS
#endif

static const mf_vector_ops MF_VFN(vector_ops_cpu) = {
    .set_value = MF_VFN(set_value), .copy = MF_VFN(copy), .axpy = MF_VFN(axpy), .scale = MF_VFN(scale),
    .dot_local = MF_VFN(dot_local), .sum_local = MF_VFN(sum_local), .pmult = MF_VFN(pmult), .aypx = MF_VFN(aypx),
    .reciprocal = MF_VFN(reciprocal), .bc_zero = MF_VFN(bc_zero), .bc_set = MF_VFN(bc_set),
    .bc_values = MF_VFN(bc_values), .import = MF_VFN(import), .export_add = MF_VFN(export_add),
    .exchange_begin = MF_VFN(exchange_begin), .exchange_end = MF_VFN(exchange_end),
    .to_host = MF_VFN(to_host), .from_host = MF_VFN(from_host), .convert = MF_VFN(convert),
    .destroy = MF_VFN(destroy) MF_VCG_OPS};
#undef MF_VCG_OPS

#undef MF_VFN
#undef MF_VCAT
#undef MF_VCAT_
