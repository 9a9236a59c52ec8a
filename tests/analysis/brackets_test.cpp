// Brackets no continuation can balance (analysis/brackets.h): the language server keeps the
// last good findings on this scan's word without parsing, so a "sure" answer on a text that
// could still parse would hide a check; the scan answers only when it is sure.
#include "analysis/brackets.h"

#include <gtest/gtest.h>

#include <string>

namespace preflight::analysis {
namespace {

std::optional<uint32_t> scan(const std::string& text) { return unbalanced_bracket(text, 0, text.size()); }

TEST(Brackets, AnOpenerLeftOpenIsReportedAtTheInnermostOne) {
  std::string text = "grad = sum(p.grad.norm() for p in model.parameters(\n";
  ASSERT_TRUE(scan(text).has_value());
  EXPECT_EQ(*scan(text), text.rfind('('));
}

TEST(Brackets, AStrayOrWrongCloserIsReportedWhereItIs) {
  EXPECT_EQ(scan("x = f(a))\n"), 8u);
  EXPECT_EQ(scan("x = [a, b)\n"), 9u);
}

TEST(Brackets, BalancedTextIsNotReported) {
  EXPECT_FALSE(scan("x = {k: [v for v in f(a)] for k in d}\n").has_value());
  EXPECT_FALSE(scan("").has_value());
}

TEST(Brackets, BracketsInStringsAndCommentsDoNotCount) {
  EXPECT_FALSE(scan("x = '(' + \"[\"  # ) {\n").has_value());
  EXPECT_FALSE(scan("doc = \"\"\"a ( b\n[ c\"\"\"\n").has_value());
  EXPECT_FALSE(scan("x = 'it\\'s ('\n").has_value());
  EXPECT_FALSE(scan("x = r'\\' ('\n").has_value());  // a raw string's \' does not end it either
  EXPECT_FALSE(scan("x = b'\\x00' + u'\\N{BULLET}'\n").has_value());
}

TEST(Brackets, UnsureScansAnswerNothing) {
  EXPECT_FALSE(scan("x = f(\"abc\n").has_value());            // a string left open on its line
  EXPECT_FALSE(scan("x = f('''abc (\n").has_value());         // the end inside a string
  EXPECT_FALSE(scan("x = f(f\"{a['k']}\"\n").has_value());    // an f-string with a brace
  EXPECT_FALSE(scan("x = (1,  # a comment to the end").has_value());  // a comment may run on
  EXPECT_TRUE(scan("x = (f\"plain\"\n").has_value());         // an f-string without a brace is lexed
}

TEST(Brackets, OnlyThePartAskedForIsScanned) {
  std::string text = "a = (1,\n     2)\nb = f(\n";
  EXPECT_FALSE(unbalanced_bracket(text, 0, 15).has_value());
  EXPECT_EQ(unbalanced_bracket(text, 15, text.size()), text.rfind('('));
  EXPECT_FALSE(unbalanced_bracket(text, 10, 5).has_value());
}

}  // namespace
}  // namespace preflight::analysis
