// Rank summaries (stage 1) and their merge (stage 2) on models whose answers
// are known by construction.
#include "analyze/scaleout/summary.h"

#include <gtest/gtest.h>

#include "analyze/importers/chrome_json/chrome_json_importer.h"
#include "analyze/model_builder.h"
#include "analyze/pipeline.h"
#include "analyze/scaleout/merge.h"
#include "analyze/source.h"
#include "opscope/opscope.h"

namespace opscope::analyze {
namespace {

using model_builder::Builder;

// One rank: two steps of 100 us with a matmul kernel and an all-reduce each;
// the all-reduce lasts `comm_us[i]` (its arrival decides the rest).
TraceModel Rank(int rank, std::vector<int64_t> comm_us) {
  Builder b;
  b.model.metadata["distributedInfo"] = "{\"rank\": " + std::to_string(rank) + "}";
  for (int s = 0; s < 2; ++s) {
    const int64_t t = 1000 + s * 100;
    b.Add(EventClass::kStep, "ProfilerStep#" + std::to_string(7 + s), t, t + 100);
    b.Add(EventClass::kHostOp, "aten::mm", t + 1, t + 10);
    b.Add(EventClass::kKernel, "sgemm_128x64", t + 10, t + 40);
    b.Add(EventClass::kCommunication, "ncclKernel_AllReduce_RING_LL_Sum_float", t + 90 - comm_us[s],
          t + 90);
  }
  return std::move(b.model);
}

RankTraceSummary Summary(int rank, std::vector<int64_t> comm_us) {
  const TraceModel m = Rank(rank, comm_us);
  return SummarizeTrace(m, AnalyzeTrace(m, {.threads = 1}), -1, "rank" + std::to_string(rank));
}

TEST(CollectiveOp, NamesTheCollective) {
  EXPECT_EQ(CollectiveOp("ncclKernel_AllReduce_RING_LL_Sum_float"), "allreduce");
  EXPECT_EQ(CollectiveOp("ncclDevKernel_ReduceScatter_Sum_bf16_RING_LL"), "reducescatter");
  EXPECT_EQ(CollectiveOp("ncclKernel_SendRecv_RING_SIMPLE_Sum_int8_t(ncclDevComm*, unsigned long)"),
            "sendrecv");
  EXPECT_EQ(CollectiveOp("hcom_allGather__123_0_1"), "allgather");
  EXPECT_EQ(CollectiveOp("_allgather_base"), "allgather");
  EXPECT_EQ(CollectiveOp("all_to_all"), "alltoall");
  EXPECT_EQ(CollectiveOp("Notify_Wait"), "");
  EXPECT_EQ(CollectiveOp("sgemm_128x64"), "");
}

TEST(RankSummary, HoldsStepsOperatorsAndCalls) {
  const RankTraceSummary s = Summary(3, {20, 30});
  EXPECT_EQ(s.rank, 3);  // from distributedInfo
  ASSERT_EQ(s.steps.size(), 2u);
  EXPECT_EQ(s.steps[0].number, 7);
  EXPECT_EQ(s.steps[1].number, 8);
  ASSERT_EQ(s.collectives.size(), 2u);
  EXPECT_EQ(s.ops.at(s.collectives[0].op), "allreduce");
  EXPECT_EQ(s.collectives[0].seq, 0);
  EXPECT_EQ(s.collectives[1].seq, 1);
  EXPECT_EQ(s.collectives[0].duration_ns, 20'000);
  EXPECT_EQ(s.collectives[1].duration_ns, 30'000);
  EXPECT_FALSE(s.seq_from_trace);
  bool found = false;
  for (const SummaryOperator& o : s.operators) {
    if (o.name != "sgemm_128x64") continue;
    found = true;
    EXPECT_EQ(o.count, 2);
    EXPECT_EQ(o.total_ns, 60'000);
    EXPECT_EQ(o.durations.Quantile(0.5), 30'000);
  }
  EXPECT_TRUE(found);
}

TEST(RankSummary, RoundTripsThroughItsDocument) {
  const RankTraceSummary s = Summary(1, {20, 30});
  const std::string doc = SerializeSummary(s);
  const RankTraceSummary back = ParseSummary(doc, "x");
  EXPECT_EQ(SerializeSummary(back), doc);
}

TEST(RankSummary, BadDocumentsNameTheField) {
  const std::string doc = SerializeSummary(Summary(1, {20, 30}));
  const auto error_of = [](const std::string& text) {
    try {
      ParseSummary(text, "f.summary");
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), ErrorCode::kInvalidInput);
      return std::string(e.what());
    }
    return std::string("no error");
  };
  const auto replaced = [&](const std::string& from, const std::string& to) {
    std::string t = doc;
    const auto at = t.find(from);
    EXPECT_NE(at, std::string::npos) << from;
    return t.replace(at, from.size(), to);
  };
  EXPECT_NE(error_of(doc.substr(0, doc.size() / 2)).find("f.summary: not a JSON document"),
            std::string::npos);
  EXPECT_NE(error_of("{\"kind\":\"other\"}").find("not an opscope rank summary"),
            std::string::npos);
  EXPECT_NE(error_of(replaced("\"version\":1", "\"version\":99")).find("summary version 99"),
            std::string::npos);
  EXPECT_NE(
      error_of(replaced("\"rank\":1", "\"rank\":\"1\"")).find("field \"rank\": not an integer"),
      std::string::npos);
  EXPECT_NE(error_of(replaced("\"collectives\":[[0,0,", "\"collectives\":[[5,0,"))
                .find("collectives[0]\": group index out of range"),
            std::string::npos);
  EXPECT_NE(
      error_of(replaced("\"steps\":[[7,", "\"steps\":[[7,1,")).find("steps[0]\": has 10 columns"),
      std::string::npos);
}

// Kineto's collective arguments as PyTorch writes them (torch/csrc/profiler/
// util.h: "Collective name", "Process Group Name", "Seq", "In msg nelems",
// "dtype"): on the kernel itself, or on the record_param_comms op that
// launched it (the same External id).
TEST(RankSummary, TakesPyTorchsCollectiveArguments) {
  const std::string trace = R"({"traceEvents": [
    {"ph": "X", "cat": "kernel", "name": "ncclDevKernel_AllGather_RING_LL", "pid": 0, "tid": 7,
     "ts": 100, "dur": 50, "args": {"External id": 1, "Collective name": "_allgather_base",
     "Process Group Name": "3", "Seq": 41, "In msg nelems": 1024, "Out msg nelems": 8192,
     "Group size": 8, "dtype": "BFloat16"}},
    {"ph": "X", "cat": "cpu_op", "name": "record_param_comms", "pid": 9, "tid": 9, "ts": 190,
     "dur": 5, "args": {"External id": 2, "Collective name": "allreduce",
     "Process Group Name": "0", "Seq": 7, "In msg nelems": 100, "Out msg nelems": 100,
     "dtype": "Float"}},
    {"ph": "X", "cat": "kernel", "name": "ncclDevKernel_AllReduce_Sum_f32_RING_LL", "pid": 0,
     "tid": 7, "ts": 200, "dur": 30, "args": {"External id": 2}}]})";
  TraceModel m;
  const auto source = Source::FromBytes("t.json", trace);
  ImportChromeJson(*source, m, {.threads = 1});
  ASSERT_EQ(m.collective_args.size(), 2u);
  const RankTraceSummary s = SummarizeTrace(m, AnalyzeTrace(m, {.threads = 1}), 5, "t.json");
  ASSERT_EQ(s.collectives.size(), 2u);
  EXPECT_TRUE(s.seq_from_trace);
  EXPECT_EQ(s.groups.at(s.collectives[0].group), "3");
  EXPECT_EQ(s.collectives[0].seq, 41);
  EXPECT_EQ(s.ops.at(s.collectives[0].op), "allgather");
  EXPECT_EQ(s.collectives[0].bytes, 8192 * 2);  // the larger side, bf16
  EXPECT_EQ(s.groups.at(s.collectives[1].group), "0");
  EXPECT_EQ(s.collectives[1].seq, 7);
  EXPECT_EQ(s.ops.at(s.collectives[1].op), "allreduce");
  EXPECT_EQ(s.collectives[1].bytes, 100 * 4);  // dtype beside the arguments, on the host op
  EXPECT_EQ(s.collectives[1].duration_ns, 30'000);
}

TEST(SummaryMerger, FindsTheRankThatArrivesLast) {
  // Four ranks, six calls in three traces of two steps... here: two calls per
  // rank; rank 2 arrives late at both (its calls are the shortest).
  SummaryMerger m;
  m.Add(Summary(0, {50, 60}));
  m.Add(Summary(1, {48, 61}));
  m.Add(Summary(2, {10, 12}));
  m.Add(Summary(3, {49, 59}));
  const ScaleOutResult r = m.Finish();
  ASSERT_EQ(r.collectives.size(), 2u);
  EXPECT_EQ(r.collectives[0].last_rank, 2);
  EXPECT_EQ(r.collectives[0].min_ns, 10'000);
  EXPECT_EQ(r.collectives[0].wait_ns, (40 + 38 + 39) * 1000);
  EXPECT_EQ(r.collectives[1].wait_ns, (48 + 49 + 47) * 1000);
  ASSERT_EQ(r.ranks.size(), 4u);
  EXPECT_EQ(r.ranks[2].wait_ns, 0);
  EXPECT_EQ(r.ranks[0].wait_ns, (40 + 48) * 1000);
  // Late to both calls: 38 and 47 us after the rank before it.
  EXPECT_EQ(r.collectives[0].gap_ns, 38'000);
  EXPECT_EQ(r.ranks[2].last_arrivals, 2);
  EXPECT_EQ(r.ranks[2].caused_wait_ns, 3 * (38 + 47) * 1000);
  // Two calls are too few to call it a straggler (at least three).
  EXPECT_TRUE(r.stragglers.empty());
  // Merged operators: counts over all ranks.
  for (const MergedOperator& o : r.operators) {
    if (o.name == "sgemm_128x64") {
      EXPECT_EQ(o.count, 8);
    }
  }
}

TEST(SummaryMerger, SameResultInAnyOrderAndRefusesARankTwice) {
  const auto result_of = [](std::vector<int> order) {
    SummaryMerger m;
    for (const int r : order) m.Add(Summary(r, {20 + r, 30 - r}));
    const ScaleOutResult out = m.Finish();
    std::string key;
    for (const auto& c : out.collectives)
      key += std::to_string(c.wait_ns) + "/" + std::to_string(c.last_rank) + ",";
    for (const auto& r : out.ranks) key += std::to_string(r.wait_ns) + ";";
    return key;
  };
  EXPECT_EQ(result_of({0, 1, 2, 3}), result_of({3, 1, 0, 2}));
  SummaryMerger m;
  m.Add(Summary(1, {20, 30}));
  EXPECT_THROW(m.Add(Summary(1, {20, 30})), Error);
}

}  // namespace
}  // namespace opscope::analyze
