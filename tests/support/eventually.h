#ifndef TEMPEST_TESTS_SUPPORT_EVENTUALLY_H_
#define TEMPEST_TESTS_SUPPORT_EVENTUALLY_H_

#include <chrono>
#include <functional>
#include <thread>

namespace tempest::testing {

// Polls `predicate` until it returns true or `deadline` passes; returns its
// last result. Use instead of sleeps: a test waits exactly as long as needed,
// and the deadline only bounds a failing test.
inline bool Eventually(std::chrono::milliseconds deadline, const std::function<bool()>& predicate,
                       std::chrono::milliseconds poll = std::chrono::milliseconds(10)) {
  const auto until = std::chrono::steady_clock::now() + deadline;
  for (;;) {
    if (predicate()) return true;
    if (std::chrono::steady_clock::now() >= until) return predicate();
    std::this_thread::sleep_for(poll);
  }
}

}  // namespace tempest::testing

#endif  // TEMPEST_TESTS_SUPPORT_EVENTUALLY_H_
