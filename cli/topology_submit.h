#ifndef TEMPEST_CLI_TOPOLOGY_SUBMIT_H_
#define TEMPEST_CLI_TOPOLOGY_SUBMIT_H_

// The pieces of `tempest submit` that `tempest upgrade` runs too: reading and
// checking a Flux file here, the submission's body, and the waits on nimbus
// (topology_commands.cc). Calling thread only.

#include <chrono>
#include <functional>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "cli/commands.h"
#include "cli/nimbus_client.h"
#include "nimbus/topology_store.h"
#include "nlohmann/json.hpp"

namespace tempest::cli {

struct SubmitOptions {
  std::string topology;
  std::string name;
  bool inactive = false;
  bool until_running = false;
  int until_running_timeout_secs = 120;
  int wait_for_nimbus_secs = 30;
  std::string resources;  // directory shipped to the workers
  std::string filter;     // --filter PROPS
  bool env_filter = false;
};

// What one poll of a long wait saw: whether the wait is over, and a progress
// text for the terminal.
struct WaitPoll {
  bool done = false;
  std::string progress;
};

// Polls every 500 ms until `poll` says done, fails, or `timeout` passes. On
// a terminal the progress text is shown on one stderr line that rewrites
// itself; otherwise the wait is silent (scripts read the exit code).
absl::Status WaitWithProgress(std::chrono::seconds timeout,
                              const std::function<absl::StatusOr<WaitPoll>()>& poll);

// `submit --until-running`: until every executor of `id` runs in a worker
// whose heartbeat is fresh, saying why it waits; fails early on a worker
// that keeps failing.
absl::Status WaitUntilRunning(const NimbusClient& client, const std::string& id,
                              std::chrono::seconds timeout);

// POSTs `body`, waiting up to `wait` for a nimbus that is still starting.
absl::StatusOr<nlohmann::json> PostWhenNimbusReady(const NimbusClient& client,
                                                   const std::string& path,
                                                   const nlohmann::json& body,
                                                   std::chrono::seconds wait);

// The submission as read here (file text, filters, --resources, -c).
// Returns 0, or the exit code after saying what is wrong.
int ReadSubmitRequest(const SubmitOptions& opts, const GlobalOptions& globals,
                      nimbus::SubmitRequest& request);

// Checks the submission with the code nimbus runs and merges the Flux
// `includes` into its text, so it stands alone.
absl::Status MakeSelfContained(const SubmitOptions& opts, nimbus::SubmitRequest& request);

// The body of POST /api/v1/topology for `request`.
nlohmann::json SubmitBody(const SubmitOptions& opts, const nimbus::SubmitRequest& request);

}  // namespace tempest::cli

#endif  // TEMPEST_CLI_TOPOLOGY_SUBMIT_H_
