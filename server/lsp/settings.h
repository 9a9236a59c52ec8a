// The settings one document is checked with. Layers, later wins (lsp.md "Configuration"):
// built-in defaults, the project's configuration file nearest to the document
// (pyproject.toml [tool.preflight] / [tool.torch-preflight], .preflight.toml), the client's
// initializationOptions, then the `preflight` section of workspace/configuration.
#pragma once

#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "analysis/findings.h"
#include "rules/engine.h"
#include "server/cli/config.h"

namespace preflight::lsp {

// initializationOptions.debounceMs, like --debounce-ms: milliseconds from 0 to this.
inline constexpr int kMaxDebounceMs = 2000;

// initializationOptions.debounceMs when it is an integer from 0 to kMaxDebounceMs. Anything
// else (a string, a fraction, a negative or larger number) is a problem, appended to
// `problems`, and nullopt: the --debounce-ms value stays.
std::optional<int> parse_debounce_ms(const nlohmann::json& init, std::vector<std::string>& problems);

// One client-side layer, as the editors send it: { select, ignore, severity, targetGpu }.
// Absent keys leave the lower layer alone.
struct ClientSettings {
  std::optional<std::vector<std::string>> select;
  std::optional<std::vector<std::string>> ignore;
  std::map<std::string, analysis::Severity> severity;
  std::optional<std::string> target_gpu;
};

// Reads a layer; accepts the section itself or an object wrapping it under "preflight"
// (eglot's didChangeConfiguration sends the whole settings tree). Problems (a wrong type, an
// unknown rule code or level) are appended to `problems` and the key is skipped.
ClientSettings parse_client_settings(const nlohmann::json& value, std::vector<std::string>& problems);

struct EffectiveSettings {
  rules::CheckOptions options;
  std::map<std::string, analysis::Severity> severity;
  std::optional<std::string> target_gpu;
  std::vector<std::string> excludes;  // from the project file: workspace scans skip these
  std::filesystem::path config_dir;
  bool respect_gitignore = true;  // from the project file: workspace scans skip ignored files
  friend bool operator==(const EffectiveSettings& a, const EffectiveSettings& b) {
    return a.options == b.options &&
           a.severity == b.severity && a.target_gpu == b.target_gpu && a.excludes == b.excludes &&
           a.config_dir == b.config_dir && a.respect_gitignore == b.respect_gitignore;
  }
};

// select replaces the lower layer's list; ignore and severity add to it; targetGpu replaces.
EffectiveSettings merge(const server::Config& project, const ClientSettings& init,
                        const ClientSettings& workspace);

}  // namespace preflight::lsp
