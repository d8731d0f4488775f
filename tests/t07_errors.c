/* t07_errors -- bad input returns a nonzero code and a message naming the bad value; nothing
 * aborts. Each check asserts the code and a substring of the message. */
#include "mf_test.h"

#include <limits.h>
#include <sc.h>

static double one_fn(const double *x, int dim, void *u) { return 1.0 + x[0]; }
/* NaN (user 0) or +inf (user 1) right of x = 0.7, 1 elsewhere */
static double bad_fn(const double *x, int dim, void *u)
{
  (void)dim;
  return x[0] > 0.7 ? (*(int *)u ? INFINITY : NAN) : 1.0;
}
/* fails with code 3 and records no message */
static int silent_failure(mf_vector x, mf_vector y, void *user)
{
  (void)x, (void)y, (void)user;
  return 3;
}
/* libsc's default log handler of the program: mfree must leave it and its threshold alone */
static int nlog = 0;
static void count_log(FILE *f, const char *file, int line, int pkg, int cat, int prio, const char *msg)
{
  (void)f, (void)file, (void)line, (void)pkg, (void)cat, (void)prio, (void)msg;
  nlog++;
}
static int negate(mf_vector x, mf_vector y, void *user)
{
  int e = mf_vector_copy(y, x);
  return e ? e : mf_vector_scale(y, -1.0);
}

int main(int argc, char **argv)
{
  MPI_Init(&argc, &argv);
  sc_set_log_defaults(NULL, count_log, SC_LP_INFO);
  mf_context ctx = NULL, bad = (mf_context)1;
  mf_mesh mesh = NULL, mesh2 = NULL, m = NULL;
  mf_space space = NULL, space2 = NULL, s = NULL;
  mf_operator op = NULL, o = NULL;
  mf_vector x = NULL, y = NULL, z = NULL, z2 = NULL;
  mf_cg cg = NULL;
  double r;

  EXPECT(mf_context_create(MPI_COMM_WORLD, "gpu2", &bad), MF_ERR_BACKEND, "unknown backend 'gpu2'");
  T_CHECK(bad == NULL, "failed create must leave the handle NULL");
  EXPECT(mf_context_create(MPI_COMM_WORLD, NULL, &ctx), MF_ERR_NULL, "backend name is NULL");
  if (!mf_cuda_available()) EXPECT(mf_context_create(MPI_COMM_WORLD, "cuda", &ctx), MF_ERR_BACKEND, "backend 'cuda'");
  T_CALL(mf_context_create(MPI_COMM_WORLD, "cpu", &ctx));
  sc_logf(__FILE__, __LINE__, -1, SC_LC_NORMAL, SC_LP_INFO, "a program's own message\n");
  T_CHECK(nlog == 1, "libsc's default log handler and threshold were changed by mfree (%d messages)", nlog);

  EXPECT(mf_mesh_create(ctx, "torus", 3, 1, &m), MF_ERR_ARGUMENT, "unknown mesh 'torus'");
  EXPECT(mf_mesh_create(ctx, "cube", 4, 1, &m), MF_ERR_ARGUMENT, "dimension 4 out of range");
  EXPECT(mf_mesh_create(ctx, "cube", 3, -1, &m), MF_ERR_ARGUMENT, "refinement level -1 out of range");
  EXPECT(mf_mesh_create(ctx, NULL, 3, 1, &m), MF_ERR_NULL, "mesh name is NULL");
  EXPECT(mf_mesh_create(NULL, "cube", 3, 1, &m), MF_ERR_NULL, "context is NULL");
  {
    const int uneven[3] = {2, 3, 2}, zero[3] = {1, 0, 1};
    EXPECT(mf_mesh_create_box(ctx, "ball", 3, uneven, 1, &m), MF_ERR_ARGUMENT, "must be equal (got 2, 3, 2)");
    EXPECT(mf_mesh_create_box(ctx, "cube", 3, zero, 1, &m), MF_ERR_ARGUMENT, "trees in direction 1: 0 out of range");
  }
  T_CHECK(!strcmp(mf_context_error_message(ctx), mf_last_error_message()), "context message '%s', last message '%s'",
          mf_context_error_message(ctx), mf_last_error_message());
  /* sizes p4est cannot hold, or this machine: refused before anything is allocated */
  EXPECT(mf_mesh_create(ctx, "cube", 3, 12, &m), MF_ERR_ARGUMENT, "p4est allows at most 2147483647 per rank");
  EXPECT(mf_mesh_create(ctx, "deformed", 2, 18, &m), MF_ERR_ARGUMENT, "6.87e+10 cells");
  {
    const int ball675[3] = {675, 675, 675}, huge[3] = {4096, 4096, 100};
    EXPECT(mf_mesh_create_box(ctx, "ball", 3, ball675, 0, &m), MF_ERR_ARGUMENT,
           "has 2152828125 coarse trees; p4est allows at most 2147483647");
    EXPECT(mf_mesh_create_box(ctx, "cube", 3, huge, 0, &m), MF_ERR_MEMORY, "GB of host memory per rank, but");
    T_CHECK(m == NULL, "refused mesh must leave the handle NULL");
  }
  T_CALL(mf_mesh_create(ctx, "cube", 2, 2, &mesh));
  EXPECT(mf_mesh_adapt(mesh, NULL, NULL), MF_ERR_NULL, "adaptation callback is NULL");
  EXPECT(mf_mesh_adapt(NULL, NULL, NULL), MF_ERR_NULL, "mesh is NULL");
  EXPECT(mf_mesh_refine_shells(mesh, 11), MF_ERR_ARGUMENT, "shell refinement levels 11 out of range 0..10");
  T_CALL(mf_mesh_create(ctx, "ball", 2, 1, &mesh2));

  EXPECT(mf_space_create(mesh, 0, &s), MF_ERR_ARGUMENT, "degree 0 out of range 1..8");
  EXPECT(mf_space_create(mesh, 9, &s), MF_ERR_ARGUMENT, "degree 9 out of range 1..8");
  EXPECT(mf_space_create(NULL, 2, &s), MF_ERR_NULL, "mesh is NULL");
  T_CHECK(s == NULL, "failed space create must leave the handle NULL");
  /* an error on a NULL handle belongs to no context: the context shows it while it is the latest */
  T_CHECK(strstr(mf_context_error_message(ctx), "mesh is NULL"), "context shows the NULL handle's message: '%s'",
          mf_context_error_message(ctx));
  EXPECT(mf_space_create(mesh, 9, &s), MF_ERR_ARGUMENT, "degree 9 out of range 1..8");
  T_CHECK(strstr(mf_context_error_message(ctx), "degree 9"), "context keeps its last message: '%s'", mf_context_error_message(ctx));
  T_CALL(mf_space_create(mesh, 2, &space));
  T_CALL(mf_space_create(mesh2, 2, &space2));

  EXPECT(mf_operator_create_laplace(space, (mf_quadrature)7, NULL, NULL, &o), MF_ERR_ARGUMENT, "quadrature 7 unknown");
  EXPECT(mf_operator_create_mass(NULL, MF_QUAD_GAUSS, NULL, NULL, &o), MF_ERR_NULL, "space is NULL");
  EXPECT(mf_operator_create_helmholtz(space, MF_QUAD_GAUSS, NAN, 1.0, NULL, NULL, &o), MF_ERR_ARGUMENT, "a = nan");
  {
    int inf = 0;
    EXPECT(mf_operator_create_laplace(space, MF_QUAD_GAUSS, bad_fn, &inf, &o), MF_ERR_ARGUMENT,
           "coefficient c = nan at quadrature point");
    T_CHECK(o == NULL && strstr(mf_last_error_message(), "must be finite"), "NaN coefficient: %s", mf_last_error_message());
    inf = 1;
    EXPECT(mf_operator_create_mass(space, MF_QUAD_GLL, bad_fn, &inf, &o), MF_ERR_ARGUMENT, "coefficient c = inf");
    /* a failing shell callback gets a message of its own, not the stale one before it */
    mf_operator sh;
    T_CALL(mf_operator_create_shell(space, silent_failure, silent_failure, NULL, &sh));
    T_CALL(mf_vector_create(space, &z2));
    T_CALL(mf_vector_create(space, &x));
    EXPECT(mf_operator_apply(sh, x, z2), 3, "shell operator's apply function returned 3");
    EXPECT(mf_operator_diagonal(sh, z2), 3, "shell operator's diagonal function returned 3");
    mf_vector_destroy(&x);
    mf_vector_destroy(&z2);
    mf_operator_destroy(&sh);
  }
  T_CALL(mf_operator_create_laplace(space, MF_QUAD_GAUSS, NULL, NULL, &op));
  T_CALL(mf_vector_create(space, &x));
  T_CALL(mf_vector_create(space, &y));
  T_CALL(mf_vector_create(space2, &z));

  EXPECT(mf_operator_set_scatter(op, (mf_scatter)5), MF_ERR_ARGUMENT, "scatter mode 5 unknown");
  EXPECT(mf_operator_set_cells_per_block(op, 0), MF_ERR_ARGUMENT, "cells per block 0 out of range");
  EXPECT(mf_operator_set_cells_per_block(op, 200), MF_ERR_ARGUMENT, "cells per block 200 out of range 1..56");
  EXPECT(mf_operator_set_kernel_design(op, (mf_kernel_design)3), MF_ERR_ARGUMENT, "kernel design 3 unknown");
  EXPECT(mf_operator_set_kernel_design(NULL, MF_KERNEL_COLUMN), MF_ERR_NULL, "operator is NULL");
  EXPECT(mf_operator_apply(NULL, x, y), MF_ERR_NULL, "operator is NULL");
  EXPECT(mf_operator_apply(op, NULL, y), MF_ERR_NULL, "input vector x is NULL");
  EXPECT(mf_operator_apply(op, z, y), MF_ERR_INCOMPATIBLE, "x belongs to another space");
  EXPECT(mf_operator_apply(op, x, z), MF_ERR_INCOMPATIBLE, "y belongs to another space");
  EXPECT(mf_operator_apply(op, x, x), MF_ERR_ARGUMENT, "must be different");
  EXPECT(mf_operator_diagonal(op, z), MF_ERR_INCOMPATIBLE, "another space");
  EXPECT(mf_vector_axpy(y, 1.0, z), MF_ERR_INCOMPATIBLE, "different spaces");
  EXPECT(mf_vector_dot(NULL, y, &r), MF_ERR_NULL, "vector x is NULL");
  EXPECT(mf_vector_copy(z, x), MF_ERR_INCOMPATIBLE, "different spaces");
  EXPECT(mf_vector_interpolate(x, NULL, NULL), MF_ERR_NULL, "function f is NULL");
  EXPECT(mf_vector_set_values(NULL, &r), MF_ERR_NULL, "vector is NULL");

  EXPECT(mf_cg_create(NULL, &cg), MF_ERR_NULL, "operator is NULL");
  T_CALL(mf_cg_create(op, &cg));
  EXPECT(mf_cg_set_tolerance(cg, -1.0, 10), MF_ERR_ARGUMENT, "tolerance -1 out of range");
  EXPECT(mf_cg_set_tolerance(cg, 1e-8, 0), MF_ERR_ARGUMENT, "iteration limit 0");
  EXPECT(mf_cg_solve(cg, z, x, NULL), MF_ERR_INCOMPATIBLE, "right-hand side b belongs to another space (89 DoFs, operator has 81)");
  EXPECT(mf_cg_solve(cg, x, x, NULL), MF_ERR_ARGUMENT, "different vectors");
  /* CG's limits: an iteration limit of INT_MAX (the history grows as needed), and a tolerance below
   * what double precision reaches: the recursive residual gets there, the true one does not, and the
   * solve must not report convergence */
  {
    mf_operator H;
    mf_cg cgh;
    mf_cg_info info;
    const double *h = NULL;
    int nh = 0;
    T_CALL(mf_operator_create_helmholtz(space, MF_QUAD_GAUSS, 1.0, 1.0, NULL, NULL, &H));
    T_CALL(mf_cg_create(H, &cgh));
    T_CALL(mf_vector_interpolate(x, one_fn, NULL));
    T_CALL(mf_vector_set_value(y, 0.0));
    T_CALL(mf_cg_set_tolerance(cgh, 1e-8, INT_MAX));
    T_CALL(mf_cg_solve(cgh, x, y, &info));
    T_CHECK(info.converged && info.iterations > 0, "INT_MAX iterations allowed: converged %d after %d", info.converged,
            info.iterations);
    T_CALL(mf_cg_set_tolerance(cgh, 1e-20, 2000));
    T_CALL(mf_vector_set_value(y, 0.0));
    T_CALL(mf_cg_solve(cgh, x, y, &info));
    T_CALL(mf_cg_residual_history(cgh, &h, &nh));
    T_CHECK(nh == info.iterations + 1 && h[nh - 1] <= 1e-20 * h[0], "the recursive residual should reach 1e-20: %g after %d",
            nh ? h[nh - 1] / h[0] : -1.0, info.iterations);
    T_CHECK(!info.converged && info.residual > 1e-20 * info.residual0,
            "tolerance 1e-20 reported as reached: converged %d, true relative residual %g", info.converged,
            info.residual / info.residual0);
    mf_cg_destroy(&cgh);
    mf_operator_destroy(&H);
  }
  /* an indefinite operator: CG must say so, not return garbage */
  {
    mf_operator neg;
    mf_cg cgn;
    T_CALL(mf_operator_create_shell(space, negate, NULL, NULL, &neg));
    T_CALL(mf_cg_create(neg, &cgn));
    T_CALL(mf_cg_set_jacobi(cgn, 0));
    T_CALL(mf_vector_interpolate(x, one_fn, NULL));
    T_CALL(mf_vector_set_value(y, 0.0));
    mf_cg_info info;
    memset(&info, 0xff, sizeof info); /* info is filled on an error too */
    EXPECT(mf_cg_solve(cgn, x, y, &info), MF_ERR_ARGUMENT, "not positive definite");
    T_CHECK(info.converged == 0 && info.iterations == 0 && info.residual0 > 0.0 && info.seconds >= 0.0,
            "info after an error: converged %d, iterations %d, residual0 %g, seconds %g", info.converged,
            info.iterations, info.residual0, info.seconds);
    EXPECT(mf_operator_diagonal(neg, y), MF_ERR_UNSUPPORTED, "no diagonal function");
    EXPECT(mf_operator_set_dirichlet(neg, 1), MF_ERR_UNSUPPORTED, "shell operator");
    mf_cg_destroy(&cgn);
    mf_operator_destroy(&neg);
  }

  /* set-up phases and device memory: NULL arguments, names, the cpu backend's zeros */
  {
    double ph[MF_PHASE_COUNT];
    size_t in_use = 1, peak = 1;
    EXPECT(mf_context_phase_times(NULL, ph), MF_ERR_NULL, "context is NULL");
    EXPECT(mf_context_phase_times(ctx, NULL), MF_ERR_NULL, "output array seconds is NULL");
    EXPECT(mf_context_phase_reset(NULL), MF_ERR_NULL, "context is NULL");
    EXPECT(mf_cg_setup(NULL), MF_ERR_NULL, "cg is NULL");
    EXPECT(mf_context_set_device_memory_limit(NULL, 10), MF_ERR_NULL, "context is NULL");
    EXPECT(mf_context_device_memory(NULL, &in_use, &peak), MF_ERR_NULL, "context is NULL");
    T_CHECK(!strcmp(mf_phase_name(MF_PHASE_MESH), "mesh") && !strcmp(mf_phase_name(MF_PHASE_TRANSFER), "h2d") &&
                !strcmp(mf_phase_name((mf_phase)MF_PHASE_COUNT), "unknown") && !strcmp(mf_phase_name((mf_phase)-1), "unknown"),
            "phase names");
    T_CALL(mf_context_phase_times(ctx, ph));
    T_CHECK(ph[MF_PHASE_MESH] > 0.0 && ph[MF_PHASE_DOFS] > 0.0 && ph[MF_PHASE_GEOMETRY] > 0.0,
            "phases were timed: mesh %g, dofs %g, geometry %g", ph[MF_PHASE_MESH], ph[MF_PHASE_DOFS], ph[MF_PHASE_GEOMETRY]);
    T_CALL(mf_context_phase_reset(ctx));
    T_CALL(mf_context_phase_times(ctx, ph));
    for (int k = 0; k < MF_PHASE_COUNT; k++) T_CHECK(ph[k] == 0.0, "phase %d after reset: %g", k, ph[k]);
    T_CALL(mf_context_set_device_memory_limit(ctx, 10)); /* no effect on the cpu backend */
    T_CALL(mf_context_device_memory(ctx, &in_use, &peak));
    T_CHECK(in_use == 0 && peak == 0, "cpu backend: device memory %zu, peak %zu", in_use, peak);
    T_CALL(mf_vector_create(space, &z2));
    mf_vector_destroy(&z2);
  }

  /* handles in any order: the context, mesh and space go first, what was made from them still works
   * (a use after free without the references, which valgrind_t07_errors reports) */
  {
    mf_context c2;
    mf_mesh m2;
    mf_space s2;
    mf_operator A2;
    mf_pc pc2;
    mf_vector u, v;
    double nrm = 0.0;
    T_CALL(mf_context_create(MPI_COMM_WORLD, "cpu", &c2));
    T_CALL(mf_mesh_create(c2, "ball", 2, 1, &m2));
    T_CALL(mf_space_create(m2, 2, &s2));
    T_CALL(mf_operator_create_laplace(s2, MF_QUAD_GAUSS, NULL, NULL, &A2));
    T_CALL(mf_pc_create(A2, MF_PC_JACOBI, &pc2));
    T_CALL(mf_vector_create(s2, &u));
    T_CALL(mf_vector_create(s2, &v));
    mf_context_destroy(&c2);
    mf_mesh_destroy(&m2);
    mf_space_destroy(&s2);
    T_CALL(mf_vector_interpolate(u, one_fn, NULL));
    T_CALL(mf_operator_apply(A2, u, v));
    mf_operator_destroy(&A2);
    T_CALL(mf_pc_apply(pc2, u, v)); /* its set-up: the diagonal of the operator it holds */
    T_CALL(mf_vector_norm2(v, &nrm));
    T_CHECK(isfinite(nrm) && nrm > 0.0, "apply after the handles went: norm %g", nrm);
    mf_pc_destroy(&pc2);
    mf_vector_destroy(&u);
    mf_vector_destroy(&v);
  }

  /* destroy is NULL-safe and sets handles to NULL */
  T_CALL(mf_cg_destroy(&cg));
  T_CHECK(cg == NULL, "destroy must set the handle to NULL");
  T_CALL(mf_cg_destroy(&cg));
  mf_vector_destroy(&x);
  mf_vector_destroy(&y);
  mf_vector_destroy(&z);
  mf_operator_destroy(&op);
  mf_space_destroy(&space);
  mf_space_destroy(&space2);
  mf_mesh_destroy(&mesh);
  mf_mesh_destroy(&mesh2);
  mf_context_destroy(&ctx);
  T_CHECK(ctx == NULL, "context destroy must set the handle to NULL");
  return t_finish();
}
