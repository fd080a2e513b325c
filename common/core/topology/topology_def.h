#ifndef TEMPEST_COMMON_CORE_TOPOLOGY_DEF_H_
#define TEMPEST_COMMON_CORE_TOPOLOGY_DEF_H_

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/api/component_registry.h"
#include "common/api/config.h"
#include "common/api/ids.h"
#include "common/api/output_fields_declarer.h"

namespace tempest::core {

// Where a definition came from, for error messages ("topo.yaml:12").
struct SourceLocation {
  std::string file;
  int line = 0;  // 1-based; 0 = unknown
  // "file:line: " (or "file: " / "" when parts are unknown), the prefix of
  // every diagnostic about this definition.
  std::string Prefix() const;
};

enum class GroupingType {
  kShuffle,
  kFields,
  kAll,
  kGlobal,
  kNone,
  kDirect,
  kLocalOrShuffle,
  kPartialKey,
  kCustom,
};
// Flux spelling: SHUFFLE, FIELDS, ALL, GLOBAL, NONE, DIRECT, LOCAL_OR_SHUFFLE,
// PARTIAL_KEY (a Tempest extension; Storm spells it as CUSTOM), CUSTOM.
std::string_view GroupingTypeName(GroupingType type);
std::optional<GroupingType> ParseGroupingType(std::string_view flux_name);

// How a consumer subscribes to a stream.
struct GroupingDef {
  GroupingType type = GroupingType::kShuffle;
  std::vector<std::string> fields;  // kFields, kPartialKey
  api::ComponentArgs custom;        // kCustom: class name and its arguments
};

// A spout or bolt of a topology.
struct ComponentDef {
  enum class Kind { kSpout, kBolt };
  Kind kind = Kind::kBolt;
  api::ComponentId id;
  api::ComponentArgs args;  // class_name, constructor args, properties, ...
  int parallelism = 1;      // executors
  int num_tasks = -1;       // -1: same as parallelism
  api::Config config;       // per-component overrides
  SourceLocation location;

  int NumTasks() const { return num_tasks < 0 ? parallelism : num_tasks; }
  // Storm never runs more executors than tasks.
  int NumExecutors() const { return parallelism < NumTasks() ? parallelism : NumTasks(); }
  std::string_view KindName() const { return kind == Kind::kSpout ? "spout" : "bolt"; }
};

// One subscription: `to` consumes stream `stream` of `from`.
struct StreamDef {
  std::string name;  // informational (Flux `name`)
  api::ComponentId from;
  api::ComponentId to;
  api::StreamId stream = api::DefaultStreamId();
  GroupingDef grouping;
  SourceLocation location;
};

// Declared output streams of every component, as found by validation.
using ComponentStreams =
    std::map<api::ComponentId, std::map<api::StreamId, api::StreamDeclaration>>;

// The topology model: what a Flux file describes, independent of where it
// runs. A plain value (no threads, no I/O); build it with the Flux loader or
// by hand, check it with TopologyValidator.
struct TopologyDef {
  std::string name;
  api::Config config;
  std::vector<ComponentDef> spouts;
  std::vector<ComponentDef> bolts;
  std::vector<StreamDef> streams;
  SourceLocation location;  // the main file
  // Non-fatal findings of the loader (ignored keys, nested includes, ...).
  std::vector<std::string> warnings;

  // Spout or bolt by id (nullptr if none).
  const ComponentDef* FindComponent(const api::ComponentId& id) const;
  ComponentDef* FindMutableComponent(const api::ComponentId& id) {
    return const_cast<ComponentDef*>(FindComponent(id));
  }
  // Spouts then bolts.
  std::vector<const ComponentDef*> AllComponents() const;
};

}  // namespace tempest::core

#endif  // TEMPEST_COMMON_CORE_TOPOLOGY_DEF_H_
