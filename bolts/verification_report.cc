#include "bolts/verification_report.h"

#include <errno.h>
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <filesystem>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "bolts/applied_offsets.h"
#include "common/core/status_macros.h"
#include "nlohmann/json.hpp"

namespace tempest::bolts {

absl::Status ForEachLogLine(const std::string& path,
                            const std::function<void(std::string_view, bool)>& on_line) {
  std::FILE* f = std::fopen(path.c_str(), "rb");
  if (f == nullptr) {
    int err = errno;
    std::string msg = absl::StrCat("cannot read '", path, "': ", std::strerror(err));
    return err == ENOENT ? absl::NotFoundError(msg) : absl::InternalError(msg);
  }
  std::string pending;
  char buf[1 << 16];
  size_t n;
  while ((n = std::fread(buf, 1, sizeof(buf), f)) > 0) {
    size_t start = 0;
    for (size_t i = 0; i < n; ++i) {
      if (buf[i] != '\n') continue;
      if (pending.empty()) {
        on_line(std::string_view(buf + start, i - start), true);
      } else {
        pending.append(buf + start, i - start);
        on_line(std::string_view(pending), true);
        pending.clear();
      }
      start = i + 1;
    }
    pending.append(buf + start, n - start);
  }
  bool read_error = std::ferror(f) != 0;
  std::fclose(f);
  if (read_error) return absl::InternalError(absl::StrCat("error reading '", path, "'"));
  if (!pending.empty()) on_line(std::string_view(pending), false);
  return absl::OkStatus();
}

namespace {

bool ParseValue(std::string_view text, int64_t* v) {
  return absl::SimpleAtoi(absl::string_view(text.data(), text.size()), v);
}

// Adds the values of the log at `path` to `values`, and its dropped replays
// and malformed lines to `r`.
absl::Status ReadLogValues(const std::string& path, VerificationReport& r,
                           std::vector<int64_t>& values) {
  int64_t line_no = 0;
  return ForEachLogLine(path, [&](std::string_view line, bool complete) {
    ++line_no;
    int64_t v;
    if (complete && !line.empty() && (line[0] == '@' || line[0] == '=')) {
      std::optional<DedupLine> keyed = ParseDedupLine(line);
      if (keyed.has_value() && keyed->kind == DedupLine::Kind::kDropped) {
        ++r.deduplicated;
        return;
      }
      if (keyed.has_value() && ParseValue(keyed->payload, &v)) {
        values.push_back(v);
        return;
      }
    } else if (complete && ParseValue(line, &v)) {
      values.push_back(v);
      return;
    }
    ++r.malformed;
    if (static_cast<int>(r.malformed_sample.size()) < VerificationReport::kSampleSize) {
      r.malformed_sample.push_back(absl::StrCat(path, ":", line_no));
    }
  });
}

// The distinct values, sorted; counts what was received, the copies and the
// most copies of one value into `r`.
std::vector<int64_t> CountCopies(std::vector<int64_t> values, VerificationReport& r) {
  r.received = static_cast<int64_t>(values.size());
  std::sort(values.begin(), values.end());
  std::vector<int64_t> unique;
  unique.reserve(values.size());
  int64_t copies = 0;
  for (size_t i = 0; i < values.size(); ++i) {
    if (i == 0 || values[i] != values[i - 1]) {
      unique.push_back(values[i]);
      copies = 0;
    }
    r.max_copies = std::max(r.max_copies, ++copies);
  }
  r.unique = static_cast<int64_t>(unique.size());
  r.duplicated = r.received - r.unique;
  return unique;
}

// Which of 0..expected-1 are missing from `unique` (sorted), and how many
// values lie outside that range.
void CountMissing(const std::vector<int64_t>& unique, int64_t expected, VerificationReport& r) {
  int64_t in_range = 0;
  auto it = unique.begin();
  for (int64_t want = 0; want < expected; ++want) {
    while (it != unique.end() && *it < want) ++it;
    if (it != unique.end() && *it == want) {
      ++in_range;
    } else if (static_cast<int>(r.missing_sample.size()) < VerificationReport::kSampleSize) {
      r.missing_sample.push_back(want);
    }
  }
  r.missing = expected - in_range;
  r.unexpected = r.unique - in_range;
}

}  // namespace

absl::StatusOr<VerificationReport> VerifyLogs(const std::vector<std::string>& paths,
                                              std::optional<int64_t> expected,
                                              std::vector<int64_t>* unique_values) {
  if (expected.has_value() && *expected < 0) {
    return absl::InvalidArgumentError(absl::StrCat("expected must be >= 0, got ", *expected));
  }
  VerificationReport r;
  r.expected = expected;
  std::vector<int64_t> values;
  for (const std::string& path : paths) RETURN_IF_ERROR(ReadLogValues(path, r, values));
  std::vector<int64_t> unique = CountCopies(std::move(values), r);
  if (expected.has_value()) CountMissing(unique, *expected, r);
  if (unique_values != nullptr) *unique_values = std::move(unique);
  return r;
}

std::string ReportToJson(const VerificationReport& r) {
  nlohmann::ordered_json j;
  j["received"] = r.received;
  j["unique"] = r.unique;
  j["missing"] = r.missing;
  j["duplicated"] = r.duplicated;
  j["deduplicated"] = r.deduplicated;
  j["max_copies"] = r.max_copies;
  j["expected"] = r.expected.has_value() ? nlohmann::ordered_json(*r.expected) : nullptr;
  j["unexpected"] = r.unexpected;
  j["malformed"] = r.malformed;
  j["complete"] = r.Complete();
  j["missing_sample"] = r.missing_sample;
  j["malformed_sample"] = r.malformed_sample;
  return j.dump();
}

std::string ReportToText(const VerificationReport& r) {
  std::string out =
      absl::StrCat("received:   ", r.received, "\nunique:     ", r.unique,
                   "\nduplicated: ", r.duplicated, " (max copies of one value: ", r.max_copies,
                   ")\ndeduplicated: ", r.deduplicated, " (replays a dedup sink dropped)\n");
  if (r.expected.has_value()) {
    absl::StrAppend(&out, "expected:   0..", *r.expected - 1, " (", *r.expected, " values)\n",
                    "missing:    ", r.missing);
    if (!r.missing_sample.empty()) {
      absl::StrAppend(&out, " (lowest: ", absl::StrJoin(r.missing_sample, ", "), ")");
    }
    absl::StrAppend(&out, "\nunexpected: ", r.unexpected, " (outside 0..", *r.expected - 1, ")\n");
  } else {
    absl::StrAppend(&out, "expected:   not given (missing not checked)\n");
  }
  absl::StrAppend(&out, "malformed:  ", r.malformed);
  if (!r.malformed_sample.empty()) {
    absl::StrAppend(&out, " (first at ", absl::StrJoin(r.malformed_sample, ", "), ")");
  }
  // "complete" means nothing is missing; duplicates are at-least-once's
  // replays and do not make a report incomplete, but they are named here so
  // that a log appended to by two runs does not read as one clean run.
  std::string verdict =
      r.Complete() ? "complete" : "INCOMPLETE (missing, unexpected or malformed)";
  if (r.duplicated > 0) {
    absl::StrAppend(&verdict, r.Complete() ? " with " : "; also ", r.duplicated,
                    " duplicates (replays, or a log written by more than one run)");
  }
  absl::StrAppend(&out, "\nresult:     ", verdict, "\n");
  return out;
}

}  // namespace tempest::bolts
