#include <opscope/opscope_c.h>
#include <stdio.h>

int main(int argc, char** argv) {
  if (argc != 2) return 2;
  opscope_options options;
  opscope_options_init(&options);
  options.output_dir = argv[1];
  opscope_session* session = opscope_session_start(&options);
  if (session == NULL) return 1;
  opscope_scope_begin("from_c");
  opscope_scope_end();
  if (opscope_session_stop(session) != 0) return 1;
  printf("%s\n", opscope_session_trace_path(session, 0));
  opscope_session_free(session);
  return 0;
}
