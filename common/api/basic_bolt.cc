#include "common/api/basic_bolt.h"

#include <exception>

#include "absl/strings/str_cat.h"

namespace tempest::api {

absl::Status BasicBoltRunner::Prepare(const Config& config, const TopologyContext& context,
                                      OutputCollector& collector) {
  collector_ = &collector;
  return bolt_->Prepare(config, context);
}

void BasicBoltRunner::Execute(const Tuple& input) {
  BasicOutputCollector basic(*collector_, input);
  absl::Status status;
  // The one place this API catches: user code may throw, and a throw must
  // fail the tuple, not unwind through the executor.
  try {
    status = bolt_->Execute(input, basic);
  } catch (const std::exception& e) {
    status = absl::InternalError(absl::StrCat("exception in Execute: ", e.what()));
  } catch (...) {
    status = absl::InternalError("unknown exception in Execute");
  }
  if (status.ok()) {
    collector_->Ack(input);
  } else {
    collector_->ReportError(status);
    collector_->Fail(input);
  }
}

}  // namespace tempest::api
