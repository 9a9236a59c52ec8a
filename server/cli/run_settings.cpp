#include "server/cli/run_settings.h"

#include <algorithm>
#include <cctype>
#include <system_error>
#include <thread>

#include "estimator/catalog.h"
#include "estimator/hardware.h"

namespace preflight::server {

using analysis::Severity;
namespace fs = std::filesystem;

namespace {

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
  if (v == "github") return OutputFormat::Github;
  if (v == "sarif") return OutputFormat::Sarif;
  err << "preflight: error: invalid --format '" << value
      << "' (expected terminal, json, github or sarif)\n";
  return std::nullopt;
}

unsigned resolve_jobs(unsigned requested) {
  if (requested > 0) return requested;
  return std::max(1u, std::thread::hardware_concurrency());
}

// Lexically normalised, not canonical: exclude patterns compare it with discovered paths.
fs::path absolute_from(const fs::path& p, const fs::path& base_dir) {
  fs::path joined = p.is_absolute() || base_dir.empty() ? p : base_dir / p;
  std::error_code ec;
  if (!joined.is_absolute()) joined = fs::absolute(joined, ec);
  fs::path normal = joined.lexically_normal();
  std::string s = normal.string();  // "dir/" normalises with a trailing separator
  if (s.size() > 1 && s.back() == '/') normal = fs::path(s.substr(0, s.size() - 1));
  return normal;
}

// Where the walk up starts for one input: the directory itself, or a file's directory.
fs::path walk_start(const std::string& input, const fs::path& base_dir) {
  fs::path p = absolute_from(input, base_dir);
  std::error_code ec;
  return fs::is_directory(p, ec) ? p : p.parent_path();
}

// A configuration file as messages name it: relative to the working directory when under it.
std::string display_path(const fs::path& file, const fs::path& base_dir) {
  if (base_dir.empty()) return file.generic_string();
  fs::path rel = file.lexically_normal().lexically_relative(base_dir.lexically_normal());
  std::string s = rel.generic_string();
  if (s.empty() || s.starts_with("..")) return file.generic_string();
  return s;
}

std::optional<ConfigLocation> explicit_location(const CheckArgs& args, const CheckIo& io) {
  fs::path file = absolute_from(args.config, io.base_dir);
  std::error_code ec;
  if (!fs::is_regular_file(file, ec)) {
    io.err << "preflight: error: configuration file not found: " << args.config << "\n";
    return std::nullopt;
  }
  return config_location_for(file);
}

// Loads one configuration and prints what it says; nullopt after an error.
std::optional<Config> load_and_report(const ConfigLocation& location, const CheckIo& io) {
  ConfigResult loaded = load_config(location, display_path(location.file, io.base_dir));
  for (const std::string& w : loaded.warnings) io.err << w << "\n";
  if (!loaded.ok()) {
    io.err << loaded.error << "\n";
    return std::nullopt;
  }
  return std::move(loaded.config);
}

// The group of inputs under `file`, created (second = true) on first use.
std::pair<ConfigGroup&, bool> group_for(std::vector<ConfigGroup>& groups, const fs::path& file) {
  for (ConfigGroup& g : groups)
    if (g.config_file == file) return {g, false};
  groups.push_back({file, {}, {}});
  return {groups.back(), true};
}

// Each input's configuration: the --config file, or the first found walking up. Walks from
// each directory once (pre-commit passes every changed file).
class ConfigFinder {
 public:
  ConfigFinder(std::optional<ConfigLocation> forced, fs::path base_dir)
      : forced_(std::move(forced)), base_dir_(std::move(base_dir)) {}

  std::optional<ConfigLocation> for_input(const std::string& input) {
    if (forced_) return forced_;
    fs::path start = walk_start(input, base_dir_);
    auto it = found_from_.find(start);
    if (it == found_from_.end()) it = found_from_.emplace(start, find_config(start)).first;
    return it->second;
  }

 private:
  std::optional<ConfigLocation> forced_;
  fs::path base_dir_;
  std::map<fs::path, std::optional<ConfigLocation>> found_from_;
};

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

std::optional<CheckSettings> resolve_settings(const CheckArgs& args, const CheckIo& io) {
  CheckSettings s;
  if (!args.fail_on.empty()) {
    s.fail_on = parse_fail_on(args.fail_on);
    if (!s.fail_on) {
      io.err << "preflight: error: invalid --fail-on '" << args.fail_on
             << "' (expected error, warning or note)\n";
      return std::nullopt;
    }
  }
  std::optional<OutputFormat> format = parse_format(args.format, io.err);
  if (!format) return std::nullopt;
  s.format = *format;
  s.select = parse_rule_codes(args.select, "--select", io.err);
  s.ignore = parse_rule_codes(args.ignore, "--ignore", io.err);
  // --diff shows what --fix would do and never writes, so it wins when both are given.
  s.fix_mode = args.diff ? FixMode::Diff : args.fix ? FixMode::Apply : FixMode::Off;
  s.fix_scope = args.unsafe_fixes ? FixScope::SafeAndUnsafe : FixScope::SafeOnly;
  s.jobs = resolve_jobs(args.jobs);
  s.terminal = {io.color_capable && !args.no_color, args.quiet, s.fix_mode == FixMode::Apply};
  s.report_unused_ignores = args.report_unused_ignores;
  s.explain_silence = args.explain_silence;
  s.project = !args.no_project;
  return s;
}

FileSettings merge_settings(const Config& config, const CheckArgs& args,
                            const CheckSettings& settings) {
  FileSettings f;
  f.options.select = settings.select.empty()
                         ? std::set<std::string>(config.select.begin(), config.select.end())
                         : settings.select;
  f.options.ignore = settings.ignore;
  f.options.ignore.insert(config.ignore.begin(), config.ignore.end());
  f.severity = config.severity;
  f.fail_on = settings.fail_on.value_or(config.fail_on.value_or(Severity::Error));
  f.target_gpu = args.target_gpu.empty() ? config.target_gpu : args.target_gpu;
  f.options.target_gpu = f.target_gpu.value_or("");
  f.excludes = config.exclude;
  f.excludes.insert(f.excludes.end(), args.exclude.begin(), args.exclude.end());
  if (!config.file.empty()) f.config_dir = config.dir;
  f.respect_gitignore = !args.no_respect_gitignore && config.respect_gitignore.value_or(true);
  return f;
}

// An unknown target GPU is a configuration error, as for `estimate --gpu`: a typo must not
// switch the TG010 gate off without a word (rules.md TG010-N02, a reference weakness).
namespace {
bool target_gpu_resolves(const FileSettings& f, const fs::path& config_file, const CheckIo& io) {
  if (f.options.target_gpu.empty()) return true;
  std::string error;
  if (estimator::resolve_target(estimator::builtin_catalog(), f.options.target_gpu, std::nullopt, error)) return true;
  io.err << "preflight: target_gpu";
  if (!config_file.empty()) io.err << " (" << config_file.string() << ")";
  io.err << ": " << error << "\n";
  return false;
}
}  // namespace

std::optional<std::vector<ConfigGroup>> resolve_config_groups(
    const std::vector<std::string>& inputs, const CheckArgs& args, const CheckSettings& settings,
    const CheckIo& io) {
  std::optional<ConfigLocation> forced;
  if (!args.config.empty() && !(forced = explicit_location(args, io))) return std::nullopt;
  ConfigFinder finder(forced, io.base_dir);
  std::vector<ConfigGroup> groups;
  for (const std::string& input : inputs) {
    std::optional<ConfigLocation> location = finder.for_input(input);
    auto [group, created] = group_for(groups, location ? location->file : fs::path());
    group.inputs.push_back(input);
    if (!created) continue;
    std::optional<Config> config = location ? load_and_report(*location, io) : Config{};
    if (!config) return std::nullopt;
    group.settings = merge_settings(*config, args, settings);
    if (!target_gpu_resolves(group.settings, location ? location->file : fs::path(), io)) return std::nullopt;
  }
  return groups;
}

}  // namespace preflight::server
