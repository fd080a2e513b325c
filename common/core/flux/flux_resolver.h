#ifndef TEMPEST_COMMON_CORE_FLUX_RESOLVER_H_
#define TEMPEST_COMMON_CORE_FLUX_RESOLVER_H_

// Flux reference resolution: `{ref: id}` / `{reflist: [...]}` become the
// referenced components' values, and the merged raw definitions become the
// spouts, bolts and streams of a TopologyDef. Internal to FluxLoader; pure;
// any thread.

#include "common/core/flux/flux_raw_model.h"
#include "common/core/topology/topology_def.h"

namespace tempest::core::flux_internal {

// Appends the spouts, bolts and streams of `merged` (a file with its
// includes merged in) to `def`, with references resolved (a component may
// reference only components declared before it; spouts, bolts and custom
// groupings any component) and Storm's PartialKeyGrouping class mapped to
// PARTIAL_KEY. Problems go to `diag`.
void ResolveComponents(RawFile& merged, Diagnostics& diag, TopologyDef& def);

}  // namespace tempest::core::flux_internal

#endif  // TEMPEST_COMMON_CORE_FLUX_RESOLVER_H_
