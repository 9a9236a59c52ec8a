// Configuration files (rules.md §6): `.preflight.toml` (the whole file is the table),
// `pyproject.toml` `[tool.preflight]`, and torch-preflight's names so its users can switch
// without edits: `.torch-preflight.toml`, `torch-preflight.toml`, `[tool.torch-preflight]`.
//
// Discovery walks up from a directory to the filesystem root; in each directory it tries
// `.preflight.toml`, `.torch-preflight.toml`, `torch-preflight.toml`, `pyproject.toml` (with
// either table, `[tool.preflight]` winning; one with neither is passed over). The first hit
// is used alone; files are never merged.
//
// Keys: select, ignore (rule codes, case-insensitive), exclude (glob patterns), fail_on,
// target_gpu, respect_gitignore (a boolean), and a [severity] sub-table code -> level. Unknown keys and unknown codes in
// select/ignore are warnings; a malformed file, a wrong type, an invalid level or an unknown
// code in [severity] is an error. Both read "path:line:col: warning|error: message".
#pragma once

#include <filesystem>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "analysis/findings.h"

namespace preflight::server {

struct Config {
  std::filesystem::path file;  // what was read; empty: no file, defaults
  std::filesystem::path dir;   // its directory: relative exclude patterns start here
  std::vector<std::string> select;  // upper-cased; empty: all rules
  std::vector<std::string> ignore;  // upper-cased
  std::vector<std::string> exclude;
  std::optional<analysis::Severity> fail_on;
  std::optional<std::string> target_gpu;  // the hardware TG010 projects against
  std::optional<bool> respect_gitignore;  // discovery skips .gitignore'd files (default true)
  std::map<std::string, analysis::Severity> severity;  // code -> level, applied before gating
};

struct ConfigResult {
  Config config;
  std::vector<std::string> warnings;  // one line each, no trailing newline
  std::string error;                  // non-empty: the configuration is unusable (exit 2)
  bool ok() const { return error.empty(); }
};

enum class ConfigKind {
  WholeFile,  // .preflight.toml and the torch-preflight file names
  Pyproject,  // [tool.preflight], else [tool.torch-preflight], else defaults
};

struct ConfigLocation {
  std::filesystem::path file;
  ConfigKind kind = ConfigKind::WholeFile;
  friend bool operator==(const ConfigLocation&, const ConfigLocation&) = default;
};

// The kind a file name implies: `pyproject.toml` is read for its tool table.
ConfigLocation config_location_for(const std::filesystem::path& file);

// The first configuration file from `start_dir` (absolute) up to the root, if any.
std::optional<ConfigLocation> find_config(const std::filesystem::path& start_dir);

// What the search from `start_dir` (absolute) up to the root can see: every candidate file
// that exists there, with its modification time and size. Two stamps differ when a
// configuration file that may apply was created, changed or removed; the server compares
// them for clients that cannot watch files.
struct ConfigStamp {
  struct Seen {
    std::filesystem::path file;
    std::filesystem::file_time_type modified;
    std::uintmax_t size = 0;
    friend bool operator==(const Seen&, const Seen&) = default;
  };
  std::vector<Seen> files;
  friend bool operator==(const ConfigStamp&, const ConfigStamp&) = default;
};
ConfigStamp config_stamp(const std::filesystem::path& start_dir);

// Reads and validates one file; messages name it as `display`.
ConfigResult load_config(const ConfigLocation& location, const std::string& display);

}  // namespace preflight::server
