#include "cli/upgrade_pairing.h"

#include <cstdint>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "common/core/log_text.h"

namespace tempest::cli {

std::string SpoutSite::Location() const {
  return in_kafka ? absl::StrCat("Kafka consumer group ", group)
                  : absl::StrCat("ZooKeeper ", zk_root, "/", id);
}

bool SpoutSite::SameLocation(const SpoutSite& other) const {
  return in_kafka == other.in_kafka &&
         (in_kafka ? group == other.group : zk_root == other.zk_root && id == other.id);
}

OffsetCarry SpoutPair::carry_kind() const {
  if (old_site.SameLocation(new_site)) return OffsetCarry::kNone;
  if (old_site.in_kafka) {
    return new_site.in_kafka ? OffsetCarry::kGroupToGroup : OffsetCarry::kGroupToZk;
  }
  return new_site.in_kafka ? OffsetCarry::kZkToGroup : OffsetCarry::kZkToZk;
}

std::string SpoutPair::Text() const {
  return carry() ? absl::StrCat(old_site.component, ": offsets carried from ", old_site.Location(),
                                " to ", new_site.Location())
                 : absl::StrCat(old_site.component, ": offsets stay in ", old_site.Location());
}

absl::StatusOr<std::vector<SpoutPair>> PairSpouts(const std::vector<SpoutSite>& old_sites,
                                                  const std::vector<SpoutSite>& new_sites) {
  if (old_sites.empty()) return absl::FailedPreconditionError("OLD has no KafkaSpout");
  if (old_sites.size() != new_sites.size()) {
    return absl::FailedPreconditionError(absl::StrCat(
        "OLD has ", core::Counted(static_cast<int64_t>(old_sites.size()), "KafkaSpout"),
        ", NEW has ", new_sites.size()));
  }
  std::vector<SpoutPair> pairs;
  for (const SpoutSite& o : old_sites) {
    const SpoutSite* n = old_sites.size() == 1 ? &new_sites.front() : nullptr;
    for (const SpoutSite& s : new_sites) {
      if (n == nullptr && s.component == o.component) n = &s;
    }
    if (n == nullptr) {
      return absl::FailedPreconditionError(
          absl::StrCat("NEW has no KafkaSpout called ", o.component, " (as OLD has)"));
    }
    if (n->topics != o.topics) {
      return absl::FailedPreconditionError(absl::StrCat(
          "spout ", o.component, " of OLD reads ", absl::StrJoin(o.topics, ","), ", NEW's ",
          n->component, " reads ", absl::StrJoin(n->topics, ","), ": an upgrade keeps the topics"));
    }
    if (!n->ignores_commits.empty()) {
      return absl::FailedPreconditionError(absl::StrCat(
          "NEW's spout ", n->component, " has ", n->ignores_commits,
          ", so it would not start from OLD's committed offsets but from the ",
          n->starts_at_latest ? "end of each partition, skipping what arrives during the upgrade"
                              : "start of each partition, reading everything again",
          "; use ", n->in_kafka ? "UNCOMMITTED_EARLIEST" : "ignoreZkOffsets: false"));
    }
    pairs.push_back(SpoutPair{o, *n});
  }
  return pairs;
}

}  // namespace tempest::cli
