// The source layer under every importer: containers (plain, gzip with several
// members, zip deflate and stored), pipes and standard input, Peek then Read,
// and sniffing that looks as far as it needs.
#include "analyze/source.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include <atomic>
#include <fstream>
#include <map>
#include <thread>

#include "analyze/importer.h"
#include "analyze/trace_inputs.h"
#include "core/cancel.h"
#include "opscope/opscope.h"
#include "test_util.h"

namespace opscope::analyze {
namespace {

std::filesystem::path WriteFile(const std::filesystem::path& path, const std::string& bytes) {
  std::ofstream(path, std::ios::binary) << bytes;
  return path;
}

// One gzip member of `text`, as gzip(1) writes it.
std::string Gzip(const std::string& text) {
  z_stream z{};
  EXPECT_EQ(deflateInit2(&z, 6, Z_DEFLATED, 16 + MAX_WBITS, 8, Z_DEFAULT_STRATEGY), Z_OK);
  std::string out(deflateBound(&z, text.size()) + 64, '\0');
  z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(text.data()));
  z.avail_in = static_cast<uInt>(text.size());
  z.next_out = reinterpret_cast<Bytef*>(out.data());
  z.avail_out = static_cast<uInt>(out.size());
  EXPECT_EQ(deflate(&z, Z_FINISH), Z_STREAM_END);
  out.resize(z.total_out);
  deflateEnd(&z);
  return out;
}

std::string ReadAll(Source& source, size_t chunk = 7) {
  std::string out, buffer(chunk, '\0');
  while (const size_t got = source.Read(buffer.data(), buffer.size())) out.append(buffer, 0, got);
  return out;
}

std::string Text(size_t n) {
  std::string text;
  for (size_t i = 0; text.size() < n; ++i) text += "line " + std::to_string(i) + "\n";
  text.resize(n);
  return text;
}

TEST(Source, PlainFileIsPeekedThenReadWhole) {
  testing::TempDir dir;
  const std::string text = Text(100000);
  const auto source = Source::Open(WriteFile(dir.path() / "a.txt", text));
  EXPECT_EQ(source->container(), Container::kPlain);
  EXPECT_EQ(source->expected_bytes(), text.size());
  EXPECT_EQ(source->Peek(10), text.substr(0, 10));
  EXPECT_EQ(source->Peek(5000), text.substr(0, 5000));  // peeking further extends the view
  EXPECT_FALSE(source->PeekedAll());
  EXPECT_EQ(ReadAll(*source), text);
  EXPECT_THROW(source->Peek(1), Error) << "Peek after Read";
}

// Every importer reads through Source::Read, a cancellation point: once the
// thread's flag is set the next read throws core::Cancelled (the Python
// package's Ctrl-C), whatever the container.
TEST(Source, AReadAfterCancellationThrows) {
  testing::TempDir dir;
  const std::string text = Text(100000);
  const auto plain = WriteFile(dir.path() / "a.txt", text);
  const auto gzipped = WriteFile(dir.path() / "a.txt.gz", Gzip(text));
  for (const auto& path : {plain, gzipped}) {
    const auto source = Source::Open(path);
    std::atomic<bool> flag{false};
    core::CancelScope scope(&flag);
    std::string buffer(1000, '\0');
    EXPECT_EQ(source->Read(buffer.data(), buffer.size()), buffer.size());
    flag = true;
    EXPECT_THROW(source->Read(buffer.data(), buffer.size()), core::Cancelled) << path;
  }
}

TEST(Source, PeekingPastTheEndSaysSo) {
  testing::TempDir dir;
  const auto source = Source::Open(WriteFile(dir.path() / "short", "abc"));
  EXPECT_EQ(source->Peek(4096), "abc");
  EXPECT_TRUE(source->PeekedAll());
  EXPECT_EQ(ReadAll(*source), "abc");
}

TEST(Source, GzipOfSeveralMembersReadsAsOneStream) {
  testing::TempDir dir;
  const std::string a = Text(70000), b = Text(1234);
  const auto source = Source::Open(WriteFile(dir.path() / "a.gz", Gzip(a) + Gzip(b)));
  EXPECT_EQ(source->container(), Container::kGzip);
  EXPECT_EQ(source->Peek(3), a.substr(0, 3));
  EXPECT_EQ(ReadAll(*source, 4096), a + b);
}

TEST(Source, TruncatedAndCorruptGzipNameTheInput) {
  testing::TempDir dir;
  const std::string gz = Gzip(Text(50000));
  const auto cut = WriteFile(dir.path() / "cut.gz", gz.substr(0, gz.size() / 2));
  const auto source = Source::Open(cut);
  try {
    ReadAll(*source, 4096);
    ADD_FAILURE() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::kInvalidInput);
    EXPECT_NE(std::string(e.what()).find("cut.gz': the gzip data ends early"), std::string::npos)
        << e.what();
  }
  std::string bad = gz;
  for (size_t i = 20; i < 60; ++i) bad[i] = static_cast<char>(~bad[i]);
  const auto corrupt = Source::Open(WriteFile(dir.path() / "bad.gz", bad));
  try {
    ReadAll(*corrupt, 4096);
    ADD_FAILURE() << "no error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("bad.gz': corrupt gzip data"), std::string::npos)
        << e.what();
  }
}

// Zip archives made by Python's zipfile module, an independent writer.
std::filesystem::path Zip(const testing::TempDir& dir, const std::string& name,
                          const std::string& method, int entries, const std::string& text) {
  const auto content = WriteFile(dir.path() / (name + ".content"), text);
  const auto zip = dir.path() / name;
  const auto result = testing::RunCommand(
      std::string(OPSCOPE_PYTHON) + " -c 'import sys, zipfile\n" +
      "with zipfile.ZipFile(sys.argv[1], \"w\", zipfile." + method + ") as z:\n" +
      "  for i in range(int(sys.argv[3])): z.write(sys.argv[2], f\"t{i}.json\")' " +
      testing::Quote(zip.string()) + " " + testing::Quote(content.string()) + " " +
      std::to_string(entries));
  EXPECT_EQ(result.status, 0) << result.output;
  return zip;
}

TEST(Source, ZipOfOneFileDeflatedOrStored) {
  testing::TempDir dir;
  const std::string text = Text(300000);
  for (const char* method : {"ZIP_DEFLATED", "ZIP_STORED"}) {
    const auto source = Source::Open(Zip(dir, std::string(method) + ".zip", method, 1, text));
    EXPECT_EQ(source->container(), Container::kZip) << method;
    EXPECT_EQ(source->Peek(6), text.substr(0, 6)) << method;
    EXPECT_EQ(ReadAll(*source, 65536), text) << method;
  }
}

TEST(Source, ZipOfSeveralFilesIsRefusedNotHalfRead) {
  testing::TempDir dir;
  // Written to a file, and to a pipe (each entry's sizes in a data
  // descriptor after its data: zipfile cannot seek back on a pipe).
  const auto streamed = dir.path() / "streamed.zip";
  const auto content = WriteFile(dir.path() / "two.content", Text(1000));
  const auto made = testing::RunCommand(
      std::string(OPSCOPE_PYTHON) +
      " -c 'import sys, zipfile\n"
      "with zipfile.ZipFile(sys.stdout.buffer, \"w\", zipfile.ZIP_DEFLATED) as z:\n"
      "  z.write(sys.argv[1], \"a.json\"); z.write(sys.argv[1], \"b.json\")' " +
      testing::Quote(content.string()) + " | cat > " + testing::Quote(streamed.string()));
  ASSERT_EQ(made.status, 0) << made.output;
  for (const auto& path : {Zip(dir, "two.zip", "ZIP_DEFLATED", 2, Text(1000)), streamed}) {
    const auto source = Source::Open(path);
    try {
      ReadAll(*source, 65536);
      ADD_FAILURE() << "no error: " << path;
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), ErrorCode::kUnsupported) << path;
      EXPECT_NE(std::string(e.what()).find("zip archive of several files"), std::string::npos)
          << e.what();
    }
  }
  // One file written to a stream reads whole.
  const auto one = dir.path() / "one-streamed.zip";
  ASSERT_EQ(testing::RunCommand(std::string(OPSCOPE_PYTHON) +
                                " -c 'import sys, zipfile\n"
                                "with zipfile.ZipFile(sys.stdout.buffer, \"w\", "
                                "zipfile.ZIP_DEFLATED) as z:\n"
                                "  z.write(sys.argv[1], \"a.json\")' " +
                                testing::Quote(content.string()) + " | cat > " +
                                testing::Quote(one.string()))
                .status,
            0);
  const auto source = Source::Open(one);
  EXPECT_EQ(ReadAll(*source, 65536), Text(1000));
}

TEST(Source, FolderIsRefused) {
  testing::TempDir dir;
  try {
    Source::Open(dir.path());
    ADD_FAILURE() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::kUnsupported);
    EXPECT_NE(std::string(e.what()).find("is a folder"), std::string::npos) << e.what();
  }
}

const char* kEvent =
    R"({"ph":"X","name":"aten::mm","cat":"cpu_op","ts":1,"dur":2,"pid":1,"tid":1})";

// A pipe can be read once only: sniffing and importing share the one opening.
TEST(Source, ImportFromANamedPipeOpensItOnce) {
  testing::TempDir dir;
  const auto fifo = dir.path() / "trace.fifo";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  const std::string text = std::string("{\"traceEvents\":[") + kEvent + "," + kEvent + "]}";
  std::thread writer([&] {
    const int fd = ::open(fifo.c_str(), O_WRONLY);
    if (fd < 0) return;
    const std::string gz = Gzip(text);  // through gzip too: the container sits below
    for (size_t at = 0; at < gz.size();) {
      const ssize_t n = ::write(fd, gz.data() + at, gz.size() - at);
      if (n <= 0) break;
      at += static_cast<size_t>(n);
    }
    ::close(fd);
  });
  TraceModel model;
  EXPECT_NO_THROW(model = ImportTrace(fifo));
  writer.join();
  EXPECT_EQ(model.size(), 2u);
}

TEST(Sniffing, MetadataOfAnySizeBeforeTheEvents) {
  testing::TempDir dir;
  for (const size_t metadata : {size_t{100}, size_t{5000}, size_t{300000}, size_t{5} << 20}) {
    const std::string text = "{\"deviceProperties\":[{\"name\":\"" + std::string(metadata, 'x') +
                             "\"}],\"traceEvents\":[" + kEvent + "]}";
    const auto path = WriteFile(dir.path() / "meta.json", text);
    TraceModel model;
    EXPECT_NO_THROW(model = ImportTrace(path)) << metadata << " bytes of metadata";
    EXPECT_EQ(model.size(), 1u) << metadata;
  }
}

TEST(Sniffing, ATopLevelKeyOnlyCountsAtTheTopLevel) {
  testing::TempDir dir;
  const auto path =
      WriteFile(dir.path() / "other.json", R"({"config":{"traceEvents":[1]},"steps":[]})");
  try {
    ImportTrace(path);
    ADD_FAILURE() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::kUnsupported);
    EXPECT_NE(std::string(e.what()).find("is not a trace format opscope reads"), std::string::npos)
        << e.what();
  }
}

TEST(Sniffing, EveryImporterReadsEveryContainer) {
  testing::TempDir dir;
  const std::string csv =
      "Step Id,Name,Type,Accelerator Core,Start Time(us),Duration(us),Wait Time(us)\r\n"
      "1,MatMul_1,MatMul,AI_CORE,\"1700000000000010.5\t\",20.25,0\r\n"
      "1,Cast_2,Cast,AI_VECTOR_CORE,\"1700000000000040\t\",3.5,1\r\n";
  const auto plain = WriteFile(dir.path() / "kernel_details.csv", csv);
  const auto gz = WriteFile(dir.path() / "kernel_details.csv.gz", Gzip(csv));
  const auto zip = Zip(dir, "kernel_details.zip", "ZIP_DEFLATED", 1, csv);
  for (const auto& path : {plain, gz, zip}) {
    TraceModel model;
    ASSERT_NO_THROW(model = ImportTrace(path)) << path;
    EXPECT_EQ(model.format, "ascend-kernel-details") << path;
    EXPECT_TRUE(model.ColumnsAligned()) << path;
    ASSERT_EQ(model.size(), 2u) << path;
    EXPECT_EQ(model.duration_ns[0], 20250) << path;
    EXPECT_EQ(model.start_ns[1], 1700000000000040000) << path;
  }
}

TEST(Discovery, FolderFilesAreChosenByTheImportersPatterns) {
  testing::TempDir dir;
  WriteFile(dir.path() / "b.json", "{}");
  WriteFile(dir.path() / "a.json.gz", "");
  WriteFile(dir.path() / "kernel_details.csv", "");
  WriteFile(dir.path() / "kernel_details_20240101.csv.gz", "");
  WriteFile(dir.path() / "notes.txt", "");
  WriteFile(dir.path() / "op_summary.csv", "");
  const auto files = FindTraceFiles({dir.path().string(), "-"});
  std::vector<std::string> names;
  for (const auto& f : files) names.push_back(std::filesystem::path(f).filename().string());
  EXPECT_EQ(names, (std::vector<std::string>{"a.json.gz", "b.json", "kernel_details.csv",
                                             "kernel_details_20240101.csv.gz", "-"}));
  testing::TempDir empty;
  WriteFile(empty.path() / "notes.txt", "");
  EXPECT_THROW(FindTraceFiles({empty.path().string()}), Error);
}

// msprof-analyze's cluster output alone is not a timeline: the error says what
// it is and what to give instead, not that its JSON is no trace format.
TEST(Discovery, ClusterOutputAloneIsExplained) {
  testing::TempDir dir;
  for (const char* name : {"cluster_analysis_output", "out"}) {
    const auto cluster = dir.path() / name;
    std::filesystem::create_directories(cluster);
    WriteFile(cluster / "cluster_communication.json", "{}");
    WriteFile(cluster / "communication_group.json", "{}");
    for (const auto& input : {cluster, dir.path()}) {  // the folder, or the one above it
      try {
        FindTraceInputs({input.string()});
        ADD_FAILURE() << input << " was taken for traces";
      } catch (const Error& e) {
        EXPECT_EQ(e.code(), ErrorCode::kInvalidInput);
        EXPECT_NE(std::string(e.what()).find("is msprof-analyze's cluster output"),
                  std::string::npos)
            << e.what();
        EXPECT_NE(std::string(e.what()).find("*_ascend_pt"), std::string::npos) << e.what();
      }
    }
    std::filesystem::remove_all(cluster);
  }
  // A folder of traces that also holds a communication_group.json is still one.
  WriteFile(dir.path() / "communication_group.json", "{}");
  WriteFile(dir.path() / "t.json", "[]");
  const TraceInputs found = FindTraceInputs({dir.path().string()});
  ASSERT_EQ(found.traces.size(), 2u) << "both .json files are tried as traces";
}

TEST(Discovery, AscendTreesGiveOneTimelinePerRankAndListTheRest) {
  // A job folder as torch_npu leaves it (docs/formats/ascend.md, 1.2 and 1.7): two hosts,
  // ranks from profiler_info_{rank}.json, a rank profiled twice, a rank whose
  // rank is only in profiler_info.json's rank_id (a string, as new releases
  // write it), one with only the SQLite export (its timeline, the rank in the
  // database's name), and an msprof PROF_* folder.
  testing::TempDir dir;
  const auto job = dir.path() / "job";
  const auto rank_dir = [&](const std::string& host, const std::string& name) {
    const auto root = job / host / name;
    std::filesystem::create_directories(root / "ASCEND_PROFILER_OUTPUT");
    std::filesystem::create_directories(root / "FRAMEWORK");
    std::filesystem::create_directories(root / "PROF_000001_20260102120000000_ABCDEF");
    WriteFile(root / "ASCEND_PROFILER_OUTPUT" / "analyse.done", "");
    return root;
  };
  const auto r1 = rank_dir("node_b", "host_b_7_20260102120000123_ascend_pt");
  WriteFile(r1 / "profiler_info_1.json", "{}");
  WriteFile(r1 / "ASCEND_PROFILER_OUTPUT" / "trace_view.json", "[]");
  WriteFile(r1 / "ASCEND_PROFILER_OUTPUT" / "kernel_details.csv", "");
  WriteFile(r1 / "ASCEND_PROFILER_OUTPUT" / "communication.json", "{}");
  const auto r0 = rank_dir("node_a", "host_a_3_20260102120000456_ascend_pt");
  WriteFile(r0 / "profiler_info_0.json", "{}");
  WriteFile(r0 / "ASCEND_PROFILER_OUTPUT" / "kernel_details.csv", "");
  // The raw CANN run under a rank: its device info.json gives the chip.
  const auto r0_device = r0 / "PROF_000001_20260102120000000_ABCDEF" / "device_0";
  std::filesystem::create_directories(r0_device);
  WriteFile(r0_device / "info.json.0.done", "");
  WriteFile(r0_device / "info.json.0", "{}");
  const auto r0_old = rank_dir("node_a", "host_a_3_20260101090000000_ascend_pt");
  WriteFile(r0_old / "profiler_info_0.json", "{}");
  WriteFile(r0_old / "ASCEND_PROFILER_OUTPUT" / "trace_view.json", "[]");
  const auto r2 = rank_dir("node_b", "host_b_8_20260102120000789_ascend_ms");
  WriteFile(r2 / "profiler_info.json", "{\"rank_id\": \"2\"}");
  WriteFile(r2 / "ASCEND_PROFILER_OUTPUT" / "trace_view.json", "[]");
  const auto db_only = rank_dir("node_b", "host_b_9_20260102120000999_ascend_pt");
  WriteFile(db_only / "ASCEND_PROFILER_OUTPUT" / "ascend_pytorch_profiler_3.db", "");
  const auto prof = job / "PROF_000002_20260102120000000_XYZ" / "mindstudio_profiler_output";
  std::filesystem::create_directories(prof);
  std::filesystem::create_directories(prof.parent_path() / "device_1");
  WriteFile(prof.parent_path() / "device_1" / "info.json.1", "{}");
  WriteFile(prof / "msprof_20260102120000.json", "[]");
  WriteFile(prof / "op_summary_20260102120000.csv", "");
  // msprof-analyze's cluster output in the job folder (docs/formats/ascend.md: under its input).
  std::filesystem::create_directories(job / "cluster_analysis_output");
  WriteFile(job / "cluster_analysis_output" / "cluster_communication.json", "{}");
  WriteFile(job / "cluster_analysis_output" / "cluster_step_trace_time.csv", "Step\n");

  const TraceInputs found = FindTraceInputs({job.string()});
  std::vector<std::pair<std::string, int>> traces;
  for (const auto& t : found.traces) {
    traces.emplace_back(std::filesystem::relative(t.path, job).string(), t.rank);
  }
  const std::vector<std::pair<std::string, int>> expected = {
      {"node_a/host_a_3_20260102120000456_ascend_pt/ASCEND_PROFILER_OUTPUT/kernel_details.csv", 0},
      {"node_b/host_b_7_20260102120000123_ascend_pt/ASCEND_PROFILER_OUTPUT/trace_view.json", 1},
      {"node_b/host_b_8_20260102120000789_ascend_ms/ASCEND_PROFILER_OUTPUT/trace_view.json", 2},
      {"node_b/host_b_9_20260102120000999_ascend_pt/ASCEND_PROFILER_OUTPUT/"
       "ascend_pytorch_profiler_3.db",
       3},
      {"PROF_000002_20260102120000000_XYZ/mindstudio_profiler_output/msprof_20260102120000.json",
       -1}};
  EXPECT_EQ(traces, expected);
  EXPECT_EQ(found.traces[2].rank_source, "profiler_info.json rank_id");
  EXPECT_EQ(std::filesystem::relative(found.traces[0].File("device_info"), job).string(),
            "node_a/host_a_3_20260102120000456_ascend_pt/PROF_000001_20260102120000000_ABCDEF/"
            "device_0/info.json.0")
      << "not the .done marker";
  EXPECT_EQ(found.traces[1].File("device_info"), "") << "its PROF_* folder has no device info";
  EXPECT_EQ(std::filesystem::relative(found.traces[4].File("device_info"), job).string(),
            "PROF_000002_20260102120000000_XYZ/device_1/info.json.1");
  std::map<std::string, std::string> unused;
  for (const auto& u : found.unused) {
    unused[std::filesystem::relative(u.path, job).string()] = u.reason;
  }
  EXPECT_NE(unused["node_a/host_a_3_20260101090000000_ascend_pt"].find("an older run of rank 0"),
            std::string::npos);
  EXPECT_NE(unused["cluster_analysis_output"].find("msprof-analyze's cluster output"),
            std::string::npos)
      << "listed once, not read as traces";
  // kernel_details.csv beside trace_view.json is read for its AI Core metrics.
  EXPECT_EQ(unused.count("node_b/host_b_7_20260102120000123_ascend_pt/ASCEND_PROFILER_OUTPUT/"
                         "kernel_details.csv"),
            0u);
  EXPECT_EQ(std::filesystem::relative(found.traces[1].File("ai_core_metrics"), job).string(),
            "node_b/host_b_7_20260102120000123_ascend_pt/ASCEND_PROFILER_OUTPUT/"
            "kernel_details.csv");
  EXPECT_EQ(found.traces[0].File("ai_core_metrics"), found.traces[0].path);  // the timeline itself
  EXPECT_EQ(std::filesystem::path(found.traces[1].File("communication")).filename(),
            "communication.json");  // read beside the timeline
  EXPECT_EQ(unused.count("node_b/host_b_7_20260102120000123_ascend_pt/ASCEND_PROFILER_OUTPUT/"
                         "communication.json"),
            0u);
  EXPECT_NE(unused["node_b/host_b_7_20260102120000123_ascend_pt/FRAMEWORK"].find("binary"),
            std::string::npos);
  EXPECT_EQ(found.traces[3].rank_source, "ascend_pytorch_profiler_3.db");
  EXPECT_EQ(found.traces[3].File("ai_core_metrics"), found.traces[3].path);  // TASK_PMU_INFO
  // ... as is op_summary beside msprof's timeline.
  EXPECT_EQ(unused.count("PROF_000002_20260102120000000_XYZ/mindstudio_profiler_output/"
                         "op_summary_20260102120000.csv"),
            0u);
  EXPECT_EQ(std::filesystem::relative(found.traces[4].File("ai_core_metrics"), job).string(),
            "PROF_000002_20260102120000000_XYZ/mindstudio_profiler_output/"
            "op_summary_20260102120000.csv");
  EXPECT_EQ(unused.count("node_a/host_a_3_20260102120000456_ascend_pt/ASCEND_PROFILER_OUTPUT"), 0u)
      << "analyse.done is there";

  // An msprof folder without its timeline: the device tasks of op_summary.
  const auto bare = dir.path() / "PROF_000003_20260102120000000_QRS" / "mindstudio_profiler_output";
  std::filesystem::create_directories(bare);
  WriteFile(bare / "op_summary_20260102120000.csv", "");
  WriteFile(bare / "op_statistic_20260102120000.csv", "");
  const TraceInputs summary_only = FindTraceInputs({bare.parent_path().string()});
  ASSERT_EQ(summary_only.traces.size(), 1u);
  EXPECT_EQ(std::filesystem::path(summary_only.traces[0].path).filename(),
            "op_summary_20260102120000.csv");
  // op_statistic is read beside it; another summary is listed as not read.
  EXPECT_EQ(std::filesystem::path(summary_only.traces[0].File("op_statistic")).filename(),
            "op_statistic_20260102120000.csv");
  EXPECT_TRUE(summary_only.unused.empty());
  WriteFile(bare / "msprof_tx_20260102120000.csv", "");
  const TraceInputs with_tx = FindTraceInputs({bare.parent_path().string()});
  ASSERT_EQ(with_tx.unused.size(), 1u);
  EXPECT_NE(with_tx.unused[0].reason.find("msprof summary"), std::string::npos);

  // The output folder alone: the rank from its parent's profiler_info.
  const TraceInputs alone = FindTraceInputs({(r1 / "ASCEND_PROFILER_OUTPUT").string()});
  ASSERT_EQ(alone.traces.size(), 1u);
  EXPECT_EQ(alone.traces[0].rank, 1);
  // Nothing opscope reads: an error naming what it looked for.
  const auto empty_rank = rank_dir("node_c", "host_c_1_20260102120000999_ascend_pt");
  WriteFile(empty_rank / "ASCEND_PROFILER_OUTPUT" / "operator_memory.csv", "");
  try {
    FindTraceInputs({empty_rank.string()});
    ADD_FAILURE() << "a tree without a timeline was accepted";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::kInvalidInput);
    EXPECT_NE(std::string(e.what()).find("trace_view.json"), std::string::npos) << e.what();
  }
}

TEST(Registry, ImportersHaveUniqueNamesAndPatterns) {
  std::set<std::string_view> names;
  for (const Importer& importer : Importers()) {
    EXPECT_TRUE(names.insert(importer.name).second) << importer.name;
    EXPECT_FALSE(importer.description.empty()) << importer.name;
    EXPECT_FALSE(importer.file_patterns.empty()) << importer.name;
    EXPECT_NE(importer.sniff, nullptr);
    EXPECT_NE(importer.import, nullptr);
  }
  EXPECT_GE(names.size(), 2u);
}

}  // namespace
}  // namespace opscope::analyze
