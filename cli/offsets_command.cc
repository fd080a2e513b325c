// `tempest offsets show|set`: read and write KafkaSpout offsets where they
// live (ZooKeeper, storm-kafka's JSON), talking to ZooKeeper and Kafka
// directly, so it works whether or not a cluster is running.
#include <cstdio>
#include <memory>
#include <nlohmann/json.hpp>

#include "absl/strings/str_cat.h"
#include "cli/cli_text.h"
#include "cli/commands.h"
#include "common/coord/zk_session.h"
#include "spout/offset_admin.h"

namespace tempest::cli {
namespace {

constexpr auto kKafkaTimeout = std::chrono::seconds(10);
// Kafka's partition ids are int32; offsets int64 (bounded far below its
// maximum so the message stays readable).
constexpr double kMaxPartition = 2147483647;
constexpr double kMaxOffset = 1e18;

struct OffsetsOptions {
  std::string zk;
  std::string root;
  std::string id;
  std::string bootstrap;
  bool json = false;
  // set
  std::string topic;
  int partition = -1;
  int64_t offset = -1;
  bool to_earliest = false;
  bool to_latest = false;
  bool force = false;
};

absl::StatusOr<std::unique_ptr<coord::ZkSession>> Connect(const std::string& hosts,
                                                          const GlobalOptions& globals) {
  QuietZkClientLogUnlessVerbose(globals);
  coord::ZkSession::Options options;
  options.connect_string = hosts;
  options.create_chroot = false;
  options.config.connection_timeout = std::chrono::seconds(10);
  // The spouts' credentials (storm.zookeeper.auth.*) from --config / -c.
  absl::StatusOr<api::Config> config = LoadDaemonConfig(globals);
  if (!config.ok()) return config.status();
  absl::StatusOr<coord::ZkAuthConfig> auth = coord::ZkAuthConfig::FromConfig(*config);
  if (!auth.ok()) return auth.status();
  options.config.auth = *std::move(auth);
  auto session = coord::ZkSession::Create(options);
  if (!session.ok()) return session.status();
  if (auto s = (*session)->WaitConnected(std::chrono::seconds(10)); !s.ok()) {
    if (absl::IsPermissionDenied(s)) return s;
    return absl::UnavailableError(
        absl::StrCat("cannot reach ZooKeeper at ", hosts, ": ", s.message()));
  }
  return session;
}

nlohmann::json ToJson(const spout::StoredPartitionOffset& e) {
  nlohmann::json j = {{"topic", e.topic}, {"partition", e.partition}, {"path", e.path}};
  j["committed_offset"] = e.state ? nlohmann::json(e.state->offset) : nlohmann::json();
  j["log_end_offset"] = e.log_end_offset ? nlohmann::json(*e.log_end_offset) : nlohmann::json();
  j["lag"] = e.lag ? nlohmann::json(*e.lag) : nlohmann::json();
  j["owner"] = e.owner.empty() ? nlohmann::json() : nlohmann::json(e.owner);
  j["topology_id"] = e.state ? nlohmann::json(e.state->topology_id) : nlohmann::json();
  j["topology_name"] = e.state ? nlohmann::json(e.state->topology_name) : nlohmann::json();
  if (!e.parse_error.empty()) j["error"] = e.parse_error;
  return j;
}

std::string OrDash(const std::optional<int64_t>& v) {
  return v ? std::to_string(*v) : std::string("-");
}

int RunShow(const OffsetsOptions& o, const GlobalOptions& globals) {
  auto session = Connect(o.zk, globals);
  if (!session.ok()) return Fail(std::string(session.status().message()));
  auto offsets = spout::ListStoredOffsets(**session, o.root, o.id);
  if (!offsets.ok()) {
    if (offsets.status().code() == absl::StatusCode::kNotFound) {
      return Fail(absl::StrCat("no offsets under ", o.root, "/", o.id));
    }
    return Fail(std::string(offsets.status().message()));
  }
  if (!o.bootstrap.empty()) {
    if (auto s = spout::AddKafkaLag(o.bootstrap, *offsets, kKafkaTimeout); !s.ok()) {
      return Fail(std::string(s.message()));
    }
  }
  if (o.json) {
    nlohmann::json doc = {
        {"zkRoot", o.root}, {"id", o.id}, {"partitions", nlohmann::json::array()}};
    for (const auto& e : *offsets) doc["partitions"].push_back(ToJson(e));
    std::printf("%s\n", doc.dump().c_str());
    return 0;
  }
  std::printf("%-24s %9s %14s %14s %10s  %-28s %s\n", "TOPIC", "PARTITION", "COMMITTED", "LOG-END",
              "LAG", "LAST-COMMIT-BY", "OWNER");
  for (const auto& e : *offsets) {
    std::string committed = e.state ? std::to_string(e.state->offset) : "unreadable";
    std::string topology = e.state ? e.state->topology_id : ("(" + e.parse_error + ")");
    std::printf("%-24s %9d %14s %14s %10s  %-28s %s\n", e.topic.empty() ? "?" : e.topic.c_str(),
                e.partition, committed.c_str(), OrDash(e.log_end_offset).c_str(),
                OrDash(e.lag).c_str(), topology.c_str(),
                e.owner.empty() ? "none" : e.owner.c_str());
  }
  return 0;
}

int RunSet(const OffsetsOptions& o, const GlobalOptions& globals) {
  const int modes = (o.offset >= 0) + o.to_earliest + o.to_latest;
  if (modes != 1) return Fail("give exactly one of --offset, --to-earliest, --to-latest", 2);
  if ((o.to_earliest || o.to_latest) && o.bootstrap.empty()) {
    return Fail("--to-earliest/--to-latest need --bootstrap", 2);
  }
  int64_t target = o.offset;
  if (o.to_earliest || o.to_latest) {
    auto marks = spout::KafkaWatermarks(o.bootstrap, o.topic, o.partition, kKafkaTimeout);
    if (!marks.ok()) return Fail(std::string(marks.status().message()));
    target = o.to_earliest ? marks->first : marks->second;
  }
  auto session = Connect(o.zk, globals);
  if (!session.ok()) return Fail(std::string(session.status().message()));
  spout::SetOffsetRequest request;
  request.zk_root = o.root;
  request.spout_id = o.id;
  request.topic = o.topic;
  request.partition = o.partition;
  request.offset = target;
  request.force = o.force;
  auto written = spout::SetStoredOffset(**session, request);
  if (!written.ok()) return Fail(std::string(written.status().message()));
  if (o.json) {
    std::printf("%s\n", ToJson(*written).dump().c_str());
  } else {
    std::printf("%s/%d committed offset set to %lld at %s\n", o.topic.c_str(), o.partition,
                static_cast<long long>(target), written->path.c_str());
  }
  return 0;
}

void AddCommon(CLI::App* sub, OffsetsOptions& o) {
  sub->add_option("--zk", o.zk, "ZooKeeper connect string holding the offsets")->required();
  sub->add_option("--root", o.root, "the spout's zkRoot, e.g. /kafkaspout")->required();
  sub->add_option("--id", o.id, "the spout's id (SpoutConfig id)")->required();
  sub->add_option("--bootstrap", o.bootstrap,
                  "Kafka bootstrap servers (for lag / earliest / latest)");
  sub->add_flag("--json", o.json, "one JSON document on stdout");
}

}  // namespace

void RegisterOffsetsCommand(CLI::App& app, CommandSet& set, GlobalOptions& globals) {
  auto opts = std::make_shared<OffsetsOptions>();
  auto* offsets = app.add_subcommand("offsets", "Show or set KafkaSpout offsets in ZooKeeper");
  offsets->require_subcommand(1);
  auto* show = offsets->add_subcommand("show", "Committed offsets, lag and owners per partition");
  AddCommon(show, *opts);
  auto* put = offsets->add_subcommand("set", "Write one partition's committed offset");
  AddCommon(put, *opts);
  put->add_option("--topic", opts->topic, "topic")->required();
  put->add_option("--partition", opts->partition, "partition")
      ->required()
      ->check(Bounded(0, kMaxPartition))
      ->default_str("");
  put->add_option("--offset", opts->offset, "the offset to resume from")
      ->check(Bounded(0, kMaxOffset))
      ->default_str("");
  put->add_flag("--to-earliest", opts->to_earliest, "the partition's earliest offset");
  put->add_flag("--to-latest", opts->to_latest, "the partition's log-end offset");
  put->add_flag("--force", opts->force, "write even while a live spout owns the partition");
  RegisterOffsetsJournalCommands(*offsets, set, globals);
  set.Add(show, [opts, &globals] { return RunShow(*opts, globals); });
  set.Add(put, [opts, &globals] { return RunSet(*opts, globals); });
}

}  // namespace tempest::cli
