/* vtu.c -- ParaView output: a vector written as VTK XML unstructured grids, one .vtu piece per rank
 * and a .pvtu on rank 0 that lists the pieces. The cells come from the space's family (lib/family.h:
 * every cell one VTK cell with points of its own, the field and the coordinates at those points; hex
 * spaces: VTK Lagrange cells, lib/hex/vtu_hex.c); a family without them refuses the output.
 *
 * Format: VTK XML with the arrays in one raw (unencoded) appended block, each preceded by its length
 * in bytes as a UInt64; byte order that of the host.                                               */
#include "family.h"

#include <errno.h>
#include <stdio.h>

#define VTU_NARRAYS 8

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

/* Write this rank's piece; pts: 3 c->npoints doubles. Returns 0 or an errno value (also in st). */
static int write_piece(mf_vtu_cells *c, double *pts, const char *path, const char *name, int rank, io_status *st)
{
  const mf_space s = c->space;
  const mf_family *fam = s->fam;
  const int npc = c->npoints;
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

  /* the field at the cells' points */
  put_header(f, count[0] * arr[0].elem, st);
  for (int e = 0; e < s->ncells && !st->err; e++) {
    fam->vtu_values(c, e, pts);
    put(f, pts, sizeof(double), npc, st);
  }
  for (int k = 1; k <= 3; k++) { /* rank, level, hanging mask */
    int32_t cb[1024];
    put_header(f, count[k] * arr[k].elem, st);
    for (int e0 = 0; e0 < s->ncells && !st->err; e0 += 1024) {
      const int n = s->ncells - e0 < 1024 ? s->ncells - e0 : 1024;
      for (int i = 0; i < n; i++) {
        int32_t level = 0, mask = 0;
        if (k > 1) fam->vtu_cell_data(c, e0 + i, &level, &mask);
        cb[i] = k == 1 ? rank : k == 2 ? level : mask;
      }
      put(f, cb, sizeof *cb, n, st);
    }
  }
  /* the points (z = 0 in 2D) */
  put_header(f, count[4] * arr[4].elem, st);
  for (int e = 0; e < s->ncells && !st->err; e++) {
    fam->vtu_points(c, e, pts);
    put(f, pts, sizeof(double), 3 * (size_t)npc, st);
  }
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
  memset(types, c->type, sizeof types);
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
  MF_CHECK(s->fam->vtu_begin, ctx, MF_ERR_UNSUPPORTED, "VTU output of %s spaces: not supported yet", s->fam->name);
  MF_CHECK(s->ncomp == 1, ctx, MF_ERR_UNSUPPORTED, "VTU output of spaces of %d components: not supported yet", s->ncomp);
  MF_CALL(mf_space_check_mesh(s));
  const size_t plen = strlen(prefix);
  MF_CHECK(plen > 0 && prefix[plen - 1] != '/', ctx, MF_ERR_ARGUMENT,
           "file prefix '%s' names no file (PREFIX.pvtu and PREFIX_<rank>.vtu are written)", prefix);
  MF_CHECK(name[0] && strlen(name) <= 200 && !strpbrk(name, "<>&\"'"), ctx, MF_ERR_ARGUMENT,
           "field name '%s' is empty, longer than 200 characters or holds one of < > & \" '", name);
  const char *slash = strrchr(prefix, '/'), *base = slash ? slash + 1 : prefix;
  MF_CHECK(!strpbrk(base, "<>&\"'"), ctx, MF_ERR_ARGUMENT, "file prefix '%s' holds one of < > & \" ' in its file name",
           prefix);

  /* the values on the host with their ghosts, the family's cells, and the node points (collective
   * where not made yet) */
  mf_vtu_cells c;
  memset(&c, 0, sizeof c);
  c.space = s;
  double *u = NULL, *pts = NULL;
  char *path = NULL;
  int ierr = MF_CALLOC(ctx, s->nlocal, &u);
  if (!ierr) ierr = s->fam->vtu_begin(&c);
  if (!ierr) ierr = MF_CALLOC(ctx, 3 * (size_t)c.npoints, &pts);
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
  c.u = u;

  /* the pieces, then (when all were written) the .pvtu; a failure anywhere leaves no file of this
   * write behind: each rank removes the piece it created, rank 0 the .pvtu it created */
  {
    io_status st = {0, 0}, mst = {0, 0};
    snprintf(path, plen + 32, "%s_%d.vtu", prefix, ctx->rank);
    write_piece(&c, pts, path, name, ctx->rank, &st);
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
  free(pts);
  free(path);
  s->fam->vtu_end(&c);
  return ierr;
}
