#include "server/cli/discovery.h"

#include <fnmatch.h>

#include <algorithm>
#include <array>
#include <fstream>
#include <set>
#include <system_error>

#include "server/cli/file_io.h"

namespace preflight::server {
namespace fs = std::filesystem;

namespace {

constexpr std::array<std::string_view, 18> kBuiltinExcludes = {
    ".git",      ".hg",      ".svn",         ".tox",        ".nox",          ".venv",
    "venv",      "env",      "__pycache__",  "node_modules", "build",        "dist",
    ".eggs",     "site-packages", ".mypy_cache", ".pytest_cache", ".ruff_cache",
    ".ipynb_checkpoints"};

bool ends_with(std::string_view s, std::string_view suffix) {
  return s.size() >= suffix.size() && s.substr(s.size() - suffix.size()) == suffix;
}

// "./sub/" and "sub" name the same pattern.
std::string normalise_pattern(std::string_view p) {
  while (p.size() > 1 && p.back() == '/') p.remove_suffix(1);
  while (p.size() > 2 && p.substr(0, 2) == "./") p.remove_prefix(2);
  return std::string(p);
}

bool glob_match(const std::string& pattern, const std::string& text) {
  // No FNM_PATHNAME: like Python's fnmatch, `*` crosses '/'. No escapes either.
  return ::fnmatch(pattern.c_str(), text.c_str(), FNM_NOESCAPE) == 0;
}

std::string display_form(const fs::path& p) { return p.lexically_normal().generic_string(); }

// The path relative to the run's starting directory, or "" when it lies outside it.
std::string relative_form(const fs::path& display, const fs::path& base_dir) {
  if (base_dir.empty()) return {};
  std::error_code ec;
  fs::path absolute = fs::absolute(display, ec);
  if (ec) return {};
  fs::path rel = absolute.lexically_normal().lexically_relative(base_dir.lexically_normal());
  std::string s = rel.generic_string();
  if (s.empty() || s == "." || s.starts_with("..")) return {};
  return s;
}

// Without a trailing separator ("dir/." normalises to "dir/"), so that its parent is the
// directory above it.
fs::path absolute_normal(const fs::path& p) {
  std::error_code ec;
  fs::path absolute = fs::absolute(p, ec);
  fs::path normal = (ec ? p : absolute).lexically_normal();
  return normal.has_filename() ? normal : normal.parent_path();
}

// The directories above `dir` (absolute) whose .gitignore applies to it: those up to its
// repository's root, none when `dir` is not inside a repository (git reads no .gitignore
// there, and one in a home directory must not hide a project).
std::vector<fs::path> gitignore_ancestors(const fs::path& dir) {
  std::vector<fs::path> above;
  std::error_code ec;
  for (fs::path d = dir; !fs::exists(d / ".git", ec); d = d.parent_path()) {
    if (d.parent_path() == d || d.parent_path().empty()) return {};
    above.push_back(d.parent_path());
  }
  return above;
}

// The .gitignore patterns of one directory, and where they are matched from.
struct IgnoreScope {
  fs::path dir;  // absolute, normalised
  std::vector<std::string> patterns;
};

class Walker {
 public:
  Walker(const DiscoveryOptions& options, DiscoveryResult& result)
      : options_(options), result_(result) {
    for (const std::string& p : options.excludes)
      if (std::string n = normalise_pattern(p); !n.empty() && n != "/") patterns_.push_back(n);
  }

  void add_input(const std::string& input);

 private:
  void walk(const fs::path& dir, const fs::path& display, const fs::path& absolute);
  void visit_entry(const fs::directory_entry& entry, const fs::path& display,
                   const fs::path& absolute);
  bool user_excluded(const fs::path& display) const;
  bool gitignored(const fs::path& absolute) const;
  void push_gitignore(const fs::path& dir);
  bool leaves_confinement(const fs::directory_entry& entry, const fs::path& display);
  void add_file(const fs::path& location, const fs::path& display);

  const DiscoveryOptions& options_;
  DiscoveryResult& result_;
  std::vector<std::string> patterns_;
  std::vector<IgnoreScope> ignores_;  // the .gitignore files that apply where the walk is
  std::set<fs::path> visited_dirs_;  // canonical: a symlink cycle is entered once
};

void Walker::add_input(const std::string& input) {
  fs::path location(input);
  std::error_code ec;
  fs::file_status status = fs::status(location, ec);  // follows symlinks
  if (ec || !fs::exists(status)) {
    result_.missing.push_back(input);
    return;
  }
  if (fs::is_directory(status)) {
    fs::path absolute = absolute_normal(location);
    if (options_.respect_gitignore)
      for (const fs::path& dir : gitignore_ancestors(absolute)) push_gitignore(dir);
    walk(location, location.lexically_normal(), absolute);
    ignores_.clear();
    return;
  }
  // A named file is checked whatever the excludes say, but only if it is Python.
  if (!ends_with(input, ".py") && !ends_with(input, ".pyi")) return;
  if (!fs::is_regular_file(status)) {
    result_.failures.push_back({display_form(location), "could not read: not a regular file"});
    return;
  }
  add_file(location, location);
}

void Walker::walk(const fs::path& dir, const fs::path& display, const fs::path& absolute) {
  std::error_code ec;
  fs::path canonical = fs::canonical(dir, ec);
  if (ec || !visited_dirs_.insert(canonical).second) return;
  fs::directory_iterator it(dir, ec);
  if (ec) {
    result_.failures.push_back(
        {display_form(display), "could not read directory: " + ec.message()});
    return;
  }
  std::size_t scopes = ignores_.size();
  if (options_.respect_gitignore) push_gitignore(absolute);
  // Sorted, so that which of two links to one directory claims its files is reproducible.
  std::vector<fs::directory_entry> entries;
  for (; it != fs::directory_iterator(); it.increment(ec)) {
    if (ec) break;
    entries.push_back(*it);
  }
  std::sort(entries.begin(), entries.end());
  for (const fs::directory_entry& entry : entries)
    visit_entry(entry, display / entry.path().filename(), absolute / entry.path().filename());
  ignores_.resize(scopes);
}

void Walker::visit_entry(const fs::directory_entry& entry, const fs::path& display,
                         const fs::path& absolute) {
  std::error_code ec;
  if (entry.is_directory(ec)) {
    if (is_builtin_excluded(entry.path().filename().string()) || user_excluded(display) ||
        gitignored(absolute))
      return;
    if (!leaves_confinement(entry, display)) walk(entry.path(), display, absolute);
    return;
  }
  if (entry.path().extension() != ".py" || !entry.is_regular_file(ec)) return;
  if (!user_excluded(display) && !gitignored(absolute) && !leaves_confinement(entry, display))
    add_file(entry.path(), display);
}

void Walker::push_gitignore(const fs::path& dir) {
  std::vector<std::string> patterns = gitignore_patterns(dir);
  if (!patterns.empty()) ignores_.push_back({dir, std::move(patterns)});
}

bool Walker::gitignored(const fs::path& absolute) const {
  for (const IgnoreScope& scope : ignores_) {
    std::string relative = absolute.lexically_relative(scope.dir).generic_string();
    for (const std::string& p : scope.patterns)
      if (matches_exclude_pattern(relative, p)) return true;
  }
  return false;
}

// Only a link can lead out: the walk starts inside and enters nothing else.
bool Walker::leaves_confinement(const fs::directory_entry& entry, const fs::path& display) {
  std::error_code ec;
  if (options_.confine_to.empty() || !entry.is_symlink(ec)) return false;
  fs::path target = fs::canonical(entry.path(), ec);
  if (ec) return false;
  for (const fs::path& root : options_.confine_to)
    if (path_within(target, root)) return false;
  result_.outside.push_back({display_form(display), target.string()});
  return true;
}

bool Walker::user_excluded(const fs::path& display) const {
  if (patterns_.empty()) return false;
  std::string forms[] = {display_form(display), relative_form(display, options_.base_dir),
                         relative_form(display, options_.config_dir)};
  for (const std::string& p : patterns_)
    for (const std::string& form : forms)
      if (!form.empty() && matches_exclude_pattern(form, p)) return true;
  return false;
}

void Walker::add_file(const fs::path& location, const fs::path& display) {
  result_.files.push_back({display_form(display), location.native()});
}

}  // namespace

void sort_and_dedupe(std::vector<SourceFile>& files) {
  std::stable_sort(files.begin(), files.end(),
                   [](const SourceFile& a, const SourceFile& b) { return a.path < b.path; });
  std::set<std::string> seen;
  std::erase_if(files, [&seen](const SourceFile& f) {
    std::error_code ec;
    fs::path key = fs::weakly_canonical(f.location, ec);
    return !seen.insert(ec ? f.location : key.native()).second;
  });
}

bool is_builtin_excluded(std::string_view name) {
  return std::find(kBuiltinExcludes.begin(), kBuiltinExcludes.end(), name) !=
         kBuiltinExcludes.end();
}

std::vector<std::string> gitignore_patterns(const fs::path& dir) {
  std::vector<std::string> out;
  std::ifstream in(dir / ".gitignore");
  std::string line;
  while (std::getline(in, line)) {
    while (!line.empty() && (line.back() == '\r' || line.back() == ' ')) line.pop_back();
    if (line.empty() || line[0] == '#' || line[0] == '!') continue;
    if (line[0] == '/') line.erase(0, 1);
    if (line.empty()) continue;
    out.push_back(line);
  }
  return out;
}

bool matches_exclude_pattern(std::string_view path, std::string_view pattern) {
  std::string p = normalise_pattern(pattern);
  if (p.empty()) return false;
  std::string text(path);
  if (glob_match(p, text) || glob_match(p + "/*", text)) return true;
  return ("/" + text + "/").find("/" + p + "/") != std::string::npos;
}

DiscoveryResult discover_files(const std::vector<std::string>& inputs,
                               const DiscoveryOptions& options) {
  DiscoveryResult result;
  Walker walker(options, result);
  for (const std::string& input : inputs) walker.add_input(input);
  sort_and_dedupe(result.files);
  return result;
}

}  // namespace preflight::server
