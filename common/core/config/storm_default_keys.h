#ifndef TEMPEST_COMMON_CORE_STORM_DEFAULT_KEYS_H_
#define TEMPEST_COMMON_CORE_STORM_DEFAULT_KEYS_H_

#include <span>
#include <string_view>

namespace tempest::core {

// The keys that Storm's conf/defaults.yaml defines in the 1.x and 2.x
// releases (names only) beyond those config_keys.cc lists. With those, every
// defaults.yaml key is known: Tempest reads it (config_keys.h) or accepts it
// without effect; it is never "unknown". Sorted.
std::span<const std::string_view> StormDefaultKeys();
bool IsStormDefaultKey(std::string_view key);

// Storm's own classes that a Flux file may use as a component bean
// (`org.apache.storm.tuple.Fields`): Tempest resolves them itself
// (flux_resolver.cc), they never need a plugin.
bool IsStormCoreClass(std::string_view class_name);

}  // namespace tempest::core

#endif  // TEMPEST_COMMON_CORE_STORM_DEFAULT_KEYS_H_
