#ifndef TEMPEST_COMMON_COORD_AMBIGUOUS_WRITE_H_
#define TEMPEST_COMMON_COORD_AMBIGUOUS_WRITE_H_

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/coord/zk_session.h"

namespace tempest::coord {

// The rules ZkSession follows after a failed request, as pure functions so
// they can be tested without a server. ZkSession does the reads; these decide.

// What a failed request's return code means for the retry loop.
enum class ZkFailureKind {
  kFinal,              // give up with this error
  kRetry,              // a read: send again after a backoff
  kRetryUnlessFenced,  // a write that definitely did not happen: send again, unless the call
                       // is bound to a session that this code says is gone
  kAmbiguous,          // a write that may or may not have happened: read back first
};
ZkFailureKind ClassifyFailure(int rc, bool write);

// True when `rc` says the session a call was bound to is gone, so a
// bound write that definitely did not happen fails as fenced.
bool EndsBoundSession(int rc);

// What the read-back of an ambiguous write says about it.
enum class WriteOutcome {
  kApplied,     // the write happened: report success
  kNotApplied,  // it did not: it may be sent again
  kConflict,    // someone else's node is where ours would be (create)
  kUnknown,     // cannot tell: report an error
};
// "applied", "not_applied", "conflict", "unknown": the outcome label of
// tempest_zk_ambiguous_writes_total.
std::string_view WriteOutcomeLabel(WriteOutcome outcome);

// True when `node` is what our create made: our data and, for an ephemeral
// node, our session (the one the create was sent on) as its owner.
bool IsOurCreate(const ZkNode& node, std::string_view data, ZkCreateMode mode, int64_t session);

// set(data, expected_version) read back as `node`.
//   expected_version >= 0: expected+1 with our data -> applied; still at
//     expected -> not applied; any other version -> unknown.
//   expected_version < 0: our data -> applied; otherwise not applied (the
//     caller re-sends against the version it read, never blindly).
WriteOutcome ResolveSet(int expected_version, std::string_view data, const ZkNode& node);

// create of a non-sequential node; `node` is the read-back, nullopt if absent.
//   ours -> applied; absent -> not applied; someone else's -> conflict.
WriteOutcome ResolveCreate(std::string_view data, ZkCreateMode mode, int64_t session,
                           const std::optional<ZkNode>& node);

// Sequential create: the children of the parent that can be our node (our
// prefix followed by a 10-digit sequence number), newest first, so the
// caller reads the likeliest one first.
std::vector<std::string> SequentialCreateCandidates(std::vector<std::string> children,
                                                    std::string_view prefix);

// delete(version); `stat` is the read-back, nullopt if absent.
//   absent -> applied; present at another version than a given one ->
//   unknown; otherwise not applied.
WriteOutcome ResolveDelete(int version, const std::optional<ZkStat>& stat);

// A multi applies all of its ops or none, so one write tells: the first op
// that is a versioned set or a non-sequential create. nullopt when there is
// none (see ResolveMultiWithoutProbe).
std::optional<size_t> MultiProbeIndex(const std::vector<ZkOp>& ops);
// The outcome when MultiProbeIndex found nothing: only checks -> not applied
// (nothing to re-apply); writes none of which can be read back -> unknown.
WriteOutcome ResolveMultiWithoutProbe(const std::vector<ZkOp>& ops);
// The probe op read back: a failed read (NotFound for a create excepted)
// and a conflict are unknown; otherwise as ResolveSet / ResolveCreate.
WriteOutcome ResolveMultiProbe(const ZkOp& probe, int64_t session,
                               const absl::StatusOr<ZkNode>& read_back);

}  // namespace tempest::coord

#endif  // TEMPEST_COMMON_COORD_AMBIGUOUS_WRITE_H_
