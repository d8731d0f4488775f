/* gmres.c -- restarted GMRES(m), right-preconditioned, on any mf_operator, for the operators that
 * g-functions make non-symmetric (advection, non-symmetric couplings): it solves A M^-1 y = b - A x0 and
 * sets x = x0 + M^-1 y, so that the residual it minimises and reports is the true one, ||b - A x||_2.
 * The preconditioner is behind the mf_pc table as for CG (its own Jacobi unless another is set). Arnoldi
 * with modified Gram-Schmidt, Givens rotations on the Hessenberg matrix (host, (m+1) x m), vector
 * operations of the backend only: on the GPU no vector leaves the device. */
#include "operator_impl.h"
#include "mg/pc_impl.h"

#include <math.h>

struct mf_gmres_s {
  mf_operator op;
  double rtol;
  int maxit, restart;
  mf_vector *V;     /* restart + 1 basis vectors, made at the first solve */
  mf_vector w, z, r;
  mf_pc own, pc;    /* as in mf_cg_s */
  double *H, *cs, *sn, *g, *y; /* (restart + 1) x restart, restart, restart, restart + 1, restart */
};

int mf_gmres_create(mf_operator op, mf_gmres *gm)
{
  if (gm) *gm = NULL;
  MF_CHECK(op, NULL, MF_ERR_NULL, "operator is NULL");
  MF_CHECK(gm, op->ctx, MF_ERR_NULL, "output pointer gmres is NULL");
  mf_context ctx = op->ctx;
  const double t0 = mf_phase_begin(ctx);
  mf_gmres g = NULL;
  MF_CALL(MF_CALLOC_AGREED(ctx, 1, &g));
  g->op = op;
  g->rtol = 1e-10;
  g->maxit = 10000;
  g->restart = 30;
  int ierr = mf_vector_create_prec(op->space, MF_PRECISION_DOUBLE, &g->w);
  if (!ierr) ierr = mf_vector_create_prec(op->space, MF_PRECISION_DOUBLE, &g->z);
  if (!ierr) ierr = mf_vector_create_prec(op->space, MF_PRECISION_DOUBLE, &g->r);
  ierr = mf_agree(ctx, ierr);
  if (!ierr) ierr = mf_pc_create(op, MF_PC_JACOBI, &g->own);
  g->pc = g->own;
  mf_phase_end(ctx, MF_PHASE_SOLVER, t0);
  if (ierr) {
    mf_gmres_destroy(&g);
    return ierr;
  }
  *gm = g;
  return 0;
}

/* the basis and the Hessenberg arrays for restart m (freed and made again where m changed) */
static void free_basis(mf_gmres g)
{
  for (int i = 0; g->V && i <= g->restart; i++) mf_vector_destroy(&g->V[i]);
  free(g->V);
  free(g->H);
  free(g->cs);
  free(g->sn);
  free(g->g);
  free(g->y);
  g->V = NULL;
  g->H = g->cs = g->sn = g->g = g->y = NULL;
}

static int make_basis(mf_gmres g)
{
  if (g->V) return 0;
  mf_context ctx = g->op->ctx;
  const int m = g->restart;
  int ierr = MF_CALLOC(ctx, (size_t)m + 1, &g->V);
  if (!ierr) ierr = MF_CALLOC(ctx, (size_t)(m + 1) * m, &g->H);
  if (!ierr) ierr = MF_CALLOC(ctx, (size_t)m, &g->cs);
  if (!ierr) ierr = MF_CALLOC(ctx, (size_t)m, &g->sn);
  if (!ierr) ierr = MF_CALLOC(ctx, (size_t)m + 1, &g->g);
  if (!ierr) ierr = MF_CALLOC(ctx, (size_t)m, &g->y);
  for (int i = 0; !ierr && i <= m; i++) ierr = mf_vector_create_prec(g->op->space, MF_PRECISION_DOUBLE, &g->V[i]);
  ierr = mf_agree(ctx, ierr);
  if (ierr) free_basis(g);
  return ierr;
}

int mf_gmres_destroy(mf_gmres *gm)
{
  if (!gm || !*gm) return 0;
  mf_gmres g = *gm;
  free_basis(g);
  mf_vector_destroy(&g->w);
  mf_vector_destroy(&g->z);
  mf_vector_destroy(&g->r);
  if (g->pc != g->own) mf_pc_release(g->pc);
  mf_pc_destroy(&g->own);
  free(g);
  *gm = NULL;
  return 0;
}

int mf_gmres_set_tolerance(mf_gmres g, double rtol, int max_iterations)
{
  MF_CHECK(g, NULL, MF_ERR_NULL, "gmres is NULL");
  MF_CHECK(rtol > 0.0 && rtol < 1.0, g->op->ctx, MF_ERR_ARGUMENT, "tolerance %g out of range (0, 1)", rtol);
  MF_CHECK(max_iterations > 0, g->op->ctx, MF_ERR_ARGUMENT, "iteration limit %d must be positive", max_iterations);
  g->rtol = rtol;
  g->maxit = max_iterations;
  return 0;
}

int mf_gmres_set_restart(mf_gmres g, int m)
{
  MF_CHECK(g, NULL, MF_ERR_NULL, "gmres is NULL");
  MF_CHECK(m >= 1 && m <= 1000, g->op->ctx, MF_ERR_ARGUMENT, "restart %d out of range 1..1000", m);
  if (m != g->restart) {
    free_basis(g);
    g->restart = m;
  }
  return 0;
}

int mf_gmres_set_pc(mf_gmres g, mf_pc pc)
{
  MF_CHECK(g, NULL, MF_ERR_NULL, "gmres is NULL");
  char why[192];
  MF_CHECK(!pc || mf_pc_operator(pc)->space == g->op->space, g->op->ctx, MF_ERR_INCOMPATIBLE,
           "preconditioner of another space%s",
           pc ? mf_space_mismatch(mf_pc_operator(pc)->space, g->op->space, "the gmres' operator has", why, sizeof why) : "");
  if (pc) mf_pc_retain(pc);
  if (g->pc != g->own) mf_pc_release(g->pc);
  g->pc = pc ? pc : g->own;
  return 0;
}

/* r <- b - A x, *beta = ||r|| (collective) */
static int residual(mf_gmres g, mf_vector b, mf_vector x, double *beta)
{
  mf_vector r = g->r;
  int ierr = mf_operator_apply(g->op, x, g->w);
  if (!ierr) ierr = r->ops.copy(r, b);
  if (!ierr) ierr = r->ops.axpy(r, -1.0, g->w);
  double rr = 0.0;
  ierr = mf_vector_dot_checked(r, r, &rr, ierr);
  *beta = sqrt(fabs(rr));
  return ierr;
}

static int gmres_solve(mf_gmres g, mf_vector b, mf_vector x, mf_cg_info *info)
{
  mf_context ctx = g->op->ctx;
  const int m = g->restart;
  int ierr = make_basis(g);
  if (!ierr) ierr = mf_pc_setup(g->pc);
  if (ierr) return ierr;
  MPI_Barrier(ctx->comm);
  const double t0 = MPI_Wtime();
  double beta = 0.0, res0 = 0.0, res = 0.0;
  int it = 0, converged = 0;
  ierr = residual(g, b, x, &beta);
  res0 = res = beta;
  converged = res0 == 0.0;
  while (!ierr && !converged && it < g->maxit) {
    MF_CHECK_GOTO(isfinite(beta), ctx, MF_ERR_ARGUMENT, done, "GMRES: residual %g at iteration %d", beta, it);
    /* V0 = r / beta */
    ierr = g->V[0]->ops.copy(g->V[0], g->r);
    if (!ierr) ierr = g->V[0]->ops.scale(g->V[0], 1.0 / beta);
    ierr = mf_agree(ctx, ierr); /* a rank's failure is every rank's before the next collective step */
    if (ierr) break;
    for (int i = 0; i <= m; i++) g->g[i] = 0.0;
    g->g[0] = beta;
    int k = 0; /* columns made in this cycle */
    /* every rank runs every step (the preconditioner and the operator exchange with the neighbours): a
     * local failure travels in ierr to the next dot product, which carries it to every rank */
    for (int j = 0; j < m && it < g->maxit; j++) {
      /* w = A M^-1 V_j, orthogonalised against V_0..V_j (modified Gram-Schmidt) */
      MF_KEEP(ierr, mf_pc_apply(g->pc, g->V[j], g->z));
      MF_KEEP(ierr, mf_operator_apply(g->op, g->z, g->w));
      for (int i = 0; i <= j; i++) {
        double h = 0.0;
        ierr = mf_vector_dot_checked(g->w, g->V[i], &h, ierr);
        if (ierr) break;
        g->H[(size_t)i * m + j] = h;
        ierr = g->w->ops.axpy(g->w, -h, g->V[i]);
      }
      double hn = 0.0;
      ierr = mf_vector_dot_checked(g->w, g->w, &hn, ierr);
      if (ierr) break;
      hn = sqrt(fabs(hn));
      MF_CHECK_GOTO(isfinite(hn), ctx, MF_ERR_ARGUMENT, done,
                    "GMRES: the Arnoldi vector's norm is %g at iteration %d (operator or preconditioner gave NaN/Inf?)",
                    hn, it);
      g->H[(size_t)(j + 1) * m + j] = hn;
      if (hn > 0.0) {
        ierr = g->V[j + 1]->ops.copy(g->V[j + 1], g->w);
        if (!ierr) ierr = g->V[j + 1]->ops.scale(g->V[j + 1], 1.0 / hn);
      }
      if (j + 1 == m || it + 1 >= g->maxit) ierr = mf_agree(ctx, ierr); /* the cycle ends: no dot product follows */
      /* the earlier rotations on column j, then the one that zeroes H[j+1][j] */
      for (int i = 0; i < j; i++) {
        const double a = g->H[(size_t)i * m + j], c = g->H[(size_t)(i + 1) * m + j];
        g->H[(size_t)i * m + j] = g->cs[i] * a + g->sn[i] * c;
        g->H[(size_t)(i + 1) * m + j] = -g->sn[i] * a + g->cs[i] * c;
      }
      const double a = g->H[(size_t)j * m + j], c = g->H[(size_t)(j + 1) * m + j], d = hypot(a, c);
      g->cs[j] = d > 0.0 ? a / d : 1.0;
      g->sn[j] = d > 0.0 ? c / d : 0.0;
      g->H[(size_t)j * m + j] = d;
      g->H[(size_t)(j + 1) * m + j] = 0.0;
      g->g[j + 1] = -g->sn[j] * g->g[j];
      g->g[j] = g->cs[j] * g->g[j];
      k = j + 1;
      it++;
      res = fabs(g->g[j + 1]);
      if (res <= g->rtol * res0 || hn == 0.0) break;
    }
    ierr = mf_agree(ctx, ierr);
    if (ierr || !k) break;
    /* y = H^-1 g (upper triangular k x k); x += M^-1 (V y) */
    for (int i = k - 1; i >= 0; i--) {
      double s = g->g[i];
      for (int l = i + 1; l < k; l++) s -= g->H[(size_t)i * m + l] * g->y[l];
      const double hii = g->H[(size_t)i * m + i];
      MF_CHECK_GOTO(hii != 0.0, ctx, MF_ERR_ARGUMENT, done, "GMRES: singular Hessenberg matrix at iteration %d", it);
      g->y[i] = s / hii;
    }
    ierr = g->w->ops.set_value(g->w, 0.0);
    for (int i = 0; i < k && !ierr; i++) ierr = g->w->ops.axpy(g->w, g->y[i], g->V[i]);
    MF_KEEP(ierr, mf_pc_apply(g->pc, g->w, g->z));
    if (!ierr) ierr = x->ops.axpy(x, 1.0, g->z);
    ierr = mf_agree(ctx, ierr);
    if (ierr) break;
    /* the true residual starts the next cycle and decides convergence */
    ierr = residual(g, b, x, &beta);
    res = beta;
    converged = res <= g->rtol * res0 * (1.0 + 1e-12);
  }
done:
  ierr = mf_agree(ctx, ierr);
  double dt = MPI_Wtime() - t0;
  MPI_Allreduce(MPI_IN_PLACE, &dt, 1, MPI_DOUBLE, MPI_MAX, ctx->comm);
  if (info) {
    info->iterations = it;
    info->converged = !ierr && converged;
    info->residual0 = res0;
    info->residual = res;
    info->seconds = dt;
    info->seconds_per_iter = it ? dt / it : 0.0;
  }
  return ierr;
}

int mf_gmres_solve(mf_gmres g, mf_vector b, mf_vector x, mf_cg_info *info)
{
  if (info) memset(info, 0, sizeof *info);
  MF_CHECK(g, NULL, MF_ERR_NULL, "gmres is NULL");
  mf_context ctx = g->op->ctx;
  MF_CHECK(b, ctx, MF_ERR_NULL, "right-hand side b is NULL");
  MF_CHECK(x, ctx, MF_ERR_NULL, "solution x is NULL");
  char why[192];
  MF_CHECK(b->space == g->op->space, ctx, MF_ERR_INCOMPATIBLE, "right-hand side b belongs to another space%s",
           mf_space_mismatch(b->space, g->op->space, "operator has", why, sizeof why));
  MF_CHECK(x->space == g->op->space, ctx, MF_ERR_INCOMPATIBLE, "solution x belongs to another space%s",
           mf_space_mismatch(x->space, g->op->space, "operator has", why, sizeof why));
  MF_CHECK(b != x, ctx, MF_ERR_ARGUMENT, "b and x must be different vectors");
  MF_CALL(mf_vector_access_all(b, MF_ACCESS_READ, "b"));
  MF_CALL(mf_vector_access_all(x, MF_ACCESS_READ_WRITE, "x"));
  return mf_vector_written(x, gmres_solve(g, b, x, info));
}
