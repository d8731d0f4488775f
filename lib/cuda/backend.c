/* backend.c -- the cuda backend's table (lib/base/mf_backend.h): the extern "C" entry points of
 * lib/cuda/, which the core and the families reach only through ctx->bk. lib/backend.c registers it. */
#include "mf_cuda.h"
#include "mf_simplex_cuda.h"
#include "base/mf_backend.h"
#include "simplex/mf_simplex_backend.h"

/* the simplex operators: lib/cuda/simplex.cu, lib/cuda/simplex_assembly.cu; the transfers: simplex_transfer.cu */
static const mf_simplex_backend_ops simplex_ops = {
    .max_degree = MF_SIMPLEX_CUDA_MAX_DEGREE,
    .dofs_create = mf_simplex_cuda_dofs_create,
    .op_create = mf_simplex_cuda_op_create,
    .elasticity_create = mf_simplex_cuda_elasticity_create,
    .apply = mf_simplex_cuda_apply,
    .single = mf_simplex_cuda_single,
    .apply_single = mf_simplex_cuda_apply_single,
    .diagonal = mf_simplex_cuda_diagonal,
    .destroy = mf_simplex_cuda_destroy,
    .assemble = mf_simplex_cuda_assemble,
    .asm_free = mf_simplex_cuda_asm_free,
    .sparse_create = mf_simplex_cuda_sparse_create,
    .sparse_apply = mf_simplex_cuda_sparse_apply,
    .sparse_apply_single = mf_simplex_cuda_sparse_apply_single,
    .sparse_free = mf_simplex_cuda_sparse_free,
    .transfer_build = mf_simplex_cuda_transfer_build,
};

const mf_backend_ops mf_backend_ops_cuda = {
    .name = "cuda",
    .kind = MF_BACKEND_CUDA,
    .device_count = mf_cuda_device_count,
    .probe = mf_cuda_probe,
    /* lib/cuda/device.cu */
    .context = {.init = mf_cuda_context_init,
                .finalize = mf_cuda_context_finalize,
                .device_id = mf_cuda_device_id,
                .synchronize = mf_cuda_synchronize,
                .memory = mf_cuda_memory},
    .space = {.setup = mf_cuda_space_setup, .marks = mf_cuda_space_marks, .free = mf_cuda_space_free},
    /* lib/cuda/device.cu, lib/cuda/setup.cu */
    .vector = {.setup = mf_cuda_vector_setup, .assemble_rhs = mf_cuda_assemble_rhs, .l2_cells = mf_cuda_l2_cells},
    /* lib/cuda/setup.cu, lib/cuda/operator.cu */
    .op = {.setup = mf_cuda_operator_setup,
           .single = mf_cuda_operator_single,
           .geometry_prepare = mf_cuda_operator_geometry_prepare,
           .geometry_commit = mf_cuda_operator_geometry_commit,
           .geometry_discard = mf_cuda_operator_geometry_discard,
           .qdata_to_host = mf_cuda_qdata_to_host},
    /* lib/cuda/assembly.cu, lib/cuda/csr.cu */
    .assembly = {.pattern = mf_cuda_csr_pattern,
                 .assemble = mf_cuda_assemble,
                 .csr_ops = mf_cuda_csr_ops,
                 .ghost_rows = mf_cuda_csr_ghost_rows,
                 .table_bytes = mf_cuda_assembly_table_bytes,
                 .table_drop = mf_cuda_assembly_table_drop,
                 .values_to_host = mf_cuda_csr_values_to_host,
                 .values_from_host = mf_cuda_csr_values_from_host},
    /* lib/cuda/transfer.cu */
    .transfer = {.setup = mf_cuda_transfer_setup,
                 .free = mf_cuda_transfer_free,
                 .prolongate = mf_cuda_transfer_prolongate,
                 .restriction = mf_cuda_transfer_restrict},
    /* lib/cuda/physics.cu, physics_simplex.cu: users' physics compiled by NVRTC (their float copies too) */
    .physics = {.hex_setup = mf_cuda_physics_setup,
                .hex_single = mf_cuda_physics_single,
                .hex_diagonal = mf_cuda_physics_diagonal,
                .hex_faces = mf_cuda_physics_faces,
                .hex_setup_builtin = mf_cuda_physics_setup_builtin,
                .hex_assemble = mf_cuda_physics_assemble,
                .hex_state = mf_cuda_physics_state,
                .simplex_setup = mf_cuda_simplex_physics_setup,
                .simplex_assemble = mf_cuda_simplex_physics_assemble,
                .simplex_builtin = mf_cuda_simplex_physics_builtin,
                .simplex_single = mf_cuda_simplex_physics_single},
    /* lib/cuda/source.cu: pointwise fields given as source, compiled by NVRTC */
    .source = {.nodes = mf_cuda_source_nodes, .rhs = mf_cuda_source_rhs, .l2 = mf_cuda_source_l2},
    .simplex = &simplex_ops,
};
