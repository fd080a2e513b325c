#include "spout/kafka/kafka_spout_config_types.h"

namespace tempest::spout {

std::string_view ProcessingGuaranteeName(ProcessingGuarantee g) {
  switch (g) {
    case ProcessingGuarantee::kAtLeastOnce:
      return "AT_LEAST_ONCE";
    case ProcessingGuarantee::kAtMostOnce:
      return "AT_MOST_ONCE";
    case ProcessingGuarantee::kNoGuarantee:
      return "NO_GUARANTEE";
  }
  return "?";
}

std::string_view OutOfRangePolicyName(OutOfRangePolicy p) {
  switch (p) {
    case OutOfRangePolicy::kEarliest:
      return "earliest";
    case OutOfRangePolicy::kLatest:
      return "latest";
    case OutOfRangePolicy::kFail:
      return "fail";
  }
  return "?";
}

std::vector<std::string> KafkaSpoutConfig::OutputFields() const {
  switch (scheme) {
    case RecordScheme::kRecord:
      return {"topic", "partition", "offset", "key", "value"};
    case RecordScheme::kRaw:
      return {"bytes"};
    case RecordScheme::kString:
      return {"str"};
    case RecordScheme::kValue:
      return {"value"};
  }
  return {};
}

}  // namespace tempest::spout
