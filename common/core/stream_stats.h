#ifndef TEMPEST_COMMON_CORE_STREAM_STATS_H_
#define TEMPEST_COMMON_CORE_STREAM_STATS_H_

#include <string>

#include "google/protobuf/repeated_ptr_field.h"
#include "tempest/v1/cluster.pb.h"

namespace tempest::core {

// Arithmetic on Storm's executor statistics (v1::ExecutorStats and its
// per-stream v1::StreamStats), shared by the worker that counts them across
// its restarts and nimbus, which keeps windows of them. Pure.

// The entry of (component, stream) in `streams`, appended (zero) if absent.
v1::StreamStats& StreamStatsOf(google::protobuf::RepeatedPtrField<v1::StreamStats>& streams,
                               const std::string& component, const std::string& stream);

// to += from, every count and latency sum.
void AddStreamCounts(const v1::StreamStats& from, v1::StreamStats& to);
// to -= base, every count and latency sum; a count smaller than its base
// (the counter started again) is left as it is.
void SubtractStreamCounts(const v1::StreamStats& base, v1::StreamStats& to);

// Adds `from`'s output and input streams into `to`'s, stream by stream.
void AddExecutorStreams(const v1::ExecutorStats& from, v1::ExecutorStats& to);
// Subtracts `base`'s streams from `to`'s streams of the same name.
void SubtractExecutorStreams(const v1::ExecutorStats& base, v1::ExecutorStats& to);

}  // namespace tempest::core

#endif  // TEMPEST_COMMON_CORE_STREAM_STATS_H_
