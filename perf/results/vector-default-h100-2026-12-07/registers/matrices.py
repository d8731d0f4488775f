# B, G (= D B), D of the gauss-lobatto nodes (n1) and nq Gauss points (or the nodes: collocated)
import numpy as np, sys
def gll(n):
    if n == 2: return np.array([-1.0, 1.0])
    from numpy.polynomial import legendre as L
    c = np.zeros(n); c[-1] = 1
    r = L.legroots(L.legder(c))
    return np.concatenate([[-1.0], np.sort(r), [1.0]])
def lag(nodes, x):
    n = len(nodes); B = np.zeros((len(x), n)); G = np.zeros((len(x), n))
    for i, xi in enumerate(x):
        for j in range(n):
            o = [nodes[k] for k in range(n) if k != j]
            B[i, j] = np.prod([(xi - ok) / (nodes[j] - ok) for ok in o])
            s = 0
            for m in range(n):
                if m == j: continue
                s += np.prod([(xi - nodes[k]) / (nodes[j] - nodes[k]) for k in range(n) if k not in (j, m)]) / (nodes[j] - nodes[m])
            G[i, j] = s
    return B, G
n1, nq, colloc = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3])
nodes = gll(n1)
pts = nodes if colloc else np.polynomial.legendre.leggauss(nq)[0]
B, G = lag(nodes, pts)
_, D = lag(pts, pts)
for name, m in (("B", B), ("G", G), ("D", D)):
    print("__device__ const double mf_cb_%s[%d] = {%s};" % (name, m.size, ", ".join("%.17g" % v for v in m.ravel())))
print("struct mf_cbasis { __device__ static __forceinline__ double b(int i) { return mf_cb_B[i]; } __device__ static __forceinline__ double g(int i) { return mf_cb_G[i]; } __device__ static __forceinline__ double d(int i) { return mf_cb_D[i]; } };")
