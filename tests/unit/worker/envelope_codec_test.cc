// EnvelopeCodec: round trips of every value type and acking kind, and
// untrusted input (random bytes, every truncation, bad counts, deep nesting)
// that must yield an error and never crash.

#include "worker/envelope_codec.h"

#include <gtest/gtest.h>

#include <random>
#include <string>

#include "common/core/topology/task_layout.h"
#include "worker/schema_interner.h"
#include "worker/testing/topology_builder.h"

namespace tempest::worker {
namespace {

class EnvelopeCodecTest : public ::testing::Test {
 protected:
  void SetUp() override {
    testing::TopologyBuilder b("codec");
    b.SetSpout("spout", "x.Spout", 2);
    b.SetBolt("bolt", "x.Bolt", 3).ShuffleGrouping("spout");
    def_ = b.Build();
    auto layout = core::TaskLayout::Create(def_, 1);
    ASSERT_TRUE(layout.ok()) << layout.status();
    layout_ = *std::move(layout);
    streams_[api::ComponentId("spout")][api::StreamId("default")] =
        api::StreamDeclaration{api::Fields({"seq", "key", "payload"}), false};
    streams_[api::ComponentId("spout")][api::StreamId("side")] =
        api::StreamDeclaration{api::Fields({"v"}), false};
    streams_[api::ComponentId("bolt")][api::StreamId("default")] =
        api::StreamDeclaration{api::Fields({"a", "b"}), false};
    auto codec = EnvelopeCodec::Create(layout_, streams_);
    ASSERT_TRUE(codec.ok()) << codec.status();
    codec_ = *std::move(codec);
    spout_task_ = layout_.TasksOf(api::ComponentId("spout")).front().value();
    bolt_task_ = layout_.TasksOf(api::ComponentId("bolt")).front().value();
  }

  api::Tuple SideTuple(api::Value v, api::TupleAnchors anchors = {}) {
    return api::Tuple(
        InternSchema(api::ComponentId("spout"), api::StreamId("side"), api::Fields({"v"})),
        api::TaskId(spout_task_), api::Values{std::move(v)}, std::move(anchors));
  }

  Envelope RoundTrip(const Envelope& in) {
    std::string bytes;
    EXPECT_TRUE(codec_->Encode(in, bytes).ok());
    Envelope out;
    absl::Status s = codec_->Decode(bytes, in.task, out);
    EXPECT_TRUE(s.ok()) << s;
    return out;
  }

  core::TopologyDef def_;
  core::TaskLayout layout_;
  core::ComponentStreams streams_;
  std::unique_ptr<EnvelopeCodec> codec_;
  int32_t spout_task_ = 0;
  int32_t bolt_task_ = 0;
};

TEST_F(EnvelopeCodecTest, TupleRoundTripKeepsSchemaValuesAndAnchors) {
  api::ValueMap inner{{"k", api::Value(int64_t{-7})}, {"z", api::Value()}};
  api::ValueList list{api::Value(true),
                      api::Value(false),
                      api::Value(2.5),
                      api::Value(std::string("text")),
                      api::Value::OfBytes(std::string("\0\1\xff", 3)),
                      api::Value(inner)};
  api::TupleAnchors anchors;
  anchors.push_back({api::RootId(0xFFFFFFFFFFFFFFFFULL), api::EdgeId(1)});
  anchors.push_back({api::RootId(42), api::EdgeId(0x8000000000000000ULL)});
  Envelope in;
  in.task = bolt_task_;
  in.tuple = SideTuple(api::Value(list), anchors);

  Envelope out = RoundTrip(in);
  EXPECT_EQ(out.kind, MessageKind::kTuple);
  EXPECT_EQ(out.task, bolt_task_);
  ASSERT_TRUE(out.tuple.valid());
  EXPECT_EQ(out.tuple.source_task().value(), spout_task_);
  EXPECT_EQ(out.tuple.source_component().value(), "spout");
  EXPECT_EQ(out.tuple.source_stream().value(), "side");
  // The receiver resolves the same interned schema.
  EXPECT_EQ(out.tuple.schema().get(), in.tuple.schema().get());
  EXPECT_EQ(out.tuple.values(), in.tuple.values());
  EXPECT_EQ(out.tuple.anchors(), in.tuple.anchors());
}

TEST_F(EnvelopeCodecTest, IntegerExtremesAndEmptyStrings) {
  for (int64_t v : {int64_t{0}, int64_t{-1}, int64_t{1}, INT64_MIN, INT64_MAX}) {
    Envelope in;
    in.task = bolt_task_;
    in.tuple = SideTuple(api::Value(v));
    EXPECT_EQ(RoundTrip(in).tuple.Get(0).AsInt(), v);
  }
  Envelope in;
  in.task = bolt_task_;
  in.tuple = SideTuple(api::Value(std::string()));
  EXPECT_EQ(RoundTrip(in).tuple.Get(0).AsString(), "");
}

TEST_F(EnvelopeCodecTest, TupleWithNonInternedSchemaEncodesByName) {
  auto schema = std::make_shared<const api::StreamSchema>(api::StreamSchema{
      api::ComponentId("bolt"), api::StreamId("default"), api::Fields({"a", "b"})});
  Envelope in;
  in.task = bolt_task_;
  in.tuple = api::Tuple(schema, api::TaskId(bolt_task_), api::Values{1, "x"});
  Envelope out = RoundTrip(in);
  EXPECT_EQ(out.tuple.source_component().value(), "bolt");
  EXPECT_EQ(out.tuple.GetString(1), "x");
}

TEST_F(EnvelopeCodecTest, TupleEncodedFromItsPartsEqualsTheBuiltTuple) {
  api::TupleAnchors anchors;
  anchors.push_back({api::RootId(5), api::EdgeId(9)});
  Envelope in;
  in.task = bolt_task_;
  in.tuple = SideTuple(api::Value(std::string("payload")), anchors);
  std::string built;
  ASSERT_TRUE(codec_->Encode(in, built).ok());
  std::string parts = "prefix";  // EncodeTuple appends, as Encode does
  ASSERT_TRUE(
      codec_->EncodeTuple(*in.tuple.schema(), spout_task_, anchors, in.tuple.values(), parts).ok());
  EXPECT_EQ(parts, "prefix" + built);
  // A source task outside the layout is refused, and nothing is appended.
  std::string refused;
  EXPECT_FALSE(
      codec_->EncodeTuple(*in.tuple.schema(), 0, anchors, in.tuple.values(), refused).ok());
  EXPECT_TRUE(refused.empty());
}

TEST_F(EnvelopeCodecTest, AckingMessagesRoundTrip) {
  for (MessageKind kind :
       {MessageKind::kAckInit, MessageKind::kAckAck, MessageKind::kAckFail, MessageKind::kAckReset,
        MessageKind::kSpoutAck, MessageKind::kSpoutFail, MessageKind::kSpoutReset}) {
    Envelope in;
    in.kind = kind;
    in.task = spout_task_;
    in.root = 0xDEADBEEFCAFEF00DULL;
    in.value = 0x0123456789ABCDEFULL;
    in.spout_task = spout_task_;
    Envelope out = RoundTrip(in);
    EXPECT_EQ(out.kind, kind);
    EXPECT_EQ(out.root, in.root);
    EXPECT_EQ(out.value, in.value);
    EXPECT_EQ(out.spout_task, in.spout_task);
    EXPECT_EQ(out.task, spout_task_);
  }
}

TEST_F(EnvelopeCodecTest, RefusesToEncodeUndeclaredStreamsAndTicks) {
  Envelope tick;
  tick.tuple = api::Tuple::MakeTick(1);
  std::string bytes;
  EXPECT_FALSE(codec_->Encode(tick, bytes).ok());
  auto schema = std::make_shared<const api::StreamSchema>(
      api::StreamSchema{api::ComponentId("bolt"), api::StreamId("nope"), api::Fields({"a"})});
  Envelope e;
  e.tuple = api::Tuple(schema, api::TaskId(bolt_task_), api::Values{1});
  bytes.clear();
  EXPECT_FALSE(codec_->Encode(e, bytes).ok());
}

TEST_F(EnvelopeCodecTest, EveryTruncationIsAnError) {
  Envelope in;
  in.task = bolt_task_;
  api::ValueMap m{{"key", api::Value(api::ValueList{1, "two", 3.0})}};
  in.tuple = SideTuple(api::Value(m), {{api::RootId(9), api::EdgeId(10)}});
  std::string bytes;
  ASSERT_TRUE(codec_->Encode(in, bytes).ok());
  for (size_t n = 0; n < bytes.size(); ++n) {
    Envelope out;
    EXPECT_FALSE(codec_->Decode(std::string_view(bytes.data(), n), bolt_task_, out).ok()) << n;
  }
  Envelope out;
  EXPECT_FALSE(codec_->Decode(bytes + "x", bolt_task_, out).ok()) << "trailing bytes";
}

TEST_F(EnvelopeCodecTest, BadHeadersAreErrors) {
  Envelope out;
  // Unknown kind.
  EXPECT_FALSE(codec_->Decode(std::string("\x09", 1), 1, out).ok());
  // Unknown source task (0 and beyond the layout), unknown stream index.
  EXPECT_FALSE(codec_->Decode(std::string("\x00\x00\x00\x00\x00", 5), 1, out).ok());
  EXPECT_FALSE(codec_->Decode(std::string("\x00\x7f\x00\x00\x00", 5), 1, out).ok());
  std::string bad_stream("\x00", 1);
  bad_stream.push_back(static_cast<char>(spout_task_));
  bad_stream += std::string("\x05\x00\x00", 3);
  EXPECT_FALSE(codec_->Decode(bad_stream, 1, out).ok());
  // Value count differing from the stream's fields (side has 1 field).
  std::string wrong_count("\x00", 1);
  wrong_count.push_back(static_cast<char>(spout_task_));
  wrong_count += std::string("\x01\x00\x02\x00\x00", 5);
  EXPECT_FALSE(codec_->Decode(wrong_count, 1, out).ok());
  // A huge list count must not allocate: it is checked against the buffer.
  std::string huge("\x00", 1);
  huge.push_back(static_cast<char>(spout_task_));
  huge += std::string("\x01\x00\x01\x07\xff\xff\xff\xff\x0f", 9);
  EXPECT_FALSE(codec_->Decode(huge, 1, out).ok());
  // A string length beyond the buffer.
  std::string long_string("\x00", 1);
  long_string.push_back(static_cast<char>(spout_task_));
  long_string += std::string("\x01\x00\x01\x05\x40zz", 7);
  EXPECT_FALSE(codec_->Decode(long_string, 1, out).ok());
  // The worker-local "fail every pending tree" order never comes from
  // another worker: a well-formed acking message of that kind is refused.
  Envelope fail;
  fail.kind = MessageKind::kSpoutFail;
  fail.task = spout_task_;
  fail.root = 7;
  fail.spout_task = spout_task_;
  std::string local_only;
  ASSERT_TRUE(codec_->Encode(fail, local_only).ok());
  local_only[0] = static_cast<char>(MessageKind::kSpoutFailAll);
  EXPECT_FALSE(codec_->Decode(local_only, spout_task_, out).ok());
}

TEST_F(EnvelopeCodecTest, NestingDepthIsBounded) {
  auto nested = [&](int depth) {
    std::string b("\x00", 1);
    b.push_back(static_cast<char>(spout_task_));
    b += std::string("\x01\x00\x01", 3);
    for (int i = 0; i < depth; ++i) b += std::string("\x07\x01", 2);
    b.push_back('\x00');  // nil innermost
    return b;
  };
  Envelope ok;
  EXPECT_TRUE(codec_->Decode(nested(EnvelopeCodec::kMaxDepth), 1, ok).ok());
  Envelope too_deep;
  EXPECT_FALSE(codec_->Decode(nested(EnvelopeCodec::kMaxDepth + 1), 1, too_deep).ok());
  // Far deeper than the stack could take if it were not bounded.
  Envelope way_too_deep;
  EXPECT_FALSE(codec_->Decode(nested(100000), 1, way_too_deep).ok());
}

TEST_F(EnvelopeCodecTest, RandomAndMutatedInputNeverCrashes) {
  std::mt19937_64 rng(12345);
  Envelope in;
  in.task = bolt_task_;
  in.tuple = SideTuple(api::Value(api::ValueList{1, "two", api::ValueMap{{"m", 2.0}}}),
                       {{api::RootId(1), api::EdgeId(2)}});
  std::string valid;
  ASSERT_TRUE(codec_->Encode(in, valid).ok());
  int decoded = 0;
  for (int i = 0; i < 20000; ++i) {
    std::string bytes;
    if (i % 2 == 0) {
      bytes.resize(rng() % 64);
      for (char& c : bytes) c = static_cast<char>(rng());
      if (!bytes.empty() && i % 4 == 0) bytes[0] = 0;  // reach the tuple path
      if (bytes.size() > 1 && i % 8 == 0) bytes[1] = static_cast<char>(spout_task_);
    } else {
      bytes = valid;
      const int flips = 1 + static_cast<int>(rng() % 3);
      for (int f = 0; f < flips; ++f) bytes[rng() % bytes.size()] = static_cast<char>(rng());
    }
    Envelope out;
    if (codec_->Decode(bytes, bolt_task_, out).ok()) {
      ++decoded;
      // Whatever decodes is a well-formed tuple or acking message.
      if (out.kind == MessageKind::kTuple) {
        EXPECT_EQ(out.tuple.size(), out.tuple.fields().size());
      }
    }
  }
  // Some mutations (e.g. of payload characters) still decode.
  EXPECT_GT(decoded, 0);
}

}  // namespace
}  // namespace tempest::worker
