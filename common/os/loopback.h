#ifndef TEMPEST_COMMON_OS_LOOPBACK_H_
#define TEMPEST_COMMON_OS_LOOPBACK_H_

#include <chrono>
#include <string>

#include "absl/status/statusor.h"

namespace tempest::os {

// A TCP port on 127.0.0.1 that was free a moment ago (bind to port 0, read
// the port, close). Another process may take it before the caller binds, so
// callers that start servers retry on "address in use".
absl::StatusOr<int> FindFreeLoopbackPort();

// True if something accepts TCP connections on host:port right now.
bool TcpPortAccepts(const std::string& host, int port, std::chrono::milliseconds timeout);

// Connects to host:port, writes `request`, half-closes, and returns everything
// the peer sends until it closes, bounded by `timeout` overall. Used for
// ZooKeeper's four-letter commands (ruok, srvr).
absl::StatusOr<std::string> TcpRequest(const std::string& host, int port,
                                       const std::string& request,
                                       std::chrono::milliseconds timeout);

}  // namespace tempest::os

#endif  // TEMPEST_COMMON_OS_LOOPBACK_H_
