#ifndef TEMPEST_CLI_NIMBUS_CLIENT_H_
#define TEMPEST_CLI_NIMBUS_CLIENT_H_

#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "cli/commands.h"
#include "nlohmann/json.hpp"

namespace tempest::cli {

// The environment variable client verbs read when --nimbus is not given.
inline constexpr char kNimbusEnv[] = "TEMPEST_NIMBUS";

// The client verbs' view of nimbus's REST API. Resolves the nimbus from
// --nimbus, else from $TEMPEST_NIMBUS, else from the config (first of
// nimbus.seeds, ui.port). A write
// answered by a standby with 503 and a "leader" is retried once at that
// leader. Errors carry nimbus's errorMessage. Calling thread only.
class NimbusClient {
 public:
  // InvalidArgument for a malformed HOST:PORT or config.
  static absl::StatusOr<NimbusClient> FromGlobals(const GlobalOptions& globals);

  absl::StatusOr<nlohmann::json> Get(std::string_view path) const;
  absl::StatusOr<nlohmann::json> Post(std::string_view path, const nlohmann::json& body) const;

  // The id of the topology called `name` (NotFound if none).
  absl::StatusOr<std::string> IdOf(const std::string& name) const;

  const std::string& address() const { return address_; }

  // Whether a call failed because nimbus is not serving yet: nothing
  // listens at its address (the connect failed) or it answered 503 (not the
  // leader, no leader known). Nimbus did not act on such a request, so it
  // may be sent again.
  static bool NotReady(const absl::Status& status);

 private:
  static constexpr char kNotReadyPayload[] = "tempest.cli/nimbus-not-ready";
  static void MarkNotReady(absl::Status& status);

  NimbusClient(std::string host, int port);
  absl::StatusOr<nlohmann::json> Call(std::string_view method, std::string_view path,
                                      const std::string& body, bool follow_leader) const;

  std::string host_;
  int port_;
  std::string address_;
};

}  // namespace tempest::cli

#endif  // TEMPEST_CLI_NIMBUS_CLIENT_H_
