#include "spout/kafka/offsets/offset_layout.h"

#include <charconv>
#include <optional>
#include <vector>

#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "common/core/status_macros.h"
#include "spout/kafka/offsets/offset_admin.h"

namespace tempest::spout {
namespace {

std::string Root(const std::string& zk_root) {
  std::string root = zk_root;
  while (root.size() > 1 && root.back() == '/') root.pop_back();
  return root == "/" ? "" : root;
}

std::optional<int> PartitionNumber(const std::string& name) {
  constexpr std::string_view kPrefix = "partition_";
  if (name.rfind(kPrefix, 0) != 0) return std::nullopt;
  int n = 0;
  const char* end = name.data() + name.size();
  auto [ptr, ec] = std::from_chars(name.data() + kPrefix.size(), end, n);
  if (ec != std::errc() || ptr != end || n < 0) return std::nullopt;
  return n;
}

// "0-3" for a run, else "0,2,5".
std::string PartitionList(const std::set<int>& parts) {
  const std::vector<int> list(parts.begin(), parts.end());
  if (!list.empty() && list.back() - list.front() == static_cast<int>(list.size()) - 1 &&
      list.size() > 1) {
    return absl::StrCat("partitions ", list.front(), "-", list.back());
  }
  return absl::StrCat(list.size() == 1 ? "partition " : "partitions ", absl::StrJoin(list, ","));
}

// A name as a message shows it: escaped, so a name never breaks the line.
std::string Shown(const std::string& name) {
  return name.empty() ? std::string("(a topic no node names yet)") : absl::CHexEscape(name);
}

// Owner nodes under @owners: flat partition_N, or {topic}/partition_N.
absl::Status AddOwners(coord::ZkSession& session, const std::string& base,
                       std::map<std::string, std::set<int>>& flat_owners, SpoutLayout& layout,
                       bool& nested) {
  auto children = session.Children(base + "/@owners");
  if (!children.ok()) {
    return absl::IsNotFound(children.status()) ? absl::OkStatus() : children.status();
  }
  for (const std::string& child : *children) {
    if (std::optional<int> p = PartitionNumber(child)) {
      flat_owners[""].insert(*p);
      continue;
    }
    auto grandchildren = session.Children(base + "/@owners/" + child);
    if (!grandchildren.ok()) continue;  // deleted meanwhile
    for (const std::string& g : *grandchildren) {
      if (std::optional<int> p = PartitionNumber(g)) {
        layout.partitions[child].insert(*p);
        nested = true;
      }
    }
  }
  return absl::OkStatus();
}

}  // namespace

bool SpoutLayout::Holds(const std::string& topic, int partition) const {
  auto it = partitions.find(topic);
  return it != partitions.end() && it->second.contains(partition);
}

std::string SpoutLayout::Describe() const {
  if (partitions.empty()) return "no offsets";
  std::vector<std::string> topics;
  for (const auto& [topic, parts] : partitions) {
    topics.push_back(absl::StrCat(Shown(topic), " (", PartitionList(parts), ")"));
  }
  return absl::StrCat(topics.size() == 1 ? "topic " : "topics ", absl::StrJoin(topics, ", "));
}

absl::StatusOr<SpoutLayout> ReadSpoutLayout(coord::ZkSession& session, const std::string& zk_root,
                                            const std::string& spout_id) {
  SpoutLayout layout;
  layout.base = absl::StrCat(Root(zk_root), "/", spout_id);
  auto stored = ListStoredOffsets(session, zk_root, spout_id);
  if (!stored.ok()) {
    return absl::IsNotFound(stored.status()) ? absl::StatusOr<SpoutLayout>(layout)
                                             : stored.status();
  }
  // Flat nodes (no {topic}/ level) first gathered apart: one that names no
  // topic belongs to the topic the others name.
  std::map<std::string, std::set<int>> flat;
  bool nested = false;
  for (const StoredPartitionOffset& s : *stored) {
    const bool is_flat =
        s.path == OffsetNodePath(zk_root, spout_id, s.topic, s.partition, /*topic_level=*/false) ||
        s.topic.empty();
    if (is_flat) {
      flat[s.topic].insert(s.partition);
    } else {
      nested = true;
      layout.partitions[s.topic].insert(s.partition);
    }
  }
  RETURN_IF_ERROR(AddOwners(session, layout.base, flat, layout, nested));
  std::set<int> unnamed = flat[""];
  flat.erase("");
  if (flat.size() == 1 && !unnamed.empty()) flat.begin()->second.merge(unnamed);
  if (flat.empty() && !unnamed.empty()) flat[""] = unnamed;
  for (auto& [topic, parts] : flat) layout.partitions[topic].merge(parts);
  layout.topic_level = nested && flat.empty();
  return layout;
}

absl::Status CheckOwnsTopic(const SpoutLayout& layout, const std::string& topic, bool seed) {
  if (layout.HoldsTopic(topic)) return absl::OkStatus();
  // Nodes that name no topic yet (owners before the first commit) do not
  // say which topic the spout reads: that takes `seed`.
  const bool one_topic = !layout.Empty() && !layout.topic_level && !layout.HoldsTopic("");
  if (one_topic) {
    return absl::FailedPreconditionError(absl::StrCat(
        layout.base, " keeps the offsets of one topic, ", layout.Describe(), ": ",
        absl::CHexEscape(topic), " is not it"));
  }
  if (seed) return absl::OkStatus();
  return absl::NotFoundError(absl::StrCat(layout.base, " holds no offsets of topic ",
                                          absl::CHexEscape(topic), " (it holds ",
                                          layout.Describe(), ")"));
}

absl::Status CheckOwnsPartition(const SpoutLayout& layout, const std::string& topic, int partition,
                                bool kafka_lists_it, bool seed) {
  if (absl::Status s = CheckOwnsTopic(layout, topic, seed); !s.ok()) {
    return absl::Status(s.code(), absl::StrCat(s.message(), "; nothing changed"));
  }
  if (layout.Holds(topic, partition) || kafka_lists_it || seed) return absl::OkStatus();
  return absl::FailedPreconditionError(absl::StrCat(
      layout.base, " holds no offset of ", absl::CHexEscape(topic), "/", partition, " (it holds ",
      layout.Describe(), "); nothing changed. Give --bootstrap to set a partition Kafka has that "
      "the spout has not committed yet, or --seed"));
}

}  // namespace tempest::spout
