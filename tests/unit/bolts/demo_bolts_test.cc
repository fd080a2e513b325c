// SplitSentenceBolt, WordCountBolt, LogBolt, FileSinkBolt and the registry.
#include <fstream>
#include <string>
#include <vector>

#include "bolts/builtin_bolts.h"
#include "bolts/file_sink_bolt.h"
#include "bolts/log_bolt.h"
#include "bolts/split_sentence_bolt.h"
#include "bolts/word_count_bolt.h"
#include "gtest/gtest.h"
#include "tests/support/component_harness.h"
#include "tests/support/fake_clock.h"
#include "tests/support/output_file.h"
#include "tests/support/temp_dir.h"

namespace tempest::bolts {
namespace {

using testing::FakeClock;
using testing::FakeOutputCollector;
using testing::MakeArgs;
using testing::MakeTuple;

// Creates a bolt through the registry, the way Flux does.
std::unique_ptr<api::Bolt> MakeBolt(const std::string& cls, api::ValueMap props,
                                    FakeOutputCollector& out, api::Config component = {}) {
  api::ComponentRegistry registry;
  EXPECT_TRUE(RegisterBuiltinBolts(registry).ok());
  auto made = registry.CreateBolt(MakeArgs(cls, std::move(props)));
  EXPECT_TRUE(made.ok()) << made.status();
  if (!made.ok()) return nullptr;
  absl::Status prepared =
      (*made)->Prepare({}, testing::MakeContext("c", {}, std::move(component)), out);
  EXPECT_TRUE(prepared.ok()) << prepared;
  return *std::move(made);
}

std::vector<std::string> Words(const FakeOutputCollector& out) {
  std::vector<std::string> w;
  for (const auto& e : out.emitted) w.push_back(e.values[0].AsString());
  return w;
}

TEST(SplitSentenceBoltTest, EmitsEachWordAnchoredAndAcks) {
  FakeOutputCollector out;
  auto bolt = MakeBolt("tempest.SplitSentenceBolt", {}, out);
  api::Tuple in = MakeTuple({"line"}, {api::Value("  the cow\tjumped  over\r\n")});
  bolt->Execute(in);
  EXPECT_EQ(Words(out), (std::vector<std::string>{"the", "cow", "jumped", "over"}));
  for (const auto& e : out.emitted) {
    ASSERT_EQ(e.anchors.size(), 1u);
    EXPECT_EQ(e.anchors[0].GetString(0), in.GetString(0));
  }
  EXPECT_EQ(out.acked.size(), 1u);
  api::OutputFieldsDeclarer d;
  bolt->DeclareOutputFields(d);
  EXPECT_EQ(d.streams().at(api::DefaultStreamId()).fields, api::Fields({"word"}));
}

TEST(SplitSentenceBoltTest, FirstFieldFallbackLowercaseAndNonText) {
  FakeOutputCollector out;
  auto bolt = MakeBolt("tempest.SplitSentenceBolt", {{"lowercase", true}}, out);
  bolt->Execute(MakeTuple({"sentence"}, {api::Value("Hello World")}));
  EXPECT_EQ(Words(out), (std::vector<std::string>{"hello", "world"}));
  bolt->Execute(MakeTuple({"line"}, {api::Value(42)}));
  EXPECT_EQ(out.emitted.size(), 2u);
  EXPECT_EQ(out.errors.size(), 1u);
  EXPECT_EQ(out.acked.size(), 2u);  // reported, not failed: a replay would not help
}

TEST(WordCountBoltTest, EmitsChangedCountsOnTick) {
  FakeOutputCollector out;
  api::Config component;
  component.Set(api::kTopologyTickTupleFreqSecs, 1);
  auto bolt = MakeBolt("tempest.WordCountBolt", {}, out, component);
  for (const char* w : {"b", "a", "b", "b"}) bolt->Execute(MakeTuple({"word"}, {api::Value(w)}));
  EXPECT_TRUE(out.emitted.empty());
  EXPECT_EQ(out.acked.size(), 4u);
  bolt->Execute(api::Tuple::MakeTick(1));
  ASSERT_EQ(out.emitted.size(), 2u);
  EXPECT_EQ(out.emitted[0].values, (api::Values{"a", 1}));
  EXPECT_EQ(out.emitted[1].values, (api::Values{"b", 3}));
  EXPECT_TRUE(out.emitted[0].anchors.empty());
  // Only words that changed since the last tick.
  bolt->Execute(MakeTuple({"word"}, {api::Value("a")}));
  bolt->Execute(api::Tuple::MakeTick(1));
  ASSERT_EQ(out.emitted.size(), 3u);
  EXPECT_EQ(out.emitted[2].values, (api::Values{"a", 2}));
  bolt->Execute(api::Tuple::MakeTick(1));
  EXPECT_EQ(out.emitted.size(), 3u);
  bolt->Cleanup();
}

// With no tick configured the counts still flow: Poll emits them on time.
TEST(WordCountBoltTest, WithoutTicksPollEmitsChangedCountsEveryInterval) {
  FakeClock clock;
  FakeOutputCollector out;
  auto made = WordCountBolt::Create(MakeArgs("tempest.WordCountBolt", {{"emitIntervalMs", 500}}),
                                    clock);
  ASSERT_TRUE(made.ok()) << made.status();
  WordCountBolt& bolt = **made;
  ASSERT_TRUE(bolt.Prepare({}, testing::MakeContext("counter"), out).ok());
  ASSERT_EQ(bolt.PollInterval(), std::chrono::milliseconds(500));
  bolt.Execute(MakeTuple({"word"}, {api::Value("a")}));
  EXPECT_FALSE(bolt.Poll());  // not due yet
  clock.Advance(std::chrono::milliseconds(500));
  EXPECT_TRUE(bolt.Poll());
  ASSERT_EQ(out.emitted.size(), 1u);
  EXPECT_EQ(out.emitted[0].values, (api::Values{"a", 1}));
  clock.Advance(std::chrono::milliseconds(500));
  EXPECT_FALSE(bolt.Poll());  // nothing changed since
  EXPECT_EQ(out.emitted.size(), 1u);
}

TEST(WordCountBoltTest, WithTicksConfiguredItDoesNotAskForPolls) {
  FakeOutputCollector out;
  api::Config component;
  component.Set(api::kTopologyTickTupleFreqSecs, 1);
  auto bolt = MakeBolt("tempest.WordCountBolt", {}, out, component);
  EXPECT_EQ(bolt->PollInterval(), std::nullopt);
}

TEST(WordCountBoltTest, EmitEveryTupleIsAnchored) {
  FakeOutputCollector out;
  auto bolt = MakeBolt("tempest.WordCountBolt", {{"emitEvery", "tuple"}}, out);
  bolt->Execute(MakeTuple({"word"}, {api::Value("x")}));
  bolt->Execute(MakeTuple({"word"}, {api::Value("x")}));
  ASSERT_EQ(out.emitted.size(), 2u);
  EXPECT_EQ(out.emitted[1].values, (api::Values{"x", 2}));
  EXPECT_EQ(out.emitted[1].anchors.size(), 1u);
  api::ComponentRegistry registry;
  ASSERT_TRUE(RegisterBuiltinBolts(registry).ok());
  auto bad = registry.CreateBolt(MakeArgs("tempest.WordCountBolt", {{"emitEvery", "hour"}}));
  EXPECT_EQ(bad.status().code(), absl::StatusCode::kInvalidArgument);
}

TEST(LogBoltTest, LogsEveryNthAndAcksAll) {
  auto made = LogBolt::Create(MakeArgs("tempest.LogBolt", {{"logEvery", 2}}));
  ASSERT_TRUE(made.ok());
  LogBolt* log = made->get();
  api::BasicBoltRunner runner(std::unique_ptr<api::BasicBolt>(made->release()));
  FakeOutputCollector out;
  ASSERT_TRUE(runner.Prepare({}, testing::MakeContext("log"), out).ok());
  for (int i = 0; i < 5; ++i) runner.Execute(MakeTuple({"n"}, {api::Value(i)}));
  EXPECT_EQ(out.acked.size(), 5u);
  EXPECT_EQ(log->seen(), 5);
  EXPECT_EQ(log->logged(), 3);
  EXPECT_FALSE(LogBolt::Create(MakeArgs("tempest.LogBolt", {{"logEvery", 0}})).ok());
}

TEST(FileSinkBoltTest, AppendsFieldOrWholeTupleThenAcks) {
  testing::TempDir dir("file-sink-test");
  FakeOutputCollector out;
  out.on_ack = [&](const api::Tuple&) {
    EXPECT_FALSE(testing::ReadFileOrEmpty(dir.File("all.txt")).empty()) << "acked before write";
  };
  auto whole = MakeBolt("tempest.FileSinkBolt", {{"path", dir.File("all.txt")}}, out);
  whole->Execute(MakeTuple({"w", "n"}, {api::Value("a b"), api::Value(3)}));
  whole->Execute(MakeTuple({"w", "n"}, {api::Value("multi\nline"), api::Value(true)}));
  whole->Cleanup();
  EXPECT_EQ(testing::ReadFileOrEmpty(dir.File("all.txt")), "a b\t3\nmulti\\nline\ttrue\n");
  EXPECT_EQ(out.acked.size(), 2u);

  FakeOutputCollector out2;
  auto field =
      MakeBolt("tempest.FileSinkBolt",
               {{"path", dir.File("words-{task}.txt")}, {"field", "w"}, {"sync", true}}, out2);
  field->Execute(MakeTuple({"w", "n"}, {api::Value("hello"), api::Value(1)}));
  field->Execute(MakeTuple({"n"}, {api::Value(1)}));  // no such field: failed
  field->Cleanup();
  EXPECT_EQ(testing::ReadFileOrEmpty(dir.File("words-1.txt")), "hello\n");
  EXPECT_EQ(out2.acked.size(), 1u);
  EXPECT_EQ(out2.failed.size(), 1u);
}

// Undoes FileSinkBolt's escapes in one field, as docs/user-guide.md tells a
// reader to.
std::string Unescape(const std::string& field) {
  std::string out;
  for (size_t i = 0; i < field.size(); ++i) {
    if (field[i] != '\\' || i + 1 == field.size()) {
      out += field[i];
      continue;
    }
    const char e = field[++i];
    if (e == 't') out += '\t';
    else if (e == 'n') out += '\n';
    else if (e == 'r') out += '\r';
    else if (e == 'x' && i + 2 < field.size()) {
      out += static_cast<char>(std::stoi(field.substr(i + 1, 2), nullptr, 16));
      i += 2;
    } else out += e;
  }
  return out;
}

std::vector<std::string> Split(const std::string& line, const std::string& separator) {
  std::vector<std::string> fields;
  for (size_t at = 0;;) {
    const size_t next = line.find(separator, at);
    fields.push_back(line.substr(at, next == std::string::npos ? next : next - at));
    if (next == std::string::npos) return fields;
    at = next + separator.size();
  }
}

TEST(FileSinkBoltTest, ValuesAreEscapedSoEachLineIsOneRecordThatSplitsBack) {
  testing::TempDir dir("file-sink-test");
  const std::vector<std::string> values = {std::string("tab\there", 8), "two\nlines\r",
                                           std::string("nul\0byte \x1b[31m", 14),
                                           "back\\slash \\t", "comma, and ;; too"};
  int files = 0;
  for (const std::string separator : {"\t", ";;", ","}) {
    FakeOutputCollector out;
    const std::string path = dir.File("sep" + std::to_string(++files) + ".txt");
    auto bolt = MakeBolt("tempest.FileSinkBolt", {{"path", path}, {"separator", separator}}, out);
    ASSERT_NE(bolt, nullptr);
    std::vector<std::string> names;
    std::vector<api::Value> tuple;
    for (size_t i = 0; i < values.size(); ++i) {
      names.push_back("f" + std::to_string(i));
      tuple.emplace_back(values[i]);
    }
    bolt->Execute(MakeTuple(names, tuple));
    bolt->Execute(MakeTuple({"f0"}, {api::Value("second")}));
    bolt->Cleanup();
    const std::string text = testing::ReadFileOrEmpty(path);
    EXPECT_EQ(text.find('\0'), std::string::npos);
    EXPECT_EQ(text.find('\x1b'), std::string::npos);
    std::vector<std::string> lines = Split(text, "\n");
    ASSERT_EQ(lines.size(), 3u) << text;  // two records, then the empty rest
    EXPECT_EQ(lines[1], "second");
    std::vector<std::string> fields = Split(lines[0], separator);
    ASSERT_EQ(fields.size(), values.size()) << separator << ": " << lines[0];
    for (size_t i = 0; i < values.size(); ++i) EXPECT_EQ(Unescape(fields[i]), values[i]) << i;
  }
  EXPECT_FALSE(FileSinkBolt::Create(MakeArgs("tempest.FileSinkBolt",
                                             {{"path", dir.File("x")}, {"separator", "\\"}}))
                   .ok());
}

TEST(FileSinkBoltTest, WriteErrorFailsTheInput) {
  FakeOutputCollector out;
  auto bolt = MakeBolt("tempest.FileSinkBolt", {{"path", "/dev/full"}}, out);
  bolt->Execute(MakeTuple({"w"}, {api::Value("x")}));
  EXPECT_TRUE(out.acked.empty());
  EXPECT_EQ(out.failed.size(), 1u);
  EXPECT_EQ(out.errors.size(), 1u);
}

TEST(BuiltinBoltsTest, AllRegisteredGloballyByClassName) {
  LinkBuiltinBolts();
  const api::ComponentRegistry& global = api::ComponentRegistry::Global();
  for (const char* cls :
       {"tempest.IdentityBolt", "tempest.VerifierBolt", "tempest.SplitSentenceBolt",
        "tempest.WordCountBolt", "tempest.LogBolt", "tempest.FileSinkBolt",
        "tempest.KafkaBolt"}) {
    EXPECT_TRUE(global.HasBolt(cls)) << cls;
  }
  EXPECT_TRUE(global.registration_errors().empty());
  // Registering again into the global registry is harmless.
  EXPECT_TRUE(RegisterBuiltinBolts(api::ComponentRegistry::Global()).ok());
  auto bad = global.CreateBolt(MakeArgs("tempest.VerifierBolt"));
  EXPECT_EQ(bad.status().code(), absl::StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace tempest::bolts
