#include "server/lsp/lsp_command.h"

#include <spdlog/sinks/basic_file_sink.h>
#include <spdlog/sinks/stdout_sinks.h>
#include <spdlog/spdlog.h>

#include <unistd.h>

#include <iostream>

#include "server/cli/number_options.h"
#include "server/lsp/server.h"

namespace preflight::lsp {

CLI::App* add_lsp_command(CLI::App& app, LspArgs& args) {
  CLI::App* cmd = app.add_subcommand("lsp", "Run the language server over stdin/stdout (LSP 3.17)");
  cmd->add_option("--log-file", args.log_file, "Write the server log to this file instead of stderr");
  cmd->add_option("--log-level", args.log_level,
                  "trace, debug, info, warn, error or off (default: info into --log-file or onto a "
                  "terminal, warn when stderr is not a terminal)")
      ->check(CLI::IsMember({"trace", "debug", "info", "warn", "error", "off"}));
  cmd->add_option("--debounce-ms", args.debounce_ms, "Quiet time after an edit before it is analysed")
      ->check(server::integer_in(0, kMaxDebounceMs))
      ->capture_default_str();
  cmd->add_option("--analysis-timeout-ms", args.analysis_timeout_ms,
                  "Analysis time one document may take before it is reported as too complex (0: no limit)")
      ->check(server::integer_in(0, kMaxAnalysisTimeoutMs, "0: no limit"))
      ->capture_default_str();
  cmd->add_option("--workers", args.workers, "Analysis threads")
      ->check(server::integer_in(1, kMaxWorkers))
      ->capture_default_str();
  cmd->add_flag("--stdio", args.stdio, "Talk over stdin/stdout (the default and only transport)");
  return cmd;
}

std::string default_log_level(bool to_log_file, bool stderr_is_terminal) {
  return to_log_file || stderr_is_terminal ? "info" : "warn";
}

int run_lsp(const LspArgs& args) {
  std::shared_ptr<spdlog::logger> log;
  try {
    if (args.log_file.empty())
      log = std::make_shared<spdlog::logger>("preflight", std::make_shared<spdlog::sinks::stderr_sink_mt>());
    else
      log = std::make_shared<spdlog::logger>("preflight",
                                             std::make_shared<spdlog::sinks::basic_file_sink_mt>(args.log_file));
  } catch (const spdlog::spdlog_ex& e) {
    std::cerr << "preflight lsp: cannot open the log file: " << e.what() << "\n";
    return 2;
  }
  std::string level = args.log_level.empty()
                          ? default_log_level(!args.log_file.empty(), ::isatty(STDERR_FILENO) != 0)
                          : args.log_level;
  log->set_level(spdlog::level::from_str(level));
  log->flush_on(spdlog::level::info);
  ServerOptions options;
  options.debounce_ms = args.debounce_ms;
  options.workers = args.workers;
  options.analysis_budget = std::chrono::milliseconds(args.analysis_timeout_ms);
  options.log = log;
  return run_stdio_server(std::move(options));
}

}  // namespace preflight::lsp
