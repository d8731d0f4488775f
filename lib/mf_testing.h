/* mf_testing.h -- the private header of the tests and benchmarks (tests/, perf/): the library's
 * internals they read besides lib/mfree.h. Not installed. What they use:
 *   object layouts      mesh, space, vector and operator fields (sizes, cell maps, the assembled
 *                       values, quadrature data), to check what the public functions made;
 *   test hooks          allocation limits (mf_test_*), device emulation on the cpu backend
 *                       (mf_context_emulate_device), the unfused CG steps (mf_cg_set_fused);
 *   reference pieces    1D bases, the CPU kernels and element matrices of the hex family
 *                       (hex/mf_hex_op.h), the assembly's and CSR product's twins
 *                       (assembled/), multigrid transfers (mg/), simplex internals (simplex/).
 * A test includes this and the folder headers it names; nothing else of lib/ but mfree.h. */
#ifndef MF_TESTING_H
#define MF_TESTING_H

#include "mfree.h"
#include "hex/mf_hex_op.h"
#include "assembled/assembly_impl.h"
#include "solvers/mf_solvers.h"

#endif
