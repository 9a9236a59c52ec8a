// workspace/diagnostic: every Python file under the workspace folders that is not open, read
// from disk and checked with the settings its nearest configuration file gives, so the
// problems panel lists files the user has not opened. Skips the built-in excludes, the
// configured `exclude` patterns and what .gitignore files list (the same walk as `check`,
// server/cli/discovery; off with respect_gitignore = false); a file it cannot read
// (unreadable, over the 10 MiB cap) is listed with one information diagnostic saying why, and
// so is a symbolic link whose target lies outside the folder: the scan never follows it.
// Streams partial results and $/progress when the client gave tokens. Runs on a pool thread;
// reads only its inputs. The files it finds are one project (analysis/project_index.h): the
// server's index of the folders when it has one, else summarised first, as `check` does with
// the files of a run, so the scan reports what a CLI check of the folders reports.
#pragma once

#include <chrono>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "server/cli/discovery.h"
#include "server/cli/file_io.h"
#include "server/lsp/client_capabilities.h"
#include "server/lsp/settings.h"

namespace preflight::lsp {

struct WorkspaceScan {
  std::vector<std::filesystem::path> folders;
  std::set<std::string> open_uris;            // reported from their live text instead
  std::map<std::string, std::string> previous;  // uri -> resultId the client holds
  ClientSettings init_settings, workspace_settings;
  std::shared_ptr<const ClientCapabilities> caps;
  std::function<bool()> cancelled;
  nlohmann::json partial_token;   // null: everything in the final result
  nlohmann::json progress_token;  // null: no $/progress
  std::function<void(const nlohmann::json&)> send;  // for $/progress
  unsigned threads = 1;           // files are checked on this many threads
  std::chrono::milliseconds file_budget{0};  // per file; past it the file is "too complex"
  // Told about each file that could not be read (uri, reason), for the log; the file is
  // also listed with one information diagnostic saying why.
  std::function<void(const std::string&, const std::string&)> not_read;
  // The server's index of the same folders (keyed by absolute normal paths), when it has
  // built one; null: the scan indexes the files it finds itself.
  std::shared_ptr<const analysis::ProjectIndex> project;
};

// The Python files of the folders, found as the scan finds them (their configured excludes,
// .gitignore, no link out of a folder): the language server's project.
std::vector<server::SourceFile> workspace_files(const std::vector<std::filesystem::path>& folders,
                                                const ClientSettings& init_settings,
                                                const ClientSettings& workspace_settings);

// The WorkspaceDiagnosticReport, or nullopt when cancelled.
std::optional<nlohmann::json> run_workspace_scan(const WorkspaceScan& scan);

// A document read from disk for the editor: no text, and the reason, when it is missing,
// unreadable or over the CLI's cap (server::kMaxSourceBytes).
server::ReadResult read_document_file(const std::filesystem::path& path);

}  // namespace preflight::lsp
