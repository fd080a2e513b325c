#include <string>

#include "common/multilang/json_codec.h"
#include "common/multilang/shell_component.h"
#include "common/multilang/shell_process.h"
#include "gtest/gtest.h"

namespace tempest::multilang {
namespace {

nlohmann::json RoundTrip(const api::Value& v) {
  std::string text;
  AppendJsonValue(v, text);
  return nlohmann::json::parse(text, nullptr, false);
}

TEST(JsonCodecTest, TupleValuesBecomeValidJson) {
  api::ValueMap map{{"k", api::Value(int64_t{1})}};
  api::Values values{api::Value("a \"q\" \\ \n\t\x01 é"), api::Value(int64_t{-7}),
                     api::Value(2.0),     api::Value(true),
                     api::Value(),        api::Value::OfBytes(std::string("\xff\x00z", 3)),
                     api::Value(std::move(map))};
  std::string text;
  AppendJsonArray(values, text);
  nlohmann::json parsed = nlohmann::json::parse(text, nullptr, false);
  ASSERT_FALSE(parsed.is_discarded()) << text;
  EXPECT_EQ(parsed[0], "a \"q\" \\ \n\t\x01 é");
  EXPECT_EQ(parsed[1], -7);
  EXPECT_TRUE(parsed[2].is_number_float());
  EXPECT_EQ(parsed[3], true);
  EXPECT_TRUE(parsed[4].is_null());
  EXPECT_EQ(parsed[5].get<std::string>(), std::string("\xc3\xbf\0z", 4));
  EXPECT_EQ(parsed[6]["k"], 1);
  EXPECT_TRUE(RoundTrip(api::Value(std::numeric_limits<double>::infinity())).is_null());
}

TEST(JsonCodecTest, JsonToValueMapsTypesAndBoundsDepth) {
  auto v = JsonToValue(nlohmann::json::parse(R"([1, 2.5, "s", null, {"a": [true]},
                                                 18446744073709551615])"));
  ASSERT_TRUE(v.ok());
  const api::ValueList& list = v->AsList();
  EXPECT_EQ(list[0].AsInt(), 1);
  EXPECT_EQ(list[1].AsDouble(), 2.5);
  EXPECT_EQ(list[2].AsString(), "s");
  EXPECT_TRUE(list[3].is_nil());
  EXPECT_TRUE(list[4].Find("a")->AsList()[0].AsBool());
  EXPECT_TRUE(list[5].is_double());
  std::string deep(200, '[');
  deep += std::string(200, ']');
  EXPECT_FALSE(JsonToValue(nlohmann::json::parse(deep)).ok());
}

TEST(JsonCodecTest, TupleIdsAcceptDecimalStringsAndNonNegativeIntegers) {
  EXPECT_EQ(ParseTupleId(nlohmann::json("42")), 42u);
  EXPECT_EQ(ParseTupleId(nlohmann::json(42)), 42u);
  EXPECT_EQ(ParseTupleId(nlohmann::json("-1")), std::nullopt);
  EXPECT_EQ(ParseTupleId(nlohmann::json(-1)), std::nullopt);
  EXPECT_EQ(ParseTupleId(nlohmann::json("99999999999999999999999")), std::nullopt);
  EXPECT_EQ(ParseTupleId(nlohmann::json::array()), std::nullopt);
  EXPECT_EQ(ParseTupleId(nlohmann::json("")), std::nullopt);
}

TEST(ShellComponentArgsTest, ReadsStormFluxShapes) {
  api::ComponentArgs args;
  args.class_name = "org.apache.storm.flux.wrappers.bolts.FluxShellBolt";
  args.constructor_args = {api::Value(api::ValueList{api::Value("python3"), api::Value("x.py")}),
                           api::Value(api::ValueList{api::Value("word")})};
  args.config_methods = {api::Value(api::ValueMap{
      {"name", api::Value("setNamedStream")},
      {"args", api::Value(api::ValueList{api::Value("errors"),
                                         api::Value(api::ValueList{api::Value("reason")})})}})};
  auto spec = ParseShellComponentArgs(args);
  ASSERT_TRUE(spec.ok()) << spec.status();
  EXPECT_EQ(spec->command, (std::vector<std::string>{"python3", "x.py"}));
  EXPECT_EQ(spec->streams.at("default"), std::vector<std::string>{"word"});
  EXPECT_EQ(spec->streams.at("errors"), std::vector<std::string>{"reason"});

  api::ComponentArgs none;
  none.class_name = "tempest.ShellBolt";
  EXPECT_FALSE(ParseShellComponentArgs(none).ok());
  none.properties["command"] = api::Value(api::ValueList{});
  EXPECT_FALSE(ParseShellComponentArgs(none).ok());
}

TEST(SubprocessTimeoutTest, ReadsSecondsWithAFloor) {
  api::Config c;
  EXPECT_EQ(SubprocessTimeout(c), std::chrono::milliseconds(30000));
  c.Set(kSubprocessTimeoutSecs, api::Value(2));
  EXPECT_EQ(SubprocessTimeout(c), std::chrono::milliseconds(2000));
  c.Set(kSubprocessTimeoutSecs, api::Value(0));
  EXPECT_EQ(SubprocessTimeout(c), std::chrono::milliseconds(200));
}

}  // namespace
}  // namespace tempest::multilang
