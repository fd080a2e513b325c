#ifndef TEMPEST_TESTS_SUPPORT_OUTPUT_FILE_H_
#define TEMPEST_TESTS_SUPPORT_OUTPUT_FILE_H_

#include <chrono>
#include <optional>
#include <string>

namespace tempest::testing {

// The whole content of a file ("" if it does not exist yet).
std::string ReadFileOrEmpty(const std::string& path);

// Waits until a line starting with `prefix` appears in the file (a child
// process's redirected stdout) and returns the rest of that line, or nullopt
// after `timeout`.
std::optional<std::string> WaitForLineWithPrefix(const std::string& path,
                                                 const std::string& prefix,
                                                 std::chrono::milliseconds timeout);

// Path of the `tempest` binary under test (ctest sets TEMPEST_BINARY).
std::string TempestBinary();

// The first lines of a tempest.yaml for a daemon under test: ZooKeeper at
// `zk_connect`, root /tempest-system, 4 s sessions.
std::string DaemonConfigPreamble(const std::string& zk_connect);

}  // namespace tempest::testing

#endif  // TEMPEST_TESTS_SUPPORT_OUTPUT_FILE_H_
