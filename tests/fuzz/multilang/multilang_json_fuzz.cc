// Fuzzes the multilang JSON codec with what a child process may print
// between "end" lines: the message is parsed as ShellProcess parses it, its
// parts read as ShellBolt/ShellSpout read them (emit, ids, log), and every
// value converted to a tuple value and written back. The written JSON must
// parse again and give the same value: the codec's output goes to children.

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <string>
#include <string_view>

#include "common/api/topology_context.h"
#include "common/multilang/json_codec.h"
#include "common/multilang/shell_component.h"
#include "common/multilang/shell_process.h"
#include "nlohmann/json.hpp"

namespace {

namespace api = tempest::api;
namespace multilang = tempest::multilang;

const api::TopologyContext& Context() {
  static const api::TopologyContext* context = [] {
    auto info = std::make_shared<api::TopologyInfo>();
    info->topology_id = "fuzz-1";
    info->topology_name = "fuzz";
    info->task_to_component = {{api::TaskId(1), api::ComponentId("shell")},
                               {api::TaskId(2), api::ComponentId("sink")}};
    info->component_tasks = {{api::ComponentId("shell"), {api::TaskId(1)}},
                             {api::ComponentId("sink"), {api::TaskId(2)}}};
    info->component_streams[api::ComponentId("shell")][api::StreamId("default")] =
        api::StreamDeclaration{api::Fields({"word", "count"}), false};
    info->component_streams[api::ComponentId("shell")][api::StreamId("direct")] =
        api::StreamDeclaration{api::Fields({"v"}), true};
    return new api::TopologyContext(info, api::TaskId(1));
  }();
  return *context;
}

// Writes `value` as the codec does and checks that it reads back the same.
void RoundTrip(const api::Value& value) {
  std::string text;
  multilang::AppendJsonValue(value, text);
  const nlohmann::json again = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (again.is_discarded()) std::abort();  // the codec wrote invalid JSON
  absl::StatusOr<api::Value> back = multilang::JsonToValue(again);
  // Bytes become Latin-1 strings and non-finite doubles null, so only the
  // shape is compared: the re-read value must convert without error.
  if (!back.ok()) std::abort();
  (void)multilang::ValueToJson(*back);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view message(reinterpret_cast<const char*>(data), size);
  const nlohmann::json json = nlohmann::json::parse(message, nullptr, /*allow_exceptions=*/false);
  if (json.is_discarded()) return 0;

  absl::StatusOr<api::Value> value = multilang::JsonToValue(json);
  if (value.ok()) RoundTrip(*value);
  (void)multilang::Excerpt(json);
  if (!json.is_object()) return 0;

  if (const auto id = json.find("id"); id != json.end()) (void)multilang::ParseTupleId(*id);
  multilang::ParsedEmit emit;
  if (multilang::ParseEmit(json, Context(), emit).ok()) {
    for (const api::Value& v : emit.values) RoundTrip(v);
    std::string tuple;
    multilang::AppendJsonArray(emit.values, tuple);
  }
  return 0;
}
