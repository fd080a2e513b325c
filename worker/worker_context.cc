#include "worker/worker_context.h"

#include "absl/strings/str_cat.h"
#include "spdlog/spdlog.h"

namespace tempest::worker {

void ErrorLog::Report(const api::ComponentId& component, int32_t task, const absl::Status& error) {
  const int64_t n = count_.fetch_add(1, std::memory_order_relaxed) + 1;
  std::string line = absl::StrCat(component.value(), "[", task, "]: ", error.ToString());
  // A component failing every tuple must not flood the log: the first 20
  // errors, then one in a thousand.
  if (n <= 20 || n % 1000 == 0) spdlog::warn("component error ({} so far): {}", n, line);
  std::lock_guard<std::mutex> lock(mu_);
  recent_.push_back(std::move(line));
  if (recent_.size() > kMaxKept) recent_.pop_front();
}

std::vector<std::string> ErrorLog::Recent() const {
  std::lock_guard<std::mutex> lock(mu_);
  return {recent_.begin(), recent_.end()};
}

}  // namespace tempest::worker
