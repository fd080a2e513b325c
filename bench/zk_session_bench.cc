// Pipelined async `set` through ZkSession::SetAsync versus raw zoo_aset on
// the same C client, against one standalone ZooKeeper started here
// (tests/support ZkEnsemble). Both paths keep `window` requests in flight;
// rounds alternate which path goes first. Prints per-round figures and
// medians. Not a test: nothing is asserted.
//
//   zk_session_bench [--ops N] [--window W] [--rounds R] [--size BYTES]

#include <zookeeper/zookeeper.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "common/coord/zk_session.h"
#include "tests/support/zk_ensemble.h"

namespace {

using SteadyClock = std::chrono::steady_clock;

struct Args {
  int ops = 20000;
  int window = 500;
  int rounds = 5;
  int size = 100;
};

struct Result {
  double ops_per_sec = 0;
  double p50_us = 0;
  double p99_us = 0;
  int failures = 0;
};

// Flow control and per-op latency shared by both paths, so they differ only
// in how a set is sent and completed.
class Window {
 public:
  Window(int ops, int window) : start_(ops), latency_us_(ops, 0), window_(window) {}

  void Acquire(int i) {
    std::unique_lock<std::mutex> lock(mu_);
    cv_.wait(lock, [this] { return inflight_ < window_; });
    ++inflight_;
    start_[i] = SteadyClock::now();
  }
  void Complete(int i, bool ok) {
    latency_us_[i] =
        std::chrono::duration_cast<std::chrono::microseconds>(SteadyClock::now() - start_[i])
            .count();
    if (!ok) failures_.fetch_add(1);
    {
      std::lock_guard<std::mutex> lock(mu_);
      --inflight_;
      ++done_;
    }
    cv_.notify_all();
  }
  void WaitAll(int ops) {
    std::unique_lock<std::mutex> lock(mu_);
    cv_.wait(lock, [&] { return done_ == ops; });
  }
  Result Summarize(SteadyClock::duration elapsed) {
    std::vector<int64_t> sorted = latency_us_;
    std::sort(sorted.begin(), sorted.end());
    Result r;
    const double secs = std::chrono::duration<double>(elapsed).count();
    r.ops_per_sec = static_cast<double>(sorted.size()) / secs;
    r.p50_us = static_cast<double>(sorted[sorted.size() / 2]);
    r.p99_us = static_cast<double>(sorted[std::min(sorted.size() - 1, sorted.size() * 99 / 100)]);
    r.failures = failures_.load();
    return r;
  }

 private:
  std::vector<SteadyClock::time_point> start_;
  std::vector<int64_t> latency_us_;
  std::mutex mu_;
  std::condition_variable cv_;
  int inflight_ = 0;
  int done_ = 0;
  int window_;
  std::atomic<int> failures_{0};
};

struct RawOp {
  Window* window;
  int index;
};

void RawDone(int rc, const Stat*, const void* data) {
  const auto* op = static_cast<const RawOp*>(data);
  op->window->Complete(op->index, rc == ZOK);
}

void IgnoreWatcher(zhandle_t*, int, int, const char*, void*) {}

Result RunRaw(zhandle_t* zh, const Args& args, const std::string& path, const std::string& data) {
  Window window(args.ops, args.window);
  std::vector<RawOp> ops(args.ops);
  const auto t0 = SteadyClock::now();
  for (int i = 0; i < args.ops; ++i) {
    ops[i] = RawOp{&window, i};
    window.Acquire(i);
    if (zoo_aset(zh, path.c_str(), data.data(), static_cast<int>(data.size()), -1, &RawDone,
                 &ops[i]) != ZOK) {
      window.Complete(i, false);
    }
  }
  window.WaitAll(args.ops);
  return window.Summarize(SteadyClock::now() - t0);
}

Result RunSession(tempest::coord::ZkSession& session, const Args& args, const std::string& path,
                  const std::string& data) {
  Window window(args.ops, args.window);
  const auto t0 = SteadyClock::now();
  for (int i = 0; i < args.ops; ++i) {
    window.Acquire(i);
    auto st = session.SetAsync(
        path, data, -1,
        [&window, i](absl::StatusOr<tempest::coord::ZkStat> r) { window.Complete(i, r.ok()); });
    if (!st.ok()) window.Complete(i, false);
  }
  window.WaitAll(args.ops);
  return window.Summarize(SteadyClock::now() - t0);
}

double Median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

// nullopt (after saying why) on an unknown flag.
std::optional<Args> ParseArgs(int argc, char** argv) {
  Args args;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string flag = argv[i];
    const int value = std::atoi(argv[i + 1]);
    if (flag == "--ops")
      args.ops = value;
    else if (flag == "--window")
      args.window = value;
    else if (flag == "--rounds")
      args.rounds = value;
    else if (flag == "--size")
      args.size = value;
    else {
      std::fprintf(stderr, "unknown flag %s\n", flag.c_str());
      return std::nullopt;
    }
  }
  return args;
}

std::unique_ptr<tempest::coord::ZkSession> ConnectSession(const std::string& connect) {
  tempest::coord::ZkSession::Options options;
  options.connect_string = connect;
  options.config.session_timeout = std::chrono::milliseconds(5000);
  auto session = tempest::coord::ZkSession::Create(options);
  if (!session.ok() || !(*session)->WaitConnected(std::chrono::seconds(20)).ok()) return nullptr;
  return *std::move(session);
}

// A raw C client handle, connected, or nullptr.
zhandle_t* ConnectRaw(const std::string& connect) {
  zoo_set_debug_level(ZOO_LOG_LEVEL_WARN);
  zhandle_t* zh = zookeeper_init(connect.c_str(), &IgnoreWatcher, 5000, nullptr, nullptr, 0);
  const auto until = SteadyClock::now() + std::chrono::seconds(20);
  while (zh != nullptr && zoo_state(zh) != ZOO_CONNECTED_STATE && SteadyClock::now() < until) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  if (zh != nullptr && zoo_state(zh) != ZOO_CONNECTED_STATE) {
    zookeeper_close(zh);
    return nullptr;
  }
  return zh;
}

// Per-round figures of both paths, for the medians.
struct Series {
  std::vector<double> raw_tput, raw_p50, raw_p99, s_tput, s_p50, s_p99, ratio;

  void Add(int round, const Result& raw, const Result& ses) {
    std::printf(
        "round %d: raw %.0f ops/s p50 %.0f us p99 %.0f us (fail %d) | ZkSession %.0f ops/s "
        "p50 %.0f us p99 %.0f us (fail %d) | ratio %.3f\n",
        round, raw.ops_per_sec, raw.p50_us, raw.p99_us, raw.failures, ses.ops_per_sec, ses.p50_us,
        ses.p99_us, ses.failures, ses.ops_per_sec / raw.ops_per_sec);
    raw_tput.push_back(raw.ops_per_sec);
    raw_p50.push_back(raw.p50_us);
    raw_p99.push_back(raw.p99_us);
    s_tput.push_back(ses.ops_per_sec);
    s_p50.push_back(ses.p50_us);
    s_p99.push_back(ses.p99_us);
    ratio.push_back(ses.ops_per_sec / raw.ops_per_sec);
  }
  void PrintMedians() const {
    std::printf(
        "median: raw %.0f ops/s p50 %.0f us p99 %.0f us | ZkSession %.0f ops/s p50 %.0f us p99 "
        "%.0f us | ratio (median of per-round ratios) %.3f\n",
        Median(raw_tput), Median(raw_p50), Median(raw_p99), Median(s_tput), Median(s_p50),
        Median(s_p99), Median(ratio));
  }
};

// Warms both paths up, then runs the rounds, alternating which path goes first.
void RunRounds(zhandle_t* zh, tempest::coord::ZkSession& session, const Args& args) {
  const std::string data(static_cast<size_t>(args.size), 'x');
  // Warm up both paths (JIT of the server, connections).
  RunRaw(zh, Args{2000, args.window, 1, args.size}, "/bench/raw", data);
  RunSession(session, Args{2000, args.window, 1, args.size}, "/bench/session", data);

  std::printf("ops=%d window=%d size=%d rounds=%d\n", args.ops, args.window, args.size,
              args.rounds);
  Series series;
  for (int round = 0; round < args.rounds; ++round) {
    Result raw, ses;
    if (round % 2 == 0) {
      raw = RunRaw(zh, args, "/bench/raw", data);
      ses = RunSession(session, args, "/bench/session", data);
    } else {
      ses = RunSession(session, args, "/bench/session", data);
      raw = RunRaw(zh, args, "/bench/raw", data);
    }
    series.Add(round, raw, ses);
  }
  series.PrintMedians();
}

}  // namespace

int main(int argc, char** argv) {
  const std::optional<Args> args = ParseArgs(argc, argv);
  if (!args.has_value()) return 2;
  auto ensemble = tempest::testing::ZkEnsemble::Start();
  if (!ensemble.ok()) {
    std::fprintf(stderr, "ZooKeeper: %s\n", ensemble.status().ToString().c_str());
    return 1;
  }
  const std::string connect = (*ensemble)->ConnectString();
  std::unique_ptr<tempest::coord::ZkSession> session = ConnectSession(connect);
  if (session == nullptr) {
    std::fprintf(stderr, "ZkSession did not connect\n");
    return 1;
  }
  zhandle_t* zh = ConnectRaw(connect);
  if (zh == nullptr) {
    std::fprintf(stderr, "raw handle did not connect\n");
    return 1;
  }
  if (!session->EnsurePath("/bench/raw").ok() || !session->EnsurePath("/bench/session").ok()) {
    std::fprintf(stderr, "cannot create bench nodes\n");
    return 1;
  }
  RunRounds(zh, *session, *args);
  zookeeper_close(zh);
  session->Close();
  return 0;
}
