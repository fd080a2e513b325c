#ifndef TEMPEST_SPOUT_LINE_SPOUT_H_
#define TEMPEST_SPOUT_LINE_SPOUT_H_

#include <string_view>
#include <cstdint>
#include <fstream>
#include <map>
#include <memory>
#include <string>

#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "common/api/component_registry.h"
#include "common/api/spout.h"

namespace tempest::spout {

// Settings of a LineSpout (Flux properties, or constructorArgs: path).
struct LineSpoutOptions {
  std::string path;     // relative: against `tempest.resources.dir` if set, else the cwd
  bool repeat = false;  // start over at end of file (then the spout never ends)
  bool reliable = true;

  static absl::StatusOr<LineSpoutOptions> FromArgs(const api::ComponentArgs& args);
};

// Config key naming the directory relative resource paths resolve against
// (set by `tempest local --resources` / the worker).
inline constexpr std::string_view kResourcesDirKey = "tempest.resources.dir";

// `tempest.LineSpout`: emits one tuple (line:string) per line of a text file,
// without the line terminator ("\n" or "\r\n"). With `reliable` each line
// carries a message id (its emission number) and a failed line is emitted
// again, before new lines, until acked; the spout keeps the text of every
// in-flight line for that. Without `repeat` it is finite: IsExhausted() once
// the whole file was emitted and every line acked.
//
// Owns the open file and the in-flight lines. Lives on its spout executor
// thread (no locking). Open opens the file (NotFound when missing); Close
// closes it. NextTuple emits at most one line and never blocks beyond a
// buffered file read.
class LineSpout final : public api::Spout {
 public:
  // Its Flux properties; any other name is rejected (CheckKnownProperties).
  static constexpr std::string_view kPropertyNames[] = {"path", "repeat", "reliable"};
  static absl::StatusOr<std::unique_ptr<LineSpout>> Create(const api::ComponentArgs& args);
  explicit LineSpout(LineSpoutOptions options) : options_(std::move(options)) {}

  absl::Status Open(const api::Config& config, const api::TopologyContext& context,
                    api::SpoutOutputCollector& collector) override;
  void NextTuple() override;
  void Ack(const api::MessageId& message_id) override;
  void Fail(const api::MessageId& message_id) override;
  void Close() override;
  void DeclareOutputFields(api::OutputFieldsDeclarer& declarer) const override;
  bool IsExhausted() const override;

  // The file actually read (after resolving against the resources dir).
  const std::string& resolved_path() const { return resolved_path_; }

 private:
  // Reads the next line, rewinding once at end of file when repeating.
  bool ReadLine(std::string& line);

  const LineSpoutOptions options_;
  std::string resolved_path_;
  std::ifstream file_;
  api::SpoutOutputCollector* collector_ = nullptr;
  bool at_end_ = false;
  int64_t lines_this_pass_ = 0;
  int64_t next_id_ = 0;
  absl::flat_hash_map<int64_t, std::string> in_flight_;
  std::map<int64_t, std::string> replay_;  // ordered: oldest failure first
};

}  // namespace tempest::spout

#endif  // TEMPEST_SPOUT_LINE_SPOUT_H_
