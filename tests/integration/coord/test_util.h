#ifndef TEMPEST_TESTS_INTEGRATION_COORD_TEST_UTIL_H_
#define TEMPEST_TESTS_INTEGRATION_COORD_TEST_UTIL_H_

#include <chrono>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "common/coord/versioned_cas.h"
#include "common/coord/zk_session.h"
#include "common/core/metrics_registry.h"
#include "gtest/gtest.h"

namespace tempest::coord::testutil {

using std::chrono::milliseconds;

// Short timeouts suit ZkEnsemble's 250 ms tick (sessions of 0.5..5 s).
inline ZkSession::Options TestOptions(const std::string& connect, core::MetricsRegistry& metrics,
                                      milliseconds session_timeout = milliseconds(4000)) {
  ZkSession::Options o;
  o.connect_string = connect;
  o.config.session_timeout = session_timeout;
  o.config.connection_timeout = milliseconds(10000);
  o.config.retry_times = 5;
  o.config.retry_interval = milliseconds(100);
  o.config.retry_interval_ceiling = milliseconds(1000);
  o.operation_timeout = milliseconds(10000);
  o.metrics = metrics;
  o.retry_seed = 1234;
  return o;
}

inline std::unique_ptr<ZkSession> Connect(ZkSession::Options options) {
  auto s = ZkSession::Create(std::move(options));
  EXPECT_TRUE(s.ok()) << s.status();
  if (!s.ok()) return nullptr;
  EXPECT_TRUE((*s)->WaitConnected(milliseconds(20000)).ok());
  return std::move(*s);
}

// Records every session event, for assertions on the sequence.
class EventLog {
 public:
  explicit EventLog(ZkSession& session) : session_(session) {
    id_ = session.Subscribe([this](const ZkSessionEvent& e) {
      std::lock_guard<std::mutex> lock(mu_);
      events_.push_back(e);
    });
  }
  ~EventLog() { session_.Unsubscribe(id_); }
  std::vector<ZkSessionEvent> events() const {
    std::lock_guard<std::mutex> lock(mu_);
    return events_;
  }
  bool Saw(ZkSessionState state) const {
    for (const auto& e : events()) {
      if (e.state == state) return true;
    }
    return false;
  }

 private:
  ZkSession& session_;
  int id_ = 0;
  mutable std::mutex mu_;
  std::vector<ZkSessionEvent> events_;
};

inline int64_t CounterValue(core::MetricsRegistry& r, const std::string& name,
                            const core::MetricLabels& labels) {
  return r.GetCounter(name, labels).Value();
}

// Takes ownership of `path` the way a Kafka spout task does: an ephemeral
// node made on `session`, whose Stat gives the fencing token. Fails (e.g.
// AlreadyExists) while another session holds it.
inline absl::StatusOr<FencingToken> AcquireOwnership(ZkSession& session, const std::string& path,
                                                     const std::string& owner) {
  const int64_t sid = session.session_id();
  ZkCreateOptions create;
  create.mode = ZkCreateMode::kEphemeral;
  create.create_parents = true;
  const ZkCall call{milliseconds(3000), sid};
  if (auto created = session.Create(path, owner, create, call); !created.ok()) {
    return created.status();
  }
  auto node = session.Get(path, call);
  if (!node.ok()) return node.status();
  return FencingToken{path, sid, node->stat.czxid, node->stat.version};
}

// Retries AcquireOwnership until it succeeds (the holder's session ended)
// or `timeout` passes.
inline std::optional<FencingToken> WaitForOwnership(ZkSession& session, const std::string& path,
                                                    const std::string& owner,
                                                    milliseconds timeout) {
  const auto until = std::chrono::steady_clock::now() + timeout;
  for (;;) {
    auto token = AcquireOwnership(session, path, owner);
    if (token.ok()) return *token;
    if (std::chrono::steady_clock::now() >= until) return std::nullopt;
    std::this_thread::sleep_for(milliseconds(50));
  }
}

}  // namespace tempest::coord::testutil

#endif  // TEMPEST_TESTS_INTEGRATION_COORD_TEST_UTIL_H_
