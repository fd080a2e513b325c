#ifndef TEMPEST_COMMON_CORE_CONFIG_KEYS_H_
#define TEMPEST_COMMON_CORE_CONFIG_KEYS_H_

#include <span>
#include <string_view>

namespace tempest::core {

// A configuration key that some part of Tempest reads, and which part.
struct ConfigKeyReader {
  std::string_view key;
  std::string_view read_by;  // e.g. "nimbus (REST API and UI port)"
};

// Every Storm-style configuration key Tempest reads, in one table: what
// `tempest migrate check` calls "takes effect" is exactly this (plus every
// `tempest.` key). Storm keys that ConfigLoader accepts but nothing reads
// are "accepted, no effect". tests/unit/core/config_keys_test.cc scans the
// sources, so a key read in code cannot be missing here, and a key listed
// here must be read somewhere.
std::span<const ConfigKeyReader> KeysTempestReads();

// Whether `key` takes effect: listed above, or a `tempest.` key.
bool TempestReadsKey(std::string_view key);

// Whether ConfigLoader accepts `key` without an "unknown config key"
// warning: it takes effect, or it is one of the Storm keys a storm.yaml
// commonly sets (listed next to the keys read, in config_keys.cc).
bool TempestAcceptsKey(std::string_view key);

}  // namespace tempest::core

#endif  // TEMPEST_COMMON_CORE_CONFIG_KEYS_H_
