// simplex_op.cuh -- private to lib/cuda/simplex*.cu: the device simplex operator (mf_simplex_cuda_op) and the cost
// model's entry points (lib/cuda/simplex_model.cu) that simplex.cu calls.
#ifndef MF_SIMPLEX_OP_CUH
#define MF_SIMPLEX_OP_CUH

#include "mf_simplex_cuda.h"
#include "mf_sx_table.h"

struct mf_simplex_cuda_op_s {
  mf_context ctx;
  int dim, p, N, nq, ncomp, ncells, nv, ndofs;
  int elasticity, has_coef, mass_coef;
  int single; // a single-precision copy (mf_simplex_cuda_single): vectors and c(x_q) in float
  double a, b, lambda, mu;
  double *coords, *B, *G, *w, *S, *E, *coefq; // device (E: the gradient table)
  float *coefqf;                              // device, single-precision copies: c(x_q) in float
  double *K;                                  // device: the cells' matrices K_e of the gradient form with c(x)
  float *Kf;                                  // the same in float (single-precision copies)
  int *cells, *cell_dofs;                 // device
  // the shared scatter's tiles (device; ntiles 0: not made): as mf_sx_args, with their totals for the model
  int ntiles, tile_maxd, tile_maxv;
  long long tile_nd, tile_nv;
  int *tile_off, *tile_dofs, *tile_voff, *tile_verts;
  unsigned short *cell_ldofs, *cell_lverts;
  const mf_sx_table *tab;
  mf_simplex_cuda_config cfg;
  // the device, for the model
  int sms, smem_optin, smem_sm, warps_sm, regs_sm;
  double bw, peak; // bytes/s and flop/s from the device's attributes
  double wf_rate;  // shared-memory wavefronts a second (one per SM per clock)
};

// Which kernel of the table a (strategy, form, stage) runs
int mf_sx_kernel(const mf_simplex_cuda_op_s *o, int strategy, int form, int stage);
// Every configuration worth trying with the model's figures (list NULL: count only); 0 or an error code
int mf_sx_enumerate(mf_simplex_cuda_op_s *o, mf_simplex_cuda_config *list, int max, int *count);
// The model's best configuration, optionally restricted (-1 / 0: any)
int mf_sx_model_best(mf_simplex_cuda_op_s *o, int strategy, int form, int tile, int threads, int stage,
                     mf_simplex_cuda_config *best);
inline const char *mf_sx_strategy_name(int s) { return s == 0 ? "thread" : s == 1 ? "tiled" : "shared"; }

#endif
