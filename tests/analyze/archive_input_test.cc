// Archives of output folders: unpacked whole, read as the folder, removed after;
// hostile archives (paths that leave the folder, links, bombs, duplicates,
// corrupt data) refused or skipped with nothing left behind. The archives are
// written here with libarchive's writer, entry by entry, so each hostile shape
// is exactly the one named.
#include "analyze/archive_input.h"

#include <archive.h>
#include <archive_entry.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <fstream>
#include <sstream>

#include "analyze/trace_inputs.h"
#include "opscope/opscope.h"

namespace opscope::analyze {
namespace {

namespace fs = std::filesystem;

struct Entry {
  std::string name;
  std::string data;
  mode_t type = AE_IFREG;
  std::string link;  // for AE_IFLNK
};

enum class Kind { kZip, kTarGz };

void WriteArchive(const fs::path& path, const std::vector<Entry>& entries, Kind kind = Kind::kZip) {
  archive* a = archive_write_new();
  if (kind == Kind::kZip) {
    archive_write_set_format_zip(a);
  } else {
    archive_write_set_format_pax_restricted(a);
    archive_write_add_filter_gzip(a);
  }
  ASSERT_EQ(archive_write_open_filename(a, path.c_str()), ARCHIVE_OK) << archive_error_string(a);
  for (const Entry& e : entries) {
    archive_entry* entry = archive_entry_new();
    archive_entry_set_pathname(entry, e.name.c_str());
    archive_entry_set_filetype(entry, e.type);
    archive_entry_set_perm(entry, e.type == AE_IFDIR ? 0755 : 0644);
    if (e.type == AE_IFLNK) archive_entry_set_symlink(entry, e.link.c_str());
    archive_entry_set_size(entry, e.type == AE_IFREG ? static_cast<la_int64_t>(e.data.size()) : 0);
    ASSERT_EQ(archive_write_header(a, entry), ARCHIVE_OK) << archive_error_string(a);
    if (e.type == AE_IFREG && !e.data.empty()) {
      ASSERT_EQ(archive_write_data(a, e.data.data(), e.data.size()),
                static_cast<la_ssize_t>(e.data.size()));
    }
    archive_entry_free(entry);
  }
  archive_write_close(a);
  archive_write_free(a);
}

std::string Read(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// This process's scratch folders (opscope-archive-<pid>-*) in the temporary folder.
int OwnScratchFolders() {
  int n = 0;
  const std::string prefix = "opscope-archive-" + std::to_string(::getpid()) + "-";
  for (const auto& e : fs::directory_iterator(fs::temp_directory_path())) {
    if (e.path().filename().string().rfind(prefix, 0) == 0) ++n;
  }
  return n;
}

class ArchiveInput : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("archive_input_test_" + std::to_string(::getpid()));
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  // Expects ExtractArchive to throw `code` with `words` in the message, and to
  // leave no scratch folder behind.
  void ExpectRefused(const fs::path& archive, ErrorCode code, const std::string& words) {
    const int before = OwnScratchFolders();
    try {
      ExtractArchive(archive);
      ADD_FAILURE() << archive << " was unpacked";
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), code) << e.what();
      EXPECT_NE(std::string(e.what()).find(words), std::string::npos) << e.what();
    }
    EXPECT_EQ(OwnScratchFolders(), before) << "a scratch folder was left behind";
  }

  fs::path dir_;
};

const std::string kTrace =
    R"([{"ph":"X","cat":"cpu_op","name":"aten::mm","pid":1,"tid":1,"ts":0,"dur":5}])";

TEST_F(ArchiveInput, AFolderIsUnpackedWholeAndRemovedWithItsLastReader) {
  const fs::path zip = dir_ / "run.zip";
  WriteArchive(
      zip, {{"run/", "", AE_IFDIR}, {"run/rank0.json", kTrace}, {"run/sub/notes.txt", "hello"}});
  EXPECT_TRUE(IsArchiveOfFolder(zip));
  std::shared_ptr<const ExtractedArchive> a = ExtractArchive(zip);
  const fs::path root = a->root;
  EXPECT_EQ(Read(root / "run" / "rank0.json"), kTrace);
  EXPECT_EQ(Read(root / "run" / "sub" / "notes.txt"), "hello");
  EXPECT_EQ(a->Shown((root / "run" / "rank0.json").string()), zip.string() + "/run/rank0.json");
  EXPECT_EQ(a->Shown("/elsewhere/x.json"), "/elsewhere/x.json");
  a.reset();
  EXPECT_FALSE(fs::exists(root));
}

TEST_F(ArchiveInput, AZipOfOneFileIsThatFileNotAFolder) {
  const fs::path zip = dir_ / "t.json.zip";
  WriteArchive(zip, {{"t.json", kTrace}});
  EXPECT_FALSE(IsArchiveOfFolder(zip));
  fs::create_directories(dir_ / "plain");
  std::ofstream(dir_ / "plain" / "t.json") << kTrace;
  EXPECT_FALSE(IsArchiveOfFolder(dir_ / "plain" / "t.json"));
  EXPECT_FALSE(IsArchiveOfFolder(dir_ / "plain"));
}

TEST_F(ArchiveInput, ATarGzOfAFolderIsUnpacked) {
  const fs::path tgz = dir_ / "ranks.tar.gz";
  WriteArchive(tgz, {{"ranks/rank0.json", kTrace}, {"ranks/rank1.json", kTrace}}, Kind::kTarGz);
  EXPECT_TRUE(IsArchiveOfFolder(tgz));
  const auto a = ExtractArchive(tgz);
  EXPECT_EQ(Read(a->root / "ranks" / "rank1.json"), kTrace);
}

TEST_F(ArchiveInput, PathsThatLeaveTheFolderAreRefusedAndNothingIsWritten) {
  for (const std::string name :
       {"../evil.json", "run/../../evil.json", "/tmp/evil.json", "..\\evil.json", "run/..", ".."}) {
    SCOPED_TRACE(name);
    const fs::path zip = dir_ / "slip.zip";
    WriteArchive(zip, {{"run/ok.json", kTrace}, {name, "pwned"}});
    ExpectRefused(zip, ErrorCode::kInvalidInput, "leaves its folder");
    EXPECT_FALSE(fs::exists(fs::temp_directory_path() / "evil.json"));
    EXPECT_FALSE(fs::exists(dir_ / "evil.json"));
  }
}

TEST_F(ArchiveInput, LinksAreListedNotFollowed) {
  const fs::path zip = dir_ / "links.zip";
  WriteArchive(zip, {{"run/rank0.json", kTrace}, {"run/passwd", "", AE_IFLNK, "/etc/passwd"}});
  const auto a = ExtractArchive(zip);
  EXPECT_TRUE(fs::exists(a->root / "run" / "rank0.json"));
  EXPECT_FALSE(fs::exists(fs::symlink_status(a->root / "run" / "passwd")));
  ASSERT_EQ(a->skipped.size(), 1u);
  EXPECT_EQ(a->skipped[0].first, zip.string() + "/run/passwd");
  EXPECT_NE(a->skipped[0].second.find("symbolic link"), std::string::npos);
}

TEST_F(ArchiveInput, AnEntryNamedTwiceIsRefused) {
  const fs::path zip = dir_ / "twice.zip";
  WriteArchive(zip, {{"run/a.json", kTrace}, {"run/a.json", "[]"}});
  ExpectRefused(zip, ErrorCode::kInvalidInput, "named twice");
}

TEST_F(ArchiveInput, ABombIsStoppedAtTheBound) {
  // 1 MiB of zeros per entry deflates to about 1 KiB: the bound, 200 times the
  // archive plus 256 MiB (under 400 MiB), is reached before the 450 entries'
  // 450 MiB are written.
  const fs::path zip = dir_ / "bomb.zip";
  std::vector<Entry> entries;
  const std::string zeros(1 << 20, '\0');
  for (int i = 0; i < 450; ++i) entries.push_back({"bomb/" + std::to_string(i), zeros});
  WriteArchive(zip, entries);
  ASSERT_LT(fs::file_size(zip), uint64_t{8} << 20);
  ExpectRefused(zip, ErrorCode::kInvalidInput, "unpacks to more than");
}

TEST_F(ArchiveInput, CorruptArchivesNameTheArchive) {
  const fs::path zip = dir_ / "cut.zip";
  WriteArchive(zip, {{"run/a.json", std::string(100000, 'x')}, {"run/b.json", kTrace}});
  const std::string whole = Read(zip);
  std::ofstream(zip, std::ios::binary | std::ios::trunc) << whole.substr(0, whole.size() / 2);
  try {
    if (IsArchiveOfFolder(zip)) ExtractArchive(zip);
    ADD_FAILURE() << "a truncated archive was read";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::kInvalidInput) << e.what();
    EXPECT_NE(std::string(e.what()).find("cut.zip"), std::string::npos) << e.what();
  }
  EXPECT_EQ(OwnScratchFolders(), 0);
}

TEST_F(ArchiveInput, ScratchFoldersOfEndedProcessesAreSwept) {
  // A pid above the kernel's maximum (pid_max is at most 2^22) never runs.
  const fs::path stale = dir_ / "opscope-archive-99999999-abcdef";
  const fs::path live = dir_ / ("opscope-archive-" + std::to_string(::getpid()) + "-abcdef");
  const fs::path other = dir_ / "opscope-archive-notapid-x";
  for (const fs::path& p : {stale, live, other}) fs::create_directories(p / "inside");
  EXPECT_EQ(SweepStaleArchives(dir_), 1);
  EXPECT_FALSE(fs::exists(stale));
  EXPECT_TRUE(fs::exists(live));
  EXPECT_TRUE(fs::exists(other));
}

TEST_F(ArchiveInput, TraceInputsOfAnArchiveAreShownInsideItAndKeepItsFolder) {
  const fs::path zip = dir_ / "ranks.zip";
  WriteArchive(zip, {{"ranks/rank0.json", kTrace},
                     {"ranks/rank1.json", kTrace},
                     {"ranks/link", "", AE_IFLNK, "rank0.json"}});
  TraceInputs found = FindTraceInputs({(dir_ / "ranks.zip").string()});
  ASSERT_EQ(found.traces.size(), 2u);
  EXPECT_EQ(found.traces[0].Shown(), zip.string() + "/ranks/rank0.json");
  EXPECT_EQ(found.traces[1].Shown(), zip.string() + "/ranks/rank1.json");
  EXPECT_EQ(Read(found.traces[0].path), kTrace);
  ASSERT_EQ(found.unused.size(), 1u);
  EXPECT_EQ(found.unused[0].path, zip.string() + "/ranks/link");
  EXPECT_EQ(found.traces[0].Reworded("cannot read '" + found.traces[0].path + "' at byte 3"),
            "cannot read '" + zip.string() + "/ranks/rank0.json' at byte 3");
  // The folder lives as long as any trace of it does.
  TraceInput kept = found.traces[1];
  const fs::path file = kept.path;
  found = {};
  EXPECT_TRUE(fs::exists(file));
  kept = {};
  EXPECT_FALSE(fs::exists(file));
}

}  // namespace
}  // namespace opscope::analyze
