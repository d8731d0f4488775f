/* t18_assembly_variants -- the variants of the assembled values (mf_operator_create_assembled_variant)
 * against the reference (mf_operator_create_assembled on 'cpu'):
 *   cpu      each CPU twin (search, table with 4- and 8-byte positions, rowwise) gives the reference's
 *            values to 1e-13 relative (row by row, the same pattern), for mass, Laplace and Helmholtz,
 *            2D p = 1..4 and 3D p = 1..3, all three quadratures, uniform and adaptive (hanging nodes),
 *            Dirichlet form on and off, on any number of ranks; its product equals the reference's; the
 *            column-wise entries (mf_element_column, search and table at 2D p <= 3, 3D p <= 2) equal
 *            the entry-by-entry ones to 1e-13 cell by cell, and apply exactly there;
 *   errors   bad input refused with a message, nothing made;
 *   memory   a table that does not fit the host memory is refused before allocation; every allocation
 *            of each variant failing in turn gives MF_ERR_MEMORY and leaves nothing behind (valgrind);
 *   cuda     (label cuda; 77 without a GPU) values: each device variant's values, copied to the host,
 *            equal the CPU reference to 1e-13; apply: the device operator's product and diagonal equal
 *            the reference's (needs lib/cuda/csr.cu); memory: device limits refuse the pattern, the
 *            table and the lists before allocating, and leave no device memory behind; the table of
 *            positions is kept with the space after the first table assembly (its bytes counted) and
 *            reused by the next.
 * Usage: t18_assembly_variants cpu [all|quick|errors|memory|limits] | cuda [values|apply|memory]          */
#include "mf_test.h"
#include "mf_testing.h"
#include "assembled/assembly_impl.h"

typedef struct {
  mf_assembly_variant v;
  int wide; /* 8-byte table positions (forced) */
  const char *name;
} variant_case;
static const variant_case variants[] = {{MF_ASSEMBLY_SEARCH, 0, "search"},
                                        {MF_ASSEMBLY_TABLE, 0, "table"},
                                        {MF_ASSEMBLY_TABLE, 1, "table (8-byte positions)"},
                                        {MF_ASSEMBLY_ROWWISE, 0, "rowwise"},
                                        {MF_ASSEMBLY_AUTO, 0, "auto"}};
#define NVARIANTS ((int)(sizeof variants / sizeof variants[0]))

static int create(mf_space s, int kind, mf_quadrature q, mf_operator *op)
{
  if (kind == 0) return mf_operator_create_mass(s, q, t_ljungkvist, NULL, op);
  if (kind == 1) return mf_operator_create_laplace(s, q, t_ljungkvist, NULL, op);
  return mf_operator_create_helmholtz(s, q, 0.7, 1.3, t_ljungkvist, NULL, op);
}

/* max over the rows of max_k |a_k - r_k| / max_k |r_k| (rows of the pattern of s) */
static double row_difference(mf_space s, const double *a, const double *r)
{
  double worst = 0.0;
  for (int i = 0; i < s->nlocal; i++) {
    double m = 0.0, d = 0.0;
    for (int64_t k = s->csr_rowptr[i]; k < s->csr_rowptr[i + 1]; k++) {
      m = fmax(m, fabs(r[k]));
      d = fmax(d, fabs(a[k] - r[k]));
    }
    if (m > 0.0) d /= m;
    if (!(d <= worst)) worst = d; /* NaN wins */
  }
  return worst;
}

/* the values of an assembled operator on the host (a copy; free it) */
static double *values_of(mf_operator S)
{
  int64_t nnz;
  T_CALL(mf_operator_local_nnz(S, &nnz));
  double *v = malloc(sizeof(double) * (size_t)(nnz ? nnz : 1));
  T_CALL(mf_operator_csr_values_host(S, v));
  return v;
}

/* max |S x - R x| / max |R x| over the owned entries, x random (the same on both backends); diag: the
 * diagonals instead */
static double product_difference(mf_operator S, mf_operator R, int seed, int diag)
{
  mf_vector x, ys, yr;
  int n;
  mf_space_local_sizes(R->space, &n, NULL);
  T_CALL(mf_vector_create(S->space, &x));
  T_CALL(mf_vector_create(S->space, &ys));
  T_CALL(mf_vector_create(R->space, &yr));
  if (diag) {
    T_CALL(mf_operator_diagonal(S, ys));
    T_CALL(mf_operator_diagonal(R, yr));
  } else {
    mf_vector xr;
    T_CALL(mf_vector_create(R->space, &xr));
    T_CALL(mf_vector_set_random(x, seed));
    T_CALL(mf_vector_set_random(xr, seed));
    T_CALL(mf_operator_apply(S, x, ys));
    T_CALL(mf_operator_apply(R, xr, yr));
    mf_vector_destroy(&xr);
  }
  double *hs = malloc(sizeof(double) * (n ? n : 1)), *hr = malloc(sizeof(double) * (n ? n : 1)), d = 0.0, m = 0.0;
  T_CALL(mf_vector_get_values(ys, hs));
  T_CALL(mf_vector_get_values(yr, hr));
  for (int i = 0; i < n; i++) {
    d = fmax(d, fabs(hs[i] - hr[i]));
    m = fmax(m, fabs(hr[i]));
  }
  MPI_Allreduce(MPI_IN_PLACE, &d, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  MPI_Allreduce(MPI_IN_PLACE, &m, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  free(hs);
  free(hr);
  mf_vector_destroy(&x);
  mf_vector_destroy(&ys);
  mf_vector_destroy(&yr);
  return d / m;
}

/* the meshes of the comparisons: the ball, uniform or with cells near a point refined (hanging faces
 * and edges); 3D at p = 3 one level coarser */
static void case_mesh(mf_context ctx, int dim, int p, int adapt, mf_mesh *mesh)
{
  t_ball(ctx, dim, dim == 2 ? 2 : (p <= 2 ? 1 : 0), adapt, mesh);
}

/* The column-wise form (mf_element_column with the point table) against the entry-by-entry one
 * (mf_element_entry) on every element matrix of op's first cells: 1e-13 relative to the matrix's
 * largest entry. The form applies exactly where lib/cuda/assembly.cu instantiates it: 2D p <= 3, 3D
 * p <= 2, every rule. */
static void check_column(mf_operator op, int dim, int p, int q, int kind)
{
  mf_element_shape sh;
  mf_assembly_shape(op, &sh);
  const int fast = mf_element_fast(&sh);
  T_CHECK(fast == (p <= (dim == 2 ? 3 : 2)), "dim %d p %d quad %d: column-wise form %s", dim, p, q,
          fast ? "taken" : "not taken");
  if (!fast) return;
  const int npc = sh.npc;
  double *T = malloc(sizeof(double) * 4 * (size_t)sh.nqp * npc), col[MF_ELEMENT_FAST_MAX_NPC];
  mf_element_point_table(&sh, mf_hexop(op)->basis.B, mf_hexop(op)->basis.Bg, T);
  double worst = 0.0;
  for (int e = 0; e < op->space->ncells && e < 8; e++) {
    const double *qd = mf_hexop(op)->qd.data + mf_element_qd_base(e, mf_hexop(op)->qd.batch, mf_hexop(op)->qd.batch_stride, mf_hexop(op)->qd.nqp);
    double m = 0.0, d = 0.0;
    for (int j = 0; j < npc; j++) {
      mf_element_column(&sh, qd, T, j, col);
      for (int i = 0; i < npc; i++) {
        const double r = mf_element_entry(&sh, qd, mf_hexop(op)->basis.B, mf_hexop(op)->basis.Bg, i, j);
        m = fmax(m, fabs(r));
        d = fmax(d, fabs(col[i] - r));
      }
    }
    if (!(d / m <= worst)) worst = d / m;
  }
  T_CHECK(worst <= 1e-13, "column-wise entries kind %d dim %d p %d quad %d: %.3e relative", kind, dim, p, q, worst);
  free(T);
}

static void check_cpu(mf_context ctx, int maxp3)
{
  int ncases = 0;
  for (int dim = 2; dim <= 3; dim++)
    for (int adapt = 0; adapt <= 1; adapt++)
      for (int p = 1; p <= (dim == 2 ? 4 : maxp3); p++) {
        mf_mesh mesh;
        mf_space space;
        case_mesh(ctx, dim, p, adapt, &mesh);
        T_CALL(mf_space_create(mesh, p, &space));
        if (adapt) T_CHECK(space->nmasked > 0 || ctx->size > 1, "dim %d p %d: no cell with hanging nodes", dim, p);
        for (int q = 0; q < 3; q++)
          for (int kind = 0; kind < 3; kind++) {
            mf_operator A, R;
            T_CALL(create(space, kind, (mf_quadrature)q, &A));
            const int dir0 = (p + q + kind) % 2; /* the Dirichlet form at creation: the values do not see it */
            T_CALL(mf_operator_set_dirichlet(A, dir0));
            T_CALL(mf_operator_create_assembled(A, &R));
            check_column(A, dim, p, q, kind);
            for (int k = 0; k < NVARIANTS; k++) {
              mf_operator S;
              mf_test_assembly_table_wide(variants[k].wide);
              T_CALL(mf_operator_create_assembled_variant(A, variants[k].v, &S));
              mf_test_assembly_table_wide(0);
              T_CHECK(mf_csr(S)->rowptr == mf_csr(R)->rowptr && mf_csr(S)->colidx == mf_csr(R)->colidx, "%s: not the space's pattern", variants[k].name);
              const double d = row_difference(space, mf_csr(S)->vals, mf_csr(R)->vals);
              T_CHECK(d <= 1e-13, "values %s kind %d dim %d p %d quad %d adapt %d dirichlet %d: %.3e relative",
                      variants[k].name, kind, dim, p, q, adapt, dir0, d);
              if (variants[k].v == MF_ASSEMBLY_AUTO)
                T_CHECK(!memcmp(mf_csr(S)->vals, mf_csr(R)->vals, sizeof(double) * (size_t)mf_csr(R)->rowptr[space->nlocal]),
                        "auto is not the reference on cpu (kind %d dim %d p %d)", kind, dim, p);
              for (int dir = 0; dir < 2; dir++) {
                T_CALL(mf_operator_set_dirichlet(S, dir));
                T_CALL(mf_operator_set_dirichlet(R, dir));
                const double e = product_difference(S, R, 7 + p, 0);
                T_CHECK(e <= 1e-13, "apply %s kind %d dim %d p %d quad %d adapt %d dirichlet %d: %.3e relative",
                        variants[k].name, kind, dim, p, q, adapt, dir, e);
              }
              mf_operator_destroy(&S);
              ncases++;
            }
            mf_operator_destroy(&R);
            mf_operator_destroy(&A);
          }
        mf_space_destroy(&space);
        mf_mesh_destroy(&mesh);
      }
  T_CHECK(ncases == 2 * (4 + maxp3) * 9 * NVARIANTS, "ran %d cases", ncases);
}

static int shell_apply(mf_vector x, mf_vector y, void *user)
{
  (void)user;
  return mf_vector_copy(y, x);
}

static void check_errors(mf_context ctx)
{
  mf_mesh mesh;
  mf_space space;
  mf_operator A, S = NULL, shell, single, R;
  T_CALL(mf_mesh_create(ctx, "cube", 2, 2, &mesh));
  T_CALL(mf_space_create(mesh, 2, &space));
  T_CALL(mf_operator_create_laplace(space, MF_QUAD_GAUSS, NULL, NULL, &A));
  T_CALL(mf_operator_create_shell(space, shell_apply, NULL, NULL, &shell));
  T_CALL(mf_operator_create_single(A, &single));
  T_CALL(mf_operator_create_assembled(A, &R));
  EXPECT(mf_operator_create_assembled_variant(NULL, MF_ASSEMBLY_TABLE, &S), MF_ERR_NULL, "operator is NULL");
  EXPECT(mf_operator_create_assembled_variant(A, MF_ASSEMBLY_TABLE, NULL), MF_ERR_NULL,
         "output pointer assembled is NULL");
  EXPECT(mf_operator_create_assembled_variant(A, (mf_assembly_variant)7, &S), MF_ERR_ARGUMENT,
         "assembly variant 7 unknown (MF_ASSEMBLY_AUTO, MF_ASSEMBLY_SEARCH, MF_ASSEMBLY_TABLE or MF_ASSEMBLY_ROWWISE)");
  T_CHECK(S == NULL, "refused variant left an operator");
  EXPECT(mf_operator_create_assembled_variant(A, (mf_assembly_variant)-1, &S), MF_ERR_ARGUMENT, "variant -1 unknown");
  for (int v = MF_ASSEMBLY_AUTO; v <= MF_ASSEMBLY_ROWWISE; v++) {
    EXPECT(mf_operator_create_assembled_variant(shell, (mf_assembly_variant)v, &S), MF_ERR_UNSUPPORTED,
           "can be assembled, not a shell operator");
    EXPECT(mf_operator_create_assembled_variant(R, (mf_assembly_variant)v, &S), MF_ERR_UNSUPPORTED,
           "can be assembled, not an assembled (CSR) operator");
    EXPECT(mf_operator_create_assembled_variant(single, (mf_assembly_variant)v, &S), MF_ERR_UNSUPPORTED,
           "single-precision operator copy cannot be assembled");
    T_CHECK(S == NULL, "refused assembly (variant %d) left an operator", v);
  }
  /* an operator with values only refuses its product */
  T_CALL(mf_operator_create_assembled_values(A, MF_ASSEMBLY_SEARCH, &S));
  mf_vector x, y;
  T_CALL(mf_vector_create(space, &x));
  T_CALL(mf_vector_create(space, &y));
  EXPECT(mf_operator_apply(S, x, y), MF_ERR_UNSUPPORTED, "holds its values only");
  EXPECT(mf_operator_diagonal(S, y), MF_ERR_UNSUPPORTED, "holds its values only");
  mf_vector_destroy(&x);
  mf_vector_destroy(&y);
  mf_operator_destroy(&S);
  mf_operator_destroy(&R);
  mf_operator_destroy(&single);
  mf_operator_destroy(&shell);
  mf_operator_destroy(&A);
  mf_space_destroy(&space);
  mf_mesh_destroy(&mesh);
}

/* Host memory: the table refused before allocation when it does not fit (8-byte positions of 3D p = 1
 * take more than the values); each allocation failing in turn, for each variant, on an adaptive mesh. */
static void check_memory(mf_context ctx)
{
  mf_mesh mesh;
  mf_space space;
  mf_operator A, R, S = NULL;
  T_CALL(mf_mesh_create(ctx, "cube", 3, 3, &mesh));
  T_CALL(mf_space_create(mesh, 1, &space));
  T_CALL(mf_operator_create_laplace(space, MF_QUAD_GAUSS, NULL, NULL, &A));
  T_CALL(mf_operator_create_assembled(A, &R)); /* the pattern */
  const double nnz = (double)space->csr_rowptr[space->nlocal];
  mf_test_set_host_available(8.0 * nnz + 8.0 * space->nlocal + 4.0 * space->ncells + 1000.0);
  mf_test_assembly_table_wide(1);
  mf_test_fail_host_alloc(0);
  EXPECT(mf_operator_create_assembled_variant(A, MF_ASSEMBLY_TABLE, &S), MF_ERR_MEMORY, "the table of positions");
  EXPECT(mf_operator_create_assembled_variant(A, MF_ASSEMBLY_TABLE, &S), MF_ERR_MEMORY, "needs about");
  T_CHECK(S == NULL, "refused table left an operator");
  mf_test_assembly_table_wide(0);
  T_CALL(mf_operator_create_assembled_variant(A, MF_ASSEMBLY_SEARCH, &S)); /* the values fit */
  mf_operator_destroy(&S);
  mf_test_set_host_available(0.0);
  mf_operator_destroy(&R);
  mf_operator_destroy(&A);
  mf_space_destroy(&space);
  mf_mesh_destroy(&mesh);

  for (int k = 0; k < NVARIANTS - 1; k++) {
    mf_test_assembly_table_wide(variants[k].wide);
    t_mesh(ctx, "cube", 2, 2, 1, &mesh); /* hanging nodes */
    T_CALL(mf_space_create(mesh, 2, &space));
    T_CALL(mf_operator_create_helmholtz(space, MF_QUAD_GAUSS, 0.7, 1.3, t_ljungkvist, NULL, &A));
    int ok = 0;
    for (long n = 1; n < 200 && !ok; n++) {
      mf_test_fail_host_alloc(n);
      int ierr = mf_operator_create_assembled_variant(A, variants[k].v, &S);
      mf_test_fail_host_alloc(0);
      if (!ierr) ok = 1;
      else {
        T_CHECK(ierr == MF_ERR_MEMORY && S == NULL, "%s, allocation %ld failing: code %d (%s)", variants[k].name, n,
                ierr, mf_last_error_message());
        T_CHECK(strstr(mf_last_error_message(), "out of host memory") != NULL, "%s, allocation %ld failing: '%s'",
                variants[k].name, n, mf_last_error_message());
      }
    }
    T_CHECK(ok, "%s: assembly failed with every allocation", variants[k].name);
    if (ok) {
      T_CALL(mf_operator_create_assembled(A, &R));
      const double d = row_difference(space, mf_csr(S)->vals, mf_csr(R)->vals);
      T_CHECK(d <= 1e-13, "%s after failed allocations: %.3e relative", variants[k].name, d);
      mf_operator_destroy(&R);
      mf_operator_destroy(&S);
    }
    mf_test_assembly_table_wide(0);
    mf_operator_destroy(&A);
    mf_space_destroy(&space);
    mf_mesh_destroy(&mesh);
  }
}

/* The device variants: values (without the product) and, with the product, apply and diagonal, against
 * the CPU reference on the same mesh. */
static void check_cuda(mf_context cc, mf_context gc, int apply)
{
  for (int dim = 2; dim <= 3; dim++)
    for (int adapt = 0; adapt <= 1; adapt++)
      for (int p = 1; p <= (dim == 2 ? 4 : 3); p++) {
        mf_mesh cm, gm;
        mf_space cs, gs;
        case_mesh(cc, dim, p, adapt, &cm);
        case_mesh(gc, dim, p, adapt, &gm);
        T_CALL(mf_space_create(cm, p, &cs));
        T_CALL(mf_space_create(gm, p, &gs));
        for (int q = 0; q < 3; q++)
          for (int kind = 0; kind < 3; kind++) {
            mf_operator co, go, R;
            T_CALL(create(cs, kind, (mf_quadrature)q, &co));
            T_CALL(create(gs, kind, (mf_quadrature)q, &go));
            T_CALL(mf_operator_create_assembled(co, &R));
            for (int k = 0; k < NVARIANTS; k++) {
              mf_operator S;
              mf_test_assembly_table_wide(variants[k].wide);
              if (!apply) {
                T_CALL(mf_operator_create_assembled_values(go, variants[k].v, &S));
                mf_test_assembly_table_wide(0);
                const int64_t n = cs->nlocal;
                T_CHECK(gs->nlocal == n && !memcmp(gs->csr_rowptr, cs->csr_rowptr, sizeof(int64_t) * (size_t)(n + 1)) &&
                            !memcmp(gs->csr_colidx, cs->csr_colidx, sizeof(int) * (size_t)cs->csr_rowptr[n]),
                        "dim %d p %d adapt %d: the two backends' patterns differ", dim, p, adapt);
                double *v = values_of(S);
                const double d = row_difference(cs, v, mf_csr(R)->vals);
                T_CHECK(d <= 1e-13, "device values %s kind %d dim %d p %d quad %d adapt %d: %.3e relative",
                        variants[k].name, kind, dim, p, q, adapt, d);
                free(v);
              } else {
                T_CALL(mf_operator_create_assembled_variant(go, variants[k].v, &S));
                mf_test_assembly_table_wide(0);
                for (int dir = 0; dir < 2; dir++) {
                  T_CALL(mf_operator_set_dirichlet(S, dir));
                  T_CALL(mf_operator_set_dirichlet(R, dir));
                  const double e = product_difference(S, R, 5 + p, 0), g = product_difference(S, R, 0, 1);
                  T_CHECK(e <= 1e-12 && g <= 1e-12,
                          "device %s kind %d dim %d p %d quad %d adapt %d dirichlet %d: apply %.3e, diagonal %.3e",
                          variants[k].name, kind, dim, p, q, adapt, dir, e, g);
                }
              }
              mf_operator_destroy(&S);
            }
            mf_operator_destroy(&R);
            mf_operator_destroy(&co);
            mf_operator_destroy(&go);
          }
        mf_space_destroy(&cs);
        mf_space_destroy(&gs);
        mf_mesh_destroy(&cm);
        mf_mesh_destroy(&gm);
      }
}

/* Device memory limits: the pattern, then the table and the lists refused before allocating; nothing
 * left behind by a refusal or by a destroyed operator. */
static void check_cuda_memory(mf_context gc)
{
  mf_mesh mesh;
  mf_space s;
  mf_operator A, S = NULL;
  size_t base, in_use, peak;
  T_CALL(mf_mesh_create(gc, "cube", 3, 3, &mesh));
  T_CALL(mf_space_create(mesh, 2, &s));
  T_CALL(mf_operator_create_laplace(s, MF_QUAD_GAUSS, t_ljungkvist, NULL, &A));
  T_CALL(mf_context_device_memory(gc, &base, &peak));
  T_CALL(mf_context_set_device_memory_limit(gc, base + 4096));
  int e = mf_operator_create_assembled_values(A, MF_ASSEMBLY_SEARCH, &S);
  T_CHECK(e == MF_ERR_MEMORY && S == NULL, "pattern over the limit: code %d", e);
  T_CHECK(strstr(mf_last_error_message(), "the sparsity of the assembled operators") &&
              strstr(mf_last_error_message(), "bytes of device memory but"),
          "pattern refusal: '%s'", mf_last_error_message());
  T_CALL(mf_context_device_memory(gc, &in_use, &peak));
  T_CHECK(in_use == base, "refused pattern left %zu bytes", in_use - base);
  T_CALL(mf_context_set_device_memory_limit(gc, 0));
  T_CALL(mf_operator_create_assembled_values(A, MF_ASSEMBLY_SEARCH, &S)); /* makes the device pattern */
  mf_operator_destroy(&S);
  T_CALL(mf_context_device_memory(gc, &base, &peak));
  const size_t nnz = (size_t)s->csr_rowptr[s->nlocal];
  /* the values and the work vector fit (8 nnz + 8 n + 144), the table (4 x 729 B per cell: 1.5 MB) and the
   * lists (8 B per DoF + 216 B per cell: 150 kB) do not */
  T_CALL(mf_context_set_device_memory_limit(gc, base + 8 * nnz + 8 * (size_t)s->nlocal + 32768));
  const struct {
    mf_assembly_variant v;
    const char *msg;
  } refused[] = {{MF_ASSEMBLY_TABLE, "table of 4-byte positions"}, {MF_ASSEMBLY_ROWWISE, "the DoF-to-cell lists"}};
  for (int k = 0; k < 2; k++) {
    e = mf_operator_create_assembled_values(A, refused[k].v, &S);
    T_CHECK(e == MF_ERR_MEMORY && S == NULL, "variant %d over the limit: code %d", (int)refused[k].v, e);
    T_CHECK(strstr(mf_last_error_message(), refused[k].msg) && strstr(mf_last_error_message(), "needs"),
            "variant %d refusal: '%s'", (int)refused[k].v, mf_last_error_message());
    T_CALL(mf_context_device_memory(gc, &in_use, &peak));
    T_CHECK(in_use == base, "refused variant %d left %zu bytes", (int)refused[k].v, in_use - base);
  }
  /* auto under the same limit: no table fits beside the values, so it assembles by the search and
   * keeps no table */
  e = mf_operator_create_assembled_values(A, MF_ASSEMBLY_AUTO, &S);
  T_CHECK(e == 0 && S != NULL, "auto under a limit that refuses the table: code %d (%s)", e,
          e ? mf_last_error_message() : "");
  T_CHECK(mf_assembly_table_kept_bytes(s) == 0, "auto kept a table that does not fit");
  mf_operator_destroy(&S);
  T_CALL(mf_operator_create_assembled_values(A, MF_ASSEMBLY_SEARCH, &S));
  mf_operator_destroy(&S);
  T_CALL(mf_context_device_memory(gc, &in_use, &peak));
  T_CHECK(in_use == base, "a destroyed assembled operator left %zu bytes", in_use - base);
  T_CALL(mf_context_set_device_memory_limit(gc, 0));
  /* the table of positions: made by the first table assembly, kept with the space (its bytes counted),
   * reused by the next table assembly, which then fits under the limit that refused the first */
  T_CHECK(mf_assembly_table_kept_bytes(s) == 0, "a table kept before any table assembly");
  T_CALL(mf_operator_create_assembled_values(A, MF_ASSEMBLY_TABLE, &S));
  mf_operator_destroy(&S);
  const size_t kept = mf_assembly_table_kept_bytes(s);
  T_CALL(mf_context_device_memory(gc, &in_use, &peak));
  T_CHECK(kept == 4 * (size_t)(s->ncells - s->nmasked) * (size_t)s->npc * (size_t)s->npc && in_use == base + kept,
          "kept table: %zu bytes, %zu more in use", kept, in_use - base);
  T_CALL(mf_context_set_device_memory_limit(gc, in_use + 8 * nnz + 8 * (size_t)s->nlocal + 32768));
  T_CALL(mf_operator_create_assembled_values(A, MF_ASSEMBLY_TABLE, &S));
  mf_operator_destroy(&S);
  T_CALL(mf_context_device_memory(gc, &in_use, &peak));
  T_CHECK(in_use == base + kept && mf_assembly_table_kept_bytes(s) == kept, "reused table: %zu more in use",
          in_use - base);
  T_CALL(mf_context_set_device_memory_limit(gc, 0));
  mf_operator_destroy(&A);
  mf_space_destroy(&s);
  mf_mesh_destroy(&mesh);
}

int main(int argc, char **argv)
{
  MPI_Init(&argc, &argv);
  const char *be = t_backend(argc, argv), *part = argc > 2 ? argv[2] : "all";
  mf_context ctx;
  T_CALL(mf_context_create(MPI_COMM_WORLD, "cpu", &ctx));
  if (!strcmp(be, "cuda")) {
    mf_context gc;
    T_CALL(mf_context_create(MPI_COMM_WORLD, "cuda", &gc));
    if (!strcmp(part, "memory")) check_cuda_memory(gc);
    else check_cuda(ctx, gc, !strcmp(part, "apply"));
    mf_context_destroy(&gc);
  } else if (!strcmp(part, "errors")) check_errors(ctx);
  else if (!strcmp(part, "memory")) check_memory(ctx);
  else if (!strcmp(part, "limits")) { /* valgrind: the refusals and failure paths */
    check_errors(ctx);
    check_memory(ctx);
  }
  else {
    check_errors(ctx);
    check_cpu(ctx, strcmp(part, "quick") ? 3 : 2);
  }
  mf_context_destroy(&ctx);
  return t_finish();
}
