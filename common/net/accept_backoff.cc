#include "common/net/accept_backoff.h"

#include <algorithm>
#include <cerrno>
#include <utility>

#include "spdlog/spdlog.h"

namespace tempest::net {

namespace {

const char* ReasonOf(const boost::system::error_code& ec) {
  if (ec.category() != boost::system::system_category()) return "other";
  switch (ec.value()) {
    case EMFILE:
      return "emfile";
    case ENFILE:
      return "enfile";
    case ENOBUFS:
    case ENOMEM:
      return "nomem";
    default:
      return "other";
  }
}

}  // namespace

AcceptBackoff::AcceptBackoff(boost::asio::io_context& io, std::string side,
                             core::MetricsRegistry& metrics)
    : timer_(io), side_(std::move(side)), metrics_(metrics) {}

void AcceptBackoff::OnError(const boost::system::error_code& ec, std::function<void()> retry) {
  const char* reason = ReasonOf(ec);
  metrics_.GetCounter("tempest_net_accept_errors_total", {{"side", side_}, {"reason", reason}})
      .Add();
  delay_ = delay_.count() == 0 ? kInitialDelay : std::min(kMaxDelay, delay_ * 2);
  uint64_t withheld = 0;
  if (log_.Allow(&withheld)) {
    spdlog::error("{}: accept failed: {}; next attempt in {} ms ({} similar lines withheld)", side_,
                  ec.message(), delay_.count(), withheld);
  }
  timer_.expires_after(delay_);
  timer_.async_wait([retry = std::move(retry)](const boost::system::error_code& wait_ec) {
    if (!wait_ec) retry();
  });
}

void AcceptBackoff::Cancel() { timer_.cancel(); }

}  // namespace tempest::net
