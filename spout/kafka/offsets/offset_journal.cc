#include "spout/kafka/offsets/offset_journal.h"

#include <algorithm>
#include <ctime>
#include <nlohmann/json.hpp>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "common/core/status_macros.h"

namespace tempest::spout {
namespace {

constexpr struct {
  JournalEntryType type;
  std::string_view name;
} kTypeNames[] = {
    {JournalEntryType::kCommit, "commit"},         {JournalEntryType::kAcquired, "acquired"},
    {JournalEntryType::kReleased, "released"},     {JournalEntryType::kReset, "reset"},
    {JournalEntryType::kDeadLetter, "dead-letter"}, {JournalEntryType::kManualSet, "manual-set"},
    {JournalEntryType::kRewind, "rewind"},
};

// Reads an optional integer member; false if present with another type.
bool TakeInt(const nlohmann::json& doc, const char* key, int64_t& out) {
  auto it = doc.find(key);
  if (it == doc.end()) return true;
  if (!it->is_number_integer()) return false;
  out = it->get<int64_t>();
  return true;
}

bool TakeString(const nlohmann::json& doc, const char* key, std::string& out) {
  auto it = doc.find(key);
  if (it == doc.end()) return true;
  if (!it->is_string()) return false;
  out = it->get<std::string>();
  return true;
}

// "F-L (N records)" for the half-open range [from, to).
std::string RangeText(int64_t from, int64_t to) {
  const int64_t n = to - from;
  return absl::StrCat(from, "-", to - 1, " (", n, n == 1 ? " record" : " records", ")");
}

std::string ByText(const JournalEntry& e) {
  std::string s = absl::StrCat(FormatUtcMillis(e.time_ms), " by ",
                               e.owner.empty() ? std::string("an unnamed writer") : e.owner);
  return s;
}

bool Covers(int64_t from, int64_t to, int64_t x) { return from <= x && x < to; }

// This absl's string_view is its own type.
absl::string_view Av(std::string_view s) { return absl::string_view(s.data(), s.size()); }

}  // namespace

std::string_view JournalEntryTypeName(JournalEntryType type) {
  for (const auto& t : kTypeNames) {
    if (t.type == type) return t.name;
  }
  return "unknown";
}

std::optional<JournalEntryType> ParseJournalEntryType(std::string_view name) {
  for (const auto& t : kTypeNames) {
    if (t.name == name) return t.type;
  }
  return std::nullopt;
}

std::string EncodeJournalEntry(const JournalEntry& e) {
  nlohmann::ordered_json doc;
  doc["type"] = std::string(JournalEntryTypeName(e.type));
  doc["time"] = e.time_ms;
  if (e.from >= 0) doc["from"] = e.from;
  if (e.to >= 0) doc["to"] = e.to;
  if (e.offset >= 0) doc["offset"] = e.offset;
  if (!e.owner.empty()) doc["owner"] = e.owner;
  if (!e.session.empty()) doc["session"] = e.session;
  if (!e.topology.empty()) doc["topology"] = e.topology;
  if (!e.guarantee.empty()) doc["guarantee"] = e.guarantee;
  if (!e.reason.empty()) doc["reason"] = e.reason;
  if (!e.target_topic.empty()) doc["target"] = e.target_topic;
  if (e.failures > 0) doc["failures"] = e.failures;
  return doc.dump();
}

absl::StatusOr<JournalEntry> DecodeJournalEntry(std::string_view json) {
  nlohmann::json doc = nlohmann::json::parse(json, nullptr, /*allow_exceptions=*/false);
  if (doc.is_discarded() || !doc.is_object()) {
    return absl::InvalidArgumentError("journal entry is not a JSON object");
  }
  JournalEntry e;
  std::string type;
  if (!TakeString(doc, "type", type) || type.empty()) {
    return absl::InvalidArgumentError("journal entry has no \"type\" string");
  }
  std::optional<JournalEntryType> parsed = ParseJournalEntryType(type);
  if (!parsed) return absl::InvalidArgumentError(absl::StrCat("unknown journal entry type ", type));
  e.type = *parsed;
  if (!doc.contains("time") || !TakeInt(doc, "time", e.time_ms)) {
    return absl::InvalidArgumentError("journal entry has no integral \"time\"");
  }
  const bool ints = TakeInt(doc, "from", e.from) && TakeInt(doc, "to", e.to) &&
                    TakeInt(doc, "offset", e.offset) && TakeInt(doc, "failures", e.failures);
  const bool strings = TakeString(doc, "owner", e.owner) && TakeString(doc, "session", e.session) &&
                       TakeString(doc, "topology", e.topology) &&
                       TakeString(doc, "guarantee", e.guarantee) &&
                       TakeString(doc, "reason", e.reason) &&
                       TakeString(doc, "target", e.target_topic);
  if (!ints || !strings) {
    return absl::InvalidArgumentError("journal entry has a field of the wrong type");
  }
  return e;
}

std::string JournalDirPath(const std::string& zk_root, const std::string& spout_id,
                           const std::string& topic, int partition, bool topic_level) {
  std::string root = zk_root;
  while (root.size() > 1 && root.back() == '/') root.pop_back();
  if (root == "/") root.clear();
  std::string dir = absl::StrCat(root, "/", spout_id, "/@journal/");
  if (topic_level) absl::StrAppend(&dir, topic, "/");
  absl::StrAppend(&dir, "partition_", partition);
  return dir;
}

std::string JournalEntryPrefix(const std::string& dir, int64_t time_ms) {
  return absl::StrCat(dir, "/e-", std::max<int64_t>(time_ms, 0), "-");
}

std::optional<JournalNodeName> ParseJournalNodeName(std::string_view name) {
  if (name.size() < 14 || name.substr(0, 2) != "e-") return std::nullopt;
  const size_t dash = name.rfind('-');
  if (dash <= 2 || name.size() - dash - 1 != 10) return std::nullopt;
  JournalNodeName out;
  if (!absl::SimpleAtoi(Av(name.substr(2, dash - 2)), &out.time_ms) || out.time_ms < 0) {
    return std::nullopt;
  }
  if (!absl::SimpleAtoi(Av(name.substr(dash + 1)), &out.sequence) || out.sequence < 0) {
    return std::nullopt;
  }
  return out;
}

coord::ZkOp JournalAppendOp(const std::string& dir, const JournalEntry& entry) {
  return coord::ZkOp::Create(JournalEntryPrefix(dir, entry.time_ms), EncodeJournalEntry(entry),
                             coord::ZkCreateMode::kPersistentSequential);
}

absl::Status EnsureJournalDir(coord::ZkSession& session, const std::string& dir,
                              const coord::ZkCall& call) {
  return session.EnsurePath(dir, call);
}

absl::Status AppendJournalEntry(coord::ZkSession& session, const std::string& dir,
                                const JournalEntry& entry, const coord::ZkCall& call) {
  RETURN_IF_ERROR(EnsureJournalDir(session, dir, call));
  coord::ZkCreateOptions options;
  options.mode = coord::ZkCreateMode::kPersistentSequential;
  absl::StatusOr<std::string> created =
      session.Create(JournalEntryPrefix(dir, entry.time_ms), EncodeJournalEntry(entry), options,
                     call);
  return created.status();
}

std::vector<std::string> JournalNamesToTrim(const std::vector<std::string>& children,
                                            int64_t max_entries, std::chrono::seconds retention,
                                            int64_t now_ms, int batch) {
  std::vector<std::pair<JournalNodeName, const std::string*>> named;
  for (const std::string& c : children) {
    if (std::optional<JournalNodeName> n = ParseJournalNodeName(c)) named.push_back({*n, &c});
  }
  std::sort(named.begin(), named.end(),
            [](const auto& a, const auto& b) { return a.first.sequence < b.first.sequence; });
  const int64_t keep = std::max<int64_t>(max_entries, 1);
  const int64_t over = static_cast<int64_t>(named.size()) - keep;
  const int64_t cutoff_ms = now_ms - retention.count() * 1000;
  std::vector<std::string> out;
  for (int64_t i = 0; i < static_cast<int64_t>(named.size()); ++i) {
    if (static_cast<int>(out.size()) >= batch) break;
    const bool too_many = i < over;
    const bool too_old = retention.count() > 0 && named[i].first.time_ms < cutoff_ms;
    // The newest entry always stays: it tells explain where the journal stands.
    if (i + 1 == static_cast<int64_t>(named.size())) break;
    if (!too_many && !too_old) break;  // oldest first: the rest are newer
    out.push_back(*named[i].second);
  }
  return out;
}

absl::StatusOr<int> TrimJournal(coord::ZkSession& session, const std::string& dir,
                                int64_t max_entries, std::chrono::seconds retention,
                                int64_t now_ms, const coord::ZkCall& call) {
  absl::StatusOr<std::vector<std::string>> children = session.Children(dir, call);
  if (absl::IsNotFound(children.status())) return 0;
  RETURN_IF_ERROR(children.status());
  std::vector<std::string> doomed = JournalNamesToTrim(*children, max_entries, retention, now_ms);
  if (doomed.empty()) return 0;
  std::vector<coord::ZkOp> ops;
  ops.reserve(doomed.size());
  for (const std::string& name : doomed) ops.push_back(coord::ZkOp::Delete(dir + "/" + name));
  RETURN_IF_ERROR(session.Multi(ops, call));
  return static_cast<int>(doomed.size());
}

absl::StatusOr<JournalRead> ReadJournal(coord::ZkSession& session, const std::string& dir,
                                        const coord::ZkCall& call) {
  JournalRead out;
  absl::StatusOr<std::vector<std::string>> children = session.Children(dir, call);
  if (absl::IsNotFound(children.status())) return out;
  RETURN_IF_ERROR(children.status());
  std::vector<std::pair<int64_t, std::string>> names;
  for (const std::string& c : *children) {
    std::optional<JournalNodeName> n = ParseJournalNodeName(c);
    if (!n) {
      ++out.unreadable;
      continue;
    }
    names.push_back({n->sequence, c});
  }
  std::sort(names.begin(), names.end());
  for (const auto& [seq, name] : names) {
    absl::StatusOr<coord::ZkNode> node = session.Get(dir + "/" + name, call);
    if (absl::IsNotFound(node.status())) continue;  // trimmed meanwhile
    RETURN_IF_ERROR(node.status());
    absl::StatusOr<JournalEntry> e = DecodeJournalEntry(node->data);
    if (!e.ok()) {
      ++out.unreadable;
      continue;
    }
    e->sequence = seq;
    out.entries.push_back(*std::move(e));
  }
  return out;
}

std::string_view VerdictName(OffsetExplanation::Verdict verdict) {
  using V = OffsetExplanation::Verdict;
  switch (verdict) {
    case V::kCommitted: return "committed";
    case V::kLost: return "lost";
    case V::kDeadLettered: return "dead-lettered";
    case V::kNotReached: return "not-reached";
    case V::kUnknown: return "unknown";
  }
  return "unknown";
}

namespace {

using Verdict = OffsetExplanation::Verdict;

// Applies one entry to the running explanation of record `x`.
void ApplyEntry(const JournalEntry& e, int64_t x, OffsetExplanation& out, bool& decided) {
  switch (e.type) {
    case JournalEntryType::kCommit: {
      // A commit moving past a record already lost or dead-lettered does not
      // change what became of it.
      const int64_t from = e.from < 0 ? 0 : e.from;
      if (Covers(from, e.to, x) && !decided) {
        out.verdict = Verdict::kCommitted, out.entry = e, decided = true;
      }
      return;
    }
    case JournalEntryType::kReset:
      if (Covers(e.from, e.to, x)) out.verdict = Verdict::kLost, out.entry = e, decided = true;
      return;
    case JournalEntryType::kDeadLetter:
      if (e.offset == x) out.verdict = Verdict::kDeadLettered, out.entry = e, decided = true;
      return;
    case JournalEntryType::kManualSet:
    case JournalEntryType::kRewind:
      if (e.from >= 0 && e.from < e.to && Covers(e.from, e.to, x)) {
        out.verdict = Verdict::kLost, out.entry = e, decided = true;
      } else if (e.to >= 0 && e.to < e.from && Covers(e.to, e.from, x)) {
        // Moved back over it: it is delivered again, and what follows decides.
        out.replayed_by = e;
        decided = false;
        out.entry.reset();
      }
      return;
    case JournalEntryType::kAcquired:
    case JournalEntryType::kReleased:
      return;
  }
}

std::string VerdictText(const OffsetExplanation& out, const std::string& what,
                        std::optional<int64_t> stored) {
  const JournalEntry* e = out.entry ? &*out.entry : nullptr;
  switch (out.verdict) {
    case Verdict::kCommitted:
      return absl::StrCat(what, " was committed past at ", ByText(*e), " under ",
                          e->guarantee.empty() ? "an unrecorded guarantee" : e->guarantee,
                          " (commit ", e->from < 0 ? std::string("none") : absl::StrCat(e->from),
                          " -> ", e->to, e->from < 0 ? ", the partition's first commit" : "", ")");
    case Verdict::kLost:
      return absl::StrCat(what, " is lost: ",
                          e->type == JournalEntryType::kReset ? "out-of-range reset" : "manual set",
                          " skipped ", RangeText(e->from, e->to), " at ", ByText(*e),
                          e->reason.empty() ? "" : absl::StrCat(": ", e->reason));
    case Verdict::kDeadLettered:
      return absl::StrCat(what, " was dead-lettered to ", e->target_topic, " after ", e->failures,
                          " failures at ", ByText(*e));
    case Verdict::kNotReached:
      return stored ? absl::StrCat(what, " is not reached yet: the stored offset is ", *stored)
                    : absl::StrCat(what, " is not reached yet: no offset is stored");
    case Verdict::kUnknown:
      break;
  }
  return what;  // kUnknown texts are made by the caller
}

}  // namespace

OffsetExplanation ExplainOffset(const std::vector<JournalEntry>& entries,
                                std::optional<int64_t> stored_offset, const TopicPartition& tp,
                                int64_t offset) {
  OffsetExplanation out;
  const std::string what = absl::StrCat("offset ", offset, " of ", Describe(tp));
  bool decided = false;
  int64_t reach = -1;  // lowest offset the journal's ranges start at
  bool from_start = false;  // a first commit (no stored offset before) is in the journal
  for (const JournalEntry& e : entries) {
    ApplyEntry(e, offset, out, decided);
    if (e.type == JournalEntryType::kCommit && e.from < 0) from_start = true;
    const int64_t start = e.type == JournalEntryType::kDeadLetter ? e.offset
                          : e.from >= 0                          ? std::min(e.from, e.to)
                                                                  : e.to;
    if (start >= 0 && (reach < 0 || start < reach)) reach = start;
  }
  std::string replay;
  if (out.replayed_by) {
    replay = absl::StrCat(" (delivered again after the ",
                          Av(JournalEntryTypeName(out.replayed_by->type)), " to ",
                          out.replayed_by->to, " at ", ByText(*out.replayed_by), ")");
  }
  if (decided) {
    out.text = VerdictText(out, what, stored_offset) + replay;
    return out;
  }
  if (!stored_offset || offset >= *stored_offset) {
    out.verdict = Verdict::kNotReached;
    out.text = VerdictText(out, what, stored_offset) + replay;
    return out;
  }
  out.verdict = Verdict::kUnknown;
  if (entries.empty()) {
    out.text = absl::StrCat(what, " is unknown: the partition has no journal entries (stored offset ",
                            *stored_offset, ")");
  } else if (!from_start && (reach < 0 || offset < reach)) {
    out.text = absl::StrCat(what, " is unknown: the journal reaches back only to offset ", reach,
                            " (", FormatUtcMillis(entries.front().time_ms),
                            "); older entries were trimmed or predate it");
  } else {
    out.text = absl::StrCat(what, " is unknown: no journal entry covers it") + replay;
  }
  return out;
}

std::string FormatUtcMillis(int64_t time_ms) {
  const std::time_t secs = static_cast<std::time_t>(time_ms / 1000);
  std::tm tm{};
  gmtime_r(&secs, &tm);
  return absl::StrFormat("%04d-%02d-%02dT%02d:%02d:%02d.%03dZ", tm.tm_year + 1900, tm.tm_mon + 1,
                         tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec,
                         static_cast<int>(time_ms % 1000));
}

std::string DescribeJournalEntry(const JournalEntry& e) {
  std::string s = absl::StrCat(FormatUtcMillis(e.time_ms), " ", Av(JournalEntryTypeName(e.type)), " ");
  const std::string from = e.from < 0 ? std::string("none") : absl::StrCat(e.from);
  switch (e.type) {
    case JournalEntryType::kCommit:
      absl::StrAppend(&s, from, " -> ", e.to, e.guarantee.empty() ? "" : " " + e.guarantee);
      break;
    case JournalEntryType::kAcquired:
    case JournalEntryType::kReleased:
      break;
    case JournalEntryType::kReset:
      if (e.to > e.from) {
        absl::StrAppend(&s, "skipped ", RangeText(e.from, e.to));
      } else {
        absl::StrAppend(&s, "moved back from ", e.from, " to ", e.to, " (nothing skipped)");
      }
      break;
    case JournalEntryType::kDeadLetter:
      absl::StrAppend(&s, "offset ", e.offset, " to ", e.target_topic, " after ", e.failures,
                      " failures");
      break;
    case JournalEntryType::kManualSet:
    case JournalEntryType::kRewind:
      absl::StrAppend(&s, from, " -> ", e.to);
      break;
  }
  if (!e.owner.empty()) absl::StrAppend(&s, " by ", e.owner);
  if (!e.session.empty()) absl::StrAppend(&s, " session ", e.session);
  if (!e.topology.empty()) absl::StrAppend(&s, " topology ", e.topology);
  if (!e.reason.empty()) absl::StrAppend(&s, ": ", e.reason);
  return s;
}

}  // namespace tempest::spout
