#ifndef TEMPEST_SPOUT_SEQUENCE_SPOUT_H_
#define TEMPEST_SPOUT_SEQUENCE_SPOUT_H_

#include <string_view>
#include <cstdint>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "absl/status/statusor.h"
#include "common/api/component_registry.h"
#include "common/api/spout.h"
#include "common/core/clock.h"

namespace tempest::spout {

// Settings of a SequenceSpout, read from its Flux properties (or, in that
// order, from positional constructorArgs: count, rate).
struct SequenceSpoutOptions {
  int64_t count = -1;  // -1: forever
  double rate = 0;     // tuples per second over all emissions; 0: unlimited
  int64_t keys = 16;   // key = "k" + (seq % keys)
  int64_t payload_bytes = 100;
  bool reliable = true;  // emit with message id = seq, replay failures

  static absl::StatusOr<SequenceSpoutOptions> FromArgs(const api::ComponentArgs& args);
};

// `tempest.SequenceSpout`: emits (seq:int64, key:string, payload:bytes) for
// seq = 0, 1, ... count-1 (or forever). The workhorse of end-to-end checks:
// with `reliable` every seq carries itself as message id, and a failed or
// timed-out seq is queued for replay and emitted again (before new seqs)
// until it is acked.
//
// Owns its replay queue and in-flight set. Lives on its spout executor
// thread like any Spout (no locking). Construction only parses options; Open
// starts the rate schedule. With count >= 0 it is finite: IsExhausted() is
// true once every seq was emitted and, when reliable, acked.
//
// Rate limiting never sleeps: NextTuple emits the tuples that are due since
// the schedule started (at most kMaxBurst per call) and returns at once when
// it is ahead of schedule. It also stops a burst at the topology's
// max.spout.pending so bursts do not overshoot that limit.
class SequenceSpout final : public api::Spout {
 public:
  // Its Flux properties; any other name is rejected (CheckKnownProperties).
  static constexpr std::string_view kPropertyNames[] = {"count", "rate", "keys", "payloadBytes", "reliable"};
  static constexpr int64_t kMaxBurst = 256;

  static absl::StatusOr<std::unique_ptr<SequenceSpout>> Create(const api::ComponentArgs& args);
  // For tests: a clock other than the real one drives the rate schedule.
  static absl::StatusOr<std::unique_ptr<SequenceSpout>> Create(const api::ComponentArgs& args,
                                                               const core::Clock& clock);
  SequenceSpout(SequenceSpoutOptions options, const core::Clock& clock);

  absl::Status Open(const api::Config& config, const api::TopologyContext& context,
                    api::SpoutOutputCollector& collector) override;
  void NextTuple() override;
  void Ack(const api::MessageId& message_id) override;
  void Fail(const api::MessageId& message_id) override;
  void Activate() override;
  void DeclareOutputFields(api::OutputFieldsDeclarer& declarer) const override;
  bool IsExhausted() const override;

  const SequenceSpoutOptions& options() const { return options_; }
  // Next never-emitted seq.
  int64_t next_seq() const { return next_seq_; }
  int64_t in_flight() const { return static_cast<int64_t>(in_flight_.size()); }
  int64_t replay_queued() const { return static_cast<int64_t>(replay_.size()); }
  int64_t acked() const { return acked_; }

 private:
  // How many tuples this call may emit under the rate limit.
  int64_t DueNow();
  // Emits one tuple (a replay first, else the next seq); false if none left.
  bool EmitOne();

  const SequenceSpoutOptions options_;
  const core::Clock& clock_;
  api::SpoutOutputCollector* collector_ = nullptr;
  std::optional<int64_t> max_pending_;
  std::string payload_;
  // "k0".."k{keys-1}" when keys <= kMaxKeyNames; empty: format per tuple.
  static constexpr int64_t kMaxKeyNames = 1 << 16;
  std::vector<std::string> key_names_;

  int64_t next_seq_ = 0;
  int64_t acked_ = 0;
  std::set<int64_t> replay_;  // ordered: lowest failed seq replays first
  absl::flat_hash_set<int64_t> in_flight_;

  // Rate schedule: emissions since `schedule_start_`, compared with what the
  // rate allows for the time elapsed since then.
  core::Clock::TimePoint schedule_start_{};
  int64_t emitted_since_start_ = 0;
};

}  // namespace tempest::spout

#endif  // TEMPEST_SPOUT_SEQUENCE_SPOUT_H_
