#include "analyze/importers/ascend/task_time_importer.h"

#include <cctype>
#include <string>
#include <utility>

#include "analyze/importers/ascend/csv_columns.h"
#include "analyze/importers/ascend/op_type.h"
#include "analyze/names.h"
#include "opscope/opscope.h"

namespace opscope::analyze {
namespace {

// What a task is. A named task is a kernel (msprof writes N/A as the name of
// every task that is not one, docs/formats/ascend.md 5.2), its core from the kernel type
// under the names kernel_details.csv gives the same cores. An unnamed task is
// known by its type: copies and sets as such, and the stream's own event and
// notify records and waits, which compute nothing, as device waits.
struct TaskKind {
  std::string_view core;  // "" when not a kernel
  EventClass cls;
};

TaskKind KindOf(std::string_view type, std::string_view name, bool named) {
  if (named) {
    static constexpr std::pair<std::string_view, std::string_view> kCores[] = {
        {"KERNEL_AICORE", "AI_CORE"},  {"KERNEL_AIVEC", "AI_VECTOR_CORE"},
        {"KERNEL_AICPU", "AI_CPU"},    {"KERNEL_MIX_AIC", "MIX_AIC"},
        {"KERNEL_MIX_AIV", "MIX_AIV"},
    };
    std::string_view core = type;
    for (const auto& [from, to] : kCores) {
      if (type == from) core = to;
    }
    return {core, AscendTaskClass(name, "", type)};
  }
  std::string lower(type);
  for (char& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  const auto has = [&](const char* word) { return lower.find(word) != std::string::npos; };
  if (has("memcpy") || has("sdma")) return {"", EventClass::kMemcpy};
  if (has("memset")) return {"", EventClass::kMemset};
  if (has("event") || has("notify") || has("wait") || has("record")) {
    return {"", EventClass::kDeviceWait};
  }
  return {"", EventClass::kOther};
}

}  // namespace

Importer TaskTimeImporter() {
  return Importer{
      "ascend-task-time",
      "msprof's task_time_*.csv (torch_npu's task_time.csv copy)",
      {"task_time*.csv"},
      SniffTaskTime,
      [](Source& source, TraceModel& model) { ImportTaskTime(source, model); },
      nullptr,
      [](Source& source) {
        return MissingCsvColumns(source, {"kernel_name", "kernel_type", "task_start(us)"}, 2,
                                 "msprof's task_time_*.csv");
      },
  };
}

bool SniffTaskTime(Source& source) {
  std::string_view head = source.Peek(4096);
  head = head.substr(0, head.find('\n'));
  return head.find("kernel_name") != std::string_view::npos &&
         head.find("kernel_type") != std::string_view::npos &&
         head.find("task_start(us)") != std::string_view::npos;
}

void ImportTaskTime(Source& source, TraceModel& model) {
  CsvColumns r(source, {"kernel_name", "kernel_type", "task_start(us)"});
  const char* duration = r.FirstOf({"task_time(us)"});
  const bool has_stop = r.Has("task_stop(us)");
  if (duration == nullptr && !has_stop) {
    throw Error(ErrorCode::kInvalidInput,
                r.path() + ": line 1: no 'task_time(us)' or 'task_stop(us)' column");
  }
  while (r.Next()) {
    const int64_t start = r.Micros("task_start(us)");
    int64_t dur = duration ? r.Micros(duration) : -1;
    if (dur < 0 && has_stop) {
      const int64_t stop = r.Micros("task_stop(us)");
      if (stop >= 0 && start >= 0) dur = stop - start;
    }
    if (start < 0 || dur < 0) {
      throw Error(ErrorCode::kInvalidInput,
                  r.path() + ": line " + std::to_string(r.line()) +
                      ": a task without a start time and a duration (task_start(us), " +
                      "task_time(us) or task_stop(us))");
    }
    const std::string_view type = r.Text("kernel_type");
    std::string_view name = r.Text("kernel_name");
    const bool named = !AbsentField(name);
    if (!named) name = type;  // a task that is not a kernel: named by its type
    const TaskKind kind = KindOf(type, name, named);
    const std::string_view stream = r.Text("stream_id");
    model.Append(EventRow{
        .start_ns = start,
        .duration_ns = dur,
        .name = model.Intern(name),
        // A kernel's operator type comes from its name (AscendOpType), as for
        // trace_view.json's tasks; the kernel type says only its core.
        .category = named ? 0 : model.Intern(type),
        .track = model.TrackFor("Ascend Hardware", AbsentField(stream) ? "0" : stream),
        .cls = kind.cls,
        .kind = model.Intern(kind.core),
    });
  }
  for (auto& track : model.tracks) track.process = "Ascend Hardware";
  model.format = "ascend-task-time";
  CompleteAscendModel(model);
  model.source = r.path();
}

}  // namespace opscope::analyze
