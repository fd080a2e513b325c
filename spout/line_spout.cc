#include "spout/line_spout.h"

#include <filesystem>
#include <optional>
#include <utility>

#include "absl/strings/str_cat.h"
#include "common/core/status_macros.h"

namespace tempest::spout {

absl::StatusOr<LineSpoutOptions> LineSpoutOptions::FromArgs(const api::ComponentArgs& raw) {
  ASSIGN_OR_RETURN(const api::ComponentArgs args, raw.WithPositionalArgs({"path"}));
  LineSpoutOptions o;
  ASSIGN_OR_RETURN(std::string path, args.StringProperty("path", ""));
  if (path.empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat(raw.class_name, " needs property 'path' (the text file to read)"));
  }
  ASSIGN_OR_RETURN(const bool repeat, args.BoolProperty("repeat", o.repeat));
  ASSIGN_OR_RETURN(const bool reliable, args.BoolProperty("reliable", o.reliable));
  o.path = std::move(path);
  o.repeat = repeat;
  o.reliable = reliable;
  return o;
}

absl::StatusOr<std::unique_ptr<LineSpout>> LineSpout::Create(const api::ComponentArgs& args) {
  ASSIGN_OR_RETURN(LineSpoutOptions options, LineSpoutOptions::FromArgs(args));
  return std::make_unique<LineSpout>(std::move(options));
}

absl::Status LineSpout::Open(const api::Config& config, const api::TopologyContext& context,
                             api::SpoutOutputCollector& collector) {
  (void)context;
  collector_ = &collector;
  std::filesystem::path path(options_.path);
  std::string resources = config.GetString(kResourcesDirKey, "");
  if (path.is_relative() && !resources.empty()) path = std::filesystem::path(resources) / path;
  resolved_path_ = path.string();
  file_.open(resolved_path_, std::ios::in | std::ios::binary);
  if (!file_.is_open()) {
    return absl::NotFoundError(absl::StrCat("tempest.LineSpout: cannot open '", resolved_path_,
                                            "' (property path '", options_.path, "')"));
  }
  return absl::OkStatus();
}

bool LineSpout::ReadLine(std::string& line) {
  if (at_end_) return false;
  for (int attempt = 0; attempt < 2; ++attempt) {
    if (std::getline(file_, line)) {
      if (!line.empty() && line.back() == '\r') line.pop_back();
      ++lines_this_pass_;
      return true;
    }
    // A pass that produced nothing (an empty file) would spin forever.
    if (!options_.repeat || lines_this_pass_ == 0) break;
    file_.clear();
    file_.seekg(0);
    lines_this_pass_ = 0;
  }
  at_end_ = true;
  return false;
}

void LineSpout::NextTuple() {
  if (collector_ == nullptr) return;
  int64_t id;
  std::string line;
  if (!replay_.empty()) {
    auto it = replay_.begin();
    id = it->first;
    line = std::move(it->second);
    replay_.erase(it);
  } else if (ReadLine(line)) {
    id = next_id_++;
  } else {
    return;
  }
  if (options_.reliable) {
    in_flight_[id] = line;
    collector_->Emit({api::Value(std::move(line))}, api::MessageId(id));
  } else {
    collector_->Emit({api::Value(std::move(line))});
  }
}

void LineSpout::Ack(const api::MessageId& message_id) {
  std::optional<int64_t> id = message_id.TryInt();
  if (id.has_value()) in_flight_.erase(*id);
}

void LineSpout::Fail(const api::MessageId& message_id) {
  std::optional<int64_t> id = message_id.TryInt();
  if (!id.has_value()) return;
  auto it = in_flight_.find(*id);
  if (it == in_flight_.end()) return;  // duplicate or stray fail
  replay_.emplace(*id, std::move(it->second));
  in_flight_.erase(it);
}

void LineSpout::Close() { file_.close(); }

void LineSpout::DeclareOutputFields(api::OutputFieldsDeclarer& declarer) const {
  declarer.Declare(api::Fields({"line"}));
}

bool LineSpout::IsExhausted() const {
  if (options_.repeat) return false;
  return at_end_ && replay_.empty() && in_flight_.empty();
}

}  // namespace tempest::spout
