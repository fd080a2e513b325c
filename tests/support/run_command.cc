#include "tests/support/run_command.h"

#include <sys/wait.h>

#include <cstdio>
#include <optional>

#include "common/os/child_process.h"
#include "tests/support/output_file.h"

namespace tempest::testing {

CommandRun RunCommand(const std::vector<std::string>& argv, const std::string& log_prefix,
                      std::chrono::milliseconds timeout,
                      const std::map<std::string, std::string>& env) {
  os::ChildProcess::Options options;
  options.argv = argv;
  options.env = env;
  options.stdout_path = log_prefix + ".out";
  options.stderr_path = log_prefix + ".err";
  // The child appends; a rerun with the same prefix must not see old output.
  std::remove(options.stdout_path.c_str());
  std::remove(options.stderr_path.c_str());
  CommandRun run;
  auto child = os::ChildProcess::Start(options);
  if (!child.ok()) {
    run.err = std::string(child.status().message());
    return run;
  }
  std::optional<int> status = (*child)->WaitFor(timeout);
  if (!status) {
    (*child)->Stop(std::chrono::milliseconds(2000));
  } else {
    run.finished = true;
    if (WIFEXITED(*status)) run.exit_code = WEXITSTATUS(*status);
  }
  run.out = ReadFileOrEmpty(options.stdout_path);
  run.err = ReadFileOrEmpty(options.stderr_path);
  return run;
}

}  // namespace tempest::testing
