// The command line's pure helpers: range messages, aligned tables, the
// exports of `tempest dev`, the reason `submit --until-running` gives.

#include "cli/cli_text.h"

#include <sstream>
#include <string>
#include <vector>

#include "gtest/gtest.h"

namespace tempest::cli {
namespace {

TEST(FormatNumberTest, IntegralValuesHaveNoFractionNorExponent) {
  EXPECT_EQ(FormatNumber(0), "0");
  EXPECT_EQ(FormatNumber(31536000), "31536000");
  EXPECT_EQ(FormatNumber(-3), "-3");
  EXPECT_EQ(FormatNumber(1e18), "1000000000000000000");
  EXPECT_EQ(FormatNumber(0.5), "0.5");
}

TEST(RangeMessageTest, NamesBothBoundsAndTheValue) {
  EXPECT_EQ(RangeMessage(0, kMaxSeconds, "-3"), "must be between 0 and 31536000 (got -3)");
}

TEST(BoundedTest, AcceptsTheBoundsAndRejectsOutsideOrNonNumbers) {
  CLI::Validator v = Bounded(1, 16);
  std::string in = "1";
  EXPECT_EQ(v(in), "");
  in = "16";
  EXPECT_EQ(v(in), "");
  in = "17";
  EXPECT_EQ(v(in), "must be between 1 and 16 (got 17)");
  in = "abc";
  EXPECT_EQ(v(in), "must be between 1 and 16 (got abc)");
  in = "nan";
  EXPECT_EQ(v(in), "must be between 1 and 16 (got nan)");
  EXPECT_EQ(v.get_description(), "in [1..16]");
}

TEST(BoundedTest, OptionErrorIsOneShortLine) {
  CLI::App app;
  double duration = 0;
  app.add_option("--duration", duration)->check(Bounded(0, kMaxSeconds));
  try {
    app.parse(std::vector<std::string>{"-3", "--duration"});  // reversed: argv order
    FAIL() << "accepted -3";
  } catch (const CLI::ParseError& e) {
    const std::string what = e.what();
    EXPECT_EQ(what, "--duration: must be between 0 and 31536000 (got -3)");
  }
}

std::vector<std::string> Lines(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

TEST(FormatTableTest, ColumnsFollowTheirWidestCell) {
  const std::string name(40, 'n');
  const std::string table =
      FormatTable({"Topology_name", "Status", "Topology_Id"},
                  {{"short", "ACTIVE", "short-1-1"}, {name, "INACTIVE", name + "-2-2"}});
  const std::vector<std::string> lines = Lines(table);
  ASSERT_EQ(lines.size(), 4u);
  // Every row's second and third columns start where the header's do.
  const size_t status_col = lines[0].find("Status");
  const size_t id_col = lines[0].find("Topology_Id");
  EXPECT_EQ(status_col, name.size() + 2);
  EXPECT_EQ(lines[2].find("ACTIVE"), status_col);
  EXPECT_EQ(lines[3].find("INACTIVE"), status_col);
  EXPECT_EQ(lines[2].find("short-1-1"), id_col);
  EXPECT_EQ(lines[3].find(name + "-2-2"), id_col);
  EXPECT_EQ(lines[1].find_first_not_of('-'), std::string::npos);
  for (const std::string& l : lines) EXPECT_NE(l.back(), ' ') << l;
}

TEST(PrintableTest, ControlCharactersAreWrittenAsEscapes) {
  EXPECT_EQ(Printable("alice"), "alice");
  EXPECT_EQ(Printable("\xc3\xa9ve \\ x"), "\xc3\xa9ve \\ x");  // UTF-8 and '\' unchanged
  EXPECT_EQ(Printable(std::string("a\x1b[2Jb\nc\td\x7f\0e", 13)),
            "a\\x1b[2Jb\\x0ac\\x09d\\x7f\\x00e");
  EXPECT_EQ(Printable("csi \xc2\x9b" "31m"), "csi \\u009b31m");
  EXPECT_EQ(Printable("\xc2"), "\xc2");  // a truncated sequence is no control
}

TEST(FormatTableTest, CellsArePrintedEscapedOneRowPerLine) {
  const std::string table =
      FormatTable({"Name", "Owner"}, {{"demo", "eve\x1b]0;x\x07\nforged"}, {"other", "bob"}});
  const std::vector<std::string> lines = Lines(table);
  ASSERT_EQ(lines.size(), 4u) << table;
  EXPECT_EQ(lines[2], "demo   eve\\x1b]0;x\\x07\\x0aforged");
  EXPECT_EQ(table.find('\x1b'), std::string::npos);
  // Columns are as wide as the escaped text.
  EXPECT_EQ(lines[3].find("bob"), lines[0].find("Owner"));
}

TEST(DevExportLinesTest, OneShellExportPerVariable) {
  EXPECT_EQ(DevExportLines("127.0.0.1:8080", "127.0.0.1:1,127.0.0.1:2", "127.0.0.1:2181"),
            (std::vector<std::string>{"export TEMPEST_NIMBUS=127.0.0.1:8080",
                                      "export BOOTSTRAP=127.0.0.1:1,127.0.0.1:2",
                                      "export TEMPEST_ZK=127.0.0.1:2181"}));
  EXPECT_EQ(DevExportLines("127.0.0.1:8080", "127.0.0.1:1", "127.0.0.1:2181",
                           "/tmp/tempest-dev-x/api-token")
                .back(),
            "export TEMPEST_TOKEN_FILE=/tmp/tempest-dev-x/api-token");
  EXPECT_EQ(DevExportLines("127.0.0.1:8080", "127.0.0.1:1", "127.0.0.1:2181",
                           "/tmp/my dir/it's")
                .back(),
            "export TEMPEST_TOKEN_FILE='/tmp/my dir/it'\\''s'");
  EXPECT_EQ(DevExportLines("127.0.0.1:8080", "127.0.0.1:1", "127.0.0.1:2181",
                           "/tmp/tempest-dev-x/api-token", "/tmp/tempest-dev-x/zk-auth")
                .back(),
            "export TEMPEST_ZK_AUTH_FILE=/tmp/tempest-dev-x/zk-auth");
}

TEST(ShellWordTest, QuotesOnlyWhatAShellWouldSplitOrExpand) {
  EXPECT_EQ(ShellWord("/tmp/a-b_c.d/x:1,2@3%4+5=6"), "/tmp/a-b_c.d/x:1,2@3%4+5=6");
  EXPECT_EQ(ShellWord(""), "''");
  EXPECT_EQ(ShellWord("a b"), "'a b'");
  EXPECT_EQ(ShellWord("$HOME"), "'$HOME'");
  EXPECT_EQ(ShellWord("a'b"), "'a'\\''b'");
}

TEST(DevUiUrlTest, PointsAtNimbusAndCarriesTheTokenInTheFragment) {
  EXPECT_EQ(DevUiUrl("127.0.0.1:8080", ""), "http://127.0.0.1:8080/");
  EXPECT_EQ(DevUiUrl("127.0.0.1:8080", "00ff"), "http://127.0.0.1:8080/#token=00ff");
  EXPECT_EQ(DevUiUrl("0.0.0.0:81", "t"), "http://127.0.0.1:81/#token=t");
  EXPECT_EQ(DevUiUrl("::1:81", ""), "http://[::1]:81/");
  EXPECT_EQ(DevUiUrl("localhost:81", "a+b&c#d"), "http://localhost:81/#token=a%2Bb%26c%23d");
}

TEST(RunningWaitReasonTest, SaysWhyItWaits) {
  RunningProgress full;
  full.executors_total = 5;
  full.workers_assigned = 0;
  full.supervisors = 2;
  full.slots_total = 4;
  full.slots_free = 0;
  EXPECT_EQ(RunningWaitReason(full), "0 free slots of 4; waiting");

  RunningProgress none = full;
  none.supervisors = 0;
  none.slots_total = 0;
  EXPECT_EQ(RunningWaitReason(none), "no supervisor is registered; waiting");

  RunningProgress unscheduled = full;
  unscheduled.slots_free = 3;
  EXPECT_EQ(RunningWaitReason(unscheduled), "not scheduled yet (3 free slots of 4); waiting");

  RunningProgress starting;
  starting.executors_total = 5;
  starting.executors_running = 3;
  starting.workers_beating = 1;
  starting.workers_assigned = 2;
  EXPECT_EQ(RunningWaitReason(starting), "3/5 executors running in 1 worker; waiting");
}

TEST(CliTextTest, UnknownVerbSuggestsTheClosestCommand) {
  const std::vector<std::string> verbs = {"list", "kill", "rebalance", "localconfvalue",
                                          "kill_workers", "dev-zookeeper"};
  EXPECT_EQ(UnknownCommandMessage("lst", verbs),
            "unknown command 'lst'; did you mean 'list'? (tempest --help)");
  EXPECT_EQ(ClosestName("rebalnce", verbs), "rebalance");
  EXPECT_EQ(ClosestName("kill-workers", verbs), "kill_workers");  // one edit
  EXPECT_EQ(ClosestName("dev_zookeeper", verbs), "dev-zookeeper");
  EXPECT_EQ(UnknownCommandMessage("frobnicate", verbs),
            "unknown command 'frobnicate' (tempest --help)");
}

TEST(CliTextTest, DidYouMeanIsEmptyWhenNothingIsClose) {
  const std::vector<std::string> components = {"words", "count", "report"};
  EXPECT_EQ(DidYouMean("cnt", components), "; did you mean 'count'?");
  EXPECT_EQ(DidYouMean("Count", components), "; did you mean 'count'?");  // case
  EXPECT_EQ(DidYouMean("cuont", components), "; did you mean 'count'?");  // a swap
  EXPECT_EQ(DidYouMean("xyzzy", components), "");
  EXPECT_EQ(DidYouMean("cnt", {}), "");
}

// A command line shaped like tempest's: global options, a command with
// options and a positional, one with subcommands, a prefix command.
class UsageProblemTest : public ::testing::Test {
 protected:
  UsageProblemTest() {
    app_.fallthrough();
    app_.require_subcommand(1);
    app_.add_option("--nimbus", text_);
    app_.add_option("-c", list_)->allow_extra_args(false);
    app_.add_flag("--verbose", flag_);
    CLI::App* list = app_.add_subcommand("list", "list them");
    list->add_flag("--json", flag_);
    CLI::App* kill = app_.add_subcommand("kill", "kill one");
    kill->add_option("name", text_)->required();
    kill->add_option("-w,--wait", number_);
    CLI::App* offsets = app_.add_subcommand("offsets", "offsets");
    offsets->require_subcommand(1);
    offsets->add_subcommand("show", "show")->add_option("--topic", list_);
    offsets->add_subcommand("set", "set");
    app_.add_subcommand("jar", "Storm's")->prefix_command();
  }
  std::string Problem(std::vector<std::string> args) { return UsageProblem(app_, args); }

  CLI::App app_{"test", "tempest"};
  std::string text_;
  std::vector<std::string> list_;
  bool flag_ = false;
  int number_ = 0;
};

TEST_F(UsageProblemTest, UnknownWordsAtEveryLevelGetTheClosestName) {
  EXPECT_EQ(Problem({"lst"}), "unknown command 'lst'; did you mean 'list'? (tempest --help)");
  EXPECT_EQ(Problem({"offsets", "shw"}),
            "unknown subcommand 'shw' of 'tempest offsets'; did you mean 'show'? "
            "(tempest offsets --help)");
  EXPECT_EQ(Problem({"list", "--jsn"}),
            "unknown option '--jsn' for 'tempest list'; did you mean '--json'? "
            "(tempest list --help)");
  EXPECT_EQ(Problem({"offsets", "show", "--tpic", "t"}),
            "unknown option '--tpic' for 'tempest offsets show'; did you mean '--topic'? "
            "(tempest offsets show --help)");
  EXPECT_EQ(Problem({"kill", "x", "--wiat=3"}),
            "unknown option '--wiat' for 'tempest kill'; did you mean '--wait'? "
            "(tempest kill --help)");
  EXPECT_EQ(Problem({"offsets"}),
            "'tempest offsets' needs a subcommand: show, set (tempest offsets --help)");
  EXPECT_EQ(Problem({}), "a command is required; tempest help lists them");
}

TEST_F(UsageProblemTest, ValidLinesAndWhatCli11ExplainsPassThrough) {
  EXPECT_EQ(Problem({"list", "--json"}), "");
  EXPECT_EQ(Problem({"--nimbus", "h:1", "list", "--verbose"}), "");  // global, before and after
  EXPECT_EQ(Problem({"list", "--nimbus", "list"}), "");  // a value, not a command
  EXPECT_EQ(Problem({"-c", "a=1", "kill", "name", "-w", "-5", "-c", "b=2"}), "");
  EXPECT_EQ(Problem({"kill", "offsets", "-w5"}), "");    // a positional; -w with its value
  EXPECT_EQ(Problem({"offsets", "show", "--topic", "a", "--topic=b"}), "");
  EXPECT_EQ(Problem({"jar", "app.jar", "--anything", "shw"}), "");  // the prefix command's
  EXPECT_EQ(Problem({"offsets", "--help"}), "");
  EXPECT_EQ(Problem({"list", "--jsn", "--help"}), "unknown option '--jsn' for 'tempest list'; "
                                                 "did you mean '--json'? (tempest list --help)");
  EXPECT_EQ(Problem({"kill", "--", "-odd-name"}), "");
}

TEST(CliTextTest, StormRebalanceOverridesAreCheckedAndNotedAsNotApplied) {
  auto none = StormRebalanceOverrideNotes("", "");
  ASSERT_TRUE(none.ok());
  EXPECT_TRUE(none->empty());
  auto both = StormRebalanceOverrideNotes(R"({"split": {"cpu": 50}})",
                                          R"({"topology.debug": true})");
  ASSERT_TRUE(both.ok()) << both.status();
  ASSERT_EQ(both->size(), 2u);
  EXPECT_NE((*both)[0].find("-r (component resources) accepted but not applied"),
            std::string::npos);
  EXPECT_NE((*both)[1].find("-t (topology config overrides) accepted but not applied"),
            std::string::npos);
  auto bad = StormRebalanceOverrideNotes("", "topology.debug=true");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(std::string(bad.status().message()).find("-t expects a JSON object"),
            std::string::npos);
}

}  // namespace
}  // namespace tempest::cli
