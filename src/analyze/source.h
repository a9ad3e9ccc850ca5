// The byte stream under every importer: a file, a pipe or standard input ("-"),
// opened once and decompressed when it is a container (gzip, or a zip archive
// holding one file), so that every importer reads every container the same
// way. Sniffers look at the first bytes with Peek, as far as they need (up to
// kMaxPeekBytes); the importer then reads the same bytes again from the start,
// so a pipe is never opened twice.
//
// Errors: Error(kIo) when the input cannot be opened or read, Error(kInvalidInput)
// naming the input for a corrupt container (bad gzip data, an unsupported zip).
#ifndef OPSCOPE_ANALYZE_SOURCE_H_
#define OPSCOPE_ANALYZE_SOURCE_H_

#include <cstdint>
#include <filesystem>
#include <memory>
#include <string>
#include <string_view>

namespace opscope::analyze {

// The most a sniffer may look ahead: past it, an input is not recognised.
constexpr size_t kMaxPeekBytes = size_t{16} << 20;

enum class Container { kPlain, kGzip, kZip };
const char* Name(Container container);

class Source {
 public:
  // "-" is standard input. A folder is refused (Error(kUnsupported)).
  static std::unique_ptr<Source> Open(const std::filesystem::path& path);
  // Bytes already in memory (tests, fuzzers, summaries held compressed),
  // read as if they were a file's: gzip and zip decoded.
  static std::unique_ptr<Source> FromBytes(std::string name, std::string bytes);

  virtual ~Source();
  Source(const Source&) = delete;
  Source& operator=(const Source&) = delete;

  // The name errors use: the path, or "standard input".
  const std::string& name() const { return name_; }
  Container container() const { return container_; }

  // Up to n of the first (decompressed) bytes, fewer only at the end of the
  // data; n is capped at kMaxPeekBytes. Only before the first Read.
  std::string_view Peek(size_t n);
  // True when Peek has seen the whole input.
  bool PeekedAll() const { return peeked_all_; }

  // Fills `out` with up to n bytes from the current position (the start, for
  // the first call, whatever was peeked); fewer only at the end.
  size_t Read(char* out, size_t n);

  // The decompressed size as far as it can be known up front (a regular
  // file's size, a gzip trailer's hint); 0 when unknown. For reserving memory.
  uint64_t expected_bytes() const { return expected_bytes_; }

 protected:
  Source(std::string name, Container container) : name_(std::move(name)), container_(container) {}
  // The next decompressed bytes; 0 only at the end.
  virtual size_t ReadDecoded(char* out, size_t n) = 0;
  uint64_t expected_bytes_ = 0;

 private:
  // Fills `out` completely unless the data ends.
  size_t ReadFull(char* out, size_t n);

  std::string name_;
  Container container_;
  std::string peeked_;       // the first bytes, kept until Read has passed them
  size_t peek_read_ = 0;     // how many of them Read has returned
  bool peeked_all_ = false;  // the data ended (seen by Peek, or by Read)
  bool reading_ = false;
};

}  // namespace opscope::analyze

#endif  // OPSCOPE_ANALYZE_SOURCE_H_
