// The `preflight` executable: parses the command line and hands each subcommand to its
// implementation under server/cli/. `preflight PATH...` is shorthand for `check PATH...`.
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <string>
#include <string_view>
#include <vector>

#include "rules/engine.h"
#include "server/cli/check_command.h"
#include "server/cli/estimate_command.h"
#include "server/cli/gpus_command.h"
#include "server/cli/rule_commands.h"
#include "server/cli/shell_docs.h"
#include "server/cli/time_budget.h"
#include "server/cli/version.h"
#include "server/lsp/lsp_command.h"

namespace {

namespace server = preflight::server;

// argv with "check" inserted when the first argument is neither a subcommand nor a flag.
std::vector<std::string> with_implicit_check(int argc, char** argv, const CLI::App& app) {
  std::vector<std::string> args(argv, argv + argc);
  if (args.size() < 2 || args[1].starts_with("-")) return args;
  auto commands = app.get_subcommands([](const CLI::App*) { return true; });
  for (const CLI::App* cmd : commands)
    if (cmd->check_name(args[1])) return args;
  args.insert(args.begin() + 1, "check");
  return args;
}

bool stdout_wants_color() {
  const char* no_color = std::getenv("NO_COLOR");  // https://no-color.org
  return ::isatty(STDOUT_FILENO) && !(no_color && *no_color);
}

int run_check_here(const server::CheckArgs& args) {
  std::error_code ec;
  server::CheckIo io{std::cout, std::cerr, stdout_wants_color(), std::filesystem::current_path(ec)};
  auto budget = server::file_timeout_budget(args.file_timeout_s);
  auto checker = [budget](std::string_view text, const preflight::rules::CheckOptions& options) {
    return server::check_within(text, options, budget);
  };
  return server::run_check(args, io, checker);
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"preflight: finds silent, expensive bugs in PyTorch training code", "preflight"};
  app.set_version_flag("--version", "preflight " + std::string(server::preflight_version()));
  app.require_subcommand(0, 1);
  // A single-value flag given twice takes the last value, as torch-preflight does: CI
  // wrappers append their own `--format` / `--fail-on` to the user's arguments. Set before
  // any subcommand is added, because each subcommand copies these defaults when created;
  // list options (--select, paths, ...) keep every value.
  app.option_defaults()->multi_option_policy(CLI::MultiOptionPolicy::TakeLast);

  server::CheckArgs check_args;
  CLI::App* check = server::add_check_command(app, check_args);
  std::string rules_format = "text";
  CLI::App* rules = server::add_rules_command(app, rules_format);
  std::string explain_code;
  CLI::App* explain = server::add_explain_command(app, explain_code);
  server::EstimateArgs estimate_args;
  CLI::App* estimate = server::add_estimate_command(app, estimate_args);
  server::GpusArgs gpus_args;
  CLI::App* gpus = server::add_gpus_command(app, gpus_args);
  preflight::lsp::LspArgs lsp_args;
  CLI::App* lsp = preflight::lsp::add_lsp_command(app, lsp_args);
  // Hidden: the build writes the man page and the shell completions from this definition.
  server::GenerateDocsArgs docs_args;
  CLI::App* docs = server::add_generate_docs_command(app, docs_args);
  // Further subcommands (`lsp`, `estimate`, `gpus`) are registered here, each from its own
  // server/ module, and dispatched below; the check shorthand picks up their names itself.

  std::vector<std::string> args = with_implicit_check(argc, argv, app);
  std::vector<char*> raw;
  for (std::string& a : args) raw.push_back(a.data());
  try {
    app.parse(static_cast<int>(raw.size()), raw.data());
  } catch (const CLI::ParseError& e) {
    int code = app.exit(e);  // prints help, the version, or the error
    return code == 0 ? 0 : server::kExitUsage;
  }

  if (check->parsed()) return run_check_here(check_args);
  if (rules->parsed()) return server::run_rules(rules_format, std::cout, std::cerr);
  if (explain->parsed()) return server::run_explain(explain_code, std::cout, std::cerr);
  if (estimate->parsed()) return server::run_estimate(estimate_args, std::cout, std::cerr);
  if (gpus->parsed()) return server::run_gpus(gpus_args, std::cout, std::cerr);
  if (lsp->parsed()) return preflight::lsp::run_lsp(lsp_args);
  if (docs->parsed()) return server::run_generate_docs(app, docs_args, std::cout, std::cerr);
  std::cout << app.help();
  return 0;
}
