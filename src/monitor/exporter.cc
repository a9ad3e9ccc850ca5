#include "monitor/exporter.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <thread>

#include "core/text.h"
#include "monitor/http_server.h"
#include "monitor/prometheus.h"
#include "opscope/opscope.h"

namespace opscope::monitor {

void ParseListenAddress(const std::string& text, ExporterOptions& options) {
  auto fail = [&](const std::string& why) {
    throw Error(ErrorCode::kInvalidArgument,
                "--serve '" + core::EscapeForTerminal(text) + "': " + why +
                    " (expected HOST:PORT, [IPV6]:PORT, :PORT or PORT, with a port from 0 to "
                    "65535; 0 picks a free port)");
  };
  if (text.empty()) fail("an empty address");
  const auto colon = text.rfind(':');
  std::string host = colon == std::string::npos ? "" : text.substr(0, colon);
  const std::string port = colon == std::string::npos ? text : text.substr(colon + 1);
  if (host.size() >= 2 && host.front() == '[' && host.back() == ']') {
    host = host.substr(1, host.size() - 2);
    if (host.empty()) fail("an empty IPv6 address");
  } else if (host.find_first_of("[]:") != std::string::npos) {
    fail("an IPv6 address goes in brackets, as in [::1]:9400");
  }
  if (port.empty() || port.size() > 5 ||
      !std::all_of(port.begin(), port.end(), [](char c) { return c >= '0' && c <= '9'; })) {
    fail("no port number");
  }
  const int value = std::stoi(port);
  if (value > 65535) fail("the port is over 65535");
  options.port = value;
  options.host = host.empty() ? "127.0.0.1" : host;
}

struct Exporter::Impl {
  std::vector<std::unique_ptr<Sampler>> samplers;
  ExporterOptions options;
  std::unique_ptr<HttpServer> server;
  std::mutex mutex;
  std::condition_variable wake;
  std::shared_ptr<const std::string> exposition;
  bool stopping = false;
  std::thread collector;
  std::mutex join_mutex;
  int bound_port = -1;

  void Collect() {
    const auto start = std::chrono::steady_clock::now();
    std::vector<Metric> all;
    for (auto& sampler : samplers) {
      auto metrics = sampler->Sample();
      all.insert(all.end(), std::make_move_iterator(metrics.begin()),
                 std::make_move_iterator(metrics.end()));
    }
    const double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    auto text = std::make_shared<const std::string>(ToPrometheusText(all, seconds));
    std::lock_guard lock(mutex);
    exposition = std::move(text);
  }

  HttpResponse Handle(const HttpRequest& request) {
    if (request.path == "/metrics") {
      std::shared_ptr<const std::string> text;
      {
        std::lock_guard lock(mutex);
        text = exposition;
      }
      return {200, "text/plain; version=0.0.4; charset=utf-8", text ? *text : std::string()};
    }
    if (request.path == "/healthz") return {200, "text/plain", "ok\n"};
    return {404, "text/plain", "404 Not Found: the exporter serves /metrics and /healthz\n"};
  }
};

Exporter::Exporter(std::vector<std::unique_ptr<Sampler>> samplers, ExporterOptions options)
    : impl_(std::make_unique<Impl>()) {
  impl_->samplers = std::move(samplers);
  impl_->options = options;
  HttpServerOptions http;
  http.host = options.host;
  http.port = options.port;
  http.max_body = options.max_request_body;
  http.max_connections = options.max_connections;
  Impl* impl = impl_.get();
  impl_->server = std::make_unique<HttpServer>(
      http, [impl](const HttpRequest& request) { return impl->Handle(request); });
}

Exporter::~Exporter() { Stop(); }

int Exporter::Listen() {
  if (impl_->bound_port < 0) impl_->bound_port = impl_->server->Listen();
  return impl_->bound_port;
}

int Exporter::port() const { return impl_->bound_port; }

void Exporter::Run() {
  Impl* impl = impl_.get();
  Listen();
  {
    std::lock_guard lock(impl->mutex);
    if (impl->stopping) return;
  }
  // Rates need two readings: take the first collection a moment after the samplers
  // opened, so the first scrape already has every rate. Clients that connect
  // meanwhile wait in the listen backlog.
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  impl->Collect();
  impl->collector = std::thread([impl] {
    std::unique_lock lock(impl->mutex);
    while (!impl->stopping) {
      impl->wake.wait_for(lock, std::chrono::duration<double>(impl->options.interval_seconds));
      if (impl->stopping) break;
      lock.unlock();
      impl->Collect();
      lock.lock();
    }
  });
  impl->server->Run();
  Stop();
}

void Exporter::Stop() {
  {
    std::lock_guard lock(impl_->mutex);
    impl_->stopping = true;
  }
  impl_->wake.notify_all();
  impl_->server->Stop();
  std::lock_guard lock(impl_->join_mutex);  // Stop() may run on two threads at once
  if (impl_->collector.joinable()) impl_->collector.join();
}

}  // namespace opscope::monitor
