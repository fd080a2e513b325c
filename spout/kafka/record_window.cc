#include "spout/kafka/record_window.h"

#include <algorithm>
#include <utility>

namespace tempest::spout {

RecordWindow::Record& RecordWindow::Append(int64_t offset) {
  if (size_ == slots_.size()) Resize(std::max(kMinCapacity, slots_.size() * 2));
  Record& r = At(size_++);
  r.offset = offset;
  r.has_key = false;
  r.has_value = false;
  r.released = false;
  r.timestamp_ms = -1;
  return r;
}

void RecordWindow::PopWaiting(bool retain) {
  if (!retain) {
    Free(At(emitted_));
    ++released_behind_;
  }
  ++emitted_;
  TrimFront();
}

ptrdiff_t RecordWindow::IndexOf(int64_t offset) const {
  if (emitted_ == 0) return -1;
  const int64_t base = At(0).offset;
  if (offset < base || offset > At(emitted_ - 1).offset) return -1;
  // Contiguous offsets (the common case): the index is the distance.
  const int64_t guess = offset - base;
  if (guess < static_cast<int64_t>(emitted_) && At(static_cast<size_t>(guess)).offset == offset) {
    return static_cast<ptrdiff_t>(guess);
  }
  // Offsets only increase, so the record at index i has offset >= base + i:
  // with gaps it sits left of the guess. Binary search [0, min(guess, emitted_)).
  size_t lo = 0;
  size_t hi = static_cast<size_t>(std::min<int64_t>(guess, static_cast<int64_t>(emitted_)));
  while (lo < hi) {
    const size_t mid = lo + (hi - lo) / 2;
    if (At(mid).offset < offset) {
      lo = mid + 1;
    } else {
      hi = mid;
    }
  }
  if (lo < emitted_ && At(lo).offset == offset) return static_cast<ptrdiff_t>(lo);
  return -1;
}

const RecordWindow::Record* RecordWindow::Find(int64_t offset) const {
  const ptrdiff_t i = IndexOf(offset);
  if (i < 0) return nullptr;
  const Record& r = At(static_cast<size_t>(i));
  return r.released ? nullptr : &r;
}

bool RecordWindow::Release(int64_t offset) {
  const ptrdiff_t i = IndexOf(offset);
  if (i < 0) return false;
  Record& r = At(static_cast<size_t>(i));
  if (r.released) return false;
  Free(r);
  ++released_behind_;
  TrimFront();
  return true;
}

void RecordWindow::Clear() {
  for (size_t i = 0; i < size_; ++i) Free(At(i));
  head_ = 0;
  size_ = 0;
  emitted_ = 0;
  released_behind_ = 0;
  if (slots_.size() > kMinCapacity) Resize(kMinCapacity);
}

void RecordWindow::ClearWaiting() {
  for (size_t i = emitted_; i < size_; ++i) Free(At(i));
  size_ = emitted_;
}

void RecordWindow::Free(Record& r) {
  r.released = true;
  // Give the heap buffers back now: the slot may wait long for reuse.
  std::string().swap(r.key);
  std::string().swap(r.value);
}

void RecordWindow::TrimFront() {
  while (emitted_ > 0 && At(0).released) {
    head_ = (head_ + 1) & (slots_.size() - 1);
    --size_;
    --emitted_;
    --released_behind_;
  }
  // Shrink a ring that a large burst left mostly empty. Smaller rings keep
  // their capacity (like a hash map would): growing and shrinking them on
  // every poll batch would cost more than the memory saved.
  if (slots_.size() > kShrinkAbove && size_ * 8 < slots_.size()) Resize(slots_.size() / 2);
}

void RecordWindow::Resize(size_t capacity) {
  std::vector<Record> slots(capacity);
  for (size_t i = 0; i < size_; ++i) slots[i] = std::move(At(i));
  slots_ = std::move(slots);
  head_ = 0;
}

}  // namespace tempest::spout
