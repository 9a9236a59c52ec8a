// The shipped examples: good_train.py is clean under every rule, bad_train.py shows at least
// one finding of every registered rule.
#include <gtest/gtest.h>

#include <filesystem>
#include <string>

#include "fixture_runner.h"
#include "rules/engine.h"
#include "rules/registry.h"

namespace preflight::tests {
namespace {

const std::filesystem::path kExamples = std::filesystem::path(PF_SOURCE_DIR) / "examples";

std::string listing(const std::string& text, const rules::CheckResult& result) {
  std::string out;
  for (const ReportedFinding& r : describe_findings(text, result.findings))
    out += "  " + format_reported(r) + "\n";
  return out;
}

bool has_code(const rules::CheckResult& result, const std::string& code) {
  for (const analysis::Finding& f : result.findings)
    if (f.code == code) return true;
  return false;
}

TEST(Examples, GoodTrainHasNoFindings) {
  auto text = read_text(kExamples / "good_train.py");
  ASSERT_TRUE(text.has_value());
  rules::CheckResult result = rules::check_source(*text, {});
  EXPECT_EQ(result.status, rules::FileStatus::Analyzed);
  EXPECT_TRUE(result.syntax_errors.empty());
  EXPECT_TRUE(result.findings.empty()) << "good_train.py:\n" << listing(*text, result);
}

TEST(Examples, BadTrainShowsEveryRegisteredRule) {
  auto text = read_text(kExamples / "bad_train.py");
  ASSERT_TRUE(text.has_value());
  rules::CheckResult result = rules::check_source(*text, {});
  EXPECT_EQ(result.status, rules::FileStatus::Analyzed);
  EXPECT_TRUE(result.syntax_errors.empty());
  for (const rules::RuleMeta& rule : rules::all_rules()) {
    std::string code(rule.code);
    if (code == "TG010") continue;  // needs a target GPU: finetune_llm.py shows it
    EXPECT_TRUE(has_code(result, code)) << "no " << code << " in bad_train.py:\n"
                                        << listing(*text, result);
  }
}

TEST(Examples, FinetuneLlmIsAProjectedOomOnA24GbCard) {
  auto text = read_text(kExamples / "finetune_llm.py");
  ASSERT_TRUE(text.has_value());
  rules::CheckOptions options;
  EXPECT_FALSE(has_code(rules::check_source(*text, options), "TG010")) << "no target, no TG010";
  options.target_gpu = "rtx4090";
  rules::CheckResult result = rules::check_source(*text, options);
  EXPECT_TRUE(has_code(result, "TG010")) << listing(*text, result);
  options.target_gpu = "h200";
  EXPECT_FALSE(has_code(rules::check_source(*text, options), "TG010")) << "it fits an H200";
}

}  // namespace
}  // namespace preflight::tests
