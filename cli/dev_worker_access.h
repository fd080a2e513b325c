#ifndef TEMPEST_CLI_DEV_WORKER_ACCESS_H_
#define TEMPEST_CLI_DEV_WORKER_ACCESS_H_

#include <string>

#include "absl/status/statusor.h"

namespace tempest::cli {

// The folder `tempest dev` prints as `output=`: one every worker of the
// cluster may write, for what topologies produce (sinks' files).
//
// Under root, workers run as slot accounts in the group of `worker_user`
// (docs/adr/0021-worker-sandbox.md). They reach the cluster's own files under
// `dir` through their working directory and handed-over descriptors, but
// open what a topology names by absolute path. The folder is `dir`/output
// (root's, the workers' group's, 2770) when they can pass through `dir`;
// otherwise one made in the temp directory, said in one line on stderr: the
// user's own directories are not opened up. Not root: `dir`/output as it is.
// See docs/adr/0026-output-folders-for-workers.md.
absl::StatusOr<std::string> PrepareWorkerOutput(const std::string& dir,
                                                const std::string& worker_user);

}  // namespace tempest::cli

#endif  // TEMPEST_CLI_DEV_WORKER_ACCESS_H_
