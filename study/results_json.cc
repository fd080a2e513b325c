#include "study/results_json.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "common/core/status_macros.h"
#include "nlohmann/json.hpp"
#include "spout/kafka/offsets/offset_journal.h"
#include "study/range_explanation.h"
#include "study/run_analysis.h"

namespace tempest::study {
namespace {

// ordered_json keeps the fields in the order written, so results.json reads
// top-down like the struct.
using Json = nlohmann::ordered_json;

// ---------------------------------------------------------------------------
// results.json

Json Number(double v) { return std::isfinite(v) ? Json(v) : Json(nullptr); }

Json OptionalNumber(const std::optional<double>& v) {
  return v.has_value() ? Number(*v) : Json(nullptr);
}

// A range with the journal entry it rests on as the journal's own JSON
// object (plus its sequence), or null.
Json RangeToJson(const RangeExplanation& r) {
  Json entry = nullptr;
  if (r.entry.has_value()) {
    entry = Json::parse(spout::EncodeJournalEntry(*r.entry), nullptr, /*allow_exceptions=*/false);
    if (entry.is_object()) {
      entry["sequence"] = r.entry->sequence;
    } else {
      entry = nullptr;
    }
  }
  return Json{{"partition", r.partition},
              {"first", r.first},
              {"last", r.last},
              {"count", r.count},
              {"kind", std::string(RangeKindName(r.kind))},
              {"cause", r.cause},
              {"entry", std::move(entry)}};
}

Json DedupSinkToJson(const std::optional<DedupSinkResult>& dedup) {
  if (!dedup.has_value()) return nullptr;
  return Json{{"lost", dedup->lost},
              {"duplicated", dedup->duplicated},
              {"deduplicated", dedup->deduplicated},
              {"expected_loss", dedup->expected_loss}};
}

Json CommitPathToJson(const std::optional<CommitPathFigures>& commit_path) {
  if (!commit_path.has_value()) return nullptr;
  const CommitPathFigures& c = *commit_path;
  return Json{{"multis", c.multis},
              {"failures", c.failures},
              {"denied", c.denied},
              {"coalesced", c.coalesced},
              {"pending_max", c.pending_max},
              {"in_flight_max", c.in_flight_max},
              {"latency_p99_ms", c.latency_p99_ms},
              {"latency_max_ms", c.latency_max_ms},
              {"ambiguous_writes", c.ambiguous_writes},
              {"readings", c.readings}};
}

// rebalance-under-load's workers, moves and output gap.
Json RebalanceToJson(const RebalanceFigures& f) {
  Json settle = Json::array();
  for (double s : f.settle_s) settle.push_back(Number(s));
  Json moved = Json::array();
  for (double s : f.moved_at_s) moved.push_back(Number(s));
  Json gaps = Json::array();
  for (double g : f.gaps_s) gaps.push_back(Number(g));
  return Json{{"workers_before", f.workers_before},
              {"restarted", f.restarted},
              {"kept", f.kept},
              {"applied", f.applied},
              {"settle_s", std::move(settle)},
              {"moved_at_s", std::move(moved)},
              {"gaps_s", std::move(gaps)},
              {"output_gap_s", OptionalNumber(f.output_gap_s)}};
}

// upgrade-under-load's command and output gap.
Json UpgradeToJson(const UpgradeFigures& f) {
  return Json{{"applied", f.applied},
              {"at_s", Number(f.at_s)},
              {"took_s", Number(f.took_s)},
              {"command_gap_s", OptionalNumber(f.command_gap_s)},
              {"drain_s", OptionalNumber(f.drain_s)},
              {"output_gap_s", OptionalNumber(f.output_gap_s)}};
}

// A partition scenario's fence, recovery and bounds, appended to `j`.
void AddPartitionFigures(const RunResult& run, Json& j) {
  j["fence_expected"] = run.fence_expected;
  j["fence_s"] = OptionalNumber(run.fence_s);
  j["recover_s"] = OptionalNumber(run.recover_s);
  j["leader_writes_after_loss"] = run.leader_writes_after_loss.has_value()
                                      ? Json(*run.leader_writes_after_loss)
                                      : Json(nullptr);
  Json bounds = Json::array();
  for (const BoundCheck& b : run.bounds) {
    bounds.push_back(
        Json{{"figure", b.figure}, {"value", b.value}, {"bound", b.bound}, {"pass", b.pass}});
  }
  j["bounds"] = std::move(bounds);
}

// Samples as compact [t_s, sink_received, committed, log_end] arrays.
Json SamplesToJson(const std::vector<Sample>& samples) {
  Json out = Json::array();
  for (const Sample& s : samples) {
    out.push_back(Json::array({Number(s.t_s), s.sink_received, s.committed, s.log_end}));
  }
  return out;
}

Json RunToJson(const RunResult& run) {
  Json j = Json::object();
  j["scenario"] = run.scenario;
  j["guarantee"] = run.guarantee;
  j["fault"] = run.fault;
  j["records"] = run.records;
  j["lost"] = run.lost;
  j["duplicated"] = run.duplicated;
  j["max_copies"] = run.max_copies;
  j["replayed"] = run.replayed;
  j["offset_regressions"] = run.offset_regressions;
  j["committed_not_processed"] = run.committed_not_processed;
  j["processed_not_committed"] = run.processed_not_committed;
  j["commit_blocked_s"] = Number(run.commit_blocked_s);
  j["zombie_commits"] = run.zombie_commits;
  j["fault_planned_s"] = OptionalNumber(run.fault_planned_s);
  j["fault_start_s"] = OptionalNumber(run.fault_start_s);
  j["fault_held_for_flow"] = run.fault_held_for_flow;
  j["fault_end_s"] = OptionalNumber(run.fault_end_s);
  j["recovery_s"] = OptionalNumber(run.recovery_s);
  j["throughput_before"] = Number(run.throughput_before);
  j["throughput_during"] = Number(run.throughput_during);
  j["throughput_after"] = Number(run.throughput_after);
  j["expected_loss"] = run.expected_loss;
  j["quiesced"] = run.quiesced;
  j["dedup_sink"] = DedupSinkToJson(run.dedup_sink);
  j["commit_path"] = CommitPathToJson(run.commit_path);
  if (run.rebalance.has_value()) j["rebalance"] = RebalanceToJson(*run.rebalance);
  if (run.upgrade.has_value()) j["upgrade"] = UpgradeToJson(*run.upgrade);
  // Partition scenarios (multi-host) only: their fence, recovery and bounds.
  if (!run.bounds.empty()) AddPartitionFigures(run, j);
  j["not_tested"] = run.not_tested;
  j["not_tested_reason"] = run.not_tested_reason;
  j["violations"] = run.violations;
  Json ranges = Json::array();
  for (const RangeExplanation& r : run.ranges) ranges.push_back(RangeToJson(r));
  j["ranges"] = std::move(ranges);
  j["ranges_omitted"] = run.ranges_omitted;
  j["samples"] = SamplesToJson(run.samples);
  return j;
}

// One value as compact JSON. Invalid UTF-8 in a string (it would make
// nlohmann throw) is replaced rather than failing the report.
std::string Compact(const Json& j) {
  return j.dump(-1, ' ', false, Json::error_handler_t::replace);
}

// Like dump(2), except that an array of numbers (a sample) stays on one line:
// a run has thousands of samples and one number per line would make
// results.json unreadable.
void AppendPretty(const Json& j, int indent, std::string* out) {
  const std::string pad(static_cast<size_t>(indent) + 2, ' ');
  if (j.is_object()) {
    if (j.empty()) {
      out->append("{}");
      return;
    }
    out->append("{\n");
    bool first = true;
    for (const auto& [key, value] : j.items()) {
      if (!first) out->append(",\n");
      first = false;
      absl::StrAppend(out, pad, Compact(Json(key)), ": ");
      AppendPretty(value, indent + 2, out);
    }
    absl::StrAppend(out, "\n", std::string(static_cast<size_t>(indent), ' '), "}");
  } else if (j.is_array()) {
    const bool numbers =
        std::all_of(j.begin(), j.end(), [](const Json& e) { return e.is_number() || e.is_null(); });
    if (j.empty() || numbers) {
      out->append("[");
      bool first = true;
      for (const Json& e : j) {
        if (!first) out->append(", ");
        first = false;
        out->append(Compact(e));
      }
      out->append("]");
      return;
    }
    out->append("[\n");
    bool first = true;
    for (const Json& e : j) {
      if (!first) out->append(",\n");
      first = false;
      out->append(pad);
      AppendPretty(e, indent + 2, out);
    }
    absl::StrAppend(out, "\n", std::string(static_cast<size_t>(indent), ' '), "]");
  } else {
    out->append(Compact(j));
  }
}

// Reads the fields of one JSON object into plain values, naming the object
// in errors. Keeps the first error and ignores later calls, so a parser can
// read every field and check status() once.
class FieldReader {
 public:
  FieldReader(const Json& object, std::string where) : object_(object), where_(std::move(where)) {}

  const absl::Status& status() const { return status_; }

  void Int(const char* key, int64_t* out) {
    const Json* v = Required(key);
    if (v != nullptr) ToInt(*v, absl::StrCat("\"", key, "\""), out);
  }

  void Uint(const char* key, uint64_t* out) {
    const Json* v = Required(key);
    if (v == nullptr) return;
    if (v->is_number_unsigned()) {
      *out = v->get<uint64_t>();
    } else {
      Fail(absl::StrCat("\"", key, "\" must be a non-negative integer, got ", Describe(*v)));
    }
  }

  // A null reads as NaN: that is how a non-finite value is written.
  void Double(const char* key, double* out) {
    const Json* v = Required(key);
    if (v == nullptr) return;
    if (v->is_null()) {
      *out = std::numeric_limits<double>::quiet_NaN();
    } else if (v->is_number()) {
      *out = v->get<double>();
    } else {
      Fail(absl::StrCat("\"", key, "\" must be a number, got ", Describe(*v)));
    }
  }

  void OptionalDouble(const char* key, std::optional<double>* out) {
    out->reset();
    if (!status_.ok()) return;
    auto it = object_.find(key);
    if (it == object_.end() || it->is_null()) return;
    if (!it->is_number()) {
      Fail(absl::StrCat("\"", key, "\" must be a number or null, got ", Describe(*it)));
      return;
    }
    *out = it->get<double>();
  }

  void String(const char* key, std::string* out) {
    const Json* v = Required(key);
    if (v == nullptr) return;
    if (v->is_string()) {
      *out = v->get<std::string>();
    } else {
      Fail(absl::StrCat("\"", key, "\" must be a string, got ", Describe(*v)));
    }
  }

  void Bool(const char* key, bool* out) {
    const Json* v = Required(key);
    if (v == nullptr) return;
    if (v->is_boolean()) {
      *out = v->get<bool>();
    } else {
      Fail(absl::StrCat("\"", key, "\" must be true or false, got ", Describe(*v)));
    }
  }

  // The value under `key` if it is an array; nullptr (and an error) if not.
  const Json* Array(const char* key) {
    const Json* v = Required(key);
    if (v == nullptr) return nullptr;
    if (!v->is_array()) {
      Fail(absl::StrCat("\"", key, "\" must be a list, got ", Describe(*v)));
      return nullptr;
    }
    return v;
  }

  // `what` names the value in the error (a key, or "samples[3][1]").
  void ToInt(const Json& v, const std::string& what, int64_t* out) {
    if (!status_.ok()) return;
    if (v.is_number_unsigned()) {
      const uint64_t u = v.get<uint64_t>();
      if (u > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) {
        Fail(absl::StrCat(what, " is out of range: ", u));
        return;
      }
      *out = static_cast<int64_t>(u);
    } else if (v.is_number_integer()) {
      *out = v.get<int64_t>();
    } else if (v.is_number_float() && std::isfinite(v.get<double>()) &&
               v.get<double>() == std::floor(v.get<double>()) &&
               std::fabs(v.get<double>()) < 9.2e18) {
      // Tolerated so a file rewritten by another tool ("3.0") still reads.
      *out = static_cast<int64_t>(v.get<double>());
    } else {
      Fail(absl::StrCat(what, " must be an integer, got ", Describe(v)));
    }
  }

  void Fail(const std::string& message) {
    if (status_.ok()) status_ = absl::InvalidArgumentError(absl::StrCat(where_, ": ", message));
  }

  static std::string Describe(const Json& v) {
    if (v.is_string() || v.is_number() || v.is_boolean() || v.is_null()) {
      std::string text = Compact(v);
      if (text.size() > 40) text = absl::StrCat(text.substr(0, 37), "...");
      return absl::StrCat(v.type_name(), " ", text);
    }
    return v.type_name();
  }

 private:
  const Json* Required(const char* key) {
    if (!status_.ok()) return nullptr;
    auto it = object_.find(key);
    if (it == object_.end()) {
      Fail(absl::StrCat("\"", key, "\" is missing"));
      return nullptr;
    }
    return &*it;
  }

  const Json& object_;
  std::string where_;
  absl::Status status_;
};

// The run's figures below its name: every plain field up to `quiesced`.
void ReadRunFigures(const Json& j, FieldReader& f, RunResult& run) {
  f.String("fault", &run.fault);
  f.Int("records", &run.records);
  f.Int("lost", &run.lost);
  f.Int("duplicated", &run.duplicated);
  f.Int("max_copies", &run.max_copies);
  f.Int("replayed", &run.replayed);
  f.Int("offset_regressions", &run.offset_regressions);
  f.Int("committed_not_processed", &run.committed_not_processed);
  f.Int("processed_not_committed", &run.processed_not_committed);
  f.Double("commit_blocked_s", &run.commit_blocked_s);
  // Absent in results written before zombie commits were counted.
  if (j.contains("zombie_commits")) f.Int("zombie_commits", &run.zombie_commits);
  f.OptionalDouble("fault_planned_s", &run.fault_planned_s);
  f.OptionalDouble("fault_start_s", &run.fault_start_s);
  // Absent in results written before faults waited for the pipelines.
  if (j.contains("fault_held_for_flow")) f.Bool("fault_held_for_flow", &run.fault_held_for_flow);
  f.OptionalDouble("fault_end_s", &run.fault_end_s);
  f.OptionalDouble("recovery_s", &run.recovery_s);
  f.Double("throughput_before", &run.throughput_before);
  f.Double("throughput_during", &run.throughput_during);
  f.Double("throughput_after", &run.throughput_after);
  f.Int("expected_loss", &run.expected_loss);
  f.Bool("quiesced", &run.quiesced);
}

// `dedup_sink`: an object, or null or absent for runs without one.
absl::Status ReadDedupSink(const Json& j, const std::string& where, RunResult& run) {
  auto it = j.find("dedup_sink");
  if (it == j.end() || it->is_null()) return absl::OkStatus();
  if (!it->is_object()) {
    return absl::InvalidArgumentError(absl::StrCat(
        where, ": \"dedup_sink\" must be an object or null, got ", FieldReader::Describe(*it)));
  }
  DedupSinkResult dedup;
  FieldReader d(*it, absl::StrCat(where, ": dedup_sink"));
  d.Int("lost", &dedup.lost);
  d.Int("duplicated", &dedup.duplicated);
  d.Int("deduplicated", &dedup.deduplicated);
  // Older results have no expected_loss for the dedup sink: 0.
  if (it->contains("expected_loss")) d.Int("expected_loss", &dedup.expected_loss);
  RETURN_IF_ERROR(d.status());
  run.dedup_sink = dedup;
  return absl::OkStatus();
}

// A list of numbers under `key` of `j` (read through `d`); absent: none.
void ReadNumbers(const Json& j, FieldReader& d, const char* key, std::vector<double>* out) {
  if (!j.contains(key)) return;
  const Json* list = d.Array(key);
  if (list == nullptr) return;
  for (const Json& v : *list) {
    if (!v.is_number()) {
      d.Fail(absl::StrCat("\"", key, "\" must hold numbers, got ", FieldReader::Describe(v)));
      return;
    }
    out->push_back(v.get<double>());
  }
}

// `rebalance`: an object, or null or absent (every scenario but
// rebalance-under-load).
absl::Status ReadRebalance(const Json& j, const std::string& where, RunResult& run) {
  auto it = j.find("rebalance");
  if (it == j.end() || it->is_null()) return absl::OkStatus();
  if (!it->is_object()) {
    return absl::InvalidArgumentError(absl::StrCat(
        where, ": \"rebalance\" must be an object or null, got ", FieldReader::Describe(*it)));
  }
  RebalanceFigures f;
  FieldReader d(*it, absl::StrCat(where, ": rebalance"));
  d.Int("workers_before", &f.workers_before);
  d.Int("restarted", &f.restarted);
  d.Int("kept", &f.kept);
  d.Int("applied", &f.applied);
  d.OptionalDouble("output_gap_s", &f.output_gap_s);
  ReadNumbers(*it, d, "settle_s", &f.settle_s);
  ReadNumbers(*it, d, "moved_at_s", &f.moved_at_s);
  ReadNumbers(*it, d, "gaps_s", &f.gaps_s);
  RETURN_IF_ERROR(d.status());
  run.rebalance = std::move(f);
  return absl::OkStatus();
}

// `upgrade`: an object, or null or absent (every scenario but
// upgrade-under-load).
absl::Status ReadUpgrade(const Json& j, const std::string& where, RunResult& run) {
  auto it = j.find("upgrade");
  if (it == j.end() || it->is_null()) return absl::OkStatus();
  if (!it->is_object()) {
    return absl::InvalidArgumentError(absl::StrCat(
        where, ": \"upgrade\" must be an object or null, got ", FieldReader::Describe(*it)));
  }
  UpgradeFigures f;
  FieldReader d(*it, absl::StrCat(where, ": upgrade"));
  d.Int("applied", &f.applied);
  d.Double("at_s", &f.at_s);
  d.Double("took_s", &f.took_s);
  d.OptionalDouble("command_gap_s", &f.command_gap_s);
  d.OptionalDouble("drain_s", &f.drain_s);
  d.OptionalDouble("output_gap_s", &f.output_gap_s);
  RETURN_IF_ERROR(d.status());
  run.upgrade = std::move(f);
  return absl::OkStatus();
}

// `commit_path`: an object, or null or absent.
absl::Status ReadCommitPath(const Json& j, const std::string& where, RunResult& run) {
  auto it = j.find("commit_path");
  if (it == j.end() || it->is_null()) return absl::OkStatus();
  if (!it->is_object()) {
    return absl::InvalidArgumentError(absl::StrCat(
        where, ": \"commit_path\" must be an object or null, got ", FieldReader::Describe(*it)));
  }
  CommitPathFigures c;
  FieldReader d(*it, absl::StrCat(where, ": commit_path"));
  d.Int("multis", &c.multis);
  d.Int("failures", &c.failures);
  d.Int("denied", &c.denied);
  d.Int("coalesced", &c.coalesced);
  d.Int("pending_max", &c.pending_max);
  d.Int("in_flight_max", &c.in_flight_max);
  d.Int("latency_p99_ms", &c.latency_p99_ms);
  d.Int("latency_max_ms", &c.latency_max_ms);
  d.Int("ambiguous_writes", &c.ambiguous_writes);
  d.Int("readings", &c.readings);
  RETURN_IF_ERROR(d.status());
  run.commit_path = c;
  return absl::OkStatus();
}

void ReadViolations(FieldReader& f, RunResult& run) {
  const Json* violations = f.Array("violations");
  if (violations == nullptr) return;
  for (size_t i = 0; i < violations->size(); ++i) {
    const Json& v = (*violations)[i];
    if (!v.is_string()) {
      f.Fail(absl::StrCat("violations[", i, "] must be a string, got ", FieldReader::Describe(v)));
      break;
    }
    run.violations.push_back(v.get<std::string>());
  }
}

// One element of `ranges`; its entry decodes as the journal's own JSON.
absl::StatusOr<RangeExplanation> RangeFromJson(const Json& j, const std::string& where) {
  if (!j.is_object()) {
    return absl::InvalidArgumentError(
        absl::StrCat(where, " must be an object, got ", FieldReader::Describe(j)));
  }
  RangeExplanation r;
  FieldReader f(j, where);
  int64_t partition = 0;
  f.Int("partition", &partition);
  f.Int("first", &r.first);
  f.Int("last", &r.last);
  f.Int("count", &r.count);
  std::string kind;
  f.String("kind", &kind);
  f.String("cause", &r.cause);
  RETURN_IF_ERROR(f.status());
  r.partition = static_cast<int>(partition);
  std::optional<RangeKind> parsed = ParseRangeKind(kind);
  if (!parsed.has_value()) {
    return absl::InvalidArgumentError(
        absl::StrCat(where, ": \"kind\" must be \"lost\" or \"duplicated\", got \"", kind, "\""));
  }
  r.kind = *parsed;
  auto it = j.find("entry");
  if (it == j.end() || it->is_null()) return r;
  absl::StatusOr<spout::JournalEntry> entry = spout::DecodeJournalEntry(Compact(*it));
  if (!entry.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat(where, ": \"entry\": ", entry.status().message()));
  }
  if (auto seq = it->find("sequence"); seq != it->end()) {
    FieldReader e(*it, absl::StrCat(where, ": entry"));
    e.Int("sequence", &entry->sequence);
    RETURN_IF_ERROR(e.status());
  }
  r.entry = *std::move(entry);
  return r;
}

// The partition figures: present only for the multi-host scenarios' runs.
absl::Status ReadPartitionFigures(const Json& j, const std::string& where, RunResult& run) {
  if (!j.contains("bounds")) return absl::OkStatus();
  FieldReader f(j, where);
  f.Bool("fence_expected", &run.fence_expected);
  f.OptionalDouble("fence_s", &run.fence_s);
  f.OptionalDouble("recover_s", &run.recover_s);
  if (j.contains("leader_writes_after_loss") && !j["leader_writes_after_loss"].is_null()) {
    int64_t writes = 0;
    f.Int("leader_writes_after_loss", &writes);
    run.leader_writes_after_loss = writes;
  }
  const Json* bounds = f.Array("bounds");
  if (bounds == nullptr) return f.status();
  for (size_t i = 0; i < bounds->size() && f.status().ok(); ++i) {
    const Json& b = (*bounds)[i];
    if (!b.is_object()) {
      f.Fail(absl::StrCat("bounds[", i, "] must be an object, got ", FieldReader::Describe(b)));
      break;
    }
    FieldReader g(b, absl::StrCat(where, ": bounds[", i, "]"));
    BoundCheck check;
    g.String("figure", &check.figure);
    g.String("value", &check.value);
    g.String("bound", &check.bound);
    g.Bool("pass", &check.pass);
    RETURN_IF_ERROR(g.status());
    run.bounds.push_back(std::move(check));
  }
  return f.status();
}

// `ranges` and `ranges_omitted`: absent in results written before the study
// read the journal.
absl::Status ReadRanges(const Json& j, const std::string& where, RunResult& run) {
  FieldReader f(j, where);
  if (j.contains("ranges_omitted")) f.Int("ranges_omitted", &run.ranges_omitted);
  if (!j.contains("ranges") || j["ranges"].is_null()) return f.status();
  const Json* ranges = f.Array("ranges");
  if (ranges == nullptr) return f.status();
  for (size_t i = 0; i < ranges->size(); ++i) {
    ASSIGN_OR_RETURN(RangeExplanation r,
                     RangeFromJson((*ranges)[i], absl::StrCat(where, ": ranges[", i, "]")));
    run.ranges.push_back(std::move(r));
  }
  return f.status();
}

void ReadSamples(FieldReader& f, RunResult& run) {
  const Json* samples = f.Array("samples");
  if (samples == nullptr) return;
  run.samples.reserve(samples->size());
  for (size_t i = 0; i < samples->size() && f.status().ok(); ++i) {
    const Json& s = (*samples)[i];
    if (!s.is_array() || s.size() != 4) {
      f.Fail(absl::StrCat("samples[", i, "] must be [t_s, sink_received, committed, log_end], got ",
                          FieldReader::Describe(s)));
      break;
    }
    Sample sample;
    if (s[0].is_number()) {
      sample.t_s = s[0].get<double>();
    } else {
      f.Fail(absl::StrCat("samples[", i, "][0] (t_s) must be a number, got ",
                          FieldReader::Describe(s[0])));
    }
    f.ToInt(s[1], absl::StrCat("samples[", i, "][1] (sink_received)"), &sample.sink_received);
    f.ToInt(s[2], absl::StrCat("samples[", i, "][2] (committed)"), &sample.committed);
    f.ToInt(s[3], absl::StrCat("samples[", i, "][3] (log_end)"), &sample.log_end);
    run.samples.push_back(sample);
  }
}

// Results written before runs were marked have no not_tested: derive it, so
// that an old vacuous run does not pass when its report is redrawn.
void ReadNotTested(const Json& j, FieldReader& f, RunResult& run) {
  if (!f.status().ok()) return;
  if (!j.contains("not_tested")) {
    MarkNotTested(run);
    return;
  }
  f.Bool("not_tested", &run.not_tested);
  if (auto it = j.find("not_tested_reason"); it != j.end() && !it->is_null()) {
    f.String("not_tested_reason", &run.not_tested_reason);
  }
  if (f.status().ok() && run.not_tested && run.not_tested_reason.empty()) {
    run.not_tested_reason = "marked not tested";
  }
  if (!run.not_tested) run.not_tested_reason.clear();
}

absl::StatusOr<RunResult> RunFromJson(const Json& j, size_t index) {
  std::string where = absl::StrCat("study results: runs[", index, "]");
  if (!j.is_object()) {
    return absl::InvalidArgumentError(
        absl::StrCat(where, " must be an object, got ", FieldReader::Describe(j)));
  }
  RunResult run;
  {
    // Name the run in later errors when it names itself.
    FieldReader names(j, where);
    names.String("scenario", &run.scenario);
    names.String("guarantee", &run.guarantee);
    RETURN_IF_ERROR(names.status());
    absl::StrAppend(&where, " (", run.scenario, ", ", run.guarantee, ")");
  }
  FieldReader f(j, where);
  ReadRunFigures(j, f, run);
  RETURN_IF_ERROR(f.status());
  RETURN_IF_ERROR(ReadDedupSink(j, where, run));
  RETURN_IF_ERROR(ReadCommitPath(j, where, run));
  RETURN_IF_ERROR(ReadRebalance(j, where, run));
  RETURN_IF_ERROR(ReadUpgrade(j, where, run));
  ReadViolations(f, run);
  RETURN_IF_ERROR(ReadRanges(j, where, run));
  RETURN_IF_ERROR(ReadPartitionFigures(j, where, run));
  ReadSamples(f, run);
  ReadNotTested(j, f, run);
  RETURN_IF_ERROR(f.status());
  return run;
}

}  // namespace

std::string ResultsToJson(const StudyResults& r) {
  Json j = Json::object();
  j["seed"] = r.seed;
  j["records"] = r.records;
  j["rate"] = Number(r.rate);
  j["started_at"] = r.started_at;
  j["duration_s"] = Number(r.duration_s);
  Json runs = Json::array();
  for (const RunResult& run : r.runs) runs.push_back(RunToJson(run));
  j["runs"] = std::move(runs);
  std::string out;
  AppendPretty(j, 0, &out);
  out.append("\n");
  return out;
}

absl::StatusOr<StudyResults> ResultsFromJson(std::string_view text) {
  Json j;
  try {
    j = Json::parse(text);
  } catch (const Json::exception& e) {
    return absl::InvalidArgumentError(absl::StrCat("study results are not valid JSON: ", e.what()));
  }
  if (!j.is_object()) {
    return absl::InvalidArgumentError(
        absl::StrCat("study results must be a JSON object, got ", FieldReader::Describe(j)));
  }
  StudyResults r;
  FieldReader f(j, "study results");
  f.Uint("seed", &r.seed);
  f.Int("records", &r.records);
  f.Double("rate", &r.rate);
  f.String("started_at", &r.started_at);
  f.Double("duration_s", &r.duration_s);
  const Json* runs = f.Array("runs");
  RETURN_IF_ERROR(f.status());
  r.runs.reserve(runs->size());
  for (size_t i = 0; i < runs->size(); ++i) {
    ASSIGN_OR_RETURN(RunResult run, RunFromJson((*runs)[i], i));
    r.runs.push_back(std::move(run));
  }
  return r;
}


}  // namespace tempest::study
