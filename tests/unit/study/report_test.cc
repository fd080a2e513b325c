#include "study/report.h"

#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <string>

#include "absl/status/status.h"
#include "common/os/files.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
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
  EXPECT_TRUE(b.violations.empty());
  ASSERT_EQ(b.samples.size(), 2u);
  EXPECT_EQ(b.samples[0].committed, -1);

  // Writing what was read gives the same text: nothing was dropped.
  EXPECT_EQ(ResultsToJson(*out), text);
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
  EXPECT_THAT(*md, HasSubstr("| – |\n"));  // no dedup sink
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

}  // namespace
}  // namespace tempest::study
