#ifndef TEMPEST_COMMON_API_OUTPUT_FIELDS_DECLARER_H_
#define TEMPEST_COMMON_API_OUTPUT_FIELDS_DECLARER_H_

#include <map>
#include <string>
#include <string_view>

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

  const std::map<StreamId, StreamDeclaration>& streams() const { return streams_; }
  const std::vector<StreamId>& duplicates() const { return duplicates_; }

 private:
  std::map<StreamId, StreamDeclaration> streams_;
  std::vector<StreamId> duplicates_;
};

}  // namespace tempest::api

#endif  // TEMPEST_COMMON_API_OUTPUT_FIELDS_DECLARER_H_
