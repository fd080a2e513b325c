#ifndef TEMPEST_SPOUT_OFFSET_LAYOUT_H_
#define TEMPEST_SPOUT_OFFSET_LAYOUT_H_

// What a KafkaSpout owns, as its ZooKeeper nodes under {zkRoot}/{id} say:
// the topics and partitions the offset tools (`offsets set`, `migrate
// offsets`, rewinds) may touch. A one-topic spout keeps partition_N nodes
// whose JSON names the topic; a spout of several topics keeps
// {topic}/partition_N (docs/znode-layout.md). A topic or partition the
// layout does not hold is refused with one line naming what it does hold,
// before Kafka is asked anything about it, so a misspelt name never reaches
// (or creates) a topic and never lands on another topic's nodes.

#include <map>
#include <set>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "common/coord/zk_session.h"

namespace tempest::spout {

struct SpoutLayout {
  std::string base;          // {zkRoot}/{id}, for messages
  bool topic_level = false;  // several topics: {topic}/partition_N
  // topic -> partitions that have an offset node or a live owner node. In
  // the one-topic layout a node that names no topic (it does not parse, or
  // an owner before the first commit) counts for the topic the other nodes
  // name; "" when none does.
  std::map<std::string, std::set<int>> partitions;

  bool Empty() const { return partitions.empty(); }
  bool HoldsTopic(const std::string& topic) const { return partitions.contains(topic); }
  bool Holds(const std::string& topic, int partition) const;
  // "topic clicks (partitions 0-1)", "topics clicks (partitions 0-2), views
  // (partition 0)", "no offsets".
  std::string Describe() const;
};

// Reads the layout (offset nodes, and owner nodes under @owners). An absent
// {zkRoot}/{id} is an empty layout.
absl::StatusOr<SpoutLayout> ReadSpoutLayout(coord::ZkSession& session, const std::string& zk_root,
                                            const std::string& spout_id);

// Whether an offset tool may write `topic`; when not, one line naming what
// the layout holds: FailedPrecondition for a topic a one-topic layout can
// never take, NotFound for a topic the layout does not hold yet (an empty
// layout, or one more topic of a several-topic spout), which `seed` allows.
absl::Status CheckOwnsTopic(const SpoutLayout& layout, const std::string& topic, bool seed);

// Whether an offset tool may write `topic`/`partition`: CheckOwnsTopic, then
// a partition the layout holds, or one Kafka lists for the topic
// (`kafka_lists_it`: the spout reads every partition of its topic), or any
// with `seed`.
absl::Status CheckOwnsPartition(const SpoutLayout& layout, const std::string& topic, int partition,
                                bool kafka_lists_it, bool seed);

}  // namespace tempest::spout

#endif  // TEMPEST_SPOUT_OFFSET_LAYOUT_H_
