#include "tests/support/tempest_dev.h"

#include <utility>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "tests/support/output_file.h"

namespace tempest::testing {

absl::StatusOr<std::unique_ptr<os::ChildProcess>> StartTempestDev(
    const TempDir& dir, const TempestDevOptions& options) {
  os::ChildProcess::Options o;
  o.argv = {
      TempestBinary(),     "dev", "--supervisors", std::to_string(options.supervisors), "--dir",
      dir.File("cluster"), "-c",  "ui.port=0"};
  o.argv.insert(o.argv.end(), options.extra_args.begin(), options.extra_args.end());
  o.env = options.env;
  o.stdout_path = dir.File("dev.out");
  o.stderr_path = dir.File("dev.err");
  absl::StatusOr<std::unique_ptr<os::ChildProcess>> dev = os::ChildProcess::Start(o);
  if (!dev.ok()) return dev.status();
  if (!WaitForLineWithPrefix(dir.File("dev.out"), "ready", options.ready_timeout).has_value()) {
    (*dev)->Stop(std::chrono::seconds(30));
    return absl::DeadlineExceededError(
        absl::StrCat("tempest dev did not print ready in ", options.ready_timeout.count(),
                     " s\n--- dev.out\n", ReadFileOrEmpty(dir.File("dev.out")), "--- dev.err\n",
                     ReadFileOrEmpty(dir.File("dev.err"))));
  }
  return dev;
}

std::map<std::string, std::string> TempestDevLines(const std::string& dev_out) {
  std::map<std::string, std::string> lines;
  for (absl::string_view l : absl::StrSplit(ReadFileOrEmpty(dev_out), '\n', absl::SkipEmpty())) {
    const std::string line(l);
    if (line == "ready") break;
    const size_t eq = line.find('=');
    if (eq != std::string::npos && !absl::StartsWith(line, "export ")) {
      lines.emplace(line.substr(0, eq), line.substr(eq + 1));
    }
  }
  return lines;
}

}  // namespace tempest::testing
