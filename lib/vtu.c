/* vtu.c -- ParaView output: a vector written as VTK XML unstructured grids, one .vtu piece per rank
 * and a .pvtu on rank 0 that lists the pieces.
 *
 * Every cell becomes one VTK Lagrange cell of the space's degree p (VTK_LAGRANGE_QUADRILATERAL = 70,
 * VTK_LAGRANGE_HEXAHEDRON = 72) with its own (p+1)^dim points: points shared by cells are written
 * once per cell (simple, and each piece stands alone). VTK interpolates a Lagrange cell on equispaced
 * parametric points, mfree on Gauss-Lobatto points: both are bases of the same Q_p, so the geometry
 * and the field are evaluated at the equispaced points of each cell and VTK's cell is then exactly
 * the mfree one. Hanging-node constraints are applied first (as the kernels do), so the field and
 * the geometry are continuous across hanging faces.
 *
 * VTK's node order within a cell (VTK >= 9, file version 2.2), i, j, k = 0..p the lexicographic
 * indices along x, y, z; every edge and face runs along increasing i, j, k:
 *
 *     2D:   3 --e2-- 2      corners 0..3, then the p-1 interior nodes of edges e0 (j = 0),
 *           |        |      e1 (i = p), e2 (j = p), e3 (i = 0), then the (p-1)^2 interior
 *          e3  face  e1     nodes, i fastest
 *           |        |
 *           0 --e0-- 1
 *     3D:   corners 0..3 as above at k = 0, 4..7 at k = p; edges e0..e3 at k = 0 and e4..e7 at
 *           k = p as in 2D, then e8..e11 along k at (i, j) = (0,0), (p,0), (p,p), (0,p); faces
 *           i = 0, i = p (j fastest, then k), j = 0, j = p (i, then k), k = 0, k = p (i, then j);
 *           then the interior, i fastest.
 *
 * Format: VTK XML with the arrays in one raw (unencoded) appended block, each preceded by its length
 * in bytes as a UInt64; byte order that of the host.                                               */
#include "mfree_impl.h"

#include <errno.h>
#include <stdio.h>

#define VTK_LAGRANGE_QUADRILATERAL 70
#define VTK_LAGRANGE_HEXAHEDRON 72
#define VTU_NARRAYS 8

/* VTK's index of node ijk of a Lagrange cell of degree p (see the file comment). */
static int vtk_node_index(int dim, int p, const int *ijk)
{
  static const int corner_of[8] = {0, 1, 3, 2, 4, 5, 7, 6}; /* lexicographic corner bits -> VTK corner */
  const int m = p - 1; /* interior nodes per edge */
  int on[3] = {0, 0, 0}, nbdy = 0;
  for (int d = 0; d < dim; d++) nbdy += on[d] = (ijk[d] == 0 || ijk[d] == p);
  if (nbdy == dim) {
    int bits = 0;
    for (int d = 0; d < dim; d++) bits |= (ijk[d] == p) << d;
    return corner_of[bits];
  }
  int offset = 1 << dim;
  if (nbdy == dim - 1) { /* the interior of an edge along the one direction d not on the boundary */
    int d = 0;
    while (on[d]) d++;
    const int top = dim == 3 && ijk[2] == p ? 4 : 0; /* edges at k = p follow those at k = 0 */
    int edge;
    if (d == 0) edge = (ijk[1] == p ? 2 : 0) + top;
    else if (d == 1) edge = (ijk[0] == p ? 1 : 3) + top;
    else edge = 8 + (ijk[0] == p ? (ijk[1] == p ? 2 : 1) : (ijk[1] == p ? 3 : 0));
    return offset + edge * m + ijk[d] - 1;
  }
  offset += (dim == 3 ? 12 : 4) * m;
  if (dim == 3 && nbdy == 1) { /* the interior of the face normal to direction n */
    int n = 0;
    while (!on[n]) n++;
    const int a = n == 0 ? 1 : 0, b = n == 2 ? 1 : 2; /* its two directions, a fastest */
    const int face = 2 * n + (ijk[n] == p);
    return offset + face * m * m + (ijk[a] - 1) + m * (ijk[b] - 1);
  }
  if (dim == 3) offset += 6 * m * m;
  return offset + (ijk[0] - 1) + m * ((ijk[1] - 1) + (dim == 3 ? m * (ijk[2] - 1) : 0));
}

/* What one piece needs: the space, the vector's local values (ghosts imported), the 1D evaluation
 * of the Gauss-Lobatto basis at the equispaced points, and the lexicographic -> VTK permutation. */
typedef struct {
  mf_space s;
  const double *u;
  double E[MF_MAX_N1 * MF_MAX_N1]; /* E[i*n1 + j] = l_j(i/p), l_j the Gauss-Lobatto Lagrange basis */
  int *perm;                       /* npc: VTK index of lexicographic node l */
  double *a, *b, *c;               /* npc scratch each */
} vtu_work;

/* Nodal values at the Gauss-Lobatto nodes of a cell (in a) -> values at the equispaced points in VTK
 * order (out, stride apart). */
static void to_vtk_points(vtu_work *w, const double *in, double *out, int stride)
{
  const mf_space s = w->s;
  const int n[3] = {s->n1, s->n1, s->n1};
  double *x = w->b, *y = w->c;
  memcpy(x, in, sizeof(double) * s->npc);
  for (int d = 0; d < s->dim; d++) {
    mf_tensor_apply(s->dim, n, d, w->E, s->n1, 0, x, y, 0);
    double *t = x;
    x = y, y = t;
  }
  for (int l = 0; l < s->npc; l++) out[(size_t)w->perm[l] * stride] = x[l];
}

/* A failure while writing: its errno (0: none so far; later writes are skipped); opened: the file was
 * created (and is to be removed if the write as a whole fails). */
typedef struct {
  int err, opened;
} io_status;

static int put(FILE *f, const void *p, size_t size, size_t n, io_status *st)
{
  if (!st->err && n && fwrite(p, size, n, f) != n) st->err = errno ? errno : EIO;
  return st->err;
}

/* One array of the appended block: its length header, then the bytes. */
static int put_header(FILE *f, uint64_t bytes, io_status *st) { return put(f, &bytes, sizeof bytes, 1, st); }

static const char *host_byte_order(void)
{
  const uint16_t one = 1;
  return *(const unsigned char *)&one ? "LittleEndian" : "BigEndian";
}

/* The XML names, VTK types and sizes of the arrays, in the order of the appended block. */
typedef struct {
  const char *section, *name, *type;
  int ncomp;
  size_t elem;
} array_desc;

static void array_table(const char *name, array_desc a[VTU_NARRAYS])
{
  const array_desc t[VTU_NARRAYS] = {
      {"PointData", NULL, "Float64", 1, 8},      {"CellData", "rank", "Int32", 1, 4},
      {"CellData", "level", "Int32", 1, 4},      {"CellData", "hanging_mask", "Int32", 1, 4},
      {"Points", NULL, "Float64", 3, 8},         {"Cells", "connectivity", "Int64", 1, 8},
      {"Cells", "offsets", "Int64", 1, 8},       {"Cells", "types", "UInt8", 1, 1}};
  memcpy(a, t, sizeof t);
  a[0].name = name;
}

/* Write this rank's piece. Returns 0 or an errno value (also in st). */
static int write_piece(vtu_work *w, const char *path, const char *name, int rank, io_status *st)
{
  const mf_space s = w->s;
  const int npc = s->npc, dim = s->dim;
  const int64_t ncells = s->ncells, npoints = ncells * npc;
  array_desc arr[VTU_NARRAYS];
  array_table(name, arr);
  uint64_t count[VTU_NARRAYS], offset[VTU_NARRAYS], pos = 0;
  for (int k = 0; k < VTU_NARRAYS; k++) {
    const int per_point = k == 0 || k == 4 || k == 5;
    count[k] = (uint64_t)(per_point ? npoints : ncells) * (uint64_t)arr[k].ncomp;
    offset[k] = pos;
    pos += sizeof(uint64_t) + count[k] * arr[k].elem;
  }
  errno = 0;
  FILE *f = fopen(path, "wb");
  if (!f) return st->err = errno ? errno : EIO;
  st->opened = 1;
  if (fprintf(f,
              "<?xml version=\"1.0\"?>\n"
              "<VTKFile type=\"UnstructuredGrid\" version=\"2.2\" byte_order=\"%s\" header_type=\"UInt64\">\n"
              "  <UnstructuredGrid>\n"
              "    <Piece NumberOfPoints=\"%lld\" NumberOfCells=\"%lld\">\n",
              host_byte_order(), (long long)npoints, (long long)ncells) < 0)
    st->err = errno ? errno : EIO;
  const char *open = NULL;
  for (int k = 0; k < VTU_NARRAYS && !st->err; k++) {
    if (!open || strcmp(open, arr[k].section)) {
      if (open) fprintf(f, "      </%s>\n", open);
      if (!strcmp(arr[k].section, "PointData")) fprintf(f, "      <PointData Scalars=\"%s\">\n", name);
      else fprintf(f, "      <%s>\n", arr[k].section);
      open = arr[k].section;
    }
    fprintf(f, "        <DataArray type=\"%s\"", arr[k].type);
    if (k != 4) fprintf(f, " Name=\"%s\"", arr[k].name);
    if (arr[k].ncomp > 1) fprintf(f, " NumberOfComponents=\"%d\"", arr[k].ncomp);
    if (fprintf(f, " format=\"appended\" offset=\"%llu\"/>\n", (unsigned long long)offset[k]) < 0)
      st->err = errno ? errno : EIO;
  }
  if (!st->err && fprintf(f, "      </%s>\n    </Piece>\n  </UnstructuredGrid>\n  <AppendedData encoding=\"raw\">\n   _",
                          open) < 0)
    st->err = errno ? errno : EIO;

  /* the field: the cell's gathered values, constrained, at the equispaced points */
  double *vals = w->a, pts[3 * MF_MAX_N1 * MF_MAX_N1 * MF_MAX_N1];
  put_header(f, count[0] * arr[0].elem, st);
  for (int e = 0; e < s->ncells && !st->err; e++) {
    const int *nodes = &s->cell_nodes[(size_t)e * npc];
    for (int l = 0; l < npc; l++) vals[l] = w->u[nodes[l]];
    mf_hanging_apply(dim, s->n1, s->face_code[e], s->hanging_P, vals, 0);
    to_vtk_points(w, vals, pts, 1);
    put(f, pts, sizeof(double), npc, st);
  }
  for (int k = 1; k <= 3; k++) { /* rank, level, hanging mask */
    int32_t buf[1024];
    put_header(f, count[k] * arr[k].elem, st);
    for (int e0 = 0; e0 < s->ncells && !st->err; e0 += 1024) {
      const int n = s->ncells - e0 < 1024 ? s->ncells - e0 : 1024;
      for (int i = 0; i < n; i++) buf[i] = k == 1 ? rank : k == 2 ? s->cell_level[e0 + i] : s->face_code[e0 + i];
      put(f, buf, sizeof *buf, n, st);
    }
  }
  /* the points: the cell's geometry nodes (constrained), at the equispaced points; z = 0 in 2D */
  put_header(f, count[4] * arr[4].elem, st);
  double *X = NULL;
  if (!st->err && MF_CALLOC(NULL, (size_t)npc * dim, &X)) st->err = ENOMEM;
  for (int e = 0; e < s->ncells && !st->err; e++) {
    mf_space_cell_coords(s, e, X);
    memset(pts, 0, sizeof(double) * 3 * npc);
    for (int d = 0; d < dim; d++) {
      for (int l = 0; l < npc; l++) vals[l] = X[l * dim + d];
      to_vtk_points(w, vals, pts + d, 3);
    }
    put(f, pts, sizeof(double), 3 * (size_t)npc, st);
  }
  free(X);
  /* connectivity (each cell its own points, consecutive), offsets, types */
  int64_t buf[1024];
  put_header(f, count[5] * arr[5].elem, st);
  for (int64_t i0 = 0; i0 < npoints && !st->err; i0 += 1024) {
    const int n = npoints - i0 < 1024 ? (int)(npoints - i0) : 1024;
    for (int i = 0; i < n; i++) buf[i] = i0 + i;
    put(f, buf, sizeof *buf, n, st);
  }
  put_header(f, count[6] * arr[6].elem, st);
  for (int64_t e0 = 0; e0 < ncells && !st->err; e0 += 1024) {
    const int n = ncells - e0 < 1024 ? (int)(ncells - e0) : 1024;
    for (int i = 0; i < n; i++) buf[i] = (e0 + i + 1) * npc;
    put(f, buf, sizeof *buf, n, st);
  }
  put_header(f, count[7] * arr[7].elem, st);
  uint8_t types[1024];
  memset(types, dim == 3 ? VTK_LAGRANGE_HEXAHEDRON : VTK_LAGRANGE_QUADRILATERAL, sizeof types);
  for (int64_t e0 = 0; e0 < ncells && !st->err; e0 += 1024) put(f, types, 1, ncells - e0 < 1024 ? (size_t)(ncells - e0) : 1024, st);
  if (!st->err && fprintf(f, "\n  </AppendedData>\n</VTKFile>\n") < 0) st->err = errno ? errno : EIO;
  if (fclose(f) && !st->err) st->err = errno ? errno : EIO;
  return st->err;
}

/* The .pvtu (rank 0): the arrays' names and types, and the pieces by their names relative to it. */
static int write_master(const char *path, const char *base, const char *name, int nranks, io_status *st)
{
  array_desc arr[VTU_NARRAYS];
  array_table(name, arr);
  errno = 0;
  FILE *f = fopen(path, "w");
  if (!f) return st->err = errno ? errno : EIO;
  st->opened = 1;
  int bad = fprintf(f,
                    "<?xml version=\"1.0\"?>\n"
                    "<VTKFile type=\"PUnstructuredGrid\" version=\"2.2\" byte_order=\"%s\" header_type=\"UInt64\">\n"
                    "  <PUnstructuredGrid GhostLevel=\"0\">\n"
                    "    <PPointData Scalars=\"%s\">\n"
                    "      <PDataArray type=\"Float64\" Name=\"%s\"/>\n"
                    "    </PPointData>\n"
                    "    <PCellData>\n",
                    host_byte_order(), name, name) < 0;
  for (int k = 1; k <= 3; k++)
    bad |= fprintf(f, "      <PDataArray type=\"%s\" Name=\"%s\"/>\n", arr[k].type, arr[k].name) < 0;
  bad |= fprintf(f, "    </PCellData>\n"
                    "    <PPoints>\n"
                    "      <PDataArray type=\"Float64\" NumberOfComponents=\"3\"/>\n"
                    "    </PPoints>\n") < 0;
  for (int r = 0; r < nranks; r++) bad |= fprintf(f, "    <Piece Source=\"%s_%d.vtu\"/>\n", base, r) < 0;
  bad |= fprintf(f, "  </PUnstructuredGrid>\n</VTKFile>\n") < 0;
  if (bad) st->err = errno ? errno : EIO;
  if (fclose(f) && !st->err) st->err = errno ? errno : EIO;
  return st->err;
}

/* Every rank learns the lowest rank whose step failed (size if none) and that rank's code. */
static void first_failure(mf_context ctx, int code, int *rank, int *rank_code)
{
  int in[2] = {code ? ctx->rank : ctx->size, code}, out[2];
  MPI_Allreduce(in, out, 1, MPI_2INT, MPI_MINLOC, ctx->comm);
  *rank = out[0];
  *rank_code = out[1];
}

/* A file error of one rank, made collective: the failing rank names its own file and the reason, and
 * every rank returns that message, "rank R: " before it on several ranks (mf_agree). */
static int agree_io(mf_context ctx, const io_status *st, const char *path)
{
  int ierr = 0;
  if (st->err)
    ierr = mf_error_set(ctx, MF_ERR_IO, __FILE__, __LINE__, "mf_vector_write_vtu", "cannot write '%s': %s", path,
                        strerror(st->err));
  return mf_agree(ctx, ierr);
}

int mf_vector_write_vtu(mf_vector v, const char *prefix, const char *name)
{
  MF_CHECK(v, NULL, MF_ERR_NULL, "vector is NULL");
  const mf_space s = v->space;
  mf_context ctx = s->ctx;
  MF_CHECK(prefix, ctx, MF_ERR_NULL, "file prefix is NULL");
  MF_CHECK(name, ctx, MF_ERR_NULL, "field name is NULL");
  MF_CHECK(!s->simplex, ctx, MF_ERR_UNSUPPORTED, "VTU output of simplex spaces: not supported yet");
  MF_CALL(mf_space_check_mesh(s));
  const size_t plen = strlen(prefix);
  MF_CHECK(plen > 0 && prefix[plen - 1] != '/', ctx, MF_ERR_ARGUMENT,
           "file prefix '%s' names no file (PREFIX.pvtu and PREFIX_<rank>.vtu are written)", prefix);
  MF_CHECK(name[0] && strlen(name) <= 200 && !strpbrk(name, "<>&\"'"), ctx, MF_ERR_ARGUMENT,
           "field name '%s' is empty, longer than 200 characters or holds one of < > & \" '", name);
  const char *slash = strrchr(prefix, '/'), *base = slash ? slash + 1 : prefix;
  MF_CHECK(!strpbrk(base, "<>&\"'"), ctx, MF_ERR_ARGUMENT, "file prefix '%s' holds one of < > & \" ' in its file name",
           prefix);

  /* the values on the host with their ghosts, and the node points (collective where not made yet) */
  vtu_work w;
  memset(&w, 0, sizeof w);
  w.s = s;
  double *u = NULL;
  char *path = NULL;
  int ierr = MF_CALLOC(ctx, s->nlocal, &u);
  if (!ierr) ierr = MF_CALLOC(ctx, s->npc, &w.perm);
  if (!ierr) ierr = MF_CALLOC(ctx, 3 * (size_t)s->npc, &w.a);
  if (!ierr) ierr = MF_CALLOC(ctx, plen + 32, &path);
  if (!ierr) ierr = v->ops.to_host(v, u, s->nowned);
  int r, code;
  first_failure(ctx, ierr, &r, &code);
  if (r < ctx->size) {
    if (!ierr) ierr = mf_error_set(ctx, code, __FILE__, __LINE__, __func__, "writing '%s.pvtu' failed on rank %d", prefix, r);
    goto done;
  }
  MF_CALL_GOTO(mf_exchange_import(ctx, &s->ex, u), done);
  MF_CALL_GOTO(mf_space_host_coords(s), done);
  w.u = u;
  w.b = w.a + s->npc;
  w.c = w.b + s->npc;
  {
    const int p = s->degree, n1 = s->n1;
    double equi[MF_MAX_N1];
    for (int i = 0; i < n1; i++) equi[i] = (double)i / p;
    mf_lagrange_eval(n1, s->gll, n1, equi, w.E, NULL);
    for (int l = 0; l < s->npc; l++) {
      const int ijk[3] = {l % n1, (l / n1) % n1, l / (n1 * n1)};
      w.perm[l] = vtk_node_index(s->dim, p, ijk);
    }
  }

  /* the pieces, then (when all were written) the .pvtu; a failure anywhere leaves no file of this
   * write behind: each rank removes the piece it created, rank 0 the .pvtu it created */
  {
    io_status st = {0, 0}, mst = {0, 0};
    snprintf(path, plen + 32, "%s_%d.vtu", prefix, ctx->rank);
    write_piece(&w, path, name, ctx->rank, &st);
    ierr = agree_io(ctx, &st, path);
    if (!ierr && ctx->rank == 0) {
      snprintf(path, plen + 32, "%s.pvtu", prefix);
      write_master(path, base, name, ctx->size, &mst);
    }
    if (!ierr) ierr = agree_io(ctx, &mst, path);
    if (ierr) {
      if (mst.opened) remove(path); /* rank 0's .pvtu: path names it still */
      snprintf(path, plen + 32, "%s_%d.vtu", prefix, ctx->rank);
      if (st.opened) remove(path);
    }
  }
done:
  free(u);
  free(path);
  free(w.perm);
  free(w.a);
  return ierr;
}
