#ifndef TEMPEST_SPOUT_RECORD_WINDOW_H_
#define TEMPEST_SPOUT_RECORD_WINDOW_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace tempest::spout {

// The records of one partition the KafkaSpout holds in memory, in offset
// order: first those emitted and kept for retries and dead letters (the
// "retained" part), then those fetched and not yet emitted (the "waiting"
// part). One ring buffer replaces a hash map keyed by offset plus a separate
// waiting queue: fetching appends at the back, emitting moves a boundary,
// and a lookup by offset is an index computation (offsets are usually
// contiguous) with a binary search as fallback when the log has gaps
// (compaction, transaction markers). Released records at the front are
// dropped at once; a released record behind a still-retained one keeps only
// its offset until the front catches up. The ring grows by doubling; it
// shrinks on Clear, and otherwise only from very large sizes once mostly
// empty.
//
// Offsets must be appended in strictly increasing order. Single-threaded:
// the spout's executor thread.
class RecordWindow {
 public:
  struct Record {
    int64_t offset = 0;
    std::string key, value;
    bool has_key = false, has_value = false;
    int64_t timestamp_ms = -1;  // the record's Kafka timestamp (-1: none)
    bool released = false;  // payload freed; kept only to hold its place
  };

  // A record was fetched. Its offset must exceed every offset in the window.
  Record& Append(int64_t offset);

  bool HasWaiting() const { return emitted_ < size_; }
  size_t waiting_count() const { return size_ - emitted_; }
  // The oldest waiting record (HasWaiting() must hold).
  Record& FrontWaiting() { return At(emitted_); }
  // The front waiting record was emitted; `retain` keeps its payload until
  // Release (AT_LEAST_ONCE), otherwise it is dropped (its payload may have
  // been moved out).
  void PopWaiting(bool retain);

  // The retained record at `offset`, or nullptr.
  const Record* Find(int64_t offset) const;
  Record* FindMutable(int64_t offset) {
    return const_cast<Record*>(static_cast<const RecordWindow*>(this)->Find(offset));
  }
  // Frees the retained record at `offset`; false if there is none.
  bool Release(int64_t offset);
  // Retained records (released ones excluded).
  size_t retained_count() const { return emitted_ - released_behind_; }

  // Forgets everything, retained and waiting.
  void Clear();
  // Forgets the waiting records only.
  void ClearWaiting();

 private:
  static constexpr size_t kMinCapacity = 64;
  static constexpr size_t kShrinkAbove = 65536;

  Record& At(size_t i) { return slots_[(head_ + i) & (slots_.size() - 1)]; }
  const Record& At(size_t i) const { return slots_[(head_ + i) & (slots_.size() - 1)]; }
  // Index (from the front) of the retained record at `offset`, or -1.
  ptrdiff_t IndexOf(int64_t offset) const;
  static void Free(Record& r);
  void TrimFront();
  void Resize(size_t capacity);

  std::vector<Record> slots_;   // capacity: 0 or a power of two
  size_t head_ = 0;             // slot of the front record
  size_t size_ = 0;             // records in the window
  size_t emitted_ = 0;          // [0, emitted_) retained (or released), then waiting
  size_t released_behind_ = 0;  // released records inside [0, emitted_)
};

}  // namespace tempest::spout

#endif  // TEMPEST_SPOUT_RECORD_WINDOW_H_
