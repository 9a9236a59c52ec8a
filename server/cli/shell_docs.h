// The man page and the bash / zsh / fish completions that `cmake --install` ships, generated
// at build time from the command line's own CLI11 definition (`preflight generate-docs KIND`,
// a hidden subcommand). Every subcommand, option and help string comes from the App, so a
// new flag reaches all four files the next time the project is built; nothing is kept by hand
// per option except the values of the enumerated options whose values the parsers check
// after CLI11 (kValueChoices), and the generator refuses an entry that names no option.
#pragma once

#include <ostream>
#include <string>
#include <string_view>
#include <vector>

namespace CLI {
class App;
}

namespace preflight::server {

// What the value of an option (or a positional) is, for completion.
enum class ValueKind {
  None,       // a flag: no value
  Choice,     // one of `choices`
  RuleCodes,  // rule codes, comma-separated (--select, --ignore, explain CODE)
  Path,       // a file or directory (text values without a known set)
  Other,      // a number or free text: nothing to offer
};

struct OptionDoc {
  std::vector<std::string> short_names;  // "-f"
  std::vector<std::string> long_names;   // "--format"
  std::string positional;                // "paths" for a positional, else empty
  std::string description;
  std::string value_name;    // "TEXT", "INT", ... (CLI11's type name without its validators)
  std::string default_value;  // shown by --help after '=', empty when none
  bool repeatable = false;   // takes values from several occurrences (--select, paths)
  bool required = false;
  ValueKind kind = ValueKind::None;
  std::vector<std::string> choices;
};

struct CommandDoc {
  std::string name;  // empty for the top level
  std::string description;
  std::vector<OptionDoc> options;      // non-positional, in definition order (help first)
  std::vector<OptionDoc> positionals;
};

struct CliDoc {
  std::string program;
  std::string summary;  // the App's description without the leading "preflight: "
  std::string version;
  CommandDoc top;
  std::vector<CommandDoc> commands;  // visible subcommands, in definition order
  std::vector<std::string> rule_codes;
};

// Values the parsers accept for options that CLI11 itself does not restrict (they are checked
// after parsing, case-insensitively, so CLI11 knows nothing about them).
struct ValueChoices {
  std::string_view command;
  std::string_view long_name;
  std::vector<std::string_view> values;
};
const std::vector<ValueChoices>& value_choices();

// Reads the definition. Throws std::invalid_argument when a value_choices() entry names a
// command or option that does not exist (the table went stale).
CliDoc describe_cli(const CLI::App& app, std::string_view version);

std::string man_page(const CliDoc& doc);
std::string bash_completion(const CliDoc& doc);
std::string zsh_completion(const CliDoc& doc);
std::string fish_completion(const CliDoc& doc);

// `generate-docs KIND [--output FILE]`: KIND is man, bash, zsh or fish. Hidden from --help.
struct GenerateDocsArgs {
  std::string kind;
  std::string output;  // empty: stdout
};
CLI::App* add_generate_docs_command(CLI::App& app, GenerateDocsArgs& args);
int run_generate_docs(const CLI::App& app, const GenerateDocsArgs& args, std::ostream& out,
                      std::ostream& err);

}  // namespace preflight::server
