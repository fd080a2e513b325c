// Transport throughput (common/net): 100-byte messages in batches from a
// TransportClient to a TransportServer over loopback, next to a same-run
// baseline of raw blocking TCP writes of 64 KB buffers between two threads.
//
// The client and the server each get their own EventLoop (as two worker
// processes would); the producing thread builds batches and calls Send with
// a blocking timeout. Throughput counts from the first Send until the
// receive callback has seen every message.
//
// Usage: net_transport_bench [--messages N] [--batch B] [--size S] [--reps R]
//                            [--flush-us U] [--min-write K] [--mac-every-frame 0|1]
// Not a test: it checks only that every message arrived (and aborts otherwise).

#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "common/core/metrics_registry.h"
#include "common/net/batch.h"
#include "common/net/event_loop.h"
#include "common/net/transport_client.h"
#include "common/net/transport_server.h"

namespace {

using SteadyClock = std::chrono::steady_clock;
using tempest::net::Batch;

struct Args {
  int64_t messages = 5'000'000;
  int batch = 100;
  size_t size = 100;
  int reps = 5;
  int flush_us = 1000;
  size_t min_write = 16 << 10;
  bool mac_every_frame = false;  // default: handshake-only authentication
};

[[noreturn]] void Die(const std::string& why) {
  std::fprintf(stderr, "net_transport_bench: %s\n", why.c_str());
  std::exit(1);
}

struct Result {
  double seconds = 0;
  double msgs_per_s = 0;
  double mb_per_s = 0;  // payload MB/s (1 MB = 1e6 bytes)
};

Result RunTransport(const Args& args) {
  tempest::core::MetricsRegistry metrics;
  auto server_loop = tempest::net::EventLoop::Create("bench-server");
  auto client_loop = tempest::net::EventLoop::Create("bench-client");
  if (!server_loop.ok() || !client_loop.ok()) Die("event loop");

  std::atomic<int64_t> received{0};
  std::atomic<int64_t> checksum{0};
  tempest::net::TransportServerOptions server_options;
  server_options.secret = "bench-secret";
  server_options.metrics = &metrics;
  server_options.require_frame_mac = args.mac_every_frame;
  auto server = tempest::net::TransportServer::Create(
      **server_loop, server_options,
      [&](tempest::net::ConnectionId, std::span<const tempest::net::Message> messages) {
        // Touch every message the way a receiver must (route by task, look
        // at the bytes) so the figure is not just "bytes arrived".
        int64_t sum = 0;
        for (const auto& m : messages) sum += m.task_id + static_cast<uint8_t>(m.bytes[0]);
        checksum.fetch_add(sum, std::memory_order_relaxed);
        received.fetch_add(static_cast<int64_t>(messages.size()), std::memory_order_release);
        return true;
      });
  if (!server.ok()) Die(std::string(server.status().message()));

  tempest::net::TransportClientOptions client_options;
  client_options.port = (*server)->port();
  client_options.secret = "bench-secret";
  client_options.metrics = &metrics;
  client_options.flush_interval = std::chrono::microseconds(args.flush_us);
  client_options.min_write_bytes = args.min_write;
  client_options.mac_every_frame = args.mac_every_frame;
  auto client = tempest::net::TransportClient::Create(**client_loop, client_options);
  if (!client.ok()) Die(std::string(client.status().message()));
  for (int i = 0; i < 5000 && !(*client)->connected(); ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  if (!(*client)->connected()) Die("client did not connect");

  const std::string payload(args.size, 'p');
  const auto start = SteadyClock::now();
  Batch batch;
  batch.Reserve(static_cast<size_t>(args.batch) * (args.size + Batch::kPerMessageOverhead));
  int64_t expected_sum = 0;
  for (int64_t i = 0; i < args.messages; ++i) {
    const int32_t task = static_cast<int32_t>(i & 63);
    batch.Add(task, payload);
    expected_sum += task + 'p';
    if (batch.message_count() == static_cast<uint32_t>(args.batch) || i + 1 == args.messages) {
      for (;;) {
        const auto s = (*client)->Send(batch, std::chrono::milliseconds(1000));
        if (s.ok()) break;
        if (!absl::IsResourceExhausted(s)) Die(std::string(s.message()));
      }
      batch.Reserve(static_cast<size_t>(args.batch) * (args.size + Batch::kPerMessageOverhead));
    }
  }
  (*client)->Flush();
  const auto give_up = SteadyClock::now() + std::chrono::seconds(120);
  while (received.load(std::memory_order_acquire) < args.messages) {
    if (SteadyClock::now() > give_up) Die("messages did not all arrive");
    std::this_thread::sleep_for(std::chrono::microseconds(200));
  }
  const double secs = std::chrono::duration<double>(SteadyClock::now() - start).count();
  if (received.load() != args.messages || checksum.load() != expected_sum) {
    Die("lost, duplicated or corrupted messages");
  }
  Result r;
  r.seconds = secs;
  r.msgs_per_s = static_cast<double>(args.messages) / secs;
  r.mb_per_s = static_cast<double>(args.messages) * static_cast<double>(args.size) / secs / 1e6;
  client->reset();
  server->reset();
  return r;
}

// Raw blocking TCP over loopback: one thread writes 64 KB buffers, another
// reads them. Moves the same number of payload bytes as the transport run.
Result RunRawTcp(const Args& args) {
  constexpr size_t kChunk = 64 << 10;
  const int64_t total = args.messages * static_cast<int64_t>(args.size);
  const int listener = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (::bind(listener, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0) Die("bind");
  if (::listen(listener, 1) != 0) Die("listen");
  socklen_t len = sizeof(addr);
  ::getsockname(listener, reinterpret_cast<sockaddr*>(&addr), &len);

  std::atomic<int64_t> got{0};
  std::thread reader([&] {
    const int fd = ::accept(listener, nullptr, nullptr);
    std::vector<char> buf(kChunk);
    int64_t n = 0;
    while (n < total) {
      const ssize_t r = ::recv(fd, buf.data(), buf.size(), 0);
      if (r <= 0) break;
      n += r;
    }
    got.store(n);
    ::close(fd);
  });
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  if (::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0) Die("connect");
  const int one = 1;
  ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
  std::vector<char> buf(kChunk, 'r');
  const auto start = SteadyClock::now();
  int64_t sent = 0;
  while (sent < total) {
    const size_t want = static_cast<size_t>(std::min<int64_t>(kChunk, total - sent));
    const ssize_t w = ::send(fd, buf.data(), want, MSG_NOSIGNAL);
    if (w <= 0) Die("send");
    sent += w;
  }
  reader.join();
  const double secs = std::chrono::duration<double>(SteadyClock::now() - start).count();
  ::close(fd);
  ::close(listener);
  if (got.load() != total) Die("raw tcp lost bytes");
  Result r;
  r.seconds = secs;
  r.mb_per_s = static_cast<double>(total) / secs / 1e6;
  r.msgs_per_s = static_cast<double>(total) / static_cast<double>(args.size) / secs;
  return r;
}

double Median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 == 1 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

}  // namespace

int main(int argc, char** argv) {
  Args args;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string flag = argv[i];
    const char* value = argv[i + 1];
    if (flag == "--messages") {
      args.messages = std::atoll(value);
    } else if (flag == "--batch") {
      args.batch = std::atoi(value);
    } else if (flag == "--size") {
      args.size = static_cast<size_t>(std::atoll(value));
    } else if (flag == "--reps") {
      args.reps = std::atoi(value);
    } else if (flag == "--flush-us") {
      args.flush_us = std::atoi(value);
    } else if (flag == "--min-write") {
      args.min_write = static_cast<size_t>(std::atoll(value));
    } else if (flag == "--mac-every-frame") {
      args.mac_every_frame = std::atoi(value) != 0;
    } else {
      Die("unknown flag " + flag);
    }
  }
  if (args.messages <= 0 || args.batch <= 0 || args.size == 0 || args.reps <= 0) Die("bad args");
  std::printf(
      "messages=%lld size=%zu batch=%d flush_us=%d min_write=%zu mac_every_frame=%d"
      " reps=%d\n",
      static_cast<long long>(args.messages), args.size, args.batch, args.flush_us, args.min_write,
      args.mac_every_frame ? 1 : 0, args.reps);
  std::vector<double> t_msgs, t_mb, raw_mb, ratio;
  for (int rep = 0; rep < args.reps; ++rep) {
    const Result t = RunTransport(args);
    const Result raw = RunRawTcp(args);
    t_msgs.push_back(t.msgs_per_s);
    t_mb.push_back(t.mb_per_s);
    raw_mb.push_back(raw.mb_per_s);
    ratio.push_back(t.mb_per_s / raw.mb_per_s);
    std::printf(
        "rep %d: transport %.2f M msgs/s (%.1f MB/s payload) | raw tcp 64KB %.1f MB/s"
        " | ratio %.3f\n",
        rep, t.msgs_per_s / 1e6, t.mb_per_s, raw.mb_per_s, t.mb_per_s / raw.mb_per_s);
    std::fflush(stdout);
  }
  std::printf(
      "median: transport %.2f M msgs/s (%.1f MB/s payload) | raw tcp 64KB %.1f MB/s"
      " (= %.2f M 100-byte msgs/s) | transport/raw %.3f\n",
      Median(t_msgs) / 1e6, Median(t_mb), Median(raw_mb),
      Median(raw_mb) * 1e6 / static_cast<double>(args.size) / 1e6, Median(ratio));
  return 0;
}
