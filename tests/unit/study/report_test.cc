#include "study/report.h"

#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <string>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "common/os/files.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "study/report_markdown.h"
#include "study/results_json.h"
#include "study/run_analysis.h"
#include "tests/support/temp_dir.h"

namespace tempest::study {
namespace {

using ::testing::AllOf;
using ::testing::HasSubstr;
using ::testing::Not;

// A run sampled every 200 ms for `seconds`: the sink keeps up with `rate`
// except during [stall_from, stall_to), where it stands still and the commit
// lag builds up, then catches up at twice the rate.
std::vector<Sample> Samples(double seconds, double rate, double stall_from, double stall_to) {
  std::vector<Sample> out;
  double sink = 0;
  for (int i = 0; i * 0.2 <= seconds; ++i) {
    const double t = i * 0.2;
    const double produced = rate * t;
    if (t < stall_from) {
      sink = produced;
    } else if (t >= stall_to) {
      sink = std::min(produced, sink + 2 * rate * 0.2);
    }
    Sample s;
    s.t_s = t;
    s.sink_received = static_cast<int64_t>(sink);
    s.log_end = static_cast<int64_t>(produced);
    // Committed offsets trail the sink a little, and are unreadable once.
    s.committed = i == 7 ? -1 : std::max<int64_t>(0, s.sink_received - 30);
    out.push_back(s);
  }
  return out;
}

// Two runs: one with every optional field set, one with none.
StudyResults TwoRuns() {
  StudyResults r;
  r.seed = 18446744073709551557ull;  // above int64: must survive as unsigned
  r.records = 20000;
  r.rate = 1000;
  r.started_at = "2024-05-01T12:00:00Z";
  r.duration_s = 93.25;

  RunResult a;
  a.scenario = "worker-kill";
  a.guarantee = "at-least-once";
  a.fault = "kill-worker";
  a.records = 20000;
  a.lost = 0;
  a.duplicated = 412;
  a.max_copies = 2;
  a.replayed = 412;
  a.offset_regressions = 1;
  a.committed_not_processed = 0;
  a.processed_not_committed = 35;
  a.commit_blocked_s = 4.25;
  a.fault_planned_s = 5.0;
  a.fault_start_s = 5.1;
  a.fault_end_s = 8.3;
  a.recovery_s = 3.7;
  a.throughput_before = 998.5;
  a.throughput_during = 12.25;
  a.throughput_after = 1003;
  a.expected_loss = 0;
  a.quiesced = true;
  a.dedup_sink = DedupSinkResult{.lost = 0, .duplicated = 0, .deduplicated = 412};
  a.zombie_commits = 2;
  a.commit_path = CommitPathFigures{.multis = 40,
                                    .failures = 3,
                                    .denied = 2,
                                    .coalesced = 17,
                                    .pending_max = 4,
                                    .in_flight_max = 1,
                                    .latency_p99_ms = 1480,
                                    .latency_max_ms = 1605,
                                    .ambiguous_writes = 1,
                                    .readings = 21};
  a.violations = {"at-least-once replayed more than expected", "second \"quoted\" one"};
  a.samples = Samples(20, 1000, 5.1, 8.8);

  RunResult b;
  b.scenario = "baseline";
  b.guarantee = "no-guarantee";
  b.fault = "none";
  b.records = 20000;
  b.lost = 3;
  b.quiesced = false;
  b.throughput_before = 7.5;
  b.samples = {{0.0, 0, -1, 0}, {0.2, 100, 80, 200}};

  r.runs = {a, b};
  return r;
}

TEST(ResultsJsonTest, RoundTripKeepsEveryField) {
  const StudyResults in = TwoRuns();
  const std::string text = ResultsToJson(in);
  absl::StatusOr<StudyResults> out = ResultsFromJson(text);
  ASSERT_TRUE(out.ok()) << out.status();

  EXPECT_EQ(out->seed, in.seed);
  EXPECT_EQ(out->records, 20000);
  EXPECT_EQ(out->rate, 1000);
  EXPECT_EQ(out->started_at, "2024-05-01T12:00:00Z");
  EXPECT_EQ(out->duration_s, 93.25);
  ASSERT_EQ(out->runs.size(), 2u);

  const RunResult& a = out->runs[0];
  EXPECT_EQ(a.scenario, "worker-kill");
  EXPECT_EQ(a.guarantee, "at-least-once");
  EXPECT_EQ(a.fault, "kill-worker");
  EXPECT_EQ(a.records, 20000);
  EXPECT_EQ(a.lost, 0);
  EXPECT_EQ(a.duplicated, 412);
  EXPECT_EQ(a.max_copies, 2);
  EXPECT_EQ(a.replayed, 412);
  EXPECT_EQ(a.offset_regressions, 1);
  EXPECT_EQ(a.committed_not_processed, 0);
  EXPECT_EQ(a.processed_not_committed, 35);
  EXPECT_EQ(a.commit_blocked_s, 4.25);
  EXPECT_EQ(a.fault_planned_s, 5.0);
  EXPECT_EQ(a.fault_start_s, 5.1);
  EXPECT_EQ(a.fault_end_s, 8.3);
  EXPECT_EQ(a.recovery_s, 3.7);
  EXPECT_EQ(a.throughput_before, 998.5);
  EXPECT_EQ(a.throughput_during, 12.25);
  EXPECT_EQ(a.throughput_after, 1003);
  EXPECT_TRUE(a.quiesced);
  ASSERT_TRUE(a.dedup_sink.has_value());
  EXPECT_EQ(a.dedup_sink->lost, 0);
  EXPECT_EQ(a.dedup_sink->duplicated, 0);
  EXPECT_EQ(a.dedup_sink->deduplicated, 412);
  EXPECT_EQ(a.violations, in.runs[0].violations);
  EXPECT_EQ(a.zombie_commits, 2);
  ASSERT_TRUE(a.commit_path.has_value());
  EXPECT_EQ(a.commit_path->multis, 40);
  EXPECT_EQ(a.commit_path->failures, 3);
  EXPECT_EQ(a.commit_path->denied, 2);
  EXPECT_EQ(a.commit_path->coalesced, 17);
  EXPECT_EQ(a.commit_path->pending_max, 4);
  EXPECT_EQ(a.commit_path->in_flight_max, 1);
  EXPECT_EQ(a.commit_path->latency_p99_ms, 1480);
  EXPECT_EQ(a.commit_path->latency_max_ms, 1605);
  EXPECT_EQ(a.commit_path->ambiguous_writes, 1);
  EXPECT_EQ(a.commit_path->readings, 21);
  ASSERT_EQ(a.samples.size(), in.runs[0].samples.size());
  for (size_t i = 0; i < a.samples.size(); ++i) {
    EXPECT_EQ(a.samples[i].t_s, in.runs[0].samples[i].t_s) << i;
    EXPECT_EQ(a.samples[i].sink_received, in.runs[0].samples[i].sink_received) << i;
    EXPECT_EQ(a.samples[i].committed, in.runs[0].samples[i].committed) << i;
    EXPECT_EQ(a.samples[i].log_end, in.runs[0].samples[i].log_end) << i;
  }

  const RunResult& b = out->runs[1];
  EXPECT_EQ(b.scenario, "baseline");
  EXPECT_EQ(b.lost, 3);
  EXPECT_FALSE(b.quiesced);
  EXPECT_FALSE(b.fault_planned_s.has_value());
  EXPECT_FALSE(b.fault_start_s.has_value());
  EXPECT_FALSE(b.fault_end_s.has_value());
  EXPECT_FALSE(b.recovery_s.has_value());
  EXPECT_FALSE(b.dedup_sink.has_value());
  EXPECT_EQ(b.zombie_commits, 0);
  EXPECT_FALSE(b.commit_path.has_value());
  EXPECT_TRUE(b.violations.empty());
  ASSERT_EQ(b.samples.size(), 2u);
  EXPECT_EQ(b.samples[0].committed, -1);

  // Writing what was read gives the same text: nothing was dropped.
  EXPECT_EQ(ResultsToJson(*out), text);
}

// TwoRuns with two explained ranges on the first run, one resting on a reset entry.
StudyResults WithRanges() {
  StudyResults r = TwoRuns();
  spout::JournalEntry reset;
  reset.type = spout::JournalEntryType::kReset;
  reset.time_ms = 1700000000123;
  reset.from = 4100;
  reset.to = 5000;
  reset.reason = "offset 4100 out of range, log holds [5000, 9000); outOfRangePolicy earliest";
  reset.sequence = 42;
  r.runs[0].ranges = {
      {2, 4100, 4999, 900, RangeKind::kLost, "out-of-range reset skipped 4100–4999", reset},
      {0, 10, 12, 3, RangeKind::kDuplicated, "not explained by the journal", std::nullopt}};
  r.runs[0].ranges_omitted = 4;
  return r;
}

TEST(ResultsJsonTest, RangesRoundTripWithTheirJournalEntries) {
  const StudyResults in = WithRanges();
  const std::string text = ResultsToJson(in);
  absl::StatusOr<StudyResults> out = ResultsFromJson(text);
  ASSERT_TRUE(out.ok()) << out.status();
  const RunResult& a = out->runs[0];
  ASSERT_EQ(a.ranges.size(), 2u);
  EXPECT_EQ(a.ranges_omitted, 4);
  EXPECT_EQ(a.ranges[0].partition, 2);
  EXPECT_EQ(a.ranges[0].first, 4100);
  EXPECT_EQ(a.ranges[0].last, 4999);
  EXPECT_EQ(a.ranges[0].count, 900);
  EXPECT_EQ(a.ranges[0].kind, RangeKind::kLost);
  EXPECT_EQ(a.ranges[0].cause, "out-of-range reset skipped 4100–4999");
  ASSERT_TRUE(a.ranges[0].entry.has_value());
  EXPECT_EQ(a.ranges[0].entry->type, spout::JournalEntryType::kReset);
  EXPECT_EQ(a.ranges[0].entry->from, 4100);
  EXPECT_EQ(a.ranges[0].entry->to, 5000);
  EXPECT_EQ(a.ranges[0].entry->sequence, 42);
  EXPECT_EQ(a.ranges[0].entry->reason, in.runs[0].ranges[0].entry->reason);
  EXPECT_EQ(a.ranges[1].kind, RangeKind::kDuplicated);
  EXPECT_FALSE(a.ranges[1].entry.has_value());
  EXPECT_TRUE(out->runs[1].ranges.empty());
  EXPECT_EQ(ResultsToJson(*out), text);

  // Results written before the study read the journal still load.
  nlohmann::json j = nlohmann::json::parse(text);
  j["runs"][0].erase("ranges");
  j["runs"][0].erase("ranges_omitted");
  absl::StatusOr<StudyResults> old = ResultsFromJson(j.dump());
  ASSERT_TRUE(old.ok()) << old.status();
  EXPECT_TRUE(old->runs[0].ranges.empty());
  EXPECT_EQ(old->runs[0].ranges_omitted, 0);

  j["runs"][0]["ranges"] = nlohmann::json::array({{{"partition", 0}}});
  absl::StatusOr<StudyResults> bad = ResultsFromJson(j.dump());
  ASSERT_FALSE(bad.ok());
  EXPECT_THAT(bad.status().message(), HasSubstr("ranges[0]"));
}

TEST(ReportMarkdownTest, ListsEachRunsRangesUnderTheTable) {
  const std::string md = ReportMarkdown(WithRanges(), {}, "", {});
  EXPECT_THAT(md, HasSubstr("## Lost and duplicated ranges\n"));
  EXPECT_THAT(md, HasSubstr("**worker-kill / at-least-once**\n\n"
                            "- partition 2, offsets 4100–4999: out-of-range reset skipped "
                            "4100–4999, 900 lost\n"
                            "- partition 0, offsets 10–12: not explained by the journal, 3 "
                            "duplicated\n"
                            "- and 4 more ranges\n"));
  EXPECT_LT(md.find("| scenario |"), md.find("## Lost and duplicated ranges"));
  // Without ranges there is no section.
  EXPECT_THAT(ReportMarkdown(TwoRuns(), {}, "", {}), Not(HasSubstr("Lost and duplicated ranges")));
}

TEST(ReportMarkdownTest, ListsEachRunsOffsetCommitsAndZombieCommits) {
  const std::string md = ReportMarkdown(TwoRuns(), {}, "", {});
  const size_t section = md.find("## Offset commits");
  ASSERT_NE(section, std::string::npos) << md;
  EXPECT_NE(
      md.find("| worker-kill | at-least-once | 40 | 1480 / 1605 | 17 | 4 | 1 | 3 | 2 | 1 | 2 |",
              section),
      std::string::npos)
      << md;
  // The run without worker metrics has no row.
  EXPECT_EQ(md.find("| baseline |", section), std::string::npos) << md;
}

RunResult PartitionRun(const std::string& guarantee) {
  RunResult r;
  r.scenario = "partition-spout-zk";
  r.guarantee = guarantee;
  r.fault = "partition-spout-zk";
  r.records = 3000;
  r.fence_expected = true;
  r.fence_s = 3.1;
  r.recover_s = 0.4;
  return r;
}

TEST(RunAnalysisTest, PartitionBoundsPassAndFail) {
  PartitionLimits limits;
  limits.fence_s = 4.5;
  limits.recover_s = 30;
  auto find = [](const std::vector<BoundCheck>& bounds, const std::string& figure) {
    for (const BoundCheck& b : bounds) {
      if (b.figure == figure) return b;
    }
    return BoundCheck{"missing", "", "", false};
  };
  RunResult ok = PartitionRun("at-least-once");
  ok.dedup_sink = DedupSinkResult{};
  std::vector<BoundCheck> b = CheckBounds(ok, limits);
  for (const BoundCheck& c : b) EXPECT_TRUE(c.pass) << c.figure;
  EXPECT_EQ(find(b, "time to fence (s)").value, "3.1");
  EXPECT_EQ(find(b, "time to fence (s)").bound, "<= 4.5");
  EXPECT_EQ(find(b, "effectively-once duplicated").bound, "= 0");

  RunResult slow = PartitionRun("at-most-once");
  slow.fence_s = 4.6;
  slow.duplicated = 2;
  b = CheckBounds(slow, limits);
  EXPECT_FALSE(find(b, "time to fence (s)").pass);
  EXPECT_FALSE(find(b, "duplicated").pass);
  EXPECT_TRUE(find(b, "lost").pass) << "at-most-once may lose";

  RunResult never = PartitionRun("at-least-once");
  never.fence_s.reset();
  never.recover_s.reset();
  never.lost = 1;
  b = CheckBounds(never, limits);
  EXPECT_EQ(find(b, "time to fence (s)").value, "never");
  EXPECT_FALSE(find(b, "time to fence (s)").pass);
  EXPECT_FALSE(find(b, "time to recover (s)").pass);
  EXPECT_FALSE(find(b, "lost").pass);

  RunResult elsewhere = PartitionRun("no-guarantee");
  elsewhere.fence_expected = false;
  elsewhere.leader_writes_after_loss = 1;
  b = CheckBounds(elsewhere, limits);
  EXPECT_EQ(find(b, "time to fence (s)").value, "n/a");
  EXPECT_TRUE(find(b, "time to fence (s)").pass);
  EXPECT_FALSE(find(b, "old leader's writes").pass);
}

TEST(ResultsJsonTest, PartitionFiguresRoundTripAndFillTheBoundsTable) {
  StudyResults in;
  in.records = 3000;
  in.rate = 300;
  RunResult r = PartitionRun("at-most-once");
  r.leader_writes_after_loss = 0;
  r.bounds = CheckBounds(r, PartitionLimits{});
  in.runs.push_back(r);
  RunResult plain;  // a single-host run has no bounds and no partition fields
  plain.scenario = "worker-kill";
  plain.guarantee = "at-most-once";
  plain.fault = "kill-worker";
  in.runs.push_back(plain);
  absl::StatusOr<StudyResults> out = ResultsFromJson(ResultsToJson(in));
  ASSERT_TRUE(out.ok()) << out.status();
  const RunResult& a = out->runs[0];
  EXPECT_TRUE(a.fence_expected);
  EXPECT_EQ(a.fence_s, 3.1);
  EXPECT_EQ(a.recover_s, 0.4);
  EXPECT_EQ(a.leader_writes_after_loss, 0);
  ASSERT_EQ(a.bounds.size(), r.bounds.size());
  for (size_t i = 0; i < a.bounds.size(); ++i) {
    EXPECT_EQ(a.bounds[i].figure, r.bounds[i].figure);
    EXPECT_EQ(a.bounds[i].value, r.bounds[i].value);
    EXPECT_EQ(a.bounds[i].bound, r.bounds[i].bound);
    EXPECT_EQ(a.bounds[i].pass, r.bounds[i].pass);
  }
  EXPECT_TRUE(out->runs[1].bounds.empty());
  EXPECT_FALSE(out->runs[1].leader_writes_after_loss.has_value());

  const std::string md = ReportMarkdown(in, {}, "", {});
  const size_t section = md.find("## Bounds (partition scenarios)");
  ASSERT_NE(section, std::string::npos) << md;
  EXPECT_NE(md.find("| partition-spout-zk | at-most-once |", section), std::string::npos) << md;
  EXPECT_NE(md.find("3.1 (<= 4.5) pass", section), std::string::npos) << md;
  EXPECT_EQ(md.find("| worker-kill |", section), std::string::npos) << md;
}

TEST(RunAnalysisTest, ZombieCommitsBreakEveryGuarantee) {
  for (const char* g : {"at-least-once", "at-most-once", "no-guarantee"}) {
    RunResult r;
    r.guarantee = g;
    r.zombie_commits = 3;
    const std::vector<std::string> v = CheckExpectations(r);
    EXPECT_TRUE(std::any_of(v.begin(), v.end(), [](const std::string& s) {
      return s.find("3 commits were made by an owner after another had taken over") !=
             std::string::npos;
    })) << g;
  }
}

TEST(ResultsJsonTest, PrettyWithOneLinePerSampleAndNullsForAbsentValues) {
  const std::string text = ResultsToJson(TwoRuns());
  EXPECT_THAT(text, HasSubstr("\n  \"seed\": 18446744073709551557,\n"));
  EXPECT_THAT(text,
              HasSubstr("\"samples\": [\n        [0.0, 0, -1, 0],\n        [0.2, 100, 80, 200]\n"));
  EXPECT_THAT(text, HasSubstr("\"recovery_s\": null"));
  EXPECT_THAT(text, HasSubstr("\"dedup_sink\": null"));
  EXPECT_THAT(text, HasSubstr("\"deduplicated\": 412"));
  EXPECT_THAT(text, HasSubstr("\"violations\": []"));
}

TEST(ResultsJsonTest, AbsentOptionalFieldsReadAsAbsent) {
  nlohmann::json j = nlohmann::json::parse(ResultsToJson(TwoRuns()));
  for (const char* key :
       {"fault_planned_s", "fault_start_s", "fault_end_s", "recovery_s", "dedup_sink"}) {
    j["runs"][0].erase(key);
  }
  j["runs"][0]["some_future_field"] = 1;  // ignored
  absl::StatusOr<StudyResults> r = ResultsFromJson(j.dump());
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_FALSE(r->runs[0].fault_start_s.has_value());
  EXPECT_FALSE(r->runs[0].dedup_sink.has_value());
}

TEST(ResultsJsonTest, NonFiniteNumbersAreWrittenAsNullAndReadBack) {
  StudyResults in = TwoRuns();
  in.runs[1].throughput_during = std::numeric_limits<double>::quiet_NaN();
  absl::StatusOr<StudyResults> out = ResultsFromJson(ResultsToJson(in));
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_TRUE(std::isnan(out->runs[1].throughput_during));
}

// The error for `text`, or "" if it parsed.
std::string ErrorOf(const std::string& text) {
  absl::StatusOr<StudyResults> r = ResultsFromJson(text);
  if (r.ok()) return "";
  EXPECT_EQ(r.status().code(), absl::StatusCode::kInvalidArgument) << r.status();
  return std::string(r.status().message());
}

// TwoRuns() as JSON with `edit` applied.
template <typename Edit>
std::string Edited(Edit edit) {
  nlohmann::json j = nlohmann::json::parse(ResultsToJson(TwoRuns()));
  edit(j);
  return j.dump();
}

TEST(ResultsJsonTest, RejectsBadInputNamingWhatIsWrong) {
  EXPECT_THAT(ErrorOf("garbage"), HasSubstr("not valid JSON"));
  EXPECT_THAT(ErrorOf(""), HasSubstr("not valid JSON"));
  EXPECT_THAT(ErrorOf("{\"seed\": 1,"), HasSubstr("not valid JSON"));
  EXPECT_THAT(ErrorOf("[1, 2]"), HasSubstr("must be a JSON object, got array"));
  EXPECT_THAT(ErrorOf("{}"), HasSubstr("\"seed\" is missing"));

  EXPECT_THAT(ErrorOf(Edited([](nlohmann::json& j) { j.erase("runs"); })),
              HasSubstr("study results: \"runs\" is missing"));
  EXPECT_THAT(ErrorOf(Edited([](nlohmann::json& j) { j["runs"] = 3; })),
              HasSubstr("\"runs\" must be a list, got number 3"));
  EXPECT_THAT(ErrorOf(Edited([](nlohmann::json& j) { j["seed"] = -1; })),
              HasSubstr("\"seed\" must be a non-negative integer"));
  EXPECT_THAT(ErrorOf(Edited([](nlohmann::json& j) { j["runs"][1] = "run"; })),
              HasSubstr("runs[1] must be an object, got string \"run\""));
  EXPECT_THAT(ErrorOf(Edited([](nlohmann::json& j) { j["runs"][0].erase("lost"); })),
              HasSubstr("runs[0] (worker-kill, at-least-once): \"lost\" is missing"));
  EXPECT_THAT(ErrorOf(Edited([](nlohmann::json& j) { j["runs"][1]["duplicated"] = "3"; })),
              HasSubstr("runs[1] (baseline, no-guarantee): \"duplicated\" must be an integer, "
                        "got string \"3\""));
  EXPECT_THAT(ErrorOf(Edited([](nlohmann::json& j) { j["runs"][0]["lost"] = 1.5; })),
              HasSubstr("\"lost\" must be an integer"));
  EXPECT_THAT(ErrorOf(Edited([](nlohmann::json& j) { j["runs"][0]["quiesced"] = 1; })),
              HasSubstr("\"quiesced\" must be true or false"));
  EXPECT_THAT(ErrorOf(Edited([](nlohmann::json& j) { j["runs"][0]["recovery_s"] = "soon"; })),
              HasSubstr("\"recovery_s\" must be a number or null"));
  EXPECT_THAT(ErrorOf(Edited([](nlohmann::json& j) { j["runs"][0]["dedup_sink"] = 0; })),
              HasSubstr("\"dedup_sink\" must be an object or null"));
  EXPECT_THAT(
      ErrorOf(Edited([](nlohmann::json& j) { j["runs"][0]["dedup_sink"].erase("deduplicated"); })),
      HasSubstr("dedup_sink: \"deduplicated\" is missing"));
  EXPECT_THAT(ErrorOf(Edited([](nlohmann::json& j) { j["runs"][0]["commit_path"] = "fast"; })),
              HasSubstr("\"commit_path\" must be an object or null, got string"));
  EXPECT_THAT(
      ErrorOf(Edited([](nlohmann::json& j) { j["runs"][0]["commit_path"].erase("denied"); })),
      HasSubstr("commit_path: \"denied\" is missing"));
  EXPECT_THAT(ErrorOf(Edited([](nlohmann::json& j) { j["runs"][0]["zombie_commits"] = "none"; })),
              HasSubstr("\"zombie_commits\" must be an integer"));
  // Results written before zombie commits and commit paths were counted.
  EXPECT_EQ(ErrorOf(Edited([](nlohmann::json& j) {
              j["runs"][0].erase("zombie_commits");
              j["runs"][0].erase("commit_path");
            })),
            "");
  EXPECT_THAT(ErrorOf(Edited([](nlohmann::json& j) { j["runs"][0]["violations"] = {1}; })),
              HasSubstr("violations[0] must be a string"));
  EXPECT_THAT(ErrorOf(Edited([](nlohmann::json& j) {
                j["runs"][0]["samples"][3] = {1, 2};
              })),
              HasSubstr("samples[3] must be [t_s, sink_received, committed, log_end]"));
  EXPECT_THAT(ErrorOf(Edited([](nlohmann::json& j) { j["runs"][0]["samples"][2][2] = "x"; })),
              HasSubstr("samples[2][2] (committed) must be an integer"));

  // Integral floats (another tool's rewrite) are tolerated.
  EXPECT_EQ(ErrorOf(Edited([](nlohmann::json& j) { j["runs"][0]["lost"] = 2.0; })), "");
}

bool StartsWithPngMagic(const std::string& path) {
  absl::StatusOr<std::string> bytes = os::ReadSmallFile(path, 16 << 20);
  return bytes.ok() && bytes->rfind("\x89PNG\r\n\x1a\n", 0) == 0;
}

// A study shaped like a real one: three scenarios under three guarantees.
StudyResults FullStudy() {
  StudyResults r = TwoRuns();
  r.runs.clear();
  const char* scenarios[] = {"worker-kill", "zk-quorum-loss", "retention-past-offset"};
  const char* guarantees[] = {"at-least-once", "at-most-once", "no-guarantee"};
  int k = 0;
  for (const char* s : scenarios) {
    for (const char* g : guarantees) {
      RunResult run = TwoRuns().runs[0];
      run.scenario = s;
      run.guarantee = g;
      run.fault = s;
      run.violations.clear();
      const double start = 5 + k * 0.3;
      run.fault_start_s = start;
      run.fault_end_s = start + 3;
      run.samples = Samples(20, 1000, start, start + 3 + k * 0.2);
      if (std::string(g) != "at-least-once") {
        run.dedup_sink.reset();
        run.duplicated = std::string(g) == "no-guarantee" ? 7 : 0;
        run.lost = 150 * k;
      }
      r.runs.push_back(run);
      ++k;
    }
  }
  r.runs[1].violations = {"at-most-once duplicated 0 records but replayed 2"};
  // A fault that was never healed: drawn as a marker, not a window.
  r.runs[4].fault_end_s.reset();
  return r;
}

TEST(WriteReportTest, WritesJsonMarkdownAndCharts) {
  tempest::testing::TempDir dir("study-report");
  const std::string out = dir.File("report");
  absl::StatusOr<ReportFiles> files = WriteReport(FullStudy(), out);
  ASSERT_TRUE(files.ok()) << files.status();
  EXPECT_EQ(files->results_json, out + "/results.json");
  EXPECT_EQ(files->report_md, out + "/report.md");

  absl::StatusOr<std::string> json = os::ReadSmallFile(files->results_json, 16 << 20);
  ASSERT_TRUE(json.ok()) << json.status();
  absl::StatusOr<StudyResults> back = ResultsFromJson(*json);
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(back->runs.size(), 9u);

  absl::StatusOr<std::string> md = os::ReadSmallFile(files->report_md);
  ASSERT_TRUE(md.ok()) << md.status();
  EXPECT_THAT(*md, HasSubstr("| seed | 18446744073709551557 |"));
  EXPECT_THAT(*md, HasSubstr("**Verdict: 1 violation** in 1 of 9 runs"));
  EXPECT_THAT(*md, HasSubstr("| worker-kill | at-least-once | 0 | 0 | 412 | 2 | 412 | 1 | 4.2 | "
                             "3.7 | 998 / 12 / 1003 | 0 / 0 (412 dropped) |"));
  EXPECT_THAT(*md, HasSubstr("| zk-quorum-loss | no-guarantee | 750 | 0 | 7 |"));
  EXPECT_THAT(*md, HasSubstr("| – | "));  // no dedup sink
  EXPECT_THAT(*md, HasSubstr("## Violations\n\n- **worker-kill / at-most-once**: at-most-once "
                             "duplicated 0 records but replayed 2\n"));
  EXPECT_THAT(*md, HasSubstr("## How to read this"));
  for (const char* f : {"loss-duplicates.gp", "loss-duplicates.dat", "timeline-worker-kill.gp",
                        "timeline-worker-kill--at-most-once.dat"}) {
    EXPECT_TRUE(std::filesystem::exists(out + "/plot/" + f)) << f;
  }

  if (::access("/usr/bin/gnuplot", X_OK) != 0) {
    GTEST_SKIP() << "gnuplot is not installed; the PNGs are not checked";
  }
  EXPECT_EQ(files->charts_error, "");
  std::vector<std::string> want = {out + "/loss-duplicates.png", out + "/timeline-worker-kill.png",
                                   out + "/timeline-zk-quorum-loss.png",
                                   out + "/timeline-retention-past-offset.png"};
  EXPECT_EQ(files->charts, want);
  for (const std::string& png : want) EXPECT_TRUE(StartsWithPngMagic(png)) << png;
  EXPECT_THAT(*md, AllOf(HasSubstr("![Lost and duplicated records by scenario and guarantee]"
                                   "(loss-duplicates.png)"),
                         HasSubstr("(timeline-zk-quorum-loss.png)")));
}

TEST(WriteReportTest, WithoutGnuplotStillWritesJsonAndMarkdown) {
  tempest::testing::TempDir dir("study-report");
  const char* old_path = std::getenv("PATH");
  const std::string saved = old_path == nullptr ? "" : old_path;
  // An empty directory as the only PATH entry: gnuplot cannot be found.
  ::setenv("PATH", dir.path().c_str(), 1);
  absl::StatusOr<ReportFiles> files = WriteReport(TwoRuns(), dir.File("report"));
  ::setenv("PATH", saved.c_str(), 1);
  ASSERT_TRUE(files.ok()) << files.status();
  EXPECT_THAT(files->charts_error, AllOf(HasSubstr("gnuplot"), HasSubstr("gnuplot-nox")));
  EXPECT_TRUE(files->charts.empty());
  EXPECT_TRUE(std::filesystem::exists(files->results_json));
  absl::StatusOr<std::string> md = os::ReadSmallFile(files->report_md);
  ASSERT_TRUE(md.ok()) << md.status();
  EXPECT_THAT(*md, HasSubstr("| baseline | no-guarantee † | 3 | 0 | 0 |"));
  EXPECT_THAT(*md, HasSubstr("Some charts could not be drawn"));
  EXPECT_THAT(*md, Not(HasSubstr("![")));
  EXPECT_TRUE(std::filesystem::exists(dir.File("report/plot/loss-duplicates.gp")));
}

// --- Not tested, explanations, instantaneous faults ------------------------

// A run analysed the way the runner does it: timeline, not-tested mark and
// expectations from its samples and figures.
RunResult Analysed(RunResult run) {
  FillTimeline(run);
  MarkNotTested(run);
  run.violations = CheckExpectations(run);
  return run;
}

// One kill-worker scenario: 100 records produced at once at 0 s; the sink
// receives them from `flow_s` on; the kill at `fault_s` is healed at once.
RunResult Kill(const std::string& guarantee, double flow_s, double fault_s) {
  RunResult run;
  run.scenario = "worker-kill";
  run.guarantee = guarantee;
  run.fault = "kill-worker";
  run.records = 100;
  for (int i = 0; i < 40; ++i) {
    const double t = i * 0.2;
    const int64_t sink = t >= flow_s - 1e-9 ? 100 : 0;
    run.samples.push_back({t, sink, sink, 100});
  }
  run.fault_planned_s = fault_s;
  run.fault_start_s = fault_s;
  run.fault_end_s = fault_s + 0.01;
  return Analysed(run);
}

StudyResults OneScenario(std::vector<RunResult> runs) {
  StudyResults r;
  r.seed = 1;
  r.records = 100;
  r.rate = 4000;
  r.runs = std::move(runs);
  return r;
}

std::string ReportOf(const StudyResults& r, tempest::testing::TempDir& dir) {
  const std::string out = dir.File("report");
  absl::StatusOr<ReportFiles> files = WriteReport(r, out);
  EXPECT_TRUE(files.ok()) << files.status();
  if (!files.ok()) return "";
  absl::StatusOr<std::string> md = os::ReadSmallFile(files->report_md);
  EXPECT_TRUE(md.ok()) << md.status();
  return md.ok() ? *md : "";
}

TEST(VacuousRunTest, AFaultBeforeThePipelineFlowedFailsTheVerdict) {
  // The recorded case: 100 records, the fault at 0.025 s, nothing at the
  // sink before it; every figure is 0 and every expectation "holds".
  const RunResult vacuous = Kill("at-least-once", 5.0, 0.025);
  ASSERT_TRUE(vacuous.violations.empty());
  ASSERT_TRUE(vacuous.not_tested);
  EXPECT_THAT(vacuous.not_tested_reason, HasSubstr("before any record had reached the sink"));
  ASSERT_TRUE(vacuous.recovery_s.has_value());
  EXPECT_NEAR(*vacuous.recovery_s, 5.0, 0.25);  // the sink stood at 0 for 5 s

  const StudyResults study = OneScenario({vacuous});
  const Verdict verdict = VerdictOf(study);
  EXPECT_FALSE(verdict.passed());
  EXPECT_EQ(verdict.not_tested, 1u);
  EXPECT_EQ(verdict.violations, 0u);

  tempest::testing::TempDir dir("study-report");
  const std::string md = ReportOf(study, dir);
  EXPECT_THAT(md, Not(HasSubstr("all expectations held")));
  EXPECT_THAT(md, HasSubstr("**Verdict: failed, 1 of 1 run not tested**"));
  EXPECT_THAT(md, HasSubstr("| worker-kill | at-least-once ‡ |"));
  EXPECT_THAT(md, HasSubstr("## Not tested\n"));
  EXPECT_THAT(md, HasSubstr("- **worker-kill / at-least-once**: the fault fired at 0.0 s, before "
                            "any record had reached the sink"));
  EXPECT_THAT(md, HasSubstr("Not tested: the fault fired at 0.0 s"));

  // results.json carries the mark and reads it back.
  absl::StatusOr<StudyResults> back = ResultsFromJson(ResultsToJson(study));
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_TRUE(back->runs[0].not_tested);
  EXPECT_EQ(back->runs[0].not_tested_reason, vacuous.not_tested_reason);
  EXPECT_THAT(ResultsToJson(study), HasSubstr("\"not_tested\": true"));
  EXPECT_FALSE(VerdictOf(*back).passed());
}

TEST(VacuousRunTest, ATestedRunNextToAVacuousOneStillFails) {
  const StudyResults study =
      OneScenario({Kill("at-least-once", 0.2, 1.0), Kill("at-most-once", 5.0, 0.025)});
  EXPECT_FALSE(study.runs[0].not_tested) << study.runs[0].not_tested_reason;
  EXPECT_TRUE(study.runs[1].not_tested);
  EXPECT_FALSE(VerdictOf(study).passed());
  tempest::testing::TempDir dir("study-report");
  const std::string md = ReportOf(study, dir);
  EXPECT_THAT(md, HasSubstr("**Verdict: failed, 1 of 2 runs not tested**"));
  EXPECT_THAT(md, Not(HasSubstr("all expectations held")));

  // Without the vacuous run the verdict passes.
  const StudyResults tested = OneScenario({study.runs[0]});
  EXPECT_TRUE(VerdictOf(tested).passed());
  tempest::testing::TempDir dir2("study-report");
  EXPECT_THAT(ReportOf(tested, dir2), HasSubstr("**Verdict: all expectations held** (1 runs)."));
}

TEST(VacuousRunTest, NoSamplesIsNotTested) {
  RunResult run;
  run.scenario = "worker-kill";
  run.guarantee = "at-least-once";
  run.fault = "kill-worker";
  run.records = 100;
  run = Analysed(run);
  EXPECT_TRUE(run.not_tested);
  EXPECT_THAT(run.not_tested_reason, HasSubstr("nothing was measured"));
  EXPECT_FALSE(VerdictOf(OneScenario({run})).passed());
}

TEST(VacuousRunTest, OlderResultsWithoutTheMarkAreJudgedFromTheirFigures) {
  nlohmann::json j =
      nlohmann::json::parse(ResultsToJson(OneScenario({Kill("at-least-once", 5.0, 0.025)})));
  j["runs"][0].erase("not_tested");
  j["runs"][0].erase("not_tested_reason");
  absl::StatusOr<StudyResults> back = ResultsFromJson(j.dump());
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_TRUE(back->runs[0].not_tested);
  EXPECT_THAT(back->runs[0].not_tested_reason, HasSubstr("before any record"));

  j["runs"][0]["not_tested"] = "yes";
  EXPECT_THAT(ErrorOf(j.dump()), HasSubstr("\"not_tested\" must be true or false"));
}

TEST(ExplanationColumnTest, EachRowSaysWhyAndLinksTheGuide) {
  // zk-session-expiry at-least-once: every record duplicated after the
  // session expired; commits stood at 1000 while 5000 records were produced.
  RunResult run;
  run.scenario = "zk-session-expiry";
  run.guarantee = "at-least-once";
  run.fault = "zk-session-expiry";
  run.records = 5000;
  for (int i = 0; i < 50; ++i) {
    const int64_t produced = std::min<int64_t>(5000, i * 250);
    const int64_t committed = i < 4 || i >= 30 ? produced : 1000;
    run.samples.push_back({i * 0.2, produced + (i >= 30 ? 4000 : 0), committed, produced});
  }
  run.fault_start_s = 0.8;
  run.fault_end_s = 4.8;
  run.duplicated = 4000;
  run.replayed = 4000;
  run.max_copies = 2;
  run.dedup_sink = DedupSinkResult{0, 0, 4000, 0};
  run = Analysed(run);
  ASSERT_FALSE(run.not_tested) << run.not_tested_reason;
  const int64_t bound = ReplayBound(run);
  EXPECT_GE(bound, run.duplicated);

  RunResult amo = run;
  amo.guarantee = "at-most-once";
  amo.duplicated = amo.replayed = 0;
  amo.max_copies = 1;
  amo.lost = 40;
  amo.committed_not_processed = 40;
  amo.dedup_sink.reset();
  amo.violations = CheckExpectations(amo);

  tempest::testing::TempDir dir("study-report");
  const std::string md = ReportOf(OneScenario({run, amo}), dir);
  EXPECT_THAT(md, HasSubstr("| dedup sink lost / dup | why |"));
  EXPECT_THAT(md, HasSubstr(absl::StrCat(
                      "| The spout's session expired, so the spout re-read from its last "
                      "committed offset; duplicates are bounded by the records read since that "
                      "commit (",
                      bound, ") ([guide](docs/study-guide.md#replay-from-the-last-commit)). |")));
  EXPECT_THAT(md, HasSubstr("in flight when the spout's ZooKeeper connections were cut were lost; "
                            "the loss is bounded by the offsets committed but never received (40) "
                            "([guide](docs/study-guide.md#committed-before-processed)). |"));
  EXPECT_THAT(md, HasSubstr("[study guide](docs/study-guide.md)"));
}

// The timeline script of TimelineChart for `r`'s one scenario, read back
// from plot/.
std::string TimelineScript(const StudyResults& r, tempest::testing::TempDir& dir,
                           const std::string& scenario) {
  const std::string out = dir.File("report");
  EXPECT_TRUE(WriteReport(r, out).ok());
  absl::StatusOr<std::string> gp =
      os::ReadSmallFile(absl::StrCat(out, "/plot/timeline-", scenario, ".gp"));
  EXPECT_TRUE(gp.ok()) << gp.status();
  return gp.ok() ? *gp : "";
}

TEST(TimelineChartTest, AnInstantaneousFaultIsAMarkedLine) {
  const StudyResults study = OneScenario({Kill("at-least-once", 0.2, 1.0)});
  tempest::testing::TempDir dir("study-report");
  const std::string gp = TimelineScript(study, dir, "worker-kill");
  EXPECT_THAT(gp, HasSubstr("set arrow from first 1, graph 0 to first 1, graph 1 nohead front"));
  EXPECT_THAT(gp, HasSubstr("set label '' at first 1, graph 1 front point pt 9"));
  EXPECT_THAT(gp, HasSubstr("title 'fault (instant)'"));
  EXPECT_THAT(gp, Not(HasSubstr("set object rect")));
  EXPECT_THAT(gp, Not(HasSubstr("fault window")));

  // A fault that lasted is still a shaded window.
  RunResult lasting = Kill("at-least-once", 0.2, 1.0);
  lasting.fault_end_s = 3.0;
  tempest::testing::TempDir dir2("study-report");
  const std::string shaded = TimelineScript(OneScenario({lasting}), dir2, "worker-kill");
  EXPECT_THAT(shaded, HasSubstr("set object rect from first 1, graph 0 to first 3,"));
  EXPECT_THAT(shaded, Not(HasSubstr("fault (instant)")));
}

TEST(TimelineChartTest, TheProducedLineEndsWhereProductionEnded) {
  // 1000 records/s for 2 s, sampled for 6 s.
  RunResult run;
  run.scenario = "worker-kill";
  run.guarantee = "at-least-once";
  run.fault = "kill-worker";
  run.records = 2000;
  for (int i = 0; i < 30; ++i) {
    const int64_t produced = std::min<int64_t>(2000, i * 200);
    run.samples.push_back({i * 0.2, produced, produced, produced});
  }
  run.fault_start_s = 1.0;
  run.fault_end_s = 1.0;
  tempest::testing::TempDir dir("study-report");
  const std::string gp = TimelineScript(OneScenario({Analysed(run)}), dir, "worker-kill");
  EXPECT_THAT(gp, HasSubstr("using 1:7 with lines dt 3"));
  absl::StatusOr<std::string> data =
      os::ReadSmallFile(dir.File("report/plot/timeline-worker-kill--at-least-once.dat"));
  ASSERT_TRUE(data.ok()) << data.status();
  // Column 7 has a rate up to the sample that saw the final log end (2 s)
  // and is missing after it.
  EXPECT_THAT(*data, HasSubstr("\n2 2000 2000 2000 0 1000 1000\n"));
  EXPECT_THAT(*data, ::testing::ContainsRegex("\n2\\.2 2000 2000 2000 0 [0-9.]+ \\?\n"));
  EXPECT_THAT(*data, HasSubstr("\n5.8 2000 2000 2000 0 0 ?\n"));
}

}  // namespace
}  // namespace tempest::study
