// A small HTTP/1.1 server for the exporter's read-only endpoints, built to stay
// answerable whatever its clients do. One thread runs a poll() loop over
// non-blocking sockets, so a slow or idle client costs one file descriptor, not
// a worker thread (a thread pool, cpp-httplib's model, is held hostage by as
// many slow clients as it has threads):
// - a request's head and body must arrive within `request_deadline` of its
//   first byte (one byte per second does not keep a connection), a new request
//   must start within `idle_timeout`, and a response that makes no progress for
//   `write_timeout` is dropped;
// - at `max_connections` a new client closes the connection that has gone
//   longest without an answer (since it was accepted or last answered), so a
//   flood of idle, slow or non-reading sockets cannot lock out a scraper;
// - pipelined requests get one response each, in order, each read and
//   answered once the previous one is sent, so a client that never reads
//   holds one response and a few KiB of input here; a client that half-closes
//   after its requests still gets its responses;
// - a request line over `max_request_line` gets 414, a head over
//   `max_header_bytes` 431, a body over `max_body` 413, anything malformed 400,
//   a body in chunks 501; the connection closes after such a reply (its unread
//   input is drained for a moment so the reply is not lost to a reset);
// - Stop() from any thread ends Run() at once (a self-pipe wakes the loop).
// Listen() binds without SO_REUSEPORT: a port in use is an error, never shared.
#ifndef OPSCOPE_MONITOR_HTTP_SERVER_H_
#define OPSCOPE_MONITOR_HTTP_SERVER_H_

#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>

namespace opscope::monitor {

struct HttpRequest {
  std::string method;  // "GET" or "HEAD": others are answered 405 before a handler sees them
  std::string path;    // the target without its query string
};

struct HttpResponse {
  int status = 200;
  std::string content_type = "text/plain";
  std::string body;
};

struct HttpServerOptions {
  std::string host = "127.0.0.1";  // a numeric IPv4 or IPv6 address, or a host name
  int port = 0;                    // 0: any free port (see Listen())
  int backlog = 512;
  size_t max_connections = 512;  // lowered to fit RLIMIT_NOFILE
  size_t max_request_line = 8 << 10;
  size_t max_header_bytes = 16 << 10;
  size_t max_body = 64 << 10;
  std::chrono::milliseconds request_deadline{5000};
  std::chrono::milliseconds idle_timeout{15000};
  std::chrono::milliseconds write_timeout{5000};
  std::chrono::milliseconds linger{1000};
};

struct HttpServerStats {
  uint64_t accepted = 0;
  uint64_t requests = 0;
  uint64_t evicted = 0;    // closed to make room for a new client
  uint64_t timed_out = 0;  // closed by one of the deadlines
};

class HttpServer {
 public:
  using Handler = std::function<HttpResponse(const HttpRequest&)>;

  HttpServer(HttpServerOptions options, Handler handler);
  ~HttpServer();
  HttpServer(const HttpServer&) = delete;
  HttpServer& operator=(const HttpServer&) = delete;

  // Binds and listens; returns the port bound (the one chosen for port 0).
  // Throws Error(kIo) naming the address and the reason ("address in use").
  int Listen();
  // Serves until Stop(). Listen() must have succeeded.
  void Run();
  // Safe from any thread and at any time, before or during Run(); idempotent.
  void Stop();
  // Counters as of the last loop iteration; read after Run() returns, or
  // approximately while it runs.
  HttpServerStats stats() const;

 private:
  struct Loop;
  HttpServerOptions options_;
  Handler handler_;
  int listener_ = -1;
  int wake_read_ = -1;
  int wake_write_ = -1;
  std::atomic<bool> stopping_{false};
  std::atomic<uint64_t> accepted_{0}, requests_{0}, evicted_{0}, timed_out_{0};
};

}  // namespace opscope::monitor

#endif  // OPSCOPE_MONITOR_HTTP_SERVER_H_
