#ifndef TEMPEST_COMMON_NET_HTTP_SERVER_H_
#define TEMPEST_COMMON_NET_HTTP_SERVER_H_

#include <chrono>
#include <cstddef>
#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "common/core/metrics_registry.h"
#include "common/net/event_loop.h"
#include "common/net/http_router.h"

namespace tempest::net {

class HttpListener;

struct HttpServerOptions {
  std::string bind_address = "127.0.0.1";
  int port = 0;  // 0 = ephemeral; read the bound port with port()
  // Larger request bodies get 413 (checked against Content-Length before the
  // body is read, and while reading chunked bodies).
  size_t body_limit_bytes = 1 << 20;
  // Larger request heads get 431.
  size_t header_limit_bytes = 16 << 10;
  // A keep-alive connection idle (or a request stalled) this long is closed.
  std::chrono::milliseconds idle_timeout = std::chrono::seconds(30);
  // If non-empty: GET requests that match no route are served from this
  // directory ("/" → index.html), with path-traversal protection.
  std::string static_dir;
  // nullptr = MetricsRegistry::Global(). Must outlive the server.
  core::MetricsRegistry* metrics = nullptr;
};

// An HTTP/1.1 server (Boost.Beast) for the REST API and the web UI. Owns the
// listening socket and every connection; all of them, and every handler
// call, run on the EventLoop's thread, so handlers must be quick and must
// not block (hand long work to another thread and answer 202, or run the
// server on a dedicated EventLoop).
//
// Errors never escape: malformed requests get 400, unknown routes 404,
// a wrong method 405, oversized bodies 413, oversized heads 431, handler
// exceptions 500 — all with a JSON body {"error": ..., "errorMessage": ...}
// shaped like the Storm UI REST API's errors. Keep-alive is honoured.
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
  HttpServer(EventLoop& loop, std::shared_ptr<HttpListener> listener, int port);

  EventLoop& loop_;
  std::shared_ptr<HttpListener> listener_;
  int port_;
};

}  // namespace tempest::net

#endif  // TEMPEST_COMMON_NET_HTTP_SERVER_H_
