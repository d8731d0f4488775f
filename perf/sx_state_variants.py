#!/usr/bin/env python3
"""Variant kernel headers for perf/sx-state-product (the fused simplex product at a state, timed alone).

    python3 perf/sx_state_variants.py OUTDIR

writes OUTDIR/<variant>/ folders of edited copies of lib/ headers (given to sx-state-product as --variant, ahead of
lib/) and OUTDIR/source-rcp.c (the app's physics with one division in F's inverse, for --source):

  rcp       the library's J^-1 with one division (mf_phys_inverse) instead of nine
  act       the Neo-Hookean action dP = mu dF + (mu - lambda ln J) F^-T dF^T F^-T + lambda tr(F^-1 dF) F^-T in place
            of g3 (81 entries) and its contraction (what a Jacobian-action function would save)
  act-rcp   both
  perm      a warp's lanes on cells strided by the warps of a block (siblings in different warps)
  plain     the scatter's atomics as plain adds (racy: for the time only)
  noscat    no scatter (the gathers and the arithmetic alone)

The edits are made on the current lib/ text and fail loudly where it changed.
"""
import os
import re
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def read(rel):
    with open(os.path.join(ROOT, rel)) as f:
        return f.read()


def edit(text, old, new):
    if old not in text:
        sys.exit("sx_state_variants.py: the text to edit is not in the header any more:\n" + old)
    return text.replace(old, new)


def write(out, rel, text):
    path = os.path.join(out, rel)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as f:
        f.write(text)


def rcp_inverse(h):
    i = h.index("  const double det = J[0] * (J[4] * J[8]")
    j = h.index("  Ji[8] = (J[0] * J[4] - J[1] * J[3]) / det;\n") + len("  Ji[8] = (J[0] * J[4] - J[1] * J[3]) / det;\n")
    part = h[i:j].replace("/ det;", "* id;")
    part = edit(part, "J[2] * (J[3] * J[7] - J[4] * J[6]);\n", "J[2] * (J[3] * J[7] - J[4] * J[6]);\n  const double id = 1.0 / det;\n")
    return h[:i] + part + h[j:]


ACTION = """  {
    /* the Neo-Hookean action (apps/hyperelastic.h's g3 contracted by hand): out_cd = mu dv_cd + a (M Fi)_dc +
       lambda tr(M) Fi_dc, M = Fi dv */
    double F[9], Fi[9], M[9], tr = 0.0;
    const double J = nh_inverse(MF_DIM, du0, F, Fi), lnJ = log(J), lambda = k[0], mu = k[1], a = mu - lambda * lnJ;
    for (int i = 0; i < MF_DIM; i++)
      for (int j = 0; j < MF_DIM; j++) {
        double s = 0.0;
        for (int l = 0; l < MF_DIM; l++) s += Fi[i * MF_DIM + l] * du[l * MF_DIM + j];
        M[i * MF_DIM + j] = s;
      }
    for (int i = 0; i < MF_DIM; i++) tr += M[i * MF_DIM + i];
    for (int c = 0; c < MF_DIM; c++)
      for (int d = 0; d < MF_DIM; d++) {
        double s = 0.0;
        for (int l = 0; l < MF_DIM; l++) s += M[d * MF_DIM + l] * Fi[l * MF_DIM + c];
        f1[c * MF_DIM + d] += mu * du[c * MF_DIM + d] + a * s + lambda * tr * Fi[d * MF_DIM + c];
      }
  }
"""


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    out = sys.argv[1]
    phys = read("lib/physics/mf_physics.h")
    point = read("lib/cuda/phys_point.cuh")
    kern = read("lib/cuda/simplex_phys_jit.cuh")
    # the contraction of g3 in the fused point
    i = point.index("#if MF_HAS3\n  {\n    double G[MF_NC * MF_NC * MF_DIM * MF_DIM];")
    j = point.index("#endif", i)
    act = point[:i] + "#if MF_HAS3\n" + ACTION + point[j:]
    write(out, "rcp/physics/mf_physics.h", rcp_inverse(phys))
    write(out, "act/cuda/phys_point.cuh", act)
    write(out, "act-rcp/cuda/phys_point.cuh", act)
    write(out, "act-rcp/physics/mf_physics.h", rcp_inverse(phys))
    head = "                                                double *yv)\n{\n  const long long e = mfs::thread_id();"
    write(out, "perm/cuda/simplex_phys_jit.cuh", edit(kern, head, head.replace(
        "mfs::thread_id();", "(long long)blockIdx.x * blockDim.x + (long long)(threadIdx.x & 31) * (blockDim.x >> 5) + "
        "(threadIdx.x >> 5);")))
    atom = "      if (ve[i * MF_NC + c] != 0.0) atomicAdd(&y[(size_t)cd[i] * MF_NC + c], (T)ve[i * MF_NC + c]);"
    write(out, "plain/cuda/simplex_phys_jit.cuh", edit(kern, atom, atom.replace(
        "atomicAdd(&y[(size_t)cd[i] * MF_NC + c], (T)ve[i * MF_NC + c]);", "y[(size_t)cd[i] * MF_NC + c] += (T)ve[i * MF_NC + c];")))
    scat = "__device__ inline void scatter_add(const int *cell_nodes, int e, const double *ve, T *y)\n{"
    write(out, "noscat/cuda/simplex_phys_jit.cuh", edit(kern, scat, scat + "\n  double t = 0.0;\n  for (int i = 0; i < MF_NN * MF_NC; i++) "
                                                        "t += ve[i];\n  if (t == 1.2345) y[0] = (T)t; /* kept, never written */\n  return;"))
    # the app's physics source, F's inverse with one division
    app = read("apps/hyperelastic.h")
    body = re.search(r"static const char hyper_source\[\] =\n(.*?);\n", app, re.S).group(1)
    src = "".join(bytes(s, "utf-8").decode("unicode_escape") for s in re.findall(r'"((?:[^"\\]|\\.)*)"', body))
    write(out, "source-rcp.c", edit(src, "    for (int i = 0; i < 9; i++) Fi[i] /= J;",
                                    "    const double iJ = 1.0 / J;\n    for (int i = 0; i < 9; i++) Fi[i] *= iJ;"))


if __name__ == "__main__":
    main()
