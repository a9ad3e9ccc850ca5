#include "analyze/source.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <vector>

#include "core/cancel.h"
#include "core/output.h"
#include "opscope/opscope.h"

namespace opscope::analyze {

const char* Name(Container container) {
  switch (container) {
    case Container::kPlain: return "plain";
    case Container::kGzip: return "gzip";
    case Container::kZip: return "zip";
  }
  return "?";
}

namespace {

// The raw bytes of an open descriptor (file or pipe), with the few bytes read
// to recognise a container served again first.
class RawInput {
 public:
  RawInput(int fd, bool owned, std::string name) : fd_(fd), owned_(owned), name_(std::move(name)) {}
  // Bytes already in memory, served as a descriptor's would be.
  RawInput(std::string bytes, std::string name)
      : fd_(-1), owned_(false), name_(std::move(name)), pushback_(std::move(bytes)) {}
  ~RawInput() {
    if (owned_ && fd_ >= 0) ::close(fd_);
  }
  RawInput(const RawInput&) = delete;
  RawInput& operator=(const RawInput&) = delete;

  size_t Read(char* out, size_t n) {
    size_t total = 0;
    if (!pushback_.empty() && n > 0) {
      total = std::min(n, pushback_.size());
      std::memcpy(out, pushback_.data(), total);
      pushback_.erase(0, total);
    }
    while (total < n && fd_ >= 0) {
      const ssize_t got = ::read(fd_, out + total, n - total);
      if (got < 0 && errno == EINTR) continue;
      if (got < 0) {
        throw Error(ErrorCode::kIo, "cannot read '" + name_ + "': " + std::strerror(errno));
      }
      if (got == 0) break;
      total += static_cast<size_t>(got);
    }
    return total;
  }
  // Reads up to n bytes and keeps them to be read again.
  std::string_view Prefetch(size_t n) {
    std::string more(n, '\0');
    more.resize(Read(more.data(), n));
    pushback_ = more + pushback_;
    return pushback_;
  }
  int fd() const { return fd_; }
  const std::string& name() const { return name_; }

 private:
  int fd_;
  bool owned_;
  std::string name_;
  std::string pushback_;
};

class PlainSource final : public Source {
 public:
  PlainSource(std::unique_ptr<RawInput> raw, uint64_t size)
      : Source(raw->name(), Container::kPlain), raw_(std::move(raw)) {
    expected_bytes_ = size;
  }

 protected:
  size_t ReadDecoded(char* out, size_t n) override { return raw_->Read(out, n); }

 private:
  std::unique_ptr<RawInput> raw_;
};

// A zip of several entries read through Source (a pipe): only its first
// entry could be read, so it is refused.
Error SeveralEntries(const std::string& name) {
  return Error(ErrorCode::kUnsupported,
               "'" + name +
                   "' is a zip archive of several files, which opscope unpacks only from a file "
                   "it can read twice: name the .zip file itself, not a pipe");
}

// Inflates a gzip stream (concatenated members as one, as gzip does) or the
// raw deflate data of one zip entry.
class InflateSource final : public Source {
 public:
  InflateSource(std::unique_ptr<RawInput> raw, Container container)
      : Source(raw->name(), container), raw_(std::move(raw)), in_(size_t{1} << 20) {
    // 16 + MAX_WBITS: a gzip header and trailer; -MAX_WBITS: raw deflate (zip).
    if (inflateInit2(&z_, container == Container::kGzip ? 16 + MAX_WBITS : -MAX_WBITS) != Z_OK) {
      throw Error(ErrorCode::kResourceExhausted, "cannot start inflating '" + name() + "'");
    }
  }
  ~InflateSource() override { inflateEnd(&z_); }
  void set_expected_bytes(uint64_t bytes) { expected_bytes_ = bytes; }

 protected:
  size_t ReadDecoded(char* out, size_t n) override {
    size_t produced = 0;
    while (produced < n && !done_) {
      if (z_.avail_in == 0) {
        const size_t got = raw_->Read(in_.data(), in_.size());
        if (got == 0) {
          if (!member_started_ && container() == Container::kGzip && members_ > 0) {
            done_ = true;  // the data ended between gzip members
            break;
          }
          throw Error(ErrorCode::kInvalidInput, "'" + name() + "': the " + Name(container()) +
                                                    " data ends early (the file is truncated)");
        }
        z_.next_in = reinterpret_cast<Bytef*>(in_.data());
        z_.avail_in = static_cast<uInt>(got);
      }
      member_started_ = true;
      z_.next_out = reinterpret_cast<Bytef*>(out + produced);
      z_.avail_out = static_cast<uInt>(std::min<size_t>(n - produced, 1u << 30));
      const uInt before = z_.avail_out;
      const int rc = inflate(&z_, Z_NO_FLUSH);
      produced += before - z_.avail_out;
      if (rc == Z_STREAM_END) {
        ++members_;
        member_started_ = false;
        if (container() == Container::kZip) {
          done_ = true;
          CheckNoSecondEntry();
        } else {
          inflateReset(&z_);  // another gzip member may follow
        }
      } else if (rc == Z_BUF_ERROR && z_.avail_in == 0) {
        continue;  // needs more input
      } else if (rc != Z_OK) {
        throw Error(ErrorCode::kInvalidInput, "'" + name() + "': corrupt " + Name(container()) +
                                                  " data near compressed byte " +
                                                  std::to_string(z_.total_in) + ": " +
                                                  (z_.msg ? z_.msg : "inflate failed"));
      }
    }
    return produced;
  }

 private:
  // A zip is read as one file: a second entry would be ignored silently otherwise.
  // It follows the data, or the data descriptor (at most 24 bytes) that
  // archives written to a stream put after it.
  void CheckNoSecondEntry() {
    constexpr size_t kLook = 24 + 4;
    std::string next(reinterpret_cast<const char*>(z_.next_in),
                     std::min<size_t>(z_.avail_in, kLook));
    if (next.size() < kLook) {
      std::string more(kLook - next.size(), '\0');
      more.resize(raw_->Read(more.data(), more.size()));
      next += more;
    }
    if (next.find(std::string_view("PK\x03\x04", 4)) != std::string::npos) {
      throw SeveralEntries(name());
    }
  }

  std::unique_ptr<RawInput> raw_;
  std::vector<char> in_;
  z_stream z_{};
  bool done_ = false, member_started_ = false;
  int members_ = 0;
};

// A stored (uncompressed) zip entry of a known size.
class StoredSource final : public Source {
 public:
  StoredSource(std::unique_ptr<RawInput> raw, uint64_t size)
      : Source(raw->name(), Container::kZip), raw_(std::move(raw)), left_(size) {
    expected_bytes_ = size;
  }

 protected:
  size_t ReadDecoded(char* out, size_t n) override {
    const size_t want = static_cast<size_t>(std::min<uint64_t>(n, left_));
    const size_t got = raw_->Read(out, want);
    if (got < want) {
      throw Error(ErrorCode::kInvalidInput,
                  "'" + name() + "': the zip entry ends early (the file is truncated)");
    }
    left_ -= got;
    if (left_ == 0 && !checked_) CheckNoSecondEntry();
    return got;
  }

 private:
  // As InflateSource's: a second entry after this one's data would be left
  // unread without a word (issue 39: a stored zip of two traces piped in read
  // as its first).
  void CheckNoSecondEntry() {
    checked_ = true;
    char next[4];
    size_t got = 0;
    while (got < sizeof(next)) {
      const size_t n = raw_->Read(next + got, sizeof(next) - got);
      if (n == 0) break;
      got += n;
    }
    if (got == sizeof(next) && std::string_view(next, 4) == std::string_view("PK\x03\x04", 4)) {
      throw SeveralEntries(name());
    }
  }

  std::unique_ptr<RawInput> raw_;
  uint64_t left_;
  bool checked_ = false;
};

uint32_t Le32(const unsigned char* p) {
  return p[0] | p[1] << 8 | p[2] << 16 | static_cast<uint32_t>(p[3]) << 24;
}
uint16_t Le16(const unsigned char* p) { return static_cast<uint16_t>(p[0] | p[1] << 8); }

bool GzipMagic(std::string_view magic) {
  return magic.size() >= 2 && static_cast<unsigned char>(magic[0]) == 0x1f &&
         static_cast<unsigned char>(magic[1]) == 0x8b;
}
bool ZipMagic(std::string_view magic) {
  return magic.size() == 4 && magic == std::string_view("PK\x03\x04", 4);
}

// A zip's first local file header (APPNOTE 4.3.7), then its data.
std::unique_ptr<Source> OpenZipEntry(std::unique_ptr<RawInput> raw) {
  const std::string name = raw->name();
  unsigned char header[30];
  if (raw->Read(reinterpret_cast<char*>(header), 30) != 30) {
    throw Error(ErrorCode::kInvalidInput, "'" + name + "': the zip header ends early");
  }
  const uint16_t flags = Le16(header + 6), method = Le16(header + 8);
  const uint32_t compressed = Le32(header + 18), size = Le32(header + 22);
  const size_t skip = size_t{Le16(header + 26)} + Le16(header + 28);  // name and extra field
  std::vector<char> discard(skip);
  if (raw->Read(discard.data(), skip) != skip) {
    throw Error(ErrorCode::kInvalidInput, "'" + name + "': the zip header ends early");
  }
  if (flags & 1) {
    throw Error(ErrorCode::kUnsupported, "'" + name + "': the zip entry is encrypted");
  }
  const bool sizes_later = (flags & 8) != 0;  // sizes in a data descriptor after the data
  if (method == 8) {
    auto source = std::make_unique<InflateSource>(std::move(raw), Container::kZip);
    if (!sizes_later && size != 0xFFFFFFFFu) source->set_expected_bytes(size);
    return source;
  }
  if (method == 0 && !sizes_later && compressed != 0xFFFFFFFFu) {
    return std::make_unique<StoredSource>(std::move(raw), compressed);
  }
  throw Error(ErrorCode::kUnsupported,
              "'" + name + "': zip compression method " + std::to_string(method) +
                  (method == 0 ? " with its size after the data" : "") +
                  " is not read (opscope reads deflate and stored entries); unzip it first");
}

}  // namespace

Source::~Source() = default;

std::unique_ptr<Source> Source::Open(const std::filesystem::path& path) {
  std::unique_ptr<RawInput> raw;
  struct stat st {};
  if (path == "-") {
    raw = std::make_unique<RawInput>(STDIN_FILENO, false, "standard input");
    core::ProtectInput(STDIN_FILENO);  // a file redirected in is an input too
  } else {
    const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
      throw Error(ErrorCode::kIo, "cannot open '" + path.string() + "': " + std::strerror(errno));
    }
    raw = std::make_unique<RawInput>(fd, true, path.string());
    core::ProtectInput(path);  // no output of this command may replace it
  }
  const bool stat_ok = ::fstat(raw->fd(), &st) == 0;
  if (stat_ok && S_ISDIR(st.st_mode)) {
    throw Error(ErrorCode::kUnsupported, "'" + raw->name() + "' is a folder, not a trace file");
  }
  const bool regular = stat_ok && S_ISREG(st.st_mode);
  const std::string_view magic = raw->Prefetch(4);
  if (GzipMagic(magic)) {
    uint64_t hint = 0;
    // The trailer holds the inflated size modulo 2^32: a hint, not a promise.
    unsigned char trailer[4];
    if (regular && st.st_size >= 24 && ::pread(raw->fd(), trailer, 4, st.st_size - 4) == 4) {
      const uint64_t size = Le32(trailer);
      if (size >= static_cast<uint64_t>(st.st_size)) hint = size;
    }
    auto source = std::make_unique<InflateSource>(std::move(raw), Container::kGzip);
    source->set_expected_bytes(hint);
    return source;
  }
  if (ZipMagic(magic)) return OpenZipEntry(std::move(raw));
  return std::make_unique<PlainSource>(std::move(raw), regular ? st.st_size : 0);
}

std::unique_ptr<Source> Source::FromBytes(std::string name, std::string bytes) {
  const uint64_t size = bytes.size();
  auto raw = std::make_unique<RawInput>(std::move(bytes), std::move(name));
  const std::string_view magic = raw->Prefetch(4);
  if (GzipMagic(magic)) return std::make_unique<InflateSource>(std::move(raw), Container::kGzip);
  if (ZipMagic(magic)) return OpenZipEntry(std::move(raw));
  return std::make_unique<PlainSource>(std::move(raw), size);
}

size_t Source::ReadFull(char* out, size_t n) {
  size_t total = 0;
  while (total < n) {
    const size_t got = ReadDecoded(out + total, n - total);
    if (got == 0) break;
    total += got;
  }
  return total;
}

std::string_view Source::Peek(size_t n) {
  if (reading_) {
    throw Error(ErrorCode::kFailedPrecondition, "'" + name_ + "': Peek after Read");
  }
  n = std::min(n, kMaxPeekBytes);
  if (peeked_.size() < n && !peeked_all_) {
    const size_t have = peeked_.size();
    peeked_.resize(n);
    const size_t got = ReadFull(peeked_.data() + have, n - have);
    peeked_.resize(have + got);
    if (got < n - have) peeked_all_ = true;
  }
  return std::string_view(peeked_).substr(0, n);
}

size_t Source::Read(char* out, size_t n) {
  core::ThrowIfCancelled();  // every importer reads its input in chunks through here
  reading_ = true;
  size_t total = 0;
  if (peek_read_ < peeked_.size()) {
    total = std::min(n, peeked_.size() - peek_read_);
    std::memcpy(out, peeked_.data() + peek_read_, total);
    peek_read_ += total;
    if (peek_read_ == peeked_.size()) {
      std::string().swap(peeked_);  // its memory is not needed any more
      peek_read_ = 0;
    }
  }
  if (total < n && !peeked_all_) {
    const size_t got = ReadFull(out + total, n - total);
    if (got < n - total) peeked_all_ = true;  // the data ended
    total += got;
  }
  return total;
}

}  // namespace opscope::analyze
