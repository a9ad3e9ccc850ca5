// Running programs: exit statuses, signals, a program that cannot be run, the
// environment given to the child, and the deadline.
#include "core/subprocess.h"

#include <gtest/gtest.h>

#include "core/clock.h"
#include "opscope/opscope.h"

namespace opscope::core {
namespace {

TEST(Subprocess, ExitStatusAndSignal) {
  EXPECT_EQ(Subprocess::Spawn({"sh", "-c", "exit 3"}).Wait(), 3);
  EXPECT_EQ(Subprocess::Spawn({"true"}).Wait(), 0);
  EXPECT_EQ(Subprocess::Spawn({"sh", "-c", "kill -9 $$"}).Wait(), 128 + 9);
}

TEST(Subprocess, AProgramThatCannotRunIsAnErrorNamingIt) {
  try {
    Subprocess::Spawn({"/nonexistent/program", "x"});
    ADD_FAILURE() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::kInvalidArgument);
    EXPECT_NE(std::string(e.what()).find("cannot run '/nonexistent/program'"), std::string::npos)
        << e.what();
  }
  // A program that exits 127 by itself is not mistaken for one that could not run.
  EXPECT_EQ(Subprocess::Spawn({"sh", "-c", "exit 127"}).Wait(), 127);
}

TEST(Subprocess, EnvironmentReachesTheChild) {
  EXPECT_EQ(Subprocess::Spawn({"sh", "-c", "test \"$OPSCOPE_X\" = 'a b'"},
                              {.environment = {{"OPSCOPE_X", "a b"}}})
                .Wait(),
            0);
}

TEST(Subprocess, TheDeadlineStopsAProgram) {
  auto child = Subprocess::Spawn({"sleep", "30"});
  EXPECT_EQ(child.Poll(), -1);
  const int64_t start = MonotonicNs();
  EXPECT_EQ(child.WaitUntil(start + 100000000), -1);
  EXPECT_LT(MonotonicNs() - start, 10000000000) << "stopped well before sleep 30 ended";
}

}  // namespace
}  // namespace opscope::core
