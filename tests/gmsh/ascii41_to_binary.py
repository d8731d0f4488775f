#!/usr/bin/python3
"""Writes a Gmsh ASCII 4.1 file as binary 4.1 (the files square41_bin.msh and cube41_bin.msh of tests/gmsh).

  ascii41_to_binary.py IN.msh OUT.msh

$MeshFormat, $PhysicalNames, $Entities, $Nodes and $Elements are converted (int 4 bytes, size_t 8,
double 8, little-endian); other sections are left out. Node coordinates and parametric flags are taken
as they are."""
import struct
import sys


def sections(text):
    out, name, body = {}, None, []
    for line in text.splitlines():
        if line.startswith("$End"):
            out[name] = body
            name, body = None, []
        elif line.startswith("$") and name is None:
            name = line[1:]
        elif name is not None:
            body.append(line)
    return out


def main():
    src, dst = sys.argv[1], sys.argv[2]
    sec = sections(open(src).read())
    I, S, D = (lambda v: struct.pack("<i", int(v))), (lambda v: struct.pack("<Q", int(v))), (lambda v: struct.pack("<d", float(v)))
    out = bytearray(b"$MeshFormat\n4.1 1 8\n" + I(1) + b"\n$EndMeshFormat\n")
    if "PhysicalNames" in sec:
        out += b"$PhysicalNames\n" + "\n".join(sec["PhysicalNames"]).encode() + b"\n$EndPhysicalNames\n"
    tok = " ".join(sec["Entities"]).split()
    pos = 0

    def take(n=1):
        nonlocal pos
        v = tok[pos:pos + n]
        pos += n
        return v if n > 1 else v[0]

    counts = [int(x) for x in take(4)]
    body = b"".join(S(c) for c in counts)
    for d in range(4):
        for _ in range(counts[d]):
            body += I(take())
            body += b"".join(D(x) for x in take(3 if d == 0 else 6))
            npt = int(take())
            body += S(npt) + b"".join(I(take()) for _ in range(npt))
            if d > 0:
                nb = int(take())
                body += S(nb) + b"".join(I(take()) for _ in range(nb))
    out += b"$Entities\n" + body + b"\n$EndEntities\n"
    tok, pos = " ".join(sec["Nodes"]).split(), 0
    nb, n, lo, hi = (int(x) for x in take(4))
    body = S(nb) + S(n) + S(lo) + S(hi)
    for _ in range(nb):
        edim, etag, param, m = (int(x) for x in take(4))
        body += I(edim) + I(etag) + I(param) + S(m)
        tags = [take() for _ in range(m)]
        body += b"".join(S(t) for t in tags)
        for _ in range(m):
            body += b"".join(D(x) for x in take(3 + (edim if param else 0)))
    out += b"$Nodes\n" + body + b"\n$EndNodes\n"
    tok, pos = " ".join(sec["Elements"]).split(), 0
    nb, n, lo, hi = (int(x) for x in take(4))
    body = S(nb) + S(n) + S(lo) + S(hi)
    nodes_of = {1: 2, 2: 3, 4: 4, 8: 3, 9: 6, 11: 10, 15: 1}
    for _ in range(nb):
        edim, etag, etype, m = (int(x) for x in take(4))
        body += I(edim) + I(etag) + I(etype) + S(m)
        for _ in range(m):
            body += b"".join(S(x) for x in take(1 + nodes_of[etype]))
    out += b"$Elements\n" + body + b"\n$EndElements\n"
    open(dst, "wb").write(bytes(out))


if __name__ == "__main__":
    main()
