#include "core/output.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <mutex>
#include <random>
#include <set>
#include <string>

#include "opscope/opscope.h"

namespace opscope::core {

struct AtomicFileOutput::Deflater {
  z_stream stream{};
  std::string out;
};

namespace {

// The mark that ends an opscope temporary file's name: a hash of the rest of
// the name (FNV-1a, 32 bits, in 8 hex digits), so a user's file that merely
// has the shape of one is told apart.
std::string TempMark(std::string_view name) {
  uint32_t h = 2166136261u;
  for (const char c : std::string_view("opscope temporary file ")) h = (h ^ uint8_t(c)) * 16777619u;
  for (const char c : name) h = (h ^ static_cast<uint8_t>(c)) * 16777619u;
  char hex[9];
  std::snprintf(hex, sizeof(hex), "%08x", h);
  return hex;
}

// Whether `name` is an opscope temporary file's: .<name>.tmp.<pid>.<n>.<r>.<mark>.
bool IsTempName(const std::string& name) {
  if (name.size() < 2 || name[0] != '.') return false;
  const size_t dot = name.rfind('.');
  if (dot == std::string::npos || name.size() - dot - 1 != 8) return false;
  size_t end = dot;
  for (int k = 0; k < 3; ++k) {  // <r>, <n>, <pid>: digits
    const size_t before = name.rfind('.', end - 1);
    if (before == std::string::npos || before + 1 == end ||
        name.find_first_not_of("0123456789", before + 1) < end) {
      return false;
    }
    end = before;
  }
  if (end < 4 || name.compare(end - 4, 4, ".tmp") != 0) return false;
  return name.compare(dot + 1, 8, TempMark(std::string_view(name).substr(0, dot))) == 0;
}

// A temporary file's writer holds a lock on it (flock, on a descriptor of its
// own kept until the file is renamed or removed); the sweep removes only files
// nobody holds, which a writer in another PID namespace holds too. A file
// younger than this is left alone: its writer may not have locked it yet.
constexpr auto kTempGrace = std::chrono::seconds(2);

// Temporary files being written, kept where a signal handler can reach them
// without allocating: paths in fixed slots, claimed and released atomically.
constexpr int kTempSlots = 64;
struct TempSlot {
  std::atomic<bool> used{false};
  char path[4096] = {};
};
TempSlot g_temp_slots[kTempSlots];

int ClaimTempSlot(const std::filesystem::path& path) {
  const std::string& text = path.native();
  if (text.size() >= sizeof(TempSlot::path)) return -1;
  for (int i = 0; i < kTempSlots; ++i) {
    bool expected = false;
    if (g_temp_slots[i].used.load(std::memory_order_relaxed)) continue;
    // Claimed first, then filled; a handler that runs in between removes
    // nothing there (an empty path), which is harmless.
    if (g_temp_slots[i].used.compare_exchange_strong(expected, true)) {
      g_temp_slots[i].path[0] = '\0';
      std::memcpy(g_temp_slots[i].path, text.c_str(), text.size() + 1);
      return i;
    }
  }
  return -1;  // more than 64 at once: not removed on a signal, still swept later
}

void ReleaseTempSlot(int slot) {
  if (slot < 0) return;
  g_temp_slots[slot].path[0] = '\0';
  g_temp_slots[slot].used.store(false, std::memory_order_release);
}

void RemoveTempFilesAndDie(int signal_number) {
  RemoveTempFilesForSignal();
  ::signal(signal_number, SIG_DFL);
  ::raise(signal_number);
}

}  // namespace

std::filesystem::path TempPathFor(const std::filesystem::path& final_path, long pid) {
  static std::atomic<uint64_t> counter{0};
  std::random_device device;
  const std::string numbers = ".tmp." + std::to_string(pid) + "." +
                              std::to_string(counter.fetch_add(1)) + "." +
                              std::to_string(device() & 0xFFFFFF);
  // A file name holds 255 bytes at most (NAME_MAX): a final name that long
  // has its temporary's copy of it shortened (at a UTF-8 character's start),
  // the suffix that the sweep reads kept whole.
  std::string base = final_path.filename().string();
  constexpr size_t kNameMax = 255, kMark = 9;  // the mark and its dot
  if (1 + base.size() + numbers.size() + kMark > kNameMax) {
    size_t keep = kNameMax - 1 - numbers.size() - kMark;
    while (keep > 0 && (static_cast<unsigned char>(base[keep]) & 0xC0) == 0x80) --keep;
    base.resize(keep);
  }
  const std::string name = "." + base + numbers;
  return final_path.parent_path() / (name + "." + TempMark(name));
}

void RemoveTempFilesForSignal() noexcept {
  for (TempSlot& slot : g_temp_slots) {
    if (slot.used.load(std::memory_order_acquire) && slot.path[0] != '\0') ::unlink(slot.path);
  }
}

void InstallTempFileCleanup() {
  for (const int signal_number : {SIGINT, SIGTERM, SIGHUP}) {
    struct sigaction current {};
    if (::sigaction(signal_number, nullptr, &current) != 0) continue;
    if (current.sa_handler != SIG_DFL) continue;  // ignored or handled already: left alone
    struct sigaction action {};
    action.sa_handler = RemoveTempFilesAndDie;
    sigemptyset(&action.sa_mask);
    ::sigaction(signal_number, &action, nullptr);
  }
}

int SweepStaleTempFiles(const std::filesystem::path& folder) {
  return SweepStaleTempFiles(folder, kTempGrace);
}

int SweepStaleTempFiles(const std::filesystem::path& folder, std::chrono::seconds grace) {
  int removed = 0;
  std::error_code ec;
  const auto now = std::chrono::system_clock::now();
  for (std::filesystem::directory_iterator it(folder.empty() ? "." : folder, ec), end;
       !ec && it != end; it.increment(ec)) {
    if (!IsTempName(it->path().filename().string())) continue;
    const int fd = ::open(it->path().c_str(), O_RDONLY | O_NONBLOCK | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0) continue;
    struct stat st {};
    const bool stale = ::fstat(fd, &st) == 0 && S_ISREG(st.st_mode) &&
                       now - std::chrono::system_clock::from_time_t(st.st_mtime) >= grace &&
                       ::flock(fd, LOCK_EX | LOCK_NB) == 0;  // nobody writes it: its writer is gone
    // Removed while locked, so no writer can claim it in between.
    if (stale && ::unlink(it->path().c_str()) == 0) ++removed;
    ::close(fd);
  }
  return removed;
}

bool HasGzipExtension(const std::filesystem::path& path) { return path.extension() == ".gz"; }

void WriteFolderWhole(const std::filesystem::path& folder,
                      const std::vector<std::pair<std::string, std::string>>& files) {
  namespace fs = std::filesystem;
  RefuseInputAsOutput(folder);
  const fs::path parent = folder.parent_path().empty() ? fs::path(".") : folder.parent_path();
  const std::string mark = "." + folder.filename().string() + "." + std::to_string(::getpid());
  const fs::path fresh = parent / (mark + ".new"), old = parent / (mark + ".old");
  std::error_code ec;
  fs::remove_all(fresh, ec);
  fs::remove_all(old, ec);
  if (!fs::create_directory(fresh, ec)) {
    throw Error(ErrorCode::kIo, "cannot create '" + fresh.string() +
                                    "': " + (ec ? ec.message() : std::string("it exists")));
  }
  try {
    for (const auto& [name, bytes] : files) {
      AtomicFileOutput file(fresh / name, false);
      file.buffer() = bytes;
      file.Commit();
    }
    const fs::file_status status = fs::symlink_status(folder, ec);
    ec.clear();  // not there: nothing to replace
    if (fs::is_symlink(status)) {
      fs::remove(folder, ec);  // the link itself, never what it points to
    } else if (fs::exists(status)) {
      if (!fs::is_directory(status)) {
        throw Error(ErrorCode::kIo, "cannot write '" + folder.string() + "': not a folder");
      }
      fs::rename(folder, old, ec);
    }
    if (ec)
      throw Error(ErrorCode::kIo, "cannot replace '" + folder.string() + "': " + ec.message());
    fs::rename(fresh, folder, ec);
    if (ec) {
      std::error_code back;
      if (fs::exists(old, back)) fs::rename(old, folder, back);
      throw Error(ErrorCode::kIo, "cannot write '" + folder.string() + "': " + ec.message());
    }
  } catch (...) {
    fs::remove_all(fresh, ec);
    throw;
  }
  fs::remove_all(old, ec);
}

namespace {

std::mutex g_inputs_mutex;
std::set<std::pair<dev_t, ino_t>> g_inputs;  // ProtectInput's files and folders

bool IsProtected(const struct stat& st) {
  if (!S_ISREG(st.st_mode) && !S_ISDIR(st.st_mode)) return false;
  std::lock_guard lock(g_inputs_mutex);
  return g_inputs.count({st.st_dev, st.st_ino}) > 0;
}

}  // namespace

void ProtectInput(const std::filesystem::path& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0 || !(S_ISREG(st.st_mode) || S_ISDIR(st.st_mode))) return;
  std::lock_guard lock(g_inputs_mutex);
  g_inputs.insert({st.st_dev, st.st_ino});
}

void ProtectInput(int fd) {
  struct stat st {};
  if (::fstat(fd, &st) != 0 || !(S_ISREG(st.st_mode) || S_ISDIR(st.st_mode))) return;
  std::lock_guard lock(g_inputs_mutex);
  g_inputs.insert({st.st_dev, st.st_ino});
}

void ForgetInputs() {
  std::lock_guard lock(g_inputs_mutex);
  g_inputs.clear();
}

void RefuseInputAsOutput(const std::filesystem::path& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) == 0 && IsProtected(st)) {
    throw Error(ErrorCode::kInvalidArgument,
                "refusing to write '" + path.string() +
                    "': it is one of this command's inputs (name another output)");
  }
}

AtomicFileOutput::AtomicFileOutput(std::filesystem::path final_path, bool gzip)
    : final_path_(std::move(final_path)) {
  RefuseInputAsOutput(final_path_);
  // A character device (/dev/null, a terminal) or a FIFO is written into
  // directly: renaming a file over it would replace the device node. Any other
  // target that is not a regular file is refused.
  struct stat target {};
  const bool exists = ::stat(final_path_.c_str(), &target) == 0;
  if (exists && !S_ISREG(target.st_mode)) {
    if (!S_ISCHR(target.st_mode) && !S_ISFIFO(target.st_mode)) {
      throw Error(ErrorCode::kIo, "cannot write '" + final_path_.string() +
                                      "': it is not a regular file, a character device or a FIFO" +
                                      (S_ISDIR(target.st_mode) ? " (a folder)" : ""));
    }
    direct_ = true;
    fd_ = ::open(final_path_.c_str(), O_WRONLY | O_CLOEXEC);
    if (fd_ < 0) {
      throw Error(ErrorCode::kIo,
                  "cannot open '" + final_path_.string() + "': " + std::strerror(errno));
    }
  } else {
    // Temporary files left by killed writers (of processes that no longer run).
    SweepStaleTempFiles(final_path_.parent_path());
    temp_path_ = TempPathFor(final_path_, ::getpid());
    temp_slot_ = ClaimTempSlot(temp_path_);
    fd_ = ::open(temp_path_.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
    if (fd_ >= 0) {
      // The writer's claim, held until the file is renamed or removed (fd_ is
      // closed before the rename): the sweep of another process, in any PID
      // namespace, leaves a locked file alone.
      lock_fd_ = ::open(temp_path_.c_str(), O_RDONLY | O_CLOEXEC);
      if (lock_fd_ >= 0) (void)::flock(lock_fd_, LOCK_EX | LOCK_NB);
    }
    if (fd_ < 0) {
      ReleaseTempSlot(temp_slot_);
      temp_slot_ = -1;
      throw Error(ErrorCode::kIo, "cannot create '" + final_path_.string() + "' (temporary file '" +
                                      temp_path_.string() + "'): " + std::strerror(errno));
    }
    // A file it replaces keeps its permissions and, where this process may
    // give them, its owner and group.
    if (exists) {
      (void)::fchmod(fd_, target.st_mode & 07777);
      if (target.st_uid != ::geteuid() || target.st_gid != ::getegid()) {
        (void)::fchown(fd_, target.st_uid, target.st_gid);
      }
    }
  }
  if (gzip) {
    deflater_ = std::make_unique<Deflater>();
    // 15 + 16: a gzip header and trailer rather than a raw zlib stream.
    if (deflateInit2(&deflater_->stream, Z_DEFAULT_COMPRESSION, Z_DEFLATED, 15 + 16, 8,
                     Z_DEFAULT_STRATEGY) != Z_OK) {
      Fail("cannot initialise gzip compression for");
    }
    deflater_->out.resize(size_t{1} << 18);
  }
}

AtomicFileOutput::~AtomicFileOutput() {
  if (deflater_) deflateEnd(&deflater_->stream);
  if (fd_ >= 0) ::close(fd_);
  if (!committed_ && !direct_) ::unlink(temp_path_.c_str());
  if (lock_fd_ >= 0) ::close(lock_fd_);
  ReleaseTempSlot(temp_slot_);
}

void AtomicFileOutput::Fail(const char* what) {
  const std::string reason = std::strerror(errno);
  throw Error(ErrorCode::kIo, std::string(what) + " '" + final_path_.string() + "': " + reason);
}

void AtomicFileOutput::WriteRaw(const char* data, size_t size) {
  while (size > 0) {
    const ssize_t written = ::write(fd_, data, size);
    if (written < 0) {
      if (errno == EINTR) continue;
      Fail("cannot write");
    }
    data += written;
    size -= static_cast<size_t>(written);
  }
}

void AtomicFileOutput::WriteOut(std::string_view bytes) {
  if (committed_) throw Error(ErrorCode::kFailedPrecondition, "write after commit");
  if (!deflater_) {
    WriteRaw(bytes.data(), bytes.size());
    return;
  }
  z_stream& z = deflater_->stream;
  z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(bytes.data()));
  z.avail_in = static_cast<uInt>(bytes.size());
  while (z.avail_in > 0) {
    z.next_out = reinterpret_cast<Bytef*>(deflater_->out.data());
    z.avail_out = static_cast<uInt>(deflater_->out.size());
    if (deflate(&z, Z_NO_FLUSH) == Z_STREAM_ERROR) Fail("gzip compression failed for");
    WriteRaw(deflater_->out.data(), deflater_->out.size() - z.avail_out);
  }
}

void AtomicFileOutput::Commit() {
  Flush();
  if (deflater_) {
    z_stream& z = deflater_->stream;
    z.next_in = nullptr;
    z.avail_in = 0;
    int status = Z_OK;
    while (status != Z_STREAM_END) {
      z.next_out = reinterpret_cast<Bytef*>(deflater_->out.data());
      z.avail_out = static_cast<uInt>(deflater_->out.size());
      status = deflate(&z, Z_FINISH);
      if (status == Z_STREAM_ERROR) Fail("gzip compression failed for");
      WriteRaw(deflater_->out.data(), deflater_->out.size() - z.avail_out);
    }
  }
  // Devices and FIFOs may not support fsync (EINVAL); a regular file must.
  if (::fsync(fd_) != 0 && !(direct_ && (errno == EINVAL || errno == EROFS))) Fail("cannot flush");
  if (::close(fd_) != 0) {
    fd_ = -1;
    Fail("cannot close");
  }
  fd_ = -1;
  // The final path may have become an input's since (another output of the
  // same command, a link made meanwhile): checked again before replacing it.
  if (!direct_) {
    try {
      RefuseInputAsOutput(final_path_);
    } catch (...) {
      ::unlink(temp_path_.c_str());
      ReleaseTempSlot(temp_slot_);
      temp_slot_ = -1;
      committed_ = true;  // nothing left to remove
      throw;
    }
  }
  if (!direct_ && ::rename(temp_path_.c_str(), final_path_.c_str()) != 0) {
    Fail("cannot rename into");
  }
  committed_ = true;
  if (lock_fd_ >= 0) ::close(lock_fd_);
  lock_fd_ = -1;
  ReleaseTempSlot(temp_slot_);
  temp_slot_ = -1;
}

}  // namespace opscope::core
