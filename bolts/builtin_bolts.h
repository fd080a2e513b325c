#ifndef TEMPEST_BOLTS_BUILTIN_BOLTS_H_
#define TEMPEST_BOLTS_BUILTIN_BOLTS_H_

#include "absl/status/status.h"
#include "common/api/component_registry.h"

namespace tempest::bolts {

// Registers the built-in bolts (tempest.IdentityBolt, tempest.VerifierBolt,
// tempest.SplitSentenceBolt, tempest.WordCountBolt, tempest.LogBolt,
// tempest.FileSinkBolt, tempest.KafkaBolt, tempest.ShellBolt and Storm's
// org.apache.storm.flux.wrappers.bolts.FluxShellBolt) into `registry`,
// skipping names already taken, so
// calling it twice is harmless. The same registrations run at static
// initialization into ComponentRegistry::Global() when the linker keeps
// builtin_bolts.o; a binary should call this (or LinkBuiltinBolts) once at
// start-up to be sure (the `tempest` commands do, with the spouts, through
// cli::RegisterBuiltins). Thread-safe (the registry is).
absl::Status RegisterBuiltinBolts(api::ComponentRegistry& registry);

// Does nothing; calling it makes the linker keep the static registrations.
void LinkBuiltinBolts();

}  // namespace tempest::bolts

#endif  // TEMPEST_BOLTS_BUILTIN_BOLTS_H_
