#include "study/report_charts.h"

#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <set>
#include <string_view>
#include <system_error>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_replace.h"
#include "common/core/status_macros.h"
#include "common/os/child_process.h"
#include "common/os/files.h"
#include "study/report_markdown.h"

namespace tempest::study {
namespace {

// How long one chart may take. gnuplot draws these in well under a second;
// the bound only keeps a wedged gnuplot from hanging the whole study.
constexpr std::chrono::seconds kGnuplotTimeout{60};

// The throughput line averages the sink's progress over this trailing window,
// so the 200 ms sampling jitter does not show as noise.
constexpr double kThroughputWindowS = 1.0;

// A fault healed within this long of its start (a kill, duration 0) is drawn
// as a line: as a shaded band it would be a few pixels wide at most.
constexpr double kInstantFaultS = 0.5;

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

constexpr char kTerminal[] = "pngcairo noenhanced font 'DejaVu Sans,10'";

// "1k" rather than "1000" on an axis that spans decades.
std::string TickLabel(double v) {
  if (v >= 1e6) return absl::StrFormat("%.0fM", v / 1e6);
  if (v >= 1e3) return absl::StrFormat("%.0fk", v / 1e3);
  return absl::StrFormat("%.0f", v);
}

// The data file: one row per scenario, the lost then the duplicated counts
// of each guarantee ("?" for a run that is missing). `max_value` is the
// largest count.
std::string LossDuplicatesData(const StudyResults& r, const std::vector<std::string>& scenarios,
                               const std::vector<std::string>& guarantees, int64_t* max_value) {
  std::string data =
      "# Records lost and duplicated per scenario (rows) and guarantee; ? = not run.\n"
      "# scenario";
  for (const std::string& g : guarantees) absl::StrAppend(&data, " lost:", g);
  for (const std::string& g : guarantees) absl::StrAppend(&data, " duplicated:", g);
  data.append("\n");
  for (const std::string& s : scenarios) {
    std::string lost, dup;
    for (const std::string& g : guarantees) {
      const RunResult* run = FindRun(r, s, g);
      absl::StrAppend(&lost, " ", run ? absl::StrCat(run->lost) : "?");
      absl::StrAppend(&dup, " ", run ? absl::StrCat(run->duplicated) : "?");
      if (run) *max_value = std::max({*max_value, run->lost, run->duplicated});
    }
    absl::StrAppend(&data, DataQuote(s), lost, dup, "\n");
  }
  return data;
}

// The y axis is log10(1 + count): spans 0 to millions, and 0 stays at 0.
// Ticks at 0, 1, 10, ... up to a decade (`top`) that leaves room for the
// labels.
std::vector<std::string> LogCountTicks(int64_t max_value, double* top) {
  *top = 10;
  while (std::log10(*top + 1) < std::log10(static_cast<double>(max_value) + 1) + 0.35) *top *= 10;
  // The tick at 1 would crowd the one at 0 on a tall axis.
  std::vector<std::string> ticks = {"'0' 0"};
  for (double t = *top > 100 ? 10 : 1; t <= *top; t *= 10) {
    ticks.push_back(absl::StrCat("'", TickLabel(t), "' ", t));
  }
  return ticks;
}

// Tick labels at the group centres (a data file's xtic() would sit under one
// bar of the group). A long name is wrapped after its hyphens to the width of
// its group; one that cannot be wrapped enough is slanted.
struct ScenarioTicks {
  std::vector<std::string> xtics;
  bool slant = false;
  size_t label_lines = 1;  // room below each panel for them
};

ScenarioTicks ScenarioTicksOf(const std::vector<std::string>& scenarios) {
  ScenarioTicks t;
  const size_t width = std::max<size_t>(6, 820 / 7 / std::max<size_t>(1, scenarios.size()));
  std::vector<std::vector<std::string>> names;
  for (const std::string& s : scenarios) {
    names.push_back(WrapName(s, width));
    for (const std::string& line : names.back()) t.slant = t.slant || line.size() > width;
  }
  // gnuplot leaves one line for tick labels.
  for (size_t i = 0; i < scenarios.size(); ++i) {
    t.label_lines =
        // Slanted by 25 degrees a name rises about 0.2 line per character
        // (a character is half a line wide; sin 25 = 0.42).
        std::max(t.label_lines,
                 t.slant ? (scenarios[i].size() * 22 + 99) / 100 + 1 : names[i].size());
  }
  for (size_t i = 0; i < scenarios.size(); ++i) {
    const std::vector<std::string> one_line = {scenarios[i]};
    t.xtics.push_back(absl::StrCat(GpDoubleQuote(t.slant ? one_line : names[i]), " ", i));
  }
  return t;
}

// One panel of clustered bars, a bar per guarantee from data column
// `first_col` on, each labelled with its count.
void AppendBarPanel(const std::string& title, const std::string& ylabel, size_t first_col,
                    bool key, const std::vector<std::string>& guarantees, std::string& gp) {
  const size_t g_count = guarantees.size();
  const double bar = 0.8 / static_cast<double>(g_count);
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
}

Chart LossDuplicatesChart(const StudyResults& r, const std::vector<std::string>& scenarios,
                          const std::vector<std::string>& guarantees) {
  Chart c;
  c.png = "loss-duplicates.png";
  c.script_name = "loss-duplicates.gp";
  int64_t max_value = 0;
  c.data.emplace_back("loss-duplicates.dat",
                      LossDuplicatesData(r, scenarios, guarantees, &max_value));
  double top = 10;
  const std::vector<std::string> ticks = LogCountTicks(max_value, &top);
  const ScenarioTicks x = ScenarioTicksOf(scenarios);

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
      x.slant ? " rotate by 25 right" : "", " (", absl::StrJoin(x.xtics, ", "), ")\n",
      "set ytics nomirror\n"
      "set border 3\n"
      "set lmargin 10\nset rmargin 3\nset bmargin ",
      x.label_lines + 1, "\n",
      "# Bar labels stay short (the exact counts are in report.md).\n"
      "label(v) = v < 1000 ? sprintf('%.0f', v) : v < 9950 ? sprintf('%.1fk', v / 1e3) : \\\n"
      "           v < 999500 ? sprintf('%.0fk', v / 1e3) : sprintf('%.1fM', v / 1e6)\n"
      "set multiplot layout 2,1 title 'Loss and duplicates by scenario and guarantee' "
      "font ',12'\n");
  AppendBarPanel("Lost (never reached the sink)", "records (log scale)", 2, true, guarantees, gp);
  AppendBarPanel("Duplicated (extra copies at the sink)", "records (log scale)",
                 2 + guarantees.size(), false, guarantees, gp);
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

// How a timeline marks its runs' faults, and which kinds of mark the key
// must explain.
struct FaultMarks {
  std::vector<std::string> commands;  // gnuplot set object/arrow/label lines
  bool shaded = false, instant = false, marked = false;
};

// Each run's own fault window (the runs of one scenario inject at nearly,
// not exactly, the same time), in translucent grey: where they overlap the
// shade deepens, and it matches the key. Extends `max_t` to cover it.
void MarkFault(const RunResult& run, const std::string& color, FaultMarks& marks,
               double* max_t) {
  if (!run.fault_start_s.has_value() || !std::isfinite(*run.fault_start_s)) return;
  const double start = *run.fault_start_s;
  const bool healed = run.fault_end_s.has_value() && std::isfinite(*run.fault_end_s);
  if (healed && *run.fault_end_s - start >= kInstantFaultS) {
    marks.commands.push_back(absl::StrCat("set object rect from first ", Num(start),
                                          ", graph 0 to first ", Num(*run.fault_end_s),
                                          ", graph 1 behind fc rgb '#808080'"
                                          " fs transparent solid 0.15 noborder\n"));
    marks.shaded = true;
    *max_t = std::max(*max_t, *run.fault_end_s);
  } else if (healed) {
    // An instantaneous fault (a kill): a band this narrow would be
    // invisible, so a solid line in the run's colour, topped by a marker.
    marks.commands.push_back(absl::StrCat(
        "set arrow from first ", Num(start), ", graph 0 to first ", Num(start),
        ", graph 1 nohead front lw 2 lc rgb '", color, "'\n", "set label '' at first ", Num(start),
        ", graph 1 front point pt 9 ps 1.5 lc rgb '", color, "'\n"));
    marks.instant = true;
  } else {
    // Never healed: a dashed marker at the injection.
    marks.commands.push_back(absl::StrCat("set arrow from first ", Num(start),
                                          ", graph 0 to first ", Num(start),
                                          ", graph 1 nohead back lw 2 dt 2 lc rgb '", color,
                                          "'\n"));
    marks.marked = true;
  }
  *max_t = std::max(*max_t, start);
}

// One guarantee's line in both panels of a timeline.
struct TimelineLine {
  std::string file, guarantee, color;
};

// Throughput panel, with the produced rate for reference and key entries
// explaining the fault marks.
void AppendThroughputPanel(const std::vector<TimelineLine>& lines, const FaultMarks& marks,
                           double rate_top, std::string& gp) {
  absl::StrAppend(&gp, "set ylabel 'sink throughput (records/s)'\n",
                  "set yrange [0:", Num(rate_top), "]\n", "set format x ''\nunset xlabel\n",
                  "set key outside top center horizontal samplen 2\n");
  std::vector<std::string> plots;
  for (const TimelineLine& l : lines) {
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
  if (marks.shaded) {
    plots.push_back(
        "keyentry with boxes fc rgb '#808080' fs transparent solid 0.3 noborder "
        "title 'fault window'");
  }
  if (marks.instant) {
    plots.push_back(
        "keyentry with linespoints lw 2 pt 9 ps 1.5 lc rgb '#555555' title 'fault (instant)'");
  }
  if (marks.marked) {
    plots.push_back("keyentry with lines lw 2 dt 2 lc rgb '#555555' title 'fault (not healed)'");
  }
  absl::StrAppend(&gp, "plot ", absl::StrJoin(plots, ", \\\n     "), "\n");
}

void AppendLagPanel(const std::vector<TimelineLine>& lines, double lag_top, std::string& gp) {
  absl::StrAppend(&gp, "set ylabel 'commit lag (records)'\n", "set yrange [0:", Num(lag_top), "]\n",
                  "set format x '%g'\nset xlabel 'time since production started (s)'\n",
                  "unset key\n");
  std::vector<std::string> plots;
  for (const TimelineLine& l : lines) {
    plots.push_back(absl::StrCat("'", l.file, "' using 1:5 with lines lw 2 lc rgb '", l.color,
                                 "' title ", GpQuote(l.guarantee)));
  }
  absl::StrAppend(&gp, "plot ", absl::StrJoin(plots, ", \\\n     "), "\nunset multiplot\n");
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
  std::vector<TimelineLine> lines;
  FaultMarks marks;
  for (size_t i = 0; i < guarantees.size(); ++i) {
    const RunResult* run = FindRun(r, scenario, guarantees[i]);
    if (run == nullptr) continue;
    if (fault.empty()) fault = run->fault;
    const std::string color = ColorOf(guarantees[i], i);
    const std::string file = absl::StrCat("timeline-", slug, "--", Slug(guarantees[i]), ".dat");
    c.data.emplace_back(file, TimelineData(*run, &max_rate, &max_lag, &max_t));
    points += run->samples.size();
    lines.push_back({file, guarantees[i], color});
    MarkFault(*run, color, marks, &max_t);
  }
  if (points < 2) return std::nullopt;  // nothing to draw a line through

  const std::string title =
      fault.empty() || fault == scenario
          ? absl::StrCat(scenario, ": sink throughput and commit lag")
          : absl::StrCat(scenario, " (fault: ", fault, "): sink throughput and commit lag");
  std::string gp =
      absl::StrCat("# ", MarkdownCell(title), " (tempest study).\n",
                   "# Re-plot: cd into this directory and run `gnuplot ", c.script_name, "`.\n",
                   "set terminal ", kTerminal, " size 900,500\n", "set output '../", c.png, "'\n",
                   "set datafile missing '?'\n"
                   "set xrange [0:",
                   Num(std::max(max_t, 1.0)), "]\n",
                   "set grid xtics ytics lc rgb '#dddddd'\n"
                   "set border 3\nset xtics nomirror\nset ytics nomirror\n"
                   "set lmargin 12\nset rmargin 3\n",
                   absl::StrJoin(marks.commands, ""), "set multiplot layout 2,1 title ",
                   GpQuote(title), " font ',12'\n");
  AppendThroughputPanel(lines, marks, NiceCeil(std::max(max_rate, r.rate) * 1.1), gp);
  AppendLagPanel(lines, NiceCeil(max_lag * 1.1), gp);
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

}  // namespace

ChartPlan PlanCharts(const StudyResults& r) {
  ChartPlan plan;
  const std::vector<std::string> scenarios = ScenariosOf(r);
  const std::vector<std::string> guarantees = GuaranteesOf(r);
  if (!r.runs.empty()) plan.charts.push_back(LossDuplicatesChart(r, scenarios, guarantees));
  std::set<std::string> slugs;
  for (const std::string& scenario : scenarios) {
    // Distinct scenario names could share a slug ("a b", "a-b").
    std::string slug = Slug(scenario);
    for (int n = 2; !slugs.insert(slug).second; ++n) slug = absl::StrCat(Slug(scenario), "-", n);
    if (std::optional<Chart> c = TimelineChart(r, scenario, slug, guarantees)) {
      plan.timelines.emplace_back(scenario, c->png);
      plan.charts.push_back(*std::move(c));
    }
  }
  return plan;
}

absl::Status WriteChartSources(const ChartPlan& plan, const std::string& plot_dir) {
  for (const Chart& c : plan.charts) {
    for (const auto& [name, content] : c.data) {
      RETURN_IF_ERROR(os::WriteFileAtomically(absl::StrCat(plot_dir, "/", name), content));
    }
    if (absl::Status s =
            os::WriteFileAtomically(absl::StrCat(plot_dir, "/", c.script_name), c.script);
        !s.ok()) {
      return s;
    }
  }
  return absl::OkStatus();
}

DrawnCharts DrawCharts(const ChartPlan& plan, const std::string& dir) {
  DrawnCharts drawn;
  const std::string plot_dir = absl::StrCat(dir, "/plot");
  const std::string log = absl::StrCat(plot_dir, "/gnuplot.log");
  ::unlink(log.c_str());
  std::vector<std::string> errors;
  for (const Chart& c : plan.charts) {
    const std::string png = absl::StrCat(dir, "/", c.png);
    // A chart left over from an earlier report must not pass for this one.
    ::unlink(png.c_str());
    absl::Status s = RunGnuplot(plot_dir, c.script_name, log);
    std::error_code ec;
    if (s.ok() && std::filesystem::file_size(png, ec) > 0 && !ec) {
      drawn.pngs.push_back(c.png);
      drawn.paths.push_back(png);
      continue;
    }
    if (s.ok()) {
      s = absl::InternalError(absl::StrCat("gnuplot ", c.script_name, " wrote no ", c.png));
    }
    errors.push_back(std::string(s.message()));
    // Without gnuplot the other charts would fail the same way.
    if (absl::IsFailedPrecondition(s)) break;
  }
  drawn.error = absl::StrJoin(errors, "; ");
  return drawn;
}

}  // namespace tempest::study
