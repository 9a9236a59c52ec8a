// Which files a `check` run reads (rules.md §8). Paths named on the command line must exist;
// a named .py/.pyi file is always checked, even inside an excluded directory; directories are
// walked recursively for *.py, pruning built-in excludes (.git, .venv, build, ...) and user
// patterns. Each file is returned once, sorted by its displayed path. Built-in excludes
// prune what the walk finds, so `check build/` still checks a directory named explicitly.
//
// Exclude patterns are matched against the path as discovered AND against the path relative
// to `base_dir` (the directory the run started from) AND, with a configuration file, relative
// to its directory, so `--exclude 'sub/*.py'` works the same for `check .` and
// `check /abs/project` (the reference matched the first form only).
//
// With `respect_gitignore` (check's default, and the server's workspace scan) the walk also
// skips what .gitignore files list: the .gitignore of every directory it walks, matched
// relative to that directory, and those of the directories above a named directory up to its
// repository's root (the first with a .git entry). Explicitly named files are still checked.
#pragma once

#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include "server/cli/check_report.h"

namespace preflight::server {

struct SourceFile {
  std::string path;                // shown to the user: lexically normalised, as given
  // What to open. A string, not a std::filesystem::path: a path also keeps a list of its
  // components (about 250 bytes per file here), and a run holds one per file discovered.
  std::string location;
  std::size_t group = 0;           // which configuration's settings apply (set by the caller)
};

struct DiscoveryOptions {
  std::vector<std::string> excludes;  // user patterns (configuration and --exclude)
  std::filesystem::path base_dir;     // absolute; relative-path matching starts here
  std::filesystem::path config_dir;   // absolute or empty; patterns also match relative to it
  bool respect_gitignore = false;     // skip what .gitignore files list (see above)
  // Canonical roots, or none: a symbolic link whose target lies outside every one of them is
  // not followed (the editor's workspace scan stays in its folder, `check` in the paths it
  // was given); it is listed in `outside` instead.
  std::vector<std::filesystem::path> confine_to;
};

// A link the walk did not follow because it leads out of DiscoveryOptions::confine_to.
struct LinkOutside {
  std::string path;    // the link, as discovered
  std::string target;  // where it resolves
};

struct DiscoveryResult {
  std::vector<SourceFile> files;      // sorted by path, each real file once
  std::vector<std::string> missing;   // inputs that do not exist: a bad invocation
  std::vector<FileFailure> failures;  // unreadable directories, non-regular .py files
  std::vector<LinkOutside> outside;   // with confine_to: links out of it, not followed
};

DiscoveryResult discover_files(const std::vector<std::string>& inputs,
                               const DiscoveryOptions& options);

// Sorts by displayed path and keeps the first entry for each real file (for merging the
// results of several discover_files calls).
void sort_and_dedupe(std::vector<SourceFile>& files);

// A directory name the walk never enters (.git, venv, __pycache__, ...).
bool is_builtin_excluded(std::string_view name);

// One directory's .gitignore as exclude patterns, matched with matches_exclude_pattern
// relative to that directory. A simplification of git's rules: comments, blank lines and
// negations (`!keep.py`) are skipped, a leading '/' is dropped (so the pattern also matches
// deeper down), and a trailing '/' matches files as well as directories.
std::vector<std::string> gitignore_patterns(const std::filesystem::path& dir);

// The reference's test for one pattern `p` (trailing '/' removed): shell-glob match of the
// whole path against `p` or `p/*` (where `*` also matches '/'), or "/p/" occurs in "/path/".
bool matches_exclude_pattern(std::string_view path, std::string_view pattern);

}  // namespace preflight::server
