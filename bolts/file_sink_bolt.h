#ifndef TEMPEST_BOLTS_FILE_SINK_BOLT_H_
#define TEMPEST_BOLTS_FILE_SINK_BOLT_H_

#include <string_view>
#include <cstdint>
#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "bolts/append_only_file.h"
#include "common/api/bolt.h"
#include "common/api/component_registry.h"

namespace tempest::bolts {

// Settings of a FileSinkBolt (Flux properties; constructorArgs: path).
struct FileSinkBoltOptions {
  std::string path;              // required; "{task}" is replaced by the task id
  std::string field;             // empty: the whole tuple
  std::string separator = "\t";  // between values when writing the whole tuple
  bool sync = false;             // fdatasync every line before acking

  static absl::StatusOr<FileSinkBoltOptions> FromArgs(const api::ComponentArgs& args);
};

// `tempest.FileSinkBolt`: appends one line per input to `path` — the value
// of `field`, or all values joined by `separator` — and acks the input after
// the write returned (after fdatasync too with `sync: true`); a failed write
// fails the input. Strings are written as they are, other values in their
// text form, each escaped so that a line is exactly one record and the
// separator splits it exactly into its values: a backslash becomes \\, tab,
// newline and carriage return \t, \n and \r, any other control byte (NUL
// included) and the first byte of a separator inside a value \xHH. To read a
// line back: split on the separator, then undo the escapes in each field
// (docs/user-guide.md, "FileSinkBolt output"). A separator may not hold a
// backslash or a line break. Ticks are acked and skipped.
//
// Owns the open file. Lives on its bolt executor thread. One writer per
// file: with parallelism > 1 put "{task}" in the path.
class FileSinkBolt final : public api::Bolt {
 public:
  // Its Flux properties; any other name is rejected (CheckKnownProperties).
  static constexpr std::string_view kPropertyNames[] = {"path", "field", "separator", "sync"};
  static absl::StatusOr<std::unique_ptr<FileSinkBolt>> Create(const api::ComponentArgs& args);
  explicit FileSinkBolt(FileSinkBoltOptions options) : options_(std::move(options)) {}

  absl::Status Prepare(const api::Config& config, const api::TopologyContext& context,
                       api::OutputCollector& collector) override;
  void Execute(const api::Tuple& input) override;
  void Cleanup() override;
  void DeclareOutputFields(api::OutputFieldsDeclarer& declarer) const override;

  const std::string& path() const { return path_; }

 private:
  const FileSinkBoltOptions options_;
  api::OutputCollector* collector_ = nullptr;
  std::string path_;
  std::unique_ptr<AppendOnlyFile> file_;
  std::string line_;  // reused buffer
};

}  // namespace tempest::bolts

#endif  // TEMPEST_BOLTS_FILE_SINK_BOLT_H_
