// opscope._opscope: the C++ library as Python sees it (pybind11). The Python
// package (python/opscope) wraps it: DataFrames, the profiler's context
// managers, the torch hand-off. Everything here takes and returns plain types,
// numpy arrays and dicts; pandas is the package's business.
//
// Errors: every opscope::Error becomes the Python exception that
// opscope.errors maps its code to (set at import by _set_error_factory).
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>
#include <pybind11/stl/filesystem.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <condition_variable>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "analyze/analyze_files.h"
#include "analyze/diff.h"
#include "collect/recorder.h"
#include "core/cancel.h"
#include "core/text.h"
#include "opscope/opscope.h"
#include "report/analysis_report.h"
#include "report/analysis_tables.h"
#include "report/diff_tables.h"
#include "report/result_table.h"

namespace py = pybind11;

namespace opscope::python {
namespace {

py::object& ErrorFactory() {
  static py::object* factory = new py::object();  // never destroyed: outlives the interpreter
  return *factory;
}

const char* CodeName(ErrorCode code) {
  switch (code) {
    case ErrorCode::kInvalidArgument: return "invalid_argument";
    case ErrorCode::kInvalidInput: return "invalid_input";
    case ErrorCode::kIo: return "io";
    case ErrorCode::kUnsupported: return "unsupported";
    case ErrorCode::kResourceExhausted: return "resource_exhausted";
    case ErrorCode::kFailedPrecondition: return "failed_precondition";
    case ErrorCode::kInternal: return "internal";
  }
  return "internal";
}

// --- tables -------------------------------------------------------------------

// One column as analysis.json has it: its machine key (base units) and its
// values, numbers as a numpy array (int64 when every value is a whole number
// given as one and none is absent, else float64 with NaN for absent), text as
// a list of str (None for absent).
py::tuple ColumnOf(const report::ResultTable& table, size_t c) {
  const report::Column& column = table.columns[c];
  const double scale = column.scale;
  bool text = false, all_int = true;
  for (const auto& row : table.rows) {
    const report::Value& v = row[c];
    if (std::holds_alternative<std::string>(v)) text = true;
    if (!std::holds_alternative<int64_t>(v)) all_int = false;
  }
  const size_t n = table.rows.size();
  if (text) {
    py::list values(n);
    for (size_t r = 0; r < n; ++r) {
      const report::Value& v = table.rows[r][c];
      if (const auto* s = std::get_if<std::string>(&v)) {
        values[r] = py::str(*s);
      } else if (std::holds_alternative<std::monostate>(v)) {
        values[r] = py::none();
      } else {  // a number among text: as the CSV has it
        values[r] = py::str(report::CsvValue(v, column));
      }
    }
    return py::make_tuple(column.key, values);
  }
  if (all_int && scale == 1) {
    py::array_t<int64_t> values(static_cast<py::ssize_t>(n));
    auto out = values.mutable_unchecked<1>();
    for (size_t r = 0; r < n; ++r) out(r) = std::get<int64_t>(table.rows[r][c]);
    return py::make_tuple(column.key, values);
  }
  std::vector<double> scaled(n, std::nan(""));
  bool whole = scale != 1;  // a time in ns, a size in bytes: integers when they all are
  for (size_t r = 0; r < n; ++r) {
    const report::Value& v = table.rows[r][c];
    if (const auto* d = std::get_if<double>(&v)) scaled[r] = report::MachineNumber(*d, scale);
    if (const auto* i = std::get_if<int64_t>(&v)) {
      scaled[r] = report::MachineNumber(static_cast<double>(*i), scale);
    }
    whole = whole && std::isfinite(scaled[r]) && scaled[r] == std::floor(scaled[r]) &&
            std::fabs(scaled[r]) < 9e15;
  }
  if (whole) {
    py::array_t<int64_t> values(static_cast<py::ssize_t>(n));
    auto out = values.mutable_unchecked<1>();
    for (size_t r = 0; r < n; ++r) out(r) = static_cast<int64_t>(scaled[r]);
    return py::make_tuple(column.key, values);
  }
  return py::make_tuple(column.key,
                        py::array_t<double>(static_cast<py::ssize_t>(n), scaled.data()));
}

// [(section, title, notes, [(key, values), ...]), ...] in the tables' order.
py::list TablesOf(const std::vector<report::ResultTable>& tables) {
  py::list out;
  for (const auto& t : tables) {
    py::list columns;
    for (size_t c = 0; c < t.columns.size(); ++c) {
      if (t.columns[c].json) columns.append(ColumnOf(t, c));
    }
    out.append(py::make_tuple(t.section, t.title, t.notes, columns));
  }
  return out;
}

// --- analyses -----------------------------------------------------------------

struct PyAnalysis {
  analyze::AnalyzedSet set;

  // Tables with every row (the DataFrames), and as the CLI writes them (top
  // 20), each made when first asked for: analyze() returns without them, and a
  // notebook that reads two tables never holds the report's. Called with the
  // GIL held; it is released while a table set is made, so the once_flag (not
  // the GIL) keeps two threads from making the same one.
  const std::vector<report::ResultTable>& AllRows() { return Made(all_rows_once_, all_rows_, 0); }
  const std::vector<report::ResultTable>& ReportTables() {
    return Made(report_once_, report_tables_, 20);
  }

 private:
  const std::vector<report::ResultTable>& Made(std::once_flag& once,
                                               std::vector<report::ResultTable>& tables, int top) {
    py::gil_scoped_release release;
    std::call_once(once, [&] { tables = report::AnalysisTables(set, {.top = top}); });
    return tables;
  }
  std::once_flag all_rows_once_, report_once_;
  std::vector<report::ResultTable> all_rows_, report_tables_;
};

analyze::RooflineCeilings CeilingsFromDict(const py::dict& d) {
  analyze::RooflineCeilings c;
  c.device = d.contains("device") ? py::str(d["device"]).cast<std::string>() : "";
  c.source = d.contains("source") ? py::str(d["source"]).cast<std::string>() : "given in Python";
  if (d.contains("bytes_per_s")) c.bytes_per_second = d["bytes_per_s"].cast<double>();
  if (d.contains("flop_per_s")) {
    for (const auto& [dtype, rate] : d["flop_per_s"].cast<py::dict>()) {
      c.flops_per_second[py::str(dtype).cast<std::string>()] = rate.cast<double>();
    }
  }
  if (c.bytes_per_second < 0 || !std::isfinite(c.bytes_per_second)) {
    throw Error(ErrorCode::kInvalidArgument, "ceilings: bytes_per_s must be a finite rate >= 0");
  }
  for (const auto& [dtype, rate] : c.flops_per_second) {
    if (!(rate > 0) || !std::isfinite(rate)) {
      throw Error(ErrorCode::kInvalidArgument,
                  "ceilings: flop_per_s['" + dtype + "'] must be a finite rate > 0");
    }
  }
  return c;
}

// A path from Python is refused when it holds a NUL byte, as open() refuses
// it: the system would read it only up to the NUL, another file's name. (The
// package checks every path first; std::filesystem::path arguments are
// refused by pybind11 itself.)
const std::string& CheckedPath(const std::string& path, std::string_view what) {
  if (const size_t nul = path.find('\0'); nul != std::string::npos) {
    throw Error(ErrorCode::kInvalidArgument,
                std::string(what) + ": the path holds a NUL byte at " + std::to_string(nul) +
                    ", which no file name can hold: '" + core::EscapeForTerminal(path) + "'");
  }
  return path;
}

// A flag the package sets to stop an analysis running in another Python
// thread (the first analyze() of a process runs beside pandas' import).
struct CancelFlag {
  std::atomic<bool> set{false};
};

// Runs `work` on a thread of its own, without the GIL, while the calling
// thread looks every 50 ms for a signal (PyErr_CheckSignals: Ctrl-C, in the
// main thread) and for `flag`. A signal whose handler raises (KeyboardInterrupt)
// sets the flag; the work stops at its next cancellation point (core/cancel.h:
// each chunk read, each pass), and the exception is raised once it has.
template <typename Result>
Result Interruptibly(const std::function<Result()>& work, CancelFlag* given) {
  CancelFlag own;
  std::atomic<bool>& flag = given != nullptr ? given->set : own.set;
  std::mutex mutex;
  std::condition_variable finished;
  bool done = false;
  std::optional<Result> result;
  std::exception_ptr failure;
  std::thread worker([&] {
    core::CancelScope scope(&flag);
    try {
      result.emplace(work());
    } catch (...) {
      failure = std::current_exception();
    }
    std::lock_guard lock(mutex);
    done = true;
    finished.notify_all();
  });
  bool interrupted = false;
  while (true) {
    {
      py::gil_scoped_release release;
      std::unique_lock lock(mutex);
      if (finished.wait_for(lock, std::chrono::milliseconds(50), [&] { return done; })) break;
    }
    if (PyErr_CheckSignals() != 0) {
      interrupted = true;
      flag = true;
      break;
    }
  }
  {
    py::gil_scoped_release release;
    worker.join();
  }
  if (interrupted) throw py::error_already_set();
  if (failure) std::rethrow_exception(failure);
  return std::move(*result);
}

std::shared_ptr<PyAnalysis> Analyze(const std::vector<std::string>& inputs,
                                    const py::object& ceilings, bool keep_events,
                                    CancelFlag* cancel) {
  analyze::AnalyzeOptions options;
  for (const auto& input : inputs) options.inputs.push_back(CheckedPath(input, "analyze"));
  options.keep_models = keep_events;
  if (py::isinstance<py::dict>(ceilings)) {
    options.ceilings = CeilingsFromDict(ceilings.cast<py::dict>());
  } else if (py::isinstance<py::str>(ceilings)) {
    options.ceilings =
        analyze::LoadRooflineCeilings(CheckedPath(ceilings.cast<std::string>(), "ceilings"));
  } else if (!ceilings.is_none()) {
    throw Error(ErrorCode::kInvalidArgument, "ceilings: a path to ceilings.json or a dict");
  }
  if (options.inputs.empty()) {
    throw Error(ErrorCode::kInvalidArgument, "analyze: no trace given");
  }
  auto out = std::make_shared<PyAnalysis>();
  out->set =
      Interruptibly<analyze::AnalyzedSet>([&] { return analyze::AnalyzeFiles(options); }, cancel);
  return out;
}

py::list Traces(const PyAnalysis& a) {
  py::list out;
  for (const auto& t : a.set.traces) {
    py::dict d;
    d["path"] = t.path;
    d["rank"] = t.rank;
    d["format"] = t.format;
    d["events"] = t.events;
    d["tracks"] = t.tracks;
    d["device"] = t.analysis.device;
    d["import_ms"] = t.import_ms;
    d["side_files_ms"] = t.side_files_ms;
    d["analysis_ms"] = t.analysis_ms;
    d["has_events"] = t.model != nullptr;
    out.append(d);
  }
  return out;
}

py::list Findings(const PyAnalysis& a) {
  py::list out;
  for (const auto& t : a.set.traces) {
    for (const auto& f : t.findings) {
      py::dict d;
      d["trace"] = t.path;
      d["rank"] = t.rank;
      d["severity"] = analyze::Name(f.severity);
      d["rule"] = f.id;
      d["title"] = f.title;
      d["evidence"] = f.evidence;
      d["action"] = f.action;
      d["saving_ns"] = f.saving_ns >= 0 ? py::cast(f.saving_ns) : py::none();
      out.append(d);
    }
  }
  return out;
}

// --- events -------------------------------------------------------------------

const analyze::TraceModel& ModelOf(const PyAnalysis& a, size_t trace) {
  if (trace >= a.set.traces.size()) {
    throw Error(ErrorCode::kInvalidArgument, "events: no trace " + std::to_string(trace));
  }
  const auto& model = a.set.traces[trace].model;
  if (model == nullptr) {
    throw Error(ErrorCode::kFailedPrecondition,
                "events: the trace's events were not kept (opscope.analyze(..., events=False))");
  }
  return *model;
}

// The model's strings, for categorical columns whose codes are string ids.
py::list Strings(const PyAnalysis& a, size_t trace) {
  const analyze::TraceModel& m = ModelOf(a, trace);
  py::list out(m.string_count());
  for (size_t i = 0; i < m.string_count(); ++i) {
    const std::string_view s = m.String(static_cast<uint32_t>(i));
    // Traces hold bytes that are not always UTF-8: replace rather than fail.
    out[i] = py::reinterpret_steal<py::object>(
        PyUnicode_DecodeUTF8(s.data(), static_cast<py::ssize_t>(s.size()), "replace"));
  }
  return out;
}

py::dict Tracks(const PyAnalysis& a, size_t trace) {
  const analyze::TraceModel& m = ModelOf(a, trace);
  py::list process, thread, pid, tid;
  for (const auto& t : m.tracks) {
    process.append(t.process);
    thread.append(t.thread);
    pid.append(t.pid);
    tid.append(t.tid);
  }
  py::dict d;
  d["process"] = process;
  d["thread"] = thread;
  d["pid"] = pid;
  d["tid"] = tid;
  return d;
}

py::list ClassNames() {
  py::list out;
  for (int c = 0; c <= static_cast<int>(analyze::EventClass::kOther); ++c) {
    out.append(analyze::Name(static_cast<analyze::EventClass>(c)));
  }
  return out;
}

template <typename Column>
py::array Gather(const Column& column, const std::vector<uint32_t>* rows, const py::object& owner) {
  using T = typename Column::value_type;
  if constexpr (requires { column.data(); }) {
    if (rows == nullptr && column.size() > 0) {  // a view on the model's column, kept by `owner`
      return py::array_t<T>(static_cast<py::ssize_t>(column.size()), column.data(), owner);
    }
  }
  // Filtered, or a count column (stored less its default): a copy.
  const size_t n = rows == nullptr ? column.size() : rows->size();
  py::array_t<T> out(static_cast<py::ssize_t>(n));
  T* dst = out.mutable_data();
  for (size_t i = 0; i < n; ++i) dst[i] = column[rows == nullptr ? i : (*rows)[i]];
  return out;
}

// The events of one trace whose span meets [start_ns, end_ns), of the given
// classes, category and name (each optional), as numpy columns: views on the
// model when nothing is filtered, else gathered copies. String columns are
// codes into Strings(); `cls` codes into ClassNames().
py::dict Events(const std::shared_ptr<PyAnalysis>& a, size_t trace, std::optional<int64_t> start_ns,
                std::optional<int64_t> end_ns, std::optional<std::vector<std::string>> classes,
                std::optional<std::string> category, std::optional<std::string> name) {
  const analyze::TraceModel& m = ModelOf(*a, trace);
  std::vector<bool> keep_class(static_cast<size_t>(analyze::EventClass::kOther) + 1, !classes);
  if (classes) {
    for (const auto& wanted : *classes) {
      bool known = false;
      for (size_t c = 0; c < keep_class.size(); ++c) {
        if (wanted == analyze::Name(static_cast<analyze::EventClass>(c))) {
          keep_class[c] = known = true;
        }
      }
      if (!known) {
        throw Error(ErrorCode::kInvalidArgument,
                    "events: unknown event class '" + wanted +
                        "' (host_op, annotation, step, kernel, memcpy, memset, runtime, sync, "
                        "device_annotation, python, derived, other)");
      }
    }
  }
  // A string filter matches an interned id: find it once.
  const auto id_of = [&](const std::optional<std::string>& text) -> int64_t {
    if (!text) return -1;
    for (size_t i = 0; i < m.string_count(); ++i) {
      if (m.String(static_cast<uint32_t>(i)) == *text) return static_cast<int64_t>(i);
    }
    return -2;  // no event has it
  };
  const int64_t category_id = id_of(category), name_id = id_of(name);
  const bool filtered = start_ns || end_ns || classes || category || name;
  std::vector<uint32_t> rows;
  if (filtered) {
    py::gil_scoped_release release;
    const int64_t lo = start_ns.value_or(INT64_MIN), hi = end_ns.value_or(INT64_MAX);
    for (size_t i = 0; i < m.size(); ++i) {
      const int64_t s = m.start_ns[i], e = s + m.duration_ns[i];
      if (e < lo || s >= hi) continue;
      if (!keep_class[static_cast<size_t>(m.cls[i])]) continue;
      if (category_id != -1 && m.category[i] != category_id) continue;
      if (name_id != -1 && m.name[i] != name_id) continue;
      rows.push_back(static_cast<uint32_t>(i));
    }
  }
  const std::vector<uint32_t>* selected = filtered ? &rows : nullptr;
  const py::object owner = py::cast(a);
  py::dict d;
  d["start_ns"] = Gather(m.start_ns, selected, owner);
  d["duration_ns"] = Gather(m.duration_ns, selected, owner);
  d["name"] = Gather(m.name, selected, owner);
  d["category"] = Gather(m.category, selected, owner);
  {  // one byte an event: always a copy (the model's enum is not a numpy type)
    py::array_t<uint8_t> cls(static_cast<py::ssize_t>(selected ? rows.size() : m.size()));
    uint8_t* dst = cls.mutable_data();
    for (size_t i = 0; i < static_cast<size_t>(cls.size()); ++i) {
      dst[i] = static_cast<uint8_t>(m.cls[selected ? rows[i] : i]);
    }
    d["cls"] = cls;
  }
  d["track"] = Gather(m.track, selected, owner);
  d["flops"] = Gather(m.flops, selected, owner);
  d["bytes"] = Gather(m.bytes, selected, owner);
  d["correlation"] = Gather(m.correlation, selected, owner);
  d["external_id"] = Gather(m.external_id, selected, owner);
  d["module"] = Gather(m.module, selected, owner);
  d["shapes"] = Gather(m.shapes, selected, owner);
  d["dtype"] = Gather(m.dtype, selected, owner);
  return d;
}

// --- diff ---------------------------------------------------------------------

py::dict Diff(const std::string& before, const std::string& after, int top,
              std::optional<double> fail_if_slower) {
  if (fail_if_slower && (!std::isfinite(*fail_if_slower) || *fail_if_slower < 0)) {
    throw Error(ErrorCode::kInvalidArgument, "fail_if_slower must be a finite percentage >= 0");
  }
  CheckedPath(before, "diff");
  CheckedPath(after, "diff");
  const report::DiffOutcome out = Interruptibly<report::DiffOutcome>(
      [&] { return report::DiffFiles(before, after, top, fail_if_slower); }, nullptr);
  py::list diffs;
  for (const auto& d : out.diffs) {
    py::dict x;
    x["basis"] = d.basis;
    x["before_ns"] = d.before_ns;
    x["after_ns"] = d.after_ns;
    x["change_pct"] = d.change_pct;
    x["before_steps"] = d.before_steps;
    x["after_steps"] = d.after_steps;
    x["ci_low_pct"] = d.has_interval ? py::cast(d.ci_low_pct) : py::none();
    x["ci_high_pct"] = d.has_interval ? py::cast(d.ci_high_pct) : py::none();
    x["p_value"] = d.p_value >= 0 ? py::cast(d.p_value) : py::none();
    x["verdict"] = d.verdict;
    diffs.append(x);
  }
  py::dict result;
  result["tables"] = TablesOf(out.tables);
  result["diffs"] = diffs;
  result["failed"] = out.failed;
  result["failure"] = out.failure;
  return result;
}

// --- profiling ----------------------------------------------------------------

// A scope's state between __enter__ and __exit__, on its thread. Python's
// `with` ends scopes in last-in first-out order on the thread that began them.
struct OpenScope {
  const void* payload;
  uint64_t begin;
  uint32_t generation;
};

// Ends a scope into the trace (or counts it dropped) at `end`.
void EndScope(const OpenScope& s, uint64_t end) {
  if (__builtin_expect(s.generation == 0, 1)) return;
  if (s.payload == nullptr) {
    detail::CountDrop(s.generation);
    return;
  }
  detail::Append(s.generation,
                 detail::Record{s.payload, s.begin, end,
                                static_cast<uint64_t>(detail::RecordKind::kDynamicScope)});
}

// Ends every scope still open, innermost first, now.
void EndAll(std::vector<OpenScope>& open) {
  const uint64_t end = open.empty() ? 0 : detail::Ticks();
  while (!open.empty()) {
    EndScope(open.back(), end);
    open.pop_back();
  }
}

// A thread's open scopes. Those still open when the thread exits (entered
// with __enter__ and never exited) end there, into the trace, as the C API's
// do (opscope_c.h); the recorder's thread state is made before this object,
// so it outlives it and takes those last records (collect/recorder.h).
struct OpenScopes {
  std::vector<OpenScope> open;
  ~OpenScopes() { EndAll(open); }
};
thread_local bool t_prepared = false;

std::vector<OpenScope>& OpenOnThisThread() {
  if (__builtin_expect(!t_prepared, 0)) collect::PrepareThread(), t_prepared = true;
  static thread_local OpenScopes scopes;
  return scopes.open;
}

// A Python thread's end as Python sees it: the values of a threading.local
// are released when the thread's state is cleared, before Thread.join()
// returns (C++ thread-locals are destroyed later, after join). One of these,
// held there, ends the thread's open scopes then, so a profiler stopped right
// after join() has them.
struct ThreadEnd {
  std::thread::id thread = std::this_thread::get_id();
  ~ThreadEnd() {
    if (thread == std::this_thread::get_id()) EndAll(OpenOnThisThread());
  }
};
py::object& ThreadLocal() {
  static py::object* local = new py::object();  // never destroyed: outlives the interpreter
  return *local;
}
thread_local bool t_watched = false;

// Called with the GIL held (from __enter__), once per thread.
void WatchThreadEnd() {
  if (__builtin_expect(t_watched, 1)) return;
  t_watched = true;
  if (ThreadLocal()) {
    ThreadLocal().attr("thread_end") =
        py::cast(new ThreadEnd(), py::return_value_policy::take_ownership);
  }
}

class Scope {
 public:
  Scope(std::string name, std::string shapes, std::string dtype, int64_t flops, int64_t bytes,
        std::string category, std::string layout, std::string module)
      : name_(std::move(name)),
        shapes_(std::move(shapes)),
        dtype_(std::move(dtype)),
        category_(std::move(category)),
        layout_(std::move(layout)),
        module_(std::move(module)) {
    args_.shapes = shapes_;
    args_.dtype = dtype_;
    args_.flops = flops;
    args_.bytes = bytes;
    args_.category = category_.empty() ? nullptr : category_.c_str();
    args_.layout = layout_;
    args_.module = module_;
  }
  void Enter() {
    WatchThreadEnd();
    std::vector<OpenScope>& open = OpenOnThisThread();
    const uint32_t generation = detail::g_generation.load(std::memory_order_relaxed);
    if (__builtin_expect(generation == 0, 1)) {
      open.push_back({nullptr, 0, 0});
      return;
    }
    const void* payload = detail::CopyPayload(generation, name_, args_);
    open.push_back({payload, detail::Ticks(), generation});
  }
  void Exit() {
    std::vector<OpenScope>& open = OpenOnThisThread();
    if (open.empty()) return;  // __exit__ without __enter__: nothing to end
    const OpenScope s = open.back();
    open.pop_back();
    if (__builtin_expect(s.generation == 0, 1)) return;
    EndScope(s, detail::Ticks());
  }
  const std::string& name() const { return name_; }

 private:
  std::string name_, shapes_, dtype_, category_, layout_, module_;
  ScopeArgs args_;
};

struct PyProfiler {
  std::unique_ptr<Profiler> profiler;
};

}  // namespace
}  // namespace opscope::python

PYBIND11_MODULE(_opscope, m) {
  using namespace opscope;          // NOLINT: the module's body names much of it
  using namespace opscope::python;  // NOLINT
  m.doc() = "opscope's C++ library (use the opscope package, not this module)";
  m.attr("version") = OPSCOPE_VERSION_STRING;

  m.def("_set_error_factory", [](py::object factory) { ErrorFactory() = std::move(factory); });
  py::register_exception_translator([](std::exception_ptr p) {
    try {
      if (p) std::rethrow_exception(p);
    } catch (const core::Cancelled&) {
      PyErr_SetNone(PyExc_KeyboardInterrupt);  // the package set the flag on Ctrl-C
    } catch (const Error& e) {
      if (ErrorFactory().is_none() || !ErrorFactory()) {
        PyErr_SetString(PyExc_RuntimeError, e.what());
        return;
      }
      py::object exc = ErrorFactory()(CodeName(e.code()), e.what());
      PyErr_SetObject(reinterpret_cast<PyObject*>(Py_TYPE(exc.ptr())), exc.ptr());
    }
  });

  py::class_<PyAnalysis, std::shared_ptr<PyAnalysis>>(m, "NativeAnalysis")
      .def("traces", &Traces)
      .def("findings", &Findings)
      .def("tables", [](PyAnalysis& a) { return TablesOf(a.AllRows()); })
      .def("report_tables", [](PyAnalysis& a) { return TablesOf(a.ReportTables()); })
      .def("strings", &Strings)
      .def("tracks", &Tracks)
      .def("events", &Events, py::arg("trace"), py::arg("start_ns") = py::none(),
           py::arg("end_ns") = py::none(), py::arg("classes") = py::none(),
           py::arg("category") = py::none(), py::arg("name") = py::none())
      .def("html",
           [](PyAnalysis& a) { return report::AnalysisHtml(a.set.traces, a.ReportTables()); })
      .def("fragment_html",
           [](const PyAnalysis& a) { return report::AnalysisFragmentHtml(a.set.traces); })
      .def("save", [](PyAnalysis& a, const std::filesystem::path& dir) {
        const auto& tables = a.ReportTables();
        const auto& every_row = a.AllRows();
        py::gil_scoped_release release;
        report::WriteAnalysisReport(dir, a.set.traces, tables, every_row);
      });
  py::class_<CancelFlag>(m, "CancelFlag").def(py::init<>()).def("set", [](CancelFlag& f) {
    f.set = true;
  });
  m.def("analyze", &Analyze, py::arg("inputs"), py::arg("ceilings") = py::none(),
        py::arg("keep_events") = true, py::arg("cancel") = nullptr);
  m.def("class_names", &ClassNames);
  m.def("diff", &Diff, py::arg("before"), py::arg("after"), py::arg("top") = 20,
        py::arg("fail_if_slower") = py::none());

  py::class_<ThreadEnd>(m, "_ThreadEnd");
  ThreadLocal() = py::module_::import("threading").attr("local")();
  py::class_<Scope>(m, "Scope")
      // The common case first: a name alone resolves without keyword matching.
      .def(py::init(
               [](std::string name) { return Scope(std::move(name), {}, {}, -1, -1, {}, {}, {}); }),
           py::arg("name"))
      .def(py::init<std::string, std::string, std::string, int64_t, int64_t, std::string,
                    std::string, std::string>(),
           py::arg("name"), py::kw_only(), py::arg("shapes") = "", py::arg("dtype") = "",
           py::arg("flops") = -1, py::arg("bytes") = -1, py::arg("category") = "",
           py::arg("layout") = "", py::arg("module") = "")
      .def("__enter__",
           [](py::object self) {
             self.cast<Scope&>().Enter();
             return self;
           })
      .def("__exit__", [](Scope& s, py::args) { s.Exit(); })
      .def_property_readonly("name", &Scope::name);
  m.def("is_recording", &IsRecording);
  m.def("instant", [](std::string_view name) { Instant(name); });
  m.def("counter", [](std::string_view name, double value) { Counter(name, value); });
  m.def("set_thread_name", [](std::string_view name) { SetThreadName(name); });

  py::class_<PyProfiler>(m, "NativeProfiler")
      .def(py::init([](const std::filesystem::path& output_dir, std::optional<py::tuple> schedule,
                       bool record_shapes, bool gzip, size_t max_buffer_bytes,
                       const std::string& worker_name) {
             ProfilerOptions o;
             o.output_dir = output_dir;
             if (schedule) {
               if (schedule->size() != 5) {
                 throw Error(ErrorCode::kInvalidArgument,
                             "schedule: (skip_first, wait, warmup, active, repeat)");
               }
               Schedule s;
               s.skip_first = (*schedule)[0].cast<int64_t>();
               s.wait = (*schedule)[1].cast<int64_t>();
               s.warmup = (*schedule)[2].cast<int64_t>();
               s.active = (*schedule)[3].cast<int64_t>();
               s.repeat = (*schedule)[4].cast<int64_t>();
               s.Validate();
               o.schedule = s;
             }
             o.record_shapes = record_shapes;
             o.gzip = gzip;
             if (max_buffer_bytes > 0) o.max_buffer_bytes = max_buffer_bytes;
             o.worker_name = worker_name;
             return PyProfiler{std::make_unique<Profiler>(std::move(o))};
           }),
           py::arg("output_dir"), py::arg("schedule"), py::arg("record_shapes"), py::arg("gzip"),
           py::arg("max_buffer_bytes"), py::arg("worker_name"))
      .def("start", [](PyProfiler& p) { p.profiler->Start(); })
      .def("step", [](PyProfiler& p) { p.profiler->Step(); })
      .def("stop", [](PyProfiler& p) { p.profiler->Stop(); })
      .def_property_readonly("step_num", [](const PyProfiler& p) { return p.profiler->step_num(); })
      .def_property_readonly(
          "current_action",
          [](const PyProfiler& p) { return std::string(ToString(p.profiler->current_action())); })
      .def_property_readonly("trace_files", [](const PyProfiler& p) {
        std::vector<std::string> out;
        for (const auto& f : p.profiler->trace_files()) out.push_back(f.string());
        return out;
      });
}
