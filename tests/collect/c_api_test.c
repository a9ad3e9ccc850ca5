/* The C API used from C: a scheduled session with scopes, counters and steps.
 * Usage: c_api_test OUTPUT_DIR; prints the path of the trace it wrote. */
#include <stdio.h>
#include <string.h>

#include "opscope/opscope_c.h"

#define CHECK(cond)                                                                \
  do {                                                                             \
    if (!(cond)) {                                                                 \
      fprintf(stderr, "%s:%d: check failed: %s (%s)\n", __FILE__, __LINE__, #cond, \
              opscope_last_error());                                               \
      return 1;                                                                    \
    }                                                                              \
  } while (0)

int main(int argc, char** argv) {
  CHECK(argc == 2);
  CHECK(strlen(opscope_version()) > 0);

  opscope_options options;
  opscope_options_init(&options);
  options.output_dir = argv[1];
  options.use_schedule = 1;
  options.wait = 1;
  options.warmup = 1;
  options.active = 2;
  options.repeat = 1;

  /* An invalid schedule is refused with a message. */
  opscope_options bad = options;
  bad.active = 0;
  CHECK(opscope_session_start(&bad) == NULL);
  CHECK(strstr(opscope_last_error(), "active") != NULL);

  opscope_session* session = opscope_session_start(&options);
  CHECK(session != NULL);
  opscope_set_thread_name("c main");
  for (int step = 0; step < 6; ++step) {
    CHECK(opscope_scope_begin("c_step_work") == 0);
    CHECK(opscope_scope_begin("c_inner") == 0);
    opscope_counter("c_counter", step);
    CHECK(opscope_scope_end() == 0);
    CHECK(opscope_scope_end() == 0);
    opscope_instant("c_mark");
    CHECK(opscope_session_step(session) == 0);
  }
  CHECK(opscope_scope_end() != 0); /* nothing open */
  CHECK(opscope_session_stop(session) == 0);
  CHECK(opscope_session_trace_count(session) == 1);
  printf("%s\n", opscope_session_trace_path(session, 0));
  opscope_session_free(session);
  return 0;
}
