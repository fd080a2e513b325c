#ifndef TEMPEST_COMMON_NET_HTTP_CLIENT_H_
#define TEMPEST_COMMON_NET_HTTP_CLIENT_H_

#include <chrono>
#include <cstddef>
#include <map>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"

namespace tempest::net {

struct HttpClientResponse {
  int status = 0;
  std::string content_type;
  std::string body;
  std::map<std::string, std::string> headers;  // lower-cased names
};

// A minimal blocking HTTP/1.1 client for the CLI and tests: one connection
// per request ("Connection: close"), everything bounded by a deadline.
// Owns nothing between calls; each call runs its own private io_context on
// the calling thread (never on an EventLoop), so it is safe from any thread
// except an EventLoop thread, which it would block.
class HttpClient {
 public:
  HttpClient(std::string host, int port,
             std::chrono::milliseconds deadline = std::chrono::seconds(10));

  absl::StatusOr<HttpClientResponse> Get(std::string_view target) const;
  absl::StatusOr<HttpClientResponse> Post(std::string_view target, std::string_view body,
                                          std::string_view content_type = "application/json") const;
  // Any method. Unavailable: cannot connect; DeadlineExceeded: the deadline
  // passed; DataLoss: malformed or oversized response. A non-2xx status is
  // not an error: it is returned in the response.
  absl::StatusOr<HttpClientResponse> Request(std::string_view method, std::string_view target,
                                             std::string_view body,
                                             std::string_view content_type) const;

  void set_max_response_bytes(size_t n) { max_response_bytes_ = n; }
  // A header field sent with every request (e.g. "Authorization"); a
  // second call with the same name replaces the value.
  void set_header(std::string name, std::string value) {
    headers_[std::move(name)] = std::move(value);
  }

 private:
  std::string host_;
  int port_;
  std::chrono::milliseconds deadline_;
  size_t max_response_bytes_ = 64u << 20;
  std::map<std::string, std::string> headers_;
};

}  // namespace tempest::net

#endif  // TEMPEST_COMMON_NET_HTTP_CLIENT_H_
