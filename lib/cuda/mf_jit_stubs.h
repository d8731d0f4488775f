/* mf_jit_stubs.h -- what a user's physics source may include besides the library's headers, as NVRTC is given it
 * (lib/cuda/physics.cu; perf/sx-state-product.c compiles the library's kernels with the same): C and C++. */
#ifndef MF_JIT_STUBS_H
#define MF_JIT_STUBS_H

#define MF_JIT_NSTUBS 3
static const char *const mf_jit_stub_names[MF_JIT_NSTUBS] = {"stddef.h", "math.h", "stdint.h"};
static const char *const mf_jit_stub_texts[MF_JIT_NSTUBS] = {
    "#pragma once\ntypedef decltype(sizeof(0)) size_t;\ntypedef decltype((int *)0 - (int *)0) ptrdiff_t;\n"
    "#ifndef NULL\n#define NULL 0\n#endif\n",
    "#pragma once\n#define M_PI 3.14159265358979323846\n#define M_E 2.7182818284590452354\n"
    "#define NAN __longlong_as_double(0x7ff8000000000000LL)\n#define INFINITY __longlong_as_double(0x7ff0000000000000LL)\n",
    "#pragma once\ntypedef signed char int8_t;\ntypedef short int16_t;\ntypedef int int32_t;\ntypedef long long int64_t;\n"
    "typedef unsigned char uint8_t;\ntypedef unsigned short uint16_t;\ntypedef unsigned int uint32_t;\n"
    "typedef unsigned long long uint64_t;\n"};

#endif
