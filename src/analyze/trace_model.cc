#include "analyze/trace_model.h"

#include <fmt/format.h>
#include <sys/mman.h>

#include <algorithm>
#include <charconv>
#include <cstdint>
#include <cstring>
#include <vector>

#include "analyze/names.h"

namespace opscope::analyze {

const char* Name(EventClass cls) {
  switch (cls) {
    case EventClass::kHostOp: return "host_op";
    case EventClass::kAnnotation: return "annotation";
    case EventClass::kStep: return "step";
    case EventClass::kKernel: return "kernel";
    case EventClass::kMemcpy: return "memcpy";
    case EventClass::kMemset: return "memset";
    case EventClass::kRuntime: return "runtime";
    case EventClass::kSync: return "sync";
    case EventClass::kDeviceAnnotation: return "device_annotation";
    case EventClass::kPython: return "python";
    case EventClass::kCommunication: return "communication";
    case EventClass::kDma: return "dma";
    case EventClass::kDeviceWait: return "device_wait";
    case EventClass::kDataLoading: return "data_loading";
    case EventClass::kDerived: return "derived";
    case EventClass::kOther: return "other";
  }
  return "?";
}

bool IsDevice(EventClass cls) {
  return cls == EventClass::kKernel || cls == EventClass::kMemcpy || cls == EventClass::kMemset ||
         cls == EventClass::kCommunication || cls == EventClass::kDma ||
         cls == EventClass::kDeviceWait;
}

bool IsHost(EventClass cls) {
  return cls == EventClass::kHostOp || cls == EventClass::kAnnotation || cls == EventClass::kStep ||
         cls == EventClass::kRuntime || cls == EventClass::kSync || cls == EventClass::kPython ||
         cls == EventClass::kDataLoading;
}

TraceSpan SpanOf(const TraceModel& model) {
  TraceSpan span;
  for (size_t e = 0; e < model.size(); ++e) {
    if (model.cls[e] == EventClass::kDerived || model.cls[e] == EventClass::kOther) continue;
    const int64_t begin = model.start_ns[e], end = begin + model.duration_ns[e];
    if ((model.cls[e] == EventClass::kStep || model.cls[e] == EventClass::kAnnotation) &&
        EndsPastRecording(model.recording_end_ns, end)) {
      continue;
    }
    span.begin = std::min(span.begin, begin);
    span.end = std::max(span.end, end);
  }
  return span;
}

TraceSpan WorkSpanOf(const TraceModel& model, TraceSpan span) {
  // Only calls at the edges: a start before the device's first task, a stop
  // after its last (a second session's start and stop inside the trace
  // leave the work between them in).
  TraceSpan device;
  std::vector<int> control(model.string_count(), 2);  // 2: not yet judged
  std::vector<uint32_t> calls;
  for (size_t e = 0; e < model.size(); ++e) {
    if (IsDevice(model.cls[e])) {
      device.begin = std::min(device.begin, model.start_ns[e]);
      device.end = std::max(device.end, model.start_ns[e] + model.duration_ns[e]);
    }
    int& c = control[model.name[e]];
    if (c == 2) c = ProfilerControl(model.String(model.name[e]));
    if (c != 0) calls.push_back(static_cast<uint32_t>(e));
  }
  TraceSpan work = span;
  for (const uint32_t e : calls) {
    const int64_t begin = model.start_ns[e], end = begin + model.duration_ns[e];
    if (control[model.name[e]] > 0 && begin <= device.begin) work.begin = std::max(work.begin, end);
    if (control[model.name[e]] < 0 && end >= device.end) work.end = std::min(work.end, begin);
  }
  return work.end > work.begin ? work : span;
}

void SortByOpening(const TraceModel& model, TrackGroups& g) {
  const auto opens_first = [&](uint32_t a, uint32_t b) {
    if (model.start_ns[a] != model.start_ns[b]) return model.start_ns[a] < model.start_ns[b];
    if (model.duration_ns[a] != model.duration_ns[b]) {
      return model.duration_ns[a] > model.duration_ns[b];
    }
    return a < b;
  };
  for (size_t t = 0; t + 1 < g.begin.size(); ++t) {
    uint32_t* first = g.events.data() + g.begin[t];
    uint32_t* last = g.events.data() + g.begin[t + 1];
    if (!std::is_sorted(first, last, opens_first)) std::sort(first, last, opens_first);
  }
}

const char* Name(CopyDirection direction) {
  switch (direction) {
    case CopyDirection::kHostToDevice: return "HtoD";
    case CopyDirection::kDeviceToHost: return "DtoH";
    case CopyDirection::kDeviceToDevice: return "DtoD";
    case CopyDirection::kPeerToPeer: return "PtoP";
    case CopyDirection::kHostToHost: return "HtoH";
    case CopyDirection::kUnknown: break;
  }
  return "other";
}

const char* Name(HostMemory memory) {
  switch (memory) {
    case HostMemory::kPinned: return "pinned";
    case HostMemory::kPageable: return "pageable";
    case HostMemory::kManaged: return "managed";
    case HostMemory::kUnknown: break;
  }
  return "";
}

namespace {

// A fast 64-bit hash of a string (interning hashes every name and shape string
// of every event): four independent lanes of 8 bytes, so long names take a few
// cycles per 32 bytes.
inline uint64_t Mix(uint64_t h, uint64_t word) {
  h = (h ^ word) * 0xBF58476D1CE4E5B9ull;
  return h ^ (h >> 31);
}

uint64_t HashText(std::string_view text) {
  const char* p = text.data();
  size_t n = text.size();
  uint64_t a = 0x9E3779B97F4A7C15ull ^ n, b = 0x94D049BB133111EBull, c = 0x2545F4914F6CDD1Dull,
           d = 0xD6E8FEB86659FD93ull;
  uint64_t w[4];
  for (; n >= 32; p += 32, n -= 32) {
    std::memcpy(w, p, 32);
    a = Mix(a, w[0]), b = Mix(b, w[1]), c = Mix(c, w[2]), d = Mix(d, w[3]);
  }
  for (; n >= 8; p += 8, n -= 8) {
    std::memcpy(w, p, 8);
    a = Mix(a, w[0]);
  }
  if (n > 0) {
    w[0] = 0;
    std::memcpy(w, p, n);
    b = Mix(b, w[0]);
  }
  const uint64_t h = Mix(Mix(a, b), Mix(c, d) + 0x9E3779B97F4A7C15ull);
  return h * 0x94D049BB133111EBull ^ (h >> 29);
}

}  // namespace

void TraceModel::Grow() {
  std::vector<Slot> slots(std::max<size_t>(64, slots_.size() * 2), Slot{0, UINT32_MAX});
  const size_t mask = slots.size() - 1;
  for (const Slot& slot : slots_) {
    if (slot.id == UINT32_MAX) continue;
    size_t at = slot.hash & mask;
    while (slots[at].id != UINT32_MAX) at = (at + 1) & mask;
    slots[at] = slot;
  }
  slots_ = std::move(slots);
}

namespace {

// The start of the UTF-8 character at or before `at` (so a cut never splits
// one): at most three bytes back, as far as a character reaches (bytes that
// are not UTF-8 are cut where they are).
size_t CharacterStart(std::string_view text, size_t at) {
  for (int back = 0; back < 3 && at > 0 && (static_cast<unsigned char>(text[at]) & 0xC0) == 0x80;
       ++back) {
    --at;
  }
  return at;
}

// The marker between a long text's ends: "… [N bytes left out] …".
constexpr std::string_view kMarkerOpen = "… [", kMarkerClose = " bytes left out] …";

// The bytes a text kept by its ends (TraceModel::Intern) left out, or 0 when
// `text` is not one: its marker starts within a character of kKeptHead.
size_t LeftOut(std::string_view text) {
  if (text.size() < TraceModel::kKeptHead || text.size() > TraceModel::kMaxTextBytes) return 0;
  const size_t open = text.find(kMarkerOpen, TraceModel::kKeptHead - 3);
  if (open == std::string_view::npos || open > TraceModel::kKeptHead) return 0;
  size_t n = 0;
  const char* digits = text.data() + open + kMarkerOpen.size();
  const auto [end, ec] = std::from_chars(digits, text.data() + text.size(), n);
  if (ec != std::errc() || text.substr(end - text.data(), kMarkerClose.size()) != kMarkerClose) {
    return 0;
  }
  return n;
}

}  // namespace

uint32_t TraceModel::Intern(std::string_view text) {
  if (text.size() > kMaxTextBytes) {
    const size_t head = CharacterStart(text, kKeptHead);
    const size_t tail = CharacterStart(text, text.size() - kKeptTail);
    return Intern(fmt::format("{}{}{}{}{}", text.substr(0, head), kMarkerOpen, tail - head,
                              kMarkerClose, text.substr(tail)));
  }
  // Counted where it is first stored: also when a reader's part of the model,
  // which kept it by its ends, is merged into the whole.
  const size_t known = strings_.size();
  if (text.size() >= kKeptHead) {
    const uint32_t id = InternWhole(text);
    if (strings_.size() > known) {
      if (const size_t left_out = LeftOut(text); left_out > 0) {
        ++long_texts;
        const size_t marker =
            kMarkerOpen.size() + fmt::formatted_size("{}", left_out) + kMarkerClose.size();
        longest_text = std::max(longest_text, text.size() - marker + left_out);
      }
    }
    return id;
  }
  return InternWhole(text);
}

uint32_t TraceModel::InternWhole(std::string_view text) {
  if (strings_.empty()) {  // id 0: the empty string
    storage_.emplace_back();
    strings_.push_back(&storage_.back());
    Grow();
    slots_[HashText({}) & (slots_.size() - 1)] = Slot{HashText({}), 0};
  }
  const uint64_t hash = HashText(text);
  const size_t mask = slots_.size() - 1;
  size_t at = hash & mask;
  for (; slots_[at].id != UINT32_MAX; at = (at + 1) & mask) {
    if (slots_[at].hash == hash && *strings_[slots_[at].id] == text) return slots_[at].id;
  }
  storage_.emplace_back(text);
  const auto id = static_cast<uint32_t>(strings_.size());
  strings_.push_back(&storage_.back());
  slots_[at] = Slot{hash, id};
  if (strings_.size() * 2 > slots_.size()) Grow();  // at most half full
  return id;
}

namespace {

// Asks for transparent huge pages under a column's reserved capacity: the
// columns of a large trace are filled once, front to back, and a 4 KiB page
// fault per page costs more than the filling on some machines (a VM here: about
// 6 us each, a quarter of a 100 MB import). A hint only: where the kernel
// declines, nothing changes.
void AdviseHugePages(const void* data, size_t bytes) {
  constexpr uintptr_t kHuge = uintptr_t{2} << 20;
  if (bytes < 2 * kHuge) return;
  const auto begin = reinterpret_cast<uintptr_t>(data);
  const uintptr_t first = (begin + kHuge - 1) & ~(kHuge - 1);
  const uintptr_t last = (begin + bytes) & ~(kHuge - 1);
  if (last > first) madvise(reinterpret_cast<void*>(first), last - first, MADV_HUGEPAGE);
}

template <typename T>
void AdviseHugePages(const std::vector<T>& column) {
  AdviseHugePages(column.data(), column.capacity() * sizeof(T));
}

template <typename T, T kDefault>
void AdviseHugePages(const DefaultColumn<T, kDefault>& column) {
  AdviseHugePages(column.storage(), column.capacity_bytes());
}

void AdviseHugePages(const CompactInt64Column& column) {
  AdviseHugePages(column.storage(), column.capacity_bytes());
}

}  // namespace

void TraceModel::Reserve(size_t events) {
  ForEachInt64Column([&](auto& column) {
    column.reserve(events);
    AdviseHugePages(column);
  });
  ForEachIdColumn([&](auto& column) {
    column.reserve(events);
    AdviseHugePages(column);
  });
  cls.reserve(events);
  AdviseHugePages(cls);
  copy.reserve(events);
}

bool TraceModel::ColumnsAligned() const {
  bool aligned = cls.size() == size() && track.size() == size() && copy.size() == size();
  for (const auto column : kInt64Columns) aligned &= (this->*column).size() == size();
  for (const auto column : kCompactColumns) aligned &= (this->*column).size() == size();
  for (const auto column : kCountColumns) aligned &= (this->*column).size() == size();
  for (const auto column : kStringColumns) aligned &= (this->*column).size() == size();
  return aligned;
}

void TraceModel::NameProcesses() {
  for (Track& track : tracks) {
    if (const auto it = process_names.find(track.pid); it != process_names.end()) {
      track.process = it->second;
    }
  }
}

uint32_t TraceModel::TrackFor(std::string_view pid, std::string_view tid) {
  // Consecutive events mostly share a track: skip the lookup then.
  if (last_track_ != UINT32_MAX && tracks[last_track_].pid == pid &&
      tracks[last_track_].tid == tid) {
    return last_track_;
  }
  auto key = std::make_pair(std::string(pid), std::string(tid));
  const auto it = track_ids_.find(key);
  if (it != track_ids_.end()) return last_track_ = it->second;
  const auto id = static_cast<uint32_t>(tracks.size());
  tracks.push_back(Track{key.first, key.second, key.first, key.second});
  track_ids_.emplace(std::move(key), id);
  return last_track_ = id;
}

uint32_t PartIds::String(const TraceModel& part, TraceModel& model, uint32_t id) {
  if (id == 0) return model.string_count() > 0 ? 0 : model.Intern({});  // the first Intern makes it
  if (id >= strings_.size()) strings_.resize(part.string_count(), UINT32_MAX);
  uint32_t& to = strings_[id];
  if (to == UINT32_MAX) to = model.Intern(part.String(id));
  return to;
}

uint32_t PartIds::Track(const TraceModel& part, TraceModel& model, uint32_t id) {
  if (id >= tracks_.size()) tracks_.resize(part.tracks.size(), UINT32_MAX);
  uint32_t& to = tracks_[id];
  if (to == UINT32_MAX) to = model.TrackFor(part.tracks[id].pid, part.tracks[id].tid);
  return to;
}

void PartIds::MoveEvents(TraceModel& part, TraceModel& model) {
  const size_t first = model.size();
  // The tables sized once per batch: the lookups below then never resize them.
  strings_.resize(part.string_count(), UINT32_MAX);
  tracks_.resize(part.tracks.size(), UINT32_MAX);
  const auto append = [](auto& to, const auto& from) {
    to.insert(to.end(), from.begin(), from.end());
  };
  for (const auto column : TraceModel::kInt64Columns) append(model.*column, part.*column);
  for (const auto column : TraceModel::kCompactColumns) (model.*column).append(part.*column);
  for (const auto column : TraceModel::kCountColumns) (model.*column).append(part.*column);
  // Columns grow by doubling (push_back, insert): a reserve to the exact new
  // size here would copy every column once per batch where the whole size
  // was not reserved up front (a pipe), quadratic in the input.
  for (const auto column : TraceModel::kStringColumns) {
    IdColumn& to = model.*column;
    for (uint32_t id : part.*column) to.push_back(String(part, model, id));
  }
  for (uint32_t id : part.track) model.track.push_back(Track(part, model, id));
  append(model.cls, part.cls);
  model.copy.append(part.copy);
  for (TraceModel::CollectiveArgs a : part.collective_args) {
    a.event += static_cast<uint32_t>(first);
    a.op = String(part, model, a.op);
    a.group = String(part, model, a.group);
    model.collective_args.push_back(a);
  }
  part.collective_args.clear();
  part.ForEachInt64Column([](auto& column) { column.clear(); });
  part.ForEachIdColumn([](auto& column) { column.clear(); });
  part.cls.clear();
  part.copy.clear();
}

}  // namespace opscope::analyze
