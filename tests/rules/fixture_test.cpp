// One test per fixture file under tests/fixtures/ (see fixture_runner.h for the format), plus
// a floor on how many positive and negative fixtures each rule folder holds.
#include <gtest/gtest.h>

#include <filesystem>
#include <string>
#include <vector>

#include "fixture_runner.h"
#include "rules/registry.h"

namespace preflight::tests {
namespace {

const std::filesystem::path kFixtureRoot{PF_TEST_FIXTURES};

class RuleFixture : public ::testing::TestWithParam<std::string> {};

TEST_P(RuleFixture, MatchesExpectations) {
  std::string report = run_fixture(kFixtureRoot / GetParam());
  EXPECT_TRUE(report.empty()) << "fixture " << GetParam() << ":\n" << report;
}

std::string fixture_test_name(const ::testing::TestParamInfo<std::string>& param_info) {
  return test_name_for(param_info.param);
}

INSTANTIATE_TEST_SUITE_P(Fixtures, RuleFixture, ::testing::ValuesIn(list_fixtures(kFixtureRoot)),
                         fixture_test_name);
GTEST_ALLOW_UNINSTANTIATED_PARAMETERIZED_TEST(RuleFixture);

struct FolderCounts {
  int positive = 0;
  int negative = 0;
};

// A fixture is positive for `code` when it expects at least one finding of that code.
FolderCounts count_folder(const std::string& folder, const std::string& code) {
  FolderCounts counts;
  for (const std::string& relative : list_fixtures(kFixtureRoot / folder)) {
    auto text = read_text(kFixtureRoot / folder / relative);
    if (!text) continue;
    FixtureSpec spec = parse_fixture(*text);
    bool positive = false;
    for (const ExpectedFinding& e : spec.expected) positive = positive || e.code == code;
    ++(positive ? counts.positive : counts.negative);
  }
  return counts;
}

TEST(FixtureSet, FindsFixtures) { EXPECT_FALSE(list_fixtures(kFixtureRoot).empty()); }

// Every registered rule has its own folder (`tg001` for TG001) with at least 8 of each.
TEST(FixtureSet, EachRuleFolderHasEightPositiveAndEightNegative) {
  for (const rules::RuleMeta& rule : rules::all_rules()) {
    std::string code(rule.code);
    std::string folder = "tg" + code.substr(2);
    ASSERT_TRUE(std::filesystem::is_directory(kFixtureRoot / folder)) << folder;
    FolderCounts counts = count_folder(folder, code);
    EXPECT_GE(counts.positive, 8) << folder << " positive fixtures";
    EXPECT_GE(counts.negative, 8) << folder << " negative fixtures";
  }
}

TEST(FixtureRunner, ParsesHeaderAndExpectations) {
  FixtureSpec spec = parse_fixture(
      "# case: X-01 title here\n"
      "# check: TG001, TG003\n"
      "a.append(b)  # expect: TG001 warning @10-11; TG003 error\n"
      "c = 1  # noqa  # expect: TG001 note\n");
  EXPECT_TRUE(spec.problems.empty());
  EXPECT_EQ(spec.case_title, "X-01 title here");
  EXPECT_EQ(spec.checks, (std::set<std::string>{"TG001", "TG003"}));
  ASSERT_EQ(spec.expected.size(), 3u);
  EXPECT_EQ(spec.expected[0].line, 3u);
  EXPECT_EQ(spec.expected[0].column, 10u);
  EXPECT_EQ(spec.expected[0].end_column, 11u);
  EXPECT_EQ(spec.expected[1].code, "TG003");
  EXPECT_FALSE(spec.expected[1].column.has_value());
  EXPECT_EQ(spec.expected[2].line, 4u);
  EXPECT_EQ(spec.expected[2].severity, "note");
}

TEST(FixtureRunner, ReportsMalformedExpectations) {
  FixtureSpec spec = parse_fixture("# check: TG001\nx  # expect: TG001 fatal\ny  # expect: TG002 error\n");
  EXPECT_EQ(spec.problems.size(), 2u);
  EXPECT_FALSE(parse_fixture("x = 1\n").problems.empty());
}

TEST(FixtureRunner, AppliesSafeFixesAndSkipsOverlaps) {
  using analysis::Finding;
  using analysis::Fix;
  using analysis::FixSafety;
  std::string text = "def f():\n    a.append(x)\n";
  auto finding = [](uint32_t begin, uint32_t end, std::string replacement, FixSafety safety) {
    Finding f;
    f.code = "TG001";
    f.range = {begin, end};
    f.fixes.push_back(Fix{"fix", safety, {{{begin, end}, std::move(replacement)}}});
    return f;
  };
  std::vector<Finding> findings = {
      finding(0, 0, "@torch.no_grad()\n", FixSafety::Safe),
      finding(22, 23, "x.detach()", FixSafety::Safe),
      finding(22, 23, "x.item()", FixSafety::Safe),       // overlaps the previous one
      finding(13, 14, "B", FixSafety::Unsafe),            // never applied
  };
  FixOutcome outcome = apply_safe_fixes(text, findings);
  EXPECT_EQ(outcome.text, "@torch.no_grad()\ndef f():\n    a.append(x.detach())\n");
  EXPECT_EQ(outcome.fixed_findings, (std::vector<size_t>{0, 1}));
  EXPECT_EQ(map_offset(22, outcome.applied), 39u);  // the replaced value moves down one line
  EXPECT_EQ(map_offset(4, outcome.applied), 21u);
  EXPECT_EQ(map_offset(25, outcome.applied), 51u);
}

TEST(FixtureRunner, ParsesSilentComments) {
  FixtureSpec spec = parse_fixture(
      "# check: TG003, TG014\n"
      "loss.backward()  # silent: TG003 @5-20 clears gradients; TG014  # expect: TG003 error\n"
      "x  # silent: TG014 words only\n");
  EXPECT_TRUE(spec.problems.empty());
  ASSERT_EQ(spec.silences.size(), 3u);
  EXPECT_EQ(spec.silences[0].line, 2u);
  EXPECT_EQ(spec.silences[0].code, "TG003");
  EXPECT_EQ(spec.silences[0].column, 5u);
  EXPECT_EQ(spec.silences[0].end_column, 20u);
  EXPECT_EQ(spec.silences[0].reason_part, "clears gradients");
  EXPECT_EQ(spec.silences[1].code, "TG014");
  EXPECT_TRUE(spec.silences[1].reason_part.empty());
  EXPECT_EQ(spec.silences[2].reason_part, "words only");
  ASSERT_EQ(spec.expected.size(), 1u);  // the expect after the silent entries is its own
  EXPECT_EQ(spec.expected[0].code, "TG003");
}

TEST(FixtureRunner, ReportsMalformedOrUncheckedSilences) {
  EXPECT_EQ(parse_fixture("# check: TG003\nx  # silent: TG003 @9\n").problems.size(), 1u);
  EXPECT_EQ(parse_fixture("# check: TG003\nx  # silent: TG014\n").problems.size(), 1u);
}

TEST(FixtureRunner, ComparesSilencesBothWays) {
  ReportedSilence reported{3, 5, 3, 9, "TG012", "Hugging Face Accelerate builds the loaders"};
  ExpectedSilence match{3, "TG012", 5u, 9u, "Accelerate builds"};
  EXPECT_EQ(compare_silences({match}, {reported}), "");
  ExpectedSilence wrong_reason{3, "TG012", std::nullopt, std::nullopt, "Lightning"};
  std::string report = compare_silences({wrong_reason}, {reported});
  EXPECT_NE(report.find("expected but not reported"), std::string::npos);
  EXPECT_NE(report.find("reported but not expected"), std::string::npos);
  EXPECT_NE(compare_silences({}, {reported}).find("line 3: TG012 @5-9"), std::string::npos);
}

TEST(FixtureRunner, NamesTestsAfterPaths) {
  EXPECT_EQ(test_name_for("tg001/p01_history-after.py"), "tg001_p01_history_after");
}

}  // namespace
}  // namespace preflight::tests
