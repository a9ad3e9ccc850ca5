// The files a profiler writes beside a rank's timeline (per-step breakdowns,
// collectives, memory, hardware counters, summaries, the chip), each read by a
// registered side-file reader into the model (TraceModel::reported,
// reported.h; or the model's events, which a reader may complete). Readers
// live in the folder of their producer's importers (importers/<vendor>/) and
// are registered in one table (importers/registry.cc); the folder discovery
// of the producer's output trees (trace_inputs.h) finds the files and names
// each file's role.
//
// A reader that fails (an Error naming the file, line or key) leaves the rest
// of the analysis standing: its file is listed among the files not read, with
// the error.
#ifndef OPSCOPE_ANALYZE_SIDE_FILES_H_
#define OPSCOPE_ANALYZE_SIDE_FILES_H_

#include <string>
#include <string_view>
#include <vector>

#include "analyze/table_context.h"
#include "analyze/trace_inputs.h"
#include "analyze/trace_model.h"

namespace opscope::analyze {

// One rank's files as its readers see them.
class RankFiles {
 public:
  RankFiles(const TraceInput& input, std::vector<UnusedFile>& unused)
      : input_(input), unused_(unused) {}

  const std::string& timeline() const { return input_.path; }
  // The file of a role; "" none.
  const std::string& Path(std::string_view role) const { return input_.File(role); }
  // A file that could not be read, and why ("could not be read: " is added).
  void CouldNotRead(const std::string& path, std::string_view why);
  // A role already read (by the timeline's importer, in the same pass): its
  // reader is not run.
  void Done(std::string_view role) { done_.emplace_back(role); }
  bool IsDone(std::string_view role) const;

 private:
  const TraceInput& input_;
  std::vector<UnusedFile>& unused_;
  std::vector<std::string> done_;
};

// A role a reader reads, and the names of the files that play it in a
// producer's output folder ('*' matches any run of characters; none: the
// producer's discovery names the file, e.g. from another folder).
struct SideFileRole {
  std::string_view role;
  std::vector<std::string_view> file_patterns;
};

struct SideFileReader {
  std::string_view name;  // stable key: "step_trace_time"
  // The roles it reads: it runs when the rank has a file for any of them (its
  // failure is listed under the first one present), unless one was Done.
  std::vector<SideFileRole> roles;
  std::string_view description;  // what it reads into which table
  void (*read)(RankFiles& files, TraceModel& model);
  // The tables it contributes to each rank's report from what it keeps in
  // ReportedTables::own (its own file's types), after the report's tables of
  // the reported records; null: none (a reader that fills the shared
  // reported tables, whose tables the report builds).
  void (*tables)(const ReportedTables& reported, const TableContext& context,
                 std::vector<core::ResultTable>& out) = nullptr;
};

// Every side-file reader, in the order they run (a reader may fill a table
// only where an earlier one left it empty).
const std::vector<SideFileReader>& SideFileReaders();

// The role of a file found in a producer's output folder: the first role, in
// registry order, one of whose patterns its name matches; "" none.
std::string_view RoleOfFile(std::string_view file_name);

// Runs every reader that has a file in `files`, in order.
void ReadSideFiles(RankFiles& files, TraceModel& model);

}  // namespace opscope::analyze

#endif  // OPSCOPE_ANALYZE_SIDE_FILES_H_
