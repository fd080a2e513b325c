#ifndef TEMPEST_COMMON_API_OUTPUT_FIELDS_DECLARER_H_
#define TEMPEST_COMMON_API_OUTPUT_FIELDS_DECLARER_H_

#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "common/api/fields.h"
#include "common/api/ids.h"

namespace tempest::api {

// One declared output stream of a component.
struct StreamDeclaration {
  Fields fields;
  bool direct = false;  // consumers must use direct grouping; emit with EmitDirect
  friend bool operator==(const StreamDeclaration&, const StreamDeclaration&) = default;
};

// Collects the output streams a component declares in DeclareOutputFields.
// Owned by whoever asks (the validator, the worker); single-threaded.
//
//   void DeclareOutputFields(OutputFieldsDeclarer& d) const override {
//     d.Declare(Fields({"word"}));                    // stream "default"
//     d.DeclareStream("errors", Fields({"reason"}));  // a named stream
//   }
//
// Declaring the same stream twice keeps the last declaration and is recorded
// in duplicates() so validation can report it.
//
// A component may also state what it needs from its inputs, so that the
// validator rejects a wiring mistake with file:line before the topology runs
// instead of failing every tuple at run time:
//   d.DeclarePassThrough();                      // "default" carries my input's fields
//   d.RequireInputFields({"seq"}, "set its 'field' property");
//   d.RequireInputWidth(3, "set its 'fields' property");
class OutputFieldsDeclarer {
 public:
  void Declare(Fields fields, bool direct = false) {
    DeclareStream(kDefaultStreamName, std::move(fields), direct);
  }
  void DeclareDirect(Fields fields) { Declare(std::move(fields), true); }
  void DeclareStream(std::string_view stream, Fields fields, bool direct = false) {
    StreamId id{std::string(stream)};
    if (streams_.contains(id)) duplicates_.push_back(id);
    streams_[std::move(id)] = StreamDeclaration{std::move(fields), direct};
  }
  void DeclareDirectStream(std::string_view stream, Fields fields) {
    DeclareStream(stream, std::move(fields), true);
  }

  // `stream` re-emits the component's input values unchanged, so its fields
  // are those of the streams the component consumes; the validator fills
  // them in (and rejects inputs whose fields differ).
  void DeclarePassThrough(std::string_view stream = kDefaultStreamName) {
    DeclareStream(stream, Fields());
    pass_through_.insert(StreamId{std::string(stream)});
  }
  // Every stream this component consumes must carry each of `fields`; `hint`
  // says how to fix a mismatch (e.g. "set its 'field' property").
  void RequireInputFields(std::vector<std::string> fields, std::string hint) {
    required_input_fields_ = std::move(fields);
    required_input_hint_ = std::move(hint);
  }
  // Every stream this component consumes must carry exactly `width` fields.
  void RequireInputWidth(int width, std::string hint) {
    required_input_width_ = width;
    required_input_hint_ = std::move(hint);
  }

  const std::map<StreamId, StreamDeclaration>& streams() const { return streams_; }
  const std::vector<StreamId>& duplicates() const { return duplicates_; }
  const std::set<StreamId>& pass_through() const { return pass_through_; }
  const std::vector<std::string>& required_input_fields() const { return required_input_fields_; }
  const std::optional<int>& required_input_width() const { return required_input_width_; }
  const std::string& required_input_hint() const { return required_input_hint_; }

 private:
  std::map<StreamId, StreamDeclaration> streams_;
  std::vector<StreamId> duplicates_;
  std::set<StreamId> pass_through_;
  std::vector<std::string> required_input_fields_;
  std::optional<int> required_input_width_;
  std::string required_input_hint_;
};

}  // namespace tempest::api

#endif  // TEMPEST_COMMON_API_OUTPUT_FIELDS_DECLARER_H_
