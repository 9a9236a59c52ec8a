// `check --explain-silence`: where a rule saw its pattern and stayed quiet on purpose, in the
// terminal and JSON reports, only when asked for, and never gated. Runs the real engine
// in-process, since silences come from the rules.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <sstream>

#include "rules/engine.h"
#include "server/cli/check_command.h"
#include "server/cli/report_json.h"
#include "server/cli/report_terminal.h"
#include "test_support.h"

namespace preflight::server {
namespace {

using Json = nlohmann::ordered_json;
using testing::TempDir;
namespace fs = std::filesystem;

// TG003 and TG014 see a loop that backwards without zero_grad and accumulates unscaled, but
// the Lightning Trainer runs this method: both stay silent and say why (line 12).
std::string lightning_fixture() {
  return testing::read_file(fs::path(PF_TEST_FIXTURES) / "frameworks" /
                            "lightning_s01_module_loop_is_trainer_managed.py");
}

struct CheckRun {
  int code;
  std::string out;
};

CheckRun check(const TempDir& dir, bool explain, std::string format = "terminal") {
  CheckArgs args;
  args.paths = {(dir.path() / "lit.py").string()};
  args.jobs = 1;
  args.format = std::move(format);
  args.explain_silence = explain;
  std::ostringstream out, err;
  CheckIo io{out, err, false, dir.path()};
  int code = run_check(args, io, rules::check_source);
  return {code, out.str()};
}

TEST(ExplainSilence, TerminalListsEachSilenceWithItsEvidenceAndCountsThem) {
  TempDir dir;
  dir.write("lit.py", lightning_fixture());
  CheckRun r = check(dir, true);
  EXPECT_EQ(r.code, kExitClean);  // silences never gate
  std::string file = (dir.path() / "lit.py").string();
  EXPECT_NE(r.out.find(file + ":12:13: silent TG003: methods of a LightningModule run under the "
                              "Lightning Trainer, which clears gradients"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find(file + ":12:13: silent TG014: "), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("  = evidence: 7:16 the class derives from `(pl.LightningModule)`"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("No issues found in 1 file.\n2 deliberate silences explained.\n"),
            std::string::npos)
      << r.out;
}

TEST(ExplainSilence, NothingAboutSilencesWithoutTheFlag) {
  TempDir dir;
  dir.write("lit.py", lightning_fixture());
  CheckRun r = check(dir, false);
  EXPECT_EQ(r.out, "No issues found in 1 file.\n");
  Json j = Json::parse(check(dir, false, "json").out);
  EXPECT_FALSE(j.contains("silences"));  // version 1 keeps the reference's keys
}

TEST(ExplainSilence, JsonAddsASilencesArrayInVersionOne) {
  TempDir dir;
  dir.write("lit.py", lightning_fixture());
  Json j = Json::parse(check(dir, true, "json").out);
  EXPECT_EQ(j["version"], kJsonReportVersion);
  ASSERT_EQ(j["silences"].size(), 2u);
  const Json& s = j["silences"][0];
  std::vector<std::string> keys;
  for (auto it = s.begin(); it != s.end(); ++it) keys.push_back(it.key());
  EXPECT_EQ(keys, (std::vector<std::string>{"code", "reason", "path", "line", "column", "end_line",
                                            "end_column", "related"}));
  EXPECT_EQ(s["code"], "TG003");
  EXPECT_EQ(s["line"], 12);
  EXPECT_EQ(s["column"], 13);
  EXPECT_EQ(s["end_column"], 28);
  ASSERT_EQ(s["related"].size(), 1u);
  EXPECT_EQ(s["related"][0]["line"], 7);
  EXPECT_EQ(j["summary"]["errors"], 0);
}

TEST(ExplainSilence, RenderedFromTheReportLikeFindings) {
  FileFindings file{"a.py", "x = 1\ny = 2\n", {}};
  file.silences.push_back({"TG012", {6, 11}, "a splat may carry the sampler", {{{10, 11}, "the splat"}}});
  analysis::LineIndex index(file.text);
  EXPECT_EQ(render_silence(file, index, file.silences[0], {}),
            "a.py:2:1: silent TG012: a splat may carry the sampler\n  = evidence: 2:5 the splat\n");
}

}  // namespace
}  // namespace preflight::server
