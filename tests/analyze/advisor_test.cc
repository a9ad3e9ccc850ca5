// The advisor's rules on analyses of synthetic traces.
#include "analyze/advisor.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <optional>
#include <random>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "analyze/model_builder.h"
#include "analyze/names.h"
#include "analyze/passes/attribution.h"
#include "analyze/passes/pass.h"
#include "analyze/pipeline.h"
#include "analyze/reported.h"

namespace opscope::analyze {
namespace {

using model_builder::Builder;

std::vector<std::string> Ids(const std::vector<Finding>& findings) {
  std::vector<std::string> ids;
  for (const auto& f : findings) ids.push_back(f.id);
  return ids;
}

TEST(Advisor, EveryRuleIsRegisteredOnceAndReadsRegisteredPasses) {
  std::set<std::string_view> passes, ids;
  for (const Pass& p : Passes()) passes.insert(p.name);
  for (const Rule& rule : Rules()) {
    EXPECT_TRUE(ids.insert(rule.id).second) << "two rules make " << rule.id;
    for (const std::string_view need : rule.needs) {
      EXPECT_TRUE(passes.count(need)) << rule.id << " reads '" << need << "', no such pass";
    }
    EXPECT_FALSE(rule.when(Thresholds{}).empty()) << rule.id;
    EXPECT_NE(rule.apply, nullptr) << rule.id;
  }
}

TEST(Advisor, ARuleWhosePassesDidNotRunIsNotApplied) {
  // An idle device: low_device_utilization fires when device_busy ran (and
  // the attribution, whose diagnosis supersedes it, did not), and not when
  // only op_stats did (its input would be empty, not healthy).
  Builder b;
  b.Add(EventClass::kKernel, "k", 0, 10).Add(EventClass::kKernel, "k", 1000, 1010);
  const auto busy = Ids(Advise(AnalyzeTrace(b.model, {.passes = {"device_busy"}})));
  EXPECT_NE(std::find(busy.begin(), busy.end(), "low_device_utilization"), busy.end());
  const auto some = Ids(Advise(AnalyzeTrace(b.model, {.passes = {"op_stats"}})));
  EXPECT_EQ(std::find(some.begin(), some.end(), "low_device_utilization"), some.end());
  // With every pass the step-time diagnosis accounts for the idle time (98%
  // of the span has nothing in it), and the busy-share rule stays silent.
  const auto all = Ids(Advise(AnalyzeTrace(b.model)));
  EXPECT_EQ(std::find(all.begin(), all.end(), "low_device_utilization"), all.end());
  ASSERT_FALSE(all.empty());
  EXPECT_EQ(all[0], "step_untraced");
}

TEST(Advisor, RulesFireOnTheirEvidenceAndOnlyThen) {
  // A busy device with nothing wrong: only the diagnosis, which says the
  // device sets the pace and which kernels a speed-up would have to come from.
  Builder healthy;
  for (int i = 0; i < 10; ++i) healthy.Add(EventClass::kKernel, "hgemm", i * 100, i * 100 + 99);
  const auto fine = Advise(AnalyzeTrace(healthy.model));
  ASSERT_EQ(fine.size(), 1u);
  EXPECT_EQ(fine[0].id, "step_compute");
  EXPECT_NE(fine[0].title.find("device-bound; GEMM kernels"), std::string::npos) << fine[0].title;
  EXPECT_EQ(fine[0].saving_ns, 990 * 1000 / 2);  // half the GEMM time (the builder takes us)

  // Idle device waiting on syncs, TransData, AI CPU tasks and slow pageable copies.
  Builder b;
  b.Kind("AI_CORE").Add(EventClass::kKernel, "TransData", 0, 400);
  b.Kind("AI_CPU").Add(EventClass::kKernel, "Cast", 400, 600);
  // A 1 ms copy at 2 GB/s (copies under 1 ms in all are not judged).
  b.Kind("").Add(EventClass::kMemcpy, "Memcpy HtoD (Pageable -> Device)", 600, 1600, 2000000);
  b.Copy(CopyDirection::kHostToDevice, HostMemory::kPageable);
  b.Add(EventClass::kKernel, "MatMul", 5000, 5020);
  b.Add(EventClass::kSync, "aclrtSynchronizeStream", 1600, 4990);
  const auto findings = Advise(AnalyzeTrace(b.model));
  const auto ids = Ids(findings);
  for (const char* id :
       {"step_host_blocked", "layout_conversions", "cpu_fallback", "transfers_HtoD"}) {
    EXPECT_NE(std::find(ids.begin(), ids.end(), id), ids.end()) << id;
  }
  // First: the host blocked while the device idles, 3,390 of 5,020 us, all of
  // which removing the wait could save.
  EXPECT_EQ(findings[0].id, "step_host_blocked");
  EXPECT_EQ(findings[0].severity, Severity::kCritical);
  EXPECT_EQ(findings[0].saving_ns, 3390 * 1000);
  EXPECT_NE(findings[0].evidence.find("aclrtSynchronizeStream"), std::string::npos)
      << findings[0].evidence;
  const auto copies = std::find_if(findings.begin(), findings.end(),
                                   [](const Finding& f) { return f.id == "transfers_HtoD"; });
  ASSERT_NE(copies, findings.end());
  // No PyTorch operator in this trace: pinning in the runtime's own terms.
  EXPECT_EQ(copies->action.find("pin_memory"), std::string::npos) << copies->action;
  EXPECT_NE(copies->action.find("aclrtMallocHost"), std::string::npos) << copies->action;
  // The same trace from a PyTorch program (an aten:: operator issues the
  // copy): PyTorch's levers.
  Builder torch;
  torch.Add(EventClass::kKernel, "MatMul", 0, 20);  // the copy is no one-off upload
  torch.Add(EventClass::kHostOp, "aten::copy_", 590, 1610);
  torch.Add(EventClass::kMemcpy, "Memcpy HtoD (Pageable -> Device)", 600, 1600, 2000000);
  torch.Copy(CopyDirection::kHostToDevice, HostMemory::kPageable);
  torch.Add(EventClass::kKernel, "MatMul", 1600, 1620);
  const auto torch_findings = Advise(AnalyzeTrace(torch.model));
  const auto pinned = std::find_if(torch_findings.begin(), torch_findings.end(),
                                   [](const Finding& f) { return f.id == "transfers_HtoD"; });
  ASSERT_NE(pinned, torch_findings.end());
  EXPECT_NE(pinned->action.find("pin_memory=True"), std::string::npos) << pinned->action;
  EXPECT_NE(pinned->action.find("non_blocking=True"), std::string::npos) << pinned->action;

  // The thresholds decide: raise them and the findings go.
  Thresholds lenient;
  lenient.busy_warning_pct = 1, lenient.layout_device_pct = 90, lenient.layout_host_pct = 90;
  lenient.ai_cpu_pct = 90, lenient.transfer_device_pct = 90, lenient.dominant_op_pct = 101;
  // The diagnosis stays: it always names what decided the window.
  EXPECT_EQ(Ids(Advise(AnalyzeTrace(b.model), lenient)),
            std::vector<std::string>{"step_host_blocked"});
}

const Finding* Find(const std::vector<Finding>& findings, std::string_view id) {
  for (const auto& f : findings) {
    if (f.id == id) return &f;
  }
  return nullptr;
}

// unclassified_events: fires on an event of a category opscope does not
// understand, naming the category and its count, and stays silent on the
// same trace where every event has a known class.
TEST(Advisor, UnclassifiedEventsAreNamedAndOnlyThen) {
  Builder b;
  for (int i = 0; i < 10; ++i) b.Add(EventClass::kKernel, "hgemm", i * 100, i * 100 + 99);
  EXPECT_EQ(Find(Advise(AnalyzeTrace(b.model)), "unclassified_events"), nullptr);
  b.Add(EventClass::kOther, "mystery", 200, 210).Add(EventClass::kOther, "mystery", 300, 310);
  b.model.category[b.model.size() - 1] = b.model.category[b.model.size() - 2] =
      b.model.Intern("mtia_new_thing");
  const auto findings = Advise(AnalyzeTrace(b.model));
  const Finding* f = Find(findings, "unclassified_events");
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(f->severity, Severity::kInfo);
  EXPECT_NE(f->title.find("2 events"), std::string::npos) << f->title;
  EXPECT_NE(f->evidence.find("'mtia_new_thing' 2"), std::string::npos) << f->evidence;
}

// The dominant-operator rule judges the device's time only where it is a
// real part of the diagnosed window (issue 36, class 11: a fixture of a few
// kernels in seconds of nothing recorded).
TEST(Advisor, ADominantOperatorNeedsTheDeviceToMatter) {
  const auto fires = [](int64_t span_us) {
    Builder b;
    b.Add(EventClass::kKernel, "big_kernel", 0, 3000).Add(EventClass::kKernel, "small", 3000, 4000);
    b.Add(EventClass::kKernel, "small", span_us - 10, span_us);
    const auto ids = Ids(Advise(AnalyzeTrace(b.model)));
    return std::find(ids.begin(), ids.end(), "dominant_operator") != ids.end();
  };
  EXPECT_TRUE(fires(5000));     // 4 ms of device time in 5 ms
  EXPECT_FALSE(fires(100000));  // the same in 100 ms: under a tenth
}

// A synchronisation's long waits are said as a warning only where the host
// blocked with the device idle takes a real part of the window; where the
// device works through them (a collective, compute) removing the waits would
// not shorten the step (issue 36, class 2).
TEST(Advisor, LongSynchronisationsThatWaitOnBusyDeviceAreInfo) {
  const auto findings = [](bool device_busy, const char* region,
                           EventClass busy_with = EventClass::kKernel) {
    Builder b;
    // Optionally the whole run inside a region the attribution gives its own
    // state (compilation): the waits' idle device is then not its blocked
    // state, and the rule must not read that as a device at work.
    if (region != nullptr) b.Add(EventClass::kPython, region, 0, 2300);
    // .item(): the operator, and inside it the runtime's synchronisation.
    const auto item = [&](int64_t begin, int64_t end) {
      b.Add(EventClass::kHostOp, "aten::_local_scalar_dense", begin, end);
      b.Add(EventClass::kRuntime, "cudaStreamSynchronize", begin, end);
    };
    for (int i = 0; i < 12; ++i) item(i * 10, i * 10 + 1);
    item(200, 2200);
    b.Add(EventClass::kKernel, "gemm", 0, 150);
    if (device_busy) b.Add(busy_with, "ncclKernel_AllReduce", 190, 2200);
    b.Add(EventClass::kKernel, "gemm", 2200, 2300);
    return Advise(AnalyzeTrace(b.model));
  };
  // The device works through the long wait: information, the device's work.
  const auto busy = findings(true, nullptr);
  const Finding* info = Find(busy, "synchronizations");
  ASSERT_NE(info, nullptr);
  EXPECT_EQ(info->severity, Severity::kInfo);
  EXPECT_NE(info->evidence.find("during the long waits the device is working"), std::string::npos);
  EXPECT_NE(info->action.find("the device's own work"), std::string::npos);
  EXPECT_EQ(info->evidence.find("in collectives"), std::string::npos);
  // The same wait on a collective (most of the device's work during the
  // waits): the waits are for the other ranks, not for this device's work.
  const auto collective = findings(true, nullptr, EventClass::kCommunication);
  const Finding* comm = Find(collective, "synchronizations");
  ASSERT_NE(comm, nullptr);
  EXPECT_EQ(comm->severity, Severity::kInfo);
  // The waits are 200..2200 us and twelve calls of 1 us from 0 to 111 us:
  // the collective (190..2200) covers 2.000 ms of them, the gemm (0..150)
  // the twelve short calls, 0.012 ms.
  EXPECT_NE(comm->evidence.find(", 2.000 of its 2.012 ms in collectives"), std::string::npos)
      << comm->evidence;
  EXPECT_NE(comm->action.find("waiting for the other ranks"), std::string::npos);
  EXPECT_EQ(comm->action.find("the device's own work"), std::string::npos);
  // The device idles through it: host_waits' finding says what the wait
  // costs, and the long-tail rule does not say it again.
  const auto idle = findings(false, nullptr);
  ASSERT_NE(Find(idle, "host_blocked_synchronization"), nullptr);
  EXPECT_EQ(Find(idle, "synchronizations"), nullptr);
  // Inside compilation the attribution gives the wait to the region (its
  // blocked state is none of it) and the critical path bounds what removing
  // it saves: host_waits is silent, and the long-tail rule, measuring the
  // calls themselves, warns without saying the device works through them.
  const auto compiling = findings(false, "torch/_inductor/compile_fx.py(1000): compile_fx");
  const Finding* tail = Find(compiling, "synchronizations");
  ASSERT_NE(tail, nullptr);
  EXPECT_EQ(tail->severity, Severity::kWarning);
  // It says what it measured: the calls' union (12 us and 2 ms) with the
  // device idle through them, and PyTorch's levers (the trace has aten::).
  EXPECT_NE(tail->evidence.find("the host is blocked in these calls with the device idle 2.000 ms"),
            std::string::npos)
      << tail->evidence;
  EXPECT_NE(tail->action.find(".item()"), std::string::npos);
  for (const auto* all : {&idle, &compiling}) {
    for (const Finding& f : *all) {
      EXPECT_EQ(f.evidence.find("the device is working"), std::string::npos) << f.id;
    }
  }
}

// Exposed communication that is mostly a task waiting for another rank's
// signal (HCCL's Notify Wait) is said to be waiting on peers, with the time
// (issue 36: the expert's "waiting, not transferring"); without such tasks
// the diagnosis says only that communication is exposed.
TEST(Advisor, CommunicationMostlyWaitingOnPeersIsSaidSo) {
  const auto title = [](bool waits) {
    Builder b;
    b.Add(EventClass::kStep, "ProfilerStep#1", 0, 1100);
    b.Add(EventClass::kKernel, "MatMul", 0, 100);
    b.Add(EventClass::kCommunication, "hcom_allReduce__1_0_1", 100, 1100);
    b.Add(EventClass::kCommunication, waits ? "Notify_Wait" : "Memcpy", 110, 900);
    b.Add(EventClass::kCommunication, "Memcpy", 900, 1100);
    const auto findings = Advise(AnalyzeTrace(b.model));
    EXPECT_FALSE(findings.empty());
    return findings.empty() ? std::string() : findings[0].title;
  };
  const std::string with = title(true), without = title(false);
  EXPECT_NE(with.find("most of it waiting for other ranks (0.790 of 1.000 ms"), std::string::npos)
      << with;
  EXPECT_EQ(without.find("waiting for other ranks"), std::string::npos) << without;
  EXPECT_NE(without.find("in communication that compute does not overlap"), std::string::npos)
      << without;
}

// Exposed communication has one account (issue 36, classes 1 and 4): where
// the step-time diagnosis names the device waiting, neither the steps'
// communication rule nor the producer's breakdown makes a finding of its
// own; the diagnosis gives the overlapped part and the breakdown's figure,
// and advises overlap only where compute could hide it and the collectives
// do not mostly wait for a peer. Where the diagnosis is another state, the
// two rules fire with the advice that fits.
TEST(Advisor, ExposedCommunicationHasOneAccount) {
  struct Case {
    int64_t compute_us;  // compute, then communication to 3000 us
    bool peer_wait;      // the collective's middle waits for a peer's signal
  };
  const auto advise = [](Case c) {
    Builder b;
    b.Add(EventClass::kStep, "ProfilerStep#1", 0, 3000);
    b.Add(EventClass::kKernel, "MatMul", 0, c.compute_us);
    b.Add(EventClass::kCommunication, "hcom_allReduce__1_0_1", c.compute_us - 100, 3000);
    b.Add(EventClass::kCommunication, c.peer_wait ? "Notify_Wait" : "Memcpy", c.compute_us, 2900);
    const Analysis analysis = AnalyzeTrace(b.model);
    ReportedTables reported;  // the producer's breakdown of the same step, in ns
    ReportedStep step;
    step.computing_ns = c.compute_us * 1000;
    step.communication_ns = (3100 - c.compute_us) * 1000;
    step.overlapped_ns = 100000;
    step.comm_not_overlapped_ns = (3000 - c.compute_us) * 1000;
    step.free_ns = 0;
    reported.steps.push_back(step);
    const Thresholds thresholds;
    return Advise(RuleContext{analysis, thresholds, &reported});
  };
  for (const bool peer_wait : {false, true}) {
    // 500 us of compute, 2500 exposed: the device waits.
    const auto waiting = advise({500, peer_wait});
    ASSERT_FALSE(waiting.empty());
    EXPECT_EQ(waiting[0].id, "step_device_waiting") << waiting[0].title;
    EXPECT_EQ(Find(waiting, "communication"), nullptr);
    EXPECT_EQ(Find(waiting, "exposed_communication"), nullptr);
    EXPECT_NE(waiting[0].evidence.find("Communication overlapped by compute, not counted: 0.100 "
                                       "ms; compute outside it 0.400 ms."),
              std::string::npos)
        << waiting[0].evidence;
    EXPECT_NE(waiting[0].evidence.find("communication not overlapped 2.500 ms of 3.000 ms"),
              std::string::npos)
        << waiting[0].evidence;
    EXPECT_EQ(waiting[0].action.find("Overlap"), std::string::npos) << waiting[0].action;
    EXPECT_EQ(waiting[0].action.find("wait for another rank") != std::string::npos, peer_wait)
        << waiting[0].action;
  }
  // 2000 us of compute, 1000 exposed (33%): compute leads; both rules fire
  // and advise overlap, 1900 us of compute being free to hide the 1000.
  const auto computing = advise({2000, false});
  EXPECT_NE(Find(computing, "step_compute"), nullptr);
  EXPECT_EQ(Find(computing, "step_device_waiting"), nullptr);
  const Finding* steps = Find(computing, "communication");
  const Finding* breakdown = Find(computing, "exposed_communication");
  ASSERT_NE(steps, nullptr);
  ASSERT_NE(breakdown, nullptr);
  EXPECT_NE(steps->title.find("33.3%"), std::string::npos) << steps->title;
  EXPECT_NE(breakdown->title.find("33.3%"), std::string::npos) << breakdown->title;
  EXPECT_EQ(steps->action.rfind("Overlap", 0), 0U) << steps->action;
  EXPECT_EQ(breakdown->action.rfind("Overlap", 0), 0U) << breakdown->action;
}

// A transfer-bound step's advice follows the copies' host memory (issue 36,
// class 5): pinning where many are pageable, never where they are pinned.
TEST(Advisor, TransferBoundAdviceFollowsTheCopiesMemory) {
  const auto action = [](HostMemory memory) {
    Builder b;
    b.Add(EventClass::kStep, "ProfilerStep#1", 0, 1000);
    b.Add(EventClass::kKernel, "gemm", 0, 100);
    for (int i = 0; i < 4; ++i) {
      b.Add(EventClass::kMemcpy, "Memcpy HtoD", 100 + 200 * i, 300 + 200 * i, 1 << 20)
          .Copy(CopyDirection::kHostToDevice, memory);
    }
    const auto findings = Advise(AnalyzeTrace(b.model));
    EXPECT_FALSE(findings.empty());
    EXPECT_EQ(findings.empty() ? "" : findings[0].id, "step_memory");
    return findings.empty() ? std::string() : findings[0].action;
  };
  const std::string pageable = action(HostMemory::kPageable);
  EXPECT_NE(pageable.find("from pinned memory: 4 of 4 host copies are from or to pageable"),
            std::string::npos)
      << pageable;
  const std::string pinned = action(HostMemory::kPinned);
  EXPECT_NE(pinned.find("4 of 4 host copies already use pinned memory"), std::string::npos)
      << pinned;
  EXPECT_EQ(pinned.find("from pinned memory"), std::string::npos) << pinned;
}

// One-off first calls are said to be one-off (issue 36, class 5), and only
// where they hold: 1 ms or more, 10x the later calls' median, in the window.
TEST(Advisor, SlowFirstCallsAreOneOff) {
  const auto fires = [](int64_t first_us, int64_t later_us, bool in_warmup_step) {
    Builder b;
    if (in_warmup_step) {  // a warm-up step holds the first call; three steady ones follow
      b.Add(EventClass::kStep, "ProfilerStep#0", 0, 20000);
      for (int s = 1; s <= 3; ++s) {
        b.Add(EventClass::kStep, "ProfilerStep#" + std::to_string(s), 20000 + 2000 * (s - 1),
              20000 + 2000 * s);
      }
    }
    b.Add(EventClass::kHostOp, "aten::mm", 100, 100 + first_us);
    for (int i = 0; i < 3; ++i) {
      b.Add(EventClass::kHostOp, "aten::mm", 20000 + 2000 * i, 20000 + 2000 * i + later_us);
      b.Add(EventClass::kKernel, "gemm", 20000 + 2000 * i, 20000 + 2000 * i + 1500);
    }
    const auto findings = Advise(AnalyzeTrace(b.model));
    return Find(findings, "first_calls") != nullptr;
  };
  EXPECT_TRUE(fires(5000, 100, false));
  EXPECT_FALSE(fires(900, 50, false));    // under 1 ms
  EXPECT_FALSE(fires(5000, 600, false));  // 8x the later calls, not 10x
  EXPECT_FALSE(fires(15000, 100, true));  // in a warm-up step, outside the complete steps
}

// The part of the window nothing explains is said beside the diagnosis
// (issue 36): info from 10%, a warning from 25%, and not where the
// diagnosis is itself that the trace cannot say.
TEST(Advisor, TheUntracedPartIsSaidBesideTheDiagnosis) {
  const auto finding = [](int64_t busy_us) {
    Builder b;
    b.Add(EventClass::kStep, "ProfilerStep#1", 0, 1000);
    b.Add(EventClass::kKernel, "gemm", 0, busy_us);
    const auto findings = Advise(AnalyzeTrace(b.model));
    const Finding* f = Find(findings, "untraced_part");
    return f == nullptr ? std::optional<Finding>() : *f;
  };
  const auto warning = finding(700);  // 30% inside the step with nothing below it
  ASSERT_TRUE(warning.has_value());
  EXPECT_EQ(warning->severity, Severity::kWarning);
  EXPECT_NE(warning->title.find("explains 30.0% of the 1 complete step"), std::string::npos)
      << warning->title;
  const auto info = finding(850);
  ASSERT_TRUE(info.has_value());
  EXPECT_EQ(info->severity, Severity::kInfo);
  EXPECT_FALSE(finding(950).has_value());  // 5%
  EXPECT_FALSE(finding(300).has_value());  // 70%: the diagnosis is step_untraced
}

// Rules that measure a share of device time are judged by what their subject
// could cost the run (issue 36): on a device that mostly idles, TransData at a
// quarter of device time is a small part of the trace, not a critical finding.
TEST(Advisor, DeviceShareRulesAreJudgedByTheirShareOfTheRun) {
  const auto severity = [](int64_t idle_us) {
    Builder b;
    b.Kind("AI_CORE").Add(EventClass::kKernel, "TransData", 0, 250);
    b.Kind("AI_CPU").Add(EventClass::kKernel, "Cast", 250, 500);
    b.Kind("AI_CORE").Add(EventClass::kKernel, "MatMul", 500 + idle_us, 1000 + idle_us);
    const auto findings = Advise(AnalyzeTrace(b.model));
    const Finding* layout = Find(findings, "layout_conversions");
    const Finding* fallback = Find(findings, "cpu_fallback");
    EXPECT_NE(layout, nullptr);
    EXPECT_NE(fallback, nullptr);
    return std::pair{layout ? layout->severity : Severity::kInfo,
                     fallback ? fallback->severity : Severity::kInfo};
  };
  // A busy device: 25% of the run each.
  EXPECT_EQ(severity(0), std::pair(Severity::kCritical, Severity::kWarning));
  // The same device work in a run 20 times longer: 1.25% each, said as info.
  EXPECT_EQ(severity(19000), std::pair(Severity::kInfo, Severity::kInfo));
}

// On a trace without device work the conversions are judged by the CPU
// operators' time, the one measure there: no device share is quoted.
TEST(Advisor, LayoutConversionsOnTheCpuQuoteTheOperatorsTime) {
  Builder b;
  for (int s = 0; s < 3; ++s) {
    const int64_t t = 10'000 * s;
    b.Add(EventClass::kStep, "ProfilerStep#" + std::to_string(s), t, t + 10'000);
    b.Add(EventClass::kHostOp, "aten::contiguous", t, t + 3'000);
    b.Add(EventClass::kHostOp, "aten::addmm", t + 3'000, t + 9'000);
  }
  const auto findings = Advise(AnalyzeTrace(b.model));
  const Finding* layout = Find(findings, "layout_conversions");
  ASSERT_NE(layout, nullptr);
  EXPECT_EQ(layout->title, "Layout conversions take 33.3% of the CPU operators' time");
  EXPECT_EQ(layout->severity, Severity::kWarning);
  EXPECT_EQ(layout->evidence.find("device idles"), std::string::npos) << layout->evidence;
}

// Three 10 ms steps, each 5 ms of compute, then an optimizer step of 4 ms
// running 100 operators of 10 us (the first a multi-tensor kernel where
// `foreach`); the compute a CPU operator (device_us 0) or a kernel of
// device_us. Its fused_optimizer finding, if any.
std::optional<Finding> OptimizerLoopFinding(const std::string& optimizer, bool foreach,
                                            int64_t device_us) {
  Builder b;
  for (int s = 0; s < 3; ++s) {
    const int64_t t = 10'000 * s;
    b.Add(EventClass::kStep, "ProfilerStep#" + std::to_string(s), t, t + 10'000);
    if (device_us > 0) {
      b.Add(EventClass::kKernel, "sgemm", t, t + device_us);
    } else {
      b.Add(EventClass::kHostOp, "aten::addmm", t, t + 5'000);
    }
    b.Add(EventClass::kHostOp, "Optimizer.step#" + optimizer + ".step", t + 5'000, t + 9'000);
    for (int i = 0; i < 100; ++i) {
      const int64_t o = t + 5'100 + i * 30;
      b.Add(EventClass::kHostOp, foreach && i == 0 ? "aten::_foreach_add_" : "aten::add_", o,
            o + 10);
    }
  }
  const auto findings = Advise(AnalyzeTrace(b.model));
  const Finding* f = Find(findings, "fused_optimizer");
  return f == nullptr ? std::optional<Finding>() : *f;
}

// A PyTorch optimizer whose steps run a few small operators per parameter
// (foreach off) is told to use multi-tensor kernels, saving at most its
// steps' time outside operators of 20 us or more; with a multi-tensor
// kernel among them it is silent.
TEST(Advisor, AnOptimizerThatLoopsOverItsParametersIsToldForeach) {
  const auto loop = OptimizerLoopFinding("Adam", false, 0);
  ASSERT_TRUE(loop.has_value());
  EXPECT_EQ(loop->severity, Severity::kWarning);
  // 3 steps of 4 ms, none of their operators 20 us or more: 12 ms of 30 ms.
  EXPECT_NE(loop->title.find("its steps take 40.0% of the window (12.000 ms), 40.0% in "
                             "dispatching 100 operators a step"),
            std::string::npos)
      << loop->title;
  EXPECT_NE(loop->action.find("foreach=True"), std::string::npos) << loop->action;
  EXPECT_EQ(loop->saving_ns, 12'000'000);
  EXPECT_FALSE(OptimizerLoopFinding("Adam", true, 0).has_value());
}

// On a device trace the optimizer's dispatch costs the step only where the
// device idles: busy through the optimizer's steps, nothing to say; idle
// through them, said so.
TEST(Advisor, AnOptimizersDispatchCountsWhereTheDeviceIdles) {
  EXPECT_FALSE(OptimizerLoopFinding("SGD", false, 9'500).has_value());
  const auto idle = OptimizerLoopFinding("SGD", false, 5'000);
  ASSERT_TRUE(idle.has_value());
  EXPECT_NE(idle->title.find("40.0% in dispatching 100 operators a step with the device idle"),
            std::string::npos)
      << idle->title;
}

// A CPU step led by copies (a big tensor made contiguous and cast each
// step) is told to copy less, not to fuse or compile; its dominant operator
// too.
TEST(Advisor, ACpuStepLedByCopiesIsToldToCopyLess) {
  Builder b;
  for (int s = 0; s < 3; ++s) {
    const int64_t t = 10'000 * s;
    b.Add(EventClass::kStep, "ProfilerStep#" + std::to_string(s), t, t + 10'000);
    b.Add(EventClass::kHostOp, "aten::copy_", t, t + 7'000);
    b.Add(EventClass::kHostOp, "aten::addmm", t + 7'000, t + 9'500);
  }
  const auto findings = Advise(AnalyzeTrace(b.model));
  ASSERT_FALSE(findings.empty());
  EXPECT_EQ(findings[0].id, "step_compute");
  EXPECT_EQ(findings[0].action.rfind("Copy less", 0), 0u) << findings[0].action;
  const Finding* dominant = Find(findings, "dominant_operator");
  ASSERT_NE(dominant, nullptr);
  EXPECT_EQ(dominant->action.rfind("It copies data", 0), 0u) << dominant->action;
}

// Copies that cannot be the steps' problem are not judged (issue 36): a
// one-off upload before the device first computes (weights), and copies of
// under 1 ms in all.
TEST(Advisor, OneOffUploadsAndTinyCopiesAreNoTransferFinding) {
  const auto transfers = [](int64_t later_copy_us) {
    Builder b;
    b.Add(EventClass::kMemcpy, "Memcpy HtoD (Pageable -> Device)", 0, 3000, 6000000)
        .Copy(CopyDirection::kHostToDevice, HostMemory::kPageable);
    b.Add(EventClass::kKernel, "gemm", 3000, 4000);
    b.Add(EventClass::kMemcpy, "Memcpy HtoD (Pageable -> Device)", 4000, 4000 + later_copy_us,
          later_copy_us * 2000)
        .Copy(CopyDirection::kHostToDevice, HostMemory::kPageable);
    const auto findings = Advise(AnalyzeTrace(b.model));
    return std::find_if(findings.begin(), findings.end(),
                        [](const Finding& f) { return f.id == "transfers_HtoD"; }) == findings.end()
               ? std::optional<Finding>()
               : *std::find_if(findings.begin(), findings.end(),
                               [](const Finding& f) { return f.id == "transfers_HtoD"; });
  };
  EXPECT_FALSE(transfers(100).has_value());  // 3 ms upload first, then 0.1 ms: nothing to judge
  const auto steady = transfers(2000);       // a 2 ms copy after the device computed
  ASSERT_TRUE(steady.has_value());
  EXPECT_NE(steady->evidence.find("1 before the device first computed, 3.000 ms"),
            std::string::npos)
      << steady->evidence;
  // 2 of the 6 ms of device time.
  EXPECT_NE(steady->title.find("33.3%"), std::string::npos) << steady->title;
}

// A Python thread that waits (a progress bar's monitor thread asleep in
// threading.py's wait for the whole step) explains none of the device's idle
// time: the main thread's operators do where they run, and the rest is
// untraced, not framework overhead (TraceLens's H100 Falconsai trace named
// tqdm's "threading.py(359): wait" its largest framework cost).
TEST(Advisor, APythonThreadThatWaitsExplainsNothing) {
  EXPECT_TRUE(IsPythonWait("threading.py(359): wait"));
  EXPECT_TRUE(IsPythonWait("/usr/lib/python3.10/threading.py(1116): _wait_for_tstate_lock"));
  EXPECT_TRUE(IsPythonWait("queue.py(171): get"));
  EXPECT_TRUE(IsPythonWait("<built-in method acquire of _thread.lock object at 0x7f3a>"));
  EXPECT_TRUE(IsPythonWait("<built-in function sleep>"));
  EXPECT_FALSE(IsPythonWait("threading.py(973): run"));
  EXPECT_FALSE(IsPythonWait("my_queue.py(10): get"));
  EXPECT_FALSE(IsPythonWait("torch/nn/modules/module.py(1501): _call_impl"));
  Builder b;
  b.Add(EventClass::kStep, "ProfilerStep#1", 0, 10000);
  b.Add(EventClass::kHostOp, "aten::addmm", 1000, 3000);  // 2 ms of work on the main thread
  b.Add(EventClass::kKernel, "gemm", 3000, 4000);
  b.Add(EventClass::kPython, "threading.py(359): wait", 0, 10000);
  b.model.track.back() = b.model.TrackFor("1", "2");  // the monitor thread
  const Analysis a = AnalyzeTrace(b.model);
  const auto* at = a.results.Get<Attribution>(kAttributionPass);
  ASSERT_NE(at, nullptr);
  EXPECT_EQ(at->Of(StepState::kFramework), 2000000);
  EXPECT_EQ(at->Of(StepState::kCompute), 1000000);
  EXPECT_EQ(at->Of(StepState::kUntraced) + at->Of(StepState::kAnnotationOnly), 7000000);
}

// Set-up and warm-up that each stay under their own mark but together fill
// half the window or more: start-up all the same, named after the larger
// (the TensorBoard plugin's 2021 autograd-API samples: set-up 37.5% and
// warm-up 31.0%, called "Warm-up fills 31.0%").
// A trace without steps that captures graphs and replays each at most once
// records the capture phase (vLLM's piecewise capture: warm-up, a 115 ms
// synchronisation, then 25 captures filling a quarter of it), said to be
// start-up with no other finding about its times; replayed more often than
// captured, or one capture alone, it is judged as a run.
TEST(Advisor, ACaptureRunIsStartUpThoughItsCapturesFillLittle) {
  const auto findings = [](int captures, int replays) {
    Builder b;
    b.Add(EventClass::kHostOp, "aten::mm", 0, 6000);  // warm-up in eager mode, host-bound
    for (int i = 0; i < 60; ++i) {
      b.Correlate(i).Add(EventClass::kRuntime, "cudaLaunchKernel", i * 100, i * 100 + 80);
      b.Correlate(i).Add(EventClass::kKernel, "gemm", i * 100 + 85, i * 100 + 90);
    }
    for (int i = 0; i < captures; ++i) {
      const int64_t t = 6000 + i * 400;
      b.Correlate(-1).Add(EventClass::kRuntime, "cudaStreamBeginCapture", t, t + 10);
      b.Correlate(-1).Add(EventClass::kRuntime, "cudaLaunchKernel", t + 20, t + 100);
      b.Correlate(-1).Add(EventClass::kRuntime, "cudaStreamEndCapture", t + 200, t + 210);
    }
    for (int i = 0; i < replays; ++i) {
      const int64_t t = 6000 + captures * 400 + i * 100;
      b.Correlate(1000 + i).Add(EventClass::kRuntime, "cudaGraphLaunch", t, t + 20);
      b.Correlate(1000 + i).Add(EventClass::kKernel, "gemm", t + 25, t + 90);
    }
    return Advise(AnalyzeTrace(b.model));
  };
  const auto run = findings(3, 1);  // 3 x 210 us of captures in 7.3 ms: 8.6%
  ASSERT_FALSE(run.empty());
  EXPECT_EQ(run[0].id, "step_capture");
  EXPECT_NE(run[0].title.find("A graph-capture run: 3 stream captures"), std::string::npos)
      << run[0].title;
  for (const Finding& f : run) EXPECT_TRUE(f.id.starts_with("step_")) << f.id;
  const auto replayed = findings(3, 8);
  ASSERT_FALSE(replayed.empty());
  EXPECT_NE(replayed[0].id, "step_capture");
  const auto once = findings(1, 0);
  ASSERT_FALSE(once.empty());
  EXPECT_NE(once[0].id, "step_capture");
}

// Set-up whose allocation calls recur (a loop that allocates and frees each
// iteration, as a lower-triangular solver's Nsight export did 879 times) says
// that part is not one-off, with the calls; a few calls are not a loop.
TEST(Advisor, AllocationMadeAgainAndAgainIsNotCalledOneOff) {
  const auto setup = [](int iterations) {
    Builder b;
    b.Add(EventClass::kRuntime, "cudaEventCreate", 0, 20000);  // the context, made on first use
    for (int i = 0; i < iterations; ++i) {
      const int64_t t = 20000 + i * 100;
      b.Correlate(-1).Add(EventClass::kRuntime, "cudaMalloc", t, t + 30);
      b.Correlate(i).Add(EventClass::kRuntime, "cudaLaunchKernel", t + 30, t + 35);
      b.Correlate(i).Add(EventClass::kKernel, "solve", t + 36, t + 60);
      b.Correlate(-1).Add(EventClass::kRuntime, "cudaFree", t + 60, t + 100);
    }
    const auto findings = Advise(AnalyzeTrace(b.model));
    return findings.empty() ? Finding{} : findings[0];
  };
  const Finding loop = setup(20);
  EXPECT_EQ(loop.id, "step_setup");
  EXPECT_NE(loop.evidence.find("allocation made again and again, not one-off: cudaFree 20 calls"),
            std::string::npos)
      << loop.evidence;
  EXPECT_NE(loop.action.find("Here it does"), std::string::npos) << loop.action;
  const Finding few = setup(5);
  EXPECT_EQ(few.id, "step_setup");
  EXPECT_EQ(few.evidence.find("again and again"), std::string::npos) << few.evidence;

  // torch_npu's caching allocator going to the device in every iteration
  // (CANN's calls named with their layer): the allocator's levers, as
  // msprof-analyze's memory rule gives them, not "allocate once".
  Builder npu;
  npu.Add(EventClass::kRuntime, "AscendCL@aclrtSetDevice", 0, 20000);
  for (int i = 0; i < 20; ++i) {
    const int64_t t = 20000 + i * 100;
    npu.Add(EventClass::kHostOp, "aten::empty", t, t + 31);
    npu.Add(EventClass::kRuntime, "AscendCL@aclMallocMemInner", t, t + 30);
    npu.Correlate(i).Add(EventClass::kRuntime, "AscendCL@aclnnAdd", t + 30, t + 35);
    npu.Correlate(i).Add(EventClass::kKernel, "Add", t + 36, t + 60);
    npu.Correlate(-1).Add(EventClass::kRuntime, "AscendCL@aclrtFreePhysical", t + 60, t + 100);
  }
  const auto findings = Advise(AnalyzeTrace(npu.model));
  ASSERT_FALSE(findings.empty());
  EXPECT_EQ(findings[0].id, "step_setup");
  EXPECT_NE(findings[0].evidence.find("AscendCL@aclMallocMemInner 20 calls"), std::string::npos)
      << findings[0].evidence;
  EXPECT_NE(findings[0].action.find("expandable_segments:True"), std::string::npos)
      << findings[0].action;
  EXPECT_EQ(findings[0].action.find("before the loop"), std::string::npos) << findings[0].action;
}

// One-off set-up under half the window that only just leads a steady state
// (an OpenACC program's allocations, 30%, beside its launch-bound loop, 29%)
// is not what to name: the steady state's lever is. Set-up that clearly
// leads is named, as the largest part.
TEST(Advisor, SetUpInANearTieGivesWayToTheSteadyState) {
  const auto first = [](int64_t setup_us) {
    Builder b;
    b.Add(EventClass::kRuntime, "cuMemHostAlloc", 0, setup_us);
    // A loop of launches: 300 us of launch calls with the device idle, tiny kernels.
    for (int i = 0; i < 30; ++i) {
      const int64_t t = setup_us + i * 20;
      b.Correlate(i).Add(EventClass::kRuntime, "cuLaunchKernel", t, t + 10);
      b.Correlate(i).Add(EventClass::kKernel, "tiny", t + 11, t + 12);
    }
    b.Add(EventClass::kKernel, "tiny", setup_us + 600, setup_us + 610);  // device work after
    const auto findings = Advise(AnalyzeTrace(b.model));
    return findings.empty() ? Finding{} : findings[0];
  };
  // Set-up 330 us against 300 us of launch calls: a near tie, the loop named.
  EXPECT_EQ(first(330).id, "step_host_overhead");
  // Set-up 600 us (49.6%) against 300: set-up, said to be the largest part.
  const Finding leads = first(600);
  EXPECT_EQ(leads.id, "step_setup");
  EXPECT_NE(leads.title.find(", the largest part: start-up"), std::string::npos) << leads.title;
}

TEST(Advisor, SetUpAndWarmUpTogetherAreStartUp) {
  const auto first = [](int64_t setup_us, int64_t compile_us) {
    Builder b;
    b.Add(EventClass::kRuntime, "cudaMalloc", 0, setup_us);
    b.Add(EventClass::kRuntime, "cuModuleLoadData", setup_us, setup_us + compile_us);
    b.Add(EventClass::kKernel, "gemm", setup_us + compile_us, 10000);
    const auto findings = Advise(AnalyzeTrace(b.model));
    const auto f = std::find_if(findings.begin(), findings.end(),
                                [](const Finding& x) { return x.id.starts_with("step_"); });
    return f == findings.end() ? Finding{} : *f;
  };
  const Finding setup = first(4000, 2000);  // 40% + 20%
  EXPECT_EQ(setup.id, "step_setup");
  EXPECT_NE(setup.title.find("One-off set-up and warm-up fill 60.0%"), std::string::npos)
      << setup.title;
  const Finding warmup = first(2000, 4000);  // 20% + 40%: named after warm-up
  EXPECT_EQ(warmup.id, "step_compilation");
  EXPECT_NE(warmup.title.find("Warm-up and one-off set-up fill 60.0%"), std::string::npos)
      << warmup.title;
  const Finding neither = first(2000, 2000);  // 40% together: the largest state instead
  EXPECT_EQ(neither.id, "step_compute") << neither.title;
}

// An untraced window is called too short for a diagnosis only where it has
// no steps: two complete steps of 200 ms are a fair sample, were they
// recorded, and the advice then says what the device did in them.
TEST(Advisor, UntracedStepsAreNotCalledTooShort) {
  const auto untraced = [](bool steps) {
    Builder b;
    for (int s = 0; s < 2; ++s) {
      const int64_t begin = 200000 * s;
      if (steps)
        b.Add(EventClass::kStep, "ProfilerStep#" + std::to_string(s), begin, begin + 200000);
      b.Add(EventClass::kAnnotation, "forward", begin, begin + 200000);
      b.Add(EventClass::kKernel, "gemm", begin + 1000, begin + 3000);
    }
    const auto findings = Advise(AnalyzeTrace(b.model));
    const Finding* f = Find(findings, "step_untraced");
    return f == nullptr ? std::optional<Finding>() : *f;
  };
  const auto with_steps = untraced(true);
  ASSERT_TRUE(with_steps.has_value());
  EXPECT_EQ(with_steps->action.find("this short"), std::string::npos) << with_steps->action;
  EXPECT_NE(with_steps->action.find("the device worked 4.000 ms (1.0%)"), std::string::npos)
      << with_steps->action;
  const auto without = untraced(false);
  ASSERT_TRUE(without.has_value());
  EXPECT_NE(without->action.find("A trace this short supports no step diagnosis"),
            std::string::npos)
      << without->action;
  EXPECT_NE(without->action.find("Record what the window runs"), std::string::npos)
      << without->action;
}

// Where the trace records the host's runtime calls already (a rocprofv3
// --hip-trace run: a 277 ms hipMalloc, a few launches, then seconds of the
// program's own host work), the untraced time is outside those calls:
// recording them again is not the advice; marking or sampling the program is.
TEST(Advisor, UntracedTimeBesideRecordedRuntimeCallsIsTheProgramsOwnWork) {
  Builder b;
  b.Add(EventClass::kRuntime, "hipMalloc", 1'000'000, 1'277'000);
  for (int i = 0; i < 5; ++i) {
    const int64_t t = 1'300'000 + i * 100;
    b.Correlate(i).Add(EventClass::kRuntime, "hipLaunchKernel", t, t + 10);
    b.Correlate(i).Add(EventClass::kKernel, "gemm", t + 20, t + 40);
  }
  b.Add(EventClass::kRuntime, "hipFree", 4'000'000, 4'000'100);
  const auto findings = Advise(AnalyzeTrace(b.model));
  ASSERT_FALSE(findings.empty());
  EXPECT_EQ(findings[0].id, "step_untraced");
  EXPECT_NE(findings[0].action.find("The trace records the host's runtime calls"),
            std::string::npos)
      << findings[0].action;
  EXPECT_NE(findings[0].action.find("sample the host's CPU"), std::string::npos)
      << findings[0].action;
  EXPECT_EQ(findings[0].action.find("Record what the window runs"), std::string::npos)
      << findings[0].action;
  // A HIP program: its own ranges and samplers.
  EXPECT_NE(findings[0].action.find("NVTX or ROCTx ranges"), std::string::npos)
      << findings[0].action;
  EXPECT_EQ(findings[0].action.find("record_function"), std::string::npos) << findings[0].action;
  // The same from a PyTorch program (an aten:: operator in the trace):
  // PyTorch's ranges, steps and Python stacks.
  b.Add(EventClass::kHostOp, "aten::empty", 1'000'010, 1'000'020);
  const auto torch = Advise(AnalyzeTrace(b.model));
  ASSERT_FALSE(torch.empty());
  EXPECT_EQ(torch[0].id, "step_untraced");
  for (const char* lever : {"torch.profiler.record_function", "prof.step()", "with_stack=True"}) {
    EXPECT_NE(torch[0].action.find(lever), std::string::npos) << lever << ": " << torch[0].action;
  }
  EXPECT_EQ(torch[0].action.find("ROCTx"), std::string::npos) << torch[0].action;
}

// Work queued behind a dependency: the longest wait is named, and where the
// launching thread called a stream-wait just before the launch (SGLang's
// decode on ROCm: hipStreamWaitEvent, then a kernel that starts 463 ms
// later while the host blocks in hipMemcpyWithStream), the event is what to
// look for; without that call, the general advice.
TEST(Advisor, QueuedWorkAfterAStreamWaitNamesTheEvent) {
  const auto trace = [](bool wait, int64_t blocked_until = 10'005) {
    Builder b;
    b.Correlate(1).Add(EventClass::kRuntime, "hipLaunchKernel", 0, 5);
    b.Add(EventClass::kKernel, "first", 10, 20);
    if (wait) b.Correlate(-1).Add(EventClass::kRuntime, "hipStreamWaitEvent", 30, 35);
    b.Correlate(2).Add(EventClass::kRuntime, "hipLaunchKernel", 40, 45);
    b.Add(EventClass::kKernel, "late", 10'000, 10'010);
    b.Correlate(-1).Add(EventClass::kRuntime, "hipMemcpyWithStream", 50, blocked_until);
    return Advise(AnalyzeTrace(b.model));
  };
  const auto waited = trace(true);
  ASSERT_FALSE(waited.empty());
  EXPECT_EQ(waited[0].id, "step_device_waiting");
  for (const char* said : {"The longest wait: 'late' started", "(hipLaunchKernel)",
                           "its thread had called hipStreamWaitEvent just before launching it",
                           "the host blocked in hipMemcpyWithStream"}) {
    EXPECT_NE(waited[0].evidence.find(said), std::string::npos)
        << said << ": " << waited[0].evidence;
  }
  EXPECT_EQ(
      waited[0].action.rfind("Find where the event the stream waits for (hipStreamWaitEvent)", 0),
      0u)
      << waited[0].action;
  // A blocking call of under a tenth of the wait says nothing of it.
  const auto brief = trace(true, 900);
  ASSERT_FALSE(brief.empty());
  EXPECT_EQ(brief[0].evidence.find("the host blocked"), std::string::npos) << brief[0].evidence;
  EXPECT_EQ(brief[0].action.find("waits behind the same work"), std::string::npos)
      << brief[0].action;
  const auto plain = trace(false);
  ASSERT_FALSE(plain.empty());
  EXPECT_EQ(plain[0].id, "step_device_waiting");
  EXPECT_NE(plain[0].evidence.find("The longest wait: 'late'"), std::string::npos);
  EXPECT_EQ(plain[0].evidence.find("StreamWaitEvent"), std::string::npos) << plain[0].evidence;
  EXPECT_EQ(plain[0].action.rfind("Find what the device waits for", 0), 0u) << plain[0].action;
}

// Copies are judged by the wall time they fill in the trace's span, as layout
// conversions are (issue 36, class 11: a large share of a mostly idle
// device's time is no warning): two 2 ms copies on two streams at once fill
// 2 ms, not 4.
TEST(Advisor, CopiesAreWeighedByTheWallTimeTheyFill) {
  const auto transfer = [](int64_t idle_us) {
    Builder b;
    b.Add(EventClass::kKernel, "gemm", 0, 1000);
    b.Add(EventClass::kMemcpy, "Memcpy HtoD (Pinned -> Device)", 1000, 3000, 4000000)
        .Copy(CopyDirection::kHostToDevice, HostMemory::kPinned);
    b.Add(EventClass::kMemcpy, "Memcpy HtoD (Pinned -> Device)", 1000, 3000, 4000000)
        .Copy(CopyDirection::kHostToDevice, HostMemory::kPinned);
    b.model.track.back() = b.model.TrackFor("0", "2");  // another stream
    b.Add(EventClass::kKernel, "gemm", 3000 + idle_us, 4000 + idle_us);
    const auto findings = Advise(AnalyzeTrace(b.model));
    const Finding* f = Find(findings, "transfers_HtoD");
    return f == nullptr ? std::optional<Finding>() : *f;
  };
  const auto busy = transfer(0);  // 2 ms of copies in a 4 ms span: 50%
  ASSERT_TRUE(busy.has_value());
  EXPECT_EQ(busy->severity, Severity::kWarning);
  EXPECT_NE(busy->title.find("(50.0% of the trace's span)"), std::string::npos) << busy->title;
  const auto idle = transfer(60000);  // the same copies in a 64 ms span: 3.1%
  ASSERT_TRUE(idle.has_value());
  EXPECT_EQ(idle->severity, Severity::kInfo);
  EXPECT_NE(idle->title.find("(3.1% of the trace's span)"), std::string::npos) << idle->title;
  EXPECT_NE(idle->evidence.find("the device idles most of it"), std::string::npos)
      << idle->evidence;
}

// Complete steps that differ twice over are said to (issue 36, class 7);
// steps within that spread are not.
TEST(Advisor, StepsThatDifferTwiceOverAreSaidTo) {
  const auto findings = [](const std::vector<int64_t>& durations_us) {
    Builder b;
    int64_t t = 0;
    for (size_t i = 0; i < durations_us.size(); ++i) {
      b.Add(EventClass::kStep, "ProfilerStep#" + std::to_string(i), t, t + durations_us[i]);
      b.Add(EventClass::kKernel, "gemm", t, t + durations_us[i] - 10);
      t += durations_us[i];
    }
    return Advise(AnalyzeTrace(b.model));
  };
  const auto varied = findings({10000, 10000, 25000, 10000, 10000});
  const Finding* vary = Find(varied, "steps_vary");
  ASSERT_NE(vary, nullptr);
  EXPECT_NE(vary->title.find("2.5x: the slowest, ProfilerStep#2, takes 25.000 ms against a "
                             "median of 10.000 ms"),
            std::string::npos)
      << vary->title;
  EXPECT_EQ(vary->saving_ns, 15'000'000);
  // Where the slow step's time went, against the first step of the median's
  // duration: 15 ms more compute (each step's kernel ends 10 us before it).
  EXPECT_NE(vary->evidence.find("ProfilerStep#2 against ProfilerStep#0 (a median step): compute "
                                "+15.000 ms"),
            std::string::npos)
      << vary->evidence;
  EXPECT_EQ(vary->evidence.find("idle"), std::string::npos) << vary->evidence;
  EXPECT_EQ(Find(findings({10000, 10000, 19000, 10000, 10000}), "steps_vary"), nullptr);
}

// A CPU trace whose steps run operators for a tenth of their time and
// nothing recorded the rest (Python in the loop, a sleep): the untraced time
// is the program's own code between the operators, which the profiler does
// not record; recording the operators again is not the advice.
TEST(Advisor, UntracedTimeBetweenCpuOperatorsIsTheProgramsOwnCode) {
  Builder b;
  for (int s = 0; s < 3; ++s) {
    const int64_t begin = 10'000 * s;
    b.Add(EventClass::kStep, "ProfilerStep#" + std::to_string(s), begin, begin + 10'000);
    b.Add(EventClass::kHostOp, "aten::addmm", begin + 100, begin + 1'100);
  }
  const auto findings = Advise(AnalyzeTrace(b.model));
  ASSERT_FALSE(findings.empty());
  EXPECT_EQ(findings[0].id, "step_untraced");
  EXPECT_NE(findings[0].title.find("no operator runs"), std::string::npos) << findings[0].title;
  EXPECT_EQ(findings[0].title.find("device"), std::string::npos) << findings[0].title;
  for (const char* said : {"The trace records the operators only", "Python in the loop",
                           "with_stack=True", "the operators computed 3.000 ms (10.0%)"}) {
    EXPECT_NE(findings[0].action.find(said), std::string::npos)
        << said << ": " << findings[0].action;
  }
  EXPECT_EQ(findings[0].action.find("Record what the window runs"), std::string::npos)
      << findings[0].action;
}

// Two steps, the second 2.6 times the first because one call took 4 ms
// where it took 0.23 (torch-cpu/small_cnn_train_torch1.13.json's shape): the
// diagnosis says the steps are not steady before anything else; it is silent
// when the steps are within 2x, or when no one name explains half the
// difference.
TEST(Advisor, StepsMadeUnsteadyByOneCallAreSaidToFirst) {
  const auto first = [](const std::vector<std::pair<std::string, int64_t>>& slow_step_ops) {
    Builder b;
    b.Add(EventClass::kStep, "ProfilerStep#0", 0, 1840);
    b.Add(EventClass::kHostOp, "aten::conv2d", 100, 600);
    b.Add(EventClass::kHostOp, "aten::native_batch_norm", 700, 930);
    int64_t t = 1940, end = 1940;
    for (const auto& [name, us] : slow_step_ops) {
      b.Add(EventClass::kHostOp, name, t, t + us);
      t += us + 10;
      end = t;
    }
    b.Add(EventClass::kStep, "ProfilerStep#1", 1900, end + 100);
    const auto findings = Advise(AnalyzeTrace(b.model));
    return findings.empty() ? Finding{} : findings[0];
  };
  const Finding outlier = first({{"aten::conv2d", 500}, {"aten::native_batch_norm", 4180}});
  EXPECT_EQ(outlier.id, "step_outlier");
  EXPECT_NE(outlier.title.find("ProfilerStep#1 takes 2.6x ProfilerStep#0 (4.840 vs 1.840 ms)"),
            std::string::npos)
      << outlier.title;
  EXPECT_NE(outlier.title.find("'aten::native_batch_norm' (4.180 ms of its own time there, "
                               "0.230 ms in ProfilerStep#0)"),
            std::string::npos)
      << outlier.title;
  EXPECT_LT(outlier.saving_ns, 0);  // none: nothing to save in a trace that shows no steady state
  // Within 2x: the steps' own diagnosis.
  EXPECT_NE(first({{"aten::conv2d", 500}, {"aten::native_batch_norm", 1500}}).id, "step_outlier");
  // The growth spread over ten names, none with half of it.
  std::vector<std::pair<std::string, int64_t>> spread = {{"aten::conv2d", 500},
                                                         {"aten::native_batch_norm", 230}};
  for (int i = 0; i < 10; ++i) spread.push_back({"aten::op" + std::to_string(i), 400});
  EXPECT_NE(first(spread).id, "step_outlier");
}

// Steps made unsteady by the DataLoader's iterator (a worker loader whose
// prefetched batches ran out: the later steps wait for each batch) are a
// loader that does not keep up, not one slow call: data loading is named,
// with the advice for a loader that has workers already, and on a CPU trace
// without pinned memory (no device receives the batches).
TEST(Advisor, StepsMadeUnsteadyByTheDataLoaderAreDataLoading) {
  const auto findings = [](const std::string& loader) {
    Builder b;
    const int64_t waits[] = {100, 100, 100, 30'000};
    int64_t t = 0;
    for (int s = 0; s < 4; ++s) {
      const int64_t begin = t;
      b.Add(EventClass::kDataLoading, loader, t, t + waits[s]);
      t += waits[s];
      b.Add(EventClass::kHostOp, "aten::addmm", t, t + 2'000);
      t += 2'000;
      b.Add(EventClass::kStep, "ProfilerStep#" + std::to_string(s), begin, t);
    }
    return Advise(AnalyzeTrace(b.model));
  };
  const auto workers = findings("enumerate(DataLoader)#_MultiProcessingDataLoaderIter.__next__");
  ASSERT_FALSE(workers.empty());
  EXPECT_EQ(workers[0].id, "step_data_loading");
  EXPECT_EQ(Find(workers, "step_outlier"), nullptr);
  for (const char* said : {"loads in worker processes already", "more workers"}) {
    EXPECT_NE(workers[0].action.find(said), std::string::npos) << said << ": " << workers[0].action;
  }
  EXPECT_EQ(workers[0].action.find("pin_memory"), std::string::npos) << workers[0].action;
  const auto single = findings("enumerate(DataLoader)#_SingleProcessDataLoaderIter.__next__");
  ASSERT_FALSE(single.empty());
  EXPECT_EQ(single[0].id, "step_data_loading");
  EXPECT_NE(single[0].action.find("DataLoader(num_workers>0"), std::string::npos)
      << single[0].action;
}

// The device idles while host work runs: where a thread meanwhile waits in a
// synchronisation (JAX's block_until_ready while XLA's threads run their
// completion callbacks), the verdict is runtime latency, not the program's
// dispatch; without the wait it stays host overhead.
TEST(Advisor, HostWorkWhileAThreadWaitsIsRuntimeLatency) {
  const auto first = [](bool waits) {
    Builder b;
    b.Add(EventClass::kKernel, "conv", 0, 100);
    if (waits) b.Add(EventClass::kSync, "$api.py:3154 block_until_ready", 100, 5000);
    // The runtime's thread.
    b.model.Append(EventRow{.start_ns = 200'000,
                            .duration_ns = 4'700'000,
                            .name = b.model.Intern("BufferSequencingEvent::Execute"),
                            .track = b.model.TrackFor("1", "2"),
                            .cls = EventClass::kHostOp});
    const auto findings = Advise(AnalyzeTrace(b.model));
    return findings.empty() ? Finding{} : findings[0];
  };
  const Finding wait = first(true);
  EXPECT_EQ(wait.id, "step_host_overhead");
  EXPECT_NE(wait.title.find("while a thread waits in a synchronisation and the runtime's own "
                            "threads work"),
            std::string::npos)
      << wait.title;
  EXPECT_NE(wait.action.find("Fewer or larger kernels will not help"), std::string::npos);
  const Finding busy = first(false);
  EXPECT_EQ(busy.id, "step_host_overhead");
  EXPECT_NE(busy.title.find("host runs framework code and launches work"), std::string::npos)
      << busy.title;
}

// A window without steps opened by one long collective (a start-up
// broadcast: kernel_details_advisor.csv's 308.9 ms hcom_broadcast at +3.4 ms)
// is start-up, not steady communication; the same collective later in the
// window, or in a trace with steps, is not.
TEST(Advisor, AStartUpCollectiveIsSaidToBeOneOff) {
  const auto first = [](int64_t at_us, bool steps) {
    Builder b;
    if (steps) {
      for (int s = 0; s < 4; ++s) {
        b.Add(EventClass::kStep, "ProfilerStep#" + std::to_string(s), s * 250, s * 250 + 250);
        b.Add(EventClass::kKernel, "step_kernel", s * 250 + 20, s * 250 + 40);
      }
    }
    b.Add(EventClass::kKernel, "embed", 0, 5);
    b.Add(EventClass::kCommunication, "hcom_broadcast__445_0", at_us, at_us + 600);
    b.Add(EventClass::kKernel, "MatMul", 700, 900);
    b.Add(EventClass::kKernel, "MatMul", 950, 1000);
    const auto findings = Advise(AnalyzeTrace(b.model));
    return findings.empty() ? Finding{} : findings[0];
  };
  const Finding startup = first(10, false);
  EXPECT_EQ(startup.id, "step_startup");
  EXPECT_NE(startup.title.find("the collective 'hcom_broadcast__445_0' runs 0.600 ms from "
                               "+0.010 ms"),
            std::string::npos)
      << startup.title;
  EXPECT_NE(first(300, false).id, "step_startup");  // begins 30% into the window
  EXPECT_NE(first(10, true).id, "step_startup");    // steps to judge instead
}

// The step-time diagnosis speaks of a window: a trace with none (no event
// lasts) gets no step_<state> finding, and every verdict's evidence names the
// window it is about.
TEST(Advisor, TheDiagnosisNeedsAWindow) {
  Builder none;
  none.Add(EventClass::kHostOp, "aten::empty", 5, 5);  // lasts nothing
  for (const Finding& f : Advise(AnalyzeTrace(none.model))) {
    EXPECT_NE(f.id.rfind("step_", 0), 0u) << f.id << ": " << f.title;
  }
  Builder one;
  one.Add(EventClass::kKernel, "gemm", 0, 1000);
  const auto findings = Advise(AnalyzeTrace(one.model));
  ASSERT_FALSE(findings.empty());
  EXPECT_EQ(findings[0].id, "step_compute");
  EXPECT_NE(findings[0].evidence.find("of the trace's span (1.000 ms; it has no complete steps)"),
            std::string::npos)
      << findings[0].evidence;
  // The same states on the critical path, beside the attribution's account.
  EXPECT_NE(findings[0].evidence.find("on the critical path (what decided when each step ended) "
                                      "these states take 1.000 ms (100.0%)"),
            std::string::npos)
      << findings[0].evidence;
}

TEST(Advisor, CpuTracesGetCpuFindings) {
  // A CPU-only trace: operators 60% of the time, one of them dominant.
  Builder b;
  for (int i = 0; i < 10; ++i) {
    const int64_t t = i * 1000;
    b.Add(EventClass::kHostOp, "aten::conv2d", t, t + 500)
        .Add(EventClass::kHostOp, "aten::relu", t + 500, t + 600)
        .Add(EventClass::kPython, "forward", t + 600, t + 1000);
  }
  // Without the attribution, the busy-share rule speaks of the CPU.
  const Analysis busy = AnalyzeTrace(b.model, {.passes = {"device_busy"}});
  const auto busy_findings = Advise(busy);
  const Finding* low = Find(busy_findings, "low_device_utilization");
  ASSERT_NE(low, nullptr);
  EXPECT_NE(low->title.find("CPU"), std::string::npos);
  EXPECT_NE(low->evidence.find("outside operators"), std::string::npos) << low->evidence;
  const Analysis a = AnalyzeTrace(b.model);
  EXPECT_EQ(a.compute_on, ComputeOn::kCpu);
  EXPECT_NEAR(a.busy.busy_pct, 100.0 * 6000 / 9600, 0.01);
  const auto findings = Advise(a);
  EXPECT_EQ(Find(findings, "low_device_utilization"), nullptr);
  // The diagnosis: the CPU's operators are the compute (600 of each 1,000
  // us of the 10,000 us span; the Python frames are framework time), conv2d
  // the largest.
  ASSERT_FALSE(findings.empty());
  EXPECT_EQ(findings[0].id, "step_compute");
  EXPECT_NE(findings[0].title.find("The CPU computes 60.0%"), std::string::npos)
      << findings[0].title;
  EXPECT_NE(findings[0].title.find("aten::conv2d is the largest part"), std::string::npos);
  const Finding* dominant = Find(findings, "dominant_operator");
  ASSERT_NE(dominant, nullptr);
  EXPECT_NE(dominant->title.find("aten::conv2d"), std::string::npos);
  EXPECT_NE(dominant->title.find("83.3%"), std::string::npos) << dominant->title;  // 500 of 600
  EXPECT_EQ(Find(findings, "launch_bound"), nullptr);
}

// The launch-bound advice names PyTorch's levers for a PyTorch program and
// the runtime's for another (a CUDA or HIP program of its own), and graphs
// for either vendor.
TEST(Advisor, LaunchBoundAdviceInTheProgramsTerms) {
  const auto action = [](const char* op) {
    Builder b;
    for (int i = 0; i < 150; ++i) {
      b.Correlate(-1).Add(EventClass::kHostOp, op, i * 20, i * 20 + 15);
      b.Correlate(i).Add(EventClass::kRuntime, "cudaLaunchKernel", i * 20 + 2, i * 20 + 7);
      b.Correlate(i).Add(EventClass::kKernel, "tiny", i * 20 + 9, i * 20 + 11);
    }
    const auto findings = Advise(AnalyzeTrace(b.model));
    const Finding* f = Find(findings, "launch_bound");
    return f == nullptr ? std::string("(no launch_bound)") : f->action;
  };
  const std::string torch = action("aten::relu");
  EXPECT_NE(torch.find("torch.compile"), std::string::npos) << torch;
  EXPECT_NE(torch.find("CUDA or HIP graphs"), std::string::npos) << torch;
  const std::string own = action("relu_step");
  EXPECT_EQ(own.find("torch.compile"), std::string::npos) << own;
  EXPECT_NE(own.find("CUDA or HIP graphs"), std::string::npos) << own;
}

TEST(Advisor, AdviceFollowsWhatTheDeviceSupports) {
  // 0.8 ms of fp32 GEMM is too little to judge (Thresholds::min_judged_ns).
  Builder tiny;
  tiny.Add(EventClass::kKernel, "volta_sgemm_128x64_nn", 0, 800)
      .Add(EventClass::kKernel, "relu", 800, 1000);
  EXPECT_EQ(Find(Advise(AnalyzeTrace(tiny.model)), "mixed_precision"), nullptr);
  Builder b;
  b.Add(EventClass::kKernel, "volta_sgemm_128x64_nn", 0, 8000)
      .Add(EventClass::kKernel, "relu", 8000, 10000);
  Analysis a = AnalyzeTrace(b.model);
  a.compute_major = 7;
  const std::vector<Finding> volta = Advise(a);
  const Finding* mp = Find(volta, "mixed_precision");
  ASSERT_NE(mp, nullptr);
  EXPECT_NE(mp->action.find("fp16"), std::string::npos);
  EXPECT_NE(mp->action.find("no bf16"), std::string::npos) << mp->action;
  a.compute_major = 8;
  const std::vector<Finding> ampere = Advise(a);
  const Finding* mp8 = Find(ampere, "mixed_precision");
  ASSERT_NE(mp8, nullptr);
  EXPECT_EQ(mp8->action.find("no bf16"), std::string::npos) << mp8->action;
  EXPECT_NE(mp8->action.find("bf16"), std::string::npos) << mp8->action;
}

// The device-bound verdict's lever follows its lead family: a convolution
// lead gets convolution levers (channels_last, cuDNN's algorithm search), an
// attention lead a fused attention kernel, neither the other's.
TEST(Advisor, TheComputeLeversFollowTheLeadFamily) {
  const auto action = [](const std::string& kernel) {
    Builder b;
    b.Add(EventClass::kStep, "ProfilerStep#0", 0, 10'000);
    b.Add(EventClass::kHostOp, "aten::conv2d", 0, 50);
    for (int i = 0; i < 10; ++i) b.Add(EventClass::kKernel, kernel, i * 1000, i * 1000 + 950);
    const auto findings = Advise(AnalyzeTrace(b.model));
    return findings.empty() ? std::string() : findings[0].action;
  };
  const std::string conv = action("cudnn::detail::implicit_convolve_sgemm");
  EXPECT_NE(conv.find("channels_last"), std::string::npos) << conv;
  EXPECT_NE(conv.find("cudnn.benchmark"), std::string::npos) << conv;
  EXPECT_EQ(conv.find("attention"), std::string::npos) << conv;
  const std::string attention = action("flash_fwd_kernel");
  EXPECT_NE(attention.find("fused (flash) attention"), std::string::npos) << attention;
  EXPECT_EQ(attention.find("channels_last"), std::string::npos) << attention;
}

// One stalled kernel call (a real trace's GEMM made 20 ms long where its
// calls take 0.1 ms): said apart, as the first lever, and the lead family
// chosen without it; a call five times its median is no stall.
TEST(Advisor, OneStalledKernelCallIsSaidApart) {
  const auto first = [](int64_t slow_us) {
    Builder b;
    int64_t t = 0;
    b.Add(EventClass::kStep, "ProfilerStep#0", 0, 40'000);
    for (int i = 0; i < 50; ++i) {
      const int64_t d = i == 25 ? slow_us : 100;
      b.Add(EventClass::kKernel, "ampere_sgemm_128x64_tn", t, t + d);
      t += d;
      b.Add(EventClass::kKernel, "vectorized_elementwise_kernel", t, t + 300);
      t += 300;
    }
    const auto findings = Advise(AnalyzeTrace(b.model));
    return findings.empty() ? Finding{} : findings[0];
  };
  // 50 x 300 us elementwise (15 ms), 49 x 100 us + 20 ms of GEMM (24.9 ms).
  const Finding stalled = first(20'000);
  EXPECT_EQ(stalled.id, "step_compute");
  EXPECT_NE(stalled.title.find("elementwise kernels are the largest part (15.000 ms)"),
            std::string::npos)
      << stalled.title;
  EXPECT_NE(stalled.title.find("one call of 'ampere_sgemm_128x64_tn' takes 20.000 ms, 200x the "
                               "median of its 50 calls (0.100 ms): a stalled call"),
            std::string::npos)
      << stalled.title;
  EXPECT_EQ(stalled.action.rfind("First the stalled call", 0), 0u) << stalled.action;
  EXPECT_EQ(stalled.saving_ns, 19'900'000);
  const Finding slow = first(500);
  EXPECT_EQ(slow.title.find("stalled"), std::string::npos) << slow.title;
}

// A CPU trace of tiny operators (6 us each, 150 a step) with 6 us between
// them and nothing recorded there: those gaps are the same per-call cost
// (the interpreter issuing the next call), counted with the operators in
// the compute verdict, and the part nothing explains is information only;
// gaps of 30 us are not counted so: nothing explains them. The
// dominant operator's advice is about its number of calls, not its speed.
TEST(Advisor, ShortGapsBetweenTinyCpuOperatorsAreTheirPerCallCost) {
  const auto findings = [](int64_t gap_us) {
    Builder b;
    const int64_t step_us = 150 * (6 + gap_us) + 200;
    for (int s = 0; s < 3; ++s) {
      const int64_t begin = step_us * s;
      b.Add(EventClass::kStep, "ProfilerStep#" + std::to_string(s), begin, begin + step_us);
      for (int i = 0; i < 150; ++i) {
        const int64_t t = begin + i * (6 + gap_us);
        b.Add(EventClass::kHostOp, i % 3 == 0 ? "aten::add" : "aten::mul", t, t + 6);
      }
    }
    return Advise(AnalyzeTrace(b.model));
  };
  const auto short_gaps = findings(6);
  ASSERT_FALSE(short_gaps.empty());
  // 3 x 149 gaps of 6 us in 3 x 2.0 ms: 44.7%; the operators 2.7 ms, 45.0%.
  EXPECT_EQ(short_gaps[0].id, "step_compute");
  EXPECT_EQ(short_gaps[0].severity, Severity::kWarning);
  EXPECT_NE(short_gaps[0].title.find("the short gaps between them take 44.7% more"),
            std::string::npos)
      << short_gaps[0].title;
  EXPECT_NE(short_gaps[0].evidence.find("447, 2.682 ms"), std::string::npos)
      << short_gaps[0].evidence;
  EXPECT_NE(short_gaps[0].action.find("the gaps between them halved"), std::string::npos)
      << short_gaps[0].action;
  const Finding* part = Find(short_gaps, "untraced_part");
  ASSERT_NE(part, nullptr);
  EXPECT_EQ(part->severity, Severity::kInfo);
  const Finding* dominant = Find(short_gaps, "dominant_operator");
  ASSERT_NE(dominant, nullptr);
  EXPECT_NE(dominant->action.find("calls average 6.0 µs"), std::string::npos) << dominant->action;
  EXPECT_EQ(dominant->action.find("Find why it takes this long"), std::string::npos)
      << dominant->action;
  const auto long_gaps = findings(30);
  ASSERT_FALSE(long_gaps.empty());
  for (const Finding& f : long_gaps) {
    EXPECT_EQ(f.title.find("gaps between them"), std::string::npos) << f.title;
  }
  // 30 us a gap: 84% of the steps nothing explains, said first.
  EXPECT_EQ(long_gaps[0].id, "step_untraced");
}

// TorchInductor's kernels by the kind their names start with (its kernel
// categories' first three letters: torch/_inductor/wrapper_benchmark.py),
// not by the operators fused into them: a pointwise epilogue named after the
// addmm it follows is elementwise, a reduction named after a copy is a
// reduction; its templates are the GEMMs and convolutions.
TEST(KernelFamily, InductorKernelsByTheirKind) {
  EXPECT_EQ(KernelFamily("triton_poi_fused_addmm_gelu_view_26"), "elementwise");
  EXPECT_EQ(KernelFamily("triton_poi_fused_convolution_relu_3"), "elementwise");
  EXPECT_EQ(KernelFamily("triton_red_fused__to_copy_add_addmm_div_mean_31"),
            "reduction and normalization");
  EXPECT_EQ(KernelFamily("triton_per_fused__to_copy_addmm_mean_pow_view_7"),
            "reduction and normalization");
  EXPECT_EQ(KernelFamily("triton_tem_fused_addmm_relu_0"), "GEMM");
  EXPECT_EQ(KernelFamily("triton_tem_fused_convolution_1"), "convolution");
  EXPECT_EQ(KernelFamily("triton_tem_fused_flex_attention_0"), "attention");
  // Names that are not Inductor's keep their words' reading.
  EXPECT_EQ(KernelFamily("aten::addmm"), "GEMM");
  EXPECT_EQ(KernelFamily("addmm"), "GEMM");
  EXPECT_EQ(KernelFamily("ampere_sgemm_128x64_tn"), "GEMM");
  EXPECT_EQ(KernelFamily("fused_add_addmm_epilogue_kernel"), "elementwise");
}

}  // namespace
}  // namespace opscope::analyze
