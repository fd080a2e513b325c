#ifndef TEMPEST_CLI_CLI_TEXT_H_
#define TEMPEST_CLI_CLI_TEXT_H_

// Pure helpers of the `tempest` command line: option range checks with
// readable messages, aligned tables, the exports `tempest dev` prints and
// the reason `submit --until-running` gives while it waits. No I/O; safe
// from any thread.

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "CLI/CLI.hpp"
#include "absl/status/statusor.h"

namespace tempest::cli {

// The longest time option (`--duration`, `kill -w`, ...): one year, in seconds.
inline constexpr int64_t kMaxSeconds = 365LL * 24 * 3600;

// A number written for people: integral values without a fraction
// ("31536000", not "3.1536e+07" nor 300 digits), others with up to 6
// significant digits.
std::string FormatNumber(double value);

// The message of a value outside [min, max] (or not a number):
// "must be between MIN and MAX (got TEXT)". CLI11 prefixes the option name.
std::string RangeMessage(double min, double max, const std::string& text);

// A CLI11 check: the value is a number in [min, max] (inclusive); the error
// reads "--opt: must be between MIN and MAX (got TEXT)" and --help shows
// "in [MIN..MAX]". Use instead of CLI::Range / PositiveNumber, whose
// messages print double bounds with hundreds of digits.
CLI::Validator Bounded(double min, double max);

// `text` safe to print to a terminal: each control character (C0 bytes,
// DEL, and U+0080..U+009F in UTF-8) written as \xHH (or \u00HH for the
// C1 ones), so a name or an owner that holds ESC or a newline can neither
// drive the terminal nor forge a line. Everything else is left as it is.
std::string Printable(std::string_view text);

// Rows under a header, each column as wide as its widest cell, columns
// separated by two spaces, a dashed rule under the header; the last column
// is not padded. Rows shorter than the header are padded with empty cells.
// Every cell is passed through Printable.
std::string FormatTable(const std::vector<std::string>& header,
                        const std::vector<std::vector<std::string>>& rows);

// `text` as one shell word: as it is when it holds only characters no
// shell treats specially (letters, digits and _ . / : , @ % + = -), else in
// single quotes (each ' written as '\'').
std::string ShellWord(const std::string& text);

// The shell lines `tempest dev` prints before `ready`, for
// `eval "$(tempest dev ... | grep ^export)"` or copy-paste:
// export TEMPEST_NIMBUS=H:P, export BOOTSTRAP=H:P[,...], export TEMPEST_ZK=H:P
// and, when `token_file` is not empty, export TEMPEST_TOKEN_FILE=PATH, when
// `zk_auth_file` is not empty, export TEMPEST_ZK_AUTH_FILE=PATH (paths as
// ShellWords).
std::vector<std::string> DevExportLines(const std::string& nimbus, const std::string& bootstrap,
                                        const std::string& zookeeper,
                                        const std::string& token_file = "",
                                        const std::string& zk_auth_file = "");

// The web UI's address on nimbus's REST port `nimbus` (HOST:PORT, as nimbus
// prints it): http://HOST:PORT/, with 127.0.0.1 for a wildcard host
// (0.0.0.0, ::) and brackets around an IPv6 one. With a `token`, the UI
// takes it from the fragment: http://HOST:PORT/#token=TOKEN (percent-encoded
// but for letters, digits and - . _ ~).
std::string DevUiUrl(const std::string& nimbus, const std::string& token);

// What one poll of a topology that is not running yet saw.
struct RunningProgress {
  int executors_total = 0;
  int executors_running = 0;
  int workers_beating = 0;
  int workers_assigned = 0;  // -1: unknown
  int slots_free = -1;       // -1: unknown (the cluster summary was not read)
  int slots_total = -1;
  int supervisors = -1;
};

// Why `submit --until-running` still waits, in one short line, e.g.
// "0 free slots of 4; waiting" or "3/5 executors running in 1 worker; waiting".
// The text changes only when the reason does (no counters of time in it).
std::string RunningWaitReason(const RunningProgress& p);

// Storm 2's `rebalance -r RESOURCES_JSON` and `-t TOPOLOGY_CONF_JSON`: each
// given value must be a JSON object (else an error naming the flag); they
// are accepted but not applied, and the returned notes say so and why.
absl::StatusOr<std::vector<std::string>> StormRebalanceOverrideNotes(
    const std::string& resources, const std::string& topology_conf);

// The entry of `names` closest to `word` (api::ClosestName: edit distance
// with adjacent swaps, case-insensitive), or "" when none is close enough to
// be a likely misspelling.
std::string ClosestName(const std::string& word, const std::vector<std::string>& names);

// "; did you mean 'Y'?" for the entry of `names` closest to `word`, or ""
// when none is close: the one suggestion every "unknown X" message of the
// command line ends with.
std::string DidYouMean(const std::string& word, const std::vector<std::string>& names);

// "unknown command 'X'; did you mean 'Y'? (tempest --help)", without the
// "did you mean" part when nothing is close.
std::string UnknownCommandMessage(const std::string& word, const std::vector<std::string>& names);

// What is wrong with the command line `args` (argv without argv[0]) against
// `root`'s commands, for the mistakes CLI11 reports without a suggestion or
// under another error: an unknown command or subcommand at any level
// ("unknown subcommand 'shw' of 'tempest offsets'; did you mean 'show'?"),
// an unknown option of the command it follows (looked up in that command and
// the ones above it, as CLI11 does), and a command that needs a subcommand
// and got none (naming them). "" when none of these applies; everything
// else is left to CLI11. Stops at `--`, at a help or version flag, and at a
// command that takes everything after it (prefix_command).
std::string UsageProblem(const CLI::App& root, const std::vector<std::string>& args);

}  // namespace tempest::cli

#endif  // TEMPEST_CLI_CLI_TEXT_H_
