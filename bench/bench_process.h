#ifndef TEMPEST_BENCH_BENCH_PROCESS_H_
#define TEMPEST_BENCH_BENCH_PROCESS_H_

// Plumbing for benchmarks that fork worker processes (cluster_bench): a free
// loopback port, whole reads and writes on pipes, and a rate timed from a
// polled counter. Benchmark code only: header-only; every failure prints
// "bench: ..." and exits with status 1.

#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <thread>

namespace tempest::bench {

[[noreturn]] inline void Fail(const char* what) {
  std::fprintf(stderr, "bench: %s\n", what);
  std::exit(1);
}

// A loopback TCP port nobody listens on right now.
inline int FreePort() {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof(addr);
  if (fd < 0 || ::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0 ||
      ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) != 0) {
    Fail("no free port");
  }
  ::close(fd);
  return ntohs(addr.sin_port);
}

inline void WriteAll(int fd, const void* data, size_t n) {
  if (::write(fd, data, n) != static_cast<ssize_t>(n)) Fail("pipe write");
}

// Reads exactly `n` bytes (a pipe may return less per read).
inline void ReadAll(int fd, void* data, size_t n) {
  char* p = static_cast<char*>(data);
  while (n > 0) {
    const ssize_t got = ::read(fd, p, n);
    if (got <= 0) Fail("pipe read");
    p += got;
    n -= static_cast<size_t>(got);
  }
}

// Polls `counter` until it reaches `n`; the rate between n/8 and n (start-up
// excluded). Fails when `limit` passes first.
inline double TimedRate(const std::function<int64_t()>& counter, int64_t n,
                        std::chrono::seconds limit) {
  using Clock = std::chrono::steady_clock;
  const int64_t from = n / 8;
  const auto deadline = Clock::now() + limit;
  while (counter() < from) {
    if (Clock::now() > deadline) Fail("stalled before n/8");
    std::this_thread::sleep_for(std::chrono::microseconds(100));
  }
  const int64_t c0 = counter();
  const auto t0 = Clock::now();
  while (counter() < n) {
    if (Clock::now() > deadline) Fail("stalled before n");
    std::this_thread::sleep_for(std::chrono::microseconds(100));
  }
  const double secs = std::chrono::duration<double>(Clock::now() - t0).count();
  return static_cast<double>(n - c0) / secs;
}

}  // namespace tempest::bench

#endif  // TEMPEST_BENCH_BENCH_PROCESS_H_
