// The generator of the man page and the shell completions (server/cli/shell_docs.h): what it
// reads from a CLI11 App, and that a stale table of option values stops the build instead of
// producing completions for options that no longer exist. The installed files are checked
// against the real binary's --help by tests/install/.
#include <gtest/gtest.h>

#include <CLI/CLI.hpp>
#include <stdexcept>

#include "server/cli/check_command.h"
#include "server/cli/estimate_command.h"
#include "server/cli/gpus_command.h"
#include "server/cli/rule_commands.h"
#include "server/cli/shell_docs.h"

namespace preflight::server {
namespace {

// The CLI's commands as main.cpp registers them; `lsp` (in pf_lsp) is stood in for by its
// two options the generator's tables name.
struct FullCli {
  CLI::App app{"preflight: finds bugs", "preflight"};
  CheckArgs check;
  std::string rules_format, explain_code, log_file, log_level;
  EstimateArgs estimate;
  GpusArgs gpus;
  GenerateDocsArgs docs;
  FullCli() {
    app.set_version_flag("--version", "preflight 0");
    add_check_command(app, check);
    add_rules_command(app, rules_format);
    add_explain_command(app, explain_code);
    add_estimate_command(app, estimate);
    add_gpus_command(app, gpus);
    CLI::App* lsp = app.add_subcommand("lsp", "Run the language server");
    lsp->add_option("--log-file", log_file, ".starts with a dot");
    lsp->add_option("--log-level", log_level, "Level")->check(CLI::IsMember({"warn", "off"}));
    add_generate_docs_command(app, docs);
  }
};

const OptionDoc* find_option(const CliDoc& doc, std::string_view command, std::string_view name) {
  for (const CommandDoc& cmd : doc.commands)
    if (cmd.name == command)
      for (const OptionDoc& opt : cmd.options)
        for (const std::string& long_name : opt.long_names)
          if (long_name == name) return &opt;
  return nullptr;
}

TEST(ShellDocs, ReadsCommandsOptionsAndValuesFromTheDefinition) {
  FullCli cli;
  CliDoc doc = describe_cli(cli.app, "1.2.3");
  EXPECT_EQ(doc.summary, "finds bugs");
  std::vector<std::string> names;
  for (const CommandDoc& cmd : doc.commands) names.push_back(cmd.name);
  // generate-docs is hidden: not documented, not completed.
  EXPECT_EQ(names, (std::vector<std::string>{"check", "rules", "explain", "estimate", "gpus", "lsp"}));

  const OptionDoc* format = find_option(doc, "check", "--format");
  ASSERT_NE(format, nullptr);
  EXPECT_EQ(format->short_names, std::vector<std::string>{"-f"});
  EXPECT_EQ(format->kind, ValueKind::Choice);
  EXPECT_EQ(format->choices, (std::vector<std::string>{"terminal", "json", "github", "sarif"}));
  const OptionDoc* level = find_option(doc, "lsp", "--log-level");  // from CLI::IsMember
  ASSERT_NE(level, nullptr);
  EXPECT_EQ(level->choices, (std::vector<std::string>{"warn", "off"}));
  EXPECT_EQ(find_option(doc, "check", "--select")->kind, ValueKind::RuleCodes);
  EXPECT_TRUE(find_option(doc, "check", "--select")->repeatable);
  EXPECT_EQ(find_option(doc, "check", "--fix")->kind, ValueKind::None);
  EXPECT_EQ(find_option(doc, "check", "--config")->kind, ValueKind::Path);
  EXPECT_EQ(find_option(doc, "check", "--jobs")->kind, ValueKind::Other);
  EXPECT_EQ(doc.rule_codes.front(), "TG001");
}

TEST(ShellDocs, ManPageEscapesHyphensAndLeadingDots) {
  FullCli cli;
  std::string man = man_page(describe_cli(cli.app, "1.2.3"));
  EXPECT_NE(man.find(".TH PREFLIGHT 1 \"\" \"preflight 1.2.3\""), std::string::npos);
  EXPECT_NE(man.find("\\fB\\-f\\fR, \\fB\\-\\-format\\fR \\fITEXT\\fR"), std::string::npos);
  EXPECT_NE(man.find("\n\\&.starts with a dot\n"), std::string::npos);
  EXPECT_EQ(man.find("generate\\-docs\\fR"), std::string::npos);
  EXPECT_EQ(man.find(".SS \"preflight generate"), std::string::npos);
}

TEST(ShellDocs, CompletionsOfferTheValuesOfAnOption) {
  FullCli cli;
  CliDoc doc = describe_cli(cli.app, "1.2.3");
  EXPECT_NE(bash_completion(doc).find("'check -f'|'check --format') echo 'choice terminal json github sarif' ;;"),
            std::string::npos);
  EXPECT_NE(zsh_completion(doc).find("'(-f --format)'{-f+,--format=}'[Output format: terminal, json, github or "
                                     "sarif]:TEXT:(terminal json github sarif)'"),
            std::string::npos);
  EXPECT_NE(fish_completion(doc).find("complete -c preflight -n '__fish_seen_subcommand_from check' -s f -l "
                                      "format -x -a 'terminal json github sarif'"),
            std::string::npos);
}

TEST(ShellDocs, AStaleValueTableIsAnError) {
  CLI::App app{"preflight: finds bugs", "preflight"};
  CheckArgs check;
  add_check_command(app, check);  // no rules, estimate, gpus or lsp: their entries name nothing
  try {
    describe_cli(app, "1.2.3");
    FAIL() << "describe_cli accepted a table naming missing commands";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("'rules --format' is not in the command-line definition"),
              std::string::npos)
        << e.what();
  }
}

}  // namespace
}  // namespace preflight::server
