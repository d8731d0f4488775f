/* source.c -- physics given as C source (mf_physics_set_source, mf_physics_set_source_file): the text
 * and the names of its functions, kept with every operator made from it; the on-disk cache of compiled
 * code shared by the backends (a key per source, names, family, shape, architecture and library
 * version; files written whole, then renamed, so that a reader never sees half a file); and the cpu
 * backend's compile: the system C compiler into a shared object, loaded with dlopen.
 *
 * The compiled object holds a table of the six functions' addresses (a glue line appended to the
 * user's text), so that the functions may be static and only one symbol is looked up. */
#include "physics/mf_physics_impl.h"

#include <dlfcn.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#ifndef MF_LIB_VERSION
#define MF_LIB_VERSION "0"
#endif

static const char *const fname[6] = {"f0", "f1", "g0", "g1", "g2", "g3"};

struct mf_phys_src_s {
  int refs;
  char *text;   /* the source */
  char *origin; /* its file, or "physics source" for a string: the compilers' messages name it */
  char names[6][MF_PHYS_MAX_NAME]; /* the functions of f0, f1, g0..g3 ("" : none) */
};

void mf_phys_retain(mf_phys *ph)
{
  if (ph->src) ph->src->refs++;
}

void mf_phys_release(mf_phys *ph)
{
  struct mf_phys_src_s *s = ph->src;
  ph->src = NULL;
  if (!s || --s->refs > 0) return;
  free(s->text);
  free(s->origin);
  free(s);
}

const char *mf_phys_source_text(const mf_phys *ph) { return ph->src ? ph->src->text : NULL; }
const char *mf_phys_source_origin(const mf_phys *ph) { return ph->src ? ph->src->origin : NULL; }
const char *mf_phys_source_name(const mf_phys *ph, int t) { return ph->src && ph->src->names[t][0] ? ph->src->names[t] : NULL; }

/* "g3=stiffness f1=flux" (spaces or commas between) into names[k] for the kinds kind[0..nk) ("" where not
 * named); 0 or MF_ERR_ARGUMENT (which: the kinds, example: an entry, for the message) */
static int parse_list(mf_context ctx, const char *spec, const char *const *kind, int nk, char (*names)[MF_PHYS_MAX_NAME],
                      const char *which, const char *example)
{
  memset(names, 0, (size_t)nk * MF_PHYS_MAX_NAME);
  const char *p = spec;
  int any = 0;
  while (*p) {
    while (*p == ' ' || *p == ',' || *p == '\t' || *p == '\n') p++;
    if (!*p) break;
    const char *eq = strchr(p, '=');
    int t = -1;
    for (int k = 0; k < nk && eq; k++)
      if ((size_t)(eq - p) == 2 && !strncmp(p, kind[k], 2)) t = k;
    MF_CHECK(t >= 0, ctx, MF_ERR_ARGUMENT,
             "functions '%s': expected entries like %s (%s, '=' and a C name), at '%.20s'", spec, example, which, p);
    const char *n = eq + 1, *e = n;
    while (*e == '_' || (*e >= 'a' && *e <= 'z') || (*e >= 'A' && *e <= 'Z') || (*e >= '0' && *e <= '9')) e++;
    MF_CHECK(e > n && !(*n >= '0' && *n <= '9') && (size_t)(e - n) < MF_PHYS_MAX_NAME, ctx, MF_ERR_ARGUMENT,
             "functions '%s': '%.*s' after %s= is not a C name (letters, digits, _; at most %d)", spec,
             (int)(e - n > 40 ? 40 : e - n), n, kind[t], MF_PHYS_MAX_NAME - 1);
    MF_CHECK(!names[t][0], ctx, MF_ERR_ARGUMENT, "functions '%s': %s named twice", spec, kind[t]);
    memcpy(names[t], n, (size_t)(e - n));
    any = 1;
    p = e;
    MF_CHECK(!*p || *p == ' ' || *p == ',' || *p == '\t' || *p == '\n', ctx, MF_ERR_ARGUMENT,
             "functions '%s': unexpected '%c' after %s=%s", spec, *p, kind[t], names[t]);
  }
  MF_CHECK(any, ctx, MF_ERR_ARGUMENT, "functions '%s' name no function (e.g. \"%s\")", spec, example);
  return 0;
}

static int parse_functions(mf_context ctx, const char *spec, char names[6][MF_PHYS_MAX_NAME])
{
  return parse_list(ctx, spec, fname, 6, names, "f0, f1, g0, g1, g2 or g3", "g3=name");
}

int mf_phys_boundary_names(mf_context ctx, const char *spec, char names[2][MF_PHYS_MAX_NAME])
{
  static const char *const bkind[2] = {"f0", "g0"};
  return parse_list(ctx, spec, bkind, 2, names, "f0 or g0", "f0=name");
}

int mf_phys_has_boundary_source(const mf_phys *ph)
{
  for (int t = 0; t < ph->nbound; t++)
    if (ph->bsrc[t]) return 1;
  return 0;
}

int mf_phys_source_set(mf_phys *obj, mf_context ctx, const char *text, size_t len, const char *origin,
                       const char *functions)
{
  struct mf_phys_src_s *s = NULL;
  char names[6][MF_PHYS_MAX_NAME];
  MF_CALL(parse_functions(ctx, functions, names));
  MF_CALL(MF_CALLOC(ctx, 1, &s));
  s->refs = 1;
  memcpy(s->names, names, sizeof names);
  int ierr = MF_CALLOC(ctx, len + 1, &s->text);
  if (!ierr) ierr = MF_CALLOC(ctx, strlen(origin) + 1, &s->origin);
  if (ierr) {
    free(s->text);
    free(s);
    return ierr;
  }
  memcpy(s->text, text, len);
  strcpy(s->origin, origin);
  mf_phys_release(obj);
  obj->src = s;
  /* the functions come from the source now (compiled where an operator is made) */
  for (int t = 0; t < 2; t++) obj->f[t] = NULL;
  for (int t = 0; t < 4; t++) obj->g[t] = NULL;
  obj->from_source = 1;
  for (int t = 0; t < 6; t++) obj->src_has[t] = names[t][0] != 0;
  return 0;
}

/* ------------------------------------------------------------------ the cache */

int mf_context_set_cache_dir(mf_context ctx, const char *dir)
{
  MF_CHECK(ctx, NULL, MF_ERR_NULL, "context is NULL");
  MF_CHECK(!dir || (dir[0] && strlen(dir) < 900), ctx, MF_ERR_ARGUMENT, "cache directory '%s' is empty or too long",
           dir ? dir : "");
  char *copy = NULL;
  if (dir) {
    MF_CALL(MF_CALLOC(ctx, strlen(dir) + 1, &copy));
    strcpy(copy, dir);
  }
  free(ctx->cache_dir);
  ctx->cache_dir = copy;
  ctx->cache_warned = 0;
  return 0;
}

int mf_context_jit_counts(mf_context ctx, int *compiled, int *loaded)
{
  MF_CHECK(ctx, NULL, MF_ERR_NULL, "context is NULL");
  if (compiled) *compiled = ctx->jit_compiled;
  if (loaded) *loaded = ctx->jit_loaded;
  return 0;
}

/* mkdir -p; 0 or errno */
static int make_dirs(const char *path)
{
  char buf[1024];
  snprintf(buf, sizeof buf, "%s", path);
  for (char *p = buf + 1; *p; p++)
    if (*p == '/') {
      *p = 0;
      if (mkdir(buf, 0755) && errno != EEXIST) return errno;
      *p = '/';
    }
  if (mkdir(buf, 0755) && errno != EEXIST) return errno;
  return 0;
}

int mf_jit_cache_dir(mf_context ctx, char *dir, size_t n)
{
  const char *env = getenv("MFREE_CACHE_DIR"), *xdg = getenv("XDG_CACHE_HOME"), *home = getenv("HOME");
  if (ctx->cache_dir) snprintf(dir, n, "%s", ctx->cache_dir);
  else if (env && env[0]) snprintf(dir, n, "%s", env);
  else if (xdg && xdg[0]) snprintf(dir, n, "%s/mfree", xdg);
  else if (home && home[0]) snprintf(dir, n, "%s/.cache/mfree", home);
  else snprintf(dir, n, "/tmp/mfree-cache-%d", (int)getuid());
  int e = make_dirs(dir);
  if (!e && access(dir, W_OK | X_OK)) e = errno;
  if (e) {
    if (!ctx->cache_warned && ctx->rank == 0)
      fprintf(stderr, "mfree: cache directory %s cannot be written (%s): physics are compiled without caching\n", dir,
              strerror(e));
    ctx->cache_warned = 1;
    return e;
  }
  return 0;
}

void mf_jit_key(const char *const *parts, int nparts, char key[17])
{
  uint64_t h = 1469598103934665603ull; /* FNV-1a, 64 bits, over the parts and a separator after each */
  for (int i = 0; i < nparts; i++) {
    for (const unsigned char *p = (const unsigned char *)(parts[i] ? parts[i] : ""); *p; p++) h = (h ^ *p) * 1099511628211ull;
    h = (h ^ 0xffu) * 1099511628211ull;
  }
  snprintf(key, 17, "%016llx", (unsigned long long)h);
}

/* FNV-1a of n bytes */
static uint64_t bytes_hash(const void *data, size_t n)
{
  uint64_t h = 1469598103934665603ull;
  for (size_t i = 0; i < n; i++) h = (h ^ ((const unsigned char *)data)[i]) * 1099511628211ull;
  return h;
}

/* write whole, then rename */
static int write_file(const char *dir, const char *name, const void *data, size_t n)
{
  char tmp[1200], path[1200];
  snprintf(path, sizeof path, "%s/%s", dir, name);
  snprintf(tmp, sizeof tmp, "%s/.%s.%d.tmp", dir, name, (int)getpid());
  FILE *f = fopen(tmp, "wb");
  if (!f) return errno ? errno : EIO;
  const size_t w = fwrite(data, 1, n, f);
  const int c = fclose(f);
  if (w != n || c || rename(tmp, path)) {
    const int e = errno ? errno : EIO;
    unlink(tmp);
    return e;
  }
  return 0;
}

static int read_file(const char *path, void **data, size_t *n)
{
  *data = NULL;
  *n = 0;
  FILE *f = fopen(path, "rb");
  if (!f) return 0;
  int ok = !fseek(f, 0, SEEK_END);
  const long len = ok ? ftell(f) : -1;
  ok = ok && len > 0 && !fseek(f, 0, SEEK_SET);
  unsigned char *buf = ok ? malloc((size_t)len + 1) : NULL;
  ok = buf && fread(buf, 1, (size_t)len, f) == (size_t)len;
  fclose(f);
  if (!ok) {
    free(buf);
    return -1;
  }
  buf[len] = 0;
  *data = buf;
  *n = (size_t)len;
  return 1;
}

/* An entry is its file and NAME.sum ("size hash"): the entry first, then its sum, so that a sum that
 * matches is never older than its entry. */
int mf_jit_cache_write(const char *dir, const char *name, const void *data, size_t n)
{
  char sum[64], sname[300];
  snprintf(sum, sizeof sum, "%zu %016llx\n", n, (unsigned long long)bytes_hash(data, n));
  snprintf(sname, sizeof sname, "%s.sum", name);
  int e = write_file(dir, name, data, n);
  if (!e) e = write_file(dir, sname, sum, strlen(sum));
  return e;
}

int mf_jit_cache_read(const char *dir, const char *name, void **data, size_t *n)
{
  char path[1200], spath[1200];
  snprintf(path, sizeof path, "%s/%s", dir, name);
  snprintf(spath, sizeof spath, "%s/%s.sum", dir, name);
  void *sum = NULL;
  size_t ns = 0;
  const int rf = read_file(path, data, n);
  if (rf == 0) return 0; /* no entry */
  const int rs = read_file(spath, &sum, &ns);
  char want[64] = "";
  if (rf > 0) snprintf(want, sizeof want, "%zu %016llx\n", *n, (unsigned long long)bytes_hash(*data, *n));
  const int ok = rf > 0 && rs > 0 && !strcmp((const char *)sum, want);
  free(sum);
  if (ok) return 1;
  free(*data); /* corrupt, half written or stale: the caller compiles again */
  *data = NULL;
  *n = 0;
  return -1;
}

void mf_jit_cache_remove(const char *dir, const char *name)
{
  char path[1200];
  snprintf(path, sizeof path, "%s/%s", dir, name);
  unlink(path);
  snprintf(path, sizeof path, "%s/%s.sum", dir, name);
  unlink(path);
}

/* ------------------------------------------------------------------ the cpu backend's compile */

static void close_object(void *h) { dlclose(h); }

/* The function table of a loaded object into ph; 0, or 1 where the object lacks it (stale, corrupt). */
static int take_table(void *h, mf_phys *ph)
{
  void *const *table = (void *const *)dlsym(h, "mfree_physics_table_");
  if (!table) return 1;
  for (int t = 0; t < 6; t++) {
    if (!ph->src_has[t]) continue;
    if (!table[t]) return 1;
  }
  for (int t = 0; t < ph->nbound; t++)
    for (int w = 0; w < 2; w++)
      if (ph->bsrc[t] && ph->bname[t][w][0] && !table[6 + 2 * t + w]) return 1;
  for (int t = 0; t < 2; t++) ph->f[t] = ph->src_has[t] ? (mf_phys_fn)table[t] : NULL;
  for (int t = 0; t < 4; t++) ph->g[t] = ph->src_has[2 + t] ? (mf_phys_fn)table[2 + t] : NULL;
  for (int t = 0; t < ph->nbound; t++)
    if (ph->bsrc[t]) {
      ph->bf0[t] = ph->bname[t][0][0] ? (mf_phys_bfn)table[6 + 2 * t] : NULL;
      ph->bg0[t] = ph->bname[t][1][0] ? (mf_phys_bfn)table[6 + 2 * t + 1] : NULL;
    }
  return 0;
}

/* The compiler's command and the file names (in dir). */
static const char *compiler(void)
{
  const char *cc = getenv("MFREE_CC");
  if (!cc || !cc[0]) cc = getenv("CC");
  return cc && cc[0] ? cc : "cc";
}

/* Runs the compiler on the source (with the glue) into so_path; the compiler's messages into *log
 * (malloc'd). Returns its exit status (-1: not run). */
static int run_compiler(const mf_phys *ph, const char *dir, const char *stem, const char *so_path, char **log)
{
  char src[1200], logp[1200], cmd[4000];
  snprintf(src, sizeof src, "%s/%s.c", dir, stem);
  snprintf(logp, sizeof logp, "%s/%s.log", dir, stem);
  *log = NULL;
  FILE *f = fopen(src, "w");
  if (!f) return -1;
  /* the user's lines keep their numbers and file in the compiler's messages */
  fprintf(f, "#line 1 \"%s\"\n%s\n#line 1 \"mfree glue\"\n", ph->src->origin, ph->src->text);
  for (int t = 0; t < 6; t++)
    if (ph->src->names[t][0]) fprintf(f, "void %s(int, int, const double *, const double *, const double *, const double *, double *);\n",
                                      ph->src->names[t]);
  /* then the boundary terms' given as source: f0, g0 of term t at 6 + 2 t, 7 + 2 t */
  for (int t = 0; t < ph->nbound; t++)
    for (int w = 0; w < 2; w++)
      if (ph->bsrc[t] && ph->bname[t][w][0])
        fprintf(f, "void %s(int, int, const double *, const double *, const double *, const double *, double *);\n",
                ph->bname[t][w]);
  fprintf(f, "void *mfree_physics_table_[%d] = {", 6 + 2 * MF_PHYS_MAX_BOUNDARY);
  for (int t = 0; t < 6; t++) fprintf(f, "%s%s%s", t ? ", " : "", ph->src->names[t][0] ? "(void *)" : "0", ph->src->names[t]);
  for (int t = 0; t < MF_PHYS_MAX_BOUNDARY; t++)
    for (int w = 0; w < 2; w++) {
      const int named = t < ph->nbound && ph->bsrc[t] && ph->bname[t][w][0];
      fprintf(f, ", %s%s", named ? "(void *)" : "0", named ? ph->bname[t][w] : "");
    }
  fprintf(f, "};\n");
  fclose(f);
  snprintf(cmd, sizeof cmd, "%s -O2 -fPIC -shared -std=gnu11 -Wl,-z,defs -o '%s' '%s' -lm > '%s' 2>&1", compiler(), so_path,
           src, logp);
  int rc = system(cmd);
  rc = rc == -1 ? -1 : WIFEXITED(rc) ? WEXITSTATUS(rc) : -1;
  FILE *lf = fopen(logp, "rb");
  if (lf) {
    char *buf = calloc(4097, 1);
    if (buf) fread(buf, 1, 4096, lf);
    fclose(lf);
    *log = buf;
  }
  unlink(src);
  unlink(logp);
  return rc;
}

/* The compile's failure: the compiler's own messages (file:line), cut to what a message holds. */
static int compile_error(mf_context ctx, const mf_phys *ph, int rc, const char *log)
{
  if (rc < 0)
    return mf_error_set(ctx, MF_ERR_IO, __FILE__, __LINE__, __func__,
                        "the physics source (%s) could not be compiled: the C compiler '%s' could not be run",
                        ph->src->origin, compiler());
  char cut[700];
  snprintf(cut, sizeof cut, "%s", log && log[0] ? log : "(no message)");
  return mf_error_set(ctx, MF_ERR_ARGUMENT, __FILE__, __LINE__, __func__,
                      "the physics source did not compile ('%s' exited with %d):\n%s", compiler(), rc, cut);
}

int mf_phys_compile_cpu(mf_context ctx, mf_phys *ph)
{
  if (!ph->from_source) return 0;
  const double t0 = mf_phase_begin(ctx);
  char dir[1024], key[17], name[64], so[1200];
  const char *parts[10 + 2 * MF_PHYS_MAX_BOUNDARY] = {"mfree " MF_LIB_VERSION, "cpu", compiler(), ph->src->text};
  for (int t = 0; t < 6; t++) parts[4 + t] = ph->src->names[t];
  for (int t = 0; t < MF_PHYS_MAX_BOUNDARY; t++) /* the boundary terms' names: table places 6 + 2 t, 7 + 2 t */
    for (int w = 0; w < 2; w++) parts[10 + 2 * t + w] = t < ph->nbound && ph->bsrc[t] ? ph->bname[t][w] : "";
  mf_jit_key(parts, 10 + 2 * MF_PHYS_MAX_BOUNDARY, key);
  const int cached = !mf_jit_cache_dir(ctx, dir, sizeof dir);
  char tmpdir[1024] = "";
  if (!cached) { /* a private folder for this compile, removed once loaded */
    const char *t = getenv("TMPDIR");
    snprintf(tmpdir, sizeof tmpdir, "%s/mfree-XXXXXX", t && t[0] ? t : "/tmp");
    if (!mkdtemp(tmpdir)) {
      mf_phase_end(ctx, MF_PHASE_COMPILE, t0);
      return mf_error_set(ctx, MF_ERR_IO, __FILE__, __LINE__, __func__,
                          "no folder to compile the physics source in (%s): %s", tmpdir, strerror(errno));
    }
    snprintf(dir, sizeof dir, "%s", tmpdir);
  }
  snprintf(name, sizeof name, "cpu-%s.so", key);
  snprintf(so, sizeof so, "%s/%s", dir, name);
  int ierr = 0;
  void *h = NULL, *bytes = NULL;
  size_t n = 0;
  /* a hit: the entry matches its sum and has the table; otherwise (corrupt, stale) compiled again */
  if (cached && mf_jit_cache_read(dir, name, &bytes, &n) == 1) {
    h = dlopen(so, RTLD_NOW | RTLD_LOCAL);
    if (h && !take_table(h, ph)) ctx->jit_loaded++;
    else if (h) {
      dlclose(h);
      h = NULL;
    }
  }
  free(bytes);
  if (!h) {
    char tmpso[1200], stem[96], *log = NULL;
    if (cached) mf_jit_cache_remove(dir, name);
    snprintf(stem, sizeof stem, ".cpu-%s.%d", key, (int)getpid());
    snprintf(tmpso, sizeof tmpso, "%s/%s.so", dir, stem);
    const int rc = run_compiler(ph, dir, stem, tmpso, &log);
    ctx->jit_compiled++;
    if (rc) ierr = compile_error(ctx, ph, rc, log);
    free(log);
    if (!ierr) { /* into the cache through its writer (the entry and its sum) */
      bytes = NULL;
      if (read_file(tmpso, &bytes, &n) != 1 || (cached ? mf_jit_cache_write(dir, name, bytes, n) : write_file(dir, name, bytes, n)))
        ierr = mf_error_set(ctx, MF_ERR_IO, __FILE__, __LINE__, __func__, "compiled physics could not be stored as %s: %s",
                            so, strerror(errno));
      free(bytes);
    }
    unlink(tmpso);
    if (!ierr) {
      h = dlopen(so, RTLD_NOW | RTLD_LOCAL);
      if (!h) ierr = mf_error_set(ctx, MF_ERR_IO, __FILE__, __LINE__, __func__, "compiled physics %s could not be loaded: %s",
                                  so, dlerror());
      else if (take_table(h, ph)) {
        dlclose(h);
        h = NULL;
        ierr = mf_error_set(ctx, MF_ERR_ARGUMENT, __FILE__, __LINE__, __func__, "compiled physics %s has no function table",
                            so);
      }
    }
  }
  if (tmpdir[0]) { /* loaded objects stay mapped after their file goes */
    unlink(so);
    rmdir(tmpdir);
  }
  if (!ierr) ierr = mf_context_on_release(ctx, close_object, h);
  mf_phase_end(ctx, MF_PHASE_COMPILE, t0);
  return ierr;
}
