#include "common/os/loopback.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "common/core/status_macros.h"
#include "common/os/unique_fd.h"

namespace tempest::os {
namespace {

int RemainingMs(std::chrono::steady_clock::time_point deadline) {
  auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
      deadline - std::chrono::steady_clock::now());
  return left.count() < 0 ? 0 : static_cast<int>(left.count());
}

// Non-blocking connect bounded by the deadline; returns the connected fd.
absl::StatusOr<UniqueFd> ConnectWithDeadline(const std::string& host, int port,
                                             std::chrono::steady_clock::time_point deadline) {
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<uint16_t>(port));
  if (::inet_pton(AF_INET, host.c_str(), &addr.sin_addr) != 1) {
    return absl::InvalidArgumentError(absl::StrCat("not an IPv4 address: ", host));
  }
  UniqueFd fd(::socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0));
  if (!fd.valid()) return absl::InternalError(absl::StrCat("socket: ", std::strerror(errno)));
  if (::connect(fd.get(), reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0 &&
      errno != EINPROGRESS) {
    int err = errno;
    return absl::UnavailableError(absl::StrCat("connect ", host, ":", port, ": ",
                                               std::strerror(err)));
  }
  pollfd p{fd.get(), POLLOUT, 0};
  if (::poll(&p, 1, RemainingMs(deadline)) <= 0) {
    return absl::DeadlineExceededError(absl::StrCat("connect ", host, ":", port, " timed out"));
  }
  int err = 0;
  socklen_t len = sizeof(err);
  ::getsockopt(fd.get(), SOL_SOCKET, SO_ERROR, &err, &len);
  if (err != 0) {
    return absl::UnavailableError(absl::StrCat("connect ", host, ":", port, ": ",
                                               std::strerror(err)));
  }
  return fd;
}

}  // namespace

absl::StatusOr<int> FindFreeLoopbackPort() {
  const UniqueFd fd(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
  if (!fd.valid()) return absl::InternalError(absl::StrCat("socket: ", std::strerror(errno)));
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = 0;
  if (::bind(fd.get(), reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0) {
    return absl::InternalError(absl::StrCat("bind: ", std::strerror(errno)));
  }
  socklen_t len = sizeof(addr);
  if (::getsockname(fd.get(), reinterpret_cast<sockaddr*>(&addr), &len) != 0) {
    return absl::InternalError(absl::StrCat("getsockname: ", std::strerror(errno)));
  }
  return ntohs(addr.sin_port);
}

bool TcpPortAccepts(const std::string& host, int port, std::chrono::milliseconds timeout) {
  return ConnectWithDeadline(host, port, std::chrono::steady_clock::now() + timeout).ok();
}

absl::StatusOr<std::string> TcpRequest(const std::string& host, int port,
                                       const std::string& request,
                                       std::chrono::milliseconds timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  ASSIGN_OR_RETURN(const UniqueFd fd, ConnectWithDeadline(host, port, deadline));
  size_t sent = 0;
  while (sent < request.size()) {
    pollfd p{fd.get(), POLLOUT, 0};
    if (::poll(&p, 1, RemainingMs(deadline)) <= 0) {
      return absl::DeadlineExceededError("request write timed out");
    }
    ssize_t n = ::send(fd.get(), request.data() + sent, request.size() - sent, MSG_NOSIGNAL);
    if (n < 0 && errno != EAGAIN && errno != EINTR) {
      return absl::UnavailableError(absl::StrCat("send: ", std::strerror(errno)));
    }
    if (n > 0) sent += static_cast<size_t>(n);
  }
  ::shutdown(fd.get(), SHUT_WR);
  std::string reply;
  char buf[4096];
  for (;;) {
    pollfd p{fd.get(), POLLIN, 0};
    int ready = ::poll(&p, 1, RemainingMs(deadline));
    if (ready <= 0) return absl::DeadlineExceededError("reply read timed out");
    ssize_t n = ::recv(fd.get(), buf, sizeof(buf), 0);
    if (n == 0) break;
    if (n < 0) {
      if (errno == EAGAIN || errno == EINTR) continue;
      return absl::UnavailableError(absl::StrCat("recv: ", std::strerror(errno)));
    }
    reply.append(buf, static_cast<size_t>(n));
  }
  return reply;
}

}  // namespace tempest::os
