// Analysis pass "import_notes": what the trace's reader could not use
// (TraceModel::import_notes), said in the report beside what it did read, so
// that an analysis without some data is never read as one that found none.
#include <string>
#include <vector>

#include "analyze/analysis.h"
#include "analyze/passes/pass.h"

namespace opscope::analyze {

namespace {

constexpr std::string_view kImportNotesPass = "import_notes";

void Tables(const Analysis& a, const TableContext& context,
            std::vector<core::ResultTable>& tables) {
  const auto* notes = a.results.Get<std::vector<std::string>>(kImportNotesPass);
  if (notes == nullptr || notes->empty()) return;
  core::ResultTable table;
  table.section = std::string(kImportNotesPass);
  table.title = "What the reader left out";
  table.columns = {{"trace", "Trace", 0, false}, {"note", "Note"}};
  for (const std::string& note : *notes) table.AddRow({std::string(context.path), note});
  tables.push_back(std::move(table));
}

}  // namespace

Pass ImportNotesPass() {
  return {kImportNotesPass,
          "What in the trace could its reader not use?",
          {},
          [](const TraceModel& model, Analysis& a) {
            a.results.Set(kImportNotesPass, model.import_notes);
          },
          Tables};
}

}  // namespace opscope::analyze
