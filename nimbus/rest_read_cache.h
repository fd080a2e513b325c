#ifndef TEMPEST_NIMBUS_REST_READ_CACHE_H_
#define TEMPEST_NIMBUS_REST_READ_CACHE_H_

#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "common/net/http_router.h"

namespace tempest::nimbus {

// The REST API's reads while ZooKeeper cannot answer: the last good answer
// of each read (by request target, path and query), served again marked
// stale instead of waiting on ZooKeeper or failing. A stale JSON object
// gains "stale": true, "asOf" (epoch seconds of the answer) and
// "staleSinceSecs" (its age); every stale answer carries the headers
// `X-Tempest-Stale: true` and `Age: SECONDS`. A read never answered before
// gets 503 at once. Fresh answers are passed through unchanged.
//
// Holds at most `max_entries` answers (the oldest goes first). Thread-safe:
// wrapped handlers may run on any number of threads.
class RestReadCache {
 public:
  // `reachable`: whether ZooKeeper can answer reads now (not while the
  // session is suspended, lost or connecting); `now_millis`: wall clock.
  RestReadCache(std::function<bool()> reachable, std::function<int64_t()> now_millis,
                size_t max_entries = 256);

  RestReadCache(const RestReadCache&) = delete;
  RestReadCache& operator=(const RestReadCache&) = delete;

  // The answer to `request` of `handler` (a GET that reads ZooKeeper): fresh from `handler` when
  // ZooKeeper is reachable and the handler succeeds, else the stale copy, else 503 or the handler's
  // own error.
  net::HttpResponse Serve(const net::HttpRequest& request, const net::HttpHandler& handler);

 private:
  struct Entry {
    net::HttpResponse response;
    int64_t as_of_millis = 0;
  };

  void Remember(const std::string& target, const net::HttpResponse& response);
  std::optional<net::HttpResponse> Stale(const std::string& target);

  const std::function<bool()> reachable_;
  const std::function<int64_t()> now_millis_;
  const size_t max_entries_;
  absl::Mutex mu_;
  std::map<std::string, Entry> entries_ ABSL_GUARDED_BY(mu_);
};

}  // namespace tempest::nimbus

#endif  // TEMPEST_NIMBUS_REST_READ_CACHE_H_
