#include "cli/log_format.h"

#include <memory>
#include <string>
#include <string_view>

#include "common/core/log_text.h"
#include "spdlog/pattern_formatter.h"
#include "spdlog/spdlog.h"

namespace tempest::cli {
namespace {

class EscapingFormatter final : public spdlog::formatter {
 public:
  void format(const spdlog::details::log_msg& msg, spdlog::memory_buf_t& dest) override {
    const std::string_view payload(msg.payload.data(), msg.payload.size());
    if (!core::LogTextNeedsEscaping(payload)) return inner_->format(msg, dest);
    const std::string escaped = core::EscapeLogText(payload);
    spdlog::details::log_msg copy = msg;
    copy.payload = spdlog::string_view_t(escaped.data(), escaped.size());
    inner_->format(copy, dest);
  }

  std::unique_ptr<spdlog::formatter> clone() const override {
    return std::make_unique<EscapingFormatter>();
  }

 private:
  std::unique_ptr<spdlog::formatter> inner_ = std::make_unique<spdlog::pattern_formatter>();
};

}  // namespace

void InstallEscapingLogFormatter() { spdlog::set_formatter(std::make_unique<EscapingFormatter>()); }

}  // namespace tempest::cli
