#ifndef TEMPEST_TESTS_UNIT_CORE_TEST_COMPONENTS_H_
#define TEMPEST_TESTS_UNIT_CORE_TEST_COMPONENTS_H_

#include <memory>

#include "common/api/component_registry.h"

namespace tempest::core::testing {

// A registry with a few fake components for loader/validator tests:
//   test.WordSpout  declares default [word, n], "errors" [reason], direct "direct" [x]
//   test.SplitBolt  declares default [word]
//   test.CountBolt  declares default [word, count]
//   test.SinkBolt   declares nothing
//   test.FailingBolt  its factory fails
//   org.apache.storm.kafka.KafkaSpout  declares default [str]
//   test.EvenGrouping  a custom grouping choosing even task ids
std::unique_ptr<api::ComponentRegistry> MakeTestRegistry();

}  // namespace tempest::core::testing

#endif  // TEMPEST_TESTS_UNIT_CORE_TEST_COMPONENTS_H_
