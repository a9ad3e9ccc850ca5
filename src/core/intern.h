// Process-wide string interning: equal strings share one stable pointer that lives
// until the process exits. For names with a bounded set of values (counters,
// threads, categories), not for unbounded runtime strings.
#ifndef OPSCOPE_CORE_INTERN_H_
#define OPSCOPE_CORE_INTERN_H_

#include <string_view>

namespace opscope::core {

const char* Intern(std::string_view text);

}  // namespace opscope::core

#endif  // OPSCOPE_CORE_INTERN_H_
