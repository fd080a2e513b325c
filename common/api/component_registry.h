#ifndef TEMPEST_COMMON_API_COMPONENT_REGISTRY_H_
#define TEMPEST_COMMON_API_COMPONENT_REGISTRY_H_

#include <concepts>
#include <functional>
#include <initializer_list>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "common/api/api.h"
#include "common/api/basic_bolt.h"
#include "common/api/bolt.h"
#include "common/api/custom_stream_grouping.h"
#include "common/api/ids.h"
#include "common/api/spout.h"
#include "common/api/status_macros.h"
#include "common/api/value.h"

namespace tempest::api {

// What a component factory receives: the Flux definition of one spout, bolt
// or custom grouping, with every `ref`/`reflist` already resolved. A
// referenced Flux component (bean) arrives as a map Value:
//   {"id": .., "className": .., "constructorArgs": [..], "properties": {..},
//    "configMethods": [{"name": .., "args": [..]}]}
struct ComponentArgs {
  std::string class_name;
  ComponentId id;  // empty for custom groupings
  ValueList constructor_args;
  ValueMap properties;       // Flux `properties`, name -> value
  ValueList config_methods;  // each {"name": string, "args": list}

  // Property lookup; nullptr when absent.
  const Value* Property(std::string_view name) const;
  // Typed property reads with a default, erroring when present but of the
  // wrong type, so components can report bad configuration precisely.
  absl::StatusOr<int64_t> IntProperty(std::string_view name, int64_t default_value) const;
  absl::StatusOr<double> DoubleProperty(std::string_view name, double default_value) const;
  absl::StatusOr<bool> BoolProperty(std::string_view name, bool default_value) const;
  absl::StatusOr<std::string> StringProperty(std::string_view name,
                                             std::string_view default_value) const;

  // These args with Flux `constructorArgs` folded into named properties, so
  // a component can be configured either way: the i-th constructor arg
  // becomes property names[i]. InvalidArgument (naming the class) for more
  // args than names, or for a setting given both ways.
  absl::StatusOr<ComponentArgs> WithPositionalArgs(
      std::initializer_list<std::string_view> names) const;
};

// Maps class names (as written in Flux `className`) to factories of spouts,
// bolts and custom groupings. Thread-safe (a mutex); registration normally
// happens during static initialization of the program or of a plugin
// (TEMPEST_REGISTER_* below), lookups at topology build time.
//
// Construction through a factory must be free of side effects: the
// validator creates an instance of each component only to ask for its
// declared output streams.
//
// Static-library note: a registration in an object file nothing else
// references is dropped by the linker. Built-in component libraries must be
// linked whole (or expose a function the binary calls); plugins (shared
// libraries) run their registrations when dlopen'ed by core::PluginLoader.
class ComponentRegistry {
 public:
  enum class Kind { kSpout, kBolt, kGrouping };

  using SpoutFactory = std::function<absl::StatusOr<std::unique_ptr<Spout>>(const ComponentArgs&)>;
  using BoltFactory = std::function<absl::StatusOr<std::unique_ptr<Bolt>>(const ComponentArgs&)>;
  using GroupingFactory =
      std::function<absl::StatusOr<std::unique_ptr<CustomStreamGrouping>>(const ComponentArgs&)>;

  ComponentRegistry() = default;
  ComponentRegistry(const ComponentRegistry&) = delete;
  ComponentRegistry& operator=(const ComponentRegistry&) = delete;

  // The process-wide registry (never destroyed).
  static ComponentRegistry& Global();

  // AlreadyExists if `class_name` is taken (by any kind).
  absl::Status RegisterSpout(std::string_view class_name, SpoutFactory factory);
  absl::Status RegisterBolt(std::string_view class_name, BoltFactory factory);
  absl::Status RegisterGrouping(std::string_view class_name, GroupingFactory factory);

  std::optional<Kind> KindOf(std::string_view class_name) const;
  bool HasSpout(std::string_view class_name) const { return KindOf(class_name) == Kind::kSpout; }
  bool HasBolt(std::string_view class_name) const { return KindOf(class_name) == Kind::kBolt; }
  bool HasGrouping(std::string_view class_name) const {
    return KindOf(class_name) == Kind::kGrouping;
  }
  std::vector<std::string> ClassNames(Kind kind) const;

  // Creates an instance of args.class_name. NotFound for unknown names,
  // InvalidArgument for a name of another kind, the factory's error
  // otherwise (exceptions thrown by user constructors become Internal).
  absl::StatusOr<std::unique_ptr<Spout>> CreateSpout(const ComponentArgs& args) const;
  absl::StatusOr<std::unique_ptr<Bolt>> CreateBolt(const ComponentArgs& args) const;
  absl::StatusOr<std::unique_ptr<CustomStreamGrouping>> CreateGrouping(
      const ComponentArgs& args) const;

  // Copies every entry of `other` whose name is free here; names in `added`.
  // AlreadyExists (after copying the rest) if some name was taken.
  absl::Status MergeFrom(const ComponentRegistry& other, std::vector<std::string>* added);

  // Failures of static registrations (e.g. duplicate names), for the
  // runtime to log; registration macros cannot report them otherwise.
  void RecordRegistrationError(const absl::Status& status);
  std::vector<std::string> registration_errors() const;

 private:
  struct Entry {
    Kind kind;
    SpoutFactory spout;
    BoltFactory bolt;
    GroupingFactory grouping;
  };
  absl::Status Add(std::string_view class_name, Entry entry);
  absl::StatusOr<Entry> Lookup(std::string_view class_name, Kind kind) const;

  mutable absl::Mutex mu_;
  std::map<std::string, Entry, std::less<>> entries_ ABSL_GUARDED_BY(mu_);
  std::vector<std::string> registration_errors_ ABSL_GUARDED_BY(mu_);
};

// InvalidArgument naming the class when `args.properties` holds a name that
// is not in `known`, with the closest known name as a suggestion:
//   tempest.SequenceSpout: unknown property 'cuont' (did you mean 'count'?);
//   its properties are: count, rate, keys, payloadBytes, reliable
// A misspelt setting would otherwise fall back to its default in silence.
absl::Status CheckKnownProperties(const ComponentArgs& args,
                                  std::span<const std::string_view> known);

// The name of `candidates` closest to `name` by edit distance, if it is
// close enough to be a likely misspelling; nullopt otherwise.
std::optional<std::string> ClosestName(std::string_view name,
                                       std::span<const std::string_view> candidates);

namespace registry_internal {

// Builds T from ComponentArgs using, in order of preference:
//   static absl::StatusOr<std::unique_ptr<T>> T::Create(const ComponentArgs&)
//   T(const ComponentArgs&)
//   T()
// A T that lists its Flux properties, as
//   static constexpr std::string_view kPropertyNames[] = {"count", "rate"};
// (constructorArgs folded into named properties included), has every
// property of `args` checked against that list first (CheckKnownProperties).
// Built-in components all list theirs; a plugin component gets the same
// check by declaring the same member.
template <typename Base, typename T>
absl::StatusOr<std::unique_ptr<Base>> Make(const ComponentArgs& args) {
  if constexpr (requires { T::kPropertyNames; }) {
    TEMPEST_RETURN_IF_ERROR(CheckKnownProperties(
        args, std::span<const std::string_view>(std::begin(T::kPropertyNames),
                                                std::end(T::kPropertyNames))));
  }
  if constexpr (requires { T::Create(args); }) {
    TEMPEST_ASSIGN_OR_RETURN(std::unique_ptr<T> made, T::Create(args));
    return std::unique_ptr<Base>(std::move(made));
  } else if constexpr (std::is_constructible_v<T, const ComponentArgs&>) {
    return std::unique_ptr<Base>(std::make_unique<T>(args));
  } else {
    return std::unique_ptr<Base>(std::make_unique<T>());
  }
}

template <typename T>
absl::StatusOr<std::unique_ptr<Bolt>> MakeBasic(const ComponentArgs& args) {
  TEMPEST_ASSIGN_OR_RETURN(std::unique_ptr<BasicBolt> basic, (Make<BasicBolt, T>(args)));
  return std::unique_ptr<Bolt>(std::make_unique<BasicBoltRunner>(std::move(basic)));
}

inline bool Record(const absl::Status& status) {
  if (!status.ok()) ComponentRegistry::Global().RecordRegistrationError(status);
  return status.ok();
}

}  // namespace registry_internal
}  // namespace tempest::api

#define TEMPEST_REGISTRY_CONCAT_INNER(a, b) a##b
#define TEMPEST_REGISTRY_CONCAT(a, b) TEMPEST_REGISTRY_CONCAT_INNER(a, b)

// Registers a Spout subclass under a Flux class name at static-init time:
//   TEMPEST_REGISTER_SPOUT("tempest.SequenceSpout", SequenceSpout);
#define TEMPEST_REGISTER_SPOUT(class_name, Type)                                                 \
  [[maybe_unused]] static const bool TEMPEST_REGISTRY_CONCAT(tempest_registered_, __COUNTER__) = \
      ::tempest::api::registry_internal::Record(                                                 \
          ::tempest::api::ComponentRegistry::Global().RegisterSpout(                             \
              class_name, &::tempest::api::registry_internal::Make<::tempest::api::Spout, Type>))

// Registers a Bolt subclass.
#define TEMPEST_REGISTER_BOLT(class_name, Type)                                                  \
  [[maybe_unused]] static const bool TEMPEST_REGISTRY_CONCAT(tempest_registered_, __COUNTER__) = \
      ::tempest::api::registry_internal::Record(                                                 \
          ::tempest::api::ComponentRegistry::Global().RegisterBolt(                              \
              class_name, &::tempest::api::registry_internal::Make<::tempest::api::Bolt, Type>))

// Registers a BasicBolt subclass; instances run inside a BasicBoltRunner.
#define TEMPEST_REGISTER_BASIC_BOLT(class_name, Type)                                            \
  [[maybe_unused]] static const bool TEMPEST_REGISTRY_CONCAT(tempest_registered_, __COUNTER__) = \
      ::tempest::api::registry_internal::Record(                                                 \
          ::tempest::api::ComponentRegistry::Global().RegisterBolt(                              \
              class_name, &::tempest::api::registry_internal::MakeBasic<Type>))

// Registers a CustomStreamGrouping subclass.
#define TEMPEST_REGISTER_GROUPING(class_name, Type)                                              \
  [[maybe_unused]] static const bool TEMPEST_REGISTRY_CONCAT(tempest_registered_, __COUNTER__) = \
      ::tempest::api::registry_internal::Record(                                                 \
          ::tempest::api::ComponentRegistry::Global().RegisterGrouping(                          \
              class_name,                                                                        \
              &::tempest::api::registry_internal::Make<::tempest::api::CustomStreamGrouping,     \
                                                       Type>))

// Marks a shared library as a Tempest plugin; write it once in one .cc of
// the plugin. core::PluginLoader looks these symbols up after dlopen to check
// the API version and to copy the plugin's registrations into the host's
// registry (a plugin linking its own copy of tempest::api registers into
// that copy's Global()).
#define TEMPEST_PLUGIN()                                                               \
  extern "C" __attribute__((visibility("default"))) int tempest_plugin_api_version() { \
    return ::tempest::api::kApiVersion;                                                \
  }                                                                                    \
  extern "C" __attribute__((visibility("default"))) void* tempest_plugin_registry() {  \
    return &::tempest::api::ComponentRegistry::Global();                               \
  }

#endif  // TEMPEST_COMMON_API_COMPONENT_REGISTRY_H_
