// GitHub annotations (rules.md §9.7): one workflow command per finding, levels, positions in
// code points, the title from the rule summary, the hint appended, escaping that the runner
// undoes (message: % CR LF; properties also : and ,), failures as errors; plus goldens of the
// same sample report in the terminal and JSON formats.
#include "server/cli/report_github.h"

#include <gtest/gtest.h>

#include <sstream>

#include "golden.h"
#include "server/cli/report_json.h"
#include "server/cli/report_terminal.h"
#include "server/cli/rule_catalogue.h"
#include "sample_report.h"

namespace preflight::server {
namespace {

std::vector<std::string> lines_of(const std::string& s) {
  std::vector<std::string> lines;
  std::istringstream in(s);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

std::string github_output(const CheckReport& report) {
  std::ostringstream out;
  write_github_report(report, out, testing::kSampleRules);
  return out.str();
}

TEST(GithubReport, MatchesGolden) {
  testing::expect_golden("sample.github.txt", github_output(testing::sample_report()));
}

TEST(GithubReport, OneLinePerFindingThenFailures) {
  std::vector<std::string> lines = lines_of(github_output(testing::sample_report()));
  ASSERT_EQ(lines.size(), 5u);
  EXPECT_TRUE(lines[0].starts_with("::notice file=data dir/l\u00e4der%2Cv1.py,line=2,"));
  EXPECT_EQ(lines[4], "::error file=pkg/broken.py,title=preflight::syntax error: line 1:5");
}

TEST(GithubReport, ErrorLineWithTitlePositionsAndHint) {
  std::vector<std::string> lines = lines_of(github_output(testing::sample_report()));
  // Code points: the rocket counts once here (SARIF counts it twice).
  EXPECT_EQ(lines[1], "::error file=pkg/train.py,line=2,endLine=2,col=26,endColumn=30,"
                      "title=TG001 tensor kept with its graph"
                      "::`history.append(...)` keeps `loss` with its autograd graph"
                          "%0A%0Ahelp: Store `loss.item()` if only the number matters.");
}

TEST(GithubReport, WarningsEscapeOnlyPercentAndLineBreaksInTheMessage) {
  std::vector<std::string> lines = lines_of(github_output(testing::sample_report()));
  EXPECT_EQ(lines[2].substr(0, lines[2].find(",title=")),
            "::warning file=pkg/train.py,line=2,endLine=2,col=33,endColumn=46");
  EXPECT_TRUE(lines[2].ends_with("::unused suppression: `# noqa: TG003` silences no TG003 "
                                 "finding%0A%0Ahelp: Delete TG003 from the comment (or the "
                                 "whole comment if it lists nothing else)."))
      << lines[2];
  EXPECT_TRUE(lines[3].starts_with("::warning file=pkg/train.py,line=4,endLine=5,col=14,"
                                   "endColumn=11,title=TG007 "));
  EXPECT_TRUE(lines[3].ends_with("::100%25 of steps wait, really: twice,%0Aper batch"
                                 "%0A%0Ahelp: Move it out: a, b."))
      << lines[3];
}

TEST(GithubReport, EscapingFunctions) {
  EXPECT_EQ(github_escape_data("a%b\r\nc:d,e"), "a%25b%0D%0Ac:d,e");
  EXPECT_EQ(github_escape_property("a%b\r\nc:d,e"), "a%25b%0D%0Ac%3Ad%2Ce");
  EXPECT_EQ(github_escape_property(""), "");
}

TEST(GithubReport, TitlesEscapePropertyCharactersAndFallBackToTheCode) {
  std::vector<std::string> lines = lines_of(github_output(testing::sample_report()));
  EXPECT_NE(lines[0].find(",title=TG004 DataLoader settings%2C slow%3A a%2C b::"),
            std::string::npos) << lines[0];
  CheckReport unknown;
  unknown.files.push_back({"a.py", "x\n", {testing::make_finding("XX9", 0, 1)},
                           analysis::Severity::Error});
  EXPECT_EQ(github_output(unknown), "::error file=a.py,line=1,endLine=1,col=1,endColumn=2,"
                                    "title=XX9::message for XX9\n");
  std::ostringstream real;
  write_github_report(testing::sample_report(), real);  // the real catalogue's summaries
  EXPECT_NE(real.str().find("title=TG001 " +
                            github_escape_property(find_rule_info("TG001")->summary) + "::"),
            std::string::npos);
}

TEST(GithubReport, NothingForACleanRun) {
  CheckReport clean;
  clean.files.push_back({"a.py", "x = 1\n", {}, analysis::Severity::Error});
  EXPECT_EQ(github_output(clean), "");
}

TEST(TerminalReport, SampleMatchesGolden) {
  std::ostringstream out;
  write_terminal_report(testing::sample_report(), {}, out);
  testing::expect_golden("sample.terminal.txt", out.str());
}

TEST(JsonReport, SampleMatchesGolden) {
  std::ostringstream out;
  write_json_report(testing::sample_report(), out);
  testing::expect_golden("sample.json", out.str());
}

}  // namespace
}  // namespace preflight::server
