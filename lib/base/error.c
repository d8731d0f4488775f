/* error.c -- the bottom of the library: error messages (per thread and per context) and their
 * agreement over the ranks. Calls nothing above lib/base/. */
#include "mfree_impl.h"

#include <stdio.h>

/* The calling thread's last message, and what mf_context_error_message needs to know of it: its
 * number in the process-wide order of errors, whether it was recorded without a context (an error
 * on a NULL handle, which no context owns), and whether it is a message that mf_agree made the same
 * on every rank (so that the next agreement does not wrap it again). */
static _Thread_local char mf_global_errmsg[1024];
static _Thread_local unsigned long mf_global_seq;
static _Thread_local int mf_global_noctx, mf_global_agreed;
static unsigned long mf_error_counter;

static void error_record(mf_context ctx, const char *msg)
{
  const unsigned long seq = __atomic_add_fetch(&mf_error_counter, 1, __ATOMIC_RELAXED);
  snprintf(mf_global_errmsg, sizeof mf_global_errmsg, "%s", msg);
  mf_global_seq = seq;
  mf_global_noctx = ctx == NULL;
  mf_global_agreed = 0;
  if (ctx) {
    snprintf(ctx->errmsg, sizeof ctx->errmsg, "%s", msg);
    ctx->errseq = seq;
  }
}

int mf_error_set(mf_context ctx, int code, const char *file, int line, const char *func,
                 const char *fmt, ...)
{
  char msg[768], full[1024];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  /* the file name only, not the build path */
  const char *base = strrchr(file, '/');
  base = base ? base + 1 : file;
  snprintf(full, sizeof full, "%s (%s:%d in %s)", msg, base, line, func);
  error_record(ctx, full);
  return code;
}

unsigned long mf_error_serial(void) { return mf_global_seq; }

const char *mf_last_error_message(void) { return mf_global_errmsg; }

const char *mf_context_error_message(mf_context ctx)
{
  if (!ctx) return mf_global_errmsg;
  /* an error on a NULL handle has no context of its own: the context asked after it shows it */
  if (mf_global_noctx && mf_global_seq > ctx->errseq) return mf_global_errmsg;
  return ctx->errmsg;
}

/* One rank's failure made everyone's: the lowest failing rank sends its code and message, which
 * every rank records as "rank R: message". An error that an earlier agreement made common is not
 * sent again. Collective on comm. */
int mf_agree_comm(MPI_Comm comm, mf_context ctx, int ierr)
{
  int rank = 0, size = 1;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);
  if (size == 1) return ierr;
  int v[2] = {ierr && !mf_global_agreed ? rank : size, ierr ? -1 : 0}; /* first new failure, any failure */
  int rc = MPI_Allreduce(MPI_IN_PLACE, v, 2, MPI_INT, MPI_MIN, comm);
  if (rc != MPI_SUCCESS)
    return ierr ? ierr : mf_error_set(ctx, MF_ERR_MPI, __FILE__, __LINE__, __func__, "MPI_Allreduce failed (%d)", rc);
  if (v[1] == 0) return 0;
  if (v[0] == size) /* every failure agreed on already */
    return ierr ? ierr : mf_error_set(ctx, MF_ERR_MPI, __FILE__, __LINE__, __func__, "an error on another rank");
  struct {
    int code;
    char msg[1024];
  } m;
  memset(&m, 0, sizeof m);
  if (rank == v[0]) {
    m.code = ierr;
    snprintf(m.msg, sizeof m.msg, "%s", mf_global_errmsg);
  }
  rc = MPI_Bcast(&m, (int)sizeof m, MPI_BYTE, v[0], comm);
  if (rc != MPI_SUCCESS)
    return ierr ? ierr : mf_error_set(ctx, MF_ERR_MPI, __FILE__, __LINE__, __func__, "MPI_Bcast failed (%d)", rc);
  char full[1024];
  snprintf(full, sizeof full, "rank %d: %.1000s", v[0], m.msg);
  error_record(ctx, full);
  mf_global_agreed = 1;
  return m.code;
}

int mf_agree(mf_context ctx, int ierr)
{
  if (!ctx || ctx->size == 1) return ierr;
  return mf_agree_comm(ctx->comm, ctx, ierr);
}
