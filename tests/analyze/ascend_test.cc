// Ascend side files read beside a rank's timeline: the AI Core pipeline.
#include <gtest/gtest.h>

#include <array>
#include <functional>
#include <limits>
#include <map>
#include <string>
#include <tuple>
#include <vector>

#include "analyze/advisor.h"
#include "analyze/communication_cluster.h"
#include "analyze/importers/ascend/ai_core.h"
#include "analyze/importers/ascend/ai_core_families.h"
#include "analyze/importers/ascend/ascend_cost.h"
#include "analyze/importers/ascend/communication.h"
#include "analyze/importers/ascend/device_info.h"
#include "analyze/importers/ascend/fusible_sequences.h"
#include "analyze/importers/ascend/kernel_details_importer.h"
#include "analyze/importers/ascend/memory.h"
#include "analyze/importers/ascend/op_type.h"
#include "analyze/importers/ascend/parallel_groups.h"
#include "analyze/importers/ascend/summaries.h"
#include "analyze/importers/ascend/task_time_importer.h"
#include "analyze/model_builder.h"
#include "analyze/pipeline.h"
#include "analyze/source.h"
#include "opscope/opscope.h"

namespace opscope::analyze {
namespace {

constexpr char kHeader[] =
    "Stream ID,Task ID,Name,Type,Accelerator Core,Start Time(us),Duration(us),Block Dim,"
    "aicore_time(us),aic_total_cycles,aic_mac_ratio,aic_scalar_ratio,aic_mte1_ratio,"
    "aic_mte2_ratio,aic_fixpipe_ratio,aiv_time(us),aiv_total_cycles,aiv_vec_ratio,"
    "aiv_scalar_ratio,aiv_mte2_ratio,aiv_mte3_ratio,cube_utilization(%)\n";

PipeTable Read(const std::string& csv, const std::string& l2 = "") {
  const auto source = Source::FromBytes("kernel_details.csv", csv);
  if (l2.empty()) return ReadAiCorePipeline(*source, nullptr);
  const auto l2_source = Source::FromBytes("l2_cache.csv", l2);
  return ReadAiCorePipeline(*source, l2_source.get());
}

TEST(AiCorePipeline, RatiosWeightedByTimeAndTheCoresThatRan) {
  // A matmul on the cube core twice (30 us at MTE2 0.9, 10 us at 0.5: weighted
  // 0.8); a vector op whose aic_* columns are 0.0 with 0 cycles (not measured).
  const PipeTable t = Read(
      std::string(kHeader) +
      "2,1,mm,MatMulV2,AI_CORE,100.000\t,30,20,30,1000,0.2,0.1,0.1,0.9,0.05,0,0,0,0,0,0,40\n"
      "2,2,mm,MatMulV2,AI_CORE,200.000\t,10,20,10,1000,0.6,0.1,0.1,0.5,0.05,0,0,0,0,0,0,80\n"
      "2,3,add,Add,AI_VECTOR_CORE,300.000\t,25,48,0.0,0,0.0,0.0,0.0,0.0,0.0,25,500,0.3,0.2,0.4,"
      "0.1,0\n"
      "N/A,N/A,hcom_allReduce_1,N/A,COMMUNICATION,400.000\t,500,0,N/A,N/A,N/A,N/A,N/A,N/A,N/A,"
      "N/A,N/A,N/A,N/A,N/A,N/A,N/A\n");
  EXPECT_TRUE(t.has_pmu_columns);
  EXPECT_EQ(t.tasks, 4);
  EXPECT_EQ(t.with_pmu, 3);
  EXPECT_EQ(t.task_ns, 565000);
  ASSERT_EQ(t.ops.size(), 2u);  // the collective has no ratio
  const OpPipes& mm = t.ops[0];
  EXPECT_EQ(mm.name, "mm");
  EXPECT_EQ(mm.count, 2);
  EXPECT_EQ(mm.total_ns, 40000);
  EXPECT_DOUBLE_EQ(mm.ratio[static_cast<int>(AiCorePipe::kMte2)], (0.9 * 30 + 0.5 * 10) / 40);
  EXPECT_DOUBLE_EQ(mm.ratio[static_cast<int>(AiCorePipe::kCube)], (0.2 * 30 + 0.6 * 10) / 40);
  EXPECT_EQ(mm.ratio[static_cast<int>(AiCorePipe::kVector)], -1);  // no vector core ran
  EXPECT_DOUBLE_EQ(mm.cube_utilization_pct, (40.0 * 30 + 80.0 * 10) / 40);
  EXPECT_EQ(mm.bound, "memory-bound (MTE2)");  // 0.8 >= 0.8
  EXPECT_NE(mm.evidence.find("MTE2 0.80"), std::string::npos) << mm.evidence;
  const OpPipes& add = t.ops[1];
  EXPECT_EQ(add.ratio[static_cast<int>(AiCorePipe::kCube)], -1);  // 0 aic cycles: not measured
  EXPECT_DOUBLE_EQ(add.ratio[static_cast<int>(AiCorePipe::kMte2)], 0.4);
  EXPECT_DOUBLE_EQ(add.ratio[static_cast<int>(AiCorePipe::kScalar)], 0.2);
  EXPECT_EQ(add.bound, "bound by no pipe");  // 25 us >= 20 us, every pipe < 0.8
}

TEST(AiCorePipeline, ShortOperatorsBelowTheBoundAreNotJudged) {
  const PipeTable t =
      Read(std::string(kHeader) +
           "2,3,mul,Mul,AI_VECTOR_CORE,300.000\t,5,48,0,0,0,0,0,0,0,5,500,0.3,0.2,0.7,0.1,0\n"
           "2,4,cast,Cast,AI_VECTOR_CORE,310.000\t,5,48,0,0,0,0,0,0,0,5,500,0.85,0.2,0.1,0.1,0\n");
  ASSERT_EQ(t.ops.size(), 2u);
  for (const auto& op : t.ops) {
    if (op.name == "mul") {
      EXPECT_EQ(op.bound, "");
      EXPECT_NE(op.evidence.find("too short to judge"), std::string::npos);
    } else {
      EXPECT_EQ(op.bound, "vector-bound");  // a pipe at 0.8+ bounds a short op too
    }
  }
  EXPECT_TRUE(AdvisePipeline(t).size() == 1u);  // vector-bound: 50% of measured time
}

TEST(AiCorePipeline, OlderUnprefixedColumnsAndOpSummaryNames) {
  // msprof's op_summary names and an older chip's single set of columns.
  const PipeTable t = Read(
      "Op Name,OP Type,Task Type,Task Start Time(us),Task Duration(us),Block Dim,total_cycles,"
      "mac_ratio,vec_ratio,scalar_ratio,mte1_ratio,mte2_ratio,mte3_ratio\n"
      "conv,Conv2D,AI_CORE,1.000\t,50,32,9000,0.91,0.1,0.2,0.3,0.4,0.1\n");
  ASSERT_EQ(t.ops.size(), 1u);
  EXPECT_EQ(t.ops[0].bound, "cube-bound");
  EXPECT_DOUBLE_EQ(t.ops[0].mean_blocks, 32);
}

TEST(AiCorePipeline, NoPmuColumnsGiveNoTable) {
  const PipeTable t =
      Read("Name,Type,Accelerator Core,Start Time(us),Duration(us)\nk,N/A,N/A,1.0,2.0\n");
  EXPECT_FALSE(t.has_pmu_columns);
  EXPECT_TRUE(t.ops.empty());
  EXPECT_TRUE(AdvisePipeline(t).empty());
}

TEST(AiCorePipeline, L2RatesJoinByStreamTaskAndNameInOrder) {
  // Task ids wrap: the same (stream, task, name) twice takes its rows in order.
  const PipeTable t = Read(
      std::string(kHeader) +
          "2,7,mm,MatMulV2,AI_CORE,1.000\t,10,20,10,1000,0.2,0.1,0.1,0.5,0.05,0,0,0,0,0,0,40\n"
          "2,7,mm,MatMulV2,AI_CORE,9.000\t,30,20,30,1000,0.2,0.1,0.1,0.5,0.05,0,0,0,0,0,0,40\n",
      "Stream Id,Task Id,Hit Rate,Victim Rate,Op Name\n2,7,0.5,0.1,mm\n2,7,0.9,N/A,mm\n"
      "2,8,0.1,0.1,other\n");
  ASSERT_EQ(t.ops.size(), 1u);
  EXPECT_DOUBLE_EQ(t.ops[0].l2_hit_rate, (0.5 * 10 + 0.9 * 30) / 40);
  EXPECT_DOUBLE_EQ(t.ops[0].l2_victim_rate, 0.1);
}

TEST(AiCorePipeline, BadValuesNameTheFileLineAndColumn) {
  const auto expect_error = [](const std::string& csv, const std::string& l2,
                               const std::string& part) {
    try {
      Read(csv, l2);
      ADD_FAILURE() << "no error for " << part;
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), ErrorCode::kInvalidInput);
      EXPECT_NE(std::string(e.what()).find(part), std::string::npos) << e.what();
    }
  };
  expect_error(
      std::string(kHeader) +
          "2,1,mm,MatMulV2,AI_CORE,1.0,30,20,30,1000,0.2,0.1,0.1,abc,0.05,0,0,0,0,0,0,40\n",
      "", "kernel_details.csv: line 2: 'aic_mte2_ratio' is not a share of cycles");
  expect_error(
      std::string(kHeader) +
          "2,1,mm,MatMulV2,AI_CORE,1.0,30,20,30,1000,-0.2,0.1,0.1,0.1,0.05,0,0,0,0,0,0,4\n",
      "", "line 2: 'aic_mac_ratio'");
  expect_error(std::string(kHeader) +
                   "2,1,mm,MatMulV2,AI_CORE,1.0,x,20,30,1000,0.2,0.1,0.1,0.1,0.05,0,0,0,0,0,0,4\n",
               "", "line 2: 'Duration(us)' is not a duration");
  expect_error("Name,Type\nk,N/A\n", "", "no 'Name' and 'Duration(us)' columns");
  expect_error(std::string(kHeader), "Stream Id,Task Id,Hit Rate,Victim Rate,Op Name\n2,7,-1,0,m\n",
               "l2_cache.csv: line 2: 'Hit Rate' is not a rate");
  expect_error(std::string(kHeader), "Stream Id,Hit Rate\n", "l2_cache.csv: line 1: no 'Task Id'");
}

// msprof-analyze's fusible-operator rule (fusible_sequences.h): "A -> B" six
// times, 10 us each with 100 us between them, is a host-bound run (the
// device idle 100 of each 120 us); where each B waits for another task that
// ends just before it, or runs in a graph model, no host wait is left.
TEST(FusibleSequences, HostBoundRunsAndWhatIsNoHostWait) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const auto find = [&](bool dependency, bool graph) {
    FusibleSequenceFinder finder;
    for (int i = 0; i < 6; ++i) {
      const int64_t at = i * 1'000'000;  // a millisecond per pair
      finder.Add("A", "8->8", at, 10'000, nan, nan, false, UINT32_MAX, UINT32_MAX, graph);
      if (dependency) {  // a collective that ends 10 us before B starts
        finder.Add("hcom_allReduce_", "", at + 20'000, 90'000, nan, nan, true);
      }
      finder.Add("B", "", at + 110'000, 10'000, nan, nan, false, UINT32_MAX, UINT32_MAX, graph);
    }
    PipeTable table;
    finder.Finish(table);
    return table;
  };
  const PipeTable host = find(false, false);
  ASSERT_EQ(host.fusible.size(), 1u);
  const FusibleSequence& run = host.fusible[0];
  EXPECT_EQ(run.operators, "A [8->8] -> B");
  EXPECT_EQ(run.length, 2);
  EXPECT_EQ(run.count, 6);
  EXPECT_EQ(run.first_row, 0);
  EXPECT_EQ(run.wall_ns, 6 * 120'000);
  EXPECT_EQ(run.device_ns, 6 * 20'000);
  EXPECT_EQ(run.idle_ns, 6 * 100'000);
  EXPECT_TRUE(run.host_bound);
  EXPECT_FALSE(run.mte_bound);
  EXPECT_EQ(run.mte_share, -1);
  EXPECT_EQ(host.sequence_span_ns, 5'000'000 + 120'000);
  EXPECT_TRUE(find(true, false).fusible.empty());  // B waited for the collective
  EXPECT_TRUE(find(false, true).fusible.empty());  // the graph launched B
}

// The runs come out the same however many threads count them: 80,000 tasks
// of phrases of a few operators in a fixed pseudo-random order, with gaps,
// PMU times and communication between some.
TEST(FusibleSequences, ThreadsCountTheSameRuns) {
  const auto search = [](size_t threads) {
    FusibleSequenceFinder finder;
    finder.SetMteColumns(true);
    const std::vector<std::vector<const char*>> phrases = {
        {"Cast", "Mul", "Add"}, {"MatMul", "Add"}, {"LpNorm", "Square", "Add", "Sqrt"}, {"Relu"}};
    uint32_t state = 12345;
    const auto next = [&] { return state = state * 1664525u + 1013904223u; };
    int64_t at = 0;
    for (int added = 0; added < 80'000;) {
      for (const char* name : phrases[next() % phrases.size()]) {
        const int64_t dur = 5'000 + next() % 20'000;
        const double core = static_cast<double>(dur) / 1000, mte = core * (next() % 100) / 100;
        finder.Add(name, "", at, dur, mte, core, false);
        at += dur + 1'000 + next() % 150'000;
        ++added;
      }
      if (next() % 50 == 0) finder.Add("hcom_allGather_", "", at, 30'000, 0, 0, true), ++added;
    }
    PipeTable table;
    finder.Finish(table, threads);
    return table;
  };
  const PipeTable one = search(1), four = search(4);
  ASSERT_FALSE(one.fusible.empty());
  ASSERT_EQ(one.fusible.size(), four.fusible.size());
  for (size_t i = 0; i < one.fusible.size(); ++i) {
    const FusibleSequence &a = one.fusible[i], &b = four.fusible[i];
    EXPECT_EQ(a.operators, b.operators) << i;
    EXPECT_EQ(std::tie(a.count, a.first_row, a.wall_ns, a.device_ns, a.idle_ns),
              std::tie(b.count, b.first_row, b.wall_ns, b.device_ns, b.idle_ns))
        << i;
    EXPECT_EQ(a.mte_share, b.mte_share) << i;
    EXPECT_EQ(std::tie(a.host_bound, a.mte_bound), std::tie(b.host_bound, b.mte_bound)) << i;
  }
}

TEST(AscendCommunication, ReadsOperationsAndLeavesOutTotalsAndSdma) {
  const auto source = Source::FromBytes("communication.json",
                                        R"json({"step3": {"p2p": {}, "collective": {
        "hcom_allReduce__1_0_1@42": {
          "Communication Time Info": {"Start Timestamp(us)": 1000.5, "Elapse Time(ms)": 2,
            "Transit Time(ms)": 0.5, "Wait Time(ms)": 1.25, "Synchronization Time(ms)": 0.25,
            "Idle Time(ms)": 0.25},
          "Communication Bandwidth Info": {
  "HCCS" : {"Transit Size(MB)" : 10, "Transit Time(ms)" : 0.5, "Bandwidth(GB/s)" : 20},
           "SDMA" : {"Transit Size(MB)" : 10, "Transit Time(ms)" : 0.5, "Bandwidth(GB/s)" : 20},
                    "RDMA" : {
    "Transit Size(MB)" : 0, "Transit Time(ms)" : 0, "Bandwidth(GB/s)" : 0
  }
}
}
, "Total Op Info" : {
  "Communication Time Info" : { "Elapse Time(ms)" : 2 }
}
}
}
})json");
  const std::vector<ReportedCollective> ops = ReadCommunication(*source);
  ASSERT_EQ(ops.size(), 1u);
  EXPECT_EQ(ops[0].step, "step3");
  EXPECT_EQ(ops[0].kind, "collective");
  EXPECT_EQ(ops[0].op, "hcom_allReduce__1_0_1");
  EXPECT_EQ(ops[0].group, "42");
  EXPECT_EQ(ops[0].start_ns, 1000500);
  EXPECT_EQ(ops[0].elapse_ns, 2000000);
  EXPECT_EQ(ops[0].wait_ns, 1250000);
  ASSERT_EQ(ops[0].transfers.size(), 1u);  // SDMA and an empty RDMA left out
  EXPECT_EQ(ops[0].transfers[0].transport, "HCCS");
  EXPECT_EQ(ops[0].transfers[0].bytes, 10000000);  // MB = 10^6 bytes
}

TEST(AscendCommunication, TheLateRankAndTheSlowLink) {
  const auto op = [](const char* name, double wait_ms) {
    ReportedCollective c;
    c.step = "step1", c.kind = "collective", c.op = name, c.group = "g";
    c.elapse_ns = 5000000, c.wait_ns = static_cast<int64_t>(wait_ms * 1e6);
    return c;
  };
  const std::vector<ReportedCollective> r0 = {op("a", 3), op("b", 2)},
                                        r1 = {op("a", 0.1), op("b", 0.2)},
                                        r2 = {op("a", 1), op("b", 4)};
  const auto link = [](int src, int dst, double ms) {
    ReportedLink l;
    l.step = "step1", l.kind = "collective", l.op_type = "allreduce", l.group = "g";
    l.src = src, l.dst = dst, l.transport = "HCCS";
    l.bytes = 100000000, l.time_ns = static_cast<int64_t>(ms * 1e6);
    return l;
  };
  const std::vector<ReportedLink> l0 = {link(0, 1, 5), link(0, 2, 5), link(0, 0, 1)},
                                  l1 = {link(1, 2, 10), link(0, 1, 50)};  // 0-1 seen in rank 0's
  const CommunicationCluster c =
      CompareCommunication({{0, "r0", &r0, &l0}, {1, "r1", &r1, &l1}, {2, "r2", &r2, {}}});
  ASSERT_EQ(c.ranks.size(), 3u);
  EXPECT_EQ(c.waited_for_rank, 1);
  EXPECT_EQ(c.ranks[1].arrived_last, 2);
  EXPECT_EQ(c.ranks[1].shared, 2);
  EXPECT_EQ(c.ranks[1].others_waited_ns, (3000000 + 1000000) / 2 + (2000000 + 4000000) / 2);
  // Three HCCS links (0-0 counts too: its transport is HCCS here), 1-2 at half
  // the median: the one slow link, first.
  ASSERT_EQ(c.links.size(), 4u);
  EXPECT_EQ(c.slow_links, 1u);
  EXPECT_EQ(c.links[0].link.src, 1);
  EXPECT_EQ(c.links[0].link.dst, 2);
  EXPECT_EQ(c.links[0].rank, 1);
  EXPECT_DOUBLE_EQ(c.links[0].link.Gbps(), 10.0);
}

TEST(AscendCommunication, BadFilesNameWhatIsWrong) {
  const auto expect_error = [](const std::string& name, const std::string& text,
                               const std::string& part) {
    const auto source = Source::FromBytes(name, text);
    try {
      if (name == "communication.json") {
        ReadCommunication(*source);
      } else {
        ReadCommunicationMatrix(*source);
      }
      ADD_FAILURE() << "no error for " << part;
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), ErrorCode::kInvalidInput);
      EXPECT_NE(std::string(e.what()).find(part), std::string::npos) << e.what();
    }
  };
  expect_error("communication.json", "{\"step\": ", "communication.json: not JSON");
  expect_error("communication.json", "[]", "not a JSON object of steps");
  expect_error("communication.json",
               R"json({"step": {"collective": {"op@1": {"Communication Time Info": {
                 "Elapse Time(ms)": 1, "Transit Time(ms)": "x", "Wait Time(ms)": 0}}}}})json",
               "communication.json: step/collective/op@1/Communication Time Info/Transit "
               "Time(ms): not a non-negative number");
  expect_error("communication.json", R"json({"step": {"collective": {"op@1": {}}}})json",
               "step/collective/op@1: no 'Communication Time Info' object");
  expect_error("communication_matrix.json",
               R"json({"step": {"collective": {"allreduce-total@1": {"0to1": {
                 "Transport Type": "HCCS", "Transit Size(MB)": 1,
                 "Transit Time(ms)": 1}}}}})json",
               "allreduce-total@1/0to1: a link is named 'source-destination'");
  expect_error("communication_matrix.json",
               R"json({"step": {"collective": {"allreduce-total@1": {"0-1": {
                 "Transit Size(MB)": 1, "Transit Time(ms)": 1}}}}})json",
               "no 'Transport Type'");
}

TEST(KernelDetails, ShapesTypesAndFormatsAndTheTimelineTheyEnrich) {
  const std::string csv =
      "Name,Type,Accelerator Core,Start Time(us),Duration(us),Input Shapes,Input Data Types,"
      "Input Formats,Output Data Types,Output Formats\n"
      "trans_TransData_0,TransData,AI_VECTOR_CORE,1.000\t,2,\"\"\"32,3\"\"\",FLOAT,NCHW,FLOAT,"
      "NC1HWC0\n"
      "trans_Cast_5,Cast,AI_CPU,5.000\t,2,N/A,INT32,N/A,UINT64,N/A\n";
  TraceModel direct;
  auto source = Source::FromBytes("kernel_details.csv", csv);
  ImportKernelDetails(*source, direct);
  ASSERT_EQ(direct.size(), 2u);
  EXPECT_EQ(direct.String(direct.shapes[0]), "32,3->?");  // quotes removed; no output shapes
  EXPECT_EQ(direct.String(direct.dtype[0]), "FLOAT->FLOAT");
  EXPECT_EQ(direct.String(direct.layout[0]), "NCHW->NC1HWC0");
  EXPECT_EQ(direct.String(direct.dtype[1]), "INT32->UINT64");
  EXPECT_EQ(direct.layout[1], 0u);  // both formats N/A
  // A timeline with the same tasks (name and start) and one more.
  TraceModel timeline;
  for (const auto& [name, start] :
       {std::pair{"trans_TransData_0", int64_t{1000}}, {"trans_Cast_5", 5000}, {"other", 7000}}) {
    timeline.Append(EventRow{.start_ns = start,
                             .duration_ns = 2000,
                             .name = timeline.Intern(name),
                             .track = timeline.TrackFor("1", "1"),
                             .cls = EventClass::kKernel});
  }
  timeline.Append(EventRow{.start_ns = 1000,  // same name and start, but a host event
                           .duration_ns = 10,
                           .name = timeline.Intern("trans_TransData_0"),
                           .track = timeline.TrackFor("2", "2"),
                           .cls = EventClass::kHostOp});
  source = Source::FromBytes("kernel_details.csv", csv);
  EXPECT_EQ(EnrichFromKernelDetails(*source, timeline), 2u);
  EXPECT_EQ(timeline.String(timeline.layout[0]), "NCHW->NC1HWC0");
  EXPECT_EQ(timeline.String(timeline.kind[1]), "AI_CPU");
  EXPECT_EQ(timeline.String(timeline.dtype[1]), "INT32->UINT64");
  EXPECT_EQ(timeline.layout[2], 0u);
  EXPECT_EQ(timeline.layout[3], 0u);  // host events are left alone
}

TEST(ReportedMemory, PeakLiveBlocksAndBadValues) {
  const std::string header =
      "Name,Size(KB),Allocation Time(us),Release Time(us),Allocation Total Allocated(MB),"
      "Allocation Total Reserved(MB)\n";
  auto ops = Source::FromBytes("operator_memory.csv",
                               header +
                                   "a,1024,1.0\t,5.0\t,1,2\n"    // 1 MiB, freed at 5 us
                                   "b,2048,2.0\t,,3,4\n"         // 2 MiB, never freed: peak
                                   "c,-512,3.0\t,4.0\t,2.5,4\n"  // allocated before the window
                                   "a,512,6.0\t,,2.5,4\n");      // after the peak
  const ReportedMemory m = ReadAscendMemory(ops.get(), nullptr);
  EXPECT_EQ(m.blocks, 3);
  EXPECT_EQ(m.before_window, 1);
  EXPECT_EQ(m.peak_allocated_bytes, 3 << 20);
  EXPECT_EQ(m.peak_reserved_bytes, 4 << 20);
  EXPECT_EQ(m.peak_operator, "b");
  EXPECT_EQ(m.peak_ns, 2000);
  ASSERT_EQ(m.live_at_peak.size(), 2u);
  EXPECT_EQ(m.live_at_peak[0].name, "b");
  EXPECT_EQ(m.live_at_peak_bytes, 3 << 20);  // a (1 MiB, live until 5 us) and b
  ASSERT_EQ(m.by_operator.size(), 2u);
  EXPECT_EQ(m.by_operator[0].bytes, 2 << 20);  // b, then a's 1.5 MiB
  auto bad = Source::FromBytes("operator_memory.csv", header + "a,big,1.0,,1,2\n");
  try {
    ReadAscendMemory(bad.get(), nullptr);
    ADD_FAILURE() << "a bad size was accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("operator_memory.csv: line 2: 'Size(KB)' is not a size"),
              std::string::npos)
        << e.what();
  }
}

// The error a reader throws for `text`, or "" when it reads it.
std::string ErrorOf(const std::string& name, const std::string& text,
                    const std::function<void(Source&)>& read) {
  const auto source = Source::FromBytes(name, text);
  try {
    read(*source);
  } catch (const Error& e) {
    return e.what();
  }
  return {};
}

TEST(ReportedSummaries, TypeStatisticsInBothNamingsAndBadValues) {
  // torch_npu's copy (no Device_id), then msprof's communication_statistic.
  auto ops = Source::FromBytes(
      "op_statistic.csv",
      "OP Type,Core Type,Count,Total Time(us),Min Time(us),Avg Time(us),Max Time(us),Ratio(%)\r\n"
      "TransData,AI_VECTOR_CORE,57,1423.208,6.54,24.969,70.801,16.038\r\n"
      "Cast,N/A,2,1,0.5,0.5,0.5,N/A\r\n");
  const auto v = ReadTypeStatistic(*ops);
  ASSERT_EQ(v.size(), 2u);
  EXPECT_EQ(v[0].op_type, "TransData");
  EXPECT_EQ(v[0].core_type, "AI_VECTOR_CORE");
  EXPECT_EQ(v[0].count, 57);
  EXPECT_EQ(v[0].total_ns, 1423208);
  EXPECT_EQ(v[0].min_ns, 6540);
  EXPECT_DOUBLE_EQ(v[0].ratio_pct, 16.038);
  EXPECT_EQ(v[1].core_type, "");
  EXPECT_EQ(v[1].ratio_pct, -1);
  auto comm = Source::FromBytes("communication_statistic_1.csv",
                                "Device_id,OP Type,Count,Total Time(us),Min Time(us),Avg "
                                "Time(us),Max Time(us),Ratio(%)\n0,hcom_allReduce_,4,10,1,2.5,4,"
                                "100\n");
  const auto c = ReadTypeStatistic(*comm);
  ASSERT_EQ(c.size(), 1u);
  EXPECT_EQ(c[0].device, "0");
  EXPECT_EQ(c[0].max_ns, 4000);
  const auto read = [](Source& s) { ReadTypeStatistic(s); };
  EXPECT_NE(ErrorOf("op_statistic.csv", "OP Type,Count\nA,1\n", read)
                .find("op_statistic.csv: line 1: no 'Total Time(us)' column"),
            std::string::npos);
  EXPECT_NE(ErrorOf("op_statistic.csv", "OP Type,Count,Total Time(us)\nA,-1,2\n", read)
                .find("op_statistic.csv: line 2: 'Count' is not a count: '-1'"),
            std::string::npos);
  EXPECT_NE(ErrorOf("op_statistic.csv", "OP Type,Count,Total Time(us)\nA,1,fast\n", read)
                .find("line 2: 'Total Time(us)' is not a time in microseconds: 'fast'"),
            std::string::npos);
}

TEST(ReportedSummaries, ApisOperatorDetailsAndTheOnlineCompilationRule) {
  auto apis = Source::FromBytes("api_statistic.csv",
                                "Level,API Name,Time(us),Count,Avg(us),Min(us),Max(us),Variance\n"
                                "acl,aclopCompileAndExecute,3000,4,750,10,2500,1\n"
                                "acl,aclopCompileAndExecuteV2,1000.6,1,1000.6,1000.6,1000.6,0\n"
                                "node,launch,50,10,5,1,9,2\n");
  ReportedSummaries s;
  s.apis = ReadApiStatistic(*apis);
  s.apis_source = "api_statistic.csv";
  ASSERT_EQ(s.apis.size(), 3u);
  EXPECT_EQ(s.apis[0].level, "acl");
  EXPECT_EQ(s.apis[0].total_ns, 3000000);
  EXPECT_EQ(s.apis[2].count, 10);
  Analysis a;  // no timeline window: the rule needs only the compile_min_ns
  auto findings = AdviseSummaries(s, a);
  ASSERT_EQ(findings.size(), 1u);
  EXPECT_EQ(findings[0].id, "online_compilation");
  EXPECT_NE(findings[0].title.find("4.001 ms in 5 calls"), std::string::npos) << findings[0].title;
  EXPECT_NE(findings[0].evidence.find("aclopCompileAndExecute x4 3.000 ms (longest 2.500 ms)"),
            std::string::npos)
      << findings[0].evidence;
  // Shown by the timeline already (its CANN layer): not said twice.
  a.busy.compile_ns.push_back({"ACL operator compilation", 4000000});
  EXPECT_TRUE(AdviseSummaries(s, a).empty());
  // A window in which it is below compile_pct: not worth a finding.
  a.busy.compile_ns.clear();
  a.busy.window_begin_ns = 0;
  a.busy.window_end_ns = int64_t{1000} * 1000000;  // 1 s: 0.4%
  EXPECT_TRUE(AdviseSummaries(s, a).empty());

  // operator_details: rows summed per name, the documented spaced headers too,
  // a quoted multi-line call stack.
  auto details = Source::FromBytes(
      "operator_details.csv",
      "Name,Input Shapes,Call Stack,Host Self Duration (us),Host Total Duration (us),Device "
      "Self Duration (us),Device Total Duration (us)\n"
      "aten::add,\"[1];\r\n[2]\",\"a.py(1): f;\r\nb.py(2): g\",10,20,30,40\n"
      "aten::mm,,,1,2,300,300\n"
      "aten::add,,,5,5,0,0\n");
  const auto ops = ReadOperatorDetails(*details);
  ASSERT_EQ(ops.size(), 2u);
  EXPECT_EQ(ops[0].name, "aten::mm");  // the most device self time first
  EXPECT_EQ(ops[1].rows, 2);
  EXPECT_EQ(ops[1].host_self_ns, 15000);
  EXPECT_EQ(ops[1].device_total_ns, 40000);
  EXPECT_NE(ErrorOf("operator_details.csv", "Name,Input Shapes\na,b\n",
                    [](Source& in) { ReadOperatorDetails(in); })
                .find("no 'Host Self Duration(us)' or 'Host Self Duration (us)' column"),
            std::string::npos);
}

TEST(ReportedSummaries, MemoryPeaksAndIterations) {
  // torch_npu's npu_module_mem.csv is in MB, msprof's in KB; -1 is not a sample.
  auto mb = Source::FromBytes("npu_module_mem.csv",
                              "Component,Timestamp(us),Total Reserved(MB),Device\n"
                              "HCCL,1.0\t,2,NPU:0\nHCCL,2.0\t,3,NPU:0\nHCCL,3.0\t,-1,NPU:0\n"
                              "GE,1.5\t,4,NPU:0\n");
  const auto m = ReadModuleMemory(*mb);
  ASSERT_EQ(m.size(), 2u);
  EXPECT_EQ(m[0].name, "GE");  // the highest peak first
  EXPECT_EQ(m[1].peak_bytes, int64_t{3} << 20);
  EXPECT_EQ(m[1].peak_ns, 2000);
  EXPECT_EQ(m[1].samples, 2);
  auto kb = Source::FromBytes("npu_module_mem_1.csv",
                              "Device_id,Component,Timestamp(us),Total Reserved(KB),Device\n"
                              "0,HCCL,1,2048,NPU:0\n");
  const auto k = ReadModuleMemory(*kb);
  ASSERT_EQ(k.size(), 1u);
  EXPECT_EQ(k[0].peak_bytes, int64_t{2} << 20);
  EXPECT_EQ(k[0].device, "0");
  auto npu = Source::FromBytes("npu_mem_1.csv",
                               "Device_id,event,ddr(KB),hbm(KB),memory(KB),timestamp(us)\n"
                               "0,app,0,1024,1024,1\n0,app,0,3072,3072,2\n0,device,1,N/A,1,3\n");
  const auto n = ReadNpuMemory(*npu);
  ASSERT_EQ(n.size(), 5u);  // app ddr/hbm/memory, device ddr/memory
  EXPECT_EQ(n[0].name, "app hbm");
  EXPECT_EQ(n[0].peak_bytes, 3 << 20);
  EXPECT_EQ(n[0].peak_ns, 2000);
  auto it = Source::FromBytes(
      "step_trace_1.csv",
      "Device_id,Iteration ID,FP Start(us),BP End(us),Iteration End(us),Iteration Time(us),FP to "
      "BP Time(us),Iteration Refresh(us),Data Aug Bound(us),Model ID\n"
      "0,1,N/A,N/A,N/A,100.5,80,10,N/A,1\n");
  const auto iterations = ReadIterations(*it);
  ASSERT_EQ(iterations.size(), 1u);
  EXPECT_EQ(iterations[0].iteration_ns, 100500);
  EXPECT_EQ(iterations[0].fp_to_bp_ns, 80000);
  EXPECT_EQ(iterations[0].data_aug_ns, -1);
  EXPECT_EQ(iterations[0].model_id, "1");
}

TEST(TaskTime, KernelsByCoreAndTheTasksThatAreNotKernels) {
  auto source = Source::FromBytes(
      "task_time_1.csv",
      "Device_id,kernel_name,kernel_type,stream_id,task_id,task_time(us),task_start(us),"
      "task_stop(us)\n"
      "0,MatMul_1,KERNEL_AICORE,2,1,10.5,100.000\t,110.500\t\n"
      "0,Cast_2,KERNEL_AICPU,2,2,5,120,125\n"
      "0,N/A,EVENT_RECORD,2,3,1,130,131\n"
      "0,N/A,MEMCPY_ASYNC,3,4,N/A,140,150\n"
      "0,MemSet,KERNEL_AIVEC,2,5,2,160,162\n");
  ASSERT_TRUE(SniffTaskTime(*source));
  TraceModel model;
  ImportTaskTime(*source, model);
  ASSERT_EQ(model.size(), 5u);
  EXPECT_EQ(model.format, "ascend-task-time");
  EXPECT_EQ(model.String(model.name[0]), "MatMul_1");
  EXPECT_EQ(model.duration_ns[0], 10500);
  EXPECT_EQ(model.cls[0], EventClass::kKernel);
  EXPECT_EQ(model.String(model.kind[0]), "AI_CORE");
  EXPECT_EQ(model.String(model.kind[1]), "AI_CPU");
  EXPECT_EQ(model.String(model.name[2]), "EVENT_RECORD");
  EXPECT_EQ(model.cls[2], EventClass::kDeviceWait);  // the stream signalling an event
  EXPECT_EQ(model.cls[3], EventClass::kMemcpy);
  EXPECT_EQ(model.duration_ns[3], 10000);  // from its stop time
  EXPECT_EQ(model.cls[4], EventClass::kMemset);
  EXPECT_EQ(model.tracks.size(), 2u);
  EXPECT_NE(
      ErrorOf("task_time_1.csv", "kernel_name,kernel_type,task_start(us)\nA,KERNEL_AICORE,1\n",
              [](Source& in) {
                TraceModel m;
                ImportTaskTime(in, m);
              })
          .find("no 'task_time(us)' or 'task_stop(us)' column"),
      std::string::npos);
  EXPECT_NE(ErrorOf("task_time_1.csv",
                    "kernel_name,kernel_type,task_start(us),task_time(us)\nA,K,1,N/A\n",
                    [](Source& in) {
                      TraceModel m;
                      ImportTaskTime(in, m);
                    })
                .find("task_time_1.csv: line 2: a task without a start time and a duration"),
            std::string::npos);
}

// A CANN run's device_0/info.json.0 (DeviceInfo as msprof writes it: numbers
// or decimal strings) and the peaks that follow: 24 AI cores x 1.8 GHz x 8192
// FLOP/cycle = 353.89 TFLOP/s, the 910B2's third-party figure (docs/formats/ascend.md 7).
TEST(DeviceInfo, TheChipsCoresAndClockGiveItsPeaks) {
  auto info = Source::FromBytes("device_0/info.json.0",
                                R"({"DeviceInfo": [{"id": 0, "env_type": 3, "ai_core_num": 24,
      "aiv_num": 48, "hwts_frequency": "50", "aic_frequency": "1800"}], "rank_id": 0})");
  const ReportedChip chip = ReadDeviceInfo(*info);
  EXPECT_EQ(chip.cores, 24);
  EXPECT_EQ(chip.core_mhz, 1800);
  EXPECT_EQ(chip.source, "device_0/info.json.0");
  auto numbers = Source::FromBytes("info.json.1", R"({"DeviceInfo": [{"ai_core_num": "20",
                                                      "aic_frequency": 1650}]})");
  EXPECT_EQ(ReadDeviceInfo(*numbers).cores, 20);
  EXPECT_EQ(ReadDeviceInfo(*Source::FromBytes("i", R"({"DeviceInfo": [{"ai_core_num": "20",
                           "aic_frequency": 1650}]})"))
                .core_mhz,
            1650);

  model_builder::Builder b;
  b.Add(EventClass::kKernel, "MatMulV2", 0, 10);
  CompleteAscendModel(b.model);  // as the Ascend readers do
  b.model.reported.chip = chip;  // as its side-file reader does
  Analysis a = AnalyzeTrace(b.model, {});
  ASSERT_TRUE(a.ceilings.has_value());
  EXPECT_DOUBLE_EQ(a.ceilings->flops_per_second["bf16"], 24 * 1800e6 * 8192);
  EXPECT_DOUBLE_EQ(a.ceilings->flops_per_second["fp16"], 353.8944e12);
  EXPECT_DOUBLE_EQ(a.ceilings->flops_per_second["int8"], 24 * 1800e6 * 16384);
  EXPECT_DOUBLE_EQ(a.ceilings->flops_per_second["fp32"], 147e12) << "the table's";
  EXPECT_DOUBLE_EQ(a.ceilings->bytes_per_second, 1.2e12) << "the table's";
  EXPECT_NE(a.ceilings->source.find("device_0/info.json.0: 24 AI cores x 1800 MHz"),
            std::string::npos)
      << a.ceilings->source;
  EXPECT_NE(a.ceilings->source.find("assumed Ascend 910B"), std::string::npos)
      << "where the table's figures come from";
  // Without the chip: the assumed 910B's figures.
  b.model.reported.chip.reset();
  a = AnalyzeTrace(b.model, {});
  ASSERT_TRUE(a.ceilings.has_value());
  EXPECT_DOUBLE_EQ(a.ceilings->flops_per_second["bf16"], 294.91e12);

  const auto error = [](const std::string& text) {
    return ErrorOf("info.json.0", text, [](Source& in) { ReadDeviceInfo(in); });
  };
  EXPECT_NE(error("{").find("info.json.0: not JSON"), std::string::npos);
  EXPECT_NE(error(R"({"rank_id": 0})").find("info.json.0: no DeviceInfo"), std::string::npos);
  EXPECT_NE(
      error(R"({"DeviceInfo": [{"ai_core_num": "many", "aic_frequency": "1800"}]})")
          .find("info.json.0: DeviceInfo[0].ai_core_num is '\"many\"', not a positive number"),
      std::string::npos);
  EXPECT_NE(error(R"({"DeviceInfo": [{"ai_core_num": 24}]})")
                .find("info.json.0: DeviceInfo[0].aic_frequency is absent"),
            std::string::npos);
  EXPECT_NE(error(R"({"DeviceInfo": [{"ai_core_num": 0, "aic_frequency": 1800}]})")
                .find("ai_core_num is '0'"),
            std::string::npos);
}

TEST(ParallelGroups, TheDocumentedHashAndGlobalRanks) {
  // docs/formats/ascend.md 1.7's example, verified there against a real sample.
  EXPECT_EQ(HcclGroupHash("group_name_19"), 3985310405473756128u);
  EXPECT_EQ(HcclGroupHash(""), 0u);
  auto meta = Source::FromBytes("profiler_metadata.json",
                                R"({"distributed_args": {"world_size": 16},
          "parallel_group_info": {
            "10.0.0.1%eth0_55000_0_1738895486152654": {"group_name": "tp", "group_rank": 1,
                                                       "global_ranks": [3, 1, 2, 0]},
            "group_name_19": {"global_ranks": [8]}}})");
  const auto groups = ReadParallelGroups(*meta);
  ASSERT_EQ(groups.size(), 2u);
  EXPECT_EQ(groups[0].role, "tp");
  EXPECT_EQ(groups[0].global_ranks, (std::vector<int>{0, 1, 2, 3}));  // sorted: local k -> [k]
  EXPECT_EQ(groups[1].hash, "3985310405473756128");
  EXPECT_EQ(groups[1].role, "");
  auto none = Source::FromBytes("profiler_metadata.json", R"({"ENV_VARIABLES": {}})");
  EXPECT_TRUE(ReadParallelGroups(*none).empty());
  EXPECT_NE(ErrorOf("profiler_metadata.json",
                    R"({"parallel_group_info": {"g": {"global_ranks": ["a"]}}})",
                    [](Source& in) { ReadParallelGroups(in); })
                .find("profiler_metadata.json: parallel_group_info/g/global_ranks: '\"a\"' is not "
                      "a rank"),
            std::string::npos);
  EXPECT_NE(ErrorOf("profiler_metadata.json", "{", [](Source& in) { ReadParallelGroups(in); })
                .find("profiler_metadata.json: not JSON"),
            std::string::npos);
}

TEST(AscendCommunication, GlobalRanksFromGroupsElseFromSelfLinks) {
  // Three HCCS links of each rank's file in one group, local ranks 0..3.
  const auto links_of = [](int self) {
    const ReportedLink local{.step = "step1",
                             .kind = "collective",
                             .op_type = "allreduce",
                             .group = "42",
                             .src = self,
                             .dst = self,
                             .transport = "LOCAL",
                             .bytes = 5000000,
                             .time_ns = 1000000};
    std::vector<ReportedLink> v = {local};
    for (int k = 0; k < 4; ++k) {
      if (k == self) continue;
      ReportedLink hccs = local;
      hccs.dst = k, hccs.transport = "HCCS";
      v.push_back(hccs);
    }
    return v;
  };
  const std::vector<ReportedLink> a = links_of(0), b = links_of(2);
  // Without groups: each rank's LOCAL k-k says that it is local rank k.
  auto c = CompareCommunication({{.rank = 4, .links = &a}, {.rank = 6, .links = &b}});
  ASSERT_EQ(c.links.size(), 6u);
  for (const SlowLink& l : c.links) {
    EXPECT_EQ(l.link.global_src, l.link.src == 0 ? 4 : 6);
    EXPECT_EQ(l.link.global_dst, l.link.dst == 0 ? 4 : l.link.dst == 2 ? 6 : -1);
    EXPECT_EQ(l.link.ranks_from, "self-links");
  }
  // With the group of profiler_metadata.json (hash 42): local k -> global_ranks[k].
  const std::vector<ReportedGroup> groups = {
      {.library_name = "g",
       .role = "dp",
       .hash = "42",
       .global_ranks = {4, 5, 6, 7},
       .source = "job/rank_4_ascend_pt/profiler_metadata.json"}};
  c = CompareCommunication({{.rank = 4, .links = &a, .groups = &groups}, {.rank = 6, .links = &b}});
  for (const SlowLink& l : c.links) {
    EXPECT_EQ(l.link.global_src, 4 + l.link.src);
    EXPECT_EQ(l.link.global_dst, 4 + l.link.dst);
    EXPECT_EQ(l.link.group_role, "dp");
    EXPECT_EQ(l.link.ranks_from, "profiler_metadata.json");
  }
}

TEST(AscendCost, MatmulsConvolutionsAndElementwiseFromShapes) {
  // The level-1 sample's MatMulV2 (weights transposed, a bias) and MatMulV3
  // (the first input transposed): 2 * M * N * K.
  AscendCost c =
      AscendTaskCost("MatMulV2", "32,9216;4096,9216;4096->32,4096", "FLOAT;FLOAT;FLOAT->FLOAT",
                     "FORMAT_ND;FORMAT_ND;FORMAT_ND->FORMAT_ND");
  EXPECT_EQ(c.flops, int64_t{2} * 32 * 4096 * 9216);
  EXPECT_EQ(c.bytes, (int64_t{32} * 9216 + 4096 * 9216 + 4096 + 32 * 4096) * 4);
  EXPECT_EQ(c.dtype, "fp32");
  c = AscendTaskCost("MatMulV3", "32,4096;32,9216->4096,9216", "FLOAT;FLOAT->FLOAT",
                     "FORMAT_ND;FORMAT_ND->FORMAT_ND");
  EXPECT_EQ(c.flops, int64_t{2} * 4096 * 9216 * 32);
  c = AscendTaskCost("BatchMatMulV2", "8,128,64;8,64,256->8,128,256", "DT_BF16;DT_BF16->DT_BF16",
                     "ND;ND->ND");
  EXPECT_EQ(c.flops, int64_t{2} * 8 * 128 * 256 * 64);
  EXPECT_EQ(c.dtype, "bf16");
  // Shapes that describe no product (the mstt sample's 81920,4096 x 8192,512
  // -> 4096,512), fractal formats and dynamic dimensions are not guessed.
  EXPECT_LT(AscendTaskCost("MatMulV2", "81920,4096;8192,512->4096,512", "DT_BF16;DT_BF16->DT_BF16",
                           "ND;ND->ND")
                .flops,
            0);
  EXPECT_LT(AscendTaskCost("MatMul", "4,2,16,16;2,4,16,16->4,4,16,16", "FLOAT16;FLOAT16->FLOAT16",
                           "FRACTAL_NZ;FRACTAL_NZ->FRACTAL_NZ")
                .flops,
            0);
  EXPECT_LT(
      AscendTaskCost("MatMulV2", "-1,64;64,32->-1,32", "FLOAT;FLOAT->FLOAT", "ND;ND->ND").flops, 0);
  // Conv2D in NCHW: 2 * outputs * Cin * kh * kw; in 5HD (channels padded) not counted.
  c = AscendTaskCost("Conv2D", "32,3,224,224;64,3,11,11;64->32,64,55,55",
                     "FLOAT;FLOAT;FLOAT->FLOAT", "NCHW;NCHW;ND->NCHW");
  EXPECT_EQ(c.flops, int64_t{2} * 32 * 64 * 55 * 55 * 3 * 11 * 11);
  EXPECT_LT(AscendTaskCost("Conv2D", "32,1,224,224,8;121,4,16,8;64->32,8,55,55,8",
                           "FLOAT;FLOAT;FLOAT->FLOAT", "NC1HWC0;FRACTAL_Z;NCHW->NC1HWC0")
                .flops,
            0);
  // Elementwise: a FLOP per output element; a scalar second input.
  c = AscendTaskCost("Muls", "32,4096->32,4096", "FLOAT->FLOAT", "FORMAT_ND->FORMAT_ND");
  EXPECT_EQ(c.flops, 32 * 4096);
  EXPECT_EQ(c.bytes, 2 * 32 * 4096 * 4);
  EXPECT_LT(AscendTaskCost("TransData", "32,3->32,1,3,3,16", "FLOAT->FLOAT", "NCHW->NC1HWC0").flops,
            0);
}

// FlashAttentionScore: 4 * B * N1 * S1 * S2 * D, the layout told by
// softmax_max's [B, N1, S1, 8]. The first two are the real sample's rows
// (tests/data/ascend/kernel_details.csv, task 60679 and 61655), read by hand:
// softmax_max 2,4,4096,8 gives B = 2, N1 = 4, S1 = 4096; the query 4096,2,512
// is SBH ([S1, B, H1]), so D = 512 / 4 = 128 and S2 = the key's first, 4096.
TEST(AscendCost, FlashAttentionFromSoftmaxMaxShape) {
  const std::string fwd_types =
      "DT_BF16;DT_BF16;DT_BF16;DT_BF16;UINT8;DT_BF16;BOOL;INT64;INT64;INT64;INT64;INT64->"
      "FLOAT;FLOAT;DT_BF16;DT_BF16";
  const std::string fwd_formats = "NCL;NCL;NCL;ND;ND;ND;ND;ND;ND;ND;ND;ND->ND;ND;ND;ND";
  AscendCost c = AscendTaskCost(
      "FlashAttentionScore",
      "4096,2,512;4096,2,512;4096,2,512;;;;4096,4096;;;;;->2,4,4096,8;2,4,4096,8;;4096,2,512",
      fwd_types, fwd_formats);
  const int64_t forward = int64_t{4} * 2 * 4 * 4096 * 4096 * 128;
  EXPECT_EQ(c.flops, forward);
  EXPECT_EQ(c.dtype, "bf16");
  c = AscendTaskCost(
      "FlashAttentionScoreGrad",
      "4096,2,512;4096,2,512;4096,2,512;4096,2,512;4096,4096;2,4,4096,8;2,4,4096,8;;4096,2,512;->"
      "4096,2,512;4096,2,512;4096,2,512;",
      "DT_BF16;DT_BF16;DT_BF16;DT_BF16;BOOL;FLOAT;FLOAT;DT_BF16;DT_BF16;INT64->"
      "DT_BF16;DT_BF16;DT_BF16;DT_BF16",
      "NCL;NCL;NCL;NCL;ND;NCHW;NCHW;ND;NCL;ND->ND;ND;ND;ND");
  EXPECT_EQ(c.flops, forward / 2 * 5) << "five products of the forward's size";
  // The other layouts, and a key of another length (cross-attention):
  // BSH [B, S1, H1], BNSD [B, N1, S1, D], BSND [B, S1, N1, D].
  const auto fa = [](const std::string& q, const std::string& k, const std::string& max) {
    return AscendTaskCost("FlashAttentionScore", q + ";" + k + ";" + k + "->" + max + ";" + max,
                          "FLOAT16;FLOAT16;FLOAT16->FLOAT;FLOAT", "ND;ND;ND->ND;ND")
        .flops;
  };
  EXPECT_EQ(fa("2,1024,2048", "2,512,2048", "2,16,1024,8"), int64_t{4} * 2 * 16 * 1024 * 512 * 128);
  EXPECT_EQ(fa("2,16,1024,64", "2,16,512,64", "2,16,1024,8"),
            int64_t{4} * 2 * 16 * 1024 * 512 * 64);
  EXPECT_EQ(fa("2,1024,16,64", "2,512,16,64", "2,16,1024,8"),
            int64_t{4} * 2 * 16 * 1024 * 512 * 64);
  // Grouped-query attention: the key has fewer heads; N1 counts.
  EXPECT_EQ(fa("2,16,1024,64", "2,4,1024,64", "2,16,1024,8"),
            int64_t{4} * 2 * 16 * 1024 * 1024 * 64);
  // B = S1: BSH and SBH both match and agree; the key's batch settles it
  // where they would not.
  EXPECT_EQ(fa("8,8,512", "8,8,512", "8,4,8,8"), int64_t{4} * 8 * 4 * 8 * 8 * 128);
  EXPECT_EQ(fa("8,8,512", "4,8,512", "8,4,8,8"), int64_t{4} * 8 * 4 * 8 * 4 * 128)
      << "SBH: the key's batch (second) is 8, S2 its first";
  // Not counted: H1 not a multiple of N1 (the sample's edited "varlen" row),
  // TND ([T, N, 8]), a query that matches no layout, and N1 = S1 in 4-D with a
  // key read as BNSD (S2 = 4) or BSND (S2 = 8): two counts, neither chosen.
  EXPECT_LT(fa("4096,2,511", "4096,2,512", "2,3,4096,8"), 0);
  EXPECT_LT(fa("8192,16,64", "8192,16,64", "8192,16,8"), 0);
  EXPECT_LT(fa("3,1024,2048", "3,1024,2048", "2,16,1024,8"), 0);
  EXPECT_LT(fa("2,8,8,64", "2,8,4,64", "2,8,8,8"), 0);
}

}  // namespace
}  // namespace opscope::analyze

namespace opscope::analyze {
namespace {

// AI Core operators judged by family as msprof-analyze's advisor does
// (reported.h: FamilyVerdict), on hand-made tasks whose verdicts follow from
// its rule file's thresholds.
TEST(AiCoreFamilies, VerdictsFollowTheAdvisorsRules) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  // aic_mac, aic_mte2, aic_fixpipe, aiv_vec, aiv_mte2, aiv_mte3
  const std::array<double, kFamilyRatios> cube_busy{0.85, 0.5, nan, nan, nan, nan},
      cube_idle{0.5, 0.6, nan, nan, nan, nan}, fa{nan, 0.85, 0.2, 0.3, nan, nan},
      vec{nan, nan, nan, 0.3, 0.3, 0.35}, vec_low{nan, nan, nan, 0.1, 0.2, 0.3};
  AiCoreFamilies f;
  // 4096x4096 by 4096x4096, bf16: 96 MiB per call, two calls: judged.
  for (int i = 0; i < 2; ++i) {
    f.Add("mm", "MatMulV2", "AI_CORE", "4096,4096;4096,4096->4096,4096", "", 1000, cube_busy);
  }
  // The same with an inner axis of 4000: not affine.
  for (int i = 0; i < 2; ++i) {
    f.Add("mm_odd", "MatMulV2", "AI_CORE", "4096,4000;4000,4096->4096,4096", "", 1000, cube_idle);
  }
  // A batched (3-D) affine matmul with idle pipes: room to optimise, by the
  // larger gap (0.95 - 0.6 = 35 points).
  for (int i = 0; i < 4; ++i) {
    f.Add("bmm", "BatchMatMulV2", "AI_CORE", "8,2048,1024;8,1024,1024->8,2048,1024", "", 1000,
          cube_idle);
  }
  // A small matmul (under 100 MB in all): not judged.
  f.Add("small", "MatMulV2", "AI_CORE", "64,64;64,64->64,64", "", 1000, cube_busy);
  // FlashAttention, BSH query [S=4096, B=2, H=2*96]: head dim 96 (H / N, N
  // from the softmax output [B, N, S, 8]).
  f.Add("fa", "FlashAttentionScore", "MIX_AIC", "4096,2,192;4096,2,192->2,2,4096,8", "", 1000, fa);
  // BNSD with D = 128 and S = 4096: affine, MTE2 at 0.85: bound.
  f.Add("fa2", "FlashAttentionScore", "MIX_AIC", "2,8,4096,128->2,8,4096,8", "", 1000, fa);
  // Vector operators: Add takes 40 of ~10,000 us (under 1%): not judged;
  // Mul's total 0.95: bound by the three pipes together; Cast's room.
  f.Add("add", "Add", "AI_VECTOR_CORE", "8;8->8", "", 40, vec);
  f.Add("mul", "Mul", "AI_VECTOR_CORE", "8;8->8", "", 1000, vec);
  f.Add("cast", "Cast", "AI_VECTOR_CORE", "8->8", "", 1000, vec_low);
  const std::vector<FamilyVerdict> v = f.Finish(10'000);
  std::map<std::string, const FamilyVerdict*> by;
  for (const FamilyVerdict& x : v) by[x.name] = &x;
  ASSERT_EQ(v.size(), 7u);
  EXPECT_FALSE(by.count("small"));
  EXPECT_FALSE(by.count("add"));
  EXPECT_EQ(by["mm"]->verdict, "bound");
  EXPECT_EQ(by["mm"]->detail, "mac");
  EXPECT_EQ(by["mm_odd"]->verdict, "not affine");
  EXPECT_EQ(by["bmm"]->verdict, "room to optimise");
  EXPECT_NEAR(by["bmm"]->gap_pct, 35, 1e-9);
  EXPECT_EQ(by["fa"]->verdict, "not affine");
  EXPECT_NE(by["fa"]->detail.find("head dim 96"), std::string::npos) << by["fa"]->detail;
  EXPECT_EQ(by["fa2"]->verdict, "bound");
  EXPECT_EQ(by["fa2"]->detail, "MTE2");
  EXPECT_EQ(by["mul"]->detail, "vec, MTE2 and MTE3 together");
  EXPECT_EQ(by["cast"]->verdict, "room to optimise");
  EXPECT_NEAR(by["cast"]->gap_pct, 60, 1e-9);  // 0.7 - vec 0.1
  // The families in order: cube, FlashAttention, vector.
  EXPECT_EQ(v.front().family, "cube");
  EXPECT_EQ(v.back().family, "vector");
}

TEST(AiCoreFamilies, ShapesAreReadOrRefused) {
  ShapeLists s;
  ASSERT_TRUE(ParseShapes("8192,512;;512->8192", s));
  ASSERT_EQ(s.inputs.size(), 3u);
  EXPECT_EQ(s.inputs[0], (std::vector<int64_t>{8192, 512}));
  EXPECT_TRUE(s.inputs[1].empty());
  EXPECT_EQ(s.outputs[0], (std::vector<int64_t>{8192}));
  EXPECT_FALSE(ParseShapes("8,x->8", s));
  EXPECT_FALSE(ParseShapes("8->?", s));
  EXPECT_FALSE(ParseShapes("8,8", s));
  EXPECT_FALSE(ParseShapes("-8->8", s));
}

}  // namespace
}  // namespace opscope::analyze
