#include "study/sampler.h"

#include <fstream>
#include <string>

#include "gtest/gtest.h"
#include "tests/support/temp_dir.h"

namespace tempest::study {
namespace {

void Append(const std::string& path, const std::string& text) {
  std::ofstream out(path, std::ios::app | std::ios::binary);
  out << text;
}

TEST(SinkFollowerTest, CountsLinesAndDistinctRecordsAsTheLogGrows) {
  testing::TempDir dir("study-sampler");
  const std::string log = dir.File("sink.log");
  SinkFollower sink(log, 10);
  sink.Poll();  // no log yet
  EXPECT_EQ(sink.lines(), 0);

  Append(log, "1\n2\n2\n");
  sink.Poll();
  EXPECT_EQ(sink.lines(), 3);
  EXPECT_EQ(sink.distinct(), 2);

  // A line counts once it is complete; values outside 0..records-1 and
  // lines that are not a value count as lines only.
  Append(log, "3\n4");
  sink.Poll();
  EXPECT_EQ(sink.lines(), 4);
  EXPECT_EQ(sink.distinct(), 3);
  Append(log, "\n10\nx\n");
  sink.Poll();
  EXPECT_EQ(sink.lines(), 7);
  EXPECT_EQ(sink.distinct(), 4);
}

}  // namespace
}  // namespace tempest::study
