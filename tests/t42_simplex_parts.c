/* t42_simplex_parts -- simplex meshes held in parts (lib/simplex/parts_simplex.c), under mpiexec with 2 or more
 * ranks: a coarse mesh (the level-1 boxes, a Gmsh file) refined 1..3 times on MPI_COMM_WORLD against the same
 * refinement on one rank (MPI_COMM_SELF, on every rank):
 *   - each rank holds its own cells only: as many as its coarse cells times 2^(dim level), each with exactly the
 *     one-rank refinement's corner coordinates (the same child of the same coarse cell), fewer vertices than the
 *     whole mesh; the ranks' cells and boundary facets add up to the whole mesh's (tags too);
 *   - each cell's coarse cell and lattice coordinates give its corners (1e-13);
 *   - P_p spaces (p = 1..3): the global DoF count; the owned DoFs' points, gathered over the ranks, are the
 *     one-rank space's points one for one (tests/mf_test.h, t_bypos); every local DoF (owned or ghost) is a
 *     point of the one-rank space with the same Dirichlet mark, for the whole boundary and for chosen tags; the
 *     ghosts' values imported from their owners are the values at their points (the exchange lists pair up).
 * The operators and solvers on such meshes, 1 rank = N ranks, are t06_mpi's simplex cases.
 * argv[1] = "fail" [stride [rank]]: instead, that rank (default 1) fails one host allocation (a test hook), every
 * stride-th in turn, of
 * the chain mesh, refinement in parts, space, Dirichlet tags, vector, operator, product: every rank must fail at
 * the same step with the same code (a rank left in a collective call would hang: the CTest timeout); under
 * valgrind the failure paths must not leak. */
#include "mf_test.h"
#include "mf_testing.h"
#include "simplex/mf_simplex_space.h"
#include "vector_impl.h"

#include <math.h>

static int rank, size;

typedef struct {
  int64_t x[3];
  int mark;
} pt;

static int pt_cmp(const void *a, const void *b)
{
  const pt *p = a, *q = b;
  for (int k = 0; k < 3; k++)
    if (p->x[k] != q->x[k]) return p->x[k] < q->x[k] ? -1 : 1;
  return 0;
}

/* the points of a space's local DoFs (ncomp 1), rounded to 1e-9, with their Dirichlet marks */
static pt *points(mf_space s, int n)
{
  pt *p = calloc((size_t)n + 1, sizeof *p);
  for (int i = 0; i < n; i++) {
    for (int k = 0; k < s->dim; k++) p[i].x[k] = llround(s->coords[(size_t)i * s->dim + k] * 1e9);
    p[i].mark = s->bc[i];
  }
  return p;
}

static double fpos(const double *x, int dim, void *user)
{
  (void)user;
  return 1.0 + x[0] + 3.0 * x[1] * x[1] + (dim == 3 ? 7.0 * x[2] * x[2] * x[2] : 0.0);
}

/* the exchange: the ghosts' values from their owners equal the values interpolated where they are */
static void check_exchange(mf_space s, const char *what, int p)
{
  mf_vector v;
  int nown = 0, nloc = 0;
  T_CALL(mf_space_local_sizes(s, &nown, &nloc));
  T_CALL(mf_vector_create(s, &v));
  T_CALL(mf_vector_interpolate(v, fpos, NULL));
  double *a = NULL, *want = malloc(sizeof(double) * ((size_t)nloc + 1));
  T_CALL(mf_vector_get_array(v, MF_MEM_HOST, &a));
  memcpy(want, a, sizeof(double) * (size_t)nloc);
  for (int i = nown; i < nloc; i++) a[i] = NAN;
  T_CALL(mf_vector_restore_array(v, &a));
  T_CALL(v->ops.import(v));
  T_CALL(mf_vector_get_array(v, MF_MEM_HOST, &a));
  int bad = 0;
  for (int i = nown; i < nloc; i++) bad += !(fabs(a[i] - want[i]) <= 1e-12 * (1.0 + fabs(want[i])));
  T_CALL(mf_vector_restore_array(v, &a));
  T_CHECK(!bad, "%s P%d rank %d: %d of %d ghosts' imported values differ from their points' values", what, p, rank, bad,
          nloc - nown);
  free(want);
  mf_vector_destroy(&v);
}

static void check_space(mf_context cw, mf_context c1, mf_mesh fw, mf_mesh f1, int p, int ntags, const int *tags,
                        const char *what)
{
  mf_space sw, s1;
  T_CALL(mf_space_create(fw, p, &sw));
  T_CALL(mf_space_create(f1, p, &s1));
  if (ntags >= 0) {
    T_CALL(mf_space_set_dirichlet_tags(sw, ntags, tags));
    T_CALL(mf_space_set_dirichlet_tags(s1, ntags, tags));
  }
  int64_t nw = 0, n1 = 0;
  T_CALL(mf_space_num_dofs(sw, &nw));
  T_CALL(mf_space_num_dofs(s1, &n1));
  T_CHECK(nw == n1, "%s P%d: %lld DoFs on %d ranks, %lld on one", what, p, (long long)nw, size, (long long)n1);
  /* the owned DoFs of all ranks are the one-rank DoFs, one for one */
  t_bypos bw, b1;
  t_bypos_create(cw, sw, &bw);
  t_bypos_create(c1, s1, &b1);
  if (rank == 0) {
    T_CHECK(bw.n == b1.n, "%s P%d: %lld owned DoFs over the ranks, %lld on one", what, p, (long long)bw.n,
            (long long)b1.n);
    double d = 0.0;
    for (int64_t i = 0; i < 3 * bw.n && bw.n == b1.n; i++) d = fmax(d, fabs(bw.x[i] - b1.x[i]));
    T_CHECK(d <= 1e-12, "%s P%d: the owned DoFs' points differ from one rank's by %.3e", what, p, d);
  }
  t_bypos_destroy(&bw);
  t_bypos_destroy(&b1);
  /* every local DoF, owned or ghost: a one-rank point with the same mark */
  int nlw = 0, nl1 = 0, bad = 0, badmark = 0, markw = 0, mark1 = 0, nown = 0;
  T_CALL(mf_space_local_sizes(sw, &nown, &nlw));
  T_CALL(mf_space_local_sizes(s1, NULL, &nl1));
  pt *a = points(sw, nlw), *b = points(s1, nl1);
  qsort(b, (size_t)nl1, sizeof *b, pt_cmp);
  for (int i = 0; i < nlw; i++) {
    const pt *q = bsearch(&a[i], b, (size_t)nl1, sizeof *b, pt_cmp);
    bad += q == NULL;
    badmark += q && q->mark != a[i].mark;
    markw += i < nown && a[i].mark;
  }
  for (int i = 0; i < nl1; i++) mark1 += b[i].mark;
  MPI_Allreduce(MPI_IN_PLACE, &markw, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  T_CHECK(!bad && !badmark, "%s P%d rank %d: %d local DoFs not among one rank's, %d with another Dirichlet mark", what,
          p, rank, bad, badmark);
  T_CHECK(markw == mark1, "%s P%d: %d owned Dirichlet DoFs over the ranks, %d on one", what, p, markw, mark1);
  free(a);
  free(b);
  check_exchange(sw, what, p);
  mf_space_destroy(&sw);
  mf_space_destroy(&s1);
}

static void check_mesh(mf_mesh fw, mf_mesh f1, int levels, const char *what)
{
  const mf_simplex_mesh *w = fw->fdata, *o = f1->fdata;
  const int dim = w->dim, nvc = dim + 1;
  T_CHECK(w->root && !w->part && w->level == levels, "%s: the refined mesh is not held in parts (root %p, level %d)",
          what, (const void *)w->root, w->level);
  if (!w->root) return;
  const mf_simplex_mesh *c = mf_simplex_root_mesh(w->root);
  int64_t nch = 1;
  for (int l = 0; l < levels; l++) nch *= dim == 2 ? 4 : 8;
  int nmine = 0;
  for (int e = 0; e < c->ncells; e++) nmine += c->part[e] == rank;
  T_CHECK(w->ncells == nmine * nch, "%s rank %d: %d cells held, %lld expected (%d coarse cells)", what, rank, w->ncells,
          (long long)(nmine * nch), nmine);
  T_CHECK(size == 1 || w->nv < o->nv, "%s rank %d: %d vertices held, the whole mesh has %d", what, rank, w->nv, o->nv);
  int badx = 0, badanc = 0;
  double dlat = 0.0;
  for (int e = 0, k = -1; e < c->ncells; e++) {
    if (c->part[e] != rank) continue;
    k++;
    for (int64_t j = 0; j < nch && (int64_t)k * nch + j < w->ncells; j++) {
      const int64_t lc = (int64_t)k * nch + j, wc = (int64_t)e * nch + j;
      badanc += w->anc[lc] != e;
      for (int a = 0; a < nvc; a++) {
        const double *xl = w->coords + 3 * (size_t)w->cells[lc * nvc + a], *xo = o->coords + 3 * (size_t)o->cells[wc * nvc + a];
        badx += memcmp(xl, xo, 3 * sizeof(double)) != 0;
        for (int kk = 0; kk < dim; kk++) { /* the corner from its lattice coordinates in the coarse cell */
          double x = 0.0;
          for (int b = 0; b < nvc; b++)
            x += ldexp(w->lat[(lc * nvc + a) * nvc + b], -levels) * c->coords[3 * (size_t)c->cells[(size_t)e * nvc + b] + kk];
          dlat = fmax(dlat, fabs(x - xl[kk]));
        }
      }
    }
  }
  T_CHECK(!badx && !badanc && dlat <= 1e-13, "%s rank %d: %d corners differ from one rank's, %d coarse cells wrong, "
          "lattice coordinates off by %.3e", what, rank, badx, badanc, dlat);
  long long sums[3] = {w->ncells, w->nfacets, 0};
  for (int t = 0; t < w->nfacets; t++) sums[2] += w->facet_tag[t];
  MPI_Allreduce(MPI_IN_PLACE, sums, 3, MPI_LONG_LONG, MPI_SUM, MPI_COMM_WORLD);
  long long tag1 = 0;
  for (int t = 0; t < o->nfacets; t++) tag1 += o->facet_tag[t];
  int64_t ng = 0;
  T_CALL(mf_mesh_num_cells(fw, &ng));
  T_CHECK(sums[0] == o->ncells && ng == o->ncells && sums[1] == o->nfacets && sums[2] == tag1,
          "%s: the ranks hold %lld cells (mf_mesh_num_cells %lld), %lld boundary facets (tags summing to %lld); one rank "
          "%d, %d (%lld)", what, sums[0], (long long)ng, sums[1], sums[2], o->ncells, o->nfacets, tag1);
}

static void run(mf_context cw, mf_context c1, const char *name, const char *file, int dim, int levels)
{
  mf_mesh bw, b1, fw, f1;
  if (file) {
    T_CALL(mf_mesh_create_from_file(cw, file, dim, &bw));
    T_CALL(mf_mesh_create_from_file(c1, file, dim, &b1));
  } else {
    T_CALL(mf_mesh_create(cw, name, dim, 1, &bw));
    T_CALL(mf_mesh_create(c1, name, dim, 1, &b1));
  }
  T_CALL(mf_mesh_refine(bw, levels, &fw));
  T_CALL(mf_mesh_refine(b1, levels, &f1));
  char what[160];
  snprintf(what, sizeof what, "%s refined %d times on %d ranks", file ? file : name, levels, size);
  check_mesh(fw, f1, levels, what);
  /* the box's sides x = 0 and y = 1; a file's first facet's tag */
  const int tags[2] = {file ? ((const mf_simplex_mesh *)f1->fdata)->facet_tag[0] : 1, 4};
  for (int p = 1; p <= (levels == 1 ? 4 : levels == 2 ? 3 : 1); p++) {
    check_space(cw, c1, fw, f1, p, -1, NULL, what);
    check_space(cw, c1, fw, f1, p, file ? 1 : 2, tags, what);
  }
  mf_mesh_destroy(&fw);
  mf_mesh_destroy(&f1);
  mf_mesh_destroy(&bw);
  mf_mesh_destroy(&b1);
}

static double one(const double *x, int dim, void *u)
{
  (void)u, (void)dim;
  return 1.0 + x[0];
}

static long chain_allocs;
static int fail_rank = 1;

/* the step (1..) at which the chain failed (0: it ran through), its code into *code */
static int chain(mf_context ctx, long fail_at, int *code)
{
  mf_mesh base = NULL, fine = NULL;
  mf_space s = NULL;
  mf_vector x = NULL, y = NULL;
  mf_operator A = NULL;
  const int tags[2] = {1, 6};
  if (rank == fail_rank) mf_test_fail_host_alloc(fail_at);
  int step = 0, ierr = 0;
#define STEP(expr) \
  if (!ierr) {     \
    step++;        \
    ierr = (expr); \
  }
  STEP(mf_mesh_create(ctx, "cube-tets", 3, 1, &base));
  STEP(mf_mesh_refine(base, 2, &fine));
  STEP(mf_space_create(fine, 2, &s));
  STEP(mf_space_set_dirichlet_tags(s, 2, tags));
  STEP(mf_vector_create(s, &x));
  STEP(mf_vector_create(s, &y));
  STEP(mf_vector_interpolate(x, one, NULL));
  STEP(mf_operator_create_laplace(s, MF_QUAD_GAUSS, NULL, NULL, &A));
  STEP(mf_operator_apply(A, x, y));
#undef STEP
  chain_allocs = mf_test_host_alloc_count();
  if (rank == fail_rank) mf_test_fail_host_alloc(0);
  mf_operator_destroy(&A);
  mf_vector_destroy(&x);
  mf_vector_destroy(&y);
  mf_space_destroy(&s);
  mf_mesh_destroy(&fine);
  mf_mesh_destroy(&base);
  *code = ierr;
  return ierr ? step : 0;
}

static void failures(mf_context ctx, long stride)
{
  int code = 0;
  T_CHECK(chain(ctx, 0, &code) == 0, "the chain fails without a test failure: %s", mf_last_error_message());
  long nalloc = chain_allocs;
  MPI_Bcast(&nalloc, 1, MPI_LONG, fail_rank, MPI_COMM_WORLD);
  unsigned steps = 0;
  for (long n = 1; n <= nalloc; n += stride) {
    const int step = chain(ctx, n, &code);
    if (getenv("T42_TRACE")) /* where each failure stopped the chain */
      fprintf(stderr, "rank %d allocation %ld: step %d, code %d\n", rank, n, step, code);
    int v[4] = {step, -step, code, -code};
    MPI_Allreduce(MPI_IN_PLACE, v, 4, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    T_CHECK(v[0] == -v[1] && v[2] == -v[3], "allocation %ld: ranks disagree: steps %d..%d, codes %d..%d", n, v[0],
            -v[1], v[2], -v[3]);
    T_CHECK(step > 0 && code == MF_ERR_MEMORY, "allocation %ld of %ld: step %d, code %d (%s)", n, nalloc, step, code,
            mf_context_error_message(ctx));
    if (step > 0) steps |= 1u << step;
  }
  T_CHECK(steps & (1u << 2), "no failure in the refinement (steps mask 0x%x, %ld allocations)", steps, nalloc);
  T_CHECK(steps & (1u << 3), "no failure in the space (steps mask 0x%x, %ld allocations)", steps, nalloc);
  T_CHECK(steps & (1u << 4), "no failure in the Dirichlet tags (steps mask 0x%x, %ld allocations)", steps, nalloc);
}

int main(int argc, char **argv)
{
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  if (size < 2) {
    fprintf(stderr, "t42_simplex_parts: run it on 2 ranks or more\n");
    MPI_Finalize();
    return 1;
  }
  mf_context cw, c1;
  T_CALL(mf_context_create(MPI_COMM_WORLD, "cpu", &cw));
  T_CALL(mf_context_create(MPI_COMM_SELF, "cpu", &c1));
  if (argc > 1 && !strcmp(argv[1], "fail")) {
    const long stride = argc > 2 ? atol(argv[2]) : 1;
    fail_rank = argc > 3 ? atoi(argv[3]) : 1;
    if (fail_rank < 0 || fail_rank >= size) fail_rank = 1;
    failures(cw, stride > 0 ? stride : 1);
    mf_context_destroy(&cw);
    mf_context_destroy(&c1);
    return t_finish();
  }
  for (int levels = 1; levels <= 3; levels++) {
    run(cw, c1, "square-tris", NULL, 2, levels);
    run(cw, c1, "cube-tets", NULL, 3, levels);
  }
  if (argc > 1) { /* a Gmsh file: unstructured, cells' vertices in the file's order, physical tags */
    char path[512];
    snprintf(path, sizeof path, "%s/sphere_hole.msh", argv[1]);
    for (int levels = 1; levels <= 2; levels++) run(cw, c1, NULL, path, 3, levels);
  }
  mf_context_destroy(&cw);
  mf_context_destroy(&c1);
  return t_finish();
}
