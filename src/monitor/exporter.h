// The Prometheus exporter: a collector thread samples every interval and keeps
// the latest exposition; an HTTP server with a fixed number of worker threads
// serves it at /metrics (and "ok" at /healthz). Requests too large are refused
// (413), malformed ones get 400, and neither disturbs other clients.
#ifndef OPSCOPE_MONITOR_EXPORTER_H_
#define OPSCOPE_MONITOR_EXPORTER_H_

#include <memory>
#include <string>
#include <vector>

#include "monitor/sampler.h"

namespace opscope::monitor {

struct ExporterOptions {
  std::string host = "127.0.0.1";
  int port = 9400;
  int threads = 8;
  double interval_seconds = 1.0;
  size_t max_request_body = 64 << 10;
};

// Parses "--serve HOST:PORT", ":PORT" or "PORT" (loopback unless a host is given).
// Throws Error(kInvalidArgument).
void ParseListenAddress(const std::string& text, ExporterOptions& options);

class Exporter {
 public:
  Exporter(std::vector<std::unique_ptr<Sampler>> samplers, ExporterOptions options);
  ~Exporter();
  // Serves until Stop(); throws Error(kIo) when it cannot listen.
  void Run();
  // Safe from any thread, before or during Run().
  void Stop();
  // The port actually bound (for port 0).
  int port() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace opscope::monitor

#endif  // OPSCOPE_MONITOR_EXPORTER_H_
