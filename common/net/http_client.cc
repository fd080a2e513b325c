#include "common/net/http_client.h"

#include <optional>
#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "boost/asio/connect.hpp"
#include "boost/asio/io_context.hpp"
#include "boost/asio/ip/tcp.hpp"
#include "boost/beast/core.hpp"
#include "boost/beast/http.hpp"

namespace tempest::net {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = boost::beast::http;
using asio::ip::tcp;

namespace {

// One request's state machine. Async operations on a private io_context are
// used only because Beast's deadlines (tcp_stream::expires_at) apply to
// asynchronous operations; the caller still sees a blocking call.
class OneShotExchange {
 public:
  OneShotExchange(asio::io_context& io, std::chrono::steady_clock::time_point deadline)
      : resolver_(io), stream_(io), deadline_(deadline) {}

  void Run(const std::string& host, int port, http::request<http::string_body> request,
           size_t max_response_bytes) {
    request_ = std::move(request);
    parser_.emplace();
    parser_->body_limit(max_response_bytes);
    resolver_.async_resolve(
        host, std::to_string(port),
        [this](beast::error_code ec, tcp::resolver::results_type results) {
          if (ec) return Fail(absl::UnavailableError(absl::StrCat("resolve: ", ec.message())));
          stream_.expires_at(deadline_);
          stream_.async_connect(
              results, [this](beast::error_code cec, const tcp::endpoint&) { OnConnect(cec); });
        });
  }

  absl::StatusOr<HttpClientResponse> result() { return std::move(result_); }

 private:
  void OnConnect(beast::error_code ec) {
    if (ec) {
      if (ec == beast::error::timeout) {
        return Fail(absl::DeadlineExceededError("connect timed out"));
      }
      return Fail(absl::UnavailableError(absl::StrCat("connect: ", ec.message())));
    }
    stream_.expires_at(deadline_);
    http::async_write(stream_, request_, [this](beast::error_code wec, size_t) {
      // A server may answer (e.g. 413) and stop reading before the whole
      // request is written; still try to read its response.
      if (wec && wec != asio::error::connection_reset && wec != asio::error::broken_pipe) {
        return Fail(Map("write", wec));
      }
      stream_.expires_at(deadline_);
      http::async_read(stream_, buffer_, *parser_,
                       [this](beast::error_code rec, size_t) { OnRead(rec); });
    });
  }

  void OnRead(beast::error_code ec) {
    if (ec) return Fail(Map("read", ec));
    auto& msg = parser_->get();
    HttpClientResponse response;
    response.status = static_cast<int>(msg.result_int());
    for (const auto& field : msg) {
      response.headers[absl::AsciiStrToLower(std::string(field.name_string()))] =
          std::string(field.value());
    }
    auto ct = response.headers.find("content-type");
    if (ct != response.headers.end()) response.content_type = ct->second;
    response.body = std::move(msg.body());
    result_ = std::move(response);
    beast::error_code ignored;
    stream_.socket().shutdown(tcp::socket::shutdown_both, ignored);
  }

  static absl::Status Map(const char* what, beast::error_code ec) {
    if (ec == beast::error::timeout) {
      return absl::DeadlineExceededError(absl::StrCat(what, " timed out"));
    }
    if (ec.category() == http::make_error_code(http::error::bad_target).category()) {
      return absl::DataLossError(absl::StrCat("malformed response: ", ec.message()));
    }
    return absl::UnavailableError(absl::StrCat(what, ": ", ec.message()));
  }

  void Fail(absl::Status status) { result_ = std::move(status); }

  tcp::resolver resolver_;
  beast::tcp_stream stream_;
  std::chrono::steady_clock::time_point deadline_;
  http::request<http::string_body> request_;
  beast::flat_buffer buffer_;
  std::optional<http::response_parser<http::string_body>> parser_;
  absl::StatusOr<HttpClientResponse> result_ = absl::InternalError("request did not complete");
};

}  // namespace

HttpClient::HttpClient(std::string host, int port, std::chrono::milliseconds deadline)
    : host_(std::move(host)), port_(port), deadline_(deadline) {}

absl::StatusOr<HttpClientResponse> HttpClient::Get(std::string_view target) const {
  return Request("GET", target, "", "");
}

absl::StatusOr<HttpClientResponse> HttpClient::Post(std::string_view target, std::string_view body,
                                                    std::string_view content_type) const {
  return Request("POST", target, body, content_type);
}

absl::StatusOr<HttpClientResponse> HttpClient::Request(std::string_view method,
                                                       std::string_view target,
                                                       std::string_view body,
                                                       std::string_view content_type) const {
  if (target.empty() || target[0] != '/') {
    return absl::InvalidArgumentError("request target must start with '/'");
  }
  http::request<http::string_body> request;
  request.method_string(beast::string_view(method.data(), method.size()));
  request.target(beast::string_view(target.data(), target.size()));
  request.version(11);
  request.set(http::field::host, absl::StrCat(host_, ":", port_));
  request.set(http::field::user_agent, "tempest");
  request.set(http::field::connection, "close");
  for (const auto& [name, value] : headers_) request.set(name, value);
  if (!content_type.empty()) {
    request.set(http::field::content_type,
                beast::string_view(content_type.data(), content_type.size()));
  }
  request.body() = std::string(body);
  request.prepare_payload();

  // Everything below may throw only on allocation failure inside Asio/Beast;
  // this is the boundary where such exceptions become a Status.
  try {
    asio::io_context io(1);
    OneShotExchange exchange(io, std::chrono::steady_clock::now() + deadline_);
    exchange.Run(host_, port_, std::move(request), max_response_bytes_);
    io.run();
    return exchange.result();
  } catch (const std::exception& e) {
    return absl::InternalError(absl::StrCat("http client: ", e.what()));
  }
}

}  // namespace tempest::net
