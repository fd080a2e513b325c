#ifndef TEMPEST_TESTS_SUPPORT_TEMPEST_DEV_H_
#define TEMPEST_TESTS_SUPPORT_TEMPEST_DEV_H_

#include <chrono>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "common/os/child_process.h"
#include "tests/support/temp_dir.h"

namespace tempest::testing {

// `tempest dev` as a child process of a system test: ZooKeeper, the dev
// Kafka, nimbus (REST on a free port: `-c ui.port=0`) and `supervisors`
// supervisors, with its state under {dir}/cluster and its output in
// {dir}/dev.out and {dir}/dev.err.
struct TempestDevOptions {
  int supervisors = 1;
  std::vector<std::string> extra_args;      // appended to the command line
  std::map<std::string, std::string> env;   // added to the environment
  std::chrono::seconds ready_timeout{180};  // until its "ready" line
};

// Starts it and waits for its "ready" line; DeadlineExceeded (with both
// output files in the message) if it does not come. The caller stops the
// process (ChildProcess::Stop) when done.
absl::StatusOr<std::unique_ptr<os::ChildProcess>> StartTempestDev(const TempDir& dir,
                                                                  const TempestDevOptions& options);

// The `key=value` lines `tempest dev` printed to `dev_out` before its "ready"
// line (nimbus=, zookeeper=, bootstrap.servers=, output=, ...), by key; the
// `export ...` lines are left out.
std::map<std::string, std::string> TempestDevLines(const std::string& dev_out);

}  // namespace tempest::testing

#endif  // TEMPEST_TESTS_SUPPORT_TEMPEST_DEV_H_
