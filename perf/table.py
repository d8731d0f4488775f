#!/usr/bin/env python3
"""Markdown tables from an mfree-bench CSV: per problem and p, the largest size, both scatters,
frac_of_triad against the goals of the CUDA issue and GDoF/s against the reference library.
Usage: perf/table.py RESULTS.csv"""
import csv
import sys

REF = {  # GDoF/s of a widely used GPU matrix-free library on the same H100 model (p = 1..8)
    "bp1": [4.7, 17.7, 23.3, 29.0, 30.1, 33.9, 28.0, 28.8],
    "bp3": [1.2, 6.2, 8.4, 7.7, 10.6, 12.0, 9.1, 12.1],
    "bp5": [5.4, 12.8, 18.1, 19.9, 20.1, 20.2, 21.2, 16.4],
}


def goal(prob, p):
    if prob not in REF:
        return None
    if p == 1:
        return 0.60
    return 0.85 if prob == "bp5" else 0.80


def main():
    rows = list(csv.DictReader(open(sys.argv[1])))
    print(f"Device: {rows[0]['device']}. Largest size per (problem, p); atomic scatter is the default.\n")
    print("| problem | p | q | DoFs | B/DoF | GDoF/s atomic | GDoF/s colored | frac of triad (atomic) | goal | reference GDoF/s | vs reference |")
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    for prob in ["bp1", "bp3", "bp5", "ljungkvist"]:
        for p in range(1, 9):
            sel = [r for r in rows if r["problem"] == prob and int(r["p"]) == p]
            if not sel:
                continue
            n = max(int(r["ndofs"]) for r in sel)
            at = [r for r in sel if int(r["ndofs"]) == n and r["scatter"] == "atomic"]
            co = [r for r in sel if int(r["ndofs"]) == n and r["scatter"] == "colored"]
            if not at:
                continue
            a = at[0]
            g = goal(prob, p)
            frac = float(a["frac_of_triad"])
            gs = "-" if g is None else (f"{g:.2f} met" if frac >= g else f"{g:.2f} missed by {g - frac:.2f}")
            ref = REF.get(prob, [None] * 8)[p - 1]
            rs = "-" if ref is None else f"{ref:.1f}"
            vs = "-" if ref is None else f"{float(a['gdofs_per_s']) / ref:.2f}x"
            cs = f"{float(co[0]['gdofs_per_s']):.2f}" if co else "-"
            print(f"| {prob} | {p} | {a['q']} | {n:.3g} | {float(a['bytes_per_dof']):.0f} | {float(a['gdofs_per_s']):.2f} | "
                  f"{cs} | {frac:.2f} | {gs} | {rs} | {vs} |")


if __name__ == "__main__":
    main()
