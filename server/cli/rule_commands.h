// `preflight rules` and `preflight explain CODE`: views of the rule registry.
#pragma once

#include <ostream>
#include <string>
#include <string_view>

namespace CLI {
class App;
}

namespace preflight::server {

// One row per registered rule: code, default level, category, summary; columns aligned.
void write_rules_table(std::ostream& out);

// Code, summary, slug, default level, category, fix availability and the long explanation.
// The code is case-insensitive; an unknown code prints an error and returns kExitUsage.
int run_explain(std::string_view code, std::ostream& out, std::ostream& err);

CLI::App* add_rules_command(CLI::App& app);
CLI::App* add_explain_command(CLI::App& app, std::string& code);

}  // namespace preflight::server
