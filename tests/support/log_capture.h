#ifndef TEMPEST_TESTS_SUPPORT_LOG_CAPTURE_H_
#define TEMPEST_TESTS_SUPPORT_LOG_CAPTURE_H_

#include <algorithm>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "spdlog/sinks/base_sink.h"
#include "spdlog/spdlog.h"

namespace tempest::testing {

// Keeps the messages logged while it lives (a sink added to the default
// logger), for tests that check what a component says about a fault.
class LogCapture {
 public:
  LogCapture() : sink_(std::make_shared<Sink>()) {
    spdlog::default_logger()->sinks().push_back(sink_);
  }
  ~LogCapture() {
    auto& sinks = spdlog::default_logger()->sinks();
    sinks.erase(std::remove(sinks.begin(), sinks.end(), sink_), sinks.end());
  }
  LogCapture(const LogCapture&) = delete;
  LogCapture& operator=(const LogCapture&) = delete;

  // How many messages contain `needle`.
  int Count(const std::string& needle) const {
    std::lock_guard<std::mutex> lock(sink_->lines_mu);
    int n = 0;
    for (const std::string& line : sink_->lines) n += absl::StrContains(line, needle);
    return n;
  }

 private:
  struct Sink final : spdlog::sinks::base_sink<std::mutex> {
    mutable std::mutex lines_mu;
    std::vector<std::string> lines;
    void sink_it_(const spdlog::details::log_msg& msg) override {
      std::lock_guard<std::mutex> lock(lines_mu);
      lines.emplace_back(msg.payload.data(), msg.payload.size());
    }
    void flush_() override {}
  };
  std::shared_ptr<Sink> sink_;
};

}  // namespace tempest::testing

#endif  // TEMPEST_TESTS_SUPPORT_LOG_CAPTURE_H_
