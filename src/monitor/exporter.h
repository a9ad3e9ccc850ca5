// The Prometheus exporter: a collector thread samples every interval and keeps
// the latest exposition; one event-loop thread (HttpServer) serves it at
// /metrics (and "ok" at /healthz) to any number of clients, slow, idle or
// hostile ones included, without one holding up another.
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
  double interval_seconds = 1.0;
  size_t max_request_body = 64 << 10;
  size_t max_connections = 512;
};

// Parses "--serve HOST:PORT", "[IPV6]:PORT", ":PORT" or "PORT" (loopback unless a
// host is given). Throws Error(kInvalidArgument).
void ParseListenAddress(const std::string& text, ExporterOptions& options);

class Exporter {
 public:
  Exporter(std::vector<std::unique_ptr<Sampler>> samplers, ExporterOptions options);
  ~Exporter();
  // Binds the address; returns the port bound (the one chosen for port 0).
  // Throws Error(kIo) naming the reason ("address in use"). Idempotent.
  int Listen();
  // Serves until Stop() (listening first if Listen() was not called).
  void Run();
  // Safe from any thread, before or during Run(); Run() returns promptly.
  void Stop();
  // The port bound, or -1 before Listen().
  int port() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace opscope::monitor

#endif  // OPSCOPE_MONITOR_EXPORTER_H_
