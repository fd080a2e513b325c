// Raw loopback clients for the hostile-input and flood tests: sockets that
// connect and then do as little (or as much) as an attacker would, and the
// /proc and prlimit helpers that watch and squeeze a daemon's descriptors.

#ifndef TEMPEST_TESTS_INTEGRATION_NET_HOSTILE_PEER_H_
#define TEMPEST_TESTS_INTEGRATION_NET_HOSTILE_PEER_H_

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include "absl/strings/str_cat.h"

namespace tempest::testing {

using std::chrono::milliseconds;
using std::chrono::seconds;

// A raw loopback TCP connection, closed on destruction.
class RawConn {
 public:
  // `source`: the loopback address to connect from (another "peer").
  explicit RawConn(int port, const char* source = nullptr) {
    fd_ = ::socket(AF_INET, SOCK_STREAM, 0);
    if (fd_ >= 0 && source != nullptr) {
      sockaddr_in from{};
      from.sin_family = AF_INET;
      if (::inet_pton(AF_INET, source, &from.sin_addr) != 1 ||
          ::bind(fd_, reinterpret_cast<sockaddr*>(&from), sizeof(from)) != 0) {
        return;
      }
    }
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_port = htons(static_cast<uint16_t>(port));
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    connected_ = fd_ >= 0 && ::connect(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) == 0;
  }
  ~RawConn() {
    if (fd_ >= 0) ::close(fd_);
  }
  RawConn(const RawConn&) = delete;
  RawConn& operator=(const RawConn&) = delete;

  bool connected() const { return connected_; }
  // True if the peer has closed (or reset) the connection by now; reads
  // and discards what it sent before.
  bool ClosedByPeer() {
    for (int i = 0; i < 1000; ++i) {
      pollfd p{fd_, POLLIN, 0};
      if (::poll(&p, 1, 0) <= 0) return false;
      char buf[4096];
      const ssize_t n = ::recv(fd_, buf, sizeof(buf), MSG_DONTWAIT);
      if (n <= 0) return true;
    }
    return false;
  }
  // Sends everything; false if the peer refused part of it.
  bool Send(const std::string& bytes) {
    size_t done = 0;
    while (done < bytes.size()) {
      const ssize_t n = ::send(fd_, bytes.data() + done, bytes.size() - done, MSG_NOSIGNAL);
      if (n <= 0) return false;
      done += static_cast<size_t>(n);
    }
    return true;
  }
  // Reads until the peer closes or `deadline` passes; true if it closed.
  // What arrived is in `received`.
  bool ReadUntilClosed(milliseconds deadline, std::string* received = nullptr) {
    const auto until = std::chrono::steady_clock::now() + deadline;
    for (int i = 0; i < 100000; ++i) {
      const auto left =
          std::chrono::duration_cast<milliseconds>(until - std::chrono::steady_clock::now());
      if (left.count() <= 0) return false;
      pollfd p{fd_, POLLIN, 0};
      if (::poll(&p, 1, static_cast<int>(left.count())) <= 0) return false;
      char buf[8192];
      const ssize_t n = ::recv(fd_, buf, sizeof(buf), 0);
      if (n <= 0) return true;  // EOF or reset: closed by the server
      if (received != nullptr) received->append(buf, static_cast<size_t>(n));
    }
    return false;
  }

 private:
  int fd_ = -1;
  bool connected_ = false;
};

// The status code of a raw HTTP reply ("HTTP/1.1 431 ..."), 0 if none.
inline int StatusOf(const std::string& reply) {
  if (reply.size() < 12 || reply.compare(0, 5, "HTTP/") != 0) return 0;
  return std::atoi(reply.substr(9, 3).c_str());
}

// One raw request; the reply's status (0: closed without one).
inline int RawStatus(int port, const std::string& request) {
  RawConn c(port);
  std::string reply;
  if (!c.connected() || !c.Send(request)) return 0;
  c.ReadUntilClosed(seconds(10), &reply);
  return StatusOf(reply);
}

inline int OpenFds(pid_t pid) {
  std::error_code ec;
  int n = 0;
  for (auto it = std::filesystem::directory_iterator(absl::StrCat("/proc/", pid, "/fd"), ec);
       !ec && it != std::filesystem::directory_iterator(); it.increment(ec)) {
    ++n;
  }
  return n;
}

inline int CountLines(const std::string& path, const std::string& needle) {
  std::ifstream in(path);
  std::string line;
  int n = 0;
  while (std::getline(in, line)) n += line.find(needle) != std::string::npos ? 1 : 0;
  return n;
}

// The real uid or gid of `pid` (`field` "Uid:" or "Gid:" of
// /proc/PID/status), -1 if unknown.
inline int64_t RealId(pid_t pid, const std::string& field) {
  std::ifstream status(absl::StrCat("/proc/", pid, "/status"));
  for (std::string line; std::getline(status, line);) {
    if (line.rfind(field, 0) == 0) return std::stoll(line.substr(field.size()));
  }
  return -1;
}

// prlimit(RLIMIT_NOFILE) of `pid`. Without CAP_SYS_RESOURCE (containers
// drop it) only a process of the target's own uid and gid may do that,
// and workers under a root supervisor run as another account: then a
// forked child becomes that account first.
inline bool NoFileLimit(pid_t pid, const rlimit* set, rlimit* get) {
  if (::prlimit(pid, RLIMIT_NOFILE, set, get) == 0) return true;
  if (errno != EPERM || ::geteuid() != 0) return false;
  const int64_t uid = RealId(pid, "Uid:"), gid = RealId(pid, "Gid:");
  if (uid < 0 || gid < 0) return false;
  int fds[2];
  if (::pipe(fds) != 0) return false;
  const pid_t child = ::fork();
  if (child == 0) {
    rlimit old{};
    const bool ok = ::setresgid(gid, gid, gid) == 0 && ::setresuid(uid, uid, uid) == 0 &&
                    ::prlimit(pid, RLIMIT_NOFILE, set, &old) == 0;
    if (ok && ::write(fds[1], &old, sizeof(old)) != sizeof(old)) ::_exit(2);
    ::_exit(ok ? 0 : 1);
  }
  ::close(fds[1]);
  rlimit old{};
  const bool got = ::read(fds[0], &old, sizeof(old)) == sizeof(old);
  ::close(fds[0]);
  int status = 0;
  ::waitpid(child, &status, 0);
  if (!got || !WIFEXITED(status) || WEXITSTATUS(status) != 0) return false;
  if (get != nullptr) *get = old;
  return true;
}

}  // namespace tempest::testing

#endif  // TEMPEST_TESTS_INTEGRATION_NET_HOSTILE_PEER_H_
