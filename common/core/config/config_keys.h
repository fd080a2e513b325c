#ifndef TEMPEST_COMMON_CORE_CONFIG_KEYS_H_
#define TEMPEST_COMMON_CORE_CONFIG_KEYS_H_

#include <cstdint>
#include <optional>
#include <span>
#include <string_view>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "common/api/config.h"
#include "common/api/value.h"

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

// The values an integer key may take: every key listed in config_keys.cc's
// range table is an integer from `min` to `max` (or a list of them), null
// allowed only where Storm's default is null.
struct ConfigKeyRange {
  std::string_view key;
  int64_t min;
  int64_t max;
  bool nullable = false;
  bool list = false;  // a list of such integers (supervisor.slots.ports)
};

// The range of `key`, if it has one.
std::optional<ConfigKeyRange> RangeOfKey(std::string_view key);

// OK, or InvalidArgument "config KEY must be ..., got VALUE" when `key` has
// a range and `value` is outside it (not an integer, out of range, a
// fraction, an unexpected null), or `key` is one of the keys that decide who
// may do what (tempest.api.*, nimbus.authorizer, storm.zookeeper.auth.*,
// supervisor.worker.user, tempest.zookeeper.offsets.world.readable, ...) and
// `value` is not of its kind: a boolean key takes only a YAML boolean
// (true/false; YAML 1.1's yes/no/on/off as the loader resolves them) or the
// string "true"/"false", never 1, 0, null or another word; a string key takes
// a string or null (unset). The secret storm.zookeeper.auth.payload is never
// quoted. Other keys are always OK.
absl::Status CheckConfigValue(std::string_view key, const api::Value& value);

// The boolean `key` of `config`, as strictly as CheckConfigValue checks it:
// `default_value` when absent (or null, where null is allowed), else
// InvalidArgument naming the key and the value. For settings that must not
// fall back to a default on a typo, which Config::GetBool would do.
absl::StatusOr<bool> ConfigBool(const api::Config& config, std::string_view key,
                                bool default_value);

}  // namespace tempest::core

#endif  // TEMPEST_COMMON_CORE_CONFIG_KEYS_H_
