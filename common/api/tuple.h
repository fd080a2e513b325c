#ifndef TEMPEST_COMMON_API_TUPLE_H_
#define TEMPEST_COMMON_API_TUPLE_H_

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <utility>

#include "absl/container/inlined_vector.h"
#include "common/api/fields.h"
#include "common/api/ids.h"
#include "common/api/value.h"

namespace tempest::api {

// Where the tuples of one output stream come from: the emitting component,
// the stream id and its declared fields. The runtime creates one per
// (component, stream) and every tuple on that stream shares it. Immutable.
struct StreamSchema {
  ComponentId component;
  StreamId stream;
  Fields fields;
};

// One entry of a tuple's acking metadata (Storm's MessageId map): the spout
// tree `root` and the XOR of the edge ids this tuple carries for that tree.
struct TupleAnchor {
  RootId root;
  EdgeId edge;
  friend bool operator==(const TupleAnchor&, const TupleAnchor&) = default;
};
// Most tuples belong to exactly one tree.
using TupleAnchors = absl::InlinedVector<TupleAnchor, 1>;

// The read side of a tuple as handed to Bolt::Execute. A Tuple is a handle:
// copying it shares the same body (one atomic increment), so a bolt may keep
// a copy and ack it later; values are immutable once constructed.
//
// Thread: a tuple is created by one executor and may be read from several,
// but the acking state (ack_val) is only touched by the executor that owns
// the receiving task, through its OutputCollector.
//
//   const std::string& word = input.GetString(0);
//   int64_t n = input.GetByField("count").AsInt();
class Tuple {
 public:
  Tuple() = default;  // An empty handle; valid() is false.
  Tuple(std::shared_ptr<const StreamSchema> schema, TaskId source_task, Values values,
        TupleAnchors anchors = {});

  // The tick tuple the runtime delivers every `freq_secs` (component
  // "__system", stream "__tick", task -1, one value: the frequency).
  static Tuple MakeTick(int64_t freq_secs);

  bool valid() const { return body_ != nullptr; }

  int size() const { return static_cast<int>(body_->values.size()); }
  const Values& values() const { return body_->values; }
  const Value& Get(int index) const { return body_->values[index]; }
  // Typed shortcuts; the value must have that type (see Value::As*).
  const std::string& GetString(int index) const { return Get(index).AsString(); }
  int64_t GetInt(int index) const { return Get(index).AsInt(); }
  double GetDouble(int index) const { return Get(index).AsDouble(); }
  bool GetBool(int index) const { return Get(index).AsBool(); }
  const std::string& GetBytes(int index) const { return Get(index).AsBytes(); }

  // By field name: Find returns nullptr for an unknown field; GetByField
  // treats an unknown field as a programming error and aborts.
  const Value* Find(std::string_view field) const;
  const Value& GetByField(std::string_view field) const;
  bool Contains(std::string_view field) const { return fields().Contains(field); }

  const Fields& fields() const { return body_->schema->fields; }
  const ComponentId& source_component() const { return body_->schema->component; }
  const StreamId& source_stream() const { return body_->schema->stream; }
  TaskId source_task() const { return body_->source_task; }
  const std::shared_ptr<const StreamSchema>& schema() const { return body_->schema; }
  // Every bolt asks this of every input: the task id settles it for all but
  // the rare tuple from the system task, without touching the schema.
  bool IsTick() const { return source_task().value() == kSystemTaskId && IsTickSchema(); }

  // Runtime-only acking metadata (opaque to components): the trees this
  // tuple belongs to, and the XOR of edge ids of tuples anchored to it.
  const TupleAnchors& anchors() const { return body_->anchors; }
  uint64_t ack_val() const { return body_->ack_val; }
  void XorAckVal(uint64_t edge) const { body_->ack_val ^= edge; }

  // Runtime only: a spout's tuple for a task in its own worker may carry its
  // tree's ack-init (the XOR of the tree's edges, folded into ack_val, and
  // the spout task to answer), so the receiving bolt's ack tells the acker
  // both at once: one acking message per tree instead of two. -1 when the
  // tuple carries none.
  int32_t carried_init_task() const { return body_->carried_init_task; }
  void CarryInit(uint64_t xor_of_edges, int32_t spout_task) const {
    body_->ack_val ^= xor_of_edges;
    body_->carried_init_task = spout_task;
  }
  // The carried init was handed on: forget it and the XOR sent with it.
  void ClearCarriedInit() const {
    body_->ack_val = 0;
    body_->carried_init_task = -1;
  }

  // "spout:default@3 [1, \"a\"]" for logs.
  std::string DebugString() const;

 private:
  bool IsTickSchema() const;

  struct Body {
    Body(std::shared_ptr<const StreamSchema>&& s, TaskId task, Values&& v, TupleAnchors&& a)
        : schema(std::move(s)), source_task(task), values(std::move(v)) {
      // Untracked tuples (the common case) have none: skip the move, which
      // also keeps GCC from warning about an empty vector's unset storage.
      if (!a.empty()) anchors = std::move(a);
    }
    std::shared_ptr<const StreamSchema> schema;
    TaskId source_task;
    int32_t carried_init_task = -1;  // in source_task's padding: no size change
    Values values;
    TupleAnchors anchors;
    uint64_t ack_val = 0;
  };
  std::shared_ptr<Body> body_;
};

// Inline, as every emit builds one: the by-value arguments are then moved
// straight into the body, which is built in place (one allocation).
inline Tuple::Tuple(std::shared_ptr<const StreamSchema> schema, TaskId source_task, Values values,
                    TupleAnchors anchors)
    : body_(std::make_shared<Body>(std::move(schema), source_task, std::move(values),
                                   std::move(anchors))) {}

}  // namespace tempest::api

#endif  // TEMPEST_COMMON_API_TUPLE_H_
