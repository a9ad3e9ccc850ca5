#include "core/output.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <iterator>
#include <thread>

#include "collect/chrome_trace_writer.h"
#include "opscope/opscope.h"
#include "test_util.h"

namespace opscope::core {
namespace {

using opscope::testing::ListFiles;
using opscope::testing::ReadFile;
using opscope::testing::TempDir;

TEST(AtomicFileOutput, AppearsOnlyAfterCommit) {
  TempDir dir;
  const auto path = dir.path() / "out.txt";
  {
    AtomicFileOutput out(path, false);
    out.buffer() = "hello";
    out.Flush();
    EXPECT_FALSE(std::filesystem::exists(path));
    out.Commit();
  }
  EXPECT_EQ(ReadFile(path), "hello");
  EXPECT_EQ(ListFiles(dir.path()).size(), 1u) << "temporary file left behind";
}

TEST(AtomicFileOutput, AbandonedWriteLeavesNothingAndKeepsOldFile) {
  TempDir dir;
  const auto path = dir.path() / "out.txt";
  {
    AtomicFileOutput first(path, false);
    first.buffer() = "complete";
    first.Commit();
  }
  {
    AtomicFileOutput second(path, false);
    second.buffer() = "partial";
    second.Flush();
  }  // destroyed without Commit: as if an exception unwound the writer
  EXPECT_EQ(ReadFile(path), "complete");
  EXPECT_EQ(ListFiles(dir.path()).size(), 1u);
}

// Renaming over a device node or FIFO would replace it with a regular file
// (as root, --out /dev/null once turned /dev/null into one): they are written
// into directly, and other non-regular targets are refused.
TEST(AtomicFileOutput, FifosAndDevicesAreWrittenIntoNotReplaced) {
  TempDir dir;
  const auto fifo = dir.path() / "pipe";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  std::string received;
  std::thread reader([&] {
    std::ifstream in(fifo, std::ios::binary);
    received.assign(std::istreambuf_iterator<char>(in), {});
  });
  {
    AtomicFileOutput out(fifo, false);
    out.buffer() = "through the pipe";
    out.Commit();
  }
  reader.join();
  EXPECT_EQ(received, "through the pipe");
  struct stat st {};
  ASSERT_EQ(::stat(fifo.c_str(), &st), 0);
  EXPECT_TRUE(S_ISFIFO(st.st_mode)) << "the FIFO was replaced";
  EXPECT_EQ(ListFiles(dir.path()).size(), 1u) << "a temporary file was left";
  // A character device: written into, still a device afterwards.
  {
    AtomicFileOutput out("/dev/null", false);
    out.buffer() = "discarded";
    out.Commit();
  }
  ASSERT_EQ(::stat("/dev/null", &st), 0);
  EXPECT_TRUE(S_ISCHR(st.st_mode));
  // A folder is refused, and left alone.
  try {
    AtomicFileOutput out(dir.path(), false);
    FAIL() << "a folder was accepted as an output file";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::kIo);
    EXPECT_NE(std::string(e.what()).find("not a regular file"), std::string::npos) << e.what();
  }
  EXPECT_TRUE(std::filesystem::is_directory(dir.path()));
}

// A writer killed by SIGTERM removes its temporary file; one killed by SIGKILL
// leaves it, and the next write into the folder sweeps it (its process is gone);
// a live process's temporary file is left alone.
// An output never replaces one of the command's inputs (issue 39: `analyze
// --summary-only T --out T` and `diff A B --out A` overwrote the trace): by
// device and inode, so another spelling or a hard link is caught too; the
// input is left as it was and no temporary file stays behind.
TEST(AtomicFileOutput, NeverReplacesAnInput) {
  TempDir dir;
  const auto input = dir.path() / "trace.json";
  { std::ofstream(input) << "{\"traceEvents\": []}"; }
  const auto link = dir.path() / "same.json";
  ASSERT_EQ(::link(input.c_str(), link.c_str()), 0);
  const auto other = dir.path() / "other.json";
  std::ofstream(other) << "x";
  ProtectInput(input);
  for (const auto& target : {input, link, dir.path() / "." / "trace.json"}) {
    try {
      AtomicFileOutput out(target, false);
      ADD_FAILURE() << "wrote over the input as " << target;
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), ErrorCode::kInvalidArgument);
      EXPECT_NE(std::string(e.what()).find("one of this command's inputs"), std::string::npos)
          << e.what();
    }
  }
  // Becoming an input while it is written (another output of the same run)
  // is caught before the rename.
  {
    AtomicFileOutput out(other, false);
    out.buffer() = "replaced";
    ProtectInput(other);
    EXPECT_THROW(out.Commit(), Error);
  }
  EXPECT_EQ(ReadFile(input), "{\"traceEvents\": []}");
  EXPECT_EQ(ReadFile(other), "x");
  EXPECT_EQ(ListFiles(dir.path()).size(), 3u) << "temporary file left behind";
  // A folder given as input is refused as an output folder.
  ProtectInput(dir.path());
  EXPECT_THROW(RefuseInputAsOutput(dir.path()), Error);
  EXPECT_NO_THROW(RefuseInputAsOutput(dir.path() / "new-folder"));
  // A new command forgets the last one's inputs.
  ForgetInputs();
  EXPECT_NO_THROW(RefuseInputAsOutput(dir.path()));
  EXPECT_NO_THROW(AtomicFileOutput(input, false));
}

// A file an output replaces keeps its permissions (a 600 file stays 600).
TEST(AtomicFileOutput, AReplacedFileKeepsItsMode) {
  TempDir dir;
  const auto path = dir.path() / "private.json";
  std::ofstream(path) << "old";
  ASSERT_EQ(::chmod(path.c_str(), 0600), 0);
  {
    AtomicFileOutput out(path, false);
    out.buffer() = "new";
    out.Commit();
  }
  struct stat st {};
  ASSERT_EQ(::stat(path.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 07777, 0600u);
  EXPECT_EQ(ReadFile(path), "new");
}

// A final name of 255 bytes (the most a file name holds) is written: its
// temporary file's name is shortened to fit (issue 39: it failed, the
// temporary name being longer).
TEST(AtomicFileOutput, ALongestFileNameIsWritten) {
  TempDir dir;
  std::string accented = "a";  // 255 bytes of two-byte characters: cut at a character's start
  for (int i = 0; i < 127; ++i) accented += "\xc3\xa9";
  for (const std::string& name :
       {std::string(255, 'a'), std::string(250, 'b') + ".json", accented}) {
    ASSERT_EQ(name.size(), 255u);
    const auto path = dir.path() / name;
    {
      AtomicFileOutput out(path, false);
      out.buffer() = "ok";
      out.Commit();
    }
    EXPECT_EQ(ReadFile(path), "ok") << name.size();
  }
  EXPECT_EQ(ListFiles(dir.path()).size(), 3u) << "temporary file left behind";
}

TEST(AtomicFileOutput, KilledWritersLeaveNoTemporaryFiles) {
  TempDir dir;
  const pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    InstallTempFileCleanup();
    AtomicFileOutput out(dir.path() / "trace.json", false);
    out.buffer() = std::string(1 << 20, 'x');
    out.Flush();
    ::raise(SIGTERM);
    ::_exit(3);  // not reached
  }
  int status = 0;
  ASSERT_EQ(::waitpid(child, &status, 0), child);
  EXPECT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGTERM) << status;
  EXPECT_TRUE(ListFiles(dir.path()).empty()) << "SIGTERM left " << ListFiles(dir.path())[0];
  // A killed writer's leftover (as after SIGKILL): swept by the next writer
  // in the folder once it is older than the grace period, here by a sweep
  // without one.
  const pid_t killed = ::fork();
  ASSERT_GE(killed, 0);
  if (killed == 0) {
    AtomicFileOutput out(dir.path() / "t.json", false);
    out.buffer() = "partial";
    out.Flush();
    ::raise(SIGKILL);
  }
  ASSERT_EQ(::waitpid(killed, &status, 0), killed);
  ASSERT_EQ(ListFiles(dir.path()).size(), 1u);
  const auto stale = ListFiles(dir.path())[0];
  EXPECT_EQ(SweepStaleTempFiles(dir.path()), 0) << "removed within the grace period";
  EXPECT_EQ(SweepStaleTempFiles(dir.path(), std::chrono::seconds(0)), 1);
  EXPECT_FALSE(std::filesystem::exists(stale)) << "the dead writer's file was not swept";
  // Issue 39: files a user named in the shape of an opscope temporary file
  // (with a dead process's pid) are not opscope's and stay; so does the file
  // of a writer the sweep cannot see as alive by its pid (another PID
  // namespace: here a name with a dead pid, locked as a writer locks it).
  const pid_t gone = ::fork();
  if (gone == 0) ::_exit(0);
  ASSERT_EQ(::waitpid(gone, &status, 0), gone);
  const auto users = dir.path() / (".t.json.tmp." + std::to_string(gone) + ".0.123");
  const auto forged = dir.path() / (".t.json.tmp." + std::to_string(gone) + ".0.123.0badc0de");
  const auto other = dir.path() / ".notes.tmp.txt";
  const auto held = TempPathFor(dir.path() / "t.json", gone);
  for (const auto& p : {users, forged, other, held}) std::ofstream(p) << "partial";
  const int holder = ::open(held.c_str(), O_RDONLY | O_CLOEXEC);
  ASSERT_GE(holder, 0);
  ASSERT_EQ(::flock(holder, LOCK_EX | LOCK_NB), 0);
  EXPECT_EQ(SweepStaleTempFiles(dir.path(), std::chrono::seconds(0)), 0);
  {
    AtomicFileOutput out(dir.path() / "t.json", false);
    out.buffer() = "done";
    // A writer's own file, locked, survives another process's sweep.
    const pid_t sweeper = ::fork();
    if (sweeper == 0) ::_exit(SweepStaleTempFiles(dir.path(), std::chrono::seconds(0)));
    ASSERT_EQ(::waitpid(sweeper, &status, 0), sweeper);
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << status;
    out.Commit();
  }
  for (const auto& p : {users, forged, other, held}) {
    EXPECT_TRUE(std::filesystem::exists(p)) << p << " was removed";
  }
  EXPECT_EQ(ReadFile(dir.path() / "t.json"), "done");
  ::close(holder);  // the writer is gone: its file is swept
  EXPECT_EQ(SweepStaleTempFiles(dir.path(), std::chrono::seconds(0)), 1);
  EXPECT_FALSE(std::filesystem::exists(held));
}

TEST(AtomicFileOutput, MissingDirectoryIsAClearIoError) {
  try {
    AtomicFileOutput out("/nonexistent-dir/x/out.json", false);
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::kIo);
    EXPECT_NE(std::string(e.what()).find("/nonexistent-dir/x/out.json"), std::string::npos);
  }
}

// A process killed while writing a trace never leaves a truncated file at the
// final path.
TEST(AtomicFileOutput, KilledWriterLeavesNoTruncatedTrace) {
  TempDir dir;
  const auto path = dir.path() / "trace.json";
  const pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    AtomicFileOutput out(path, false);
    collect::ChromeTraceWriter writer(out);
    writer.Begin();
    for (int i = 0; i < 200000; ++i) {
      writer.Complete(1, 1, "event", "cat", i * 1000, 500);
      if (i == 100000) {
        out.Flush();
        ::raise(SIGKILL);
      }
    }
    ::_exit(0);
  }
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFSIGNALED(status));
  EXPECT_FALSE(std::filesystem::exists(path));
  const auto files = ListFiles(dir.path());
  ASSERT_EQ(files.size(), 1u);  // only the temporary file, never the final name
  EXPECT_NE(files[0].filename().string().find(".tmp."), std::string::npos);
  EXPECT_GT(std::filesystem::file_size(files[0]), 1000000u);
}

TEST(AtomicFileOutput, GzipRoundTrips) {
  TempDir dir;
  const auto path = dir.path() / "t.txt.gz";
  std::string text;
  for (int i = 0; i < 100000; ++i) text += "line " + std::to_string(i) + "\n";
  {
    AtomicFileOutput out(path, true);
    out.buffer() = text;
    out.Commit();
  }
  const auto result = opscope::testing::RunCommand(
      "gzip -dc " + opscope::testing::Quote(path.string()) + " | wc -c");
  EXPECT_EQ(std::stoul(result.output), text.size());
  EXPECT_LT(std::filesystem::file_size(path), text.size() / 3);
}

}  // namespace
}  // namespace opscope::core
