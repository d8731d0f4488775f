#!/usr/bin/env bash
# registers and spills of the slab design's kernel (lib/cuda/cell_slab.cuh) under several launch bounds,
# compiled by NVRTC for sm_90 with the options of lib/cuda/physics.cu (and -Xptxas=-v) from a text like the
# library's: the 1D matrices as constants (matrices.py: Gauss-Lobatto nodes, Gauss or Gauss-Lobatto points;
# needs numpy), the kernel with the shape's template arguments and __launch_bounds__(threads, blocks per SM).
# No GPU needed. Usage: run.sh LIBDIR > registers.txt (LIBDIR: the repository's lib/)
set -euo pipefail
lib=${1:?lib folder}
here=$(cd "$(dirname "$0")" && pwd)
w=$(mktemp -d)
trap 'rm -rf "$w"' EXIT
mkdir -p "$w/stub"
printf 'typedef unsigned long size_t;\n' > "$w/stub/stddef.h"
printf 'typedef short int16_t; typedef int int32_t; typedef long long int64_t; typedef unsigned char uint8_t;\n' > "$w/stub/stdint.h"
: > "$w/stub/math.h"
cuda=${CUDA_HOME:-/usr/local/cuda}
g++ -O1 "$here/nvrtc_regs.cpp" -I"$cuda/include" -L"$cuda/lib64" -lnvrtc -o "$w/nv"

echo "# the slab design's registers (NVRTC, sm_90): problem p | N1 NQ collocated mass gradient xplane | threads, blocks per SM"
# name n1 nq colloc mass grad xplane threads minb
while read -r name n1 nq co ma gr xp th mb; do
  { python3 "$here/matrices.py" "$n1" "$nq" "$co"
    echo '#include "cuda/cell_slab.cuh"'
    echo "extern \"C\" __global__ void __launch_bounds__($th, $mb) k(const mf_cuda_apply_args a) {"
    echo "  mfc::slab_apply<$n1, $nq, $ma, $gr, $co, 3, double, mf_cbasis, $xp>(a); }"
  } > "$w/k.cu"
  r=$(LD_LIBRARY_PATH="$cuda/lib64" STUB="$w/stub" "$w/nv" "$w/k.cu" "$lib" 2>&1 | grep -E "Used|spill" | sed 's/ptxas *\(info *:\)* *//; s/^ *\. *//' | tr '\n' ' ')
  echo "$name | $n1 $nq $co $ma $gr $xp | $th, $mb: $r"
done <<'LIST'
bp6-p2 3 3 1 0 1 1 128 0
bp6-p2 3 3 1 0 1 1 128 4
bp6-p3 4 4 1 0 1 1 128 0
bp6-p3 4 4 1 0 1 1 128 4
bp6-p3 4 4 1 0 1 1 256 0
bp6-p4 5 5 1 0 1 1 128 0
bp6-p4 5 5 1 0 1 1 128 4
bp6-p4 5 5 1 0 1 1 256 0
bp6-p4 5 5 1 0 1 1 512 0
bp4-p3 4 5 0 0 1 1 128 0
bp4-p3 4 5 0 0 1 1 128 4
bp4-p4 5 6 0 0 1 1 128 0
bp2-p5 6 7 0 1 0 0 128 0
bp6-p5 6 6 1 0 1 1 128 0
LIST
