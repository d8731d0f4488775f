/* mg.c -- MF_PC_MULTIGRID, one entry of the preconditioner table (pc_impl.h): the multigrid
 * hierarchy, its V-cycle, its settings (mf_pc_set_multigrid*) and queries (mf_pc_multigrid_*). The
 * smoothers and the coarse solver are Chebyshev preconditioners (chebyshev.c), made and run through
 * the generic functions of pc.c.
 *
 * Levels, finest last (docs/multigrid.md):
 *   p-coarsening on the fine mesh:  p, ceil(p/2), ..., 1
 *   h-coarsening at degree 1:        coarser copies of the forest (families merged, 2:1 balanced, no
 *                                    repartition) until a copy merges nothing more
 * Every level is an ordinary mfree operator of the fine operator's kind, rule, coefficient and
 * Dirichlet form on its own space. Between levels: mf_transfer (p: in-cell interpolation; h: the
 * children's nodes by the hanging-node matrices), restriction the transpose of prolongation.
 *
 * V-cycle x = B_l r on level l > 0 (Chebyshev smoother S_l, symmetric):
 *     x = S_l r;  x += P (B_{l-1} R (r - A_l x));  x += S_l (r - A_l x)
 * and on level 0 a Chebyshev iteration over the whole estimated spectrum: B is symmetric and
 * positive, and uses only vector operations, operator applications and transfers of the backend (no
 * host copies on the GPU).
 *
 * With MF_MG_COARSE_ASSEMBLED (mf_pc_set_multigrid_coarse) level 0's operator is assembled into CSR
 * (mf_operator_create_assembled, the backend's default variant) and its matrix-free form freed; the
 * coarse Chebyshev solve runs unchanged on the matrix's product and diagonal (double only).
 *
 * In single precision (mf_pc_set_multigrid_precision) every level is first made and its smoother
 * set up in double (diagonal, eigenvalue estimates), then replaced by a float copy of its operator
 * (the finest level's a copy beside the user's operator); the V-cycle converts the residual to float
 * on entry and the correction back to double on exit. */
#include "family.h"
#include "mg/mf_mg.h"
#include "mg/pc_impl.h"

#include <math.h>
#include <stdlib.h>

typedef struct {
  mf_mesh mesh;     /* made here for the h-levels (NULL: the fine mesh, shared) */
  mf_space space;   /* made here, except on the finest level (borrowed) */
  mf_operator op;   /* made here, except on the finest level (borrowed); NULL once a float copy
                       replaced it */
  mf_operator opf;  /* the float copy (single precision), NULL in double */
  mf_operator opa;  /* level 0 with MF_MG_COARSE_ASSEMBLED: the assembled operator (the coarse solver's);
                       a matrix-free op made here is freed once it is assembled */
  int borrowed;     /* the finest level: the user's operator and space */
  mf_pc smoother;   /* Chebyshev; on level 0 the coarse solver */
  mf_vector r, x, res, t;
  mf_transfer tr;   /* from the next coarser level (NULL on level 0) */
  mf_vector state;  /* at a state (mf_operator_set_state of the fine operator): the level's, injected from the
                       next finer level's (NULL on the finest: the operator's own) */
  int64_t ncells;   /* cells of the level's mesh at set-up (the fine mesh may be adapted later) */
  double seconds;   /* profile */
} mg_level;

/* the hierarchy */
typedef struct mf_mg_s *mf_mg;
struct mf_mg_s {
  mf_context ctx;
  mf_operator fine; /* the operator it was made for (borrowed) */
  int nlevels, profile;
  mf_precision prec;
  mg_level *lv; /* coarsest first */
};

/* the preconditioner's data: its settings and the hierarchy of the last set-up */
typedef struct {
  mf_mg mg;
  int degree;            /* smoother degree */
  double range, coarse;  /* smoothing range, coarse reduction */
  mf_precision prec;
  mf_mg_coarse coarse_kind;
  int profile; /* mf_pc_multigrid_profile: kept for the hierarchies that later set-ups make */
} multigrid_data;

static multigrid_data *mgd(mf_pc pc) { return (multigrid_data *)pc->data; }

static void level_free(mg_level *l)
{
  mf_transfer_destroy(&l->tr);
  mf_vector_destroy(&l->state);
  mf_pc_destroy(&l->smoother);
  mf_vector_destroy(&l->res);
  mf_vector_destroy(&l->t);
  mf_vector_destroy(&l->r);
  mf_vector_destroy(&l->x);
  mf_operator_destroy(&l->opf);
  mf_operator_destroy(&l->opa);
  if (!l->borrowed) {
    mf_operator_destroy(&l->op);
    mf_space_destroy(&l->space);
  }
  mf_mesh_destroy(&l->mesh);
}

static void mg_destroy(mf_mg *mg)
{
  if (!mg || !*mg) return;
  mf_mg m = *mg;
  for (int k = m->nlevels - 1; k >= 0; k--) level_free(&m->lv[k]);
  free(m->lv);
  free(m);
  *mg = NULL;
}

/* The levels' meshes and spaces, fine to coarse, into m->lv (then reversed): degrees on the fine
 * mesh, then coarsened meshes at degree 1 until a coarsening merges nothing. Their operators come
 * level by level in mg_setup (in single precision each level's double data lives only while its
 * smoother is set up). */
/* A level's space: the fine space's components and Dirichlet tags on mesh at degree p. Collective. */
static int level_space(mf_space fine, mf_mesh mesh, int p, mf_space *space)
{
  MF_CALL(mf_space_create_components(mesh, p, fine->ncomp, space));
  if (fine->dtag_n >= 0) MF_CALL(mf_space_set_dirichlet_tags(*space, fine->dtag_n, fine->dtags));
  return 0;
}

static int build_levels(mf_mg m, mf_operator A)
{
  mf_space fine = A->space;
  int cap = 48, n = 0, ierr = 0;
  MF_CALL(MF_CALLOC_AGREED(m->ctx, cap, &m->lv)); /* collective, as the spaces that follow */
  for (int p = fine->degree;; p = (p + 1) / 2) { /* p, ceil(p/2), ..., 1 */
    mg_level *l = &m->lv[n++];
    m->nlevels = n;
    if (p == fine->degree) {
      l->space = fine;
      l->op = A;
      l->borrowed = 1;
    } else {
      MF_CALL(level_space(fine, fine->mesh, p, &l->space));
    }
    if (p <= 1) break;
  }
  for (mf_mesh prev = fine->mesh; n < cap;) {
    mf_mesh coarse = NULL;
    MF_CALL(mf_mesh_coarsened(prev, &coarse));
    if (coarse->ncells_global == prev->ncells_global) { /* nothing merged: prev is the coarsest */
      mf_mesh_destroy(&coarse);
      break;
    }
    mg_level *l = &m->lv[n++];
    m->nlevels = n;
    l->mesh = coarse;
    MF_CALL(level_space(fine, coarse, 1, &l->space));
    prev = coarse;
  }
  for (int k = 0; k < n / 2; k++) { /* coarsest first */
    mg_level t = m->lv[k];
    m->lv[k] = m->lv[n - 1 - k];
    m->lv[n - 1 - k] = t;
  }
  for (int k = 0; k < n; k++) m->lv[k].ncells = m->lv[k].space->mesh->ncells_global;
  return ierr;
}

/* The operator a level's V-cycle work uses: the float copy in single precision. */
static mf_operator level_op(const mg_level *l) { return l->opf ? l->opf : l->op; }

/* The fine operator A at a state: each coarser level's operator at the fine state injected level by level (the fine
 * function at the level's nodes, mf_transfer_inject). A level where the injected state is outside where the
 * functions are defined (a coarse cell inverted by a deformation that the finer cells resolve) keeps its operator at
 * the state before (or at u = 0): a lagged coarse Jacobian, still a preconditioner. */
static int levels_at_state(mf_mg m, mf_operator A)
{
  mf_context ctx = m->ctx;
  for (int k = m->nlevels - 2; k >= 0; k--) {
    mg_level *l = &m->lv[k], *up = &m->lv[k + 1];
    if (!l->state) MF_CALL(mf_agree(ctx, mf_vector_create_prec(l->space, MF_PRECISION_DOUBLE, &l->state)));
    MF_CALL(mf_transfer_inject(up->tr, up->borrowed ? A->state : up->state, l->state));
    const int ierr = mf_operator_set_state(l->op, l->state); /* its data before kept on an error */
    if (ierr != MF_ERR_ARGUMENT) MF_CALL(ierr);
  }
  return 0;
}

/* A hierarchy made at an earlier state of the same operator, to its new state: the levels' states injected again,
 * their smoothers set up again (their operators' revisions changed). */
static int mg_update_state(mf_mg m, mf_operator A)
{
  MF_CALL(levels_at_state(m, A));
  for (int k = 0; k < m->nlevels; k++) {
    if (k > 0) MF_CALL(mf_pc_chebyshev_indefinite(m->lv[k].smoother)); /* smoothers of Jacobians (chebyshev.c) */
    MF_CALL(mf_pc_setup(m->lv[k].smoother));
  }
  return 0;
}

static int mg_setup(mf_operator A, mf_mg *mgp, int smoother_degree, double smoothing_range,
                    double coarse_reduction, mf_precision prec, mf_mg_coarse coarse)
{
  mf_context ctx = A->ctx;
  mg_destroy(mgp);
  mf_mg m = NULL;
  /* collective: what one rank alone can fail (allocations here and in the vectors) is agreed on
   * before the next step that communicates; the creations called agree on their own */
  MF_CALL(MF_CALLOC_AGREED(ctx, 1, &m));
  m->ctx = ctx;
  m->prec = prec;
  const int single = prec == MF_PRECISION_FLOAT;
  m->fine = A;
  int ierr = build_levels(m, A);
  for (int k = 0; k < m->nlevels && !ierr; k++) { /* the transfers; at a state the levels' operators first (made at
                                                     u = 0, then at the state: levels_at_state); else level by level
                                                     below, so that a float V-cycle holds one level's double data */
    mg_level *l = &m->lv[k];
    if (!l->borrowed && A->state) ierr = mf_operator_create_like(A, l->space, &l->op);
    ierr = mf_agree(ctx, ierr);
    if (!ierr && k > 0) {
      const double t0 = mf_phase_begin(ctx);
      ierr = l->space->fam->transfer_create(m->lv[k - 1].space, l->space, prec, &l->tr);
      mf_phase_end(ctx, MF_PHASE_TRANSFERS, t0);
    }
  }
  if (!ierr && A->state) ierr = levels_at_state(m, A); /* the operator at a state: its levels at the state */
  /* the smoothers' eigenvalue estimates: 12 CG steps; MFREE_MG_EIG_STEPS=n (2..100) for measurements (the same on
   * every rank: it sets how many collective steps they take; unset or not such a number: 12) */
  const char *es = getenv("MFREE_MG_EIG_STEPS");
  char *end = NULL;
  const long el = es ? strtol(es, &end, 10) : 0;
  const int eig_steps = es && end != es && *end == 0 && el >= 2 && el <= 100 ? (int)el : 12;
  for (int k = 0; k < m->nlevels && !ierr; k++) {
    mg_level *l = &m->lv[k];
    if (!l->borrowed && !l->op) ierr = mf_agree(ctx, mf_operator_create_like(A, l->space, &l->op));
    if (ierr) break;
    if (k == 0 && coarse == MF_MG_COARSE_ASSEMBLED) { /* collective; a refusal (memory) is every rank's */
      if (!ierr) ierr = mf_operator_create_assembled(l->op, &l->opa);
      if (!ierr && !l->borrowed) mf_operator_destroy(&l->op);
    }
    if (!ierr) ierr = mf_pc_create_type(l->opa ? l->opa : l->op, &mf_pc_type_chebyshev, &l->smoother);
    if (!ierr && k == 0) ierr = mf_pc_chebyshev_solver(l->smoother, coarse_reduction);
    else if (!ierr) ierr = mf_pc_set_chebyshev(l->smoother, smoother_degree, smoothing_range, eig_steps);
    if (!ierr && k > 0 && A->state) ierr = mf_pc_chebyshev_indefinite(l->smoother); /* a Jacobian's smoothers */
    if (!ierr) ierr = mf_pc_setup(l->smoother);
    if (!ierr && single) { /* the float copy takes over; a level made here drops its double data */
      ierr = mf_operator_create_single(l->op, &l->opf);
      if (!ierr) ierr = mf_pc_to_single(l->smoother, l->opf);
      if (!ierr && !l->borrowed) mf_operator_destroy(&l->op);
    }
    if (!ierr && (!l->borrowed || single)) ierr = mf_vector_create_prec(l->space, prec, &l->r);
    if (!ierr && (!l->borrowed || single)) ierr = mf_vector_create_prec(l->space, prec, &l->x);
    if (!ierr) ierr = mf_vector_create_prec(l->space, prec, &l->res);
    if (!ierr) ierr = mf_vector_create_prec(l->space, prec, &l->t);
    ierr = mf_agree(ctx, ierr);
  }
  if (ierr) {
    mg_destroy(&m);
    return ierr;
  }
  *mgp = m;
  return 0;
}

static void level_begin(mf_mg m, double *t0)
{
  if (!m->profile) return;
  mf_device_sync(m->ctx);
  *t0 = MPI_Wtime();
}

static void level_end(mf_mg m, mg_level *l, double t0)
{
  if (!m->profile) return;
  mf_device_sync(m->ctx);
  l->seconds += MPI_Wtime() - t0;
}

/* x = B_k r on level k */
static int vcycle(mf_mg m, int k, mf_vector r, mf_vector x)
{
  mg_level *l = &m->lv[k];
  double t0 = 0.0;
  level_begin(m, &t0);
  if (k == 0) {
    MF_CALL(mf_pc_apply(l->smoother, r, x));
    level_end(m, l, t0);
    return 0;
  }
  mg_level *c = &m->lv[k - 1];
  MF_CALL(mf_pc_apply(l->smoother, r, x)); /* pre-smoothing from zero */
  MF_CALL(mf_operator_apply(level_op(l), x, l->res));
  MF_CALL(l->res->ops.aypx(l->res, -1.0, r)); /* res = r - A x */
  MF_CALL(mf_transfer_restrict(l->tr, l->res, c->r));
  level_end(m, l, t0);
  MF_CALL(vcycle(m, k - 1, c->r, c->x));
  level_begin(m, &t0);
  MF_CALL(mf_transfer_prolongate(l->tr, c->x, l->res));
  MF_CALL(x->ops.axpy(x, 1.0, l->res));
  MF_CALL(mf_operator_apply(level_op(l), x, l->res));
  MF_CALL(l->res->ops.aypx(l->res, -1.0, r));
  MF_CALL(mf_pc_apply(l->smoother, l->res, l->t)); /* post-smoothing of the residual */
  MF_CALL(x->ops.axpy(x, 1.0, l->t));
  level_end(m, l, t0);
  return 0;
}

static int mg_apply(mf_mg m, mf_vector r, mf_vector x)
{
  if (m->prec == MF_PRECISION_DOUBLE) return vcycle(m, m->nlevels - 1, r, x);
  mg_level *top = &m->lv[m->nlevels - 1];
  MF_CALL(mf_vector_convert(top->r, r));
  MF_CALL(vcycle(m, m->nlevels - 1, top->r, top->x));
  return mf_vector_convert(x, top->x);
}

/* Set the profile flag of a hierarchy and its level times to zero. */
static void mg_profile(mf_mg m, int on)
{
  m->profile = on != 0;
  for (int k = 0; k < m->nlevels; k++) m->lv[k].seconds = 0.0;
}

/* The preconditioner type: settings, set-up, apply */

static int multigrid_check(mf_operator op)
{
  MF_CHECK(op->space->fam->mesh_coarsen && op->space->fam->transfer_create, op->ctx, MF_ERR_UNSUPPORTED,
           "multigrid needs coarser copies of the mesh: not available on %s meshes (use Jacobi or Chebyshev)",
           op->space->fam->name);
  /* its levels: the operator made again on the coarser spaces (in single precision: mf_operator_create_single
   * refuses what has no copy in float) */
  MF_CHECK(op->type->create_like, op->ctx, MF_ERR_UNSUPPORTED,
           "multigrid needs a matrix-free mass, Laplace or Helmholtz operator, not %s operator",
           mf_operator_kind_name(op));
  return 0;
}

static void multigrid_init(mf_pc pc)
{
  multigrid_data *d = mgd(pc);
  d->degree = 4;
  d->range = 15.0;
  d->coarse = 1e-3;
}

/* the hierarchy, each level with its own smoother set-up */
static int multigrid_setup(mf_pc pc)
{
  multigrid_data *d = mgd(pc);
  MF_CALL(mf_space_check_mesh(pc->op->space)); /* its levels are made on the mesh as it is now */
  if (pc->op->state) { /* at a state (mf_operator_set_state): the levels follow it */
    MF_CHECK(d->prec == MF_PRECISION_DOUBLE && d->coarse_kind == MF_MG_COARSE_MATRIX_FREE, pc->ctx,
             MF_ERR_UNSUPPORTED,
             "multigrid on an operator at a state: a double V-cycle with the matrix-free coarse level only (not "
             "yet %s)",
             d->prec != MF_PRECISION_DOUBLE ? "in float" : "with the assembled coarse level");
    if (d->mg && d->mg->fine == pc->op) {
      const int ierr = mg_update_state(d->mg, pc->op);
      if (ierr) mg_destroy(&d->mg);
      return ierr;
    }
  }
  int ierr = mg_setup(pc->op, &d->mg, d->degree, d->range, d->coarse, d->prec, d->coarse_kind);
  if (!ierr) mg_profile(d->mg, d->profile);
  return ierr;
}

static int multigrid_apply(mf_pc pc, mf_vector r, mf_vector z) { return mg_apply(mgd(pc)->mg, r, z); }

static void multigrid_destroy(mf_pc pc) { mg_destroy(&mgd(pc)->mg); }

/* the smoothers too: the finest one's operator is the preconditioner's own, whose new state would set it up again */
static void multigrid_keep(mf_pc pc, int on)
{
  const mf_mg m = mgd(pc)->mg;
  for (int k = 0; m && k < m->nlevels; k++) mf_pc_keep(m->lv[k].smoother, on);
}

const mf_pc_type mf_pc_type_multigrid = {
  .kind = MF_PC_MULTIGRID,
  .name = "multigrid (MF_PC_MULTIGRID)",
  .data_size = sizeof(multigrid_data),
  .check = multigrid_check,
  .init = multigrid_init,
  .setup = multigrid_setup,
  .apply = multigrid_apply,
  .destroy = multigrid_destroy,
  .keep = multigrid_keep,
};

/* The setters' common steps: the argument is a multigrid preconditioner; after a change, the hierarchy
 * is made again at the next set-up. */
static int multigrid_settable(mf_pc pc)
{
  MF_CHECK(pc, NULL, MF_ERR_NULL, "preconditioner is NULL");
  MF_CHECK(pc->type == &mf_pc_type_multigrid, pc->ctx, MF_ERR_ARGUMENT, "preconditioner %s is not MF_PC_MULTIGRID",
           pc->type->name);
  return 0;
}
static int multigrid_changed(mf_pc pc)
{
  mg_destroy(&mgd(pc)->mg);
  pc->ready = 0;
  return 0;
}

int mf_pc_set_multigrid(mf_pc pc, int smoother_degree, double smoothing_range, double coarse_reduction)
{
  MF_CALL(multigrid_settable(pc));
  mf_context ctx = pc->ctx;
  MF_CHECK(smoother_degree >= 1 && smoother_degree <= 64, ctx, MF_ERR_ARGUMENT,
           "smoother degree %d out of range 1..64", smoother_degree);
  MF_CHECK(smoothing_range > 1.0 && isfinite(smoothing_range), ctx, MF_ERR_ARGUMENT,
           "smoothing range %g must be a finite number > 1", smoothing_range);
  MF_CHECK(coarse_reduction > 0.0 && coarse_reduction < 1.0, ctx, MF_ERR_ARGUMENT,
           "coarse reduction %g out of range (0, 1)", coarse_reduction);
  multigrid_data *d = mgd(pc);
  d->degree = smoother_degree;
  d->range = smoothing_range;
  d->coarse = coarse_reduction;
  return multigrid_changed(pc);
}

int mf_pc_set_multigrid_precision(mf_pc pc, mf_precision prec)
{
  MF_CALL(multigrid_settable(pc));
  mf_context ctx = pc->ctx;
  MF_CHECK(prec == MF_PRECISION_DOUBLE || prec == MF_PRECISION_FLOAT, ctx, MF_ERR_ARGUMENT,
           "precision %d unknown (MF_PRECISION_DOUBLE or MF_PRECISION_FLOAT)", (int)prec);
  multigrid_data *d = mgd(pc);
  MF_CHECK(prec == MF_PRECISION_DOUBLE || d->coarse_kind == MF_MG_COARSE_MATRIX_FREE, ctx, MF_ERR_UNSUPPORTED,
           "a single-precision V-cycle needs the matrix-free coarse level (the coarse level is set to "
           "MF_MG_COARSE_ASSEMBLED, which is double only)");
  d->prec = prec;
  return multigrid_changed(pc);
}

int mf_pc_set_multigrid_coarse(mf_pc pc, mf_mg_coarse kind)
{
  MF_CALL(multigrid_settable(pc));
  mf_context ctx = pc->ctx;
  MF_CHECK(kind == MF_MG_COARSE_MATRIX_FREE || kind == MF_MG_COARSE_ASSEMBLED, ctx, MF_ERR_ARGUMENT,
           "multigrid coarse level kind %d unknown (MF_MG_COARSE_MATRIX_FREE or MF_MG_COARSE_ASSEMBLED)", (int)kind);
  multigrid_data *d = mgd(pc);
  MF_CHECK(kind == MF_MG_COARSE_MATRIX_FREE || d->prec == MF_PRECISION_DOUBLE, ctx, MF_ERR_UNSUPPORTED,
           "the assembled coarse level needs a double-precision V-cycle (the precision is set to "
           "MF_PRECISION_FLOAT)");
  d->coarse_kind = kind;
  return multigrid_changed(pc);
}

/* The hierarchy of a multigrid preconditioner, set up if it is not yet. Another kind is refused
 * before any set-up (which could fail for reasons of its own: a shell operator has no diagonal). */
static int get_mg(mf_pc pc, mf_mg *m)
{
  *m = NULL;
  MF_CHECK(pc, NULL, MF_ERR_NULL, "preconditioner is NULL");
  mf_context ctx = pc->ctx;
  MF_CHECK(pc->type == &mf_pc_type_multigrid, ctx, MF_ERR_ARGUMENT, "the preconditioner is not MF_PC_MULTIGRID");
  *m = mgd(pc)->mg;
  if (!*m) {
    MF_CALL(mf_pc_setup(pc));
    *m = mgd(pc)->mg;
  }
  MF_CHECK(*m, ctx, MF_ERR_ARGUMENT, "the multigrid preconditioner has no hierarchy after its set-up");
  return 0;
}

int mf_pc_multigrid_levels(mf_pc pc, int *nlevels)
{
  mf_mg m;
  MF_CALL(get_mg(pc, &m));
  MF_CHECK(nlevels, m->ctx, MF_ERR_NULL, "output pointer nlevels is NULL");
  *nlevels = m->nlevels;
  return 0;
}

int mf_pc_multigrid_level(mf_pc pc, int level, int *degree, int64_t *ndofs, int64_t *ncells)
{
  mf_mg m;
  MF_CALL(get_mg(pc, &m));
  MF_CHECK(level >= 0 && level < m->nlevels, m->ctx, MF_ERR_ARGUMENT, "level %d out of range 0..%d", level,
           m->nlevels - 1);
  const mf_space s = m->lv[level].space;
  if (degree) *degree = s->degree;
  if (ndofs) *ndofs = s->nglobal;
  if (ncells) *ncells = m->lv[level].ncells;
  return 0;
}

int mf_pc_multigrid_profile(mf_pc pc, int on)
{
  mf_mg m;
  MF_CALL(get_mg(pc, &m));
  mgd(pc)->profile = on != 0; /* for the hierarchies of later set-ups too */
  mg_profile(m, on);
  return 0;
}

int mf_pc_multigrid_times(mf_pc pc, double *seconds)
{
  mf_mg m;
  MF_CALL(get_mg(pc, &m));
  MF_CHECK(seconds, m->ctx, MF_ERR_NULL, "output array seconds is NULL");
  for (int k = 0; k < m->nlevels; k++) seconds[k] = m->lv[k].seconds;
  return 0;
}
