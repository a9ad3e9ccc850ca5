#include "workloads/progress.h"

#include <unistd.h>

#include <atomic>
#include <cstdio>

#include "core/text.h"

namespace opscope::workloads {
namespace {
std::atomic<bool> g_silent{false};
}  // namespace

void Progress::SetSilent(bool silent) { g_silent = silent; }

Progress::Progress(std::string command, bool enabled)
    : command_(std::move(command)),
      enabled_(enabled),
      terminal_(::isatty(STDERR_FILENO) != 0),
      start_(std::chrono::steady_clock::now()) {}

Progress::~Progress() {
  if (shown_ && terminal_) std::fprintf(stderr, "\r\033[K");
}

void Progress::Step(int index, int total, const std::string& what) {
  if (!enabled_ || g_silent) return;
  const auto elapsed = std::chrono::steady_clock::now() - start_;
  if (elapsed < std::chrono::seconds(1)) return;
  const std::string line = "opscope " + command_ + ": [" + std::to_string(index) + "/" +
                           std::to_string(total) + "] " + core::EscapeForTerminal(what);
  if (terminal_) {
    std::fprintf(stderr, "\r\033[K%s", line.c_str());
  } else {
    std::fprintf(stderr, "%s\n", line.c_str());
  }
  std::fflush(stderr);
  shown_ = true;
}

}  // namespace opscope::workloads
