#include "server/cli/check_command.h"

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cctype>
#include <thread>

#include "rules/engine.h"
#include "server/cli/check_report.h"
#include "server/cli/diff.h"
#include "server/cli/discovery.h"
#include "server/cli/file_io.h"
#include "server/cli/parallel.h"
#include "server/cli/report_json.h"
#include "server/cli/report_terminal.h"

namespace preflight::server {

using analysis::Severity;
namespace fs = std::filesystem;

namespace {

enum class OutputFormat { Terminal, Json };
enum class FixMode { Off, Apply, Diff };

// The validated form of CheckArgs.
struct CheckSettings {
  rules::CheckOptions options;
  Severity fail_on = Severity::Error;
  OutputFormat format = OutputFormat::Terminal;
  FixMode fix_mode = FixMode::Off;
  unsigned jobs = 1;
  TerminalOptions terminal;
};

std::string upper(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return out;
}

std::string lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

std::string_view trim(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  return s;
}

std::optional<OutputFormat> parse_format(std::string_view value, std::ostream& err) {
  std::string v = lower(value);
  if (v == "terminal") return OutputFormat::Terminal;
  if (v == "json") return OutputFormat::Json;
  if (v == "github" || v == "sarif")
    err << "preflight: error: --format " << v << " is not available yet (use terminal or json)\n";
  else
    err << "preflight: error: invalid --format '" << value << "' (expected terminal or json)\n";
  return std::nullopt;
}

unsigned resolve_jobs(unsigned requested) {
  if (requested > 0) return requested;
  return std::max(1u, std::thread::hardware_concurrency());
}

std::optional<CheckSettings> resolve_settings(const CheckArgs& args, const CheckIo& io) {
  CheckSettings s;
  std::optional<Severity> fail_on = parse_fail_on(args.fail_on);
  if (!fail_on) {
    io.err << "preflight: error: invalid --fail-on '" << args.fail_on
           << "' (expected error, warning or note)\n";
    return std::nullopt;
  }
  std::optional<OutputFormat> format = parse_format(args.format, io.err);
  if (!format) return std::nullopt;
  s.fail_on = *fail_on;
  s.format = *format;
  s.options.select = parse_rule_codes(args.select, "--select", io.err);
  s.options.ignore = parse_rule_codes(args.ignore, "--ignore", io.err);
  // --diff shows what --fix would do and never writes, so it wins when both are given.
  s.fix_mode = args.diff ? FixMode::Diff : args.fix ? FixMode::Apply : FixMode::Off;
  s.jobs = resolve_jobs(args.jobs);
  s.terminal = {io.color_capable && !args.no_color, args.quiet, s.fix_mode == FixMode::Apply};
  return s;
}

std::vector<FileOutcome> check_all(const std::vector<SourceFile>& files, const CheckSettings& s,
                                   const SourceChecker& checker) {
  std::vector<FileOutcome> outcomes(files.size());
  bool plan = s.fix_mode != FixMode::Off;
  parallel_for(files.size(), s.jobs, [&](std::size_t i) {
    outcomes[i] = check_file(files[i], s.options, plan, checker);
  });
  return outcomes;
}

// Writes the fixed files one at a time, in path order. A file that cannot be written keeps
// its original findings and gains a failure.
void write_fixes(std::vector<FileOutcome>& outcomes) {
  for (FileOutcome& o : outcomes) {
    if (!o.fixed) continue;
    std::string error = write_file_atomic(o.file.location, o.fixed->text);
    if (error.empty()) continue;
    o.original.failures.push_back("fixes not written: " + error);
    o.fixed.reset();
    o.fixed_count = 0;
  }
}

// `a/<path>` labels: relative to the working directory when the file lies under it.
std::string diff_path(const std::string& path, const fs::path& base_dir) {
  fs::path p(path);
  if (!p.is_absolute() || base_dir.empty()) return path;
  std::string rel = p.lexically_relative(base_dir.lexically_normal()).generic_string();
  if (!rel.empty() && !rel.starts_with("..")) return rel;
  return p.relative_path().generic_string();  // `a/tmp/x.py`, as git writes it, not `a//tmp`
}

void write_diffs(const std::vector<FileOutcome>& outcomes, const CheckIo& io) {
  for (const FileOutcome& o : outcomes) {
    if (!o.fixed) continue;
    std::string label = diff_path(o.file.path, io.base_dir);
    io.out << unified_diff(o.original.text, o.fixed->text, "a/" + label, "b/" + label);
  }
}

// With --fix the report shows the written text; otherwise (and for --diff, which gates on
// the unfixed findings) the original.
CheckReport build_report(std::vector<FileOutcome> outcomes, std::vector<FileFailure> failures,
                         FixMode mode) {
  CheckReport report;
  report.failures = std::move(failures);
  for (FileOutcome& o : outcomes) {
    if (o.skipped) {
      ++report.files_checked;
      continue;
    }
    bool use_fixed = mode == FixMode::Apply && o.fixed;
    FileState& state = use_fixed ? *o.fixed : o.original;
    if (use_fixed) report.fixed += o.fixed_count;
    if (state.failures.empty()) ++report.files_checked;
    for (std::string& error : state.failures) report.failures.push_back({o.file.path, error});
    report.files.push_back({o.file.path, std::move(state.text), std::move(state.findings)});
  }
  std::stable_sort(report.failures.begin(), report.failures.end(),
                   [](const FileFailure& a, const FileFailure& b) { return a.path < b.path; });
  return report;
}

void write_report(const CheckReport& report, const CheckSettings& s, const CheckIo& io) {
  if (s.fix_mode == FixMode::Diff) {
    // The diff is the whole of stdout; failures still need to be seen.
    for (const FileFailure& f : report.failures)
      io.err << f.path << ": " << f.error << "\n";
    return;
  }
  if (s.format == OutputFormat::Json) write_json_report(report, io.out);
  else write_terminal_report(report, s.terminal, io.out);
}

}  // namespace

std::set<std::string> parse_rule_codes(const std::vector<std::string>& values,
                                       std::string_view flag, std::ostream& err) {
  std::set<std::string> codes;
  for (const std::string& value : values) {
    std::string_view rest = value;
    while (!rest.empty()) {
      std::size_t comma = rest.find(',');
      std::string code = upper(trim(rest.substr(0, comma)));
      rest = comma == std::string_view::npos ? std::string_view{} : rest.substr(comma + 1);
      if (code.empty()) continue;
      if (!rules::is_known_rule(code))
        err << "preflight: warning: unknown rule code '" << code << "' in " << flag << "\n";
      codes.insert(std::move(code));
    }
  }
  return codes;
}

std::optional<Severity> parse_fail_on(std::string_view value) {
  std::string v = lower(value);
  if (v == "error") return Severity::Error;
  if (v == "warning") return Severity::Warning;
  if (v == "note") return Severity::Note;
  return std::nullopt;
}

CLI::App* add_check_command(CLI::App& app, CheckArgs& a) {
  CLI::App* cmd = app.add_subcommand("check", "Lint Python files and directories (default: .)");
  cmd->add_option("paths", a.paths, "Files or directories to check");
  cmd->add_option("-f,--format", a.format, "Output format: terminal or json");
  cmd->add_flag("--fix", a.fix, "Apply safe fixes in place");
  cmd->add_flag("--diff", a.diff, "Print the changes --fix would make, write nothing");
  // One value per occurrence: a list-valued flag must not swallow the paths after it.
  cmd->add_option("--select", a.select, "Run only these rules (comma-separated, repeatable)")
      ->allow_extra_args(false);
  cmd->add_option("--ignore", a.ignore, "Never run these rules (comma-separated, repeatable)")
      ->allow_extra_args(false);
  cmd->add_option("--exclude", a.exclude, "Skip paths matching this pattern (repeatable)")
      ->allow_extra_args(false);
  cmd->add_option("--fail-on", a.fail_on, "Lowest level that fails the run: error, warning, note");
  cmd->add_option("-j,--jobs", a.jobs, "Worker threads (default or 0: one per CPU)");
  cmd->add_flag("--no-color", a.no_color, "Plain terminal output");
  cmd->add_flag("-q,--quiet", a.quiet, "Omit source snippets");
  return cmd;
}

int run_check(const CheckArgs& args, const CheckIo& io, const SourceChecker& checker) {
  std::optional<CheckSettings> settings = resolve_settings(args, io);
  if (!settings) return kExitUsage;

  std::vector<std::string> paths = args.paths.empty() ? std::vector<std::string>{"."} : args.paths;
  DiscoveryResult found = discover_files(paths, {args.exclude, io.base_dir});
  for (const std::string& missing : found.missing)
    io.err << "preflight: error: path does not exist: " << missing << "\n";
  if (!found.missing.empty()) return kExitUsage;

  std::vector<FileOutcome> outcomes = check_all(found.files, *settings, checker);
  if (settings->fix_mode == FixMode::Apply) write_fixes(outcomes);
  if (settings->fix_mode == FixMode::Diff) write_diffs(outcomes, io);

  CheckReport report =
      build_report(std::move(outcomes), std::move(found.failures), settings->fix_mode);
  write_report(report, *settings, io);
  return gate_fails(report, settings->fail_on) ? kExitFindings : kExitClean;
}

}  // namespace preflight::server
