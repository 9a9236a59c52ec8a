#include "rules/fix_builder.h"

#include <gtest/gtest.h>

#include <string>

#include "tests/analysis/test_support.h"

namespace preflight::rules {
namespace {

using analysis::SyntaxTree;
using analysis::TextEdit;
using analysis::testing::node_spanning;

std::string applied(std::string_view src, const TextEdit& e) {
  std::string out(src.substr(0, e.range.begin));
  out += e.replacement;
  out += src.substr(e.range.end);
  return out;
}

// The expression `expr` at its first occurrence in `src`.
TSNode find(const SyntaxTree& t, std::string_view src, std::string_view expr) {
  size_t at = src.find(expr);
  EXPECT_NE(at, std::string_view::npos) << expr;
  TSNode n = node_spanning(t.root(), src, static_cast<uint32_t>(at), expr);
  EXPECT_FALSE(ts_node_is_null(n)) << expr;
  return n;
}

struct AppendCase {
  std::string src;
  std::string expr;
  std::string expected;
};

TEST(FixBuilderTest, AppendMethodToAPrimaryExpressionInsertsOnly) {
  for (const AppendCase& c : std::vector<AppendCase>{
           {"h.append(loss)\n", "loss", "h.append(loss.detach())\n"},
           {"h.append(self.loss)\n", "self.loss", "h.append(self.loss.detach())\n"},
           {"h.append(model(x))\n", "model(x)", "h.append(model(x).detach())\n"},
           {"h.append(out[0])\n", "out[0]", "h.append(out[0].detach())\n"},
           {"h.append((a + b))\n", "(a + b)", "h.append((a + b).detach())\n"}}) {
    SyntaxTree t = SyntaxTree::parse(c.src);
    TSNode e = find(t, c.src, c.expr);
    TextEdit edit = append_method(e, ".detach()", c.src);
    EXPECT_EQ(edit.range.begin, edit.range.end) << c.src;  // a pure insertion
    EXPECT_EQ(applied(c.src, edit), c.expected);
  }
}

TEST(FixBuilderTest, AppendMethodParenthesisesOtherExpressions) {
  for (const AppendCase& c : std::vector<AppendCase>{
           {"h.append(loss * 2)\n", "loss * 2", "h.append((loss * 2).detach())\n"},
           {"h.append(-loss)\n", "-loss", "h.append((-loss).detach())\n"},
           {"h.append(a if c else b)\n", "a if c else b", "h.append((a if c else b).detach())\n"},
           {"h.append(await f())\n", "await f()", "h.append((await f()).detach())\n"}}) {
    SyntaxTree t = SyntaxTree::parse(c.src);
    TSNode e = find(t, c.src, c.expr);
    EXPECT_FALSE(is_primary_expression(e)) << c.expr;
    EXPECT_EQ(applied(c.src, append_method(e, ".detach()", c.src)), c.expected);
  }
}

TEST(FixBuilderTest, PrimaryExpressionClassification) {
  std::string src = "f(a, a.b, a(), a[0], (a), [a], {1: a}, a + 1, not a, 'x')\n";
  SyntaxTree t = SyntaxTree::parse(src);
  EXPECT_TRUE(is_primary_expression(find(t, src, "a.b")));
  EXPECT_TRUE(is_primary_expression(find(t, src, "a()")));
  EXPECT_TRUE(is_primary_expression(find(t, src, "a[0]")));
  EXPECT_TRUE(is_primary_expression(find(t, src, "(a)")));
  EXPECT_TRUE(is_primary_expression(find(t, src, "[a]")));
  EXPECT_TRUE(is_primary_expression(find(t, src, "{1: a}")));
  EXPECT_FALSE(is_primary_expression(find(t, src, "a + 1")));
  EXPECT_FALSE(is_primary_expression(find(t, src, "not a")));
}

TEST(FixBuilderTest, InsertLineBeforeKeepsIndentation) {
  std::string src =
      "def f(opt):\n"
      "    for x in y:\n"
      "        loss.backward()\n"
      "        opt.step()\n";
  uint32_t at = static_cast<uint32_t>(src.find("loss.backward"));
  TextEdit e = insert_line_before(at, "opt.zero_grad()", src);
  EXPECT_EQ(e.range.begin, e.range.end);
  EXPECT_EQ(applied(src, e),
            "def f(opt):\n"
            "    for x in y:\n"
            "        opt.zero_grad()\n"
            "        loss.backward()\n"
            "        opt.step()\n");
}

TEST(FixBuilderTest, InsertLineBeforeFromTheMiddleOfALine) {
  std::string src = "if a:\n\tx = g(loss)\n";
  uint32_t at = static_cast<uint32_t>(src.find("loss"));
  EXPECT_EQ(applied(src, insert_line_before(at, "pass", src)), "if a:\n\tpass\n\tx = g(loss)\n");
}

TEST(FixBuilderTest, InsertLineBeforeTheFirstLine) {
  std::string src = "x = 1\n";
  EXPECT_EQ(applied(src, insert_line_before(0, "import torch", src)), "import torch\nx = 1\n");
  EXPECT_EQ(applied(src, insert_line_before(3, "import torch", src)), "import torch\nx = 1\n");
}

TEST(FixBuilderTest, InsertLineBeforeKeepsCrLfLineEndings) {
  std::string src =
      "def f(opt):\r\n"
      "    loss.backward()\r\n"
      "    opt.step()\r\n";
  uint32_t at = static_cast<uint32_t>(src.find("loss.backward"));
  EXPECT_EQ(applied(src, insert_line_before(at, "opt.zero_grad()", src)),
            "def f(opt):\r\n"
            "    opt.zero_grad()\r\n"
            "    loss.backward()\r\n"
            "    opt.step()\r\n");
}

TEST(FixBuilderTest, InsertLineBeforeKeepsLoneCrLineEndings) {
  std::string src =
      "def f(opt):\r"
      "    loss.backward()\r"
      "    opt.step()\r";
  uint32_t at = static_cast<uint32_t>(src.find("loss.backward"));
  EXPECT_EQ(applied(src, insert_line_before(at, "opt.zero_grad()", src)),
            "def f(opt):\r"
            "    opt.zero_grad()\r"
            "    loss.backward()\r"
            "    opt.step()\r");
}

TEST(FixBuilderTest, UnwrapCallKeepsTheFirstPositionalArgument) {
  std::string src = "p = F.softmax(x, dim=1)\n";
  SyntaxTree t = SyntaxTree::parse(src);
  auto e = unwrap_call(find(t, src, "F.softmax(x, dim=1)"), src);
  ASSERT_TRUE(e.has_value());
  EXPECT_EQ(applied(src, *e), "p = x\n");
}

TEST(FixBuilderTest, UnwrapCallParenthesisesANonPrimaryArgument) {
  std::string src = "p = F.softmax(a + b, dim=1).sum()\n";
  SyntaxTree t = SyntaxTree::parse(src);
  auto e = unwrap_call(find(t, src, "F.softmax(a + b, dim=1)"), src);
  ASSERT_TRUE(e.has_value());
  EXPECT_EQ(applied(src, *e), "p = (a + b).sum()\n");
}

TEST(FixBuilderTest, UnwrapCallSkipsKeywordArguments) {
  std::string src = "p = F.softmax(dim=1, input=x)\n";
  SyntaxTree t = SyntaxTree::parse(src);
  EXPECT_FALSE(unwrap_call(find(t, src, "F.softmax(dim=1, input=x)"), src).has_value());
}

TEST(FixBuilderTest, UnwrapCallWithoutArgumentsIsNullopt) {
  std::string src = "p = f()\nq = g(*xs)\n";
  SyntaxTree t = SyntaxTree::parse(src);
  EXPECT_FALSE(unwrap_call(find(t, src, "f()"), src).has_value());
  EXPECT_FALSE(unwrap_call(find(t, src, "g(*xs)"), src).has_value());
}

}  // namespace
}  // namespace preflight::rules
