#ifndef TEMPEST_STUDY_PROGRESS_H_
#define TEMPEST_STUDY_PROGRESS_H_

#include <cstdio>
#include <string>

namespace tempest::study {

// Shows where a study is. On a terminal it redraws one line with a bar
// ("[ 3/12] zk-leader-kill  [#####.....]  producing, fault injected");
// elsewhere (CI logs, files) it prints one line per phase and nothing else.
// Not thread-safe: the runner's thread calls it.
class StudyProgress {
 public:
  explicit StudyProgress(std::FILE* out);
  ~StudyProgress();

  void StartScenario(int index, int total, const std::string& scenario);
  // A new phase of the current scenario ("submitting", "producing", ...).
  void Phase(const std::string& phase);
  // Progress within the phase, 0..1, with a short note; only drawn on a
  // terminal.
  void Update(double fraction, const std::string& note);
  // A line that stays (a scenario's outcome, a warning).
  void Line(const std::string& text);

 private:
  void Redraw();

  std::FILE* out_;
  bool terminal_;
  int index_ = 0;
  int total_ = 0;
  std::string scenario_;
  std::string phase_;
  std::string note_;
  double fraction_ = 0;
  bool drawn_ = false;
};

}  // namespace tempest::study

#endif  // TEMPEST_STUDY_PROGRESS_H_
