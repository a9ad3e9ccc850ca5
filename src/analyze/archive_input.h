// An archive of an output folder (a zipped *_ascend_pt folder, a tar.gz of a
// folder of rank traces) unpacked into a private scratch folder, read there as
// the folder it was, and removed when the last reader lets go of it.
//
// What the archive may hold is bounded: entries at most kMaxArchiveEntries, the
// unpacked bytes at most the free space of the scratch folder, 64 GiB, and
// kMaxArchiveRatio times the archive's size plus 256 MiB (zip bombs); each
// entry's path is relative and stays inside the folder (no absolute path, no
// "..": zip slip), and only files and folders are unpacked (links, devices and
// FIFOs are listed as not read). A zip of one file is not an archive of a
// folder: it is read as that file (Source).
#ifndef OPSCOPE_ANALYZE_ARCHIVE_INPUT_H_
#define OPSCOPE_ANALYZE_ARCHIVE_INPUT_H_

#include <cstdint>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

namespace opscope::analyze {

inline constexpr uint64_t kMaxArchiveEntries = 200'000;
inline constexpr uint64_t kMaxArchiveRatio = 200;

struct ExtractedArchive {
  std::filesystem::path archive;  // as given
  std::filesystem::path root;     // the scratch folder it was unpacked into
  // Entries not unpacked, with why ("a symbolic link: not followed").
  std::vector<std::pair<std::string, std::string>> skipped;

  ExtractedArchive() = default;
  ExtractedArchive(const ExtractedArchive&) = delete;
  ExtractedArchive& operator=(const ExtractedArchive&) = delete;
  ~ExtractedArchive();  // removes root

  // `path` under root as the user knows it: "run.zip/rank0_ascend_pt/x.json";
  // any other path unchanged.
  std::string Shown(const std::string& path) const;
};

// True for a file that is an archive of several files or of a folder: a zip
// with more than one entry or with a folder in it, or a tar (.tar, .tar.gz,
// .tgz). False for anything else (a folder, a plain or gzip trace, a zip of
// one file). Throws Error(kIo) when the file cannot be read.
bool IsArchiveOfFolder(const std::filesystem::path& path);

// Unpacks it (see above). Throws Error(kInvalidInput) for a corrupt archive,
// an entry that would land outside the folder, one named twice, or more than
// the bounds allow; Error(kUnsupported) for an encrypted entry; Error(kIo) when
// the scratch folder cannot be written. Nothing is left behind on error.
std::shared_ptr<const ExtractedArchive> ExtractArchive(const std::filesystem::path& path);

// Removes scratch folders of archives left by processes that no longer run
// (a killed analysis); returns how many. ExtractArchive calls it.
int SweepStaleArchives(const std::filesystem::path& scratch_parent);

}  // namespace opscope::analyze

#endif  // OPSCOPE_ANALYZE_ARCHIVE_INPUT_H_
