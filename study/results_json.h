#ifndef TEMPEST_STUDY_RESULTS_JSON_H_
#define TEMPEST_STUDY_RESULTS_JSON_H_

#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "study/study_results.h"

namespace tempest::study {

// The study's results as pretty-printed (2-space) JSON, the format of
// results.json:
//   {"seed":N,"records":N,"rate":X,"started_at":"..","duration_s":X,"runs":[run,...]}
// where each run is an object with every field of RunResult under its own
// name (absent optionals are null, `dedup_sink` is {"lost","duplicated",
// "deduplicated","expected_loss"} or null, `not_tested` is true or false
// with `not_tested_reason` beside it) and `samples` is a list of compact arrays
// [t_s, sink_received, committed, log_end]. A non-finite double is written
// as null. Pure; any thread.
std::string ResultsToJson(const StudyResults& results);

// The inverse of ResultsToJson. InvalidArgument naming the field ("runs[2]
// (worker-kill, at-least-once): \"lost\" is missing") when `text` is not
// JSON, a required field is missing or has the wrong type. Optional fields
// (fault_*_s, recovery_s, dedup_sink) may be null or absent; unknown fields
// are ignored so newer files stay readable. Results written before runs were
// marked not tested have no `not_tested`: it is then derived from the run's
// figures (NotTestedReason), so an old vacuous run does not pass either. A null plain double reads
// as NaN (that is how ResultsToJson writes one). Pure; any thread.
absl::StatusOr<StudyResults> ResultsFromJson(std::string_view text);

}  // namespace tempest::study

#endif  // TEMPEST_STUDY_RESULTS_JSON_H_
