#include "devices/trace_program.h"

#include <fmt/format.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <string_view>

#include "core/output.h"
#include "core/subprocess.h"
#include "core/text.h"
#include "devices/backend.h"
#include "opscope/opscope.h"

namespace opscope::devices {
namespace {

namespace fs = std::filesystem;

// Ignores SIGINT and SIGTERM while the traced program runs (it gets them from
// the terminal itself) so that its trace is still collected.
class IgnoreInterrupts {
 public:
  IgnoreInterrupts() {
    struct sigaction ignore {};
    ignore.sa_handler = SIG_IGN;
    sigaction(SIGINT, &ignore, &old_int_);
    sigaction(SIGTERM, &ignore, &old_term_);
  }
  ~IgnoreInterrupts() {
    sigaction(SIGINT, &old_int_, nullptr);
    sigaction(SIGTERM, &old_term_, nullptr);
  }

 private:
  struct sigaction old_int_ {};
  struct sigaction old_term_ {};
};

}  // namespace

TraceProgramResult TraceProgram(const TraceProgramOptions& options) {
  if (options.argv.empty()) {
    throw Error(ErrorCode::kInvalidArgument,
                "give the program to trace after --, e.g. opscope trace -o t.json -- python3 "
                "train.py");
  }
  if (options.out.empty()) throw Error(ErrorCode::kInvalidArgument, "-o FILE is required");
  std::string why;
  const BackendApi* api = LoadBackend(options.backend, &why);
  if (api == nullptr) {
    throw Error(ErrorCode::kUnsupported,
                "opscope trace profiles " + options.backend + " programs: " + why);
  }
  const fs::path injection = fs::path(BackendDirectory(options.backend)) / api->injection_library;
  if (std::string_view(api->injection_library).empty() || !fs::exists(injection)) {
    throw Error(ErrorCode::kUnsupported, "the injection library " + injection.string() +
                                             " is missing from this installation");
  }
  const fs::path target = fs::absolute(options.out);
  const bool gzip = core::HasGzipExtension(target);
  std::error_code ec;
  fs::create_directories(target.parent_path(), ec);
  // Per-process traces land beside the output, so moving them is a rename.
  std::string pattern = (target.parent_path() / ".opscope-trace-XXXXXX").string();
  if (::mkdtemp(pattern.data()) == nullptr) {
    throw Error(ErrorCode::kIo,
                "cannot create a folder beside " + target.string() + ": " + std::strerror(errno));
  }
  const fs::path scratch = pattern;
  struct Cleanup {
    fs::path dir;
    ~Cleanup() {
      std::error_code ignored;
      fs::remove_all(dir, ignored);
    }
  } cleanup{scratch};

  TraceProgramResult result;
  pid_t child = -1;
  {
    IgnoreInterrupts ignore;
    core::Subprocess program = core::Subprocess::Spawn(
        options.argv, {.environment = {{"CUDA_INJECTION64_PATH", injection.string()},
                                       {"OPSCOPE_TRACE_DIR", scratch.string()},
                                       {"OPSCOPE_TRACE_GZIP", gzip ? "1" : "0"}},
                       .default_signals = true});
    child = program.pid();
    result.exit_status = program.Wait();
  }
  if (result.exit_status > 128) {
    result.outcome = fmt::format("the program was killed by signal {}", result.exit_status - 128);
  } else if (result.exit_status != 0) {
    result.outcome = fmt::format("the program exited with status {}", result.exit_status);
  }
  const std::string& outcome = result.outcome;

  std::vector<fs::path> traces;
  for (const auto& entry : fs::directory_iterator(scratch, ec)) traces.push_back(entry.path());
  std::sort(traces.begin(), traces.end());
  if (traces.empty()) {
    // Nothing to profile here (exit status 5), not a failure of opscope's.
    throw Error(ErrorCode::kUnsupported,
                (outcome.empty() ? std::string() : outcome + "; ") +
                    "no trace: the program did not initialize CUDA (the tracer is loaded "
                    "by the CUDA driver when a program first uses CUDA), or it ended "
                    "without running its exit handlers (os._exit, a fatal signal), which is "
                    "when the trace is written");
  }
  // The traced program's own process first; any children that used CUDA beside it.
  const std::string own = fmt::format("opscope_cuda.{}.", child);
  std::stable_partition(traces.begin(), traces.end(), [&](const fs::path& p) {
    return p.filename().string().rfind(own, 0) == 0;
  });
  for (size_t i = 0; i < traces.size(); ++i) {
    fs::path destination = target;
    if (i > 0) {
      const std::string name = traces[i].filename().string();  // opscope_cuda.<pid>.json
      const std::string pid = name.substr(13, name.find('.', 13) - 13);
      std::string stem = target.filename().string();
      const size_t dot = stem.find(".json");
      stem = stem.substr(0, dot);
      destination = target.parent_path() / (stem + "." + pid + (gzip ? ".json.gz" : ".json"));
    }
    fs::rename(traces[i], destination, ec);
    if (ec) {
      throw Error(ErrorCode::kIo,
                  "cannot move the trace to " + destination.string() + ": " + ec.message());
    }
    result.written.push_back(destination);
  }
  return result;
}

}  // namespace opscope::devices
