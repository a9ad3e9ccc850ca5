// Results kept by name, each of its owner's own type: a pass's result
// (Analysis::results) or what a side-file reader read (ReportedTables::own).
// The owner defines the type in its own file, so a new one changes no shared
// header. Names are the owners' static names (string literals).
#ifndef OPSCOPE_ANALYZE_SLOTS_H_
#define OPSCOPE_ANALYZE_SLOTS_H_

#include <any>
#include <functional>
#include <map>
#include <string_view>
#include <utility>

namespace opscope::analyze {

class Slots {
 public:
  // Makes `name`'s slot, empty.
  void Make(std::string_view name) { slots_[name]; }
  // Sets `name`'s value (its slot is made if it has none).
  template <typename T>
  const T& Set(std::string_view name, T value) {
    auto it = slots_.find(name);
    if (it == slots_.end()) it = slots_.emplace(name, std::any()).first;
    return it->second.emplace<T>(std::move(value));
  }
  // Empties `name`'s slot, its value destroyed (its slot stays).
  void Drop(std::string_view name) {
    const auto it = slots_.find(name);
    if (it != slots_.end()) it->second.reset();
  }
  // `name`'s value, or null when it has none (or holds another type).
  template <typename T>
  const T* Get(std::string_view name) const {
    const auto it = slots_.find(name);
    return it == slots_.end() ? nullptr : std::any_cast<T>(&it->second);
  }

 private:
  std::map<std::string_view, std::any, std::less<>> slots_;
};

}  // namespace opscope::analyze

#endif  // OPSCOPE_ANALYZE_SLOTS_H_
