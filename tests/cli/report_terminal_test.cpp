// The terminal report: header positions in code points, carets placed by display width
// after é, CJK, emoji, combining marks and tabs, evidence, help and fix lines, --quiet,
// colour, and the summary wording.
#include "server/cli/report_terminal.h"

#include <gtest/gtest.h>

#include <sstream>

#include "server/cli/text_width.h"
#include "test_support.h"

namespace preflight::server {
namespace {

using analysis::FixSafety;
using analysis::LineIndex;
using analysis::Severity;
using testing::make_finding;
using testing::make_fix;

// The snippet lines (source and carets) of a finding on `text` spanning `needle`.
std::string snippet_for(const std::string& text, const std::string& needle,
                        std::size_t length = std::string::npos) {
  uint32_t begin = static_cast<uint32_t>(text.find(needle));
  std::size_t span = length == std::string::npos ? needle.size() : length;
  uint32_t end = begin + static_cast<uint32_t>(span);
  FileFindings file{"t.py", text, {make_finding("TG001", begin, end)}};
  LineIndex index(file.text);
  std::string out = render_finding(file, index, file.findings[0], {});
  std::size_t first_newline = out.find('\n');
  return out.substr(first_newline + 1);
}

TEST(TerminalReport, CaretsAfterAccentedLetter) {
  EXPECT_EQ(snippet_for("h\xC3\xA9 = loss\n", "loss"),
            "  1 | h\xC3\xA9 = loss\n"
            "    |      ^^^^\n");
}

TEST(TerminalReport, CaretsAfterWideCjkCharacters) {
  EXPECT_EQ(snippet_for("\xE4\xB8\xAD\xE6\x96\x87 = loss\n", "loss"),  // 中文: 2 columns each
            "  1 | \xE4\xB8\xAD\xE6\x96\x87 = loss\n"
            "    |        ^^^^\n");
}

TEST(TerminalReport, CaretsAfterEmojiAndCombiningMark) {
  // 😀 is two columns; "e" + U+0301 is one.
  EXPECT_EQ(snippet_for("\xF0\x9F\x98\x80 e\xCC\x81 = loss\n", "loss"),
            "  1 | \xF0\x9F\x98\x80 e\xCC\x81 = loss\n"
            "    |        ^^^^\n");
}

TEST(TerminalReport, WideCharactersInsideTheSpanWidenTheUnderline) {
  EXPECT_EQ(snippet_for("x = \xE4\xB8\xAD\xE6\x96\x87\n", "\xE4\xB8\xAD\xE6\x96\x87"),
            "  1 | x = \xE4\xB8\xAD\xE6\x96\x87\n"
            "    |     ^^^^\n");
}

TEST(TerminalReport, TabsAreExpandedInBothLines) {
  EXPECT_EQ(snippet_for("\tx = loss\n", "loss"),
            "  1 |     x = loss\n"
            "    |         ^^^^\n");
}

TEST(TerminalReport, MultiLineSpanIsUnderlinedToTheEndOfItsFirstLine) {
  std::string text = "a = 1\nb = f(x,\n      y)\n";
  EXPECT_EQ(snippet_for(text, "f(x,", 12),
            "  2 | b = f(x,\n"
            "    |     ^^^^\n");
}

TEST(TerminalReport, EmptySpanGetsOneCaret) {
  EXPECT_EQ(snippet_for("loss\n", "\n", 0),
            "  1 | loss\n"
            "    |     ^\n");
}

TEST(TerminalReport, GutterWidensWithTheLineNumber) {
  std::string text(99, '\n');
  text += "  loss\n";
  EXPECT_EQ(snippet_for(text, "loss"),
            "  100 |   loss\n"
            "      |   ^^^^\n");
}

TEST(TerminalReport, FullFindingWithEvidenceHelpAndFixes) {
  std::string text = "hist = []\nfor b in d:\n    hist.append(\xC3\xA9loss)\n";
  uint32_t at = static_cast<uint32_t>(text.find("\xC3\xA9loss"));
  analysis::Finding f = make_finding(
      "TG001", at, at + 6,
      {make_fix("add .detach()", FixSafety::Safe, {{{at + 6, at + 6}, ".detach()"}}),
       make_fix("use .item()", FixSafety::Unsafe, {{{at, at + 6}, "x"}}),
       make_fix("restructure", FixSafety::DisplayOnly, {})});
  f.message = "the graph is kept";
  f.hint = "append the detached value";
  f.evidence = {{{0, 4}, "hist outlives the loop"}, {{10, 13}, "this loop makes it grow"}};
  FileFindings file{"pkg/t.py", text, {f}};
  LineIndex index(file.text);
  EXPECT_EQ(render_finding(file, index, f, {}),
            "pkg/t.py:3:17: error TG001 (CRITICAL_OOM) the graph is kept\n"
            "  3 |     hist.append(\xC3\xA9loss)\n"
            "    |                 ^^^^^\n"
            "  = evidence: 1:1 hist outlives the loop\n"
            "  = evidence: 2:1 this loop makes it grow\n"
            "  help: append the detached value\n"
            "  fix: add .detach() (safe, run with --fix)\n"
            "  fix: use .item() (unsafe, not applied by --fix)\n"
            "  fix: restructure (display-only, not applied by --fix)\n");

  // Without a safe fix, the first unsafe one is what --fix --unsafe-fixes applies.
  analysis::Finding unsafe_only = make_finding(
      "TG014", at, at + 6,
      {make_fix("divide the loss", FixSafety::Unsafe, {{{at, at + 6}, "x"}}),
       make_fix("use .item()", FixSafety::Unsafe, {{{at, at + 6}, "y"}})});
  std::string unsafe_lines = render_finding(file, index, unsafe_only, {});
  EXPECT_NE(unsafe_lines.find("  fix: divide the loss (unsafe, applied by --fix --unsafe-fixes)\n"
                              "  fix: use .item() (unsafe, not applied by --fix)\n"),
            std::string::npos)
      << unsafe_lines;

  TerminalOptions quiet;
  quiet.quiet = true;
  std::string q = render_finding(file, index, f, quiet);
  EXPECT_EQ(q.find(" | "), std::string::npos);
  EXPECT_NE(q.find("help: append the detached value"), std::string::npos);
}

TEST(TerminalReport, ColourOnlyWhenAsked) {
  FileFindings file{"t.py", "loss\n", {make_finding("TG001", 0, 4)}};
  LineIndex index(file.text);
  TerminalOptions color;
  color.color = true;
  EXPECT_NE(render_finding(file, index, file.findings[0], color).find("\x1b[1;31merror"),
            std::string::npos);
  EXPECT_EQ(render_finding(file, index, file.findings[0], {}).find('\x1b'), std::string::npos);
}

CheckReport report_with(std::vector<analysis::Finding> findings, std::size_t files) {
  CheckReport report;
  report.files.push_back({"a.py", std::string(64, 'x'), std::move(findings)});
  report.files_checked = files;
  return report;
}

TEST(TerminalSummary, CountsWithPluralsAndOmittedZeros) {
  CheckReport report =
      report_with({make_finding("TG001", 0, 1), make_finding("TG007", 2, 3, {}, Severity::Warning),
                   make_finding("TG013", 4, 5, {}, Severity::Warning)},
                  3);
  EXPECT_EQ(render_summary(report, {}), "Found 1 error, 2 warnings in 3 files.\n");
  CheckReport one_note = report_with({make_finding("TG004", 0, 1, {}, Severity::Note)}, 1);
  EXPECT_EQ(render_summary(one_note, {}), "Found 1 note in 1 file.\n");
}

TEST(TerminalSummary, CleanRun) {
  EXPECT_EQ(render_summary(report_with({}, 0), {}), "No issues found in 0 files.\n");
  EXPECT_EQ(render_summary(report_with({}, 1), {}), "No issues found in 1 file.\n");
}

TEST(TerminalSummary, FixableAndFixedLines) {
  auto fixable = [](uint32_t at) {
    return make_finding("TG001", at, at + 1,
                        {make_fix("add .detach()", FixSafety::Safe, {{{at, at}, "y"}})});
  };
  CheckReport report = report_with({fixable(0), fixable(3), make_finding("TG003", 5, 6)}, 2);
  EXPECT_EQ(render_summary(report, {}),
            "Found 3 errors in 2 files.\n2 issues can be fixed automatically with --fix.\n");
  CheckReport fixed = report_with({}, 1);
  fixed.fixed = 1;
  TerminalOptions fix_mode;
  fix_mode.fix_mode = true;
  // Printed even when nothing is left (the reference dropped it then).
  EXPECT_EQ(render_summary(fixed, fix_mode), "No issues found in 1 file.\nFixed 1 issue.\n");
}

TEST(TerminalSummary, FailuresAreListedBeforeTheCounts) {
  CheckReport report = report_with({}, 1);
  report.failures = {{"b.py", "syntax error: line 2:1"}, {"b.py", "fixes not written: x"},
                     {"c.py", "could not read: not UTF-8"}};
  EXPECT_EQ(render_summary(report, {}),
            "b.py: syntax error: line 2:1\n"
            "b.py: fixes not written: x\n"
            "c.py: could not read: not UTF-8\n"
            "2 files could not be checked completely.\n"
            "No issues found in 1 file.\n");
}

TEST(TerminalReport, WholeReportSeparatesFindingsWithBlankLines) {
  CheckReport report = report_with({make_finding("TG001", 0, 1), make_finding("TG002", 2, 3)}, 1);
  TerminalOptions quiet;
  quiet.quiet = true;
  std::ostringstream out;
  write_terminal_report(report, quiet, out);
  EXPECT_EQ(out.str(),
            "a.py:1:1: error TG001 (CRITICAL_OOM) message for TG001\n\n"
            "a.py:1:3: error TG002 (CRITICAL_OOM) message for TG002\n\n"
            "Found 2 errors in 1 file.\n");
}

TEST(TextWidth, KnownWidths) {
  EXPECT_EQ(display_width("abc"), 3u);
  EXPECT_EQ(display_width("\xC3\xA9"), 1u);           // é
  EXPECT_EQ(display_width("\xE4\xB8\xAD"), 2u);       // 中
  EXPECT_EQ(display_width("\xF0\x9F\x98\x80"), 2u);   // 😀
  EXPECT_EQ(display_width("e\xCC\x81"), 1u);          // e + combining acute
  EXPECT_EQ(display_width("\t"), kTabWidth);
  EXPECT_EQ(display_width("\xff\xfe"), 2u);           // invalid bytes count one each
}

}  // namespace
}  // namespace preflight::server
