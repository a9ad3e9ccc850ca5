// A function of a library opened with dlopen, looked up by name: the one
// helper of the parts that load a vendor's library at run time (NVML, DCMI,
// AscendCL), so that none needs the vendor's SDK to build.
#ifndef OPSCOPE_CORE_DLSYM_H_
#define OPSCOPE_CORE_DLSYM_H_

#include <dlfcn.h>

namespace opscope::core {

// Sets `fn` to the library's `name` (null where the library lacks it); true
// when found.
template <typename F>
bool LoadSymbol(void* library, const char* name, F& fn) {
  fn = reinterpret_cast<F>(::dlsym(library, name));
  return fn != nullptr;
}

}  // namespace opscope::core

#endif  // OPSCOPE_CORE_DLSYM_H_
