#ifndef TEMPEST_TESTS_SUPPORT_RUN_COMMAND_H_
#define TEMPEST_TESTS_SUPPORT_RUN_COMMAND_H_

#include <chrono>
#include <map>
#include <string>
#include <vector>

namespace tempest::testing {

// How a command run to completion ended, and what it printed.
struct CommandRun {
  bool finished = false;  // ended (exit or signal) before the timeout
  int exit_code = -1;     // the exit status; -1 if it did not exit normally
  std::string out;
  std::string err;
};

// Runs `argv` (argv[0] looked up on PATH) in its own process group with
// `env` added to the environment, its stdout and stderr going to
// `log_prefix`.out / .err (replaced). A command still running after
// `timeout` is stopped (SIGTERM, then SIGKILL) and reported unfinished.
CommandRun RunCommand(const std::vector<std::string>& argv, const std::string& log_prefix,
                      std::chrono::milliseconds timeout = std::chrono::minutes(4),
                      const std::map<std::string, std::string>& env = {});

}  // namespace tempest::testing

#endif  // TEMPEST_TESTS_SUPPORT_RUN_COMMAND_H_
