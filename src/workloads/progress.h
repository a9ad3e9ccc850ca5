// Progress on stderr for work that runs longer than a second: a line per step,
// rewritten in place on a terminal. Silent for the first second.
#ifndef OPSCOPE_WORKLOADS_PROGRESS_H_
#define OPSCOPE_WORKLOADS_PROGRESS_H_

#include <chrono>
#include <string>

namespace opscope::workloads {

class Progress {
 public:
  explicit Progress(std::string command, bool enabled = true);
  ~Progress();
  void Step(int index, int total, const std::string& what);
  // Silences every Progress (for `opscope run` writing to a pipe or a file).
  static void SetSilent(bool silent);

 private:
  std::string command_;
  bool enabled_;
  bool terminal_;
  bool shown_ = false;
  std::chrono::steady_clock::time_point start_;
  std::string pending_;
};

}  // namespace opscope::workloads

#endif  // OPSCOPE_WORKLOADS_PROGRESS_H_
