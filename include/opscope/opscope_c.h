/* opscope profiler: the C API, for C programs and Python ctypes.
 *
 * Functions return 0 on success and a negative value on failure; the message of the
 * last failure on the calling thread is available from opscope_last_error(). Scope
 * names passed to opscope_scope_begin() are copied. A scope ends on the thread that
 * began it, in last-in first-out order; opscope_scope_end() with no open scope is an
 * error. */
#ifndef OPSCOPE_OPSCOPE_C_H_
#define OPSCOPE_OPSCOPE_C_H_

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct opscope_session opscope_session;

typedef struct opscope_options {
  const char* output_dir;  /* default "." */
  int record_shapes;       /* 0 or 1 */
  int gzip;                /* 0 or 1 */
  size_t max_buffer_bytes; /* 0: the default (512 MiB) */
  int use_schedule;        /* 0: record from start to stop */
  int64_t skip_first, wait, warmup, active, repeat;
} opscope_options;

/* Fills *options with the defaults. */
void opscope_options_init(opscope_options* options);

/* Creates and starts a session; NULL on failure. */
opscope_session* opscope_session_start(const opscope_options* options);
int opscope_session_step(opscope_session* session);
/* Stops the session and writes any pending trace; the session stays valid for the
 * queries below until opscope_session_free(). */
int opscope_session_stop(opscope_session* session);
/* Frees the session, stopping it first if it still runs. NULL is ignored. */
void opscope_session_free(opscope_session* session);
/* The number of trace files written so far and the path of the i-th. */
size_t opscope_session_trace_count(const opscope_session* session);
const char* opscope_session_trace_path(const opscope_session* session, size_t index);

int opscope_scope_begin(const char* name);
int opscope_scope_end(void);
void opscope_instant(const char* name);
void opscope_counter(const char* name, double value);
void opscope_set_thread_name(const char* name);

const char* opscope_last_error(void);
const char* opscope_version(void);

#ifdef __cplusplus
}
#endif

#endif /* OPSCOPE_OPSCOPE_C_H_ */
