#include "server/lsp/workspace_scan.h"

#include "server/cli/project_scan.h"

#include <algorithm>
#include <atomic>
#include <fstream>
#include <iterator>
#include <mutex>

#include "protocol/jsonrpc.h"
#include "rules/engine.h"
#include "server/cli/config.h"
#include "server/cli/discovery.h"
#include "server/cli/file_io.h"
#include "server/cli/time_budget.h"
#include "server/cli/parallel.h"
#include "server/lsp/snapshot.h"
#include "server/lsp/uri.h"

namespace preflight::lsp {

namespace fs = std::filesystem;
using json = nlohmann::json;

namespace {

constexpr std::size_t kPartialBatch = 25;

// Settings by directory, for one scan.
class SettingsCache {
 public:
  explicit SettingsCache(const WorkspaceScan& scan) : scan_(scan) {}

  std::shared_ptr<const EffectiveSettings> for_dir(const fs::path& dir) {
    std::lock_guard lock(mu_);  // shared by the scan's threads
    auto it = cache_.find(dir);
    if (it != cache_.end()) return it->second;
    server::Config config;
    if (auto location = server::find_config(dir)) {
      server::ConfigResult loaded = server::load_config(*location, location->file.string());
      if (loaded.ok()) config = loaded.config;
    }
    auto settings = std::make_shared<EffectiveSettings>(merge(config, scan_.init_settings, scan_.workspace_settings));
    cache_.emplace(dir, settings);
    return settings;
  }

 private:
  const WorkspaceScan& scan_;
  std::mutex mu_;
  std::map<fs::path, std::shared_ptr<const EffectiveSettings>> cache_;
};

void progress(const WorkspaceScan& scan, json value) {
  if (scan.progress_token.is_null()) return;
  scan.send(protocol::make_notification("$/progress", {{"token", scan.progress_token}, {"value", std::move(value)}}));
}

// The folder's files, never through a link out of it (one link to a system Python tree
// added thousands of files); such links are listed in `outside`.
std::vector<server::SourceFile> files_of(const fs::path& folder, SettingsCache& settings,
                                         std::vector<server::LinkOutside>& outside) {
  auto folder_settings = settings.for_dir(folder);
  server::DiscoveryOptions options;
  options.excludes = folder_settings->excludes;
  options.base_dir = folder;
  options.config_dir = folder_settings->config_dir;
  options.respect_gitignore = folder_settings->respect_gitignore;
  std::error_code ec;
  if (fs::path root = fs::canonical(folder, ec); !ec) options.confine_to.push_back(std::move(root));
  server::DiscoveryResult found = server::discover_files({folder.string()}, options);
  std::move(found.outside.begin(), found.outside.end(), std::back_inserter(outside));
  return std::move(found.files);
}

// A link left unscanned is reported as a file that could not be read is: one information
// diagnostic on the link's uri, and a log line.
json report_link_outside(const WorkspaceScan& scan, const server::LinkOutside& link) {
  std::string uri = path_to_uri(fs::absolute(link.path).lexically_normal());
  std::string reason = "a link to " + link.target + ", outside the workspace folder; not scanned";
  if (scan.not_read) scan.not_read(uri, reason);
  return {{"uri", uri}, {"version", nullptr}, {"kind", "full"}, {"items", json::array({not_analysed_diagnostic(reason)})}};
}

json report_for(const WorkspaceScan& scan, const server::SourceFile& file, SettingsCache& settings,
               const std::shared_ptr<const analysis::ProjectIndex>& project) {
  fs::path path = fs::absolute(file.location).lexically_normal();
  std::string uri = path_to_uri(path);
  server::ReadResult read = read_document_file(path);
  if (!read.text) {
    if (scan.not_read) scan.not_read(uri, read.error);
    return {{"uri", uri}, {"version", nullptr}, {"kind", "full"}, {"items", json::array({not_analysed_diagnostic(read.error)})}};
  }
  auto effective = settings.for_dir(path.parent_path());
  rules::CheckOptions options = effective->options;
  if (project) {
    options.project = project;
    options.project_path = path.string();
  }
  rules::CheckResult result = server::check_within(*read.text, options, scan.file_budget);
  Snapshot snapshot(uri, 0, std::move(*read.text), scan.caps->encoding, std::move(result), effective, *scan.caps);
  auto previous = scan.previous.find(uri);
  if (previous != scan.previous.end() && previous->second == snapshot.result_id)
    return {{"uri", uri}, {"version", nullptr}, {"kind", "unchanged"}, {"resultId", snapshot.result_id}};
  return {{"uri", uri}, {"version", nullptr}, {"kind", "full"}, {"resultId", snapshot.result_id},
          {"items", snapshot.diagnostics}};
}

}  // namespace

server::ReadResult read_document_file(const fs::path& path) { return server::read_source_file(path); }

std::vector<server::SourceFile> workspace_files(const std::vector<fs::path>& folders, const ClientSettings& init_settings,
                                                const ClientSettings& workspace_settings) {
  WorkspaceScan scan;
  scan.init_settings = init_settings;
  scan.workspace_settings = workspace_settings;
  SettingsCache settings(scan);
  std::vector<server::SourceFile> files;
  std::vector<server::LinkOutside> outside;
  for (const fs::path& folder : folders) {
    auto found = files_of(folder, settings, outside);
    files.insert(files.end(), found.begin(), found.end());
  }
  return files;
}

std::optional<json> run_workspace_scan(const WorkspaceScan& scan) {
  SettingsCache settings(scan);
  progress(scan, {{"kind", "begin"}, {"title", "preflight: checking the workspace"}, {"percentage", 0}});
  std::vector<server::SourceFile> files;
  std::vector<server::LinkOutside> outside;
  for (const fs::path& folder : scan.folders) {
    auto found = files_of(folder, settings, outside);
    files.insert(files.end(), found.begin(), found.end());
  }
  // The project, keyed by the paths report_for checks them under: the server's, or built here
  // (before the server's first index is ready) so that a scan never reads fewer files' calls.
  std::shared_ptr<const analysis::ProjectIndex> project = scan.project;
  if (!project) {
    std::vector<server::SourceFile> keyed = files;
    for (server::SourceFile& f : keyed) f.location = fs::absolute(f.location).lexically_normal().string();
    project = server::index_project(keyed, std::max(1u, scan.threads));
  }
  // Files are checked in parallel; reports, batches and progress go through one mutex, so
  // every message is whole and the counts are exact. The report order is not meaningful.
  json items = json::array();
  json batch = json::array();
  for (const server::LinkOutside& link : outside)
    (scan.partial_token.is_null() ? items : batch).push_back(report_link_outside(scan, link));
  std::mutex mu;
  std::size_t done = 0;
  std::atomic<bool> stopped{false};
  server::parallel_for(files.size(), std::max(1u, scan.threads), [&](std::size_t i) {
    if (stopped.load() || scan.cancelled()) {
      stopped = true;
      return;
    }
    fs::path path = fs::absolute(files[i].location).lexically_normal();
    json report = scan.open_uris.count(path_to_uri(path)) ? json(nullptr) : report_for(scan, files[i], settings, project);
    std::lock_guard lock(mu);
    if (!report.is_null()) (scan.partial_token.is_null() ? items : batch).push_back(std::move(report));
    if (batch.size() >= kPartialBatch) {
      scan.send(protocol::make_notification("$/progress", {{"token", scan.partial_token}, {"value", {{"items", batch}}}}));
      batch = json::array();
    }
    if (++done % 10 == 0)
      progress(scan, {{"kind", "report"}, {"message", std::to_string(done) + "/" + std::to_string(files.size()) + " files"},
                      {"percentage", static_cast<int>(100 * done / files.size())}});
  });
  if (stopped) {
    progress(scan, {{"kind", "end"}, {"message", "cancelled"}});
    return std::nullopt;
  }
  if (!batch.empty())
    scan.send(protocol::make_notification("$/progress", {{"token", scan.partial_token}, {"value", {{"items", batch}}}}));
  progress(scan, {{"kind", "end"}, {"message", std::to_string(files.size()) + " files checked"}});
  return json{{"items", items}};
}

}  // namespace preflight::lsp
