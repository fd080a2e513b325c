#ifndef TEMPEST_TESTS_INTEGRATION_COORD_TCP_PROXY_H_
#define TEMPEST_TESTS_INTEGRATION_COORD_TCP_PROXY_H_

#include <atomic>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

namespace tempest::testing {

// A loopback TCP proxy in front of one server port, for injecting network
// faults that a process pause cannot produce deterministically: it can
// silently discard either direction of traffic (a request that reaches the
// server but whose reply is lost, or a request that never arrives).
// Owns a listening socket and one thread per direction pair; test-only.
class TcpProxy {
 public:
  explicit TcpProxy(int target_port);
  ~TcpProxy();

  int port() const { return port_; }
  // Discard bytes flowing client -> server / server -> client.
  void DropToServer(bool drop) { drop_to_server_ = drop; }
  void DropToClient(bool drop) { drop_to_client_ = drop; }

 private:
  void AcceptLoop();
  void Pump(int client_fd, int server_fd);

  int target_port_;
  int listen_fd_ = -1;
  int port_ = 0;
  std::atomic<bool> stop_{false};
  std::atomic<bool> drop_to_server_{false};
  std::atomic<bool> drop_to_client_{false};
  std::thread acceptor_;
  std::mutex mu_;
  std::vector<std::thread> pumps_;
};

}  // namespace tempest::testing

#endif  // TEMPEST_TESTS_INTEGRATION_COORD_TCP_PROXY_H_
