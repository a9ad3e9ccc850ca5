// Compiled as users' code is with OPSCOPE_ENABLE_PROFILING=OFF.
#undef OPSCOPE_ENABLED
#define OPSCOPE_ENABLED 0
#include "opscope/opscope.h"

namespace opscope::testing {

// Runs `count` scopes of both forms; returns how often the runtime name and the
// arguments were evaluated (never, when compiled out).
int RunCompiledOutScopes(int count) {
  int evaluated = 0;
  [[maybe_unused]] const auto name = [&] {
    ++evaluated;
    return std::string("runtime name");
  };
  for (int i = 0; i < count; ++i) {
    OPSCOPE_SCOPE("compiled out");
    OPSCOPE_SCOPE_DYN(name(), ScopeArgs{.flops = ++evaluated});
  }
  return evaluated;
}

}  // namespace opscope::testing
