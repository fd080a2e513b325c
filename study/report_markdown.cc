#include "study/report_markdown.h"

#include <algorithm>
#include <cmath>
#include <optional>
#include <iterator>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_replace.h"
#include "study/range_explanation.h"
#include "study/run_analysis.h"

namespace tempest::study {

std::string MarkdownCell(const std::string& text) {
  return absl::StrReplaceAll(text, {{"|", "\\|"}, {"\n", " "}});
}

namespace {

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

std::string Cell(const std::string& text) { return MarkdownCell(text); }

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

// The table of the study's parameters.
void AppendParameters(const StudyResults& r, std::string& md) {
  absl::StrAppend(&md, "| parameter | value |\n|---|---|\n", "| seed | ", r.seed, " |\n",
                  "| records per run | ", r.records, " |\n", "| production rate | ", Rate(r.rate),
                  " records/s |\n", "| started | ",
                  Cell(r.started_at.empty() ? kAbsent : r.started_at), " |\n", "| duration | ",
                  Seconds(r.duration_s), " s |\n", "| runs | ", r.runs.size(), " |\n\n");
}

// The verdict line, with the count of runs that did not settle.
void AppendVerdict(const StudyResults& r, const Verdict& verdict, std::string& md) {
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
}

// One table row per run.
void AppendRuns(const StudyResults& r, std::string& md) {
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
}

// One line per range: "partition 2, offsets 4100–4999: <cause>, 900 lost".
std::string RangeLine(const RangeExplanation& range) {
  const std::string offsets = range.first == range.last
                                  ? absl::StrCat("offset ", range.first)
                                  : absl::StrCat("offsets ", range.first, "–", range.last);
  return absl::StrCat("- partition ", range.partition, ", ", offsets, ": ", range.cause, ", ",
                      range.count, " ", std::string(RangeKindName(range.kind)), "\n");
}

// Under the table: each run's lost and duplicated ranges, as the spout's
// offset journal explains them.
void AppendRanges(const StudyResults& r, std::string& md) {
  const bool any = std::any_of(r.runs.begin(), r.runs.end(), [](const RunResult& run) {
    return !run.ranges.empty() || run.ranges_omitted > 0;
  });
  if (!any) return;
  absl::StrAppend(&md,
                  "## Lost and duplicated ranges\n\n"
                  "Each run of consecutive offsets a sink lost or received more than once, with "
                  "what the spout's offset journal records about it (largest ",
                  kMaxExplainedRanges, " per run; the entries are in `results.json`).\n\n");
  for (const RunResult& run : r.runs) {
    if (run.ranges.empty() && run.ranges_omitted == 0) continue;
    absl::StrAppend(&md, "**", run.scenario, " / ", run.guarantee, "**\n\n");
    for (const RangeExplanation& range : run.ranges) md.append(RangeLine(range));
    if (run.ranges_omitted > 0) {
      absl::StrAppend(&md, "- and ", run.ranges_omitted, " more ",
                      run.ranges_omitted == 1 ? "range" : "ranges", "\n");
    }
    md.append("\n");
  }
}

// The spouts' offset commits as their workers' metrics showed them, and
// the commits the journal shows made by a replaced owner.
void AppendCommitPath(const StudyResults& r, std::string& md) {
  const bool any = std::any_of(r.runs.begin(), r.runs.end(),
                               [](const RunResult& run) { return run.commit_path.has_value(); });
  if (!any) return;
  md.append(
      "## Offset commits\n\n"
      "What each spout's worker counted while the run lasted (its `tempest_kafka_spout_*` and "
      "`tempest_zk_*` metrics): commit multis sent, their latency, requests coalesced into a "
      "later multi, the most partitions waiting for a multi and multis in flight at once (a "
      "slow ZooKeeper must not make either grow), commits not applied, refused with NOAUTH, "
      "ZooKeeper writes resolved by read-back; and commits the offset journal shows made by an "
      "owner after another had taken over (zombie commits, which must be 0).\n\n"
      "| scenario | guarantee | multis | latency p99 / max (ms) | coalesced | pending max | "
      "in flight max | failed | denied | read-back | zombie commits |\n"
      "|---|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|\n");
  for (const RunResult& run : r.runs) {
    if (!run.commit_path.has_value()) continue;
    const CommitPathFigures& c = *run.commit_path;
    absl::StrAppend(&md, "| ", Cell(run.scenario), " | ", Cell(run.guarantee), " | ", c.multis,
                    " | ", c.latency_p99_ms, " / ", c.latency_max_ms, " | ", c.coalesced, " | ",
                    c.pending_max, " | ", c.in_flight_max, " | ", c.failures, " | ", c.denied,
                    " | ", c.ambiguous_writes, " | ", run.zombie_commits, " |\n");
  }
  md.append("\n");
}

// A bounds table's header: scenario, guarantee and one column per figure.
template <size_t N>
void AppendBoundHeader(const char* const (&figures)[N], std::string& md) {
  md.append("| scenario | guarantee |");
  for (const char* f : figures) absl::StrAppend(&md, " ", f, " |");
  md.append("\n|---|---|");
  for (size_t i = 0; i < N; ++i) md.append("---|");
  md.append("\n");
}

// One run's row of a bounds table: each bounded cell "value (bound)
// pass|FAIL", an unbounded one its value, a figure the run lacks empty.
template <size_t N>
void AppendBoundRow(const RunResult& run, const char* const (&figures)[N], std::string& md) {
  absl::StrAppend(&md, "| ", Cell(run.scenario), " | ", Cell(run.guarantee), " |");
  for (const char* f : figures) {
    auto b = std::find_if(run.bounds.begin(), run.bounds.end(),
                          [&](const BoundCheck& c) { return c.figure == f; });
    if (b == run.bounds.end()) {
      md.append("  |");
    } else if (b->bound == "none" || b->bound == "n/a") {
      absl::StrAppend(&md, " ", Cell(b->value), " |");
    } else {
      absl::StrAppend(&md, " ", Cell(b->value), " (", Cell(b->bound), ") ",
                      b->pass ? "pass" : "**FAIL**", " |");
    }
  }
  md.append("\n");
}

// The partition scenarios' figures against their bounds, one row per run.
void AppendBounds(const StudyResults& r, std::string& md) {
  auto partition = [](const RunResult& run) {
    return !run.bounds.empty() && !run.rebalance.has_value() && !run.upgrade.has_value();
  };
  if (std::none_of(r.runs.begin(), r.runs.end(), partition)) return;
  md.append(
      "## Bounds (partition scenarios)\n\n"
      "Each figure of a multi-host run against its bound: lost (at-least-once: none), "
      "duplicated (at-most-once: none), the effectively-once sink's lost and duplicated (none), "
      "zombie commits (none), time to fence (a spout cut from ZooKeeper, or a nimbus leader cut "
      "off, stops within the session timeout plus one commit interval), time to recover (the "
      "sink progresses again within the bound after the heal) and, when the nimbus leader was "
      "cut off, its writes after losing leadership (none). See docs/study-guide.md, "
      "\"Partition scenarios\".\n\n");
  static constexpr const char* kFigures[] = {
      "lost", "duplicated", "effectively-once lost", "effectively-once duplicated",
      "zombie commits", "time to fence (s)", "time to recover (s)", "old leader's writes"};
  AppendBoundHeader(kFigures, md);
  for (const RunResult& run : r.runs) {
    if (!partition(run)) continue;
    AppendBoundRow(run, kFigures, md);
  }
  md.append("\n");
}

// rebalance-under-load's figures against their bounds, one row per run.
void AppendRebalance(const StudyResults& r, std::string& md) {
  auto rebalanced = [](const RunResult& run) { return run.rebalance.has_value(); };
  if (std::none_of(r.runs.begin(), r.runs.end(), rebalanced)) return;
  md.append(
      "## Rebalance under load\n\n"
      "Each run's figures against their bounds while its transform was rebalanced from 1 to 2 "
      "executors and back (`tempest rebalance -w 0`): lost (none), duplicated (at-most-once: "
      "none; otherwise at most what the spout read above its last commit), the "
      "effectively-once sink's lost and duplicated (none), zombie commits (none), both "
      "rebalances applied, every worker kept and none restarted (the transform's worker "
      "regroups it in place); each rebalance's settling time and the longest output gap, "
      "overall and after each rebalance, are reported. "
      "See docs/study-guide.md, "
      "\"rebalance-under-load\".\n\n");
  static constexpr const char* kFigures[] = {"lost",
                                             "duplicated",
                                             "effectively-once lost",
                                             "effectively-once duplicated",
                                             "zombie commits",
                                             "rebalances applied",
                                             "settle (s)",
                                             "workers kept",
                                             "workers restarted",
                                             "longest output gap (s)",
                                             "output gap per rebalance (s)"};
  AppendBoundHeader(kFigures, md);
  for (const RunResult& run : r.runs) {
    if (!rebalanced(run)) continue;
    AppendBoundRow(run, kFigures, md);
  }
  md.append("\n");
}

// upgrade-under-load's figures against their bounds, one row per run.
void AppendUpgrade(const StudyResults& r, std::string& md) {
  auto upgraded = [](const RunResult& run) { return run.upgrade.has_value(); };
  if (std::none_of(r.runs.begin(), r.runs.end(), upgraded)) return;
  md.append(
      "## Upgrade under load\n\n"
      "Each run's figures against their bounds while `tempest upgrade` replaced its pipeline by "
      "a copy of itself under another name: lost (none), duplicated (at-most-once: none; "
      "otherwise at most what the spout read above its last commit), the effectively-once "
      "sink's lost and duplicated (none), zombie commits (none: one owner per partition), the "
      "upgrade applied; the command's own output gap and the old topology's drain within it, "
      "and the longest output gap the sink saw from the upgrade on, are reported. See "
      "docs/study-guide.md, \"upgrade-under-load\".\n\n");
  static constexpr const char* kFigures[] = {"lost",
                                             "duplicated",
                                             "effectively-once lost",
                                             "effectively-once duplicated",
                                             "zombie commits",
                                             "upgrades applied",
                                             "command's output gap (s)",
                                             "old topology's drain (s)",
                                             "longest output gap (s)"};
  AppendBoundHeader(kFigures, md);
  for (const RunResult& run : r.runs) {
    if (upgraded(run)) AppendBoundRow(run, kFigures, md);
  }
  md.append("\n");
}

void AppendViolations(const StudyResults& r, const Verdict& verdict, std::string& md) {
  if (verdict.violations == 0) return;
  md.append("## Violations\n\n");
  for (const RunResult& run : r.runs) {
    for (const std::string& v : run.violations) {
      absl::StrAppend(&md, "- **", run.scenario, " / ", run.guarantee, "**: ", v, "\n");
    }
  }
  md.append("\n");
}

void AppendNotTested(const StudyResults& r, const Verdict& verdict, std::string& md) {
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
}

void AppendCharts(const std::vector<std::string>& charts, const std::string& charts_error,
                  const std::vector<std::pair<std::string, std::string>>& timeline_of,
                  std::string& md) {
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
}

void AppendHowToRead(std::string& md) {
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


std::string ReportMarkdown(const StudyResults& r, const std::vector<std::string>& charts,
                           const std::string& charts_error,
                           const std::vector<std::pair<std::string, std::string>>& timeline_of) {
  std::string md = "# Tempest delivery-guarantee study\n\n";
  AppendParameters(r, md);
  const Verdict verdict = VerdictOf(r);
  AppendVerdict(r, verdict, md);
  md.append("\n\n## Runs\n\n");
  AppendRuns(r, md);
  AppendRanges(r, md);
  AppendCommitPath(r, md);
  AppendBounds(r, md);
  AppendRebalance(r, md);
  AppendUpgrade(r, md);
  AppendViolations(r, verdict, md);
  AppendNotTested(r, verdict, md);
  AppendCharts(charts, charts_error, timeline_of, md);
  AppendHowToRead(md);
  return md;
}

}  // namespace tempest::study
