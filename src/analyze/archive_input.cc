#include "analyze/archive_input.h"

#include <archive.h>
#include <archive_entry.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <optional>

#include "core/text.h"
#include "opscope/opscope.h"

namespace opscope::analyze {
namespace {

namespace fs = std::filesystem;

constexpr std::string_view kScratchPrefix = "opscope-archive-";
constexpr uint64_t kMaxArchiveBytes = uint64_t{64} << 30;
constexpr uint64_t kArchiveSlackBytes = uint64_t{256} << 20;

std::string Quoted(const std::string& s) { return "'" + core::EscapeForTerminal(s) + "'"; }

bool HasTarName(const fs::path& path) {
  const std::string name = path.filename().string();
  for (const std::string_view suffix : {".tar", ".tar.gz", ".tgz"}) {
    if (name.size() > suffix.size() && name.ends_with(suffix)) return true;
  }
  return false;
}

// A libarchive reader of zip and tar (plain or gzip), closed on scope exit.
class Reader {
 public:
  explicit Reader(const fs::path& path) : path_(path), a_(archive_read_new()) {
    if (a_ == nullptr) throw std::bad_alloc();
    archive_read_support_format_zip(a_);
    archive_read_support_format_tar(a_);
    archive_read_support_filter_gzip(a_);
    if (archive_read_open_filename(a_, path.c_str(), 1 << 16) != ARCHIVE_OK) {
      const int error = archive_errno(a_);
      const std::string why = Why();
      archive_read_free(a_);
      a_ = nullptr;
      throw Error(error == ENOENT || error == EACCES ? ErrorCode::kIo : ErrorCode::kInvalidInput,
                  "cannot read the archive " + Quoted(path.string()) + ": " + why);
    }
  }
  ~Reader() {
    if (a_ != nullptr) archive_read_free(a_);
  }
  Reader(const Reader&) = delete;
  Reader& operator=(const Reader&) = delete;

  // The next entry, or nullptr at the end. Throws for a corrupt archive.
  archive_entry* Next() {
    archive_entry* entry = nullptr;
    const int r = archive_read_next_header(a_, &entry);
    if (r == ARCHIVE_EOF) return nullptr;
    if (r < ARCHIVE_WARN) Fail("after entry " + std::to_string(entries_));
    ++entries_;
    return entry;
  }
  // Reads the current entry's data.
  la_ssize_t Read(char* buffer, size_t n) {
    const la_ssize_t got = archive_read_data(a_, buffer, n);
    if (got < 0) Fail("in entry " + std::to_string(entries_));
    return got;
  }
  [[noreturn]] void Fail(const std::string& where) const {
    throw Error(ErrorCode::kInvalidInput,
                "the archive " + Quoted(path_.string()) + " is corrupt " + where + ": " + Why());
  }

 private:
  std::string Why() const {
    const char* s = a_ != nullptr ? archive_error_string(a_) : nullptr;
    return s != nullptr ? s : "unreadable";
  }
  fs::path path_;
  archive* a_;
  uint64_t entries_ = 0;
};

std::string EntryName(archive_entry* entry) {
  const char* utf8 = archive_entry_pathname_utf8(entry);
  const char* name = utf8 != nullptr ? utf8 : archive_entry_pathname(entry);
  return name != nullptr ? name : "";
}

// The entry's path inside the folder, or nullopt for one that would leave it.
// Backslashes count as separators (archives written on Windows use them).
std::optional<fs::path> Inside(const std::string& name) {
  if (name.empty() || name.front() == '/' || name.front() == '\\') return std::nullopt;
  fs::path out;
  size_t start = 0;
  while (start <= name.size()) {
    size_t end = name.find_first_of("/\\", start);
    if (end == std::string::npos) end = name.size();
    const std::string part = name.substr(start, end - start);
    if (part == "..") return std::nullopt;
    if (!part.empty() && part != ".") out /= part;
    start = end + 1;
  }
  if (out.empty()) return std::nullopt;
  return out;
}

bool Alive(pid_t pid) { return ::kill(pid, 0) == 0 || errno == EPERM; }

void WriteAll(int fd, const char* data, size_t n, const fs::path& where) {
  while (n > 0) {
    const ssize_t w = ::write(fd, data, n);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) {
      throw Error(ErrorCode::kIo,
                  "cannot unpack into " + Quoted(where.string()) + ": " + std::strerror(errno));
    }
    data += w;
    n -= static_cast<size_t>(w);
  }
}

}  // namespace

ExtractedArchive::~ExtractedArchive() {
  if (root.empty()) return;
  std::error_code ignored;
  fs::remove_all(root, ignored);
}

std::string ExtractedArchive::Shown(const std::string& path) const {
  const std::string prefix = root.string() + "/";
  if (path.rfind(prefix, 0) != 0) return path == root.string() ? archive.string() : path;
  return archive.string() + "/" + path.substr(prefix.size());
}

bool IsArchiveOfFolder(const fs::path& path) {
  std::error_code ec;
  if (!fs::is_regular_file(path, ec)) return false;
  if (HasTarName(path)) return true;
  char magic[4] = {};
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return false;  // opened again by the importer, which names the error
  const ssize_t got = ::read(fd, magic, 4);
  ::close(fd);
  if (got != 4 || std::memcmp(magic, "PK\x03\x04", 4) != 0) return false;
  Reader reader(path);
  int files = 0;
  while (archive_entry* entry = reader.Next()) {
    const std::string name = EntryName(entry);
    if (archive_entry_filetype(entry) == AE_IFDIR ||
        name.find_first_of("/\\") != std::string::npos || ++files > 1) {
      return true;
    }
  }
  return false;
}

int SweepStaleArchives(const fs::path& scratch_parent) {
  int removed = 0;
  std::error_code ec;
  for (fs::directory_iterator it(scratch_parent, ec), end; !ec && it != end; it.increment(ec)) {
    const std::string name = it->path().filename().string();
    if (name.rfind(kScratchPrefix, 0) != 0) continue;
    const std::string rest = name.substr(kScratchPrefix.size());
    const size_t dash = rest.find('-');
    if (dash == 0 || dash == std::string::npos ||
        !std::all_of(rest.begin(), rest.begin() + static_cast<long>(dash),
                     [](char c) { return c >= '0' && c <= '9'; })) {
      continue;
    }
    const long pid = std::strtol(rest.substr(0, dash).c_str(), nullptr, 10);
    if (pid <= 0 || Alive(static_cast<pid_t>(pid))) continue;
    std::error_code ignored;
    if (fs::remove_all(it->path(), ignored) > 0 && !ignored) ++removed;
  }
  return removed;
}

std::shared_ptr<const ExtractedArchive> ExtractArchive(const fs::path& path) {
  std::error_code ec;
  const uint64_t archive_size = fs::file_size(path, ec);
  if (ec) throw Error(ErrorCode::kIo, "cannot read " + Quoted(path.string()) + ": " + ec.message());
  const fs::path parent = fs::temp_directory_path(ec);
  if (ec) {
    const char* tmpdir = std::getenv("TMPDIR");
    throw Error(ErrorCode::kIo,
                "no folder for temporary files to unpack " + Quoted(path.string()) + " into" +
                    (tmpdir != nullptr ? " (TMPDIR is " + Quoted(tmpdir) + ")" : std::string()) +
                    ": " + ec.message());
  }
  SweepStaleArchives(parent);

  auto out = std::make_shared<ExtractedArchive>();
  out->archive = path;
  std::string pattern =
      (parent / (std::string(kScratchPrefix) + std::to_string(::getpid()) + "-XXXXXX")).string();
  if (::mkdtemp(pattern.data()) == nullptr) {
    throw Error(ErrorCode::kIo, "cannot create a folder in " + Quoted(parent.string()) +
                                    " to unpack " + Quoted(path.string()) + ": " +
                                    std::strerror(errno));
  }
  out->root = pattern;  // removed with `out` from here on, on error too

  const fs::space_info space = fs::space(out->root, ec);
  uint64_t limit = std::min(kMaxArchiveBytes, archive_size * kMaxArchiveRatio + kArchiveSlackBytes);
  const bool space_bound = !ec && space.available < limit;
  if (space_bound) limit = space.available;
  const auto too_big = [&](const std::string& entry) {
    return Error(ErrorCode::kInvalidInput,
                 "the archive " + Quoted(path.string()) + " unpacks to more than " +
                     std::to_string(limit >> 20) + " MiB (at entry " + Quoted(entry) + "; " +
                     (space_bound ? "the free space of " + Quoted(parent.string())
                                  : "at most " + std::to_string(kMaxArchiveRatio) +
                                        " times its own size plus 256 MiB, or 64 GiB") +
                     "): unpack it yourself where there is room and pass the folder");
  };

  Reader reader(path);
  uint64_t entries = 0, total = 0;
  std::vector<char> buffer(1 << 16);
  while (archive_entry* entry = reader.Next()) {
    const std::string name = EntryName(entry);
    if (++entries > kMaxArchiveEntries) {
      throw Error(ErrorCode::kInvalidInput, "the archive " + Quoted(path.string()) +
                                                " holds more than " +
                                                std::to_string(kMaxArchiveEntries) + " entries");
    }
    const std::optional<fs::path> inside = Inside(name);
    if (!inside) {
      throw Error(ErrorCode::kInvalidInput,
                  "the archive " + Quoted(path.string()) + " has an entry, " + Quoted(name) +
                      ", whose path leaves its folder (absolute or with '..'); nothing was read");
    }
    if (archive_entry_is_encrypted(entry)) {
      throw Error(ErrorCode::kUnsupported, "the archive " + Quoted(path.string()) +
                                               " is encrypted (entry " + Quoted(name) + ")");
    }
    const fs::path target = out->root / *inside;
    const mode_t type = archive_entry_filetype(entry);
    if (type == AE_IFDIR) {
      fs::create_directories(target, ec);
      if (ec) {
        throw Error(ErrorCode::kInvalidInput, "the archive " + Quoted(path.string()) +
                                                  ": cannot make the folder " + Quoted(name) +
                                                  ": " + ec.message());
      }
      continue;
    }
    if (type != AE_IFREG) {
      out->skipped.emplace_back(path.string() + "/" + inside->string(),
                                type == AE_IFLNK ? "a symbolic link in the archive: not followed"
                                                 : "not a regular file in the archive: not read");
      continue;
    }
    fs::create_directories(target.parent_path(), ec);
    const int fd =
        ec ? -1
           : ::open(target.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
    if (fd < 0) {
      throw Error(ErrorCode::kInvalidInput,
                  "the archive " + Quoted(path.string()) + ": cannot unpack " + Quoted(name) +
                      ": " +
                      (ec                ? ec.message()
                       : errno == EEXIST ? std::string("it is named twice")
                                         : std::string(std::strerror(errno))));
    }
    struct Close {
      int fd;
      ~Close() { ::close(fd); }
    } closer{fd};
    for (;;) {
      const la_ssize_t got = reader.Read(buffer.data(), buffer.size());
      if (got == 0) break;
      total += static_cast<uint64_t>(got);
      if (total > limit) throw too_big(name);
      WriteAll(fd, buffer.data(), static_cast<size_t>(got), target);
    }
  }
  return out;
}

}  // namespace opscope::analyze
