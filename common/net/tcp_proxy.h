#ifndef TEMPEST_COMMON_NET_TCP_PROXY_H_
#define TEMPEST_COMMON_NET_TCP_PROXY_H_

#include <cstdint>
#include <memory>
#include <string>
#include <thread>

#include "absl/status/statusor.h"

namespace boost::asio {
class io_context;
}  // namespace boost::asio

namespace tempest::net {

class ProxyCore;

// A loopback TCP relay in front of one server, for fault injection: a
// fault-injection study points one client (e.g. a KafkaSpout's ZooKeeper
// client) at a proxy per server and then partitions just that client from
// the server, while every other process keeps talking to the server
// directly. A partition really disconnects the client (both of its relayed
// sockets are closed and reconnects are refused), so the server sees the
// client go silent and e.g. expires its ZooKeeper session.
//
// Relaying: each accepted connection gets its own upstream connection; bytes
// are copied in both directions through one bounded buffer per direction
// (kBufferBytes), and a side is read only once the previous chunk has been
// written to the other side, so a slow reader slows the writer through TCP's
// window instead of growing memory. There is no half-close: when either side
// closes or fails, both are closed. A failed upstream connect closes the
// client.
//
// Owns: its own io_context and the one thread that runs it (not the process's
// EventLoop, so a proxy never competes with or depends on the code under
// test), the listening socket and every relayed connection. Nothing that a
// peer does throws out of that thread.
//
// Thread-safety: every public method may be called from any thread.
// Destroying the proxy closes every connection and joins the thread.
class TcpProxy {
 public:
  // Per direction and connection.
  static constexpr size_t kBufferBytes = 64 << 10;

  // Listens on 127.0.0.1:<free port> and relays every accepted connection to
  // target_host:target_port. The target is resolved once, here (an
  // unresolvable host is an error); it need not be listening yet.
  static absl::StatusOr<std::unique_ptr<TcpProxy>> Start(std::string target_host, int target_port);
  ~TcpProxy();

  TcpProxy(const TcpProxy&) = delete;
  TcpProxy& operator=(const TcpProxy&) = delete;

  // The listening port.
  int port() const { return port_; }
  // "127.0.0.1:PORT": what the client is given instead of the target.
  std::string address() const;

  // true: closes every relayed connection now (both sides) and, while
  // partitioned, closes each new connection right after accepting it,
  // without connecting upstream. false: relays new connections again.
  // Returns once the io thread has applied the change, so connections that
  // were open are already closed when SetPartitioned(true) returns.
  void SetPartitioned(bool partitioned);
  bool partitioned() const;

  // Connections accepted since Start, including those closed at once
  // because of a partition (a client that keeps reconnecting shows here).
  int64_t connections_accepted() const;

 private:
  TcpProxy() = default;

  // Destroyed in reverse order: the destructor joins the thread before the
  // core (listener, connections) goes, and the sockets go before their
  // io_context. Handlers refer to the core by plain pointer for that reason.
  std::unique_ptr<boost::asio::io_context> io_;
  std::unique_ptr<ProxyCore> core_;
  std::thread thread_;
  int port_ = 0;
};

}  // namespace tempest::net

#endif  // TEMPEST_COMMON_NET_TCP_PROXY_H_
