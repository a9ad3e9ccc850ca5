// `opscope trace -o t.json -- CMD ARGS`: profiles an unmodified CUDA program. The
// CUDA driver loads opscope's injection library into the program
// (CUDA_INJECTION64_PATH), which records CUPTI activity and writes one trace per
// process that used CUDA; this command collects them.
#include <fmt/format.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <iostream>

#include "cli/common.h"
#include "core/output.h"
#include "core/text.h"
#include "devices/backend.h"

namespace opscope::cli {
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

struct TraceCommand {
  std::string out;
  std::vector<std::string> command;

  void Run(int& exit_code) const {
    if (command.empty()) {
      throw Error(ErrorCode::kInvalidArgument,
                  "give the program to trace after --, e.g. opscope trace -o t.json -- python3 "
                  "train.py");
    }
    if (out.empty()) throw Error(ErrorCode::kInvalidArgument, "-o FILE is required");
    std::string why;
    const devices::BackendApi* api = devices::LoadBackend("cuda", &why);
    if (api == nullptr) {
      throw Error(ErrorCode::kUnsupported, "opscope trace profiles CUDA programs: " + why);
    }
    const fs::path injection = fs::path(devices::BackendDirectory("cuda")) / api->injection_library;
    if (!fs::exists(injection)) {
      throw Error(ErrorCode::kUnsupported, "the injection library " + injection.string() +
                                               " is missing from this installation");
    }
    const fs::path target = fs::absolute(out);
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

    int status = 0;
    pid_t child = -1;
    {
      IgnoreInterrupts ignore;
      child = ::fork();
      if (child < 0)
        throw Error(ErrorCode::kInternal, std::string("fork: ") + std::strerror(errno));
      if (child == 0) {
        signal(SIGINT, SIG_DFL);
        signal(SIGTERM, SIG_DFL);
        ::setenv("CUDA_INJECTION64_PATH", injection.c_str(), 1);
        ::setenv("OPSCOPE_TRACE_DIR", scratch.c_str(), 1);
        ::setenv("OPSCOPE_TRACE_GZIP", gzip ? "1" : "0", 1);
        std::vector<char*> argv;
        for (const std::string& a : command) argv.push_back(const_cast<char*>(a.c_str()));
        argv.push_back(nullptr);
        ::execvp(argv[0], argv.data());
        const std::string message = "opscope trace: cannot run '" +
                                    core::EscapeForTerminal(command[0]) +
                                    "': " + std::strerror(errno) + "\n";
        (void)!::write(2, message.data(), message.size());
        ::_exit(127);
      }
      while (::waitpid(child, &status, 0) < 0) {
        if (errno != EINTR) throw Error(ErrorCode::kInternal, "waitpid failed");
      }
    }
    std::string outcome;
    if (WIFEXITED(status)) {
      exit_code = WEXITSTATUS(status);
      if (exit_code == 127) {
        throw Error(ErrorCode::kInvalidArgument,
                    "cannot run '" + core::EscapeForTerminal(command[0]) + "' (exit status 127)");
      }
      if (exit_code != 0) outcome = fmt::format("the program exited with status {}", exit_code);
    } else if (WIFSIGNALED(status)) {
      exit_code = 128 + WTERMSIG(status);
      outcome = fmt::format("the program was killed by signal {}", WTERMSIG(status));
    }

    std::vector<fs::path> traces;
    for (const auto& entry : fs::directory_iterator(scratch, ec)) traces.push_back(entry.path());
    std::sort(traces.begin(), traces.end());
    if (traces.empty()) {
      throw Error(ErrorCode::kFailedPrecondition,
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
    std::vector<fs::path> written;
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
      written.push_back(destination);
    }
    std::cerr << "opscope trace: wrote " << core::EscapeForTerminal(written[0].string());
    if (written.size() > 1) {
      std::cerr << " and " << written.size() - 1 << " trace(s) of other processes that used CUDA:";
      for (size_t i = 1; i < written.size(); ++i) {
        std::cerr << ' ' << core::EscapeForTerminal(written[i].string());
      }
    }
    std::cerr << (outcome.empty() ? "" : " (" + outcome + ")") << "\n"
              << "opscope trace: next, opscope analyze " << core::EscapeForTerminal(out) << "\n";
  }
};

}  // namespace

void RegisterTrace(CLI::App& app, int& exit_code) {
  auto command = std::make_shared<TraceCommand>();
  CLI::App* sub = app.add_subcommand(
      "trace", "profile an unmodified CUDA program (CUPTI): opscope trace -o t.json -- CMD ARGS");
  sub->add_option("-o,--out", command->out, "the trace to write (.json or .json.gz)")->required();
  sub->add_option("command", command->command, "the program and its arguments, after --")
      ->expected(-1);
  sub->callback([command, &exit_code] { command->Run(exit_code); });
}

}  // namespace opscope::cli
