// Analysis pass "import_notes": what the trace's reader could not use
// (TraceModel::import_notes), said in the report beside what it did read, so
// that an analysis without some data is never read as one that found none.
#include <fmt/format.h>

#include <string>
#include <vector>

#include "analyze/analysis.h"
#include "analyze/links.h"
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
  return {
      kImportNotesPass,
      "What in the trace could its reader not use?",
      {"links"},
      [](const TraceModel& model, Analysis& a) {
        std::vector<std::string> notes = model.import_notes;
        if (model.long_texts > 0) {
          notes.push_back(fmt::format(
              "{} text{} longer than {} KiB (names, shapes or fields; the longest {} bytes) "
              "{} kept by {} ends: the first {} KiB and the last {} KiB around a marker "
              "saying how many bytes were left out. The trace holds {} whole.",
              model.long_texts, model.long_texts == 1 ? "" : "s", TraceModel::kMaxTextBytes >> 10,
              model.longest_text, model.long_texts == 1 ? "is" : "are",
              model.long_texts == 1 ? "its" : "their", TraceModel::kKeptHead >> 10,
              TraceModel::kKeptTail >> 10, model.long_texts == 1 ? "it" : "them"));
        }
        const EventLinks& l = a.links;
        if (l.uneven > 0 && l.uneven_example >= 0) {
          const auto e = static_cast<size_t>(l.uneven_example);
          notes.push_back(fmt::format(
              "{} host event{} start inside another on their thread and end after it (by up "
              "to {:.3f} ms; the first: '{}'): the trace format wants them nested (the "
              "producer's clocks, or an end it lost). Each is read as beside the event it "
              "overlaps, not inside it.",
              l.uneven, l.uneven == 1 ? "" : "s", l.uneven_max_ns / 1e6,
              std::string(model.String(model.name[e]).substr(0, 120))));
        }
        a.results.Set(kImportNotesPass, std::move(notes));
      },
      Tables};
}

}  // namespace opscope::analyze
