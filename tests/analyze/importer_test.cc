#include "analyze/importer.h"

#include <gtest/gtest.h>

#include <fstream>
#include <iterator>
#include <random>
#include <set>

#include "analyze/importers/ascend/kernel_details_importer.h"
#include "analyze/importers/chrome_json/chrome_json_importer.h"
#include "analyze/importers/csv_reader.h"
#include "analyze/importers/sqlite_db.h"
#include "analyze/importers/timestamps.h"
#include "analyze/json_event_reader.h"
#include "analyze/names.h"
#include "analyze/passes/op_stats.h"
#include "opscope/opscope.h"
#include "test_util.h"

namespace opscope::analyze {
namespace {

std::filesystem::path Write(const testing::TempDir& dir, const std::string& name,
                            const std::string& text) {
  const auto path = dir.path() / name;
  std::ofstream(path, std::ios::binary) << text;
  return path;
}

std::string ErrorOf(const std::filesystem::path& path) {
  try {
    ImportTrace(path);
  } catch (const Error& e) {
    return std::string(e.what());
  }
  return "no error";
}

// Issue 39: a CSV that is nearly a format opscope reads (a header with some
// of its columns) is told what it lacks, with the line; one that shares at most
// one column name with every format still gets the list of formats.
TEST(ImportTrace, ACsvLackingARequiredColumnIsToldWhich) {
  testing::TempDir dir;
  EXPECT_EQ(ErrorOf(Write(dir, "kernel_details.csv",
                          "Name,Type,Accelerator Core,Duration(us)\nk,N/A,AI_CORE,2.0\n")),
            "'" + (dir.path() / "kernel_details.csv").string() +
                "': line 1: the header lacks 'Start Time(us)', a column of torch_npu's "
                "kernel_details.csv (msprof's op_summary_*.csv) (its header: "
                "Name,Type,Accelerator Core,Duration(us))");
  // A byte-order mark, quoted names and CRLF line ends are read as CSV has them.
  const std::string task = ErrorOf(Write(
      dir, "task_time.csv", "\xEF\xBB\xBF\"kernel_name\",kernel_type,task_time(us)\r\nk,t,1\r\n"));
  EXPECT_NE(task.find("line 1: the header lacks 'task_start(us)', a column of msprof's "
                      "task_time_*.csv"),
            std::string::npos)
      << task;
  const std::string both = ErrorOf(Write(dir, "k2.csv", "Name,Type\nk,t\n"));
  EXPECT_NE(both.find("is not a trace format"), std::string::npos) << both;
  const std::string two = ErrorOf(Write(dir, "k3.csv", "Start Time(us),Type\n1,t\n"));
  EXPECT_NE(two.find("is not a trace format"), std::string::npos) << two;
  for (const char* other : {"a,b\n1,2\n", "Name,Size\nx,1\n"}) {
    const std::string error = ErrorOf(Write(dir, "other.csv", other));
    EXPECT_NE(error.find("is not a trace format opscope reads"), std::string::npos) << error;
  }
  try {
    ImportTrace(Write(dir, "k.csv", "Name,Start Time(us)\nk,1\n"));
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::kInvalidInput) << e.what();
  }
}

TEST(MicrosToNs, ExactDecimalsAndFallbacks) {
  int64_t ns = 0;
  ASSERT_TRUE(MicrosToNs("1704161511420306.491", ns));
  EXPECT_EQ(ns, 1704161511420306491);
  ASSERT_TRUE(MicrosToNs("12", ns));
  EXPECT_EQ(ns, 12000);
  ASSERT_TRUE(MicrosToNs("12.5", ns));
  EXPECT_EQ(ns, 12500);
  ASSERT_TRUE(MicrosToNs("12.77012757357446", ns));
  EXPECT_EQ(ns, 12770);
  ASSERT_TRUE(MicrosToNs("0.0005", ns));
  EXPECT_EQ(ns, 1);
  ASSERT_TRUE(MicrosToNs("1.5e3", ns));
  EXPECT_EQ(ns, 1500000);
  ASSERT_TRUE(MicrosToNs("-3.25", ns));
  EXPECT_EQ(ns, -3250);
  EXPECT_FALSE(MicrosToNs("", ns));
  EXPECT_FALSE(MicrosToNs("abc", ns));
  EXPECT_FALSE(MicrosToNs("99999999999999999999", ns));
  EXPECT_FALSE(MicrosToNs("4000000000000001", ns)) << "past 4e18 ns";
  EXPECT_FALSE(MicrosToNs("-4.1e15", ns));
  ASSERT_TRUE(MicrosToNs("4000000000000000", ns));
}

// A refused time that is a number all the same is "out of range", not "not a
// time" (issue 39: 17364088837041000.212 us was called "not a time").
TEST(MicrosToNs, OutOfRangeIsToldFromNotANumber) {
  int64_t ns = 0;
  for (const char* big :
       {"17364088837041000.212", "99999999999999999999", "-4.1e15", "1e400", "4000000000000001"}) {
    EXPECT_FALSE(MicrosToNs(big, ns)) << big;
    EXPECT_TRUE(MicrosOutOfRange(big)) << big;
    EXPECT_EQ(WhyNotMicros(big, "not a time").rfind("out of range", 0), 0u) << big;
  }
  for (const char* bad : {"", "abc", "12abc", "1.2.3", "--5", "0x10", "1e", "."}) {
    EXPECT_FALSE(MicrosToNs(bad, ns)) << bad;
    EXPECT_FALSE(MicrosOutOfRange(bad)) << bad;
    EXPECT_EQ(WhyNotMicros(bad, "not a time"), "not a time") << bad;
  }
}

TEST(JsonEventReader, FindsEventsAndKeepsMembersInAnyOrder) {
  testing::TempDir dir;
  const auto path =
      Write(dir, "t.json",
            "{\"deviceProperties\": [{\"name\": \"A\"}], \"traceEvents\": [\n"
            "{\"ph\":\"X\",\"name\":\"a}\\\"{\",\"ts\":1,\"dur\":2,\"pid\":1,\"tid\":1},"
            "{\"ph\":\"i\",\"name\":\"x\",\"ts\":3,\"pid\":1,\"tid\":1}],"
            " \"schemaVersion\": 1, \"baseTimeNanoseconds\": 1735632360000000000}");
  std::vector<std::string> events;
  const auto info =
      ReadJsonEvents(path, [&](std::string_view e, uint64_t) { events.emplace_back(e); });
  ASSERT_EQ(events.size(), 2u);
  EXPECT_EQ(events[0],
            "{\"ph\":\"X\",\"name\":\"a}\\\"{\",\"ts\":1,\"dur\":2,\"pid\":1,\"tid\":1}");
  EXPECT_FALSE(info.bare_array);
  EXPECT_EQ(info.members.at("deviceProperties"), "[{\"name\": \"A\"}]");
  EXPECT_EQ(info.members.at("schemaVersion"), "1");
  EXPECT_EQ(info.members.at("baseTimeNanoseconds"), "1735632360000000000");
}

TEST(JsonEventReader, TruncatedAndMalformedInputsNameTheByte) {
  testing::TempDir dir;
  const std::string good = "[{\"ph\":\"X\",\"name\":\"a\",\"ts\":1,\"dur\":2,\"pid\":1,\"tid\":1}]";
  EXPECT_EQ(ErrorOf(Write(dir, "ok.json", good)), "no error");
  const std::string truncated = ErrorOf(Write(dir, "cut.json", good.substr(0, 30)));
  EXPECT_NE(truncated.find("cut.json: byte 30: the JSON ends early"), std::string::npos)
      << truncated;
  const std::string trailing = ErrorOf(Write(dir, "trail.json", good + " x"));
  const std::string at = "byte " + std::to_string(good.size() + 1) + ": content after the end";
  EXPECT_NE(trailing.find(at), std::string::npos) << trailing;
  const std::string bad_event =
      ErrorOf(Write(dir, "ev.json", "[{\"ph\":\"X\",\"ts\":tru,\"dur\":1}]"));
  EXPECT_NE(bad_event.find("ev.json: byte 1: \"ts\" is not a time"), std::string::npos)
      << bad_event;
  const std::string broken = ErrorOf(Write(dir, "br.json", "[{\"ph\":\"X\" \"ts\":1,\"dur\":1}]"));
  EXPECT_NE(broken.find("br.json: byte 1: malformed"), std::string::npos) << broken;
  const std::string no_dur = ErrorOf(Write(dir, "nodur.json", "[{\"ph\":\"X\",\"ts\":1}]"));
  EXPECT_NE(no_dur.find("without \"ts\" or \"dur\""), std::string::npos) << no_dur;
  const std::string not_object = ErrorOf(Write(dir, "arr.json", "[{\"ph\":\"i\",\"ts\":1}, 5]"));
  EXPECT_NE(not_object.find("arr.json: byte 20: an event is not a JSON object"), std::string::npos)
      << not_object;
  const std::string unknown = ErrorOf(Write(dir, "x.csv", "a,b,c\n1,2,3\n"));
  EXPECT_NE(unknown.find("is not a trace format opscope reads"), std::string::npos) << unknown;
  // Inputs no reader recognises say what is wrong with them (issue 39), where
  // their bytes tell, instead of "not a trace format".
  const std::pair<std::string, const char*> kBroken[] = {
      {"", "is empty (0 bytes)"},
      {" \n\t ", "holds only white space (4 bytes)"},
      {"null", "is JSON but holds a single null value, not a trace"},
      {"42", ""},  // a number is not JSON-like text here: the list of formats
      {"{'traceEvents': []}", "is not JSON: byte 1 is a single quote"},
      {"[{\"a\": \"it's\"}, 'x']", "is not JSON: byte 16 is a single quote"},
      {"{\"a\": [1, 2,]}", "is not JSON: "},
      {std::string("ab\0cd", 5), "is not text: byte 2 is a NUL (0x00)"},
      {"ab\x07", "is not text: byte 2 is a control character (0x07)"},
  };
  for (const auto& [bytes, want] : kBroken) {
    const std::string error = ErrorOf(Write(dir, "broken.json", bytes));
    if (*want == '\0') {
      EXPECT_NE(error.find("is not a trace format opscope reads"), std::string::npos) << error;
    } else {
      EXPECT_NE(error.find(want), std::string::npos) << "'" << bytes << "': " << error;
    }
  }
  EXPECT_NE(ErrorOf(dir.path()).find("is a folder, not a trace file"), std::string::npos);
}

TEST(JsonEventReader, AnEventOverTheCapIsRefusedAtItsFirstByte) {
  // 300 events of ~60 bytes, then one whose name runs past a 4 KiB cap: read in
  // 512-byte chunks so the event spans many rounds and the carry must not grow past the cap.
  std::string text = "{\"traceEvents\":[";
  for (int i = 0; i < 300; ++i)
    text += "{\"ph\":\"i\",\"name\":\"e\",\"ts\":1,\"pid\":1,\"tid\":1},";
  const size_t huge_at = text.size();
  text += "{\"ph\":\"i\",\"name\":\"" + std::string(100000, 'n') + "\",\"ts\":1}]}";
  for (bool simd : {true, false}) {
    auto source = Source::FromBytes("huge.json", text);
    JsonEventStream stream(
        *source, JsonReadOptions{.chunk_bytes = 512, .simd = simd, .max_event_bytes = 4096});
    EventBatch batch;
    size_t events = 0, largest_buffer = 0;
    std::string error;
    try {
      while (stream.Next(batch)) {
        events += batch.spans.size();
        largest_buffer = std::max(largest_buffer, batch.buffer.size());
      }
    } catch (const Error& e) {
      error = e.what();
      EXPECT_EQ(e.code(), ErrorCode::kInvalidInput);
    }
    EXPECT_EQ(events, 300u) << "the events before the huge one are read";
    EXPECT_NE(error.find("huge.json: byte " + std::to_string(huge_at) +
                         ": an event is longer than 4096 bytes"),
              std::string::npos)
        << error;
    EXPECT_LT(largest_buffer, 4096u + 2 * 512 + 128) << "memory bounded by the cap, not the input";
  }
  // At the cap exactly, the event is read.
  const std::string event = "{\"ph\":\"i\",\"name\":\"" + std::string(4000, 'n') + "\",\"ts\":1}";
  auto source = Source::FromBytes("fits.json", "[" + event + "]");
  JsonEventStream stream(*source,
                         JsonReadOptions{.chunk_bytes = 512, .max_event_bytes = event.size()});
  EventBatch batch;
  size_t events = 0;
  while (stream.Next(batch)) events += batch.spans.size();
  EXPECT_EQ(events, 1u);
}

TEST(CsvReader, ARecordOverTheCapsIsRefusedWithItsLine) {
  auto many =
      Source::FromBytes("many.csv", "a,b\n" + std::string(CsvReader::kMaxRecordFields, ','));
  CsvReader fields_reader(*many);
  std::vector<std::string> fields;
  ASSERT_TRUE(fields_reader.Next(fields));
  try {
    fields_reader.Next(fields);
    FAIL() << "a record of over a million fields was read";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("many.csv: line 2: a record has more than 1048576 fields"),
              std::string::npos)
        << e.what();
  }
  auto long_record =
      Source::FromBytes("long.csv", "x\n\"" + std::string(CsvReader::kMaxRecordBytes + 1, 'q'));
  CsvReader bytes_reader(*long_record);
  ASSERT_TRUE(bytes_reader.Next(fields));
  try {
    bytes_reader.Next(fields);
    FAIL() << "a record over 64 MiB was read";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("long.csv: line 2: a record is longer than 64 MiB"),
              std::string::npos)
        << e.what();
  }
}

// Every record and line as Next reads them, or the error it throws.
std::string ReadAll(const std::string& text, bool views) {
  auto source = Source::FromBytes("t.csv", text);
  CsvReader reader(*source);
  std::string out;
  try {
    std::vector<std::string> fields;
    std::vector<std::string_view> views_of;
    while (views ? reader.NextViews(views_of) : reader.Next(fields)) {
      out += std::to_string(reader.record_line()) + ":";
      const size_t n = views ? views_of.size() : fields.size();
      for (size_t i = 0; i < n; ++i) {
        out += "[" + (views ? std::string(views_of[i]) : fields[i]) + "]";
      }
      out += "\n";
    }
  } catch (const Error& e) {
    out += std::string("error: ") + e.what();
  }
  return out;
}

// The same, read as CsvBatcher's runs of `batch_bytes`, each by a reader of
// its own bytes (as the parallel importers read them).
std::string ReadBatched(const std::string& text, size_t batch_bytes) {
  auto source = Source::FromBytes("t.csv", text);
  CsvBatcher batcher(*source, batch_bytes);
  CsvBatch batch;
  std::string out;
  try {
    std::vector<std::string_view> fields;
    while (batcher.Next(batch)) {
      EXPECT_GT(batch.size, 0u);
      CsvReader reader("t.csv", batch.bytes(), batch.first_line);
      while (reader.NextViews(fields)) {
        out += std::to_string(reader.record_line()) + ":";
        for (const std::string_view f : fields) out += "[" + std::string(f) + "]";
        out += "\n";
      }
    }
    EXPECT_EQ(batch.size, 0u) << "the end gives an empty batch";
  } catch (const Error& e) {
    out += std::string("error: ") + e.what();
  }
  return out;
}

// A record holding a NUL byte is refused with its line and field, by both
// ways of reading (issue 39: it was accepted).
TEST(CsvReader, ANulByteIsRefusedWithItsLineAndField) {
  const std::string text = std::string("a,b\n1,2\n3,x") + '\0' + "y\n";
  for (const bool views : {false, true}) {
    auto source = Source::FromBytes("nul.csv", text);
    CsvReader reader(*source);
    std::vector<std::string> fields;
    std::vector<std::string_view> field_views;
    const auto next = [&] { return views ? reader.NextViews(field_views) : reader.Next(fields); };
    ASSERT_TRUE(next());
    ASSERT_TRUE(next());
    try {
      next();
      ADD_FAILURE() << "a record with a NUL byte was read (views " << views << ")";
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), ErrorCode::kInvalidInput);
      EXPECT_NE(std::string(e.what()).find("nul.csv: line 3: field 2 holds a NUL byte"),
                std::string::npos)
          << e.what();
    }
  }
}

TEST(CsvReader, ViewsAreTheRecordsNextReads) {
  const std::vector<std::string> cases = {"",
                                          "\n",
                                          "a",
                                          "a,b\nc,d",
                                          "a,b\r\nc,d\r\n",
                                          "\"a,b\",c\n",
                                          "\"\"\"32,3\"\"\",x\n",
                                          "\"multi\nline\",y\nz,w\n",
                                          "ab\"c,d\"e,f\n",
                                          "\"open",
                                          "a,,b,\n,\n",
                                          "x\r,y\n",
                                          "\"a\"\"\"\n",
                                          "\"\"\n",
                                          "a,\"b\nc\"\n\nd\n"};
  for (const std::string& text : cases) {
    EXPECT_EQ(ReadAll(text, true), ReadAll(text, false)) << text;
    for (const size_t batch : {1, 2, 3, 5, 64}) {
      EXPECT_EQ(ReadBatched(text, batch), ReadAll(text, false)) << text << " in runs of " << batch;
    }
  }
  // Records across the reader's 1 MiB buffer and one that outgrows it.
  std::mt19937 rng(7);
  const char pieces[] = {'a', 'b', ',', ',', '\n', 'c', '\r', ' '};
  for (int round = 0; round < 3; ++round) {
    std::string text;
    bool long_field = false;
    while (text.size() < (size_t{3} << 20)) {
      const int kind = static_cast<int>(rng() % 50);
      if (kind == 0) {
        text += "\"" + std::string(rng() % 3000, 'q') + "\"\"x\",";
      } else if (kind == 2) {
        text += "\"x\ny,\"\"z\"\"\",";  // quoted: a line break, a comma, doubled quotes
      } else if (kind == 1 && text.size() > (size_t{2} << 20) && !long_field) {
        text += std::string(1 << 20, 'L') + ",";  // a record longer than the buffer
        long_field = true;
      } else {
        text += pieces[rng() % sizeof(pieces)];
      }
    }
    if (round == 2) text += "\"unclosed";
    const std::string views = ReadAll(text, true);
    EXPECT_GT(std::count(views.begin(), views.end(), '\n'), 1000) << "round " << round;
    EXPECT_EQ(views.find("error:") != std::string::npos, round == 2) << views.substr(0, 200);
    EXPECT_EQ(views, ReadAll(text, false)) << "round " << round;
    // Runs cut anywhere: inside quoted line breaks and doubled quotes, and
    // shorter than one record (the run then grows to hold it).
    for (const size_t batch : {size_t{97}, size_t{4096}, size_t{1} << 20}) {
      EXPECT_EQ(ReadBatched(text, batch), views) << "round " << round << ", runs of " << batch;
    }
  }
}

// A Kineto trace of the device's activity alone (no operator, no step) is
// still a PyTorch program's: its advice names PyTorch's levers. A plain
// Chrome trace of the same events is not.
TEST(ChromeJsonImporter, KinetoIsPyTorchsOwnWithoutOperators) {
  testing::TempDir dir;
  const std::string events =
      "\"traceEvents\":[{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"elementwise_kernel\","
      "\"pid\":0,\"tid\":7,\"ts\":10,\"dur\":30}]";
  const TraceModel kineto =
      ImportTrace(Write(dir, "k.json", "{\"schemaVersion\":1," + events + "}"));
  EXPECT_TRUE(kineto.written_by_pytorch);
  EXPECT_TRUE(RecordsPyTorch(kineto));
  const TraceModel plain = ImportTrace(Write(dir, "p.json", "{" + events + "}"));
  EXPECT_FALSE(plain.written_by_pytorch);
  EXPECT_FALSE(RecordsPyTorch(plain));
}

TEST(ChromeJsonImporter, ClassifiesAndComputesStatistics) {
  testing::TempDir dir;
  const auto path = Write(
      dir, "t.json",
      "{\"schemaVersion\":1,\"traceEvents\":["
      "{\"ph\":\"M\",\"name\":\"process_name\",\"pid\":0,\"tid\":0,\"args\":{\"name\":\"GPU 0\"}},"
      "{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"gemm\",\"pid\":0,\"tid\":7,\"ts\":10,\"dur\":30}"
      ","
      "{\"ph\":\"X\",\"cat\":\"kernel\",\"name\":\"gemm\",\"pid\":0,\"tid\":7,\"ts\":50,\"dur\":10}"
      ","
      "{\"ph\":\"X\",\"cat\":\"gpu_memcpy\",\"name\":\"Memcpy "
      "HtoD\",\"pid\":0,\"tid\":7,\"ts\":70,\"dur\":10},"
      "{\"ph\":\"X\",\"cat\":\"user_annotation\",\"name\":\"ProfilerStep#3\",\"pid\":1,\"tid\":1,"
      "\"ts\":0,\"dur\":100},"
      "{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"aten::mm\",\"pid\":1,\"tid\":1,\"ts\":5,\"dur\":"
      "8,"
      "\"args\":{\"flops\":1000,\"bytes\":64}},"
      "{\"ph\":\"s\",\"id\":1,\"pid\":1,\"tid\":1,\"ts\":5}]}");
  const TraceModel model = ImportTrace(path);
  EXPECT_EQ(model.format, "kineto");
  ASSERT_EQ(model.size(), 5u);
  EXPECT_EQ(model.flow_events, 1u);
  EXPECT_EQ(model.tracks[model.track[0]].process, "GPU 0");
  const auto stats = ComputeOpStats(model);
  ASSERT_EQ(stats.size(), 4u);
  EXPECT_EQ(stats[0].name, "ProfilerStep#3");
  EXPECT_EQ(stats[0].cls, EventClass::kStep);
  EXPECT_EQ(stats[1].name, "gemm");
  EXPECT_EQ(stats[1].count, 2);
  EXPECT_EQ(stats[1].total_ns, 40000);
  EXPECT_EQ(stats[1].max_ns, 30000);
  EXPECT_DOUBLE_EQ(stats[1].share_pct, 80.0);  // of 50 us of device time
  EXPECT_EQ(stats[2].name, "Memcpy HtoD");
  EXPECT_DOUBLE_EQ(stats[2].share_pct, 20.0);
  EXPECT_EQ(stats[3].flops, 1000);
  EXPECT_EQ(stats[3].bytes, 64);
}

// opscope reads its own traces, hostile names included.
TEST(ChromeJsonImporter, ReadsOpscopeTracesWithHostileNames) {
  testing::TempDir dir;
  ProfilerOptions options;
  options.output_dir = dir.path();
  {
    Profiler profiler(options);
    profiler.Start();
    {
      OPSCOPE_SCOPE_DYN("<img src=x onerror=alert(1)>\n\"q\"",
                        ScopeArgs{.flops = 7, .category = "cpu_op"});
    }
    profiler.Stop();
  }
  const auto files = testing::ListFiles(dir.path());
  ASSERT_EQ(files.size(), 1u);
  const TraceModel model = ImportTrace(files[0]);
  EXPECT_EQ(model.format, "opscope");
  ASSERT_EQ(model.size(), 1u);
  EXPECT_EQ(model.String(model.name[0]), "<img src=x onerror=alert(1)>\n\"q\"");
  EXPECT_EQ(model.cls[0], EventClass::kHostOp);
  EXPECT_EQ(model.flops[0], 7);
}

// A complete event without a name or category (the fuzzer's find: the part
// that read it had interned nothing, and merging it read past an empty map).
TEST(ChromeJsonImporter, EventsWithoutANameImportWithAnEmptyOne) {
  for (const char* text :
       {R"([{"ph": "X", "ts": 1, "dur": 2, "pid": 1, "tid": 1}])",
        R"({"traceEvents": [{"ph": "X", "ts": 1, "dur": 2, "pid": 1, "tid": 1, "args": {}},
                            {"ph": "X", "name": "aten::mm", "cat": "cpu_op", "ts": 4, "dur": 2,
                             "pid": 1, "tid": 1}]})"}) {
    const auto source = Source::FromBytes("nameless.json", text);
    const TraceModel model = ImportTrace(*source);
    ASSERT_GE(model.size(), 1u) << text;
    EXPECT_EQ(model.String(model.name[0]), "");
    EXPECT_EQ(model.String(model.category[0]), "");
    if (model.size() == 2) {
      EXPECT_EQ(model.String(model.name[1]), "aten::mm");
    }
  }
}

TEST(KernelDetailsImporter, ReadsMsprofOpSummaryAndTellsSetsAndCopiesFromKernels) {
  // A fixture built to msprof's op_summary base columns as docs/formats/ascend.md 5.1.1
  // lists them (no real op_summary sample is at hand): the same importer reads
  // them under their op_summary names. A MemSet (by type, or by the name Level0
  // writes with no type) is a memory set and MEMCPY_ASYNC a copy, not compute.
  testing::TempDir dir;
  const std::string header =
      "Device_id,Model ID,Task ID,Stream ID,Op Name,OP Type,OP State,Task Type,"
      "Task Start Time(us),Task Duration(us),Task Wait Time(us),Block Dim,Mix Block Dim,"
      "HF32 Eligible,Input Shapes,Input Data Types,Input Formats,Output Shapes,"
      "Output Data Types,Output Formats,Context ID\n";
  const std::string row_tail = ",0,20,0,NO,N/A,N/A,N/A,N/A,N/A,N/A,N/A\n";
  const auto path =
      Write(dir, "op_summary_20260102120000.csv",
            header +
                "0,4294967295,11,2,aclnnMm_MatMulCommon_MatMulV2,MatMulV2,"
                "dynamic,AI_CORE,1000.000\t,50.5" +
                row_tail +
                "0,4294967295,12,2,aclnnMm_MatMulCommon_MemSet,MemSet,dynamic,"
                "AI_VECTOR_CORE,1060.000\t,3" +
                row_tail +
                "0,4294967295,13,2,Conv2DBackpropFilter6_MemSet,N/A,N/A,N/A,"
                "1070.000\t,2" +
                row_tail + "0,4294967295,14,2,MEMCPY_ASYNC,N/A,N/A,N/A,1080.000\t,4" + row_tail);
  EXPECT_TRUE(MatchesTraceName("op_summary_20260102120000.csv"));
  const TraceModel model = ImportTrace(path);
  ASSERT_EQ(model.size(), 4u);
  EXPECT_EQ(model.String(model.name[0]), "aclnnMm_MatMulCommon_MatMulV2");
  EXPECT_EQ(model.String(model.category[0]), "MatMulV2");
  EXPECT_EQ(model.String(model.kind[0]), "AI_CORE");
  EXPECT_EQ(model.start_ns[0], 1000000);  // 1000 us
  EXPECT_EQ(model.duration_ns[0], 50500);
  EXPECT_EQ(model.cls[0], EventClass::kKernel);
  EXPECT_EQ(model.cls[1], EventClass::kMemset);
  EXPECT_EQ(model.cls[2], EventClass::kMemset);
  EXPECT_EQ(model.cls[3], EventClass::kMemcpy);
  EXPECT_NE(
      ErrorOf(Write(dir, "op_summary_1.csv", header + "0,1,1,1,A,T,s,AI_CORE,1\t,abc" + row_tail))
          .find("line 2: 'Task Duration(us)' is not a duration: 'abc'"),
      std::string::npos);
}

TEST(KernelDetailsImporter, ReadsQuotedCsvAndNamesBadLines) {
  testing::TempDir dir;
  const std::string header =
      "Step Id,Name,Type,Accelerator Core,Start Time(us),Duration(us),Input Shapes\n";
  const auto path = Write(dir, "kernel_details.csv",
                          header +
                              "1,MatMul,MatMulV2,AI_CORE,\"100.5\t\",20.25,\"\"\"8,16;16,4\"\"\"\n"
                              "1,\"Cast, int64\",Cast,AI_CPU,\"130\t\",5,N/A\n");
  const TraceModel model = ImportTrace(path);
  EXPECT_EQ(model.format, "ascend-kernel-details");
  ASSERT_EQ(model.size(), 2u);
  EXPECT_EQ(model.start_ns[0], 100500);
  EXPECT_EQ(model.duration_ns[0], 20250);
  EXPECT_EQ(model.String(model.name[1]), "Cast, int64");
  EXPECT_EQ(model.String(model.kind[1]), "AI_CPU");
  EXPECT_EQ(model.cls[0], EventClass::kKernel);
  EXPECT_NE(ErrorOf(Write(dir, "short.csv", header + "1,A,T,AI_CORE,1\n"))
                .find("short.csv: line 2: 5 fields"),
            std::string::npos);
  EXPECT_NE(ErrorOf(Write(dir, "num.csv", header + "1,A,T,AI_CORE,1,abc,x\n"))
                .find("num.csv: line 2: 'Duration(us)' is not a duration: 'abc'"),
            std::string::npos);
  EXPECT_NE(ErrorOf(Write(dir, "quote.csv", header + "1,\"A,T,AI_CORE,1,2,x\n")).find("not closed"),
            std::string::npos);
  // A repeated column (found by the fuzzer): records were checked against the
  // count of distinct names and then read past their end.
  EXPECT_NE(ErrorOf(Write(dir, "twice.csv",
                          "Name,Start Time(us),Duration(us),Name\n"
                          "A,1,2\n"))
                .find("twice.csv: line 1: the column 'Name' appears twice"),
            std::string::npos);
}

// Every column of two models, and the metadata the analyses use.
void ExpectSameModel(const TraceModel& a, const TraceModel& b, const std::string& what) {
  ASSERT_EQ(a.size(), b.size()) << what;
  EXPECT_EQ(a.start_ns, b.start_ns) << what;
  EXPECT_EQ(a.duration_ns, b.duration_ns) << what;
  EXPECT_EQ(a.cls, b.cls) << what;
  EXPECT_EQ(a.flops, b.flops) << what;
  EXPECT_EQ(a.bytes, b.bytes) << what;
  EXPECT_EQ(a.correlation, b.correlation) << what;
  EXPECT_EQ(a.external_id, b.external_id) << what;
  const auto same_strings = [&](const IdColumn& x, const IdColumn& y, const char* column) {
    for (size_t e = 0; e < a.size(); ++e) {
      if (a.String(x[e]) != b.String(y[e])) {
        ADD_FAILURE() << what << ": column " << column << ", event " << e << ": '" << a.String(x[e])
                      << "' vs '" << b.String(y[e]) << "'";
        return;
      }
    }
  };
  same_strings(a.name, b.name, "name");
  same_strings(a.category, b.category, "category");
  same_strings(a.kind, b.kind, "kind");
  same_strings(a.input_dims, b.input_dims, "input_dims");
  same_strings(a.input_type, b.input_type, "input_type");
  same_strings(a.concrete_inputs, b.concrete_inputs, "concrete_inputs");
  same_strings(a.shapes, b.shapes, "shapes");
  same_strings(a.dtype, b.dtype, "dtype");
  same_strings(a.layout, b.layout, "layout");
  same_strings(a.module, b.module, "module");
  ASSERT_EQ(a.tracks.size(), b.tracks.size()) << what;
  for (size_t e = 0; e < a.size(); ++e) {
    const Track &x = a.tracks[a.track[e]], &y = b.tracks[b.track[e]];
    ASSERT_EQ(std::tie(x.pid, x.tid, x.process, x.thread),
              std::tie(y.pid, y.tid, y.process, y.thread))
        << what << ": event " << e;
  }
  EXPECT_EQ(a.process_names, b.process_names) << what;
  EXPECT_EQ(a.metadata, b.metadata) << what;
  EXPECT_EQ(a.format, b.format) << what;
  EXPECT_EQ(a.device_name, b.device_name) << what;
  EXPECT_EQ(a.instant_events, b.instant_events) << what;
  EXPECT_EQ(a.counter_events, b.counter_events) << what;
  EXPECT_EQ(a.flow_events, b.flow_events) << what;
}

// Batches are parsed on several threads and merged in file order: the model
// must not depend on the thread count or on where the chunks end.
TEST(ChromeJsonImporter, SameModelForAnyThreadCountAndChunkSize) {
  const std::filesystem::path samples = OPSCOPE_TEST_DATA;
  for (const char* file : {"kineto/alexnet_cuda_rank0.json.gz", "kineto/mi250_rocm_train.json.gz",
                           "ascend/trace_view.json", "torch-cpu/small_cnn_train_torch1.13.json"}) {
    const auto path = samples / file;
    ASSERT_TRUE(std::filesystem::exists(path)) << "sample missing: " << path;
    TraceModel reference;
    ImportChromeJson(path, reference, ImportOptions{1, size_t{64} << 20});
    ASSERT_GT(reference.size(), 100u) << file;
    EXPECT_TRUE(reference.ColumnsAligned()) << file;
    for (const int threads : {2, 3, 8}) {
      for (const size_t chunk : {size_t{4096}, size_t{65536}, size_t{1} << 20}) {
        TraceModel model;
        ImportChromeJson(path, model, ImportOptions{threads, chunk});
        ExpectSameModel(reference, model,
                        std::string(file) + " threads " + std::to_string(threads) + " chunk " +
                            std::to_string(chunk));
      }
    }
  }
}

// Issue 39: a text over TraceModel::kMaxTextBytes (a 4 MiB operator name) is
// kept by its ends, cut at a character's start, with a marker giving the bytes
// left out, so tables and reports do not repeat it whole; each distinct one is
// counted once, also when parts of the model that each kept it are merged.
TEST(TraceModel, TextsOverTheCapAreKeptByTheirEnds) {
  std::string text = "head:";
  while (text.size() < (size_t{1} << 20)) text += "é…x";  // 2- and 3-byte characters
  text += ":tail";
  TraceModel model;
  const uint32_t id = model.Intern(text);
  const std::string_view kept = model.String(id);
  EXPECT_LE(kept.size(), TraceModel::kKeptHead + TraceModel::kKeptTail + 64);
  EXPECT_EQ(kept.substr(0, 5), "head:");
  EXPECT_EQ(kept.substr(kept.size() - 5), ":tail");
  const size_t open = kept.find("… [");
  ASSERT_NE(open, std::string_view::npos);
  const size_t close = kept.find(" bytes left out] …", open);
  ASSERT_NE(close, std::string_view::npos);
  const size_t left_out = std::stoul(std::string(kept.substr(open + 5, close - open - 5)));
  const size_t tail_start = close + std::string_view(" bytes left out] …").size();
  // The bytes kept and left out add up to the text, each part a run of it.
  EXPECT_EQ(open + left_out + (kept.size() - tail_start), text.size());
  EXPECT_EQ(kept.substr(0, open), std::string_view(text).substr(0, open));
  EXPECT_EQ(kept.substr(tail_start), std::string_view(text).substr(open + left_out));
  EXPECT_NE(static_cast<unsigned char>(text[open]) & 0xC0, 0x80) << "a character was split";
  EXPECT_EQ(model.Intern(text), id);
  EXPECT_EQ(model.Intern(std::string(kept)), id);
  EXPECT_EQ(model.long_texts, 1u);
  EXPECT_EQ(model.longest_text, text.size());
  EXPECT_EQ(model.Intern(std::string(TraceModel::kMaxTextBytes, 'y')),
            model.Intern(std::string(TraceModel::kMaxTextBytes, 'y')))
      << "a text at the cap is kept whole";
  EXPECT_EQ(model.String(model.string_count() - 1).size(), TraceModel::kMaxTextBytes);
  EXPECT_EQ(model.long_texts, 1u);
}

TEST(ChromeJsonImporter, AnOperatorNameOverTheCapIsCountedOnceOnAnyThread) {
  testing::TempDir dir;
  const std::string name(size_t{4} << 20, 'n');
  std::string json = "{\"traceEvents\": [";
  for (int i = 0; i < 6; ++i) {
    json += std::string(i ? "," : "") + "{\"ph\":\"X\",\"cat\":\"cpu_op\",\"name\":\"" + name +
            "\",\"pid\":1,\"tid\":1,\"ts\":" + std::to_string(i * 10) + ",\"dur\":5}";
  }
  json += "]}";
  const auto path = dir.path() / "long_name.json";
  std::ofstream(path) << json;
  for (const int threads : {1, 3}) {
    TraceModel model;
    ImportChromeJson(path, model, ImportOptions{threads, size_t{5} << 20});
    ASSERT_EQ(model.size(), 6u);
    EXPECT_EQ(model.long_texts, 1u) << threads;
    EXPECT_EQ(model.longest_text, name.size()) << threads;
    EXPECT_LT(model.String(model.name[0]).size(), size_t{200} << 10);
    EXPECT_EQ(model.name[0], model.name[5]);
  }
}

// Batches merged into a model that was not reserved for them (a pipe: no size
// known) grow its columns by doubling: a column reallocated at every batch is
// copied whole each time, quadratic in the input (30 s instead of 2 s for a
// 1 GB kernel_details.csv on standard input, before this was fixed).
TEST(PartIds, MergedBatchesGrowTheColumnsByDoubling) {
  TraceModel model, part;
  PartIds ids;
  std::set<size_t> names, tracks, durations;
  for (int batch = 0; batch < 200; ++batch) {
    for (int i = 0; i < 50; ++i) {
      const int64_t duration = batch == 100 && i == 0 ? int64_t{1} << 40 : i;  // widens
      part.Append(EventRow{.start_ns = batch * 50 + i,
                           .duration_ns = duration,
                           .name = part.Intern("op" + std::to_string(i % 7)),
                           .track = part.TrackFor("1", std::to_string(i % 3))});
    }
    ids.MoveEvents(part, model);
    ASSERT_EQ(part.size(), 0u);
    names.insert(model.name.capacity());
    tracks.insert(model.track.capacity());
    durations.insert(model.duration_ns.capacity());
  }
  ASSERT_EQ(model.size(), 10000u);
  EXPECT_TRUE(model.ColumnsAligned());
  EXPECT_EQ(model.String(model.name[9999]), "op0");
  EXPECT_EQ(model.duration_ns[5000], int64_t{1} << 40);
  EXPECT_EQ(model.duration_ns[5001], 1);
  // log2(10000) is about 13: a few more allowed for the widening's copy.
  EXPECT_LE(names.size(), 16u) << "capacities seen: a reallocation per batch?";
  EXPECT_LE(tracks.size(), 16u);
  EXPECT_LE(durations.size(), 16u);
}

// Every figure of two AI Core pipeline tables.
void ExpectSamePipeline(const PipeTable& a, const PipeTable& b, const std::string& what) {
  EXPECT_EQ(std::tie(a.source, a.l2_source, a.tasks, a.task_ns, a.with_pmu, a.has_pmu_columns),
            std::tie(b.source, b.l2_source, b.tasks, b.task_ns, b.with_pmu, b.has_pmu_columns))
      << what;
  ASSERT_EQ(a.ops.size(), b.ops.size()) << what;
  for (size_t i = 0; i < a.ops.size(); ++i) {
    const OpPipes &x = a.ops[i], &y = b.ops[i];
    EXPECT_EQ(
        std::tie(x.name, x.type, x.core, x.count, x.total_ns, x.measured, x.bound, x.evidence),
        std::tie(y.name, y.type, y.core, y.count, y.total_ns, y.measured, y.bound, y.evidence))
        << what << ": op " << i;
    for (int k = 0; k < kAiCorePipes; ++k) EXPECT_EQ(x.ratio[k], y.ratio[k]) << what;
    EXPECT_EQ(std::tie(x.cube_utilization_pct, x.mean_blocks, x.l2_hit_rate, x.l2_victim_rate),
              std::tie(y.cube_utilization_pct, y.mean_blocks, y.l2_hit_rate, y.l2_victim_rate))
        << what << ": op " << i;
  }
}

std::string ReadFile(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

// kernel_details.csv's runs of records are parsed on several threads and
// merged in file order: the tasks and the AI Core pipeline (its sums taken
// in the file's order, so equal to the last bit) do not depend on the thread
// count or on where the runs end.
TEST(KernelDetailsImporter, SameModelAndPipelineForAnyThreadCountAndChunkSize) {
  const std::filesystem::path samples = OPSCOPE_TEST_DATA;
  const std::filesystem::path level1 =
      samples / "ascend/level1_text/rank0_ascend_pt/ASCEND_PROFILER_OUTPUT";
  for (const auto& [file, l2] :
       {std::pair{samples / "ascend/kernel_details.csv", std::filesystem::path()},
        {level1 / "kernel_details.csv", level1 / "l2_cache.csv"},
        {level1 / "kernel_details.csv", std::filesystem::path()}}) {
    ASSERT_TRUE(std::filesystem::exists(file)) << "sample missing: " << file;
    const std::string text = ReadFile(file), l2_text = l2.empty() ? "" : ReadFile(l2);
    const auto import = [&](TraceModel& model, const ImportOptions& options) {
      auto source = Source::FromBytes("kernel_details.csv", text);
      auto l2_source = Source::FromBytes("l2_cache.csv", l2_text);
      KernelDetailsPipeline pipeline;
      if (!l2.empty()) pipeline.l2_cache = l2_source.get();
      ImportKernelDetails(*source, model, &pipeline, options);
      EXPECT_TRUE(pipeline.error.empty() && pipeline.l2_error.empty()) << pipeline.error;
      return pipeline.table;
    };
    TraceModel reference;
    const auto table = import(reference, ImportOptions{1, size_t{64} << 20});
    ASSERT_GT(reference.size(), 20u) << file;
    ASSERT_TRUE(table.has_value()) << file;
    EXPECT_EQ(table->l2_source.empty(), l2.empty());
    EXPECT_TRUE(reference.ColumnsAligned()) << file;
    for (const int threads : {2, 3, 8}) {
      for (const size_t chunk : {size_t{500}, size_t{4096}, size_t{1} << 20}) {
        const std::string what = file.string() + (l2.empty() ? "" : " with L2") + ", threads " +
                                 std::to_string(threads) + " chunk " + std::to_string(chunk);
        TraceModel model;
        const auto other = import(model, ImportOptions{threads, chunk});
        ExpectSameModel(reference, model, what);
        ASSERT_TRUE(other.has_value()) << what;
        ExpectSamePipeline(*table, *other, what);
      }
    }
  }
}

// Tasks of one name that differ in any text (shapes, types, formats, type,
// core) keep their own: the ids found for a name's last task are reused only
// when every text is the same.
TEST(KernelDetailsImporter, EachTaskKeepsItsOwnTexts) {
  const std::string csv =
      "Name,Type,Accelerator Core,Start Time(us),Duration(us),Input Shapes,Input Data Types,"
      "Input Formats,Output Shapes,Output Data Types,Output Formats\n"
      "k,MatMulV2,AI_CORE,1,1,\"2,3;3,4\",FLOAT16;FLOAT16,ND;ND,\"2,4\",FLOAT16,ND\n"
      "k,MatMulV2,AI_CORE,2,1,\"2,3;3,4\",FLOAT16;FLOAT16,ND;ND,\"2,4\",FLOAT16,ND\n"
      "k,MatMulV2,AI_CORE,3,1,\"2,3;3,5\",FLOAT16;FLOAT16,ND;ND,\"2,5\",FLOAT16,ND\n"
      "k,MatMulV2,AI_CORE,4,1,\"2,3;3,5\",FLOAT;FLOAT,ND;ND,\"2,5\",FLOAT,ND\n"
      "k,MatMulV2,AI_CORE,5,1,\"2,3;3,5\",FLOAT;FLOAT,NCHW;ND,\"2,5\",FLOAT,ND\n"
      "k,MemSet,AI_CORE,6,1,N/A,N/A,N/A,N/A,N/A,N/A\n"
      "k,MemSet,AI_CPU,7,1,N/A,N/A,N/A,N/A,N/A,N/A\n"
      // The same bytes split differently between columns: not the same texts.
      "k,MemSet,AI_CPU,8,1,N/A,N/A,N/A,N/A,N/A,N/AN/A\n"
      "k,MatMulV2,AI_CORE,9,1,\"2,3;3,4\",FLOAT16;FLOAT16,ND;ND,\"2,4\",FLOAT16,ND\n";
  auto source = Source::FromBytes("kernel_details.csv", csv);
  TraceModel model;
  ImportKernelDetails(*source, model);
  ASSERT_EQ(model.size(), 9u);
  const auto row = [&](size_t e) {
    return std::string(model.String(model.category[e])) + "|" +
           std::string(model.String(model.kind[e])) + "|" +
           std::string(model.String(model.shapes[e])) + "|" +
           std::string(model.String(model.dtype[e])) + "|" +
           std::string(model.String(model.layout[e]));
  };
  EXPECT_EQ(row(0), "MatMulV2|AI_CORE|2,3;3,4->2,4|FLOAT16;FLOAT16->FLOAT16|ND;ND->ND");
  EXPECT_EQ(row(1), row(0));
  EXPECT_EQ(row(2), "MatMulV2|AI_CORE|2,3;3,5->2,5|FLOAT16;FLOAT16->FLOAT16|ND;ND->ND");
  EXPECT_EQ(row(3), "MatMulV2|AI_CORE|2,3;3,5->2,5|FLOAT;FLOAT->FLOAT|ND;ND->ND");
  EXPECT_EQ(row(4), "MatMulV2|AI_CORE|2,3;3,5->2,5|FLOAT;FLOAT->FLOAT|NCHW;ND->ND");
  EXPECT_EQ(row(5), "MemSet|AI_CORE|||");
  EXPECT_EQ(row(6), "MemSet|AI_CPU|||");
  EXPECT_EQ(row(7), "MemSet|AI_CPU|||?->N/AN/A");
  EXPECT_EQ(row(8), row(0));
  EXPECT_EQ(model.cls[0], model.cls[8]);
  EXPECT_NE(model.cls[0], model.cls[5]) << "a MemSet is not compute";
}

// The first bad value in the file is the one reported, whichever thread reads
// it; a bad PMU figure drops the pipeline but keeps every task.
TEST(KernelDetailsImporter, ReportsTheFirstErrorInFileOrderOnAnyThread) {
  const std::string header =
      "Name,Type,Accelerator Core,Start Time(us),Duration(us),aic_total_cycles,aic_mte2_ratio\n";
  const auto row = [](int i, const std::string& ratio) {
    return "\"op,\"\"" + std::to_string(i % 7) + "\",MatMul,AI_CORE,\"" + std::to_string(i) +
           ".5\t\",2.25,100," + ratio + "\n";
  };
  std::string text = header;
  for (int i = 0; i < 3000; ++i) text += row(i, "0.5");
  text += row(3000, "7.5");  // line 3002: not a share of cycles
  for (int i = 3001; i < 6000; ++i) text += row(i, "0.25");
  const std::string bad_ratio = text;
  text += "late,MatMul,AI_CORE,x,1,100,0.5\n";  // line 6002: not a time
  for (int i = 6001; i < 9000; ++i) text += row(i, "0.5");
  text += "later,MatMul,AI_CORE,1,-3,100,0.5\n";
  for (const int threads : {1, 2, 4}) {
    for (const size_t chunk : {size_t{1000}, size_t{100000}}) {
      const std::string what =
          "threads " + std::to_string(threads) + " chunk " + std::to_string(chunk);
      std::string message = "no error";
      try {
        TraceModel model;
        auto source = Source::FromBytes("kd.csv", text);
        ImportKernelDetails(*source, model, nullptr, ImportOptions{threads, chunk});
      } catch (const Error& e) {
        message = e.what();
      }
      EXPECT_NE(message.find("kd.csv: line 6002: 'Start Time(us)' is not a time: 'x'"),
                std::string::npos)
          << what << ": " << message;
      TraceModel model;
      KernelDetailsPipeline pipeline;
      auto source = Source::FromBytes("kd.csv", bad_ratio);
      ImportKernelDetails(*source, model, &pipeline, ImportOptions{threads, chunk});
      EXPECT_EQ(model.size(), 6000u) << what;
      EXPECT_FALSE(pipeline.table.has_value()) << what;
      EXPECT_NE(pipeline.error.find("kd.csv: line 3002: 'aic_mte2_ratio' is not a share of cycles"),
                std::string::npos)
          << what << ": " << pipeline.error;
      EXPECT_EQ(model.String(model.name[5]), "op,\"5") << what;
      EXPECT_EQ(model.start_ns[5], 5500) << what;
    }
  }
}

// Events that are JSON but not usable events (a "ts" that is no time, a
// negative "dur") are left out and counted, the rest analysed (issue 37); the
// count and the first byte of each kind are the same on any thread count. A
// structural error (an array element that is not an object) still refuses
// the file.
TEST(ChromeJsonImporter, UnusableEventsAreCountedAlikeOnAnyThread) {
  testing::TempDir dir;
  std::string text = "[";
  const std::string event =
      "{\"ph\":\"X\",\"name\":\"op\",\"ts\":1,\"dur\":2,\"pid\":1,\"tid\":1},";
  for (int i = 0; i < 3000; ++i) text += event;
  const size_t first_bad = text.size();
  text += "{\"ph\":\"X\",\"ts\":tru,\"dur\":1},";
  for (int i = 0; i < 3000; ++i) text += event;
  const size_t negative = text.size();
  text += "{\"ph\":\"X\",\"ts\":1,\"dur\":-5},";  // a later one of another kind
  for (int i = 0; i < 3000; ++i) text += event;
  text += "{\"ph\":\"X\",\"ts\":2,\"dur\":-5}";
  const auto path = Write(dir, "bad.json", text + "]");
  for (const int threads : {1, 2, 4}) {
    for (const size_t chunk : {size_t{1000}, size_t{100000}}) {
      TraceModel model;
      ImportChromeJson(path, model, ImportOptions{threads, chunk});
      EXPECT_EQ(model.size(), 9000u);
      ASSERT_EQ(model.import_notes.size(), 1u);
      EXPECT_EQ(model.import_notes[0],
                "3 events were left out, each JSON but not a usable event: \"ts\" is not a time "
                "in microseconds (1, the first at byte " +
                    std::to_string(first_bad) + "); a negative \"dur\" (2, the first at byte " +
                    std::to_string(negative) + "). The other 9000 events are analysed")
          << "threads " << threads << " chunk " << chunk;
    }
  }
  // Nothing usable left: the first event left out is the error.
  const auto none = Write(dir, "none.json", "[{\"ph\":\"X\",\"ts\":1,\"dur\":-5}]");
  std::string message = "no error";
  try {
    TraceModel model;
    ImportChromeJson(none, model);
  } catch (const Error& e) {
    message = e.what();
  }
  EXPECT_NE(message.find("none.json: byte 1: a negative \"dur\""), std::string::npos) << message;
  // Only the structural error: found by the scanner, after events parsed on other threads.
  std::string late = "[";
  for (int i = 0; i < 6000; ++i) late += event;
  late += "5]";
  const auto late_path = Write(dir, "late.json", late);
  for (const int threads : {1, 2, 4}) {
    std::string message = "no error";
    try {
      TraceModel model;
      ImportChromeJson(late_path, model, ImportOptions{threads, 1000});
    } catch (const Error& e) {
      message = e.what();
    }
    EXPECT_NE(
        message.find("byte " + std::to_string(late.size() - 2) + ": an event is not a JSON object"),
        std::string::npos)
        << "threads " << threads << ": " << message;
  }
}

}  // namespace
}  // namespace opscope::analyze

namespace opscope::analyze {
namespace {

// A query that would run without end (a recursive join, a view built to) is
// interrupted at the database's work bound with an error naming the file,
// instead of hanging the analysis (issue 39: SQLite views that never end).
TEST(SqliteDb, AnEndlessQueryStopsAtTheWorkBound) {
  testing::TempDir dir;
  const std::string path = (dir.path() / "endless.sqlite").string();
  sqlite3* raw = nullptr;
  ASSERT_EQ(sqlite3_open(path.c_str(), &raw), SQLITE_OK);
  ASSERT_EQ(sqlite3_exec(raw, "CREATE TABLE t (x INT); INSERT INTO t VALUES (1);", nullptr, nullptr,
                         nullptr),
            SQLITE_OK);
  sqlite3_close(raw);
  const SqliteDb db(path);
  EXPECT_TRUE(db.HasTable("t"));
  try {
    db.Query(
        "WITH RECURSIVE c(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM c) "
        "SELECT count(*) FROM c",
        [](sqlite3_stmt*) {});
    ADD_FAILURE() << "not interrupted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("endless.sqlite: SQLite: a query ran past its work bound"),
              std::string::npos)
        << e.what();
  }
  // The connection stays usable for bounded queries.
  int rows = 0;
  db.Query("SELECT x FROM t", [&](sqlite3_stmt*) { ++rows; });
  EXPECT_EQ(rows, 1);
}

}  // namespace
}  // namespace opscope::analyze
