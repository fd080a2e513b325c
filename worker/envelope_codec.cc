#include "worker/envelope_codec.h"

#include <bit>
#include <cstring>
#include <utility>

#include "absl/strings/str_cat.h"
#include "common/api/string_view_compat.h"
#include "common/core/status_macros.h"
#include "worker/schema_interner.h"

namespace tempest::worker {
namespace {

enum Tag : uint8_t {
  kNil = 0,
  kFalse = 1,
  kTrue = 2,
  kInt = 3,
  kDouble = 4,
  kString = 5,
  kBytes = 6,
  kList = 7,
  kMap = 8,
};

constexpr uint8_t kMaxKind = static_cast<uint8_t>(MessageKind::kSpoutReset);

std::string NameKey(const api::ComponentId& component, const api::StreamId& stream) {
  std::string key = component.value();
  key.push_back('\0');
  key.append(stream.value());
  return key;
}

// ---- writing ----

// Encode sizes its output once (an upper bound), then writes through a raw
// pointer: appending field by field to a std::string checked the capacity
// and moved the end pointer for every varint and tag, which was most of
// Encode's cost for a small tuple.
constexpr size_t kMaxVarint = 10;

inline uint64_t ZigZag(int64_t v) {
  return (static_cast<uint64_t>(v) << 1) ^ static_cast<uint64_t>(v >> 63);
}
inline int64_t UnZigZag(uint64_t v) {
  return static_cast<int64_t>(v >> 1) ^ -static_cast<int64_t>(v & 1);
}

// At least as many bytes as PutValue writes for `v`.
size_t MaxValueSize(const api::Value& v) {
  switch (v.type()) {
    case api::Value::Type::kNil:
    case api::Value::Type::kBool:
      return 1;
    case api::Value::Type::kInt:
      return 1 + kMaxVarint;
    case api::Value::Type::kDouble:
      return 1 + 8;
    case api::Value::Type::kString:
      return 1 + kMaxVarint + v.AsString().size();
    case api::Value::Type::kBytes:
      return 1 + kMaxVarint + v.AsBytes().size();
    case api::Value::Type::kList: {
      size_t n = 1 + kMaxVarint;
      for (const api::Value& item : v.AsList()) n += MaxValueSize(item);
      return n;
    }
    case api::Value::Type::kMap: {
      size_t n = 1 + kMaxVarint;
      for (const auto& [key, item] : v.AsMap()) n += kMaxVarint + key.size() + MaxValueSize(item);
      return n;
    }
  }
  return 0;
}

// Writes into memory the caller sized with MaxValueSize and friends.
class Writer {
 public:
  explicit Writer(char* p) : p_(p) {}
  char* end() const { return p_; }

  void U8(uint8_t v) { *p_++ = static_cast<char>(v); }
  void Varint(uint64_t v) {
    while (v >= 0x80) {
      *p_++ = static_cast<char>((v & 0x7F) | 0x80);
      v >>= 7;
    }
    *p_++ = static_cast<char>(v);
  }
  void Fixed64(uint64_t v) {
    if constexpr (std::endian::native == std::endian::little) {
      std::memcpy(p_, &v, 8);
    } else {
      for (int i = 0; i < 8; ++i) p_[i] = static_cast<char>(v >> (8 * i));
    }
    p_ += 8;
  }
  void Blob(const std::string& s) {
    Varint(s.size());
    std::memcpy(p_, s.data(), s.size());
    p_ += s.size();
  }

 private:
  char* p_;
};

void PutValue(Writer& w, const api::Value& v) {
  switch (v.type()) {
    case api::Value::Type::kNil:
      return w.U8(kNil);
    case api::Value::Type::kBool:
      return w.U8(v.AsBool() ? kTrue : kFalse);
    case api::Value::Type::kInt:
      w.U8(kInt);
      return w.Varint(ZigZag(v.AsInt()));
    case api::Value::Type::kDouble: {
      w.U8(kDouble);
      uint64_t bits = 0;
      const double d = v.AsDouble();
      std::memcpy(&bits, &d, 8);
      return w.Fixed64(bits);
    }
    case api::Value::Type::kString:
      w.U8(kString);
      return w.Blob(v.AsString());
    case api::Value::Type::kBytes:
      w.U8(kBytes);
      return w.Blob(v.AsBytes());
    case api::Value::Type::kList: {
      w.U8(kList);
      const api::ValueList& list = v.AsList();
      w.Varint(list.size());
      for (const api::Value& item : list) PutValue(w, item);
      return;
    }
    case api::Value::Type::kMap: {
      w.U8(kMap);
      const api::ValueMap& map = v.AsMap();
      w.Varint(map.size());
      for (const auto& [key, item] : map) {
        w.Blob(key);
        PutValue(w, item);
      }
      return;
    }
  }
}

// ---- reading ----

class Reader {
 public:
  explicit Reader(std::string_view in) : p_(in.data()), end_(in.data() + in.size()) {}

  size_t remaining() const { return static_cast<size_t>(end_ - p_); }
  bool done() const { return p_ == end_; }

  // The next byte, not consumed; false at the end.
  bool Peek(uint8_t& v) const {
    if (p_ == end_) return false;
    v = static_cast<uint8_t>(*p_);
    return true;
  }
  bool U8(uint8_t& v) {
    if (p_ == end_) return false;
    v = static_cast<uint8_t>(*p_++);
    return true;
  }
  bool Varint(uint64_t& v) {
    if (p_ != end_ && static_cast<uint8_t>(*p_) < 0x80) {  // most task ids and lengths
      v = static_cast<uint8_t>(*p_++);
      return true;
    }
    uint64_t result = 0;
    for (int shift = 0; shift < 64; shift += 7) {
      if (p_ == end_) return false;
      const uint8_t b = static_cast<uint8_t>(*p_++);
      result |= static_cast<uint64_t>(b & 0x7F) << shift;
      if ((b & 0x80) == 0) {
        v = result;
        return true;
      }
    }
    return false;  // more than 10 bytes
  }
  bool Fixed64(uint64_t& v) {
    if (remaining() < 8) return false;
    uint64_t r = 0;
    if constexpr (std::endian::native == std::endian::little) {
      std::memcpy(&r, p_, 8);
    } else {
      for (int i = 0; i < 8; ++i) {
        r |= static_cast<uint64_t>(static_cast<uint8_t>(p_[i])) << (8 * i);
      }
    }
    p_ += 8;
    v = r;
    return true;
  }
  bool Blob(std::string_view& s) {
    uint64_t n = 0;
    if (!Varint(n) || n > remaining()) return false;
    s = std::string_view(p_, static_cast<size_t>(n));
    p_ += n;
    return true;
  }
  // A count of items that each take at least `min_bytes` bytes.
  bool Count(uint64_t& n, size_t min_bytes) { return Varint(n) && n <= remaining() / min_bytes; }

 private:
  const char* p_;
  const char* end_;
};

absl::Status Malformed(std::string_view what) {
  return absl::InvalidArgumentError(absl::StrCat("malformed envelope: ", api::Sv(what)));
}

absl::Status GetValue(Reader& r, int depth, api::Value& out);

// Decodes one value at the end of `into`. Strings and bytes (the bulk of
// most tuples) are built in place instead of assigned over a default value.
absl::Status AppendValue(Reader& r, int depth, api::ValueList& into) {
  uint8_t tag = 0;
  if (r.Peek(tag) && (tag == kString || tag == kBytes)) {
    r.U8(tag);
    std::string_view s;
    if (!r.Blob(s)) return Malformed("string length beyond the buffer");
    if (tag == kString) {
      into.emplace_back(std::string(s));
    } else {
      into.push_back(api::Value::OfBytes(std::string(s)));
    }
    return absl::OkStatus();
  }
  return GetValue(r, depth, into.emplace_back());
}

// A list's items (after its tag), each a value one level deeper.
absl::Status GetList(Reader& r, int depth, api::Value& out) {
  if (depth >= EnvelopeCodec::kMaxDepth) return Malformed("nesting too deep");
  uint64_t n = 0;
  if (!r.Count(n, 1)) return Malformed("list count beyond the buffer");
  api::ValueList list;
  list.reserve(static_cast<size_t>(n));
  for (uint64_t i = 0; i < n; ++i) RETURN_IF_ERROR(AppendValue(r, depth + 1, list));
  out = api::Value(std::move(list));
  return absl::OkStatus();
}

// A map's entries (after its tag): a key, then a value one level deeper.
absl::Status GetMap(Reader& r, int depth, api::Value& out) {
  if (depth >= EnvelopeCodec::kMaxDepth) return Malformed("nesting too deep");
  uint64_t n = 0;
  if (!r.Count(n, 2)) return Malformed("map count beyond the buffer");
  api::ValueMap map;
  for (uint64_t i = 0; i < n; ++i) {
    std::string_view key;
    if (!r.Blob(key)) return Malformed("map key length beyond the buffer");
    api::Value item;
    RETURN_IF_ERROR(GetValue(r, depth + 1, item));
    map.insert_or_assign(std::string(key), std::move(item));
  }
  out = api::Value(std::move(map));
  return absl::OkStatus();
}

absl::Status GetValue(Reader& r, int depth, api::Value& out) {
  uint8_t tag = 0;
  if (!r.U8(tag)) return Malformed("truncated value");
  switch (tag) {
    case kNil:
      out = api::Value();
      return absl::OkStatus();
    case kFalse:
      out = api::Value(false);
      return absl::OkStatus();
    case kTrue:
      out = api::Value(true);
      return absl::OkStatus();
    case kInt: {
      uint64_t v = 0;
      if (!r.Varint(v)) return Malformed("truncated int");
      out = api::Value(UnZigZag(v));
      return absl::OkStatus();
    }
    case kDouble: {
      uint64_t bits = 0;
      if (!r.Fixed64(bits)) return Malformed("truncated double");
      double d = 0;
      std::memcpy(&d, &bits, 8);
      out = api::Value(d);
      return absl::OkStatus();
    }
    case kString:
    case kBytes: {
      std::string_view s;
      if (!r.Blob(s)) return Malformed("string length beyond the buffer");
      out = tag == kString ? api::Value(std::string(s)) : api::Value::OfBytes(std::string(s));
      return absl::OkStatus();
    }
    case kList:
      return GetList(r, depth, out);
    case kMap:
      return GetMap(r, depth, out);
    default:
      return Malformed(absl::StrCat("unknown value tag ", tag));
  }
}

}  // namespace

absl::StatusOr<std::unique_ptr<EnvelopeCodec>> EnvelopeCodec::Create(
    const core::TaskLayout& layout, const core::ComponentStreams& streams) {
  std::unique_ptr<EnvelopeCodec> codec(new EnvelopeCodec());
  codec->streams_by_task_.assign(static_cast<size_t>(layout.num_tasks()) + 1, nullptr);
  for (const auto& [component, tasks] : layout.component_tasks()) {
    auto entries = std::make_unique<std::vector<StreamEntry>>();
    auto declared = streams.find(component);
    if (declared != streams.end()) {
      for (const auto& [stream, decl] : declared->second) {
        const uint32_t index = static_cast<uint32_t>(entries->size());
        StreamEntry entry{InternSchema(component, stream, decl.fields)};
        codec->index_by_schema_.emplace(entry.schema.get(), index);
        codec->index_by_name_.emplace(NameKey(component, stream), index);
        entries->push_back(std::move(entry));
      }
    }
    for (api::TaskId t : tasks) {
      const size_t i = static_cast<size_t>(t.value());
      if (t.value() <= 0 || i >= codec->streams_by_task_.size()) {
        return absl::InvalidArgumentError(absl::StrCat("layout task ", t.value(), " out of range"));
      }
      codec->streams_by_task_[i] = entries.get();
    }
    codec->component_streams_.push_back(std::move(entries));
  }
  return codec;
}

absl::StatusOr<uint32_t> EnvelopeCodec::StreamIndexByName(const api::StreamSchema& schema) const {
  auto by_name = index_by_name_.find(NameKey(schema.component, schema.stream));
  if (by_name == index_by_name_.end()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "envelope: undeclared stream ", schema.component.value(), ":", schema.stream.value()));
  }
  return by_name->second;
}

absl::Status EnvelopeCodec::Encode(const Envelope& e, std::string& out) const {
  if (e.kind != MessageKind::kTuple) {
    const size_t start = out.size();
    out.resize(start + 1 + 8 + 8 + kMaxVarint);
    Writer w(out.data() + start);
    w.U8(static_cast<uint8_t>(e.kind));
    w.Fixed64(e.root);
    w.Fixed64(e.value);
    w.Varint(static_cast<uint32_t>(e.spout_task));
    out.resize(static_cast<size_t>(w.end() - out.data()));
    return absl::OkStatus();
  }
  const api::Tuple& t = e.tuple;
  if (!t.valid() || t.schema() == nullptr) {
    return absl::InvalidArgumentError("envelope: tuple without a layout source task");
  }
  return EncodeTuple(*t.schema(), t.source_task().value(), t.anchors(), t.values(), out);
}

absl::Status EnvelopeCodec::EncodeTuple(const api::StreamSchema& schema, int32_t source,
                                        const api::TupleAnchors& anchors, const api::Values& values,
                                        std::string& out) const {
  if (source <= 0 || static_cast<size_t>(source) >= streams_by_task_.size()) {
    return absl::InvalidArgumentError("envelope: tuple without a layout source task");
  }
  uint32_t index = 0;
  if (auto it = index_by_schema_.find(&schema); it != index_by_schema_.end()) {
    index = it->second;  // the interned schema: every tuple the runtime builds
  } else {
    ASSIGN_OR_RETURN(index, StreamIndexByName(schema));
  }
  const size_t start = out.size();
  size_t bound = 1 + 4 * kMaxVarint + 16 * anchors.size();
  for (const api::Value& v : values) bound += MaxValueSize(v);
  out.resize(start + bound);
  Writer w(out.data() + start);
  w.U8(static_cast<uint8_t>(MessageKind::kTuple));
  w.Varint(static_cast<uint32_t>(source));
  w.Varint(index);
  w.Varint(anchors.size());
  for (const api::TupleAnchor& a : anchors) {
    w.Fixed64(a.root.value());
    w.Fixed64(a.edge.value());
  }
  w.Varint(values.size());
  for (const api::Value& v : values) PutValue(w, v);
  out.resize(static_cast<size_t>(w.end() - out.data()));
  return absl::OkStatus();
}

absl::Status EnvelopeCodec::Decode(std::string_view bytes, int32_t task, Envelope& out) const {
  Reader r(bytes);
  uint8_t kind = 0;
  if (!r.U8(kind)) return Malformed("empty");
  if (kind > kMaxKind) return Malformed(absl::StrCat("unknown kind ", kind));
  out.kind = static_cast<MessageKind>(kind);
  out.task = task;
  if (out.kind != MessageKind::kTuple) {
    uint64_t spout = 0;
    if (!r.Fixed64(out.root) || !r.Fixed64(out.value) || !r.Varint(spout)) {
      return Malformed("truncated acking message");
    }
    if (spout > static_cast<uint64_t>(INT32_MAX)) return Malformed("spout task out of range");
    out.spout_task = static_cast<int32_t>(spout);
    if (!r.done()) return Malformed("trailing bytes");
    return absl::OkStatus();
  }
  uint64_t source = 0;
  uint64_t stream = 0;
  if (!r.Varint(source) || !r.Varint(stream)) return Malformed("truncated tuple header");
  if (source == 0 || source >= streams_by_task_.size() || streams_by_task_[source] == nullptr) {
    return Malformed(absl::StrCat("unknown source task ", source));
  }
  const std::vector<StreamEntry>& streams = *streams_by_task_[source];
  if (stream >= streams.size()) {
    return Malformed(absl::StrCat("unknown stream index ", stream, " of task ", source));
  }
  const std::shared_ptr<const api::StreamSchema>& schema = streams[stream].schema;
  uint64_t n_anchors = 0;
  if (!r.Count(n_anchors, 16)) return Malformed("anchor count beyond the buffer");
  api::TupleAnchors anchors;
  anchors.reserve(static_cast<size_t>(n_anchors));
  for (uint64_t i = 0; i < n_anchors; ++i) {
    uint64_t root = 0;
    uint64_t edge = 0;
    r.Fixed64(root);  // Count() checked the room
    r.Fixed64(edge);
    anchors.push_back({api::RootId(root), api::EdgeId(edge)});
  }
  uint64_t n_values = 0;
  if (!r.Count(n_values, 1)) return Malformed("value count beyond the buffer");
  if (n_values != static_cast<uint64_t>(schema->fields.size())) {
    return Malformed(absl::StrCat("stream ", schema->component.value(), ":", schema->stream.value(),
                                  " has ", schema->fields.size(), " fields, message has ", n_values,
                                  " values"));
  }
  api::Values values;
  values.reserve(static_cast<size_t>(n_values));
  for (uint64_t i = 0; i < n_values; ++i) RETURN_IF_ERROR(AppendValue(r, 0, values));
  if (!r.done()) return Malformed("trailing bytes");
  out.tuple = api::Tuple(schema, api::TaskId(static_cast<int32_t>(source)), std::move(values),
                         std::move(anchors));
  return absl::OkStatus();
}

}  // namespace tempest::worker
