#include "tests/integration/coord/tcp_proxy.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstdlib>

namespace tempest::testing {
namespace {
sockaddr_in Loopback(int port) {
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<uint16_t>(port));
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  return addr;
}
}  // namespace

TcpProxy::TcpProxy(int target_port) : target_port_(target_port) {
  listen_fd_ = ::socket(AF_INET, SOCK_STREAM, 0);
  int one = 1;
  ::setsockopt(listen_fd_, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
  sockaddr_in addr = Loopback(0);
  if (::bind(listen_fd_, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0 ||
      ::listen(listen_fd_, 64) != 0) {
    std::abort();  // a test fixture that cannot listen on loopback is a broken machine
  }
  socklen_t len = sizeof(addr);
  ::getsockname(listen_fd_, reinterpret_cast<sockaddr*>(&addr), &len);
  port_ = ntohs(addr.sin_port);
  acceptor_ = std::thread([this] { AcceptLoop(); });
}

TcpProxy::~TcpProxy() {
  stop_ = true;
  if (acceptor_.joinable()) acceptor_.join();
  std::vector<std::thread> pumps;
  {
    std::lock_guard<std::mutex> lock(mu_);
    pumps.swap(pumps_);
  }
  for (auto& t : pumps) t.join();
  ::close(listen_fd_);
}

void TcpProxy::AcceptLoop() {
  while (!stop_) {
    pollfd p{listen_fd_, POLLIN, 0};
    if (::poll(&p, 1, 50) <= 0) continue;
    int client = ::accept(listen_fd_, nullptr, nullptr);
    if (client < 0) continue;
    int server = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in addr = Loopback(target_port_);
    if (::connect(server, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0) {
      ::close(client);
      ::close(server);
      continue;
    }
    std::lock_guard<std::mutex> lock(mu_);
    pumps_.emplace_back([this, client, server] { Pump(client, server); });
  }
}

void TcpProxy::Pump(int client_fd, int server_fd) {
  char buf[64 * 1024];
  bool open = true;
  while (open && !stop_) {
    pollfd fds[2] = {{client_fd, POLLIN, 0}, {server_fd, POLLIN, 0}};
    if (::poll(fds, 2, 50) <= 0) continue;
    for (int i = 0; i < 2 && open; ++i) {
      if ((fds[i].revents & (POLLIN | POLLHUP | POLLERR)) == 0) continue;
      const ssize_t n = ::read(fds[i].fd, buf, sizeof(buf));
      if (n <= 0) {
        open = false;
        break;
      }
      const bool to_server = i == 0;
      if (to_server ? drop_to_server_.load() : drop_to_client_.load()) continue;
      const int out = to_server ? server_fd : client_fd;
      ssize_t off = 0;
      while (off < n) {
        const ssize_t w = ::write(out, buf + off, static_cast<size_t>(n - off));
        if (w <= 0) {
          open = false;
          break;
        }
        off += w;
      }
    }
  }
  ::close(client_fd);
  ::close(server_fd);
}

}  // namespace tempest::testing
