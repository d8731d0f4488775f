/* gmsh_mutate.c -- a mutation fuzzer of the .msh reader without libFuzzer: the seed files of a
 * corpus directory are mutated (byte flips, truncations, insertions of bytes, digits, signs and
 * section words, deleted and repeated ranges) with a fixed random sequence and read as 2D and 3D
 * by mf_gmsh_read_buffer. Built with -fsanitize=address,undefined it finds memory errors; any run
 * fails if the reader returns an error without a message naming the buffer, or succeeds with
 * indices out of range.
 *   gmsh_mutate ITERATIONS SEED CORPUS_DIR */
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "simplex/mf_gmsh.h"

static uint64_t rng_state;
static uint64_t rnd(void) /* xorshift64* */
{
  rng_state ^= rng_state >> 12;
  rng_state ^= rng_state << 25;
  rng_state ^= rng_state >> 27;
  return rng_state * 2685821657736338717ULL;
}

typedef struct {
  char *data;
  size_t len;
} seed;

static const char *words[] = {"$MeshFormat", "$EndMeshFormat", "$Nodes", "$EndNodes", "$Elements", "$EndElements",
                              "$PhysicalNames", "$EndPhysicalNames", "$Entities", "$EndEntities", "$Periodic",
                              "-1", "0", "1", "2", "4", "11", "99", "1e308", "nan", "\"", "\n", " ", "4.1", "2.2",
                              "99999999999999999999", "9223372036854775807", "2147483648"};

static size_t mutate(const seed *s, char *out, size_t cap)
{
  size_t len = s->len < cap ? s->len : cap;
  memcpy(out, s->data, len);
  int nmut = 1 + (int)(rnd() % 4);
  for (int k = 0; k < nmut; k++) {
    size_t pos = len ? (size_t)(rnd() % len) : 0;
    switch (rnd() % 6) {
    case 0: /* flip a byte */
      if (len) out[pos] ^= (char)(1u << (rnd() % 8));
      break;
    case 1: /* random byte */
      if (len) out[pos] = (char)(rnd() % 256);
      break;
    case 2: /* truncate */
      len = pos;
      break;
    case 3: { /* insert a word */
      const char *w = words[rnd() % (sizeof words / sizeof words[0])];
      size_t wl = strlen(w);
      if (len + wl >= cap) break;
      memmove(out + pos + wl, out + pos, len - pos);
      memcpy(out + pos, w, wl);
      len += wl;
      break;
    }
    case 4: { /* delete a range */
      size_t n = (size_t)(rnd() % 16);
      if (pos + n > len) n = len - pos;
      memmove(out + pos, out + pos + n, len - pos - n);
      len -= n;
      break;
    }
    default: { /* repeat a range */
      size_t n = (size_t)(rnd() % 64);
      if (pos + n > len) n = len - pos;
      if (len + n >= cap) break;
      memmove(out + pos + n, out + pos, len - pos);
      len += n;
      break;
    }
    }
  }
  return len;
}

int main(int argc, char **argv)
{
  if (argc < 4) {
    fprintf(stderr, "usage: gmsh_mutate ITERATIONS SEED CORPUS_DIR\n");
    return 2;
  }
  long iters = atol(argv[1]);
  rng_state = 0x9e3779b97f4a7c15ULL ^ (uint64_t)atoll(argv[2]);
  seed seeds[64];
  int ns = 0;
  DIR *d = opendir(argv[3]);
  if (!d) {
    fprintf(stderr, "cannot open %s\n", argv[3]);
    return 2;
  }
  struct dirent *e;
  while ((e = readdir(d)) && ns < 64) {
    if (e->d_name[0] == '.') continue;
    char p[4096];
    snprintf(p, sizeof p, "%s/%s", argv[3], e->d_name);
    FILE *f = fopen(p, "rb");
    if (!f) continue;
    seeds[ns].data = malloc(1 << 16);
    seeds[ns].len = fread(seeds[ns].data, 1, 1 << 16, f);
    fclose(f);
    ns++;
  }
  closedir(d);
  if (!ns) {
    fprintf(stderr, "no seeds in %s\n", argv[3]);
    return 2;
  }
  size_t cap = 1 << 17;
  char *buf = malloc(cap);
  long ok = 0, bad = 0;
  for (long it = 0; it < iters; it++) {
    const seed *s = &seeds[it % ns];
    size_t len = mutate(s, buf, cap);
    for (int dim = 2; dim <= 3; dim++) {
      mf_gmsh_mesh m;
      int ierr = mf_gmsh_read_buffer(NULL, buf, len, "fuzz", dim, &m);
      if (ierr) {
        if (strncmp(mf_last_error_message(), "fuzz:", 5) && ierr != MF_ERR_MEMORY) {
          fprintf(stderr, "iteration %ld: error %d without a file:line message: %s\n", it, ierr, mf_last_error_message());
          bad++;
        }
        if (m.x || m.cells) {
          fprintf(stderr, "iteration %ld: output not cleared on error\n", it);
          bad++;
        }
        continue;
      }
      ok++;
      for (long i = 0; i < (long)(dim + 1) * m.n_cells; i++)
        if (m.cells[i] < 0 || m.cells[i] >= m.n_nodes) {
          fprintf(stderr, "iteration %ld: cell index %ld out of range\n", it, m.cells[i]);
          bad++;
          break;
        }
      for (long i = 0; i < (long)dim * m.n_facets; i++)
        if (m.facets[i] < 0 || m.facets[i] >= m.n_nodes) {
          fprintf(stderr, "iteration %ld: facet index %ld out of range\n", it, m.facets[i]);
          bad++;
          break;
        }
      mf_gmsh_free(&m);
    }
  }
  printf("%ld iterations, %ld accepted reads, %ld failures\n", iters, ok, bad);
  for (int i = 0; i < ns; i++) free(seeds[i].data);
  free(buf);
  return bad ? 1 : 0;
}
