#include "analyze/names.h"

#include <algorithm>
#include <array>
#include <cctype>

namespace opscope::analyze {
namespace {

bool AnyOf(std::string_view value, std::initializer_list<std::string_view> set) {
  return std::find(set.begin(), set.end(), value) != set.end();
}

}  // namespace

std::string Lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

bool Contains(const std::string& haystack, std::string_view needle) {
  return haystack.find(needle) != std::string::npos;
}

std::string_view BaseName(std::string_view name) {
  // Cut at the first '<' or '(' that opens a template argument or parameter
  // list; an operator name such as "operator()" or "aten::lt" has neither.
  size_t cut = name.size();
  for (size_t i = 0; i < name.size(); ++i) {
    if ((name[i] == '<' || name[i] == '(') && i > 0) {
      cut = i;
      break;
    }
  }
  std::string_view base = name.substr(0, cut);
  if (base.starts_with("void ")) base.remove_prefix(5);
  while (!base.empty() && base.back() == ' ') base.remove_suffix(1);
  return base;
}

std::vector<std::string> Words(std::string_view name) {
  std::vector<std::string> words;
  std::string word;
  for (const char c : BaseName(name)) {
    if (std::isalnum(static_cast<unsigned char>(c))) {
      word += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    } else if (!word.empty()) {
      words.push_back(std::move(word));
      word.clear();
    }
  }
  if (!word.empty()) words.push_back(std::move(word));
  return words;
}

std::string_view FunctionOf(std::string_view op) {
  const size_t at = op.rfind("::");
  return at == std::string_view::npos ? op : op.substr(at + 2);
}

std::string_view WithoutLayer(std::string_view name) {
  const size_t at = name.rfind('@');
  return at == std::string_view::npos ? name : name.substr(at + 1);
}

std::string_view NamespaceOf(std::string_view op) {
  const size_t at = op.rfind("::");
  return at == std::string_view::npos ? std::string_view() : op.substr(0, at);
}

bool IsFrameworkOperator(std::string_view name) {
  const std::string_view ns = NamespaceOf(name);
  return !ns.empty() && std::all_of(ns.begin(), ns.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_' || c == ':';
  });
}

bool IsLayoutKernel(std::string_view name, std::string_view op_type) {
  if (AnyOf(op_type, {"TransData", "TransDataRNN", "Transpose", "TransposeD"})) return true;
  for (const std::string& w : Words(name)) {
    if (AnyOf(w, {"nchwtonhwckernel", "nhwctonchwkernel", "nchwtonhwc", "nhwctonchw", "nchw2nhwc",
                  "nhwc2nchw", "transdata", "transposed", "reorder"})) {
      return true;
    }
  }
  return false;
}

bool IsLayoutOperator(std::string_view name) {
  const std::string_view ns = NamespaceOf(name), fn = FunctionOf(name);
  if (!AnyOf(ns, {"aten", "npu", "torch_npu", ""})) return false;
  return AnyOf(fn, {"contiguous", "npu_format_cast", "npu_format_cast_", "_npu_format_cast"});
}

bool IsCopyOperator(std::string_view name) {
  return NamespaceOf(name) == "aten" &&
         AnyOf(FunctionOf(name), {"copy_", "clone", "to", "_to_copy", "contiguous"});
}

bool IsCommunication(std::string_view name) {
  const std::string n = Lower(name);
  for (const std::string_view library : {"nccl", "hccl", "rccl", "hcom", "gloo", "c10d::"}) {
    if (Contains(n, library)) return true;
  }
  // Ascend's HCCL synchronisation tasks between ranks ("Notify Wait", "Notify Record").
  if (IsPeerWait(name) || n.rfind("notify record", 0) == 0 || n.rfind("notify_record", 0) == 0)
    return true;
  for (const std::string_view op : {"allreduce", "all_reduce", "allgather", "all_gather",
                                    "reducescatter", "reduce_scatter", "alltoall", "all_to_all"}) {
    if (Contains(n, op)) return true;
  }
  return false;
}

bool IsPeerWait(std::string_view name) {
  const std::string n = Lower(name);
  return n.rfind("notify wait", 0) == 0 || n.rfind("notify_wait", 0) == 0;
}

bool IsSyncCall(std::string_view name) {
  const std::string n = Lower(BaseName(name));
  if (Contains(n, "synchronize") || Contains(n, "wait")) return true;
  const std::string fn(FunctionOf(n));
  return AnyOf(fn, {"item", "_local_scalar_dense", "cudamemcpy", "hipmemcpy", "cumemcpydtoh",
                    "cumemcpydtoh_v2", "aclrtmemcpy", "cuda_sync"});
}

bool IsDataLoading(std::string_view name) {
  const std::string n = Lower(name);
  return Contains(n, "dataloader") || Contains(n, "data_loader") || Contains(n, "next_data") ||
         Contains(n, "__next__");
}

bool IsDataLoaderSpan(std::string_view name) {
  const std::string n = Lower(name);
  return Contains(n, "dataloader") || Contains(n, "data_loader");
}

bool IsWorkerDataLoaderSpan(std::string_view name) {
  return Contains(Lower(name), "multiprocessingdataloaderiter");
}

int ProfilerControl(std::string_view name) {
  if (name.find("profiler.py") == std::string_view::npos) return 0;
  // The function is the last word: "...py(199): start_trace", "...py:101 start_trace".
  const size_t space = name.find_last_of(' ');
  const std::string_view function = space == std::string_view::npos ? name : name.substr(space + 1);
  if (function == "start_trace" || function == "_start_trace") return 1;
  if (function == "stop_trace" || function == "_stop_trace") return -1;
  return 0;
}

bool IsPythonWait(std::string_view name) {
  if (name.starts_with("<built-in method acquire of _thread.") ||
      name == "<built-in function sleep>") {
    return true;
  }
  // "path/file.py(line): function"
  const size_t open = name.rfind(".py(");
  const size_t colon = name.find("): ", open == std::string_view::npos ? 0 : open);
  if (open == std::string_view::npos || colon == std::string_view::npos) return false;
  const size_t slash = name.find_last_of('/', open);
  const size_t from = slash == std::string_view::npos ? 0 : slash + 1;
  const std::string_view file = name.substr(from, open + 3 - from);
  const std::string_view function = name.substr(colon + 3);
  if (file == "threading.py") {
    return function == "wait" || function == "join" || function == "_wait_for_tstate_lock";
  }
  if (file == "queue.py") return function == "get";
  if (file == "selectors.py") return function == "select";
  return false;
}

bool IsIterationMarker(std::string_view name) {
  if (name.starts_with("ProfilerStep#")) return true;
  const std::string n = Lower(name);
  for (const std::string_view word : {"train_step", "train step", "iteration", "step", "iter"}) {
    if (!std::string_view(n).starts_with(word)) continue;
    size_t i = word.size();
    while (i < n.size() &&
           (n[i] == ' ' || n[i] == '_' || n[i] == '#' || n[i] == ':' || n[i] == '=')) {
      ++i;
    }
    if (i == word.size() || i >= n.size()) return false;  // "steps", "step" alone
    for (size_t j = i; j < n.size(); ++j) {
      if (!std::isdigit(static_cast<unsigned char>(n[j]))) return false;
    }
    return true;
  }
  return false;
}

std::string_view CompileKind(std::string_view name) {
  const std::string n = Lower(name);
  if (Contains(n, "aclopcompile")) return "ACL operator compilation";
  // Dynamo's eval_frame wrappers (_fn, compile_wrapper) run the compiled code
  // on every call, and Inductor's runtime (triton_heuristics' launchers)
  // launches its kernels: both are the compiled program running, not
  // compilation.
  const bool runs_compiled = Contains(n, "eval_frame") || Contains(n, "triton_heuristics") ||
                             Contains(n, "_inductor/runtime");
  if (!runs_compiled &&
      (Contains(n, "_dynamo") || Contains(n, "torchdynamo") || Contains(n, "compile_fx") ||
       Contains(n, "_inductor") || Contains(n, "compile_inner") || Contains(n, "async_compile") ||
       Contains(n, "call_user_compiler") || Contains(n, "graphlowering") ||
       Contains(n, "aot_autograd") || Contains(n, "aotautograd")))
    return "torch.compile";
  if (Contains(n, "cumoduleload") || Contains(n, "culibraryload") || Contains(n, "nvrtc") ||
      Contains(n, "hipmoduleload") || Contains(n, "cumodulegetfunction") || Contains(n, "hiprtc"))
    return "module load";
  if (IsMemoryAllocation(name)) return "memory allocation";
  return "";
}

std::string_view WithoutVersion(std::string_view name) {
  const size_t at = name.rfind("_v");
  if (at == std::string_view::npos || at + 2 >= name.size()) return name;
  for (size_t i = at + 2; i < name.size(); ++i) {
    if (!std::isdigit(static_cast<unsigned char>(name[i]))) return name;
  }
  return name.substr(0, at);
}

bool IsMemoryAllocation(std::string_view name) {
  // The driver's versioned entry points too: cuMemAlloc_v2, cuMemFreeHost_v2;
  // and a call named with its layer, as torch_npu names CANN's calls
  // ("AscendCL@aclrtMalloc"): the function after the '@'.
  const std::string fn(WithoutVersion(FunctionOf(Lower(WithoutLayer(BaseName(name))))));
  // Stream-ordered allocation (cudaMallocAsync, cuMemFreeAsync) is queued
  // work, cheap on the host: not set-up.
  if (fn.ends_with("async")) return false;
  // Each family's allocations and frees of device, host (pinned), managed
  // and pitched memory: cudaMalloc, cudaMallocHost, cudaMallocManaged,
  // cudaMallocPitch, cudaFree, cudaFreeHost, cudaHostAlloc; cuMemAlloc,
  // cuMemAllocHost, cuMemAllocManaged, cuMemHostAlloc, cuMemFree,
  // cuMemFreeHost; hipMalloc, hipHostMalloc, hipExtMallocWithFlags, hipFree,
  // hipHostFree; aclrtMalloc, aclrtMallocHost, aclrtFree, aclrtFreeHost,
  // aclrtFreePhysical, and the allocation torch_npu's caching allocator
  // makes through CANN (aclMallocMemInner: msprof-analyze's memory rule,
  // advisor/rules/en/memory.yaml, names it with aclrtFree and
  // aclrtFreePhysical as the calls that leave the device free).
  for (const std::string_view prefix :
       {"cudamalloc", "cudafree", "cudahostalloc", "cumemalloc", "cumemfree", "cumemhostalloc",
        "hipmalloc", "hipfree", "hiphostmalloc", "hiphostfree", "hipextmalloc", "hipmemalloc",
        "aclrtmalloc", "aclrtfree", "aclmallocmem"}) {
    if (fn.starts_with(prefix)) return true;
  }
  // Virtual memory management, which allocators (PyTorch's expandable
  // segments) and program exit use: physical memory created and released,
  // address ranges reserved, mapped, unmapped and freed.
  return AnyOf(
      fn, {"cumemcreate", "cumemrelease", "cumemaddressreserve", "cumemaddressfree", "cumemmap",
           "cumemunmap", "cumemsetaccess", "hipmemcreate", "hipmemrelease", "hipmemaddressreserve",
           "hipmemaddressfree", "hipmemmap", "hipmemunmap", "hipmemsetaccess"});
}

bool RecordsPyTorch(const TraceModel& model) {
  if (model.written_by_pytorch) return true;
  for (size_t id = 0; id < model.string_count(); ++id) {
    const std::string_view s = model.String(static_cast<uint32_t>(id));
    if (s.starts_with("aten::") || s.starts_with("ProfilerStep#") || s.starts_with("torch_npu") ||
        s.starts_with("c10d::") || s.starts_with("autograd::")) {
      return true;
    }
  }
  return false;
}

std::vector<bool> ClassifyNames(const TraceModel& model, bool (*test)(std::string_view)) {
  std::vector<bool> out(model.string_count(), false);
  std::vector<bool> seen(model.string_count(), false);
  for (const uint32_t id : model.name) {
    if (seen[id]) continue;
    seen[id] = true;
    out[id] = test(model.String(id));
  }
  return out;
}

}  // namespace opscope::analyze
