#include "bolts/file_sink_bolt.h"

#include <string>
#include <string_view>

#include "absl/strings/str_cat.h"
#include "bolts/bolt_args.h"
#include "common/core/status_macros.h"

namespace tempest::bolts {
namespace {

// Appends `value` to `out` so that a reader splitting the line on the
// separator and unescaping each field gets the value back: a backslash as
// \\, tab, newline and carriage return as \t, \n and \r, every other
// control byte (NUL included) and the first byte of each occurrence of the
// separator as \xHH (two lower-case hex digits).
void AppendEscaped(std::string_view value, std::string_view separator, std::string& out) {
  constexpr char kHex[] = "0123456789abcdef";
  for (size_t i = 0; i < value.size(); ++i) {
    const auto c = static_cast<unsigned char>(value[i]);
    const bool at_separator = !separator.empty() && value.substr(i).starts_with(separator);
    if (c == '\\') {
      out += "\\\\";
    } else if (c == '\t') {
      out += "\\t";
    } else if (c == '\n') {
      out += "\\n";
    } else if (c == '\r') {
      out += "\\r";
    } else if (c < 0x20 || c == 0x7f || at_separator) {
      out += "\\x";
      out += kHex[c >> 4];
      out += kHex[c & 0xf];
    } else {
      out += static_cast<char>(c);
    }
  }
}

// A value's text as the line holds it: strings as they are, other values in
// their text form.
std::string ValueText(const api::Value& value) {
  absl::StatusOr<std::string> s = value.CoerceString();
  return s.ok() ? *std::move(s) : value.DebugString();
}

}  // namespace

absl::StatusOr<FileSinkBoltOptions> FileSinkBoltOptions::FromArgs(const api::ComponentArgs& raw) {
  TEMPEST_ASSIGN_OR_RETURN(const api::ComponentArgs args, WithPositionalArgs(raw, {"path"}));
  FileSinkBoltOptions o;
  TEMPEST_ASSIGN_OR_RETURN(o.path, args.StringProperty("path", ""));
  TEMPEST_ASSIGN_OR_RETURN(o.field, args.StringProperty("field", ""));
  TEMPEST_ASSIGN_OR_RETURN(o.separator, args.StringProperty("separator", o.separator));
  TEMPEST_ASSIGN_OR_RETURN(o.sync, args.BoolProperty("sync", o.sync));
  // A reader splits lines on the separator and unescapes fields at '\\': a
  // separator holding either could not be told from the escapes.
  if (o.separator.find_first_of("\\\n\r") != std::string::npos) {
    return absl::InvalidArgumentError(absl::StrCat(
        raw.class_name, " property 'separator' must not hold a backslash or a line break"));
  }
  if (o.path.empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat(raw.class_name, " needs property 'path' (the file lines are appended to)"));
  }
  return o;
}

absl::StatusOr<std::unique_ptr<FileSinkBolt>> FileSinkBolt::Create(const api::ComponentArgs& args) {
  TEMPEST_ASSIGN_OR_RETURN(FileSinkBoltOptions options, FileSinkBoltOptions::FromArgs(args));
  return std::make_unique<FileSinkBolt>(std::move(options));
}

absl::Status FileSinkBolt::Prepare(const api::Config& config, const api::TopologyContext& context,
                                   api::OutputCollector& collector) {
  (void)config;
  collector_ = &collector;
  path_ = ExpandTaskPlaceholder(options_.path, context.ThisTaskId());
  absl::StatusOr<std::unique_ptr<AppendOnlyFile>> file = AppendOnlyFile::Open(path_);
  if (!file.ok()) {
    return absl::Status(file.status().code(),
                        absl::StrCat("tempest.FileSinkBolt path: ", file.status().message()));
  }
  file_ = *std::move(file);
  return absl::OkStatus();
}

void FileSinkBolt::Execute(const api::Tuple& input) {
  if (input.IsTick()) {
    collector_->Ack(input);
    return;
  }
  line_.clear();
  if (!options_.field.empty()) {
    const api::Value* v = input.Find(options_.field);
    if (v == nullptr) {
      collector_->ReportError(absl::InvalidArgumentError(
          absl::StrCat("FileSinkBolt: no field '", options_.field, "' in ", input.DebugString())));
      collector_->Fail(input);
      return;
    }
    AppendEscaped(ValueText(*v), "", line_);
  } else {
    for (int i = 0; i < input.size(); ++i) {
      if (i > 0) line_ += options_.separator;
      AppendEscaped(ValueText(input.Get(i)), options_.separator, line_);
    }
  }
  line_ += '\n';
  absl::Status written = file_->Append(line_, options_.sync);
  if (written.ok()) {
    collector_->Ack(input);
  } else {
    collector_->ReportError(written);
    collector_->Fail(input);
  }
}

void FileSinkBolt::Cleanup() { file_.reset(); }

void FileSinkBolt::DeclareOutputFields(api::OutputFieldsDeclarer& declarer) const {
  // A sink: no output. With `field` set, its inputs must carry it.
  if (!options_.field.empty()) declarer.RequireInputFields({options_.field}, "set its 'field' property");
}

}  // namespace tempest::bolts
