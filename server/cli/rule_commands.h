// `preflight rules [--format text|markdown|json]` and `preflight explain CODE`: views of the
// rule catalogue (the registered rules and the CLI's PF100). docs/rules.md is the markdown
// view; a test keeps the committed file equal to it.
#pragma once

#include <nlohmann/json.hpp>
#include <ostream>
#include <string>
#include <string_view>

namespace CLI {
class App;
}

namespace preflight::server {

// One row per rule: code, default level, category, summary; columns aligned.
void write_rules_table(std::ostream& out);
// docs/rules.md: a summary table, then one section per rule (anchor = lower-case code).
std::string rules_markdown();
// An array of the rule metadata: code, name, level, category, summary, explanation, fixable,
// help_uri.
nlohmann::ordered_json rules_json();

// `rules` with its --format value; an unknown format prints an error, returns kExitUsage.
int run_rules(std::string_view format, std::ostream& out, std::ostream& err);

// Code, summary, slug, default level, category, fix availability and the long explanation.
// The code is case-insensitive; an unknown code prints an error and returns kExitUsage.
int run_explain(std::string_view code, std::ostream& out, std::ostream& err);

CLI::App* add_rules_command(CLI::App& app, std::string& format);
CLI::App* add_explain_command(CLI::App& app, std::string& code);

}  // namespace preflight::server
