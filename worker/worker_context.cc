#include "worker/worker_context.h"

#include <algorithm>
#include <chrono>
#include <iterator>

#include "absl/strings/str_cat.h"
#include "spdlog/spdlog.h"

namespace tempest::worker {

void ErrorLog::Report(const api::ComponentId& component, int32_t task, const absl::Status& error) {
  const int64_t n = count_.fetch_add(1, std::memory_order_relaxed) + 1;
  std::string line = absl::StrCat(component.value(), "[", task, "]: ", error.ToString());
  // A component failing every tuple must not flood the log.
  uint64_t not_logged = 0;
  if (log_.Allow(&not_logged)) {
    spdlog::warn("component error ({} so far, {} not logged since the last line): {}", n,
                 not_logged, line);
  }
  ComponentError record;
  record.component = component.value();
  record.task = task;
  record.time_secs = std::chrono::duration_cast<std::chrono::seconds>(
                         std::chrono::system_clock::now().time_since_epoch())
                         .count();
  // The component's words; the status code is ours, not the user's.
  record.message = error.message().empty() ? error.ToString() : std::string(error.message());
  absl::MutexLock lock(&mu_);
  recent_.push_back(std::move(line));
  if (recent_.size() > kMaxKept) recent_.pop_front();
  size_t& held = unpublished_per_component_[record.component];
  if (held == kMaxUnpublishedPerComponent) {
    // Drop this component's oldest held error (bounded scan: at most
    // kMaxUnpublishedPerComponent per component are held).
    auto oldest = std::find_if(unpublished_.begin(), unpublished_.end(),
                               [&](const ComponentError& e) { return e.component == record.component; });
    if (oldest != unpublished_.end()) unpublished_.erase(oldest);
    --held;
  }
  ++held;
  unpublished_.push_back(std::move(record));
}

std::vector<std::string> ErrorLog::Recent() const {
  absl::MutexLock lock(&mu_);
  return {recent_.begin(), recent_.end()};
}

std::vector<ComponentError> ErrorLog::TakeUnpublished() {
  absl::MutexLock lock(&mu_);
  std::vector<ComponentError> out(std::make_move_iterator(unpublished_.begin()),
                                  std::make_move_iterator(unpublished_.end()));
  unpublished_.clear();
  unpublished_per_component_.clear();
  return out;
}

}  // namespace tempest::worker
