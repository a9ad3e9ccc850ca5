#include "analyze/importer.h"

#include "analyze/importers/chrome_json_importer.h"
#include "analyze/importers/kernel_details_importer.h"
#include "analyze/json_event_reader.h"
#include "core/text.h"
#include "opscope/opscope.h"

namespace opscope::analyze {

TraceModel ImportTrace(const std::filesystem::path& path) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) {
    throw Error(ErrorCode::kUnsupported, "'" + path.string() + "' is a folder, not a trace file");
  }
  const std::string head = ReadHead(path, 4096);
  TraceModel model;
  if (SniffChromeJson(head)) {
    ImportChromeJson(path, model);
    return model;
  }
  if (SniffKernelDetails(head)) {
    ImportKernelDetails(path, model);
    return model;
  }
  throw Error(
      ErrorCode::kUnsupported,
      "'" + path.string() +
          "' is not a trace format opscope reads (Chrome-trace JSON from opscope, "
          "PyTorch/Kineto or torch_npu, or torch_npu's kernel_details.csv; plain or .gz); it "
          "begins: " +
          core::EscapeForTerminal(head.substr(0, 40)));
}

}  // namespace opscope::analyze
