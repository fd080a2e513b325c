#ifndef TEMPEST_TESTS_INTEGRATION_KAFKA_SPOUT_SPOUT_HARNESS_H_
#define TEMPEST_TESTS_INTEGRATION_KAFKA_SPOUT_SPOUT_HARNESS_H_

// Drives a KafkaSpout directly, as an executor would: a recording collector,
// a TopologyContext for task i of n, and a loop that calls NextTuple and
// acks or fails what was emitted. Single-threaded (the test's thread).

#include <cstdio>
#include <functional>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "common/api/spout_output_collector.h"
#include "common/api/topology_context.h"
#include "common/coord/zk_session.h"
#include "spout/kafka/kafka_spout.h"
#include "spout/kafka/offsets/storm_kafka_offset.h"
#include "tests/support/eventually.h"

namespace tempest::testing {

class RecordingCollector final : public api::SpoutOutputCollector {
 public:
  struct Emitted {
    api::Values values;
    api::MessageId id;
  };
  std::vector<Emitted> emitted;
  std::vector<absl::Status> errors;
  // Runs inside every emit (e.g. to look at ZooKeeper at that moment).
  std::function<void(const Emitted&)> on_emit;

  void ReportError(const absl::Status& e) override { errors.push_back(e); }
  int64_t PendingCount() const override { return 0; }

 protected:
  void DoEmit(const api::StreamId&, api::Values values, api::MessageId id,
              std::vector<api::TaskId>*) override {
    emitted.push_back({std::move(values), std::move(id)});
    if (on_emit) on_emit(emitted.back());
  }
  void DoEmitDirect(api::TaskId, const api::StreamId&, api::Values values,
                    api::MessageId id) override {
    emitted.push_back({std::move(values), std::move(id)});
  }
};

// Task `index` of `count` tasks of component "kafka".
inline api::TopologyContext SpoutContext(api::Config config, int index = 0, int count = 1,
                                         const std::string& topology_id = "topo-1-100") {
  auto info = std::make_shared<api::TopologyInfo>();
  info->topology_id = topology_id;
  info->topology_name = "topo";
  info->config = std::move(config);
  const api::ComponentId comp("kafka");
  for (int i = 0; i < count; ++i) {
    info->task_to_component[api::TaskId(10 + i)] = comp;
    info->component_tasks[comp].push_back(api::TaskId(10 + i));
  }
  return api::TopologyContext(info, api::TaskId(10 + index));
}

// One spout under test with its collector. Offsets of emitted tuples are
// read from the "offset"/"partition" fields (tempest.KafkaSpout's scheme).
struct SpoutUnderTest {
  std::unique_ptr<spout::KafkaSpout> spout;
  RecordingCollector collector;
  size_t handled = 0;  // emitted tuples already acked/failed by Step
  // Decides per emitted tuple: true = ack, false = fail. Default: ack.
  std::function<bool(const RecordingCollector::Emitted&)> decide;
  // Offsets emitted per partition (with repeats).
  std::map<int, std::vector<int64_t>> offsets;
  bool hold = false;  // true: neither ack nor fail (leave pending)

  static int64_t OffsetOf(const RecordingCollector::Emitted& e) { return e.values[2].AsInt(); }
  static int PartitionOf(const RecordingCollector::Emitted& e) {
    return static_cast<int>(e.values[1].AsInt());
  }

  void Step() {
    spout->NextTuple();
    for (; handled < collector.emitted.size(); ++handled) {
      const auto& e = collector.emitted[handled];
      if (e.values.size() == 5) offsets[PartitionOf(e)].push_back(OffsetOf(e));
      if (hold || e.id.is_nil()) continue;
      if (!decide || decide(e)) {
        spout->Ack(e.id);
      } else {
        spout->Fail(e.id);
      }
    }
  }
  // Steps until `pred` (or the deadline); returns pred's last value.
  bool RunUntil(std::chrono::milliseconds deadline, const std::function<bool()>& pred) {
    return Eventually(
        deadline,
        [&] {
          for (int i = 0; i < 200; ++i) Step();
          return pred();
        },
        std::chrono::milliseconds(0));
  }
  std::set<int64_t> Unique(int partition) const {
    auto it = offsets.find(partition);
    if (it == offsets.end()) return {};
    return std::set<int64_t>(it->second.begin(), it->second.end());
  }
};

// Reads an offset node with our own ZooKeeper client; -1 when absent.
inline int64_t StoredOffset(coord::ZkSession& zk, const std::string& path) {
  auto node = zk.Get(path);
  if (!node.ok()) return -1;
  auto decoded = spout::DecodeStormKafkaOffset(node->data);
  return decoded.ok() ? decoded->offset : -2;
}

// Runs python3 with kazoo; returns (exit code, stdout).
inline std::pair<int, std::string> RunKazoo(const std::string& script) {
  const std::string path = absl::StrCat("/tmp/tempest_kazoo_", ::getpid(), ".py");
  {
    FILE* f = std::fopen(path.c_str(), "w");
    std::fputs(script.c_str(), f);
    std::fclose(f);
  }
  std::string out;
  FILE* p = ::popen(absl::StrCat("/usr/bin/python3 ", path, " 2>&1").c_str(), "r");
  if (p == nullptr) return {-1, ""};
  char buf[4096];
  size_t n;
  while ((n = std::fread(buf, 1, sizeof(buf), p)) > 0) out.append(buf, n);
  int rc = ::pclose(p);
  std::remove(path.c_str());
  return {WEXITSTATUS(rc), out};
}

}  // namespace tempest::testing

#endif  // TEMPEST_TESTS_INTEGRATION_KAFKA_SPOUT_SPOUT_HARNESS_H_
