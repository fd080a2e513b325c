#include "bolts/applied_offsets.h"

#include <algorithm>
#include <iterator>
#include <limits>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "common/api/string_view_compat.h"

namespace tempest::bolts {

const AppliedOffsets::Partition* AppliedOffsets::Find(std::string_view topic,
                                                      int64_t partition) const {
  auto it = partitions_.find(std::make_pair(std::string(topic), partition));
  return it == partitions_.end() ? nullptr : &it->second;
}

bool AppliedOffsets::Contains(const Partition& p, int64_t offset) {
  if (offset <= p.watermark) return true;
  auto it = p.runs.upper_bound(offset);  // first run starting after offset
  if (it == p.runs.begin()) return false;
  --it;
  return offset <= it->second;
}

bool AppliedOffsets::Contains(const RecordKey& key) const {
  const Partition* p = Find(key.topic, key.partition);
  return p != nullptr && Contains(*p, key.offset);
}

bool AppliedOffsets::Add(const RecordKey& key) {
  Partition& p = partitions_[std::make_pair(key.topic, key.partition)];
  const int64_t o = key.offset;
  if (Contains(p, o)) return false;
  p.highest = std::max(p.highest, o);
  // Insert [o, o], merging with a run ending at o-1 and one starting at o+1.
  int64_t first = o, last = o;
  auto next = p.runs.upper_bound(o);
  if (next != p.runs.begin()) {
    auto prev = std::prev(next);
    if (prev->second == o - 1) {
      first = prev->first;
      p.runs.erase(prev);
    }
  }
  if (next != p.runs.end() && o != std::numeric_limits<int64_t>::max() && next->first == o + 1) {
    last = next->second;
    p.runs.erase(next);
  }
  p.runs.emplace(first, last);
  // Offsets more than the window below the highest count as applied (see
  // the class comment); then fold every run that now touches the watermark.
  // (Written so no sum can overflow: offsets are >= 0, the window >= 1.)
  if (p.highest - window_ > p.watermark) p.watermark = p.highest - window_;
  while (!p.runs.empty() && p.runs.begin()->first - 1 <= p.watermark) {
    p.watermark = std::max(p.watermark, p.runs.begin()->second);
    p.runs.erase(p.runs.begin());
  }
  return true;
}

int64_t AppliedOffsets::Watermark(std::string_view topic, int64_t partition) const {
  const Partition* p = Find(topic, partition);
  return p == nullptr ? -1 : p->watermark;
}

int64_t AppliedOffsets::RunsAbove(std::string_view topic, int64_t partition) const {
  const Partition* p = Find(topic, partition);
  return p == nullptr ? 0 : static_cast<int64_t>(p->runs.size());
}

int64_t AppliedOffsets::TotalRuns() const {
  int64_t n = 0;
  for (const auto& [unused, p] : partitions_) n += static_cast<int64_t>(p.runs.size());
  return n;
}

bool IsLoggableTopic(std::string_view topic) {
  if (topic.empty()) return false;
  for (char c : topic) {
    unsigned char u = static_cast<unsigned char>(c);
    if (u <= 0x20 || u == 0x7f) return false;
  }
  return true;
}

std::string AppliedLine(const RecordKey& key, std::string_view payload) {
  return absl::StrCat("@", key.topic, " ", key.partition, " ", key.offset, " ", api::Sv(payload),
                      "\n");
}

std::string DroppedLine(const RecordKey& key) {
  return absl::StrCat("=", key.topic, " ", key.partition, " ", key.offset, "\n");
}

namespace {

// The next space-separated token of `rest` (advancing it); empty at the end.
std::string_view NextToken(std::string_view& rest) {
  size_t space = rest.find(' ');
  std::string_view token = rest.substr(0, space);
  rest = space == std::string_view::npos ? std::string_view() : rest.substr(space + 1);
  return token;
}

bool ParseNonNegative(std::string_view text, int64_t* out) {
  if (text.empty() || text[0] == '+' || text[0] == '-') return false;
  return absl::SimpleAtoi(absl::string_view(text.data(), text.size()), out) && *out >= 0;
}

}  // namespace

std::optional<DedupLine> ParseDedupLine(std::string_view line) {
  if (line.empty() || (line[0] != '@' && line[0] != '=')) return std::nullopt;
  DedupLine out;
  out.kind = line[0] == '@' ? DedupLine::Kind::kApplied : DedupLine::Kind::kDropped;
  std::string_view rest = line.substr(1);
  std::string_view topic = NextToken(rest);
  std::string_view partition = NextToken(rest);
  bool applied = out.kind == DedupLine::Kind::kApplied;
  // An applied line has a payload after the offset; a dropped line ends there.
  std::string_view offset = applied ? NextToken(rest) : rest;
  if (!IsLoggableTopic(topic) || !ParseNonNegative(partition, &out.key.partition) ||
      !ParseNonNegative(offset, &out.key.offset)) {
    return std::nullopt;
  }
  if (applied) {
    if (rest.empty()) return std::nullopt;
    out.payload = rest;
  }
  out.key.topic = std::string(topic);
  return out;
}

}  // namespace tempest::bolts
