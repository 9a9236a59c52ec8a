// The built `preflight` executable: command parsing (subcommands, the `preflight PATH`
// shorthand, --version, help), exit codes for bad invocations, the registry commands, and a
// check through the real engine.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <array>
#include <cstdio>

#include "rules/registry.h"
#include "test_support.h"

namespace preflight::server {
namespace {

using testing::TempDir;

struct RunResult {
  int code = -1;
  std::string out;  // stdout only; stderr goes to `err`
  std::string err;
};

std::string shell_quote(const std::string& s) {
  std::string out = "'";
  for (char c : s) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

// Runs the executable from `cwd` with `args`.
RunResult run_preflight(const std::vector<std::string>& args, const std::string& cwd = ".") {
  TempDir scratch;
  std::string err_path = (scratch.path() / "stderr").string();
  std::string cmd = "cd " + shell_quote(cwd) + " && " + shell_quote(PF_PREFLIGHT_EXE);
  for (const std::string& a : args) cmd += " " + shell_quote(a);
  cmd += " 2>" + shell_quote(err_path);
  RunResult r;
  FILE* pipe = ::popen(cmd.c_str(), "r");
  if (!pipe) return r;
  std::array<char, 4096> buf{};
  for (std::size_t n; (n = std::fread(buf.data(), 1, buf.size(), pipe)) > 0;)
    r.out.append(buf.data(), n);
  int status = ::pclose(pipe);
  r.code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  r.err = testing::read_file(err_path);
  return r;
}

TEST(Binary, VersionFlag) {
  RunResult r = run_preflight({"--version"});
  EXPECT_EQ(r.code, 0);
  EXPECT_EQ(r.out, "preflight 0.1.0\n");
}

TEST(Binary, NoCommandPrintsHelp) {
  RunResult r = run_preflight({});
  EXPECT_EQ(r.code, 0);
  EXPECT_NE(r.out.find("check"), std::string::npos);
  EXPECT_NE(r.out.find("explain"), std::string::npos);
  EXPECT_NE(r.out.find("rules"), std::string::npos);
}

TEST(Binary, MissingPathExitsTwoWithAndWithoutTheCheckCommand) {
  TempDir dir;
  using Args = std::vector<std::string>;
  for (const Args& args : {Args{"check", "nope.py"}, Args{"nope.py"}}) {
    RunResult r = run_preflight(args, dir.path().string());
    EXPECT_EQ(r.code, 2);
    EXPECT_EQ(r.err, "preflight: error: path does not exist: nope.py\n");
  }
}

TEST(Binary, ListFlagsTakeOneValueEachAndLeaveThePaths) {
  TempDir dir;
  dir.write("a.py", "x = 1\n");
  dir.write("skip/b.py", "x = 1\n");
  // "nope.py" is a path, not a second --select or --exclude value.
  RunResult select = run_preflight({"check", "--select", "TG001", "nope.py"}, dir.path().string());
  EXPECT_EQ(select.code, 2);
  EXPECT_EQ(select.err, "preflight: error: path does not exist: nope.py\n");
  RunResult exclude = run_preflight({"check", "--exclude", "skip", "--exclude", "other", ".",
                                     "--ignore", "tg001,TG002", "--no-color"},
                                    dir.path().string());
  EXPECT_EQ(exclude.code, 0);
  EXPECT_EQ(exclude.out, "No issues found in 1 file.\n");
  EXPECT_EQ(exclude.err, "");
}

TEST(Binary, UnknownFlagAndBadValuesExitTwo) {
  EXPECT_EQ(run_preflight({"check", "--no-such-flag"}).code, 2);
  EXPECT_EQ(run_preflight({"check", "--fail-on", "fatal", "."}).code, 2);
  EXPECT_EQ(run_preflight({"check", "--format", "github", "."}).code, 2);
  EXPECT_EQ(run_preflight({"check", "-j", "many", "."}).code, 2);
  EXPECT_EQ(run_preflight({"--bogus"}).code, 2);
}

TEST(Binary, RulesListsEveryRegisteredRule) {
  RunResult r = run_preflight({"rules"});
  EXPECT_EQ(r.code, 0);
  ASSERT_FALSE(rules::all_rules().empty());
  for (const rules::RuleMeta& rule : rules::all_rules()) {
    std::string row_start = "\n" + std::string(rule.code) + " ";
    EXPECT_NE(r.out.find(row_start), std::string::npos) << rule.code;
    EXPECT_NE(r.out.find(std::string(rule.summary)), std::string::npos) << rule.code;
  }
  EXPECT_EQ(std::count(r.out.begin(), r.out.end(), '\n'),
            static_cast<long>(rules::all_rules().size()) + 1);
}

TEST(Binary, ExplainIsCaseInsensitiveAndRejectsUnknownCodes) {
  const rules::RuleMeta& first = rules::all_rules().front();
  std::string lower(first.code);
  for (char& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  RunResult r = run_preflight({"explain", lower});
  EXPECT_EQ(r.code, 0);
  EXPECT_TRUE(r.out.starts_with(std::string(first.code) + " (" + std::string(first.slug) + ")"));
  EXPECT_NE(r.out.find(std::string(first.explanation.substr(0, 40))), std::string::npos);

  RunResult unknown = run_preflight({"explain", "TG999"});
  EXPECT_EQ(unknown.code, 2);
  EXPECT_NE(unknown.err.find("unknown rule code 'TG999'"), std::string::npos);
}

TEST(Binary, ShorthandEqualsCheck) {
  TempDir dir;
  dir.write("a.py", "x = 1\n");
  dir.write("notes.txt", "not python\n");
  RunResult shorthand = run_preflight({"--no-color", "."}, dir.path().string());
  EXPECT_EQ(shorthand.code, 2);  // a leading flag is not the shorthand
  RunResult implicit = run_preflight({".", "--no-color"}, dir.path().string());
  RunResult explicit_check = run_preflight({"check", ".", "--no-color"}, dir.path().string());
  EXPECT_EQ(implicit.code, 0);
  EXPECT_EQ(implicit.out, explicit_check.out);
  EXPECT_EQ(implicit.out, "No issues found in 1 file.\n");
  EXPECT_EQ(run_preflight({"notes.txt"}, dir.path().string()).out, "No issues found in 0 files.\n");
}

TEST(Binary, RealEngineReportsSyntaxErrorsAsFailures) {
  TempDir dir;
  dir.write("broken.py", "def f(:\n    pass\n");
  RunResult r = run_preflight({"check", "--format", "json", "broken.py"}, dir.path().string());
  EXPECT_EQ(r.code, 1);
  EXPECT_NE(r.out.find("\"path\": \"broken.py\""), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("\"error\": \"syntax error: line 1:"), std::string::npos) << r.out;
}

}  // namespace
}  // namespace preflight::server
