#ifndef TEMPEST_CLI_UPGRADE_PAIRING_H_
#define TEMPEST_CLI_UPGRADE_PAIRING_H_

// `tempest upgrade`'s pure part: where each KafkaSpout of OLD and of NEW
// keeps its offsets, which spout of NEW takes over each of OLD's, and which
// carry of committed offsets that takes (none when both keep them in the
// same place). Reads nothing; unit-tested in tests/unit/cli/.

#include <set>
#include <string>
#include <vector>

#include "absl/status/statusor.h"

namespace tempest::cli {

// Where one KafkaSpout reads and keeps its offsets.
struct SpoutSite {
  std::string component;
  std::set<std::string> topics;
  bool in_kafka = false;
  std::string zk_connect;  // nimbus's resolution; "" while NEW is not submitted
  std::string zk_root;
  std::string id;
  std::string group;
  std::string bootstrap;
  // NEW only. Non-empty when the spout's settings make a new deployment start
  // from the partitions' start or end instead of the committed offsets: the
  // setting as the user wrote it (e.g. "firstPollOffsetStrategy EARLIEST").
  std::string ignores_commits;
  bool starts_at_latest = false;  // with ignores_commits: from the end, else the start

  std::string Location() const;
  // ZooKeeper: the same root and id (a different ensemble is not compared).
  bool SameLocation(const SpoutSite& other) const;
};

// How OLD's committed offsets reach where NEW reads them.
enum class OffsetCarry {
  kNone,          // the same location: NEW reads on from OLD's commits
  kZkToGroup,     // storm-kafka -> storm-kafka-client (`migrate offsets`)
  kGroupToZk,     // storm-kafka-client -> storm-kafka (a rollback)
  kZkToZk,        // another zkRoot/id: the partition nodes copied
  kGroupToGroup,  // another group.id: the group's commits copied
};

// One of OLD's spouts and the one of NEW that takes over its partitions.
struct SpoutPair {
  SpoutSite old_site;
  SpoutSite new_site;

  OffsetCarry carry_kind() const;
  bool carry() const { return carry_kind() != OffsetCarry::kNone; }
  // "offsets carried from X to Y" or "offsets stay in X", after the component.
  std::string Text() const;
};

// Pairs the spouts by component id (or the only one with the only one) and
// checks that each pair reads the same topics and that NEW's spout reads on
// from the committed offsets (one that ignores them would read everything
// again, or skip what arrives during the upgrade). Every change of location
// has a carry; FailedPrecondition names what does not pair.
absl::StatusOr<std::vector<SpoutPair>> PairSpouts(const std::vector<SpoutSite>& old_sites,
                                                  const std::vector<SpoutSite>& new_sites);

}  // namespace tempest::cli

#endif  // TEMPEST_CLI_UPGRADE_PAIRING_H_
