/* physics_simplex_faces.c -- the boundary terms of users' physics on simplices (mf_physics_set_boundary):
 * the boundary facets whose tag has a term (Gmsh files: the facets' physical tags; the box meshes: by side,
 * x = 0 1, x = 1 2, y = 0 3, y = 1 4, z = 0 5, z = 1 6), integrated with a rule on the facet of the
 * operator's degree (2p, 2p + 2 with MF_QUAD_GAUSS_P2; Gauss-Legendre on edges, collapsed Gauss-Jacobi on
 * triangles). Facet f of a cell is the one opposite its vertex f; its points are mapped into the cell's
 * reference coordinates once, where the cell's basis is tabulated. On a cell: the physical points and the
 * area element from the facet's edges (affine cells), the outward unit normal (pointing away from the
 * opposite vertex). The hex family's twin is lib/hex/physics_faces.c. */
#include "mf_simplex_physics.h"
#include "assembled/mf_csr.h"

#include <math.h>

#define MF_SX_MAX_FQ ((MF_SIMPLEX_MAX_DEGREE + 2) * (MF_SIMPLEX_MAX_DEGREE + 2))

static const mf_simplex_mesh *mesh_of(const mf_operator op) { return mf_simplex_space_mesh(op->space); }

static void facet_vertices(int dim, int f, int *a)
{
  for (int v = 0, m = 0; v <= dim; v++)
    if (v != f) a[m++] = v;
}

/* facet f of cell e: the points x (fq x dim), the weights times the area element W, the outward unit normal */
static void facet_geometry(const mf_operator op, int e, int f, double *x, double *W, double *nrm)
{
  const mf_simplex_phys *h = mf_sxphys(op);
  const mf_simplex_mesh *m = mesh_of(op);
  const int dim = m->dim, *cv = m->cells + (size_t)e * (dim + 1);
  double X[4][3], n[3];
  for (int v = 0; v <= dim; v++)
    for (int k = 0; k < 3; k++) X[v][k] = m->coords[3 * (size_t)cv[v] + k];
  const double area = mf_phys_facet_normal(dim, (const double(*)[3])X, f, n);
  for (int q = 0; q < h->fq; q++) {
    const double *xi = h->fx + ((size_t)f * h->fq + q) * dim; /* the point in the cell's reference coordinates */
    for (int k = 0; k < dim; k++) {
      x[q * dim + k] = X[0][k];
      for (int l = 0; l < dim; l++) x[q * dim + k] += (X[l + 1][k] - X[0][k]) * xi[l];
      nrm[q * dim + k] = n[k];
    }
    W[q] = h->fw[q] * area;
  }
}

void mf_simplex_phys_facet_point(const mf_operator op, int e, int f, int q, double *x)
{
  const int dim = op->space->dim;
  double xs[3 * MF_SX_MAX_FQ], W[MF_SX_MAX_FQ], nrm[3 * MF_SX_MAX_FQ];
  facet_geometry(op, e, f, xs, W, nrm);
  for (int k = 0; k < dim; k++) x[k] = xs[q * dim + k];
}

int mf_simplex_phys_faces_has_operator(const mf_simplex_phys *h)
{
  for (int t = 0; t < h->ph.nbound; t++)
    if (h->ph.bg0[t]) return 1;
  return 0;
}

/* The facets' terms of cell e: the residual's (f0 at the cell's values ue), the operator's (g0 times ue) or,
 * diag, the diagonal's (g0's diagonal times phi_i^2) added into ve. 1 where a value is not finite. */
static int cell_terms(const mf_operator op, int e, const double *ue, double *ve, int residual, int diag, int *bad_q,
                      double *bad_x)
{
  const mf_simplex_phys *h = mf_sxphys(op);
  const int dim = op->space->dim, nc = op->space->ncomp, N = h->basis.nnodes, fq = h->fq;
  double x[3 * MF_SX_MAX_FQ], W[MF_SX_MAX_FQ], nrm[3 * MF_SX_MAX_FQ];
  for (int k = h->cell_bf_off[e]; k < h->cell_bf_off[e + 1]; k++) {
    const int f = h->bf_face[k], t = h->bf_term[k];
    const mf_phys_bfn fn = residual ? h->ph.bf0[t] : h->ph.bg0[t];
    if (!fn) continue;
    facet_geometry(op, e, f, x, W, nrm);
    for (int q = 0; q < fq; q++) {
      const double *phi = h->fphi + ((size_t)f * fq + q) * N;
      double u[MF_MAX_COMPONENTS] = {0.0}, out[MF_MAX_COMPONENTS * MF_MAX_COMPONENTS] = {0.0}, r[MF_MAX_COMPONENTS];
      if (!diag)
        for (int i = 0; i < N; i++)
          for (int c = 0; c < nc; c++) u[c] += phi[i] * ue[i * nc + c];
      const double zero[MF_MAX_COMPONENTS] = {0.0};
      fn(dim, nc, residual ? u : zero, &x[q * dim], &nrm[q * dim], h->ph.k, out);
      for (int i = 0; i < (residual ? nc : nc * nc); i++)
        if (!isfinite(out[i])) {
          if (bad_q) *bad_q = q;
          if (bad_x)
            for (int d = 0; d < dim; d++) bad_x[d] = x[q * dim + d];
          return 1;
        }
      if (diag) {
        for (int i = 0; i < N; i++)
          for (int c = 0; c < nc; c++) ve[i * nc + c] += W[q] * out[c * nc + c] * phi[i] * phi[i];
        continue;
      }
      for (int c = 0; c < nc; c++) {
        double v = 0.0;
        if (residual) v = out[c];
        else
          for (int b = 0; b < nc; b++) v += out[c * nc + b] * u[b];
        r[c] = W[q] * v;
      }
      for (int i = 0; i < N; i++)
        for (int c = 0; c < nc; c++) ve[i * nc + c] += phi[i] * r[c];
    }
  }
  return 0;
}

int mf_simplex_phys_faces_cell(const mf_operator op, int e, const double *ue, double *ve, int residual, int *bad_q,
                               double *bad_x)
{
  return cell_terms(op, e, ue, ve, residual, 0, bad_q, bad_x);
}

void mf_simplex_phys_faces_diagonal(const mf_operator op, int e, double *de)
{
  cell_terms(op, e, NULL, de, 0, 1, NULL, NULL); /* g0 was checked finite at set-up */
}

void mf_simplex_phys_element_add(const mf_operator op, int e,
                                 void (*cell_op)(const mf_operator op, int e, const double *u, double *v),
                                 const int64_t *rowptr, const int *colidx, double *vals)
{
  const mf_space s = op->space;
  const int N = mf_sxphys(op)->basis.nnodes, nc = s->ncomp, nent = N * nc, *cd = s->cell_nodes + (size_t)e * N;
  double u[MF_MAX_COMPONENTS * MF_SIMPLEX_MAX_NODES], col[MF_MAX_COMPONENTS * MF_SIMPLEX_MAX_NODES];
  for (int jb = 0; jb < nent; jb++) {
    memset(u, 0, sizeof(double) * nent);
    memset(col, 0, sizeof(double) * nent);
    u[jb] = 1.0;
    cell_op(op, e, u, col);
    for (int ic = 0; ic < nent; ic++)
      if (col[ic] != 0.0) vals[mf_csr_find(rowptr, colidx, cd[ic / nc] * nc + ic % nc, cd[jb / nc] * nc + jb % nc)] += col[ic];
  }
}

/* the facets' operator terms (g0 times u), as mf_simplex_phys_element_add takes a cell's */
static void faces_operator(const mf_operator op, int e, const double *u, double *v)
{
  cell_terms(op, e, u, v, 0, 0, NULL, NULL); /* g0 was checked finite at set-up */
}

int mf_simplex_phys_faces_assemble(mf_operator op, const int64_t *rowptr, const int *colidx, double *vals)
{
  const mf_simplex_phys *h = mf_sxphys(op);
  for (int e = 0; e < op->space->ncells; e++)
    if (h->cell_bf_off[e + 1] > h->cell_bf_off[e])
      mf_simplex_phys_element_add(op, e, faces_operator, rowptr, colidx, vals);
  return 0;
}

void mf_simplex_phys_faces_free(mf_simplex_phys *h)
{
  free(h->cell_bf_off);
  free(h->bf_face);
  free(h->bf_term);
  free(h->fw);
  free(h->fx);
  free(h->fphi);
  h->cell_bf_off = h->bf_face = h->bf_term = NULL;
  h->fw = h->fx = h->fphi = NULL;
  h->nbf = 0;
}

int mf_simplex_phys_faces_setup(mf_operator op)
{
  mf_simplex_phys *h = mf_sxphys(op);
  const mf_space s = op->space;
  mf_context ctx = op->ctx;
  if (!h->ph.nbound) return 0;
  const mf_simplex_mesh *m = mesh_of(op);
  const int dim = m->dim, N = h->basis.nnodes;
  /* the rule: the operator's degree on the facet */
  const int qdegree = 2 * s->degree + (h->pw.quad == MF_QUAD_GAUSS_P2 ? 2 : 0);
  h->fq = mf_simplex_quadrature(dim - 1, qdegree, NULL, NULL);
  double pts[2 * MF_SX_MAX_FQ];
  MF_CALL(MF_CALLOC(ctx, (size_t)h->fq, &h->fw));
  MF_CALL(MF_CALLOC(ctx, (size_t)(dim + 1) * h->fq * dim, &h->fx));
  MF_CALL(MF_CALLOC(ctx, (size_t)(dim + 1) * h->fq * N, &h->fphi));
  mf_simplex_quadrature(dim - 1, qdegree, pts, h->fw);
  for (int f = 0; f <= dim; f++) {
    int a[3];
    facet_vertices(dim, f, a);
    for (int q = 0; q < h->fq; q++) {
      double *xi = h->fx + ((size_t)f * h->fq + q) * dim, V[4][3] = {{0, 0, 0}, {1, 0, 0}, {0, 1, 0}, {0, 0, 1}};
      for (int l = 0; l < dim; l++) {
        xi[l] = V[a[0]][l];
        for (int j = 0; j < dim - 1; j++) xi[l] += pts[q * (dim - 1) + j] * (V[a[j + 1]][l] - V[a[0]][l]);
      }
      mf_simplex_basis_eval(&h->basis, xi, h->fphi + ((size_t)f * h->fq + q) * N, NULL);
    }
  }
  /* the boundary facets (the mesh's: on several ranks those of this rank's cells) and each cell's facets among
   * them, found by their sorted vertices */
  const int nf = m->nfacets;
  mf_simplex_facet_key *keys = NULL;
  int ierr = MF_CALLOC(ctx, (size_t)nf + 1, &keys);
  for (int t = 0; !ierr && t < nf; t++) mf_simplex_facet_key_make(m->facets + (size_t)t * dim, dim, t, &keys[t]);
  if (!ierr) qsort(keys, (size_t)nf, sizeof *keys, mf_simplex_facet_cmp);
  if (!ierr) ierr = MF_CALLOC(ctx, (size_t)m->ncells + 1, &h->cell_bf_off);
  /* a facet is searched only where all its vertices are on the boundary (the cells away from it skip the search);
   * the cells' counts, then their entries, in parallel (the order of the one-thread loop: cell, facet, term) */
  unsigned char *bv = NULL;
  if (!ierr) ierr = MF_CALLOC(ctx, (size_t)m->nv + 1, &bv);
  for (int t = 0; !ierr && t < nf; t++)
    for (int j = 0; j < dim; j++) bv[m->facets[(size_t)t * dim + j]] = 1;
  int64_t n = 0;
  for (int pass = 0; !ierr && pass < 2; pass++) {
#pragma omp parallel for schedule(static)
    for (int e = 0; e < m->ncells; e++) {
      int c = 0;
      const int at = pass ? h->cell_bf_off[e] : 0;
      for (int f = 0; f <= dim; f++) {
        int a[3], v[3], on = 1;
        mf_simplex_facet_key k;
        facet_vertices(dim, f, a);
        for (int j = 0; j < dim; j++) v[j] = m->cells[(size_t)e * (dim + 1) + a[j]], on = on && bv[v[j]];
        if (!on) continue;
        mf_simplex_facet_key_make(v, dim, 0, &k);
        const mf_simplex_facet_key *hit =
            nf ? (const mf_simplex_facet_key *)bsearch(&k, keys, (size_t)nf, sizeof *keys, mf_simplex_facet_cmp) : NULL;
        if (!hit) continue; /* an inner facet, or one between ranks */
        for (int t = 0; t < h->ph.nbound; t++)
          if (h->ph.btag[t] == m->facet_tag[hit->id]) {
            if (pass) h->bf_face[at + c] = f, h->bf_term[at + c] = t;
            c++;
          }
      }
      if (!pass) h->cell_bf_off[e] = c;
    }
    if (!pass) { /* counts to offsets */
      for (int e = 0; e < m->ncells; e++) {
        const int c = h->cell_bf_off[e];
        h->cell_bf_off[e] = (int)n;
        n += c;
      }
      ierr = MF_CALLOC(ctx, (size_t)n + 1, &h->bf_face);
      if (!ierr) ierr = MF_CALLOC(ctx, (size_t)n + 1, &h->bf_term);
    }
  }
  free(bv);
  free(keys);
  if (ierr) return ierr;
  h->cell_bf_off[m->ncells] = (int)n;
  h->nbf = (int)n;
  /* g0 finite at every facet point (the operator's terms are not checked again) */
  const int nc = s->ncomp;
  double ve[MF_MAX_COMPONENTS * MF_SIMPLEX_MAX_NODES], x[3];
  for (int e = 0; e < m->ncells; e++) {
    int q = 0;
    memset(ve, 0, sizeof(double) * (size_t)N * nc);
    if (h->cell_bf_off[e + 1] > h->cell_bf_off[e] && cell_terms(op, e, NULL, ve, 0, 1, &q, x)) {
      char xs[96];
      mf_point_text(dim, x, xs, sizeof xs);
      return mf_error_set(ctx, MF_ERR_ARGUMENT, __FILE__, __LINE__, __func__,
                          "physics '%s': a boundary g0 gave a value that is not finite at facet point %d of cell %d, "
                          "x = %s: the boundary functions must give finite values",
                          h->ph.name, q, e, xs);
    }
  }
  return 0;
}
