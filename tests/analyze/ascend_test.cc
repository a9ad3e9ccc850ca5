// Ascend side files read beside a rank's timeline: the AI Core pipeline.
#include <gtest/gtest.h>

#include <string>

#include "analyze/advisor.h"
#include "analyze/importers/ascend/ai_core.h"
#include "analyze/importers/ascend/communication.h"
#include "analyze/importers/ascend/kernel_details_importer.h"
#include "analyze/importers/ascend/memory.h"
#include "analyze/passes/ascend_cost.h"
#include "analyze/source.h"
#include "opscope/opscope.h"

namespace opscope::analyze {
namespace {

constexpr char kHeader[] =
    "Stream ID,Task ID,Name,Type,Accelerator Core,Start Time(us),Duration(us),Block Dim,"
    "aicore_time(us),aic_total_cycles,aic_mac_ratio,aic_scalar_ratio,aic_mte1_ratio,"
    "aic_mte2_ratio,aic_fixpipe_ratio,aiv_time(us),aiv_total_cycles,aiv_vec_ratio,"
    "aiv_scalar_ratio,aiv_mte2_ratio,aiv_mte3_ratio,cube_utilization(%)\n";

AscendPipelineTable Read(const std::string& csv, const std::string& l2 = "") {
  const auto source = Source::FromBytes("kernel_details.csv", csv);
  if (l2.empty()) return ReadAiCorePipeline(*source, nullptr);
  const auto l2_source = Source::FromBytes("l2_cache.csv", l2);
  return ReadAiCorePipeline(*source, l2_source.get());
}

TEST(AiCorePipeline, RatiosWeightedByTimeAndTheCoresThatRan) {
  // A matmul on the cube core twice (30 us at MTE2 0.9, 10 us at 0.5: weighted
  // 0.8); a vector op whose aic_* columns are 0.0 with 0 cycles (not measured).
  const AscendPipelineTable t = Read(
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
  const AscendOpPipeline& mm = t.ops[0];
  EXPECT_EQ(mm.name, "mm");
  EXPECT_EQ(mm.count, 2);
  EXPECT_EQ(mm.total_ns, 40000);
  EXPECT_DOUBLE_EQ(mm.ratio[static_cast<int>(AiCorePipe::kMte2)], (0.9 * 30 + 0.5 * 10) / 40);
  EXPECT_DOUBLE_EQ(mm.ratio[static_cast<int>(AiCorePipe::kCube)], (0.2 * 30 + 0.6 * 10) / 40);
  EXPECT_EQ(mm.ratio[static_cast<int>(AiCorePipe::kVector)], -1);  // no vector core ran
  EXPECT_DOUBLE_EQ(mm.cube_utilization_pct, (40.0 * 30 + 80.0 * 10) / 40);
  EXPECT_EQ(mm.bound, "memory-bound (MTE2)");  // 0.8 >= 0.8
  EXPECT_NE(mm.evidence.find("MTE2 0.80"), std::string::npos) << mm.evidence;
  const AscendOpPipeline& add = t.ops[1];
  EXPECT_EQ(add.ratio[static_cast<int>(AiCorePipe::kCube)], -1);  // 0 aic cycles: not measured
  EXPECT_DOUBLE_EQ(add.ratio[static_cast<int>(AiCorePipe::kMte2)], 0.4);
  EXPECT_DOUBLE_EQ(add.ratio[static_cast<int>(AiCorePipe::kScalar)], 0.2);
  EXPECT_EQ(add.bound, "bound by no pipe");  // 25 us >= 20 us, every pipe < 0.8
}

TEST(AiCorePipeline, ShortOperatorsBelowTheBoundAreNotJudged) {
  const AscendPipelineTable t =
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
  const AscendPipelineTable t = Read(
      "Op Name,OP Type,Task Type,Task Start Time(us),Task Duration(us),Block Dim,total_cycles,"
      "mac_ratio,vec_ratio,scalar_ratio,mte1_ratio,mte2_ratio,mte3_ratio\n"
      "conv,Conv2D,AI_CORE,1.000\t,50,32,9000,0.91,0.1,0.2,0.3,0.4,0.1\n");
  ASSERT_EQ(t.ops.size(), 1u);
  EXPECT_EQ(t.ops[0].bound, "cube-bound");
  EXPECT_DOUBLE_EQ(t.ops[0].mean_blocks, 32);
}

TEST(AiCorePipeline, NoPmuColumnsGiveNoTable) {
  const AscendPipelineTable t =
      Read("Name,Type,Accelerator Core,Start Time(us),Duration(us)\nk,N/A,N/A,1.0,2.0\n");
  EXPECT_FALSE(t.has_pmu_columns);
  EXPECT_TRUE(t.ops.empty());
  EXPECT_TRUE(AdvisePipeline(t).empty());
}

TEST(AiCorePipeline, L2RatesJoinByStreamTaskAndNameInOrder) {
  // Task ids wrap: the same (stream, task, name) twice takes its rows in order.
  const AscendPipelineTable t = Read(
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
  const std::vector<AscendCollective> ops = ReadCommunication(*source);
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
    AscendCollective c;
    c.step = "step1", c.kind = "collective", c.op = name, c.group = "g";
    c.elapse_ns = 5000000, c.wait_ns = static_cast<int64_t>(wait_ms * 1e6);
    return c;
  };
  const std::vector<AscendCollective> r0 = {op("a", 3), op("b", 2)},
                                      r1 = {op("a", 0.1), op("b", 0.2)},
                                      r2 = {op("a", 1), op("b", 4)};
  const auto link = [](int src, int dst, double ms) {
    AscendLink l;
    l.step = "step1", l.kind = "collective", l.op_type = "allreduce", l.group = "g";
    l.src = src, l.dst = dst, l.transport = "HCCS";
    l.bytes = 100000000, l.time_ns = static_cast<int64_t>(ms * 1e6);
    return l;
  };
  const std::vector<AscendLink> l0 = {link(0, 1, 5), link(0, 2, 5), link(0, 0, 1)},
                                l1 = {link(1, 2, 10), link(0, 1, 50)};  // 0-1 seen in rank 0's
  const AscendCommunicationCluster c =
      CompareAscendCommunication({{0, "r0", &r0, &l0}, {1, "r1", &r1, &l1}, {2, "r2", &r2, {}}});
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

TEST(AscendMemory, PeakLiveBlocksAndBadValues) {
  const std::string header =
      "Name,Size(KB),Allocation Time(us),Release Time(us),Allocation Total Allocated(MB),"
      "Allocation Total Reserved(MB)\n";
  auto ops = Source::FromBytes("operator_memory.csv",
                               header +
                                   "a,1024,1.0\t,5.0\t,1,2\n"    // 1 MiB, freed at 5 us
                                   "b,2048,2.0\t,,3,4\n"         // 2 MiB, never freed: peak
                                   "c,-512,3.0\t,4.0\t,2.5,4\n"  // allocated before the window
                                   "a,512,6.0\t,,2.5,4\n");      // after the peak
  const AscendMemory m = ReadAscendMemory(ops.get(), nullptr);
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

}  // namespace
}  // namespace opscope::analyze
