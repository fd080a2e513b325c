#ifndef TEMPEST_TESTS_SUPPORT_DEMO_FLUX_H_
#define TEMPEST_TESTS_SUPPORT_DEMO_FLUX_H_

namespace tempest::testing {

// The small topology the nimbus tests submit: tempest.SequenceSpout "gen"
// (2 executors) shuffling into tempest.IdentityBolt "sink" (3 executors), in
// 2 workers (so 2 ackers: 7 executors).
inline constexpr char kGenSinkFlux[] = R"(name: demo
config:
  topology.workers: 2
spouts:
  - id: gen
    className: tempest.SequenceSpout
    parallelism: 2
bolts:
  - id: sink
    className: tempest.IdentityBolt
    parallelism: 3
streams:
  - from: gen
    to: sink
    grouping:
      type: SHUFFLE
)";

}  // namespace tempest::testing

#endif  // TEMPEST_TESTS_SUPPORT_DEMO_FLUX_H_
