// `preflight check PATH...`: configuration, discovery, parallel checking, --fix / --diff, the
// report in the chosen format, and the exit code (rules.md §5.3, §6, §8, §9). Everything the command prints
// goes to the streams in CheckIo, so tests can run it in-process with a fake engine.
#pragma once

#include <algorithm>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <optional>
#include <ostream>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "analysis/findings.h"
#include "server/cli/file_check.h"

namespace CLI {
class App;
}

namespace preflight::server {

inline constexpr int kExitClean = 0;     // nothing at or above the gate
inline constexpr int kExitFindings = 1;  // findings at or above the gate, or a file failure
inline constexpr int kExitUsage = 2;     // bad invocation: flag value, missing path

// -j's largest value: more threads than this only contend (the files are the limit anyway).
inline constexpr unsigned kMaxJobs = 1024;

// --file-timeout's largest value (about 11.6 days): any budget up to it fits the clock.
inline constexpr double kMaxFileTimeoutSeconds = 1e6;

// --file-timeout as a budget: 0 is none; any other value is at least 1 ms (a positive
// timeout below a millisecond must not round to "no limit").
inline std::chrono::milliseconds file_timeout_budget(double seconds) {
  if (!(seconds > 0)) return std::chrono::milliseconds(0);
  return std::chrono::milliseconds(static_cast<long long>(std::ceil(std::min(seconds, kMaxFileTimeoutSeconds) * 1000)));
}

// The flags as typed; validated by run_check.
struct CheckArgs {
  std::vector<std::string> paths;  // empty: "."
  std::string format = "terminal";
  bool fix = false;
  bool diff = false;
  bool unsafe_fixes = false;  // --fix / --diff also take fixes marked unsafe
  std::vector<std::string> select;
  std::vector<std::string> ignore;
  std::vector<std::string> exclude;
  bool no_respect_gitignore = false;  // also check what .gitignore files list
  std::string fail_on;     // empty: the configuration's, else "error"
  std::string target_gpu;  // empty: the configuration's
  std::string config;      // empty: discovered from each input
  bool report_unused_ignores = false;
  bool explain_silence = false;  // also list where rules stayed quiet on purpose, and why
  bool no_project = false;  // check each file alone, without the other files' calls
  unsigned jobs = 0;  // 0: one per hardware thread
  double file_timeout_s = 30;  // per-file analysis budget; past it the file is "too complex"; 0: none
  bool no_color = false;
  bool quiet = false;
};

struct CheckIo {
  std::ostream& out;
  std::ostream& err;
  bool color_capable = false;       // stdout is a terminal that wants colour
  std::filesystem::path base_dir;   // where the run started (absolute)
};

// Registers the `check` subcommand and its flags, writing into `args`.
CLI::App* add_check_command(CLI::App& app, CheckArgs& args);

int run_check(const CheckArgs& args, const CheckIo& io, const SourceChecker& checker);

// Repeated, comma-separated, case-insensitive codes -> upper-cased set. Unknown codes are
// kept (so `--select TG999` still selects nothing else) and warned about on `err`.
std::set<std::string> parse_rule_codes(const std::vector<std::string>& values,
                                       std::string_view flag, std::ostream& err);

std::optional<analysis::Severity> parse_fail_on(std::string_view value);

}  // namespace preflight::server
