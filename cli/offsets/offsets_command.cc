// `tempest offsets show|set`: read and write KafkaSpout offsets where they
// live (ZooKeeper, storm-kafka's JSON), talking to ZooKeeper and Kafka
// directly, so it works whether or not a cluster is running. `set` is in
// offsets_set_command.cc.
#include "cli/offsets/offsets_command.h"

#include <cstdio>
#include <memory>
#include <nlohmann/json.hpp>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "cli/cli_text.h"
#include "cli/commands.h"
#include "cli/zk_client_auth.h"
#include "common/coord/zk_session.h"
#include "common/core/log_text.h"
#include "common/core/status_macros.h"
#include "spout/kafka/offsets/offset_admin.h"

namespace tempest::cli {
namespace {

constexpr auto kKafkaTimeout = std::chrono::seconds(10);

struct OffsetsOptions {
  std::string zk;
  std::string root;
  std::string id;
  std::string bootstrap;
  bool json = false;
  std::vector<std::string> topics;  // show: list these topics' partitions too
  // show: where a partition without a stored offset would start (a spout's
  // startOffsetTime): "earliest", "latest" or ms since the epoch.
  std::string start = "earliest";
};

absl::StatusOr<int64_t> ParseStart(const std::string& text) {
  if (text == "earliest") return spout::kStartEarliest;
  if (text == "latest") return spout::kStartLatest;
  int64_t ms = 0;
  if (absl::SimpleAtoi(text, &ms) && ms >= 0) return ms;
  return absl::InvalidArgumentError(absl::StrCat(
      "--start takes earliest, latest or a time in ms since the epoch, not '", Printable(text),
      "'"));
}

absl::StatusOr<std::unique_ptr<coord::ZkSession>> Connect(const std::string& hosts,
                                                          const GlobalOptions& globals) {
  QuietZkClientLogUnlessVerbose(globals);
  coord::ZkSession::Options options;
  options.connect_string = hosts;
  options.create_chroot = false;
  options.config.connection_timeout = std::chrono::seconds(10);
  // The spouts' credentials (storm.zookeeper.auth.*) from --config / -c,
  // else TEMPEST_ZK_AUTH_FILE, else those of a `tempest dev` on this host.
  ASSIGN_OR_RETURN(const api::Config config, LoadDaemonConfig(globals));
  ASSIGN_OR_RETURN(options.config.auth, ResolveClientZkAuth(config, hosts));
  ASSIGN_OR_RETURN(std::unique_ptr<coord::ZkSession> session, coord::ZkSession::Create(options));
  if (auto s = session->WaitConnected(std::chrono::seconds(10)); !s.ok()) {
    if (absl::IsPermissionDenied(s)) return s;
    return absl::UnavailableError(
        absl::StrCat("cannot reach ZooKeeper at ", hosts, ": ", s.message()));
  }
  return session;
}

nlohmann::json OptionalJson(const std::optional<int64_t>& v) {
  return v.has_value() ? nlohmann::json(*v) : nlohmann::json();
}

// One key style (snake_case) throughout.
nlohmann::json ToJson(const spout::StoredPartitionOffset& e) {
  nlohmann::json j = {{"topic", e.topic}, {"partition", e.partition}, {"path", e.path},
                      {"stored", e.stored}};
  j["committed_offset"] = e.state ? nlohmann::json(e.state->offset) : nlohmann::json();
  j["log_start_offset"] = OptionalJson(e.log_start_offset);
  j["log_end_offset"] = OptionalJson(e.log_end_offset);
  j["lag"] = OptionalJson(e.lag);
  j["lag_basis"] = e.lag_basis.empty() ? nlohmann::json() : nlohmann::json(e.lag_basis);
  j["out_of_range"] = e.out_of_range;
  if (!e.kafka_error.empty()) j["kafka_error"] = e.kafka_error;
  j["owner"] = e.owner.empty() ? nlohmann::json() : nlohmann::json(e.owner);
  if (!e.owner.empty()) {
    j["owner_host"] = e.owner_host;
    j["owner_topology"] = e.owner_topology;
    j["owner_task"] = e.owner_task;
    j["owner_session"] = absl::StrCat("0x", absl::Hex(e.owner_session));
  }
  j["topology_id"] = e.state ? nlohmann::json(e.state->topology_id) : nlohmann::json();
  j["topology_name"] = e.state ? nlohmann::json(e.state->topology_name) : nlohmann::json();
  if (!e.parse_error.empty()) j["error"] = e.parse_error;
  return j;
}

std::string OrDash(const std::optional<int64_t>& v) {
  return v ? std::to_string(*v) : std::string("-");
}

std::string CommittedText(const spout::StoredPartitionOffset& e) {
  if (!e.stored) return "none";
  return e.state ? std::to_string(e.state->offset) : "unreadable";
}

std::string LagText(const spout::StoredPartitionOffset& e) {
  if (e.out_of_range) return "OUT-OF-RANGE";
  return OrDash(e.lag);
}

void PrintTable(const std::vector<spout::StoredPartitionOffset>& offsets) {
  std::printf("%-20s %9s %12s %12s %12s %12s  %-24s %s\n", "TOPIC", "PARTITION", "LOG-START",
              "COMMITTED", "LOG-END", "LAG", "LAST-COMMIT-BY", "OWNER");
  int from_start = 0;
  std::string start_policy;
  for (const auto& e : offsets) {
    // What ZooKeeper holds is printed escaped (cli_text.h): anyone may have written it.
    const std::string topology =
        Printable(e.state ? e.state->topology_id : (e.stored ? "(unreadable)" : "-"));
    std::printf("%-20s %9d %12s %12s %12s %12s  %-24s %s\n",
                e.topic.empty() ? "?" : Printable(e.topic).c_str(), e.partition,
                OrDash(e.log_start_offset).c_str(), CommittedText(e).c_str(),
                OrDash(e.log_end_offset).c_str(), LagText(e).c_str(), topology.c_str(),
                e.owner.empty() ? "none" : Printable(e.owner).c_str());
    if (!e.stored && e.lag) {
      ++from_start;
      start_policy = e.lag_basis;
    }
  }
  for (const auto& e : offsets) {
    if (!e.parse_error.empty()) {
      std::printf("%s/%d: stored node unreadable: %s\n", Printable(e.topic).c_str(), e.partition,
                  Printable(e.parse_error).c_str());
    }
    if (!e.kafka_error.empty()) {
      std::printf("%s/%d: no log range from Kafka: %s\n", Printable(e.topic).c_str(), e.partition,
                  Printable(e.kafka_error).c_str());
    }
    if (e.out_of_range) {
      std::printf("%s/%d: committed offset %lld is outside the log [%lld, %lld]; the spout "
                  "handles it under its outOfRangePolicy\n",
                  Printable(e.topic).c_str(), e.partition, static_cast<long long>(e.state->offset),
                  static_cast<long long>(e.log_start_offset.value_or(-1)),
                  static_cast<long long>(e.log_end_offset.value_or(-1)));
    }
  }
  const spout::LagTotals totals = spout::SumLag(offsets);
  std::printf("TOTAL LAG %lld", static_cast<long long>(totals.total));
  if (totals.unknown > 0) {
    std::printf(" (%s without a known lag)", core::Counted(totals.unknown, "partition").c_str());
  }
  std::printf("\n");
  if (from_start > 0) {
    std::printf("%s without a stored offset counted from where a spout starts: %s (--start)\n",
                core::Counted(from_start, "partition").c_str(), start_policy.c_str());
  }
}

int RunShow(const OffsetsOptions& o, const GlobalOptions& globals) {
  absl::StatusOr<int64_t> start = ParseStart(o.start);
  if (!start.ok()) return Fail(std::string(start.status().message()));
  auto session = Connect(o.zk, globals);
  if (!session.ok()) return Fail(std::string(session.status().message()));
  auto offsets = spout::ListStoredOffsets(**session, o.root, o.id);
  if (!offsets.ok() && !(offsets.status().code() == absl::StatusCode::kNotFound &&
                         !o.bootstrap.empty() && !o.topics.empty())) {
    if (offsets.status().code() == absl::StatusCode::kNotFound) {
      return Fail(absl::StrCat("no offsets under ", o.root, "/", o.id));
    }
    return Fail(std::string(offsets.status().message()));
  }
  std::vector<spout::StoredPartitionOffset> rows;
  if (offsets.ok()) rows = std::move(*offsets);
  if (!o.bootstrap.empty()) {
    if (auto s = spout::AddKafkaLag(o.bootstrap, rows, kKafkaTimeout, o.topics, o.root, o.id,
                                    *start);
        !s.ok()) {
      return Fail(std::string(s.message()));
    }
    const bool topic_level = !rows.empty() && rows.front().path.find(
        absl::StrCat("/", rows.front().topic, "/partition_")) != std::string::npos;
    for (auto& e : rows) {
      if (e.stored) continue;  // an owner may hold it before its first commit
      spout::ReadOwner(**session,
                       spout::OwnerNodePath(o.root, o.id, e.topic, e.partition, topic_level), e);
    }
  }
  if (o.json) {
    nlohmann::json doc = {
        {"zk_root", o.root}, {"id", o.id}, {"partitions", nlohmann::json::array()}};
    for (const auto& e : rows) doc["partitions"].push_back(ToJson(e));
    doc["total_lag"] =
        o.bootstrap.empty() ? nlohmann::json() : nlohmann::json(spout::SumLag(rows).total);
    std::printf("%s\n", doc.dump().c_str());
    return 0;
  }
  PrintTable(rows);
  return 0;
}

void AddCommon(CLI::App* sub, OffsetsOptions& o) {
  sub->add_option("--zk", o.zk, "ZooKeeper connect string holding the offsets")->required();
  sub->add_option("--root", o.root, "the spout's zkRoot, e.g. /kafkaspout")->required();
  sub->add_option("--id", o.id, "the spout's id (SpoutConfig id)")->required();
  sub->add_option("--bootstrap", o.bootstrap,
                  "Kafka bootstrap servers (log range, lag, every partition of the topics)");
  sub->add_flag("--json", o.json, "one JSON document on stdout");
}

}  // namespace

absl::StatusOr<std::unique_ptr<coord::ZkSession>> ConnectOffsetsZookeeper(
    const std::string& hosts, const GlobalOptions& globals) {
  return Connect(hosts, globals);
}

void RegisterOffsetsCommand(CLI::App& app, CommandSet& set, GlobalOptions& globals) {
  auto opts = std::make_shared<OffsetsOptions>();
  auto* offsets = app.add_subcommand("offsets", "Show or set KafkaSpout offsets in ZooKeeper");
  offsets->require_subcommand(1);
  auto* show = offsets->add_subcommand("show", "Committed offsets, log range, lag and owners");
  AddCommon(show, *opts);
  show->add_option("--topic", opts->topics,
                   "with --bootstrap: also list this topic's partitions (repeatable)");
  show->add_option("--start", opts->start,
                   "where a partition without a stored offset would start, for its lag: "
                   "earliest (default, as the KafkaSpout's startOffsetTime), latest, or ms "
                   "since the epoch");
  auto set_opts = std::make_shared<OffsetsSetOptions>();
  auto* put = offsets->add_subcommand(
      "set", "Move committed offsets (a dry run unless --execute; fenced for a live owner)");
  AddOffsetsSetOptions(put, *set_opts);
  RegisterOffsetsJournalCommands(*offsets, set, globals);
  set.Add(show, [opts, &globals] { return RunShow(*opts, globals); });
  set.Add(put, [set_opts, &globals] { return RunOffsetsSet(*set_opts, globals); });
}

}  // namespace tempest::cli
