// A floor for issue "Ascend, whole"'s speed goal: opscope's CSV reader cutting
// a file into fields on every core (CsvBatcher's runs, each read by CsvReader
// as the kernel_details importer reads them) and nothing else: no model, no
// numbers, no analyses. Whatever the importer does on top costs more, so the
// goal cannot be met when this alone takes longer than the goal allows.
// Prints the time, the records and fields counted, and the threads used.
//   csv_tokenize FILE
#include <chrono>
#include <cstdio>
#include <string>
#include <thread>
#include <vector>

#include "analyze/importers/csv_reader.h"
#include "analyze/ordered_batches.h"
#include "analyze/source.h"
#include "opscope/opscope.h"

int main(int argc, char** argv) {
  using namespace opscope::analyze;
  if (argc != 2) {
    std::fprintf(stderr, "usage: csv_tokenize FILE\n");
    return 2;
  }
  try {
    const auto t0 = std::chrono::steady_clock::now();
    const auto source = Source::Open(argv[1]);
    CsvBatcher batcher(*source, ImportChunkBytes(0, source->expected_bytes()));
    struct State {
      CsvBatch batch;
      std::vector<std::string_view> fields;
      size_t records = 0, field_count = 0;
    };
    size_t records = 0, fields = 0;
    const int threads = ImportThreads(0, source->expected_bytes());
    RunOrderedBatches<State>(
        threads, [](State&) {}, [&](State& s) { return batcher.Next(s.batch); },
        [&](State& s) {
          CsvReader csv(source->name(), s.batch.bytes(), s.batch.first_line);
          s.records = s.field_count = 0;
          while (csv.NextViews(s.fields)) ++s.records, s.field_count += s.fields.size();
        },
        [&](State& s, uint64_t) { records += s.records, fields += s.field_count; });
    const double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    std::printf("%.3f s, %zu records, %zu fields, %d threads\n", seconds, records, fields, threads);
  } catch (const opscope::Error& e) {
    std::fprintf(stderr, "csv_tokenize: %s\n", e.what());
    return 1;
  }
  return 0;
}
