// Ascend side files read beside a rank's timeline: the AI Core pipeline.
#include <gtest/gtest.h>

#include <string>

#include "analyze/advisor.h"
#include "analyze/importers/ascend/ai_core.h"
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

}  // namespace
}  // namespace opscope::analyze
