// `preflight lsp`: the command-line face of the language server (logging flags, debounce).
#pragma once

#include <CLI/CLI.hpp>
#include <string>

#include "server/lsp/settings.h"

namespace preflight::lsp {

// The ranges of the numeric flags (docs/numbers.md); --debounce-ms shares kMaxDebounceMs
// (settings.h) with initializationOptions.debounceMs.
inline constexpr int kMaxAnalysisTimeoutMs = 86'400'000;  // a day
inline constexpr int kMaxWorkers = 64;

struct LspArgs {
  std::string log_file;         // empty: stderr
  std::string log_level;         // empty: default_log_level()
  int debounce_ms = 50;
  unsigned workers = 2;
  int analysis_timeout_ms = 10'000;  // per document analysis; past it: "too complex"
  bool stdio = true;  // vscode-languageclient passes --stdio; stdio is the only transport
};

CLI::App* add_lsp_command(CLI::App& app, LspArgs& args);

// `info` into a log file or onto a terminal; `warn` when stderr is not a terminal: an
// editor reads the server's stderr, and Neovim logs every line it gets there as an error.
std::string default_log_level(bool to_log_file, bool stderr_is_terminal);
int run_lsp(const LspArgs& args);

}  // namespace preflight::lsp
