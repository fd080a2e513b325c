#ifndef TEMPEST_CLI_NIMBUS_CLIENT_H_
#define TEMPEST_CLI_NIMBUS_CLIENT_H_

#include <optional>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "cli/commands.h"
#include "nlohmann/json.hpp"

namespace tempest::cli {

// The environment variable client verbs read when --nimbus is not given.
inline constexpr char kNimbusEnv[] = "TEMPEST_NIMBUS";
// A file holding the API token, read when neither --token-file nor the
// config's tempest.api.token.file names one (`tempest dev` exports it).
inline constexpr char kTokenFileEnv[] = "TEMPEST_TOKEN_FILE";
// The API token itself, read when no token file is named at all.
inline constexpr char kTokenEnv[] = "TEMPEST_TOKEN";
// What a client verb prints when nimbus answers 401 to a request without a
// token, after "nimbus at HOST:PORT ".
inline constexpr char kTokenNeededMessage[] =
    "needs an API token for this; set TEMPEST_TOKEN_FILE, TEMPEST_TOKEN or "
    "tempest.api.token.file, or pass --token-file";

// The client verbs' view of nimbus's REST API. Resolves the nimbus from
// --nimbus, else from $TEMPEST_NIMBUS, else from the config (first of
// nimbus.seeds, ui.port). Sends the API token as "Authorization: Bearer"
// on every call: from --token-file, else the config's
// tempest.api.token.file, else the file $TEMPEST_TOKEN_FILE names, else
// $TEMPEST_TOKEN; when none of them is set and the nimbus is on this
// machine (127.x.x.x, localhost), from the token file a running `tempest
// dev` recorded for that address under $HOME/.tempest/dev (cli/dev_token.h);
// else no header. A write answered by a standby with 503 and a "leader" is
// retried once at that leader. Errors carry nimbus's errorMessage; a 401 is
// Unauthenticated: "nimbus at H:P needs an API token ..." when none was sent,
// "nimbus at H:P rejected the API token from SOURCE ..." when one was (both
// say nothing about the token nimbus holds). `--nimbus` and $TEMPEST_NIMBUS
// take HOST:PORT or http://HOST:PORT[/]. A server that answers but not as a
// nimbus does (not HTTP, not JSON, or "no route" where every nimbus has
// one) is FailedPrecondition "HOST:PORT answered but is not a Tempest nimbus
// (...)". Calling thread only.
class NimbusClient {
 public:
  // InvalidArgument for a malformed HOST:PORT or config, or an unreadable
  // token file named by --token-file, the config or $TEMPEST_TOKEN_FILE
  // (an unreadable discovered one is skipped: no token).
  static absl::StatusOr<NimbusClient> FromGlobals(const GlobalOptions& globals);

  absl::StatusOr<nlohmann::json> Get(std::string_view path) const;
  absl::StatusOr<nlohmann::json> Post(std::string_view path, const nlohmann::json& body) const;

  // The id of the topology called `name` (NotFound if none), as this nimbus
  // lists it or, if it does not, as the leader does.
  absl::StatusOr<std::string> IdOf(const std::string& name) const;

  const std::string& address() const { return address_; }

  // Whether a call failed because nimbus is not serving yet: nothing
  // listens at its address (the connect failed) or it answered 503 (not the
  // leader, no leader known). Nimbus did not act on such a request, so it
  // may be sent again.
  static bool NotReady(const absl::Status& status);

 private:
  // The id this nimbus's topology summary lists for `name`, if any.
  absl::StatusOr<std::optional<std::string>> ListedId(const std::string& name) const;
  static constexpr char kNotReadyPayload[] = "tempest.cli/nimbus-not-ready";
  static void MarkNotReady(absl::Status& status);

  NimbusClient(std::string host, int port, std::string token, std::string token_source);
  // The error for an answer that did not come from a nimbus, or OK.
  absl::Status NotANimbus(std::string_view path, int status, const std::string& body) const;
  absl::StatusOr<nlohmann::json> Call(std::string_view method, std::string_view path,
                                      const std::string& body, bool follow_leader) const;

  std::string host_;
  int port_;
  std::string address_;
  std::string token_;         // empty: none sent
  std::string token_source_;  // where token_ came from, for errors ("$TEMPEST_TOKEN", ...)
};

}  // namespace tempest::cli

#endif  // TEMPEST_CLI_NIMBUS_CLIENT_H_
