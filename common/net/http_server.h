#ifndef TEMPEST_COMMON_NET_HTTP_SERVER_H_
#define TEMPEST_COMMON_NET_HTTP_SERVER_H_

#include <chrono>
#include <cstddef>
#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "common/core/metrics_registry.h"
#include "common/net/connection_gate.h"
#include "common/net/event_loop.h"
#include "common/net/http_router.h"

namespace tempest::net {

class HandlerPool;
class HttpListener;

struct HttpServerOptions {
  std::string bind_address = "127.0.0.1";
  int port = 0;  // 0 = ephemeral; read the bound port with port()
  // Larger request bodies get 413 (checked against Content-Length before the
  // body is read, and against each chunk size of chunked bodies).
  size_t body_limit_bytes = 1 << 20;
  // Larger request heads get 431.
  size_t header_limit_bytes = 16 << 10;
  // A chunked body's trailer (its header fields after the last chunk), or a
  // chunk-size line, larger than this gets 431.
  size_t trailer_limit_bytes = 16 << 10;
  // A keep-alive connection idle this long between requests is closed.
  std::chrono::milliseconds idle_timeout = std::chrono::seconds(30);
  // A request must arrive completely (head and body) within this long of
  // its first byte, or the connection is closed (slow-request clients).
  std::chrono::milliseconds request_timeout = std::chrono::seconds(30);
  // Open connections beyond this are answered 503 and closed; a small
  // number more than that are closed at once. But first the oldest idle
  // connection (no request under way) is closed to make room, so idle
  // sockets never lock a client out.
  size_t max_connections = 256;
  // Connections from one address (beyond: the oldest idle one of that
  // address is closed, or the newcomer when none is idle) and the
  // descriptors kept free for the rest of the process (ConnectionGate).
  // limits.max_connections is ignored: max_connections above is the total.
  ConnectionLimits limits{.max_connections = 256, .max_per_peer = 64, .descriptor_reserve = 32};
  // Bodies that look like JSON (Content-Type mentions json, or the body
  // starts with '{' or '[') nesting deeper than this get 400 before any
  // handler parses them (core::CheckJsonDepth).
  int max_json_depth = 64;
  // 0: handlers run on the EventLoop thread (they must be quick). N > 0:
  // handlers run on a pool of N threads, so a slow handler does not delay
  // other requests; at most `max_queued_requests` wait for a thread, more
  // get 503. Handlers must then be safe to call concurrently.
  size_t handler_threads = 0;
  size_t max_queued_requests = 64;
  // If non-empty: GET requests that match no route are served from this
  // directory ("/" → index.html), with path-traversal protection.
  std::string static_dir;
  // nullptr = MetricsRegistry::Global(). Must outlive the server.
  core::MetricsRegistry* metrics = nullptr;
};

// The REST API's connection keys: tempest.api.max.connections (default 256),
// tempest.api.max.connections.per.peer (64), tempest.api.descriptor.reserve
// (32), applied to `options`. InvalidArgument naming the key.
inline constexpr ConnectionLimitKeys kApiLimitKeys = {"tempest.api.max.connections",
                                                      "tempest.api.max.connections.per.peer",
                                                      "tempest.api.descriptor.reserve"};
absl::Status ApplyApiLimits(const api::Config& config, HttpServerOptions& options);

// An HTTP/1.1 server (Boost.Beast) for the REST API and the web UI. Owns the
// listening socket and every connection; all of them run on the EventLoop's
// thread. Handlers run there too (then they must be quick) or, with
// `handler_threads` > 0, on the server's own pool.
//
// Errors never escape: malformed requests get 400, too deep JSON 400,
// unknown routes 404, a wrong method 405, oversized bodies 413, oversized
// heads or trailers 431, handler exceptions (and any exception of the
// parser) 500 or 400, too many connections or a full handler queue 503 —
// all with a JSON body {"error": ..., "errorMessage": ...} shaped like the
// Storm UI REST API's errors. A request with two Authorization or two Host
// header fields gets 400. Every response carries X-Content-Type-Options:
// nosniff, X-Frame-Options: DENY and a Content-Security-Policy that allows
// nothing (a handler's own Content-Security-Policy header replaces it).
// Keep-alive is honoured. Failed accepts (e.g.
// out of descriptors) are retried with a growing delay (AcceptBackoff).
//
// Thread-safety: Create, port and Stop may be called from any thread. The
// EventLoop must outlive the server; destroying the server stops it.
class HttpServer {
 public:
  static absl::StatusOr<std::unique_ptr<HttpServer>> Create(EventLoop& loop,
                                                            HttpServerOptions options,
                                                            HttpRouter router);
  ~HttpServer();

  HttpServer(const HttpServer&) = delete;
  HttpServer& operator=(const HttpServer&) = delete;

  int port() const { return port_; }
  // Closes the listener and all connections. Idempotent.
  void Stop();

 private:
  HttpServer(EventLoop& loop, std::shared_ptr<HttpListener> listener,
             std::unique_ptr<HandlerPool> pool, int port);

  EventLoop& loop_;
  std::shared_ptr<HttpListener> listener_;
  std::unique_ptr<HandlerPool> pool_;  // null without handler_threads
  int port_;
};

}  // namespace tempest::net

#endif  // TEMPEST_COMMON_NET_HTTP_SERVER_H_
