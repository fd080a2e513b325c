// Fuzzes the envelope decoder (the bytes of one transport message between
// workers) for a small topology: a spout with two streams and a bolt. The
// first byte picks the receiving task; the rest is the message. A decoded
// envelope is encoded again and must decode to the same bytes.

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <string>
#include <string_view>

#include "common/core/flux/flux_loader.h"
#include "common/core/topology/task_layout.h"
#include "worker/envelope.h"
#include "worker/envelope_codec.h"

namespace {

namespace api = tempest::api;
namespace core = tempest::core;
using tempest::worker::Envelope;
using tempest::worker::EnvelopeCodec;

constexpr char kTopology[] = R"(name: fuzz
spouts:
  - id: spout
    className: x.Spout
    parallelism: 2
bolts:
  - id: bolt
    className: x.Bolt
    parallelism: 3
streams:
  - from: spout
    to: bolt
    grouping: {type: SHUFFLE}
)";

struct Codec {
  core::TaskLayout layout;
  std::unique_ptr<EnvelopeCodec> codec;
};

const Codec& TheCodec() {
  static const Codec* codec = [] {
    auto* c = new Codec;
    core::TopologyDef def = core::FluxLoader().LoadString(kTopology, "fuzz.yaml").value();
    c->layout = core::TaskLayout::Create(def, 1).value();
    core::ComponentStreams streams;
    streams[api::ComponentId("spout")][api::StreamId("default")] =
        api::StreamDeclaration{api::Fields({"seq", "key", "payload"}), false};
    streams[api::ComponentId("spout")][api::StreamId("side")] =
        api::StreamDeclaration{api::Fields({"v"}), false};
    streams[api::ComponentId("bolt")][api::StreamId("default")] =
        api::StreamDeclaration{api::Fields({"a", "b"}), false};
    c->codec = EnvelopeCodec::Create(c->layout, streams).value();
    return c;
  }();
  return *codec;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const EnvelopeCodec& codec = *TheCodec().codec;
  const int32_t task = static_cast<int32_t>(data[0] % 8) - 1;  // includes unknown tasks
  const std::string_view bytes(reinterpret_cast<const char*>(data) + 1, size - 1);

  Envelope envelope;
  if (!codec.Decode(bytes, task, envelope).ok()) return 0;
  std::string encoded;
  if (!codec.Encode(envelope, encoded).ok()) std::abort();  // decoded, so it is encodable
  Envelope again;
  std::string reencoded;
  if (!codec.Decode(encoded, task, again).ok() || !codec.Encode(again, reencoded).ok() ||
      reencoded != encoded) {
    std::abort();
  }
  return 0;
}
