// simplex_model.cu -- the cost model of the simplex operators on the GPU (lib/cuda/simplex.cu): which kernel a
// configuration runs, its shared memory, the fewest bytes and the flops of a cell, the modelled time, the candidate
// configurations and the model's best among them.
#include <math.h>

#include "mf_cuda_common.cuh"
#include "simplex_op.cuh"

// ---------------------------------------------------------------------------- the cost model

// Whether a form applies to the operator: quadrature always; reference with c = 1 (elasticity: where its
// matrices fit in constant memory); gradient with c = 1 for the scalar operators with a stiffness part
// and for elasticity (one cell per thread not at 3D p = 4: mf_sx_kernel's NULL there)
static int sx_form_applies(const mf_simplex_cuda_op_s *o, int form)
{
  if (form == MF_SIMPLEX_CUDA_QUADRATURE) return 1;
  if (o->has_coef) // the gradient form with the cells' matrices K_e: a Laplace operator (a = 0)
    return form == MF_SIMPLEX_CUDA_GRADIENT && (o->K || o->Kf);
  if (form == MF_SIMPLEX_CUDA_REFERENCE) return !o->elasticity || o->tab->fn[MF_SX_THREAD_EC] != NULL;
  if (form != MF_SIMPLEX_CUDA_GRADIENT) return 0;
  return o->elasticity ? o->tab->fn[MF_SX_THREAD_GEC] != NULL || o->tab->fn[MF_SX_TILED_GE] != NULL : o->b != 0.0;
}

// Which kernel of the table a (strategy, form) runs
int mf_sx_kernel(const mf_simplex_cuda_op_s *o, int strategy, int form, int stage)
{
  if (strategy == MF_SIMPLEX_CUDA_SHARED) { // constant memory, c = 1 (the caller checks the form applies)
    if (form == MF_SIMPLEX_CUDA_REFERENCE) return o->elasticity ? MF_SX_SHARED_EC : MF_SX_SHARED_RC;
    return o->elasticity ? MF_SX_SHARED_GEC : o->a != 0.0 ? MF_SX_SHARED_GMC : MF_SX_SHARED_GC;
  }
  if (form == MF_SIMPLEX_CUDA_GRADIENT && strategy == MF_SIMPLEX_CUDA_TILED) // c = 1 (the caller checks)
    return o->elasticity ? MF_SX_TILED_GE : o->a != 0.0 ? MF_SX_TILED_GM : MF_SX_TILED_G;
  if (form == MF_SIMPLEX_CUDA_GRADIENT && o->elasticity) return stage == 2 ? MF_SX_THREAD_GEC : MF_SX_THREAD_GE;
  if (form == MF_SIMPLEX_CUDA_GRADIENT && o->has_coef) return stage == 2 ? MF_SX_THREAD_GKC : MF_SX_THREAD_GK;
  if (form == MF_SIMPLEX_CUDA_GRADIENT) // one cell per thread; with the mass part when a != 0
    return o->a != 0.0 ? (stage == 2 ? MF_SX_THREAD_GMC : MF_SX_THREAD_GM) : (stage == 2 ? MF_SX_THREAD_GC : MF_SX_THREAD_G);
  if (o->elasticity) {
    if (form == MF_SIMPLEX_CUDA_REFERENCE) return MF_SX_THREAD_EC; // one cell per thread, constant memory only
    return strategy == MF_SIMPLEX_CUDA_THREAD ? MF_SX_THREAD_E : MF_SX_TILED_E;
  }
  if (form == MF_SIMPLEX_CUDA_REFERENCE)
    return strategy == MF_SIMPLEX_CUDA_TILED ? MF_SX_TILED_R : stage == 2 ? MF_SX_THREAD_RC : MF_SX_THREAD_R;
  return strategy == MF_SIMPLEX_CUDA_THREAD ? MF_SX_THREAD_Q : MF_SX_TILED_Q;
}

// Dynamic shared memory of a configuration, bytes
static size_t sx_shmem(const mf_simplex_cuda_op_s *o, int strategy, int form, int tile, int stage)
{
  const int D = o->dim, N = o->N, NQ = o->nq;
  const int tiled_g = strategy == MF_SIMPLEX_CUDA_TILED && form == MF_SIMPLEX_CUDA_GRADIENT;
  size_t tables = form == MF_SIMPLEX_CUDA_REFERENCE ? (size_t)(o->elasticity ? mf_sx_elas_doubles(D, N) : mf_sx_ref_doubles(D, N))
                  : tiled_g ? (size_t)mf_sx_tiled_g_tables(D, o->p, !o->elasticity && o->a != 0.0)
                  : form == MF_SIMPLEX_CUDA_GRADIENT ? (size_t)mf_sx_grad_doubles(D, o->p) + (o->a != 0.0 ? (size_t)N * N : 0)
                                                     : (size_t)mf_sx_table_doubles(D, N, NQ);
  size_t s = stage == 1 ? tables : 0; // stage 2: constant memory
  if (strategy == MF_SIMPLEX_CUDA_SHARED) // the tile's values and sums, its vertices' coordinates
    return sizeof(double) * ((size_t)2 * o->tile_maxd * o->ncomp + (size_t)o->tile_maxv * D);
  if (form == MF_SIMPLEX_CUDA_GRADIENT && o->has_coef && mf_sx_gk_shared(D, o->p)) // each thread's copy of g
    s += (size_t)tile * mf_sx_n1(D, o->p) * D;
  if (strategy == MF_SIMPLEX_CUDA_TILED)
    s += (size_t)tile * (form == MF_SIMPLEX_CUDA_REFERENCE ? mf_sx_tiled_r_cell(D, N)
                         : tiled_g                       ? mf_sx_tiled_g_cell(D, o->p, o->ncomp)
                                                         : mf_sx_tiled_q_cell(D, N, NQ, o->ncomp));
  return s * sizeof(double);
}

// The fewest bytes of one application, per cell: x read once and y written once, the cell DoFs
// (4 B x N), the cells' vertex ids (4 B x (dim + 1)), the vertex coordinates, c(x_q) when present (the
// gradient form: the cell's matrix K_e instead); the shared scatter: what its tiles move (below)
static double sx_bytes_per_cell(const mf_simplex_cuda_op_s *o, int strategy, int form)
{
  const double v = o->single ? 4.0 : 8.0; // bytes of a vector entry and of c(x_q)
  if (strategy == MF_SIMPLEX_CUDA_SHARED) // x read and y added once per tile of a DoF, the tiles' lists, the
    // vertices' coordinates once per tile, the cells' 2-byte indices (c = 1)
    return (o->tile_nd * (4.0 + 2.0 * v * o->ncomp) + o->tile_nv * (4.0 + 8.0 * o->dim)) / o->ncells +
           2.0 * (o->N + o->dim + 1) + 16.0 * o->ntiles / o->ncells;
  const double coef = !o->has_coef ? 0.0 : form == MF_SIMPLEX_CUDA_GRADIENT ? mf_simplex_gradient_nk(o->dim, o->p) : o->nq;
  double bytes = 2.0 * v * o->ndofs * o->ncomp + 8.0 * o->nv * o->dim;
  bytes += (double)o->ncells * (4.0 * o->N + 4.0 * (o->dim + 1) + v * coef);
  return bytes / o->ncells;
}

// Flops per cell of a form (2 per multiply-add): the geometry, then
//   quadrature, scalar: per point the value and gradient (2 N (1 + dim)), the pointwise operator
//     (2 dim^2 + dim + 3) and the integration back (2 N (1 + dim));
//   quadrature, elasticity: per point the gradient (2 N dim^2), the strain, stress and pull-back
//     (4 dim^3 + 4 dim^2), the integration (2 N dim^2);
//   reference: per reference matrix used, N (2 N + 2); elasticity: per node and pair (l, m) of
//     reference directions, 2 dim N (the products with K_lm), 4 dim + 2 (two contractions with J^-1),
//     6 dim + 1 (the update of the dim components);
//   gradient: dim^2 to scale J^-1 J^-T, then per node r of P_{p-1} 2 dim (2 N + dim) (E u, the metric,
//     E^T f), and with the mass part 2 N^2 + N; elasticity: per node r, 4 dim^2 N (E u and E^T f for
//     dim components) and the pointwise stress as at a quadrature point (4 dim^3 + 4 dim^2).
static double sx_flops_per_cell(const mf_simplex_cuda_op_s *o, int form)
{
  const double D = o->dim, N = o->N, NQ = o->nq;
  const double geo = o->dim == 2 ? 12.0 : 60.0;
  if (form == MF_SIMPLEX_CUDA_GRADIENT && o->elasticity)
    return geo + mf_sx_n1(o->dim, o->p) * (4.0 * D * D * N + 4.0 * D * D * D + 4.0 * D * D);
  if (form == MF_SIMPLEX_CUDA_GRADIENT) // with a coefficient: 2 n1^2 dim more (K_e g)
    return geo + 2.0 * D * D * D + D * D + mf_sx_n1(o->dim, o->p) * 2.0 * D * (2.0 * N + D) +
           (o->a != 0.0 ? 2.0 * N * N + N : 0.0) +
           (o->has_coef ? 2.0 * D * mf_sx_n1(o->dim, o->p) * mf_sx_n1(o->dim, o->p) : 0.0);
  if (o->elasticity && form == MF_SIMPLEX_CUDA_REFERENCE) // per node and (l, m): 2 dim N + 10 dim + 3
    return geo + 2.0 * D * D * D + N * D * D * (2.0 * D * N + 10.0 * D + 3.0);
  if (o->elasticity) return geo + NQ * (4.0 * N * D * D + 4.0 * D * D * D + 4.0 * D * D);
  if (form == MF_SIMPLEX_CUDA_QUADRATURE) return geo + 2.0 * D * D + NQ * (4.0 * N * (1.0 + D) + 2.0 * D * D + D + 3.0);
  const int nm = (o->a != 0.0) + (o->b != 0.0 ? mf_sx_nmat(o->dim) - 1 : 0);
  return geo + 2.0 * D * D * D + nm * N * (2.0 * N + 2.0);
}

// The constant memory a stage-2 configuration reads per cell: its bytes (the matrices or tables used)
// and its reads (one per multiply-add that takes its operand from the constant bank)
static void sx_const_use(const mf_simplex_cuda_op_s *o, int form, double *bytes, double *reads)
{
  const double D = o->dim, N = o->N;
  if (form == MF_SIMPLEX_CUDA_GRADIENT) {
    const double mass = o->a != 0.0 && o->tab->set_const ? N * N : 0.0; // 3D p = 4: the mass through L1
    *bytes = 8.0 * (mf_sx_grad_doubles(o->dim, o->p) + mass);
    *reads = 2.0 * mf_sx_n1(o->dim, o->p) * D * N + mass;
  } else if (o->elasticity) {
    *bytes = 8.0 * D * D * N * N;
    *reads = D * D * N * N;
  } else {
    const int nm = (o->a != 0.0) + (o->b != 0.0 ? mf_sx_nmat(o->dim) - 1 : 0);
    *bytes = 8.0 * nm * N * N;
    *reads = nm * N * N;
  }
}

// Fill the model's figures of configuration c (strategy, form, tile, threads, stage set); returns 0
// when the block can run (fits, at least one block per SM), 1 when not, or a CUDA error code.
static int sx_model(mf_simplex_cuda_op_s *o, mf_simplex_cuda_config *c)
{
  const int k = mf_sx_kernel(o, c->strategy, c->form, c->stage);
  const void *fn = o->tab->fn[k];
  if (!fn) return 1; // the reference matrices do not fit in constant memory
  c->shmem = sx_shmem(o, c->strategy, c->form, c->tile, c->stage);
  if (c->shmem > (size_t)o->smem_optin) return 1;
  cudaFuncAttributes attr;
  MF_CUDA_CALL(o->ctx, cudaFuncGetAttributes(&attr, fn));
  if (c->threads > attr.maxThreadsPerBlock) return 1;
  // allow the largest block the device opts into (the kernels serve every configuration)
  MF_CUDA_CALL(o->ctx, cudaFuncSetAttribute(fn, cudaFuncAttributeMaxDynamicSharedMemorySize, o->smem_optin));
  int blocks = 0;
  MF_CUDA_CALL(o->ctx, cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, fn, c->threads, c->shmem));
  if (blocks < 1) return 1;
  c->regs = attr.numRegs;
  c->local_bytes = (int)attr.localSizeBytes;
  c->blocks_per_sm = blocks;
  c->occupancy = (double)blocks * ((c->threads + 31) / 32) / o->warps_sm;
  c->bytes_per_cell = sx_bytes_per_cell(o, c->strategy, c->form);
  c->flops_per_cell = sx_flops_per_cell(o, c->form);
  // time = max(memory, arithmetic) + staging. Memory: the fewest bytes at the bandwidth, reached
  // with a third of the warps resident. Arithmetic: the flops at the FP64 peak, reached with a
  // quarter of the warps resident, scaled by the share of threads busy in the tiled phases (and 0.85
  // for the barriers), halved when registers spill, and by where the operands come from (below).
  // Staging: each block copies the tables from L2 (taken at 2.5x the bandwidth).
  const double mem_eff = fmin(1.0, c->occupancy / 0.33);
  double fl_eff = fmin(1.0, c->occupancy / 0.25);
  // spilled registers: halved; a large spill (the one-cell-per-thread quadrature kernel of 3D P4: 3.8 KB of stack
  // for sm_90) ran 7-35x below the halved rate on an H100 (perf/results/simplex-coef-h100-2026-11-26), a small one
  // (3D P3: 216 B) near it
  if (c->local_bytes > 0) fl_eff *= c->local_bytes > 512 ? 0.05 : 0.5;
  // operands: from the constant bank (stage 2) at full rate; from shared memory one load per
  // multiply-add, at most half the FP64 rate (1 shared-memory wavefront per clock against 2 warp-wide
  // FP64 instructions); through L1 lower still
  fl_eff *= c->stage == 2 ? 1.0 : c->stage == 1 ? 0.5 : 0.35;
  // the reference form one cell per thread with the stiffness matrices (b != 0) in shared memory or read through
  // L1: measured on an H100 (perf/results/simplex-float-h100-2026-11-26/c1-tuned, 3D P3 and P4 Helmholtz) at about a
  // quarter of the FP64 rate from shared memory and a little less through L1, at any occupancy from 0.12 up (96
  // registers, occupancy 0.25-0.31, ran 1.5-2x slower than the rule above; 172 registers, occupancy 0.12, near it).
  // The mass matrix alone keeps the rule above: applied to it too, this rule and the next moved 3D P3 mass from
  // 17.6-18.8 to 14.5 GDoF/s and 3D P4 mass from 12.7 to 8.2 (model-ref/, model-ref2/)
  if (c->form == MF_SIMPLEX_CUDA_REFERENCE && c->strategy == MF_SIMPLEX_CUDA_THREAD && c->stage != 2 && o->b != 0.0)
    fl_eff = (c->stage == 1 ? 0.25 : 0.22) * fmin(1.0, c->occupancy / 0.15) *
             (c->local_bytes > 0 ? (c->local_bytes > 512 ? 0.05 : 0.5) : 1.0);
  const double nblocks = ceil((double)o->ncells / c->tile);
  if (c->strategy == MF_SIMPLEX_CUDA_TILED) {
    const double work = (double)c->tile * (c->form == MF_SIMPLEX_CUDA_QUADRATURE ? o->nq : o->N);
    fl_eff *= work / (ceil(work / c->threads) * c->threads);
    fl_eff *= 0.85; // the block's barriers
    // the tiled quadrature form (a coefficient, or elasticity at 3D P4): its values and gradients at the points
    // pass through shared memory; measured on an H100 (simplex-coef-h100-2026-11-26) at 1.2-5.8x the model
    // above (about 4x at 3D P3 whatever the tile), against 0.3-1.7x for one cell per thread, so that the model
    // picked it at 2D P3, P4 and 3D P2, P3 and lost 2.5-4x to the tuned choice
    if (c->form == MF_SIMPLEX_CUDA_QUADRATURE) fl_eff *= 0.25;
    // the tiled reference form with the stiffness matrices (b != 0): measured at 2.0-2.7x the model above at 3D P3
    // and P4 (Helmholtz, every tile and block; c1-tuned, as above); the mass matrix alone as modelled (above)
    if (c->form == MF_SIMPLEX_CUDA_REFERENCE && o->b != 0.0) fl_eff *= 0.45;
  } else if (nblocks < o->sms * blocks) {
    fl_eff *= nblocks / (o->sms * blocks); // too few cells to fill the device
  }
  // The tiled gradient form is held by its shared-memory (or L1) loads, both operands of each multiply-add: per
  // (cell, r) pair and node j, dim loads of E at distinct addresses (2 wavefronts each for a warp's 32 doubles) and
  // NC of the cell's values (one address per cell: 1 wavefront); per (cell, i) pair and node r, dim of E and dim NC of
  // f; the mass part N loads of M and N of u per (cell, i). One wavefront per SM per clock, reached at half that rate:
  // measured on an H100 (perf/results/simplex-tiled-grad-h100-2026-11-27, 10^7 unknowns, the best tiles) Laplace 3D
  // P3 1.67 ms against 1.87 ms so modelled, P4 2.67 against 2.78, Helmholtz P4 3.44 against 3.7, elasticity 3D P3
  // 0.90 against 0.92 and P4 1.48 against 1.50 (before the atomics' term below), where the flops at the rates above
  // gave 0.5-2x the measured times. Idle threads of a phase load nothing, so the busy share and the occupancy count
  // by their square roots (elasticity 3D P4: 4 cells a block of 128, 55% busy, was the fastest; occupancy 0.25, 0.12
  // and 0.06 cost 1.35x, 1.3-1.75x and 2-2.5x against 0.5).
  double t_shared = 0.0;
  if (c->strategy == MF_SIMPLEX_CUDA_TILED && c->form == MF_SIMPLEX_CUDA_GRADIENT) {
    const double D = o->dim, N = o->N, N1 = mf_sx_n1(o->dim, o->p), NC = o->ncomp;
    const double wf = (N1 * N * (2.0 * D + NC) + N * N1 * (2.0 * D + D * NC) +
                       (!o->elasticity && o->a != 0.0 ? 3.0 * N * N : 0.0)) / 32.0;
    const double work = (double)c->tile * o->N, busy = work / (ceil(work / c->threads) * c->threads);
    t_shared = wf * o->ncells / (0.5 * o->wf_rate * sqrt(busy) * fmin(1.0, sqrt(c->occupancy / 0.4)));
  }
  const double tables = (double)sx_shmem(o, c->strategy, c->form, 0, 1);
  const double t_mem = c->bytes_per_cell * o->ncells / (o->bw * mem_eff);
  const double t_flop = c->flops_per_cell * o->ncells / (o->peak * fl_eff);
  const double t_stage = c->stage == 1 ? nblocks * tables / (2.5 * o->bw) : 0.0;
  // Constant-bank operands reach the FP64 rate only while the matrices stay in the SM's constant
  // cache. Measured on an H200 (perf/results/simplex-h200-2026-11-24): with 0.8-1.2 KiB of matrices
  // the constant-memory kernels ran at 10-18 TFLOP/s; with 2.4-7.2 KiB at 1.2-3.4 x 10^12 constant
  // reads a second whatever the flops per read (Helmholtz 2D P3 at half the speed of Laplace 2D P3,
  // which reads a quarter less; Helmholtz 3D P2 at 3.58 GDoF/s, Laplace 3D P2 at 7.58 with the
  // matrices in shared memory; elasticity 3D P3, 28 KiB, at 1.28). So above 2 KiB the reads are
  // limited to 0.15 of the FP64 multiply-add rate (2.5 x 10^12 a second on the H200). On an H100
  // (perf/results/simplex-float-h100-2026-11-26/c1-tuned: elasticity 3D P3, its 4.8 KiB gradient table in
  // constant memory, 254 registers, occupancy 0.12) the rate was 0.13 of it with blocks of 256 threads and fell
  // with smaller blocks (1.6x at 128, 2.2x at 64: more blocks per SM, their warps further apart in the unrolled
  // code, so more misses of the constant cache), taken as sqrt(256 / threads).
  double t_const = 0.0;
  if (c->stage == 2) {
    double cbytes = 0.0, creads = 0.0;
    sx_const_use(o, c->form, &cbytes, &creads);
    if (cbytes > 2048.0)
      t_const = creads * o->ncells / (0.13 * 0.5 * o->peak * fmin(1.0, c->occupancy / 0.25)) * sqrt(256.0 / c->threads);
  }
  // Elasticity's scatter: the dim components of every node of every cell added to y atomically. Measured on an
  // H100 (perf/results/simplex-shared-h100-2026-11-27, 10^7 unknowns) every one-cell-per-thread configuration of a
  // case within 5% of the others whatever its form, stage and flops (3D P1: 2.58-2.69 ms, the model 0.26-1.3 ms), at
  // about 9.3 x 10^10 of these atomics a second (3D P1 2.6 ms, 3D P2 0.93 ms, 2D P1 0.51 ms against 0.65 modelled),
  // taken as that rate scaled by the device's bandwidth, and added to the rest (so that the forms still rank by their
  // work). The shared scatter adds each tile's DoFs once (the term on its tiles' DoFs). The scalar operators' one
  // atomic per node is within the bytes above (3D P1 at 1.63 ms).
  double t_atomic = 0.0;
  if (o->ncomp > 1) {
    const double rate = 9.3e10 * o->bw / 3.35e12, n = c->strategy == MF_SIMPLEX_CUDA_SHARED
                                                            ? (double)o->tile_nd * o->ncomp
                                                            : (double)o->ncells * o->N * o->ncomp;
    t_atomic = n / rate;
  }
  c->model_us = 1e6 * (fmax(fmax(t_mem, t_shared), fmax(t_flop, t_const)) + t_atomic + t_stage);
  c->measured_ms = 0.0;
  c->tuned = 0;
  return 0;
}

// Every configuration worth trying: forms that apply, threads 64/128/256 (one cell per thread) or
// 128/256 with tiles of 1..64 cells (tiled), tables read through L1 (stage 0), staged in shared
// memory (1) or, for the reference and gradient forms one cell per thread, in constant memory (2); the
// shared scatter (reference and gradient forms, constant memory, c = 1) with its tiles' size.
// The gradient form tiled with c = 1 only (with a coefficient one cell per thread). list NULL: count only.
int mf_sx_enumerate(mf_simplex_cuda_op_s *o, mf_simplex_cuda_config *list, int max, int *count)
{
  int n = 0;
  for (int form = 0; form < 3; form++)
    for (int strategy = 0; strategy < 3; strategy++)
      for (int stage = 2; stage >= 0; stage--) {
        if (!sx_form_applies(o, form)) continue;
        if (strategy == MF_SIMPLEX_CUDA_SHARED) { // constant memory, the tiles' size, where the tiles are made
          if (!o->ntiles || o->has_coef || stage != 2 || form == MF_SIMPLEX_CUDA_QUADRATURE) continue;
          mf_simplex_cuda_config c;
          memset(&c, 0, sizeof c);
          c.strategy = strategy, c.form = form, c.threads = c.tile = MF_SX_SHARED_TILE, c.stage = stage;
          const int r = sx_model(o, &c);
          if (r > 1) return r;
          if (r) continue;
          if (list && n < max) list[n] = c;
          n++;
          continue;
        }
        if (stage == 2 && (form == MF_SIMPLEX_CUDA_QUADRATURE || strategy != MF_SIMPLEX_CUDA_THREAD)) continue;
        if (form == MF_SIMPLEX_CUDA_GRADIENT && strategy == MF_SIMPLEX_CUDA_TILED && o->has_coef) continue; // c = 1
        if (o->elasticity && form == MF_SIMPLEX_CUDA_REFERENCE && (stage != 2 || strategy != MF_SIMPLEX_CUDA_THREAD))
          continue; // elasticity's reference form: one cell per thread, constant memory
        for (int threads = strategy ? 128 : 64; threads <= 256; threads *= 2)
          for (int tile = strategy ? 1 : threads; tile <= (strategy ? 64 : threads); tile *= 2) {
            mf_simplex_cuda_config c;
            memset(&c, 0, sizeof c);
            c.strategy = strategy, c.form = form, c.threads = threads, c.tile = tile, c.stage = stage;
            const int r = sx_model(o, &c);
            if (r > 1) return r;
            if (r) continue;
            if (list && n < max) list[n] = c;
            n++;
          }
      }
  *count = n;
  return 0;
}

// The model's best configuration, optionally restricted to one strategy and form (-1: any)
int mf_sx_model_best(mf_simplex_cuda_op_s *o, int strategy, int form, int tile, int threads, int stage,
                         mf_simplex_cuda_config *best)
{
  int n = 0;
  MF_CALL(mf_sx_enumerate(o, NULL, 0, &n));
  mf_simplex_cuda_config *list = (mf_simplex_cuda_config *)malloc(sizeof *list * (n ? n : 1));
  MF_CHECK(list, o->ctx, MF_ERR_MEMORY, "out of host memory (%d configurations)", n);
  int ierr = mf_sx_enumerate(o, list, n, &n), found = -1;
  for (int i = 0; !ierr && i < n; i++) {
    const mf_simplex_cuda_config *c = &list[i];
    if ((strategy >= 0 && c->strategy != strategy) || (form >= 0 && c->form != form)) continue;
    if ((tile > 0 && c->strategy == MF_SIMPLEX_CUDA_TILED && c->tile != tile) || (threads > 0 && c->threads != threads) ||
        (stage >= 0 && c->stage != stage))
      continue;
    // the least modelled time; of two alike (both held by the same bytes or atomics), the fewer flops (elasticity 2D
    // P1, P2 on the shared scatter: the reference and gradient forms modelled alike, the gradient form 1.2-1.3x faster)
    if (found < 0 || c->model_us < list[found].model_us * (1.0 - 1e-9) ||
        (c->model_us <= list[found].model_us * (1.0 + 1e-9) && c->flops_per_cell < list[found].flops_per_cell))
      found = i;
  }
  if (!ierr && found >= 0) *best = list[found];
  free(list);
  if (ierr) return ierr;
  MF_CHECK(found >= 0, o->ctx, MF_ERR_ARGUMENT,
           "no configuration runs with strategy %d, form %d, tile %d, threads %d, stage %d for this operator (%dD, p = %d)",
           strategy, form, tile, threads, stage, o->dim, o->p);
  return 0;
}

