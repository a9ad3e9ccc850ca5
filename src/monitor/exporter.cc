#include "monitor/exporter.h"

#include <httplib.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <thread>

#include "core/text.h"
#include "monitor/prometheus.h"
#include "opscope/opscope.h"

namespace opscope::monitor {

void ParseListenAddress(const std::string& text, ExporterOptions& options) {
  const auto colon = text.rfind(':');
  const std::string host = colon == std::string::npos ? "" : text.substr(0, colon);
  const std::string port = colon == std::string::npos ? text : text.substr(colon + 1);
  int value = 0;
  try {
    size_t used = 0;
    value = std::stoi(port, &used);
    if (used != port.size()) value = -1;
  } catch (const std::exception&) {
    value = -1;
  }
  if (value < 0 || value > 65535) {
    throw Error(ErrorCode::kInvalidArgument,
                "--serve '" + core::EscapeForTerminal(text) +
                    "': expected HOST:PORT, :PORT or PORT with a port from 0 to 65535");
  }
  options.port = value;
  options.host = host.empty() ? "127.0.0.1" : host;
}

struct Exporter::Impl {
  std::vector<std::unique_ptr<Sampler>> samplers;
  ExporterOptions options;
  httplib::Server server;
  std::mutex mutex;
  std::condition_variable wake;
  std::shared_ptr<const std::string> exposition;
  bool stopping = false;
  std::thread collector;
  std::atomic<int> bound_port{0};

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
};

Exporter::Exporter(std::vector<std::unique_ptr<Sampler>> samplers, ExporterOptions options)
    : impl_(std::make_unique<Impl>()) {
  impl_->samplers = std::move(samplers);
  impl_->options = options;
  Impl* impl = impl_.get();
  const int threads = std::max(1, options.threads);
  impl->server.new_task_queue = [threads] { return new httplib::ThreadPool(threads); };
  impl->server.set_payload_max_length(options.max_request_body);
  impl->server.set_read_timeout(5, 0);
  impl->server.set_write_timeout(5, 0);
  impl->server.set_keep_alive_timeout(2);
  // Headers and body go out in separate writes: without this, Nagle and delayed
  // ACKs add ~40 ms to every keep-alive response.
  impl->server.set_tcp_nodelay(true);
  impl->server.Get("/metrics", [impl](const httplib::Request&, httplib::Response& response) {
    std::shared_ptr<const std::string> text;
    {
      std::lock_guard lock(impl->mutex);
      text = impl->exposition;
    }
    response.set_content(text ? *text : std::string(), "text/plain; version=0.0.4; charset=utf-8");
  });
  impl->server.Get("/healthz", [](const httplib::Request&, httplib::Response& response) {
    response.set_content("ok\n", "text/plain");
  });
  impl->server.set_error_handler([](const httplib::Request&, httplib::Response& response) {
    if (response.body.empty()) {
      response.set_content(std::to_string(response.status) + "\n", "text/plain");
    }
  });
}

Exporter::~Exporter() { Stop(); }

int Exporter::port() const { return impl_->bound_port.load(); }

void Exporter::Run() {
  Impl* impl = impl_.get();
  // Rates need two readings: take the first collection a moment after the samplers
  // opened, so the first scrape already has every rate.
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
  int port = impl->options.port;
  if (port == 0) {
    port = impl->server.bind_to_any_port(impl->options.host);
  } else if (!impl->server.bind_to_port(impl->options.host, port)) {
    port = -1;
  }
  if (port < 0) {
    Stop();
    throw Error(ErrorCode::kIo, "cannot listen on " + impl->options.host + ":" +
                                    std::to_string(impl->options.port) +
                                    " (address in use, or not an address of this machine)");
  }
  impl->bound_port = port;
  {
    std::lock_guard lock(impl->mutex);
    if (impl->stopping) return;
  }
  impl->server.listen_after_bind();
}

void Exporter::Stop() {
  {
    std::lock_guard lock(impl_->mutex);
    impl_->stopping = true;
  }
  impl_->wake.notify_all();
  impl_->server.stop();
  if (impl_->collector.joinable()) impl_->collector.join();
}

}  // namespace opscope::monitor
