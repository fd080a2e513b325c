#include "study/report.h"

#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <filesystem>
#include <limits>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_replace.h"
#include "common/os/child_process.h"
#include "common/os/files.h"
#include "nlohmann/json.hpp"
#include "study/run_analysis.h"

namespace tempest::study {
namespace {

// ordered_json keeps the fields in the order written, so results.json reads
// top-down like the struct.
using Json = nlohmann::ordered_json;

// How long one chart may take. gnuplot draws these in well under a second;
// the bound only keeps a wedged gnuplot from hanging the whole study.
constexpr std::chrono::seconds kGnuplotTimeout{60};

// The throughput line averages the sink's progress over this trailing window,
// so the 200 ms sampling jitter does not show as noise.
constexpr double kThroughputWindowS = 1.0;

// A fault healed within this long of its start (a kill, duration 0) is drawn
// as a line: as a shaded band it would be a few pixels wide at most.
constexpr double kInstantFaultS = 0.5;

// ---------------------------------------------------------------------------
// results.json

Json Number(double v) { return std::isfinite(v) ? Json(v) : Json(nullptr); }

Json OptionalNumber(const std::optional<double>& v) {
  return v.has_value() ? Number(*v) : Json(nullptr);
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
  if (run.dedup_sink.has_value()) {
    j["dedup_sink"] = Json{{"lost", run.dedup_sink->lost},
                           {"duplicated", run.dedup_sink->duplicated},
                           {"deduplicated", run.dedup_sink->deduplicated},
                           {"expected_loss", run.dedup_sink->expected_loss}};
  } else {
    j["dedup_sink"] = nullptr;
  }
  j["not_tested"] = run.not_tested;
  j["not_tested_reason"] = run.not_tested_reason;
  j["violations"] = run.violations;
  Json samples = Json::array();
  for (const Sample& s : run.samples) {
    samples.push_back(Json::array({Number(s.t_s), s.sink_received, s.committed, s.log_end}));
  }
  j["samples"] = std::move(samples);
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
    if (!names.status().ok()) return names.status();
    absl::StrAppend(&where, " (", run.scenario, ", ", run.guarantee, ")");
  }
  FieldReader f(j, where);
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
  if (!f.status().ok()) return f.status();

  if (auto it = j.find("dedup_sink"); it != j.end() && !it->is_null()) {
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
    if (!d.status().ok()) return d.status();
    run.dedup_sink = dedup;
  }

  if (const Json* violations = f.Array("violations"); violations != nullptr) {
    for (size_t i = 0; i < violations->size(); ++i) {
      const Json& v = (*violations)[i];
      if (!v.is_string()) {
        f.Fail(
            absl::StrCat("violations[", i, "] must be a string, got ", FieldReader::Describe(v)));
        break;
      }
      run.violations.push_back(v.get<std::string>());
    }
  }
  if (const Json* samples = f.Array("samples"); samples != nullptr) {
    run.samples.reserve(samples->size());
    for (size_t i = 0; i < samples->size() && f.status().ok(); ++i) {
      const Json& s = (*samples)[i];
      if (!s.is_array() || s.size() != 4) {
        f.Fail(absl::StrCat("samples[", i,
                            "] must be [t_s, sink_received, committed, log_end], got ",
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
  // Results written before runs were marked have no not_tested: derive it,
  // so that an old vacuous run does not pass when its report is redrawn.
  if (f.status().ok() && j.contains("not_tested")) {
    f.Bool("not_tested", &run.not_tested);
    if (auto it = j.find("not_tested_reason"); it != j.end() && !it->is_null()) {
      f.String("not_tested_reason", &run.not_tested_reason);
    }
    if (f.status().ok() && run.not_tested && run.not_tested_reason.empty()) {
      run.not_tested_reason = "marked not tested";
    }
    if (!run.not_tested) run.not_tested_reason.clear();
  } else if (f.status().ok()) {
    MarkNotTested(run);
  }
  if (!f.status().ok()) return f.status();
  return run;
}

// ---------------------------------------------------------------------------
// Formatting for report.md

constexpr char kAbsent[] = "–";

std::string Seconds(std::optional<double> s) {
  if (!s.has_value() || !std::isfinite(*s)) return kAbsent;
  return absl::StrFormat("%.1f", *s);
}

std::string Rate(double r) {
  if (!std::isfinite(r)) return kAbsent;
  // Whole records/s are precise enough above 10; below, the decimal matters.
  return std::fabs(r) >= 10 ? absl::StrFormat("%.0f", r) : absl::StrFormat("%.1f", r);
}

// Table cells must not contain '|' (it would split the cell) or newlines.
std::string Cell(const std::string& text) {
  return absl::StrReplaceAll(text, {{"|", "\\|"}, {"\n", " "}});
}

bool HasFault(const RunResult& run) { return run.fault_start_s.has_value(); }

std::string ThroughputCell(const RunResult& run) {
  // Without a fault there is no "during" or "after": a 0 there would read as
  // a collapse, so it shows as absent (a value the runner did set is kept).
  auto phase = [&](double v) { return !HasFault(run) && v == 0 ? std::string(kAbsent) : Rate(v); };
  return absl::StrCat(Rate(run.throughput_before), " / ", phase(run.throughput_during), " / ",
                      phase(run.throughput_after));
}

std::string DedupCell(const RunResult& run) {
  if (!run.dedup_sink.has_value()) return kAbsent;
  const DedupSinkResult& d = *run.dedup_sink;
  return absl::StrCat(d.lost, " / ", d.duplicated, " (", d.deduplicated, " dropped)");
}

// Where the study guide is, relative to the Tempest source tree.
constexpr char kGuidePath[] = "docs/study-guide.md";

// The sentence explaining a run's loss and duplication, with links to the
// guide's sections on the mechanisms it names.
std::string WhyCell(const RunResult& run) {
  const Explanation e = ExplainRun(run);
  std::vector<std::string> links;
  for (const std::string& section : e.guide_sections) {
    const std::string link = absl::StrCat("[guide](", kGuidePath, "#", section, ")");
    if (std::find(links.begin(), links.end(), link) != links.end()) continue;
    links.push_back(link);
  }
  if (links.empty()) return Cell(e.sentence);
  // The links go inside the sentence, before its full stop.
  std::string sentence = e.sentence;
  if (!sentence.empty() && sentence.back() == '.') sentence.pop_back();
  return Cell(absl::StrCat(sentence, " (", absl::StrJoin(links, ", "), ")."));
}

// ---------------------------------------------------------------------------
// Charts

// Guarantees in a fixed order (so colours and bar positions mean the same in
// every study), then any others in order of appearance.
std::vector<std::string> GuaranteesOf(const StudyResults& r) {
  std::vector<std::string> out = {"at-least-once", "at-most-once", "no-guarantee"};
  std::erase_if(out, [&](const std::string& g) {
    return std::none_of(r.runs.begin(), r.runs.end(),
                        [&](const RunResult& run) { return run.guarantee == g; });
  });
  for (const RunResult& run : r.runs) {
    if (std::find(out.begin(), out.end(), run.guarantee) == out.end()) {
      out.push_back(run.guarantee);
    }
  }
  return out;
}

std::vector<std::string> ScenariosOf(const StudyResults& r) {
  std::vector<std::string> out;
  for (const RunResult& run : r.runs) {
    if (std::find(out.begin(), out.end(), run.scenario) == out.end()) {
      out.push_back(run.scenario);
    }
  }
  return out;
}

std::string ColorOf(const std::string& guarantee, size_t index) {
  if (guarantee == "at-least-once") return "#1f77b4";
  if (guarantee == "at-most-once") return "#ff7f0e";
  if (guarantee == "no-guarantee") return "#d62728";
  static const char* const kOthers[] = {"#2ca02c", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f"};
  return kOthers[index % (sizeof(kOthers) / sizeof(kOthers[0]))];
}

// A file-name-safe form of a scenario or guarantee name.
std::string Slug(std::string_view name) {
  std::string out;
  for (char c : name) {
    const bool safe = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                      c == '-' || c == '_' || c == '.';
    out.push_back(safe ? c : '-');
  }
  if (out.empty() || out[0] == '.') out = absl::StrCat("x", out);
  return out;
}

// A gnuplot single-quoted string (only the quote itself needs escaping).
std::string GpQuote(const std::string& s) {
  return absl::StrCat("'", absl::StrReplaceAll(s, {{"'", "''"}, {"\n", " "}}), "'");
}

// A gnuplot double-quoted string of `lines` (double quotes expand "\n").
std::string GpDoubleQuote(const std::vector<std::string>& lines) {
  std::vector<std::string> escaped;
  for (const std::string& line : lines) {
    escaped.push_back(absl::StrReplaceAll(line, {{"\\", "\\\\"}, {"\"", "\\\""}, {"\n", " "}}));
  }
  return absl::StrCat("\"", absl::StrJoin(escaped, "\\n"), "\"");
}

// `name` in lines of at most `width` characters where it can be broken:
// after a '-', '_' or ' '. A part longer than `width` stays whole.
std::vector<std::string> WrapName(const std::string& name, size_t width) {
  std::vector<std::string> parts;  // each ends with its separator
  std::string part;
  for (char c : name) {
    part.push_back(c);
    if (c == '-' || c == '_' || c == ' ') {
      parts.push_back(std::move(part));
      part.clear();
    }
  }
  if (!part.empty()) parts.push_back(std::move(part));
  std::vector<std::string> lines;
  for (const std::string& p : parts) {
    if (!lines.empty() && lines.back().size() + p.size() <= width) {
      lines.back().append(p);
    } else {
      lines.push_back(p);
    }
  }
  for (std::string& line : lines) {
    if (line.size() > 1 && line.back() == ' ') line.pop_back();
  }
  return lines;
}

// A gnuplot data-file string column.
std::string DataQuote(const std::string& s) {
  return absl::StrCat("\"", absl::StrReplaceAll(s, {{"\"", "'"}, {"\n", " "}}), "\"");
}

std::string Num(double v) {
  if (!std::isfinite(v)) return "?";
  return absl::StrFormat("%.6g", v);
}

const RunResult* FindRun(const StudyResults& r, const std::string& scenario,
                         const std::string& guarantee) {
  for (const RunResult& run : r.runs) {
    if (run.scenario == scenario && run.guarantee == guarantee) return &run;
  }
  return nullptr;
}

// One chart: its gnuplot script and data files (relative to plot/), and the
// PNG the script writes (relative to the report directory).
struct Chart {
  std::string png;
  std::string script_name;
  std::string script;
  std::vector<std::pair<std::string, std::string>> data;  // file name, content
};

constexpr char kTerminal[] = "pngcairo noenhanced font 'DejaVu Sans,10'";

// "1k" rather than "1000" on an axis that spans decades.
std::string TickLabel(double v) {
  if (v >= 1e6) return absl::StrFormat("%.0fM", v / 1e6);
  if (v >= 1e3) return absl::StrFormat("%.0fk", v / 1e3);
  return absl::StrFormat("%.0f", v);
}

Chart LossDuplicatesChart(const StudyResults& r, const std::vector<std::string>& scenarios,
                          const std::vector<std::string>& guarantees) {
  Chart c;
  c.png = "loss-duplicates.png";
  c.script_name = "loss-duplicates.gp";
  const size_t g_count = guarantees.size();

  std::string data =
      "# Records lost and duplicated per scenario (rows) and guarantee; ? = not run.\n"
      "# scenario";
  for (const std::string& g : guarantees) absl::StrAppend(&data, " lost:", g);
  for (const std::string& g : guarantees) absl::StrAppend(&data, " duplicated:", g);
  data.append("\n");
  int64_t max_value = 0;
  for (const std::string& s : scenarios) {
    std::string lost, dup;
    for (const std::string& g : guarantees) {
      const RunResult* run = FindRun(r, s, g);
      absl::StrAppend(&lost, " ", run ? absl::StrCat(run->lost) : "?");
      absl::StrAppend(&dup, " ", run ? absl::StrCat(run->duplicated) : "?");
      if (run) max_value = std::max({max_value, run->lost, run->duplicated});
    }
    absl::StrAppend(&data, DataQuote(s), lost, dup, "\n");
  }
  c.data.emplace_back("loss-duplicates.dat", std::move(data));

  // The y axis is log10(1 + count): spans 0 to millions, and 0 stays at 0.
  // Ticks at 0, 1, 10, ... up to a decade that leaves room for the labels.
  double top = 10;
  while (std::log10(top + 1) < std::log10(static_cast<double>(max_value) + 1) + 0.35) top *= 10;
  // The tick at 1 would crowd the one at 0 on a tall axis.
  std::vector<std::string> ticks = {"'0' 0"};
  for (double t = top > 100 ? 10 : 1; t <= top; t *= 10) {
    ticks.push_back(absl::StrCat("'", TickLabel(t), "' ", t));
  }

  // Tick labels at the group centres (a data file's xtic() would sit under
  // one bar of the group). A long name is wrapped after its hyphens to the
  // width of its group; one that cannot be wrapped enough is slanted.
  const size_t width = std::max<size_t>(6, 820 / 7 / std::max<size_t>(1, scenarios.size()));
  bool slant = false;
  std::vector<std::vector<std::string>> names;
  for (const std::string& s : scenarios) {
    names.push_back(WrapName(s, width));
    for (const std::string& line : names.back()) slant = slant || line.size() > width;
  }
  // Room below each panel for the tick labels (gnuplot leaves one line).
  size_t label_lines = 1;
  for (size_t i = 0; i < scenarios.size(); ++i) {
    label_lines =
        // Slanted by 25 degrees a name rises about 0.2 line per character
        // (a character is half a line wide; sin 25 = 0.42).
        std::max(label_lines, slant ? (scenarios[i].size() * 22 + 99) / 100 + 1 : names[i].size());
  }
  std::vector<std::string> xtics;
  for (size_t i = 0; i < scenarios.size(); ++i) {
    const std::vector<std::string> one_line = {scenarios[i]};
    xtics.push_back(absl::StrCat(GpDoubleQuote(slant ? one_line : names[i]), " ", i));
  }

  const double bar = 0.8 / static_cast<double>(g_count);
  std::string gp = absl::StrCat(
      "# Lost and duplicated records by scenario and guarantee (tempest study).\n"
      "# Re-plot: cd into this directory and run `gnuplot ",
      c.script_name, "`.\n", "set terminal ", kTerminal, " size 900,640\n", "set output '../",
      c.png, "'\n",
      "set datafile missing '?'\n"
      "set style fill solid 0.85 noborder\n"
      "set nonlinear y via log10(y + 1) inverse 10**y - 1\n",
      "set yrange [0:", Num(top), "]\n", "set ytics (", absl::StrJoin(ticks, ", "), ")\n",
      "set grid ytics lc rgb '#dddddd'\n"
      "set xrange [-0.6:",
      Num(static_cast<double>(scenarios.size()) - 0.4), "]\n", "set xtics nomirror scale 0",
      slant ? " rotate by 25 right" : "", " (", absl::StrJoin(xtics, ", "), ")\n",
      "set ytics nomirror\n"
      "set border 3\n"
      "set lmargin 10\nset rmargin 3\nset bmargin ",
      label_lines + 1, "\n",
      "# Bar labels stay short (the exact counts are in report.md).\n"
      "label(v) = v < 1000 ? sprintf('%.0f', v) : v < 9950 ? sprintf('%.1fk', v / 1e3) : \\\n"
      "           v < 999500 ? sprintf('%.0fk', v / 1e3) : sprintf('%.1fM', v / 1e6)\n"
      "set multiplot layout 2,1 title 'Loss and duplicates by scenario and guarantee' "
      "font ',12'\n");

  auto panel = [&](const std::string& title, const std::string& ylabel, size_t first_col,
                   bool key) {
    absl::StrAppend(&gp, "set title ", GpQuote(title), "\n", "set ylabel ", GpQuote(ylabel), "\n",
                    key ? "set key outside top center horizontal samplen 1.5\n" : "unset key\n");
    std::vector<std::string> plots;
    for (size_t i = 0; i < g_count; ++i) {
      const std::string x = absl::StrCat(
          "($0 + ", Num((static_cast<double>(i) - (static_cast<double>(g_count) - 1) / 2) * bar),
          ")");
      const size_t col = first_col + i;
      plots.push_back(absl::StrCat("'loss-duplicates.dat' using ", x, ":", col, ":(",
                                   Num(bar * 0.95), ") with boxes lc rgb '",
                                   ColorOf(guarantees[i], i), "' title ", GpQuote(guarantees[i])));
      plots.push_back(absl::StrCat("'' using ", x, ":", col, ":(label($", col,
                                   ")) with labels offset 0,0.6 font ',8' notitle"));
    }
    absl::StrAppend(&gp, "plot ", absl::StrJoin(plots, ", \\\n     "), "\n");
  };
  panel("Lost (never reached the sink)", "records (log scale)", 2, true);
  panel("Duplicated (extra copies at the sink)", "records (log scale)", 2 + g_count, false);
  gp.append("unset multiplot\n");
  c.script = std::move(gp);
  return c;
}

// Per sample: the commit lag, and the sink's throughput over the trailing
// window ending at the sample. Trailing rather than centred so that no change
// shows before its cause: a drop starts exactly at the stall, and the rise
// exactly when the sink resumes.
std::string TimelineData(const RunResult& run, double* max_rate, double* max_lag, double* max_t) {
  std::string out =
      "# t_s sink_received committed log_end lag_records throughput_rec_s produced_rec_s\n"
      "# lag = log_end - committed (? while committed offsets were unreadable);\n"
      "# throughput = sink_received growth over the ~1 s ending at t_s;\n"
      "# produced = log_end growth over the same window (? once production ended).\n";
  // Production ended at the first sample holding the final log end.
  size_t production_end = run.samples.size();
  if (!run.samples.empty()) {
    const int64_t final_log_end = run.samples.back().log_end;
    for (size_t i = 0; i < run.samples.size(); ++i) {
      if (run.samples[i].log_end >= final_log_end) {
        production_end = i;
        break;
      }
    }
  }
  size_t window_start = 0;
  for (size_t i = 0; i < run.samples.size(); ++i) {
    const Sample& s = run.samples[i];
    std::string lag = "?";
    if (s.committed >= 0) {
      const double l = static_cast<double>(s.log_end - s.committed);
      lag = Num(l);
      *max_lag = std::max(*max_lag, l);
    }
    // The last sample at or before the window's start (each point spans at
    // least the window, so batchy sink writes do not show as spikes).
    while (window_start + 1 < i &&
           run.samples[window_start + 1].t_s <= s.t_s - kThroughputWindowS) {
      ++window_start;
    }
    std::string tp = "?";
    std::string produced = "?";
    if (i > 0) {
      const Sample& from = run.samples[window_start];
      const double dt = s.t_s - from.t_s;
      if (dt > 0) {
        const double rate = static_cast<double>(s.sink_received - from.sink_received) / dt;
        tp = Num(rate);
        *max_rate = std::max(*max_rate, rate);
        if (i <= production_end) {
          const double p = static_cast<double>(s.log_end - from.log_end) / dt;
          produced = Num(p);
          *max_rate = std::max(*max_rate, p);
        }
      }
    }
    *max_t = std::max(*max_t, s.t_s);
    absl::StrAppend(&out, Num(s.t_s), " ", s.sink_received, " ", s.committed, " ", s.log_end, " ",
                    lag, " ", tp, " ", produced, "\n");
  }
  return out;
}

// A tidy axis end at or above v (1, 1.2, 1.5, 2, ... 8 times a power of ten),
// so the lines use most of the panel's height.
double NiceCeil(double v) {
  if (!(v > 0)) return 1;
  const double p = std::pow(10, std::floor(std::log10(v)));
  for (double m : {1.0, 1.2, 1.5, 2.0, 2.5, 3.0, 4.0, 5.0, 6.0, 8.0}) {
    if (m * p >= v) return m * p;
  }
  return 10 * p;
}

std::optional<Chart> TimelineChart(const StudyResults& r, const std::string& scenario,
                                   const std::string& slug,
                                   const std::vector<std::string>& guarantees) {
  Chart c;
  c.png = absl::StrCat("timeline-", slug, ".png");
  c.script_name = absl::StrCat("timeline-", slug, ".gp");
  double max_rate = 0, max_lag = 0, max_t = 0;
  size_t points = 0;
  std::string fault;
  struct Line {
    std::string file, guarantee, color;
  };
  std::vector<Line> lines;
  std::vector<std::string> windows;
  bool shaded = false, instant = false, marked = false;  // for the key
  for (size_t i = 0; i < guarantees.size(); ++i) {
    const RunResult* run = FindRun(r, scenario, guarantees[i]);
    if (run == nullptr) continue;
    if (fault.empty()) fault = run->fault;
    const std::string color = ColorOf(guarantees[i], i);
    const std::string file = absl::StrCat("timeline-", slug, "--", Slug(guarantees[i]), ".dat");
    c.data.emplace_back(file, TimelineData(*run, &max_rate, &max_lag, &max_t));
    points += run->samples.size();
    lines.push_back({file, guarantees[i], color});
    // Each run's own fault window (the runs of one scenario inject at nearly,
    // not exactly, the same time), in translucent grey: where they overlap
    // the shade deepens, and it matches the key.
    if (run->fault_start_s.has_value() && std::isfinite(*run->fault_start_s)) {
      const double start = *run->fault_start_s;
      const bool healed = run->fault_end_s.has_value() && std::isfinite(*run->fault_end_s);
      if (healed && *run->fault_end_s - start >= kInstantFaultS) {
        windows.push_back(absl::StrCat("set object rect from first ", Num(start),
                                       ", graph 0 to first ", Num(*run->fault_end_s),
                                       ", graph 1 behind fc rgb '#808080'"
                                       " fs transparent solid 0.15 noborder\n"));
        shaded = true;
        max_t = std::max(max_t, *run->fault_end_s);
      } else if (healed) {
        // An instantaneous fault (a kill): a band this narrow would be
        // invisible, so a solid line in the run's colour, topped by a marker.
        windows.push_back(absl::StrCat("set arrow from first ", Num(start), ", graph 0 to first ",
                                       Num(start), ", graph 1 nohead front lw 2 lc rgb '", color,
                                       "'\n", "set label '' at first ", Num(start),
                                       ", graph 1 front point pt 9 ps 1.5 lc rgb '", color, "'\n"));
        instant = true;
      } else {
        // Never healed: a dashed marker at the injection.
        windows.push_back(absl::StrCat("set arrow from first ", Num(start), ", graph 0 to first ",
                                       Num(start), ", graph 1 nohead back lw 2 dt 2 lc rgb '",
                                       color, "'\n"));
        marked = true;
      }
      max_t = std::max(max_t, start);
    }
  }
  if (points < 2) return std::nullopt;  // nothing to draw a line through

  const std::string title =
      fault.empty() || fault == scenario
          ? absl::StrCat(scenario, ": sink throughput and commit lag")
          : absl::StrCat(scenario, " (fault: ", fault, "): sink throughput and commit lag");
  const double rate_top = NiceCeil(std::max(max_rate, r.rate) * 1.1);
  const double lag_top = NiceCeil(max_lag * 1.1);
  std::string gp =
      absl::StrCat("# ", Cell(title), " (tempest study).\n",
                   "# Re-plot: cd into this directory and run `gnuplot ", c.script_name, "`.\n",
                   "set terminal ", kTerminal, " size 900,500\n", "set output '../", c.png, "'\n",
                   "set datafile missing '?'\n"
                   "set xrange [0:",
                   Num(std::max(max_t, 1.0)), "]\n",
                   "set grid xtics ytics lc rgb '#dddddd'\n"
                   "set border 3\nset xtics nomirror\nset ytics nomirror\n"
                   "set lmargin 12\nset rmargin 3\n",
                   absl::StrJoin(windows, ""), "set multiplot layout 2,1 title ", GpQuote(title),
                   " font ',12'\n");

  // Throughput panel, with the produced rate for reference and a key entry
  // explaining the shading.
  absl::StrAppend(&gp, "set ylabel 'sink throughput (records/s)'\n",
                  "set yrange [0:", Num(rate_top), "]\n", "set format x ''\nunset xlabel\n",
                  "set key outside top center horizontal samplen 2\n");
  std::vector<std::string> plots;
  for (const Line& l : lines) {
    plots.push_back(absl::StrCat("'", l.file, "' using 1:6 with lines lw 2 lc rgb '", l.color,
                                 "' title ", GpQuote(l.guarantee)));
  }
  // The produced rate, measured from the log end (every run of a scenario
  // reads the same topic), ends where production ended.
  if (!lines.empty()) {
    plots.push_back(absl::StrCat("'", lines.front().file,
                                 "' using 1:7 with lines dt 3 lw 1.5 lc rgb '#555555' "
                                 "title 'produced'"));
  }
  if (shaded) {
    plots.push_back(
        "keyentry with boxes fc rgb '#808080' fs transparent solid 0.3 noborder "
        "title 'fault window'");
  }
  if (instant) {
    plots.push_back(
        "keyentry with linespoints lw 2 pt 9 ps 1.5 lc rgb '#555555' title 'fault (instant)'");
  }
  if (marked) {
    plots.push_back("keyentry with lines lw 2 dt 2 lc rgb '#555555' title 'fault (not healed)'");
  }
  absl::StrAppend(&gp, "plot ", absl::StrJoin(plots, ", \\\n     "), "\n");

  // Lag panel.
  absl::StrAppend(&gp, "set ylabel 'commit lag (records)'\n", "set yrange [0:", Num(lag_top), "]\n",
                  "set format x '%g'\nset xlabel 'time since production started (s)'\n",
                  "unset key\n");
  plots.clear();
  for (const Line& l : lines) {
    plots.push_back(absl::StrCat("'", l.file, "' using 1:5 with lines lw 2 lc rgb '", l.color,
                                 "' title ", GpQuote(l.guarantee)));
  }
  absl::StrAppend(&gp, "plot ", absl::StrJoin(plots, ", \\\n     "), "\nunset multiplot\n");
  c.script = std::move(gp);
  return c;
}

// The tail of gnuplot's output, for an error message.
std::string Tail(std::string text, size_t max_chars) {
  while (!text.empty() && (text.back() == '\n' || text.back() == ' ')) text.pop_back();
  if (text.size() > max_chars) text = text.substr(text.size() - max_chars);
  return absl::StrReplaceAll(text, {{"\n", " | "}});
}

// Runs gnuplot on one script in `plot_dir`, appending its output to `log`.
// FailedPrecondition when gnuplot cannot be started at all.
absl::Status RunGnuplot(const std::string& plot_dir, const std::string& script,
                        const std::string& log) {
  size_t log_before = 0;
  if (absl::StatusOr<std::string> before = os::ReadSmallFile(log, 64 << 20); before.ok()) {
    log_before = before->size();
  }
  os::ChildProcess::Options options;
  options.argv = {"gnuplot", script};
  options.working_dir = plot_dir;
  options.stdout_path = log;
  options.stderr_path = "=stdout";
  absl::StatusOr<std::unique_ptr<os::ChildProcess>> child = os::ChildProcess::Start(options);
  if (!child.ok()) {
    return absl::FailedPreconditionError(absl::StrCat(
        "gnuplot could not be run (install the gnuplot-nox package): ", child.status().message()));
  }
  std::optional<int> status = (*child)->WaitFor(kGnuplotTimeout);
  if (!status.has_value()) {
    (*child)->Kill();
    return absl::DeadlineExceededError(
        absl::StrCat("gnuplot ", script, " took longer than ", kGnuplotTimeout.count(), " s"));
  }
  if (WIFEXITED(*status) && WEXITSTATUS(*status) == 0) return absl::OkStatus();
  std::string output;
  if (absl::StatusOr<std::string> after = os::ReadSmallFile(log, 64 << 20);
      after.ok() && after->size() > log_before) {
    output = Tail(after->substr(log_before), 400);
  }
  return absl::InternalError(absl::StrCat("gnuplot ", script, " ", os::DescribeWaitStatus(*status),
                                          output.empty() ? "" : ": ", output));
}

std::string ReportMarkdown(const StudyResults& r, const std::vector<std::string>& charts,
                           const std::string& charts_error,
                           const std::vector<std::pair<std::string, std::string>>& timeline_of) {
  std::string md = "# Tempest delivery-guarantee study\n\n";
  absl::StrAppend(&md, "| parameter | value |\n|---|---|\n", "| seed | ", r.seed, " |\n",
                  "| records per run | ", r.records, " |\n", "| production rate | ", Rate(r.rate),
                  " records/s |\n", "| started | ",
                  Cell(r.started_at.empty() ? kAbsent : r.started_at), " |\n", "| duration | ",
                  Seconds(r.duration_s), " s |\n", "| runs | ", r.runs.size(), " |\n\n");

  const Verdict verdict = VerdictOf(r);
  const size_t runs = r.runs.size();
  if (r.runs.empty()) {
    md.append("**Verdict: no runs.**");
  } else if (verdict.passed()) {
    absl::StrAppend(&md, "**Verdict: all expectations held** (", runs, " runs).");
  } else {
    std::vector<std::string> parts;
    if (verdict.violations > 0) {
      parts.push_back(absl::StrCat(
          "**Verdict: ", verdict.violations, verdict.violations == 1 ? " violation" : " violations",
          "** in ", verdict.runs_violating, " of ", runs, " runs (see [Violations](#violations))"));
    }
    if (verdict.not_tested > 0) {
      parts.push_back(absl::StrCat(
          verdict.violations > 0 ? "**" : "**Verdict: failed, ", verdict.not_tested, " of ", runs,
          runs == 1 ? " run" : " runs",
          " not tested**: the fault fired before the pipeline flowed or nothing was measured, so "
          "the expectations held only vacuously (see [Not tested](#not-tested))"));
    }
    absl::StrAppend(&md, absl::StrJoin(parts, "; and "), ".");
  }
  const size_t unsettled = verdict.unsettled;
  if (unsettled > 0) {
    absl::StrAppend(&md, " ", unsettled,
                    unsettled == 1 ? " run did not settle before its deadline (marked †): its"
                                   : " runs did not settle before their deadline (marked †): their",
                    " counts may be incomplete.");
  }
  md.append("\n\n## Runs\n\n");

  absl::StrAppend(
      &md,
      "The last column says which mechanism caused each row's loss or duplication and what "
      "bounds it; the [study guide](",
      kGuidePath,
      ") (in the Tempest sources) explains each one. A row marked ‡ was not tested.\n\n");
  md.append(
      "| scenario | guarantee | lost | expected loss | duplicated | max copies | replayed | "
      "offset regressions | commit blocked (s) | recovery (s) | "
      "throughput before / during / after (rec/s) | dedup sink lost / dup | why |\n"
      "|---|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|---|\n");
  for (const RunResult& run : r.runs) {
    absl::StrAppend(&md, "| ", Cell(run.scenario), " | ", Cell(run.guarantee),
                    run.quiesced ? "" : " †", run.not_tested ? " ‡" : "", " | ", run.lost, " | ",
                    run.expected_loss, " | ", run.duplicated, " | ", run.max_copies, " | ",
                    run.replayed, " | ", run.offset_regressions, " | ",
                    Seconds(run.commit_blocked_s), " | ", Seconds(run.recovery_s), " | ",
                    ThroughputCell(run), " | ", DedupCell(run), " | ", WhyCell(run), " |\n");
  }
  md.append("\n");

  const size_t violations = verdict.violations;
  if (violations > 0) {
    md.append("## Violations\n\n");
    for (const RunResult& run : r.runs) {
      for (const std::string& v : run.violations) {
        absl::StrAppend(&md, "- **", run.scenario, " / ", run.guarantee, "**: ", v, "\n");
      }
    }
    md.append("\n");
  }

  if (verdict.not_tested > 0) {
    md.append(
        "## Not tested\n\n"
        "These runs measured nothing their guarantee could break, so their figures prove "
        "nothing and the verdict fails. Run them with more records or a slower rate so that "
        "records flow before the fault.\n\n");
    for (const RunResult& run : r.runs) {
      if (!run.not_tested) continue;
      absl::StrAppend(&md, "- **", run.scenario, " / ", run.guarantee,
                      "**: ", Cell(run.not_tested_reason), "\n");
    }
    md.append("\n");
  }

  md.append("## Charts\n\n");
  if (!charts_error.empty()) {
    absl::StrAppend(&md, "Some charts could not be drawn: ", charts_error,
                    ". Their data and gnuplot scripts are in `plot/` (re-plot with "
                    "`cd plot && gnuplot *.gp`).\n\n");
  }
  auto drawn = [&](const std::string& png) {
    return std::find(charts.begin(), charts.end(), png) != charts.end();
  };
  if (drawn("loss-duplicates.png")) {
    md.append("![Lost and duplicated records by scenario and guarantee](loss-duplicates.png)\n\n");
  }
  for (const auto& [scenario, png] : timeline_of) {
    if (!drawn(png)) continue;
    absl::StrAppend(&md, "### ", scenario, "\n\n![", scenario,
                    ": sink throughput and commit lag over time](", png, ")\n\n");
  }

  md.append(
      "## How to read this\n\n"
      "Each scenario injects one fault into a real cluster once per delivery guarantee, while a "
      "fixed number of numbered records is produced; the sink's output is then diffed against "
      "the input. **Lost** records never reached the sink (at-least-once must lose none; "
      "**expected loss** is what the scenario destroys on purpose, e.g. records deleted by "
      "retention before they were read). **Duplicated** counts extra copies (received minus "
      "distinct), **max copies** the most copies of one record and **replayed** the distinct "
      "records received more than once; at-most-once must have none. **Offset regressions** "
      "count a committed offset seen going backwards; **commit blocked** is the longest time "
      "commits stood still while there was lag. **Recovery** is the time from the fault to the "
      "sink's first new record after the sink stood still (0 when it never stood still, – when "
      "it never resumed), and throughput is the sink's rate before the fault, until "
      "recovery, and after. A run is **not tested** (‡) when the fault fired before any record "
      "reached the sink or nothing was measured; it fails the verdict whatever its figures. The "
      "**dedup sink** (at-least-once runs) applies each record once: "
      "its lost / duplicated must be 0, and \"dropped\" counts the replays it recognised. In "
      "the charts, the loss/duplicates bars use a log scale that keeps 0 at the bottom (each "
      "bar is labelled with its count); the timelines show the sink's throughput averaged over "
      "about 1 s next to the rate records were produced at (until production ended) and the "
      "commit lag (records produced but not yet committed), with each run's fault window "
      "shaded and an instantaneous fault (a kill) drawn as a solid vertical line. The raw numbers, "
      "including the per-sample "
      "series, are in `results.json`.\n");
  return md;
}

}  // namespace

Verdict VerdictOf(const StudyResults& r) {
  Verdict v;
  v.runs = r.runs.size();
  for (const RunResult& run : r.runs) {
    v.violations += run.violations.size();
    v.runs_violating += run.violations.empty() ? 0 : 1;
    v.not_tested += run.not_tested ? 1 : 0;
    v.unsettled += run.quiesced ? 0 : 1;
  }
  return v;
}

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
  if (!f.status().ok()) return f.status();
  r.runs.reserve(runs->size());
  for (size_t i = 0; i < runs->size(); ++i) {
    absl::StatusOr<RunResult> run = RunFromJson((*runs)[i], i);
    if (!run.ok()) return run.status();
    r.runs.push_back(*std::move(run));
  }
  return r;
}

absl::StatusOr<ReportFiles> WriteReport(const StudyResults& r, const std::string& dir) {
  ReportFiles files;
  files.results_json = absl::StrCat(dir, "/results.json");
  files.report_md = absl::StrCat(dir, "/report.md");
  const std::string plot_dir = absl::StrCat(dir, "/plot");
  if (absl::Status s = os::MakeDirs(plot_dir); !s.ok()) return s;
  if (absl::Status s = os::WriteFileAtomically(files.results_json, ResultsToJson(r)); !s.ok()) {
    return s;
  }

  const std::vector<std::string> scenarios = ScenariosOf(r);
  const std::vector<std::string> guarantees = GuaranteesOf(r);
  std::vector<Chart> charts;
  std::vector<std::pair<std::string, std::string>> timeline_of;  // scenario, png
  if (!r.runs.empty()) charts.push_back(LossDuplicatesChart(r, scenarios, guarantees));
  std::set<std::string> slugs;
  for (const std::string& scenario : scenarios) {
    // Distinct scenario names could share a slug ("a b", "a-b").
    std::string slug = Slug(scenario);
    for (int n = 2; !slugs.insert(slug).second; ++n) slug = absl::StrCat(Slug(scenario), "-", n);
    if (std::optional<Chart> c = TimelineChart(r, scenario, slug, guarantees)) {
      timeline_of.emplace_back(scenario, c->png);
      charts.push_back(*std::move(c));
    }
  }

  // Scripts and data first, so they are there to re-plot even when gnuplot
  // is missing.
  for (const Chart& c : charts) {
    for (const auto& [name, content] : c.data) {
      if (absl::Status s = os::WriteFileAtomically(absl::StrCat(plot_dir, "/", name), content);
          !s.ok()) {
        return s;
      }
    }
    if (absl::Status s =
            os::WriteFileAtomically(absl::StrCat(plot_dir, "/", c.script_name), c.script);
        !s.ok()) {
      return s;
    }
  }

  const std::string log = absl::StrCat(plot_dir, "/gnuplot.log");
  ::unlink(log.c_str());
  std::vector<std::string> errors;
  std::vector<std::string> drawn;
  for (const Chart& c : charts) {
    const std::string png = absl::StrCat(dir, "/", c.png);
    // A chart left over from an earlier report must not pass for this one.
    ::unlink(png.c_str());
    absl::Status s = RunGnuplot(plot_dir, c.script_name, log);
    std::error_code ec;
    if (s.ok() && std::filesystem::file_size(png, ec) > 0 && !ec) {
      drawn.push_back(c.png);
      files.charts.push_back(png);
      continue;
    }
    if (s.ok())
      s = absl::InternalError(absl::StrCat("gnuplot ", c.script_name, " wrote no ", c.png));
    errors.push_back(std::string(s.message()));
    // Without gnuplot the other charts would fail the same way.
    if (absl::IsFailedPrecondition(s)) break;
  }
  files.charts_error = absl::StrJoin(errors, "; ");

  if (absl::Status s = os::WriteFileAtomically(
          files.report_md, ReportMarkdown(r, drawn, files.charts_error, timeline_of));
      !s.ok()) {
    return s;
  }
  return files;
}

}  // namespace tempest::study
