#ifndef TEMPEST_BOLTS_VERIFICATION_REPORT_H_
#define TEMPEST_BOLTS_VERIFICATION_REPORT_H_

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"

namespace tempest::bolts {

// What a set of verifier logs says about delivery. A plain value.
//
// A log holds plain lines (one integer value, or "!..." for a malformed
// input) and, from a deduplicating verifier (`dedup: true`), keyed lines
// (bolts/applied_offsets.h): "@topic partition offset value" counts like the
// plain value, "=topic partition offset" counts as deduplicated. Both kinds
// may be mixed, so logs written before dedup existed read as before.
//
// received   values read (integer lines and applied keyed lines; every copy
//            counts)
// unique     distinct values
// duplicated received - unique (extra copies: at-least-once redelivery)
// deduplicated replays a dedup sink dropped (acked, not applied again)
// max_copies the most copies of any one value (0 when nothing was received)
// expected   the count the values should cover as 0..expected-1, if known
// missing    values of 0..expected-1 never received (0 when expected unset)
// unexpected distinct values outside 0..expected-1 (0 when expected unset)
// malformed  lines that are not one integer or a well-formed keyed line
//            (also an applied keyed line whose value is not an integer, and
//            a malformed key), including a last line without its newline (a
//            write torn by a crash; never acknowledged)
struct VerificationReport {
  int64_t received = 0;
  int64_t unique = 0;
  int64_t missing = 0;
  int64_t duplicated = 0;
  int64_t deduplicated = 0;
  int64_t max_copies = 0;
  std::optional<int64_t> expected;
  int64_t unexpected = 0;
  int64_t malformed = 0;
  // The lowest missing values (at most kSampleSize), for humans.
  std::vector<int64_t> missing_sample;
  // "file:line" of the first malformed lines (at most kSampleSize).
  std::vector<std::string> malformed_sample;

  static constexpr int kSampleSize = 10;

  // Nothing missing, unexpected or malformed (duplicates are allowed: the
  // guarantee under test is at-least-once).
  bool Complete() const { return missing == 0 && unexpected == 0 && malformed == 0; }
};

// Reads verifier logs (one integer per line) and computes the report over
// all of them together. NotFound/Internal when a file cannot be read;
// InvalidArgument for a negative `expected`. Malformed lines are counted,
// never an error. When `unique_values` is non-null it receives the sorted
// distinct values. Pure apart from reading the files; any thread.
absl::StatusOr<VerificationReport> VerifyLogs(const std::vector<std::string>& paths,
                                              std::optional<int64_t> expected,
                                              std::vector<int64_t>* unique_values = nullptr);

// Calls `on_line(text, complete)` for every line of `path` in order, without
// its '\n'; `complete` is false for a final line lacking one (torn).
// NotFound/Internal when the file cannot be read.
absl::Status ForEachLogLine(const std::string& path,
                            const std::function<void(std::string_view, bool)>& on_line);

// The report as one JSON object on one line:
// {"received":N,"unique":N,"missing":N,"duplicated":N,"deduplicated":N,"max_copies":N,
//  "expected":N|null,"unexpected":N,"malformed":N,"complete":bool,
//  "missing_sample":[..],"malformed_sample":[..]}
std::string ReportToJson(const VerificationReport& report);
// A few human-readable lines (ending in '\n').
std::string ReportToText(const VerificationReport& report);

}  // namespace tempest::bolts

#endif  // TEMPEST_BOLTS_VERIFICATION_REPORT_H_
