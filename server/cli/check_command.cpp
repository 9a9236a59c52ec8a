#include "server/cli/check_command.h"

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cmath>
#include <iterator>
#include <memory>
#include <tuple>

#include "rules/engine.h"
#include "server/cli/check_report.h"
#include "server/cli/diff.h"
#include "server/cli/discovery.h"
#include "server/cli/file_io.h"
#include "server/cli/number_options.h"
#include "server/cli/parallel.h"
#include "server/cli/project_scan.h"
#include "server/cli/report_github.h"
#include "server/cli/report_json.h"
#include "server/cli/report_sarif.h"
#include "server/cli/report_terminal.h"
#include "server/cli/run_settings.h"
#include "server/cli/version.h"

namespace preflight::server {

namespace fs = std::filesystem;

namespace {

// A link the walk did not follow is reported as a file that could not be read is: the code
// behind it was not checked, and a run must not look clean for it.
FileFailure link_outside_failure(const LinkOutside& link) {
  return {link.path, "not read: a symbolic link to " + link.target +
                         ", outside the paths given on the command line (name it there to check "
                         "it, or --exclude the link)"};
}

// Discovers each group's inputs with its own excludes, then merges the results. The walk
// stays within `roots` (the canonical command-line paths): a link out of them is not read.
DiscoveryResult discover_groups(const std::vector<ConfigGroup>& groups, const CheckIo& io,
                                const std::vector<fs::path>& roots) {
  DiscoveryResult all;
  for (std::size_t g = 0; g < groups.size(); ++g) {
    const FileSettings& settings = groups[g].settings;
    DiscoveryResult found =
        discover_files(groups[g].inputs, {settings.excludes, io.base_dir, settings.config_dir,
                                          settings.respect_gitignore, roots});
    for (SourceFile& f : found.files) f.group = g;
    std::move(found.files.begin(), found.files.end(), std::back_inserter(all.files));
    std::move(found.missing.begin(), found.missing.end(), std::back_inserter(all.missing));
    std::move(found.failures.begin(), found.failures.end(), std::back_inserter(all.failures));
    for (const LinkOutside& link : found.outside) all.failures.push_back(link_outside_failure(link));
  }
  sort_and_dedupe(all.files);
  // Inputs that overlap (`check . sub`) walk the same directories: one report each.
  auto key = [](const FileFailure& f) { return std::tie(f.path, f.error); };
  std::sort(all.failures.begin(), all.failures.end(),
            [&](const FileFailure& a, const FileFailure& b) { return key(a) < key(b); });
  all.failures.erase(std::unique(all.failures.begin(), all.failures.end(),
                                 [&](const FileFailure& a, const FileFailure& b) { return key(a) == key(b); }),
                     all.failures.end());
  return all;
}

// `a/<path>` labels: relative to the working directory when the file lies under it.
std::string diff_path(const std::string& path, const fs::path& base_dir) {
  fs::path p(path);
  if (!p.is_absolute() || base_dir.empty()) return path;
  std::string rel = p.lexically_relative(base_dir.lexically_normal()).generic_string();
  if (!rel.empty() && !rel.starts_with("..")) return rel;
  return p.relative_path().generic_string();  // `a/tmp/x.py`, as git writes it, not `a//tmp`
}

// One file's reported findings: PF100 for unused suppressions when asked for, then the
// configured severity overrides (before gating), in report order.
std::vector<analysis::Finding> reported_findings(FileState& state, const FileSettings& file_settings,
                                                 const CheckSettings& s) {
  std::vector<analysis::Finding> findings = std::move(state.findings);
  if (s.report_unused_ignores) {
    for (const rules::UnusedSuppression& u : state.unused)
      findings.push_back(unused_suppression_finding(state.text, u));
    sort_findings(findings);
  }
  apply_severity_overrides(findings, file_settings.severity);
  return findings;
}

std::unique_ptr<ReportWriter> make_writer(const CheckSettings& s, const CheckIo& io) {
  if (s.fix_mode == FixMode::Diff) return nullptr;  // the diff is the whole of stdout
  switch (s.format) {
    case OutputFormat::Json: return make_json_writer(io.out);
    case OutputFormat::Github: return make_github_writer(io.out);
    case OutputFormat::Sarif: return make_sarif_writer(io.out, preflight_version());
    case OutputFormat::Terminal: return make_terminal_writer(s.terminal, io.out);
  }
  return nullptr;
}

// Takes each checked file in path order and does its part of the run at once: writes its
// fixes (--fix) or prints its diff (--diff), hands its findings to the report and counts them.
// Nothing of a file is kept after that but its failures, so memory does not grow with the
// text of the tree.
class RunAssembler {
 public:
  RunAssembler(const std::vector<ConfigGroup>& groups, const CheckSettings& s, const CheckIo& io,
               std::vector<fs::path> write_roots)
      : groups_(groups), s_(s), io_(io), writer_(make_writer(s, io)),
        write_roots_(std::move(write_roots)) {
    totals_.explain_silence = s.explain_silence;
  }

  void take(FileOutcome o) {
    if (s_.fix_mode == FixMode::Apply) write_fix(o);
    if (s_.fix_mode == FixMode::Diff) write_diff(o);
    if (o.skipped) {
      ++totals_.files_checked;
      return;
    }
    // With --fix the report shows the written text; otherwise (and for --diff, which gates
    // on the unfixed findings) the original.
    bool use_fixed = s_.fix_mode == FixMode::Apply && o.fixed;
    FileState& state = use_fixed ? *o.fixed : o.original;
    if (use_fixed) totals_.fixed += o.fixed_count;
    if (state.failures.empty()) ++totals_.files_checked;
    for (std::string& error : state.failures) file_failures_.push_back({o.file.path, std::move(error)});
    const FileSettings& file_settings = groups_[o.file.group].settings;
    std::vector<analysis::Finding> findings = reported_findings(state, file_settings, s_);
    FileFindings file{o.file.path, std::move(state.text), std::move(findings), file_settings.fail_on};
    if (s_.explain_silence) file.silences = std::move(state.silences);
    count_file(totals_, file);
    if (writer_) writer_->file(file);
  }

  // Writes the end of the report; true when the run must exit 1.
  bool finish(std::vector<FileFailure> discovery_failures) {
    totals_.failures = std::move(discovery_failures);
    std::move(file_failures_.begin(), file_failures_.end(), std::back_inserter(totals_.failures));
    std::stable_sort(totals_.failures.begin(), totals_.failures.end(),
                     [](const FileFailure& a, const FileFailure& b) { return a.path < b.path; });
    if (writer_) {
      writer_->finish(totals_);
    } else {
      // --diff: the diff is the whole of stdout; failures still need to be seen.
      for (const FileFailure& f : totals_.failures) io_.err << f.path << ": " << f.error << "\n";
    }
    return gate_fails(totals_);
  }

 private:
  // A file that cannot be written keeps its original findings and gains a failure. The write
  // is refused when the file changed since it was read, or lies outside the paths given.
  void write_fix(FileOutcome& o) const {
    if (!o.fixed) return;
    WriteGuard guard{o.original.text, o.stamp, write_roots_};
    std::string error = write_file_atomic(o.file.location, o.fixed->text, guard);
    if (error.empty()) return;
    o.original.failures.push_back("fixes not written: " + error);
    o.fixed.reset();
    o.fixed_count = 0;
  }

  void write_diff(const FileOutcome& o) {
    if (!o.fixed) return;
    std::string label = diff_path(o.file.path, io_.base_dir);
    io_.out << unified_diff(o.original.text, o.fixed->text, "a/" + label, "b/" + label);
  }

  const std::vector<ConfigGroup>& groups_;
  const CheckSettings& s_;
  const CheckIo& io_;
  std::unique_ptr<ReportWriter> writer_;
  ReportTotals totals_;
  std::vector<FileFailure> file_failures_;
  std::vector<fs::path> write_roots_;  // canonical command-line paths: --fix writes within them
};

// How many checked files may wait per worker for an earlier, slower one to finish.
constexpr std::size_t kWaitingFilesPerJob = 64;

// Checks the files on the worker threads and hands each outcome to the assembler in path
// order as soon as every file before it is done.
void check_all(const std::vector<SourceFile>& files, const std::vector<ConfigGroup>& groups,
               const CheckSettings& s, const SourceChecker& checker, RunAssembler& run) {
  bool plan = s.fix_mode != FixMode::Off;
  // The files of the run are one project: what the others call decides some findings.
  bool project = s.project && std::any_of(groups.begin(), groups.end(),
                                          [](const ConfigGroup& g) { return reads_project(g.settings.options); });
  std::shared_ptr<const analysis::ProjectIndex> index = project ? index_project(files, s.jobs) : nullptr;
  ordered_parallel_for<FileOutcome>(
      files.size(), s.jobs, kWaitingFilesPerJob * std::max(1u, s.jobs),
      [&](std::size_t i) {
        rules::CheckOptions options = groups[files[i].group].settings.options;
        options.project = index;
        options.project_path = files[i].location;
        return check_file(files[i], options, plan, s.explain_silence, checker, s.fix_scope);
      },
      [&](FileOutcome&& outcome) { run.take(std::move(outcome)); });
}

}  // namespace

CLI::App* add_check_command(CLI::App& app, CheckArgs& a) {
  CLI::App* cmd = app.add_subcommand("check", "Lint Python files and directories (default: .)");
  cmd->add_option("paths", a.paths, "Files or directories to check");
  cmd->add_option("-f,--format", a.format, "Output format: terminal, json, github or sarif");
  cmd->add_flag("--fix", a.fix,
                "Apply safe fixes in place (fixes marked unsafe only with --unsafe-fixes)");
  cmd->add_flag("--diff", a.diff, "Print the changes --fix would make, write nothing");
  cmd->add_flag("--unsafe-fixes", a.unsafe_fixes,
                "With --fix (or --diff), also apply fixes marked unsafe, where a finding has no "
                "safe fix; without it unsafe fixes are never applied");
  // One value per occurrence: a list-valued flag must not swallow the paths after it.
  cmd->add_option("--select", a.select, "Run only these rules (comma-separated, repeatable)")
      ->allow_extra_args(false);
  cmd->add_option("--ignore", a.ignore, "Never run these rules (comma-separated, repeatable)")
      ->allow_extra_args(false);
  cmd->add_option("--exclude", a.exclude, "Skip paths matching this pattern (repeatable)")
      ->allow_extra_args(false);
  cmd->add_flag("--no-respect-gitignore", a.no_respect_gitignore,
                "Also check files that .gitignore files list (overrides the configuration's "
                "respect_gitignore; named files are always checked)");
  cmd->add_option("--fail-on", a.fail_on,
                  "Lowest level that fails the run: error, warning, note (default: the "
                  "configuration's fail_on, else error)");
  cmd->add_option("--target-gpu", a.target_gpu,
                  "GPU or cloud instance TG010 projects peak memory against (overrides the "
                  "configuration's target_gpu)");
  cmd->add_option("--config", a.config,
                  "Read this TOML file instead of discovering .preflight.toml / pyproject.toml "
                  "[tool.preflight] (or the torch-preflight names) upwards from each path");
  cmd->add_flag("--report-unused-ignores", a.report_unused_ignores,
                "Report suppression comments that silence nothing (PF100, a warning)");
  cmd->add_flag("--explain-silence", a.explain_silence,
                "Also list where a rule saw its pattern and stayed quiet on purpose (a framework "
                "does the work, or the deciding code cannot be seen), with the reason "
                "(terminal and json formats)");
  cmd->add_flag("--no-project", a.no_project,
                "Check each file alone: do not first read the other files of the run for how they "
                "call its routines and seed its generators (one parse less per file; findings that "
                "depend on other files keep their single-file severity)");
  cmd->add_option("-j,--jobs", a.jobs, "Worker threads (default or 0: one per CPU)")
      ->check(integer_in(0, kMaxJobs, "0: one per CPU"));
  cmd->add_option("--file-timeout", a.file_timeout_s,
                  "Seconds of analysis one file may take before it is reported as too complex "
                  "(default 30; 0: no limit)")
      ->check(number_in(0, kMaxFileTimeoutSeconds, "seconds", "0: no limit"));
  cmd->add_flag("--no-color", a.no_color, "Plain terminal output");
  cmd->add_flag("-q,--quiet", a.quiet, "Omit source snippets");
  return cmd;
}

int run_check(const CheckArgs& args, const CheckIo& io, const SourceChecker& checker) {
  std::optional<CheckSettings> settings = resolve_settings(args, io);
  if (!settings) return kExitUsage;

  std::vector<std::string> paths = args.paths.empty() ? std::vector<std::string>{"."} : args.paths;
  std::optional<std::vector<ConfigGroup>> groups =
      resolve_config_groups(paths, args, *settings, io);
  if (!groups) return kExitUsage;
  std::vector<fs::path> roots = canonical_roots(paths);
  DiscoveryResult found = discover_groups(*groups, io, roots);
  for (const std::string& missing : found.missing)
    io.err << "preflight: error: path does not exist: " << missing << "\n";
  if (!found.missing.empty()) return kExitUsage;

  RunAssembler run(*groups, *settings, io, std::move(roots));
  check_all(found.files, *groups, *settings, checker, run);
  return run.finish(std::move(found.failures)) ? kExitFindings : kExitClean;
}

}  // namespace preflight::server
