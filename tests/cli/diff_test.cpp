// The unified diff behind --diff: exact output for the common shapes, and, on random inputs,
// that the diff reproduces the new text and is minimal.
#include "server/cli/diff.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <sstream>
#include <vector>

namespace preflight::server {
namespace {

std::string numbered_lines(int first, int last) {
  std::string out;
  for (int i = first; i <= last; ++i) out += "line " + std::to_string(i) + "\n";
  return out;
}

TEST(UnifiedDiff, EqualTextsGiveNothing) {
  EXPECT_EQ(unified_diff("a\nb\n", "a\nb\n", "a/x.py", "b/x.py"), "");
  EXPECT_EQ(unified_diff("", "", "a/x.py", "b/x.py"), "");
}

TEST(UnifiedDiff, OneChangedLineWithThreeLinesOfContext) {
  std::string old_text = numbered_lines(1, 10);
  std::string new_text = old_text;
  new_text.replace(new_text.find("line 5\n"), 7, "line 5.detach()\n");
  EXPECT_EQ(unified_diff(old_text, new_text, "a/train.py", "b/train.py"),
            "--- a/train.py\n"
            "+++ b/train.py\n"
            "@@ -2,7 +2,7 @@\n"
            " line 2\n line 3\n line 4\n"
            "-line 5\n"
            "+line 5.detach()\n"
            " line 6\n line 7\n line 8\n");
}

TEST(UnifiedDiff, DistantChangesGetSeparateHunksAndCloseOnesShareOne) {
  std::string old_text = numbered_lines(1, 20);
  std::string far = old_text, near = old_text;
  far.replace(far.find("line 2\n"), 7, "two\n");
  far.replace(far.find("line 19\n"), 8, "nineteen\n");
  std::string far_diff = unified_diff(old_text, far, "a/f", "b/f");
  EXPECT_NE(far_diff.find("@@ -1,5 +1,5 @@\n"), std::string::npos) << far_diff;
  EXPECT_NE(far_diff.find("@@ -16,5 +16,5 @@\n"), std::string::npos) << far_diff;

  // Six equal lines between two changes (2 x context) still make one hunk.
  near.replace(near.find("line 5\n"), 7, "five\n");
  near.replace(near.find("line 12\n"), 8, "twelve\n");
  std::string near_diff = unified_diff(old_text, near, "a/f", "b/f");
  EXPECT_NE(near_diff.find("@@ -2,14 +2,14 @@\n"), std::string::npos) << near_diff;
  EXPECT_EQ(std::count(near_diff.begin(), near_diff.end(), '@'), 4);  // one hunk header
}

TEST(UnifiedDiff, InsertionAtStartAndEmptyRanges) {
  EXPECT_EQ(unified_diff("a\n", "@torch.no_grad()\na\n", "a/x", "b/x"),
            "--- a/x\n+++ b/x\n@@ -1 +1,2 @@\n+@torch.no_grad()\n a\n");
  EXPECT_EQ(unified_diff("", "new\n", "a/x", "b/x"), "--- a/x\n+++ b/x\n@@ -0,0 +1 @@\n+new\n");
  EXPECT_EQ(unified_diff("old\n", "", "a/x", "b/x"), "--- a/x\n+++ b/x\n@@ -1 +0,0 @@\n-old\n");
}

TEST(UnifiedDiff, MarksAMissingFinalNewline) {
  EXPECT_EQ(unified_diff("x = loss", "x = loss.detach()", "a/t.py", "b/t.py"),
            "--- a/t.py\n+++ b/t.py\n@@ -1 +1 @@\n"
            "-x = loss\n\\ No newline at end of file\n"
            "+x = loss.detach()\n\\ No newline at end of file\n");
}

TEST(UnifiedDiff, KeepsCarriageReturnsInLines) {
  EXPECT_EQ(unified_diff("a\r\nb\r\n", "a\r\nc\r\n", "a/w", "b/w"),
            "--- a/w\n+++ b/w\n@@ -1,2 +1,2 @@\n a\r\n-b\r\n+c\r\n");
}

// --- Property check: applying the diff gives the new text, and it is minimal. ---

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) out.push_back(line);
  return out;
}

// Rebuilds the new text from the old one and the diff's hunks (inputs end in '\n').
std::string apply_diff(const std::string& old_text, const std::string& diff) {
  std::vector<std::string> old_lines = lines_of(old_text), out;
  std::vector<std::string> diff_lines = lines_of(diff);
  std::size_t next_old = 0;
  for (std::size_t i = 2; i < diff_lines.size(); ++i) {
    const std::string& l = diff_lines[i];
    if (l.starts_with("@@")) {
      std::size_t start = std::stoul(l.substr(4));
      std::size_t comma = l.find(',', 4), space = l.find(' ', 4);
      bool empty = comma < space && l.substr(comma + 1, space - comma - 1) == "0";
      std::size_t first = empty ? start : start - 1;
      while (next_old < first) out.push_back(old_lines[next_old++]);
    } else if (l[0] == ' ' || l[0] == '-') {
      EXPECT_EQ(l.substr(1), old_lines[next_old]);
      if (l[0] == ' ') out.push_back(old_lines[next_old]);
      ++next_old;
    } else if (l[0] == '+') {
      out.push_back(l.substr(1));
    }
  }
  while (next_old < old_lines.size()) out.push_back(old_lines[next_old++]);
  std::string text;
  for (const std::string& l : out) text += l + "\n";
  return text;
}

std::size_t lcs_length(const std::vector<std::string>& a, const std::vector<std::string>& b) {
  std::vector<std::vector<std::size_t>> t(a.size() + 1, std::vector<std::size_t>(b.size() + 1));
  for (std::size_t i = 1; i <= a.size(); ++i)
    for (std::size_t j = 1; j <= b.size(); ++j)
      t[i][j] = a[i - 1] == b[j - 1] ? t[i - 1][j - 1] + 1 : std::max(t[i - 1][j], t[i][j - 1]);
  return t[a.size()][b.size()];
}

std::string random_text(std::mt19937& rng, int max_lines) {
  std::uniform_int_distribution<int> count(0, max_lines), letter(0, 3);
  std::string text;
  for (int i = count(rng); i > 0; --i) {
    text += static_cast<char>('a' + letter(rng));
    text += '\n';
  }
  return text;
}

TEST(UnifiedDiff, HugeRewritesFallBackToOneReplacementHunk) {
  std::string a, b;
  for (int i = 0; i < 3000; ++i) {
    a += "old " + std::to_string(i) + "\n";
    b += "new " + std::to_string(i) + "\n";
  }
  std::string keep = "same\n";
  std::string diff = unified_diff(keep + a + keep, keep + b + keep, "a/big", "b/big");
  EXPECT_TRUE(diff.starts_with("--- a/big\n+++ b/big\n@@ -1,3002 +1,3002 @@\n same\n-old 0\n"));
  EXPECT_EQ(apply_diff(keep + a + keep, diff), keep + b + keep);
}

TEST(UnifiedDiff, RandomDiffsApplyAndAreMinimal) {
  std::mt19937 rng(20240601);
  for (int round = 0; round < 400; ++round) {
    std::string a = random_text(rng, 30), b = random_text(rng, 30);
    std::string diff = unified_diff(a, b, "a/r", "b/r", round % 4);
    if (a == b) {
      EXPECT_EQ(diff, "");
      continue;
    }
    EXPECT_EQ(apply_diff(a, diff), b) << "a:\n" << a << "b:\n" << b << "diff:\n" << diff;
    std::size_t changes = 0;
    for (const std::string& l : lines_of(diff))
      changes += (l[0] == '+' || l[0] == '-') && !l.starts_with("+++") && !l.starts_with("---");
    std::vector<std::string> la = lines_of(a), lb = lines_of(b);
    EXPECT_EQ(changes, la.size() + lb.size() - 2 * lcs_length(la, lb));
  }
}

}  // namespace
}  // namespace preflight::server
