#include "spout/kafka/pending_offsets.h"

namespace tempest::spout {

bool PendingOffsets::Add(int64_t offset) {
  if (pending_.empty()) {
    if (started_ && offset < base_) return false;
    started_ = true;
    base_ = offset;
    pending_.push_back(1);
    ++pending_count_;
    return true;
  }
  if (offset < base_) return false;
  const auto index = static_cast<size_t>(offset - base_);
  if (index == pending_.size()) {  // the next offset: the common case
    pending_.push_back(1);
    ++pending_count_;
    return true;
  }
  if (index > pending_.size()) pending_.resize(index + 1, 0);
  if (pending_[index] == 0) {
    pending_[index] = 1;
    ++pending_count_;
  }
  return true;
}

bool PendingOffsets::Complete(int64_t offset) {
  if (offset < base_ || offset - base_ >= static_cast<int64_t>(pending_.size())) return false;
  auto& flag = pending_[static_cast<size_t>(offset - base_)];
  if (flag == 0) return false;
  flag = 0;
  --pending_count_;
  TrimFront();
  return true;
}

bool PendingOffsets::IsPending(int64_t offset) const {
  if (offset < base_ || offset - base_ >= static_cast<int64_t>(pending_.size())) return false;
  return pending_[static_cast<size_t>(offset - base_)] != 0;
}

std::optional<int64_t> PendingOffsets::Lowest() const {
  if (pending_count_ == 0) return std::nullopt;
  return base_;  // TrimFront keeps the front pending
}

int64_t PendingOffsets::DropBelow(int64_t offset) {
  int64_t dropped = 0;
  while (!pending_.empty() && base_ < offset) {
    if (pending_.front() != 0) {
      ++dropped;
      --pending_count_;
    }
    pending_.pop_front();
    ++base_;
  }
  TrimFront();
  return dropped;
}

void PendingOffsets::Clear() {
  started_ = false;
  pending_.clear();
  pending_count_ = 0;
}

void PendingOffsets::TrimFront() {
  while (!pending_.empty() && pending_.front() == 0) {
    pending_.pop_front();
    ++base_;
  }
}

}  // namespace tempest::spout
