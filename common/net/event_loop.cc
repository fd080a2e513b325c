#include "common/net/event_loop.h"

#include <pthread.h>

#include <chrono>
#include <future>
#include <utility>

#include "absl/strings/str_cat.h"
#include "boost/asio/executor_work_guard.hpp"
#include "boost/asio/io_context.hpp"
#include "boost/asio/post.hpp"
#include "common/core/status_macros.h"
#include "common/os/limits.h"
#include "spdlog/spdlog.h"

namespace tempest::net {

using WorkGuard = boost::asio::executor_work_guard<boost::asio::io_context::executor_type>;

EventLoop::EventLoop() : io_(std::make_unique<boost::asio::io_context>(1)) {}

absl::StatusOr<std::unique_ptr<EventLoop>> EventLoop::Create(const std::string& name) {
  std::unique_ptr<EventLoop> loop(new EventLoop());
  loop->work_guard_ = std::make_shared<WorkGuard>(loop->io_->get_executor());
  std::promise<void> started;
  auto started_future = started.get_future();
  EventLoop* raw = loop.get();
  RETURN_IF_ERROR(
      os::StartThread(loop->thread_, absl::StrCat("event loop ", name), [raw, &started, name] {
        pthread_setname_np(pthread_self(), name.substr(0, 15).c_str());
        raw->thread_id_ = std::this_thread::get_id();
        started.set_value();
        // Asio rethrows exceptions escaping handlers from run(). Our handlers
        // throw nothing; anything that escapes is a broken invariant, so log
        // and crash (fail-fast: the supervisor restarts the process).
        try {
          raw->io_->run();
        } catch (const std::exception& e) {
          spdlog::critical("net event loop: handler threw: {}", e.what());
          std::abort();
        }
      }));
  started_future.wait();
  return loop;
}

EventLoop::~EventLoop() { Stop(); }

bool EventLoop::Post(std::function<void()> fn) {
  absl::MutexLock lock(&mu_);
  if (stopped_) return false;
  boost::asio::post(*io_, std::move(fn));
  return true;
}

void EventLoop::RunSync(const std::function<void()>& fn) {
  if (InLoopThread()) {
    fn();
    return;
  }
  auto done = std::make_shared<std::promise<void>>();
  auto done_future = done->get_future();
  {
    absl::MutexLock lock(&mu_);
    if (!stopped_) {
      boost::asio::post(*io_, [&fn, done] {
        fn();
        done->set_value();
      });
    }
  }
  // Stop() may drop the posted handler. Once the thread is joined the handler
  // has either run completely or never will, so run `fn` here instead.
  while (done_future.wait_for(std::chrono::milliseconds(5)) != std::future_status::ready) {
    if (joined_.load(std::memory_order_acquire)) {
      if (done_future.wait_for(std::chrono::seconds(0)) != std::future_status::ready) fn();
      return;
    }
  }
}

void EventLoop::Stop() {
  {
    absl::MutexLock lock(&mu_);
    if (stopped_) return;
    stopped_ = true;
  }
  work_guard_.reset();
  io_->stop();
  if (thread_.joinable()) thread_.join();
  joined_.store(true, std::memory_order_release);
}

bool EventLoop::InLoopThread() const { return std::this_thread::get_id() == thread_id_; }

}  // namespace tempest::net
