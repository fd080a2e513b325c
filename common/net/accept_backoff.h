#ifndef TEMPEST_COMMON_NET_ACCEPT_BACKOFF_H_
#define TEMPEST_COMMON_NET_ACCEPT_BACKOFF_H_

#include <chrono>
#include <functional>
#include <string>

#include "boost/asio/io_context.hpp"
#include "boost/asio/steady_timer.hpp"
#include "boost/system/error_code.hpp"
#include "common/core/metrics_registry.h"
#include "common/core/rate_limited_log.h"

namespace tempest::net {

// The shared reaction of an accept loop (HttpServer, TransportServer) to a
// failed accept. Out of descriptors (EMFILE, ENFILE) or kernel memory
// (ENOBUFS, ENOMEM) the pending connection stays in the backlog and the
// listener stays readable, so accepting again at once would spin a core and
// write a log line per attempt. Instead the next accept waits: 5 ms, doubling
// up to 1 s, reset by the next successful accept; log lines are rate-limited
// (a few per 10 s, with the count of the withheld ones) and every failure is
// counted in `tempest_net_accept_errors_total{side,reason}`.
//
// Included by common/net's .cc files only (it pulls in Asio). Loop thread
// only.
class AcceptBackoff {
 public:
  AcceptBackoff(boost::asio::io_context& io, std::string side, core::MetricsRegistry& metrics);

  // Logs and counts `ec`, then runs `retry` on the loop after the delay.
  void OnError(const boost::system::error_code& ec, std::function<void()> retry);
  void OnSuccess() { delay_ = std::chrono::milliseconds(0); }
  void Cancel();

  static constexpr std::chrono::milliseconds kInitialDelay{5};
  static constexpr std::chrono::milliseconds kMaxDelay{1000};

 private:
  boost::asio::steady_timer timer_;
  std::string side_;
  core::MetricsRegistry& metrics_;
  core::RateLimitedLog log_{3, std::chrono::seconds(10)};
  std::chrono::milliseconds delay_{0};
};

}  // namespace tempest::net

#endif  // TEMPEST_COMMON_NET_ACCEPT_BACKOFF_H_
