#ifndef TEMPEST_COMMON_NET_EVENT_LOOP_H_
#define TEMPEST_COMMON_NET_EVENT_LOOP_H_

#include <atomic>
#include <functional>
#include <memory>
#include <string>
#include <thread>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"

namespace boost::asio {
class io_context;
}  // namespace boost::asio

namespace tempest::net {

// Owns one boost::asio::io_context and the single thread that runs it. Every
// socket, timer and handler of the transport and HTTP servers of a process
// lives on this thread (architecture §4: one Asio thread per process).
//
// Thread-safety: Post(), RunSync(), Stop() and InLoopThread() may be called
// from any thread; context() is for code that creates Asio objects bound to
// this loop (TransportServer, TransportClient, HttpServer) and must only be
// used on the loop thread or before the object starts any operation.
//
// Lifetime: the loop must outlive every server and client created on it.
// Destroying the loop stops it and joins its thread.
class EventLoop {
 public:
  // Starts the thread. `name` is used for the thread name (≤15 chars shown).
  static absl::StatusOr<std::unique_ptr<EventLoop>> Create(const std::string& name = "tempest-net");
  ~EventLoop();

  EventLoop(const EventLoop&) = delete;
  EventLoop& operator=(const EventLoop&) = delete;

  // Queues `fn` to run on the loop thread. Returns false (and drops `fn`)
  // once the loop is stopped.
  bool Post(std::function<void()> fn);

  // Runs `fn` on the loop thread and waits for it. Runs `fn` inline when
  // called on the loop thread, or when the loop has already stopped (then no
  // other thread touches loop-owned objects any more).
  void RunSync(const std::function<void()>& fn);

  // Stops the loop and joins the thread; pending handlers are dropped.
  // Idempotent. Must not be called on the loop thread.
  void Stop();

  bool InLoopThread() const;
  boost::asio::io_context& context() { return *io_; }

 private:
  EventLoop();

  std::unique_ptr<boost::asio::io_context> io_;
  // Keeps run() from returning while no operation is pending.
  std::shared_ptr<void> work_guard_;
  std::thread thread_;
  std::thread::id thread_id_;
  absl::Mutex mu_;
  bool stopped_ ABSL_GUARDED_BY(mu_) = false;
  std::atomic<bool> joined_{false};
};

}  // namespace tempest::net

#endif  // TEMPEST_COMMON_NET_EVENT_LOOP_H_
