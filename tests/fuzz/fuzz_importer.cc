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

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const std::string path = "/tmp/opscope-fuzz-" + std::to_string(::getpid()) +
                                  (OPSCOPE_FUZZ_GZIP ? ".json.gz" : OPSCOPE_FUZZ_SUFFIX);
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
