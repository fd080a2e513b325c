// Fuzzes the readers of protobuf payloads that other processes wrote: the
// stored topology ({root}/storms/{id}: a StormBase whose Flux text and
// overrides are loaded again), a topology's resources (paths that must
// never climb out of the worker's folder), a worker's heartbeat file and its
// launch record. The first byte picks the reader; the rest is the payload.

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "common/core/flux/stored_topology.h"
#include "common/core/topology/topology_resources.h"
#include "supervisor/worker_files.h"
#include "tempest/v1/cluster.pb.h"

namespace {

void ReadStormBase(std::string_view bytes) {
  tempest::v1::StormBase base;
  if (!base.ParseFromArray(bytes.data(), static_cast<int>(bytes.size()))) return;
  (void)tempest::core::LoadStoredTopology(base);
}

void ReadResources(std::string_view bytes) {
  tempest::v1::TopologyResources resources;
  if (!resources.ParseFromArray(bytes.data(), static_cast<int>(bytes.size()))) return;
  (void)tempest::core::ValidateResources(resources);
}

void ReadHeartbeat(std::string_view bytes) {
  absl::StatusOr<tempest::v1::WorkerHeartbeat> beat = tempest::supervisor::ParseWorkerHeartbeat(bytes);
  if (beat.ok()) (void)tempest::supervisor::HeartbeatBelongsTo(*beat, "topo-1", 6700, 42);
}

void ReadWorkerFiles(std::string_view bytes) {
  absl::StatusOr<tempest::supervisor::WorkerLaunchRecord> record =
      tempest::supervisor::ParseWorkerJson(bytes);
  if (record.ok()) (void)tempest::supervisor::EncodeWorkerJson(*record);
  (void)tempest::supervisor::ValidateSupervisorId(bytes);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const std::string_view bytes(reinterpret_cast<const char*>(data) + 1, size - 1);
  switch (data[0] % 4) {
    case 0: ReadStormBase(bytes); break;
    case 1: ReadResources(bytes); break;
    case 2: ReadHeartbeat(bytes); break;
    default: ReadWorkerFiles(bytes); break;
  }
  return 0;
}
