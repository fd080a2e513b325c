#ifndef TEMPEST_WORKER_ENVELOPE_CODEC_H_
#define TEMPEST_WORKER_ENVELOPE_CODEC_H_

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "common/api/tuple.h"
#include "common/core/topology/task_layout.h"
#include "common/core/topology/topology_def.h"
#include "worker/envelope.h"

namespace tempest::worker {

// The wire form of an Envelope between workers of one topology (the bytes of
// one net::Message; the destination task travels in the message header, not
// here). Both ends load the same topology, so a tuple carries no schema: it
// names its source task and the index of its stream among the source
// component's declared streams (sorted by id), and the receiver resolves the
// interned StreamSchema from its own tables.
//
// Layout (integers LEB128 varints unless noted, u64 little-endian fixed):
//   kind u8 (MessageKind)
//   tuple:  source_task, stream_index, anchor_count, anchor_count × (root u64,
//           edge u64), value_count, values
//   ack:    root u64, value u64, spout_task
//   value:  tag u8: 0 nil, 1 false, 2 true, 3 int (zigzag varint), 4 double
//           (8 bytes), 5 string (len, bytes), 6 bytes (len, bytes),
//           7 list (count, values), 8 map (count, count × (key len, key, value))
//
// Decode treats its input as untrusted: truncation, an unknown kind or tag,
// an unknown source task or stream, a value count that does not match the
// stream's fields, nesting deeper than kMaxDepth, lengths or counts beyond
// the buffer, or trailing bytes yield InvalidArgument; it never reads out of
// bounds and never allocates more than the input can justify.
//
// Immutable after Create; any thread.
class EnvelopeCodec {
 public:
  static constexpr int kMaxDepth = 32;

  // Tables for every component of `layout` (including the acker, which
  // declares no streams) from the validated `streams`.
  static absl::StatusOr<std::unique_ptr<EnvelopeCodec>> Create(
      const core::TaskLayout& layout, const core::ComponentStreams& streams);

  // Appends the encoding of `e` (its `task` is not encoded) to `out`.
  // InvalidArgument for a tuple whose (component, stream) is not declared or
  // whose source task is not in the layout (e.g. a tick tuple).
  absl::Status Encode(const Envelope& e, std::string& out) const;
  // Appends the encoding of a data tuple given by its parts, as Encode
  // would for an Envelope holding api::Tuple(schema, source, values,
  // anchors): a sender to another worker need not build the tuple.
  absl::Status EncodeTuple(const api::StreamSchema& schema, int32_t source,
                           const api::TupleAnchors& anchors, const api::Values& values,
                           std::string& out) const;

  // Decodes `bytes` into `out` (which should be a fresh Envelope), setting
  // out.task = `task`.
  absl::Status Decode(std::string_view bytes, int32_t task, Envelope& out) const;

 private:
  EnvelopeCodec() = default;

  // The index of `schema`'s stream among its component's declared streams,
  // for a tuple whose schema was not interned (tests).
  absl::StatusOr<uint32_t> StreamIndexByName(const api::StreamSchema& schema) const;

  struct StreamEntry {
    std::shared_ptr<const api::StreamSchema> schema;
  };
  // Index: task id; the declared streams of the task's component (by id).
  std::vector<const std::vector<StreamEntry>*> streams_by_task_;
  std::vector<std::unique_ptr<std::vector<StreamEntry>>> component_streams_;
  // Interned schema pointer -> stream index (the fast path of Encode).
  absl::flat_hash_map<const api::StreamSchema*, uint32_t> index_by_schema_;
  // (component, stream) -> stream index, for tuples built with a schema
  // that was not interned (tests).
  absl::flat_hash_map<std::string, uint32_t> index_by_name_;
};

}  // namespace tempest::worker

#endif  // TEMPEST_WORKER_ENVELOPE_CODEC_H_
