#ifndef TEMPEST_WORKER_SCHEMA_INTERNER_H_
#define TEMPEST_WORKER_SCHEMA_INTERNER_H_

#include <memory>

#include "common/api/fields.h"
#include "common/api/ids.h"
#include "common/api/tuple.h"

namespace tempest::worker {

// Returns the process-lifetime StreamSchema for (component, stream, fields).
//
// Why: every Tuple holds a shared_ptr to its schema. A normally owned
// shared_ptr costs an atomic increment when the producer builds the tuple and
// an atomic decrement when the consumer drops it, on one cache line shared by
// both threads: a cross-core line transfer per tuple. Interned schemas are
// never freed, so the returned pointer aliases an empty owner (no control
// block) and copying it touches no shared memory. Tuples therefore stay valid
// even after the LocalCluster that produced them is gone (test captures rely
// on that). The number of distinct schemas in a process is small.
//
// Thread-safe (a mutex); call at set-up time, not per tuple.
std::shared_ptr<const api::StreamSchema> InternSchema(const api::ComponentId& component,
                                                      const api::StreamId& stream,
                                                      const api::Fields& fields);

}  // namespace tempest::worker

#endif  // TEMPEST_WORKER_SCHEMA_INTERNER_H_
