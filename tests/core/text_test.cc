#include "core/text.h"

#include <gtest/gtest.h>

namespace opscope::core {
namespace {

std::string Json(std::string_view s) {
  std::string out;
  AppendJsonString(out, s);
  return out;
}

TEST(JsonString, EscapesQuotesBackslashesAndControls) {
  EXPECT_EQ(Json("plain"), "\"plain\"");
  EXPECT_EQ(Json("a\"b\\c"), "\"a\\\"b\\\\c\"");
  EXPECT_EQ(Json("line\nnext\ttab\r"), "\"line\\nnext\\ttab\\r\"");
  EXPECT_EQ(Json(std::string_view("\x01\x1f\0", 3)), "\"\\u0001\\u001f\\u0000\"");
}

TEST(JsonString, EscapesHtmlSignificantCharacters) {
  EXPECT_EQ(Json("</script><img src=x onerror=alert(1)>&"),
            "\"\\u003c/script\\u003e\\u003cimg src=x onerror=alert(1)\\u003e\\u0026\"");
  EXPECT_EQ(Json("\xE2\x80\xA8\xE2\x80\xA9"), "\"\\u2028\\u2029\"");
}

TEST(JsonString, KeepsValidUtf8AndReplacesInvalidBytes) {
  EXPECT_EQ(Json("h\xC3\xA9llo \xE4\xB8\xAD \xF0\x9F\x98\x80"),
            "\"h\xC3\xA9llo \xE4\xB8\xAD \xF0\x9F\x98\x80\"");
  EXPECT_EQ(Json("a\xFF"
                 "b"),
            "\"a\\ufffdb\"");
  EXPECT_EQ(Json("\xC3"), "\"\\ufffd\"");                                   // truncated sequence
  EXPECT_EQ(Json("\xC0\xAF"), "\"\\ufffd\\ufffd\"");                        // overlong '/'
  EXPECT_EQ(Json("\xED\xA0\x80"), "\"\\ufffd\\ufffd\\ufffd\"");             // surrogate
  EXPECT_EQ(Json("\xF4\x90\x80\x80"), "\"\\ufffd\\ufffd\\ufffd\\ufffd\"");  // > U+10FFFF
}

TEST(Numbers, MicrosecondsKeepNanoseconds) {
  std::string out;
  AppendMicros(out, 1234567);
  EXPECT_EQ(out, "1234.567");
  out.clear();
  AppendMicros(out, 5);
  EXPECT_EQ(out, "0.005");
  out.clear();
  AppendMicros(out, -1500);
  EXPECT_EQ(out, "-1.500");
}

TEST(Numbers, NonFiniteDoublesBecomeNull) {
  std::string out;
  AppendJsonNumber(out, 1.0 / 0.0);
  EXPECT_EQ(out, "null");
  out.clear();
  AppendJsonNumber(out, 0.1);
  EXPECT_EQ(out, "0.1");
}

TEST(Terminal, ControlSequencesAreShownNotObeyed) {
  EXPECT_EQ(EscapeForTerminal("red\x1b[31m"), "red\\x1b[31m");
  EXPECT_EQ(EscapeForTerminal("a\nb"), "a\\nb");
  EXPECT_EQ(EscapeForTerminal("\xC2\x9B"
                              "2J"),
            "\\u009b2J");  // C1 CSI
  EXPECT_EQ(EscapeForTerminal("ok \xFF"), "ok \xEF\xBF\xBD");
}

TEST(Csv, QuotesAndDefusesFormulas) {
  EXPECT_EQ(EscapeCsvField("plain"), "plain");
  EXPECT_EQ(EscapeCsvField("a,b"), "\"a,b\"");
  EXPECT_EQ(EscapeCsvField("say \"hi\""), "\"say \"\"hi\"\"\"");
  EXPECT_EQ(EscapeCsvField("=HYPERLINK(\"x\")"), "\"'=HYPERLINK(\"\"x\"\")\"");
  EXPECT_EQ(EscapeCsvField("@SUM(A1)"), "'@SUM(A1)");
  EXPECT_EQ(EscapeCsvField("red\x1b[31m"), "red\\x1b[31m");
}

TEST(Html, EscapesMarkup) {
  EXPECT_EQ(EscapeHtml("<img src=x onerror=alert(1)>"), "&lt;img src=x onerror=alert(1)&gt;");
  EXPECT_EQ(EscapeHtml("a&'\""), "a&amp;&#39;&quot;");
  // Control bytes would be raw in HTML: shown as control pictures instead.
  EXPECT_EQ(EscapeHtml(std::string("a\0b\x1b[31m\x07\x7f\tc", 12)),
            "a&#x2400;b&#x241B;[31m&#x2407;&#x2421;\tc");
}

// Cut on whole UTF-8 characters: "é" is two bytes, never split.
TEST(CutUtf8, KeepsShortTextAndCutsOnWholeCharacters) {
  EXPECT_EQ(CutUtf8("abc", 3), "abc");
  EXPECT_EQ(CutUtf8("abcd", 3), "abc…");
  EXPECT_EQ(CutUtf8("ab\xc3\xa9z", 3), "ab…");  // byte 3 is inside "é"
  EXPECT_EQ(CutUtf8("ab\xc3\xa9z", 4), "ab\xc3\xa9…");
}

}  // namespace
}  // namespace opscope::core
