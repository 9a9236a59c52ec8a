// The check command end to end, in-process, with a fake engine standing in for the rules:
// exit codes and the gate, failures, skip-file, --fix (written, counted, re-checked), --diff
// (prints only the diff, writes nothing, gates on unfixed findings), -j determinism, code
// lists, and bad invocations.
#include "server/cli/check_command.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <sstream>

#include "fake_engine.h"
#include "test_support.h"

namespace preflight::server {
namespace {

using analysis::Finding;
using analysis::FixSafety;
using analysis::Severity;
using Json = nlohmann::json;
using testing::fake_engine;
using testing::TempDir;
namespace fs = std::filesystem;

struct RunResult {
  int code;
  std::string out;
  std::string err;
};

RunResult run(const TempDir& dir, CheckArgs args) {
  std::ostringstream out, err;
  // Inputs are given relative to the scratch directory: the base and what paths show.
  for (std::string& p : args.paths) p = (dir.path() / p).string();
  CheckIo io{out, err, false, dir.path()};
  int code = run_check(args, io, fake_engine);
  return {code, out.str(), err.str()};
}

CheckArgs args_for(std::vector<std::string> paths) {
  CheckArgs a;
  a.paths = std::move(paths);
  a.jobs = 1;
  return a;
}

TEST(CheckCommand, CleanFileExitsZero) {
  TempDir dir;
  dir.write("a.py", "x = 1\n");
  RunResult r = run(dir, args_for({"."}));
  EXPECT_EQ(r.code, kExitClean);
  EXPECT_EQ(r.out, "No issues found in 1 file.\n");
  EXPECT_EQ(r.err, "");
}

TEST(CheckCommand, GateFollowsFailOn) {
  TempDir dir;
  dir.write("notes.py", "slow\n");
  EXPECT_EQ(run(dir, args_for({"."})).code, kExitClean);  // notes never gate by default
  CheckArgs warning = args_for({"."});
  warning.fail_on = "warning";
  EXPECT_EQ(run(dir, warning).code, kExitClean);
  CheckArgs note = args_for({"."});
  note.fail_on = "NOTE";
  EXPECT_EQ(run(dir, note).code, kExitFindings);
  dir.write("errors.py", "leak\n");
  EXPECT_EQ(run(dir, args_for({"."})).code, kExitFindings);
}

TEST(CheckCommand, SyntaxErrorIsAFailureAndTheRestIsStillReported) {
  TempDir dir;
  dir.write("broken.py", "x = 1\ny SYNTAXERR slow\n");
  CheckArgs a = args_for({"."});
  a.format = "json";
  RunResult r = run(dir, a);
  EXPECT_EQ(r.code, kExitFindings);  // a failure fails the run whatever fail_on says
  Json j = Json::parse(r.out);
  EXPECT_EQ(j["failures"], Json::parse(R"([{"path":")" + (dir.path() / "broken.py").string() +
                                       R"(","error":"syntax error: line 2:3"}])"));
  ASSERT_EQ(j["diagnostics"].size(), 1u);
  EXPECT_EQ(j["diagnostics"][0]["code"], "TG004");
  EXPECT_EQ(j["summary"]["files_checked"], 0);
}

TEST(CheckCommand, OtherParseFailuresKeepTheEnginesWording) {
  TempDir dir;
  dir.write("deep.py", "DEEP\n");
  RunResult r = run(dir, args_for({"deep.py"}));
  EXPECT_EQ(r.code, kExitFindings);
  EXPECT_EQ(r.out, (dir.path() / "deep.py").string() +
                       ": too deeply nested to analyze: line 1:1\n"
                       "1 file could not be checked completely.\nNo issues found in 0 files.\n");
}

TEST(CheckCommand, UnreadableAndOversizedFilesAreFailures) {
  TempDir dir;
  dir.write("binary.py", std::string("x\0y", 3));
  dir.write("huge.py", std::string(10 * 1024 * 1024 + 1, '#'));
  dir.write("ok.py", "x = 1\n");
  RunResult r = run(dir, args_for({"."}));
  EXPECT_EQ(r.code, kExitFindings);
  std::string base = dir.path().string();
  EXPECT_NE(r.out.find(base + "/binary.py: could not read: contains NUL bytes\n"),
            std::string::npos) << r.out;
  EXPECT_NE(r.out.find(base + "/huge.py: file too large to analyze (10485761 bytes)\n"),
            std::string::npos) << r.out;
  EXPECT_NE(r.out.find("No issues found in 1 file.\n"), std::string::npos) << r.out;
}

TEST(CheckCommand, SkipFileReportsNothingEvenWithASyntaxError) {
  TempDir dir;
  dir.write("skipped.py", "# skip-file\nleak SYNTAXERR\n");
  RunResult r = run(dir, args_for({"."}));
  EXPECT_EQ(r.code, kExitClean);
  EXPECT_EQ(r.out, "No issues found in 1 file.\n");
}

TEST(CheckCommand, FixWritesTheFileAndRemovesFixedFindingsFromTheGate) {
  TempDir dir;
  fs::path file = dir.write("train.py", "a = [leak]  # keep\nb = slow\nc = leak\n");
  CheckArgs a = args_for({"."});
  a.fix = true;
  a.format = "json";
  RunResult r = run(dir, a);
  EXPECT_EQ(r.code, kExitClean);  // both errors fixed; the note does not gate
  EXPECT_EQ(testing::read_file(file), "a = [leak.detach()]  # keep\nb = slow\nc = leak.detach()\n");
  Json j = Json::parse(r.out);
  EXPECT_EQ(j["summary"]["fixed"], 2);
  EXPECT_EQ(j["summary"]["errors"], 0);
  ASSERT_EQ(j["diagnostics"].size(), 1u);
  // Positions refer to the fixed text.
  EXPECT_EQ(j["diagnostics"][0]["line"], 2);
  EXPECT_EQ(j["diagnostics"][0]["column"], 5);
}

TEST(CheckCommand, FixTerminalSummarySaysWhatWasFixed) {
  TempDir dir;
  dir.write("train.py", "leak\n");
  CheckArgs a = args_for({"."});
  a.fix = true;
  RunResult r = run(dir, a);
  EXPECT_EQ(r.code, kExitClean);
  EXPECT_EQ(r.out, "No issues found in 1 file.\nFixed 1 issue.\n");
}

TEST(CheckCommand, FixThatBreaksParsingIsNotWritten) {
  TempDir dir;
  std::string original = "x = breakme\ny = leak\n";
  fs::path file = dir.write("train.py", original);
  CheckArgs a = args_for({"."});
  a.fix = true;
  a.format = "json";
  RunResult r = run(dir, a);
  EXPECT_EQ(r.code, kExitFindings);
  EXPECT_EQ(testing::read_file(file), original);
  Json j = Json::parse(r.out);
  EXPECT_EQ(j["summary"]["fixed"], 0);
  EXPECT_EQ(j["diagnostics"].size(), 2u);
  ASSERT_EQ(j["failures"].size(), 1u);
  EXPECT_TRUE(j["failures"][0]["error"].get<std::string>().starts_with("fixes not applied"));
}

// The user saves the file while it is being checked: the fixes were computed from the old
// text, so writing them would throw the edit away.
TEST(CheckCommand, FixNeverOverwritesAnEditMadeWhileTheFileWasChecked) {
  TempDir dir;
  fs::path file = dir.write("train.py", "x = leak\n");
  const std::string edit = "x = leak\ny = 'typed while preflight ran'\n";
  bool edited = false;
  SourceChecker editing_engine = [&](std::string_view text, const rules::CheckOptions& o) {
    if (!edited) {
      edited = true;
      dir.write("train.py", edit);
    }
    return testing::fake_engine(text, o);
  };
  CheckArgs a = args_for({"."});
  a.fix = true;
  a.format = "json";
  for (std::string& p : a.paths) p = (dir.path() / p).string();
  std::ostringstream out, err;
  int code = run_check(a, CheckIo{out, err, false, dir.path()}, editing_engine);
  EXPECT_EQ(testing::read_file(file), edit);
  EXPECT_EQ(code, kExitFindings);
  Json j = Json::parse(out.str());
  EXPECT_EQ(j["summary"]["fixed"], 0);
  ASSERT_EQ(j["failures"].size(), 1u);
  EXPECT_NE(j["failures"][0]["error"].get<std::string>().find("changed on disk"), std::string::npos)
      << j["failures"];
}

// A directory link inside the checked tree leads elsewhere: its files are checked, but
// --fix writes only under the paths it was given.
TEST(CheckCommand, FixDoesNotWriteThroughALinkOutOfTheCheckedDirectory) {
  TempDir dir;
  fs::path outside = dir.write("system/lib.py", "x = leak\n");
  fs::path inside = dir.write("project/train.py", "x = leak\n");
  fs::create_directory_symlink(dir.path() / "system", dir.path() / "project" / "vendor");
  CheckArgs a = args_for({"project"});
  a.fix = true;
  a.format = "json";
  RunResult r = run(dir, a);
  EXPECT_EQ(testing::read_file(inside), "x = leak.detach()\n");
  EXPECT_EQ(testing::read_file(outside), "x = leak\n");
  Json j = Json::parse(r.out);
  EXPECT_EQ(j["summary"]["fixed"], 1);
  ASSERT_EQ(j["failures"].size(), 1u);
  EXPECT_NE(j["failures"][0]["error"].get<std::string>().find("outside the paths given"),
            std::string::npos) << j["failures"];
}

TEST(CheckCommand, UnsafeFixesAreAppliedOnlyWithUnsafeFixes) {
  TempDir dir;
  fs::path file = dir.write("train.py", "a = risky\nb = leak\n");
  CheckArgs a = args_for({"."});
  a.fix = true;
  a.format = "json";
  RunResult safe = run(dir, a);
  EXPECT_EQ(testing::read_file(file), "a = risky\nb = leak.detach()\n");
  EXPECT_EQ(Json::parse(safe.out)["summary"]["fixed"], 1);
  a.unsafe_fixes = true;
  RunResult unsafe = run(dir, a);
  EXPECT_EQ(testing::read_file(file), "a = tamed\nb = leak.detach()\n");
  EXPECT_EQ(Json::parse(unsafe.out)["summary"]["fixed"], 1);
  // Without --fix or --diff nothing is written.
  dir.write("train.py", "a = risky\n");
  CheckArgs report_only = args_for({"."});
  report_only.unsafe_fixes = true;
  run(dir, report_only);
  EXPECT_EQ(testing::read_file(file), "a = risky\n");
}

TEST(CheckCommand, DiffPrintsOnlyTheDiffWritesNothingAndGatesOnUnfixedFindings) {
  TempDir dir;
  std::string original = "import torch\nhistory.append(leak)\n";
  fs::path file = dir.write("train.py", original);
  dir.write("clean.py", "x = 1\n");
  CheckArgs a = args_for({"."});
  a.diff = true;
  a.fix = true;  // --diff wins: nothing is written
  RunResult r = run(dir, a);
  EXPECT_EQ(r.out,
            "--- a/train.py\n+++ b/train.py\n@@ -1,2 +1,2 @@\n import torch\n"
            "-history.append(leak)\n+history.append(leak.detach())\n");
  EXPECT_EQ(testing::read_file(file), original);
  EXPECT_EQ(r.code, kExitFindings);  // the reference exited 0 here (§9.4)
}

TEST(CheckCommand, ParallelRunsMatchSequentialOnes) {
  TempDir dir;
  for (int i = 0; i < 40; ++i)
    dir.write("pkg" + std::to_string(i % 7) + "/m" + std::to_string(i) + ".py",
              std::string(static_cast<std::size_t>(i), '\n') + (i % 3 ? "leak\n" : "slow\n"));
  dir.write("pkg3/broken.py", "SYNTAXERR\n");
  CheckArgs seq = args_for({"."});
  seq.format = "json";
  CheckArgs par = seq;
  par.jobs = 8;
  RunResult a = run(dir, seq), b = run(dir, par);
  EXPECT_EQ(a.out, b.out);
  EXPECT_EQ(a.code, b.code);
  Json j = Json::parse(a.out);
  EXPECT_EQ(j["diagnostics"].size(), 40u);
  std::vector<std::string> paths;
  for (const Json& d : j["diagnostics"]) paths.push_back(d["path"]);
  EXPECT_TRUE(std::is_sorted(paths.begin(), paths.end()));
}

TEST(CheckCommand, SelectAndIgnoreAreCaseInsensitiveAndWarnOnUnknownCodes) {
  TempDir dir;
  dir.write("a.py", "leak slow\n");
  CheckArgs a = args_for({"."});
  a.select = {"tg001, TG999"};
  a.format = "json";
  RunResult r = run(dir, a);
  EXPECT_EQ(r.err, "preflight: warning: unknown rule code 'TG999' in --select\n");
  Json j = Json::parse(r.out);
  ASSERT_EQ(j["diagnostics"].size(), 1u);
  EXPECT_EQ(j["diagnostics"][0]["code"], "TG001");

  CheckArgs ignore = args_for({"."});
  ignore.ignore = {"tg001", "tg004"};
  RunResult ri = run(dir, ignore);
  EXPECT_EQ(ri.code, kExitClean);
  EXPECT_EQ(ri.out, "No issues found in 1 file.\n");
}

TEST(CheckCommand, ParseRuleCodesSplitsTrimsAndUppercases) {
  std::ostringstream err;
  EXPECT_EQ(parse_rule_codes({"tg001,TG002", " tg003 ,,", "TG001"}, "--select", err),
            (std::set<std::string>{"TG001", "TG002", "TG003"}));
}

TEST(CheckCommand, BadInvocationsExitTwo) {
  TempDir dir;
  dir.write("a.py", "x = 1\n");
  CheckArgs bad_fail_on = args_for({"."});
  bad_fail_on.fail_on = "critical";
  RunResult r1 = run(dir, bad_fail_on);
  EXPECT_EQ(r1.code, kExitUsage);
  EXPECT_NE(r1.err.find("invalid --fail-on 'critical'"), std::string::npos);

  CheckArgs bad_format = args_for({"."});
  bad_format.format = "xml";
  RunResult r2 = run(dir, bad_format);
  EXPECT_EQ(r2.code, kExitUsage);
  EXPECT_EQ(r2.err,
            "preflight: error: invalid --format 'xml' (expected terminal, json, github or sarif)\n");
  EXPECT_EQ(r2.out, "");

  RunResult r3 = run(dir, args_for({"a.py", "missing.py"}));
  EXPECT_EQ(r3.code, kExitUsage);
  EXPECT_EQ(r3.err, "preflight: error: path does not exist: " +
                        (dir.path() / "missing.py").string() + "\n");
  EXPECT_EQ(r3.out, "");
}

TEST(CheckCommand, ExplicitNonPythonFileChecksNothing) {
  TempDir dir;
  dir.write("notes.txt", "leak\n");
  RunResult r = run(dir, args_for({"notes.txt"}));
  EXPECT_EQ(r.code, kExitClean);
  EXPECT_EQ(r.out, "No issues found in 0 files.\n");
}

}  // namespace
}  // namespace preflight::server
