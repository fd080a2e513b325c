#include "spout/builtin_spouts.h"

#include "spout/kafka/kafka_spout.h"
#include "spout/line_spout.h"
#include "spout/sequence_spout.h"
#include "spout/shell_spout.h"
#include "spout/test_word_spout.h"

namespace tempest::spout {

absl::Status RegisterBuiltinSpouts(api::ComponentRegistry& registry) {
  using api::registry_internal::Make;
  // AlreadyExists means an earlier call (or the static registration) won.
  for (absl::Status s :
       {registry.RegisterSpout("tempest.SequenceSpout", &Make<api::Spout, SequenceSpout>),
        registry.RegisterSpout("tempest.LineSpout", &Make<api::Spout, LineSpout>),
        // Storm's own test spout, so Storm's example Flux files run unchanged.
        registry.RegisterSpout("org.apache.storm.testing.TestWordSpout",
                               &Make<api::Spout, TestWordSpout>),
        registry.RegisterSpout("tempest.ShellSpout", &Make<api::Spout, ShellSpout>),
        registry.RegisterSpout(kFluxShellSpoutClass, &Make<api::Spout, ShellSpout>)}) {
    if (!s.ok() && !absl::IsAlreadyExists(s)) return s;
  }
  // tempest.KafkaSpout and org.apache.storm.kafka.KafkaSpout.
  return RegisterKafkaSpout(registry);
}

void LinkBuiltinSpouts() {}

TEMPEST_REGISTER_SPOUT("tempest.SequenceSpout", SequenceSpout);
TEMPEST_REGISTER_SPOUT("tempest.LineSpout", LineSpout);
TEMPEST_REGISTER_SPOUT("org.apache.storm.testing.TestWordSpout", TestWordSpout);
TEMPEST_REGISTER_SPOUT("tempest.ShellSpout", ShellSpout);
TEMPEST_REGISTER_SPOUT("org.apache.storm.flux.wrappers.spouts.FluxShellSpout", ShellSpout);

}  // namespace tempest::spout
