#include "mpi/mpi_scaleout.h"

#include <mpi.h>

#include <charconv>
#include <cstring>
#include <fstream>
#include <iostream>
#include <thread>

#include "core/text.h"
#include "opscope/opscope.h"

namespace opscope::mpi {
namespace {

void Check(int code, const char* what) {
  if (code != MPI_SUCCESS) {
    char text[MPI_MAX_ERROR_STRING];
    int length = 0;
    MPI_Error_string(code, text, &length);
    throw Error(ErrorCode::kInternal, std::string(what) + ": " + std::string(text, length));
  }
}

void PutSize(std::string& out, uint64_t n) { out.append(reinterpret_cast<const char*>(&n), 8); }

}  // namespace

std::vector<Assignment> ReadAssignments(const std::string& list_file) {
  std::ifstream in(list_file);
  if (!in) throw Error(ErrorCode::kIo, "cannot read the list '" + list_file + "'");
  std::vector<Assignment> out;
  std::string line;
  for (int number = 1; std::getline(in, line); ++number) {
    const auto first = line.find_first_not_of(" \t\r");
    if (first == std::string::npos || line[first] == '#') continue;
    auto last = line.find_last_not_of(" \t\r");
    std::string_view text(line.data() + first, last - first + 1);
    Assignment a;
    const auto space = text.find_first_of(" \t");
    int process = -1;
    if (space != std::string_view::npos) {
      const auto [ptr, ec] = std::from_chars(text.data(), text.data() + space, process);
      if (ec == std::errc() && ptr == text.data() + space) {
        if (process < 0) {
          throw Error(ErrorCode::kInvalidInput,
                      list_file + ": line " + std::to_string(number) + ": a negative process");
        }
        text.remove_prefix(space);
        text.remove_prefix(text.find_first_not_of(" \t"));
        a.process = process;
      }
    }
    a.input = std::string(text);
    out.push_back(std::move(a));
  }
  if (out.empty()) throw Error(ErrorCode::kInvalidInput, list_file + ": names no trace");
  return out;
}

MpiRun RunScaleOut(const std::vector<Assignment>& inputs,
                   const analyze::SummarizeOptions& options) {
  int initialized = 0;
  MPI_Initialized(&initialized);
  if (!initialized) Check(MPI_Init(nullptr, nullptr), "MPI_Init");
  MpiRun run;
  MPI_Comm_rank(MPI_COMM_WORLD, &run.process);
  MPI_Comm_size(MPI_COMM_WORLD, &run.processes);

  // The processes on this machine share its cores.
  MPI_Comm local;
  int local_size = 1;
  if (MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, run.process, MPI_INFO_NULL,
                          &local) == MPI_SUCCESS) {
    MPI_Comm_size(local, &local_size);
    MPI_Comm_free(&local);
  }
  analyze::SummarizeOptions share = options;
  if (share.cores <= 0) {
    share.cores = std::max(
        1, static_cast<int>(std::max(1u, std::thread::hardware_concurrency())) / local_size);
  }

  // Stage 1 on this process's share. The payload: 'S', then per summary its
  // size (8 bytes) and bytes; or 'E' and the error.
  std::string payload;
  try {
    std::vector<analyze::TraceInput> traces;
    std::vector<size_t> positions;
    std::vector<analyze::UnusedFile> unused;
    for (size_t i = 0; i < inputs.size(); ++i) {
      const int owner =
          inputs[i].process >= 0 ? inputs[i].process : static_cast<int>(i % run.processes);
      if (owner >= run.processes) {
        throw Error(ErrorCode::kInvalidArgument,
                    "'" + inputs[i].input + "' is assigned to process " + std::to_string(owner) +
                        " of " + std::to_string(run.processes));
      }
      if (owner != run.process) continue;
      analyze::TraceInputs found = analyze::FindTraceInputs({inputs[i].input});
      for (analyze::TraceInput& t : found.traces) {
        traces.push_back(std::move(t));
        positions.push_back(i);
      }
      for (auto& u : found.unused) unused.push_back(std::move(u));
    }
    const auto docs = analyze::SummarizeTraces(traces, positions, share, unused);
    for (const auto& u : unused) {
      std::cerr << "opscope: process " << run.process << ": "
                << core::EscapeForTerminal(u.path + ": " + u.reason) << "\n";
    }
    payload = "S";
    PutSize(payload, docs.size());
    for (const std::string& d : docs) {
      PutSize(payload, d.size());
      payload += d;
    }
  } catch (const std::exception& e) {
    payload = std::string("E") + e.what();
  }
  // Gather to process 0, when it fits in one gather (counts are ints): every
  // process learns the total first, so none is left waiting.
  int64_t mine = static_cast<int64_t>(payload.size()), total_bytes = 0;
  Check(MPI_Allreduce(&mine, &total_bytes, 1, MPI_INT64_T, MPI_SUM, MPI_COMM_WORLD),
        "MPI_Allreduce");
  if (total_bytes > INT32_MAX) {
    if (run.process != 0) return run;
    throw Error(ErrorCode::kResourceExhausted,
                "the summaries of all processes exceed 2 GiB: merge them from files instead "
                "(opscope analyze --summary-only, then opscope merge)");
  }
  const int size = static_cast<int>(payload.size());
  std::vector<int> sizes(run.process == 0 ? run.processes : 0);
  Check(MPI_Gather(&size, 1, MPI_INT, sizes.data(), 1, MPI_INT, 0, MPI_COMM_WORLD), "MPI_Gather");
  std::vector<int> offsets;
  std::string all;
  if (run.process == 0) {
    int64_t total = 0;
    for (const int s : sizes) {
      offsets.push_back(static_cast<int>(total));
      total += s;
    }
    all.resize(static_cast<size_t>(total));
  }
  Check(MPI_Gatherv(payload.data(), size, MPI_CHAR, all.data(), sizes.data(), offsets.data(),
                    MPI_CHAR, 0, MPI_COMM_WORLD),
        "MPI_Gatherv");
  if (run.process != 0) return run;

  std::vector<std::string_view> documents;  // slices of `all`: no copies
  std::vector<std::string> names;
  std::string errors;
  for (int p = 0; p < run.processes; ++p) {
    const std::string_view part(all.data() + offsets[p], static_cast<size_t>(sizes[p]));
    if (part.empty() || part[0] == 'E') {
      errors += "process " + std::to_string(p) + ": " +
                std::string(part.empty() ? "sent nothing" : part.substr(1)) + "\n";
      run.traces_per_process.push_back(0);
      continue;
    }
    size_t at = 1;
    const auto take = [&](uint64_t& n) {
      if (part.size() - at < 8) throw Error(ErrorCode::kInternal, "a truncated MPI payload");
      std::memcpy(&n, part.data() + at, 8);
      at += 8;
    };
    uint64_t count = 0;
    take(count);
    run.traces_per_process.push_back(static_cast<int64_t>(count));
    for (uint64_t k = 0; k < count; ++k) {
      uint64_t n = 0;
      take(n);
      if (part.size() - at < n) throw Error(ErrorCode::kInternal, "a truncated MPI payload");
      documents.push_back(part.substr(at, n));
      names.push_back("summary " + std::to_string(k) + " of process " + std::to_string(p));
      at += n;
    }
  }
  if (!errors.empty()) {
    throw Error(ErrorCode::kInvalidInput, "stage 1 failed on some processes:\n" + errors);
  }
  run.result = analyze::MergeSummaryDocuments(documents, names);
  return run;
}

void FinalizeMpi() {
  int initialized = 0, finalized = 0;
  MPI_Initialized(&initialized);
  MPI_Finalized(&finalized);
  if (initialized && !finalized) MPI_Finalize();
}

}  // namespace opscope::mpi
