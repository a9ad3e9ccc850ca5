#include "monitor/http_server.h"

#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <string_view>
#include <vector>

#include "core/text.h"
#include "opscope/opscope.h"

namespace opscope::monitor {
namespace {

using Clock = std::chrono::steady_clock;

// A connection is answered one response at a time: its next request is read
// and answered once the kernel has taken the previous response whole, so a
// pipelining client that never reads holds at most one response and one read
// of input here, whatever it sends. Input read from one connection per loop
// iteration, and responses queued for it, are bounded so one fast client
// cannot starve the others.
constexpr size_t kReadPerTurn = 64 << 10;
constexpr size_t kReadChunk = 4 << 10;
constexpr int kAnswersPerTurn = 64;
// Connections accepted per loop iteration.
constexpr int kAcceptPerTurn = 64;
// Input discarded after an error reply before the connection is closed anyway.
constexpr size_t kMaxLingerBytes = 1 << 20;

const char* Reason(int status) {
  switch (status) {
    case 200: return "OK";
    case 400: return "Bad Request";
    case 404: return "Not Found";
    case 405: return "Method Not Allowed";
    case 408: return "Request Timeout";
    case 413: return "Payload Too Large";
    case 414: return "URI Too Long";
    case 431: return "Request Header Fields Too Large";
    case 500: return "Internal Server Error";
    case 501: return "Not Implemented";
    case 505: return "HTTP Version Not Supported";
    default: return "Unknown";
  }
}

void CloseFd(int& fd) {
  if (fd >= 0) ::close(fd);
  fd = -1;
}

bool IsTokenChar(char c) {
  if (c >= '0' && c <= '9') return true;
  if ((c | 0x20) >= 'a' && (c | 0x20) <= 'z') return true;
  return std::string_view("!#$%&'*+-.^_`|~").find(c) != std::string_view::npos;
}

bool IsToken(std::string_view s) {
  return !s.empty() && std::all_of(s.begin(), s.end(), IsTokenChar);
}

bool EqualsIgnoreCase(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if ((a[i] | 0x20) != (b[i] | 0x20)) return false;
  }
  return true;
}

std::string_view Trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

// Whether a comma-separated header value lists `token` (Connection: keep-alive, close).
bool ListsToken(std::string_view value, std::string_view token) {
  while (!value.empty()) {
    const size_t comma = value.find(',');
    if (EqualsIgnoreCase(Trim(value.substr(0, comma)), token)) return true;
    if (comma == std::string_view::npos) break;
    value.remove_prefix(comma + 1);
  }
  return false;
}

// A request head, parsed; `status` is 0 when it is acceptable.
struct Head {
  int status = 0;
  std::string method;
  std::string path;
  uint64_t content_length = 0;
  bool keep_alive = true;
  bool http10 = false;
};

Head ParseHead(std::string_view head, const HttpServerOptions& options) {
  Head h;
  const size_t line_end = head.find("\r\n");
  const std::string_view line = head.substr(0, line_end);
  if (line.size() > options.max_request_line) {
    h.status = 414;
    return h;
  }
  const size_t sp1 = line.find(' ');
  const size_t sp2 = sp1 == std::string_view::npos ? sp1 : line.find(' ', sp1 + 1);
  if (sp2 == std::string_view::npos || line.find(' ', sp2 + 1) != std::string_view::npos) {
    h.status = 400;
    return h;
  }
  const std::string_view method = line.substr(0, sp1);
  const std::string_view target = line.substr(sp1 + 1, sp2 - sp1 - 1);
  const std::string_view version = line.substr(sp2 + 1);
  if (!IsToken(method) || target.empty() || target.front() != '/' ||
      version.substr(0, 5) != "HTTP/") {
    h.status = 400;
    return h;
  }
  if (version != "HTTP/1.1" && version != "HTTP/1.0") {
    h.status = 505;
    return h;
  }
  h.method = std::string(method);
  h.path = std::string(target.substr(0, target.find('?')));
  const bool http10 = version == "HTTP/1.0";
  h.http10 = http10;
  h.keep_alive = !http10;
  bool have_length = false;
  std::string_view rest =
      line_end == std::string_view::npos ? std::string_view() : head.substr(line_end + 2);
  while (!rest.empty()) {
    const size_t end = rest.find("\r\n");
    const std::string_view field = rest.substr(0, end);
    rest = end == std::string_view::npos ? std::string_view() : rest.substr(end + 2);
    const size_t colon = field.find(':');
    if (colon == std::string_view::npos || !IsToken(field.substr(0, colon))) {
      h.status = 400;
      return h;
    }
    const std::string_view name = field.substr(0, colon);
    const std::string_view value = Trim(field.substr(colon + 1));
    if (EqualsIgnoreCase(name, "content-length")) {
      uint64_t n = 0;
      if (value.empty() || value.size() > 18 ||
          !std::all_of(value.begin(), value.end(), [](char c) { return c >= '0' && c <= '9'; })) {
        h.status = 400;
        return h;
      }
      for (char c : value) n = n * 10 + static_cast<uint64_t>(c - '0');
      if (have_length && n != h.content_length) {
        h.status = 400;  // two different lengths: a request-smuggling attempt or a broken client
        return h;
      }
      have_length = true;
      h.content_length = n;
    } else if (EqualsIgnoreCase(name, "transfer-encoding")) {
      h.status = 501;
      return h;
    } else if (EqualsIgnoreCase(name, "connection")) {
      if (ListsToken(value, "close")) h.keep_alive = false;
      if (http10 && ListsToken(value, "keep-alive")) h.keep_alive = true;
    }
  }
  if (h.content_length > options.max_body) h.status = 413;
  return h;
}

void AppendResponse(std::string& out, int status, const std::string& content_type,
                    const std::string& body, bool head_only, bool keep_alive, bool http10) {
  out += "HTTP/1.1 ";
  out += std::to_string(status);
  out += ' ';
  out += Reason(status);
  out += "\r\nContent-Type: ";
  out += content_type;
  out += "\r\nContent-Length: ";
  out += std::to_string(body.size());
  if (status == 405) out += "\r\nAllow: GET, HEAD";
  if (!keep_alive) {
    out += "\r\nConnection: close";
  } else if (http10) {
    out += "\r\nConnection: keep-alive";
  }
  out += "\r\n\r\n";
  if (!head_only) out += body;
}

struct Connection {
  int fd = -1;
  std::string in;
  std::string out;
  size_t out_sent = 0;
  Clock::time_point last_activity;  // accepted, or the last response finished
  Clock::time_point last_answer;    // accepted, or the last request answered
  Clock::time_point request_start;  // the first byte of the request being received
  Clock::time_point last_write;     // the last progress sending
  bool closing = false;             // close once `out` is sent
  bool lingering = false;           // `out` sent, write side shut: discard input for a moment
  bool peer_closed = false;         // the client half-closed: answer, then close
  bool more = false;                // complete requests wait in `in` for the next turn
  Clock::time_point linger_until;
  size_t lingered = 0;

  size_t Pending() const { return out.size() - out_sent; }
};

}  // namespace

struct HttpServer::Loop {
  HttpServer& server;
  std::vector<Connection> connections;
  size_t max_connections;
  Clock::time_point listener_paused_until{};

  explicit Loop(HttpServer& s) : server(s) {
    max_connections = std::max<size_t>(1, s.options_.max_connections);
    rlimit limit{};
    if (getrlimit(RLIMIT_NOFILE, &limit) == 0 && limit.rlim_cur != RLIM_INFINITY) {
      // Leave room for the samplers' files, standard streams and the self-pipe.
      const size_t usable = limit.rlim_cur > 96 ? limit.rlim_cur - 64 : limit.rlim_cur / 2;
      max_connections = std::max<size_t>(1, std::min(max_connections, usable));
    }
  }

  ~Loop() {
    for (auto& c : connections) CloseFd(c.fd);
  }

  const HttpServerOptions& options() const { return server.options_; }

  void Reply(Connection& c, int status, std::string body, bool keep_alive, bool head_only = false,
             bool http10 = false, const std::string& content_type = "text/plain") {
    if (status >= 400 && body.empty()) body = std::to_string(status) + " " + Reason(status) + "\n";
    AppendResponse(c.out, status, content_type, body, head_only, keep_alive, http10);
    if (!keep_alive) c.closing = true;
  }

  // Answers every complete request in `in`, in order. Input that is malformed
  // or over a limit queues an error reply, after which the connection closes.
  void ProcessInput(Connection& c, Clock::time_point now) {
    const auto& o = options();
    while (!c.closing && !c.in.empty() && c.Pending() == 0) {
      const size_t head_end = c.in.find("\r\n\r\n");
      if (head_end == std::string::npos) {
        const size_t line_end = c.in.find("\r\n");
        if ((line_end == std::string::npos ? c.in.size() : line_end) > o.max_request_line) {
          Reply(c, 414, "", false);
        } else if (c.in.size() > o.max_header_bytes) {
          Reply(c, 431, "", false);
        }
        return;
      }
      Head head = ParseHead(std::string_view(c.in).substr(0, head_end), o);
      if (head.status == 0 && head_end + 4 > o.max_header_bytes) head.status = 431;
      if (head.status != 0) {
        Reply(c, head.status, "", false);
        return;
      }
      const size_t total = head_end + 4 + static_cast<size_t>(head.content_length);
      if (c.in.size() < total) return;  // the body is still coming
      c.in.erase(0, total);
      server.requests_.fetch_add(1, std::memory_order_relaxed);
      if (head.method != "GET" && head.method != "HEAD") {
        Reply(c, 405, "", head.keep_alive, false, head.http10);
      } else {
        HttpResponse response;
        try {
          response = server.handler_(HttpRequest{head.method, head.path});
        } catch (const std::exception&) {
          response = HttpResponse{500, "text/plain", ""};
        }
        Reply(c, response.status, std::move(response.body), head.keep_alive, head.method == "HEAD",
              head.http10, response.content_type);
      }
      c.last_activity = c.last_answer = now;
      c.request_start = now;  // a pipelined request already under way starts now
    }
  }

  // Answers the requests `in` holds, one at a time, each once the previous
  // response is sent, and sends what the socket takes; a half-closed client's
  // connection closes once its last answer is sent.
  void Serve(Connection& c, Clock::time_point now) {
    c.more = false;
    for (int turn = 0; c.fd >= 0; ++turn) {
      if (c.Pending() == 0) {
        if (turn == kAnswersPerTurn) {
          c.more = !c.in.empty();
          return;
        }
        ProcessInput(c, now);
      }
      if (c.Pending() == 0) break;  // nothing complete to answer
      Flush(c, now);
      if (c.Pending() > 0) return;  // the socket is full: POLLOUT resumes
    }
    if (c.fd >= 0 && c.peer_closed && c.Pending() == 0) CloseFd(c.fd);
  }

  void Flush(Connection& c, Clock::time_point now) {
    while (c.Pending() > 0) {
      const ssize_t n = ::send(c.fd, c.out.data() + c.out_sent, c.Pending(), MSG_NOSIGNAL);
      if (n > 0) {
        c.out_sent += static_cast<size_t>(n);
        c.last_write = now;
        continue;
      }
      if (n < 0 && errno == EINTR) continue;
      if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return;
      CloseFd(c.fd);  // the peer is gone
      return;
    }
    c.out.clear();
    c.out_sent = 0;
    c.last_activity = now;
    if (c.closing && !c.lingering) {
      ::shutdown(c.fd, SHUT_WR);
      c.lingering = true;
      c.linger_until = now + options().linger;
    }
  }

  void Read(Connection& c, Clock::time_point now) {
    if (c.peer_closed) {  // only a hang-up or an error wakes a half-closed connection
      CloseFd(c.fd);
      return;
    }
    char buffer[kReadChunk];
    size_t taken = 0;
    while (taken < kReadPerTurn) {
      const ssize_t n = ::recv(c.fd, buffer, sizeof(buffer), 0);
      if (n > 0) {
        taken += static_cast<size_t>(n);
        if (c.lingering) {
          c.lingered += static_cast<size_t>(n);
          if (c.lingered > kMaxLingerBytes) CloseFd(c.fd);
          if (c.fd < 0) return;
          continue;
        }
        if (c.closing) continue;  // an error reply is queued: what follows is not read
        if (c.in.empty() && c.Pending() == 0) c.request_start = now;
        c.in.append(buffer, static_cast<size_t>(n));
        Serve(c, now);
        if (c.fd < 0) return;
        if (c.Pending() > 0 || c.more) break;  // read on once the answers are sent
        continue;
      }
      if (n < 0 && errno == EINTR) continue;
      if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) break;
      // End of input (a half-close) or an error: answer what is complete, then close.
      if (n == 0 && !c.lingering && !c.closing) {
        c.peer_closed = true;  // nothing more to read: answer what is complete, then close
        Serve(c, now);
        return;
      }
      CloseFd(c.fd);
      return;
    }
  }

  // The deadline of a connection: when it is closed if nothing happens.
  Clock::time_point Deadline(const Connection& c) const {
    const auto& o = options();
    if (c.Pending() > 0) return c.last_write + o.write_timeout;
    if (c.lingering) return c.linger_until;
    if (!c.in.empty()) return c.request_start + o.request_deadline;
    return c.last_activity + o.idle_timeout;
  }

  void Expire(Connection& c, Clock::time_point now) {
    if (c.fd < 0 || now < Deadline(c)) return;
    if (!c.in.empty() && c.Pending() == 0 && !c.lingering) {
      // Best effort: tell a slow client why, without waiting for it.
      std::string reply;
      AppendResponse(reply, 408, "text/plain", "408 Request Timeout\n", false, false, false);
      [[maybe_unused]] const ssize_t ignored =
          ::send(c.fd, reply.data(), reply.size(), MSG_NOSIGNAL | MSG_DONTWAIT);
    }
    if (!c.lingering) server.timed_out_.fetch_add(1, std::memory_order_relaxed);
    CloseFd(c.fd);
  }

  // Closes the connection that has gone longest without a request answered
  // (since it was accepted, or since its last answer) to make room for a new
  // client: a slow or idle socket, or a client that does not read its answers,
  // goes before a scraper whose answers keep coming.
  bool Evict() {
    Connection* victim = nullptr;
    for (auto& c : connections) {
      if (c.fd < 0) continue;
      if (!victim || c.last_answer < victim->last_answer) victim = &c;
    }
    if (!victim) return false;
    CloseFd(victim->fd);
    server.evicted_.fetch_add(1, std::memory_order_relaxed);
    return true;
  }

  void Sweep() {
    connections.erase(std::remove_if(connections.begin(), connections.end(),
                                     [](const Connection& c) { return c.fd < 0; }),
                      connections.end());
  }

  void Accept(Clock::time_point now) {
    for (int i = 0; i < kAcceptPerTurn; ++i) {
      Sweep();
      if (connections.size() >= max_connections && !Evict()) return;
      Sweep();
      const int fd = ::accept4(server.listener_, nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC);
      if (fd < 0) {
        if (errno == EINTR || errno == ECONNABORTED) continue;
        if ((errno == EMFILE || errno == ENFILE) && Evict()) continue;
        if (errno == EMFILE || errno == ENFILE || errno == ENOMEM || errno == ENOBUFS) {
          // Out of descriptors with nothing to close: do not spin on a readable listener.
          listener_paused_until = now + std::chrono::milliseconds(100);
        }
        return;
      }
      const int one = 1;
      ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
      Connection c;
      c.fd = fd;
      c.last_activity = c.last_answer = c.request_start = c.last_write = now;
      connections.push_back(std::move(c));
      server.accepted_.fetch_add(1, std::memory_order_relaxed);
    }
  }

  void Run() {
    std::vector<pollfd> fds;
    while (!server.stopping_.load()) {
      Sweep();
      auto now = Clock::now();
      fds.clear();
      fds.push_back({server.wake_read_, POLLIN, 0});
      const bool listening = now >= listener_paused_until;
      fds.push_back({listening ? server.listener_ : -1, POLLIN, 0});
      Clock::time_point next = now + std::chrono::milliseconds(500);
      if (!listening) next = std::min(next, listener_paused_until);
      for (const auto& c : connections) {
        short events = 0;
        if (c.Pending() == 0 && !c.more && !c.peer_closed) events |= POLLIN;
        if (c.Pending() > 0) events |= POLLOUT;
        fds.push_back({c.fd, events, 0});
        next = std::min(next, c.more ? now : Deadline(c));
      }
      const auto wait = std::chrono::duration_cast<std::chrono::milliseconds>(next - now).count();
      const int ready =
          ::poll(fds.data(), fds.size(), static_cast<int>(std::clamp<int64_t>(wait + 1, 0, 500)));
      if (ready < 0 && errno != EINTR) {
        throw Error(ErrorCode::kIo, std::string("poll: ") + std::strerror(errno));
      }
      now = Clock::now();
      if (ready > 0 && (fds[0].revents & POLLIN)) {
        char drain[64];
        while (::read(server.wake_read_, drain, sizeof(drain)) > 0) {
        }
      }
      if (server.stopping_.load()) break;
      // Connections first (fds[2 + i] is connections[i]), then new clients.
      const size_t known = fds.size() - 2;
      for (size_t i = 0; i < known; ++i) {
        Connection& c = connections[i];
        const short revents = ready > 0 ? fds[i + 2].revents : 0;
        if (revents & POLLNVAL) {
          c.fd = -1;
          continue;
        }
        if (revents & (POLLIN | POLLHUP | POLLERR)) Read(c, now);
        if (c.fd >= 0 && (c.Pending() > 0 || c.more)) Serve(c, now);
        if (c.fd >= 0 && c.lingering && c.Pending() == 0 && c.linger_until <= now) {
          CloseFd(c.fd);  // a half-closed client whose answers are sent
        }
        Expire(c, now);
      }
      if (ready > 0 && (fds[1].revents & POLLIN)) Accept(now);
    }
  }
};

HttpServer::HttpServer(HttpServerOptions options, Handler handler)
    : options_(std::move(options)), handler_(std::move(handler)) {
  int pipe_fds[2];
  if (::pipe2(pipe_fds, O_NONBLOCK | O_CLOEXEC) != 0) {
    throw Error(ErrorCode::kIo,
                std::string("cannot create the exporter's wake-up pipe: ") + std::strerror(errno));
  }
  wake_read_ = pipe_fds[0];
  wake_write_ = pipe_fds[1];
}

HttpServer::~HttpServer() {
  CloseFd(listener_);
  CloseFd(wake_read_);
  CloseFd(wake_write_);
}

int HttpServer::Listen() {
  const std::string where =
      (options_.host.find(':') != std::string::npos ? "[" + options_.host + "]" : options_.host) +
      ":" + std::to_string(options_.port);
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_PASSIVE | AI_NUMERICSERV;
  addrinfo* found = nullptr;
  const std::string port = std::to_string(options_.port);
  const int rc = ::getaddrinfo(options_.host.c_str(), port.c_str(), &hints, &found);
  if (rc != 0) {
    throw Error(ErrorCode::kIo,
                "cannot listen on " + core::EscapeForTerminal(where) + ": " + ::gai_strerror(rc));
  }
  int error = 0;
  for (addrinfo* a = found; a != nullptr; a = a->ai_next) {
    int fd = ::socket(a->ai_family, a->ai_socktype | SOCK_NONBLOCK | SOCK_CLOEXEC, a->ai_protocol);
    if (fd < 0) {
      error = errno;
      continue;
    }
    // SO_REUSEADDR only allows a restart while old connections are in TIME_WAIT;
    // on Linux it does not let two sockets listen on one port (SO_REUSEPORT
    // would, and split the scrapes between two processes).
    const int one = 1;
    ::setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
    if (::bind(fd, a->ai_addr, a->ai_addrlen) == 0 && ::listen(fd, options_.backlog) == 0) {
      listener_ = fd;
      break;
    }
    error = errno;
    CloseFd(fd);
  }
  ::freeaddrinfo(found);
  if (listener_ < 0) {
    std::string reason = std::strerror(error);
    if (error == EADDRINUSE) reason = "address in use (another process listens on this port)";
    if (error == EADDRNOTAVAIL) reason = "not an address of this machine";
    throw Error(ErrorCode::kIo,
                "cannot listen on " + core::EscapeForTerminal(where) + ": " + reason);
  }
  sockaddr_storage bound{};
  socklen_t length = sizeof(bound);
  ::getsockname(listener_, reinterpret_cast<sockaddr*>(&bound), &length);
  if (bound.ss_family == AF_INET6) {
    return ntohs(reinterpret_cast<const sockaddr_in6*>(&bound)->sin6_port);
  }
  return ntohs(reinterpret_cast<const sockaddr_in*>(&bound)->sin_port);
}

void HttpServer::Run() {
  if (listener_ < 0) throw Error(ErrorCode::kFailedPrecondition, "HttpServer::Run before Listen");
  Loop loop(*this);
  loop.Run();
}

void HttpServer::Stop() {
  stopping_.store(true);
  const char byte = 1;
  [[maybe_unused]] const ssize_t ignored = ::write(wake_write_, &byte, 1);
}

HttpServerStats HttpServer::stats() const {
  return {accepted_.load(), requests_.load(), evicted_.load(), timed_out_.load()};
}

}  // namespace opscope::monitor
