/* dofs.c -- continuous P_p DoFs on a simplex mesh, numbered by entity (mf_simplex.h): global edges
 * and faces grouped by their smallest vertex and sorted (mf_simplex_entities, mesh.c), their nodes
 * oriented by sorted global vertices. On a backend that numbers on the device (ctx->bk->simplex->dofs_create:
 * lib/cuda/simplex_dofs.cu) that is done there, the same numbers; this is its CPU twin. */
#include "mf_simplex_backend.h"

static const int tri_edges[3][2] = {{0, 1}, {0, 2}, {1, 2}};
static const int tet_edges[6][2] = {{0, 1}, {0, 2}, {0, 3}, {1, 2}, {1, 3}, {2, 3}};
static const int tet_faces[4][3] = {{0, 1, 2}, {0, 1, 3}, {0, 2, 3}, {1, 2, 3}};

/* Position of the face node (i, j) (i, j >= 1, i + j <= p - 1) in the order j outer, i inner. */
static int face_pos(int p, int i, int j)
{
  int pos = 0;
  for (int jj = 1; jj < j; jj++) pos += p - 1 - jj;
  return pos + i - 1;
}

void mf_simplex_dofs_free(mf_simplex_dofs *d)
{
  if (!d) return;
  free(d->cell_dofs);
  free(d->bc);
  free(d->last);
  memset(d, 0, sizeof *d);
}

int mf_simplex_dofs_create(mf_context ctx, const mf_simplex_mesh *m, const mf_simplex_basis *b, mf_simplex_dofs *d)
{
  MF_CHECK(m && b && d, ctx, MF_ERR_NULL, "mesh, basis or output is NULL");
  memset(d, 0, sizeof *d);
  MF_CHECK(m->dim == b->dim, ctx, MF_ERR_INCOMPATIBLE, "a %dD basis on a %dD mesh", b->dim, m->dim);
  const int dim = m->dim, p = b->degree, nvc = dim + 1, N = b->nnodes;
  const int ne = dim == 2 ? 3 : 6, nf = dim == 2 ? 0 : 4, pe = p - 1, pf = (p - 1) * (p - 2) / 2;
  const int pi = dim == 2 ? pf : (p - 1) * (p - 2) * (p - 3) / 6; /* interior nodes of a cell */
  const uint64_t nv = (uint64_t)m->nv;
  /* a backend that numbers on the device (cuda: the same numbers) does, where there are entities to find and
   * their keys fit its 64 bits (faces: three vertex ids of 21 bits) */
  const mf_simplex_backend_ops *sx = ctx ? ctx->bk->simplex : NULL;
  if (p >= 2 && sx && sx->dofs_create && (dim == 2 || p < 3 || m->nv <= (1 << 21))) {
    const int e = sx->dofs_create(ctx, m, p, d);
    if (e != MF_ERR_MEMORY && e != MF_ERR_UNSUPPORTED) return e; /* else (device memory short): made here */
  }
  int sub[6][3]; /* the cell's edges, then its faces, as local vertex ids */
  for (int e = 0; e < ne; e++) {
    const int *ed = dim == 2 ? tri_edges[e] : tet_edges[e];
    sub[e][0] = ed[0], sub[e][1] = ed[1], sub[e][2] = 0;
  }
  /* the edges and faces are found only where they carry DoFs (P1: neither; P2: edges only) */
  mf_simplex_entities E, F;
  memset(&E, 0, sizeof E);
  memset(&F, 0, sizeof F);
  if (pe > 0) MF_CALL(mf_simplex_entities_create(ctx, m, 2, ne, (const int(*)[3])sub, 0, &E));
  int ierr = nf && pf > 0 ? mf_simplex_entities_create(ctx, m, 3, nf, tet_faces, 0, &F) : 0;
  if (ierr) {
    mf_simplex_entities_free(&E);
    return ierr;
  }
  const int64_t nek = E.n, nfk = F.n;
  d->nnodes = N;
  const int64_t nd = (int64_t)m->nv + nek * pe + nfk * pf + (int64_t)m->ncells * pi;
  if (nd > INT32_MAX)
    ierr = mf_error_set(ctx, MF_ERR_ARGUMENT, __FILE__, __LINE__, __func__, "%lld DoFs exceed the 32-bit indices",
                        (long long)nd);
  d->nedges = (int)nek;
  d->nfaces = (int)nfk;
  d->ndofs = (int)nd;
  if (!ierr) ierr = MF_CALLOC(ctx, (size_t)m->ncells * N, &d->cell_dofs);
  if (!ierr) ierr = MF_CALLOC(ctx, (size_t)d->ndofs + 1, &d->bc);
  if (ierr) {
    mf_simplex_entities_free(&E);
    mf_simplex_entities_free(&F);
    mf_simplex_dofs_free(d);
    return ierr;
  }
  const int ebase = m->nv, fbase = ebase + (int)nek * pe, ibase = fbase + (int)nfk * pf;
  /* every cell writes its own row of cell_dofs: threads over the cells */
#pragma omp parallel for schedule(static)
  for (int c = 0; c < m->ncells; c++) {
    const int *v = m->cells + (size_t)c * nvc;
    int *cd = d->cell_dofs + (size_t)c * N, n = 0;
    for (int k = 0; k < nvc; k++) cd[n++] = v[k];
    for (int e = 0; e < ne && pe > 0; e++) {
      const int *ed = dim == 2 ? tri_edges[e] : tet_edges[e];
      const int ev[2] = {v[ed[0]], v[ed[1]]};
      const int g = (int)mf_simplex_entities_find(&E, 2, ev, nv);
      for (int k = 1; k < p; k++) /* node k from local a to b; the global edge runs from min to max */
        cd[n++] = ebase + g * pe + (ev[0] < ev[1] ? k - 1 : p - 1 - k);
    }
    for (int f = 0; f < nf && pf > 0; f++) {
      const int *fc = tet_faces[f];
      const int gv[3] = {v[fc[0]], v[fc[1]], v[fc[2]]};
      const int g = (int)mf_simplex_entities_find(&F, 3, gv, nv);
      int ord[3] = {0, 1, 2}; /* the face's vertices by global index */
      for (int i = 0; i < 3; i++)
        for (int j = i + 1; j < 3; j++)
          if (gv[ord[j]] < gv[ord[i]]) {
            const int t = ord[i];
            ord[i] = ord[j], ord[j] = t;
          }
      for (int j = 1; j < p; j++)
        for (int i = 1; i + j < p; i++) {
          const int L[3] = {p - i - j, i, j}; /* p x barycentric coordinates on (a, b, c) */
          cd[n++] = fbase + g * pf + face_pos(p, L[ord[1]], L[ord[2]]);
        }
    }
    for (int k = 0; k < pi; k++) cd[n++] = ibase + c * pi + k;
  }
  /* boundary DoFs: the nodes of the boundary facets (vertices, their edges, in 3D their face) */
  for (int t = 0; t < m->nfacets; t++) {
    const int *fv = m->facets + (size_t)t * dim;
    for (int k = 0; k < dim; k++) d->bc[fv[k]] = 1;
    const int nfe = dim == 2 ? 1 : 3;
    for (int e = 0; e < nfe && pe > 0; e++) {
      const int ev[2] = {fv[e == 2 ? 1 : 0], fv[e == 0 ? 1 : 2]};
      const int64_t g = mf_simplex_entities_find(&E, 2, ev, nv);
      for (int k = 0; k < pe; k++) d->bc[ebase + g * pe + k] = 1;
    }
    if (dim == 3 && pf > 0) {
      const int64_t g = mf_simplex_entities_find(&F, 3, fv, nv);
      for (int k = 0; k < pf; k++) d->bc[fbase + g * pf + k] = 1;
    }
  }
  mf_simplex_entities_free(&E);
  mf_simplex_entities_free(&F);
  return 0;
}
