#include "analysis/suppressions.h"

#include <gtest/gtest.h>

#include <set>
#include <string>

#include "rules/engine.h"

namespace preflight::analysis {
namespace {

using Codes = std::set<std::string>;

// --- parse_comment --------------------------------------------------------------------

TEST(SuppressionsTest, BareNoqaSuppressesAll) {
  CommentDirective d = parse_comment("# noqa");
  EXPECT_TRUE(d.suppression);
  EXPECT_TRUE(d.all);
  EXPECT_FALSE(d.skip_file);
}

TEST(SuppressionsTest, NoqaWithOneCode) {
  CommentDirective d = parse_comment("# noqa: TG001");
  EXPECT_TRUE(d.suppression);
  EXPECT_FALSE(d.all);
  EXPECT_EQ(d.codes, (Codes{"TG001"}));
}

TEST(SuppressionsTest, NoqaIsCaseInsensitiveAndNeedsNoSpace) {
  CommentDirective d = parse_comment("# NOQA:tg001");
  EXPECT_TRUE(d.suppression);
  EXPECT_FALSE(d.all);
  EXPECT_EQ(d.codes, (Codes{"TG001"}));
}

TEST(SuppressionsTest, NoqaWithSeveralCodes) {
  CommentDirective d = parse_comment("# noqa: TG001, TG013");
  EXPECT_TRUE(d.suppression);
  EXPECT_FALSE(d.all);
  EXPECT_EQ(d.codes, (Codes{"TG001", "TG013"}));
}

TEST(SuppressionsTest, NoqaWithWhitespaceSeparatedCodes) {
  // flake8 and ruff accept codes separated by whitespace as well as by commas.
  CommentDirective d = parse_comment("# noqa: TG001 TG003");
  EXPECT_TRUE(d.suppression);
  EXPECT_FALSE(d.all);
  EXPECT_EQ(d.codes, (Codes{"TG001", "TG003"}));
}

TEST(SuppressionsTest, NoqaWithoutSpaceAfterHash) {
  CommentDirective d = parse_comment("#noqa");
  EXPECT_TRUE(d.suppression);
  EXPECT_TRUE(d.all);
}

TEST(SuppressionsTest, NoqaWithoutColonIsBlanket) {
  CommentDirective d = parse_comment("# noqa TG003");
  EXPECT_TRUE(d.suppression);
  EXPECT_TRUE(d.all);
}

TEST(SuppressionsTest, NoqaOfAForeignCodeSuppressesOnlyThatCode) {
  CommentDirective d = parse_comment("# noqa: E501");
  EXPECT_TRUE(d.suppression);
  EXPECT_FALSE(d.all);
  EXPECT_EQ(d.codes, (Codes{"E501"}));
}

TEST(SuppressionsTest, PreflightIgnoreWithBracketList) {
  CommentDirective d = parse_comment("# preflight: ignore[TG001,TG007]");
  EXPECT_TRUE(d.suppression);
  EXPECT_FALSE(d.all);
  EXPECT_EQ(d.codes, (Codes{"TG001", "TG007"}));
}

TEST(SuppressionsTest, TorchPreflightIgnoreUppercasesCodes) {
  CommentDirective d = parse_comment("# torch-preflight: ignore[tg001]");
  EXPECT_TRUE(d.suppression);
  EXPECT_FALSE(d.all);
  EXPECT_EQ(d.codes, (Codes{"TG001"}));
}

TEST(SuppressionsTest, PreflightIgnoreWithoutListIsBlanket) {
  CommentDirective d = parse_comment("# preflight: ignore");
  EXPECT_TRUE(d.suppression);
  EXPECT_TRUE(d.all);
}

TEST(SuppressionsTest, NoqaAfterAnotherToolsComment) {
  CommentDirective d = parse_comment("# type: ignore  # noqa: TG001");
  EXPECT_TRUE(d.suppression);
  EXPECT_FALSE(d.all);
  EXPECT_EQ(d.codes, (Codes{"TG001"}));
}

TEST(SuppressionsTest, NoqaWithTrailingReason) {
  CommentDirective d = parse_comment("# noqa:TG001 -- reason");
  EXPECT_TRUE(d.suppression);
  EXPECT_FALSE(d.all);
  EXPECT_EQ(d.codes, (Codes{"TG001"}));
}

TEST(SuppressionsTest, SkipFileSpellings) {
  for (const char* c : {"# preflight: skip-file", "# torch-preflight: skip_file",
                        "# Preflight: Skip-File", "#preflight:skip-file"}) {
    CommentDirective d = parse_comment(c);
    EXPECT_TRUE(d.skip_file) << c;
    EXPECT_FALSE(d.suppression) << c;
  }
}

TEST(SuppressionsTest, WordsThatMerelyStartWithNoqaAreNotSuppressions) {
  for (const char* c : {"# noqa-ish", "# noqaTG001", "# noqa_x", "# not noqa here"}) {
    CommentDirective d = parse_comment(c);
    EXPECT_FALSE(d.suppression) << c;
    EXPECT_FALSE(d.all) << c;
    EXPECT_TRUE(d.codes.empty()) << c;
  }
}

TEST(SuppressionsTest, OrdinaryCommentsAreNothing) {
  for (const char* c : {"# just a comment", "# preflight is great", "# preflight: frobnicate",
                        "#", "# type: ignore"}) {
    CommentDirective d = parse_comment(c);
    EXPECT_FALSE(d.suppression) << c;
    EXPECT_FALSE(d.skip_file) << c;
  }
}

// --- scan_suppressions and Suppressions::suppresses -------------------------------------

Finding finding_at(std::string code, uint32_t begin, uint32_t end) {
  Finding f;
  f.code = std::move(code);
  f.range = {begin, end};
  return f;
}

TEST(SuppressionsTest, ScanFindsCommentsOnTheirLines) {
  std::string src =
      "a = 1  # noqa: TG001\n"
      "b = 2\n"
      "c = (3,  # preflight: ignore\n"
      "     4)\n";
  SyntaxTree t = SyntaxTree::parse(src);
  LineIndex lines(src);
  Suppressions s = scan_suppressions(t.root(), src, lines);
  EXPECT_FALSE(s.skip_file);
  ASSERT_EQ(s.by_line.size(), 2u);
  ASSERT_TRUE(s.by_line.count(0));
  EXPECT_EQ(s.by_line.at(0).codes, (Codes{"TG001"}));
  EXPECT_EQ(src.substr(s.by_line.at(0).comment.begin,
                       s.by_line.at(0).comment.end - s.by_line.at(0).comment.begin),
            "# noqa: TG001");
  ASSERT_TRUE(s.by_line.count(2));
  EXPECT_TRUE(s.by_line.at(2).all);

  uint32_t a = static_cast<uint32_t>(src.find("a = 1"));
  EXPECT_TRUE(s.suppresses(finding_at("TG001", a, a + 5), lines));
  EXPECT_FALSE(s.suppresses(finding_at("TG003", a, a + 5), lines));
  uint32_t b = static_cast<uint32_t>(src.find("b = 2"));
  EXPECT_FALSE(s.suppresses(finding_at("TG001", b, b + 5), lines));
  // A finding spanning lines 2-3 is suppressed by the comment on its first line.
  uint32_t c = static_cast<uint32_t>(src.find("(3,"));
  uint32_t c_end = static_cast<uint32_t>(src.find("4)") + 2);
  EXPECT_TRUE(s.suppresses(finding_at("TG002", c, c_end), lines));
}

TEST(SuppressionsTest, ScanSeesSkipFileOnlyInComments) {
  std::string in_comment = "x = 1\n# preflight: skip-file\n";
  SyntaxTree t1 = SyntaxTree::parse(in_comment);
  LineIndex l1(in_comment);
  EXPECT_TRUE(scan_suppressions(t1.root(), in_comment, l1).skip_file);

  std::string in_string = "x = '# preflight: skip-file'\n";
  SyntaxTree t2 = SyntaxTree::parse(in_string);
  LineIndex l2(in_string);
  EXPECT_FALSE(scan_suppressions(t2.root(), in_string, l2).skip_file);
}

TEST(SuppressionsTest, ScanIgnoresNoqaInsideStringLiterals) {
  std::string src = "s = '# noqa'\nt = \"\"\"\n# noqa\n\"\"\"\n";
  SyntaxTree t = SyntaxTree::parse(src);
  LineIndex lines(src);
  EXPECT_TRUE(scan_suppressions(t.root(), src, lines).by_line.empty());
}

// --- through check_source ----------------------------------------------------------------

const std::string kFit =
    "def fit(net, loader, loss_fn, optimizer):\n"
    "    for xb, yb in loader:\n"
    "        loss_fn(net(xb), yb).backward()\n"
    "        optimizer.step()\n";

size_t count_code(const rules::CheckResult& r, std::string_view code) {
  size_t n = 0;
  for (const Finding& f : r.findings) n += f.code == code;
  return n;
}

// The baseline: the snippet has a TG003 finding to suppress.
TEST(SuppressionsTest, FitSnippetReportsTg003) {
  rules::CheckResult r = rules::check_source(kFit, {});
  EXPECT_EQ(count_code(r, "TG003"), 1u);
}

// The snippet with `suffix` appended to both statements of its loop body (the TG003 anchor
// is the `.backward()` call).
std::string with_suffix_on_body_statements(std::string_view suffix) {
  return "def fit(net, loader, loss_fn, optimizer):\n"
         "    for xb, yb in loader:\n"
         "        loss_fn(net(xb), yb).backward()" + std::string(suffix) + "\n"
         "        optimizer.step()" + std::string(suffix) + "\n";
}

TEST(SuppressionsTest, NoqaCommentSuppressesTg003) {
  EXPECT_EQ(count_code(rules::check_source(with_suffix_on_body_statements("  # noqa"), {}), "TG003"), 0u);
  EXPECT_EQ(count_code(rules::check_source(with_suffix_on_body_statements("  # noqa: TG003"), {}), "TG003"), 0u);
}

TEST(SuppressionsTest, NoqaInsideAStringLiteralDoesNotSuppress) {
  std::string src = with_suffix_on_body_statements("; note = '# noqa'");
  rules::CheckResult r = rules::check_source(src, {});
  EXPECT_EQ(count_code(r, "TG003"), 1u) << src;
}

TEST(SuppressionsTest, NoqaInsideAnFStringOrDocstringDoesNotSuppress) {
  std::string src =
      "def fit(net, loader, loss_fn, optimizer):\n"
      "    \"\"\"Trains. # noqa\"\"\"\n"
      "    for xb, yb in loader:  # a plain comment\n"
      "        loss_fn(net(xb), yb).backward(); tag = f\"# noqa {xb}\"\n"
      "        optimizer.step(); tag = f\"# noqa: TG003\"\n";
  EXPECT_EQ(count_code(rules::check_source(src, {}), "TG003"), 1u) << src;
}

TEST(SuppressionsTest, NoqaForOtherCodesDoesNotSuppressTg003) {
  for (const char* suffix : {"  # noqa: TG001", "  # noqa: E501", "  # preflight: ignore[TG002]"}) {
    std::string src = with_suffix_on_body_statements(suffix);
    EXPECT_EQ(count_code(rules::check_source(src, {}), "TG003"), 1u) << src;
  }
}

TEST(SuppressionsTest, SkipFileInsideAStringDoesNotSkip) {
  std::string src = "MARK = '# preflight: skip-file'\n" + kFit;
  rules::CheckResult r = rules::check_source(src, {});
  EXPECT_EQ(r.status, rules::FileStatus::Analyzed);
  EXPECT_EQ(count_code(r, "TG003"), 1u);
}

}  // namespace
}  // namespace preflight::analysis
