#include "server/cli/shell_docs.h"

#include <CLI/CLI.hpp>
#include <algorithm>
#include <fstream>
#include <sstream>
#include <stdexcept>

#include "server/cli/check_command.h"
#include "server/cli/rule_catalogue.h"
#include "server/cli/version.h"

namespace preflight::server {

const std::vector<ValueChoices>& value_choices() {
  // The values run_settings / rule_commands / estimate / gpus accept; a test runs the built
  // binary with each of them.
  static const std::vector<ValueChoices> table{
      {"check", "--format", {"terminal", "json", "github", "sarif"}},
      {"check", "--fail-on", {"error", "warning", "note"}},
      {"rules", "--format", {"text", "markdown", "json"}},
      {"estimate", "--format", {"terminal", "json"}},
      {"gpus", "--format", {"terminal", "json"}},
  };
  return table;
}

namespace {

// Options and positionals whose values are rule codes or paths. An option named here that the
// definition lacks is an error, like a stale value_choices() entry.
struct ValueHint {
  std::string_view command;
  std::string_view name;  // "--config" or a positional's name
  ValueKind kind;
};
constexpr ValueHint kValueHints[] = {
    {"check", "paths", ValueKind::Path},        {"check", "--select", ValueKind::RuleCodes},
    {"check", "--ignore", ValueKind::RuleCodes}, {"check", "--exclude", ValueKind::Path},
    {"check", "--config", ValueKind::Path},      {"explain", "code", ValueKind::RuleCodes},
    {"estimate", "script", ValueKind::Path},     {"estimate", "--deepspeed", ValueKind::Path},
    {"lsp", "--log-file", ValueKind::Path},
};

bool is_visible(const CLI::App* cmd) { return !cmd->get_group().empty(); }

bool has_name(const OptionDoc& opt, std::string_view name) {
  if (opt.positional == name) return true;
  return std::find(opt.long_names.begin(), opt.long_names.end(), name) != opt.long_names.end();
}

// "TEXT:{trace,debug}" -> {"trace", "debug"}: the set of a CLI::IsMember validator.
std::vector<std::string> member_set(const std::string& type_name) {
  std::size_t open = type_name.find(":{");
  std::size_t close = open == std::string::npos ? open : type_name.find('}', open);
  if (close == std::string::npos) return {};
  std::vector<std::string> values;
  std::stringstream items(type_name.substr(open + 2, close - open - 2));
  for (std::string item; std::getline(items, item, ',');) values.push_back(item);
  return values;
}

std::string one_line(std::string text) {
  std::replace(text.begin(), text.end(), '\n', ' ');
  return text;
}

OptionDoc describe_option(const CLI::Option& opt) {
  OptionDoc doc;
  for (const std::string& s : opt.get_snames()) doc.short_names.push_back("-" + s);
  for (const std::string& l : opt.get_lnames()) doc.long_names.push_back("--" + l);
  if (!opt.nonpositional()) doc.positional = opt.get_name(true);
  doc.description = one_line(opt.get_description());
  std::string type_name = opt.get_type_name();
  doc.value_name = type_name.substr(0, type_name.find(':'));
  doc.default_value = opt.get_default_str();
  doc.required = opt.get_required();
  bool takes_value = opt.get_items_expected_max() > 0;
  doc.repeatable = takes_value && opt.get_expected_max() > 1;
  doc.choices = member_set(type_name);
  doc.kind = !takes_value ? ValueKind::None : doc.choices.empty() ? ValueKind::Other : ValueKind::Choice;
  return doc;
}

CommandDoc describe_command(const CLI::App& cmd) {
  CommandDoc doc{cmd.get_name(), one_line(cmd.get_description()), {}, {}};
  for (const CLI::Option* opt : cmd.get_options()) {
    if (opt->get_group().empty()) continue;  // hidden
    OptionDoc option = describe_option(*opt);
    (option.positional.empty() ? doc.options : doc.positionals).push_back(std::move(option));
  }
  return doc;
}

OptionDoc& find_option(CliDoc& doc, std::string_view command, std::string_view name) {
  for (CommandDoc& cmd : doc.commands) {
    if (cmd.name != command) continue;
    for (OptionDoc& opt : cmd.options)
      if (has_name(opt, name)) return opt;
    for (OptionDoc& opt : cmd.positionals)
      if (has_name(opt, name)) return opt;
  }
  throw std::invalid_argument("generate-docs: '" + std::string(command) + " " + std::string(name) +
                              "' is not in the command-line definition (stale table in shell_docs.cpp)");
}

void apply_tables(CliDoc& doc) {
  for (const ValueChoices& entry : value_choices()) {
    OptionDoc& opt = find_option(doc, entry.command, entry.long_name);
    opt.kind = ValueKind::Choice;
    opt.choices.assign(entry.values.begin(), entry.values.end());
  }
  for (const ValueHint& hint : kValueHints) find_option(doc, hint.command, hint.name).kind = hint.kind;
}

std::string join(const std::vector<std::string>& items, std::string_view separator) {
  std::string out;
  for (const std::string& item : items) {
    if (!out.empty()) out += separator;
    out += item;
  }
  return out;
}

std::vector<std::string> all_names(const OptionDoc& opt) {
  std::vector<std::string> names = opt.short_names;
  names.insert(names.end(), opt.long_names.begin(), opt.long_names.end());
  return names;
}

// ---- man page ------------------------------------------------------------------------------

// Text for a roff body line: backslashes and hyphens escaped (a hyphen in an option name must
// be \- to be copied as one), and a leading control character neutralised.
std::string roff(std::string_view text) {
  std::string out;
  for (char c : text) {
    if (c == '\\') out += "\\e";
    else if (c == '-') out += "\\-";
    else out += c;
  }
  if (!out.empty() && (out[0] == '.' || out[0] == '\'')) out.insert(0, "\\&");
  return out;
}

std::string man_option_tag(const OptionDoc& opt) {
  if (!opt.positional.empty())
    return "\\fI" + roff(opt.positional) + "\\fR" + (opt.repeatable ? " ..." : "");
  std::vector<std::string> names;
  for (const std::string& name : all_names(opt)) names.push_back("\\fB" + roff(name) + "\\fR");
  std::string tag = join(names, ", ");
  if (opt.kind != ValueKind::None) tag += " \\fI" + roff(opt.value_name) + "\\fR";
  return tag;
}

std::string man_option_body(const OptionDoc& opt) {
  std::string body = roff(opt.description);
  if (!opt.choices.empty()) body += "\n.br\nValues: " + roff(join(opt.choices, ", ")) + ".";
  if (!opt.default_value.empty()) body += "\n.br\nDefault: " + roff(opt.default_value) + ".";
  if (opt.required) body += "\n.br\nRequired.";
  if (opt.repeatable && opt.positional.empty()) body += "\n.br\nMay be given more than once.";
  return body;
}

void man_options(std::ostream& out, const std::vector<OptionDoc>& options) {
  for (const OptionDoc& opt : options)
    out << ".TP\n" << man_option_tag(opt) << "\n" << man_option_body(opt) << "\n";
}

std::string usage_line(const CliDoc& doc, const CommandDoc& cmd) {
  std::string line = "\\fB" + roff(doc.program + " " + cmd.name) + "\\fR [\\fIOPTIONS\\fR]";
  for (const OptionDoc& pos : cmd.positionals) {
    std::string name = "\\fI" + roff(pos.positional) + "\\fR" + (pos.repeatable ? " ..." : "");
    line += pos.required ? " " + name : " [" + name + "]";
  }
  return line;
}

}  // namespace

CliDoc describe_cli(const CLI::App& app, std::string_view version) {
  CliDoc doc;
  doc.program = app.get_name();
  doc.summary = one_line(app.get_description());
  if (doc.summary.starts_with(doc.program + ": ")) doc.summary.erase(0, doc.program.size() + 2);
  doc.version = std::string(version);
  doc.top = describe_command(app);
  for (const CLI::App* cmd : app.get_subcommands([](const CLI::App* c) { return is_visible(c); }))
    doc.commands.push_back(describe_command(*cmd));
  for (const RuleInfo& rule : rule_catalogue()) doc.rule_codes.emplace_back(rule.code);
  apply_tables(doc);
  return doc;
}

std::string man_page(const CliDoc& doc) {
  std::ostringstream out;
  std::string upper = doc.program;
  std::transform(upper.begin(), upper.end(), upper.begin(), [](unsigned char c) { return std::toupper(c); });
  out << ".\\\" Generated from the command-line definition by `" << doc.program
      << " generate-docs man`; do not edit.\n"
      << ".TH " << upper << " 1 \"\" \"" << roff(doc.program + " " + doc.version) << "\" \"User Commands\"\n"
      << ".SH NAME\n" << roff(doc.program) << " \\- " << roff(doc.summary) << "\n"
      << ".SH SYNOPSIS\n"
      << "\\fB" << roff(doc.program) << "\\fR [\\fIOPTIONS\\fR] \\fICOMMAND\\fR [\\fIARGS\\fR]\n.br\n"
      << "\\fB" << roff(doc.program) << "\\fR [\\fIPATH\\fR ...]\n"
      << ".SH DESCRIPTION\n\\fB" << roff(doc.program) << "\\fR " << roff(doc.summary) << ".\n.PP\n"
      << "\\fB" << roff(doc.program) << " \\fIPATH\\fR ...\\fR is shorthand for \\fB" << roff(doc.program)
      << " check \\fIPATH\\fR ...\\fR.\n"
      << "Every command accepts \\fB\\-h\\fR, \\fB\\-\\-help\\fR.\n"
      << ".SH OPTIONS\n";
  man_options(out, doc.top.options);
  out << ".SH COMMANDS\n";
  for (const CommandDoc& cmd : doc.commands) {
    out << ".SS \"" << roff(doc.program + " " + cmd.name) << "\"\n"
        << usage_line(doc, cmd) << "\n.PP\n" << roff(cmd.description) << ".\n";
    man_options(out, cmd.positionals);
    man_options(out, cmd.options);
  }
  out << ".SH \"RULE CODES\"\n" << roff(join(doc.rule_codes, ", ")) << ".\n"
      << "\\fB" << roff(doc.program) << " rules\\fR lists them; \\fB" << roff(doc.program)
      << " explain \\fICODE\\fR explains one.\n"
      << ".SH \"EXIT STATUS\"\nOf \\fB" << roff(doc.program) << " check\\fR:\n"
      << ".TP\n" << kExitClean << "\nNo finding at or above the \\fB\\-\\-fail\\-on\\fR level.\n"
      << ".TP\n" << kExitFindings << "\nFindings at or above that level, or a file that could not be checked.\n"
      << ".TP\n" << kExitUsage << "\nA bad invocation: an unknown flag value or a missing path.\n"
      << ".SH ENVIRONMENT\n.TP\n.B NO_COLOR\nWhen set and not empty, terminal output has no colour.\n"
      << ".SH FILES\n.TP\n.I .preflight.toml\n.TQ\n.I pyproject.toml\n"
      << "Configuration (\\fB[tool.preflight]\\fR in pyproject.toml), found by walking up from each "
         "checked path; \\fB\\-\\-config\\fR names one instead.\n"
      << ".SH \"SEE ALSO\"\n"
      << "README.md and docs/rules.md in the package's documentation directory.\n";
  return out.str();
}

// ---- bash ----------------------------------------------------------------------------------

namespace {

std::string sh_quote(std::string_view text) {
  std::string out = "'";
  for (char c : text) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

std::vector<std::string> command_names(const CliDoc& doc) {
  std::vector<std::string> names;
  for (const CommandDoc& cmd : doc.commands) names.push_back(cmd.name);
  return names;
}

std::vector<std::string> option_words(const CommandDoc& cmd) {
  std::vector<std::string> words;
  for (const OptionDoc& opt : cmd.options)
    for (const std::string& name : all_names(opt)) words.push_back(name);
  return words;
}

// What _preflight_value prints for an option that takes a value.
std::string bash_value_spec(const OptionDoc& opt) {
  switch (opt.kind) {
    case ValueKind::Choice: return "choice " + join(opt.choices, " ");
    case ValueKind::RuleCodes: return "codes";
    case ValueKind::Path: return "path";
    default: return "other";
  }
}

void bash_case_arm(std::ostream& out, const std::vector<std::string>& patterns, const std::string& body) {
  std::vector<std::string> quoted;
  for (const std::string& p : patterns) quoted.push_back(sh_quote(p));
  out << "    " << join(quoted, "|") << ") echo " << sh_quote(body) << " ;;\n";
}

}  // namespace

std::string bash_completion(const CliDoc& doc) {
  std::ostringstream out;
  const std::string& p = doc.program;
  out << "# bash completion for " << p << " " << doc.version
      << ", generated from its command-line definition by `" << p
      << " generate-docs bash`; do not edit.\n\n"
      << "_" << p << "_commands=" << sh_quote(join(command_names(doc), " ")) << "\n"
      << "_" << p << "_rule_codes=" << sh_quote(join(doc.rule_codes, " ")) << "\n\n"
      << "# The options of a command (\"\" is the top level).\n"
      << "_" << p << "_options() {\n  case $1 in\n";
  bash_case_arm(out, {""}, join(option_words(doc.top), " "));
  for (const CommandDoc& cmd : doc.commands) bash_case_arm(out, {cmd.name}, join(option_words(cmd), " "));
  out << "  esac\n}\n\n"
      << "# What the value of option $2 of command $1 is: choice WORDS, codes, path or other;\n"
      << "# nothing for a flag.\n"
      << "_" << p << "_value() {\n  case \"$1 $2\" in\n";
  for (const CommandDoc& cmd : doc.commands)
    for (const OptionDoc& opt : cmd.options) {
      if (opt.kind == ValueKind::None) continue;
      std::vector<std::string> patterns;
      for (const std::string& name : all_names(opt)) patterns.push_back(cmd.name + " " + name);
      bash_case_arm(out, patterns, bash_value_spec(opt));
    }
  out << "  esac\n}\n\n"
      << "# What a command's positional arguments are.\n"
      << "_" << p << "_positional() {\n  case $1 in\n";
  for (const CommandDoc& cmd : doc.commands)
    if (!cmd.positionals.empty()) bash_case_arm(out, {cmd.name}, bash_value_spec(cmd.positionals.front()));
  out << "  esac\n}\n\n";
  out << R"BASH(# Rule codes, completing the last item of a comma-separated list.
_@P@_complete_codes() {
  local cur=$1 head=
  [[ $cur == *,* ]] && head=${cur%,*}, && cur=${cur##*,}
  COMPREPLY=($(compgen -P "$head" -W "$_@P@_rule_codes" -- "${cur^^}"))
}

_@P@_complete_spec() {
  case $1 in
    choice\ *) COMPREPLY=($(compgen -W "${1#choice }" -- "$2")) ;;
    codes) _@P@_complete_codes "$2" ;;
    path) compopt -o filenames 2>/dev/null; COMPREPLY=($(compgen -f -- "$2")) ;;
  esac
}

_@P@() {
  local cur=${COMP_WORDS[COMP_CWORD]} prev= cmd= word i option_head=
  ((COMP_CWORD > 0)) && prev=${COMP_WORDS[COMP_CWORD - 1]}
  COMPREPLY=()
  # --opt=value: split at the '=' into words of its own (COMP_WORDBREAKS has '='), or one word
  # whose replacements must keep the "--opt=".
  if [[ $cur == = ]]; then
    cur=
  elif [[ $prev == = ]] && ((COMP_CWORD > 1)); then
    prev=${COMP_WORDS[COMP_CWORD - 2]}
  elif [[ $cur == --*=* ]]; then
    option_head=${cur%%=*}= prev=${cur%%=*} cur=${cur#*=}
  fi
  # The command is the first word that is not an option; a path there means `check`.
  for ((i = 1; i < COMP_CWORD; i++)); do
    word=${COMP_WORDS[i]}
    [[ $word == -* ]] && continue
    if [[ " $_@P@_commands " == *" $word "* ]]; then cmd=$word; else cmd=check; fi
    break
  done
  local spec=
  [[ -n $cmd && $prev == -* ]] && spec=$(_@P@_value "$cmd" "$prev")
  if [[ -n $spec ]]; then
    _@P@_complete_spec "$spec" "$cur"
  elif [[ $cur == -* ]]; then
    COMPREPLY=($(compgen -W "$(_@P@_options "$cmd")" -- "$cur"))
  elif [[ -z $cmd ]]; then
    compopt -o filenames 2>/dev/null
    COMPREPLY=($(compgen -W "$_@P@_commands" -- "$cur") $(compgen -f -- "$cur"))
  else
    _@P@_complete_spec "$(_@P@_positional "$cmd")" "$cur"
  fi
  [[ -n $option_head ]] && COMPREPLY=("${COMPREPLY[@]/#/$option_head}")
  return 0
}
complete -o bashdefault -o default -F _@P@ @P@
)BASH";
  std::string text = out.str();
  for (std::size_t at = text.find("@P@"); at != std::string::npos; at = text.find("@P@", at))
    text.replace(at, 3, p);
  return text;
}

// ---- zsh -----------------------------------------------------------------------------------

namespace {

// A description inside an _arguments spec's [...] (itself inside single quotes).
std::string zsh_description(std::string_view text) {
  std::string out;
  for (char c : text) {
    if (c == '[' || c == ']' || c == '\\') out += '\\';
    out += c;
  }
  return out;
}

std::string zsh_action(const OptionDoc& opt, const std::string& program) {
  switch (opt.kind) {
    case ValueKind::Choice: return "(" + join(opt.choices, " ") + ")";
    case ValueKind::RuleCodes: return "_" + program + "_rule_codes";
    case ValueKind::Path: return "_files";
    default: return " ";
  }
}

std::string zsh_option_spec(const OptionDoc& opt, const std::string& program) {
  std::vector<std::string> names = all_names(opt);
  bool takes_value = opt.kind != ValueKind::None;
  std::string head;
  if (opt.repeatable) head = "*";
  else if (names.size() > 1) head = "(" + join(names, " ") + ")";
  std::string tail = "[" + zsh_description(opt.description) + "]";
  if (takes_value) tail += ":" + zsh_description(opt.value_name) + ":" + zsh_action(opt, program);
  std::vector<std::string> forms;
  for (const std::string& name : names)
    forms.push_back(name + (!takes_value ? "" : name.starts_with("--") ? "=" : "+"));
  std::string quoted_tail = sh_quote(tail);
  if (forms.size() == 1) return sh_quote(head + forms[0] + tail);
  return sh_quote(head) + "{" + join(forms, ",") + "}" + quoted_tail;
}

void zsh_arguments(std::ostream& out, const CommandDoc& cmd, const std::string& program) {
  out << "  _arguments -s -S";
  for (const OptionDoc& opt : cmd.options) out << " \\\n    " << zsh_option_spec(opt, program);
  for (const OptionDoc& pos : cmd.positionals) {
    std::string head = pos.repeatable ? "*" : "";
    out << " \\\n    "
        << sh_quote(head + ":" + zsh_description(pos.positional) + ":" + zsh_action(pos, program));
  }
  out << "\n";
}

}  // namespace

std::string zsh_completion(const CliDoc& doc) {
  std::ostringstream out;
  const std::string& p = doc.program;
  out << "#compdef " << p << "\n# zsh completion for " << p << " " << doc.version
      << ", generated from its command-line definition by `" << p << " generate-docs zsh`; do not edit.\n\n"
      << "_" << p << "_rule_codes() {\n  _values -s , 'rule code' " << join(doc.rule_codes, " ") << "\n}\n\n";
  for (const CommandDoc& cmd : doc.commands) {
    out << "_" << p << "_" << cmd.name << "() {\n";
    zsh_arguments(out, cmd, p);
    out << "}\n\n";
  }
  out << "_" << p << "() {\n  local -a commands\n  commands=(\n";
  for (const CommandDoc& cmd : doc.commands)
    out << "    " << sh_quote(cmd.name + ":" + cmd.description) << "\n";
  out << "  )\n"
      << "  if (( CURRENT == 2 )) && [[ $words[2] != -* ]]; then\n"
      << "    _describe -t commands '" << p << " command' commands\n"
      << "    _files  # `" << p << " PATH` is `" << p << " check PATH`\n"
      << "  elif (( ${+functions[_" << p << "_$words[2]]} )); then\n"
      << "    local cmd=$words[2]\n    shift words\n    (( CURRENT-- ))\n"
      << "    _" << p << "_$cmd\n"
      << "  elif [[ $words[2] == -* ]]; then\n";
  zsh_arguments(out, doc.top, p);
  out << "  else\n    _" << p << "_check\n  fi\n}\n\n_" << p << " \"$@\"\n";
  return out.str();
}

// ---- fish ----------------------------------------------------------------------------------

namespace {

std::string fish_quote(std::string_view text) {
  std::string out = "'";
  for (char c : text) {
    if (c == '\'' || c == '\\') out += '\\';
    out += c;
  }
  return out + "'";
}

std::string fish_option_line(const std::string& program, const std::string& condition, const OptionDoc& opt,
                             const std::vector<std::string>& rule_codes) {
  std::string line = "complete -c " + program + " -n " + fish_quote(condition);
  for (const std::string& s : opt.short_names) line += " -s " + s.substr(1);
  for (const std::string& l : opt.long_names) line += " -l " + l.substr(2);
  switch (opt.kind) {
    case ValueKind::None: break;
    case ValueKind::Choice: line += " -x -a " + fish_quote(join(opt.choices, " ")); break;
    case ValueKind::RuleCodes: line += " -x -a " + fish_quote(join(rule_codes, " ")); break;
    case ValueKind::Path: line += " -r -F"; break;
    case ValueKind::Other: line += " -x"; break;
  }
  return line + " -d " + fish_quote(opt.description) + "\n";
}

}  // namespace

std::string fish_completion(const CliDoc& doc) {
  std::ostringstream out;
  const std::string& p = doc.program;
  std::string names = join(command_names(doc), " ");
  std::string top = "not __fish_seen_subcommand_from " + names;
  out << "# fish completion for " << p << " " << doc.version
      << ", generated from its command-line definition by `" << p << " generate-docs fish`; do not edit.\n"
      << "# Before a command, a path is offered too: `" << p << " PATH` is `" << p << " check PATH`.\n";
  for (const CommandDoc& cmd : doc.commands)
    out << "complete -c " << p << " -n " << fish_quote(top) << " -a " << cmd.name << " -d "
        << fish_quote(cmd.description) << "\n";
  for (const OptionDoc& opt : doc.top.options) out << fish_option_line(p, top, opt, doc.rule_codes);
  for (const CommandDoc& cmd : doc.commands) {
    std::string in_cmd = "__fish_seen_subcommand_from " + cmd.name;
    out << "\n";
    if (cmd.positionals.empty() || cmd.positionals.front().kind != ValueKind::Path)
      out << "complete -c " << p << " -n " << fish_quote(in_cmd) << " -f\n";
    if (!cmd.positionals.empty() && cmd.positionals.front().kind == ValueKind::RuleCodes)
      out << "complete -c " << p << " -n " << fish_quote(in_cmd) << " -a " << fish_quote(join(doc.rule_codes, " "))
          << "\n";
    for (const OptionDoc& opt : cmd.options) out << fish_option_line(p, in_cmd, opt, doc.rule_codes);
  }
  return out.str();
}

// ---- the hidden command --------------------------------------------------------------------

CLI::App* add_generate_docs_command(CLI::App& app, GenerateDocsArgs& args) {
  CLI::App* cmd = app.add_subcommand("generate-docs", "Write the man page or a shell completion (build step)");
  cmd->group("");  // hidden: not in --help, the man page or the completions
  cmd->add_option("kind", args.kind, "man, bash, zsh or fish")
      ->required()
      ->check(CLI::IsMember({"man", "bash", "zsh", "fish"}));
  cmd->add_option("-o,--output", args.output, "Write here instead of stdout");
  return cmd;
}

int run_generate_docs(const CLI::App& app, const GenerateDocsArgs& args, std::ostream& out,
                      std::ostream& err) {
  std::string text;
  try {
    CliDoc doc = describe_cli(app, preflight_version());
    if (args.kind == "man") text = man_page(doc);
    else if (args.kind == "bash") text = bash_completion(doc);
    else if (args.kind == "zsh") text = zsh_completion(doc);
    else text = fish_completion(doc);
  } catch (const std::invalid_argument& e) {
    err << "preflight: error: " << e.what() << "\n";
    return kExitUsage;
  }
  if (args.output.empty()) {
    out << text;
    return kExitClean;
  }
  std::ofstream file(args.output, std::ios::binary | std::ios::trunc);
  file << text;
  file.close();
  if (!file) {
    err << "preflight: error: cannot write '" << args.output << "'\n";
    return kExitUsage;
  }
  return kExitClean;
}

}  // namespace preflight::server
