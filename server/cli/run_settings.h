// What one `check` run does, resolved from the flags and the configuration files (§6.3):
// run-wide settings (format, --fix/--diff, jobs, colour) and, for each configuration file
// the inputs resolve to, the settings of the files found under those inputs (rules, severity
// overrides, gate, excludes). Command-line precedence: --select replaces the configured
// list, --ignore adds to it, --exclude appends, --fail-on and --target-gpu replace,
// --no-respect-gitignore turns respect_gitignore off.
#pragma once

#include <filesystem>
#include <map>
#include <optional>
#include <ostream>
#include <set>
#include <string>
#include <vector>

#include "rules/engine.h"
#include "server/cli/check_command.h"
#include "server/cli/config.h"
#include "server/cli/fix_apply.h"
#include "server/cli/report_terminal.h"

namespace preflight::server {

enum class OutputFormat { Terminal, Json, Github, Sarif };
enum class FixMode { Off, Apply, Diff };

// Run-wide: the validated flags.
struct CheckSettings {
  OutputFormat format = OutputFormat::Terminal;
  FixMode fix_mode = FixMode::Off;
  FixScope fix_scope = FixScope::SafeOnly;  // SafeAndUnsafe with --unsafe-fixes
  unsigned jobs = 1;
  TerminalOptions terminal;
  bool report_unused_ignores = false;
  bool explain_silence = false;  // list the rules' deliberate silences in the report
  bool project = true;  // the files of the run are one project (--no-project: each alone)
  // Command-line rule and gate settings, merged into each FileSettings.
  std::set<std::string> select;
  std::set<std::string> ignore;
  std::optional<analysis::Severity> fail_on;
};

// Per configuration file: how the files under its inputs are checked and gated.
struct FileSettings {
  rules::CheckOptions options;
  std::map<std::string, analysis::Severity> severity;
  analysis::Severity fail_on = analysis::Severity::Error;
  std::optional<std::string> target_gpu;
  std::vector<std::string> excludes;  // configured, then --exclude
  std::filesystem::path config_dir;   // empty without a configuration file
  bool respect_gitignore = true;      // discovery skips what .gitignore files list
};

// The inputs that share one configuration file (or none), with their merged settings.
struct ConfigGroup {
  std::filesystem::path config_file;  // empty: defaults
  std::vector<std::string> inputs;
  FileSettings settings;
};

// Validates the run-wide flags; prints the problem and returns nullopt on a bad value.
std::optional<CheckSettings> resolve_settings(const CheckArgs& args, const CheckIo& io);

// Finds (or, with --config, reads) the configuration of every input, prints its warnings once
// per file, and groups the inputs by file in first-seen order. Returns nullopt after printing
// the error when a configuration is unusable.
std::optional<std::vector<ConfigGroup>> resolve_config_groups(
    const std::vector<std::string>& inputs, const CheckArgs& args, const CheckSettings& settings,
    const CheckIo& io);

// The §6.3 merge of one configuration with the command line.
FileSettings merge_settings(const Config& config, const CheckArgs& args,
                            const CheckSettings& settings);

}  // namespace preflight::server
