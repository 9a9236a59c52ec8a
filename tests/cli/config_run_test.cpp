// How configuration reaches a `check` run, in-process with the fake engine: discovery per
// input, --config, command-line precedence (§6.3), excludes relative to the configuration
// file, re-levelling before gating, configuration errors (exit 2), and PF100 for unused
// suppressions under --report-unused-ignores.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <sstream>

#include "fake_engine.h"
#include "server/cli/check_command.h"
#include "server/cli/run_settings.h"
#include "test_support.h"

namespace preflight::server {
namespace {

using analysis::Severity;
using Json = nlohmann::json;
using testing::TempDir;
namespace fs = std::filesystem;

struct RunResult {
  int code;
  std::string out;
  std::string err;
};

// Runs `check` from `cwd` (paths are given relative to it, as a user would type them).
RunResult run_in(const fs::path& cwd, CheckArgs args) {
  std::ostringstream out, err;
  args.jobs = 1;
  std::vector<std::string> absolute;
  for (const std::string& p : args.paths) absolute.push_back((cwd / p).lexically_normal());
  args.paths = absolute;
  CheckIo io{out, err, false, cwd};
  int code = run_check(args, io, testing::fake_engine);
  return {code, out.str(), err.str()};
}

CheckArgs json_args(std::vector<std::string> paths) {
  CheckArgs a;
  a.paths = std::move(paths);
  a.format = "json";
  return a;
}

std::vector<std::string> codes_in(const std::string& json_out) {
  std::vector<std::string> codes;
  Json j = Json::parse(json_out);
  for (const Json& d : j["diagnostics"]) codes.push_back(d["code"]);
  return codes;
}

TEST(ConfigRun, SelectAndIgnoreFromTheDiscoveredFile) {
  TempDir dir;
  dir.write(".preflight.toml", "select = [\"tg001\", \"TG004\"]\nignore = [\"TG004\"]\n");
  dir.write("src/a.py", "leak slow breakme\n");
  RunResult r = run_in(dir.path() / "src", json_args({"a.py"}));
  EXPECT_EQ(r.err, "");
  EXPECT_EQ(codes_in(r.out), (std::vector<std::string>{"TG001"})) << r.out;
}

TEST(ConfigRun, CommandLineSelectReplacesIgnoreAdds) {
  TempDir dir;
  dir.write(".preflight.toml", "select = [\"TG001\"]\nignore = [\"TG005\"]\n");
  dir.write("a.py", "leak slow breakme\n");
  CheckArgs select = json_args({"."});
  select.select = {"TG004,TG005"};
  // TG005 stays ignored: the configured ignore list wins over the command-line select.
  EXPECT_EQ(codes_in(run_in(dir.path(), select).out), (std::vector<std::string>{"TG004"}));
  CheckArgs ignore = json_args({"."});
  ignore.ignore = {"tg001"};
  EXPECT_EQ(codes_in(run_in(dir.path(), ignore).out), std::vector<std::string>{});
}

TEST(ConfigRun, FailOnFromTheFileAndTheFlagReplacingIt) {
  TempDir dir;
  dir.write("pyproject.toml", "[tool.preflight]\nfail_on = \"note\"\n");
  dir.write("a.py", "slow\n");
  EXPECT_EQ(run_in(dir.path(), json_args({"."})).code, kExitFindings);
  CheckArgs flag = json_args({"."});
  flag.fail_on = "error";
  EXPECT_EQ(run_in(dir.path(), flag).code, kExitClean);
}

TEST(ConfigRun, SeverityRelevelsEveryFindingBeforeGating) {
  TempDir dir;
  dir.write(".torch-preflight.toml", "[severity]\nTG004 = \"error\"\nTG001 = \"note\"\n");
  dir.write("a.py", "slow leak\n");
  RunResult r = run_in(dir.path(), json_args({"a.py"}));
  EXPECT_EQ(r.code, kExitFindings);  // the note became an error
  Json j = Json::parse(r.out);
  EXPECT_EQ(j["diagnostics"][0]["code"], "TG004");
  EXPECT_EQ(j["diagnostics"][0]["severity"], "error");
  EXPECT_EQ(j["diagnostics"][1]["severity"], "note");
  EXPECT_EQ(j["summary"]["errors"], 1);
  EXPECT_EQ(j["summary"]["notes"], 1);
}

TEST(ConfigRun, ExcludesMatchRelativeToTheConfigurationDirectory) {
  TempDir dir;
  dir.write("proj/torch-preflight.toml", "exclude = [\"gen/*.py\"]\n");
  dir.write("proj/gen/out.py", "leak\n");
  dir.write("proj/keep.py", "leak\n");
  dir.write("proj/also.py", "leak\n");
  dir.write("elsewhere/x.txt", "");
  // The displayed paths are absolute and lie outside the working directory: only matching
  // relative to the configuration's directory makes `gen/*.py` exclude gen/out.py.
  CheckArgs a = json_args({"../proj"});
  a.exclude = {"also.py"};  // appended to the configured list
  RunResult r = run_in(dir.path() / "elsewhere", a);
  std::vector<std::string> paths;
  Json j = Json::parse(r.out);
  for (const Json& d : j["diagnostics"]) paths.push_back(d["path"]);
  EXPECT_EQ(paths, (std::vector<std::string>{(dir.path() / "proj/keep.py").string()}));
}

// check honours .gitignore by default, like the server's workspace scan; respect_gitignore =
// false in the configuration or --no-respect-gitignore turns it off.
TEST(ConfigRun, GitignoredFilesAreSkippedUnlessTurnedOff) {
  TempDir dir;
  dir.write(".gitignore", "generated/\n");
  dir.write("generated/out.py", "leak\n");
  dir.write("train.py", "leak\n");
  auto checked_paths = [&](const CheckArgs& a) {
    RunResult r = run_in(dir.path(), a);
    EXPECT_EQ(r.err, "");
    std::vector<std::string> paths;
    Json report = Json::parse(r.out);
    for (const Json& d : report["diagnostics"])
      paths.push_back(fs::path(d["path"].get<std::string>()).lexically_relative(dir.path()).generic_string());
    return paths;
  };
  EXPECT_EQ(checked_paths(json_args({"."})), (std::vector<std::string>{"train.py"}));
  CheckArgs off = json_args({"."});
  off.no_respect_gitignore = true;
  EXPECT_EQ(checked_paths(off), (std::vector<std::string>{"generated/out.py", "train.py"}));
  dir.write(".preflight.toml", "respect_gitignore = false\n");
  EXPECT_EQ(checked_paths(json_args({"."})),
            (std::vector<std::string>{"generated/out.py", "train.py"}));
}

TEST(ConfigRun, ExplicitConfigOverridesDiscovery) {
  TempDir dir;
  dir.write(".preflight.toml", "select = [\"TG001\"]\n");
  dir.write("ci/strict.toml", "select = [\"TG004\"]\nfail_on = \"note\"\n");
  dir.write("ci/pyproject.toml", "[project]\nname = \"x\"\n");
  dir.write("a.py", "leak slow\n");
  CheckArgs a = json_args({"a.py"});
  a.config = "ci/strict.toml";
  RunResult r = run_in(dir.path(), a);
  EXPECT_EQ(codes_in(r.out), (std::vector<std::string>{"TG004"}));
  EXPECT_EQ(r.code, kExitFindings);
  a.config = "ci/pyproject.toml";  // no tool table: defaults, not the discovered file
  EXPECT_EQ(codes_in(run_in(dir.path(), a).out), (std::vector<std::string>{"TG001", "TG004"}));
  a.config = "ci/missing.toml";
  RunResult missing = run_in(dir.path(), a);
  EXPECT_EQ(missing.code, kExitUsage);
  EXPECT_EQ(missing.err, "preflight: error: configuration file not found: ci/missing.toml\n");
}

TEST(ConfigRun, ConfigurationErrorsExitTwoAndWarningsPrintOnce) {
  TempDir dir;
  dir.write("bad/.preflight.toml", "\nfail_on = \"always\"\n");
  dir.write("bad/a.py", "leak\n");
  RunResult bad = run_in(dir.path(), json_args({"bad"}));
  EXPECT_EQ(bad.code, kExitUsage);
  EXPECT_EQ(bad.out, "");
  EXPECT_EQ(bad.err, "bad/.preflight.toml:2:11: error: fail_on must be \"error\", \"warning\" "
                     "or \"note\", not \"always\"\n");

  dir.write("warn/.preflight.toml", "colour = 1\n");
  dir.write("warn/a.py", "x\n");
  dir.write("warn/b.py", "x\n");
  RunResult warn = run_in(dir.path(), json_args({"warn/a.py", "warn/b.py"}));
  EXPECT_EQ(warn.code, kExitClean);
  EXPECT_EQ(warn.err, "warn/.preflight.toml:1:1: warning: unknown configuration key 'colour' "
                      "(ignored)\n");
}

TEST(ConfigRun, EachInputUsesTheFileAboveIt) {
  TempDir dir;
  dir.write("a/.preflight.toml", "select = [\"TG001\"]\n");
  dir.write("b/pyproject.toml", "[tool.torch-preflight]\nselect = [\"TG004\"]\n");
  dir.write("a/x.py", "leak slow\n");
  dir.write("b/y.py", "leak slow\n");
  RunResult r = run_in(dir.path(), json_args({"a", "b/y.py"}));
  Json j = Json::parse(r.out);
  ASSERT_EQ(j["diagnostics"].size(), 2u) << r.out;
  EXPECT_EQ(j["diagnostics"][0]["code"], "TG001");
  EXPECT_EQ(j["diagnostics"][1]["code"], "TG004");
}

TEST(ConfigRun, MergeKeepsTargetGpuWithTheFlagReplacingIt) {
  Config config;
  config.target_gpu = "a100-80gb";
  config.exclude = {"gen"};
  config.fail_on = Severity::Warning;
  CheckArgs args;
  CheckSettings settings;
  FileSettings merged = merge_settings(config, args, settings);
  EXPECT_EQ(merged.target_gpu, "a100-80gb");
  EXPECT_EQ(merged.fail_on, Severity::Warning);
  EXPECT_TRUE(merged.config_dir.empty());  // no file was read
  args.target_gpu = "h100";
  args.exclude = {"tmp"};
  settings.fail_on = Severity::Note;
  merged = merge_settings(config, args, settings);
  EXPECT_EQ(merged.target_gpu, "h100");
  EXPECT_EQ(merged.excludes, (std::vector<std::string>{"gen", "tmp"}));
  EXPECT_EQ(merged.fail_on, Severity::Note);
}

TEST(UnusedIgnores, ReportedOnlyWhenAskedAsWarnings) {
  TempDir dir;
  dir.write("a.py", "x = 1  # noqa: TG003\ny = 2  # preflight: ignore\n");
  CheckArgs plain = json_args({"a.py"});
  EXPECT_EQ(codes_in(run_in(dir.path(), plain).out), std::vector<std::string>{});

  CheckArgs asked = plain;
  asked.report_unused_ignores = true;
  RunResult r = run_in(dir.path(), asked);
  EXPECT_EQ(r.code, kExitClean);  // warnings do not gate by default
  Json j = Json::parse(r.out);
  ASSERT_EQ(j["diagnostics"].size(), 2u);
  const Json& first = j["diagnostics"][0];
  EXPECT_EQ(first["code"], "PF100");
  EXPECT_EQ(first["severity"], "warning");
  EXPECT_EQ(first["category"], "SUPPRESSION");
  EXPECT_EQ(first["message"], "unused suppression: `# noqa: TG003` silences no TG003 finding");
  EXPECT_EQ(first["column"], 8);
  EXPECT_EQ(j["diagnostics"][1]["message"],
            "unused suppression: `# preflight: ignore` silences nothing");
  EXPECT_EQ(j["summary"]["warnings"], 2);
}

TEST(UnusedIgnores, GateLikeWarningsAndFollowSeverityAndRuleSelection) {
  TempDir dir;
  dir.write("a.py", "x = 1  # noqa: TG003\n");
  CheckArgs a = json_args({"a.py"});
  a.report_unused_ignores = true;
  a.fail_on = "warning";
  EXPECT_EQ(run_in(dir.path(), a).code, kExitFindings);
  a.ignore = {"TG003"};  // the rule did not run: its suppression is not unused
  EXPECT_EQ(run_in(dir.path(), a).code, kExitClean);

  dir.write(".preflight.toml", "[severity]\nPF100 = \"error\"\n");
  CheckArgs relevel = json_args({"a.py"});
  relevel.report_unused_ignores = true;
  RunResult r = run_in(dir.path(), relevel);
  EXPECT_EQ(r.code, kExitFindings);
  EXPECT_EQ(Json::parse(r.out)["diagnostics"][0]["severity"], "error");
}

TEST(UnusedIgnores, TerminalLineNamesTheSuppressionCategory) {
  TempDir dir;
  dir.write("a.py", "x = 1  # noqa: TG003\n");
  CheckArgs a;
  a.paths = {"a.py"};
  a.report_unused_ignores = true;
  a.quiet = true;
  RunResult r = run_in(dir.path(), a);
  EXPECT_EQ(r.out, (dir.path() / "a.py").string() +
                       ":1:8: warning PF100 (SUPPRESSION) unused suppression: `# noqa: TG003` "
                       "silences no TG003 finding\n"
                       "  help: Delete TG003 from the comment (or the whole comment if it lists "
                       "nothing else).\n\n"
                       "Found 1 warning in 1 file.\n");
}

}  // namespace
}  // namespace preflight::server
