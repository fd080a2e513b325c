#ifndef TEMPEST_COMMON_NET_ACCEPTOR_H_
#define TEMPEST_COMMON_NET_ACCEPTOR_H_

#include <functional>
#include <string>

#include "absl/status/statusor.h"
#include "boost/asio/io_context.hpp"
#include "boost/asio/ip/tcp.hpp"
#include "boost/system/error_code.hpp"
#include "common/core/metrics_registry.h"
#include "common/net/accept_backoff.h"
#include "common/net/connection_gate.h"

namespace tempest::net {

// The listening side both servers share (HttpServer and TransportServer):
// the socket bound and listening, the accept loop with its AcceptBackoff,
// and the ConnectionGate that decides which accepted connections stay. The
// owner gets each accepted socket with its peer's address, asks gate()
// whether to keep it, and evicts what the gate names: that part differs
// between HTTP (a few extra connections are answered 503) and frames.
//
// Included by common/net's .cc files only (it pulls in Asio). Loop thread
// only; it lives inside its owner, whose accept handler keeps the owner (and
// so this) alive while an accept is pending.
class Acceptor {
 public:
  // Called with each accepted socket and its peer's address ("?" when the
  // socket has none).
  using OnAccepted = std::function<void(boost::asio::ip::tcp::socket, const std::string& peer)>;

  // `side` ("http", "transport") names the accept errors and gate decisions
  // in the log and in metrics.
  Acceptor(boost::asio::io_context& io, const std::string& side, core::MetricsRegistry& metrics,
           const ConnectionLimits& limits);

  // Binds `bind_address`:`port` (0: any free port) with SO_REUSEADDR, so a
  // restarted process re-binds while old connections linger in TIME_WAIT,
  // and listens. `receive_buffer_bytes` > 0 sets SO_RCVBUF on the listener,
  // so accepted sockets have it before the window is negotiated. The bound
  // port; InvalidArgument for a bad address or port, Unavailable when the
  // address is in use, Internal otherwise.
  absl::StatusOr<int> Listen(const std::string& bind_address, int port,
                             int receive_buffer_bytes = 0);
  // Accepts until Stop: each connection goes to `on_accepted`; a failed
  // accept runs `on_failed` (if set) and waits per AcceptBackoff before the
  // next attempt.
  void Accept(OnAccepted on_accepted, std::function<void()> on_failed = {});
  // Closes the listener; no handler runs afterwards.
  void Stop();

  ConnectionGate& gate() { return gate_; }
  // The loop's executor, for posting back to the loop thread (any thread).
  boost::asio::ip::tcp::acceptor::executor_type executor() { return acceptor_.get_executor(); }

 private:
  boost::asio::ip::tcp::acceptor acceptor_;
  AcceptBackoff backoff_;
  ConnectionGate gate_;
  bool stopped_ = false;
};

}  // namespace tempest::net

#endif  // TEMPEST_COMMON_NET_ACCEPTOR_H_
