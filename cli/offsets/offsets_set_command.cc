// `tempest offsets set`: plan a move of KafkaSpout offsets (kafka-consumer-
// groups' reset options), print old -> new per partition, and with --execute
// apply it: directly where no live spout owns the partition, through the
// owner's fenced rewind (spout/kafka/offsets/offset_rewind.h) where one does.
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <sstream>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/time/time.h"
#include "cli/cli_text.h"
#include "cli/offsets/offsets_command.h"
#include "common/coord/cluster_zk_config.h"
#include "common/coord/topology_identity.h"
#include "common/core/status_macros.h"
#include "spout/kafka/offsets/offset_admin.h"
#include "spout/kafka/offsets/offset_layout.h"
#include "spout/kafka/offsets/offset_rewind.h"

namespace tempest::cli {
namespace {

constexpr auto kKafkaTimeout = std::chrono::seconds(10);
constexpr double kMaxPartition = 2147483647;
constexpr double kMaxOffset = 1e18;

// One partition of the plan.
struct PlanRow {
  std::string topic;
  int partition = 0;
  std::optional<int64_t> explicit_offset;  // --offset or a --from-file row
  std::optional<int64_t> old_offset;       // stored now
  int64_t new_offset = -1;
  std::optional<std::pair<int64_t, int64_t>> range;  // [log start, log end]
  bool topic_level = false;
  spout::StoredPartitionOffset owner;  // owner fields only
  std::string result;                  // after --execute
  bool ok = true;
};

PlanRow Row(const std::string& topic, int partition) {
  PlanRow r;
  r.topic = topic;
  r.partition = partition;
  return r;
}

struct Refusal {
  std::string message;
};

std::string Actor() {
  const char* user = std::getenv("USER");
  return absl::StrCat("tempest offsets set (", user != nullptr ? user : "?", "@",
                      spout::LocalHostName(), " pid ", ::getpid(), ")");
}

int Modes(const OffsetsSetOptions& o) {
  return (o.offset >= 0) + (o.shift_option != nullptr && o.shift_option->count() > 0) +
         !o.to_datetime.empty() + o.to_earliest + o.to_latest + !o.from_file.empty();
}

// "topic,partition,offset" rows (the format --export writes); '#' comments,
// blank lines and a header line are skipped.
absl::StatusOr<std::vector<PlanRow>> ReadPlanFile(const std::string& path) {
  std::ifstream in(path);
  if (!in) return absl::NotFoundError(absl::StrCat("cannot read ", path));
  std::vector<PlanRow> rows;
  std::string line;
  for (int n = 1; std::getline(in, line); ++n) {
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (line.empty() || line[0] == '#' || line == "topic,partition,offset") continue;
    std::vector<std::string> cells = absl::StrSplit(line, ',');
    PlanRow row;
    int64_t offset = -1;
    if (cells.size() != 3 || cells[0].empty() || !absl::SimpleAtoi(cells[1], &row.partition) ||
        row.partition < 0 || !absl::SimpleAtoi(cells[2], &offset) || offset < 0 ||
        offset > static_cast<int64_t>(kMaxOffset)) {
      return absl::InvalidArgumentError(absl::StrCat(
          path, ":", n, ": expected topic,partition,offset with partition and offset >= 0"));
    }
    row.topic = cells[0];
    row.explicit_offset = offset;
    rows.push_back(std::move(row));
  }
  if (rows.empty()) return absl::InvalidArgumentError(absl::StrCat(path, ": no rows"));
  return rows;
}

bool Exists(coord::ZkSession& zk, const std::string& path) {
  auto e = zk.Exists(path);
  return e.ok() && e->has_value();
}

// Where this partition's nodes are: where they already are, else where the
// spout keeps its others (a new partition of a several-topic spout goes
// under its {topic}/ level).
bool DetectTopicLevel(coord::ZkSession& zk, const OffsetsSetOptions& o, const PlanRow& r,
                      const spout::SpoutLayout& layout) {
  for (auto path : {spout::OffsetNodePath, spout::OwnerNodePath}) {
    if (Exists(zk, path(o.root, o.id, r.topic, r.partition, false))) return false;
    if (Exists(zk, path(o.root, o.id, r.topic, r.partition, true))) return true;
  }
  return layout.topic_level;
}

// The partitions to move (before their offsets are known).
absl::StatusOr<std::vector<PlanRow>> Targets(const OffsetsSetOptions& o,
                                             const std::vector<spout::StoredPartitionOffset>& stored,
                                             spout::OffsetsKafka* kafka) {
  if (!o.from_file.empty()) return ReadPlanFile(o.from_file);
  if (o.topic.empty()) return absl::InvalidArgumentError("give --topic (or --from-file)");
  if ((o.partition >= 0) == o.all_partitions) {
    return absl::InvalidArgumentError("give exactly one of --partition N and --all-partitions");
  }
  std::vector<PlanRow> rows;
  if (o.partition >= 0) {
    rows.push_back(Row(o.topic, o.partition));
  } else if (kafka != nullptr) {
    ASSIGN_OR_RETURN(const auto parts, kafka->Partitions(o.topic));
    for (int p : parts) rows.push_back(Row(o.topic, p));
  } else {
    for (const auto& s : stored) {
      if (s.topic == o.topic) rows.push_back(Row(o.topic, s.partition));
    }
    if (rows.empty()) {
      return absl::NotFoundError(absl::StrCat("no stored offsets of topic ", o.topic,
                                              "; give --bootstrap to list its partitions"));
    }
  }
  if (o.offset >= 0) {
    for (auto& r : rows) r.explicit_offset = o.offset;
  }
  return rows;
}

std::string PartitionList(const std::vector<int>& parts) {
  if (parts.empty()) return "none";
  bool contiguous = parts.front() == 0 && parts.back() == static_cast<int>(parts.size()) - 1;
  if (contiguous) return absl::StrCat(parts.front(), "-", parts.back());
  return absl::StrJoin(parts, ",");
}

// The new offset of `r` under the options; a refusal says why not.
std::optional<Refusal> Resolve(const OffsetsSetOptions& o, PlanRow& r, spout::OffsetsKafka* kafka) {
  const std::string name = absl::StrCat(r.topic, "/", r.partition);
  if (kafka != nullptr) {
    auto parts = kafka->Partitions(r.topic);
    if (!parts.ok()) return Refusal{absl::StrCat("cannot list the partitions of ", r.topic, ": ",
                                                 parts.status().message())};
    if (!std::binary_search(parts->begin(), parts->end(), r.partition)) {
      return Refusal{absl::StrCat("partition ", name, " does not exist: topic ", r.topic,
                                  " has partitions ", PartitionList(*parts))};
    }
    auto marks = kafka->Watermarks(r.topic, r.partition);
    if (!marks.ok()) {
      return Refusal{absl::StrCat("cannot read the log range of ", name, ": ",
                                  marks.status().message())};
    }
    r.range = *marks;
  }
  if (r.explicit_offset.has_value()) {
    r.new_offset = *r.explicit_offset;
  } else if (o.shift_option != nullptr && o.shift_option->count() > 0) {
    if (!r.old_offset.has_value()) {
      return Refusal{absl::StrCat(name, " has no stored offset to shift")};
    }
    r.new_offset = *r.old_offset + o.shift_by;
  } else if (!o.to_datetime.empty()) {
    auto ms = ParseIsoDateTimeMs(o.to_datetime);
    if (!ms.ok()) return Refusal{std::string(ms.status().message())};
    auto at = kafka->OffsetForTime(r.topic, r.partition, *ms);
    if (!at.ok()) {
      return Refusal{absl::StrCat("cannot find the offset of ", name, " at ", o.to_datetime, ": ",
                                  at.status().message())};
    }
    r.new_offset = *at;
  } else {
    r.new_offset = o.to_earliest ? r.range->first : r.range->second;
  }
  if (r.range.has_value() && (r.new_offset < r.range->first || r.new_offset > r.range->second)) {
    return Refusal{absl::StrCat("offset ", r.new_offset, " is outside the log of ", name,
                                ": valid offsets are [", r.range->first, ", ", r.range->second,
                                "] (log start to log end)")};
  }
  if (r.new_offset < 0) {
    return Refusal{absl::StrCat("offset ", r.new_offset, " for ", name, " is negative")};
  }
  return std::nullopt;
}

std::string OrDash(const std::optional<int64_t>& v) {
  return v.has_value() ? std::to_string(*v) : std::string("-");
}

absl::Status Export(const std::string& path, const std::vector<PlanRow>& rows) {
  std::ofstream out(path, std::ios::trunc);
  if (!out) return absl::PermissionDeniedError(absl::StrCat("cannot write ", path));
  out << "topic,partition,offset\n";
  for (const auto& r : rows) out << r.topic << "," << r.partition << "," << r.new_offset << "\n";
  out.close();
  if (!out) return absl::DataLossError(absl::StrCat("cannot write ", path));
  return absl::OkStatus();
}

// The ACL of a rewind request for an owner of `topology_id`: besides this
// tool's identity, the owner's topology identity (read from the cluster's
// credentials node, which only the cluster identity can) may read and
// answer it. nullopt (the session's policy) when the topology has no
// identity or it cannot be read here (the offsets live on another
// ZooKeeper): then only an owner on this tool's identity can answer.
std::optional<coord::ZkAcl> RewindAcl(coord::ZkSession& zk, const std::string& cluster_root,
                                      const std::string& topology_id) {
  if (!zk.acl_policy().authenticated || topology_id.empty()) return std::nullopt;
  absl::StatusOr<std::optional<coord::ZkAuthConfig>> identity =
      coord::ReadTopologyIdentity(zk, coord::ClusterPaths(cluster_root),
                                  coord::TopologyNameOfId(topology_id));
  if (!identity.ok() || !identity->has_value()) return std::nullopt;
  return zk.acl_policy().ForTopology(coord::ZkNodeAccess::kPrivate,
                                     coord::ZkDigestId((*identity)->payload),
                                     coord::kZkPermRead | coord::kZkPermWrite);
}

// Applies one row; fills r.result / r.ok.
void ApplyRow(const OffsetsSetOptions& o, const std::string& cluster_root, coord::ZkSession& zk,
              PlanRow& r) {
  const std::string name = absl::StrCat(r.topic, "/", r.partition);
  if (r.owner.owner_session != 0 && !o.force) {
    spout::RewindRequest request;
    request.offset = r.new_offset;
    request.requested_by = Actor();
    request.requested_at_ms = std::chrono::duration_cast<std::chrono::milliseconds>(
                                  std::chrono::system_clock::now().time_since_epoch())
                                  .count();
    const std::string path =
        spout::RewindRequestPath(o.root, o.id, r.topic, r.partition, r.topic_level);
    auto answer = spout::RequestRewind(zk, path, request, std::chrono::seconds(o.timeout_secs),
                                       RewindAcl(zk, cluster_root, r.owner.owner_topology));
    r.ok = answer.ok() && answer->status == "done";
    if (r.ok) {
      r.result = absl::StrCat("rewound by its owner ", r.owner.owner, " (fenced; stored offset was ",
                              answer->from, ")");
      r.old_offset = answer->from >= 0 ? std::optional<int64_t>(answer->from) : std::nullopt;
    } else if (answer.ok()) {
      r.result = absl::StrCat(name, ": the owner ", r.owner.owner, " refused: ", answer->message);
    } else if (absl::IsDeadlineExceeded(answer.status())) {
      r.result = absl::StrCat(name, " is owned by ", r.owner.owner, ", which did not answer within ",
                              o.timeout_secs, " s; nothing changed (if that spout is gone, wait ",
                              "for its ZooKeeper session to expire, or pass --force)");
    } else {
      r.result = absl::StrCat(name, ": ", answer.status().message());
    }
    return;
  }
  spout::SetOffsetRequest request;
  request.zk_root = o.root;
  request.spout_id = o.id;
  request.topic = r.topic;
  request.partition = r.partition;
  request.offset = r.new_offset;
  request.topic_level = r.topic_level;
  request.force = o.force;
  request.actor = Actor();
  auto written = spout::SetStoredOffset(zk, request);
  r.ok = written.ok();
  r.result = r.ok ? (r.owner.owner_session != 0 ? "written (--force)" : "written (no live owner)")
                  : absl::StrCat(name, ": ", written.status().message());
}

void Print(const OffsetsSetOptions& o, const std::vector<PlanRow>& rows) {
  if (o.json) {
    nlohmann::json doc = {{"zk_root", o.root}, {"id", o.id}, {"execute", o.execute},
                          {"partitions", nlohmann::json::array()}};
    for (const auto& r : rows) {
      nlohmann::json j = {{"topic", r.topic}, {"partition", r.partition},
                          {"old_offset", r.old_offset ? nlohmann::json(*r.old_offset) : nullptr},
                          {"new_offset", r.new_offset},
                          {"owner", r.owner.owner.empty() ? nlohmann::json() : nlohmann::json(r.owner.owner)}};
      j["log_start_offset"] = r.range ? nlohmann::json(r.range->first) : nlohmann::json();
      j["log_end_offset"] = r.range ? nlohmann::json(r.range->second) : nlohmann::json();
      if (o.execute) {
        j["applied"] = r.ok;
        j["result"] = r.result;
      }
      doc["partitions"].push_back(std::move(j));
    }
    std::printf("%s\n", doc.dump().c_str());
    return;
  }
  std::printf("%-24s %9s %14s    %-14s %s\n", "TOPIC", "PARTITION", "OLD", "NEW", "OWNER");
  for (const auto& r : rows) {
    std::printf("%-24s %9d %14s -> %-14lld %s\n", r.topic.c_str(), r.partition,
                OrDash(r.old_offset).c_str(), static_cast<long long>(r.new_offset),
                r.owner.owner.empty() ? "none" : r.owner.owner.c_str());
  }
  if (!o.execute) {
    std::printf("dry run: nothing changed; add --execute to apply%s\n",
                o.bootstrap.empty() ? " (offsets not checked against Kafka: no --bootstrap)" : "");
  }
}

// Builds and checks the whole plan; nothing is written before it is valid.
// spout::CheckOwnsTopic, saying how to write a topic the spout has not stored yet.
absl::Status OwnsTopic(const spout::SpoutLayout& layout, const std::string& topic, bool seed) {
  absl::Status s = spout::CheckOwnsTopic(layout, topic, seed);
  if (s.ok()) return s;
  return absl::FailedPreconditionError(
      absl::StrCat(s.message(), "; nothing changed",
                   absl::IsNotFound(s) ? ". To write offsets of a spout that has not stored them "
                                         "yet, add --seed"
                                       : ""));
}

// Every row only touches what the spout owns (spout/kafka/offsets/offset_layout.h): its
// topic is checked before Kafka is asked anything about it, its partition
// once Kafka (if given) has said whether the topic has it.
absl::StatusOr<std::vector<PlanRow>> Plan(const OffsetsSetOptions& o, coord::ZkSession& zk,
                                          spout::OffsetsKafka* kafka) {
  std::vector<spout::StoredPartitionOffset> stored;
  if (auto listed = spout::ListStoredOffsets(zk, o.root, o.id); listed.ok()) {
    stored = std::move(*listed);
  } else if (!absl::IsNotFound(listed.status())) {
    return listed.status();
  }
  ASSIGN_OR_RETURN(const spout::SpoutLayout layout, spout::ReadSpoutLayout(zk, o.root, o.id));
  if (o.from_file.empty() && !o.topic.empty()) {
    TEMPEST_RETURN_IF_ERROR(OwnsTopic(layout, o.topic, o.seed));
  }
  ASSIGN_OR_RETURN(std::vector<PlanRow> rows, Targets(o, stored, kafka));
  for (PlanRow& r : rows) {
    TEMPEST_RETURN_IF_ERROR(OwnsTopic(layout, r.topic, o.seed));
    for (const auto& s : stored) {
      if (s.topic == r.topic && s.partition == r.partition && s.state) r.old_offset = s.state->offset;
    }
    r.topic_level = DetectTopicLevel(zk, o, r, layout);
    spout::ReadOwner(zk, spout::OwnerNodePath(o.root, o.id, r.topic, r.partition, r.topic_level),
                     r.owner);
    if (std::optional<Refusal> refused = Resolve(o, r, kafka)) {
      return absl::FailedPreconditionError(refused->message);
    }
    // Resolve refused any partition Kafka does not list.
    TEMPEST_RETURN_IF_ERROR(spout::CheckOwnsPartition(layout, r.topic, r.partition,
                                                      /*kafka_lists_it=*/kafka != nullptr, o.seed));
  }
  return rows;
}

}  // namespace

absl::StatusOr<int64_t> ParseIsoDateTimeMs(const std::string& text) {
  absl::Time t;
  std::string err;
  for (const char* format : {"%Y-%m-%dT%H:%M:%E*S%Ez", "%Y-%m-%dT%H:%M:%E*S", "%Y-%m-%dT%H:%M%Ez",
                             "%Y-%m-%dT%H:%M", "%Y-%m-%d"}) {
    if (absl::ParseTime(format, text, absl::UTCTimeZone(), &t, &err)) {
      const int64_t ms = absl::ToUnixMillis(t);
      if (ms < 0) break;
      return ms;
    }
  }
  return absl::InvalidArgumentError(
      absl::StrCat("--to-datetime '", text.substr(0, 60),
                   "' is not an ISO-8601 time after 1970 such as 2026-01-02T03:04:05Z"));
}

void AddOffsetsSetOptions(CLI::App* put, OffsetsSetOptions& o) {
  put->add_option("--zk", o.zk, "ZooKeeper connect string holding the offsets")->required();
  put->add_option("--root", o.root, "the spout's zkRoot, e.g. /kafkaspout")->required();
  put->add_option("--id", o.id, "the spout's id (SpoutConfig id)")->required();
  put->add_option("--bootstrap", o.bootstrap,
                  "Kafka bootstrap servers (checks partitions and log ranges)");
  put->add_flag("--json", o.json, "one JSON document on stdout");
  put->add_option("--topic", o.topic, "topic");
  put->add_option("--partition", o.partition, "one partition")
      ->check(Bounded(0, kMaxPartition))
      ->default_str("");
  put->add_flag("--all-partitions", o.all_partitions, "every partition of --topic");
  put->add_option("--offset,--to-offset", o.offset, "the offset to resume from")
      ->check(Bounded(0, kMaxOffset))
      ->default_str("");
  o.shift_option = put->add_option("--shift-by", o.shift_by, "move the stored offset by N (+/-)")
                       ->check(Bounded(-kMaxOffset, kMaxOffset));
  put->add_option("--to-datetime", o.to_datetime,
                  "the first offset at or after an ISO-8601 time (needs --bootstrap)");
  put->add_flag("--to-earliest", o.to_earliest, "the log start (needs --bootstrap)");
  put->add_flag("--to-latest", o.to_latest, "the log end (needs --bootstrap)");
  put->add_option("--export", o.export_file, "also write the plan as topic,partition,offset CSV");
  put->add_option("--from-file", o.from_file, "take the plan from a topic,partition,offset CSV");
  put->add_flag("--execute", o.execute, "apply the plan (default: a dry run that changes nothing)");
  put->add_flag("--force", o.force,
                "write directly even though an owner node exists (only for a dead owner)");
  put->add_flag("--seed", o.seed,
                "also write topics and partitions the spout has not stored yet (a spout that has "
                "not run); never a second topic of a one-topic spout");
  put->add_option("--timeout", o.timeout_secs, "seconds to wait for a live owner's answer")
      ->check(Bounded(1, 3600));
}

int RunOffsetsSet(const OffsetsSetOptions& o, const GlobalOptions& globals) {
  if (Modes(o) != 1) {
    return Fail(
        "give exactly one of --offset, --shift-by, --to-datetime, --to-earliest, --to-latest, "
        "--from-file", 2);
  }
  if ((o.to_earliest || o.to_latest || !o.to_datetime.empty()) && o.bootstrap.empty()) {
    return Fail("--to-earliest, --to-latest and --to-datetime need --bootstrap", 2);
  }
  if (!o.from_file.empty() && (!o.topic.empty() || o.partition >= 0 || o.all_partitions)) {
    return Fail("--from-file names its partitions; drop --topic/--partition/--all-partitions", 2);
  }
  if (!o.to_datetime.empty()) {
    if (auto ms = ParseIsoDateTimeMs(o.to_datetime); !ms.ok()) {
      return Fail(std::string(ms.status().message()), 2);
    }
  }
  std::unique_ptr<spout::OffsetsKafka> kafka;
  if (!o.bootstrap.empty()) {
    auto connected = spout::OffsetsKafka::Connect(o.bootstrap, kKafkaTimeout);
    if (!connected.ok()) return Fail(std::string(connected.status().message()));
    kafka = std::move(*connected);
  }
  auto session = ConnectOffsetsZookeeper(o.zk, globals);
  if (!session.ok()) return Fail(std::string(session.status().message()));
  auto rows = Plan(o, **session, kafka.get());
  if (!rows.ok()) return Fail(std::string(rows.status().message()));
  if (!o.export_file.empty()) {
    if (auto s = Export(o.export_file, *rows); !s.ok()) return Fail(std::string(s.message()));
  }
  if (!o.execute) {
    Print(o, *rows);
    return 0;
  }
  // Where the cluster keeps topology identities (storm.zookeeper.root).
  std::string cluster_root = "/tempest";
  if (absl::StatusOr<api::Config> config = LoadDaemonConfig(globals); config.ok()) {
    if (auto zk = coord::ClusterZkConfig::FromConfig(*config); zk.ok()) cluster_root = zk->root;
  }
  bool all_ok = true;
  for (PlanRow& r : *rows) {
    ApplyRow(o, cluster_root, **session, r);
    all_ok = all_ok && r.ok;
  }
  Print(o, *rows);
  for (const PlanRow& r : *rows) {
    if (r.ok) {
      if (!o.json) std::printf("%s/%d: %s\n", r.topic.c_str(), r.partition, r.result.c_str());
    } else {
      std::fprintf(stderr, "tempest: %s\n", r.result.c_str());
    }
  }
  return all_ok ? 0 : 1;
}

}  // namespace tempest::cli
