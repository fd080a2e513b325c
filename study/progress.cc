#include "study/progress.h"

#include <unistd.h>

#include <algorithm>


namespace tempest::study {

StudyProgress::StudyProgress(std::FILE* out) : out_(out), terminal_(::isatty(fileno(out)) != 0) {}

StudyProgress::~StudyProgress() {
  if (terminal_ && drawn_) std::fputc('\n', out_);
}

void StudyProgress::StartScenario(int index, int total, const std::string& scenario) {
  index_ = index;
  total_ = total;
  scenario_ = scenario;
  phase_.clear();
  note_.clear();
  fraction_ = 0;
}

void StudyProgress::Phase(const std::string& phase) {
  phase_ = phase;
  note_.clear();
  fraction_ = 0;
  if (terminal_) {
    Redraw();
  } else {
    std::fprintf(out_, "study [%d/%d] %s: %s\n", index_, total_, scenario_.c_str(), phase.c_str());
    std::fflush(out_);
  }
}

void StudyProgress::Update(double fraction, const std::string& note) {
  fraction_ = std::clamp(fraction, 0.0, 1.0);
  note_ = note;
  if (terminal_) Redraw();
}

void StudyProgress::Line(const std::string& text) {
  if (terminal_ && drawn_) std::fputs("\r\033[K", out_);
  std::fprintf(out_, "%s\n", text.c_str());
  drawn_ = false;
  if (terminal_) Redraw();
  std::fflush(out_);
}

void StudyProgress::Redraw() {
  constexpr int kWidth = 20;
  const int filled = static_cast<int>(fraction_ * kWidth + 0.5);
  std::string bar(static_cast<size_t>(filled), '#');
  bar.append(static_cast<size_t>(kWidth - filled), '.');
  std::fprintf(out_, "\r\033[K[%2d/%d] %-22s [%s] %s%s%s", index_, total_, scenario_.c_str(),
               bar.c_str(), phase_.c_str(), note_.empty() ? "" : ", ", note_.c_str());
  std::fflush(out_);
  drawn_ = true;
}

}  // namespace tempest::study
