// VRAM in the editor: the jobs of a document (estimator/script_reader.h), each estimated
// against the configured target GPU, shown as a code lens over its entry point, as a hover
// over the entry point and every line a field was read from, and through the
// `preflight.showVramReport` command; a code action sets the batch-size literal to the
// largest micro-batch that fits.
#pragma once

#include <cstddef>
#include <filesystem>
#include <optional>
#include <nlohmann/json.hpp>
#include <optional>
#include <string_view>
#include <vector>

#include "estimator/report.h"
#include "estimator/script_reader.h"
#include "server/lsp/client_capabilities.h"

namespace preflight::lsp {

struct EffectiveSettings;
struct Snapshot;

inline constexpr std::string_view kShowVramReport = "preflight.showVramReport";

struct VramJob {
  estimator::ScriptJob job;
  estimator::EstimateReport report;
};

// The estimates of every job of `text` against the settings' target GPU (none: no verdict).
// `file` (the document's path, when it is a file) locates a DeepSpeed config the script
// names by a relative path.
std::vector<VramJob> estimate_jobs(std::string_view text, const EffectiveSettings& settings,
                                   const std::optional<std::filesystem::path>& file = std::nullopt);

// textDocument/codeLens: one lens per job, above its entry point.
nlohmann::json code_lenses(const Snapshot& doc);
// A hover over an entry point or a line a job's field was read from; nullopt elsewhere.
std::optional<nlohmann::json> vram_hover(const Snapshot& doc, const nlohmann::json& params,
                                         const ClientCapabilities& caps);
// The full report of job `index`: {markdown, report (the `estimate --format json` object)}.
nlohmann::json vram_report(const Snapshot& doc, std::size_t index);
// Code actions at the request's range: set the batch size to the largest that fits.
nlohmann::json vram_code_actions(const Snapshot& doc, const nlohmann::json& params, const ClientCapabilities& caps);

}  // namespace preflight::lsp
