#include "core/subprocess.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <thread>

#include "core/clock.h"
#include "core/text.h"
#include "opscope/opscope.h"

namespace opscope::core {

int ExitStatusOf(int status) {
  if (WIFEXITED(status)) return WEXITSTATUS(status);
  if (WIFSIGNALED(status)) return 128 + WTERMSIG(status);
  return -1;
}

Subprocess Subprocess::Spawn(const std::vector<std::string>& argv, const SpawnOptions& options) {
  if (argv.empty()) throw Error(ErrorCode::kInvalidArgument, "no program to run");
  int pipe_fds[2];
  if (::pipe2(pipe_fds, O_CLOEXEC) != 0) {
    throw Error(ErrorCode::kIo, std::string("pipe failed: ") + std::strerror(errno));
  }
  // Everything the child needs is prepared before fork: it only calls
  // async-signal-safe functions (and setenv) afterwards.
  std::vector<char*> args;
  for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  const pid_t pid = ::fork();
  if (pid < 0) {
    const int error = errno;
    ::close(pipe_fds[0]);
    ::close(pipe_fds[1]);
    throw Error(ErrorCode::kIo, std::string("fork failed: ") + std::strerror(error));
  }
  if (pid == 0) {
    if (options.default_signals) {
      ::signal(SIGINT, SIG_DFL);
      ::signal(SIGTERM, SIG_DFL);
    }
    for (const auto& [key, value] : options.environment) ::setenv(key.c_str(), value.c_str(), 1);
    ::execvp(args[0], args.data());
    const int error = errno;
    (void)!::write(pipe_fds[1], &error, sizeof error);
    ::_exit(127);
  }
  ::close(pipe_fds[1]);
  int exec_error = 0;
  ssize_t got;
  do {
    got = ::read(pipe_fds[0], &exec_error, sizeof exec_error);
  } while (got < 0 && errno == EINTR);
  ::close(pipe_fds[0]);
  Subprocess child(pid);
  if (got == sizeof exec_error) {
    child.Wait();
    throw Error(ErrorCode::kInvalidArgument,
                "cannot run '" + EscapeForTerminal(argv[0]) + "': " + std::strerror(exec_error));
  }
  return child;
}

Subprocess::~Subprocess() {
  if (pid_ > 0) {
    ::kill(pid_, SIGTERM);
    int status = 0;
    while (::waitpid(pid_, &status, 0) < 0 && errno == EINTR) {
    }
  }
}

int Subprocess::Wait() {
  int status = 0;
  while (::waitpid(pid_, &status, 0) < 0) {
    if (errno != EINTR) throw Error(ErrorCode::kInternal, "waitpid failed");
  }
  pid_ = -1;
  return ExitStatusOf(status);
}

int Subprocess::Poll() {
  if (pid_ <= 0) return -1;
  int status = 0;
  if (::waitpid(pid_, &status, WNOHANG) != pid_) return -1;
  pid_ = -1;
  return ExitStatusOf(status);
}

int Subprocess::WaitUntil(int64_t deadline_ns) {
  int status = 0;
  while (true) {
    const pid_t done = ::waitpid(pid_, &status, WNOHANG);
    if (done == pid_) {
      pid_ = -1;
      return ExitStatusOf(status);
    }
    if (MonotonicNs() >= deadline_ns) {
      ::kill(pid_, SIGTERM);
      Wait();
      return -1;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
}

}  // namespace opscope::core
