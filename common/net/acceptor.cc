#include "common/net/acceptor.h"

#include <utility>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "boost/asio/socket_base.hpp"

namespace tempest::net {

namespace asio = boost::asio;
using asio::ip::tcp;

Acceptor::Acceptor(asio::io_context& io, const std::string& side, core::MetricsRegistry& metrics,
                   const ConnectionLimits& limits)
    : acceptor_(io), backoff_(io, side, metrics), gate_(limits, side, metrics) {}

absl::StatusOr<int> Acceptor::Listen(const std::string& bind_address, int port,
                                     int receive_buffer_bytes) {
  boost::system::error_code ec;
  const auto address = asio::ip::make_address(bind_address, ec);
  if (ec) {
    return absl::InvalidArgumentError(
        absl::StrCat("bad bind address '", bind_address, "': ", ec.message()));
  }
  if (port < 0 || port > 65535) return absl::InvalidArgumentError(absl::StrCat("bad port ", port));
  const tcp::endpoint endpoint(address, static_cast<unsigned short>(port));
  acceptor_.open(endpoint.protocol(), ec);
  if (!ec) acceptor_.set_option(asio::socket_base::reuse_address(true), ec);
  if (!ec && receive_buffer_bytes > 0) {
    acceptor_.set_option(asio::socket_base::receive_buffer_size(receive_buffer_bytes), ec);
  }
  if (!ec) acceptor_.bind(endpoint, ec);
  if (!ec) acceptor_.listen(asio::socket_base::max_listen_connections, ec);
  if (ec) {
    const std::string msg =
        absl::StrCat("cannot listen on ", bind_address, ":", port, ": ", ec.message());
    if (ec == asio::error::address_in_use) return absl::UnavailableError(msg);
    return absl::InternalError(msg);
  }
  const auto local = acceptor_.local_endpoint(ec);
  if (ec) return absl::InternalError(absl::StrCat("local_endpoint: ", ec.message()));
  return static_cast<int>(local.port());
}

void Acceptor::Accept(OnAccepted on_accepted, std::function<void()> on_failed) {
  if (stopped_) return;
  acceptor_.async_accept([this, on_accepted = std::move(on_accepted),
                          on_failed = std::move(on_failed)](const boost::system::error_code& ec,
                                                            tcp::socket socket) mutable {
    if (stopped_ || ec == asio::error::operation_aborted) return;
    if (ec) {
      if (on_failed) on_failed();
      backoff_.OnError(ec, [this, on_accepted = std::move(on_accepted),
                            on_failed = std::move(on_failed)]() mutable {
        Accept(std::move(on_accepted), std::move(on_failed));
      });
      return;
    }
    backoff_.OnSuccess();
    boost::system::error_code peer_ec;
    const auto remote = socket.remote_endpoint(peer_ec);
    const std::string peer = peer_ec ? std::string("?") : remote.address().to_string();
    on_accepted(std::move(socket), peer);
    Accept(std::move(on_accepted), std::move(on_failed));
  });
}

void Acceptor::Stop() {
  if (stopped_) return;
  stopped_ = true;
  backoff_.Cancel();
  boost::system::error_code ignored;
  acceptor_.close(ignored);
}

}  // namespace tempest::net
