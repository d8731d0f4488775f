/* options.h -- strict command-line options for mfree's programs (mfree-poisson, mfree-bench).
 *
 * Every value is checked whole: integers and numbers must be nothing but a number (no trailing text,
 * no NaN or infinity; one too large or too small for its type, 1e400 say, is out of range) within the
 * option's range; a value that is missing -- the option
 * is last, or the next word is another option -- is reported as missing instead of being taken from
 * the next option; every message names the option. The programs parse before MPI_Init, so a bad
 * option costs no MPI start-up; under a launcher every process parses the same words, and only the
 * first prints (the rank comes from the launcher's environment, as MPI is not started yet).
 *
 *   opt_parser P;
 *   opt_init(&P, "mfree-poisson", argc, argv);
 *   while (opt_next(&P))
 *     if (opt_is(&P, "--dim")) opt_int(&P, 2, 3, &dim);
 *     else ...
 *     else opt_unknown(&P);
 *   if (P.bad) exit 2                                                                           */
#ifndef MFREE_OPTIONS_H
#define MFREE_OPTIONS_H

#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
  const char *prog; /* program name, the start of every message */
  int argc;
  char **argv;
  int i;            /* argv[i]: the option being parsed */
  const char *name; /* that option */
  int bad;          /* an error was reported: stop parsing */
  int quiet;        /* not the first process of a launcher: report nothing */
} opt_parser;

/* The rank a launcher gives this process, before MPI_Init: Open MPI, PMIx and Hydra (MPICH) set one
 * of these; none set means a process started on its own. */
static inline int opt_launcher_rank(void)
{
  const char *vars[3] = {"OMPI_COMM_WORLD_RANK", "PMIX_RANK", "PMI_RANK"};
  for (int k = 0; k < 3; k++) {
    const char *s = getenv(vars[k]);
    if (s && *s) return atoi(s);
  }
  return 0;
}

static inline void opt_init(opt_parser *P, const char *prog, int argc, char **argv)
{
  memset(P, 0, sizeof *P);
  P->prog = prog;
  P->argc = argc;
  P->argv = argv;
  P->quiet = opt_launcher_rank() != 0;
}

/** Report an error: "prog: <message>" on stderr (first process only); parsing stops. */
static inline int opt_error(opt_parser *P, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;
static inline int opt_error(opt_parser *P, const char *fmt, ...)
{
  if (!P->quiet) {
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "%s: ", P->prog);
    vfprintf(stderr, fmt, ap);
    fprintf(stderr, "\n");
    va_end(ap);
  }
  P->bad = 1;
  return 1;
}

/** The next option, in P->name; 0 at the end or after an error. A word that is not an option
 *  ("--name", or "-h", the short form of --help) is an error. */
static inline int opt_next(opt_parser *P)
{
  if (P->bad || ++P->i >= P->argc) return 0;
  P->name = P->argv[P->i];
  if ((strncmp(P->name, "--", 2) || !P->name[2]) && strcmp(P->name, "-h")) {
    opt_error(P, "unknown argument '%s' (options start with --; see --help)", P->name);
    return 0;
  }
  return 1;
}

static inline int opt_is(const opt_parser *P, const char *name) { return !strcmp(P->name, name); }

static inline int opt_unknown(opt_parser *P) { return opt_error(P, "unknown option '%s' (see --help)", P->name); }

/** The option's value (the next word), NULL if it is missing: the option is last, or the next
 *  word is itself an option. */
static inline const char *opt_value(opt_parser *P)
{
  if (P->i + 1 >= P->argc) {
    opt_error(P, "option %s: missing value", P->name);
    return NULL;
  }
  const char *v = P->argv[P->i + 1];
  if (!strncmp(v, "--", 2)) {
    opt_error(P, "option %s: missing value (the next word is the option '%s')", P->name, v);
    return NULL;
  }
  P->i++;
  return v;
}

/** A string value. */
static inline int opt_string(opt_parser *P, const char **v)
{
  const char *s = opt_value(P);
  if (!s) return 1;
  *v = s;
  return 0;
}

/** A value that must be one of the n names in `names`: *index is its position. */
static inline int opt_choice(opt_parser *P, const char *const *names, int n, int *index)
{
  const char *s = opt_value(P);
  if (!s) return 1;
  for (int k = 0; k < n; k++)
    if (!strcmp(s, names[k])) {
      *index = k;
      return 0;
    }
  char list[256] = "";
  for (int k = 0; k < n; k++)
    snprintf(list + strlen(list), sizeof list - strlen(list), "%s%s", k ? " | " : "", names[k]);
  return opt_error(P, "option %s: unknown value '%s' (%s)", P->name, s, list);
}

/* s as an integer in lo..hi (a message naming P's option otherwise) */
static inline int opt_parse_int(opt_parser *P, const char *s, int lo, int hi, int *v)
{
  char *end;
  errno = 0;
  long long x = strtoll(s, &end, 10);
  if (end == s || *end || isspace((unsigned char)*s))
    return opt_error(P, "option %s: '%s' is not an integer", P->name, s);
  if ((errno == ERANGE || x < INT_MIN || x > INT_MAX) && lo == INT_MIN && hi == INT_MAX) /* range checked later */
    return opt_error(P, "option %s: %s out of range (beyond the integers of %d..%d)", P->name, s, INT_MIN, INT_MAX);
  if (errno == ERANGE || x < lo || x > hi) return opt_error(P, "option %s: %s out of range %d..%d", P->name, s, lo, hi);
  *v = (int)x;
  return 0;
}

/** An integer value in lo..hi. */
static inline int opt_int(opt_parser *P, int lo, int hi, int *v)
{
  const char *s = opt_value(P);
  return s ? opt_parse_int(P, s, lo, hi, v) : 1;
}

/** A finite number in the interval from lo to hi, each end open (lo_open, hi_open) or closed. */
static inline int opt_double(opt_parser *P, double lo, int lo_open, double hi, int hi_open, double *v)
{
  const char *s = opt_value(P);
  if (!s) return 1;
  char *end;
  errno = 0;
  double x = strtod(s, &end);
  if (end == s || *end || isspace((unsigned char)*s)) return opt_error(P, "option %s: '%s' is not a number", P->name, s);
  /* an overflow (1e400) gives an infinite x with ERANGE: a number out of range, not the word inf */
  if (!isfinite(x) && errno != ERANGE) return opt_error(P, "option %s: '%s' is not a finite number", P->name, s);
  if (errno == ERANGE || (lo_open ? x <= lo : x < lo) || (hi_open ? x >= hi : x > hi))
    return opt_error(P, "option %s: %s out of range %c%g, %g%c", P->name, s, lo_open ? '(' : '[', lo, hi,
                     hi_open ? ')' : ']');
  *v = x;
  return 0;
}

/** A comma-separated list of 1..max integers in lo..hi ("1,2,4"). */
static inline int opt_int_list(opt_parser *P, int lo, int hi, int max, int *v, int *n)
{
  const char *s = opt_value(P);
  if (!s) return 1;
  char item[128];
  int count = 0;
  for (const char *p = s;; p++) {
    const char *comma = strchr(p, ',');
    size_t len = comma ? (size_t)(comma - p) : strlen(p);
    if (len == 0) return opt_error(P, "option %s: empty item in the list '%s'", P->name, s);
    if (count == max) return opt_error(P, "option %s: more than %d items in '%s'", P->name, max, s);
    if (len >= sizeof item) return opt_error(P, "option %s: an item of %zu characters in the list", P->name, len);
    memcpy(item, p, len);
    item[len] = '\0';
    if (opt_parse_int(P, item, lo, hi, &v[count])) return 1;
    count++;
    if (!comma) break;
    p = comma;
  }
  *n = count;
  return 0;
}

#endif
