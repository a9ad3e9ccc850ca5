#include <cstring>
#include <exception>
#include <memory>
#include <string>
#include <vector>

#include "collect/recorder.h"
#include "opscope/opscope.h"
#include "opscope/opscope_c.h"

struct opscope_session {
  std::unique_ptr<opscope::Profiler> profiler;
  std::vector<std::string> paths;
};

namespace {

thread_local std::string t_last_error;
// Whether this thread's recorder state was made before t_scopes (a trivial
// thread-local: reading it makes nothing).
constinit thread_local bool t_prepared = false;
// Scopes opened through the C API on this thread, innermost last.
thread_local std::vector<std::unique_ptr<opscope::detail::DynamicScopeGuard>> t_scopes;

int Fail(const std::string& message) {
  t_last_error = message;
  return -1;
}

template <typename F>
int Guarded(F&& f) {
  try {
    f();
    return 0;
  } catch (const std::exception& e) {
    return Fail(e.what());
  } catch (...) {
    return Fail("unknown error");
  }
}

void SyncPaths(opscope_session* session) {
  session->paths.clear();
  for (const auto& p : session->profiler->trace_files()) session->paths.push_back(p.string());
}

}  // namespace

extern "C" {

void opscope_options_init(opscope_options* options) {
  if (options == nullptr) return;
  std::memset(options, 0, sizeof *options);
  options->output_dir = ".";
  options->active = 1;
}

opscope_session* opscope_session_start(const opscope_options* options) {
  opscope_options defaults;
  opscope_options_init(&defaults);
  const opscope_options& o = options != nullptr ? *options : defaults;
  auto session = std::make_unique<opscope_session>();
  const int status = Guarded([&] {
    opscope::ProfilerOptions cpp;
    cpp.output_dir = o.output_dir != nullptr ? o.output_dir : ".";
    cpp.record_shapes = o.record_shapes != 0;
    cpp.gzip = o.gzip != 0;
    if (o.max_buffer_bytes != 0) cpp.max_buffer_bytes = o.max_buffer_bytes;
    if (o.use_schedule != 0) {
      cpp.schedule = opscope::Schedule{o.skip_first, o.wait, o.warmup, o.active, o.repeat};
    }
    session->profiler = std::make_unique<opscope::Profiler>(std::move(cpp));
    session->profiler->Start();
  });
  return status == 0 ? session.release() : nullptr;
}

int opscope_session_step(opscope_session* session) {
  if (session == nullptr) return Fail("opscope_session_step: session is NULL");
  const int status = Guarded([&] { session->profiler->Step(); });
  SyncPaths(session);
  return status;
}

int opscope_session_stop(opscope_session* session) {
  if (session == nullptr) return Fail("opscope_session_stop: session is NULL");
  const int status = Guarded([&] { session->profiler->Stop(); });
  SyncPaths(session);
  return status;
}

void opscope_session_free(opscope_session* session) { delete session; }

size_t opscope_session_trace_count(const opscope_session* session) {
  return session != nullptr ? session->paths.size() : 0;
}

const char* opscope_session_trace_path(const opscope_session* session, size_t index) {
  if (session == nullptr || index >= session->paths.size()) return nullptr;
  return session->paths[index].c_str();
}

int opscope_scope_begin(const char* name) {
  if (name == nullptr) return Fail("opscope_scope_begin: name is NULL");
  return Guarded([&] {
    // The recorder's thread state is made before t_scopes, so it outlives
    // it: scopes still open when the thread exits end into the trace
    // (collect/recorder.h PrepareThread).
    if (!t_prepared) opscope::collect::PrepareThread(), t_prepared = true;
    t_scopes.push_back(std::make_unique<opscope::detail::DynamicScopeGuard>(name));
  });
}

int opscope_scope_end(void) {
  if (t_scopes.empty()) return Fail("opscope_scope_end: no scope is open on this thread");
  t_scopes.pop_back();
  return 0;
}

void opscope_instant(const char* name) {
  if (name != nullptr) opscope::Instant(name);
}

void opscope_counter(const char* name, double value) {
  if (name != nullptr) opscope::Counter(name, value);
}

void opscope_set_thread_name(const char* name) {
  if (name != nullptr) opscope::SetThreadName(name);
}

const char* opscope_last_error(void) { return t_last_error.c_str(); }

const char* opscope_version(void) { return OPSCOPE_VERSION_STRING; }

}  // extern "C"
