#include "common/core/log_text.h"

#include <string>

#include "gtest/gtest.h"

namespace tempest::core {
namespace {

TEST(LogTextTest, ControlCharactersAreEscapedSoOneMessageStaysOneLine) {
  EXPECT_EQ(EscapeLogText("a\nb\r\tc"), "a\\nb\\r\\tc");
  EXPECT_EQ(EscapeLogText("\x1b[2Jcleared"), "\\x1b[2Jcleared");
  EXPECT_EQ(EscapeLogText(std::string("nul\0here", 8)), "nul\\x00here");
  EXPECT_EQ(EscapeLogText("del\x7f"), "del\\x7f");
  // A forged line: it cannot start a line of its own.
  const std::string forged = EscapeLogText("done\n[2026-01-01 00:00:00.000] [info] id > x #");
  EXPECT_EQ(forged.find('\n'), std::string::npos);
  EXPECT_EQ(forged, "done\\n[2026-01-01 00:00:00.000] [info] id > x #");
}

TEST(LogTextTest, UnicodeIsKeptButItsControlsAndBadBytesAreNot) {
  EXPECT_EQ(EscapeLogText("grüße, 東京, 🎉"), "grüße, 東京, 🎉");
  EXPECT_FALSE(LogTextNeedsEscaping("grüße, 東京, 🎉 and a \\ backslash"));
  EXPECT_EQ(EscapeLogText("\xc2\x9b" "31m"), "\\u009b31m");       // C1 CSI
  EXPECT_EQ(EscapeLogText("a\xe2\x80\xa8" "b"), "a\\u2028b");      // line separator
  EXPECT_EQ(EscapeLogText("\x9b" "31m"), "\\x9b31m");              // a lone byte
  EXPECT_EQ(EscapeLogText("\xc0\xaf"), "\\xc0\\xaf");              // overlong '/'
  EXPECT_EQ(EscapeLogText("\xed\xa0\x80"), "\\xed\\xa0\\x80");     // a surrogate
  EXPECT_EQ(EscapeLogText("cut \xe6\x9d"), "cut \\xe6\\x9d");      // truncated
}

TEST(LogTextTest, PlainTextIsUntouched) {
  EXPECT_FALSE(LogTextNeedsEscaping("worker of t-1 on port 6700 (pid 12)"));
  EXPECT_TRUE(LogTextNeedsEscaping("two\nlines"));
  EXPECT_EQ(EscapeLogText(""), "");
}

TEST(CountedTest, OneIsSingularEverythingElsePlural) {
  EXPECT_EQ(Counted(1, "slot"), "1 slot");
  EXPECT_EQ(Counted(0, "slot"), "0 slots");
  EXPECT_EQ(Counted(4, "free slot"), "4 free slots");
  EXPECT_EQ(Counted(1, "topology", "topologies"), "1 topology");
  EXPECT_EQ(Counted(2, "topology", "topologies"), "2 topologies");
  EXPECT_EQ(Counted(-1, "task"), "-1 task");
  EXPECT_EQ(Counted(1234567890123, "record"), "1234567890123 records");
}

}  // namespace
}  // namespace tempest::core
