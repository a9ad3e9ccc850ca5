#include "core/intern.h"

#include <mutex>
#include <string>
#include <unordered_set>

namespace opscope::core {

const char* Intern(std::string_view text) {
  static std::mutex mutex;
  // Leaked on purpose: interned pointers stay valid during static destruction.
  static auto* strings = new std::unordered_set<std::string>();
  std::lock_guard lock(mutex);
  return strings->emplace(text).first->c_str();
}

}  // namespace opscope::core
