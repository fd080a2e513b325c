#ifndef TEMPEST_SPOUT_BUILTIN_SPOUTS_H_
#define TEMPEST_SPOUT_BUILTIN_SPOUTS_H_

#include "absl/status/status.h"
#include "common/api/component_registry.h"

namespace tempest::spout {

// Registers the built-in spouts (tempest.SequenceSpout, tempest.LineSpout,
// tempest.KafkaSpout and org.apache.storm.kafka.KafkaSpout)
// into `registry`, skipping names it already holds, so calling it twice is
// harmless. The same registrations also run at static initialization into
// ComponentRegistry::Global(), but only if the linker keeps builtin_spouts.o:
// a binary that wants the built-ins in the global registry should call this
// (or LinkBuiltinSpouts) once at start-up. Thread-safe (the registry is).
absl::Status RegisterBuiltinSpouts(api::ComponentRegistry& registry);

// Does nothing; calling it makes the linker keep the static registrations.
void LinkBuiltinSpouts();

}  // namespace tempest::spout

#endif  // TEMPEST_SPOUT_BUILTIN_SPOUTS_H_
