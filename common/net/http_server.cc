#include "common/net/http_server.h"

#include <algorithm>
#include <cctype>
#include <exception>
#include <functional>
#include <stdexcept>
#include <map>
#include <optional>
#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "boost/asio/ip/tcp.hpp"
#include "boost/asio/post.hpp"
#include "boost/beast/core.hpp"
#include "boost/beast/http.hpp"
#include "common/api/string_view_compat.h"
#include "common/core/json_depth.h"
#include "common/core/status_macros.h"
#include "common/net/acceptor.h"
#include "common/net/handler_pool.h"
#include "common/net/static_files.h"
#include "spdlog/spdlog.h"

namespace tempest::net {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = boost::beast::http;
using asio::ip::tcp;

namespace {

// After an error response to a request we did not read completely, read and
// discard what the client still sends (bounded) before closing; closing a
// socket with unread data would reset the connection and could destroy the
// response before the client reads it.
constexpr size_t kMaxDrainBytes = 64u << 20;
constexpr std::chrono::seconds kDrainTimeout(2);

constexpr size_t kReadChunkBytes = 16 << 10;

const char* ReasonFor(int status) {
  switch (status) {
    case 400:
      return "Bad Request";
    case 404:
      return "Not Found";
    case 405:
      return "Method Not Allowed";
    case 413:
      return "Payload Too Large";
    case 431:
      return "Request Header Fields Too Large";
    case 500:
      return "Internal Server Error";
    case 503:
      return "Service Unavailable";
    default:
      return "Error";
  }
}

HttpResponse ErrorResponse(int status, std::string_view message) {
  return HttpResponse::Error(status, ReasonFor(status), message);
}

bool LooksLikeJson(const HttpRequest& request) {
  auto it = request.headers.find("content-type");
  if (it != request.headers.end() && absl::AsciiStrToLower(it->second).find("json") != std::string::npos) {
    return true;
  }
  for (char c : request.body) {
    if (c == ' ' || c == '\t' || c == '\r' || c == '\n') continue;
    return c == '{' || c == '[';
  }
  return false;
}

}  // namespace

class HttpSession;

// The listener and the live sessions. Loop thread only.
class HttpListener : public std::enable_shared_from_this<HttpListener> {
 public:
  HttpListener(asio::io_context& io, HttpServerOptions options, HttpRouter router,
               std::unique_ptr<StaticFiles> static_files, HandlerPool* pool)
      : options_(std::move(options)),
        router_(std::move(router)),
        static_files_(std::move(static_files)),
        metrics_(options_.metrics != nullptr ? *options_.metrics
                                             : core::MetricsRegistry::Global()),
        acceptor_(io, "http", metrics_, GateLimits(options_)),
        pool_(pool) {}

  absl::StatusOr<int> Listen();
  void Accept();
  void Stop();
  void Remove(uint64_t id) {
    sessions_.erase(id);
    acceptor_.gate().Remove(id);
  }
  // Idle: waiting for the first byte of a request (ConnectionGate).
  void SetIdle(uint64_t id, bool idle) { acceptor_.gate().SetIdle(id, idle); }

  // Any thread (the router and the static files are read-only).
  HttpResponse Handle(HttpRequest& request);
  // Runs Handle on the pool (or inline without one) and passes the response
  // to `done` on the loop thread. False if the pool's queue is full.
  bool Dispatch(std::shared_ptr<HttpRequest> request, std::function<void(HttpResponse)> done);
  const HttpServerOptions& options() const { return options_; }
  void Count(int status) {
    metrics_.GetCounter("tempest_net_http_requests_total", {{"status", std::to_string(status)}})
        .Add();
  }

 private:
  void OnAccepted(tcp::socket socket, const std::string& peer);
  void Evict(uint64_t id);
  static ConnectionLimits GateLimits(const HttpServerOptions& o) {
    ConnectionLimits l = o.limits;
    l.max_connections = o.max_connections;
    return l;
  }

  HttpServerOptions options_;
  HttpRouter router_;
  std::unique_ptr<StaticFiles> static_files_;
  core::MetricsRegistry& metrics_;
  Acceptor acceptor_;
  HandlerPool* pool_;  // owned by the HttpServer; null once stopped
  std::map<uint64_t, std::weak_ptr<HttpSession>> sessions_;
  uint64_t next_id_ = 1;
  bool stopped_ = false;
};

// One connection: read a request, answer, repeat while keep-alive. Loop
// thread only. Reads by hand (read_some + parser.put) rather than with
// http::async_read so that every exception of the parser is caught here,
// and so that the bytes waiting for a complete head, chunk-size line or
// trailer stay bounded.
class HttpSession : public std::enable_shared_from_this<HttpSession> {
 public:
  HttpSession(uint64_t id, tcp::socket socket, std::shared_ptr<HttpListener> owner,
              bool over_capacity)
      : id_(id),
        stream_(std::move(socket)),
        owner_(std::move(owner)),
        over_capacity_(over_capacity) {}

  void Start() { ReadRequest(); }

  void Close() {
    if (closed_) return;
    closed_ = true;
    beast::error_code ignored;
    stream_.socket().shutdown(tcp::socket::shutdown_both, ignored);
    stream_.socket().close(ignored);
  }

 private:
  void Finish() {
    Close();
    owner_->Remove(id_);
  }

  void ReadRequest() {
    if (closed_) return;
    const auto& options = owner_->options();
    parser_.emplace();
    parser_->eager(true);
    parser_->body_limit(options.body_limit_bytes);
    parser_->header_limit(static_cast<uint32_t>(options.header_limit_bytes));
    request_started_ = false;
    owner_->SetIdle(id_, buffer_.size() == 0);
    stream_.expires_after(options.idle_timeout);
    if (buffer_.size() > 0) {
      Parse();  // a pipelined request is already here
    } else {
      ReadSome();
    }
  }

  void ReadSome() {
    auto self = shared_from_this();
    stream_.async_read_some(buffer_.prepare(kReadChunkBytes),
                            [self](beast::error_code ec, size_t n) { self->OnReadSome(ec, n); });
  }

  void OnReadSome(beast::error_code ec, size_t n) {
    if (closed_) return;
    if (ec) {
      // The client went away, idled out or was too slow: nothing to answer.
      Finish();
      return;
    }
    buffer_.commit(n);
    if (!request_started_) {
      // From the first byte on, the whole request has one deadline.
      request_started_ = true;
      owner_->SetIdle(id_, false);
      stream_.expires_after(owner_->options().request_timeout);
    }
    Parse();
  }

  void Parse() {
    beast::error_code ec;
    try {
      while (buffer_.size() > 0 && !parser_->is_done()) {
        const size_t used = parser_->put(buffer_.data(), ec);
        buffer_.consume(used);
        if (ec == http::error::need_more) {
          ec = {};
          break;
        }
        if (ec || used == 0) break;
      }
    } catch (const std::length_error& e) {
      Reply(ErrorResponse(431, absl::StrCat("request field too large: ", e.what())), false, true);
      return;
    } catch (const std::exception& e) {
      Reply(ErrorResponse(400, absl::StrCat("malformed request: ", e.what())), false, true);
      return;
    }
    if (ec) {
      OnParseError(ec);
      return;
    }
    if (parser_->is_done()) {
      OnRequest();
      return;
    }
    const auto& options = owner_->options();
    if (buffer_.size() >= std::max(options.header_limit_bytes, options.trailer_limit_bytes)) {
      Reply(ErrorResponse(431, absl::StrCat("request head, chunk size line or trailer exceeds ",
                                            std::max(options.header_limit_bytes,
                                                     options.trailer_limit_bytes),
                                            " bytes")),
            false, true);
      return;
    }
    ReadSome();
  }

  void OnParseError(beast::error_code ec) {
    const auto& options = owner_->options();
    if (ec == http::error::body_limit) {
      Reply(ErrorResponse(413, absl::StrCat("request body exceeds ", options.body_limit_bytes,
                                            " bytes")),
            false, true);
    } else if (ec == http::error::header_limit) {
      Reply(ErrorResponse(431, absl::StrCat("request head exceeds ", options.header_limit_bytes,
                                            " bytes")),
            false, true);
    } else {
      Reply(ErrorResponse(400, absl::StrCat("malformed request: ", ec.message())), false, true);
    }
  }

  void OnRequest() {
    auto& msg = parser_->get();
    auto request = std::make_shared<HttpRequest>();
    request->method = std::string(msg.method_string());
    request->target = std::string(msg.target());
    const size_t q = request->target.find('?');
    request->path = request->target.substr(0, q);
    if (q != std::string::npos) request->query = request->target.substr(q + 1);
    for (const auto& field : msg) {
      std::string name = absl::AsciiStrToLower(std::string(field.name_string()));
      // Two credentials or two hosts: which one a proxy, a handler or a log
      // used is ambiguous, so neither is.
      if ((name == "authorization" || name == "host") && request->headers.contains(name)) {
        Reply(ErrorResponse(400, absl::StrCat("the request has more than one ",
                                              std::string(field.name_string()), " header")),
              false, false);
        return;
      }
      request->headers[std::move(name)] = std::string(field.value());
    }
    request->body = std::move(msg.body());
    const bool keep_alive = msg.keep_alive();
    if (over_capacity_) {
      Reply(ErrorResponse(503, absl::StrCat("server busy: ", owner_->options().max_connections,
                                            " connections open, try again later")),
            false, false);
      return;
    }
    if (request->path.empty() || request->path[0] != '/') {
      Reply(ErrorResponse(400, "request target must be an absolute path"), false, false);
      return;
    }
    if (LooksLikeJson(*request)) {
      absl::Status depth = core::CheckJsonDepth(request->body, owner_->options().max_json_depth);
      if (!depth.ok()) {
        Reply(ErrorResponse(400, absl::StrCat("request body rejected: ", depth.message())),
              keep_alive, false);
        return;
      }
    }
    // Strong: while a handler runs on the pool no socket operation is
    // pending, so this callback is what keeps the session alive.
    auto self = shared_from_this();
    const bool queued = owner_->Dispatch(request, [self, keep_alive](HttpResponse response) {
      self->Reply(std::move(response), keep_alive, false);
    });
    if (!queued) {
      Reply(ErrorResponse(503, "server busy: too many requests waiting, try again later"),
            keep_alive, false);
    }
  }

  void Reply(HttpResponse response, bool keep_alive, bool drain) {
    if (closed_) return;
    owner_->Count(response.status);
    response_ = {};
    response_.version(11);
    response_.result(static_cast<unsigned>(response.status));
    response_.set(http::field::server, "tempest");
    response_.set(http::field::content_type, response.content_type);
    // On every response: no content sniffing, no framing, and nothing
    // loaded or run from a reply; a handler serving a page overrides the
    // Content-Security-Policy with one fitting the page.
    response_.set("X-Content-Type-Options", "nosniff");
    response_.set("X-Frame-Options", "DENY");
    response_.set("Content-Security-Policy", "default-src 'none'; frame-ancestors 'none'");
    for (const auto& [name, value] : response.headers) response_.set(name, value);
    response_.keep_alive(keep_alive);
    response_.body() = std::move(response.body);
    response_.prepare_payload();
    stream_.expires_after(owner_->options().idle_timeout);
    auto self = shared_from_this();
    http::async_write(stream_, response_, [self, keep_alive, drain](beast::error_code ec, size_t) {
      if (self->closed_) return;
      if (ec) {
        self->Finish();
      } else if (drain) {
        self->Drain();
      } else if (!keep_alive) {
        beast::error_code ignored;
        self->stream_.socket().shutdown(tcp::socket::shutdown_send, ignored);
        self->Finish();
      } else {
        self->ReadRequest();
      }
    });
  }

  void Drain() {
    beast::error_code ignored;
    stream_.socket().shutdown(tcp::socket::shutdown_send, ignored);
    stream_.expires_after(kDrainTimeout);
    auto self = shared_from_this();
    stream_.async_read_some(asio::buffer(drain_buf_), [self](beast::error_code ec, size_t n) {
      if (self->closed_) return;
      self->drained_ += n;
      if (ec || self->drained_ > kMaxDrainBytes) {
        self->Finish();
      } else {
        self->Drain();
      }
    });
  }

  const uint64_t id_;
  beast::tcp_stream stream_;
  std::shared_ptr<HttpListener> owner_;  // broken by Remove()/Stop()
  const bool over_capacity_;             // answer 503 to the request, then close
  beast::flat_buffer buffer_;
  std::optional<http::request_parser<http::string_body>> parser_;
  http::response<http::string_body> response_;
  char drain_buf_[16 << 10];
  size_t drained_ = 0;
  bool request_started_ = false;
  bool closed_ = false;
};

bool HttpListener::Dispatch(std::shared_ptr<HttpRequest> request,
                            std::function<void(HttpResponse)> done) {
  if (pool_ == nullptr) {
    done(Handle(*request));
    return true;
  }
  auto self = shared_from_this();
  std::function<void()> task = [self, request, done = std::move(done)]() mutable {
    HttpResponse response = self->Handle(*request);
    asio::post(self->acceptor_.executor(),
               [done = std::move(done), response = std::move(response)]() mutable {
                 done(std::move(response));
               });
  };
  return pool_->TrySubmit(task);
}

HttpResponse HttpListener::Handle(HttpRequest& request) {
  HttpRouter::Match match = router_.Route(request.method, request.path);
  if (match.kind == HttpRouter::MatchKind::kFound) {
    request.params = std::move(match.params);
    // The boundary where a throwing handler is contained (the brief's rule:
    // catch at the edge, never let an exception reach the event loop).
    try {
      return (*match.handler)(request);
    } catch (const std::exception& e) {
      spdlog::error("http: handler for {} {} threw: {}", request.method, request.path, e.what());
      return ErrorResponse(500, e.what());
    } catch (...) {
      spdlog::error("http: handler for {} {} threw a non-exception", request.method, request.path);
      return ErrorResponse(500, "handler failed");
    }
  }
  if (match.kind == HttpRouter::MatchKind::kMethodNotAllowed) {
    HttpResponse r =
        ErrorResponse(405, absl::StrCat(request.method, " not allowed for ", request.path,
                                        "; allowed: ", absl::StrJoin(match.allowed_methods, ", ")));
    return r;
  }
  if (static_files_ != nullptr && request.method == "GET") {
    auto file = static_files_->Read(request.path);
    if (file.ok()) {
      HttpResponse r;
      r.content_type = file->content_type;
      r.body = std::move(file->body);
      return r;
    }
    if (absl::IsPermissionDenied(file.status())) {
      return HttpResponse::Error(403, "Forbidden", api::StdSv(file.status().message()));
    }
    if (absl::IsInvalidArgument(file.status())) {
      return ErrorResponse(400, api::StdSv(file.status().message()));
    }
  }
  return ErrorResponse(404, absl::StrCat("no route for ", request.method, " ", request.path));
}

absl::StatusOr<int> HttpListener::Listen() {
  return acceptor_.Listen(options_.bind_address, options_.port);
}

void HttpListener::Accept() {
  if (stopped_) return;
  auto self = shared_from_this();
  acceptor_.Accept([self](tcp::socket socket, const std::string& peer) {
    self->OnAccepted(std::move(socket), peer);
  });
}

void HttpListener::Evict(uint64_t id) {
  auto it = sessions_.find(id);
  if (it == sessions_.end()) return;
  auto session = it->second.lock();
  Remove(id);
  if (session != nullptr) session->Close();
}

void HttpListener::OnAccepted(tcp::socket socket, const std::string& peer) {
  ConnectionGate& gate = acceptor_.gate();
  const ConnectionGate::Verdict verdict = gate.Admit(peer);
  for (uint64_t victim : verdict.evict) {
    gate.Report(peer, verdict.reason, /*refused=*/false);
    Evict(victim);
  }
  bool over_capacity = false;
  if (!verdict.admit) {
    gate.Report(peer, verdict.reason, /*refused=*/true);
    // Every connection is busy: a few more are read and answered 503 (so
    // the client learns why); beyond those, and whenever one address or the
    // descriptor reserve is the reason, they are closed at once.
    const size_t answered_busy = options_.max_connections / 8 + 8;
    over_capacity = std::string_view(verdict.reason) == "total_limit" &&
                    sessions_.size() < options_.max_connections + answered_busy;
    if (!over_capacity) {
      Count(503);
      beast::error_code ignored;
      socket.close(ignored);
      return;
    }
  }
  const uint64_t id = next_id_++;
  auto session =
      std::make_shared<HttpSession>(id, std::move(socket), shared_from_this(), over_capacity);
  sessions_.emplace(id, session);
  // Sessions answered 503 stay outside the gate: they close after one reply.
  if (!over_capacity) gate.Add(id, peer, /*idle=*/true);
  session->Start();
}

absl::Status ApplyApiLimits(const api::Config& config, HttpServerOptions& options) {
  ConnectionLimits defaults = options.limits;
  defaults.max_connections = options.max_connections;
  ASSIGN_OR_RETURN(options.limits, ConnectionLimitsOf(config, kApiLimitKeys, defaults));
  options.max_connections = options.limits.max_connections;
  return absl::OkStatus();
}

void HttpListener::Stop() {
  if (stopped_) return;
  stopped_ = true;
  pool_ = nullptr;
  acceptor_.Stop();
  auto sessions = std::move(sessions_);
  sessions_.clear();
  for (auto& [id, weak] : sessions) {
    if (auto s = weak.lock()) s->Close();
  }
}

HttpServer::HttpServer(EventLoop& loop, std::shared_ptr<HttpListener> listener,
                       std::unique_ptr<HandlerPool> pool, int port)
    : loop_(loop), listener_(std::move(listener)), pool_(std::move(pool)), port_(port) {}

absl::StatusOr<std::unique_ptr<HttpServer>> HttpServer::Create(EventLoop& loop,
                                                               HttpServerOptions options,
                                                               HttpRouter router) {
  std::unique_ptr<StaticFiles> static_files;
  if (!options.static_dir.empty()) {
    ASSIGN_OR_RETURN(static_files, StaticFiles::Create(options.static_dir));
  }
  if (options.max_connections == 0) {
    return absl::InvalidArgumentError("HttpServer needs max_connections >= 1");
  }
  std::unique_ptr<HandlerPool> pool;
  if (options.handler_threads > 0) {
    pool = std::make_unique<HandlerPool>(options.handler_threads,
                                         std::max<size_t>(1, options.max_queued_requests),
                                         "http-handler");
  }
  auto listener = std::make_shared<HttpListener>(loop.context(), std::move(options),
                                                 std::move(router), std::move(static_files),
                                                 pool.get());
  absl::StatusOr<int> port = absl::InternalError("not run");
  loop.RunSync([&] {
    port = listener->Listen();
    if (port.ok()) listener->Accept();
  });
  if (!port.ok()) {
    loop.RunSync([&] { listener->Stop(); });
    return port.status();
  }
  return std::unique_ptr<HttpServer>(
      new HttpServer(loop, std::move(listener), std::move(pool), *port));
}

HttpServer::~HttpServer() { Stop(); }

void HttpServer::Stop() {
  auto listener = listener_;
  loop_.RunSync([listener] { listener->Stop(); });
  // After the listener: no new task is queued; a running handler finishes
  // (its answer goes to a closed session and is dropped).
  if (pool_ != nullptr) pool_->Stop();
}

}  // namespace tempest::net
