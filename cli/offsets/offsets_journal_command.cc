// `tempest offsets history|explain`: a KafkaSpout's per-partition offset
// journal (spout/kafka/offsets/offset_journal.h) as a timeline, and what became of one
// record. Reads ZooKeeper directly, so it works whether or not the topology
// runs.
#include <cstdio>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>

#include "absl/strings/str_cat.h"
#include "absl/time/time.h"
#include "cli/cli_text.h"
#include "cli/commands.h"
#include "cli/offsets/offsets_command.h"
#include "common/coord/zk_session.h"
#include "common/core/log_text.h"
#include "common/core/status_macros.h"
#include "spout/kafka/offsets/offset_admin.h"
#include "spout/kafka/offsets/offset_journal.h"
#include "spout/kafka/offsets/offset_store.h"

namespace tempest::cli {
namespace {

constexpr double kMaxPartition = 2147483647;
constexpr double kMaxOffset = 1e18;

struct JournalOptions {
  std::string zk;
  std::string root;
  std::string id;
  std::string topic;
  int partition = -1;
  std::string since;
  int64_t offset = -1;
  bool json = false;
};

// One partition's journal directory and its stored offset, if any.
struct JournalPartition {
  std::string topic;  // "" when neither the path nor a stored node names it
  int partition = 0;
  std::string dir;
  std::optional<int64_t> stored;
};

std::optional<int> PartitionOf(const std::string& name) {
  constexpr std::string_view kPrefix = "partition_";
  if (name.rfind(kPrefix, 0) != 0 || name.size() == kPrefix.size()) return std::nullopt;
  int64_t n = 0;
  for (char c : name.substr(kPrefix.size())) {
    if (c < '0' || c > '9' || n > kMaxPartition) return std::nullopt;
    n = n * 10 + (c - '0');
  }
  return n <= kMaxPartition ? std::optional<int>(static_cast<int>(n)) : std::nullopt;
}

// Every journal directory under {root}/{id}/@journal (both layouts), with
// the stored offsets from the partition_N nodes.
absl::StatusOr<std::vector<JournalPartition>> FindJournals(coord::ZkSession& zk,
                                                           const JournalOptions& o) {
  absl::StatusOr<std::vector<spout::StoredPartitionOffset>> stored =
      spout::ListStoredOffsets(zk, o.root, o.id);
  if (!stored.ok() && !absl::IsNotFound(stored.status())) return stored.status();
  if (!stored.ok()) stored.emplace();
  const std::string base = spout::JournalDirPath(o.root, o.id, "", 0, false);
  const std::string journal_root = base.substr(0, base.rfind('/'));
  absl::StatusOr<std::vector<std::string>> children = zk.Children(journal_root);
  if (absl::IsNotFound(children.status())) {
    if (stored->empty()) {
      return absl::NotFoundError(absl::StrCat("no offsets and no journal under ", o.root, "/", o.id));
    }
    children.emplace();
  }
  RETURN_IF_ERROR(children.status());
  std::vector<JournalPartition> out;
  auto stored_for = [&](const std::string& topic, int p, bool topic_level) {
    std::optional<int64_t> found;
    std::string name = topic;
    for (const auto& s : *stored) {
      if (s.partition != p || !s.state) continue;
      // A flat journal goes with the flat offset node, a {topic}/ one with its topic's.
      if (s.path != spout::OffsetNodePath(o.root, o.id, topic_level ? topic : s.topic, p,
                                          topic_level)) {
        continue;
      }
      found = s.state->offset;
      if (name.empty()) name = s.topic;
    }
    out.push_back({name, p, spout::JournalDirPath(o.root, o.id, topic, p, topic_level), found});
  };
  for (const std::string& child : *children) {
    if (std::optional<int> p = PartitionOf(child)) {
      stored_for("", *p, false);
      continue;
    }
    absl::StatusOr<std::vector<std::string>> parts = zk.Children(journal_root + "/" + child);
    if (!parts.ok()) continue;
    for (const std::string& g : *parts) {
      if (std::optional<int> p = PartitionOf(g)) stored_for(child, *p, true);
    }
  }
  std::sort(out.begin(), out.end(), [](const auto& a, const auto& b) {
    return std::tie(a.topic, a.partition) < std::tie(b.topic, b.partition);
  });
  return out;
}

nlohmann::ordered_json EntryJson(const spout::JournalEntry& e) {
  nlohmann::ordered_json j = nlohmann::ordered_json::parse(spout::EncodeJournalEntry(e));
  j["time_utc"] = spout::FormatUtcMillis(e.time_ms);
  j["sequence"] = e.sequence;
  return j;
}

// --since: an ISO-8601 UTC time, or a duration back from now ("90m", "2h").
absl::StatusOr<int64_t> ParseSince(const std::string& text) {
  absl::Time t;
  std::string err;
  for (const char* format : {absl::RFC3339_full, "%Y-%m-%dT%H:%M:%S", "%Y-%m-%d"}) {
    if (absl::ParseTime(format, text, absl::UTCTimeZone(), &t, &err)) return absl::ToUnixMillis(t);
  }
  absl::Duration d;
  if (absl::ParseDuration(text, &d) && d >= absl::ZeroDuration()) {
    return absl::ToUnixMillis(absl::Now() - d);
  }
  return absl::InvalidArgumentError(absl::StrCat(
      "--since: expected an ISO-8601 time (2026-01-02T03:04:05Z) or a duration (90m, 2h), got '",
      text, "'"));
}

int RunHistory(const JournalOptions& o, const GlobalOptions& globals) {
  int64_t since_ms = 0;
  if (!o.since.empty()) {
    absl::StatusOr<int64_t> since = ParseSince(o.since);
    if (!since.ok()) return Fail(std::string(since.status().message()), 2);
    since_ms = *since;
  }
  auto zk = ConnectOffsetsZookeeper(o.zk, globals);
  if (!zk.ok()) return Fail(std::string(zk.status().message()));
  auto journals = FindJournals(**zk, o);
  if (!journals.ok()) return Fail(std::string(journals.status().message()));
  nlohmann::ordered_json doc = {
      {"zkRoot", o.root}, {"id", o.id}, {"partitions", nlohmann::ordered_json::array()}};
  int shown = 0;
  for (const JournalPartition& jp : *journals) {
    if (!o.topic.empty() && jp.topic != o.topic) continue;
    if (o.partition >= 0 && jp.partition != o.partition) continue;
    auto read = spout::ReadJournal(**zk, jp.dir);
    if (!read.ok()) return Fail(absl::StrCat(jp.dir, ": ", std::string(read.status().message())));
    ++shown;
    const std::string name = absl::StrCat(jp.topic.empty() ? "?" : jp.topic, "/", jp.partition);
    nlohmann::ordered_json part = {{"topic", jp.topic},
                                   {"partition", jp.partition},
                                   {"journal", jp.dir},
                                   {"stored_offset", jp.stored ? nlohmann::ordered_json(*jp.stored)
                                                               : nlohmann::ordered_json()},
                                   {"unreadable_entries", read->unreadable},
                                   {"entries", nlohmann::ordered_json::array()}};
    if (!o.json) {
      std::printf("%s: %s, stored offset %s%s\n", name.c_str(),
                  core::Counted(static_cast<int64_t>(read->entries.size()), "entry", "entries")
                      .c_str(),
                  jp.stored ? std::to_string(*jp.stored).c_str() : "none",
                  read->unreadable > 0
                      ? absl::StrCat(" (", read->unreadable, " unreadable skipped)").c_str()
                      : "");
    }
    for (const spout::JournalEntry& e : read->entries) {
      if (e.time_ms < since_ms) continue;
      if (o.json) {
        part["entries"].push_back(EntryJson(e));
      } else {
        std::printf("  %s\n", spout::DescribeJournalEntry(e).c_str());
      }
    }
    doc["partitions"].push_back(std::move(part));
  }
  if (shown == 0 && (!o.topic.empty() || o.partition >= 0)) {
    return Fail(absl::StrCat("no journal for ", o.topic.empty() ? "any topic" : o.topic,
                             o.partition >= 0 ? absl::StrCat(" partition ", o.partition) : "",
                             " under ", o.root, "/", o.id));
  }
  if (o.json) std::printf("%s\n", doc.dump().c_str());
  return 0;
}

int RunExplain(const JournalOptions& o, const GlobalOptions& globals) {
  auto zk = ConnectOffsetsZookeeper(o.zk, globals);
  if (!zk.ok()) return Fail(std::string(zk.status().message()));
  auto journals = FindJournals(**zk, o);
  if (!journals.ok()) return Fail(std::string(journals.status().message()));
  const JournalPartition* found = nullptr;
  for (const JournalPartition& jp : *journals) {
    if (jp.partition == o.partition && (jp.topic == o.topic || jp.topic.empty())) found = &jp;
  }
  std::vector<spout::JournalEntry> entries;
  int unreadable = 0;
  std::optional<int64_t> stored;
  if (found != nullptr) {
    auto read = spout::ReadJournal(**zk, found->dir);
    if (!read.ok()) return Fail(absl::StrCat(found->dir, ": ", std::string(read.status().message())));
    entries = std::move(read->entries);
    unreadable = read->unreadable;
    stored = found->stored;
  } else {
    // No journal: the stored offset still tells "not reached" apart.
    auto offsets = spout::ListStoredOffsets(**zk, o.root, o.id);
    for (const auto& s : offsets.ok() ? *offsets : std::vector<spout::StoredPartitionOffset>{}) {
      if (s.topic == o.topic && s.partition == o.partition && s.state) stored = s.state->offset;
    }
  }
  const spout::OffsetExplanation x =
      spout::ExplainOffset(entries, stored, spout::TopicPartition{o.topic, o.partition}, o.offset);
  if (o.json) {
    nlohmann::ordered_json doc = {
        {"topic", o.topic},
        {"partition", o.partition},
        {"offset", o.offset},
        {"verdict", std::string(spout::VerdictName(x.verdict))},
        {"text", x.text},
        {"stored_offset", stored ? nlohmann::ordered_json(*stored) : nlohmann::ordered_json()},
        {"entry", x.entry ? EntryJson(*x.entry) : nlohmann::ordered_json()},
        {"replayed_by", x.replayed_by ? EntryJson(*x.replayed_by) : nlohmann::ordered_json()},
        {"unreadable_entries", unreadable}};
    std::printf("%s\n", doc.dump().c_str());
  } else {
    std::printf("%s\n", x.text.c_str());
    if (unreadable > 0) std::printf("(%d unreadable journal entries were skipped)\n", unreadable);
  }
  return 0;
}

void AddJournalCommon(CLI::App* sub, JournalOptions& o) {
  sub->add_option("--zk", o.zk, "ZooKeeper connect string holding the offsets")->required();
  sub->add_option("--root", o.root, "the spout's zkRoot, e.g. /kafkaspout")->required();
  sub->add_option("--id", o.id, "the spout's id (SpoutConfig id)")->required();
  sub->add_flag("--json", o.json, "one JSON document on stdout");
}

}  // namespace

void RegisterOffsetsJournalCommands(CLI::App& offsets, CommandSet& set, GlobalOptions& globals) {
  auto opts = std::make_shared<JournalOptions>();
  auto* history =
      offsets.add_subcommand("history", "What moved each partition's offset (the offset journal)");
  AddJournalCommon(history, *opts);
  history->add_option("--topic", opts->topic, "only this topic");
  history->add_option("--partition", opts->partition, "only this partition")
      ->check(Bounded(0, kMaxPartition))
      ->default_str("");
  history->add_option("--since", opts->since,
                      "only entries from this ISO-8601 UTC time, or this long ago (90m, 2h)");
  auto* explain = offsets.add_subcommand("explain", "What became of one record, from the journal");
  AddJournalCommon(explain, *opts);
  explain->add_option("--topic", opts->topic, "topic")->required();
  explain->add_option("--partition", opts->partition, "partition")
      ->required()
      ->check(Bounded(0, kMaxPartition))
      ->default_str("");
  explain->add_option("--offset", opts->offset, "the record's offset")
      ->required()
      ->check(Bounded(0, kMaxOffset))
      ->default_str("");
  set.Add(history, [opts, &globals] { return RunHistory(*opts, globals); });
  set.Add(explain, [opts, &globals] { return RunExplain(*opts, globals); });
}

}  // namespace tempest::cli
