// Scale-out analysis under MPI (`mpirun -n N opscope analyze --mpi ...`):
// each process takes its share of the inputs, runs stage 1 on them next to
// the data, and the summaries are gathered to process 0, which runs stage 2.
// An optional target: built when Open MPI (or another MPI) is found; without
// it the same two stages run in one process on threads.
#ifndef OPSCOPE_MPI_MPI_SCALEOUT_H_
#define OPSCOPE_MPI_MPI_SCALEOUT_H_

#include <optional>
#include <string>
#include <vector>

#include "analyze/scaleout/scaleout.h"

namespace opscope::mpi {

// One input and the MPI process that reads it (-1: dealt round-robin).
struct Assignment {
  std::string input;
  int process = -1;
};

// The lines of a list file: "PATH" or "PROCESS PATH" (a number, then
// whitespace), '#' comments and blank lines skipped. Throws
// Error(kInvalidInput) naming the file and line.
std::vector<Assignment> ReadAssignments(const std::string& list_file);

struct MpiRun {
  int process = 0, processes = 1;
  // On process 0 only: the merged result, and how many traces each process read.
  std::optional<analyze::ScaleOutResult> result;
  std::vector<int64_t> traces_per_process;
};

// MPI_Init (when not yet initialised), stage 1 on this process's inputs
// (`inputs[i]`, its position i the rank of a trace that names none), gather,
// stage 2 on process 0. A process's error reaches process 0, which throws it
// naming the process; no process is left waiting. MPI_Finalize is left to
// FinalizeMpi.
MpiRun RunScaleOut(const std::vector<Assignment>& inputs, const analyze::SummarizeOptions& options);
void FinalizeMpi();

}  // namespace opscope::mpi

#endif  // OPSCOPE_MPI_MPI_SCALEOUT_H_
