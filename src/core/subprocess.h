// Running another program: started with fork and exec, where a failed exec is
// reported as an error naming the program (through a close-on-exec pipe, not
// guessed from exit status 127), waited for with an optional deadline, and
// stopped with SIGTERM when the deadline passes.
#ifndef OPSCOPE_CORE_SUBPROCESS_H_
#define OPSCOPE_CORE_SUBPROCESS_H_

#include <sys/types.h>

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace opscope::core {

struct SpawnOptions {
  std::vector<std::pair<std::string, std::string>> environment;  // set in the child
  bool default_signals = false;  // SIGINT and SIGTERM back to their defaults in the child
};

class Subprocess {
 public:
  // Throws Error(kInvalidArgument) naming argv[0] when it cannot be run,
  // Error(kIo) when fork or pipe fail.
  static Subprocess Spawn(const std::vector<std::string>& argv, const SpawnOptions& options = {});

  Subprocess(Subprocess&& other) noexcept : pid_(std::exchange(other.pid_, -1)) {}
  Subprocess& operator=(Subprocess&&) = delete;
  // A child still running is terminated and reaped.
  ~Subprocess();

  pid_t pid() const { return pid_; }
  // Waits for the exit: the status (0..255), or 128 + the signal that killed it.
  int Wait();
  // The exit status when the child has ended, without waiting; -1 while it runs.
  int Poll();
  // Waits until the monotonic deadline (ns); past it the child gets SIGTERM and
  // is reaped, and the result is -1.
  int WaitUntil(int64_t deadline_ns);

 private:
  explicit Subprocess(pid_t pid) : pid_(pid) {}
  pid_t pid_;
};

// An exit status as waitpid reports it, as a shell would: the code, or 128 + signal.
int ExitStatusOf(int wait_status);

}  // namespace opscope::core

#endif  // OPSCOPE_CORE_SUBPROCESS_H_
