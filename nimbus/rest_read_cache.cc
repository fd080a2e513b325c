#include "nimbus/rest_read_cache.h"

#include <algorithm>
#include <optional>
#include <utility>

#include "absl/strings/str_cat.h"
#include "nlohmann/json.hpp"

namespace tempest::nimbus {

using json = nlohmann::json;
using net::HttpRequest;
using net::HttpResponse;

RestReadCache::RestReadCache(std::function<bool()> reachable, std::function<int64_t()> now_millis,
                             size_t max_entries)
    : reachable_(std::move(reachable)),
      now_millis_(std::move(now_millis)),
      max_entries_(std::max<size_t>(max_entries, 1)) {}

HttpResponse RestReadCache::Serve(const HttpRequest& request, const net::HttpHandler& handler) {
  if (!reachable_()) {
    if (std::optional<HttpResponse> stale = Stale(request.target)) return *std::move(stale);
    return HttpResponse::Error(
        503, "Service Unavailable",
        "ZooKeeper is unreachable and this nimbus has not answered this read before");
  }
  HttpResponse fresh = handler(request);
  if (fresh.status == 200) {
    Remember(request.target, fresh);
    return fresh;
  }
  // ZooKeeper failed under the call (timeout, connection loss): the last
  // known state is better than an error. A 4xx is the answer itself.
  if (fresh.status >= 500) {
    if (std::optional<HttpResponse> stale = Stale(request.target)) return *std::move(stale);
  }
  return fresh;
}

void RestReadCache::Remember(const std::string& target, const HttpResponse& response) {
  const int64_t now = now_millis_();
  absl::MutexLock lock(&mu_);
  if (!entries_.contains(target) && entries_.size() >= max_entries_) {
    auto oldest = std::min_element(
        entries_.begin(), entries_.end(),
        [](const auto& a, const auto& b) { return a.second.as_of_millis < b.second.as_of_millis; });
    entries_.erase(oldest);
  }
  entries_[target] = Entry{response, now};
}

std::optional<HttpResponse> RestReadCache::Stale(const std::string& target) {
  Entry entry;
  {
    absl::MutexLock lock(&mu_);
    auto it = entries_.find(target);
    if (it == entries_.end()) return std::nullopt;
    entry = it->second;
  }
  const int64_t as_of = entry.as_of_millis / 1000;
  const int64_t age = std::max<int64_t>(0, (now_millis_() - entry.as_of_millis) / 1000);
  HttpResponse out = std::move(entry.response);
  if (out.content_type.find("json") != std::string::npos) {
    json body = json::parse(out.body, nullptr, /*allow_exceptions=*/false);
    if (body.is_object()) {
      body["stale"] = true;
      body["asOf"] = as_of;
      body["staleSinceSecs"] = age;
      out.body = body.dump(-1, ' ', false, json::error_handler_t::replace);
    }
  }
  out.headers.emplace_back("X-Tempest-Stale", "true");
  out.headers.emplace_back("Age", absl::StrCat(age));
  return out;
}

}  // namespace tempest::nimbus
