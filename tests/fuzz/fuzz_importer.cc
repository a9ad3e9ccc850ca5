// libFuzzer target for one importer (chosen at build time by OPSCOPE_FUZZ_FORMAT):
// any input must either import or be refused with opscope::Error; a crash, a
// hang, a sanitizer report or any other exception is a bug. Imported traces also
// go through every analysis, the advisor and the reports.
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <string>

#include "analyze/advisor.h"
#include "analyze/importer.h"
#include "analyze/pipeline.h"
#include "opscope/opscope.h"
#include "report/analysis_report.h"

namespace {

// The file each input is written to for the importer to read: one per
// process, removed when the process exits (libFuzzer's end of run), so that
// runs do not leave their last input behind (a failing input is kept by
// libFuzzer itself, as crash-*).
struct ScratchFile {
  std::string path = "/tmp/opscope-fuzz-" + std::to_string(::getpid()) +
                     (OPSCOPE_FUZZ_GZIP ? ".json.gz" : OPSCOPE_FUZZ_SUFFIX);
  ~ScratchFile() { std::remove(path.c_str()); }
};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const ScratchFile scratch;
  const std::string& path = scratch.path;
  FILE* f = std::fopen(path.c_str(), "wb");
  if (f == nullptr) return 0;
  std::fwrite(data, 1, size, f);
  std::fclose(f);
  try {
    const auto model = opscope::analyze::ImportTrace(path);
    const auto analysis = opscope::analyze::AnalyzeTrace(model);
    const auto findings = opscope::analyze::Advise(analysis);
    const std::vector<opscope::report::AnalyzedTrace> traces = {{.path = path,
                                                                 .format = model.format,
                                                                 .events = model.size(),
                                                                 .tracks = model.tracks.size(),
                                                                 .analysis = analysis,
                                                                 .findings = findings}};
    opscope::report::SummaryCsv(traces);
    opscope::report::AnalysisHtml(traces, {});
  } catch (const opscope::Error&) {
    // Refused with a message: the expected outcome for bad input.
  }
  return 0;
}
