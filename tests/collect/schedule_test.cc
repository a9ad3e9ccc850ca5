// torch.profiler.schedule semantics, written out step by step. The expected rows
// follow torch/profiler/profiler.py's schedule_fn:
//   step < skip_first -> NONE; step -= skip_first; cycle = wait + warmup + active;
//   repeat > 0 and step / cycle >= repeat -> NONE; position = step % cycle;
//   position < wait -> NONE; < wait + warmup -> WARMUP;
//   < cycle - 1 -> RECORD; else RECORD_AND_SAVE.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "opscope/opscope.h"

namespace opscope {
namespace {

struct Case {
  Schedule schedule;
  std::string expected;  // one letter per step: N, W, R, S (record and save)
};

std::string Actions(const Schedule& s, size_t steps) {
  std::string out;
  for (size_t i = 0; i < steps; ++i) {
    switch (s(static_cast<int64_t>(i))) {
      case ProfilerAction::kNone: out += 'N'; break;
      case ProfilerAction::kWarmup: out += 'W'; break;
      case ProfilerAction::kRecord: out += 'R'; break;
      case ProfilerAction::kRecordAndSave: out += 'S'; break;
    }
  }
  return out;
}

TEST(Schedule, MatchesTorchStepTable) {
  const std::vector<Case> cases = {
      // skip_first, wait, warmup, active, repeat
      {{0, 0, 0, 1, 0}, "SSSSSSSS"},     {{0, 1, 1, 2, 0}, "NWRSNWRSNWRS"},
      {{0, 1, 1, 2, 1}, "NWRSNNNNNNNN"}, {{0, 1, 1, 3, 2}, "NWRRSNWRRSNNNN"},
      {{2, 1, 1, 2, 1}, "NNNWRSNNNN"},   {{1, 0, 2, 1, 2}, "NWWSWWSNNN"},
      {{3, 2, 0, 1, 0}, "NNNNNSNNSNNS"}, {{0, 0, 1, 1, 3}, "WSWSWSNNN"},
      {{5, 0, 0, 3, 1}, "NNNNNRRSNNN"},
  };
  for (const Case& c : cases) {
    const Schedule& s = c.schedule;
    EXPECT_EQ(Actions(s, c.expected.size()), c.expected)
        << "skip_first=" << s.skip_first << " wait=" << s.wait << " warmup=" << s.warmup
        << " active=" << s.active << " repeat=" << s.repeat;
  }
}

TEST(Schedule, RejectsInvalidValues) {
  EXPECT_THROW((Schedule{0, 0, 0, 0, 0}.Validate()), Error);
  EXPECT_THROW((Schedule{-1, 0, 0, 1, 0}.Validate()), Error);
  EXPECT_THROW((Schedule{0, -1, 0, 1, 0}.Validate()), Error);
  EXPECT_THROW((Schedule{0, 0, -1, 1, 0}.Validate()), Error);
  EXPECT_THROW((Schedule{0, 0, 0, 1, -2}.Validate()), Error);
  EXPECT_NO_THROW((Schedule{0, 0, 0, 1, 0}.Validate()));
  ProfilerOptions options;
  options.schedule = Schedule{0, 0, 0, 0, 0};
  EXPECT_THROW(Profiler{options}, Error);
}

}  // namespace
}  // namespace opscope
