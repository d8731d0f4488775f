/* gmsh.c -- reader of Gmsh .msh files: ASCII formats 2.2 and 4.1, binary 4.1 (see mf_gmsh.h).
 *
 * The file is read whole into memory and parsed token by token, counting lines for the messages
 * ("file:line: problem"). Every count is checked against the bytes left before anything is
 * allocated. Unknown sections ($Periodic, $NodeData, ...) are skipped to their $End line. Element
 * node ids are resolved after the whole file is read (sorted ids, binary search), so duplicates and
 * undefined nodes are found whatever the section order. Binary 4.1: after their header line, $Entities,
 * $Nodes and $Elements hold the same numbers raw (int 4 bytes, size_t 8, double 8, the byte order checked
 * by $MeshFormat's int 1); the other sections are text, the messages name the section's line. */
#include <ctype.h>
#include <errno.h>
#include <float.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "mf_gmsh.h"
#include "mfree_impl.h"

typedef struct {
  mf_context ctx;
  const char *buf, *name;
  size_t len, pos;
  long line;       /* line of the current position (1-based) */
  long tok_line;   /* line of the last token */
  char tok[64];    /* the last token (longer tokens are kept truncated, flagged by tok_long) */
  int tok_long;
  int binary;      /* inside a binary 4.1 section: the numbers are raw (int 4 bytes, size_t 8, double 8) */
} parser;

#define PERR(p, code, ...) gmsh_err((p), (code), __LINE__, __VA_ARGS__)

static int gmsh_err(parser *p, int code, int srcline, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 4, 5)))
#endif
    ;
static int gmsh_err(parser *p, int code, int srcline, const char *fmt, ...)
{
  char msg[512];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  return mf_error_set(p->ctx, code, __FILE__, srcline, "mf_gmsh_read", "%s:%ld: %s", p->name, p->tok_line, msg);
}

/* next whitespace-separated token; 0 at the end of the buffer */
static int next_token(parser *p)
{
  while (p->pos < p->len && isspace((unsigned char)p->buf[p->pos])) {
    if (p->buf[p->pos] == '\n') p->line++;
    p->pos++;
  }
  p->tok_line = p->line;
  if (p->pos >= p->len) return 0;
  size_t n = 0;
  p->tok_long = 0;
  while (p->pos < p->len && !isspace((unsigned char)p->buf[p->pos])) {
    if (n + 1 < sizeof p->tok) p->tok[n++] = p->buf[p->pos];
    else p->tok_long = 1;
    p->pos++;
  }
  p->tok[n] = 0;
  return 1;
}

/* a token that must be there: EOF is a truncated file */
static int need_token(parser *p, const char *what)
{
  if (!next_token(p)) return PERR(p, MF_ERR_IO, "unexpected end of file (truncated?) while reading %s", what);
  return 0;
}

/* n raw bytes of a binary section */
static int read_bytes(parser *p, const char *what, size_t n, void *out)
{
  if (p->len - p->pos < n)
    return PERR(p, MF_ERR_IO, "unexpected end of file (truncated?) while reading %s (binary, byte %zu)", what, p->pos);
  memcpy(out, p->buf + p->pos, n);
  p->pos += n;
  return 0;
}

/* the binary data of a section start after its header line */
static int begin_binary(parser *p)
{
  while (p->pos < p->len && p->buf[p->pos] != '\n') {
    if (!isspace((unsigned char)p->buf[p->pos]))
      return PERR(p, MF_ERR_IO, "binary section: '%c' after the section name on its line", p->buf[p->pos]);
    p->pos++;
  }
  if (p->pos >= p->len) return PERR(p, MF_ERR_IO, "unexpected end of file (truncated?) before binary data");
  p->pos++;
  p->line++;
  p->binary = 1;
  return 0;
}

static int read_long(parser *p, const char *what, long *v)
{
  if (p->binary) { /* size_t */
    uint64_t x = 0;
    MF_CALL(read_bytes(p, what, sizeof x, &x));
    if (x > (uint64_t)LONG_MAX) return PERR(p, MF_ERR_IO, "%s %llu out of range (binary)", what, (unsigned long long)x);
    *v = (long)x;
    return 0;
  }
  MF_CALL(need_token(p, what));
  char *end;
  errno = 0;
  if (p->tok[0] == '$')
    return PERR(p, MF_ERR_IO, "found '%s' where %s was expected: fewer entries than announced (truncated?)", p->tok, what);
  if (p->tok_long)
    return PERR(p, MF_ERR_IO, "a token of more than %zu characters ('%s...') where %s (an integer) was expected",
                sizeof p->tok - 1, p->tok, what);
  long x = strtol(p->tok, &end, 10);
  if (end == p->tok || *end)
    return PERR(p, MF_ERR_IO, "non-numeric token '%s' where %s (an integer) was expected", p->tok, what);
  if (errno == ERANGE)
    return PERR(p, MF_ERR_IO, "integer %s out of range (beyond %ld) where %s was expected", p->tok, LONG_MAX, what);
  *v = x;
  return 0;
}

static int read_int(parser *p, const char *what, int *v)
{
  if (p->binary) {
    int32_t x = 0;
    MF_CALL(read_bytes(p, what, sizeof x, &x));
    *v = (int)x;
    return 0;
  }
  long x = 0;
  MF_CALL(read_long(p, what, &x));
  if (x < -1000000000L || x > 1000000000L) return PERR(p, MF_ERR_IO, "%s %ld out of range", what, x);
  *v = (int)x;
  return 0;
}

static int read_double(parser *p, const char *what, double *v)
{
  if (p->binary) {
    double x = 0.0;
    MF_CALL(read_bytes(p, what, sizeof x, &x));
    if (!isfinite(x)) return PERR(p, MF_ERR_IO, "%s is not a finite number (binary)", what);
    *v = x;
    return 0;
  }
  MF_CALL(need_token(p, what));
  char *end;
  if (p->tok[0] == '$')
    return PERR(p, MF_ERR_IO, "found '%s' where %s was expected: fewer entries than announced (truncated?)", p->tok, what);
  if (p->tok_long)
    return PERR(p, MF_ERR_IO, "a token of more than %zu characters ('%s...') where %s (a number) was expected",
                sizeof p->tok - 1, p->tok, what);
  errno = 0;
  double x = strtod(p->tok, &end);
  if (end == p->tok || *end)
    return PERR(p, MF_ERR_IO, "non-numeric token '%s' where %s (a number) was expected", p->tok, what);
  /* strtod's overflow gives +-HUGE_VAL (infinite) with ERANGE: a number too large for a double, not
   * the words inf or nan */
  if (errno == ERANGE && !isfinite(x))
    return PERR(p, MF_ERR_IO, "number %s out of range (beyond %g, the largest double) where %s was expected", p->tok,
                DBL_MAX, what);
  if (!isfinite(x)) return PERR(p, MF_ERR_IO, "'%s' is not a finite number where %s was expected", p->tok, what);
  *v = x;
  return 0;
}

static int expect(parser *p, const char *word)
{
  if (!next_token(p)) return PERR(p, MF_ERR_IO, "unexpected end of file (truncated?): missing %s", word);
  if (strcmp(p->tok, word)) return PERR(p, MF_ERR_IO, "expected %s, found '%s' (wrong count?)", word, p->tok);
  return 0;
}

/* a count read from the file: nonnegative and at most what the remaining bytes can hold (each entry
 * takes at least `bytes_each` bytes), checked before allocating */
static int read_count(parser *p, const char *what, long bytes_each, long *n)
{
  MF_CALL(read_long(p, what, n));
  if (*n < 0) return PERR(p, MF_ERR_IO, "%s is negative (%ld)", what, *n);
  if ((unsigned long)*n > (p->len - p->pos) / (unsigned long)bytes_each + 1)
    return PERR(p, MF_ERR_IO, "%s %ld is more than the %zu bytes left in the file can hold (truncated or corrupt)",
                what, *n, p->len - p->pos);
  return 0;
}

/* ------------------------------------------------------------------ element types */

typedef struct {
  int nodes, dim, simplex, order;
  const char *name;
} eltype;

static eltype element_type(long t)
{
  static const eltype tab[] = {
      {0, -1, 0, 0, NULL},
      {2, 1, 1, 1, "2-node line"},          {3, 2, 1, 1, "3-node triangle"},
      {4, 2, 0, 1, "4-node quadrangle"},    {4, 3, 1, 1, "4-node tetrahedron"},
      {8, 3, 0, 1, "8-node hexahedron"},    {6, 3, 0, 1, "6-node prism"},
      {5, 3, 0, 1, "5-node pyramid"},       {3, 1, 1, 2, "3-node line"},
      {6, 2, 1, 2, "6-node triangle"},      {9, 2, 0, 2, "9-node quadrangle"},
      {10, 3, 1, 2, "10-node tetrahedron"}, {27, 3, 0, 2, "27-node hexahedron"},
      {18, 3, 0, 2, "18-node prism"},       {14, 3, 0, 2, "14-node pyramid"},
      {1, 0, 1, 1, "point"},                {8, 2, 0, 2, "8-node quadrangle"},
      {20, 3, 0, 2, "20-node hexahedron"},  {15, 3, 0, 2, "15-node prism"},
      {13, 3, 0, 2, "13-node pyramid"}};
  if (t < 1 || t >= (long)(sizeof tab / sizeof tab[0])) return tab[0];
  return tab[t];
}

/* ------------------------------------------------------------------ the mesh being built */

typedef struct {
  long *ids;       /* raw node ids of the cells or facets, nv each */
  long *elem;      /* the file's element id of each */
  long *lines;     /* the file line of each */
  int *tags;
  long n, cap;
} rawlist;

typedef struct {
  int dim, tag, phys;
} entity;

typedef struct {
  parser p;
  int dim, version; /* 22 or 41 */
  int binary;       /* a binary 4.1 file: $Entities, $Nodes and $Elements hold raw numbers */
  long n_nodes, nodes_cap;
  double *x;
  long *node_id, *node_line;
  rawlist cells, facets;
  rawlist hi; /* second-order elements kept (cells, facets): all their nodes (MF_GMSH_HI_NODES each, -1 padded) */
  entity *ent;
  long n_ent;
  mf_gmsh_name *names;
  int n_names;
  int have_format, have_nodes, have_elements;
  long elements_line;
} reader;

static int raw_reserve(reader *r, rawlist *l, int nv, long more)
{
  if (l->n + more <= l->cap) return 0;
  long cap = l->cap ? 2 * l->cap : 16;
  while (cap < l->n + more) cap *= 2;
  long *ids = NULL, *lines = NULL, *elem = NULL;
  int *tags = NULL;
  int ierr = 0;
  MF_CALL_GOTO(MF_CALLOC(r->p.ctx, (size_t)cap * (size_t)nv, &ids), fail);
  MF_CALL_GOTO(MF_CALLOC(r->p.ctx, cap, &lines), fail);
  MF_CALL_GOTO(MF_CALLOC(r->p.ctx, cap, &elem), fail);
  MF_CALL_GOTO(MF_CALLOC(r->p.ctx, cap, &tags), fail);
  if (l->n) {
    memcpy(ids, l->ids, (size_t)l->n * (size_t)nv * sizeof *ids);
    memcpy(lines, l->lines, (size_t)l->n * sizeof *lines);
    memcpy(elem, l->elem, (size_t)l->n * sizeof *elem);
    memcpy(tags, l->tags, (size_t)l->n * sizeof *tags);
  }
  free(l->ids); free(l->lines); free(l->elem); free(l->tags);
  l->ids = ids; l->lines = lines; l->elem = elem; l->tags = tags; l->cap = cap;
  return 0;
fail:
  free(ids); free(lines); free(elem); free(tags);
  return ierr;
}

static void raw_free(rawlist *l)
{
  free(l->ids); free(l->lines); free(l->elem); free(l->tags);
  memset(l, 0, sizeof *l);
}

static int nodes_reserve(reader *r, long more)
{
  if (r->n_nodes + more <= r->nodes_cap) return 0;
  long cap = r->n_nodes + more;
  double *x = NULL;
  long *id = NULL, *ln = NULL;
  int ierr = 0;
  MF_CALL_GOTO(MF_CALLOC(r->p.ctx, 3 * (size_t)cap, &x), fail);
  MF_CALL_GOTO(MF_CALLOC(r->p.ctx, cap, &id), fail);
  MF_CALL_GOTO(MF_CALLOC(r->p.ctx, cap, &ln), fail);
  if (r->n_nodes) {
    memcpy(x, r->x, 3 * (size_t)r->n_nodes * sizeof *x);
    memcpy(id, r->node_id, (size_t)r->n_nodes * sizeof *id);
    memcpy(ln, r->node_line, (size_t)r->n_nodes * sizeof *ln);
  }
  free(r->x); free(r->node_id); free(r->node_line);
  r->x = x; r->node_id = id; r->node_line = ln; r->nodes_cap = cap;
  return 0;
fail:
  free(x); free(id); free(ln);
  return ierr;
}

/* one node: id and coordinates */
static int add_node(reader *r, long id, const double xyz[3], long line)
{
  parser *p = &r->p;
  if (id < 1) return PERR(p, MF_ERR_ARGUMENT, "node id %ld out of range (ids start at 1)", id);
  if (r->dim == 2 && xyz[2] != 0.0)
    return PERR(p, MF_ERR_ARGUMENT, "node %ld has z = %g, not 0: a 3D file read as 2D?", id, xyz[2]);
  long k = r->n_nodes++;
  memcpy(r->x + 3 * k, xyz, 3 * sizeof *xyz);
  r->node_id[k] = id;
  r->node_line[k] = line;
  return 0;
}

#define MF_GMSH_HI_NODES 10 /* the most nodes of a second-order simplex (10-node tetrahedron) */
/* a second-order element must be straight: each node besides its vertices at the midpoint of an edge,
 * within MF_GMSH_STRAIGHT_TOL times its longest edge (the geometry is read affine; a curved one is refused) */
#define MF_GMSH_STRAIGHT_TOL 1e-10

/* one element of type t with its raw node ids; tag = physical tag */
static int add_element(reader *r, long elem_id, long t, const long *nodes, int tag, long line)
{
  parser *p = &r->p;
  eltype e = element_type(t);
  if (e.dim == r->dim && !e.simplex)
    return PERR(p, MF_ERR_ARGUMENT, "element %ld has type %ld (%s), not a simplex: only triangles (2D) and tetrahedra (3D) are read",
                elem_id, t, e.name);
  if (r->dim == 2 && e.dim == 3)
    return PERR(p, MF_ERR_ARGUMENT, "element %ld has type %ld (%s): a 3D file read as 2D", elem_id, t, e.name);
  rawlist *l;
  int nv;
  if (e.dim == r->dim) {
    l = &r->cells;
    nv = r->dim + 1;
  } else if (e.dim == r->dim - 1) {
    if (!e.simplex)
      return PERR(p, MF_ERR_ARGUMENT, "facet element %ld has type %ld (%s), not a simplex", elem_id, t, e.name);
    l = &r->facets;
    nv = r->dim;
  } else {
    return 0; /* points, and lines in 3D: not kept */
  }
  if (e.order > 1) { /* its other nodes, checked straight once every node is known */
    rawlist *h = &r->hi;
    MF_CALL(raw_reserve(r, h, MF_GMSH_HI_NODES, 1));
    for (int i = 0; i < MF_GMSH_HI_NODES; i++) h->ids[(size_t)h->n * MF_GMSH_HI_NODES + i] = i < e.nodes ? nodes[i] : -1;
    h->lines[h->n] = line;
    h->elem[h->n] = elem_id;
    h->tags[h->n] = (int)t;
    h->n++;
  }
  MF_CALL(raw_reserve(r, l, nv, 1));
  for (int i = 0; i < nv; i++) l->ids[(size_t)l->n * nv + i] = nodes[i]; /* vertices come first */
  l->lines[l->n] = line;
  l->elem[l->n] = elem_id;
  l->tags[l->n] = tag;
  l->n++;
  return 0;
}

/* ------------------------------------------------------------------ sections */

static int sec_format(reader *r)
{
  parser *p = &r->p;
  double v;
  long ftype, dsize;
  MF_CALL(read_double(p, "the format version", &v));
  MF_CALL(read_long(p, "the file type", &ftype));
  if (ftype != 0 && ftype != 1) return PERR(p, MF_ERR_IO, "file type %ld (0: ASCII, 1: binary)", ftype);
  MF_CALL(read_long(p, "the data size", &dsize));
  if (v == 2.2) r->version = 22;
  else if (v == 4.1) r->version = 41;
  else return PERR(p, MF_ERR_IO, "format version %g is not supported (2.2 and 4.1 are read)", v);
  if (ftype == 1) { /* then a binary int 1 on its own line: the byte order */
    if (r->version != 41) return PERR(p, MF_ERR_IO, "binary .msh 2.2 is not supported (binary 4.1 and ASCII are read)");
    if (dsize != 8) return PERR(p, MF_ERR_IO, "binary .msh with data size %ld is not supported (8 is read)", dsize);
    int one = 0;
    MF_CALL(begin_binary(p));
    MF_CALL(read_int(p, "the byte-order check", &one));
    p->binary = 0;
    if (one != 1)
      return PERR(p, MF_ERR_IO, "the binary byte-order check reads %d, not 1: another byte order, or not a binary file", one);
    r->binary = 1;
  }
  MF_CALL(expect(p, "$EndMeshFormat"));
  r->have_format = 1;
  return 0;
}

static int sec_names(reader *r)
{
  parser *p = &r->p;
  long n;
  if (r->names) return PERR(p, MF_ERR_IO, "a second $PhysicalNames section");
  MF_CALL(read_count(p, "the number of physical names", 6, &n));
  MF_CALL(MF_CALLOC(p->ctx, n, &r->names));
  for (long i = 0; i < n; i++) {
    mf_gmsh_name *nm = &r->names[i];
    MF_CALL(read_int(p, "a physical dimension", &nm->dim));
    if (nm->dim < 0 || nm->dim > 3) return PERR(p, MF_ERR_IO, "physical dimension %d out of range 0..3", nm->dim);
    MF_CALL(read_int(p, "a physical tag", &nm->tag));
    while (p->pos < p->len && (p->buf[p->pos] == ' ' || p->buf[p->pos] == '\t')) p->pos++;
    p->tok_line = p->line;
    if (p->pos >= p->len || p->buf[p->pos] != '"') return PERR(p, MF_ERR_IO, "physical name %ld: expected a quoted name", i + 1);
    p->pos++;
    size_t k = 0;
    while (p->pos < p->len && p->buf[p->pos] != '"' && p->buf[p->pos] != '\n') {
      if (k + 1 >= sizeof nm->name) return PERR(p, MF_ERR_IO, "physical name %ld longer than %zu characters", i + 1, sizeof nm->name - 1);
      nm->name[k++] = p->buf[p->pos++];
    }
    if (p->pos >= p->len || p->buf[p->pos] != '"') return PERR(p, MF_ERR_IO, "physical name %ld: missing closing quote", i + 1);
    p->pos++;
    r->n_names++;
  }
  return expect(p, "$EndPhysicalNames");
}

static int sec_entities(reader *r)
{
  parser *p = &r->p;
  long cnt[4], total = 0;
  if (r->ent) return PERR(p, MF_ERR_IO, "a second $Entities section");
  if (r->binary) MF_CALL(begin_binary(p));
  for (int d = 0; d < 4; d++) {
    MF_CALL(read_count(p, "the number of entities", 8, &cnt[d]));
    total += cnt[d];
  }
  if ((unsigned long)total > p->len / 8 + 1) return PERR(p, MF_ERR_IO, "%ld entities: more than the file can hold", total);
  MF_CALL(MF_CALLOC(p->ctx, total, &r->ent));
  for (int d = 0; d < 4; d++)
    for (long i = 0; i < cnt[d]; i++) {
      entity *e = &r->ent[r->n_ent++];
      double c;
      long np, nb;
      e->dim = d;
      MF_CALL(read_int(p, "an entity tag", &e->tag));
      for (int k = 0; k < (d == 0 ? 3 : 6); k++) MF_CALL(read_double(p, "an entity coordinate", &c));
      MF_CALL(read_count(p, "the number of physical tags", 2, &np));
      for (long k = 0; k < np; k++) {
        int t;
        MF_CALL(read_int(p, "a physical tag", &t));
        if (k == 0) e->phys = t;
      }
      if (d > 0) {
        MF_CALL(read_count(p, "the number of bounding entities", 2, &nb));
        int bt;
        for (long k = 0; k < nb; k++) MF_CALL(read_int(p, "a bounding entity", &bt));
      }
    }
  p->binary = 0;
  return expect(p, "$EndEntities");
}

static int sec_nodes(reader *r)
{
  parser *p = &r->p;
  if (r->have_nodes) return PERR(p, MF_ERR_IO, "a second $Nodes section");
  r->have_nodes = 1;
  double xyz[3];
  if (r->version == 22) {
    long n;
    MF_CALL(read_count(p, "the number of nodes", 8, &n));
    MF_CALL(nodes_reserve(r, n));
    for (long i = 0; i < n; i++) {
      long id;
      MF_CALL(read_long(p, "a node id", &id));
      long line = p->tok_line;
      for (int k = 0; k < 3; k++) MF_CALL(read_double(p, "a node coordinate", &xyz[k]));
      MF_CALL(add_node(r, id, xyz, line));
    }
  } else {
    long nb, n, minid, maxid, read = 0;
    if (r->binary) MF_CALL(begin_binary(p));
    MF_CALL(read_count(p, "the number of node blocks", 8, &nb));
    MF_CALL(read_count(p, "the number of nodes", 8, &n));
    MF_CALL(read_long(p, "the smallest node id", &minid));
    MF_CALL(read_long(p, "the largest node id", &maxid));
    MF_CALL(nodes_reserve(r, n));
    for (long b = 0; b < nb; b++) {
      int edim, etag, param;
      long m;
      MF_CALL(read_int(p, "an entity dimension", &edim));
      MF_CALL(read_int(p, "an entity tag", &etag));
      MF_CALL(read_int(p, "the parametric flag", &param));
      MF_CALL(read_count(p, "the number of nodes in the block", 8, &m));
      if (edim < 0 || edim > 3) return PERR(p, MF_ERR_IO, "entity dimension %d out of range 0..3", edim);
      if (m > n - read) return PERR(p, MF_ERR_IO, "node block of %ld nodes: more than the %ld nodes announced", m, n);
      long first = r->n_nodes;
      for (long i = 0; i < m; i++) {
        long id;
        MF_CALL(read_long(p, "a node id", &id));
        if (id < minid || id > maxid)
          return PERR(p, MF_ERR_ARGUMENT, "node id %ld out of the announced range %ld..%ld", id, minid, maxid);
        r->node_id[first + i] = id;
        r->node_line[first + i] = p->tok_line;
      }
      for (long i = 0; i < m; i++) {
        for (int k = 0; k < 3; k++) MF_CALL(read_double(p, "a node coordinate", &xyz[k]));
        double u;
        if (param)
          for (int k = 0; k < edim; k++) MF_CALL(read_double(p, "a parametric coordinate", &u));
        long id = r->node_id[first + i];
        MF_CALL(add_node(r, id, xyz, r->node_line[first + i]));
      }
      read += m;
    }
    if (read != n) return PERR(p, MF_ERR_IO, "the node blocks hold %ld nodes, %ld announced", read, n);
  }
  p->binary = 0;
  return expect(p, "$EndNodes");
}

static int entity_phys(const reader *r, int dim, int tag)
{
  for (long i = 0; i < r->n_ent; i++)
    if (r->ent[i].dim == dim && r->ent[i].tag == tag) return r->ent[i].phys;
  return 0;
}

static int sec_elements(reader *r)
{
  parser *p = &r->p;
  if (r->have_elements) return PERR(p, MF_ERR_IO, "a second $Elements section");
  r->have_elements = 1;
  long nodes[32];
  if (r->version == 22) {
    long n;
    MF_CALL(read_count(p, "the number of elements", 8, &n));
    for (long i = 0; i < n; i++) {
      long id, t, ntags;
      int tag = 0;
      MF_CALL(read_long(p, "an element id", &id));
      long line = p->tok_line;
      MF_CALL(read_long(p, "an element type", &t));
      eltype e = element_type(t);
      if (!e.name) return PERR(p, MF_ERR_ARGUMENT, "element %ld has unknown type %ld", id, t);
      MF_CALL(read_count(p, "the number of element tags", 2, &ntags));
      for (long k = 0; k < ntags; k++) {
        int v;
        MF_CALL(read_int(p, "an element tag", &v));
        if (k == 0) tag = v;
      }
      for (int k = 0; k < e.nodes; k++) MF_CALL(read_long(p, "an element node", &nodes[k]));
      MF_CALL(add_element(r, id, t, nodes, tag, line));
    }
  } else {
    long nb, n, minid, maxid, read = 0;
    if (r->binary) MF_CALL(begin_binary(p));
    MF_CALL(read_count(p, "the number of element blocks", 8, &nb));
    MF_CALL(read_count(p, "the number of elements", 4, &n));
    MF_CALL(read_long(p, "the smallest element id", &minid));
    MF_CALL(read_long(p, "the largest element id", &maxid));
    for (long b = 0; b < nb; b++) {
      int edim, etag, ti;
      long t, m;
      MF_CALL(read_int(p, "an entity dimension", &edim));
      MF_CALL(read_int(p, "an entity tag", &etag));
      MF_CALL(read_int(p, "an element type", &ti));
      t = ti;
      eltype e = element_type(t);
      if (!e.name) return PERR(p, MF_ERR_ARGUMENT, "element block %ld has unknown element type %ld", b + 1, t);
      MF_CALL(read_count(p, "the number of elements in the block", 4, &m));
      if (m > n - read) return PERR(p, MF_ERR_IO, "element block of %ld elements: more than the %ld elements announced", m, n);
      int tag = entity_phys(r, edim, etag);
      for (long i = 0; i < m; i++) {
        long id;
        MF_CALL(read_long(p, "an element id", &id));
        long line = p->tok_line;
        for (int k = 0; k < e.nodes; k++) MF_CALL(read_long(p, "an element node", &nodes[k]));
        MF_CALL(add_element(r, id, t, nodes, tag, line));
      }
      read += m;
    }
    if (read != n) return PERR(p, MF_ERR_IO, "the element blocks hold %ld elements, %ld announced", read, n);
  }
  p->binary = 0;
  MF_CALL(expect(p, "$EndElements"));
  r->elements_line = p->tok_line;
  return 0;
}

/* skip an unknown section $Name up to $EndName */
static int sec_skip(reader *r, const char *name)
{
  parser *p = &r->p;
  char end[80];
  snprintf(end, sizeof end, "$End%s", name + 1);
  long start = p->tok_line;
  while (next_token(p))
    if (!strcmp(p->tok, end)) return 0;
  return PERR(p, MF_ERR_IO, "unexpected end of file: section %s (line %ld) has no %s", name, start, end);
}

/* ------------------------------------------------------------------ checks after reading */

typedef struct {
  long id, index;
} idpair;

static int cmp_idpair(const void *a, const void *b)
{
  const idpair *x = a, *y = b;
  return (x->id > y->id) - (x->id < y->id);
}

static long find_node(const idpair *s, long n, long id)
{
  long lo = 0, hi = n - 1;
  while (lo <= hi) {
    long mid = lo + (hi - lo) / 2;
    if (s[mid].id == id) return s[mid].index;
    if (s[mid].id < id) lo = mid + 1;
    else hi = mid - 1;
  }
  return -1;
}

/* resolve raw ids of list l (nv per entry) into out (allocated) */
static int resolve(reader *r, const idpair *s, const rawlist *l, int nv, const char *what, long **out)
{
  parser *p = &r->p;
  MF_CALL(MF_CALLOC(p->ctx, (size_t)l->n * nv, out));
  for (long c = 0; c < l->n; c++)
    for (int i = 0; i < nv; i++) {
      long id = l->ids[(size_t)c * nv + i];
      long k = find_node(s, r->n_nodes, id);
      if (k < 0) {
        p->tok_line = l->lines[c];
        return PERR(p, MF_ERR_ARGUMENT, "%s references node %ld, which is not defined in $Nodes", what, id);
      }
      (*out)[(size_t)c * nv + i] = k;
    }
  return 0;
}

/* every second-order element straight (its edge nodes at the midpoints of its edges), else refused */
static int check_straight(reader *r, const idpair *s)
{
  parser *p = &r->p;
  for (long c = 0; c < r->hi.n; c++) {
    const long *ids = r->hi.ids + (size_t)c * MF_GMSH_HI_NODES;
    const eltype e = element_type(r->hi.tags[c]);
    const int nvert = e.dim + 1;
    const double *x[MF_GMSH_HI_NODES];
    p->tok_line = r->hi.lines[c];
    for (int i = 0; i < e.nodes; i++) {
      const long k = find_node(s, r->n_nodes, ids[i]);
      if (k < 0) return PERR(p, MF_ERR_ARGUMENT, "element %ld references node %ld, which is not defined in $Nodes",
                             r->hi.elem[c], ids[i]);
      x[i] = r->x + 3 * k;
    }
    double h = 0.0;
    for (int a = 0; a < nvert; a++)
      for (int b = a + 1; b < nvert; b++) {
        double l2 = 0.0;
        for (int k = 0; k < 3; k++) l2 += (x[b][k] - x[a][k]) * (x[b][k] - x[a][k]);
        h = fmax(h, sqrt(l2));
      }
    for (int i = nvert; i < e.nodes; i++) {
      double off = INFINITY; /* the distance to the nearest edge midpoint */
      for (int a = 0; a < nvert; a++)
        for (int b = a + 1; b < nvert; b++) {
          double d2 = 0.0;
          for (int k = 0; k < 3; k++) {
            const double d = x[i][k] - 0.5 * (x[a][k] + x[b][k]);
            d2 += d * d;
          }
          off = fmin(off, sqrt(d2));
        }
      if (!(off <= MF_GMSH_STRAIGHT_TOL * h))
        return PERR(p, MF_ERR_ARGUMENT,
                    "element %ld (%s) is curved: its node %ld lies %g from every edge's midpoint (longest edge %g); "
                    "second-order geometry is not used (the cells are affine): save the mesh with first-order or "
                    "straight elements",
                    r->hi.elem[c], e.name, ids[i], off, h);
    }
  }
  return 0;
}

static int check_cells(reader *r, const long *cells)
{
  parser *p = &r->p;
  int d = r->dim;
  for (long c = 0; c < r->cells.n; c++) {
    const double *v[4];
    for (int i = 0; i <= d; i++) v[i] = r->x + 3 * cells[(size_t)c * (d + 1) + i];
    double e[3][3], h = 0;
    for (int i = 0; i < d; i++)
      for (int k = 0; k < 3; k++) e[i][k] = v[i + 1][k] - v[0][k];
    for (int i = 0; i <= d; i++) /* the longest edge */
      for (int j = i + 1; j <= d; j++) {
        double l2 = 0;
        for (int k = 0; k < 3; k++) l2 += (v[j][k] - v[i][k]) * (v[j][k] - v[i][k]);
        if (l2 > h) h = l2;
      }
    h = sqrt(h);
    double det;
    if (d == 2) det = e[0][0] * e[1][1] - e[1][0] * e[0][1];
    else
      det = e[0][0] * (e[1][1] * e[2][2] - e[1][2] * e[2][1]) - e[0][1] * (e[1][0] * e[2][2] - e[1][2] * e[2][0]) +
            e[0][2] * (e[1][0] * e[2][1] - e[1][1] * e[2][0]);
    double scale = d == 2 ? h * h : h * h * h;
    p->tok_line = r->cells.lines[c];
    if (!isfinite(h) || !isfinite(det)) { /* finite coordinates whose differences or products overflow */
      double big = 0;
      for (int i = 0; i <= d; i++)
        for (int k = 0; k < d; k++) big = fmax(big, fabs(v[i][k]));
      return PERR(p, MF_ERR_ARGUMENT,
                  "the coordinates of this %s overflow: its edge lengths or |det J| are not finite in double precision "
                  "(coordinates up to %g in magnitude); rescale the mesh",
                  d == 2 ? "triangle" : "tetrahedron", big);
    }
    if (!(fabs(det) > MF_GMSH_DEGENERATE_TOL * scale))
      return PERR(p, MF_ERR_ARGUMENT, "degenerate %s: |det| = %g <= %g * (longest edge %g)^%d",
                  d == 2 ? "triangle" : "tetrahedron", fabs(det), MF_GMSH_DEGENERATE_TOL, h, d);
    if (det < 0)
      return PERR(p, MF_ERR_ARGUMENT, "inverted %s (negative orientation, det = %g)", d == 2 ? "triangle" : "tetrahedron", det);
  }
  return 0;
}

static int finish(reader *r, mf_gmsh_mesh *out)
{
  parser *p = &r->p;
  int ierr = 0;
  idpair *s = NULL;
  if (!r->have_format) return PERR(p, MF_ERR_IO, "no $MeshFormat section: not a .msh file");
  if (!r->have_nodes) return PERR(p, MF_ERR_IO, "no $Nodes section");
  if (!r->have_elements) return PERR(p, MF_ERR_IO, "no $Elements section");
  p->tok_line = r->elements_line;
  if (r->cells.n == 0)
    return PERR(p, MF_ERR_ARGUMENT, "no %s in the file%s", r->dim == 2 ? "triangles" : "tetrahedra",
                r->dim == 3 ? ": a 2D file read as 3D?" : "");
  MF_CALL(MF_CALLOC(p->ctx, r->n_nodes, &s));
  for (long i = 0; i < r->n_nodes; i++) s[i] = (idpair){r->node_id[i], i};
  qsort(s, (size_t)r->n_nodes, sizeof *s, cmp_idpair);
  for (long i = 1; i < r->n_nodes; i++)
    if (s[i].id == s[i - 1].id) {
      long a = r->node_line[s[i - 1].index], b = r->node_line[s[i].index];
      p->tok_line = a > b ? a : b;
      MF_CHECK_GOTO(0, p->ctx, MF_ERR_ARGUMENT, done, "%s:%ld: duplicate node id %ld (also on line %ld)", p->name,
                    p->tok_line, s[i].id, a < b ? a : b);
    }
  MF_CALL_GOTO(resolve(r, s, &r->cells, r->dim + 1, "cell", &out->cells), done);
  MF_CALL_GOTO(resolve(r, s, &r->facets, r->dim, "facet", &out->facets), done);
  MF_CALL_GOTO(check_cells(r, out->cells), done);
  MF_CALL_GOTO(check_straight(r, s), done);
  out->dim = r->dim;
  out->n_nodes = r->n_nodes;
  out->x = r->x; r->x = NULL;
  out->node_id = r->node_id; r->node_id = NULL;
  out->n_cells = r->cells.n;
  out->cell_tag = r->cells.tags; r->cells.tags = NULL;
  out->cell_id = r->cells.elem; r->cells.elem = NULL;
  out->cell_line = r->cells.lines; r->cells.lines = NULL;
  out->n_facets = r->facets.n;
  out->facet_tag = r->facets.tags; r->facets.tags = NULL;
  out->n_names = r->n_names;
  out->names = r->names; r->names = NULL;
done:
  free(s);
  return ierr;
}

/* the file read as dimension dim; probe: a file without cells of that dimension returns MF_GMSH_NONE
 * with no error recorded (the caller tries the other dimension) */
#define MF_GMSH_NONE (-1)
static int read_dim(mf_context ctx, const char *buf, size_t len, const char *name, int dim, int probe,
                    mf_gmsh_mesh *out)
{
  reader r;
  memset(&r, 0, sizeof r);
  r.p = (parser){.ctx = ctx, .buf = buf, .name = name ? name : "(buffer)", .len = len, .line = 1, .tok_line = 1};
  r.dim = dim;
  parser *p = &r.p;
  int ierr = 0;
  while (next_token(p)) {
    if (p->tok[0] != '$' || p->tok_long) {
      ierr = PERR(p, MF_ERR_IO, "expected a section ($Name), found '%s'", p->tok);
      break;
    }
    if (!r.have_format && strcmp(p->tok, "$MeshFormat")) {
      ierr = PERR(p, MF_ERR_IO, "the file does not start with $MeshFormat: not a .msh file");
      break;
    }
    if (!strcmp(p->tok, "$MeshFormat")) {
      if (r.have_format) ierr = PERR(p, MF_ERR_IO, "a second $MeshFormat section");
      else ierr = sec_format(&r);
    } else if (!strcmp(p->tok, "$PhysicalNames")) ierr = sec_names(&r);
    else if (!strcmp(p->tok, "$Entities") && r.version == 41) ierr = sec_entities(&r);
    else if (!strcmp(p->tok, "$Nodes")) ierr = sec_nodes(&r);
    else if (!strcmp(p->tok, "$Elements")) ierr = sec_elements(&r);
    else if (!strncmp(p->tok, "$End", 4)) ierr = PERR(p, MF_ERR_IO, "unexpected %s outside its section", p->tok);
    else {
      char sec[64];
      snprintf(sec, sizeof sec, "%s", p->tok);
      ierr = sec_skip(&r, sec);
    }
    if (ierr) break;
  }
  if (!ierr && probe && r.have_format && r.have_nodes && r.have_elements && r.cells.n == 0) ierr = MF_GMSH_NONE;
  if (!ierr) ierr = finish(&r, out);
  free(r.x); free(r.node_id); free(r.node_line);
  raw_free(&r.cells); raw_free(&r.facets); raw_free(&r.hi);
  free(r.ent); free(r.names);
  if (ierr) mf_gmsh_free(out);
  return ierr;
}

int mf_gmsh_read_buffer(mf_context ctx, const char *buf, size_t len, const char *name, int dim, mf_gmsh_mesh *out)
{
  MF_CHECK(out, ctx, MF_ERR_NULL, "mf_gmsh_read: out is NULL");
  memset(out, 0, sizeof *out);
  MF_CHECK(buf || len == 0, ctx, MF_ERR_NULL, "mf_gmsh_read: buffer is NULL");
  MF_CHECK(dim == 0 || dim == 2 || dim == 3, ctx, MF_ERR_ARGUMENT, "mf_gmsh_read: dim %d (2, 3, or 0: the file's)", dim);
  if (dim) return read_dim(ctx, buf, len, name, dim, 0, out);
  /* the file's dimension: 3 where it has tetrahedra, else 2 (its triangles; a 2D file read as 3D has none) */
  const int ierr = read_dim(ctx, buf, len, name, 3, 1, out);
  return ierr == MF_GMSH_NONE ? read_dim(ctx, buf, len, name, 2, 0, out) : ierr;
}

int mf_gmsh_read(mf_context ctx, const char *path, int dim, mf_gmsh_mesh *out)
{
  MF_CHECK(out, ctx, MF_ERR_NULL, "mf_gmsh_read: out is NULL");
  memset(out, 0, sizeof *out);
  MF_CHECK(path, ctx, MF_ERR_NULL, "mf_gmsh_read: path is NULL");
  /* what is not a regular file is named before it is opened: a folder opens and reports a size of
   * LONG_MAX, a named pipe blocks the open until a writer comes; character devices read as empty */
  struct stat sb;
  if (stat(path, &sb) == 0) {
    MF_CHECK(!S_ISDIR(sb.st_mode), ctx, MF_ERR_IO, "%s:0: is a directory, not a .msh file", path);
    MF_CHECK(!S_ISFIFO(sb.st_mode) && !S_ISSOCK(sb.st_mode), ctx, MF_ERR_IO,
             "%s:0: is a %s, not a regular file (.msh files are read whole, from regular files)", path,
             S_ISFIFO(sb.st_mode) ? "named pipe (FIFO)" : "socket");
  }
  FILE *f = fopen(path, "rb");
  MF_CHECK(f, ctx, MF_ERR_IO, "%s:0: cannot open: %s", path, strerror(errno));
  char *buf = NULL;
  long size = -1;
  int ierr = 0;
  if (fseek(f, 0, SEEK_END) == 0) size = ftell(f);
  MF_CHECK_GOTO(size >= 0 && fseek(f, 0, SEEK_SET) == 0, ctx, MF_ERR_IO, done, "%s:0: cannot read (not a regular file?)", path);
  MF_CALL_GOTO(mf_malloc(ctx, (size_t)size + 1, &buf), done);
  MF_CHECK_GOTO(fread(buf, 1, (size_t)size, f) == (size_t)size, ctx, MF_ERR_IO, done, "%s:0: read error", path);
  buf[size] = 0;
  ierr = mf_gmsh_read_buffer(ctx, buf, (size_t)size, path, dim, out);
done:
  free(buf);
  fclose(f);
  return ierr;
}

void mf_gmsh_free(mf_gmsh_mesh *m)
{
  if (!m) return;
  free(m->x); free(m->node_id); free(m->cells); free(m->cell_tag); free(m->cell_id); free(m->cell_line);
  free(m->facets); free(m->facet_tag); free(m->names);
  memset(m, 0, sizeof *m);
}
