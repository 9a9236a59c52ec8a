#include "server/cli/rule_commands.h"

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cctype>

#include "rules/registry.h"
#include "server/cli/check_command.h"

namespace preflight::server {

using rules::RuleMeta;

namespace {

std::string pad(std::string_view s, std::size_t width) {
  std::string out(s);
  if (out.size() < width) out.append(width - out.size(), ' ');
  return out;
}

}  // namespace

void write_rules_table(std::ostream& out) {
  std::size_t code_w = 4, level_w = 5, category_w = 8;
  for (const RuleMeta& r : rules::all_rules()) {
    code_w = std::max(code_w, r.code.size());
    level_w = std::max(level_w, analysis::severity_name(r.default_severity).size());
    category_w = std::max(category_w, analysis::category_name(r.category).size());
  }
  out << pad("CODE", code_w) << "  " << pad("LEVEL", level_w) << "  "
      << pad("CATEGORY", category_w) << "  SUMMARY\n";
  for (const RuleMeta& r : rules::all_rules()) {
    out << pad(r.code, code_w) << "  " << pad(analysis::severity_name(r.default_severity), level_w)
        << "  " << pad(analysis::category_name(r.category), category_w) << "  " << r.summary
        << "\n";
  }
}

int run_explain(std::string_view code, std::ostream& out, std::ostream& err) {
  std::string upper(code);
  for (char& c : upper) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  const RuleMeta* rule = rules::find_rule(upper);
  if (!rule) {
    err << "preflight: error: unknown rule code '" << code
        << "' (run `preflight rules` for the list)\n";
    return kExitUsage;
  }
  out << rule->code << " (" << rule->slug << "): " << rule->summary << "\n\n"
      << "Default level: " << analysis::severity_name(rule->default_severity) << "\n"
      << "Category:      " << analysis::category_name(rule->category) << "\n"
      << "Autofix:       " << (rule->has_fix ? "yes" : "no") << "\n\n"
      << rule->explanation;
  if (!rule->explanation.empty() && rule->explanation.back() != '\n') out << "\n";
  return 0;
}

CLI::App* add_rules_command(CLI::App& app) {
  return app.add_subcommand("rules", "List every rule: code, default level, category, summary");
}

CLI::App* add_explain_command(CLI::App& app, std::string& code) {
  CLI::App* cmd = app.add_subcommand("explain", "Explain one rule (e.g. explain TG001)");
  cmd->add_option("code", code, "Rule code, any case")->required();
  return cmd;
}

}  // namespace preflight::server
