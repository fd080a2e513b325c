#ifndef TEMPEST_WORKER_ENVELOPE_H_
#define TEMPEST_WORKER_ENVELOPE_H_

#include <cstdint>

#include "common/api/tuple.h"

namespace tempest::worker {

// What an Envelope carries. Acking traffic is not made of Tuples (as it is
// in Storm) because the acker only needs two 64-bit words and a task id:
// building a Tuple per ack would cost two heap allocations on the hottest
// control path.
enum class MessageKind : uint8_t {
  kTuple,       // data: deliver `tuple` to `task`
  kAckInit,     // spout -> acker `__ack_init`: root, value = xor of edge ids, spout_task
  kAckAck,      // bolt -> acker `__ack_ack`: root, value = edge xor ack_val
  kAckFail,     // bolt -> acker `__ack_fail`: root
  kAckReset,    // bolt -> acker `__ack_reset_timeout`: root
  kSpoutAck,    // acker -> spout task `task` (direct): tree `root` completed
  kSpoutFail,   // acker -> spout task: tree `root` failed
  kSpoutReset,  // acker -> spout task: restart the timeout of `root`
  // Worker -> spout task `task`, never on the wire (EnvelopeCodec refuses
  // it): another worker was lost, fail every pending tree now (PeerLossWatch).
  kSpoutFailAll,
};

// One item of an executor receive queue or ack lane: a tuple for a task, or
// one acking message. A plain movable value (48 bytes); the Tuple inside is a
// shared handle, so moving an Envelope never copies tuple values.
struct Envelope {
  api::Tuple tuple;
  uint64_t root = 0;
  uint64_t value = 0;
  int32_t task = 0;        // receiving task
  int32_t spout_task = 0;  // kAckInit: the spout task to answer
  MessageKind kind = MessageKind::kTuple;
};

}  // namespace tempest::worker

#endif  // TEMPEST_WORKER_ENVELOPE_H_
