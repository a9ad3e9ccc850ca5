// Buffered output streams. Writers append to buffer() and call MaybeFlush(), so no
// output is ever held whole in memory.
#ifndef OPSCOPE_CORE_OUTPUT_H_
#define OPSCOPE_CORE_OUTPUT_H_

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace opscope::core {

class OutputStream {
 public:
  static constexpr size_t kFlushBytes = size_t{1} << 20;

  virtual ~OutputStream() = default;
  std::string& buffer() { return buffer_; }
  void MaybeFlush() {
    if (buffer_.size() >= kFlushBytes) Flush();
  }
  void Flush() {
    if (!buffer_.empty()) WriteOut(buffer_);
    buffer_.clear();
  }

 protected:
  virtual void WriteOut(std::string_view bytes) = 0;

 private:
  std::string buffer_;
};

class StringOutput final : public OutputStream {
 public:
  // Flushes and returns everything written so far.
  const std::string& str() {
    Flush();
    return text_;
  }

 private:
  void WriteOut(std::string_view bytes) override { text_.append(bytes); }
  std::string text_;
};

// A file that appears at its final path only when complete: bytes go to a temporary
// file beside it, which Commit() flushes, fsyncs and renames into place. Destroyed
// without Commit(), the temporary file is removed and the final path is untouched.
// With gzip, the bytes are deflated in the gzip format on the way. A final path
// that is a character device (/dev/null) or a FIFO is written directly, never
// replaced; any other target that is not a regular file (a folder, a socket, a
// block device) is refused with Error(kIo).
class AtomicFileOutput final : public OutputStream {
 public:
  // Throws Error(kIo) naming the path when the file cannot be created.
  AtomicFileOutput(std::filesystem::path final_path, bool gzip);
  ~AtomicFileOutput() override;
  AtomicFileOutput(const AtomicFileOutput&) = delete;
  AtomicFileOutput& operator=(const AtomicFileOutput&) = delete;

  void Commit();
  const std::filesystem::path& final_path() const { return final_path_; }
  const std::filesystem::path& temp_path() const { return temp_path_; }

 private:
  struct Deflater;
  void WriteOut(std::string_view bytes) override;
  void WriteRaw(const char* data, size_t size);
  void Fail(const char* what);

  std::filesystem::path final_path_;
  std::filesystem::path temp_path_;  // empty when writing directly
  bool direct_ = false;              // a character device or FIFO
  int temp_slot_ = -1;               // where a signal handler finds temp_path_
  int fd_ = -1;
  int lock_fd_ = -1;  // holds the temporary file's lock (SweepStaleTempFiles)
  std::unique_ptr<Deflater> deflater_;
  bool committed_ = false;
};

// Killed writers must not leave temporary files behind. InstallTempFileCleanup
// makes SIGINT, SIGTERM and SIGHUP (where they still have their default
// action) remove the temporary files being written, then end the process by
// the same signal. RemoveTempFilesForSignal does the removal and is
// async-signal-safe, for handlers of their own. SweepStaleTempFiles removes a
// folder's temporary files whose writers are gone (a SIGKILL leaves them);
// every AtomicFileOutput does so in its folder. Returns the count. A temporary
// file is named .<name>.tmp.<pid>.<n>.<random>.<mark>, the mark a hash of the
// rest (TempPathFor), and its writer holds a lock on it until it is renamed
// or removed: the sweep removes only files so named, nobody locks, and
// unchanged for `grace` (2 s: a writer locks its file as it creates it), so a
// user's file of the same shape and the file of a writer in another PID
// namespace stay.
void InstallTempFileCleanup();
void RemoveTempFilesForSignal() noexcept;
int SweepStaleTempFiles(const std::filesystem::path& folder);
int SweepStaleTempFiles(const std::filesystem::path& folder, std::chrono::seconds grace);
std::filesystem::path TempPathFor(const std::filesystem::path& final_path, long pid);

// The command's own inputs, which no output may replace. Every trace or side
// file the analyzer opens (analyze/source.h) and every folder it is given is
// registered, by device and inode (so another spelling or a hard link of the
// same file is the same input); AtomicFileOutput refuses a final path that is
// one of them, when it is made and again before it renames into place, and
// a command that writes a folder calls RefuseInputAsOutput on it first.
// Regular files and folders only: a device or FIFO is written in place.
void ProtectInput(const std::filesystem::path& path);
// The same for an open descriptor: standard input ("-") is an input too, so
// `analyze - --out F < F` never replaces F.
void ProtectInput(int fd);
// Throws Error(kInvalidArgument) naming `path` when it is a protected input.
void RefuseInputAsOutput(const std::filesystem::path& path);
// Forgets the inputs registered so far: a library call that starts a new
// command (AnalyzeFiles, DiffFiles) begins with its own, so a long-lived
// process (Python) neither refuses an earlier command's input nor a new file
// that reuses a deleted one's inode.
void ForgetInputs();

// Writes `files` (name, bytes) as the whole content of `folder` (a report's
// tables/): into a new folder beside it, which then takes its place. A
// symbolic link at `folder` is removed, never written through; an earlier
// folder there (an earlier run's files) is removed after the swap: the folder
// holds one run's files, never a mix. Throws Error(kIo) naming the path that
// failed; `folder` is then as it was.
void WriteFolderWhole(const std::filesystem::path& folder,
                      const std::vector<std::pair<std::string, std::string>>& files);

// True when the path names a gzip file by its extension.
bool HasGzipExtension(const std::filesystem::path& path);

}  // namespace opscope::core

#endif  // OPSCOPE_CORE_OUTPUT_H_
