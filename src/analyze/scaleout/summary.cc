#include "analyze/scaleout/summary.h"

#include <simdjson.h>
#include <zlib.h>

#include <algorithm>
#include <charconv>
#include <unordered_map>

#include "analyze/multirank.h"
#include "analyze/names.h"
#include "analyze/source.h"
#include "core/json_writer.h"
#include "core/output.h"
#include "opscope/opscope.h"

namespace opscope::analyze {
namespace {

constexpr std::array kClasses = AllEventClasses();

int64_t StepNumber(std::string_view name) {
  const auto hash = name.rfind('#');
  if (hash == std::string_view::npos) return -1;
  int64_t n = -1;
  const char* end = name.data() + name.size();
  const auto [ptr, ec] = std::from_chars(name.data() + hash + 1, end, n);
  return ec == std::errc() && ptr == end && n >= 0 ? n : -1;
}

// Bytes per element of a tensor type as PyTorch names it in collective
// records (c10 scalar type names), 0 unknown.
int64_t DtypeBytes(std::string_view t) {
  if (t == "Double" || t == "Long" || t == "ComplexFloat") return 8;
  if (t == "Float" || t == "Int") return 4;
  if (t == "Half" || t == "BFloat16" || t == "Short") return 2;
  if (t == "Char" || t == "Byte" || t == "Bool" || t.starts_with("Float8")) return 1;
  return 0;
}

}  // namespace

std::string_view CollectiveOp(std::string_view name) {
  std::string n;
  n.reserve(name.size());
  for (const char c : BaseName(name)) {
    if (std::isalnum(static_cast<unsigned char>(c))) {
      n.push_back(static_cast<char>(std::tolower(static_cast<unsigned char>(c))));
    }
  }
  if (n.rfind("notify", 0) == 0) return {};
  // Longest names first: "allreduce" holds "reduce", "sendrecv" holds "send".
  for (const std::string_view op : {"reducescatter", "allreduce", "allgather", "alltoall",
                                    "sendrecv", "broadcast", "barrier", "reduce", "send", "recv"}) {
    if (n.find(op) != std::string::npos) return op;
  }
  return {};
}

RankTraceSummary SummarizeTrace(const TraceModel& model, const Analysis& analysis, int rank,
                                const std::string& path) {
  return SummarizeTrace(
      model, analysis,
      SummarizeRank(model, rank, analysis.Ran("steps") ? &analysis.step_summary : nullptr), path);
}

RankTraceSummary SummarizeTrace(const TraceModel& model, const Analysis& analysis,
                                const RankSummary& r, const std::string& path) {
  RankTraceSummary s;
  s.rank = r.rank;
  s.path = path;
  s.format = model.format;
  s.device = analysis.device;
  s.events = static_cast<int64_t>(model.size());
  s.compute_ns = r.compute_ns;
  s.communication_ns = r.communication_ns;
  s.overlap_ns = r.overlap_ns;
  s.steps_complete = r.steps;
  s.mean_step_ns = r.mean_step_ns;
  if (model.size() > 0) {
    s.begin_ns = INT64_MAX, s.end_ns = INT64_MIN;
    for (size_t e = 0; e < model.size(); ++e) {
      s.begin_ns = std::min(s.begin_ns, model.start_ns[e]);
      s.end_ns = std::max(s.end_ns, model.start_ns[e] + model.duration_ns[e]);
    }
  }
  for (const StepBreakdown& b : analysis.steps) {
    s.steps.push_back({StepNumber(b.name), b.name, b.begin_ns, b.duration_ns, b.compute_ns,
                       b.communication_ns, b.memory_ns, b.idle_ns, b.status});
  }

  // Operators: the rows of op_stats, with every call's duration in a sketch;
  // each event's row is found once per (name, class).
  const size_t n_ops = analysis.operators.size();
  std::unordered_map<std::string_view, std::vector<std::pair<EventClass, uint32_t>>> by_name;
  for (size_t i = 0; i < n_ops; ++i) {
    by_name[analysis.operators[i].name].push_back({analysis.operators[i].cls, uint32_t(i)});
  }
  std::vector<uint32_t> name_op(model.string_count() * kClasses.size(), UINT32_MAX - 1);
  const auto op_of = [&](size_t e) {
    uint32_t& slot = name_op[size_t{model.name[e]} * kClasses.size() + size_t(model.cls[e])];
    if (slot == UINT32_MAX - 1) {
      slot = UINT32_MAX;
      const auto at = by_name.find(model.String(model.name[e]));
      if (at != by_name.end()) {
        for (const auto& [cls, i] : at->second) {
          if (cls == model.cls[e]) slot = i;
        }
      }
    }
    return slot;
  };
  // Each call straight into its operator's sketch: no array of durations.
  std::vector<SummaryOperator> ops(n_ops);
  for (size_t i = 0; i < n_ops; ++i) {
    const OpStats& o = analysis.operators[i];
    ops[i].name = o.name;
    ops[i].cls = o.cls;
    ops[i].self_ns = o.self_ns;
  }
  for (size_t e = 0; e < model.size(); ++e) {
    const uint32_t op = op_of(e);
    if (op == UINT32_MAX) continue;
    SummaryOperator& out = ops[op];
    out.durations.Add(model.duration_ns[e]);
    ++out.count;
    out.total_ns += model.duration_ns[e];
  }
  name_op = {};
  // The most time first (host operators by self time, the rest by total), by
  // name and class on ties, so the kept set does not depend on input order.
  const auto weight = [](const SummaryOperator& o) {
    return o.cls == EventClass::kHostOp ? o.self_ns : o.total_ns;
  };
  std::sort(ops.begin(), ops.end(), [&](const SummaryOperator& a, const SummaryOperator& b) {
    if (weight(a) != weight(b)) return weight(a) > weight(b);
    if (a.name != b.name) return a.name < b.name;
    return a.cls < b.cls;
  });
  if (ops.size() > kSummaryMaxOperators) {
    std::vector<SummaryOperator> folded(kClasses.size());
    for (size_t i = kSummaryMaxOperators; i < ops.size(); ++i) {
      SummaryOperator& f = folded[size_t(ops[i].cls)];
      f.cls = ops[i].cls;
      f.count += ops[i].count;
      f.total_ns += ops[i].total_ns;
      f.self_ns += ops[i].self_ns;
      f.folded += 1;
      f.durations.Merge(ops[i].durations);
    }
    ops.resize(kSummaryMaxOperators);
    for (SummaryOperator& f : folded) {
      if (f.folded == 0) continue;
      f.name = "(" + std::to_string(f.folded) + " other operators)";
      ops.push_back(std::move(f));
    }
  }
  s.operators = std::move(ops);

  // Collective calls on the device, in time order, with what PyTorch recorded
  // about each (on the kernel, or on the host op that launched it: the same
  // External id).
  std::vector<std::string_view> op_of_name(model.string_count());
  std::vector<bool> judged(model.string_count(), false);
  std::vector<uint32_t> calls;
  for (size_t e = 0; e < model.size(); ++e) {
    if (model.cls[e] != EventClass::kCommunication) continue;
    const uint32_t name = model.name[e];
    if (!judged[name]) {
      judged[name] = true;
      op_of_name[name] = CollectiveOp(model.String(name));
    }
    if (!op_of_name[name].empty()) calls.push_back(static_cast<uint32_t>(e));
  }
  std::stable_sort(calls.begin(), calls.end(),
                   [&](uint32_t a, uint32_t b) { return model.start_ns[a] < model.start_ns[b]; });
  const auto& args = model.collective_args;
  std::unordered_map<int64_t, size_t> host_args;  // External id -> args of a host event
  for (size_t i = 0; i < args.size(); ++i) {
    const uint32_t e = args[i].event;
    if (!IsDevice(model.cls[e]) && model.external_id[e] >= 0) {
      host_args.try_emplace(model.external_id[e], i);
    }
  }
  const auto args_of = [&](uint32_t e) -> const TraceModel::CollectiveArgs* {
    const auto at = std::lower_bound(args.begin(), args.end(), e,
                                     [](const auto& a, uint32_t ev) { return a.event < ev; });
    if (at != args.end() && at->event == e) return &*at;
    if (model.external_id[e] >= 0) {
      const auto h = host_args.find(model.external_id[e]);
      if (h != host_args.end()) return &args[h->second];
    }
    return nullptr;
  };
  std::unordered_map<std::string_view, uint32_t> op_index, group_index;
  const auto intern = [](auto& index, std::vector<std::string>& strings, std::string_view text) {
    auto [at, added] = index.try_emplace(text, static_cast<uint32_t>(strings.size()));
    if (added) strings.emplace_back(text);
    return at->second;
  };
  std::unordered_map<uint32_t, int64_t> next_seq;  // per group: positions
  bool all_seq = !calls.empty();
  s.collectives.reserve(calls.size());
  for (const uint32_t e : calls) {
    const TraceModel::CollectiveArgs* a = args_of(e);
    std::string_view op = op_of_name[model.name[e]];
    if (a != nullptr && a->op != 0) {
      const std::string_view named = CollectiveOp(model.String(a->op));
      if (!named.empty()) op = named;
    }
    SummaryCollective c;
    c.op = intern(op_index, s.ops, op);
    c.group = intern(group_index, s.groups,
                     a != nullptr && a->group != 0 ? model.String(a->group) : std::string_view());
    c.start_ns = model.start_ns[e];
    c.duration_ns = model.duration_ns[e];
    c.bytes = model.bytes[e] >= 0 ? model.bytes[e] : -1;
    if (a != nullptr && c.bytes < 0) {
      const int64_t elements = std::max(a->in_nelems, a->out_nelems);
      const uint32_t dtype = model.dtype[a->event];  // beside the arguments
      const int64_t size = dtype != 0 ? DtypeBytes(model.String(dtype)) : 0;
      if (elements >= 0 && size > 0) c.bytes = elements * size;
    }
    c.seq = next_seq[c.group]++;
    if (a == nullptr || a->seq < 0) all_seq = false;
    s.collectives.push_back(c);
  }
  // The trace's own sequence numbers, when every call has one and no two
  // calls of a group share one (else positions: a call must be one row).
  if (all_seq) {
    std::vector<std::pair<uint32_t, int64_t>> keys;
    for (size_t i = 0; i < calls.size(); ++i)
      keys.push_back({s.collectives[i].group, args_of(calls[i])->seq});
    std::sort(keys.begin(), keys.end());
    if (std::adjacent_find(keys.begin(), keys.end()) == keys.end()) {
      for (size_t i = 0; i < calls.size(); ++i) s.collectives[i].seq = args_of(calls[i])->seq;
      s.seq_from_trace = true;
    }
  }
  if (s.groups.empty()) s.groups.push_back("");
  return s;
}

// ---------------------------------------------------------------------------
// The document.

std::string SerializeSummary(const RankTraceSummary& s) {
  std::string out;
  core::JsonWriter w(out);
  w.BeginObject();
  w.Member("kind", kSummaryKind).Member("version", s.version);
  w.Member("rank", s.rank).Member("path", s.path).Member("format", s.format);
  w.Member("device", s.device).Member("events", s.events);
  w.Member("begin_ns", s.begin_ns).Member("end_ns", s.end_ns);
  w.Member("compute_ns", s.compute_ns).Member("communication_ns", s.communication_ns);
  w.Member("overlap_ns", s.overlap_ns).Member("steps_complete", s.steps_complete);
  w.Member("mean_step_ns", s.mean_step_ns);
  w.Member("sketch_relative_error", QuantileSketch::kRelativeError);
  w.Key("steps").BeginArray();
  for (const SummaryStep& t : s.steps) {
    w.BeginArray().Int(t.number).String(t.name).Int(t.begin_ns).Int(t.duration_ns);
    w.Int(t.compute_ns).Int(t.communication_ns).Int(t.memory_ns).Int(t.idle_ns);
    w.String(t.status).EndArray();
  }
  w.EndArray();
  w.Key("operators").BeginArray();
  for (const SummaryOperator& o : s.operators) {
    w.BeginArray().String(o.name).String(Name(o.cls)).Int(o.count).Int(o.total_ns);
    w.Int(o.self_ns).Int(o.folded).Int(o.durations.min()).Int(o.durations.max());
    w.BeginArray();
    for (const auto& [bucket, n] : o.durations.buckets()) w.Int(bucket).Int(n);
    w.EndArray().EndArray();
  }
  w.EndArray();
  w.Key("groups").BeginArray();
  for (const std::string& g : s.groups) w.String(g);
  w.EndArray();
  w.Key("ops").BeginArray();
  for (const std::string& o : s.ops) w.String(o);
  w.EndArray();
  w.Member("seq_from_trace", s.seq_from_trace);
  // Columns: group, op, seq, bytes, start_ns, duration_ns.
  w.Key("collectives").BeginArray();
  for (const SummaryCollective& c : s.collectives) {
    w.BeginArray().Int(c.group).Int(c.op).Int(c.seq).Int(c.bytes).Int(c.start_ns);
    w.Int(c.duration_ns).EndArray();
  }
  w.EndArray();
  w.EndObject();
  return out;
}

namespace {

using simdjson::dom::array;
using simdjson::dom::element;
using simdjson::dom::object;

struct Reader {
  const std::string& where;
  [[noreturn]] void Fail(const std::string& field, const std::string& what) const {
    throw Error(ErrorCode::kInvalidInput, where + ": field \"" + field + "\": " + what);
  }
  element Get(object o, const char* key) const {
    element e;
    if (o[key].get(e)) Fail(key, "missing");
    return e;
  }
  int64_t Int(element e, const std::string& field, int64_t lo = INT64_MIN) const {
    int64_t v = 0;
    if (e.get_int64().get(v)) Fail(field, "not an integer");
    if (v < lo) Fail(field, std::to_string(v) + " is below " + std::to_string(lo));
    return v;
  }
  std::string Str(element e, const std::string& field) const {
    std::string_view v;
    if (e.get_string().get(v)) Fail(field, "not a string");
    return std::string(v);
  }
  array Arr(element e, const std::string& field) const {
    array a;
    if (e.get_array().get(a)) Fail(field, "not an array");
    return a;
  }
  // Row `i` of table `field`, with exactly n cells.
  std::vector<element> Row(element e, const std::string& field, size_t i, size_t n) const {
    const std::string at = field + "[" + std::to_string(i) + "]";
    std::vector<element> cells;
    for (element c : Arr(e, at)) cells.push_back(c);
    if (cells.size() != n)
      Fail(at, "has " + std::to_string(cells.size()) + " columns, not " + std::to_string(n));
    return cells;
  }
};

EventClass ClassNamed(const Reader& r, const std::string& field, const std::string& name) {
  for (const EventClass c : kClasses) {
    if (name == Name(c)) return c;
  }
  r.Fail(field, "unknown class \"" + name + "\"");
}

}  // namespace

RankTraceSummary ParseSummary(std::string_view json, const std::string& where) {
  const Reader r{where};
  simdjson::dom::parser parser;
  element root;
  if (auto error = parser.parse(json.data(), json.size()).get(root)) {
    throw Error(ErrorCode::kInvalidInput,
                where + ": not a JSON document: " + simdjson::error_message(error));
  }
  object o;
  if (root.get_object().get(o))
    throw Error(ErrorCode::kInvalidInput, where + ": not a JSON object");
  std::string_view kind;
  if (o["kind"].get_string().get(kind) || kind != kSummaryKind) {
    throw Error(ErrorCode::kInvalidInput, where + ": not an opscope rank summary (no \"kind\": \"" +
                                              std::string(kSummaryKind) + "\")");
  }
  RankTraceSummary s;
  s.version = static_cast<int>(r.Int(r.Get(o, "version"), "version"));
  if (s.version != kSummaryVersion) {
    throw Error(ErrorCode::kInvalidInput,
                where + ": summary version " + std::to_string(s.version) + "; this opscope reads " +
                    std::to_string(kSummaryVersion) + " (write the summaries again with it)");
  }
  double error = 0;
  if (r.Get(o, "sketch_relative_error").get_double().get(error) ||
      error != QuantileSketch::kRelativeError) {
    r.Fail("sketch_relative_error", "not this opscope's sketch");
  }
  s.rank = static_cast<int>(r.Int(r.Get(o, "rank"), "rank", 0));
  if (s.rank > 1 << 24) r.Fail("rank", "above 16777216");
  s.path = r.Str(r.Get(o, "path"), "path");
  s.format = r.Str(r.Get(o, "format"), "format");
  s.device = r.Str(r.Get(o, "device"), "device");
  s.events = r.Int(r.Get(o, "events"), "events", 0);
  s.begin_ns = r.Int(r.Get(o, "begin_ns"), "begin_ns");
  s.end_ns = r.Int(r.Get(o, "end_ns"), "end_ns");
  s.compute_ns = r.Int(r.Get(o, "compute_ns"), "compute_ns", 0);
  s.communication_ns = r.Int(r.Get(o, "communication_ns"), "communication_ns", 0);
  s.overlap_ns = r.Int(r.Get(o, "overlap_ns"), "overlap_ns", 0);
  if (s.overlap_ns > s.communication_ns) r.Fail("overlap_ns", "above communication_ns");
  s.steps_complete = r.Int(r.Get(o, "steps_complete"), "steps_complete", 0);
  s.mean_step_ns = r.Int(r.Get(o, "mean_step_ns"), "mean_step_ns", 0);
  size_t i = 0;
  for (element e : r.Arr(r.Get(o, "steps"), "steps")) {
    const auto c = r.Row(e, "steps", i, 9);
    const std::string f = "steps[" + std::to_string(i++) + "]";
    SummaryStep t;
    t.number = r.Int(c[0], f, -1);
    t.name = r.Str(c[1], f);
    t.begin_ns = r.Int(c[2], f);
    t.duration_ns = r.Int(c[3], f, 0);
    t.compute_ns = r.Int(c[4], f, 0);
    t.communication_ns = r.Int(c[5], f, 0);
    t.memory_ns = r.Int(c[6], f, 0);
    t.idle_ns = r.Int(c[7], f, 0);
    t.status = r.Str(c[8], f);
    s.steps.push_back(std::move(t));
  }
  i = 0;
  for (element e : r.Arr(r.Get(o, "operators"), "operators")) {
    const auto c = r.Row(e, "operators", i, 9);
    const std::string f = "operators[" + std::to_string(i++) + "]";
    SummaryOperator op;
    op.name = r.Str(c[0], f);
    op.cls = ClassNamed(r, f, r.Str(c[1], f));
    op.count = r.Int(c[2], f, 0);
    op.total_ns = r.Int(c[3], f, 0);
    op.self_ns = r.Int(c[4], f, 0);
    op.folded = r.Int(c[5], f, 0);
    const int64_t min = r.Int(c[6], f, -1), max = r.Int(c[7], f, -1);
    std::vector<std::pair<int32_t, int64_t>> buckets;
    std::vector<int64_t> flat;
    for (element b : r.Arr(c[8], f)) flat.push_back(r.Int(b, f + " sketch", INT32_MIN));
    if (flat.size() % 2) r.Fail(f, "a sketch bucket without its count");
    for (size_t k = 0; k < flat.size(); k += 2) {
      if (flat[k] > INT32_MAX) r.Fail(f, "a sketch bucket out of range");
      buckets.push_back({static_cast<int32_t>(flat[k]), flat[k + 1]});
    }
    if (!QuantileSketch::FromParts(std::move(buckets), min, max, op.durations) ||
        op.durations.count() != op.count) {
      r.Fail(f, "its duration sketch does not match its count, minimum and maximum");
    }
    s.operators.push_back(std::move(op));
  }
  for (element e : r.Arr(r.Get(o, "groups"), "groups")) s.groups.push_back(r.Str(e, "groups"));
  for (element e : r.Arr(r.Get(o, "ops"), "ops")) s.ops.push_back(r.Str(e, "ops"));
  bool seq = false;
  if (r.Get(o, "seq_from_trace").get_bool().get(seq)) r.Fail("seq_from_trace", "not a boolean");
  s.seq_from_trace = seq;
  i = 0;
  for (element e : r.Arr(r.Get(o, "collectives"), "collectives")) {
    const auto c = r.Row(e, "collectives", i, 6);
    const std::string f = "collectives[" + std::to_string(i++) + "]";
    SummaryCollective k;
    const int64_t group = r.Int(c[0], f, 0), op = r.Int(c[1], f, 0);
    if (group >= static_cast<int64_t>(s.groups.size())) r.Fail(f, "group index out of range");
    if (op >= static_cast<int64_t>(s.ops.size())) r.Fail(f, "op index out of range");
    k.group = static_cast<uint32_t>(group);
    k.op = static_cast<uint32_t>(op);
    k.seq = r.Int(c[2], f, 0);
    k.bytes = r.Int(c[3], f, -1);
    k.start_ns = r.Int(c[4], f);
    k.duration_ns = r.Int(c[5], f, 0);
    s.collectives.push_back(k);
  }
  return s;
}

std::string CompressSummary(std::string_view json) {
  z_stream z{};
  // windowBits 15 + 16: the gzip format, as the files have it.
  if (deflateInit2(&z, 6, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK) {
    throw Error(ErrorCode::kInternal, "zlib: deflateInit2 failed");
  }
  std::string out(deflateBound(&z, static_cast<uLong>(json.size())), '\0');
  z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(json.data()));
  z.avail_in = static_cast<uInt>(json.size());
  z.next_out = reinterpret_cast<Bytef*>(out.data());
  z.avail_out = static_cast<uInt>(out.size());
  const int status = deflate(&z, Z_FINISH);
  out.resize(z.total_out);
  out.shrink_to_fit();  // held until the merge: not at the bound's size
  deflateEnd(&z);
  if (status != Z_STREAM_END) throw Error(ErrorCode::kInternal, "zlib: deflate failed");
  return out;
}

namespace {

// Every byte of a source, up to kSummaryMaxBytes.
std::string ReadAll(Source& source) {
  std::string bytes;
  char chunk[1 << 16];
  while (const size_t n = source.Read(chunk, sizeof chunk)) {
    if (bytes.size() + n > kSummaryMaxBytes) {
      throw Error(ErrorCode::kInvalidInput, source.name() + ": larger than " +
                                                std::to_string(kSummaryMaxBytes >> 20) +
                                                " MiB: not a rank summary");
    }
    bytes.append(chunk, n);
  }
  return bytes;
}

}  // namespace

RankTraceSummary ParseSummaryBytes(std::string_view bytes, const std::string& where) {
  const auto source = Source::FromBytes(where, std::string(bytes));
  return ParseSummary(ReadAll(*source), where);
}

void WriteSummaryFile(const std::filesystem::path& path, const RankTraceSummary& summary) {
  core::AtomicFileOutput out(path, /*gzip=*/true);
  out.buffer() = SerializeSummary(summary);
  out.Commit();
}

std::string ReadSummaryBytes(const std::filesystem::path& path) {
  const auto source = Source::Open(path);
  return ReadAll(*source);
}

RankTraceSummary ReadSummaryFile(const std::filesystem::path& path) {
  return ParseSummary(ReadSummaryBytes(path), path.string());
}

}  // namespace opscope::analyze
