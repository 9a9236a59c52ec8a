// The rule catalogue's views: docs/rules.md must equal `preflight rules --format markdown`
// (regenerate with PREFLIGHT_UPDATE_GOLDEN=1), the JSON view, and `explain` for PF100.
#include <gtest/gtest.h>

#include <sstream>

#include "golden.h"
#include "rules/registry.h"
#include "server/cli/check_command.h"
#include "server/cli/rule_catalogue.h"
#include "server/cli/rule_commands.h"

namespace preflight::server {
namespace {

TEST(RuleDocs, DocsRulesMdIsTheGeneratedMarkdown) {
  testing::expect_file_equals(testing::fs::path(PF_SOURCE_DIR) / "docs/rules.md",
                              rules_markdown());
}

TEST(RuleDocs, CatalogueIsTheRegistryThenPf100) {
  std::span<const rules::RuleMeta> registered = rules::all_rules();
  ASSERT_EQ(rule_catalogue().size(), registered.size() + 1);
  for (std::size_t i = 0; i < registered.size(); ++i) {
    EXPECT_EQ(rule_catalogue()[i].code, registered[i].code);
    EXPECT_EQ(rule_catalogue()[i].category, analysis::category_name(registered[i].category));
  }
  EXPECT_EQ(rule_catalogue().back().code, kUnusedSuppressionCode);
  EXPECT_EQ(rule_catalogue().back().default_severity, analysis::Severity::Warning);
}

TEST(RuleDocs, MarkdownHasATableRowAndASectionPerRule) {
  std::string md = rules_markdown();
  for (const RuleInfo& r : rule_catalogue()) {
    std::string code(r.code);
    std::string anchor = code;
    for (char& c : anchor) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    EXPECT_NE(md.find("| [" + code + "](#" + anchor + ") | `" + std::string(r.slug) + "` | "),
              std::string::npos) << code;
    EXPECT_NE(md.find("\n## " + code + "\n"), std::string::npos) << code;
  }
}

TEST(RuleDocs, JsonIsAnArrayOfTheMetadata) {
  nlohmann::ordered_json j = rules_json();
  ASSERT_EQ(j.size(), rule_catalogue().size());
  const RuleInfo& first = rule_catalogue().front();
  EXPECT_EQ(j[0]["code"], first.code);
  EXPECT_EQ(j[0]["name"], first.slug);
  EXPECT_EQ(j[0]["level"], analysis::severity_name(first.default_severity));
  EXPECT_EQ(j[0]["category"], first.category);
  EXPECT_EQ(j[0]["summary"], first.summary);
  EXPECT_EQ(j[0]["explanation"], first.explanation);
  EXPECT_EQ(j[0]["fixable"], true);  // TG001: --fix applies its fix where proven safe
  EXPECT_EQ(j[0]["fix"], "safe-when-proven");
  EXPECT_FALSE(j[0].contains("help_uri"));  // no public documentation URL is configured
}

// `explain` states exactly what --fix does: TG004's pin_memory and TG014's division are
// offered as unsafe only, so --fix never applies them (it said "Autofix: yes").
TEST(RuleDocs, ExplainStatesWhatFixDoes) {
  auto autofix_line = [](const char* code) {
    std::ostringstream out, err;
    EXPECT_EQ(run_explain(code, out, err), 0) << code;
    std::string text = out.str();
    std::size_t at = text.find("\nAutofix:       ");
    return at == std::string::npos ? std::string() : text.substr(at + 16, text.find('\n', at + 1) - at - 16);
  };
  const char* unsafe_only = "unsafe: offered in the editor, never applied by --fix alone; --fix --unsafe-fixes applies it";
  EXPECT_EQ(autofix_line("TG004"), unsafe_only);
  EXPECT_EQ(autofix_line("TG014"), unsafe_only);
  EXPECT_EQ(autofix_line("TG001"),
            "applied by --fix where the fix is proven safe at the site; otherwise offered as "
            "unsafe in the editor, applied only by --fix --unsafe-fixes");
  EXPECT_EQ(autofix_line("TG005"), "safe: applied by --fix wherever a fix is offered");
  EXPECT_EQ(autofix_line("TG003"), "none: no fix is offered, --fix changes nothing for this rule");
  EXPECT_EQ(autofix_line("PF100"), "none: no fix is offered, --fix changes nothing for this rule");
  nlohmann::ordered_json j = rules_json();
  for (const nlohmann::ordered_json& rule : j)
    if (rule["code"] == "TG004" || rule["code"] == "TG014") {
      EXPECT_EQ(rule["fixable"], false) << rule["code"];
      EXPECT_EQ(rule["fix"], "unsafe-only") << rule["code"];
    }
}

TEST(RuleDocs, RulesFormatsAndExplainPf100) {
  std::ostringstream out, err;
  EXPECT_EQ(run_rules("markdown", out, err), 0);
  EXPECT_EQ(out.str(), rules_markdown());
  std::ostringstream bad_out, bad_err;
  EXPECT_EQ(run_rules("yaml", bad_out, bad_err), kExitUsage);
  EXPECT_EQ(bad_err.str(),
            "preflight: error: invalid --format 'yaml' for rules (expected text, markdown or "
            "json)\n");
  std::ostringstream explain;
  EXPECT_EQ(run_explain("pf100", explain, err), 0);
  EXPECT_TRUE(explain.str().starts_with(
      "PF100 (unused-suppression): suppression comment that silences nothing\n"));
  EXPECT_NE(explain.str().find("--report-unused-ignores"), std::string::npos);
}

}  // namespace
}  // namespace preflight::server
