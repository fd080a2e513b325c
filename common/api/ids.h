#ifndef TEMPEST_COMMON_API_IDS_H_
#define TEMPEST_COMMON_API_IDS_H_

#include <compare>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <ostream>
#include <string>
#include <string_view>
#include <utility>

namespace tempest::api {

// A value of type T that only compares and converts with values of the same
// Tag, so a task id cannot be passed where a port or a count is expected.
// Plain value type: no ownership beyond T, usable from any thread.
//
//   TaskId t(3);  int32_t raw = t.value();
template <typename Tag, typename T>
class StrongId {
 public:
  using ValueType = T;

  StrongId() = default;
  explicit StrongId(T value) : value_(std::move(value)) {}

  const T& value() const { return value_; }

  friend bool operator==(const StrongId&, const StrongId&) = default;
  friend auto operator<=>(const StrongId&, const StrongId&) = default;

  template <typename H>
  friend H AbslHashValue(H h, const StrongId& id) {
    return H::combine(std::move(h), id.value_);
  }

  friend std::ostream& operator<<(std::ostream& os, const StrongId& id) { return os << id.value_; }

 private:
  T value_{};
};

// Storm-style task id: positive for user and acker tasks, -1 for the system
// task that sources tick tuples.
using TaskId = StrongId<struct TaskIdTag, int32_t>;
// Component id as written in Flux (`spouts[].id`, `bolts[].id`).
using ComponentId = StrongId<struct ComponentIdTag, std::string>;
// Stream id; a component's unnamed output is the stream "default".
using StreamId = StrongId<struct StreamIdTag, std::string>;
// Topology id as assigned by nimbus: "{name}-{counter}-{secs}".
using TopologyId = StrongId<struct TopologyIdTag, std::string>;
// Acking: the random 64-bit id of a spout tuple tree and of one tree edge.
using RootId = StrongId<struct RootIdTag, uint64_t>;
using EdgeId = StrongId<struct EdgeIdTag, uint64_t>;

inline constexpr std::string_view kDefaultStreamName = "default";
inline constexpr std::string_view kSystemComponentName = "__system";
inline constexpr std::string_view kAckerComponentName = "__acker";
inline constexpr std::string_view kTickStreamName = "__tick";
inline constexpr int32_t kSystemTaskId = -1;

// The "default" stream id (a process-lifetime singleton, never destroyed).
const StreamId& DefaultStreamId();

}  // namespace tempest::api

template <typename Tag, typename T>
struct std::hash<tempest::api::StrongId<Tag, T>> {
  size_t operator()(const tempest::api::StrongId<Tag, T>& id) const {
    return std::hash<T>()(id.value());
  }
};

#endif  // TEMPEST_COMMON_API_IDS_H_
