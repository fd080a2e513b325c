#include "bolts/builtin_bolts.h"

#include "bolts/file_sink_bolt.h"
#include "bolts/identity_bolt.h"
#include "bolts/kafka_bolt.h"
#include "bolts/log_bolt.h"
#include "bolts/shell_bolt.h"
#include "bolts/split_sentence_bolt.h"
#include "bolts/test_word_counter_bolt.h"
#include "bolts/verifier_bolt.h"
#include "bolts/word_count_bolt.h"

namespace tempest::bolts {

absl::Status RegisterBuiltinBolts(api::ComponentRegistry& registry) {
  using api::Bolt;
  using api::registry_internal::Make;
  using api::registry_internal::MakeBasic;
  // AlreadyExists means an earlier call (or the static registration) won.
  for (absl::Status s : {
           registry.RegisterBolt("tempest.IdentityBolt", &Make<Bolt, IdentityBolt>),
           registry.RegisterBolt("tempest.VerifierBolt", &Make<Bolt, VerifierBolt>),
           registry.RegisterBolt("tempest.SplitSentenceBolt", &MakeBasic<SplitSentenceBolt>),
           registry.RegisterBolt("tempest.WordCountBolt", &Make<Bolt, WordCountBolt>),
           registry.RegisterBolt("tempest.LogBolt", &MakeBasic<LogBolt>),
           registry.RegisterBolt("tempest.FileSinkBolt", &Make<Bolt, FileSinkBolt>),
           registry.RegisterBolt("tempest.KafkaBolt", &Make<Bolt, KafkaBolt>),
           // Storm's own classes, so Storm's example Flux files run unchanged.
           registry.RegisterBolt("org.apache.storm.testing.TestWordCounter",
                                 &MakeBasic<TestWordCounterBolt>),
           registry.RegisterBolt("org.apache.storm.flux.wrappers.bolts.LogInfoBolt",
                                 &MakeBasic<LogBolt>),
           registry.RegisterBolt("tempest.ShellBolt", &Make<Bolt, ShellBolt>),
           registry.RegisterBolt(kFluxShellBoltClass, &Make<Bolt, ShellBolt>),
       }) {
    if (!s.ok() && !absl::IsAlreadyExists(s)) return s;
  }
  return absl::OkStatus();
}

void LinkBuiltinBolts() {}

TEMPEST_REGISTER_BOLT("tempest.IdentityBolt", IdentityBolt);
TEMPEST_REGISTER_BOLT("tempest.VerifierBolt", VerifierBolt);
TEMPEST_REGISTER_BASIC_BOLT("tempest.SplitSentenceBolt", SplitSentenceBolt);
TEMPEST_REGISTER_BOLT("tempest.WordCountBolt", WordCountBolt);
TEMPEST_REGISTER_BASIC_BOLT("tempest.LogBolt", LogBolt);
TEMPEST_REGISTER_BOLT("tempest.FileSinkBolt", FileSinkBolt);
TEMPEST_REGISTER_BOLT("tempest.KafkaBolt", KafkaBolt);
TEMPEST_REGISTER_BASIC_BOLT("org.apache.storm.testing.TestWordCounter", TestWordCounterBolt);
TEMPEST_REGISTER_BASIC_BOLT("org.apache.storm.flux.wrappers.bolts.LogInfoBolt", LogBolt);
TEMPEST_REGISTER_BOLT("tempest.ShellBolt", ShellBolt);
TEMPEST_REGISTER_BOLT("org.apache.storm.flux.wrappers.bolts.FluxShellBolt", ShellBolt);

}  // namespace tempest::bolts
