// XPlane (xplane_importer.h).
#include "analyze/importers/xplane/xplane_importer.h"

#include <fmt/format.h>

#include <cctype>
#include <charconv>
#include <cstdint>
#include <cstring>
#include <map>
#include <string>
#include <unordered_map>
#include <vector>

#include "analyze/importers/counted_texts.h"
#include "analyze/importers/json_file.h"
#include "analyze/importers/timestamps.h"
#include "analyze/names.h"
#include "core/text.h"
#include "opscope/opscope.h"

namespace opscope::analyze {
namespace {

constexpr size_t kMaxBytes = size_t{2} << 30;

// A protobuf message's bytes and where they sit in the file (for errors).
struct Bytes {
  const uint8_t* data = nullptr;
  size_t size = 0;
  size_t offset = 0;  // of data[0] in the file
  std::string_view Text() const { return {reinterpret_cast<const char*>(data), size}; }
};

// One field of a message: its number and wire type, and its value (a varint
// or fixed value in `number`, a length-delimited one in `bytes`).
struct Field {
  uint32_t id = 0;
  uint8_t wire = 0;
  uint64_t number = 0;
  Bytes bytes;
};

class Damaged : public std::exception {
 public:
  Damaged(size_t offset, std::string why) : offset(offset), why(std::move(why)) {}
  size_t offset;
  std::string why;
};

// The fields of one message, in order; throws Damaged at the first byte that
// is not protobuf.
class Fields {
 public:
  explicit Fields(Bytes m) : m_(m) {}
  bool Next(Field& f) {
    if (i_ >= m_.size) return false;
    const uint64_t tag = Varint();
    f.id = static_cast<uint32_t>(tag >> 3);
    f.wire = static_cast<uint8_t>(tag & 7);
    if (f.id == 0) throw Damaged(m_.offset + i_, "a field numbered 0");
    switch (f.wire) {
      case 0: f.number = Varint(); break;
      case 1: f.number = Fixed(8); break;
      case 5: f.number = Fixed(4); break;
      case 2: {
        const size_t at = i_;
        const uint64_t n = Varint();
        if (n > m_.size - i_) {
          throw Damaged(
              m_.offset + at,
              fmt::format("field {} is {} bytes long, past the end of its message", f.id, n));
        }
        f.bytes = {m_.data + i_, static_cast<size_t>(n), m_.offset + i_};
        i_ += static_cast<size_t>(n);
        break;
      }
      default: throw Damaged(m_.offset + i_, fmt::format("wire type {} is not protobuf's", f.wire));
    }
    return true;
  }

 private:
  uint64_t Varint() {
    uint64_t v = 0;
    for (int shift = 0; shift < 64; shift += 7) {
      if (i_ >= m_.size) throw Damaged(m_.offset + i_, "a number runs past the end");
      const uint8_t b = m_.data[i_++];
      v |= static_cast<uint64_t>(b & 0x7f) << shift;
      if ((b & 0x80) == 0) return v;
    }
    throw Damaged(m_.offset + i_, "a number longer than 10 bytes");
  }
  uint64_t Fixed(size_t n) {
    if (n > m_.size - i_) throw Damaged(m_.offset + i_, "a fixed value runs past the end");
    uint64_t v = 0;
    std::memcpy(&v, m_.data + i_, n);
    i_ += n;
    return v;
  }
  Bytes m_;
  size_t i_ = 0;
};

// A stat's value as an integer (int64, uint64 or double fields), or -1.
int64_t StatInt(const Field& value) {
  switch (value.id) {
    case 3:
    case 4: return static_cast<int64_t>(value.number);
    case 2: {
      double d = 0;
      std::memcpy(&d, &value.number, sizeof d);
      return static_cast<int64_t>(d);
    }
    default: return -1;
  }
}

enum class LineKind { kThread, kStream, kTpuOps, kDeviceView, kSkip };

class Reader {
 public:
  Reader(TraceModel& model, std::string path) : model_(model), path_(std::move(path)) {}

  void Space(Bytes space) {
    Fields fields(space);
    Field f;
    // XSpace: planes 1, errors 2, warnings 3 (what the profiler says went
    // wrong while it recorded; XProf shows them as the profile's diagnostics).
    std::vector<std::string_view> errors, warnings;
    while (fields.Next(f)) {
      if (f.id == 1 && f.wire == 2) Plane(f.bytes);
      if ((f.id == 2 || f.id == 3) && f.wire == 2) {
        (f.id == 2 ? errors : warnings).push_back(f.bytes.Text());
      }
    }
    if (skipped_ > 0) {
      model_.import_notes.push_back(fmt::format(
          "{} events without a time of their own (aggregated by count) were left out", skipped_));
    }
    Diagnostics(errors, warnings);
  }

 private:
  // The XSpace's errors and warnings in the import notes, each distinct text
  // once with its count (the first kListed, the rest counted). XLA's GPU
  // tracer writes CUPTI's error to errors and its dropped events to warnings
  // ("Detected GPU events dropped on HOST: Profiler has collected N driver
  // events and M device events. K events dropped because REASON; ..."): those
  // counts are the producer's own loss, said apart: device events (REASON
  // "total device(activity) events reaches max") and driver events, the
  // runtime calls on the host ("total driver(callback) events reaches max").
  void Diagnostics(const std::vector<std::string_view>& errors,
                   const std::vector<std::string_view>& warnings) {
    constexpr size_t kTextBytes = 300, kListed = 5;
    std::map<std::string, int64_t> said;  // "error: text" -> how often
    Dropped dropped;
    for (const auto* list : {&errors, &warnings}) {
      for (const std::string_view text : *list) {
        AddDroppedEvents(text, dropped);
        ++said[fmt::format("{}: {}", list == &errors ? "error" : "warning",
                           core::CutUtf8(text, kTextBytes))];
      }
    }
    if (said.empty()) return;
    const CountedTexts listed = ListCounted(said, kListed);
    model_.producer_dropped += static_cast<uint64_t>(dropped.device);
    if (dropped.device + dropped.other > 0) {
      model_.import_notes.push_back(fmt::format(
          "The profiler dropped {} device event{} and {} other event{} (driver calls on the "
          "host) while recording (the XSpace's warning, as XLA's GPU tracer writes it: 'K "
          "events dropped because REASON'): that work is missing from this trace, and the "
          "figures that need it are short by what they held",
          dropped.device, dropped.device == 1 ? "" : "s", dropped.other,
          dropped.other == 1 ? "" : "s"));
    }
    model_.import_notes.push_back(fmt::format(
        "The profiler wrote {} error{} or warning{} into the XSpace while recording "
        "(what XProf shows as the profile's diagnostics): {}",
        listed.total, listed.total == 1 ? "" : "s", listed.total == 1 ? "" : "s", listed.list));
  }

  struct Dropped {
    int64_t device = 0, other = 0;
  };
  // Adds each "K events dropped because REASON;" of a warning: to the device
  // count where REASON names device events, else to the other.
  static void AddDroppedEvents(std::string_view text, Dropped& dropped) {
    constexpr std::string_view kTail = " events dropped because ";
    for (size_t at = text.find(kTail); at != std::string_view::npos;
         at = text.find(kTail, at + kTail.size())) {
      size_t begin = at;
      while (begin > 0 && std::isdigit(static_cast<unsigned char>(text[begin - 1]))) --begin;
      int64_t n = 0;
      if (begin == at ||
          std::from_chars(text.data() + begin, text.data() + at, n).ec != std::errc() || n <= 0) {
        continue;
      }
      const std::string_view reason = text.substr(at + kTail.size());
      const std::string_view until = reason.substr(0, reason.find_first_of(";."));
      int64_t& sum =
          until.find("device") != std::string_view::npos ? dropped.device : dropped.other;
      sum = n > INT64_MAX - sum ? INT64_MAX : sum + n;  // saturating: a file's counts are untrusted
    }
  }

  void Plane(Bytes plane) {
    std::string name;
    std::unordered_map<int64_t, std::string> events, stats;  // metadata id -> name
    std::vector<Bytes> lines;
    {
      Fields fields(plane);
      Field f;
      while (fields.Next(f)) {
        if (f.wire != 2) continue;
        if (f.id == 2) name = f.bytes.Text();
        if (f.id == 3) lines.push_back(f.bytes);
        if (f.id == 4 || f.id == 5) MapEntry(f.bytes, f.id == 4 ? events : stats);
      }
    }
    const bool device = name.starts_with("/device:");
    const bool host = name.starts_with("/host:CPU");
    if (!device && !host) return;  // metadata, task environment
    correlation_stat_ = -1;
    for (const auto& [id, n] : stats) {
      if (n == "correlation_id") correlation_stat_ = id;
    }
    bool streams = false;
    if (device) {
      for (const Bytes& line : lines) streams |= LineName(line).starts_with("Stream #");
    }
    for (const Bytes& line : lines) {
      const std::string line_name = LineName(line);
      LineKind kind = LineKind::kThread;
      if (device) {
        kind = line_name.starts_with("Stream #")    ? LineKind::kStream
               : !streams && line_name == "XLA Ops" ? LineKind::kTpuOps
                                                    : LineKind::kDeviceView;
      }
      Line(line, name, line_name, kind, events);
    }
  }

  // A map<int64, XEventMetadata / XStatMetadata> entry: key 1, value 2.
  static void MapEntry(Bytes entry, std::unordered_map<int64_t, std::string>& out) {
    Fields fields(entry);
    Field f;
    int64_t key = 0;
    std::string name, display;
    while (fields.Next(f)) {
      if (f.id == 1 && f.wire == 0) key = static_cast<int64_t>(f.number);
      if (f.id == 2 && f.wire == 2) {
        Fields meta(f.bytes);
        Field m;
        while (meta.Next(m)) {
          if (m.id == 2 && m.wire == 2) name = m.bytes.Text();
          if (m.id == 4 && m.wire == 2) display = m.bytes.Text();
        }
      }
    }
    out[key] = display.empty() ? name : display;
  }

  static std::string LineName(Bytes line) {
    Fields fields(line);
    Field f;
    std::string name, display;
    while (fields.Next(f)) {
      if (f.id == 2 && f.wire == 2) name = f.bytes.Text();
      if (f.id == 11 && f.wire == 2) display = f.bytes.Text();
    }
    return display.empty() ? name : display;
  }

  void Line(Bytes line, const std::string& plane, const std::string& line_name, LineKind kind,
            const std::unordered_map<int64_t, std::string>& names) {
    int64_t timestamp_ns = 0, id = 0;
    std::vector<Bytes> events;
    {
      Fields fields(line);
      Field f;
      while (fields.Next(f)) {
        if (f.id == 1 && f.wire == 0) id = static_cast<int64_t>(f.number);
        if (f.id == 3 && f.wire == 0) timestamp_ns = static_cast<int64_t>(f.number);
        if (f.id == 4 && f.wire == 2) events.push_back(f.bytes);
      }
    }
    const uint32_t track =
        model_.TrackFor(plane, kind == LineKind::kThread ? fmt::format("{}", id) : line_name);
    model_.tracks[track].thread = line_name;
    for (const Bytes& e : events) Event(e, timestamp_ns, kind, track, names);
  }

  void Event(Bytes event, int64_t timestamp_ns, LineKind kind, uint32_t track,
             const std::unordered_map<int64_t, std::string>& names) {
    Fields fields(event);
    Field f;
    int64_t metadata = 0, offset_ps = -1, duration_ps = 0, correlation = -1;
    while (fields.Next(f)) {
      if (f.id == 1 && f.wire == 0) metadata = static_cast<int64_t>(f.number);
      if (f.id == 2 && f.wire == 0) offset_ps = static_cast<int64_t>(f.number);
      if (f.id == 3 && f.wire == 0) duration_ps = static_cast<int64_t>(f.number);
      if (f.id == 4 && f.wire == 2 && correlation_stat_ >= 0) {
        Fields stat(f.bytes);
        Field s;
        int64_t stat_id = -1, value = -1;
        while (stat.Next(s)) {
          if (s.id == 1 && s.wire == 0) stat_id = static_cast<int64_t>(s.number);
          if (s.id >= 2 && s.id <= 4) value = StatInt(s);
        }
        if (stat_id == correlation_stat_) correlation = value;
      }
    }
    if (offset_ps < 0) {
      ++skipped_;  // num_occurrences: no time of its own
      return;
    }
    const auto it = names.find(metadata);
    std::string_view name = it == names.end() ? std::string_view() : std::string_view(it->second);
    if (name.ends_with(".kd")) name.remove_suffix(3);
    EventRow row;
    row.start_ns = timestamp_ns + offset_ps / 1000;
    row.duration_ns = duration_ps / 1000;
    if (row.start_ns < -kMaxTimeNs || row.start_ns > kMaxTimeNs || row.duration_ns < 0 ||
        row.duration_ns > kMaxTimeNs) {
      ++skipped_;
      return;
    }
    row.name = model_.Intern(name);
    row.track = track;
    row.correlation = correlation;
    row.cls = ClassOf(kind, name);
    row.category = model_.Intern(Name(row.cls));
    model_.Append(row);
  }

  EventClass ClassOf(LineKind kind, std::string_view name) {
    switch (kind) {
      case LineKind::kStream:
      case LineKind::kTpuOps: {
        // The runtime's copies and sets by their names ("MemcpyD2D",
        // "memset32_..."); a copy kernel (__amd_rocclr_copyBuffer) is a kernel.
        const std::string lower = Lower(name);
        if (lower.starts_with("memcpy")) return EventClass::kMemcpy;
        if (lower.starts_with("memset")) return EventClass::kMemset;
        return IsCommunication(name) ? EventClass::kCommunication : EventClass::kKernel;
      }
      case LineKind::kDeviceView: return EventClass::kDeviceAnnotation;
      case LineKind::kThread: {
        if (name.starts_with("$")) {
          // JAX's documented wait for the device: a synchronisation.
          return name.ends_with(" block_until_ready") ? EventClass::kSync : EventClass::kPython;
        }
        const auto api = [&](std::string_view prefix) {
          return name.starts_with(prefix) && name.size() > prefix.size() &&
                 std::isupper(static_cast<unsigned char>(name[prefix.size()]));
        };
        if (api("cuda") || api("cu") || api("hip")) return EventClass::kRuntime;
        return EventClass::kHostOp;
      }
      default: return EventClass::kOther;
    }
  }

  TraceModel& model_;
  std::string path_;
  int64_t correlation_stat_ = -1;
  int64_t skipped_ = 0;
};

}  // namespace

bool SniffXPlane(Source& source) {
  std::string_view name = source.name();
  for (const std::string_view suffix : {".gz", ".zip"}) {
    if (name.ends_with(suffix)) name.remove_suffix(suffix.size());
  }
  const std::string_view head = source.Peek(64);
  if (head.empty() || static_cast<uint8_t>(head[0]) != 0x0A) return false;
  if (name.ends_with(".xplane.pb")) return true;
  // XSpace.planes[0]: its length, then its id (field 1) or name (field 2).
  size_t i = 1;
  while (i < head.size() && (static_cast<uint8_t>(head[i]) & 0x80) != 0) ++i;
  ++i;
  if (i < head.size() && static_cast<uint8_t>(head[i]) == 0x08) {  // id: a varint
    ++i;
    while (i < head.size() && (static_cast<uint8_t>(head[i]) & 0x80) != 0) ++i;
    ++i;
  }
  if (i + 2 >= head.size() || static_cast<uint8_t>(head[i]) != 0x12) return false;
  const std::string_view plane = head.substr(i + 2);
  return plane.starts_with("/host:") || plane.starts_with("/device:");
}

void ImportXPlane(Source& source, TraceModel& model) {
  const std::string bytes = ReadWholeFile(source, kMaxBytes, "read as an XSpace");
  model.format = "xplane";
  model.source = source.name();
  try {
    Reader(model, source.name())
        .Space({reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size(), 0});
  } catch (const Damaged& d) {
    size_t replaced = 0;
    for (size_t at = bytes.find("\xEF\xBF\xBD"); at != std::string::npos;
         at = bytes.find("\xEF\xBF\xBD", at + 3)) {
      ++replaced;
    }
    throw Error(
        ErrorCode::kInvalidInput,
        fmt::format("{}: not a valid XSpace protobuf at byte {}: {}{}", source.name(), d.offset,
                    d.why,
                    replaced > 0 ? fmt::format("; the file holds {} U+FFFD sequences (EF BF BD): "
                                               "a text conversion replaced its bytes, so it "
                                               "cannot be read; use the original file",
                                               replaced)
                                 : std::string("; the file is damaged or truncated")));
  }
}

Importer XPlaneImporter() {
  return Importer{
      "xplane",
      "XPlane (the XLA profiler's XSpace protobuf from JAX and TensorFlow, *.xplane.pb)",
      {"*.xplane.pb"},
      SniffXPlane,
      [](Source& source, TraceModel& model) { ImportXPlane(source, model); },
  };
}

}  // namespace opscope::analyze
