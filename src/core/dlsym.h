// A vendor's library opened with dlopen and its functions looked up by name:
// the helpers of the parts that load one at run time (NVML, DCMI, AscendCL,
// aclnn), so that none needs the vendor's SDK to build.
#ifndef OPSCOPE_CORE_DLSYM_H_
#define OPSCOPE_CORE_DLSYM_H_

#include <dlfcn.h>

#include <cstdlib>
#include <initializer_list>
#include <string>
#include <vector>

namespace opscope::core {

struct OpenedLibrary {
  void* handle = nullptr;   // null where none loaded
  std::string path;         // the one opened, else the first one tried
  bool overridden = false;  // the path came from the environment
  std::string error;        // "<path> cannot be loaded (<the loader's errors>)"
};

// The library that the environment variable `env_var` names where it is set
// (tests point it at a stand-in), else the first of `defaults` that loads.
inline OpenedLibrary OpenLibrary(const char* env_var, std::initializer_list<const char*> defaults) {
  OpenedLibrary lib;
  const char* override_path = std::getenv(env_var);
  lib.overridden = override_path != nullptr;
  const std::vector<const char*> tries =
      lib.overridden ? std::vector<const char*>{override_path} : std::vector<const char*>(defaults);
  std::string errors;
  for (const char* p : tries) {
    if (lib.path.empty()) lib.path = p;
    lib.handle = ::dlopen(p, RTLD_NOW | RTLD_LOCAL);
    if (lib.handle != nullptr) {
      lib.path = p;
      return lib;
    }
    const char* e = ::dlerror();
    errors += (errors.empty() ? "" : "; ") + std::string(e != nullptr ? e : p);
  }
  lib.error = lib.path + " cannot be loaded (" + errors + ")";
  return lib;
}

// Sets `fn` to the library's `name` (null where the library lacks it); true
// when found.
template <typename F>
bool LoadSymbol(void* library, const char* name, F& fn) {
  fn = reinterpret_cast<F>(::dlsym(library, name));
  return fn != nullptr;
}

}  // namespace opscope::core

#endif  // OPSCOPE_CORE_DLSYM_H_
